"""okgin_trainer.recipe: the shipped agent's line as one command (dry run, a tiny end-to-end run, resuming after
an interruption, one-line errors for bad recipes), and every config in configs/ starting on a fresh clone."""

from __future__ import annotations

import glob
import json
import os
import shlex
import subprocess
import sys

import numpy as np
import pytest
import yaml
from okgin_trainer import recipe
from support import ROOT as SUPPORT_ROOT

ROOT = str(SUPPORT_ROOT)
SHIPPED = os.path.join(ROOT, "configs", "recipes", "shipped.yaml")
CONFIGS = sorted(glob.glob(os.path.join(ROOT, "configs", "*.yaml")))
# every budget at its floor (one update, two evaluation hands), small batches, one thread
TINY = ["--scale", "1e-9", "--set", "num_envs=16", "--set", "num_steps=8", "--set", "num_threads=1"]


def sets_of(command: list[str]) -> dict[str, str]:
    """The ``--set key=value`` pairs of a command, as text."""
    return dict(command[i + 1].split("=", 1) for i, a in enumerate(command) if a == "--set")


def shipped_steps() -> list[dict]:
    with open(SHIPPED, encoding="utf-8") as f:
        return yaml.safe_load(f)["steps"]


def test_dry_run_lists_every_step_as_a_runnable_command(capsys, tmp_path):
    out = str(tmp_path / "shipped")
    result = recipe.main([SHIPPED, "--dry-run", "--out", out])
    lines = capsys.readouterr().out.splitlines()
    steps = shipped_steps()
    heads = [line for line in lines if line.startswith("# [recipe]")]
    assert [h.split()[4] for h in heads] == [s["name"] for s in steps]
    commands = [shlex.split(line) for line in lines if not line.startswith("#")]
    assert len(commands) == len(steps)
    for step, cmd in zip(steps, commands):
        assert cmd[:3] == [sys.executable, "-m", "okgin.train" if step["kind"] == "train" else "okgin_trainer.soup"]
        if step["kind"] == "train":  # the recipe's keys and its own run folder, nothing else
            config = os.path.normpath(os.path.join(os.path.dirname(SHIPPED), step["config"]))
            assert os.path.abspath(cmd[cmd.index("--config") + 1]) == config
            sets = sets_of(cmd)
            assert sets["run_name"] == step["name"] and os.path.abspath(sets["run_dir"]) == out
            assert {k: yaml.safe_load(v) for k, v in sets.items() if k in step.get("set", {})} == step.get("set", {})
            if step.get("init_from"):
                assert os.path.dirname(os.path.abspath(sets["init_from"])) == os.path.join(out, step["init_from"])
        else:
            assert [os.path.basename(os.path.dirname(p)) for p in cmd[5:]] == step["inputs"]
    assert result == os.path.join(out, "mean3", "soup.pt")
    assert not os.path.exists(out)  # a dry run writes nothing


def test_dry_run_scales_every_budget(capsys, tmp_path):
    recipe.main([SHIPPED, "--dry-run", "--out", str(tmp_path), "--scale", "0.01"])
    sets = sets_of(shlex.split(capsys.readouterr().out.splitlines()[1]))
    # configs/default.yaml: 150M steps, 2M imitated decisions, 8,000 evaluation hands, 20,000 snapshot hands
    assert (sets["total_timesteps"], sets["bc_decisions"], sets["eval_hands"], sets["snapshot_min_hands"]) == (
        "1500000", "20000", "80", "200")
    recipe.main([SHIPPED, "--dry-run", "--out", str(tmp_path), "--scale", "1e-9", "--set", "num_envs=16",
                 "--set", "num_steps=8"])
    sets = sets_of(shlex.split(capsys.readouterr().out.splitlines()[1]))
    assert (sets["total_timesteps"], sets["bc_decisions"], sets["eval_hands"]) == ("128", "1", "2")  # the floors


@pytest.mark.slow
def test_the_module_runs_as_a_program_from_the_checkout():
    """Both import names work from the checkout: the installed okgin_trainer, and trainer/ as the folder."""
    for module in ("okgin_trainer.recipe", "trainer.recipe"):
        proc = subprocess.run([sys.executable, "-m", module, SHIPPED, "--dry-run"], cwd=ROOT, capture_output=True,
                              text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr[-2000:]
        assert proc.stdout.count("-m okgin.train --config") == 9 and proc.stdout.count("-m okgin_trainer.soup") == 3


def write_recipe(tmp_path, steps) -> str:
    path = tmp_path / "r.yaml"
    path.write_text(yaml.safe_dump({"steps": steps} if isinstance(steps, list) else steps))
    return str(path)


QUICK = os.path.join(ROOT, "configs", "quick.yaml")
BAD = [
    ({"stages": []}, "a recipe is a YAML mapping with a non-empty list under 'steps'"),
    ({"steps": [{"name": "a", "kind": "train", "config": QUICK}], "out": "x"}, "unknown key(s) out"),
    ([{"name": "a", "kind": "train", "config": QUICK, "seed": 3}], "step 'a': unknown key(s) seed; a train step takes"),
    ([{"name": "a", "kind": "bake", "config": QUICK}], "kind 'bake' is not one of train, soup"),
    ([{"name": "a", "kind": "train", "config": "nope.yaml"}], "step 'a': config file not found: nope.yaml"),
    ([{"name": "a", "kind": "train"}], "step 'a': a train step needs config"),
    ([{"name": "a", "kind": "train", "config": QUICK, "init_from": "b"},
      {"name": "b", "kind": "train", "config": QUICK}], "init_from 'b' is not the name of an earlier step"),
    ([{"name": "a", "kind": "train", "config": QUICK}, {"name": "m", "kind": "soup", "inputs": ["a", "z"]}],
     "input 'z' is not the name of an earlier step (earlier steps: a)"),
    ([{"name": "a", "kind": "train", "config": QUICK}, {"name": "m", "kind": "soup", "inputs": ["a"]}],
     "inputs must be a list of two or more"),
    ([{"name": "a", "kind": "train", "config": QUICK}, {"name": "a", "kind": "train", "config": QUICK}],
     "the name is used twice"),
    ([{"name": "../a", "kind": "train", "config": QUICK}], "must be a folder name"),
    ([{"name": "a", "kind": "train", "config": QUICK, "set": {"run_name": "x"}}], "set may not give run_name"),
    ([{"name": "a", "kind": "train", "config": QUICK, "output": "last"}], "output 'last' is not one of"),
    ([{"name": "a", "kind": "train", "config": QUICK, "set": {"learnin_rate": 1e-4}}],
     ("step 'a' (", "unknown config key(s) learnin_rate")),
]


@pytest.mark.parametrize("content,messages", BAD, ids=[str(i) for i in range(len(BAD))])
def test_a_bad_recipe_is_a_one_line_error_naming_the_problem(tmp_path, content, messages):
    with pytest.raises((ValueError, FileNotFoundError)) as e:
        recipe.main([write_recipe(tmp_path, content), "--dry-run", "--out", str(tmp_path / "out")])
    assert "\n" not in str(e.value)
    for message in (messages,) if isinstance(messages, str) else messages:
        assert message in str(e.value)


def test_bad_options_and_missing_recipe_are_one_line_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="recipe file not found: nope.yaml"):
        recipe.main(["nope.yaml", "--dry-run"])
    with pytest.raises(ValueError, match="--scale 0.0 must be a number > 0"):
        recipe.main([SHIPPED, "--dry-run", "--scale", "0"])
    with pytest.raises(ValueError, match="--set run_dir is the recipe's to give"):
        recipe.main([SHIPPED, "--dry-run", "--set", "run_dir=x"])


@pytest.mark.slow
def test_the_program_reports_errors_in_one_line(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "okgin_trainer.recipe", SHIPPED, "--dry-run", "--set", "num_envs=-1"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1 and proc.stderr.startswith("error: step 'stage1'") and "num_envs" in proc.stderr
    assert "Traceback" not in proc.stderr and proc.stderr.count("\n") == 1


@pytest.mark.slow
def test_the_shipped_recipe_runs_end_to_end_at_a_tiny_scale_and_its_result_plays(tmp_path, capfd):
    out = str(tmp_path / "shipped")
    result = recipe.main([SHIPPED, "--out", out] + TINY)
    assert result == os.path.join(out, "mean3", "soup.pt")
    state = json.load(open(os.path.join(out, recipe.STATE_FILE)))["steps"]
    assert list(state) == [s["name"] for s in shipped_steps()] and all(s["finished"] for s in state.values())
    from okgin_agents.ppo import load_checkpoint
    ckpt = load_checkpoint(result)  # the last mean: of mean2 and the two stage-5 runs, each started from mean2
    assert [os.path.basename(os.path.dirname(s["path"])) for s in ckpt["soup_of"]] == ["mean2", "stage5a", "stage5b"]
    assert load_checkpoint(os.path.join(out, "stage5a", "checkpoint.pt"))["args"]["init_from"].endswith("mean2/soup.pt")
    assert load_checkpoint(os.path.join(out, "stage2", "checkpoint.pt"))["args"]["init_from"].endswith("stage1/best.pt")

    import okgin_agents

    from okgin_env.game.core import VectorGame
    agent = okgin_agents.make("ppo:" + result, seed=0)
    game = VectorGame(8, seed=3, autoreset=True)
    step = game.reset()
    for _ in range(30):  # it plays both seats: every action it takes is legal
        actions = agent.act(step.observation, step.legal_action_mask)
        assert step.legal_action_mask[np.arange(8), actions].all()
        step = game.step(actions)

    capfd.readouterr()
    stamps = {p: os.path.getmtime(p) for p in glob.glob(os.path.join(out, "*", "*.pt"))}
    recipe.main([SHIPPED, "--out", out] + TINY)  # again: every step is finished, nothing runs
    assert capfd.readouterr().out.count("finished, skipped") == len(state)
    assert stamps == {p: os.path.getmtime(p) for p in glob.glob(os.path.join(out, "*", "*.pt"))}


# a small recipe of the same kinds of step: a run, a run from it, their mean (32-unit network, no warm start)
SMALL = ["--set", "hidden_sizes=[32]", "--set", "features=meld", "--set", "bc_agent=", "--set", "eval_opponents=[random]",
         "--set", "best_metric_opponent=random", "--set", "eval_hands=20", "--set", "eval_every=0",
         "--set", "checkpoint_every=1", "--set", "log_every=1", "--set", "num_envs=16", "--set", "num_steps=8",
         "--set", "num_threads=1", "--set", "opponent_mix={self: 0.5, random: 0.5}"]
SMALL_STEPS = [
    {"name": "a", "kind": "train", "config": QUICK, "set": {"total_timesteps": 256}},
    {"name": "b", "kind": "train", "config": QUICK, "init_from": "a", "set": {"total_timesteps": 128 * 30, "seed": 2}},
    {"name": "m", "kind": "soup", "inputs": ["a", "b"]},
]


@pytest.mark.slow
def test_an_interrupted_recipe_resumes_the_running_step_and_skips_finished_ones(tmp_path, monkeypatch, capfd):
    path, out = write_recipe(tmp_path, SMALL_STEPS), str(tmp_path / "out")
    from okgin_trainer import training
    real_learn = training.learn

    def killed_during_b(s):  # step b dies (as on a lost machine) in update 4, after update 3's checkpoint
        if s.args.run_name == "b" and s.iteration == 4:
            raise RuntimeError("the machine went away")
        return real_learn(s)

    monkeypatch.setattr(training, "learn", killed_during_b)
    with pytest.raises(RuntimeError, match="step 'b' failed \\(the machine went away\\); run the same command again"):
        recipe.main([path, "--out", out] + SMALL)
    ckpt_b = os.path.join(out, "b", "checkpoint.pt")
    from okgin_agents.ppo import load_checkpoint
    assert 3 <= load_checkpoint(ckpt_b)["iteration"] < 30
    assert not os.path.exists(os.path.join(out, "m"))
    a_stamp = os.path.getmtime(os.path.join(out, "a", "checkpoint.pt"))

    monkeypatch.setattr(training, "learn", real_learn)
    capfd.readouterr()
    recipe.main([path, "--out", out, "--dry-run"] + SMALL)  # what a rerun would do: skip a, resume b, average
    dry = capfd.readouterr().out.splitlines()
    assert "step 1/3 a: finished, skipped" in dry[0] and dry[1].endswith("b (resumed)")
    assert shlex.split(dry[2])[3:] == ["--resume", ckpt_b, "--set", "log_every=1", "--set", "num_threads=1"]
    recipe.main([path, "--out", out] + SMALL)
    assert os.path.getmtime(os.path.join(out, "a", "checkpoint.pt")) == a_stamp
    b = load_checkpoint(ckpt_b)
    assert b["iteration"] == 30 and b["global_step"] == 128 * 30
    assert len(glob.glob(os.path.join(out, "b*"))) == 1  # resumed in place, not started again beside
    assert [s["path"] for s in load_checkpoint(os.path.join(out, "m", "soup.pt"))["soup_of"]] == [
        os.path.join(out, "a", "checkpoint.pt"), ckpt_b]

    # the same folder with other settings is refused before anything runs
    with pytest.raises(ValueError, match="step 'a' in .* was started with other settings \\(differing: seed\\)"):
        recipe.main([path, "--out", out, "--set", "seed=5"] + SMALL)


def test_every_config_starts_from_files_a_fresh_clone_has():
    """A stage config's init_from is a file in the repository (the shipped agent), never an earlier run's output."""
    tracked = set(subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True).stdout.split())
    assert len(CONFIGS) >= 5
    for path in CONFIGS:
        with open(path, encoding="utf-8") as f:
            init_from = (yaml.safe_load(f) or {}).get("init_from", "")
        assert not init_from or init_from in tracked, f"{os.path.basename(path)}: init_from {init_from} is not in the repository"


@pytest.mark.slow
@pytest.mark.parametrize("config", [os.path.basename(c) for c in CONFIGS])
def test_every_config_starts_on_a_fresh_clone(config, tmp_path, monkeypatch):
    """Each config as it stands (no init_from given) trains one tiny update from the repository root."""
    from okgin_agents.ppo import load_checkpoint

    from okgin import train
    monkeypatch.chdir(ROOT)
    result = train.main(["--config", os.path.join("configs", config), "--set", f"run_dir={tmp_path}",
                         "--set", "num_envs=16", "--set", "num_steps=8", "--set", "total_timesteps=128",
                         "--set", "bc_decisions=64", "--set", "bc_epochs=1", "--set", "eval_hands=2",
                         "--set", "num_threads=1"])
    assert load_checkpoint(os.path.join(result["run_path"], "checkpoint.pt"))["global_step"] == 128
