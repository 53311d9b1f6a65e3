"""okgin agents: every bot has the same batched ``act(observations, action_masks)`` surface.

    import okgin_agents
    bot = okgin_agents.make("simple", seed=0)
    actions = bot.act(observations, action_masks)  # (B, OBS_SIZE), (B, 107) -> (B,) int64

Importing this package registers the bundled bots with ``okgin_env.agent_specs`` (the one registry
every script and env uses; its ``random`` is ``okgin_env.RandomAgent``): ``greedy``, ``simple``, ``expert``, ``eaai_simple``
(Neller's SimpleGinRummyPlayer of the EAAI framework, exactly),
``search[:K[:PATH]]`` (determinized rollouts, K worlds per action, following a PPO checkpoint if given) and ``ppo:PATH`` (a checkpoint of
the PPO trainer). ``make`` also accepts a user's ``module:Attr``.
"""

from __future__ import annotations

from okgin_env.agent_specs import (
    Agent,
    RandomAgent,
    agent_name,
    for_rules,
    make_agent,
    register_agent,
    registered_specs,
)

from .eaai_simple import EaaiSimpleAgent
from .expert import ExpertAgent
from .greedy import GreedyAgent
from .search import SearchAgent, make_search
from .simple import SimpleAgent

BASELINES = {"random": RandomAgent, "greedy": GreedyAgent, "simple": SimpleAgent, "expert": ExpertAgent,
             "eaai_simple": EaaiSimpleAgent}


def _load_ppo(path: str | None, seed: int | None) -> Agent:
    if not path:
        raise ValueError("agent spec 'ppo:PATH' needs a checkpoint path after 'ppo:', e.g. ppo:runs/x/best.pt")
    from . import ppo  # lazy: torch is only imported when a PPO agent is asked for

    return ppo.load_ppo_agent(path, seed=seed, device="cpu")


for _name, _cls in BASELINES.items():
    if _name == "random":  # okgin_env's own, registered there: one class whatever is imported first
        continue
    register_agent(_name, lambda arg, seed, cls=_cls: cls(seed=seed))
register_agent("ppo", _load_ppo, usage="ppo:PATH")
register_agent("search", make_search, usage="search[:K[:PATH]]")


def _load_llm(arg: str | None, seed: int | None) -> Agent:
    from . import llm  # lazy: the openai client is only imported when a model is seated

    return llm.make_llm(arg, seed)


register_agent("llm", _load_llm, usage="llm:MODEL@BASE_URL", needs_arg=True)

SPECS = registered_specs()  #: what ``make`` accepts (as written in messages)


# The README, docs/search.md and the examples name an agent with ``okgin_agents.make(spec, seed, rules)``:
# that is okgin_env's one ``make_agent`` under the name its users call, not a second resolver. ``for_rules``
# (docs/search.md), ``Agent`` (the protocol) and ``RandomAgent`` (``BASELINES``) are okgin_env's too.
make = make_agent


__all__ = ["Agent", "BASELINES", "SPECS", "make", "for_rules", "agent_name", "RandomAgent", "GreedyAgent", "SimpleAgent",
           "ExpertAgent", "SearchAgent", "EaaiSimpleAgent"]
