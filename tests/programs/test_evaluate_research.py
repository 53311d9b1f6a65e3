"""evaluate.py for research (#28): paired comparisons, rate intervals inside [0, 1], rating
intervals, pictures (--plot) and evaluation over processes (torchrun)."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys

import numpy as np
import okgin_agents as agents
import pytest
from okgin_trainer import stats
from support import ROOT

from okgin import evaluate

TIMING = ("seconds", "hands_per_s", "cpu_seconds")


def run_cli(*args: str, launcher: list[str] | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    cmd = [*(launcher or [sys.executable]), str(ROOT / "evaluate.py"), *args]
    return subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)


def made(spec: str, seed: int, name: str | None = None):
    agent = agents.make(spec, seed=seed)
    agent.name = name or spec
    return agent


# ------------------------------------------------------------------ paired comparison

@pytest.mark.parametrize("spec, opponent", [("simple", "random"), ("random", "simple")])
def test_agent_paired_with_itself_reads_exactly_zero(spec, opponent):
    # randomised agents on both sides: the same seeds must give the same games, hand by hand
    paired, ra, rb = evaluate.paired_match(made(spec, 7), made(spec, 7, spec + "#2"), made(opponent, 8),
                                           made(opponent, 8), 300, seed=5, batch=128)
    assert paired.points_diff == 0.0 and paired.points_diff_ci == (0.0, 0.0)
    assert paired.win_rate_diff == 0.0 and paired.win_rate_diff_ci == (0.0, 0.0)
    assert paired.hands_differing == 0
    assert ra.points_per_hand == rb.points_per_hand and ra.points_per_hand != 0


def test_paired_difference_is_the_difference_of_the_two_matches():
    paired, ra, rb = evaluate.paired_match(made("expert", 1), made("greedy", 1), made("simple", 2),
                                           made("simple", 2), 400, seed=3)
    # the paired mean is exactly the difference of the two matches' means (same deals, same units)
    assert math.isclose(paired.points_diff, ra.points_per_hand - rb.points_per_hand, abs_tol=1e-9)
    assert math.isclose(paired.win_rate_diff, ra.win_rate - rb.win_rate, abs_tol=1e-12)
    assert paired.hands_differing > 0
    lo, hi = paired.points_diff_ci
    assert lo < paired.points_diff < hi
    # and it agrees with the Python helper the docs used before (hand_points)
    pa, deal = evaluate.hand_points(made("expert", 1), made("simple", 2), 400, seed=3)
    pb, _ = evaluate.hand_points(made("greedy", 1), made("simple", 2), 400, seed=3)
    assert paired.points_diff_ci == evaluate.mean_ci(pa - pb, deal)[1]


@pytest.mark.slow
def test_paired_cli_table_and_json(tmp_path):
    out = tmp_path / "p.json"
    p = run_cli("--paired", "simple", "simple", "--opponent", "random", "--hands", "200", "--seed", "2",
                "--no-progress", "--json", str(out))
    assert p.returncode == 0, p.stderr
    assert "simple minus simple#2 against random" in p.stdout
    assert "points/hand A-B [95% CI]" in p.stdout and "win rate A-B [95% CI]" in p.stdout
    report = json.loads(out.read_text())
    rec = report["paired"]
    assert (rec["agent_a"], rec["agent_b"], rec["opponent"]) == ("simple", "simple#2", "random")
    assert rec["points_diff"] == 0 and rec["points_diff_ci"] == [0, 0] and rec["win_rate_diff"] == 0
    assert rec["hands"] == 200 and rec["deals"] == 100
    assert [(m["agent_a"], m["agent_b"]) for m in report["matches"]] == [("simple", "random"), ("simple#2", "random")]
    assert report["world_size"] == 1


@pytest.mark.slow
def test_paired_cli_matches_the_head_to_head(tmp_path):
    # A's match in a paired run is the two-agent evaluation of A against C (same seeds: pair 0)
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    common = ["--hands", "200", "--seed", "4", "--no-progress"]
    assert run_cli("--paired", "random", "greedy", "--opponent", "simple", *common, "--json", str(a)).returncode == 0
    assert run_cli("--agents", "random", "simple", *common, "--json", str(b)).returncode == 0
    strip = lambda m: {k: v for k, v in m.items() if k not in TIMING}  # noqa: E731
    assert strip(json.loads(a.read_text())["matches"][0]) == strip(json.loads(b.read_text())["matches"][0])


@pytest.mark.slow  # about a second: the fast loop (-m 'not slow') stays under a minute
@pytest.mark.parametrize("args, message", [
    (["--paired", "simple", "random"], "--paired A B needs --opponent C"),
    (["--agents", "simple", "random", "--opponent", "greedy"], "--opponent goes with --paired"),
    (["--paired", "simple", "random", "--opponent", "greedy", "--agents", "simple", "greedy"], "drop --agents"),
    (["--paired", "simple", "random", "--opponent", "greedy", "--games", "4"], "--games does not apply"),
    (["--paired", "simple", "wizard", "--opponent", "greedy"], "unknown agent spec 'wizard'"),
    (["--agents", "simple", "random", "--plot", "x.jpg"], "must end in .png or .svg"),
    (["--agents", "simple", "random", "--plot", "x.png", "--hands", "0", "--games", "2"], "--hands 0 plays none"),
    (["--agents", "simple", "random", "--bootstrap", "-1"], "--bootstrap must be >= 0"),
])
def test_bad_research_arguments_are_one_line_errors(args, message):
    p = run_cli("--hands", "10", *args, "--no-progress")
    assert p.returncode == 2
    assert message in p.stderr and "Traceback" not in p.stderr


# --------------------------------------------------------------------- rate intervals

def test_rate_ci_is_wilson_and_stays_inside_0_1():
    # independent 0/1 values: exactly the textbook Wilson interval
    v = np.array([1.0] * 49 + [0.0])
    p, (lo, hi) = stats.rate_ci(v)
    z, n = stats.Z95, 50
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    assert p == 0.98 and math.isclose(lo, centre - half) and math.isclose(hi, centre + half)
    assert hi < 1.0 and evaluate.mean_ci(v)[1][1] > 1.0  # the Wald interval leaves [0, 1] here
    # six games in three duplicate pairs, each pair split 1-0: Wald gave [-0.066, 1.066]
    p, (lo, hi) = stats.rate_ci(np.array([1.0, 0.0, 0.0, 1.0, 1.0, 0.0]), np.array([0, 0, 1, 1, 2, 2]))
    assert p == 0.5 and 0.0 < lo < 0.5 < hi < 1.0
    # all wins: an interval reaching below 1 that ends at 1, not [1, 1]
    p, (lo, hi) = stats.rate_ci(np.ones(6), np.array([0, 0, 1, 1, 2, 2]))
    assert p == 1.0 and hi == 1.0 and 0.5 < lo < 1.0
    assert all(math.isnan(x) for x in stats.rate_ci(np.ones(2), np.array([0, 0]))[1])


def test_match_win_rate_intervals_inside_0_1_and_points_unchanged():
    r, rows = evaluate.match_hands(made("expert", 1), made("random", 2), 60, seed=0)
    assert 0.0 <= r.win_rate_ci[0] <= r.win_rate <= r.win_rate_ci[1] <= 1.0
    assert r.points_per_hand == rows.points.mean() and r.points_ci == evaluate.mean_ci(rows.points, rows.deal_id)[1]
    g = evaluate.play_games(made("simple", 1), made("greedy", 2), 6, seed=0)
    assert 0.0 <= g.win_rate_ci[0] <= g.win_rate_ci[1] <= 1.0


# -------------------------------------------------------------------------- ratings

def test_batched_bradley_terry_matches_the_point_fit():
    names = ["a", "b", "c"]
    results = [(0, 1, 60.0, 100), (0, 2, 90.5, 100), (1, 2, 75.0, 100)]
    point = evaluate.bradley_terry(names, results, anchor=2)
    # one "resample" that draws every deal once is the data itself
    deal_wins = np.array([[0.6] * 100, [0.905] * 100, [0.75] * 100])
    deal_hands = np.ones((3, 100))
    wins = np.zeros((1, 3, 3))
    games = np.zeros((1, 3, 3))
    for (i, j), w, n in zip([(0, 1), (0, 2), (1, 2)], deal_wins.sum(1), deal_hands.sum(1)):
        wins[0, i, j] += w + stats.RATING_PRIOR
        wins[0, j, i] += n - w + stats.RATING_PRIOR
        games[0, i, j] += n + 2 * stats.RATING_PRIOR
        games[0, j, i] += n + 2 * stats.RATING_PRIOR
    batch = 400 * np.log10(stats._bt_batch(wins, games))[0]
    np.testing.assert_allclose(batch - batch[2], point, atol=1e-6)
    boot = stats.bootstrap_ratings(3, [(0, 1), (0, 2), (1, 2)], deal_wins, deal_hands, anchor=2, reps=50, seed=1)
    assert boot.shape == (50, 3) and np.all(boot[:, 2] == 0)
    # every deal alike: each resample is the data, so the interval shrinks to the point
    np.testing.assert_allclose(boot, np.tile(point, (50, 1)), atol=1e-5)


@pytest.mark.slow
def test_round_robin_ratings_carry_seeded_intervals(tmp_path):
    out1, out2 = tmp_path / "1.json", tmp_path / "2.json"
    args = ["--agents", "greedy", "simple", "random", "--hands", "200", "--seed", "1", "--no-progress",
            "--bootstrap", "200"]
    p = run_cli(*args, "--json", str(out1))
    assert p.returncode == 0, p.stderr
    assert "ratings (Bradley-Terry on hands, Elo scale, random = 0):" in p.stdout
    assert "95% CIs: percentile bootstrap over deal pairs, 200 resamples, seed 1" in p.stdout
    report = json.loads(out1.read_text())
    assert report["rating_anchor"] == "random"
    for row in report["ratings"]:
        lo, hi = row["rating_ci"]
        assert lo <= row["rating"] <= hi
        if row["agent"] == "random":
            assert (lo, hi) == (0, 0)
        else:
            assert hi - lo > 0
    assert run_cli(*args, "--json", str(out2)).returncode == 0
    assert json.loads(out2.read_text())["ratings"] == report["ratings"]  # seeded: same intervals


def test_rating_anchor_is_the_last_agent_without_random():
    assert evaluate.rating_anchor(["expert", "simple", "greedy"]) == 2
    assert evaluate.rating_anchor(["random", "simple", "greedy"]) == 0


# -------------------------------------------------------------------------- pictures

@pytest.mark.slow
@pytest.mark.parametrize("suffix", [".png", ".svg"])
def test_plot_draws_a_round_robin(tmp_path, suffix):
    pytest.importorskip("matplotlib")
    path = tmp_path / f"rr{suffix}"
    p = run_cli("--agents", "simple", "greedy", "random", "--hands", "100", "--seed", "0", "--no-progress",
                "--bootstrap", "50", "--plot", str(path))
    assert p.returncode == 0, p.stderr
    data = path.read_bytes()
    if suffix == ".png":
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20_000
    else:
        text = data.decode()
        assert "<svg" in text and "points per hand, row minus column" in text and "Bradley-Terry rating" in text


def test_plot_cells_mirror_the_matches():
    from okgin.plot import points_matrix

    val, lo, hi = points_matrix(["a", "b"], [{"agent_a": "a", "agent_b": "b", "points_per_hand": 2.5,
                                              "points_ci": [1.0, 4.0]}])
    assert val[0, 1] == 2.5 and val[1, 0] == -2.5 and (lo[1, 0], hi[1, 0]) == (-4.0, -1.0)
    assert np.isnan(val[0, 0]) and np.isnan(val[1, 1])


def test_plot_without_matplotlib_names_the_extra(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib now raises ImportError
    with pytest.raises(SystemExit) as e:
        evaluate.main(["--agents", "simple", "random", "--hands", "10", "--plot", str(tmp_path / "x.png")])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert "pip install -e '.[plot]'" in err and "Traceback" not in err
    assert not (tmp_path / "x.png").exists()


# -------------------------------------------------------------- over processes (torchrun)

def _figures(path) -> dict:
    """A report's figures: everything but timings, the process count and how agents were seeded."""
    report = json.loads(path.read_text())
    for key in ("matches", "games"):
        report[key] = [{k: v for k, v in m.items() if k not in TIMING} for m in report[key]]
    for key in ("world_size", "agent_seeds"):
        report.pop(key)
    return report


def _torchrun(k: int) -> list[str]:
    return [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", str(k)]


@pytest.mark.slow  # four subprocess evaluations, two with two processes (gloo on CPU)
def test_two_processes_give_the_one_process_figures_bit_for_bit(tmp_path):
    pytest.importorskip("torch.distributed")
    # randomised agents (random, simple) over several batches: torchrun K = 1 and K = 2 agree exactly
    args = ["--agents", "random", "simple", "greedy", "--hands", "400", "--games", "8", "--batch", "64",
            "--seed", "2", "--bootstrap", "50", "--no-progress"]
    for k in (1, 2):
        p = run_cli(*args, "--json", str(tmp_path / f"t{k}.json"), launcher=_torchrun(k))
        assert p.returncode == 0, p.stderr
    assert json.loads((tmp_path / "t2.json").read_text())["world_size"] == 2
    assert json.loads((tmp_path / "t1.json").read_text())["world_size"] == 1
    assert _figures(tmp_path / "t1.json") == _figures(tmp_path / "t2.json")
    # agents without a running generator (the search hashes its seed and the position): a plain run and
    # two processes agree exactly, table included
    args = ["--agents", "search:1", "expert", "--hands", "24", "--batch", "8", "--seed", "5", "--no-progress"]
    plain = run_cli(*args, "--json", str(tmp_path / "p.json"))
    two = run_cli(*args, "--json", str(tmp_path / "q.json"), launcher=_torchrun(2))
    assert plain.returncode == 0 and two.returncode == 0, two.stderr
    assert _figures(tmp_path / "p.json") == _figures(tmp_path / "q.json")
    body = lambda out: [line[:-9] for line in out.splitlines()[2:5]]  # noqa: E731  (hands/s is a timing)
    assert "search:1" in body(plain.stdout)[2]
    assert body(plain.stdout) == body(two.stdout)
    assert json.loads((tmp_path / "p.json").read_text())["world_size"] == 1


def test_shard_plays_every_kth_batch_and_sums_rows():
    from okgin.sharding import Shard, batch_seed, keeps_generator

    assert keeps_generator(made("random", 0)) and keeps_generator(made("simple", 0))
    assert not keeps_generator(made("expert", 0)) and not keeps_generator(made("search:1", 0))

    made_with = []
    shard = Shard(1, 3, lambda spec, seed: made_with.append((spec, seed)) or made(spec, seed))
    assert [c for c in range(7) if shard.plays(c)] == [1, 4]
    a = shard.make("simple", 11, "simple")
    assert shard.chunk_agent(a, 0) is a
    b = shard.chunk_agent(a, 4)
    assert b is not a and b.name == "simple" and made_with[-1] == ("simple", batch_seed(11, 4))
    for spec in ("expert", "search:1", "greedy"):  # no running generator: the agent itself plays every batch
        c = shard.make(spec, 3, spec)
        assert shard.chunk_agent(c, 4) is c
    other = made("greedy", 0)  # not made by the shard (the Python API): plays every batch itself
    assert shard.chunk_agent(other, 4) is other
    rows = np.arange(5.0)
    assert shard.combine(np.ones(5, bool), rows)[0] is rows  # one process: nothing to sum


def test_match_settings_are_keywords_and_a_wrong_one_says_what_is_allowed():
    a, b = made("random", 1), made("random", 2)
    with pytest.raises(TypeError, match="settings must be a MatchSettings, got 3; give seed, rules"):
        evaluate.match_hands(a, b, 10, 3)  # the old positional seed
    with pytest.raises(TypeError, match="unknown match option\\(s\\) sed; allowed: seed, rules, duplicate"):
        evaluate.play_games(a, b, 2, sed=3)
    settings = evaluate.MatchSettings(seed=3, batch=4)
    assert evaluate.match_hands(a, b, 10, settings)[0].points_per_hand == evaluate.match_hands(
        made("random", 1), made("random", 2), 10, seed=3, batch=4)[0].points_per_hand
