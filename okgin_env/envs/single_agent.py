"""Oklahoma Gin as a single-agent Gymnasium environment: the learner against a fixed opponent.

==================  ==========================================================================
Import              ``okgin_env.SingleAgentEnv(opponent="random", seat="random", **options)``
                    or ``gymnasium.make("okgin/OklahomaGin-v0", opponent="random")``
Actions             ``Discrete(107)`` (as in the AEC env; ``okgin_env.game.actions``)
Observations        ``Box(float32, (OBS_SIZE,))``: the learner's observation vector (default,
                    ``obs_format="vector"``), or with ``obs_format="dict"``
                    ``Dict(observation=Box(float32, (OBS_SIZE,)), action_mask=Box(0, 1, (107,), int8))``
Action mask         ``env.action_masks()`` (sb3-contrib ``MaskablePPO``) and ``info["action_mask"]``
Render modes        ``"ansi"``, ``"human"`` (text), ``"rgb_array"`` (``okgin_env.render.rgb``)
==================  ==========================================================================

The learner plays one seat (player id ``seat``: 0, 1, or "random" = drawn at every reset);
the opponent plays the other inside ``step``, so every ``step`` returns at the learner's next
decision (or the episode's end). The opponent is an agent object with the batched
``act(observations (B, OBS_SIZE), action_masks (B, 107)) -> (B,)`` surface, a plain callable
``f(observations, action_masks) -> actions`` (the vector env takes the same), or a spec string
resolved by ``okgin_env.agent_specs.make_agent`` ("random", "greedy", "simple", "expert",
"ppo:PATH", or a user's "module:Attr"); "random" is built in, the other bots are found through
the ``agents`` package's registration without this module importing it.

Options, rewards and ``info["hand_result"]`` are those of the AEC env (``okgin_env.envs.aec``):
every ``Rules`` option, ``episode``, ``reward``, ``reward_scale``, ``deadwood_shaping``,
``features``, ``obs_format`` ("vector" here by default); rewards are the learner's. This env adds
``illegal_action`` (below). Because the opponent may end a hand inside ``step`` after the
learner's action, and in game episodes may end a further hand before the learner acts again,
a step that ended hands has ``info["hands"]`` (how many), ``info["net_points"]`` (the learner's
points minus the opponent's over them, unshaped; game bonuses included in game episodes) and ``info["hand_result"]`` (the last of them).
Every info value is a fixed-shape number or array (``okgin_env.features.hand_info``; the readable form is
``okgin_env.render.text.describe_hand(info["hand_result"])``), so ``SyncVectorEnv``/``AsyncVectorEnv``
merge the infos of several envs and replay buffers store them.

In game episodes the opponent may end a hand during ``reset`` (it took the upcard and knocked):
that hand's result is in the reset ``info`` and its reward is added to the first ``step``'s.

Seeding: ``reset(seed=s)`` fixes the decks and dealers, the learner's seat and the opponent's
randomness: an opponent with an ``rng`` attribute holding a ``np.random.Generator`` (the
convention of ``agents/``) gets a new generator seeded from ``s``; one without keeps its own.
``reset(options={"deck": ..., "dealer": ...})`` replays a deal. If the
opponent ends the episode before the learner's first decision (it took the upcard and knocked),
the episode is dealt again from the generator, and ``info["skipped_episodes"]`` counts it.

Illegal actions (``illegal_action=``): an action of the space (an integer 0-106) that the mask
forbids either ends the episode (``"terminate"``, the default: ``terminated=True``, reward
``options.ILLEGAL_REWARD`` = -1 plus any reward still owed, ``info["illegal_action"] = True``,
the convention of PettingZoo's classic envs and their ``TerminateIllegalWrapper``) or raises a
``ValueError`` naming it and listing the legal actions, with the state untouched (``"raise"``).
"terminate" is the default because the standard checkers (``gymnasium.utils.env_checker.check_env``,
stable-baselines3's ``check_env``) step with unmasked ``action_space.sample()``, and so do
algorithms without action masks: they must get a penalty to learn from, not an exception.
Use "raise" when an illegal action can only be a bug (masked agents, scripted play, tests).
Actions outside the space (out of range, not an integer) always raise ``ValueError``.

When the episode is over, the mask (``action_masks()``, ``info["action_mask"]``, the dict
observation's) allows only ``actions.TERMINAL_ACTION`` (106), never nothing: a masked sampler
on the terminal observation (Gymnasium's next-step autoreset hands it to the learner) gets a
valid action with log-prob 0; the vectoriser resets the env instead of playing it, and
``step`` on a finished episode still raises ``RuntimeError``.

Observation format (``obs_format=``): ``"vector"`` returns the observation vector; ``"dict"``
returns ``{"observation": vector, "action_mask": int8 mask}`` (PettingZoo's classic-env keys, as
the AEC env's observation); ``"rllib"`` returns ``{"observations": vector, "action_mask": int8
mask}``, the keys RLlib's action-masking RLModules read.

Learner features (``features=``, an option of every okgin env): ``"raw"`` (default) returns the
observation vector; ``"meld"`` and ``"outs"`` append the columns of ``okgin_env.features.learner``
(``learner_input``: 649 and 861 float32 in all, what okgin's own network reads), in the vector or
in the dict's ``"observation"``; ``observation_space`` is the wider Box. The opponent still acts
on the plain observation, and shaping reads it too.

Shaping (``deadwood_shaping=c``, default 0 = off): the learner's reward of a step adds
``phi(s') - phi(s)``, with ``phi = okgin_env.features.shaping.potential(obs, c, reward_scale)`` at the
learner's decision before (s) and after (s') the step, and ``phi(s') = 0`` when the episode ends
(an illegal action too). Over an episode these terms sum to ``-phi(s_0)``, so the optimal policy
is unchanged; ``info["hand_result"]`` points stay unshaped. See ``docs/conformance.md``.
"""

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces

from okgin_env.agent_specs import checked_actions, resolve_agent
from okgin_env.envs.learner import Presenter, Shaping, learner_action, seed_opponent
from okgin_env.envs.options import (
    ILLEGAL_REWARD,
    EnvConfig,
    observation_space,
    parse_reset_options,
)
from okgin_env.envs.reward import hand_reward, reward_rule
from okgin_env.features.hand_info import hand_info
from okgin_env.game.actions import NUM_ACTIONS, TERMINAL_ACTION
from okgin_env.game.core import StepOutput, VectorGame
from okgin_env.render.text import (
    LastAction,
    describe_hand,
    record_action,
    render_hand_result,
    render_in_mode,
    render_player_view,
)

SEATS = (0, 1, "random")
MAX_RESET_TRIES = 100  #: re-deals when the opponent ends episodes before the learner can act


def terminal_mask() -> np.ndarray:
    """A new (107,) bool mask of a finished episode: only ``TERMINAL_ACTION`` is True, so masked
    sampling on a terminal observation works (log-prob 0); stepping a finished env still raises."""
    mask = np.zeros(NUM_ACTIONS, bool)
    mask[TERMINAL_ACTION] = True
    return mask


class SingleAgentEnv(gymnasium.Env):
    """The learner plays ``seat`` against ``opponent`` (see the module docstring)."""

    # "rgb_array": stable-baselines3's make_vec_env asks gymnasium.make for it by default (for
    # video recording), so the registered id must accept it.
    metadata = {"render_modes": ["ansi", "human", "rgb_array"], "render_fps": 1}

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
        self.observation_space = observation_space(self.rules, self.config.obs_format, self.config.features)
        self.action_space = spaces.Discrete(NUM_ACTIONS)
        self._rule = reward_rule(self.config)
        self._present = Presenter(self.config)  # the learner's columns; the opponent acts on plain observations
        self._terminate_illegal = self.config.illegal_action == "terminate"
        self._shaping = Shaping(self.config.deadwood_shaping, self.config.reward_scale, 1)
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
        game_seed = seed_opponent(self.opponent, seed)
        self.seat = int(self.np_random.integers(2)) if self.seat_option == "random" else int(self.seat_option)
        self._last_actions = [None, None]
        self._last_hand = None
        skipped = 0
        out = self.game.reset(seed=game_seed, decks=deck, dealers=dealer)
        while True:
            self._knock_limit = int(self.game.state.knock_limit[0])
            results: list[tuple[dict, float]] = []
            out, reward = self._play_opponent(out, results)
            if not (out.terminated[0] or out.truncated[0]):
                break
            skipped += 1
            if skipped >= MAX_RESET_TRIES:
                raise RuntimeError(f"the opponent ended {skipped} episodes in a row before the learner could act")
            self._last_actions = [None, None]
            out = self.game.reset()
        self._set_output(out)
        if self._shaping:
            self._shaping.start(out.observation[0])  # phi(s_0): no reward for it
        # In game episodes the opponent may end a hand before the learner's first decision:
        # its reward is paid with the first step, its result is in this info.
        self._pending_reward = reward
        self._show_result = bool(results)
        info = {"action_mask": self._mask, "seat": self.seat}
        self._hands_info(info, results)
        if skipped:
            info["skipped_episodes"] = skipped
        if self.render_mode == "human":
            self.render()
        return self._observation(out.observation[0]), info

    # -------------------------------------------------------------------- step
    def step(self, action: int):
        if self._done:
            raise RuntimeError("step() called on a finished episode; call reset() first")
        a = learner_action(action, self._mask, self._terminate_illegal)
        if a is None:
            return self._end_illegal()
        if self.render_mode is not None:
            self._last_actions[self.seat] = record_action(self.game.state, 0, a)
        self._act[0] = a
        out = self.game.step(self._act)
        results: list[tuple[dict, float]] = []
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
        reward += self._shaping_term(obs)
        info: dict[str, Any] = {"action_mask": self._mask, "seat": self.seat}
        self._show_result = bool(results)
        self._hands_info(info, results)
        if self.render_mode == "human":
            self.render()
        return self._observation(obs), reward, terminated, truncated, info

    def action_masks(self) -> np.ndarray:
        """(107,) bool legal actions of the learner (``terminal_mask()`` when the episode is over)."""
        return self._mask

    # ----------------------------------------------------------------- helpers
    def _play_opponent(self, out: StepOutput, results: list[tuple[dict, float]]) -> tuple[StepOutput, float]:
        """Let the opponent act until the learner is to move or the episode ends."""
        reward = 0.0
        opp = 1 - self.seat
        while int(out.current_player[0]) == opp:
            a = int(checked_actions(self.opponent.act(out.observation, out.legal_action_mask),
                                    out.legal_action_mask, self.opponent_name, "opponent")[0])
            if self.render_mode is not None:
                self._last_actions[opp] = record_action(self.game.state, 0, a)
            self._act[0] = a
            out = self.game.step(self._act)
            reward += self._reward(out, results)
        return out, reward

    def _reward(self, out: StepOutput, results: list[tuple[dict, float]]) -> float:
        """The learner's reward for one core step; records a hand that ended: its result and the
        learner's net points (the core's reward, game bonuses included, as the vector env books it)."""
        if not out.hand_over[0]:
            return 0.0
        info = hand_info(out.result, 0, knock_limit=self._knock_limit)
        results.append((info, float(out.rewards[0, self.seat])))
        self._last_hand = info
        self._knock_limit = int(self.game.state.knock_limit[0])
        return hand_reward(self._rule, float(out.rewards[0, self.seat]), info["winner"], info["game_winner"], self.seat)

    def _hands_info(self, info: dict[str, Any], results: list[tuple[dict, float]]) -> None:
        """The info entries of the hands that ended in a reset or step (none when none did)."""
        if results:
            info["hand_result"] = results[-1][0]
            info["hands"] = len(results)
            info["net_points"] = sum(net for _, net in results)

    def _set_output(self, out: StepOutput) -> None:
        self._out = out
        self._done = int(out.current_player[0]) < 0
        self._mask = terminal_mask() if self._done else out.legal_action_mask[0]

    def _end_illegal(self) -> tuple:
        """``illegal_action="terminate"``: the episode ends at once with ``ILLEGAL_REWARD``
        (the game is left as it was; ``reset`` starts a new one)."""
        reward = ILLEGAL_REWARD + self._pending_reward
        self._pending_reward = 0.0
        self._done = True
        self._mask = terminal_mask()
        self._show_result = False
        reward += self._shaping_term(None)  # -phi(s): the episode is over
        info = {"action_mask": self._mask, "seat": self.seat, "illegal_action": True}
        if self.render_mode == "human":
            self.render()
        return self._observation(self.game.observe(self.seat)[0]), reward, True, False, info

    def _shaping_term(self, obs: np.ndarray | None) -> float:
        """phi(s') - phi(s) for the learner's new decision s' with observation ``obs``
        (phi(s') = 0 once the episode is over); 0.0 without shaping."""
        if not self._shaping:
            return 0.0
        return float(self._shaping.advance(None if self._done else obs, self._done, 0))

    def _observation(self, obs: np.ndarray) -> np.ndarray | dict[str, np.ndarray]:
        """``obs`` as the learner reads it (``features``, ``obs_format``)."""
        return self._present.one(obs, self._mask)

    # ------------------------------------------------------------------ render
    def render(self) -> str | np.ndarray | None:
        if self.render_mode == "rgb_array":
            from okgin_env.render.rgb import (
                render_rgb,  # lazy: only rgb frames need the drawing module
            )

            return render_rgb(self.game.state, self.seat, self.rules, episode=self.config.episode,
                              last_hand=self._shown_hand(), last_actions=self._last_actions, names=self._names())
        return render_in_mode(self.render_mode, self.render_text)

    def render_text(self, color: bool = False) -> str:
        """The learner's view, after the last hand's result."""
        names = self._names()
        hand = self._shown_hand()
        parts = []
        if hand is not None:
            parts.append(render_hand_result(hand, names=names, color=color))
        if not self._done or self._last_hand is None:
            parts.append(render_player_view(self.game.state, self.seat, self.rules, episode=self.config.episode,
                                            last_actions=self._last_actions, names=names, color=color))
        return "\n".join(parts)

    def _names(self) -> tuple[str, str]:
        return ("you", "opponent") if self.seat == 0 else ("opponent", "you")

    def _shown_hand(self) -> dict | None:
        """The result of a hand that ended in the last reset/step (or ended the episode), else None."""
        shown = self._last_hand is not None and (self._show_result or self._done)
        return describe_hand(self._last_hand) if shown else None
