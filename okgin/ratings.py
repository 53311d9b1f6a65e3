"""Ratings of a round robin: a Bradley-Terry fit of every pair's hand results on the Elo scale, with
percentile-bootstrap intervals over the shared deals (docs/evaluation.md, "Ratings")."""

from __future__ import annotations

from typing import Sequence

import numpy as np
from okgin_trainer.matches import HandRows, MatchResult
from okgin_trainer.stats import BOOTSTRAP_REPS, RATING_PRIOR, bootstrap_ratings, percentile_interval


def bradley_terry(names: Sequence[str], results: Sequence[tuple[int, int, float, int]],
                  anchor: int) -> np.ndarray:
    """Elo-scale ratings from (i, j, wins of i against j, games) tuples, rating[anchor] = 0."""
    k = len(names)
    wins = np.zeros((k, k))
    games = np.zeros((k, k))
    for i, j, w, n in results:
        wins[i, j] += w + RATING_PRIOR
        wins[j, i] += n - w + RATING_PRIOR
        games[i, j] += n + 2 * RATING_PRIOR
        games[j, i] += n + 2 * RATING_PRIOR
    p = np.ones(k)
    for _ in range(10_000):  # Hunter's MM iteration
        denom = (games / (p[:, None] + p[None, :])).sum(axis=1)
        new = np.where(denom > 0, wins.sum(axis=1) / np.maximum(denom, 1e-300), 1.0)
        new /= np.exp(np.log(new).mean())
        if np.allclose(new, p, rtol=1e-12, atol=0):
            p = new
            break
        p = new
    r = 400.0 * np.log10(p)
    return r - r[anchor]


def rating_anchor(names: Sequence[str]) -> int:
    """The agent rated 0: random when it plays, else the last listed agent."""
    return names.index("random") if "random" in names else len(names) - 1


def rating_table(names: Sequence[str], matches: Sequence[tuple[int, int, MatchResult]],
                 rows: Sequence[HandRows] | None = None, reps: int = BOOTSTRAP_REPS, seed: int = 0) -> list[dict]:
    """Sorted rows: agent, rating (``rating_anchor`` = 0), mean win rate and points per hand over its
    pairs. With ``rows`` (each match's ``HandRows``, same deals) every rating also gets ``rating_ci``,
    a 95% percentile interval from ``reps`` resamples of the deals (seeded by ``seed``)."""
    anchor = rating_anchor(names)
    ratings = bradley_terry(names, [(i, j, r.win_rate * r.hands, r.hands) for i, j, r in matches], anchor)
    intervals = None
    if rows is not None and reps > 0:
        deals = int(rows[0].deal_id.max()) + 1
        deal_wins = np.stack([np.bincount(h.deal_id, weights=h.win, minlength=deals) for h in rows])
        deal_hands = np.stack([np.bincount(h.deal_id, minlength=deals).astype(np.float64) for h in rows])
        samples = bootstrap_ratings(len(names), [(i, j) for i, j, _ in matches], deal_wins, deal_hands, anchor,
                                    reps=reps, seed=seed)
        intervals = percentile_interval(samples)
    table = []
    for k, name in enumerate(names):
        wr = [r.win_rate if i == k else 1 - r.win_rate for i, j, r in matches if k in (i, j)]
        pp = [r.points_per_hand if i == k else -r.points_per_hand for i, j, r in matches if k in (i, j)]
        row = {"agent": name, "rating": float(ratings[k]), "win_rate": float(np.mean(wr)),
               "points_per_hand": float(np.mean(pp))}
        if intervals is not None:
            row["rating_ci"] = (float(intervals[0, k]), float(intervals[1, k]))
        table.append(row)
    return sorted(table, key=lambda row: -row["rating"])
