"""Rule options of Oklahoma Gin (see ``docs/RULES.md``, "Option values").

The defaults together are Oklahoma Gin; ``Rules(knock_limit=10)`` is classic Gin Rummy.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Mapping, NamedTuple

from okgin_env.game.suggest import unknown_names_message

NEXT_DEALER_CHOICES = ("winner", "loser", "alternate")
#: ``RuleParams.next_dealer``: the index of the choice in NEXT_DEALER_CHOICES
WINNER_DEALS, LOSER_DEALS, DEALERS_ALTERNATE = range(len(NEXT_DEALER_CHOICES))
#: allowed range of each integer option: a hand scores at most 2 x (98 + 1000) points, a game
#: at most ~10,000 + that, far inside int32; turns are counted in int16 (max 32,767)
_INT_RANGES = {"gin_bonus": (0, 1000), "undercut_bonus": (0, 1000), "target_score": (1, 10000),
               "max_turns_per_hand": (1, 10000)}


@dataclass(frozen=True)
class Rules:
    """Every rule option of docs/RULES.md with its default. Invalid values raise ``ValueError``."""

    knock_limit: str | int = "upcard"
    """"upcard" (the first upcard's knock value: A -> 0, 2-9 -> face, T-K -> 10) or a fixed int 0-10."""
    gin_bonus: int = 25
    """Bonus for gin, int >= 0."""
    undercut_bonus: int = 10
    """Bonus for the defender on an undercut, int >= 0."""
    next_dealer: str = "winner"
    """Who deals after a non-void hand: "winner", "loser" or "alternate"."""
    discard_taken_card: bool = False
    """Whether a card taken from the discard pile may be discarded in the same turn."""
    spade_double: bool = False
    """Double a hand's score when its first upcard is a spade."""
    target_score: int = 100
    """A game ends when a player's total reaches this, int >= 1."""
    game_bonuses: bool = False
    """Line bonus 25 per hand won, 100 for the game, shutout doubles (at game end)."""
    max_turns_per_hand: int = 200
    """Turn cap: after this many turns a hand is void (truncated), int >= 1."""

    def __post_init__(self) -> None:
        kl = self.knock_limit
        if not (kl == "upcard" or (_is_int(kl) and 0 <= kl <= 10)):
            _bad("knock_limit", kl, '"upcard" or an integer 0-10')
        # upper bounds keep every score and turn count far inside the kernels' int16/int32 fields
        for name, (low, high) in _INT_RANGES.items():
            v = getattr(self, name)
            if not (_is_int(v) and low <= v <= high):
                _bad(name, v, f"an integer >= {low} and <= {high}")
        if self.next_dealer not in NEXT_DEALER_CHOICES:
            _bad("next_dealer", self.next_dealer, " | ".join(f'"{c}"' for c in NEXT_DEALER_CHOICES))
        for name in ("discard_taken_card", "spade_double", "game_bonuses"):
            v = getattr(self, name)
            if not isinstance(v, bool):
                _bad(name, v, "True or False")

    @classmethod
    def option_names(cls) -> list[str]:
        """Names of all rule options."""
        return [f.name for f in dataclasses.fields(cls)]

    @classmethod
    def from_dict(cls, options: Mapping[str, Any]) -> "Rules":
        """Build from a mapping; unknown names raise ``ValueError`` listing the valid ones."""
        unknown = set(options) - set(cls.option_names())
        if unknown:
            raise ValueError(unknown_names_message(unknown, cls.option_names(), "rule option"))
        return cls(**dict(options))

    @classmethod
    def from_strings(cls, items: list[str] | tuple[str, ...]) -> "Rules":
        """Build from command-line ``key=value`` strings ("knock_limit=10", "spade_double=true")."""
        opts: dict[str, Any] = {}
        for item in items:
            if "=" not in item:
                raise ValueError(f"rule option {item!r} must look like key=value; valid keys: {', '.join(cls.option_names())}")
            key, value = (s.strip() for s in item.split("=", 1))
            opts[key] = _parse_value(value)
        return cls.from_dict(opts)

    def to_dict(self) -> dict[str, Any]:
        """Plain dict of all options (for configs, checkpoints and logs)."""
        return dataclasses.asdict(self)


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _bad(name: str, value: Any, allowed: str) -> None:
    raise ValueError(f"invalid rule option {name}={value!r}: allowed is {allowed}")


def _parse_value(text: str) -> Any:
    low = text.lower()
    if low in ("true", "yes", "on"):
        return True
    if low in ("false", "no", "off"):
        return False
    try:
        return int(text)
    except ValueError:
        return text


# ------------------------------------------------------------------ the kernels' view of the rules
# The kernels read the rules as one record of plain numbers, ``rules.knock_limit``: a field per
# option of ``Rules`` (the same name and order), then ``game_episode``. A new option is a new
# field of ``Rules``; only an option whose value is not a number or a bool says here how a kernel
# reads it.

#: how a kernel reads an option that is not a number or a bool
KERNEL_VALUE = {
    "knock_limit": lambda v: -1 if v == "upcard" else int(v),  # a fixed knock limit, or -1: the upcard's
    "next_dealer": NEXT_DEALER_CHOICES.index,  # WINNER_DEALS, LOSER_DEALS or DEALERS_ALTERNATE
}

RuleParams = NamedTuple("RuleParams", [(f.name, int) for f in dataclasses.fields(Rules)] + [("game_episode", bool)])
RuleParams.__doc__ = """The rules and the episode kind as the numba kernels read them (``rules.knock_limit``):
each option of ``Rules`` as an int or bool (``KERNEL_VALUE``), then ``game_episode`` (episodes are
games, hands until target_score, not single hands). Built by ``rule_params``."""


def rule_params(rules: Rules, episode: str) -> RuleParams:
    """``rules`` and the episode kind ("hand" or "game") as the kernels read them."""
    values = [KERNEL_VALUE.get(f.name, _plain)(getattr(rules, f.name)) for f in dataclasses.fields(Rules)]
    return RuleParams(*values, episode == "game")


def _plain(v: Any) -> int | bool:
    return v if isinstance(v, bool) else int(v)
