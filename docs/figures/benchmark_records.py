"""The benchmark page's figure records from the cards and the scale (docs/benchmark.md).

    python docs/figures/benchmark_records.py --cards runs/benchmark --baselines runs/benchmark/baselines \
        --search runs/benchmark/search/search_oklahoma.json

Reads the report cards okgin-benchmark wrote (one JSON per agent) and okgin/benchmark/scale_v1.json,
and writes docs/figures/rating_scale.json, benchmark_cards.json and, when their cards exist,
baselines.json and search_card.json (the search bot's card, at smaller counts than the protocol's). The cards are made by okgin-benchmark itself (the commands are in each record).
"""

from __future__ import annotations

import argparse
import glob
import json
import os

from okgin.benchmark.report import markdown, read_card, table
from okgin.benchmark.scale import load_scale

FIG = os.path.join("docs", "figures")
MACHINE = "the project's 2-core machine (x86-64, 2 vCPUs), CPU only, shared with training runs and other work"


def write(name: str, record: dict) -> None:
    with open(os.path.join(FIG, name), "w", encoding="utf-8") as f:
        json.dump(record, f, indent=2, ensure_ascii=False)
        f.write("\n")


def anchor_rows(card: dict, rule_set: str) -> list[list[str]]:
    rows = [["anchor", "points per hand [95% CI]", "hands won [95% CI]"]]
    for a in card["rule_sets"][rule_set]["anchors"]:
        lo, hi = a["points_ci"]
        wl, wh = a["win_rate_ci"]
        rows.append([f"`{a['anchor']}`", f"{a['points_per_hand']:+.2f} [{lo:+.2f}, {hi:+.2f}]",
                     f"{a['win_rate']:.3f} [{wl:.3f}, {wh:.3f}]"])
    return rows


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cards", default="runs/benchmark")
    ap.add_argument("--baselines", default="runs/benchmark/baselines")
    ap.add_argument("--search", default="runs/benchmark/search/search_oklahoma.json")
    ns = ap.parse_args()
    scale = load_scale()
    rows = [["anchor", "rating, Oklahoma rules", "rating, EAAI rules"]]
    for a in scale["anchors"]:
        rows.append([f"`{a}`", f"{scale['rule_sets']['oklahoma']['ratings'][a]:.0f}",
                     f"{scale['rule_sets']['eaai']['ratings'][a]:.0f}"])
    write("rating_scale.json", {
        "title": "The frozen rating scale v1: the anchors' ratings (Bradley-Terry on hands won, Elo scale, random = 0)",
        "command": scale["command"], "machine": MACHINE, "date": scale["date"],
        "values": {"table": rows, "time": f"{scale['seconds'] / 60:.0f} minutes"},
        "notes": f"A round robin of the five anchors, {scale['hands_per_pair']:,} hands a pair on duplicate deals (seed "
                 f"{scale['seed']}), under each rule set; every pair's result is in okgin/benchmark/scale_v1.json."})
    order = ["ppo:checkpoints/okgin_eaai.pt", "ppo:checkpoints/okgin_ppo.pt", "expert", "simple", "eaai_simple", "random"]
    cards = [read_card(p) for p in sorted(glob.glob(os.path.join(ns.cards, "*.json")))]
    cards.sort(key=lambda c: order.index(c["agent"]) if c["agent"] in order else len(order))
    by = {c["agent"]: c for c in cards}
    values = {"table": table(cards)}
    for spec, key in (("ppo:checkpoints/okgin_eaai.pt", "eaai_agent"), ("ppo:checkpoints/okgin_ppo.pt", "shipped")):
        if spec in by:
            g = by[spec]["rule_sets"]["eaai"]["games"]
            values[f"{key}_eaai_games"] = f"{g['win_rate']:.1%} [{100 * g['win_rate_ci'][0]:.1f}, {100 * g['win_rate_ci'][1]:.1f}]"
    if "ppo:checkpoints/okgin_eaai.pt" in by:
        values["eaai_agent_eaai"] = anchor_rows(by["ppo:checkpoints/okgin_eaai.pt"], "eaai")
    if "ppo:checkpoints/okgin_ppo.pt" in by:
        values["shipped_seconds"] = f"{by['ppo:checkpoints/okgin_ppo.pt']['seconds']:.0f} s"
    write("benchmark_cards.json", {
        "title": "Report cards of the anchors and the shipped agents (protocol v1)",
        "command": [c["command"] for c in cards], "machine": MACHINE, "date": max(c["date"] for c in cards),
        "values": values,
        "notes": "Each card as okgin-benchmark printed it (runs/benchmark/<agent>.md and .json); the table is "
                 "python -m okgin.benchmark.report over them. The times are wall-clock times on the shared machine."})
    base = [read_card(p) for p in sorted(glob.glob(os.path.join(ns.baselines, "*.json")))]
    if base:
        write("baselines.json", {
            "title": "From-scratch PPO baselines: mean over training seeds, each on its own rule set",
            "command": ["python -m okgin_trainer.recipe configs/recipes/baselines_oklahoma.yaml",
                        "python -m okgin_trainer.recipe configs/recipes/baselines_eaai.yaml",
                        *[c["command"] for c in base],
                        "python -m okgin.benchmark.report --seeds " + " ".join(
                            sorted(glob.glob(os.path.join(ns.baselines, "*.json"))))],
            "machine": MACHINE, "date": max(c["date"] for c in base),
            "values": {"table": table(base, seeds=True)},
            "notes": "Cards of non-standard counts (see the command); the interval is a t interval over the seeds."})
    if os.path.exists(ns.search):
        card = read_card(ns.search)
        rs = next(iter(card["rule_sets"]))
        rating = card["rule_sets"][rs]["rating"]
        write("search_card.json", {
            "title": f"The search bot's report card ({rs} rules only, smaller counts than the protocol's)",
            "command": card["command"], "machine": MACHINE, "date": card["date"],
            "values": {"anchors": anchor_rows(card, rs),
                       "rating": f"{rating['value']:.0f} [{rating['ci'][0]:.0f}, {rating['ci'][1]:.0f}]",
                       "hands": f"{card['rule_sets'][rs]['anchors'][0]['hands']:,}",
                       "minutes": f"{card['seconds'] / 60:.0f}"},
            "notes": "The default search bot (okgin-benchmark's spec `search`) placed on the frozen scale by its own card: "
                     "hands against each anchor on the protocol's deals, no games to 100 (at about four hands a "
                     "second the protocol's counts would take hours). Its interval is wider than a standard card's."})
    print(markdown(values["table"]))


if __name__ == "__main__":
    main()
