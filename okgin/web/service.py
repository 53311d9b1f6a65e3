"""The web table's service: its configuration, the games it holds, the bots it allows, the checks of
what a client sends. No HTTP here (no Starlette): ``okgin.web.endpoints`` serves it, ``okgin.web.server``
runs it.

The game is ``okgin.human_table.Table`` (``VectorGame(1)``, the terminal's table); the bots come from
``okgin_env.make_agent`` through ``okgin.human_table.seat_bot``; rule text, hand results, command
parsing and the log format are the terminal's. The games live in ``okgin.web.games``, their JSON in
``okgin.web.views``, the results file in ``okgin.web.results``. Every refusal is an
``okgin.web.errors.GameError`` (the HTTP layer gives it its status) and changes nothing.

* the bots a client may name are fixed when the table is built (``allow``): a client's string is
  only ever looked up in that table, never handed to ``make_agent`` (no ``module:Attr``, no path);
* game ids are ``secrets.token_urlsafe``; at most ``max_games`` games, watches and replays live in
  memory, the least recently used is evicted first;
* a human game's view never holds what the human may not see: the opponent's cards, the stock,
  the deck order or a server-chosen seed (which would re-deal the deck) before the showdown;
* each finished or abandoned human game is appended to a JSON-lines results file; a line that
  cannot be written is kept and written later, and the game-over view says so.
"""

from __future__ import annotations

import os
import re
import secrets
import threading
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np

from okgin.human_table import HELP, UsageError, seat_bot, spec_label
from okgin.web.errors import Conflict, Invalid
from okgin.web.games import REPLAY_PAGE, GameSetup, HumanGame, Registry, ReplayGame, WatchGame
from okgin.web.results import ResultsFile
from okgin_env.game.rules import Rules

DEFAULT_RESULTS = os.path.join("runs", "human_results.jsonl")
DEFAULT_MAX_GAMES = 256  #: games, watches and replays kept in memory; the least recently used goes first
DEFAULT_MAX_BODY = 1 << 20  #: bytes; a logged game to 100 is ~50 KB, a 10,000-move log ~400 KB
MAX_SEED = 2 ** 31 - 1
LOOPBACK_NAMES = ("localhost", "127.0.0.1", "[::1]")


# ----------------------------------------------------------------------------- checks of what a client sends

def _rules_from(value: Any, base: Rules) -> Rules:
    """Client rules: an object {option: value} or a list of "key=value" strings, over the server's rules."""
    if value is None:
        return base
    try:
        if isinstance(value, dict):
            return Rules.from_dict({**base.to_dict(), **value})
        if isinstance(value, list) and all(isinstance(x, str) for x in value):
            changed = Rules.from_strings(value).to_dict()
            given = {k.split("=", 1)[0].strip() for k in value}
            return Rules.from_dict({**base.to_dict(), **{k: changed[k] for k in given}})
    except (ValueError, TypeError) as e:
        raise Invalid(f"bad 'rules': {e}") from None
    raise Invalid("'rules' must be an object of rule options, e.g. {\"knock_limit\": 10}, "
                  f"or a list of \"key=value\" strings; options: {', '.join(Rules.option_names())}")


def _seed_from(value: Any) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_SEED:
        raise Invalid(f"'seed' must be an integer 0-{MAX_SEED}, got {value!r}")
    return value


def _bool_from(value: Any, name: str, default: bool) -> bool:
    if value is None:
        return default
    if not isinstance(value, bool):
        raise Invalid(f"'{name}' must be true or false, got {value!r}")
    return value


def _only_keys(body: dict, allowed: Sequence[str]) -> None:
    extra = sorted(set(body) - set(allowed))
    if extra:
        raise Invalid(f"unknown field(s) {', '.join(map(repr, extra))}; allowed: {', '.join(allowed)}")


def shared_spec(spec: str) -> bool:
    """Whether ``spec``'s bot is made once and shared by all games: the kinds that read a checkpoint
    (``ppo:PATH``, ``search:K:PATH``), which would cost each game seconds. Every other bot is made
    for each game from the game's seed (``opponent_seed``), so a game is reproducible from its seed.
    Decided by the spec, not by how long the bot took to make (the first spec made also pays for
    ``import okgin_agents``)."""
    head, _, rest = spec.strip().partition(":")
    return head.lower() == "ppo" or (head.lower() == "search" and ":" in rest)


class SharedAgent:
    """One bot for every game (a PPO network is loaded once): ``act`` is serialised by a lock.

    Its moves are those of a fresh bot when it is deterministic (``ppo:PATH`` is); a randomised
    slow bot (``search:K:PATH``) draws from one stream for all games instead of one per game seed.
    """

    def __init__(self, agent: Any) -> None:
        self.agent = agent
        self.name = getattr(agent, "name", None)
        self._lock = threading.Lock()

    def act(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        with self._lock:
            return self.agent.act(observations, action_masks)


_WHOLE_NUMBER = re.compile(r"[0-9]{1,9}")  #: ASCII digits only: isdigit() admits '²', \d admits '٣'


def whole_number(text: str | None, name: str, default: int, high: int, low: int = 0) -> int:
    """A query parameter as a whole number ``low``-``high`` (``default`` when absent); else 400 saying so."""
    if text is None:
        return default
    if _WHOLE_NUMBER.fullmatch(text) is None or not low <= int(text) <= high:
        raise Invalid(f"'{name}' must be a whole number {low}-{high}, got {text[:20]!r}")
    return int(text)


# ----------------------------------------------------------------------------- the table's state

@dataclass
class WebConfig:
    """What ``play.py --web`` fixes at start: the bots a client may ask for, rules, limits, files, hosts."""

    opponent: str = "expert"
    allow: Sequence[str] = ()
    watch: tuple[str, str] | None = None
    rules: Rules = field(default_factory=Rules)
    hand_only: bool = False
    seed: int | None = None
    results: str | None = DEFAULT_RESULTS
    max_games: int = DEFAULT_MAX_GAMES
    max_body: int = DEFAULT_MAX_BODY
    listen: str = "127.0.0.1"  #: the address the server listens on: a Host the page may be reached by
    allow_hosts: Sequence[str] = ()  #: more Host names (``--allow-host``), e.g. this machine's LAN name
    db: str | None = None  #: the results store (``--db``): people's games recorded there, the leaderboard read from it

    def hosts(self) -> list[str]:
        """Every ``Host`` (without port) a request may carry: the listen address, loopback, ``allow_hosts``."""
        listen = f"[{self.listen}]" if ":" in self.listen else self.listen
        return list(dict.fromkeys(h.lower() for h in (listen, *LOOPBACK_NAMES, *self.allow_hosts)))


class AllowedBots:
    """The bots a client may name, fixed at start: each spec is made once now (a bad one fails at start,
    not when a client asks), and a bot that reads a checkpoint is shared by all games (``shared_spec``)."""

    def __init__(self, specs: Sequence[str], make: Callable[[str, int], Any]) -> None:
        self._make = make
        self.specs: dict[str, str] = {}  #: display name (and spec as written) -> spec
        self._shared: dict[str, SharedAgent] = {}
        for spec in specs:
            agent = make(spec, 0)  # fails now (UsageError), not when a client asks
            if shared_spec(spec):  # ppo:PATH reads its checkpoint: once, not per game
                self._shared[spec] = SharedAgent(agent)
            self.specs.setdefault(spec_label(spec), spec)

    def lookup(self, name: Any, field_name: str = "opponent") -> tuple[str, str]:
        """(allow-list name, spec) of an allowed bot; a client's string is only ever a key into the allow-list."""
        if not isinstance(name, str) or spec_label(name) not in self.specs:
            raise Invalid(f"'{field_name}' must be one of the bots this server allows: "
                          f"{', '.join(self.specs)} (got {str(name)[:60]!r})")
        key = spec_label(name)
        return key, self.specs[key]

    def for_game(self, spec: str, seed: int) -> Any:
        """A game's bot: a fresh one seeded for the game (as the terminal's), or the shared one (``shared_spec``)."""
        shared = self._shared.get(spec)
        return shared if shared is not None else self._make(spec, seed)


class SeedStream:
    """The seeds of new tables: the client's (public), else the server's ``--seed`` stream, else a secret one."""

    def __init__(self, seed: int | None) -> None:
        self.seed = seed
        self._created = 0
        self._lock = threading.Lock()

    def next(self, given: int | None) -> tuple[int, bool]:
        """(seed, public): the client's seed, else one from the server's --seed stream, else a secret one."""
        if given is not None:
            return given, True
        with self._lock:
            k = self._created
            self._created += 1
        if self.seed is not None:
            return int(np.random.SeedSequence([self.seed, k]).generate_state(1)[0] % MAX_SEED), False
        return secrets.randbelow(MAX_SEED), False


class WebTable:
    """The API's operations over the games registry, the allowed bots, the seeds and the results file."""

    def __init__(self, config: WebConfig, make: Callable[[str, int], Any] | None = None) -> None:
        self.config = config
        self.bots = AllowedBots([config.opponent, *config.allow, *(config.watch or ())], make or seat_bot)
        self.seeds = SeedStream(config.seed)
        self.opponent = spec_label(config.opponent)
        self.games = Registry(config.max_games)
        self.results = ResultsFile(config.results)
        self.arena = None  #: okgin.web.arena.ArenaLink with --db
        if config.db:
            from okgin.web.arena import ArenaLink

            try:
                self.arena = ArenaLink(config.db, config.rules.to_dict())
            except ImportError as e:
                raise UsageError(str(e)) from None
            except Exception as e:  # noqa: BLE001 - a bad URL or a server that is down: one line at start
                raise UsageError(f"cannot open the results store {config.db}: {type(e).__name__}: "
                                 f"{str(e).splitlines()[0][:300] if str(e) else ''}") from None

    def warm_up(self) -> None:
        """Play a whole hand against each bot, its views, log and replay, so that numba has compiled every
        kernel a client's game uses before the first page loads (torch initialises a network too)."""
        for key, spec in self.bots.specs.items():
            g = HumanGame(GameSetup(key, spec, self.config.rules, True, 0, True), self.bots.for_game)
            for _ in range(1000):
                g.view("warm-up")
                if g.table.finished:
                    break
                g.play(int(np.flatnonzero(g.table.mask)[-1]))  # a knock when there is one
            ReplayGame(g.table.log_dict("play")).frames(0, 3)

    def table_options(self, body: dict) -> tuple[Rules, bool, tuple[int, bool]]:
        """A new table's rules, hand_only and (seed, public) from a request body (the server's defaults
        where a key is absent); the game and the watch table read them alike."""
        rules = _rules_from(body.get("rules"), self.config.rules)
        hand_only = _bool_from(body.get("hand_only"), "hand_only", self.config.hand_only)
        return rules, hand_only, self.seeds.next(_seed_from(body.get("seed")))

    def opened(self, table: Any, first_frame: Callable[[str], dict[str, Any]]) -> dict[str, Any]:
        """Register a new table and return ``first_frame(its id)``, taken under the table's lock."""
        tid = self.games.add(table)
        with table.lock:
            return first_frame(tid)

    def public_config(self) -> dict[str, Any]:
        c = self.config
        return {"opponent": self.opponent, "bots": list(self.bots.specs), "rules": c.rules.to_dict(),
                "rule_options": Rules.option_names(), "hand_only": c.hand_only,
                "watch": [spec_label(s) for s in c.watch] if c.watch else None, "help": HELP,
                "arena": self.arena is not None}

    # the API's operations (called in a worker thread)
    def create_game(self, body: dict) -> dict[str, Any]:
        _only_keys(body, ("opponent", "rules", "hand_only", "seed", "player"))
        key, spec = self.bots.lookup(body.get("opponent", self.opponent))
        rules, hand_only, (seed, public) = self.table_options(body)
        g = HumanGame(GameSetup(key, spec, rules, hand_only, seed, public), self.bots.for_game, self.results.append)
        if self.arena is not None:  # --db: each result also goes to the store, as the person named by the page
            from okgin.web.arena import player_name

            person = player_name(body.get("player"))
            g.save = lambda record: self._save_both(g, person, record)
            if g.recorded:  # the bot ended the game before the person's first move: the file has it already
                self.arena.save(g, person, g.record())
        return self.opened(g, g.view)

    def _save_both(self, game: HumanGame, person: str, record: dict) -> tuple[bool | None, str | None]:
        """The results file's line (its answer is the game's), then the store's match (a failure is logged)."""
        saved = self.results.append(record)
        self.arena.save(game, person, record)
        return saved

    def read_game(self, gid: str) -> dict[str, Any]:
        g = self.games.get(gid, HumanGame)
        with g.lock:
            return g.view(gid)

    def play(self, gid: str, body: dict) -> dict[str, Any]:
        _only_keys(body, ("action",))
        if "action" not in body:
            raise Invalid("missing 'action': an action id (0-106) or a command such as \"s\" or \"7h\"")
        g = self.games.get(gid, HumanGame)
        with g.lock:
            g.play(body["action"])
            return g.view(gid)

    def abandon(self, gid: str, body: dict) -> dict[str, Any]:
        _only_keys(body, ())
        g = self.games.get(gid, HumanGame)
        with g.lock:
            g.abandon()
            return g.view(gid)

    def game_log(self, gid: str) -> dict[str, Any]:
        g = self.games.get(gid, HumanGame)
        with g.lock:
            if not g.table.finished:
                raise Conflict("the log holds the deck order, so it is given once the game is over")
            return g.table.log_dict("play")

    def create_watch(self, body: dict) -> dict[str, Any]:
        _only_keys(body, ("a", "b", "rules", "hand_only", "seed"))
        default = self.config.watch or (self.config.opponent, self.config.opponent)
        na, sa = self.bots.lookup(body.get("a", spec_label(default[0])), "a")
        nb, sb = self.bots.lookup(body.get("b", spec_label(default[1])), "b")
        rules, hand_only, (seed, _) = self.table_options(body)
        names = (na, nb) if na != nb else (f"{na} A", f"{nb} B")
        w = WatchGame((sa, sb), names, rules, hand_only, seed, self.bots.for_game)
        return self.opened(w, w.start)

    def step_watch(self, wid: str) -> dict[str, Any]:
        w = self.games.get(wid, WatchGame)
        with w.lock:
            return w.step()

    def create_replay(self, body: Any) -> dict[str, Any]:
        r = ReplayGame(body)
        rid = self.games.add(r)
        with r.lock:
            return {"id": rid, **r.head, "start": 0, "frames": r.frames(0)}

    def replay_frames(self, rid: str, start: Any, count: Any) -> dict[str, Any]:
        r = self.games.get(rid, ReplayGame)
        with r.lock:
            n = r.head["moves"]
            first = whole_number(start, "start", 0, n)
            return {"id": rid, "moves": n, "start": first,
                    "frames": r.frames(first, whole_number(count, "count", REPLAY_PAGE, REPLAY_PAGE, low=1))}
