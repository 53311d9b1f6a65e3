"""The speed paths change nothing observable: unchecked steps give the same play as the plain core, and ``env()``'s fused wrapper methods behave like PettingZoo's."""

from __future__ import annotations

import numpy as np
import pytest
from pettingzoo.utils import wrappers

from okgin_env.envs.aec import env as make_env
from okgin_env.envs.aec import raw_env
from okgin_env.game.core import VectorGame, random_legal_actions


def _snapshot(out) -> tuple:
    return (out.current_player.copy(), out.legal_action_mask.copy(), out.observation.copy(), out.rewards.copy(),
            out.terminated.copy(), out.truncated.copy(), out.hand_over.copy(), *(a.copy() for a in out.result))


@pytest.mark.parametrize("episode", ["hand", "game"])
def test_checked_steps_match_the_plain_core(episode):
    """Two seeded 3-game cores, one plain and one with unchecked steps,
    play the same random actions for 1500 steps (dozens of hands, autoreset included): every
    output field agrees at every step."""
    plain = VectorGame(3, episode=episode, autoreset=True, seed=7)
    fast = VectorGame(3, episode=episode, autoreset=True, seed=7)
    a, b = plain.reset(), fast.reset()
    rng = np.random.default_rng(1)
    ends = 0
    for _ in range(1500):
        for x, y in zip(_snapshot(a), _snapshot(b)):
            np.testing.assert_array_equal(x, y)
        act = random_legal_actions(a.legal_action_mask, rng)
        a, b = plain.step(act), fast.step(act, checked=True)
        ends += int(a.hand_over.sum())
    assert ends > 20  # hand ends and autoresets were exercised


@pytest.mark.parametrize("episode,autoreset", [("hand", True), ("game", False)])
def test_steps_keep_no_observation_or_mask_of_an_earlier_step(episode, autoreset):
    """``step`` writes its rewards, flags and result into the game's own buffers, but the
    observation, mask and current player are new arrays each step: an earlier one is never
    overwritten (rollouts keep them), whatever ended in between."""
    g = VectorGame(3, episode=episode, autoreset=autoreset, seed=7)
    out = g.reset()
    rng = np.random.default_rng(2)
    ends, kept = 0, []
    for t in range(600):
        if t % 50 == 0:
            kept.append((out.observation, out.observation.copy(), out.legal_action_mask, out.legal_action_mask.copy(),
                         out.current_player, out.current_player.copy()))
        if not autoreset and out.current_player.min() < 0:
            out = g.reset(games=out.current_player < 0)
            continue
        out = g.step(random_legal_actions(out.legal_action_mask, rng), checked=bool(t % 2))
        ends += int(out.hand_over.sum())
    assert ends > 5  # hand ends were exercised
    for now_obs, then_obs, now_mask, then_mask, now_player, then_player in kept:
        np.testing.assert_array_equal(now_obs, then_obs)
        np.testing.assert_array_equal(now_mask, then_mask)
        np.testing.assert_array_equal(now_player, then_player)


def _pettingzoo_env(**options):
    """``env()`` built from PettingZoo's own wrapper classes (the reference for the fused ones)."""
    e = raw_env(**options)
    e = wrappers.TerminateIllegalWrapper(e, illegal_reward=-1)
    e = wrappers.AssertOutOfBoundsWrapper(e)
    return wrappers.OrderEnforcingWrapper(e)


def _play(e, seed: int, steps: int, illegal_at: int | None = None, blind: bool = False) -> list:
    """Seeded random play through last()/step(); returns every last() (observations copied).
    ``blind``: every third step acts on ``infos``' mask without observing first (TerminateIllegal
    then observes by itself)."""
    rng = np.random.default_rng(seed)
    e.reset(seed=seed)
    log = []
    for t in range(steps):
        agent = e.agent_selection
        if blind and t % 3 == 2 and not (e.terminations[agent] or e.truncations[agent]):
            legal = np.flatnonzero(e.infos[agent]["action_mask"])
            e.step(int(legal[rng.integers(len(legal))]))
            continue
        obs, rew, term, trunc, info = e.last()
        log.append((e.agent_selection, obs["observation"].copy(), obs["action_mask"].copy(), rew, term, trunc,
                    sorted(info), dict(e.rewards), list(e.agents)))
        if term or trunc:
            e.step(None)
            if not e.agents:
                e.reset(seed=seed + t)
            continue
        legal = np.flatnonzero(obs["action_mask"])
        if t == illegal_at:
            e.step(int(np.flatnonzero(obs["action_mask"] == 0)[0]))
        else:
            e.step(int(legal[rng.integers(len(legal))]))
    return log


def _assert_same_logs(x: list, y: list) -> None:
    assert len(x) == len(y)
    for i, (u, v) in enumerate(zip(x, y)):
        for a, b in zip(u, v):
            if isinstance(a, np.ndarray):
                np.testing.assert_array_equal(a, b, err_msg=f"step {i}")
            else:
                assert a == b, f"step {i}: {a!r} != {b!r}"


@pytest.mark.parametrize("episode", ["hand", "game"])
def test_env_wrappers_play_like_pettingzoos(episode):
    """The same seeded 600 steps through ``env()`` and through PettingZoo's wrapper classes
    give the same agent, observation, mask, rewards, flags and info keys at every step."""
    _assert_same_logs(_play(make_env(episode=episode), 3, 600), _play(_pettingzoo_env(episode=episode), 3, 600))


@pytest.mark.parametrize("episode", ["hand", "game"])
def test_env_wrappers_play_like_pettingzoos_without_observing_first(episode):
    """As above, with every third step taken without ``last()`` before it."""
    _assert_same_logs(_play(make_env(episode=episode), 6, 600, blind=True),
                      _play(_pettingzoo_env(episode=episode), 6, 600, blind=True))


def test_env_wrappers_terminate_an_illegal_move_like_pettingzoos():
    """An illegal action at step 5 ends the episode with -1 for the mover in both."""
    ours = _play(make_env(), 4, 12, illegal_at=5)
    theirs = _play(_pettingzoo_env(), 4, 12, illegal_at=5)
    _assert_same_logs(ours, theirs)
    assert any(min(entry[7].values()) == -1 for entry in ours)


def test_env_wrappers_keep_pettingzoos_errors():
    e = make_env()
    with pytest.raises(AttributeError, match="before reset"):
        e.last()
    e.reset(seed=0)
    with pytest.raises(AssertionError, match="not in action space"):
        e.step(107)
