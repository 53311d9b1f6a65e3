"""The web package's rooms: the service knows no HTTP, the HTTP layer maps the game's refusals, no module
imports one that imports it back.

Before, ``server.py`` (the service and the app) and ``endpoints.py`` (the routes) imported each other, and
the games raised ``ApiError(status, ...)``, an HTTP status chosen by game logic.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

WEB = Path(__file__).resolve().parents[2] / "okgin" / "web"
SERVICE = ("errors", "views", "results", "games", "service")  #: the rooms that must not import Starlette


def web_imports() -> dict[str, set[str]]:
    """Module -> the okgin.web modules it imports, at module level or inside a function."""
    graph: dict[str, set[str]] = {}
    for path in sorted(WEB.glob("*.py")):
        name = path.stem
        found: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.ImportFrom):
                base = "okgin.web" if node.level == 1 else (node.module or "")
                if node.level == 1 and node.module:
                    base = f"okgin.web.{node.module}"
                if base == "okgin.web":
                    found |= {a.name for a in node.names}
                elif base.startswith("okgin.web."):
                    found.add(base.split(".")[2])
            elif isinstance(node, ast.Import):
                found |= {a.name.split(".")[2] for a in node.names if a.name.startswith("okgin.web.")}
        graph[name] = {m for m in found if (WEB / f"{m}.py").exists() and m != name}
    return graph


def cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """A cycle of ``graph`` as a path of module names (first == last), or None."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(m: str) -> list[str] | None:
        state[m] = 1
        stack.append(m)
        for n in sorted(graph.get(m, ())):
            if state.get(n) == 1:
                return stack[stack.index(n):] + [n]
            if n not in state and (found := visit(n)):
                return found
        stack.pop()
        state[m] = 2
        return None

    return next((c for m in sorted(graph) if m not in state and (c := visit(m))), None)


def test_no_module_of_okgin_web_imports_one_that_imports_it_back():
    graph = web_imports()
    assert {"service", "endpoints", "server", "games", "handlers", "errors"} <= set(graph)
    assert cycle(graph) is None, " -> ".join(cycle(graph))
    assert cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]  # the check finds one
    assert "endpoints" not in graph["service"] and "server" not in graph["service"]


def test_the_service_imports_no_starlette():
    for name in SERVICE:
        for node in ast.walk(ast.parse((WEB / f"{name}.py").read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            assert not [n for n in names if n.split(".")[0] in ("starlette", "uvicorn", "anyio")], \
                f"okgin/web/{name}.py:{node.lineno} imports {names}"
    code = ("import sys, okgin.web, okgin.web.service, okgin.web.games\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('starlette', 'uvicorn')))")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.strip() == "[]", run.stdout


def test_each_refusal_has_its_status_in_one_place():
    pytest.importorskip("starlette")
    from okgin.human_table import UsageError
    from okgin.web.errors import Conflict, GameError, Invalid, NotFound
    from okgin.web.handlers import STATUS, status_of

    assert [status_of(e("x")) for e in (Invalid, NotFound, Conflict, GameError, UsageError)] == [400, 404, 409, 400, 400]
    assert set(STATUS) >= {Invalid, NotFound, Conflict}
    for name in SERVICE:  # the game logic raises no HTTP status: no raise X(4xx, ...) there
        for node in ast.walk(ast.parse((WEB / f"{name}.py").read_text())):
            if isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call) and node.exc.args:
                first = node.exc.args[0]
                assert not (isinstance(first, ast.Constant) and isinstance(first.value, int)), \
                    f"okgin/web/{name}.py:{node.lineno} raises an HTTP status"
