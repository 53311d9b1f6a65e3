"""Every rule scenario of ``scenarios.py``, played on both engines with either player dealing.

The fast engine (``VectorGame``) and the brute-force reference (``okgin_env.testing.reference``)
must both tell each story exactly as written; ``test_crosscheck.py`` then compares them
on random play.
"""

from __future__ import annotations

import pytest
from engines import ENGINES
from scenarios import SCENARIOS, play


@pytest.mark.parametrize("dealer", [0, 1])
@pytest.mark.parametrize("table", ENGINES, ids=lambda e: e.name)
@pytest.mark.parametrize("scenario", SCENARIOS, ids=repr)
def test_scenario(scenario, table, dealer):
    play(scenario, table, dealer)


def test_scenario_names_are_unique():
    names = [s.name for s in SCENARIOS]
    assert len(names) == len(set(names))
