"""Simple against Simple under the EAAI rules: okgin's statistics beside the EAAI framework's.

    python -m experiments.eaai --games 2000 --seed 0
    python -m experiments.eaai --games 20000 --seed 0 --framework java_simple_20000.txt

plays ``eaai_simple`` against ``eaai_simple`` (two agents, one per player, as the framework's two
``SimpleGinRummyPlayer`` objects) in whole games to 100 under ``Rules.eaai()`` and prints, with 95 %
CIs: hands per game, draws per hand, and the shares of hands that end in gin, in a plain knock, in an
undercut and cancelled (void). ``--framework PATH`` reads a per-game table measured with the EAAI
framework itself (see README.md here: its Java source is not part of okgin, so the harness that
counts these in its engine is described there, not shipped) and prints it beside, with the same
estimators.

The unit of the CIs is the game: a per-hand rate is a ratio of per-game sums (a delta-method CI
over games, so hands of one game are not taken as independent).
"""

from __future__ import annotations

import argparse
import json
import sys
import time

import numpy as np

import okgin_agents as agents
from okgin_env import Rules, VectorGame
from okgin_env.game.actions import DRAW_STOCK, TAKE_DISCARD

#: the per-game table, one row a game (the framework harness prints the same columns)
COLUMNS = ("hands", "draws", "gins", "knocks", "undercuts", "cancels", "points")
Z95 = 1.959963984540054


def play(games: int, seed: int, batch: int = 1000, rules: Rules | None = None,
         max_steps: int = 10**7) -> np.ndarray:
    """(games, len(COLUMNS)) int64 per-game counts of eaai_simple against eaai_simple: hands, draws
    (stock or pile, the upcard taken on the offer included), gins, non-gin knocks (undercut ones
    included), undercuts, cancelled hands and the points scored in the game's decisive hands."""
    rules = Rules.eaai() if rules is None else rules
    table = np.zeros((games, len(COLUMNS)), np.int64)
    for start in range(0, games, batch):
        n = min(batch, games - start)
        game = VectorGame(n, rules, episode="game", seed=seed * 1_000_003 + start)
        bots = [agents.make("eaai_simple", seed=seed * 1_000_003 + start * 2 + p) for p in (0, 1)]
        out = game.reset()
        t = table[start:start + n]
        for _ in range(max_steps):
            live = out.current_player >= 0
            if not live.any():
                break
            actions = np.zeros(n, np.int64)
            for p, bot in enumerate(bots):
                rows = np.flatnonzero(live & (out.current_player == p))
                if len(rows):
                    actions[rows] = bot.act(out.observation[rows], out.legal_action_mask[rows])
            t[:, 1] += live & ((actions == DRAW_STOCK) | (actions == TAKE_DISCARD))
            out = game.step(actions)
            r = out.result
            over = out.hand_over
            t[:, 0] += over
            t[:, 2] += over & r.gin
            t[:, 3] += over & (r.knocker >= 0) & ~r.gin
            t[:, 4] += over & r.undercut
            t[:, 5] += over & r.void
            t[:, 6] += np.where(over & ~r.void, r.points.max(axis=1), 0)
        else:
            raise RuntimeError(f"games did not end within {max_steps} steps")
    return table


def read_table(path: str) -> np.ndarray:
    """The framework harness's per-game table: a header line naming at least COLUMNS
    ('pts_decisive' is read as 'points'), then one line of integers a game."""
    with open(path) as f:
        header = f.readline().split()
        rows = np.array([[int(x) for x in line.split()] for line in f if line.strip()], np.int64)
    header = ["points" if h == "pts_decisive" else h for h in header]
    missing = [c for c in COLUMNS if c not in header]
    if missing:
        raise ValueError(f"{path}: the header has no column(s) {', '.join(missing)}; it has {' '.join(header)}")
    return rows[:, [header.index(c) for c in COLUMNS]]


def _mean_ci(x: np.ndarray) -> tuple[float, float, float]:
    m = float(x.mean())
    h = Z95 * float(x.std(ddof=1)) / np.sqrt(len(x))
    return m, m - h, m + h


def _ratio_ci(y: np.ndarray, x: np.ndarray) -> tuple[float, float, float]:
    """sum(y) / sum(x) over games with its delta-method 95 % CI (games are the independent units)."""
    r = y.sum() / x.sum()
    n = len(x)
    se = np.sqrt(((y - r * x) ** 2).sum() / (n * (n - 1))) / x.mean()
    return float(r), float(r - Z95 * se), float(r + Z95 * se)


def summarise(table: np.ndarray) -> dict[str, tuple[float, float, float]]:
    """Each statistic as (estimate, CI low, CI high)."""
    hands, draws, gins, knocks, undercuts, cancels, points = (table[:, i].astype(float) for i in range(len(COLUMNS)))
    return {
        "games": (len(table),) * 3,
        "hands per game": _mean_ci(hands),
        "draws per hand": _ratio_ci(draws, hands),
        "gin": _ratio_ci(gins, hands),
        "knock (not gin)": _ratio_ci(knocks, hands),
        "undercut": _ratio_ci(undercuts, hands),
        "cancelled": _ratio_ci(cancels, hands),
        "undercut share of knocks": _ratio_ci(undercuts, knocks),
        "points per scored hand": _ratio_ci(points, hands - cancels),
    }


def text(value: tuple[float, float, float], percent: bool) -> str:
    """'12.34 [12.00, 12.68]', or '1.23 % [1.10, 1.36]' for a share."""
    m, lo, hi = value
    if percent:
        return f"{100 * m:.2f} % [{100 * lo:.2f}, {100 * hi:.2f}]"
    return f"{m:.2f} [{lo:.2f}, {hi:.2f}]"


SHARES = {"gin", "knock (not gin)", "undercut", "cancelled", "undercut share of knocks"}


def rows(stats: dict) -> list[tuple[str, str]]:
    return [(k, str(v[0]) if k == "games" else text(v, k in SHARES)) for k, v in stats.items()]


def difference(a: tuple[float, float, float], b: tuple[float, float, float], percent: bool) -> str:
    """a - b with the 95 % CI of a difference of two independent estimates (in percentage points for
    shares): '+0.06 [-0.02, +0.14]'."""
    scale = 100.0 if percent else 1.0
    d = (a[0] - b[0]) * scale
    se = np.hypot(a[2] - a[1], b[2] - b[1]) / (2 * Z95) * scale
    return f"{d:+.2f} [{d - Z95 * se:+.2f}, {d + Z95 * se:+.2f}]"


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m experiments.eaai", description=__doc__.split("\n\n")[0])
    ap.add_argument("--games", type=int, default=2000, help="games to 100 (default 2000)")
    ap.add_argument("--seed", type=int, default=0, help="seed of the deals and of the agents (default 0)")
    ap.add_argument("--batch", type=int, default=1000, help="games played at once (default 1000)")
    ap.add_argument("--framework", metavar="PATH", help="per-game table measured in the EAAI framework")
    ap.add_argument("--json", metavar="PATH", help="write both summaries to this JSON file")
    args = ap.parse_args(argv)
    if args.games < 2 or args.batch < 1:
        ap.error(f"--games must be >= 2 and --batch >= 1, got {args.games} and {args.batch}")
    t0 = time.perf_counter()
    ours = summarise(play(args.games, args.seed, args.batch))
    seconds = time.perf_counter() - t0
    theirs = summarise(read_table(args.framework)) if args.framework else None
    head = ["statistic", "okgin: eaai_simple, Rules.eaai()"]
    if theirs:
        head += ["EAAI framework: SimpleGinRummyPlayer", "okgin - framework (shares: points of %)"]
    lines = [head]
    for (name, a), (_, b) in zip(rows(ours), rows(theirs) if theirs else [(None, None)] * len(ours)):
        extra = []
        if theirs:
            extra = [b, "" if name == "games" else difference(ours[name], theirs[name], name in SHARES)]
        lines.append([name, a] + extra)
    width = [max(len(r[i]) for r in lines) for i in range(len(head))]
    for r in lines:
        print("  ".join(c.ljust(w) for c, w in zip(r, width)).rstrip())
    print(f"({args.games} games in {seconds:.0f} s)", file=sys.stderr)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"okgin": {k: list(v) for k, v in ours.items()},
                       "framework": {k: list(v) for k, v in theirs.items()} if theirs else None,
                       "table": lines}, f, indent=1)
