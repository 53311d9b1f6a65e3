"""Oklahoma Gin as a batched numpy game: N independent games stepped by one call.

This module is the rule book in code (``docs/RULES.md`` is the binding text). In short:

* Deal: ten cards each, alternately, non-dealer first; the 21st card is the upcard and sets
  the knock limit (A -> 0, 2-9 -> face value, T-K -> 10) unless ``Rules.knock_limit`` fixes it.
* Upcard offer: non-dealer takes or passes, then the dealer; if both pass the non-dealer
  must draw from the stock.
* A turn: draw the stock or take the top discard, then discard or knock. A card taken from
  the pile may not be discarded in the same turn (``discard_taken_card``).
* Knock: the other ten cards must reach deadwood <= knock limit; zero deadwood is gin.
* Wall: an ordinary discard that leaves two cards in the stock voids the hand; so does the
  turn cap (``max_turns_per_hand``), reported as truncated in hand episodes.
* Showdown (``melds.showdown``): gin scores D + gin bonus; K < D scores D - K; otherwise the
  defender undercuts for K - D + undercut bonus; ``spade_double`` doubles a spade-upcard hand.
* Game episodes play hands until a total reaches ``target_score`` (``next_dealer``,
  ``game_bonuses``).

Everything per game lives in numpy arrays with the batch axis first (``GameState``); the
per-game logic runs in numba kernels that loop over the batch, so no Python code runs per
game or per card while stepping.

Kernel convention (here, in ``vector_kernels`` and in ``determinize``): a kernel takes the state
as one tuple (``GameState.arrays()``) and reads each field by its index constant
(``st[ST_HANDS]``), checked against the field names at import (``check_indices``); a step's
outputs (``out[OUT_FLAGS]``), a ``HandResult``'s arrays (``res[RES_INTS]``) and the vector
env's own arrays (``env[EV_SEAT]``) travel the same way, so two arrays of one type cannot be
swapped at a call site. The phases and the game's fixed numbers come from ``okgin_env.constants``.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from operator import attrgetter
from typing import Any, Sequence

import numpy as np
from numba import njit

from . import melds as _melds
from .actions import DRAW_STOCK, KNOCK, NUM_ACTIONS, PASS, TAKE_DISCARD, action_text
from .cards import HAND_SIZE, NUM_CARDS, NUM_RANKS, card_text, parse_deck
from .constants import (GAME_BONUS, LINE_BONUS, MAX_KNOCK_LIMIT, PH_DISCARD, PH_DRAW, PH_FORCED_DRAW,  # noqa: F401
                        PH_OFFER_DEALER, PH_OFFER_NONDEALER, PH_OVER, STOCK_START, UPCARD_POS, WALL, Phase)
from .observation import (CANNOT_DISCARD, DEADWOOD_SCALE, DISCARD_DEADWOOD, DISCARD_TOP, IS_DEALER, KNOCK_LIMIT,
                          OBS_FIELDS, OBS_SIZE, OPP_DECLINED, OPP_DISCARDED, OPP_TAKEN, OWN_HAND, PHASE, PILE_BURIED,
                          SCORES, STOCK_SCALE, STOCK_SIZE)
from .rules import NEXT_DEALER_CHOICES, Rules

EPISODES = ("hand", "game")


@dataclass
class GameState:
    """The whole batched state; every field has the batch axis first."""

    deck: np.ndarray  #: (N, 52) int8 deck order of the current hand
    hands: np.ndarray  #: (N, 2, 52) bool hands[b, player, card]
    stock_next: np.ndarray  #: (N,) int16 deck index of the next stock card; stock size = 52 - stock_next
    pile: np.ndarray  #: (N, 52) int8 discard pile, bottom -> top, first pile_size entries valid
    pile_size: np.ndarray  #: (N,) int16
    dealer: np.ndarray  #: (N,) int8 player id of the dealer
    current_player: np.ndarray  #: (N,) int8 player to move, -1 when the episode is over
    phase: np.ndarray  #: (N,) int8 Phase
    taken_card: np.ndarray  #: (N,) int8 card taken from the pile this turn, -1 none
    knock_limit: np.ndarray  #: (N,) int8 this hand's knock limit 0..10
    turns: np.ndarray  #: (N,) int16 completed turns this hand
    scores: np.ndarray  #: (N, 2) int32 running totals (hand episodes: this hand's points)
    hands_won: np.ndarray  #: (N, 2) int32 hands won this game
    taken: np.ndarray  #: (N, 2, 52) bool cards the player took from the pile and still holds (public)
    discarded: np.ndarray  #: (N, 2, 52) bool cards the player discarded face up this hand (public)
    declined: np.ndarray  #: (N, 2, 52) bool cards the player passed on or drew the stock instead of (public)
    done: np.ndarray  #: (N,) bool the episode has ended

    @classmethod
    def empty(cls, n: int) -> "GameState":
        return cls(
            deck=np.zeros((n, NUM_CARDS), np.int8), hands=np.zeros((n, 2, NUM_CARDS), bool),
            stock_next=np.zeros(n, np.int16), pile=np.zeros((n, NUM_CARDS), np.int8),
            pile_size=np.zeros(n, np.int16), dealer=np.zeros(n, np.int8),
            current_player=np.zeros(n, np.int8), phase=np.zeros(n, np.int8),
            taken_card=np.full(n, -1, np.int8), knock_limit=np.zeros(n, np.int8),
            turns=np.zeros(n, np.int16), scores=np.zeros((n, 2), np.int32),
            hands_won=np.zeros((n, 2), np.int32), taken=np.zeros((n, 2, NUM_CARDS), bool),
            discarded=np.zeros((n, 2, NUM_CARDS), bool), declined=np.zeros((n, 2, NUM_CARDS), bool),
            done=np.zeros(n, bool),
        )

    def copy(self) -> "GameState":
        return GameState(**{f.name: getattr(self, f.name).copy() for f in fields(self)})

    def arrays(self) -> tuple:
        """The fields as one tuple in field order: how kernels receive the state (``st[ST_HANDS]``)."""
        return _state_getter(self)


# Kernels take the whole state as one argument and read each field by its index constant, so two
# same-typed arrays (taken, discarded, declined) cannot be swapped at a call site. A plain tuple,
# not a named tuple: numba dispatches on a named tuple of arrays twice as slowly (~5 us a call).
_STATE_FIELDS = tuple(f.name for f in fields(GameState))
_state_getter = attrgetter(*_STATE_FIELDS)
(ST_DECK, ST_HANDS, ST_STOCK_NEXT, ST_PILE, ST_PILE_SIZE, ST_DEALER, ST_CURRENT_PLAYER, ST_PHASE, ST_TAKEN_CARD,
 ST_KNOCK_LIMIT, ST_TURNS, ST_SCORES, ST_HANDS_WON, ST_TAKEN, ST_DISCARDED, ST_DECLINED, ST_DONE) = range(17)


def check_indices(namespace: dict[str, Any], prefix: str, names: Sequence[str]) -> None:
    """Fail at import unless the PREFIX_NAME index constants in ``namespace`` (a module's
    ``globals()``) number ``names`` in order, and no other PREFIX_ constant exists: how each module
    that passes a tuple of arrays to its kernels checks the indices they read it by."""
    for k, name in enumerate(names):
        if namespace.get(prefix + name.upper()) != k:
            raise RuntimeError(f"{prefix}{name.upper()} must be {k}: the index constants must follow {names}")
    extra = {k for k in namespace if k.startswith(prefix)} - {prefix + name.upper() for name in names}
    if extra:
        raise RuntimeError(f"{', '.join(sorted(extra))} name no field of {names}")


def _check_indices(prefix: str, names: Sequence[str]) -> None:
    """``check_indices`` on this module's own constants."""
    check_indices(globals(), prefix, names)


_check_indices("ST_", _STATE_FIELDS)


# HandResult is backed by four packed arrays (few allocations per step); its fields are views.
_R_INT = ("knocker", "winner", "game_winner", "upcard", "dealer", "knock_card", "deadwood0", "deadwood1",
          "points0", "points1", "scores0", "scores1")
_R_BOOL = ("gin", "undercut", "void", "truncated_hand", "spade_doubled", "game_over")
(RI_KNOCKER, RI_WINNER, RI_GAME_WINNER, RI_UPCARD, RI_DEALER, RI_KNOCK_CARD, RI_DEADWOOD, _, RI_POINTS, _,
 RI_SCORES, _) = range(len(_R_INT))
RB_GIN, RB_UNDERCUT, RB_VOID, RB_TRUNC, RB_SPADE, RB_GAME_OVER = range(len(_R_BOOL))
RC_LAID_OFF = 2  #: HandResult.cards[:, p] is player p's final hand (p = 0, 1); this row is laid_off
# HandResult's packed arrays as the kernels receive them (HandResult.arrays(), read like GameState's).
_RESULT_FIELDS = ("ints", "bools", "cards", "meld_id")
RES_INTS, RES_BOOLS, RES_CARDS, RES_MELD_ID = range(4)
_check_indices("RES_", _RESULT_FIELDS)


class HandResult:
    """How the hands that ended in a step ended; rows are valid where ``StepOutput.hand_over``.

    Fields (views into packed arrays, batch axis first):
    knocker (N,) player who knocked, -1 on a void hand; winner (N,) player who scored, -1 on a void
    hand; gin, undercut, void, truncated_hand (void by the turn cap), spade_doubled, game_over (a
    game episode ended with this hand) (N,) bool; game_winner (N,) -1 unless game_over;
    deadwood (N, 2) K for the knocker and D after lay-offs for the defender (each player's own
    minimal deadwood on a void hand); points (N, 2) scored this hand (spade doubling included);
    scores (N, 2) totals after the hand (game bonuses included at game end; the hand's points in
    hand episodes); hands (N, 2, 52) bool final hands (the knocker's without the face-down
    discard); meld_id (N, 52) int8 meld of each card, knocker's melds first, -1 deadwood;
    laid_off (N, 52) bool defender cards laid off; upcard, dealer, knock_card (N,) (-1 none).
    """

    __slots__ = _RESULT_FIELDS

    def __init__(self, n: int) -> None:
        self.ints = np.full((n, len(_R_INT)), -1, np.int32)  #: packed integer fields
        self.bools = np.zeros((n, len(_R_BOOL)), bool)  #: packed flags
        self.cards = np.zeros((n, 3, NUM_CARDS), bool)  #: hands of both players + laid_off
        self.meld_id = np.full((n, NUM_CARDS), -1, np.int8)

    def _blank_like(self) -> "HandResult":
        """A new HandResult of the same size with no hand recorded, from this blank one: the -1 filled
        fields copied (cheaper than ``np.full`` when N is small), the zero ones newly zeroed (at large N
        calloc leaves the pages the step does not write untouched; a copy would write them all)."""
        new = HandResult.__new__(HandResult)
        new.ints, new.meld_id = self.ints.copy(), self.meld_id.copy()
        new.bools, new.cards = np.zeros(self.bools.shape, bool), np.zeros(self.cards.shape, bool)
        return new

    def arrays(self) -> tuple:
        """The packed arrays as one tuple, read in kernels as res[RES_INTS], ..."""
        return (self.ints, self.bools, self.cards, self.meld_id)

    # Views are made on access, so a step pays for four allocations, not twenty.
    knocker = property(lambda self: self.ints[:, RI_KNOCKER])
    winner = property(lambda self: self.ints[:, RI_WINNER])
    game_winner = property(lambda self: self.ints[:, RI_GAME_WINNER])
    upcard = property(lambda self: self.ints[:, RI_UPCARD])
    dealer = property(lambda self: self.ints[:, RI_DEALER])
    knock_card = property(lambda self: self.ints[:, RI_KNOCK_CARD])
    deadwood = property(lambda self: self.ints[:, RI_DEADWOOD:RI_DEADWOOD + 2])
    points = property(lambda self: self.ints[:, RI_POINTS:RI_POINTS + 2])
    scores = property(lambda self: self.ints[:, RI_SCORES:RI_SCORES + 2])
    gin = property(lambda self: self.bools[:, RB_GIN])
    undercut = property(lambda self: self.bools[:, RB_UNDERCUT])
    void = property(lambda self: self.bools[:, RB_VOID])
    truncated_hand = property(lambda self: self.bools[:, RB_TRUNC])
    spade_doubled = property(lambda self: self.bools[:, RB_SPADE])
    game_over = property(lambda self: self.bools[:, RB_GAME_OVER])
    hands = property(lambda self: self.cards[:, 0:2])
    laid_off = property(lambda self: self.cards[:, RC_LAID_OFF])


@dataclass
class StepOutput:
    """What ``reset`` and ``step`` return, per game."""

    current_player: np.ndarray  #: (N,) int8 player to move (-1 when over)
    legal_action_mask: np.ndarray  #: (N, 107) bool for current_player
    observation: np.ndarray  #: (N, OBS_SIZE) float32 of current_player
    rewards: np.ndarray  #: (N, 2) float32 zero-sum score change of each player this step
    terminated: np.ndarray  #: (N,) bool
    truncated: np.ndarray  #: (N,) bool
    hand_over: np.ndarray  #: (N,) bool a hand ended in this step (void included)
    result: HandResult


# Rule parameters as one int array for the kernels.
RP_KNOCK_LIMIT, RP_GIN, RP_UNDERCUT, RP_NEXT_DEALER, RP_DISCARD_TAKEN, RP_SPADE_DOUBLE, \
    RP_TARGET, RP_GAME_BONUSES, RP_MAX_TURNS, RP_GAME_EPISODE = range(10)

# Per-game outputs of one step, as the step kernel receives them (one tuple, read like GameState's):
# rewards (N, 2) float32; flags (4, N) bool, rows F_* (contiguous rows: StepOutput's terminated, ...);
# next_dealer (N,) int8 dealer of the next hand where F_NEED_DEAL; ended (N, 2) bool (terminated,
# truncated) of each finished episode.
_OUT_FIELDS = ("rewards", "flags", "next_dealer", "ended")
OUT_REWARDS, OUT_FLAGS, OUT_NEXT_DEALER, OUT_ENDED = range(4)
_check_indices("OUT_", _OUT_FIELDS)
F_TERMINATED, F_TRUNCATED, F_HAND_OVER, F_NEED_DEAL = range(4)  #: rows of out[OUT_FLAGS]
# The observe kernel writes these observation fields whole; every other field it zeroes, then sets
# a few entries ((offset, size) pairs in _SPARSE_FIELDS, derived so that a new field is zeroed too).
_WHOLE_FIELDS = ("own_hand", "opp_taken", "opp_discarded", "opp_declined", "stock_size", "is_dealer")
_SPARSE_FIELDS = tuple((sl.start, sl.stop - sl.start) for f, sl in OBS_FIELDS.items() if f not in _WHOLE_FIELDS)
# The meld tables the kernels use, read as globals (numba freezes them as constants).
_RUN_DW, _RUN_MELDED, _RANK_POINTS = _melds.RUN_DEADWOOD, _melds.RUN_MELDED, _melds._RANK_POINTS


_ORDERED_DECK = np.arange(NUM_CARDS, dtype=np.int8)[None]  #: (1, 52) the cards in index order


def _rule_params(rules: Rules, episode: str) -> np.ndarray:
    return np.array([
        -1 if rules.knock_limit == "upcard" else rules.knock_limit, rules.gin_bonus, rules.undercut_bonus,
        NEXT_DEALER_CHOICES.index(rules.next_dealer), rules.discard_taken_card, rules.spade_double,
        rules.target_score, rules.game_bonuses, rules.max_turns_per_hand, episode == "game",
    ], dtype=np.int64)


# --------------------------------------------------------------------------- kernels
# Kernels take the state as one tuple (``st``, from GameState.arrays()), a step's outputs as one
# (``out``, StepOutput fields) and HandResult's arrays as one (``res``, HandResult.arrays()), and
# read every field by its index constant: st[ST_HANDS], out[OUT_FLAGS], res[RES_INTS].

@njit(cache=True)
def _deal_kernel(idx, decks, dealers, rp, st, ended, new_episode):
    """Deal a new hand in games idx[j] from decks[j] with dealers[j]; ``new_episode``: also clear
    the scores, the hands won and the ended flags (a new episode, not the next hand of a game)."""
    deck, hands, taken = st[ST_DECK], st[ST_HANDS], st[ST_TAKEN]
    discarded, declined, pile = st[ST_DISCARDED], st[ST_DECLINED], st[ST_PILE]
    pile_size, stock_next, dealer = st[ST_PILE_SIZE], st[ST_STOCK_NEXT], st[ST_DEALER]
    current_player, phase, taken_card = st[ST_CURRENT_PLAYER], st[ST_PHASE], st[ST_TAKEN_CARD]
    turns, done, knock_limit = st[ST_TURNS], st[ST_DONE], st[ST_KNOCK_LIMIT]
    scores, hands_won = st[ST_SCORES], st[ST_HANDS_WON]
    for j in range(idx.shape[0]):
        i = idx[j]
        d = dealers[j]
        if new_episode:
            for q in range(2):
                scores[i, q] = 0
                hands_won[i, q] = 0
                ended[i, q] = False
        for c in range(NUM_CARDS):
            deck[i, c] = decks[j, c]
            for p in range(2):
                hands[i, p, c] = False
                taken[i, p, c] = False
                discarded[i, p, c] = False
                declined[i, p, c] = False
        for k in range(UPCARD_POS):  # alternately, non-dealer first
            hands[i, (1 - d) if k % 2 == 0 else d, decks[j, k]] = True
        up = decks[j, UPCARD_POS]
        pile[i, 0] = up
        pile_size[i] = 1
        stock_next[i] = STOCK_START
        dealer[i] = d
        current_player[i] = 1 - d
        phase[i] = PH_OFFER_NONDEALER
        taken_card[i] = -1
        turns[i] = 0
        done[i] = False
        rank = up % NUM_RANKS
        knock_limit[i] = rp[RP_KNOCK_LIMIT] if rp[RP_KNOCK_LIMIT] >= 0 else \
            (0 if rank == 0 else min(rank + 1, MAX_KNOCK_LIMIT))


@njit(cache=True)
def _end_hand(i, winner, pts, void, cap, rp, st, res, out):
    """Book a finished hand: scores, rewards, episode end or the next deal."""
    scores, hands_won, dealer = st[ST_SCORES], st[ST_HANDS_WON], st[ST_DEALER]
    done, current_player, phase = st[ST_DONE], st[ST_CURRENT_PLAYER], st[ST_PHASE]
    r_int, r_bool, rewards = res[RES_INTS], res[RES_BOOLS], out[OUT_REWARDS]
    flags, next_dealer = out[OUT_FLAGS], out[OUT_NEXT_DEALER]
    before0, before1 = scores[i, 0], scores[i, 1]
    game_ep = rp[RP_GAME_EPISODE] == 1
    game_over = False
    r_int[i, RI_POINTS] = 0
    r_int[i, RI_POINTS + 1] = 0
    if not void:
        loser = 1 - winner
        r_int[i, RI_WINNER] = winner
        r_int[i, RI_POINTS + winner] = pts
        scores[i, winner] += pts
        hands_won[i, winner] += 1
        if game_ep and scores[i, winner] >= rp[RP_TARGET]:
            game_over = True
            if rp[RP_GAME_BONUSES] == 1:
                scores[i, winner] += LINE_BONUS * hands_won[i, winner] + GAME_BONUS
                scores[i, loser] += LINE_BONUS * hands_won[i, loser]
                if hands_won[i, loser] == 0:
                    scores[i, winner] *= 2
            r_bool[i, RB_GAME_OVER] = True
            r_int[i, RI_GAME_WINNER] = winner
    gain0 = scores[i, 0] - before0
    gain1 = scores[i, 1] - before1
    rewards[i, 0] = gain0 - gain1
    rewards[i, 1] = gain1 - gain0
    r_int[i, RI_SCORES] = scores[i, 0]
    r_int[i, RI_SCORES + 1] = scores[i, 1]
    if game_ep and not game_over:
        flags[F_NEED_DEAL, i] = True
        if void:
            next_dealer[i] = dealer[i]
        elif rp[RP_NEXT_DEALER] == 0:
            next_dealer[i] = winner
        elif rp[RP_NEXT_DEALER] == 1:
            next_dealer[i] = 1 - winner
        else:
            next_dealer[i] = 1 - dealer[i]
    else:
        done[i] = True
        current_player[i] = -1
        phase[i] = PH_OVER
        if cap and not game_ep:
            flags[F_TRUNCATED, i] = True
        else:
            flags[F_TERMINATED, i] = True


@njit(cache=True)
def _step_kernel(actions, move, rp, st, res, out, view, every_row, autoreset):
    """Apply one action in every unfinished game with move[i] (the action is legal: checked by the caller).

    flags[:, i] = (terminated, truncated, hand_over, need_deal); ended[i] = how game i's
    episode ended (terminated, truncated), repeated in flags while it stays finished.
    Returns (games needing a new deal, games whose episode is over, observed).

    view = (observations, masks): when no game is to be dealt (a new hand, or with ``autoreset``
    a new episode), the mover's view of every game (``every_row``) or of the games that moved or
    are over is written there in the same call and observed is True; otherwise the caller deals
    and observes (one kernel call less per step matters when N is small: a call costs
    microseconds).
    """
    deals, over = _transition(actions, move, rp, st, res, out)
    flags = out[OUT_FLAGS]
    if deals > 0 or (over > 0 and autoreset):
        return deals, over, False
    rows = np.empty(actions.shape[0], np.int64)
    k = 0
    for i in range(actions.shape[0]):
        rows[k] = i
        k += every_row or move[i] or flags[F_TERMINATED, i] or flags[F_TRUNCATED, i]
    _observe_rows(rows[:k], st[ST_CURRENT_PLAYER], False, True, rp, st, view[0], view[1])
    return deals, over, True


@njit(cache=True)
def _transition(actions, move, rp, st, res, out):
    """The rules of one step: apply actions[i] in every unfinished game with move[i] (legal: checked
    by the caller), book ended hands into ``res`` and ``out`` (rewards, flags, next_dealer) and
    update ``ended``; no observation. Returns (games needing a new deal, games whose episode is over).
    Shared by ``VectorGame.step`` and the vector env's fused rounds (``okgin_env.vector_kernels``)."""
    hands, pile, pile_size = st[ST_HANDS], st[ST_PILE], st[ST_PILE_SIZE]
    done, current_player, phase = st[ST_DONE], st[ST_CURRENT_PLAYER], st[ST_PHASE]
    taken, taken_card, declined = st[ST_TAKEN], st[ST_TAKEN_CARD], st[ST_DECLINED]
    deck, stock_next, turns = st[ST_DECK], st[ST_STOCK_NEXT], st[ST_TURNS]
    discarded, dealer, r_int = st[ST_DISCARDED], st[ST_DEALER], res[RES_INTS]
    r_bool, r_cards, r_meld_id = res[RES_BOOLS], res[RES_CARDS], res[RES_MELD_ID]
    flags, ended = out[OUT_FLAGS], out[OUT_ENDED]
    km = np.empty(4, np.int64)
    dm = np.empty(4, np.int64)
    cand = np.empty(4, np.int64)
    tmp = np.empty(4, np.int64)
    kd = np.empty(2, np.int64)
    for i in range(actions.shape[0]):
        if done[i] or not move[i]:  # ended[i] is all False while the episode runs
            flags[F_TERMINATED, i] = ended[i, F_TERMINATED]
            flags[F_TRUNCATED, i] = ended[i, F_TRUNCATED]
            continue
        a = actions[i]
        p = current_player[i]
        ph = phase[i]
        if a == TAKE_DISCARD:
            top = pile[i, pile_size[i] - 1]
            pile_size[i] -= 1
            hands[i, p, top] = True
            taken[i, p, top] = True
            taken_card[i] = top
            phase[i] = PH_DISCARD
        elif a == PASS:
            declined[i, p, pile[i, 0]] = True
            phase[i] = PH_OFFER_DEALER if ph == PH_OFFER_NONDEALER else PH_FORCED_DRAW
            current_player[i] = 1 - p
        elif a == DRAW_STOCK:
            if ph == PH_DRAW:  # drawing instead of taking the top discard declines it
                declined[i, p, pile[i, pile_size[i] - 1]] = True
            card = deck[i, stock_next[i]]
            stock_next[i] += 1
            hands[i, p, card] = True
            taken_card[i] = -1
            phase[i] = PH_DISCARD
        else:  # discard or knock
            knock = a >= KNOCK
            c = a - KNOCK if knock else a
            hands[i, p, c] = False
            taken[i, p, c] = False
            taken_card[i] = -1
            turns[i] += 1
            if not knock:
                pile[i, pile_size[i]] = c
                pile_size[i] += 1
                discarded[i, p, c] = True
                wall = NUM_CARDS - stock_next[i] <= WALL
                cap = (not wall) and turns[i] >= rp[RP_MAX_TURNS]
                if not (wall or cap):
                    current_player[i] = 1 - p
                    phase[i] = PH_DRAW
                    continue
                # void hand: report both players' own deadwood
                flags[F_HAND_OVER, i] = True
                r_bool[i, RB_VOID] = True
                r_bool[i, RB_TRUNC] = cap
                for q in range(2):
                    _melds.masks_of_row(hands[i, q], km)
                    r_int[i, RI_DEADWOOD + q] = _melds.min_deadwood_of_masks(km, _RUN_DW, cand, tmp)
                    for cc in range(NUM_CARDS):
                        r_cards[i, q, cc] = hands[i, q, cc]
                r_int[i, RI_UPCARD] = deck[i, UPCARD_POS]
                r_int[i, RI_DEALER] = dealer[i]
                _end_hand(i, -1, 0, True, cap, rp, st, res, out)
                continue
            # knock: showdown
            _melds.masks_of_row(hands[i, p], km)
            _melds.masks_of_row(hands[i, 1 - p], dm)
            _melds.showdown_of_masks(km, dm, _RUN_DW, _RUN_MELDED, _RANK_POINTS, r_meld_id[i],
                                     r_cards[i, RC_LAID_OFF], kd)
            k_dw, d_dw = kd[0], kd[1]
            up = deck[i, UPCARD_POS]
            if k_dw == 0:
                winner, pts = p, d_dw + rp[RP_GIN]
                r_bool[i, RB_GIN] = True
            elif k_dw < d_dw:
                winner, pts = p, d_dw - k_dw
            else:
                winner, pts = 1 - p, k_dw - d_dw + rp[RP_UNDERCUT]
                r_bool[i, RB_UNDERCUT] = True
            if rp[RP_SPADE_DOUBLE] == 1 and up // NUM_RANKS == 0:
                pts *= 2
                r_bool[i, RB_SPADE] = True
            flags[F_HAND_OVER, i] = True
            r_int[i, RI_KNOCKER] = p
            r_int[i, RI_KNOCK_CARD] = c
            r_int[i, RI_DEADWOOD + p] = k_dw
            r_int[i, RI_DEADWOOD + 1 - p] = d_dw
            r_int[i, RI_UPCARD] = up
            r_int[i, RI_DEALER] = dealer[i]
            for q in range(2):
                for cc in range(NUM_CARDS):
                    r_cards[i, q, cc] = hands[i, q, cc]
            _end_hand(i, winner, pts, False, False, rp, st, res, out)
    deals = over = 0
    for i in range(actions.shape[0]):
        deals += flags[F_NEED_DEAL, i]
        if flags[F_TERMINATED, i] or flags[F_TRUNCATED, i]:
            ended[i, F_TERMINATED] = flags[F_TERMINATED, i]
            ended[i, F_TRUNCATED] = flags[F_TRUNCATED, i]
            over += 1
    return deals, over


MASK_ONLY = -2  #: a split row that gets its mask only (see _observe_split)


@njit(cache=True, inline="always")
def _zero(o, start, size):
    for k in range(start, start + size):
        o[k] = 0.0


@njit(cache=True)
def _observe_kernel(rows, players, write_mask, rp, st, out_obs, out_mask):
    """Observation of players[i] in each game i in rows; with write_mask, also the legal-action mask of the mover."""
    _observe_rows(rows, players, False, write_mask, rp, st, out_obs, out_mask)


@njit(cache=True)
def _observe_packed_kernel(rows, players, rp, st, out_obs):
    """Observation of players[j] in game rows[j] into out_obs[j] (no mask): a few rows, packed."""
    _observe_rows(rows, players, True, False, rp, st, out_obs, np.empty((1, NUM_ACTIONS), np.bool_))


@njit(cache=True)
def _observe_rows(rows, players, packed, write_mask, rp, st, out_obs, out_mask):
    """The loop of the observe kernels, also run by the step kernel: player players[i] of game
    i = rows[j] into out_obs[i] (``packed``: players[j] into out_obs[j]); with write_mask, the
    mover's legal actions into out_mask[i]."""
    _observe_split(rows, players, packed, write_mask, rp, st, out_obs, out_mask, None, out_obs)


@njit(cache=True)
def _observe_split(rows, players, packed, write_mask, rp, st, out_obs, out_mask, split, out_split):
    """``_observe_rows``, where each row j with split[j] >= 0 goes to out_split[split[j]] instead,
    and one with split[j] == MASK_ONLY gets its mask alone (no observation written: for a reader
    of masks only): one pass over the rows for views that go to two arrays. ``split=None``
    compiles the plain loop (numba prunes the branch): a per-row destination costs the plain
    observe a tenth of its speed.

    Each float of a row is written once (the card fields copied whole, the sparse ones zeroed
    then set): at N=4096 the observations are 7 MB a step, more than a small L2 holds. One loop
    over the rows here, not a function per row: each call would unpack the state again (a
    reference count per array), which costs as much as the row's work.
    """
    hands, taken, discarded = st[ST_HANDS], st[ST_TAKEN], st[ST_DISCARDED]
    declined, pile_size, pile = st[ST_DECLINED], st[ST_PILE_SIZE], st[ST_PILE]
    knock_limit, stock_next, dealer = st[ST_KNOCK_LIMIT], st[ST_STOCK_NEXT], st[ST_DEALER]
    scores, phase, done = st[ST_SCORES], st[ST_PHASE], st[ST_DONE]
    current_player, taken_card = st[ST_CURRENT_PLAYER], st[ST_TAKEN_CARD]
    ms = np.empty(4, np.int64)
    dw = np.empty(NUM_CARDS, np.int64)
    cand = np.empty(4, np.int64)
    tmp = np.empty(4, np.int64)
    for j in range(rows.shape[0]):
        i = rows[j]
        p = players[j] if packed else players[i]
        view = True
        if split is not None and split[j] >= 0:
            o = out_split[split[j]]
        else:
            o = out_obs[j] if packed else out_obs[i]
            if split is not None and split[j] == MASK_ONLY:
                view = False
        if write_mask:
            out_mask[i, :] = False
        if p < 0:
            if view:
                o[:] = 0.0
            continue
        q = 1 - p
        own = hands[i, p]
        kl = knock_limit[i]
        if view:
            for start, cards in ((OWN_HAND, own), (OPP_TAKEN, taken[i, q]), (OPP_DISCARDED, discarded[i, q]),
                                 (OPP_DECLINED, declined[i, q])):
                for c in range(NUM_CARDS):
                    o[start + c] = cards[c]
            for start, size in _SPARSE_FIELDS:
                _zero(o, start, size)
            n = pile_size[i]
            if n > 0:
                o[DISCARD_TOP + pile[i, n - 1]] = 1.0
                for k in range(n - 1):
                    o[PILE_BURIED + pile[i, k]] = 1.0
            o[KNOCK_LIMIT + kl] = 1.0
            o[STOCK_SIZE] = (NUM_CARDS - stock_next[i]) / STOCK_SCALE
            o[IS_DEALER] = 1.0 if dealer[i] == p else 0.0
            if rp[RP_GAME_EPISODE] == 1:
                o[SCORES] = scores[i, p] / rp[RP_TARGET]
                o[SCORES + 1] = scores[i, q] / rp[RP_TARGET]
                o[SCORES + 2] = rp[RP_TARGET] / 100.0
        ph = phase[i]
        if done[i] or current_player[i] != p:
            continue
        if view:
            o[PHASE + ph] = 1.0
        m = out_mask[i]
        if ph == PH_OFFER_NONDEALER or ph == PH_OFFER_DEALER:
            if write_mask:
                m[TAKE_DISCARD] = True
                m[PASS] = True
        elif ph == PH_FORCED_DRAW:
            if write_mask:
                m[DRAW_STOCK] = True
        elif ph == PH_DRAW:
            if write_mask:
                m[DRAW_STOCK] = True
                m[TAKE_DISCARD] = True
        else:
            _melds.masks_of_row(own, ms)
            _melds.deadwood_after_discard_held_of_masks(ms, _RUN_DW, dw, cand, tmp)
            blocked = taken_card[i] if rp[RP_DISCARD_TAKEN] == 0 else -1
            if blocked >= 0 and view:
                o[CANNOT_DISCARD + blocked] = 1.0
            for c in range(NUM_CARDS):
                if not own[c]:
                    continue
                if view:
                    o[DISCARD_DEADWOOD + c] = (DEADWOOD_SCALE - dw[c]) / DEADWOOD_SCALE
                if write_mask and c != blocked:
                    m[c] = True
                    if dw[c] <= kl:
                        m[KNOCK + c] = True


# ------------------------------------------------------------------------ the class

class VectorGame:
    """N independent games of Oklahoma Gin, stepped together.

    >>> g = VectorGame(4, seed=0)
    >>> out = g.reset()
    >>> rng = np.random.default_rng(0)
    >>> while not (out.terminated | out.truncated).all():
    ...     out = g.step(random_legal_actions(out.legal_action_mask, rng))

    Player ids 0 and 1 are agent ids; who deals is ``state.dealer``. ``episode="hand"`` ends an
    episode with each hand, ``"game"`` plays hands until a total reaches ``target_score``. With
    ``autoreset=True`` a finished game is dealt anew inside the same ``step`` call: that call's
    flags, rewards and result describe the ending, its observation, mask and current player the
    new game.

    ``step(actions, games=...)`` moves only the selected games and ``reset(games=...)`` deals
    new episodes only in them; the others keep their state (an env that lets two players move
    in different games at once, e.g. a learner against a batched opponent, needs both).
    """

    def __init__(self, num_games: int, rules: Rules | None = None, episode: str = "hand",
                 autoreset: bool = False, seed: int | None = None) -> None:
        if isinstance(num_games, bool) or not isinstance(num_games, (int, np.integer)) or num_games < 1:
            raise ValueError(f"num_games must be an integer >= 1, got {num_games!r}")
        if rules is None:
            rules = Rules()
        if not isinstance(rules, Rules):
            raise ValueError(f"rules must be an okgin_env.Rules, got {type(rules).__name__}")
        if episode not in EPISODES:
            raise ValueError(f"episode must be one of {', '.join(EPISODES)}, got {episode!r}")
        self.num_games = int(num_games)
        self.rules = rules
        self.episode = episode
        self.autoreset = bool(autoreset)
        self._rp = _rule_params(rules, episode)
        self.rng = np.random.default_rng(seed)
        self.state = GameState.empty(self.num_games)
        self.state.done[:] = True
        self.state.current_player[:] = -1
        self._mask = np.zeros((self.num_games, NUM_ACTIONS), bool)
        self._all = np.arange(self.num_games)
        self._blank_result = HandResult(self.num_games)  # copied for each step's result (faster than filling)
        self._move_all = np.ones(self.num_games, bool)
        # (terminated, truncated) of each finished episode, repeated by later steps until a reset
        self._ended = np.zeros((self.num_games, 2), bool)
        self._kept: list | None = None  # step_reusing's outputs: [StepOutput, (outs, res), written]

    # ------------------------------------------------------------------ dealing
    def _random_decks(self, k: int) -> np.ndarray:
        return self.rng.permuted(_ORDERED_DECK.repeat(k, axis=0), axis=1)  # repeat: np.tile's Python costs more

    def _deal(self, idx: np.ndarray, decks: np.ndarray, dealers: np.ndarray, new_episode: bool = False) -> None:
        _deal_kernel(idx.astype(np.int64, copy=False), decks.astype(np.int8, copy=False),
                     dealers.astype(np.int8, copy=False), self._rp, self.state.arrays(), self._ended, new_episode)

    def _new_games(self, idx: np.ndarray, decks: np.ndarray | None = None, dealers: np.ndarray | None = None) -> None:
        if decks is None:
            decks = self._random_decks(len(idx))
        if dealers is None:
            dealers = self.rng.integers(0, 2, len(idx))
        self._deal(idx, decks, dealers, new_episode=True)

    def deal_new_episodes(self, games: np.ndarray) -> None:
        """New random episodes in games ``games`` (int64 indices; dealers, then decks, drawn from the
        game's generator as ``reset`` draws them), without observing them: the caller writes the
        views (``reset(games=...)`` is the observing form)."""
        self._new_games(games, None, self.rng.integers(0, 2, len(games)))

    def deal_next_hands(self, need_deal: np.ndarray, next_dealer: np.ndarray) -> None:
        """The next hand of a game episode in each game where ``need_deal`` ((N,) bool), dealt by
        ``next_dealer`` ((N,) int8; a random deck each), without observing it. Both come from a
        step's outputs: ``out[OUT_FLAGS][F_NEED_DEAL]`` and ``out[OUT_NEXT_DEALER]``."""
        idx = np.flatnonzero(need_deal)
        self._deal(idx, self._random_decks(len(idx)), next_dealer[idx])

    def reset(self, seed: int | None = None, decks: Sequence | np.ndarray | None = None,
              dealers: int | Sequence[int] | np.ndarray | None = None,
              games: Sequence[int] | np.ndarray | None = None, observation: np.ndarray | None = None) -> StepOutput:
        """Start new episodes in all games, or only in ``games`` (a (N,) bool mask or game indices;
        the others keep their state and, as in ``step(games=...)``, get zero observation rows);
        ``decks``/``dealers`` replay given deals (docs/RULES.md, "Replaying a deal"): one for all, or one per game reset.
        ``observation``: as in ``step``."""
        if seed is not None:
            self.rng = np.random.default_rng(seed)
        idx = self._all if games is None else np.flatnonzero(self._selection(games))
        d = None if decks is None else self._check_decks(decks, len(idx))
        if dealers is None:
            dl = self.rng.integers(0, 2, len(idx))  # drawn even with decks, so seeds line up
        else:
            dl = self._check_dealers(dealers, len(idx))
        self._new_games(idx, d, dl)
        return self._output(np.zeros((self.num_games, 2), np.float32), self._blank_result._blank_like(),
                            np.zeros(self.num_games, bool), np.zeros(self.num_games, bool),
                            np.zeros(self.num_games, bool), None if games is None else idx, observation)

    def _selection(self, games: Sequence[int] | np.ndarray) -> np.ndarray:
        """(N,) bool mask of the selected games from a bool mask or an index list."""
        arr = np.asarray(games)
        if arr.dtype == bool and arr.shape == (self.num_games,):
            return arr
        if arr.ndim == 1 and (arr.size == 0 or arr.dtype.kind in "iu") and \
                ((arr >= 0) & (arr < self.num_games)).all():
            sel = np.zeros(self.num_games, bool)
            sel[arr.astype(np.int64)] = True
            return sel
        raise ValueError(f"games must be a ({self.num_games},) bool mask or indices 0-{self.num_games - 1}; "
                         f"got {games!r}")

    def _check_decks(self, decks: Sequence | np.ndarray, n: int) -> np.ndarray:
        arr = np.asarray(decks, dtype=object) if not isinstance(decks, np.ndarray) else decks
        if arr.ndim == 1:
            arr = arr[None]
        if arr.ndim != 2 or arr.shape[0] not in (1, n):
            raise ValueError(f"decks must be one 52-card deck or one per game ({n}); got shape {np.shape(decks)}")
        if arr.dtype.kind in "iu":
            ok = arr.shape[1] == NUM_CARDS and arr.min() >= 0 and arr.max() < NUM_CARDS
            if ok and (np.sort(arr, axis=1) == np.arange(NUM_CARDS)).all():
                out = arr.astype(np.int8)
            else:
                out = np.stack([self._parse_one(row, b) for b, row in enumerate(arr)])
        else:
            out = np.stack([self._parse_one(row, b) for b, row in enumerate(arr)])
        return np.broadcast_to(out, (n, NUM_CARDS)).copy()

    @staticmethod
    def _parse_one(row, b: int) -> np.ndarray:
        try:
            return parse_deck(list(row))
        except ValueError as e:
            raise ValueError(f"deck of game {b}: {e}") from None

    def _check_dealers(self, dealers, n: int) -> np.ndarray:
        arr = np.asarray(dealers)
        if arr.ndim == 0:
            arr = np.full(n, arr)
        if arr.shape != (n,) or arr.dtype.kind not in "iub" or not np.isin(arr, (0, 1)).all():
            raise ValueError(f"dealers must be 0 or 1 (an int or one per game, {n}); got {dealers!r}")
        return arr.astype(np.int8)

    # --------------------------------------------------------------------- step
    def step(self, actions: Sequence[int] | np.ndarray, games: Sequence[int] | np.ndarray | None = None,
             observation: np.ndarray | None = None, checked: bool = False) -> StepOutput:
        """Apply one action per game (ignored in finished games) and return the new view.

        With ``games`` (a (N,) bool mask or game indices) only those games move: the others keep
        their state and get zero rewards, no flags (unless their episode ended before, as for any
        finished game) and are not checked for legality, so their action may be anything. Only
        the moved games are observed again: the other rows of ``observation`` are zeros (their
        view is unchanged: keep the earlier one); ``legal_action_mask`` and ``current_player``
        cover every game. ``observation``, a (N, OBS_SIZE) float32 C-contiguous array, receives
        the view in place of a new array (its rows of games that did not move are left as they
        are, so one buffer can follow every game); the output's ``observation`` is that array.
        ``checked=True`` skips the legality check, for callers that have just checked the actions
        against ``legal_action_mask`` themselves.
        """
        a = np.asarray(actions)
        if a.shape != (self.num_games,) or a.dtype.kind not in "iu":
            raise ValueError(f"actions must be an integer array of shape ({self.num_games},), got {a.dtype} {a.shape}")
        s = self.state
        a = a.astype(np.int64, copy=False)  # the kernels only read it
        move = self._move_all if games is None else self._selection(games)
        if not checked:
            bad = _first_illegal(a, self._mask, s.done if games is None else s.done | ~move)
            if bad >= 0:
                self._illegal(bad, int(a[bad]))
        outs, r = self._blank_outputs()
        obs = self._obs_buffer(observation, games is None)
        self._advance(a, move, games is None, obs, outs, r.arrays())
        return self._step_output(obs, outs, r)

    def step_reusing(self, actions: np.ndarray, checked: bool = False) -> StepOutput:
        """``step(actions, checked=checked)`` for a caller that reads each output before the next
        call (one game stepped from Python, where allocating the outputs costs as much as the
        game's step): ``actions`` is an int64 array of shape (N,); the output's ``rewards``,
        ``terminated``, ``truncated``, ``hand_over`` and ``result`` are arrays kept by the game
        and overwritten by the next ``step_reusing``; ``observation``, ``legal_action_mask`` and
        ``current_player`` are new arrays, as from ``step``."""
        if actions.shape != (self.num_games,) or actions.dtype != np.int64:
            raise ValueError(f"actions must be an int64 array of shape ({self.num_games},), got "
                             f"{actions.dtype} {actions.shape}")
        s = self.state
        if not checked:
            bad = _first_illegal(actions, self._mask, s.done)
            if bad >= 0:
                self._illegal(bad, int(actions[bad]))
        kept = self._kept
        if kept is None or kept[2]:  # first call, or the last one wrote more than the ended flags
            outs, r = self._blank_outputs()
            kept = self._kept = [self._step_output(None, outs, r), (outs, r.arrays()), False]
        out, (outs, res), _ = kept
        obs = np.empty((self.num_games, OBS_SIZE), np.float32)
        deals, over = self._advance(actions, self._move_all, True, obs, outs, res)
        # Only a game whose hand ended gets rewards, a result row or flags other than the
        # repeated ended ones, and it needs a deal or its episode is over: then blank anew.
        kept[2] = deals > 0 or over > 0
        return StepOutput(s.current_player.copy(), self._mask.copy(), obs, out.rewards, out.terminated,
                          out.truncated, out.hand_over, out.result)

    def _blank_outputs(self) -> tuple[tuple, HandResult]:
        """The step kernel's outputs zeroed (rewards, flags, next_dealer, and the kept ended flags)
        and a blank result."""
        n = self.num_games
        outs = (np.zeros((n, 2), np.float32), np.zeros((4, n), bool), np.zeros(n, np.int8), self._ended)
        return outs, self._blank_result._blank_like()

    def _step_output(self, obs: np.ndarray | None, outs: tuple, r: HandResult) -> StepOutput:
        flags = outs[OUT_FLAGS]
        return StepOutput(self.state.current_player.copy(), self._mask.copy(), obs, outs[OUT_REWARDS],
                          flags[F_TERMINATED], flags[F_TRUNCATED], flags[F_HAND_OVER], r)

    def _advance(self, a: np.ndarray, move: np.ndarray, every_row: bool, obs: np.ndarray, outs: tuple,
                 res: tuple) -> tuple[int, int]:
        """Apply the (checked) int64 actions ``a`` in the games ``move`` (all of them: ``every_row``),
        writing the step kernel's outputs ``outs`` and ``res`` (zeroed / blank), the movers' views
        into ``obs`` and ``self._mask``; returns (games dealt a new hand, games whose episode is over)."""
        s = self.state
        # the kernel also writes the new views when no game is to be dealt (most steps at small N)
        deals, over, observed = _step_kernel(a, move, self._rp, s.arrays(), res, outs, (obs, self._mask),
                                             every_row, self.autoreset)
        if not observed:
            terminated, truncated, _, need_deal = outs[OUT_FLAGS]
            if deals:
                self.deal_next_hands(need_deal, outs[OUT_NEXT_DEALER])
            if self.autoreset and over:
                self._new_games(np.flatnonzero(terminated | truncated))
            # games that did not move kept their state, so only the others are observed again
            rows = self._all if every_row else np.flatnonzero(move | terminated | truncated)
            _observe_kernel(rows, s.current_player, True, self._rp, s.arrays(), obs, self._mask)
        return deals, over

    def _illegal(self, game: int, action: int) -> None:
        legal = np.flatnonzero(self._mask[game])
        what = action_text(action) if 0 <= action < NUM_ACTIONS else "out of range 0-106"
        listing = ", ".join(f"{x} ({action_text(x)})" for x in legal)
        raise ValueError(f"illegal action {action} ({what}) in game {game} for player "
                         f"{int(self.state.current_player[game])}; legal actions: {listing}")

    # ------------------------------------------------------------- observation
    def _obs_buffer(self, out: np.ndarray | None, every_row: bool) -> np.ndarray:
        """``out`` checked, or a new (N, OBS_SIZE) buffer: uninitialised when every row will be
        written, zeros otherwise (rows not observed read as zeros)."""
        if out is not None:
            if out.shape != (self.num_games, OBS_SIZE) or out.dtype != np.float32 or not out.flags.c_contiguous:
                raise ValueError(f"observation must be a C-contiguous float32 array of shape "
                                 f"({self.num_games}, {OBS_SIZE}), got {out.dtype} {out.shape}")
            return out
        return (np.empty if every_row else np.zeros)((self.num_games, OBS_SIZE), np.float32)

    def _view(self, players: np.ndarray, write_mask: bool, rows: np.ndarray | None = None,
              out: np.ndarray | None = None) -> np.ndarray:
        """Views of players[i] in games ``rows`` (all if None; the other rows are zeros, or kept in ``out``)."""
        obs = self._obs_buffer(out, rows is None)
        if rows is None:
            rows = self._all
        _observe_kernel(rows.astype(np.int64), players.astype(np.int64), write_mask, self._rp, self.state.arrays(),
                        obs, self._mask)
        return obs

    def observe(self, players: int | Sequence[int] | np.ndarray,
                games: Sequence[int] | np.ndarray | None = None, packed: bool = False) -> np.ndarray:
        """(N, OBS_SIZE) observation of the given player in each game (any player, not only the mover);
        with ``games`` (a (N,) bool mask or game indices) only those rows, the others are zeros;
        with ``packed=True`` only those rows, in game order: a (len(selected games), OBS_SIZE) array."""
        arr = np.asarray(players)
        if arr.ndim == 0:
            arr = np.full(self.num_games, arr)
        if arr.shape != (self.num_games,) or not ((arr == 0) | (arr == 1)).all():
            raise ValueError(f"players must be 0 or 1 (an int or one per game); got {players!r}")
        rows = None if games is None else np.flatnonzero(self._selection(games))
        if not packed:
            return self._view(arr, write_mask=False, rows=rows)
        rows = self._all if rows is None else rows
        obs = np.empty((len(rows), OBS_SIZE), np.float32)
        _observe_packed_kernel(rows, arr[rows].astype(np.int64), self._rp, self.state.arrays(), obs)
        return obs

    def _output(self, rewards, result, terminated, truncated, hand_over, rows=None, out=None) -> StepOutput:
        obs = self._view(self.state.current_player, write_mask=True, rows=rows, out=out)
        return StepOutput(self.state.current_player.copy(), self._mask.copy(), obs, rewards, terminated,
                          truncated, hand_over, result)

    @property
    def legal_action_mask(self) -> np.ndarray:
        """(N, 107) bool legal actions of the player to move (read-only view)."""
        v = self._mask.view()
        v.flags.writeable = False
        return v

    # ------------------------------------------------------------ for fused kernels
    # A caller that steps the games with kernels of its own (the vector env's fused rounds,
    # ``okgin_env.vector_kernels``, built on ``_transition`` and ``_observe_split``) hands them the
    # arrays below, as ``step`` hands them to the core's kernels: rp, st = state.arrays(), res, out.

    @property
    def rule_params(self) -> np.ndarray:
        """(10,) int64 the rules and episode kind as the kernels read them (``rp[RP_*]``; read only)."""
        return self._rp

    @property
    def mask_buffer(self) -> np.ndarray:
        """(N, 107) bool the array behind ``legal_action_mask``, writable: kernels that move games
        write their new masks here in place (everyone else reads ``legal_action_mask``)."""
        return self._mask

    def step_buffers(self) -> tuple[tuple, HandResult]:
        """Blank outputs for the step kernels: ``out`` (rewards (N, 2) float32, flags (4, N) bool in
        rows ``F_*``, next_dealer (N,) int8, and the game's own ended flags (N, 2) bool, kept across
        steps), read as out[OUT_*], and a blank ``HandResult`` (its arrays() are ``res``). A caller
        that keeps them must blank the rows a hand ended in before the next round."""
        return self._blank_outputs()

    # ---------------------------------------------------------- save / restore
    # (module-level helpers at the end of this file: check_state and friends)

    def get_state(self, games=None) -> GameState:
        """A copy of the state of ``games`` (indices, repeats allowed, or a bool mask; all games when None)."""
        return _copy_rows(self.state, self._game_index(games, distinct=False))

    def set_state(self, state: GameState, games=None) -> StepOutput:
        """Restore ``games`` (all when None) from ``state`` (one row per restored game, in order).

        The state is checked first (``check_state``: anything the kernels could not have reached
        is a ValueError naming the game and the problem); the legal-action masks and the ended
        flags follow, so ``step`` can go on at once. Returns the view of the restored games
        (their rows only): current player, mask and observation, zero rewards, no hand over,
        terminated/truncated for finished games.
        """
        idx = self._game_index(games)
        n = _state_rows(state)
        if n != len(idx):
            raise ValueError(f"state has {n} games but {len(idx)} games are to be restored")
        check_state(state, self.rules, self.episode)
        sel = slice(None) if games is None else idx  # a slice copies much faster than an index array
        for f in fields(GameState):
            getattr(self.state, f.name)[sel] = getattr(state, f.name)
        self._ended[sel] = _ended_flags(state, self.rules, self.episode)
        obs = self._view(self.state.current_player, write_mask=True)
        k = len(idx)
        return StepOutput(self.state.current_player[sel].copy(), self._mask[sel].copy(), obs[sel],
                          np.zeros((k, 2), np.float32), self._ended[sel, 0].copy(), self._ended[sel, 1].copy(),
                          np.zeros(k, bool), HandResult(k))

    @classmethod
    def from_state(cls, state: GameState, copies: int = 1, rules: Rules | None = None, episode: str = "hand",
                   autoreset: bool = False, seed: int | None = None) -> "VectorGame":
        """A new VectorGame of ``copies`` copies of each game of ``state`` (game ``j * copies + c`` is
        copy ``c`` of game ``j``), checked and ready to step; ``seed`` seeds later deals."""
        if isinstance(copies, bool) or not isinstance(copies, (int, np.integer)) or copies < 1:
            raise ValueError(f"copies must be an integer >= 1, got {copies!r}")
        n = _state_rows(state)
        game = cls(n * int(copies), rules=rules, episode=episode, autoreset=autoreset, seed=seed)
        game.set_state(state if copies == 1 else _copy_rows(state, np.repeat(np.arange(n), copies)))
        return game

    def _game_index(self, games, distinct: bool = True) -> np.ndarray:
        if games is None:
            return self._all.copy()
        arr = np.asarray(games)
        if arr.dtype == bool:
            if arr.shape != (self.num_games,):
                raise ValueError(f"a bool games mask must have shape ({self.num_games},), got {arr.shape}")
            return np.flatnonzero(arr)
        arr = arr.reshape(-1) if arr.ndim == 0 else arr
        if arr.ndim != 1 or arr.dtype.kind not in "iu" or len(arr) == 0 or (arr < 0).any() \
                or (arr >= self.num_games).any() or (distinct and len(np.unique(arr)) != len(arr)):
            what = "distinct game indices" if distinct else "game indices"
            shown = np.array2string(np.asarray(games), threshold=8)
            raise ValueError(f"games must be {what} 0..{self.num_games - 1} or a bool mask of shape "
                             f"({self.num_games},); got {shown}")
        return arr.astype(np.int64)


def random_legal_actions(mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One uniformly random legal action per row of a (N, 107) mask (rows with none get 0)."""
    out = np.empty(mask.shape[0], np.int64)
    _pick_kth_legal(np.ascontiguousarray(mask, dtype=bool), rng.random(mask.shape[0]), out)
    return out


@njit(cache=True)
def _pick_kth_legal(mask, u, out):
    legal = np.empty(mask.shape[1], np.int64)
    for i in range(mask.shape[0]):
        row = mask[i]
        n = 0
        for a in range(mask.shape[1]):  # branch-free compaction: which actions are legal is unpredictable
            legal[n] = a
            n += row[a]
        out[i] = legal[int(u[i] * n)] if n > 0 else 0


@njit(cache=True)
def _first_illegal(actions, mask, done):
    """Index of the first unfinished game whose action is not legal, or -1."""
    for i in range(actions.shape[0]):
        if done[i]:
            continue
        a = actions[i]
        if a < 0 or a >= mask.shape[1] or not mask[i, a]:
            return i
    return -1



# ------------------------------------------------------------ save / restore
# Checks for ``VectorGame.set_state``: a restored state must be one the kernels could have
# reached, so that stepping it keeps every invariant (52 cards each in one place, legal masks).

_BOOL_FIELDS = ("hands", "taken", "discarded", "declined", "done")


def _state_rows(state: GameState) -> int:
    """Batch size of ``state`` after checking every field's type, shape and dtype kind."""
    if not isinstance(state, GameState):
        raise ValueError(f"state must be an okgin_env.core.GameState, got {type(state).__name__}")
    ref = GameState.empty(1)
    n = None
    for f in fields(GameState):
        a, want = getattr(state, f.name), getattr(ref, f.name)
        if not isinstance(a, np.ndarray):
            raise ValueError(f"state.{f.name} must be a numpy array, got {type(a).__name__}")
        if n is None:
            n = a.shape[0] if a.ndim else 0
        if n < 1 or a.shape != (n, *want.shape[1:]):
            tail = "".join(f", {x}" for x in want.shape[1:])
            raise ValueError(f"state.{f.name} must have shape (N{tail}) with the same N >= 1 for every field; "
                             f"got {a.shape}")
        if a.dtype.kind not in ("b" if f.name in _BOOL_FIELDS else "iu"):
            raise ValueError(f"state.{f.name} must have dtype {want.dtype}, got {a.dtype}")
    return n


def _bad(what: str, rows: np.ndarray, got=None) -> None:
    """ValueError for the first offending game (rows: bool (N,)); ``got(g)`` describes its value."""
    if rows.any():
        g = int(np.flatnonzero(rows)[0])
        detail = "" if got is None else f" (got {got(g)})"
        raise ValueError(f"invalid state in game {g} of {len(rows)}: {what}{detail}")


@njit(cache=True)
def _card_places_kernel(deck, hands, stock_next, pile, pile_size, count, deck_ok):
    """count[i, c] = in how many places card c is: hand 0, hand 1, stock (deck[stock_next:]), pile
    (pile[:pile_size]); deck_ok[i] = deck[i] holds every card once (values already in 0..51)."""
    seen = np.empty(NUM_CARDS, np.bool_)
    for i in range(deck.shape[0]):
        seen[:] = False
        deck_ok[i] = True
        for j in range(NUM_CARDS):
            if seen[deck[i, j]]:
                deck_ok[i] = False
            seen[deck[i, j]] = True
        for c in range(NUM_CARDS):
            count[i, c] = hands[i, 0, c] + hands[i, 1, c]
        if deck_ok[i]:
            for j in range(stock_next[i], NUM_CARDS):
                count[i, deck[i, j]] += 1
        for j in range(pile_size[i]):
            count[i, pile[i, j]] += 1


def check_state(state: GameState, rules: Rules, episode: str) -> None:
    """Raise a one-line ``ValueError`` naming the first game and problem unless every game of ``state``
    is a position the kernels can reach under ``rules`` and ``episode``.

    Checked: shapes and dtype kinds; value ranges; the deck is a permutation; every card is in
    exactly one place (either hand, the stock ``deck[stock_next:]``, the pile ``pile[:pile_size]``),
    except that a finished hand may miss the knocker's face-down discard; ``done``, ``phase == OVER``
    and ``current_player == -1`` agree; hands hold 10 cards (11 for the player to discard); the
    offer phases (pile = the upcard, full stock, no turn, the right mover); stock and pile sizes
    of draw and discard decisions; the turn cap; ``taken_card``; ``taken`` within the hands;
    scores of running hands. The public history sets (discarded, declined) are not checked.
    """
    n = _state_rows(state)
    s = state
    rp = _rule_params(rules, episode)
    for name, low, high in (("deck", 0, NUM_CARDS - 1), ("stock_next", STOCK_START, NUM_CARDS),
                            ("pile_size", 0, NUM_CARDS), ("dealer", 0, 1), ("current_player", -1, 1),
                            ("phase", 0, int(Phase.OVER)), ("taken_card", -1, NUM_CARDS - 1),
                            ("knock_limit", 0, MAX_KNOCK_LIMIT), ("turns", 0, np.iinfo(np.int16).max),
                            ("scores", 0, np.iinfo(np.int32).max), ("hands_won", 0, np.iinfo(np.int32).max)):
        a = getattr(s, name)
        out = ((a < low) | (a > high)).reshape(n, -1).any(axis=1)
        _bad(f"{name} must be in {low}..{high}", out, lambda g, a=a: a[g].tolist())
    if rp[RP_KNOCK_LIMIT] >= 0:
        _bad(f"knock_limit must be {rp[RP_KNOCK_LIMIT]} under these rules", s.knock_limit != rp[RP_KNOCK_LIMIT],
             lambda g: int(s.knock_limit[g]))
    in_pile = np.arange(NUM_CARDS)[None, :] < s.pile_size[:, None]
    _bad("pile[:pile_size] must hold card indices 0..51", (in_pile & ((s.pile < 0) | (s.pile >= NUM_CARDS))).any(axis=1))
    count = np.empty((n, NUM_CARDS), np.int16)
    deck_ok = np.empty(n, bool)
    _card_places_kernel(s.deck, s.hands, s.stock_next, s.pile, s.pile_size, count, deck_ok)
    _bad("deck must be a permutation of the 52 cards", ~deck_ok)
    _bad("a card is in more than one place (hands, stock = deck[stock_next:], pile[:pile_size])",
         (count > 1).any(axis=1), lambda g: card_text(int(count[g].argmax())))
    missing = (count == 0).sum(axis=1)
    # a knock discards face down: a finished hand may miss that one card, a running one none
    _bad("every card must be in a hand, the stock or the pile (a finished hand may miss the knock discard)",
         np.where(s.done, missing > 1, missing > 0), lambda g: f"{missing[g]} missing")
    over = s.phase == Phase.OVER
    _bad("done, phase == OVER and current_player == -1 must agree",
         (s.done != over) | (over != (s.current_player == -1)),
         lambda g: f"done={bool(s.done[g])}, phase={s.phase[g]}, current_player={s.current_player[g]}")
    live = ~s.done
    rows = np.arange(n)
    mover = np.clip(s.current_player, 0, 1).astype(np.int64)
    sizes = s.hands.sum(axis=2)
    want = np.full((n, 2), HAND_SIZE)
    want[rows, mover] += live & (s.phase == Phase.DISCARD)
    _bad("hands must hold 10 cards each (11 for the player to discard)", (sizes != want).any(axis=1),
         lambda g: f"sizes {sizes[g].tolist()}")
    offer = live & (s.phase <= Phase.FORCED_DRAW)
    _bad("during the upcard offer the pile is the upcard (deck[20]) alone, the stock is full and no turn "
         "was played", offer & ((s.pile_size != 1) | (s.stock_next != STOCK_START) | (s.turns != 0)
                                | (s.pile[:, 0] != s.deck[:, UPCARD_POS])))
    nondealer_moves = (s.phase == Phase.OFFER_NONDEALER) | (s.phase == Phase.FORCED_DRAW)
    _bad("the mover must be the non-dealer in offer_nondealer and forced_draw, the dealer in offer_dealer",
         offer & (s.current_player != np.where(nondealer_moves, 1 - s.dealer, s.dealer)),
         lambda g: f"current_player={s.current_player[g]}, dealer={s.dealer[g]}")
    stock = NUM_CARDS - s.stock_next.astype(np.int64)
    _bad(f"a draw decision needs a non-empty pile and more than {WALL} stock cards",
         live & (s.phase == Phase.DRAW) & ((s.pile_size < 1) | (stock <= WALL)),
         lambda g: f"pile_size={s.pile_size[g]}, stock={stock[g]}")
    _bad(f"a discard decision needs at least {WALL} stock cards", live & (s.phase == Phase.DISCARD) & (stock < WALL),
         lambda g: f"stock={stock[g]}")
    _bad(f"a running hand must have turns < max_turns_per_hand ({rules.max_turns_per_hand})",
         live & (s.turns >= rules.max_turns_per_hand), lambda g: int(s.turns[g]))
    tc = np.clip(s.taken_card.astype(np.int64), 0, NUM_CARDS - 1)
    held = s.hands[rows, mover, tc] & s.taken[rows, mover, tc]
    _bad("taken_card must be -1, or (in the discard phase) a card the mover took from the pile and holds",
         (s.taken_card >= 0) & ~(live & (s.phase == Phase.DISCARD) & held), lambda g: int(s.taken_card[g]))
    _bad("taken (cards taken from the pile and still held) must be a subset of hands",
         (s.taken & ~s.hands).any(axis=(1, 2)))
    if episode == "hand":
        _bad("a running hand episode has scores and hands_won 0",
             live & ((s.scores != 0).any(axis=1) | (s.hands_won != 0).any(axis=1)),
             lambda g: f"scores={s.scores[g].tolist()}, hands_won={s.hands_won[g].tolist()}")
    else:
        _bad(f"a running game has scores below target_score ({rules.target_score})",
             live & (s.scores >= rules.target_score).any(axis=1), lambda g: s.scores[g].tolist())


def _copy_rows(state: GameState, idx) -> GameState:
    return GameState(**{f.name: getattr(state, f.name)[idx].copy() for f in fields(state)})


def _ended_flags(state: GameState, rules: Rules, episode: str) -> np.ndarray:
    """(N, 2) (terminated, truncated) of finished games, as ``step`` would repeat them: a hand episode
    voided by the turn cap (no card missing, stock above the wall, turns at the cap) is truncated;
    every other finished game is terminated."""
    stock = NUM_CARDS - state.stock_next.astype(np.int64)
    all_placed = state.hands.sum(axis=(1, 2)) + stock + state.pile_size == NUM_CARDS
    cap = (episode == "hand") & all_placed & (stock > WALL) & (state.turns >= rules.max_turns_per_hand)
    return np.stack([state.done & ~cap, state.done & cap], axis=1)
