"""Oklahoma Gin as a single-agent Gymnasium environment: the learner against a fixed opponent.

==================  ==========================================================================
Import              ``okgin_env.SingleAgentEnv(opponent="random", seat="random", **options)``
                    or ``gymnasium.make("okgin/OklahomaGin-v0", opponent="random")``
Actions             ``Discrete(107)`` (as in the AEC env; ``okgin_env.actions``)
Observations        ``Box(float32, (OBS_SIZE,))``: the learner's observation vector
Action mask         ``env.action_masks()`` (sb3-contrib ``MaskablePPO``) and ``info["action_mask"]``
==================  ==========================================================================

The learner plays one seat (player id ``seat``: 0, 1, or "random" = drawn at every reset);
the opponent plays the other inside ``step``, so every ``step`` returns at the learner's next
decision (or the episode's end). The opponent is an agent object with the batched
``act(observations (B, OBS_SIZE), action_masks (B, 107)) -> (B,)`` surface, or a spec string
resolved by ``okgin_env.agent_specs.make_agent`` ("random", "greedy", "simple", "expert",
"ppo:PATH", or a user's "module:Attr"); "random" is built in, the other bots are found through
the ``agents`` package's registration without this module importing it.

Options, rewards and ``info["hand_result"]`` are those of the AEC env (``okgin_env.aec``):
every ``Rules`` option, ``episode``, ``reward``, ``reward_scale``; rewards are the learner's.
Because the opponent may end a hand inside ``step`` after the learner's action, and in game
episodes may end a further hand before the learner acts again, ``info["hand_results"]`` lists
every hand that ended in the step (``info["hand_result"]`` is the last of them).

In game episodes the opponent may end a hand during ``reset`` (it took the upcard and knocked):
that hand's result is in the reset ``info`` and its reward is added to the first ``step``'s.

Seeding: ``reset(seed=s)`` fixes the decks and dealers, the learner's seat and the opponent's
randomness: an opponent with an ``rng`` attribute holding a ``np.random.Generator`` (the
convention of ``agents/``) gets a new generator seeded from ``s``; one without keeps its own.
``reset(options={"deck": ..., "dealer": ...})`` replays a deal. If the
opponent ends the episode before the learner's first decision (it took the upcard and knocked),
the episode is dealt again from the generator, and ``info["skipped_episodes"]`` counts it.

An illegal action raises ``ValueError`` naming it and listing the legal actions.
"""

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces

from .actions import NUM_ACTIONS, check_action, legal_listing
from .agent_specs import resolve_agent
from .core import StepOutput, VectorGame
from .options import EnvConfig, observation_box, parse_reset_options
from .render import (LastAction, hand_result_info, record_action, render_hand_result, render_in_mode,
                     render_player_view)

SEATS = (0, 1, "random")
MAX_RESET_TRIES = 100  #: re-deals when the opponent ends episodes before the learner can act


class SingleAgentEnv(gymnasium.Env):
    """The learner plays ``seat`` against ``opponent`` (see the module docstring)."""

    metadata = {"render_modes": ["ansi", "human"], "render_fps": 1}

    def __init__(self, opponent: Any = "random", seat: int | str = "random", render_mode: str | None = None,
                 **options: Any) -> None:
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be None or one of {self.metadata['render_modes']}, got {render_mode!r}")
        if isinstance(seat, bool) or seat not in SEATS:
            raise ValueError(f"seat must be 0, 1 or 'random', got {seat!r}")
        self.render_mode = render_mode
        self.config = EnvConfig.from_options(options)
        self.rules = self.config.rules
        self.game = VectorGame(1, self.rules, episode=self.config.episode)
        self.seat_option = seat
        self.opponent_spec: str | None = opponent if isinstance(opponent, str) else None
        self.opponent, self.opponent_name = resolve_agent(opponent, what="opponent")
        self.observation_space = observation_box(self.rules)
        self.action_space = spaces.Discrete(NUM_ACTIONS)
        self._points = self.config.reward == "points"
        self._scale = self.config.reward_scale
        self.seat = 0
        self._act = np.zeros(1, np.int64)
        self._out: StepOutput | None = None
        self._mask = np.zeros(NUM_ACTIONS, bool)
        self._done = True
        self._last_actions: list[LastAction | None] = [None, None]
        self._last_hand: dict | None = None
        self._show_result = False  # a hand ended in the last reset/step (render shows it)
        self._knock_limit = 0  # knock limit of the hand in play (for hand results)
        self._pending_reward = 0.0  # reward of hands the opponent ended during reset (game episodes)

    # ------------------------------------------------------------------- reset
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        deck, dealer = parse_reset_options(options)
        game_seed = None
        if seed is not None:
            game_seed, opp_seed = np.random.SeedSequence(seed).spawn(2)
            if isinstance(getattr(self.opponent, "rng", None), np.random.Generator):
                self.opponent.rng = np.random.default_rng(opp_seed)
        self.seat = int(self.np_random.integers(2)) if self.seat_option == "random" else int(self.seat_option)
        self._last_actions = [None, None]
        self._last_hand = None
        skipped = 0
        out = self.game.reset(seed=game_seed, decks=deck, dealers=dealer)
        while True:
            self._knock_limit = int(self.game.state.knock_limit[0])
            results: list[dict] = []
            out, reward = self._play_opponent(out, results)
            if not (out.terminated[0] or out.truncated[0]):
                break
            skipped += 1
            if skipped >= MAX_RESET_TRIES:
                raise RuntimeError(f"the opponent ended {skipped} episodes in a row before the learner could act")
            self._last_actions = [None, None]
            out = self.game.reset()
        self._set_output(out)
        # In game episodes the opponent may end a hand before the learner's first decision:
        # its reward is paid with the first step, its result is in this info.
        self._pending_reward = reward
        self._show_result = bool(results)
        info = {"action_mask": self._mask, "seat": self.seat}
        if results:
            info["hand_result"] = results[-1]
            info["hand_results"] = results
        if skipped:
            info["skipped_episodes"] = skipped
        if self.render_mode == "human":
            self.render()
        return out.observation[0], info

    # -------------------------------------------------------------------- step
    def step(self, action: int):
        if self._done:
            raise RuntimeError("step() called on a finished episode; call reset() first")
        a = self._check_action(action)
        if self.render_mode is not None:
            self._last_actions[self.seat] = record_action(self.game.state, 0, a)
        self._act[0] = a
        out = self.game.step(self._act)
        results: list[dict] = []
        reward = self._reward(out, results) + self._pending_reward
        self._pending_reward = 0.0
        out, r = self._play_opponent(out, results)
        reward += r
        self._set_output(out)
        terminated, truncated = bool(out.terminated[0]), bool(out.truncated[0])
        if self._done:
            obs = self.game.observe(self.seat)[0]
        else:
            obs = out.observation[0]
        info: dict[str, Any] = {"action_mask": self._mask, "seat": self.seat}
        self._show_result = bool(results)
        if results:
            info["hand_result"] = results[-1]
            info["hand_results"] = results
        if self.render_mode == "human":
            self.render()
        return obs, reward, terminated, truncated, info

    def action_masks(self) -> np.ndarray:
        """(107,) bool legal actions of the learner (all False when the episode is over)."""
        return self._mask

    # ----------------------------------------------------------------- helpers
    def _play_opponent(self, out: StepOutput, results: list[dict]) -> tuple[StepOutput, float]:
        """Let the opponent act until the learner is to move or the episode ends."""
        reward = 0.0
        opp = 1 - self.seat
        while int(out.current_player[0]) == opp:
            a = int(np.asarray(self.opponent.act(out.observation, out.legal_action_mask))[0])
            if not (0 <= a < NUM_ACTIONS and out.legal_action_mask[0, a]):
                raise ValueError(f"the opponent {self.opponent_name!r} chose the illegal "
                                 f"action {a}; legal: {legal_listing(out.legal_action_mask[0])}")
            if self.render_mode is not None:
                self._last_actions[opp] = record_action(self.game.state, 0, a)
            self._act[0] = a
            out = self.game.step(self._act)
            reward += self._reward(out, results)
        return out, reward

    def _reward(self, out: StepOutput, results: list[dict]) -> float:
        """The learner's reward for one core step; records a hand result if a hand ended."""
        if not out.hand_over[0]:
            return 0.0
        info = hand_result_info(out.result, 0, knock_limit=self._knock_limit)
        results.append(info)
        self._last_hand = info
        self._knock_limit = int(self.game.state.knock_limit[0])
        if self._points:
            return float(out.rewards[0, self.seat]) * self._scale
        winner = info["winner"] if self.config.episode == "hand" else info["game_winner"]
        return 0.0 if winner is None else (1.0 if winner == self.seat else -1.0)

    def _set_output(self, out: StepOutput) -> None:
        self._out = out
        self._done = int(out.current_player[0]) < 0
        self._mask = np.zeros(NUM_ACTIONS, bool) if self._done else out.legal_action_mask[0]

    def _check_action(self, action: Any) -> int:
        return check_action(action, self._mask)

    # ------------------------------------------------------------------ render
    def render(self) -> str | None:
        return render_in_mode(self.render_mode, self.render_text)

    def render_text(self, color: bool = False) -> str:
        """The learner's view, after the last hand's result."""
        names = ("you", "opponent") if self.seat == 0 else ("opponent", "you")
        parts = []
        if self._last_hand is not None and (self._show_result or self._done):
            parts.append(render_hand_result(self._last_hand, names=names, color=color))
        if not self._done or self._last_hand is None:
            parts.append(render_player_view(self.game.state, self.seat, self.rules, episode=self.config.episode,
                                            last_actions=self._last_actions, names=names, color=color))
        return "\n".join(parts)
