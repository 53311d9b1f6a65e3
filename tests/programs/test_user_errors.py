"""Errors that help (#25 item 5): option typos name every valid option and the closest one, and a
file that is not an okgin checkpoint says so in one line, without torch's advice to load it with
``weights_only=False`` (which would run whatever code the file holds)."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import okgin_agents as agents
import pytest
import torch

import okgin_env  # noqa: F401 - registers okgin/OklahomaGin-v0
from okgin import evaluate, play
from okgin_env.envs.aec import raw_env
from okgin_env.envs.single_agent import SingleAgentEnv
from okgin_env.envs.vector import OkginVectorEnv
from okgin_env.game.rules import Rules

# ------------------------------------------------------------------------- option typos

@pytest.mark.parametrize("make,typo,meant,listed", [
    (lambda **kw: gym.make("okgin/OklahomaGin-v0", **kw), "oponent", "opponent", ("opponent", "seat", "render_mode")),
    (lambda **kw: SingleAgentEnv(**kw), "sead", "seat", ("opponent", "seat", "render_mode")),
    (lambda **kw: OkginVectorEnv(2, **kw), "nm_envs", "num_envs", ("num_envs", "opponent", "seat", "render_mode")),
    (lambda **kw: raw_env(**kw), "render_mod", "render_mode", ("render_mode", "episode")),
    (lambda **kw: SingleAgentEnv(**kw), "knock_limt", "knock_limit", ("knock_limit", "episode", "illegal_action")),
    (lambda **kw: SingleAgentEnv(**kw), "deadwood_shapping", "deadwood_shaping", ("deadwood_shaping",)),
])
def test_option_typos_list_every_option_and_suggest_the_closest(make, typo, meant, listed):
    # TypeError: Python's convention for an unexpected keyword (TorchRL and SB3 retry without
    # their own extra keywords only on a TypeError)
    with pytest.raises(TypeError) as e:
        make(**{typo: "simple"})
    msg = str(e.value)
    assert f"unknown option(s) {typo} (did you mean {meant}?); valid options: " in msg and "\n" not in msg
    valid = msg.split(" was raised from")[0].split("valid options: ")[1].split(", ")  # gym.make appends its words
    assert set(listed) <= set(valid)


def test_a_name_far_from_every_option_gets_no_guess():
    with pytest.raises(TypeError, match=r"unknown option\(s\) zzzz; valid options: knock_limit"):
        SingleAgentEnv(zzzz=1)


def test_rule_typos_suggest_the_closest_rule():
    with pytest.raises(ValueError, match=r"unknown rule option\(s\) knok_limit \(did you mean knock_limit\?\); "
                                         r"valid options: knock_limit, gin_bonus"):
        Rules.from_dict({"knok_limit": 3})


def test_evaluate_and_play_rules_typos(capsys):
    with pytest.raises(SystemExit) as e:
        evaluate.main(["--agents", "random", "simple", "--rules", "gin_bonu=20", "--no-progress"])
    assert e.value.code == 2
    assert "unknown rule option(s) gin_bonu (did you mean gin_bonus?)" in capsys.readouterr().err
    assert play.main(["--watch", "random", "simple", "--rules", "spade_dbl=true", "--seed", "1", "--delay", "0"]) == 2
    err = capsys.readouterr().err.strip()
    assert "unknown rule option(s) spade_dbl (did you mean spade_double?)" in err and "\n" not in err


# ------------------------------------------------------------------ files that are not checkpoints

def _text(path):
    path.write_text("hello world\nthis is a text file\n")


def _numpy_pickle(path):
    torch.save({"weights": np.arange(3)}, path)  # another program's torch file: needs weights_only=False


def _zeros(path):
    path.write_bytes(b"\0" * 100)


@pytest.mark.parametrize("write,needle", [
    (_text, "it is a text file (it starts with 'hello world'), not a torch file"),
    (_numpy_pickle, "it holds a numpy"),
    (_zeros, "not a torch file (corrupt, or another format)"),
])
def test_non_checkpoints_say_so_without_torchs_unsafe_advice(tmp_path, write, needle):
    path = tmp_path / "model.pt"
    write(path)
    with pytest.raises(ValueError) as e:
        agents.make(f"ppo:{path}")
    msg = str(e.value)
    assert msg.startswith(f"{path} is not a readable okgin PPO checkpoint: ") and needle in msg
    assert "weights_only" not in msg and "\n" not in msg


def test_evaluate_names_a_non_checkpoint_in_one_line(tmp_path, capsys):
    path = tmp_path / "notes.txt"
    _text(path)
    with pytest.raises(SystemExit) as e:
        evaluate.main(["--agents", f"ppo:{path}", "random", "--no-progress"])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert "is not a readable okgin PPO checkpoint: it is a text file" in err and "weights_only" not in err
