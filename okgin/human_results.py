"""``evaluate.py --human-results PATH``: a person's results against each bot, read from the file
``play.py --web`` writes (one finished or abandoned game a line), in evaluate.py's tables."""

from __future__ import annotations

import json
import sys
from typing import Sequence

import numpy as np
from okgin_trainer.matches import GameMatchResult, MatchResult
from okgin_trainer.stats import mean_ci, rate_ci

from okgin.report_tables import format_games, format_matches
from okgin_env.game.rules import Rules

HUMAN_RESULTS_FORMAT = "okgin-human-results"  #: okgin.web.results.RESULTS_FORMAT (one finished game a line)


def read_human_results(path: str) -> tuple[list[dict], int]:
    """(records, lines skipped) of a results file written by ``play.py --web``.

    A line that is not a whole JSON record (a server killed mid-write) is skipped and counted.
    Raises ``OSError`` / ``ValueError`` (one line) for a missing file or one that is not a results file.
    """
    records, skipped = [], 0
    with open(path, encoding="utf-8") as f:
        for line in f:
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
            except json.JSONDecodeError:
                skipped += 1
                continue
            if not isinstance(rec, dict) or rec.get("format") != HUMAN_RESULTS_FORMAT:
                raise ValueError(f"{path} is not a human results file (a line without "
                                 f"\"format\": \"{HUMAN_RESULTS_FORMAT}\")")
            records.append(rec)
    return records, skipped


def human_matches(records: Sequence[dict]) -> tuple[list[MatchResult], list[GameMatchResult]]:
    """The human (agent A) against each bot (agent B), per rule set: hands, and full games where played.

    Win rate counts a void hand as half; points per hand is the human's minus the bot's. The 95% CIs
    are over games (the hands of one game are correlated), as evaluation's are over deal pairs.
    """
    default = Rules().to_dict()
    groups: dict[str, list[dict]] = {}
    for r in records:
        changed = ",".join(f"{k}={v}" for k, v in sorted((r.get("rules") or {}).items()) if default.get(k) != v)
        groups.setdefault(r["opponent"] + (f" [{changed}]" if changed else ""), []).append(r)
    matches, games = [], []
    for label, group in groups.items():
        # an abandoned game (thrown away mid-game on the page) is counted as unfinished, not played
        recs = [r for r in group if not r.get("abandoned")]
        if not recs:
            continue
        hands = [(k, h) for k, r in enumerate(recs) for h in r["hands"]]
        units = np.array([k for k, _ in hands], np.int64)
        win = np.array([0.5 if h["void"] else float(h["winner"] == 0) for _, h in hands])
        pts = np.array([h["points"][0] - h["points"][1] for _, h in hands], np.float64)
        rate = lambda cond: float(np.mean([bool(cond(h)) for _, h in hands])) if hands else float("nan")  # noqa: E731
        seconds = float(sum(r.get("seconds") or 0.0 for r in recs))
        wr, wr_ci = rate_ci(win, units)
        pp, pp_ci = mean_ci(pts, units)
        matches.append(MatchResult(
            agent_a="human", agent_b=label, hands=len(hands), deals=len(hands), duplicate=False,
            wins_a=int(sum(1 for _, h in hands if h["winner"] == 0 and not h["void"])),
            wins_b=int(sum(1 for _, h in hands if h["winner"] == 1 and not h["void"])),
            voids=int(sum(1 for _, h in hands if h["void"])), win_rate=wr, win_rate_ci=wr_ci,
            points_per_hand=pp, points_ci=pp_ci,
            knock_rate_a=rate(lambda h: h["knocker"] == 0), knock_rate_b=rate(lambda h: h["knocker"] == 1),
            gin_rate_a=rate(lambda h: h["gin"] and h["winner"] == 0), gin_rate_b=rate(lambda h: h["gin"] and h["winner"] == 1),
            undercut_rate_a=rate(lambda h: h["undercut"] and h["winner"] == 0),
            undercut_rate_b=rate(lambda h: h["undercut"] and h["winner"] == 1),
            void_rate=rate(lambda h: h["void"]), seconds=seconds,
            hands_per_s=len(hands) / seconds if seconds > 0 else float("nan"), cpu_seconds=0.0))
        full = [r for r in recs if r["episode"] == "game" and r.get("final_scores")]
        if full:
            gw = np.array([0.5 if r["winner"] is None else float(r["winner"] == 0) for r in full])
            margin = np.array([r["final_scores"][0] - r["final_scores"][1] for r in full], np.float64)
            gwr, gwr_ci = rate_ci(gw)
            gm, gm_ci = mean_ci(margin)
            games.append(GameMatchResult(
                agent_a="human", agent_b=label, games=len(full), duplicate=False,
                wins_a=int(sum(r["winner"] == 0 for r in full)), wins_b=int(sum(r["winner"] == 1 for r in full)),
                unfinished=len(group) - len(recs), win_rate=gwr, win_rate_ci=gwr_ci, margin=gm, margin_ci=gm_ci,
                hands_per_game=float(np.mean([len(r["hands"]) for r in full])),
                seconds=float(sum(r.get("seconds") or 0.0 for r in full))))
    return matches, games


def human_report(path: str, json_path: str | None = None) -> dict:
    """``--human-results PATH``: print the human's results against each bot in the evaluation tables."""
    records, skipped = read_human_results(path)
    finished = [r for r in records if not r.get("abandoned")]
    if not finished:
        raise ValueError(f"{path} holds no finished games ({len(records)} abandoned)")
    matches, games = human_matches(records)
    print(f"okgin evaluation of human results: {path}, {len(finished)} finished game(s), "
          f"{len(records) - len(finished)} abandoned, {sum(len(r['hands']) for r in finished)} hands "
          "(void = half a win; CIs over games; abandoned games are not counted)")
    if skipped:
        print(f"evaluate.py: skipped {skipped} incomplete line(s) in {path}", file=sys.stderr)
    print()
    table = format_matches(matches).splitlines()
    if table[0].rstrip().endswith("hands/s"):  # a person's pace is not a speed figure: drop that column
        table = [line[:-9] for line in table]
    print("\n".join(table))
    if games:
        print()
        print(format_games(games))
    report = {"human_results": path, "records": len(finished), "abandoned": len(records) - len(finished),
              "skipped_lines": skipped,
              "matches": [m.to_dict() for m in matches], "games": [g.to_dict() for g in games]}
    if json_path:
        with open(json_path, "w") as f:
            json.dump(report, f, indent=2)
    return report
