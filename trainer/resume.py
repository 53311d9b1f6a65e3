"""Resuming a killed run: its config (``resume_config``), its checkpoint (``training_checkpoint``:
the weights and everything else the run needs) and putting that back (``restore``), so the resumed
run continues exactly where the uninterrupted one would be.

Only rank 0's games are saved. Other ranks, and every rank of a run resumed with a different
number of processes, re-derive their games from (seed, rank, iteration) instead.
"""

from __future__ import annotations

from dataclasses import dataclass

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


def training_checkpoint(*, network: torch.nn.Module, optimizer: torch.optim.Optimizer, config: dict, rules: Rules,
                        global_step: int, iteration: int, last_eval: dict, world_size: int, best_metric: float,
                        elapsed: float, game: VectorGame, storage, opponents: Opponents, ep_points: np.ndarray,
                        next_obs: np.ndarray, next_mask: np.ndarray, next_player: np.ndarray,
                        shuffle_rng: np.random.Generator) -> dict:
    """The checkpoint of a run after update ``iteration``: an agent checkpoint (``agents.ppo`` format:
    weights, config, rules) plus what ``restore`` needs to continue the run: the optimizer and, under
    ``train_state``, the games in flight, their pending decisions and every RNG (tensors and plain
    values, ``weights_only`` loadable). ``config`` is ``asdict(args)``; ``storage`` is train.py's TurnStorage."""
    ts = {
        "world_size": world_size, "best_metric": best_metric,
        "torch_rng": torch.get_rng_state(), "shuffle_rng": shuffle_rng.bit_generator.state,
        "game": game_state_dict(game), "storage": storage.state_dict(), "ep_points": torch.from_numpy(ep_points.copy()),
        "next_obs": torch.from_numpy(next_obs.copy()), "next_mask": torch.from_numpy(next_mask.copy()),
        "next_player": torch.from_numpy(next_player.copy()), "elapsed": elapsed, **opponents.state_dict(),
    }
    return {
        "format": CHECKPOINT_FORMAT, "version": CHECKPOINT_VERSION, "obs_version": OBS_VERSION,
        "features_version": FEATURES_VERSION,
        "obs_size": OBS_SIZE, "num_actions": NUM_ACTIONS, "model_config": network.config,
        "model": network.state_dict(), "optimizer": optimizer.state_dict(), "args": config,
        "rules": rules.to_dict(), "global_step": global_step, "iteration": iteration, "eval": last_eval,
        "train_state": ts,
    }


@dataclass
class Resumed:
    """Where a resumed run continues (the objects passed to ``restore`` are restored in place)."""

    game: VectorGame  #: the same game object, or a new one where the games are re-derived
    next_obs: np.ndarray
    next_mask: np.ndarray
    next_player: np.ndarray
    global_step: int
    start_iteration: int  #: the first update still to do
    best_metric: float
    last_eval: dict
    elapsed: float  #: wall seconds of the earlier sessions


def restore(ckpt: dict, *, args, rules: Rules, rank: int, world_size: int, network: torch.nn.Module,
            optimizer: torch.optim.Optimizer, game: VectorGame, storage, opponents: Opponents,
            ep_points: np.ndarray, shuffle_rng: np.random.Generator) -> Resumed:
    """Put a checkpoint's run back: weights, optimizer, opponent pool, and (rank 0 of a run with the
    same number of processes) the games in flight, pending decisions and RNG states, so that the next
    update is the one the uninterrupted run would have made. ``args`` is the run's ``train.Args``."""
    ts = ckpt["train_state"]
    network.load_state_dict(ckpt["model"])
    optimizer.load_state_dict(ckpt["optimizer"])
    start_iteration = int(ckpt["iteration"]) + 1
    opponents.load_pool(ts)
    if rank == 0 and ts["world_size"] == world_size:
        load_game_state(game, ts["game"])
        storage.load_state_dict(ts["storage"])
        opponents.load_state_dict(ts)
        ep_points[:] = ts["ep_points"].numpy()
        next_obs, next_mask = ts["next_obs"].numpy().copy(), ts["next_mask"].numpy().copy()
        next_player = ts["next_player"].numpy().copy()
        torch.set_rng_state(ts["torch_rng"])
        shuffle_rng.bit_generator.state = ts["shuffle_rng"]
    else:  # other ranks re-derive their games deterministically from (seed, rank, iteration)
        game = VectorGame(args.num_envs, rules, episode=args.episode, autoreset=True,
                          seed=[args.seed, rank, start_iteration])
        out = game.reset()
        opponents.rng = np.random.default_rng([args.seed, rank, start_iteration])
        opponents.assign(np.arange(args.num_envs))
        next_obs, next_mask = out.observation, out.legal_action_mask
        next_player = out.current_player.astype(np.int64)
        torch.manual_seed(args.seed + 1000 * rank + start_iteration)
    return Resumed(game=game, next_obs=next_obs, next_mask=next_mask, next_player=next_player,
                   global_step=int(ckpt["global_step"]), start_iteration=start_iteration,
                   best_metric=float(ts["best_metric"]), last_eval=ckpt.get("eval", {}),
                   elapsed=float(ts.get("elapsed", 0.0)))
