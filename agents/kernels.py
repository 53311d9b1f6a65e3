"""Row-level numba helpers the bots share: read one observation, deadwood of suit masks.

A bot's kernel loops over the batch and calls these on one row at a time, so a whole batch
is decided in one compiled call. Fields are read through the offset constants of ``okgin_env.observation`` (the layout of
``okgin_env.observation``); deadwood comes from the meld kernels of ``okgin_env.melds``
(``min_deadwood_of_masks``, ``deadwood_after_discard_of_masks`` and ``deadwood_and_best_discard_of_masks``, the
scalar cores of ``hand_deadwood`` and ``deadwood_after_discard``) on suit masks: ``ms[s]`` has bit ``r`` set when the card of rank
``r`` and suit ``s`` is held.
"""

from __future__ import annotations

import numpy as np
from numba import get_num_threads, njit

from okgin_env import melds
from okgin_env.actions import DRAW_STOCK, KNOCK, PASS, TAKE_DISCARD
from okgin_env.cards import CARD_POINTS, NUM_CARDS, NUM_RANKS, NUM_SUITS
from okgin_env.core import Phase
from okgin_env.observation import (DEADWOOD_SCALE, DISCARD_DEADWOOD, DISCARD_TOP, KNOCK_LIMIT, OBS_FIELDS, OPP_DECLINED,
                                   OPP_DISCARDED, OPP_TAKEN, OWN_HAND, PHASE, PILE_BURIED, SCORES, STOCK_SCALE,
                                   STOCK_SIZE)

RUN_DEADWOOD = melds.RUN_DEADWOOD
RUN_BEST_DROP = melds.RUN_BEST_DROP
POINTS = CARD_POINTS.astype(np.int64)
MAX_POINTS = int(POINTS.max())  #: removing one card lowers deadwood by at most this
NOT_HELD = melds.DEADWOOD_NOT_HELD

NUM_PHASES = OBS_FIELDS["phase"].stop - PHASE
NUM_KNOCK_LIMITS = OBS_FIELDS["knock_limit"].stop - KNOCK_LIMIT
MAX_KNOCK_LIMIT = NUM_KNOCK_LIMITS - 1  #: 10
FULL_STOCK = int(STOCK_SCALE)  #: 31 cards in the stock after the deal

OFFER_NONDEALER, OFFER_DEALER, FORCED_DRAW, DRAW, DISCARD = (int(p) for p in (
    Phase.OFFER_NONDEALER, Phase.OFFER_DEALER, Phase.FORCED_DRAW, Phase.DRAW, Phase.DISCARD))
NO_DECISION = -1


@njit(cache=True, inline="always")
def row_phase(o: np.ndarray) -> int:
    """Phase of this decision, NO_DECISION when the observing player is not to move."""
    for k in range(NUM_PHASES):
        if o[PHASE + k] > 0.5:
            return k
    return NO_DECISION


@njit(cache=True, inline="always")
def row_top(o: np.ndarray) -> int:
    """Top card of the discard pile, -1 when empty."""
    for c in range(NUM_CARDS):
        if o[DISCARD_TOP + c] > 0.5:
            return c
    return -1


@njit(cache=True, inline="always")
def row_knock_limit(o: np.ndarray) -> int:
    for k in range(NUM_KNOCK_LIMITS):
        if o[KNOCK_LIMIT + k] > 0.5:
            return k
    return 0


@njit(cache=True, inline="always")
def row_stock(o: np.ndarray) -> int:
    """Cards left in the stock."""
    return int(o[STOCK_SIZE] * STOCK_SCALE + 0.5)


@njit(cache=True, inline="always")
def row_after_discard(o: np.ndarray, c: int) -> int:
    """Deadwood of the hand without card c (discard phase; NOT_HELD for cards not held)."""
    x = o[DISCARD_DEADWOOD + c]
    if x <= 0.0:
        return NOT_HELD
    return int(DEADWOOD_SCALE * (1.0 - x) + 0.5)


@njit(cache=True)
def row_field_masks(o: np.ndarray, offset: int, ms: np.ndarray) -> None:
    """Suit masks of a 52-card field of the observation (own_hand, opp_taken, ...)."""
    for s in range(NUM_SUITS):
        m = 0
        for r in range(NUM_RANKS):
            if o[offset + s * NUM_RANKS + r] > 0.5:
                m |= 1 << r
        ms[s] = m


@njit(cache=True, inline="always")
def has(ms: np.ndarray, c: int) -> bool:
    return (ms[c // NUM_RANKS] >> (c % NUM_RANKS)) & 1 == 1


@njit(cache=True, inline="always")
def add(ms: np.ndarray, c: int) -> None:
    ms[c // NUM_RANKS] |= 1 << (c % NUM_RANKS)


@njit(cache=True, inline="always")
def remove(ms: np.ndarray, c: int) -> None:
    ms[c // NUM_RANKS] &= ~(1 << (c % NUM_RANKS))


@njit(cache=True)
def deadwood(ms: np.ndarray, work: np.ndarray) -> int:
    """Minimal deadwood of the hand with suit masks ms (work: int64 scratch of size >= 8)."""
    return melds.min_deadwood_of_masks(ms, RUN_DEADWOOD, work[0:4], work[4:8])


@njit(cache=True)
def deadwood_now_and_with(ms: np.ndarray, c: int, work: np.ndarray) -> tuple[int, int]:
    """(deadwood of the hand ms, deadwood with card c added); ms is left unchanged."""
    now = deadwood(ms, work)
    add(ms, c)
    with_c = deadwood(ms, work)
    remove(ms, c)
    return now, with_c


@njit(cache=True)
def after_discard(ms: np.ndarray, out: np.ndarray, work: np.ndarray) -> None:
    """out[c] = minimal deadwood of the hand without card c for held c, NOT_HELD elsewhere."""
    melds.deadwood_after_discard_of_masks(ms, RUN_DEADWOOD, out, work[0:4], work[4:8])


@njit(cache=True)
def deadwood_and_best_discard(ms: np.ndarray, work: np.ndarray) -> tuple[int, int]:
    """(deadwood of the hand ms, least deadwood after discarding its best card): one pass, no 52-card table."""
    return melds.deadwood_and_best_discard_of_masks(ms, RUN_DEADWOOD, RUN_BEST_DROP, work[0:4], work[4:8])


@njit(cache=True)
def after_discard_and_best(ms: np.ndarray, after: np.ndarray, after_best: np.ndarray, work: np.ndarray) -> None:
    """For every held card c: ``deadwood_and_best_discard`` of the hand ms without c, into
    after[c] and after_best[c] (one pass; entries of cards not held are left as they were)."""
    melds.deadwood_after_discard_and_best_of_masks(ms, RUN_DEADWOOD, RUN_BEST_DROP, after, after_best, work[0:4],
                                                   work[4:8])


@njit(cache=True)
def draw_action(take: bool, mask: np.ndarray) -> int:
    """Take the top discard if ``take`` (and legal), else pass on an offer or draw the stock."""
    if take and mask[TAKE_DISCARD]:
        return TAKE_DISCARD
    if mask[PASS]:
        return PASS
    return DRAW_STOCK


@njit(cache=True)
def knock_or_discard(card: int, knock: bool, mask: np.ndarray) -> int:
    if knock and mask[KNOCK + card]:
        return KNOCK + card
    return card


@njit(cache=True)
def take_then_best(ms: np.ndarray, top: int, after: np.ndarray, work: np.ndarray) -> int:
    """Least deadwood after taking ``top`` and discarding another card (ms is left unchanged)."""
    add(ms, top)
    after_discard(ms, after, work)
    remove(ms, top)
    best = NOT_HELD
    for c in range(NUM_CARDS):
        if c != top and after[c] < best:
            best = after[c]
    return best


def row_chunks(n: int) -> int:
    """How many chunks a batch of n rows is split into for a kernel's ``prange``: four per numba
    thread (rows differ in cost: a discard search costs ~10 draws), each of at least 16 rows, and
    one for a single thread. Rows are independent, so results never depend on it. (Computed here,
    not in the kernel: numba cannot cache a kernel that asks for its thread count.)"""
    threads = get_num_threads()
    return 1 if threads <= 1 else max(1, min(4 * threads, n // 16))
