"""The results store: every match okgin plays, in SQLite (one file, the default) or PostgreSQL.

    store = Store("runs/arena.sqlite")                         # or "postgresql+psycopg://user@host/db"
    store.record(MatchRecord(...))                             # one match, its hands and games, one transaction

A URL is SQLAlchemy's (``sqlite:///PATH``, ``postgresql+psycopg://...``); a bare path is a SQLite file and
``postgresql://`` means psycopg 3. Opening a store creates its tables or upgrades an older schema with
Alembic (``okgin/arena/migrations``, shipped in the package), under a lock so that several processes
opening one new store at once create it once.

Writers and readers at once (the web table, two evaluate.py runs, the ladder's workers):

* a match is written in one transaction; a writer killed before the commit leaves nothing of it;
* ``MatchRecord.uid`` is unique: recording the same match twice stores it once (the ladder resumes
  on it);
* SQLite runs in WAL mode (readers never block the writer) with a busy timeout, and a write
  transaction starts with ``BEGIN IMMEDIATE``, so writers queue for the lock instead of failing when
  two upgrade a read lock at once; a still-locked database is retried (``WRITE_RETRIES``);
* PostgreSQL's hands go in by ``COPY`` (a 20,000-hand match in a fraction of a second).
"""

from __future__ import annotations

import os
import time
from datetime import datetime, timezone
from typing import Any, Callable, Iterable

import numpy as np

try:
    import sqlalchemy as sa
    from sqlalchemy import event
    from sqlalchemy.engine import Connection, Engine
    from sqlalchemy.exc import IntegrityError, OperationalError
except ImportError as e:  # pragma: no cover - the arena extra is missing
    raise ImportError("the results store needs the 'arena' extra: pip install -e '.[arena]' in the checkout "
                      f"(SQLAlchemy 2, Alembic, psycopg 3): {e}") from None

from okgin.arena import schema
from okgin.arena.schema import SCHEMA_REVISION, agents, games, hands, matches
from okgin.arena.match import (AGENT_KINDS, HAND_COLUMNS, GameRow, HandTable, MatchRecord,  # noqa: F401  (API)
                               agent_kind, default_agent_name, rules_key, weights_file, weights_sha256)
from okgin.arena.urls import resolve_url  # noqa: F401  (API)

SQLITE_BUSY_MS = 60_000  #: how long a SQLite writer waits for the lock before an attempt fails
WRITE_RETRIES = 5  #: attempts at a write that found the database locked (SQLite) or a serialization failure
MIGRATIONS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "migrations")
_PG_UPGRADE_LOCK = 0x6F6B67696E  #: pg_advisory_xact_lock key of the schema upgrade ("okgin")


def now() -> datetime:
    return datetime.now(timezone.utc)


# ----------------------------------------------------------------------------- the store

class Store:
    """One database of results (``resolve_url``); ``upgrade=True`` creates or upgrades its tables on open."""

    def __init__(self, url: str, upgrade: bool = True, echo: bool = False) -> None:
        self.url = resolve_url(url)
        self.dialect = self.url.split(":", 1)[0].split("+", 1)[0]
        if self.dialect == "sqlite":
            path = self.url.split(":///", 1)[1] if ":///" in self.url else ""
            if path and path != ":memory:":
                os.makedirs(os.path.dirname(os.path.abspath(path)) or ".", exist_ok=True)
            self.engine: Engine = sa.create_engine(self.url, echo=echo,
                                                   connect_args={"timeout": SQLITE_BUSY_MS / 1000})
            _sqlite_setup(self.engine)
        else:
            try:
                self.engine = sa.create_engine(self.url, echo=echo, pool_pre_ping=True)
            except ImportError as e:
                raise ImportError(f"PostgreSQL needs psycopg 3 (the 'arena' extra): {e}") from None
        if upgrade:
            self.upgrade()

    def __repr__(self) -> str:
        return f"Store({self.describe(self.url)!r})"

    @staticmethod
    def describe(url: str) -> str:
        """``url`` as it may be printed: the password hidden."""
        return sa.engine.make_url(resolve_url(url)).render_as_string(hide_password=True)

    def close(self) -> None:
        self.engine.dispose()

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- schema
    def revision(self) -> str | None:
        """The schema revision the database is at (None: no tables yet)."""
        with self.engine.connect() as conn:
            return _revision(conn)

    def upgrade(self) -> None:
        """Create the tables or bring them to ``SCHEMA_REVISION`` (Alembic), once however many open at once."""
        with self.engine.connect() as conn:
            if _revision(conn) == SCHEMA_REVISION:  # the common case: no Alembic import, no lock
                return
        with self.writing() as conn:
            if self.dialect == "postgresql":
                conn.execute(sa.text("SELECT pg_advisory_xact_lock(:k)"), {"k": _PG_UPGRADE_LOCK})
            if _revision(conn) == SCHEMA_REVISION:  # another process upgraded while we waited
                return
            from alembic import command
            from alembic.config import Config

            cfg = Config()
            cfg.set_main_option("script_location", MIGRATIONS)
            cfg.attributes["connection"] = conn
            command.upgrade(cfg, "head")

    # -- transactions
    def writing(self):
        """A connection in a write transaction (SQLite: ``BEGIN IMMEDIATE``), committed on leaving."""
        return _WriteTx(self.engine)

    def _retrying(self, work):
        """``work(conn)`` in a write transaction, retried when SQLite stays locked or PostgreSQL reports a
        serialization failure or deadlock."""
        for attempt in range(WRITE_RETRIES):
            try:
                with self.writing() as conn:
                    return work(conn)
            except (OperationalError, IntegrityError) as e:
                # IntegrityError: another writer stored the same uid or agent name first; the next attempt reads it
                text = str(e)
                retry = isinstance(e, IntegrityError) or any(w in text for w in ("locked", "busy", "deadlock",
                                                                                    "serializ"))
                if not retry or attempt == WRITE_RETRIES - 1:
                    raise
                time.sleep(0.05 * 2 ** attempt)

    # -- agents
    def agent(self, spec: str, name: str | None = None, kind: str | None = None, ladder: bool = False,
              sha: str | None | bool = True) -> int:
        """The id of the agent (created if new). ``sha=True``: hash the spec's weights file."""
        return self._retrying(lambda conn: self._agent_id(conn, spec, name, kind, ladder, sha))

    def _agent_id(self, conn: Connection, spec: str, name: str | None, kind: str | None, ladder: bool,
                  sha: str | None | bool = True) -> int:
        if not isinstance(spec, str) or not spec.strip():
            raise ValueError(f"an agent spec must be a non-empty string, got {spec!r}")
        if sha is True:
            sha = weights_sha256(spec)
        kind = kind or agent_kind(spec)
        if kind not in AGENT_KINDS:
            raise ValueError(f"agent kind must be one of {', '.join(AGENT_KINDS)}, got {kind!r}")
        name = name or default_agent_name(spec, sha or None)
        row = conn.execute(sa.select(agents.c.id, agents.c.spec, agents.c.weights_sha256, agents.c.ladder)
                           .where(agents.c.name == name)).first()
        if row is None:
            conn.execute(_insert_ignore(self.dialect, agents, ["name"]).values(
                name=name, spec=spec, kind=kind, weights_sha256=sha or None, created_at=now(), ladder=ladder))
            row = conn.execute(sa.select(agents.c.id, agents.c.spec, agents.c.weights_sha256, agents.c.ladder)
                               .where(agents.c.name == name)).first()
        if row.spec != spec or (row.weights_sha256 or None) != (sha or None):
            raise ValueError(f"the agent name {name!r} is taken by spec {row.spec!r}"
                             + (f" (weights {row.weights_sha256[:12]})" if row.weights_sha256 else "")
                             + f"; register {spec!r} under another name")
        if ladder and not row.ladder:
            conn.execute(agents.update().where(agents.c.id == row.id).values(ladder=True))
        return int(row.id)

    # -- matches
    def record(self, m: MatchRecord, after: Callable[[Connection, int], None] | None = None) -> int:
        """Write ``m`` (agents, match, hands, games) in one transaction; returns its id. A match whose uid is
        already stored is not written again (its id is returned). ``after(conn, match_id)`` runs in the same
        transaction (the ladder marks its schedule row done there)."""
        _check_record(m)
        return self._retrying(lambda conn: self._record(conn, m, after))

    def _record(self, conn: Connection, m: MatchRecord, after=None) -> int:
        old = conn.execute(sa.select(matches.c.id).where(matches.c.uid == m.uid)).scalar()
        if old is not None:
            if after is not None:
                after(conn, int(old))
            return int(old)
        a = self._agent_id(conn, m.spec_a, m.name_a, m.kind_a, False)
        b = self._agent_id(conn, m.spec_b, m.name_b, m.kind_b, False)
        h = m.hands
        win = np.asarray(h.win, np.float64)
        forfeit = np.asarray(h.forfeit)
        finished = now()
        started = m.started_at or finished
        values = dict(
            uid=m.uid, source=m.source, agent_a_id=a, agent_b_id=b, rules=m.rules, rules_key=rules_key(m.rules),
            seed=int(m.seed), agent_seeds=None if m.agent_seeds is None else [int(s) for s in m.agent_seeds],
            deal_set=m.deal_set or m.uid, duplicate=bool(m.duplicate), episode=m.episode, hands=len(h),
            wins_a=int((win == 1).sum()), wins_b=int((win == 0).sum()), voids=int(np.asarray(h.void).sum()),
            forfeits_a=int((forfeit == 0).sum()), forfeits_b=int((forfeit == 1).sum()),
            points_a=int(np.asarray(h.points).sum()), games=len(m.games),
            game_wins_a=sum(g.winner == 0 for g in m.games), game_wins_b=sum(g.winner == 1 for g in m.games),
            started_at=started, finished_at=finished, seconds=float(m.seconds), counted=bool(m.counted),
            meta=m.meta)
        mid = int(conn.execute(matches.insert().values(**values)).inserted_primary_key[0])
        if len(h):
            self._insert_hands(conn, mid, h)
        if m.games:
            conn.execute(games.insert(), [dict(match_id=mid, idx=k, deal=g.deal, seat_a=g.seat_a, seed=g.seed,
                                               winner=g.winner, score_a=g.score_a, score_b=g.score_b,
                                               hands=g.hands, log=g.log) for k, g in enumerate(m.games)])
        if after is not None:
            after(conn, mid)
        if _KILL_POINT.get("after_hands"):  # tests: a writer killed inside its transaction
            _KILL_POINT["after_hands"]()
        return mid

    def _insert_hands(self, conn: Connection, mid: int, h: HandTable) -> None:
        cols = ("match_id", "idx", *HAND_COLUMNS)
        rows = [(mid, *r) for r in h.rows()]
        if self.dialect == "postgresql":  # COPY: one round trip for the whole match
            raw = conn.connection.driver_connection
            with raw.cursor() as cur, cur.copy(f"COPY hands ({', '.join(cols)}) FROM STDIN") as copy:
                for r in rows:
                    copy.write_row(r)
        else:
            conn.exec_driver_sql(f"INSERT INTO hands ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})",
                                 rows)

    def warm(self) -> None:
        """Compile the statements a match needs (a one-hand match written and rolled back), so that the first
        real match is written at full speed (evaluate.py's writer does this while the matches play)."""
        m = MatchRecord(spec_a="random", spec_b="random", rules={}, seed=0, hands=HandTable(
            *(np.zeros(1, np.int64) for _ in HAND_COLUMNS)), games=[GameRow(0, 0, None, 0, 0, 1)], uid="warm-up",
            kind_a="bot", kind_b="bot")
        with self.engine.connect().execution_options(okgin_write=True) as conn:
            tx = conn.begin()
            try:
                self._record(conn, m)
            finally:
                tx.rollback()

    # -- reading
    def read(self):
        """A connection for reading (no write lock taken)."""
        return self.engine.connect()

    def counts(self) -> dict[str, int]:
        """Rows per table (for reports and tests)."""
        with self.read() as conn:
            return {t.name: int(conn.execute(sa.select(sa.func.count()).select_from(t)).scalar())
                    for t in (agents, matches, hands, games, schema.schedule)}


_KILL_POINT: dict[str, Any] = {}  #: test hook: called inside a match's transaction, before the commit


def _check_record(m: MatchRecord) -> None:
    if m.source not in ("evaluate", "ladder", "web", "api"):
        raise ValueError(f"source must be evaluate, ladder, web or api, got {m.source!r}")
    if m.episode not in ("hand", "game"):
        raise ValueError(f"episode must be 'hand' or 'game', got {m.episode!r}")
    if not isinstance(m.rules, dict):
        raise TypeError(f"rules must be a dict (Rules.to_dict()), got {type(m.rules).__name__}")
    if not isinstance(m.uid, str) or not 1 <= len(m.uid) <= 64:
        raise ValueError(f"uid must be a string of 1-64 characters, got {m.uid!r}")


def _revision(conn: Connection) -> str | None:
    if not sa.inspect(conn).has_table("alembic_version"):
        return None
    return conn.execute(sa.text("SELECT version_num FROM alembic_version")).scalar()


def _insert_ignore(dialect: str, table: sa.Table, keys: Iterable[str]):
    """INSERT ... ON CONFLICT (keys) DO NOTHING: two writers creating one agent both succeed."""
    if dialect == "postgresql":
        from sqlalchemy.dialects.postgresql import insert
    else:
        from sqlalchemy.dialects.sqlite import insert
    return insert(table).on_conflict_do_nothing(index_elements=list(keys))


def _sqlite_setup(engine: Engine) -> None:
    """WAL, a busy timeout, foreign keys, and transactions begun by us: ``BEGIN IMMEDIATE`` for writes
    (a deferred transaction that reads and then writes can fail at once with "database is locked"
    whatever the timeout), a plain ``BEGIN`` for reads."""
    @event.listens_for(engine, "connect")
    def _connect(dbapi_conn, record) -> None:
        dbapi_conn.isolation_level = None  # the driver never begins on its own
        cur = dbapi_conn.cursor()
        cur.execute(f"PRAGMA busy_timeout = {SQLITE_BUSY_MS}")
        cur.execute("PRAGMA journal_mode = WAL")
        cur.execute("PRAGMA synchronous = NORMAL")  # WAL: durable at checkpoints, never corrupt
        cur.execute("PRAGMA foreign_keys = ON")
        cur.close()

    @event.listens_for(engine, "begin")
    def _begin(conn) -> None:
        conn.exec_driver_sql("BEGIN IMMEDIATE" if conn.get_execution_options().get("okgin_write") else "BEGIN")


class _WriteTx:
    """``with store.writing() as conn``: a connection whose transaction commits on a clean exit."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def __enter__(self) -> Connection:
        self.conn = self.engine.connect().execution_options(okgin_write=True)
        self.tx = self.conn.begin()
        return self.conn

    def __exit__(self, exc_type, exc, tb) -> None:
        try:
            if exc_type is None:
                self.tx.commit()
            else:
                self.tx.rollback()
        finally:
            self.conn.close()
