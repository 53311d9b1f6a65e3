"""train.py end to end with a tiny config: smoke run, exact resume, torchrun with 2 processes."""

from __future__ import annotations

import glob
import os
import subprocess
import sys

import numpy as np
import pytest
import torch
from okgin_agents.ppo import (
    FEATURES_VERSION,
    load_checkpoint,
    load_ppo_agent,
    save_checkpoint,
)
from okgin_trainer import soup
from okgin_trainer.oracle import PRIVILEGED_SIZE
from okgin_trainer.resume import resume_config
from support import ROOT, TINY_TRAIN

from okgin import train
from okgin_env.game.core import VectorGame

TINY = TINY_TRAIN  # 2 updates of 16 games x 8 steps, a 32-unit network, tiny evaluations


def run_train(args: list[str], tmp_path, launcher: list[str] | None = None, timeout: int = 240):
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""), "OMP_NUM_THREADS": "1"}
    cmd = (launcher or [sys.executable]) + [os.path.join(ROOT, "train.py")] + args
    proc = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return proc


def only_run_dir(root) -> str:
    runs = glob.glob(os.path.join(root, "*"))
    assert len(runs) == 1, runs
    return runs[0]


@pytest.mark.slow
def test_smoke_run_writes_tensorboard_events_and_a_loadable_checkpoint(tmp_path):
    proc = run_train(TINY + ["--set", f"run_dir={tmp_path / 'runs'}"], tmp_path)
    assert "update 2/2" in proc.stdout and "eval @ step" in proc.stdout
    run = only_run_dir(tmp_path / "runs")
    assert glob.glob(os.path.join(run, "events.out.tfevents.*"))
    ckpt = load_checkpoint(os.path.join(run, "checkpoint.pt"))
    assert ckpt["iteration"] == 2 and ckpt["global_step"] == 256 and ckpt["args"]["num_envs"] == 16
    assert {"optimizer", "train_state", "rules", "obs_version", "eval"} <= set(ckpt)
    assert load_checkpoint(os.path.join(run, "best.pt"))["iteration"] in (1, 2)
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    acc = EventAccumulator(run)
    acc.Reload()
    tags = set(acc.Tags()["scalars"])
    assert {"charts/SPS", "losses/policy_loss", "losses/value_loss", "losses/entropy", "losses/approx_kl",
            "losses/clipfrac", "losses/explained_variance", "eval/win_rate_vs_random",
            "eval/points_per_hand_vs_random", "eval_time/points_per_hand_vs_random"} <= tags
    assert "SPS" in proc.stdout and "it/s" not in proc.stderr  # stderr is no terminal: log lines, no bar

    import okgin_agents as agents
    agent = agents.make(f"ppo:{os.path.join(run, 'checkpoint.pt')}", seed=0)
    game = VectorGame(8, seed=3)
    out = game.reset()
    actions = agent.act(out.observation, out.legal_action_mask)
    assert out.legal_action_mask[np.arange(8), actions].all()


@pytest.mark.slow
def test_init_from_starts_a_new_run_from_a_checkpoints_weights(tmp_path):
    run_train(TINY + ["--set", f"run_dir={tmp_path / 'a'}", "--set", "total_timesteps=128"], tmp_path)
    src = os.path.join(only_run_dir(tmp_path / "a"), "checkpoint.pt")
    run_train(TINY + ["--set", f"run_dir={tmp_path / 'b'}", "--set", "total_timesteps=128", "--set", f"init_from={src}",
                      "--set", "learning_rate=1e-12", "--set", "ent_coef=0"], tmp_path)
    a, b = load_checkpoint(src), load_checkpoint(os.path.join(only_run_dir(tmp_path / "b"), "checkpoint.pt"))
    for k in a["model"]:  # a vanishing learning rate: the weights stay those it started from
        torch.testing.assert_close(a["model"][k], b["model"][k], rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="does not fit this config"):
        train.main(TINY + ["--set", f"run_dir={tmp_path / 'c'}", "--set", f"init_from={src}", "--set", "hidden_sizes=[8]"])


@pytest.mark.slow
def test_a_second_run_with_a_fixed_name_moves_the_first_aside_intact(tmp_path):
    """`python train.py` twice (run_name: quick): runs/quick holds the newest run, the first one is
    moved to runs/quick-<time>, its checkpoints unchanged and loadable, and the log line says how to resume it."""
    fixed = TINY + ["--set", f"run_dir={tmp_path / 'runs'}", "--set", "total_timesteps=128"]
    run_train(fixed, tmp_path)
    first = load_checkpoint(str(tmp_path / "runs" / "quick" / "checkpoint.pt"))
    proc = run_train(fixed + ["--set", "seed=2"], tmp_path)
    moved = [d for d in glob.glob(str(tmp_path / "runs" / "quick-*"))]
    assert len(moved) == 1, moved
    assert f"--resume {os.path.join(moved[0], 'checkpoint.pt')}" in proc.stdout
    kept = load_checkpoint(os.path.join(moved[0], "checkpoint.pt"))
    assert kept["args"]["seed"] == 1 and load_checkpoint(os.path.join(moved[0], "best.pt"))
    for k in first["model"]:
        assert torch.equal(first["model"][k], kept["model"][k]), k
    assert glob.glob(os.path.join(moved[0], "events.out.tfevents.*"))
    assert load_checkpoint(str(tmp_path / "runs" / "quick" / "checkpoint.pt"))["args"]["seed"] == 2


CONFIGS = sorted(glob.glob(os.path.join(ROOT, "configs", "*.yaml")))  # every config, so a new one cannot be missed
TINY_BUDGET = ["--set", "num_envs=16", "--set", "num_steps=8", "--set", "total_timesteps=128", "--set", "bc_decisions=64",
               "--set", "bc_epochs=1", "--set", "eval_hands=20", "--set", "eval_every=1", "--set", "num_threads=1"]


def test_shipped_configs_are_valid():
    assert len(CONFIGS) >= 5
    for path in CONFIGS:
        args, _ = train.parse_cli(["--config", path])
        assert args.exp_name


@pytest.mark.slow
@pytest.mark.parametrize("config", [os.path.basename(c) for c in CONFIGS])
def test_every_config_runs_with_a_tiny_budget(config, tmp_path, monkeypatch):
    """Each shipped config starts, trains an update and saves (its own network, opponents and init_from;
    paths in configs are relative to the repository root, where the README runs them)."""
    monkeypatch.chdir(ROOT)
    args, _ = train.parse_cli(["--config", os.path.join(ROOT, "configs", config)])
    # a later stage starts from an earlier stage's run, which a checkout lacks: the shipped agent stands in
    start = ["--set", "init_from=checkpoints/okgin_ppo.pt"] if args.init_from.startswith("runs/") else []
    result = train.main(["--config", os.path.join(ROOT, "configs", config), "--set", f"run_dir={tmp_path}"]
                        + start + TINY_BUDGET)
    ckpt = load_checkpoint(os.path.join(result["run_path"], "checkpoint.pt"))
    assert ckpt["global_step"] == 128 and ckpt["features_version"] == FEATURES_VERSION


@pytest.mark.slow
def test_the_stages_of_the_shipped_agent_fit_together(tmp_path, monkeypatch):
    """default.yaml's checkpoint initialises finetune_expert.yaml, whose checkpoint initialises
    finetune_unshaped.yaml; the stages' checkpoints average into one agent (trainer.soup), which
    finetune_soup.yaml fine-tunes, and that run and the mean average again."""
    monkeypatch.chdir(ROOT)
    first = train.main(["--config", os.path.join(ROOT, "configs", "default.yaml"), "--set", f"run_dir={tmp_path}"]
                       + TINY_BUDGET)
    src = os.path.join(first["run_path"], "checkpoint.pt")
    second = train.main(["--config", os.path.join(ROOT, "configs", "finetune_expert.yaml"), "--set", f"run_dir={tmp_path}",
                         "--set", f"init_from={src}", "--set", "learning_rate=1e-12", "--set", "ent_coef=0"] + TINY_BUDGET)
    a, b = load_checkpoint(src), load_checkpoint(os.path.join(second["run_path"], "checkpoint.pt"))
    for k in a["model"]:  # a vanishing learning rate: the weights stay those it started from
        torch.testing.assert_close(a["model"][k], b["model"][k], rtol=1e-5, atol=1e-6)
    stage2 = os.path.join(second["run_path"], "checkpoint.pt")
    third = train.main(["--config", os.path.join(ROOT, "configs", "finetune_unshaped.yaml"), "--set",
                        f"run_dir={tmp_path}", "--set", f"init_from={stage2}"] + TINY_BUDGET)
    stage3 = os.path.join(third["run_path"], "checkpoint.pt")
    plain = train.main(["--config", os.path.join(ROOT, "configs", "finetune_expert.yaml"), "--set", f"run_dir={tmp_path}",
                        "--set", f"init_from={src}", "--set", "oracle_critic=false"] + TINY_BUDGET)
    soup1 = str(tmp_path / "soup1.pt")
    soup.main([stage2, os.path.join(plain["run_path"], "checkpoint.pt"), stage3, "--out", soup1])
    fourth = train.main(["--config", os.path.join(ROOT, "configs", "finetune_soup.yaml"), "--set",
                         f"run_dir={tmp_path}", "--set", f"init_from={soup1}"] + TINY_BUDGET)
    soup.main([soup1, os.path.join(fourth["run_path"], "checkpoint.pt"), "--out", str(tmp_path / "soup2.pt")])
    agent = load_ppo_agent(str(tmp_path / "soup2.pt"))
    assert agent.network.config == load_checkpoint(stage2)["model_config"]


@pytest.mark.slow
def test_opponents_may_be_any_agent_spec(tmp_path, monkeypatch):
    """opponent_mix, eval_opponents and bc_agent take plug-in (module:Attr) and checkpoint (ppo:PATH) specs."""
    monkeypatch.chdir(ROOT)
    plugin, shipped = "okgin_env.agent_specs:RandomAgent", "ppo:checkpoints/okgin_ppo.pt"
    result = train.main(TINY + ["--set", f"run_dir={tmp_path}", "--set", "total_timesteps=128",
                                "--set", f"opponent_mix={{self: 0.5, '{plugin}': 0.25, '{shipped}': 0.25}}",
                                "--set", f"eval_opponents=['{plugin}']", "--set", f"best_metric_opponent={plugin}",
                                "--set", f"bc_agent={plugin}", "--set", "bc_decisions=64", "--set", "bc_epochs=1"])
    assert set(result["eval"]) == {plugin}


ORACLE = ["--set", "oracle_critic=true", "--set", "shared_trunk=false"]


@pytest.mark.slow
@pytest.mark.parametrize("extra", [[], ORACLE], ids=["plain", "oracle_critic"])
def test_resume_reproduces_the_uninterrupted_run_exactly(tmp_path, extra):
    """Run A: 3 updates straight. Run B: 2 updates ("killed" after its checkpoint), then --resume
    for the 3rd. The weights after update 3 must be identical (with an oracle critic too: its
    privileged inputs of pending decisions are carried in the checkpoint)."""
    run_train(TINY + extra + ["--set", "total_timesteps=384", "--set", f"run_dir={tmp_path / 'a'}"], tmp_path)
    run_train(TINY + extra + ["--set", f"run_dir={tmp_path / 'b'}"], tmp_path)
    ckpt_b = os.path.join(only_run_dir(tmp_path / "b"), "checkpoint.pt")
    proc = run_train(["--resume", ckpt_b, "--total-timesteps", "384"], tmp_path)
    assert "update 3/3" in proc.stdout and "update 1/" not in proc.stdout
    a = load_checkpoint(os.path.join(only_run_dir(tmp_path / "a"), "checkpoint.pt"))
    b = load_checkpoint(ckpt_b)
    assert a["iteration"] == b["iteration"] == 3 and a["global_step"] == b["global_step"] == 384
    for k in a["model"]:
        assert torch.equal(a["model"][k], b["model"][k]), k
    assert torch.equal(a["train_state"]["next_obs"], b["train_state"]["next_obs"])


def test_resume_rejects_config_changes_and_bad_checkpoints(tmp_path):
    bad = tmp_path / "bad.pt"
    bad.write_bytes(b"garbage")
    with pytest.raises(ValueError, match="not a readable okgin PPO checkpoint"):
        train.parse_cli(["--resume", str(bad)])
    with pytest.raises(FileNotFoundError):
        train.parse_cli(["--resume", str(tmp_path / "nope.pt")])


def test_resume_allows_only_the_overridable_keys(tmp_path):
    """--resume takes the run's config from its checkpoint; --set may change only RESUME_OVERRIDABLE, an exported
    agent (no training state) cannot be resumed, and --config cannot be mixed in."""
    exported = os.path.join(ROOT, "checkpoints", "okgin_ppo.pt")
    with pytest.raises(ValueError, match="exported agent without training state"):
        train.parse_cli(["--resume", exported])
    ckpt = load_checkpoint(exported)
    ckpt["train_state"] = {}
    ckpt["args"] = {**ckpt.get("args", {}), "num_envs": 8, "learning_rate": 1e-3}
    run = str(tmp_path / "checkpoint.pt")
    save_checkpoint(run, ckpt)
    with pytest.raises(ValueError, match=r"only total_timesteps, .* may be changed \(got learning_rate, seed\)"):
        train.parse_cli(["--resume", run, "--set", "learning_rate=0.1", "--seed", "3", "--set", "log_every=5"])
    with pytest.raises(ValueError, match="do not pass --config"):
        train.parse_cli(["--resume", run, "--config", os.path.join(ROOT, "configs", "quick.yaml")])
    config = resume_config(run, {"log_every": 5, "total_timesteps": 1024})
    assert (config["num_envs"], config["learning_rate"], config["log_every"], config["total_timesteps"]) == (8, 1e-3, 5, 1024)


@pytest.mark.slow
def test_cli_reports_unknown_keys_without_a_traceback(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, os.path.join(ROOT, "train.py"), "--set", "learning_rat=0.1"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode != 0
    assert "unknown config key(s) learning_rat (did you mean learning_rate?); valid keys:" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_the_default_config_ships_inside_the_package_and_is_configs_quick_yaml():
    """`okgin-train` with no --config runs the quick config also installed from a wheel (no configs/ folder there):
    the package carries it (pyproject's package data), and it is the same file as the checkout's configs/quick.yaml."""
    import tomllib

    import okgin
    package = os.path.dirname(os.path.abspath(okgin.__file__))
    assert os.path.commonpath([train.DEFAULT_CONFIG, package]) == package
    with open(train.DEFAULT_CONFIG, "rb") as a, open(os.path.join(ROOT, "configs", "quick.yaml"), "rb") as b:
        assert a.read() == b.read(), "okgin/quick.yaml must equal configs/quick.yaml: copy one onto the other"
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        package_data = tomllib.load(f)["tool"]["setuptools"]["package-data"]["okgin"]
    assert os.path.relpath(train.DEFAULT_CONFIG, package).replace(os.sep, "/") in package_data
    args, _ = train.parse_cli([])
    assert args.exp_name == "quick"


def test_a_missing_init_from_is_that_keys_problem(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"^config key 'init_from': PPO checkpoint not found: .*nope\.pt"):
        train.main(TINY + ["--set", f"run_dir={tmp_path}", "--set", f"init_from={tmp_path / 'nope.pt'}"])


@pytest.mark.slow
def test_torchrun_two_processes_on_cpu(tmp_path):
    launcher = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2"]
    proc = run_train(TINY + ["--set", f"run_dir={tmp_path / 'runs'}", "--set", "total_timesteps=512"],
                     tmp_path, launcher=launcher, timeout=300)
    assert "2 process(es)" in proc.stdout and "update 2/2" in proc.stdout
    ckpt = load_checkpoint(os.path.join(only_run_dir(tmp_path / "runs"), "checkpoint.pt"))
    assert ckpt["global_step"] == 512 and ckpt["train_state"]["world_size"] == 2


@pytest.mark.slow
def test_oracle_critic_warm_start_and_play(tmp_path):
    """An oracle-critic run imitates a bot (its critic reading the hidden state), trains, and its
    checkpoint plays as an agent without any privileged input; a shared trunk is refused."""
    result = train.main(TINY + ORACLE + ["--set", f"run_dir={tmp_path / 'runs'}", "--set", "bc_agent=simple",
                                         "--set", "bc_decisions=64", "--set", "bc_epochs=1"])
    ckpt = load_checkpoint(os.path.join(result["run_path"], "checkpoint.pt"))
    assert ckpt["model_config"]["privileged_size"] == PRIVILEGED_SIZE and not ckpt["model_config"]["shared_trunk"]
    import okgin_agents as agents
    agent = agents.make(f"ppo:{os.path.join(result['run_path'], 'checkpoint.pt')}", seed=0)
    out = VectorGame(8, seed=3).reset()
    assert out.legal_action_mask[np.arange(8), agent.act(out.observation, out.legal_action_mask)].all()
    with pytest.raises(ValueError, match="oracle_critic"):
        train.main(TINY + ["--set", "oracle_critic=true", "--set", f"run_dir={tmp_path / 'x'}"])
