"""The search bot: legal, deterministic, blind to hidden cards, independent of the batch."""

from __future__ import annotations

import numpy as np
import okgin_agents as agents
import pytest
from okgin_agents.search import SearchAgent

from okgin_env.game.core import Phase, VectorGame, random_legal_actions
from okgin_env.game.observation import OBS_SIZE
from okgin_env.game.rules import Rules


def _positions(n: int = 48, steps: int = 24, seed: int = 0, episode: str = "hand"):
    """A batch of decisions from random games (draws, discards, knock chances, some finished games)."""
    game = VectorGame(n, episode=episode, seed=seed)
    out = game.reset()
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        out = game.step(random_legal_actions(out.legal_action_mask, rng))
    return game, out


def test_registered_spec_and_bad_k() -> None:
    assert "search[:K[:PATH]]" in agents.SPECS
    bot = agents.make("search:3", seed=0)
    assert isinstance(bot, SearchAgent) and bot.worlds == 3
    assert agents.make("search", seed=0).worlds == agents.search.DEFAULT_WORLDS
    for bad in ("search:0", "search:-2", "search:5000"):
        with pytest.raises(ValueError, match="search worlds K must be an integer 1..4096"):
            agents.make(bad, seed=0)
    for bad in ("search:many", "search:2.5"):
        with pytest.raises(ValueError, match=r"search:K\[:PATH\] needs an integer K"):
            agents.make(bad, seed=0)
    with pytest.raises(ValueError, match=r"search:K\[:PATH\] needs an integer K"):  # a colon alone is a typo, not the default
        agents.make("search:", seed=0)


@pytest.mark.slow
@pytest.mark.parametrize("episode,rollout", [("hand", "expert"), ("game", "simple")])
def test_plays_only_legal_actions_to_the_end(episode: str, rollout: str) -> None:
    bot = SearchAgent(seed=1, worlds=2, rollout=rollout)
    game = VectorGame(8, episode=episode, seed=3, rules=Rules(target_score=30))
    out = game.reset()
    for _ in range(400):
        if (out.terminated | out.truncated).all():
            break
        actions = bot.act(out.observation, out.legal_action_mask)
        live = out.current_player >= 0
        assert out.legal_action_mask[np.flatnonzero(live), actions[live]].all()
        out = game.step(actions)  # raises on an illegal action
    assert (out.terminated | out.truncated).all()


def test_deterministic_given_the_seed_and_row_independent() -> None:
    _, out = _positions()
    obs, mask = out.observation, out.legal_action_mask
    a = SearchAgent(seed=7, worlds=3).act(obs, mask)
    np.testing.assert_array_equal(SearchAgent(seed=7, worlds=3).act(obs, mask), a)
    bot = SearchAgent(seed=7, worlds=3)
    bot.act(obs[::-1], mask[::-1])  # earlier calls leave no trace
    rows = [0, 5, 11, 17]
    np.testing.assert_array_equal(bot.act(obs[rows], mask[rows]), a[rows])  # nor do the other rows
    singles = np.concatenate([bot.act(obs[[r]], mask[[r]]) for r in rows])
    np.testing.assert_array_equal(singles, a[rows])


def test_uses_no_hidden_state() -> None:
    """Shuffle the opponent's unknown cards and the stock in the true game: same observation, same action."""
    game, out = _positions(n=32, steps=16, seed=5)
    rows = np.flatnonzero((out.current_player >= 0) & (game.state.phase >= Phase.DRAW))
    state = game.get_state(rows)
    rng = np.random.default_rng(0)
    for j in range(len(rows)):
        p = int(state.current_player[j])
        q = 1 - p
        free_opp = np.flatnonzero(state.hands[j, q] & ~state.taken[j, q])
        old = np.concatenate([free_opp, state.deck[j, int(state.stock_next[j]):]])
        relabel = np.arange(52)
        relabel[old] = rng.permutation(old)  # a random permutation of the hidden cards
        state.deck[j] = relabel[state.deck[j]]
        state.hands[j, q, free_opp] = False
        state.hands[j, q, relabel[free_opp]] = True
    other = VectorGame(len(rows), seed=1)
    view = other.set_state(state)
    assert not np.array_equal(other.state.hands, game.state.hands[rows])  # the hidden cards did change
    np.testing.assert_array_equal(view.observation, out.observation[rows])
    bot = SearchAgent(seed=3, worlds=4)
    np.testing.assert_array_equal(bot.act(view.observation, view.legal_action_mask),
                                  bot.act(out.observation[rows], out.legal_action_mask[rows]))


def test_rows_without_a_decision_and_bad_options() -> None:
    bot = SearchAgent(seed=0, worlds=2)
    obs = np.zeros((2, OBS_SIZE), np.float32)
    assert bot.act(obs, np.zeros((2, 107), bool)).shape == (2,)
    with pytest.raises(ValueError, match="rollout must be one of simple, expert"):
        SearchAgent(rollout="ppo")
    with pytest.raises(ValueError, match="observations must have shape"):
        bot.act(np.zeros((2, 3), np.float32), np.zeros((2, 107), bool))


def test_splitting_a_large_batch_changes_nothing() -> None:
    _, out = _positions(n=16, steps=20, seed=8)
    one = SearchAgent(seed=2, worlds=2, rollout="simple").act(out.observation, out.legal_action_mask)
    split = SearchAgent(seed=2, worlds=2, rollout="simple", max_batch=8).act(out.observation, out.legal_action_mask)
    np.testing.assert_array_equal(split, one)


def test_close_decisions_get_more_of_the_same_worlds() -> None:
    """Pass 1: K worlds for every searched row; pass 2: ``extra`` more, only where an alternative
    leads the expert's choice by more than ``close`` standard errors. A row's world k is the same
    in both passes as in one pass of K + extra worlds, so pooling them is one larger sample."""
    from okgin_agents.search import _paired_lead

    _, out = _positions(n=24, steps=20, seed=4)
    bot = SearchAgent(seed=5, worlds=3, extra=4, close=0.0, rollout="simple")
    calls = []
    values = bot._values

    def recorded(obs, cand, row_seed, draws, start, count, rules, episode):
        v = values(obs, cand, row_seed, draws, start, count, rules, episode)
        calls.append((obs, cand, row_seed, draws, start, count, v))
        return v

    bot._values = recorded
    bot.act(out.observation, out.legal_action_mask)
    assert [c[4:6] for c in calls] == [(0, 3), (3, 4)]
    obs, cand, row_seed, draws, _, _, first = calls[0]
    best, lead, se = _paired_lead(first, cand)
    close = np.flatnonzero((best > 0) & (lead > 0.0 * se))
    assert 0 < len(close) < len(cand)
    np.testing.assert_array_equal(calls[1][1], cand[close])
    pooled = np.concatenate([first[close], calls[1][6]], axis=2)
    one_pass = values(obs[close], cand[close], row_seed[close], draws[close], 0, 7, bot.rules, "hand")
    np.testing.assert_array_equal(pooled, one_pass)


def test_extra_worlds_option() -> None:
    assert agents.make("search:3", seed=0).extra == 3 * agents.search.EXTRA_FACTOR
    assert SearchAgent(worlds=4, extra=0).extra == 0
    for bad in (-1, 2.5, True):
        with pytest.raises(ValueError, match="extra worlds must be an integer"):
            SearchAgent(extra=bad)


def test_settings_or_keywords_and_an_unknown_option_is_named():
    from okgin_agents.search import SearchSettings
    assert SearchAgent(settings=SearchSettings(worlds=4), top=2).worlds == 4
    assert SearchAgent(settings=SearchSettings(worlds=4), worlds=6).worlds == 6  # a keyword wins
    with pytest.raises(TypeError, match="unknown option\\(s\\) world; allowed: worlds, rollout"):
        SearchAgent(world=4)
