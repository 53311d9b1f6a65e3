"""The ladder's matches as Ray tasks: ``okgin-arena run --ray [ADDRESS]``.

    ray start --head                                              # or on a cluster: its head's address
    okgin-arena run --db runs/arena.sqlite --ray auto             # tasks on that cluster
    okgin-arena run --db runs/arena.sqlite --ray                  # a Ray of its own on this machine

The driver (this process) claims schedule rows as a process worker does (``ladder.claim``, the claim in
its own name ``host:pid``), hands each claimed match to a Ray task that plays it with
``ladder.play_claimed`` (the process workers' function) and gets the ``MatchRecord`` back, then writes it
and marks the row done in one transaction (``ladder.record_claimed``). So the machines that play need okgin
and its bots but no database access, and a task that is killed leaves nothing in the store: Ray retries it
(``TASK_RETRIES``, the match is deterministic in its seed), and a match whose task still fails, or is in
flight when the driver stops, is put back to ``pending``. A driver killed outright leaves its claims
``running``; the next ``run`` (with or without ``--ray``) puts them back (``ladder.requeue``: its pid is gone).

Plug-in bots are sandboxed inside the task exactly as in a process worker (``okgin.arena.sandbox``: a child
process of the task with the same per-move time limit and memory limit). Ray is imported only here.
"""

from __future__ import annotations

import time

from okgin.arena import ladder
from okgin.arena.ladder import Limits
from okgin.arena.store import Store

RAY_MISSING = 'okgin-arena run --ray needs Ray, the integrations extra: pip install -e ".[integrations]"'
TASK_RETRIES = 2  #: Ray re-runs a task whose worker process died this many times before the match is put back
JOB_KEYS = ("id", "uid", "spec_a", "spec_b", "name_a", "name_b", "rules", "seed", "hands")  #: what a task is sent


def import_ray():
    """The ``ray`` module, or ImportError with the one line that says how to install it."""
    try:
        import ray
    except ImportError:
        raise ImportError(RAY_MISSING) from None
    return ray


def connect(ray, address: str | None) -> bool:
    """Join the Ray at ``address`` ("auto", "ray://HOST:PORT", a head's HOST:PORT) or, with None, start one
    of its own on this machine (never a cluster found running); nothing when this process is already
    connected. Returns whether it connected (and so disconnects at the end)."""
    if ray.is_initialized():
        return False
    try:
        ray.init(address=address or "local", log_to_driver=False)
    except Exception as e:  # noqa: BLE001 - no cluster there, a version mismatch: one line, not a traceback
        where = f"at {address!r}" if address else "on this machine"
        raise RuntimeError(f"could not start or join Ray {where}: {type(e).__name__}: "
                           f"{str(e).strip().splitlines()[0][:300] if str(e).strip() else ''}") from None
    return True


def run(url: str, address: str | None = None, workers: int | None = None, limits: Limits = Limits(),
        max_matches: int | None = None, progress=print, stale_after: float = 6 * 3600,
        retries: int = TASK_RETRIES) -> dict[str, int]:
    """Play the schedule as Ray tasks, ``workers`` matches in flight (default: the cluster's CPUs), until
    nothing is pending (or ``max_matches`` in all); first puts back what stopped workers had claimed.
    Returns the schedule's counts at the end; RuntimeError when some match's task failed (it is pending
    again, the others are stored)."""
    if workers is not None and workers < 1:
        raise ValueError(f"--workers must be >= 1, got {workers}")
    if max_matches is not None and max_matches < 1:
        raise ValueError(f"--max-matches must be >= 1, got {max_matches}")
    ray = import_ray()
    store = Store(url)  # a bad store fails before a Ray is started
    try:
        back = ladder.requeue(store, stale_after)
        if back:
            progress(f"put back {back} match(es) that a stopped ladder had claimed")
        started = connect(ray, address)
        try:
            return _drive(ray, store, workers, limits, max_matches, progress, retries)
        finally:
            if started:
                ray.shutdown()
    finally:
        store.close()


def _drive(ray, store: Store, workers: int | None, limits: Limits, max_matches: int | None, progress,
           retries: int) -> dict[str, int]:
    slots = workers or max(1, int(ray.cluster_resources().get("CPU", 1)))
    c = ladder.schedule_counts(store)
    progress(f"schedule: {c['pending']} pending, {c['running']} running elsewhere, {c['done']} done; "
             f"up to {slots} Ray task(s) at once")
    # one CPU a task: the match and a plug-in's sandbox process take turns, never both busy
    task = ray.remote(num_cpus=1, max_retries=retries, retry_exceptions=False)(ladder.play_claimed)
    me = ladder._worker_id()
    held: dict[int, dict] = {}  # schedule id -> claimed job not yet stored: put back if this run stops
    inflight: dict = {}  # ObjectRef -> job
    errors: list[str] = []
    claimed, last = 0, time.monotonic()
    try:
        while True:
            while len(inflight) < slots and (max_matches is None or claimed < max_matches):
                job = ladder.claim(store, me)
                if job is None:
                    break
                held[job["id"]] = job
                claimed += 1
                inflight[task.remote({k: job[k] for k in JOB_KEYS}, limits)] = job
            if not inflight:
                break
            ready, _ = ray.wait(list(inflight), num_returns=1, timeout=10.0)
            for ref in ready:
                job = inflight.pop(ref)
                try:
                    record = ray.get(ref)
                except Exception as e:  # noqa: BLE001 - the task raised or its worker died past its retries
                    last_line = (str(e).strip().splitlines() or [""])[-1][:300]  # a RayTaskError's: the cause
                    errors.append(f"match {job['uid']}: {type(e).__name__}: {last_line}")
                    continue  # stays claimed (not played again this run); put back below
                ladder.record_claimed(store, job, record)
                del held[job["id"]]
            if time.monotonic() - last > 10:
                c = ladder.schedule_counts(store)
                progress(f"  {c['done']} done, {c['running']} running, {c['pending']} pending")
                last = time.monotonic()
    finally:
        for ref in inflight:  # a stopped driver: the tasks stop too (KeyboardInterrupt in them closes sandboxes)
            try:
                ray.cancel(ref)
            except Exception:  # noqa: BLE001 - already finished
                pass
        ladder.release(store, list(held), me)
    counts = ladder.schedule_counts(store)
    if errors:
        raise RuntimeError(f"{len(errors)} ladder match(es) failed in Ray tasks and are pending again: {errors[0]}")
    return counts
