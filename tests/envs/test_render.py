"""Text rendering: a player's view and hand results, on the worked examples of test_rules.py.

The knocker's hand in most examples is A-2-3s 4-5-6h 9-9-9 Kc (``KNOCKER``); the scores
in the expected score lines follow docs/RULES.md ("Showdown").
"""

from __future__ import annotations

import numpy as np
import pytest

import okgin_env
from okgin_env import SingleAgentEnv, VectorGame
from okgin_env.game.actions import (
    DRAW_STOCK,
    PASS,
    TAKE_DISCARD,
    discard_action,
    knock_action,
)
from okgin_env.game.cards import deck_from, parse_card
from okgin_env.game.rules import Rules
from okgin_env.render.text import (
    LastAction,
    card_str,
    hand_result_info,
    knock_limit_words,
    record_action,
    render_hand_result,
    render_player_view,
    score_line,
)

KNOCKER = "As 2s 3s 4h 5h 6h 9c 9d 9s Kc"
JUNK = "Kh Qd Js Tc 8d 6s 5c 4d 3c 2h"
RED, RESET = "\x1b[31m", "\x1b[0m"


def play(nondealer, dealer, upcard, stock, actions, rules=None):
    """VectorGame(1) with player 1 dealing; returns (game, last StepOutput)."""
    game = VectorGame(1, rules or Rules())
    out = game.reset(decks=deck_from(nondealer, dealer, upcard, stock), dealers=1)
    for a in actions:
        out = game.step(np.array([a]))
    return game, out


def knock(card: str) -> int:
    return knock_action(parse_card(card))


# ------------------------------------------------------------------------ hand results

RESULT_ROWS = [
    # (id, dealer's hand, upcard, stock, actions, rules, expected score line, other expected text)
    ("knock-with-layoffs", "Ks Kh Kd Qs Qh Qd 3h 7h 5c 8d", "7c", "2d", [PASS, PASS, DRAW_STOCK, knock("Kc")], None,
     # K = 2d; 3h and 7h lay off on 4-5-6h, D = 5c + 8d = 13: 13 - 2 = 11
     "11 points to player_0 = deadwood difference 13 - 2.", "[4♥ 5♥ 6♥ + 3♥ 7♥]"),
    ("gin", "4s 8h 9h Ks Kh Kd Qc Jc Tc 2d", "7h", "", [TAKE_DISCARD, knock("Kc")], None,
     # gin: no lay-offs, D = 4 + 8 + 9 + 2 = 23, plus the gin bonus 25
     "48 points to player_0 = player_1's deadwood 23 + gin bonus 25.", "player_0 went gin (K♣ face down)"),
    ("undercut", "Ks Kh Kd Qs Qh Qd Js Jh Jd 5c", "7d", "", [TAKE_DISCARD, knock("Kc")], None,
     # K = 7d = 7, D = 5c = 5 <= K: the defender scores 7 - 5 + 10
     "12 points to player_1 = undercut: deadwood difference 7 - 5 = 2 + undercut bonus 10.",
     "player_0 knocked with 7 deadwood, knock limit 7 (K♣ face down)"),
    ("spade-double", JUNK, "7s", "2d", [PASS, PASS, DRAW_STOCK, knock("Kc")],
     Rules(spade_double=True, knock_limit=10),
     "132 points to player_0 = (deadwood difference 68 - 2) x 2 (spade upcard 7♠).",
     "Totals: player_0 132, player_1 0."),
    ("void-turn-cap", JUNK, "7c", "2d", [PASS, PASS, DRAW_STOCK, discard_action(parse_card("Kc"))],
     Rules(max_turns_per_hand=1),
     "Void hand (the turn cap was reached): no score.", "[A♠ 2♠ 3♠]"),
]


@pytest.mark.parametrize("dealer,upcard,stock,actions,rules,line,text", [r[1:] for r in RESULT_ROWS],
                         ids=[r[0] for r in RESULT_ROWS])
def test_hand_result_rendering(dealer, upcard, stock, actions, rules, line, text):
    game, out = play(KNOCKER, dealer, upcard, stock, actions, rules)
    assert out.hand_over[0]
    info = hand_result_info(out.result, 0, knock_limit=int(game.state.knock_limit[0]))
    assert score_line(info) == line
    rendered = render_hand_result(info)
    assert line in rendered and text in rendered
    assert RED not in rendered
    colored = render_hand_result(info, color=True)
    assert f"{RED}4♥{RESET}" in colored or f"{RED}2♥{RESET}" in colored or f"{RED}8♥{RESET}" in colored
    assert f"{RED}" not in card_str(parse_card("As"), color=True)


def test_hand_result_info_layoffs_and_melds():
    game, out = play(KNOCKER, "Ks Kh Kd Qs Qh Qd 3h 7h 5c 8d", "7c", "2d", [PASS, PASS, DRAW_STOCK, knock("Kc")])
    info = hand_result_info(out.result, 0)
    assert info["knocker"] == 0 and info["winner"] == 0 and info["knock_card"] == "Kc"
    assert sorted(map(sorted, info["melds"][0])) == sorted(map(sorted, [["As", "2s", "3s"], ["4h", "5h", "6h"],
                                                                        ["9s", "9d", "9c"]]))
    assert sorted(map(sorted, info["melds"][1])) == sorted(map(sorted, [["Ks", "Kh", "Kd"], ["Qs", "Qh", "Qd"]]))
    assert info["layoffs"] == [{"card": "3h", "onto": ["4h", "5h", "6h"]}, {"card": "7h", "onto": ["4h", "5h", "6h"]}]
    assert info["deadwood_cards"] == [["2d"], ["8d", "5c"]] and info["deadwood"] == [2, 13]
    assert "3h" in info["hands"][1] and "Kc" not in info["hands"][0]


# ------------------------------------------------------------------------- player view

def test_player_view_groups_melds_and_shows_the_table():
    game, out = play(KNOCKER, JUNK, "7h", "", [])
    text = render_player_view(game.state, 0)
    assert "View of player_0 -- player_0 to act: take the upcard or pass" in text
    assert "Hand (10, non-dealer): A♠ 2♠ 3♠ 4♥ 5♥ 6♥ 9♦ 9♣ 9♠ K♣" not in text  # sorted by suit, then rank
    assert "Hand (10, non-dealer): A♠ 2♠ 3♠ 9♠ 4♥ 5♥ 6♥ 9♦ 9♣ K♣" in text
    assert "[A♠ 2♠ 3♠]" in text and "[4♥ 5♥ 6♥]" in text and "[9♠ 9♦ 9♣]" in text
    assert "Deadwood:  K♣ = 10" in text
    assert "Discard pile: 7♥ on top (1 card)   Stock: 31 cards" in text
    assert "Knock limit: 7 (from the upcard 7♥)" in text
    assert "Last actions: (none yet)" in text
    game.step(np.array([TAKE_DISCARD]))
    text = render_player_view(game.state, 0, last_actions=[LastAction(TAKE_DISCARD, parse_card("7h")), None])
    assert "Taken from the pile this turn (may not be discarded): 7♥" in text
    assert "Last actions: player_0 took 7♥" in text
    other = render_player_view(game.state, 1, names=("opp", "me"))
    assert "View of me -- opp to act" in other and "Hand (10, dealer)" in other


def test_player_view_in_game_episodes_shows_scores():
    game = VectorGame(1, Rules(target_score=150), episode="game", seed=0)
    game.reset()
    text = render_player_view(game.state, 1, game.rules, episode="game")
    assert "Scores: player_1 0, player_0 0 (target 150)" in text


@pytest.mark.parametrize("upcard,rules,words", [
    ("7h", Rules(), "7 (from the upcard 7♥)"),
    ("Ac", Rules(), "0 (from the upcard A♣: gin only)"),
    ("Qs", Rules(), "10 (from the upcard Q♠)"),
    ("7h", Rules(knock_limit=10), "10 (fixed by the rules)"),
])
def test_knock_limit_words(upcard, rules, words):
    game, _ = play(KNOCKER, JUNK, upcard, "", [], rules)
    assert knock_limit_words(game.state, rules) == words


def test_last_action_words():
    game, _ = play(KNOCKER, JUNK, "7h", "", [])
    s = game.state
    assert record_action(s, 0, TAKE_DISCARD).words() == "took 7♥"
    assert record_action(s, 0, PASS).words() == "passed on 7♥"
    assert record_action(s, 0, DRAW_STOCK).words() == "drew from stock"
    assert record_action(s, 0, discard_action(parse_card("Ks"))).words() == "discarded K♠"
    assert record_action(s, 0, knock("Kc")).words() == "knocked"
    assert record_action(s, 0, knock("Kc")).words(own=True) == "knocked (K♣ face down)"
    assert record_action(s, 0, TAKE_DISCARD).words(color=True) == f"took {RED}7♥{RESET}"


# ------------------------------------------------------------------- through the envs

def test_aec_render_modes(capsys):
    deck = deck_from(KNOCKER, "4s 8h 9h Ks Kh Kd Qc Jc Tc 2d", "7h")
    e = okgin_env.env(render_mode="ansi")
    e.reset(options={"deck": deck, "dealer": 1})
    e.step(TAKE_DISCARD)
    text = e.render()
    assert "player_0 to act: discard a card, or knock" in text and "player_0 took 7♥" in text
    e.step(knock("Kc"))
    text = e.render()
    assert "player_0 went gin" in text and "48 points to player_0" in text
    h = okgin_env.env(render_mode="human")
    h.reset(seed=0)
    assert h.render() is None and "Knock limit" in capsys.readouterr().out
    quiet = okgin_env.raw_env()
    quiet.reset(seed=0)
    with pytest.warns(UserWarning, match="without specifying any render mode"):
        assert quiet.render() is None


def test_single_agent_render_names_the_learner():
    env = SingleAgentEnv(opponent="random", seat=0, render_mode="ansi")
    env.reset(seed=0, options={"deck": deck_from(KNOCKER, JUNK, "7h"), "dealer": 1})
    text = env.render()
    assert "View of you -- you to act" in text
    env.step(TAKE_DISCARD)
    env.step(knock("Kc"))
    text = env.render()
    # A-2-3s 4-5-6-7h 9-9-9 is gin; the opponent's junk has 68 deadwood: 68 + 25
    assert "93 points to you = opponent's deadwood 68 + gin bonus 25." in text and "you (knocker)" in text


def test_score_line_says_your_deadwood_of_a_person():
    gin = {"void": False, "turn_cap": False, "winner": 1, "knocker": 1, "points": [0, 50], "spade_doubled": False,
           "deadwood": [25, 0], "gin": True, "undercut": False, "upcard": "7h"}
    assert score_line(gin, ("You", "expert")) == "50 points to expert = Your deadwood 25 + gin bonus 25."
    assert score_line(gin, ("player_0", "player_1")) == "50 points to player_1 = player_0's deadwood 25 + gin bonus 25."
