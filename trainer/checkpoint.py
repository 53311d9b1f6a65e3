"""Run directories and what a training checkpoint needs beyond the weights: the games in flight.

The checkpoint format itself (save, load, validation) lives in ``agents.ppo``, since playing
agents read it too.
"""

from __future__ import annotations

import os
import time
from dataclasses import fields

import numpy as np
import torch

from okgin_env.game.core import VectorGame

RUN_FILES = ("checkpoint.pt", "best.pt")  #: with TensorBoard events, what makes a directory hold a run


def holds_run(path: str) -> bool:
    """Whether ``path`` is a directory with a run's checkpoints or TensorBoard events in it."""
    return os.path.isdir(path) and any(n in RUN_FILES or n.startswith("events.out.tfevents.") for n in os.listdir(path))


def move_aside(run_path: str) -> str | None:
    """Rename an earlier run in ``run_path`` to ``<run_path>-<its last write>`` (``-2``, ... if taken), so that a
    fixed run_name (``runs/quick``) always holds the newest run and no run is ever destroyed; returns the new path."""
    if not holds_run(run_path):
        return None
    stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(max(
        os.path.getmtime(os.path.join(run_path, n)) for n in os.listdir(run_path))))
    target, n = f"{run_path}-{stamp}", 2
    while os.path.exists(target):
        target, n = f"{run_path}-{stamp}-{n}", n + 1
    os.rename(run_path, target)
    return target


def state_fields(state: object) -> tuple[str, ...]:
    """The field names of the core's game state, a NamedTuple or a dataclass of arrays."""
    return getattr(state, "_fields", None) or tuple(f.name for f in fields(state))


def game_state_dict(game: VectorGame) -> dict:
    """Every array of the games in flight and their RNG, as tensors (``weights_only`` loadable)."""
    d = {f"state.{name}": torch.from_numpy(getattr(game.state, name).copy()) for name in state_fields(game.state)}
    d.update({k: torch.from_numpy(v.copy()) for k, v in vars(game).items() if isinstance(v, np.ndarray)})
    d["rng"] = game.rng.bit_generator.state
    return d


def load_game_state(game: VectorGame, d: dict) -> None:
    """Put ``game_state_dict``'s arrays back, in place (the game's arrays keep their identity and dtype). An
    array the game no longer keeps (a checkpoint of an older core: its rule table, its scratch) is skipped."""
    for k, v in d.items():
        if k == "rng":
            game.rng.bit_generator.state = v
        elif k.startswith("state."):
            np.copyto(getattr(game.state, k[len("state."):]), v.numpy())
        elif isinstance(getattr(game, k, None), np.ndarray):
            np.copyto(getattr(game, k), v.numpy())
