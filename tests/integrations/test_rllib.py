"""okgin on RLlib's own multi-agent path (issue 34): ``PettingZooEnv(okgin_env.env(obs_format="rllib"))``
with RLlib's stock ``ActionMaskingTorchRLModule``, both seats one shared policy, 2 Ray env-runner
processes; RLlib's ``render()``; and examples/rllib_selfplay.py at a tiny budget."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from support import ROOT, assert_plays_legally, load_example_agent

pytestmark = pytest.mark.integrations

ray = pytest.importorskip("ray", reason="RLlib is not installed (pip install -e '.[integrations]' in the checkout)")
pytest.importorskip("ray.rllib", reason="RLlib is not installed (pip install -e '.[integrations]' in the checkout)")
pytest.importorskip("torch", reason="RLlib's torch modules need torch")

from ray.rllib.env.wrappers.pettingzoo_env import PettingZooEnv

import okgin_env


def test_two_train_calls_with_two_env_runners_and_one_shared_policy():
    """The documented config builds, and two ``train()`` calls sample with 2 remote env runners into the
    one ``shared`` module, which both seats play (self-play), with masked actions only (no illegal ends)."""
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec
    from ray.rllib.examples.rl_modules.classes.action_masking_rlm import (
        ActionMaskingTorchRLModule,
    )
    from ray.tune.registry import register_env

    register_env("okgin", lambda cfg: PettingZooEnv(okgin_env.env(obs_format="rllib", **cfg)))
    config = (
        PPOConfig()
        .environment("okgin", env_config={"deadwood_shaping": 0.5})
        .multi_agent(policies={"shared"}, policy_mapping_fn=lambda agent_id, episode, **kwargs: "shared")
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs={
            "shared": RLModuleSpec(module_class=ActionMaskingTorchRLModule, model_config={"fcnet_hiddens": [16]})}))
        # sample_timeout_s: a runner that starts slowly (numba compiling, a loaded CI machine) must not
        # leave a train() call without samples (its result then has no "env_runners" metrics)
        .env_runners(num_env_runners=2, rollout_fragment_length=100, sample_timeout_s=600)
        .training(train_batch_size_per_learner=200, minibatch_size=100, num_epochs=1, gamma=1.0)
        .debugging(seed=0)
    )
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        algo = config.build_algo()
        assert algo.env_runner_group.num_healthy_remote_workers() == 2
        steps = []
        for _ in range(2):
            result = algo.train()
            steps.append(result["env_runners"]["num_env_steps_sampled_lifetime"])
            assert set(result["learners"]) - {"__all_modules__"} == {"shared"}
            assert np.isfinite(result["learners"]["shared"]["total_loss"])
        assert 200 <= steps[0] < steps[1]
        per_agent = result["env_runners"]["num_agent_steps_sampled_lifetime"]
        assert set(per_agent) == {"player_0", "player_1"} and min(per_agent.values()) > 0
        assert set(result["env_runners"]["num_module_steps_sampled_lifetime"]) == {"shared"}
        algo.stop()
    finally:
        ray.shutdown()


@pytest.mark.parametrize("mode", ["ansi", "rgb_array"])
def test_render_through_rllib_wrapper(mode):
    """RLlib's ``PettingZooEnv.render()`` passes its ``render_mode`` to the env's ``render``."""
    env = PettingZooEnv(okgin_env.env(render_mode=mode, obs_format="rllib"))
    obs, _ = env.reset(seed=3)
    (agent, first), = obs.items()
    assert set(first) == {"observations", "action_mask"}
    frame = env.render()
    if mode == "ansi":
        assert isinstance(frame, str) and frame.strip()
    else:
        assert isinstance(frame, np.ndarray) and frame.dtype == np.uint8 and frame.ndim == 3 and frame.shape[2] == 3
    env.step({agent: int(np.flatnonzero(first["action_mask"])[0])})
    assert type(env.render()) is type(frame)
    env.close()


def test_example_tiny_budget(tmp_path):
    """examples/rllib_selfplay.py trains a few hundred steps with 2 env runners, saves the module, prints
    okgin's evaluation against random and simple, and the saved policy loads as a plug-in agent."""
    policy = tmp_path / "policy"
    cmd = [sys.executable, "examples/rllib_selfplay.py", "--timesteps", "300", "--hands", "20",
           "--train-batch", "200", "--minibatch", "100", "--epochs", "1", "--envs-per-runner", "1",
           "--hidden", "16", "--out", str(policy)]
    proc = subprocess.run(cmd, check=False, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    lines = proc.stdout.splitlines()
    for opponent in ("random", "simple"):
        line = next((ln for ln in lines if ln.startswith(f"against {opponent} over 20 hands")), None)
        assert line is not None and "points/hand (95% CI)" in line, proc.stdout[-2000:]
    assert policy.is_dir()
    assert_plays_legally(load_example_agent("examples.rllib_selfplay:Agent", "OKGIN_RLLIB_SELFPLAY_POLICY", policy))
