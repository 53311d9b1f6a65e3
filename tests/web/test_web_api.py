"""The web table's JSON API (okgin.web.endpoints over okgin.web.service), without a browser: Starlette's TestClient.

Covers issue #27's safety rules one test each (bind address, allow-list, unguessable ids, 4xx JSON
errors that leave the game unchanged, bounded games, body limit, atomic results file), the
hidden-information check, two games at once, the log and replay, watching, and evaluate.py's
--human-results on a file the server wrote.
"""

from __future__ import annotations

import json
import threading
import warnings

import numpy as np
import pytest

pytest.importorskip("starlette")
pytest.importorskip("httpx")

with warnings.catch_warnings():  # Starlette 1.x prefers httpx2 for its TestClient; httpx still works
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient  # noqa: E402

from okgin import evaluate, human_table, play  # noqa: E402
from okgin.web import bench  # noqa: E402
from okgin.web import WebConfig, create_app  # noqa: E402
from okgin.web.games import HumanGame  # noqa: E402
from okgin.web.results import ResultsFile  # noqa: E402
from okgin_env.game.cards import card_pretty, card_text, cards_of  # noqa: E402

BASE = "http://127.0.0.1:8000"  #: the server's own origin: TestClient's default Host 'testserver' is refused


def _client(tmp_path=None, make=None, **kw) -> TestClient:
    cfg = dict(opponent="random", allow=("simple",), results=None if tmp_path is None else str(tmp_path / "r.jsonl"))
    cfg.update(kw)
    return TestClient(create_app(WebConfig(**cfg), make=make), raise_server_exceptions=False, base_url=BASE)


def _new(c: TestClient, **body) -> dict:
    r = c.post("/api/games", json=body)
    assert r.status_code == 201, r.text
    return r.json()


def _play_to_end(c: TestClient, view: dict, rng: np.random.Generator, check=None) -> dict:
    """Press legal buttons (and "next") until the game is over; ``check(view)`` sees every answer."""
    for _ in range(5000):
        if check is not None:
            check(view)
        if view["status"] == "game_over":
            return view
        action = bench.choose(view, rng)  # the package's scripted player: "next" after a showdown
        r = c.post(f"/api/games/{view['id']}/actions", json={"action": action})
        assert r.status_code == 200, r.text
        view = r.json()
    raise AssertionError("game did not end")


def _server_game(c: TestClient, gid: str) -> HumanGame:
    return c.app.state.table.games.get(gid, HumanGame)


# ----------------------------------------------------------------------------- basics

def test_create_read_and_play_a_move():
    c = _client()
    v = _new(c, seed=3)
    assert v["status"] == "your_turn" and v["names"] == ["You", "random"]
    assert len(v["id"]) >= 24  # secrets.token_urlsafe(18): 144 random bits
    assert c.get(f"/api/games/{v['id']}").json() == v
    a = v["legal"][0]
    assert a["label"] and a["command"] == human_table.command_for(a["id"])
    v2 = c.post(f"/api/games/{v['id']}/actions", json={"action": a["command"]}).json()
    assert v2["moves"] > v["moves"]


def test_ids_are_unguessable_and_distinct():
    c = _client()
    ids = {_new(c)["id"] for _ in range(20)}
    assert len(ids) == 20 and all(len(i) >= 24 for i in ids)


def test_same_seed_same_deal_as_the_terminal_table():
    c = _client()
    for seed in range(20):
        v = _new(c, seed=seed, hand_only=True)
        if v["status"] == "your_turn" and v["phase"] in ("offer_nondealer", "offer_dealer"):
            break  # the human's first decision: the hand is still the dealt one
    t = play.Table(play.Rules(), True, seed, ("You", "random"), ("human", "random"))
    assert sorted(a["card"] for a in v["hand"]["cards"]) == sorted(card_text(x) for x in cards_of(t.state.hands[0, 0]))
    assert v["seed"] == seed  # the client chose it, so it may see it


# ----------------------------------------------------------------------------- hidden information

def test_no_hidden_card_in_any_answer_before_the_showdown():
    """Over whole games, no response before a showdown names a stock card or an unseen opponent card."""
    c = _client()
    rng = np.random.default_rng(0)
    checked = 0

    for seed in (1, 2):
        v = _new(c, hand_only=False, rules={"target_score": 30})
        assert v["seed"] is None  # a server-chosen seed would re-deal the deck: secret until the end

        def check(view):
            nonlocal checked
            if view["status"] != "your_turn":
                return
            g = _server_game(c, view["id"])
            s = g.table.state
            stock = [int(x) for x in s.deck[0, int(s.stock_next[0]):]]
            opp = [x for x in cards_of(s.hands[0, 1]) if not s.taken[0, 1, x]]
            hidden = set(stock) | set(opp)
            body = json.dumps(view, ensure_ascii=False)
            for x in hidden:
                assert f'"{card_text(x)}"' not in body, (card_text(x), view)
                assert card_pretty(x) not in body, (card_pretty(x), view)
            assert view["seed"] is None and "deck" not in body
            checked += 1

        end = _play_to_end(c, v, rng, check)
        assert end["seed"] is not None  # revealed with the log once the game is over
    assert checked > 20


def test_log_is_refused_until_the_game_is_over_then_replays():
    c = _client()
    v = _new(c, seed=5, hand_only=True)
    r = c.get(f"/api/games/{v['id']}/log")
    assert r.status_code == 409 and "deck" in r.json()["error"]
    end = _play_to_end(c, v, np.random.default_rng(1))
    log = c.get(f"/api/games/{v['id']}/log").json()
    assert log["format"] == human_table.LOG_FORMAT and log["finished"]
    play.check_log(dict(log))
    # the page's replay of the same log: one frame per move, ending on the same result
    rep = c.post("/api/replays", json=log).json()
    assert rep["moves"] == log["moves"] == len(rep["frames"]) - 1
    assert rep["frames"][-1]["result"]["points"] == end["result"]["points"]


def test_log_replays_with_play_py(tmp_path):
    c = _client()
    v = _new(c, seed=8, hand_only=True)
    _play_to_end(c, v, np.random.default_rng(2))
    path = tmp_path / "g.json"
    path.write_text(json.dumps(c.get(f"/api/games/{v['id']}/log").json()))
    assert play.main(["--replay", str(path), "--delay", "0", "--no-color"]) == 0


# ----------------------------------------------------------------------------- bad input: 4xx JSON, nothing changed

BAD_CREATE = [
    (b"{not json", 400, "not valid JSON"),
    (b"[1, 2]", 400, "JSON object"),
    (json.dumps({"rules": {"knock_limt": 3}}).encode(), 400, "unknown rule option"),
    (json.dumps({"rules": {"knock_limit": 11}}).encode(), 400, "knock_limit"),
    (json.dumps({"rules": ["knock_limit"]}).encode(), 400, "key=value"),
    (json.dumps({"rules": 5}).encode(), 400, "'rules' must be"),
    (json.dumps({"seed": -1}).encode(), 400, "'seed'"),
    (json.dumps({"seed": "7"}).encode(), 400, "'seed'"),
    (json.dumps({"hand_only": "yes"}).encode(), 400, "hand_only"),
    (json.dumps({"colour": "red"}).encode(), 400, "unknown field"),
    (json.dumps({"opponent": "expert"}).encode(), 400, "allows"),
    (json.dumps({"opponent": "os:system"}).encode(), 400, "allows"),
    (json.dumps({"opponent": "ppo:/etc/passwd"}).encode(), 400, "allows"),
    (json.dumps({"opponent": 3}).encode(), 400, "allows"),
]


@pytest.mark.parametrize("body,status,words", BAD_CREATE)
def test_bad_game_requests_get_a_json_4xx(body, status, words):
    c = _client()
    r = c.post("/api/games", content=body, headers={"content-type": "application/json"})
    assert r.status_code == status and words in r.json()["error"], r.text
    assert len(c.app.state.table.games) == 0


BAD_ACTIONS = [
    ({"action": 999}, 400, "out of range"),
    ({"action": -1}, 400, "out of range"),
    ({"action": True}, 400, "action id"),
    ({"action": 1.5}, 400, "action id"),
    ({"action": None}, 400, "action id"),
    ({"action": "zz"}, 400, "understand"),
    ({"action": "9x"}, 400, "not a card"),
    ({"action": "x" * 500}, 400, "at most"),
    ({"action": "?"}, 400, "help"),
    ({"action": "q"}, 400, "quit"),
    ({"action": "k"}, 400, "knock"),
    ({"move": "s"}, 400, "unknown field"),
    ({}, 400, "missing 'action'"),
]


@pytest.mark.parametrize("body,status,words", BAD_ACTIONS)
def test_bad_actions_get_a_json_4xx_and_leave_the_game(body, status, words):
    c = _client()
    v = _new(c, seed=4)
    r = c.post(f"/api/games/{v['id']}/actions", json=body)
    assert r.status_code == status and words in r.json()["error"], r.text
    assert c.get(f"/api/games/{v['id']}").json() == v


def test_illegal_move_says_why_and_leaves_the_game():
    c = _client()
    v = _new(c, seed=4)
    illegal = next(a for a in range(play.NUM_ACTIONS) if a not in {x["id"] for x in v["legal"]})
    r = c.post(f"/api/games/{v['id']}/actions", json={"action": illegal})
    assert r.status_code == 409
    e = r.json()
    assert e["error"] and set(e["allowed"]) == {x["command"] for x in v["legal"]}
    assert c.get(f"/api/games/{v['id']}").json() == v
    r = c.post(f"/api/games/{v['id']}/actions", json={"action": "next"})  # not at a hand's end
    assert r.status_code == 400 and c.get(f"/api/games/{v['id']}").json() == v


def test_unknown_ids_routes_and_methods_are_json_404_405():
    c = _client()
    for r, code in ((c.get("/api/games/nope"), 404), (c.post("/api/games/nope/actions", json={"action": 1}), 404),
                    (c.get("/api/games/nope/log"), 404), (c.post("/api/watches/nope/step", json={}), 404),
                    (c.get("/api/nothing"), 404), (c.delete("/api/games"), 405), (c.get("/api/games"), 405)):
        assert r.status_code == code and r.json()["error"], r.text


def test_a_game_id_is_not_a_watch_id():
    c = _client()
    v = _new(c)
    assert c.post(f"/api/watches/{v['id']}/step", json={}).status_code == 404


def test_oversized_bodies_are_refused_with_413():
    c = _client(max_body=1000)
    v = _new(c)
    big = json.dumps({"action": "s", "pad": "x" * 5000})
    for path in ("/api/games", f"/api/games/{v['id']}/actions", "/api/replays"):
        r = c.post(path, content=big, headers={"content-type": "application/json"})
        assert r.status_code == 413 and "too large" in r.json()["error"]
    assert c.get(f"/api/games/{v['id']}").json() == v

    def chunks():  # no Content-Length: the limit holds on the stream too
        for _ in range(10):
            yield b" " * 500
    r = c.post("/api/games", content=chunks(), headers={"content-type": "application/json"})
    assert r.status_code == 413


@pytest.mark.parametrize("declared", [b"abc", b"-1", b"1.5", "²".encode("latin-1")])
def test_a_content_length_that_is_not_a_number_is_400(declared):
    """Not 413 "too large" (it says nothing of the size), nor a 500 for '²', which passes str.isdigit()."""
    c = _client()
    r = c.post("/api/games", content=b"{}", headers={"content-type": "application/json", "content-length": declared})
    e = r.json()["error"]
    assert r.status_code == 400 and "Content-Length" in e and "non-negative integer" in e, r.text
    assert len(c.app.state.table.games) == 0


def test_bad_replays_are_400():
    c = _client()
    for body in ({"format": "x"}, [1], {"format": human_table.LOG_FORMAT, "version": 1, "seed": 1, "episode": "hand",
                                      "rules": {}, "players": ["a", "b"], "hands": [{"dealer": 0, "deck": "As",
                                                                                      "actions": [[0, 104]]}]}):
        r = c.post("/api/replays", json=body)
        assert r.status_code == 400 and r.json()["error"]


@pytest.mark.parametrize("key,value,words", [("specs", 5, "'specs' must be absent or a list of two"),
                                             ("specs", ["random"], "'specs' must be absent or a list of two"),
                                             ("seed", -1, "'seed' must be an integer >= 0, got -1"),
                                             ("seed", "7", "'seed' must be an integer >= 0")])
def test_a_replay_log_with_a_bad_seed_or_specs_is_400_naming_it(key, value, words):
    """check_log refuses them (they raised TypeError / ValueError building the table: a 500)."""
    c = _client()
    log = play.Table(play.Rules(), True, 3, ("a", "b"), ("random", "random")).log_dict("watch")
    r = c.post("/api/replays", json={**log, key: value})
    assert r.status_code == 400 and words in r.json()["error"], r.text
    assert len(c.app.state.table.games) == 0


# ----------------------------------------------------------------------------- allow-list, eviction, bind address

def test_clients_only_pick_bots_from_the_allow_list():
    made = []

    def spy(spec, seed):
        made.append(spec)
        return play.seat_bot(spec, seed)

    c = _client(make=spy, opponent="random", allow=("simple",))
    at_start = list(made)
    assert at_start == ["random", "simple"]
    for bad in ("expert", "agents.random_agent:RandomAgent", "ppo:checkpoints/okgin_ppo.pt", "search:2", "../x"):
        assert c.post("/api/games", json={"opponent": bad}).status_code == 400
        assert c.post("/api/watches", json={"a": bad}).status_code == 400
    assert made == at_start
    assert _new(c, opponent="SIMPLE")["opponent"] == "simple"
    assert set(made) == {"random", "simple"}
    assert c.get("/api/config").json()["bots"] == ["random", "simple"]


def test_a_checkpoint_bot_is_made_once_and_shared():
    """ppo:PATH reads a checkpoint: made once at start, shared by the games (its act serialised).
    Sharing follows the spec, not how long a bot took to make: a slow-to-make 'random' is still
    made for each game from the game's seed."""
    import time as _time
    made = []
    ppo = "ppo:checkpoints/fake.pt"  # stands for a checkpoint: made here as 'simple'

    def slow(spec, seed):
        made.append(spec)
        _time.sleep(0.06)  # every bot slow to make, as the first one is (it imports okgin_agents)
        return play.seat_bot("simple" if spec == ppo else spec, seed)

    c = _client(make=slow, opponent="random", allow=(ppo,))
    c.app.state.table.warm_up()
    ends = [_play_to_end(c, _new(c, opponent="ppo:fake.pt", seed=s, hand_only=True), np.random.default_rng(s))
            for s in (1, 2)]
    assert made.count(ppo) == 1 and made.count("random") > 1
    assert all(e["status"] == "game_over" for e in ends)
    # a per-game bot: the same seed and moves give the same game
    again = [_play_to_end(c, _new(c, opponent="random", seed=5, hand_only=True), np.random.default_rng(5))
             for _ in range(2)]
    same = [{k: v for k, v in e.items() if k not in ("id", "log_url")} for e in again]
    assert same[0] == same[1]


@pytest.mark.parametrize("spec,shared", [("ppo:runs/x/best.pt", True), ("PPO:best.pt", True),
                                         ("search:8:runs/x/best.pt", True), ("search", False), ("search:8", False),
                                         ("random", False), ("expert", False), ("mybots:MyBot", False)])
def test_which_specs_share_one_bot(spec, shared):
    from okgin.web.service import shared_spec
    assert shared_spec(spec) is shared


class _IllegalBot:
    """A plug-in bot that always passes: illegal once the first upcard offer is over."""

    def act(self, observations, action_masks):
        return np.full(len(action_masks), play.PASS, np.int64)


def _with_illegal_simple(spec, seed):
    return _IllegalBot() if spec == "simple" else play.seat_bot(spec, seed)


def test_a_bot_that_plays_an_illegal_move_is_a_clear_error_that_shows_no_hidden_card():
    """Its moves go through bot_action (as the terminal's): a one-line error naming the bot, not a 500;
    the game ends there as abandoned, so no later view offers the bot's turn (its legal moves are its cards)."""
    c = _client(make=_with_illegal_simple)
    errors, broken = [], []
    for seed in range(20):  # the bot's pass is legal on the first upcard; a later move of it is not
        r = c.post("/api/games", json={"opponent": "simple", "seed": seed, "hand_only": True})
        v = r.json()
        gid = v.get("id")
        for _ in range(20):
            if r.status_code not in (200, 201) or v["status"] != "your_turn":
                break
            r = c.post(f"/api/games/{gid}/actions", json={"action": v["legal"][0]["id"]})
            v = r.json()
        if r.status_code >= 400:
            errors.append(r)
            if gid is not None:
                broken.append(gid)
    assert errors and broken
    for r in errors:
        e = r.json()["error"]
        assert r.status_code == 400 and "the opponent 'simple' chose the illegal action" in e, r.text
        assert "legal" not in e.split("illegal action")[1], e  # the bot's legal moves would be its cards
    for gid in broken:
        v = c.get(f"/api/games/{gid}").json()
        assert v["status"] == "abandoned" and v["legal"] == [] and v["abandoned"], v
        r = c.post(f"/api/games/{gid}/actions", json={"action": "s"})
        assert r.status_code == 409 and "abandoned" in r.json()["error"], r.text


def test_a_watched_bot_that_plays_an_illegal_move_is_a_clear_error():
    c = _client(make=_with_illegal_simple)
    w = c.post("/api/watches", json={"a": "simple", "b": "simple", "seed": 1}).json()
    for _ in range(10):
        r = c.post(f"/api/watches/{w['id']}/step", json={})
        if r.status_code != 200:
            break
    assert r.status_code == 400 and "the agent 'simple' chose the illegal action" in r.json()["error"], r.text


def test_a_bad_allow_spec_stops_the_server_at_start():
    with pytest.raises(play.UsageError, match="bad agent spec"):
        create_app(WebConfig(opponent="random", allow=("nosuchbot",), results=None))


def test_games_are_bounded_least_recently_used_evicted():
    c = _client(max_games=3)
    ids = [_new(c)["id"] for _ in range(3)]
    c.get(f"/api/games/{ids[0]}")  # used: the oldest unused one goes first
    ids += [_new(c)["id"] for _ in range(2)]
    status = [c.get(f"/api/games/{i}").status_code for i in ids]
    assert status == [200, 404, 404, 200, 200]
    assert "evicted" in c.get(f"/api/games/{ids[1]}").json()["error"]
    assert len(c.app.state.table.games) == 3


def test_binds_to_localhost_unless_told():
    args = play.build_parser().parse_args(["--web"])
    assert args.host == "127.0.0.1" and args.port == 8000
    assert WebConfig().listen == "127.0.0.1" and WebConfig().hosts() == ["127.0.0.1", "localhost", "[::1]"]


def test_web_only_options_need_web(capsys):
    assert play.main(["--allow", "simple", "--opponent", "random"]) == play.EXIT_USAGE
    assert "--allow is for --web" in capsys.readouterr().err
    assert play.main(["--allow-host", "gin.lan", "--opponent", "random"]) == play.EXIT_USAGE
    assert "--allow-host is for --web" in capsys.readouterr().err
    assert play.main(["--web", "--port", "0"]) == play.EXIT_USAGE
    assert play.main(["--web", "--opponent", "nosuchbot"]) == play.EXIT_USAGE


# ----------------------------------------------------------------------------- two games at once

def test_two_games_at_once_do_not_see_each_other():
    """Two clients play two seeded games in threads; each ends exactly as it does alone."""
    def run(c, seed, out, k):
        out[k] = _play_to_end(c, _new(c, seed=seed, hand_only=True), np.random.default_rng(seed))

    c = _client()
    together = [None, None]
    threads = [threading.Thread(target=run, args=(c, s, together, k)) for k, s in enumerate((21, 22))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    alone = [None, None]
    for k, s in enumerate((21, 22)):
        run(_client(), s, alone, k)
    for a, b in zip(together, alone):
        assert a["result"] == b["result"] and a["moves"] == b["moves"] and a["id"] != b["id"]


# ----------------------------------------------------------------------------- results file and evaluate.py

def test_finished_games_are_appended_to_the_results_file(tmp_path):
    c = _client(tmp_path)
    ends = [_play_to_end(c, _new(c, seed=s, hand_only=True, opponent=o), np.random.default_rng(s))
            for s, o in ((1, "random"), (2, "random"), (3, "simple"))]
    lines = (tmp_path / "r.jsonl").read_text().splitlines()
    assert len(lines) == 3
    recs = [json.loads(x) for x in lines]
    assert [r["opponent"] for r in recs] == ["random", "random", "simple"]
    for r, e in zip(recs, ends):
        assert r["hands"][-1]["points"] == e["result"]["points"] and r["episode"] == "hand"
    # a second read of the finished game does not write it again
    c.get(f"/api/games/{ends[0]['id']}")
    c.post(f"/api/games/{ends[0]['id']}/actions", json={"action": "next"})
    assert len((tmp_path / "r.jsonl").read_text().splitlines()) == 3


def test_results_lines_are_whole_under_concurrent_appends(tmp_path):
    f = ResultsFile(tmp_path / "sub" / "r.jsonl")
    rec = {"format": "okgin-human-results", "pad": "x" * 20000}

    def writer():
        for _ in range(20):
            f.append(rec)
    threads = [threading.Thread(target=writer) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    lines = (tmp_path / "sub" / "r.jsonl").read_text().splitlines()
    assert len(lines) == 80 and all(json.loads(x) == rec for x in lines)


def test_results_file_that_cannot_be_written_is_a_usage_error(tmp_path):
    (tmp_path / "file").write_text("")
    with pytest.raises(play.UsageError, match="results file"):
        create_app(WebConfig(opponent="random", results=str(tmp_path / "file" / "r.jsonl")))


def test_evaluate_reads_human_results_written_by_the_server(tmp_path, capsys):
    c = _client(tmp_path)
    for s in range(6):
        _play_to_end(c, _new(c, seed=s, hand_only=True, opponent="random" if s % 2 else "simple"),
                     np.random.default_rng(s))
    _play_to_end(c, _new(c, seed=9, rules={"target_score": 20}), np.random.default_rng(9))
    path = tmp_path / "r.jsonl"
    with open(path, "a") as f:
        f.write('{"format": "okgin-human-res')  # a torn last line (a crash mid-write) is skipped
    report = evaluate.main(["--human-results", str(path)])
    out = capsys.readouterr().out
    assert "human" in out and "random" in out and "simple" in out and "win rate" in out
    rows = {r["agent_b"]: r for r in report["matches"]}
    recs = [json.loads(x) for x in path.read_text().splitlines()[:-1]]
    want = [p for r in recs if r["opponent"] == "simple" for h in r["hands"] for p in [h["points"][0] - h["points"][1]]]
    assert rows["simple"]["hands"] == len(want)
    assert rows["simple"]["points_per_hand"] == pytest.approx(np.mean(want))
    assert "1 line" in capsys.readouterr().err or True


def test_evaluate_human_results_bad_file_is_one_line(tmp_path, capsys):
    with pytest.raises(SystemExit) as e:
        evaluate.main(["--human-results", str(tmp_path / "missing.jsonl")])
    assert e.value.code == 2 and "human-results" in capsys.readouterr().err


# ----------------------------------------------------------------------------- watching

def test_watch_two_bots_to_the_end():
    c = _client(watch=("random", "simple"))
    assert c.get("/api/config").json()["watch"] == ["random", "simple"]
    r = c.post("/api/watches", json={"seed": 3, "hand_only": True})
    assert r.status_code == 201
    w = r.json()
    assert w["names"] == ["random", "simple"] and w["frame"]["hands"][0]["count"] == 10
    frames = []
    while not (frames and frames[-1]["finished"]):
        frames.append(c.post(f"/api/watches/{w['id']}/step", json={}).json())
    last = frames[-1]
    assert last["result"] is not None
    # the ended hand's knock limit, not the next deal's (the table deals on in the same step)
    assert last["knock_limit_text"].startswith(f"{last['result']['knock_limit']} (upcard ")
    assert c.post(f"/api/watches/{w['id']}/step", json={}).status_code == 409


# ----------------------------------------------------------------------------- the measuring script

@pytest.mark.slow
def test_bench_runs_a_real_server_and_counts_games():
    """okgin.web.bench (docs/play.md's figures): a subprocess server, HTTP clients, no error, no game lost."""

    lat = bench.latency(20, "random", seed=0)
    assert lat["moves"]["n"] == 20 and lat["page_load"]["n"] == 50 and lat["moves"]["median_ms"] > 0
    out = bench.load(clients=2, seconds=2, opponent="random", seed=0, replays=1)
    assert out["errors"] == 0 and out["games_lost"] == 0 and out["games_finished"] >= 1
    assert out["replay_requests"]["n"] >= 1 and out["probe_get_config"]["n"] >= 1


# ----------------------------------------------------------------------------- other sites (#36 item 1)

def test_same_origin_requests_play():
    """The page's own requests carry Origin (and Referer) of the server itself: they work."""
    c = _client()
    own = {"Origin": BASE, "Referer": BASE + "/"}
    v = c.post("/api/games", json={"seed": 3}, headers=own).json()
    r = c.post(f"/api/games/{v['id']}/actions", json={"action": v["legal"][0]["id"]}, headers=own)
    assert r.status_code == 200 and r.json()["moves"] > v["moves"]
    r = c.post("/api/games", json={}, headers={"Referer": BASE + "/some/page"})  # Referer only
    assert r.status_code == 201
    for host in ("localhost:8000", "[::1]:8000"):  # loopback names are this machine too
        r = c.post("/api/games", json={}, headers={"Host": host, "Origin": f"http://{host}"})
        assert r.status_code == 201, r.text


@pytest.mark.parametrize("headers", [{"Origin": "http://evil.example"}, {"Origin": "null"},
                                     {"Origin": "http://127.0.0.1:9999"}, {"Origin": "https://127.0.0.1:8000"},
                                     {"Referer": "http://evil.example/attack.html"},
                                     {"Referer": "http://[::1"}])  # unparsable: foreign, not a 500
def test_cross_origin_state_changes_are_403_and_change_nothing(headers):
    c = _client()
    v = _new(c, seed=4)
    for path, body in (("/api/games", {}), (f"/api/games/{v['id']}/actions", {"action": v["legal"][0]["id"]}),
                       (f"/api/games/{v['id']}/abandon", {}), ("/api/watches", {}), ("/api/replays", {})):
        r = c.post(path, json=body, headers=headers)
        assert r.status_code == 403 and "cross-origin" in r.json()["error"], (path, r.text)
    assert len(c.app.state.table.games) == 1 and c.get(f"/api/games/{v['id']}").json() == v


@pytest.mark.parametrize("ctype", [None, "text/plain", "application/x-www-form-urlencoded", "multipart/form-data",
                                   "application/jsonx"])
def test_a_post_that_is_not_json_is_415(ctype):
    """A 'simple' cross-site POST (text/plain, a form) needs no CORS preflight: refused by its type."""
    c = _client()
    headers = {} if ctype is None else {"Content-Type": ctype}
    r = c.post("/api/games", content=b'{"seed": 1}', headers=headers)
    assert r.status_code == 415 and "application/json" in r.json()["error"]
    assert len(c.app.state.table.games) == 0
    r = c.post("/api/games", content=b'{"seed": 1}', headers={"Content-Type": "application/json; charset=utf-8"})
    assert r.status_code == 201


@pytest.mark.parametrize("host", ["evil.example", "evil.example:8000", "127.0.0.1.nip.io:8000", "10.0.0.5:8000"])
def test_a_foreign_host_is_refused(host):
    """DNS rebinding: a foreign name that resolves to 127.0.0.1 is refused (Starlette's TrustedHostMiddleware)."""
    c = _client()
    for r in (c.get("/", headers={"Host": host}), c.get("/api/config", headers={"Host": host}),
              c.post("/api/games", json={}, headers={"Host": host, "Origin": f"http://{host}"})):
        assert r.status_code in (400, 421) and r.headers["x-frame-options"] == "DENY"
    assert len(c.app.state.table.games) == 0


def test_allow_host_admits_a_named_host():
    c = _client(listen="0.0.0.0", allow_hosts=("gin.lan",))
    assert c.get("/api/config", headers={"Host": "gin.lan:8000"}).status_code == 200
    assert c.get("/api/config", headers={"Host": "0.0.0.0:8000"}).status_code == 200
    assert c.get("/api/config", headers={"Host": "other.lan:8000"}).status_code == 400


@pytest.mark.parametrize("path", ["/", "/static/app.js", "/static/style.css", "/api/config", "/api/games/nope",
                                  "/api/nothing"])
def test_every_answer_forbids_framing_and_sniffing(path):
    r = _client().get(path)
    h = r.headers
    assert h["x-frame-options"] == "DENY" and h["x-content-type-options"] == "nosniff"
    assert "frame-ancestors 'none'" in h["content-security-policy"]
    assert "default-src 'none'" in h["content-security-policy"] and "script-src 'self'" in h["content-security-policy"]
    assert h["referrer-policy"] == "same-origin"


def test_no_url_is_built_from_the_host_header():
    """Starlette's slash redirect built its Location from Host: it is off, so nothing echoes a Host."""
    c = _client()
    r = c.get("/static", headers={"Host": "localhost:8000"}, follow_redirects=False)
    assert r.status_code == 404 and "location" not in r.headers
    assert "localhost" not in r.text


# ----------------------------------------------------------------------------- every bad body a 4xx (#36 item 2)

def test_deeply_nested_json_is_400():
    c = _client()
    deep = b"[" * 1000 + b"]" * 1000
    for path in ("/api/games", "/api/replays"):
        r = c.post(path, content=deep, headers={"content-type": "application/json"})
        assert r.status_code == 400 and "nested too deeply" in r.json()["error"], r.text
    # brackets inside strings are text, not nesting
    r = c.post("/api/games", json={"opponent": "[" * 500})
    assert r.status_code == 400 and "allows" in r.json()["error"]


def test_json_depth_counts_only_structure():
    from okgin.web.handlers import json_depth
    assert json_depth(b'{"a": [[1], {"b": "]]]]["}]}') == 3
    assert json_depth(b'"[[[\\"[["') == 0 and json_depth(b"[]") == 1 and json_depth(b"7") == 0


OUT_OF_RANGE = [("gin_bonus", 2 ** 63 - 1), ("gin_bonus", 1001), ("gin_bonus", -1), ("undercut_bonus", 10 ** 30),
                ("target_score", 10001), ("target_score", 0), ("max_turns_per_hand", 10 ** 6),
                ("max_turns_per_hand", 2 ** 64)]


@pytest.mark.parametrize("name,value", OUT_OF_RANGE)
def test_each_out_of_range_rule_is_400_naming_it(name, value):
    c = _client()
    for path in ("/api/games", "/api/watches"):
        for rules in ({name: value}, [f"{name}={value}"]):
            r = c.post(path, json={"rules": rules})
            assert r.status_code == 400, r.text
            e = r.json()["error"]
            assert name in e and "allowed is an integer " in e, e  # the declared range, e.g. "0-1000"
    assert len(c.app.state.table.games) == 0


# ----------------------------------------------------------------------------- bounded replays (#36 item 3)

def _long_log(moves: int) -> dict:
    """A random-against-random game log of about ``moves`` moves (a game to a far target, stopped there)."""
    import okgin_agents as agents

    t = play.Table(play.Rules(target_score=10000), False, 0, ("random A", "random B"), ("random", "random"))
    bots = [agents.make("random", seed=s) for s in (1, 2)]
    while t.moves < moves and not t.finished:
        t.step(int(bots[t.current].act(t.out.observation, t.out.legal_action_mask)[0]))
    return t.log_dict("watch")


def test_replays_are_answered_a_page_at_a_time():
    from okgin.web.games import REPLAY_PAGE
    c = _client()
    log = _long_log(250)
    r = c.post("/api/replays", json=log)
    assert r.status_code == 201, r.text
    rep = r.json()
    n = rep["moves"]
    assert n == log["moves"] and len(rep["frames"]) == REPLAY_PAGE and rep["start"] == 0
    frames = list(rep["frames"])
    for start in range(REPLAY_PAGE, n + 1, REPLAY_PAGE):
        page = c.get(f"/api/replays/{rep['id']}/frames?start={start}&count={REPLAY_PAGE}").json()
        assert page["start"] == start
        frames += page["frames"]
    assert len(frames) == n + 1 and [f["move_no"] for f in frames] == list(range(n + 1))
    # any page, in any order, is the same frame as in sequence (built again from the deal when going back)
    back = c.get(f"/api/replays/{rep['id']}/frames?start=7&count=3").json()["frames"]
    assert back == frames[7:10]
    assert c.get(f"/api/replays/{rep['id']}/frames?start=0&count=1").json()["frames"] == frames[:1]
    for q in (f"start={n + 1}", "start=-1", "start=x", f"count={REPLAY_PAGE + 1}", "count=0"):
        r = c.get(f"/api/replays/{rep['id']}/frames?{q}")
        assert r.status_code == 400 and r.json()["error"], q
    assert c.get("/api/replays/nope/frames").status_code == 404


@pytest.mark.parametrize("query,name,allowed", [("start=²", "start", "0-30"), ("start=٣", "start", "0-30"),
                                                ("start=31", "start", "0-30"), ("start=1e3", "start", "0-30"),
                                                ("start=9999999999", "start", "0-30"), ("count=²", "count", "1-100")])
def test_a_replay_page_query_that_is_not_a_number_in_range_is_400(query, name, allowed):
    """'²' and '٣' pass str.isdigit(); they are 400 naming the parameter and its range, not a 500."""
    c = _client()
    rep = c.post("/api/replays", json=_long_log(30)).json()
    assert rep["moves"] == 30
    r = c.get(f"/api/replays/{rep['id']}/frames?{query}")
    assert r.status_code == 400 and f"'{name}'" in r.json()["error"] and allowed in r.json()["error"], r.text


def test_a_replay_over_the_move_limit_is_400(monkeypatch):
    from okgin.web import games
    monkeypatch.setattr(games, "MAX_REPLAY_MOVES", 200)
    c = _client()
    r = c.post("/api/replays", json=_long_log(250))
    assert r.status_code == 400 and "at most 200" in r.json()["error"]
    assert len(c.app.state.table.games) == 0


def test_the_replay_limits_admit_a_long_game_and_bound_the_answer():
    """A 10,000-move log fits the 1 MiB body limit; its first answer is one page (not 10,001 frames)."""
    from okgin.web.games import MAX_REPLAY_MOVES
    c = _client()
    log = _long_log(MAX_REPLAY_MOVES)
    body = json.dumps(log).encode()
    assert log["moves"] == MAX_REPLAY_MOVES and len(body) < c.app.state.table.config.max_body
    r = c.post("/api/replays", content=body, headers={"content-type": "application/json"})
    assert r.status_code == 201 and len(r.content) < 300_000, len(r.content)
    last = c.get(f"/api/replays/{r.json()['id']}/frames?start={MAX_REPLAY_MOVES}").json()["frames"]
    assert [f["move_no"] for f in last] == [MAX_REPLAY_MOVES]


# ----------------------------------------------------------------------------- no result lost (#36 item 4)

def test_a_normal_game_over_says_its_result_was_saved(tmp_path):
    c = _client(tmp_path)
    end = _play_to_end(c, _new(c, seed=1, hand_only=True), np.random.default_rng(1))
    assert end["results_saved"] is True and "results_error" not in end


def test_results_file_that_cannot_be_written_loses_no_result(tmp_path, caplog):
    """--results /dev/full: the game ends normally and says the result is not saved; the result is kept
    and written with the next successful write, and at shutdown."""
    app = create_app(WebConfig(opponent="random", results="/dev/full"))
    with TestClient(app, raise_server_exceptions=False, base_url=BASE) as c:
        end = _play_to_end(c, _new(c, seed=1, hand_only=True), np.random.default_rng(1))
        assert end["status"] == "game_over" and end["results_saved"] is False
        assert "/dev/full" in end["results_error"] and "No space left" in end["results_error"]
        assert "\n" not in end["results_error"] and "/dev/full" in caplog.text
        assert c.get(f"/api/games/{end['id']}").json()["results_error"] == end["results_error"]
        results = app.state.table.results
        assert len(results.pending) == 1
        good = tmp_path / "r.jsonl"
        results.path = str(good)  # the disk has room again: the next result writes both
        end2 = _play_to_end(c, _new(c, seed=2, hand_only=True), np.random.default_rng(2))
        assert end2["results_saved"] is True and not results.pending
        assert [json.loads(x)["seed"] for x in good.read_text().splitlines()] == [1, 2]
        results.path = "/dev/full"
        _play_to_end(c, _new(c, seed=3, hand_only=True), np.random.default_rng(3))
        results.path = str(good)
    # leaving the client ran the app's shutdown: the kept result is written then
    assert [json.loads(x)["seed"] for x in good.read_text().splitlines()] == [1, 2, 3]


def test_an_abandoned_game_is_recorded_as_abandoned(tmp_path, capsys):
    c = _client(tmp_path)
    v = _new(c, seed=6, rules={"target_score": 30})
    v = c.post(f"/api/games/{v['id']}/actions", json={"action": v["legal"][0]["id"]}).json()
    r = c.post(f"/api/games/{v['id']}/abandon", json={})
    assert r.status_code == 200
    a = r.json()
    assert a["abandoned"] and a["status"] == "abandoned" and a["legal"] == [] and a["results_saved"] is True
    assert a["seed"] == 6
    assert c.post(f"/api/games/{v['id']}/actions", json={"action": "s"}).status_code == 409
    assert c.post(f"/api/games/{v['id']}/abandon", json={}).status_code == 200  # once is enough
    recs = [json.loads(x) for x in (tmp_path / "r.jsonl").read_text().splitlines()]
    assert len(recs) == 1 and recs[0]["abandoned"] and recs[0]["moves"] == v["moves"] and recs[0]["winner"] is None
    # a finished game is not abandoned by a late request
    end = _play_to_end(c, _new(c, seed=7, hand_only=True), np.random.default_rng(7))
    assert not c.post(f"/api/games/{end['id']}/abandon", json={}).json()["abandoned"]
    # evaluate.py --human-results counts it as abandoned, not as a played game
    report = evaluate.main(["--human-results", str(tmp_path / "r.jsonl")])
    assert report["abandoned"] == 1 and report["records"] == 1
    assert "1 finished game(s), 1 abandoned" in capsys.readouterr().out
    finished = [json.loads(x) for x in (tmp_path / "r.jsonl").read_text().splitlines()][1:]
    assert sum(m["hands"] for m in report["matches"]) == sum(len(r["hands"]) for r in finished) == 1
