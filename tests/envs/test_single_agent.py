"""The Gymnasium single-agent environment: Gymnasium's checker, registration, replays against
``VectorGame``, seeding, opponents and errors."""

from __future__ import annotations

import importlib.util

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import okgin_env  # noqa: F401  (the import registers okgin/OklahomaGin-v0)
from okgin_env import OBS_SIZE, SingleAgentEnv, VectorGame, obs_field
from okgin_env.game.actions import (
    DRAW_STOCK,
    KNOCK,
    NUM_ACTIONS,
    TAKE_DISCARD,
    TERMINAL_ACTION,
    knock_action,
)
from okgin_env.game.cards import deck_from, parse_card

# The non-dealer (player 0) can take the upcard 7h and knock with Kc: K = 2 against the dealer's
# D = 68, 66 points (the worked example of test_rules.knock_win_table).
KNOCK_WIN = deck_from("As 2s 3s 5h 6h 9c 9d 9s 2d Kc", "Kh Qd Js Tc 8d 6s 5c 4d 3h 2c", "7h")


class FirstLegal:
    """Deterministic opponent: the lowest legal action id."""

    name = "first-legal"

    def act(self, observations, action_masks):
        return np.argmax(action_masks, axis=1)


class KnockEager:
    """Takes the upcard/discard when it can, knocks when it can, else the lowest legal action."""

    name = "knock-eager"

    def act(self, observations, action_masks):
        out = np.argmax(action_masks, axis=1)
        for i, m in enumerate(action_masks):
            knocks = np.flatnonzero(m[KNOCK:DRAW_STOCK])
            if len(knocks):
                out[i] = KNOCK + knocks[0]
            elif m[TAKE_DISCARD]:
                out[i] = TAKE_DISCARD
        return out


class Quick:
    """Ends hands fast: knocks when it can, else discards the card leaving the least deadwood
    (observation field ``discard_deadwood``), and draws from the stock when it may."""

    name = "quick"

    def act(self, observations, action_masks):
        out = np.argmax(action_masks, axis=1)
        for i, (obs, m) in enumerate(zip(observations, action_masks)):
            legal = np.flatnonzero(m)
            if legal[0] >= DRAW_STOCK:
                out[i] = legal[0]  # draw from the stock (104) when allowed, else take the upcard
            else:
                score = obs_field(obs, "discard_deadwood")
                out[i] = max((a for a in legal if a < DRAW_STOCK), key=lambda a: (a >= KNOCK, score[a % 52]))
        return out


class LegalizeActions(gymnasium.ActionWrapper, gymnasium.utils.RecordConstructorArgs):
    """``check_env`` steps with unmasked ``action_space.sample()``; with ``illegal_action="raise"``
    SingleAgentEnv raises on an illegal action, so for the checker an illegal action becomes the
    lowest legal one. (The default, "terminate", passes the checker unwrapped: test_conformance.)"""

    def __init__(self, env):
        gymnasium.utils.RecordConstructorArgs.__init__(self)
        gymnasium.ActionWrapper.__init__(self, env)

    def action(self, action):
        mask = self.env.unwrapped.action_masks()
        return int(action) if mask[action] else int(np.flatnonzero(mask)[0])


@pytest.mark.filterwarnings("ignore:.*Not able to test alternative render modes")  # no spec: see the next test
@pytest.mark.parametrize("options", [{}, {"episode": "game", "reward": "win", "knock_limit": 10}])
def test_gymnasium_check_env(options):
    with pytest.warns(UserWarning, match="different from the unwrapped"):  # the test wrapper
        check_env(LegalizeActions(SingleAgentEnv(opponent="random", render_mode="ansi", illegal_action="raise",
                                                 **options)))


def test_gymnasium_check_env_through_make():
    # with a spec, check_env also builds and renders the env in every declared render mode
    # (rgb_array needs okgin_env.render.rgb: without it, that mode is left to test_conformance)
    env = gymnasium.make("okgin/OklahomaGin-v0", opponent="random", illegal_action="raise", disable_env_checker=True)
    with pytest.warns(UserWarning, match="different from the unwrapped"):
        check_env(LegalizeActions(env), skip_render_check=importlib.util.find_spec("okgin_env.render.rgb") is None)


def test_gymnasium_make_registration_and_episode():
    env = gymnasium.make("okgin/OklahomaGin-v0", opponent="random")
    assert isinstance(env.unwrapped, SingleAgentEnv)
    assert env.observation_space.shape == (OBS_SIZE,) and env.action_space.n == NUM_ACTIONS
    rng = np.random.default_rng(0)
    obs, info = env.reset(seed=0)
    for _ in range(2000):
        mask = info["action_mask"]
        np.testing.assert_array_equal(mask, env.unwrapped.action_masks())
        legal = np.flatnonzero(mask)
        obs, reward, terminated, truncated, info = env.step(int(legal[rng.integers(len(legal))]))
        if terminated or truncated:
            break
    assert terminated or truncated
    assert np.flatnonzero(env.unwrapped.action_masks()).tolist() == [TERMINAL_ACTION]


def test_scripted_knock_reward_and_info():
    env = SingleAgentEnv(opponent=FirstLegal(), seat=0)
    obs, info = env.reset(options={"deck": KNOCK_WIN, "dealer": 1})
    assert info["seat"] == 0 and np.flatnonzero(info["action_mask"]).tolist() == [TAKE_DISCARD, TAKE_DISCARD + 1]
    env.step(TAKE_DISCARD)
    obs, reward, terminated, truncated, info = env.step(knock_action(parse_card("Kc")))
    assert terminated and not truncated and reward == pytest.approx(66 * 0.02)
    assert info["hand_result"]["points"].tolist() == [66, 0] and info["hands"] == 1 and info["net_points"] == 66
    assert obs.shape == (OBS_SIZE,) and np.flatnonzero(info["action_mask"]).tolist() == [TERMINAL_ACTION]
    with pytest.raises(RuntimeError, match="reset"):
        env.step(DRAW_STOCK)


@pytest.mark.parametrize("seat,dealer,seed", [(0, 1, 0), (1, 1, 1), (0, 0, 2), (1, 0, 3)])
def test_replay_matches_vector_game(seat, dealer, seed):
    """Learner (random legal) and a deterministic opponent through the env, then the same
    actions through VectorGame: same learner observations and the same total reward."""
    rng = np.random.default_rng(seed)
    deck = np.random.default_rng(50 + seed).permutation(52)
    env = SingleAgentEnv(opponent=FirstLegal(), seat=seat, reward_scale=1.0)
    obs, info = env.reset(seed=seed, options={"deck": deck, "dealer": dealer})
    game = VectorGame(1)
    out = game.reset(decks=deck, dealers=dealer)
    total_env, total_core = 0.0, 0.0
    while True:
        while int(out.current_player[0]) == 1 - seat:  # the opponent's moves, replayed
            out = game.step(np.argmax(out.legal_action_mask, axis=1))
            total_core += float(out.rewards[0, seat])
        if out.terminated[0] or out.truncated[0]:
            break
        np.testing.assert_array_equal(obs, out.observation[0])
        np.testing.assert_array_equal(info["action_mask"], out.legal_action_mask[0])
        legal = np.flatnonzero(info["action_mask"])
        a = int(legal[rng.integers(len(legal))])
        obs, reward, terminated, truncated, info = env.step(a)
        total_env += reward
        out = game.step(np.array([a]))
        total_core += float(out.rewards[0, seat])
        if terminated or truncated:
            while int(out.current_player[0]) == 1 - seat:
                out = game.step(np.argmax(out.legal_action_mask, axis=1))
                total_core += float(out.rewards[0, seat])
            break
    assert (terminated, truncated) == (bool(out.terminated[0]), bool(out.truncated[0]))
    assert total_env == pytest.approx(total_core)
    np.testing.assert_array_equal(obs, game.observe(seat)[0])


def test_seeding_fixes_deck_seat_and_opponent():
    def trajectory(seed):
        env = SingleAgentEnv(opponent="random", seat="random")
        obs, info = env.reset(seed=seed)
        rng = np.random.default_rng(0)
        seen = [info["seat"], obs.tobytes()]
        for _ in range(300):
            legal = np.flatnonzero(info["action_mask"])
            obs, r, term, trunc, info = env.step(int(legal[rng.integers(len(legal))]))
            seen += [obs.tobytes(), r]
            if term or trunc:
                break
        return seen

    assert trajectory(11) == trajectory(11)
    assert trajectory(11) != trajectory(12)
    seats = {SingleAgentEnv().reset(seed=s)[1]["seat"] for s in range(12)}
    assert seats == {0, 1}


def test_seeding_reseeds_an_opponent_object():
    class Noisy:
        name = "noisy"

        def __init__(self):
            self.rng = np.random.default_rng()  # unseeded: only reset(seed=...) makes it reproducible

        def act(self, observations, action_masks):
            u = self.rng.random(action_masks.shape)
            return np.argmax(np.where(action_masks, u, -1.0), axis=1)

    def trajectory():
        env = SingleAgentEnv(opponent=Noisy(), seat=1)
        obs, info = env.reset(seed=4)
        seen = [obs.tobytes()]
        for _ in range(50):
            obs, r, term, trunc, info = env.step(int(np.flatnonzero(info["action_mask"])[0]))
            seen.append(obs.tobytes())
            if term or trunc:
                break
        return seen

    assert trajectory() == trajectory()


def test_opponent_specs_resolve_through_agents_make():
    for spec in ("random", "greedy", "simple"):
        env = SingleAgentEnv(opponent=spec, seat=1)
        obs, info = env.reset(seed=0)
        assert info["seat"] == 1 and env.opponent.name.lower().startswith(spec)
    with pytest.raises(ValueError, match="unknown agent spec"):
        SingleAgentEnv(opponent="grandmaster")
    with pytest.raises(ValueError, match="opponent must be"):
        SingleAgentEnv(opponent=object())


def test_a_plain_callable_is_an_opponent_as_in_the_vector_env():
    env = SingleAgentEnv(opponent=lambda obs, mask: FirstLegal().act(obs, mask), seat=1)
    obs, info = env.reset(seed=0)
    assert env.opponent_name == "<lambda>" and info["seat"] == 1 and info["action_mask"].any()


def test_illegal_action_errors():
    env = SingleAgentEnv(opponent=FirstLegal(), seat=0, illegal_action="raise")
    env.reset(options={"deck": KNOCK_WIN, "dealer": 1})
    with pytest.raises(ValueError, match=r"illegal action 104 \(draw\); legal actions: 105 \(take\), 106 \(pass\)"):
        env.step(DRAW_STOCK)
    with pytest.raises(ValueError, match=r"action -1 is out of range 0-106"):
        env.step(-1)
    with pytest.raises(ValueError, match="action must be an integer"):
        env.step("take")


@pytest.mark.parametrize("kwargs,message", [
    ({"seat": 2}, "seat must be 0, 1 or 'random'"),
    ({"render_mode": "rgb"}, r"render_mode must be None or one of \['ansi', 'human', 'rgb_array'\], got 'rgb'"),
    ({"illegal_action": "ignore"}, "invalid option illegal_action='ignore': allowed is 'terminate' | 'raise'"),
    ({"obs_format": "tuple"}, "invalid option obs_format='tuple': allowed is 'vector' | 'dict' | 'rllib'"),
    ({"deadwood_shaping": -1}, "invalid option deadwood_shaping=-1: allowed is a finite number >= 0"),
])
def test_constructor_errors(kwargs, message):
    with pytest.raises(ValueError, match=message):
        SingleAgentEnv(**kwargs)
    with pytest.raises(TypeError, match=r"unknown option\(s\) knock_limt \(did you mean knock_limit\?\); valid options"):
        SingleAgentEnv(knock_limt=3)


def test_opponent_ending_the_hand_before_the_learner_acts():
    # Hand episodes: the opponent (player 0, non-dealer) takes 7h and knocks at once; the learner
    # never got to act, so the episode is dealt again from the generator.
    env = SingleAgentEnv(opponent=KnockEager(), seat=1)
    obs, info = env.reset(seed=0, options={"deck": KNOCK_WIN, "dealer": 1})
    assert info["skipped_episodes"] >= 1 and info["action_mask"].any()
    # Game episodes: the hand's result comes with reset, its reward with the first step.
    env = SingleAgentEnv(opponent=KnockEager(), seat=1, episode="game")
    obs, info = env.reset(seed=0, options={"deck": KNOCK_WIN, "dealer": 1})
    assert "skipped_episodes" not in info and info["hand_result"]["points"].tolist() == [66, 0]
    legal = np.flatnonzero(info["action_mask"])
    _, reward, _, _, info = env.step(int(legal[0]))
    assert "hands" not in info and reward == pytest.approx(-66 * 0.02)


def test_game_episode_hand_results_and_win_reward():
    env = SingleAgentEnv(opponent=Quick(), seat=0, episode="game", reward="win", target_score=50)
    learner = Quick()
    obs, info = env.reset(seed=3)
    ended, rewards = [], []
    for _ in range(3000):
        a = int(learner.act(obs[None], info["action_mask"][None])[0])
        obs, reward, term, trunc, info = env.step(a)
        rewards.append(reward)
        if "hand_result" in info:  # (one hand per step here: the opponent never knocks at once)
            assert info["hands"] == 1
            ended.append(info["hand_result"])
        if term or trunc:
            break
    assert term and len(ended) >= 1 and ended[-1]["game_over"]
    assert [r for r in rewards if r] == [1.0 if ended[-1]["game_winner"] == 0 else -1.0]
