"""``eaai_simple``: Neller's SimpleGinRummyPlayer, one worked example per rule of its Java source.

Draw: the face-up card only if it is in some meld of the hand plus the card. Discard: uniformly
among the least-deadwood cards (T, J, Q, K tie), never the card just taken from the pile, never a
{drawn, discarded} pair already played this hand (a memory per game, reset each hand). Knock: as
soon as it may. States are real deals (``deck_from``) or observations built field by field.
"""

from __future__ import annotations

import numpy as np
import okgin_agents as agents
import pytest
from okgin_agents.eaai_simple import EaaiSimpleAgent, in_a_meld

from okgin_env import OBS_SIZE, VectorGame, obs_field
from okgin_env.game.actions import DRAW_STOCK, KNOCK, NUM_ACTIONS, PASS, TAKE_DISCARD
from okgin_env.game.cards import NUM_CARDS, deck_from, parse_card, parse_cards
from okgin_env.game.core import Phase
from okgin_env.game.melds import deadwood_after_discard
from okgin_env.game.observation import DEADWOOD_SCALE, STOCK_SCALE
from okgin_env.game.rules import Rules

TEN = Rules(knock_limit=10, gin_bonus=25, undercut_bonus=25, next_dealer="alternate")  # the EAAI numbers
DEALER = 0


def first_decision(deck: list[int], rules: Rules = TEN):
    game = VectorGame(1, rules)
    return game, game.reset(decks=deck, dealers=DEALER)


def act(bot, out) -> int:
    return int(bot.act(out.observation, out.legal_action_mask)[0])


def observation(hand: str, phase: int, top: str | None = None, taken: str | None = None,
                knock_limit: int = 10, stock: int = 20) -> tuple[np.ndarray, np.ndarray]:
    """(1, OBS_SIZE) observation and (1, 107) mask of a decision, built field by field: a draw
    (10 cards; ``top`` on the pile) or a discard (11 cards; ``taken`` the card just taken from the
    pile, which the rules forbid to discard)."""
    obs = np.zeros((1, OBS_SIZE), np.float32)
    cards = parse_cards(hand)
    obs_field(obs, "own_hand")[0, cards] = 1
    if top:
        obs_field(obs, "discard_top")[0, parse_card(top)] = 1
    obs_field(obs, "knock_limit")[0, knock_limit] = 1
    obs_field(obs, "stock_size")[0, 0] = stock / STOCK_SCALE
    obs_field(obs, "phase")[0, phase] = 1
    mask = np.zeros((1, NUM_ACTIONS), bool)
    if phase == Phase.DISCARD:
        held = np.zeros((1, NUM_CARDS), bool)
        held[0, cards] = True
        after = deadwood_after_discard(held)[0]
        obs_field(obs, "discard_deadwood")[0, cards] = (DEADWOOD_SCALE - after[cards]) / DEADWOOD_SCALE
        ok = np.array([c for c in cards if taken is None or c != parse_card(taken)])
        mask[0, ok] = True
        mask[0, KNOCK + ok[after[ok] <= knock_limit]] = True
        if taken:
            obs_field(obs, "cannot_discard")[0, parse_card(taken)] = 1
    elif phase in (Phase.OFFER_NONDEALER, Phase.OFFER_DEALER):
        mask[0, [TAKE_DISCARD, PASS]] = True
    elif phase == Phase.FORCED_DRAW:
        mask[0, DRAW_STOCK] = True
    else:
        mask[0, [DRAW_STOCK, TAKE_DISCARD]] = True
    return obs, mask


def games(obs: np.ndarray, mask: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """``n`` copies of a decision as n different games (their scores differ): identical rows
    would be one game to the agent's memory of the hand."""
    obs = np.repeat(obs, n, 0)
    obs_field(obs, "scores")[:, 0] = np.arange(n) / 10000
    return obs, np.repeat(mask, n, 0)


# ------------------------------------------------------------------ draw

HAND = "5c 6c 7c 5s 6s 7s Ah 2h Kd Qh"  # runs 5-7c and 5-7s; Ah 2h Kd Qh deadwood (23)
NEAR = "5c 6c 7c 5s 6s 7s Ah 2h 3h Kd"  # the same runs, A-2-3h; only Kd deadwood (10)
JUNK = "Ks Kh Qs 9c 9d 6h 6d 5h 2d 3c"


@pytest.mark.parametrize("hand, upcard, eaai, simple", [
    (HAND, "8c", TAKE_DISCARD, TAKE_DISCARD),  # lengthens 5-7c: melded in the best arrangement too
    (HAND, "7d", TAKE_DISCARD, PASS),  # a set 7c 7s 7d exists, though the best arrangement keeps both runs
    (HAND, "Qd", PASS, PASS),  # Qd with Qh, Kd: two cards, no meld
    (NEAR, "Ad", PASS, TAKE_DISCARD),  # no meld; okgin's simple takes it because it then knocks (Kd out, 1 left)
])
def test_takes_the_face_up_card_only_if_it_is_in_some_meld(hand, upcard, eaai, simple):
    _, out = first_decision(deck_from(hand, JUNK, upcard))
    assert obs_field(out.observation, "phase")[0].argmax() == Phase.OFFER_NONDEALER
    assert act(agents.make("eaai_simple", seed=0), out) == eaai
    assert act(agents.make("simple", seed=0), out) == simple


def test_in_a_meld_checks_sets_and_runs_on_either_side():
    def check(hand: str, card: str) -> bool:
        ms = np.zeros(4, np.int64)
        for c in parse_cards(hand):
            ms[c // 13] |= 1 << (c % 13)
        return bool(in_a_meld(ms, parse_card(card)))

    assert check("4h 5h", "6h") and check("5h 7h", "6h") and check("7h 8h", "6h")
    assert check("6s 6d", "6h") and check("6s 6d 6c", "6h")
    assert not check("5h 8h", "6h") and not check("6s 5s", "6h") and not check("Qh Kh", "Ah")  # no Q-K-A
    assert not check("Jh Qh", "Ah") and check("2h 3h", "Ah") and check("Jh Qh", "Kh")


def test_draws_from_the_stock_when_it_does_not_take():
    obs, mask = observation(HAND, Phase.DRAW, top="Qd")
    assert EaaiSimpleAgent(seed=0).act(obs, mask)[0] == DRAW_STOCK
    obs, mask = observation(HAND, Phase.DRAW, top="4s")
    assert EaaiSimpleAgent(seed=0).act(obs, mask)[0] == TAKE_DISCARD
    obs, mask = observation(HAND, Phase.FORCED_DRAW, top="4s")  # both passed: the stock is the only move
    assert EaaiSimpleAgent(seed=0).act(obs, mask)[0] == DRAW_STOCK


# ------------------------------------------------------------------ discard

def test_discards_uniformly_among_the_least_deadwood_cards():
    """Melds A-2-3s 4-5-6d 7-8-9c and the Th and Jc: throwing either leaves 10, so each is thrown
    about half of the time, never a melded card. With 7c 8c Th Jc Qh left over, the T, J and Q
    tie (35 left); okgin's simple always throws the highest rank, the queen."""
    obs, mask = observation("As 2s 3s 4d 5d 6d 7c 8c 9c Th Jc", Phase.DISCARD, knock_limit=0)
    cards = parse_cards("Th Jc")
    picks = EaaiSimpleAgent(seed=3).act(*games(obs, mask, 4000))
    assert set(picks) == set(cards)
    share = (picks == cards[0]).mean()
    assert 0.46 < share < 0.54  # 4000 draws of a fair coin: outside this 1 time in 10^4
    obs, mask = observation("As 2s 3s 4d 5d 6d 7c 8c Th Jc Qh", Phase.DISCARD, knock_limit=0)
    picks = EaaiSimpleAgent(seed=4).act(*games(obs, mask, 3000))
    assert set(picks) == set(parse_cards("Th Jc Qh"))  # 7c 8c (15) stay: T, J and Q each leave 35
    assert all(agents.make("simple", seed=s).act(obs, mask)[0] == parse_card("Qh") for s in range(5))


def test_never_discards_the_card_just_taken_even_where_the_rules_allow_it():
    """A-2-3s K-K-K and 5-6-7-8h: gin already. The 9h melds (7-8-9h) and is taken. Throwing the 9h
    or the 5h both leave gin; discard_taken_card=True lets it throw the 9h, but Simple never
    throws the card it just took: always the 5h, face down, for gin."""
    rules = Rules(knock_limit=10, discard_taken_card=True)
    deck = deck_from("5h 6h 7h 8h As 2s 3s Kc Kd Ks", "Qs Qh Js 9c 9d 6c 6d Th 2d 3c", "9h")
    for seed in range(20):
        game, out = first_decision(deck, rules)
        bot = EaaiSimpleAgent(seed=seed)
        assert act(bot, out) == TAKE_DISCARD
        out = game.step([TAKE_DISCARD])
        assert out.legal_action_mask[0, parse_card("9h")]  # the rules allow it ...
        assert act(bot, out) == KNOCK + parse_card("5h")  # ... Simple does not


# The pair guard. Runs T-Q of spades and clubs, A-2-3s; the Qd is deadwood (in a set with Qs Qc
# only if both runs break). Drawing the Kh from the stock ties Kh and Qd at 10: Simple throws one
# at random. When it throws the Qd, it holds the Kh; the Qd comes back on the pile and melds
# (Qs Qc Qd), so Simple takes it -- and the least-deadwood discard is now the Kh, which would play
# the pair {Kh, Qd} again. The guard forbids it: Simple throws the 3s, the next best (23 left).
RUNS = "Ts Js Qs Tc Jc Qc As 2s 3s"


def guard_sequence(bot: EaaiSimpleAgent, other: tuple | None = None) -> tuple[int, int]:
    """Play the four decisions of the story above; returns (first discard, last discard). With
    ``other`` (an observation and mask of another game), that game's row is put first in every batch."""
    def step(obs, mask):
        if other is not None:
            obs, mask = np.concatenate([other[0], obs]), np.concatenate([other[1], mask])
            return int(bot.act(obs, mask)[1])
        return int(bot.act(obs, mask)[0])

    # its first decision of the hand (a full stock: the non-dealer took the upcard)
    assert step(*observation(RUNS + " Qd", Phase.DRAW, top="5h", knock_limit=5, stock=31)) == DRAW_STOCK
    first = step(*observation(RUNS + " Qd Kh", Phase.DISCARD, knock_limit=5))
    assert first in parse_cards("Qd Kh")
    if first != parse_card("Qd"):
        return first, -1
    assert step(*observation(RUNS + " Kh", Phase.DRAW, top="Qd", knock_limit=5)) == TAKE_DISCARD
    last = step(*observation(RUNS + " Qd Kh", Phase.DISCARD, taken="Qd", knock_limit=5))
    return first, last


@pytest.mark.parametrize("other", [None, "4h 5h 6h 7d 8d 9d Tc Td Th 2c Kd"])
def test_never_repeats_a_drawn_discarded_pair_in_a_hand(other):
    """Also with another game's decision in the same batches, in another row: the memory is the game's."""
    other = None if other is None else observation(other, Phase.DISCARD, knock_limit=5)
    played = 0
    for seed in range(16):
        first, last = guard_sequence(EaaiSimpleAgent(seed=seed), other=other)
        if first == parse_card("Qd"):
            played += 1
            assert last == parse_card("3s")
    assert played >= 3
    # without the memory of the hand (a fresh agent), the same decision throws the Kh
    obs, mask = observation(RUNS + " Qd Kh", Phase.DISCARD, taken="Qd", knock_limit=5)
    assert EaaiSimpleAgent(seed=0).act(obs, mask)[0] == parse_card("Kh")


def test_the_memory_starts_again_with_each_hand():
    """After the story, a new hand (its upcard offer) with the same cards: the pair may be played."""
    for seed in range(12):
        bot = EaaiSimpleAgent(seed=seed)
        if guard_sequence(bot)[0] != parse_card("Qd"):
            continue
        obs, mask = observation(RUNS + " Kh", Phase.OFFER_NONDEALER, top="Qd", knock_limit=5)
        assert int(bot.act(obs, mask)[0]) == TAKE_DISCARD
        obs, mask = observation(RUNS + " Qd Kh", Phase.DISCARD, taken="Qd", knock_limit=5)
        assert int(bot.act(obs, mask)[0]) == parse_card("Kh")
        return
    pytest.fail("no seed threw the Qd first")


# ------------------------------------------------------------------ knock

def test_knocks_as_soon_as_it_may_and_never_plays_on_for_gin():
    """The 7h completes 5-6-7-8h beside 9-9-9-9; after throwing the Kc the deadwood is Ad 2c, 3 <= 10:
    Simple takes and knocks at once. Two tens of which one must stay: it knocks with 10."""
    deck = deck_from("5h 6h 8h 9c 9d 9s 9h Ad 2c Kc", "Ks Qh Qs Jd Tc 8d 7s 6c 4c 3d", "7h")
    game, out = first_decision(deck)
    bot = EaaiSimpleAgent(seed=0)
    assert act(bot, out) == TAKE_DISCARD
    out = game.step([TAKE_DISCARD])
    assert act(bot, out) == KNOCK + parse_card("Kc")
    obs, mask = observation(RUNS + " Qd Kh", Phase.DISCARD, knock_limit=10)  # 10 left after either ten
    assert int(EaaiSimpleAgent(seed=0).act(obs, mask)[0]) in KNOCK + np.array(parse_cards("Qd Kh"))


def test_plays_legal_whole_games_under_the_ten_point_rules():
    game = VectorGame(64, TEN, episode="game", seed=1)
    out = game.reset()
    bots = [EaaiSimpleAgent(seed=1), EaaiSimpleAgent(seed=2)]
    for _ in range(20000):
        live = out.current_player >= 0
        if not live.any():
            break
        actions = np.zeros(64, np.int64)
        for p, bot in enumerate(bots):
            rows = np.flatnonzero(live & (out.current_player == p))
            actions[rows] = bot.act(out.observation[rows], out.legal_action_mask[rows])
        assert out.legal_action_mask[np.flatnonzero(live), actions[live]].all()
        out = game.step(actions)
    assert (out.current_player < 0).all()
