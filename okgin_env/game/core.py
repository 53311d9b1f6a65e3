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

The kernels (``okgin_env.game.kernels``) take named records (``okgin_env.game.records``: ``GameState``,
``HandResult``, the step's ``StepArrays``; the rules as ``okgin_env.game.rules.RuleParams``) and read
every field by name (``state.stock_next``, ``rules.knock_limit``). The phases and the game's fixed
numbers come from ``okgin_env.game.constants``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from okgin_env.game.actions import NUM_ACTIONS, action_text
from okgin_env.game.cards import HAND_SIZE, NUM_CARDS, card_text, parse_deck
from okgin_env.game.constants import (  # noqa: F401
    GAME_BONUS,
    LINE_BONUS,
    MAX_KNOCK_LIMIT,
    PH_DISCARD,
    PH_DRAW,
    PH_FORCED_DRAW,
    PH_OFFER_DEALER,
    PH_OFFER_NONDEALER,
    PH_OVER,
    STOCK_START,
    UPCARD_POS,
    WALL,
    Phase,
)
from okgin_env.game.handle import core_ref, deal_with_ref, observe_with_ref, step_with_ref
from okgin_env.game.jit import kernel
from okgin_env.game.kernels import clear_outputs_kernel
from okgin_env.game.observation import OBS_SIZE
from okgin_env.game.records import Core, GameState, HandResult, ObserveRequest, StepArrays, plain
from okgin_env.game.rules import RuleParams, Rules, rule_params

EPISODES = ("hand", "game")
__all__ = ["VectorGame", "GameState", "HandResult", "StepOutput", "Phase", "random_legal_actions", "check_state",
           "EPISODES"]


@dataclass
class StepOutput:
    """What ``reset`` and ``step`` return, per game. From ``step``, ``rewards``, ``terminated``,
    ``truncated``, ``hand_over`` and ``result`` are the game's own buffers, written again by the next
    ``step``: copy what is kept across steps. ``observation``, ``legal_action_mask`` and
    ``current_player`` are new arrays each call."""

    current_player: np.ndarray  #: (N,) int8 player to move (-1 when over)
    legal_action_mask: np.ndarray  #: (N, 107) bool for current_player
    observation: np.ndarray  #: (N, OBS_SIZE) float32 of current_player
    rewards: np.ndarray  #: (N, 2) float32 zero-sum score change of each player this step
    terminated: np.ndarray  #: (N,) bool
    truncated: np.ndarray  #: (N,) bool
    hand_over: np.ndarray  #: (N,) bool a hand ended in this step (void included)
    result: HandResult


_ORDERED_DECK = np.arange(NUM_CARDS, dtype=np.int8)[None]  #: (1, 52) the cards in index order
_NO_SECOND = np.zeros(0, bool)  #: ObserveRequest.second when every row goes to the one views


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
        self.rng = np.random.default_rng(seed)
        self.state = GameState.empty(self.num_games)
        self.state.done[:] = True
        self.state.current_player[:] = -1
        # the step's outputs, written in place by every step (StepOutput's rewards, flags and result)
        self.core = Core(rule_params(rules, episode), self.state, HandResult.blank(self.num_games),
                         StepArrays.blank(self.num_games))
        self._core = plain(self.core)  # as the kernels receive it (okgin_env.game.records)
        self._mask = np.zeros((self.num_games, NUM_ACTIONS), bool)
        self._ref = core_ref(self._core, self._mask)  # both behind one pointer: a step's kernel call is cheap
        self._all = np.arange(self.num_games)
        self._move_all = np.ones(self.num_games, bool)

    def __getstate__(self) -> dict:
        state = self.__dict__.copy()
        del state["_ref"]  # numba's pointer does not pickle; rebuilt from the arrays it points to
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._ref = core_ref(self._core, self._mask)

    # ------------------------------------------------------------------ dealing
    def _random_decks(self, k: int) -> np.ndarray:
        return self.rng.permuted(_ORDERED_DECK.repeat(k, axis=0), axis=1)  # repeat: np.tile's Python costs more

    def _deal(self, idx: np.ndarray, decks: np.ndarray, dealers: np.ndarray, new_episode: bool = False) -> None:
        deal_with_ref(self._ref, idx.astype(np.int64, copy=False), decks.astype(np.int8, copy=False),
                      dealers.astype(np.int8, copy=False), new_episode)

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
        step's outputs: ``core.out.need_deal`` and ``core.out.next_dealer``."""
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
        clear_outputs_kernel(self._core)
        out = self.core.out
        obs = self._view(self.state.current_player, write_mask=True, rows=None if games is None else idx,
                         out=observation)
        return StepOutput(self.state.current_player.copy(), self._mask.copy(), obs, out.rewards, out.terminated,
                          out.truncated, out.hand_over, self.core.result)

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

        The output's ``rewards``, ``terminated``, ``truncated``, ``hand_over`` and ``result`` are
        the game's own buffers (``core.out``, ``core.result``), written again by the next ``step``
        or ``reset``: copy what you keep across steps. ``observation``, ``legal_action_mask`` and
        ``current_player`` are new arrays each call.

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
        a = a.astype(np.int64, copy=False)  # the kernels only read it
        move = self._move_all if games is None else self._selection(games)
        if not checked:
            bad = _first_illegal(a, self._mask, self.state.done if games is None else self.state.done | ~move)
            if bad >= 0:
                self._illegal(bad, int(a[bad]))
        obs = self._obs_buffer(observation, games is None)
        self._advance(a, move, games is None, obs)
        out = self.core.out
        return StepOutput(self.state.current_player.copy(), self._mask.copy(), obs, out.rewards, out.terminated,
                          out.truncated, out.hand_over, self.core.result)

    def _advance(self, a: np.ndarray, move: np.ndarray, every_row: bool, obs: np.ndarray) -> None:
        """Apply the (checked) int64 actions ``a`` in the games ``move`` (all of them: ``every_row``),
        writing the step's outputs (``core.out``, ``core.result``), the movers' views into ``obs``
        and ``self._mask``."""
        # the kernel also writes the new views when no game is to be dealt (most steps at small N).
        # The arrays go behind one pointer at every N (core_ref): random play, 2026-12-03, ns per
        # decision, plain records vs structref: N=32 1152 vs 962, N=1024 482 vs 453, N=4096 547 vs 453.
        deals, over, observed = step_with_ref(self._ref, a, move, obs, every_row, self.autoreset)
        if not observed:
            out = self.core.out
            if deals:
                self.deal_next_hands(out.need_deal, out.next_dealer)
            if self.autoreset and over:
                self._new_games(np.flatnonzero(out.terminated | out.truncated))
            # games that did not move kept their state, so only the others are observed again
            rows = self._all if every_row else np.flatnonzero(move | out.terminated | out.truncated)
            self._observe(rows, self.state.current_player[rows], rows, True, obs)

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

    def _observe(self, games: np.ndarray, players: np.ndarray, rows: np.ndarray, write_mask: bool,
                 obs: np.ndarray) -> None:
        """``kernels.observe``: player players[j]'s view of game games[j] into obs[rows[j]]; with
        ``write_mask`` the movers' legal actions into the game's mask."""
        ask = ObserveRequest(games.astype(np.int64, copy=False), players.astype(np.int64, copy=False),
                             rows.astype(np.int64, copy=False), _NO_SECOND, write_mask)
        observe_with_ref(self._ref, ask, obs)

    def _view(self, players: np.ndarray, write_mask: bool, rows: np.ndarray | None = None,
              out: np.ndarray | None = None) -> np.ndarray:
        """Views of players[i] in games ``rows`` (all if None; the other rows are zeros, or kept in ``out``)."""
        obs = self._obs_buffer(out, rows is None)
        if rows is None:
            rows = self._all
        self._observe(rows, players[rows], rows, write_mask, obs)
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
        self._observe(rows, arr[rows], np.arange(len(rows)), False, obs)
        return obs

    @property
    def legal_action_mask(self) -> np.ndarray:
        """(N, 107) bool legal actions of the player to move (read-only view)."""
        v = self._mask.view()
        v.flags.writeable = False
        return v

    # ------------------------------------------------------------ for fused kernels
    # A caller that steps the games with kernels of its own (the vector env's fused rounds,
    # ``okgin_env.envs.vector_kernels``, built on ``kernels.transition`` and ``kernels.observe``) hands
    # them ``kernel_core`` and ``mask_buffer``, as ``step`` hands them to the core's kernels.

    @property
    def rule_params(self) -> RuleParams:
        """The rules and episode kind as the kernels read them (``core.rules``)."""
        return self.core.rules

    @property
    def kernel_core(self) -> tuple:
        """``core`` (rules, state, the step's result and outputs) as the kernels receive it: its
        plain tuple (``okgin_env.game.records``); the arrays are the game's own, written in place."""
        return self._core

    @property
    def mask_buffer(self) -> np.ndarray:
        """(N, 107) bool the array behind ``legal_action_mask``, writable: kernels that move games
        write their new masks here in place (everyone else reads ``legal_action_mask``)."""
        return self._mask

    # ---------------------------------------------------------- save / restore
    # (module-level helpers at the end of this file: check_state and friends)

    def get_state(self, games=None) -> GameState:
        """A copy of the state of ``games`` (indices, repeats allowed, or a bool mask; all games when None)."""
        return self.state.rows(self._game_index(games, distinct=False))

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
        for mine, given in zip(self.state, state):
            mine[sel] = given
        ended = _ended_flags(state, self.rules, self.episode)
        out = self.core.out
        out.ended_terminated[sel], out.ended_truncated[sel] = ended[:, 0], ended[:, 1]
        obs = self._view(self.state.current_player, write_mask=True)
        k = len(idx)
        return StepOutput(self.state.current_player[sel].copy(), self._mask[sel].copy(), obs[sel],
                          np.zeros((k, 2), np.float32), ended[:, 0].copy(), ended[:, 1].copy(),
                          np.zeros(k, bool), HandResult.blank(k))

    @classmethod
    def from_state(cls, state: GameState, copies: int = 1, rules: Rules | None = None, episode: str = "hand",
                   autoreset: bool = False, seed: int | None = None) -> "VectorGame":
        """A new VectorGame of ``copies`` copies of each game of ``state`` (game ``j * copies + c`` is
        copy ``c`` of game ``j``), checked and ready to step; ``seed`` seeds later deals."""
        if isinstance(copies, bool) or not isinstance(copies, (int, np.integer)) or copies < 1:
            raise ValueError(f"copies must be an integer >= 1, got {copies!r}")
        n = _state_rows(state)
        game = cls(n * int(copies), rules=rules, episode=episode, autoreset=autoreset, seed=seed)
        game.set_state(state if copies == 1 else state.rows(np.repeat(np.arange(n), copies)))
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


@kernel
def _pick_kth_legal(mask, u, out):
    legal = np.empty(mask.shape[1], np.int64)
    for i in range(mask.shape[0]):
        row = mask[i]
        n = 0
        for a in range(mask.shape[1]):  # branch-free compaction: which actions are legal is unpredictable
            legal[n] = a
            n += row[a]
        out[i] = legal[int(u[i] * n)] if n > 0 else 0


@kernel
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
        raise ValueError(f"state must be an okgin_env.game.core.GameState, got {type(state).__name__}")
    ref = GameState.empty(1)
    n = None
    for name, a, want in zip(GameState._fields, state, ref):
        if not isinstance(a, np.ndarray):
            raise ValueError(f"state.{name} must be a numpy array, got {type(a).__name__}")
        if n is None:
            n = a.shape[0] if a.ndim else 0
        if n < 1 or a.shape != (n, *want.shape[1:]):
            tail = "".join(f", {x}" for x in want.shape[1:])
            raise ValueError(f"state.{name} must have shape (N{tail}) with the same N >= 1 for every field; "
                             f"got {a.shape}")
        if a.dtype.kind not in ("b" if name in _BOOL_FIELDS else "iu"):
            raise ValueError(f"state.{name} must have dtype {want.dtype}, got {a.dtype}")
    return n


def _bad(what: str, rows: np.ndarray, got=None) -> None:
    """ValueError for the first offending game (rows: bool (N,)); ``got(g)`` describes its value."""
    if rows.any():
        g = int(np.flatnonzero(rows)[0])
        detail = "" if got is None else f" (got {got(g)})"
        raise ValueError(f"invalid state in game {g} of {len(rows)}: {what}{detail}")


@kernel
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
    rp = rule_params(rules, episode)
    for name, low, high in (("deck", 0, NUM_CARDS - 1), ("stock_next", STOCK_START, NUM_CARDS),
                            ("pile_size", 0, NUM_CARDS), ("dealer", 0, 1), ("current_player", -1, 1),
                            ("phase", 0, int(Phase.OVER)), ("taken_card", -1, NUM_CARDS - 1),
                            ("knock_limit", 0, MAX_KNOCK_LIMIT), ("turns", 0, np.iinfo(np.int16).max),
                            ("scores", 0, np.iinfo(np.int32).max), ("hands_won", 0, np.iinfo(np.int32).max)):
        a = getattr(s, name)
        out = ((a < low) | (a > high)).reshape(n, -1).any(axis=1)
        _bad(f"{name} must be in {low}..{high}", out, lambda g, a=a: a[g].tolist())
    if rp.knock_limit >= 0:
        _bad(f"knock_limit must be {rp.knock_limit} under these rules", s.knock_limit != rp.knock_limit,
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


def _ended_flags(state: GameState, rules: Rules, episode: str) -> np.ndarray:
    """(N, 2) (terminated, truncated) of finished games, as ``step`` would repeat them: a hand episode
    voided by the turn cap (no card missing, stock above the wall, turns at the cap) is truncated;
    every other finished game is terminated."""
    stock = NUM_CARDS - state.stock_next.astype(np.int64)
    all_placed = state.hands.sum(axis=(1, 2)) + stock + state.pile_size == NUM_CARDS
    cap = (episode == "hand") & all_placed & (stock > WALL) & (state.turns >= rules.max_turns_per_hand)
    return np.stack([state.done & ~cap, state.done & cap], axis=1)
