"""The table in a browser: ``play.py --web`` serves a page and a JSON API over the terminal's game.

Needs the ``web`` extra (Starlette and uvicorn): ``pip install -e ".[web]"``. See docs/play.md,
"Playing in a browser". The rooms, each importing only the ones before it: ``errors`` (what the
game refuses), ``views`` and ``results``, ``games`` (a person's game, a watch, a replay),
``service`` (``WebTable``, ``WebConfig``: no HTTP), then the HTTP layer ``handlers`` (bodies, the
status of each refusal), ``guard`` and ``endpoints`` (routes, the app), and ``server`` (``serve``).
"""

from __future__ import annotations

from typing import Any

from .server import serve
from .service import WebConfig

__all__ = ["WebConfig", "create_app", "serve"]


def __getattr__(name: str) -> Any:
    if name == "create_app":  # the app needs Starlette: imported when asked for, not with the package
        from .endpoints import create_app

        return create_app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
