"""TorchRL 0.14.1 on its own paths over okgin's envs, unchanged (issue 34), and examples/torchrl_ppo.py
at a tiny budget.

Each of TorchRL's ways in passes ``check_env_specs`` and a random rollout (actions drawn from the
masked action spec) of a few hundred steps across hand ends, every action legal:

* ``GymEnv("okgin/OklahomaGin-v0", ...)``: TorchRL passes ``frameskip`` and retries without it only
  when the ``TypeError`` says "unexpected keyword argument 'frameskip'" (before: ``ValueError``);
* ``GymEnv("okgin_env:okgin/OklahomaGin-v0", num_envs=4, ...)``: TorchRL's workers are spawned
  processes where only the ``module:id`` form registers the id;
* ``GymWrapper(gymnasium.make_vec(..., vectorization_mode="vector_entry_point"))``: okgin's vector
  env (``autoreset_mode`` same-step; the mask comes through ``infos["action_mask"]``);
* ``PettingZooWrapper(okgin_env.env(), use_mask=True)``: the AEC env, both seats.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("torchrl", reason="TorchRL is not installed (pip install -e \".[integrations]\")")

import gymnasium
import torch
from support import ROOT
from tensordict import TensorDictBase
from torchrl.envs import (
    ActionMask,
    DTypeCastTransform,
    EnvBase,
    GymEnv,
    GymWrapper,
    PettingZooWrapper,
    TransformedEnv,
)
from torchrl.envs.utils import check_env_specs

import okgin_env
from okgin_env import make_agent
from okgin_env.envs.vector import OkginVectorEnv

pytestmark = pytest.mark.integrations

ENV_ID = "okgin/OklahomaGin-v0"


def _check_and_roll(env: EnvBase, steps: int) -> TensorDictBase:
    """check_env_specs, then a seeded random rollout of ``steps`` steps over hand ends; returns it."""
    check_env_specs(env)
    torch.manual_seed(0)
    env.set_seed(0)
    rollout = env.rollout(steps, break_when_any_done=False)
    env.close()
    return rollout


def _assert_legal_and_hand_ends(rollout: TensorDictBase, min_hands: int) -> None:
    """Every action was legal under the mask it was drawn with, and at least ``min_hands`` hands ended."""
    legal = rollout["action_mask"].gather(-1, rollout["action"].unsqueeze(-1))
    assert legal.all()
    assert int(rollout["next", "done"].sum()) >= min_hands
    assert torch.isfinite(rollout["next", "reward"]).all()


def test_gym_env_dict_observation():
    """The registered id through GymEnv, obs_format="dict": 300 steps, several hands, all legal."""
    env = GymEnv(ENV_ID, opponent="random", obs_format="dict", categorical_action_encoding=True)
    assert env.wrapper_frame_skip == 1  # TorchRL took okgin's TypeError for "no frameskip here"
    env = TransformedEnv(env, DTypeCastTransform(torch.int8, torch.bool, in_keys=["action_mask"]))
    env.append_transform(ActionMask())
    rollout = _check_and_roll(env, 300)
    assert rollout["observation"].shape == (300, okgin_env.OBS_SIZE)
    _assert_legal_and_hand_ends(rollout, 2)
    # the default one-hot action encoding builds too (the plain GymEnv of TorchRL's docs)
    GymEnv(ENV_ID, opponent="random").close()


def test_gym_env_num_envs_spawned_workers():
    """GymEnv(num_envs=4) runs the envs in spawned workers: the "okgin_env:" form registers the id there."""
    env = GymEnv("okgin_env:" + ENV_ID, num_envs=4, opponent="random", obs_format="dict",
                 categorical_action_encoding=True)
    # the workers' infos also carry "action_mask" (bool), and TorchRL's info reader gives it that key
    assert env.batch_size == (4,) and env.observation_spec["action_mask"].dtype == torch.bool
    rollout = _check_and_roll(TransformedEnv(env, ActionMask()), 100)  # 4 x 100 steps
    _assert_legal_and_hand_ends(rollout, 2)


def test_gym_wrapper_of_the_vector_env():
    """okgin's own vector env through gymnasium.make_vec and GymWrapper: the mask from infos, 4 x 100 steps.

    obs_format stays "vector": TorchRL 0.14.1's reader of same-step final observations fails on any
    Dict observation space (RuntimeError: generator raised StopIteration), Gymnasium's own
    SyncVectorEnv included."""
    venv = gymnasium.make_vec(ENV_ID, num_envs=4, vectorization_mode="vector_entry_point", opponent="random")
    env = TransformedEnv(GymWrapper(venv, categorical_action_encoding=True), ActionMask())
    assert env.batch_size == (4,) and env.observation_spec["action_mask"].dtype == torch.bool
    rollout = _check_and_roll(env, 100)
    _assert_legal_and_hand_ends(rollout, 2)


def test_pettingzoo_wrapper_of_the_aec_env():
    """The AEC env through TorchRL's PettingZooWrapper: 400 turns of both seats, the acting seat's
    action legal at every turn, hands ending on the way."""
    env = PettingZooWrapper(okgin_env.env(), use_mask=True)
    assert set(env.group_map) == {"player_0", "player_1"}
    rollout = _check_and_roll(env, 400)
    acted = 0
    for player in ("player_0", "player_1"):
        turn = rollout[player, "mask"].squeeze(-1)  # (400,) this seat acted at that step
        legal = rollout[player, "action_mask"].squeeze(-2).gather(-1, rollout[player, "action"]).squeeze(-1)
        assert legal[turn].all()
        acted += int(turn.sum())
    assert acted == 400  # one seat acts at each step
    assert int(rollout["next", "done"].sum()) >= 2


def test_example_tiny_budget(tmp_path, monkeypatch):
    """examples/torchrl_ppo.py trains 500 steps, prints both evaluation lines and writes a policy that
    ``make_agent("examples.torchrl_ppo:Agent")`` loads and plays legally from the observation alone."""
    policy = tmp_path / "policy.pt"
    cmd = [sys.executable, str(ROOT / "examples" / "torchrl_ppo.py"), "--timesteps", "500", "--frames-per-batch",
           "250", "--minibatch", "125", "--epochs", "1", "--hands", "20", "--seed", "3", "--out", str(policy)]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run(cmd, env=env, cwd=ROOT, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stdout.strip().splitlines()  # TorchRL's own log lines are on stdout too
    assert next(line for line in lines if line.startswith("iter ")).startswith("iter 1 frames 250 hands ")
    for opponent, line in zip(("random", "simple"), lines[-2:]):
        assert re.fullmatch(rf"against {opponent} over 20 hands \(10 duplicate deals\): [+-]\d+\.\d\d "
                            r"\[[+-]\d+\.\d\d, [+-]\d+\.\d\d\] points/hand \(95% CI\), .*", line), line
    assert policy.is_file()

    monkeypatch.setenv("OKGIN_TORCHRL_PPO_POLICY", str(policy))
    monkeypatch.syspath_prepend(str(ROOT))
    agent = make_agent("examples.torchrl_ppo:Agent", seed=0)
    venv = OkginVectorEnv(8, opponent="random")
    obs, info = venv.reset(seed=1)
    for _ in range(20):
        actions = agent.act(obs, info["action_mask"])
        assert actions.shape == (8,) and actions.dtype == np.int64
        assert info["action_mask"][np.arange(8), actions].all()
        obs, _, _, _, info = venv.step(actions)
