"""The learner's signal, written once for the AEC, single-agent and vector envs.

What an env gives a learner beyond the game itself: the reward of a hand that ended (points times
``reward_scale``, or +1/-1/0 for the winner of the hand or game), the potential-based deadwood
shaping between a player's consecutive decisions, the observation as the learner reads it
(``features`` columns, ``obs_format``), the seeding of the opponent's randomness, and the check of
a learner's action. Each env calls these; none has its own copy. The vector env books rewards inside
its fused kernels, which call ``hand_reward`` (a kernel) as the Python envs do.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from okgin_env.envs.options import DICT_KEYS, EnvConfig
from okgin_env.features.learner import learner_input
from okgin_env.features.shaping import potential
from okgin_env.game.actions import NUM_ACTIONS, check_action


class Shaping:
    """Potential-based deadwood shaping for ``size`` learners (games, or the AEC env's two players).

    phi(s) = -coef * scale * (best deadwood reachable at decision s), from the player's own
    observation (``okgin_env.features.shaping``). ``advance`` returns phi(s') - phi(s) between a
    learner's consecutive decisions, with phi = 0 once its episode is over; a learner with no
    decision yet (``start`` not called since ``clear``) gets no term.
    """

    def __init__(self, coef: float, scale: float, size: int) -> None:
        self.coef, self.scale = float(coef), float(scale)
        self.phi = np.zeros(size, np.float64)
        self.started = np.zeros(size, bool)

    def __bool__(self) -> bool:
        return self.coef != 0.0

    def clear(self) -> None:
        """Forget every learner's last decision (a new episode everywhere)."""
        self.phi[:] = 0.0
        self.started[:] = False

    def start(self, observations: np.ndarray, rows: Any = slice(None)) -> None:
        """phi(s_0) of the learners ``rows`` at their first decision: no reward for it."""
        self.phi[rows] = potential(observations, self.coef, self.scale)
        self.started[rows] = True

    def advance(self, observations: np.ndarray | None, done: Any, rows: Any = slice(None),
                restart: bool = False) -> np.ndarray:
        """phi(s') - phi(s) of the learners ``rows`` now at decisions with ``observations`` (phi(s') = 0
        where ``done``; ``observations`` may be None when all are done); s' becomes their last decision.
        ``restart``: where ``done``, ``observations`` already show the next episode's first decision
        (an autoreset env), which becomes the last decision (as ``start`` would make it)."""
        if observations is None:
            now = phi = np.zeros_like(self.phi[rows])
        else:
            now = potential(observations, self.coef, self.scale).astype(np.float64)
            phi = np.where(done, 0.0, now)
        term = np.where(self.started[rows], phi - self.phi[rows], 0.0)
        if restart:
            self.phi[rows] = now
            self.started[rows] = True
        else:
            self.phi[rows] = phi
            self.started[rows] = ~np.broadcast_to(done, np.shape(phi))
        return term


class Presenter:
    """The observation as the learner reads it: ``features`` columns appended, in ``obs_format``."""

    def __init__(self, config: EnvConfig) -> None:
        self.features = config.features
        self.keys = DICT_KEYS.get(config.obs_format)  # (vector key, mask key); None: a plain vector

    def batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray | dict[str, np.ndarray]:
        """(B, OBS_SIZE) observations and (B, 107) masks -> what the env returns for B games."""
        if self.features != "raw":
            observations = learner_input(observations, self.features)
        if self.keys is None:
            return observations
        return {self.keys[0]: observations, self.keys[1]: masks.view(np.int8)}

    def one(self, observation: np.ndarray, mask: np.ndarray) -> np.ndarray | dict[str, np.ndarray]:
        """One player's (OBS_SIZE,) observation and (107,) mask -> what the env returns."""
        if self.features != "raw":
            observation = learner_input(observation[None], self.features)[0]
        if self.keys is None:
            return observation
        return {self.keys[0]: observation, self.keys[1]: mask.view(np.int8)}


def seed_opponent(opponent: Any, seed: int | None) -> np.random.SeedSequence | None:
    """Split ``reset(seed=...)`` into the game's seed (returned) and the opponent's: an opponent whose
    ``rng`` attribute holds a ``np.random.Generator`` gets one seeded from it. None: no seed given."""
    if seed is None:
        return None
    game_seed, opp_seed = np.random.SeedSequence(seed).spawn(2)
    if isinstance(getattr(opponent, "rng", None), np.random.Generator):
        opponent.rng = np.random.default_rng(opp_seed)
    return game_seed


def learner_action(action: Any, mask: np.ndarray, terminate: bool) -> int | None:
    """A learner's action as an int; None for an in-space action the mask forbids when illegal actions
    end the episode (``illegal_action="terminate"``). Anything else that is not legal raises
    ``ValueError`` (``game.actions.check_action``: out of the space is always an error)."""
    if terminate and not isinstance(action, (bool, np.bool_)):
        a = np.asarray(action)
        if a.ndim == 0 and a.dtype.kind in "iu" and 0 <= a < NUM_ACTIONS and not mask[int(a)]:
            return None
    return check_action(action, mask)
