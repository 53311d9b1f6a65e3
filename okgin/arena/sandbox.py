"""Plug-in bots in a process of their own, with a time limit per move and a memory limit.

    bot = SandboxedAgent("mybots:Bot", seed=3, move_seconds=5, memory_mb=2048)
    actions = bot.act(observations, masks)      # raises Forfeit when the bot hangs, crashes or is killed

The ladder plays a plug-in bot (``module:Attr``, user code) through this class: the bot's process is
started with ``resource.setrlimit`` limits (address space ``memory_mb``; CPU seconds as a backstop) and
answers one batch of observations at a time over a pipe. Nothing the child sends is unpickled: requests
and answers are ``.npy`` bytes read with ``allow_pickle=False``, so a hostile bot cannot run code in
the ladder. The child's prints go to its stderr (kept, its last lines name a crash), never into the
protocol.

A bot that takes longer than ``move_seconds`` for a move is killed and the move is a ``Forfeit``; so is
one that exits, raises or answers something that is not one action per row (``Forfeit.reason`` says
which). The next ``act`` starts a fresh process (the ladder stops asking after a few strikes).
"""

from __future__ import annotations

import io
import json
import os
import select
import signal
import struct
import subprocess
import sys
import tempfile
import time

import numpy as np

START_SECONDS = 120.0  #: a bot's process may take this long to import and build the bot (numba compiles)
MAX_ANSWER_BYTES = 1 << 20  #: an answer longer than this is refused (a bot may not flood the ladder)


class Forfeit(Exception):
    """The bot lost the moves in play: ``reason`` is hang, crash, illegal or error, ``detail`` one line."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(f"{reason}: {detail}")
        self.reason, self.detail = reason, detail


def _npy(array: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.save(buf, array, allow_pickle=False)
    return buf.getvalue()


def _frame(payload: bytes) -> bytes:
    return struct.pack("<Q", len(payload)) + payload


def _limits(memory_mb: int, cpu_seconds: int):
    def apply() -> None:  # in the child, before exec
        import resource

        os.setsid()  # its own process group: a kill reaches anything it started
        limit = memory_mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        resource.setrlimit(resource.RLIMIT_CPU, (cpu_seconds, cpu_seconds + 5))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    return apply


class SandboxedAgent:
    """An agent spec played in a child process with limits (see the module docstring)."""

    def __init__(self, spec: str, seed: int, rules: dict | None = None, move_seconds: float = 5.0,
                 memory_mb: int = 2048, cpu_seconds: int = 3600, start_seconds: float = START_SECONDS) -> None:
        self.spec, self.seed, self.rules = spec, int(seed), rules or {}
        self.name = spec
        self.move_seconds, self.memory_mb, self.cpu_seconds = float(move_seconds), int(memory_mb), int(cpu_seconds)
        self.start_seconds = float(start_seconds)
        self.proc: subprocess.Popen | None = None
        self.log = None
        self.starts = 0

    # -- the child's life
    def _start(self) -> None:
        self.log = tempfile.TemporaryFile()
        env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONUNBUFFERED": "1"}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "okgin.arena.sandbox", self.spec, str(self.seed), json.dumps(self.rules)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log, env=env,
            preexec_fn=_limits(self.memory_mb, self.cpu_seconds), close_fds=True)
        self.starts += 1
        line = self._read(self.start_seconds, "starting")
        if line != b"ready":
            self._fail("crash", f"could not start: {line[:300].decode(errors='replace')}")

    def _tail(self) -> str:
        if self.log is None:
            return ""
        self.log.seek(0, os.SEEK_END)
        size = self.log.tell()
        self.log.seek(max(0, size - 400))
        lines = self.log.read().decode(errors="replace").strip().splitlines()
        return lines[-1][:300] if lines else ""

    def _fail(self, reason: str, detail: str):
        self.close()
        raise Forfeit(reason, detail)

    def _read_exact(self, n: int, deadline: float, what: str) -> bytes:
        fd = self.proc.stdout.fileno()
        chunks, got = [], 0
        while got < n:
            left = deadline - time.monotonic()
            ready = select.select([fd], [], [], max(0.0, left))[0] if left > 0 else []
            if not ready:
                self._fail("hang", f"no answer within {self.move_seconds if what == 'moving' else self.start_seconds:g} s "
                                   f"({what}); the bot's process was killed")
            chunk = os.read(fd, min(n - got, 1 << 16))
            if not chunk:
                code = self.proc.wait()
                tail = self._tail()
                self._fail("crash", f"the bot's process ended (exit code {code}) while {what}"
                                    + (f": {tail}" if tail else ""))
            chunks.append(chunk)
            got += len(chunk)
        return b"".join(chunks)

    def _read(self, seconds: float, what: str) -> bytes:
        deadline = time.monotonic() + seconds
        n = struct.unpack("<Q", self._read_exact(8, deadline, what))[0]
        if n > MAX_ANSWER_BYTES:
            self._fail("illegal", f"an answer of {n} bytes (at most {MAX_ANSWER_BYTES})")
        return self._read_exact(n, deadline, what)

    def close(self) -> None:
        """Kill the bot's process (and its group) if it runs."""
        if self.proc is not None:
            if self.proc.poll() is None:
                try:
                    os.killpg(self.proc.pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    self.proc.kill()
            self.proc.wait()
            for f in (self.proc.stdin, self.proc.stdout):
                try:
                    f.close()
                except OSError:
                    pass
            self.proc = None
        if self.log is not None:
            self.log.close()
            self.log = None

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass

    # -- the agent surface
    def act(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        """One action per row, or ``Forfeit``."""
        if self.proc is None or self.proc.poll() is not None:
            self.close()
            self._start()
        obs = _npy(np.ascontiguousarray(observations, np.float32))
        masks = _npy(np.asarray(action_masks, bool))
        try:
            self.proc.stdin.write(_frame(_frame(obs) + _frame(masks)))
            self.proc.stdin.flush()
        except OSError:  # a broken pipe: the process is gone
            code = self.proc.wait()
            tail = self._tail()
            self._fail("crash", f"the bot's process ended (exit code {code})" + (f": {tail}" if tail else ""))
        answer = self._read(self.move_seconds, "moving")
        if answer.startswith(b"E"):
            self._fail("error", answer[1:301].decode(errors="replace"))
        try:
            actions = np.load(io.BytesIO(answer[1:]), allow_pickle=False)
        except Exception:  # noqa: BLE001 - whatever the bytes are, they are not an answer
            self._fail("illegal", "an answer that is not an array of actions")
        if actions.shape != (len(action_masks),) or actions.dtype.kind not in "iu":
            self._fail("illegal", f"{actions.dtype} array of shape {actions.shape}; expected {len(action_masks)} "
                                  "integer actions")
        return actions.astype(np.int64)


# ----------------------------------------------------------------------------- the child

def _split(frame: bytes) -> tuple[bytes, bytes]:
    n = struct.unpack("<Q", frame[:8])[0]
    first = frame[8:8 + n]
    rest = frame[8 + n:]
    m = struct.unpack("<Q", rest[:8])[0]
    return first, rest[8:8 + m]


def _child(spec: str, seed: int, rules: dict) -> None:
    proto = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # the bot's prints go to stderr, never into the protocol
    inp = sys.stdin.buffer

    def send(payload: bytes) -> None:
        proto.write(_frame(payload))
        proto.flush()

    try:
        from okgin.arena.ladder import agent_for

        agent = agent_for(spec, seed, rules)
    except BaseException as e:  # noqa: BLE001 - the parent reads one line
        send(f"{type(e).__name__}: {e}".encode()[:300])
        return
    send(b"ready")
    while True:
        head = inp.read(8)
        if len(head) < 8:
            return
        frame = inp.read(struct.unpack("<Q", head)[0])
        obs_bytes, mask_bytes = _split(frame)
        obs = np.load(io.BytesIO(obs_bytes), allow_pickle=False)
        mask = np.load(io.BytesIO(mask_bytes), allow_pickle=False)
        try:
            actions = np.asarray(agent.act(obs, mask))
            if actions.dtype == object:
                raise TypeError("the bot returned objects, not integer actions")
            send(b"A" + _npy(actions))
        except MemoryError:
            send(b"Ebot ran out of memory (MemoryError)")
        except Exception as e:  # noqa: BLE001
            send(b"E" + f"{type(e).__name__}: {e}".encode()[:300])


if __name__ == "__main__":
    _child(sys.argv[1], int(sys.argv[2]), json.loads(sys.argv[3]))
