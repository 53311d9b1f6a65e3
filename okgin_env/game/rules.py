"""Rule options of Oklahoma Gin (see ``docs/RULES.md``, "Option values").

The defaults together are Oklahoma Gin; ``Rules(knock_limit=10)`` is classic Gin Rummy.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field, fields
from typing import Any, Mapping, NamedTuple

from okgin_env.game.suggest import unknown_names_message

NEXT_DEALER_CHOICES = ("winner", "loser", "alternate")
#: ``RuleParams.next_dealer``: the index of the choice in NEXT_DEALER_CHOICES
WINNER_DEALS, LOSER_DEALS, DEALERS_ALTERNATE = range(len(NEXT_DEALER_CHOICES))
SHOWDOWN_CHOICES = ("optimal", "eaai")
#: ``RuleParams.showdown``: the index of the choice in SHOWDOWN_CHOICES
OPTIMAL_SHOWDOWN, EAAI_SHOWDOWN = range(len(SHOWDOWN_CHOICES))
#: the EAAI rule set's turn cap (``Rules.eaai()``): far above any hand that ends (a stock of 31 cards
#: lasts about 35 turns), low enough that two bots passing the same cards back and forth end soon
EAAI_TURN_CAP = 1000
#: ``RuleParams.max_turns_per_hand`` of ``max_turns_per_hand=None``: more turns than a hand can count
NO_TURN_CAP = 1 << 40


# ------------------------------------------------------------------ what an option's values are
# Each option of ``Rules`` is declared once, by ``option(default, values, doc)``: its values say how
# it is checked, written in the rule book's table, drawn by the property tests and read by the
# kernels. Everything else (validation, ``--rules key=value``, the envs' keyword options, configs,
# checkpoints, the docs' table, the hypothesis strategy) is derived from the fields.


@dataclass(frozen=True)
class Integer:
    """An int in ``[low, high]``; the property tests draw from ``sample`` (small values end games fast)."""

    low: int
    high: int
    sample: tuple[int, int]

    def check(self, v: Any) -> bool:
        return _is_int(v) and self.low <= v <= self.high

    @property
    def allowed(self) -> str:
        return f"an integer {self.low}-{self.high}"

    def kernel(self, v: Any) -> int:
        return int(v)

    def strategy(self, st: Any) -> Any:
        return st.integers(*self.sample)


@dataclass(frozen=True)
class Flag:
    """True or False."""

    def check(self, v: Any) -> bool:
        return isinstance(v, bool)

    allowed = "True or False"

    def kernel(self, v: Any) -> bool:
        return bool(v)

    def strategy(self, st: Any) -> Any:
        return st.booleans()


@dataclass(frozen=True)
class Choice:
    """One of the words ``choices``; a kernel reads ``kernel_values[i]`` (by default ``i``) for the i-th."""

    choices: tuple[str, ...]
    kernel_values: tuple[int, ...] | None = None

    def check(self, v: Any) -> bool:
        return isinstance(v, str) and v in self.choices

    @property
    def allowed(self) -> str:
        words = [f'"{c}"' for c in self.choices]
        return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} or {words[-1]}"

    def kernel(self, v: Any) -> int:
        i = self.choices.index(v)
        return i if self.kernel_values is None else self.kernel_values[i]

    def strategy(self, st: Any) -> Any:
        return st.sampled_from(self.choices)


@dataclass(frozen=True)
class Nothing:
    """``None``, meaning ``meaning`` (e.g. "no cap"); a kernel reads ``kernel_value``."""

    meaning: str
    kernel_value: int

    def check(self, v: Any) -> bool:
        return v is None

    @property
    def allowed(self) -> str:
        return f"None ({self.meaning})"

    def kernel(self, v: Any) -> int:
        return self.kernel_value

    def strategy(self, st: Any) -> Any:
        return st.none()


@dataclass(frozen=True)
class Either:
    """A value of ``first`` or of ``second`` (``first`` is tried first)."""

    first: Any
    second: Any

    def check(self, v: Any) -> bool:
        return self.first.check(v) or self.second.check(v)

    @property
    def allowed(self) -> str:
        return f"{self.first.allowed} or {self.second.allowed}"

    def kernel(self, v: Any) -> int:
        return self.first.kernel(v) if self.first.check(v) else self.second.kernel(v)

    def strategy(self, st: Any) -> Any:
        return st.one_of(self.first.strategy(st), self.second.strategy(st))


def option(default: Any, values: Any, doc: str) -> Any:
    """A field of ``Rules``: its default, its values (``Integer``, ``Flag``, ``Choice``, ``Either``)
    and a one-line meaning (the rule book's table shows it)."""
    return field(default=default, metadata={"values": values, "doc": doc})


# Upper bounds keep every score and turn count far inside the kernels' int16/int32 fields: a hand
# scores at most 2 x (98 + 1000) points, a game at most ~10,000 + that; turns count in int16.


@dataclass(frozen=True)
class Rules:
    """Every rule option of docs/RULES.md with its default. Invalid values raise ``ValueError``."""

    knock_limit: str | int = option("upcard", Either(Choice(("upcard",), kernel_values=(-1,)), Integer(0, 10, (0, 10))),
                                    "the first upcard's knock value (A 0, 2-9 face, T-K 10), or a fixed limit")
    gin_bonus: int = option(25, Integer(0, 1000, (0, 30)), "added to the defender's deadwood on gin")
    undercut_bonus: int = option(10, Integer(0, 1000, (0, 30)), "added to K - D for the defender on an undercut")
    next_dealer: str = option("winner", Choice(NEXT_DEALER_CHOICES), "who deals after a hand that is not void")
    discard_taken_card: bool = option(False, Flag(), "may a card taken from the pile be discarded in the same turn")
    spade_double: bool = option(False, Flag(), "a spade first upcard doubles the hand's points")
    target_score: int = option(100, Integer(1, 10000, (1, 40)), "a game ends when a player's total reaches this")
    game_bonuses: bool = option(False, Flag(), "line (25 a hand won), game (100) and shutout (doubles) bonuses at a game's end")
    max_turns_per_hand: int | None = option(200, Either(Integer(1, 10000, (1, 40)), Nothing("no cap", NO_TURN_CAP)),
                                            "turn cap: the hand is void after this many turns")
    showdown: str = option("optimal", Choice(SHOWDOWN_CHOICES),
                           "how the melds and lay-offs of a knock are chosen: okgin's best for each side, or the EAAI framework's")

    def __post_init__(self) -> None:
        for f in fields(self):
            value, values = getattr(self, f.name), f.metadata["values"]
            if not values.check(value):
                _bad(f.name, value, values.allowed)

    @classmethod
    def eaai(cls) -> "Rules":
        """The rules of the EAAI Gin Rummy framework (tneller/gin-rummy-eaai), the EAAI-21 tournament's:
        knock at 10 or less, gin and undercut 25, the first player alternates, no card taken from the
        pile thrown back, games to 100 without bonuses, the framework's showdown. The framework has no
        turn cap; this rule set voids a hand at ``EAAI_TURN_CAP`` turns, which only a hand the framework
        would never finish reaches (two players taking each other's discards for ever: the stock never
        shrinks). Its Simple player never comes near (at most 34 turns in 20,000 hands of docs/figures/game_stats.json)."""
        return cls(knock_limit=10, gin_bonus=25, undercut_bonus=25, next_dealer="alternate",
                   discard_taken_card=False, spade_double=False, target_score=100, game_bonuses=False,
                   max_turns_per_hand=EAAI_TURN_CAP, showdown="eaai")

    @classmethod
    def named(cls, name: str) -> "Rules":
        """A rule set by name: one of ``RULE_SETS`` ("oklahoma", "eaai"); others raise ``ValueError``."""
        key = name.strip().lower() if isinstance(name, str) else name
        if key not in RULE_SETS:
            raise ValueError(f"unknown rule set {name!r}; rule sets: {', '.join(RULE_SETS)}")
        return RULE_SETS[key]()

    @classmethod
    def option_names(cls) -> list[str]:
        """Names of all rule options."""
        return [f.name for f in fields(cls)]

    @classmethod
    def from_dict(cls, options: Mapping[str, Any] | str) -> "Rules":
        """Build from a mapping of options (unknown names raise ``ValueError`` listing the valid ones),
        or from a rule set's name ("eaai"; see ``named``)."""
        if isinstance(options, str):
            return cls.named(options)
        unknown = set(options) - set(cls.option_names())
        if unknown:
            raise ValueError(unknown_names_message(unknown, cls.option_names(), "rule option"))
        return cls(**dict(options))

    @classmethod
    def from_strings(cls, items: list[str] | tuple[str, ...]) -> "Rules":
        """Build from command-line ``key=value`` strings ("knock_limit=10", "spade_double=true"), after
        an optional rule set's name that they change ("eaai", "eaai target_score=50")."""
        opts: dict[str, Any] = {}
        for i, item in enumerate(items):
            if "=" not in item:
                if i == 0 and item.strip().lower() in RULE_SETS:
                    opts = cls.named(item).to_dict()
                    continue
                raise ValueError(f"rule option {item!r} must look like key=value (valid keys: "
                                 f"{', '.join(cls.option_names())}) or, first, a rule set: {', '.join(RULE_SETS)}")
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


#: the named rule sets (``Rules.named``, ``--rules eaai``): name -> what makes it
RULE_SETS = {"oklahoma": Rules, "eaai": Rules.eaai}


def _parse_value(text: str) -> Any:
    low = text.lower()
    if low == "none":
        return None
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
# option of ``Rules`` (the same name and order, each value as its ``values.kernel`` gives it), then
# ``game_episode``. A new option is a new field of ``Rules`` and nothing here.

RuleParams = NamedTuple("RuleParams", [(f.name, int) for f in fields(Rules)] + [("game_episode", bool)])
RuleParams.__doc__ = """The rules and the episode kind as the numba kernels read them (``rules.knock_limit``):
each option of ``Rules`` as an int or bool (its values' ``kernel``), then ``game_episode`` (episodes are
games, hands until target_score, not single hands). Built by ``rule_params``."""


def rule_params(rules: Rules, episode: str) -> RuleParams:
    """``rules`` and the episode kind ("hand" or "game") as the kernels read them."""
    values = [f.metadata["values"].kernel(getattr(rules, f.name)) for f in fields(Rules)]
    return RuleParams(*values, episode == "game")


def option_table() -> str:
    """The rule book's table of options (docs/RULES.md, "Option values"), from ``Rules``' fields."""
    rows = ["| option | default | allowed | meaning |", "|---|---|---|---|"]
    for f in fields(Rules):
        default = f'`"{f.default}"`' if isinstance(f.default, str) else f"`{f.default}`"
        rows.append(f"| `{f.name}` | {default} | {f.metadata['values'].allowed} | {f.metadata['doc']} |")
    return "\n".join(rows)


def rules_strategy(st: Any) -> Any:
    """A hypothesis strategy over every valid ``Rules``, drawing each option from its values
    (``st`` is ``hypothesis.strategies``, passed in so that the game never imports hypothesis)."""
    return st.builds(Rules, **{f.name: st.one_of(f.metadata["values"].strategy(st), st.just(f.default))
                               for f in fields(Rules)})
