"""The results store on SQLite and PostgreSQL: schema and migrations, one match per transaction, a killed
writer, concurrent writers, agents and weights, and evaluate.py --db."""

from __future__ import annotations

import json
import multiprocessing as mp
import os
import signal
import subprocess
import sys

import numpy as np
import pytest
from arena_db import db_url, pg_admin_url  # noqa: F401  (fixtures)

sa = pytest.importorskip("sqlalchemy")

from okgin.arena import schema  # noqa: E402
from okgin.arena.store import (  # noqa: E402
    GameRow,
    HandTable,
    MatchRecord,
    Store,
    resolve_url,
    weights_sha256,
)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RULES = {"knock_limit": "upcard", "gin_bonus": 25}


def hand_table(n: int, seed: int = 0) -> HandTable:
    rng = np.random.default_rng(seed)
    win = rng.choice([0.0, 0.5, 1.0], n)
    return HandTable(game=np.arange(n), deal=np.arange(n) % max(1, n // 2), seat_a=np.arange(n) % 2, win=win,
                     points=np.where(win == 1, 20, np.where(win == 0, -15, 0)), void=win == 0.5,
                     knocker=np.where(win == 0.5, -1, 0), gin=np.zeros(n, bool), undercut=np.zeros(n, bool),
                     forfeit=np.full(n, -1))


def a_match(n: int = 10, a: str = "simple", b: str = "random", uid: str | None = None, seed: int = 0) -> MatchRecord:
    m = MatchRecord(spec_a=a, spec_b=b, rules=RULES, seed=seed, hands=hand_table(n, seed),
                    games=[GameRow(deal=0, seat_a=0, winner=0, score_a=100, score_b=30, hands=n)])
    if uid:
        m.uid = uid
    return m


def test_the_schema_is_alembics_head_and_matches_the_tables(db_url):
    from alembic.autogenerate import compare_metadata
    from alembic.config import Config
    from alembic.migration import MigrationContext
    from alembic.script import ScriptDirectory

    from okgin.arena.store import MIGRATIONS

    cfg = Config()
    cfg.set_main_option("script_location", MIGRATIONS)
    assert ScriptDirectory.from_config(cfg).get_current_head() == schema.SCHEMA_REVISION
    store = Store(db_url)
    assert store.revision() == schema.SCHEMA_REVISION
    with store.engine.connect() as conn:
        diffs = compare_metadata(MigrationContext.configure(conn), schema.metadata)
    assert diffs == [], f"the migrations and okgin/arena/schema.py disagree: {diffs}"
    Store(db_url).close()  # opening an up-to-date store again changes nothing
    store.close()


def test_a_match_is_stored_once_with_its_hands_and_games(db_url):
    with Store(db_url) as store:
        m = a_match(12, uid="match-1")
        mid = store.record(m)
        assert store.record(m) == mid  # the same uid again: stored once
        assert store.counts() == {"agents": 2, "matches": 1, "hands": 12, "games": 1, "schedule": 0}
        with store.read() as conn:
            row = conn.execute(sa.select(schema.matches).where(schema.matches.c.id == mid)).mappings().one()
            stored = conn.execute(sa.select(schema.hands.c.win, schema.hands.c.points)
                                  .where(schema.hands.c.match_id == mid).order_by(schema.hands.c.idx)).all()
        assert row["rules"] == RULES and row["hands"] == 12 and row["games"] == 1 and row["game_wins_a"] == 1
        assert row["wins_a"] == int((m.hands.win == 1).sum()) and row["voids"] == int(m.hands.void.sum())
        assert [w for w, _ in stored] == m.hands.win.tolist()
        assert sum(p for _, p in stored) == row["points_a"]


def test_agents_names_specs_and_weights(db_url, tmp_path):
    weights = tmp_path / "net.pt"
    weights.write_bytes(b"weights v1")
    spec = f"ppo:{weights}"
    with Store(db_url) as store:
        first = store.agent(spec)
        weights.write_bytes(b"weights v2 (another checkpoint at the same path)")
        os.utime(weights, ns=(1, 10**18))
        second = store.agent(spec)
        assert first != second  # one path, two checkpoints: two agents
        with store.read() as conn:
            rows = conn.execute(sa.select(schema.agents.c.name, schema.agents.c.weights_sha256)
                                .order_by(schema.agents.c.id)).all()
        assert rows[1][1] == weights_sha256(spec) and rows[0][1] != rows[1][1]
        assert rows[1][0] == f"{spec}@{rows[1][1][:12]}"
        store.agent("simple", name="bob")
        with pytest.raises(ValueError, match="'bob' is taken by spec 'simple'"):
            store.agent("expert", name="bob")


def test_bad_urls_say_what_is_allowed():
    with pytest.raises(ValueError, match="unsupported database URL scheme 'mysql'"):
        resolve_url("mysql://x/y")
    with pytest.raises(ValueError, match="SQLite file path or a URL"):
        resolve_url(" ")
    assert resolve_url("postgresql://u@h/d") == "postgresql+psycopg://u@h/d"
    assert resolve_url("x.sqlite").startswith("sqlite:////")


_KILLER = """
import os, signal, sys
sys.path.insert(0, {tests!r})
from test_arena_store import a_match
from okgin.arena import store as st
s = st.Store({url!r})
st._KILL_POINT["after_hands"] = lambda: os.kill(os.getpid(), signal.SIGKILL)
s.record(a_match(5000, uid="killed"))
"""


@pytest.mark.slow  # about a second: the fast loop (-m 'not slow') stays under a minute
def test_a_killed_writer_leaves_no_half_match(db_url):
    with Store(db_url) as store:
        store.record(a_match(4, uid="before"))
    code = _KILLER.format(tests=os.path.dirname(os.path.abspath(__file__)), url=db_url)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    with Store(db_url) as store:
        counts = store.counts()
        assert (counts["matches"], counts["hands"], counts["games"]) == (1, 4, 1)  # nothing of "killed"
        store.record(a_match(6, uid="after"))  # the store takes the next match as usual
        assert store.counts()["matches"] == 2


def _writer(url: str, k: int, matches: int, hands: int) -> None:
    with Store(url) as store:
        for m in range(matches):
            # every writer names the same agents, plus one of its own: concurrent agent creation too
            store.record(a_match(hands, a="simple", b=["random", f"greedy-{k}"][m % 2] if m % 2 else "random",
                                 uid=f"w{k}-m{m}", seed=k * 1000 + m))


@pytest.mark.slow
def test_concurrent_writers_lose_no_row(db_url):
    Store(db_url).close()
    writers, matches, hands = 4, 12, 300
    ctx = mp.get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(db_url, k, matches, hands)) for k in range(writers)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
    assert [p.exitcode for p in procs] == [0] * writers
    with Store(db_url) as store:
        counts = store.counts()
    assert counts["matches"] == writers * matches
    assert counts["hands"] == writers * matches * hands
    assert counts["agents"] == 2 + writers  # simple, random, greedy-k


def _fields(report: dict) -> dict:
    """A report without its timings (which differ between two runs)."""
    drop = {"seconds", "hands_per_s", "cpu_seconds"}
    strip = lambda x: [{k: v for k, v in m.items() if k not in drop} for m in x]  # noqa: E731
    # as JSON text: the 2-game CIs are NaN, which never equals itself as a float
    return json.dumps({**report, "matches": strip(report["matches"]), "games": strip(report["games"])},
                      sort_keys=True)


@pytest.mark.slow
def test_evaluate_db_records_every_match_and_keeps_its_json(db_url, tmp_path):
    from okgin import evaluate

    args = ["--agents", "simple", "greedy", "random", "--hands", "200", "--games", "2", "--seed", "3",
            "--bootstrap", "50", "--no-progress"]
    plain = evaluate.main([*args, "--json", str(tmp_path / "a.json")])
    recorded = evaluate.main([*args, "--json", str(tmp_path / "b.json"), "--db", db_url])
    assert _fields(json.loads((tmp_path / "a.json").read_text())) == _fields(json.loads((tmp_path / "b.json").read_text()))
    assert _fields(plain) == _fields(recorded)
    with Store(db_url) as store:
        counts = store.counts()
        assert counts["matches"] == 6 and counts["hands"] == 3 * 200 and counts["games"] == 3 * 2
        with store.read() as conn:
            rows = conn.execute(sa.select(schema.matches).where(schema.matches.c.episode == "hand")
                                .order_by(schema.matches.c.id)).mappings().all()
    for row, match in zip(rows, recorded["matches"]):
        assert (row["wins_a"], row["wins_b"], row["voids"]) == (match["wins_a"], match["wins_b"], match["voids"])
        assert row["points_a"] == round(match["points_per_hand"] * match["hands"])
        assert row["seed"] == 3 and row["duplicate"] and row["rules"] == recorded["rules"]
    assert len({row["deal_set"] for row in rows}) == 1  # one run's pairs played the same deals


def test_evaluate_db_refuses_what_it_cannot_record(capsys):
    from okgin import evaluate

    with pytest.raises(SystemExit):
        evaluate.main(["--paired", "simple", "greedy", "--opponent", "random", "--hands", "10", "--db", "x.sqlite"])
    assert "--db records the matches of --agents" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        evaluate.main(["--agents", "simple", "random", "--hands", "10", "--db", "mysql://h/d"])
    assert "unsupported database URL scheme 'mysql'" in capsys.readouterr().err


def test_evaluate_stops_when_the_store_cannot_be_opened(capsys, tmp_path):
    """The writer opens the store while the matches play; one that cannot be opened stops the run with one line
    (after the first pair that ends once the writer has failed, or at the end when the matches were quicker)."""
    from okgin import evaluate

    with pytest.raises(SystemExit) as stop:
        evaluate.main(["--agents", "simple", "greedy", "random", "--hands", "10", "--no-progress",
                       "--db", "postgresql+psycopg://nobody@127.0.0.1:1/none", "--json", str(tmp_path / "x.json")])
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert "evaluate.py: error: --db:" in err and "OperationalError" in err


def test_the_sqlite_writer_stores_what_the_store_stores(tmp_path):
    """evaluate.py's SQLAlchemy-free writer and Store.record write the same rows (ids and times aside)."""
    import subprocess as sp

    from okgin.arena import sqlite_writer

    path = str(tmp_path / "w.sqlite")
    with Store(path) as store:
        first = a_match(30, uid="by-store")
        first.meta, first.agent_seeds = {"x": [1, 2]}, (5, 6)
        store.record(first)
    second = a_match(30, uid="by-writer")
    second.meta, second.agent_seeds = {"x": [1, 2]}, (5, 6)
    assert sqlite_writer.record_all(path, [second, second]) == 2  # the same uid twice: stored once
    with Store(path) as store, store.read() as conn:
        rows = conn.execute(sa.select(schema.matches).order_by(schema.matches.c.id)).mappings().all()
        hands = [conn.execute(sa.select(*[c for c in schema.hands.c if c.name != "match_id"])
                              .where(schema.hands.c.match_id == r["id"]).order_by(schema.hands.c.idx)).all()
                 for r in rows]
        games = [conn.execute(sa.select(*[c for c in schema.games.c if c.name != "match_id"])
                              .where(schema.games.c.match_id == r["id"])).all() for r in rows]
        assert store.counts()["agents"] == 2
    assert len(rows) == 2
    skip = {"id", "uid", "deal_set", "started_at", "finished_at"}
    assert {k: v for k, v in rows[0].items() if k not in skip} == {k: v for k, v in rows[1].items() if k not in skip}
    assert hands[0] == hands[1] and games[0] == games[1]
    assert rows[1]["finished_at"].year == rows[0]["finished_at"].year  # SQLAlchemy reads the writer's times
    # and it needs no SQLAlchemy: evaluate.py does not pay for importing it
    code = ("import sys; from okgin.arena import record, sqlite_writer; "
            f"sqlite_writer.connect({path!r}).close(); print('sqlalchemy' in sys.modules)")
    assert sp.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip() == "False"


@pytest.mark.slow
def test_two_evaluate_runs_and_a_web_writer_at_once_lose_no_row(db_url):
    """Two evaluate.py --db runs (SQLite: the in-process sqlite3 writer; PostgreSQL: the writer process) and a
    third process writing as the web table does (Store.record), all at once into one store."""
    Store(db_url).close()
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    runs = [subprocess.Popen([sys.executable, "-m", "okgin.evaluate", "--agents", "simple", "greedy", "random",
                              "--hands", "300", "--seed", str(k), "--no-progress", "--bootstrap", "0", "--db", db_url],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env) for k in (1, 2)]
    web = mp.get_context("spawn").Process(target=_writer, args=(db_url, 9, 20, 50))
    web.start()
    errors = [r.communicate(timeout=600)[1] for r in runs]
    web.join(300)
    assert [r.returncode for r in runs] == [0, 0], errors
    assert web.exitcode == 0
    with Store(db_url) as store:
        counts = store.counts()
    assert counts["matches"] == 2 * 3 + 20
    assert counts["hands"] == 2 * 3 * 300 + 20 * 50
