"""One table interface over both engines, so a rule scenario is written once and played on each.

``VectorTable`` drives ``VectorGame(1, ...)`` (the fast engine); ``ReferenceTable`` drives
``okgin_env.testing.reference.ReferenceGame`` (the brute-force one). Both speak agent ids (0/1) and
card indices; ``scenarios.py`` speaks seats and card text and translates.
"""

from __future__ import annotations

import numpy as np

from okgin_env import VectorGame
from okgin_env.game.cards import cards_of
from okgin_env.game.rules import Rules
from okgin_env.testing.reference import ReferenceGame


class VectorTable:
    """One game of the fast engine; ``step`` raises ValueError on an illegal action."""

    name = "vector"
    #: result fields only this engine reports
    extra_results = ("laid_off",)

    def __init__(self, deck: list[int], dealer: int, rules: Rules, episode: str) -> None:
        self.game = VectorGame(1, rules, episode=episode, seed=0)
        self.out = self.game.reset(decks=[deck], dealers=[dealer])

    def step(self, action: int) -> None:
        self.out = self.game.step(np.array([action]))

    @property
    def s(self):
        return self.game.state

    def legal(self) -> set[int]:
        return {int(a) for a in np.flatnonzero(self.out.legal_action_mask[0])}

    def phase(self) -> int:
        return int(self.s.phase[0])

    def player(self) -> int:
        return int(self.out.current_player[0])

    def dealer(self) -> int:
        return int(self.s.dealer[0])

    def deck(self) -> list[int]:
        return np.asarray(self.s.deck[0]).tolist()

    def hand(self, p: int) -> set[int]:
        return set(cards_of(self.s.hands[0, p]))

    def pile(self) -> list[int]:
        return np.asarray(self.s.pile[0, : int(self.s.pile_size[0])]).tolist()

    def public(self, kind: str, p: int) -> set[int]:
        """``taken``, ``discarded`` or ``declined`` cards of player p."""
        return set(cards_of(getattr(self.s, kind)[0, p]))

    def number(self, name: str) -> int:
        """``stock_size``, ``turns``, ``knock_limit`` or ``taken_card``."""
        if name == "stock_size":
            return 52 - int(self.s.stock_next[0])
        return int(getattr(self.s, name)[0])

    def totals(self) -> list[int]:
        return np.asarray(self.s.scores[0]).tolist()

    def hands_won(self) -> list[int]:
        return np.asarray(self.s.hands_won[0]).tolist()

    def flags(self) -> tuple[bool, bool, bool]:
        o = self.out
        return bool(o.hand_over[0]), bool(o.terminated[0]), bool(o.truncated[0])

    def rewards(self) -> list[float]:
        return np.asarray(self.out.rewards[0], dtype=float).tolist()

    def result(self, field: str):
        v = np.asarray(getattr(self.out.result, field))[0]
        if field == "hands":
            return [set(cards_of(h)) for h in v]
        if field == "laid_off":
            return set(cards_of(v))
        return v.tolist() if v.ndim else v.item()


class ReferenceTable:
    """One game of the reference engine, behind the same interface as ``VectorTable``."""

    name = "reference"
    extra_results = ()

    def __init__(self, deck: list[int], dealer: int, rules: Rules, episode: str) -> None:
        self.g = ReferenceGame(rules, deck, dealer, episode, seed=0)

    def step(self, action: int) -> None:
        self.g.step(action)

    def legal(self) -> set[int]:
        return set(self.g.legal_actions())

    def phase(self) -> int:
        return int(self.g.phase)

    def player(self) -> int:
        return self.g.current_player

    def dealer(self) -> int:
        return self.g.dealer

    def deck(self) -> list[int]:
        return list(self.g.deck)

    def hand(self, p: int) -> set[int]:
        return set(self.g.hands[p])

    def pile(self) -> list[int]:
        return list(self.g.pile)

    def public(self, kind: str, p: int) -> set[int]:
        return set({"taken": self.g.taken_and_held, "discarded": self.g.discarded, "declined": self.g.declined}[kind][p])

    def number(self, name: str) -> int:
        return int(getattr(self.g, name))

    def totals(self) -> list[int]:
        return list(self.g.scores)

    def hands_won(self) -> list[int]:
        return list(self.g.hands_won)

    def flags(self) -> tuple[bool, bool, bool]:
        return self.g.hand_over, self.g.terminated, self.g.truncated

    def rewards(self) -> list[float]:
        return [float(r) for r in self.g.last_rewards]

    def result(self, field: str):
        v = self.g.last_result[field]
        return [set(h) for h in v] if field == "hands" else v


ENGINES = (VectorTable, ReferenceTable)
