"""Writes tests/data/seeded_v1.json (and seeded_v1_resume.pt, human_results_v1.jsonl): seeded results of the
code of commit bbcddf5, before the programs were split (#35 item 5), which tests/test_seeded_results.py checks
today's code reproduces exactly:

* the tests' tiny training run (conftest.TINY_TRAIN, 2 updates): every per-update scalar it logs (all but the
  wall-clock ones: charts/SPS, eval_time/*), the sha256 of its final weights, its last evaluation; the same
  run to 3 updates; and the weights after resuming the 2-update checkpoint (kept as seeded_v1_resume.pt) to 3;
* evaluate.py's JSON report (timing fields dropped) and stdout of a round robin with games, a paired
  comparison, single deals under other rules, and --human-results on a seeded file of made-up games.

Run from the root of a checkout of bbcddf5, its packages first on the path (the editable install maps
okgin_agents / okgin_trainer to the main checkout's folders), e.g.::

    mkdir -p /tmp/p && ln -s $PWD/agents /tmp/p/okgin_agents && ln -s $PWD/trainer /tmp/p/okgin_trainer
    PYTHONPATH=/tmp/p:$PWD python tests/data/make_seeded_v1.py OUT_DIR
"""
import contextlib
import glob
import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import torch

sys.path.insert(0, os.path.join(os.getcwd(), "tests"))
from conftest import TINY_TRAIN  # noqa: E402

TIMING = ("seconds", "hands_per_s", "cpu_seconds")


def weights_sha256(path: str) -> str:
    model = torch.load(path, map_location="cpu", weights_only=True)["model"]
    h = hashlib.sha256()
    for k in sorted(model):
        h.update(k.encode() + model[k].numpy().tobytes())
    return h.hexdigest()


def train(args: list[str], tmp: str) -> str:
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    subprocess.run([sys.executable, os.path.join(os.getcwd(), "train.py"), *args], cwd=tmp, env=env, check=True,
                   capture_output=True)
    return glob.glob(os.path.join(tmp, "runs", "*"))[0] if "--resume" not in args else ""


def scalars(run: str) -> dict:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    acc = EventAccumulator(run, size_guidance={"scalars": 0})
    acc.Reload()
    return {tag: [[e.step, float(e.value)] for e in acc.Scalars(tag)] for tag in sorted(acc.Tags()["scalars"])
            if tag != "charts/SPS" and not tag.startswith("eval_time/")}


def training(out: str) -> dict:
    result = {}
    with tempfile.TemporaryDirectory() as a, tempfile.TemporaryDirectory() as b:
        run_a = train(TINY_TRAIN + ["--set", "run_dir=runs"], a)
        ckpt = torch.load(os.path.join(run_a, "checkpoint.pt"), map_location="cpu", weights_only=True)
        result["tiny"] = {"metrics": scalars(run_a), "weights_sha256": weights_sha256(os.path.join(run_a, "checkpoint.pt")),
                          "best_sha256": weights_sha256(os.path.join(run_a, "best.pt")),
                          "eval": ckpt["eval"], "global_step": ckpt["global_step"]}
        shutil.copy(os.path.join(run_a, "checkpoint.pt"), os.path.join(out, "seeded_v1_resume.pt"))
        run_b = train(TINY_TRAIN + ["--set", "run_dir=runs", "--set", "total_timesteps=384"], b)
        result["tiny_3_updates"] = {"metrics": scalars(run_b),
                                    "weights_sha256": weights_sha256(os.path.join(run_b, "checkpoint.pt"))}
        train(["--resume", os.path.join(run_a, "checkpoint.pt"), "--total-timesteps", "384"], a)
        result["resumed_to_3_updates"] = {"weights_sha256": weights_sha256(os.path.join(run_a, "checkpoint.pt"))}
    return result


def human_file(path: str) -> None:
    """Made-up finished games in the format of play.py --web's results file, seeded; a torn last line."""
    rng = np.random.default_rng(35)
    with open(path, "w") as f:
        for g in range(14):
            hands = []
            for _ in range(int(rng.integers(1, 5))):
                void = bool(rng.random() < 0.15)
                winner, knocker = int(rng.integers(2)), int(rng.integers(2))
                pts = [0, 0] if void else [int(rng.integers(1, 40)) if winner == p else 0 for p in (0, 1)]
                hands.append({"points": pts, "winner": None if void else winner, "knocker": None if void else knocker,
                              "gin": bool(not void and winner == knocker and rng.random() < 0.3),
                              "undercut": bool(not void and winner != knocker), "void": void})
            game = g % 3 == 0
            totals = [sum(h["points"][p] for h in hands) for p in (0, 1)]
            rec = {"format": "okgin-human-results", "version": 1, "time": "2026-12-01T00:00:00Z",
                   "seconds": float(rng.integers(30, 600)), "opponent": ["simple", "expert", "random"][g % 3],
                   "spec": "x", "rules": {"knock_limit": 10} if g % 4 == 1 else {}, "episode": "game" if game else "hand",
                   "seed": g, "moves": 10, "hands": hands, "final_scores": totals if game else None,
                   "winner": int(np.argmax(totals)) if game else hands[-1]["winner"]}
            f.write(json.dumps(rec) + "\n")
        f.write('{"format": "okgin-human-res')


def strip_timing(report: dict) -> dict:
    for key in ("matches", "games"):
        report[key] = [{k: v for k, v in r.items() if k not in TIMING} for r in report.get(key, [])]
    return report


EVALUATIONS = {
    "round_robin": ["--agents", "expert", "simple", "random", "greedy", "--hands", "48", "--games", "4", "--seed", "3",
                    "--batch", "16", "--bootstrap", "40"],
    "paired": ["--paired", "ppo:checkpoints/okgin_ppo.pt", "expert", "--opponent", "simple", "--hands", "40",
               "--seed", "5", "--batch", "16"],
    "single_deals": ["--agents", "simple", "random", "--hands", "30", "--games", "3", "--no-duplicate", "--seed", "7",
                     "--batch", "8", "--rules", "knock_limit=10", "spade_double=true"],
    "human": ["--human-results", "tests/data/human_results_v1.jsonl"],
}


def evaluations(out: str) -> dict:
    from okgin import evaluate
    human_file(os.path.join(out, "human_results_v1.jsonl"))
    shutil.copy(os.path.join(out, "human_results_v1.jsonl"), "tests/data/human_results_v1.jsonl")
    result = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, argv in EVALUATIONS.items():
            path = os.path.join(tmp, name + ".json")
            stdout = io.StringIO()
            with contextlib.redirect_stdout(stdout):
                evaluate.main(argv + ([] if name == "human" else ["--no-progress"]) + ["--json", path])
            with open(path) as f:
                result[name] = {"argv": argv, "json": strip_timing(json.load(f)), "stdout": stdout.getvalue()}
    return result


if __name__ == "__main__":
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    data = {"commit": "bbcddf5", "evaluate": evaluations(out), "train": training(out)}
    with open(os.path.join(out, "seeded_v1.json"), "w") as f:
        json.dump(data, f, indent=1)
