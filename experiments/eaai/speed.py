"""Self-play speed of ``eaai_simple`` beside okgin's ``simple``: hands per second.

Each bot plays itself on ``VectorGame(N, rules, episode="hand", autoreset=True)``, driven like the
README's loop (each seat's bot acts on its rows, then one step): ``eaai_simple`` under
``Rules.eaai()``, ``simple`` under the default ``Rules()``. Both games run in one process and take
turns every ``--slice`` steps, so that load from other processes falls on both alike; a round gives
each about ``--seconds`` of CPU time. Per round it prints hands per CPU second (the process's own
time, which other processes on the machine disturb far less than wall time) and per wall second
of each, and their ratios; the figure to read is the median over rounds of eaai_simple's rate over
simple's.

    python -m experiments.eaai.speed --seconds 5 --rounds 7 --seed 0
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import okgin_agents

from okgin_env import Rules, VectorGame


class SelfPlay:
    """One bot against itself on ``games`` games: ``run(steps)`` plays on and times it."""

    def __init__(self, name: str, rules: Rules, games: int, seed: int) -> None:
        if games < 1:
            raise ValueError(f"games must be >= 1, got {games}")
        self.game = VectorGame(games, rules, episode="hand", autoreset=True, seed=seed)
        self.bots = [okgin_agents.make(name, seed=seed + 1), okgin_agents.make(name, seed=seed + 2)]
        self.actions = np.zeros(games, np.int64)
        self.out = self.game.reset()
        self.hands, self.cpu, self.wall = 0, 0.0, 0.0
        self.run(2)  # the first steps load (or compile) the kernels: not counted
        self.hands, self.cpu, self.wall = 0, 0.0, 0.0

    def run(self, steps: int) -> None:
        cpu, wall = time.process_time(), time.perf_counter()
        out, hands = self.out, 0
        for _ in range(steps):
            for p, bot in enumerate(self.bots):
                rows = out.current_player == p
                self.actions[rows] = bot.act(out.observation[rows], out.legal_action_mask[rows])
            out = self.game.step(self.actions)
            hands += int(out.hand_over.sum())
        self.out = out
        self.hands += hands
        self.cpu += time.process_time() - cpu
        self.wall += time.perf_counter() - wall


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=5.0, help="CPU seconds of each bot per round")
    parser.add_argument("--rounds", type=int, default=7, help="rounds, each a ratio")
    parser.add_argument("--slice", type=int, default=20, help="steps each game plays before the other's turn")
    parser.add_argument("--games", type=int, default=1024, help="games played at once")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if args.rounds < 1 or args.seconds <= 0 or args.slice < 1:
        parser.error("--rounds and --slice must be >= 1 and --seconds > 0")
    eaai = SelfPlay("eaai_simple", Rules.eaai(), args.games, args.seed)
    simple = SelfPlay("simple", Rules(), args.games, args.seed)
    cpu_ratios, wall_ratios = [], []
    for r in range(args.rounds):
        for side in (eaai, simple):
            side.hands, side.cpu, side.wall = 0, 0.0, 0.0
        while min(eaai.cpu, simple.cpu) < args.seconds:
            eaai.run(args.slice)
            simple.run(args.slice)
        cpu_ratios.append((eaai.hands / eaai.cpu) / (simple.hands / simple.cpu))
        wall_ratios.append((eaai.hands / eaai.wall) / (simple.hands / simple.wall))
        print(f"round {r}: hands per CPU s: eaai_simple {eaai.hands / eaai.cpu:,.0f}, simple "
              f"{simple.hands / simple.cpu:,.0f}, ratio {cpu_ratios[-1]:.3f}; per wall s: eaai_simple "
              f"{eaai.hands / eaai.wall:,.0f}, simple {simple.hands / simple.wall:,.0f}, ratio {wall_ratios[-1]:.3f}",
              flush=True)
    print(f"median ratio eaai_simple / simple over {args.rounds} rounds: {float(np.median(cpu_ratios)):.3f} "
          f"(CPU time), {float(np.median(wall_ratios)):.3f} (wall time)")


if __name__ == "__main__":
    main()
