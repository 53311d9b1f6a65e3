"""Running the web table: ``serve`` starts uvicorn on the app of ``okgin.web.endpoints``.

    python play.py --web --opponent expert            # http://127.0.0.1:8000/
    python play.py --web --watch simple expert        # the page opens on watching two bots

The service (games, bots, checks) is ``okgin.web.service``, the HTTP layer ``okgin.web.endpoints``;
this module only binds the address, warms the engine up and runs the server. CPU work (bot moves,
replays) runs in worker threads, never on the event loop.
"""

from __future__ import annotations

import time
from typing import Callable

from okgin.human_table import UsageError
from okgin.web.service import WebConfig


def _say(text: str) -> None:
    print(text, flush=True)  # at once, also when stdout is a pipe (the bench reads the URL line)


def serve(config: WebConfig, port: int = 8000, announce: Callable[[str], None] = _say) -> None:
    """Run the app with uvicorn on ``config.listen``:``port`` until Ctrl-C (``play.py --web``).

    Compiles the game engine (``WebTable.warm_up``) before it prints the URL, saying so, so the
    first page's moves answer at once. Bad settings raise ``UsageError``.
    """
    import socket

    try:
        import uvicorn
    except ImportError:
        raise UsageError("the web table needs the 'web' extra: pip install -e \".[web]\"") from None
    host = config.listen
    try:  # say "port in use" in one line instead of uvicorn's log
        with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as s:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            s.bind((host, port))
    except OSError as e:
        raise UsageError(f"cannot listen on {host}:{port}: {e.strerror or e} (choose another --port or --host)") \
            from None
    t0 = time.perf_counter()
    announce("Starting the table: loading the bots and compiling the game engine "
             "(the first start after an install takes a minute or two)...")
    from okgin.web.endpoints import create_app  # Starlette: only when a server starts

    app = create_app(config)
    app.state.table.warm_up()
    shown = f"[{host}]" if ":" in host else host
    announce(f"Ready in {time.perf_counter() - t0:.1f} s.")
    announce(f"Oklahoma Gin table at http://{shown}:{port}/  (Ctrl-C stops)")
    if host not in ("127.0.0.1", "localhost", "::1"):
        announce(f"Warning: listening on {host}: anyone who can reach this address can play on this server. "
                 f"The page answers to the host names {', '.join(config.hosts())} (add more with --allow-host).")
    uvicorn.run(app, host=host, port=port, log_level="warning")
