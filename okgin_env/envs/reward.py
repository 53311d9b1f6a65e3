"""The reward rule of the learner envs: how a hand's points become a player's reward.

One numba kernel, ``hand_reward``, called by the vector env's fused kernels and by the AEC and
single-agent envs (``okgin_env.envs.learner``). A module of its own so that the kernels that read
it depend on nothing else of the envs.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from okgin_env.game.jit import kernel


class RewardRule(NamedTuple):
    """How a hand's points become the learner's reward (the kernels read it as a record)."""

    points: bool  #: reward="points": the player's points times ``scale``; else +1/-1/0 for the winner
    scale: float
    game_episode: bool  #: in "win" rewards, the game's winner counts (game episodes), not the hand's


def reward_rule(config: Any) -> RewardRule:
    """The reward rule of an ``okgin_env.envs.options.EnvConfig``."""
    return RewardRule(points=config.reward == "points", scale=float(config.reward_scale),
                      game_episode=config.episode == "game")


@kernel
def hand_reward(rule: RewardRule, points: float, hand_winner: int, game_winner: int, seat: int) -> float:
    """Player ``seat``'s reward for a hand that ended: its points (the core's reward, game bonuses
    included) times the scale, or +1/-1 when it won/lost (the game, in game episodes), 0 for no winner."""
    if rule.points:
        return np.float64(points) * rule.scale
    w = game_winner if rule.game_episode else hand_winner
    return 0.0 if w < 0 else (1.0 if w == seat else -1.0)
