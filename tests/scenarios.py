"""Rule scenarios written once, as data, and played on both engines by ``test_scenarios.py``.

Each ``Scenario`` is a worked example in OpenSpiel's habit: a deal, one paragraph of story,
then a script of beats ``(actions, expected)``: play the actions, then every expected value
must hold. Every number was worked out by hand from docs/RULES.md; the arithmetic is in the story.

Notation, so that one row serves either dealer id and either engine:

* players are seats of the *first* hand: ``"nondealer"``, ``"dealer"`` (``None``: nobody,
  e.g. the winner of a void hand or the player to move once the episode is over);
* per-player values are pairs ``(nondealer, dealer)``; ``None`` in a pair means "not asserted";
* cards are card text: one card ``"Kc"``, a set or pile ``"As 2s 3s"``.

Expected keys (see ``observe``): state ``phase player dealer legal discards knocks n_discards
can_discard can_knock illegal nondealer_hand dealer_hand pile stock_top stock_size turns
knock_limit taken_card replays_deck totals hands_won taken discarded declined``; step
``flags`` (hand_over, terminated, truncated) and ``rewards``; the hand result ``knocker winner
game_winner hand_dealer gin undercut void truncated_hand spade_doubled game_over deadwood points
scores knock_card upcard nondealer_held dealer_held laid_off``. A result field only one engine
reports (``laid_off``: the fast one) is asserted where it exists.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from okgin_env.game.actions import DRAW_STOCK as DRAW
from okgin_env.game.actions import KNOCK, PASS, discard_action, knock_action
from okgin_env.game.actions import TAKE_DISCARD as TAKE
from okgin_env.game.cards import (
    NUM_CARDS,
    card_text,
    deck_from,
    parse_card,
    parse_cards,
)
from okgin_env.game.core import Phase
from okgin_env.game.rules import Rules


def disc(card: str) -> int:
    """Action: discard ``card``."""
    return discard_action(parse_card(card))


def knock(card: str) -> int:
    """Action: knock, discarding ``card`` face down."""
    return knock_action(parse_card(card))


def plain_turns(deck: list[int], n: int, first: int = 0) -> tuple[int, ...]:
    """``n`` turns of "draw the top of the stock, discard the card drawn", starting with the
    ``first``-th stock card (deck[21 + first])."""
    return tuple(a for i in range(first, first + n) for a in (DRAW, deck[21 + i]))


Beat = tuple[tuple[int, ...], dict[str, Any]]


@dataclass(frozen=True)
class Scenario:
    """One worked example: ``deck`` dealt (agent ``dealer`` deals, chosen by the test), then each
    beat of ``script`` played and checked in turn, under ``rules`` and ``episode``."""

    name: str
    story: str
    deck: list[int]
    script: tuple[Beat, ...]
    rules: Rules = field(default_factory=Rules)
    episode: str = "hand"

    def __repr__(self) -> str:  # pytest ids and failure messages
        return self.name


# ---------------------------------------------------------------------------------------
# Recurring hands
# ---------------------------------------------------------------------------------------
# Knocker melds: A-2-3s, 4-5-6h, 9c 9d 9s; Kc is the deadwood to shed.
KNOCKER = "As 2s 3s 4h 5h 6h 9c 9d 9s Kc"
# No meld, and nothing that lays off on A-2-3s / 4-5-6h / 9-9-9 (no 4s, 3h, 7h, 9h):
# 10+10+10+10+8+6+5+4+3+2 = 68.
JUNK = "Kh Qd Js Tc 8d 6s 5c 4d 3c 2h"
# Three sets (K K K, Q Q Q, J J J) and 5c: deadwood 5, no lay-offs on the knocker's melds.
SETS5 = "Ks Kh Kd Qs Qh Qd Js Jh Jd 5c"
# A-2-3s 5-6h 9-9-9 2d Kc: the upcard 7h completes 5-6-7h; knocking with Kc leaves K = 2 (2d).
TAKER = "As 2s 3s 5h 6h 9c 9d 9s 2d Kc"
# Junk with nothing to lay off on the taker's melds (no 4s 4h 8h 9h): D = 68.
OTHER = "Kh Qd Js Tc 8d 6s 5c 4d 3h 2c"
#: the unshuffled deck: the non-dealer gets As 3s 5s 7s 9s Js Ks 2h 4h 6h (no meld, 57), the
#: dealer 2s 4s 6s 8s Ts Qs Ah 3h 5h 7h (no meld, 56); upcard 8h; the stock 9h Th ... Kc
UNSHUFFLED = list(range(NUM_CARDS))

KNOCK_WIN = deck_from(TAKER, OTHER, "7h")
KNOCK_WIN_STORY = ("The non-dealer takes the upcard 7h (limit 7) onto 5-6h and knocks with Kc: A-2-3s 5-6-7h "
                   "9-9-9 and 2d, K = 2, against the dealer's junk, D = 68: 66 points.")
UNDERCUT7 = deck_from(KNOCKER, SETS5, "7d")
UNDERCUT7_STORY = ("The non-dealer takes the upcard 7d (limit 7) and knocks with Kc: K = 7 (7d). The dealer "
                   "holds K K K, Q Q Q, J J J and 5c, D = 5 <= K: undercut, the dealer scores 7 - 5 + 10 = 12.")
# The reference tests' own deals:
GIN_DEAL = deck_from("As 2s 3s 4s 7h 7d 7c Jd Qd Kd", "5s 7s 2h 2d 2c Kh Kc 6d 9c 4h", "9s", "5c")
UNDERCUT3 = dict(nondealer="As 2s 3s 4h 4d 4c 7c 8c 9c Kh", dealer="5h 6h 7h Ts Th Td Jd Qd Kd 2h", upcard="3d")
UNDERCUT3_STORY = ("The non-dealer takes the upcard 3d (limit 3) and knocks with Kh, keeping A-2-3s 4-4-4 "
                   "7-8-9c and 3d: K = 3. The dealer holds 5-6-7h T-T-T J-Q-Kd and 2h (nothing lays off): "
                   "D = 2 <= 3, undercut: 3 - 2 + 10 = 11.")

SCENARIOS: list[Scenario] = []


def add(name: str, story: str, deck: list[int], *script: Beat, rules: Rules | None = None,
        episode: str = "hand") -> None:
    """Append a scenario to ``SCENARIOS`` (the name is its pytest id)."""
    SCENARIOS.append(Scenario(name, story, deck, tuple(script), rules or Rules(), episode))


# ---------------------------------------------------------------------------------------
# Deal and the first upcard offer
# ---------------------------------------------------------------------------------------
add("deal-follows-the-deck-order",
    "deck[0], deck[2], ... go to the non-dealer, deck[1], deck[3], ... to the dealer; deck[20] is the "
    "upcard, deck[21] the top of the stock; 31 cards in the stock. Both pass; the non-dealer draws 8h.",
    deck_from(KNOCKER, JUNK, "7c", "8h"),
    ((), dict(nondealer_hand=KNOCKER, dealer_hand=JUNK, pile="7c", stock_top="8h", stock_size=31,
              dealer="dealer", replays_deck=True, flags=(False, False, False))),
    ((PASS, PASS, DRAW), dict(nondealer_hand=KNOCKER + " 8h", stock_size=30)))

add("unshuffled-deck-pass-pass-draw",
    "The unshuffled deck: the upcard 8h (limit 8). The non-dealer passes (and has declined 8h), the dealer "
    "passes, the non-dealer must draw (9h) and discards it: the dealer's ordinary turn, turn 1 done.",
    UNSHUFFLED,
    ((), dict(nondealer_hand="As 3s 5s 7s 9s Js Ks 2h 4h 6h", dealer_hand="2s 4s 6s 8s Ts Qs Ah 3h 5h 7h",
              pile="8h", knock_limit=8, stock_size=31, stock_top="9h", phase=Phase.OFFER_NONDEALER,
              player="nondealer", legal={TAKE, PASS})),
    ((PASS,), dict(phase=Phase.OFFER_DEALER, player="dealer", legal={TAKE, PASS}, declined=("8h", ""))),
    ((PASS,), dict(phase=Phase.FORCED_DRAW, player="nondealer", legal={DRAW}, declined=("8h", "8h"))),
    ((DRAW,), dict(phase=Phase.DISCARD, nondealer_hand="As 3s 5s 7s 9s Js Ks 2h 4h 6h 9h", stock_size=30,
                   taken_card=None)),
    ((disc("9h"),), dict(phase=Phase.DRAW, player="dealer", legal={DRAW, TAKE}, pile="8h 9h",
                         discarded=("9h", ""), turns=1)))

add("offer-nondealer-takes",
    "The non-dealer may take the upcard or pass: nothing else. They take 7h (completing A-2-3s 4-5-6-7h "
    "9-9-9: only Kc can go, knocking for gin) and must discard, not the 7h; then it is the dealer's turn.",
    deck_from(KNOCKER, JUNK, "7h"),
    ((), dict(phase=Phase.OFFER_NONDEALER, player="nondealer", legal={TAKE, PASS})),
    ((TAKE,), dict(phase=Phase.DISCARD, player="nondealer", nondealer_hand=KNOCKER + " 7h", taken_card="7h",
                   legal={disc(c) for c in KNOCKER.split()} | {knock("Kc")}, taken=("7h", ""), pile="")),
    ((disc("Kc"),), dict(phase=Phase.DRAW, player="dealer", legal={DRAW, TAKE}, turns=1, pile="Kc",
                         taken=("7h", ""), flags=(False, False, False))))

add("offer-nondealer-passes-dealer-takes",
    "The non-dealer passes; now the dealer is offered the upcard 7h, takes it (it may not be thrown back), "
    "discards Kh, and the non-dealer has an ordinary turn (stock or pile).",
    deck_from(KNOCKER, JUNK, "7h"),
    ((PASS,), dict(phase=Phase.OFFER_DEALER, player="dealer", legal={TAKE, PASS})),
    ((TAKE,), dict(phase=Phase.DISCARD, player="dealer", dealer_hand=JUNK + " 7h", discards=JUNK, knocks="",
                   pile="", taken=("", "7h"), declined=("7h", ""), taken_card="7h")),
    ((disc("Kh"),), dict(phase=Phase.DRAW, player="nondealer", legal={DRAW, TAKE}, turns=1)))

add("offer-both-pass-forced-draw",
    "Both pass. The non-dealer must draw from the stock: taking the upcard, passing again or discarding "
    "are illegal and change nothing; passing is not a turn. A card drawn from the stock may be discarded.",
    deck_from(KNOCKER, JUNK, "7h", "8c"),
    ((PASS, PASS), dict(phase=Phase.FORCED_DRAW, player="nondealer", legal={DRAW}, turns=0,
                        illegal=(TAKE, PASS, disc("Kc")))),
    ((DRAW,), dict(phase=Phase.DISCARD, player="nondealer", nondealer_hand=KNOCKER + " 8c", taken_card=None,
                   stock_size=30, discards=KNOCKER + " 8c")),
    ((disc("8c"),), dict(phase=Phase.DRAW, player="dealer", legal={DRAW, TAKE}, turns=1)))

for _upcard, _limit in [("As", 0), ("Ah", 0), ("2d", 2), ("5c", 5), ("9h", 9), ("Ts", 10), ("Jd", 10),
                        ("Qc", 10), ("Kh", 10)]:
    add(f"knock-limit-{_upcard}", f"The upcard {_upcard} sets the knock limit to its knock value, {_limit}.",
        deck_from(None, None, _upcard), ((), dict(knock_limit=_limit)))

for _who in ("nondealer", "dealer"):
    add(f"{_who}-takes-upcard-and-knocks-first-turn",
        f"The {_who} takes the upcard 7h (limit 7), completing 5-6-7h with A-2-3s, 9-9-9, 2d and Kc. The "
        "only legal knock is with Kc (with 2d: 10 > 7; 7h may not be discarded): K = 2. The other player "
        "holds junk with nothing to lay off (no 4s, 4h, 8h, 9h): D = 68, the taker scores 66.",
        deck_from(TAKER, OTHER, "7h") if _who == "nondealer" else deck_from(OTHER, TAKER, "7h"),
        ((TAKE,) if _who == "nondealer" else (PASS, TAKE), dict(player=_who, knocks="Kc")),
        ((knock("Kc"),), dict(
            flags=(True, True, False), knocker=_who, winner=_who, gin=False, undercut=False, void=False,
            deadwood=(2, 68) if _who == "nondealer" else (68, 2),
            points=(66, 0) if _who == "nondealer" else (0, 66),
            rewards=(66.0, -66.0) if _who == "nondealer" else (-66.0, 66.0),
            knock_card="Kc", upcard="7h", hand_dealer="dealer", player=None, phase=Phase.OVER,
            **{f"{_who}_held": "As 2s 3s 5h 6h 7h 9c 9d 9s 2d",
               f"{'dealer' if _who == 'nondealer' else 'nondealer'}_held": OTHER})))


# ---------------------------------------------------------------------------------------
# The card taken from the pile may not be discarded (option discard_taken_card)
# ---------------------------------------------------------------------------------------
for _allowed in (False, True):
    _rules = Rules(discard_taken_card=_allowed)
    add(f"taken-upcard-discard-{'allowed' if _allowed else 'forbidden'}",
        "The upcard Kd (limit 10) is useless to the non-dealer, who holds A-2-3s 4-5-6h 9-9-9 and 2d. Taking "
        "it to knock with it (K = 2) is forbidden by default: Kd can be neither discarded nor knock-discarded. "
        "Knocking with 2d is fine (Kd left, K = 10 <= 10). With discard_taken_card both Kd moves are legal.",
        deck_from("As 2s 3s 4h 5h 6h 9c 9d 9s 2d", None, "Kd"),
        ((TAKE,), dict(can_discard={"Kd": _allowed, "2d": True}, can_knock={"Kd": _allowed, "2d": True},
                       illegal=() if _allowed else (disc("Kd"), knock("Kd")),
                       phase=Phase.DISCARD, player="nondealer")),
        *([((knock("Kd"),), dict(flags=(True, True, False), knock_card="Kd", deadwood=(2, None)))]
          if _allowed else []),
        rules=_rules)
    add(f"taken-3d-discard-{'allowed' if _allowed else 'forbidden'}",
        "The non-dealer takes the upcard 3d (limit 3). Discarding it is legal only with discard_taken_card; "
        "knocking with it would leave Kh (10 > 3), never legal; knocking with Kh is (K = 3), with As is not.",
        deck_from(**UNDERCUT3),
        ((TAKE,), dict(can_discard={"3d": _allowed}, can_knock={"3d": False, "Kh": True, "As": False})),
        rules=_rules)
    add(f"taken-midhand-discard-{'allowed' if _allowed else 'forbidden'}",
        "Both pass; the non-dealer draws 8c and discards it; the dealer takes 8c from the pile and (by "
        "default) may not throw it straight back.",
        deck_from(None, None, "7h", "8c"),
        ((PASS, PASS, DRAW, disc("8c")), dict(player="dealer")),
        ((TAKE,), dict(taken_card="8c", can_discard={"8c": _allowed}, n_discards=11 if _allowed else 10,
                       illegal=() if _allowed else (disc("8c"),))),
        *([((disc("8c"),), dict(player="nondealer"))] if _allowed else []),
        rules=_rules)


# ---------------------------------------------------------------------------------------
# Knock legality
# ---------------------------------------------------------------------------------------
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
for _id, _up, _drawn, _card, _legal in KNOCK_ROWS:
    add(f"knock-{_id}",
        f"The non-dealer holds A-2-3s 4-5-6h 9-9-9 Kc; both pass on {_up}; they draw {_drawn} and "
        f"{'may' if _legal else 'may not'} knock with {_card} (an ordinary discard is always fine).",
        deck_from(KNOCKER, None, _up, _drawn),
        ((PASS, PASS, DRAW), dict(can_knock={_card: _legal}, can_discard={_card: True},
                                  illegal=() if _legal else (knock(_card),))),
        *([((knock(_card),), dict(flags=(True, True, False), knocker="nondealer"))] if _legal else []))

add("no-knock-at-all-above-the-limit",
    "Upcard 5d, drawn 6c: the best ten cards leave 6 > 5; no knock action may be marked.",
    deck_from(KNOCKER, None, "5d", "6c"),
    ((PASS, PASS, DRAW), dict(knocks="", n_discards=11)))

add("discarding-a-card-not-held-is-illegal",
    "Both pass on 7c; the non-dealer draws 8h. Discarding the dealer's Kh is illegal, and so is knocking "
    "with Kc (8h left: 8 > 7); neither changes anything.",
    deck_from(KNOCKER, JUNK, "7c", "8h"),
    ((PASS, PASS, DRAW), dict(illegal=(disc("Kh"), knock("Kc")), knocks="")))

add("ace-upcard-means-gin-only",
    "The upcard Ad sets the limit to 0. Both pass; the non-dealer draws As onto 2-3-4s (A-2-3-4s 7-7-7 "
    "J-Q-Kd and 5c): the only legal knock is the gin knock with 5c.",
    deck_from("2s 3s 4s 7h 7d 7c Jd Qd Kd 5c", "5s 7s 2h 2d 2c Kh Kc 6d 9c 4h", "Ad", "As"),
    ((), dict(knock_limit=0)),
    ((PASS, PASS, DRAW), dict(knocks="5c")))

FIXED_LIMIT_ROWS = [
    # (knock_limit option, upcard, drawn card, expected limit, knock Kc legal?)
    (10, "Ad", "Kd", 10, True),  # classic gin rummy: the ace upcard does not matter
    (10, "3d", "Kd", 10, True),
    (0, "Kd", "Ac", 0, False),  # gin only, whatever the upcard
    (0, "Kd", "7h", 0, True),  # gin
    (3, "9h", "4c", 3, False),  # 4c left: 4 > 3
    (3, "9h", "3c", 3, True),  # 3c left: 3 <= 3
]
for _option, _up, _drawn, _limit, _legal in FIXED_LIMIT_ROWS:
    add(f"fixed-limit-{_option}-upcard-{_up}-draws-{_drawn}",
        f"knock_limit={_option} fixes the limit whatever the upcard ({_up}); the non-dealer (A-2-3s 4-5-6h "
        f"9-9-9 Kc) draws {_drawn} and {'may' if _legal else 'may not'} knock with Kc.",
        deck_from(KNOCKER, None, _up, _drawn),
        ((), dict(knock_limit=_limit)),
        ((PASS, PASS, DRAW), dict(can_knock={"Kc": _legal})),
        rules=Rules(knock_limit=_option))


# ---------------------------------------------------------------------------------------
# Gin
# ---------------------------------------------------------------------------------------
GIN_ROWS = [
    # (id, dealer's hand, gin_bonus, D, knocker's points)
    # 4s 8h 9h would lay off on A-2-3s / 4-7h / 9-9-9, but not on gin: D = 4+8+9+2 = 23
    ("no-layoffs-on-gin", "4s 8h 9h Ks Kh Kd Qc Jc Tc 2d", 25, 23, 48),
    # the defender has D = 0 and still scores nothing; the knocker gets the bonus only
    ("defender-zero", "Ts Th Td Tc Js Jh Jd Qs Qh Qd", 25, 0, 25),
    ("gin-bonus-20", "4s 8h 9h Ks Kh Kd Qc Jc Tc 2d", 20, 23, 43),
]
for _id, _dealer, _bonus, _d, _points in GIN_ROWS:
    add(f"gin-{_id}",
        "The non-dealer takes the upcard 7h onto 4-5-6h and knocks with Kc: A-2-3s 4-5-6-7h 9-9-9 is gin. "
        f"The knocker scores D + gin_bonus = {_d} + {_bonus} = {_points}; nothing is laid off on gin.",
        deck_from(KNOCKER, _dealer, "7h"),
        ((TAKE, knock("Kc")), dict(flags=(True, True, False), gin=True, undercut=False, winner="nondealer",
                                   deadwood=(0, _d), points=(_points, 0), rewards=(_points, -_points),
                                   laid_off="")),
        rules=Rules(gin_bonus=_bonus))

for _spade, _points in ((False, 76), (True, 152)):
    add(f"gin-on-a-spade-upcard-spade-double-{_spade}",
        "Both pass on the 9s (a spade), the non-dealer draws 5c onto A-2-3-4s 7-7-7 J-Q-Kd and knocks it "
        "face down: gin. The dealer keeps 2-2-2 and 51 deadwood: 51 + 25 = 76, doubled by spade_double.",
        GIN_DEAL,
        ((PASS, PASS, DRAW, knock("5c")), dict(
            flags=(True, True, False), phase=Phase.OVER, player=None, knocker="nondealer", winner="nondealer",
            gin=True, undercut=False, void=False, deadwood=(0, 51), points=(_points, 0), totals=(_points, 0),
            spade_doubled=_spade, knock_card="5c", rewards=(_points, -_points))),
        rules=Rules(spade_double=_spade))

add("gin-with-zero-bonus-and-zero-defender-still-wins-the-hand",
    "gin_bonus 0 and D = 0: the hand scores 0, but the knocker still won it: in a game (target 1) nobody "
    "reaches the target, the knocker is credited a hand won and, with next_dealer 'winner', deals next.",
    deck_from(KNOCKER, "Ts Th Td Tc Js Jh Jd Qs Qh Qd", "7h"),
    ((TAKE, knock("Kc")), dict(flags=(True, False, False), gin=True, winner="nondealer", points=(0, 0),
                               game_over=False, hands_won=(1, 0), dealer="nondealer", player="dealer",
                               phase=Phase.OFFER_NONDEALER)),
    rules=Rules(gin_bonus=0, target_score=1), episode="game")


# ---------------------------------------------------------------------------------------
# Knock vs undercut
# ---------------------------------------------------------------------------------------
UNDERCUT_ROWS = [
    # (id, defender's odd card (with K K K Q Q Q J J J), undercut_bonus, undercut?, winner, points (nd, dealer))
    # K = 7 (7d) in every row.
    ("undercut", "5c", 10, True, "dealer", (0, 12)),  # 7 - 5 + 10
    ("tie-is-undercut", "7c", 10, True, "dealer", (0, 10)),  # K == D: 0 + 10
    ("undercut-bonus-20", "5c", 20, True, "dealer", (0, 22)),
    ("tie-zero-bonus-still-wins", "7c", 0, True, "dealer", (0, 0)),
    ("knocker-wins-by-one", "8s", 10, False, "nondealer", (1, 0)),  # 8 - 7
]
for _id, _odd, _bonus, _undercut, _winner, _points in UNDERCUT_ROWS:
    _gain = float(max(_points))
    add(f"undercut-{_id}",
        "The non-dealer takes the upcard 7d (limit 7) and knocks with Kc, keeping A-2-3s 4-5-6h 9-9-9 and "
        f"7d: K = 7. The dealer holds K K K, Q Q Q, J J J and {_odd}, none of which lays off (no 4s, 3h, 7h, "
        f"9h): D = {card_text(parse_card(_odd))[0]}, undercut_bonus {_bonus}: points {_points}.",
        deck_from(KNOCKER, "Ks Kh Kd Qs Qh Qd Js Jh Jd " + _odd, "7d"),
        ((TAKE, knock("Kc")), dict(
            flags=(True, True, False), undercut=_undercut, gin=False, knocker="nondealer", winner=_winner,
            deadwood=(7, None), points=_points,
            rewards=(_gain, -_gain) if _winner == "nondealer" else (-_gain, _gain))),
        rules=Rules(undercut_bonus=_bonus))

for _last, _d, _points in (("2h", 2, 11), ("3h", 3, 10)):
    add(f"undercut-by-{_d}-against-3",
        "The non-dealer takes the upcard 3d (limit 3) and knocks with Kh: A-2-3s 4-4-4 7-8-9c and 3d, K = 3. "
        f"The dealer holds 5-6-7h T-T-T J-Q-Kd and {_last}: D = {_d} <= 3, undercut: 3 - {_d} + 10 = {_points}.",
        deck_from(**dict(UNDERCUT3, dealer=UNDERCUT3["dealer"].replace("2h", _last))),
        ((TAKE, knock("Kh")), dict(knocker="nondealer", winner="dealer", gin=False, undercut=True,
                                   deadwood=(3, _d), points=(0, _points))))


# ---------------------------------------------------------------------------------------
# Lay-offs and the knocker's tie-break
# ---------------------------------------------------------------------------------------
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
for _id, _dealer, _d, _laid, _points in LAYOFF_ROWS:
    add(f"layoff-{_id}",
        "Both pass on the upcard 7c (limit 7); the non-dealer draws 2d and knocks with Kc, showing A-2-3s "
        f"4-5-6h 9-9-9 and 2d (K = 2). The dealer lays off {_laid or 'nothing'}: D = {_d}.",
        deck_from(KNOCKER, _dealer, "7c", "2d"),
        ((PASS, PASS, DRAW, knock("Kc")), dict(flags=(True, True, False), deadwood=(2, _d), laid_off=_laid,
                                               points=_points, undercut=_points[1] > 0)))

TIEBREAK_ROWS = [
    # (id, dealer's ten, D, laid off, points (nd, dealer))
    # run 2s3s4s: 5s 6s lay off, D = 3c 8h = 11; set 3s3h3d: 3c lays off, D = 5+6+8 = 19
    ("set-leaves-more", "3c 5s 6s 8h Ks Kh Kd Qs Qh Qd", 19, "3c", (13, 0)),
    # run 2s3s4s: As lays off, D = 3+8+7 = 18; set 3s3h3d: 3c lays off, D = 1+8+7 = 16
    ("run-leaves-more", "3c As 8h 7c Ks Kh Kd Qs Qh Qd", 18, "As", (12, 0)),
]
for _id, _dealer, _d, _laid, _points in TIEBREAK_ROWS:
    add(f"knocker-tiebreak-{_id}",
        "The knocker holds 2s 3s 4s 3h 3d and the club run 9-K. 3s can go in the run 2s3s4s (3h 3d left: 6) "
        "or in the set 3s3h3d (2s 4s left: 6): two minimal arrangements. The one leaving the defender more "
        "deadwood after lay-offs is used. Upcard 8d (limit 8); both pass; the knocker draws 6h and knocks "
        "with it (K = 6).",
        deck_from("2s 3s 4s 3h 3d 9c Tc Jc Qc Kc", _dealer, "8d", "6h"),
        ((PASS, PASS, DRAW, knock("6h")), dict(flags=(True, True, False), deadwood=(6, _d), laid_off=_laid,
                                               points=_points)))


# ---------------------------------------------------------------------------------------
# Wall and the turn cap
# ---------------------------------------------------------------------------------------
WALL = deck_from(KNOCKER, JUNK, "5d", [None] * 28 + ["2d"])
WALL_STORY = ("Both pass on the upcard 5d (limit 5). 28 turns of draw-and-discard-the-drawn-card leave 3 cards in "
              "the stock. Turn 29 is the non-dealer's; it draws 2d (deck[49]), leaving two. Holding A-2-3s "
              "4-5-6h 9-9-9 Kc, the non-dealer could now knock with Kc (K = 2) against the dealer's junk (D = 68).")
WALL_APPROACH: tuple[Beat, ...] = (
    ((PASS, PASS) + plain_turns(WALL, 28), dict(flags=(False, False, False), stock_size=3, turns=28,
                                                player="nondealer")),
    ((DRAW,), dict(stock_size=2)),
)

add("wall-voids-the-hand",
    WALL_STORY + " It simply discards 2d: after an ordinary discard two cards remain in the stock, so the hand "
    "ends with no score. Each player's own deadwood is reported (Kc: 10; junk: 68).",
    WALL, *WALL_APPROACH,
    ((disc("2d"),), dict(flags=(True, True, False), void=True, truncated_hand=False, winner=None, knocker=None,
                         points=(0, 0), rewards=(0.0, 0.0), deadwood=(10, 68))))

add("knock-on-the-turn-that-draws-the-stock-to-two",
    WALL_STORY + " It knocks with Kc: allowed and scored, 68 - 2 = 66.",
    WALL, *WALL_APPROACH,
    ((), dict(can_knock={"Kc": True})),
    ((knock("Kc"),), dict(flags=(True, True, False), void=False, winner="nondealer", points=(66, 0))))

add("wall-is-checked-before-the-turn-cap",
    WALL_STORY + " The 29th turn both hits the wall and completes max_turns_per_hand = 29: it is a wall "
    "(terminated), not a turn cap (truncated).",
    WALL, *WALL_APPROACH,
    ((disc("2d"),), dict(flags=(True, True, False), void=True, truncated_hand=False)),
    rules=Rules(max_turns_per_hand=29))

add("wall-in-a-game-keeps-the-dealer",
    WALL_STORY + " It discards 2d: a void hand in a game; the same dealer deals again, scores stay 0-0.",
    WALL, *WALL_APPROACH,
    ((disc("2d"),), dict(flags=(True, False, False), void=True, hand_dealer="dealer", game_over=False,
                         dealer="dealer", phase=Phase.OFFER_NONDEALER, player="nondealer", totals=(0, 0),
                         rewards=(0.0, 0.0), turns=0, stock_size=31)),
    episode="game")

add("unshuffled-deck-walls-after-29-turns",
    "The unshuffled deck; both pass and every turn draws and discards the drawn card. With 31 stock cards "
    "the wall comes after turn 29: void, no score, each player's own deadwood (57 and 56, no melds).",
    UNSHUFFLED,
    ((PASS, PASS) + plain_turns(UNSHUFFLED, 29), dict(
        stock_size=2, turns=29, flags=(True, True, False), phase=Phase.OVER, void=True, truncated_hand=False,
        knocker=None, winner=None, points=(0, 0), deadwood=(57, 56))))

for _cap in (1, 2, 3, 5, 28, 29, 30):
    _turns, _truncated = min(_cap, 29), _cap < 29
    add(f"turn-cap-{_cap}",
        "The unshuffled deck; both pass and every turn draws and discards the drawn card. Passing on the "
        f"upcard is not a turn; each draw + discard is one. max_turns_per_hand {_cap}: "
        + ("after the discard that completes the cap the hand is void and the episode truncated."
           if _truncated else "the wall after turn 29 comes first (terminated, not truncated)."),
        UNSHUFFLED,
        ((PASS, PASS), dict(turns=0)),
        *[(plain_turns(UNSHUFFLED, 1, first=i), dict(flags=(False, False, False), turns=i + 1))
          for i in range(_turns - 1)],
        (plain_turns(UNSHUFFLED, 1, first=_turns - 1), dict(
            flags=(True, not _truncated, _truncated), turns=_turns, void=True, truncated_hand=_truncated,
            winner=None, knocker=None, points=(0, 0), rewards=(0.0, 0.0))),
        rules=Rules(max_turns_per_hand=_cap))

add("turn-cap-counts-taking-the-upcard-as-a-turn",
    "max_turns_per_hand 1: the non-dealer takes the upcard 7h and discards Kc: turn 1, the cap.",
    deck_from(KNOCKER, None, "7h"),
    ((TAKE, disc("Kc")), dict(flags=(True, False, True), truncated_hand=True, turns=1)),
    rules=Rules(max_turns_per_hand=1))

add("knock-on-the-last-allowed-turn-is-scored",
    KNOCK_WIN_STORY + " max_turns_per_hand 1: the knock on turn 1 ends the hand normally.",
    KNOCK_WIN,
    ((TAKE, knock("Kc")), dict(flags=(True, True, False), void=False, truncated_hand=False, points=(66, 0))),
    rules=Rules(max_turns_per_hand=1))

add("turn-cap-in-a-game-is-a-void-hand-with-the-same-dealer",
    "max_turns_per_hand 2 in a game: both pass, two plain turns; the hand is void (not the episode: no "
    "truncation), the same dealer deals the next hand, scores stay 0-0.",
    UNSHUFFLED,
    ((PASS, PASS) + plain_turns(UNSHUFFLED, 2), dict(
        flags=(True, False, False), void=True, truncated_hand=True, game_over=False, dealer="dealer",
        phase=Phase.OFFER_NONDEALER, player="nondealer", totals=(0, 0), turns=0)),
    rules=Rules(max_turns_per_hand=2), episode="game")


# ---------------------------------------------------------------------------------------
# Next dealer
# ---------------------------------------------------------------------------------------
for _rule in ("winner", "loser", "alternate"):
    for _deal, _deck, _story, _winner, _points in (
        ("knock", KNOCK_WIN, KNOCK_WIN_STORY, "nondealer", (66, 0)),
        ("undercut", UNDERCUT7, UNDERCUT7_STORY, "dealer", (0, 12)),
    ):
        _loser = "dealer" if _winner == "nondealer" else "nondealer"
        _next = {"winner": _winner, "loser": _loser, "alternate": "nondealer"}[_rule]
        _gain = float(max(_points))
        add(f"next-dealer-{_rule}-after-{_deal}",
            _story + f" In a game with next_dealer '{_rule}' the {_next} deals the next hand.",
            _deck,
            ((TAKE, knock("Kc")), dict(
                flags=(True, False, False), winner=_winner, hand_dealer="dealer", dealer=_next,
                player="dealer" if _next == "nondealer" else "nondealer", phase=Phase.OFFER_NONDEALER,
                totals=_points, scores=_points, game_over=False,
                hands_won=(1, 0) if _winner == "nondealer" else (0, 1),
                rewards=(_gain, -_gain) if _winner == "nondealer" else (-_gain, _gain))),
            rules=Rules(next_dealer=_rule), episode="game")


# ---------------------------------------------------------------------------------------
# Spade doubling
# ---------------------------------------------------------------------------------------
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
for _id, _up, _on, _limit, _drawn, _dealer, _points, _doubled in SPADE_ROWS:
    _gain = float(max(_points))
    add(f"spade-double-{_id}",
        f"The non-dealer (A-2-3s 4-5-6h 9-9-9 Kc) and the dealer pass on {_up}; the non-dealer draws {_drawn} "
        f"and knocks with Kc; spade_double={_on}, knock_limit={_limit!r}: points {_points}.",
        deck_from(KNOCKER, _dealer, _up, _drawn),
        ((PASS, PASS, DRAW, knock("Kc")), dict(
            flags=(True, True, False), spade_doubled=_doubled, points=_points,
            rewards=(_gain, -_gain) if _points[0] else (-_gain, _gain))),
        rules=Rules(spade_double=_on, knock_limit=_limit))


# ---------------------------------------------------------------------------------------
# Game end and game bonuses
# ---------------------------------------------------------------------------------------
for _target, _over in ((1, True), (65, True), (66, True), (67, False), (100, False)):
    add(f"game-target-{_target}",
        KNOCK_WIN_STORY + f" In a game to {_target} the non-dealer's 66 "
        + ("ends it." if _over else "does not: a new hand is dealt, the winner deals."),
        KNOCK_WIN,
        ((TAKE, knock("Kc")), dict(
            flags=(True, _over, False), game_over=_over, game_winner="nondealer" if _over else None,
            scores=(66, 0), rewards=(66.0, -66.0),
            **(dict(phase=Phase.OVER, player=None) if _over
               else dict(dealer="nondealer", player="dealer", phase=Phase.OFFER_NONDEALER)))),
        rules=Rules(target_score=_target), episode="game")

GAME_BONUS_ROWS = [
    # (id, deal, story, game_bonuses, spade_double, hand points, final scores (nd, dealer))
    ("off", KNOCK_WIN, KNOCK_WIN_STORY, False, False, (66, 0), (66, 0)),
    ("shutout", KNOCK_WIN, KNOCK_WIN_STORY, True, False, (66, 0), (382, 0)),  # (66 + 25 + 100) * 2
    ("shutout-undercut", UNDERCUT7, UNDERCUT7_STORY, True, False, (0, 12), (0, 274)),  # (12 + 25 + 100) * 2
    # the spade upcard 7s: the non-dealer passes, draws 2d and knocks: 2 * 66 = 132
    ("spade-doubles-hand-not-bonuses", deck_from(KNOCKER, JUNK, "7s", "2d"),
     "Both pass on the upcard 7s; the non-dealer draws 2d and knocks with Kc: 2 * 66 = 132.",
     True, True, (132, 0), (514, 0)),  # (2*66 + 25 + 100) * 2
]
for _id, _deck, _story, _bonuses, _spade, _hand, _final in GAME_BONUS_ROWS:
    _winner = "nondealer" if _final[0] else "dealer"
    _gain = float(max(_final))
    add(f"game-bonuses-{_id}",
        _story + f" In a game to 10 (game_bonuses={_bonuses}) that hand ends the game: final {_final}.",
        _deck,
        ((PASS, PASS, DRAW, knock("Kc")) if _spade else (TAKE, knock("Kc")), dict(
            flags=(True, True, False), game_over=True, game_winner=_winner, points=_hand, scores=_final,
            rewards=(_gain, -_gain) if _winner == "nondealer" else (-_gain, _gain))),
        rules=Rules(target_score=10, game_bonuses=_bonuses, spade_double=_spade), episode="game")

for _bonuses, _final in ((False, 11), (True, (11 + 25 + 100) * 2)):
    add(f"game-end-undercut-bonuses-{_bonuses}",
        UNDERCUT3_STORY + f" In a game to 11 (game_bonuses={_bonuses}) the dealer's 11 ends it: {_final}.",
        deck_from(**UNDERCUT3),
        ((TAKE, knock("Kh")), dict(flags=(True, True, False), phase=Phase.OVER, game_over=True,
                                   game_winner="dealer", totals=(0, _final), scores=(0, _final),
                                   points=(0, 11), rewards=(-float(_final), float(_final)))),
        rules=Rules(target_score=11, game_bonuses=_bonuses), episode="game")


# ---------------------------------------------------------------------------------------
# Playing a scenario
# ---------------------------------------------------------------------------------------
_WHO_KEYS = {"knocker", "winner", "game_winner"}
_BOOL_RESULTS = {"gin", "undercut", "void", "truncated_hand", "spade_doubled", "game_over"}
_PAIR_RESULTS = {"deadwood", "points", "scores"}


def _texts(cards: str) -> set[str]:
    return {card_text(c) for c in parse_cards(cards)}


def play(scn: Scenario, table_cls, dealer: int) -> None:
    """Play ``scn`` on a new ``table_cls`` (an ``engines`` table) with agent ``dealer`` dealing,
    asserting every expected value after each beat."""
    seat = {"nondealer": 1 - dealer, "dealer": dealer}
    t = table_cls(scn.deck, dealer, scn.rules, scn.episode)

    def who(agent: int) -> str | None:
        return None if agent < 0 else "dealer" if agent == dealer else "nondealer"

    def pair(values) -> tuple:
        return values[seat["nondealer"]], values[seat["dealer"]]

    def card(c: int) -> str | None:
        return None if c < 0 else card_text(c)

    def observe(key: str, want):
        """(got, want) in the scenario's notation."""
        if key == "phase":
            return Phase(t.phase()), want
        if key in ("player", "dealer"):
            return who(t.player() if key == "player" else t.dealer()), want
        if key == "legal":
            return t.legal(), want
        if key in ("discards", "knocks"):
            lo = 0 if key == "discards" else KNOCK
            return {card_text(a - lo) for a in t.legal() if lo <= a < lo + NUM_CARDS}, _texts(want)
        if key == "n_discards":
            return sum(a < NUM_CARDS for a in t.legal()), want
        if key in ("can_discard", "can_knock"):
            act = disc if key == "can_discard" else knock
            return {c: act(c) in t.legal() for c in want}, want
        if key in ("nondealer_hand", "dealer_hand"):
            return {card_text(c) for c in t.hand(seat[key[: -len("_hand")]])}, _texts(want)
        if key == "pile":
            return [card_text(c) for c in t.pile()], want.split()
        if key == "stock_top":
            return card_text(t.deck()[NUM_CARDS - t.number("stock_size")]), want
        if key in ("stock_size", "turns", "knock_limit"):
            return t.number(key), want
        if key == "taken_card":
            return card(t.number(key)), want
        if key == "replays_deck":
            return t.deck() == list(scn.deck), want
        if key in ("totals", "hands_won"):
            return pair(t.totals() if key == "totals" else t.hands_won()), want
        if key in ("taken", "discarded", "declined"):
            return pair([{card_text(c) for c in t.public(key, p)} for p in (0, 1)]), tuple(map(_texts, want))
        if key == "flags":
            return t.flags(), want
        if key == "rewards":
            return pair(t.rewards()), tuple(float(w) for w in want)
        # the hand result
        if key in _WHO_KEYS or key == "hand_dealer":
            return who(t.result("dealer" if key == "hand_dealer" else key)), want
        if key in _BOOL_RESULTS:
            return bool(t.result(key)), want
        if key in _PAIR_RESULTS:
            return pair(t.result(key)), want
        if key in ("knock_card", "upcard"):
            return card(t.result(key)), want
        if key in ("nondealer_held", "dealer_held"):
            return {card_text(c) for c in t.result("hands")[seat[key[: -len("_held")]]]}, _texts(want)
        if key == "laid_off":
            return {card_text(c) for c in t.result(key)}, _texts(want)
        raise KeyError(f"unknown expected key {key!r} in scenario {scn.name}")

    for n, (actions, expected) in enumerate(scn.script):
        for a in actions:
            assert a in t.legal(), f"{scn.name}, beat {n}: action {a} is not legal ({sorted(t.legal())})"
            t.step(a)
        for key, want in expected.items():
            if key == "laid_off" and key not in t.extra_results:
                continue  # only the fast engine reports it
            if key == "illegal":
                before = (t.phase(), t.player())
                for a in want:
                    with pytest.raises(ValueError):
                        t.step(a)
                    assert (t.phase(), t.player()) == before, f"{scn.name}: illegal {a} changed the state"
                continue
            got, want = observe(key, want)
            if isinstance(want, tuple) and len(want) == 2:  # a pair: None = not asserted
                got = tuple(None if w is None else g for g, w in zip(got, want))
            assert got == want, f"{scn.name} ({scn.story}) beat {n}: {key} = {got!r}, expected {want!r}"
