"""okgin as users install it: the wheel's contents, and okgin beside packages whose top-level
names it used to take (HuggingFace ``evaluate``, OpenAI's ``openai-agents`` with its ``agents``).

The wheel test builds ``pip wheel .``; the co-installation test makes a fresh virtual environment
outside the checkout, installs the wheel and both packages from PyPI and runs, from a folder that
is not the checkout, the registered env with ``opponent="expert"``, the ``okgin-evaluate``
command and the README's library example. torch is left out of that environment on purpose: the
checks need none of it (only ``ppo:`` agents and training import torch), and its default build
is several GB.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import tomllib
from support import ROOT

COMMANDS = ("okgin-train", "okgin-evaluate", "okgin-play")


def _run(cmd: list[str], cwd: Path, timeout: int = 900, env: dict | None = None) -> subprocess.CompletedProcess:
    done = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env)
    assert done.returncode == 0, f"{' '.join(map(str, cmd))} failed ({done.returncode}):\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    # built from a copy without build outputs: setuptools would pack a stale build/lib into the wheel
    src = out / "src"
    shutil.copytree(ROOT, src, ignore=shutil.ignore_patterns(".git", ".venv", "venv", "build", "dist", "runs", "*.egg-info",
                                                             "__pycache__", ".pytest_cache", ".hypothesis"))
    _run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(out), str(src)], cwd=out)
    (path,) = out.glob("okgin-*.whl")
    return path


@pytest.mark.slow  # builds the wheel (about 10 s)
def test_wheel_has_no_colliding_names_and_declares_the_commands(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    top = {n.split("/")[0] for n in names if not n.split("/")[0].endswith(".dist-info")}
    assert top == {"okgin", "okgin_env", "okgin_agents", "okgin_trainer"}, top
    # no launcher or experiment module travels with the package
    assert not [n for n in names if re.search(r"(^|/)(experiments|distill|improve)(/|\.py$)", n)]
    entry_points = next(zipfile.ZipFile(wheel).read(n).decode() for n in names if n.endswith("entry_points.txt"))
    for command in COMMANDS:
        assert re.search(rf"^{command} = okgin\.", entry_points, re.M), entry_points
    assert "okgin_agents" in entry_points  # the bundled bots register under their installed name
    # every package of the checkout travels (a sub-package missing from pyproject's list imports nowhere but here)
    installed = {"agents": "okgin_agents", "trainer": "okgin_trainer"}
    for init in (p for top in ("okgin_env", "okgin", "agents", "trainer") for p in (ROOT / top).rglob("__init__.py")):
        rel = init.relative_to(ROOT).parts
        assert "/".join((installed.get(rel[0], rel[0]), *rel[1:])) in names, f"{init.relative_to(ROOT)} is not in the wheel"


def _readme_example() -> str:
    """The README's library example: its first python block that uses the core and the bots."""
    blocks = re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(encoding="utf-8"), re.S)
    return next(b for b in blocks if "VectorGame(" in b and "okgin_agents" in b)


@pytest.mark.slow  # a fresh venv and packages from PyPI: a minute or two
def test_okgin_works_beside_huggingface_evaluate_and_openai_agents(wheel, tmp_path):
    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", str(venv)], cwd=tmp_path)
    bindir = venv / ("Scripts" if os.name == "nt" else "bin")
    py = str(bindir / "python")
    deps = [d for d in tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
            if not re.match(r"(torch|tensorboard)\b", d)]
    _run([py, "-m", "pip", "install", "-q", "--no-deps", str(wheel)], cwd=tmp_path)
    _run([py, "-m", "pip", "install", "-q", *deps, "evaluate", "openai-agents"], cwd=tmp_path)
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["PATH"] = str(bindir) + os.pathsep + env.get("PATH", "")
    # the other packages really own their names here
    owners = _run([py, "-c", "import evaluate, agents; print(evaluate.__file__); print(agents.__file__)"],
                  cwd=outside, env=env).stdout
    assert str(venv) in owners and "okgin" not in owners.replace(str(tmp_path), ""), owners
    check = ("import gymnasium, numpy as np, okgin_env\n"
             "env = gymnasium.make('okgin/OklahomaGin-v0', opponent='expert')\n"
             "obs, info = env.reset(seed=0)\n"
             "obs, r, term, trunc, info = env.step(int(np.flatnonzero(info['action_mask'])[0]))\n"
             "print('env ok', obs.shape)\n")
    assert "env ok" in _run([py, "-c", check], cwd=outside, env=env).stdout
    table = _run([str(bindir / "okgin-evaluate"), "--agents", "simple", "expert", "--hands", "40", "--no-progress"],
                 cwd=outside, env=env).stdout
    assert re.search(r"^simple\s+expert\s+40\s", table, re.M), table
    example = _run([py, "-c", _readme_example()], cwd=outside, env=env).stdout
    assert "points per hand" in example, example
