"""Tianshou DQN on okgin's PettingZoo AEC env, unchanged, against a random seat, then okgin's evaluation.

    python examples/tianshou_dqn.py --timesteps 80000 --seed 0

Tianshou's own multi-agent path (as in its tic-tac-toe example), nothing of our own around the env:

* ``PettingZooEnv(okgin_env.env(...))``: Tianshou's wrapper reads the AEC observation's
  ``observation`` / ``action_mask`` into its ``obs`` / ``mask``; ``DummyVectorEnv`` of
  ``--envs`` of them.
* ``MultiAgentOffPolicyAlgorithm`` with a ``DQN`` (masked: illegal actions never win the argmax,
  exploration draws legal actions only) for ``player_0`` and Tianshou's
  ``MARLRandomDiscreteMaskedOffPolicyAlgorithm`` for ``player_1``; a ``Collector`` into a
  ``VectorReplayBuffer``; Tianshou's off-policy trainer (``create_trainer``, then its epochs one
  by one: ``run_training`` with a log line per epoch).

Choices:

* ``n_step_return_horizon=4`` (``--n-step``): Tianshou's multi-agent path keeps both seats'
  transitions interleaved in one buffer, and an n-step target sums the learner's reward column
  over the next n transitions, then bootstraps on the observation after them. In okgin a turn is
  two decisions of one seat (draw, then discard), so four transitions on is the learner's own
  next-but-one decision (99.7% of them in random play; only the opening pass of a hand where
  both pass lands on the other seat), and the target is a 2-step Q-learning target over the
  learner's own decisions. With n = 1 (Tianshou's default) or 2 the bootstrap would read the
  random seat's observation, Q of the wrong player.
* ``gamma=1``: a hand's only reward is its zero-sum points at the end (discounting would just
  prefer quick knocks to bigger wins), and the ``deadwood_shaping=0.5`` terms ``phi(s') - phi(s)``
  telescope (leave the best policy unchanged) only undiscounted. The shaping is what gives DQN a
  signal early: without it a fresh policy almost never knocks, nearly every hand is void (random
  against random: all of them) and every target is 0.
* ``features="outs"``: the env appends okgin_env.features' columns (861 floats in all), which
  speeds learning a lot; the agent below recomputes them from the observation alone.
* The learner always sits as ``player_0``; the dealer alternates at random between hands, so it
  learns both seats of the deal.

At the end the Q network, saved under ``--out`` (default
``runs/examples/tianshou_dqn/policy.pt``), is loaded back as ``Agent`` (an okgin plug-in agent:
greedy over the legal actions, on the observation and mask alone) and plays ``--hands`` hands
against ``random`` and ``simple`` with okgin's evaluation (``okgin.evaluate.play_match``: duplicate
deals, every deal from both seats, 95% CIs over deal pairs, the deals fixed by ``--eval-seed``).
The same agent plays in okgin's programs::

    OKGIN_TIANSHOU_DQN_POLICY=runs/examples/tianshou_dqn/policy.pt python evaluate.py \\
        --agents examples.tianshou_dqn:Agent random

Measured at the default budget (the command above, Tianshou 2.0.1, CPU torch 2.13): 80,896 env
steps (both seats; about half are the learner's) in about 13 minutes of CPU time on one core (48
minutes wall on the shared 2-core machine at load 5-9). It falls short of the +20 points/hand
target: against ``random`` +0.19 [-0.15, +0.53] points/hand (95% CI, 1000 hands, 99% void),
against ``simple`` -47.83 [-49.20, -46.46]. The greedy policy has not learnt to knock at this
budget (200-hand probes stay within +-2 at every epoch), where examples/sb3_maskable_ppo.py
reaches about +30 (PPO, 100k learner steps). Less exploration (``--eps-start 0.1 --eps-end
0.02``) did no better: +0.56 [+0.17, +0.96] against ``random``.
"""

from __future__ import annotations

import argparse
import logging
import os
import time
from pathlib import Path

import numpy as np
import torch

import okgin_agents
import okgin_env
from okgin.evaluate import MatchResult, evaluate_against, play_match
from okgin_env.features import FEATURES, learner_input

DEFAULT_POLICY = Path("runs/examples/tianshou_dqn/policy.pt")
POLICY_ENV_VAR = "OKGIN_TIANSHOU_DQN_POLICY"
LEARNER = 0  #: the learner's seat index (``player_0``); the random policy plays the other


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--timesteps", type=int, default=80_000, help="env steps (decisions of both seats) of training")
    p.add_argument("--hands", type=int, default=1000,
                   help="hands of the final evaluation against each opponent (duplicate deals: rounded up to even)")
    p.add_argument("--seed", type=int, default=0, help="seeds torch, numpy (exploration) and the training envs")
    p.add_argument("--eval-seed", type=int, default=100, help="seeds the evaluation deals (the same for every run)")
    p.add_argument("--eval-opponents", nargs="+", default=["random", "simple"], help="agent specs to evaluate against")
    p.add_argument("--probe-hands", type=int, default=200,
                   help="hands of the greedy policy against random after each epoch (the learning curve)")
    p.add_argument("--out", type=Path, default=DEFAULT_POLICY, help="where the trained Q network is saved")
    p.add_argument("--envs", type=int, default=16, help="okgin envs in the DummyVectorEnv")
    p.add_argument("--features", choices=FEATURES, default="outs", help="the env's features option (the policy's input)")
    p.add_argument("--deadwood-shaping", type=float, default=0.5, help="shaping coefficient (0: off)")
    p.add_argument("--n-step", type=int, default=4,
                   help="DQN n-step horizon in env steps (4: the learner's own next-but-one decision)")
    p.add_argument("--epochs", type=int, default=8, help="trainer epochs (one log line each)")
    p.add_argument("--collect-steps", type=int, default=128,
                   help="env steps collected per training step (x --updates-per-step < 20: Tianshou 2.0.1 shows a "
                        "progress bar for 20 or more gradient steps whatever show_progress says)")
    p.add_argument("--updates-per-step", type=float, default=0.125, help="gradient steps per collected env step")
    p.add_argument("--batch", type=int, default=256, help="transitions per gradient step (both seats' rows)")
    p.add_argument("--buffer", type=int, default=50_000, help="replay buffer size (transitions)")
    p.add_argument("--lr", type=float, default=3e-4)
    p.add_argument("--eps-start", type=float, default=0.5, help="exploration rate at the start")
    p.add_argument("--eps-end", type=float, default=0.05, help="exploration rate from half the budget on")
    p.add_argument("--target-update", type=int, default=200, help="gradient steps between target-network copies")
    p.add_argument("--hidden", default="256,256", help="hidden layer sizes of the Q network")
    p.add_argument("--torch-threads", type=int, default=1,
                   help="torch CPU threads (1: a small MLP gains nothing from more, and they fight the envs)")
    return p.parse_args(argv)


def make_env(args: argparse.Namespace):
    """One training env: Tianshou's PettingZoo wrapper over okgin's AEC env (hand episodes)."""
    from tianshou.env import PettingZooEnv

    return PettingZooEnv(okgin_env.env(deadwood_shaping=args.deadwood_shaping, features=args.features))


def q_network(obs_size: int, hidden: list[int]) -> torch.nn.Module:
    """Tianshou's MLP ``Net``: (B, obs_size) -> (B, 107) action values."""
    from tianshou.utils.net.common import Net

    return Net(state_shape=(obs_size,), action_shape=okgin_env.NUM_ACTIONS, hidden_sizes=hidden)


def build_algorithm(args: argparse.Namespace, env):
    """The learner's DQN for ``player_0`` and Tianshou's masked random policy for ``player_1``."""
    from tianshou.algorithm import DQN, MARLRandomDiscreteMaskedOffPolicyAlgorithm, MultiAgentOffPolicyAlgorithm
    from tianshou.algorithm.modelfree.dqn import DiscreteQLearningPolicy
    from tianshou.algorithm.optim import AdamOptimizerFactory

    net = q_network(env.observation_space["observation"].shape[0], [int(n) for n in args.hidden.split(",")])
    policy = DiscreteQLearningPolicy(model=net, action_space=env.action_space, eps_training=args.eps_start,
                                     eps_inference=0.0)
    dqn = DQN(policy=policy, optim=AdamOptimizerFactory(lr=args.lr), gamma=1.0, n_step_return_horizon=args.n_step,
              target_update_freq=args.target_update)
    seats = [dqn, MARLRandomDiscreteMaskedOffPolicyAlgorithm(action_space=env.action_space)]
    return MultiAgentOffPolicyAlgorithm(algorithms=seats, env=env), dqn


def train(args: argparse.Namespace) -> tuple[torch.nn.Module, int]:
    """Tianshou's off-policy training for ``--timesteps`` env steps; returns the Q network and the steps."""
    from tianshou.data import Collector, CollectStats, VectorReplayBuffer
    from tianshou.env import DummyVectorEnv
    from tianshou.trainer import OffPolicyTrainerParams

    # the collector's returns are (episodes, 2) for two agents; Tianshou warns about it at every collect
    logging.getLogger("tianshou.data.stats").setLevel(logging.ERROR)
    np.random.seed(args.seed)  # Tianshou's epsilon-greedy and random seat draw from numpy's global generator
    torch.manual_seed(args.seed)
    envs = DummyVectorEnv([lambda: make_env(args) for _ in range(args.envs)])
    envs.seed(args.seed)
    algorithm, dqn = build_algorithm(args, make_env(args))
    collector = Collector[CollectStats](algorithm, envs, VectorReplayBuffer(args.buffer, args.envs),
                                        exploration_noise=True)
    collector.reset()
    epoch_steps = max(args.collect_steps, args.timesteps // args.epochs)
    start = time.time()

    def anneal(epoch: int, env_step: int) -> None:
        """Linear exploration decay over the first half of the budget, then ``--eps-end``."""
        eps = args.eps_start + min(1.0, env_step / max(1, args.timesteps // 2)) * (args.eps_end - args.eps_start)
        dqn.policy.set_eps_training(eps)
        # Tianshou 2.0.1's MultiAgentPolicy does not hand the trainer's "within a training step" flag
        # to its seats' policies, so they collect with eps_inference (its tic-tac-toe example too:
        # eps_test=0.05 is its exploration). Our evaluation reads the network, not this policy.
        dqn.policy.set_eps_inference(eps)

    def learner_return(rewards: np.ndarray) -> np.ndarray:
        """The trainer's episode return: the learner's column (shaped reward)."""
        return rewards[:, LEARNER]

    trainer = algorithm.create_trainer(OffPolicyTrainerParams(
        training_collector=collector, max_epochs=args.epochs, epoch_num_steps=epoch_steps,
        collection_step_num_env_steps=args.collect_steps, batch_size=args.batch,
        update_step_num_gradient_steps_per_sample=args.updates_per_step, training_fn=anneal,
        multi_agent_return_reduction=learner_return, show_progress=False, verbose=False))
    trainer.reset()
    for _ in range(args.epochs):  # trainer.run(), with one line per epoch
        stats = trainer.execute_epoch()
        info = stats.info_stat
        loss = stats.training_stat.get_loss_stats_dict() if stats.training_stat is not None else {}
        probe = ""
        if args.probe_hands > 0:  # the learning curve: okgin's evaluation of the greedy policy, a few hands
            r = evaluate(GreedyQ(dqn.policy.model, args.features), "random", args.probe_hands, seed=args.seed + 1)
            probe = f"  greedy vs random {r.points_per_hand:+6.2f} points/hand ({r.hands} hands)"
        print(f"epoch {stats.epoch:>3d}  env steps {info.train_step:>8d}  hands {info.train_episode:>6d}  "
              f"{time.time() - start:6.0f} s  eps {dqn.policy.eps_inference:.2f}  "
              f"loss {loss.get(f'player_{LEARNER}/loss', float('nan')):.4f}{probe}", flush=True)
    return dqn.policy.model, int(info.train_step)


def save(net: torch.nn.Module, args: argparse.Namespace, path: Path) -> None:
    """The Q network's weights with what rebuilds it (the features option, the hidden sizes)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    torch.save({"state_dict": net.state_dict(), "features": args.features,
                "hidden": [int(n) for n in args.hidden.split(",")]}, path)


class GreedyQ:
    """A Q network as an okgin agent: greedy over the legal actions, on the inputs it was trained on
    (``learner_input(observations, features)``: the observation alone, or with okgin_env.features' columns)."""

    def __init__(self, net: torch.nn.Module, features: str, name: str = "tianshou_dqn") -> None:
        self.net, self.features, self.name = net, features, name

    def act(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        """(B, OBS_SIZE) observations and (B, 107) legal-action masks -> (B,) int64 greedy legal actions."""
        obs = torch.as_tensor(learner_input(np.asarray(observations, np.float32), self.features))
        with torch.no_grad():
            q, _ = self.net(obs)
        return np.where(np.asarray(action_masks, bool), q.numpy(), -np.inf).argmax(axis=1).astype(np.int64)


class Agent(GreedyQ):
    """The trained Q network as an okgin plug-in agent (``examples.tianshou_dqn:Agent``).

    Loads the file saved by this script from ``$OKGIN_TIANSHOU_DQN_POLICY`` or
    ``runs/examples/tianshou_dqn/policy.pt``. Deterministic, so ``seed`` is accepted and unused.
    """

    def __init__(self, seed: int | None = None, path: str | os.PathLike | None = None, name: str = "tianshou_dqn"):
        path = Path(path or os.environ.get(POLICY_ENV_VAR) or DEFAULT_POLICY)
        if not path.is_file():
            raise FileNotFoundError(f"no trained Tianshou policy at {str(path)!r}: run examples/tianshou_dqn.py "
                                    f"first, or set {POLICY_ENV_VAR} to the policy.pt it saved")
        saved = torch.load(path, map_location="cpu", weights_only=True)
        width = learner_input(np.zeros((1, okgin_env.OBS_SIZE), np.float32), saved["features"]).shape[1]
        net = q_network(width, saved["hidden"])
        net.load_state_dict(saved["state_dict"])
        net.eval()
        super().__init__(net, saved["features"], name)


def evaluate(agent: GreedyQ, opponent: str, hands: int, seed: int) -> MatchResult:
    """The learner against ``opponent`` over ``hands`` hands on duplicate deals from ``seed``."""
    return play_match(agent, okgin_agents.make(opponent, seed=seed), hands, seed=seed)


def main(argv: list[str] | None = None) -> float:
    """Train, save, evaluate, print; returns the points/hand against the first evaluation opponent."""
    args = parse_args(argv)
    torch.set_num_threads(args.torch_threads)
    start = time.time()
    net, steps = train(args)
    save(net, args, args.out)
    print(f"trained {steps} env steps (features={args.features}, seed {args.seed}) in {time.time() - start:.0f} s; "
          f"policy saved to {args.out}")

    results = evaluate_against(Agent(path=args.out), args.eval_opponents, args.hands, seed=args.eval_seed)
    return results[0].points_per_hand


if __name__ == "__main__":
    main()
