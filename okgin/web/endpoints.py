"""The HTTP side of the web table: routes, body reading, error answers and the middleware stack.

Every endpoint reads its body within the size limit, hands the work to ``WebTable`` in a worker
thread (``run_in_threadpool``: bot moves and replays never block the event loop) and answers
JSON; every refusal is a 4xx ``{"error", "status"}``, a bug a 500 without a traceback.
"""

from __future__ import annotations

import re
from typing import Any, Awaitable, Callable

import anyio
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from okgin.human_table import UsageError
from okgin.web.games import ApiError
from okgin.web.guard import SameOriginMiddleware, SecurityHeadersMiddleware, error
from okgin.web.server import STATIC_DIR, WebConfig, WebTable, parse_body

_DIGITS = re.compile(r"[0-9]+")
Handler = Callable[[Request], Awaitable[tuple[int, Any]]]


async def read_body(request: Request, limit: int) -> Any:
    """The body as JSON, refused (413) past ``limit`` bytes without reading the rest."""
    declared = request.headers.get("content-length")
    if declared is not None:
        if _DIGITS.fullmatch(declared) is None:  # ASCII only: '²'.isdigit() is True but int('²') fails
            raise ApiError(400, f"the Content-Length header must be a non-negative integer, got {declared[:20]!r}")
        if len(declared) > 18 or int(declared) > limit:  # 18 digits: no int() of a 5,000-digit string
            raise ApiError(413, f"request body too large: at most {limit} bytes")
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise ApiError(413, f"request body too large: at most {limit} bytes")
        chunks.append(chunk)
    return await run_in_threadpool(parse_body, b"".join(chunks))


async def read_object(request: Request, limit: int) -> dict:
    body = await read_body(request, limit)
    if not isinstance(body, dict):
        raise ApiError(400, f"the body must be a JSON object, got {type(body).__name__}")
    return body


def guarded(handler: Handler) -> Callable[[Request], Awaitable[Response]]:
    """An endpoint that answers ``handler``'s (status, payload) as JSON and its refusals as 4xx JSON."""
    async def endpoint(request: Request) -> Response:
        try:
            status, payload = await handler(request)
        except ApiError as e:
            return error(e.status, e.message, **e.extra)
        except UsageError as e:  # e.g. a checkpoint removed after the server started, a bot's bad move
            return error(400, str(e))
        return JSONResponse(payload, status_code=status, headers={"Cache-Control": "no-store"})
    return endpoint


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

    return [Route("/", index), *api_routes(table), Mount("/static", StaticFiles(directory=STATIC_DIR), name="static")]


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
