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
  sample size of those units instead (``okgin_trainer.stats.rate_ci``), which stays inside [0, 1].
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
seed gives the same numbers.

The rooms: this module reads the command line into an ``EvalSpec`` and runs one of its programs
(bot matches, a paired comparison, human results); the matches themselves are played by
``okgin_trainer.matches`` (``play_match`` is also the trainer's periodic evaluation), ratings are
``okgin.ratings``, the printed tables ``okgin.report_tables``, the human results ``okgin.human_results``
and the share of one process under torchrun ``okgin.sharding``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from dataclasses import dataclass, field
from itertools import combinations
from typing import Sequence

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # idle OpenMP threads sleep (see train.py); before numba/torch load

import okgin_agents as agents  # noqa: E402
from okgin_agents.llm import LLMError  # noqa: E402
from okgin_trainer.matches import (  # noqa: F401  (API)
    MAX_HANDS_PER_GAME,
    GameMatchResult,
    HandRows,
    MatchResult,
    MatchSettings,
    PairedResult,
    SeatPlan,
    agent_seed,
    deal_decks,
    display_names,
    hand_points,
    match_games,
    match_hands,
    paired_match,
    play_games,
    play_match,
    play_rows,
    seat_plan,
)
from okgin_trainer.matches import act_rows as _act  # noqa: F401  (experiments/improve uses it)
from okgin_trainer.stats import (  # noqa: F401  (API)
    BOOTSTRAP_REPS,
    RATING_PRIOR,
    Z95,
    bootstrap_ratings,
    diff_ci,
    mean_ci,
    percentile_interval,
    rate_ci,
)

from okgin.human_results import HUMAN_RESULTS_FORMAT, human_matches, human_report, read_human_results  # noqa: F401
from okgin.ratings import bradley_terry, rating_anchor, rating_table  # noqa: F401  (API)
from okgin.sharding import Shard
from okgin.report_tables import format_games, format_matches, format_paired, format_ratings
from okgin_env.agent_specs import Agent, AgentOutputError
from okgin_env.game.rules import Rules

PROG = "evaluate.py"  #: how error lines name the program


# ------------------------------------------------------------------- the spec

@dataclass(frozen=True)
class EvalSpec:
    """One run of evaluate.py, its arguments checked: which program and what it plays."""

    program: str  #: "matches" (--agents), "paired" (--paired A B --opponent C) or "human" (--human-results)
    specs: list[str] = field(default_factory=list)  #: agent specs (paired: A, B, C)
    hands: int = 0  #: hands per pair
    games: int = 0  #: full games per pair
    seed: int = 0
    duplicate: bool = True
    rules: Rules = field(default_factory=Rules)
    batch: int = 1024
    bootstrap: int = BOOTSTRAP_REPS
    json: str | None = None
    plot: str | None = None
    progress: bool = True
    human_results: str | None = None
    db: str | None = None  #: the results store's URL (okgin.arena): every match is recorded there

    @property
    def db_is_sqlite(self) -> bool:
        from okgin.arena.sqlite_writer import sqlite_path

        return self.db is not None and sqlite_path(self.db) is not None

    @property
    def names(self) -> list[str]:
        """The agents' display names in the tables (``display_names``: ppo:FILE, #2 for a repeat)."""
        return display_names(self.specs)

    @property
    def pairs(self) -> list[tuple[int, int]]:
        """The (i, j) agent pairs that play: A and B each against C when paired, else every pair."""
        return [(0, 2), (1, 2)] if self.program == "paired" else list(combinations(range(len(self.specs)), 2))

    def rows(self, num: int) -> int:
        """Episodes a match of ``num`` hands or games plays (rounded up to even under duplicate deals)."""
        return num + num % 2 if self.duplicate else num

    def settings(self, shard: Shard | None, progress) -> MatchSettings:
        """How this run's matches are played, with this process's share and the progress bar's update."""
        return MatchSettings(seed=self.seed, rules=self.rules, duplicate=self.duplicate, batch=self.batch,
                             progress=progress, shard=shard)


def build_parser() -> argparse.ArgumentParser:
    """evaluate.py's command line (``parse_spec`` checks what argparse cannot)."""
    ap = argparse.ArgumentParser(
        prog=PROG, description="Evaluate okgin agents head to head (two) or in a round robin (more).",
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
                         "needs the plot extra: pip install -e '.[plot]' in the checkout)")
    ap.add_argument("--bootstrap", type=int, default=BOOTSTRAP_REPS, metavar="N",
                    help=f"resamples of the deal pairs behind the ratings' 95%% CIs; 0 = none (default {BOOTSTRAP_REPS})")
    ap.add_argument("--no-progress", dest="progress", action="store_false", help="no progress bar on stderr")
    ap.add_argument("--db", metavar="URL",
                    help="also record every match, hand and game in the results store: a SQLite file path or a "
                         "URL such as postgresql+psycopg://user@host/db (needs the arena extra: "
                         "pip install -e '.[arena]' in the checkout; docs/arena.md)")
    return ap


def _program_specs(ap: argparse.ArgumentParser, args: argparse.Namespace) -> list[str]:
    """The agent specs of --paired A B --opponent C or of --agents, after the checks that belong to each."""
    if args.paired is not None:
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
        return [*args.paired, args.opponent]
    if args.opponent:
        ap.error("--opponent goes with --paired A B")
    if not args.agents:
        ap.error("the following arguments are required: --agents (or --paired A B --opponent C, "
                 "or --human-results PATH)")
    if len(args.agents) < 2:
        ap.error("--agents needs at least two agent specs")
    return list(args.agents)


def _check_play(ap: argparse.ArgumentParser, args: argparse.Namespace, specs: list[str]) -> Rules:
    """The checks of the numbers, the plot, the rules and the agents of a run that plays; returns its rules."""
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
        ap.error(f"--{'paired/--opponent' if args.paired is not None else 'agents'}: {e}")
    return rules


def parse_spec(argv: Sequence[str] | None = None) -> EvalSpec:
    """The run the command line asks for; a bad argument exits 2 with one line saying what is allowed."""
    ap = build_parser()
    args = ap.parse_args(argv)
    if args.human_results:
        if args.agents or args.paired:
            ap.error("--human-results reads a file of played games; drop --agents / --paired")
        if args.db:
            ap.error("--db records the matches of --agents; the web table records people's games itself "
                     "(play.py --web --db URL)")
        return EvalSpec("human", json=args.json, human_results=args.human_results)
    specs = _program_specs(ap, args)
    rules = _check_play(ap, args, specs)
    if args.db and args.paired is not None:
        ap.error("--db records the matches of --agents; drop it with --paired")
    if args.db:
        _check_store(ap, args.db)
    return EvalSpec("paired" if args.paired is not None else "matches", specs, hands=args.hands, games=args.games,
                    seed=args.seed, duplicate=args.duplicate, rules=rules, batch=args.batch, bootstrap=args.bootstrap,
                    json=args.json, plot=args.plot, progress=args.progress, db=args.db)


def _check_store(ap: argparse.ArgumentParser, url: str) -> None:
    """--db: a URL okgin can use; a SQLite store is opened (created or upgraded) now, so a bad path exits 2
    before anything is played (a PostgreSQL store is opened by the writer process while the matches play)."""
    from okgin.arena.sqlite_writer import connect, sqlite_path

    try:
        path = sqlite_path(url)
        if path is not None:
            connect(path).close()
    except ImportError as e:
        ap.error(f"--db: {e}")
    except Exception as e:  # noqa: BLE001 - a bad URL, a file that cannot be made: one line
        ap.error(f"--db {url}: {type(e).__name__}: {str(e).splitlines()[0][:300] if str(e) else ''}")


def _fail(message: str) -> None:
    print(f"{PROG}: error: {message}", file=sys.stderr)
    sys.exit(2)


# ------------------------------------------------------------------- the programs

class Players:
    """The run's agents, seeded per pair and side and named for the tables; under torchrun made through the
    process's ``Shard`` (``okgin.sharding``: sharded runs), which plays only its share of the batches."""

    def __init__(self, spec: EvalSpec) -> None:
        self.spec, self.names = spec, spec.names
        # every agent is made for the run's rules: a search bot simulates the game it plays (agents.for_rules)
        self.shard = Shard.from_env(lambda s, seed: agents.make(s, seed=seed, rules=spec.rules))  # None: plain run
        self.lead = self.shard is None or self.shard.rank == 0  #: the process that prints and writes
        self.made: list[Agent] = []  #: the agents made in this process (a plain run), for their counters
        if self.shard is not None and self.lead:
            self.shard.note_idle(max(spec.rows(spec.hands), spec.rows(spec.games)), spec.batch, PROG)

    def make(self, k: int, pair: int, side: int) -> Agent:
        """Agent ``k`` as side ``side`` (0: A, 1: B) of pair number ``pair``."""
        seed = agent_seed(self.spec.seed, pair, side)
        if self.shard is not None:
            return self.shard.make(self.spec.specs[k], seed, self.names[k])
        agent = agents.make(self.spec.specs[k], seed=seed, rules=self.spec.rules)
        agent.name = self.names[k]
        self.made.append(agent)
        return agent

    def agent_stats(self) -> list[dict]:
        """The counters of the agents that keep them (``stats.to_dict()``: a language model's requests,
        refused answers, fallbacks, tokens), one entry per agent made, in the order they played."""
        return [{"agent": a.name, **a.stats.to_dict()} for a in self.made
                if callable(getattr(getattr(a, "stats", None), "to_dict", None))]

    def episodes(self) -> int:
        """The episodes this process plays in all (the progress bar's total)."""
        share = (lambda rows: rows) if self.shard is None else (lambda rows: self.shard.episodes(rows, self.spec.batch))
        spec = self.spec
        return (share(spec.rows(spec.hands)) + share(spec.rows(spec.games))) * len(spec.pairs)


@dataclass
class Results:
    """What a run played: each pair's hands (with their rows, for the ratings), games, and the paired comparison."""

    matches: list[tuple[int, int, MatchResult]] = field(default_factory=list)
    rows: list[HandRows] = field(default_factory=list)
    games: list[tuple[int, int, GameMatchResult]] = field(default_factory=list)
    paired: PairedResult | None = None
    game_rows: list = field(default_factory=list)  #: each game match's GameRows (the results store keeps them)
    agent_stats: list[dict] = field(default_factory=list)  #: ``Players.agent_stats`` (language models' counters)


def bot_matches(spec: EvalSpec, players: Players, bar, between=None) -> Results:
    """--agents: every pair on the same deals (hands, then games), each pair's agents seeded for that pair;
    ``between()`` is called after each pair (--db: has the store's writer failed to open it?)."""
    res, settings = Results(), spec.settings(players.shard, bar.update)
    for p, (i, j) in enumerate(spec.pairs):
        a, b = players.make(i, p, 0), players.make(j, p, 1)
        bar.set_postfix_str(f"{players.names[i]} vs {players.names[j]}")
        if spec.hands:
            r, rows = match_hands(a, b, spec.hands, settings)
            res.matches.append((i, j, r))
            res.rows.append(rows)
        if spec.games:
            g, game_rows = match_games(a, b, spec.games, settings)
            res.games.append((i, j, g))
            res.game_rows.append(game_rows)
        if between is not None:
            between()
    return res


def paired_comparison(spec: EvalSpec, players: Players, bar) -> Results:
    """--paired A B --opponent C: A and B (one seed) each against a copy of C (one seed) on the same deals."""
    names = players.names
    bar.set_postfix_str(f"{names[0]} and {names[1]} vs {names[2]}")
    paired, ra, rb = paired_match(players.make(0, 0, 0), players.make(1, 0, 0), players.make(2, 0, 1),
                                  players.make(2, 0, 1), spec.hands, spec.settings(players.shard, bar.update))
    return Results(matches=[(0, 2, ra), (1, 2, rb)], paired=paired)


def human_program(spec: EvalSpec) -> dict:
    """--human-results PATH: the tables of a person's games (``okgin.human_results``), one-line errors."""
    try:
        return human_report(spec.human_results, spec.json)
    except (OSError, ValueError, KeyError, TypeError) as e:
        what = f"{e.strerror}: {e.filename}" if isinstance(e, OSError) and e.strerror else f"{type(e).__name__} {e}" \
            if isinstance(e, (KeyError, TypeError)) else str(e)
        _fail(f"--human-results: {what}")


# ------------------------------------------------------------------- the report

def build_report(spec: EvalSpec, shard: Shard | None, res: Results) -> dict:
    """Every number of the run (what --json writes)."""
    report = {
        "agents": spec.names, "specs": spec.specs, "seed": spec.seed, "duplicate": spec.duplicate,
        "hands_per_pair": spec.hands, "games_per_pair": spec.games, "batch": spec.batch,
        "rules": spec.rules.to_dict(),
        # torchrun: how many processes played it; agents per batch (okgin.sharding) rather than per match
        "world_size": 1 if shard is None else shard.world_size,
        "agent_seeds": "per match" if shard is None else "per batch",
        "matches": [r.to_dict() for _, _, r in res.matches],
        "games": [g.to_dict() for _, _, g in res.games],
    }
    if res.paired is not None:
        report["paired"] = res.paired.to_dict()
    if res.agent_stats:  # only when an agent keeps counters: a run of bots writes the same keys as before
        report["agent_stats"] = res.agent_stats
    if len(spec.specs) > 2 and res.matches and spec.program == "matches":
        report["ratings"] = rating_table(spec.names, res.matches, res.rows, reps=spec.bootstrap, seed=spec.seed)
        report["rating_anchor"] = spec.names[rating_anchor(spec.names)]
        report["rating_ci_method"] = (f"percentile bootstrap over deal pairs, {spec.bootstrap} resamples, seed "
                                      f"{spec.seed}" if spec.bootstrap else None)
    return report


def print_report(spec: EvalSpec, shard: Shard | None, res: Results, report: dict) -> None:
    """The tables on stdout: a headline, the matches, the games, the paired row, the ratings."""
    changed = {k: v for k, v in spec.rules.to_dict().items() if v != getattr(Rules(), k)}
    print(f"okgin {'paired comparison' if spec.program == 'paired' else 'evaluation'}: seed {spec.seed}, "
          f"{'duplicate deals' if spec.duplicate else 'single deals'}, "
          f"rules: {', '.join(f'{k}={v}' for k, v in changed.items()) or 'default (Oklahoma Gin)'}"
          + (f", {shard.world_size} processes" if shard is not None and shard.world_size > 1 else ""))
    if res.matches:
        print(f"\n{format_matches([r for _, _, r in res.matches])}")
    if res.games:
        print(f"\n{format_games([g for _, _, g in res.games])}")
    if res.paired is not None:
        names = spec.names
        print(f"\n{names[0]} minus {names[1]} against {names[2]}, same deals, seats and agent seeds "
              f"(95% CIs over {'deal pairs' if spec.duplicate else 'hands'}):")
        print(format_paired(res.paired))
    if "ratings" in report:
        print(f"\nratings (Bradley-Terry on hands, Elo scale, {report['rating_anchor']} = 0):")
        if report["rating_ci_method"]:
            print(f"95% CIs: {report['rating_ci_method']}")
        print(format_ratings(report["ratings"]))
    for st in res.agent_stats:
        if "refused" in st:  # a language model (okgin_agents.llm.LLMStats)
            print(f"\n{st['agent']}: {st['refused']} of {st['answers']} answers refused (illegal-move rate "
                  f"{st['illegal_move_rate']:.1%}), {st['fallbacks']} fallback moves of {st['decisions']} decisions; "
                  f"{st['requests']} requests, {st['retries']} retries, "
                  f"{st['prompt_tokens'] + st['completion_tokens']} tokens")


def write_outputs(spec: EvalSpec, report: dict, res: Results) -> None:
    """--json and --plot (an unwritable path is a one-line error)."""
    if spec.json:
        try:
            with open(spec.json, "w") as f:
                json.dump(report, f, indent=2)
        except OSError as e:
            _fail(f"cannot write --json {spec.json}: {e}")
    if spec.plot and res.matches:
        from okgin import plot

        try:
            plot.plot_report(report, spec.plot)
        except OSError as e:
            _fail(f"cannot write --plot {spec.plot}: {e}")


def record_matches(spec: EvalSpec, shard: Shard | None, res: Results, recorder) -> None:
    """--db: every pair's hands and games into the results store (``okgin.arena``), one transaction a match:
    a SQLite store by ``okgin.arena.sqlite_writer`` here, a PostgreSQL one by ``recorder`` (a child process,
    ``okgin.arena.recorder``, that opened it while the matches played)."""
    import uuid

    from okgin.arena.record import evaluation_records
    from okgin.arena.recorder import RecorderError

    seeds = [(agent_seed(spec.seed, p, 0), agent_seed(spec.seed, p, 1)) for p in range(len(spec.pairs))] \
        if shard is None else [None] * len(spec.pairs)  # under torchrun the agents are seeded per batch
    records = evaluation_records(
        spec.specs, spec.names, spec.pairs, spec.seed, spec.duplicate, spec.rules.to_dict(),
        [(i, j, r, rows) for (i, j, r), rows in zip(res.matches, res.rows)],
        [(i, j, g, rows) for (i, j, g), rows in zip(res.games, res.game_rows)], seeds, uuid.uuid4().hex)
    try:
        if recorder is None:
            from okgin.arena.sqlite_writer import record_all

            record_all(spec.db, records)
        else:
            recorder.record(records)
    except (RecorderError, OSError, ValueError) as e:  # the tables and --json are out already: say what was not
        _fail(f"--db: the matches were played but not recorded: {e}")
    except Exception as e:  # noqa: BLE001 - sqlite3's errors (a locked or full disk) as one line
        _fail(f"--db: the matches were played but not recorded: {type(e).__name__}: {e}")
    print(f"{PROG}: recorded {len(records)} match(es) in the results store", file=sys.stderr)


def evaluate_against(agent: Agent, opponents: Sequence[str], hands: int, seed: int) -> list[MatchResult]:
    """``agent`` against each opponent spec over ``hands`` hands on duplicate deals from ``seed``
    (``play_match``; the opponent seeded with ``seed``), one line printed per opponent: points/hand with
    its 95% CI, hand win rate, void share. The examples end with it. Returns the results in order."""
    results = []
    for opponent in opponents:
        r = play_match(agent, agents.make(opponent, seed=seed), hands, seed=seed)
        lo, hi = r.points_ci
        print(f"against {opponent} over {r.hands} hands ({r.deals} duplicate deals): {r.points_per_hand:+.2f} "
              f"[{lo:+.2f}, {hi:+.2f}] points/hand (95% CI), hand win rate {r.win_rate:.3f}, {r.void_rate:.0%} void")
        results.append(r)
    return results


# ------------------------------------------------------------------- main

def main(argv: Sequence[str] | None = None) -> dict:
    """Run evaluate.py as the command line says; returns the report (what --json writes)."""
    spec = parse_spec(argv)
    if spec.program == "human":
        return human_program(spec)
    players = Players(spec)
    from tqdm import tqdm
    bar = tqdm(total=players.episodes(), unit="ep", file=sys.stderr, disable=not (spec.progress and players.lead),
               desc="evaluate")
    recorder = None
    if spec.db and players.lead and not spec.db_is_sqlite:  # PostgreSQL: opened in a child while the matches play
        from okgin.arena.recorder import Recorder, RecorderError

        recorder = Recorder(spec.db)

        def between() -> None:
            try:
                recorder.check()
            except RecorderError as e:
                bar.close()
                _fail(f"--db: {e}")
    try:
        if spec.program == "paired":
            res = paired_comparison(spec, players, bar)
        else:
            res = bot_matches(spec, players, bar, between if recorder is not None else None)
    except (AgentOutputError, LLMError) as e:  # a plug-in's bad output: one line naming it, as for bad arguments
        bar.close()
        if recorder is not None:
            recorder.close()
        _fail(str(e))
    bar.close()
    res.agent_stats = players.agent_stats()
    report = build_report(spec, players.shard, res)
    if players.lead:
        print_report(spec, players.shard, res, report)
        write_outputs(spec, report, res)
        if spec.db:
            record_matches(spec, players.shard, res, recorder)
    if players.shard is not None:
        players.shard.close()
    return report


def cli() -> None:
    """The ``okgin-evaluate`` command (and ``python evaluate.py``)."""
    main()


if __name__ == "__main__":
    cli()
