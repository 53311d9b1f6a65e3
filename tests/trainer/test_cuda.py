"""The GPU path (#28 item 6): a tiny training, its resume and an evaluation on cuda.

Skipped without a GPU. One command checks a GPU machine (about a minute):

    python -m pytest -q -m cuda tests/trainer/test_cuda.py

``OKGIN_TEST_DEVICE=cpu`` runs the same tests on the CPU (how they are checked on machines
without a GPU: the test code itself, not the GPU path).
"""

from __future__ import annotations

import os

import numpy as np
import pytest
import torch
from okgin_agents.ppo import load_checkpoint, load_ppo_agent
from support import TINY_TRAIN

from okgin_env.game.core import VectorGame

DEVICE = os.environ.get("OKGIN_TEST_DEVICE", "cuda")

pytestmark = [pytest.mark.cuda, pytest.mark.skipif(DEVICE.startswith("cuda") and not torch.cuda.is_available(),
                                                   reason="no CUDA device (torch.cuda.is_available() is False)")]

TINY = TINY_TRAIN + ["--set", f"device={DEVICE}"]  # conftest's tiny run on DEVICE


def _train(args: list[str]) -> dict:
    from okgin import train

    return train.main(TINY + args)


def _run_dir(root) -> str:
    runs = [os.path.join(root, d) for d in os.listdir(root)]
    assert len(runs) == 1, runs
    return runs[0]


def test_tiny_training_resume_and_evaluation(tmp_path):
    # A: 3 updates straight; B: 2 updates, then --resume for the 3rd: the same weights
    _train(["--set", "total_timesteps=384", "--set", f"run_dir={tmp_path / 'a'}"])
    _train(["--set", f"run_dir={tmp_path / 'b'}"])
    ckpt_b = os.path.join(_run_dir(tmp_path / "b"), "checkpoint.pt")
    assert load_checkpoint(ckpt_b)["iteration"] == 2
    from okgin import train

    train.main(["--resume", ckpt_b, "--total-timesteps", "384"])
    a = load_checkpoint(os.path.join(_run_dir(tmp_path / "a"), "checkpoint.pt"))
    b = load_checkpoint(ckpt_b)
    assert a["iteration"] == b["iteration"] == 3 and a["args"]["device"] == DEVICE
    for k in a["model"]:
        assert a["model"][k].device.type == "cpu"  # load_checkpoint maps to the CPU by default
        # a GPU's kernels may order sums differently between the two runs' processes: float32 tolerance
        torch.testing.assert_close(a["model"][k], b["model"][k], msg=k)

    # the checkpoint plays on the device and on the CPU alike (near-ties aside)
    on_device = load_ppo_agent(ckpt_b, seed=0, device=DEVICE)
    on_cpu = load_ppo_agent(ckpt_b, seed=0, device="cpu")
    out = VectorGame(256, seed=3).reset()
    act_d = on_device.act(out.observation, out.legal_action_mask)
    act_c = on_cpu.act(out.observation, out.legal_action_mask)
    assert out.legal_action_mask[np.arange(256), act_d].all()
    assert (act_d == act_c).mean() >= 0.99

    from okgin_agents import make

    from okgin.evaluate import play_match

    r = play_match(on_device, make("random", seed=1), 64, seed=0)  # a 3-update agent may never knock: no sign check
    assert r.hands == 64 and r.wins_a + r.wins_b + r.voids == 64
