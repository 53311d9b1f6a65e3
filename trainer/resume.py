"""Resuming a killed run: its config (``resume_config``), the run's state in one object
(``TrainingState``), its checkpoint (``training_checkpoint``: the weights and everything else the
run needs) and putting that back (``restore``), so the resumed run continues exactly where the
uninterrupted one would be.

Only rank 0's games are saved. Other ranks, and every rank of a run resumed with a different
number of processes, re-derive their games from (seed, rank, iteration) instead.
"""

from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import torch

from okgin_agents.ppo import CHECKPOINT_FORMAT, CHECKPOINT_VERSION, FEATURES_VERSION, load_checkpoint
from okgin_env.actions import NUM_ACTIONS
from okgin_env.core import VectorGame
from okgin_env.observation import OBS_SIZE, OBS_VERSION
from okgin_env.rules import Rules
from okgin_trainer.checkpoint import game_state_dict, load_game_state
from okgin_trainer.pool import Opponents

#: config keys ``--set`` may change on resume; anything else would make the run a different run
RESUME_OVERRIDABLE = ("total_timesteps", "device", "num_threads", "log_every", "progress_bar")


def resume_config(path: str, overrides: dict) -> dict:
    """The config of the run saved in checkpoint ``path`` with ``overrides`` applied.

    ValueError when ``path`` is an exported agent (no training state) or an override changes a key
    outside ``RESUME_OVERRIDABLE``; FileNotFoundError / ValueError from ``load_checkpoint`` otherwise.
    """
    ckpt = load_checkpoint(path)
    if "train_state" not in ckpt:
        raise ValueError(f"{path} is an exported agent without training state; cannot resume it")
    changed = sorted(set(overrides) - set(RESUME_OVERRIDABLE))
    if changed:
        raise ValueError(f"--resume keeps the run's config; only {', '.join(RESUME_OVERRIDABLE)} may be "
                         f"changed (got {', '.join(changed)})")
    return {**ckpt["args"], **overrides}


@dataclass
class TrainingState:
    """Everything a run changes as it trains, in one object: ``okgin/train.py`` steps it,
    ``training_checkpoint`` saves it and ``restore`` puts a saved one back.

    The run's fixed facts (config, rules, process) come first; then the learner, the games in
    flight with their pending decisions, and the counters. ``iteration`` is the last update done."""

    args: Any  #: the run's ``okgin_trainer.config.Args``
    rules: Rules
    rank: int
    world_size: int
    network: torch.nn.Module
    optimizer: torch.optim.Optimizer
    game: VectorGame
    storage: Any  #: okgin/train.py's TurnStorage: the learner's decisions of the rollout, linked per player
    opponents: Opponents
    shuffle_rng: np.random.Generator  #: minibatch order
    ep_points: np.ndarray  #: (num_envs, 2) raw points of each running episode
    next_obs: np.ndarray
    next_mask: np.ndarray
    next_player: np.ndarray
    global_step: int = 0
    iteration: int = 0
    best_metric: float = -math.inf  #: best points per hand against best_metric_opponent so far (best.pt)
    last_eval: dict = field(default_factory=dict)
    elapsed_before: float = 0.0  #: wall seconds of the run's earlier sessions (before a resume)
    session_start: float = field(default_factory=time.time)

    def elapsed(self) -> float:
        """Wall seconds of the whole run, earlier sessions of a resumed run included."""
        return self.elapsed_before + time.time() - self.session_start


def training_checkpoint(state: TrainingState) -> dict:
    """The checkpoint of a run after update ``state.iteration``: an agent checkpoint (``agents.ppo`` format:
    weights, config, rules) plus what ``restore`` needs to continue the run: the optimizer and, under
    ``train_state``, the games in flight, their pending decisions and every RNG (tensors and plain
    values, ``weights_only`` loadable)."""
    s = state
    ts = {
        "world_size": s.world_size, "best_metric": s.best_metric,
        "torch_rng": torch.get_rng_state(), "shuffle_rng": s.shuffle_rng.bit_generator.state,
        "game": game_state_dict(s.game), "storage": s.storage.state_dict(),
        "ep_points": torch.from_numpy(s.ep_points.copy()),
        "next_obs": torch.from_numpy(s.next_obs.copy()), "next_mask": torch.from_numpy(s.next_mask.copy()),
        "next_player": torch.from_numpy(s.next_player.copy()), "elapsed": s.elapsed(), **s.opponents.state_dict(),
    }
    device = next(s.network.parameters()).device
    if device.type == "cuda":  # on a GPU the rollout's and the snapshots' sampling draw from the GPU's generator
        ts["cuda_rng"] = torch.cuda.get_rng_state(device)
    return {
        "format": CHECKPOINT_FORMAT, "version": CHECKPOINT_VERSION, "obs_version": OBS_VERSION,
        "features_version": FEATURES_VERSION,
        "obs_size": OBS_SIZE, "num_actions": NUM_ACTIONS, "model_config": s.network.config,
        "model": s.network.state_dict(), "optimizer": s.optimizer.state_dict(), "args": asdict(s.args),
        "rules": s.rules.to_dict(), "global_step": s.global_step, "iteration": s.iteration, "eval": s.last_eval,
        "train_state": ts,
    }


def restore(state: TrainingState, ckpt: dict) -> None:
    """Put a checkpoint's run back into ``state``: weights, optimizer, opponent pool, and (rank 0 of a run with the
    same number of processes) the games in flight, pending decisions and RNG states, so that the next
    update is the one the uninterrupted run would have made. Other ranks get new games (``state.game`` is
    replaced), re-derived deterministically from (seed, rank, iteration)."""
    s, args, ts = state, state.args, ckpt["train_state"]
    s.network.load_state_dict(ckpt["model"])
    s.optimizer.load_state_dict(ckpt["optimizer"])
    s.iteration = int(ckpt["iteration"])
    start_iteration = s.iteration + 1
    s.opponents.load_pool(ts)
    if s.rank == 0 and ts["world_size"] == s.world_size:
        load_game_state(s.game, ts["game"])
        s.storage.load_state_dict(ts["storage"])
        s.opponents.load_state_dict(ts)
        s.ep_points[:] = ts["ep_points"].numpy()
        s.next_obs, s.next_mask = ts["next_obs"].numpy().copy(), ts["next_mask"].numpy().copy()
        s.next_player = ts["next_player"].numpy().copy()
        torch.set_rng_state(ts["torch_rng"].cpu())  # .cpu(): whatever map_location the checkpoint was loaded with
        device = next(s.network.parameters()).device
        if device.type == "cuda" and "cuda_rng" in ts:  # a run saved on a GPU, resumed on one (training_checkpoint)
            torch.cuda.set_rng_state(ts["cuda_rng"].cpu(), device)
        s.shuffle_rng.bit_generator.state = ts["shuffle_rng"]
    else:  # other ranks re-derive their games deterministically from (seed, rank, iteration)
        s.game = VectorGame(args.num_envs, s.rules, episode=args.episode, autoreset=True,
                            seed=[args.seed, s.rank, start_iteration])
        out = s.game.reset()
        s.opponents.rng = np.random.default_rng([args.seed, s.rank, start_iteration])
        s.opponents.assign(np.arange(args.num_envs))
        s.next_obs, s.next_mask = out.observation, out.legal_action_mask
        s.next_player = out.current_player.astype(np.int64)
        torch.manual_seed(args.seed + 1000 * s.rank + start_iteration)
    s.global_step = int(ckpt["global_step"])
    s.best_metric = float(ts["best_metric"])
    s.last_eval = ckpt.get("eval", {})
    s.elapsed_before, s.session_start = float(ts.get("elapsed", 0.0)), time.time()  # the wall clock continues
