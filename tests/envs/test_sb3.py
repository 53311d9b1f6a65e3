"""The Stable-Baselines3 VecEnv adapter (``okgin_env.envs.sb3``): SB3's conventions, checked against
SB3's own DummyVecEnv over SingleAgentEnv, and sb3-contrib's MaskablePPO training on it."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("stable_baselines3")

from stable_baselines3.common.vec_env import DummyVecEnv, VecCheckNan, VecMonitor  # noqa: E402

from okgin_env import SingleAgentEnv, random_legal_actions  # noqa: E402
from okgin_env.envs.sb3 import OkginSB3VecEnv  # noqa: E402
from okgin_env.envs.vector import OkginVectorEnv  # noqa: E402


def test_matches_dummy_vec_env_over_single_agent_env():
    """N = 1 with the same seed: the adapter and DummyVecEnv([SingleAgentEnv]) agree on every
    observation, reward, done, terminal observation and TimeLimit flag."""
    ours = OkginSB3VecEnv(num_envs=1, opponent="random", seat="random")
    ref = DummyVecEnv([lambda: SingleAgentEnv(opponent="random", seat="random")])
    ours.seed(21)
    ref.seed(21)
    o1, o2 = ours.reset(), ref.reset()
    rng = np.random.default_rng(0)
    dones = 0
    for _ in range(400):
        np.testing.assert_array_equal(o1, o2)
        np.testing.assert_array_equal(ours.env_method("action_masks")[0], ref.env_method("action_masks")[0])
        a = random_legal_actions(ours.action_masks(), rng)
        o1, r1, d1, i1 = ours.step(a)
        o2, r2, d2, i2 = ref.step(a)
        np.testing.assert_array_equal(r1, r2)
        np.testing.assert_array_equal(d1, d2)
        assert r1.dtype == np.float32 and d1.dtype == bool
        if d1[0]:
            dones += 1
            np.testing.assert_array_equal(i1[0]["terminal_observation"], i2[0]["terminal_observation"])
            assert i1[0]["TimeLimit.truncated"] == i2[0]["TimeLimit.truncated"]
            assert i1[0]["net_points"] == i2[0]["net_points"]
    assert dones >= 3


def test_vec_env_interface():
    env = OkginSB3VecEnv(OkginVectorEnv(4, opponent="random"))
    assert env.num_envs == 4 and env.render_mode is None
    assert env.get_attr("num_envs") == [4] * 4 and env.get_attr("opponent_name", indices=[1, 2]) == ["random"] * 2
    assert env.has_attr("action_masks") and not env.has_attr("no_such_attribute")
    assert env.env_is_wrapped(VecMonitor) == [False] * 4
    assert env.seed(3) == [3, 4, 5, 6]
    obs = env.reset()
    assert obs.shape == (4, env.observation_space.shape[0])
    masks = env.env_method("action_masks", indices=[0, 3])
    np.testing.assert_array_equal(np.stack(masks), env.action_masks()[[0, 3]])
    env.env_method("set_opponent", "random", seed=1)
    env.set_attr("opponent_name", "renamed")
    assert env.get_attr("opponent_name") == ["renamed"] * 4
    env.set_options({"dealer": 1})
    env.reset()
    assert (env.env.game.state.dealer == 1).all()
    with pytest.raises(ValueError, match="not both"):
        OkginSB3VecEnv(OkginVectorEnv(2), num_envs=2)
    env.close()


def test_standard_wrappers_and_illegal_info():
    env = VecMonitor(VecCheckNan(OkginSB3VecEnv(num_envs=3, opponent="random"), raise_exception=True))
    env.reset()
    rng = np.random.default_rng(1)
    episodes = 0
    for t in range(300):
        a = random_legal_actions(np.stack(env.env_method("action_masks")), rng)
        if t == 5:  # illegal (in the space): that game's episode ends ("terminate")
            a[0] = np.flatnonzero(~env.env_method("action_masks")[0])[0]
        _, r, d, infos = env.step(a)
        if t == 5:
            assert d[0] and infos[0]["illegal_action"] and r[0] == -1.0
        episodes += sum("episode" in i for i in infos)
    assert episodes >= 3


@pytest.mark.slow
def test_maskable_ppo_trains_a_few_hundred_steps():
    sb3_contrib = pytest.importorskip("sb3_contrib")
    env = OkginSB3VecEnv(num_envs=8, opponent="random", deadwood_shaping=0.5)
    model = sb3_contrib.MaskablePPO("MlpPolicy", env, n_steps=32, batch_size=64, n_epochs=1, seed=0, device="cpu",
                                    policy_kwargs={"net_arch": [32]})
    model.learn(total_timesteps=512)
    assert model.num_timesteps >= 512
    obs = env.reset()
    actions, _ = model.predict(obs, action_masks=env.action_masks(), deterministic=True)
    assert env.action_masks()[np.arange(8), actions].all()
