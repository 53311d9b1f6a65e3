"""evaluate.py --db's writer: a child process that opens the results store while the matches play.

Importing SQLAlchemy, opening (or creating) the store and compiling its statements take a few tenths
of a second, as long as playing thousands of fast hands; done in the parent they would cost evaluate.py
more than its 5 % budget. The child does them on another core as soon as the command line is read;
the parent sends the finished matches (pickled ``MatchRecord``s, parent to child only) and waits for
the child's answer, so evaluate.py still ends only once every match is committed (or says which were
not). A store that cannot be opened is reported after the first pair at the latest.

Protocol (child's stdout, one line each): ``ready`` or ``error TEXT`` after opening; ``ok N`` or
``error TEXT`` after the records.
"""

from __future__ import annotations

import os
import pickle
import select
import struct
import subprocess
import sys


class RecorderError(RuntimeError):
    """The store could not be opened or the matches could not be written (one line)."""


class Recorder:
    """The parent's side: start at once, ``check()`` between matches, ``record(records)`` at the end."""

    def __init__(self, url: str) -> None:
        self.url = url
        env = {**os.environ, "OMP_NUM_THREADS": "1"}
        self.proc = subprocess.Popen([sys.executable, "-m", "okgin.arena.recorder", url], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
        self.ready = False

    def _line(self, timeout: float | None) -> str | None:
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        if not ready:
            return None
        line = self.proc.stdout.readline().decode(errors="replace").strip()
        if not line:
            raise RecorderError(f"the results store's writer stopped (exit code {self.proc.wait()})")
        return line

    def _expect_ready(self, timeout: float | None) -> None:
        if self.ready:
            return
        line = self._line(timeout)
        if line is None:
            return
        if line != "ready":
            self.close()
            raise RecorderError(line.removeprefix("error "))
        self.ready = True

    def check(self) -> None:
        """Raise RecorderError if the child already said the store cannot be opened (never waits)."""
        self._expect_ready(0)

    def record(self, records: list) -> int:
        """Send ``records`` and wait until they are committed; returns how many were."""
        self._expect_ready(None)
        data = pickle.dumps(records, protocol=pickle.HIGHEST_PROTOCOL)
        try:
            self.proc.stdin.write(struct.pack("<Q", len(data)) + data)
            self.proc.stdin.flush()
        except BrokenPipeError:
            raise RecorderError(f"the results store's writer stopped (exit code {self.proc.wait()})") from None
        line = self._line(None)
        self.close()
        if not line.startswith("ok "):
            raise RecorderError(line.removeprefix("error "))
        return int(line.split()[1])

    def close(self) -> None:
        if self.proc.poll() is None:
            try:
                self.proc.stdin.close()
            except OSError:
                pass
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def _child(url: str) -> None:
    out = sys.stdout.buffer
    say = lambda text: (out.write(text.encode() + b"\n"), out.flush())  # noqa: E731
    try:
        from okgin.arena.store import Store

        store = Store(url)
        store.warm()
    except Exception as e:  # noqa: BLE001 - one line for the parent
        say(f"error {type(e).__name__}: {str(e).splitlines()[0][:300] if str(e) else ''}")
        return
    say("ready")
    head = sys.stdin.buffer.read(8)
    if len(head) < 8:
        return  # the parent had nothing to record (or stopped)
    data = sys.stdin.buffer.read(struct.unpack("<Q", head)[0])
    try:
        records = pickle.loads(data)
        for r in records:
            store.record(r)
    except Exception as e:  # noqa: BLE001
        say(f"error {type(e).__name__}: {str(e).splitlines()[0][:300] if str(e) else ''}")
        return
    say(f"ok {len(records)}")
    store.close()


if __name__ == "__main__":
    _child(sys.argv[1])
