"""The examples speak one command line, and every documented command passes only flags they take.

The flags an example takes are read from its source (its ``add_argument("--...")`` calls), so the
check needs none of the RL libraries installed. The documented commands are every
``examples/NAME.py ...`` in the README, the changelog, the docs pages, the figure records and the
examples' own docstrings (a command continued over lines with a backslash is one command).
docs/history.md is left out: its commands are dated, as they ran at the commit it names.
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
#: what every example that trains takes, with one meaning: training budget, evaluation hands, seed,
#: where the trained policy is saved, where torch runs
COMMON = ("--timesteps", "--hands", "--seed", "--out", "--device")
#: the examples that train a policy (pettingzoo_parallel.py only plays random legal moves)
TRAINING = ("cleanrl_ppo_vector", "sb3_maskable_ppo", "rllib_selfplay", "torchrl_ppo", "tianshou_ppo")
COMMAND = re.compile(r"examples/(\w+)\.py((?:[ \t]+(?:\\\n[ \t]*)?[^\s`|;&)\"'\\]+)*)")


def flags_of(source: str) -> set[str]:
    """The option strings of every ``add_argument`` call in a script's source, and --help."""
    found = {"--help", "-h"}
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "add_argument":
            found |= {a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)}
    return found


def documented_commands(root: Path = ROOT) -> list[tuple[str, str, list[str]]]:
    """(where, example, flags) for every ``examples/NAME.py --flag ...`` a user can read."""
    texts = {p: p.read_text(encoding="utf-8") for p in [root / "README.md", root / "CHANGELOG.md",
             *sorted((root / "docs").rglob("*.md")), *sorted((root / "examples").glob("*.py"))]
             if p.exists() and p != root / "docs" / "history.md"}
    for p in sorted((root / "docs" / "figures").glob("*.json")):
        record = json.loads(p.read_text(encoding="utf-8"))
        commands = record.get("command", [])
        texts[p] = "\n".join(commands if isinstance(commands, list) else [commands])
    found = []
    for path, text in texts.items():
        for m in COMMAND.finditer(text):
            line = text.count("\n", 0, m.start()) + 1
            args = m.group(2).replace("\\\n", " ").split()
            flags = [a.split("=", 1)[0] for a in args if a.startswith("--")]
            found.append((f"{path.relative_to(root).as_posix()}:{line}", m.group(1), flags))
    return found


def flag_problems(root: Path = ROOT) -> list[str]:
    """Each documented flag an example does not take, as one line."""
    known = {p.stem: flags_of(p.read_text(encoding="utf-8")) for p in (root / "examples").glob("*.py")}
    problems = []
    for where, example, flags in documented_commands(root):
        if example not in known:
            problems.append(f"{where}: examples/{example}.py does not exist")
            continue
        problems += [f"{where}: examples/{example}.py takes no {flag} (it takes {', '.join(sorted(known[example]))})"
                     for flag in flags if flag not in known[example]]
    return problems


def test_every_documented_command_passes_flags_the_example_takes():
    assert len(documented_commands()) >= 10, "the scan found almost no documented commands: is the pattern right?"
    problems = flag_problems()
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("example", TRAINING)
def test_the_training_examples_take_the_common_flags(example):
    flags = flags_of((EXAMPLES / f"{example}.py").read_text(encoding="utf-8"))
    missing = [f for f in COMMON if f not in flags]
    assert not missing, f"examples/{example}.py lacks {missing} (every training example takes {list(COMMON)})"


def test_the_check_fails_on_a_flag_an_example_does_not_take(tmp_path):
    (tmp_path / "examples").mkdir()
    (tmp_path / "docs" / "figures").mkdir(parents=True)
    (tmp_path / "examples" / "demo.py").write_text(
        'import argparse\np = argparse.ArgumentParser()\np.add_argument("--timesteps", type=int)\n', encoding="utf-8")
    (tmp_path / "README.md").write_text(
        "Run `python examples/demo.py --timesteps 10 --total-timesteps 5`, or\n\n"
        "    python examples/demo.py --timesteps 10 \\\n        --eval-hands 3\n", encoding="utf-8")
    problems = flag_problems(tmp_path)
    assert any("takes no --total-timesteps" in p for p in problems), problems
    assert any("README.md:3" in p and "takes no --eval-hands" in p for p in problems), problems
    assert not any("--timesteps " in p.split("takes no")[1][:13] for p in problems), problems
