"""Oklahoma Gin as a batched numpy game: N independent games stepped by one call.

This module is the rule book in code (``RULES.md`` is the binding text). In short:

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
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from enum import IntEnum
from typing import Sequence

import numpy as np
from numba import njit

from . import melds as _melds
from .actions import DRAW_STOCK, KNOCK, NUM_ACTIONS, PASS, TAKE_DISCARD, action_text
from .cards import HAND_SIZE, NUM_CARDS, NUM_RANKS, card_text, parse_deck
from .observation import (CANNOT_DISCARD, DEADWOOD_SCALE, DISCARD_DEADWOOD, DISCARD_TOP, IS_DEALER, KNOCK_LIMIT,
                          OBS_SIZE, OPP_DECLINED, OPP_DISCARDED, OPP_TAKEN, OWN_HAND, PHASE, PILE_BURIED, SCORES,
                          STOCK_SCALE, STOCK_SIZE)
from .rules import NEXT_DEALER_CHOICES, Rules

UPCARD_POS = 2 * HAND_SIZE  #: deck[20] is the upcard
STOCK_START = UPCARD_POS + 1  #: deck[21] is the first stock card
WALL = 2  #: an ordinary discard leaving this many stock cards voids the hand
EPISODES = ("hand", "game")


class Phase(IntEnum):
    """Whose decision it is and of what kind."""

    OFFER_NONDEALER = 0  #: non-dealer: take the upcard or pass
    OFFER_DEALER = 1  #: dealer: take the upcard or pass
    FORCED_DRAW = 2  #: non-dealer after both passed: draw the stock (only legal action)
    DRAW = 3  #: start of a turn: draw the stock or take the top discard
    DISCARD = 4  #: after taking a card: discard or knock
    OVER = 5  #: the episode has ended


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


# HandResult is backed by four packed arrays (few allocations per step); its fields are views.
_R_INT = ("knocker", "winner", "game_winner", "upcard", "dealer", "knock_card", "deadwood0", "deadwood1",
          "points0", "points1", "scores0", "scores1")
_R_BOOL = ("gin", "undercut", "void", "truncated_hand", "spade_doubled", "game_over")
(RI_KNOCKER, RI_WINNER, RI_GAME_WINNER, RI_UPCARD, RI_DEALER, RI_KNOCK_CARD, RI_DEADWOOD, _, RI_POINTS, _,
 RI_SCORES, _) = range(len(_R_INT))
RB_GIN, RB_UNDERCUT, RB_VOID, RB_TRUNC, RB_SPADE, RB_GAME_OVER = range(len(_R_BOOL))


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

    __slots__ = ("ints", "bools", "cards", "meld_id")

    def __init__(self, n: int) -> None:
        self.ints = np.full((n, len(_R_INT)), -1, np.int32)  #: packed integer fields
        self.bools = np.zeros((n, len(_R_BOOL)), bool)  #: packed flags
        self.cards = np.zeros((n, 3, NUM_CARDS), bool)  #: hands of both players + laid_off
        self.meld_id = np.full((n, NUM_CARDS), -1, np.int8)

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
    laid_off = property(lambda self: self.cards[:, 2])


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
LINE_BONUS, GAME_BONUS = 25, 100


def _rule_params(rules: Rules, episode: str) -> np.ndarray:
    return np.array([
        -1 if rules.knock_limit == "upcard" else rules.knock_limit, rules.gin_bonus, rules.undercut_bonus,
        NEXT_DEALER_CHOICES.index(rules.next_dealer), rules.discard_taken_card, rules.spade_double,
        rules.target_score, rules.game_bonuses, rules.max_turns_per_hand, episode == "game",
    ], dtype=np.int64)


# --------------------------------------------------------------------------- kernels

@njit(cache=True)
def _deal_kernel(idx, decks, dealers, rp, s_deck, s_hands, s_stock_next, s_pile, s_pile_size, s_dealer,
                 s_cur, s_phase, s_taken_card, s_knock_limit, s_turns, s_taken, s_discarded, s_declined, s_done):
    """Deal a new hand in games idx[j] from decks[j] with dealers[j]."""
    for j in range(idx.shape[0]):
        i = idx[j]
        d = dealers[j]
        for c in range(NUM_CARDS):
            s_deck[i, c] = decks[j, c]
            for p in range(2):
                s_hands[i, p, c] = False
                s_taken[i, p, c] = False
                s_discarded[i, p, c] = False
                s_declined[i, p, c] = False
        for k in range(UPCARD_POS):  # alternately, non-dealer first
            s_hands[i, (1 - d) if k % 2 == 0 else d, decks[j, k]] = True
        up = decks[j, UPCARD_POS]
        s_pile[i, 0] = up
        s_pile_size[i] = 1
        s_stock_next[i] = STOCK_START
        s_dealer[i] = d
        s_cur[i] = 1 - d
        s_phase[i] = 0  # OFFER_NONDEALER
        s_taken_card[i] = -1
        s_turns[i] = 0
        s_done[i] = False
        rank = up % NUM_RANKS
        s_knock_limit[i] = rp[RP_KNOCK_LIMIT] if rp[RP_KNOCK_LIMIT] >= 0 else (0 if rank == 0 else min(rank + 1, 10))


@njit(cache=True)
def _end_hand(i, knocker, winner, pts, void, cap, rp, s_scores, s_hands_won, s_dealer, s_cur, s_phase, s_done,
              rewards, flags, next_dealer, r_int, r_bool):
    """Book a finished hand: scores, rewards, episode end or the next deal."""
    before0, before1 = s_scores[i, 0], s_scores[i, 1]
    game_ep = rp[RP_GAME_EPISODE] == 1
    game_over = False
    r_int[i, RI_POINTS] = 0
    r_int[i, RI_POINTS + 1] = 0
    if not void:
        loser = 1 - winner
        r_int[i, RI_WINNER] = winner
        r_int[i, RI_POINTS + winner] = pts
        s_scores[i, winner] += pts
        s_hands_won[i, winner] += 1
        if game_ep and s_scores[i, winner] >= rp[RP_TARGET]:
            game_over = True
            if rp[RP_GAME_BONUSES] == 1:
                s_scores[i, winner] += LINE_BONUS * s_hands_won[i, winner] + GAME_BONUS
                s_scores[i, loser] += LINE_BONUS * s_hands_won[i, loser]
                if s_hands_won[i, loser] == 0:
                    s_scores[i, winner] *= 2
            r_bool[i, RB_GAME_OVER] = True
            r_int[i, RI_GAME_WINNER] = winner
    gain0 = s_scores[i, 0] - before0
    gain1 = s_scores[i, 1] - before1
    rewards[i, 0] = gain0 - gain1
    rewards[i, 1] = gain1 - gain0
    r_int[i, RI_SCORES] = s_scores[i, 0]
    r_int[i, RI_SCORES + 1] = s_scores[i, 1]
    if game_ep and not game_over:
        flags[i, 3] = True
        if void:
            next_dealer[i] = s_dealer[i]
        elif rp[RP_NEXT_DEALER] == 0:
            next_dealer[i] = winner
        elif rp[RP_NEXT_DEALER] == 1:
            next_dealer[i] = 1 - winner
        else:
            next_dealer[i] = 1 - s_dealer[i]
    else:
        s_done[i] = True
        s_cur[i] = -1
        s_phase[i] = 5  # OVER
        if cap and not game_ep:
            flags[i, 1] = True
        else:
            flags[i, 0] = True


@njit(cache=True)
def _step_kernel(actions, rp, run_dw, run_melded, rank_points,
                 s_deck, s_hands, s_stock_next, s_pile, s_pile_size, s_dealer, s_cur, s_phase, s_taken_card,
                 s_knock_limit, s_turns, s_scores, s_hands_won, s_taken, s_discarded, s_declined, s_done,
                 rewards, flags, next_dealer, r_int, r_bool, r_cards, r_meld_id, ended):
    """Apply one action in every unfinished game (the action is legal: checked by the caller).

    flags[i] = (terminated, truncated, hand_over, need_deal); ended[i] = how game i's episode
    ended (terminated, truncated), repeated in flags while it stays finished.
    Returns (games needing a new deal, games whose episode is over).
    """
    km = np.empty(4, np.int64)
    dm = np.empty(4, np.int64)
    cand = np.empty(4, np.int64)
    tmp = np.empty(4, np.int64)
    kd = np.empty(2, np.int64)
    deals = 0
    for i in range(actions.shape[0]):
        if s_done[i]:
            flags[i, 0] = ended[i, 0]
            flags[i, 1] = ended[i, 1]
            continue
        a = actions[i]
        p = s_cur[i]
        ph = s_phase[i]
        if a == TAKE_DISCARD:
            top = s_pile[i, s_pile_size[i] - 1]
            s_pile_size[i] -= 1
            s_hands[i, p, top] = True
            s_taken[i, p, top] = True
            s_taken_card[i] = top
            s_phase[i] = 4  # DISCARD
        elif a == PASS:
            s_declined[i, p, s_pile[i, 0]] = True
            s_phase[i] = 1 if ph == 0 else 2
            s_cur[i] = 1 - p
        elif a == DRAW_STOCK:
            if ph == 3:  # drawing instead of taking the top discard declines it
                s_declined[i, p, s_pile[i, s_pile_size[i] - 1]] = True
            card = s_deck[i, s_stock_next[i]]
            s_stock_next[i] += 1
            s_hands[i, p, card] = True
            s_taken_card[i] = -1
            s_phase[i] = 4
        else:  # discard or knock
            knock = a >= KNOCK
            c = a - KNOCK if knock else a
            s_hands[i, p, c] = False
            s_taken[i, p, c] = False
            s_taken_card[i] = -1
            s_turns[i] += 1
            if not knock:
                s_pile[i, s_pile_size[i]] = c
                s_pile_size[i] += 1
                s_discarded[i, p, c] = True
                wall = NUM_CARDS - s_stock_next[i] <= WALL
                cap = (not wall) and s_turns[i] >= rp[RP_MAX_TURNS]
                if not (wall or cap):
                    s_cur[i] = 1 - p
                    s_phase[i] = 3  # DRAW
                    continue
                # void hand: report both players' own deadwood
                flags[i, 2] = True
                r_bool[i, RB_VOID] = True
                r_bool[i, RB_TRUNC] = cap
                for q in range(2):
                    _melds.masks_of_row(s_hands[i, q], km)
                    r_int[i, RI_DEADWOOD + q] = _melds.min_deadwood_of_masks(km, run_dw, cand, tmp)
                    for cc in range(NUM_CARDS):
                        r_cards[i, q, cc] = s_hands[i, q, cc]
                r_int[i, RI_UPCARD] = s_deck[i, UPCARD_POS]
                r_int[i, RI_DEALER] = s_dealer[i]
                _end_hand(i, -1, -1, 0, True, cap, rp, s_scores, s_hands_won, s_dealer, s_cur, s_phase, s_done,
                          rewards, flags, next_dealer, r_int, r_bool)
                continue
            # knock: showdown
            _melds.masks_of_row(s_hands[i, p], km)
            _melds.masks_of_row(s_hands[i, 1 - p], dm)
            _melds.showdown_of_masks(km, dm, run_dw, run_melded, rank_points, r_meld_id[i], r_cards[i, 2], kd)
            k_dw, d_dw = kd[0], kd[1]
            up = s_deck[i, UPCARD_POS]
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
            flags[i, 2] = True
            r_int[i, RI_KNOCKER] = p
            r_int[i, RI_KNOCK_CARD] = c
            r_int[i, RI_DEADWOOD + p] = k_dw
            r_int[i, RI_DEADWOOD + 1 - p] = d_dw
            r_int[i, RI_UPCARD] = up
            r_int[i, RI_DEALER] = s_dealer[i]
            for q in range(2):
                for cc in range(NUM_CARDS):
                    r_cards[i, q, cc] = s_hands[i, q, cc]
            _end_hand(i, p, winner, pts, False, False, rp, s_scores, s_hands_won, s_dealer, s_cur, s_phase,
                      s_done, rewards, flags, next_dealer, r_int, r_bool)
    over = 0
    for i in range(actions.shape[0]):
        deals += flags[i, 3]
        if flags[i, 0] or flags[i, 1]:
            ended[i, 0] = flags[i, 0]
            ended[i, 1] = flags[i, 1]
            over += 1
    return deals, over


@njit(cache=True)
def _observe_kernel(players, write_mask, rp, run_dw, s_hands, s_pile, s_pile_size, s_stock_next, s_dealer,
                    s_cur, s_phase, s_taken_card, s_knock_limit, s_scores, s_taken, s_discarded, s_declined,
                    s_done, out_obs, out_mask):
    """Observation of players[i] in every game; with write_mask, also the legal-action mask of the mover."""
    ms = np.empty(4, np.int64)
    dw = np.empty(NUM_CARDS, np.int64)
    cand = np.empty(4, np.int64)
    tmp = np.empty(4, np.int64)
    for i in range(players.shape[0]):
        p = players[i]
        o = out_obs[i]
        o[:] = 0.0
        if write_mask:
            out_mask[i, :] = False
        if p < 0:
            continue
        q = 1 - p
        for c in range(NUM_CARDS):
            o[OWN_HAND + c] = s_hands[i, p, c]
            o[OPP_TAKEN + c] = s_taken[i, q, c]
            o[OPP_DISCARDED + c] = s_discarded[i, q, c]
            o[OPP_DECLINED + c] = s_declined[i, q, c]
        n = s_pile_size[i]
        if n > 0:
            o[DISCARD_TOP + s_pile[i, n - 1]] = 1.0
            for k in range(n - 1):
                o[PILE_BURIED + s_pile[i, k]] = 1.0
        o[KNOCK_LIMIT + s_knock_limit[i]] = 1.0
        o[STOCK_SIZE] = (NUM_CARDS - s_stock_next[i]) / STOCK_SCALE
        o[IS_DEALER] = 1.0 if s_dealer[i] == p else 0.0
        if rp[RP_GAME_EPISODE] == 1:
            o[SCORES] = s_scores[i, p] / rp[RP_TARGET]
            o[SCORES + 1] = s_scores[i, q] / rp[RP_TARGET]
            o[SCORES + 2] = rp[RP_TARGET] / 100.0
        ph = s_phase[i]
        if s_done[i] or s_cur[i] != p:
            continue
        o[PHASE + ph] = 1.0
        m = out_mask[i]
        if ph == 0 or ph == 1:
            if write_mask:
                m[TAKE_DISCARD] = True
                m[PASS] = True
        elif ph == 2:
            if write_mask:
                m[DRAW_STOCK] = True
        elif ph == 3:
            if write_mask:
                m[DRAW_STOCK] = True
                m[TAKE_DISCARD] = True
        else:
            _melds.masks_of_row(s_hands[i, p], ms)
            _melds.deadwood_after_discard_of_masks(ms, run_dw, dw, cand, tmp)
            blocked = s_taken_card[i] if rp[RP_DISCARD_TAKEN] == 0 else -1
            if blocked >= 0:
                o[CANNOT_DISCARD + blocked] = 1.0
            for c in range(NUM_CARDS):
                if not s_hands[i, p, c]:
                    continue
                o[DISCARD_DEADWOOD + c] = (DEADWOOD_SCALE - dw[c]) / DEADWOOD_SCALE
                if write_mask and c != blocked:
                    m[c] = True
                    if dw[c] <= s_knock_limit[i]:
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
        # (terminated, truncated) of each finished episode, repeated by later steps until a reset
        self._ended = np.zeros((self.num_games, 2), bool)

    # ------------------------------------------------------------------ dealing
    def _random_decks(self, k: int) -> np.ndarray:
        return self.rng.permuted(np.tile(np.arange(NUM_CARDS, dtype=np.int8), (k, 1)), axis=1)

    def _deal(self, idx: np.ndarray, decks: np.ndarray, dealers: np.ndarray) -> None:
        s = self.state
        _deal_kernel(idx.astype(np.int64), decks.astype(np.int8), dealers.astype(np.int8), self._rp, s.deck,
                     s.hands, s.stock_next, s.pile, s.pile_size, s.dealer, s.current_player, s.phase,
                     s.taken_card, s.knock_limit, s.turns, s.taken, s.discarded, s.declined, s.done)

    def _new_games(self, idx: np.ndarray, decks: np.ndarray | None = None, dealers: np.ndarray | None = None) -> None:
        if decks is None:
            decks = self._random_decks(len(idx))
        if dealers is None:
            dealers = self.rng.integers(0, 2, len(idx))
        self.state.scores[idx] = 0
        self.state.hands_won[idx] = 0
        self._ended[idx] = False
        self._deal(idx, decks, dealers)

    def reset(self, seed: int | None = None, decks: Sequence | np.ndarray | None = None,
              dealers: int | Sequence[int] | np.ndarray | None = None) -> StepOutput:
        """Start new episodes in all games; ``decks``/``dealers`` replay given deals (RULES.md)."""
        if seed is not None:
            self.rng = np.random.default_rng(seed)
        d = None if decks is None else self._check_decks(decks)
        if dealers is None:
            dl = self.rng.integers(0, 2, self.num_games)  # drawn even with decks, so seeds line up
        else:
            dl = self._check_dealers(dealers)
        self._new_games(self._all, d, dl)
        return self._output(np.zeros((self.num_games, 2), np.float32), HandResult(self.num_games),
                            np.zeros(self.num_games, bool), np.zeros(self.num_games, bool),
                            np.zeros(self.num_games, bool))

    def _check_decks(self, decks: Sequence | np.ndarray) -> np.ndarray:
        arr = np.asarray(decks, dtype=object) if not isinstance(decks, np.ndarray) else decks
        if arr.ndim == 1:
            arr = arr[None]
        if arr.ndim != 2 or arr.shape[0] not in (1, self.num_games):
            raise ValueError(f"decks must be one 52-card deck or one per game ({self.num_games}); got shape {np.shape(decks)}")
        if arr.dtype.kind in "iu":
            ok = arr.shape[1] == NUM_CARDS and arr.min() >= 0 and arr.max() < NUM_CARDS
            if ok and (np.sort(arr, axis=1) == np.arange(NUM_CARDS)).all():
                out = arr.astype(np.int8)
            else:
                out = np.stack([self._parse_one(row, b) for b, row in enumerate(arr)])
        else:
            out = np.stack([self._parse_one(row, b) for b, row in enumerate(arr)])
        return np.broadcast_to(out, (self.num_games, NUM_CARDS)).copy()

    @staticmethod
    def _parse_one(row, b: int) -> np.ndarray:
        try:
            return parse_deck(list(row))
        except ValueError as e:
            raise ValueError(f"deck of game {b}: {e}") from None

    def _check_dealers(self, dealers) -> np.ndarray:
        arr = np.asarray(dealers)
        if arr.ndim == 0:
            arr = np.full(self.num_games, arr)
        if arr.shape != (self.num_games,) or arr.dtype.kind not in "iub" or not np.isin(arr, (0, 1)).all():
            raise ValueError(f"dealers must be 0 or 1 (an int or one per game, {self.num_games}); got {dealers!r}")
        return arr.astype(np.int8)

    # --------------------------------------------------------------------- step
    def step(self, actions: Sequence[int] | np.ndarray) -> StepOutput:
        """Apply one action per game (ignored in finished games) and return the new view."""
        a = np.asarray(actions)
        if a.shape != (self.num_games,) or a.dtype.kind not in "iu":
            raise ValueError(f"actions must be an integer array of shape ({self.num_games},), got {a.dtype} {a.shape}")
        s = self.state
        a = a.astype(np.int64)
        bad = _first_illegal(a, self._mask, s.done)
        if bad >= 0:
            self._illegal(bad, int(a[bad]))
        n = self.num_games
        rewards = np.zeros((n, 2), np.float32)
        flags = np.zeros((n, 4), bool)
        terminated, truncated, hand_over, need_deal = flags.T
        next_dealer = np.zeros(n, np.int8)
        r = HandResult(n)
        deals, over = _step_kernel(a, self._rp, _melds.RUN_DEADWOOD, _melds.RUN_MELDED, _melds._RANK_POINTS,
                     s.deck, s.hands, s.stock_next, s.pile, s.pile_size, s.dealer, s.current_player, s.phase,
                     s.taken_card, s.knock_limit, s.turns, s.scores, s.hands_won, s.taken, s.discarded,
                     s.declined, s.done, rewards, flags, next_dealer, r.ints, r.bools, r.cards, r.meld_id, self._ended)
        if deals:
            idx = np.flatnonzero(need_deal)
            self._deal(idx, self._random_decks(len(idx)), next_dealer[idx])
        if self.autoreset and over:
            self._new_games(np.flatnonzero(terminated | truncated))
        return self._output(rewards, r, terminated, truncated, hand_over)

    def _illegal(self, game: int, action: int) -> None:
        legal = np.flatnonzero(self._mask[game])
        what = action_text(action) if 0 <= action < NUM_ACTIONS else "out of range 0-106"
        listing = ", ".join(f"{x} ({action_text(x)})" for x in legal)
        raise ValueError(f"illegal action {action} ({what}) in game {game} for player "
                         f"{int(self.state.current_player[game])}; legal actions: {listing}")

    # ------------------------------------------------------------- observation
    def _view(self, players: np.ndarray, write_mask: bool) -> np.ndarray:
        s = self.state
        obs = np.empty((self.num_games, OBS_SIZE), np.float32)
        _observe_kernel(players.astype(np.int64), write_mask, self._rp, _melds.RUN_DEADWOOD, s.hands, s.pile,
                        s.pile_size, s.stock_next, s.dealer, s.current_player, s.phase, s.taken_card,
                        s.knock_limit, s.scores, s.taken, s.discarded, s.declined, s.done, obs, self._mask)
        return obs

    def observe(self, players: int | Sequence[int] | np.ndarray) -> np.ndarray:
        """(N, OBS_SIZE) observation of the given player in each game (any player, not only the mover)."""
        arr = np.asarray(players)
        if arr.ndim == 0:
            arr = np.full(self.num_games, arr)
        if arr.shape != (self.num_games,) or not np.isin(arr, (0, 1)).all():
            raise ValueError(f"players must be 0 or 1 (an int or one per game); got {players!r}")
        return self._view(arr, write_mask=False)

    def _output(self, rewards, result, terminated, truncated, hand_over) -> StepOutput:
        obs = self._view(self.state.current_player, write_mask=True)
        return StepOutput(self.state.current_player.copy(), self._mask.copy(), obs, rewards, terminated,
                          truncated, hand_over, result)

    @property
    def legal_action_mask(self) -> np.ndarray:
        """(N, 107) bool legal actions of the player to move (read-only view)."""
        v = self._mask.view()
        v.flags.writeable = False
        return v

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
    for i in range(mask.shape[0]):
        n = 0
        for a in range(mask.shape[1]):
            n += mask[i, a]
        k = int(u[i] * n)
        out[i] = 0
        for a in range(mask.shape[1]):
            if mask[i, a]:
                if k == 0:
                    out[i] = a
                    break
                k -= 1


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
                            ("knock_limit", 0, 10), ("turns", 0, np.iinfo(np.int16).max),
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
