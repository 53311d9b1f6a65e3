"""Worked examples for the brute-force reference (``okgin_env.reference``).

The reference is what the fast engine is cross-checked against, so its meld,
deadwood and showdown logic is pinned down here on hands worked out by hand, and
its game flow on scripted deals.
"""

from __future__ import annotations

import pytest

from okgin_env.actions import DRAW_STOCK, KNOCK, PASS, TAKE_DISCARD, discard_action, knock_action
from okgin_env.cards import deck_from, parse_card, parse_cards
from okgin_env.reference import (
    Phase,
    ReferenceGame,
    arrangements,
    melds_in,
    minimal_arrangements,
    reference_deadwood,
    reference_deadwood_after_discard,
    reference_showdown,
)
from okgin_env.rules import Rules


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
    # against three runs they lay off 6s (leaving 3c). RULES.md: the knocker uses the
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
# game flow on scripted deals
# ---------------------------------------------------------------------------------------
GIN_DEAL = dict(  # non-dealer holds gin already; dealer: 2-set and 51 deadwood
    nondealer="As 2s 3s 4s 7h 7d 7c Jd Qd Kd", dealer="5s 7s 2h 2d 2c Kh Kc 6d 9c 4h", upcard="9s", stock="5c"
)
UNDERCUT_DEAL = dict(  # non-dealer takes 3d (limit 3) and knocks with 3; dealer has 2
    nondealer="As 2s 3s 4h 4d 4c 7c 8c 9c Kh", dealer="5h 6h 7h Ts Th Td Jd Qd Kd 2h", upcard="3d"
)


def play(game: ReferenceGame, actions: list[int]) -> None:
    for a in actions:
        assert a in game.legal_actions(), (a, game.legal_actions(), game)
        game.step(a)


def test_deal_order_and_offer() -> None:
    deck = list(range(52))
    g = ReferenceGame(Rules(), deck, dealer=0)
    assert g.hands[1] == set(range(0, 20, 2))  # non-dealer gets deck[0], deck[2], ...
    assert g.hands[0] == set(range(1, 20, 2))
    assert g.upcard == 20 and g.pile == [20] and g.knock_limit == 8  # 8h
    assert g.stock_size == 31 and g.stock[0] == 21
    assert (g.phase, g.current_player, g.legal_actions()) == (Phase.OFFER_NONDEALER, 1, [TAKE_DISCARD, PASS])
    g.step(PASS)
    assert (g.phase, g.current_player, g.legal_actions()) == (Phase.OFFER_DEALER, 0, [TAKE_DISCARD, PASS])
    assert g.declined[1] == {20}
    g.step(PASS)
    assert (g.phase, g.current_player, g.legal_actions()) == (Phase.FORCED_DRAW, 1, [DRAW_STOCK])
    g.step(DRAW_STOCK)
    assert g.phase == Phase.DISCARD and 21 in g.hands[1] and g.stock_size == 30
    g.step(discard_action(21))
    assert (g.phase, g.current_player, g.legal_actions()) == (Phase.DRAW, 0, [DRAW_STOCK, TAKE_DISCARD])
    assert g.pile == [20, 21] and g.discarded[1] == {21} and g.turns == 1


def test_dealer_takes_upcard() -> None:
    g = ReferenceGame(Rules(), list(range(52)), dealer=1)
    play(g, [PASS, TAKE_DISCARD])
    assert g.current_player == 1 and g.phase == Phase.DISCARD and 20 in g.hands[1] and g.pile == []
    assert g.taken_and_held[1] == {20} and g.declined[0] == {20}
    assert discard_action(20) not in g.legal_actions()
    g.step(discard_action(1))
    assert g.current_player == 0 and g.phase == Phase.DRAW and g.turns == 1


@pytest.mark.parametrize("allowed", [False, True])
def test_taken_card_may_not_be_discarded(allowed: bool) -> None:
    g = ReferenceGame(Rules(discard_taken_card=allowed), deck_from(**UNDERCUT_DEAL), dealer=0)
    g.step(TAKE_DISCARD)
    d3 = parse_card("3d")
    assert (discard_action(d3) in g.legal_actions()) == allowed
    # knocking while discarding 3d would leave Kh: 10 > 3, never legal here
    assert knock_action(d3) not in g.legal_actions()
    assert knock_action(parse_card("Kh")) in g.legal_actions()
    assert knock_action(parse_card("As")) not in g.legal_actions()


@pytest.mark.parametrize("spade_double, points", [(False, 76), (True, 152)])
def test_gin_scoring(spade_double: bool, points: int) -> None:
    # Both pass on the 9s (a spade), the non-dealer draws 5c and knocks it face down: gin.
    g = ReferenceGame(Rules(spade_double=spade_double), deck_from(**GIN_DEAL), dealer=0)
    play(g, [PASS, PASS, DRAW_STOCK, knock_action(parse_card("5c"))])
    r = g.last_result
    assert g.over and g.terminated and not g.truncated and g.phase == Phase.OVER and g.current_player == -1
    assert (r["knocker"], r["winner"], r["gin"], r["undercut"], r["void"]) == (1, 1, True, False, False)
    assert r["deadwood"] == [51, 0] and r["points"] == [0, points] and g.scores == [0, points]
    assert r["spade_doubled"] == spade_double and r["knock_card"] == parse_card("5c")
    assert g.last_rewards == [-points, points]


@pytest.mark.parametrize("dealer_last, d, points", [("2h", 2, 11), ("3h", 3, 10)])
def test_undercut_scoring(dealer_last: str, d: int, points: int) -> None:
    deal = dict(UNDERCUT_DEAL, dealer=UNDERCUT_DEAL["dealer"].replace("2h", dealer_last))
    g = ReferenceGame(Rules(), deck_from(**deal), dealer=0)
    play(g, [TAKE_DISCARD, knock_action(parse_card("Kh"))])
    r = g.last_result
    assert (r["knocker"], r["winner"], r["gin"], r["undercut"]) == (1, 0, False, True)
    assert r["deadwood"] == [d, 3] and r["points"] == [points, 0]


def test_ace_upcard_means_gin_only() -> None:
    deck = deck_from("2s 3s 4s 7h 7d 7c Jd Qd Kd 5c", "5s 7s 2h 2d 2c Kh Kc 6d 9c 4h", upcard="Ad", stock="As")
    g = ReferenceGame(Rules(), deck, 0)
    assert g.knock_limit == 0
    play(g, [PASS, PASS, DRAW_STOCK])
    knocks = [a - KNOCK for a in g.legal_actions() if KNOCK <= a < DRAW_STOCK]
    assert knocks == [parse_card("5c")]  # only the gin knock
    assert ReferenceGame(Rules(knock_limit=10), g.deck, 0).knock_limit == 10


def draw_and_discard_drawn(g: ReferenceGame) -> None:
    """Everyone passes, then each turn draws the stock and discards what was drawn."""
    play(g, [PASS, PASS])
    while not g.over and g.hand_count == 1:
        g.step(DRAW_STOCK)
        drawn = g.deck[g.stock_next - 1]
        g.step(drawn)


def test_wall_is_void() -> None:
    g = ReferenceGame(Rules(), list(range(52)), dealer=0)
    draw_and_discard_drawn(g)
    r = g.last_result
    assert g.stock_size == 2 and g.turns == 29
    assert g.over and g.terminated and not g.truncated
    assert r["void"] and not r["truncated_hand"] and r["knocker"] == -1 and r["winner"] == -1 and r["points"] == [0, 0]
    assert r["deadwood"] == [reference_deadwood(g.hands[0]), reference_deadwood(g.hands[1])]


@pytest.mark.parametrize("cap, truncated", [(1, True), (5, True), (28, True), (29, False), (30, False)])
def test_turn_cap(cap: int, truncated: bool) -> None:
    # With 31 stock cards the wall comes after turn 29; the wall is checked first.
    g = ReferenceGame(Rules(max_turns_per_hand=cap), list(range(52)), dealer=0)
    draw_and_discard_drawn(g)
    assert g.over and g.truncated == truncated and g.terminated == (not truncated)
    assert g.turns == min(cap, 29) and g.last_result["void"]
    assert g.last_result["truncated_hand"] == truncated


def test_offer_take_is_a_turn() -> None:
    g = ReferenceGame(Rules(max_turns_per_hand=1), list(range(52)), dealer=0)
    play(g, [TAKE_DISCARD, discard_action(0)])
    assert g.over and g.truncated and g.turns == 1


@pytest.mark.parametrize("next_dealer, expected", [("winner", 0), ("loser", 1), ("alternate", 1)])
def test_game_next_dealer(next_dealer: str, expected: int) -> None:
    decks = [list(range(52))]
    g = ReferenceGame(Rules(next_dealer=next_dealer), deck_from(**UNDERCUT_DEAL), 0, "game", next_deck=decks.pop)
    play(g, [TAKE_DISCARD, knock_action(parse_card("Kh"))])  # dealer 0 wins by undercut: 11
    assert not g.over and g.hand_count == 2 and g.dealer == expected
    assert g.scores == [11, 0] and g.hands_won == [1, 0] and g.last_rewards == [11, -11]
    assert g.phase == Phase.OFFER_NONDEALER and g.current_player == 1 - expected
    assert g.last_result["scores"] == [11, 0] and not g.last_result["game_over"]


def test_game_void_keeps_dealer_and_scores() -> None:
    decks = [list(range(52)), list(range(52))]
    g = ReferenceGame(Rules(), list(range(52)), 1, "game", next_deck=decks.pop)
    draw_and_discard_drawn(g)
    assert not g.over and not g.truncated and g.hand_count == 2 and g.dealer == 1 and g.scores == [0, 0]
    assert g.last_result["void"] and g.last_rewards == [0, 0]


def test_game_turn_cap_is_not_truncation() -> None:
    decks = [list(range(52))]
    g = ReferenceGame(Rules(max_turns_per_hand=3), list(range(52)), 1, "game", next_deck=decks.pop)
    draw_and_discard_drawn(g)
    assert not g.over and not g.truncated and g.last_result["truncated_hand"] and g.dealer == 1


@pytest.mark.parametrize("game_bonuses, final", [(False, [11, 0]), (True, [(11 + 25 + 100) * 2, 0])])
def test_game_end_and_bonuses(game_bonuses: bool, final: list[int]) -> None:
    g = ReferenceGame(Rules(target_score=11, game_bonuses=game_bonuses), deck_from(**UNDERCUT_DEAL), 0, "game")
    play(g, [TAKE_DISCARD, knock_action(parse_card("Kh"))])
    r = g.last_result
    assert g.over and g.terminated and r["game_over"] and r["game_winner"] == 0
    assert g.scores == final and r["scores"] == final and r["points"] == [11, 0]
    assert g.last_rewards == [final[0] - final[1], final[1] - final[0]]


def test_game_bonuses_without_shutout() -> None:
    # Hand 1: the dealer (0) undercuts for 11; the winner deals hand 2, where player 1
    # (now non-dealer) goes gin for 76 and reaches the target of 50.
    decks = [deck_from(**GIN_DEAL)]
    rules = Rules(target_score=50, game_bonuses=True)
    g = ReferenceGame(rules, deck_from(**UNDERCUT_DEAL), 0, "game", next_deck=decks.pop)
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
