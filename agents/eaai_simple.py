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

from . import choices as k
from .base import Bot, check_batch

WAYS = 8  #: records per set of the memory (set-associative: a set's oldest record makes room)
PAIR_WORDS = 21  #: one bit per unordered pair of two different cards: 52 * 51 / 2 = 1326 <= 21 * 64
EMPTY = -1  #: key of a free record (a key is a 52-bit hand, never negative)
MIN_SETS = 64
#: a record's set depends only on its cards among these 32 (a fixed draw; see _set_of)
SET_CARDS = 0xedee563ffc71
CARD_BITS = (1 << NUM_CARDS) - 1
RECENT_CALLS = 8  #: a record written this few calls ago may still be in use (a game's own moves
# come every two to four calls in lockstep play); the memory doubles, up to 16 sets a row, when one must go

# The memory's table holds, for each set, four lines of WAYS words, one word per record in each: keys,
# metas, data rows and stamps; finding a record and reading or writing what a decision needs touch
# that block of memory only, and the ``data`` rows (the pair bits of long hands) seldom.
# A record's slot is set * WAYS + way.
KEY, META, ROW, STAMP = 0, 1, 2, 3  #: the fields (``_field``)
FIELDS = 4
SET_WORDS = FIELDS * WAYS
# A meta word: the card taken from the pile this turn plus one (0: none) in bits 0-5; SPILLED; then
# ENTRIES pairs played this hand, ENTRY_BITS each (a pair's bit number plus one; 0: empty). When they
# are full, they and the next pair go to the record's row of ``data`` (zeroed when it first does).
PILE_MASK = 0x3F
SPILLED = 1 << 6  #: the record's row of ``data`` holds pairs too
ENTRY0, ENTRY_BITS, ENTRIES = 7, 11, 5
ENTRY_MASK = (1 << ENTRY_BITS) - 1
# Beside the table, a filter word per set (8 bytes a set, which stay in cache where the table does
# not): byte w is a hash byte of way w's key (0x80-0xFF; 0 when free), so that looking up a key that is
# not there, as most of a discard's look-ups are, seldom reads the set's keys
BYTE_MUL = 0x2545F4914F6CDD1D
LOW_BYTES = 0x0101010101010101
HIGH_BITS = 0x8080808080808080 - (1 << 64)  #: the top bit of each byte, as a signed 64-bit number
NO_DISCARD = 1 << 30  #: above any deadwood (``_discard``)


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
        table = np.empty((sets, FIELDS, WAYS), np.int64)
        # the keys: the ten cards kept (bits 0-51) and a tag of what is fixed during a hand (bits 52-62)
        table[:, KEY] = EMPTY
        table[:, META] = 0
        # each slot owns one row of ``data`` (a record that moves to another slot swaps rows with it,
        # so its pair bits never move)
        table[:, ROW] = np.arange(sets * WAYS).reshape(sets, WAYS)
        table[:, STAMP] = 0  # the call number of the record's last write (a set's oldest record goes)
        self.table = table.reshape(-1)
        self.filter = np.zeros(sets, np.int64)
        self.data = np.zeros((sets * WAYS, PAIR_WORDS), np.int64)

    @property
    def sets(self) -> int:
        """Sets of the memory (a power of two)."""
        return len(self.filter)

    def _grow(self, sets: int) -> None:
        """At least ``sets`` sets (a power of two), the records kept."""
        if self.sets >= sets:
            return
        new = self.sets
        while new < sets:
            new *= 2
        old = (self.table, self.filter, self.data)
        self._alloc(new)
        _rehash(*old, self.table, self.filter, self.data)

    def act(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        obs, mask = check_batch(observations, action_masks)
        n = len(obs)
        # two sets (16 records) per row of the largest batch; a game holds one live record per seat, so
        # a set fills with records of ended hands, the oldest of which goes first. Should a record that
        # was in use lately have to go all the same (more games than rows, e.g. an opponent called on a
        # few of many games), the memory doubles.
        if n > self.rows:
            self.rows = n
            self._grow(2 * n)
        out = np.empty(n, np.int64)
        self.calls += 1
        recent = eaai_simple_actions(obs, mask, self.rng.random(n), self.calls, self.table, self.filter, self.data,
                                     out)
        if recent and self.sets < 16 * self.rows:
            self._grow(2 * self.sets)
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
def _field(slot, field):
    """Index in the table of a field of the record in ``slot``."""
    return (slot // WAYS) * SET_WORDS + field * WAYS + slot % WAYS


@kernel(inline="always")
def _key_byte(key):
    """A key's byte in its set's filter word: 0x80-0xFF, a hash of all its bits (0 marks a free way)."""
    return (((key * BYTE_MUL) >> 56) & 0x7F) | 0x80


@kernel
def _find(table, filt, key):
    """The slot of ``key``'s record, -1 if there is none."""
    s = _set_of(key, len(filt))
    x = filt[s] ^ (_key_byte(key) * LOW_BYTES)
    if ((x - LOW_BYTES) & ~x & HIGH_BITS) == 0:  # no way's byte is the key's: it is not there
        return -1
    base = s * SET_WORDS + KEY * WAYS
    for w in range(WAYS):
        if table[base + w] == key:
            return s * WAYS + w
    return -1


@kernel
def _find_drawn(table, filt, hand, tag, first):
    """(slot, drawn card) of the record of the ten cards held before the draw, given the eleven held
    after it (``hand``) and the card ``first`` to try first (-1 none); (-1, -1) if there is none."""
    if first >= 0:
        slot = _find(table, filt, (hand ^ (1 << first)) | tag)
        if slot >= 0:
            return slot, first
    # a card drawn outside SET_CARDS leaves the set in place: its record is in the set of the eleven
    s = _set_of(hand | tag, len(filt))
    base = s * SET_WORDS + KEY * WAYS
    for w in range(WAYS):
        key = table[base + w]
        extra = (hand | tag) & ~key
        if key >= 0 and key & ~(hand | tag) == 0 and extra & (extra - 1) == 0:
            drawn = 0
            while (extra >> drawn) & 1 == 0:
                drawn += 1
            return s * WAYS + w, drawn
    held = hand & SET_CARDS  # a drawn card among SET_CARDS: try each, lowest first
    while held:
        c = 0
        while (held >> c) & 1 == 0:
            c += 1
        held ^= 1 << c
        slot = _find(table, filt, (hand ^ (1 << c)) | tag)
        if slot >= 0:
            return slot, c
    return -1, -1


@kernel
def _insert(table, filt, key, now):
    """(slot, whether a record written lately had to go) of a new record for ``key``: a free one of
    its set, else the set's oldest. Its meta and row are the caller's to write."""
    s = _set_of(key, len(filt))
    keys, stamps = s * SET_WORDS + KEY * WAYS, s * SET_WORDS + STAMP * WAYS
    way = 0
    for w in range(WAYS):
        if table[keys + w] == EMPTY:
            way = w
            break
        if table[stamps + w] < table[stamps + way]:
            way = w
    recent = table[keys + way] != EMPTY and now - table[stamps + way] <= RECENT_CALLS
    table[keys + way], table[stamps + way] = key, now
    filt[s] = (filt[s] & ~(0xFF << (8 * way))) | (_key_byte(key) << (8 * way))
    return s * WAYS + way, recent


@kernel
def _forget(table, filt, slot):
    """Frees ``slot``."""
    table[_field(slot, KEY)] = EMPTY
    filt[slot // WAYS] &= ~(0xFF << (8 * (slot % WAYS)))


@kernel
def _rehash(table, filt, data, ntable, nfilt, ndata):
    """The records of ``table`` into the empty ``ntable``, in slot order, as if inserted at their stamps."""
    for i in range(len(filt) * WAYS):
        key = table[_field(i, KEY)]
        if key != EMPTY:
            new, _ = _insert(ntable, nfilt, key, table[_field(i, STAMP)])
            ntable[_field(new, META)] = table[_field(i, META)]
            ndata[ntable[_field(new, ROW)], :] = data[table[_field(i, ROW)], :]


@kernel(inline="always")
def _pair_bit(a, b):
    """Bit number of the unordered pair {a, b}, a != b."""
    lo, hi = min(a, b), max(a, b)
    return hi * (hi - 1) // 2 + lo


@kernel
def _played(meta, data, r, bit):
    """Whether the pair ``bit`` is among those of the record with this meta and data row ``r``."""
    for i in range(ENTRIES):
        if (meta >> (ENTRY0 + ENTRY_BITS * i)) & ENTRY_MASK == bit + 1:
            return True
    return meta & SPILLED != 0 and (data[r, bit // 64] >> (bit % 64)) & 1 == 1


@kernel
def _play(meta, data, r, bit):
    """The meta of the record (data row ``r``) once it has played the pair ``bit``."""
    for i in range(ENTRIES):
        if (meta >> (ENTRY0 + ENTRY_BITS * i)) & ENTRY_MASK == 0:
            return meta | ((bit + 1) << (ENTRY0 + ENTRY_BITS * i))
    if meta & SPILLED == 0:  # the entries are full: they and this pair go to the data row
        data[r, :] = 0
    for i in range(ENTRIES):
        e = ((meta >> (ENTRY0 + ENTRY_BITS * i)) & ENTRY_MASK) - 1
        data[r, e // 64] |= 1 << (e % 64)
    data[r, bit // 64] |= 1 << (bit % 64)
    return (meta & PILE_MASK) | SPILLED


# ------------------------------------------------------------------ one row of the batch, in place
# (a row view, obs[b], would cost a reference count each)

@kernel
def _hand_bits(obs, b):
    """The cards held in row b, as bits 0-51."""
    bits = 0
    for c in range(NUM_CARDS):
        if obs[b, k.OWN_HAND + c] > 0.5:
            bits |= 1 << c
    return bits


@kernel
def _hand_tag(obs, b):
    """Bits 52-62 of a key: a hash of what stays fixed during a hand (dealer, knock limit, the three
    score features), so that games at other scores never share a record."""
    limit = 0  # k.row_knock_limit
    for i in range(k.NUM_KNOCK_LIMITS):
        if obs[b, k.KNOCK_LIMIT + i] > 0.5:
            limit = i
            break
    ctx = (1 if obs[b, IS_DEALER] > 0.5 else 0) + 2 * limit
    for i in range(3):
        ctx = ctx * 1000003 + int(obs[b, k.SCORES + i] * 1048576.0 + 0.5)
    ctx *= -4658895280553007687
    return ((ctx >> 40) & 0x7FF) << NUM_CARDS


@kernel
def _phase(obs, b):
    """k.row_phase."""
    for i in range(k.NUM_PHASES):
        if obs[b, k.PHASE + i] > 0.5:
            return i
    return k.NO_DECISION


@kernel
def _first(obs, b, offset):
    """The first card set in a 52-card field of row b, -1 if none (k.row_top for discard_top)."""
    for c in range(NUM_CARDS):
        if obs[b, offset + c] > 0.5:
            return c
    return -1


@kernel
def _draw_action(take, mask, b):
    """k.draw_action."""
    if take and mask[b, k.TAKE_DISCARD]:
        return k.TAKE_DISCARD
    if mask[b, k.PASS]:
        return k.PASS
    return k.DRAW_STOCK


@kernel
def _after(obs, b, c):
    """k.row_after_discard: deadwood of the hand without card c (NOT_HELD for cards not held)."""
    x = obs[b, k.DISCARD_DEADWOOD + c]
    return k.NOT_HELD if x <= 0.0 else int(k.DEADWOOD_SCALE * (1.0 - x) + 0.5)


# ------------------------------------------------------------------ decisions

@kernel(inline="always")
def _in_a_meld(hand, c):
    """``in_a_meld`` on the hand's cards as bits 0-51."""
    r, s = c % NUM_RANKS, c // NUM_RANKS
    same_rank = 0
    for t in range(NUM_SUITS):
        if t != s and (hand >> (t * NUM_RANKS + r)) & 1:
            same_rank += 1
    if same_rank >= 2:
        return True
    m = (hand >> (s * NUM_RANKS)) & ((1 << NUM_RANKS) - 1)
    below1 = r >= 1 and (m >> (r - 1)) & 1 == 1
    below2 = r >= 2 and (m >> (r - 2)) & 1 == 1
    above1 = r + 1 < NUM_RANKS and (m >> (r + 1)) & 1 == 1
    above2 = r + 2 < NUM_RANKS and (m >> (r + 2)) & 1 == 1
    return (below2 and below1) or (below1 and above1) or (above1 and above2)


@kernel
def in_a_meld(ms, c):
    """Whether card c makes a meld with two or more cards of the hand ms (suit masks, c not held):
    the framework's ``willDrawFaceUpCard``."""
    hand = 0
    for t in range(NUM_SUITS):
        hand |= (ms[t] & ((1 << NUM_RANKS) - 1)) << (t * NUM_RANKS)
    return _in_a_meld(hand, c)


@kernel
def eaai_simple_actions(obs, mask, noise, now, table, filt, data, out):
    """Simple's action for each row into ``out`` ((B,) int64), reading and updating the memory
    (``table``, its filter ``filt`` and ``data``, see ``EaaiSimpleAgent``); ``noise`` (B,) floats in
    [0, 1) pick among tied discards, ``now`` is the call number stamped on the records written.
    Returns how many records in use lately had to make room."""
    recent = 0
    for b in range(obs.shape[0]):
        ph = _phase(obs, b)
        if ph == k.NO_DECISION:
            out[b] = _draw_action(False, mask, b)
            continue
        hand = _hand_bits(obs, b)
        if ph != k.DISCARD:  # offer, forced draw or draw: one card to take or not
            top = _first(obs, b, k.DISCARD_TOP)
            take = False
            if top >= 0 and (ph == k.OFFER_NONDEALER or ph == k.OFFER_DEALER or ph == k.DRAW):
                take = _in_a_meld(hand, top)
            a = _draw_action(take, mask, b)
            out[b] = a
            if a == k.DRAW_STOCK and ph == k.DRAW and int(obs[b, k.STOCK_SIZE] * k.STOCK_SCALE + 0.5) < k.FULL_STOCK:
                continue  # not its first decision of the hand: its record, from its last discard, stands
            pile = top + 1 if a == k.TAKE_DISCARD else 0
            tag = _hand_tag(obs, b)
            slot = _find(table, filt, hand | tag)
            if slot < 0 or ph == k.OFFER_NONDEALER or ph == k.OFFER_DEALER:  # a new hand: nothing played yet
                if slot < 0:
                    slot, lately = _insert(table, filt, hand | tag, now)
                    recent += lately
                table[_field(slot, META)] = pile
            else:
                i = _field(slot, META)
                table[i] = (table[i] & ~PILE_MASK) | pile
            continue
        # discard: the record is the one of the ten cards held before the draw; the card the rules
        # forbid to discard (taken from the pile) is tried first as the drawn card
        tag = _hand_tag(obs, b)
        forbidden = -1
        for c in range(NUM_CARDS - 1, -1, -1):
            if obs[b, CANNOT_DISCARD + c] > 0.5:
                forbidden = c
                break
        slot, drawn = _find_drawn(table, filt, hand, tag, forbidden)
        if slot >= 0:
            meta, r = table[_field(slot, META)], table[_field(slot, ROW)]
            from_pile = (meta & PILE_MASK) - 1
        else:  # no memory of this hand (the agent joined mid-hand): the card the rules forbid, if any
            meta, r, drawn, from_pile = 0, -1, forbidden, forbidden
        # the cards it may throw: legal, not the card taken from the pile; with the pair guard (a card
        # taken from the pile: one drawn from the stock was never held before, so no pair can repeat)
        # also not a card that would play a {drawn, discarded} pair again. Should the guard leave none
        # (the Java player would throw), it is dropped.
        legal = 0
        for c in range(NUM_CARDS):
            if mask[b, c] and c != from_pile:
                legal |= 1 << c
        allowed = legal
        if slot >= 0 and from_pile >= 0 and drawn >= 0:
            for c in range(NUM_CARDS):
                if (legal >> c) & 1 and c != drawn and _played(meta, data, r, _pair_bit(drawn, c)):
                    allowed &= ~(1 << c)
            if allowed == 0:
                allowed = legal
        choice = _discard(obs, b, noise[b], allowed)
        a = choice
        if mask[b, k.KNOCK + choice]:  # knocks as soon as it may (k.knock_or_discard)
            a = k.KNOCK + choice
        out[b] = a
        if a == choice:  # a discard: the hand goes on, remember the pair under the ten cards kept
            new, lately = _insert(table, filt, (hand ^ (1 << choice)) | tag, now)
            recent += lately
            if slot >= 0 and slot != new:  # the record moves: its data row goes with it
                _forget(table, filt, slot)
                i, j = _field(slot, ROW), _field(new, ROW)
                table[i], table[j] = table[j], table[i]
            elif slot < 0:  # a new record: no pairs yet
                r = table[_field(new, ROW)]
            meta &= ~PILE_MASK
            if drawn >= 0 and drawn != choice:
                meta = _play(meta, data, r, _pair_bit(drawn, choice))
            table[_field(new, META)] = meta
        elif slot >= 0:  # a knock ends the hand
            _forget(table, filt, slot)
    return recent


@kernel
def _discard(obs, b, u, allowed):
    """The ``getDiscard`` of the framework: among the ``allowed`` cards (bits), uniformly one of those
    leaving the least deadwood (``u`` in [0, 1) picks it, in card order). -1 when none is allowed."""
    best = NO_DISCARD
    for c in range(NUM_CARDS):
        d = _after(obs, b, c) if (allowed >> c) & 1 else NO_DISCARD
        best = min(best, d)
    if best == NO_DISCARD:
        return -1
    ties, tied = 0, 0
    for c in range(NUM_CARDS):
        if (allowed >> c) & 1 and _after(obs, b, c) == best:
            ties += 1
            tied |= 1 << c
    j = min(int(u * ties), ties - 1)
    for _ in range(j):  # the j-th tied card
        tied &= tied - 1
    c = 0
    while (tied >> c) & 1 == 0:
        c += 1
    return c


__all__ = ["EaaiSimpleAgent", "eaai_simple_actions", "in_a_meld"]
