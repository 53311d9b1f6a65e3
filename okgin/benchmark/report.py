"""Several report cards side by side: the table a paper or a page shows (docs/benchmark.md).

    python -m okgin.benchmark.report runs/benchmark/*.json
    python -m okgin.benchmark.report runs/benchmark/baselines_*.json --seeds --json table.json

One row per card: the share of games won against the game opponent and the rating, under each
rule set the card played. With ``--seeds`` the cards whose agents differ only by a ``seed<N>``
in their spec (a training run repeated with other seeds) make one row: the mean over seeds with a
95% t interval over seeds (which says how much a rerun moves the result, wider than a card's own
interval), and each seed's value.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from typing import Sequence

import numpy as np

from okgin.benchmark.card import CARD_FORMAT

RULE_SETS = ("eaai", "oklahoma")
T975 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262}  #: t quantiles by df


def read_card(path: str) -> dict:
    """A card's JSON; a file that is not one is a ValueError naming it."""
    try:
        with open(path, encoding="utf-8") as f:
            card = json.load(f)
    except (OSError, json.JSONDecodeError) as e:
        raise ValueError(f"{path}: cannot read a card ({e})") from None
    if card.get("format") != CARD_FORMAT:
        raise ValueError(f"{path}: not an okgin-benchmark card (its format is {card.get('format')!r})")
    return card


def figures(card: dict) -> dict:
    """{column: (value, (lo, hi) or None)} of one card: games won (percent) and rating per rule set."""
    out = {}
    for rs in RULE_SETS:
        sec = card["rule_sets"].get(rs)
        if sec is None:
            continue
        if sec.get("games"):
            g = sec["games"]
            out[f"{rs} games"] = (100 * g["win_rate"], tuple(100 * x for x in g["win_rate_ci"]))
        out[f"{rs} rating"] = (sec["rating"]["value"], tuple(sec["rating"]["ci"]) if sec["rating"]["ci"] else None)
    return out


def mean_over_seeds(values: list[float]) -> tuple[float, tuple[float, float] | None]:
    """The mean and its 95% t interval over independent seeds (None for one seed)."""
    v = np.asarray(values, np.float64)
    if len(v) < 2:
        return float(v.mean()), None
    half = T975.get(len(v) - 1, 1.96) * v.std(ddof=1) / np.sqrt(len(v))
    return float(v.mean()), (float(v.mean() - half), float(v.mean() + half))


def group_key(spec: str) -> str:
    """The spec with its ``seed<N>`` removed: cards of runs that differ only by seed share it."""
    return re.sub(r"seed\d+", "seed*", spec)


COLUMNS = {"eaai games": "EAAI: games won vs eaai_simple (%)", "oklahoma games": "Oklahoma: games won vs expert (%)",
           "eaai rating": "rating (EAAI)", "oklahoma rating": "rating (Oklahoma)"}


def number(value: float, fmt: str) -> str:
    """``value`` formatted, never as "-0" (a rating of -0.4 reads 0)."""
    text = f"{value:{fmt}}"
    return text[1:] if text.startswith("-") and float(text) == 0 else text


def cell(value: float, ci, column: str) -> str:
    """One figure of ``figures`` as the tables show it: games in percent to a tenth, ratings whole, with its CI."""
    fmt = ".1f" if column.endswith("games") else ".0f"
    return number(value, fmt) + ("" if ci is None else f" [{number(ci[0], fmt)}, {number(ci[1], fmt)}]")


def table(cards: Sequence[dict], seeds: bool = False) -> list[list[str]]:
    """The rows (header first) of the comparison; with ``seeds``, one row per group of seeds."""
    groups: dict[str, list[dict]] = {}
    for c in cards:
        groups.setdefault(group_key(c["agent"]) if seeds else c["agent"], []).append(c)
    columns = [k for k in COLUMNS if any(k in figures(c) for c in cards)]
    rows = [["agent", *(["seeds"] if seeds else []), *(COLUMNS[k] for k in columns)]]
    for name, members in groups.items():
        row = [f"`{name}`"] + ([str(len(members))] if seeds else [])
        for k in columns:
            got = [figures(c)[k] for c in members if k in figures(c)]
            if not got:
                row.append("-")
            elif seeds:
                m, ci = mean_over_seeds([v for v, _ in got])
                row.append(cell(m, ci, k) + " (" + ", ".join(cell(v, None, k) for v, _ in got) + ")")
            else:
                row.append(cell(*got[0], k))
        rows.append(row)
    return rows


def markdown(rows: list[list[str]]) -> str:
    return "\n".join("| " + " | ".join(r) + " |" for r in [rows[0], ["---"] * len(rows[0]), *rows[1:]])


def main(argv: Sequence[str] | None = None) -> list[list[str]]:
    ap = argparse.ArgumentParser(prog="python -m okgin.benchmark.report",
                                 description="Report cards side by side (okgin-benchmark's JSON files).")
    ap.add_argument("cards", nargs="+", metavar="CARD.json")
    ap.add_argument("--seeds", action="store_true",
                    help="one row per group of cards whose agents differ only by seed<N>: mean and 95%% t interval")
    ap.add_argument("--json", metavar="PATH", help="also write the rows (header first) as JSON")
    ns = ap.parse_args(argv)
    try:
        cards = [read_card(p) for p in ns.cards]
    except ValueError as e:
        ap.error(str(e))
    if not all(c["standard"] for c in cards):
        print("note: some cards are not standard (other counts or seeds): "
              + ", ".join(c["agent"] for c in cards if not c["standard"]), file=sys.stderr)
    rows = table(cards, ns.seeds)
    print(markdown(rows))
    if ns.json:
        with open(ns.json, "w", encoding="utf-8") as f:
            json.dump(rows, f, indent=1)
    return rows


if __name__ == "__main__":
    main()
