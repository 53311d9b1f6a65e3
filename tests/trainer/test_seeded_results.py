"""Seeded results stay what they were: evaluate.py's reports and tables (exact: they are counts and points),
the tiny training run's per-update scalars and final weights, and a resumed run (within stated
tolerances: see below), against tests/data/seeded_v1.json, which tests/data/make_seeded_v1.py recorded
from the code of commit bbcddf5, and tests/data/seeded_v1_weights.npz (the weights behind its hashes)."""

from __future__ import annotations

import contextlib
import importlib.util
import io
import json
import shutil

import numpy as np
import pytest
import torch
from support import ROOT, TINY_TRAIN

from okgin import evaluate, train

DATA = ROOT / "tests" / "data"
FIXTURE = json.loads((DATA / "seeded_v1.json").read_text())
# the recording script's own readers (weights' hash, TensorBoard scalars, timing fields dropped): one definition
_spec = importlib.util.spec_from_file_location("make_seeded_v1", DATA / "make_seeded_v1.py")
make_seeded_v1 = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(make_seeded_v1)
weights_sha256, tensorboard_scalars, strip_timing = (make_seeded_v1.weights_sha256, make_seeded_v1.scalars,
                                                     make_seeded_v1.strip_timing)


def without_speed(text: str) -> list[str]:
    """The lines of evaluate.py's stdout without the hands/s column of a match table (a wall-clock figure)."""
    out, cut = [], False
    for line in text.splitlines():
        cut = line.endswith("hands/s") or (cut and line != "")
        out.append(line[:-9] if cut else line)
    return out


def assert_contains(want, got, where: str = "") -> None:
    """Every entry of the recorded ``want`` is in ``got`` with the same value (a report may gain keys)."""
    if isinstance(want, dict):
        for k, v in want.items():
            assert k in got, f"{where}.{k} missing"
            assert_contains(v, got[k], f"{where}.{k}")
    elif isinstance(want, list):
        assert len(want) == len(got), where
        for k, (w, g) in enumerate(zip(want, got)):
            assert_contains(w, g, f"{where}[{k}]")
    else:
        assert want == got or (want != want and got != got), f"{where}: {got!r} != recorded {want!r}"  # nan == nan


@pytest.mark.parametrize("case", sorted(FIXTURE["evaluate"]))
def test_evaluate_reproduces_the_recorded_reports(case, tmp_path, monkeypatch):
    recorded = FIXTURE["evaluate"][case]
    monkeypatch.chdir(ROOT)  # the recorded specs and paths are relative to the checkout's root
    path = tmp_path / "out.json"
    stdout = io.StringIO()
    with contextlib.redirect_stdout(stdout):
        evaluate.main(recorded["argv"] + ([] if case == "human" else ["--no-progress"]) + ["--json", str(path)])
    assert_contains(recorded["json"], strip_timing(json.loads(path.read_text())), case)
    got, want = without_speed(stdout.getvalue()), without_speed(recorded["stdout"])
    if case == "human":  # since 2c5a6ed (#36) the headline also counts abandoned games, on purpose; the tables are as recorded
        got, want = got[1:], want[1:]
    assert got == want


# Float results of training compare with a tolerance. They were recorded on the project's CI machine, a
# 2-core Intel Xeon, with torch 2.13.0+cpu and again bit-identically with 2.14.1+cu130 on the CPU
# (OMP_NUM_THREADS=1). Float sums in torch's CPU kernels depend on the processor, the build and the
# thread count, so elsewhere values differ from about the 7th significant digit on (a value loss of
# 0.016990210860967636 against 0.016990212723612785 on another Xeon; with 2 threads here the weights
# move by at most 1.7e-7 and the policy loss, about -3e-5, by 2.5e-8). Adam steps each weight by about
# the learning rate (3e-5) whatever its gradient's size, so a gradient entry near zero may step either
# way: the weights' absolute tolerance allows one such step. Discrete results (evaluation points,
# steps) are exact. Bit-exact identity is checked within one machine, by two runs
# (test_training_is_bit_exact_within_a_machine).
METRIC_TOL = {"rel": 1e-4, "abs": 1e-6}
WEIGHT_TOL = {"rtol": 1e-4, "atol": 5e-5}
WEIGHTS = np.load(DATA / "seeded_v1_weights.npz")  # the arrays behind the recorded sha256 (make_seeded_v1_weights.py)


def assert_metrics_close(got: dict, want: dict) -> None:
    """The same tags and steps, each value within ``METRIC_TOL`` of the recorded one."""
    assert sorted(got) == sorted(want)
    for tag in want:
        assert [s for s, _ in got[tag]] == [s for s, _ in want[tag]], tag
        assert [v for _, v in got[tag]] == pytest.approx([v for _, v in want[tag]], **METRIC_TOL), tag


def assert_weights_close(path: str, key: str) -> None:
    """The checkpoint's weights within ``WEIGHT_TOL`` of the recorded arrays under ``key/``."""
    got = weights_of(path)
    want = {name.split("/", 2)[2]: WEIGHTS[name] for name in WEIGHTS.files if name.startswith(key + "/")}
    assert sorted(got) == sorted(want), key
    for name in want:
        np.testing.assert_allclose(got[name], want[name], **WEIGHT_TOL, err_msg=f"{key}/{name}")


def weights_of(path: str) -> dict[str, np.ndarray]:
    model = torch.load(path, map_location="cpu", weights_only=True)["model"]
    return {k: model[k].numpy() for k in model}


def tiny_run(tmp_path, extra: list[str]):
    args, _ = train.parse_cli(TINY_TRAIN + extra + ["--set", f"run_dir={tmp_path}"])
    return train.train(args)


def logged(result) -> dict:
    return {tag: [list(x) for x in v] for tag, v in result.metrics.items()
            if tag != "charts/SPS" and not tag.startswith("eval_time/")}


@pytest.mark.slow
@pytest.mark.parametrize("case,extra", [("tiny", []), ("tiny_3_updates", ["--set", "total_timesteps=384"])])
def test_the_tiny_training_run_reproduces_its_recorded_curve_and_weights(case, extra, tmp_path, monkeypatch):
    """``train(config)`` in-process: its per-update metrics (as returned and as TensorBoard holds them), the
    weights of checkpoint.pt and best.pt, the last evaluation, against the recorded run (with tolerances)."""
    recorded = FIXTURE["train"][case]
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    result = tiny_run(tmp_path, extra)
    assert_metrics_close(logged(result), recorded["metrics"])
    assert_metrics_close(tensorboard_scalars(result.run_path), recorded["metrics"])
    assert_weights_close(result.checkpoint, f"{case}/checkpoint")
    if case == "tiny":
        assert_weights_close(result.best, "tiny/best")
        assert json.loads(json.dumps(result.last_eval)) == recorded["eval"]
        assert result.global_step == recorded["global_step"]


@pytest.mark.slow
def test_resuming_a_recorded_checkpoint_gives_the_recorded_weights(tmp_path):
    """The 2-update checkpoint written by the code of bbcddf5, resumed by today's code to 3 updates, ends
    with the weights of the uninterrupted 3-update run (recorded then; with the tolerances above)."""
    ckpt = tmp_path / "checkpoint.pt"
    shutil.copy(DATA / "seeded_v1_resume.pt", ckpt)
    train.main(["--resume", str(ckpt), "--total-timesteps", "384"])  # the command's path, as a user resumes
    want = FIXTURE["train"]["resumed_to_3_updates"]["weights_sha256"]
    assert want == FIXTURE["train"]["tiny_3_updates"]["weights_sha256"]
    assert_weights_close(str(ckpt), "tiny_3_updates/checkpoint")


@pytest.mark.slow
def test_training_is_bit_exact_within_a_machine(tmp_path, monkeypatch):
    """On one machine the same seed gives the same run bit for bit: a 3-update run, and a 2-update run
    resumed to 3, end with identical weights and identical per-update metrics where they overlap."""
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    whole = tiny_run(tmp_path / "whole", ["--set", "total_timesteps=384"])
    again = tiny_run(tmp_path / "again", ["--set", "total_timesteps=384"])
    assert logged(whole) == logged(again)
    assert weights_sha256(whole.checkpoint) == weights_sha256(again.checkpoint)
    part = tiny_run(tmp_path / "part", [])
    train.main(["--resume", part.checkpoint, "--total-timesteps", "384"])
    assert weights_sha256(part.checkpoint) == weights_sha256(whole.checkpoint)
