"""Pixel rendering: the table as an RGB picture, on the worked deal of test_render.py.

The non-dealer (player 0) holds A-2-3s 4-5-6h 9-9-9 Kc (``KNOCKER``); the best arrangement
is three melds, [9s 9d 9c] [As 2s 3s] [4h 5h 6h], and the Kc as deadwood, so the hand row
shows three underlined groups of three cards and then the king. The upcard is the 7 of
diamonds, which sets the knock limit to 7.
"""

from __future__ import annotations

import numpy as np
import pytest
from test_render import JUNK, KNOCKER, play

from okgin_env.envs.aec import env as make_env
from okgin_env.envs.aec import raw_env
from okgin_env.game.actions import DRAW_STOCK, PASS, TAKE_DISCARD, knock_action
from okgin_env.game.cards import NUM_CARDS, deck_from, parse_card, parse_cards
from okgin_env.render.rgb import (
    CARD_H,
    CARD_W,
    FONT,
    GLYPH_H,
    HEIGHT,
    WIDTH,
    card_face,
    render_rgb,
    text_mask,
)
from okgin_env.render.text import hand_result_info

HAND_X, HAND_Y = 10, 50  # where the hand row starts
STEP, GROUP_GAP = CARD_W + 4, 14
PILE_X, PILE_Y = 10, 146  # the top of the discard pile
RED = (200, 20, 30)


def hand_slots(groups: list[str]) -> dict[int, int]:
    """card -> x of its slot, for the hand drawn as these groups (melds then deadwood)."""
    x, slots = HAND_X, {}
    for group in groups:
        for c in parse_cards(group):
            slots[c] = x
            x += STEP
        x += GROUP_GAP - 4
    return slots


def card_at(img: np.ndarray, x: int, y: int) -> np.ndarray:
    return img[y:y + CARD_H, x:x + CARD_W]


def faces_in_hand_row(img: np.ndarray) -> set[int]:
    """The cards whose faces appear anywhere in the hand row."""
    faces = {card_face(c).tobytes(): c for c in range(NUM_CARDS)}
    return {faces[b] for x in range(WIDTH - CARD_W) if (b := card_at(img, x, HAND_Y).tobytes()) in faces}


@pytest.fixture
def deal():
    """The worked deal, player 0 to act on the upcard offer."""
    game, out = play(KNOCKER, JUNK, "7d", "", [])
    return game


def test_frame_shape_and_type(deal):
    img = render_rgb(deal.state, 0, deal.rules)
    assert img.shape == (HEIGHT, WIDTH, 3) and img.dtype == np.uint8
    assert HEIGHT >= 200 and WIDTH >= 200


def test_the_hand_is_drawn_card_by_card_in_its_meld_groups(deal):
    img = render_rgb(deal.state, 0, deal.rules)
    slots = hand_slots(["9s 9d 9c", "As 2s 3s", "4h 5h 6h", "Kc"])
    for card, x in slots.items():
        np.testing.assert_array_equal(card_at(img, x, HAND_Y), card_face(card), err_msg=f"card {card}")
    # nothing after the last card
    end = max(slots.values()) + CARD_W + 2
    assert (card_at(img, end, HAND_Y) == img[0, -1]).all()
    # hearts are painted red, spades are not
    assert (card_at(img, slots[parse_card("4h")], HAND_Y) == RED).all(axis=-1).any()
    assert not (card_at(img, slots[parse_card("As")], HAND_Y) == RED).all(axis=-1).any()


def test_each_player_sees_their_own_hand(deal):
    assert faces_in_hand_row(render_rgb(deal.state, 0, deal.rules)) == set(parse_cards(KNOCKER))
    assert faces_in_hand_row(render_rgb(deal.state, 1, deal.rules)) == set(parse_cards(JUNK))


def test_discard_top_is_shown(deal):
    img = render_rgb(deal.state, 0, deal.rules)
    np.testing.assert_array_equal(card_at(img, PILE_X, PILE_Y), card_face(parse_card("7d")))


def test_all_card_faces_differ():
    faces = {card_face(c).tobytes() for c in range(NUM_CARDS)}
    assert len(faces) == NUM_CARDS


def test_different_states_give_different_pictures(deal):
    before = render_rgb(deal.state, 0, deal.rules)
    deal.step(np.array([PASS]))
    after = render_rgb(deal.state, 0, deal.rules)  # now the dealer is to act: the header changes
    assert (before != after).any()
    other, _ = play(JUNK, KNOCKER, "7d", "", [])
    assert (render_rgb(other.state, 0, other.rules) != before).any()


def test_scores_and_last_hand_are_drawn_only_when_given():
    """Player 0 knocks at once: 9 deadwood was too much for the limit 7 in test_render, so here
    the upcard is a ten (limit 10) and player 0 takes it and knocks with the Kc face down."""
    game, out = play(KNOCKER, JUNK, "Td", "", [TAKE_DISCARD, knock_action(parse_card("Kc"))])
    assert out.hand_over[0]
    info = hand_result_info(out.result, 0, knock_limit=10)
    plain = render_rgb(game.state, 0, game.rules)
    shown = render_rgb(game.state, 0, game.rules, last_hand=info)
    bottom = slice(240, HEIGHT)
    assert (plain[bottom] == plain[0, -1]).all()  # only felt
    assert (shown[bottom] != plain[bottom]).any()
    with_scores = render_rgb(game.state, 0, game.rules, episode="game")
    assert (with_scores != plain).any()


def test_text_font():
    assert all(g.shape[0] == GLYPH_H for g in FONT.values())
    assert text_mask("a~").shape == text_mask("A?").shape and (text_mask("a~") == text_mask("A?")).all()
    assert text_mask("7♥", scale=2).shape == (2 * GLYPH_H, 2 * (5 + 1 + 7))


def test_bad_player_is_refused(deal):
    with pytest.raises(ValueError, match="player must be 0 or 1"):
        render_rgb(deal.state, 2, deal.rules)


@pytest.mark.parametrize("wrapped", [False, True])
def test_aec_env_renders_rgb_from_the_acting_seat(wrapped):
    make = make_env if wrapped else raw_env
    e = make(render_mode="rgb_array")
    assert "rgb_array" in e.metadata["render_modes"]
    e.reset(options={"deck": deck_from(KNOCKER, JUNK, "7d"), "dealer": 1})
    first = e.render()
    assert first.shape == (HEIGHT, WIDTH, 3) and first.dtype == np.uint8
    for card, x in hand_slots(["9s 9d 9c", "As 2s 3s", "4h 5h 6h", "Kc"]).items():
        np.testing.assert_array_equal(card_at(first, x, HAND_Y), card_face(card))
    e.step(PASS)  # now player 1 (the dealer) acts: the frame shows their hand
    assert faces_in_hand_row(e.render()) == set(parse_cards(JUNK))
    assert e.unwrapped.render_rgb(player=0).shape == first.shape


def test_aec_env_rgb_frames_through_a_whole_hand():
    """Every step of a seeded random hand renders, and a finished hand shows its result."""
    e = raw_env(render_mode="rgb_array")
    e.reset(seed=5)
    rng = np.random.default_rng(5)
    frames = 0
    while True:
        obs, _, term, trunc, _ = e.last()
        if term or trunc:
            break
        legal = np.flatnonzero(obs["action_mask"])
        knocks = legal[(legal >= 52) & (legal < DRAW_STOCK)]
        e.step(int(knocks[0]) if len(knocks) else int(legal[rng.integers(len(legal))]))
        assert e.render().shape == (HEIGHT, WIDTH, 3)
        frames += 1
    end = e.render()
    assert frames > 4 and (end[240:] != end[0, -1]).any()  # the result panel is drawn



def test_the_four_suits_have_four_inks():
    """Spades and clubs looked alike (black 7x7 glyphs): a four-colour deck tells every suit apart,
    in the big suit glyph and the rank of the card alike."""
    inks = []
    for card in parse_cards("As Ah Ad Ac"):
        face = card_face(card).reshape(-1, 3)
        colors = {tuple(px) for px in face} - {(252, 252, 248), (40, 40, 40)}  # minus the card and its edge
        assert len(colors) == 1, colors  # rank and glyph in one ink
        inks.append(colors.pop())
    assert len(set(inks)) == 4
    assert inks[1] == RED  # hearts stay red
    spade, club = card_face(parse_card("7s")), card_face(parse_card("7c"))
    assert not np.array_equal(spade, club)
