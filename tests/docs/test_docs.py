"""The docs: every figure a page shows equals its record, and the reference site builds strictly.

Figures follow the convention of ``docs/figures/README.md``: a record ``docs/figures/NAME.json``
holds each figure's value with the command, machine and date that produced it; a page shows an
inline figure as a link to its record whose title is the figure's key,
``[+4.01 [+3.69, +4.33]](figures/exploitability_20m.json "simple")``, and a table or a program's
output as a Markdown table or fenced block right under the line ``<!-- figure: NAME KEY -->``.
Checked here: every marker names a figure of a record and shows exactly its value, every figure
of every record is shown somewhere, and each record says how it was measured.
"""

from __future__ import annotations

import json
import os
import posixpath
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from support import ROOT

FIGURES = ROOT / "docs" / "figures"
#: a record's keys besides its figures; each is required
RECORD_FIELDS = ("title", "command", "machine", "date", "values")
#: an inline figure: [shown value](…figures/NAME.json "KEY"); the value may hold one level of brackets
INLINE = re.compile(r'\[((?:[^\[\]]|\[[^\[\]]*\])*)\]\(([^()\s]*?figures/([\w.-]+)\.json)\s+"([^"]+)"\)')
#: a block figure: this line, then (after blank lines) a Markdown table or a fenced block
BLOCK = re.compile(r"^<!-- figure: ([\w.-]+) ([\w.-]+) -->\s*$")


@dataclass(frozen=True)
class Shown:
    """One figure as a page shows it."""

    page: str
    line: int
    record: str
    key: str
    value: str | list[list[str]]


def pages(root: Path = ROOT) -> list[Path]:
    """Every file that may show a figure: README, changelog, the docs pages, the examples."""
    found = [root / "README.md", root / "CHANGELOG.md", *sorted((root / "docs").rglob("*.md")),
             *sorted((root / "examples").glob("*.py"))]
    return [p for p in found if p.exists()]


def table_rows(lines: list[str]) -> list[list[str]]:
    """A Markdown table's cells row by row, header included, the |---| rule left out."""
    rows = []
    for line in lines:
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if all(re.fullmatch(r":?-{3,}:?", c) for c in cells):
            continue
        rows.append(cells)
    return rows


def shown_figures(path: Path, root: Path = ROOT) -> list[Shown]:
    """The figures marked on one page (inline links and blocks under a figure comment)."""
    rel = path.relative_to(root).as_posix()
    lines = path.read_text(encoding="utf-8").split("\n")
    found, fence = [], ""
    for i, line in enumerate(lines):
        opening = re.match(r"\s*(`{3,}|~{3,})", line)
        if fence:  # inside a fenced block: examples of the convention, not figures
            if opening and opening.group(1).startswith(fence) and not line.strip().strip(fence[0]):
                fence = ""
            continue
        if opening:
            fence = opening.group(1)
            continue
        for m in INLINE.finditer(line):
            target = posixpath.normpath(posixpath.join(posixpath.dirname(rel), m.group(2)))
            if target != f"docs/figures/{m.group(3)}.json":
                raise AssertionError(f"{rel}:{i + 1}: the link '{m.group(2)}' does not lead to "
                                     f"docs/figures/{m.group(3)}.json from this page")
            found.append(Shown(rel, i + 1, m.group(3), m.group(4), m.group(1)))
        block = BLOCK.match(line)
        if not block:
            continue
        j = i + 1
        while j < len(lines) and not lines[j].strip():
            j += 1
        if j < len(lines) and lines[j].lstrip().startswith("|"):
            k = j
            while k < len(lines) and lines[k].lstrip().startswith("|"):
                k += 1
            value: str | list[list[str]] = table_rows(lines[j:k])
        elif j < len(lines) and re.match(r"\s*(`{3,}|~{3,})", lines[j]):
            mark = re.match(r"\s*(`{3,}|~{3,})", lines[j]).group(1)
            k = j + 1
            while k < len(lines) and lines[k].strip() != mark:
                k += 1
            value = "\n".join(lines[j + 1:k])
        else:
            raise AssertionError(f"{rel}:{i + 1}: '{line.strip()}' is not followed by a table or a fenced block")
        found.append(Shown(rel, i + 1, block.group(1), block.group(2), value))
    return found


def load_records(folder: Path = FIGURES) -> dict[str, dict]:
    """Every record, by name, each checked for the fields that say how it was measured."""
    records = {}
    for path in sorted(folder.glob("*.json")):
        record = json.loads(path.read_text(encoding="utf-8"), object_pairs_hook=_unique_keys(path.name))
        missing = [f for f in RECORD_FIELDS if not record.get(f)]
        assert not missing, f"{path.name}: missing {missing} (a record needs {list(RECORD_FIELDS)})"
        assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", record["date"]), f"{path.name}: date {record['date']!r} is not YYYY-MM-DD"
        for key, value in record["values"].items():
            ok = isinstance(value, str) or (isinstance(value, list) and all(
                isinstance(row, list) and all(isinstance(c, str) for c in row) for row in value))
            assert ok, f"{path.name}: figure {key!r} must be a string or a list of rows of strings"
        records[path.stem] = record
    return records


def _unique_keys(name: str):
    """A json object_pairs_hook that refuses a key given twice (json.loads would keep the last value silently)."""
    def hook(pairs: list[tuple[str, object]]) -> dict:
        keys = [k for k, _ in pairs]
        twice = sorted({k for k in keys if keys.count(k) > 1})
        assert not twice, f"{name}: key(s) {twice} given twice: one key, one value"
        return dict(pairs)
    return hook


def figure_problems(root: Path = ROOT, folder: Path = FIGURES) -> list[str]:
    """Each disagreement between the pages and the records, as one readable line."""
    records = load_records(folder)
    problems, seen = [], set()
    for page in pages(root):
        for s in shown_figures(page, root):
            where = f"{s.page}:{s.line}"
            if s.record not in records:
                problems.append(f"{where}: no record docs/figures/{s.record}.json (records: {sorted(records)})")
                continue
            values = records[s.record]["values"]
            if s.key not in values:
                problems.append(f"{where}: {s.record}.json has no figure {s.key!r} (it has {sorted(values)})")
                continue
            seen.add((s.record, s.key))
            if s.value != values[s.key]:
                problems.append(f"{where}: shows {s.record}/{s.key} as {s.value!r}; the record says {values[s.key]!r}")
    for name, record in records.items():
        for key in record["values"]:
            if (name, key) not in seen:
                problems.append(f"docs/figures/{name}.json: figure {key!r} is shown on no page")
    return problems


def test_every_figure_equals_its_record():
    assert load_records(), "no records in docs/figures"
    problems = figure_problems()
    assert not problems, "figures and records disagree:\n" + "\n".join(problems)


def _tiny_repo(tmp_path: Path, page: str, values: dict) -> Path:
    (tmp_path / "docs" / "figures").mkdir(parents=True)
    (tmp_path / "docs" / "page.md").write_text(page, encoding="utf-8")
    record = {"title": "t", "command": "c", "machine": "m", "date": "2026-12-03", "values": values}
    (tmp_path / "docs" / "figures" / "rec.json").write_text(json.dumps(record), encoding="utf-8")
    return tmp_path


PAGE = """Inline: [+1.50 [+1.00, +2.00]](figures/rec.json "a").

<!-- figure: rec tab -->
| x | y |
|---|---|
| 1 | 2 |

<!-- figure: rec out -->
```
line one
line two
```
"""
VALUES = {"a": "+1.50 [+1.00, +2.00]", "tab": [["x", "y"], ["1", "2"]], "out": "line one\nline two"}


def test_the_check_passes_a_page_that_matches_its_record(tmp_path):
    root = _tiny_repo(tmp_path, PAGE, VALUES)
    assert [s.key for s in shown_figures(root / "docs" / "page.md", root)] == ["a", "tab", "out"]
    assert figure_problems(root, root / "docs" / "figures") == []


@pytest.mark.parametrize("page, values, problem", [
    (PAGE.replace("+1.50 [", "+1.49 ["), VALUES, "shows rec/a as '+1.49"),        # page edited, record not
    (PAGE, {**VALUES, "a": "+1.51 [+1.00, +2.00]"}, "the record says '+1.51"),   # record edited, page not
    (PAGE.replace("| 1 | 2 |", "| 1 | 3 |"), VALUES, "shows rec/tab"),            # one table cell
    (PAGE.replace("line two", "line 2"), VALUES, "shows rec/out"),                 # one output line
    (PAGE, {**VALUES, "new": "7"}, "figure 'new' is shown on no page"),            # a figure nobody shows
    (PAGE.replace('"a"', '"b"'), VALUES, "has no figure 'b'"),                     # a key the record lacks
    (PAGE.replace("figures/rec.json", "figures/other.json"), VALUES, "no record docs/figures/other.json"),
])
def test_the_check_fails_when_page_and_record_disagree(tmp_path, page, values, problem):
    root = _tiny_repo(tmp_path, page, values)
    problems = figure_problems(root, root / "docs" / "figures")
    assert any(problem in p for p in problems), problems


def test_a_record_must_say_how_it_was_measured(tmp_path):
    root = _tiny_repo(tmp_path, PAGE, VALUES)
    record = json.loads((root / "docs" / "figures" / "rec.json").read_text())
    del record["machine"]
    (root / "docs" / "figures" / "rec.json").write_text(json.dumps(record))
    with pytest.raises(AssertionError, match="missing \\['machine'\\]"):
        load_records(root / "docs" / "figures")


def test_a_figure_link_must_lead_to_its_record(tmp_path):
    root = _tiny_repo(tmp_path, PAGE.replace("](figures/rec.json", "](../figures/rec.json"), VALUES)
    with pytest.raises(AssertionError, match="does not lead to docs/figures/rec.json"):
        shown_figures(root / "docs" / "page.md", root)


def test_the_readme_links_the_researchers_front_matter():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for target in ("CHANGELOG.md", "CITATION.cff", "CHANGELOG.md#version-policy", "docs/glossary.md",
                   "docs/environments.md#conventions-side-by-side"):
        assert f"]({target})" in readme, f"README.md does not link {target}"
    assert len(readme.splitlines()) <= 210, "the README is a front door: about 200 lines"


def test_markers_inside_code_blocks_are_examples_not_figures(tmp_path):
    page = 'Example:\n\n````markdown\n[+9.99](figures/rec.json "a")\n\n<!-- figure: rec tab -->\n```\nx\n```\n````\n\n' + PAGE
    root = _tiny_repo(tmp_path, page, VALUES)
    assert [s.key for s in shown_figures(root / "docs" / "page.md", root)] == ["a", "tab", "out"]
    assert figure_problems(root, root / "docs" / "figures") == []


def _layout_table(page: str, heading: str) -> dict[str, tuple[int, int]]:
    """field -> (offset, size) from the first `| field | offset | size | meaning |` table after ``heading``."""
    text = (ROOT / "docs" / page).read_text(encoding="utf-8")
    lines = text[text.index(heading):].split("\n")
    start = next(i for i, line in enumerate(lines) if line.startswith("| field | offset | size |"))
    end = next(i for i in range(start, len(lines)) if not lines[i].startswith("|"))
    return {row[0].strip("`"): (int(row[1]), int(row[2])) for row in table_rows(lines[start:end])[1:]}


def test_the_observation_and_state_tables_match_the_code():
    from okgin_env import OBS_FIELDS, OBS_SIZE
    from okgin_env.envs.aec import STATE_FIELDS, STATE_SIZE

    for heading, fields, size in (("## Observation", OBS_FIELDS, OBS_SIZE), ("### The state vector", STATE_FIELDS, STATE_SIZE)):
        shown = _layout_table("environments.md", heading)
        code = {name: (sl.start, sl.stop - sl.start) for name, sl in fields.items()}
        assert shown == code, f"docs/environments.md '{heading}' differs from the code"
        assert sum(n for _, n in shown.values()) == size


def test_the_readme_gives_the_supported_versions_of_pyproject():
    tomllib = _toml()
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    readme = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    python = project["requires-python"].removeprefix(">=")
    assert f"Python {python} or newer" in readme, f"README.md should say Python {python} or newer"
    for requirement in project["dependencies"]:
        m = re.match(r"([\w.-]+)\s*>=\s*([\w.]+)", requirement)
        if m and m.group(1) in ("numpy", "numba", "gymnasium", "pettingzoo", "torch"):
            assert f"{m.group(1)} >= {m.group(2)}" in readme, f"README.md should give {m.group(1)} >= {m.group(2)} (pyproject.toml)"


def test_the_citation_and_changelog_carry_the_package_version():
    import yaml

    tomllib = _toml()

    version = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]
    citation = yaml.safe_load((ROOT / "CITATION.cff").read_text(encoding="utf-8"))
    assert citation["cff-version"] == "1.2.0" and str(citation["version"]) == version
    for key in ("message", "title", "authors", "license"):
        assert citation.get(key), f"CITATION.cff needs {key!r}"
    assert f"## {version} " in (ROOT / "CHANGELOG.md").read_text(encoding="utf-8"), f"CHANGELOG.md has no section for {version}"


@pytest.mark.slow
def test_the_reference_site_builds_strictly(tmp_path):
    """`mkdocs build --strict`: a broken link or anchor, a missing page or a stale API name fails."""
    for module in ("mkdocs", "material", "mkdocstrings", "mkdocstrings_handlers.python"):
        if not _has_module(module):
            pytest.skip(f"{module} is not installed: pip install -e '.[docs]' (CI installs it)")
    run = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
                         cwd=ROOT, capture_output=True, text=True, check=False,
                         env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert run.returncode == 0, run.stdout + run.stderr
    assert (tmp_path / "site" / "index.html").exists()
    assert (tmp_path / "site" / "api" / "okgin_env" / "index.html").exists()


def test_site_links_are_rewritten_from_repository_paths():
    """docs/_hooks.py: README links into docs/ lose the prefix on the site, a link to another repository
    file becomes its path in code, and a link to a file that does not exist stops the build."""
    if not _has_module("mkdocs"):
        pytest.skip("mkdocs is not installed: pip install -e '.[docs]' (CI installs it)")
    import importlib.util

    from mkdocs.exceptions import PluginError

    spec = importlib.util.spec_from_file_location("okgin_docs_hooks", ROOT / "docs" / "_hooks.py")
    hooks = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hooks)

    def rewrite(text: str, page: str) -> str:
        return hooks.LINK.sub(lambda m: hooks._rewrite(m, hooks._repo_path(page), page), text)

    assert rewrite("[t](docs/training.md#speed)", "index.md") == "[t](training.md#speed)"
    assert rewrite("[c](../../CHANGELOG.md#version-policy)", "api/index.md") == "[c](../changelog.md#version-policy)"
    assert rewrite("[r](../README.md#strength)", "evaluation.md") == "[r](index.md#strength)"
    assert rewrite("[the script](../examples/cleanrl_ppo_vector.py)", "vector_env.md") == \
        "the script (`examples/cleanrl_ppo_vector.py`)"
    with pytest.raises(PluginError, match="does not exist"):
        rewrite("[gone](../no_such_file.md)", "training.md")


def _toml():
    """tomllib (Python 3.11+), else tomli, else skip: pyproject.toml is read only to compare versions."""
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        tomllib = pytest.importorskip("tomli", reason="reading pyproject.toml needs Python 3.11 or tomli")
    return tomllib


def _has_module(name: str) -> bool:
    import importlib.util

    try:
        return importlib.util.find_spec(name) is not None
    except ModuleNotFoundError:
        return False


#: words a reader outside the project cannot look up: issue numbers ("#36", "issue 9") and the
#: project's internal names for runs; docs/history.md and docs/experiments.md may use them
JARGON = re.compile(r"(?<![\w&/])#\d{1,3}\b|\bissues? \d+\b|\boracle arm\b|\bthe issue's\b", re.IGNORECASE)


def test_no_private_jargon_outside_history_and_experiments():
    allowed = {"docs/history.md", "docs/experiments.md"}
    found = []
    for path in pages():
        rel = path.relative_to(ROOT).as_posix()
        if rel in allowed:
            continue
        for i, line in enumerate(path.read_text(encoding="utf-8").split("\n"), 1):
            for m in JARGON.finditer(line):
                found.append(f"{rel}:{i}: {m.group(0)!r} in {line.strip()[:80]!r}")
    assert not found, "\n".join(found)


def test_a_record_key_given_twice_is_an_error(tmp_path):
    root = _tiny_repo(tmp_path, PAGE, VALUES)
    path = root / "docs" / "figures" / "rec.json"
    path.write_text(path.read_text().replace('"a": ', '"a": "+9.99", "a": '), encoding="utf-8")
    with pytest.raises(AssertionError, match=r"key\(s\) \['a'\] given twice"):
        load_records(root / "docs" / "figures")


# ----------------------------------------------------------------- figures shown without a record

#: pages of dated measurements (what earlier versions gave, research that did not ship) and the convention's
#: own examples: each figure there carries its date or commit instead of a record
DATED = {"docs/history.md", "docs/experiments.md", "docs/figures/README.md"}
#: text that reads as a measured figure: a signed result, an interval, a rate, a duration, a speed-up,
#: thousands, a rate to three places, a measured share
FIGURE_LIKE = re.compile(r"""(?x)
    (?<![\w.])[+-]\d+\.\d+(?![\w.])
  | \[\s*[+-]?\d+\.\d+,\s*[+-]?\d+\.\d+\s*\] | \[\s*[+-]\d+(?:\.\d+)?,\s*[+-]\d+(?:\.\d+)?\s*\]
  | \d[\d,.]*\s*[kM]?\s*(?:env\ |learner\ )?(?:steps|decisions|games|hands|moves|frames)\s*(?:/\s*s\b|per\ second)
  | (?<![\w.-])\d+(?:\.\d+)?\s?[kM]/s
  | (?<![\w.-])\d+(?:\.\d+)?\ (?:ms|s|h)\b
  | (?<![\w.-])\d+(?:\.\d+)?\s?(?:seconds|minutes|min|hours)\b
  | (?<![\w.])\d+(?:\.\d+)?x\b
  | (?<![\w.])0\.\d{3}\b
  | \d+\.\d+\s?%
""")
#: a fenced block of code (checked as code, not as a program's output): its info string names a language
CODE_FENCE = re.compile(r"\s*(`{3,}|~{3,})\s*(python|py|bash|sh|shell|yaml|yml|json|toml|markdown|bibtex|console)\b")
CODE_SPAN = re.compile(r"`[^`]*`")


def _module_docstring(path: Path) -> tuple[str, int]:
    """An example's docstring and the line it starts on (an example's figures are in its docstring)."""
    import ast

    tree = ast.parse(path.read_text(encoding="utf-8"))
    doc = ast.get_docstring(tree, clean=False) or ""
    return doc, (tree.body[0].lineno if doc else 1)


def _block_figure_lines(lines: list[str]) -> set[int]:
    """Indices of the lines a block figure covers: its marker and the table or fenced block under it."""
    covered: set[int] = set()
    for i, line in enumerate(lines):
        if not BLOCK.match(line):
            continue
        j = i + 1
        while j < len(lines) and not lines[j].strip():
            j += 1
        fence = re.match(r"\s*(`{3,}|~{3,})", lines[j]) if j < len(lines) else None
        k = j + 1
        if fence:
            while k < len(lines) and lines[k].strip() != fence.group(1):
                k += 1
            k += 1
        else:
            while k < len(lines) and lines[k].lstrip().startswith("|"):
                k += 1
        covered.update(range(i, k))
    return covered


def unrecorded_figures(path: Path, root: Path = ROOT, folder: Path = FIGURES) -> list[str]:
    """Each figure-like text on a page that no record backs, as one line.

    A figure is backed when it is shown with the record markers (an inline link or a block under
    ``<!-- figure: ... -->``). In an example's docstring, where no link renders, a figure may instead be
    quoted verbatim from a record the docstring names (``docs/figures/NAME.json``)."""
    rel = path.relative_to(root).as_posix()
    if path.suffix == ".py":
        text, first = _module_docstring(path)
        named = [folder / f"{n}.json" for n in re.findall(r"figures/([\w.-]+)\.json", text)]
        backing = " ".join(json.dumps(json.loads(p.read_text(encoding="utf-8")), ensure_ascii=False)
                           for p in named if p.exists())
    else:
        text, first, backing = path.read_text(encoding="utf-8"), 1, ""
    lines, found = text.split("\n"), []
    covered = _block_figure_lines(lines) if path.suffix != ".py" else set()
    code = ""  # inside a fenced block of code: the fence that closes it
    for i, line in enumerate(lines):
        if code:
            code = "" if line.strip() == code else code
            continue
        if CODE_FENCE.match(line) and i not in covered:
            code = CODE_FENCE.match(line).group(1)
            continue
        if i in covered:
            continue
        bare = CODE_SPAN.sub("", INLINE.sub("", line))
        for m in FIGURE_LIKE.finditer(bare):
            if re.search(r"\bdefaults?(?: (?:is|to|of))?:?\s*$", bare[:m.start()]):
                continue  # "(default -0.1)": a setting's value, not a measurement
            if backing and re.search(r"(?<![\d.])" + re.escape(m.group(0)) + r"(?!\d)", backing):
                continue
            found.append(f"{rel}:{first + i}: {m.group(0)!r} has no record: {line.strip()[:90]!r}")
    return found


def test_every_figure_on_a_user_page_comes_from_a_record():
    """Measured-looking text (results, intervals, rates, times, speed-ups) on any page outside the dated
    history must be a marked figure of a record: docs/figures/README.md says how."""
    found = [f for page in pages() if page.relative_to(ROOT).as_posix() not in DATED for f in unrecorded_figures(page)]
    assert not found, (f"{len(found)} figure(s) without a record (show a measurement as a record's figure, "
                       f"docs/figures/README.md; write a setting's value in code, `30 s`):\n" + "\n".join(found))


@pytest.mark.parametrize("text, flagged", [
    ("It beats simple by +1.62 points per hand.", "'+1.62'"),
    ("win rate 0.572 [0.550, 0.594]", "'0.572'"),
    ("the vector env steps 192k learner decisions/s", "'192k learner decisions/s'"),
    ("about 0.6 ms a frame", "'0.6 ms'"),
    ("it ran 4.5x faster", "'4.5x'"),
    ("the first start takes 126 s", "'126 s'"),
    ("```\nhuman  simple  10  0.036 [0.003, 0.326]\n```", "'0.036'"),
    ("```text\nReady in 4.2 s.\n```", "'4.2 s'"),
    ("the learner scored -0.1 by default", "'-0.1'"),
])
def test_the_unrecorded_figure_check_flags_measurements(tmp_path, text, flagged):
    root = _tiny_repo(tmp_path, PAGE + "\n" + text + "\n", VALUES)
    found = unrecorded_figures(root / "docs" / "page.md", root, root / "docs" / "figures")
    assert any(flagged in f for f in found), found


def test_the_unrecorded_figure_check_passes_marked_figures_code_and_rules(tmp_path):
    text = ("Cards: `7h`, `k 8s`; `--scale 0.001`; a 256x256 MLP; knock limit 10, gin bonus 25; deal 1024 games;\n"
            "seed 0 and 20,000 hands on 400k decisions; `python train.py --set learning_rate=3e-5`.\n"
            "The reward of an illegal move (default -0.1) and `max_backoff` (`30 s`) are settings.\n"
            "```python\nstate = game.get_state([3, 5])  # rows 3 and 5; --scale 0.001\n```\n")
    root = _tiny_repo(tmp_path, PAGE + "\n" + text, VALUES)
    assert unrecorded_figures(root / "docs" / "page.md", root, root / "docs" / "figures") == []


def test_an_example_may_quote_the_record_it_names(tmp_path):
    root = _tiny_repo(tmp_path, PAGE, VALUES)
    (root / "examples").mkdir()
    ok = root / "examples" / "ok.py"
    ok.write_text('"""Expected: +1.50 [+1.00, +2.00] (record: docs/figures/rec.json)."""\n', encoding="utf-8")
    assert unrecorded_figures(ok, root, root / "docs" / "figures") == []
    bad = root / "examples" / "bad.py"
    bad.write_text('"""Expected: +1.5 [+1.0, +2.0] (record: docs/figures/rec.json)."""\n', encoding="utf-8")
    assert len(unrecorded_figures(bad, root, root / "docs" / "figures")) == 2


# ----------------------------------------------------------------- install commands and versions

#: an extra installed by the package's name: okgin is not on any registry, the README installs from a checkout
REGISTRY_EXTRA = re.compile(r"""pip3?\s+install\s+(?:-[\w-]+\s+)*["']?okgin\[""")


def install_problems(root: Path = ROOT) -> list[str]:
    """Each ``pip install "okgin[...]"`` a user can read (pages, examples, messages of the programs and tests)."""
    files = [*pages(root), *sorted((root / "okgin").rglob("*.py")), *sorted((root / "agents").rglob("*.py")),
             *sorted((root / "trainer").rglob("*.py")), *sorted((root / "tests").rglob("*.py")),
             root / "pyproject.toml", root / ".ci" / "run"]
    found = []
    for path in (p for p in files if p.exists() and p.resolve() != Path(__file__).resolve()):
        for i, line in enumerate(path.read_text(encoding="utf-8").split("\n"), 1):
            if REGISTRY_EXTRA.search(line) and "REGISTRY_EXTRA" not in line:
                found.append(f"{path.relative_to(root).as_posix()}:{i}: {line.strip()[:100]}")
    return found


def test_extras_are_installed_from_the_checkout_as_the_readme_does():
    found = install_problems()
    assert not found, ("okgin is not published on a package registry: install an extra from the checkout, "
                       "pip install -e \".[video]\":\n" + "\n".join(found))


def test_the_install_check_fails_on_a_registry_name(tmp_path):
    root = _tiny_repo(tmp_path, PAGE + '\nInstall it: `pip install "okgin[video]"`.\n', VALUES)
    assert any("page.md" in f for f in install_problems(root))
    root = _tiny_repo(tmp_path / "b", PAGE + '\nInstall it: `pip install -e ".[video]"`.\n', VALUES)
    assert install_problems(root) == []


def test_the_citation_readme_and_bibtex_carry_the_package_version():
    import yaml

    version = _toml().loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]
    citation = yaml.safe_load((ROOT / "CITATION.cff").read_text(encoding="utf-8"))
    assert str(citation["preferred-citation"]["version"]) == version, "CITATION.cff preferred-citation version"
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert f"Version {version}" in readme, f"README.md should say 'Version {version}'"
    bibtex = re.search(r"```bibtex\n(.*?)```", readme, re.S)
    assert bibtex, "README.md has no ```bibtex block"
    assert f"version = {{{version}}}" in bibtex.group(1), f"the README's BibTeX should give version = {{{version}}}"
    if ".dev" in version:  # unreleased: the changelog must say so where it lists the version
        heading = next(line for line in (ROOT / "CHANGELOG.md").read_text(encoding="utf-8").split("\n")
                       if line.startswith(f"## {version} "))
        assert "unreleased" in heading, f"CHANGELOG.md's '## {version}' heading should say it is unreleased"
