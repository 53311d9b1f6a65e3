"""Action encoding (docs/RULES.md, "Action encoding"; fixed: tools, tests and checkpoints depend on it).

==========  ==========================================================
0-51        discard card ``a``
52-103      knock, discarding card ``a - 52`` face down
104         draw the top of the stock
105         take the top of the discard pile (the upcard during the offer)
106         pass (only during the first upcard offer)
==========  ==========================================================
"""

from __future__ import annotations

from typing import Any

import numpy as np

from okgin_env.game.cards import NUM_CARDS, card_text

DISCARD = 0  #: first discard action; discard card c is DISCARD + c
KNOCK = NUM_CARDS  #: first knock action; knock discarding card c is KNOCK + c
DRAW_STOCK = 2 * NUM_CARDS  #: 104
TAKE_DISCARD = DRAW_STOCK + 1  #: 105
PASS = DRAW_STOCK + 2  #: 106
NUM_ACTIONS = DRAW_STOCK + 3  #: 107
#: The one action a learner env's mask allows once its episode is over (single-agent, vector and
#: SB3 envs; docs/conformance.md): an all-False mask makes a masked softmax NaN, while one True
#: gives log-prob 0 and no gradient. It is never played: the vectoriser resets that env instead.
TERMINAL_ACTION = PASS


def discard_action(card: int) -> int:
    """Action id for discarding ``card``."""
    return DISCARD + int(card)


def knock_action(card: int) -> int:
    """Action id for knocking while discarding ``card`` face down."""
    return KNOCK + int(card)


def action_parts(action: int) -> tuple[str, int | None]:
    """What an action does, as (kind, card): ``('discard', 22)``, ``('knock', 6)``, ``('draw', None)``,
    ``('take', None)`` or ``('pass', None)``. Every wording of an action (this module's text, the
    terminal's commands, the web page's buttons) is written from this one decoding."""
    a = int(action)
    if not 0 <= a < NUM_ACTIONS:
        raise ValueError(f"action must be an integer 0-{NUM_ACTIONS - 1}, got {action!r}")
    if a < KNOCK:
        return "discard", a - DISCARD
    if a < DRAW_STOCK:
        return "knock", a - KNOCK
    return {DRAW_STOCK: "draw", TAKE_DISCARD: "take", PASS: "pass"}[a], None


def action_text(action: int) -> str:
    """Short human-readable form: 'discard Th', 'knock 7h', 'draw', 'take', 'pass'."""
    if not 0 <= int(action) < NUM_ACTIONS:
        return f"invalid action {int(action)}"
    kind, card = action_parts(action)
    return kind if card is None else f"{kind} {card_text(card)}"


def legal_listing(mask: np.ndarray) -> str:
    """'104 (draw), 105 (take)': the legal actions of a (107,) mask, for error messages."""
    return ", ".join(f"{a} ({action_text(a)})" for a in np.flatnonzero(mask))


def check_action(action: Any, mask: np.ndarray, who: str = "", where: str = "") -> int:
    """The action as a Python int if it is legal under ``mask``; otherwise a ValueError that
    names the action and lists the legal ones (``who`` names the player, ``where`` the game, e.g.
    " in game 3", in the message). The one legality message of every env."""
    for_who = f" for {who}" if who else ""
    if type(action) is not int:
        if isinstance(action, (np.integer, np.ndarray)) and np.ndim(action) == 0 and \
                np.asarray(action).dtype.kind in "iu":
            action = int(action)
        else:
            raise ValueError(f"action must be an integer 0-{NUM_ACTIONS - 1}, got {action!r}; "
                             f"legal actions{for_who}: {legal_listing(mask)}")
    if not 0 <= action < NUM_ACTIONS:
        raise ValueError(f"action {action}{where} is out of range 0-{NUM_ACTIONS - 1}; legal actions{for_who}: "
                         f"{legal_listing(mask)}")
    if not mask[action]:
        raise ValueError(f"illegal action {action} ({action_text(action)}){where}{for_who}; "
                         f"legal actions: {legal_listing(mask)}")
    return action
