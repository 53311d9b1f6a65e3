"""Cards (docs/RULES.md "Cards"): index, text, points, parsing, and the test-deck builder
``deck_from`` (docs/RULES.md "Replaying a deal")."""

from __future__ import annotations

import numpy as np
import pytest

from okgin_env.game.cards import (
    CARD_POINTS,
    CARD_RANK,
    CARD_SUIT,
    NUM_CARDS,
    card_index,
    card_points,
    card_pretty,
    card_text,
    cards_of,
    deck_from,
    format_cards,
    mask_of,
    parse_card,
    parse_cards,
    parse_deck,
    sort_cards,
)


@pytest.mark.parametrize(
    "text,index",
    [
        ("As", 0), ("2s", 1), ("Ks", 12), ("Ah", 13), ("Th", 22), ("Ad", 26), ("Kc", 51),
        ("10h", 22), ("TH", 22), ("AS", 0), ("KC", 51), ("10D", 35),
    ],
)
def test_parse_card(text, index):
    assert parse_card(text) == index


@pytest.mark.parametrize(
    "bad", ["", "A", "1s", "11h", "10", "Ax", "Zs", "As2", "0s", "T", "A♠", "♠A", "s A", None, 5]
)
def test_parse_card_rejects_bad_text(bad):
    with pytest.raises(ValueError):
        parse_card(bad)


@pytest.mark.parametrize("bad", ["as", "th", "kc", "jD"])
def test_parse_card_rejects_lowercase_rank(bad):
    # docs/RULES.md "Cards": rank chars are A23456789TJQK; parsers "may also accept upper-case
    # suits and 10 for T; anything else is an error" -- a lower-case rank letter is not allowed.
    with pytest.raises(ValueError):
        parse_card(bad)


def test_card_text_roundtrip_and_index_formula():
    for suit, sc in enumerate("shdc"):
        for rank, rc in enumerate("A23456789TJQK"):
            idx = suit * 13 + rank
            assert card_index(rank, suit) == idx
            assert card_text(idx) == rc + sc
            assert parse_card(rc + sc) == idx
            assert CARD_RANK[idx] == rank and CARD_SUIT[idx] == suit


def test_card_points():
    assert [card_points(parse_card(t)) for t in "As 2h 9d Tc Js Qh Kd".split()] == [1, 2, 9, 10, 10, 10, 10]
    assert int(CARD_POINTS.sum()) == 4 * (1 + 2 + 3 + 4 + 5 + 6 + 7 + 8 + 9 + 10 * 4)


def test_parse_and_format_cards():
    assert parse_cards("As 2s 3s") == [0, 1, 2]
    assert parse_cards("As,2s, 10h") == [0, 1, 22]
    assert parse_cards(["Kc", "TH"]) == [51, 22]
    assert format_cards([0, 22, 51]) == "As Th Kc"
    assert format_cards([0, 22, 51], pretty=True) == "A♠ 10♥ K♣"
    assert card_pretty(parse_card("Qd")) == "Q♦"
    assert sort_cards(parse_cards("Kc 2h As")) == [0, 14, 51]
    with pytest.raises(ValueError):
        parse_cards("As 2s 3x")


def test_mask_roundtrip():
    hand = parse_cards("As Th Kc 7d")
    m = mask_of(hand)
    assert m.shape == (NUM_CARDS,) and m.dtype == bool and int(m.sum()) == 4
    assert cards_of(m) == sorted(hand)


def test_parse_deck():
    deck = list(range(51, -1, -1))
    np.testing.assert_array_equal(parse_deck(deck), np.array(deck, dtype=np.int8))
    np.testing.assert_array_equal(parse_deck([card_text(c) for c in deck]), np.array(deck, dtype=np.int8))
    with pytest.raises(ValueError, match="52"):
        parse_deck(deck[:51])
    with pytest.raises(ValueError, match="(?i)duplicate"):
        parse_deck(deck[:51] + [deck[0]])
    with pytest.raises(ValueError, match="(?i)unknown|0-51"):
        parse_deck(deck[:51] + [52])
    with pytest.raises(ValueError, match="(?i)bad card"):
        parse_deck([card_text(c) for c in deck[:51]] + ["Xx"])




# ---------------------------------------------------------------------------
# deck_from: the deck order that deals given hands (the deal contract)
# ---------------------------------------------------------------------------
NONDEALER = "As 2s 3s 4h 5h 6h 9c 9d 9s Kc"
DEALER = "Kh Qd Js Tc 8d 6s 5c 4d 3c 2h"


def test_deck_from_follows_the_deal_contract():
    # deck[0], deck[2], ..., deck[18]: the non-dealer's ten, in the order given; deck[1],
    # deck[3], ..., deck[19]: the dealer's; deck[20] the upcard; deck[21:] the stock.
    deck = deck_from(NONDEALER, DEALER, "7h", "8h 2d")
    assert sorted(deck) == list(range(NUM_CARDS))
    assert deck[0:20:2] == parse_cards(NONDEALER) and deck[1:20:2] == parse_cards(DEALER)
    assert deck[20] == parse_card("7h") and deck[21:23] == parse_cards("8h 2d")
    named = set(parse_cards(f"{NONDEALER} {DEALER} 7h 8h 2d"))
    assert deck[23:] == [c for c in range(NUM_CARDS) if c not in named]  # the rest in index order
    np.testing.assert_array_equal(parse_deck(deck), np.array(deck, dtype=np.int8))  # a valid replay deck


def test_deck_from_accepts_lists_of_texts_or_indices():
    deck = deck_from(NONDEALER, DEALER, "7h", ["8h"])
    assert deck_from(NONDEALER.split(), parse_cards(DEALER), parse_card("7h"), [parse_card("8h")]) == deck


def test_deck_from_fills_unnamed_cards_in_index_order():
    # None hands take the lowest unused cards (non-dealer first); a None in the stock takes
    # the lowest card still unused after that, so "2d" lands exactly at deck[49].
    deck = deck_from(None, None, "7h", [None] * 28 + ["2d"])
    assert sorted(deck) == list(range(NUM_CARDS))
    assert deck[0:20:2] == parse_cards("As 2s 3s 4s 5s 6s 7s 8s 9s Ts")
    assert deck[1:20:2] == parse_cards("Js Qs Ks Ah 2h 3h 4h 5h 6h 8h")  # 7h is the upcard
    assert deck[20] == parse_card("7h")
    assert deck[21:49] == [c for c in range(21, 50) if c != parse_card("2d")]  # 9h .. Jc, 2d left out
    assert deck[49] == parse_card("2d") and deck[50:] == parse_cards("Qc Kc")


@pytest.mark.parametrize(
    "args,match",
    [
        ((NONDEALER, DEALER, "Kc"), "Kc is named twice"),  # the upcard is in a hand
        ((NONDEALER, NONDEALER, "7h"), "named twice"),
        ((NONDEALER, DEALER, "7h", "8h 8h"), "8h is named twice"),
        ((NONDEALER + " 7c", DEALER, "7h"), "non-dealer's hand must be 10 cards or None, got 11"),
        ((NONDEALER, "Kh", "7h"), "dealer's hand must be 10 cards or None, got 1"),
        ((None, None, "7h", [None] * 32), "stock holds 31 cards, got 32"),
        ((NONDEALER, DEALER, "7x"), "bad card '7x'"),
    ],
)
def test_deck_from_rejects_impossible_deals(args, match):
    with pytest.raises(ValueError, match=match):
        deck_from(*args)


def test_display_form_is_as_printed_and_reads_back():
    from okgin_env.game.cards import card_pretty

    assert [card_pretty(c) for c in (0, 9, 22, 51)] == ["A♠", "10♠", "10♥", "K♣"]
    # the terminal and the web page accept what they print: '10♥' -> '10h'
    from okgin.human_table import _card
    assert all(_card(card_pretty(c)) == c for c in range(52))


def test_action_parts_decodes_every_action_once():
    from okgin_env.game.actions import (
        DRAW_STOCK,
        NUM_ACTIONS,
        PASS,
        TAKE_DISCARD,
        action_parts,
        action_text,
        discard_action,
        knock_action,
    )

    for c in range(52):
        assert action_parts(discard_action(c)) == ("discard", c)
        assert action_parts(knock_action(c)) == ("knock", c)
    assert [action_parts(a) for a in (DRAW_STOCK, TAKE_DISCARD, PASS)] == [("draw", None), ("take", None), ("pass", None)]
    assert action_text(knock_action(22)) == "knock Th" and action_text(NUM_ACTIONS) == f"invalid action {NUM_ACTIONS}"
    for bad in (-1, NUM_ACTIONS):
        with pytest.raises(ValueError, match="0-106"):
            action_parts(bad)
