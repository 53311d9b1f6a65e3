"""The random baseline: a uniformly random legal action."""

from __future__ import annotations

import numpy as np

from okgin_env.core import random_legal_actions

from .base import Agent, check_batch


class RandomAgent(Agent):
    """Plays a legal action chosen uniformly at random (seeded generator)."""

    name = "random"

    def __init__(self, seed: int | None = None) -> None:
        self.rng = np.random.default_rng(seed)

    def act(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        _, mask = check_batch(observations, action_masks)
        return random_legal_actions(mask, self.rng).astype(np.int64)
