"""Resuming a killed run: its config (``resume_config``), the run's state in one object
(``TrainingState``), its checkpoint (``TrainingState.state_dict``: the weights and everything else
the run needs) and putting that back (``TrainingState.load_state_dict``), so the resumed run
continues exactly where the uninterrupted one would be.

Only rank 0's games are saved. Other ranks, and every rank of a run resumed with a different
number of processes, re-derive their games from (seed, rank, iteration) instead.
"""

from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass, field
from typing import ClassVar

import numpy as np
import torch
from okgin_agents.ppo import CHECKPOINT_FORMAT, CHECKPOINT_VERSION, FEATURES_VERSION, ActorCritic
from okgin_trainer.checkpoint import game_state_dict, load_game_state
from okgin_trainer.config import RESUME_OVERRIDABLE, Args, resume_config  # noqa: F401  (resume_config: API)
from okgin_trainer.pool import Opponents
from okgin_trainer.storage import TurnStorage

from okgin_env.game.actions import NUM_ACTIONS
from okgin_env.game.core import VectorGame
from okgin_env.game.observation import OBS_SIZE, OBS_VERSION
from okgin_env.game.rules import Rules


@dataclass
class TrainingState:
    """Everything a run changes as it trains, in one object: ``okgin_trainer.training`` steps it,
    :meth:`state_dict` saves it (the checkpoint) and :meth:`load_state_dict` puts a saved one back.

    The run's fixed facts (config, rules, process) come first; then the learner, the games in
    flight with their pending decisions, and the counters. ``iteration`` is the last update done."""

    args: Args
    rules: Rules
    rank: int
    world_size: int
    network: ActorCritic
    optimizer: torch.optim.Optimizer
    game: VectorGame
    storage: TurnStorage  #: the learner's decisions of the rollout, linked per player
    opponents: Opponents
    shuffle_rng: np.random.Generator  #: minibatch order
    ep_points: np.ndarray  #: (num_envs, 2) float64 raw points of each running episode
    # the games' next decision, set by start_games (or a checkpoint)
    next_obs: np.ndarray = field(default_factory=lambda: np.zeros((0, OBS_SIZE), np.float32))  #: (num_envs, OBS_SIZE)
    next_mask: np.ndarray = field(default_factory=lambda: np.zeros((0, NUM_ACTIONS), bool))  #: (num_envs, NUM_ACTIONS)
    next_player: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))  #: (num_envs,) the player to move
    global_step: int = 0
    iteration: int = 0
    best_metric: float = -math.inf  #: best points per hand against best_metric_opponent so far (best.pt)
    last_eval: dict[str, dict] = field(default_factory=dict)  #: the latest evaluation, per opponent spec
    elapsed_before: float = 0.0  #: wall seconds of the run's earlier sessions (before a resume)
    session_start: float = field(default_factory=time.time)

    #: the games' in-flight arrays, saved as tensors under ``train_state`` by their field names
    IN_FLIGHT: ClassVar[tuple[str, ...]] = ("ep_points", "next_obs", "next_mask", "next_player")

    def elapsed(self) -> float:
        """Wall seconds of the whole run, earlier sessions of a resumed run included."""
        return self.elapsed_before + time.time() - self.session_start

    @property
    def device(self) -> torch.device:
        return next(self.network.parameters()).device

    def start_games(self, game: VectorGame) -> None:
        """Deal ``game`` (a new run's, or a rank's re-derived one on resume) and give every game an opponent."""
        self.game = game
        out = game.reset()
        self.opponents.assign(np.arange(self.args.num_envs))
        self.next_obs, self.next_mask = out.observation, out.legal_action_mask
        self.next_player = out.current_player.astype(np.int64)

    def state_dict(self) -> dict:
        """The checkpoint of the run after update ``iteration``: an agent checkpoint (``agents.ppo`` format:
        weights, config, rules) plus what :meth:`load_state_dict` needs to continue the run: the optimizer and,
        under ``train_state``, the games in flight, their pending decisions and every RNG (tensors and plain
        values, ``weights_only`` loadable)."""
        ts = {
            "world_size": self.world_size, "best_metric": self.best_metric,
            "torch_rng": torch.get_rng_state(), "shuffle_rng": self.shuffle_rng.bit_generator.state,
            "game": game_state_dict(self.game), "storage": self.storage.state_dict(),
            **{name: torch.from_numpy(getattr(self, name).copy()) for name in self.IN_FLIGHT},
            "elapsed": self.elapsed(), **self.opponents.state_dict(),
        }
        if self.device.type == "cuda":  # on a GPU the rollout's and the snapshots' sampling draw from its generator
            ts["cuda_rng"] = torch.cuda.get_rng_state(self.device)
        return {
            "format": CHECKPOINT_FORMAT, "version": CHECKPOINT_VERSION, "obs_version": OBS_VERSION,
            "features_version": FEATURES_VERSION,
            "obs_size": OBS_SIZE, "num_actions": NUM_ACTIONS, "model_config": self.network.config,
            "model": self.network.state_dict(), "optimizer": self.optimizer.state_dict(), "args": asdict(self.args),
            "rules": self.rules.to_dict(), "global_step": self.global_step, "iteration": self.iteration,
            "eval": self.last_eval, "train_state": ts,
        }

    def load_state_dict(self, ckpt: dict) -> None:
        """Put a checkpoint's run back: weights, optimizer, opponent pool, counters and (rank 0 of a run with the
        same number of processes) the games in flight, pending decisions and RNG states, so that the next
        update is the one the uninterrupted run would have made. Other ranks get new games, re-derived
        deterministically from (seed, rank, iteration)."""
        ts = ckpt["train_state"]
        self.network.load_state_dict(ckpt["model"])
        self.optimizer.load_state_dict(ckpt["optimizer"])
        self.iteration = int(ckpt["iteration"])
        self.opponents.load_pool(ts)
        if self.rank == 0 and ts["world_size"] == self.world_size:
            self._load_games(ts)
        else:
            self._rederive_games(self.iteration + 1)
        self.global_step = int(ckpt["global_step"])
        self.best_metric = float(ts["best_metric"])
        self.last_eval = ckpt.get("eval", {})
        self.elapsed_before, self.session_start = float(ts.get("elapsed", 0.0)), time.time()  # the clock continues

    def _load_games(self, ts: dict) -> None:
        """The saved games in flight, their pending decisions, the opponents' state and every RNG."""
        load_game_state(self.game, ts["game"])
        self.storage.load_state_dict(ts["storage"])
        self.opponents.load_state_dict(ts)
        for name in self.IN_FLIGHT:
            setattr(self, name, ts[name].numpy().copy())
        torch.set_rng_state(ts["torch_rng"].cpu())  # .cpu(): whatever map_location the checkpoint was loaded with
        if self.device.type == "cuda" and "cuda_rng" in ts:  # a run saved on a GPU, resumed on one
            torch.cuda.set_rng_state(ts["cuda_rng"].cpu(), self.device)
        self.shuffle_rng.bit_generator.state = ts["shuffle_rng"]

    def _rederive_games(self, start_iteration: int) -> None:
        """New games for a rank whose games were not saved, from (seed, rank, iteration)."""
        args = self.args
        self.opponents.rng = np.random.default_rng([args.seed, self.rank, start_iteration])
        self.start_games(VectorGame(args.num_envs, self.rules, episode=args.episode, autoreset=True,
                                    seed=[args.seed, self.rank, start_iteration]))
        torch.manual_seed(args.seed + 1000 * self.rank + start_iteration)
