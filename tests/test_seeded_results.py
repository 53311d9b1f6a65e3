"""Seeded results stay what they were (#35): evaluate.py's reports and tables, the tiny training run's
per-update scalars and final weights, and a resumed run, against tests/data/seeded_v1.json, which
tests/data/make_seeded_v1.py recorded from the code of commit bbcddf5 (before the programs were split)."""

from __future__ import annotations

import contextlib
import importlib.util
import io
import json
import shutil

import pytest

from conftest import ROOT, TINY_TRAIN
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


@pytest.mark.slow
@pytest.mark.parametrize("case,extra", [("tiny", []), ("tiny_3_updates", ["--set", "total_timesteps=384"])])
def test_the_tiny_training_run_reproduces_its_recorded_curve_and_weights(case, extra, tmp_path, monkeypatch):
    """``train(config)`` in-process: its per-update metrics (as returned and as TensorBoard holds them), the
    weights of checkpoint.pt and best.pt, the last evaluation."""
    recorded = FIXTURE["train"][case]
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    args, _ = train.parse_cli(TINY_TRAIN + extra + ["--set", f"run_dir={tmp_path}"])
    result = train.train(args)
    metrics = {tag: [list(x) for x in v] for tag, v in result.metrics.items()
               if tag != "charts/SPS" and not tag.startswith("eval_time/")}
    assert metrics == recorded["metrics"]
    assert tensorboard_scalars(result.run_path) == recorded["metrics"]
    assert weights_sha256(result.checkpoint) == recorded["weights_sha256"]
    if case == "tiny":
        assert weights_sha256(result.best) == recorded["best_sha256"]
        assert json.loads(json.dumps(result.last_eval)) == recorded["eval"]
        assert result.global_step == recorded["global_step"]


@pytest.mark.slow
def test_resuming_a_recorded_checkpoint_gives_the_recorded_weights(tmp_path):
    """The 2-update checkpoint written by the code of bbcddf5, resumed by today's code to 3 updates, ends
    with the weights of the uninterrupted 3-update run (recorded then)."""
    ckpt = tmp_path / "checkpoint.pt"
    shutil.copy(DATA / "seeded_v1_resume.pt", ckpt)
    train.main(["--resume", str(ckpt), "--total-timesteps", "384"])  # the command's path, as a user resumes
    want = FIXTURE["train"]["resumed_to_3_updates"]["weights_sha256"]
    assert want == FIXTURE["train"]["tiny_3_updates"]["weights_sha256"]
    assert weights_sha256(str(ckpt)) == want
