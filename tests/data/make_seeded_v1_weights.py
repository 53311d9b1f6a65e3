"""Writes tests/data/seeded_v1_weights.npz: the weights behind seeded_v1.json's sha256 fingerprints.

seeded_v1.json recorded the tiny training runs' weights as sha256 hashes, which only the machine and
torch build that recorded them reproduce bit for bit (float sums in torch's CPU kernels depend on the
processor). To compare with a tolerance on any machine the tests need the weights themselves. This
script re-runs the recorded runs with today's code on the recording machine (2-core Intel Xeon,
torch 2.13.0+cpu, OMP_NUM_THREADS=1), checks that every weight file hashes to the recorded
fingerprint (so the arrays saved are exactly the recorded ones), and saves them::

    python tests/data/make_seeded_v1_weights.py   # from the checkout's root; refuses on a mismatch
"""
from __future__ import annotations

import importlib.util
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))
from support import TINY_TRAIN  # noqa: E402

from okgin import train  # noqa: E402

_spec = importlib.util.spec_from_file_location("make_seeded_v1", ROOT / "tests" / "data" / "make_seeded_v1.py")
make_seeded_v1 = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(make_seeded_v1)


def weights(path: str) -> dict[str, np.ndarray]:
    """The ``model`` state of a checkpoint as float32 arrays, by parameter name."""
    model = torch.load(path, map_location="cpu", weights_only=True)["model"]
    return {k: model[k].numpy().copy() for k in sorted(model)}


def main() -> None:
    os.environ["OMP_NUM_THREADS"] = "1"
    recorded = json.loads((ROOT / "tests" / "data" / "seeded_v1.json").read_text())["train"]
    arrays: dict[str, np.ndarray] = {}
    with tempfile.TemporaryDirectory() as tmp:
        runs = {"tiny": TINY_TRAIN, "tiny_3_updates": TINY_TRAIN + ["--set", "total_timesteps=384"]}
        for case, argv in runs.items():
            args, _ = train.parse_cli(argv + ["--set", f"run_dir={tmp}/{case}"])
            result = train.train(args)
            files = {"checkpoint": result.checkpoint, "best": result.best}
            for kind, path in files.items():
                key = "weights_sha256" if kind == "checkpoint" else "best_sha256"
                if key not in recorded[case]:
                    continue
                got = make_seeded_v1.weights_sha256(path)
                if got != recorded[case][key]:
                    sys.exit(f"{case}/{kind}: sha256 {got} is not the recorded {recorded[case][key]}: "
                             "run this on the machine and torch build that recorded seeded_v1.json")
                arrays.update({f"{case}/{kind}/{k}": v for k, v in weights(path).items()})
        (Path(tmp) / "resumed").mkdir()
        ckpt = Path(tmp) / "resumed" / "checkpoint.pt"  # a resumed run writes checkpoint.pt beside the file
        shutil.copy(ROOT / "tests" / "data" / "seeded_v1_resume.pt", ckpt)
        train.main(["--resume", str(ckpt), "--total-timesteps", "384"])
        if make_seeded_v1.weights_sha256(str(ckpt)) != recorded["resumed_to_3_updates"]["weights_sha256"]:
            sys.exit("the resumed run's sha256 is not the recorded one")
    np.savez_compressed(ROOT / "tests" / "data" / "seeded_v1_weights.npz", **arrays)
    print(f"wrote {len(arrays)} arrays")


if __name__ == "__main__":
    main()
