"""Input features for learners, computed from the observation alone: what okgin's own network reads.

``learner_input(obs, features)`` is the trainer's network input (``okgin_agents.ppo.network_input``
is this function) and what the envs return with the option ``features=`` (``okgin_env.envs.options``):

==========  ======================  ============================================================
features    width                   columns
==========  ======================  ============================================================
``"raw"``   ``OBS_SIZE`` = 437      the observation (``okgin_env.game.observation``)
``"meld"``  437 + 212 = 649         the observation, then ``meld_features`` (``MELD_FIELDS``)
``"outs"``  437 + 212 + 212 = 861   the observation, ``meld_features``, ``outs_features``
                                    (``OUTS_FIELDS``)
==========  ======================  ============================================================

(okgin's PPO network also reads the legal-action mask, 107 more inputs: 968 with "outs".)

``meld_features`` (numpy, batched) reads the hand: which cards are melded, with and without the
top discard, how many meld partners each card has among the own and the opponent's known cards,
and the deadwood now and after taking the top discard. ``outs_features`` (one numba kernel over
the batch, rows split over numba's threads) is the expert bot's reading of the table: per possible
discard the chance that the next stock card gives gin or lets it knock and the card's danger, the
estimated chance that the opponent holds each card, and at a draw the outs of the hand. Rows where
the observing player is not to move (terminal observations) get zeros for ``outs_features``.

A network only makes sense on the inputs it was trained on: ``FEATURES_VERSION`` names what this
module computes (checkpoints record it; ``okgin_agents.ppo`` refuses other versions), and the
table is read with ``FEATURES_PARAMS``, frozen, never with the expert bot's tunable weights.
Change any of these numbers only together with a new ``FEATURES_VERSION``.

The kernels that read the table (``read_table``, ``danger``, ``outs``, ``discard_outs``) are
shared with the expert bot (``okgin_agents.expert``), which builds its decisions on them.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import prange

from okgin_env.features import rows as k
from okgin_env.game.cards import HAND_SIZE, NUM_CARDS, NUM_RANKS, NUM_SUITS
from okgin_env.game.jit import kernel
from okgin_env.game.melds import best_melds, deadwood_after_discard, hand_deadwood
from okgin_env.game.observation import DEADWOOD_SCALE, OBS_SIZE, field_slices, obs_field

FEATURES = ("raw", "meld", "outs")  #: each adds columns to the one before it
#: Version of what ``meld_features`` and ``outs_features`` (with ``FEATURES_PARAMS``) compute;
#: checkpoints written before the version existed read as 1 (the features of 2026-11-30).
FEATURES_VERSION = 1

#: Columns of ``meld_features`` (name -> slice); the sizes add up to ``MELD_FEATURES``.
MELD_FIELDS: dict[str, slice] = field_slices((
    ("melded", NUM_CARDS),  # cards of the own hand in melds of its least-deadwood arrangement
    ("melded_with_top", NUM_CARDS),  # the same for the hand plus the top discard (draw decisions only)
    ("near", NUM_CARDS),  # per card: own cards of its rank or 1-2 ranks away in its suit, / 4 (0 to 7/4)
    ("opp_near", NUM_CARDS),  # the same over the cards the opponent is known to hold (opp_taken)
    ("deadwood_now", 1),  # deadwood of the hand / 110 (after its best discard in the discard phase)
    ("deadwood_take", 1),  # deadwood after taking the top discard and discarding best / 110 (draws only)
    ("take_gain", 1),  # deadwood_now - deadwood_take (draws only; negative when taking costs)
    ("top_melded", 1),  # 1 when the top discard would be melded (draws only)
))
MELD_FEATURES = MELD_FIELDS["top_melded"].stop  #: 212

#: Columns of ``outs_features`` (name -> slice); the sizes add up to ``OUTS_FEATURES``.
OUTS_FIELDS: dict[str, slice] = field_slices((
    ("gin_after", NUM_CARDS),  # discard phase, held cards: chance the next stock card gives gin after discarding it
    ("knock_after", NUM_CARDS),  # ... that it lets the hand knock
    ("danger", NUM_CARDS),  # ... the chance-like score that the opponent melds it (0 to 1)
    ("opp_holds", NUM_CARDS),  # estimated chance that the opponent holds each card
    ("draw_gin", 1),  # draw decisions: the 10-card hand's chance of gin on the next stock card
    ("draw_knock", 1),  # ... of being able to knock
    ("draw_deadwood", 1),  # ... its expected deadwood after that card / 110
    ("draw_melded", 1),  # ... the deadwood that card is expected to meld / 110
))
OUTS_FEATURES = OUTS_FIELDS["draw_melded"].stop  #: 212
_GIN_AFTER, _KNOCK_AFTER, _DANGER_OF, _OPP_HOLDS, _DRAW = (OUTS_FIELDS[name].start for name in (
    "gin_after", "knock_after", "danger", "opp_holds", "draw_gin"))

EXTRA_SIZES = {"raw": 0, "meld": MELD_FEATURES, "outs": MELD_FEATURES + OUTS_FEATURES}


def check_features(features: object) -> str:
    """``features`` if it names a feature set, else a one-line ``ValueError``."""
    if not isinstance(features, str) or features not in FEATURES:
        raise ValueError(f"invalid features={features!r}: allowed is {' | '.join(map(repr, FEATURES))}")
    return features


def input_size(features: str) -> int:
    """Width of ``learner_input(obs, features)``."""
    return OBS_SIZE + EXTRA_SIZES[check_features(features)]


def features_for_size(width: int) -> str:
    """The feature set whose ``learner_input`` is ``width`` columns wide (how a saved network that did not
    record its features option is read), else a one-line ``ValueError``."""
    for features in FEATURES:
        if input_size(features) == width:
            return features
    sizes = ", ".join(f"{input_size(f)} ({f})" for f in FEATURES)
    raise ValueError(f"a network reading {width} inputs was not trained on okgin's observations: allowed are {sizes}")


def feature_bounds(features: str) -> tuple[np.ndarray, np.ndarray]:
    """(low, high) float32 bounds of the columns ``features`` adds after the observation (empty for "raw")."""
    check_features(features)
    low, high = np.zeros(MELD_FEATURES, np.float32), np.ones(MELD_FEATURES, np.float32)
    for name in ("near", "opp_near"):
        high[MELD_FIELDS[name]] = 7 / 4  # three of its rank and four suit neighbours
    low[MELD_FIELDS["take_gain"]] = -1.0
    if features == "raw":
        return np.zeros(0, np.float32), np.zeros(0, np.float32)
    if features == "meld":
        return low, high
    return np.concatenate([low, np.zeros(OUTS_FEATURES, np.float32)]), \
        np.concatenate([high, np.ones(OUTS_FEATURES, np.float32)])


# ------------------------------------------------------------------ the learner's input

def learner_input(observations: np.ndarray, features: str = "raw") -> np.ndarray:
    """(B, input_size(features)) float32: the observations, plus ``meld_features`` with "meld",
    plus those and ``outs_features`` with "outs". With "raw" the observations are returned as
    they are (as float32, not copied when they are float32 already)."""
    obs = np.asarray(observations, np.float32)
    if check_features(features) == "raw":
        return obs
    parts = [obs, meld_features(obs)]
    if features == "outs":
        parts.append(outs_features(obs))
    return np.concatenate(parts, axis=1)


def meld_features(obs: np.ndarray) -> np.ndarray:
    """(B, MELD_FEATURES) float32, the columns of ``MELD_FIELDS``, from (B, OBS_SIZE) observations."""
    b = len(obs)
    hand = obs_field(obs, "own_hand") > 0.5
    top_field = obs_field(obs, "discard_top") > 0.5
    has_top = top_field.any(1)
    top = top_field.argmax(1)
    phase = obs_field(obs, "phase")
    drawing = phase[:, :4].any(1) & has_top  # an offer or the start of a turn, with a top card
    discarding = phase[:, 4] > 0.5
    melded = best_melds(hand) >= 0
    with_top = hand.copy()
    rows = np.flatnonzero(drawing)
    with_top[rows, top[rows]] = True
    melded_top = np.zeros((b, NUM_CARDS), bool)
    dw_take = np.zeros(b, np.float32)
    dw_now = hand_deadwood(hand).astype(np.float32)
    dd = obs_field(obs, "discard_deadwood")
    dw_now = np.where(discarding, np.rint(DEADWOOD_SCALE * (1 - dd.max(1))), dw_now).astype(np.float32)
    if len(rows):
        melded_top[rows] = best_melds(with_top[rows]) >= 0
        after = deadwood_after_discard(with_top[rows]).astype(np.float32)
        after[np.arange(len(rows)), top[rows]] = np.inf  # the taken card may not be discarded
        dw_take[rows] = after.min(1)
    gain = np.where(drawing, dw_now - dw_take, 0.0)
    top_melded = np.where(drawing, melded_top[np.arange(b), top], False)

    def near(cards: np.ndarray) -> np.ndarray:
        c = cards.reshape(b, NUM_SUITS, NUM_RANKS).astype(np.float32)
        same_rank = c.sum(1, keepdims=True) - c
        pad = np.pad(c, ((0, 0), (0, 0), (2, 2)))
        suit = pad[:, :, 0:-4] + pad[:, :, 1:-3] + pad[:, :, 3:-1] + pad[:, :, 4:]
        return ((same_rank + suit) / 4.0).reshape(b, NUM_CARDS)

    opp = obs_field(obs, "opp_taken") > 0.5
    scalars = np.stack([dw_now / DEADWOOD_SCALE, np.where(drawing, dw_take, 0.0) / DEADWOOD_SCALE,
                        gain / DEADWOOD_SCALE, top_melded], axis=1)
    return np.concatenate([melded, melded_top, near(hand), near(opp), scalars], axis=1).astype(np.float32)


class TableReading(NamedTuple):
    """How ``read_table`` and ``danger`` read the table (the expert's model of the opponent)."""

    signal_factor: float  #: danger factor for a card, or for sets of a rank, that the opponent threw or passed on
    taken_partner_belief: float  #: how strongly the partners of a card the opponent took are believed held (0 = not at all)
    thrown_partner_doubt: float  #: how much each thrown or passed card lowers the belief that its partners are held


class TableView(NamedTuple):
    """What ``read_table`` writes for one observation (each (52,) by card), and its scratch."""

    unseen: np.ndarray  #: bool: may still come from the stock or be in the opponent's hand
    signal: np.ndarray  #: bool: the opponent threw or passed on it
    opp: np.ndarray  #: float64: estimated chance that the opponent holds it
    pairs: np.ndarray  #: (6, 2) int64 scratch: the card pairs that meld with a card
    belief: np.ndarray  #: float64 scratch
    weight: np.ndarray  #: float64: chance that it is the next stock card, up to a constant

    @staticmethod
    def empty() -> "TableView":
        return _empty_table_view()


@kernel
def _empty_table_view():
    return TableView(np.empty(NUM_CARDS, np.bool_), np.empty(NUM_CARDS, np.bool_), np.empty(NUM_CARDS, np.float64),
                     np.empty((6, 2), np.int64), np.empty(NUM_CARDS, np.float64), np.empty(NUM_CARDS, np.float64))


#: The table reading that trained networks were given as inputs (``FEATURES_VERSION`` 1), frozen:
#: the expert's defaults of 2026-11-30, written out so that retuning the expert bot never changes
#: what a shipped network reads.
FEATURES_PARAMS = TableReading(signal_factor=0.3, taken_partner_belief=1.0, thrown_partner_doubt=0.15)


def outs_features(observations: np.ndarray, out: np.ndarray | None = None,
                  params: TableReading = FEATURES_PARAMS) -> np.ndarray:
    """(B, OUTS_FEATURES) float32, the columns of ``OUTS_FIELDS``: the expert's reading of the table
    (outs, danger, the opponent's likely cards) from the observations alone, as inputs a learned
    policy may build on. ``params``: how the table is read (leave the frozen default: it is what
    trained networks read). ``out`` (optional, a C-contiguous float32 (B, OUTS_FEATURES) array or
    view of one) is filled in place."""
    obs = np.ascontiguousarray(observations, dtype=np.float32)
    if out is None:
        out = np.zeros((len(obs), OUTS_FEATURES), np.float32)
    else:
        out[:] = 0.0
    chunks = k.row_chunks(len(obs))
    if chunks == 1:  # a small batch (an env's one row): starting numba's threads would cost more than the rows
        _features_rows(obs, _reading(params), out, 0, len(obs))
    else:
        _features_kernel(obs, _reading(params), out, chunks)
    return out


def _reading(params: TableReading) -> TableReading:
    """``params`` with float fields (one compiled kernel whatever numbers were given)."""
    return TableReading(*(float(x) for x in params))


@kernel(parallel=True)
def _features_kernel(obs, p, out, chunks):
    n = obs.shape[0]
    for c in prange(chunks):
        _features_rows(obs, p, out, c * n // chunks, (c + 1) * n // chunks)


@kernel
def _features_rows(obs, p, out, lo, hi):
    t = _empty_table_view()
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
        read_table(o, p.taken_partner_belief, p.thrown_partner_doubt, t)
        out[b, _OPP_HOLDS:_OPP_HOLDS + NUM_CARDS] = t.opp
        limit = k.row_knock_limit(o)
        k.row_field_masks(o, k.OWN_HAND, ms)
        if ph == k.DISCARD:
            discard_outs(ms, t.weight, limit, scratch, table, work)
            for c in range(NUM_CARDS):
                if k.has(ms, c):
                    out[b, _GIN_AFTER + c] = table[P_GIN, c]
                    out[b, _KNOCK_AFTER + c] = table[P_KNOCK, c]
                    out[b, _DANGER_OF + c] = danger(c, t.opp, t.signal, p.signal_factor)
        else:
            outs(ms, t.weight, limit, work, res)
            out[b, _DRAW] = res[P_GIN]
            out[b, _DRAW + 1] = res[P_KNOCK]
            out[b, _DRAW + 2] = res[EXP_DEADWOOD] / k.DEADWOOD_SCALE
            out[b, _DRAW + 3] = res[EXP_MELDED] / k.DEADWOOD_SCALE


# ------------------------------------------------------------ reading the table (shared with the expert)

@kernel
def partner_pairs(x, pairs):
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


@kernel(inline="always")
def _possible(c, unseen, opp):
    """Whether the opponent may hold c (unseen, or known to be in its hand)."""
    return unseen[c] or opp[c] == 1.0


@kernel
def read_table(o, taken_belief, thrown_doubt, t):
    """What one observation o tells about the cards, into the ``TableView`` t.

    unseen[c]: c may still come from the stock or be in the opponent's hand; signal[c]: the
    opponent threw or passed on c; opp[c]: estimated chance that the opponent holds c (the
    opponent's unknown cards spread over the unseen ones, raised for the partners of cards it took
    by ``taken_belief``, lowered by ``thrown_doubt`` for the partners of each card it threw or
    passed on); weight[c]: chance that c is the next stock card, up to a constant.
    """
    unseen, signal, opp, pairs, belief, weight = t.unseen, t.signal, t.opp, t.pairs, t.belief, t.weight
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
        n = partner_pairs(x, pairs)
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
                belief[pairs[j, 0]] -= thrown_doubt
                belief[pairs[j, 1]] -= thrown_doubt
    for c in range(NUM_CARDS):
        if unseen[c]:
            if belief[c] > 0:
                opp[c] = 1.0 - (1.0 - base) * (1.0 - min(1.0, belief[c] * taken_belief))
            else:  # never quite rule a card out
                opp[c] = base * max(0.1, 1.0 + belief[c])
        weight[c] = 1.0 - opp[c] if unseen[c] else 0.0


@kernel
def danger(c, opp, signal, signal_factor):
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


@kernel(inline="always")
def can_meld(ms, u):
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


NOW, EXP_DEADWOOD, EXP_MELDED, P_KNOCK, P_GIN, NUM_OUTS_FIELDS = range(6)  #: fields of ``outs``' result


@kernel
def outs(ms, weight, limit, work, res):
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
        if can_meld(ms, u):
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


@kernel
def discard_outs(ms, weight, limit, scratch, table, work):
    """``outs`` of the 11-card hand ms after each of its discards c: table[f, c] = field f of
    ``outs(ms - c)`` (held c only). The same numbers, summed in the same order, from one meld
    search per drawn card u for all eleven discards rather than eleven: the deadwood of ms - c + u
    is that of ms + u without c, and keeping its best ten drops one more card. (Where u melds with
    ms but not with ms - c, the search gives what ``outs`` computes without one: u's points.)
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
        melds_u = can_meld(ms, u)
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
