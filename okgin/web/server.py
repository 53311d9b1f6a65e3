"""The web table: a Starlette app serving the page and the JSON API over ``okgin.play``'s game.

    python play.py --web --opponent expert            # http://127.0.0.1:8000/
    python play.py --web --watch simple expert        # the page opens on watching two bots

The game is ``okgin.play.Table`` (``VectorGame(1)``, the terminal's table); the bots come from
``okgin_agents.make``; rule text, hand results, command parsing and the log format are play.py's.
This module only keeps games in memory and turns them into JSON views (docs/play.md documents
the API). Safety rules (issue #27):

* the bots a client may name are fixed when the app is built (``allowed``): a client's string is
  only ever looked up in that table, never handed to ``agents.make`` (no ``module:Attr``, no path);
* game ids are ``secrets.token_urlsafe``; at most ``max_games`` games live in memory, the least
  recently used is evicted first;
* every bad request gets a 4xx JSON ``{"error": ...}`` and leaves the game unchanged; request
  bodies over ``max_body`` bytes are refused (413) before they are read in full;
* a human game's view never holds what the human may not see: the opponent's cards, the stock,
  the deck order or a server-chosen seed (which would re-deal the deck) before the showdown;
* each finished human game is appended to a JSON-lines results file in one ``write`` + ``fsync``.
"""

from __future__ import annotations

import json
import os
import secrets
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from okgin.table import (HELP, HUMAN, Table, UsageError, agent_name, check_log, command_for,
                        illegal_reason, move_words, opponent_seed, parse_command)
from okgin_env.actions import DRAW_STOCK, NUM_ACTIONS, action_parts
from okgin_env.cards import CARD_POINTS, NUM_CARDS, card_pretty, card_text, cards_of, parse_card, sort_cards
from okgin_env.core import Phase
from okgin_env.render import knock_limit_words, meld_groups, pile_top, render_hand_result, score_line
from okgin_env.rules import Rules

STATIC_DIR = Path(__file__).resolve().parent / "static"
RESULTS_FORMAT = "okgin-human-results"
RESULTS_VERSION = 1
DEFAULT_RESULTS = os.path.join("runs", "human_results.jsonl")
DEFAULT_MAX_GAMES = 256  #: games (and watches) kept in memory; the least recently used goes first
DEFAULT_MAX_BODY = 1 << 20  #: bytes; a replayed log of a long game is ~50 KB
MAX_SEED = 2 ** 31 - 1
NEXT_WORDS = ("", "n", "next", "next hand", "enter")  #: commands that deal on after a showdown

_PHASE_PROMPT = {
    Phase.OFFER_NONDEALER: "Take the {top} or pass",
    Phase.OFFER_DEALER: "{opp} passed: take the {top} or pass",
    Phase.FORCED_DRAW: "Both passed on the upcard: draw from the stock",
    Phase.DRAW: "Draw from the stock or take the {top}",
    Phase.DISCARD: "Discard a card, or knock",
}


class ApiError(Exception):
    """A request the API refuses: HTTP ``status`` (4xx) and a one-line message; nothing was changed."""

    def __init__(self, status: int, message: str, **extra: Any) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.extra = extra


# ----------------------------------------------------------------------------- cards as JSON

def card_json(card: int) -> dict[str, str]:
    """{'card': '7h', 'text': '7♥'}: the canonical text and the display form."""
    return {"card": card_text(int(card)), "text": card_pretty(int(card))}


def _points(cards: Sequence[int]) -> int:
    return int(sum(int(CARD_POINTS[c]) for c in cards))


def hand_json(cards: Sequence[int]) -> dict[str, Any]:
    """A hand sorted and grouped into melds (one minimal-deadwood arrangement) with its deadwood."""
    melds, dead = meld_groups(list(cards))
    return {"count": len(cards), "cards": [card_json(c) for c in sort_cards(cards)],
            "melds": [[card_json(c) for c in m] for m in melds],
            "deadwood_cards": [card_json(c) for c in dead], "deadwood": _points(dead)}


_LABELS = {"draw": "Draw from stock", "take": "Take {top}", "pass": "Pass",
           "knock": "Knock, discarding {card}", "discard": "Discard {card}"}


def action_label(action: int, state) -> str:
    """The accessible name of the button that plays ``action``: 'Draw from stock', 'Take 7♥', ..."""
    kind, card = action_parts(action)
    top = pile_top(state)
    return _LABELS[kind].format(card=card_pretty(card) if card is not None else "",
                                top=card_pretty(top) if top >= 0 else "the top discard")


def legal_json(mask: np.ndarray, state) -> list[dict[str, Any]]:
    """Every legal action: id, the terminal's command, kind and button label (card for discards/knocks)."""
    out = []
    for a in np.flatnonzero(mask):
        kind, card = action_parts(a)
        row = {"id": int(a), "command": command_for(a), "kind": kind, "label": action_label(a, state)}
        if card is not None:  # a discard (0-51) or a knock (52-103) names its card
            row["card"] = card_text(card)
        out.append(row)
    return out


def _who(v: Any) -> int | None:
    """A player id of a hand result, None for "nobody" (older dicts say None, newer ones -1)."""
    return None if v is None or int(v) < 0 else int(v)


def result_json(info: dict, names: Sequence[str], hand_no: int) -> dict[str, Any]:
    """A hand result (``hand_result_info``) with the terminal's words for it: text, why and how many points."""
    pretty = lambda texts: [{"card": t, "text": card_pretty(parse_card(t))} for t in texts]  # noqa: E731
    w, k = _who(info["winner"]), _who(info["knocker"])
    if info["void"]:
        how = "void"
    elif info["gin"]:
        how = "gin"
    elif info["undercut"]:
        how = "undercut"
    else:
        how = "knock"
    limit = info.get("knock_limit")
    limit = None if limit is None or limit < 0 else int(limit)
    upcard = card_pretty(parse_card(info["upcard"]))
    return {
        "hand": hand_no, "how": how, "knocker": k, "winner": w, "points": list(info["points"]),
        "points_won": 0 if w is None else info["points"][w], "scores": list(info["scores"]),
        "deadwood": list(info["deadwood"]), "knock_limit": limit, "upcard": upcard,
        "knock_limit_text": f"{limit} (upcard {upcard})" if limit is not None else f"upcard {upcard}",
        "knock_card": pretty([info["knock_card"]])[0] if info["knock_card"] else None,
        "melds": [[pretty(m) for m in info["melds"][p]] for p in (0, 1)],
        "deadwood_cards": [pretty(info["deadwood_cards"][p]) for p in (0, 1)],
        "layoffs": [{"card": pretty([x["card"]])[0], "onto": pretty(x["onto"])} for x in info["layoffs"]],
        "score_line": score_line(info, names), "text": render_hand_result(info, names=names),
        "game_over": bool(info["game_over"]), "game_winner": _who(info["game_winner"]),
    }


# ----------------------------------------------------------------------------- a human's game

@dataclass
class HumanGame:
    """A person (player 0) against one bot; the bot moves inside the human's requests."""

    spec: str
    name: str
    rules: Rules
    hand_only: bool
    seed: int
    seed_public: bool  #: the client chose the seed (it may see it); a server seed stays secret to the end
    make: Callable[[str, int], Any]
    on_finish: Callable[["HumanGame"], None] | None = None
    table: Table = field(init=False)
    lock: threading.Lock = field(default_factory=threading.Lock)
    pending: dict | None = None  #: result of the hand that just ended, shown until the human deals on
    opp_moves: list = field(default_factory=list)  #: the bot's moves since the human's last move, in words
    error: str | None = None
    started: float = field(default_factory=time.time)
    recorded: bool = False

    def __post_init__(self) -> None:
        self.table = Table(self.rules, self.hand_only, self.seed, ("You", self.name), ("human", self.spec))
        self.agent = self.make(self.spec, opponent_seed(self.seed, 0))
        self._bot_moves()

    def _bot_moves(self) -> None:
        """The bot plays until it is the human's turn, a hand ends or the game ends."""
        t = self.table
        while not t.finished and self.pending is None and t.current != HUMAN:
            a = int(self.agent.act(t.out.observation, t.out.legal_action_mask)[0])
            info = t.step(a)
            self.opp_moves.append(t.last_move[1].words())
            if info is not None:
                self._hand_ended(info)

    def _hand_ended(self, info: dict) -> None:
        self.pending = result_json(info, self.table.names, self.table.ended_hand_no)
        if self.table.finished and not self.recorded:
            self.recorded = True
            if self.on_finish is not None:
                self.on_finish(self)

    def play(self, action: Any) -> None:
        """Apply the human's ``action`` (an id or a terminal command) and the bot's reply; ApiError if refused."""
        t = self.table
        if isinstance(action, str) and self.pending is not None:
            if action.strip().lower() in NEXT_WORDS:
                if t.finished:
                    raise ApiError(409, "the game is over: start a new game (POST /api/games)")
                self.pending = None
                self.opp_moves = []
                self._bot_moves()
                return
        if self.pending is not None:
            what = "the game is over: start a new game (POST /api/games)" if t.finished else \
                "the hand is over: deal the next hand with the action \"next\""
            raise ApiError(409, what)
        a = self._action_id(action)
        if not t.mask[a]:
            raise ApiError(409, illegal_reason(a, t.state, t.rules, False), allowed=self._allowed())
        self.opp_moves = []
        info = t.step(a)
        if info is not None:
            self._hand_ended(info)
        self._bot_moves()

    def _allowed(self) -> list[str]:
        return [command_for(int(a)) for a in np.flatnonzero(self.table.mask)]

    def _action_id(self, action: Any) -> int:
        if isinstance(action, bool) or not isinstance(action, (int, str)):
            raise ApiError(400, "'action' must be an action id (an integer 0-106) or a command such as "
                                "\"s\", \"t\", \"p\", \"7h\", \"k 7h\", \"next\"")
        if isinstance(action, int):
            if not 0 <= action < NUM_ACTIONS:
                raise ApiError(400, f"action id {action} is out of range: ids are 0-{NUM_ACTIONS - 1}",
                               allowed=self._allowed())
            return action
        if len(action) > 40:
            raise ApiError(400, "a command is at most 40 characters")
        kind, value = parse_command(action)
        if kind == "action":
            return int(value)
        if kind == "error":
            raise ApiError(400, value, allowed=self._allowed())
        if kind == "help":
            raise ApiError(400, "help is not a move: " + " ".join(HELP.split()), allowed=self._allowed())
        if kind == "quit":
            raise ApiError(400, "quit is not a move here: start a new game or close the page")
        raise ApiError(400, "empty command: send a move such as \"s\" or \"7h\"", allowed=self._allowed())

    # --------------------------------------------------------------------- the view

    def view(self, game_id: str) -> dict[str, Any]:
        """What the human may see now (nothing hidden: see the module docstring)."""
        t = self.table
        s = t.state
        names = t.names
        finished = t.finished
        v: dict[str, Any] = {
            "id": game_id, "mode": "play", "opponent": self.name, "names": list(names),
            "hand_only": self.hand_only, "rules": self.rules.to_dict(), "target_score": self.rules.target_score,
            "moves": t.moves, "finished": finished,
            "seed": self.seed if (self.seed_public or finished) else None,
            "opponent_moves": list(self.opp_moves),
        }
        if self.pending is not None:
            res = self.pending
            v.update(status="game_over" if finished else "hand_over", hand_no=res["hand"], result=res,
                     scores=list(res["scores"]), legal=[])
            if finished:
                w = res["winner"] if self.hand_only else res["game_winner"]
                v["winner"] = w
                v["log_url"] = f"/api/games/{game_id}/log"
            else:
                v["next"] = {"command": "next", "label": "Next hand"}
            if finished:
                v["new_game"] = {"label": "New game"}
            return v
        hand = cards_of(s.hands[0, HUMAN])
        phase = Phase(int(s.phase[0]))
        top = pile_top(s)
        taken = int(s.taken_card[0])
        mine = t.last[HUMAN]
        drawn = None
        if mine is not None and mine.action == DRAW_STOCK and phase == Phase.DISCARD and t.current == HUMAN:
            drawn = card_json(t.drawn[HUMAN])
        last = {}
        for p in (0, 1):
            la = t.last[p]
            if la is not None:
                last[names[p]] = move_words(la, t.drawn[p], False, reveal=p == HUMAN)
        opp_count = int(s.hands[0, 1 - HUMAN].sum())
        v.update(
            status="your_turn", hand_no=t.hand_no, dealer=names[int(s.dealer[0])],
            you_deal=int(s.dealer[0]) == HUMAN, phase=phase.name.lower(),
            prompt=_PHASE_PROMPT[phase].format(top=card_pretty(top) if top >= 0 else "top discard", opp=names[1]),
            hand=hand_json(hand), drawn=drawn,
            taken=card_json(taken) if (taken >= 0 and not self.rules.discard_taken_card) else None,
            pile_top=card_json(top) if top >= 0 else None, pile_size=int(s.pile_size[0]),
            stock=NUM_CARDS - int(s.stock_next[0]), opponent_cards=opp_count,
            knock_limit=int(s.knock_limit[0]), knock_limit_text=knock_limit_words(s, self.rules, 0),
            scores=[int(x) for x in s.scores[0]], last=last, legal=legal_json(t.mask, s),
        )
        return v

    def record(self) -> dict[str, Any]:
        """The results-file line of a finished game (the human is player 0)."""
        t = self.table
        hands = []
        for h in t.log_hands:
            r = h["result"]
            if r is None:
                continue
            hands.append({"points": r["points"], "winner": _who(r["winner"]), "knocker": _who(r["knocker"]),
                          "gin": r["gin"], "undercut": r["undercut"], "void": r["void"]})
        final = next((h["result"] for h in reversed(t.log_hands) if h["result"]), None)
        return {
            "format": RESULTS_FORMAT, "version": RESULTS_VERSION,
            "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "seconds": round(time.time() - self.started, 1),
            "opponent": self.name, "spec": self.spec, "rules": self.rules.to_dict(),
            "episode": t.episode, "seed": self.seed, "moves": t.moves, "hands": hands,
            "final_scores": None if final is None else final["scores"],
            "winner": None if final is None else _who(final["winner"] if self.hand_only else final["game_winner"]),
        }


# ----------------------------------------------------------------------------- watching and replaying

def frame_json(t: Table, mover: int | None, result: dict | None) -> dict[str, Any]:
    """Everything on the table (both hands face up) after a move: watch and replay frames."""
    s = t.state
    top = pile_top(s)
    move = None
    if mover is not None and t.last[mover] is not None:
        _, la, drawn = t.last_move
        move = f"{t.names[mover]} {move_words(la, drawn, False, reveal=True)}"
    return {
        "move_no": t.moves, "hand_no": result["hand"] if result else t.hand_no, "names": list(t.names),
        "dealer": int(s.dealer[0]), "current": -1 if t.finished else t.current,
        "hands": [hand_json(cards_of(s.hands[0, p])) for p in (0, 1)] if result is None else None,
        "pile_top": card_json(top) if top >= 0 else None, "pile_size": int(s.pile_size[0]),
        "stock": NUM_CARDS - int(s.stock_next[0]),
        # at a hand's end the table already holds the next deal: say the ended hand's knock limit
        "knock_limit_text": knock_limit_words(s, t.rules, 0) if result is None else result["knock_limit_text"],
        "scores": result["scores"] if result else [int(x) for x in s.scores[0]],
        "move": move, "result": result, "finished": t.finished,
    }


@dataclass
class WatchGame:
    """Two bots on one table; each ``step`` plays one move."""

    specs: tuple[str, str]
    names: tuple[str, str]
    rules: Rules
    hand_only: bool
    seed: int
    make: Callable[[str, int], Any]
    lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        self.table = Table(self.rules, self.hand_only, self.seed, self.names, self.specs)
        self.bots = [self.make(self.specs[p], opponent_seed(self.seed, p)) for p in (0, 1)]

    def step(self) -> dict[str, Any]:
        t = self.table
        if t.finished:
            raise ApiError(409, "the watched game is over: start a new one (POST /api/watches)")
        p = t.current
        a = int(self.bots[p].act(t.out.observation, t.out.legal_action_mask)[0])
        info = t.step(a)
        return frame_json(t, p, None if info is None else result_json(info, t.names, t.ended_hand_no))

    def start(self, watch_id: str) -> dict[str, Any]:
        t = self.table
        return {"id": watch_id, "mode": "watch", "names": list(self.names), "hand_only": self.hand_only,
                "rules": self.rules.to_dict(), "seed": self.seed, "frame": frame_json(t, None, None)}


def replay_frames(data: Any) -> dict[str, Any]:
    """Check a parsed ``okgin-play-log`` and replay it: the first frame, then one frame per move."""
    try:
        log = check_log(data, "the uploaded file")
    except UsageError as e:
        raise ApiError(400, str(e)) from None
    names = tuple(log["players"])
    t = Table(log["_rules"], log["episode"] == "hand", log["seed"], names, tuple(log.get("specs") or names))
    frames = [frame_json(t, None, None)]
    for k, h in enumerate(log["hands"]):
        if t.finished:
            raise ApiError(400, f"the log does not replay: the game ended before hand {k + 1}")
        deck = " ".join(card_text(int(c)) for c in t.state.deck[0])
        if deck != " ".join(h["deck"].split()) or int(t.state.dealer[0]) != h["dealer"]:
            raise ApiError(400, f"the log does not replay: hand {k + 1}'s deal differs from the logged deck/dealer")
        for m, (p, a) in enumerate(h["actions"]):
            if t.out.hand_over[0] and m:
                raise ApiError(400, f"the log does not replay: hand {k + 1} ended before its logged moves did")
            if p != t.current or not t.mask[a]:
                raise ApiError(400, f"the log does not replay: hand {k + 1}, move {m + 1} is not a legal move")
            info = t.step(a)
            frames.append(frame_json(t, p, None if info is None else result_json(info, t.names, t.ended_hand_no)))
    return {"mode": "replay", "names": list(names), "seed": log["seed"], "episode": log["episode"],
            "rules": log["rules"], "moves": len(frames) - 1, "finished": t.finished, "frames": frames}


# ----------------------------------------------------------------------------- registry and results

class Registry:
    """Games in memory by unguessable id; beyond ``max_items`` the least recently used is evicted."""

    def __init__(self, max_items: int) -> None:
        self.max_items = int(max_items)
        self._items: OrderedDict[str, Any] = OrderedDict()
        self._lock = threading.Lock()
        self.evicted = 0

    def add(self, item: Any) -> str:
        key = secrets.token_urlsafe(18)
        with self._lock:
            self._items[key] = item
            while len(self._items) > self.max_items:
                self._items.popitem(last=False)
                self.evicted += 1
        return key

    def get(self, key: str, kind: type) -> Any:
        with self._lock:
            item = self._items.get(key)
            if item is not None:
                self._items.move_to_end(key)
        if not isinstance(item, kind):
            what = "game" if kind is HumanGame else "watched game"
            raise ApiError(404, f"no {what} with id {key[:40]!r} (unknown, or evicted after "
                                f"{self.max_items} newer games)")
        return item

    def __len__(self) -> int:
        return len(self._items)


class ResultsFile:
    """Append-only JSON lines, one finished game a line, each written with one ``write`` and ``fsync``.

    A killed server loses at most the game in progress; a torn last line (a crash inside the write)
    is skipped by readers.
    """

    def __init__(self, path: str | os.PathLike | None) -> None:
        self.path = None if path is None else str(path)
        self._lock = threading.Lock()
        if self.path is not None:
            parent = os.path.dirname(os.path.abspath(self.path))
            try:
                os.makedirs(parent, exist_ok=True)
                os.close(os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644))
            except OSError as e:
                raise UsageError(f"cannot write the results file {self.path!r}: {e.strerror or e}") from None

    def append(self, record: dict) -> None:
        if self.path is None:
            return
        line = (json.dumps(record, separators=(",", ":")) + "\n").encode()
        with self._lock:
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                view = memoryview(line)
                while view:  # one write in practice; a short write continues the same line
                    view = view[os.write(fd, view):]
                os.fsync(fd)
            finally:
                os.close(fd)


# ----------------------------------------------------------------------------- request checks

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
        raise ApiError(400, f"bad 'rules': {e}") from None
    raise ApiError(400, "'rules' must be an object of rule options, e.g. {\"knock_limit\": 10}, "
                        f"or a list of \"key=value\" strings; options: {', '.join(Rules.option_names())}")


def _seed_from(value: Any) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_SEED:
        raise ApiError(400, f"'seed' must be an integer 0-{MAX_SEED}, got {value!r}")
    return value


def _bool_from(value: Any, name: str, default: bool) -> bool:
    if value is None:
        return default
    if not isinstance(value, bool):
        raise ApiError(400, f"'{name}' must be true or false, got {value!r}")
    return value


def _only_keys(body: dict, allowed: Sequence[str]) -> None:
    extra = sorted(set(body) - set(allowed))
    if extra:
        raise ApiError(400, f"unknown field(s) {', '.join(map(repr, extra))}; allowed: {', '.join(allowed)}")


# ----------------------------------------------------------------------------- the server's state

SHARE_AFTER_S = 0.05  #: a bot that takes longer than this to make is made once and shared by all games


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


@dataclass
class WebConfig:
    """What ``play.py --web`` fixes at start: the bots a client may ask for, rules, limits, files."""

    opponent: str = "expert"
    allow: Sequence[str] = ()
    watch: tuple[str, str] | None = None
    rules: Rules = field(default_factory=Rules)
    hand_only: bool = False
    seed: int | None = None
    results: str | None = DEFAULT_RESULTS
    max_games: int = DEFAULT_MAX_GAMES
    max_body: int = DEFAULT_MAX_BODY


class WebTable:
    """The games registry, the allow-list of bots and the results file behind the API."""

    def __init__(self, config: WebConfig, make: Callable[[str, int], Any] | None = None) -> None:
        from okgin.table import make_agent

        self.config = config
        self._make = make or make_agent
        specs = [config.opponent, *config.allow, *(config.watch or ())]
        self.bots: dict[str, str] = {}  # display name (and spec as written) -> spec
        self._shared: dict[str, SharedAgent] = {}
        for spec in specs:
            t0 = time.perf_counter()
            agent = self._make(spec, 0)  # fails now (UsageError), not when a client asks
            if time.perf_counter() - t0 > SHARE_AFTER_S:  # ppo:PATH reads its checkpoint: once, not per game
                self._shared[spec] = SharedAgent(agent)
            self.bots.setdefault(agent_name(spec), spec)
        self.opponent = agent_name(config.opponent)
        self.games = Registry(config.max_games)
        self.results = ResultsFile(config.results)
        self._seeds = np.random.SeedSequence(config.seed) if config.seed is not None else None
        self._created = 0
        self._lock = threading.Lock()

    def warm_up(self) -> None:
        """Play a bot's first moves and draw a view once per bot, so the first client's game is not slow
        (numba compiles the core on first use, torch initialises on a network's first call)."""
        for spec in dict.fromkeys(self.bots.values()):
            g = HumanGame(spec, agent_name(spec), self.config.rules, True, 0, True, self.make_agent)
            g.view("warm-up")

    def make_agent(self, spec: str, seed: int) -> Any:
        """A game's bot: a fresh one seeded for the game (as the terminal's), or the shared one of a slow spec."""
        shared = self._shared.get(spec)
        return shared if shared is not None else self._make(spec, seed)

    def bot(self, name: Any, field_name: str = "opponent") -> tuple[str, str]:
        """(display name, spec) of an allowed bot; a client's string is only ever a key into the allow-list."""
        if not isinstance(name, str) or agent_name(name) not in self.bots:
            raise ApiError(400, f"'{field_name}' must be one of the bots this server allows: "
                                f"{', '.join(self.bots)} (got {str(name)[:60]!r})")
        key = agent_name(name)
        return key, self.bots[key]

    def next_seed(self, given: int | None) -> tuple[int, bool]:
        """(seed, public): the client's seed, else one from the server's --seed stream, else a secret one."""
        if given is not None:
            return given, True
        with self._lock:
            k = self._created
            self._created += 1
        if self._seeds is not None:
            return int(np.random.SeedSequence([self.config.seed, k]).generate_state(1)[0] % MAX_SEED), False
        return secrets.randbelow(MAX_SEED), False

    def public_config(self) -> dict[str, Any]:
        c = self.config
        return {"opponent": self.opponent, "bots": list(self.bots), "rules": c.rules.to_dict(),
                "rule_options": Rules.option_names(), "hand_only": c.hand_only,
                "watch": [agent_name(s) for s in c.watch] if c.watch else None, "help": HELP}

    # the API's operations (called in a worker thread)
    def create_game(self, body: dict) -> dict[str, Any]:
        _only_keys(body, ("opponent", "rules", "hand_only", "seed"))
        name, spec = self.bot(body.get("opponent", self.opponent))
        rules = _rules_from(body.get("rules"), self.config.rules)
        hand_only = _bool_from(body.get("hand_only"), "hand_only", self.config.hand_only)
        seed, public = self.next_seed(_seed_from(body.get("seed")))
        g = HumanGame(spec, name, rules, hand_only, seed, public, self.make_agent, on_finish=self._finished)
        gid = self.games.add(g)
        with g.lock:
            return g.view(gid)

    def _finished(self, g: HumanGame) -> None:
        self.results.append(g.record())

    def read_game(self, gid: str) -> dict[str, Any]:
        g = self.games.get(gid, HumanGame)
        with g.lock:
            return g.view(gid)

    def play(self, gid: str, body: dict) -> dict[str, Any]:
        _only_keys(body, ("action",))
        if "action" not in body:
            raise ApiError(400, "missing 'action': an action id (0-106) or a command such as \"s\" or \"7h\"")
        g = self.games.get(gid, HumanGame)
        with g.lock:
            g.play(body["action"])
            return g.view(gid)

    def game_log(self, gid: str) -> dict[str, Any]:
        g = self.games.get(gid, HumanGame)
        with g.lock:
            if not g.table.finished:
                raise ApiError(409, "the log holds the deck order, so it is given once the game is over")
            return g.table.log_dict("play")

    def create_watch(self, body: dict) -> dict[str, Any]:
        _only_keys(body, ("a", "b", "rules", "hand_only", "seed"))
        default = self.config.watch or (self.config.opponent, self.config.opponent)
        na, sa = self.bot(body.get("a", agent_name(default[0])), "a")
        nb, sb = self.bot(body.get("b", agent_name(default[1])), "b")
        rules = _rules_from(body.get("rules"), self.config.rules)
        hand_only = _bool_from(body.get("hand_only"), "hand_only", self.config.hand_only)
        seed, _ = self.next_seed(_seed_from(body.get("seed")))
        names = (na, nb) if na != nb else (f"{na} A", f"{nb} B")
        w = WatchGame((sa, sb), names, rules, hand_only, seed, self.make_agent)
        wid = self.games.add(w)
        with w.lock:
            return w.start(wid)

    def step_watch(self, wid: str) -> dict[str, Any]:
        w = self.games.get(wid, WatchGame)
        with w.lock:
            return w.step()


# ----------------------------------------------------------------------------- the ASGI app

def create_app(config: WebConfig | None = None, make: Callable[[str, int], Any] | None = None):
    """The Starlette app: the page at ``/``, its files under ``/static``, the JSON API under ``/api``.

    Raises ``UsageError`` (one line) when a bot of the allow-list cannot be made or the results
    file cannot be written.
    """
    from starlette.applications import Starlette
    from starlette.concurrency import run_in_threadpool
    from starlette.exceptions import HTTPException
    from starlette.requests import Request
    from starlette.responses import FileResponse, JSONResponse, Response
    from starlette.routing import Mount, Route
    from starlette.staticfiles import StaticFiles

    table = WebTable(config or WebConfig(), make)
    limit = table.config.max_body

    def error(status: int, message: str, **extra: Any) -> JSONResponse:
        return JSONResponse({"error": message, "status": status, **extra}, status_code=status)

    async def read_json(request: Request) -> Any:
        """The body as JSON, refused (413) past ``limit`` bytes without reading the rest."""
        declared = request.headers.get("content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > limit):
            raise ApiError(413, f"request body too large: at most {limit} bytes")
        chunks, size = [], 0
        async for chunk in request.stream():
            size += len(chunk)
            if size > limit:
                raise ApiError(413, f"request body too large: at most {limit} bytes")
            chunks.append(chunk)
        raw = b"".join(chunks)
        if not raw.strip():
            return {}
        try:
            return json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError) as e:
            raise ApiError(400, f"the body is not valid JSON ({e})") from None

    async def read_object(request: Request) -> dict:
        body = await read_json(request)
        if not isinstance(body, dict):
            raise ApiError(400, f"the body must be a JSON object, got {type(body).__name__}")
        return body

    def guarded(handler):
        async def endpoint(request: Request) -> Response:
            try:
                status, payload = await handler(request)
            except ApiError as e:
                return error(e.status, e.message, **e.extra)
            except UsageError as e:  # e.g. a checkpoint removed after the server started
                return error(400, str(e))
            return JSONResponse(payload, status_code=status, headers={"Cache-Control": "no-store"})
        return endpoint

    async def config_ep(request: Request):
        return 200, table.public_config()

    async def create_game(request: Request):
        body = await read_object(request)
        return 201, await run_in_threadpool(table.create_game, body)

    async def read_game(request: Request):
        return 200, await run_in_threadpool(table.read_game, request.path_params["gid"])

    async def play(request: Request):
        body = await read_object(request)
        return 200, await run_in_threadpool(table.play, request.path_params["gid"], body)

    async def game_log(request: Request):
        return 200, await run_in_threadpool(table.game_log, request.path_params["gid"])

    async def create_watch(request: Request):
        body = await read_object(request)
        return 201, await run_in_threadpool(table.create_watch, body)

    async def step_watch(request: Request):
        await read_json(request)  # an empty body is fine; a huge one is still refused
        return 200, await run_in_threadpool(table.step_watch, request.path_params["wid"])

    async def create_replay(request: Request):
        body = await read_json(request)
        return 200, await run_in_threadpool(replay_frames, body)

    async def index(request: Request) -> Response:
        return FileResponse(STATIC_DIR / "index.html", headers={"Cache-Control": "no-cache"})

    async def http_error(request: Request, exc: HTTPException) -> Response:
        text = {404: f"no such page or API route: {request.url.path[:80]}",
                405: f"method {request.method} is not allowed on {request.url.path[:80]}"}
        return error(exc.status_code, text.get(exc.status_code, str(exc.detail)))

    async def crash(request: Request, exc: Exception) -> Response:  # a bug: still JSON, never a traceback
        return error(500, f"internal error ({type(exc).__name__}); the game was not changed")

    routes = [
        Route("/", index),
        Route("/api/config", guarded(config_ep)),
        Route("/api/games", guarded(create_game), methods=["POST"]),
        Route("/api/games/{gid}", guarded(read_game)),
        Route("/api/games/{gid}/actions", guarded(play), methods=["POST"]),
        Route("/api/games/{gid}/log", guarded(game_log)),
        Route("/api/watches", guarded(create_watch), methods=["POST"]),
        Route("/api/watches/{wid}/step", guarded(step_watch), methods=["POST"]),
        Route("/api/replays", guarded(create_replay), methods=["POST"]),
        Mount("/static", StaticFiles(directory=STATIC_DIR), name="static"),
    ]
    app = Starlette(routes=routes, exception_handlers={HTTPException: http_error, Exception: crash})
    app.state.table = table
    return app


def serve(config: WebConfig, host: str = "127.0.0.1", port: int = 8000,
          announce: Callable[[str], None] = print) -> None:
    """Run the app with uvicorn until Ctrl-C (``play.py --web``). Bad settings raise ``UsageError``."""
    import socket

    try:
        import uvicorn
    except ImportError:
        raise UsageError("the web table needs the 'web' extra: pip install -e \".[web]\"") from None
    app = create_app(config)
    app.state.table.warm_up()
    try:  # say "port in use" in one line instead of uvicorn's log
        with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as s:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            s.bind((host, port))
    except OSError as e:
        raise UsageError(f"cannot listen on {host}:{port}: {e.strerror or e} (choose another --port or --host)") \
            from None
    shown = f"[{host}]" if ":" in host else host
    announce(f"Oklahoma Gin table at http://{shown}:{port}/  (Ctrl-C stops)")
    if host not in ("127.0.0.1", "localhost", "::1"):
        announce(f"Warning: listening on {host}: anyone who can reach this address can play on this server.")
    uvicorn.run(app, host=host, port=port, log_level="warning")
