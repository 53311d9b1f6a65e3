"""Throughput benchmark: ``python -m okgin_env.bench [--seconds S]``.

Prints decisions per second of uniformly random legal play through ``VectorGame`` (mask and
observation building and the random choice included) at several batch sizes, each also as a
multiple of OpenSpiel's C++ gin_rummy (oklahoma) measured in the same run (when pyspiel is
installed), the Gymnasium vector env's learner steps per second (random learner against the
random opponent, N=1024, the opponent's moves included; once as random is, reading only masks,
and once given observations, as an opponent that reads them would be) with its ratio to raw
``VectorGame`` play at the same N in alternating rounds, the deadwood kernels' hands per second,
and the AEC environment's decisions per second on one game beside OpenSpiel in alternating
rounds, with the ratio AEC/OpenSpiel: in bench.py's own loop and in the loop a user writes
(``reset(seed=i)``, ``np.random.choice``).
On a shared machine compare the multiples, not the rates: they move much less with the load.
"""

from __future__ import annotations

import argparse
import os
import random
import time

import numpy as np

from okgin_env.game import melds
from okgin_env.game.core import VectorGame, random_legal_actions
from okgin_env.game.rules import Rules

VECTOR_ENV_N = 1024  #: games in the vector env line


def bench_vector(n: int, seconds: float, seed: int = 0) -> float:
    """Decisions per second of random legal play with N games (autoreset, hand episodes)."""
    game = VectorGame(n, Rules(), episode="hand", autoreset=True, seed=seed)
    rng = np.random.default_rng(seed)
    out = game.reset()
    for _ in range(20):  # warm-up (numba compile, caches)
        out = game.step(random_legal_actions(out.legal_action_mask, rng))
    steps, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        for _ in range(10):
            out = game.step(random_legal_actions(out.legal_action_mask, rng))
        steps += 10
    return steps * n / (time.perf_counter() - start)


def bench_vector_env(n: int, seconds: float, seed: int = 0, observing: bool = False) -> float:
    """Learner steps per second of ``OkginVectorEnv`` with N games: a random learner against the
    "random" opponent (hand episodes; every step also plays the opponent's moves and re-deals).
    ``observing``: the opponent is given real observations, as one that reads them would be
    (random reads only masks, so by default the env skips writing its views)."""
    from okgin_env.agent_specs import RandomAgent
    from okgin_env.envs.vector import OkginVectorEnv

    opponent = RandomAgent()
    opponent.uses_observations = observing
    env = OkginVectorEnv(n, opponent=opponent)
    rng = np.random.default_rng(seed)
    env.reset(seed=seed)
    for _ in range(20):  # warm-up (numba compile, caches)
        env.step(random_legal_actions(env.action_masks(), rng))
    steps, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        for _ in range(10):
            env.step(random_legal_actions(env.action_masks(), rng))
        steps += 10
    return steps * n / (time.perf_counter() - start)


def random_hands(n: int, size: int, rng: np.random.Generator) -> np.ndarray:
    """(n, 52) bool hands of ``size`` random cards."""
    order = rng.permuted(np.tile(np.arange(52), (n, 1)), axis=1)[:, :size]
    hands = np.zeros((n, 52), bool)
    np.put_along_axis(hands, order, True, axis=1)
    return hands


def bench_kernel(fn, hands: np.ndarray, seconds: float) -> float:
    fn(hands)
    calls, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        fn(hands)
        calls += 1
    return calls * len(hands) / (time.perf_counter() - start)


def bench_aec(seconds: float, seed: int = 0, user_loop: bool = False) -> float | None:
    """Decisions per second of random legal play through the PettingZoo AEC env ``env()``.

    The usual PettingZoo loop, each game (one hand) started anew: ``reset()``, then
    ``for agent in env.agent_iter(): obs, ... = env.last(); env.step(...)`` with a random legal
    action (``None`` for a finished agent). Only decisions are counted.

    ``user_loop=True``: the loop exactly as a user writes it from PettingZoo's documentation, each
    game seeded (``reset(seed=i)``, i = 0, 1, ...) and the action drawn by
    ``np.random.choice(np.flatnonzero(obs["action_mask"]))`` (numpy's global generator, seeded
    with ``seed`` here): an ``np.int64``, not an ``int``, and a draw that costs microseconds.
    """
    try:
        from okgin_env.envs.aec import env as make_env
    except ImportError:
        return None
    e = make_env()
    rng = np.random.default_rng(seed)
    steps = 0
    games = 0

    def game() -> None:
        nonlocal steps
        e.reset()
        for _ in e.agent_iter():
            obs, _, term, trunc, _ = e.last()
            if term or trunc:
                e.step(None)
            else:
                legal = np.flatnonzero(obs["action_mask"])
                e.step(int(legal[rng.integers(len(legal))]))
                steps += 1

    def seeded_game() -> None:  # the user's loop, line for line
        nonlocal steps, games
        e.reset(seed=games)
        games += 1
        for agent in e.agent_iter():
            obs, rew, term, trunc, info = e.last()
            if term or trunc:
                action = None
            else:
                action = np.random.choice(np.flatnonzero(obs["action_mask"]))
                steps += 1
            e.step(action)

    if user_loop:
        np.random.seed(seed)
        game = seeded_game
    for _ in range(20):  # warm-up (numba compile, caches)
        game()
    steps, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        game()
    return steps / (time.perf_counter() - start)


def openspiel_random_play(seconds: float, seed: int = 0, restart: str = "clone") -> float | None:
    """Decisions per second of OpenSpiel's C++ gin_rummy (oklahoma variant), one state at a time.

    Random legal play: a decision node takes a uniformly random legal action; a chance node (the
    deal, stock draws) takes a uniformly random outcome (gin_rummy's chance outcomes are equally
    likely: checked in the warm-up) and is not counted as a decision. ``restart="clone"``: a
    finished game restarts from a clone of the initial state (OpenSpiel at its fastest);
    ``"fresh"``: from ``game.new_initial_state()``, as the usual loop over games writes it, which
    costs milliseconds per game (it rebuilds the meld tables). None when pyspiel is not installed.
    """
    try:
        import pyspiel
    except ImportError:
        return None
    game = pyspiel.load_game("gin_rummy", {"oklahoma": True})
    rng = random.Random(seed)  # Python's, not numpy's: cheaper per scalar draw
    initial = game.new_initial_state()
    state = initial.clone()

    def run(n: int, check: bool = False) -> None:
        nonlocal state
        done = 0
        while done < n:
            if state.is_terminal():
                state = initial.clone() if restart == "clone" else game.new_initial_state()
                continue
            if check and state.is_chance_node():
                probs = [p for _, p in state.chance_outcomes()]
                assert max(probs) - min(probs) < 1e-9, "chance outcomes are not uniform"
            legal = state.legal_actions()
            if not state.is_chance_node():
                done += 1
            state.apply_action(legal[rng.randrange(len(legal))])

    run(500, check=True)  # warm-up
    steps, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        run(100)
        steps += 100
    return steps / (time.perf_counter() - start)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=2.0, help="time per measurement")
    ap.add_argument("--sizes", type=int, nargs="+", default=[1, 64, 1024, 4096], help="batch sizes")
    ap.add_argument("--rounds", type=int, default=3, help="alternating rounds of the envs and their anchors (raw play, OpenSpiel)")
    args = ap.parse_args()
    print(f"machine: {os.cpu_count()} cores; numba threads: {__import__('numba').get_num_threads()}")
    spiel = openspiel_random_play(args.seconds)
    if spiel is not None:
        print(f"OpenSpiel C++ gin_rummy (oklahoma, one state at a time): {spiel:,.0f} decisions/s", flush=True)
    print("random legal play through VectorGame (hand episodes, autoreset, mask + observation):")
    raw = {}
    for n in args.sizes:
        raw[n] = bench_vector(n, args.seconds)
        ratio = f"  ({raw[n] / spiel:5.1f}x OpenSpiel)" if spiel else ""
        print(f"  N={n:5d}: {raw[n]:12,.0f} decisions/s{ratio}", flush=True)
    compare_vector_env(VECTOR_ENV_N, args.seconds, args.rounds)
    rng = np.random.default_rng(0)
    h10, h11 = random_hands(4096, 10, rng), random_hands(4096, 11, rng)
    print("deadwood kernels at N=4096:")
    print(f"  hand_deadwood (10 cards):          {bench_kernel(melds.hand_deadwood, h10, args.seconds):14,.0f} hands/s")
    print(f"  deadwood_after_discard (11 cards): {bench_kernel(melds.deadwood_after_discard, h11, args.seconds):14,.0f} hands/s")
    print("one game at a time from Python, random legal play:")
    compare_one_game(args.seconds, args.rounds)


def compare_vector_env(n: int, seconds: float, rounds: int = 3) -> None:
    """The vector env against raw ``VectorGame`` play at the same N in alternating rounds (so both
    see the same load); prints the env's best round and the median of the per-round ratios."""
    rates: dict[bool, list[float]] = {False: [], True: []}
    ratios: dict[bool, list[float]] = {False: [], True: []}
    for _ in range(rounds):
        for observing in (False, True):
            rates[observing].append(bench_vector_env(n, seconds, observing=observing))
        raw = bench_vector(n, seconds)
        for observing in (False, True):
            ratios[observing].append(rates[observing][-1] / raw)
    print(f"Gymnasium vector env (OkginVectorEnv, random learner vs random opponent, N={n}):")
    for observing, how in ((False, "random (reads only masks)"), (True, "random given observations")):
        r = sorted(ratios[observing])
        print(f"  opponent {how:27s}: {max(rates[observing]):10,.0f} learner steps/s = {r[len(r) // 2]:.2f}x raw "
              f"VectorGame play at N={n} (median of {rounds} alternating rounds; range {r[0]:.2f}-{r[-1]:.2f})",
              flush=True)


def compare_one_game(seconds: float, rounds: int = 3) -> None:
    """The AEC env against OpenSpiel in alternating rounds (so all see the same load), OpenSpiel
    restarting each game both ways (see :func:`openspiel_random_play`); prints each one's best
    round and the median of the per-round ratios."""
    aec, user, anchors = [], [], {"clone": [], "fresh": []}
    for _ in range(rounds):
        aec.append(bench_aec(seconds))
        user.append(bench_aec(seconds, user_loop=True))
        for restart, rates in anchors.items():
            rates.append(openspiel_random_play(seconds, restart=restart))
    if aec[0] is not None:
        print(f"  PettingZoo AEC env (env(), agent_iter loop): {max(aec):12,.0f} decisions/s")
        print(f"  PettingZoo AEC env, the user's loop (reset(seed=i), np.random.choice): {max(user):12,.0f} decisions/s")
    if anchors["clone"][0] is None:
        print("  OpenSpiel gin_rummy: skipped (pyspiel is not installed: pip install open_spiel)")
        return
    for restart, rates in anchors.items():
        how = "new game = clone of an initial state" if restart == "clone" else "new game = new_initial_state()"
        print(f"  OpenSpiel gin_rummy (C++, oklahoma; {how}): {max(rates):12,.0f} decisions/s")
        if aec[0] is not None:
            for what, mine in (("AEC env", aec), ("AEC env, user's loop", user)):
                ratios = sorted(a / o for a, o in zip(mine, rates))
                print(f"    ratio {what} / OpenSpiel ({restart}): {ratios[len(ratios) // 2]:.2f}x (median of {rounds} "
                      f"alternating rounds; range {ratios[0]:.2f}-{ratios[-1]:.2f})")

if __name__ == "__main__":
    main()
