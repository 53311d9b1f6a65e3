"""Cards: canonical index, text, points and display form (see ``docs/RULES.md``, "Cards").

``index = suit * 13 + rank``; rank 0 = ace ... 12 = king; suits spades 0, hearts 1,
diamonds 2, clubs 3. Canonical text is rank char + suit char: ``"As"``, ``"Th"``, ``"Kc"``.
"""

from __future__ import annotations

from typing import Iterable, Sequence

import numpy as np

NUM_CARDS = 52
NUM_RANKS = 13
NUM_SUITS = 4
HAND_SIZE = 10

RANK_CHARS = "A23456789TJQK"
SUIT_CHARS = "shdc"
SUIT_SYMBOLS = "♠♥♦♣"

#: (52,) int8 -- deadwood points of each card: ace 1, 2-10 face value, J Q K 10.
CARD_POINTS = np.array([min(r + 1, 10) for _ in range(NUM_SUITS) for r in range(NUM_RANKS)], dtype=np.int8)
#: (52,) int8 -- rank (0 = ace ... 12 = king) and suit of each card index.
CARD_RANK = np.array([c % NUM_RANKS for c in range(NUM_CARDS)], dtype=np.int8)
CARD_SUIT = np.array([c // NUM_RANKS for c in range(NUM_CARDS)], dtype=np.int8)


def card_index(rank: int, suit: int) -> int:
    """Card index from rank (0 = ace) and suit (0 = spades)."""
    return suit * NUM_RANKS + rank


def card_points(card: int) -> int:
    """Deadwood points of one card."""
    return int(CARD_POINTS[_check_index(card)])


def _check_index(card: int) -> int:
    if isinstance(card, (bool, np.bool_)) or not isinstance(card, (int, np.integer)) or not 0 <= card < NUM_CARDS:
        raise ValueError(f"card index must be an integer 0-51, got {card!r}")
    return int(card)


def card_text(card: int) -> str:
    """Canonical text of a card index: 0 -> 'As', 22 -> 'Th'."""
    card = _check_index(card)
    return RANK_CHARS[card % NUM_RANKS] + SUIT_CHARS[card // NUM_RANKS]


def card_pretty(card: int) -> str:
    """Display form for people, as printed on a card: 22 -> '10♥', 0 -> 'A♠'. (Canonical text keeps
    one character per rank, 'Th', so that commands and logs stay fixed-width.)"""
    card = _check_index(card)
    rank = RANK_CHARS[card % NUM_RANKS]
    return ("10" if rank == "T" else rank) + SUIT_SYMBOLS[card // NUM_RANKS]


def parse_card(text: str) -> int:
    """Card index from text: 'As', 'Th', also 'TH' and '10h' (docs/RULES.md). Anything else is a ValueError."""
    if not isinstance(text, str):
        raise ValueError(f"card text must be a string like 'As' or 'Th', got {text!r}")
    t = text.strip()
    if len(t) == 3 and t[:2] == "10":
        t = "T" + t[2]
    if len(t) != 2 or t[0] not in RANK_CHARS or t[1].lower() not in SUIT_CHARS:
        raise ValueError(
            f"bad card {text!r}: expected a rank from {' '.join(RANK_CHARS)} (or 10) "
            f"followed by a suit from {' '.join(SUIT_CHARS)}, e.g. 'As', 'Th', '10h'"
        )
    return card_index(RANK_CHARS.index(t[0]), SUIT_CHARS.index(t[1].lower()))


def parse_cards(text: str | Iterable[str]) -> list[int]:
    """Card indices from 'As 2s 3s' (spaces or commas) or from a list of card texts."""
    parts = text.replace(",", " ").split() if isinstance(text, str) else list(text)
    return [parse_card(p) for p in parts]


def format_cards(cards: Iterable[int], pretty: bool = False) -> str:
    """Space-separated text of card indices (in the given order)."""
    fmt = card_pretty if pretty else card_text
    return " ".join(fmt(int(c)) for c in cards)


def sort_cards(cards: Iterable[int]) -> list[int]:
    """Cards sorted by suit, then rank (the order a player fans a hand)."""
    return sorted(int(c) for c in cards)


def cards_of(mask: Sequence[bool] | np.ndarray) -> list[int]:
    """Card indices set in a (52,) boolean/0-1 vector."""
    return [int(c) for c in np.flatnonzero(np.asarray(mask))]


def mask_of(cards: Iterable[int]) -> np.ndarray:
    """(52,) bool vector with the given cards set."""
    m = np.zeros(NUM_CARDS, dtype=bool)
    m[[_check_index(int(c)) for c in cards]] = True
    return m


def _card_list(cards: str | Iterable[str | int | None]) -> list[int | None]:
    """Card indices from text or a list of card texts/indices; None entries stay None."""
    if isinstance(cards, str):
        return list(parse_cards(cards))
    return [None if c is None else parse_card(c) if isinstance(c, str) else _check_index(c) for c in cards]


def deck_from(
    nondealer: str | Sequence[str | int] | None,
    dealer: str | Sequence[str | int] | None,
    upcard: str | int,
    stock: str | Sequence[str | int | None] = (),
) -> list[int]:
    """The full 52-card deck order that deals these cards (docs/RULES.md "Replaying a deal").

    The deal contract: deck[0], deck[2], ..., deck[18] go to the non-dealer and deck[1],
    deck[3], ..., deck[19] to the dealer; deck[20] is the upcard; deck[21:] is the stock,
    top first. ``nondealer``/``dealer`` are ten cards each (``"As 2s 3s ..."`` or a list),
    or None for "any ten unused cards"; ``stock`` lists the first stock cards, None in it
    meaning "any unused card". Cards not named fill the gaps in index order (the hands
    first, then the stock's gaps, then the rest of the stock), so the same arguments
    always give the same deck.

    >>> deck_from("As 2s 3s 4s 5s 6s 7s 8s 9s Ts", "Ah 2h 3h 4h 5h 6h 7h 8h 9h Th", "Kc", "Qc")[:4]
    [0, 13, 1, 14]
    """
    hands = [None if h is None else _card_list(h) for h in (nondealer, dealer)]
    for who, h in zip(("non-dealer", "dealer"), hands):
        if h is not None and len(h) != HAND_SIZE:
            raise ValueError(f"the {who}'s hand must be {HAND_SIZE} cards or None, got {len(h)}")
    up = parse_card(upcard) if isinstance(upcard, str) else _check_index(upcard)
    top = _card_list(stock)
    if len(top) > NUM_CARDS - 2 * HAND_SIZE - 1:
        raise ValueError(f"the stock holds {NUM_CARDS - 2 * HAND_SIZE - 1} cards, got {len(top)}")
    named = [c for h in hands if h is not None for c in h] + [up] + [c for c in top if c is not None]
    seen: set[int] = set()
    for c in named:
        if c in seen:
            raise ValueError(f"card {card_text(c)} is named twice; each card is dealt once")
        seen.add(c)
    unused = iter(c for c in range(NUM_CARDS) if c not in seen)
    nd, de = [h if h is not None else [next(unused) for _ in range(HAND_SIZE)] for h in hands]
    deck = [c for pair in zip(nd, de) for c in pair] + [up] + [c if c is not None else next(unused) for c in top]
    return deck + list(unused)


def parse_deck(deck: Sequence[int] | Sequence[str] | np.ndarray) -> np.ndarray:
    """Validate a full 52-card deck order (all indices or all card texts) -> (52,) int8.

    Raises ValueError naming the problem: wrong length, unknown card, duplicate.
    """
    items = list(deck) if not isinstance(deck, str) else deck.split()
    if len(items) != NUM_CARDS:
        raise ValueError(f"a deck must list all {NUM_CARDS} cards exactly once; got {len(items)} cards")
    if all(isinstance(x, str) for x in items):
        idx = [parse_card(x) for x in items]
    elif all(isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_)) for x in items):
        idx = [int(x) for x in items]
        bad = [x for x in idx if not 0 <= x < NUM_CARDS]
        if bad:
            raise ValueError(f"unknown card index {bad[0]} in deck: card indices are 0-51")
    else:
        raise ValueError("a deck must be all card indices (0-51) or all card texts ('As', 'Th', ...), not a mix")
    seen: set[int] = set()
    for pos, c in enumerate(idx):
        if c in seen:
            raise ValueError(f"duplicate card {card_text(c)} in deck (position {pos}); each of the 52 cards must appear once")
        seen.add(c)
    return np.asarray(idx, dtype=np.int8)
