"""Property tests of ``VectorGame`` under random play and random rule options (hypothesis).

For any rules, seed and episode kind, while games are played with random legal
actions (knocking often when a knock is legal):

* the 52 cards are conserved: hands + stock + discard pile (+ the face-down knock
  card at a knock) hold every card exactly once;
* the action mask is exactly the reference's legal set, and never empty while the
  game is not finished;
* rewards are zero-sum and vanish for finished games;
* the same seed gives the same games.

Here the engine deals from its own seeded generator (``reset(seed=...)`` without
decks); the reference is given the engine's deck and dealer of each hand.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from okgin_env.game import rules
from okgin_env.game.actions import DRAW_STOCK, KNOCK, NUM_ACTIONS
from okgin_env.game.cards import NUM_CARDS
from okgin_env.game.core import VectorGame
from okgin_env.game.rules import Rules
from okgin_env.testing.reference import ReferenceGame

NUM_GAMES = 4
MAX_STEPS = 600

rules_strategy = rules.rules_strategy(st)  # every option drawn from its declared values
# derandomize: the same examples on every run (a flaky test is a failing test)
SETTINGS = settings(max_examples=40, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])


def pick_actions(mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A random legal action per game; a random knock with probability 1/2 when one is legal."""
    actions = np.zeros(len(mask), dtype=np.int64)
    for i, row in enumerate(mask):
        legal = np.flatnonzero(row)
        if len(legal) == 0:
            continue
        knocks = legal[(legal >= KNOCK) & (legal < DRAW_STOCK)]
        pool = knocks if len(knocks) and rng.random() < 0.5 else legal
        actions[i] = rng.choice(pool)
    return actions


def card_counts(vg: VectorGame, i: int) -> np.ndarray:
    """How often each card appears in hands, stock and pile of game i."""
    s = vg.state
    counts = s.hands[i].sum(axis=0).astype(int)
    np.add.at(counts, s.deck[i, s.stock_next[i]:].astype(int), 1)
    np.add.at(counts, s.pile[i, : s.pile_size[i]].astype(int), 1)
    return counts


def play(rules: Rules, episode: str, seed: int, check: bool = True) -> list:
    """Play NUM_GAMES episodes for up to MAX_STEPS steps; returns a trace of everything seen."""
    vg = VectorGame(NUM_GAMES, rules=rules, episode=episode, seed=seed)
    out = vg.reset(seed=seed)
    rng = np.random.default_rng(seed)
    refs: list[ReferenceGame] = []

    def engine_deal(i: int):
        return lambda: vg.state.deck[i].tolist()

    for i in range(NUM_GAMES):
        refs.append(ReferenceGame(rules, vg.state.deck[i].tolist(), int(vg.state.dealer[i]), episode,
                                  next_deck=engine_deal(i)))
    trace = []
    for _ in range(MAX_STEPS):
        done = vg.state.done.copy()
        if done.all():
            break
        if check:
            for i in np.flatnonzero(~done):
                assert out.legal_action_mask[i].any(), "empty mask in a running game"
                assert out.current_player[i] == refs[i].current_player
                assert np.flatnonzero(out.legal_action_mask[i]).tolist() == refs[i].legal_actions()
                assert (card_counts(vg, i) == 1).all(), "cards not conserved"
        actions = pick_actions(out.legal_action_mask, rng)
        out = vg.step(actions)
        trace.append((actions.copy(), out.current_player.copy(), out.legal_action_mask.copy(),
                      out.observation.copy(), out.rewards.copy(), out.terminated.copy(), out.truncated.copy(),
                      vg.state.deck.copy()))
        assert out.legal_action_mask.shape == (NUM_GAMES, NUM_ACTIONS)
        assert (out.rewards.sum(axis=1) == 0).all(), "rewards not zero-sum"
        assert (out.rewards[done] == 0).all(), "a finished game got a reward"
        if not check:
            continue
        for i in np.flatnonzero(~done):
            refs[i].step(int(actions[i]))
            assert out.rewards[i].tolist() == refs[i].last_rewards
            if out.hand_over[i] and episode == "hand":
                # the final hands, the face-down knock card, stock and pile hold every card once
                s, r = vg.state, out.result
                counts = r.hands[i].sum(axis=0).astype(int)
                np.add.at(counts, s.deck[i, s.stock_next[i]:].astype(int), 1)
                np.add.at(counts, s.pile[i, : s.pile_size[i]].astype(int), 1)
                if r.knock_card[i] >= 0:
                    counts[r.knock_card[i]] += 1
                assert (counts == 1).all() and counts.sum() == NUM_CARDS
    return trace


@pytest.mark.slow  # 40 examples against the reference; test_crosscheck's quick cases cover the fast loop
@given(rules=rules_strategy, episode=st.sampled_from(["hand", "game"]), seed=st.integers(0, 2**31 - 1))
@SETTINGS
def test_random_play_invariants(rules: Rules, episode: str, seed: int) -> None:
    play(rules, episode, seed)


@pytest.mark.slow  # about a second: the fast loop (-m 'not slow') stays under a minute
@given(rules=rules_strategy, episode=st.sampled_from(["hand", "game"]), seed=st.integers(0, 2**31 - 1))
@settings(max_examples=10, deadline=None, derandomize=True)
def test_same_seed_same_games(rules: Rules, episode: str, seed: int) -> None:
    first = play(rules, episode, seed, check=False)
    second = play(rules, episode, seed, check=False)
    assert len(first) == len(second)
    for a, b in zip(first, second):
        for x, y in zip(a, b):
            assert np.array_equal(x, y)
