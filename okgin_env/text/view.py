"""A player's view in words, read from that player's observation vector and action mask alone.

Nothing here reads a game state: :func:`render_view` turns the two arrays every agent sees
(``okgin_env.game.observation``, ``okgin_env.game.actions``) into plain ASCII text, so the
text can never hold a card the player may not know (the stock, the opponent's unseen cards).
The hand is grouped into melds and deadwood by ``okgin_env.render.text.meld_groups`` (one
minimal-deadwood arrangement, ``okgin_env.game.melds``); cards are written in canonical text
("7h", "Ts": rank ``A23456789TJQK``, suit ``s h d c``).

* :func:`read_observation` decodes one observation into a :class:`Seen` record.
* :func:`legal_moves` lists the legal moves as :class:`Move` (id, words, note); the words are
  what ``okgin_env.text.moves.parse_move`` reads back.
* :func:`render_view` is the whole view: whose turn and what may be done, the hand in melds and
  deadwood, the discard pile, the stock, the knock limit, the scores, what the opponent is known
  to hold (cards it took from the discard pile), what it discarded and declined, and the legal
  moves with their ids.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from okgin_env.game.actions import (
    DRAW_STOCK,
    NUM_ACTIONS,
    PASS,
    TAKE_DISCARD,
    action_parts,
)
from okgin_env.game.cards import CARD_POINTS, card_text, cards_of, sort_cards
from okgin_env.game.observation import DEADWOOD_SCALE, OBS_SIZE, STOCK_SCALE, obs_field
from okgin_env.render.text import meld_groups

#: names of the observation's phase one-hot, in its order (``okgin_env.game.observation``)
PHASE_NAMES = ("offer_nondealer", "offer_dealer", "forced_draw", "draw", "discard")
_PHASE_WORDS = {
    "offer_nondealer": "the first upcard offer: take the upcard or pass",
    "offer_dealer": "the upcard offer (the non-dealer passed): take the upcard or pass",
    "forced_draw": "both passed on the upcard, so you must draw from the stock",
    "draw": "draw from the stock or take the top card of the discard pile",
    "discard": "discard a card, or knock",
}
ANSWER_HINT = 'reply with a move\'s id, its words, or {"move": id}'  #: how the move list says to answer


class Move(NamedTuple):
    """One legal move: its action id, the words that name it, and a short note for the reader."""

    id: int
    words: str
    note: str


@dataclass(frozen=True)
class Seen:
    """What one observation tells its player (``read_observation``); cards are indices 0-51."""

    hand: list[int]  #: own cards, sorted by suit then rank
    top: int  #: top of the discard pile, -1 when empty
    buried: list[int]  #: the rest of the discard pile (a set: the observation keeps no order)
    opp_taken: list[int]  #: cards the opponent took from the discard pile and still holds
    opp_discarded: list[int]  #: cards the opponent discarded face up this hand
    opp_declined: list[int]  #: cards the opponent passed on or drew the stock instead of
    cannot_discard: int  #: the card taken from the pile this turn (-1: none, or the rules allow it)
    deadwood_after: dict[int, int]  #: discard phase: card -> deadwood of the hand without it
    knock_limit: int  #: the hand's knock limit 0-10 (-1 when the observation carries none)
    stock: int  #: cards left in the stock
    phase: str | None  #: one of ``PHASE_NAMES``; None when it is not this player's decision
    dealer: bool  #: this player dealt the hand
    scores: tuple[int, int, int] | None  #: (own total, opponent's total, target); None in hand episodes


def _cards(obs: np.ndarray, name: str) -> list[int]:
    return cards_of(obs_field(obs, name) > 0.5)


def read_observation(obs: np.ndarray) -> Seen:
    """Decode one (OBS_SIZE,) observation vector (ValueError for another shape)."""
    obs = np.asarray(obs, dtype=np.float32)
    if obs.shape != (OBS_SIZE,):
        raise ValueError(f"observation must have shape ({OBS_SIZE},), got {obs.shape}")
    hand = _cards(obs, "own_hand")
    top = _cards(obs, "discard_top")
    taken = _cards(obs, "cannot_discard")
    phase_hot = obs_field(obs, "phase")
    phase = PHASE_NAMES[int(np.argmax(phase_hot))] if phase_hot.max() > 0.5 else None
    after: dict[int, int] = {}
    if phase == "discard":
        x = obs_field(obs, "discard_deadwood")
        after = {c: int(round(DEADWOOD_SCALE * (1.0 - float(x[c])))) for c in hand}
    limit_hot = obs_field(obs, "knock_limit")
    s = obs_field(obs, "scores")
    target = int(round(float(s[2]) * 100))
    scores = (int(round(float(s[0]) * target)), int(round(float(s[1]) * target)), target) if target > 0 else None
    return Seen(
        hand=sort_cards(hand), top=top[0] if top else -1, buried=_cards(obs, "pile_buried"),
        opp_taken=_cards(obs, "opp_taken"), opp_discarded=_cards(obs, "opp_discarded"),
        opp_declined=_cards(obs, "opp_declined"), cannot_discard=taken[0] if taken else -1, deadwood_after=after,
        knock_limit=int(np.argmax(limit_hot)) if limit_hot.max() > 0.5 else -1,
        stock=int(round(float(obs_field(obs, "stock_size")[0]) * STOCK_SCALE)), phase=phase,
        dealer=bool(obs_field(obs, "is_dealer")[0] > 0.5), scores=scores,
    )


def _check_mask(mask: np.ndarray) -> np.ndarray:
    mask = np.asarray(mask, dtype=bool)
    if mask.shape != (NUM_ACTIONS,):
        raise ValueError(f"action mask must have shape ({NUM_ACTIONS},), got {mask.shape}")
    return mask


def legal_moves(obs: np.ndarray | Seen, mask: np.ndarray) -> list[Move]:
    """The legal moves of ``mask`` in id order, worded from the observation (``obs`` or its ``Seen``)."""
    seen = obs if isinstance(obs, Seen) else read_observation(obs)
    mask = _check_mask(mask)
    offer = seen.phase in ("offer_nondealer", "offer_dealer")
    moves = []
    for a in np.flatnonzero(mask):
        a = int(a)
        kind, card = action_parts(a)
        if a == DRAW_STOCK:
            moves.append(Move(a, "draw stock", "take the top card of the face-down stock"))
        elif a == TAKE_DISCARD:
            what = "the upcard" if offer else "the top card of the discard pile"
            top = card_text(seen.top) if seen.top >= 0 else "upcard"
            moves.append(Move(a, f"take {top}", f"take {what}"))
        elif a == PASS:
            moves.append(Move(a, "pass", "decline the upcard"))
        else:
            dw = seen.deadwood_after.get(card)
            left = "" if dw is None else f"deadwood left {dw}"
            if kind == "knock":
                note = ("gin: deadwood 0" if dw == 0 else f"end the hand with {left}") if dw is not None else \
                    "end the hand"
                moves.append(Move(a, f"knock {card_text(card)}", f"{note}, {card_text(card)} face down"))
            else:
                moves.append(Move(a, f"discard {card_text(card)}", left))
    return moves


def _texts(cards: list[int]) -> str:
    return " ".join(card_text(c) for c in cards)


def _points(cards: list[int]) -> int:
    return int(sum(int(CARD_POINTS[c]) for c in cards))


def render_view(obs: np.ndarray, mask: np.ndarray, *, over: bool = False, moves: bool = True) -> str:
    """The player's view in plain ASCII text, from its observation vector and action mask only.

    ``over``: the episode has ended (the text says so instead of "the opponent's turn").
    ``moves``: end with the list of legal moves (their ids, words and a note).
    """
    seen = read_observation(obs)
    mask = _check_mask(mask)
    role = "the dealer" if seen.dealer else "the non-dealer"
    lines = [f"Oklahoma Gin: your view, as {role}."]
    if over:
        lines.append("Turn: none, the episode is over.")
    elif seen.phase is None:
        lines.append("Turn: the opponent's.")
    else:
        lines.append(f"Turn: yours -- {_PHASE_WORDS[seen.phase]}.")
    melds, dead = meld_groups(seen.hand)
    meld_text = " ".join(f"[{_texts(m)}]" for m in melds) if melds else "(none)"
    lines.append(f"Your hand ({len(seen.hand)} cards): {_texts(seen.hand)}")
    lines.append(f"  melds: {meld_text}")
    lines.append(f"  deadwood: {_texts(dead) if dead else '(none)'} = {_points(dead)} points")
    if seen.cannot_discard >= 0:
        lines.append(f"Taken from the discard pile this turn (may not be discarded): {card_text(seen.cannot_discard)}")
    n_pile = len(seen.buried) + (seen.top >= 0)
    if seen.top < 0:
        lines.append("Discard pile: empty.")
    else:
        what = "upcard" if seen.phase in ("offer_nondealer", "offer_dealer") else "on top"
        under = f"; under it: {_texts(seen.buried)}" if seen.buried else ""
        lines.append(f"Discard pile: {card_text(seen.top)} {what}, {n_pile} card{'s' * (n_pile != 1)}{under}.")
    lines.append(f"Stock: {seen.stock} cards face down.")
    if seen.knock_limit == 0:
        lines.append("Knock limit: 0 (gin only: a knock needs 0 deadwood).")
    elif seen.knock_limit > 0:
        lines.append(f"Knock limit: {seen.knock_limit} (a knock needs deadwood {seen.knock_limit} or less; "
                     "0 deadwood is gin).")
    if seen.scores is None:
        lines.append("Scores: this episode is one hand (no running total).")
    else:
        own, opp, target = seen.scores
        lines.append(f"Scores: you {own}, opponent {opp}; the first to {target} wins the game.")
    known = _texts(seen.opp_taken) if seen.opp_taken else "nothing"
    lines.append(f"Opponent: known to hold {known} (cards it took from the discard pile).")
    if seen.opp_discarded:
        lines.append(f"  it discarded: {_texts(seen.opp_discarded)}")
    if seen.opp_declined:
        lines.append(f"  it declined (passed on, or drew the stock instead of): {_texts(seen.opp_declined)}")
    if moves and not over and seen.phase is not None:
        lines.append(f"Legal moves ({ANSWER_HINT}):")
        for m in legal_moves(seen, mask):
            lines.append(f"  {m.id}: {m.words}" + (f" ({m.note})" if m.note else ""))
    return "\n".join(lines)


__all__ = ["ANSWER_HINT", "Move", "PHASE_NAMES", "Seen", "legal_moves", "read_observation", "render_view"]
