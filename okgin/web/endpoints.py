"""The web table's HTTP layer: the routes, the error answers, the middleware stack and the app.

Every endpoint reads its body within the size limit (``okgin.web.handlers``), hands the work to the
service (``okgin.web.service.WebTable``) in a worker thread (``run_in_threadpool``: bot moves and
replays never block the event loop) and answers JSON; every refusal is a 4xx ``{"error", "status"}``
(its status from ``handlers.STATUS``), a bug a 500 without a traceback. Safety rules (docs/play.md):
only this server's own page may change anything: a foreign ``Host`` is refused (Starlette's
``TrustedHostMiddleware``), a state-changing request from another origin is 403, a POST that is not
``application/json`` 415, and every answer forbids framing and sniffing (``okgin.web.guard``);
request bodies over ``max_body`` bytes are refused (413) before they are read in full, JSON nested
deeper than ``MAX_JSON_DEPTH`` is 400.
"""

from __future__ import annotations

from contextlib import asynccontextmanager
from typing import Any, Callable

import anyio
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import FileResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from okgin.web.guard import SameOriginMiddleware, SecurityHeadersMiddleware, error
from okgin.web.handlers import STATIC_DIR, guarded, read_body, read_object
from okgin.web.service import WebConfig, WebTable

REPLAY_WORKERS = 1  #: replays built at once: more would only share the interpreter lock with the players


def api_routes(table: WebTable) -> list[Route]:
    """The JSON API (docs/play.md, "The JSON API"); the work runs in worker threads, replays one at a
    time (a long one takes seconds of pure Python: the players' moves go first in the meantime)."""
    limit = table.config.max_body
    work = run_in_threadpool
    replays: list[anyio.CapacityLimiter] = []  # made in the event loop, on the first replay

    async def replay_work(func, *args):
        if not replays:
            replays.append(anyio.CapacityLimiter(REPLAY_WORKERS))
        return await anyio.to_thread.run_sync(func, *args, limiter=replays[0])

    async def config(request: Request):
        return 200, table.public_config()

    async def create_game(request: Request):
        return 201, await work(table.create_game, await read_object(request, limit))

    async def read_game(request: Request):
        return 200, await work(table.read_game, request.path_params["gid"])

    async def play(request: Request):
        return 200, await work(table.play, request.path_params["gid"], await read_object(request, limit))

    async def abandon(request: Request):
        return 200, await work(table.abandon, request.path_params["gid"], await read_object(request, limit))

    async def game_log(request: Request):
        return 200, await work(table.game_log, request.path_params["gid"])

    async def create_watch(request: Request):
        return 201, await work(table.create_watch, await read_object(request, limit))

    async def step_watch(request: Request):
        await read_body(request, limit)  # an empty body is fine; a huge one is still refused
        return 200, await work(table.step_watch, request.path_params["wid"])

    async def create_replay(request: Request):
        return 201, await replay_work(table.create_replay, await read_body(request, limit))

    async def replay_frames(request: Request):
        q = request.query_params
        return 200, await replay_work(table.replay_frames, request.path_params["rid"], q.get("start"), q.get("count"))

    return [
        Route("/api/config", guarded(config)),
        Route("/api/games", guarded(create_game), methods=["POST"]),
        Route("/api/games/{gid}", guarded(read_game)),
        Route("/api/games/{gid}/actions", guarded(play), methods=["POST"]),
        Route("/api/games/{gid}/abandon", guarded(abandon), methods=["POST"]),
        Route("/api/games/{gid}/log", guarded(game_log)),
        Route("/api/watches", guarded(create_watch), methods=["POST"]),
        Route("/api/watches/{wid}/step", guarded(step_watch), methods=["POST"]),
        Route("/api/replays", guarded(create_replay), methods=["POST"]),
        Route("/api/replays/{rid}/frames", guarded(replay_frames)),
    ]


def routes(table: WebTable) -> list:
    """The page at ``/``, its files under ``/static``, the API under ``/api``."""
    async def index(request: Request) -> Response:
        return FileResponse(STATIC_DIR / "index.html", headers={"Cache-Control": "no-cache"})

    from okgin.web.arena import routes as arena_routes

    return [Route("/", index), *api_routes(table), *arena_routes(lambda: table.arena),
            Mount("/static", StaticFiles(directory=STATIC_DIR), name="static")]


def exception_handlers() -> dict:
    """Unknown routes and methods as JSON 404/405; a bug as a JSON 500 that names only the exception's type."""
    async def http_error(request: Request, exc: HTTPException) -> Response:
        path = request.scope["path"][:80]  # never request.url: that is built from the Host header
        text = {404: f"no such page or API route: {path}", 405: f"method {request.method} is not allowed on {path}"}
        return error(exc.status_code, text.get(exc.status_code, str(exc.detail)))

    async def crash(request: Request, exc: Exception) -> Response:
        return error(500, f"internal error ({type(exc).__name__}); the game was not changed")

    return {HTTPException: http_error, Exception: crash}


def middleware(config: WebConfig) -> list[Middleware]:
    """Outermost first: security headers on every answer, the Host check, the same-origin check."""
    return [Middleware(SecurityHeadersMiddleware),
            Middleware(TrustedHostMiddleware, allowed_hosts=config.hosts(), www_redirect=False),
            Middleware(SameOriginMiddleware)]


# ----------------------------------------------------------------------------- the ASGI app

def create_app(config: WebConfig | None = None, make: Callable[[str, int], Any] | None = None):
    """The Starlette app: the page at ``/``, its files under ``/static``, the JSON API under ``/api``.

    Raises ``UsageError`` (one line) when a bot of the allow-list cannot be made or the results
    file cannot be written.
    """
    table = WebTable(config or WebConfig(), make)

    @asynccontextmanager
    async def lifespan(app):
        yield
        table.results.flush()  # results a full disk kept in memory: one more try before the server goes

    app = Starlette(routes=routes(table), middleware=middleware(table.config),
                    exception_handlers=exception_handlers(), lifespan=lifespan)
    app.router.redirect_slashes = False  # its redirects build a URL from the Host header
    app.state.table = table
    return app
