"""A slow, obvious reference implementation of one game of Oklahoma Gin (``docs/RULES.md``).

This module exists to check the fast engine (``okgin_env.game.core`` and the numba meld
kernels in ``okgin_env.game.melds``) against something that is *obviously* right. It is
written for clarity, not speed, and shares no code with the engine beyond the card
encoding (``cards.py``), the rule options (``rules.py``), the action ids (``actions.py``) and
the phase names (``constants.Phase``). Nothing here is used by the environment itself.

Melds and deadwood are computed by brute force: list every set and every run that the
hand contains, then enumerate every collection of pairwise disjoint melds (every
"arrangement"), and take the minimum. The showdown enumerates every minimal
arrangement of the knocker and, for each, every arrangement of the defender's own
melds followed by every possible lay-off.

Public interface
----------------
``reference_deadwood(cards) -> int``
    Minimal deadwood of any number of cards.
``reference_showdown(knocker_cards, defender_cards) -> (K, D)``
    Knocker's deadwood and the defender's deadwood after lay-offs (none on gin),
    with the knocker tie-break of docs/RULES.md.
``eaai_showdown_details(knocker_cards, defender_cards, seed)``
    The EAAI framework's showdown (``showdown="eaai"``): declared melds drawn from the deal's
    seed (``deal_seed``), then greedy lay-offs in the framework's card order.
``ReferenceGame(rules, deck, dealer, episode="hand", next_deck=None)``
    One episode (a hand or a whole game), driven by ``step(action)`` with the
    action ids of docs/RULES.md, exposing ``current_player``, ``phase``,
    ``legal_actions()``, ``hands``, ``scores``, ``over``, ``truncated``,
    ``last_result`` and the public-knowledge sets of the observation (``okgin_env.game.observation``).
"""

from __future__ import annotations

import random
from functools import lru_cache
from itertools import combinations
from typing import Callable, Iterable, Sequence

import numpy as np

from okgin_env.game.actions import DRAW_STOCK, KNOCK, PASS, TAKE_DISCARD
from okgin_env.game.cards import HAND_SIZE, NUM_CARDS, NUM_RANKS, NUM_SUITS, card_text, parse_deck
from okgin_env.game.constants import Phase  # the phases' names and numbers are the spec's, shared like the action ids
from okgin_env.game.rules import Rules

#: cards dealt + upcard; the stock starts at this deck position
STOCK_START = 2 * HAND_SIZE + 1
#: initial stock size (31)
STOCK_SIZE = NUM_CARDS - STOCK_START
#: the hand is walled when an ordinary discard leaves this many cards in the stock
WALL_STOCK = 2
GAME_WIN_BONUS = 100
LINE_BONUS = 25
#: discard_deadwood observation: (DEADWOOD_SCALE - deadwood) / DEADWOOD_SCALE
DEADWOOD_SCALE = 110.0


# --------------------------------------------------------------------------------------
# Cards, written out without the numpy tables of cards.py
# --------------------------------------------------------------------------------------
def rank(card: int) -> int:
    return card % NUM_RANKS


def suit(card: int) -> int:
    return card // NUM_RANKS


def points(card: int) -> int:
    """Ace 1, number cards their number, T J Q K 10."""
    return min(rank(card) + 1, 10)


def total_points(cards: Iterable[int]) -> int:
    return sum(points(c) for c in cards)


def knock_value(card: int) -> int:
    """Knock value of an upcard: A -> 0, 2-9 -> face, T J Q K -> 10."""
    r = rank(card)
    return 0 if r == 0 else min(r + 1, 10)


# --------------------------------------------------------------------------------------
# Melds: every set and run contained in a hand, every arrangement, minimal deadwood
# --------------------------------------------------------------------------------------
def is_set(meld: Iterable[int]) -> bool:
    """3 or 4 cards of one rank."""
    meld = list(meld)
    return len(meld) in (3, 4) and len({rank(c) for c in meld}) == 1


def is_run(meld: Iterable[int]) -> bool:
    """3 or more cards of one suit in consecutive ranks (ace low only)."""
    meld = sorted(meld)
    if len(meld) < 3 or len({suit(c) for c in meld}) != 1:
        return False
    return all(rank(b) == rank(a) + 1 for a, b in zip(meld, meld[1:]))


def is_meld(meld: Iterable[int]) -> bool:
    return is_set(meld) or is_run(meld)


def melds_in(cards: Iterable[int]) -> list[frozenset[int]]:
    """Every set and every run whose cards are all in ``cards`` (overlapping ones included)."""
    held = set(cards)
    out: list[frozenset[int]] = []
    for r in range(NUM_RANKS):  # sets: every 3- and 4-card subset of one rank
        same_rank = [s * NUM_RANKS + r for s in range(NUM_SUITS) if s * NUM_RANKS + r in held]
        for size in (3, 4):
            out.extend(frozenset(combo) for combo in combinations(same_rank, size))
    for s in range(NUM_SUITS):  # runs: every interval of >= 3 consecutive ranks of one suit
        for lo in range(NUM_RANKS):
            run: list[int] = []
            for r in range(lo, NUM_RANKS):  # grow the run upwards from lo while the cards are held
                if s * NUM_RANKS + r not in held:
                    break
                run.append(s * NUM_RANKS + r)
                if len(run) >= 3:
                    out.append(frozenset(run))
    assert all(is_meld(m) for m in out)
    return out


@lru_cache(maxsize=1 << 16)
def _arrangements(hand: frozenset[int]) -> tuple[tuple[frozenset[int], ...], ...]:
    melds = melds_in(hand)
    result: list[tuple[frozenset[int], ...]] = []

    def extend(start: int, used: frozenset[int], chosen: tuple[frozenset[int], ...]) -> None:
        result.append(chosen)
        for j in range(start, len(melds)):
            if not (melds[j] & used):
                extend(j + 1, used | melds[j], chosen + (melds[j],))

    extend(0, frozenset(), ())
    return tuple(result)


def arrangements(cards: Iterable[int]) -> tuple[tuple[frozenset[int], ...], ...]:
    """Every collection of pairwise disjoint melds within ``cards``, the empty one included.

    Each collection appears exactly once (melds are chosen in list order).
    """
    return _arrangements(frozenset(int(c) for c in cards))


def arrangement_deadwood(cards: Iterable[int], melds: Iterable[frozenset[int]]) -> int:
    covered: set[int] = set().union(*melds) if melds else set()
    return total_points(c for c in cards if c not in covered)


@lru_cache(maxsize=1 << 16)
def _deadwood(hand: frozenset[int]) -> int:
    return min(arrangement_deadwood(hand, arr) for arr in _arrangements(hand))


def reference_deadwood(cards: Iterable[int]) -> int:
    """Minimal deadwood of ``cards`` (any number of cards), over every arrangement."""
    return _deadwood(frozenset(int(c) for c in cards))


def reference_deadwood_after_discard(cards: Iterable[int]) -> dict[int, int]:
    """For each card c of ``cards``: the minimal deadwood of the other cards."""
    return dict(_deadwood_after_discard(frozenset(int(c) for c in cards)))


@lru_cache(maxsize=1 << 14)
def _deadwood_after_discard(hand: frozenset[int]) -> tuple[tuple[int, int], ...]:
    """(card, deadwood without it) pairs.

    An arrangement of the hand without c is exactly an arrangement of the hand that
    does not use c, so the arrangements of the whole hand are enumerated once.
    """
    arrs = _arrangements(hand)
    total = total_points(hand)
    best = {c: total - points(c) for c in hand}  # the empty arrangement
    for arr in arrs:
        covered = set().union(*arr) if arr else set()
        covered_points = total_points(covered)
        for c in hand - covered:
            best[c] = min(best[c], total - points(c) - covered_points)
    return tuple(sorted(best.items()))


def minimal_arrangements(cards: Iterable[int]) -> list[tuple[frozenset[int], ...]]:
    """Every arrangement of ``cards`` with the minimal deadwood."""
    hand = frozenset(int(c) for c in cards)
    best = _deadwood(hand)
    return [arr for arr in _arrangements(hand) if arrangement_deadwood(hand, arr) == best]


# --------------------------------------------------------------------------------------
# Showdown: lay-offs, the defender's joint optimisation, the knocker's tie-break
# --------------------------------------------------------------------------------------
def layoffs(knocker_melds: Iterable[frozenset[int]], cards: Iterable[int]) -> set[int]:
    """Every card of ``cards`` that can be laid off onto the knocker's melds.

    A fourth card onto a set of three; onto a run, the cards extending it at either
    end, one after another (a card laid off may itself be extended). Laying off never
    blocks another lay-off, so the largest possible set of lay-offs is returned.
    """
    free = set(cards)
    laid: set[int] = set()
    for meld in knocker_melds:
        if is_set(meld):
            if len(meld) == 3:
                r = rank(next(iter(meld)))
                fourth = [s * NUM_RANKS + r for s in range(NUM_SUITS) if s * NUM_RANKS + r not in meld][0]
                if fourth in free:
                    laid.add(fourth)
        else:
            s = suit(next(iter(meld)))
            lo = min(rank(c) for c in meld)
            hi = max(rank(c) for c in meld)
            r = lo - 1
            while r >= 0 and s * NUM_RANKS + r in free:  # extend downwards
                laid.add(s * NUM_RANKS + r)
                r -= 1
            r = hi + 1
            while r < NUM_RANKS and s * NUM_RANKS + r in free:  # extend upwards
                laid.add(s * NUM_RANKS + r)
                r += 1
    return laid


def defender_deadwood(knocker_melds: Sequence[frozenset[int]], defender_cards: Iterable[int]) -> int:
    """The defender's least deadwood: own melds and lay-offs chosen jointly.

    Every arrangement of the defender's own melds is tried; the cards it leaves out
    are then laid off wherever possible.
    """
    hand = frozenset(int(c) for c in defender_cards)
    best = None
    for arr in _arrangements(hand):
        covered = set().union(*arr) if arr else set()
        left = hand - covered
        dw = total_points(left - layoffs(knocker_melds, left))
        best = dw if best is None else min(best, dw)
    assert best is not None
    return best


def showdown_details(knocker_cards: Iterable[int], defender_cards: Iterable[int]):
    """(K, D, knocker_melds) of the showdown, per docs/RULES.md "Showdown".

    K is the knocker's minimal deadwood. On gin (K = 0) the defender only lays out
    their own melds. Otherwise, among the knocker's minimal arrangements, the one
    leaving the defender the most deadwood after the defender's best reply is used
    (the first such in enumeration order is returned with it).
    """
    knocker = frozenset(int(c) for c in knocker_cards)
    defender = frozenset(int(c) for c in defender_cards)
    assert not (knocker & defender)
    candidates = minimal_arrangements(knocker)
    k = arrangement_deadwood(knocker, candidates[0])
    if k == 0:
        return 0, reference_deadwood(defender), candidates[0]
    best_d, best_arr = -1, None
    for arr in candidates:
        d = defender_deadwood(arr, defender)
        if d > best_d:
            best_d, best_arr = d, arr
    return k, best_d, best_arr


def reference_showdown(knocker_cards: Iterable[int], defender_cards: Iterable[int]) -> tuple[int, int]:
    """(K, D): the knocker's deadwood and the defender's deadwood after lay-offs."""
    k, d, _ = showdown_details(knocker_cards, defender_cards)
    return k, d


# --------------------------------------------------------------------------------------
# The EAAI framework's showdown (Rules(showdown="eaai"); docs/RULES.md "Showdown")
# --------------------------------------------------------------------------------------
MASK64 = (1 << 64) - 1
#: the framework's suits in its card-id order (clubs, hearts, spades, diamonds), as okgin suits
EAAI_SUIT_ORDER = (3, 1, 0, 2)


def mix64(z: int) -> int:
    """splitmix64's finaliser, on Python ints kept to 64 bits."""
    z = (z + 0x9E3779B97F4A7C15) & MASK64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
    return z ^ (z >> 31)


def deal_seed(deck: Sequence[int]) -> int:
    """The deal's random numbers: a hash of its 52-card order."""
    h = 0
    for c in deck:
        h = mix64(h ^ int(c))
    return h


def eaai_card_order() -> list[int]:
    """okgin card indices in the framework's card-id order: clubs A-K, hearts, spades, diamonds."""
    return [s * NUM_RANKS + r for s in EAAI_SUIT_ORDER for r in range(NUM_RANKS)]


def eaai_meld_list(cards: Iterable[int]) -> list[frozenset[int]]:
    """Every meld in ``cards`` in the framework's order (``cardsToAllMeldBitstrings``): runs by suit
    (clubs, hearts, spades, diamonds), lowest rank, length; then sets by rank: the three without
    clubs, without hearts, without spades, without diamonds, then all four."""
    held = set(cards)
    out = []
    for s in EAAI_SUIT_ORDER:
        for lo in range(NUM_RANKS):
            for hi in range(lo + 2, NUM_RANKS):
                run = frozenset(s * NUM_RANKS + r for r in range(lo, hi + 1))
                if run <= held:
                    out.append(run)
    for r in range(NUM_RANKS):
        four = [s * NUM_RANKS + r for s in range(NUM_SUITS)]
        for without in [*(s * NUM_RANKS + r for s in EAAI_SUIT_ORDER), None]:
            meld = frozenset(c for c in four if c != without)
            if meld <= held:
                out.append(meld)
    return out


def eaai_arrangements(cards: Iterable[int]) -> list[tuple[frozenset[int], ...]]:
    """The least-deadwood arrangements of ``cards``, in the order the draw counts them: the empty one,
    then disjoint melds of ``eaai_meld_list`` by increasing index, depth first."""
    hand = frozenset(int(c) for c in cards)
    melds = eaai_meld_list(hand)
    found: list[tuple[frozenset[int], ...]] = []

    def walk(start: int, used: frozenset[int], chosen: tuple[frozenset[int], ...]) -> None:
        found.append(chosen)
        for i in range(start, len(melds)):
            if not melds[i] & used:
                walk(i + 1, used | melds[i], chosen + (melds[i],))

    walk(0, frozenset(), ())
    least = min(arrangement_deadwood(hand, arr) for arr in found)
    return [arr for arr in found if arrangement_deadwood(hand, arr) == least]


def eaai_showdown_details(knocker_cards: Iterable[int], defender_cards: Iterable[int], seed: int):
    """(K, D, the knocker's melds as laid out after lay-offs, the defender's own melds, the cards
    laid off as {card: index of the knocker's meld}) of the framework's showdown."""
    knocker = frozenset(int(c) for c in knocker_cards)
    defender = frozenset(int(c) for c in defender_cards)
    assert not (knocker & defender)
    listing = eaai_meld_list(knocker)
    options = eaai_arrangements(knocker)
    # declared in the framework's HashSet order: listing position modulo 4, then position
    mine = [set(m) for m in sorted(options[mix64(seed ^ 1) % len(options)],
                                   key=lambda m: (listing.index(m) % 4, listing.index(m)))]
    k = total_points(knocker - set().union(*mine)) if mine else total_points(knocker)
    options = eaai_arrangements(defender)
    own = options[mix64(seed ^ 2) % len(options)]
    left = set(defender - (frozenset().union(*own) if own else frozenset()))
    laid: dict[int, int] = {}
    while k > 0:  # never on gin
        fit = next(((c, i) for c in eaai_card_order() if c in left for i, m in enumerate(mine) if is_meld(m | {c})),
                   None)
        if fit is None:
            break
        c, i = fit
        mine[i].add(c)
        left.remove(c)
        laid[c] = i
    return k, total_points(left), [frozenset(m) for m in mine], list(own), laid


def hand_points(k: int, d: int, gin_bonus: int, undercut_bonus: int) -> tuple[bool, int]:
    """(knocker_wins, points) of a showdown with deadwoods K and D, before doubling."""
    if k == 0:
        return True, d + gin_bonus
    if k < d:
        return True, d - k
    return False, k - d + undercut_bonus


# --------------------------------------------------------------------------------------
# One episode: a hand, or a game of hands
# --------------------------------------------------------------------------------------
class ReferenceGame:
    """One episode of Oklahoma Gin, played by explicit actions, with obvious bookkeeping.

    ``deck``/``dealer`` set the first hand (docs/RULES.md "Replaying a deal"). In game
    episodes every later hand is dealt from ``next_deck()`` (by default a shuffle from
    ``random.Random(seed)``).
    """

    def __init__(
        self,
        rules: Rules | None = None,
        deck: Sequence[int] | Sequence[str] | None = None,
        dealer: int = 0,
        episode: str = "hand",
        next_deck: Callable[[], Sequence[int]] | None = None,
        seed: int | None = None,
    ) -> None:
        if episode not in ("hand", "game"):
            raise ValueError(f"episode must be 'hand' or 'game', got {episode!r}")
        self.rules = rules if rules is not None else Rules()
        self.episode = episode
        self._rng = random.Random(seed)
        self.next_deck = next_deck if next_deck is not None else self._shuffled_deck
        self.scores = [0, 0]  # game totals (game episodes) / the hand's points (hand episodes)
        self.hands_won = [0, 0]
        self.over = False
        self.terminated = False
        self.truncated = False
        self.last_result: dict | None = None
        self.last_rewards = [0, 0]
        self.hand_over = False  # a hand ended in the last step
        self.hand_count = 0
        self.hand_log: list[dict] = []  # per hand: deck, dealer, actions (for bug reports)
        self._deal(self._shuffled_deck() if deck is None else deck, dealer)

    # ---- dealing ---------------------------------------------------------------------
    def _shuffled_deck(self) -> list[int]:
        deck = list(range(NUM_CARDS))
        self._rng.shuffle(deck)
        return deck

    def _deal(self, deck: Sequence[int] | Sequence[str], dealer: int) -> None:
        if isinstance(dealer, bool) or dealer not in (0, 1):
            raise ValueError(f"dealer must be 0 or 1, got {dealer!r}")
        self.deck = [int(c) for c in parse_deck(deck)]
        self.dealer = int(dealer)
        self.hand_count += 1
        nondealer = 1 - self.dealer
        self.hands: list[set[int]] = [set(), set()]
        for i in range(2 * HAND_SIZE):  # one at a time, alternately, non-dealer first
            self.hands[nondealer if i % 2 == 0 else self.dealer].add(self.deck[i])
        self.upcard = self.deck[2 * HAND_SIZE]
        self.pile = [self.upcard]  # bottom -> top
        self.stock_next = STOCK_START  # deck index of the top of the stock
        kl = self.rules.knock_limit
        self.knock_limit = knock_value(self.upcard) if kl == "upcard" else int(kl)
        self.phase = Phase.OFFER_NONDEALER
        self.current_player = nondealer
        self.taken_card = -1  # the card taken from the pile this turn, -1 none
        self.turns = 0
        # public knowledge, per player
        self.taken_and_held: list[set[int]] = [set(), set()]
        self.discarded: list[set[int]] = [set(), set()]
        self.declined: list[set[int]] = [set(), set()]
        self.hand_log.append({"deck": list(self.deck), "dealer": self.dealer, "actions": []})

    @property
    def stock_size(self) -> int:
        return NUM_CARDS - self.stock_next

    @property
    def stock(self) -> list[int]:
        """Stock cards, top first."""
        return self.deck[self.stock_next :]

    # ---- legal actions -----------------------------------------------------------------
    def legal_actions(self) -> list[int]:
        """Sorted legal action ids of the player to move ([] when over)."""
        if self.over:
            return []
        if self.phase in (Phase.OFFER_NONDEALER, Phase.OFFER_DEALER):
            return [TAKE_DISCARD, PASS]
        if self.phase == Phase.FORCED_DRAW:
            return [DRAW_STOCK]
        if self.phase == Phase.DRAW:
            return [DRAW_STOCK, TAKE_DISCARD]
        assert self.phase == Phase.DISCARD
        hand = self.hands[self.current_player]
        assert len(hand) == HAND_SIZE + 1
        after = reference_deadwood_after_discard(hand)
        actions = []
        for c in sorted(hand):
            if c == self.taken_card and not self.rules.discard_taken_card:
                continue
            actions.append(c)
            if after[c] <= self.knock_limit:
                actions.append(KNOCK + c)
        return sorted(actions)

    # ---- playing -----------------------------------------------------------------------
    def step(self, action: int) -> list[int]:
        """Play ``action`` for the current player; returns the rewards [r0, r1] of this step."""
        action = int(action)
        legal = self.legal_actions()
        if action not in legal:
            raise ValueError(f"illegal action {action} in phase {self.phase}; legal: {legal}")
        self.hand_log[-1]["actions"].append(action)
        self.hand_over = False
        self.last_rewards = [0, 0]
        p = self.current_player
        if self.phase in (Phase.OFFER_NONDEALER, Phase.OFFER_DEALER):
            if action == TAKE_DISCARD:
                self._take_discard(p)
            else:  # pass
                self.declined[p].add(self.upcard)
                if self.phase == Phase.OFFER_NONDEALER:
                    self.phase, self.current_player = Phase.OFFER_DEALER, self.dealer
                else:
                    self.phase, self.current_player = Phase.FORCED_DRAW, 1 - self.dealer
        elif self.phase in (Phase.FORCED_DRAW, Phase.DRAW):
            if action == DRAW_STOCK:
                self.declined[p].add(self.pile[-1])  # drew the stock instead of the pile top
                self.hands[p].add(self.deck[self.stock_next])
                self.stock_next += 1
                self.taken_card = -1
                self.phase = Phase.DISCARD
            else:
                self._take_discard(p)
        else:  # Phase.DISCARD
            if action >= KNOCK:
                self._knock(p, action - KNOCK)
            else:
                self._discard(p, action)
        return self.last_rewards

    def _take_discard(self, p: int) -> None:
        card = self.pile.pop()
        self.hands[p].add(card)
        self.taken_and_held[p].add(card)
        self.taken_card = card
        self.phase = Phase.DISCARD

    def _discard(self, p: int, card: int) -> None:
        self.hands[p].remove(card)
        self.pile.append(card)
        self.discarded[p].add(card)
        self.taken_and_held[p].discard(card)
        self.taken_card = -1
        self.turns += 1
        if self.stock_size == WALL_STOCK:  # the wall is checked first
            self._void(truncated=False)
        elif self.turns == self.rules.max_turns_per_hand:
            self._void(truncated=True)
        else:
            self.current_player = 1 - p
            self.phase = Phase.DRAW

    def _knock(self, p: int, card: int) -> None:
        self.hands[p].remove(card)  # discarded face down
        self.turns += 1
        knocker, defender = p, 1 - p
        if self.rules.showdown == "eaai":
            k, d, *_ = eaai_showdown_details(self.hands[knocker], self.hands[defender], deal_seed(self.deck))
        else:
            k, d, _ = showdown_details(self.hands[knocker], self.hands[defender])
        assert k <= self.knock_limit
        knocker_wins, pts = hand_points(k, d, self.rules.gin_bonus, self.rules.undercut_bonus)
        spade_doubled = self.rules.spade_double and suit(self.upcard) == 0
        if spade_doubled:
            pts *= 2
        winner = knocker if knocker_wins else defender
        deadwood = [0, 0]
        deadwood[knocker], deadwood[defender] = k, d
        hand_pts = [0, 0]
        hand_pts[winner] = pts
        self._end_hand(
            knocker=knocker,
            winner=winner,
            gin=(k == 0),
            undercut=not knocker_wins,
            void=False,
            truncated_hand=False,
            deadwood=deadwood,
            points=hand_pts,
            spade_doubled=spade_doubled,
            knock_card=card,
        )

    def _void(self, truncated: bool) -> None:
        self._end_hand(
            knocker=-1,
            winner=-1,
            gin=False,
            undercut=False,
            void=True,
            truncated_hand=truncated,
            deadwood=[reference_deadwood(self.hands[0]), reference_deadwood(self.hands[1])],
            points=[0, 0],
            spade_doubled=False,
            knock_card=-1,
        )

    def _end_hand(self, **result) -> None:
        """Score a finished hand, then end the episode or deal the next hand."""
        self.hand_over = True
        before = list(self.scores)
        winner = result["winner"]
        game_over, game_winner = False, -1
        if self.episode == "hand":
            self.scores = list(result["points"])
            if result["void"]:
                self.truncated = result["truncated_hand"]
                self.terminated = not self.truncated
            else:
                self.hands_won[winner] += 1
                self.terminated = True
            self.over = True
        elif not result["void"]:
            self.hands_won[winner] += 1
            self.scores[winner] += result["points"][winner]
            if self.scores[winner] >= self.rules.target_score:
                game_over, game_winner = True, winner
                if self.rules.game_bonuses:
                    loser = 1 - winner
                    for q in (0, 1):
                        self.scores[q] += LINE_BONUS * self.hands_won[q]
                    self.scores[winner] += GAME_WIN_BONUS
                    if self.hands_won[loser] == 0:  # shutout
                        self.scores[winner] *= 2
                self.terminated = True
                self.over = True
        gains = [self.scores[q] - before[q] for q in (0, 1)]
        self.last_rewards = [gains[0] - gains[1], gains[1] - gains[0]]
        self.last_result = dict(
            result,
            hands=[set(h) for h in self.hands],
            scores=list(self.scores),
            game_over=game_over,
            game_winner=game_winner,
            upcard=self.upcard,
            dealer=self.dealer,
        )
        if self.over:
            self.phase = Phase.OVER
            self.current_player = -1
            return
        # game episodes: next hand
        if result["void"]:
            next_dealer = self.dealer
        elif self.rules.next_dealer == "winner":
            next_dealer = winner
        elif self.rules.next_dealer == "loser":
            next_dealer = 1 - winner
        else:  # alternate
            next_dealer = 1 - self.dealer
        self._deal(self.next_deck(), next_dealer)

    # ---- observation (okgin_env/game/observation.py) ------------------------------------------
    def observation_fields(self, player: int) -> dict[str, np.ndarray]:
        """The observation of ``player`` as named float32 fields (layout of observation.py).

        ``phase``, ``cannot_discard`` and ``discard_deadwood`` describe a decision, so
        they are zeros unless it is ``player``'s turn to decide.
        """
        opp = 1 - player
        to_move = not self.over and player == self.current_player

        def vec(cards: Iterable[int]) -> np.ndarray:
            v = np.zeros(NUM_CARDS, dtype=np.float32)
            v[list(cards)] = 1.0
            return v

        fields = {
            "own_hand": vec(self.hands[player]),
            "discard_top": vec(self.pile[-1:]),
            "pile_buried": vec(self.pile[:-1]),
            "opp_taken": vec(self.taken_and_held[opp]),
            "opp_discarded": vec(self.discarded[opp]),
            "opp_declined": vec(self.declined[opp]),
        }
        deciding_discard = to_move and self.phase == Phase.DISCARD
        cannot = []
        if deciding_discard and self.taken_card >= 0 and not self.rules.discard_taken_card:
            cannot = [self.taken_card]
        fields["cannot_discard"] = vec(cannot)
        dd = np.zeros(NUM_CARDS, dtype=np.float32)
        if deciding_discard:
            for c, dw in reference_deadwood_after_discard(self.hands[player]).items():
                dd[c] = (DEADWOOD_SCALE - dw) / DEADWOOD_SCALE
        fields["discard_deadwood"] = dd
        kl = np.zeros(11, dtype=np.float32)
        kl[self.knock_limit] = 1.0
        fields["knock_limit"] = kl
        fields["stock_size"] = np.array([self.stock_size / STOCK_SIZE], dtype=np.float32)
        ph = np.zeros(5, dtype=np.float32)
        if to_move:
            ph[self.phase] = 1.0
        fields["phase"] = ph
        fields["is_dealer"] = np.array([1.0 if player == self.dealer else 0.0], dtype=np.float32)
        sc = np.zeros(3, dtype=np.float32)
        if self.episode == "game":
            t = self.rules.target_score
            sc[:] = [self.scores[player] / t, self.scores[opp] / t, t / 100.0]
        fields["scores"] = sc
        return fields

    # ---- display -------------------------------------------------------------------------
    def __repr__(self) -> str:
        hands = " | ".join(" ".join(card_text(c) for c in sorted(h)) for h in self.hands)
        return (
            f"ReferenceGame(phase={self.phase}, player={self.current_player}, dealer={self.dealer}, "
            f"upcard={card_text(self.upcard)}, limit={self.knock_limit}, stock={self.stock_size}, "
            f"turns={self.turns}, scores={self.scores}, hands=[{hands}])"
        )
