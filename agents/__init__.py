"""okgin agents: every bot has the same batched ``act(observations, action_masks)`` surface.

    import okgin_agents
    bot = okgin_agents.make("simple", seed=0)
    actions = bot.act(observations, action_masks)  # (B, OBS_SIZE), (B, 107) -> (B,) int64

Importing this package registers the bundled bots with ``okgin_env.agent_specs`` (the one spec
resolver every script and env uses): ``random``, ``greedy``, ``simple``, ``expert``,
``search[:K[:PATH]]`` (determinized rollouts, K worlds per action, following a PPO checkpoint if given) and ``ppo:PATH`` (a checkpoint of
the PPO trainer). ``make`` also accepts a user's ``module:Attr``.
"""

from __future__ import annotations

import copy

from okgin_env import Rules
from okgin_env.agent_specs import agent_name, make_agent, register_agent, registered_specs

from .base import Agent
from .expert import ExpertAgent
from .greedy import GreedyAgent
from .random_agent import RandomAgent
from .search import SearchAgent, make_search
from .simple import SimpleAgent

BASELINES = {"random": RandomAgent, "greedy": GreedyAgent, "simple": SimpleAgent, "expert": ExpertAgent}


def _load_ppo(path: str | None, seed: int | None) -> Agent:
    if not path:
        raise ValueError("agent spec 'ppo:PATH' needs a checkpoint path after 'ppo:', e.g. ppo:runs/x/best.pt")
    from . import ppo  # lazy: torch is only imported when a PPO agent is asked for

    return ppo.load_ppo_agent(path, seed=seed, device="cpu")


for _name, _cls in BASELINES.items():
    register_agent(_name, lambda arg, seed, cls=_cls: cls(seed=seed))
register_agent("ppo", _load_ppo, usage="ppo:PATH")
register_agent("search", make_search, usage="search[:K[:PATH]]")

SPECS = registered_specs()  #: what ``make`` accepts (as written in messages)


def make(spec: str, seed: int | None = None, rules: Rules | None = None) -> Agent:
    """An agent from its spec (see ``SPECS``); ``seed`` seeds randomised agents.

    ``rules``: the rules of the games it will play (default ``Rules()``). Only an agent that simulates
    the game itself (``search``) reads them; see ``for_rules``. Unknown specs raise ``ValueError``
    listing the valid ones.
    """
    agent = make_agent(spec, seed=seed)
    return agent if rules is None else for_rules(agent, rules)


def for_rules(agent: Agent, rules: Rules) -> Agent:
    """``agent`` playing games under ``rules``.

    An agent that simulates the game to choose its moves (the search bot, or any agent with a ``rules``
    attribute holding a ``Rules``) must simulate the rules it plays under, or it plans for another
    game: such an agent is returned as a shallow copy with ``rules`` replaced. Every other agent reads
    only its observation and mask and is returned as it is.
    """
    if not isinstance(rules, Rules):
        raise TypeError(f"rules must be an okgin_env.Rules, got {type(rules).__name__}")
    current = getattr(agent, "rules", None)
    if not isinstance(current, Rules) or current == rules:
        return agent
    twin = copy.copy(agent)
    twin.rules = rules
    return twin


__all__ = ["Agent", "BASELINES", "SPECS", "make", "for_rules", "agent_name", "RandomAgent", "GreedyAgent", "SimpleAgent",
           "ExpertAgent", "SearchAgent"]
