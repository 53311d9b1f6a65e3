"""The layout's layers: dependencies point one way, game <- features <- envs (render beside them).

Each room is imported in a fresh interpreter and ``sys.modules`` is read: the game loads nothing of
the features, the envs, the renderers or the test oracle; the features nothing of the envs. (Importing
any part of ``okgin_env`` runs its ``__init__``, which registers the Gymnasium ids: that registration
module is the one env module every room sees, and it imports no env.)
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

ALLOWED_ENV_MODULES = {"okgin_env.envs", "okgin_env.envs.registration"}


def loaded_after(statement: str) -> set[str]:
    code = f"import sys, json; {statement}; print(json.dumps(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return set(json.loads(out.stdout))


@pytest.mark.slow
@pytest.mark.parametrize("room,forbidden", [
    ("game", ("okgin_env.features", "okgin_env.envs", "okgin_env.render", "okgin_env.testing")),
    ("features", ("okgin_env.envs", "okgin_env.render", "okgin_env.testing")),
])
def test_a_room_imports_nothing_of_the_rooms_above_it(room, forbidden):
    modules = loaded_after(f"import okgin_env.{room}, pkgutil, importlib; "
                           f"[importlib.import_module(m.name) for m in pkgutil.iter_modules(okgin_env.{room}.__path__, "
                           f"'okgin_env.{room}.')]")
    above = {m for m in modules if m.startswith(forbidden)} - ALLOWED_ENV_MODULES
    assert not above, f"okgin_env.{room} imports {sorted(above)}"
    assert not {"torch", "pettingzoo", "okgin_agents"} & modules


@pytest.mark.slow
def test_the_game_runs_without_the_envs():
    modules = loaded_after("from okgin_env.game.core import VectorGame; VectorGame(2, seed=0).reset()")
    assert not {m for m in modules if m.startswith("okgin_env.envs")} - ALLOWED_ENV_MODULES
