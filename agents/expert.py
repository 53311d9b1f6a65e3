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
(``_expert_kernel``), row by row (rows split over numba's threads), on the engine's deadwood kernels. Deterministic.
"""

from __future__ import annotations

from dataclasses import astuple, dataclass, fields

import numpy as np
from numba import njit, prange

from okgin_env.cards import HAND_SIZE, NUM_CARDS, NUM_RANKS, NUM_SUITS

from . import kernels as k
from .base import Agent, check_batch


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


class ExpertAgent(Agent):
    """A strong heuristic player (see the module docstring for its policy). Deterministic."""

    name = "expert"

    def __init__(self, seed: int | None = None, params: ExpertParams | None = None) -> None:
        self.params = ExpertParams() if params is None else params
        self._p = self.params.to_array()

    def act(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        obs, mask = check_batch(observations, action_masks)
        out = np.empty(len(obs), np.int64)
        _expert_kernel(obs, mask, self._p, out, k.row_chunks(len(obs)))
        return out


# ------------------------------------------------------------------ what it knows

@njit(cache=True)
def _partner_pairs(x, pairs):
    """Fill pairs (6, 2) with the card pairs that meld with x (three sets, up to three runs); return how many."""
    r, s = x % NUM_RANKS, x // NUM_RANKS
    others = np.empty(3, np.int64)
    j = 0
    for t in range(NUM_SUITS):
        if t != s:
            others[j] = t * NUM_RANKS + r
            j += 1
    n = 0
    for a in range(3):
        for b in range(a + 1, 3):
            pairs[n, 0], pairs[n, 1] = others[a], others[b]
            n += 1
    for lo in range(max(0, r - 2), min(r, NUM_RANKS - 3) + 1):  # runs of three lo..lo+2 through r
        q = 0
        for rr in range(lo, lo + 3):
            if rr != r:
                pairs[n, q] = s * NUM_RANKS + rr
                q += 1
        n += 1
    return n


@njit(cache=True, inline="always")
def _possible(c, unseen, opp):
    """Whether the opponent may hold c (unseen, or known to be in its hand)."""
    return unseen[c] or opp[c] == 1.0


@njit(cache=True)
def _read_table(o, p, unseen, signal, opp, pairs, belief, weight):
    """What one observation tells about the cards.

    unseen[c]: c may still come from the stock or be in the opponent's hand; signal[c]: the
    opponent threw or passed on c; opp[c]: estimated chance that the opponent holds c;
    weight[c]: chance that c is the next stock card, up to a constant.
    """
    n_unseen, n_known = 0, 0
    for c in range(NUM_CARDS):
        dead = o[k.DISCARD_TOP + c] > 0.5 or o[k.PILE_BURIED + c] > 0.5
        taken = o[k.OPP_TAKEN + c] > 0.5
        signal[c] = o[k.OPP_DISCARDED + c] > 0.5 or o[k.OPP_DECLINED + c] > 0.5
        unseen[c] = not (o[k.OWN_HAND + c] > 0.5 or dead or taken)
        if unseen[c]:
            n_unseen += 1
        if taken:
            n_known += 1
        opp[c] = 1.0 if taken else 0.0
        belief[c] = 0.0
    base = max(0.0, HAND_SIZE - n_known) / max(n_unseen, 1)
    for x in range(NUM_CARDS):
        n = _partner_pairs(x, pairs)
        if opp[x] == 1.0:  # it took x to meld it: one live pair of partners is in its hand
            live = 0
            for j in range(n):
                live += _possible(pairs[j, 0], unseen, opp) and _possible(pairs[j, 1], unseen, opp)
            for j in range(n):
                a, b = pairs[j, 0], pairs[j, 1]
                if _possible(a, unseen, opp) and _possible(b, unseen, opp):
                    belief[a] += 1.0 / live
                    belief[b] += 1.0 / live
        elif signal[x]:  # x was deadwood to it: its partners are less likely held
            for j in range(n):
                belief[pairs[j, 0]] -= p[THROWN_DOUBT]
                belief[pairs[j, 1]] -= p[THROWN_DOUBT]
    for c in range(NUM_CARDS):
        if unseen[c]:
            if belief[c] > 0:
                opp[c] = 1.0 - (1.0 - base) * (1.0 - min(1.0, belief[c] * p[TAKEN_BELIEF]))
            else:  # never quite rule a card out
                opp[c] = base * max(0.1, 1.0 + belief[c])
        weight[c] = 1.0 - opp[c] if unseen[c] else 0.0


@njit(cache=True)
def _danger(c, opp, signal, signal_factor):
    """Chance-like score that the opponent holds two cards melding with c."""
    r, s = c % NUM_RANKS, c // NUM_RANKS
    p_set = 0.0  # two of the other three cards of the rank
    rank_signal = False
    for s1 in range(NUM_SUITS):
        c1 = s1 * NUM_RANKS + r
        if c1 != c and signal[c1]:
            rank_signal = True
        for s2 in range(s1 + 1, NUM_SUITS):
            c2 = s2 * NUM_RANKS + r
            if c1 != c and c2 != c:
                p_set += opp[c1] * opp[c2]
    if rank_signal:
        p_set *= signal_factor
    p_run = 0.0  # (r-2, r-1), (r-1, r+1), (r+1, r+2) of the suit
    base = s * NUM_RANKS
    if r >= 2:
        p_run += opp[base + r - 2] * opp[base + r - 1]
    if 1 <= r <= NUM_RANKS - 2:
        p_run += opp[base + r - 1] * opp[base + r + 1]
    if r <= NUM_RANKS - 3:
        p_run += opp[base + r + 1] * opp[base + r + 2]
    d = min(1.0, p_set + p_run)
    return d * signal_factor if signal[c] else d


# ---------------------------------------------------------------------- outs

@njit(cache=True, inline="always")
def _can_meld(ms, u):
    """Whether u could join a meld with the cards of ms: two more of its rank, or two suit neighbours
    making three in a row with it. Otherwise u is deadwood in every arrangement of ms + u (and of ms
    minus any card, plus u), so keeping u adds exactly its points: no meld search is needed."""
    r, s = u % NUM_RANKS, u // NUM_RANKS
    same_rank = 0
    for t in range(NUM_SUITS):
        if t != s:
            same_rank += (ms[t] >> r) & 1
    if same_rank >= 2:
        return True
    m = ms[s]
    below2 = r >= 2 and (m >> (r - 2)) & 3 == 3
    around = 1 <= r <= NUM_RANKS - 2 and (m >> (r - 1)) & 5 == 5
    above2 = r <= NUM_RANKS - 3 and (m >> (r + 1)) & 3 == 3
    return below2 or around or above2


NOW, EXP_DEADWOOD, EXP_MELDED, P_KNOCK, P_GIN, NUM_OUTS_FIELDS = range(6)  #: fields of _outs' result


@njit(cache=True)
def _outs(ms, weight, limit, work, res):
    """The next card u for the 10-card hand ms, weighted by ``weight`` (chance it is the next stock card):
    res <- deadwood now, expected deadwood after drawing u and keeping the best ten, expected deadwood u melds
    (deadwood of ms + u below "u is deadwood"), chance of being able to knock, chance of gin.
    """
    now, best9 = k.deadwood_and_best_discard(ms, work)  # best9: least deadwood of nine of the ten cards
    exp_dw, melded, p_knock, p_gin, total = 0.0, 0.0, 0.0, 0.0, 0.0
    for u in range(NUM_CARDS):
        w = weight[u]
        if w <= 0.0:
            continue
        total += w
        if _can_meld(ms, u):
            k.add(ms, u)
            with_u, d = k.deadwood_and_best_discard(ms, work)
            k.remove(ms, u)
            melded += w * (now + k.POINTS[u] - with_u)
        else:  # u melds with nothing: it is kept only in place of the worst card
            d = min(now, best9 + k.POINTS[u])
        exp_dw += w * d
        if d <= limit:
            p_knock += w
        if d == 0:
            p_gin += w
    total = max(total, 1e-9)
    res[NOW] = now
    res[EXP_DEADWOOD] = exp_dw / total
    res[EXP_MELDED] = melded / total
    res[P_KNOCK] = p_knock / total
    res[P_GIN] = p_gin / total


@njit(cache=True)
def _discard_outs(ms, weight, limit, scratch, table, work):
    """``_outs`` of the 11-card hand ms after each of its discards c: table[f, c] = field f of
    ``_outs(ms - c)`` (held c only). The same numbers, summed in the same order, from one meld
    search per drawn card u for all eleven discards rather than eleven: the deadwood of ms - c + u
    is that of ms + u without c, and keeping its best ten drops one more card. (Where u melds with
    ms but not with ms - c, the search gives what ``_outs`` computes without one: u's points.)
    ``scratch``: (5, 52) int64.
    """
    now, best9, with_u, drawn, held = scratch[0], scratch[1], scratch[2], scratch[3], scratch[4]
    k.after_discard_and_best(ms, now, best9, work)
    n = 0
    for c in range(NUM_CARDS):
        if k.has(ms, c):
            held[n] = c
            n += 1
            for f in range(NUM_OUTS_FIELDS):
                table[f, c] = 0.0
    total = 0.0
    for u in range(NUM_CARDS):
        w = weight[u]
        if w <= 0.0:
            continue
        total += w
        melds_u = _can_meld(ms, u)
        if melds_u:  # with_u[c], drawn[c]: deadwood of ms - c + u, and of its best ten
            k.add(ms, u)
            k.after_discard_and_best(ms, with_u, drawn, work)
            k.remove(ms, u)
        for j in range(n):
            c = held[j]
            if melds_u:
                d = drawn[c]
                table[EXP_MELDED, c] += w * (now[c] + k.POINTS[u] - with_u[c])
            else:  # u melds with nothing: it is kept only in place of the worst card
                d = min(now[c], best9[c] + k.POINTS[u])
            table[EXP_DEADWOOD, c] += w * d
            if d <= limit:
                table[P_KNOCK, c] += w
            if d == 0:
                table[P_GIN, c] += w
    total = max(total, 1e-9)
    for j in range(n):
        c = held[j]
        table[NOW, c] = now[c]
        table[EXP_DEADWOOD, c] /= total
        table[EXP_MELDED, c] /= total
        table[P_KNOCK, c] /= total
        table[P_GIN, c] /= total


@njit(cache=True)
def _meld_weight(limit, stock, p):
    """How much a point of deadwood that the next draws may meld is worth now."""
    return (p[MELD_W] + p[MELD_LOW] * (k.MAX_KNOCK_LIMIT - limit) / k.MAX_KNOCK_LIMIT) * (
        p[MELD_LATE] + (1.0 - p[MELD_LATE]) * min(stock, k.FULL_STOCK) / k.FULL_STOCK)


@njit(cache=True)
def _hand_value(res, meld_w, p):
    """Cost of keeping a 10-card hand whose ``_outs`` are res (lower is better)."""
    return res[NOW] - meld_w * res[EXP_MELDED] - p[KNOCK_V] * res[P_KNOCK] - p[GIN_V] * res[P_GIN]


# ------------------------------------------------------------------ decisions

@njit(cache=True, parallel=True)
def _expert_kernel(obs, mask, p, out, chunks):
    """Rows in ``chunks`` parallel chunks (numba threads; ``kernels.row_chunks``), each on its own scratch."""
    n = obs.shape[0]
    for c in prange(chunks):
        _expert_rows(obs, mask, p, out, c * n // chunks, (c + 1) * n // chunks)


@njit(cache=True)
def _expert_rows(obs, mask, p, out, lo, hi):
    unseen = np.empty(NUM_CARDS, np.bool_)
    signal = np.empty(NUM_CARDS, np.bool_)
    opp = np.empty(NUM_CARDS, np.float64)
    belief = np.empty(NUM_CARDS, np.float64)
    weight = np.empty(NUM_CARDS, np.float64)
    pairs = np.empty((6, 2), np.int64)  # at most 3 set pairs + 3 run pairs per card
    after = np.empty(NUM_CARDS, np.int64)
    work = np.empty(8, np.int64)
    ms = np.empty(4, np.int64)
    res = np.empty(NUM_OUTS_FIELDS, np.float64)
    table = np.empty((NUM_OUTS_FIELDS, NUM_CARDS), np.float64)
    scratch = np.empty((5, NUM_CARDS), np.int64)
    for b in range(lo, hi):
        o, m = obs[b], mask[b]
        ph = k.row_phase(o)
        if not (ph == k.DISCARD or ph == k.OFFER_NONDEALER or ph == k.OFFER_DEALER or ph == k.DRAW):
            out[b] = k.draw_action(False, m)  # the forced draw
            continue
        _read_table(o, p, unseen, signal, opp, pairs, belief, weight)
        limit, stock = k.row_knock_limit(o), k.row_stock(o)
        k.row_field_masks(o, k.OWN_HAND, ms)
        if ph == k.DISCARD:
            out[b] = _discard(o, m, ms, weight, opp, signal, limit, stock, p, work, table, scratch)
        else:
            out[b] = k.draw_action(_take(o, ms, weight, limit, stock, p, after, work, res), m)


@njit(cache=True)
def _knock_now(o, stock, p):
    """Knock at once rather than play on for gin: the wall is near, or this hand likely ends the game."""
    if stock <= p[WALL_STOCK] or stock <= p[HOLD_STOCK]:
        return True
    target = o[k.SCORES + 2]  # > 0 only in game episodes (scores are shares of the target)
    return target > 0 and o[k.SCORES] >= p[GAME_KNOCK_NOW]


@njit(cache=True)
def _discard(o, m, ms, weight, opp, signal, limit, stock, p, work, table, scratch):
    best_dw, knock_card = k.NOT_HELD, -1
    for c in range(NUM_CARDS):
        if m[c] and k.row_after_discard(o, c) < best_dw:
            best_dw = k.row_after_discard(o, c)
            knock_card = c if m[k.KNOCK + c] else -1
    if knock_card >= 0 and (best_dw == 0 or _knock_now(o, stock, p)):
        return k.KNOCK + knock_card
    _discard_outs(ms, weight, limit, scratch, table, work)
    if knock_card >= 0 and table[P_GIN, knock_card] < p[HOLD_CHANCE]:
        return k.KNOCK + knock_card
    meld_w = _meld_weight(limit, stock, p)
    best_v, card = 1e30, -1
    for c in range(NUM_CARDS):
        if not m[c] or k.row_after_discard(o, c) > best_dw + p[PRUNE]:
            continue
        v = _hand_value(table[:, c], meld_w, p)
        v += p[DANGER] * _danger(c, opp, signal, p[SIGNAL])
        if v < best_v:
            best_v, card = v, c
    return card


@njit(cache=True)
def _take(o, ms, weight, limit, stock, p, after, work, res):
    """Whether to take the top discard rather than draw from the stock (or pass)."""
    top = k.row_top(o)
    if top < 0:
        return False
    dw_take = k.take_then_best(ms, top, after, work)
    if dw_take <= limit:  # it can knock (or go gin) at once
        return True
    _outs(ms, weight, limit, work, res)
    return dw_take + p[TAKE_MARGIN] < res[EXP_DEADWOOD]


# ------------------------------------------------------------ features for learners

#: Columns of :func:`outs_features`: per card (52 each) the chance of gin and of being able to knock
#: on the next draw after discarding it, and its danger; per card the estimated chance that the
#: opponent holds it; then, for draw decisions, the 10-card hand's chance of gin and of knocking
#: on the next stock card, its expected deadwood after that card / 110, and the deadwood that card
#: is expected to meld / 110.
OUTS_FEATURES = 4 * NUM_CARDS + 4
_GIN_AFTER, _KNOCK_AFTER, _DANGER_OF, _OPP_HOLDS, _DRAW = (i * NUM_CARDS for i in range(5))
#: The table reading that trained networks were given as inputs (``agents.ppo.FEATURES_VERSION`` 1), frozen:
#: the expert's defaults of 2026-11-30, written out so that retuning ``ExpertParams`` (the bot) never
#: changes what a shipped network reads. Changing these numbers needs a new ``FEATURES_VERSION``.
FEATURES_PARAMS = ExpertParams(
    meld_weight=4.5, meld_weight_low_limit=4.0, meld_weight_late=0.3, knock_chance_value=6.0,
    gin_chance_value=10.0, danger_cost=7.0, signal_factor=0.3, taken_partner_belief=1.0,
    thrown_partner_doubt=0.15, take_margin=1.0, prune=12.0, hold_gin_chance=0.1, hold_stock=12.0,
    wall_stock=4.0, game_knock_now=0.9)
_FEATURES_P = FEATURES_PARAMS.to_array()


def outs_features(observations: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """(B, OUTS_FEATURES) float32: the expert's reading of the table (outs, danger, the opponent's
    likely cards), from the observation alone, as inputs a learned policy may build on. It reads
    with the frozen ``FEATURES_PARAMS``, not the bot's (tunable) defaults. ``out`` (optional, a
    C-contiguous float32 (B, OUTS_FEATURES) array or view of one) is filled in place."""
    obs = np.ascontiguousarray(observations, dtype=np.float32)
    if out is None:
        out = np.zeros((len(obs), OUTS_FEATURES), np.float32)
    else:
        out[:] = 0.0
    _features_kernel(obs, _FEATURES_P, out, k.row_chunks(len(obs)))
    return out


@njit(cache=True, parallel=True)
def _features_kernel(obs, p, out, chunks):
    n = obs.shape[0]
    for c in prange(chunks):
        _features_rows(obs, p, out, c * n // chunks, (c + 1) * n // chunks)


@njit(cache=True)
def _features_rows(obs, p, out, lo, hi):
    unseen = np.empty(NUM_CARDS, np.bool_)
    signal = np.empty(NUM_CARDS, np.bool_)
    opp = np.empty(NUM_CARDS, np.float64)
    belief = np.empty(NUM_CARDS, np.float64)
    weight = np.empty(NUM_CARDS, np.float64)
    pairs = np.empty((6, 2), np.int64)
    work = np.empty(8, np.int64)
    ms = np.empty(4, np.int64)
    res = np.empty(NUM_OUTS_FIELDS, np.float64)
    table = np.empty((NUM_OUTS_FIELDS, NUM_CARDS), np.float64)
    scratch = np.empty((5, NUM_CARDS), np.int64)
    for b in range(lo, hi):
        o = obs[b]
        ph = k.row_phase(o)
        if ph == k.NO_DECISION:
            continue
        _read_table(o, p, unseen, signal, opp, pairs, belief, weight)
        out[b, _OPP_HOLDS:_OPP_HOLDS + NUM_CARDS] = opp
        limit = k.row_knock_limit(o)
        k.row_field_masks(o, k.OWN_HAND, ms)
        if ph == k.DISCARD:
            _discard_outs(ms, weight, limit, scratch, table, work)
            for c in range(NUM_CARDS):
                if k.has(ms, c):
                    out[b, _GIN_AFTER + c] = table[P_GIN, c]
                    out[b, _KNOCK_AFTER + c] = table[P_KNOCK, c]
                    out[b, _DANGER_OF + c] = _danger(c, opp, signal, p[SIGNAL])
        else:
            _outs(ms, weight, limit, work, res)
            out[b, _DRAW] = res[P_GIN]
            out[b, _DRAW + 1] = res[P_KNOCK]
            out[b, _DRAW + 2] = res[EXP_DEADWOOD] / k.DEADWOOD_SCALE
            out[b, _DRAW + 3] = res[EXP_MELDED] / k.DEADWOOD_SCALE
