"""Matches between two agents on duplicate deals: the deal plan, the batched play, and their results.

What ``okgin.evaluate`` (the program), the trainer's periodic evaluation and the exploit's held-out
figure all play. docs/evaluation.md says how every figure is defined; in short:

* **Duplicate deals** (the default): every deal (deck order and dealer) is played twice, once with
  each agent in each seat, so luck of the cards cancels; without, agent A takes player 0 on even
  and player 1 on odd deals (``seat_plan``).
* A void hand (wall or turn cap) counts as half a win; points per hand are A's minus B's; CIs are
  over deal pairs under duplicate deals (``okgin_trainer.stats``).
* Hands are played ``batch`` games at a time on ``VectorGame`` (``play_rows``); every agent's output
  goes through ``checked_actions``. With a ``shard`` (torchrun, ``okgin.sharding``) a process plays
  only its share of the batches and the rows of all processes are summed.

The same seed gives the same deals, so every pair evaluated with one seed plays the same deals.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, fields, replace
from typing import Callable, NamedTuple, Protocol

import numpy as np
from okgin_trainer.stats import diff_ci, mean_ci, rate_ci

from okgin_env.agent_specs import Agent, agent_name, checked_actions
from okgin_env.game.cards import NUM_CARDS
from okgin_env.game.core import VectorGame
from okgin_env.game.observation import OBS_SIZE
from okgin_env.game.rules import Rules

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


@dataclass
class HandRows:
    """Every hand of a match, row by row (the order of ``seat_plan``): what paired comparisons and
    rating intervals resample."""

    win: np.ndarray  #: A's hand score: 1 win, 0 loss, 0.5 void
    points: np.ndarray  #: A's points minus B's
    deal_id: np.ndarray  #: the deal (unit of the CIs) of each hand
    # what the results store keeps of each hand (okgin.arena), None where a caller built rows without them
    a_player: np.ndarray | None = None  #: A's player id
    void: np.ndarray | None = None
    knocker: np.ndarray | None = None  #: 0 A knocked, 1 B knocked, -1 nobody
    gin: np.ndarray | None = None
    undercut: np.ndarray | None = None


@dataclass
class GameRows:
    """Every full game of a match, row by row (``match_games``): what the results store keeps."""

    win: np.ndarray  #: A's game score: 1 win, 0 loss, 0.5 unfinished
    margin: np.ndarray  #: A's final total minus B's
    hands: np.ndarray  #: hands the game lasted
    a_player: np.ndarray  #: A's player id
    deal_id: np.ndarray  #: the game's first deal (unit of the CIs)
    scores: np.ndarray  #: (games, 2) final totals, A's then B's


# ------------------------------------------------------------------------- settings

class RowShare(Protocol):
    """This process's share of a match under torchrun (``okgin.sharding.Shard``)."""

    def plays(self, batch: int) -> bool: ...

    def chunk_agent(self, agent: Agent, batch: int) -> Agent: ...

    def combine(self, mine: np.ndarray, *arrays: np.ndarray) -> list[np.ndarray]: ...

    def timing(self, seconds: float, cpu_seconds: float) -> tuple[float, float]: ...


@dataclass(frozen=True)
class MatchSettings:
    """How a match is played (every field a keyword of ``match_hands``, ``play_games`` and ``paired_match``)."""

    seed: int = 0  #: seed of the deals (and of the games' later hands)
    rules: Rules | None = None  #: None: the default rules
    duplicate: bool = True  #: every deal twice, seats swapped
    batch: int = 1024  #: games played at once
    progress: Callable[[int], None] | None = None  #: called with the number of episodes finished after each batch
    shard: RowShare | None = None  #: this process's share under torchrun; None: every batch

    def __post_init__(self) -> None:
        if isinstance(self.batch, bool) or not isinstance(self.batch, (int, np.integer)) or self.batch < 1:
            raise ValueError(f"batch must be an integer >= 1, got {self.batch!r}")

    @classmethod
    def of(cls, settings: MatchSettings | None, options: dict) -> MatchSettings:
        """``settings`` (default: all defaults) with ``options`` (field names) replaced; a one-line TypeError
        for an unknown option."""
        if settings is not None and not isinstance(settings, cls):
            raise TypeError(f"settings must be a MatchSettings, got {settings!r}; give seed, rules, duplicate, batch, "
                            f"progress and shard as keywords (e.g. seed=3)")
        unknown = sorted(set(options) - {f.name for f in fields(cls)})
        if unknown:
            raise TypeError(f"unknown match option(s) {', '.join(unknown)}; allowed: "
                            f"{', '.join(f.name for f in fields(cls))}")
        return replace(cls() if settings is None else settings, **options)

    @property
    def game_rules(self) -> Rules:
        return Rules() if self.rules is None else self.rules


class SeatPlan(NamedTuple):
    """The rows of a match (one episode each): deck, dealer, agent A's player id and deal id of every row."""

    decks: np.ndarray  #: (rows, 52) int8 deck orders
    dealers: np.ndarray  #: (rows,) int8
    a_player: np.ndarray  #: (rows,) int8 player id of agent A
    deal_id: np.ndarray  #: (rows,) the deal (unit of the CIs)


# ------------------------------------------------------------------------- agents

def agent_seed(seed: int, pair: int, side: int) -> int:
    """The seed of the agent on ``side`` (0: A, 1: B) of pair number ``pair`` of an evaluation seeded ``seed``."""
    return int(np.random.SeedSequence([seed, pair, side]).generate_state(1)[0])


def display_names(specs: list[str]) -> list[str]:
    """Display names: the spec (ppo:PATH shortened to ppo:FILE), '#2', '#3' added to repeats."""
    base = [s if not s.startswith("ppo:") else "ppo:" + s[4:].replace("\\", "/").rsplit("/", 1)[-1] for s in specs]
    out, seen = [], {}
    for b in base:
        seen[b] = seen.get(b, 0) + 1
        out.append(b if seen[b] == 1 else f"{b}#{seen[b]}")
    return out


# ------------------------------------------------------------------------- playing

def deal_decks(num_deals: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(num_deals, 52) int8 shuffled decks and (num_deals,) dealers from ``seed``."""
    rng = np.random.default_rng(seed)
    decks = rng.permuted(np.tile(np.arange(NUM_CARDS, dtype=np.int8), (num_deals, 1)), axis=1)
    return decks, rng.integers(0, 2, num_deals).astype(np.int8)


def seat_plan(num: int, seed: int, duplicate: bool) -> SeatPlan:
    """Rows to play: decks, dealers, agent A's player id and the deal id of each row.

    Under duplicate deals each deal appears twice (rows k and k + deals) with the same deck and
    dealer and agent A in the other seat; otherwise A alternates between players 0 and 1.
    """
    if duplicate:
        deals = (num + 1) // 2
        decks, dealers = deal_decks(deals, seed)
        ids = np.arange(deals)
        return SeatPlan(np.concatenate([decks, decks]), np.concatenate([dealers, dealers]),
                        np.repeat(np.array([0, 1], np.int8), deals), np.concatenate([ids, ids]))
    decks, dealers = deal_decks(num, seed)
    return SeatPlan(decks, dealers, (np.arange(num) % 2).astype(np.int8), np.arange(num))


class LiveView(NamedTuple):
    """What ``act_rows`` reads of a step (a ``StepOutput`` has the same fields): in ``play_rows``, the
    game's own buffers, which every step rewrites in place, so one view serves a whole chunk."""

    current_player: np.ndarray  #: (N,) int8
    legal_action_mask: np.ndarray  #: (N, 107) bool
    observation: np.ndarray  #: (N, OBS_SIZE) float32


def act_rows(agent_a: Agent, agent_b: Agent, out, a_player: np.ndarray, live: np.ndarray, first: int = 0) -> np.ndarray:
    """One action per game: each agent acts only on the rows where it is to move. Every agent's
    output goes through ``checked_actions`` (shape, dtype, legality; errors name the agent and the
    game, counted from ``first``), so the caller may step with ``checked=True``. An agent with
    ``act_on_rows`` (``okgin_agents.base.Bot``'s) is handed the whole batch and its rows: a bot that
    reads them in place spares the copy of its observations."""
    cur = out.current_player
    actions = np.zeros(len(cur), np.int64)
    is_a = cur == a_player
    for agent, rows in ((agent_a, np.flatnonzero(live & is_a)), (agent_b, np.flatnonzero(live & ~is_a))):
        if len(rows):
            masks = out.legal_action_mask[rows]
            on_rows = getattr(agent, "act_on_rows", None)
            acts = agent.act(out.observation[rows], masks) if on_rows is None else \
                on_rows(out.observation, out.legal_action_mask, rows)
            actions[rows] = checked_actions(acts, masks, agent_name(agent), games=rows + first)
    return actions


def play_rows(agent_a: Agent, agent_b: Agent, plan: SeatPlan, episode: str, settings: MatchSettings,
              on_done: Callable[[np.ndarray, np.ndarray, object], None]) -> np.ndarray:
    """Play every row of ``plan`` (one episode each) in chunks of ``settings.batch`` games; ``on_done(rows,
    local, result)`` receives the global row ids, their chunk indices and the step's HandResult for each
    ended hand. With ``settings.shard`` only this process's chunks are played, each by
    ``shard.chunk_agent``'s agents. Returns the mask of rows played here."""
    shard, batch = settings.shard, settings.batch
    mine = np.zeros(len(plan.decks), bool)
    # one observation buffer that every step writes in place (a leading slice for a short last chunk):
    # it stays in the cache, where a new (batch, OBS_SIZE) array a step came from memory
    buffer = np.empty((min(batch, len(plan.decks)), OBS_SIZE), np.float32)
    for chunk, start in enumerate(range(0, len(plan.decks), batch)):
        if shard is not None and not shard.plays(chunk):
            continue
        stop = min(len(plan.decks), start + batch)
        mine[start:stop] = True
        a, b = (agent_a, agent_b) if shard is None else (shard.chunk_agent(agent_a, chunk),
                                                         shard.chunk_agent(agent_b, chunk))
        game = VectorGame(stop - start, settings.game_rules, episode=episode, seed=(settings.seed, start))
        obs = buffer[:stop - start]
        game.reset(decks=plan.decks[start:stop], dealers=plan.dealers[start:stop], observation=obs)
        # the steps go through VectorGame.advance (act_rows checks every action), read in the game's
        # own buffers: a StepOutput's copies and checks cost ~3% of a step of simple against simple
        view = LiveView(game.state.current_player, game.mask_buffer, obs)
        flags, result = game.core.out, game.core.result
        ap = plan.a_player[start:stop]
        hands_played = np.zeros(stop - start, np.int64)
        playing = view.current_player >= 0
        while (playing & (hands_played < MAX_HANDS_PER_GAME)).any():
            game.advance(act_rows(a, b, view, ap, playing, start), obs)
            ended = np.flatnonzero(flags.hand_over & (hands_played < MAX_HANDS_PER_GAME))
            if len(ended):
                hands_played[ended] += 1
                on_done(start + ended, ended, result)
            playing = view.current_player >= 0
        if settings.progress is not None:
            settings.progress(stop - start)
    return mine


def play_match(agent_a: Agent, agent_b: Agent, num_hands: int, seed: int = 0, rules: Rules | None = None,
               duplicate: bool = True, batch: int = 1024,
               progress: Callable[[int], None] | None = None) -> MatchResult:
    """Play ``num_hands`` hands (rounded up to even under duplicate deals) of A against B.

    Hand episodes on ``VectorGame`` directly, ``batch`` games at a time; the deals come from
    ``seed`` alone, so every pair evaluated with one seed plays the same deals. ``progress``
    is called with the number of hands finished after each batch.
    """
    settings = MatchSettings(seed=seed, rules=rules, duplicate=duplicate, batch=batch, progress=progress)
    return match_hands(agent_a, agent_b, num_hands, settings)[0]


class _HandTally:
    """Per-row figures of a match's hands, filled by ``play_rows``'s callback (``record``)."""

    NAMES = ("win", "pts", "knock_a", "knock_b", "gin_a", "gin_b", "under_a", "under_b", "void")

    def __init__(self, a_player: np.ndarray) -> None:
        m = len(a_player)
        self.a_player = a_player
        self.win = np.zeros(m)  # A's hand score: 1 win, 0 loss, 0.5 void
        self.pts = np.zeros(m)  # A's points minus B's
        for name in self.NAMES[2:]:
            setattr(self, name, np.zeros(m, bool))
        self._kept: list[tuple] = []  # record's copies of ended hands, until finish

    def record(self, rows: np.ndarray, local: np.ndarray, r) -> None:
        """Keep the fields of the hands that ended (rows ``rows``, result rows ``local`` of ``r``, which
        the next step rewrites); ``finish`` tallies them all at once (per step it cost ~5% of a match)."""
        self._kept.append((rows, r.void[local], r.winner[local], r.points[local], r.knocker[local], r.gin[local],
                           r.undercut[local]))

    def finish(self) -> None:
        """The per-row figures of every hand kept by ``record`` (in the order recorded)."""
        if not self._kept:
            return
        rows, v, winner, points, knocker, gin, undercut = (np.concatenate(f) for f in zip(*self._kept))
        self._kept = []
        a = self.a_player[rows].astype(np.int64)
        k = np.arange(len(rows))
        self.void[rows] = v
        self.win[rows] = np.where(v, 0.5, winner == a)
        self.pts[rows] = points[k, a] - points[k, 1 - a]
        ka = knocker == a
        kb = (knocker >= 0) & ~ka
        self.knock_a[rows], self.knock_b[rows] = ka, kb
        self.gin_a[rows], self.gin_b[rows] = gin & ka, gin & kb
        self.under_a[rows], self.under_b[rows] = undercut & kb, undercut & ka

    def combine(self, shard: RowShare, mine: np.ndarray) -> None:
        """Every process's rows (``shard.combine``)."""
        for name, total in zip(self.NAMES, shard.combine(mine, *(getattr(self, n) for n in self.NAMES))):
            setattr(self, name, total)


def match_hands(agent_a: Agent, agent_b: Agent, num_hands: int, settings: MatchSettings | None = None,
                **options) -> tuple[MatchResult, HandRows]:
    """``play_match``'s result and the hands behind it (``HandRows``). ``settings`` / ``options``: the
    ``MatchSettings`` (seed, rules, duplicate, batch, progress, shard). With a shard (torchrun,
    ``okgin.sharding``) this process plays only its share of the batches and the rows of all
    processes are summed, so every process returns the whole match."""
    s = MatchSettings.of(settings, options)
    if num_hands < 1:
        raise ValueError(f"num_hands must be >= 1, got {num_hands}")
    plan = seat_plan(num_hands, s.seed, s.duplicate)
    m, deal_id = len(plan.decks), plan.deal_id
    t = _HandTally(plan.a_player)
    t0, c0 = time.perf_counter(), time.process_time()
    mine = play_rows(agent_a, agent_b, plan, "hand", s, t.record)
    t.finish()
    seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
    if s.shard is not None:
        t.combine(s.shard, mine)
        seconds, cpu = s.shard.timing(seconds, cpu)
    wr, wr_ci = rate_ci(t.win, deal_id)
    pph, p_ci = mean_ci(t.pts, deal_id)
    result = MatchResult(
        agent_a=agent_a.name, agent_b=agent_b.name, hands=m, deals=int(deal_id.max()) + 1, duplicate=s.duplicate,
        wins_a=int((t.win == 1).sum()), wins_b=int((t.win == 0).sum()), voids=int(t.void.sum()),
        win_rate=wr, win_rate_ci=wr_ci, points_per_hand=pph, points_ci=p_ci,
        knock_rate_a=float(t.knock_a.mean()), knock_rate_b=float(t.knock_b.mean()),
        gin_rate_a=float(t.gin_a.mean()), gin_rate_b=float(t.gin_b.mean()),
        undercut_rate_a=float(t.under_a.mean()), undercut_rate_b=float(t.under_b.mean()),
        void_rate=float(t.void.mean()), seconds=seconds, hands_per_s=m / max(seconds, 1e-9), cpu_seconds=cpu,
    )
    knocker = np.where(t.knock_a, 0, np.where(t.knock_b, 1, -1)).astype(np.int8)
    return result, HandRows(win=t.win, points=t.pts, deal_id=deal_id, a_player=plan.a_player, void=t.void,
                            knocker=knocker, gin=t.gin_a | t.gin_b, undercut=t.under_a | t.under_b)


def hand_points(agent_a: Agent, agent_b: Agent, num_hands: int, seed: int = 0, rules: Rules | None = None,
                batch: int = 1024) -> tuple[np.ndarray, np.ndarray]:
    """A's points minus B's in every hand ``play_match`` plays (duplicate deals), and each hand's deal id.

    Two agents measured against one opponent on one seed play the same deals, so their arrays pair
    up hand by hand: ``mean_ci(pa - pb, deal_id)`` is their difference with a CI over deal pairs,
    far tighter than the two separate CIs when most hands play alike.
    """
    rows = match_hands(agent_a, agent_b, num_hands, seed=seed, rules=rules, batch=batch)[1]
    return rows.points, rows.deal_id


def play_games(agent_a: Agent, agent_b: Agent, num_games: int, settings: MatchSettings | None = None,
               **options) -> GameMatchResult:
    """Play ``num_games`` full games (rounded up to even under duplicate deals) of A against B
    (``settings`` / ``options``: as in ``match_hands``). The deals come from ``seed + 1``."""
    return match_games(agent_a, agent_b, num_games, settings, **options)[0]


def match_games(agent_a: Agent, agent_b: Agent, num_games: int, settings: MatchSettings | None = None,
                **options) -> tuple[GameMatchResult, GameRows]:
    """``play_games``'s result and the games behind it (``GameRows``)."""
    s = MatchSettings.of(settings, options)
    if num_games < 1:
        raise ValueError(f"num_games must be >= 1, got {num_games}")
    plan = seat_plan(num_games, s.seed + 1, s.duplicate)
    m, a_player = len(plan.decks), plan.a_player
    win = np.full(m, 0.5)  # stays 0.5 for unfinished games
    margin = np.zeros(m)
    hands = np.zeros(m)
    scores = np.zeros((m, 2))

    def record(rows: np.ndarray, local: np.ndarray, r) -> None:
        hands[rows] += 1
        over = r.game_over[local]
        rows, local = rows[over], local[over]
        a = a_player[rows].astype(np.int64)
        win[rows] = r.game_winner[local] == a
        margin[rows] = r.scores[local, a] - r.scores[local, 1 - a]
        scores[rows] = np.stack([r.scores[local, a], r.scores[local, 1 - a]], axis=1)

    t0 = time.perf_counter()
    mine = play_rows(agent_a, agent_b, plan, "game", s, record)
    seconds = time.perf_counter() - t0
    if s.shard is not None:
        win, margin, hands, score_a, score_b = s.shard.combine(mine, win, margin, hands, scores[:, 0], scores[:, 1])
        scores = np.stack([score_a, score_b], axis=1)
        seconds, _ = s.shard.timing(seconds, 0.0)
    wr, wr_ci = rate_ci(win, plan.deal_id)
    mg, mg_ci = mean_ci(margin, plan.deal_id)
    result = GameMatchResult(
        agent_a=agent_a.name, agent_b=agent_b.name, games=m, duplicate=s.duplicate,
        wins_a=int((win == 1).sum()), wins_b=int((win == 0).sum()), unfinished=int((win == 0.5).sum()),
        win_rate=wr, win_rate_ci=wr_ci, margin=mg, margin_ci=mg_ci, hands_per_game=float(hands.mean()),
        seconds=seconds,
    )
    return result, GameRows(win=win, margin=margin, hands=hands, a_player=a_player, deal_id=plan.deal_id,
                            scores=scores)


def paired_match(agent_a: Agent, agent_b: Agent, opponent_a: Agent, opponent_b: Agent, num_hands: int,
                 settings: MatchSettings | None = None,
                 **options) -> tuple[PairedResult, MatchResult, MatchResult]:
    """A and B each against the opponent C on the same deals and seats: (A - B, A vs C, B vs C).

    ``opponent_a`` and ``opponent_b`` are two copies of C made with one seed (and A and B should be
    made with one seed too), so a randomised C draws the same numbers in both matches and an agent
    paired with itself reads exactly 0. The CIs are over deal pairs (hands without duplicate
    deals): the hands pair up, so the difference is far tighter than the two matches' own CIs.
    """
    s = MatchSettings.of(settings, options)
    ra, rows_a = match_hands(agent_a, opponent_a, num_hands, s)
    rb, rows_b = match_hands(agent_b, opponent_b, num_hands, s)
    pd, pd_ci = diff_ci(rows_a.points, rows_b.points, rows_a.deal_id)
    wd, wd_ci = diff_ci(rows_a.win, rows_b.win, rows_a.deal_id, bounds=(-1.0, 1.0))
    paired = PairedResult(
        agent_a=agent_a.name, agent_b=agent_b.name, opponent=opponent_a.name, hands=ra.hands, deals=ra.deals,
        duplicate=s.duplicate, points_diff=pd, points_diff_ci=pd_ci, win_rate_diff=wd, win_rate_diff_ci=wd_ci,
        hands_differing=int((rows_a.points != rows_b.points).sum()))
    return paired, ra, rb
