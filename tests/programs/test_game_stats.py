"""python -m okgin.game_stats: each rule set's game statistics agree with the rules they come from
(the counts of a hand add up, the turn cap is obeyed or absent, games end at the target), the JSON
record round-trips, and bad arguments exit 2 with a line saying what is allowed."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest
from support import ROOT

from okgin import game_stats as gs
from okgin_env.game.rules import EAAI_TURN_CAP, Rules


def _hand_invariants(t: gs.HandTable) -> None:
    """What every hand obeys, whatever the agents: a hand is passes (0-2, the upcard offer) plus two
    decisions a turn (a card taken, then a discard or a knock), and one card taken begins each turn."""
    assert len(t.decisions) > 0
    passes = t.decisions - 2 * t.draws
    assert ((passes >= 0) & (passes <= 2)).all()
    assert (t.decisions >= 2).all() and (t.draws >= 1).all()
    assert (t.legal >= t.decisions).all()  # every decision has at least one legal action
    assert int(t.legal_counts.sum()) == int(t.decisions.sum())  # one histogram entry per decision
    assert (t.points[t.void] == 0).all()  # a void hand scores nothing
    assert (t.points[~t.void] != 0).all()  # a knock always scores someone (0 on gin or undercut is impossible)
    assert not (t.gin & t.undercut).any() and not (t.void & (t.gin | t.undercut)).any()
    assert (t.capped <= t.void).all()


@pytest.mark.parametrize("rules_name", ["oklahoma", "eaai"])
@pytest.mark.parametrize("spec", ["random", "eaai_simple"])
def test_every_hand_adds_up(rules_name, spec):
    rules = Rules.named(rules_name)
    t = gs.play_hands(spec, rules, 150, seed=1, batch=64)  # three batches, the last a partial one
    assert len(t.decisions) == 150 and t.unfinished == 0
    _hand_invariants(t)
    s = gs.summarise_hands(t)
    for rate in ("void", "void_turn_cap", "gin", "undercut"):
        assert 0 <= s[rate]["ci"][0] <= s[rate]["mean"] <= s[rate]["ci"][1] <= 1
    legal = s["legal_actions_per_decision"]
    assert legal["ci"][0] <= legal["mean"] <= legal["ci"][1]
    assert 1 <= legal["min"] <= legal["mean"] <= legal["max"] <= 22  # at most 11 discards and 11 knocks
    assert sum(legal["counts"].values()) == int(t.decisions.sum())
    if rules_name == "eaai":  # the turn cap is far above any hand that ends: none is cut short by it
        assert not t.capped.any() and s["void_turn_cap"]["mean"] == 0 and s["turn_cap"] == EAAI_TURN_CAP
    assert s["draws_per_hand"]["max"] <= rules.max_turns_per_hand
    no_cap = gs.summarise_hands(gs.play_hands(spec, Rules(max_turns_per_hand=None), 20, seed=0))
    assert no_cap["turn_cap"] is None and gs.table([{"rules": "x", "agent": spec, "hands": no_cap, "games": None}])[8] == [
        "void by the turn cap", "no cap"]


def test_random_play_has_choices_and_rarely_scores_under_oklahoma():
    s = gs.summarise_hands(gs.play_hands("random", Rules(), 200, seed=0))
    # a random player discards among 11 cards most turns and almost never knocks
    assert s["legal_actions_per_decision"]["mean"] > 1
    assert s["void"]["mean"] > 0.9
    assert s["decisions_per_hand"]["mean"] > 2 * 20  # at least ~20 stock draws before the wall


def test_the_turn_cap_is_counted_as_void():
    t = gs.play_hands("random", Rules(max_turns_per_hand=5), 100, seed=0)
    _hand_invariants(t)
    assert t.capped.any() and (t.draws <= 5).all()
    assert (t.draws[t.capped] == 5).all()  # the cap ends a hand right after its fifth turn


def test_games_end_at_the_target_and_batches_shrink_without_losing_a_game():
    # eaai_simple finishes a game in about 10 hands, so a batch of 80 is soon half over and moves its
    # running games to a smaller VectorGame (play_games); every game must still be counted, once
    t = gs.play_games("eaai_simple", Rules.eaai(), 90, seed=2, batch=80)
    assert len(t.hands) == 90 and t.unfinished == 0
    assert (t.hands >= 1).all()
    # one player scores per hand, so the winner reaches 100 while the other is below it
    assert (np.abs(t.margin) >= 1).all()
    again = gs.play_games("eaai_simple", Rules.eaai(), 90, seed=2, batch=80)
    np.testing.assert_array_equal(t.hands, again.hands)
    np.testing.assert_array_equal(t.margin, again.margin)
    s = gs.summarise_games(t)
    assert s["winner_margin"]["min"] >= 1 and s["hands_per_game"]["min"] == int(t.hands.min())


def test_a_pair_does_not_depend_on_the_others_asked_for():
    # (no games of random play: under the Oklahoma rules they last hundreds of hands)
    both = gs.measure(["oklahoma", "eaai"], ["random", "eaai_simple"], hands=40, games=0, seed=3, batch=32)
    alone = gs.measure(["eaai"], ["eaai_simple"], hands=40, games=0, seed=3, batch=32)
    assert all(r["games"] is None for r in both)
    assert [(r["rules"], r["agent"]) for r in both] == [("oklahoma", "random"), ("oklahoma", "eaai_simple"),
                                                       ("eaai", "random"), ("eaai", "eaai_simple")]
    assert {k: v for k, v in both[3].items() if k != "seconds"} == \
        {k: v for k, v in alone[0].items() if k != "seconds"}


def test_json_round_trip_and_table(tmp_path, capsys):
    path = tmp_path / "stats.json"
    assert gs.main(["--rules", "eaai", "--agents", "random", "--hands", "30", "--games", "2", "--seed", "5",
                    "--json", str(path)]) == 0
    printed = capsys.readouterr().out
    text = path.read_text()
    record = json.loads(text, parse_constant=lambda c: pytest.fail(f"{c} in strict JSON"))
    assert record["version"] == gs.VERSION == 1
    assert record["command"] == ("python -m okgin.game_stats --rules eaai --agents random --hands 30 --games 2 "
                                 "--seed 5 --json " + str(path))
    assert record["seed"] == 5 and record["agents"] == ["random"]
    assert record["rules"] == {"eaai": Rules.eaai().to_dict()}
    assert Rules.from_dict(record["rules"]["eaai"]) == Rules.eaai()
    [r] = record["results"]
    assert r["rules"] == "eaai" and r["agent"] == "random"
    assert r["hands"]["hands"] == 30 and r["games"]["games"] == 2
    assert record["table"] == gs.table(record["results"])  # the JSON holds what the table is made from
    assert printed.strip() == gs.format_table(record["table"])
    assert record["table"][0] == ["statistic", "eaai, random"]
    labels = [row[0] for row in record["table"]]
    for label in ("decisions per hand", "draws per hand", "legal actions per decision", "legal actions, most",
                  "void (no score)", "gin", "undercut", "player 0 points per hand, least / most", "hands per game",
                  "player 0 final margin, least / most"):
        assert label in labels


def test_hands_or_games_alone(capsys):
    assert gs.main(["--rules", "oklahoma", "--agents", "eaai_simple", "--hands", "0", "--games", "3"]) == 0
    out = capsys.readouterr().out
    assert "hands per game" in out and "decisions per hand" not in out


@pytest.mark.parametrize("argv,message", [
    (["--rules", "classic"], "argument --rules: invalid choice: 'classic' (choose from "),
    (["--agents", "nosuchbot"], "--agents: unknown agent spec 'nosuchbot'; valid specs: random"),
    (["--hands", "-1"], "--hands must be >= 0, got -1"),
    (["--hands", "0", "--games", "0"], "nothing to play: --hands and --games are both 0"),
    (["--batch", "0"], "--batch must be >= 1, got 0"),
    (["--agents", "random", "random"], "--agents names an agent twice: random random"),
])
def test_bad_arguments_say_what_is_allowed(argv, message, capsys):
    with pytest.raises(SystemExit) as e:
        gs.main(argv)
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    if argv[0] == "--rules":  # argparse lists the choices (quoted or not, by Python version)
        assert all(name in err.split("choose from")[1] for name in ("oklahoma", "eaai", "both"))


@pytest.mark.slow
def test_the_module_runs_as_a_command(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    p = subprocess.run([sys.executable, "-m", "okgin.game_stats", "--agents", "nosuchbot"], check=False, cwd=ROOT,
                       env=env, capture_output=True, text=True, timeout=300)
    assert p.returncode == 2 and "unknown agent spec 'nosuchbot'" in p.stderr and "Traceback" not in p.stderr
    p = subprocess.run([sys.executable, "-m", "okgin.game_stats", "--rules", "eaai", "--agents", "eaai_simple",
                        "--hands", "20", "--games", "2"], check=False, cwd=ROOT, env=env, capture_output=True,
                       text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines()[0].split() == ["statistic", "eaai,", "eaai_simple"]
