"""The ladder's matches as Ray tasks (``okgin-arena run --ray``) on a local Ray of 2 CPUs: every scheduled
match stored once by the driver, a stopped run's claims put back, ratings out; a plug-in bot sandboxed in a
task loses its hands exactly as in a process worker. Without Ray, ``--ray`` says how to install it."""

from __future__ import annotations

import os
import sys

import pytest

pytestmark = pytest.mark.integrations

sa = pytest.importorskip("sqlalchemy", reason="the arena extra: pip install -e '.[arena]'")

from okgin.arena import ladder, schema  # noqa: E402
from okgin.arena.cli import main as arena  # noqa: E402
from okgin.arena.ratings import ratings  # noqa: E402
from okgin.arena.store import Store  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))  # arena_ray_bots.py
BOTS = os.path.join(os.path.dirname(HERE), "arena")  # arena_bots.py
FAST = ladder.Limits(move_seconds=1.0, memory_mb=1536, start_seconds=120)


@pytest.fixture(scope="module")
def ray(tmp_path_factory):
    """A Ray of its own on this machine, its workers able to import the test bots (arena_bots, arena_ray_bots)."""
    ray = pytest.importorskip("ray", reason="Ray is not installed (pip install -e '.[integrations]' in the checkout)")
    saved = {k: os.environ.get(k) for k in ("PYTHONPATH", "OKGIN_TEST_KILL_MARKER")}
    # set before ray.init: the raylet's workers, and the sandboxes they start, inherit them
    os.environ["PYTHONPATH"] = os.pathsep.join([BOTS, HERE] + ([saved["PYTHONPATH"]] if saved["PYTHONPATH"] else []))
    os.environ["OKGIN_TEST_KILL_MARKER"] = str(tmp_path_factory.mktemp("kill") / "killed-once")
    sys.path[:0] = [BOTS, HERE]
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)  # never a running cluster
    yield ray
    ray.shutdown()
    for p in (BOTS, HERE):
        sys.path.remove(p)
    for k, v in saved.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v


def _stored(store):
    with store.read() as conn:
        matches = conn.execute(sa.select(schema.matches.c.uid, schema.matches.c.hands, schema.matches.c.forfeits_a,
                                         schema.matches.c.forfeits_b, schema.matches.c.agent_a_id,
                                         schema.matches.c.agent_b_id)).all()
        scheduled = conn.execute(sa.select(schema.schedule.c.uid, schema.schedule.c.status)).all()
    return matches, scheduled


def test_a_ladder_of_bundled_bots_and_a_hanging_plugin_plays_in_ray_tasks(ray, tmp_path, capsys):
    db = str(tmp_path / "ray.sqlite")
    for name, spec in (("random", "random"), ("simple", "simple"), ("greedy", "greedy"), ("hanger", "arena_bots:Hang")):
        assert arena(["register", "--db", db, name, spec]) == 0
    assert arena(["schedule", "--db", db, "--rounds", "1", "--hands", "4", "--seed", "3"]) == 0
    store = Store(db)
    assert ladder.schedule_counts(store)["pending"] == 6
    # a driver that died holding a match (its pid is gone): the Ray run puts it back and plays it
    job = ladder.claim(store, ladder._worker_id().rsplit(":", 1)[0] + ":999999")
    assert job is not None
    # a run stopped after 2 matches leaves nothing claimed, then a second run finishes the schedule
    assert arena(["run", "--db", db, "--ray", "--workers", "2", "--max-matches", "2", "--move-seconds", "1",
                  "--memory-mb", "1536"]) == 0
    out = capsys.readouterr().out
    assert "put back 1 match(es)" in out and "up to 2 Ray task(s)" in out
    assert ladder.schedule_counts(store) == {"pending": 4, "running": 0, "done": 2}
    assert arena(["run", "--db", db, "--ray", "--move-seconds", "1", "--memory-mb", "1536"]) == 0
    assert ladder.schedule_counts(store) == {"pending": 0, "running": 0, "done": 6}
    matches, scheduled = _stored(store)
    assert sorted(m.uid for m in matches) == sorted(s.uid for s in scheduled)  # every match stored exactly once
    assert len(matches) == 6 and all(m.hands == 4 for m in matches)
    hanger = store.agent("arena_bots:Hang", name="hanger")
    mine = [m.forfeits_a if m.agent_a_id == hanger else m.forfeits_b for m in matches
            if hanger in (m.agent_a_id, m.agent_b_id)]
    assert mine == [4, 4, 4]  # the sandbox's time limit held inside the task: every hand lost
    assert sum(m.forfeits_a + m.forfeits_b for m in matches) == 12  # and the bundled bots forfeited none
    report = ratings(store, _default_rules(), reps=50)
    by_name = {r["agent"]: r for r in report["ratings"]}
    assert set(by_name) == {"random", "simple", "greedy", "hanger"}
    assert report["anchor"] == "random" and by_name["random"]["rating"] == 0
    assert by_name["hanger"]["win_rate"] == 0 and by_name["hanger"]["rating"] < 0
    assert arena(["ratings", "--db", db, "--bootstrap", "20"]) == 0
    assert "greedy" in capsys.readouterr().out
    store.close()


def test_a_killed_task_is_played_again_and_a_failed_one_put_back(ray, tmp_path, capsys):
    """A task whose worker process is killed mid-match is re-run by Ray and its match stored once; a match
    whose task fails (here: an odd hand count that play_match refuses) is pending again, the rest stored."""
    db = str(tmp_path / "kill.sqlite")
    assert arena(["register", "--db", db, "random", "random"]) == 0
    assert arena(["register", "--db", db, "killer", "arena_ray_bots:KillsItsWorker"]) == 0
    assert arena(["schedule", "--db", db, "--rounds", "1", "--hands", "2", "--seed", "5"]) == 0
    store = Store(db)
    ids = [a["id"] for a in ladder.ladder_agents(store)]
    with store.writing() as conn:  # a row no task can play
        conn.execute(schema.schedule.insert().values(uid="bad-hands", agent_a_id=ids[0], agent_b_id=ids[1], rules={},
                                                     seed=1, hands=3, status="pending", created_at=ladder.now()))
    assert arena(["run", "--db", db, "--ray", "--workers", "2"]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "bad-hands" in err and "got 3" in err
    assert "1 ladder match(es) failed in Ray tasks and are pending again" in err
    assert os.path.exists(os.environ["OKGIN_TEST_KILL_MARKER"])  # the worker was killed once
    assert ladder.schedule_counts(store) == {"pending": 1, "running": 0, "done": 1}
    matches, scheduled = _stored(store)
    assert [m.uid for m in matches] == [s.uid for s in scheduled if s.status == "done"]
    assert matches[0].hands == 2 and matches[0].forfeits_a == matches[0].forfeits_b == 0  # whole, no forfeit
    store.close()


def _default_rules() -> dict:
    from okgin_env import Rules

    return Rules().to_dict()


@pytest.mark.parametrize("bot", ["Hog", "Crash", "Illegal"])
def test_a_plugin_in_a_ray_task_loses_as_in_a_process_worker(ray, bot):
    """The same claimed match played by a Ray task and in this process: the same hands and forfeits."""
    job = {"id": 0, "uid": f"same-{bot}", "spec_a": "random", "spec_b": f"arena_bots:{bot}", "name_a": "random",
           "name_b": bot, "rules": {}, "seed": 11, "hands": 4}
    here = ladder.play_claimed(job, FAST)
    there = ray.get(ray.remote(num_cpus=1)(ladder.play_claimed).remote(job, FAST))
    assert there.uid == here.uid == job["uid"]
    assert there.hands.forfeit.tolist() == here.hands.forfeit.tolist() == [1, 1, 1, 1]
    assert there.hands.win.tolist() == here.hands.win.tolist() == [1.0] * 4
    reasons = [f["reason"] for f in there.meta["forfeits"]]
    assert reasons == [f["reason"] for f in here.meta["forfeits"]]
    assert reasons[2:] == ["strikes", "strikes"] and reasons[0] == {"Hog": "error", "Crash": "crash",
                                                                    "Illegal": "illegal"}[bot]
    if bot == "Hog":  # the memory limit, not the machine, stopped it
        assert "memory" in there.meta["forfeits"][0]["detail"].lower()


def test_without_ray_the_option_says_how_to_install_it(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray -> ImportError, as where it is not installed
    db = str(tmp_path / "none.sqlite")
    assert arena(["run", "--db", db, "--ray", "auto"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and 'pip install -e ".[integrations]"' in err
