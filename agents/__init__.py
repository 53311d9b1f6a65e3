"""okgin agents: every bot has the same batched ``act(observations, action_masks)`` surface.

    import agents
    bot = agents.make("simple", seed=0)
    actions = bot.act(observations, action_masks)  # (B, OBS_SIZE), (B, 107) -> (B,) int64

Specs for ``make``: ``random``, ``greedy``, ``simple``, ``expert`` and ``ppo:PATH`` (a checkpoint
of the PPO trainer, loaded by ``agents.ppo.load_ppo_agent``).
"""

from __future__ import annotations

from .base import Agent
from .expert import ExpertAgent
from .greedy import GreedyAgent
from .random_agent import RandomAgent
from .simple import SimpleAgent

BASELINES = {"random": RandomAgent, "greedy": GreedyAgent, "simple": SimpleAgent, "expert": ExpertAgent}
SPECS = (*BASELINES, "ppo:PATH")  #: what ``make`` accepts


def make(spec: str, seed: int | None = None) -> Agent:
    """An agent from its spec (see ``SPECS``); ``seed`` seeds randomised agents.

    Unknown specs raise ``ValueError`` listing the valid ones.
    """
    if not isinstance(spec, str):
        raise ValueError(f"agent spec must be a string, one of: {', '.join(SPECS)}; got {spec!r}")
    name = spec.strip()
    if name.lower() in BASELINES:
        return BASELINES[name.lower()](seed=seed)
    if name.lower().startswith("ppo:"):
        path = name[len("ppo:"):].strip()
        if not path:
            raise ValueError("agent spec 'ppo:PATH' needs a checkpoint path after 'ppo:', e.g. ppo:runs/x/model.pt")
        return _load_ppo(path, seed)
    raise ValueError(f"unknown agent spec {spec!r}; valid specs: {', '.join(SPECS)}")


def _load_ppo(path: str, seed: int | None) -> Agent:
    try:
        from . import ppo  # lazy: torch is only imported when a PPO agent is asked for
    except ModuleNotFoundError as e:
        if e.name == f"{__name__}.ppo":
            raise ValueError(f"cannot load ppo:{path}: the PPO agent module agents/ppo.py "
                             "(written by the trainer) is not installed yet") from None
        raise
    return ppo.load_ppo_agent(path, seed=seed, device="cpu")


__all__ = ["Agent", "BASELINES", "SPECS", "make", "RandomAgent", "GreedyAgent", "SimpleAgent", "ExpertAgent"]
