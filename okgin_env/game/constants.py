"""The game's fixed numbers, defined once: the phases of a hand, where the deal puts the cards,
the stock's limits, the knock limit's range and the game bonuses (``docs/RULES.md``).

Every module and kernel reads them from here (``okgin_env.game.core`` re-exports them for older
imports). Numba kernels read the ``PH_*`` ints rather than ``Phase`` members: a kernel freezes a
module-level int as a constant, and the phase arrays are int8.
"""

from __future__ import annotations

from enum import IntEnum

from okgin_env.game.cards import HAND_SIZE, NUM_CARDS


class Phase(IntEnum):
    """Whose decision it is and of what kind (``GameState.phase``; the observation's ``phase`` one-hot)."""

    OFFER_NONDEALER = 0  #: non-dealer: take the upcard or pass
    OFFER_DEALER = 1  #: dealer: take the upcard or pass
    FORCED_DRAW = 2  #: non-dealer after both passed: draw the stock (only legal action)
    DRAW = 3  #: start of a turn: draw the stock or take the top discard
    DISCARD = 4  #: after taking a card: discard or knock
    OVER = 5  #: the episode has ended


# The phases as plain ints for the kernels (numba reads module globals, not enum members).
PH_OFFER_NONDEALER = int(Phase.OFFER_NONDEALER)
PH_OFFER_DEALER = int(Phase.OFFER_DEALER)
PH_FORCED_DRAW = int(Phase.FORCED_DRAW)
PH_DRAW = int(Phase.DRAW)
PH_DISCARD = int(Phase.DISCARD)
PH_OVER = int(Phase.OVER)
#: phases in which a player decides (all but OVER): the length of the observation's phase one-hot
NUM_DECISION_PHASES = int(Phase.OVER)

UPCARD_POS = 2 * HAND_SIZE  #: deck[20] is the upcard (deck[:20] are dealt alternately)
STOCK_START = UPCARD_POS + 1  #: deck[21] is the first stock card
FULL_STOCK = NUM_CARDS - STOCK_START  #: 31 cards in the stock right after the deal
WALL = 2  #: an ordinary discard leaving this many stock cards voids the hand
MAX_KNOCK_LIMIT = 10  #: a T-K upcard sets the knock limit to 10, the highest
NUM_KNOCK_LIMITS = MAX_KNOCK_LIMIT + 1  #: knock limits 0..10: the length of the observation's one-hot
LINE_BONUS, GAME_BONUS = 25, 100  #: ``game_bonuses``: per hand won, and for winning the game


def _check_phase_ints() -> None:
    """Fail at import if a PH_* int does not match its Phase member (one definition of the names)."""
    for p in Phase:
        if globals().get(f"PH_{p.name}") != int(p):
            raise RuntimeError(f"PH_{p.name} must equal int(Phase.{p.name}) = {int(p)}")


_check_phase_ints()
