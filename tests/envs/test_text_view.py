"""The text interface's view and move parser: a worked deal, every legal move read back, clear
refusals, and no hidden card in any view of many random games (the web table's leak check)."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from okgin_env import (
    DRAW_STOCK,
    KNOCK,
    PASS,
    TAKE_DISCARD,
    VectorGame,
    card_text,
    parse_card,
)
from okgin_env.game.cards import cards_of, deck_from
from okgin_env.text import (
    MoveError,
    legal_moves,
    parse_move,
    read_answer,
    read_observation,
    render_view,
)

# Canonical card tokens as the view writes them (rank upper-case, suit lower-case), not inside a word.
CARD_TOKEN = re.compile(r"(?<![A-Za-z0-9])(?:10|[A2-9TJQK])[shdc](?![A-Za-z0-9])")


def card_tokens(text: str) -> set[int]:
    return {parse_card(t) for t in CARD_TOKEN.findall(text)}


def worked_deal() -> tuple[VectorGame, object]:
    """Player 0 (non-dealer) holds the spade run A-9 and Kh; the upcard Ts sets the knock limit to 10
    and completes the run, so taking it and knocking Kh face down is gin."""
    deck = deck_from("As 2s 3s 4s 5s 6s 7s 8s 9s Kh", "Ah 2h 3h 5d 6d 8c 9c Jc Qd 4h", "Ts", "Kd")
    game = VectorGame(1)
    out = game.reset(decks=np.array([deck]), dealers=np.array([1]))
    return game, out


def test_the_worked_deal_reads_as_a_table_would():
    game, out = worked_deal()
    obs, mask = out.observation[0], out.legal_action_mask[0]
    text = render_view(obs, mask)
    assert "your view, as the non-dealer" in text
    assert "Turn: yours -- the first upcard offer: take the upcard or pass." in text
    assert "melds: [As 2s 3s 4s 5s 6s 7s 8s 9s]" in text
    assert "deadwood: Kh = 10 points" in text
    assert "Discard pile: Ts upcard, 1 card." in text
    assert "Knock limit: 10" in text and "Stock: 31 cards" in text
    assert "105: take Ts (take the upcard)" in text and "106: pass (decline the upcard)" in text
    assert text.isascii()
    # the story: take the upcard, then "gin" and "knock" both choose Kh face down (0 deadwood)
    assert parse_move("take upcard", obs, mask) == TAKE_DISCARD
    out = game.step(np.array([TAKE_DISCARD]))
    obs, mask = out.observation[0], out.legal_action_mask[0]
    kh = parse_card("Kh")
    assert parse_move("gin", obs, mask) == parse_move("knock", obs, mask) == KNOCK + kh
    assert parse_move("knock Kh", obs, mask) == parse_move('{"move": "gin kh"}', obs, mask) == KNOCK + kh
    text = render_view(obs, mask)
    assert "Taken from the discard pile this turn (may not be discarded): Ts" in text
    assert f"{KNOCK + kh}: knock Kh (gin: deadwood 0, Kh face down)" in text
    with pytest.raises(MoveError, match="Ts was taken from the discard pile this turn"):
        parse_move("discard Ts", obs, mask)
    with pytest.raises(MoveError, match="knocking with As leaves deadwood 10, not gin"):
        parse_move("gin As", obs, mask)
    with pytest.raises(MoveError, match=r"deadwood 20 is above the knock limit 10"):
        parse_move("knock 9s", obs, mask)
    # the dealer sees the taken card as one the opponent is known to hold, and nothing else of its hand
    other = render_view(game.observe(1)[0], np.zeros_like(mask))
    assert "Opponent: known to hold Ts" in other and "Turn: the opponent's." in other
    assert card_tokens(other) == set(cards_of(game.state.hands[0, 1])) | {parse_card("Ts")}


def random_positions(n_games: int = 4, seed: int = 0, max_steps: int = 40):
    """(observation, mask) of the player to move at the first ``max_steps`` decisions of ``n_games`` random hands."""
    game = VectorGame(n_games, seed=seed)
    out = game.reset()
    rng = np.random.default_rng(seed)
    for _ in range(max_steps):
        if not (out.current_player >= 0).any():
            break
        live = np.flatnonzero(out.current_player >= 0)
        for i in live:
            yield out.observation[i], out.legal_action_mask[i]
        actions = np.zeros(n_games, np.int64)
        for i in live:
            actions[i] = rng.choice(np.flatnonzero(out.legal_action_mask[i]))
        out = game.step(actions)


def test_every_legal_move_reads_back_from_its_id_words_json_and_brackets():
    checked = 0
    for obs, mask in random_positions():
        moves = legal_moves(obs, mask)
        assert [m.id for m in moves] == list(np.flatnonzero(mask))
        for m in moves:
            for text in (str(m.id), m.words, m.words.upper(), f"[{m.words}]", f" {m.words}. ",
                         json.dumps({"move": m.id}), json.dumps({"move": m.words, "why": "x"}),
                         f"```json\n{json.dumps({'move': m.id})}\n```"):
                assert parse_move(text, obs, mask) == m.id, text
            assert read_answer(f"Thinking about it... I choose [{m.words}]", obs, mask) == m.id
            assert read_answer(f'My answer: {{"move": {m.id}}}', obs, mask) == m.id
            checked += 1
    assert checked > 300


@pytest.mark.parametrize("text, why", [
    ("hello", "no move id, JSON move or move words"),
    ("999", "move ids are 0-106"),
    ("-1", "move ids are 0-106"),
    ('{"move": true}', '"move" must be a move id'),
    ('{"mov": 104}', 'JSON must be an object with a "move" key'),
    ('{"move": 104', "bad JSON"),
    ("discard Zs", "'zs' is not a card (a rank A 2-9 T J Q K or 10, then a suit s h d c"),
    ("knock with the 11h", "'11h' is not a card"),
    ("pass", "pass is only for the first upcard offer"),
    ("take 2c", "the top of the discard pile is"),
    ("knock", "no knock is allowed now"),
    ("discard 7h 8h", "no move id, JSON move or move words"),
])
def test_a_refusal_says_why_and_lists_the_legal_moves(text, why):
    game, out = worked_deal()
    out = game.step(np.array([PASS]))   # non-dealer passes
    out = game.step(np.array([PASS]))   # dealer passes: the non-dealer must draw
    obs, mask = out.observation[0], out.legal_action_mask[0]
    assert list(np.flatnonzero(mask)) == [DRAW_STOCK]
    with pytest.raises(MoveError) as e:
        parse_move(text, obs, mask)
    msg = str(e.value)
    assert why in msg and "Allowed: 104 (draw stock)" in msg, msg
    assert isinstance(e.value, ValueError)


def test_a_move_for_a_player_not_to_move_is_refused_as_not_your_turn():
    game, out = worked_deal()
    obs = game.observe(1)[0]
    with pytest.raises(MoveError, match=r"not your turn.*Allowed: none"):
        parse_move("draw stock", obs, np.zeros(107, bool))
    with pytest.raises(MoveError, match="a move is text"):
        parse_move(104, out.observation[0], out.legal_action_mask[0])


@pytest.mark.slow  # about a second: the fast loop (-m 'not slow') stays under a minute
def test_no_hidden_card_in_any_view_of_many_random_games():
    """Every view of both players over 120 steps of 32 random hands and of 8 random games to 30: the cards
    named are the player's own, the discard pile's and the opponent's taken cards; never a stock card or
    one of the opponent's unseen cards. The own hand is named in full."""
    from okgin_env import Rules

    checked = 0
    for episode, n, target in (("hand", 32, 100), ("game", 8, 30)):
        game = VectorGame(n, Rules(target_score=target), episode=episode, seed=7)
        out = game.reset()
        rng = np.random.default_rng(7)
        for _ in range(120):
            if not (out.current_player >= 0).any():
                break
            s = game.state
            for p in (0, 1):
                views = game.observe(p)
                for i in np.flatnonzero(out.current_player >= 0):
                    mask = out.legal_action_mask[i] if out.current_player[i] == p else np.zeros(107, bool)
                    text = render_view(views[i], mask)
                    stock = {int(c) for c in s.deck[i, int(s.stock_next[i]):]}
                    opp_unseen = {c for c in cards_of(s.hands[i, 1 - p]) if not s.taken[i, 1 - p, c]}
                    named = card_tokens(text)
                    assert not named & (stock | opp_unseen), (named & (stock | opp_unseen), text)
                    assert set(cards_of(s.hands[i, p])) <= named
                    assert text.isascii()
                    checked += 1
            actions = np.zeros(n, np.int64)
            for i in np.flatnonzero(out.current_player >= 0):
                actions[i] = rng.choice(np.flatnonzero(out.legal_action_mask[i]))
            out = game.step(actions)
    assert checked > 3000


def test_read_observation_decodes_scores_in_game_episodes():
    from okgin_env import Rules

    game = VectorGame(1, Rules(target_score=150), episode="game", seed=1)
    out = game.reset()
    seen = read_observation(out.observation[0])
    assert seen.scores == (0, 0, 150) and seen.stock == 31 and 0 <= seen.knock_limit <= 10
    assert "Scores: you 0, opponent 0; the first to 150 wins the game." in render_view(out.observation[0],
                                                                                       out.legal_action_mask[0])
    with pytest.raises(ValueError, match="observation must have shape"):
        read_observation(np.zeros(5))
    assert card_text(seen.top) in render_view(out.observation[0], out.legal_action_mask[0])
