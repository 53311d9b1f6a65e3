"""docs/contributing.md's example diff (adding a rule option) still applies, and does what it says.

The diff is applied to a scratch copy of the checkout's tracked files; there the new option is
declared, checked, read by the kernels' record and listed in the rule book's generated table.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys

import pytest
from support import ROOT

PAGE = ROOT / "docs" / "contributing.md"


def example_diff() -> str:
    blocks = re.findall(r"```diff\n(.*?)```", PAGE.read_text(), flags=re.S)
    assert len(blocks) == 1, "docs/contributing.md should show one diff"
    return blocks[0]


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_the_rule_option_diff_applies_to_a_scratch_copy_and_declares_the_option(tmp_path):
    tracked = subprocess.run(["git", "ls-files", "okgin_env", "docs/RULES.md", "tests/game"], cwd=ROOT,
                             capture_output=True, text=True, check=True).stdout.split()
    for name in tracked:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / name, tmp_path / name)
    patch = tmp_path / "option.diff"
    patch.write_text(example_diff())
    applied = subprocess.run(["git", "apply", "--verbose", str(patch)], cwd=tmp_path, capture_output=True, text=True)
    assert applied.returncode == 0, f"the diff no longer applies: refresh it in docs/contributing.md\n{applied.stderr}"
    touched = set(re.findall(r"^\+\+\+ b/(\S+)", example_diff(), flags=re.M))
    assert touched == {"okgin_env/game/rules.py", "okgin_env/game/kernels.py", "okgin_env/testing/reference.py",
                       "docs/RULES.md", "tests/game/test_rules.py"}
    check = """
from okgin_env.game import rules
r = rules.Rules(tie_goes_to_knocker=True)
assert rules.rule_params(r, "hand").tie_goes_to_knocker
assert rules.option_table() in open("docs/RULES.md").read()
try:
    rules.Rules(tie_goes_to_knocker=1)
except ValueError as e:
    assert "tie_goes_to_knocker" in str(e)
else:
    raise AssertionError("a bad value was accepted")
"""
    subprocess.run([sys.executable, "-c", check], cwd=tmp_path, env={"PYTHONPATH": str(tmp_path), "PATH": "/usr/bin:/bin"},
                   check=True)
