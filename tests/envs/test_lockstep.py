"""The three envs in lockstep: AEC, single-agent and vector (N = 1) on the same deals give the learner
the same observations, rewards, ends and hand infos, for every reward rule, shaping, episode kind,
``game_bonuses``, ``features`` and ``obs_format``.

The learner sits in seat 0 and plays random legal moves drawn by the test; the opponent is ``simple``,
seeded as the learner envs seed it (``okgin_env.envs.learner.seed_opponent``). In the AEC env the test
plays the opponent itself and reads the learner's reward with ``last()`` at its next decision.
"""

from __future__ import annotations

import numpy as np
import pytest

import okgin_agents
import okgin_env
from okgin_env.envs.single_agent import SingleAgentEnv
from okgin_env.envs.vector import OkginVectorEnv
from okgin_env.features.hand_info import SUMMARY_FIELDS

LEARNER, OPPONENT = "player_0", "player_1"
SLOW = pytest.mark.slow
CONFIGS = [  # the fast loop plays the first, with shaping, game bonuses and game episodes
    {"episode": "game", "game_bonuses": True, "deadwood_shaping": 0.5, "target_score": 40},
    pytest.param({}, marks=SLOW),
    pytest.param({"episode": "game", "reward": "win", "features": "meld", "obs_format": "dict", "target_score": 30},
                 marks=SLOW),
    pytest.param({"obs_format": "rllib", "deadwood_shaping": 0.25, "spade_double": True, "features": "outs"},
                 marks=SLOW),
    pytest.param({"reward": "win", "knock_limit": 10, "next_dealer": "alternate"}, marks=SLOW),
]


def config_id(options) -> str:
    return ",".join(f"{k}={v}" for k, v in options.items()) or "default"



def plain(obs) -> np.ndarray:
    """The observation vector of any obs_format (the mask is compared separately)."""
    if isinstance(obs, dict):
        return np.asarray(obs.get("observation", obs.get("observations")))
    return np.asarray(obs)


class AecLearner:
    """The AEC env seen from seat 0, the test playing seat 1 with its own ``simple``."""

    def __init__(self, options: dict, seed: int) -> None:
        aec_options = {**options, "obs_format": options.get("obs_format", "dict")}
        if aec_options["obs_format"] == "vector":
            aec_options["obs_format"] = "dict"
        self.env = okgin_env.env(**aec_options)
        self.game_seed, opp_seed = np.random.SeedSequence(seed).spawn(2)
        self.opponent = okgin_agents.make("simple")
        self.opponent.rng = np.random.default_rng(opp_seed)

    def reset(self, first: bool):
        self.env.reset(seed=self.game_seed if first else None)
        return self._to_learner()

    def step(self, action: int):
        self.env.step(action)
        return self._to_learner()

    def _to_learner(self):
        """Play the opponent until the learner is to act or the episode is over: the learner's last()."""
        env = self.env
        while env.agent_selection == OPPONENT:
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                env.step(None)
                continue
            mask = obs["action_mask"].astype(bool)
            view = obs.get("observation", obs.get("observations"))[: okgin_env.OBS_SIZE]
            env.step(int(self.opponent.act(view[None], mask[None])[0]))
        return env.last()


@pytest.mark.parametrize("options", CONFIGS, ids=config_id)
def test_aec_single_and_vector_envs_agree_step_by_step(options):
    seed = 11
    rng = np.random.default_rng(5)
    single = SingleAgentEnv(opponent=okgin_agents.make("simple"), seat=0, **options)
    vector = OkginVectorEnv(1, opponent=okgin_agents.make("simple"), seat=0, **options)
    aec = AecLearner(options, seed)
    s_obs, s_info = single.reset(seed=seed)
    v_obs, v_info = vector.reset(seed=seed)
    a_obs, a_rew, a_term, a_trunc, a_info = aec.reset(first=True)
    episodes = hands = shaped = 0
    for _ in range(600):
        mask = single.action_masks()
        np.testing.assert_array_equal(vector.action_masks()[0], mask)
        np.testing.assert_array_equal(a_obs["action_mask"].astype(bool), mask)
        np.testing.assert_array_equal(plain(v_obs)[0], plain(s_obs))
        np.testing.assert_array_equal(plain(a_obs), plain(s_obs))
        action = int(rng.choice(np.flatnonzero(mask)))
        s_obs, s_rew, s_term, s_trunc, s_info = single.step(action)
        v_obs, v_rew, v_term, v_trunc, v_info = vector.step(np.array([action]))
        a_obs, a_rew, a_term, a_trunc, a_info = aec.step(action)
        done = s_term or s_trunc
        assert (v_term[0], v_trunc[0]) == (s_term, s_trunc) == (a_term, a_trunc)
        assert v_rew[0] == s_rew, (v_rew[0], s_rew)
        assert a_rew == pytest.approx(s_rew, abs=1e-12)  # the AEC env sums the same terms per move
        shaped += s_rew not in (0.0, 1.0, -1.0) and "deadwood_shaping" in options
        v_hands = v_info["final_info"] if done else v_info
        if "hand_result" in s_info:
            hands += 1
            assert v_hands["_hand_result"][0] and v_hands["net_points"][0] == s_info["net_points"]
            for key, value in s_info["hand_result"].items():  # the whole result in the one-game envs
                np.testing.assert_array_equal(a_info["hand_result"][key], value, err_msg=key)
            for key in SUMMARY_FIELDS:  # the vector env's summary of it (its documented keys)
                np.testing.assert_array_equal(v_hands["hand_result"][key][0], s_info["hand_result"][key], err_msg=key)
        else:
            assert not v_hands.get("_hand_result", np.zeros(1, bool))[0] and "hand_result" not in a_info
        if done:
            episodes += 1
            np.testing.assert_array_equal(plain(v_info["final_obs"][0]), plain(s_obs))
            s_obs, s_info = single.reset()
            a_obs, a_rew, a_term, a_trunc, a_info = aec.reset(first=False)
    assert episodes >= 2 and hands >= 3
    assert shaped or "deadwood_shaping" not in options
