"""Oklahoma Gin as a PettingZoo AEC environment (classic-env conventions, like ``tictactoe``).

==================  ==========================================================================
Import              ``from okgin_env import env, raw_env``
Agents              ``agents = ["player_0", "player_1"]`` (agent i is core player id i)
Actions             ``Discrete(107)`` (``okgin_env.actions``; see below)
Observations        ``Dict(observation=Box(float32, (OBS_SIZE,)), action_mask=Box(0, 1, (107,), int8))``
State               ``state()``: ``Box(float32, (STATE_SIZE,))``, both hands and the stock order
Metadata            ``name="okgin_v0"``, ``render_modes=["ansi", "human", "rgb_array"]``, ``is_parallelizable=False``
==================  ==========================================================================

The rules are those of ``docs/RULES.md`` and live in ``okgin_env.core``: this module only
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
  s'), with ``phi = okgin_env.shaping.potential(obs, c, reward_scale)`` of its observation and
  ``phi = 0`` once the episode has ended (paid to both in the last step). Each player's terms sum
  to ``-phi(its first decision)`` over an episode; ``hand_result`` points stay unshaped, and the
  rewards are no longer zero-sum. ``docs/conformance.md`` explains when to use it.
* ``features="raw"|"meld"|"outs"`` (default "raw"): "meld" and "outs" append the columns of
  ``okgin_env.features`` (``learner_input``: 649 and 861 float32 in all, what okgin's own network
  reads) to ``observation``; its Box in ``observation_space`` widens to match.

Unknown option names raise a ``ValueError`` listing the valid ones.

### Observation

``observation`` is the observing agent's vector of ``okgin_env.observation`` (fields
``own_hand``, ``discard_top``, ... ; read them with ``obs_field``). ``action_mask`` marks the
legal actions of the agent to act; it is all zeros for the other agent and after the end, as in
PettingZoo's classic envs: the AEC protocol never asks a policy for an action there (the other
agent is not selected; a finished agent must step ``None``). The single-agent and vector envs,
whose terminal observations do reach a learner's sampler, use ``actions.TERMINAL_ACTION`` instead.

### Actions

0-51 discard card a, 52-103 knock discarding card a-52 face down, 104 draw the stock,
105 take the top discard (the upcard during the offer), 106 pass (upcard offer only).
``raw_env.step`` raises ``ValueError`` naming an illegal, out-of-range or non-integer action and
listing the legal ones; ``env()`` adds PettingZoo's ``TerminateIllegalWrapper(illegal_reward=-1)``,
``AssertOutOfBoundsWrapper`` and ``OrderEnforcingWrapper``, as the classic environments do: there
an action outside ``Discrete(107)`` fails ``AssertOutOfBoundsWrapper``'s ``assert`` (an
``AssertionError``, PettingZoo's behaviour), and an illegal in-range one ends the game with -1
for the mover.

### Rewards and infos

See ``reward`` above. ``infos[agent]["action_mask"]`` repeats the mask. When a hand ends,
``infos[agent]["hand_result"]`` holds ``render.hand_result_info`` (knocker, winner, gin /
undercut / void, deadwoods, melds and lay-offs as card texts, points, scores; -1 for "nobody",
'' for "no card") for both agents; it stays until that agent's next ``step``.

### Reset options

``reset(seed=..., options={"deck": [...], "dealer": d})`` replays a deal (``docs/RULES.md``,
"Replaying a deal"): 52 card indices or card texts, ``deck[0]`` to the non-dealer; ``dealer``
0 or 1. In game episodes they apply to the first hand.

### Rendering

``render_mode="ansi"`` returns the acting agent's view as text (``render.render_player_view``,
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
from pettingzoo.utils import wrappers

from .actions import NUM_ACTIONS, check_action
from .cards import NUM_CARDS
from .constants import NUM_KNOCK_LIMITS, UPCARD_POS, Phase
from .core import StepOutput, VectorGame
from .features import learner_input
from .observation import STOCK_SCALE, field_slices
from .options import EnvConfig, observation_space, parse_reset_options, score_bound
from .registration import register_envs
from .render import (LastAction, hand_result_info, record_action, render_hand_result, render_in_mode,
                     render_player_view)
from .render_rgb import render_rgb as rgb_frame
from .rules import Rules
from .shaping import potential

AGENTS = ("player_0", "player_1")  #: agent i is core player id i


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
    v[f["turns"].start] = min(1.0, int(s.turns[i]) / rules.max_turns_per_hand)
    v[f["scores"]] = s.scores[i] / rules.target_score
    return v


# ------------------------------------------------------------------------ the classes

def env(render_mode: str | None = None, **options: Any) -> AECEnv:
    """The AEC environment with PettingZoo's standard classic-env wrappers (as ``tictactoe``):
    ``TerminateIllegalWrapper(illegal_reward=-1)``, ``AssertOutOfBoundsWrapper``,
    ``OrderEnforcingWrapper``."""
    e = raw_env(render_mode=render_mode, **options)
    terminate_illegal = TerminateIllegalWrapper(e, illegal_reward=-1)
    e = OrderEnforcingWrapper(AssertOutOfBoundsWrapper(terminate_illegal))
    e._fused = terminate_illegal  # the chain is env()'s own: the outer wrapper may take it in one frame
    return e


# PettingZoo's wrappers reach the raw env's per-step attributes (agent_selection, rewards, ...)
# through one ``__getattr__`` per wrapper layer, which costs more than a step of the game
# itself. These subclasses change nothing but that: the hot attributes are properties that
# read the raw env directly (the order-enforcing one still refuses them before ``reset``).
_FORWARDED = ("agents", "agent_selection", "rewards", "terminations", "truncations", "infos",
              "_cumulative_rewards")


def _forwarding_property(name: str, check_reset: bool) -> property:
    def get(self):
        if check_reset and not self._has_reset:
            raise AttributeError(f"{name} cannot be accessed before reset")
        return getattr(self._raw, name)
    return property(get)


def _fast_wrapper(base: type, check_reset: bool = False, **methods: Any) -> type:
    def __init__(self, env_, *args, **kwargs):
        self._raw = env_.unwrapped
        base.__init__(self, env_, *args, **kwargs)

    namespace = {"__init__": __init__, "__str__": lambda self: str(self.env), "__doc__": base.__doc__,
                 "__module__": __name__, "__qualname__": base.__qualname__}
    namespace.update({n: _forwarding_property(n, check_reset) for n in _FORWARDED})
    namespace.update(methods)
    return type(base.__name__, (base,), namespace)


# The per-step methods below take the common case (a legal action of a live agent, after reset)
# in one frame reading the raw env directly, and hand every other case to PettingZoo's own
# method, so errors, warnings and illegal-move handling stay PettingZoo's.

def _terminate_illegal_observe(self, agent):
    obs = self.env.observe(agent)
    raw = self._raw
    if agent == raw.agent_selection:
        self._prev_obs = obs
        self._prev_info = raw.infos.get(agent, {})
    return obs


def _terminate_illegal_step(self, action):
    raw = self._raw
    agent = raw.agent_selection
    prev = self._prev_obs
    if (type(action) is int and type(prev) is dict and "action_mask" in prev and not self._terminated
            and not raw.terminations[agent] and not raw.truncations[agent] and prev["action_mask"][action]):
        self._prev_obs = self._prev_info = None
        self.env.step(action)
    else:
        wrappers.TerminateIllegalWrapper.step(self, action)


def _assert_in_bounds_step(self, action):
    raw = self._raw
    if type(action) is int and raw.action_space(raw.agent_selection).contains(action):
        self.env.step(action)
    else:
        wrappers.AssertOutOfBoundsWrapper.step(self, action)


def _order_enforcing_step(self, action):
    raw = self._raw
    if self._has_reset and raw.agents:
        self._has_updated = True
        ti = self._fused
        if ti is not None and type(action) is int and 0 <= action < NUM_ACTIONS:
            # env()'s chain in one frame: AssertOutOfBounds passes an int in range (its action
            # spaces are Discrete(NUM_ACTIONS)); TerminateIllegal passes a legal action of a live
            # agent (its own test, on the mask it last observed) and forgets that observation.
            prev, agent = ti._prev_obs, raw.agent_selection
            if (type(prev) is dict and "action_mask" in prev and not ti._terminated and not raw.terminations[agent]
                    and not raw.truncations[agent] and prev["action_mask"][action]):
                ti._prev_obs = ti._prev_info = None
                raw.step(action)
                return
        self.env.step(action)
    else:
        wrappers.OrderEnforcingWrapper.step(self, action)


def _order_enforcing_last(self, observe: bool = True):
    """``AECEnv.last``, reading the raw env's dicts directly."""
    if not self._has_reset:
        raise AttributeError("agent_selection cannot be accessed before reset")
    raw = self._raw
    agent = raw.agent_selection
    assert agent is not None
    if not observe:
        obs = None
    elif self._fused is not None:  # env()'s chain: TerminateIllegal's observe, in this frame
        obs = raw.observe(agent)
        ti = self._fused
        ti._prev_obs, ti._prev_info = obs, raw.infos.get(agent, {})
    else:
        obs = self.env.observe(agent)
    return obs, raw._cumulative_rewards[agent], raw.terminations[agent], raw.truncations[agent], raw.infos[agent]


TerminateIllegalWrapper = _fast_wrapper(wrappers.TerminateIllegalWrapper, observe=_terminate_illegal_observe,
                                        step=_terminate_illegal_step)
AssertOutOfBoundsWrapper = _fast_wrapper(wrappers.AssertOutOfBoundsWrapper, step=_assert_in_bounds_step)
OrderEnforcingWrapper = _fast_wrapper(wrappers.OrderEnforcingWrapper, check_reset=True, step=_order_enforcing_step,
                                      last=_order_enforcing_last, _fused=None)


class _ActionSpace(spaces.Discrete):
    """``Discrete(107)`` with a fast membership test for plain ints (``AssertOutOfBoundsWrapper``
    calls ``contains`` at every step, and the generic one costs ~2.5 us)."""

    def contains(self, x: Any) -> bool:
        if type(x) is int:
            return 0 <= x < self.n
        return super().contains(x)


_ZERO_MASK = np.zeros(NUM_ACTIONS, np.int8)
_ZERO_MASK.flags.writeable = False


class raw_env(AECEnv, EzPickle):
    """Oklahoma Gin for two agents, one ``VectorGame(1, ...)`` underneath (see the module docstring)."""

    metadata = {"name": "okgin_v0", "render_modes": ["ansi", "human", "rgb_array"], "is_parallelizable": False,
                "render_fps": 1}

    def __init__(self, render_mode: str | None = None, **options: Any) -> None:
        EzPickle.__init__(self, render_mode=render_mode, **options)
        super().__init__()
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be None or one of {self.metadata['render_modes']}, got {render_mode!r}")
        self.render_mode = render_mode
        self.config = EnvConfig.from_options(options, learner=False)
        self.rules = self.config.rules
        self.game = VectorGame(1, self.rules, episode=self.config.episode)
        self.possible_agents = list(AGENTS)
        self.agents = self.possible_agents[:]
        self.observation_spaces = {a: observation_space(self.rules, "dict", self.config.features) for a in AGENTS}
        self.action_spaces = {a: _ActionSpace(NUM_ACTIONS) for a in AGENTS}
        self.state_space = state_box(self.rules)
        self._points = self.config.reward == "points"
        self._scale = self.config.reward_scale
        self._shaping = self.config.deadwood_shaping
        self._phi: list[float | None] = [None, None]  # potential at each player's last decision
        self._act = np.zeros(1, np.int64)
        self._player = -1  # core player id to act, -1 when the episode is over
        self._mask = np.zeros(NUM_ACTIONS, bool)
        self._views: list[dict | None] = [None, None]
        self._features = self.config.features
        self._featured: list[tuple[dict, dict] | None] = [None, None]  # (raw view, view with the features)
        self._rewarded = False
        self._knock_limit = 0
        self._last_actions: list[LastAction | None] = [None, None]
        self._last_hand: dict | None = None
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
        self._last_hand = None
        self._hand_ended = False
        self._knock_limit = int(self.game.state.knock_limit[0])
        self._new_turn(out, int(out.current_player[0]))
        if self._shaping:
            self._phi = [None, None]
            self._shape(self._player)  # the first decision: no reward
        if self.render_mode == "human":
            self.render()

    # -------------------------------------------------------------------- step
    def step(self, action: int | None) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        player = self._player
        if type(action) is int and 0 <= action < NUM_ACTIONS and self._mask[action]:
            a = action  # the common case, without building an error message's context
        else:
            a = self._check_action(action)
        if self.render_mode is not None:
            self._last_actions[player] = record_action(self.game.state, 0, a)
        self._act[0] = a
        out = self.game.step_reusing(self._act, checked=True)  # _check_action checked it; read at once
        self._cumulative_rewards[agent] = 0.0
        if self._rewarded:
            self.rewards[AGENTS[0]] = self.rewards[AGENTS[1]] = 0.0
            self._rewarded = False
        info = self.infos[agent]
        if "hand_result" in info:
            del info["hand_result"]
        self._hand_ended = bool(out.hand_over[0])
        if self._hand_ended:
            self._end_hand(out)
        cur = int(out.current_player[0])
        if cur >= 0:
            self._new_turn(out, cur)
        else:  # the episode is over: the other agent steps None first, then this one
            self._player = -1
            self._mask = np.zeros(NUM_ACTIONS, bool)
            self._views = [None, None]
            for a_ in AGENTS:
                self.infos[a_]["action_mask"] = _ZERO_MASK
            self.agent_selection = AGENTS[1 - player]
        if self._shaping:
            self._shape(cur)
        if self._rewarded:
            self._accumulate_rewards()
        if self.render_mode == "human":
            self.render()

    def _check_action(self, action: Any) -> int:
        return check_action(action, self._mask, self.agent_selection)

    def _new_turn(self, out: StepOutput, cur: int) -> None:
        """The core says ``cur`` is to act: cache their observation and mask."""
        self._player = cur
        self._mask = out.legal_action_mask[0]
        mask8 = self._mask.view(np.int8)
        self._views = [None, None]
        self._views[cur] = {"observation": out.observation[0], "action_mask": mask8}
        self.infos[AGENTS[cur]]["action_mask"] = mask8
        self.infos[AGENTS[1 - cur]]["action_mask"] = _ZERO_MASK
        self.agent_selection = AGENTS[cur]

    def _end_hand(self, out: StepOutput) -> None:
        """Rewards, flags and infos of a hand that ended in this step (rare path)."""
        r = out.result
        info = hand_result_info(r, 0, knock_limit=self._knock_limit)
        self._last_hand = info
        self._knock_limit = int(self.game.state.knock_limit[0])  # the next hand's, in game episodes
        for a in AGENTS:
            self.infos[a]["hand_result"] = info
        if self._points:
            gains = (float(out.rewards[0, 0]) * self._scale, float(out.rewards[0, 1]) * self._scale)
        else:
            winner = info["winner"] if self.config.episode == "hand" else info["game_winner"]
            gains = (0.0, 0.0) if winner < 0 else ((1.0, -1.0) if winner == 0 else (-1.0, 1.0))
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
        if cur >= 0:
            phi = float(potential(self._views[cur]["observation"], self._shaping, self._scale))
            gains = {cur: phi}
        else:
            gains = {p: 0.0 for p in (0, 1)}
        for p, phi in gains.items():
            if self._phi[p] is not None:
                self.rewards[AGENTS[p]] += phi - self._phi[p]
                self._rewarded = True
            self._phi[p] = phi if cur >= 0 else None

    # ------------------------------------------------------------------ observe
    def observe(self, agent: str) -> dict[str, np.ndarray]:
        p = AGENTS.index(agent)
        view = self._views[p]
        if view is None:
            view = {"observation": self.game.observe(p)[0], "action_mask": _ZERO_MASK}
            self._views[p] = view
        if self._features == "raw":
            return view
        return self._with_features(p, view)

    def _with_features(self, p: int, view: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        """``view`` with its observation extended by the ``features`` columns, computed once per view
        (``last()`` and ``observe`` may ask several times; shaping reads the plain view)."""
        cached = self._featured[p]
        if cached is None or cached[0] is not view:  # the cache holds the view, so its id is never reused
            obs = learner_input(view["observation"][None], self._features)[0]
            cached = (view, {"observation": obs, "action_mask": view["action_mask"]})
            self._featured[p] = cached
        return cached[1]

    def state(self) -> np.ndarray:
        """Full state for centralised critics (``STATE_FIELDS``): both hands, stock order, pile, ..."""
        return encode_state(self.game, 0)

    # ------------------------------------------------------------------- render
    def render(self) -> str | np.ndarray | None:
        """The text of ``render_text`` ("ansi"), printed ("human"), or the ``render_rgb`` picture
        from the seat of the agent to act ("rgb_array")."""
        if self.render_mode == "rgb_array":
            return self.render_rgb()
        return render_in_mode(self.render_mode, self.render_text)

    def render_rgb(self, player: int | None = None) -> np.ndarray:
        """(H, W, 3) uint8 picture of the table from ``player``'s seat (default: the agent to act),
        with the latest hand's result once one has ended."""
        p = AGENTS.index(self.agent_selection) if player is None else player
        return rgb_frame(self.game.state, p, self.rules, episode=self.config.episode, last_hand=self._last_hand,
                         last_actions=self._last_actions)

    def render_text(self, color: bool = False, player: int | None = None) -> str:
        """The acting player's view (or ``player``'s), after the last hand's result if one just ended."""
        parts = []
        if self._last_hand is not None and (self._hand_ended or self._player < 0):
            parts.append(render_hand_result(self._last_hand, color=color))
        p = self._player if player is None else player
        if p >= 0:
            parts.append(render_player_view(self.game.state, p, self.rules, episode=self.config.episode,
                                            last_actions=self._last_actions, color=color))
        return "\n".join(parts)

    def close(self) -> None:
        pass


register_envs(pettingzoo=True)  # PettingZoo is imported now anyway: make pettingzoo.make find the id
