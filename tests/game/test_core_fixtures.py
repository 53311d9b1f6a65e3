"""Seeded results of the numba core, compared bit for bit with fixtures recorded on the code of
commit bbcddf5 (before the kernels took named records, #35 items 1-2): ``tests/data/core_v1.npz``.

Each case plays seeded games through a public surface and hashes everything it returns, step by
step: ``VectorGame`` trajectories under several rule sets, episodes, autoreset on and off, partial
steps and resets, replayed deals, observations of either player; ``determinize``'s worlds; the
Gymnasium vector env against a random and an observing opponent (infos and final observations
included); the AEC env; and a seeded bot-vs-bot summary. A case that differs names itself.

To record the fixtures again (only on purpose, from the old code):
``PYTHONPATH=<checkout of bbcddf5> python tests/game/test_core_fixtures.py tests/data/core_v1.npz``
"""

from __future__ import annotations

import hashlib
import os
import sys
from typing import Any, Callable

import numpy as np
import pytest
from support import ROOT

FIXTURE = os.path.join(ROOT, "tests", "data", "core_v1.npz")

RESULT_FIELDS = ("knocker", "winner", "game_winner", "upcard", "dealer", "knock_card", "deadwood", "points",
                 "scores", "gin", "undercut", "void", "truncated_hand", "spade_doubled", "game_over", "hands",
                 "meld_id", "laid_off")
AEC_RESULT_NUMBERS = ("knocker", "winner", "gin", "undercut", "void", "turn_cap", "spade_doubled", "deadwood",
                      "points", "scores", "game_over", "game_winner", "dealer", "knock_limit")
STATE_FIELDS = ("deck", "hands", "stock_next", "pile", "pile_size", "dealer", "current_player", "phase",
                "taken_card", "knock_limit", "turns", "scores", "hands_won", "taken", "discarded", "declined", "done")


class Digest:
    """sha256 over arrays (dtype, shape and bytes) and nested dicts of them, in the order given."""

    def __init__(self) -> None:
        self.h = hashlib.sha256()

    def add(self, x: Any) -> None:
        if isinstance(x, dict):
            for key in sorted(x):
                self.h.update(str(key).encode())
                self.add(x[key])
        elif isinstance(x, (list, tuple)):
            for v in x:
                self.add(v)
        elif x is None:
            self.h.update(b"None")
        elif isinstance(x, np.ndarray) and x.dtype == object:
            for v in x.tolist():
                self.add(v)
        else:
            a = np.ascontiguousarray(x)
            self.h.update(f"{a.dtype.str}{a.shape}".encode())
            self.h.update(a.tobytes())

    def output(self, out: Any) -> None:
        """A ``StepOutput``: every field, the hand result's every field (all rows)."""
        self.add([out.current_player, out.legal_action_mask, out.observation, out.rewards, out.terminated,
                  out.truncated, out.hand_over])
        self.add([getattr(out.result, f) for f in RESULT_FIELDS])

    def state(self, st: Any) -> None:
        self.add([getattr(st, f) for f in STATE_FIELDS])

    def hexdigest(self) -> str:
        return self.h.hexdigest()


# ------------------------------------------------------------------------------------- cases

def vector_game(seed: int, rules: dict, episode: str = "hand", autoreset: bool = True, n: int = 8,
                steps: int = 160, partial: bool = False, replay: bool = False) -> str:
    """Random legal play through ``VectorGame``; ``partial``: every third step moves a random subset
    of the games (``step(games=...)``) into a kept observation buffer; without autoreset, finished
    games are dealt again by ``reset(games=...)``; ``replay``: the first deals are given decks."""
    from okgin_env.game.core import VectorGame, random_legal_actions
    from okgin_env.game.rules import Rules

    game = VectorGame(n, Rules(**rules), episode=episode, autoreset=autoreset, seed=seed)
    rng = np.random.default_rng(seed + 1000)
    d = Digest()
    if replay:
        decks = np.stack([rng.permutation(52) for _ in range(n)])
        out = game.reset(decks=decks, dealers=rng.integers(0, 2, n))
    else:
        out = game.reset()
    d.output(out)
    buf = np.zeros((n, out.observation.shape[1]), np.float32)
    for t in range(steps):
        acts = random_legal_actions(out.legal_action_mask, rng)
        if partial and t % 3 == 0:
            out = game.step(acts, games=rng.random(n) < 0.5, observation=buf)
        else:
            out = game.step(acts)
        d.output(out)
        ended = out.terminated | out.truncated
        if not autoreset and ended.any():
            out = game.reset(games=np.flatnonzero(ended))
            d.output(out)
        if t % 40 == 39:
            d.add([game.observe(0), game.observe(1, games=np.arange(0, n, 2)),
                   game.observe(rng.integers(0, 2, n), games=np.arange(1, n, 2), packed=True)])
    d.state(game.state)
    restored = VectorGame.from_state(game.get_state(), copies=2, rules=Rules(**rules), episode=episode, seed=seed)
    d.output(restored.step(random_legal_actions(restored.legal_action_mask, rng)))
    return d.hexdigest()


def determinized(seed: int, rules: dict, episode: str = "hand") -> str:
    """``determinize``'s worlds of the mover's observations of a seeded game: from a generator,
    from row seeds, and with an opponent-draw prior."""
    from okgin_env.features.determinize import determinize
    from okgin_env.game.core import VectorGame, random_legal_actions
    from okgin_env.game.rules import Rules

    game = VectorGame(12, Rules(**rules), episode=episode, autoreset=True, seed=seed)
    rng = np.random.default_rng(seed)
    out = game.reset()
    d = Digest()
    for t in range(24):
        out = game.step(random_legal_actions(out.legal_action_mask, rng))
        if t % 6 == 5:
            obs = out.observation
            d.state(determinize(obs, 3, np.random.default_rng(seed + t), rules=Rules(**rules), episode=episode))
            seeds = np.arange(len(obs), dtype=np.uint64) * np.uint64(7919) + np.uint64(t)
            d.state(determinize(obs, 2, None, rules=Rules(**rules), episode=episode, player=1, row_seeds=seeds))
            d.state(determinize(obs, 2, np.random.default_rng(t), rules=Rules(**rules), episode=episode,
                                opponent_draws=2))
    return d.hexdigest()


def vector_env(seed: int, opponent: str, steps: int = 120, **options: Any) -> str:
    """The Gymnasium vector env: observations, rewards, flags and every info (final ones included);
    with ``illegal_action="terminate"`` some learner actions are illegal on purpose."""
    from okgin_env.envs.vector import OkginVectorEnv
    from okgin_env.game.core import random_legal_actions

    env = OkginVectorEnv(6, opponent=opponent, **options)
    rng = np.random.default_rng(seed)
    d = Digest()
    obs, info = env.reset(seed=seed)
    d.add([obs, info])
    for t in range(steps):
        acts = random_legal_actions(env.action_masks(), rng)
        if options.get("illegal_action") == "terminate" and t % 7 == 3:
            acts[t % 6] = int(np.flatnonzero(~env.action_masks()[t % 6])[0])
        d.add(list(env.step(acts)))
    return d.hexdigest()


def aec(seed: int, **options: Any) -> str:
    """The AEC env (``env()``): random legal play, every ``last()`` and reward, over a few episodes."""
    from okgin_env import env as make_env

    e = make_env(**options)
    rng = np.random.default_rng(seed)
    d = Digest()
    for episode in range(6):
        e.reset(seed=seed + episode)
        for agent in e.agent_iter():
            obs, reward, term, trunc, info = e.last()
            info = dict(info)
            if "hand_result" in info:  # the numbers only: how cards are written there is the env's choice
                info["hand_result"] = {k: np.asarray(info["hand_result"][k], np.int64) for k in AEC_RESULT_NUMBERS}
            d.add([agent, obs, np.float64(reward), term, trunc, info])
            mask = obs["action_mask"]
            e.step(None if term or trunc else int(rng.choice(np.flatnonzero(mask))))
    return d.hexdigest()


def bots(seed: int, names: tuple[str, str], episode: str = "hand", n: int = 24, steps: int = 260) -> dict:
    """Two bots (agent ids 0 and 1) on seeded deals: the summary an evaluation reports (hands,
    points, wins, gins, undercuts per player) and a hash of every action."""
    import okgin_agents

    from okgin_env.game.core import VectorGame
    from okgin_env.game.rules import Rules

    players = [okgin_agents.make(name, seed=seed + k) for k, name in enumerate(names)]
    game = VectorGame(n, Rules(), episode=episode, autoreset=True, seed=seed)
    out = game.reset()
    d = Digest()
    points, wins, gins, undercuts, hands = np.zeros(2), np.zeros(2), np.zeros(2), np.zeros(2), 0
    for _ in range(steps):
        acts = np.zeros(n, np.int64)
        for p, bot in enumerate(players):
            rows = np.flatnonzero(out.current_player == p)
            if len(rows):
                acts[rows] = bot.act(out.observation[rows], out.legal_action_mask[rows])
        d.add(acts)
        out = game.step(acts)
        r = out.result
        over = out.hand_over
        hands += int(over.sum())
        points += out.rewards.sum(axis=0)
        for p in range(2):
            wins[p] += int((over & (r.winner == p)).sum())
            gins[p] += int((over & r.gin & (r.knocker == p)).sum())
            undercuts[p] += int((over & r.undercut & (r.winner == p)).sum())
    return {"hands": hands, "points": points, "wins": wins, "gins": gins, "undercuts": undercuts,
            "actions": d.hexdigest()}


CASES: dict[str, Callable[[], Any]] = {
    "game_default_s0": lambda: vector_game(0, {}),
    "game_default_s1_partial": lambda: vector_game(1, {}, partial=True),
    "game_default_s2_no_autoreset": lambda: vector_game(2, {}, autoreset=False, partial=True),
    "game_replay_s3": lambda: vector_game(3, {}, replay=True, autoreset=False),
    "game_spade_double_s4": lambda: vector_game(4, {"spade_double": True}, steps=240),
    "game_classic_s5": lambda: vector_game(5, {"knock_limit": 10, "gin_bonus": 20, "undercut_bonus": 25}),
    "game_gin_only_s6": lambda: vector_game(6, {"knock_limit": 0, "discard_taken_card": True}),
    "game_turn_cap_s7": lambda: vector_game(7, {"max_turns_per_hand": 3}, autoreset=False),
    "game_episodes_s8": lambda: vector_game(8, {"target_score": 40}, episode="game", steps=300),
    "game_episodes_loser_s9": lambda: vector_game(9, {"target_score": 30, "next_dealer": "loser",
                                                      "game_bonuses": True, "spade_double": True},
                                                  episode="game", steps=300, autoreset=False, partial=True),
    "game_episodes_alternate_s10": lambda: vector_game(10, {"target_score": 25, "next_dealer": "alternate",
                                                            "max_turns_per_hand": 4}, episode="game", steps=200),
    "determinize_s11": lambda: determinized(11, {}),
    "determinize_game_s12": lambda: determinized(12, {"target_score": 60, "discard_taken_card": True}, "game"),
    "vector_env_random_s13": lambda: vector_env(13, "random"),
    "vector_env_simple_s14": lambda: vector_env(14, "simple", episode="game", target_score=30, seat=1),
    "vector_env_illegal_s15": lambda: vector_env(15, "simple", illegal_action="terminate", reward="win",
                                                 deadwood_shaping=0.5),
    "vector_env_outs_s16": lambda: vector_env(16, "random", features="outs", obs_format="dict", steps=40),
    "aec_s17": lambda: aec(17),
    "aec_game_s18": lambda: aec(18, episode="game", target_score=20, reward="win"),
    "bots_expert_simple_s19": lambda: bots(19, ("expert", "simple")),
    "bots_greedy_random_game_s20": lambda: bots(20, ("greedy", "random"), episode="game"),
}


def flatten(name: str, value: Any) -> dict[str, np.ndarray]:
    """A case's result as npz entries (a dict case gives one entry per key)."""
    if isinstance(value, dict):
        return {f"{name}.{k}": np.asarray(v) for k, v in value.items()}
    return {name: np.asarray(value)}


@pytest.fixture(scope="module")
def recorded() -> dict[str, np.ndarray]:
    with np.load(FIXTURE) as f:
        return {k: f[k] for k in f.files}


@pytest.mark.parametrize("name", sorted(CASES))
def test_seeded_result_is_unchanged(name: str, recorded: dict[str, np.ndarray]) -> None:
    got = flatten(name, CASES[name]())
    for key, value in got.items():
        assert key in recorded, f"{key} has no recorded fixture"
        np.testing.assert_array_equal(value, recorded[key], err_msg=f"{key} differs from the code of bbcddf5")


def test_digest_sees_a_changed_bit() -> None:
    """The hash the cases compare is sensitive to one flipped value and to a dtype change."""
    a = np.zeros((3, 4), np.float32)
    base = Digest()
    base.add([a, {"x": a}])
    flipped = Digest()
    b = a.copy()
    b[2, 3] = 1.0
    flipped.add([b, {"x": a}])
    retyped = Digest()
    retyped.add([a.astype(np.float64), {"x": a}])
    assert len({base.hexdigest(), flipped.hexdigest(), retyped.hexdigest()}) == 3


if __name__ == "__main__":
    entries: dict[str, np.ndarray] = {}
    for case, run in CASES.items():
        entries.update(flatten(case, run()))
        print(case, entries.get(case, ""), flush=True)
    np.savez_compressed(sys.argv[1], **entries)
