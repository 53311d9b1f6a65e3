"""Tianshou 2.0.1 on its own PettingZoo path over okgin's AEC env, unchanged (issue 34), and
examples/tianshou_ppo.py (its Gymnasium path) at a tiny budget.

The path: ``tianshou.env.PettingZooEnv(okgin_env.env())`` in a ``DummyVectorEnv``, a
``MultiAgentOffPolicyAlgorithm`` (a masked DQN seat and Tianshou's masked random seat), a
``Collector`` into a ``VectorReplayBuffer``. Before infos were fixed-shape this failed at the first
hand end (``ValueError: shape mismatch``: ragged lists in ``info["hand_result"]``).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("tianshou", reason="Tianshou is not installed (pip install -e \".[integrations]\")")

import torch  # noqa: E402
from support import ROOT, assert_plays_legally, load_example_agent  # noqa: E402
from tianshou.algorithm import (  # noqa: E402
    DQN,
    MARLRandomDiscreteMaskedOffPolicyAlgorithm,
    MultiAgentOffPolicyAlgorithm,
)
from tianshou.algorithm.modelfree.dqn import DiscreteQLearningPolicy  # noqa: E402
from tianshou.algorithm.optim import AdamOptimizerFactory  # noqa: E402
from tianshou.data import Collector, CollectStats, VectorReplayBuffer  # noqa: E402
from tianshou.env import DummyVectorEnv, PettingZooEnv  # noqa: E402
from tianshou.utils.net.common import Net  # noqa: E402
from tianshou.utils.torch_utils import policy_within_training_step  # noqa: E402

import okgin_env  # noqa: E402
from okgin_env.game.cards import NUM_CARDS  # noqa: E402

pytestmark = pytest.mark.integrations

REWARD_SCALE = 0.02  #: the AEC env's default ``reward_scale``


def _algorithm(env: PettingZooEnv) -> tuple[MultiAgentOffPolicyAlgorithm, DQN]:
    """Tianshou's tic-tac-toe setup: a masked DQN for player_0, the masked random policy for player_1."""
    net = Net(state_shape=env.observation_space["observation"].shape, action_shape=env.action_space.n,
              hidden_sizes=[32])
    policy = DiscreteQLearningPolicy(model=net, action_space=env.action_space, eps_training=0.2)
    dqn = DQN(policy=policy, optim=AdamOptimizerFactory(lr=1e-3), gamma=1.0, n_step_return_horizon=3,
              target_update_freq=10)
    random_seat = MARLRandomDiscreteMaskedOffPolicyAlgorithm(action_space=env.action_space)
    return MultiAgentOffPolicyAlgorithm(algorithms=[dqn, random_seat], env=env), dqn


def test_collect_3000_steps_across_hand_ends_and_update():
    """3,000 steps of 4 envs into a VectorReplayBuffer, many hands ending on the way: every action
    legal, the hand result stacked at each hand end with the rewards it explains, then DQN updates."""
    np.random.seed(0)
    torch.manual_seed(0)
    envs = DummyVectorEnv([lambda: PettingZooEnv(okgin_env.env()) for _ in range(4)])
    envs.seed(0)
    algorithm, dqn = _algorithm(PettingZooEnv(okgin_env.env()))
    collector = Collector[CollectStats](algorithm, envs, VectorReplayBuffer(4000, 4), exploration_noise=True)
    collector.reset()
    stats = collector.collect(n_step=3000)
    buf = collector.buffer
    assert stats.n_collected_steps == 3000 and len(buf) == 3000
    assert stats.n_collected_episodes >= 10, "hands must end inside the collect"

    data = buf[buf.sample_indices(0)]  # every stored row (sample size 0: all of them)
    assert set(np.unique(data.obs.agent_id)) == {"player_0", "player_1"}
    assert data.obs.obs.shape == (3000, okgin_env.OBS_SIZE) and data.obs.mask.shape == (3000, okgin_env.NUM_ACTIONS)
    assert data.obs.mask[np.arange(3000), data.act].all(), "an illegal action was taken"

    ends = np.flatnonzero(data.terminated)
    assert len(ends) >= 10 and not data.truncated.any()
    result = data.info.hand_result  # fixed-shape arrays, stacked over all 3000 rows
    assert result.points.shape == (3000, 2) and result.meld_id.shape == (3000, NUM_CARDS)
    assert result.hands.shape == (3000, 2, NUM_CARDS)
    assert (result.winner[ends][result.void[ends]] == -1).all()

    before = [p.detach().clone() for p in dqn.policy.model.parameters()]
    with policy_within_training_step(algorithm.policy):
        losses = [algorithm.update(sample_size=64, buffer=buf).get_loss_stats_dict()["player_0/loss"]
                  for _ in range(5)]
    assert np.isfinite(losses).all()
    assert any(not torch.equal(a, b) for a, b in zip(before, dqn.policy.model.parameters())), "DQN did not learn"


def test_example_runs_at_a_tiny_budget(tmp_path):
    """examples/tianshou_ppo.py end to end in seconds: it prints its evaluation lines and saves a
    policy that ``make_agent("examples.tianshou_ppo:Agent")`` loads and plays legal actions with."""
    policy = tmp_path / "policy.pt"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    cmd = [sys.executable, str(ROOT / "examples" / "tianshou_ppo.py"), "--timesteps", "512", "--epochs", "1",
           "--rollout", "256", "--batch", "64", "--repeat", "1", "--envs", "4", "--hands", "20",
           "--probe-hands", "10", "--hidden", "32", "--seed", "3", "--out", str(policy)]
    done = subprocess.run(cmd, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stdout.strip().splitlines()
    assert re.match(r"epoch +1 +env steps +512 .* greedy vs random +[+-]\d+\.\d\d points/hand \(10 hands\)$",
                    lines[0]), lines[0]
    number = r"[+-]\d+\.\d\d"
    for opponent, line in zip(("random", "simple"), lines[-2:]):
        assert re.fullmatch(rf"against {opponent} over 20 hands \(10 duplicate deals\): {number} \[{number}, "
                            rf"{number}\] points/hand \(95% CI\), hand win rate \d\.\d{{3}}, \d+% void", line), line

    assert_plays_legally(load_example_agent("examples.tianshou_ppo:Agent", "OKGIN_TIANSHOU_PPO_POLICY", policy))
    with pytest.raises(FileNotFoundError, match="OKGIN_TIANSHOU_PPO_POLICY"):
        load_example_agent("examples.tianshou_ppo:Agent", "OKGIN_TIANSHOU_PPO_POLICY", tmp_path / "missing.pt")
    (tmp_path / "notes.pt").write_text("not a policy")
    with pytest.raises(ValueError, match=r"is not a policy saved by examples/tianshou_ppo.py \(UnpicklingError"):
        load_example_agent("examples.tianshou_ppo:Agent", "OKGIN_TIANSHOU_PPO_POLICY", tmp_path / "notes.pt")


def _gin_deal() -> list[str]:
    """A deck (``deck[0]`` to the non-dealer, dealt alternately) that deals each player a ten-card
    run, spades to the non-dealer and hearts to the dealer: both can knock (go gin) at their first
    discard, so random play ends most hands by a knock within a few decisions."""
    ranks = "A23456789T"
    deal = [card for r in ranks for card in (r + "s", r + "h")]
    rest = [r + s for s in "shdc" for r in "A23456789TJQK" if r + s not in deal]
    return deal + rest  # the upcard (deck[20]) is the first of the rest: Js, knock limit 10


def test_rewards_at_decided_hand_ends_are_the_points():
    """Hands that end by a knock: Tianshou's reward vector is each seat's points minus the other's
    (times the env's reward_scale; zero-sum without shaping), as ``info["hand_result"]`` shows them."""
    np.random.seed(1)
    envs = DummyVectorEnv([lambda: PettingZooEnv(okgin_env.env()) for _ in range(4)])
    algorithm, _ = _algorithm(PettingZooEnv(okgin_env.env()))
    collector = Collector[CollectStats](algorithm, envs, VectorReplayBuffer(1000, 4), exploration_noise=True)
    replay = {"options": {"deck": _gin_deal(), "dealer": 1}}  # Tianshou passes these to every reset
    collector.reset(gym_reset_kwargs=replay)
    collector.collect(n_step=400, gym_reset_kwargs=replay)
    data = collector.buffer[collector.buffer.sample_indices(0)]
    ends = np.flatnonzero(data.terminated)
    result = data.info.hand_result
    decided = ends[~result.void[ends]]
    assert len(decided) >= 5, "the gin deal should end hands by knocks"
    assert (result.knocker[decided] >= 0).all() and (result.winner[decided] >= 0).all()
    points = result.points[decided].astype(np.float64)
    assert (points.sum(axis=1) > 0).all()
    np.testing.assert_allclose(data.rew[decided], (points - points[:, ::-1]) * REWARD_SCALE, atol=1e-6)
