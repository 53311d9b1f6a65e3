"""Oklahoma Gin as a Gymnasium ``VectorEnv``: N learner-vs-opponent games on one batched core.

==================  ==========================================================================
Import              ``okgin_env.envs.vector.OkginVectorEnv(num_envs=N, opponent="random", seat="random",
                    **options)`` or ``gymnasium.make_vec("okgin/OklahomaGin-v0", num_envs=N,
                    vectorization_mode="vector_entry_point", opponent=...)``
Actions             ``MultiDiscrete([107] * N)`` (``single_action_space = Discrete(107)``)
Observations        ``Box(float32, (N, OBS_SIZE))``; ``obs_format="dict"``: ``Dict(observation=Box,
                    action_mask=Box(0, 1, (N, 107), int8))``
Action masks        ``envs.action_masks()`` (sb3-contrib) and ``infos["action_mask"]``: (N, 107) bool
Autoreset           ``metadata["autoreset_mode"] = AutoresetMode.SAME_STEP``
==================  ==========================================================================

Each game behaves exactly like one ``SingleAgentEnv`` (``okgin_env.envs.single_agent``): the learner
plays one seat (``seat`` 0, 1, or "random": drawn per episode from the env's seeded generator),
the opponent plays the other inside ``step``, so every ``step`` returns with every game at a
learner decision. ``step(actions)`` applies the learner's N actions at once, then lets the
opponent act (one batched ``act`` call per round, over the games where it is to move only)
until the learner is to move everywhere. Episodes the opponent ends before the learner's first
decision are dealt again (``infos["skipped_episodes"]``).

The opponent is an agent object (batched ``act(observations, action_masks) -> actions``), an
agent spec string (``okgin_env.agent_specs``: "random", "simple", "ppo:PATH", "module:Attr", ...)
or a plain callable ``f(observations, action_masks) -> actions``; ``set_opponent`` swaps it
between updates (league or snapshot training). An opponent whose ``uses_observations`` attribute
is False (``"random"``'s) reads only the masks: it gets a read-only all-zero observation array,
and the env skips writing its views.

Same-step autoreset (Gymnasium 1.x): when a game's episode ends in ``step``, the returned
observation, ``infos["action_mask"]`` and ``infos["seat"]`` already belong to its next episode;
``infos["final_obs"]`` (an object array, ``None`` where no episode ended) and
``infos["final_info"]`` (a vector info dict) hold the ended episode's, flagged by
``infos["_final_obs"]`` / ``infos["_final_info"]``. An ended episode's mask (``final_info``'s
``action_mask``, a dict ``final_obs``'s) allows only ``actions.TERMINAL_ACTION`` (106), as the
single-agent env's terminal mask: no mask the env returns is all False. The reward, terminated
and truncated of that step are the ended episode's.

Infos follow Gymnasium's vector convention (one array per key, ``_key`` masks the games it
holds for). Per step: ``action_mask``, ``seat``, ``illegal_action`` (N,) bool (every game), and where
hands ended: ``hand_result`` (a dict of arrays, the last hand that ended in the game: knocker,
winner, gin, undercut, void, turn_cap, spade_doubled, points (N, 2), scores (N, 2),
deadwood (N, 2), game_over, game_winner; players are ids 0/1, -1 for none), ``net_points``
(the learner's points minus the opponent's, summed over those hands, unscaled) and ``hands``
(how many ended). For a hand that ended its episode they are in ``final_info``.

Options are the single-agent env's (``okgin_env.envs.options.EnvConfig``): every ``Rules`` option,
``episode``, ``reward``, ``reward_scale``, ``deadwood_shaping`` (potential-based: the learner's
reward gains ``phi(s') - phi(s)`` between its consecutive decisions, ``phi = 0`` after the
episode's end, ``okgin_env.features.shaping``; points in infos are never shaped), ``illegal_action``
("terminate": that game's episode ends with reward ``ILLEGAL_REWARD`` and
``infos["illegal_action"]`` True, the other games step normally; "raise": ``ValueError`` naming
the game, the action and the legal ones, before anything moves) and ``obs_format``. Actions
outside the space (below 0, above 106, not integers) always raise ``ValueError`` before anything
moves, whatever ``illegal_action`` says: they are a bug in the caller's decoding, not a move.

``features="meld"|"outs"`` (default "raw") appends ``okgin_env.features.learner``' columns to the
learner's observations and ``final_obs`` (``single_observation_space`` is the wider Box), in one
batched call per step; the opponent acts on the plain observations (see ``SingleAgentEnv``).

Seeding: ``reset(seed=s)`` fixes every deal, the seats and the opponent's randomness (an
opponent's ``rng`` attribute holding a ``np.random.Generator`` is replaced by one seeded from
``s``, as in ``SingleAgentEnv``); with N = 1 the env draws exactly what ``SingleAgentEnv`` does.
``reset(options={"deck": ..., "dealer": ...})`` replays deals: one deck (dealer) for all games
or one per game.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode
from gymnasium.vector.utils import batch_space

from okgin_env.agent_specs import checked_actions, illegal_action_error, resolve_agent
from okgin_env.envs.learner import Presenter, Shaping, seed_opponent
from okgin_env.envs.options import (
    ILLEGAL_REWARD,
    VECTOR_ENV_ARGUMENTS,
    EnvConfig,
    observation_space,
    warn_unknown_reset_options,
)
from okgin_env.envs.reward import reward_rule
from okgin_env.envs.single_agent import MAX_RESET_TRIES, SEATS
from okgin_env.envs.vector_handle import (
    advance_with_ref,
    clear_logs_with_ref,
    close_episodes_with_ref,
    env_ref,
    opponent_move_with_ref,
    views_with_ref,
)
from okgin_env.envs.vector_kernels import (
    Booking,
    EndedHandsRecord,
    Ends,
    EnvArrays,
    LearnerStep,
    illegal_rows,
    merge_logs,
)
from okgin_env.features.hand_info import SUMMARY_FIELDS
from okgin_env.game.actions import (
    NUM_ACTIONS,
    TERMINAL_ACTION,
    check_action,
)
from okgin_env.game.core import HandResult, VectorGame
from okgin_env.game.observation import OBS_SIZE
from okgin_env.game.records import Views, plain


class EndedHands:
    """The hands that ended in each game during one step (or reset): how many, the learner's net
    points, and the last one's result row (a ``HandResult`` used as a buffer)."""

    def __init__(self, n: int) -> None:
        self.count = np.zeros(n, np.int32)
        self.net = np.zeros(n, np.float64)
        self.result = HandResult.blank(n)
        self._arrays = plain(EndedHandsRecord(self.count, self.net, self.result))  # the arrays are never rebound

    def clear(self, games: np.ndarray) -> None:
        """Blank the rows ``games`` (a whole log is blanked by ``core_ref.clear_logs_with_ref``)."""
        self.count[games] = 0
        self.net[games] = 0.0
        for a in self.result:
            a[games] = False if a.dtype == bool else -1

    def arrays(self) -> tuple:
        """(count, net, result): how ``vector_kernels.advance`` books into it (``vector_kernels.EndedHandsRecord``)."""
        return self._arrays

    @staticmethod
    def merged(a: "EndedHands", b: "EndedHands", rows_b: np.ndarray) -> "EndedHands":
        """A new log with ``b``'s rows where ``rows_b`` and ``a``'s elsewhere."""
        m = EndedHands(len(rows_b))
        merge_logs(rows_b, a.arrays(), b.arrays(), m.arrays())
        return m

    def info(self, games: np.ndarray, copy: bool = True) -> dict[str, Any]:
        """Vector-info entries for the rows in ``games`` where a hand ended (empty if none); their
        arrays are copies (``copy=False``: this log's own, for a log made for one info)."""
        rows = games & (self.count > 0)
        if not rows.any():
            return {}
        hr: dict[str, Any] = {}
        for key, prop in SUMMARY_FIELDS.items():
            a = getattr(self.result, prop)
            hr[key] = a.copy() if copy else a
            hr[f"_{key}"] = rows
        return {"hand_result": hr, "_hand_result": rows, "net_points": self.net.copy() if copy else self.net,
                "_net_points": rows, "hands": self.count.copy() if copy else self.count, "_hands": rows}


@dataclass
class GameArrays:
    """The vector env's per-game arrays, allocated once and written in place (never rebound: the
    kernels' records point at them)."""

    rows: np.ndarray  #: 0..n-1
    all: np.ndarray  #: every game (a mask of ones)
    seat: np.ndarray  #: the learner's seat in each game
    pending: np.ndarray  #: reward of hands the opponent ended before the learner's first decision
    skipped: np.ndarray  #: hands skipped at a reset (ended before the learner moved)
    terminal_mask: np.ndarray  #: final_info's masks: TERMINAL_ACTION only
    # scratch of the fused rounds (okgin_env.envs.vector_kernels): games whose view is to be written,
    # the opponent's packed games, the core's per-move outputs
    changed: np.ndarray
    ended_idx: np.ndarray
    real_idx: np.ndarray
    skip: np.ndarray
    opp_idx: np.ndarray
    actions: np.ndarray
    move: np.ndarray
    scratch_obs: np.ndarray  #: one observation row
    zero_obs: np.ndarray  #: n zero observations (read-only, a broadcast: no memory)
    no_illegal: np.ndarray  #: an empty selection

    @classmethod
    def allocate(cls, n: int) -> "GameArrays":
        terminal_mask = np.zeros((n, NUM_ACTIONS), bool)
        terminal_mask[:, TERMINAL_ACTION] = True
        return cls(rows=np.arange(n), all=np.ones(n, bool), seat=np.zeros(n, np.int8),
                   pending=np.zeros(n, np.float64), skipped=np.zeros(n, np.int32), terminal_mask=terminal_mask,
                   changed=np.zeros(n, bool), ended_idx=np.zeros(n, np.int64), real_idx=np.zeros(n, np.int64),
                   skip=np.zeros(n, bool), opp_idx=np.zeros(n, np.int64), actions=np.zeros(n, np.int64),
                   move=np.zeros(n, bool), scratch_obs=np.zeros((1, OBS_SIZE), np.float32),
                   zero_obs=np.broadcast_to(np.zeros(OBS_SIZE, np.float32), (n, OBS_SIZE)),
                   no_illegal=np.zeros(0, bool))


class OkginVectorEnv(gymnasium.vector.VectorEnv):
    """N games of the learner against ``opponent`` (see the module docstring)."""

    metadata = {"autoreset_mode": AutoresetMode.SAME_STEP, "render_modes": []}
    autoreset_mode = AutoresetMode.SAME_STEP  #: as Gymnasium >= 1.1's own vector envs carry it (TorchRL reads it)

    def __init__(self, num_envs: int = 1, opponent: Any = "random", seat: int | str = "random",
                 render_mode: str | None = None, **options: Any) -> None:
        if isinstance(num_envs, bool) or not isinstance(num_envs, (int, np.integer)) or num_envs < 1:
            raise ValueError(f"num_envs must be an integer >= 1, got {num_envs!r}")
        if isinstance(seat, bool) or seat not in SEATS:
            raise ValueError(f"seat must be 0, 1 or 'random', got {seat!r}")
        if render_mode is not None:
            raise ValueError(f"render_mode must be None (the vector env does not render), got {render_mode!r}; "
                             "render one game with SingleAgentEnv")
        self.config = EnvConfig.from_options(options, arguments=VECTOR_ENV_ARGUMENTS)
        self.rules = self.config.rules
        self.num_envs = n = int(num_envs)
        self.render_mode = None
        self.game = VectorGame(n, self.rules, episode=self.config.episode)
        self.seat_option = seat
        self.opponent: Any = None
        self.opponent_name = ""
        self.set_opponent(opponent)
        self.single_observation_space = observation_space(self.rules, self.config.obs_format, self.config.features)
        self.observation_space = batch_space(self.single_observation_space, n)
        self.single_action_space = spaces.Discrete(NUM_ACTIONS)
        self.action_space = batch_space(self.single_action_space, n)
        self._present = Presenter(self.config)
        self._shaping = Shaping(self.config.deadwood_shaping, self.config.reward_scale, n)
        self._terminate = self.config.illegal_action == "terminate"
        # the learner's views as returned by the last step (new arrays each step); the core's own mask
        # follows every move
        self._obs = np.zeros((n, OBS_SIZE), np.float32)
        self._mask = np.zeros((n, NUM_ACTIONS), bool)
        self._step_log, self._reset_log = EndedHands(n), EndedHands(n)
        self._core = self.game.kernel_core
        self._a = GameArrays.allocate(n)
        self._game_episode = self.config.episode == "game"
        # the kernels' records of the arrays above (okgin_env.envs.vector_kernels), as plain tuples; the
        # arrays are written in place, never rebound
        a = self._a
        self._env_arrays = plain(EnvArrays(
            seat=a.seat, pending=a.pending, changed=a.changed, actions=a.actions, move=a.move, mask=self.game.mask_buffer,
            opp_idx=a.opp_idx, ended_idx=a.ended_idx, real_idx=a.real_idx, skip=a.skip))
        self._booking = plain(Booking(rule=reward_rule(self.config), step_log=self._step_log.arrays(), reset_log=self._reset_log.arrays()))
        self._ref = env_ref(self._core, self._env_arrays, self._booking)  # all three behind one pointer (core_ref)
        self._ready = False

    def __getstate__(self) -> dict:
        state = self.__dict__.copy()
        del state["_ref"]  # numba's pointer does not pickle (nor deepcopy); rebuilt from the arrays it points to
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._ref = env_ref(self._core, self._env_arrays, self._booking)

    # ---------------------------------------------------------------- opponent
    def set_opponent(self, opponent: Any, seed: int | None = None) -> None:
        """Play against ``opponent`` from the next step on (agent object, spec string or callable;
        ``seed`` seeds a spec-built agent; ``reset(seed=...)`` reseeds its ``rng`` in any case)."""
        self.opponent, self.opponent_name = resolve_agent(opponent, seed=seed, what="opponent")
        self._opp_observes = bool(getattr(self.opponent, "uses_observations", True))

    # ------------------------------------------------------------------- reset
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        """New episodes in every game; ``options={"deck", "dealer"}`` replays deals (one, or one per game)."""
        super().reset(seed=seed)
        self._ready = False
        decks, dealers = self._reset_options(options)
        game_seed = seed_opponent(self.opponent, seed)
        try:
            out = self.game.reset(seed=game_seed, decks=decks, dealers=dealers)
        except ValueError as e:
            raise ValueError(f"reset options: {e}") from None
        self._obs = out.observation  # the views below rewrite the learner's rows
        clear_logs_with_ref(self._ref)  # self._step_log.clear(), self._reset_log.clear() in one call
        self._new_seats(self._a.rows)
        self._a.pending[:] = 0.0
        self._a.skipped[:] = 0
        self._a.changed[:] = True
        self._settle(np.zeros(self.num_envs), self._a.all.copy(), 0, None)
        if self._shaping:
            self._shaping.start(self._obs)
        self._ready = True
        return self._observation(), self._info(self._a.all, self._reset_log.info(self._a.all))

    def _reset_options(self, options: dict[str, Any] | None) -> tuple[Any, Any]:
        if not options:
            return None, None
        warn_unknown_reset_options(options, stacklevel=4)
        deck, dealer = options.get("deck"), options.get("dealer")
        if isinstance(deck, str):  # one deck as text: "As 2s ..."
            deck = deck.split()
        return deck, dealer

    def _new_seats(self, games: np.ndarray) -> None:
        """The learner's seat in the new episodes of ``games`` (indices, in order)."""
        if self.seat_option == "random":
            seats = self.np_random.integers(2, size=len(games))
        else:
            seats = self.seat_option
        self._a.seat[games] = seats
        self._a.skipped[games] = 0

    # -------------------------------------------------------------------- step
    def step(self, actions: Any):
        """The learner's N actions; the opponent then plays until the learner is to move everywhere."""
        if not self._ready:
            raise RuntimeError("step() called before reset()")
        a = np.asarray(actions)
        if a.shape != (self.num_envs,) or a.dtype.kind not in "iu":
            raise ValueError(f"actions must be an integer array of shape ({self.num_envs},) with values 0-"
                             f"{NUM_ACTIONS - 1}, got {a.dtype} {a.shape}")
        a = a.astype(np.int64, copy=False)
        illegal = np.empty(self.num_envs, bool)
        any_illegal = illegal_rows(a, self.game.mask_buffer, illegal) > 0
        if any_illegal:  # (rare) an action outside the space raises, whatever illegal_action says
            outside = (a < 0) | (a >= NUM_ACTIONS)
            if outside.any() or not self._terminate:
                g = int(np.argmax(outside)) if outside.any() else int(np.argmax(illegal))
                check_action(int(a[g]), self._mask[g], where=f" in game {g}")  # raises, saying what is legal
        reward = np.zeros(self.num_envs, np.float64)
        clear_logs_with_ref(self._ref)  # self._step_log.clear(), self._reset_log.clear() in one call
        fresh = np.zeros(self.num_envs, bool)  # games whose new episode has not reached the learner yet
        # a new buffer for the views this step returns: every game moves (or, if its action was
        # illegal, starts a new episode), so every row is written again
        self._obs = np.empty((self.num_envs, OBS_SIZE), np.float32)
        if any_illegal:  # the games with an illegal action do not move; their episode ends below
            idx = np.flatnonzero(~illegal)
            over = self._advance(idx, a[idx], reward, fresh)
        else:
            over = self._advance(self._a.rows, a, reward, fresh)
        reward += self._a.pending
        self._a.pending[:] = 0.0
        done, terminated, truncated, final_obs, final_seat = self._settle(reward, fresh, over,
                                                                          illegal if any_illegal else None)
        if any_illegal:
            reward[illegal] += ILLEGAL_REWARD
        if self._shaping:  # phi(s') - phi(s); phi = 0 after the end, and a new episode starts at its s_0
            reward += self._shaping.advance(self._obs, done, restart=True)
        if not done.any():
            info = self._info(self._a.all, self._step_log.info(self._a.all))
        else:
            # hands that ended without ending their episode (game episodes) stay at the top level
            # hands that ended a new episode's first moves (rare) are in the reset log, for the done games
            hands = EndedHands.merged(self._step_log, self._reset_log, done).info(self._a.all, copy=False) \
                if self._reset_log.count.any() else self._step_log.info(~done)
            info = self._info(done, hands)
            final_info = {"action_mask": self._a.terminal_mask, "_action_mask": done, "seat": final_seat, "_seat": done,
                          "illegal_action": illegal, "_illegal_action": done, **self._step_log.info(done)}
            info.update({"final_obs": final_obs, "_final_obs": done, "final_info": final_info, "_final_info": done})
        info["illegal_action"] = illegal
        info["_illegal_action"] = self._a.all
        return self._observation(), reward, terminated, truncated, info

    def action_masks(self) -> np.ndarray:
        """(N, 107) bool legal actions of the learner in every game (sb3-contrib convention)."""
        return self._mask

    # ----------------------------------------------------------------- helpers
    def _settle(self, reward: np.ndarray, fresh: np.ndarray, over: int, illegal: np.ndarray | None):
        """Deal again where episodes ended and let the opponent play (batched, where it is to move)
        until the learner is to move in every game; ``over``: episodes the last move ended.

        An episode the learner played that ends (or whose learner acted illegally) is recorded:
        returns (done, terminated, truncated, final_obs, final_seat). A new episode (``fresh``) that
        the opponent ends before the learner's first decision is dealt again (``_skipped``).
        """
        n = self.num_envs
        ends = Ends(done=np.zeros(n, bool), terminated=np.zeros(n, bool), truncated=np.zeros(n, bool))
        done, terminated, truncated = ends.done, ends.terminated, ends.truncated
        step = plain(LearnerStep(reward=reward, fresh=fresh, obs=self._obs))
        final_obs = final_seat = None
        k = -1  # games the opponent is to move in, once their views are written
        while True:
            if over or illegal is not None:
                final_views = np.empty((n, OBS_SIZE), np.float32)
                n_ended, n_real, n_skip = close_episodes_with_ref(
                    self._ref, step, self._a.no_illegal if illegal is None else illegal,
                    plain(ends), final_views)
                if n_real:
                    if final_obs is None:
                        final_obs = np.empty(n, dtype=object)  # numpy fills it with None
                        final_seat = self._a.seat.copy()
                    self._record_final_obs(final_obs, self._a.real_idx[:n_real], final_views)
                if n_skip:  # new episodes the opponent ended before the learner's first decision
                    skip = self._a.skip
                    self._a.skipped += skip
                    if self._a.skipped[skip].max() >= MAX_RESET_TRIES:
                        g = int(np.flatnonzero(skip)[np.argmax(self._a.skipped[skip])])
                        raise RuntimeError(f"the opponent ended {MAX_RESET_TRIES} episodes in a row in game {g} "
                                           "before the learner could act")
                    self._a.pending[skip] = 0.0  # a skipped episode pays nothing and reports nothing
                    self._reset_log.clear(skip)
                self.game.deal_new_episodes(self._a.ended_idx[:n_ended])
                if n_real:
                    self._new_seats(self._a.real_idx[:n_real])
                illegal = None
                k = -1
            if k < 0:  # the views of the games that changed (a round writes them itself when no episode ended)
                opp_obs, opp_mask = self._opponent_buffers()
                k = views_with_ref(self._ref, step, plain(Views(obs=opp_obs, mask=opp_mask)), self._opp_observes)
            if k == 0:
                self._mask = self.game.mask_buffer.copy()
                return done, terminated, truncated, final_obs, final_seat
            given = opp_obs[:k] if self._opp_observes else self._a.zero_obs[:k]
            over, k, opp_obs, opp_mask = self._opponent_round(given, opp_mask[:k], self._a.opp_idx[:k], reward, fresh)

    def _opponent_buffers(self) -> tuple[np.ndarray, np.ndarray]:
        """New arrays for the opponent's packed views, which it may keep (an opponent that reads only
        masks gets zeros: writing views nobody reads costs a tenth of a step)."""
        n = self.num_envs
        obs = np.empty((n, OBS_SIZE), np.float32) if self._opp_observes else self._a.scratch_obs
        return obs, np.empty((n, NUM_ACTIONS), bool)

    def _opponent_round(self, obs: np.ndarray, masks: np.ndarray, idx: np.ndarray, reward: np.ndarray,
                        fresh: np.ndarray) -> tuple[int, int, np.ndarray, np.ndarray]:
        """One batched opponent decision in games ``idx`` (its views ``obs``/``masks``) and, when no
        episode ended or hand is to be dealt, the views of the next round in the same kernel call.
        Returns (episodes over, games the opponent is to move in next or -1 if not viewed yet, and
        the next round's view buffers)."""
        # the shared check of shape and dtype; legality is checked inside opponent_move (one pass)
        acts = checked_actions(self.opponent.act(obs, masks), masks, self.opponent_name, "opponent", idx,
                               check_legal=False)
        opp_obs, opp_mask = self._opponent_buffers()
        bad, deals, over, k = opponent_move_with_ref(self._ref, idx, acts,
                                                     plain(LearnerStep(reward=reward, fresh=fresh, obs=self._obs)),
                                                     plain(Views(obs=opp_obs, mask=opp_mask)), self._opp_observes)
        if bad >= 0:
            raise illegal_action_error(self.opponent_name, acts, masks, bad, "opponent", idx)
        if deals:  # a game episode goes on with a new hand
            self.game.deal_next_hands(self.game.core.out.need_deal, self.game.core.out.next_dealer)
        return over, k, opp_obs, opp_mask

    def _advance(self, idx: np.ndarray, acts: np.ndarray, reward: np.ndarray, fresh: np.ndarray) -> int:
        """Play ``acts[j]`` in game ``idx[j]`` and book the hands that end (the learner's reward into
        ``reward``, or the pending one for ``fresh`` episodes); returns how many episodes are over."""
        deals, over = advance_with_ref(self._ref, idx, acts, plain(LearnerStep(reward=reward, fresh=fresh, obs=self._obs)))
        if deals:  # a game episode goes on with a new hand
            self.game.deal_next_hands(self.game.core.out.need_deal, self.game.core.out.next_dealer)
        return over

    def _record_final_obs(self, final: np.ndarray, games: np.ndarray, views: np.ndarray) -> None:
        """The learner's view of each ended episode's last state (``views[j]`` for game ``games[j]``)
        into the object array ``final`` (Gymnasium's final_obs is one object per game)."""
        views = self._present.batch(views[:len(games)], self._a.terminal_mask[games])  # one batched call
        for j, i in enumerate(games.tolist()):
            final[i] = {key: v[j] for key, v in views.items()} if isinstance(views, dict) else views[j]

    def _info(self, games: np.ndarray, hands: dict[str, Any]) -> dict[str, Any]:
        """Infos: masks, seats, ``hands`` (hand-result entries), episodes skipped in ``games``."""
        info: dict[str, Any] = {"action_mask": self._mask, "_action_mask": self._a.all,
                                "seat": self._a.seat.copy(), "_seat": self._a.all}
        info.update(hands)
        skipped = games & (self._a.skipped > 0)
        if skipped.any():
            info["skipped_episodes"] = self._a.skipped.copy()
            info["_skipped_episodes"] = skipped
        return info

    def _observation(self) -> Any:
        """The learner's observations in the configured ``obs_format``, with the ``features`` columns
        (computed here, batched: the opponent and shaping read the plain ``_obs``)."""
        return self._present.batch(self._obs, self._mask)
