"""play.py: scripted hands through piped stdin, forgiving input, --watch, --log/--replay, errors.

The scripts are computed here by playing the same seeded game in-process (``human_table.new_game``
deals exactly as play.py does; the opponent gets ``play.opponent_seed``), with a deterministic
bot choosing "our" moves; they are then fed to play.py as text commands. A few runs go through
a real subprocess (exit codes, no tracebacks); the rest call ``play.main`` in-process.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import numpy as np
import okgin_agents as agents
import pytest
from support import ROOT

from okgin import human_table, play
from okgin_env.game.actions import DRAW_STOCK, KNOCK, PASS, TAKE_DISCARD
from okgin_env.game.cards import NUM_CARDS, card_text
from okgin_env.game.rules import Rules
from okgin_env.render.text import hand_result_info, score_line

OPPONENT = "simple"
NAMES = ("You", OPPONENT)


def _env() -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    env.pop("NO_COLOR", None)
    return env


def run_play(args: list[str], stdin: str = "", timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(ROOT / "play.py"), *args], input=stdin, capture_output=True,
                          text=True, encoding="utf-8", timeout=timeout, env=_env(), cwd=str(ROOT))


def run_main(args: list[str], stdin: str, monkeypatch, capsys) -> tuple[int, str, str]:
    import io
    monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
    rc = play.main(args)
    out = capsys.readouterr()
    return rc, out.out, out.err


def scripted_hand(seed: int, rules: Rules | None = None):
    """Play one hand-only game in-process, our side by the deterministic greedy bot.

    Returns (list of (mask, action) at our decisions, hand-result info of the end).
    """
    rules = rules or Rules()
    game, out = human_table.new_game(rules, True, seed)
    opp = agents.make(OPPONENT, seed=play.opponent_seed(seed))
    me = agents.make("greedy")
    ours = []
    while not (out.terminated[0] or out.truncated[0]):
        bot = me if out.current_player[0] == play.HUMAN else opp
        a = int(bot.act(out.observation, out.legal_action_mask)[0])
        if out.current_player[0] == play.HUMAN:
            ours.append((out.legal_action_mask[0].copy(), game.state.hands[0, play.HUMAN].copy(), a))
        knock_limit = int(game.state.knock_limit[0])
        out = game.step(np.array([a]))
    return ours, hand_result_info(out.result, 0, knock_limit=knock_limit)


@pytest.fixture(scope="module")
def knock_hand():
    """A seed whose hand ends with a knock (scored, not void), with our commands and the result."""
    for seed in range(40):
        ours, info = scripted_hand(seed)
        if not info["void"] and len(ours) >= 3:
            return seed, ours, info
    pytest.fail("no seed in 0..39 ends its hand with a knock")


@pytest.mark.slow
def test_scripted_hand_subprocess(knock_hand):
    seed, ours, info = knock_hand
    script = "".join(human_table.command_for(a) + "\n" for _, _, a in ours)
    r = run_play(["--opponent", OPPONENT, "--hand-only", "--seed", str(seed), "--no-color"], script)
    assert r.returncode == 0, r.stderr
    assert "Traceback" not in r.stderr + r.stdout
    out = r.stdout
    # the player's screen: hand grouped into melds with deadwood, pile top, stock, knock limit, scores
    for needle in ("Melds:", "Deadwood:", "Discard pile:", "Stock:", "Knock limit:", "Scores:", "Last actions:"):
        assert needle in out
    # the hand's end: both hands laid out with melds, deadwood and the score line explaining the points
    assert "Hand 1 over" in out
    assert re.search(r"\(knocker\) +melds: \[", out) and re.search(r"\(defender\) +melds: ", out)
    assert score_line(info, NAMES) in out
    assert f"Totals: You {info['scores'][0]}, {OPPONENT} {info['scores'][1]}." in out
    assert "\x1b[" not in out  # --no-color and not a tty: plain text


def _illegal_commands(mask: np.ndarray, hand: np.ndarray) -> list[str]:
    """Commands that are not legal at this decision (each must be refused with a reason)."""
    cmds = []
    for a in (PASS, DRAW_STOCK, TAKE_DISCARD):
        if not mask[a]:
            cmds.append(human_table.command_for(a))
    not_held = next(c for c in range(NUM_CARDS) if not hand[c])
    cmds.append(card_text(not_held))
    no_knock = [c for c in range(NUM_CARDS) if hand[c] and not mask[KNOCK + c]]
    if no_knock:
        cmds.append("k " + card_text(no_knock[0]))
    return cmds


def test_illegal_and_garbage_input_keep_state(knock_hand, monkeypatch, capsys):
    seed, ours, info = knock_hand
    lines, refused = [], 0
    for k, (mask, hand, a) in enumerate(ours):
        bad = _illegal_commands(mask, hand)
        junk = ["xyz", "9z", "k", "", "?", "KNOCK", "draw 7h"] if k == 0 else ["Zz"]
        lines += bad + junk + [human_table.command_for(a)]
        refused += len(bad) + len(junk)
    rc, out, err = run_main(["--opponent", OPPONENT, "--hand-only", "--seed", str(seed)], "\n".join(lines) + "\n",
                            monkeypatch, capsys)
    assert rc == 0 and err == ""
    # every refused line printed the allowed moves (help and an empty line do too), and the game went on
    assert out.count("Allowed now:") == refused
    assert "I don't understand 'xyz'." in out
    assert "'9z' is not a card" in out
    assert "To knock, name the card" in out
    assert "You don't hold the" in out
    assert "Commands (case-insensitive" in out  # the help
    # the state was untouched: the same hand result as without the bad input
    assert score_line(info, NAMES) in out


def test_forgiving_card_input():
    assert play.parse_command("7h") == ("action", 19)
    assert play.parse_command(" TH ") == ("action", 22)
    assert play.parse_command("10h") == ("action", 22)
    assert play.parse_command("th") == ("action", 22)
    assert play.parse_command("7♥") == ("action", 19)
    assert play.parse_command("k 7h") == ("action", KNOCK + 19)
    assert play.parse_command("K 10H") == ("action", KNOCK + 22)
    assert play.parse_command("kh") == ("action", 25)  # king of hearts, not a knock
    assert play.parse_command("S") == ("action", DRAW_STOCK)
    assert play.parse_command("t") == ("action", TAKE_DISCARD)
    assert play.parse_command("p") == ("action", PASS)
    assert play.parse_command("?")[0] == "help"
    assert play.parse_command("Q")[0] == "quit"
    for junk in ("k", "zz", "1h", "11h", "k 9z", "hello there"):
        assert play.parse_command(junk)[0] == "error"


@pytest.mark.slow  # a subprocess; test_scripted_hand_subprocess keeps one in the fast loop
def test_end_of_input_ends_cleanly(knock_hand):
    seed, ours, _ = knock_hand
    script = human_table.command_for(ours[0][2]) + "\n"
    r = run_play(["--opponent", OPPONENT, "--seed", str(seed)], script)
    assert r.returncode == 0
    assert "Traceback" not in r.stderr
    assert "Game stopped (end of input)" in r.stdout


def test_quit(monkeypatch, capsys):
    rc, out, _ = run_main(["--opponent", "random", "--seed", "1"], "q\n", monkeypatch, capsys)
    assert rc == 0 and "Game stopped (you quit)" in out


@pytest.mark.slow  # two subprocesses playing a whole game
def test_watch_runs_to_the_end(tmp_path):
    log = tmp_path / "game.json"
    r = run_play(["--watch", "simple", "random", "--rules", "target_score=30", "--delay", "0", "--seed", "2",
                  "--log", str(log)], "")
    assert r.returncode == 0, r.stderr
    assert "Game over:" in r.stdout
    assert "Traceback" not in r.stderr
    data = json.loads(log.read_text())
    assert data["finished"] and max(data["final_scores"]) >= 30
    # --replay (stdin not a tty, --delay 0: all at once) gives the same moves and the same result
    rr = run_play(["--replay", str(log), "--delay", "0"], "")
    assert rr.returncode == 0, rr.stderr
    moves = [ln for ln in r.stdout.splitlines() if ln.startswith("  -> ")]
    assert moves and moves == [ln for ln in rr.stdout.splitlines() if ln.startswith("  -> ")]
    tail = [ln for ln in r.stdout.splitlines() if "Game over:" in ln]
    assert tail == [ln for ln in rr.stdout.splitlines() if "Game over:" in ln]
    assert "same result as logged" in rr.stdout


def test_human_log_replays(knock_hand, tmp_path, monkeypatch, capsys):
    seed, ours, info = knock_hand
    log = tmp_path / "hand.json"
    script = "".join(human_table.command_for(a) + "\n" for _, _, a in ours)
    rc, _, _ = run_main(["--opponent", OPPONENT, "--hand-only", "--seed", str(seed), "--log", str(log)], script,
                        monkeypatch, capsys)
    assert rc == 0
    data = json.loads(log.read_text())
    assert data["rules"] == Rules().to_dict() and data["seed"] == seed
    assert len(data["hands"]) == 1 and len(data["hands"][0]["deck"].split()) == 52
    assert [a for p, a in data["hands"][0]["actions"] if p == play.HUMAN] == [a for _, _, a in ours]
    rc, out, err = run_main(["--replay", str(log), "--delay", "0"], "", monkeypatch, capsys)
    assert rc == 0, err
    assert score_line(info, NAMES) in out and "same result as logged" in out


def test_tampered_log_is_refused(knock_hand, tmp_path, monkeypatch, capsys):
    seed, ours, _ = knock_hand
    log = tmp_path / "hand.json"
    script = "".join(human_table.command_for(a) + "\n" for _, _, a in ours)
    run_main(["--opponent", OPPONENT, "--hand-only", "--seed", str(seed), "--log", str(log)], script,
             monkeypatch, capsys)
    data = json.loads(log.read_text())
    data["hands"][0]["actions"][0][1] = 0 if data["hands"][0]["actions"][0][1] != 0 else 1  # a discard at the start
    log.write_text(json.dumps(data))
    rc, _, err = run_main(["--replay", str(log), "--delay", "0"], "", monkeypatch, capsys)
    assert rc == 2 and "diverged from the log" in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("args, needle", [
    (["--opponent", "nobody"], "bad agent spec 'nobody'"),
    (["--opponent", "ppo:/nonexistent/model.pt"], "bad agent spec"),
    (["--rules", "knock_limit=11"], "bad --rules"),
    (["--rules", "no_such_rule=1"], "bad --rules"),
    (["--rules", "knock_limit"], "bad --rules"),
    (["--replay", "/nonexistent/game.json"], "does not exist"),
    (["--watch", "simple", "nobody"], "bad agent spec 'nobody'"),
])
def test_bad_arguments_one_line_exit_2(args, needle, monkeypatch, capsys):
    rc, _, err = run_main(args, "", monkeypatch, capsys)
    assert rc == 2
    assert needle in err
    assert len(err.strip().splitlines()) == 1


def test_corrupt_replay_files(tmp_path, monkeypatch, capsys):
    bad_json = tmp_path / "bad.json"
    bad_json.write_text("{not json")
    wrong = tmp_path / "wrong.json"
    wrong.write_text(json.dumps({"format": "something else"}))
    for path, needle in ((bad_json, "not valid JSON"), (wrong, "not a valid okgin game log")):
        rc, _, err = run_main(["--replay", str(path)], "", monkeypatch, capsys)
        assert rc == 2 and needle in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("key,value,words", [("specs", 5, "'specs' must be absent or a list of two"),
                                             ("seed", -1, "'seed' must be an integer >= 0, got -1")])
def test_replay_log_with_a_bad_seed_or_specs_is_one_line_exit_2(key, value, words, tmp_path, monkeypatch, capsys):
    log = play.Table(Rules(), True, 3, ("a", "b"), ("random", "random")).log_dict("watch")
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({**log, key: value}))
    rc, _, err = run_main(["--replay", str(path), "--delay", "0"], "", monkeypatch, capsys)
    assert rc == 2 and words in err and len(err.strip().splitlines()) == 1, err


@pytest.mark.slow  # four subprocesses; test_bad_arguments_one_line_exit_2 checks the messages in-process
def test_subprocess_errors_have_no_traceback(tmp_path):
    bad = tmp_path / "x.json"
    bad.write_text("[1, 2")
    for args in (["--opponent", "nobody"], ["--replay", str(bad)], ["--rules", "gin_bonus=-1"], ["--bogus-flag"]):
        r = run_play(args, "")
        assert r.returncode == 2, (args, r.stderr)
        assert "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr


def test_color_only_on_a_capable_terminal(monkeypatch):
    class Tty:
        def isatty(self):
            return True
    monkeypatch.setattr(sys, "stdout", Tty())
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm-256color")
    assert play.use_color(no_color=False)
    assert not play.use_color(no_color=True)
    monkeypatch.setenv("TERM", "dumb")
    assert not play.use_color(no_color=False)
    monkeypatch.setenv("TERM", "xterm")
    monkeypatch.setenv("NO_COLOR", "1")
    assert not play.use_color(no_color=False)
