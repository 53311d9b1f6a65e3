"""The observation vector: one fixed layout, defined here and nowhere else.

A float32 vector for one player, built only from what that player may know. Fields in
order (name: size -- meaning):

==================  ====  ================================================================
own_hand              52  1 for each card in the player's hand
discard_top           52  one-hot: the top card of the discard pile (zeros if empty)
pile_buried           52  cards in the discard pile under the top card
opp_taken             52  cards the opponent took from the discard pile and still holds
opp_discarded         52  every card the opponent discarded face up this hand
opp_declined          52  cards the opponent passed on (upcard) or drew the stock instead of
cannot_discard        52  one-hot: the card taken from the pile this turn, which may not be
                          discarded (zeros when ``discard_taken_card`` allows it)
discard_deadwood      52  discard phase only: for each held card c, (110 - deadwood of the
                          hand without c) / 110, so higher is better; zeros otherwise
knock_limit           11  one-hot over the hand's knock limit 0..10
stock_size             1  cards left in the stock / 31
phase                  5  one-hot: offer_nondealer, offer_dealer, forced_draw, draw, discard
                          (zeros when it is not this player's decision)
is_dealer              1  1 if this player dealt the hand
scores                 3  own total / target, opponent total / target, target / 100
                          (game episodes; zeros in hand episodes)
==================  ====  ================================================================

``OBS_VERSION`` changes whenever this layout changes; checkpoints record it.
"""

from __future__ import annotations

import numpy as np

from okgin_env.game.cards import NUM_CARDS
from okgin_env.game.constants import FULL_STOCK, NUM_DECISION_PHASES, NUM_KNOCK_LIMITS

OBS_VERSION = 1

_FIELD_SIZES = (
    ("own_hand", NUM_CARDS),
    ("discard_top", NUM_CARDS),
    ("pile_buried", NUM_CARDS),
    ("opp_taken", NUM_CARDS),
    ("opp_discarded", NUM_CARDS),
    ("opp_declined", NUM_CARDS),
    ("cannot_discard", NUM_CARDS),
    ("discard_deadwood", NUM_CARDS),
    ("knock_limit", NUM_KNOCK_LIMITS),
    ("stock_size", 1),
    ("phase", NUM_DECISION_PHASES),
    ("is_dealer", 1),
    ("scores", 3),
)


def field_slices(sizes: tuple[tuple[str, int], ...]) -> dict[str, slice]:
    """Consecutive named fields of a flat vector: ((name, size), ...) -> {name: slice}."""
    out, start = {}, 0
    for name, size in sizes:
        out[name] = slice(start, start + size)
        start += size
    return out


#: name -> slice of the observation vector
OBS_FIELDS: dict[str, slice] = field_slices(_FIELD_SIZES)
#: total length of the observation vector
OBS_SIZE: int = sum(size for _, size in _FIELD_SIZES)
#: start offset of each field
OBS_OFFSET = {name: s.start for name, s in OBS_FIELDS.items()}
# The same offsets as module constants, for numba kernels (which read globals, not dicts).
OWN_HAND = OBS_OFFSET["own_hand"]
DISCARD_TOP = OBS_OFFSET["discard_top"]
PILE_BURIED = OBS_OFFSET["pile_buried"]
OPP_TAKEN = OBS_OFFSET["opp_taken"]
OPP_DISCARDED = OBS_OFFSET["opp_discarded"]
OPP_DECLINED = OBS_OFFSET["opp_declined"]
CANNOT_DISCARD = OBS_OFFSET["cannot_discard"]
DISCARD_DEADWOOD = OBS_OFFSET["discard_deadwood"]
KNOCK_LIMIT = OBS_OFFSET["knock_limit"]
STOCK_SIZE = OBS_OFFSET["stock_size"]
PHASE = OBS_OFFSET["phase"]
IS_DEALER = OBS_OFFSET["is_dealer"]
SCORES = OBS_OFFSET["scores"]
DEADWOOD_SCALE = 110.0  #: discard_deadwood = (DEADWOOD_SCALE - deadwood) / DEADWOOD_SCALE
STOCK_SCALE = float(FULL_STOCK)  #: stock_size = cards in stock / STOCK_SCALE (31.0)


def obs_field(obs: np.ndarray, name: str) -> np.ndarray:
    """The named field of one observation (..., OBS_SIZE) -> (..., size)."""
    if name not in OBS_FIELDS:
        raise KeyError(f"unknown observation field {name!r}; fields: {', '.join(OBS_FIELDS)}")
    return np.asarray(obs)[..., OBS_FIELDS[name]]
