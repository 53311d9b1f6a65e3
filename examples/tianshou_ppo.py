"""Tianshou PPO on okgin's Gymnasium env, unchanged, against ``random``, then okgin's evaluation.

    python examples/tianshou_ppo.py --timesteps 200000 --seed 0

Tianshou's own single-agent path, nothing of our own around the env:

* ``gymnasium.make("okgin/OklahomaGin-v0", obs_format="dict", ...)``: one learner against a fixed
  opponent (``--opponent``, played inside the env), hand episodes, the legal-action mask in the
  observation (``obs["action_mask"]``, aligned with the observation it belongs to; at the end of a
  hand only the placeholder action 106 is legal, so a masked sampler always has a choice).
  ``DummyVectorEnv`` of ``--envs`` of them.
* Tianshou's ``PPO`` with a ``DiscreteActorPolicy``; its actor is a small MLP whose illegal
  logits are set to -1e8 from the mask in the observation (Tianshou hands the actor the whole
  observation), so the policy never samples an illegal action. A ``Collector`` into a
  ``VectorReplayBuffer`` and Tianshou's on-policy trainer (``create_trainer``, then its epochs one
  by one: ``execute_epoch``, with a log line per epoch).

Choices (the settings of ``examples/sb3_maskable_ppo.py``, so the two libraries can be compared):

* ``gamma=1``: a hand's only reward is its points at the end, and the ``deadwood_shaping=0.5``
  terms ``phi(s') - phi(s)`` telescope (leave the best policy unchanged) only undiscounted. The
  shaping gives a signal early: without it a fresh policy almost never knocks, nearly every hand
  is void and scores 0 (docs/conformance.md, "Deadwood shaping").
* ``gae_lambda=0.8``, 8 envs x 256 steps per update, minibatches of 256, 10 passes (the SB3
  example's defaults); Tanh MLPs of 128 x 128 for the actor and the critic with orthogonal
  initialisation, as SB3's ``MlpPolicy`` builds them.

At the end the actor, saved under ``--out`` (default ``runs/examples/tianshou_ppo/policy.pt``), is
loaded back as ``Agent`` (an okgin plug-in agent: the most probable legal action, on the
observation and mask alone) and plays ``--hands`` hands against ``random`` and ``simple`` with
okgin's evaluation (``okgin.evaluate.evaluate_against``: duplicate deals, every deal from both
seats, 95% CIs over deal pairs, the deals fixed by ``--eval-seed``). The same agent plays in
okgin's programs::

    OKGIN_TIANSHOU_PPO_POLICY=runs/examples/tianshou_ppo/policy.pt python evaluate.py \\
        --agents examples.tianshou_ppo:Agent random

Measured at the default budget (the command above, Tianshou 2.0.1, CPU torch, 2026-12-03):
204,800 learner steps in 3.0 min on a 2-core machine, then +46.66 [+45.52, +47.81]
points/hand against ``random`` (95% CI, 2000 hands) and -24.61 [-25.52, -23.70] against
``simple``; the same lines on a second run. The table of all the library examples is in
docs/libraries.md (record: docs/figures/libraries.json). ``tests/integrations/test_tianshou.py`` runs this file at a tiny budget,
which checks that it runs, not what it learns.
"""

from __future__ import annotations

import argparse
import logging
import os
import time
from pathlib import Path
from types import SimpleNamespace

import gymnasium
import numpy as np
import okgin_agents
import torch
from torch import nn

import okgin_env
from okgin.evaluate import evaluate_against, play_match
from okgin_env.agent_specs import saved_file, unreadable_file_error
from okgin_env.features.learner import FEATURES, input_size, learner_input

ENV_ID = "okgin/OklahomaGin-v0"
DEFAULT_POLICY = Path("runs/examples/tianshou_ppo/policy.pt")
POLICY_ENV_VAR = "OKGIN_TIANSHOU_PPO_POLICY"
MASKED_LOGIT = -1e8  #: an illegal action's logit: probability 0 after the softmax


def layer_sizes(text: str) -> list[int]:
    """``--hidden``'s value, e.g. ``"128,128"`` -> [128, 128]."""
    try:
        sizes = [int(n) for n in text.split(",")]
    except ValueError:
        sizes = []
    if not sizes or min(sizes) < 1:
        raise argparse.ArgumentTypeError(f"expected layer sizes as positive integers separated by commas, "
                                         f"such as 128,128; got {text!r}")
    return sizes


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    # the examples' common flags: --timesteps, --hands, --seed, --out, --device (tests/docs/test_examples_cli.py)
    p.add_argument("--timesteps", type=int, default=200_000, help="learner steps of training")
    p.add_argument("--hands", type=int, default=2000,
                   help="hands of the final evaluation against each opponent (duplicate deals: rounded up to even)")
    p.add_argument("--seed", type=int, default=0, help="seeds torch, numpy and the training envs")
    p.add_argument("--eval-seed", type=int, default=100, help="seeds the evaluation deals (the same for every run)")
    p.add_argument("--eval-opponents", nargs="+", default=["random", "simple"], help="agent specs to evaluate against")
    p.add_argument("--opponent", default="random", help="the training opponent (agent spec), played inside the env")
    p.add_argument("--probe-hands", type=int, default=200,
                   help="hands of the greedy policy against random after each epoch (the learning curve)")
    p.add_argument("--out", type=Path, default=DEFAULT_POLICY, help="where the trained actor is saved")
    p.add_argument("--envs", type=int, default=8, help="okgin envs in the DummyVectorEnv")
    p.add_argument("--features", choices=FEATURES, default="raw", help="the env's features option (the policy's input)")
    p.add_argument("--deadwood-shaping", type=float, default=0.5, help="shaping coefficient (0: off)")
    p.add_argument("--epochs", type=int, default=10, help="trainer epochs (one log line each)")
    p.add_argument("--rollout", type=int, default=2048, help="env steps collected per PPO update (all envs)")
    p.add_argument("--batch", type=int, default=256, help="minibatch size")
    p.add_argument("--repeat", type=int, default=10, help="passes over each rollout")
    p.add_argument("--lr", type=float, default=3e-4)
    p.add_argument("--ent-coef", type=float, default=0.01, help="entropy bonus")
    p.add_argument("--gae-lambda", type=float, default=0.8)
    p.add_argument("--hidden", type=layer_sizes, default="128,128",
                   help="hidden layer sizes of the actor and of the critic")
    p.add_argument("--device", choices=["cpu"], default="cpu",
                   help="where torch runs: only the CPU path of this example exists (the GPU one is not written)")
    p.add_argument("--torch-threads", type=int, default=1,
                   help="torch CPU threads (1: small MLPs gain nothing from more, and they fight the envs)")
    return p.parse_args(argv)


def mlp(sizes: list[int], out_gain: float) -> nn.Sequential:
    """Tanh MLP with orthogonal weights (gain sqrt 2 inside, ``out_gain`` on the last layer), zero biases."""
    layers: list[nn.Module] = []
    for i, (a, b) in enumerate(zip(sizes[:-1], sizes[1:])):
        last = i == len(sizes) - 2
        lin = nn.Linear(a, b)
        nn.init.orthogonal_(lin.weight, out_gain if last else np.sqrt(2))
        nn.init.zeros_(lin.bias)
        layers += [lin] if last else [lin, nn.Tanh()]
    return nn.Sequential(*layers)


class MaskedActor(nn.Module):
    """Observation -> logits over the 107 actions, the illegal ones at ``MASKED_LOGIT``.

    Tianshou calls it with the whole observation (a ``Batch`` with ``observation`` and
    ``action_mask`` for the env's ``obs_format="dict"``), so the mask is the one of that very state.
    """

    def __init__(self, obs_size: int, hidden: list[int]) -> None:
        super().__init__()
        self.net = mlp([obs_size, *hidden, okgin_env.NUM_ACTIONS], out_gain=0.01)

    def forward(self, obs, state=None, info=None) -> tuple[torch.Tensor, None]:
        logits = self.net(torch.as_tensor(obs.observation, dtype=torch.float32))
        legal = torch.as_tensor(obs.action_mask, dtype=torch.bool)
        return logits.masked_fill(~legal, MASKED_LOGIT), state


class Critic(nn.Module):
    """Observation -> value, (B, 1)."""

    def __init__(self, obs_size: int, hidden: list[int]) -> None:
        super().__init__()
        self.net = mlp([obs_size, *hidden, 1], out_gain=1.0)

    def forward(self, obs, state=None, info=None) -> torch.Tensor:
        return self.net(torch.as_tensor(obs.observation, dtype=torch.float32))


def make_env(args: argparse.Namespace) -> gymnasium.Env:
    """One training env: okgin's Gymnasium env with the mask in the observation."""
    return gymnasium.make(ENV_ID, opponent=args.opponent, obs_format="dict",
                          deadwood_shaping=args.deadwood_shaping, features=args.features)


def train(args: argparse.Namespace) -> tuple[MaskedActor, int]:
    """Tianshou's on-policy training for ``--timesteps`` learner steps; returns the actor and the steps."""
    from tianshou.algorithm import PPO
    from tianshou.algorithm.modelfree.reinforce import DiscreteActorPolicy
    from tianshou.algorithm.optim import AdamOptimizerFactory
    from tianshou.data import Collector, CollectStats, VectorReplayBuffer
    from tianshou.env import DummyVectorEnv
    from tianshou.trainer import OnPolicyTrainerParams

    logging.getLogger("tianshou").setLevel(logging.WARNING)
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    envs = DummyVectorEnv([lambda: make_env(args) for _ in range(args.envs)])
    envs.seed(args.seed)
    one = make_env(args)  # for the spaces
    obs_size, action_space = one.observation_space["observation"].shape[0], one.action_space
    one.close()
    actor = MaskedActor(obs_size, args.hidden)
    policy = DiscreteActorPolicy(actor=actor, action_space=action_space, deterministic_eval=True)
    ppo = PPO(policy=policy, critic=Critic(obs_size, args.hidden), optim=AdamOptimizerFactory(lr=args.lr),
              gamma=1.0, gae_lambda=args.gae_lambda, ent_coef=args.ent_coef, vf_coef=0.5, max_grad_norm=0.5,
              eps_clip=0.2, advantage_normalization=True, max_batchsize=args.rollout)
    collector = Collector[CollectStats](ppo, envs, VectorReplayBuffer(args.rollout, args.envs))
    collector.reset()
    epoch_steps = max(args.rollout, args.timesteps // args.epochs)
    trainer = ppo.create_trainer(OnPolicyTrainerParams(
        training_collector=collector, max_epochs=args.epochs, epoch_num_steps=epoch_steps,
        collection_step_num_env_steps=args.rollout, batch_size=args.batch, update_step_num_repetitions=args.repeat,
        show_progress=False, verbose=False))
    trainer.reset()
    start = time.time()
    for _ in range(args.epochs):  # trainer.run(), with one line per epoch
        stats = trainer.execute_epoch()
        info = stats.info_stat
        loss = stats.training_stat.get_loss_stats_dict() if stats.training_stat is not None else {}
        curve = ""
        if args.probe_hands > 0:  # the learning curve: okgin's evaluation of the greedy policy, a few hands
            r = play_match(Greedy(actor, args.features), okgin_agents.make("random", seed=args.seed + 1),
                           args.probe_hands, seed=args.seed + 1)
            curve = f"  greedy vs random {r.points_per_hand:+6.2f} points/hand ({r.hands} hands)"
        print(f"epoch {stats.epoch:>3d}  env steps {info.train_step:>8d}  hands {info.train_episode:>6d}  "
              f"{time.time() - start:6.0f} s  loss {loss.get('loss', float('nan')):.4f}{curve}", flush=True)
    return actor, int(info.train_step)


def save(actor: MaskedActor, args: argparse.Namespace, path: Path) -> None:
    """The actor's weights with what rebuilds it (the features option, the hidden sizes)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    torch.save({"state_dict": actor.state_dict(), "features": args.features, "hidden": args.hidden}, path)


class Greedy:
    """An actor as an okgin agent: the most probable legal action, on the inputs it was trained on
    (``learner_input(observations, features)``: the observation alone, or with okgin_env.features.learner' columns)."""

    def __init__(self, actor: MaskedActor, features: str, name: str = "tianshou_ppo") -> None:
        self.actor, self.features, self.name = actor, features, name

    def act(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        """(B, OBS_SIZE) observations and (B, 107) legal-action masks -> (B,) int64 legal actions."""
        # the actor reads only these two fields, so playing needs no Tianshou ``Batch``
        obs = SimpleNamespace(observation=learner_input(np.asarray(observations, np.float32), self.features),
                              action_mask=np.asarray(action_masks, bool))
        with torch.no_grad():
            logits, _ = self.actor(obs)
        return logits.argmax(dim=1).numpy().astype(np.int64)


class Agent(Greedy):
    """The trained actor as an okgin plug-in agent (``examples.tianshou_ppo:Agent``).

    Loads the file saved by this script from ``$OKGIN_TIANSHOU_PPO_POLICY`` or
    ``runs/examples/tianshou_ppo/policy.pt``. Deterministic, so ``seed`` is accepted and unused.
    """

    def __init__(self, seed: int | None = None, path: str | os.PathLike | None = None, name: str = "tianshou_ppo"):
        path = saved_file(path, POLICY_ENV_VAR, DEFAULT_POLICY, "examples/tianshou_ppo.py")
        try:
            saved = torch.load(path, map_location="cpu", weights_only=True)
            actor = MaskedActor(input_size(saved["features"]), saved["hidden"])
            actor.load_state_dict(saved["state_dict"])
        except Exception as e:  # torch.load and load_state_dict raise many kinds on a file that is not ours
            raise unreadable_file_error(path, "a policy saved by examples/tianshou_ppo.py", e) from None
        actor.eval()
        super().__init__(actor, saved["features"], name)


def main(argv: list[str] | None = None) -> float:
    """Train, save, evaluate, print; returns the points/hand against the first evaluation opponent."""
    args = parse_args(argv)
    torch.set_num_threads(args.torch_threads)
    start = time.time()
    actor, steps = train(args)
    save(actor, args, args.out)
    print(f"trained {steps} learner steps (features={args.features}, seed {args.seed}) in {time.time() - start:.0f} s; "
          f"policy saved to {args.out}")
    results = evaluate_against(Agent(path=args.out), args.eval_opponents, args.hands, seed=args.eval_seed)
    return results[0].points_per_hand


if __name__ == "__main__":
    main()
