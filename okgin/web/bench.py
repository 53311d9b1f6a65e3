"""Measure the web table through its HTTP API: move latency, page load, many clients, the first start.

    python -m okgin.web.bench latency --moves 1000 --opponent expert
    python -m okgin.web.bench load --clients 20 --seconds 60 --opponent random
    python -m okgin.web.bench load --clients 20 --seconds 60 --replays 4   # beside 4 long replays
    python -m okgin.web.bench first-move --fresh     # a fresh install: numba's cache empty

Each command starts ``python -m okgin.play --web`` in a subprocess on a free port of 127.0.0.1 (so
the server does not share this process's interpreter lock with the clients) and talks to it over
HTTP with httpx, as the page does. ``latency`` times every move (one POST .../actions: the human's
move and the bot's reply), plus page loads (``GET /`` and its three files); ``load`` runs N client
threads, each playing one-hand games back to back with a simple policy, and counts errors and games
that did not finish or did not reach the results file; with ``--replays R``, R more threads replay a
10,000-move log page by page over and over while a probe times ``GET /api/config`` every 0.1 s.
``first-move`` times a server's start (to its URL line), the page load and the first game's first
move; ``--fresh`` gives the server an empty numba cache (``NUMBA_CACHE_DIR``), as after an install.
Figures are in docs/play.md.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from contextlib import contextmanager
from typing import Iterator

import numpy as np

RANKS = "A23456789TJQK"


def choose(view: dict, rng: np.random.Generator) -> int | str:
    """A quick scripted player: next hand; knock when it may; shed the highest deadwood card; else draw/take/pass."""
    if view["status"] == "hand_over":
        return "next"
    legal = view["legal"]
    knocks = [a for a in legal if a["kind"] == "knock"]
    if knocks:
        return knocks[0]["id"]
    discards = [a for a in legal if a["kind"] == "discard"]
    if discards:
        dead = {c["card"] for c in view["hand"]["deadwood_cards"]}
        pref = [a for a in discards if a["card"] in dead] or discards
        return max(pref, key=lambda a: (RANKS.index(a["card"][0]), a["id"]))["id"]
    return int(rng.choice([a["id"] for a in legal]))


@contextmanager
def web_server(opponent: str, results: str, extra: list[str] | None = None,
               env: dict | None = None) -> Iterator[tuple[str, dict]]:
    """``python -m okgin.play --web`` on a free port; yields (its URL, timings) once it answers.

    timings: ``ready_s``, seconds from the start to the server's URL line (it compiles first).
    """
    import httpx

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    cmd = [sys.executable, "-m", "okgin.play", "--web", "--port", str(port), "--opponent", opponent,
           "--results", results, *(extra or [])]
    t0 = time.perf_counter()
    errors = tempfile.TemporaryFile("w+")  # a file, not a pipe: nothing blocks the server if it writes much
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=errors, text=True, env={**os.environ, **(env or {})})
    url = f"http://127.0.0.1:{port}"
    timings: dict = {}
    try:
        for line in proc.stdout:  # 'Starting the table ...', 'Ready in ...', then the URL
            if "table at http" in line:
                timings["ready_s"] = round(time.perf_counter() - t0, 2)
                threading.Thread(target=proc.stdout.read, daemon=True).start()  # keep draining the pipe
                break
        deadline = time.time() + 60
        while True:
            if proc.poll() is not None:
                errors.seek(0)
                raise RuntimeError(f"the server exited: {errors.read().strip()[-2000:]}")
            try:
                httpx.get(url + "/api/config", timeout=2)
                break
            except httpx.HTTPError:
                if time.time() > deadline:
                    raise RuntimeError("the server did not answer within 60 s of its URL line") from None
                time.sleep(0.05)
        yield url, timings
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
        errors.close()


def _pct(ms: list[float]) -> dict:
    a = np.asarray(ms)
    return {"n": int(len(a)), "median_ms": round(float(np.median(a)), 2),
            "p99_ms": round(float(np.percentile(a, 99)), 2), "max_ms": round(float(a.max()), 2)}


def latency(moves: int, opponent: str, seed: int) -> dict:
    """Time ``moves`` moves (POST .../actions) against ``opponent`` and 50 page loads."""
    import httpx

    rng = np.random.default_rng(seed)
    times: list[float] = []
    with tempfile.TemporaryDirectory() as tmp, web_server(opponent, os.path.join(tmp, "r.jsonl")) as (url, _), \
            httpx.Client(base_url=url, timeout=30) as c:
        loads = []
        for k in range(51):
            t0 = time.perf_counter()
            for path in ("/", "/static/app.js", "/static/style.css", "/api/config"):
                c.get(path).raise_for_status()
            if k:  # the first load warms the server up
                loads.append((time.perf_counter() - t0) * 1000)
        g = c.post("/api/games", json={"seed": seed}).json()
        c.post(f"/api/games/{g['id']}/actions", json={"action": choose(g, rng)})  # warm-up move (JIT, caches)
        g = c.get(f"/api/games/{g['id']}").json()
        game_no = 0
        while len(times) < moves:
            if g["status"] == "game_over":
                game_no += 1
                g = c.post("/api/games", json={"seed": seed + game_no}).json()
                continue
            action = choose(g, rng)
            t0 = time.perf_counter()
            r = c.post(f"/api/games/{g['id']}/actions", json={"action": action})
            dt = (time.perf_counter() - t0) * 1000
            r.raise_for_status()
            g = r.json()
            if action != "next":
                times.append(dt)
    return {"opponent": opponent, "moves": _pct(times), "page_load": _pct(loads), "games": game_no + 1}


def long_log(moves: int, seed: int = 0) -> dict:
    """A random-against-random game log of ``moves`` moves (a game to 10,000 points, stopped there)."""
    import okgin_agents as agents

    from okgin.human_table import Rules, Table

    t = Table(Rules(target_score=10000), False, seed, ("random A", "random B"), ("random", "random"))
    bots = [agents.make("random", seed=seed + k) for k in (1, 2)]
    while t.moves < moves and not t.finished:
        t.step(int(bots[t.current].act(t.out.observation, t.out.legal_action_mask)[0]))
    return t.log_dict("watch")


def _player(url: str, stop: float, rng: np.random.Generator, stats: dict, lock: threading.Lock) -> None:
    """One client playing one-hand games back to back until ``stop``."""
    import httpx

    with httpx.Client(base_url=url, timeout=60) as c:
        while time.time() < stop:
            r = c.post("/api/games", json={"hand_only": True})
            n, err, moves = 1, None, 0
            g = r.json() if r.status_code == 201 else None
            if g is None:
                err = f"create: {r.status_code} {r.text[:200]}"
            while err is None and g["status"] != "game_over":
                r = c.post(f"/api/games/{g['id']}/actions", json={"action": choose(g, rng)})
                n += 1
                moves += 1
                if r.status_code != 200:
                    err = f"move: {r.status_code} {r.text[:200]}"
                else:
                    g = r.json()
            with lock:
                stats["requests"] += n
                stats["moves"] += moves
                if err:
                    stats["errors"].append(err)
                elif g["status"] == "game_over":
                    stats["finished"] += 1


def _replayer(url: str, stop: float, body: bytes, stats: dict, lock: threading.Lock) -> None:
    """Replays ``body`` (a long log) page by page, over and over, until ``stop``."""
    import httpx

    with httpx.Client(base_url=url, timeout=120) as c:
        while time.time() < stop:
            t0 = time.perf_counter()
            r = c.post("/api/replays", content=body, headers={"Content-Type": "application/json"})
            took, err = [time.perf_counter() - t0], None
            if r.status_code != 201:
                err = f"replay: {r.status_code} {r.text[:200]}"
            else:
                rep, start = r.json(), len(r.json()["frames"])
                while err is None and start <= rep["moves"] and time.time() < stop:
                    t0 = time.perf_counter()
                    p = c.get(f"/api/replays/{rep['id']}/frames", params={"start": start, "count": 100})
                    took.append(time.perf_counter() - t0)
                    err = None if p.status_code == 200 else f"frames: {p.status_code} {p.text[:200]}"
                    start += 100
            with lock:
                stats["replay_requests_ms"] += [x * 1000 for x in took]
                stats["replays"] += err is None
                stats["answer_bytes_max"] = max(stats["answer_bytes_max"], len(r.content))
                if err:
                    stats["errors"].append(err)


def _probe(url: str, stop: float, out: list) -> None:
    """``GET /api/config`` every 0.1 s: how long another client waits while the others work."""
    import httpx

    with httpx.Client(base_url=url, timeout=60) as c:
        while time.time() < stop:
            t0 = time.perf_counter()
            c.get("/api/config").raise_for_status()
            out.append((time.perf_counter() - t0) * 1000)
            time.sleep(0.1)


def load(clients: int, seconds: float, opponent: str, seed: int, replays: int = 0) -> dict:
    """``clients`` threads play one-hand games for ``seconds`` (beside ``replays`` threads replaying a
    10,000-move log): errors, games finished, games lost, and a probe's GET latency."""
    stats = {"requests": 0, "errors": [], "finished": 0, "moves": 0, "replays": 0, "replay_requests_ms": [],
             "answer_bytes_max": 0}
    lock = threading.Lock()
    body = json.dumps(long_log(10_000, seed)).encode() if replays else b""
    probe: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        results = os.path.join(tmp, "r.jsonl")
        with web_server(opponent, results) as (url, _):
            stop = time.time() + seconds
            threads = [threading.Thread(target=_player, args=(url, stop, np.random.default_rng([seed, k]), stats, lock))
                       for k in range(clients)]
            threads += [threading.Thread(target=_replayer, args=(url, stop, body, stats, lock)) for _ in range(replays)]
            threads.append(threading.Thread(target=_probe, args=(url, stop, probe)))
            t0 = time.time()
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            wall = time.time() - t0
        with open(results) as f:
            recorded = sum(1 for line in f if line.strip())
    out = {"clients": clients, "seconds": round(wall, 1), "opponent": opponent, "requests": stats["requests"],
           "requests_per_s": round(stats["requests"] / wall, 1), "games_finished": stats["finished"],
           "games_in_results_file": recorded, "errors": len(stats["errors"]), "first_errors": stats["errors"][:3],
           "games_lost": stats["finished"] - recorded, "probe_get_config": _pct(probe)}
    if replays:
        out.update(replay_clients=replays, replay_log_bytes=len(body), replays_done=stats["replays"],
                   replay_requests=_pct(stats["replay_requests_ms"]), replay_answer_bytes_max=stats["answer_bytes_max"])
    return out


def first_move(opponent: str, fresh: bool) -> dict:
    """Seconds to a started server (its URL line), then the page's load, first game and first move."""
    import httpx

    with tempfile.TemporaryDirectory() as tmp:
        env = {"NUMBA_CACHE_DIR": os.path.join(tmp, "numba")} if fresh else {}
        with web_server(opponent, os.path.join(tmp, "r.jsonl"), env=env) as (url, timings), \
                httpx.Client(base_url=url, timeout=120) as c:
            t0 = time.perf_counter()
            for path in ("/", "/static/app.js", "/static/style.css", "/api/config"):
                c.get(path).raise_for_status()
            g = c.post("/api/games", json={"seed": 0}).json()
            t1 = time.perf_counter()
            c.post(f"/api/games/{g['id']}/actions", json={"action": g["legal"][0]["id"]}).raise_for_status()
            t2 = time.perf_counter()
    return {"opponent": opponent, "fresh_numba_cache": fresh, "server_ready_s": timings.get("ready_s"),
            "page_and_first_game_ms": round((t1 - t0) * 1000, 1), "first_move_ms": round((t2 - t1) * 1000, 1),
            "first_move_after_page_load_s": round(t2 - t0, 3)}


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(prog="python -m okgin.web.bench", description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="what", required=True)
    a = sub.add_parser("latency", help="median and p99 of moves and page loads")
    a.add_argument("--moves", type=int, default=1000)
    a.add_argument("--opponent", default="expert")
    b = sub.add_parser("load", help="many clients at once")
    b.add_argument("--clients", type=int, default=20)
    b.add_argument("--seconds", type=float, default=60)
    b.add_argument("--opponent", default="random")
    b.add_argument("--replays", type=int, default=0, help="clients replaying a 10,000-move log beside the players")
    f = sub.add_parser("first-move", help="a server's start, then the first page's first move")
    f.add_argument("--opponent", default="expert")
    f.add_argument("--fresh", action="store_true", help="an empty numba cache, as after an install")
    for p in (a, b):
        p.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    before = os.getloadavg()[0]
    if args.what == "latency":
        out = latency(args.moves, args.opponent, args.seed)
    elif args.what == "load":
        out = load(args.clients, args.seconds, args.opponent, args.seed, args.replays)
    else:
        out = first_move(args.opponent, args.fresh)
    out["load_average_1min_before"] = round(before, 2)
    print(json.dumps(out, indent=1))
    return out


if __name__ == "__main__":
    main()
