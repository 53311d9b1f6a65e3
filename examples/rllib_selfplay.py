"""RLlib PPO self-play on okgin's PettingZoo AEC env, unchanged, then okgin's evaluation.

    python examples/rllib_selfplay.py --timesteps 200000 --seed 0

RLlib's documented multi-agent path, nothing of our own around the env:

* ``register_env("okgin", lambda cfg: PettingZooEnv(okgin_env.env(obs_format="rllib", **cfg)))``:
  RLlib's own PettingZoo wrapper over okgin's AEC env; ``obs_format="rllib"`` names the
  observation's keys ``observations`` / ``action_mask``, what RLlib's stock
  ``ActionMaskingTorchRLModule`` reads (illegal actions get a logit of -inf).
* ``PPOConfig`` (new API stack) with that module for ONE policy, ``"shared"``, which both seats
  map to: self-play. ``.env_runners(num_env_runners=2)`` samples in 2 Ray worker processes.

Choices (as in examples/sb3_maskable_ppo.py): one hand per episode; ``gamma=1`` because a hand
is a few dozen decisions whose only reward is its zero-sum points at the end, and the
``deadwood_shaping=0.5`` terms ``phi(s') - phi(s)`` telescope (leave the best policy unchanged)
only undiscounted; shaping, because without it a fresh policy almost never knocks and nearly
every hand is void (no signal); ``features="outs"``: the env appends okgin_env.features.learner' columns
(861 floats in all), which speeds learning a lot. Self-play rewards are zero-sum apart from the
shaping, so the episode return says little: the learner is measured against fixed bots.

At the end the shared policy, saved with ``RLModule.save_to_path`` under ``--out`` (default
``runs/examples/rllib_selfplay/``), is loaded back as ``Agent`` (an okgin plug-in agent: greedy
over the legal actions, on the observation and mask alone) and plays ``--hands`` hands against
``random`` and ``simple`` with okgin's evaluation (``okgin.evaluate.play_match``: duplicate deals,
every deal from both seats, 95% CIs over deal pairs, the deals fixed by ``--eval-seed``). The
same agent plays in okgin's programs::

    OKGIN_RLLIB_SELFPLAY_POLICY=runs/examples/rllib_selfplay/policy python evaluate.py \\
        --agents examples.rllib_selfplay:Agent random

On a Ray cluster the same config samples on many machines: install okgin (the same version) on
each, run ``ray start --head`` on one and ``ray start --address=HEAD_IP:6379`` on the others, then
on the head ``python examples/rllib_selfplay.py --address auto --num-env-runners 16``
(``ray.init(address="auto")`` and ``.env_runners(num_env_runners=16)``). Only the one-machine path
(2 env-runner processes on 2 cores) was run for this project.

Expected at the default budget (200,392 env steps, RLlib 2.60.0; the command above on a shared
2-core machine at load average 8-11; record: docs/figures/libraries.json): 12.5 min in all with
Ray's start and the evaluation; against ``random`` +42.11 [+40.97, +43.25] points/hand (95% CI,
2000 hands), against ``simple`` -16.22 [-17.13, -15.31] (hand win rates 0.905 and 0.238). The
learner's torch runs on one thread (``--torch-threads``): with torch's default threads each update
was many times slower on 2 cores.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import numpy as np
import ray
import torch
from ray.rllib.algorithms.ppo import PPOConfig
from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
from ray.rllib.core.rl_module.rl_module import RLModule, RLModuleSpec
from ray.rllib.env.wrappers.pettingzoo_env import PettingZooEnv
from ray.rllib.examples.rl_modules.classes.action_masking_rlm import (
    ActionMaskingTorchRLModule,
)
from ray.tune.registry import register_env

import okgin_env
from okgin.evaluate import evaluate_against
from okgin_env.agent_specs import saved_file, unreadable_file_error
from okgin_env.features.learner import FEATURES, features_for_size, learner_input

DEFAULT_POLICY = Path("runs/examples/rllib_selfplay/policy")
POLICY_ENV_VAR = "OKGIN_RLLIB_SELFPLAY_POLICY"
POLICY_ID = "shared"


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    # the examples' common flags: --timesteps, --hands, --seed, --out, --device (tests/docs/test_examples_cli.py)
    p.add_argument("--timesteps", type=int, default=200_000, help="env steps (decisions of both seats) of training")
    p.add_argument("--hands", type=int, default=2000,
                   help="hands of the final evaluation against each opponent (duplicate deals: rounded up to even)")
    p.add_argument("--seed", type=int, default=0, help="seeds RLlib (networks, env runners)")
    p.add_argument("--eval-seed", type=int, default=100, help="seeds the evaluation deals (the same for every run)")
    p.add_argument("--eval-opponents", nargs="+", default=["random", "simple"], help="agent specs to evaluate against")
    p.add_argument("--out", type=Path, default=DEFAULT_POLICY, help="where the trained RLModule is saved")
    p.add_argument("--num-env-runners", type=int, default=2, help="Ray env-runner (sampling) processes")
    p.add_argument("--address", default=None,
                   help="a running Ray cluster to join ('auto': the one started with `ray start` on this machine); "
                        "default: start Ray on this machine")
    p.add_argument("--envs-per-runner", type=int, default=8, help="okgin envs each env runner steps")
    p.add_argument("--features", choices=FEATURES, default="outs", help="the env's features option (the policy's input)")
    p.add_argument("--deadwood-shaping", type=float, default=0.5, help="shaping coefficient (0: off)")
    p.add_argument("--train-batch", type=int, default=4000, help="env steps per PPO update")
    p.add_argument("--minibatch", type=int, default=256, help="PPO minibatch size")
    p.add_argument("--epochs", type=int, default=6, help="PPO epochs per update")
    p.add_argument("--lr", type=float, default=3e-4)
    p.add_argument("--gae-lambda", type=float, default=0.8, help="GAE lambda (leans on the critic and the shaping)")
    p.add_argument("--ent-coef", type=float, default=0.01, help="entropy bonus")
    p.add_argument("--hidden", default="128,128", help="hidden layer sizes of the policy and value MLPs")
    p.add_argument("--device", choices=["cpu"], default="cpu",
                   help="where torch runs: only the CPU path of this example exists (the GPU one is not written)")
    p.add_argument("--torch-threads", type=int, default=1,
                   help="torch CPU threads of the learner (this process): more only fight the env runners "
                        "(on 2 cores, 1 thread made a PPO update 10x faster than torch's default)")
    return p.parse_args(argv)


def build_config(args: argparse.Namespace) -> PPOConfig:
    """RLlib's PPOConfig: okgin via PettingZooEnv, one shared masked policy for both seats."""
    register_env("okgin", lambda cfg: PettingZooEnv(okgin_env.env(obs_format="rllib", **cfg)))
    return (
        PPOConfig()
        .environment("okgin", env_config={"deadwood_shaping": args.deadwood_shaping, "features": args.features})
        .multi_agent(policies={POLICY_ID}, policy_mapping_fn=lambda agent_id, episode, **kwargs: POLICY_ID)
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs={POLICY_ID: RLModuleSpec(
            module_class=ActionMaskingTorchRLModule,
            model_config={"fcnet_hiddens": [int(n) for n in args.hidden.split(",")], "vf_share_layers": False})}))
        .env_runners(num_env_runners=args.num_env_runners, num_envs_per_env_runner=args.envs_per_runner)
        .training(gamma=1.0, lambda_=args.gae_lambda, lr=args.lr, entropy_coeff=args.ent_coef,
                  train_batch_size_per_learner=args.train_batch, minibatch_size=args.minibatch,
                  num_epochs=args.epochs)
        .debugging(seed=args.seed)
    )


class Agent:
    """The trained shared RLModule as an okgin plug-in agent (``examples.rllib_selfplay:Agent``).

    Loads the module saved by this script (``RLModule.from_checkpoint``) from ``$OKGIN_RLLIB_SELFPLAY_POLICY``
    or ``runs/examples/rllib_selfplay/policy`` and acts greedily over the legal actions on what the env
    gave it in training: the observation (with ``learner_input``'s feature columns when trained so) and
    the mask. Deterministic, so ``seed`` is accepted and unused.
    """

    def __init__(self, seed: int | None = None, path: str | os.PathLike | None = None, name: str = "rllib_selfplay"):
        path = saved_file(path, POLICY_ENV_VAR, DEFAULT_POLICY, "examples/rllib_selfplay.py")
        try:
            self.module = RLModule.from_checkpoint(path.resolve())
            # the env's features option, told by the module's input width (each option has its own)
            self.features = features_for_size(self.module.observation_space["observations"].shape[0])
        except Exception as e:  # RLlib raises many kinds on a folder that is not a saved module
            raise unreadable_file_error(path, "a policy saved by examples/rllib_selfplay.py", e) from None
        self.module.eval()
        self.name = name

    def act(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        """(B, OBS_SIZE) observations and (B, 107) legal-action masks -> (B,) int64 greedy legal actions."""
        obs = torch.as_tensor(learner_input(np.asarray(observations, np.float32), self.features))
        mask = torch.as_tensor(np.asarray(action_masks, np.float32))
        with torch.no_grad():
            out = self.module.forward_inference({"obs": {"observations": obs, "action_mask": mask}})
        logits = out["action_dist_inputs"].numpy()
        return np.where(np.asarray(action_masks, bool), logits, -np.inf).argmax(axis=1).astype(np.int64)


def main(argv: list[str] | None = None) -> float:
    """Train, save, evaluate, print; returns the points/hand against the first evaluation opponent."""
    args = parse_args(argv)
    torch.set_num_threads(args.torch_threads)
    start = time.time()
    if args.address:  # a running Ray cluster (`ray start --head` ...): its machines host the env runners
        ray.init(address=args.address, log_to_driver=False)
    else:  # a Ray instance on this machine, one CPU per env runner
        ray.init(num_cpus=max(2, args.num_env_runners), include_dashboard=False, log_to_driver=False)
    algo = build_config(args).build_algo()
    steps = 0
    while steps < args.timesteps:
        result = algo.train()
        steps = int(result["env_runners"]["num_env_steps_sampled_lifetime"])
        print(f"env steps {steps:>8d}  {time.time() - start:6.0f} s  "
              f"episode length {result['env_runners'].get('episode_len_mean', float('nan')):5.1f}", flush=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    algo.get_module(POLICY_ID).save_to_path(args.out.resolve())
    algo.stop()
    ray.shutdown()
    train_s = time.time() - start
    print(f"RLlib {ray.__version__} PPO: trained {steps} env steps (features={args.features}, seed {args.seed}, "
          f"{args.num_env_runners} env runners) in {train_s:.0f} s; "
          f"policy saved to {args.out}")

    results = evaluate_against(Agent(path=args.out), args.eval_opponents, args.hands, seed=args.eval_seed)
    return results[0].points_per_hand


if __name__ == "__main__":
    main()
