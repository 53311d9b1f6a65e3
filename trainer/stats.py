"""The statistics of okgin's evaluation: means with 95% intervals over independent units (deal
pairs), rate intervals that stay inside [0, 1], and bootstrap intervals of Bradley-Terry ratings.

Numpy only (no torch, no game code), so the formulas can be checked on their own
(tests/programs/test_evaluate_research.py); docs/evaluation.md says which interval each figure uses.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

Z95 = 1.959963984540054  #: two-sided 95% normal quantile
RATING_PRIOR = 0.5  #: virtual wins (and as many losses) per pair in the rating fit
BOOTSTRAP_REPS = 1000  #: resamples of the deal pairs behind each rating interval


def unit_means(values: np.ndarray, units: np.ndarray | None = None) -> np.ndarray:
    """Per-unit means of ``values`` (``units`` are integer ids, e.g. deal ids); the values themselves
    without units."""
    v = np.asarray(values, dtype=np.float64)
    if units is None:
        return v
    counts = np.bincount(units)
    return np.bincount(units, weights=v)[counts > 0] / counts[counts > 0]


def mean_ci(values: np.ndarray, units: np.ndarray | None = None) -> tuple[float, tuple[float, float]]:
    """Mean and 95% CI (mean +/- 1.96 standard errors); with ``units`` (ids), the mean and CI are
    over per-unit means (e.g. deal pairs, whose two hands are correlated). Fewer than two units
    give a NaN interval."""
    v = unit_means(values, units)
    m = float(v.mean()) if len(v) else float("nan")
    if len(v) < 2:
        return m, (float("nan"), float("nan"))
    half = Z95 * float(v.std(ddof=1)) / math.sqrt(len(v))
    return m, (m - half, m + half)


def rate_ci(values: np.ndarray, units: np.ndarray | None = None) -> tuple[float, tuple[float, float]]:
    """A rate (values in [0, 1], e.g. 1 win, 0 loss, 0.5 void) and a 95% Wilson interval, which
    stays inside [0, 1] (the Wald interval of ``mean_ci`` leaves it near 0 and 1).

    The rate is ``mean_ci``'s (the mean of per-unit means). The Wilson interval is taken at the
    effective sample size n_eff = p(1 - p) / se^2, se^2 being the variance of the unit means over
    the number of units (Kish's design effect: it carries the correlation of a deal pair's two
    hands), capped at the number of values (the Bernoulli bound: a void counted as half a win only
    lowers the variance) and equal to it when p is 0 or 1 or the units do not vary. Independent
    0/1 values (no units) give exactly the textbook Wilson interval. Fewer than two units give a
    NaN interval.
    """
    v = np.asarray(values, dtype=np.float64)
    u = unit_means(v, units)
    p = float(u.mean()) if len(u) else float("nan")
    if len(u) < 2:
        return p, (float("nan"), float("nan"))
    n = float(len(v))
    se2 = float(u.var()) / len(u)  # ddof=0, like p(1 - p): plain 0/1 data give n_eff = n
    n_eff = min(n, p * (1 - p) / se2) if se2 > 0 and 0 < p < 1 else n
    z2 = Z95 * Z95
    denom = 1 + z2 / n_eff
    centre = (p + z2 / (2 * n_eff)) / denom
    half = Z95 * math.sqrt(p * (1 - p) / n_eff + z2 / (4 * n_eff * n_eff)) / denom
    # the interval holds p exactly (at p = 0 or 1 rounding would otherwise leave it a hair outside)
    return p, (max(0.0, min(p, centre - half)), min(1.0, max(p, centre + half)))


def diff_ci(a: np.ndarray, b: np.ndarray, units: np.ndarray | None = None,
            bounds: tuple[float, float] | None = None) -> tuple[float, tuple[float, float]]:
    """Paired difference mean(a - b) and its 95% CI over units (``mean_ci`` of the differences);
    with ``bounds`` the interval is clipped to the range the difference can take (e.g. (-1, 1)
    for a difference of rates). Identical arrays give exactly (0, (0, 0))."""
    m, (lo, hi) = mean_ci(np.asarray(a, np.float64) - np.asarray(b, np.float64), units)
    if bounds is not None and not math.isnan(lo):
        lo, hi = max(bounds[0], lo), min(bounds[1], hi)
    return m, (lo, hi)


# ---------------------------------------------------------------------------- ratings

def _bt_batch(wins: np.ndarray, games: np.ndarray, tol: float = 1e-10, max_iter: int = 10_000) -> np.ndarray:
    """Bradley-Terry strengths (R, k) of R independent tables (R, k, k) by Hunter's MM iteration,
    normalised to a geometric mean of 1; a table stops when it moves less than ``tol`` (relative)."""
    r, k, _ = wins.shape
    p = np.ones((r, k))
    total = wins.sum(axis=2)
    live = np.ones(r, bool)
    for _ in range(max_iter):
        pl = p[live]
        denom = (games[live] / (pl[:, :, None] + pl[:, None, :])).sum(axis=2)
        new = np.where(denom > 0, total[live] / np.maximum(denom, 1e-300), 1.0)
        new /= np.exp(np.log(new).mean(axis=1, keepdims=True))
        done = np.all(np.abs(new - pl) <= tol * np.abs(pl), axis=1)
        p[live] = new
        idx = np.flatnonzero(live)
        live[idx[done]] = False
        if not live.any():
            break
    return p


def bootstrap_ratings(num_agents: int, pairs: Sequence[tuple[int, int]], deal_wins: np.ndarray,
                      deal_hands: np.ndarray, anchor: int, reps: int = BOOTSTRAP_REPS,
                      seed: int = 0) -> np.ndarray:
    """(reps, num_agents) Elo-scale Bradley-Terry ratings (rating[anchor] = 0, the prior of
    ``okgin.ratings.bradley_terry``) refitted on resampled deals.

    ``deal_wins[m, d]`` / ``deal_hands[m, d]`` are the first agent's wins (void = half) / the hands of
    pair ``pairs[m]`` on deal ``d``. Every pair played the same deals, so a resample draws deal ids
    once (with replacement, seeded) and applies them to every pair: the ratings' correlation
    through shared deals is kept.
    """
    deal_wins = np.asarray(deal_wins, np.float64)
    deal_hands = np.asarray(deal_hands, np.float64)
    num_deals = deal_wins.shape[1]
    rng = np.random.default_rng([seed, 0xB0075])
    w = np.empty((reps, len(pairs)))  # wins of the pair's first agent in each resample
    n = np.empty((reps, len(pairs)))  # its hands
    for start in range(0, reps, 100):  # 100 resamples at a time: (100, deals) counts, not (reps, deals)
        stop = min(reps, start + 100)
        counts = rng.multinomial(num_deals, np.full(num_deals, 1.0 / num_deals), size=stop - start)
        w[start:stop] = counts @ deal_wins.T
        n[start:stop] = counts @ deal_hands.T
    wins = np.zeros((reps, num_agents, num_agents))
    games = np.zeros((reps, num_agents, num_agents))
    for m, (i, j) in enumerate(pairs):
        wins[:, i, j] += w[:, m] + RATING_PRIOR
        wins[:, j, i] += n[:, m] - w[:, m] + RATING_PRIOR
        games[:, i, j] += n[:, m] + 2 * RATING_PRIOR
        games[:, j, i] += n[:, m] + 2 * RATING_PRIOR
    ratings = 400.0 * np.log10(_bt_batch(wins, games))
    return ratings - ratings[:, anchor:anchor + 1]


def percentile_interval(samples: np.ndarray) -> np.ndarray:
    """(2, k) 2.5th and 97.5th percentiles of (reps, k) samples: a 95% percentile interval."""
    return np.percentile(samples, [2.5, 97.5], axis=0)
