"""Oklahoma Gin in TextArena's env API (``pip install -e ".[textarena]"`` in the checkout).

Importing this module registers, in TextArena's registry:

==========================  ===============================================================
``OklahomaGin-v0``          one game to 100 points (``episode="game"``), the default rules
``OklahomaGin-v0-hand``     one hand (``episode="hand"``)
``...-raw``                 the same without TextArena's default wrappers
==========================  ===============================================================

and TextArena's usual loop plays it::

    import textarena as ta
    import okgin_env.text.textarena  # registers the ids

    env = ta.make("OklahomaGin-v0-hand")
    env.reset(num_players=2, seed=0)
    done = False
    while not done:
        player_id, observation = env.get_observation()
        done, step_info = env.step(action=agents[player_id](observation))
    rewards, game_info = env.close()

Gin Rummy is not strictly alternating (a turn is a draw then a discard, by the same player), so
``get_observation`` names whoever is to move. Each player's board is its view
(``okgin_env.text.view.render_view``, from its own observation vector and mask: no hidden card)
with the legal moves; the move is read by ``okgin_env.text.moves.read_answer`` (an id, JSON
``{"move": ...}``, words, or the last ``[...]`` of a longer answer, so the
``ActionFormattingWrapper``'s brackets read too). A player's raw answer goes back to that player
only (an answer may reason about its own hand); both players are told the move in words ("Player 0
discarded 7h", "Player 1 drew from the stock"). A refused move is TextArena's invalid move:
``error_allowance`` refusals in a row (default 1) are answered with the reason and the board again;
one more loses the game (reward -1, the opponent +1). At the end the winner of the hand or game gets
+1 and the loser -1 (a void hand is a draw, 0 each); ``game_info[pid]`` adds the points.
"""

from __future__ import annotations

from typing import Any, Optional

import numpy as np
import textarena as ta

from okgin_env.features.hand_info import hand_info
from okgin_env.game.actions import DRAW_STOCK, KNOCK, PASS, TAKE_DISCARD, action_parts
from okgin_env.game.cards import card_text
from okgin_env.game.core import VectorGame
from okgin_env.game.rules import Rules
from okgin_env.text.env import hand_result_text
from okgin_env.text.moves import MoveError, read_answer
from okgin_env.text.view import render_view

ENV_IDS = {"OklahomaGin-v0": "game", "OklahomaGin-v0-hand": "hand"}  #: TextArena id -> episode
#: TextArena's own choice for board games: the prompt, the game's messages and the latest board
DEFAULT_WRAPPERS = [ta.wrappers.GameMessagesAndCurrentBoardObservationWrapper, ta.wrappers.ActionFormattingWrapper]

RULES_PROMPT = """\
You are {name} in a two-player game of Oklahoma Gin (Gin Rummy whose knock limit is set by the first upcard).
- 52 cards, ace low. Card text: rank A 2-9 T J Q K, then suit s h d c (7h = seven of hearts, Ts = ten of spades).
- Melds: 3 or 4 cards of one rank, or 3+ cards of one suit in sequence. Deadwood: the points of the
  cards left out of melds (ace 1, number cards their number, T J Q K 10).
- A turn: take the top card of the stock or of the discard pile, then discard a card or knock.
  A card taken from the discard pile may not be discarded in the same turn.
- Knock: end the hand when your deadwood is at most the knock limit; 0 deadwood is gin. The opponent
  lays off cards on your melds; you score the difference in deadwood (gin: +{gin} bonus), but if the
  opponent's deadwood is not higher they undercut you and score the difference +{undercut}.
- {episode}
Each turn you see your view and the legal moves. Answer with one move: its id, its words, or
JSON {{"move": id}}, e.g. [draw stock], [discard 7h], [knock], {{"move": 104}}."""


class OklahomaGinEnv(ta.Env):
    """Oklahoma Gin for two TextArena players (see the module docstring)."""

    def __init__(self, episode: str = "game", error_allowance: int = 1, **rule_options: Any) -> None:
        if episode not in ("hand", "game"):
            raise ValueError(f"episode must be 'hand' or 'game', got {episode!r}")
        self.episode = episode
        self.rules = Rules.from_dict(rule_options)
        self.error_allowance = int(error_allowance)
        self.game: VectorGame | None = None

    # ------------------------------------------------------------------ TextArena API
    def reset(self, num_players: int, seed: Optional[int] = None) -> None:
        self.state = ta.TwoPlayerState(num_players=num_players, seed=seed, error_allowance=self.error_allowance)
        self.game = VectorGame(1, self.rules, episode=self.episode, seed=seed)
        self._out = self.game.reset(seed=seed)
        self._knock_limit = int(self.game.state.knock_limit[0])
        self.state.reset(game_state={"points": [0, 0]}, player_prompt_function=self._prompt,
                         role_mapping={0: "Player 0", 1: "Player 1"})
        self.state.manually_set_current_player_id(int(self._out.current_player[0]))
        self._send_board()

    def step(self, action: str) -> tuple[bool, dict]:
        pid = self.state.current_player_id
        # the raw answer goes back to its author only: it may reason about that player's hand
        self.state.add_observation(from_id=pid, to_id=pid, message=action,
                                   observation_type=ta.ObservationType.PLAYER_ACTION)
        obs, mask = self._out.observation[0], self._out.legal_action_mask[0]
        try:
            a = read_answer(action, obs, mask)
        except MoveError as e:
            self.state.set_invalid_move(reason=str(e))
            if not self.state.done:
                self._send_board(note=f"Your move was refused: {e}")
            return self.state.step(rotate_player=False)
        self.state.add_observation(message=f"Player {pid} {self._move_words(a)}.",
                                   observation_type=ta.ObservationType.GAME_ACTION_DESCRIPTION)
        self._out = self.game.step(np.array([a], np.int64))
        if self._out.hand_over[0]:
            self._hand_over()
        if int(self._out.current_player[0]) < 0:
            self._finish()
        else:
            self.state.manually_set_current_player_id(int(self._out.current_player[0]))
            self._send_board()
        return self.state.step(rotate_player=False)

    def get_board_str(self) -> str:
        """The current player's board (TextArena's renderers call this)."""
        return self._board(self.state.current_player_id)

    # ------------------------------------------------------------------ helpers
    def _prompt(self, player_id: int, game_state: dict) -> str:
        r = self.rules
        episode = ("The game is one hand: its winner wins." if self.episode == "hand" else
                   f"Hands are played until a player's total reaches {r.target_score}: that player wins the game.")
        return RULES_PROMPT.format(name=f"Player {player_id}", gin=r.gin_bonus, undercut=r.undercut_bonus,
                                   episode=episode)

    def _board(self, pid: int) -> str:
        obs = self.game.observe(pid)[0]
        mask = self._out.legal_action_mask[0] if int(self._out.current_player[0]) == pid else np.zeros_like(
            self._out.legal_action_mask[0])
        return render_view(obs, mask, over=int(self._out.current_player[0]) < 0)

    def _send_board(self, note: str = "") -> None:
        pid = self.state.current_player_id
        board = self._board(pid)
        self.state.add_observation(to_id=pid, message=f"{note}\n\n{board}" if note else board,
                                   observation_type=ta.ObservationType.GAME_BOARD)

    def _move_words(self, action: int) -> str:
        """What both players see of a move (never the card drawn from the stock or knocked face down)."""
        kind, card = action_parts(action)
        if action == DRAW_STOCK:
            return "drew from the stock"
        if action == TAKE_DISCARD:
            return f"took {card_text(self._top())} from the discard pile"
        if action == PASS:
            return f"passed on the upcard {card_text(self._top())}"
        return "knocked" if action >= KNOCK else f"discarded {card_text(card)}"

    def _top(self) -> int:
        n = int(self.game.state.pile_size[0])
        return int(self.game.state.pile[0, n - 1]) if n else -1

    def _hand_over(self) -> None:
        info = hand_info(self._out.result, 0, knock_limit=self._knock_limit)
        self._knock_limit = int(self.game.state.knock_limit[0])
        self.state.game_state["points"] = [int(info["scores"][0]), int(info["scores"][1])]
        self.state.add_observation(message=hand_result_text(info, ("Player 0", "Player 1")),
                                   observation_type=ta.ObservationType.GAME_MESSAGE)
        self._last_hand = info

    def _finish(self) -> None:
        info = self._last_hand
        winner = int(info["winner"] if self.episode == "hand" else info["game_winner"])
        for pid in (0, 1):
            self.state.game_info[pid]["points"] = int(info["scores"][pid])
        if winner < 0:
            self.state.set_draw(reason="The hand was void: nobody scored.")
        else:
            what = "hand" if self.episode == "hand" else "game"
            self.state.set_winner(player_id=winner, reason=f"Player {winner} won the {what}, "
                                  f"{int(info['scores'][winner])} points to {int(info['scores'][1 - winner])}.")


def register_textarena() -> None:
    """Register ``ENV_IDS`` (with the default wrappers) and their ``-raw`` forms in TextArena (idempotent)."""
    from textarena.envs.registration import ENV_REGISTRY

    for env_id, episode in ENV_IDS.items():
        for suffix, wrappers in (("", DEFAULT_WRAPPERS), ("-raw", None)):
            if env_id + suffix not in ENV_REGISTRY:
                ta.register(id=env_id + suffix, entry_point=OklahomaGinEnv, default_wrappers=wrappers, episode=episode)


register_textarena()
