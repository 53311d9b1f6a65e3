"""What evaluate.py and the web table write into the results store (``okgin.arena.store``).

* ``evaluation_records``: an evaluate.py ``--agents`` run's matches, one record per pair for its hands
  and one for its games, every hand and game with its seat, deal and outcome. The pairs of one run
  played the same deals (one ``deal_set``), so the store's ratings resample them together.
* ``web_record``: a person's game against a bot (``okgin.web``), the person stored as ``person:NAME``
  and the game's log kept for the replay view.
"""

from __future__ import annotations

import hashlib
from datetime import datetime, timedelta, timezone
from typing import Any, Sequence

import numpy as np

from okgin.arena.match import GameRow, HandTable, MatchRecord, agent_kind

PERSON_PREFIX = "person:"


def _run_uid(*parts: Any) -> str:
    """A match's uid from what identifies it (a retried write of the same match is stored once)."""
    return hashlib.sha256(repr(parts).encode()).hexdigest()[:32]


def evaluation_records(specs: Sequence[str], names: Sequence[str], pairs: Sequence[tuple[int, int]], seed: int,
                       duplicate: bool, rules: dict, hand_matches: Sequence[tuple[int, int, Any, Any]],
                       game_matches: Sequence[tuple[int, int, Any, Any]], agent_seeds: Sequence[Sequence[int]],
                       run_id: str) -> list[MatchRecord]:
    """One ``MatchRecord`` per pair and kind (hands, games) of an evaluate.py run.

    ``hand_matches``: (i, j, MatchResult, HandRows); ``game_matches``: (i, j, GameMatchResult, GameRows);
    ``agent_seeds[p]``: pair p's (A's, B's) agent seeds; ``run_id``: one string per run (its uids).
    """
    out = []
    pair_no = {pair: p for p, pair in enumerate(pairs)}
    kinds = [agent_kind(s) for s in specs]  # here, where the agent registry is loaded: the writer needs no bots
    for i, j, result, rows in hand_matches:
        p = pair_no[(i, j)]
        n = len(rows.win)
        voids = np.asarray(rows.void, bool)
        win = np.asarray(rows.win, np.float64)
        table = HandTable(game=np.arange(n), deal=rows.deal_id, seat_a=rows.a_player, win=win,
                          points=np.rint(rows.points).astype(np.int64), void=voids, knocker=rows.knocker,
                          gin=rows.gin, undercut=rows.undercut, forfeit=np.full(n, -1, np.int8))
        out.append(MatchRecord(
            spec_a=specs[i], spec_b=specs[j], kind_a=kinds[i], kind_b=kinds[j], rules=rules, seed=seed, hands=table,
            source="evaluate",
            episode="hand", duplicate=duplicate, deal_set=f"evaluate:hands:{seed}:{n}:{int(duplicate)}:{rules_tag(rules)}",
            agent_seeds=agent_seeds[p], uid=_run_uid(run_id, "hands", i, j), seconds=result.seconds,
            started_at=datetime.now(timezone.utc) - timedelta(seconds=result.seconds),
            meta={"display_names": [names[i], names[j]], "hands_per_s": result.hands_per_s,
                  "evaluate_run": run_id}))
    for i, j, result, rows in game_matches:
        p = pair_no[(i, j)]
        win = np.asarray(rows.win)
        winner = np.where(win == 1, 0, np.where(win == 0, 1, -1))
        game_rows = [GameRow(deal=d, seat_a=s, winner=None if w < 0 else w, score_a=a, score_b=b, hands=h)
                     for d, s, w, a, b, h in zip(rows.deal_id.tolist(), rows.a_player.tolist(), winner.tolist(),
                                                 np.rint(rows.scores[:, 0]).astype(int).tolist(),
                                                 np.rint(rows.scores[:, 1]).astype(int).tolist(),
                                                 rows.hands.astype(int).tolist())]
        empty = HandTable(*(np.zeros(0, np.int64) for _ in range(10)))
        out.append(MatchRecord(
            spec_a=specs[i], spec_b=specs[j], kind_a=kinds[i], kind_b=kinds[j], rules=rules, seed=seed + 1,
            hands=empty, games=game_rows,
            source="evaluate", episode="game", duplicate=duplicate,
            deal_set=f"evaluate:games:{seed + 1}:{len(win)}:{int(duplicate)}:{rules_tag(rules)}",
            agent_seeds=agent_seeds[p], uid=_run_uid(run_id, "games", i, j), seconds=result.seconds,
            meta={"display_names": [names[i], names[j]], "evaluate_run": run_id}))
    return out


def rules_tag(rules: dict) -> str:
    """A short tag of a rule set (matches of one seed under different rules dealt the same cards but are
    different deals for the bootstrap)."""
    from okgin.arena.match import rules_key

    return hashlib.sha256(rules_key(rules).encode()).hexdigest()[:8]


# ----------------------------------------------------------------------------- the web table

def person_spec(name: str) -> str:
    return PERSON_PREFIX + name


def web_record(record: dict, log: dict, person: str, uid: str) -> MatchRecord:
    """A person's game on the web table (``HumanGame.record()``, the person is player 0) and its log."""
    hands = record["hands"]
    n = len(hands)
    winner = np.array([-1 if h["winner"] is None else h["winner"] for h in hands], np.int64)
    void = np.array([bool(h["void"]) for h in hands])
    knocker = np.array([-1 if h["knocker"] is None else h["knocker"] for h in hands], np.int64)
    pts = np.array([h["points"][0] - h["points"][1] for h in hands], np.int64) if n else np.zeros(0, np.int64)
    table = HandTable(game=np.zeros(n, np.int64), deal=np.arange(n), seat_a=np.zeros(n, np.int64),
                      win=np.where(void, 0.5, (winner == 0).astype(np.float64)), points=pts, void=void,
                      knocker=knocker, gin=np.array([bool(h["gin"]) for h in hands]),
                      undercut=np.array([bool(h["undercut"]) for h in hands]), forfeit=np.full(n, -1))
    final = record.get("final_scores") or [0, 0]
    game = GameRow(deal=0, seat_a=0, winner=record.get("winner"), score_a=int(final[0]), score_b=int(final[1]),
                   hands=n, seed=int(record["seed"]), log=log)
    seconds = float(record.get("seconds") or 0.0)
    return MatchRecord(
        spec_a=person_spec(person), spec_b=record["spec"], name_b=None, rules=record["rules"], seed=int(record["seed"]),
        hands=table, games=[game], source="web", episode=record["episode"], duplicate=False,
        agent_seeds=None, uid=uid, seconds=seconds, counted=not record.get("abandoned"),
        started_at=datetime.now(timezone.utc) - timedelta(seconds=seconds),
        meta={"abandoned": bool(record.get("abandoned")), "moves": record.get("moves"), "opponent": record["opponent"]})


class StoreWriter:
    """The web table's writer: records games in a worker thread's call (the caller's), errors logged, never
    raised into the game (the JSON log is the record of last resort)."""

    def __init__(self, url: str) -> None:
        from okgin.arena.store import Store

        self.store = Store(url)

    def write(self, record: MatchRecord) -> tuple[bool, str | None]:
        try:
            self.store.record(record)
            return True, None
        except Exception as e:  # noqa: BLE001 - a database that is down must not end a person's game
            return False, f"cannot record the game in the results store: {type(e).__name__}: {str(e)[:200]}"
