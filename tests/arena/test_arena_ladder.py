"""The ladder: plug-in bots that hang, crash, answer illegally or run out of memory lose their hands and the
ladder goes on; a stopped ladder resumes without losing or repeating a match; ratings agree with evaluate.py's."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest
from arena_db import db_url, pg_admin_url  # noqa: F401  (fixtures)

sa = pytest.importorskip("sqlalchemy")

from okgin.arena import ladder, schema  # noqa: E402
from okgin.arena.cli import main as arena  # noqa: E402
from okgin.arena.ratings import load_results, rate, ratings, uncertain_pairs  # noqa: E402
from okgin.arena.store import Store  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
FAST = ladder.Limits(move_seconds=1.0, memory_mb=1536, start_seconds=120)


@pytest.fixture(autouse=True)
def bots_importable(monkeypatch):
    """The sandboxes and the workers (fresh interpreters) import the test bots from this folder."""
    monkeypatch.setenv("PYTHONPATH", HERE + os.pathsep + os.environ.get("PYTHONPATH", ""))
    monkeypatch.syspath_prepend(HERE)


@pytest.mark.slow
@pytest.mark.parametrize("bot, reason", [("Hang", "hang"), ("Crash", "crash"), ("Illegal", "illegal"),
                                         ("Hog", "error")])
def test_a_misbehaving_plugin_loses_its_hands_and_the_match_goes_on(bot, reason):
    m = ladder.play_match(f"arena_bots:{bot}", "random", {}, seed=1, num_hands=4, limits=FAST)
    assert m.hands.forfeit.tolist() == [0, 0, 0, 0]  # A (the plug-in) forfeited every hand
    assert m.hands.win.tolist() == [0.0] * 4
    forfeits = m.meta["forfeits"]
    assert [f["reason"] for f in forfeits[:2]] == [reason, reason]
    assert [f["reason"] for f in forfeits[2:]] == ["strikes", "strikes"]  # not asked again after MAX_STRIKES
    if bot == "Hog":
        assert "MemoryError" in forfeits[0]["detail"] or "memory" in forfeits[0]["detail"]
    if bot == "Crash":
        assert "exit code 3" in forfeits[0]["detail"]
    assert all(g.log is not None and g.log["forfeit"]["reason"] == f["reason"] for g, f in zip(m.games, forfeits))


def test_a_match_of_bundled_bots_is_duplicate_and_replayable():
    from okgin.human_table import check_log

    m = ladder.play_match("simple", "greedy", {}, seed=5, num_hands=6)
    assert m.hands.seat_a.tolist() == [0, 0, 0, 1, 1, 1] and m.hands.deal.tolist() == [0, 1, 2, 0, 1, 2]
    assert (m.hands.forfeit == -1).all()
    for g in m.games:
        log = check_log(json.loads(json.dumps(g.log)))
        assert log["finished"] and log["seed"] == g.seed
    # the same deal from both seats: the same deck
    assert m.games[0].log["hands"][0]["deck"] == m.games[3].log["hands"][0]["deck"]


def _matches(store):
    with store.read() as conn:
        return conn.execute(sa.select(schema.matches.c.uid, schema.matches.c.agent_a_id, schema.matches.c.agent_b_id,
                                      schema.matches.c.forfeits_a, schema.matches.c.forfeits_b)).all()


@pytest.mark.slow
def test_a_small_ladder_with_a_hanging_plugin_runs_resumes_and_rates(db_url, capsys):
    assert arena(["register", "--db", db_url, "random", "random"]) == 0
    assert arena(["register", "--db", db_url, "simple", "simple"]) == 0
    assert arena(["register", "--db", db_url, "greedy", "greedy"]) == 0
    assert arena(["register", "--db", db_url, "hanger", "arena_bots:Hang"]) == 0
    assert arena(["schedule", "--db", db_url, "--rounds", "1", "--hands", "4", "--seed", "7"]) == 0
    store = Store(db_url)
    assert ladder.schedule_counts(store)["pending"] == 6
    # a ladder stopped after 2 matches, and a worker that died holding a match
    assert ladder.work(db_url, FAST, max_matches=2) == 2
    job = ladder.claim(store, "this-host-long-gone:999999")
    with store.writing() as conn:  # as if claimed on this machine by a worker that no longer runs
        conn.execute(schema.schedule.update().where(schema.schedule.c.id == job["id"])
                     .values(worker=ladder._worker_id().rsplit(":", 1)[0] + ":999999"))
    assert ladder.schedule_counts(store) == {"pending": 3, "running": 1, "done": 2}
    assert arena(["run", "--db", db_url, "--workers", "2", "--move-seconds", "1", "--memory-mb", "1536"]) == 0
    out = capsys.readouterr().out
    assert "put back 1 match(es)" in out
    assert ladder.schedule_counts(store) == {"pending": 0, "running": 0, "done": 6}
    rows = _matches(store)
    assert len(rows) == 6 and len({r.uid for r in rows}) == 6  # nothing lost, nothing played twice
    hanger = store.agent("arena_bots:Hang", name="hanger")
    assert sum(r.forfeits_a if r.agent_a_id == hanger else r.forfeits_b for r in rows) == 3 * 4
    report = ratings(store, {**__import__("okgin_env").Rules().to_dict()}, reps=100)
    by_name = {r["agent"]: r for r in report["ratings"]}
    assert report["anchor"] == "random" and by_name["random"]["rating"] == 0
    assert by_name["hanger"]["rating"] < 0 < by_name["simple"]["rating"]
    assert by_name["hanger"]["win_rate"] == 0
    assert arena(["ratings", "--db", db_url, "--bootstrap", "50"]) == 0
    assert "hanger" in capsys.readouterr().out
    store.close()


@pytest.mark.slow
def test_store_ratings_of_an_evaluate_run_are_evaluates(db_url, tmp_path):
    from okgin import evaluate

    report = evaluate.main(["--agents", "simple", "greedy", "random", "--hands", "300", "--seed", "4",
                            "--bootstrap", "200", "--no-progress", "--db", db_url])
    with Store(db_url) as store:
        mine = ratings(store, report["rules"], reps=200, seed=4)
    theirs = {r["agent"]: r for r in report["ratings"]}
    assert mine["anchor"] == "random" and len(mine["ratings"]) == 3
    for r in mine["ratings"]:
        t = theirs[r["agent"]]
        assert r["rating"] == pytest.approx(t["rating"], abs=1e-6)
        # the same deals resampled with the same seed: the same intervals
        assert r["rating_ci"] == pytest.approx(t["rating_ci"], abs=1e-6)
        assert r["win_rate"] == pytest.approx(t["win_rate"], abs=1e-9)


def test_uncertain_scheduling_starts_with_pairs_that_never_met(tmp_path):
    store = Store(str(tmp_path / "u.sqlite"))
    ids = [ladder.register(store, n, n) for n in ("random", "simple", "greedy")]
    store.record(ladder.play_match("simple", "random", {}, seed=2, num_hands=2, names=("simple", "random")))
    res = load_results(store, {})
    picked = uncertain_pairs(res, ids, 3)
    assert set(map(frozenset, picked[:2])) == {frozenset((ids[0], ids[2])), frozenset((ids[1], ids[2]))}
    assert ladder.uncertain(store, 4, {}, seed=0, hands=2) == 4
    store.close()


def test_the_command_line_says_what_is_allowed(tmp_path, capsys):
    db = str(tmp_path / "c.sqlite")
    with pytest.raises(SystemExit):
        arena(["schedule", "--db", db, "--rounds", "1", "--hands", "3"])
    assert "--hands must be even" in capsys.readouterr().err
    assert arena(["register", "--db", db, "x", "no_such_bot"]) == 2
    assert "no_such_bot" in capsys.readouterr().err
    assert arena(["schedule", "--db", db, "--rounds", "1"]) == 2
    assert "register at least two" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        arena(["ratings", "--db", "mysql://h/d"])
    assert "unsupported database URL scheme" in capsys.readouterr().err


@pytest.mark.slow
def test_a_language_model_match_through_the_stub_server_is_stored_with_its_illegal_moves(db_url):
    """Ten games (one hand each) of an llm: agent against simple, the stub answering junk and illegal moves
    now and then: every game stored with the model's refused answers and fallbacks in the match's record."""
    stub_mod = pytest.importorskip("okgin_agents.llm_stub")
    pytest.importorskip("openai")
    from okgin_env.agent_specs import is_registered

    if not is_registered("llm"):
        pytest.skip("the llm: agent spec is not registered in this checkout")
    script = ["junk", "illegal", "move", "illegal", "illegal", "illegal"]  # the 4th-6th: a fallback
    with stub_mod.StubServer(script=script) as stub:
        spec = f"llm:stub@{stub.url}#retries=0,reasks=2"
        m = ladder.play_match(spec, "simple", {**__import__("okgin_env").Rules().to_dict()}, seed=3, num_hands=10,
                              names=("stub-model", "simple"))
    with Store(db_url) as store:
        mid = store.record(m)
        with store.read() as conn:
            row = conn.execute(sa.select(schema.matches).where(schema.matches.c.id == mid)).mappings().one()
            kinds = dict(conn.execute(sa.select(schema.agents.c.name, schema.agents.c.kind)).all())
    assert row["hands"] == 10 and row["games"] == 10 and row["forfeits_a"] == 0
    stats = row["meta"]["agent_a"]
    assert stats["refused"] == 5 and stats["fallbacks"] == 1 and 0 < stats["illegal_move_rate"] < 1
    assert kinds == {"stub-model": "model", "simple": "bot"}


def test_results_stored_before_a_rule_option_existed_count_under_its_default(tmp_path):
    """A match stored without a rule option that okgin gained later is rated with the current default rules;
    one with a non-default value, or an option this okgin does not know, is not."""
    from okgin_env import Rules

    full = Rules().to_dict()
    older = dict(list(full.items())[:-1])  # as stored by an okgin that did not have the last option yet
    store = Store(str(tmp_path / "r.sqlite"))
    for k, rules in enumerate([full, older, {**full, "gin_bonus": 20}, {**full, "no_such_option": 1}]):
        store.record(ladder.play_match("simple", "random", rules if k != 3 else full, seed=k, num_hands=2,
                                       uid=f"m{k}"))
        if k == 3:
            with store.writing() as conn:
                conn.execute(schema.matches.update().where(schema.matches.c.uid == "m3")
                             .values(rules=rules, rules_key=json.dumps(rules, sort_keys=True, separators=(",", ":"))))
    assert ratings(store, full, reps=0)["hands"] == 2 * 2
    assert ratings(store, {**full, "gin_bonus": 20}, reps=0)["hands"] == 2
    store.close()
