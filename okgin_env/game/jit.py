"""``kernel``: numba's ``njit`` with an on-disk cache that cannot go stale.

numba's own ``cache=True`` reuses a compiled function while *its own file* is unchanged, with the
callees and the module constants it compiled in: edit a callee in another module (or a constant
such as an observation offset) and its callers keep running the old code, silently, until
``__pycache__`` is removed. A ``git pull`` of a kernel fix into an editable install was invisible
the same way.

``kernel`` keeps numba's cache but puts it in a directory named after a hash of every source
file the kernels can depend on: the files of the decorating module's package and of
``okgin_env`` that use numba, and every module of those packages they import (followed
transitively, so constants count too), plus the numba version. Any edit to those files selects a
new, empty directory, and the kernels compile afresh; undoing the edit selects the old one again.
Editing a file no kernel depends on (an env wrapper, a script) keeps the cache.

Where: ``$NUMBA_CACHE_DIR/okgin/`` when the user set ``NUMBA_CACHE_DIR``, else
``$XDG_CACHE_HOME/okgin/numba`` (``~/.cache/okgin/numba``); ``OKGIN_KERNEL_CACHE=0`` turns the disk
cache off (every process compiles). Directories of other source versions unused for a week are
removed. numba's global ``config.CACHE_DIR`` is set only while a kernel is being decorated, so a
user's own numba functions keep their own cache settings.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import os
import re
import shutil
import sys
import time
from pathlib import Path
from typing import Any, Callable

import numba
from numba.core import config

#: packages whose sources are followed for imports (a kernel's callees and constants live there)
_ROOT_PACKAGE = "okgin_env"
_IMPORT = re.compile(r"^\s*(?:from\s+([\w.]+)\s+import\s+([\w, ()\n]+?)$|import\s+([\w.]+))", re.M)
_USES_NUMBA = re.compile(r"^\s*(?:@kernel\b|from numba\b|import numba\b)", re.M)
_STALE_AFTER_S = 7 * 24 * 3600


def _package_dir(package: str) -> Path | None:
    """The folder of a top-level package, found without importing it."""
    module = sys.modules.get(package)
    if module is not None and getattr(module, "__path__", None):
        return Path(list(module.__path__)[0])
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0])


def _module_file(name: str, roots: dict[str, Path]) -> Path | None:
    """The source file of the dotted module ``name`` inside one of ``roots`` (None when outside)."""
    top, _, rest = name.partition(".")
    if top not in roots:
        return None
    base = roots[top].joinpath(*rest.split(".")) if rest else roots[top]
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _dependency_files(roots: dict[str, Path]) -> list[Path]:
    """Every file of ``roots`` that defines kernels, and every file of ``roots`` they import, transitively.

    A package's ``__init__.py`` on the way is hashed but not followed: it runs on import, but its
    own imports (the envs, the registry) are not what a kernel compiles in.
    """
    todo = [p for root in roots.values() for p in sorted(root.rglob("*.py")) if _USES_NUMBA.search(p.read_text())]
    seen: set[Path] = set()
    while todo:
        path = todo.pop()
        if path in seen:
            continue
        seen.add(path)
        if path.name == "__init__.py":
            continue
        for match in _IMPORT.finditer(path.read_text()):
            module = match[1] or match[3]
            names = [n.strip(" ()\n").split(" as ")[0] for n in (match[2] or "").split(",")]
            for name in [module, *(f"{module}.{n}" for n in names if n)]:
                found = _module_file(name, roots)
                if found is not None and found not in seen:
                    todo.append(found)
    return sorted(seen)


@functools.lru_cache(maxsize=None)
def cache_dir(package: str = _ROOT_PACKAGE) -> str | None:
    """The cache directory for kernels defined in ``package`` (None: caching is off)."""
    if os.environ.get("OKGIN_KERNEL_CACHE", "1") == "0":
        return None
    roots = {name: d for name in dict.fromkeys((_ROOT_PACKAGE, package)) if (d := _package_dir(name)) is not None}
    digest = hashlib.sha256(f"numba {numba.__version__} python {sys.version_info[:2]}".encode())
    for path in _dependency_files(roots):
        root = next(root for root in roots.values() if root in path.parents)
        digest.update(path.relative_to(root.parent).as_posix().encode())  # the name too: a moved file counts
        digest.update(b"\0" + path.read_bytes() + b"\0")
    if os.environ.get("NUMBA_CACHE_DIR"):
        base = Path(os.environ["NUMBA_CACHE_DIR"]) / "okgin"
    else:
        base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "okgin" / "numba"
    path = base / f"{package}-{digest.hexdigest()[:20]}"
    try:
        path.mkdir(parents=True, exist_ok=True)
        os.utime(path)  # marks it in use, for the clean-up below
    except OSError:
        return None  # unwritable: numba falls back to its own locations for this process
    _remove_stale(base, keep=path)
    return str(path)


def _remove_stale(base: Path, keep: Path) -> None:
    """Remove cache directories of other source versions that no process has used for a week."""
    now = time.time()
    for other in base.iterdir():
        try:
            if other != keep and other.is_dir() and now - other.stat().st_mtime > _STALE_AFTER_S:
                shutil.rmtree(other, ignore_errors=True)
        except OSError:
            pass


def kernel(*args: Any, **options: Any) -> Callable:
    """``numba.njit(cache=True, **options)`` with the cache keyed by the kernels' sources.

    Used as ``@kernel`` or ``@kernel(inline="always")``, like ``@njit``.
    """

    def decorate(fn: Callable) -> Callable:
        directory = cache_dir(fn.__module__.partition(".")[0])
        if directory is None:
            return numba.njit(**options)(fn)
        previous = config.CACHE_DIR
        config.CACHE_DIR = directory
        try:
            return numba.njit(cache=True, **options)(fn)
        finally:
            config.CACHE_DIR = previous

    if args and callable(args[0]) and len(args) == 1 and not options:
        return decorate(args[0])
    if args:
        raise TypeError("kernel takes keyword options only, e.g. @kernel(inline='always')")
    return decorate
