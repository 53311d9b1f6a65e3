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
from okgin_env.game.cards import NUM_CARDS
from okgin_env.game.constants import Phase
from okgin_env.game.handle import (
    clear_outputs_with_ref,
    compiled_for,
    core_ref,
    deal_with_ref,
    observe_with_ref,
    step_one_with_ref,
    step_with_ref,
)
from okgin_env.game.inputs import dealers_of, decks_of, game_index, selection
from okgin_env.game.jit import kernel
from okgin_env.game.observation import OBS_SIZE
from okgin_env.game.records import (
    Core,
    GameState,
    HandResult,
    StepArrays,
    plain,
)
from okgin_env.game.rules import RuleParams, Rules, rule_params
from okgin_env.game.state_check import check_state, ended_flags, state_rows

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
        self._step_one = None  # _advance_one's compiled kernel, looked up at its first call

    def __getstate__(self) -> dict:
        state = self.__dict__.copy()
        del state["_ref"]  # numba's pointer does not pickle; rebuilt from the arrays it points to
        state["_step_one"] = None  # nor does a compiled function; looked up again when first used
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
        idx = self._all if games is None else np.flatnonzero(selection(games, self.num_games))
        d = None if decks is None else decks_of(decks, len(idx))
        if dealers is None:
            dl = self.rng.integers(0, 2, len(idx))  # drawn even with decks, so seeds line up
        else:
            dl = dealers_of(dealers, len(idx))
        self._new_games(idx, d, dl)
        clear_outputs_with_ref(self._ref)
        out = self.core.out
        obs = self._view(self.state.current_player, write_mask=True, rows=None if games is None else idx,
                         out=observation)
        return StepOutput(self.state.current_player.copy(), self._mask.copy(), obs, out.rewards, out.terminated,
                          out.truncated, out.hand_over, self.core.result)

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
        move = self._move_all if games is None else selection(games, self.num_games)
        if not checked:
            bad = _first_illegal(a, self._mask, self.state.done if games is None else self.state.done | ~move)
            if bad >= 0:
                self._illegal(bad, int(a[bad]))
        obs = self._obs_buffer(observation, games is None)
        self._advance(a, move, games is None, obs)
        out = self.core.out
        return StepOutput(self.state.current_player.copy(), self._mask.copy(), obs, out.rewards, out.terminated,
                          out.truncated, out.hand_over, self.core.result)

    def advance(self, actions: np.ndarray, observation: np.ndarray) -> None:
        """``step(actions, observation=observation, checked=True)`` for a caller that checked the
        actions and reads the step's outputs itself: no input checks and no ``StepOutput`` (they cost
        more than a one-game step's kernel). ``actions``: (N,) int64 legal actions (unchecked: an
        illegal one corrupts the game); ``observation``: a (N, OBS_SIZE) float32 C-contiguous array,
        which receives the movers' views. The outputs are then in ``core.out`` (rewards, flags,
        ``hand_over``), ``core.result``, ``state.current_player`` and ``mask_buffer``, written again
        by the next step."""
        self._advance(actions, self._move_all, True, observation)

    def _advance_one(self, action: int, observation: np.ndarray) -> None:
        """``advance`` of a one-game ``VectorGame`` (N = 1), for the envs that step one game from Python
        (the AEC env): ``action`` the game's legal action as an int (unchecked), ``observation`` a new
        (OBS_SIZE,) float32 C-contiguous array that receives the mover's view. The kernel's compiled
        form is called without numba's per-call type dispatch (``handle.compiled_for``: ~0.9 us of a
        ~12 us decision), so the arguments must have exactly those types: anything else is undefined
        behaviour, hence private."""
        step = self._step_one
        if step is None:
            if self.num_games != 1:
                raise ValueError(f"_advance_one steps a one-game VectorGame, this one has {self.num_games} games")
            step = self._step_one = compiled_for(step_one_with_ref, self._ref, 0, observation, self.autoreset)
        if not step(self._ref, action, observation, self.autoreset):
            self._deal_and_observe(self._move_all, True, observation.reshape(1, OBS_SIZE))

    def observe_into(self, players: np.ndarray, observation: np.ndarray) -> np.ndarray:
        """``observe(players)`` into the caller's (N, OBS_SIZE) float32 C-contiguous ``observation``
        (returned), without the input checks: ``players`` a (N,) int64 array of 0s and 1s."""
        self._observe(self._all, players, self._all, False, observation)
        return observation

    def _advance(self, a: np.ndarray, move: np.ndarray, every_row: bool, obs: np.ndarray) -> None:
        """Apply the (checked) int64 actions ``a`` in the games ``move`` (all of them: ``every_row``),
        writing the step's outputs (``core.out``, ``core.result``), the movers' views into ``obs``
        and ``self._mask``."""
        # the kernel also writes the new views when no game is to be dealt (most steps at small N).
        # The arrays go behind one pointer at every N (core_ref): random play, 2026-12-03, ns per
        # decision, plain records vs structref: N=32 1152 vs 962, N=1024 482 vs 453, N=4096 547 vs 453.
        if not step_with_ref(self._ref, a, move, obs, every_row, self.autoreset)[2]:
            self._deal_and_observe(move, every_row, obs)

    def _deal_and_observe(self, move: np.ndarray, every_row: bool, obs: np.ndarray) -> None:
        """What a step's kernel leaves to Python when a game needs a deal (a new hand, or a new
        episode with ``autoreset``): deal, then observe the games that moved or ended into ``obs``."""
        out = self.core.out
        ended = out.terminated | out.truncated
        if out.need_deal.any():
            self.deal_next_hands(out.need_deal, out.next_dealer)
        if self.autoreset and ended.any():
            self._new_games(np.flatnonzero(ended))
        # games that did not move kept their state, so only the others are observed again
        rows = self._all if every_row else np.flatnonzero(move | ended)
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
        observe_with_ref(self._ref, games.astype(np.int64, copy=False), players.astype(np.int64, copy=False),
                         rows.astype(np.int64, copy=False), write_mask, obs)

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
        rows = None if games is None else np.flatnonzero(selection(games, self.num_games))
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
    # (the state's check is okgin_env.game.state_check)

    def get_state(self, games=None) -> GameState:
        """A copy of the state of ``games`` (indices, repeats allowed, or a bool mask; all games when None)."""
        return self.state.rows(game_index(games, self.num_games, distinct=False))

    def set_state(self, state: GameState, games=None) -> StepOutput:
        """Restore ``games`` (all when None) from ``state`` (one row per restored game, in order).

        The state is checked first (``check_state``: anything the kernels could not have reached
        is a ValueError naming the game and the problem); the legal-action masks and the ended
        flags follow, so ``step`` can go on at once. Returns the view of the restored games
        (their rows only): current player, mask and observation, zero rewards, no hand over,
        terminated/truncated for finished games.
        """
        idx = game_index(games, self.num_games)
        n = state_rows(state)
        if n != len(idx):
            raise ValueError(f"state has {n} games but {len(idx)} games are to be restored")
        check_state(state, self.rules, self.episode)
        sel = slice(None) if games is None else idx  # a slice copies much faster than an index array
        for mine, given in zip(self.state, state):
            mine[sel] = given
        ended = ended_flags(state, self.rules, self.episode)
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
        n = state_rows(state)
        game = cls(n * int(copies), rules=rules, episode=episode, autoreset=autoreset, seed=seed)
        game.set_state(state if copies == 1 else state.rows(np.repeat(np.arange(n), copies)))
        return game



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
def first_illegal_row(actions, masks):
    """Index of the first row i whose action actions[i] is out of range or not legal in masks[i], or -1
    (``agent_specs.checked_actions``: one pass instead of five numpy operations)."""
    n = masks.shape[1]
    for i in range(actions.shape[0]):
        a = actions[i]
        if a < 0 or a >= n or not masks[i, a]:
            return i
    return -1


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
