"""What keeps other sites out of the web table: response headers and a same-origin check.

Starlette's own ``TrustedHostMiddleware`` refuses a ``Host`` that is not this server's (which
closes DNS rebinding); the two small ASGI middlewares here add the headers that stop framing and
sniffing and keep the page to its own files, and refuse a state-changing request that another
site's page sent (its ``Origin``, or ``Referer`` when there is none, is not ours) or whose body is
not declared JSON (an HTML form or a "simple" ``text/plain`` POST needs no CORS preflight).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from starlette.datastructures import Headers, MutableHeaders
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

#: sent with every answer: no framing, no MIME sniffing, the page loads only its own files,
#: and no Referer to other sites
SECURITY_HEADERS = {
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
    "Content-Security-Policy": ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
                                "connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"),
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Resource-Policy": "same-origin",
}
STATE_CHANGING = frozenset({"POST", "PUT", "PATCH", "DELETE"})


def error(status: int, message: str, **extra: Any) -> JSONResponse:
    """The one shape of every refusal, here's and the API's: ``{"error": one line, "status": N, ...}``."""
    return JSONResponse({"error": message, "status": status, **extra}, status_code=status)


class SecurityHeadersMiddleware:
    """Adds ``SECURITY_HEADERS`` to every HTTP answer, refusals of the inner middlewares included."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                for k, v in SECURITY_HEADERS.items():
                    headers[k] = v
            await send(message)

        await self.app(scope, receive, send_with_headers)


def _referer_origin(referer: str) -> str:
    """The origin (``scheme://host[:port]``) a Referer names; an unparsable one (``http://[::1``) is
    returned as it is, so it compares unequal to ours and is refused as foreign."""
    try:
        parts = urlsplit(referer)
    except ValueError:
        return referer
    return f"{parts.scheme}://{parts.netloc}"


def refusal(scope: Scope) -> tuple[int, str] | None:
    """(status, message) when a request must be refused before it reaches the API, else None."""
    method = scope["method"]
    if method not in STATE_CHANGING:
        return None
    headers = Headers(scope=scope)
    own = f"{scope.get('scheme', 'http')}://{headers.get('host', '')}".lower()
    origin = headers.get("origin")
    if origin is None and headers.get("referer"):
        origin = _referer_origin(headers["referer"])
    if origin is not None and origin.lower() != own:
        return 403, (f"cross-origin request refused: this server only takes {method} requests from its own "
                     f"page ({own}), not from {origin[:80]!r}")
    media = headers.get("content-type", "").split(";")[0].strip().lower()
    if method == "POST" and media != "application/json":
        return 415, (f"the body must be sent as Content-Type: application/json (got {media[:60] or 'none'!r}); "
                     "send {} when there is nothing to say")
    return None


class SameOriginMiddleware:
    """Refuses (403) a state-changing request from another origin and (415) a POST that is not JSON."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        why = refusal(scope) if scope["type"] == "http" else None
        if why is None:
            await self.app(scope, receive, send)
            return
        status, message = why
        await error(status, message)(scope, receive, send)
