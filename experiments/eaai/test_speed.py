"""experiments.eaai.speed: a short run prints its rounds and the median ratio.

Not part of the default test run: ``python -m pytest experiments/eaai`` from the checkout's root."""

from __future__ import annotations

import pytest

from experiments.eaai.speed import SelfPlay, main
from okgin_env import Rules


def test_a_short_run_prints_each_round_and_the_medians(capsys):
    main(["--seconds", "0.05", "--rounds", "2", "--games", "16", "--slice", "2", "--seed", "3"])
    lines = capsys.readouterr().out.splitlines()
    assert [line.split(":")[0] for line in lines] == ["round 0", "round 1", "median ratio eaai_simple / simple over 2 rounds"]


def test_self_play_counts_hands_and_time():
    side = SelfPlay("eaai_simple", Rules.eaai(), 8, seed=1)
    side.run(60)
    assert side.hands > 0 and side.cpu > 0 and side.wall > 0
    with pytest.raises(ValueError, match="games"):
        SelfPlay("simple", Rules(), 0, seed=1)
