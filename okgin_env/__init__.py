"""okgin: Oklahoma Gin as a batched numpy game, PettingZoo/Gymnasium environments on it.

The core (``VectorGame``, ``Rules``, cards, actions, observation layout) imports only numpy and
numba. The environments are loaded on first use (``okgin_env.env``, ``okgin_env.SingleAgentEnv``,
...), so core-only code never imports PettingZoo or torch. ``import okgin_env`` registers the
Gymnasium ids (see ``okgin_env.envs.registration``).
"""

from __future__ import annotations

import importlib
from typing import Any

from okgin_env.agent_specs import Agent, RandomAgent, for_rules, make_agent, register_agent
from okgin_env.envs.registration import register_envs
from okgin_env.game.actions import DRAW_STOCK, KNOCK, NUM_ACTIONS, PASS, TAKE_DISCARD, action_text
from okgin_env.game.cards import card_pretty, card_text, format_cards, parse_card, parse_cards, parse_deck
from okgin_env.game.core import GameState, HandResult, Phase, StepOutput, VectorGame, random_legal_actions
from okgin_env.game.observation import OBS_FIELDS, OBS_SIZE, OBS_VERSION, obs_field
from okgin_env.game.rules import Rules

# name -> module that defines it, imported on first access (PEP 562)
_LAZY = {
    "env": "envs.aec", "raw_env": "envs.aec", "STATE_FIELDS": "envs.aec", "STATE_SIZE": "envs.aec",
    "SingleAgentEnv": "envs.single_agent", "OkginVectorEnv": "envs.vector",
}

__all__ = [
    "DRAW_STOCK", "KNOCK", "NUM_ACTIONS", "PASS", "TAKE_DISCARD", "action_text",
    "Agent", "RandomAgent", "for_rules", "make_agent", "register_agent",
    "card_pretty", "card_text", "format_cards", "parse_card", "parse_cards", "parse_deck",
    "GameState", "HandResult", "Phase", "StepOutput", "VectorGame", "random_legal_actions",
    "OBS_FIELDS", "OBS_SIZE", "OBS_VERSION", "obs_field", "Rules", "register_envs", *_LAZY,
]

register_envs()


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
