"""okgin in words: a player's view as text, a move parser, a Gymnasium text env, a TextArena adapter.

* ``render_view(obs, mask)`` (``okgin_env.text.view``): one player's view, built from that player's
  observation vector and action mask only, so no hidden card can reach the text.
* ``parse_move(text, obs, mask)`` / ``read_answer`` (``okgin_env.text.moves``): a move's id, a JSON
  ``{"move": ...}`` or plain words ("draw stock", "discard 7s", "knock") to a legal action id, or a
  ``MoveError`` (a ``ValueError``) saying what is allowed.
* ``TextEnv`` (``okgin_env.text.env``, registered as ``okgin/OklahomaGinText-v0``): text observations
  and text actions against a fixed opponent, for RL on language models.
* ``okgin_env.text.textarena``: the game in TextArena's env API (needs the ``textarena`` extra).

docs/arena.md, "Text interface", shows each with commands.
"""

from __future__ import annotations

from typing import Any

from okgin_env.text.moves import MoveError, allowed_text, parse_move, read_answer
from okgin_env.text.view import Move, Seen, legal_moves, read_observation, render_view

__all__ = ["Move", "MoveError", "Seen", "TextEnv", "allowed_text", "legal_moves", "parse_move", "read_answer",
           "read_observation", "render_view"]


def __getattr__(name: str) -> Any:
    if name == "TextEnv":  # loaded on first use: the view and the parser need no env
        from okgin_env.text.env import TextEnv

        return TextEnv
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
