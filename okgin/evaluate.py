"""Evaluate okgin agents against each other on duplicate deals.

    python evaluate.py --agents expert simple random --hands 20000 --seed 0 \\
        [--games N] [--no-duplicate] [--rules key=value ...] [--batch 1024] [--json out.json] [--plot rr.png]
    python evaluate.py --paired A B --opponent C --hands 20000 --seed 0     # A - B against C, paired
    torchrun --nproc_per_node K evaluate.py ...                               # the deals over K processes

Two agents play head to head; three or more play a round robin (every pair on the same
deals) followed by a rating table. Agent specs are those of ``agents.make``: random, greedy,
simple, expert, search[:K[:PATH]], ppo:PATH.

How hands are scored
--------------------
* **Duplicate deals** (the default): every deal (deck order and dealer) is played twice,
  once with each agent in each seat, so luck of the cards cancels. ``--no-duplicate``
  plays every deal once, agent A taking player 0 on even and player 1 on odd deals.
* **Win rate** of agent A counts a void hand (wall or turn cap) as half a win; the
  ``void`` column says how many hands that was.
* **Points per hand** is A's points minus B's points per hand (spade doubling included).
* **95% confidence intervals** are mean +/- 1.96 standard errors over independent units:
  deal pairs under duplicate deals (the two halves of a pair are correlated), hands
  otherwise; for games, game pairs / games. Win rates get a Wilson interval at the effective
  sample size of those units instead (``okgin.stats.rate_ci``), which stays inside [0, 1].
* **Paired comparison** (``--paired A B --opponent C``): A and B each play C on the same deals,
  seats and agent seeds; A - B per hand with a CI over deal pairs (an agent paired with itself
  reads exactly 0).
* **Rates per side**: knock = hands the side knocked; gin = hands the side won by gin;
  undercut = hands the side undercut the opponent's knock; void = hands nobody scored.
* With ``--games N``, N full games to ``target_score`` (``episode="game"``) are played as
  well; under duplicate deals each game's first deal is replayed with seats swapped (later
  deals come from the game's generator, so they differ between the two halves).
* **Ratings** (round robin): a Bradley-Terry fit of all pairs' hand results (void = half),
  on the Elo scale (400 points = 10:1 odds of winning a hand), with half a win and half a
  loss added per pair so that a clean sweep stays finite; anchored so that ``random`` is 0
  (or the last listed agent when random does not play). Each rating's 95% interval is a
  percentile bootstrap over deal pairs (``--bootstrap N`` resamples, seeded; every pair's
  hands of one deal are drawn together). ``--plot`` draws them (``okgin.plot``).
* **Processes**: under torchrun every process plays every K-th batch and the rows are summed
  (``okgin.sharding``, which says when the figures equal a single process's).

The table goes to stdout, a tqdm progress bar to stderr, everything to ``--json``. The same
seed gives the same numbers. ``play_match`` is the entry point for the trainer's periodic
evaluation.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import asdict, dataclass
from itertools import combinations
from typing import Callable, Sequence

import os

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # idle OpenMP threads sleep (see train.py); before numba/torch load
import numpy as np  # noqa: E402

import okgin_agents as agents  # noqa: E402
from okgin_agents.base import Agent
from okgin_env.agent_specs import AgentOutputError, agent_name, checked_actions
from okgin_env.cards import NUM_CARDS
from okgin_env.core import VectorGame
from okgin_env.rules import Rules
from okgin.sharding import Shard
from okgin.stats import (BOOTSTRAP_REPS, RATING_PRIOR, Z95, bootstrap_ratings, diff_ci,  # noqa: F401  (Z95: API)
                         mean_ci, percentile_interval, rate_ci)

MAX_HANDS_PER_GAME = 1000  #: a game still running after this many hands counts as a draw (never-knocking bots)


# --------------------------------------------------------------------------- results

@dataclass
class MatchResult:
    """Hands between agent A and agent B (the trainer's evaluation calls this too; docs/evaluation.md)."""

    agent_a: str
    agent_b: str
    hands: int  #: hands played
    deals: int  #: distinct deals (hands / 2 under duplicate deals)
    duplicate: bool
    wins_a: int  #: hands A won
    wins_b: int  #: hands B won
    voids: int  #: void hands (wall or turn cap)
    win_rate: float  #: A's hand win rate, a void hand counting as half a win
    win_rate_ci: tuple[float, float]
    points_per_hand: float  #: A's points minus B's points, per hand
    points_ci: tuple[float, float]
    knock_rate_a: float
    knock_rate_b: float
    gin_rate_a: float
    gin_rate_b: float
    undercut_rate_a: float  #: hands where A undercut B's knock
    undercut_rate_b: float
    void_rate: float
    seconds: float  #: wall-clock time of play
    hands_per_s: float  #: hands / seconds
    cpu_seconds: float  #: CPU time of this process during play (a load-independent speed measure)

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class GameMatchResult:
    """Full games (to ``target_score``) between agent A and agent B."""

    agent_a: str
    agent_b: str
    games: int
    duplicate: bool
    wins_a: int
    wins_b: int
    unfinished: int  #: games stopped after MAX_HANDS_PER_GAME hands (counted as half a win)
    win_rate: float
    win_rate_ci: tuple[float, float]
    margin: float  #: A's final total minus B's, per game
    margin_ci: tuple[float, float]
    hands_per_game: float
    seconds: float

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class PairedResult:
    """A against C minus B against C on the same deals, seats and agent seeds (``paired_match``)."""

    agent_a: str
    agent_b: str
    opponent: str
    hands: int  #: hands each of A and B played against the opponent
    deals: int  #: units of the CIs (deal pairs under duplicate deals, else hands)
    duplicate: bool
    points_diff: float  #: A's points per hand against C minus B's
    points_diff_ci: tuple[float, float]
    win_rate_diff: float  #: A's hand win rate against C minus B's (void = half a win)
    win_rate_diff_ci: tuple[float, float]  #: clipped to [-1, 1]
    hands_differing: int  #: hands whose points differ between A's match and B's

    def to_dict(self) -> dict:
        return asdict(self)


# ------------------------------------------------------------------------- playing

def deal_decks(num_deals: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(num_deals, 52) int8 shuffled decks and (num_deals,) dealers from ``seed``."""
    rng = np.random.default_rng(seed)
    decks = rng.permuted(np.tile(np.arange(NUM_CARDS, dtype=np.int8), (num_deals, 1)), axis=1)
    return decks, rng.integers(0, 2, num_deals).astype(np.int8)


def seat_plan(num: int, seed: int, duplicate: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Rows to play: decks, dealers, agent A's player id and the deal id of each row.

    Under duplicate deals each deal appears twice (rows k and k + deals) with the same deck and
    dealer and agent A in the other seat; otherwise A alternates between players 0 and 1.
    """
    if duplicate:
        deals = (num + 1) // 2
        decks, dealers = deal_decks(deals, seed)
        ids = np.arange(deals)
        return (np.concatenate([decks, decks]), np.concatenate([dealers, dealers]),
                np.repeat(np.array([0, 1], np.int8), deals), np.concatenate([ids, ids]))
    decks, dealers = deal_decks(num, seed)
    return decks, dealers, (np.arange(num) % 2).astype(np.int8), np.arange(num)


def _act(agent_a: Agent, agent_b: Agent, out, a_player: np.ndarray, live: np.ndarray, first: int = 0) -> np.ndarray:
    """One action per game: each agent acts only on the rows where it is to move. Every agent's
    output goes through ``checked_actions`` (shape, dtype, legality; errors name the agent and the
    game, counted from ``first``), so the caller may step with ``checked=True``."""
    cur = out.current_player
    actions = np.zeros(len(cur), np.int64)
    is_a = cur == a_player
    for agent, rows in ((agent_a, np.flatnonzero(live & is_a)), (agent_b, np.flatnonzero(live & ~is_a))):
        if len(rows):
            masks = out.legal_action_mask[rows]
            actions[rows] = checked_actions(agent.act(out.observation[rows], masks), masks, agent_name(agent),
                                            games=rows + first)
    return actions


def _play_rows(agent_a: Agent, agent_b: Agent, decks: np.ndarray, dealers: np.ndarray, a_player: np.ndarray,
               rules: Rules, episode: str, batch: int, seed: int,
               on_done: Callable[[np.ndarray, np.ndarray, object], None],
               progress: Callable[[int], None] | None, shard: Shard | None = None) -> np.ndarray:
    """Play every row (one episode each) in chunks of ``batch`` games; ``on_done(rows, local, result)``
    receives the global row ids, their chunk indices and the step's HandResult for each ended hand.
    With ``shard`` only this process's chunks are played, each by ``shard.chunk_agent``'s agents.
    Returns the mask of rows played here."""
    mine = np.zeros(len(decks), bool)
    for chunk, start in enumerate(range(0, len(decks), batch)):
        if shard is not None and not shard.plays(chunk):
            continue
        stop = min(len(decks), start + batch)
        n = stop - start
        mine[start:stop] = True
        a, b = (agent_a, agent_b) if shard is None else (shard.chunk_agent(agent_a, chunk),
                                                         shard.chunk_agent(agent_b, chunk))
        game = VectorGame(n, rules, episode=episode, seed=(seed, start))
        out = game.reset(decks=decks[start:stop], dealers=dealers[start:stop])
        ap = a_player[start:stop]
        hands_played = np.zeros(n, np.int64)
        playing = out.current_player >= 0
        while (playing & (hands_played < MAX_HANDS_PER_GAME)).any():
            out = game.step(_act(a, b, out, ap, playing, start), checked=True)
            ended = np.flatnonzero(out.hand_over & (hands_played < MAX_HANDS_PER_GAME))
            if len(ended):
                hands_played[ended] += 1
                on_done(start + ended, ended, out.result)
            playing = out.current_player >= 0
        if progress is not None:
            progress(n)
    return mine


def play_match(agent_a: Agent, agent_b: Agent, num_hands: int, seed: int = 0, rules: Rules | None = None,
               duplicate: bool = True, batch: int = 1024,
               progress: Callable[[int], None] | None = None) -> MatchResult:
    """Play ``num_hands`` hands (rounded up to even under duplicate deals) of A against B.

    Hand episodes on ``VectorGame`` directly, ``batch`` games at a time; the deals come from
    ``seed`` alone, so every pair evaluated with one seed plays the same deals. ``progress``
    is called with the number of hands finished after each batch.
    """
    return match_hands(agent_a, agent_b, num_hands, seed, rules, duplicate, batch, progress)[0]


@dataclass
class HandRows:
    """Every hand of a match, row by row (the order of ``seat_plan``): what paired comparisons and
    rating intervals resample."""

    win: np.ndarray  #: A's hand score: 1 win, 0 loss, 0.5 void
    points: np.ndarray  #: A's points minus B's
    deal_id: np.ndarray  #: the deal (unit of the CIs) of each hand


def match_hands(agent_a: Agent, agent_b: Agent, num_hands: int, seed: int = 0, rules: Rules | None = None,
                duplicate: bool = True, batch: int = 1024, progress: Callable[[int], None] | None = None,
                shard: Shard | None = None) -> tuple[MatchResult, HandRows]:
    """``play_match``'s result and the hands behind it (``HandRows``). With ``shard`` (torchrun,
    ``okgin.sharding``) this process plays only its share of the batches and the rows of all
    processes are summed, so every process returns the whole match."""
    if num_hands < 1:
        raise ValueError(f"num_hands must be >= 1, got {num_hands}")
    if batch < 1:
        raise ValueError(f"batch must be >= 1, got {batch}")
    rules = Rules() if rules is None else rules
    decks, dealers, a_player, deal_id = seat_plan(num_hands, seed, duplicate)
    m = len(decks)
    win = np.zeros(m)  # A's hand score: 1 win, 0 loss, 0.5 void
    pts = np.zeros(m)  # A's points minus B's
    knock_a, knock_b, gin_a, gin_b, under_a, under_b, void = (np.zeros(m, bool) for _ in range(7))

    def record(rows: np.ndarray, local: np.ndarray, r) -> None:
        a = a_player[rows].astype(np.int64)
        v = r.void[local]
        void[rows] = v
        win[rows] = np.where(v, 0.5, r.winner[local] == a)
        pts[rows] = r.points[local, a] - r.points[local, 1 - a]
        ka = r.knocker[local] == a
        kb = (r.knocker[local] >= 0) & ~ka
        knock_a[rows], knock_b[rows] = ka, kb
        gin_a[rows], gin_b[rows] = r.gin[local] & ka, r.gin[local] & kb
        under_a[rows], under_b[rows] = r.undercut[local] & kb, r.undercut[local] & ka

    t0, c0 = time.perf_counter(), time.process_time()
    mine = _play_rows(agent_a, agent_b, decks, dealers, a_player, rules, "hand", batch, seed, record, progress,
                      shard)
    seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
    if shard is not None:
        win, pts, knock_a, knock_b, gin_a, gin_b, under_a, under_b, void = shard.combine(
            mine, win, pts, knock_a, knock_b, gin_a, gin_b, under_a, under_b, void)
        seconds, cpu = shard.timing(seconds, cpu)
    wr, wr_ci = rate_ci(win, deal_id)
    pph, p_ci = mean_ci(pts, deal_id)
    result = MatchResult(
        agent_a=agent_a.name, agent_b=agent_b.name, hands=m, deals=int(deal_id.max()) + 1, duplicate=duplicate,
        wins_a=int((win == 1).sum()), wins_b=int((win == 0).sum()), voids=int(void.sum()),
        win_rate=wr, win_rate_ci=wr_ci, points_per_hand=pph, points_ci=p_ci,
        knock_rate_a=float(knock_a.mean()), knock_rate_b=float(knock_b.mean()),
        gin_rate_a=float(gin_a.mean()), gin_rate_b=float(gin_b.mean()),
        undercut_rate_a=float(under_a.mean()), undercut_rate_b=float(under_b.mean()),
        void_rate=float(void.mean()), seconds=seconds, hands_per_s=m / max(seconds, 1e-9), cpu_seconds=cpu,
    )
    return result, HandRows(win=win, points=pts, deal_id=deal_id)


def hand_points(agent_a: Agent, agent_b: Agent, num_hands: int, seed: int = 0, rules: Rules | None = None,
                batch: int = 1024) -> tuple[np.ndarray, np.ndarray]:
    """A's points minus B's in every hand ``play_match`` plays (duplicate deals), and each hand's deal id.

    Two agents measured against one opponent on one seed play the same deals, so their arrays pair
    up hand by hand: ``mean_ci(pa - pb, deal_id)`` is their difference with a CI over deal pairs,
    far tighter than the two separate CIs when most hands play alike.
    """
    rows = match_hands(agent_a, agent_b, num_hands, seed, rules, True, batch)[1]
    return rows.points, rows.deal_id


def play_games(agent_a: Agent, agent_b: Agent, num_games: int, seed: int = 0, rules: Rules | None = None,
               duplicate: bool = True, batch: int = 1024, progress: Callable[[int], None] | None = None,
               shard: Shard | None = None) -> GameMatchResult:
    """Play ``num_games`` full games (rounded up to even under duplicate deals) of A against B
    (``shard``: this process's share, as in ``match_hands``)."""
    if num_games < 1:
        raise ValueError(f"num_games must be >= 1, got {num_games}")
    rules = Rules() if rules is None else rules
    decks, dealers, a_player, deal_id = seat_plan(num_games, seed + 1, duplicate)
    m = len(decks)
    win = np.full(m, 0.5)  # stays 0.5 for unfinished games
    margin = np.zeros(m)
    hands = np.zeros(m)

    def record(rows: np.ndarray, local: np.ndarray, r) -> None:
        hands[rows] += 1
        over = r.game_over[local]
        rows, local = rows[over], local[over]
        a = a_player[rows].astype(np.int64)
        win[rows] = r.game_winner[local] == a
        margin[rows] = r.scores[local, a] - r.scores[local, 1 - a]

    t0 = time.perf_counter()
    mine = _play_rows(agent_a, agent_b, decks, dealers, a_player, rules, "game", batch, seed, record, progress,
                      shard)
    seconds = time.perf_counter() - t0
    if shard is not None:
        win, margin, hands = shard.combine(mine, win, margin, hands)
        seconds, _ = shard.timing(seconds, 0.0)
    wr, wr_ci = rate_ci(win, deal_id)
    mg, mg_ci = mean_ci(margin, deal_id)
    return GameMatchResult(
        agent_a=agent_a.name, agent_b=agent_b.name, games=m, duplicate=duplicate,
        wins_a=int((win == 1).sum()), wins_b=int((win == 0).sum()), unfinished=int((win == 0.5).sum()),
        win_rate=wr, win_rate_ci=wr_ci, margin=mg, margin_ci=mg_ci, hands_per_game=float(hands.mean()),
        seconds=seconds,
    )


def paired_match(agent_a: Agent, agent_b: Agent, opponent_a: Agent, opponent_b: Agent, num_hands: int,
                 seed: int = 0, rules: Rules | None = None, duplicate: bool = True, batch: int = 1024,
                 progress: Callable[[int], None] | None = None,
                 shard: Shard | None = None) -> tuple[PairedResult, MatchResult, MatchResult]:
    """A and B each against the opponent C on the same deals and seats: (A - B, A vs C, B vs C).

    ``opponent_a`` and ``opponent_b`` are two copies of C made with one seed (and A and B should be
    made with one seed too), so a randomised C draws the same numbers in both matches and an agent
    paired with itself reads exactly 0. The CIs are over deal pairs (hands without duplicate
    deals): the hands pair up, so the difference is far tighter than the two matches' own CIs.
    """
    ra, rows_a = match_hands(agent_a, opponent_a, num_hands, seed, rules, duplicate, batch, progress, shard)
    rb, rows_b = match_hands(agent_b, opponent_b, num_hands, seed, rules, duplicate, batch, progress, shard)
    pd, pd_ci = diff_ci(rows_a.points, rows_b.points, rows_a.deal_id)
    wd, wd_ci = diff_ci(rows_a.win, rows_b.win, rows_a.deal_id, bounds=(-1.0, 1.0))
    paired = PairedResult(
        agent_a=agent_a.name, agent_b=agent_b.name, opponent=opponent_a.name, hands=ra.hands, deals=ra.deals,
        duplicate=duplicate, points_diff=pd, points_diff_ci=pd_ci, win_rate_diff=wd, win_rate_diff_ci=wd_ci,
        hands_differing=int((rows_a.points != rows_b.points).sum()))
    return paired, ra, rb


# -------------------------------------------------------------------------- ratings

def bradley_terry(names: Sequence[str], results: Sequence[tuple[int, int, float, int]],
                  anchor: int) -> np.ndarray:
    """Elo-scale ratings from (i, j, wins of i against j, games) tuples, rating[anchor] = 0."""
    k = len(names)
    wins = np.zeros((k, k))
    games = np.zeros((k, k))
    for i, j, w, n in results:
        wins[i, j] += w + RATING_PRIOR
        wins[j, i] += n - w + RATING_PRIOR
        games[i, j] += n + 2 * RATING_PRIOR
        games[j, i] += n + 2 * RATING_PRIOR
    p = np.ones(k)
    for _ in range(10_000):  # Hunter's MM iteration
        denom = (games / (p[:, None] + p[None, :])).sum(axis=1)
        new = np.where(denom > 0, wins.sum(axis=1) / np.maximum(denom, 1e-300), 1.0)
        new /= np.exp(np.log(new).mean())
        if np.allclose(new, p, rtol=1e-12, atol=0):
            p = new
            break
        p = new
    r = 400.0 * np.log10(p)
    return r - r[anchor]


# ------------------------------------------------------------------------------ CLI

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


def rating_anchor(names: Sequence[str]) -> int:
    """The agent rated 0: random when it plays, else the last listed agent."""
    return names.index("random") if "random" in names else len(names) - 1


def rating_table(names: Sequence[str], matches: Sequence[tuple[int, int, MatchResult]],
                 rows: Sequence[HandRows] | None = None, reps: int = BOOTSTRAP_REPS, seed: int = 0) -> list[dict]:
    """Sorted rows: agent, rating (``rating_anchor`` = 0), mean win rate and points per hand over its
    pairs. With ``rows`` (each match's ``HandRows``, same deals) every rating also gets ``rating_ci``,
    a 95% percentile interval from ``reps`` resamples of the deals (seeded by ``seed``)."""
    anchor = rating_anchor(names)
    ratings = bradley_terry(names, [(i, j, r.win_rate * r.hands, r.hands) for i, j, r in matches], anchor)
    intervals = None
    if rows is not None and reps > 0:
        deals = int(rows[0].deal_id.max()) + 1
        deal_wins = np.stack([np.bincount(h.deal_id, weights=h.win, minlength=deals) for h in rows])
        deal_hands = np.stack([np.bincount(h.deal_id, minlength=deals).astype(np.float64) for h in rows])
        samples = bootstrap_ratings(len(names), [(i, j) for i, j, _ in matches], deal_wins, deal_hands, anchor,
                                    reps=reps, seed=seed)
        intervals = percentile_interval(samples)
    table = []
    for k, name in enumerate(names):
        wr = [r.win_rate if i == k else 1 - r.win_rate for i, j, r in matches if k in (i, j)]
        pp = [r.points_per_hand if i == k else -r.points_per_hand for i, j, r in matches if k in (i, j)]
        row = {"agent": name, "rating": float(ratings[k]), "win_rate": float(np.mean(wr)),
               "points_per_hand": float(np.mean(pp))}
        if intervals is not None:
            row["rating_ci"] = (float(intervals[0, k]), float(intervals[1, k]))
        table.append(row)
    return sorted(table, key=lambda row: -row["rating"])


# --------------------------------------------------------------------- human results

HUMAN_RESULTS_FORMAT = "okgin-human-results"  #: okgin.web.server.RESULTS_FORMAT (one finished game a line)


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
    for label, recs in groups.items():
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
                unfinished=0, win_rate=gwr, win_rate_ci=gwr_ci, margin=gm, margin_ci=gm_ci,
                hands_per_game=float(np.mean([len(r["hands"]) for r in full])),
                seconds=float(sum(r.get("seconds") or 0.0 for r in full))))
    return matches, games


def human_report(path: str, json_path: str | None = None) -> dict:
    """``--human-results PATH``: print the human's results against each bot in the evaluation tables."""
    records, skipped = read_human_results(path)
    if not records:
        raise ValueError(f"{path} holds no finished games")
    matches, games = human_matches(records)
    print(f"okgin evaluation of human results: {path}, {len(records)} finished game(s), "
          f"{sum(len(r['hands']) for r in records)} hands (void = half a win; CIs over games)")
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
    report = {"human_results": path, "records": len(records), "skipped_lines": skipped,
              "matches": [m.to_dict() for m in matches], "games": [g.to_dict() for g in games]}
    if json_path:
        with open(json_path, "w") as f:
            json.dump(report, f, indent=2)
    return report


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="evaluate.py", description="Evaluate okgin agents head to head (two) or in a round robin (more).",
        epilog="Example: python evaluate.py --agents expert simple random --hands 20000 --seed 0")
    ap.add_argument("--agents", nargs="+", metavar="SPEC",
                    help=f"two or more agent specs: {', '.join(agents.SPECS)}")
    ap.add_argument("--paired", nargs=2, metavar=("A", "B"),
                    help="instead of --agents: A and B each against --opponent on the same deals, seats and "
                         "agent seeds; prints A - B with a 95%% CI over deal pairs")
    ap.add_argument("--opponent", metavar="C", help="the agent both --paired agents play against")
    ap.add_argument("--human-results", metavar="PATH",
                    help="instead of playing: a person's results against each bot from a file of play.py --web")
    ap.add_argument("--hands", type=int, default=20000,
                    help="hands per pair (rounded up to even under duplicate deals); 0 = none (default 20000)")
    ap.add_argument("--games", type=int, default=0, help="also play this many full games per pair (default 0)")
    ap.add_argument("--seed", type=int, default=0, help="seed of the deals and of randomised agents (default 0)")
    ap.add_argument("--no-duplicate", dest="duplicate", action="store_false",
                    help="play every deal once instead of twice with seats swapped")
    ap.add_argument("--rules", nargs="*", default=[], metavar="KEY=VALUE",
                    help=f"rule options, e.g. knock_limit=10; keys: {', '.join(Rules.option_names())}")
    ap.add_argument("--batch", type=int, default=1024, help="games played at once (default 1024)")
    ap.add_argument("--json", metavar="PATH", help="write every number to this JSON file")
    ap.add_argument("--plot", metavar="PATH",
                    help="draw the ratings and the points-per-hand matrix with their 95%% CIs (.png or .svg; "
                         "needs the plot extra: pip install 'okgin[plot]')")
    ap.add_argument("--bootstrap", type=int, default=BOOTSTRAP_REPS, metavar="N",
                    help=f"resamples of the deal pairs behind the ratings' 95%% CIs; 0 = none (default {BOOTSTRAP_REPS})")
    ap.add_argument("--no-progress", dest="progress", action="store_false", help="no progress bar on stderr")
    return ap


def _agent_seed(seed: int, pair: int, side: int) -> int:
    return int(np.random.SeedSequence([seed, pair, side]).generate_state(1)[0])


def main(argv: Sequence[str] | None = None) -> dict:
    ap = build_parser()
    args = ap.parse_args(argv)
    if args.human_results:
        if args.agents or args.paired:
            ap.error("--human-results reads a file of played games; drop --agents / --paired")
        try:
            return human_report(args.human_results, args.json)
        except (OSError, ValueError, KeyError, TypeError) as e:
            what = f"{e.strerror}: {e.filename}" if isinstance(e, OSError) and e.strerror else f"{type(e).__name__} {e}" \
                if isinstance(e, (KeyError, TypeError)) else str(e)
            print(f"evaluate.py: error: --human-results: {what}", file=sys.stderr)
            sys.exit(2)
    paired = args.paired is not None
    if paired:
        if args.agents:
            ap.error("--paired A B compares two agents against --opponent C; drop --agents")
        if not args.opponent:
            ap.error("--paired A B needs --opponent C (the agent both play against)")
        if args.games:
            ap.error("--games does not apply to --paired (it compares hands); drop --games")
        if args.hands < 1:
            ap.error(f"--paired needs --hands >= 1, got {args.hands}")
        if args.plot:
            ap.error("--plot draws a round robin or a head to head (--agents); drop it with --paired")
        specs = [*args.paired, args.opponent]
    else:
        if args.opponent:
            ap.error("--opponent goes with --paired A B")
        if not args.agents:
            ap.error("the following arguments are required: --agents (or --paired A B --opponent C, "
                     "or --human-results PATH)")
        if len(args.agents) < 2:
            ap.error("--agents needs at least two agent specs")
        specs = list(args.agents)
    for name, value, low in (("--hands", args.hands, 0), ("--games", args.games, 0), ("--batch", args.batch, 1),
                             ("--seed", args.seed, 0), ("--bootstrap", args.bootstrap, 0)):
        if value < low:
            ap.error(f"{name} must be >= {low}, got {value}")
    if args.hands == 0 and args.games == 0:
        ap.error("nothing to play: --hands and --games are both 0")
    if args.plot and args.hands == 0:
        ap.error("--plot draws the hands' results; --hands 0 plays none")
    if args.plot:
        from okgin import plot

        try:
            plot.check_path(args.plot)
            plot.require_matplotlib()
        except (ValueError, ImportError) as e:
            ap.error(f"--plot: {e}")
    try:
        rules = Rules.from_strings(args.rules)
    except ValueError as e:
        ap.error(f"--rules: {e}")
    try:
        for spec in specs:
            agents.make(spec, seed=0)
    except (ValueError, FileNotFoundError, OSError) as e:
        ap.error(f"--{'paired/--opponent' if paired else 'agents'}: {e}")
    names = _unique_names(specs)
    pairs = [(0, 2), (1, 2)] if paired else list(combinations(range(len(specs)), 2))
    hand_rows = (args.hands + args.hands % 2) if args.duplicate else args.hands
    game_rows = (args.games + args.games % 2) if args.duplicate else args.games

    # under torchrun the deals are shared over the processes (okgin.sharding); None in a plain run
    shard = Shard.from_env(lambda spec, seed: agents.make(spec, seed=seed))
    lead = shard is None or shard.rank == 0
    batches = -(-max(hand_rows, game_rows) // args.batch)
    if shard is not None and lead and batches < shard.world_size:  # the batch is the unit shared out
        print(f"evaluate.py: note: {batches} batch(es) of --batch {args.batch} for {shard.world_size} processes: "
              f"some have nothing to play; a smaller --batch shares the deals out", file=sys.stderr)

    def make(k: int, seed: int) -> Agent:
        if shard is not None:
            return shard.make(specs[k], seed, names[k])
        agent = agents.make(specs[k], seed=seed)
        agent.name = names[k]
        return agent

    def share(rows: int) -> int:  # the episodes this process plays of a match of ``rows``
        if shard is None:
            return rows
        return sum(min(args.batch, rows - start) for c, start in enumerate(range(0, rows, args.batch))
                   if shard.plays(c))

    from tqdm import tqdm
    bar = tqdm(total=(share(hand_rows) + share(game_rows)) * len(pairs), unit="ep", file=sys.stderr,
               disable=not (args.progress and lead), desc="evaluate")
    hand_results: list[tuple[int, int, MatchResult]] = []
    hand_rows_of: list[HandRows] = []
    game_results: list[tuple[int, int, GameMatchResult]] = []
    paired_result = None
    try:
        if paired:
            bar.set_postfix_str(f"{names[0]} and {names[1]} vs {names[2]}")
            paired_result, ra, rb = paired_match(
                make(0, _agent_seed(args.seed, 0, 0)), make(1, _agent_seed(args.seed, 0, 0)),
                make(2, _agent_seed(args.seed, 0, 1)), make(2, _agent_seed(args.seed, 0, 1)), args.hands,
                seed=args.seed, rules=rules, duplicate=args.duplicate, batch=args.batch, progress=bar.update,
                shard=shard)
            hand_results = [(0, 2, ra), (1, 2, rb)]
        for p, (i, j) in enumerate([] if paired else pairs):
            a = make(i, _agent_seed(args.seed, p, 0))
            b = make(j, _agent_seed(args.seed, p, 1))
            bar.set_postfix_str(f"{names[i]} vs {names[j]}")
            if args.hands:
                r, rows = match_hands(a, b, args.hands, seed=args.seed, rules=rules, duplicate=args.duplicate,
                                      batch=args.batch, progress=bar.update, shard=shard)
                hand_results.append((i, j, r))
                hand_rows_of.append(rows)
            if args.games:
                g = play_games(a, b, args.games, seed=args.seed, rules=rules, duplicate=args.duplicate,
                               batch=args.batch, progress=bar.update, shard=shard)
                game_results.append((i, j, g))
    except AgentOutputError as e:  # a plug-in's bad output: one line naming it, as for bad arguments
        bar.close()
        print(f"evaluate.py: error: {e}", file=sys.stderr)
        sys.exit(2)
    bar.close()

    changed = {k: v for k, v in rules.to_dict().items() if v != getattr(Rules(), k)}
    report = {
        "agents": names, "specs": specs, "seed": args.seed, "duplicate": args.duplicate,
        "hands_per_pair": args.hands, "games_per_pair": args.games, "batch": args.batch,
        "rules": rules.to_dict(),
        # torchrun: how many processes played it; agents per batch (okgin.sharding) rather than per match
        "world_size": 1 if shard is None else shard.world_size,
        "agent_seeds": "per match" if shard is None else "per batch",
        "matches": [r.to_dict() for _, _, r in hand_results],
        "games": [g.to_dict() for _, _, g in game_results],
    }
    if paired_result is not None:
        report["paired"] = paired_result.to_dict()
    if len(specs) > 2 and hand_results and not paired:
        anchor = names[rating_anchor(names)]
        report["ratings"] = rating_table(names, hand_results, hand_rows_of, reps=args.bootstrap, seed=args.seed)
        report["rating_anchor"] = anchor
        report["rating_ci_method"] = (f"percentile bootstrap over deal pairs, {args.bootstrap} resamples, seed "
                                      f"{args.seed}" if args.bootstrap else None)
    if lead:
        print(f"okgin {'paired comparison' if paired else 'evaluation'}: seed {args.seed}, "
              f"{'duplicate deals' if args.duplicate else 'single deals'}, "
              f"rules: {', '.join(f'{k}={v}' for k, v in changed.items()) or 'default (Oklahoma Gin)'}"
              + (f", {shard.world_size} processes" if shard is not None and shard.world_size > 1 else ""))
        if hand_results:
            print()
            print(format_matches([r for _, _, r in hand_results]))
        if game_results:
            print()
            print(format_games([g for _, _, g in game_results]))
        if paired_result is not None:
            unit = "deal pairs" if args.duplicate else "hands"
            print()
            print(f"{names[0]} minus {names[1]} against {names[2]}, same deals, seats and agent seeds "
                  f"(95% CIs over {unit}):")
            print(format_paired(paired_result))
        if "ratings" in report:
            print()
            print(f"ratings (Bradley-Terry on hands, Elo scale, {report['rating_anchor']} = 0):")
            if report["rating_ci_method"]:
                print(f"95% CIs: {report['rating_ci_method']}")
            print(format_ratings(report["ratings"]))
        if args.json:
            try:
                with open(args.json, "w") as f:
                    json.dump(report, f, indent=2)
            except OSError as e:
                print(f"evaluate.py: error: cannot write --json {args.json}: {e}", file=sys.stderr)
                sys.exit(2)
        if args.plot and hand_results:
            try:
                plot.plot_report(report, args.plot)
            except OSError as e:
                print(f"evaluate.py: error: cannot write --plot {args.plot}: {e}", file=sys.stderr)
                sys.exit(2)
    if shard is not None:
        shard.close()
    return report


def _unique_names(specs: Sequence[str]) -> list[str]:
    """Display names: the spec (ppo:PATH shortened to ppo:FILE), '#2', '#3' added to repeats."""
    base = [s if not s.startswith("ppo:") else "ppo:" + s[4:].replace("\\", "/").rsplit("/", 1)[-1] for s in specs]
    out, seen = [], {}
    for b in base:
        seen[b] = seen.get(b, 0) + 1
        out.append(b if seen[b] == 1 else f"{b}#{seen[b]}")
    return out


def cli() -> None:
    """The ``okgin-evaluate`` command (and ``python evaluate.py``)."""
    main()


if __name__ == "__main__":
    cli()
