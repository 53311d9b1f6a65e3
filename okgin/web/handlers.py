"""How an endpoint reads its request and answers: body reading and parsing, and the status of each refusal.

The HTTP layer's helpers, shared by every route module (``okgin.web.endpoints``, ``okgin.web.arena``):
``guarded`` turns a handler's ``(status, payload)`` into a JSON answer and a refusal into a 4xx JSON
``{"error", "status"}`` with the status ``STATUS`` gives its kind, the one place where the game's
errors (``okgin.web.errors``) become HTTP statuses. The body's own refusals (too large, not JSON,
nested too deeply) are Starlette's ``HTTPException``, answered by ``endpoints.exception_handlers``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Awaitable, Callable

import numpy as np
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from okgin.human_table import UsageError
from okgin.web.errors import Conflict, GameError, Invalid, NotFound
from okgin.web.guard import error

STATIC_DIR = Path(__file__).resolve().parent / "static"
MAX_JSON_DEPTH = 32  #: nesting of a request's JSON (a log needs 5); deeper is refused before parsing

#: the status of each refusal, most specific kind first; ``UsageError``: a bot that cannot be made or
#: plays an illegal move, a results file that cannot be written
STATUS: dict[type[Exception], int] = {NotFound: 404, Conflict: 409, Invalid: 400, GameError: 400, UsageError: 400}

_DIGITS = re.compile(r"[0-9]+")
Handler = Callable[[Request], Awaitable[tuple[int, Any]]]


def status_of(exc: Exception) -> int:
    """The HTTP status that answers a refusal of kind ``type(exc)`` (``STATUS``)."""
    return next(status for kind, status in STATUS.items() if isinstance(exc, kind))


def guarded(handler: Handler) -> Callable[[Request], Awaitable[Response]]:
    """An endpoint that answers ``handler``'s (status, payload) as JSON and its refusals as 4xx JSON."""
    async def endpoint(request: Request) -> Response:
        try:
            status, payload = await handler(request)
        except (GameError, UsageError) as e:
            return error(status_of(e), str(e), **getattr(e, "extra", {}))
        return JSONResponse(payload, status_code=status, headers={"Cache-Control": "no-store"})
    return endpoint


# ----------------------------------------------------------------------------- request bodies

_JSON_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"')
_OPEN, _CLOSE = np.frombuffer(b"[{", np.uint8), np.frombuffer(b"]}", np.uint8)


def json_depth(raw: bytes) -> int:
    """How deeply ``raw`` JSON nests arrays and objects (brackets inside strings do not count)."""
    bare = np.frombuffer(_JSON_STRING.sub(b'""', raw), np.uint8)
    step = np.isin(bare, _OPEN).astype(np.int64) - np.isin(bare, _CLOSE)
    return int(np.cumsum(step).max(initial=0))


def parse_body(raw: bytes) -> Any:
    """A request body as JSON: {} when empty; 400 when malformed or nested past ``MAX_JSON_DEPTH``."""
    if not raw.strip():
        return {}
    if json_depth(raw) > MAX_JSON_DEPTH:
        raise HTTPException(400, f"the body's JSON is nested too deeply: at most {MAX_JSON_DEPTH} levels")
    try:
        return json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise HTTPException(400, f"the body is not valid JSON ({e})") from None


async def read_body(request: Request, limit: int) -> Any:
    """The body as JSON, refused (413) past ``limit`` bytes without reading the rest."""
    declared = request.headers.get("content-length")
    if declared is not None:
        if _DIGITS.fullmatch(declared) is None:  # ASCII only: '²'.isdigit() is True but int('²') fails
            raise HTTPException(400, f"the Content-Length header must be a non-negative integer, got {declared[:20]!r}")
        if len(declared) > 18 or int(declared) > limit:  # 18 digits: no int() of a 5,000-digit string
            raise HTTPException(413, f"request body too large: at most {limit} bytes")
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise HTTPException(413, f"request body too large: at most {limit} bytes")
        chunks.append(chunk)
    return await run_in_threadpool(parse_body, b"".join(chunks))


async def read_object(request: Request, limit: int) -> dict:
    body = await read_body(request, limit)
    if not isinstance(body, dict):
        raise HTTPException(400, f"the body must be a JSON object, got {type(body).__name__}")
    return body
