"""The rollout storage of two-player PPO, linked per player, and GAE along each player's own chain.

Two players take turns, so a stored decision's next state is the *same player's* next decision:
rewards ``rewards[:, p]`` go to player p's latest decision, and a decision still waiting for its
successor when a rollout ends is carried into the next rollout (storage rows 0 and 1).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import torch

from okgin_env.game.actions import NUM_ACTIONS
from okgin_env.game.observation import OBS_SIZE

CARRY = 2  #: storage rows 0 and 1 hold player 0's / player 1's decision carried over from the last rollout


class Decisions(NamedTuple):
    """The learner's decisions of one env step, as ``TurnStorage.add`` stores them (one row per game acting)."""

    obs: np.ndarray  #: (n, input_size) float32 the network's input (observation [+ features])
    masks: np.ndarray  #: (n, NUM_ACTIONS) bool
    actions: np.ndarray  #: (n,) int64
    logprobs: np.ndarray  #: (n,) float32
    values: np.ndarray  #: (n,) float32
    potentials: np.ndarray | float = 0.0  #: shaping potential of each decision's state
    privileged: np.ndarray | None = None  #: the critic's hidden-state inputs (oracle critic), else None


class TurnStorage:
    """Rollout storage shaped (CARRY + num_steps, num_envs), linked per player.

    Row ``CARRY + t`` holds the learner decision made at env step t (``valid``). ``next_row``
    points at the same player's next decision in the same game; ``dones`` marks a decision
    after which that player's episode ended (terminal: no bootstrap); a valid row with
    neither is *pending* and is carried into the next rollout by :meth:`carry_over`.
    """

    def __init__(self, num_steps: int, num_envs: int, input_size: int = OBS_SIZE, privileged_size: int = 0) -> None:
        rows, n = CARRY + num_steps, num_envs
        self.obs = np.zeros((rows, n, input_size), np.float32)  # the network's input (observation [+ features])
        self.privileged = np.zeros((rows, n, privileged_size), np.float32)  # the critic's hidden-state inputs
        self.masks = np.zeros((rows, n, NUM_ACTIONS), bool)
        self.actions = np.zeros((rows, n), np.int64)
        self.logprobs = np.zeros((rows, n), np.float32)
        self.values = np.zeros((rows, n), np.float32)
        self.potentials = np.zeros((rows, n), np.float32)  # shaping potential of the decision's state
        self.rewards = np.zeros((rows, n), np.float32)
        self.dones = np.zeros((rows, n), bool)
        self.next_row = np.full((rows, n), -1, np.int64)
        self.valid = np.zeros((rows, n), bool)
        self.last_row = np.full((n, 2), -1, np.int64)  # each player's latest decision row in its current episode
        self._cols = np.arange(n)

    _ROW_FIELDS = ("obs", "privileged", "masks", "actions", "logprobs", "values", "potentials", "rewards", "dones", "next_row", "valid")

    def add(self, row: int, envs: np.ndarray, players: np.ndarray, d: Decisions) -> None:
        """Store learner decisions ``d`` of ``players`` in games ``envs`` at ``row``; link their predecessors."""
        prev = self.last_row[envs, players]
        linked = prev >= 0
        self.next_row[prev[linked], envs[linked]] = row
        self.last_row[envs, players] = row
        self.obs[row, envs], self.masks[row, envs] = d.obs, d.masks
        self.actions[row, envs], self.logprobs[row, envs], self.values[row, envs] = d.actions, d.logprobs, d.values
        self.potentials[row, envs] = d.potentials
        if d.privileged is not None:
            self.privileged[row, envs] = d.privileged
        self.valid[row, envs] = True

    def credit(self, rewards: np.ndarray, ended: np.ndarray) -> None:
        """rewards (N, 2) of this step go to each player's latest decision; ``ended`` games close both chains."""
        for p in range(2):
            has = self.last_row[:, p] >= 0
            envs = self._cols[has]
            rows = self.last_row[has, p]
            self.rewards[rows, envs] += rewards[has, p]
            fin = ended[has]
            self.dones[rows[fin], envs[fin]] = True
        self.last_row[ended] = -1

    def carry_over(self) -> None:
        """Start a new rollout: pending decisions move to rows 0/1, everything else is cleared.

        A carried decision keeps the log-probability and value the *previous* policy gave it (the
        policy that acted): its PPO ratio is taken against that behaviour policy, one update older
        than the others in the batch, which is what importance ratios are for; the clip bounds it.
        At most one decision per player and game is carried, so this is a small slice of a batch."""
        keep = []
        for p in range(2):
            envs = np.flatnonzero(self.last_row[:, p] >= 0)
            rows = self.last_row[envs, p]
            keep.append((p, envs, [getattr(self, f)[rows, envs].copy() for f in self._ROW_FIELDS]))
        self.rewards[:] = 0
        self.dones[:] = False
        self.next_row[:] = -1
        self.valid[:] = False
        for p, envs, vals in keep:
            for f, v in zip(self._ROW_FIELDS, vals):
                getattr(self, f)[p, envs] = v
            self.last_row[envs, p] = p

    def flatten(self, trainable: np.ndarray, advantages: np.ndarray, returns: np.ndarray, device: torch.device,
                privileged: bool = False) -> dict[str, torch.Tensor]:
        """The batch of an update: the ``trainable`` rows (from :func:`per_player_gae`) as tensors on ``device``
        (obs, masks, actions, logprobs, advantages, returns, values; privileged with an oracle critic)."""
        batch = {name: torch.from_numpy(x[trainable]).to(device) for name, x in (
            ("obs", self.obs), ("masks", self.masks), ("actions", self.actions), ("logprobs", self.logprobs),
            ("advantages", advantages), ("returns", returns), ("values", self.values))}
        if privileged:
            batch["privileged"] = torch.from_numpy(self.privileged[trainable]).to(device)
        return batch

    def state_dict(self) -> dict:
        """The carried rows (call after :meth:`carry_over`), for checkpoints."""
        d = {f: torch.from_numpy(getattr(self, f)[:CARRY].copy()) for f in self._ROW_FIELDS}
        d["last_row"] = torch.from_numpy(self.last_row.copy())
        return d

    def load_state_dict(self, d: dict) -> None:
        for f in self._ROW_FIELDS:
            if f in d:  # runs saved before oracle_critic existed have no privileged rows (and need none)
                getattr(self, f)[:CARRY] = d[f].numpy()
        self.last_row[:] = d["last_row"].numpy()



# ---------------------------------------------------------------------- GAE
def per_player_gae(rewards, values, dones, next_row, valid, gamma: float, gae_lambda: float, potentials=None):
    """GAE along each player's own chain of decisions.

    All inputs are (R, N) over storage rows; ``next_row[t, e]`` is the row of the same player's
    next decision (-1: none yet). Returns (advantages, returns, trainable), where trainable rows
    are valid decisions whose successor is known (or whose episode ended); a pending row is
    the bootstrap of its predecessor (truncated GAE) and gets advantage 0 here.
    ``potentials`` (optional) add potential-based shaping gamma * phi(next) - phi(t), with
    phi = 0 after the episode's end (Ng et al. 1999: the optimal policy is unchanged).
    """
    rows, n = rewards.shape
    cols = np.arange(n)
    trainable = valid & (dones | (next_row >= 0))
    linked = (next_row >= 0) & ~dones
    nxt = np.where(linked, next_row, 0)
    advantages = np.zeros((rows, n), np.float32)
    for t in reversed(range(rows)):
        next_values = np.where(linked[t], values[nxt[t], cols], 0.0)
        next_adv = np.where(linked[t], advantages[nxt[t], cols], 0.0)
        shaped = rewards[t]
        if potentials is not None:
            shaped = shaped + gamma * np.where(linked[t], potentials[nxt[t], cols], 0.0) - potentials[t]
        delta = shaped + gamma * next_values - values[t]
        advantages[t] = np.where(trainable[t], delta + gamma * gae_lambda * next_adv, 0.0)
    return advantages, advantages + values, trainable
