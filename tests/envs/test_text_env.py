"""The text env (Gymnasium) and the TextArena adapter: the checkers, refused moves, the same game as
the vector env underneath, no hidden card in any observation, and TextArena's own play loop."""

from __future__ import annotations

import random
import re

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import okgin_env  # noqa: F401  (registers the ids)
from okgin_env.envs.registration import TEXT_ENV_ID
from okgin_env.envs.single_agent import SingleAgentEnv
from okgin_env.game.cards import cards_of, parse_card
from okgin_env.text import MoveError, legal_moves
from okgin_env.text.env import TextEnv

CARD_TOKEN = re.compile(r"(?<![A-Za-z0-9])(?:10|[A2-9TJQK])[shdc](?![A-Za-z0-9])")
VIEW_START = "Oklahoma Gin: your view"


def test_the_registered_text_env_passes_gymnasiums_checker():
    env = gymnasium.make(TEXT_ENV_ID, opponent="simple", render_mode="ansi")
    check_env(env.unwrapped)
    text, info = env.reset(seed=3)
    assert env.observation_space.contains(text) and text.startswith(VIEW_START)
    assert env.render() == text
    assert info["action_mask"].shape == (107,)


def test_a_refused_move_costs_a_little_and_keeps_the_view_until_the_third_ends_the_episode():
    env = TextEnv(opponent="simple", seat=0)
    text, info = env.reset(seed=5)
    for k in (1, 2):
        t, r, term, trunc, i = env.step("sing a song")
        assert (r, term, trunc, i["illegal_move"], i["illegal_moves"], i["action"]) == (-0.1, False, False, True, k, -1)
        assert t.startswith(f"Your move was refused ({k} in a row): 'sing a song' is not a legal move")
        assert "Allowed: " in t and t.endswith(text)  # the same view under the note
    t, r, term, trunc, i = env.step("sing a song")
    assert (r, term, i["illegal_moves"]) == (-1.0, True, 3) and "the episode is over, you lose" in t
    with pytest.raises(RuntimeError, match="call reset"):
        env.step("draw stock")
    # a legal move after refusals resets the count
    text, info = env.reset(seed=5)
    env.step("junk")
    first = legal_moves(env.observation_vector, info["action_mask"])[0]
    t, r, term, trunc, i = env.step(first.words)
    assert i["illegal_moves"] == 0 and i["action"] == first.id


def test_raise_mode_raises_a_move_error_and_leaves_the_game_as_it_was():
    env = TextEnv(opponent="random", seat=1, illegal_move="raise")
    text, _ = env.reset(seed=2)
    with pytest.raises(MoveError, match="Allowed:"):
        env.step("discard the joker")
    with pytest.raises(ValueError, match="action is a string"):
        env.step(104)
    assert env.step(legal_moves(env.observation_vector, env.action_masks())[0].words)[0] != text


@pytest.mark.parametrize("bad, match", [
    ({"obs_format": "vector"}, "the text env sets obs_format"),
    ({"illegal_move": "ignore"}, "illegal_move must be one of"),
    ({"max_illegal_moves": 0}, "max_illegal_moves must be an integer >= 1"),
    ({"illegal_reward": float("nan")}, "illegal_reward must be a finite number"),
])
def test_bad_options_say_what_is_allowed(bad, match):
    with pytest.raises(ValueError, match=match):
        TextEnv(**bad)


def test_the_text_env_plays_the_same_game_as_the_single_agent_env():
    """The same seeds and moves (given as words) give the same rewards and ends as the vector env by ids."""
    for seed in range(6):
        text_env = TextEnv(opponent="simple", episode="game", target_score=40)
        ids_env = SingleAgentEnv(opponent="simple", episode="game", target_score=40)
        t, info = text_env.reset(seed=seed)
        o, info2 = ids_env.reset(seed=seed)
        rng = np.random.default_rng(seed)
        done = False
        while not done:
            assert np.array_equal(info["action_mask"], info2["action_mask"])
            moves = legal_moves(text_env.observation_vector, info["action_mask"])
            move = moves[rng.integers(len(moves))]
            t, r, term, trunc, info = text_env.step(move.words)
            o, r2, term2, trunc2, info2 = ids_env.step(move.id)
            assert (r, term, trunc) == (r2, term2, trunc2)
            done = term or trunc
        assert "Turn: none, the episode is over." in t


def test_no_hidden_card_in_any_text_observation():
    """Over whole games against simple, every observation's view names no stock card and no unseen card
    of the opponent; a hand's result before it shows the showdown of the hand that ended (public)."""
    env = TextEnv(opponent="simple", episode="game", target_score=60)
    checked = 0
    for seed in range(3):
        text, info = env.reset(seed=seed)
        rng = np.random.default_rng(seed)
        done = False
        while True:
            s, p = env.inner.game.state, env.seat
            view = text[text.index(VIEW_START):]
            if "Hand over" not in text:
                assert view == text
            if not done:
                stock = {int(c) for c in s.deck[0, int(s.stock_next[0]):]}
                unseen = {c for c in cards_of(s.hands[0, 1 - p]) if not s.taken[0, 1 - p, c]}
                named = {parse_card(x) for x in CARD_TOKEN.findall(view)}
                assert not named & (stock | unseen), text
                assert text.isascii()
                checked += 1
            if done:
                break
            moves = legal_moves(env.observation_vector, info["action_mask"])
            text, r, term, trunc, info = env.step(moves[rng.integers(len(moves))].words)
            done = term or trunc
    assert checked > 100


# ----------------------------------------------------------------------------- TextArena

ta = pytest.importorskip("textarena")
import okgin_env.text.textarena as okgin_ta  # noqa: E402  (registers the ids with TextArena)


class ScriptedPlayer(ta.Agent):
    """A TextArena agent that reads the legal moves from its observation text and answers in one of
    the accepted forms: it knocks when it may, else discards to the least deadwood, else draws or
    passes at random (a player that ends hands, so a game to 30 is short)."""

    def __init__(self, seed: int) -> None:
        self.rng, self.seen = random.Random(seed), []

    def __call__(self, observation: str) -> str:
        self.seen.append(observation)
        board = observation.rsplit("Legal moves", 1)[-1]
        moves = re.findall(r"^  (\d+): (\S+(?: \S+)?)(?: \((?:.*?deadwood (?:left )?(\d+))?.*\))?$", board, re.M)
        assert moves, observation
        knocks = [m for m in moves if m[1].startswith("knock")]
        discards = [m for m in moves if m[1].startswith("discard")]
        options = knocks or discards
        mid, words, _ = min(options, key=lambda m: int(m[2] or 99)) if options else self.rng.choice(moves)
        return self.rng.choice([mid, words, f"[{words}]", '{"move": %s}' % mid, f"I will play [{words}]"])


@pytest.mark.parametrize("env_id", ["OklahomaGin-v0-hand", "OklahomaGin-v0"])
def test_textarenas_own_play_loop_plays_a_whole_episode(env_id):
    agents = {0: ScriptedPlayer(0), 1: ScriptedPlayer(1)}
    env = ta.make(env_id=env_id, target_score=30)
    env.reset(num_players=len(agents), seed=4)
    done, steps = False, 0
    while not done:
        player_id, observation = env.get_observation()
        action = agents[player_id](observation)
        done, step_info = env.step(action=action)
        steps += 1
    rewards, game_info = env.close()
    assert steps > 4 and sorted(rewards) == [0, 1]
    assert sum(rewards.values()) == 0 and set(rewards.values()) <= {-1, 0, 1}
    assert not any(game_info[p]["invalid_move"] for p in (0, 1))
    assert all("points" in game_info[p] for p in (0, 1))
    if rewards[0]:
        winner = max(rewards, key=rewards.get)
        assert game_info[winner]["points"] > game_info[1 - winner]["points"]
    if env_id == "OklahomaGin-v0":
        assert max(game_info[p]["points"] for p in (0, 1)) >= 30
    board = agents[0].seen[-1]
    assert "You are Player 0 in a two-player game of Oklahoma Gin" in board and "Legal moves" in board


def test_textarena_invalid_moves_get_the_reason_then_lose_the_game():
    env = ta.make(env_id="OklahomaGin-v0-hand")
    env.reset(num_players=2, seed=1)
    pid, _ = env.get_observation()
    done, _ = env.step(action="no idea")
    assert not done
    pid2, observation = env.get_observation()
    assert pid2 == pid and "Your move was refused: '[no idea]' is not a legal move" in observation
    done, _ = env.step(action="still no idea")
    rewards, game_info = env.close()
    assert done and rewards == {pid: -1, 1 - pid: 1} and game_info[pid]["invalid_move"]


def test_textarena_answers_stay_with_their_author():
    """A player's raw answer (which may reason about its hand) is not shown to the opponent: only the
    move in words is."""
    env = ta.make(env_id="OklahomaGin-v0-hand-raw")
    env.reset(num_players=2, seed=2)
    pid, _ = env.get_observation()
    secret = "my hand is full of secrets"
    answer = f"{secret} [{'pass' if 'pass' in env.get_board_str() else 'draw stock'}]"
    env.step(action=answer)
    other, messages = env.get_observation()
    assert other == 1 - pid
    texts = " ".join(m[1] for m in messages)
    assert secret not in texts and f"Player {pid} " in texts
    assert okgin_ta.ENV_IDS["OklahomaGin-v0"] == "game"


def test_no_hidden_card_in_any_textarena_message_before_a_showdown():
    """Every message a player receives in a game to 30 (boards, moves in words), checked when it reaches
    the player: it names no stock card and no unseen card of the opponent (a finished hand's showdown,
    which lays both hands open, and the messages of that hand before it are left out)."""
    env = ta.make(env_id="OklahomaGin-v0-raw", target_score=30)
    env.reset(num_players=2, seed=6)
    players = {0: ScriptedPlayer(0), 1: ScriptedPlayer(1)}
    done, checked = False, 0
    while not done:
        pid, messages = env.get_observation()
        s = env.game.state
        stock = {int(c) for c in s.deck[0, int(s.stock_next[0]):]}
        unseen = {c for c in cards_of(s.hands[0, 1 - pid]) if not s.taken[0, 1 - pid, c]}
        ended = [k for k, m in enumerate(messages) if m[1].startswith("Hand over")]
        for _, text, kind in messages[ended[-1] + 1 if ended else 0:]:  # before a showdown: the finished hand
            if kind != ta.ObservationType.PROMPT:  # the prompt's examples name 7h and Ts
                named = {parse_card(x) for x in CARD_TOKEN.findall(text)}
                assert not named & (stock | unseen), text
                checked += 1
        board = [m[1] for m in messages if m[2] == ta.ObservationType.GAME_BOARD][-1]
        done, _ = env.step(action=players[pid](board))
    assert checked > 50
