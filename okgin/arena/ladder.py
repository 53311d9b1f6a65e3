"""The ladder: registered agents, a schedule of matches in the store, and workers that play them.

    okgin-arena register --db runs/arena.sqlite simple simple
    okgin-arena schedule --db runs/arena.sqlite --rounds 10            # every pair of registered agents, 10 times
    okgin-arena schedule --db runs/arena.sqlite --uncertain 50         # the 50 pairs whose difference is least certain
    okgin-arena run --db runs/arena.sqlite --workers 2                 # until the schedule is empty
    okgin-arena ratings --db runs/arena.sqlite

A **match** is ``hands`` hands (default 10) on duplicate deals: each deal (a seed of ``okgin.human_table.Table``)
is played twice, A in each seat, every hand a game of its own with its log kept for the replay view.
Each match is one row of ``schedule``; a worker claims it (``running``), plays it and writes the match and
``done`` in one transaction. Stopping the ladder (Ctrl-C, a kill, a reboot) loses nothing: the next
``run`` puts back the matches its dead workers had claimed and plays them (a match is stored once: its
uid is the schedule row's).

Plug-in bots (``module:Attr``) play in a process of their own (``okgin.arena.sandbox``) with a time limit
per move and a memory limit: a bot that hangs, crashes, raises or answers an illegal move loses that hand
(a *forfeit*, counted as a lost hand in the ratings and listed in the match's ``meta``), and after
``MAX_STRIKES`` forfeits in one match it loses the match's remaining hands without being asked again. The
bundled bots and language-model agents play in the worker itself (a bundled bot's exception or illegal
move is a forfeit too). Workers are processes on this machine (``--workers``), or Ray tasks on a cluster
(``--ray``, ``okgin.arena.ray_ladder``): the same match-playing function, its record written by the driver.
"""

from __future__ import annotations

import json
import multiprocessing as mp
import os
import socket
import time
import uuid
from dataclasses import dataclass
from datetime import timedelta

import numpy as np
import sqlalchemy as sa

from okgin.arena.schema import agents, schedule
from okgin.arena.store import GameRow, HandTable, MatchRecord, Store, agent_kind, now

DEFAULT_HANDS = 10  #: hands per ladder match (5 deals, each played from both seats)
MAX_STRIKES = 2  #: forfeits in one match after which a bot is not asked again in that match
MAX_SEED = 2 ** 31 - 1


@dataclass(frozen=True)
class Limits:
    """What a plug-in bot may use: seconds per move, address space, CPU seconds of its process."""

    move_seconds: float = 5.0
    memory_mb: int = 2048
    cpu_seconds: int = 3600
    start_seconds: float = 120.0

    def __post_init__(self) -> None:
        if not self.move_seconds > 0 or not self.start_seconds > 0:
            raise ValueError(f"move and start seconds must be > 0, got {self.move_seconds}, {self.start_seconds}")
        if self.memory_mb < 256:
            raise ValueError(f"memory_mb must be >= 256 (a bot's process imports numpy and numba), got {self.memory_mb}")


def agent_for(spec: str, seed: int, rules: dict | None = None):
    """The agent of ``spec`` for games under ``rules`` (a stored rules dict): ``okgin_env.make_agent``."""
    from okgin_env import Rules, make_agent

    return make_agent(spec, seed=seed, rules=Rules.from_dict(rules) if rules else None)


def _seat(spec: str, seed: int, rules: dict, limits: Limits):
    if agent_kind(spec) == "plugin":
        from okgin.arena.sandbox import SandboxedAgent

        return SandboxedAgent(spec, seed, rules, limits.move_seconds, limits.memory_mb, limits.cpu_seconds,
                              limits.start_seconds)
    return agent_for(spec, seed, rules)


def _move(agent, table) -> int:
    """The agent's legal move at ``table``, or ``Forfeit``."""
    from okgin.arena.sandbox import Forfeit

    out = table.out
    try:
        actions = np.asarray(agent.act(out.observation, out.legal_action_mask))
    except Forfeit:
        raise
    except Exception as e:  # noqa: BLE001 - a bot's bug loses its hand, the ladder goes on
        raise Forfeit("error", f"{type(e).__name__}: {str(e)[:200]}") from None
    if actions.shape != (1,) or actions.dtype.kind not in "iu":
        raise Forfeit("illegal", f"expected one integer action, got {actions.dtype} array of shape {actions.shape}")
    a = int(actions[0])
    if not 0 <= a < out.legal_action_mask.shape[1] or not out.legal_action_mask[0, a]:
        raise Forfeit("illegal", f"action {a} is not legal here")
    return a


def deal_seeds(seed: int, deals: int) -> list[int]:
    """The seeds of a match's deals (each a ``Table`` seed) from the match's seed."""
    return (np.random.SeedSequence([int(seed), 0xA7E4A]).generate_state(deals, np.uint64) % MAX_SEED).tolist()


def play_match(spec_a: str, spec_b: str, rules: dict, seed: int, num_hands: int = DEFAULT_HANDS,
               limits: Limits = Limits(), names: tuple[str, str] | None = None, uid: str | None = None) -> MatchRecord:
    """A ladder match of A against B (see the module docstring), as the ``MatchRecord`` to store."""
    from okgin.arena.sandbox import Forfeit
    from okgin.human_table import Table
    from okgin_env import Rules
    from okgin_trainer.matches import agent_seed

    if num_hands < 2 or num_hands % 2:
        raise ValueError(f"a ladder match has an even number of hands >= 2 (duplicate deals), got {num_hands}")
    game_rules = Rules.from_dict(rules)
    names = names or (spec_a, spec_b)
    deals = num_hands // 2
    seeds = deal_seeds(seed, deals)
    a_seed, b_seed = agent_seed(seed, 0, 0), agent_seed(seed, 0, 1)
    started, t0 = now(), time.perf_counter()
    players = [None, None]
    start_errors: list[Forfeit | None] = [None, None]
    for side, (spec, s) in enumerate(((spec_a, a_seed), (spec_b, b_seed))):
        try:
            players[side] = _seat(spec, s, rules, limits)
        except Exception as e:  # noqa: BLE001 - an agent that cannot be made forfeits every hand
            start_errors[side] = Forfeit("error", f"could not make the agent: {type(e).__name__}: {str(e)[:200]}")
    strikes = [0, 0]
    cols = {k: [] for k in ("deal", "seat_a", "win", "points", "void", "knocker", "gin", "undercut", "forfeit")}
    game_rows, forfeits = [], []
    try:
        for row in range(num_hands):
            deal, seat_a = row % deals, row // deals
            pair = (0, 1) if seat_a == 0 else (1, 0)  # pair[player] = side (0 A, 1 B)
            specs = tuple((spec_a, spec_b)[pair[p]] for p in (0, 1))
            table = Table(game_rules, True, seeds[deal], tuple(names[pair[p]] for p in (0, 1)), specs)
            info, lost = None, None
            while not table.finished:
                side = pair[table.current]
                if start_errors[side] is not None or strikes[side] >= MAX_STRIKES:
                    why = start_errors[side] or Forfeit("strikes", f"{MAX_STRIKES} forfeits earlier in this match")
                    lost = (side, why)
                    break
                try:
                    a = _move(players[side], table)
                except Forfeit as f:
                    strikes[side] += 1
                    lost = (side, f)
                    break
                info = table.step(a) or info
            cols["deal"].append(deal)
            cols["seat_a"].append(seat_a)
            log = table.log_dict("ladder")
            if lost is not None:
                side, f = lost
                forfeits.append({"hand": row, "side": "AB"[side], "reason": f.reason, "detail": f.detail})
                log["forfeit"] = {"player": pair.index(side), "reason": f.reason, "detail": f.detail}
                for k, v in (("win", float(side)), ("points", 0), ("void", False), ("knocker", -1), ("gin", False),
                             ("undercut", False), ("forfeit", side)):
                    cols[k].append(v)
                game_rows.append(GameRow(deal=deal, seat_a=seat_a, winner=1 - side, score_a=0, score_b=0, hands=1,
                                         seed=seeds[deal], log=log))
                continue
            pa, pb = info["points"][seat_a], info["points"][1 - seat_a]
            winner = None if info["void"] else (0 if info["winner"] == seat_a else 1)
            knocker = -1 if info["knocker"] < 0 else (0 if info["knocker"] == seat_a else 1)
            for k, v in (("win", 0.5 if winner is None else 1.0 - winner), ("points", pa - pb),
                         ("void", bool(info["void"])), ("knocker", knocker), ("gin", bool(info["gin"])),
                         ("undercut", bool(info["undercut"])), ("forfeit", -1)):
                cols[k].append(v)
            game_rows.append(GameRow(deal=deal, seat_a=seat_a, winner=winner, score_a=int(pa), score_b=int(pb),
                                     hands=1, seed=seeds[deal], log=log))
    finally:
        for p in players:
            if hasattr(p, "close"):
                p.close()
    hands = HandTable(game=np.arange(num_hands), **{k: np.asarray(v) for k, v in cols.items()})
    meta = {"forfeits": forfeits, "limits": {"move_seconds": limits.move_seconds, "memory_mb": limits.memory_mb},
            "display_names": list(names)}
    for side, p in enumerate(players):  # what an agent counts of itself (a language model's refused answers)
        stats = getattr(p, "stats", None)
        if hasattr(stats, "to_dict"):
            try:
                meta[f"agent_{'ab'[side]}"] = json.loads(json.dumps(stats.to_dict(), default=str))
            except Exception:  # noqa: BLE001 - the counts are extra, never a reason to lose the match
                pass
    return MatchRecord(spec_a=spec_a, spec_b=spec_b, rules=rules, seed=seed, hands=hands, games=game_rows,
                       source="ladder", episode="hand", duplicate=True, agent_seeds=(a_seed, b_seed),
                       name_a=names[0], name_b=names[1], uid=uid or uuid.uuid4().hex, started_at=started,
                       seconds=time.perf_counter() - t0, meta=meta)


# ----------------------------------------------------------------------------- registering and scheduling

def register(store: Store, name: str, spec: str) -> int:
    """Put ``spec`` on the ladder as ``name`` (a bundled bot's spec is checked by making it)."""
    if not name or len(name) > 200 or any(c in name for c in "\n\r\t"):
        raise ValueError(f"an agent name is 1-200 characters on one line, got {name!r}")
    kind = agent_kind(spec)
    if kind == "bot" or ":" not in spec:
        agent_for(spec, 0)  # an unknown spec or a missing checkpoint fails now, with the registry's message
    elif kind == "person":
        raise ValueError("people play on the web table (play.py --web --db URL), not on the ladder")
    return store.agent(spec, name=name, ladder=True)


def ladder_agents(store: Store) -> list[dict]:
    with store.read() as conn:
        return [dict(r._mapping) for r in conn.execute(
            sa.select(agents.c.id, agents.c.name, agents.c.spec, agents.c.kind)
            .where(agents.c.ladder.is_(True)).order_by(agents.c.id))]


def schedule_pairs(store: Store, pairs: list[tuple[int, int]], rules: dict, seed: int, hands: int) -> int:
    """Add one match per (agent id, agent id) pair to the schedule, seats alternating; returns how many."""
    if hands < 2 or hands % 2:
        raise ValueError(f"--hands must be even and >= 2 (duplicate deals), got {hands}")
    batch = uuid.uuid4().hex[:12]
    seeds = np.random.SeedSequence([int(seed), int(batch, 16)]).generate_state(max(1, len(pairs)), np.uint64) % MAX_SEED
    created = now()
    rows = [dict(uid=f"ladder-{batch}-{k}", agent_a_id=a if k % 2 == 0 else b, agent_b_id=b if k % 2 == 0 else a,
                 rules=rules, seed=int(seeds[k]), hands=hands, status="pending", created_at=created)
            for k, (a, b) in enumerate(pairs)]
    if rows:
        with store.writing() as conn:
            conn.execute(schedule.insert(), rows)
    return len(rows)


def round_robin(store: Store, rounds: int, rules: dict, seed: int, hands: int) -> int:
    """Every pair of the ladder's agents ``rounds`` times."""
    ids = [a["id"] for a in ladder_agents(store)]
    if len(ids) < 2:
        raise ValueError(f"the ladder has {len(ids)} agent(s); register at least two (okgin-arena register)")
    pairs = [(a, b) for _ in range(rounds) for x, a in enumerate(ids) for b in ids[x + 1:]]
    return schedule_pairs(store, pairs, rules, seed, hands)


def uncertain(store: Store, count: int, rules: dict, seed: int, hands: int, reps: int = 200) -> int:
    """``count`` matches for the pairs whose rating difference is least certain (``ratings.uncertain_pairs``)."""
    from okgin.arena.ratings import load_results, uncertain_pairs

    ids = [a["id"] for a in ladder_agents(store)]
    if len(ids) < 2:
        raise ValueError(f"the ladder has {len(ids)} agent(s); register at least two (okgin-arena register)")
    pairs = uncertain_pairs(load_results(store, rules, ids), ids, count, reps=reps, seed=seed)
    return schedule_pairs(store, pairs, rules, seed, hands)


def schedule_counts(store: Store) -> dict[str, int]:
    with store.read() as conn:
        rows = conn.execute(sa.select(schedule.c.status, sa.func.count()).group_by(schedule.c.status)).all()
    return {"pending": 0, "running": 0, "done": 0, **{s: int(n) for s, n in rows}}


# ----------------------------------------------------------------------------- playing the schedule

def _worker_id() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def _alive(worker: str | None) -> bool:
    """Whether the worker that claimed a match still runs (known only for workers of this machine)."""
    if not worker or ":" not in worker:
        return False
    host, _, pid = worker.rpartition(":")
    if host != socket.gethostname():
        return True  # another machine's worker: its claim expires by age instead (requeue's stale_after)
    try:
        os.kill(int(pid), 0)
    except (ProcessLookupError, ValueError):
        return False
    except PermissionError:
        return True
    return True


def requeue(store: Store, stale_after: float = 6 * 3600) -> int:
    """Put back the matches claimed by workers that died (this machine's) or claimed longer than
    ``stale_after`` seconds ago (any machine's); returns how many."""
    with store.writing() as conn:
        rows = conn.execute(sa.select(schedule.c.id, schedule.c.worker, schedule.c.claimed_at)
                            .where(schedule.c.status == "running")).all()
        limit = now() - timedelta(seconds=stale_after)
        dead = []
        for r in rows:
            claimed = r.claimed_at if r.claimed_at is None or r.claimed_at.tzinfo else \
                r.claimed_at.replace(tzinfo=limit.tzinfo)
            if not _alive(r.worker) or claimed is None or claimed < limit:
                dead.append(r.id)
        if dead:
            conn.execute(schedule.update().where(schedule.c.id.in_(dead), schedule.c.status == "running")
                         .values(status="pending", worker=None, claimed_at=None))
    return len(dead)


def claim(store: Store, worker: str) -> dict | None:
    """The oldest pending match, now ``running`` for ``worker`` (None when nothing is pending). PostgreSQL
    skips rows another worker is claiming; SQLite's write lock serialises the claims."""
    with store.writing() as conn:
        q = sa.select(schedule).where(schedule.c.status == "pending").order_by(schedule.c.id).limit(1)
        if store.dialect == "postgresql":
            q = q.with_for_update(skip_locked=True)
        row = conn.execute(q).mappings().first()
        if row is None:
            return None
        conn.execute(schedule.update().where(schedule.c.id == row["id"])
                     .values(status="running", worker=worker, claimed_at=now()))
        names = dict(conn.execute(sa.select(agents.c.id, agents.c.name)
                                  .where(agents.c.id.in_([row["agent_a_id"], row["agent_b_id"]]))).all())
        specs = dict(conn.execute(sa.select(agents.c.id, agents.c.spec)
                                  .where(agents.c.id.in_([row["agent_a_id"], row["agent_b_id"]]))).all())
    return {**row, "name_a": names[row["agent_a_id"]], "name_b": names[row["agent_b_id"]],
            "spec_a": specs[row["agent_a_id"]], "spec_b": specs[row["agent_b_id"]]}


def work(url: str, limits: Limits, max_matches: int | None = None) -> int:
    """One worker: claim, play and record matches until none is pending (or ``max_matches``); returns how many."""
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    store = Store(url)
    me, played = _worker_id(), 0
    try:
        while max_matches is None or played < max_matches:
            job = claim(store, me)
            if job is None:
                break
            record_claimed(store, job, play_claimed(job, limits))
            played += 1
    finally:
        store.close()
    return played


def play_claimed(job: dict, limits: Limits) -> MatchRecord:
    """The match of a claimed schedule row (``claim``), played: what a process worker and a Ray task run
    (``okgin.arena.ray_ladder``). Needs no database: ``job`` carries the specs, names, rules and seed."""
    return play_match(job["spec_a"], job["spec_b"], job["rules"], job["seed"], job["hands"], limits,
                      names=(job["name_a"], job["name_b"]), uid=job["uid"])


def record_claimed(store: Store, job: dict, record: MatchRecord) -> int:
    """Store a claimed match's record and mark its schedule row done, in one transaction; returns its id."""
    def done(conn, match_id: int) -> None:
        conn.execute(schedule.update().where(schedule.c.id == job["id"]).values(status="done"))

    return store.record(record, after=done)


def release(store: Store, schedule_ids: list[int], worker: str) -> int:
    """Put back (``pending``) the matches ``worker`` claimed and did not finish; returns how many."""
    if not schedule_ids:
        return 0
    with store.writing() as conn:
        return conn.execute(schedule.update().where(schedule.c.id.in_(schedule_ids), schedule.c.status == "running",
                                                    schedule.c.worker == worker)
                            .values(status="pending", worker=None, claimed_at=None)).rowcount


def _work_entry(url: str, limits: Limits, max_matches: int | None, out) -> None:
    try:
        out.put(("ok", work(url, limits, max_matches)))
    except BaseException as e:  # noqa: BLE001 - the parent says which worker failed and why
        out.put(("error", f"{type(e).__name__}: {e}"))


def run(url: str, workers: int = 1, limits: Limits = Limits(), max_matches: int | None = None,
        progress=print, stale_after: float = 6 * 3600) -> dict[str, int]:
    """Play the schedule with ``workers`` processes until nothing is pending (or ``max_matches`` each);
    first puts back what dead workers had claimed. Returns the schedule's counts at the end."""
    if workers < 1:
        raise ValueError(f"--workers must be >= 1, got {workers}")
    store = Store(url)
    back = requeue(store, stale_after)
    if back:
        progress(f"put back {back} match(es) that a stopped ladder had claimed")
    start = schedule_counts(store)
    progress(f"schedule: {start['pending']} pending, {start['running']} running elsewhere, {start['done']} done")
    ctx = mp.get_context("spawn")  # a fresh interpreter per worker: no engine or numba state shared over fork
    out = ctx.Queue()
    procs = [ctx.Process(target=_work_entry, args=(url, limits, max_matches, out), daemon=True)
             for _ in range(workers)]
    for p in procs:
        p.start()
    last = time.monotonic()
    try:
        while any(p.is_alive() for p in procs):
            time.sleep(0.5)
            if time.monotonic() - last > 10:
                c = schedule_counts(store)
                progress(f"  {c['done']} done, {c['running']} running, {c['pending']} pending")
                last = time.monotonic()
    finally:
        for p in procs:
            if p.is_alive():
                p.terminate()
            p.join()
    errors = []
    for p in procs:
        try:
            status, value = out.get(timeout=2)
        except Exception:  # noqa: BLE001 - queue.Empty: a worker killed before it could answer
            errors.append(f"a worker ended with exit code {p.exitcode} and no answer")
            continue
        if status == "error":
            errors.append(value)
    counts = schedule_counts(store)
    store.close()
    if errors:
        raise RuntimeError(f"{len(errors)} ladder worker(s) failed: {errors[0]}")
    return counts
