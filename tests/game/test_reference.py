"""Worked examples for the brute-force reference (``okgin_env.testing.reference``).

The reference is what the fast engine is cross-checked against, so its meld,
deadwood and showdown logic is pinned down here on hands worked out by hand. Its game
flow is checked on the rule scenarios of ``scenarios.py`` (``test_scenarios.py``, shared
with the fast engine) and, below, on what only the reference can do.
"""

from __future__ import annotations

import pytest
from scenarios import GIN_DEAL, UNDERCUT3

from okgin_env.game.actions import DRAW_STOCK, PASS, TAKE_DISCARD, knock_action
from okgin_env.game.cards import deck_from, parse_card, parse_cards
from okgin_env.game.rules import Rules
from okgin_env.testing.reference import (
    ReferenceGame,
    arrangements,
    melds_in,
    minimal_arrangements,
    reference_deadwood,
    reference_deadwood_after_discard,
    reference_showdown,
)


def C(text: str) -> list[int]:
    return parse_cards(text)


# ---------------------------------------------------------------------------------------
# melds and deadwood
# ---------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "hand, deadwood",
    [
        ("7s 7h 7d", 0),  # a set of three
        ("7s 7h 7d 7c", 0),  # a set of four
        ("7s 7h", 14),  # two of a rank is no meld
        ("As 2s 3s", 0),  # ace-low run
        ("Qs Ks As", 21),  # the ace is never high: 10 + 10 + 1
        ("Js Qs Ks", 0),
        ("9s Ts Js Qs Ks", 0),  # a long run
        ("As 2h 3s", 6),  # a run must be one suit
        ("As 2s 4s", 7),  # and consecutive
        ("5s 6s 7s 7h 7d", 11),  # 7s in the set (leaves 5s 6s = 11), not the run (7h 7d = 14)
        ("5s 6s 7s 8s 7h 7d", 14),  # now the run 5-8 (leaves 7h 7d) beats the set (5s 6s 8s = 19)
        ("4s 4h 4d 4c 5c 6c", 0),  # 3-set + run 4c5c6c beats the 4-set (which leaves 11)
        ("As 2s 3s 4h 4d 4c 7c 8c 9c 2d", 2),
        ("As 2s 3s 4s 4h 4d Kc Qc Jc 9d", 9),  # 4s in the set 4s4h4d, not the run As-4s (see below)
        ("2s 3s 4s 5s 6s 7s 8s 9s Ts Js", 0),  # ten in a row
        ("3s 4s 5s 3h 4h 5h 3d 4d 5d Ad", 1),  # three runs or three sets
        ("Kc Kd Kh Ks Qc Qd Qh Jc Jd Jh", 0),  # a 4-set and two 3-sets
        ("Kc Kd Ks Qc Qd Qs Jc Jd Js 9h", 9),
        ("", 0),
    ],
)
def test_deadwood_examples(hand: str, deadwood: int) -> None:
    assert reference_deadwood(C(hand)) == deadwood


def test_ambiguous_four_explained() -> None:
    # "As 2s 3s 4s 4h 4d Kc Qc Jc 9d": run As-4s leaves 4h 4d 9d = 17; run As-3s + set
    # 4s4h4d leaves 9d = 9.
    arrs = minimal_arrangements(C("As 2s 3s 4s 4h 4d Kc Qc Jc 9d"))
    assert len(arrs) == 1
    assert sorted(sorted(m) for m in arrs[0]) == sorted(sorted(C(m)) for m in ("As 2s 3s", "4s 4h 4d", "Jc Qc Kc"))


def test_melds_in_lists_every_meld() -> None:
    melds = {frozenset(m) for m in melds_in(C("4s 4h 4d 4c 5s 6s 7s"))}
    expected = {frozenset(C(t)) for t in (
        "4s 4h 4d", "4s 4h 4c", "4s 4d 4c", "4h 4d 4c", "4s 4h 4d 4c",  # sets
        "4s 5s 6s", "5s 6s 7s", "4s 5s 6s 7s",  # runs
    )}
    assert melds == expected


def test_arrangements_are_disjoint_and_unique() -> None:
    arrs = arrangements(C("3s 4s 5s 6s 3h 4h 5h 3d 4d 5d 3c"))
    seen = set()
    for arr in arrs:
        cards = [c for m in arr for c in m]
        assert len(cards) == len(set(cards))
        key = frozenset(arr)
        assert key not in seen
        seen.add(key)
    assert () in arrs


def test_deadwood_after_discard() -> None:
    hand = C("As 2s 3s 4h 4d 4c 7c 8c 9c 2d Kh")
    after = reference_deadwood_after_discard(hand)
    assert set(after) == set(hand)
    assert after[parse_card("Kh")] == 2  # knock discarding Kh leaves 2d
    assert after[parse_card("2d")] == 10
    assert after[parse_card("4h")] == 2 + 10 + 4 + 4  # breaks the set of fours: 4d 4c left over
    assert after[parse_card("As")] == 2 + 2 + 3 + 10  # the spade run is broken
    for c in hand:
        assert after[c] == reference_deadwood(set(hand) - {c})


# ---------------------------------------------------------------------------------------
# showdown
# ---------------------------------------------------------------------------------------
def test_layoff_onto_set() -> None:
    # Knocker: 777 TJQs 234c + Ad (K=1). The defender's 7c is the fourth seven.
    # Defender: 888 set; 7c laid off; Kh Kd 9h 9d 5h 6d = 20+18+11 = 49 left.
    k, d = reference_showdown(C("7s 7h 7d Ts Js Qs 2c 3c 4c Ad"), C("7c 8h 8d 8c Kh Kd 9h 9d 5h 6d"))
    assert (k, d) == (1, 49)


def test_no_layoff_onto_set_of_four() -> None:
    # The knocker's sevens are a set of four (K=1: Ad); nothing can join it.
    k, d = reference_showdown(C("7s 7h 7d 7c Js Qs Ks 2c 3c Ad"), C("8h 8d 8c 9h 9d Kh Kd 5h 6d 4s"))
    assert (k, d) == (1 + 2 + 3, 18 + 20 + 11 + 4)


def test_layoffs_at_both_run_ends_chained() -> None:
    # Knocker: 5h6h7h KKK 234d + As (K=1). Defender lays off 4h, then 3h below it, and
    # 8h, then 9h above; Jc Qc 9c 2s 3s 8d stay: 10+10+9+2+3+8 = 42.
    k, d = reference_showdown(C("5h 6h 7h Kc Kd Ks 2d 3d 4d As"), C("3h 4h 8h 9h Jc Qc 9c 2s 3s 8d"))
    assert (k, d) == (1, 42)


def test_layoff_chain_needs_the_link() -> None:
    # Without the 4h, the 3h cannot be laid off onto 5h6h7h; 8h 9h still can.
    # Left: 3h Td Jc Qc 9c 2s 3s 8d = 3+10+10+10+9+2+3+8 = 55.
    k, d = reference_showdown(C("5h 6h 7h Kc Kd Ks 2d 3d 4d As"), C("3h Td 8h 9h Jc Qc 9c 2s 3s 8d"))
    assert (k, d) == (1, 55)
    # ... and with the Th the chain 8h 9h Th goes on: 3h Jc Qc 9c 2s 3s 8d = 45.
    assert reference_showdown(C("5h 6h 7h Kc Kd Ks 2d 3d 4d As"), C("3h Th 8h 9h Jc Qc 9c 2s 3s 8d")) == (1, 45)


def test_defender_optimises_own_melds_and_layoffs_jointly() -> None:
    # Knocker run 5h6h7h. Defender eights 8h 8s 8d 8c and 9h: the set 8s8d8c plus laying
    # off 8h and then 9h leaves nothing; the 4-set would leave 9h; laying off 8h 9h
    # without the set would leave 8s 8d 8c.
    knocker = C("5h 6h 7h Kc Kd Ks 2d 3d 4d As")
    assert reference_showdown(knocker, C("8h 8s 8d 8c 9h Qc Jc 2s 4c 6c")) == (1, 10 + 10 + 2 + 4 + 6)
    # With only three eights: set 8s8d8h leaves 9h (9); laying off 8h 9h leaves 8s 8d (16).
    assert reference_showdown(knocker, C("8h 8s 8d 9h Qc Jc 2s 4c 6c Td")) == (1, 9 + 10 + 10 + 2 + 4 + 6 + 10)


def test_no_layoffs_on_gin() -> None:
    defender = C("5s 7s 2h 2d 2c Kh Kc 6d 9c 4h")  # 2-set; 5+7+10+10+6+9+4 = 51
    assert reference_showdown(C("As 2s 3s 4s 7h 7d 7c Jd Qd Kd"), defender) == (0, 51)
    # The same defender against a knock that is not gin lays off 5s and 7s.
    assert reference_showdown(C("As 2s 3s 4s 7h 7d 7c 9d Qd Kd"), defender) == (29, 51 - 5 - 7)


def test_knocker_tie_break_leaves_defender_the_most() -> None:
    # The knocker's 3-4-5 of spades, hearts and diamonds are three runs or three sets
    # (both leave Ad: K=1). Against three sets the defender lays off 3c (leaving 6s);
    # against three runs they lay off 6s (leaving 3c). docs/RULES.md: the knocker uses the
    # arrangement that leaves the defender the most: the sets.
    knocker = C("3s 4s 5s 3h 4h 5h 3d 4d 5d Ad")
    defender = C("3c 6s Kh Kc Qd Qc 9s 9h Jh Jd")
    assert len(minimal_arrangements(knocker)) == 2
    assert reference_showdown(knocker, defender) == (1, 87 - 3)


def test_knocker_tie_break_other_way() -> None:
    # Swap the defender's 3c for 2c: now only the runs allow a lay-off (6s), the sets
    # none, so the sets leave the defender everything.
    knocker = C("3s 4s 5s 3h 4h 5h 3d 4d 5d Ad")
    defender = C("2c 6s Kh Kc Qd Qc 9s 9h Jh Jd")
    assert reference_showdown(knocker, defender) == (1, 86)


# ---------------------------------------------------------------------------------------
# game flow beyond the shared scenarios (those are in scenarios.py, played on both engines)
# ---------------------------------------------------------------------------------------
def play(game: ReferenceGame, actions: list[int]) -> None:
    for a in actions:
        assert a in game.legal_actions(), (a, game.legal_actions(), game)
        game.step(a)


def test_game_bonuses_without_shutout() -> None:
    # Hand 1: the dealer (0) undercuts for 11 (UNDERCUT3_STORY); the winner deals hand 2 (a
    # given deck, which only the reference accepts for later hands), where player 1 (now
    # non-dealer) goes gin for 76 (GIN_DEAL) and reaches the target of 50.
    decks = [GIN_DEAL]
    rules = Rules(target_score=50, game_bonuses=True)
    g = ReferenceGame(rules, deck_from(**UNDERCUT3), 0, "game", next_deck=decks.pop)
    play(g, [TAKE_DISCARD, knock_action(parse_card("Kh"))])
    assert g.dealer == 0
    play(g, [PASS, PASS, DRAW_STOCK, knock_action(parse_card("5c"))])
    assert g.over and g.last_result["game_winner"] == 1
    assert g.scores == [11 + 25, 76 + 25 + 100]
    assert g.last_rewards == [25 - (76 + 125), (76 + 125) - 25]


def test_illegal_action_raises() -> None:
    g = ReferenceGame(Rules(), list(range(52)), 0)
    with pytest.raises(ValueError):
        g.step(DRAW_STOCK)
    with pytest.raises(ValueError):
        ReferenceGame(Rules(), list(range(51)), 0)
    with pytest.raises(ValueError):
        ReferenceGame(Rules(), list(range(52)), 2)
