"""One check of an agent's output for every consumer (``okgin_env.agent_specs.checked_actions``).

A plug-in bot's ``act`` may return anything. Each consumer (evaluate, the single-agent and vector
envs, play, the trainer's opponents) must turn a bad output into one line that names the bot and
what it returned, and an illegal move into one line that names the bot and lists the legal
moves. The bots below are plug-ins as a user writes them (``test_agent_output:NoneBot`` is a
``module:Attr`` spec: pytest puts this folder on ``sys.path``); ``mybots.py``, written into a
temporary folder, is the user's file beside which the scripts are started.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from support import ROOT

from okgin import evaluate, play
from okgin_env.agent_specs import AgentOutputError, checked_actions
from okgin_env.envs.single_agent import SingleAgentEnv
from okgin_env.envs.vector import OkginVectorEnv
from okgin_env.game.actions import NUM_ACTIONS

MODULE = "test_agent_output"


class _Bot:
    def __init__(self, seed: int | None = None) -> None:
        self.seed = seed

    @staticmethod
    def first_legal(masks: np.ndarray) -> np.ndarray:
        return np.argmax(masks, axis=1)


class IntegralFloatBot(_Bot):
    """Returns legal actions as floats (104.0): accepted."""

    def act(self, obs, masks):
        return self.first_legal(masks).astype(np.float64)


class ListBot(_Bot):
    """Returns a Python list of ints: accepted."""

    def act(self, obs, masks):
        return self.first_legal(masks).tolist()


class FloatBot(_Bot):
    """Returns 106.4 where 106 is legal: it was silently truncated to 106."""

    def act(self, obs, masks):
        return self.first_legal(masks) + 0.4


class NoneBot(_Bot):
    def act(self, obs, masks):
        return None


class ColumnBot(_Bot):
    """Returns shape (B, 1): numpy's own shape error before."""

    def act(self, obs, masks):
        return self.first_legal(masks)[:, None]


class ShortBot(_Bot):
    def act(self, obs, masks):
        return self.first_legal(masks)[:-1]


class StringBot(_Bot):
    def act(self, obs, masks):
        return "draw"


class IllegalBot(_Bot):
    """Plays the first illegal action: the error must name it, and the legal ones."""

    def act(self, obs, masks):
        return np.argmin(masks, axis=1)


BAD = [  # (bot, what the one line must say)
    ("FloatBot", "returned the non-integral action 1"),
    ("NoneBot", "returned None"),
    ("ColumnBot", "array of shape ("),
    ("ShortBot", "must return a 1-D integer array of length"),
    ("StringBot", "returned str 'draw'"),
    ("IllegalBot", "chose the illegal action"),
]


# ------------------------------------------------------------------------ the check itself

def masks_of(*legal: list[int]) -> np.ndarray:
    m = np.zeros((len(legal), NUM_ACTIONS), bool)
    for row, acts in enumerate(legal):
        m[row, acts] = True
    return m


@pytest.mark.parametrize("actions", [np.array([104, 106]), [104, 106], np.array([104.0, 106.0]),
                                     np.array([104, 106], np.uint8), np.array([104, 106], np.int32)])
def test_integer_outputs_are_accepted_as_int64(actions):
    got = checked_actions(actions, masks_of([104, 105], [104, 106]), "bot")
    assert got.dtype == np.int64 and got.tolist() == [104, 106]


@pytest.mark.parametrize("actions,needle", [
    (None, "returned None"),
    (np.array([104, 106.4]), "non-integral action 106.4"),
    (np.array([104, np.nan]), "non-integral action nan"),
    (np.array([[104], [106]]), "int64 array of shape (2, 1)"),
    (np.array([104]), "array of length 2"),
    ("ab", "returned str 'ab'"),
    (np.array([True, True]), "bool array"),
    ([104, [106]], "returned list"),
    (5, "returned int 5"),
    (np.array([104, 105]), "chose the illegal action 105 (take) in game 1; legal: 104 (draw), 106 (pass)"),
    (np.array([-5, 104]), "chose the illegal action -5 (out of range 0-106) in game 0"),
    (np.array([104, 107]), "chose the illegal action 107 (out of range 0-106) in game 1"),
    (np.array([104.0, 1e30]), "(out of range 0-106) in game 1"),
])
def test_bad_outputs_are_one_line_naming_the_agent(actions, needle):
    with pytest.raises(AgentOutputError) as e:
        checked_actions(actions, masks_of([104, 105], [104, 106]), "mybots:BadBot", "opponent")
    msg = str(e.value)
    assert msg.startswith("the opponent 'mybots:BadBot' ") and needle in msg and "\n" not in msg


def test_games_name_the_rows_and_one_game_needs_no_number():
    with pytest.raises(ValueError, match=r"illegal action 105 \(take\) in game 7;"):
        checked_actions(np.array([104, 105]), masks_of([104], [104]), "bot", games=np.array([3, 7]))
    with pytest.raises(ValueError, match=r"illegal action 105 \(take\); legal: 104 \(draw\)$"):
        checked_actions(np.array([105]), masks_of([104]), "bot")
    # the vector env checks legality in its kernel: shape and dtype only
    assert checked_actions(np.array([105]), masks_of([104]), "bot", check_legal=False).tolist() == [105]


# ----------------------------------------------------------------------------- consumers

@pytest.mark.parametrize("bot,needle", BAD)
def test_evaluate_exits_2_with_one_line(bot, needle, capsys):
    spec = f"{MODULE}:{bot}"
    with pytest.raises(SystemExit) as e:
        evaluate.main(["--agents", spec, "random", "--hands", "4", "--no-progress"])
    assert e.value.code == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"evaluate.py: error: the agent '{spec}' ") and needle in err and "\n" not in err


@pytest.mark.parametrize("bot", ["IntegralFloatBot", "ListBot"])
def test_evaluate_accepts_integral_outputs(bot, capsys):
    report = evaluate.main(["--agents", f"{MODULE}:{bot}", "random", "--hands", "4", "--no-progress"])
    assert report["matches"][0]["hands"] == 4


@pytest.mark.parametrize("bot,needle", BAD)
def test_single_agent_env_names_the_opponent(bot, needle):
    env = SingleAgentEnv(opponent=f"{MODULE}:{bot}", seat=1)
    with pytest.raises(ValueError) as e:
        env.reset(seed=0)  # the opponent acts in reset when it is the non-dealer, else after the learner
        for _ in range(3):
            env.step(int(np.flatnonzero(env.action_masks())[-1]))
    msg = str(e.value)
    assert msg.startswith(f"the opponent '{MODULE}:{bot}' ") and needle in msg and "\n" not in msg


@pytest.mark.parametrize("bot,needle", BAD)
def test_vector_env_names_the_opponent(bot, needle):
    env = OkginVectorEnv(8, opponent=f"{MODULE}:{bot}", seat=1)
    with pytest.raises(ValueError) as e:
        env.reset(seed=0)  # seat 1: the opponent is the non-dealer in half the games and acts first
    msg = str(e.value)
    assert msg.startswith(f"the opponent '{MODULE}:{bot}' ") and needle in msg and "\n" not in msg


@pytest.mark.parametrize("bot,needle", BAD)
def test_play_watch_exits_2_with_one_line(bot, needle, monkeypatch, capsys):
    spec = f"{MODULE}:{bot}"
    rc = play.main(["--watch", "random", spec, "--seed", "1", "--delay", "0", "--hand-only", "--no-color"])
    assert rc == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"play.py: error: the agent '{spec}' ") and needle in err and "\n" not in err


def test_play_opponent_bad_output_exits_2(monkeypatch, capsys):
    import io
    monkeypatch.setattr(sys, "stdin", io.StringIO("s\n" * 20))
    spec = f"{MODULE}:FloatBot"
    rc = play.main(["--opponent", spec, "--seed", "1", "--hand-only", "--no-color"])  # seed 1: you deal
    assert rc == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"play.py: error: the opponent '{spec}' returned the non-integral action")


def test_play_keeps_a_plug_ins_case_and_lowers_bundled_names():
    assert play.spec_label(f"{MODULE}:ListBot") == f"{MODULE}:ListBot"
    assert play.spec_label("Expert") == "expert"
    assert play.spec_label("SEARCH:4") == "search:4"
    assert play.spec_label("ppo:runs/X/Best.pt") == "ppo:Best.pt"


def test_trainer_opponents_are_checked():
    import okgin_agents as agents
    import torch
    from okgin_trainer.pool import Opponents

    spec = f"{MODULE}:NoneBot"
    opps = Opponents({spec: 1.0}, 4, 2, np.random.default_rng(0), lambda k, s: agents.make(k, seed=s), 0, {},
                     torch.device("cpu"))
    opps.assign(np.arange(4))
    masks = masks_of([104], [104], [104], [104])
    with pytest.raises(ValueError, match=f"the opponent '{spec}' returned None"):
        opps.act(np.arange(4), np.zeros((4, 1), np.float32), masks, "none", np.zeros(4, np.int64))


# --------------------------------------------------- module:Attr from the current directory

MYBOTS = textwrap.dedent("""
    import numpy as np

    class MyBot:
        def __init__(self, seed=None):
            pass

        def act(self, obs, masks):
            return np.argmax(masks, axis=1)

    class BadBot(MyBot):
        def act(self, obs, masks):
            return np.argmax(masks, axis=1) + 0.4
""")


def _run_from(folder, *cmd: str) -> subprocess.CompletedProcess:
    """Run a script in ``folder`` with no PYTHONPATH (as a user runs it)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return subprocess.run(list(cmd), cwd=folder, env=env, capture_output=True, text=True, timeout=300)


@pytest.mark.slow  # two subprocesses
def test_plugins_import_from_the_current_directory_by_script_path(tmp_path):
    (tmp_path / "mybots.py").write_text(MYBOTS)
    ok = _run_from(tmp_path, sys.executable, str(ROOT / "evaluate.py"), "--agents", "mybots:MyBot", "random",
                   "--hands", "4", "--no-progress")
    assert ok.returncode == 0, ok.stderr
    assert "mybots:MyBot" in ok.stdout
    bad = _run_from(tmp_path, sys.executable, str(ROOT / "evaluate.py"), "--agents", "mybots:BadBot", "random",
                    "--hands", "4", "--no-progress")
    assert bad.returncode == 2 and "Traceback" not in bad.stderr
    assert bad.stderr.strip() == bad.stderr.strip().splitlines()[0]
    assert bad.stderr.startswith("evaluate.py: error: the agent 'mybots:BadBot' returned the non-integral action")


@pytest.mark.slow  # a subprocess
def test_plugins_import_from_the_current_directory_in_console_scripts(tmp_path):
    script = os.path.join(os.path.dirname(sys.executable), "okgin-play")
    if not os.path.exists(script):
        pytest.skip("okgin-play is not installed next to this Python")
    (tmp_path / "mybots.py").write_text(MYBOTS)
    p = _run_from(tmp_path, script, "--watch", "mybots:MyBot", "random", "--seed", "1", "--delay", "0",
                  "--hand-only", "--no-color")
    assert p.returncode == 0, p.stderr
    assert "Watching mybots:MyBot against random" in p.stdout
