"""The frozen rating scale: the anchors' ratings, computed once from a large recorded round robin
and shipped as data (``scale_v1.json`` beside this module), and the placement of a new agent on it
from its hands against the anchors alone (docs/benchmark.md, "The rating scale").

Ratings are on the Elo scale of evaluate.py's round-robin ratings (``okgin.ratings``): a
Bradley-Terry model of the hands won (a void hand is half a win), 400 points = 10:1 odds of
winning a hand, ``random`` = 0, with half a win and half a loss added per pair so that a clean
sweep stays finite. The anchors' ratings never move: a new agent's rating is the one value that
makes its expected wins against the fixed anchors equal its wins (the maximum-likelihood fit with
the anchors held), and its 95% interval a percentile bootstrap over the card's deal pairs.

Build the scale again (a new protocol version; the file records its command):

    python -m okgin.benchmark.scale --hands 40000 --seed 1 --out okgin/benchmark/scale_v1.json
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import sys
import time
from typing import Sequence

import numpy as np
from okgin_trainer.matches import MatchSettings, agent_seed, match_hands
from okgin_trainer.stats import RATING_PRIOR, percentile_interval

import okgin_agents as agents
from okgin.benchmark.protocol import ANCHORS, RULE_SETS, SHIPPED, VERSION, Protocol, resolve_spec
from okgin.ratings import bradley_terry

SCALE_FORMAT = "okgin-rating-scale"
SCALE_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), f"scale_v{VERSION}.json")


def expected_wins(rating: np.ndarray, anchor_ratings: np.ndarray) -> np.ndarray:
    """The probability of winning a hand at ``rating`` against each anchor (Elo: 400 = 10:1)."""
    return 1.0 / (1.0 + 10.0 ** ((anchor_ratings[None, :] - rating[:, None]) / 400.0))


def place(wins: np.ndarray, hands: np.ndarray, anchor_ratings: np.ndarray) -> np.ndarray:
    """The ratings that make the expected wins against the anchors equal ``wins`` (with the prior).

    ``wins`` and ``hands`` are (R, A): R independent samples (the card, or its bootstrap resamples)
    of the wins (void = half) and hands against each of A anchors. The expected total is increasing
    in the rating, so a bisection finds the root to 1e-6 Elo points; returns (R,) ratings.
    """
    wins = np.asarray(wins, np.float64) + RATING_PRIOR
    hands = np.asarray(hands, np.float64) + 2 * RATING_PRIOR
    target = wins.sum(axis=1)
    lo = np.full(len(wins), anchor_ratings.min() - 4000.0)
    hi = np.full(len(wins), anchor_ratings.max() + 4000.0)
    for _ in range(60):  # 8,000 Elo points halved 60 times: far below 1e-6
        mid = (lo + hi) / 2
        above = (hands * expected_wins(mid, anchor_ratings)).sum(axis=1) > target
        hi = np.where(above, mid, hi)
        lo = np.where(above, lo, mid)
    return (lo + hi) / 2


def place_with_ci(deal_wins: np.ndarray, deal_hands: np.ndarray, anchor_ratings: np.ndarray, reps: int,
                  seed: int) -> tuple[float, tuple[float, float] | None]:
    """An agent's rating and 95% percentile interval from ``reps`` resamples of the deal pairs.

    ``deal_wins[a, d]`` / ``deal_hands[a, d]``: the agent's wins / hands against anchor ``a`` on deal
    ``d``. Every anchor's match is played on the same deals, so a resample draws a deal for all
    anchors at once (as evaluate.py's rating intervals do). ``reps`` = 0: no interval.
    """
    rating = float(place(deal_wins.sum(axis=1)[None], deal_hands.sum(axis=1)[None], anchor_ratings)[0])
    if reps == 0:
        return rating, None
    rng = np.random.default_rng(seed)
    deals = deal_wins.shape[1]
    idx = rng.integers(0, deals, size=(reps, deals))
    # per resample, the wins and hands against each anchor: sum over the drawn deals
    counts = np.stack([np.bincount(row, minlength=deals) for row in idx]).astype(np.float64)  # (reps, deals)
    samples = place(counts @ deal_wins.T, counts @ deal_hands.T, anchor_ratings)
    lo, hi = percentile_interval(samples[:, None])[:, 0]
    return rating, (float(lo), float(hi))


class ScaleError(ValueError):
    """The scale file is missing, of another protocol version, or for another shipped agent."""


def sha256(path: str) -> str:
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def load_scale(path: str = SCALE_PATH) -> dict:
    """The frozen scale: {rule set: {anchor spec: rating}} and its record, checked against this checkout."""
    try:
        with open(path, encoding="utf-8") as f:
            scale = json.load(f)
    except FileNotFoundError:
        raise ScaleError(f"the rating scale {path} is missing; build it with python -m okgin.benchmark.scale") from None
    except json.JSONDecodeError as e:
        raise ScaleError(f"the rating scale {path} is not JSON ({e})") from None
    if scale.get("format") != SCALE_FORMAT or scale.get("version") != VERSION:
        raise ScaleError(f"{path} is not a version {VERSION} {SCALE_FORMAT} file")
    shipped = resolve_spec(SHIPPED)[4:]
    if os.path.exists(shipped) and scale.get("shipped_sha256") != sha256(shipped):
        raise ScaleError(f"{shipped} is not the agent the scale {path} was built with (sha256 differs): the "
                         f"anchors' ratings hold for that file only; build the scale again")
    return scale


def anchor_ratings(scale: dict, rule_set: str, anchors: Sequence[str]) -> np.ndarray:
    """The frozen ratings of ``anchors`` under ``rule_set``, in that order."""
    table = scale["rule_sets"].get(rule_set)
    if table is None:
        raise ScaleError(f"the scale has no rule set {rule_set!r} (it has {', '.join(scale['rule_sets'])})")
    missing = [a for a in anchors if a not in table["ratings"]]
    if missing:
        raise ScaleError(f"the scale has no rating for {', '.join(missing)} under {rule_set}")
    return np.array([table["ratings"][a] for a in anchors])


# ------------------------------------------------------------------- building the scale

def round_robin(rule_set: str, hands: int, seed: int, batch: int, progress=None) -> dict:
    """Every pair of anchors on the same ``hands`` duplicate deals; the Bradley-Terry ratings (random = 0)."""
    rules = Protocol().rules(rule_set)
    settings = MatchSettings(seed=seed, rules=rules, batch=batch, progress=progress)
    pairs, results = [], []
    for p, (i, j) in enumerate((i, j) for i in range(len(ANCHORS)) for j in range(i + 1, len(ANCHORS))):
        a = agents.make(resolve_spec(ANCHORS[i]), seed=agent_seed(seed, p, 0), rules=rules)
        b = agents.make(resolve_spec(ANCHORS[j]), seed=agent_seed(seed, p, 1), rules=rules)
        r, _ = match_hands(a, b, hands, settings)
        results.append((i, j, r.win_rate * r.hands, r.hands))
        pairs.append({"a": ANCHORS[i], "b": ANCHORS[j], "hands": r.hands, "win_rate_a": r.win_rate,
                      "win_rate_ci": list(r.win_rate_ci), "points_per_hand_a": r.points_per_hand,
                      "points_ci": list(r.points_ci)})
    ratings = bradley_terry(list(ANCHORS), results, ANCHORS.index("random"))
    return {"ratings": {a: round(float(r), 2) for a, r in zip(ANCHORS, ratings)}, "pairs": pairs}


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="python -m okgin.benchmark.scale",
                                 description="Build the frozen rating scale: a round robin of the benchmark's anchors "
                                             "under each rule set, their ratings written as the scale file.")
    ap.add_argument("--hands", type=int, default=40_000, help="hands per pair of anchors (default 40000)")
    ap.add_argument("--seed", type=int, default=1, help="seed of the deals (not the cards' seed; default 1)")
    ap.add_argument("--out", default=SCALE_PATH, help=f"the scale file to write (default {SCALE_PATH})")
    ap.add_argument("--batch", type=int, default=1024, help="games played at once (default 1024)")
    ap.add_argument("--no-progress", dest="progress", action="store_false", help="no progress bar on stderr")
    return ap


def main(argv: Sequence[str] | None = None) -> dict:
    ap = build_parser()
    ns = ap.parse_args(argv)
    for name, value, low in (("--hands", ns.hands, 2), ("--seed", ns.seed, 0), ("--batch", ns.batch, 1)):
        if value < low:
            ap.error(f"{name} must be >= {low}, got {value}")
    if ns.seed == Protocol().seed:
        ap.error(f"--seed {ns.seed} is the cards' seed: the scale's deals must differ from the deals it rates on")
    from tqdm import tqdm
    pairs = len(ANCHORS) * (len(ANCHORS) - 1) // 2
    bar = tqdm(total=len(RULE_SETS) * pairs * (ns.hands + ns.hands % 2), unit="hand", file=sys.stderr,
               disable=not ns.progress, desc="scale")
    t0 = time.time()
    rule_sets = {rs: round_robin(rs, ns.hands, ns.seed, ns.batch, bar.update) for rs in RULE_SETS}
    bar.close()
    scale = {
        "format": SCALE_FORMAT, "version": VERSION,
        "command": "python -m okgin.benchmark.scale " + " ".join(argv if argv is not None else sys.argv[1:]),
        "date": time.strftime("%Y-%m-%d"), "machine": f"{platform.machine()}, {os.cpu_count()} CPUs",
        "seconds": round(time.time() - t0, 1), "hands_per_pair": ns.hands + ns.hands % 2, "seed": ns.seed,
        "anchors": list(ANCHORS), "shipped_sha256": sha256(resolve_spec(SHIPPED)[4:]),
        "rule_sets": rule_sets,
    }
    tmp = ns.out + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(scale, f, indent=1)
        f.write("\n")
    os.replace(tmp, ns.out)  # a failed write never leaves half a scale
    for rs, table in rule_sets.items():
        print(f"{rs}: " + ", ".join(f"{a} {r:+.0f}" for a, r in table["ratings"].items()))
    return scale


if __name__ == "__main__":
    main()
