"""The human results file: one JSON line per game a person finished or abandoned.

``evaluate.py --human-results`` reads it. Each line is written with one ``write`` + ``fsync``;
a line that cannot be written (disk full, file removed, ``--results /dev/full``) is kept in
memory, logged, and written before the next line or at shutdown, so no result is lost while
the server runs.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from typing import Any

from okgin.human_table import Table, UsageError
from okgin.web.views import player_or_none

RESULTS_FORMAT = "okgin-human-results"
RESULTS_VERSION = 1
log = logging.getLogger("okgin.web")


def results_line(t: Table, setup: Any, abandoned: bool, started: float) -> dict[str, Any]:
    """The results-file line of a person's game at ``t`` (the human is player 0; ``setup``: its
    ``okgin.web.games.GameSetup``); an ``abandoned`` game is marked so."""
    hands = [{"points": r["points"], "winner": player_or_none(r["winner"]), "knocker": player_or_none(r["knocker"]),
              "gin": r["gin"], "undercut": r["undercut"], "void": r["void"]}
             for r in (h["result"] for h in t.log_hands) if r is not None]
    final = next((h["result"] for h in reversed(t.log_hands) if h["result"]), None)
    done = t.finished and final is not None
    return {
        "format": RESULTS_FORMAT, "version": RESULTS_VERSION,
        "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "seconds": round(time.time() - started, 1),
        "opponent": setup.bot, "spec": setup.spec, "rules": setup.rules.to_dict(),
        "episode": t.episode, "seed": setup.seed, "moves": t.moves, "hands": hands,
        "abandoned": abandoned,
        "final_scores": final["scores"] if done else None,
        "winner": player_or_none(final["winner"] if setup.hand_only else final["game_winner"]) if done else None,
    }


class ResultsFile:
    """Append-only JSON lines, one game a line; unwritten lines wait in ``pending``.

    A killed server loses at most the games in progress and the pending lines; a torn last line
    (a crash inside the write) is skipped by readers.
    """

    def __init__(self, path: str | os.PathLike | None) -> None:
        self.path = None if path is None else str(path)
        self.pending: list[bytes] = []  #: lines not yet written, oldest first
        self._lock = threading.Lock()
        if self.path is not None:
            parent = os.path.dirname(os.path.abspath(self.path))
            try:
                os.makedirs(parent, exist_ok=True)
                os.close(os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644))
            except OSError as e:
                raise UsageError(f"cannot write the results file {self.path!r}: {e.strerror or e}") from None

    def append(self, record: dict) -> tuple[bool | None, str | None]:
        """Write ``record`` (after any pending lines): (True, None) when saved, (False, one-line reason)
        when kept in memory for later, (None, None) when the server keeps no results file."""
        if self.path is None:
            return None, None
        with self._lock:
            self.pending.append((json.dumps(record, separators=(",", ":")) + "\n").encode())
            return self._write_pending()

    def flush(self) -> tuple[bool | None, str | None]:
        """Try the pending lines again (at shutdown); the same answer as ``append``."""
        if self.path is None:
            return None, None
        with self._lock:
            return self._write_pending()

    def _write_pending(self) -> tuple[bool, str | None]:
        try:
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        except OSError as e:
            return self._failed(e)
        try:
            while self.pending:
                self._write_line(fd, self.pending[0])
                self.pending.pop(0)
        except OSError as e:
            return self._failed(e)
        finally:
            os.close(fd)
        return True, None

    @staticmethod
    def _write_line(fd: int, line: bytes) -> None:
        """One line, whole or not at all: a failed write is cut off again so the next line starts clean."""
        start = os.fstat(fd).st_size
        try:
            view = memoryview(line)
            while view:  # one write in practice; a short write continues the same line
                view = view[os.write(fd, view):]
            os.fsync(fd)
        except OSError:
            try:
                os.ftruncate(fd, start)
            except OSError:
                pass
            raise

    def _failed(self, e: OSError) -> tuple[bool, str]:
        why = (f"cannot write the results file {self.path}: {e.strerror or e}; "
               f"{len(self.pending)} result(s) kept in memory and written with the next one or at shutdown")
        log.error(why)
        return False, why
