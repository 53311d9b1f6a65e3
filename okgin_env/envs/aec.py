"""Oklahoma Gin as a PettingZoo AEC environment (classic-env conventions, like ``tictactoe``).

==================  ==========================================================================
Import              ``from okgin_env import env, raw_env``
Agents              ``agents = ["player_0", "player_1"]`` (agent i is core player id i)
Actions             ``Discrete(107)`` (``okgin_env.game.actions``; see below)
Observations        ``Dict(observation=Box(float32, (OBS_SIZE,)), action_mask=Box(0, 1, (107,), int8))``;
                    ``obs_format="rllib"``: the keys ``observations`` / ``action_mask`` (RLlib's)
State               ``state()``: ``Box(float32, (STATE_SIZE,))``, both hands and the stock order
Metadata            ``name="okgin_v0"``, ``render_modes=["ansi", "human", "rgb_array"]``, ``is_parallelizable=False``
==================  ==========================================================================

The rules are those of ``docs/RULES.md`` and live in ``okgin_env.game.core``: this module only
translates ``VectorGame(1, ...)`` into the AEC protocol.

Options (keyword arguments of ``env``/``raw_env``): every ``Rules`` option (``knock_limit``,
``gin_bonus``, ...) or ``rules=Rules(...)``, plus

* ``episode="hand"|"game"``: one hand per episode, or hands until a total reaches
  ``target_score``.
* ``reward="points"|"win"``: "points" gives each agent its score change minus the
  opponent's, times ``reward_scale`` (default 0.02: typical hands are worth 10-40 points,
  gin ~50, so rewards stay near +-1); in game episodes they come at every hand's end (game
  bonuses included at the end). "win" gives +1/-1 to the winner/loser of the hand (hand
  episodes; 0 for a void hand) or of the game (game episodes; only at the game's end).
  Rewards are zero-sum in every step (without shaping).
* ``deadwood_shaping=c`` (default 0 = off): potential-based shaping. A player's reward gets
  ``phi(s') - phi(s)`` between its consecutive decisions s and s' (paid in the step that brings
  s'), with ``phi = okgin_env.features.shaping.potential(obs, c, reward_scale)`` of its observation and
  ``phi = 0`` once the episode has ended (paid to both in the last step). Each player's terms sum
  to ``-phi(its first decision)`` over an episode; ``hand_result`` points stay unshaped, and the
  rewards are no longer zero-sum. ``docs/conformance.md`` explains when to use it.
* ``features="raw"|"meld"|"outs"`` (default "raw"): "meld" and "outs" append the columns of
  ``okgin_env.features.learner`` (``learner_input``: 649 and 861 float32 in all, what okgin's own network
  reads) to ``observation``; its Box in ``observation_space`` widens to match.
* ``obs_format="dict"|"rllib"`` (default "dict"): the observation's keys, ``observation`` /
  ``action_mask`` (PettingZoo's classic envs; Tianshou's PettingZoo path) or ``observations`` /
  ``action_mask`` (RLlib's ``ActionMaskingTorchRLModule``). The arrays are the same.

Unknown option names raise a ``TypeError`` (Python's convention for an unexpected keyword) listing
the valid ones; a bad value of a known option raises ``ValueError``.

### Observation

``observation`` is the observing agent's vector of ``okgin_env.game.observation`` (fields
``own_hand``, ``discard_top``, ... ; read them with ``obs_field``). ``action_mask`` marks the
legal actions of the agent to act; it is all zeros for the other agent and after the end, as in
PettingZoo's classic envs: the AEC protocol never asks a policy for an action there (the other
agent is not selected; a finished agent must step ``None``). The single-agent and vector envs,
whose terminal observations do reach a learner's sampler, use ``actions.TERMINAL_ACTION`` instead.

### Actions

0-51 discard card a, 52-103 knock discarding card a-52 face down, 104 draw the stock,
105 take the top discard (the upcard during the offer), 106 pass (upcard offer only).
``raw_env.step`` raises ``ValueError`` naming an illegal, out-of-range or non-integer action and
listing the legal ones. ``env()`` returns ``OkginAECEnv``: the raw env with the checks of the
classic environments' wrapper chain (``TerminateIllegalWrapper(illegal_reward=-1)``,
``AssertOutOfBoundsWrapper``, ``OrderEnforcingWrapper``) built in, with the same observable
behaviour (checked in lockstep against the chain): an action outside ``Discrete(107)`` fails an
``assert`` (an ``AssertionError``, PettingZoo's behaviour), an illegal in-range one ends the game
with -1 for the mover, and calls before ``reset`` are refused.

### Rewards and infos

See ``reward`` above. ``infos[agent]["action_mask"]`` repeats the mask. When a hand ends,
``infos[agent]["hand_result"]`` holds the hand's result for both agents as fixed-shape numbers and
arrays (``okgin_env.features.hand_info``: knocker, winner, gin / undercut / void flags, deadwoods, points,
scores, both final hands and each card's meld; -1 for "nobody" or "no card"), which any replay
buffer can stack; ``render.describe_hand`` gives its readable form (melds and lay-offs as card
texts). It stays until that agent's next ``step``.

### Reset options

``reset(seed=..., options={"deck": [...], "dealer": d})`` replays a deal (``docs/RULES.md``,
"Replaying a deal"): 52 card indices or card texts, ``deck[0]`` to the non-dealer; ``dealer``
0 or 1. In game episodes they apply to the first hand.

### Rendering

``render(mode=None)`` renders in ``mode`` (default: ``render_mode``; RLlib's wrapper passes it):
``"ansi"`` returns the acting agent's view as text (``render.render_player_view``,
after the hand's result when one just ended), ``"human"`` prints it, ``"rgb_array"`` returns
``render_rgb.render_rgb``'s (352, 640, 3) uint8 picture from the acting agent's seat
(``docs/rendering.md``).

### Version history

* v0: initial release.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.utils import EzPickle
from pettingzoo import AECEnv
from pettingzoo.utils.env import AECIterable, AECIterator
from pettingzoo.utils.env_logger import EnvLogger

from okgin_env.envs.learner import Presenter, Shaping
from okgin_env.envs.options import (
    ILLEGAL_REWARD,
    EnvConfig,
    observation_space,
    parse_reset_options,
    score_bound,
)
from okgin_env.envs.registration import register_envs
from okgin_env.envs.reward import hand_reward, reward_rule
from okgin_env.features.hand_info import hand_info
from okgin_env.game.actions import NUM_ACTIONS, check_action
from okgin_env.game.cards import NUM_CARDS
from okgin_env.game.constants import NUM_KNOCK_LIMITS, UPCARD_POS, Phase
from okgin_env.game.core import VectorGame
from okgin_env.game.observation import OBS_SIZE, STOCK_SCALE, field_slices
from okgin_env.game.rules import Rules
from okgin_env.render.rgb import render_rgb as rgb_frame
from okgin_env.render.text import (
    LastAction,
    describe_hand,
    record_action,
    render_hand_result,
    render_in_mode,
    render_player_view,
)

AGENTS = ("player_0", "player_1")  #: agent i is core player id i
_PLAYER = {a: p for p, a in enumerate(AGENTS)}  # agent name -> core player id
#: the action types ``step`` plays without its checks' slow path when legal: Python's int and numpy's
#: integer scalars (``np.random.choice`` over the legal actions gives an np.int64)
_INT_TYPES = frozenset({int, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64})
_SEATS = (np.zeros(1, np.int64), np.ones(1, np.int64))  # VectorGame.observe_into's players, by core player id


# --------------------------------------------------------------------------- state

def _state_fields() -> dict[str, slice]:
    sizes = (
        ("hands", 2 * NUM_CARDS),  # hands[p * 52 + c]: player p holds c
        ("stock", NUM_CARDS),  # (31 - k) / 31 for the card k-th from the top of the stock, 0 elsewhere
        ("pile", NUM_CARDS),  # (k + 1) / 52 for the card k-th from the bottom of the discard pile
        ("discard_top", NUM_CARDS),  # one-hot
        ("upcard", NUM_CARDS),  # one-hot: the hand's first upcard
        ("taken", 2 * NUM_CARDS),  # per player: taken from the pile and still held
        ("discarded", 2 * NUM_CARDS),  # per player: discarded face up this hand
        ("declined", 2 * NUM_CARDS),  # per player: passed on / drew the stock instead of
        ("taken_card", NUM_CARDS),  # one-hot: the card taken from the pile this turn
        ("knock_limit", NUM_KNOCK_LIMITS),  # one-hot 0..10
        ("stock_size", 1),  # cards in stock / 31
        ("phase", len(Phase)),  # one-hot over Phase (OVER included)
        ("current_player", 2),  # one-hot; zeros when the episode is over
        ("dealer", 2),  # one-hot
        ("turns", 1),  # completed turns / max_turns_per_hand
        ("scores", 2),  # totals / target (game episodes; the hand's points in hand episodes)
    )
    return field_slices(sizes)


#: name -> slice of the ``state()`` vector (absolute player ids, not the observer's view)
STATE_FIELDS: dict[str, slice] = _state_fields()
STATE_SIZE: int = max(s.stop for s in STATE_FIELDS.values())


def state_box(rules: Rules) -> spaces.Box:
    high = np.ones(STATE_SIZE, np.float32)
    high[STATE_FIELDS["scores"]] = score_bound(rules)
    return spaces.Box(low=0.0, high=high, shape=(STATE_SIZE,), dtype=np.float32)


def encode_state(game: VectorGame, i: int = 0) -> np.ndarray:
    """The full state of game ``i`` of a ``VectorGame`` as a (STATE_SIZE,) float32 vector."""
    s = game.state
    rules = game.rules
    v = np.zeros(STATE_SIZE, np.float32)
    f = STATE_FIELDS
    v[f["hands"]] = s.hands[i].reshape(-1)
    nxt = int(s.stock_next[i])
    stock = s.deck[i, nxt:].astype(np.int64)
    v[f["stock"].start + stock] = (STOCK_SCALE - np.arange(len(stock))) / STOCK_SCALE
    n = int(s.pile_size[i])
    pile = s.pile[i, :n].astype(np.int64)
    v[f["pile"].start + pile] = (np.arange(n) + 1) / NUM_CARDS
    if n:
        v[f["discard_top"].start + int(pile[-1])] = 1.0
    v[f["upcard"].start + int(s.deck[i, UPCARD_POS])] = 1.0
    v[f["taken"]] = s.taken[i].reshape(-1)
    v[f["discarded"]] = s.discarded[i].reshape(-1)
    v[f["declined"]] = s.declined[i].reshape(-1)
    if int(s.taken_card[i]) >= 0:
        v[f["taken_card"].start + int(s.taken_card[i])] = 1.0
    v[f["knock_limit"].start + int(s.knock_limit[i])] = 1.0
    v[f["stock_size"].start] = (NUM_CARDS - nxt) / STOCK_SCALE
    v[f["phase"].start + int(s.phase[i])] = 1.0
    cur = int(s.current_player[i])
    if cur >= 0:
        v[f["current_player"].start + cur] = 1.0
    v[f["dealer"].start + int(s.dealer[i])] = 1.0
    cap = rules.max_turns_per_hand
    v[f["turns"].start] = 0.0 if cap is None else min(1.0, int(s.turns[i]) / cap)  # None: no cap to near
    v[f["scores"]] = s.scores[i] / rules.target_score
    return v


# ------------------------------------------------------------------------ the classes

class _ActionSpace(spaces.Discrete):
    """``Discrete(107)`` with a fast membership test for plain ints (the out-of-bounds check calls
    ``contains`` at every step, and the generic one costs ~2.5 us)."""

    def contains(self, x: Any) -> bool:
        if type(x) is int:
            return 0 <= x < self.n
        return super().contains(x)


_ZERO_MASK = np.zeros(NUM_ACTIONS, np.int8)
_ZERO_MASK.flags.writeable = False


class raw_env(AECEnv, EzPickle):
    """Oklahoma Gin for two agents, one ``VectorGame(1, ...)`` underneath (see the module docstring).

    The raw env raises ``ValueError`` for an illegal or out-of-range action; ``env()`` gives the
    checked env of PettingZoo's classic-env conventions (``OkginAECEnv``)."""

    metadata = {"name": "okgin_v0", "render_modes": ["ansi", "human", "rgb_array"], "is_parallelizable": False,
                "render_fps": 1}

    def __init__(self, render_mode: str | None = None, **options: Any) -> None:
        EzPickle.__init__(self, render_mode=render_mode, **options)
        super().__init__()
        _check_render_mode(render_mode, self.metadata["render_modes"])
        self.render_mode = render_mode
        self.config = EnvConfig.from_options(options, learner=False)
        self.rules = self.config.rules
        self.game = VectorGame(1, self.rules, episode=self.config.episode)
        self.possible_agents = list(AGENTS)
        self.agents = self.possible_agents[:]
        self.observation_spaces = {a: observation_space(self.rules, self.config.obs_format, self.config.features)
                                   for a in AGENTS}
        self.action_spaces = {a: _ActionSpace(NUM_ACTIONS) for a in AGENTS}
        self.state_space = state_box(self.rules)
        self._present = Presenter(self.config)  # always a dict here: PettingZoo's classic envs observe one
        # the view's dict is built here for plain observations (Presenter.one's checks cost per step)
        self._obs_key = None if self.config.features != "raw" else self._present.keys[0]
        self._mask_key = self._present.keys[1]
        self._rule = reward_rule(self.config)
        self._shaping = Shaping(self.config.deadwood_shaping, self.config.reward_scale, 2)  # per player
        self._shaped = bool(self._shaping)
        # the game's own output arrays (never rebound), read at every step: the mover, the hand's end
        # and the legal actions (the mask as int8, the dtype handed out: a copy of it is one operation)
        self._mover = self.game.state.current_player
        self._hand_over = self.game.core.out.hand_over
        self._mask_row = self.game.mask_buffer.view(np.int8)[0]
        self._player = -1  # core player id to act, -1 when the episode is over
        self._mask = _ZERO_MASK  # the legal actions of the agent to act (int8), this turn's own array
        self._views: list[dict | None] = [None, None]
        self._plain: list[np.ndarray | None] = [None, None]  # each view's observation without features (shaping)
        self._rewarded = False
        self._knock_limit = 0
        self._last_actions: list[LastAction | None] = [None, None]
        self._last_hand: dict | None = None  # okgin_env.features.hand_info dict of the latest hand
        self._described: dict | None = None  # its readable form, made when first rendered
        self._hand_ended = False

    # ------------------------------------------------------------------ spaces
    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    # ------------------------------------------------------------------- reset
    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        deck, dealer = parse_reset_options(options)
        out = self.game.reset(seed=seed, decks=deck, dealers=dealer)
        self.agents = self.possible_agents[:]
        self.rewards = {a: 0.0 for a in AGENTS}
        self._cumulative_rewards = {a: 0.0 for a in AGENTS}
        self.terminations = {a: False for a in AGENTS}
        self.truncations = {a: False for a in AGENTS}
        self.infos = {a: {} for a in AGENTS}
        self._rewarded = False
        self._last_actions = [None, None]
        self._last_hand = self._described = None
        self._hand_ended = False
        self._knock_limit = int(self.game.state.knock_limit[0])
        self._new_turn(out.observation[0], out.legal_action_mask[0].view(np.int8), int(out.current_player[0]))
        if self._shaped:
            self._shaping.clear()
            self._shape(self._player)  # the first decision: no reward
        if self.render_mode == "human":
            self.render()

    # -------------------------------------------------------------------- step
    def step(self, action: int | None) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        if type(action) in _INT_TYPES and 0 <= (a := int(action)) < NUM_ACTIONS and self._mask[a]:
            self._play(a)  # the common case, without building an error message's context
        else:
            self._play(check_action(action, self._mask, agent))

    def _play(self, a: int) -> None:
        """Apply the legal action ``a`` of the agent to act."""
        agent, player, game = self.agent_selection, self._player, self.game
        if self.render_mode is not None:
            self._last_actions[player] = record_action(game.state, 0, a)
        # VectorGame._advance_one: step(checked=True) without the checks and the StepOutput, which cost
        # more than the kernel at N = 1 (the action is legal: checked by the caller). A new array each
        # step: an observation handed out is never written again.
        obs = np.empty(OBS_SIZE, np.float32)
        game._advance_one(a, obs)
        self._cumulative_rewards[agent] = 0.0
        if self._rewarded:
            self.rewards[AGENTS[0]] = self.rewards[AGENTS[1]] = 0.0
            self._rewarded = False
        info = self.infos[agent]
        if "hand_result" in info:
            del info["hand_result"]
        self._hand_ended = self._hand_over.item(0)
        if self._hand_ended:
            self._end_hand()
        cur = self._mover.item(0)
        if cur >= 0:
            self._new_turn(obs, self._mask_row.copy(), cur)
        else:  # the episode is over: the other agent steps None first, then this one
            self._player = -1
            self._mask = _ZERO_MASK
            self._views = [None, None]
            for a_ in AGENTS:
                self.infos[a_]["action_mask"] = _ZERO_MASK
            self.agent_selection = AGENTS[1 - player]
        if self._shaped:
            self._shape(cur)
        if self._rewarded:
            self._accumulate_rewards()
        if self.render_mode == "human":
            self.render()

    def _new_turn(self, obs: np.ndarray, mask8: np.ndarray, cur: int) -> None:
        """The core says ``cur`` is to act, with the (OBS_SIZE,) view ``obs`` and the (107,) int8 legal
        actions ``mask8`` (arrays of this turn's own): cache them."""
        self._player = cur
        self._mask = mask8
        other = 1 - cur
        plain, views, infos = self._plain, self._views, self.infos
        plain[other] = views[other] = None  # the other agent's view is built when asked
        plain[cur] = obs
        if self._obs_key is None:
            views[cur] = self._present.one(obs, mask8)
        else:  # Presenter.one's dict for plain observations, one mask array for the view and the info
            views[cur] = {self._obs_key: obs, self._mask_key: mask8}
        infos[AGENTS[cur]]["action_mask"] = mask8
        infos[AGENTS[other]]["action_mask"] = _ZERO_MASK
        self.agent_selection = AGENTS[cur]

    def _end_hand(self) -> None:
        """Rewards, flags and infos of a hand that ended in this step (rare path), read from the
        game's step outputs."""
        out = self.game.core.out
        info = hand_info(self.game.core.result, 0, knock_limit=self._knock_limit)
        self._last_hand, self._described = info, None
        self._knock_limit = int(self.game.state.knock_limit[0])  # the next hand's, in game episodes
        for a in AGENTS:
            self.infos[a]["hand_result"] = info
        gains = [hand_reward(self._rule, float(out.rewards[0, p]), info["winner"], info["game_winner"], p)
                 for p in (0, 1)]
        if gains[0] or gains[1]:
            self.rewards[AGENTS[0]], self.rewards[AGENTS[1]] = gains
            self._rewarded = True
        if out.terminated[0]:
            self.terminations = {a: True for a in AGENTS}
        if out.truncated[0]:
            self.truncations = {a: True for a in AGENTS}

    def _shape(self, cur: int) -> None:
        """Add phi(s') - phi(s) to the reward of ``cur``, now at a new decision s' (or, when
        ``cur < 0``, to both players for the episode's end, where phi = 0)."""
        players = [cur] if cur >= 0 else [0, 1]
        started = self._shaping.started[players].copy()
        terms = self._shaping.advance(self._plain[cur] if cur >= 0 else None, cur < 0, players)
        for p, was_started, term in zip(players, started, terms):
            if was_started:
                self.rewards[AGENTS[p]] += float(term)
                self._rewarded = True

    # ------------------------------------------------------------------ observe
    def observe(self, agent: str) -> dict[str, np.ndarray]:
        p = _PLAYER[agent]
        view = self._views[p]
        if view is None:  # not the agent to act: its view without a mask, built once
            view = self._present.one(self.game.observe_into(_SEATS[p], np.empty((1, OBS_SIZE), np.float32))[0],
                                     _ZERO_MASK)
            self._views[p] = view
        return view

    def state(self) -> np.ndarray:
        """Full state for centralised critics (``STATE_FIELDS``): both hands, stock order, pile, ..."""
        return encode_state(self.game, 0)

    # ------------------------------------------------------------------- render
    def render(self, mode: str | None = None) -> str | np.ndarray | None:
        """The text of ``render_text`` ("ansi"), printed ("human"), or the ``render_rgb`` picture
        from the seat of the agent to act ("rgb_array"). ``mode`` defaults to ``render_mode``;
        RLlib's ``PettingZooEnv.render`` passes it."""
        mode = self.render_mode if mode is None else mode
        _check_render_mode(mode, self.metadata["render_modes"])
        if mode == "rgb_array":
            return self.render_rgb()
        return render_in_mode(mode, self.render_text)

    def render_rgb(self, player: int | None = None) -> np.ndarray:
        """(H, W, 3) uint8 picture of the table from ``player``'s seat (default: the agent to act),
        with the latest hand's result once one has ended."""
        p = AGENTS.index(self.agent_selection) if player is None else player
        return rgb_frame(self.game.state, p, self.rules, episode=self.config.episode, last_hand=self._shown_hand(),
                         last_actions=self._last_actions)

    def render_text(self, color: bool = False, player: int | None = None) -> str:
        """The acting player's view (or ``player``'s), after the last hand's result if one just ended."""
        parts = []
        if self._last_hand is not None and (self._hand_ended or self._player < 0):
            parts.append(render_hand_result(self._shown_hand(), color=color))
        p = self._player if player is None else player
        if p >= 0:
            parts.append(render_player_view(self.game.state, p, self.rules, episode=self.config.episode,
                                            last_actions=self._last_actions, color=color))
        return "\n".join(parts)

    def _shown_hand(self) -> dict | None:
        """The readable result of the latest hand (``render.describe_hand``), None before the first;
        made once per hand, as every frame of a video shows it."""
        if self._described is None and self._last_hand is not None:
            self._described = describe_hand(self._last_hand)
        return self._described

    def close(self) -> None:
        pass


def _check_render_mode(mode: str | None, allowed: list[str]) -> None:
    if mode is not None and mode not in allowed:
        raise ValueError(f"render_mode must be None or one of {allowed}, got {mode!r}")


# ------------------------------------------------------------------ the checked env

#: attributes that PettingZoo's OrderEnforcingWrapper refuses before reset
_BEFORE_RESET = frozenset({"rewards", "terminations", "truncations", "infos", "agent_selection", "num_agents",
                           "agents"})


class OkginAECEnv(raw_env):
    """The raw env with the checks of PettingZoo's classic-env wrapper chain built in, in one class.

    ``env()`` returns it. It behaves as ``OrderEnforcingWrapper(AssertOutOfBoundsWrapper(
    TerminateIllegalWrapper(raw_env(), illegal_reward=-1)))`` does (``tests/envs/test_aec_checks.py``
    plays both in lockstep), without their per-step attribute forwarding:

    * order: ``step``, ``observe``, ``state``, ``render`` and ``agent_iter`` before ``reset`` raise
      PettingZoo's ``AssertionError``s, the per-step attributes an ``AttributeError``; ``step`` with
      no agent left warns; ``agent_iter`` asserts that each agent stepped.
    * out of bounds: an action outside ``Discrete(107)`` (or ``None`` for a live agent) fails
      ``assert ... "action is not in action space"``.
    * illegal moves: a legal-range action the mask forbids ends the game: -1 for the mover, 0 for
      the other, every agent terminated and truncated, with PettingZoo's warning.
    """

    def __init__(self, render_mode: str | None = None, **options: Any) -> None:
        super().__init__(render_mode=render_mode, **options)
        del self.agents  # refused before reset, as the order-enforcing wrapper does
        self._has_reset = False
        self._has_updated = False
        self._illegal_ended = False  # the game was ended by an illegal move

    def __getattr__(self, name: str) -> Any:  # only called when normal lookup fails
        if name in _BEFORE_RESET and not self.__dict__.get("_has_reset", False):
            raise AttributeError(f"{name} cannot be accessed before reset")
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        self._has_reset = self._has_updated = True
        self._illegal_ended = False
        super().reset(seed=seed, options=options)

    def step(self, action: int | None) -> None:
        if not self._has_reset:
            EnvLogger.error_step_before_reset()
        self._has_updated = True
        if not self.agents:
            EnvLogger.warn_step_after_terminated_truncated()
            return
        if type(action) in _INT_TYPES and 0 <= (a := int(action)) < NUM_ACTIONS and self._mask[a] and \
                not self._illegal_ended:
            self._play(a)  # the common case: a legal move of the agent to act
            return
        agent = self.agent_selection
        dead = self.terminations[agent] or self.truncations[agent]
        assert (action is None and dead) or self.action_spaces[agent].contains(action), "action is not in action space"
        if dead:
            self._was_dead_step(action)
        elif not self._mask[action]:
            self._end_illegal(agent)
        else:
            self._play(int(action))

    def _end_illegal(self, agent: str) -> None:
        """TerminateIllegalWrapper's ending: the mover gets -1, everyone is done."""
        EnvLogger.warn_on_illegal_move()
        self._cumulative_rewards[agent] = 0
        self.terminations = dict.fromkeys(self.agents, True)
        self.truncations = dict.fromkeys(self.agents, True)
        self.rewards = dict.fromkeys(self.truncations, 0)
        self.rewards[agent] = float(ILLEGAL_REWARD)
        self._accumulate_rewards()
        self._deads_step_first()
        self._illegal_ended = True

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        if not self._has_reset:
            EnvLogger.error_observe_before_reset()
        return super().observe(agent)

    def last(self, observe: bool = True) -> tuple:
        """``AECEnv.last`` in one frame (the agent to act's view is cached by ``step``)."""
        agent = self.agent_selection  # AttributeError before reset, as the wrapper chain says
        obs = (self._views[_PLAYER[agent]] or self.observe(agent)) if observe else None
        return obs, self._cumulative_rewards[agent], self.terminations[agent], self.truncations[agent], self.infos[agent]

    def state(self) -> np.ndarray:
        if not self._has_reset:
            EnvLogger.error_state_before_reset()
        return super().state()

    def render(self, mode: str | None = None) -> str | np.ndarray | None:
        if not self._has_reset:
            EnvLogger.error_render_before_reset()
        return super().render(mode)

    def agent_iter(self, max_iter: int = 2**63) -> "_CheckedIterable":
        if not self._has_reset:
            EnvLogger.error_agent_iter_before_reset()
        return _CheckedIterable(self, max_iter)


class _CheckedIterable(AECIterable):
    def __iter__(self) -> "_CheckedIterator":
        return _CheckedIterator(self.env, self.max_iter)


class _CheckedIterator(AECIterator):
    """``agent_iter``'s iterator that asserts ``step`` (or ``reset``) ran between two agents."""

    def __next__(self) -> str:
        env = self.env
        if not env.agents or self.iters_til_term <= 0:
            raise StopIteration
        self.iters_til_term -= 1
        assert env._has_updated, "need to call step() or reset() in a loop over `agent_iter`"
        env._has_updated = False
        return env.agent_selection


def env(render_mode: str | None = None, **options: Any) -> OkginAECEnv:
    """The AEC environment with PettingZoo's classic-env checks (``OkginAECEnv``): what
    ``tictactoe.env()`` gives with its wrapper chain, in one class."""
    return OkginAECEnv(render_mode=render_mode, **options)


register_envs(pettingzoo=True)  # PettingZoo is imported now anyway: make pettingzoo.make find the id
