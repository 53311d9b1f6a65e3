"""Standard conformance: Gymnasium's and stable-baselines3's checkers on the registered id,
``illegal_action`` and ``obs_format``, potential-based ``deadwood_shaping`` in the single-agent
and AEC envs (telescoping on fixed decks), SB3's ``make_vec_env``, and the examples."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from support import ROOT, assert_plays_legally, load_example_agent

import okgin_env
from okgin_env import OBS_SIZE, SingleAgentEnv, VectorGame, obs_field
from okgin_env.envs.options import ILLEGAL_REWARD
from okgin_env.features.shaping import potential
from okgin_env.game.actions import DRAW_STOCK, KNOCK, NUM_ACTIONS, TERMINAL_ACTION

ENV_ID = "okgin/OklahomaGin-v0"
# rgb_array frames come from okgin_env.render.rgb; without that module the checker cannot render them
HAVE_RGB = importlib.util.find_spec("okgin_env.render.rgb") is not None
DECKS = [np.random.default_rng(100 + i).permutation(52) for i in range(4)]

CHECK_OPTIONS = [
    {},
    {"obs_format": "dict"},
    {"deadwood_shaping": 0.5},
    {"obs_format": "dict", "episode": "game", "reward": "win", "knock_limit": 10, "deadwood_shaping": 1.0},
]


def option_id(options: dict) -> str:
    return ",".join(f"{k}={v}" for k, v in options.items()) or "default"


def random_legal(rng: np.random.Generator, mask: np.ndarray) -> int:
    legal = np.flatnonzero(mask)
    return int(legal[rng.integers(len(legal))])


def eager(obs: np.ndarray, mask: np.ndarray, rng: np.random.Generator) -> int:
    """Ends hands with points (uniform random play nearly never knocks): knock when legal, else
    discard the card leaving the least deadwood (``discard_deadwood``), else draw or take at random."""
    legal = np.flatnonzero(mask)
    knocks = legal[(legal >= KNOCK) & (legal < DRAW_STOCK)]
    if len(knocks):
        return int(knocks[0])
    discards = legal[legal < KNOCK]
    if not len(discards):
        return random_legal(rng, mask)
    return int(discards[np.argmax(obs_field(obs, "discard_deadwood")[discards])])


# --------------------------------------------------------------------------- checkers

@pytest.mark.parametrize("options", CHECK_OPTIONS, ids=option_id)
def test_gymnasium_check_env_on_the_registered_env(options):
    # check_env steps with unmasked action_space.sample(): the default illegal_action="terminate"
    # ends the episode instead of raising. Through make the env has a spec, so the checker also
    # builds and renders it in every declared render mode.
    env = gymnasium.make(ENV_ID, opponent="random", **options)
    check_env(env.unwrapped, skip_render_check=not HAVE_RGB)


@pytest.mark.parametrize("options", CHECK_OPTIONS, ids=option_id)
def test_sb3_check_env_on_the_registered_env(options):
    sb3_checker = pytest.importorskip("stable_baselines3.common.env_checker")
    env = gymnasium.make(ENV_ID, opponent="random", **options)
    sb3_checker.check_env(env.unwrapped)


@pytest.mark.parametrize("mode", ["ansi", "human"])
def test_text_render_modes_pass_the_passive_checker(mode, capsys):
    from gymnasium.utils.passive_env_checker import env_render_passive_checker

    env = gymnasium.make(ENV_ID, opponent="random", render_mode=mode, disable_env_checker=True).unwrapped
    env.reset(seed=0)
    out = env_render_passive_checker(env)
    assert (out if mode == "ansi" else capsys.readouterr().out).strip()


def test_rgb_array_render_mode_is_accepted():
    # stable-baselines3's make_vec_env passes render_mode="rgb_array" unless told otherwise
    env = SingleAgentEnv(render_mode="rgb_array")
    assert env.render_mode == "rgb_array" and "rgb_array" in env.metadata["render_modes"]
    env.reset(seed=0)
    if HAVE_RGB:
        frame = env.render()
        assert frame.dtype == np.uint8 and frame.ndim == 3 and frame.shape[2] == 3


# ---------------------------------------------------------------------- illegal actions

def test_illegal_action_terminates_by_default():
    env = SingleAgentEnv(opponent="random", seat=0)
    obs, info = env.reset(seed=0)
    mask = info["action_mask"].copy()
    illegal = int(np.flatnonzero(~mask)[0])
    obs2, reward, terminated, truncated, info2 = env.step(illegal)
    assert (reward, terminated, truncated, info2["illegal_action"]) == (ILLEGAL_REWARD, True, False, True)
    np.testing.assert_array_equal(obs2, obs)  # the learner's view: nothing happened
    assert np.flatnonzero(info2["action_mask"]).tolist() == np.flatnonzero(env.action_masks()).tolist() \
        == [TERMINAL_ACTION]
    with pytest.raises(RuntimeError, match="reset"):
        env.step(int(np.flatnonzero(mask)[0]))
    env.reset(seed=0)
    _, _, _, _, info3 = env.step(int(np.flatnonzero(mask)[0]))
    assert "illegal_action" not in info3


@pytest.mark.parametrize("action,message", [
    (-1, r"action -1 is out of range 0-106"),
    (NUM_ACTIONS, r"action 107 is out of range 0-106"),
    ("take", "action must be an integer"),
    (True, "action must be an integer"),
])
def test_actions_outside_the_space_raise_even_when_illegal_actions_terminate(action, message):
    env = SingleAgentEnv(opponent="random")
    env.reset(seed=0)
    with pytest.raises(ValueError, match=message):
        env.step(action)


def test_illegal_action_raise_leaves_the_state_untouched():
    env = SingleAgentEnv(opponent="random", seat=0, illegal_action="raise")
    obs, info = env.reset(seed=0)
    legal = np.flatnonzero(info["action_mask"])
    illegal = int(np.flatnonzero(~info["action_mask"])[0])
    with pytest.raises(ValueError, match=rf"illegal action {illegal} .*; legal actions: {legal[0]} "):
        env.step(illegal)
    np.testing.assert_array_equal(env.action_masks(), info["action_mask"])
    np.testing.assert_array_equal(env.game.observe(0)[0], obs)
    env.step(int(legal[0]))  # the episode goes on


def test_illegal_action_pays_what_is_owed_and_ends_shaping():
    # A shaped episode ended by an illegal action: the reward is ILLEGAL_REWARD - phi(s), the
    # shaping term to the end state (phi = 0), so the shaping still telescopes to -phi(s_0).
    env = SingleAgentEnv(opponent="random", seat=1, deadwood_shaping=0.5)
    obs, info = env.reset(seed=3)
    phi = float(potential(obs, 0.5, 0.02))
    _, reward, terminated, _, info = env.step(int(np.flatnonzero(~info["action_mask"])[0]))
    assert terminated and info["illegal_action"] and reward == pytest.approx(ILLEGAL_REWARD - phi)
    assert phi < 0


# --------------------------------------------------------------------------- obs_format

def test_dict_observations_carry_the_mask():
    env = SingleAgentEnv(opponent="random", obs_format="dict")
    space = env.observation_space
    assert isinstance(space, gymnasium.spaces.Dict) and set(space) == {"observation", "action_mask"}
    assert space["observation"].shape == (OBS_SIZE,)
    assert (space["action_mask"].shape, space["action_mask"].dtype) == ((NUM_ACTIONS,), np.int8)
    vec = SingleAgentEnv(opponent="random")
    rng = np.random.default_rng(0)
    obs, info = env.reset(seed=5)
    vobs, vinfo = vec.reset(seed=5)
    for _ in range(500):
        assert obs in space
        np.testing.assert_array_equal(obs["observation"], vobs)
        np.testing.assert_array_equal(obs["action_mask"], info["action_mask"].astype(np.int8))
        a = random_legal(rng, info["action_mask"])
        obs, r, term, trunc, info = env.step(a)
        vobs, vr, vterm, vtrunc, vinfo = vec.step(a)
        assert (r, term, trunc) == (vr, vterm, vtrunc)
        if term or trunc:
            break
    assert term or trunc
    assert obs in space and np.flatnonzero(obs["action_mask"]).tolist() == [TERMINAL_ACTION]


# ----------------------------------------------------------------------------- shaping

def single_agent_run(deck, seed, shaping, seat=0):
    """``eager`` learner vs a seeded random opponent on ``deck``: rewards, observations at the
    learner's decisions, and the last info."""
    env = SingleAgentEnv(opponent="random", seat=seat, deadwood_shaping=shaping)
    obs, info = env.reset(seed=seed, options={"deck": deck, "dealer": 1})
    rng = np.random.default_rng(seed)
    rewards, decisions = [], [obs]
    while True:
        obs, r, term, trunc, info = env.step(eager(obs, info["action_mask"], rng))
        rewards.append(r)
        if term or trunc:
            return np.array(rewards), decisions, info
        decisions.append(obs)


@pytest.mark.parametrize("case", range(4))
def test_single_agent_shaping_telescopes(case):
    coef, scale = 0.5, 0.02
    deck, seat = DECKS[case], case % 2
    plain, decisions, _ = single_agent_run(deck, case, 0.0, seat)
    shaped, decisions2, _ = single_agent_run(deck, case, coef, seat)
    np.testing.assert_array_equal(np.array(decisions), np.array(decisions2))  # shaping never changes play
    phi = np.append(potential(np.array(decisions), coef, scale), 0.0)  # phi(s_k), then 0 at the end
    np.testing.assert_allclose(shaped - plain, phi[1:] - phi[:-1], atol=1e-6)  # each step: phi(s') - phi(s)
    assert shaped.sum() - plain.sum() == pytest.approx(-phi[0], abs=1e-5)  # the telescoped sum
    assert phi[0] < 0


def test_single_agent_shaping_zero_is_todays_reward():
    # deadwood_shaping=0: 0 until the hand ends, then exactly the hand's points (the learner's
    # minus the opponent's) x reward_scale, as before shaping existed
    scored = 0
    for case, deck in enumerate(DECKS):
        seat = case % 2
        rewards, _, info = single_agent_run(deck, case, 0.0, seat)
        points = info["hand_result"]["points"].tolist()
        assert rewards[:-1].tolist() == [0.0] * (len(rewards) - 1)
        assert rewards[-1] == float(np.float32(points[seat] - points[1 - seat])) * 0.02
        scored += points != [0, 0]
    assert scored >= 2


def aec_run(deck, seed, shaping, options=None):
    """``eager`` play on the raw AEC env: per step rewards of both agents, each agent's
    observations at its decisions, and the (agent, action) of each step."""
    e = okgin_env.raw_env(deadwood_shaping=shaping, **(options or {}))
    e.reset(seed=seed, options={"deck": deck, "dealer": seed % 2})
    rng = np.random.default_rng(seed)
    steps, decisions, moves = [], {a: [] for a in e.possible_agents}, []
    while e.agents:
        agent = e.agent_selection
        obs, _, term, trunc, _ = e.last()
        if term or trunc:
            e.step(None)
        else:
            decisions[agent].append(obs["observation"].copy())
            a = eager(obs["observation"], obs["action_mask"], rng)
            moves.append((agent, a))
            e.step(a)
            steps.append(dict(e.rewards))
    return steps, decisions, moves


@pytest.mark.parametrize("case,options", [(0, {}), (1, {}), (2, {"episode": "game", "target_score": 20}),
                                          (3, {"max_turns_per_hand": 4})])
def test_aec_shaping_telescopes(case, options):
    coef, scale = 0.5, 0.02
    plain, decisions, moves = aec_run(DECKS[case], case, 0.0, options)
    shaped, decisions2, moves2 = aec_run(DECKS[case], case, coef, options)
    assert moves == moves2
    for agent in ("player_0", "player_1"):
        np.testing.assert_array_equal(np.array(decisions[agent]), np.array(decisions2[agent]))
        diff = np.array([s[agent] - p[agent] for s, p in zip(shaped, plain)])
        phi = np.append(potential(np.array(decisions[agent]), coef, scale), 0.0)
        # the step that brings the agent's k-th decision (k >= 1) pays phi(s_k) - phi(s_{k-1}),
        # the last step pays -phi(its last decision), and no other step pays it anything
        brought = [i for i in range(len(moves) - 1) if moves[i + 1][0] == agent]  # steps bringing a decision
        if moves[0][0] == agent:
            brought = [None] + brought  # its first decision came with reset
        assert len(brought) == len(phi) - 1
        terms = np.zeros(len(moves))
        for k in range(1, len(brought)):
            terms[brought[k]] += phi[k] - phi[k - 1]
        terms[-1] += -phi[-2]
        np.testing.assert_allclose(diff, terms, atol=1e-6)
        assert diff.sum() == pytest.approx(-phi[0], abs=1e-5)


def test_aec_shaping_zero_is_todays_reward_and_zero_sum():
    # deadwood_shaping=0: rewards are exactly the core's (times reward_scale) and zero-sum
    scored = 0
    for case, deck in enumerate(DECKS):
        steps, _, moves = aec_run(deck, case, 0.0)
        game = VectorGame(1)
        game.reset(decks=deck, dealers=case % 2)
        for step, (_, a) in zip(steps, moves):
            out = game.step(np.array([a]))
            assert [step["player_0"], step["player_1"]] == [float(out.rewards[0, 0]) * 0.02,
                                                            float(out.rewards[0, 1]) * 0.02]
            assert step["player_0"] + step["player_1"] == 0.0
            scored += bool(out.rewards.any())
    assert scored >= 2


def test_aec_shaped_rewards_are_not_zero_sum():
    steps, _, _ = aec_run(DECKS[0], 0, 0.5)
    assert any(abs(s["player_0"] + s["player_1"]) > 1e-3 for s in steps)


@pytest.mark.filterwarnings("ignore:ignoring unknown reset option")
def test_aec_shaping_through_the_wrapped_env_and_api_test():
    from pettingzoo.test import api_test

    api_test(okgin_env.env(deadwood_shaping=0.5), num_cycles=200)


# ------------------------------------------------------------------------ SB3 and examples

def test_sb3_make_vec_env_builds_and_steps():
    env_util = pytest.importorskip("stable_baselines3.common.env_util")
    vec = env_util.make_vec_env(ENV_ID, n_envs=8, seed=0,
                                env_kwargs=dict(opponent="random", deadwood_shaping=0.5))
    obs = vec.reset()
    assert obs.shape == (8, OBS_SIZE)
    rng = np.random.default_rng(0)
    for _ in range(50):
        masks = np.stack(vec.env_method("action_masks"))
        obs, rewards, dones, infos = vec.step(np.array([random_legal(rng, m) for m in masks]))
        assert obs.shape == (8, OBS_SIZE) and rewards.shape == (8,)
    vec.close()


def run_example(name: str, *args: str, timeout: int = 600) -> str:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    done = subprocess.run([sys.executable, str(ROOT / "examples" / name), *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


@pytest.mark.slow
def test_sb3_maskable_ppo_example_runs_with_a_tiny_budget(tmp_path):
    pytest.importorskip("sb3_contrib")
    out = run_example("sb3_maskable_ppo.py", "--timesteps", "512", "--n-envs", "2", "--hands", "10",
                      "--out", str(tmp_path / "model.zip"))
    assert "points/hand (95% CI)" in out and "over 10 hands" in out
    assert (tmp_path / "model.zip").is_file()
    agent = load_example_agent("examples.sb3_maskable_ppo:Agent", "OKGIN_SB3_MASKABLE_PPO_MODEL", tmp_path / "model.zip")
    assert agent.features == "raw"
    assert_plays_legally(agent)
    with pytest.raises(FileNotFoundError, match="OKGIN_SB3_MASKABLE_PPO_MODEL"):
        load_example_agent("examples.sb3_maskable_ppo:Agent", "OKGIN_SB3_MASKABLE_PPO_MODEL", tmp_path / "missing.zip")
    (tmp_path / "notes.zip").write_text("not a model")
    with pytest.raises(ValueError, match=r"'.*notes.zip' is not a model saved by examples/sb3_maskable_ppo.py \("):
        load_example_agent("examples.sb3_maskable_ppo:Agent", "OKGIN_SB3_MASKABLE_PPO_MODEL", tmp_path / "notes.zip")


@pytest.mark.slow
def test_pettingzoo_parallel_example_runs():
    out = run_example("pettingzoo_parallel.py", "--episodes", "1", "--num-envs", "2", "--steps", "300")
    assert "parallel episode 0: player_0" in out and "vector env: 2 envs x 2 agents, 300 steps" in out


@pytest.mark.filterwarnings("ignore:ignoring unknown reset option")
def test_turn_based_parallel_env_passes_the_parallel_api_test():
    from pettingzoo.test import parallel_api_test
    from pettingzoo.utils.conversions import turn_based_aec_to_parallel

    parallel_api_test(turn_based_aec_to_parallel(okgin_env.env(deadwood_shaping=0.5)), num_cycles=300)


def test_supersuit_vector_env_keeps_dict_observations():
    ss = pytest.importorskip("supersuit")
    from pettingzoo.utils.conversions import turn_based_aec_to_parallel

    vec = ss.concat_vec_envs_v1(ss.pettingzoo_env_to_vec_env_v1(turn_based_aec_to_parallel(okgin_env.env())), 2,
                                num_cpus=0, base_class="gymnasium")
    obs, _ = vec.reset(seed=0)
    assert obs["observation"].shape == (4, OBS_SIZE) and obs["action_mask"].shape == (4, NUM_ACTIONS)
    # one agent of each env is to act: exactly one of its two rows has legal actions
    assert obs["action_mask"].any(axis=1).reshape(2, 2).sum(axis=1).tolist() == [1, 1]
    vec.close()
