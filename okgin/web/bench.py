"""Measure the web table through its HTTP API: move latency, page load, and many clients at once.

    python -m okgin.web.bench latency --moves 1000 --opponent expert
    python -m okgin.web.bench load --clients 20 --seconds 60 --opponent random

Each command starts ``python -m okgin.play --web`` in a subprocess on a free port of 127.0.0.1 (so
the server does not share this process's interpreter lock with the clients) and talks to it over
HTTP with httpx, as the page does. ``latency`` times every move (one POST .../actions: the human's
move and the bot's reply), plus page loads (``GET /`` and its three files); ``load`` runs N client
threads, each playing one-hand games back to back with a simple policy, and counts errors and games
that did not finish or did not reach the results file. Figures are in docs/play.md.
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
def web_server(opponent: str, results: str, extra: list[str] | None = None) -> Iterator[str]:
    """``python -m okgin.play --web`` on a free port; yields its URL once it answers."""
    import httpx

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    cmd = [sys.executable, "-m", "okgin.play", "--web", "--port", str(port), "--opponent", opponent,
           "--results", results, *(extra or [])]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.time() + 120
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"the server exited: {proc.stderr.read().strip()}")
            try:
                httpx.get(url + "/api/config", timeout=2)
                break
            except httpx.HTTPError:
                if time.time() > deadline:
                    raise RuntimeError("the server did not answer within 120 s") from None
                time.sleep(0.2)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()


def _pct(ms: list[float]) -> dict:
    a = np.asarray(ms)
    return {"n": int(len(a)), "median_ms": round(float(np.median(a)), 2),
            "p99_ms": round(float(np.percentile(a, 99)), 2), "max_ms": round(float(a.max()), 2)}


def latency(moves: int, opponent: str, seed: int) -> dict:
    """Time ``moves`` moves (POST .../actions) against ``opponent`` and 50 page loads."""
    import httpx

    rng = np.random.default_rng(seed)
    times: list[float] = []
    with tempfile.TemporaryDirectory() as tmp, web_server(opponent, os.path.join(tmp, "r.jsonl")) as url, \
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


def load(clients: int, seconds: float, opponent: str, seed: int) -> dict:
    """``clients`` threads play one-hand games for ``seconds``: errors, games finished, games lost."""
    import httpx

    stats = {"requests": 0, "errors": [], "finished": 0, "unfinished": 0, "moves": 0}
    lock = threading.Lock()
    with tempfile.TemporaryDirectory() as tmp:
        results = os.path.join(tmp, "r.jsonl")
        with web_server(opponent, results) as url:
            stop = time.time() + seconds

            def client(k: int) -> None:
                rng = np.random.default_rng([seed, k])
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

            threads = [threading.Thread(target=client, args=(k,)) for k in range(clients)]
            t0 = time.time()
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            wall = time.time() - t0
        with open(results) as f:
            recorded = sum(1 for line in f if line.strip())
    return {"clients": clients, "seconds": round(wall, 1), "opponent": opponent, "requests": stats["requests"],
            "requests_per_s": round(stats["requests"] / wall, 1), "games_finished": stats["finished"],
            "games_in_results_file": recorded, "errors": len(stats["errors"]), "first_errors": stats["errors"][:3],
            "games_lost": stats["finished"] - recorded}


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
    for p in (a, b):
        p.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    before = os.getloadavg()[0]
    if args.what == "latency":
        out = latency(args.moves, args.opponent, args.seed)
    else:
        out = load(args.clients, args.seconds, args.opponent, args.seed)
    out["load_average_1min_before"] = round(before, 2)
    print(json.dumps(out, indent=1))
    return out


if __name__ == "__main__":
    main()
