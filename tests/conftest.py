"""What the tests share: the checkout's root, one writer of PPO checkpoints, positions to act on.

Test modules import ``ROOT`` by name (``from conftest import ROOT``), as they import ``engines``
and ``scenarios``: pytest puts this folder on ``sys.path``. Fixtures need no import.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import okgin_agents as agents
import pytest
import torch
from okgin_agents.ppo import CHECKPOINT_FORMAT, CHECKPOINT_VERSION, FEATURES_VERSION, ActorCritic, save_checkpoint

from okgin_env.game.actions import NUM_ACTIONS
from okgin_env.game.core import VectorGame
from okgin_env.game.observation import OBS_SIZE, OBS_VERSION

ROOT = Path(__file__).resolve().parents[1]  #: the checkout's root (configs/, examples/, the launchers)

#: The tests' tiny training run (train.py arguments): 2 updates of 16 games x 8 steps, a 32-unit
#: network, tiny evaluations; a later ``--set`` of the same key overrides one of these.
TINY_TRAIN = [
    "--config", str(ROOT / "configs" / "quick.yaml"),
    "--set", "num_envs=16", "--set", "num_steps=8", "--set", "total_timesteps=256",
    "--set", "hidden_sizes=[32]", "--set", "update_epochs=2", "--set", "num_minibatches=2",
    "--set", "opponent_mix={self: 0.4, snapshot: 0.3, random: 0.3}", "--set", "snapshot_every=1",
    "--set", "eval_hands=20", "--set", "eval_opponents=[random]", "--set", "best_metric_opponent=random",
    "--set", "checkpoint_every=1", "--set", "eval_every=1", "--set", "log_every=1", "--set", "num_threads=1",
    "--set", "anneal_lr=false", "--set", "bc_agent=", "--set", "features=meld",
]


def checkpoint_dict(net: ActorCritic, **changes: Any) -> dict[str, Any]:
    """A PPO checkpoint of ``net`` with every entry ``load_checkpoint`` checks, at the versions this
    code writes (the named constants, so that a version bump cannot leave the tests writing stale
    files); ``changes`` adds entries or replaces them (e.g. ``obs_version=0`` for a refused file)."""
    return {"format": CHECKPOINT_FORMAT, "version": CHECKPOINT_VERSION, "obs_version": OBS_VERSION,
            "obs_size": OBS_SIZE, "features_version": FEATURES_VERSION, "num_actions": NUM_ACTIONS,
            "model_config": net.config, "model": net.state_dict(), "rules": {}, "args": {},
            "global_step": 0, "iteration": 0, **changes}


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
