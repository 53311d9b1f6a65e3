"""PettingZoo's parallel API and a SuperSuit vector env over the turn-based AEC env.

    python examples/pettingzoo_parallel.py --episodes 3 --num-envs 4 --steps 400

1. ``pettingzoo.utils.conversions.turn_based_aec_to_parallel(okgin_env.env())``: a parallel env
   whose every step takes a dict of actions for both agents and applies only the one of the
   agent to act (the other's ``action_mask`` is all zeros, its action is ignored). Both agents
   end in the same parallel step, which is what SuperSuit needs.
2. ``supersuit.pettingzoo_env_to_vec_env_v1`` turns that parallel env into a vector env with one
   row per agent, and ``supersuit.concat_vec_envs_v1`` stacks ``--num-envs`` copies of it (rows
   env-major: env 0's player_0, env 0's player_1, env 1's player_0, ...). SuperSuit 3.11 keeps
   the ``Dict(observation, action_mask)`` observations as a dict of stacked arrays, in-process
   (``--num-cpus 0``) and with worker processes (``--num-cpus N``).
   ``base_class="stable_baselines3"`` also works, but its ``reset(seed=...)`` fails in
   SuperSuit 3.11 with SB3 2.x (``'ConcatVecEnv' object has no attribute 'seed'``): reset it
   without a seed there.

Every agent plays a random legal action; the script prints the episodes' rewards. Expected:
most random hands end void (reward 0 for both), a few with rewards of about +-0.5 (points x
0.02), zero-sum; [125 s](../docs/figures/pettingzoo_example.json "time") for the command above on a
heavily loaded 2-core machine (mostly imports and start-up; seconds when quiet and warm).
"""

from __future__ import annotations

import argparse

import numpy as np
import supersuit as ss
from pettingzoo.utils.conversions import turn_based_aec_to_parallel

import okgin_env


def random_legal(masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """(N,) a uniform random legal action per row of (N, 107) masks (0 for rows with none:
    the agent not to act, whose action the turn-based env ignores)."""
    return np.argmax(np.where(masks.astype(bool), rng.random(masks.shape), -1.0), axis=1)


def run_parallel(episodes: int, seed: int) -> list[dict[str, float]]:
    """Play ``episodes`` episodes on the parallel env; each agent's total reward per episode."""
    env = turn_based_aec_to_parallel(okgin_env.env())
    rng = np.random.default_rng(seed)
    totals = []
    for ep in range(episodes):
        observations, infos = env.reset(seed=seed + ep)
        total = dict.fromkeys(env.possible_agents, 0.0)
        while env.agents:
            actions = {a: int(random_legal(observations[a]["action_mask"][None], rng)[0]) for a in env.agents}
            observations, rewards, terminations, truncations, infos = env.step(actions)
            for a, r in rewards.items():
                total[a] += r
        totals.append(total)
    env.close()
    return totals


def run_vector(num_envs: int, steps: int, seed: int, num_cpus: int = 0) -> list[float]:
    """Step the SuperSuit vector env ``steps`` times; the rewards of the rows whose episode ended."""
    vec = ss.pettingzoo_env_to_vec_env_v1(turn_based_aec_to_parallel(okgin_env.env()))
    vec = ss.concat_vec_envs_v1(vec, num_envs, num_cpus=num_cpus, base_class="gymnasium")
    rng = np.random.default_rng(seed)
    obs, infos = vec.reset(seed=seed)
    assert obs["observation"].shape[0] == obs["action_mask"].shape[0] == 2 * num_envs
    ended = []
    for _ in range(steps):
        obs, rewards, terminations, truncations, infos = vec.step(random_legal(obs["action_mask"], rng))
        done = np.logical_or(terminations, truncations)  # the rows reset themselves
        ended += rewards[done].tolist()
    vec.close()
    return ended


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--episodes", type=int, default=3, help="episodes on the parallel env")
    p.add_argument("--num-envs", type=int, default=4, help="parallel envs in the SuperSuit vector env")
    p.add_argument("--steps", type=int, default=400, help="vector env steps")
    p.add_argument("--num-cpus", type=int, default=0, help="SuperSuit worker processes (0: in-process)")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    for i, total in enumerate(run_parallel(args.episodes, args.seed)):
        print(f"parallel episode {i}: " + ", ".join(f"{a} {r:+.2f}" for a, r in total.items()))
    ended = run_vector(args.num_envs, args.steps, args.seed, args.num_cpus)
    print(f"vector env: {args.num_envs} envs x 2 agents, {args.steps} steps, {len(ended) // 2} episodes ended, "
          f"final rewards {np.round(ended, 2).tolist()}")


if __name__ == "__main__":
    main()
