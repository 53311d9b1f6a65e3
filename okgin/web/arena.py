"""The web table's side of the arena: people's games into the results store, and the leaderboard.

``play.py --web --db URL`` records every finished or abandoned game a person plays (beside the JSON
results file, which stays as it was) as a match of ``person:NAME`` against the bot, its game log kept
for the replay view; the page sends the name the person typed (``player``), else ``guest``. The
leaderboard page (``/leaderboard``) reads the store through GET routes under ``/api/arena``:

* ``ratings``: everyone's Bradley-Terry rating with its 95% CI (``okgin.arena.ratings``), rules of the
  table; computed at most once per ``RATINGS_TTL`` seconds with ``RATINGS_REPS`` resamples, so a request
  never costs more than one bounded fit;
* ``pairs``: each pair's hands, wins, voids, forfeits and points, at most ``MAX_ROWS`` pairs;
* ``matches?a=ID&b=ID&limit=N``: a pair's latest matches (N <= ``MAX_ROWS``), with their replayable games;
* ``matches/{id}/games/{k}/log``: a stored game's log (the page's replay view opens it);
* ``people/{name}``: a person's record against each bot and their latest games.

Closed like the rest of okgin.web: read-only GETs behind the same Host check and headers, names and
numbers checked (400 saying what is allowed), unknown ids 404, no store configured 404.
"""

from __future__ import annotations

import logging
import re
import threading
import time
import uuid
from typing import Any

from okgin.web.errors import Invalid, NotFound

log = logging.getLogger("okgin.web")

PLAYER_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9 _.-]{0,39}")  #: a person's name: letters, digits, space _ . -
DEFAULT_PLAYER = "guest"
RATINGS_TTL = 30.0  #: seconds a computed rating table is served before it is computed again
RATINGS_REPS = 200  #: bootstrap resamples behind the leaderboard's CIs
MAX_ROWS = 100  #: rows a list answer holds at most
_ID = re.compile(r"[0-9]{1,12}")


def player_name(value: Any) -> str:
    """A request's ``player`` as a stored person's name (``guest`` when absent); 400 when malformed."""
    if value is None:
        return DEFAULT_PLAYER
    if not isinstance(value, str) or PLAYER_NAME.fullmatch(value.strip()) is None:
        raise Invalid("'player' must be a name of 1-40 letters, digits, spaces, '_', '.' or '-' "
                      f"(starting with a letter or digit), got {str(value)[:60]!r}")
    return value.strip()


def _int(text: str | None, name: str, default: int, low: int, high: int) -> int:
    if text is None:
        return default
    if _ID.fullmatch(text) is None or not low <= int(text) <= high:
        raise Invalid(f"'{name}' must be a whole number {low}-{high}, got {text[:20]!r}")
    return int(text)


class ArenaLink:
    """The web table's results store: writes people's games, answers the leaderboard's questions."""

    def __init__(self, url: str, rules: dict) -> None:
        from okgin.arena.store import Store

        self.store = Store(url)
        self.rules = rules
        self._lock = threading.Lock()
        self._ratings: tuple[float, dict] | None = None

    # -- writing
    def save(self, game: Any, person: str, record: dict) -> None:
        """Store a person's finished or abandoned game (``HumanGame.record()`` and its log); a failure is logged,
        never raised into the game."""
        from okgin.arena.record import web_record

        try:
            self.store.record(web_record(record, game.table.log_dict("play"), person, uuid.uuid4().hex))
            with self._lock:
                self._ratings = None  # the next leaderboard request sees the new game
        except Exception as e:  # noqa: BLE001 - the JSON results file still has the game
            log.error("cannot record the game in the results store: %s: %s", type(e).__name__, str(e)[:300])

    # -- reading
    def ratings(self) -> dict:
        from okgin.arena.ratings import ratings

        with self._lock:
            if self._ratings is not None and time.monotonic() - self._ratings[0] < RATINGS_TTL:
                return self._ratings[1]
            report = ratings(self.store, self.rules, reps=RATINGS_REPS, seed=0)
            report["ratings"] = report["ratings"][:MAX_ROWS]
            self._ratings = (time.monotonic(), report)
            return report

    def pairs(self) -> dict:
        import sqlalchemy as sa

        from okgin.arena.schema import agents, matches
        from okgin.arena.ratings import rules_keys

        m = matches
        q = (sa.select(m.c.agent_a_id, m.c.agent_b_id, sa.func.count(), sa.func.sum(m.c.hands),
                       sa.func.sum(m.c.wins_a), sa.func.sum(m.c.wins_b), sa.func.sum(m.c.voids),
                       sa.func.sum(m.c.points_a), sa.func.sum(m.c.forfeits_a), sa.func.sum(m.c.forfeits_b))
             .where(m.c.counted.is_(True), m.c.hands > 0)
             .group_by(m.c.agent_a_id, m.c.agent_b_id))
        with self.store.read() as conn:
            rows = conn.execute(q.where(m.c.rules_key.in_(rules_keys(conn, self.rules)))).all()
            names = dict(conn.execute(sa.select(agents.c.id, agents.c.name)).all())
        pairs: dict[tuple[int, int], dict] = {}
        for a, b, n, hands, wa, wb, voids, pts, fa, fb in rows:
            key, flip = ((a, b), False) if a < b else ((b, a), True)
            p = pairs.setdefault(key, {"a": key[0], "b": key[1], "name_a": names[key[0]], "name_b": names[key[1]],
                                       "matches": 0, "hands": 0, "wins_a": 0, "wins_b": 0, "voids": 0,
                                       "points_a": 0, "forfeits_a": 0, "forfeits_b": 0})
            p["matches"] += int(n)
            p["hands"] += int(hands)
            p["voids"] += int(voids)
            p["wins_a"] += int(wb if flip else wa)
            p["wins_b"] += int(wa if flip else wb)
            p["points_a"] += int(-pts if flip else pts)
            p["forfeits_a"] += int(fb if flip else fa)
            p["forfeits_b"] += int(fa if flip else fb)
        out = sorted(pairs.values(), key=lambda p: -p["hands"])[:MAX_ROWS]
        for p in out:
            p["points_per_hand"] = p["points_a"] / p["hands"] if p["hands"] else 0.0
            p["win_rate"] = (p["wins_a"] + p["voids"] / 2) / p["hands"] if p["hands"] else 0.0
        return {"rules": self.rules, "pairs": out}

    def pair_matches(self, a: str | None, b: str | None, limit: str | None) -> dict:
        import sqlalchemy as sa

        from okgin.arena.schema import games, matches

        ia, ib = _int(a, "a", 0, 1, 10 ** 12), _int(b, "b", 0, 1, 10 ** 12)
        if not ia or not ib:
            raise Invalid("give both agents' ids: matches?a=ID&b=ID (the ids the pairs list shows)")
        n = _int(limit, "limit", 20, 1, MAX_ROWS)
        m = matches
        q = (sa.select(m.c.id, m.c.source, m.c.agent_a_id, m.c.agent_b_id, m.c.hands, m.c.wins_a, m.c.wins_b,
                       m.c.voids, m.c.points_a, m.c.forfeits_a, m.c.forfeits_b, m.c.finished_at, m.c.counted)
             .where(sa.or_(sa.and_(m.c.agent_a_id == ia, m.c.agent_b_id == ib),
                           sa.and_(m.c.agent_a_id == ib, m.c.agent_b_id == ia)))
             .order_by(m.c.id.desc()).limit(n))
        with self.store.read() as conn:
            rows = [dict(r._mapping) for r in conn.execute(q)]
            ids = [r["id"] for r in rows]
            logged = conn.execute(sa.select(games.c.match_id, games.c.idx)
                                  .where(games.c.match_id.in_(ids), games.c.log.is_not(None))
                                  .order_by(games.c.match_id, games.c.idx)).all() if ids else []
        replays: dict[int, list[int]] = {}
        for mid, k in logged:
            replays.setdefault(mid, []).append(k)
        for r in rows:
            r["finished_at"] = r["finished_at"].isoformat() if r["finished_at"] else None
            r["replays"] = replays.get(r["id"], [])[:MAX_ROWS]
        return {"a": ia, "b": ib, "matches": rows}

    def game_log(self, mid: str, k: str) -> dict:
        import sqlalchemy as sa

        from okgin.arena.schema import games

        match_id, idx = _int(mid, "match id", 0, 1, 10 ** 12), _int(k, "game", 0, 0, 10 ** 6)
        with self.store.read() as conn:
            found = conn.execute(sa.select(games.c.log).where(games.c.match_id == match_id,
                                                              games.c.idx == idx)).first()
        if found is None or found[0] is None:
            raise NotFound(f"no stored log for game {idx} of match {match_id}")
        return found[0]

    def person(self, name: str) -> dict:
        import sqlalchemy as sa

        from okgin.arena.record import person_spec
        from okgin.arena.schema import agents, games, matches

        name = player_name(name)
        with self.store.read() as conn:
            me = conn.execute(sa.select(agents.c.id).where(agents.c.spec == person_spec(name))).scalar()
            if me is None:
                raise NotFound(f"no games of {name!r} in the results store yet")
            opp = agents.alias("opp")
            m = matches
            per_bot = conn.execute(
                sa.select(opp.c.name, sa.func.count(), sa.func.sum(m.c.game_wins_a), sa.func.sum(m.c.game_wins_b),
                          sa.func.sum(m.c.hands), sa.func.sum(m.c.wins_a), sa.func.sum(m.c.wins_b),
                          sa.func.sum(m.c.voids), sa.func.sum(m.c.points_a))
                .select_from(m.join(opp, m.c.agent_b_id == opp.c.id))
                .where(m.c.agent_a_id == me, m.c.counted.is_(True)).group_by(opp.c.name)).all()
            recent = conn.execute(
                sa.select(m.c.id, opp.c.name, m.c.game_wins_a, m.c.game_wins_b, m.c.hands, m.c.points_a,
                          m.c.counted, m.c.finished_at, games.c.log.is_not(None))
                .select_from(m.join(opp, m.c.agent_b_id == opp.c.id)
                             .outerjoin(games, sa.and_(games.c.match_id == m.c.id, games.c.idx == 0)))
                .where(m.c.agent_a_id == me).order_by(m.c.id.desc()).limit(20)).all()
        return {
            "player": name,
            "opponents": [{"opponent": o, "games": int(n), "won": int(gw or 0), "lost": int(gl or 0),
                           "hands": int(h or 0), "hands_won": int(hw or 0), "hands_lost": int(hl or 0),
                           "voids": int(v or 0), "points_per_hand": float(p or 0) / float(h) if h else 0.0}
                          for o, n, gw, gl, h, hw, hl, v, p in per_bot],
            "recent": [{"id": mid, "opponent": o, "won": bool(gw), "lost": bool(gl), "hands": int(h),
                        "points": int(p), "abandoned": not c, "finished_at": f.isoformat() if f else None,
                        "replay": bool(has_log)}
                       for mid, o, gw, gl, h, p, c, f, has_log in recent],
        }


def routes(link_of) -> list:
    """The leaderboard page and its GET routes; ``link_of()`` is the table's ``ArenaLink`` or None."""
    from starlette.concurrency import run_in_threadpool
    from starlette.requests import Request
    from starlette.responses import FileResponse
    from starlette.routing import Route

    from okgin.web.handlers import STATIC_DIR, guarded

    def link():
        arena = link_of()
        if arena is None:
            raise NotFound("this table keeps no results store: start it with play.py --web --db URL")
        return arena

    async def page(request: Request):
        return FileResponse(STATIC_DIR / "leaderboard.html", headers={"Cache-Control": "no-cache"})

    async def ratings(request: Request):
        return 200, await run_in_threadpool(lambda: link().ratings())

    async def pairs(request: Request):
        return 200, await run_in_threadpool(lambda: link().pairs())

    async def pair_matches(request: Request):
        q = request.query_params
        return 200, await run_in_threadpool(lambda: link().pair_matches(q.get("a"), q.get("b"), q.get("limit")))

    async def game_log(request: Request):
        p = request.path_params
        return 200, await run_in_threadpool(lambda: link().game_log(p["mid"], p["k"]))

    async def person(request: Request):
        return 200, await run_in_threadpool(lambda: link().person(request.path_params["name"]))

    return [
        Route("/leaderboard", page),
        Route("/api/arena/ratings", guarded(ratings)),
        Route("/api/arena/pairs", guarded(pairs)),
        Route("/api/arena/matches", guarded(pair_matches)),
        Route("/api/arena/matches/{mid}/games/{k}/log", guarded(game_log)),
        Route("/api/arena/people/{name}", guarded(person)),
    ]
