"""Row-level numba helpers: read one observation, deadwood of suit masks.

A kernel that loops over a batch of observations (a bot's decisions in ``okgin_agents``, the
learner features of ``okgin_env.features.learner``) calls these on one row at a time, so a whole batch is
handled in one compiled call. Fields are read through the offset constants of
``okgin_env.game.observation``; deadwood comes from the meld kernels of ``okgin_env.game.melds``
(``min_deadwood_of_masks``, ``deadwood_after_discard_of_masks`` and
``deadwood_and_best_discard_of_masks``, the scalar cores of ``hand_deadwood`` and
``deadwood_after_discard``) on suit masks: ``ms[s]`` has bit ``r`` set when the card of rank
``r`` and suit ``s`` is held.
"""

from __future__ import annotations

import numpy as np
from numba import get_num_threads

from okgin_env.game import melds
from okgin_env.game.cards import CARD_POINTS, NUM_CARDS, NUM_RANKS, NUM_SUITS
from okgin_env.game.constants import (
    FULL_STOCK,
    MAX_KNOCK_LIMIT,
    NUM_DECISION_PHASES,
    NUM_KNOCK_LIMITS,
    PH_DISCARD,
    PH_DRAW,
    PH_FORCED_DRAW,
    PH_OFFER_DEALER,
    PH_OFFER_NONDEALER,
)
from okgin_env.game.jit import kernel
from okgin_env.game.observation import (
    DEADWOOD_SCALE,
    DISCARD_DEADWOOD,
    DISCARD_TOP,
    KNOCK_LIMIT,
    OPP_DECLINED,
    OPP_DISCARDED,
    OPP_TAKEN,
    OWN_HAND,
    PHASE,
    PILE_BURIED,
    SCORES,
    STOCK_SCALE,
    STOCK_SIZE,
)

__all__ = [  # the observation constants are re-exported for kernels that read fields as k.NAME
    "DEADWOOD_SCALE", "DISCARD_DEADWOOD", "DISCARD_TOP", "KNOCK_LIMIT", "OPP_DECLINED", "OPP_DISCARDED", "OPP_TAKEN",
    "OWN_HAND", "PHASE", "PILE_BURIED", "SCORES", "STOCK_SCALE", "STOCK_SIZE",
    "RUN_DEADWOOD", "RUN_BEST_DROP", "POINTS", "MAX_POINTS", "NOT_HELD", "NUM_PHASES", "NUM_KNOCK_LIMITS",
    "MAX_KNOCK_LIMIT", "FULL_STOCK", "OFFER_NONDEALER", "OFFER_DEALER", "FORCED_DRAW", "DRAW", "DISCARD",
    "NO_DECISION", "row_phase", "row_top", "row_knock_limit", "row_stock", "row_after_discard", "row_field_masks",
    "has", "add", "remove", "deadwood", "deadwood_now_and_with", "after_discard", "deadwood_and_best_discard",
    "after_discard_and_best", "row_chunks",
]

RUN_DEADWOOD = melds.RUN_DEADWOOD
RUN_BEST_DROP = melds.RUN_BEST_DROP
POINTS = CARD_POINTS.astype(np.int64)
MAX_POINTS = int(POINTS.max())  #: removing one card lowers deadwood by at most this
NOT_HELD = melds.DEADWOOD_NOT_HELD

NUM_PHASES = NUM_DECISION_PHASES  #: length of the observation's phase one-hot

# the phase a row_phase returns (okgin_env.game.constants' PH_* ints, as numba reads them)
OFFER_NONDEALER, OFFER_DEALER, FORCED_DRAW, DRAW, DISCARD = (PH_OFFER_NONDEALER, PH_OFFER_DEALER, PH_FORCED_DRAW,
                                                             PH_DRAW, PH_DISCARD)
NO_DECISION = -1  #: the observing player is not to move (its phase one-hot is all zeros)


@kernel(inline="always")
def row_phase(o: np.ndarray) -> int:
    """Phase of this decision, NO_DECISION when the observing player is not to move."""
    for k in range(NUM_PHASES):
        if o[PHASE + k] > 0.5:
            return k
    return NO_DECISION


@kernel(inline="always")
def row_top(o: np.ndarray) -> int:
    """Top card of the discard pile, -1 when empty."""
    for c in range(NUM_CARDS):
        if o[DISCARD_TOP + c] > 0.5:
            return c
    return -1


@kernel(inline="always")
def row_knock_limit(o: np.ndarray) -> int:
    for k in range(NUM_KNOCK_LIMITS):
        if o[KNOCK_LIMIT + k] > 0.5:
            return k
    return 0


@kernel(inline="always")
def row_stock(o: np.ndarray) -> int:
    """Cards left in the stock."""
    return int(o[STOCK_SIZE] * STOCK_SCALE + 0.5)


@kernel(inline="always")
def row_after_discard(o: np.ndarray, c: int) -> int:
    """Deadwood of the hand without card c (discard phase; NOT_HELD for cards not held)."""
    x = o[DISCARD_DEADWOOD + c]
    if x <= 0.0:
        return NOT_HELD
    return int(DEADWOOD_SCALE * (1.0 - x) + 0.5)


@kernel
def row_field_masks(o: np.ndarray, offset: int, ms: np.ndarray) -> None:
    """Suit masks of a 52-card field of the observation (own_hand, opp_taken, ...)."""
    for s in range(NUM_SUITS):
        m = 0
        for r in range(NUM_RANKS):
            if o[offset + s * NUM_RANKS + r] > 0.5:
                m |= 1 << r
        ms[s] = m


@kernel(inline="always")
def has(ms: np.ndarray, c: int) -> bool:
    return (ms[c // NUM_RANKS] >> (c % NUM_RANKS)) & 1 == 1


@kernel(inline="always")
def add(ms: np.ndarray, c: int) -> None:
    ms[c // NUM_RANKS] |= 1 << (c % NUM_RANKS)


@kernel(inline="always")
def remove(ms: np.ndarray, c: int) -> None:
    ms[c // NUM_RANKS] &= ~(1 << (c % NUM_RANKS))


@kernel
def deadwood(ms: np.ndarray, work: np.ndarray) -> int:
    """Minimal deadwood of the hand with suit masks ms (work: int64 scratch of size >= 8)."""
    return melds.min_deadwood_of_masks(ms, RUN_DEADWOOD, work[0:4], work[4:8])


@kernel
def deadwood_now_and_with(ms: np.ndarray, c: int, work: np.ndarray) -> tuple[int, int]:
    """(deadwood of the hand ms, deadwood with card c added); ms is left unchanged."""
    now = deadwood(ms, work)
    add(ms, c)
    with_c = deadwood(ms, work)
    remove(ms, c)
    return now, with_c


@kernel
def after_discard(ms: np.ndarray, out: np.ndarray, work: np.ndarray) -> None:
    """out[c] = minimal deadwood of the hand without card c for held c, NOT_HELD elsewhere."""
    melds.deadwood_after_discard_of_masks(ms, RUN_DEADWOOD, out, work[0:4], work[4:8])


@kernel
def deadwood_and_best_discard(ms: np.ndarray, work: np.ndarray) -> tuple[int, int]:
    """(deadwood of the hand ms, least deadwood after discarding its best card): one pass, no 52-card table."""
    return melds.deadwood_and_best_discard_of_masks(ms, RUN_DEADWOOD, RUN_BEST_DROP, work[0:4], work[4:8])


@kernel
def after_discard_and_best(ms: np.ndarray, after: np.ndarray, after_best: np.ndarray, work: np.ndarray) -> None:
    """For every held card c: ``deadwood_and_best_discard`` of the hand ms without c, into
    after[c] and after_best[c] (one pass; entries of cards not held are left as they were)."""
    melds.deadwood_after_discard_and_best_of_masks(ms, RUN_DEADWOOD, RUN_BEST_DROP, after, after_best, work[0:4],
                                                   work[4:8])


def row_chunks(n: int) -> int:
    """How many chunks a batch of n rows is split into for a kernel's ``prange``: four per numba
    thread (rows differ in cost: a discard search costs ~10 draws), each of at least 16 rows, and
    one for a single thread. Rows are independent, so results never depend on it. (Computed here,
    not in the kernel: numba cannot cache a kernel that asks for its thread count.)"""
    threads = get_num_threads()
    return 1 if threads <= 1 else max(1, min(4 * threads, n // 16))
