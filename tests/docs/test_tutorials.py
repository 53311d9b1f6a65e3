"""docs/tutorials.md runs as written: each walk's files are written and its commands run, at the page's budgets.

A walk is a ``## `` section. A ``python`` block whose first line is ``# NAME.py`` is saved as that
file; every line of a ``bash`` block is one command, run in a fresh folder with the checkout's
``train.py``, ``evaluate.py`` and ``examples/`` named by their paths and the folder on
``PYTHONPATH`` (as a user's ``mybots.py`` beside ``evaluate.py`` would be found). The walk with an RL
library needs Tianshou: it is marked ``integrations`` (the integrations venv of ``.ci/run`` runs it).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "tutorials.md"
BLOCK = re.compile(r"^```(\w+)\n(.*?)^```$", re.S | re.M)


def walks(text: str | None = None) -> dict[str, list[tuple[str, str]]]:
    """Section title -> its fenced blocks, (language, code), in order (blocks without a language are output)."""
    text = PAGE.read_text(encoding="utf-8") if text is None else text
    found = {}
    for part in re.split(r"^## ", text, flags=re.M)[1:]:
        title, _, body = part.partition("\n")
        found[title.strip()] = [(m.group(1), m.group(2)) for m in BLOCK.finditer(body)]
    return found


def run_walk(title: str, tmp_path: Path) -> list[str]:
    """Write the walk's files and run its commands in ``tmp_path``; returns each command's stdout."""
    paths = [str(tmp_path), str(ROOT), *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(paths), "OMP_NUM_THREADS": "1"}
    outputs = []
    for language, code in walks()[title]:
        if language == "python":
            first = code.split("\n", 1)[0]
            assert re.fullmatch(r"# [\w/]+\.py", first), f"{title}: a python block must start with '# NAME.py'"
            (tmp_path / first[2:]).write_text(code, encoding="utf-8")
            continue
        assert language == "bash", f"{title}: unexpected block language {language!r}"
        for line in (ln for ln in code.split("\n") if ln.strip() and not ln.lstrip().startswith("#")):
            words = shlex.split(line)
            extra = {}
            while words and re.fullmatch(r"[A-Z_]+=.*", words[0]):  # VAR=value before the command
                key, _, value = words.pop(0).partition("=")
                extra[key] = str(tmp_path / value) if value.startswith("runs/") else value
            assert words[0] == "python", f"{title}: only python commands run here: {line}"
            script = words[1]
            path = ROOT / script if (ROOT / script).is_file() else None
            assert path is not None, f"{title}: {script} is not a file of the checkout"
            done = subprocess.run([sys.executable, str(path), *words[2:]], cwd=tmp_path, env={**env, **extra},
                                  capture_output=True, text=True, timeout=900)
            assert done.returncode == 0, f"{title}: `{line}` failed:\n{done.stderr[-3000:]}"
            outputs.append(done.stdout)
    return outputs


def test_the_page_has_the_four_walks():
    assert list(walks()) == ["Your first bot", "Train with okgin", "Train with an RL library", "Compare two agents"]


@pytest.mark.slow
def test_your_first_bot(tmp_path):
    (out,) = run_walk("Your first bot", tmp_path)
    assert re.search(r"MyBot\s+random\s+200 ", out), out


@pytest.mark.slow
def test_train_with_okgin(tmp_path):
    _, out = run_walk("Train with okgin", tmp_path)
    assert (tmp_path / "runs" / "tutorial" / "best.pt").is_file()
    assert re.search(r"ppo:best\.pt\s+simple\s+200 ", out), out


@pytest.mark.slow
@pytest.mark.integrations
def test_train_with_an_rl_library(tmp_path):
    pytest.importorskip("tianshou", reason="Tianshou is not installed: pip install -e '.[integrations]' (CI's integrations venv)")
    _, out = run_walk("Train with an RL library", tmp_path)
    assert (tmp_path / "runs" / "tutorial_tianshou" / "policy.pt").is_file()
    assert re.search(r"random\s+200 ", out), out


def _without_speed(text: str) -> list[str]:
    """The table's lines without the last column of its rows (hands/s, which depends on the machine)."""
    return [re.sub(r"\s+\d+$", "", line) for line in text.strip().split("\n")]


@pytest.mark.slow
def test_compare_two_agents_prints_the_recorded_table(tmp_path):
    (out,) = run_walk("Compare two agents", tmp_path)
    record = json.loads((ROOT / "docs" / "figures" / "tutorial_compare.json").read_text(encoding="utf-8"))
    assert _without_speed(out) == _without_speed(record["values"]["output"])


@pytest.mark.slow  # about a second: the fast loop (-m 'not slow') stays under a minute
def test_a_walk_that_fails_fails_the_test(tmp_path, monkeypatch):
    page = tmp_path / "tutorials.md"
    page.write_text("# T\n\n## Broken\n\n```bash\npython evaluate.py --agents nosuchbot random --hands 2\n```\n",
                    encoding="utf-8")
    monkeypatch.setattr(sys.modules[__name__], "PAGE", page)
    with pytest.raises(AssertionError, match="failed"):
        run_walk("Broken", tmp_path)


#: pages that open with "the shortest working code": their first python block runs as written
OPENINGS = ("docs/environments.md", "docs/vector_env.md", "docs/rendering.md", "docs/search.md")


@pytest.mark.parametrize("page", OPENINGS)
def test_a_page_opens_with_code_that_runs(page, tmp_path, monkeypatch):
    text = (ROOT / page).read_text(encoding="utf-8")
    head = text[:text.index("\n## ")] if "\n## " in text else text
    blocks = [code for language, code in ((m.group(1), m.group(2)) for m in BLOCK.finditer(head)) if language == "python"]
    assert blocks, f"{page} should open with a python block (the shortest working code)"
    monkeypatch.chdir(tmp_path)
    exec(compile(blocks[0], page, "exec"), {"__name__": "__opening__"})
