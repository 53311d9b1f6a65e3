"""What the tests share: the checkout's root, one writer of PPO checkpoints, positions to act on.

Shared names (``ROOT``, ``TINY_TRAIN``, ``checkpoint_dict``) live in ``support.py``; fixtures need no import.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import okgin_agents as agents
import pytest
import torch
from okgin_agents.ppo import (
    ActorCritic,
    save_checkpoint,
)
from support import ROOT, TINY_TRAIN, checkpoint_dict  # noqa: F401  (re-exported for fixtures below)

from okgin_env.game.core import VectorGame


@pytest.fixture
def write_checkpoint() -> Callable[..., str]:
    """``write_checkpoint(path, net=None, **changes)``: save ``checkpoint_dict(net, **changes)`` at
    ``path`` and return the path as a string; without ``net``, a small network (one hidden layer
    of 8 units, its weights from torch's seed 0)."""
    def write(path: str | Path, net: ActorCritic | None = None, **changes: Any) -> str:
        if net is None:
            with torch.random.fork_rng(devices=[]):  # the caller's torch seed is left as it was
                torch.manual_seed(0)
                net = ActorCritic(hidden_sizes=[8])
        save_checkpoint(str(path), checkpoint_dict(net, **changes))
        return str(path)

    return write



@pytest.fixture
def expert_positions() -> tuple[np.ndarray, np.ndarray]:
    """Observations and masks of the player to move in 64 games (seed 3), 9 plies into expert self-play."""
    game, expert = VectorGame(64, seed=3), agents.make("expert")
    out = game.reset()
    for _ in range(9):
        out = game.step(expert.act(out.observation, out.legal_action_mask))
    return out.observation, out.legal_action_mask
