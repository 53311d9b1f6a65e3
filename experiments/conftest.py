"""The experiments' tests use the fixtures of tests/conftest.py, which pytest loads only for
tests/; they are loaded here by path (not as a package ``tests``, a name other projects install)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

_TESTS = Path(__file__).resolve().parents[1] / "tests"
if str(_TESTS) not in sys.path:  # tests/conftest.py imports its shared names from tests/support.py
    sys.path.insert(0, str(_TESTS))
_spec = importlib.util.spec_from_file_location("okgin_tests_conftest",
                                               Path(__file__).resolve().parents[1] / "tests" / "conftest.py")
_shared = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_shared)

expert_positions = _shared.expert_positions
write_checkpoint = _shared.write_checkpoint
