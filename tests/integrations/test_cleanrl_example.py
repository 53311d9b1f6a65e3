"""examples/cleanrl_ppo_vector.py runs end to end on a tiny budget and prints its evaluation line."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest
import torch
from support import ROOT, assert_plays_legally, load_example_agent


@pytest.mark.slow
def test_cleanrl_example_runs(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    cmd = [sys.executable, str(ROOT / "examples" / "cleanrl_ppo_vector.py"), "--timesteps", "256",
           "--num-envs", "8", "--num-steps", "16", "--update-epochs", "1", "--hands", "8", "--seed", "3",
           "--out", str(tmp_path / "agent.pt")]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    assert (tmp_path / "agent.pt").is_file()
    lines = done.stdout.strip().splitlines()
    assert lines[0].startswith("iter 1/2 steps 128 ")
    assert re.fullmatch(r"eval: greedy vs random: [+-]\d+\.\d\d points/hand \[[+-]\d+\.\d\d, [+-]\d+\.\d\d\] \(95% CI\), "
                        r"hand win rate \d+\.\d% over 8 hands",
                        lines[-1]), lines[-1]
    assert_plays_legally(load_example_agent("examples.cleanrl_ppo_vector:Player", "OKGIN_CLEANRL_PPO_WEIGHTS",
                                            tmp_path / "agent.pt"))
    with pytest.raises(FileNotFoundError, match="OKGIN_CLEANRL_PPO_WEIGHTS"):
        load_example_agent("examples.cleanrl_ppo_vector:Player", "OKGIN_CLEANRL_PPO_WEIGHTS", tmp_path / "missing.pt")
    torch.save({"features": "raw"}, tmp_path / "other.pt")  # a torch file, not these weights
    with pytest.raises(ValueError, match=r"is not weights saved by examples/cleanrl_ppo_vector.py \(KeyError"):
        load_example_agent("examples.cleanrl_ppo_vector:Player", "OKGIN_CLEANRL_PPO_WEIGHTS", tmp_path / "other.pt")
