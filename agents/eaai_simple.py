"""Todd Neller's ``SimpleGinRummyPlayer`` (the EAAI Gin Rummy framework, tneller/gin-rummy-eaai),
decision for decision, batched.

The EAAI-21 Gin Rummy tournament and the papers around it report results against this player;
``eaai_simple`` plays it exactly, so that okgin's figures under the EAAI rules (``Rules.eaai()``)
can be set beside theirs. okgin's own ``simple`` bot is a different, stronger player.
"""

from __future__ import annotations

import numpy as np

from okgin_env.game.cards import NUM_CARDS, NUM_RANKS, NUM_SUITS
from okgin_env.game.jit import kernel
from okgin_env.game.observation import CANNOT_DISCARD, IS_DEALER

from . import kernels as k
from .base import Bot, check_batch

WAYS = 8  #: records per set of the memory (set-associative: a set's oldest record makes room; one cache line)
PAIR_WORDS = 21  #: one bit per unordered pair of two different cards: 52 * 51 / 2 = 1326 <= 21 * 64
EMPTY = -1  #: key of a free record (a key is a 52-bit hand, never negative)
MIN_SETS = 64
#: a record's set depends only on its cards among these 32 (a fixed draw; see _set_of)
SET_CARDS = 0xedee563ffc71
CARD_BITS = (1 << NUM_CARDS) - 1
RECENT_CALLS = 8  #: a record written this few calls ago may still be in use (a game's own moves
# come every two to four calls in lockstep play); the memory doubles, up to 16 sets a row, when one must go


class EaaiSimpleAgent(Bot):
    """Neller's SimpleGinRummyPlayer (the EAAI framework's "Simple"), as its Java source decides:

    * Draw: takes the face-up card (the upcard on the offer included) only if that card is in
      some meld of its hand plus the card (a set or run of three or more containing it);
      otherwise draws from the stock (passes on the offer).
    * Discard: uniformly at random among the cards whose discard leaves the least deadwood
      (so T, J, Q and K tie at 10), except the card just taken from the pile and any card that
      would repeat a {drawn card, discarded card} pair it already played this hand (its guard
      against the two players passing the same cards back and forth for ever).
    * Knocks as soon as it may (with the card it chose to discard); never plays on for gin.

    The pair guard needs a memory of the hand, which the observation does not hold. It is kept
    per game and seat without any game id: a record of the pairs played so far, keyed by the ten
    cards the player kept after its last discard and a tag of what stays fixed during a hand
    (dealer, knock limit, scores). At the next discard the record is the one whose key is the eleven cards
    held minus one card -- the card just drawn. A hand whose key is new (a new deal) starts an
    empty record; an upcard offer always does. Two games in which the same agent object holds
    the same ten cards with the same scores would share a record (for deals of random decks, a
    chance of about one in 10^10 per pair of games). Records of ended hands are overwritten by
    newer ones (``WAYS`` per set, the oldest goes); the memory grows with the largest batch seen, and
    doubles whenever a record in use lately would have had to make room.

    In the EAAI framework the knock limit is always 10; under okgin's other rules this player
    knocks as soon as the hand's knock limit allows. Ties are broken by its seeded generator.
    """

    name = "eaai_simple"

    def __init__(self, seed: int | None = None) -> None:
        self.rng = np.random.default_rng(seed)
        self.calls = 0
        self.rows = 1  # the largest batch seen
        self._alloc(MIN_SETS)

    def _alloc(self, sets: int) -> None:
        # the ten cards kept (bits 0-51) and a tag of what is fixed during a hand (bits 52-62)
        self.keys = np.full(sets * WAYS, EMPTY, np.int64)
        self.stamp = np.zeros(sets * WAYS, np.int64)  # call number of the last write (the oldest goes)
        # each slot owns one row of ``data`` (``row[slot]``; a record that moves to another slot swaps
        # rows with it, so its data never moves): the card taken from the pile this turn (-1 none),
        # then the bits of the {drawn, discarded} pairs played this hand
        self.row = np.arange(sets * WAYS, dtype=np.int64)
        self.data = np.zeros((sets * WAYS, 1 + PAIR_WORDS), np.int64)

    def _grow(self, sets: int) -> None:
        """At least ``sets`` sets (a power of two), the records kept."""
        if len(self.keys) // WAYS >= sets:
            return
        new = len(self.keys) // WAYS
        while new < sets:
            new *= 2
        old = (self.keys, self.stamp, self.row, self.data)
        self._alloc(new)
        _rehash(*old, self.keys, self.stamp, self.row, self.data)

    def act(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        obs, mask = check_batch(observations, action_masks)
        out = np.empty(len(obs), np.int64)
        # two sets (16 records) per row of the largest batch; a game holds one live record per seat, so
        # a set fills with records of ended hands, the oldest of which goes first. Should a record that
        # was in use lately have to go all the same (more games than rows, e.g. an opponent called on a
        # few of many games), the memory doubles.
        self.rows = max(self.rows, len(obs))
        self._grow(2 * self.rows)
        self.calls += 1
        recent = np.zeros(1, np.int64)
        eaai_simple_actions(obs, mask, self.rng.random(len(obs)), self.calls, self.keys, self.stamp, self.row,
                            self.data, recent, out)
        if recent[0] and len(self.keys) // WAYS < 16 * self.rows:
            self._grow(2 * len(self.keys) // WAYS)
        return out


# ------------------------------------------------------------------ the hand's memory

@kernel(inline="always")
def _set_of(key, sets):
    """A record's set: a hash of its tag and of its cards among SET_CARDS only, so that the record of
    the ten cards held before a draw is in the set of the eleven held after it, unless the card
    drawn is among SET_CARDS (``_find_drawn``). int64 arithmetic that wraps (the odd multiplier is
    written as a signed 64-bit number: an unsigned literal would make the product a float)."""
    h = ((key & SET_CARDS) | (key & ~CARD_BITS)) * -7046029254386353131
    h ^= h >> 29
    h *= -4658895280553007687
    return (h ^ (h >> 31)) & (sets - 1)


@kernel(inline="always")
def _find(keys, key):
    """The record of ``key``, -1 if there is none."""
    base = _set_of(key, len(keys) // WAYS) * WAYS
    for w in range(WAYS):
        if keys[base + w] == key:
            return base + w
    return -1


@kernel
def _find_drawn(keys, hand, tag, first):
    """(record, drawn card) of the ten cards held before the draw, given the eleven held after it
    (``hand``) and the card ``first`` to try first (-1 none); (-1, -1) if there is none."""
    if first >= 0:
        slot = _find(keys, (hand ^ (1 << first)) | tag)
        if slot >= 0:
            return slot, first
    # a card drawn outside SET_CARDS leaves the set in place: its record is in the set of the eleven
    base = _set_of(hand | tag, len(keys) // WAYS) * WAYS
    for w in range(WAYS):
        key = keys[base + w]
        extra = (hand | tag) & ~key
        if key >= 0 and key & ~(hand | tag) == 0 and extra & (extra - 1) == 0:
            drawn = 0
            while (extra >> drawn) & 1 == 0:
                drawn += 1
            return base + w, drawn
    for c in range(NUM_CARDS):  # a drawn card among SET_CARDS
        if (hand >> c) & (SET_CARDS >> c) & 1:
            slot = _find(keys, (hand ^ (1 << c)) | tag)
            if slot >= 0:
                return slot, c
    return -1, -1


@kernel
def _insert(keys, stamps, key, now, recent):
    """A record for ``key``: a free one of its set, else the set's oldest. Its contents are the
    caller's to write."""
    base = _set_of(key, len(keys) // WAYS) * WAYS
    slot = base
    for w in range(WAYS):
        if keys[base + w] == EMPTY:
            slot = base + w
            break
        if stamps[base + w] < stamps[slot]:
            slot = base + w
    if keys[slot] != EMPTY and now - stamps[slot] <= RECENT_CALLS:
        recent[0] += 1  # a record in use lately had to go: the memory is too small
    keys[slot], stamps[slot] = key, now
    return slot


@kernel
def _rehash(keys, stamps, row, data, nkeys, nstamps, nrow, ndata):
    for i in range(len(keys)):
        if keys[i] != EMPTY:
            ndata[nrow[_insert(nkeys, nstamps, keys[i], stamps[i], np.zeros(1, np.int64))], :] = data[row[i], :]


@kernel(inline="always")
def _pair_bit(a, b):
    """Bit number of the unordered pair {a, b}, a != b."""
    lo, hi = min(a, b), max(a, b)
    return hi * (hi - 1) // 2 + lo


@kernel(inline="always")
def _hand_bits(o):
    """The cards held, as bits 0-51."""
    bits = 0
    for c in range(NUM_CARDS):
        if o[k.OWN_HAND + c] > 0.5:
            bits |= 1 << c
    return bits


@kernel(inline="always")
def _hand_tag(o):
    """Bits 52-62 of a key: a hash of what stays fixed during a hand (dealer, knock limit, the three
    score features), so that games at other scores never share a record."""
    ctx = (1 if o[IS_DEALER] > 0.5 else 0) + 2 * k.row_knock_limit(o)
    for i in range(3):
        ctx = ctx * 1000003 + int(o[k.SCORES + i] * 1048576.0 + 0.5)
    ctx *= -4658895280553007687
    return ((ctx >> 40) & 0x7FF) << NUM_CARDS


# ------------------------------------------------------------------ decisions

@kernel(inline="always")
def in_a_meld(ms, c):
    """Whether card c makes a meld with two or more cards of the hand ms (suit masks, c not held):
    the framework's ``willDrawFaceUpCard``."""
    r, s = c % NUM_RANKS, c // NUM_RANKS
    same_rank = 0
    for t in range(NUM_SUITS):
        if t != s and (ms[t] >> r) & 1:
            same_rank += 1
    if same_rank >= 2:
        return True
    m = ms[s]
    below1 = r >= 1 and (m >> (r - 1)) & 1 == 1
    below2 = r >= 2 and (m >> (r - 2)) & 1 == 1
    above1 = r + 1 < NUM_RANKS and (m >> (r + 1)) & 1 == 1
    above2 = r + 2 < NUM_RANKS and (m >> (r + 2)) & 1 == 1
    return (below2 and below1) or (below1 and above1) or (above1 and above2)


@kernel
def eaai_simple_actions(obs, mask, noise, now, keys, stamps, row, data, recent, out):
    """Simple's action for each row into ``out`` ((B,) int64), reading and updating the memory
    arrays (see ``EaaiSimpleAgent``); ``noise`` (B,) floats in [0, 1) pick among tied discards,
    ``now`` is the call number stamped on the records written, ``recent`` (1,) counts records in use
    lately that had to make room."""
    ms = np.empty(NUM_SUITS, np.int64)
    words = np.zeros(PAIR_WORDS, np.int64)
    for b in range(obs.shape[0]):
        o, m = obs[b], mask[b]
        ph = k.row_phase(o)
        if ph == k.NO_DECISION:
            out[b] = k.draw_action(False, m)
            continue
        tag = _hand_tag(o)
        hand = _hand_bits(o)
        if ph != k.DISCARD:  # offer, forced draw or draw: one card to take or not
            top = k.row_top(o)
            take = False
            if top >= 0 and (ph == k.OFFER_NONDEALER or ph == k.OFFER_DEALER or ph == k.DRAW):
                for t in range(NUM_SUITS):
                    ms[t] = (hand >> (t * NUM_RANKS)) & ((1 << NUM_RANKS) - 1)
                take = in_a_meld(ms, top)
            a = k.draw_action(take, m)
            out[b] = a
            if a == k.DRAW_STOCK and ph == k.DRAW and k.row_stock(o) < k.FULL_STOCK:
                continue  # not its first decision of the hand: its record, from its last discard, stands
            slot = _find(keys, hand | tag)
            if slot < 0 or ph == k.OFFER_NONDEALER or ph == k.OFFER_DEALER:  # a new hand: nothing played yet
                if slot < 0:
                    slot = _insert(keys, stamps, hand | tag, now, recent)
                data[row[slot], 1:] = 0
            data[row[slot], 0] = top if a == k.TAKE_DISCARD else -1
            continue
        # discard: the record is the one of the ten cards held before the draw; the card the rules
        # forbid to discard (taken from the pile) is tried first as the drawn card
        forbidden = -1
        for c in range(NUM_CARDS):
            if o[CANNOT_DISCARD + c] > 0.5:
                forbidden = c
        from_pile = -1
        slot, drawn = _find_drawn(keys, hand, tag, forbidden)
        if slot >= 0:
            r = row[slot]
            from_pile = data[r, 0]
            if from_pile >= 0:  # a card drawn from the stock was never held before: no pair can repeat
                words[:] = data[r, 1:]
        else:  # no memory of this hand (the agent joined mid-hand): the card the rules forbid, if any
            drawn, from_pile = forbidden, forbidden
        guard = slot >= 0 and from_pile >= 0
        choice = _discard(o, m, noise[b], drawn, from_pile, words, guard)
        if choice < 0:  # every card excluded by the pair guard (the Java player would throw): drop the guard
            choice = _discard(o, m, noise[b], drawn, from_pile, words, False)
        a = k.knock_or_discard(choice, True, m)
        out[b] = a
        if a == choice:  # a discard: the hand goes on, remember the pair under the ten cards kept
            new = _insert(keys, stamps, (hand ^ (1 << choice)) | tag, now, recent)
            if slot >= 0 and slot != new:  # the record moves: its data row goes with it
                keys[slot] = EMPTY
                row[slot], row[new] = row[new], row[slot]
            elif slot < 0:
                data[row[new], 1:] = 0
            r = row[new]
            data[r, 0] = -1
            if drawn >= 0 and drawn != choice:
                bit = _pair_bit(drawn, choice)
                data[r, 1 + bit // 64] |= 1 << (bit % 64)
        elif slot >= 0:  # a knock ends the hand
            keys[slot] = EMPTY


@kernel
def _discard(o, m, u, drawn, from_pile, words, guard):
    """The ``getDiscard`` of the framework: among legal discards other than the card taken from the
    pile (and, with ``guard``, other than those repeating a played {drawn, discard} pair), uniformly
    one of those leaving the least deadwood (``u`` in [0, 1) picks it). -1 when none is left."""
    best, ties = 1 << 30, 0
    for c in range(NUM_CARDS):
        if not _allowed(m, c, drawn, from_pile, words, guard):
            continue
        d = k.row_after_discard(o, c)
        if d < best:
            best, ties = d, 1
        elif d == best:
            ties += 1
    if ties == 0:
        return -1
    j = min(int(u * ties), ties - 1)
    for c in range(NUM_CARDS):
        if _allowed(m, c, drawn, from_pile, words, guard) and k.row_after_discard(o, c) == best:
            if j == 0:
                return c
            j -= 1
    return -1


@kernel(inline="always")
def _allowed(m, c, drawn, from_pile, words, guard):
    if not m[c] or c == from_pile:
        return False
    if guard and drawn >= 0 and c != drawn:
        bit = _pair_bit(drawn, c)
        if (words[bit // 64] >> (bit % 64)) & 1:
            return False
    return True


__all__ = ["EaaiSimpleAgent", "eaai_simple_actions", "in_a_meld"]
