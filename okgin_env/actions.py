"""Action encoding (RULES.md, "Action encoding"; fixed: tools, tests and checkpoints depend on it).

==========  ==========================================================
0-51        discard card ``a``
52-103      knock, discarding card ``a - 52`` face down
104         draw the top of the stock
105         take the top of the discard pile (the upcard during the offer)
106         pass (only during the first upcard offer)
==========  ==========================================================
"""

from __future__ import annotations

from .cards import NUM_CARDS, card_text

DISCARD = 0  #: first discard action; discard card c is DISCARD + c
KNOCK = NUM_CARDS  #: first knock action; knock discarding card c is KNOCK + c
DRAW_STOCK = 2 * NUM_CARDS  #: 104
TAKE_DISCARD = DRAW_STOCK + 1  #: 105
PASS = DRAW_STOCK + 2  #: 106
NUM_ACTIONS = DRAW_STOCK + 3  #: 107


def discard_action(card: int) -> int:
    """Action id for discarding ``card``."""
    return DISCARD + int(card)


def knock_action(card: int) -> int:
    """Action id for knocking while discarding ``card`` face down."""
    return KNOCK + int(card)


def action_text(action: int) -> str:
    """Short human-readable form: 'discard Th', 'knock 7h', 'draw', 'take', 'pass'."""
    a = int(action)
    if not 0 <= a < NUM_ACTIONS:
        return f"invalid action {a}"
    if a < KNOCK:
        return f"discard {card_text(a)}"
    if a < DRAW_STOCK:
        return f"knock {card_text(a - KNOCK)}"
    return {DRAW_STOCK: "draw", TAKE_DISCARD: "take", PASS: "pass"}[a]
