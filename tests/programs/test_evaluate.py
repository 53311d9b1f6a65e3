"""evaluate.py: the command line end to end, duplicate deals, statistics, ratings, errors, and
the strength ladder of the baselines (expert > simple > greedy >> random)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import okgin_agents as agents
import pytest
from support import ROOT

from okgin import evaluate
from okgin_env.game.rules import Rules


def run_cli(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return subprocess.run([sys.executable, str(ROOT / "evaluate.py"), *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)


# ------------------------------------------------------------------- command line

@pytest.mark.slow
def test_round_robin_end_to_end(tmp_path):
    out_json = tmp_path / "out.json"
    p = run_cli("--agents", "simple", "greedy", "random", "--hands", "300", "--games", "20", "--seed", "3",
                "--rules", "knock_limit=10", "--json", str(out_json))
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert lines[0].startswith("okgin evaluation: seed 3, duplicate deals, rules: knock_limit=10")
    table = "\n".join(lines)
    assert "win rate A [95% CI]" in table and "points/hand A-B [95% CI]" in table
    for pair in (("simple", "greedy"), ("simple", "random"), ("greedy", "random")):
        assert any(line.split()[:2] == list(pair) for line in lines)
    assert "game win rate A [95% CI]" in table
    assert "ratings (Bradley-Terry on hands, Elo scale, random = 0):" in table
    assert "evaluate" in p.stderr  # the progress bar

    report = json.loads(out_json.read_text())
    assert report["agents"] == ["simple", "greedy", "random"]
    assert report["rules"]["knock_limit"] == 10 and report["seed"] == 3 and report["duplicate"] is True
    assert len(report["matches"]) == 3 and len(report["games"]) == 3
    match = report["matches"][0]
    for key in ("agent_a", "agent_b", "hands", "deals", "wins_a", "wins_b", "voids", "win_rate", "win_rate_ci",
                "points_per_hand", "points_ci", "knock_rate_a", "knock_rate_b", "gin_rate_a", "gin_rate_b",
                "undercut_rate_a", "undercut_rate_b", "void_rate", "seconds", "hands_per_s"):
        assert key in match
    assert match["hands"] == 300 and match["deals"] == 150
    assert match["wins_a"] + match["wins_b"] + match["voids"] == 300
    assert report["games"][0]["games"] == 20
    ratings = {row["agent"]: row["rating"] for row in report["ratings"]}
    assert ratings["random"] == 0 and ratings["simple"] > 0 and ratings["greedy"] > 0
    assert [row["rating"] for row in report["ratings"]] == sorted(ratings.values(), reverse=True)


@pytest.mark.slow  # two subprocess evaluations
def test_same_seed_same_numbers(tmp_path):
    args = ["--agents", "random", "simple", "--hands", "200", "--no-progress"]
    a = run_cli(*args, "--json", str(tmp_path / "a.json"))
    b = run_cli(*args, "--json", str(tmp_path / "b.json"))
    ja, jb = (json.loads((tmp_path / f).read_text()) for f in ("a.json", "b.json"))
    timing = ("seconds", "hands_per_s", "cpu_seconds")
    strip = lambda j: [{k: v for k, v in m.items() if k not in timing} for m in j["matches"]]  # noqa: E731
    assert strip(ja) == strip(jb)
    assert a.stdout.splitlines()[:3] == b.stdout.splitlines()[:3]


@pytest.mark.parametrize("args, message", [
    (["--agents", "simple", "wizard"], "unknown agent spec 'wizard'; valid specs: random, greedy, simple, expert"),
    (["--agents", "simple"], "at least two agent specs"),
    (["--agents", "simple", "random", "--rules", "knock_limit=11"], "invalid rule option knock_limit=11"),
    (["--agents", "simple", "random", "--rules", "colour=red"], "unknown rule option"),
    (["--agents", "simple", "random", "--hands", "-5"], "--hands must be >= 0"),
    (["--agents", "simple", "random", "--hands", "0"], "nothing to play"),
    (["--agents", "simple", "random", "--batch", "0"], "--batch must be >= 1"),
    (["--agents", "simple", "random", "--seed", "-1"], "--seed must be >= 0"),
    (["--agents", "simple", "ppo:/no/such/model.pt"], "model.pt"),
])
def test_bad_arguments_exit_2_with_a_message(args, message, capsys):
    with pytest.raises(SystemExit) as exc:
        evaluate.main(args)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "usage: evaluate.py" in err and message in err


@pytest.mark.slow  # about a second: the fast loop (-m 'not slow') stays under a minute
def test_bad_arguments_print_no_traceback():
    p = run_cli("--agents", "simple", "wizard", "--hands", "10")
    assert p.returncode == 2
    assert "Traceback" not in p.stderr and "valid specs" in p.stderr


# ------------------------------------------------------------------ duplicate deals

def test_seat_plan_replays_each_deal_with_seats_swapped():
    decks, dealers, a_player, deal_id = evaluate.seat_plan(10, seed=4, duplicate=True)
    assert len(decks) == 10
    first, second = slice(0, 5), slice(5, 10)
    np.testing.assert_array_equal(decks[first], decks[second])
    np.testing.assert_array_equal(dealers[first], dealers[second])
    np.testing.assert_array_equal(deal_id[first], deal_id[second])
    assert (a_player[first] == 0).all() and (a_player[second] == 1).all()
    assert len({tuple(d) for d in decks[first]}) == 5
    _, _, a_single, ids = evaluate.seat_plan(9, seed=4, duplicate=False)
    assert len(ids) == 9 and len(set(ids)) == 9 and set(a_single) == {0, 1}


def test_duplicate_deals_cancel_the_cards_exactly():
    """Two copies of a deterministic bot on duplicate deals: each deal's second half is the
    first with seats swapped, so every pair of hands cancels and the result is exactly even."""
    r = evaluate.play_match(agents.make("greedy"), agents.make("greedy"), 400, seed=2)
    assert r.hands == 400 and r.deals == 200
    assert r.points_per_hand == 0 and r.points_ci == (0, 0)
    assert r.win_rate == 0.5 and r.wins_a == r.wins_b
    assert r.knock_rate_a == r.knock_rate_b and r.gin_rate_a == r.gin_rate_b
    single = evaluate.play_match(agents.make("greedy"), agents.make("greedy"), 400, seed=2, duplicate=False)
    assert single.points_ci[0] < 0 < single.points_ci[1] and single.points_ci[1] > 0.5


def test_hand_points_are_play_matchs_hands_and_pair_up_across_agents():
    simple, greedy, expert = agents.make("simple", seed=0), agents.make("greedy"), agents.make("expert")
    pts, deal = evaluate.hand_points(simple, expert, 300, seed=4)
    r = evaluate.play_match(agents.make("simple", seed=0), expert, 300, seed=4)
    assert len(pts) == r.hands == 300 and np.isclose(pts.mean(), r.points_per_hand)
    assert evaluate.mean_ci(pts, deal) == (r.points_per_hand, r.points_ci)
    other, same_deals = evaluate.hand_points(greedy, expert, 300, seed=4)
    assert np.array_equal(deal, same_deals) and (other != pts).any()
    # an agent paired with itself differs by exactly nothing
    again, _ = evaluate.hand_points(agents.make("greedy"), expert, 300, seed=4)
    assert evaluate.mean_ci(again - other, deal) == (0.0, (0.0, 0.0))
    with pytest.raises(ValueError, match="num_hands"):
        evaluate.hand_points(greedy, expert, 0)


def test_random_against_random_is_even():
    for duplicate in (True, False):
        r = evaluate.play_match(agents.make("random", seed=1), agents.make("random", seed=2), 1000, seed=5,
                                duplicate=duplicate)
        assert r.win_rate_ci[0] < 0.5 < r.win_rate_ci[1]
        assert r.points_ci[0] < 0 < r.points_ci[1]


def test_games_to_the_target_score():
    g = evaluate.play_games(agents.make("simple", seed=1), agents.make("random", seed=2), 40, seed=1,
                            rules=Rules(target_score=50))
    assert g.games == 40 and g.wins_a + g.wins_b + g.unfinished == 40
    assert g.win_rate > 0.9 and g.margin > 0 and g.hands_per_game >= 1


def test_mean_ci_over_units():
    values = np.array([1.0, 3.0, 2.0, 2.0])
    m, ci = evaluate.mean_ci(values, np.array([0, 0, 1, 1]))
    assert m == 2.0 and ci == (2.0, 2.0)  # both pairs average 2: no spread between units
    m, ci = evaluate.mean_ci(values)
    assert m == 2.0 and ci[0] < 2.0 < ci[1]


def test_bradley_terry_ratings():
    names = ["a", "b", "c"]
    even = evaluate.bradley_terry(names, [(0, 1, 500, 1000), (1, 2, 500, 1000), (0, 2, 500, 1000)], anchor=2)
    np.testing.assert_allclose(even, 0, atol=1e-6)
    # a beats b 3:1 and b beats c 3:1 (and a beats c 9:1): 400 log10(3) ~ 191 Elo per step
    r = evaluate.bradley_terry(names, [(0, 1, 75_000, 100_000), (1, 2, 75_000, 100_000),
                                       (0, 2, 90_000, 100_000)], anchor=2)
    np.testing.assert_allclose(r, [2 * 190.85, 190.85, 0], atol=1.0)
    sweep = evaluate.bradley_terry(["x", "y"], [(0, 1, 50, 50)], anchor=1)
    assert np.isfinite(sweep).all() and sweep[0] > 400


# ------------------------------------------------------------------ the ladder

@pytest.mark.slow  # 20,000+ duplicate-deal hands, for CIs that separate
def test_strength_ladder():
    """expert > simple > greedy, everyone >> random, with 95% CIs that do not touch 50% / 0.

    Duplicate deals; hand counts chosen so the intervals separate (expert vs simple is about
    0.54 win rate and +2.5 points per hand, simple vs greedy about 0.52 and +1.3)."""
    def match(a, b, hands, seed):
        return evaluate.play_match(agents.make(a, seed=seed), agents.make(b, seed=seed + 1), hands, seed=seed)

    r = match("expert", "simple", 4000, 11)
    assert r.win_rate_ci[0] > 0.5 and r.points_ci[0] > 0, r
    r = match("simple", "greedy", 16000, 12)
    assert r.win_rate_ci[0] > 0.5 and r.points_ci[0] > 0, r
    for a in ("simple", "greedy", "expert"):
        r = match(a, "random", 400, 13)
        assert r.win_rate_ci[0] > 0.9 and r.points_ci[0] > 40, r


def test_evaluate_against_prints_and_returns_play_match_per_opponent(capsys):
    """The examples' ending: one play_match per opponent (seeded alike), one printed line each."""
    got = evaluate.evaluate_against(agents.make("greedy"), ["random", "simple"], 20, seed=3)
    lines = capsys.readouterr().out.splitlines()
    assert [r.agent_b for r in got] == ["random", "simple"] and len(lines) == 2
    for opponent, r, line in zip(["random", "simple"], got, lines):
        want = evaluate.play_match(agents.make("greedy"), agents.make(opponent, seed=3), 20, seed=3)
        assert r.to_dict() | {"seconds": 0, "hands_per_s": 0, "cpu_seconds": 0} == \
            want.to_dict() | {"seconds": 0, "hands_per_s": 0, "cpu_seconds": 0}
        assert line.startswith(f"against {opponent} over 20 hands (10 duplicate deals): {r.points_per_hand:+.2f} [")
