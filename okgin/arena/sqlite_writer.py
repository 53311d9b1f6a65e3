"""evaluate.py --db's writer for a SQLite store: the standard library's ``sqlite3``, in the process itself.

Importing SQLAlchemy costs about as much CPU as playing a few thousand fast hands, more than the 5 %
of evaluate.py's time that recording may cost; ``sqlite3`` is part of the interpreter. This writer
does what ``Store.record`` does (the same rows, one transaction a match, ``BEGIN IMMEDIATE``, a match
stored once by its uid, agents created once by name) for a store already at ``SCHEMA_REVISION``; a
new or older store is created or upgraded by ``Store`` first (Alembic), once. tests/arena checks that
both writers store the same rows. PostgreSQL stores go through ``okgin.arena.recorder`` instead.
"""

from __future__ import annotations

import json
import sqlite3
from datetime import datetime, timedelta, timezone
from typing import Sequence

import numpy as np

from okgin.arena.match import HAND_COLUMNS, MatchRecord, agent_kind, default_agent_name, rules_key, weights_sha256
from okgin.arena.urls import resolve_url

BUSY_SECONDS = 60.0  #: as ``store.SQLITE_BUSY_MS``
_SQLA_TIME = "%Y-%m-%d %H:%M:%S.%f"  #: how SQLAlchemy's DateTime is stored in SQLite (read back naive)


def sqlite_path(url: str) -> str | None:
    """The file of a SQLite store URL (None for another database)."""
    url = resolve_url(url)
    if not url.startswith(("sqlite:", "sqlite+pysqlite:")):
        return None
    return url.split(":///", 1)[1]


def _time(t: datetime) -> str:
    return t.astimezone(timezone.utc).strftime(_SQLA_TIME)


def _json(value) -> str | None:
    return None if value is None else json.dumps(value)


def _revision(conn: sqlite3.Connection) -> str | None:
    try:
        return conn.execute("SELECT version_num FROM alembic_version").fetchone()[0]
    except (sqlite3.OperationalError, TypeError):
        return None


def connect(path: str) -> sqlite3.Connection:
    """A connection to the store at ``path``, created or upgraded first (by ``Store``) if it is not at
    ``SCHEMA_REVISION``."""
    from okgin.arena.revision import SCHEMA_REVISION

    conn = sqlite3.connect(path, timeout=BUSY_SECONDS, isolation_level=None)
    conn.execute(f"PRAGMA busy_timeout = {int(BUSY_SECONDS * 1000)}")
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = NORMAL")
    conn.execute("PRAGMA foreign_keys = ON")
    if _revision(conn) != SCHEMA_REVISION:
        from okgin.arena.store import Store  # creates the tables or migrates them: SQLAlchemy, once

        Store("sqlite:///" + path).close()
    return conn


def _agent(conn: sqlite3.Connection, spec: str, name: str | None, kind: str | None) -> int:
    sha = weights_sha256(spec)
    name = name or default_agent_name(spec, sha)
    conn.execute("INSERT OR IGNORE INTO agents (name, spec, kind, weights_sha256, created_at, ladder) "
                 "VALUES (?, ?, ?, ?, ?, 0)", (name, spec, kind or agent_kind(spec), sha,
                                               _time(datetime.now(timezone.utc))))
    agent_id, stored_spec, stored_sha = conn.execute(
        "SELECT id, spec, weights_sha256 FROM agents WHERE name = ?", (name,)).fetchone()
    if stored_spec != spec or (stored_sha or None) != (sha or None):
        raise ValueError(f"the agent name {name!r} is taken by spec {stored_spec!r}; record {spec!r} under "
                         "another name")
    return int(agent_id)


def record(conn: sqlite3.Connection, m: MatchRecord) -> int:
    """``m`` in one transaction (``Store.record``'s rows); returns its id."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        old = conn.execute("SELECT id FROM matches WHERE uid = ?", (m.uid,)).fetchone()
        if old is not None:
            conn.execute("COMMIT")
            return int(old[0])
        a = _agent(conn, m.spec_a, m.name_a, m.kind_a)
        b = _agent(conn, m.spec_b, m.name_b, m.kind_b)
        h = m.hands
        win = np.asarray(h.win, np.float64)
        forfeit = np.asarray(h.forfeit)
        finished = datetime.now(timezone.utc)
        started = m.started_at or (finished - timedelta(seconds=m.seconds))
        row = dict(
            uid=m.uid, source=m.source, agent_a_id=a, agent_b_id=b, rules=_json(m.rules),
            rules_key=rules_key(m.rules), seed=int(m.seed),
            agent_seeds=_json(None if m.agent_seeds is None else [int(s) for s in m.agent_seeds]),
            deal_set=m.deal_set or m.uid, duplicate=int(bool(m.duplicate)), episode=m.episode, hands=len(h),
            wins_a=int((win == 1).sum()), wins_b=int((win == 0).sum()), voids=int(np.asarray(h.void).sum()),
            forfeits_a=int((forfeit == 0).sum()), forfeits_b=int((forfeit == 1).sum()),
            points_a=int(np.asarray(h.points).sum()), games=len(m.games),
            game_wins_a=sum(g.winner == 0 for g in m.games), game_wins_b=sum(g.winner == 1 for g in m.games),
            started_at=_time(started), finished_at=_time(finished), seconds=float(m.seconds),
            counted=int(bool(m.counted)), meta=_json(m.meta))
        cur = conn.execute(f"INSERT INTO matches ({', '.join(row)}) VALUES ({', '.join('?' * len(row))})",
                           tuple(row.values()))
        mid = int(cur.lastrowid)
        if len(h):
            cols = ("match_id", "idx", *HAND_COLUMNS)
            conn.executemany(f"INSERT INTO hands ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})",
                             [(mid, *r) for r in h.rows()])
        if m.games:
            conn.executemany(
                "INSERT INTO games (match_id, idx, deal, seat_a, seed, winner, score_a, score_b, hands, log) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [(mid, k, g.deal, g.seat_a, g.seed, g.winner, g.score_a, g.score_b, g.hands, _json(g.log))
                 for k, g in enumerate(m.games)])
        conn.execute("COMMIT")
        return mid
    except BaseException:
        conn.execute("ROLLBACK")
        raise


def record_all(url: str, records: Sequence[MatchRecord]) -> int:
    """Every record into the SQLite store at ``url``; returns how many."""
    path = sqlite_path(url)
    if path is None:
        raise ValueError(f"not a SQLite store: {url}")
    conn = connect(path)
    try:
        for m in records:
            record(conn, m)
    finally:
        conn.close()
    return len(records)
