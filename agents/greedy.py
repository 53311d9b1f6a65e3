"""The greedy baseline: lowest deadwood now, nothing else."""

from __future__ import annotations

import numpy as np

from okgin_env.game.cards import NUM_CARDS
from okgin_env.game.jit import kernel

from . import choices as k
from .base import Bot, check_batch


class GreedyAgent(Bot):
    """Greedy play on deadwood alone.

    * Draw: takes the top discard (also the upcard on the offer) if, after taking it and
      discarding its best other card, its deadwood is lower than now; otherwise draws
      from the stock (passes on the offer).
    * Discard: the legal card that leaves the least deadwood; ties go to the card worth
      the most points, then to the highest card index.
    * Knocks as soon as it may (with that card).

    Deterministic.
    """

    name = "greedy"

    def __init__(self, seed: int | None = None) -> None:
        """``seed`` is accepted like every baseline's; greedy play draws no random numbers."""

    def act(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        obs, mask = check_batch(observations, action_masks)
        out = np.empty(len(obs), np.int64)
        _greedy_kernel(obs, mask, out)
        return out


@kernel
def _greedy_kernel(obs, mask, out):
    ms, work, after = k.draw_scratch()
    for b in range(obs.shape[0]):
        o, m = obs[b], mask[b]
        ph = k.row_phase(o)
        if ph == k.DISCARD:
            best, card = -1.0, -1
            for c in range(NUM_CARDS):
                if m[c]:
                    # least deadwood (highest discard_deadwood), then most points; later cards win ties
                    x = o[k.DISCARD_DEADWOOD + c] * 1000.0 + k.POINTS[c]
                    if x >= best:
                        best, card = x, c
            out[b] = k.knock_or_discard(card, True, m)
            continue
        top, now, with_top = k.offered_top(o, ph, ms, work)
        take = False
        if top >= 0 and with_top - k.MAX_POINTS < now:  # else no discard can bring it below now
            take = k.take_then_best(ms, top, after, work) < now
        out[b] = k.draw_action(take, m)
