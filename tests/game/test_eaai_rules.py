"""The EAAI rule set (``Rules.eaai()``): worked deals of its showdown and its missing turn cap, on the
fast engine and on the reference engine (docs/RULES.md, "Showdown" and "The EAAI rule set").
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from okgin_env import VectorGame
from okgin_env.game import eaai_showdown
from okgin_env.game.actions import DRAW_STOCK, KNOCK, PASS, TAKE_DISCARD
from okgin_env.game.cards import NUM_CARDS, deck_from, mask_of, parse_card, parse_cards
from okgin_env.game.core import Phase
from okgin_env.game.rules import Rules
from okgin_env.testing.reference import ReferenceGame, eaai_showdown_details

EAAI = Rules.eaai()
DEALER = 0


def both(deck: list[int], actions: list[int], rules: Rules) -> dict:
    """Play ``actions`` from the deal on both engines; the result fields they share must agree."""
    game = VectorGame(1, rules)
    out = game.reset(decks=[deck], dealers=[DEALER])
    ref = ReferenceGame(rules, deck=deck, dealer=DEALER)
    for a in actions:
        out = game.step(np.array([a]))
        ref.step(a)
    r, want = out.result, ref.last_result
    assert out.hand_over[0] and want is not None
    got = {"knocker": int(r.knocker[0]), "winner": int(r.winner[0]), "deadwood": r.deadwood[0].tolist(),
           "points": r.points[0].tolist(), "gin": bool(r.gin[0]), "undercut": bool(r.undercut[0])}
    for key, value in got.items():
        assert np.array_equal(np.asarray(want[key]), np.asarray(value)), (key, want[key], value)
    got["laid_off"] = set(np.flatnonzero(r.laid_off[0]).tolist())
    return got


def take_and_knock(card: str) -> list[int]:
    return [TAKE_DISCARD, KNOCK + parse_card(card)]


def test_the_defender_declares_its_melds_before_laying_off():
    """The knocker (non-dealer) takes the Ks and knocks with the Jh: 3-4-5h, A-2-3s, K-K-K, 2c left
    (K = 2). The defender's least deadwood on its own is the four sixes and three queens, 7h 8d 8c
    left (23); the 7h cannot go on 3-4-5h without the 6h, which its set holds: D = 23, the knocker
    scores 21. okgin's optimal showdown lays off the 6h and 7h and keeps 6c 6s 6d: D = 16, 14 points."""
    deck = deck_from("3h 4h 5h As 2s 3s Kc Kd 2c Jh", "6h 6c 6s 6d 7h Qc Qd Qs 8d 8c", "Ks")
    eaai = both(deck, take_and_knock("Jh"), EAAI)
    assert eaai["deadwood"][::-1] == [2, 23] and eaai["points"][1] == 21 and not eaai["laid_off"]
    optimal = both(deck, take_and_knock("Jh"), replace(EAAI, showdown="optimal"))
    assert optimal["deadwood"][::-1] == [2, 16] and optimal["points"][1] == 14
    assert optimal["laid_off"] == set(parse_cards("6h 7h"))


def test_lay_offs_go_to_the_first_meld_that_fits_then_start_again():
    """The knocker takes the 8d (6-7-8d) and knocks with the Kh: 5c 5h 5s, 6-7-8d, A-2-3s, Ac left
    (K = 1). The defender has no meld; its 4d and 5d are tried in the framework's card order (clubs,
    hearts, spades, diamonds; by rank): the 4d fits nothing yet, the 5d fits both the run and the
    set of fives and goes onto the run, declared first (the framework's order: A-2-3s, 6-7-8d, 5-5-5); from the start again, the
    4d now extends 5-8d. D = 67 of Kc 9c 2h 9h Th 7s Qs Jd; the knocker scores 66. (Had the 5d gone
    onto the set, the 4d would have stayed: D = 71.)"""
    deck = deck_from("5c 5h 5s 6d 7d As 2s 3s Ac Kh", "4d 5d Kc Qs Jd 9h 9c 7s 2h Th", "8d")
    got = both(deck, take_and_knock("Kh"), EAAI)
    assert got["deadwood"][::-1] == [1, 67] and got["points"][1] == 66
    assert got["laid_off"] == set(parse_cards("4d 5d"))


def test_no_lay_offs_on_gin():
    """The 7h completes 4-5-6-7h: gin. The defender's 8h and 3h would extend the run, but not on gin."""
    deck = deck_from("4h 5h 6h As 2s 3s 9c 9d 9s Kc", "3h 8h Ks Kh Kd Qc Jc Tc 2d 5c", "7h")
    got = both(deck, take_and_knock("Kc"), EAAI)
    assert got["gin"] and got["deadwood"][::-1] == [0, 3 + 8 + 2 + 5] and got["points"][1] == 18 + 25
    assert not got["laid_off"]


def test_the_knockers_equal_arrangements_are_drawn_from_the_deal():
    """2s 3s 4s 3h 3d: the 3s goes into the run (the defender's 5s 6s lay off, D = 11) or the set (its
    3c lays off, D = 19), K = 6 either way, as in the rule book's example 6. The EAAI showdown draws
    one from the deal: different stock orders give both, each replay of a deal the same, both
    engines the same."""
    seen = {}
    rng = np.random.default_rng(0)
    base = deck_from("2s 3s 4s 3h 3d 9c Tc Jc Qc Kc", "3c 5s 6s 8h Ks Kh Kd Qs Qh Qd", "8d", "6h")
    for _ in range(40):
        deck = base[:22] + [int(c) for c in rng.permutation(base[22:])]  # the same hands, upcard and first stock card
        actions = [PASS, PASS, DRAW_STOCK, KNOCK + parse_card("6h")]
        got = both(deck, actions, EAAI)
        assert got == both(deck, actions, EAAI)  # a replay of the deal shows down the same way
        assert got["deadwood"][1] == 6
        seen[got["deadwood"][0]] = seen.get(got["deadwood"][0], 0) + 1
    assert set(seen) == {11, 19} and min(seen.values()) >= 8, seen


def test_no_turn_cap():
    """Two players who always take the top discard never bring the stock to the wall. With the default
    cap the hand is void after 200 turns; under the EAAI rules it goes on (400 turns here)."""
    deck = deck_from("As 2s 3s 4s 5s 6s 7s 8s 9s Ts", "Ah 2h 3h 4h 5h 6h 7h 8h 9h Th", "Kc")
    for rules, turns, over in ((replace(EAAI, max_turns_per_hand=200), 200, True), (EAAI, 400, False)):
        game = VectorGame(1, rules)
        out = game.reset(decks=[deck], dealers=[DEALER])
        done = 0
        while done < turns:
            mask = out.legal_action_mask[0]
            if out.observation[0].any() and int(game.state.phase[0]) == Phase.DISCARD:
                card = int(np.flatnonzero(mask[:NUM_CARDS])[0])  # the lowest card it may discard, never a knock
                out = game.step(np.array([card]))
                done += 1
            else:
                out = game.step(np.array([TAKE_DISCARD if mask[TAKE_DISCARD] else DRAW_STOCK]))
            if out.hand_over[0]:
                break
        assert bool(out.hand_over[0]) == over and done == turns
        if over:
            assert out.result.void[0] and out.result.truncated_hand[0] and out.truncated[0]


@pytest.mark.parametrize("text", [["eaai"], ["EAAI", "target_score=100"]])
def test_the_rule_set_by_name(text):
    assert Rules.from_strings(text) == EAAI


def test_the_knocker_declares_its_melds_in_the_frameworks_order():
    """The framework itself (``cardsToBestMeldSets``, run on this hand) declares 7s 7d 7c, 5-6-7h,
    4h 4d 4c: the iteration order of its HashSet of listing positions (5, 2, 3), not the listing
    order (5-6-7h, the fours, the sevens). Both engines declare the same."""
    knocker, defender = parse_cards("7s 4h 5h 6h 7h 4d 5d 7d 4c 7c"), parse_cards("As 2s 3s Ks Kh Kd Qc Jc 9h 2d")
    k, _, meld_id, _ = eaai_showdown.showdown(mask_of(knocker)[None], mask_of(defender)[None], 0)
    assert k[0] == 5 and [int(meld_id[0, parse_card(c)]) for c in ("7s", "5h", "4h")] == [0, 1, 2]
    declared = eaai_showdown_details(knocker, defender, 0)[2]
    assert declared == [frozenset(parse_cards(m)) for m in ("7s 7d 7c", "5h 6h 7h", "4h 4d 4c")]
