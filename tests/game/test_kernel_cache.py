"""Compiled kernels are reused only while every source they were compiled from is unchanged.

A scratch copy of ``okgin_env`` is imported in fresh interpreters that share one cache folder. A
caller (``features.rows.deadwood``) compiles in a callee from another module
(``game.melds.min_deadwood_of_masks``): after an edit of the callee the caller must give the edited
result (numba's own ``cache=True`` kept the old one while the caller's file was unchanged), and
after undoing the edit the original result again, from the cache.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import okgin_env

PACKAGE = Path(okgin_env.__file__).parent
PROBE = """
import numpy as np
from okgin_env.game import jit
from okgin_env.features import rows
ms = np.array([0b111, 0b1000, 0, 0], np.int64)  # A-2-3 of the first suit and a lone 4 of the second
print(rows.deadwood(ms, np.zeros(8, np.int64)), jit.cache_dir())
"""
CALLEE = "def min_deadwood_of_masks(ms: np.ndarray, run_dw: np.ndarray, cand: np.ndarray, tmp: np.ndarray) -> int:\n"


def probe(root: Path, cache: Path) -> tuple[int, str]:
    """(deadwood the caller computes, cache folder it used) in a fresh interpreter over ``root``."""
    env = {**os.environ, "PYTHONPATH": str(root), "NUMBA_CACHE_DIR": str(cache), "OKGIN_KERNEL_CACHE": "1"}
    out = subprocess.run([sys.executable, "-c", PROBE], env=env, cwd=root, capture_output=True, text=True, check=True)
    value, folder = out.stdout.split()
    return int(value), folder


@pytest.mark.slow
def test_an_edited_callee_is_seen_by_its_cached_callers_and_undoing_it_restores_them(tmp_path):
    root, cache = tmp_path / "checkout", tmp_path / "cache"
    shutil.copytree(PACKAGE, root / "okgin_env", ignore=shutil.ignore_patterns("__pycache__"))
    melds = root / "okgin_env" / "game" / "melds.py"
    original = melds.read_text()
    assert original.count(CALLEE) == 1, "the probe's callee moved: update CALLEE"

    before, folder = probe(root, cache)
    assert before == 4  # the 4 is deadwood; A-2-3 is a run
    assert Path(folder).parent == cache / "okgin"
    edited = original.replace(CALLEE, CALLEE + "    return 1000\n")
    melds.write_text(edited)
    changed, changed_folder = probe(root, cache)
    assert changed == 1000, "the caller kept the callee it had compiled before the edit"
    assert changed_folder != folder
    melds.write_text(original)
    assert probe(root, cache) == (before, folder)
    assert sorted(p.name for p in (cache / "okgin").iterdir()) == sorted({Path(folder).name, Path(changed_folder).name})


def test_the_kernel_cache_follows_the_sources_kernels_import(tmp_path):
    """The hashed files: every module with kernels and what they import (constants count), not the envs."""
    from okgin_env.game import jit

    files = {p.relative_to(PACKAGE.parent).as_posix() for p in jit._dependency_files({"okgin_env": PACKAGE})}
    assert {"okgin_env/game/melds.py", "okgin_env/game/observation.py", "okgin_env/game/cards.py",
            "okgin_env/features/rows.py", "okgin_env/envs/vector_kernels.py"} <= files
    assert not {"okgin_env/envs/aec.py", "okgin_env/envs/single_agent.py", "okgin_env/render/text.py"} & files
