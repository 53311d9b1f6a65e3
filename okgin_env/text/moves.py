"""Reading a move from text: a move's id, a JSON ``{"move": ...}`` or plain words.

:func:`parse_move` reads one whole reply, strictly; :func:`read_answer` also finds the move
inside a longer free-form answer (a language model's reasoning followed by its move). Both
return a legal action id (``okgin_env.game.actions``) or raise :class:`MoveError` (a
``ValueError``) whose message says why and lists the legal moves.

Accepted forms (case and spacing do not matter; one pair of surrounding ``[]``, quotes or
backticks, a trailing period and a code fence are ignored):

==========================  ====================================================================
``104``                     a move's id (as listed by ``okgin_env.text.view.legal_moves``)
``{"move": 104}``           JSON: an object whose "move" is an id or words (other keys ignored)
``draw stock``              also ``draw``, ``stock``, ``draw from the stock``
``take 7h``                 also ``take``, ``take upcard``, ``take the discard``, ``pick up``;
                            a named card must be the top of the discard pile
``pass``                    only during the first upcard offer
``discard 7S``              card text as in docs/RULES.md: ``7s``, ``7S``, ``Th``, ``10h``
``knock 7s``                knock, discarding 7s face down; also ``knock with 7s``
``knock``                   knock with the card that leaves the least deadwood (ties: the
                            highest card id), when a knock is legal
``gin``                     a knock that leaves 0 deadwood (``gin 7s`` names the card)
==========================  ====================================================================
"""

from __future__ import annotations

import json
import re
from typing import Any

import numpy as np

from okgin_env.game.actions import (
    DRAW_STOCK,
    KNOCK,
    NUM_ACTIONS,
    PASS,
    TAKE_DISCARD,
    action_text,
)
from okgin_env.game.cards import card_text, parse_card
from okgin_env.text.view import ANSWER_HINT, Seen, legal_moves, read_observation

MAX_ANSWER_CHARS = 20_000  #: longer answers are refused unread (a reply is a move, not a book)

_CARD = r"(?:10|[a2-9tjqk])[shdc]"
_DRAW = re.compile(r"(?:draw|draw (?:a card )?from (?:the )?stock|draw (?:the )?stock|stock|draw (?:the )?top of "
                   r"(?:the )?stock)")
_TAKE = re.compile(rf"(?:take|pick up|take up)(?: (?:the )?(?P<what>upcard|up card|discard|top discard|discard top|"
                   rf"top card|top of (?:the )?discard pile|card|(?P<card>{_CARD})))?(?: from (?:the )?discard pile)?")
_DISCARD = re.compile(rf"discard (?P<card>{_CARD})")
_KNOCK = re.compile(rf"knock(?: (?:with |discarding |on |and discard )?(?P<card>{_CARD}))?(?: face down)?")
_GIN = re.compile(rf"(?:go )?gin(?: (?:with |discarding |on )?(?P<card>{_CARD}))?")
_FENCE = re.compile(r"^```[a-zA-Z]*\s*(.*?)\s*```$", re.S)
_PAIRS = ("[]", '""', "''", "``", "()")


class MoveError(ValueError):
    """A reply that is not a legal move; the message says why and what is allowed."""


def allowed_text(obs: np.ndarray | Seen, mask: np.ndarray) -> str:
    """'104 (draw stock), 105 (take 7h)': the legal moves for an error message."""
    moves = legal_moves(obs, mask)
    if not moves:
        return "none (it is not your turn)"
    return ", ".join(f"{m.id} ({m.words})" for m in moves)


def _refuse(text: str, why: str, obs: np.ndarray | Seen, mask: np.ndarray) -> MoveError:
    shown = text if len(text) <= 80 else text[:77] + "..."
    return MoveError(f"{shown!r} is not a legal move: {why}. Allowed: {allowed_text(obs, mask)}; {ANSWER_HINT}")


def _card(text: str) -> int:
    """A card from the lower-cased words ('7s', 'th', '10h'): parse_card wants the rank upper-case."""
    t = text.strip().lower()
    return parse_card(t if t.startswith("10") else t[0].upper() + t[1:])


def _unwrap(text: str) -> str:
    """``text`` without surrounding whitespace, code fence, one pair of brackets/quotes, final period."""
    t = text.strip()
    m = _FENCE.match(t)
    if m:
        t = m.group(1).strip()
    if len(t) >= 2 and t[0] + t[-1] in _PAIRS:
        t = t[1:-1].strip()
    if t.endswith(".") and not t.endswith(".."):
        t = t[:-1].rstrip()
    return t


def _legal_or_refuse(action: int, text: str, seen: Seen, mask: np.ndarray) -> int:
    if not mask[action]:
        raise _refuse(text, f"{action_text(action)} is not allowed now{_why_not(action, seen)}", seen, mask)
    return action


def _why_not(action: int, seen: Seen) -> str:
    """A short reason for an illegal action, from what the player sees."""
    if seen.phase is None:
        return " (it is not your turn)"
    if action == PASS:
        return " (pass is only for the first upcard offer)"
    if action in (DRAW_STOCK, TAKE_DISCARD):
        return " (you have drawn already: discard or knock)" if seen.phase == "discard" else \
            " (both passed on the upcard: draw from the stock)" if action == TAKE_DISCARD else \
            " (take the upcard or pass)"
    if seen.phase != "discard":
        return " (draw first)"
    card = action % KNOCK if action < 2 * KNOCK else -1
    if card not in seen.hand:
        return f" ({card_text(card)} is not in your hand)"
    if card == seen.cannot_discard:
        return f" ({card_text(card)} was taken from the discard pile this turn)"
    if action >= KNOCK:
        return f" (deadwood {seen.deadwood_after.get(card, '?')} is above the knock limit {seen.knock_limit})"
    return ""


def _best_knock(seen: Seen, mask: np.ndarray, gin: bool) -> int | None:
    """The legal knock leaving the least deadwood (0 for ``gin``), ties to the highest card id; None if none."""
    options = [(dw, -c) for c, dw in seen.deadwood_after.items() if mask[KNOCK + c] and (not gin or dw == 0)]
    return KNOCK - min(options)[1] if options else None


def _words(text: str, words: str, seen: Seen, mask: np.ndarray) -> int:
    w = " ".join(words.lower().replace(",", " ").split())
    if _DRAW.fullmatch(w):
        return _legal_or_refuse(DRAW_STOCK, text, seen, mask)
    m = _TAKE.fullmatch(w)
    if m:
        if m.group("card") and _card(m.group("card")) != seen.top:
            top = card_text(seen.top) if seen.top >= 0 else "nothing"
            raise _refuse(text, f"the top of the discard pile is {top}, not {m.group('card')}", seen, mask)
        return _legal_or_refuse(TAKE_DISCARD, text, seen, mask)
    if w == "pass":
        return _legal_or_refuse(PASS, text, seen, mask)
    m = _DISCARD.fullmatch(w)
    if m:
        return _legal_or_refuse(_card(m.group("card")), text, seen, mask)
    for pattern, gin in ((_KNOCK, False), (_GIN, True)):
        m = pattern.fullmatch(w)
        if not m:
            continue
        if m.group("card"):
            c = _card(m.group("card"))
            a = _legal_or_refuse(KNOCK + c, text, seen, mask)
            if gin and seen.deadwood_after.get(c) != 0:
                raise _refuse(text, f"knocking with {card_text(c)} leaves deadwood {seen.deadwood_after.get(c)}, "
                              "not gin", seen, mask)
            return a
        a = _best_knock(seen, mask, gin)
        if a is None:
            why = "no knock is allowed now" if not mask[KNOCK:2 * KNOCK].any() else "no knock leaves 0 deadwood"
            raise _refuse(text, why + _turn_note(seen), seen, mask)
        return a
    m = re.fullmatch(r"(?:discard|knock|gin|take)(?: \S+)* (?P<card>\S+)", w)
    if m and not re.fullmatch(_CARD, m.group("card")):
        raise _refuse(text, f"{m.group('card')!r} is not a card (a rank A 2-9 T J Q K or 10, then a suit s h d c, "
                      "e.g. 7s)", seen, mask)
    raise _refuse(text, "it is no move id, JSON move or move words", seen, mask)


def _turn_note(seen: Seen) -> str:
    return " (it is not your turn)" if seen.phase is None else " (draw first)" if seen.phase != "discard" else ""


def parse_move(text: Any, obs: np.ndarray | Seen, mask: np.ndarray) -> int:
    """The legal action id a whole reply names (forms: the module docstring), for the player whose
    observation vector (or its decoded ``Seen``) and (107,) action mask are given. Anything else
    raises ``MoveError`` saying why and listing the legal moves."""
    seen = obs if isinstance(obs, Seen) else read_observation(obs)
    mask = np.asarray(mask, dtype=bool)
    if mask.shape != (NUM_ACTIONS,):
        raise ValueError(f"action mask must have shape ({NUM_ACTIONS},), got {mask.shape}")
    if not isinstance(text, str):
        raise _refuse(repr(text), f"a move is text, got {type(text).__name__}", seen, mask)
    if len(text) > MAX_ANSWER_CHARS:
        raise _refuse(text, f"the reply is longer than {MAX_ANSWER_CHARS} characters", seen, mask)
    t = _unwrap(text)
    if t.startswith("{"):
        try:
            value = json.loads(t)
        except json.JSONDecodeError as e:
            raise _refuse(text, f"bad JSON ({e.msg})", seen, mask) from None
        if not isinstance(value, dict) or "move" not in value:
            raise _refuse(text, 'JSON must be an object with a "move" key', seen, mask)
        move = value["move"]
        if isinstance(move, bool) or not isinstance(move, (int, str)):
            raise _refuse(text, '"move" must be a move id or the move\'s words', seen, mask)
        t = str(move).strip()
    if re.fullmatch(r"[+-]?\d+", t):
        a = int(t)
        if not 0 <= a < NUM_ACTIONS:
            raise _refuse(text, f"move ids are 0-{NUM_ACTIONS - 1}", seen, mask)
        return _legal_or_refuse(a, text, seen, mask)
    return _words(text, t, seen, mask)


_JSON_OBJECT = re.compile(r"\{[^{}]*\}")
_BRACKETED = re.compile(r"\[([^\[\]]{1,60})\]")
_LAST_LINE_MOVE = re.compile(r"(?:move|answer)\s*[:=]\s*(.+)$", re.I)


def read_answer(text: Any, obs: np.ndarray | Seen, mask: np.ndarray) -> int:
    """``parse_move`` of a free-form answer: the whole text first; if that fails, the last JSON
    object with a "move" key in it, then the last ``[...]`` (TextArena's convention), then a final
    ``move: ...`` / ``answer: ...`` line. The first error (of the whole text) is raised when none reads."""
    try:
        return parse_move(text, obs, mask)
    except MoveError as first:
        if not isinstance(text, str) or len(text) > MAX_ANSWER_CHARS:
            raise
        candidates = [m.group(0) for m in _JSON_OBJECT.finditer(text) if '"move"' in m.group(0)][-1:]
        candidates += [m.group(1) for m in _BRACKETED.finditer(text)][-1:]
        lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
        if lines:
            m = _LAST_LINE_MOVE.search(lines[-1])
            if m:
                candidates.append(m.group(1))
        for c in candidates:
            try:
                return parse_move(c, obs, mask)
            except MoveError:
                continue
        raise first


__all__ = ["MAX_ANSWER_CHARS", "MoveError", "allowed_text", "parse_move", "read_answer"]
