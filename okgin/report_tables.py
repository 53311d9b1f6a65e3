"""The tables evaluate.py prints: matches, games, a paired comparison, ratings (fixed-width text)."""

from __future__ import annotations

from typing import Sequence

from okgin_trainer.matches import GameMatchResult, MatchResult, PairedResult


def _fmt_ci(ci: tuple[float, float], fmt: str) -> str:
    return f"[{ci[0]:{fmt}}, {ci[1]:{fmt}}]"


def _name_width(names: Sequence[str]) -> int:
    """Width of a name column: the longest name (at least the 10 of the short bundled names)."""
    return max([10, *map(len, names)])


def format_matches(matches: Sequence[MatchResult]) -> str:
    wa = _name_width(["agent A", *(r.agent_a for r in matches)])
    wb = _name_width(["agent B", *(r.agent_b for r in matches)])
    head = (f"{'agent A':<{wa}} {'agent B':<{wb}} {'hands':>7}  {'win rate A [95% CI]':<24} "
            f"{'points/hand A-B [95% CI]':<28} {'knock A/B':>11} {'gin A/B':>11} {'undercut A/B':>13} "
            f"{'void':>5} {'hands/s':>8}")
    lines = [head, "-" * len(head)]
    for r in matches:
        lines.append(
            f"{r.agent_a:<{wa}} {r.agent_b:<{wb}} {r.hands:>7}  {r.win_rate:.3f} {_fmt_ci(r.win_rate_ci, '.3f'):<18} "
            f"{r.points_per_hand:+7.2f} {_fmt_ci(r.points_ci, '+.2f'):<20} "
            f"{r.knock_rate_a:5.3f}/{r.knock_rate_b:5.3f} {r.gin_rate_a:5.3f}/{r.gin_rate_b:5.3f} "
            f"{r.undercut_rate_a:6.3f}/{r.undercut_rate_b:6.3f} {r.void_rate:5.3f} {r.hands_per_s:8.0f}")
    return "\n".join(lines)


def format_games(games: Sequence[GameMatchResult]) -> str:
    wa = _name_width(["agent A", *(g.agent_a for g in games)])
    wb = _name_width(["agent B", *(g.agent_b for g in games)])
    head = (f"{'agent A':<{wa}} {'agent B':<{wb}} {'games':>6}  {'game win rate A [95% CI]':<26} "
            f"{'margin A-B [95% CI]':<28} {'hands/game':>10}")
    lines = [head, "-" * len(head)]
    for g in games:
        lines.append(f"{g.agent_a:<{wa}} {g.agent_b:<{wb}} {g.games:>6}  "
                     f"{g.win_rate:.3f} {_fmt_ci(g.win_rate_ci, '.3f'):<20} "
                     f"{g.margin:+7.1f} {_fmt_ci(g.margin_ci, '+.1f'):<20} {g.hands_per_game:10.1f}")
    return "\n".join(lines)


def format_ratings(table: Sequence[dict]) -> str:
    w = _name_width([row["agent"] for row in table])
    ci = any(row.get("rating_ci") for row in table)
    head = (f"{'rank':>4}  {'agent':<{w}} {'rating':>7}" + ("  [95% CI]     " if ci else "")
            + f"  {'hand win rate':>13}  {'points/hand':>11}")
    lines = [head, "-" * len(head)]
    for k, row in enumerate(table, 1):
        interval = f"  [{row['rating_ci'][0]:5.0f}, {row['rating_ci'][1]:5.0f}]" if ci else ""
        lines.append(f"{k:>4}  {row['agent']:<{w}} {row['rating']:7.0f}{interval}  {row['win_rate']:13.3f}  "
                     f"{row['points_per_hand']:+11.2f}")
    return "\n".join(lines)


def format_paired(paired: PairedResult) -> str:
    """One row: A - B against C in points per hand and hand win rate, with 95% CIs."""
    wa = _name_width(["agent A", paired.agent_a])
    wb = _name_width(["agent B", paired.agent_b])
    wc = _name_width(["opponent", paired.opponent])
    head = (f"{'agent A':<{wa}} {'agent B':<{wb}} {'opponent':<{wc}} {'hands':>7}  "
            f"{'points/hand A-B [95% CI]':<28} {'win rate A-B [95% CI]':<26} {'hands differing':>15}")
    row = (f"{paired.agent_a:<{wa}} {paired.agent_b:<{wb}} {paired.opponent:<{wc}} {paired.hands:>7}  "
           f"{paired.points_diff:+7.2f} {_fmt_ci(paired.points_diff_ci, '+.2f'):<20} "
           f"{paired.win_rate_diff:+.3f} {_fmt_ci(paired.win_rate_diff_ci, '+.3f'):<19} {paired.hands_differing:>15}")
    return "\n".join([head, "-" * len(head), row])
