"""The table the terminal (``okgin.play``) and the browser (``okgin.web``) share.

One game on ``VectorGame(1)`` (``Table``) with what screens and logs remember, the bots'
names and seeds, the words for moves and illegal moves, the terminal's command language
(``parse_command`` / ``command_for``), and the ``okgin-play-log`` format (``Table.log_dict``,
``check_log``). Neither program's screen lives here: ``okgin.play`` draws text, ``okgin.web``
JSON; both import this module and nothing of each other.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from okgin_env.agent_specs import Agent, AgentOutputError, checked_actions, is_registered, make_agent
from okgin_env.game.actions import DRAW_STOCK, KNOCK, NUM_ACTIONS, PASS, TAKE_DISCARD, action_parts, action_text
from okgin_env.game.cards import card_text, parse_card
from okgin_env.game.core import Phase, StepOutput, VectorGame
from okgin_env.game.melds import deadwood_after_discard
from okgin_env.game.rules import Rules
from okgin_env.render.text import LastAction, card_str, hand_result_info, pile_top, record_action

HUMAN = 0  #: the human's player id; the opponent is 1 - HUMAN
LOG_FORMAT = "okgin-play-log"
LOG_VERSION = 1

_UNICODE_SUITS = str.maketrans({"♠": "s", "♥": "h", "♦": "d", "♣": "c", "S": "s", "H": "h", "D": "d", "C": "c"})

HELP = """\
Commands (case-insensitive; one per line):
  s          draw the top card of the stock
  t          take the top card of the discard pile (the upcard during the first offer)
  p          pass on the first upcard (only during the offer)
  7h         discard the 7 of hearts  (ranks A 2-9 T/10 J Q K, suits s h d c; also 7♥, 10h)
  k 7h       knock, discarding the 7 of hearts face down (the other ten cards must have
             deadwood no more than the knock limit; deadwood 0 is gin)
  ?          this help
  q          quit the game
A card taken from the discard pile may not be discarded in the same turn (unless the rule
discard_taken_card=true). The hand ends with a knock, or void when only two stock cards remain."""


class UsageError(Exception):
    """A bad command line, agent spec, rule option or replay file: one line, exit code 2."""


# ----------------------------------------------------------------------------- helpers

def opponent_seed(seed: int, which: int = 0) -> int:
    """Seed of the agent in seat ``which`` (0 = the opponent / --watch A, 1 = --watch B)."""
    return int(seed) + 1 + int(which)


def new_game(rules: Rules, hand_only: bool, seed: int) -> tuple[VectorGame, StepOutput]:
    """The one game every mode plays: deals and first dealer come from ``seed`` alone."""
    game = VectorGame(1, rules, episode="hand" if hand_only else "game", seed=seed)
    return game, game.reset(seed=seed)


def parse_rules(items: Sequence[str]) -> Rules:
    try:
        return Rules.from_strings(list(items))
    except (ValueError, TypeError) as e:
        raise UsageError(f"bad --rules: {e}") from None


def seat_bot(spec: str, seed: int, rules: Rules | None = None) -> Agent:
    """The bot ``spec`` names, seated at a table of ``rules`` (``make_agent``: a search bot simulates
    them), with any failure turned into a one-line usage error."""
    try:
        return make_agent(spec, seed=seed, rules=rules)
    except Exception as e:  # noqa: BLE001 - unknown spec, missing/corrupt checkpoint, ...
        msg = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise UsageError(f"bad agent spec {spec!r}: {msg}") from None


def spec_label(spec: str) -> str:
    """A spec's short display name: 'expert', 'ppo:best.pt', 'mybots:MyBot' (an agent object's name is
    ``okgin_env.agent_specs.agent_name``). Bundled names are
    case-insensitive (shown lower-case); a plug-in's ``module:Attr`` keeps its case (Python's)."""
    s = spec.strip()
    if s.lower().startswith("ppo:"):
        return "ppo:" + os.path.basename(s[4:].strip().rstrip("/\\"))
    head, sep, rest = s.partition(":")
    return head.lower() + sep + rest if is_registered(head) else s


def plain_name(spec: str) -> str:
    """A bot's name for sentences: 'expert', 'PPO okgin_ppo' for ``ppo:.../okgin_ppo.pt``, 'search'."""
    name = spec_label(spec)
    if name.startswith("ppo:"):
        return "PPO " + os.path.splitext(name[4:])[0]
    if name.startswith("search:"):
        return "search"
    return name


def bot_action(bot: Any, name: str, t: "Table", role: str = "opponent") -> int:
    """The bot's move in ``t``, checked by ``checked_actions``; bad output is a one-line ``UsageError``."""
    mask = t.out.legal_action_mask
    try:
        return int(checked_actions(bot.act(t.out.observation, mask), mask, name, role)[0])
    except AgentOutputError as e:
        raise UsageError(str(e)) from None


_COMMANDS = {"draw": "s", "take": "t", "pass": "p", "knock": "k {card}", "discard": "{card}"}


def command_for(action: int) -> str:
    """The shortest command that plays ``action`` (for scripts and tests)."""
    kind, card = action_parts(action)
    return _COMMANDS[kind].format(card=card_text(card) if card is not None else "")


# ------------------------------------------------------------------------- the table

@dataclass
class Table:
    """One game on ``VectorGame(1)`` plus what the screens and the log need to remember."""

    rules: Rules
    hand_only: bool
    seed: int
    names: tuple[str, str]
    specs: tuple[str, str]
    game: VectorGame = field(init=False)
    out: StepOutput = field(init=False)
    hand_no: int = field(init=False, default=1)
    last: list = field(init=False, default_factory=lambda: [None, None])  # LastAction per player
    drawn: list = field(init=False, default_factory=lambda: [-1, -1])  # card each player last drew from the stock
    log_hands: list = field(init=False, default_factory=list)
    moves: int = field(init=False, default=0)
    #: (player, LastAction, card drawn from the stock or -1) of the latest step
    last_move: tuple = field(init=False, default=(None, None, -1))
    ended_hand_no: int = field(init=False, default=0)  # number of the hand the latest hand_over ended

    def __post_init__(self) -> None:
        self.game, self.out = new_game(self.rules, self.hand_only, self.seed)
        self._start_hand_log()

    # state shortcuts
    @property
    def state(self):
        return self.game.state

    @property
    def mask(self) -> np.ndarray:
        return self.out.legal_action_mask[0]

    @property
    def current(self) -> int:
        return int(self.out.current_player[0])

    @property
    def finished(self) -> bool:
        return bool(self.out.terminated[0] or self.out.truncated[0])

    @property
    def episode(self) -> str:
        return "hand" if self.hand_only else "game"

    def _start_hand_log(self) -> None:
        s = self.state
        self.log_hands.append({"hand": self.hand_no, "dealer": int(s.dealer[0]),
                               "deck": " ".join(card_text(int(c)) for c in s.deck[0]),
                               "knock_limit": int(s.knock_limit[0]), "actions": [], "result": None})

    def step(self, action: int) -> dict | None:
        """Apply a legal action; returns the hand-result info dict when a hand ended."""
        p = self.current
        a = int(action)
        la = record_action(self.state, 0, a)
        before = self.state.hands[0, p].copy()
        knock_limit = int(self.state.knock_limit[0])
        self.out = self.game.step(np.array([a], dtype=np.int64))
        self.moves += 1
        self.log_hands[-1]["actions"].append([p, a])
        self.last[p] = la
        if a == DRAW_STOCK:
            new = np.flatnonzero(self.game.state.hands[0, p] & ~before)
            self.drawn[p] = int(new[0]) if len(new) else -1
        self.last_move = (p, la, self.drawn[p] if a == DRAW_STOCK else -1)
        if not self.out.hand_over[0]:
            return None
        self.ended_hand_no = self.hand_no
        info = hand_result_info(self.out.result, 0, knock_limit=knock_limit)
        self.log_hands[-1]["result"] = logged_result(info)
        if not self.finished:  # a new hand was dealt in the same step
            self.hand_no += 1
            self.last = [None, None]
            self.drawn = [-1, -1]
            self._start_hand_log()
        return info

    def log_dict(self, mode: str) -> dict[str, Any]:
        res = next((h["result"] for h in reversed(self.log_hands) if h["result"]), None)
        if res is None:
            winner = None
        else:
            winner = res["winner"] if self.hand_only else res["game_winner"]
        return {
            "format": LOG_FORMAT, "version": LOG_VERSION, "mode": mode, "seed": self.seed,
            "episode": self.episode, "rules": self.rules.to_dict(), "players": list(self.names),
            "specs": list(self.specs), "agent_seeds": [opponent_seed(self.seed, 0), opponent_seed(self.seed, 1)],
            "finished": self.finished, "moves": self.moves,
            "final_scores": None if res is None or not self.finished else res["scores"],
            "winner": winner if self.finished else None,
            "hands": self.log_hands,
        }


# ------------------------------------------------------------------------ words

def move_words(la: LastAction, drawn: int, color: bool, reveal: bool) -> str:
    """'drew from stock' ('drew 5♣ from stock' when revealed), 'took 7♥', 'discarded K♠', 'knocked'."""
    if la.action == DRAW_STOCK and reveal and drawn >= 0:
        return f"drew {card_str(drawn, color)} from stock"
    return la.words(color, own=reveal)


def illegal_reason(action: int, state, rules: Rules, color: bool) -> str:
    """One line saying why ``action`` is not allowed now."""
    phase = Phase(int(state.phase[0]))
    offer = phase in (Phase.OFFER_NONDEALER, Phase.OFFER_DEALER)
    top = pile_top(state)
    if action == PASS:
        return "You can pass only on the first upcard offer, at the start of a hand."
    if action == DRAW_STOCK:
        if offer:
            return (f"During the first upcard offer you take the {card_str(top, color)} (t) or pass (p); "
                    "the stock comes later.")
        return "You already have 11 cards this turn: discard one (or knock)."
    if action == TAKE_DISCARD:
        if phase == Phase.FORCED_DRAW:
            return "Both players passed on the upcard: you must draw from the stock (s)."
        return "You already took a card this turn: discard one (or knock)."
    knock = action >= KNOCK
    c = action - KNOCK if knock else action
    if phase != Phase.DISCARD:
        verb = "knock" if knock else "discard"
        if offer:
            how = "take the upcard (t) or pass (p)"
        elif phase == Phase.FORCED_DRAW:
            how = "draw from the stock (s)"
        else:
            how = "draw from the stock (s) or take the top discard (t)"
        return f"You can't {verb} yet: first {how}."
    if not state.hands[0, int(state.current_player[0]), c]:
        return f"You don't hold the {card_str(c, color)}."
    if c == int(state.taken_card[0]) and not rules.discard_taken_card:
        return (f"You took the {card_str(c, color)} from the discard pile this turn, so you can't "
                f"{'knock with' if knock else 'discard'} it until a later turn.")
    if knock:
        hand = state.hands[0, int(state.current_player[0])][None]
        dw = int(deadwood_after_discard(hand)[0, c])
        limit = int(state.knock_limit[0])
        if limit == 0:
            return (f"You can't knock: the knock limit is 0 (only gin ends this hand), and discarding the "
                    f"{card_str(c, color)} leaves {dw} deadwood.")
        return (f"You can't knock discarding the {card_str(c, color)}: that leaves {dw} deadwood, more than "
                f"the knock limit {limit}.")
    return f"{action_text(action)} is not allowed now."


def parse_command(text: str) -> tuple[str, Any]:
    """('action', id) | ('help', None) | ('quit', None) | ('empty', None) | ('error', message)."""
    t = " ".join(text.strip().split())
    low = t.lower()
    if not low:
        return "empty", None
    if low in ("?", "h", "help"):
        return "help", None
    if low in ("q", "quit", "exit"):
        return "quit", None
    if low in ("s", "stock", "draw", "d"):
        return "action", DRAW_STOCK
    if low in ("t", "take"):
        return "action", TAKE_DISCARD
    if low in ("p", "pass"):
        return "action", PASS
    if low in ("k", "knock"):
        return "error", "To knock, name the card to discard face down, e.g. 'k 7h'."
    words = low.split(" ")
    if words[0] in ("k", "knock") and len(words) == 2:
        card = _card(words[1])
        return ("action", KNOCK + card) if card is not None else ("error", _bad_card(words[1]))
    if words[0] in ("d", "discard") and len(words) == 2:
        card = _card(words[1])
        return ("action", card) if card is not None else ("error", _bad_card(words[1]))
    if len(words) == 1:
        card = _card(low)
        if card is not None:
            return "action", card
        if low.startswith("k") and _card(low[1:]) is not None:  # 'k7h'
            return "action", KNOCK + _card(low[1:])
        if len(low) in (2, 3) and (low[0] in "a123456789tjqk" or low[-1] in "shdc"):
            return "error", _bad_card(t)
    return "error", f"I don't understand {t!r}."


def _card(text: str) -> int | None:
    """Case-insensitive card text ('7h', 'TH', 'th', '10h', '7♥') -> index, None if it is not a card."""
    t = text.strip().translate(_UNICODE_SUITS)
    if not t:
        return None
    try:
        return parse_card(t[0].upper() + t[1:])
    except ValueError:
        return None


def _bad_card(text: str) -> str:
    return f"{text!r} is not a card: write a rank (A 2-9 T or 10 J Q K) and a suit (s h d c), e.g. 7h, Th, 10h."


# ------------------------------------------------------------------------ the log

def check_log(data: Any, what: str = "the log") -> dict[str, Any]:
    """Check a parsed ``okgin-play-log`` (``load_log``, the web page's replay); adds ``_rules``.

    Anything malformed is a one-line ``UsageError`` starting with ``what``.
    """
    bad = lambda why: UsageError(f"{what} is not a valid okgin game log: {why}")  # noqa: E731
    if not isinstance(data, dict) or data.get("format") != LOG_FORMAT:
        raise bad(f"'format' must be {LOG_FORMAT!r}")
    if data.get("version") != LOG_VERSION:
        raise bad(f"unsupported version {data.get('version')!r} (this play.py reads version {LOG_VERSION})")
    seed = data.get("seed")
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        raise bad(f"'seed' must be an integer >= 0, got {repr(seed)[:40]}")
    if data.get("episode") not in ("hand", "game"):
        raise bad("'episode' must be 'hand' or 'game'")
    if not isinstance(data.get("rules"), dict):
        raise bad("'rules' must be an object")
    try:
        data["_rules"] = Rules.from_dict(data["rules"])
    except (ValueError, TypeError) as e:
        raise bad(f"rules: {e}") from None
    players = data.get("players")
    if not (isinstance(players, list) and len(players) == 2 and all(isinstance(x, str) for x in players)):
        raise bad("'players' must be a list of two names")
    specs = data.get("specs")  # absent (or null): the players' names stand in for the specs
    if specs is not None and not (isinstance(specs, list) and len(specs) == 2
                                  and all(isinstance(x, str) for x in specs)):
        raise bad(f"'specs' must be absent or a list of two agent specs (strings), got {repr(specs)[:60]}")
    hands = data.get("hands")
    if not isinstance(hands, list) or not hands:
        raise bad("'hands' must be a non-empty list")
    for k, h in enumerate(hands):
        if not isinstance(h, dict) or not isinstance(h.get("actions"), list) or not isinstance(h.get("deck"), str) \
                or h.get("dealer") not in (0, 1):
            raise bad(f"hand {k + 1} needs 'dealer' (0/1), 'deck' (card texts) and 'actions'")
        for a in h["actions"]:
            if not (isinstance(a, list) and len(a) == 2 and all(isinstance(x, int) for x in a)
                    and a[0] in (0, 1) and 0 <= a[1] < NUM_ACTIONS):
                raise bad(f"hand {k + 1}: bad action entry {a!r} (expected [player, action 0-{NUM_ACTIONS - 1}])")
    return data


def logged_result(info: dict) -> dict:
    """A ``hand_result_info`` dict as the log (version 1) keeps it: JSON null, not the envs'
    -1 / '' sentinels, for "nobody" and "no card" (so logs stay as they were written before)."""
    nobody = {k: None for k in ("knocker", "winner", "game_winner", "knock_limit") if info[k] < 0}
    return {**info, **nobody, **({"knock_card": None} if not info["knock_card"] else {})}


def result_key(info: dict) -> tuple:
    """What two logged results must share to be the same result (``--replay`` compares them)."""
    return (info.get("knocker"), info.get("winner"), info.get("void"), tuple(info.get("points") or ()),
            tuple(info.get("scores") or ()))
