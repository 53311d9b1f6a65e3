"""What the web table's game logic refuses, in its own words: no HTTP here.

The service (``okgin.web.service``) and the games (``okgin.web.games``) raise these; the HTTP layer
(``okgin.web.handlers.STATUS``) answers each kind with its status, in one place. A refused request
changes nothing.
"""

from __future__ import annotations

from typing import Any


class GameError(Exception):
    """A request the table refuses: a one-line ``message`` and ``extra`` fields for the answer
    (e.g. ``allowed``: the moves that are legal now)."""

    def __init__(self, message: str, **extra: Any) -> None:
        super().__init__(message)
        self.message = message
        self.extra = extra


class Invalid(GameError):
    """The request itself is wrong: an unknown field, a bad value, a move that is not a move, a bad log."""


class NotFound(GameError):
    """No game, watch or replay with that id (unknown, or evicted)."""


class Conflict(GameError):
    """A well-formed request the game's state does not allow now: an illegal move, a game that is over."""
