"""The benchmark protocol, version 1, as data: the rule sets, the anchor population, the seeds and
the counts every report card plays (docs/benchmark.md, "The protocol").

A card played with other counts or seeds is marked as such (``Protocol.is_standard``): its figures
are still right, but a table that compares agents should hold standard cards only.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass, field, replace

from okgin_env.game.rules import Rules

VERSION = 1  #: of the protocol; the scale file and the card's JSON carry it

#: the shipped Oklahoma agent, an anchor: a path in the checkout (the card records its sha256)
SHIPPED = "ppo:checkpoints/okgin_ppo.pt"

#: the anchor population, weakest first: an agent's card plays each of them under each rule set
ANCHORS = ("random", "eaai_simple", "simple", "expert", SHIPPED)

#: the rule sets of the protocol and, for each, the opponent of its games to 100: under the EAAI
#: rules the field's unit (games won against Neller's SimpleGinRummyPlayer), under Oklahoma the expert
RULE_SETS = ("oklahoma", "eaai")
GAME_OPPONENT = {"oklahoma": "expert", "eaai": "eaai_simple"}


def checkout_root() -> str:
    """The folder that holds the checkout's ``checkpoints/`` (okgin is installed from a checkout)."""
    return os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def resolve_spec(spec: str) -> str:
    """``spec`` with the shipped agent's checkout path made absolute (so a card runs from any folder)."""
    if spec == SHIPPED:
        return "ppo:" + os.path.join(checkout_root(), "checkpoints", "okgin_ppo.pt")
    return spec


@dataclass(frozen=True)
class Protocol:
    """What a card plays. The defaults are protocol version 1; ``is_standard`` says whether a card
    played with this protocol may be set beside other standard cards."""

    hands: int = 10_000  #: hands against each anchor and rule set (duplicate deals: 5,000 deal pairs)
    games: int = 2_000  #: games to 100 against each rule set's GAME_OPPONENT (1,000 game pairs)
    seed: int = 20_261_203  #: the deals of the hands (the games' first deals: seed + 1, okgin_trainer.matches)
    anchors: tuple[str, ...] = ANCHORS
    rule_sets: tuple[str, ...] = RULE_SETS
    bootstrap: int = 1000  #: resamples of the deal pairs behind the rating's 95% interval
    batch: int = 1024  #: games played at once (does not change a result)
    version: int = field(default=VERSION)

    def __post_init__(self) -> None:
        for name, value, low in (("hands", self.hands, 2), ("games", self.games, 0), ("seed", self.seed, 0),
                                 ("bootstrap", self.bootstrap, 0), ("batch", self.batch, 1)):
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise ValueError(f"{name} must be an integer >= {low}, got {value!r}")
        unknown = [r for r in self.rule_sets if r not in RULE_SETS]
        if unknown or not self.rule_sets:
            raise ValueError(f"rule sets {list(self.rule_sets)}: choose among {', '.join(RULE_SETS)}")

    @property
    def is_standard(self) -> bool:
        """Played as version 1 says (the batch size aside, which changes no result)."""
        return replace(self, batch=Protocol().batch) == Protocol()

    def rules(self, rule_set: str) -> Rules:
        return Rules.named(rule_set)

    def to_dict(self) -> dict:
        d = asdict(self)
        d["anchors"], d["rule_sets"] = list(self.anchors), list(self.rule_sets)
        return d
