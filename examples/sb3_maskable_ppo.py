"""sb3-contrib MaskablePPO on the registered Gymnasium id, against the built-in ``random`` bot.

    python examples/sb3_maskable_ppo.py --timesteps 100000 --seed 0 [--features outs]

Training uses stable-baselines3's ``make_vec_env`` on ``"okgin/OklahomaGin-v0"`` unchanged (8
envs, each wrapped in ``Monitor``); MaskablePPO reads the legal actions from the env's
``action_masks()``. Two choices matter:

* ``gamma=1``: an episode is one hand (a few dozen decisions) whose only reward is the hand's
  zero-sum points at its end. Discounting would just prefer quick knocks to bigger wins, and
  the env's shaping terms ``phi(s') - phi(s)`` telescope (leave the best policy unchanged) only
  undiscounted.
* ``deadwood_shaping=0.5``: without it a fresh policy almost never knocks, nearly every hand is
  void (0 points), and PPO sees no signal (docs/conformance.md, "Deadwood shaping"). With it,
  lowering the best reachable deadwood pays at once; the terms cancel over the hand.
* ``gae_lambda=0.8`` (SB3's default is 0.95) with 128 x 128 MLPs: the advantages lean on the
  near shaping terms while the critic learns. At 100k steps this took the policy from +4 to
  about +30 points/hand against ``random`` (docs/conformance.md has the sweep and the figures).

``--features outs`` (or ``meld``) makes the env hand the policy ``okgin_env.features.learner``' columns
after the observation (861 floats with "outs"): what okgin's own network reads (the expert's
reading of the table: outs, danger, the opponent's likely cards). docs/vector_env.md compares
both at the same budget and seeds.

At the end the trained policy (greedy over the legal actions), saved to ``--out`` (an okgin plug-in agent
afterwards, ``examples.sb3_maskable_ppo:Agent``: ``okgin-evaluate``, ``okgin-benchmark``), plays ``--hands`` hands
against each of ``--eval-opponents`` (``random`` and ``simple``) with the project's evaluation
(``okgin.evaluate.play_match``: duplicate deals, every deal played from both seats, 95% CIs over
deal pairs, the same deals for every run with the same ``--eval-seed``), and the script prints
the learner's points/hand with a 95% confidence interval for each.

Expected result (``python examples/sb3_maskable_ppo.py``, the defaults, seed 0): against
``random`` [+29.83 [+28.46, +31.20]](../docs/figures/sb3_example.json "seed0_vs_random") points per
hand, against ``simple`` [-35.68 [-36.60, -34.77]](../docs/figures/sb3_example.json "seed0_vs_simple")
(100k steps do not beat a heuristic bot), after [62 s](../docs/figures/sb3_example.json "seed0_time")
of training on a quiet 2-core CPU. Other seeds and the outs features: docs/vector_env.md.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import numpy as np
import torch
from sb3_contrib import MaskablePPO
from stable_baselines3.common.env_util import make_vec_env

import okgin_env  # noqa: F401  (registers okgin/OklahomaGin-v0)
from okgin.evaluate import evaluate_against
from okgin_env.agent_specs import saved_file, unreadable_file_error
from okgin_env.features.learner import FEATURES, features_for_size, learner_input

ENV_ID = "okgin/OklahomaGin-v0"
DEFAULT_OUT = Path("runs/examples/sb3_maskable_ppo/model.zip")
MODEL_ENV_VAR = "OKGIN_SB3_MASKABLE_PPO_MODEL"


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    # the examples' common flags: --timesteps, --hands, --seed, --out, --device (tests/docs/test_examples_cli.py)
    p.add_argument("--timesteps", dest="total_timesteps", type=int, default=100_000, help="learner steps of training")
    p.add_argument("--seed", type=int, default=0, help="seeds training and the evaluation deals")
    p.add_argument("--n-envs", type=int, default=8, help="environments in make_vec_env")
    p.add_argument("--opponent", default="random", help="training and evaluation opponent (agent spec)")
    p.add_argument("--deadwood-shaping", type=float, default=0.5, help="shaping coefficient (0: off)")
    p.add_argument("--features", choices=FEATURES, default="raw",
                   help="the policy's input: the observation (raw), or with okgin_env.features.learner' columns (meld, outs)")
    p.add_argument("--hands", dest="eval_hands", type=int, default=2000,
                   help="hands of the final evaluation against each opponent (duplicate deals: rounded up to even)")
    p.add_argument("--eval-opponents", nargs="+", default=["random", "simple"], help="agent specs to evaluate against")
    p.add_argument("--eval-seed", type=int, default=100, help="seeds the evaluation deals (the same for every run)")
    p.add_argument("--n-steps", type=int, default=256, help="steps per env per rollout")
    p.add_argument("--batch-size", type=int, default=256, help="minibatch size")
    p.add_argument("--n-epochs", type=int, default=10, help="epochs per update")
    p.add_argument("--learning-rate", type=float, default=3e-4)
    p.add_argument("--ent-coef", type=float, default=0.01, help="entropy bonus")
    p.add_argument("--gae-lambda", type=float, default=0.8,
                   help="GAE lambda (below SB3's 0.95: leans on the critic and the shaping terms more)")
    p.add_argument("--net-arch", default="128,128", help="hidden layer sizes of the policy and value MLPs")
    p.add_argument("--out", type=Path, default=DEFAULT_OUT, help="where the trained model is saved (MaskablePPO.save)")
    p.add_argument("--device", choices=["cpu", "cuda", "auto"], default="cpu",
                   help="SB3's device (auto: cuda if available); the GPU path has not been run")
    p.add_argument("--torch-threads", type=int, default=1,
                   help="torch CPU threads (1: a small MLP gains nothing from more, and they fight the envs)")
    return p.parse_args(argv)


class SB3Policy:
    """The trained model as an okgin agent (batched ``act(observations, action_masks)``): greedy over
    the legal actions, on the inputs it was trained on (``learner_input(observations, features)``)."""

    def __init__(self, model: MaskablePPO, features: str, name: str = "maskable_ppo") -> None:
        self.model, self.features, self.name = model, features, name

    def act(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        actions, _ = self.model.predict(learner_input(observations, self.features), action_masks=action_masks,
                                        deterministic=True)
        return np.asarray(actions, np.int64)


class Agent(SB3Policy):
    """The saved model as an okgin plug-in agent (``examples.sb3_maskable_ppo:Agent``).

    Loads the file saved by this script (``MaskablePPO.load``) from ``$OKGIN_SB3_MASKABLE_PPO_MODEL`` or
    ``runs/examples/sb3_maskable_ppo/model.zip``; the features option it was trained with is told by its input
    width. Deterministic, so ``seed`` is accepted and unused.
    """

    def __init__(self, seed: int | None = None, path: str | os.PathLike | None = None, name: str = "maskable_ppo"):
        path = saved_file(path, MODEL_ENV_VAR, DEFAULT_OUT, "examples/sb3_maskable_ppo.py")
        try:
            model = MaskablePPO.load(path, device="cpu")
            features = features_for_size(model.observation_space.shape[0])
        except Exception as e:  # SB3 raises many kinds (zip, pickle, assertions) on a file that is not its model
            raise unreadable_file_error(path, "a model saved by examples/sb3_maskable_ppo.py", e) from None
        super().__init__(model, features, name)


def main(argv: list[str] | None = None) -> float:
    """Train, evaluate, print; returns the points/hand against the first evaluation opponent."""
    args = parse_args(argv)
    torch.set_num_threads(args.torch_threads)
    start = time.time()
    vec_env = make_vec_env(ENV_ID, n_envs=args.n_envs, seed=args.seed,
                           env_kwargs=dict(opponent=args.opponent, deadwood_shaping=args.deadwood_shaping,
                                           features=args.features))
    model = MaskablePPO("MlpPolicy", vec_env, gamma=1.0, n_steps=args.n_steps, batch_size=args.batch_size,
                        n_epochs=args.n_epochs, learning_rate=args.learning_rate, ent_coef=args.ent_coef,
                        gae_lambda=args.gae_lambda, policy_kwargs=dict(net_arch=[int(n) for n in args.net_arch.split(",")]),
                        seed=args.seed, verbose=0, device=args.device)
    model.learn(total_timesteps=args.total_timesteps)
    model.save(args.out)
    train_s = time.time() - start
    print(f"trained {args.total_timesteps} steps (features={args.features}, seed {args.seed}) in {train_s:.0f} s")
    results = evaluate_against(SB3Policy(model, args.features), args.eval_opponents, args.eval_hands,
                               seed=args.eval_seed)
    return results[0].points_per_hand


if __name__ == "__main__":
    main()
