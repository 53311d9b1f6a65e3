"""okgin: Oklahoma Gin as a batched numpy game, PettingZoo/Gymnasium environments on it."""

from .actions import DRAW_STOCK, KNOCK, NUM_ACTIONS, PASS, TAKE_DISCARD, action_text
from .cards import card_pretty, card_text, format_cards, parse_card, parse_cards, parse_deck
from .core import GameState, HandResult, Phase, StepOutput, VectorGame, random_legal_actions
from .observation import OBS_FIELDS, OBS_SIZE, OBS_VERSION, obs_field
from .rules import Rules

__all__ = [
    "DRAW_STOCK", "KNOCK", "NUM_ACTIONS", "PASS", "TAKE_DISCARD", "action_text",
    "card_pretty", "card_text", "format_cards", "parse_card", "parse_cards", "parse_deck",
    "GameState", "HandResult", "Phase", "StepOutput", "VectorGame", "random_legal_actions",
    "OBS_FIELDS", "OBS_SIZE", "OBS_VERSION", "obs_field", "Rules",
]

# Environments (env helper): PettingZoo AEC, Gymnasium single-agent, registration.
from . import registration  # noqa: E402  registers okgin/OklahomaGin-v0 with Gymnasium and PettingZoo
from .aec import STATE_FIELDS, STATE_SIZE, env, raw_env  # noqa: E402
from .single_agent import SingleAgentEnv  # noqa: E402

__all__ += ["env", "raw_env", "SingleAgentEnv", "STATE_FIELDS", "STATE_SIZE"]
