"""The PettingZoo AEC environment: PettingZoo's own API, seed and render tests, replays
against ``VectorGame``, rewards, infos, ``state()`` and error messages.

Scripted hands reuse the worked examples of ``test_rules.py``: the non-dealer holds
A-2-3s 4-5-6h 9-9-9 with 5h/2d/Kc variations and the dealer holds junk, so the numbers in the
comments can be checked by hand against docs/RULES.md.
"""

from __future__ import annotations

import functools
import warnings

import numpy as np
import pettingzoo
import pytest
from pettingzoo.test import api_test, render_test, seed_test

import okgin_env
from okgin_env import OBS_SIZE, VectorGame, obs_field
from okgin_env.envs.aec import STATE_FIELDS, STATE_SIZE, EnvConfig
from okgin_env.game.actions import (
    DRAW_STOCK,
    KNOCK,
    NUM_ACTIONS,
    PASS,
    TAKE_DISCARD,
    knock_action,
)
from okgin_env.game.cards import card_text, cards_of, deck_from, parse_card
from okgin_env.game.rules import Rules
from okgin_env.render.text import describe_hand

# Player 0 (non-dealer) takes the upcard 7h onto 5-6h and knocks with Kc: A-2-3s 5-6-7h 9-9-9
# and 2d, K = 2. The dealer's junk (no 4s 4h 8h 9h: nothing lays off) has D = 68: 66 points.
KNOCK_WIN = deck_from("As 2s 3s 5h 6h 9c 9d 9s 2d Kc", "Kh Qd Js Tc 8d 6s 5c 4d 3h 2c", "7h")
KNOCK_WIN_ACTIONS = [TAKE_DISCARD, knock_action(parse_card("Kc"))]

OPTION_SETS = [
    {},
    {"episode": "game", "target_score": 30},
    {"knock_limit": 10, "spade_double": True, "reward": "win"},
    {"episode": "game", "target_score": 40, "next_dealer": "alternate", "game_bonuses": True,
     "discard_taken_card": True},
    {"max_turns_per_hand": 3},  # truncation by the turn cap
]


def quick_action(obs: np.ndarray, mask: np.ndarray, rng: np.random.Generator) -> int:
    """A legal action that ends hands quickly (uniform random play rarely knocks, so a random
    game to 100 takes thousands of decisions): knock whenever legal, otherwise discard the card
    whose discard leaves the least deadwood (observation field ``discard_deadwood``), and draw or
    take at random."""
    legal = np.flatnonzero(mask)
    if legal[0] >= DRAW_STOCK:
        return int(legal[rng.integers(len(legal))])
    score = obs_field(obs, "discard_deadwood")
    best = max((a for a in legal if a < DRAW_STOCK), key=lambda a: (a >= KNOCK, score[a % 52]))
    return int(best)


def random_episode(e, rng, max_steps=5000):
    """Play ``e`` (already reset) to the end with ``quick_action``; return per-step reward dicts."""
    history = []
    for _ in range(max_steps):
        if not e.agents:
            return history
        obs, _, term, trunc, _ = e.last()
        if term or trunc:
            e.step(None)
        else:
            e.step(quick_action(obs["observation"], obs["action_mask"], rng))
        history.append(dict(e.rewards))
    raise AssertionError("episode did not end")


# ------------------------------------------------------------------- PettingZoo's tests

# api_test resets with options={"options": 1}, which the env ignores with its own warning (its
# warnings about Dict observations are filtered in pyproject.toml).
@pytest.mark.filterwarnings("ignore:ignoring unknown reset option")
@pytest.mark.parametrize("options", OPTION_SETS, ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()) or "default")
def test_pettingzoo_api_test(options):
    api_test(okgin_env.env(**options), num_cycles=300)


@pytest.mark.parametrize("options", OPTION_SETS[:4], ids=["default", "game", "win", "game-options"])
def test_pettingzoo_seed_test(options):
    seed_test(functools.partial(okgin_env.env, **options), num_cycles=100)


@pytest.mark.parametrize("episode", ["hand", "game"])
def test_pettingzoo_render_test(episode, capsys):
    render_test(functools.partial(okgin_env.env, episode=episode),
                custom_tests={"ansi": lambda text: isinstance(text, str) and "Knock limit" in text})


def test_metadata_spaces_and_agents():
    e = okgin_env.raw_env()
    assert e.metadata["name"] == "okgin_v0"
    assert e.metadata["render_modes"] == ["ansi", "human", "rgb_array"] and e.metadata["is_parallelizable"] is False
    assert e.possible_agents == ["player_0", "player_1"]
    space = e.observation_space("player_0")
    assert space["observation"].shape == (OBS_SIZE,) and space["observation"].dtype == np.float32
    assert space["action_mask"].shape == (NUM_ACTIONS,) and space["action_mask"].dtype == np.int8
    assert e.action_space("player_1").n == NUM_ACTIONS
    assert e.state_space.shape == (STATE_SIZE,)


@pytest.mark.skipif(not hasattr(pettingzoo, "make"), reason="PettingZoo < 1.27 has no registry (okgin_env.env() is the "
                    "way there; .ci/run checks the envs at pyproject's floors)")
def test_pettingzoo_registry():
    e = pettingzoo.make("aec", "okgin/OklahomaGin-v0", episode="game")
    e.reset(seed=0)
    assert e.unwrapped.config.episode == "game"


# ----------------------------------------------------------------- replay vs VectorGame

@pytest.mark.parametrize("dealer,seed", [(0, 1), (1, 2), (1, 3)])
def test_replay_matches_vector_game(dealer, seed):
    """A fixed deck and random legal actions through the AEC env and through VectorGame give the
    same observations (own_hand checked field by field, the whole vector too) and rewards."""
    rng = np.random.default_rng(seed)
    deck = np.random.default_rng(100 + seed).permutation(52)
    e = okgin_env.env()
    e.reset(seed=seed, options={"deck": deck.tolist(), "dealer": dealer})
    g = VectorGame(1, seed=seed)
    out = g.reset(decks=deck, dealers=dealer)
    totals = {"player_0": 0.0, "player_1": 0.0}
    while e.agents:
        agent = e.agent_selection
        obs, _, term, trunc, _ = e.last()
        if term or trunc:
            e.step(None)
            continue
        p = int(out.current_player[0])
        assert agent == f"player_{p}"
        own = obs_field(obs["observation"], "own_hand")
        np.testing.assert_array_equal(own, obs_field(out.observation[0], "own_hand"))
        np.testing.assert_array_equal(own, g.state.hands[0, p])
        np.testing.assert_array_equal(obs["observation"], out.observation[0])
        np.testing.assert_array_equal(obs["action_mask"].astype(bool), out.legal_action_mask[0])
        other = f"player_{1 - p}"
        np.testing.assert_array_equal(e.observe(other)["observation"], g.observe(1 - p)[0])
        assert not e.observe(other)["action_mask"].any()
        legal = np.flatnonzero(obs["action_mask"])
        a = int(legal[rng.integers(len(legal))])
        e.step(a)
        out = g.step(np.array([a]))
        for name in totals:
            totals[name] += e.rewards.get(name, 0.0)
    assert out.terminated[0] or out.truncated[0]
    expected = out.rewards[0] * 0.02
    assert totals["player_0"] == pytest.approx(expected[0]) and totals["player_1"] == pytest.approx(expected[1])


def test_scripted_knock_rewards_and_hand_result():
    e = okgin_env.raw_env()
    e.reset(options={"deck": [card_text(c) for c in KNOCK_WIN], "dealer": 1})
    assert e.agent_selection == "player_0"
    for a in KNOCK_WIN_ACTIONS:
        e.step(a)
    assert e.terminations == {"player_0": True, "player_1": True}
    assert e.rewards == {"player_0": pytest.approx(66 * 0.02), "player_1": pytest.approx(-66 * 0.02)}
    fixed = e.infos["player_1"]["hand_result"]
    assert fixed is e.infos["player_0"]["hand_result"]
    assert fixed["knock_card"] == parse_card("Kc") and fixed["hands"].shape == (2, 52)  # numbers and arrays only
    info = describe_hand(fixed)  # the readable form
    assert info["knocker"] == 0 and info["winner"] == 0 and not info["gin"] and not info["undercut"]
    assert info["deadwood"] == [2, 68] and info["points"] == [66, 0]
    assert info["melds"][0] == [["9s", "9d", "9c"], ["As", "2s", "3s"], ["5h", "6h", "7h"]]
    assert info["deadwood_cards"][0] == ["2d"] and info["knock_card"] == "Kc" and info["knock_limit"] == 7
    assert not e.infos["player_0"]["action_mask"].any()
    # the dead agents step None: player_1 first, then player_0, with the reward on last()
    assert e.agent_selection == "player_1"
    assert e.last()[1] == pytest.approx(-1.32)
    e.step(None)
    assert e.agent_selection == "player_0" and e.last()[1] == pytest.approx(1.32)
    e.step(None)
    assert e.agents == []


@pytest.mark.parametrize("reward,expected", [("points", 66 * 0.5), ("win", 1.0)])
def test_reward_modes_and_scale(reward, expected):
    e = okgin_env.raw_env(reward=reward, reward_scale=0.5)
    e.reset(options={"deck": KNOCK_WIN, "dealer": 1})
    for a in KNOCK_WIN_ACTIONS:
        e.step(a)
    assert e.rewards["player_0"] == pytest.approx(expected) and e.rewards["player_1"] == pytest.approx(-expected)


def test_game_episode_rewards_every_hand_and_continues():
    # target 100: the 66-point hand does not end the game; the next hand is dealt at once
    e = okgin_env.raw_env(episode="game")
    e.reset(options={"deck": KNOCK_WIN, "dealer": 1})
    for a in KNOCK_WIN_ACTIONS:
        e.step(a)
    assert not any(e.terminations.values()) and not any(e.truncations.values())
    assert e.rewards == {"player_0": pytest.approx(1.32), "player_1": pytest.approx(-1.32)}
    nxt = e.agent_selection  # the winner deals: player_1 is the non-dealer and acts
    assert nxt == "player_1"
    assert e.infos[nxt]["hand_result"]["scores"].tolist() == [66, 0]
    assert obs_field(e.observe(nxt)["observation"], "scores")[:2].tolist() == [0.0, pytest.approx(0.66)]
    e.step(int(np.flatnonzero(e.observe(nxt)["action_mask"])[0]))
    assert "hand_result" not in e.infos[nxt] and "hand_result" in e.infos["player_0"]
    assert e.rewards == {"player_0": 0.0, "player_1": 0.0}


@pytest.mark.parametrize("options", OPTION_SETS, ids=range(len(OPTION_SETS)))
def test_rewards_are_zero_sum(options):
    rng = np.random.default_rng(7)
    e = okgin_env.env(**options)
    for seed in range(3):
        e.reset(seed=seed)
        totals = {"player_0": 0.0, "player_1": 0.0}
        for rewards in random_episode(e, rng):
            assert sum(rewards.values()) == pytest.approx(0.0, abs=1e-9)
            for k, v in rewards.items():
                totals[k] += v
        assert totals["player_0"] == pytest.approx(-totals["player_1"], abs=1e-9)


def test_win_rewards_in_game_episodes_come_at_the_end_only():
    rng = np.random.default_rng(3)
    e = okgin_env.env(episode="game", reward="win", target_score=30)
    e.reset(seed=5)
    nonzero = [r for r in random_episode(e, rng) if any(r.values())]
    assert len(nonzero) == 1 and sorted(nonzero[0].values()) == [-1.0, 1.0]


# ------------------------------------------------------------------------------ state()

def test_state_matches_both_hands_stock_and_pile():
    rng = np.random.default_rng(0)
    e = okgin_env.env(episode="game")
    e.reset(seed=0, options={"deck": KNOCK_WIN, "dealer": 1})
    st = e.state()
    assert st.shape == (STATE_SIZE,) and st.dtype == np.float32
    assert e.unwrapped.state_space.contains(st)
    hands = st[STATE_FIELDS["hands"]].reshape(2, 52)
    assert cards_of(hands[0]) == sorted(KNOCK_WIN[0:20:2]) and cards_of(hands[1]) == sorted(KNOCK_WIN[1:20:2])
    stock = st[STATE_FIELDS["stock"]]
    order = [c for c in np.argsort(-stock, kind="stable") if stock[c] > 0]
    assert order == KNOCK_WIN[21:]
    for _ in range(60):
        obs, _, term, trunc, _ = e.last()
        legal = np.flatnonzero(obs["action_mask"])
        e.step(int(legal[rng.integers(len(legal))]))
        s = e.unwrapped.game.state
        st = e.state()
        assert e.unwrapped.state_space.contains(st)
        np.testing.assert_array_equal(st[STATE_FIELDS["hands"]].reshape(2, 52), s.hands[0])
        pile = s.pile[0, : s.pile_size[0]]
        assert st[STATE_FIELDS["discard_top"]].argmax() == pile[-1]
        assert (st[STATE_FIELDS["pile"]] > 0).sum() == len(pile)
        cur = int(s.current_player[0])
        assert st[STATE_FIELDS["current_player"]].argmax() == cur
        # each agent's observation agrees with the state on its own hand
        for p in (0, 1):
            own = obs_field(e.observe(f"player_{p}")["observation"], "own_hand")
            np.testing.assert_array_equal(own, st[STATE_FIELDS["hands"]].reshape(2, 52)[p])


# ------------------------------------------------------------------------------ errors

def test_raw_env_rejects_illegal_and_out_of_range_actions():
    e = okgin_env.raw_env()
    e.reset(options={"deck": KNOCK_WIN, "dealer": 1})  # offer: take (105) or pass (106)
    with pytest.raises(ValueError, match=r"illegal action 104 \(draw\) for player_0; legal actions: "
                                         r"105 \(take\), 106 \(pass\)"):
        e.step(DRAW_STOCK)
    with pytest.raises(ValueError, match=r"action 107 is out of range 0-106.*105 \(take\), 106 \(pass\)"):
        e.step(NUM_ACTIONS)
    with pytest.raises(ValueError, match="action must be an integer"):
        e.step(1.5)
    e.step(np.int32(PASS))  # numpy integers are fine
    assert e.agent_selection == "player_1"


def test_wrapped_env_terminates_on_illegal_action():
    e = okgin_env.env()
    e.reset(options={"deck": KNOCK_WIN, "dealer": 1})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        e.step(DRAW_STOCK)
    assert all(e.terminations.values())
    assert e._cumulative_rewards["player_0"] == -1
    e2 = okgin_env.env()
    e2.reset()
    with pytest.raises(AssertionError, match="not in action space"):  # AssertOutOfBoundsWrapper
        e2.step(NUM_ACTIONS + 5)


def test_unknown_option_is_a_type_error():
    with pytest.raises(TypeError, match=r"unknown option\(s\) knock_limt \(did you mean knock_limit\?\); valid "
                                        r"options: knock_limit, gin_bonus"):
        okgin_env.raw_env(knock_limt=10)


@pytest.mark.parametrize("options,message", [
    ({"episode": "match"}, r"invalid option episode='match'"),
    ({"reward": "score"}, r"invalid option reward='score'"),
    ({"reward_scale": 0}, r"invalid option reward_scale=0"),
    ({"gin_bonus": -1}, r"invalid rule option gin_bonus=-1"),
    ({"rules": Rules(), "gin_bonus": 20}, r"not both"),
])
def test_option_errors(options, message):
    with pytest.raises(ValueError, match=message):
        okgin_env.raw_env(**options)


def test_rules_object_option():
    e = okgin_env.raw_env(rules=Rules(knock_limit=10), episode="game")
    assert e.rules.knock_limit == 10 and e.game.episode == "game"
    assert EnvConfig.from_options({"knock_limit": 10}).rules == Rules(knock_limit=10)


@pytest.mark.parametrize("options,message", [
    ({"deck": KNOCK_WIN[:51]}, r"reset option 'deck': a deck must list all 52 cards exactly once; got 51"),
    ({"deck": KNOCK_WIN[:51] + [KNOCK_WIN[0]]}, r"reset option 'deck': duplicate card"),
    ({"deck": ["Zz"] + [card_text(c) for c in KNOCK_WIN[1:]]}, r"reset option 'deck': bad card 'Zz'"),
    ({"deck": KNOCK_WIN, "dealer": 2}, r"reset option 'dealer' must be 0 or 1"),
])
def test_reset_option_errors(options, message):
    e = okgin_env.raw_env()
    with pytest.raises(ValueError, match=message):
        e.reset(options=options)


def test_reset_replays_deck_and_dealer():
    e = okgin_env.raw_env()
    for dealer in (0, 1):
        e.reset(seed=123, options={"deck": KNOCK_WIN, "dealer": dealer})
        nondealer = f"player_{1 - dealer}"
        assert e.agent_selection == nondealer
        own = obs_field(e.observe(nondealer)["observation"], "own_hand")
        assert cards_of(own) == sorted(KNOCK_WIN[0:20:2])
        assert cards_of(obs_field(e.observe(nondealer)["observation"], "discard_top")) == [parse_card("7h")]


def test_turn_cap_truncates_hand_episodes():
    # max_turns_per_hand=1: both pass, the non-dealer draws and discards: turn 1 completes the
    # cap, the hand is void and the episode truncated (not terminated), with zero rewards.
    e = okgin_env.raw_env(max_turns_per_hand=1)
    e.reset(options={"deck": KNOCK_WIN, "dealer": 1})
    e.step(PASS)
    e.step(PASS)
    e.step(DRAW_STOCK)
    e.step(int(np.flatnonzero(e.observe("player_0")["action_mask"][:KNOCK])[0]))
    assert e.truncations == {"player_0": True, "player_1": True}
    assert e.terminations == {"player_0": False, "player_1": False}
    info = e.infos["player_0"]["hand_result"]
    assert info["void"] and info["turn_cap"] and info["winner"] == info["knocker"] == -1 and info["knock_card"] == -1
    assert e.rewards == {"player_0": 0.0, "player_1": 0.0}
