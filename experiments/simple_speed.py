"""okgin's ``simple`` bot against itself beside OpenSpiel's C++ simple bot against itself: hands/s.

The anchor of evaluate.py's speed. okgin's side is ``evaluate.py --agents simple simple``'s match
(``okgin_trainer.matches.match_hands``: duplicate deals, ``--batch`` games at once, every bot output
checked); OpenSpiel's is ``gin_rummy`` with its Oklahoma option and two of its
``SimpleGinRummyBot`` (``pyspiel.make_simple_gin_rummy_bot``; its ``knock_card`` parameter stays 10,
as the bot reads the hand's knock card from the observation), one hand (an OpenSpiel game) after
another, chance outcomes (the deal, the stock draws) drawn uniformly by Python's ``random``. A
finished game restarts from a clone of a start state (OpenSpiel at its fastest) or from
``new_initial_state()`` (milliseconds each: it rebuilds the meld tables). The sides alternate in one
process, ``--rounds`` rounds, so that load from other processes falls on all alike; read the medians
of the per-round ratios.

okgin's rounds are timed after a warm-up match (numba's one-time set-up and the kernels' cache
loads, about half a second, which evaluate.py's own hands/s includes). With ``--evaluate`` each
okgin round is instead a run of ``evaluate.py --agents simple simple`` in a new process, and its
figure the hands/s that evaluate.py reports (its match's time, the one-time set-up included).

    python -m experiments.simple_speed --hands 20000 --seconds 2 --rounds 5
    python -m experiments.simple_speed --evaluate --hands 100000 --seconds 4 --rounds 3
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import okgin_agents
from okgin_trainer.matches import MatchSettings, match_hands


def okgin_hands_per_second(hands: int, seed: int, batch: int = 1024) -> tuple[float, float]:
    """(hands per wall second, hands per CPU second) of ``simple`` against ``simple`` as evaluate.py
    plays it: ``hands`` hands on duplicate deals from ``seed``."""
    a, b = okgin_agents.make("simple", seed=seed + 1), okgin_agents.make("simple", seed=seed + 2)
    result, _ = match_hands(a, b, hands, MatchSettings(seed=seed, batch=batch))
    return result.hands_per_s, result.hands / max(result.cpu_seconds, 1e-9)


def evaluate_hands_per_second(hands: int, seed: int, batch: int = 1024) -> tuple[float, float]:
    """(hands/s, hands per CPU second) that ``evaluate.py --agents simple simple`` reports for ``hands``
    hands from ``seed``, run in a new process (the checkout's evaluate.py: run from its root)."""
    script = Path(__file__).resolve().parents[1] / "evaluate.py"
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "report.json")
        subprocess.run([sys.executable, str(script), "--agents", "simple", "simple", "--hands", str(hands), "--seed",
                        str(seed), "--batch", str(batch), "--no-progress", "--json", out], check=True,
                       stdout=subprocess.DEVNULL)
        with open(out) as f:
            match = json.load(f)["matches"][0]
    return match["hands_per_s"], match["hands"] / max(match["cpu_seconds"], 1e-9)


def openspiel_hands_per_second(seconds: float, seed: int = 0, restart: str = "clone") -> tuple[float, float] | None:
    """(hands per wall second, hands per CPU second) of OpenSpiel's simple bot against itself for about
    ``seconds``; None when pyspiel is not installed. ``restart``: "clone" or "fresh" (see the module)."""
    if restart not in ("clone", "fresh"):
        raise ValueError(f"restart must be 'clone' or 'fresh', got {restart!r}")
    try:
        import pyspiel
    except ImportError:
        return None
    game = pyspiel.load_game("gin_rummy", {"oklahoma": True})
    bots = [pyspiel.make_simple_gin_rummy_bot(game.get_parameters(), p) for p in (0, 1)]
    rng = random.Random(seed)  # Python's, not numpy's: cheaper per scalar draw
    initial = game.new_initial_state()
    hands, start, cpu = 0, time.perf_counter(), time.process_time()
    while time.perf_counter() - start < seconds:
        state = initial.clone() if restart == "clone" else game.new_initial_state()
        for bot in bots:
            bot.restart()  # the bot keeps per-hand memory (its planned meld declarations)
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes = state.chance_outcomes()
                state.apply_action(outcomes[rng.randrange(len(outcomes))][0])
            else:
                state.apply_action(bots[state.current_player()].step(state))
        hands += 1
    return hands / (time.perf_counter() - start), hands / max(time.process_time() - cpu, 1e-9)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--hands", type=int, default=20000, help="okgin hands per round (duplicate deals)")
    parser.add_argument("--seconds", type=float, default=2.0, help="OpenSpiel's time per round and restart kind")
    parser.add_argument("--rounds", type=int, default=5, help="alternating rounds")
    parser.add_argument("--batch", type=int, default=1024, help="okgin games at once (evaluate.py's --batch)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--evaluate", action="store_true",
                        help="okgin's rounds as evaluate.py runs in new processes (their reported hands/s)")
    args = parser.parse_args(argv)
    if args.rounds < 1 or args.hands < 2 or args.seconds <= 0 or args.batch < 1:
        parser.error("--rounds >= 1, --hands >= 2, --seconds > 0 and --batch >= 1 are required")
    if openspiel_hands_per_second(0.1) is None:
        parser.error("pyspiel is not installed: pip install open_spiel")
    mine_of = evaluate_hands_per_second if args.evaluate else okgin_hands_per_second
    if not args.evaluate:
        okgin_hands_per_second(2, args.seed, args.batch)  # warm-up: numba's set-up, the kernels' cache loads
    ratios: dict[str, list[float]] = {"clone": [], "fresh": []}
    cpu_ratios: dict[str, list[float]] = {"clone": [], "fresh": []}
    for r in range(args.rounds):
        mine, mine_cpu = mine_of(args.hands, args.seed + r, args.batch)
        line = f"round {r}: okgin simple{' (evaluate.py)' if args.evaluate else ''} {mine:8,.0f} hands/s"
        for restart in ("clone", "fresh"):
            theirs, theirs_cpu = openspiel_hands_per_second(args.seconds, args.seed + r, restart)
            ratios[restart].append(mine / theirs)
            cpu_ratios[restart].append(mine_cpu / theirs_cpu)
            line += f", OpenSpiel ({restart}) {theirs:6,.0f} hands/s = {mine / theirs:5.1f}x"
        print(line, flush=True)
    for restart in ("clone", "fresh"):
        r, c = sorted(ratios[restart]), sorted(cpu_ratios[restart])
        print(f"okgin simple / OpenSpiel simple bot ({restart}): {float(np.median(r)):.1f}x wall (range {r[0]:.1f}-"
              f"{r[-1]:.1f}), {float(np.median(c)):.1f}x per CPU second, median of {args.rounds} alternating rounds")


if __name__ == "__main__":
    main()
