"""The showdown of the EAAI Gin Rummy framework (``Rules(showdown="eaai")``; docs/RULES.md, "Showdown").

In the framework (tneller/gin-rummy-eaai, ``GinRummyGame.play``) each side declares its own melds and
the engine then lays off greedily; its SimpleGinRummyPlayer declares, as knocker and as defender, one
of its minimum-deadwood arrangements at random. Here:

1. The knocker's melds: one of the arrangements of its ten cards with the least deadwood, drawn
   uniformly (an arrangement is a set of disjoint melds; every least-deadwood one is maximal).
2. The defender's melds: likewise one of its own least-deadwood arrangements, whatever the lay-offs.
3. Unless the knocker went gin, the defender's unmelded cards are laid off greedily: the first card
   in EAAI card order (suits clubs, hearts, spades, diamonds; ranks ace to king within a suit) that
   fits a knocker meld goes onto the first meld it fits, in the knocker's declared order; then
   again from the first card, until no card fits. A card fits a set of three of its rank, or a run
   whose end it extends (a run lengthened by a lay-off can be lengthened again).

The draws come from the deal: a hash of the hand's deck order (``deal_seed``), so a replayed deal
shows down the same way. Arrangements are listed in a fixed order (``meld_list``: the framework's
``cardsToAllMeldBitstrings`` order, then ``arrangements``). The knocker declares its melds in the
framework's order: ``cardsToAllMaximalMeldSets`` keeps an arrangement as a Java ``HashSet`` of the
melds' listing positions, whose iteration order (a table of four buckets for up to three small
integers) is by position modulo 4, then by position; checked against the framework on 9,189
arrangements of two or three melds. The reference engine (``okgin_env.testing.reference``)
implements the same rule on card lists.
"""

from __future__ import annotations

import numpy as np

from okgin_env.game.cards import CARD_POINTS, NUM_CARDS, NUM_RANKS, NUM_SUITS
from okgin_env.game.jit import kernel

#: okgin suit (spades, hearts, diamonds, clubs) of each EAAI suit in the framework's order C, H, S, D
EAAI_SUITS = np.array([3, 1, 0, 2], np.int64)
#: okgin card index of each EAAI card id (suit * 13 + rank, suits C, H, S, D): the lay-off order
EAAI_ORDER = np.array([EAAI_SUITS[e // NUM_RANKS] * NUM_RANKS + e % NUM_RANKS for e in range(NUM_CARDS)], np.int64)
POINTS = CARD_POINTS.astype(np.int64)
MAX_MELDS = 64  #: melds one ten-card hand can hold (at most 36 runs in one suit, or 16 sets)
KNOCKER_SALT, DEFENDER_SALT = 1, 2
NO_MELD = -1


@kernel(inline="always")
def _mix(z):
    """splitmix64's finaliser on a uint64 (the same arithmetic as the reference's ``mix64``)."""
    z = z + np.uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


@kernel
def deal_seed(deck):
    """A uint64 hash of a deck order (52 card indices): the deal's own random numbers."""
    h = np.uint64(0)
    for p in range(NUM_CARDS):
        h = _mix(h ^ np.uint64(deck[p]))
    return h


@kernel(inline="always")
def _draw(seed, salt, n):
    """A number 0..n-1 from the deal's seed and a salt (n >= 1)."""
    return int(_mix(seed ^ np.uint64(salt)) % np.uint64(n))


@kernel
def meld_list(hand, out):
    """Every meld within ``hand`` (52-bit mask) into ``out`` as 52-bit masks, in the framework's order:
    runs by EAAI suit (C, H, S, D), lowest rank, then length; then sets by rank, each set of three
    (without C, H, S, D in turn) and then the four. Returns how many."""
    n = 0
    for e in range(NUM_SUITS):
        base = EAAI_SUITS[e] * NUM_RANKS
        for lo in range(NUM_RANKS - 2):
            run = 0
            for r in range(lo, NUM_RANKS):
                if not (hand >> (base + r)) & 1:
                    break
                run |= 1 << (base + r)
                if r - lo >= 2:
                    out[n] = run
                    n += 1
    for r in range(NUM_RANKS):
        four = 0
        for s in range(NUM_SUITS):
            four |= 1 << (s * NUM_RANKS + r)
        for e in range(NUM_SUITS + 1):
            m = four if e == NUM_SUITS else four & ~(1 << (EAAI_SUITS[e] * NUM_RANKS + r))
            if m & hand == m:
                out[n] = m
                n += 1
    return n


@kernel(inline="always")
def _points(bits):
    total = 0
    while bits:
        low = bits & -bits
        c = 0
        while (low >> c) != 1:
            c += 1
        total += POINTS[c]
        bits ^= low
    return total


@kernel
def arrangements(hand, melds, n, pick):
    """Walk the arrangements of ``hand`` with the least deadwood: sets of up to three disjoint melds of
    ``melds[:n]``, listed as the empty one, then by increasing meld indices (i, then i < j, then
    i < j < k, depth first). Returns (least deadwood, how many reach it, the ``pick``-th of them as
    its three meld indices, -1 for none); ``pick`` < 0 only counts."""
    total = _points(hand)
    best, count = total, 1
    # first pass: the least deadwood and how many arrangements reach it
    for i in range(n):
        a = melds[i]
        d1 = total - _points(a)
        best, count = _tally(d1, best, count)
        for j in range(i + 1, n):
            b = melds[j]
            if a & b:
                continue
            d2 = d1 - _points(b)
            best, count = _tally(d2, best, count)
            for k in range(j + 1, n):
                c = melds[k]
                if (a | b) & c:
                    continue
                best, count = _tally(d2 - _points(c), best, count)
    chosen = (-1, -1, -1)
    if pick < 0:
        return best, count, chosen
    seen = 0
    if total == best:
        if seen == pick:
            return best, count, chosen
        seen += 1
    for i in range(n):
        a = melds[i]
        d1 = total - _points(a)
        if d1 == best:
            if seen == pick:
                return best, count, (i, -1, -1)
            seen += 1
        for j in range(i + 1, n):
            b = melds[j]
            if a & b:
                continue
            d2 = d1 - _points(b)
            if d2 == best:
                if seen == pick:
                    return best, count, (i, j, -1)
                seen += 1
            for k in range(j + 1, n):
                c = melds[k]
                if (a | b) & c:
                    continue
                if d2 - _points(c) == best:
                    if seen == pick:
                        return best, count, (i, j, k)
                    seen += 1
    return best, count, chosen


@kernel(inline="always")
def _tally(d, best, count):
    if d < best:
        return d, 1
    if d == best:
        return best, count + 1
    return best, count


@kernel(inline="always")
def _fits(meld, c):
    """Whether card c extends ``meld`` (a 52-bit mask) to a meld: the fourth of a set of three, or one
    rank beyond either end of a run."""
    r, s = c % NUM_RANKS, c // NUM_RANKS
    block = ((1 << NUM_RANKS) - 1) << (s * NUM_RANKS)
    if meld & ~block == 0:  # a run of suit s
        lo = 0
        while not (meld >> (s * NUM_RANKS + lo)) & 1:
            lo += 1
        hi = NUM_RANKS - 1
        while not (meld >> (s * NUM_RANKS + hi)) & 1:
            hi -= 1
        return r == lo - 1 or r == hi + 1
    if (meld >> (s * NUM_RANKS + r)) & 1:
        return False
    same = 0
    for t in range(NUM_SUITS):
        if (meld >> (t * NUM_RANKS + r)) & 1:
            same += 1
    # a set holds cards of one rank only: three of them and c's rank
    return same == 3 and _count(meld) == 3


@kernel(inline="always")
def _count(bits):
    n = 0
    while bits:
        bits &= bits - 1
        n += 1
    return n


@kernel
def eaai_showdown(knocker, defender, seed, meld_id, laid_off, out2):
    """Score one showdown the EAAI framework's way: ``knocker`` and ``defender`` are 52-bit masks (ten
    cards each), ``seed`` the deal's ``deal_seed``. out2 <- (K, D); ``meld_id`` (52,) gets the
    knocker's melds (ids 0.. in declared order) then the defender's, lay-offs the id of the meld they
    joined, -1 elsewhere; ``laid_off`` (52,) marks the defender's cards laid off."""
    melds = np.empty(MAX_MELDS, np.int64)
    for c in range(NUM_CARDS):
        meld_id[c] = NO_MELD
        laid_off[c] = False
    # the knocker's declared melds
    n = meld_list(knocker, melds)
    kmin, kcount, _ = arrangements(knocker, melds, n, -1)
    kdw, _, pick = arrangements(knocker, melds, n, _draw(seed, KNOCKER_SALT, kcount))
    mine = np.zeros(3, np.int64)
    m = 0
    for key in range(4):  # the framework's declared order: by listing position modulo 4, then position
        for t in range(3):
            if pick[t] >= 0 and pick[t] % 4 == key:
                mine[m] = melds[pick[t]]
                m += 1
    for t in range(m):
        for c in range(NUM_CARDS):
            if (mine[t] >> c) & 1:
                meld_id[c] = t
    # the defender's declared melds
    n = meld_list(defender, melds)
    dmin, dcount, _ = arrangements(defender, melds, n, -1)
    _, _, pick = arrangements(defender, melds, n, _draw(seed, DEFENDER_SALT, dcount))
    unmelded = defender
    nid = m
    for t in range(3):
        if pick[t] >= 0:
            own = melds[pick[t]]
            unmelded &= ~own
            for c in range(NUM_CARDS):
                if (own >> c) & 1:
                    meld_id[c] = nid
            nid += 1
    # greedy lay-offs, never on gin
    if kmin > 0:
        laid = True
        while laid:
            laid = False
            for e in range(NUM_CARDS):
                c = EAAI_ORDER[e]
                if not (unmelded >> c) & 1:
                    continue
                for t in range(m):
                    if _fits(mine[t], c):
                        mine[t] |= 1 << c
                        unmelded &= ~(1 << c)
                        meld_id[c] = t
                        laid_off[c] = True
                        laid = True
                        break
                if laid:
                    break
    out2[0] = kmin
    out2[1] = _points(unmelded)


@kernel
def _eaai_showdown_kernel(knockers, defenders, seeds, meld_id, laid_off, out):
    for b in range(knockers.shape[0]):
        eaai_showdown(knockers[b], defenders[b], seeds[b], meld_id[b], laid_off[b], out[b])


def bits_of(hands: np.ndarray) -> np.ndarray:
    """(B, 52) bool -> (B,) int64 52-bit masks (bit c for card c)."""
    h = np.asarray(hands, bool).reshape(-1, NUM_CARDS)
    return (h.astype(np.int64) << np.arange(NUM_CARDS, dtype=np.int64)).sum(axis=1)


def showdown(knocker: np.ndarray, defender: np.ndarray, seeds: np.ndarray | int) -> tuple[np.ndarray, ...]:
    """Batched EAAI showdowns of (B, 52) bool hands with (B,) uint64 seeds (or one for all):
    (K (B,), D (B,), meld_id (B, 52) int8, laid_off (B, 52) bool)."""
    k, d = bits_of(knocker), bits_of(defender)
    if k.shape != d.shape:
        raise ValueError(f"knocker and defender hands must have the same shape, got {k.shape} and {d.shape}")
    if np.any(k & d):
        raise ValueError("a card cannot be in both the knocker's and the defender's hand")
    b = len(k)
    s = np.broadcast_to(np.asarray(seeds, np.uint64), (b,)).copy()
    meld_id = np.empty((b, NUM_CARDS), np.int8)
    laid_off = np.empty((b, NUM_CARDS), np.bool_)
    out = np.empty((b, 2), np.int64)
    _eaai_showdown_kernel(k, d, s, meld_id, laid_off, out)
    return out[:, 0], out[:, 1], meld_id, laid_off
