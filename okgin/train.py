"""PPO self-play trainer for Oklahoma Gin (after CleanRL's ``ppo.py``).

    python train.py                                   # the quick config: about 2 CPU minutes, beats simple
    python train.py --config configs/default.yaml     # stage 1 of the shipped agent's recipe
    python train.py --config configs/default.yaml --set learning_rate=1e-4 --set num_envs=2048
    python train.py --resume runs/<run>/checkpoint.pt # continue a killed run where it left off
    torchrun --nproc_per_node 2 train.py --config ... # data-parallel (gloo on CPU, nccl on GPU)
    python train.py --help                            # every config key with its documentation

This is the command: it reads the config (``okgin_trainer.config``) and calls
``okgin_trainer.training.train(args) -> TrainResult``, the same function the recipe and the exploit
call in-process. The loop reads top to bottom in ``okgin_trainer`` (the checkout's ``trainer/``):
``training`` (setup, and per update: rollout, GAE, update, snapshot, log, evaluate, checkpoint),
``storage`` (the rollout storage and GAE, per player), ``update`` (the PPO loss and update), the
config keys and their checks (``config``), the behaviour-cloning warm start (``bc``), the opponents
and their pool (``pool``), the run's state, its checkpoint and resume (``resume``).

Two players take turns, so the usual one-agent PPO bookkeeping does not fit as is:

* Rollouts step ``VectorGame`` directly (``num_envs`` games, hand episodes, autoreset). Each env
  step is one decision of one player in every game; only the learner's decisions are stored.
* Credit is per player: a stored decision's next state is the *same player's* next decision,
  rewards ``rewards[:, p]`` go to player p's latest decision (a hand's points arrive after the
  opponent's knock), and GAE runs along each player's own chain. The value of the opponent's
  turn is never mixed into the learner's. A decision still waiting for its successor when a
  rollout ends is carried into the next rollout (storage rows 0 and 1) and trained there.
* Opponents (``trainer/pool.py``): each game gets one when it is dealt: pure self-play (both seats
  are learner decisions), a frozen past snapshot from the pool, or any agent spec (a bundled bot,
  ``ppo:PATH``, ``module:Attr``), in the proportions of ``opponent_mix``. Snapshots join the pool
  every ``snapshot_every`` updates, or early when the learner beats the pool by ``snapshot_margin``.
* Runs are never lost (``trainer/checkpoint.py``): a fixed ``run_name`` whose directory holds an
  earlier run moves that run aside; checkpoints are written atomically, and ``--resume`` continues
  one exactly (``trainer/resume.py``). See docs/training.md.
* Every ``eval_every`` updates the greedy policy plays ``eval_opponents`` on fixed duplicate deals
  (``okgin_trainer.matches.play_match``); ``best.pt`` keeps the best checkpoint.
"""

from __future__ import annotations

import os

# Idle OpenMP threads sleep instead of spinning: with spinning, two torch threads on a 2-core machine
# next to one busy process ran a minibatch 5x slower than one thread; sleeping, as fast as one thread.
# It has to be set before torch (and its OpenMP runtime) loads; a user's own setting wins.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

from okgin_trainer import config  # noqa: E402
from okgin_trainer.cli import run_cli  # noqa: E402
from okgin_trainer.config import Args, key_help  # noqa: E402,F401  (API: the tests read them here)
from okgin_trainer.storage import CARRY, Decisions, TurnStorage, per_player_gae  # noqa: E402,F401  (API)
from okgin_trainer.training import TrainResult, evaluate_policy, make_learner, train  # noqa: E402,F401  (API)
from okgin_trainer.update import explained_variance, ppo_loss, ppo_update  # noqa: E402,F401  (API)

#: ``python train.py`` with no --config runs the quick config. It ships inside the package (okgin/quick.yaml), so
#: ``okgin-train`` works installed from a wheel too; configs/quick.yaml is the same file (tests/trainer/test_train.py checks).
DEFAULT_CONFIG = os.path.join(os.path.dirname(os.path.abspath(__file__)), "quick.yaml")


def parse_cli(argv: list[str] | None = None) -> tuple[Args, str | None]:
    """(args, resume path) from the command line (``okgin_trainer.config.parse_cli`` with this program's defaults)."""
    return config.parse_cli(argv, description=__doc__.splitlines()[0], default_config=DEFAULT_CONFIG)


def main(argv: list[str] | None = None) -> dict:
    """Train as the command line says; returns {"run_path", "global_step", "eval": the last evaluation}."""
    args, resume_path = parse_cli(argv)
    result = train(args, resume_path)
    return {"run_path": result.run_path, "global_step": result.global_step, "eval": result.last_eval}


def cli() -> None:
    """The ``okgin-train`` command (and ``python train.py``): ``main`` with one-line errors."""
    run_cli(main, errors=(ValueError, FileNotFoundError))


if __name__ == "__main__":
    cli()
