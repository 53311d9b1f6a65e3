"""Evaluation over processes: ``torchrun --nproc_per_node K evaluate.py ...`` shares the deals out.

Every process builds the same deal plan (``okgin_trainer.matches.seat_plan``) and plays the batches of
``--batch`` deals whose index is its rank modulo K; the per-hand rows of all processes are then
summed (each row is played by exactly one process, the others add zeros, so the sum is exact) and
every process holds the whole match. Rank 0 prints and writes the JSON.

What makes the figures independent of K: an agent that keeps a running random generator (a
``numpy.random.Generator``, ``torch.Generator`` or ``random.Random`` attribute: random, simple;
a ppo agent playing its argmax never draws from its own) draws numbers that depend on every
batch it played before, so each batch c >= 1 gets its own copy of it, made from
``batch_seed(seed, c)`` whichever process plays it (batch 0 keeps the agent as made). Agents
without one (greedy, expert, ppo, search, whose randomness is a hash of its seed and the
position) play every batch themselves, exactly as in a plain run. So any K gives the same
figures as any other K (1 included), bit for bit, and the same as one ``python evaluate.py``
when no agent keeps a generator or a pair fits in one batch; with random or simple over more
than ``--batch`` hands the two differ by those agents' random streams only.

Plain ``python evaluate.py`` (no torchrun) never imports torch or torch.distributed from here.
"""

from __future__ import annotations

import os
import sys
from typing import Callable

import numpy as np

from okgin_env.agent_specs import Agent


def launched_by_torchrun() -> bool:
    """True in a process started by torchrun (it sets RANK, WORLD_SIZE and LOCAL_RANK)."""
    return all(k in os.environ for k in ("RANK", "WORLD_SIZE", "LOCAL_RANK"))


def keeps_generator(agent: object) -> bool:
    """Whether ``agent`` holds a running random generator (numpy, torch or ``random``), so that its
    moves in one batch depend on the numbers it drew in the batches before."""
    import random

    kinds: tuple[type, ...] = (np.random.Generator, np.random.RandomState, random.Random)
    torch = sys.modules.get("torch")  # an agent can only hold a torch.Generator if torch is loaded
    if torch is not None:
        kinds += (torch.Generator,)
    if getattr(agent, "deterministic", False) is True:  # a PPOAgent playing its argmax never draws
        return False
    return any(isinstance(v, kinds) for v in vars(agent).values())


def batch_seed(seed: int, batch: int) -> int:
    """The seed of an agent's copy for batch ``batch`` >= 1 (batch 0 keeps ``seed``)."""
    return int(np.random.SeedSequence([seed, batch]).generate_state(1)[0])


class Shard:
    """This process's share of an evaluation: rank, world size, agents per batch, the sum of rows."""

    def __init__(self, rank: int, world_size: int, make: Callable[[str, int], Agent]) -> None:
        if not 0 <= rank < world_size:
            raise ValueError(f"rank must be in [0, {world_size}), got {rank}")
        self.rank, self.world_size = rank, world_size
        self._make = make
        self._specs: dict[int, tuple[str, int, str]] = {}  # id(agent) -> spec, seed, display name
        self._group = False

    @classmethod
    def from_env(cls, make: Callable[[str, int], Agent]) -> "Shard | None":
        """The shard torchrun describes (gloo process group on CPU when K > 1), or None when this
        process was not started by torchrun."""
        if not launched_by_torchrun():
            return None
        rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
        shard = cls(rank, world, make)
        if world > 1:
            import torch.distributed as dist

            dist.init_process_group("gloo")
            shard._group = True
        return shard

    def close(self) -> None:
        """Leave the process group (after a last barrier, so no rank exits while others still talk)."""
        if self._group:
            import torch.distributed as dist

            dist.barrier()
            dist.destroy_process_group()
            self._group = False

    def plays(self, batch: int) -> bool:
        """Whether this process plays batch number ``batch``."""
        return batch % self.world_size == self.rank

    def episodes(self, rows: int, batch: int) -> int:
        """The episodes this process plays of a match of ``rows`` episodes in batches of ``batch``."""
        return sum(min(batch, rows - start) for c, start in enumerate(range(0, rows, batch)) if self.plays(c))

    def note_idle(self, rows: int, batch: int, prog: str) -> None:
        """Say on stderr when a match of ``rows`` episodes has fewer batches than processes (the batch is the
        unit shared out): some processes have nothing to play."""
        batches = -(-rows // batch)
        if batches < self.world_size:
            print(f"{prog}: note: {batches} batch(es) of --batch {batch} for {self.world_size} processes: "
                  f"some have nothing to play; a smaller --batch shares the deals out", file=sys.stderr)

    def make(self, spec: str, seed: int, name: str) -> Agent:
        """``okgin_agents.make(spec, seed)`` named ``name``, remembered so that later batches get
        their own copy (``chunk_agent``)."""
        agent = self._make(spec, seed)
        agent.name = name
        self._specs[id(agent)] = (spec, seed, name)
        return agent

    def chunk_agent(self, agent: Agent, batch: int) -> Agent:
        """The agent that plays batch ``batch``: ``agent`` itself for batch 0, for an agent without a
        running generator (``keeps_generator``) and for one not made by ``make`` (the Python API);
        else a copy made from ``batch_seed``."""
        if batch == 0 or id(agent) not in self._specs or not keeps_generator(agent):
            return agent
        spec, seed, name = self._specs[id(agent)]
        copy = self._make(spec, batch_seed(seed, batch))
        copy.name = name
        return copy

    def combine(self, mine: np.ndarray, *arrays: np.ndarray) -> list[np.ndarray]:
        """Every process's rows: rows outside ``mine`` count as zero here and the processes' arrays
        are summed (float64, exact: each row is non-zero in one process at most); dtypes kept."""
        if not self._group:
            return list(arrays)
        import torch
        import torch.distributed as dist

        stack = torch.from_numpy(np.stack([np.where(mine, a, 0).astype(np.float64) for a in arrays]))
        dist.all_reduce(stack, op=dist.ReduceOp.SUM)
        total = stack.numpy()
        return [total[k].astype(a.dtype) for k, a in enumerate(arrays)]

    def timing(self, seconds: float, cpu_seconds: float) -> tuple[float, float]:
        """Wall-clock seconds of the slowest process and CPU seconds of all processes together."""
        if not self._group:
            return seconds, cpu_seconds
        import torch
        import torch.distributed as dist

        wall = torch.tensor([seconds], dtype=torch.float64)
        cpu = torch.tensor([cpu_seconds], dtype=torch.float64)
        dist.all_reduce(wall, op=dist.ReduceOp.MAX)
        dist.all_reduce(cpu, op=dist.ReduceOp.SUM)
        return float(wall[0]), float(cpu[0])
