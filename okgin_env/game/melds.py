"""Melds, deadwood and the showdown, batched (docs/RULES.md, "Melds and deadwood", "Showdown").

How the search works: a hand is four 13-bit suit masks. Only ranks holding >= 3 cards
can form sets, so we enumerate the set choices for those ranks alone (none / all of them /
for four cards, each set of three). Once the set choices are fixed, the suits are
independent and inside a suit every maximal block of >= 3 consecutive ranks is one run,
so a suit's deadwood is one lookup in an 8192-entry table. Lay-offs follow the same idea:
in a suit, a defender card is laid off exactly when it sits in one consecutive block with
a card of the knocker's run (chained extensions), and a card that completes a knocker's
set of three is laid off or kept, whichever is better (enumerated).

All batched public functions take (B, 52) boolean hands and loop over the batch inside
numba. The scalar kernels they are built from (``masks_of_row``, ``min_deadwood_of_masks``,
``deadwood_after_discard_of_masks``, ``deadwood_and_best_discard_of_masks``, ``showdown_of_masks``)
are public too, for other numba code (the core's step, the bots) that works on one hand at a time.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from okgin_env.game.cards import CARD_POINTS, NUM_CARDS, NUM_RANKS, NUM_SUITS
from okgin_env.game.jit import kernel

DEADWOOD_NOT_HELD = 999  #: deadwood_after_discard value for cards not in the hand
NO_MELD = -1  #: meld_id of a deadwood card or a card not in the hand
RANK_POINTS = CARD_POINTS[:NUM_RANKS].astype(np.int64)


@kernel(inline="always")
def _next_block(u: int, r: int) -> tuple[int, int]:
    """(start, end): the ranks [start, end) of the first maximal block of consecutive bits of the suit
    mask u at rank r or above; start is NUM_RANKS when there is none."""
    while r < NUM_RANKS and not (u >> r) & 1:
        r += 1
    start = r
    while r < NUM_RANKS and (u >> r) & 1:
        r += 1
    return start, r


@kernel(inline="always")
def _block_mask(start: int, end: int) -> int:
    """The suit mask of ranks [start, end)."""
    return ((1 << end) - 1) ^ ((1 << start) - 1)


def _build_run_tables() -> tuple[np.ndarray, np.ndarray]:
    """RUN_DEADWOOD[m]: points of the cards of suit mask m outside runs; RUN_MELDED[m]: run cards."""
    size = 1 << NUM_RANKS
    dead = np.zeros(size, dtype=np.int64)
    melded = np.zeros(size, dtype=np.int64)
    next_block, block_mask = _next_block.py_func, _block_mask.py_func  # plain Python at import: no compile
    for m in range(size):
        start, end = next_block(m, 0)
        while start < NUM_RANKS:
            if end - start >= 3:
                melded[m] |= block_mask(start, end)
            else:
                dead[m] += sum(RANK_POINTS[k] for k in range(start, end))
            start, end = next_block(m, end)
    return dead, melded


#: (8192,) int64 -- deadwood points of a single-suit rank mask when all its runs are melded.
#: (8192,) int64 -- the rank bits of that mask that lie in runs (maximal blocks of >= 3).
RUN_DEADWOOD, RUN_MELDED = _build_run_tables()
_ABSENT = 10_000  # larger than any deadwood: marks a rank the suit mask does not hold
#: (8192, 13) int16 -- RUN_DEADWOOD of the mask without rank r, or _ABSENT where r is not held.
RUN_DEADWOOD_WITHOUT = np.array(
    [[RUN_DEADWOOD[m & ~(1 << r)] if (m >> r) & 1 else _ABSENT for r in range(NUM_RANKS)] for m in range(1 << NUM_RANKS)],
    dtype=np.int16,
)

_NO_DISCARD = -10_000  # RUN_BEST_DROP of an empty suit: no card there to discard
#: (8192,) int64 -- the most a suit's RUN_DEADWOOD falls when one of its cards is discarded (negative when
#: every discard breaks a run); _NO_DISCARD for the empty mask.
RUN_BEST_DROP = np.array(
    [RUN_DEADWOOD[m] - RUN_DEADWOOD_WITHOUT[m].min() if m else _NO_DISCARD for m in range(1 << NUM_RANKS)],
    dtype=np.int64,
)


#: (8192,) int64 -- index of the lowest rank bit of a suit mask (0 for the empty mask).
_LOWEST_BIT = np.array([(m & -m).bit_length() - 1 if m else 0 for m in range(1 << NUM_RANKS)], dtype=np.int64)


def hand_masks(hands: np.ndarray) -> np.ndarray:
    """(B, 52) bool -> (B, 4) int64 suit masks (bit r = rank r held)."""
    h = np.asarray(hands, dtype=bool).reshape(-1, NUM_SUITS, NUM_RANKS)
    return (h.astype(np.int64) << np.arange(NUM_RANKS, dtype=np.int64)).sum(axis=2)


# --------------------------------------------------------------------------- kernels

@kernel(inline="always")
def _set_ranks(m0: int, m1: int, m2: int, m3: int) -> int:
    """Bit r set where rank r is held in at least three suits."""
    return (m0 & m1 & m2) | (m0 & m1 & m3) | (m0 & m2 & m3) | (m1 & m2 & m3)


@kernel(inline="always")
def _num_options(ms: np.ndarray, r: int) -> int:
    """Set choices for rank r: 1 (no set possible), 2 (three cards: none/all), 6 (four: none/all/4 threes)."""
    if r < 0:
        return 1
    c = ((ms[0] >> r) & 1) + ((ms[1] >> r) & 1) + ((ms[2] >> r) & 1) + ((ms[3] >> r) & 1)
    return 6 if c == 4 else 2


@kernel(inline="always")
def _in_set(s: int, o: int) -> bool:
    """Whether the card of suit s goes into the set under option o (0 none, 1 all, 2+k all but suit k)."""
    return o == 1 or (o >= 2 and o - 2 != s)


@kernel
def _candidates(ms: np.ndarray, out: np.ndarray) -> int:
    """Fill out[0:4] with the ranks that can form sets (-1 padding); return how many."""
    bits = _set_ranks(ms[0], ms[1], ms[2], ms[3])
    n = 0
    for r in range(NUM_RANKS):
        if (bits >> r) & 1 and n < 4:
            out[n] = r
            n += 1
    for k in range(n, 4):
        out[k] = -1
    return n


@kernel(inline="always")
def _option(ms: np.ndarray, cand: np.ndarray, code: int, k: int) -> int:
    """The option that mixed-radix ``code`` picks for candidate rank cand[k]."""
    for j in range(k):
        code //= _num_options(ms, cand[j])
    return code % _num_options(ms, cand[k])


@kernel
def _apply_sets(ms: np.ndarray, cand: np.ndarray, code: int, out: np.ndarray) -> None:
    """out = suit masks left after taking the sets chosen by mixed-radix ``code``."""
    for s in range(NUM_SUITS):
        out[s] = ms[s]
    for k in range(4):
        o = _option(ms, cand, code, k)
        if o == 0:
            continue
        r = cand[k]
        for s in range(NUM_SUITS):
            if (ms[s] >> r) & 1 and _in_set(s, o):
                out[s] &= ~(1 << r)


@kernel
def _num_codes(ms: np.ndarray, cand: np.ndarray) -> int:
    total = 1
    for k in range(4):
        total *= _num_options(ms, cand[k])
    return total


@kernel(inline="always")
def _least_deadwood(ms: np.ndarray, run_dw: np.ndarray, cand: np.ndarray, tmp: np.ndarray) -> tuple[int, int]:
    """(minimal deadwood of the hand ms, the first set-choice code reaching it: deterministic); fills cand."""
    _candidates(ms, cand)
    best, best_code = 1 << 30, 0
    for code in range(_num_codes(ms, cand)):
        _apply_sets(ms, cand, code, tmp)
        d = run_dw[tmp[0]] + run_dw[tmp[1]] + run_dw[tmp[2]] + run_dw[tmp[3]]
        if d < best:
            best, best_code = d, code
    return best, best_code


@kernel
def min_deadwood_of_masks(ms: np.ndarray, run_dw: np.ndarray, cand: np.ndarray, tmp: np.ndarray) -> int:
    """Minimal deadwood of the hand with suit masks ms."""
    if _set_ranks(ms[0], ms[1], ms[2], ms[3]) == 0:
        return run_dw[ms[0]] + run_dw[ms[1]] + run_dw[ms[2]] + run_dw[ms[3]]
    return _least_deadwood(ms, run_dw, cand, tmp)[0]


@kernel(inline="always")
def _hand_scratch() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(cand, tmp, ms): the set search's scratch and one hand's suit masks, (4,) int64 each."""
    return np.empty(4, np.int64), np.empty(4, np.int64), np.empty(4, np.int64)


@kernel
def masks_of_row(row: np.ndarray, out: np.ndarray) -> None:
    """(52,) bool hand -> out[0:4] suit masks."""
    for s in range(NUM_SUITS):
        m = 0
        for r in range(NUM_RANKS):
            m |= np.int64(row[s * NUM_RANKS + r]) << r  # branch-free: the bits are unpredictable
        out[s] = m


@kernel
def _hand_deadwood_kernel(hands: np.ndarray, run_dw: np.ndarray, out: np.ndarray) -> None:
    cand, tmp, ms = _hand_scratch()
    for b in range(hands.shape[0]):
        masks_of_row(hands[b], ms)
        out[b] = min_deadwood_of_masks(ms, run_dw, cand, tmp)


@kernel
def deadwood_after_discard_of_masks(ms: np.ndarray, run_dw: np.ndarray, out: np.ndarray, cand: np.ndarray,
                       tmp: np.ndarray) -> None:
    """out[c] = minimal deadwood of the hand without card c, for every held c (999 elsewhere).

    Every arrangement of the hand without c is a set choice of the full hand that leaves c
    outside the sets (a set of four minus c is the choice "all but c"), so one pass over the
    full hand's set choices serves all discards: only the suit of c changes.
    """
    _after_discard(ms, run_dw, out, cand, tmp, True)


@kernel
def deadwood_after_discard_held_of_masks(ms: np.ndarray, run_dw: np.ndarray, out: np.ndarray, cand: np.ndarray,
                                         tmp: np.ndarray) -> None:
    """``deadwood_after_discard_of_masks`` for the held cards only: out[c] of a card not held is
    some number above any deadwood, not 999. Skipping that clamp lets the common pass vectorize
    (no 64-bit vector min before AVX-512), for kernels that read held cards only (the core's mask)."""
    _after_discard(ms, run_dw, out, cand, tmp, False)


@kernel(inline="always")
def _set_choices(ms: np.ndarray, cand: np.ndarray) -> int:
    """How many set choices the hand ms has (codes 0.., code 0 = no sets); fills cand (-1 padded)."""
    if _set_ranks(ms[0], ms[1], ms[2], ms[3]) == 0:
        for k in range(4):
            cand[k] = -1
        return 1
    _candidates(ms, cand)
    return _num_codes(ms, cand)


@kernel(inline="always")
def _after_discard(ms: np.ndarray, run_dw: np.ndarray, out: np.ndarray, cand: np.ndarray, tmp: np.ndarray,
                   clamp: bool) -> None:
    ncodes = _set_choices(ms, cand)
    # "no sets" (code 0) leaves every held card in the runs search: it fills every entry.
    _after_discard_under(ms, run_dw, out, True, clamp)
    for code in range(1, ncodes):
        _apply_sets(ms, cand, code, tmp)
        _after_discard_under(tmp, run_dw, out, False, clamp)


@kernel(inline="always")
def _after_discard_under(rest: np.ndarray, run_dw: np.ndarray, out: np.ndarray, first: bool, clamp: bool) -> None:
    """out[c] <- deadwood without c when ``rest`` are the cards left to runs (min with out unless first;
    with clamp, cards not held get DEADWOOD_NOT_HELD)."""
    total = run_dw[rest[0]] + run_dw[rest[1]] + run_dw[rest[2]] + run_dw[rest[3]]
    for s in range(NUM_SUITS):
        t = rest[s]
        base = total - run_dw[t]
        row = RUN_DEADWOOD_WITHOUT[t]
        for r in range(NUM_RANKS):
            v = base + row[r]
            if first:
                out[s * NUM_RANKS + r] = min(v, DEADWOOD_NOT_HELD) if clamp else v
            elif v < out[s * NUM_RANKS + r]:
                out[s * NUM_RANKS + r] = v


@kernel
def deadwood_and_best_discard_of_masks(ms: np.ndarray, run_dw: np.ndarray, best_drop: np.ndarray, cand: np.ndarray,
                                       tmp: np.ndarray) -> tuple[int, int]:
    """(minimal deadwood of the hand ms, least deadwood after its best discard) in one pass.

    The second is min over c of ``deadwood_after_discard``, by the same argument as there: under
    each set choice only one suit loses a card, so the best discard under that choice is in the
    suit whose run deadwood falls most (``RUN_BEST_DROP``). For searches that need only the best
    ten of eleven cards, not all 52 answers.
    """
    if _set_ranks(ms[0], ms[1], ms[2], ms[3]) == 0:
        d = run_dw[ms[0]] + run_dw[ms[1]] + run_dw[ms[2]] + run_dw[ms[3]]
        return d, d - _best_drop_of(ms, best_drop)
    _candidates(ms, cand)
    best, best_after = 1 << 30, 1 << 30
    for code in range(_num_codes(ms, cand)):
        _apply_sets(ms, cand, code, tmp)
        d = run_dw[tmp[0]] + run_dw[tmp[1]] + run_dw[tmp[2]] + run_dw[tmp[3]]
        best = min(best, d)
        best_after = min(best_after, d - _best_drop_of(tmp, best_drop))
    return best, best_after


@kernel
def deadwood_after_discard_and_best_of_masks(ms: np.ndarray, run_dw: np.ndarray, best_drop: np.ndarray,
                                             after: np.ndarray, after_best: np.ndarray, cand: np.ndarray,
                                             tmp: np.ndarray) -> None:
    """For every held card c: after[c] = minimal deadwood of the hand without c, and
    after_best[c] = the least deadwood of the hand without c and without its best other card
    (``deadwood_and_best_discard`` of the hand minus c, for all c in one pass; entries of cards not
    held are left as they were).

    Same argument as ``deadwood_after_discard_of_masks``, one card further: every arrangement of
    the hand without c and x is a set choice of the full hand leaving both outside the sets. Under
    a choice with run masks ``t``, removing c from suit s leaves ``t[s] - c``, and the best x is in
    that suit (``best_drop`` of ``t[s] - c``) or in another (the largest ``best_drop`` of the
    others). The outs of a discard decision need this for eleven discards times each drawn card;
    one pass per drawn card replaces eleven searches.
    """
    ncodes = _set_choices(ms, cand)
    for code in range(ncodes):
        if code == 0:  # no sets: every held card is in the runs search, so this fills every entry
            for s in range(NUM_SUITS):
                tmp[s] = ms[s]
        else:
            _apply_sets(ms, cand, code, tmp)
        total = run_dw[tmp[0]] + run_dw[tmp[1]] + run_dw[tmp[2]] + run_dw[tmp[3]]
        d0, d1, d2, d3 = best_drop[tmp[0]], best_drop[tmp[1]], best_drop[tmp[2]], best_drop[tmp[3]]
        for s in range(NUM_SUITS):
            t = tmp[s]
            if t == 0:
                continue
            # the best discard outside suit s
            if s == 0:
                other = max(d1, max(d2, d3))
            elif s == 1:
                other = max(d0, max(d2, d3))
            elif s == 2:
                other = max(d0, max(d1, d3))
            else:
                other = max(d0, max(d1, d2))
            rest = total - run_dw[t]
            m = t
            while m:
                r = _LOWEST_BIT[m]
                m &= m - 1
                left = t & ~(1 << r)
                a = rest + run_dw[left]
                b = a - max(best_drop[left], other)
                c = s * NUM_RANKS + r
                if code == 0 or a < after[c]:
                    after[c] = a
                if code == 0 or b < after_best[c]:
                    after_best[c] = b


@kernel(inline="always")
def _best_drop_of(rest: np.ndarray, best_drop: np.ndarray) -> int:
    """The most the run deadwood of ``rest`` falls when one of its cards is discarded."""
    return max(max(best_drop[rest[0]], best_drop[rest[1]]), max(best_drop[rest[2]], best_drop[rest[3]]))


@kernel
def _after_discard_kernel(hands: np.ndarray, run_dw: np.ndarray, out: np.ndarray) -> None:
    cand, tmp, ms = _hand_scratch()
    for b in range(hands.shape[0]):
        masks_of_row(hands[b], ms)
        deadwood_after_discard_of_masks(ms, run_dw, out[b], cand, tmp)


@kernel
def _label_runs(rest: np.ndarray, run_melded: np.ndarray, meld_id: np.ndarray, next_id: int) -> int:
    """Give each maximal run block of the suit masks ``rest`` its own meld id; return the next free id."""
    for s in range(NUM_SUITS):
        m = run_melded[rest[s]]
        r = 0
        while r < NUM_RANKS:
            if (m >> r) & 1:
                while r < NUM_RANKS and (m >> r) & 1:
                    meld_id[s * NUM_RANKS + r] = next_id
                    r += 1
                next_id += 1
            else:
                r += 1
    return next_id


@kernel
def _label_sets(ms: np.ndarray, left: np.ndarray, cand: np.ndarray, meld_id: np.ndarray, next_id: int) -> int:
    """Give each set taken from the suit masks ms its own meld id, in candidate order; return the next
    free id. ``left`` is what ``_apply_sets`` left of ms (the one place that says which cards a code takes)."""
    for k in range(4):
        r = cand[k]
        if r < 0:  # padding
            continue
        taken = False
        for s in range(NUM_SUITS):
            if ((ms[s] & ~left[s]) >> r) & 1:
                meld_id[s * NUM_RANKS + r] = next_id
                taken = True
        if taken:
            next_id += 1
    return next_id


@kernel
def _best_melds_kernel(masks: np.ndarray, run_dw: np.ndarray, run_melded: np.ndarray, out: np.ndarray) -> None:
    cand, tmp, _ = _hand_scratch()
    for b in range(masks.shape[0]):
        ms = masks[b]
        out[b, :] = NO_MELD
        code = _least_deadwood(ms, run_dw, cand, tmp)[1]
        _apply_sets(ms, cand, code, tmp)
        nid = _label_sets(ms, tmp, cand, out[b], 0)
        _label_runs(tmp, run_melded, out[b], nid)


# ------------------------------------------------------------------ showdown kernels

@kernel
def _suit_deadwood_with_layoffs(a: int, k: int, run_dw: np.ndarray, rank_points: np.ndarray) -> int:
    """Defender deadwood in one suit: own cards a, knocker's run cards k (lay-off targets)."""
    if k == 0:
        return run_dw[a]
    u = a | k
    total = 0
    r = 0
    while r < NUM_RANKS:  # one pass over the maximal blocks of u, summing points on the way (hot)
        if not (u >> r) & 1:
            r += 1
            continue
        start = r
        touches_run = False
        pts = 0
        while r < NUM_RANKS and (u >> r) & 1:
            if (k >> r) & 1:
                touches_run = True
            else:
                pts += rank_points[r]
            r += 1
        if not touches_run and r - start < 3:
            total += pts
    return total


@kernel
def _defender_best(d: np.ndarray, krun: np.ndarray, lay: np.ndarray, nlay: int, run_dw: np.ndarray,
                   rank_points: np.ndarray, work: np.ndarray, result: np.ndarray) -> int:
    """Least defender deadwood over set lay-off subsets x own set choices x run lay-offs.

    d: defender suit masks; krun: knocker run masks; lay[0:nlay]: card indices completing a knocker set
    of three. result <- (lay-off subset, defender set code) of the first best choice.
    """
    cand = work[0:4]
    tmp = work[4:8]
    cur = work[8:12]
    best = 1 << 30
    for sub in range(1 << nlay):
        for s in range(NUM_SUITS):
            cur[s] = d[s]
        for j in range(nlay):
            if (sub >> j) & 1:
                cur[lay[j] // NUM_RANKS] &= ~(1 << (lay[j] % NUM_RANKS))
        _candidates(cur, cand)
        for code in range(_num_codes(cur, cand)):
            _apply_sets(cur, cand, code, tmp)
            dw = 0
            for s in range(NUM_SUITS):
                dw += _suit_deadwood_with_layoffs(tmp[s], krun[s], run_dw, rank_points)
            if dw < best:
                best = dw
                result[0] = sub
                result[1] = code
    return best


@kernel
def _set_layoff_cards(km: np.ndarray, kcand: np.ndarray, kcode: int, d: np.ndarray, lay: np.ndarray) -> int:
    """Defender cards that complete one of the knocker's sets of three (chosen by kcode)."""
    n = 0
    for k in range(4):
        r = kcand[k]
        # option 1 of a three-card rank is a set of exactly three: the fourth suit is not the knocker's
        if _num_options(km, r) == 2 and _option(km, kcand, kcode, k) == 1:
            for s in range(NUM_SUITS):
                if not (km[s] >> r) & 1 and (d[s] >> r) & 1:
                    lay[n] = s * NUM_RANKS + r
                    n += 1
    return n


@kernel
def showdown_of_masks(km: np.ndarray, dm: np.ndarray, run_dw: np.ndarray, run_melded: np.ndarray,
                  rank_points: np.ndarray, meld_id: np.ndarray, laid_off: np.ndarray, out2: np.ndarray) -> None:
    """Score one showdown: out2 <- (K, D); fills meld_id / laid_off for the reported arrangement."""
    best_lay = np.empty(4, np.int64)
    best_choice = np.zeros(2, np.int64)
    kmin, best_d, best_kcode, best_nlay = _best_showdown(km, dm, run_dw, run_melded, rank_points, best_lay,
                                                         best_choice)
    out2[0] = kmin
    out2[1] = best_d
    _report_showdown(km, dm, kmin == 0, (best_kcode, best_nlay, best_lay, best_choice), run_melded, meld_id,
                     laid_off)


@kernel
def _best_showdown(km, dm, run_dw, run_melded, rank_points, best_lay, best_choice):
    """The knocker's minimal deadwood K and, over its minimal arrangements, the one leaving the
    defender the most deadwood D after its best reply. Returns (K, D, the arrangement's code, its
    lay-off cards); the lay-off cards go to best_lay, the defender's reply to best_choice."""
    work = np.empty(24, np.int64)
    kcand = np.empty(4, np.int64)
    ktmp = np.empty(4, np.int64)
    krun = np.empty(4, np.int64)
    lay = np.empty(4, np.int64)
    choice = np.empty(2, np.int64)
    kmin = _least_deadwood(km, run_dw, kcand, ktmp)[0]  # fills kcand
    ncodes = _num_codes(km, kcand)
    gin = kmin == 0
    best_d, best_kcode, best_nlay = -1, 0, 0
    for code in range(ncodes):
        _apply_sets(km, kcand, code, ktmp)
        kd = run_dw[ktmp[0]] + run_dw[ktmp[1]] + run_dw[ktmp[2]] + run_dw[ktmp[3]]
        if kd != kmin:
            continue
        if gin:
            for s in range(NUM_SUITS):
                krun[s] = 0
            nlay = 0
        else:
            for s in range(NUM_SUITS):
                krun[s] = run_melded[ktmp[s]]
            nlay = _set_layoff_cards(km, kcand, code, dm, lay)
        dd = _defender_best(dm, krun, lay, nlay, run_dw, rank_points, work, choice)
        if dd > best_d:  # tie-break: the minimal arrangement leaving the defender the most deadwood
            best_d, best_kcode, best_nlay = dd, code, nlay
            best_choice[0], best_choice[1] = choice[0], choice[1]
            for j in range(nlay):
                best_lay[j] = lay[j]
        if gin:
            break  # without lay-offs every knocker arrangement leaves the defender the same hand
    return kmin, best_d, best_kcode, best_nlay


@kernel
def _report_showdown(km, dm, gin, chosen, run_melded, meld_id, laid_off):
    """Label the chosen arrangement (``chosen``: the knocker's code, lay-off count, lay-off cards
    and the defender's reply, as ``_best_showdown`` found them): the knocker's sets and runs, then
    the defender's melds and lay-offs."""
    best_kcode, best_nlay, best_lay, best_choice = chosen
    kcand = np.empty(4, np.int64)
    ktmp = np.empty(4, np.int64)
    krun = np.empty(4, np.int64)
    _candidates(km, kcand)
    for c in range(NUM_CARDS):
        meld_id[c] = NO_MELD
        laid_off[c] = False
    _apply_sets(km, kcand, best_kcode, ktmp)
    nid = _label_sets(km, ktmp, kcand, meld_id, 0)
    nid = _label_runs(ktmp, run_melded, meld_id, nid)
    dcur = np.empty(4, np.int64)
    for s in range(NUM_SUITS):
        dcur[s] = dm[s]
        krun[s] = 0 if gin else run_melded[ktmp[s]]
    for j in range(best_nlay):
        if (best_choice[0] >> j) & 1:
            c = best_lay[j]
            laid_off[c] = True
            r = c % NUM_RANKS
            for s in range(NUM_SUITS):  # the set it completes
                if (km[s] >> r) & 1 and meld_id[s * NUM_RANKS + r] >= 0:
                    meld_id[c] = meld_id[s * NUM_RANKS + r]
                    break
            dcur[c // NUM_RANKS] &= ~(1 << r)
    dcand = np.empty(4, np.int64)
    dtmp = np.empty(4, np.int64)
    _candidates(dcur, dcand)
    _apply_sets(dcur, dcand, best_choice[1], dtmp)
    nid = _label_sets(dcur, dtmp, dcand, meld_id, nid)
    for s in range(NUM_SUITS):
        nid = _label_defender_runs(s, dtmp[s], krun[s], meld_id, laid_off, nid)


@kernel
def _label_defender_runs(s, a, k, meld_id, laid_off, nid):
    """Suit s: the defender's cards a (a mask) that extend the knocker's run cards k are laid off
    (joined to the nearest knocker run card of their block); its other blocks of three or more
    are its own runs. Returns the next meld id."""
    u = a | k
    start, r = _next_block(u, 0)
    while start < NUM_RANKS:
        if k & _block_mask(start, r):  # defender cards of this block extend the knocker's run (chained)
            for q in range(start, r):
                if (a >> q) & 1:
                    laid_off[s * NUM_RANKS + q] = True
                    # join the nearest knocker run card in the block
                    near = -1
                    for dist in range(1, NUM_RANKS):
                        if q - dist >= start and (k >> (q - dist)) & 1:
                            near = q - dist
                            break
                        if q + dist < r and (k >> (q + dist)) & 1:
                            near = q + dist
                            break
                    meld_id[s * NUM_RANKS + q] = meld_id[s * NUM_RANKS + near]
        elif r - start >= 3:
            for q in range(start, r):
                meld_id[s * NUM_RANKS + q] = nid
            nid += 1
        start, r = _next_block(u, r)
    return nid


@kernel
def _showdown_kernel(kmasks: np.ndarray, dmasks: np.ndarray, run_dw: np.ndarray, run_melded: np.ndarray,
                     rank_points: np.ndarray, meld_id: np.ndarray, laid_off: np.ndarray, out: np.ndarray) -> None:
    for b in range(kmasks.shape[0]):
        showdown_of_masks(kmasks[b], dmasks[b], run_dw, run_melded, rank_points, meld_id[b], laid_off[b], out[b])


# ------------------------------------------------------------------------ public API

class Showdown(NamedTuple):
    """Result of batched showdowns; arrays have the batch axis first."""

    knocker_deadwood: np.ndarray  #: (B,) int64 K
    defender_deadwood: np.ndarray  #: (B,) int64 D, after lay-offs (none on gin)
    gin: np.ndarray  #: (B,) bool K == 0
    meld_id: np.ndarray  #: (B, 52) int8 meld of each card, knocker's melds first; -1 deadwood / not held
    laid_off: np.ndarray  #: (B, 52) bool defender cards laid off onto the knocker's melds


def _as_hands(hands: np.ndarray) -> np.ndarray:
    h = np.asarray(hands)
    if h.ndim == 1:
        h = h[None]
    if h.ndim != 2 or h.shape[1] != NUM_CARDS:
        raise ValueError(f"hands must be a (B, 52) boolean array of held cards, got shape {h.shape}")
    return np.ascontiguousarray(h, dtype=bool)


def hand_deadwood(hands: np.ndarray) -> np.ndarray:
    """(B, 52) bool -> (B,) int16 minimal deadwood of each hand (any number of cards)."""
    h = _as_hands(hands)
    out = np.empty(h.shape[0], np.int16)
    _hand_deadwood_kernel(h, RUN_DEADWOOD, out)
    return out


def deadwood_after_discard(hands: np.ndarray) -> np.ndarray:
    """(B, 52) bool -> (B, 52) int16: minimal deadwood after discarding each held card; 999 where not held."""
    h = _as_hands(hands)
    out = np.empty((h.shape[0], NUM_CARDS), np.int16)
    _after_discard_kernel(h, RUN_DEADWOOD, out)
    return out


def best_melds(hands: np.ndarray) -> np.ndarray:
    """(B, 52) bool -> (B, 52) int8 meld id per card in a minimal-deadwood arrangement (-1 = deadwood)."""
    masks = hand_masks(_as_hands(hands))
    out = np.empty((masks.shape[0], NUM_CARDS), np.int8)
    _best_melds_kernel(masks, RUN_DEADWOOD, RUN_MELDED, out)
    return out


def showdown(knocker: np.ndarray, defender: np.ndarray) -> Showdown:
    """Score showdowns of 10-card knocker hands against defender hands (docs/RULES.md, "Showdown")."""
    k, d = _as_hands(knocker), _as_hands(defender)
    if k.shape != d.shape:
        raise ValueError(f"knocker and defender hands must have the same shape, got {k.shape} and {d.shape}")
    if np.any(k & d):
        raise ValueError("a card cannot be in both the knocker's and the defender's hand")
    b = k.shape[0]
    meld_id = np.empty((b, NUM_CARDS), np.int8)
    laid_off = np.empty((b, NUM_CARDS), np.bool_)
    out = np.empty((b, 2), np.int64)
    _showdown_kernel(hand_masks(k), hand_masks(d), RUN_DEADWOOD, RUN_MELDED, RANK_POINTS, meld_id, laid_off, out)
    return Showdown(out[:, 0], out[:, 1], out[:, 0] == 0, meld_id, laid_off)
