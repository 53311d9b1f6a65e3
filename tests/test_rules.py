"""Worked examples, one (or a table of rows) for every rule of RULES.md.

Each test deals a hand-built deck (``okgin_env.cards.deck_from``: non-dealer's ten, dealer's ten, the
upcard, the first stock cards; the rest of the deck is filled with the unused cards in
index order), plays scripted actions on ``VectorGame(1, ...)`` and asserts the outcome.
Every expected number was worked out by hand from RULES.md; the arithmetic is in the
comments.

Player ids are agent ids: ``dealer_id`` says which of 0/1 deals; the other one is the
non-dealer and moves first.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from okgin_env import VectorGame
from okgin_env import melds
from okgin_env.actions import DRAW_STOCK as DRAW
from okgin_env.actions import NUM_ACTIONS, PASS, discard_action, knock_action
from okgin_env.actions import TAKE_DISCARD as TAKE
from okgin_env.cards import card_text, cards_of, deck_from, parse_card, parse_cards
from okgin_env.core import Phase
from okgin_env.rules import Rules


# ---------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------
def disc(card: str) -> int:
    """Action: discard ``card``."""
    return discard_action(parse_card(card))


def knock(card: str) -> int:
    """Action: knock, discarding ``card`` face down."""
    return knock_action(parse_card(card))


class Table:
    """One scripted game: ``VectorGame(1, rules, episode=...)`` reset to a hand-built deck."""

    def __init__(self, nondealer, dealer, upcard, stock=(), *, dealer_id=1, rules=None, episode="hand", seed=0):
        self.rules = rules if rules is not None else Rules()
        self.deck = deck_from(nondealer, dealer, upcard, stock)
        self.dealer, self.nondealer = dealer_id, 1 - dealer_id
        self.game = VectorGame(1, self.rules, episode=episode, seed=seed)
        self.out = self.game.reset(decks=[self.deck], dealers=[dealer_id])

    def step(self, *actions: int):
        for a in actions:
            self.out = self.game.step(np.array([a]))
        return self.out

    @property
    def state(self):
        return self.game.state

    def legal(self) -> set[int]:
        mask = np.asarray(self.out.legal_action_mask)
        assert mask.shape == (1, NUM_ACTIONS)
        return {int(a) for a in np.flatnonzero(mask[0])}

    def legal_discards(self) -> set[str]:
        return {card_text(a) for a in self.legal() if a < 52}

    def legal_knocks(self) -> set[str]:
        return {card_text(a - 52) for a in self.legal() if 52 <= a < 104}

    def player(self) -> int:
        return int(self.out.current_player[0])

    def phase(self) -> int:
        return int(self.state.phase[0])

    def hand(self, p: int) -> set[int]:
        return set(cards_of(self.state.hands[0, p]))

    def stock_size(self) -> int:
        return 52 - int(self.state.stock_next[0])

    def r(self, field: str):
        """Row 0 of a HandResult field."""
        return np.asarray(getattr(self.out.result, field))[0]

    def flags(self) -> tuple[bool, bool, bool]:
        o = self.out
        return bool(o.hand_over[0]), bool(o.terminated[0]), bool(o.truncated[0])

    def rewards(self) -> list[float]:
        return np.asarray(self.out.rewards)[0].tolist()

    def draw_and_discard_drawn(self, turns: int) -> None:
        """``turns`` plain turns: draw the top of the stock, discard the card drawn."""
        for _ in range(turns):
            p = self.player()
            before = self.hand(p)
            self.step(DRAW)
            (drawn,) = self.hand(p) - before
            self.step(discard_action(drawn))


def by_player(t: Table, nondealer_value, dealer_value) -> list:
    """A per-player pair from per-seat values."""
    pair = [None, None]
    pair[t.nondealer], pair[t.dealer] = nondealer_value, dealer_value
    return pair


# Recurring hands. Knocker melds: A-2-3s, 4-5-6h, 9c 9d 9s; Kc is the deadwood to shed.
KNOCKER = "As 2s 3s 4h 5h 6h 9c 9d 9s Kc"
# No meld, and nothing that lays off on A-2-3s / 4-5-6h / 9-9-9 (no 4s, 3h, 7h, 9h):
# 10+10+10+10+8+6+5+4+3+2 = 68.
JUNK = "Kh Qd Js Tc 8d 6s 5c 4d 3c 2h"
# Three sets (K K K, Q Q Q, J J J) and 5c: deadwood 5, no lay-offs on the knocker's melds.
SETS5 = "Ks Kh Kd Qs Qh Qd Js Jh Jd 5c"


def knock_win_table(dealer_id=1, rules=None, episode="hand") -> Table:
    """The non-dealer takes the upcard 7h (knock limit 7): A-2-3s, 5-6-7h, 9-9-9, 2d, Kc.
    Knocking with Kc leaves K = 2 (2d). The dealer's junk (no 4s 4h 8h 9h) has D = 68:
    the non-dealer scores 68 - 2 = 66."""
    t = Table("As 2s 3s 5h 6h 9c 9d 9s 2d Kc", "Kh Qd Js Tc 8d 6s 5c 4d 3h 2c", "7h",
              dealer_id=dealer_id, rules=rules, episode=episode)
    t.step(TAKE, knock("Kc"))
    return t


def undercut_table(dealer_id=1, rules=None, episode="hand") -> Table:
    """The non-dealer takes the upcard 7d (limit 7) and knocks with Kc: K = 7 (7d). The
    dealer holds three sets and 5c, D = 5 <= K: undercut, the dealer scores 7 - 5 + 10 = 12."""
    t = Table(KNOCKER, SETS5, "7d", dealer_id=dealer_id, rules=rules, episode=episode)
    t.step(TAKE, knock("Kc"))
    return t


# ---------------------------------------------------------------------------
# Deal
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("dealer_id", [0, 1])
def test_deal_follows_the_deck_order(dealer_id):
    # deck[0], deck[2], ... go to the non-dealer; deck[1], deck[3], ... to the dealer;
    # deck[20] is the upcard, deck[21] the top of the stock; 31 cards in the stock.
    t = Table(KNOCKER, JUNK, "7c", ["8h"], dealer_id=dealer_id)
    assert t.hand(t.nondealer) == set(parse_cards(KNOCKER))
    assert t.hand(t.dealer) == set(parse_cards(JUNK))
    assert int(t.state.pile_size[0]) == 1 and int(t.state.pile[0, 0]) == parse_card("7c")
    assert t.stock_size() == 31
    assert int(t.state.dealer[0]) == dealer_id
    np.testing.assert_array_equal(np.asarray(t.state.deck[0]), np.array(t.deck, dtype=np.int8))
    t.step(PASS, PASS, DRAW)
    assert parse_card("8h") in t.hand(t.nondealer)


def test_deck_may_be_given_as_card_texts():
    deck = deck_from(KNOCKER, JUNK, "7c")
    g = VectorGame(1, Rules())
    g.reset(decks=[[card_text(c) for c in deck]], dealers=[1])
    np.testing.assert_array_equal(np.asarray(g.state.deck[0]), np.array(deck, dtype=np.int8))


@pytest.mark.parametrize(
    "upcard,limit",
    [("As", 0), ("Ah", 0), ("2d", 2), ("5c", 5), ("9h", 9), ("Ts", 10), ("Jd", 10), ("Qc", 10), ("Kh", 10)],
)
def test_knock_limit_is_the_upcards_knock_value(upcard, limit):
    t = Table(None, None, upcard)
    assert int(t.state.knock_limit[0]) == limit


# ---------------------------------------------------------------------------
# First upcard offer
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("dealer_id", [0, 1])
def test_offer_nondealer_takes(dealer_id):
    # The non-dealer may take the upcard or pass: nothing else. They take 7h, so they
    # must discard (not 7h); then it is the dealer's ordinary turn.
    t = Table(KNOCKER, JUNK, "7h", dealer_id=dealer_id)
    assert t.phase() == Phase.OFFER_NONDEALER and t.player() == t.nondealer
    assert t.legal() == {TAKE, PASS}
    t.step(TAKE)
    assert t.phase() == Phase.DISCARD and t.player() == t.nondealer
    assert t.hand(t.nondealer) == set(parse_cards(KNOCKER + " 7h"))
    assert int(t.state.taken_card[0]) == parse_card("7h")
    assert t.legal_discards() == set(KNOCKER.split())  # every card but the upcard
    assert DRAW not in t.legal() and TAKE not in t.legal() and PASS not in t.legal()
    t.step(disc("Kc"))
    assert t.phase() == Phase.DRAW and t.player() == t.dealer
    assert t.legal() == {DRAW, TAKE}
    assert int(t.state.turns[0]) == 1
    assert t.flags() == (False, False, False)


@pytest.mark.parametrize("dealer_id", [0, 1])
def test_offer_nondealer_passes_dealer_takes(dealer_id):
    # The non-dealer passes; now the dealer is offered the upcard. The dealer takes it,
    # discards, and the non-dealer has an ordinary turn (stock or pile).
    t = Table(KNOCKER, JUNK, "7h", dealer_id=dealer_id)
    t.step(PASS)
    assert t.phase() == Phase.OFFER_DEALER and t.player() == t.dealer
    assert t.legal() == {TAKE, PASS}
    t.step(TAKE)
    assert t.phase() == Phase.DISCARD and t.player() == t.dealer
    assert parse_card("7h") in t.hand(t.dealer)
    assert t.legal_discards() == set(JUNK.split())
    t.step(disc("Kh"))
    assert t.phase() == Phase.DRAW and t.player() == t.nondealer
    assert t.legal() == {DRAW, TAKE}
    assert int(t.state.turns[0]) == 1


@pytest.mark.parametrize("dealer_id", [0, 1])
def test_offer_both_pass_forced_draw(dealer_id):
    # Both pass. The non-dealer must draw from the stock: the only legal action is "draw",
    # taking the upcard (or passing again) is illegal. Passing is not a turn.
    t = Table(KNOCKER, JUNK, "7h", ["8c"], dealer_id=dealer_id)
    t.step(PASS, PASS)
    assert t.phase() == Phase.FORCED_DRAW and t.player() == t.nondealer
    assert t.legal() == {DRAW}
    assert int(t.state.turns[0]) == 0
    for illegal in (TAKE, PASS, disc("Kc")):
        with pytest.raises(ValueError):
            t.step(illegal)
    assert t.phase() == Phase.FORCED_DRAW and t.player() == t.nondealer  # nothing changed
    t.step(DRAW)
    assert t.phase() == Phase.DISCARD and t.player() == t.nondealer
    assert t.hand(t.nondealer) == set(parse_cards(KNOCKER + " 8c"))
    assert int(t.state.taken_card[0]) == -1
    assert t.stock_size() == 30
    assert t.legal_discards() == set((KNOCKER + " 8c").split())  # a stock card may be discarded
    t.step(disc("8c"))
    assert t.phase() == Phase.DRAW and t.player() == t.dealer and t.legal() == {DRAW, TAKE}
    assert int(t.state.turns[0]) == 1


@pytest.mark.parametrize("who", ["nondealer", "dealer"])
def test_take_upcard_and_knock_on_first_turn(who):
    # Story: the upcard 7h (knock limit 7) completes 5-6-7h for the taker, who holds
    # A-2-3s, 9-9-9, 2d and Kc. Taking it and knocking with Kc leaves K = 2. The only legal
    # knock is with Kc (with 2d: 10 > 7; 7h may not be discarded). The other player holds
    # junk with nothing to lay off (no 4s, 4h, 8h, 9h): D = 68, the taker scores 66.
    taker, other = "As 2s 3s 5h 6h 9c 9d 9s 2d Kc", "Kh Qd Js Tc 8d 6s 5c 4d 3h 2c"
    if who == "nondealer":
        t = Table(taker, other, "7h")
        t.step(TAKE)
    else:
        t = Table(other, taker, "7h")
        t.step(PASS, TAKE)
    k = t.player()
    assert k == (t.nondealer if who == "nondealer" else t.dealer)
    assert t.legal_knocks() == {"Kc"}
    t.step(knock("Kc"))
    assert t.flags() == (True, True, False)
    assert int(t.r("knocker")) == k and int(t.r("winner")) == k
    assert not t.r("gin") and not t.r("undercut") and not t.r("void")
    assert t.r("deadwood")[k] == 2 and t.r("deadwood")[1 - k] == 68
    pts = [0, 0]
    pts[k] = 66
    assert t.r("points").tolist() == pts
    rew = [-66.0, -66.0]
    rew[k] = 66.0
    assert t.rewards() == rew
    assert int(t.r("knock_card")) == parse_card("Kc")
    assert int(t.r("upcard")) == parse_card("7h")
    assert int(t.r("dealer")) == t.dealer
    assert set(cards_of(t.r("hands")[k])) == set(parse_cards("As 2s 3s 5h 6h 7h 9c 9d 9s 2d"))
    assert int(t.state.current_player[0]) == -1


# ---------------------------------------------------------------------------
# The card taken from the pile may not be discarded (option discard_taken_card)
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("allowed", [False, True])
def test_taken_upcard_may_not_be_discarded_nor_knocked_with(allowed):
    # Story: the upcard Kd (knock limit 10) is useless to the non-dealer, who holds
    # A-2-3s 4-5-6h 9-9-9 and 2d. Taking it to knock with it (K = 2) is forbidden by
    # default: Kd can be neither discarded nor knock-discarded. Knocking with 2d is
    # fine (Kd left, K = 10 <= 10). With discard_taken_card=True both Kd moves are legal.
    t = Table("As 2s 3s 4h 5h 6h 9c 9d 9s 2d", None, "Kd", rules=Rules(discard_taken_card=allowed))
    t.step(TAKE)
    assert ("Kd" in t.legal_discards()) == allowed
    assert ("Kd" in t.legal_knocks()) == allowed
    assert "2d" in t.legal_knocks() and "2d" in t.legal_discards()
    if not allowed:
        for a in (disc("Kd"), knock("Kd")):
            with pytest.raises(ValueError):
                t.step(a)
        assert t.phase() == Phase.DISCARD and t.player() == t.nondealer
    else:
        t.step(knock("Kd"))
        assert t.flags()[:2] == (True, True)
        assert int(t.r("knock_card")) == parse_card("Kd")
        assert t.r("deadwood")[t.nondealer] == 2


@pytest.mark.parametrize("allowed", [False, True])
def test_card_taken_from_pile_midhand_may_not_be_discarded(allowed):
    # Both pass; the non-dealer draws 8c and discards it; the dealer takes 8c from the pile
    # and (by default) may not throw it straight back.
    t = Table(None, None, "7h", ["8c"], rules=Rules(discard_taken_card=allowed))
    t.step(PASS, PASS, DRAW, disc("8c"))
    assert t.player() == t.dealer
    t.step(TAKE)
    assert int(t.state.taken_card[0]) == parse_card("8c")
    assert ("8c" in t.legal_discards()) == allowed
    assert len(t.legal_discards()) == (11 if allowed else 10)
    if not allowed:
        with pytest.raises(ValueError):
            t.step(disc("8c"))
    else:
        t.step(disc("8c"))
        assert t.player() == t.nondealer


# ---------------------------------------------------------------------------
# Knock legality
# ---------------------------------------------------------------------------
KNOCK_ROWS = [
    # (story id, upcard, card drawn from stock, knock card, legal?)
    # The non-dealer holds A-2-3s 4-5-6h 9-9-9 Kc; both pass; they draw one card.
    ("at-limit-5", "5d", "5c", "Kc", True),  # 5c left: 5 <= 5
    ("one-above-5", "5d", "6c", "Kc", False),  # 6c left: 6 > 5
    ("discard-drawn-leaves-Kc", "5d", "5c", "5c", False),  # Kc left: 10 > 5
    ("at-limit-2", "2d", "2c", "Kc", True),
    ("one-above-2", "2d", "3c", "Kc", False),
    ("at-limit-10", "Td", "Kd", "Kc", True),  # Kd left: 10 <= 10
    ("below-limit-9", "9h", "8c", "Kc", True),  # 8c left: 8 <= 9
    ("one-above-9", "9h", "Kd", "Kc", False),  # Kd left: 10 > 9
    ("nine-joins-set-gin", "Td", "9h", "Kc", True),  # 9h joins the nines: gin
    ("face-card-upcard", "Qh", "Kd", "Kc", True),  # Q -> limit 10
    ("ace-upcard-gin", "Ad", "7h", "Kc", True),  # 4-5-6-7h: gin, the only way with an ace
    ("ace-upcard-not-gin", "Ad", "7h", "4h", False),  # 5-6-7h still a run, but Kc left: 10 > 0
    ("ace-upcard-one-point", "Ad", "Ac", "Kc", False),  # Ac left: 1 > 0
    ("ace-upcard-two-points", "Ad", "2c", "Kc", False),
]


@pytest.mark.parametrize("upcard,drawn,card,legal", [r[1:] for r in KNOCK_ROWS], ids=[r[0] for r in KNOCK_ROWS])
def test_knock_legality(upcard, drawn, card, legal):
    t = Table(KNOCKER, None, upcard, [drawn])
    t.step(PASS, PASS, DRAW)
    assert (card in t.legal_knocks()) == legal
    assert card in t.legal_discards()  # an ordinary discard is always fine
    if legal:
        t.step(knock(card))
        assert t.flags()[:2] == (True, True)
        assert int(t.r("knocker")) == t.nondealer
    else:
        with pytest.raises(ValueError):
            t.step(knock(card))


def test_no_knock_at_all_above_the_limit():
    # Upcard 5d, drawn 6c: the best ten cards leave 6 > 5; no knock action may be marked.
    t = Table(KNOCKER, None, "5d", ["6c"])
    t.step(PASS, PASS, DRAW)
    assert t.legal_knocks() == set()
    assert len(t.legal_discards()) == 11


FIXED_LIMIT_ROWS = [
    # (knock_limit option, upcard, drawn card, expected limit, knock Kc legal?)
    (10, "Ad", "Kd", 10, True),  # classic gin rummy: the ace upcard does not matter
    (10, "3d", "Kd", 10, True),
    (0, "Kd", "Ac", 0, False),  # gin only, whatever the upcard
    (0, "Kd", "7h", 0, True),  # gin
    (3, "9h", "4c", 3, False),  # 4c left: 4 > 3
    (3, "9h", "3c", 3, True),  # 3c left: 3 <= 3
]


@pytest.mark.parametrize("option,upcard,drawn,limit,legal", FIXED_LIMIT_ROWS)
def test_fixed_knock_limit(option, upcard, drawn, limit, legal):
    t = Table(KNOCKER, None, upcard, [drawn], rules=Rules(knock_limit=option))
    assert int(t.state.knock_limit[0]) == limit
    t.step(PASS, PASS, DRAW)
    assert ("Kc" in t.legal_knocks()) == legal


# ---------------------------------------------------------------------------
# Gin
# ---------------------------------------------------------------------------
GIN_ROWS = [
    # (id, dealer's hand, gin_bonus, D, knocker's points)
    # 4s 8h 9h would lay off on A-2-3s / 4-7h / 9-9-9, but not on gin: D = 4+8+9+2 = 23
    ("no-layoffs-on-gin", "4s 8h 9h Ks Kh Kd Qc Jc Tc 2d", 25, 23, 48),
    # the defender has D = 0 and still scores nothing; the knocker gets the bonus only
    ("defender-zero", "Ts Th Td Tc Js Jh Jd Qs Qh Qd", 25, 0, 25),
    ("gin-bonus-20", "4s 8h 9h Ks Kh Kd Qc Jc Tc 2d", 20, 23, 43),
]


@pytest.mark.parametrize("dealer,bonus,d,points", [r[1:] for r in GIN_ROWS], ids=[r[0] for r in GIN_ROWS])
def test_gin(dealer, bonus, d, points):
    # Story: the non-dealer takes the upcard 7h onto 4-5-6h and knocks with Kc:
    # A-2-3s 4-5-6-7h 9-9-9 is gin. The knocker scores D + gin_bonus.
    t = Table(KNOCKER, dealer, "7h", rules=Rules(gin_bonus=bonus))
    t.step(TAKE, knock("Kc"))
    assert t.flags() == (True, True, False)
    assert t.r("gin") and not t.r("undercut")
    assert int(t.r("winner")) == t.nondealer
    assert t.r("deadwood").tolist() == by_player(t, 0, d)
    assert t.r("points").tolist() == by_player(t, points, 0)
    assert t.rewards() == by_player(t, float(points), float(-points))
    assert not np.asarray(t.r("laid_off")).any()


def test_gin_with_zero_bonus_and_zero_defender_still_wins_the_hand():
    # gin_bonus 0 and D = 0: the hand scores 0, but the knocker still won it: in a game
    # (target 1) nobody reaches the target, the knocker is credited a hand won and, with
    # next_dealer "winner", deals next.
    rules = Rules(gin_bonus=0, target_score=1)
    t = Table(KNOCKER, "Ts Th Td Tc Js Jh Jd Qs Qh Qd", "7h", rules=rules, episode="game")
    t.step(TAKE, knock("Kc"))
    assert t.flags() == (True, False, False)
    assert t.r("gin") and int(t.r("winner")) == t.nondealer
    assert t.r("points").tolist() == [0, 0]
    assert not t.r("game_over")
    assert np.asarray(t.state.hands_won[0]).tolist() == by_player(t, 1, 0)
    assert int(t.state.dealer[0]) == t.nondealer
    assert t.player() == t.dealer and t.phase() == Phase.OFFER_NONDEALER  # old dealer is non-dealer now


# ---------------------------------------------------------------------------
# Knock vs undercut
# ---------------------------------------------------------------------------
UNDERCUT_ROWS = [
    # (id, defender's odd card (with K K K Q Q Q J J J), undercut_bonus, undercut?, winner seat, points (nd, dealer))
    # K = 7 (7d) in every row.
    ("undercut", "5c", 10, True, "dealer", (0, 12)),  # 7 - 5 + 10
    ("tie-is-undercut", "7c", 10, True, "dealer", (0, 10)),  # K == D: 0 + 10
    ("undercut-bonus-20", "5c", 20, True, "dealer", (0, 22)),
    ("tie-zero-bonus-still-wins", "7c", 0, True, "dealer", (0, 0)),
    ("knocker-wins-by-one", "8s", 10, False, "nondealer", (1, 0)),  # 8 - 7
]


@pytest.mark.parametrize(
    "odd,bonus,undercut,winner,points", [r[1:] for r in UNDERCUT_ROWS], ids=[r[0] for r in UNDERCUT_ROWS]
)
def test_undercut(odd, bonus, undercut, winner, points):
    # Story: the non-dealer takes the upcard 7d (limit 7) and knocks with Kc, keeping
    # A-2-3s 4-5-6h 9-9-9 and 7d: K = 7. The dealer holds K K K, Q Q Q, J J J and one odd
    # card, none of which lays off (no 4s, 3h, 7h, 9h).
    t = Table(KNOCKER, "Ks Kh Kd Qs Qh Qd Js Jh Jd " + odd, "7d", rules=Rules(undercut_bonus=bonus))
    t.step(TAKE, knock("Kc"))
    w = t.dealer if winner == "dealer" else t.nondealer
    assert t.flags() == (True, True, False)
    assert bool(t.r("undercut")) == undercut and not t.r("gin")
    assert int(t.r("knocker")) == t.nondealer and int(t.r("winner")) == w
    assert t.r("deadwood")[t.nondealer] == 7
    assert t.r("points").tolist() == by_player(t, *points)
    gain = float(max(points))
    assert t.rewards() == [gain if p == w else -gain for p in (0, 1)]


# ---------------------------------------------------------------------------
# Lay-offs
# ---------------------------------------------------------------------------
SETS = "Ks Kh Kd Qs Qh Qd"
LAYOFF_ROWS = [
    # (id, dealer's ten, D after lay-offs, laid-off cards, points (nd, dealer))
    # K = 2 (2d); the knocker's melds are A-2-3s, 4-5-6h, 9c 9d 9s.
    ("onto-set-of-three", SETS + " 9h 5c 8d Jc", 23, "9h", (21, 0)),  # 5+8+10
    ("onto-both-ends-of-run", SETS + " 3h 7h 5c 8d", 13, "3h 7h", (11, 0)),  # 3h-7h; 5+8
    ("chained-up", SETS + " 7h 8h 5c Tc", 15, "7h 8h", (13, 0)),  # 7h then 8h; 5+10
    ("chained-on-ace-run", SETS + " 4s 5s 8d Jc", 18, "4s 5s", (16, 0)),  # A-5s; 8+10
    # own set 8h 8c 8s and 7h laid off beat laying off 7h 8h: D = 0 -> undercut 2 - 0 + 10
    ("joint-arrangement", SETS + " 7h 8h 8c 8s", 0, "7h", (0, 12)),
    # the defender's 3-4-5d would take the knocker's 2d, but the knocker never lays off
    ("knocker-never-lays-off", SETS + " 3d 4d 5d 8c", 8, "", (6, 0)),
    # Ks does not go below A-2-3s (no Q-K-A): D = Ks Kh 5c 8d = 33
    ("no-wraparound", "Ks Kh Qh Qd Qc Jh Jd Jc 5c 8d", 33, "", (31, 0)),
]


@pytest.mark.parametrize("dealer,d,laid,points", [r[1:] for r in LAYOFF_ROWS], ids=[r[0] for r in LAYOFF_ROWS])
def test_layoffs(dealer, d, laid, points):
    # Story: both pass on the upcard 7c (limit 7); the non-dealer draws 2d and knocks with
    # Kc, showing A-2-3s 4-5-6h 9-9-9 and 2d (K = 2). The dealer lays off what they can.
    t = Table(KNOCKER, dealer, "7c", ["2d"])
    t.step(PASS, PASS, DRAW, knock("Kc"))
    assert t.flags() == (True, True, False)
    assert t.r("deadwood").tolist() == by_player(t, 2, d)
    assert set(cards_of(t.r("laid_off"))) == set(parse_cards(laid))
    assert t.r("points").tolist() == by_player(t, *points)
    assert bool(t.r("undercut")) == (points[1] > 0)


TIEBREAK_ROWS = [
    # (id, dealer's ten, D, laid off, points (nd, dealer))
    # run 2s3s4s: 5s 6s lay off, D = 3c 8h = 11; set 3s3h3d: 3c lays off, D = 5+6+8 = 19
    ("set-leaves-more", "3c 5s 6s 8h Ks Kh Kd Qs Qh Qd", 19, "3c", (13, 0)),
    # run 2s3s4s: As lays off, D = 3+8+7 = 18; set 3s3h3d: 3c lays off, D = 1+8+7 = 16
    ("run-leaves-more", "3c As 8h 7c Ks Kh Kd Qs Qh Qd", 18, "As", (12, 0)),
]


@pytest.mark.parametrize("dealer,d,laid,points", [r[1:] for r in TIEBREAK_ROWS], ids=[r[0] for r in TIEBREAK_ROWS])
def test_knocker_tiebreak_between_minimal_arrangements(dealer, d, laid, points):
    # Story: the knocker holds 2s 3s 4s 3h 3d and the club run 9-K. 3s can go in the run
    # 2s3s4s (3h 3d left: 6) or in the set 3s3h3d (2s 4s left: 6): two minimal
    # arrangements. The one leaving the defender more deadwood after lay-offs is used.
    # Upcard 8d (limit 8); both pass; the knocker draws 6h and knocks with it (K = 6).
    t = Table("2s 3s 4s 3h 3d 9c Tc Jc Qc Kc", dealer, "8d", ["6h"])
    t.step(PASS, PASS, DRAW, knock("6h"))
    assert t.flags() == (True, True, False)
    assert t.r("deadwood").tolist() == by_player(t, 6, d)
    assert set(cards_of(t.r("laid_off"))) == set(parse_cards(laid))
    assert t.r("points").tolist() == by_player(t, *points)


# ---------------------------------------------------------------------------
# Wall and the turn cap
# ---------------------------------------------------------------------------
def wall_table(rules=None, episode="hand", dealer_id=1) -> Table:
    """Both pass on the upcard 5d (limit 5). Then 28 turns of draw-and-discard-the-drawn-card
    leave 3 cards in the stock. Turn 29 is the non-dealer's; it draws 2d (deck[49]), leaving
    two cards in the stock. Holding A-2-3s 4-5-6h 9-9-9 Kc, the non-dealer could now
    knock with Kc (K = 2) against the dealer's junk (D = 68)."""
    stock = [None] * 28 + ["2d"]
    t = Table(KNOCKER, JUNK, "5d", stock, dealer_id=dealer_id, rules=rules, episode=episode)
    t.step(PASS, PASS)
    t.draw_and_discard_drawn(28)
    assert t.flags() == (False, False, False)
    assert t.stock_size() == 3 and int(t.state.turns[0]) == 28
    assert t.player() == t.nondealer
    t.step(DRAW)
    assert t.stock_size() == 2
    return t


def test_wall_voids_the_hand():
    # The non-dealer simply discards 2d: after an ordinary discard two cards remain in the
    # stock, so the hand ends with no score. Each player's own deadwood is reported.
    t = wall_table()
    t.step(disc("2d"))
    assert t.flags() == (True, True, False)
    assert t.r("void") and not t.r("truncated_hand")
    assert int(t.r("winner")) == -1 and int(t.r("knocker")) == -1
    assert t.r("points").tolist() == [0, 0]
    assert t.rewards() == [0.0, 0.0]
    assert t.r("deadwood").tolist() == by_player(t, 10, 68)


def test_knock_on_the_turn_that_draws_the_stock_to_two():
    # The same turn 29, but the non-dealer knocks with Kc: allowed and scored, 68 - 2 = 66.
    t = wall_table()
    assert "Kc" in t.legal_knocks()
    t.step(knock("Kc"))
    assert t.flags() == (True, True, False)
    assert not t.r("void") and int(t.r("winner")) == t.nondealer
    assert t.r("points").tolist() == by_player(t, 66, 0)


def test_wall_is_checked_before_the_turn_cap():
    # The 29th turn both hits the wall and completes max_turns_per_hand = 29: it is a wall
    # (terminated), not a turn cap (truncated).
    t = wall_table(rules=Rules(max_turns_per_hand=29))
    t.step(disc("2d"))
    assert t.flags() == (True, True, False)
    assert t.r("void") and not t.r("truncated_hand")


@pytest.mark.parametrize("dealer_id", [0, 1])
def test_wall_in_a_game_keeps_the_dealer(dealer_id):
    t = wall_table(episode="game", dealer_id=dealer_id)
    t.step(disc("2d"))
    assert t.flags() == (True, False, False)
    assert t.r("void") and int(t.r("dealer")) == dealer_id
    assert not t.r("game_over")
    assert int(t.state.dealer[0]) == dealer_id  # a void hand: same dealer again
    assert t.phase() == Phase.OFFER_NONDEALER and t.player() == 1 - dealer_id
    assert np.asarray(t.state.scores[0]).tolist() == [0, 0]
    assert int(t.state.turns[0]) == 0 and t.stock_size() == 31


@pytest.mark.parametrize("cap", [1, 2, 3])
def test_turn_cap_truncates_a_hand_episode(cap):
    # Passing on the upcard is not a turn; each draw + discard is one. After the discard
    # that completes turn `cap` the hand is void and the episode is truncated.
    t = Table(None, None, "7h", rules=Rules(max_turns_per_hand=cap))
    t.step(PASS, PASS)
    for turn in range(1, cap):
        t.draw_and_discard_drawn(1)
        assert t.flags() == (False, False, False)
        assert int(t.state.turns[0]) == turn
    t.draw_and_discard_drawn(1)
    assert t.flags() == (True, False, True)
    assert t.r("void") and t.r("truncated_hand")
    assert int(t.r("winner")) == -1 and int(t.r("knocker")) == -1
    assert t.r("points").tolist() == [0, 0] and t.rewards() == [0.0, 0.0]


def test_turn_cap_counts_taking_the_upcard_as_a_turn():
    # max_turns_per_hand 1: the non-dealer takes the upcard and discards: turn 1, the cap.
    t = Table(KNOCKER, None, "7h", rules=Rules(max_turns_per_hand=1))
    t.step(TAKE, disc("Kc"))
    assert t.flags() == (True, False, True)
    assert t.r("truncated_hand")


def test_knock_on_the_last_allowed_turn_is_scored():
    # max_turns_per_hand 1: a knock on turn 1 ends the hand normally (66, see knock_win_table).
    t = knock_win_table(rules=Rules(max_turns_per_hand=1))
    assert t.flags() == (True, True, False)
    assert not t.r("void") and not t.r("truncated_hand")
    assert t.r("points").tolist() == by_player(t, 66, 0)


@pytest.mark.parametrize("dealer_id", [0, 1])
def test_turn_cap_in_a_game_is_a_void_hand_with_the_same_dealer(dealer_id):
    t = Table(None, None, "7h", dealer_id=dealer_id, rules=Rules(max_turns_per_hand=2), episode="game")
    t.step(PASS, PASS)
    t.draw_and_discard_drawn(2)
    assert t.flags() == (True, False, False)
    assert t.r("void") and t.r("truncated_hand") and not t.r("game_over")
    assert int(t.state.dealer[0]) == dealer_id
    assert t.phase() == Phase.OFFER_NONDEALER and t.player() == 1 - dealer_id
    assert np.asarray(t.state.scores[0]).tolist() == [0, 0]
    assert int(t.state.turns[0]) == 0


# ---------------------------------------------------------------------------
# Next dealer
# ---------------------------------------------------------------------------
NEXT_DEALER_ROWS = [
    # (next_dealer, deal, dealer id, hand winner, next dealer)
    ("winner", "knock", 1, 0, 0), ("loser", "knock", 1, 0, 1), ("alternate", "knock", 1, 0, 0),
    ("winner", "knock", 0, 1, 1), ("loser", "knock", 0, 1, 0), ("alternate", "knock", 0, 1, 1),
    ("winner", "undercut", 1, 1, 1), ("loser", "undercut", 1, 1, 0), ("alternate", "undercut", 1, 1, 0),
    ("winner", "undercut", 0, 0, 0), ("loser", "undercut", 0, 0, 1), ("alternate", "undercut", 0, 0, 1),
]


@pytest.mark.parametrize("rule,deal,dealer_id,winner,next_dealer", NEXT_DEALER_ROWS)
def test_next_dealer(rule, deal, dealer_id, winner, next_dealer):
    # "knock": the non-dealer wins 66; "undercut": the dealer wins 12 (see the tables above).
    make = knock_win_table if deal == "knock" else undercut_table
    t = make(dealer_id=dealer_id, rules=Rules(next_dealer=rule), episode="game")
    points = 66 if deal == "knock" else 12
    assert t.flags() == (True, False, False)
    assert int(t.r("winner")) == winner and int(t.r("dealer")) == dealer_id
    assert int(t.state.dealer[0]) == next_dealer
    assert t.player() == 1 - next_dealer and t.phase() == Phase.OFFER_NONDEALER
    totals = [0, 0]
    totals[winner] = points
    assert np.asarray(t.state.scores[0]).tolist() == totals
    assert t.r("scores").tolist() == totals


# ---------------------------------------------------------------------------
# Spade doubling
# ---------------------------------------------------------------------------
SPADE_ROWS = [
    # (id, upcard, spade_double, knock_limit, card drawn, dealer's ten, points (nd, dealer), doubled?)
    # The non-dealer (A-2-3s 4-5-6h 9-9-9 Kc) passes, the dealer passes, the non-dealer
    # draws and knocks with Kc. JUNK: D = 68; SETS5: D = 5.
    ("club-upcard", "7c", True, "upcard", "2d", JUNK, (66, 0), False),  # 68 - 2
    ("diamond-upcard", "7d", True, "upcard", "2d", JUNK, (66, 0), False),
    ("spade-upcard", "7s", True, "upcard", "2d", JUNK, (132, 0), True),  # 2 * 66
    ("spade-upcard-option-off", "7s", False, "upcard", "2d", JUNK, (66, 0), False),
    ("spade-gin", "7s", True, "upcard", "7h", JUNK, (186, 0), True),  # 2 * (68 + 25)
    ("spade-undercut", "7s", True, "upcard", "7d", SETS5, (0, 24), True),  # 2 * (7 - 5 + 10)
    ("spade-fixed-limit", "7s", True, 10, "2d", JUNK, (132, 0), True),
    ("spade-king-upcard", "Ks", True, "upcard", "2d", JUNK, (132, 0), True),
]


@pytest.mark.parametrize(
    "upcard,on,limit,drawn,dealer,points,doubled", [r[1:] for r in SPADE_ROWS], ids=[r[0] for r in SPADE_ROWS]
)
def test_spade_double(upcard, on, limit, drawn, dealer, points, doubled):
    t = Table(KNOCKER, dealer, upcard, [drawn], rules=Rules(spade_double=on, knock_limit=limit))
    t.step(PASS, PASS, DRAW, knock("Kc"))
    assert t.flags() == (True, True, False)
    assert bool(t.r("spade_doubled")) == doubled
    assert t.r("points").tolist() == by_player(t, *points)
    gain = float(max(points))
    w = int(t.r("winner"))
    assert t.rewards() == [gain if p == w else -gain for p in (0, 1)]


# ---------------------------------------------------------------------------
# Game end and game bonuses
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("target,over", [(1, True), (65, True), (66, True), (67, False), (100, False)])
def test_game_ends_when_a_total_reaches_target(target, over):
    # The non-dealer (player 0) wins the first hand with 66 points.
    t = knock_win_table(rules=Rules(target_score=target), episode="game")
    assert t.flags() == (True, over, False)
    assert bool(t.r("game_over")) == over
    assert int(t.r("game_winner")) == (0 if over else -1)
    assert t.r("scores").tolist() == [66, 0]
    assert t.rewards() == [66.0, -66.0]
    if not over:  # a new hand is dealt, the winner deals
        assert int(t.state.dealer[0]) == 0 and t.player() == 1 and t.phase() == Phase.OFFER_NONDEALER
    else:
        assert bool(t.state.done[0]) and int(t.state.current_player[0]) == -1


def test_replayed_deck_applies_to_the_first_hand_only():
    # "the deck and dealer apply to its first hand; later hands are dealt from the seeded
    # random generator": the same seed gives the same second deal, another seed another one.
    second = []
    for seed in (3, 3, 4):
        t = Table("As 2s 3s 5h 6h 9c 9d 9s 2d Kc", "Kh Qd Js Tc 8d 6s 5c 4d 3h 2c", "7h", episode="game", seed=seed)
        t.step(TAKE, knock("Kc"))
        assert t.flags() == (True, False, False)
        deck = np.asarray(t.state.deck[0]).tolist()
        assert sorted(deck) == list(range(52)) and deck != t.deck
        second.append(deck)
    assert second[0] == second[1]
    assert second[0] != second[2]


GAME_BONUS_ROWS = [
    # (id, deal, game_bonuses, spade_double, final scores)
    ("off", "knock", False, False, (66, 0)),
    ("shutout", "knock", True, False, (382, 0)),  # (66 + 25 + 100) * 2
    ("shutout-undercut", "undercut", True, False, (0, 274)),  # (12 + 25 + 100) * 2
    ("spade-doubles-hand-not-bonuses", "spade", True, True, (514, 0)),  # (2*66 + 25 + 100) * 2
]


@pytest.mark.parametrize("deal,bonuses,spade,final", [r[1:] for r in GAME_BONUS_ROWS], ids=[r[0] for r in GAME_BONUS_ROWS])
def test_game_bonuses_one_hand_game(deal, bonuses, spade, final):
    rules = Rules(target_score=10, game_bonuses=bonuses, spade_double=spade)
    if deal == "knock":
        t = knock_win_table(rules=rules, episode="game")
    elif deal == "undercut":
        t = undercut_table(rules=rules, episode="game")
    else:  # spade upcard 7s, non-dealer draws 2d and knocks: 2 * 66 = 132
        t = Table(KNOCKER, JUNK, "7s", ["2d"], rules=rules, episode="game")
        t.step(PASS, PASS, DRAW, knock("Kc"))
    hand_points = {"knock": [66, 0], "undercut": [0, 12], "spade": [132, 0]}[deal]
    w = 0 if final[0] else 1
    assert t.flags() == (True, True, False)
    assert t.r("game_over") and int(t.r("game_winner")) == w
    assert t.r("points").tolist() == hand_points
    assert t.r("scores").tolist() == list(final)
    gain = float(max(final))
    assert t.rewards() == [gain if p == w else -gain for p in (0, 1)]


def _greedy_actions(g: VectorGame, out) -> np.ndarray:
    """A simple bot: pass the offer, draw from the stock, knock when possible, otherwise
    discard the card that leaves the least deadwood."""
    mask = np.asarray(out.legal_action_mask)[0]
    if mask[PASS]:
        return np.array([PASS])
    if mask[DRAW]:
        return np.array([DRAW])
    knocks = np.flatnonzero(mask[52:104])
    if len(knocks):
        return np.array([52 + knocks[0]])
    p = int(out.current_player[0])
    dw = np.asarray(melds.deadwood_after_discard(np.asarray(g.state.hands[0:1, p], dtype=bool)))[0].astype(int)
    dw[~mask[:52]] = 10_000
    return np.array([int(np.argmin(dw))])


def test_game_bonuses_without_shutout():
    # Line bonus 25 per hand won, 100 for the winner; no doubling when the loser won a hand.
    # Play whole games with a greedy bot, booking every hand, until one ends with the loser
    # having won at least one hand; check the totals and the summed rewards.
    rules = Rules(target_score=60, game_bonuses=True)
    for seed in range(40):
        g = VectorGame(1, rules, episode="game", seed=seed)
        out = g.reset(seed=seed)
        totals, won, reward_sum = [0, 0], [0, 0], np.zeros(2)
        for _ in range(5000):
            out = g.step(_greedy_actions(g, out))
            reward_sum += np.asarray(out.rewards)[0]
            if not out.hand_over[0]:
                continue
            res = out.result
            if not res.void[0]:
                w = int(res.winner[0])
                totals[w] += int(res.points[0, w])
                won[w] += 1
            if out.terminated[0]:
                break
            assert np.asarray(res.scores[0]).tolist() == totals
        else:
            pytest.fail("game did not end")
        w = int(out.result.game_winner[0])
        assert totals[w] >= 60 and totals[1 - w] < 60
        final = [totals[p] + 25 * won[p] for p in (0, 1)]
        final[w] += 100
        if won[1 - w] == 0:
            final[w] *= 2
        assert np.asarray(out.result.scores[0]).tolist() == final
        assert reward_sum.tolist() == [final[0] - final[1], final[1] - final[0]]
        if won[1 - w] > 0:
            return  # a game without a shutout was checked
    pytest.fail("no game without a shutout in 40 seeds")


# ---------------------------------------------------------------------------
# Errors: malformed decks, bad dealer, illegal actions, bad options
# ---------------------------------------------------------------------------
GOOD_DECK = deck_from(KNOCKER, JUNK, "7c")


@pytest.mark.parametrize(
    "deck,match",
    [
        (GOOD_DECK[:51], "52|51"),  # wrong length
        (GOOD_DECK + [GOOD_DECK[0]], "52|53"),
        (GOOD_DECK[:51] + [GOOD_DECK[3]], "(?i)duplicate"),
        (GOOD_DECK[:51] + [52], "(?i)unknown|0-51"),
        ([card_text(c) for c in GOOD_DECK[:51]] + ["Xs"], "(?i)bad card|unknown"),
        ([card_text(c) for c in GOOD_DECK[:51]] + ["1s"], "(?i)bad card|unknown"),
    ],
)
def test_malformed_deck_is_rejected(deck, match):
    g = VectorGame(1, Rules())
    with pytest.raises(ValueError, match=match):
        g.reset(decks=[deck], dealers=[0])


@pytest.mark.parametrize("dealer", [2, -1, [5]])
def test_bad_dealer_is_rejected(dealer):
    g = VectorGame(1, Rules())
    with pytest.raises(ValueError, match="(?i)dealer"):
        g.reset(decks=[GOOD_DECK], dealers=dealer)


@pytest.mark.parametrize("action", [DRAW, 0, knock("Kc"), NUM_ACTIONS, -1, 500])
def test_illegal_action_is_rejected_and_changes_nothing(action):
    # During the non-dealer's offer only take and pass are legal.
    t = Table(KNOCKER, JUNK, "7c")
    with pytest.raises(ValueError) as e:
        t.step(action)
    msg = str(e.value)
    assert "legal" in msg.lower() and str(action) in msg  # names the action and the legal ones
    assert "pass" in msg.lower() or str(PASS) in msg
    assert t.phase() == Phase.OFFER_NONDEALER and t.player() == t.nondealer
    t.step(PASS)
    assert t.phase() == Phase.OFFER_DEALER


def test_discarding_a_card_not_held_is_illegal():
    t = Table(KNOCKER, JUNK, "7c", ["8h"])
    t.step(PASS, PASS, DRAW)
    with pytest.raises(ValueError):
        t.step(disc("Kh"))  # the dealer's card
    with pytest.raises(ValueError):
        t.step(knock("Kc"))  # 8h left: 8 > 7


@pytest.mark.parametrize(
    "name,value,hint",
    [
        ("knock_limit", 11, "upcard"), ("knock_limit", -1, "upcard"), ("knock_limit", "ace", "upcard"),
        ("gin_bonus", -1, ">= ?0"), ("undercut_bonus", -1, ">= ?0"),
        ("next_dealer", "random", "alternate"), ("discard_taken_card", 1, "(?i)true|bool"),
        ("spade_double", "yes", "(?i)true|bool"), ("game_bonuses", None, "(?i)true|bool"),
        ("target_score", 0, ">= ?1"), ("max_turns_per_hand", 0, ">= ?1"),
    ],
)
def test_bad_option_value_names_option_value_and_allowed(name, value, hint):
    with pytest.raises(ValueError) as e:
        Rules(**{name: value})
    msg = str(e.value)
    assert name in msg and repr(value) in msg
    assert re.search(hint, msg), msg


def test_every_decision_has_a_legal_action_in_random_play():
    # "at every decision at least one action is legal": random legal play over many deals.
    rng = np.random.default_rng(5)
    g = VectorGame(1, Rules(max_turns_per_hand=60), episode="game", seed=5)
    out = g.reset(seed=5)
    for _ in range(800):
        mask = np.asarray(out.legal_action_mask)[0]
        assert mask.any()
        if out.terminated[0] or out.truncated[0]:
            out = g.reset(seed=int(rng.integers(1 << 30)))
            continue
        out = g.step(np.array([rng.choice(np.flatnonzero(mask))]))
