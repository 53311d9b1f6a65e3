"""Oklahoma Gin with text observations and text actions: a Gymnasium env for RL on language models.

==================  ==========================================================================
Import              ``okgin_env.text.TextEnv(opponent="random", seat="random", **options)``
                    or ``gymnasium.make("okgin/OklahomaGinText-v0", opponent="simple")``
Actions             ``Text(max_length=MAX_MOVE_CHARS)``: a move's id ("104"), a JSON
                    ``{"move": ...}`` or words ("draw stock", "discard 7s", "knock"), also
                    inside a longer answer (``okgin_env.text.moves.read_answer``)
Observations        ``Text(max_length=MAX_VIEW_CHARS)``, printable ASCII and newlines: the
                    learner's view (``okgin_env.text.view.render_view``), after the result of
                    any hand that ended since its last move and a note on a refused move
Render modes        ``"ansi"``, ``"human"``: the current observation text
==================  ==========================================================================

The game is ``okgin_env.envs.single_agent.SingleAgentEnv`` (same opponent specs, seats, rule and
env options, rewards, seeding and ``info["hand_result"]``); this env reads its observation
vector and mask into words and parses the text action back into an action id. The view is built
from the learner's observation vector and mask alone, so it never names a hidden card; the
result of a finished hand shows the showdown (both hands, the face-down knock card) as a table
would, and after a void hand only that nobody scored.

A text that is no legal move (``illegal_move="retry"``, the default) is refused: the state
is unchanged, the reward is ``illegal_reward`` (default -0.1), the observation is the same view
with a line saying why and what is allowed, and ``info["illegal_move"]`` is True. After
``max_illegal_moves`` refusals in a row (default 3) the episode ends instead (``terminated``,
reward ``okgin_env.envs.options.ILLEGAL_REWARD`` = -1, ``info["illegal_move"]``). With
``illegal_move="raise"`` a refused text raises ``okgin_env.text.MoveError`` (a ``ValueError``)
and changes nothing. A non-string action always raises ``ValueError``.

``info`` carries ``action_mask`` (the (107,) bool mask the view was read from), ``action`` (the
id played, -1 when refused), ``illegal_moves`` (refusals in a row at this decision) and ``seat``.
"""

from __future__ import annotations

import re
import string
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces

from okgin_env.envs.options import DICT_KEYS, ILLEGAL_REWARD
from okgin_env.envs.single_agent import SingleAgentEnv
from okgin_env.render.text import describe_hand, render_hand_result
from okgin_env.text.moves import MoveError, read_answer
from okgin_env.text.view import render_view

MAX_VIEW_CHARS = 8192  #: the observation space's bound (a view is about 1-2k characters)
MAX_MOVE_CHARS = 20_000  #: the action space's bound (``moves.MAX_ANSWER_CHARS``: longer answers are refused)
#: every character a view may hold: printable ASCII and newline (no unicode suits: canonical card text)
CHARSET = frozenset(string.printable) - frozenset("\r\x0b\x0c\t")
ILLEGAL_MOVE_MODES = ("retry", "raise")
_ASCII_SUITS = str.maketrans({"\u2660": "s", "\u2665": "h", "\u2666": "d", "\u2663": "c"})
_TEXT_ONLY = ("obs_format", "features", "illegal_action")  #: options this env fixes for its inner env


def hand_result_text(info: dict[str, Any], names: tuple[str, str]) -> str:
    """A finished hand in ASCII (``info`` is an env's ``info["hand_result"]``; ``names`` of player ids
    0 and 1): the showdown as ``render_hand_result`` draws it, or for a void hand only that nobody scored."""
    d = describe_hand(info)
    if d["void"]:
        why = "the turn cap was reached" if d["turn_cap"] else "only two cards were left in the stock"
        s = d["scores"]
        return f"Hand over: void hand ({why}), no score. Totals: {names[0]} {s[0]}, {names[1]} {s[1]}."
    pretty = render_hand_result(d, names=names, color=False)  # cards as printed ('10\u2660'): back to card text
    return re.sub("10([\u2660\u2665\u2666\u2663])", r"T\1", pretty).translate(_ASCII_SUITS)


class TextEnv(gymnasium.Env):
    """The learner plays ``seat`` against ``opponent`` in words (see the module docstring)."""

    metadata = {"render_modes": ["ansi", "human"], "render_fps": 1}

    def __init__(self, opponent: Any = "random", seat: int | str = "random", render_mode: str | None = None,
                 illegal_move: str = "retry", illegal_reward: float = -0.1, max_illegal_moves: int = 3,
                 **options: Any) -> None:
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be None or one of {self.metadata['render_modes']}, got {render_mode!r}")
        if illegal_move not in ILLEGAL_MOVE_MODES:
            raise ValueError(f"illegal_move must be one of {ILLEGAL_MOVE_MODES}, got {illegal_move!r}")
        if isinstance(max_illegal_moves, bool) or not isinstance(max_illegal_moves, int) or max_illegal_moves < 1:
            raise ValueError(f"max_illegal_moves must be an integer >= 1, got {max_illegal_moves!r}")
        if isinstance(illegal_reward, bool) or not isinstance(illegal_reward, (int, float)) \
                or not np.isfinite(illegal_reward):
            raise ValueError(f"illegal_reward must be a finite number, got {illegal_reward!r}")
        fixed = sorted(set(options) & set(_TEXT_ONLY))
        if fixed:
            raise ValueError(f"the text env sets {', '.join(fixed)} itself (its observation is the text view); "
                             "drop the option(s)")
        self.render_mode = render_mode
        self.illegal_move, self.illegal_reward, self.max_illegal_moves = illegal_move, float(illegal_reward), \
            max_illegal_moves
        self.inner = SingleAgentEnv(opponent=opponent, seat=seat, obs_format="dict", illegal_action="raise",
                                    **options)
        self.observation_space = spaces.Text(max_length=MAX_VIEW_CHARS, min_length=1, charset="".join(sorted(CHARSET)))
        self.action_space = spaces.Text(max_length=MAX_MOVE_CHARS, min_length=0, charset="".join(sorted(CHARSET)))
        self._vec_key, self._mask_key = DICT_KEYS["dict"]
        self._obs = np.zeros(0, np.float32)
        self._mask = np.zeros(0, bool)
        self._text = ""
        self._view = ""
        self._refusals = 0
        self._done = True

    @property
    def seat(self) -> int:
        """The learner's player id in the current episode."""
        return self.inner.seat

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        obs, info = self.inner.reset(seed=seed, options=options)
        self._refusals = 0
        text = self._take(obs, info, done=False)
        return text, self._info(info, -1)

    def step(self, action: str):
        if self._done:
            raise RuntimeError("step() called on a finished episode; call reset() first")
        if not isinstance(action, str):
            raise ValueError(f"the text env's action is a string (a move's id, words or JSON), got "
                             f"{type(action).__name__} {action!r}")
        try:
            a = read_answer(action, self._obs, self._mask)
        except MoveError as e:
            if self.illegal_move == "raise":
                raise
            return self._refuse(str(e))
        self._refusals = 0
        obs, reward, terminated, truncated, info = self.inner.step(a)
        text = self._take(obs, info, done=terminated or truncated)
        return text, float(reward), terminated, truncated, self._info(info, a)

    def _refuse(self, why: str):
        """A refused text: the same view with the reason, or the end after ``max_illegal_moves`` in a row."""
        self._refusals += 1
        info = {"action_mask": self.inner.action_masks().copy(), "seat": self.seat, "action": -1, "illegal_move": True,
                "illegal_moves": self._refusals}
        end = self._refusals >= self.max_illegal_moves
        note = f"Your move was refused ({self._refusals} in a row): {why}"
        if end:
            self._done = True
            note += f"\nThat is {self.max_illegal_moves} refused moves in a row: the episode is over, you lose."
        self._text = self._clip(f"{note}\n\n{self._view}")
        if self.render_mode == "human":
            self.render()
        return self._text, ILLEGAL_REWARD if end else self.illegal_reward, end, False, info

    def _take(self, obs: dict, info: dict, done: bool) -> str:
        """Remember the learner's observation and mask, and build the text the learner sees."""
        self._obs = np.asarray(obs[self._vec_key], np.float32)
        self._mask = np.asarray(info["action_mask"], bool).copy() if not done else np.zeros_like(
            np.asarray(info["action_mask"], bool))
        self._done = done
        self._view = render_view(self._obs, self._mask, over=done)
        names = ("you", "opponent") if self.seat == 0 else ("opponent", "you")
        parts = [hand_result_text(info["hand_result"], names)] if "hand_result" in info else []
        parts.append(self._view)
        self._text = self._clip("\n\n".join(parts))
        if self.render_mode == "human":
            self.render()
        return self._text

    @staticmethod
    def _clip(text: str) -> str:
        if len(text) > MAX_VIEW_CHARS:  # cannot happen with 52 cards; kept so the space holds whatever happens
            text = text[:MAX_VIEW_CHARS - 4] + "\n..."
        return text

    def _info(self, info: dict, action: int) -> dict:
        out = dict(info)
        out.update(action_mask=self.inner.action_masks().copy(), action=action, illegal_moves=0, seat=self.seat)
        return out

    def action_masks(self) -> np.ndarray:
        """(107,) bool legal action ids of the learner (the inner env's, for masked samplers)."""
        return self.inner.action_masks()

    @property
    def observation_vector(self) -> np.ndarray:
        """The (OBS_SIZE,) observation vector the current text was read from."""
        return self._obs

    def render(self) -> str | None:
        if self.render_mode is None:
            gymnasium.logger.warn("You are calling render method without specifying any render mode.")
            return None
        if self.render_mode == "human":
            print(self._text)
            return None
        return self._text

    def close(self) -> None:
        self.inner.close()
