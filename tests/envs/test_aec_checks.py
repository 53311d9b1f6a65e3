"""``okgin_env.env()`` against PettingZoo's own classic-env wrapper chain, in lockstep.

``env()`` builds the checks of ``OrderEnforcingWrapper(AssertOutOfBoundsWrapper(
TerminateIllegalWrapper(raw_env(), illegal_reward=-1)))`` into one class (``OkginAECEnv``), so
that no PettingZoo private attribute is read or written. These tests play the same scripted and
random sequences -- legal moves, illegal moves, out-of-range actions, ``None`` for a live agent,
moves of a dead agent, steps after the end, calls before reset -- through both and compare every
observable: what each call returns or raises, PettingZoo's warnings, ``last()``, rewards,
terminations, truncations, infos, agents and the agent to act.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pytest
from pettingzoo.utils import wrappers
from pettingzoo.utils.env_logger import EnvLogger

import okgin_env
from okgin_env.envs.aec import OkginAECEnv, raw_env
from okgin_env.game.actions import NUM_ACTIONS


def standard_chain(**options: Any):
    """What ``tictactoe.env()`` does: PettingZoo's three wrappers over the raw env."""
    e = raw_env(**options)
    e = wrappers.TerminateIllegalWrapper(e, illegal_reward=-1)
    return wrappers.OrderEnforcingWrapper(wrappers.AssertOutOfBoundsWrapper(e))


def outcome(call: Callable[[], Any]) -> tuple:
    """(kind, value, PettingZoo warnings) of one call: ("ok", result) or ("raise", type, message)."""
    EnvLogger.flush()
    try:
        result = ("ok", call())
    except (AssertionError, AttributeError, ValueError) as e:
        result = ("raise", type(e).__name__, str(e))
    warned = list(EnvLogger.mqueue)
    EnvLogger.flush()
    return result, warned


def same(a: Any, b: Any) -> bool:
    """Deep equality over dicts, tuples, arrays and numbers."""
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, (tuple, list)):
        return isinstance(b, (tuple, list)) and len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return np.array_equal(np.asarray(a), np.asarray(b))
    return a == b


def assert_same_view(ours, ref) -> None:
    """Every per-step attribute and ``last()`` agree."""
    for name in ("agents", "rewards", "terminations", "truncations", "infos", "_cumulative_rewards"):
        assert same(getattr(ours, name), getattr(ref, name)), name
    if ours.agents:
        assert ours.agent_selection == ref.agent_selection
        assert same(ours.last(), ref.last())
        for agent in ours.possible_agents:
            assert same(ours.observe(agent), ref.observe(agent))


def both(ours, ref, call: Callable[[Any], Any]) -> None:
    got, want = outcome(lambda: call(ours)), outcome(lambda: call(ref))
    assert same(got, want), (got, want)


def test_before_reset_both_refuse_the_same_way():
    ours, ref = okgin_env.env(), standard_chain()
    assert isinstance(ours, OkginAECEnv)
    for call in (lambda e: e.step(0), lambda e: e.observe("player_0"), lambda e: e.state(), lambda e: e.render(),
                 lambda e: e.agent_iter(), lambda e: e.agents, lambda e: e.agent_selection, lambda e: e.rewards,
                 lambda e: e.terminations, lambda e: e.truncations, lambda e: e.infos, lambda e: e.num_agents,
                 lambda e: e.last()):
        both(ours, ref, call)
    assert str(ours) == str(ref) == "okgin_v0"
    assert ours.possible_agents == ref.possible_agents and ours.max_num_agents == ref.max_num_agents


def _odd_action(rng: np.random.Generator, mask: np.ndarray) -> Any:
    """A wrong action of some kind: illegal in range, out of range, None, a float, a numpy int."""
    kind = rng.integers(6)
    illegal = np.flatnonzero(mask == 0)
    if kind == 0 and len(illegal):
        return int(rng.choice(illegal))
    if kind == 1:
        return int(rng.choice([-1, NUM_ACTIONS, NUM_ACTIONS + 7]))
    if kind == 2:
        return None
    if kind == 3:
        return 3.0
    if kind == 4:  # a legal move as a numpy integer: legal, not odd
        return np.int64(rng.choice(np.flatnonzero(mask)))
    return np.int64(int(rng.choice(illegal))) if len(illegal) else None


@pytest.mark.parametrize("seed,options", [(0, {}), (1, {"episode": "game", "target_score": 40}),
                                          (2, {"obs_format": "rllib"}), (3, {"deadwood_shaping": 0.5}),
                                          (4, {"max_turns_per_hand": 3})])
def test_random_and_wrong_sequences_in_lockstep(seed, options):
    """Random masked play with wrong actions mixed in (each ends or leaves the game as the chain
    does), steps of dead agents, steps after the end and repeated episodes."""
    ours, ref = okgin_env.env(**options), standard_chain(**options)
    rng = np.random.default_rng(seed)
    mask_key = "action_mask"
    odd_rate = 0.02
    for episode in range(12):
        both(ours, ref, lambda e: e.reset(seed=seed * 100 + episode))
        assert_same_view(ours, ref)
        for _ in range(400):
            if not ours.agents:
                both(ours, ref, lambda e: e.step(None))  # a step after the end: a warning in both
                break
            obs, _, term, trunc, _ = ours.last()
            if term or trunc:
                action = None if rng.random() > 0.1 else int(rng.integers(NUM_ACTIONS))  # a dead agent's move
            elif rng.random() < odd_rate:
                action = _odd_action(rng, obs[mask_key])
            else:
                action = int(rng.choice(np.flatnonzero(obs[mask_key])))
            both(ours, ref, lambda e: e.step(action))
            assert_same_view(ours, ref)


def test_agent_iter_loops_agree_and_enforce_stepping():
    ours, ref = okgin_env.env(), standard_chain()
    for e in (ours, ref):
        e.reset(seed=5)
    rng_o, rng_r = np.random.default_rng(0), np.random.default_rng(0)
    trace = {id(ours): [], id(ref): []}
    for e, rng in ((ours, rng_o), (ref, rng_r)):
        for agent in e.agent_iter():
            obs, reward, term, trunc, _ = e.last()
            trace[id(e)].append((agent, reward, term, trunc))
            e.step(None if term or trunc else int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    assert trace[id(ours)] == trace[id(ref)] and len(trace[id(ours)]) > 10
    for e in (ours, ref):  # two agents without a step between them fail the iterator's assert
        e.reset(seed=6)
        it = iter(e.agent_iter())
        next(it)
        with pytest.raises(AssertionError, match="need to call step"):
            next(it)


def test_scripted_illegal_move_ends_the_game_with_minus_one():
    ours, ref = okgin_env.env(), standard_chain()
    for e in (ours, ref):
        e.reset(seed=0)
    illegal = int(np.flatnonzero(ours.last()[0]["action_mask"] == 0)[0])
    mover = ours.agent_selection
    both(ours, ref, lambda e: e.step(illegal))
    assert_same_view(ours, ref)
    assert all(ours.terminations.values()) and all(ours.truncations.values())
    assert ours._cumulative_rewards[mover] == -1 and sum(ours._cumulative_rewards.values()) == -1
    for _ in range(2):
        both(ours, ref, lambda e: e.step(None))
        assert_same_view(ours, ref)
    assert ours.agents == []


def test_render_takes_the_mode_rllib_passes():
    e = okgin_env.env(render_mode="ansi")
    e.reset(seed=0)
    assert "View of" in e.render() and e.render("ansi") == e.render()
    assert e.render("rgb_array").shape == (352, 640, 3)
    with pytest.raises(ValueError, match="render_mode must be None or one of"):
        e.render("svg")


def test_pickles_as_the_checked_env():
    import pickle

    e = okgin_env.env(knock_limit=5)
    again = pickle.loads(pickle.dumps(e))
    assert isinstance(again, OkginAECEnv) and again.rules.knock_limit == 5


def test_returned_observations_are_not_overwritten_by_later_steps():
    """A replay buffer keeps the arrays it is given: the env (and the core's reused step buffers
    under it) must never write into an observation, mask or info array it has handed out."""
    import gymnasium

    e = okgin_env.env()
    e.reset(seed=1)
    rng = np.random.default_rng(1)
    kept = []
    for agent in e.agent_iter(200):
        obs, _, term, trunc, info = e.last()
        kept.append((obs, {k: v for k, v in obs.items()}, {k: np.array(v) for k, v in obs.items()}))
        e.step(None if term or trunc else int(rng.choice(np.flatnonzero(obs["action_mask"]))))
        if not e.agents:
            e.reset()
    for obs, _, copy in kept:
        for key in copy:
            np.testing.assert_array_equal(obs[key], copy[key])
    single = gymnasium.make("okgin/OklahomaGin-v0", opponent="random", obs_format="dict")
    obs, info = single.reset(seed=2)
    history = []
    for _ in range(200):
        history.append(({k: v for k, v in obs.items()}, {k: np.array(v) for k, v in obs.items()},
                        info["action_mask"], np.array(info["action_mask"])))
        obs, _, term, trunc, info = single.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
        if term or trunc:
            obs, info = single.reset()
    for obs, copy, mask, mask_copy in history:
        for key in copy:
            np.testing.assert_array_equal(obs[key], copy[key])
        np.testing.assert_array_equal(mask, mask_copy)
