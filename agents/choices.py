"""Numba helpers the bots share to turn a decision into an action (``draw_action``,
``knock_or_discard``, ``take_then_best``), plus the row-level readers of an observation and the
deadwood kernels on suit masks of ``okgin_env.features.rows``, re-exported here so that a bot's
kernel reads everything as ``k.NAME`` (they live in ``okgin_env`` because the learner features of
``okgin_env.features.learner`` use them too, and the env never imports this package).
"""

from __future__ import annotations

import numpy as np

from okgin_env.features.rows import *  # noqa: F403 - the shared row readers, as k.NAME
from okgin_env.features.rows import NOT_HELD, add, after_discard, remove
from okgin_env.game.actions import DRAW_STOCK, KNOCK, PASS, TAKE_DISCARD
from okgin_env.game.cards import NUM_CARDS
from okgin_env.game.jit import kernel


@kernel
def draw_action(take: bool, mask: np.ndarray) -> int:
    """Take the top discard if ``take`` (and legal), else pass on an offer or draw the stock."""
    if take and mask[TAKE_DISCARD]:
        return TAKE_DISCARD
    if mask[PASS]:
        return PASS
    return DRAW_STOCK


@kernel
def knock_or_discard(card: int, knock: bool, mask: np.ndarray) -> int:
    if knock and mask[KNOCK + card]:
        return KNOCK + card
    return card


@kernel
def draw_scratch() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Scratch of a bot's draw decision: (suit masks (4,), deadwood work (8,), per-card deadwoods (52,))."""
    return np.empty(4, np.int64), np.empty(8, np.int64), np.empty(NUM_CARDS, np.int64)


@kernel
def offered_top(o: np.ndarray, ph: int, ms: np.ndarray, work: np.ndarray) -> tuple[int, int, int]:
    """(top, deadwood now, deadwood with top) where row ``o`` in phase ``ph`` may take the top discard
    (the offer or the draw), the hand's suit masks left in ``ms``; top is -1 elsewhere."""
    top = row_top(o)
    if top < 0 or not (ph == OFFER_NONDEALER or ph == OFFER_DEALER or ph == DRAW):
        return -1, 0, 0
    row_field_masks(o, OWN_HAND, ms)
    now, with_top = deadwood_now_and_with(ms, top, work)
    return top, now, with_top


@kernel
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
