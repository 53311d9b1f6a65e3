"""The benchmark page's figure records from the cards and the scale (docs/benchmark.md).

    python docs/figures/benchmark_records.py --cards runs/benchmark --baselines runs/benchmark/baselines \
        --search runs/benchmark/search/search_oklahoma.json --examples runs/benchmark/examples

Reads the report cards okgin-benchmark wrote (one JSON per agent) and okgin/benchmark/scale_v1.json,
and writes docs/figures/rating_scale.json, benchmark_cards.json and, when their cards exist,
baselines.json, search_card.json (the search bot's card, at smaller counts than the protocol's) and
examples_cards.json (the library examples' agents, each trained by its script's defaults). The cards are
made by okgin-benchmark itself (the commands are in each record).
"""

from __future__ import annotations

import argparse
import glob
import json
import os

from okgin.benchmark.report import cell, figures, markdown, read_card, table
from okgin.benchmark.scale import load_scale

FIG = os.path.join("docs", "figures")
MACHINE = "the project's 2-core machine (x86-64, 2 vCPUs), CPU only, shared with training runs and other work"


def write(name: str, record: dict) -> None:
    with open(os.path.join(FIG, name), "w", encoding="utf-8") as f:
        json.dump(record, f, indent=2, ensure_ascii=False)
        f.write("\n")


def points_cell(anchor: dict) -> str:
    """An anchor's points per hand with its 95% CI, as the card prints it."""
    lo, hi = anchor["points_ci"]
    return f"{anchor['points_per_hand']:+.2f} [{lo:+.2f}, {hi:+.2f}]"


def figure_cell(card: dict, column: str) -> str:
    """One of the card's figures (``okgin.benchmark.report.figures``: "oklahoma rating", "eaai games", ...)."""
    return cell(*figures(card)[column], column)


def anchor_rows(card: dict, rule_set: str) -> list[list[str]]:
    rows = [["anchor", "points per hand [95% CI]", "hands won [95% CI]"]]
    for a in card["rule_sets"][rule_set]["anchors"]:
        wl, wh = a["win_rate_ci"]
        rows.append([f"`{a['anchor']}`", points_cell(a), f"{a['win_rate']:.3f} [{wl:.3f}, {wh:.3f}]"])
    return rows


#: The library examples carded, in the table's order: (plug-in agent, library, its default --timesteps,
#: the training command).
EXAMPLES = (
    ("examples.sb3_maskable_ppo:Agent", "Stable-Baselines3 2.9.2, sb3-contrib MaskablePPO", "100,000",
     "python examples/sb3_maskable_ppo.py --seed 0"),
    ("examples.cleanrl_ppo_vector:Player", "CleanRL-style PPO (torch only)", "2,000,000",
     "OMP_NUM_THREADS=1 python examples/cleanrl_ppo_vector.py --seed 1"),
    ("examples.tianshou_ppo:Agent", "Tianshou 2.0.1 PPO", "200,000",
     "OMP_NUM_THREADS=1 python examples/tianshou_ppo.py --seed 0"),
    ("examples.torchrl_ppo:Agent", "TorchRL 0.14.1 PPO", "100,000", "python examples/torchrl_ppo.py --seed 0"),
    ("examples.rllib_selfplay:Agent", "RLlib 2.60.0 PPO self-play", "200,000 (both seats)",
     "python examples/rllib_selfplay.py --seed 0"),
)


def example_rows(cards: dict[str, dict]) -> list[list[str]]:
    """One row per carded example (Oklahoma rules): its points against three anchors, games, rating."""
    rows = [["example's agent", "library", "steps", "rating (Oklahoma)", "vs random", "vs simple", "vs expert",
             "games won vs expert (%)"]]
    for spec, library, steps, _ in EXAMPLES:
        if spec not in cards:
            continue
        card = cards[spec]
        points = {a["anchor"]: a for a in card["rule_sets"]["oklahoma"]["anchors"]}
        rows.append([f"`{spec}`", library, steps, figure_cell(card, "oklahoma rating"),
                     *(points_cell(points[k]) for k in ("random", "simple", "expert")),
                     figure_cell(card, "oklahoma games")])
    return rows


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cards", default="runs/benchmark")
    ap.add_argument("--baselines", default="runs/benchmark/baselines")
    ap.add_argument("--search", default="runs/benchmark/search/search_oklahoma.json")
    ap.add_argument("--examples", default="runs/benchmark/examples")
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
        write("search_card.json", {
            "title": f"The search bot's report card ({rs} rules only, smaller counts than the protocol's)",
            "command": card["command"], "machine": MACHINE, "date": card["date"],
            "values": {"anchors": anchor_rows(card, rs),
                       "rating": figure_cell(card, f"{rs} rating"),
                       "hands": f"{card['rule_sets'][rs]['anchors'][0]['hands']:,}",
                       "minutes": f"{card['seconds'] / 60:.0f}"},
            "notes": "The default search bot (okgin-benchmark's spec `search`) placed on the frozen scale by its own card: "
                     "hands against each anchor on the protocol's deals, no games to 100 (at about four hands a "
                     "second the protocol's counts would take hours). Its interval is wider than a standard card's."})
    examples = {c["agent"]: c for c in map(read_card, sorted(glob.glob(os.path.join(ns.examples, "*.json"))))}
    if examples:
        carded = [e for e in EXAMPLES if e[0] in examples]
        write("examples_cards.json", {
            "title": "The library examples' agents on the benchmark: each script's defaults, then its card "
                     "(Oklahoma rules, smaller counts than the protocol's)",
            "command": [*(e[-1] for e in carded), *(examples[e[0]]["command"] for e in carded)],
            "machine": MACHINE, "date": max(c["date"] for c in examples.values()),
            "values": {"table": example_rows(examples)},
            "notes": "Each example trained once at its defaults (steps: its --timesteps, the learner's decisions; RLlib's "
                     "count both seats'; its seed as in the command), its saved model loaded by "
                     "the plug-in agent named in the row, then carded: 2,000 hands against each anchor on the "
                     "protocol's deals and 1,000 games to 100 against the expert, Oklahoma rules (the rules every "
                     "example trains on). Points per hand with 95% CIs over deal pairs; the rating is on the frozen "
                     "scale v1 (random = 0; the anchors' ratings in rating_scale.json). RLlib, TorchRL and Tianshou ran in the integrations venv "
                     "(pip install -e \".[dev,integrations]\", torch 2.13.0 CPU), SB3 and CleanRL in the README's."})
    print(markdown(values["table"]))


if __name__ == "__main__":
    main()
