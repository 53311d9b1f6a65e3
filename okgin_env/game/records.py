"""The named records the numba kernels pass: the game state, a hand's result, a step's outputs.

Each record is a ``typing.NamedTuple`` of arrays (batch axis first) that numba compiles in
nopython mode, so a kernel reads ``state.stock_next`` or ``result.winner``, never an index.
The rules travel the same way (``okgin_env.game.rules.RuleParams``: ``rules.knock_limit``).

The boundary with Python: a record crosses into numba as its plain tuple (``plain(record)``,
built once and kept, as the arrays are written in place and never rebound), and the entry
kernel names it back (``named_core``, ``GameState(*st)``). numba types a plain tuple of arrays
in C but a named one in Python, about 0.1 us more per array: for the five records of a step,
two microseconds of a ten-microsecond one-game step. Below the entry every kernel takes and
reads the named records. The order of the fields is the record's own; nothing else keeps it.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from okgin_env.game.cards import NUM_CARDS
from okgin_env.game.jit import kernel
from okgin_env.game.rules import RuleParams


class GameState(NamedTuple):
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
        """``n`` games, all arrays zero (``taken_card`` -1): fill them before use."""
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
        return GameState(*(a.copy() for a in self))

    def rows(self, idx: Any) -> "GameState":
        """A copy of the games ``idx`` (indices, repeats allowed, a bool mask or a slice)."""
        if isinstance(idx, np.ndarray):  # advanced indexing copies already
            return GameState(*(a[idx] for a in self))
        return GameState(*(a[idx].copy() for a in self))

    def arrays(self) -> tuple:
        """The plain tuple a kernel receives (see the module docstring)."""
        return tuple(self)


class HandResult(NamedTuple):
    """How the hands that ended in a step ended; rows are valid where ``StepOutput.hand_over``,
    the others are blank (-1, False). Players are ids 0/1, -1 for none."""

    knocker: np.ndarray  #: (N,) int32 player who knocked, -1 on a void hand
    winner: np.ndarray  #: (N,) int32 player who scored, -1 on a void hand
    game_winner: np.ndarray  #: (N,) int32 winner of the game, -1 unless game_over
    upcard: np.ndarray  #: (N,) int32 the hand's first upcard
    dealer: np.ndarray  #: (N,) int32 the hand's dealer
    knock_card: np.ndarray  #: (N,) int32 the knocker's face-down discard, -1 none
    deadwood: np.ndarray  #: (N, 2) int32 K for the knocker, D after lay-offs for the defender (own minimal deadwood on a void hand)
    points: np.ndarray  #: (N, 2) int32 scored this hand (spade doubling included)
    scores: np.ndarray  #: (N, 2) int32 totals after the hand (game bonuses at game end; the hand's points in hand episodes)
    gin: np.ndarray  #: (N,) bool
    undercut: np.ndarray  #: (N,) bool
    void: np.ndarray  #: (N,) bool the wall or the turn cap ended the hand
    truncated_hand: np.ndarray  #: (N,) bool void by the turn cap
    spade_doubled: np.ndarray  #: (N,) bool
    game_over: np.ndarray  #: (N,) bool a game episode ended with this hand
    hands: np.ndarray  #: (N, 2, 52) bool final hands (the knocker's without the face-down discard)
    meld_id: np.ndarray  #: (N, 52) int8 meld of each card, knocker's melds first, -1 deadwood
    laid_off: np.ndarray  #: (N, 52) bool defender cards laid off

    @classmethod
    def blank(cls, n: int) -> "HandResult":
        """``n`` blank rows: no hand recorded."""
        ints = [np.full(n, -1, np.int32) for _ in range(6)]
        pairs = [np.full((n, 2), -1, np.int32) for _ in range(3)]
        flags = [np.zeros(n, bool) for _ in range(6)]
        return cls(*ints, *pairs, *flags, np.zeros((n, 2, NUM_CARDS), bool), np.full((n, NUM_CARDS), -1, np.int8),
                   np.zeros((n, NUM_CARDS), bool))

    def copy(self) -> "HandResult":
        return HandResult(*(a.copy() for a in self))


class StepArrays(NamedTuple):
    """What one step writes per game besides the views; blank (zeros) between steps except
    ``ended_*``, the game's own record of how each finished episode ended, repeated until a reset."""

    rewards: np.ndarray  #: (N, 2) float32 zero-sum score change of each player this step
    terminated: np.ndarray  #: (N,) bool
    truncated: np.ndarray  #: (N,) bool
    hand_over: np.ndarray  #: (N,) bool a hand ended in this step (void included)
    need_deal: np.ndarray  #: (N,) bool a game episode goes on: deal its next hand (by next_dealer)
    next_dealer: np.ndarray  #: (N,) int8 dealer of the next hand where need_deal
    ended_terminated: np.ndarray  #: (N,) bool the finished episode was terminated (kept across steps)
    ended_truncated: np.ndarray  #: (N,) bool ... truncated (kept across steps)

    @classmethod
    def blank(cls, n: int) -> "StepArrays":
        return cls(np.zeros((n, 2), np.float32), np.zeros(n, bool), np.zeros(n, bool), np.zeros(n, bool),
                   np.zeros(n, bool), np.zeros(n, np.int8), np.zeros(n, bool), np.zeros(n, bool))


class Views(NamedTuple):
    """Where observe kernels write: observations (rows chosen by the request) and masks."""

    obs: np.ndarray  #: (K, OBS_SIZE) float32
    mask: np.ndarray  #: (N, 107) bool legal actions of the mover, by game (or K packed rows)


class ObserveRequest(NamedTuple):
    """What ``core.observe`` writes: for each j, player ``players[j]``'s view of game ``games[j]``
    (a player < 0 gets zeros) into row ``rows[j]`` of ``views.obs``, or of ``second.obs`` where
    ``second[j]``, or no observation where ``rows[j] == MASK_ONLY``; with ``masks``, the
    mover's legal actions into ``views.mask[games[j]]``."""

    games: np.ndarray  #: (K,) int64
    players: np.ndarray  #: (K,) int64
    rows: np.ndarray  #: (K,) int64
    second: np.ndarray  #: (K,) bool (an empty array: no row goes to the second views)
    masks: bool


MASK_ONLY = -1  #: ObserveRequest.rows: the row gets its mask only (for a reader of masks only)


class Core(NamedTuple):
    """Everything the step kernels read and write for one ``VectorGame``."""

    rules: RuleParams
    state: GameState
    result: HandResult
    out: StepArrays


def plain(record: Any) -> Any:
    """``record`` with every named tuple in it a plain tuple (what a kernel is handed)."""
    if isinstance(record, tuple):
        return tuple(plain(x) for x in record)
    return record


@kernel(inline="always")
def named_core(core):
    """The ``Core`` of a plain ``plain(core)`` tuple, every record named again."""
    c = Core(*core)
    return Core(RuleParams(*c.rules), GameState(*c.state), HandResult(*c.result), StepArrays(*c.out))


@kernel
def blank_result_row(r, i):
    """Row i of the HandResult ``r`` blank again (no hand recorded)."""
    r.knocker[i] = r.winner[i] = r.game_winner[i] = -1
    r.upcard[i] = r.dealer[i] = r.knock_card[i] = -1
    for q in range(2):
        r.deadwood[i, q] = r.points[i, q] = r.scores[i, q] = -1
    r.gin[i] = r.undercut[i] = r.void[i] = r.truncated_hand[i] = r.spade_doubled[i] = r.game_over[i] = False
    for c in range(NUM_CARDS):
        r.hands[i, 0, c] = r.hands[i, 1, c] = r.laid_off[i, c] = False
        r.meld_id[i, c] = -1


@kernel
def copy_result_row(src, i, dst, j):
    """Row i of the HandResult ``src`` into row j of ``dst``."""
    dst.knocker[j], dst.winner[j], dst.game_winner[j] = src.knocker[i], src.winner[i], src.game_winner[i]
    dst.upcard[j], dst.dealer[j], dst.knock_card[j] = src.upcard[i], src.dealer[i], src.knock_card[i]
    for q in range(2):
        dst.deadwood[j, q], dst.points[j, q], dst.scores[j, q] = src.deadwood[i, q], src.points[i, q], src.scores[i, q]
    dst.gin[j], dst.undercut[j], dst.void[j] = src.gin[i], src.undercut[i], src.void[i]
    dst.truncated_hand[j], dst.spade_doubled[j], dst.game_over[j] = (src.truncated_hand[i], src.spade_doubled[i],
                                                                    src.game_over[i])
    for c in range(NUM_CARDS):
        dst.hands[j, 0, c], dst.hands[j, 1, c] = src.hands[i, 0, c], src.hands[i, 1, c]
        dst.laid_off[j, c], dst.meld_id[j, c] = src.laid_off[i, c], src.meld_id[i, c]


__all__ = ["GameState", "HandResult", "StepArrays", "Views", "ObserveRequest", "MASK_ONLY", "Core", "plain",
           "named_core", "blank_result_row", "copy_result_row"]
