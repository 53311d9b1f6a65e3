"""The web table with a results store: a person's games recorded (JSON results file unchanged), the
leaderboard's API (bounded, read-only, 4xx on bad input) and its page in a real chromium (Playwright)."""

from __future__ import annotations

import json
import os
import shutil

import numpy as np
import pytest
from arena_db import db_url, pg_admin_url  # noqa: F401  (fixtures)
from support import serve_in_thread

sa = pytest.importorskip("sqlalchemy")
pytest.importorskip("starlette")
pytest.importorskip("httpx")

from starlette.testclient import TestClient  # noqa: E402

from okgin.arena import ladder, schema  # noqa: E402
from okgin.arena.store import Store  # noqa: E402
from okgin.web import WebConfig, create_app  # noqa: E402

BASE = "http://127.0.0.1:8000"


def _client(tmp_path, db: str | None, **kw) -> TestClient:
    cfg = dict(opponent="random", allow=("simple",), results=str(tmp_path / "r.jsonl"), db=db)
    cfg.update(kw)
    return TestClient(create_app(WebConfig(**cfg)), raise_server_exceptions=False, base_url=BASE)


def _choose(view: dict, rng: np.random.Generator) -> int:
    legal = view["legal"]
    knocks = [a for a in legal if a["kind"] == "knock"]
    if knocks:
        return knocks[0]["id"]
    discards = [a for a in legal if a["kind"] == "discard"]
    if discards:
        return max(discards, key=lambda a: ("A23456789TJQK".index(a["card"][0]), a["id"]))["id"]
    return int(rng.choice([a["id"] for a in legal]))


def play_a_game(c, player: str | None = "alice", seed: int = 11, **body) -> dict:
    """A person's whole game (one hand) through the API."""
    rng = np.random.default_rng(seed)
    r = c.post("/api/games", json={"hand_only": True, "seed": seed, **({"player": player} if player else {}),
                                   **body})
    assert r.status_code == 201, r.text
    view = r.json()
    for _ in range(500):
        if view["status"] == "game_over":
            return view
        action = "next" if view["status"] == "hand_over" else _choose(view, rng)
        r = c.post(f"/api/games/{view['id']}/actions", json={"action": action})
        assert r.status_code == 200, r.text
        view = r.json()
    raise AssertionError("the game did not end")


def test_a_persons_game_goes_to_the_store_and_the_file_stays_as_it_was(db_url, tmp_path):
    with _client(tmp_path, db_url) as c:
        assert c.get("/api/config").json()["arena"] is True
        play_a_game(c, "alice")
    line = json.loads((tmp_path / "r.jsonl").read_text().splitlines()[0])
    (tmp_path / "plain").mkdir()
    with _client(tmp_path / "plain", None) as c:
        assert c.get("/api/config").json()["arena"] is False
        play_a_game(c, None)  # no store: the page sends no name
    plain = json.loads((tmp_path / "plain" / "r.jsonl").read_text().splitlines()[0])
    assert sorted(line) == sorted(plain) and line["format"] == "okgin-human-results"
    with Store(db_url) as store, store.read() as conn:
        m = conn.execute(sa.select(schema.matches)).mappings().one()
        names = dict(conn.execute(sa.select(schema.agents.c.id, schema.agents.c.spec)).all())
        log = conn.execute(sa.select(schema.games.c.log)).scalar()
    assert names[m["agent_a_id"]] == "person:alice" and names[m["agent_b_id"]] == "random"
    assert m["source"] == "web" and m["counted"] and m["hands"] == len(line["hands"]) == 1
    assert m["seed"] == line["seed"] == 11 and m["rules"] == line["rules"]
    assert log["format"] == "okgin-play-log" and log["finished"]


def test_the_leaderboard_api(db_url, tmp_path):
    with Store(db_url) as store:
        for k, (a, b) in enumerate([("simple", "random"), ("greedy", "random"), ("simple", "greedy")]):
            store.record(ladder.play_match(a, b, {**__import__("okgin_env").Rules().to_dict()}, seed=k, num_hands=4))
    with _client(tmp_path, db_url) as c:
        play_a_game(c, "alice")
        c.post("/api/games/" + c.post("/api/games", json={"player": "alice"}).json()["id"] + "/abandon", json={})
        ratings = c.get("/api/arena/ratings").json()
        assert ratings["anchor"] == "random"
        by = {r["agent"]: r for r in ratings["ratings"]}
        assert set(by) == {"simple", "greedy", "random", "person:alice"} and by["random"]["rating"] == 0
        assert all(len(r["rating_ci"]) == 2 for r in ratings["ratings"])
        pairs = c.get("/api/arena/pairs").json()["pairs"]
        assert len(pairs) == 4 and sum(p["hands"] for p in pairs) == 3 * 4 + 1  # the abandoned game is not counted
        p = next(p for p in pairs if {p["name_a"], p["name_b"]} == {"simple", "random"})
        ms = c.get(f"/api/arena/matches?a={p['a']}&b={p['b']}").json()["matches"]
        assert len(ms) == 1 and ms[0]["replays"] == [0, 1, 2, 3]
        log = c.get(f"/api/arena/matches/{ms[0]['id']}/games/2/log").json()
        r = c.post("/api/replays", json=log)  # the replay view takes it as it is
        assert r.status_code == 201 and r.json()["moves"] > 0
        me = c.get("/api/arena/people/alice").json()
        assert "opponents" in me, me
        assert me["opponents"][0]["opponent"] == "random" and me["opponents"][0]["games"] == 1
        assert [g["abandoned"] for g in me["recent"]] == [True, False] and me["recent"][1]["replay"]
        # refusals: 4xx with a line that says what is allowed
        for path, status, words in [("/api/arena/people/%3Cscript%3E", 400, "'player' must be a name"),
                                    ("/api/arena/people/bob", 404, "no games of 'bob'"),
                                    ("/api/arena/matches?a=x&b=1", 400, "'a' must be a whole number"),
                                    ("/api/arena/matches?a=1", 400, "give both agents' ids"),
                                    (f"/api/arena/matches?a={p['a']}&b={p['b']}&limit=100000", 400, "'limit'"),
                                    ("/api/arena/matches/999999/games/0/log", 404, "no stored log"),
                                    ("/api/arena/matches/1/games/-1/log", 400, "'game' must be")]:
            r = c.get(path)
            assert r.status_code == status and words in r.json()["error"], (path, r.text)
        assert c.post("/api/arena/ratings", json={}).status_code == 405
        assert c.post("/api/games", json={"player": "x" * 41}).status_code == 400
        assert c.get("/api/arena/ratings", headers={"Host": "evil.example"}).status_code == 400
    with _client(tmp_path, None) as c:
        r = c.get("/api/arena/ratings")
        assert r.status_code == 404 and "play.py --web --db URL" in r.json()["error"]


def test_a_store_that_cannot_be_opened_stops_the_table_at_start(tmp_path):
    from okgin.human_table import UsageError

    with pytest.raises(UsageError, match="cannot open the results store"):
        create_app(WebConfig(results=None, db="postgresql+psycopg://nobody@127.0.0.1:1/none"))


# ----------------------------------------------------------------------------- the page in chromium

CHROMIUM = os.environ.get("OKGIN_CHROMIUM", "/usr/bin/chromium")
if not os.path.exists(CHROMIUM) and shutil.which("chromium"):
    CHROMIUM = shutil.which("chromium")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]


@pytest.mark.browser
@pytest.mark.slow
@pytest.mark.skipif(not os.path.exists(CHROMIUM), reason=f"no chromium at {CHROMIUM} (.ci/run installs it)")
def test_the_leaderboard_page_in_chromium(tmp_path):
    sync_api = pytest.importorskip("playwright.sync_api")
    pytest.importorskip("uvicorn")
    db = str(tmp_path / "arena.sqlite")
    with Store(db) as store:
        for k, (a, b) in enumerate([("simple", "random"), ("greedy", "random"), ("simple", "greedy")]):
            store.record(ladder.play_match(a, b, {**__import__("okgin_env").Rules().to_dict()}, seed=k, num_hands=4))
    app = create_app(WebConfig(opponent="random", results=str(tmp_path / "r.jsonl"), db=db))
    with TestClient(app, base_url=BASE) as c:
        play_a_game(c, "alice")
    url, srv, thread = serve_in_thread(app)
    errors: list[str] = []
    try:
        with sync_api.sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            page = browser.new_page(viewport={"width": 1280, "height": 800})
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            page.goto(f"{url}/leaderboard")
            page.wait_for_selector("#leaderboard[data-loading='false']")
            assert page.text_content("#lb-error") == ""
            rows = page.locator("#ratings tbody tr")
            assert rows.count() == 4
            first = rows.nth(0).locator("td")
            assert first.nth(4).text_content().startswith("[")  # the CI column
            names = [rows.nth(k).locator("td").nth(1).text_content() for k in range(4)]
            assert set(names) == {"simple", "greedy", "random", "person:alice"}
            random_row = rows.nth(names.index("random")).locator("td")
            assert random_row.nth(3).text_content() == "0"
            assert "random = 0" in page.text_content("#ratings-note")
            # a pair's matches, and the replay of one of its games in the table's Replay tab
            page.get_by_role("button", name="Matches of simple and random").click()
            page.wait_for_selector("#pair-matches:not([hidden])")
            assert "simple against random" in page.text_content("#pair-matches-title")
            page.locator("#pair-matches-table a", has_text="game 2").click()
            page.wait_for_selector("#replay-controls:not([hidden])")
            assert page.text_content("#replay-pos").startswith("Move 0 of ")
            assert page.text_content("#replay-error") == ""
            page.click("#replay-last")
            page.wait_for_function("() => document.querySelector('#replay-pos').textContent.split(' ')[1] !== '0'")
            # the person's own record, and the name kept for the table's next games
            page.goto(f"{url}/leaderboard")
            page.wait_for_selector("#leaderboard[data-loading='false']")
            page.fill("#me-name", "alice")
            page.click("#me-show")
            page.wait_for_selector("#me-opponents:not([hidden])")
            assert page.locator("#me-opponents tbody tr td").nth(0).text_content() == "random"
            assert page.evaluate("localStorage.getItem('okgin-player')") == "alice"
            page.fill("#me-name", "nobody")
            page.click("#me-show")
            page.wait_for_function("() => document.querySelector('#me-error').textContent !== ''")
            assert "no games of 'nobody'" in page.text_content("#me-error")
            # the table's page links to the leaderboard when it keeps a store
            page.goto(f"{url}/")
            page.wait_for_selector("#leaderboard-link:not([hidden])")
            browser.close()
    finally:
        srv.should_exit = True
        thread.join(10)
    # the one failed load a console shows is the record of 'nobody' (404, said on the page); nothing else
    not_found = [e for e in errors if "status of 404" in e]
    assert len(not_found) == 1 and [e for e in errors if e not in not_found] == [], errors
