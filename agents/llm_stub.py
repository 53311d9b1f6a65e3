"""A stand-in for a language model: a tiny OpenAI-compatible chat server on 127.0.0.1.

It answers ``POST /v1/chat/completions`` with a scripted player's move, read from the view in the
last user message (``okgin_env.text.view.render_view``'s "Legal moves" list), so the ``llm:`` agent
(``okgin_agents.llm``) can be run, tested and timed with no model anywhere::

    python -m okgin_agents.llm_stub --port 8000      # serves http://127.0.0.1:8000/v1
    okgin-evaluate --agents llm:stub@http://127.0.0.1:8000/v1 simple --hands 10 --no-progress

The scripted player knocks whenever it may (least deadwood), otherwise discards the card that
leaves the least deadwood, and never takes from the discard pile (it draws the stock and passes
on the upcard). Tests script misbehaviour per request (``StubServer(script=[...])``, consumed in
order, then ``default``):

=============  ======================================================================
``"move"``     ``{"move": ID}`` of the scripted player (the default)
``"words"``    the move's words after a sentence of reasoning ("I will ... [discard 7h]")
``"junk"``     text that is no move
``"illegal"``  ``{"move": ID}`` of an action that is not legal
``"slow"``     a move after ``slow_seconds`` (for client timeouts)
``429``        HTTP 429 with ``Retry-After: 0`` (rate limited)
``500``        HTTP 500 (any integer status: that status with an error body)
=============  ======================================================================

Served with the standard library only (``http.server``); every request is handled on its own
thread, ``max_in_flight`` records the most handled at once, and ``requests`` each request's model,
messages and whether it carried an ``Authorization`` header (never its value).
"""

from __future__ import annotations

import argparse
import json
import re
import threading
import time
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Iterable

BEHAVIOURS = ("move", "words", "junk", "illegal", "slow")
_MOVE_LINE = re.compile(r"^\s+(\d+): (\S+)(?: (\S+))?(?: \((.*)\))?$", re.M)
_NUMBER = re.compile(r"(?:deadwood left|deadwood) (\d+)")


def scripted_move(view: str) -> tuple[int, str] | None:
    """The stub player's (id, words) for a view's "Legal moves" list; None when the text has none."""
    if "Legal moves" not in view:
        return None
    moves = []
    for m in _MOVE_LINE.finditer(view.rsplit("Legal moves", 1)[1]):
        note = m.group(4) or ""
        dw = _NUMBER.search(note)
        moves.append((int(m.group(1)), f"{m.group(2)} {m.group(3) or ''}".strip(),
                      0 if note.startswith("gin") else int(dw.group(1)) if dw else 999))
    if not moves:
        return None
    for kind in ("knock", "discard"):
        options = [mv for mv in moves if mv[1].startswith(kind)]
        if options:
            best = min(options, key=lambda mv: (mv[2], -mv[0]))
            return best[0], best[1]
    for word in ("draw", "pass"):
        for mv in moves:
            if mv[1].startswith(word):
                return mv[0], mv[1]
    return moves[0][0], moves[0][1]


class StubServer:
    """The stub chat server (see the module docstring); a context manager that starts and stops it."""

    def __init__(self, script: Iterable[str | int] = (), default: str | int = "move", port: int = 0,
                 slow_seconds: float = 2.0, delay: float = 0.0) -> None:
        for b in (*script, default):
            if not (b in BEHAVIOURS or (isinstance(b, int) and not isinstance(b, bool) and 400 <= b <= 599)):
                raise ValueError(f"stub behaviour must be one of {BEHAVIOURS} or an HTTP error status 400-599, "
                                 f"got {b!r}")
        self.script: deque[str | int] = deque(script)
        self.default = default
        self.slow_seconds, self.delay = float(slow_seconds), float(delay)
        self.requests: list[dict[str, Any]] = []
        self.in_flight = self.max_in_flight = 0
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", port), _handler(self))
        self._server.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        """The base URL an OpenAI client takes: ``http://127.0.0.1:PORT/v1``."""
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> "StubServer":
        self._thread = threading.Thread(target=self._server.serve_forever, name="llm-stub", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> "StubServer":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    def next_behaviour(self) -> str | int:
        with self._lock:
            return self.script.popleft() if self.script else self.default

    def answer(self, behaviour: str, messages: list[dict]) -> str:
        """The assistant's text for ``behaviour`` given the conversation."""
        views = [m.get("content") or "" for m in messages if m.get("role") == "user"]
        view = next((v for v in reversed(views) if "Legal moves" in v), "")
        move = scripted_move(view)
        if behaviour == "junk" or move is None:
            return "I would rather not say."
        if behaviour == "illegal":
            legal = {int(x) for x in re.findall(r"^\s+(\d+):", view.rsplit("Legal moves", 1)[1], re.M)}
            return json.dumps({"move": min(set(range(107)) - legal)})
        if behaviour == "words":
            return f"My deadwood should go down, so: [{move[1]}]"
        return json.dumps({"move": move[0]})


def _handler(stub: StubServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:  # quiet: tests read their own records
            pass

        def _send(self, status: int, body: dict, headers: dict[str, str] | None = None) -> None:
            data = json.dumps(body).encode()
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):  # the client gave up (a timeout): nothing to say
                pass

        def do_GET(self) -> None:
            if self.path.rstrip("/").endswith("/models"):
                self._send(200, {"object": "list", "data": [{"id": "stub", "object": "model", "owned_by": "okgin"}]})
            else:
                self._send(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            try:
                request = json.loads(self.rfile.read(length) or b"{}")
            except json.JSONDecodeError:
                self._send(400, {"error": {"message": "body is not JSON", "type": "invalid_request_error"}})
                return
            if not self.path.rstrip("/").endswith("/chat/completions"):
                self._send(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})
                return
            behaviour = stub.next_behaviour()
            with stub._lock:
                stub.requests.append({"model": request.get("model"), "messages": request.get("messages", []),
                                      "behaviour": behaviour, "authorized": "authorization" in
                                      {k.lower() for k in self.headers.keys()}})
                stub.in_flight += 1
                stub.max_in_flight = max(stub.max_in_flight, stub.in_flight)
            try:
                self._respond(behaviour, request)
            finally:
                with stub._lock:
                    stub.in_flight -= 1

        def _respond(self, behaviour: str | int, request: dict) -> None:
            if stub.delay:
                time.sleep(stub.delay)
            if isinstance(behaviour, int):
                kind = "rate_limit_exceeded" if behaviour == 429 else "server_error"
                self._send(behaviour, {"error": {"message": f"stub says {behaviour}", "type": kind}},
                           {"Retry-After": "0"} if behaviour == 429 else None)
                return
            if behaviour == "slow":
                time.sleep(stub.slow_seconds)
            messages = request.get("messages", [])
            text = stub.answer(behaviour, messages)
            prompt_tokens = sum(len(str(m.get("content", "")).split()) for m in messages)
            self._send(200, {
                "id": f"chatcmpl-stub-{len(stub.requests)}", "object": "chat.completion", "created": int(time.time()),
                "model": request.get("model", "stub"),
                "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": len(text.split()),
                          "total_tokens": prompt_tokens + len(text.split())},
            })

    return Handler


def main(argv: list[str] | None = None) -> None:
    """``python -m okgin_agents.llm_stub``: serve the stub until interrupted."""
    ap = argparse.ArgumentParser(prog="python -m okgin_agents.llm_stub", description=__doc__.split("\n\n")[0])
    ap.add_argument("--port", type=int, default=8000, help="port on 127.0.0.1 (default 8000; 0 = any free port)")
    ap.add_argument("--default", default="move", choices=BEHAVIOURS, help="how every request is answered")
    args = ap.parse_args(argv)
    server = StubServer(default=args.default, port=args.port).start()
    print(f"stub model served at {server.url} (spec llm:stub@{server.url}); Ctrl-C stops it", flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        server.stop()


if __name__ == "__main__":
    main()
