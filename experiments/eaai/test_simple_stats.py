"""experiments.eaai: the per-game counts add up, and the framework's table is read with the same estimators.

Not part of the default test run: ``python -m pytest experiments/eaai`` from the checkout's root."""

from __future__ import annotations

import numpy as np
import pytest

from experiments.eaai.simple_stats import COLUMNS, difference, play, read_table, summarise


def test_counts_add_up_and_games_end():
    table = play(40, seed=3, batch=16)
    hands, draws, gins, knocks, undercuts, cancels, points = table.T
    assert (hands >= 1).all() and (gins + knocks + cancels == hands).all() and (undercuts <= knocks).all()
    assert (draws >= hands).all() and (points > 0).all()
    stats = summarise(table)
    low, mid, high = stats["hands per game"][1], stats["hands per game"][0], stats["hands per game"][2]
    assert low < mid < high and stats["games"][0] == 40


def test_the_framework_table_is_read_by_its_header(tmp_path):
    path = tmp_path / "java.txt"
    path.write_text("game hands draws gins knocks undercuts cancels order_sensitive p0_won pts_decisive\n"
                    "0 7 68 0 7 0 0 0 0 149\n1 11 107 1 10 1 0 0 1 193\n")
    table = read_table(str(path))
    assert table.tolist() == [[7, 68, 0, 7, 0, 0, 149], [11, 107, 1, 10, 1, 0, 193]] and len(COLUMNS) == 7
    bad = tmp_path / "bad.txt"
    bad.write_text("game hands\n0 7\n")
    with pytest.raises(ValueError, match="no column"):
        read_table(str(bad))


def test_the_difference_combines_both_intervals():
    assert difference((0.5, 0.4, 0.6), (0.5, 0.4, 0.6), percent=False) == "+0.00 [-0.14, +0.14]"
    assert np.isclose(0.1 * np.sqrt(2), 0.1414, atol=1e-3)
