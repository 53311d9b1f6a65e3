"""TorchRL's masked PPO on the registered Gymnasium id, against the built-in ``random`` bot.

    python examples/torchrl_ppo.py --timesteps 100000 --hands 2000 --seed 0

TorchRL's own path, as in its PPO tutorial, on okgin unchanged: ``GymEnv("okgin/OklahomaGin-v0",
opponent="random", obs_format="dict", ...)`` gives the observation and the legal-action mask as
two entries of the tensordict; ``DTypeCastTransform`` makes the mask bool and ``ActionMask``
puts it on the action spec; a ``ProbabilisticActor`` samples from ``MaskedCategorical(logits,
mask)``; a ``ValueOperator`` is the critic; a ``Collector`` (TorchRL's synchronous collector,
``SyncDataCollector`` before 0.14) gathers ``--frames-per-batch`` steps; ``GAE`` and
``ClipPPOLoss`` do the update over minibatches drawn without replacement from a ``ReplayBuffer``.
The choices that matter (the same as in ``examples/sb3_maskable_ppo.py``):

* one hand per episode, ``gamma=1``: the only reward is the hand's zero-sum points at its end;
  discounting would just prefer quick knocks to bigger wins, and the shaping terms below telescope
  (leave the best policy unchanged) only undiscounted.
* ``deadwood_shaping=0.5``: without it a fresh policy almost never knocks and sees no signal;
  with it, lowering the best reachable deadwood pays at once (the terms cancel over the hand).
* GAE lambda 0.8 (``--gae-lambda``): the advantages lean on the near shaping terms while the critic learns.
* ``--features raw`` (the observation alone): ``outs`` (861 floats, what okgin's own network reads)
  slowed the same PPO at this budget (docs/vector_env.md, "Learner features with SB3"; here too:
  no sign of knocking after 20k steps). With ``--features outs`` the plug-in ``Agent`` computes the
  columns from the plain observation (``learner_input``), as the env did in training.

At the end the trained policy is saved (``--out``, default ``runs/examples/torchrl_ppo/policy.pt``
under the repository root) and, greedy over the legal actions, plays ``--hands`` hands against
``random`` and ``simple`` with okgin's evaluation (``okgin.evaluate.play_match``: duplicate deals,
every deal from both seats, 95% CIs over deal pairs, the same deals for every run with the same
``--eval-seed``). The saved policy is an okgin plug-in agent, ``examples.torchrl_ppo:Agent``
(``OKGIN_TORCHRL_PPO_POLICY`` names another file):

    python evaluate.py --agents examples.torchrl_ppo:Agent random
    python play.py --opponent examples.torchrl_ppo:Agent

Expected at the defaults (100,000 steps, seed 0; TorchRL 0.14.1, CPU torch, one thread; measured
2026-12-03 on the shared 2-core machine at load average 6-8; record: docs/figures/libraries.json):
+30.61 [+29.25, +31.96] points/hand against ``random`` (40% void hands) and -36.79 [-37.79, -35.79]
against ``simple``, in 13.1 min. Most of the CPU time is the collection, one env stepped one
decision at a time through TorchRL's tensordicts.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import numpy as np
import torch
from tensordict.nn import TensorDictModule
from torch import nn
from torchrl.collectors import Collector
from torchrl.data import LazyTensorStorage, ReplayBuffer
from torchrl.data.replay_buffers.samplers import SamplerWithoutReplacement
from torchrl.envs import (
    ActionMask,
    Compose,
    DTypeCastTransform,
    GymEnv,
    RewardSum,
    TransformedEnv,
)
from torchrl.modules import MLP, MaskedCategorical, ProbabilisticActor, ValueOperator
from torchrl.objectives import ClipPPOLoss
from torchrl.objectives.value import GAE

import okgin_env  # noqa: F401  (registers okgin/OklahomaGin-v0)
from okgin.evaluate import evaluate_against
from okgin_env import NUM_ACTIONS
from okgin_env.agent_specs import saved_file, unreadable_file_error
from okgin_env.features.learner import FEATURES, learner_input

ENV_ID = "okgin/OklahomaGin-v0"
POLICY_ENV_VAR = "OKGIN_TORCHRL_PPO_POLICY"
DEFAULT_POLICY = Path(__file__).resolve().parents[1] / "runs" / "examples" / "torchrl_ppo" / "policy.pt"


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    # the examples' common flags: --timesteps, --hands, --seed, --out, --device (tests/docs/test_examples_cli.py)
    p.add_argument("--timesteps", type=int, default=100_000, help="learner steps of training (env frames)")
    p.add_argument("--hands", type=int, default=2000,
                   help="hands of the final evaluation against each opponent (duplicate deals: rounded up to even)")
    p.add_argument("--seed", type=int, default=0, help="seeds the network, the env and the sampling")
    p.add_argument("--eval-seed", type=int, default=100, help="seeds the evaluation deals (the same for every run)")
    p.add_argument("--opponent", default="random", help="training opponent (an okgin agent spec)")
    p.add_argument("--deadwood-shaping", type=float, default=0.5, help="shaping coefficient (0: off)")
    p.add_argument("--features", choices=FEATURES, default="raw",
                   help="the policy's input: the observation (raw), or with okgin_env.features.learner' columns (meld, outs)")
    p.add_argument("--frames-per-batch", type=int, default=2000, help="env steps collected per PPO update")
    p.add_argument("--minibatch", type=int, default=250, help="minibatch size of the update")
    p.add_argument("--epochs", type=int, default=10, help="passes over each batch (SB3's default, as in its example)")
    p.add_argument("--lr", type=float, default=3e-4, help="Adam learning rate")
    p.add_argument("--entropy-coeff", type=float, default=0.01, help="entropy bonus")
    p.add_argument("--gae-lambda", type=float, default=0.8, help="GAE lambda")
    p.add_argument("--num-cells", default="128,128", help="hidden layer sizes of the policy and value MLPs")
    p.add_argument("--out", type=Path, default=DEFAULT_POLICY, help="where the trained policy is saved")
    p.add_argument("--device", choices=["cpu"], default="cpu",
                   help="where torch runs: only the CPU path of this example exists (the GPU one is not written)")
    p.add_argument("--torch-threads", type=int, default=1,
                   help="torch CPU threads (1: a small MLP gains nothing from more, and they fight the env)")
    return p.parse_args(argv)


def policy_net(in_features: int, num_cells: list[int]) -> nn.Module:
    """The policy's MLP: observation (plus features) -> one logit per action."""
    return MLP(in_features=in_features, out_features=NUM_ACTIONS, num_cells=num_cells, activation_class=nn.Tanh)


class Agent:
    """The saved policy as an okgin plug-in agent: batched ``act(observations, action_masks)``, greedy
    over the legal actions, on the plain observation (the features are computed here from it)."""

    name = "torchrl_ppo"

    def __init__(self, seed: int | None = None, path: str | os.PathLike | None = None) -> None:
        del seed  # greedy: nothing random
        path = saved_file(path, POLICY_ENV_VAR, DEFAULT_POLICY, "examples/torchrl_ppo.py")
        try:
            saved = torch.load(path, map_location="cpu", weights_only=True)
            self.features: str = saved["features"]
            self.net = policy_net(saved["in_features"], saved["num_cells"])
            self.net.load_state_dict(saved["state_dict"])
        except Exception as e:  # torch.load and load_state_dict raise many kinds on a file that is not ours
            raise unreadable_file_error(path, "a policy saved by examples/torchrl_ppo.py", e) from None
        self.net.eval()

    @torch.no_grad()
    def act(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        logits = self.net(torch.as_tensor(learner_input(observations, self.features)))
        logits = logits.masked_fill(~torch.as_tensor(action_masks, dtype=torch.bool), -torch.inf)
        return logits.argmax(-1).numpy().astype(np.int64)


def make_env(args: argparse.Namespace) -> TransformedEnv:
    """okgin's registered id through TorchRL's GymEnv, the mask made bool and put on the action spec."""
    env = GymEnv(ENV_ID, opponent=args.opponent, obs_format="dict", features=args.features,
                 deadwood_shaping=args.deadwood_shaping, categorical_action_encoding=True)
    env = TransformedEnv(env, Compose(
        DTypeCastTransform(torch.int8, torch.bool, in_keys=["action_mask"]),  # the dict's mask is int8
        ActionMask(),
        RewardSum(),  # "episode_reward": the hand's shaped return, for the log
    ))
    env.set_seed(args.seed)
    return env


def main(argv: list[str] | None = None) -> float:
    """Train, save, evaluate, print; returns the points/hand against ``random``."""
    args = parse_args(argv)
    torch.manual_seed(args.seed)
    torch.set_num_threads(args.torch_threads)
    num_cells = [int(n) for n in args.num_cells.split(",")]
    env = make_env(args)
    in_features = env.observation_spec["observation"].shape[-1]

    # ALGO LOGIC: actor (masked categorical over the 107 actions) and critic
    actor = ProbabilisticActor(
        TensorDictModule(policy_net(in_features, num_cells), in_keys=["observation"], out_keys=["logits"]),
        spec=env.action_spec, in_keys={"logits": "logits", "mask": "action_mask"},
        distribution_class=MaskedCategorical, return_log_prob=True)
    critic = ValueOperator(MLP(in_features=in_features, out_features=1, num_cells=num_cells, activation_class=nn.Tanh),
                           in_keys=["observation"])
    collector = Collector(env, actor, frames_per_batch=args.frames_per_batch, total_frames=args.timesteps)
    buffer = ReplayBuffer(storage=LazyTensorStorage(args.frames_per_batch), sampler=SamplerWithoutReplacement(),
                          batch_size=args.minibatch)
    advantage = GAE(gamma=1.0, lmbda=args.gae_lambda, value_network=critic, average_gae=True)
    loss_module = ClipPPOLoss(actor, critic, clip_epsilon=0.2, entropy_coeff=args.entropy_coeff, critic_coeff=0.5,
                              loss_critic_type="l2")
    optim = torch.optim.Adam(loss_module.parameters(), lr=args.lr)

    start = time.time()
    frames = 0
    for i, batch in enumerate(collector):
        frames += batch.numel()
        # optimizing the policy and value network: advantages recomputed with the critic of each epoch
        for _ in range(args.epochs):
            with torch.no_grad():
                advantage(batch)
            buffer.extend(batch.reshape(-1))
            for mb in buffer:
                losses = loss_module(mb)
                loss = losses["loss_objective"] + losses["loss_critic"] + losses["loss_entropy"]
                loss.backward()
                nn.utils.clip_grad_norm_(loss_module.parameters(), 0.5)
                optim.step()
                optim.zero_grad()
        done = batch["next", "done"].squeeze(-1)
        hand_return = batch["next", "episode_reward"].squeeze(-1)[done].mean().item() if done.any() else float("nan")
        print(f"iter {i + 1} frames {frames} hands {int(done.sum())} charts/hand_return {hand_return:+.3f} "
              f"losses/objective {losses['loss_objective'].item():+.4f} losses/critic {losses['loss_critic'].item():.4f} "
              f"losses/entropy {-losses['loss_entropy'].item() / args.entropy_coeff:.3f} {time.time() - start:.0f} s",
              flush=True)
    collector.shutdown()
    print(f"trained {frames} steps (features={args.features}, seed {args.seed}) in {time.time() - start:.0f} s")

    args.out.parent.mkdir(parents=True, exist_ok=True)
    torch.save({"features": args.features, "in_features": in_features, "num_cells": num_cells,
                "state_dict": actor.module[0].module.state_dict()}, args.out)
    print(f"saved the policy to {args.out} (the agent examples.torchrl_ppo:Agent, {POLICY_ENV_VAR})")

    results = evaluate_against(Agent(path=args.out), ("random", "simple"), args.hands, seed=args.eval_seed)
    return results[0].points_per_hand


if __name__ == "__main__":
    main()
