"""What the tests share by name: the checkout's root, the tiny training run, a PPO checkpoint's contents.

Test modules import these as ``from support import ROOT`` (pytest puts ``tests/`` on ``sys.path``
through its ``conftest.py``), as they import ``engines`` and ``scenarios``; fixtures are in
``conftest.py``. Test files live in folders that mirror the packages (game, features, envs,
agents, trainer, programs, web, docs, arena, integrations); their basenames are unique.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from okgin_agents.ppo import (
    CHECKPOINT_FORMAT,
    CHECKPOINT_VERSION,
    FEATURES_VERSION,
    ActorCritic,
)

from okgin_env.game.actions import NUM_ACTIONS
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


def load_example_agent(spec: str, env_var: str, path: Path | str) -> Any:
    """``make_agent(spec)`` for an example's plug-in agent (``examples.NAME:Attr``) reading the file at
    ``path`` through its ``env_var``, as a user runs it from the checkout's root; both are restored after."""
    import os
    import sys

    from okgin_env import make_agent

    old, sys_path = os.environ.get(env_var), list(sys.path)
    os.environ[env_var] = str(path)
    sys.path.insert(0, str(ROOT))  # examples/ is a folder at the repository root
    try:
        return make_agent(spec, seed=0)
    finally:
        sys.path[:] = sys_path
        if old is None:
            del os.environ[env_var]
        else:
            os.environ[env_var] = old


def assert_plays_legally(agent: Any, games: int = 8, seed: int = 5) -> None:
    """``agent.act`` on the first decisions of ``games`` fresh deals: one legal int64 action a game."""
    import numpy as np

    from okgin_env import VectorGame

    out = VectorGame(games, seed=seed).reset()
    actions = agent.act(out.observation, out.legal_action_mask)
    assert actions.dtype == np.int64 and actions.shape == (games,)
    assert out.legal_action_mask[np.arange(games), actions].all()


def serve_in_thread(app: Any) -> tuple[str, Any, Any]:
    """(url, uvicorn server, thread): the web table's ``app`` served on a free port of 127.0.0.1 from a
    daemon thread, once it answers; stop it with ``server.should_exit = True`` and ``thread.join(10)``
    (the browser tests and the leaderboard's share this instead of each starting its own)."""
    import socket
    import threading
    import time

    import uvicorn

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.time() + 30
    while not server.started:
        assert time.time() < deadline, "the web server did not start"
        time.sleep(0.05)
    return f"http://127.0.0.1:{port}", server, thread
