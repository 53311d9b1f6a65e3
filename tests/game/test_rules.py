"""The fast engine's own contract beyond the rule scenarios: deck replay, seeded later deals,
game bonuses over whole games, and its errors.

The rule scenarios (one worked example per rule of docs/RULES.md) are data in ``scenarios.py``,
played on this engine and on the reference by ``test_scenarios.py``.
"""

from __future__ import annotations


import numpy as np
import pytest
from engines import VectorTable
from scenarios import JUNK, KNOCK_WIN, KNOCKER, knock

from okgin_env import VectorGame
from okgin_env.game import melds
from okgin_env.game.actions import DRAW_STOCK as DRAW
from okgin_env.game.actions import NUM_ACTIONS, PASS
from okgin_env.game.actions import TAKE_DISCARD as TAKE
from okgin_env.game.cards import card_text, deck_from
from okgin_env.game.core import Phase
from okgin_env.game.rules import Rules


def test_deck_may_be_given_as_card_texts():
    deck = deck_from(KNOCKER, JUNK, "7c")
    g = VectorGame(1, Rules())
    g.reset(decks=[[card_text(c) for c in deck]], dealers=[1])
    np.testing.assert_array_equal(np.asarray(g.state.deck[0]), np.array(deck, dtype=np.int8))


def test_replayed_deck_applies_to_the_first_hand_only():
    # "the deck and dealer apply to its first hand; later hands are dealt from the seeded
    # random generator": the same seed gives the same second deal, another seed another one.
    second = []
    for seed in (3, 3, 4):
        game = VectorGame(1, Rules(), episode="game", seed=seed)
        game.reset(decks=[KNOCK_WIN], dealers=[1])
        game.step(np.array([TAKE]))
        out = game.step(np.array([knock("Kc")]))
        assert (bool(out.hand_over[0]), bool(out.terminated[0])) == (True, False)
        deck = np.asarray(game.state.deck[0]).tolist()
        assert sorted(deck) == list(range(52)) and deck != KNOCK_WIN
        second.append(deck)
    assert second[0] == second[1]
    assert second[0] != second[2]


def _greedy_actions(g: VectorGame, out) -> np.ndarray:
    """A simple bot: pass the offer, draw from the stock, knock when possible, otherwise
    discard the card that leaves the least deadwood."""
    mask = np.asarray(out.legal_action_mask)[0]
    if mask[PASS]:
        return np.array([PASS])
    if mask[DRAW]:
        return np.array([DRAW])
    knocks = np.flatnonzero(mask[52:104])
    if len(knocks):
        return np.array([52 + knocks[0]])
    p = int(out.current_player[0])
    dw = np.asarray(melds.deadwood_after_discard(np.asarray(g.state.hands[0:1, p], dtype=bool)))[0].astype(int)
    dw[~mask[:52]] = 10_000
    return np.array([int(np.argmin(dw))])


def test_game_bonuses_without_shutout():
    # Line bonus 25 per hand won, 100 for the winner; no doubling when the loser won a hand.
    # Play whole games with a greedy bot, booking every hand, until one ends with the loser
    # having won at least one hand; check the totals and the summed rewards.
    rules = Rules(target_score=60, game_bonuses=True)
    for seed in range(40):
        g = VectorGame(1, rules, episode="game", seed=seed)
        out = g.reset(seed=seed)
        totals, won, reward_sum = [0, 0], [0, 0], np.zeros(2)
        for _ in range(5000):
            out = g.step(_greedy_actions(g, out))
            reward_sum += np.asarray(out.rewards)[0]
            if not out.hand_over[0]:
                continue
            res = out.result
            if not res.void[0]:
                w = int(res.winner[0])
                totals[w] += int(res.points[0, w])
                won[w] += 1
            if out.terminated[0]:
                break
            assert np.asarray(res.scores[0]).tolist() == totals
        else:
            pytest.fail("game did not end")
        w = int(out.result.game_winner[0])
        assert totals[w] >= 60 and totals[1 - w] < 60
        final = [totals[p] + 25 * won[p] for p in (0, 1)]
        final[w] += 100
        if won[1 - w] == 0:
            final[w] *= 2
        assert np.asarray(out.result.scores[0]).tolist() == final
        assert reward_sum.tolist() == [final[0] - final[1], final[1] - final[0]]
        if won[1 - w] > 0:
            return  # a game without a shutout was checked
    pytest.fail("no game without a shutout in 40 seeds")


# ---------------------------------------------------------------------------
# Errors: malformed decks, bad dealer, illegal actions, bad options
# ---------------------------------------------------------------------------
GOOD_DECK = deck_from(KNOCKER, JUNK, "7c")


@pytest.mark.parametrize(
    "deck,match",
    [
        (GOOD_DECK[:51], "52|51"),  # wrong length
        (GOOD_DECK + [GOOD_DECK[0]], "52|53"),
        (GOOD_DECK[:51] + [GOOD_DECK[3]], "(?i)duplicate"),
        (GOOD_DECK[:51] + [52], "(?i)unknown|0-51"),
        ([card_text(c) for c in GOOD_DECK[:51]] + ["Xs"], "(?i)bad card|unknown"),
        ([card_text(c) for c in GOOD_DECK[:51]] + ["1s"], "(?i)bad card|unknown"),
    ],
)
def test_malformed_deck_is_rejected(deck, match):
    g = VectorGame(1, Rules())
    with pytest.raises(ValueError, match=match):
        g.reset(decks=[deck], dealers=[0])


@pytest.mark.parametrize("dealer", [2, -1, [5]])
def test_bad_dealer_is_rejected(dealer):
    g = VectorGame(1, Rules())
    with pytest.raises(ValueError, match="(?i)dealer"):
        g.reset(decks=[GOOD_DECK], dealers=dealer)


@pytest.mark.parametrize("action", [DRAW, 0, knock("Kc"), NUM_ACTIONS, -1, 500])
def test_illegal_action_is_rejected_and_changes_nothing(action):
    # During the non-dealer's offer only take and pass are legal.
    t = VectorTable(deck_from(KNOCKER, JUNK, "7c"), 1, Rules(), "hand")
    with pytest.raises(ValueError) as e:
        t.step(action)
    msg = str(e.value)
    assert "legal" in msg.lower() and str(action) in msg  # names the action and the legal ones
    assert "pass" in msg.lower() or str(PASS) in msg
    assert t.phase() == Phase.OFFER_NONDEALER and t.player() == 0
    t.step(PASS)
    assert t.phase() == Phase.OFFER_DEALER


def test_every_decision_has_a_legal_action_in_random_play():
    # "at every decision at least one action is legal": random legal play over many deals.
    rng = np.random.default_rng(5)
    g = VectorGame(1, Rules(max_turns_per_hand=60), episode="game", seed=5)
    out = g.reset(seed=5)
    for _ in range(800):
        mask = np.asarray(out.legal_action_mask)[0]
        assert mask.any()
        if out.terminated[0] or out.truncated[0]:
            out = g.reset(seed=int(rng.integers(1 << 30)))
            continue
        out = g.step(np.array([rng.choice(np.flatnonzero(mask))]))
