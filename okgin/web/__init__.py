"""The table in a browser: ``play.py --web`` serves a page and a JSON API over the terminal's game.

Needs the ``web`` extra (Starlette and uvicorn): ``pip install -e ".[web]"``. See docs/play.md,
"Playing in a browser", and ``okgin.web.server``.
"""

from .server import WebConfig, create_app, serve

__all__ = ["WebConfig", "create_app", "serve"]
