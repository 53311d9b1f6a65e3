"""Ratings of everyone in the results store: a Bradley-Terry fit of every stored hand, with bootstrap CIs.

The same fit and scale as evaluate.py's (``okgin.ratings.bradley_terry``: Elo scale, half a win and half a
loss added per pair, a void hand half a win; ``okgin_trainer.stats.bootstrap_ratings``: percentile
intervals), anchored the same way: the agent whose spec is ``random`` is 0 (else the last agent). The
bootstrap's unit is a deal of a match's ``deal_set``: the pairs of one evaluate.py run played the same
deals and are resampled together, exactly as evaluate.py does, so an evaluate.py run recorded with --db
gets the ratings and intervals it printed; the ladder's matches each draw their own deals.

Only matches with ``counted`` set (not a game a person abandoned) and one rule set enter a fit.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np
import sqlalchemy as sa

from okgin.arena.schema import agents, hands, matches
from okgin.arena.store import Store, rules_key
from okgin.ratings import bradley_terry
from okgin_trainer.stats import BOOTSTRAP_REPS, bootstrap_ratings, percentile_interval


@dataclass
class StoredResults:
    """Every counted hand of one rule set, summed per pair and bootstrap unit."""

    ids: list[int]  #: agent ids, in the order of the arrays below
    names: list[str]
    specs: list[str]
    kinds: list[str]
    pairs: list[tuple[int, int]]  #: (i, j) indices into ``ids``, i < j
    unit_wins: np.ndarray  #: (pairs, units) wins of the pair's first agent (void = half)
    unit_hands: np.ndarray  #: (pairs, units) hands
    pair_points: np.ndarray  #: (pairs,) the first agent's points minus the second's

    @property
    def anchor(self) -> int:
        """The agent rated 0: the one whose spec is ``random`` (as evaluate.py), else the last."""
        return self.specs.index("random") if "random" in self.specs else len(self.specs) - 1


def rules_keys(conn, rules: dict) -> list[str]:
    """The stored ``rules_key`` values that are the rule set ``rules``: each read as ``Rules.from_dict`` reads
    it, so a match stored before a rule option existed counts under that option's default (a key this okgin
    cannot read, an option since removed, matches nothing)."""
    from okgin_env import Rules

    want = rules_key(Rules.from_dict(rules).to_dict())
    keys = []
    for (key,) in conn.execute(sa.select(matches.c.rules_key).distinct()):
        try:
            if rules_key(Rules.from_dict(json.loads(key)).to_dict()) == want:
                keys.append(key)
        except (ValueError, TypeError, KeyError):
            continue
    return keys


def load_results(store: Store, rules: dict, agent_ids: list[int] | None = None) -> StoredResults:
    """The counted hands of ``rules`` (optionally only between ``agent_ids``), summed in the database."""
    m, h = matches.alias("m"), hands.alias("h")
    q = (sa.select(m.c.agent_a_id, m.c.agent_b_id, m.c.deal_set, h.c.deal, sa.func.sum(h.c.win),
                   sa.func.count(), sa.func.sum(h.c.points))
         .select_from(h.join(m, h.c.match_id == m.c.id))
         .where(m.c.counted.is_(True))
         .group_by(m.c.agent_a_id, m.c.agent_b_id, m.c.deal_set, h.c.deal))
    if agent_ids is not None:
        q = q.where(m.c.agent_a_id.in_(agent_ids), m.c.agent_b_id.in_(agent_ids))
    with store.read() as conn:
        rows = conn.execute(q.where(m.c.rules_key.in_(rules_keys(conn, rules)))).all()
        ids = sorted({r[0] for r in rows} | {r[1] for r in rows})
        info = {r.id: r for r in conn.execute(sa.select(agents.c.id, agents.c.name, agents.c.spec, agents.c.kind)
                                              .where(agents.c.id.in_(ids)))} if ids else {}
    empty = np.zeros((0, 0))
    if not rows:
        return StoredResults([], [], [], [], [], empty, empty, np.zeros(0))
    a = np.array([r[0] for r in rows])
    b = np.array([r[1] for r in rows])
    deal_sets = [r[2] for r in rows]
    deal = np.array([r[3] for r in rows], np.int64)
    wins = np.array([float(r[4]) for r in rows])
    count = np.array([float(r[5]) for r in rows])
    points = np.array([float(r[6]) for r in rows])
    index = {agent_id: k for k, agent_id in enumerate(ids)}
    ia, ib = np.array([index[x] for x in a.tolist()]), np.array([index[x] for x in b.tolist()])
    flip = ia > ib  # each pair once, its lower index first: the other orientation's wins are its losses
    i, j = np.where(flip, ib, ia), np.where(flip, ia, ib)
    wins = np.where(flip, count - wins, wins)
    points = np.where(flip, -points, points)
    pair_keys, pair_of = np.unique(i * len(ids) + j, return_inverse=True)
    _, set_of = np.unique(np.array(deal_sets, dtype=object).astype(str), return_inverse=True)
    _, unit_of = np.unique(set_of.astype(np.int64) * (int(deal.max()) + 1) + deal, return_inverse=True)
    shape = (len(pair_keys), int(unit_of.max()) + 1)
    unit_wins, unit_hands = np.zeros(shape), np.zeros(shape)
    np.add.at(unit_wins, (pair_of, unit_of), wins)
    np.add.at(unit_hands, (pair_of, unit_of), count)
    return StoredResults(
        ids=ids, names=[info[x].name for x in ids], specs=[info[x].spec for x in ids],
        kinds=[info[x].kind for x in ids],
        pairs=[(int(k // len(ids)), int(k % len(ids))) for k in pair_keys.tolist()],
        unit_wins=unit_wins, unit_hands=unit_hands, pair_points=np.bincount(pair_of, weights=points))


def rate(res: StoredResults, reps: int = BOOTSTRAP_REPS, seed: int = 0) -> tuple[list[dict], np.ndarray | None]:
    """(rows sorted by rating, (reps, agents) bootstrap samples or None). Each row: agent, kind, rating,
    rating_ci (with ``reps`` > 0), hands, win_rate and points_per_hand over all its hands (void = half)."""
    k = len(res.ids)
    if k < 2:
        return [], None
    w = res.unit_wins.sum(axis=1)
    n = res.unit_hands.sum(axis=1)
    ratings = bradley_terry(res.names, [(i, j, w[p], n[p]) for p, (i, j) in enumerate(res.pairs)], res.anchor)
    samples = None
    if reps > 0:
        samples = bootstrap_ratings(k, res.pairs, res.unit_wins, res.unit_hands, res.anchor, reps=reps, seed=seed)
        intervals = percentile_interval(samples)
    hands_of, wins_of, points_of = np.zeros(k), np.zeros(k), np.zeros(k)
    for p, (i, j) in enumerate(res.pairs):
        hands_of[[i, j]] += n[p]
        wins_of[i] += w[p]
        wins_of[j] += n[p] - w[p]
        points_of[i] += res.pair_points[p]
        points_of[j] -= res.pair_points[p]
    table = []
    for x in range(k):
        row = {"agent": res.names[x], "spec": res.specs[x], "kind": res.kinds[x], "id": res.ids[x],
               "rating": float(ratings[x]), "hands": int(hands_of[x]),
               "win_rate": float(wins_of[x] / max(hands_of[x], 1)),
               "points_per_hand": float(points_of[x] / max(hands_of[x], 1))}
        if samples is not None:
            row["rating_ci"] = (float(intervals[0, x]), float(intervals[1, x]))
        table.append(row)
    return sorted(table, key=lambda r: -r["rating"]), samples


def ratings(store: Store, rules: dict, reps: int = BOOTSTRAP_REPS, seed: int = 0) -> dict:
    """The rating table of everyone who played under ``rules``, with what it was fitted on."""
    res = load_results(store, rules)
    table, _ = rate(res, reps, seed)
    return {"rules": rules, "anchor": res.names[res.anchor] if res.names else None,
            "hands": int(res.unit_hands.sum()), "pairs": len(res.pairs), "bootstrap": reps, "seed": seed,
            "ci_method": (f"percentile bootstrap over deals, {reps} resamples, seed {seed}" if reps else None),
            "ratings": table}


def uncertain_pairs(res: StoredResults, agent_ids: list[int], count: int, reps: int = 200,
                    seed: int = 0) -> list[tuple[int, int]]:
    """The ``count`` pairs of ``agent_ids`` whose rating difference is least certain: widest bootstrap
    interval of the difference first, pairs never played before all others; cycled when ``count`` exceeds
    the pairs. Returns (agent id, agent id) tuples."""
    pairs = [(a, b) for x, a in enumerate(agent_ids) for b in agent_ids[x + 1:]]
    if not pairs:
        return []
    index = {agent_id: k for k, agent_id in enumerate(res.ids)}
    played = {frozenset((res.ids[i], res.ids[j])) for i, j in res.pairs}
    samples = rate(res, reps, seed)[1] if len(res.ids) >= 2 and reps > 0 else None

    def width(pair: tuple[int, int]) -> float:
        a, b = pair
        if frozenset(pair) not in played or samples is None:
            return float("inf")
        lo, hi = np.percentile(samples[:, index[a]] - samples[:, index[b]], [2.5, 97.5])
        return float(hi - lo)

    ranked = sorted(pairs, key=lambda p: -width(p))
    return [ranked[k % len(ranked)] for k in range(count)]
