"""Environment options and spaces shared by every okgin environment (no PettingZoo here).

``EnvConfig.from_options`` splits keyword options into ``Rules`` and env options and rejects
unknown names; ``parse_reset_options`` validates ``reset(options={"deck", "dealer"})``;
``observation_box`` / ``observation_space`` are the observation spaces.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np
from gymnasium import spaces

from okgin_env.features.learner import FEATURES, feature_bounds
from okgin_env.features.shaping import check_coef
from okgin_env.game.actions import NUM_ACTIONS
from okgin_env.game.cards import parse_deck
from okgin_env.game.constants import GAME_BONUS, LINE_BONUS
from okgin_env.game.core import EPISODES
from okgin_env.game.observation import OBS_FIELDS, OBS_SIZE
from okgin_env.game.rules import Rules
from okgin_env.game.suggest import unknown_names_message

REWARD_MODES = ("points", "win")
DEFAULT_REWARD_SCALE = 0.02  #: "points" rewards are points x this (a 50-point gin gives 1.0)
ILLEGAL_ACTION_MODES = ("terminate", "raise")  #: see EnvConfig.illegal_action
ILLEGAL_REWARD = -1.0  #: the learner's reward when an illegal action ends its episode ("terminate")
OBS_FORMATS = ("vector", "dict", "rllib")  #: see EnvConfig.obs_format
AEC_OBS_FORMATS = ("dict", "rllib")  #: the AEC env's (its observation always carries the mask)
#: obs_format -> the keys of a dict observation: (vector, mask). "dict" is PettingZoo's classic-env
#: convention (Tianshou's PettingZoo path reads it too); "rllib" is what RLlib's action-masking
#: RLModules read (``ActionMaskingTorchRLModule``).
DICT_KEYS = {"dict": ("observation", "action_mask"), "rllib": ("observations", "action_mask")}
ENV_OPTION_NAMES = ("episode", "reward", "reward_scale", "deadwood_shaping", "features", "obs_format", "rules")
LEARNER_OPTION_NAMES = ("illegal_action",)  #: options of the single-agent and vector envs only
RESET_OPTION_NAMES = ("deck", "dealer")
LEARNER_ENV_ARGUMENTS = ("opponent", "seat", "render_mode")  #: SingleAgentEnv's own arguments (not options)
VECTOR_ENV_ARGUMENTS = ("num_envs", "opponent", "seat", "render_mode")  #: OkginVectorEnv's own arguments
AEC_ENV_ARGUMENTS = ("render_mode",)  #: raw_env's own argument
MAX_DEADWOOD = 100  #: ten cards of 10 points


# --------------------------------------------------------------------------- options

def _choice(options: dict[str, Any], key: str, default: str, allowed: tuple[str, ...]) -> str:
    """``options[key]`` (``default`` when absent) if it is one of ``allowed``, else a one-line error."""
    value = options.get(key, default)
    if value not in allowed:
        raise ValueError(f"invalid option {key}={value!r}: allowed is {' | '.join(map(repr, allowed))}")
    return value


@dataclass(frozen=True)
class EnvConfig:
    """Rules and environment options shared by the AEC and the single-agent environment."""

    rules: Rules
    episode: str = "hand"
    reward: str = "points"
    reward_scale: float = DEFAULT_REWARD_SCALE
    deadwood_shaping: float = 0.0  #: coefficient of okgin_env.features.shaping's potential (0: off)
    illegal_action: str = "terminate"  #: "terminate": the episode ends, reward ILLEGAL_REWARD; "raise": ValueError
    #: "vector": the observation Box (learner envs only); "dict": Dict(observation, action_mask) (the AEC
    #: env's default); "rllib": Dict(observations, action_mask), RLlib's keys (``DICT_KEYS``)
    obs_format: str = "vector"
    features: str = "raw"  #: the learner's observation: "raw", or with okgin_env.features.learner' "meld"/"outs" columns

    @staticmethod
    def option_names(learner: bool = True) -> list[str]:
        """Valid keyword options; ``learner=False`` leaves out the learner-env-only ones (AEC env)."""
        return Rules.option_names() + list(ENV_OPTION_NAMES) + (list(LEARNER_OPTION_NAMES) if learner else [])

    @classmethod
    def from_options(cls, options: Mapping[str, Any], learner: bool = True,
                     arguments: Sequence[str] | None = None) -> "EnvConfig":
        """Split keyword options into rules and env options; unknown names raise ``TypeError`` (Python's
        convention for an unexpected keyword, which libraries such as TorchRL and SB3 rely on) listing
        every valid name, the env constructor's own ``arguments`` too (default: the single-agent env's
        ``LEARNER_ENV_ARGUMENTS``, or the AEC env's ``AEC_ENV_ARGUMENTS`` with ``learner=False``), and
        the closest name to each unknown one (``gym.make(..., oponent="simple")``: did you mean opponent?)."""
        valid = cls.option_names(learner)
        unknown = set(options) - set(valid)
        if unknown:
            if arguments is None:
                arguments = LEARNER_ENV_ARGUMENTS if learner else AEC_ENV_ARGUMENTS
            # Python's own words first: TorchRL's GymEnv drops its frameskip and retries only when the
            # message says "unexpected keyword argument 'frameskip'" (a TypeError alone is not enough)
            python_words = "; ".join(f"unexpected keyword argument {name!r}" for name in sorted(unknown))
            raise TypeError(f"{python_words}: "
                            + unknown_names_message(unknown, valid + [a for a in arguments if a not in valid]))
        rule_opts = {k: v for k, v in options.items() if k in Rules.option_names()}
        rules = options.get("rules")
        if rules is not None:
            if isinstance(rules, str):  # a rule set's name: rules="eaai"
                rules = Rules.named(rules)
            if not isinstance(rules, Rules):
                raise ValueError(f"rules must be an okgin_env.Rules or a rule set's name, got {type(rules).__name__}")
            if rule_opts:
                raise ValueError(f"give either rules=Rules(...) or rule options ({', '.join(rule_opts)}), not both")
        else:
            rules = Rules.from_dict(rule_opts)
        episode = _choice(options, "episode", "hand", EPISODES)
        reward = _choice(options, "reward", "points", REWARD_MODES)
        scale = options.get("reward_scale", DEFAULT_REWARD_SCALE)
        if isinstance(scale, bool) or not isinstance(scale, (int, float)) or not (math.isfinite(scale) and scale > 0):
            raise ValueError(f"invalid option reward_scale={scale!r}: allowed is a finite number > 0")
        shaping = check_coef(options.get("deadwood_shaping", 0.0))
        illegal = _choice(options, "illegal_action", "terminate", ILLEGAL_ACTION_MODES)
        obs_format = (_choice(options, "obs_format", "vector", OBS_FORMATS) if learner
                      else _choice(options, "obs_format", "dict", AEC_OBS_FORMATS))
        features = _choice(options, "features", "raw", FEATURES)
        return cls(rules, episode, reward, float(scale), shaping, illegal, obs_format, features)


def warn_unknown_reset_options(options: Mapping[str, Any], stacklevel: int = 3) -> None:
    """Warn about reset option names other than ``RESET_OPTION_NAMES`` (they are ignored)."""
    unknown = sorted(set(options) - set(RESET_OPTION_NAMES))
    if unknown:
        warnings.warn(f"ignoring unknown reset option(s) {', '.join(map(str, unknown))}; "
                      f"known: {', '.join(RESET_OPTION_NAMES)}", stacklevel=stacklevel)


def parse_reset_options(options: Mapping[str, Any] | None) -> tuple[np.ndarray | None, int | None]:
    """(deck, dealer) from ``reset(options={"deck": ..., "dealer": ...})``, validated."""
    if not options:
        return None, None
    warn_unknown_reset_options(options, stacklevel=4)
    deck = options.get("deck")
    if deck is not None:
        try:
            deck = parse_deck(deck)
        except ValueError as e:
            raise ValueError(f"reset option 'deck': {e}") from None
    dealer = options.get("dealer")
    if dealer is not None:
        if isinstance(dealer, (bool, np.bool_)) or not isinstance(dealer, (int, np.integer)) or dealer not in (0, 1):
            raise ValueError(f"reset option 'dealer' must be 0 or 1 (the player id who deals), got {dealer!r}")
        dealer = int(dealer)
    return deck, dealer


# ---------------------------------------------------------------------------- spaces

def score_bound(rules: Rules) -> float:
    """An upper bound on a total score / target (the observation's and state's score fields).

    Before the last hand both totals are below the target; the last hand adds at most
    max(100 + gin bonus, 10 + undercut bonus), doubled with ``spade_double``. Game bonuses add
    100 and 25 per hand won and may double: a hand won scores >= 1 point when both bonuses
    are >= 1 (so at most 2 x target hands are won); otherwise 1000 hands are assumed.
    """
    hand = max(MAX_DEADWOOD + rules.gin_bonus, 10 + rules.undercut_bonus) * (2 if rules.spade_double else 1)
    total = rules.target_score + hand
    if rules.game_bonuses:
        hands = 2 * rules.target_score if min(rules.gin_bonus, rules.undercut_bonus) >= 1 else 1000
        total = 2 * (total + GAME_BONUS + LINE_BONUS * hands)
    return max(1.0, total / rules.target_score)


def observation_box(rules: Rules, features: str = "raw") -> spaces.Box:
    """Box of the observation vector: [0, 1] except the score fields (see ``score_bound``); with
    ``features="meld"``/``"outs"`` followed by the columns of ``okgin_env.features.learner.learner_input``
    (bounds from ``feature_bounds``: [0, 1] except ``near``/``opp_near`` up to 7/4 and
    ``take_gain`` from -1)."""
    high = np.ones(OBS_SIZE, np.float32)
    sc = OBS_FIELDS["scores"]
    high[sc.start:sc.start + 2] = score_bound(rules)
    high[sc.start + 2] = max(1.0, rules.target_score / 100.0)
    extra_low, extra_high = feature_bounds(features)
    low = np.concatenate([np.zeros(OBS_SIZE, np.float32), extra_low])
    high = np.concatenate([high, extra_high])
    return spaces.Box(low=low, high=high, shape=high.shape, dtype=np.float32)


def action_mask_box() -> spaces.Box:
    """Box of an int8 action mask (1 = legal), the ``action_mask`` of dict observations."""
    return spaces.Box(0, 1, (NUM_ACTIONS,), np.int8)


def observation_space(rules: Rules, obs_format: str = "vector", features: str = "raw") -> spaces.Space:
    """The observation space for ``obs_format`` (see ``EnvConfig.obs_format``): the observation
    ``Box`` (``observation_box(rules, features)``), or a ``Dict`` of it and ``action_mask_box()`` under
    the format's ``DICT_KEYS``."""
    box = observation_box(rules, features)
    if obs_format == "vector":
        return box
    if obs_format in DICT_KEYS:
        obs_key, mask_key = DICT_KEYS[obs_format]
        return spaces.Dict({obs_key: box, mask_key: action_mask_box()})
    raise ValueError(f"invalid obs_format={obs_format!r}: allowed is {' | '.join(map(repr, OBS_FORMATS))}")
