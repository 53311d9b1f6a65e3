"""The report card: one agent played through the whole benchmark protocol (docs/benchmark.md).

    okgin-benchmark ppo:checkpoints/okgin_ppo.pt            # or python -m okgin.benchmark ...
    okgin-benchmark mybots:MyBot --exploit-steps 5000000    # with approximate exploitability
    torchrun --nproc_per_node 2 -m okgin.benchmark expert   # the deals over 2 processes

Under each rule set of the protocol (Oklahoma, EAAI) the agent plays every anchor on the same
duplicate deals (points per hand and hands won, 95% CIs over deal pairs), then games to 100
against the rule set's game opponent (the field's unit under the EAAI rules: games won against
``eaai_simple``), and is placed on the frozen rating scale (``okgin.benchmark.scale``) from its
hands against the anchors. The card is printed and written as markdown and versioned JSON.
The matches are evaluate.py's (``okgin_trainer.matches``), seeded as it seeds them, and shared
over processes the same way under torchrun (``okgin.sharding``).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import sys
import time
from typing import Sequence

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # idle OpenMP threads sleep (see train.py); before numba/torch load

import numpy as np  # noqa: E402
from okgin_trainer.matches import MatchSettings, agent_seed, display_names, match_games, match_hands  # noqa: E402

import okgin_agents as agents  # noqa: E402
from okgin.benchmark.protocol import GAME_OPPONENT, VERSION, Protocol, resolve_spec  # noqa: E402
from okgin.benchmark.scale import SCALE_PATH, ScaleError, anchor_ratings, load_scale, place_with_ci, sha256  # noqa: E402
from okgin.sharding import Shard  # noqa: E402
from okgin_env.agent_specs import AgentOutputError  # noqa: E402

PROG = "okgin-benchmark"
CARD_FORMAT = "okgin-benchmark-card"


class Players:
    """Makes the card's agents, seeded per match and side as evaluate.py seeds a pair's (``agent_seed``);
    under torchrun through the process's ``Shard``."""

    def __init__(self) -> None:
        self.shard = Shard.from_env(lambda s, seed: agents.make(s, seed=seed, rules=self.rules))
        self.lead = self.shard is None or self.shard.rank == 0
        self.rules = None

    def make(self, spec: str, seed: int, match: int, side: int, rules):
        self.rules = rules  # a search bot simulates the rules it plays (agents.for_rules)
        s = agent_seed(seed, match, side)
        if self.shard is not None:
            return self.shard.make(spec, s, display_names([spec])[0])
        agent = agents.make(spec, seed=s, rules=rules)
        agent.name = display_names([spec])[0]
        return agent

    def episodes(self, rows: int, batch: int) -> int:
        return rows if self.shard is None else self.shard.episodes(rows, batch)


def play_rule_set(spec: str, rule_set: str, protocol: Protocol, players: Players, scale: dict, progress) -> dict:
    """The card's section for one rule set: the anchors' matches, the games, the rating."""
    rules = protocol.rules(rule_set)
    settings = MatchSettings(seed=protocol.seed, rules=rules, batch=protocol.batch, progress=progress,
                             shard=players.shard)
    anchors, deal_wins, deal_hands = [], [], []
    for k, anchor in enumerate(protocol.anchors):
        a = players.make(spec, protocol.seed, k, 0, rules)
        b = players.make(resolve_spec(anchor), protocol.seed, k, 1, rules)
        r, rows = match_hands(a, b, protocol.hands, settings)
        deals = int(rows.deal_id.max()) + 1
        deal_wins.append(np.bincount(rows.deal_id, weights=rows.win, minlength=deals))
        deal_hands.append(np.bincount(rows.deal_id, minlength=deals).astype(np.float64))
        anchors.append({"anchor": anchor, **{key: getattr(r, key) for key in (
            "hands", "deals", "points_per_hand", "points_ci", "win_rate", "win_rate_ci", "knock_rate_a", "gin_rate_a",
            "undercut_rate_a", "void_rate", "hands_per_s")}})
    section = {"rules": rules.to_dict(), "anchors": anchors, "games": None}
    if protocol.games:
        opponent = GAME_OPPONENT[rule_set]
        k = len(protocol.anchors)
        g, _ = match_games(players.make(spec, protocol.seed, k, 0, rules),
                           players.make(resolve_spec(opponent), protocol.seed, k, 1, rules), protocol.games, settings)
        section["games"] = {"opponent": opponent, **{key: getattr(g, key) for key in (
            "games", "win_rate", "win_rate_ci", "margin", "margin_ci", "hands_per_game", "unfinished")}}
    rating, ci = place_with_ci(np.stack(deal_wins), np.stack(deal_hands),
                               anchor_ratings(scale, rule_set, protocol.anchors), protocol.bootstrap, protocol.seed)
    section["rating"] = {"value": rating, "ci": ci,
                         "method": f"frozen scale v{VERSION} (random = 0), 95% percentile bootstrap over deal pairs, "
                                   f"{protocol.bootstrap} resamples"}
    return section


def exploitability(spec: str, steps: int, protocol: Protocol, out: str) -> dict:
    """Approximate exploitability under the Oklahoma rules at a budget of ``steps`` env steps
    (``okgin_trainer.exploit``: a PPO best response trained against the frozen agent, measured on
    held-out deals; a lower bound)."""
    from okgin_trainer import exploit

    report = exploit.main([spec, "--total-timesteps", str(steps), "--hands", str(min(protocol.hands, 4000)),
                           "--seed", str(protocol.seed % 100_000), "--out", out, "--set", "num_threads=0"])
    return {"budget_steps": steps, "points_per_hand": report["points_per_hand"], "points_ci": report["points_ci"],
            "hands": report["hands"], "heldout_seed": report["heldout_seed"], "start": report["start"],
            "train_seconds": report["train_seconds"]}


# ------------------------------------------------------------------- the card as text

def _num(value: float, fmt: str) -> str:
    """``value`` formatted, never as "-0" or "+-0"."""
    text = f"{value:{fmt}}"
    return text[1:] if text[:1] == "-" and float(text) == 0 and "+" not in fmt else text


def _ci(ci, fmt: str) -> str:
    return "" if ci is None else f" [{_num(ci[0], fmt)}, {_num(ci[1], fmt)}]"


def render_markdown(card: dict) -> str:
    """The card as markdown: a summary row to paste into a paper, then each rule set's table."""
    name = card["agent"]
    lines = [f"# okgin benchmark card: `{name}`", ""]
    p = card["protocol"]
    lines.append(f"Protocol v{p['version']}{'' if card['standard'] else ' (NOT the standard counts or seeds)'}: "
                 f"{p['hands']:,} hands against each anchor on duplicate deals and {p['games']:,} games to 100, "
                 f"seed {p['seed']}; 95% confidence intervals over deal pairs (game pairs for games). "
                 f"{card['date']}, {card['machine']}, {card['seconds']:.0f} s.")
    lines += ["", "| agent | EAAI: games won vs eaai_simple | Oklahoma: games won vs expert | rating (EAAI) | "
              "rating (Oklahoma) |", "|---|---|---|---|---|"]
    cells = []
    for rs in ("eaai", "oklahoma"):
        g = card["rule_sets"].get(rs, {}).get("games")
        cells.append("-" if not g else f"{g['win_rate']:.1%}{_ci([100 * x for x in g['win_rate_ci']], '.1f')}")
    for rs in ("eaai", "oklahoma"):
        r = card["rule_sets"].get(rs, {}).get("rating")
        cells.append("-" if not r else f"{_num(r['value'], '.0f')}{_ci(r['ci'], '.0f')}")
    lines.append(f"| `{name}` | " + " | ".join(cells) + " |")
    for rs, sec in card["rule_sets"].items():
        title = {"oklahoma": "Oklahoma rules (`Rules()`)", "eaai": "EAAI rules (`Rules.eaai()`)"}[rs]
        lines += ["", f"## {title}", "", "| anchor | points per hand [95% CI] | hands won [95% CI] | knock | gin | "
                  "undercut | void |", "|---|---|---|---|---|---|---|"]
        for a in sec["anchors"]:
            lines.append(f"| {a['anchor']} | {a['points_per_hand']:+.2f}{_ci(a['points_ci'], '+.2f')} | "
                         f"{a['win_rate']:.3f}{_ci(a['win_rate_ci'], '.3f')} | {a['knock_rate_a']:.3f} | "
                         f"{a['gin_rate_a']:.3f} | {a['undercut_rate_a']:.3f} | {a['void_rate']:.3f} |")
        g = sec["games"]
        if g:
            lines += ["", f"Games to 100 against {g['opponent']}: {g['games']:,} games, won {g['win_rate']:.1%}"
                      f"{_ci([100 * x for x in g['win_rate_ci']], '.1f')}, margin {g['margin']:+.1f}"
                      f"{_ci(g['margin_ci'], '+.1f')} points, {g['hands_per_game']:.1f} hands per game."]
        r = sec["rating"]
        lines += ["", f"Rating: {_num(r['value'], '.0f')}{_ci(r['ci'], '.0f')} ({r['method']})."]
    ex = card.get("exploitability")
    if ex:
        lines += ["", "## Approximate exploitability (Oklahoma rules)", "",
                  f"A PPO best response trained for {ex['budget_steps']:,} env steps against the agent wins "
                  f"{ex['points_per_hand']:+.2f}{_ci(ex['points_ci'], '+.2f')} points per hand over {ex['hands']:,} "
                  f"held-out hands (a lower bound; started from {ex['start']})."]
    lines += ["", f"Command: `{card['command']}`", ""]
    return "\n".join(lines)


# ------------------------------------------------------------------- the command

def build_parser() -> argparse.ArgumentParser:
    d = Protocol()
    ap = argparse.ArgumentParser(
        prog=PROG, description="The okgin benchmark's report card of one agent: every anchor under the Oklahoma and "
                               "EAAI rules, games to 100, a rating on the frozen scale (docs/benchmark.md).",
        epilog="Example: okgin-benchmark ppo:checkpoints/okgin_ppo.pt --out runs/benchmark/shipped")
    ap.add_argument("agent", metavar="AGENT", help=f"the agent's spec: {', '.join(agents.SPECS)}")
    ap.add_argument("--out", metavar="PREFIX", default=None,
                    help="write PREFIX.md and PREFIX.json (default runs/benchmark/<agent>)")
    ap.add_argument("--exploit-steps", type=int, default=0, metavar="N",
                    help="also train a PPO best response for N env steps against the agent (Oklahoma rules) and "
                         "report what it wins: approximate exploitability (default 0: off)")
    ap.add_argument("--rule-sets", nargs="+", choices=("oklahoma", "eaai"), default=list(d.rule_sets),
                    help="the rule sets to play (default both; a card with fewer is not standard)")
    ap.add_argument("--hands", type=int, default=d.hands,
                    help=f"hands against each anchor (default {d.hands}; other counts make a non-standard card)")
    ap.add_argument("--games", type=int, default=d.games,
                    help=f"games to 100 per rule set (default {d.games}; 0 = none)")
    ap.add_argument("--seed", type=int, default=d.seed, help=f"the deals' seed (default {d.seed}, the protocol's)")
    ap.add_argument("--scale", default=SCALE_PATH, metavar="PATH",
                    help="the frozen rating scale (default: the one shipped with okgin, protocol v1)")
    ap.add_argument("--batch", type=int, default=d.batch, help=f"games played at once (default {d.batch})")
    ap.add_argument("--no-progress", dest="progress", action="store_false", help="no progress bar on stderr")
    return ap


def safe_name(spec: str) -> str:
    """A file name for an agent spec: ``ppo:checkpoints/okgin_ppo.pt`` -> ``ppo_okgin_ppo``."""
    name = display_names([spec])[0].removesuffix(".pt")
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("_") or "agent"


def parse(argv: Sequence[str] | None) -> tuple[str, Protocol, str, int, bool, dict]:
    """(agent spec, protocol, output prefix, exploit steps, progress, scale); a bad argument exits 2 with one
    line."""
    ap = build_parser()
    ns = ap.parse_args(argv)
    if ns.exploit_steps < 0:
        ap.error(f"--exploit-steps must be >= 0, got {ns.exploit_steps}")
    try:
        protocol = Protocol(hands=ns.hands, games=ns.games, seed=ns.seed, batch=ns.batch,
                            rule_sets=tuple(dict.fromkeys(ns.rule_sets)))
    except ValueError as e:
        ap.error(str(e).replace("hands must", "--hands must").replace("games must", "--games must")
                 .replace("seed must", "--seed must").replace("batch must", "--batch must"))
    try:
        agents.make(ns.agent, seed=0)
    except (ValueError, FileNotFoundError, OSError) as e:
        ap.error(f"AGENT: {e}")
    try:
        scale = load_scale(ns.scale)
        for rs in protocol.rule_sets:
            anchor_ratings(scale, rs, protocol.anchors)
    except ScaleError as e:
        ap.error(f"--scale: {e}")
    out = ns.out or os.path.join("runs", "benchmark", safe_name(ns.agent))
    folder = os.path.dirname(os.path.abspath(out))
    if os.path.exists(folder) and not os.path.isdir(folder):
        ap.error(f"--out {out}: {folder} is a file, not a folder")
    return ns.agent, protocol, out, ns.exploit_steps, ns.progress, scale


def write_card(card: dict, out: str) -> None:
    """PREFIX.json and PREFIX.md, each written whole or not at all (a temporary file, then renamed)."""
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    for suffix, text in ((".json", json.dumps(card, indent=1) + "\n"), (".md", render_markdown(card))):
        tmp = f"{out}{suffix}.tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, out + suffix)


def main(argv: Sequence[str] | None = None) -> dict:
    """Play the card the command line asks for; print it, write it, return it."""
    spec, protocol, out, exploit_steps, progress, scale = parse(argv)
    players = Players()
    from tqdm import tqdm
    per_set = players.episodes(protocol.hands + protocol.hands % 2, protocol.batch) * len(protocol.anchors) + (
        players.episodes(protocol.games + protocol.games % 2, protocol.batch) if protocol.games else 0)
    bar = tqdm(total=per_set * len(protocol.rule_sets), unit="ep", file=sys.stderr,
               disable=not (progress and players.lead), desc="benchmark")
    t0 = time.time()
    card = {"format": CARD_FORMAT, "version": VERSION, "agent": spec, "protocol": protocol.to_dict(),
            "standard": protocol.is_standard, "rule_sets": {}}
    if spec.startswith("ppo:"):
        card["agent_sha256"] = sha256(spec[4:])
    try:
        for rs in protocol.rule_sets:
            bar.set_postfix_str(rs)
            card["rule_sets"][rs] = play_rule_set(spec, rs, protocol, players, scale, bar.update)
    except AgentOutputError as e:
        bar.close()
        print(f"{PROG}: error: {e}", file=sys.stderr)
        sys.exit(2)
    bar.close()
    if exploit_steps and players.lead:
        card["exploitability"] = exploitability(spec, exploit_steps, protocol, out + "_exploit")
    card.update(seconds=round(time.time() - t0, 1), date=time.strftime("%Y-%m-%d"),
                machine=f"{platform.machine()}, {os.cpu_count()} CPUs",
                world_size=1 if players.shard is None else players.shard.world_size,
                command=f"{PROG} " + " ".join(argv if argv is not None else sys.argv[1:]))
    if players.lead:
        print(render_markdown(card))
        try:
            write_card(card, out)
        except OSError as e:
            print(f"{PROG}: error: the card was played but not written to {out}.json/.md: {e}", file=sys.stderr)
            sys.exit(1)
        print(f"{PROG}: wrote {out}.md and {out}.json", file=sys.stderr)
    if players.shard is not None:
        players.shard.close()
    return card


def cli() -> None:
    """The ``okgin-benchmark`` command (and ``python -m okgin.benchmark``)."""
    try:
        main()
    except KeyboardInterrupt:
        sys.exit(f"{PROG}: interrupted; nothing was written (a card is written whole at the end)")


if __name__ == "__main__":
    cli()
