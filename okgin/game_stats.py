"""Game statistics of each rule set, for the benchmark protocol: ``python -m okgin.game_stats``.

    python -m okgin.game_stats [--rules oklahoma|eaai|both] [--agents random eaai_simple] \\
        [--hands 20000] [--games 2000] [--seed 0] [--batch 2048] [--json PATH]

For every rule set and every agent playing itself (two objects of one spec, one per seat, seeded
apart) it plays ``--hands`` one-hand episodes and ``--games`` games to ``target_score`` on the
batched ``VectorGame`` and reports:

* decisions per hand (both players', the upcard offer included) and draws per hand (a card taken
  from the stock or the pile, the upcard taken on the offer included: one draw begins each turn,
  so the most draws in a hand is its most turns);
* legal actions per decision (the mean over all decisions, and the most seen);
* the shares of hands that are void (the wall or the turn cap; no score), void by the turn cap,
  gin and undercut;
* one seat's points per hand (player 0's score change: its points minus the other's, 0 on a
  void hand): mean, standard deviation, least and most;
* hands per game, and player 0's final margin per game (its total minus the other's) and the
  winner's margin.

95 % confidence intervals: hands (and games) are independent, so a per-hand mean gets mean +/- 1.96
standard errors over hands, a share a Wilson interval (``okgin_trainer.stats``), and legal actions
per decision, a ratio of two per-hand sums, a delta-method interval over hands (decisions of one
hand are not independent). Every rule set and agent plays the same one-hand deals and the same
first deal of each game for one seed (the deals come from ``--seed`` alone, the agents from
``--seed`` and the seat), so one pair's figures do not depend on which others were asked for.

The table goes to stdout; ``--json PATH`` writes every number (``"version": 1``, the command, the
seed, the rules' options, each pair's figures and the printed table).
"""

from __future__ import annotations

import argparse
import json
import math
import shlex
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import okgin_agents as agents
from okgin_trainer.stats import Z95, mean_ci, rate_ci

from okgin_env.agent_specs import Agent
from okgin_env.game.actions import DRAW_STOCK, NUM_ACTIONS, TAKE_DISCARD
from okgin_env.game.core import VectorGame
from okgin_env.game.rules import RULE_SETS, Rules

PROG = "python -m okgin.game_stats"  #: how usage and error lines name the program
VERSION = 1  #: of the JSON written by --json; bumped when a key changes meaning or goes
RULE_CHOICES = (*RULE_SETS, "both")
DEFAULT_AGENTS = ("random", "eaai_simple")
#: a hand still running after this many decisions is stopped and counted as unfinished (an agent
#: that never ends a hand under rules without a turn cap); no bundled bot comes near it
MAX_DECISIONS_PER_HAND = 20_000
#: a game still running after this many hands is stopped and counted as unfinished (never-knocking
#: agents); random play under the Oklahoma rules, the longest there is here, plays about 250 hands a
#: game, the longest of 2,000 (seed 0) 1,093: evaluate.py's cap of 1,000 would cut that tail short
MAX_HANDS_PER_GAME = 10_000


def _seed(*parts: int) -> int:
    """One 32-bit seed from several integers (``numpy.random.SeedSequence``)."""
    return int(np.random.SeedSequence(list(parts)).generate_state(1)[0])


def _self_play(spec: str, seed: int, rules: Rules) -> list[Agent]:
    """Two agents of ``spec``, one per seat, seeded apart (the same seeds for every spec)."""
    return [agents.make(spec, seed=_seed(seed, 2, seat), rules=rules) for seat in (0, 1)]


def _actions(bots: Sequence[Agent], out: Any, live: np.ndarray) -> np.ndarray:
    """Each live game's action from the agent of its current player (other rows 0, ignored by step)."""
    actions = np.zeros(len(live), np.int64)
    for p, bot in enumerate(bots):
        rows = np.flatnonzero(live & (out.current_player == p))
        if len(rows):
            actions[rows] = bot.act(out.observation[rows], out.legal_action_mask[rows])
    return actions


# ------------------------------------------------------------------- playing

@dataclass
class HandTable:
    """One row per hand played to its end (unfinished hands are left out and counted)."""

    decisions: np.ndarray  #: (H,) int64 decisions of both players, the upcard offer included
    draws: np.ndarray  #: (H,) int64 cards taken from the stock or the pile (= turns)
    legal: np.ndarray  #: (H,) int64 sum over the hand's decisions of the number of legal actions
    points: np.ndarray  #: (H,) int64 player 0's score change (its points minus the other's)
    void: np.ndarray  #: (H,) bool the wall or the turn cap ended the hand
    capped: np.ndarray  #: (H,) bool void by the turn cap
    gin: np.ndarray  #: (H,) bool
    undercut: np.ndarray  #: (H,) bool
    legal_counts: np.ndarray  #: (NUM_ACTIONS + 1,) int64 decisions (all played) with k legal actions, k = 0..107
    unfinished: int = 0  #: hands stopped after MAX_DECISIONS_PER_HAND decisions
    turn_cap: int | None = None  #: the rules' max_turns_per_hand (None: no cap)


@dataclass
class GameTable:
    """One row per game played to ``target_score`` (games stopped after MAX_HANDS_PER_GAME hands are left out)."""

    hands: np.ndarray  #: (G,) int64 hands of the game, void ones included
    margin: np.ndarray  #: (G,) int64 player 0's final total minus player 1's
    unfinished: int = 0


def play_hands(spec: str, rules: Rules, hands: int, seed: int = 0, batch: int = 2048) -> HandTable:
    """``hands`` one-hand episodes of ``spec`` against itself under ``rules``, ``batch`` at a time
    (each batch played to its last hand, so long hands are not cut short by the count)."""
    bots = _self_play(spec, seed, rules)
    parts: list[dict[str, np.ndarray]] = []
    counts = np.zeros(NUM_ACTIONS + 1, np.int64)
    unfinished = 0
    for start in range(0, hands, batch):
        n = min(batch, hands - start)
        game = VectorGame(n, rules, episode="hand", seed=(seed, 0, start))
        out = game.reset()
        dec, draws, legal, pts = (np.zeros(n, np.int64) for _ in range(4))
        ended = np.zeros(n, bool)
        flags = {k: np.zeros(n, bool) for k in ("void", "capped", "gin", "undercut")}
        for _ in range(MAX_DECISIONS_PER_HAND):
            live = out.current_player >= 0
            if not live.any():
                break
            actions = _actions(bots, out, live)
            k = out.legal_action_mask.sum(axis=1)
            dec += live
            legal += np.where(live, k, 0)
            counts += np.bincount(k[live], minlength=NUM_ACTIONS + 1)
            draws += live & ((actions == DRAW_STOCK) | (actions == TAKE_DISCARD))
            out = game.step(actions)
            over = out.hand_over
            if over.any():
                r = out.result
                ended |= over
                pts += np.where(over, out.rewards[:, 0], 0).astype(np.int64)
                for name, col in (("void", r.void), ("capped", r.truncated_hand), ("gin", r.gin),
                                  ("undercut", r.undercut)):
                    flags[name] |= over & col
        unfinished += int((~ended).sum())
        parts.append(dict(decisions=dec[ended], draws=draws[ended], legal=legal[ended], points=pts[ended],
                          **{k: v[ended] for k, v in flags.items()}))
    cols = {k: np.concatenate([p[k] for p in parts]) if parts else np.zeros(0, np.int64)
            for k in ("decisions", "draws", "legal", "points", "void", "capped", "gin", "undercut")}
    return HandTable(**cols, legal_counts=counts, unfinished=unfinished, turn_cap=rules.max_turns_per_hand)


def play_games(spec: str, rules: Rules, games: int, seed: int = 0, batch: int = 2048) -> GameTable:
    """``games`` games to ``rules.target_score`` of ``spec`` against itself, ``batch`` at a time.

    Game lengths have a long tail (random play under the Oklahoma rules: hundreds of hands, now
    and then over a thousand), so a batch whose games are mostly over goes on as a smaller
    ``VectorGame`` of the games still running (their states moved over, later deals seeded anew):
    a step then costs what its live games do, not what the batch did."""
    bots = _self_play(spec, seed, rules)
    hands = np.zeros(games, np.int64)
    margin = np.zeros(games, np.int64)
    ended = np.zeros(games, bool)
    for start in range(0, games, batch):
        n = min(batch, games - start)
        game = VectorGame(n, rules, episode="game", seed=(seed, 1, start))
        out = game.reset()
        ids = np.arange(start, start + n)  # the game each row plays
        moves = 0
        while True:
            live = (out.current_player >= 0) & (hands[ids] < MAX_HANDS_PER_GAME)
            running = int(live.sum())
            if running == 0:
                break
            if running <= len(ids) // 2 and len(ids) >= 64:
                keep = np.flatnonzero(live)
                moves += 1
                state = game.get_state(keep)
                game = VectorGame(len(keep), rules, episode="game", seed=(seed, 1, start, moves))
                out, ids = game.set_state(state), ids[keep]
                continue
            out = game.step(_actions(bots, out, live), games=live)
            over = out.hand_over & live
            hands[ids] += over
            done = over & out.result.game_over
            if done.any():
                s = out.result.scores
                margin[ids[done]] = s[done, 0].astype(np.int64) - s[done, 1]
                ended[ids[done]] = True
    return GameTable(hands[ended], margin[ended], int((~ended).sum()))


# ------------------------------------------------------------------- summaries

def ratio_ci(y: np.ndarray, x: np.ndarray) -> tuple[float, tuple[float, float]]:
    """sum(y) / sum(x) with its delta-method 95 % CI, the rows (hands) being the independent units."""
    y, x = np.asarray(y, np.float64), np.asarray(x, np.float64)
    n = len(x)
    if n == 0 or x.sum() == 0:
        return float("nan"), (float("nan"), float("nan"))
    r = float(y.sum() / x.sum())
    if n < 2:
        return r, (float("nan"), float("nan"))
    se = math.sqrt(float(((y - r * x) ** 2).sum()) / (n * (n - 1))) / float(x.mean())
    return r, (r - Z95 * se, r + Z95 * se)


def _est(value: tuple[float, tuple[float, float]]) -> dict[str, Any]:
    m, (lo, hi) = value
    return {"mean": m, "ci": [lo, hi]}


def _spread(v: np.ndarray) -> dict[str, Any]:
    """Mean with its CI, standard deviation, least and most of integer values."""
    if len(v) == 0:
        return {"mean": float("nan"), "ci": [float("nan")] * 2, "std": float("nan"), "min": None, "max": None}
    return {**_est(mean_ci(v)), "std": float(np.std(v, ddof=1)) if len(v) > 1 else float("nan"),
            "min": int(v.min()), "max": int(v.max())}


def summarise_hands(t: HandTable) -> dict[str, Any]:
    """The per-hand figures of a ``HandTable`` (JSON-ready)."""
    counts = t.legal_counts
    seen = np.flatnonzero(counts)
    return {
        "hands": len(t.decisions),
        "unfinished": t.unfinished,
        "decisions_per_hand": _spread(t.decisions),
        "draws_per_hand": _spread(t.draws),
        "legal_actions_per_decision": {**_est(ratio_ci(t.legal, t.decisions)),
                                       "min": int(seen[0]) if len(seen) else None,
                                       "max": int(seen[-1]) if len(seen) else None,
                                       "counts": {str(k): int(counts[k]) for k in seen}},
        "void": _est(rate_ci(t.void)),
        "turn_cap": t.turn_cap,
        "void_turn_cap": _est(rate_ci(t.capped)),
        "gin": _est(rate_ci(t.gin)),
        "undercut": _est(rate_ci(t.undercut)),
        "points_per_hand_seat0": _spread(t.points),
    }


def summarise_games(t: GameTable) -> dict[str, Any]:
    """The per-game figures of a ``GameTable`` (JSON-ready)."""
    return {
        "games": len(t.hands),
        "unfinished": t.unfinished,
        "hands_per_game": _spread(t.hands),
        "final_margin_seat0": _spread(t.margin),
        "winner_margin": _spread(np.abs(t.margin)),
    }


def measure(rule_names: Sequence[str], specs: Sequence[str], hands: int, games: int, seed: int = 0,
            batch: int = 2048) -> list[dict[str, Any]]:
    """Every rule set x agent's figures: dicts with ``rules``, ``agent``, ``hands`` (or None when
    ``hands`` is 0), ``games`` (likewise) and ``seconds``."""
    results = []
    for name in rule_names:
        rules = Rules.named(name)
        for spec in specs:
            t0 = time.perf_counter()
            h = summarise_hands(play_hands(spec, rules, hands, seed, batch)) if hands else None
            g = summarise_games(play_games(spec, rules, games, seed, batch)) if games else None
            results.append({"rules": name, "agent": spec, "hands": h, "games": g,
                            "seconds": round(time.perf_counter() - t0, 1)})
    return results


# ------------------------------------------------------------------- the table

def _ci(d: dict[str, Any], fmt: str = ".2f") -> str:
    lo, hi = d["ci"]
    return f"{d['mean']:{fmt}} [{lo:{fmt}}, {hi:{fmt}}]"


def _pct(d: dict[str, Any]) -> str:
    lo, hi = d["ci"]
    return f"{100 * d['mean']:.2f} % [{100 * lo:.2f}, {100 * hi:.2f}]"


def _range(d: dict[str, Any]) -> str:
    return "-" if d["min"] is None else f"{d['min']:+d} / {d['max']:+d}"


#: the table's rows: (label, section, key, how a cell is written)
_HAND_ROWS = [
    ("hands", lambda h: f"{h['hands']}" + (f" ({h['unfinished']} unfinished)" if h["unfinished"] else "")),
    ("decisions per hand", lambda h: _ci(h["decisions_per_hand"])),
    ("draws per hand", lambda h: _ci(h["draws_per_hand"])),
    ("draws (turns) in a hand, most", lambda h: f"{h['draws_per_hand']['max']}"),
    ("legal actions per decision", lambda h: _ci(h["legal_actions_per_decision"], ".3f")),
    ("legal actions, most", lambda h: f"{h['legal_actions_per_decision']['max']}"),
    ("void (no score)", lambda h: _pct(h["void"])),
    ("void by the turn cap", lambda h: "no cap" if h["turn_cap"] is None else _pct(h["void_turn_cap"])),
    ("gin", lambda h: _pct(h["gin"])),
    ("undercut", lambda h: _pct(h["undercut"])),
    ("player 0 points per hand", lambda h: _ci(h["points_per_hand_seat0"], "+.2f")),
    ("player 0 points per hand, std", lambda h: f"{h['points_per_hand_seat0']['std']:.2f}"),
    ("player 0 points per hand, least / most", lambda h: _range(h["points_per_hand_seat0"])),
]
_GAME_ROWS = [
    ("games", lambda g: f"{g['games']}" + (f" ({g['unfinished']} unfinished)" if g["unfinished"] else "")),
    ("hands per game", lambda g: _ci(g["hands_per_game"])),
    ("hands per game, least / most", lambda g: f"{g['hands_per_game']['min']} / {g['hands_per_game']['max']}"
     if g["hands_per_game"]["min"] is not None else "-"),
    ("player 0 final margin", lambda g: _ci(g["final_margin_seat0"], "+.2f")),
    ("player 0 final margin, std", lambda g: f"{g['final_margin_seat0']['std']:.2f}"),
    ("player 0 final margin, least / most", lambda g: _range(g["final_margin_seat0"])),
    ("winner's margin", lambda g: _ci(g["winner_margin"])),
]


def table(results: Sequence[dict[str, Any]]) -> list[list[str]]:
    """The printed table as rows of cells, the header first: one row per statistic, one column per
    rule set x agent."""
    head = ["statistic", *(f"{r['rules']}, {r['agent']}" for r in results)]
    rows = [head]
    for section, spec_rows in (("hands", _HAND_ROWS), ("games", _GAME_ROWS)):
        if all(r[section] is None for r in results):
            continue
        for label, cell in spec_rows:
            rows.append([label, *("" if r[section] is None else cell(r[section]) for r in results)])
    return rows


def format_table(rows: Sequence[Sequence[str]]) -> str:
    """Fixed-width text of ``table``'s rows."""
    width = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, width)).rstrip() for r in rows]
    lines.insert(1, "-" * len(lines[0]))
    return "\n".join(lines)


# ------------------------------------------------------------------- the command

def build_parser() -> argparse.ArgumentParser:
    """The command line (``parse_args`` checks what argparse cannot)."""
    ap = argparse.ArgumentParser(
        prog=PROG, description="Game statistics of each rule set: every agent playing itself, with 95%% CIs.",
        epilog=f"Example: {PROG} --rules both --agents random eaai_simple --hands 20000 --games 2000 --seed 0")
    ap.add_argument("--rules", choices=RULE_CHOICES, default="both", help="the rule set(s) (default both)")
    ap.add_argument("--agents", nargs="+", metavar="SPEC", default=list(DEFAULT_AGENTS),
                    help=f"agent specs, each playing itself: {', '.join(agents.SPECS)} "
                         f"(default {' '.join(DEFAULT_AGENTS)})")
    ap.add_argument("--hands", type=int, default=20000, help="one-hand episodes per rule set and agent; 0 = none "
                                                             "(default 20000)")
    ap.add_argument("--games", type=int, default=2000, help="games to target_score per rule set and agent; 0 = none "
                                                            "(default 2000)")
    ap.add_argument("--seed", type=int, default=0, help="seed of the deals and of the agents (default 0)")
    ap.add_argument("--batch", type=int, default=2048, help="games played at once (default 2048)")
    ap.add_argument("--json", metavar="PATH", help="write every number to this JSON file")
    return ap


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """The command line, checked; a bad argument exits 2 with one line saying what is allowed."""
    ap = build_parser()
    args = ap.parse_args(argv)
    for name, value, low in (("--hands", args.hands, 0), ("--games", args.games, 0), ("--seed", args.seed, 0),
                             ("--batch", args.batch, 1)):
        if value < low:
            ap.error(f"{name} must be >= {low}, got {value}")
    if args.hands == 0 and args.games == 0:
        ap.error("nothing to play: --hands and --games are both 0")
    if len(set(args.agents)) != len(args.agents):
        ap.error(f"--agents names an agent twice: {' '.join(args.agents)}")
    for spec in args.agents:
        try:
            agents.make(spec, seed=0)
        except (ValueError, FileNotFoundError, OSError) as e:
            ap.error(f"--agents: {e}")
    args.rule_names = list(RULE_SETS) if args.rules == "both" else [args.rules]
    return args


def _finite(x: Any) -> Any:
    """``x`` with every NaN float (an interval of fewer than two units) as None: strict JSON."""
    if isinstance(x, float) and math.isnan(x):
        return None
    if isinstance(x, dict):
        return {k: _finite(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_finite(v) for v in x]
    return x


def command_line(argv: Sequence[str] | None) -> str:
    """The command as it was run, for the record."""
    return " ".join([PROG, *map(shlex.quote, sys.argv[1:] if argv is None else argv)])


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command; returns the exit status."""
    args = parse_args(argv)
    t0 = time.perf_counter()
    results = measure(args.rule_names, args.agents, args.hands, args.games, args.seed, args.batch)
    rows = table(results)
    print(format_table(rows))
    print(f"({sum(r['seconds'] for r in results):.0f} s; 95% CIs over hands and games)", file=sys.stderr)
    if args.json:
        record = {"version": VERSION, "command": command_line(argv), "seed": args.seed,
                  "hands": args.hands, "games": args.games, "batch": args.batch, "agents": list(args.agents),
                  "rules": {name: Rules.named(name).to_dict() for name in args.rule_names},
                  "results": results, "table": rows, "seconds": round(time.perf_counter() - t0, 1)}
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(_finite(record), f, indent=1, allow_nan=False)
            f.write("\n")
    return 0


def cli() -> None:
    """Console entry point."""
    sys.exit(main())


if __name__ == "__main__":
    cli()
