"""Numba helpers the bots share to turn a decision into an action (``draw_action``,
``knock_or_discard``, ``take_then_best``), plus the row-level readers of an observation and the
deadwood kernels on suit masks of ``okgin_env.row_kernels``, re-exported here so that a bot's
kernel reads everything as ``k.NAME`` (they live in ``okgin_env`` because the learner features of
``okgin_env.features`` use them too, and the env never imports this package).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from okgin_env.actions import DRAW_STOCK, KNOCK, PASS, TAKE_DISCARD
from okgin_env.cards import NUM_CARDS
from okgin_env.row_kernels import *  # noqa: F403 - the shared row readers, as k.NAME
from okgin_env.row_kernels import NOT_HELD, add, after_discard, remove


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
