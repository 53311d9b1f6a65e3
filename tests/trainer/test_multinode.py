"""Training across machines (#28 item 6): two torchrun launchers, each one "node" of one process,
meet at a c10d rendezvous on 127.0.0.1 and train together; both ranks end with the same weights
and one checkpoint is written. (On real machines: the same command with the first machine's
address as --rdzv-endpoint, docs/training.md.)"""

from __future__ import annotations

import glob
import os
import socket
import subprocess
import sys

import pytest
import torch
from okgin_agents.ppo import load_checkpoint
from support import ROOT, TINY_TRAIN

TINY = TINY_TRAIN + ["--set", "total_timesteps=512", "--set", "device=cpu"]  # conftest's tiny run, 4 updates

# Each rank saves the weights it ends with: train() returns them (TrainResult.network).
WRAPPER = """
import os, sys, torch
from okgin import train
result = train.train(*train.parse_cli(sys.argv[1:]))
torch.save({k: v.detach().cpu() for k, v in result.network.state_dict().items()},
           os.path.join(os.environ["OKGIN_RANK_OUT"], "rank%s.pt" % os.environ["RANK"]))
"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.slow  # two launchers, two training processes
def test_two_nodes_train_together_with_identical_weights(tmp_path):
    wrapper = tmp_path / "rank_weights.py"
    wrapper.write_text(WRAPPER)
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""),
           "OMP_NUM_THREADS": "1", "OKGIN_RANK_OUT": str(tmp_path)}
    launcher = [sys.executable, "-m", "torch.distributed.run", "--nnodes", "2", "--nproc_per_node", "1",
                "--rdzv-backend", "c10d", "--rdzv-endpoint", f"127.0.0.1:{_free_port()}", "--rdzv-id", "okgin-test"]
    cmd = launcher + [str(wrapper), *TINY, "--set", f"run_dir={tmp_path / 'runs'}"]
    nodes = [subprocess.Popen(cmd, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
             for _ in range(2)]
    try:
        outs = [p.communicate(timeout=300)[0] for p in nodes]
    finally:
        for p in nodes:
            if p.poll() is None:
                p.kill()
    assert all(p.returncode == 0 for p in nodes), "\n".join(o[-3000:] for o in outs)
    assert any("2 process(es)" in o for o in outs)
    w0, w1 = (torch.load(tmp_path / f"rank{r}.pt", weights_only=True) for r in (0, 1))
    assert w0.keys() == w1.keys()
    for k in w0:
        assert torch.equal(w0[k], w1[k]), k
    ckpts = glob.glob(str(tmp_path / "runs" / "*" / "checkpoint.pt"))
    assert len(ckpts) == 1  # rank 0 alone writes
    ckpt = load_checkpoint(ckpts[0])
    assert ckpt["global_step"] == 512 and ckpt["train_state"]["world_size"] == 2
    for k in w0:  # the checkpoint holds the weights both ranks ended with
        assert torch.equal(ckpt["model"][k], w0[k]), k
