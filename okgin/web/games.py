"""What the web server keeps in memory: a person's games, watched games, replays, and their registry.

Each object holds one ``okgin.human_table.Table`` and a ``lock``; the server calls their methods in a
worker thread with the lock held, so one client's game never sees another's and CPU-heavy work
(bot moves, replays) stays off the event loop. Refusals are ``okgin.web.errors`` (``Invalid``,
``NotFound``, ``Conflict``: one line each, no HTTP status: the HTTP layer gives those); nothing is
changed by a refused request.
"""

from __future__ import annotations

import secrets
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from okgin.human_table import (
    HELP,
    HUMAN,
    Table,
    UsageError,
    bot_action,
    check_log,
    command_for,
    illegal_reason,
    opponent_seed,
    parse_command,
    plain_name,
)
from okgin.web.errors import Conflict, Invalid, NotFound
from okgin.web.results import results_line
from okgin.web.views import frame_json, result_json, turn_json
from okgin_env.agent_specs import for_rules
from okgin_env.game.actions import NUM_ACTIONS
from okgin_env.game.cards import card_text
from okgin_env.game.rules import Rules

NEXT_WORDS = ("", "n", "next", "next hand", "enter")  #: commands that deal on after a showdown
MAX_REPLAY_MOVES = 10_000  #: moves a replayed log may hold (a human game to 100 has a few hundred)
REPLAY_PAGE = 100  #: most frames one replay request answers


@dataclass(frozen=True)
class GameSetup:
    """What a new game is: which bot, the rules, one hand or a game, and the deals' seed."""

    bot: str  #: the bot's name in the allow-list ('expert', 'ppo:okgin_ppo.pt'): the results' "opponent"
    spec: str  #: its agent spec
    rules: Rules
    hand_only: bool
    seed: int
    seed_public: bool  #: the client chose the seed (it may see it); a server seed stays secret to the end


Saver = Callable[[dict], "tuple[bool | None, str | None]"]  #: ResultsFile.append


# ----------------------------------------------------------------------------- a human's game

@dataclass
class HumanGame:
    """A person (player 0) against one bot; the bot moves inside the human's requests."""

    setup: GameSetup
    make: Callable[[str, int], Any]
    save: Saver | None = None  #: writes the results line of a finished or abandoned game
    table: Table = field(init=False)
    lock: threading.Lock = field(init=False, default_factory=threading.Lock)
    pending: dict | None = field(init=False, default=None)  #: the ended hand's result, shown until dealt on
    opp_moves: list = field(init=False, default_factory=list)  #: the bot's moves since the human's last one
    started: float = field(init=False, default_factory=time.time)
    recorded: bool = field(init=False, default=False)
    abandoned: bool = field(init=False, default=False)
    saved: bool | None = field(init=False, default=None)  #: the results line was written (None: no file)
    save_error: str | None = field(init=False, default=None)

    def __post_init__(self) -> None:
        s = self.setup
        self.name = plain_name(s.spec)
        self.table = Table(s.rules, s.hand_only, s.seed, ("You", self.name), ("human", s.spec))
        self.agent = for_rules(self.make(s.spec, opponent_seed(s.seed, 0)), s.rules)  # a search bot simulates them
        self._bot_moves()

    def _bot_moves(self) -> None:
        """The bot plays until it is the human's turn, a hand ends or the game ends."""
        t = self.table
        while not t.finished and self.pending is None and t.current != HUMAN:
            try:
                a = bot_action(self.agent, self.setup.spec, t)
            except UsageError as e:  # its list of the legal moves would name the bot's cards: not for the human
                # the game cannot go on: ended as abandoned (not counted), so no later view offers the bot's
                # turn, whose legal moves would show its hand
                self._record(abandoned=True)
                raise UsageError(str(e).split("; legal: ")[0]) from None
            info = t.step(a)
            self.opp_moves.append(t.last_move[1].words())
            if info is not None:
                self._hand_ended(info)

    def _hand_ended(self, info: dict) -> None:
        self.pending = result_json(info, self.table.names, self.table.ended_hand_no)
        if self.table.finished:
            self._record(abandoned=False)

    def _record(self, abandoned: bool) -> None:
        """Write the results line once; a write that fails leaves the game playable and says so."""
        if self.recorded:
            return
        self.recorded, self.abandoned = True, abandoned
        if self.save is not None:
            self.saved, self.save_error = self.save(self.record())

    def abandon(self) -> None:
        """The person threw the game away (New game or a reload, after a confirm): record it as abandoned."""
        if not self.table.finished:
            self._record(abandoned=True)

    def play(self, action: Any) -> None:
        """Apply the human's ``action`` (an id or a terminal command) and the bot's reply; a GameError if refused."""
        t = self.table
        if self.abandoned:
            raise Conflict("this game was abandoned: start a new game (POST /api/games)")
        if isinstance(action, str) and self.pending is not None and action.strip().lower() in NEXT_WORDS:
            if t.finished:
                raise Conflict("the game is over: start a new game (POST /api/games)")
            self.pending = None
            self.opp_moves = []
            self._bot_moves()
            return
        if self.pending is not None:
            what = "the game is over: start a new game (POST /api/games)" if t.finished else \
                "the hand is over: deal the next hand with the action \"next\""
            raise Conflict(what)
        a = self._action_id(action)
        if not t.mask[a]:
            raise Conflict(illegal_reason(a, t.state, t.rules, False), allowed=self._allowed())
        self.opp_moves = []
        info = t.step(a)
        if info is not None:
            self._hand_ended(info)
        self._bot_moves()

    def _allowed(self) -> list[str]:
        return [command_for(int(a)) for a in np.flatnonzero(self.table.mask)]

    def _action_id(self, action: Any) -> int:
        if isinstance(action, bool) or not isinstance(action, (int, str)):
            raise Invalid("'action' must be an action id (an integer 0-106) or a command such as "
                          "\"s\", \"t\", \"p\", \"7h\", \"k 7h\", \"next\"")
        if isinstance(action, int):
            if not 0 <= action < NUM_ACTIONS:
                raise Invalid(f"action id {action} is out of range: ids are 0-{NUM_ACTIONS - 1}",
                               allowed=self._allowed())
            return action
        if len(action) > 40:
            raise Invalid("a command is at most 40 characters")
        kind, value = parse_command(action)
        if kind == "action":
            return int(value)
        if kind == "error":
            raise Invalid(value, allowed=self._allowed())
        if kind == "help":
            raise Invalid("help is not a move: " + " ".join(HELP.split()), allowed=self._allowed())
        if kind == "quit":
            raise Invalid("quit is not a move here: start a new game or close the page")
        raise Invalid("empty command: send a move such as \"s\" or \"7h\"", allowed=self._allowed())

    # --------------------------------------------------------------------- the view

    def view(self, game_id: str) -> dict[str, Any]:
        """What the human may see now: never the bot's hidden cards, the stock, the deck or a secret seed."""
        t = self.table
        s = self.setup
        v: dict[str, Any] = {
            "id": game_id, "mode": "play", "opponent": self.name, "bot": s.bot, "names": list(t.names),
            "hand_only": s.hand_only, "rules": s.rules.to_dict(), "target_score": s.rules.target_score,
            "moves": t.moves, "finished": t.finished, "abandoned": self.abandoned,
            "seed": s.seed if (s.seed_public or t.finished or self.abandoned) else None,
            "opponent_moves": list(self.opp_moves),
        }
        if self.recorded:
            v["results_saved"] = self.saved
            if self.save_error:
                v["results_error"] = self.save_error
        if self.abandoned:
            v.update(status="abandoned", legal=[], new_game={"label": "New game"})
        elif self.pending is not None:
            v.update(self._showdown_view(game_id))
        else:
            v.update(turn_json(self.table))
        return v

    def _showdown_view(self, game_id: str) -> dict[str, Any]:
        res = self.pending
        finished = self.table.finished
        v = {"status": "game_over" if finished else "hand_over", "hand_no": res["hand"], "result": res,
             "scores": list(res["scores"]), "legal": []}
        if finished:
            v.update(winner=res["winner"] if self.setup.hand_only else res["game_winner"],
                     log_url=f"/api/games/{game_id}/log", new_game={"label": "New game"})
        else:
            v["next"] = {"command": "next", "label": "Next hand"}
        return v

    def record(self) -> dict[str, Any]:
        """The results-file line of this game (``okgin.web.results.results_line``)."""
        return results_line(self.table, self.setup, self.abandoned, self.started)


# ----------------------------------------------------------------------------- watching

@dataclass
class WatchGame:
    """Two bots on one table; each ``step`` plays one move."""

    specs: tuple[str, str]
    names: tuple[str, str]
    rules: Rules
    hand_only: bool
    seed: int
    make: Callable[[str, int], Any]
    lock: threading.Lock = field(init=False, default_factory=threading.Lock)

    def __post_init__(self) -> None:
        self.table = Table(self.rules, self.hand_only, self.seed, self.names, self.specs)
        self.bots = [for_rules(self.make(self.specs[p], opponent_seed(self.seed, p)), self.rules) for p in (0, 1)]

    def step(self) -> dict[str, Any]:
        t = self.table
        if t.finished:
            raise Conflict("the watched game is over: start a new one (POST /api/watches)")
        p = t.current
        a = bot_action(self.bots[p], self.specs[p], t, "agent")  # both hands are shown here: the full message
        info = t.step(a)
        return frame_json(t, p, None if info is None else result_json(info, t.names, t.ended_hand_no))

    def start(self, watch_id: str) -> dict[str, Any]:
        t = self.table
        return {"id": watch_id, "mode": "watch", "names": list(self.names), "hand_only": self.hand_only,
                "rules": self.rules.to_dict(), "seed": self.seed, "frame": frame_json(t, None, None)}


# ----------------------------------------------------------------------------- replaying a log

class ReplayGame:
    """A checked game log whose frames are built on demand, a page at a time.

    Memory: the log's actions and one table. Time: checking steps through the log once; a page
    of frames steps forward from where the last page ended (back to the deal for an earlier one),
    so no request does more than ``MAX_REPLAY_MOVES`` steps.
    """

    def __init__(self, data: Any) -> None:
        try:
            log = check_log(data, "the uploaded file")
        except UsageError as e:
            raise Invalid(str(e)) from None
        n = sum(len(h["actions"]) for h in log["hands"])
        if n > MAX_REPLAY_MOVES:
            raise Invalid(f"the log holds {n} moves; a replay takes at most {MAX_REPLAY_MOVES}")
        self.lock = threading.Lock()
        self.names = tuple(log["players"])
        self.specs = tuple(log.get("specs") or self.names)
        self.rules: Rules = log["_rules"]
        self.hand_only = log["episode"] == "hand"
        self.seed = log["seed"]
        self.head = {"mode": "replay", "names": list(self.names), "seed": self.seed, "episode": log["episode"],
                     "rules": log["rules"], "moves": n}
        self.actions = np.array([pa for h in log["hands"] for pa in h["actions"]], np.int64).reshape(-1, 2)
        self._check(log["hands"])
        self.head["finished"] = self.table.finished
        self.table = self._fresh()

    def _fresh(self) -> Table:
        return Table(self.rules, self.hand_only, self.seed, self.names, self.specs)

    def _check(self, hands: list) -> None:
        """Step through the whole log once: every deal, turn and move must be what the log says."""
        self.table = t = self._fresh()
        for k, h in enumerate(hands):
            if t.finished:
                raise Invalid(f"the log does not replay: the game ended before hand {k + 1}")
            deck = " ".join(card_text(int(c)) for c in t.state.deck[0])
            if deck != " ".join(h["deck"].split()) or int(t.state.dealer[0]) != h["dealer"]:
                raise Invalid(f"the log does not replay: hand {k + 1}'s deal differs from the logged deck/dealer")
            for m, (p, a) in enumerate(h["actions"]):
                if t.out.hand_over[0] and m:
                    raise Invalid(f"the log does not replay: hand {k + 1} ended before its logged moves did")
                if p != t.current or not t.mask[a]:
                    raise Invalid(f"the log does not replay: hand {k + 1}, move {m + 1} is not a legal move")
                t.step(a)

    def _frame(self, k: int) -> dict[str, Any]:
        """Frame ``k``: the deal (0) or the table after move ``k``."""
        if k == 0 or self.table.moves > k - 1:
            self.table = self._fresh()
        t = self.table
        if k == 0:
            return frame_json(t, None, None)
        info = None
        while t.moves < k:
            p, a = (int(x) for x in self.actions[t.moves])
            info = t.step(a)
        return frame_json(t, p, None if info is None else result_json(info, t.names, t.ended_hand_no))

    def frames(self, start: int, count: int = REPLAY_PAGE) -> list[dict[str, Any]]:
        """Frames ``start`` .. ``start + count - 1`` (fewer at the end of the log)."""
        n = self.head["moves"]
        if not 0 <= start <= n:
            raise Invalid(f"'start' must be 0-{n} (the log has {n} moves)")
        if not 1 <= count <= REPLAY_PAGE:
            raise Invalid(f"'count' must be 1-{REPLAY_PAGE}")
        return [self._frame(k) for k in range(start, min(start + count, n + 1))]


# ----------------------------------------------------------------------------- the registry

_KIND_WORDS = {HumanGame: "game", WatchGame: "watched game", ReplayGame: "replay"}


class Registry:
    """Games in memory by unguessable id; beyond ``max_items`` the least recently used is evicted."""

    def __init__(self, max_items: int) -> None:
        self.max_items = int(max_items)
        self._items: OrderedDict[str, Any] = OrderedDict()
        self._lock = threading.Lock()

    def add(self, item: Any) -> str:
        key = secrets.token_urlsafe(18)
        with self._lock:
            self._items[key] = item
            while len(self._items) > self.max_items:
                self._items.popitem(last=False)
        return key

    def get(self, key: str, kind: type) -> Any:
        with self._lock:
            item = self._items.get(key)
            if item is not None:
                self._items.move_to_end(key)
        if not isinstance(item, kind):
            raise NotFound(f"no {_KIND_WORDS.get(kind, 'item')} with id {key[:40]!r} (unknown, or evicted "
                           f"after {self.max_items} newer games)")
        return item

    def __len__(self) -> int:
        return len(self._items)
