"""Potential-based deadwood shaping, one implementation for the trainer and every env.

phi(s) = -coef * reward_scale * (the best deadwood the player can reach at its decision s),
read from the player's observation alone. A player's shaped reward for the transition from one
of its decisions s to its next decision s' is ``phi(s') - phi(s)`` (``gamma * phi(s') - phi(s)``
in the trainer), with phi = 0 once the episode has ended. Summed over an episode the terms
telescope to ``-phi(s_0)``, which no action changes, so the best policy is the same as without
shaping (Ng, Harada & Russell 1999); the hand's points in ``info`` are never shaped. What it
buys is a signal long before the first knock: a random learner almost never knocks, and with
``coef = 0.5`` melding cards pays at once.
"""

from __future__ import annotations

import numpy as np

from okgin_env.game.melds import hand_deadwood
from okgin_env.game.observation import DEADWOOD_SCALE, obs_field


def best_deadwood(obs: np.ndarray) -> np.ndarray:
    """(B,) deadwood the player can reach now: after its best discard in the discard phase
    (from the ``discard_deadwood`` field), else of its ten-card hand."""
    obs = np.asarray(obs, np.float32)
    if obs.ndim == 1:
        return best_deadwood(obs[None])[0]
    dd = obs_field(obs, "discard_deadwood")
    best = dd.max(axis=1)
    out = np.rint(DEADWOOD_SCALE * (1.0 - best)).astype(np.float32)
    rows = np.flatnonzero(best <= 0)
    if len(rows):
        out[rows] = hand_deadwood(obs_field(obs[rows], "own_hand") > 0.5)
    return out


def potential(obs: np.ndarray, coef: float, reward_scale: float = 1.0) -> np.ndarray:
    """phi(s) = -coef * reward_scale * best_deadwood(s) for each row of ``obs`` (float32)."""
    return (-float(coef) * float(reward_scale)) * best_deadwood(obs)


def check_coef(value: object, name: str = "deadwood_shaping") -> float:
    """A validated shaping coefficient (a finite number >= 0), or a ``ValueError`` saying so."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)) \
            or not np.isfinite(value) or value < 0:
        raise ValueError(f"invalid option {name}={value!r}: allowed is a finite number >= 0 (0 turns shaping off)")
    return float(value)
