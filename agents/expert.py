"""The expert bot: card counting, outs, reading the opponent, and holding for gin.

It plays from the observation alone, as a good human would:

* **What is live.** A card is *unseen* if it is not in its hand, not in the discard pile and
  not known to be in the opponent's hand (cards the opponent took from the pile). Only
  unseen cards can come from the stock, so a meld whose missing cards are dead is worth
  nothing.
* **Reading the opponent.** For every unseen card it estimates the chance that the opponent
  holds it: the opponent's unknown cards spread over the unseen ones, raised for the
  partners of cards the opponent took from the pile (it took them to meld) and lowered for
  the partners of cards it discarded or passed on (those did not meld).
* **Outs.** A 10-card hand is valued by its deadwood now, minus the deadwood the next
  stock card is expected to meld (weighted more for low knock limits, where only melds
  count, and less as the stock runs down), minus the chances that the next draw lets it
  knock or go gin. The next card is drawn from the unseen cards, each weighted by the
  chance that it is in the stock rather than in the opponent's hand.
* **Discard.** The legal card whose remaining hand is worth most, plus the danger of the
  card: the chance that the opponent holds two cards that meld with it (a card of a rank
  the opponent threw or passed on, or a card it threw or passed on itself, is safer).
* **Draw.** Takes the top discard when that leaves less deadwood than the expected stock
  draw by a margin (a card that completes a meld almost always does), or when taking it
  lets it knock now; otherwise draws from the stock (passes on the offer).
* **Knock.** Always on gin. Otherwise it knocks as soon as it may, unless the next draw
  would give gin with a fair chance and the stock is not yet low: then it plays on for gin
  (25 bonus, no lay-offs, and an opponent who knocks into a low hand gets undercut). Close
  to the wall it always knocks. In game episodes, when a win of this hand would almost
  surely end the game, it knocks at once instead of playing on for gin.

Measured against ``simple`` (see ``evaluate.py``): delaying knocks with more deadwood late
in the hand, and score-dependent caution or gambling in game episodes, did not pay, so the
policy does not do them. Decisions for a whole batch are made in one numba kernel
(``_expert_kernel``), row by row (rows split over numba's threads), on the engine's deadwood kernels. Its
reading of the table and its outs are the kernels of ``okgin_env.features.learner`` (``read_table``, ``danger``,
``outs``, ``discard_outs``), which also compute the learners' ``outs`` features. Deterministic.
"""

from __future__ import annotations

from dataclasses import astuple, dataclass, fields
from typing import NamedTuple

import numpy as np
from numba import prange

from okgin_env.features.learner import (
    EXP_DEADWOOD,
    EXP_MELDED,
    NOW,
    NUM_OUTS_FIELDS,
    P_GIN,
    P_KNOCK,
    TableView,
    danger,
    discard_outs,
    outs,
    read_table,
)
from okgin_env.game.cards import NUM_CARDS
from okgin_env.game.jit import kernel

from . import choices as k
from .base import Bot, check_batch


@dataclass(frozen=True)
class ExpertParams:
    """The expert's weights (tuned against ``simple`` on duplicate deals); units are deadwood points."""

    meld_weight: float = 4.5
    """Value of each point of deadwood the next stock card is expected to meld."""
    meld_weight_low_limit: float = 4.0
    """Extra meld weight at knock limit 0, scaled down to none at limit 10."""
    meld_weight_late: float = 0.3
    """Share of the meld weight left when the stock is empty (linear in the stock size)."""
    knock_chance_value: float = 6.0
    """Value of the chance that the next draw lets it knock."""
    gin_chance_value: float = 10.0
    """Extra value of the chance that the next draw gives gin."""
    danger_cost: float = 7.0
    """Cost of discarding a card the opponent surely melds (scaled by the estimated chance)."""
    signal_factor: float = 0.3
    """Danger factor for a card, or for sets of a rank, that the opponent threw or passed on."""
    taken_partner_belief: float = 1.0
    """How strongly the partners of a card the opponent took are believed held (0 = not at all)."""
    thrown_partner_doubt: float = 0.15
    """How much each thrown or passed card lowers the belief that its partners are held."""
    take_margin: float = 1.0
    """Take the top discard only if it leaves this much less deadwood than the expected stock draw."""
    prune: float = 12.0
    """Only discards leaving at most this much more deadwood than the best are weighed."""
    hold_gin_chance: float = 0.1
    """Play on for gin instead of knocking when the next draw gives gin with at least this chance ..."""
    hold_stock: float = 12.0
    """... and more than this many cards are left in the stock."""
    wall_stock: float = 4.0
    """With this many stock cards or fewer, knock whenever possible."""
    game_knock_now: float = 0.9
    """Game episodes: with this share of the target score, knock at once (no gin hold)."""

    def to_array(self) -> np.ndarray:
        return np.array(astuple(self), dtype=np.float64)


_IDX = {f.name: i for i, f in enumerate(fields(ExpertParams))}
MELD_W, MELD_LOW, MELD_LATE = _IDX["meld_weight"], _IDX["meld_weight_low_limit"], _IDX["meld_weight_late"]
KNOCK_V, GIN_V, DANGER = _IDX["knock_chance_value"], _IDX["gin_chance_value"], _IDX["danger_cost"]
SIGNAL, TAKEN_BELIEF, THROWN_DOUBT = _IDX["signal_factor"], _IDX["taken_partner_belief"], _IDX["thrown_partner_doubt"]
TAKE_MARGIN, PRUNE = _IDX["take_margin"], _IDX["prune"]
HOLD_CHANCE, HOLD_STOCK, WALL_STOCK = _IDX["hold_gin_chance"], _IDX["hold_stock"], _IDX["wall_stock"]
GAME_KNOCK_NOW = _IDX["game_knock_now"]


class ExpertAgent(Bot):
    """A strong heuristic player (see the module docstring for its policy). Deterministic."""

    name = "expert"

    def __init__(self, seed: int | None = None, params: ExpertParams | None = None) -> None:
        self.params = ExpertParams() if params is None else params
        self._p = self.params.to_array()

    def act(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        obs, mask = check_batch(observations, action_masks)
        out = np.empty(len(obs), np.int64)
        chunks = k.row_chunks(len(obs))
        if chunks == 1:  # a small batch (an env's one row): starting numba's threads would cost more than the rows
            _expert_rows(obs, mask, self._p, out, 0, len(obs))
        else:
            _expert_kernel(obs, mask, self._p, out, chunks)
        return out


# ---------------------------------------------------------- what it knows, its outs
# The table reading (read_table, danger) and the outs of a hand (outs, discard_outs) live in
# okgin_env.features.learner: the learner features are the same reading, and the env never imports agents.

@kernel
def _meld_weight(limit, stock, p):
    """How much a point of deadwood that the next draws may meld is worth now."""
    return (p[MELD_W] + p[MELD_LOW] * (k.MAX_KNOCK_LIMIT - limit) / k.MAX_KNOCK_LIMIT) * (
        p[MELD_LATE] + (1.0 - p[MELD_LATE]) * min(stock, k.FULL_STOCK) / k.FULL_STOCK)


@kernel
def _hand_value(res, meld_w, p):
    """Cost of keeping a 10-card hand whose ``outs`` (okgin_env.features.learner) are res (lower is better)."""
    return res[NOW] - meld_w * res[EXP_MELDED] - p[KNOCK_V] * res[P_KNOCK] - p[GIN_V] * res[P_GIN]


# ------------------------------------------------------------------ decisions

@kernel(parallel=True)
def _expert_kernel(obs, mask, p, out, chunks):
    """Rows in ``chunks`` parallel chunks (numba threads; ``kernels.row_chunks``), each on its own scratch."""
    n = obs.shape[0]
    for c in prange(chunks):
        _expert_rows(obs, mask, p, out, c * n // chunks, (c + 1) * n // chunks)


class Scratch(NamedTuple):
    """One thread's work arrays, allocated once per chunk of rows (``_expert_rows``)."""

    after: np.ndarray  #: (52,) int64
    work: np.ndarray  #: (8,) int64
    res: np.ndarray  #: (NUM_OUTS_FIELDS,) float64: the outs of one hand
    table: np.ndarray  #: (NUM_OUTS_FIELDS, 52) float64: the outs after each discard
    cards: np.ndarray  #: (5, 52) int64


class Reading(NamedTuple):
    """What the expert reads off one row's table before it decides."""

    hand: np.ndarray  #: (4,) int64 suit masks of its own hand (``kernels.row_field_masks``)
    weight: np.ndarray  #: (52,) float64 chance that each unseen card is in the stock
    opp: np.ndarray  #: (52,) float64 chance that the opponent holds each card
    signal: np.ndarray  #: (52,) bool: cards whose rank or neighbours the opponent threw or passed on
    limit: int  #: the hand's knock limit
    stock: int  #: cards left in the stock


@kernel
def _expert_rows(obs, mask, p, out, lo, hi):
    unseen = np.empty(NUM_CARDS, np.bool_)
    signal = np.empty(NUM_CARDS, np.bool_)
    opp = np.empty(NUM_CARDS, np.float64)
    belief = np.empty(NUM_CARDS, np.float64)
    weight = np.empty(NUM_CARDS, np.float64)
    pairs = np.empty((6, 2), np.int64)  # at most 3 set pairs + 3 run pairs per card
    ms = np.empty(4, np.int64)
    buf = Scratch(np.empty(NUM_CARDS, np.int64), np.empty(8, np.int64), np.empty(NUM_OUTS_FIELDS, np.float64),
                  np.empty((NUM_OUTS_FIELDS, NUM_CARDS), np.float64), np.empty((5, NUM_CARDS), np.int64))
    for b in range(lo, hi):
        o, m = obs[b], mask[b]
        ph = k.row_phase(o)
        if not (ph == k.DISCARD or ph == k.OFFER_NONDEALER or ph == k.OFFER_DEALER or ph == k.DRAW):
            out[b] = k.draw_action(False, m)  # the forced draw
            continue
        read_table(o, p[TAKEN_BELIEF], p[THROWN_DOUBT], TableView(unseen, signal, opp, pairs, belief, weight))
        k.row_field_masks(o, k.OWN_HAND, ms)
        seen = Reading(ms, weight, opp, signal, k.row_knock_limit(o), k.row_stock(o))
        if ph == k.DISCARD:
            out[b] = _discard(o, m, seen, p, buf)
        else:
            out[b] = k.draw_action(_take(o, seen, p, buf), m)


@kernel
def _knock_now(o, stock, p):
    """Knock at once rather than play on for gin: the wall is near, or this hand likely ends the game."""
    if stock <= p[WALL_STOCK] or stock <= p[HOLD_STOCK]:
        return True
    target = o[k.SCORES + 2]  # > 0 only in game episodes (scores are shares of the target)
    return target > 0 and o[k.SCORES] >= p[GAME_KNOCK_NOW]


@kernel
def _discard(o, m, seen, p, buf):
    """The discard (or knock) of a row in the discard phase: ``seen`` its ``Reading``, ``buf`` the ``Scratch``."""
    best_dw, knock_card = k.NOT_HELD, -1
    for c in range(NUM_CARDS):
        if m[c] and k.row_after_discard(o, c) < best_dw:
            best_dw = k.row_after_discard(o, c)
            knock_card = c if m[k.KNOCK + c] else -1
    if knock_card >= 0 and (best_dw == 0 or _knock_now(o, seen.stock, p)):
        return k.KNOCK + knock_card
    table = buf.table
    discard_outs(seen.hand, seen.weight, seen.limit, buf.cards, table, buf.work)
    if knock_card >= 0 and table[P_GIN, knock_card] < p[HOLD_CHANCE]:
        return k.KNOCK + knock_card
    meld_w = _meld_weight(seen.limit, seen.stock, p)
    best_v, card = 1e30, -1
    for c in range(NUM_CARDS):
        if not m[c] or k.row_after_discard(o, c) > best_dw + p[PRUNE]:
            continue
        v = _hand_value(table[:, c], meld_w, p)
        v += p[DANGER] * danger(c, seen.opp, seen.signal, p[SIGNAL])
        if v < best_v:
            best_v, card = v, c
    return card


@kernel
def _take(o, seen, p, buf):
    """Whether to take the top discard rather than draw from the stock (or pass)."""
    top = k.row_top(o)
    if top < 0:
        return False
    dw_take = k.take_then_best(seen.hand, top, buf.after, buf.work)
    if dw_take <= seen.limit:  # it can knock (or go gin) at once
        return True
    outs(seen.hand, seen.weight, seen.limit, buf.work, buf.res)
    return dw_take + p[TAKE_MARGIN] < buf.res[EXP_DEADWOOD]
