"""The random baseline: a uniformly random legal action.

The policy itself lives in ``okgin_env.agent_specs.RandomPolicy`` (the env resolves ``"random"``
without importing the bots); this class adds the agents' input checks.
"""

from __future__ import annotations

import numpy as np

from okgin_env.agent_specs import RandomPolicy

from .base import Agent, check_batch


class RandomAgent(RandomPolicy, Agent):
    """Plays a legal action chosen uniformly at random (seeded generator)."""

    def act(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        obs, mask = check_batch(observations, action_masks)
        return RandomPolicy.act(self, obs, mask)
