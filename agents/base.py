"""The bundled bots' base class and their input check.

Every agent meets ``okgin_env.Agent`` (the one protocol: ``act(observations, action_masks) ->
actions``, defined in ``okgin_env.agent_specs``); ``Bot`` is that protocol plus a display ``name``
and a repr, for the bots of this package to build on.

An agent is stateless between calls: ``act`` sees a batch of observations and legal-action masks
(rows may come from different games, seats and moments) and returns one legal action per row.
Everything a player may know is in the observation (``okgin_env.game.observation``), so no agent
ever reads the game state. Randomised agents draw from their own
``np.random.Generator``, seeded when they are made.
"""

from __future__ import annotations

from abc import abstractmethod

import numpy as np

from okgin_env.agent_specs import Agent
from okgin_env.game.actions import NUM_ACTIONS
from okgin_env.game.observation import OBS_SIZE


class Bot(Agent):
    """A bundled bot: the ``Agent`` protocol's batched ``act`` with a ``name`` and a repr."""

    name: str = "agent"

    @abstractmethod
    def act(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        """(B, OBS_SIZE) float32 observations and (B, 107) bool masks -> (B,) int64 legal actions.

        A row without any legal action (a finished game, whose action ``VectorGame.step``
        ignores) gets an arbitrary action id.
        """

    def act_on_rows(self, observations: np.ndarray, action_masks: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """``act(observations[rows], action_masks[rows])``: the actions of the rows ``rows`` (int64
        indices) of (N, OBS_SIZE) observations and (N, 107) masks, as a batched caller whose games
        are all in one array asks for them (``okgin_trainer.matches.act_rows``). A bot may override
        it to read the rows in place (the copy of the observations costs a kernel's time at N=1024);
        it must return what ``act`` returns for the copied rows, with the same draws."""
        return self.act(observations[rows], action_masks[rows])

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r}>"


def check_batch(observations: np.ndarray, action_masks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The batch as C-contiguous float32 / bool arrays; clear errors for wrong shapes."""
    obs = np.ascontiguousarray(observations, dtype=np.float32)
    mask = np.ascontiguousarray(action_masks, dtype=bool)
    if obs.ndim != 2 or obs.shape[1] != OBS_SIZE:
        raise ValueError(f"observations must have shape (B, {OBS_SIZE}), got {obs.shape}")
    if mask.shape != (obs.shape[0], NUM_ACTIONS):
        raise ValueError(f"action_masks must have shape ({obs.shape[0]}, {NUM_ACTIONS}), got {mask.shape}")
    return obs, mask


def check_rows(rows: np.ndarray, n: int) -> np.ndarray:
    """``rows`` as an int64 array of row indices in range(n) (a kernel indexes with them unchecked)."""
    rows = np.asarray(rows)
    if rows.ndim != 1 or (rows.size and rows.dtype.kind not in "iu"):
        raise ValueError(f"rows must be a 1-D array of row indices, got {rows.dtype} {rows.shape}")
    rows = rows.astype(np.int64, copy=False)
    if rows.size and (rows.min() < 0 or rows.max() >= n):
        raise ValueError(f"rows must lie in 0..{n - 1}, got {rows.min()}..{rows.max()}")
    return rows
