"""Who the learner plays in each game: itself, a frozen snapshot from the pool, or an agent.

Each game gets its opponent when it is dealt, in the proportions of ``opponent_mix``. Opponent
kinds are numbered: ``SELF`` (both seats are the learner), ``SNAPSHOT`` (a past learner from the
pool, sampling from its policy), then one number per agent spec (``okgin_env.agent_specs``).
"""

from __future__ import annotations

from typing import Callable

import numpy as np
import torch
import torch.distributed as dist
from okgin_agents.ppo import ActorCritic, network_input

from okgin_env.agent_specs import checked_actions

SELF, SNAPSHOT = 0, 1


class NetworkPolicy:
    """A frozen snapshot of the learner that samples from its policy (an opponent in the pool)."""

    def __init__(self, state_dict: dict, model_config: dict, device: torch.device) -> None:
        self.net = ActorCritic(**model_config).to(device).eval()
        self.net.load_state_dict(state_dict)
        self.device = device

    @torch.inference_mode()
    def act_on_input(self, net_in: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """Sampled actions from precomputed ``network_input`` rows (shared by all snapshots)."""
        x = torch.from_numpy(net_in).to(self.device)
        return self.net.sample_action(x, torch.from_numpy(mask).to(self.device)).cpu().numpy()


def generator_states(obj) -> dict:
    """Bit-generator states of every numpy Generator attribute of ``obj`` (agents' private RNGs)."""
    return {k: v.bit_generator.state for k, v in vars(obj).items() if isinstance(v, np.random.Generator)}


def set_generator_states(obj, states: dict) -> None:
    for k, s in states.items():
        getattr(obj, k).bit_generator.state = s


class Opponents:
    """The opponent of each of ``num_envs`` games, the snapshot pool and the learner's results against them.

    ``kind[e]`` / ``slot[e]`` / ``learner_seat[e]``: game e's opponent kind, its pool slot (snapshots),
    and the seat the learner plays there. ``pool_points`` / ``pool_hands``: the learner's points and
    hands against the pool since the last snapshot (for ``snapshot_margin``).
    """

    def __init__(self, mix: dict[str, float], num_envs: int, pool_size: int, rng: np.random.Generator,
                 make_agent: Callable[[str, int], object], agent_seed: int, model_config: dict,
                 device: torch.device) -> None:
        mix = {k: v for k, v in mix.items() if v > 0}
        self.kinds = ["self", "snapshot"] + [k for k in mix if k not in ("self", "snapshot")]
        self.probs = np.array([mix.get(k, 0.0) for k in self.kinds], np.float64)
        self.uses_snapshots = "snapshot" in mix
        self.agents = {k: make_agent(k, agent_seed + i) for i, k in enumerate(self.kinds[2:])}
        self.pool_size, self.rng, self.model_config, self.device = pool_size, rng, model_config, device
        self.pool: list[dict] = []  # {"iteration", "model"} frozen snapshots, oldest first
        self.policies: list[NetworkPolicy] = []
        self.kind = np.zeros(num_envs, np.int64)
        self.slot = np.zeros(num_envs, np.int64)
        self.learner_seat = np.zeros(num_envs, np.int64)
        self.pool_points, self.pool_hands = 0.0, 0

    def assign(self, envs: np.ndarray) -> None:
        """New opponents (and learner seats) for the games ``envs``; snapshot falls back to self while the pool is empty."""
        p = self.probs.copy()
        if not self.pool:
            p[SELF] += p[SNAPSHOT]
            p[SNAPSHOT] = 0.0
        self.kind[envs] = self.rng.choice(len(self.kinds), size=len(envs), p=p / p.sum())
        self.slot[envs] = self.rng.integers(0, max(1, len(self.pool)), size=len(envs))
        self.learner_seat[envs] = self.rng.integers(0, 2, size=len(envs))

    def add_snapshot(self, network: torch.nn.Module, iteration: int) -> None:
        """Freeze the learner into the pool (dropping the oldest beyond ``pool_size``); resets the pool score."""
        self.add_to_pool({"iteration": iteration,
                          "model": {k: v.detach().cpu().clone() for k, v in network.state_dict().items()}})
        self.pool_points, self.pool_hands = 0.0, 0

    def add_to_pool(self, item: dict) -> None:
        self.pool.append(item)
        self.policies.append(NetworkPolicy(item["model"], self.model_config, self.device))
        if len(self.pool) > self.pool_size:
            self.pool.pop(0)
            self.policies.pop(0)

    def learner_turn(self, player: np.ndarray) -> np.ndarray:
        """(N,) bool: whether the player to move in each game is the learner."""
        return (self.kind == SELF) | (player == self.learner_seat)

    def act(self, envs: np.ndarray, obs: np.ndarray, mask: np.ndarray, features: str, actions: np.ndarray) -> None:
        """Write the opponents' actions for the games ``envs`` (where an opponent is to move) into ``actions``."""
        kind = self.kind[envs]
        snap = envs[kind == SNAPSHOT]
        if len(snap):  # the features of all snapshot rows in one call, then one forward per snapshot
            snap_in = network_input(obs[snap], features)
            for slot in np.unique(self.slot[snap]):
                rows = np.flatnonzero(self.slot[snap] == slot)
                actions[snap[rows]] = self.policies[slot].act_on_input(snap_in[rows], mask[snap[rows]])
        for k in range(2, len(self.kinds)):
            e = envs[kind == k]
            if len(e):
                actions[e] = checked_actions(self.agents[self.kinds[k]].act(obs[e], mask[e]), mask[e], self.kinds[k],
                                             "opponent", e)

    def record(self, fin: np.ndarray, ep_points: np.ndarray, returns: dict[str, list]) -> None:
        """Games ``fin`` ended with ``ep_points`` (N, 2): the learner's points go to ``returns[opponent]``
        (self-play is zero-sum: left out) and to the pool score."""
        for k in np.unique(self.kind[fin]):
            if k != SELF:
                e = fin[self.kind[fin] == k]
                returns.setdefault(self.kinds[k], []).extend(ep_points[e, self.learner_seat[e]])
        vs_pool = fin[self.kind[fin] == SNAPSHOT]
        self.pool_points += float(ep_points[vs_pool, self.learner_seat[vs_pool]].sum())
        self.pool_hands += len(vs_pool)

    def snapshot_due(self, iteration: int, *, every: int, margin: float, min_hands: int, world_size: int = 1) -> bool:
        """Whether the learner joins the pool after update ``iteration``: on schedule (every ``every`` updates), when
        it beats the pool by ``margin`` points per hand over at least ``min_hands`` hands (all processes' hands:
        with ``world_size`` > 1 every process must call this, the scores are summed), or while the pool is empty."""
        if world_size > 1:
            t = torch.tensor([self.pool_points, float(self.pool_hands)], dtype=torch.float64)
            dist.all_reduce(t)
            points, hands = float(t[0]), int(t[1])
        else:
            points, hands = self.pool_points, self.pool_hands
        beats_pool = margin > 0 and hands >= min_hands and points / hands >= margin
        return bool(self.uses_snapshots and ((every and iteration % every == 0) or beats_pool or not self.pool))

    def state_dict(self) -> dict:
        """For checkpoints (the keys of ``train_state`` that resume reads back)."""
        return {"rng": self.rng.bit_generator.state, "pool": self.pool,
                "baseline_rngs": {k: generator_states(a) for k, a in self.agents.items()},
                "opp_kind": torch.from_numpy(self.kind.copy()), "opp_slot": torch.from_numpy(self.slot.copy()),
                "learner_seat": torch.from_numpy(self.learner_seat.copy()),
                "pool_points": self.pool_points, "pool_hands": self.pool_hands}

    def load_pool(self, ts: dict) -> None:
        for item in ts["pool"]:
            self.add_to_pool(item)

    def load_state_dict(self, ts: dict) -> None:
        """Everything else of :meth:`state_dict` (after :meth:`load_pool`): the exact games in flight."""
        self.rng.bit_generator.state = ts["rng"]
        for k, agent in self.agents.items():
            set_generator_states(agent, ts["baseline_rngs"].get(k, {}))
        self.kind[:], self.slot[:], self.learner_seat[:] = (ts[k].numpy() for k in ("opp_kind", "opp_slot", "learner_seat"))
        self.pool_points, self.pool_hands = float(ts["pool_points"]), int(ts["pool_hands"])
