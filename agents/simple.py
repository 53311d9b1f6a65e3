"""okgin's ``simple`` baseline: a meld-and-knock heuristic in the spirit of the Gin Rummy research
"simple player", but not that player (``eaai_simple`` is Neller's SimpleGinRummyPlayer exactly)."""

from __future__ import annotations

import numpy as np

from okgin_env.game.cards import NUM_CARDS, NUM_RANKS
from okgin_env.game.jit import kernel

from . import choices as k
from .base import Bot, check_batch, check_rows


class SimpleAgent(Bot):
    """okgin's simple baseline. It is not Neller's SimpleGinRummyPlayer of the EAAI framework
    (that is ``eaai_simple``): it takes more cards (also to knock at once), throws the highest
    rank among equal deadwood and has no guard against repeating a {drawn, discarded} pair.

    * Draw: takes the top discard (also the upcard on the offer) only if the card is then
      melded in its best (least-deadwood) arrangement of the eleven cards, or taking it
      lets it knock this turn; otherwise draws from the stock (passes on the offer).
    * Discard: the legal card that leaves the least deadwood -- in practice its
      highest-ranked deadwood card: among equal deadwood the highest rank (K > Q > J);
      remaining ties (same rank, different suits) are broken uniformly at random by its
      seeded generator.
    * Knocks as soon as it may (with that card); never plays on for gin.
    """

    name = "simple"

    def __init__(self, seed: int | None = None) -> None:
        self.rng = np.random.default_rng(seed)

    def act(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        obs, mask = check_batch(observations, action_masks)
        out = np.empty(len(obs), np.int64)
        simple_actions(obs, mask, self.rng.random(len(obs)), out)
        return out

    def act_on_rows(self, observations: np.ndarray, action_masks: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """``act(observations[rows], action_masks[rows])`` (the same actions and draws), reading the
        rows in place instead of copying them out (``Bot.act_on_rows``)."""
        obs, mask = check_batch(observations, action_masks)
        rows = check_rows(rows, len(obs))
        out = np.empty(len(rows), np.int64)
        simple_rows(obs, mask, rows, self.rng.random(len(rows)), out)
        return out


@kernel
def simple_actions(obs, mask, noise, out):
    """The simple player's action for each row into ``out`` ((B,) int64): observations (B, OBS_SIZE)
    float32, legal masks (B, 107) bool, ``noise`` (B,) floats in [0, 1) that break discard ties
    among suits. A kernel, for callers that supply their own noise (``SimpleAgent.act`` draws it
    from its generator; the search's rollouts hash it from a seed)."""
    ms, work, after = k.draw_scratch()
    for b in range(obs.shape[0]):
        out[b] = _decide(obs[b], mask[b], noise[b], ms, work, after)


@kernel
def simple_rows(obs, mask, rows, noise, out):
    """``simple_actions`` of the rows ``rows`` ((R,) int64, in range) of ``obs`` and ``mask``, read in
    place: out[j] is the action of row rows[j], with noise[j]."""
    ms, work, after = k.draw_scratch()
    for j in range(rows.shape[0]):
        b = rows[j]
        out[j] = _decide(obs[b], mask[b], noise[j], ms, work, after)


@kernel(inline="always")
def _decide(o, m, u, ms, work, after):
    """One row's action (observation ``o``, mask ``m``, tie-breaking noise ``u``; the rest is scratch)."""
    ph = k.row_phase(o)
    if ph == k.DISCARD:
        return k.knock_or_discard(_discard(o, m, u), True, m)
    top, now, with_top = k.offered_top(o, ph, ms, work)
    take = False
    if top >= 0:
        take = with_top < now + k.POINTS[top]  # melded in the best arrangement
        if not take and with_top - k.MAX_POINTS <= k.row_knock_limit(o):  # a knock is not ruled out
            take = k.take_then_best(ms, top, after, work) <= k.row_knock_limit(o)
    return k.draw_action(take, m)


@kernel
def _discard(o, m, u):
    """Least deadwood, then highest rank, then a uniform choice among the tied suits (u in [0, 1)).

    Equal deadwood gives equal ``discard_deadwood`` values, so the floats are compared directly.
    """
    best_x, best_rank, ties = -1.0, -1, 0
    choice = -1
    for c in range(NUM_CARDS):
        if not m[c]:
            continue
        x, rank = o[k.DISCARD_DEADWOOD + c], c % NUM_RANKS
        if x > best_x or (x == best_x and rank > best_rank):
            best_x, best_rank, ties, choice = x, rank, 1, c
        elif x == best_x and rank == best_rank:
            ties += 1
    if ties > 1:  # pick the j-th tied card
        j = int(u * ties)
        for c in range(choice, NUM_CARDS, NUM_RANKS):
            if m[c] and o[k.DISCARD_DEADWOOD + c] == best_x:
                if j == 0:
                    return c
                j -= 1
    return choice
