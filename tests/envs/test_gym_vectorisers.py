"""The learner envs under code the project did not write (issue #25 items 1-3).

Gymnasium's own vectorisers (``SyncVectorEnv``, ``AsyncVectorEnv``, ``gym.make_vec(...,
vectorization_mode="sync"/"async")``) in both autoreset modes merge the infos of several
``okgin/OklahomaGin-v0`` envs into one array per key, which needs one type per key (a None among
ints crashed them); a masked ``Categorical`` as CleanRL writes it must work on every observation
the learner is handed, terminal ones included; actions outside ``Discrete(107)`` raise in every env.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

import okgin_env
from okgin_env import SingleAgentEnv, random_legal_actions
from okgin_env.envs.vector import OkginVectorEnv
from okgin_env.game.actions import NUM_ACTIONS, TERMINAL_ACTION

MODES = (AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP)
HAND_RESULT_INTS = ("knocker", "winner", "dealer", "knock_limit", "game_winner", "knock_card", "upcard")


def _make(opponent: str, episode: str, **options):
    return lambda: gym.make("okgin/OklahomaGin-v0", opponent=opponent, episode=episode, **options)


def _check_masks(mask: np.ndarray) -> None:
    assert mask.dtype == bool and mask.shape[1:] == (NUM_ACTIONS,)
    assert mask.any(axis=1).all(), "an all-False mask was handed to the learner"


def _check_hand_result(hr: dict, rows: np.ndarray) -> None:
    """A merged ``hand_result``: numbers in int arrays and fixed-shape arrays, never object arrays
    (a replay buffer could not store those)."""
    for key in HAND_RESULT_INTS:
        if key in hr:  # the project's vector env has the core's fields only
            assert hr[key].dtype.kind == "i", (key, hr[key].dtype)
            assert (hr[key][rows] >= -1).all()
    for key, value in hr.items():
        if not key.startswith("_"):
            assert value.dtype != object and value.shape[0] == len(rows), (key, value.dtype, value.shape)
    if "hands" in hr:  # the single env's cards: both hands and the meld of each card
        assert hr["hands"].shape[1:] == (2, 52) and hr["meld_id"].shape[1:] == (52,)


def run_vectorised(envs: gym.vector.VectorEnv, steps: int, seed: int = 0) -> dict[str, int]:
    """Masked random play from ``infos["action_mask"]``; checks every step's masks and hand results."""
    same_step = envs.metadata["autoreset_mode"] == AutoresetMode.SAME_STEP
    rng = np.random.default_rng(seed)
    counts = {"episodes": 0, "hands": 0, "void": 0, "terminal_masks": 0}
    _, infos = envs.reset(seed=seed)
    try:
        for _ in range(steps):
            _check_masks(infos["action_mask"])
            _, _, term, trunc, infos = envs.step(random_legal_actions(infos["action_mask"], rng))
            done = term | trunc
            counts["episodes"] += int(done.sum())
            for where in (infos, infos.get("final_info", {})):
                if "hand_result" in where:
                    rows = where["_hand_result"]
                    _check_hand_result(where["hand_result"], rows)
                    counts["hands"] += int(rows.sum())
                    counts["void"] += int(where["hand_result"]["void"][rows].sum())
                    assert (where["hands"][rows] >= 1).all()  # how many hands ended in the step
            if done.any():
                # next-step mode hands the learner the terminal observation with its mask (one
                # True at TERMINAL_ACTION); same-step mode keeps it in final_info
                terminal = infos["final_info"]["action_mask"][done] if same_step else infos["action_mask"][done]
                assert (np.flatnonzero(terminal.any(axis=0)) == TERMINAL_ACTION).all()
                assert (terminal.sum(axis=1) == 1).all()
                counts["terminal_masks"] += len(terminal)
    finally:
        envs.close()
    return counts


# ------------------------------------------------------------------ the merge itself (item 1)

def _hand_info(want_void: bool, **options) -> dict:
    """The step info of the first hand (random play) that is void (or not), from the single env."""
    env = SingleAgentEnv(opponent="random", seat=0, **options)
    rng = np.random.default_rng(0)
    for episode in range(100):
        _, info = env.reset(seed=episode)
        done = False
        while not done:
            _, _, term, trunc, info = env.step(random_legal_actions(info["action_mask"][None], rng)[0])
            done = term or trunc
        if info["hand_result"]["void"] == want_void:
            return info
    raise AssertionError(f"no {'void' if want_void else 'won'} hand in 100 episodes")


def test_won_and_void_hand_infos_merge_in_one_step():
    """The failure of the issue, without the long run: a won hand's info and a void hand's info
    in the same step of a ``SyncVectorEnv`` (it raised TypeError: int() ... 'NoneType')."""
    won, void = _hand_info(False), _hand_info(True, max_turns_per_hand=1)
    assert void["hand_result"]["winner"] == void["hand_result"]["knocker"] == -1
    assert void["hand_result"]["knock_card"] == -1 and won["hand_result"]["knock_card"] >= 0
    for key, value in won["hand_result"].items():
        assert type(value) is type(void["hand_result"][key]), key
    envs = gym.vector.SyncVectorEnv([_make("random", "hand")] * 2)
    try:
        for order in ((won, void), (void, won)):
            merged: dict = {}
            for i, info in enumerate(order):
                merged = envs._add_info(merged, info, i)
            _check_hand_result(merged["hand_result"], np.ones(2, bool))
            assert merged["hand_result"]["winner"].tolist() == [o["hand_result"]["winner"] for o in order]
    finally:
        envs.close()


# ------------------------------------------------------------ Gymnasium's vectorisers (items 1, 2)

CASES = [("simple", "hand"), ("random", "game"), ("random", "hand"), ("simple", "game")]


@pytest.mark.parametrize("mode", MODES, ids=lambda m: m.value)
@pytest.mark.parametrize("opponent,episode", CASES[:2])
def test_sync_vector_env_16_envs(mode, opponent, episode):
    """The issue's reproducer (it crashed within 2,000 steps), shortened for the fast loop."""
    envs = gym.vector.SyncVectorEnv([_make(opponent, episode, target_score=30)] * 16, autoreset_mode=mode)
    counts = run_vectorised(envs, 500)
    assert counts["hands"] > 50 and counts["terminal_masks"] == counts["episodes"] > 0


@pytest.mark.parametrize("mode", MODES, ids=lambda m: m.value)
def test_async_vector_env_quick(mode):
    envs = gym.vector.AsyncVectorEnv([_make("simple", "hand")] * 4, autoreset_mode=mode)
    counts = run_vectorised(envs, 400)
    assert counts["episodes"] > 10 and counts["terminal_masks"] == counts["episodes"]


# The acceptance runs: 16 envs, 3,000 steps, masked sampling; each vectoriser in each autoreset
# mode meets both opponents and both episode kinds (AsyncVectorEnv before the fix: EOFError when a
# worker died). Every opponent x episode x mode for both vectorisers would double CI's minutes.
ACCEPTANCE = [(vec, mode, *case) for vec in ("sync", "async") for i, mode in enumerate(MODES)
              for case in (CASES[2 * i], CASES[2 * i + 1])]


@pytest.mark.slow
@pytest.mark.parametrize("vectoriser,mode,opponent,episode", ACCEPTANCE,
                         ids=lambda v: v.value if isinstance(v, AutoresetMode) else str(v))
def test_vector_env_16_envs_3000_steps(vectoriser, mode, opponent, episode):
    vector_class = gym.vector.SyncVectorEnv if vectoriser == "sync" else gym.vector.AsyncVectorEnv
    envs = vector_class([_make(opponent, episode)] * 16, autoreset_mode=mode)
    counts = run_vectorised(envs, 3000)
    assert counts["hands"] > 500 and counts["void"] > 0 and counts["terminal_masks"] == counts["episodes"] > 0


@pytest.mark.parametrize("vectorization_mode", ["sync", pytest.param("async", marks=pytest.mark.slow)])
@pytest.mark.parametrize("mode", MODES, ids=lambda m: m.value)
def test_make_vec_sync_and_async(vectorization_mode, mode):
    envs = gym.make_vec("okgin/OklahomaGin-v0", num_envs=4, vectorization_mode=vectorization_mode,
                        vector_kwargs={"autoreset_mode": mode}, opponent="simple", episode="game", target_score=30)
    counts = run_vectorised(envs, 300)
    assert counts["hands"] > 0


def test_okgin_vector_env_same_step_final_masks():
    """The project's own vector env (same-step autoreset): final_info's masks and a dict final_obs's."""
    envs = OkginVectorEnv(8, opponent="simple", obs_format="dict")
    counts = run_vectorised(envs, 300)
    assert counts["terminal_masks"] == counts["episodes"] > 10
    envs = OkginVectorEnv(4, opponent="random", obs_format="dict")
    envs.reset(seed=1)
    rng = np.random.default_rng(1)
    while True:
        _, _, term, trunc, info = envs.step(random_legal_actions(envs.action_masks(), rng))
        if (term | trunc).any():
            final = info["final_obs"][int(np.argmax(term | trunc))]
            assert np.flatnonzero(final["action_mask"]).tolist() == [TERMINAL_ACTION]
            assert final["action_mask"].dtype == np.int8
            break


# -------------------------------------------------------------- masked Categorical (item 2)

def test_cleanrl_masked_categorical_on_terminal_observations():
    """CleanRL's masked policy (logits filled with -inf where the mask is False): in next-step
    autoreset the terminal observation is handed to the policy like any other; with one True in
    its mask it samples ``TERMINAL_ACTION`` with log-prob 0 and no gradient (all False: NaN, raise)."""
    torch = pytest.importorskip("torch")
    envs = gym.vector.SyncVectorEnv([_make("random", "hand")] * 8, autoreset_mode=AutoresetMode.NEXT_STEP)
    logits_net = torch.nn.Linear(envs.single_observation_space.shape[0], NUM_ACTIONS)
    torch.manual_seed(0)
    obs, infos = envs.reset(seed=0)
    done = np.zeros(8, bool)  # NEXT_STEP: the observation of a row that ended last step is terminal
    terminal_rows = 0
    try:
        for _ in range(150):
            mask = torch.as_tensor(infos["action_mask"])
            logits = logits_net(torch.as_tensor(obs)).masked_fill(~mask, float("-inf"))
            dist = torch.distributions.Categorical(logits=logits)  # validates: NaN probabilities raise
            action = dist.sample()
            logp = dist.log_prob(action)
            assert torch.isfinite(logp).all() and torch.isfinite(dist.entropy()).all()
            if done.any():
                rows = torch.as_tensor(done)
                assert (action[rows] == TERMINAL_ACTION).all() and (logp[rows] == 0).all()
                logits_net.zero_grad()
                logp[rows].sum().backward()
                assert all(p.grad.abs().max() == 0 for p in logits_net.parameters())
                terminal_rows += int(rows.sum())
            obs, _, term, trunc, infos = envs.step(action.numpy())
            done = term | trunc
    finally:
        envs.close()
    assert terminal_rows > 10


def test_single_env_terminal_mask_agrees_everywhere():
    env = SingleAgentEnv(opponent="random", obs_format="dict")
    obs, info = env.reset(seed=3)
    rng = np.random.default_rng(3)
    done = False
    while not done:
        obs, _, term, trunc, info = env.step(random_legal_actions(info["action_mask"][None], rng)[0])
        done = term or trunc
    for mask in (info["action_mask"], env.action_masks(), obs["action_mask"]):
        assert np.flatnonzero(mask).tolist() == [TERMINAL_ACTION]
    with pytest.raises(RuntimeError, match="reset"):
        env.step(TERMINAL_ACTION)
    # an illegal action ends the episode the same way
    obs, info = env.reset(seed=4)
    obs, r, term, _, info = env.step(int(np.flatnonzero(~info["action_mask"])[0]))
    assert term and info["illegal_action"]
    for mask in (info["action_mask"], env.action_masks(), obs["action_mask"]):
        assert np.flatnonzero(mask).tolist() == [TERMINAL_ACTION]


def test_sb3_terminal_observation_mask():
    pytest.importorskip("stable_baselines3")
    from okgin_env.envs.sb3 import OkginSB3VecEnv

    env = OkginSB3VecEnv(num_envs=4, opponent="random", obs_format="dict")
    env.seed(2)
    env.reset()
    rng = np.random.default_rng(2)
    for _ in range(200):
        _check_masks(env.action_masks())
        _, _, dones, infos = env.step(random_legal_actions(env.action_masks(), rng))
        if dones.any():
            final = infos[int(np.argmax(dones))]["terminal_observation"]
            assert np.flatnonzero(final["action_mask"]).tolist() == [TERMINAL_ACTION]
            return
    raise AssertionError("no episode ended")


# ------------------------------------------------------------- out-of-range actions (item 3)

OUTSIDE = [-5, 107, 10**6, np.int64(-1), np.int64(107), 3.0, np.float32(104.0), "104", True, None, [104]]


@pytest.mark.parametrize("illegal_action", ["terminate", "raise"])
@pytest.mark.parametrize("action", OUTSIDE, ids=repr)
def test_single_env_outside_the_space_raises(action, illegal_action):
    env = gym.make("okgin/OklahomaGin-v0", opponent="random", illegal_action=illegal_action,
                   disable_env_checker=True)
    obs, info = env.reset(seed=0)
    with pytest.raises(ValueError, match="out of range|must be an integer"):
        env.step(action)
    ref = gym.make("okgin/OklahomaGin-v0", opponent="random")
    ref.reset(seed=0)
    a = int(np.flatnonzero(info["action_mask"])[0])
    np.testing.assert_array_equal(env.step(a)[0], ref.step(a)[0])  # the state was untouched


@pytest.mark.parametrize("illegal_action", ["terminate", "raise"])
@pytest.mark.parametrize("bad", [-5, 107, 10**6])
def test_vector_env_outside_the_space_raises(bad, illegal_action):
    env = OkginVectorEnv(4, opponent="random", illegal_action=illegal_action)
    ref = OkginVectorEnv(4, opponent="random", illegal_action=illegal_action)
    env.reset(seed=0)
    ref.reset(seed=0)
    a = random_legal_actions(env.action_masks(), np.random.default_rng(0))
    wrong = a.copy()
    wrong[2] = bad
    with pytest.raises(ValueError, match=f"action {bad} in game 2 is out of range 0-106; legal actions: "):
        env.step(wrong)
    with pytest.raises(ValueError, match="integer array"):
        env.step(a.astype(np.float64))
    o1, r1, *_ = env.step(a)  # nothing moved
    o2, r2, *_ = ref.step(a)
    np.testing.assert_array_equal(o1, o2)
    np.testing.assert_array_equal(r1, r2)


def test_vector_env_outside_the_space_raises_through_gymnasium_and_sb3():
    pytest.importorskip("stable_baselines3")
    from okgin_env.envs.sb3 import OkginSB3VecEnv

    envs = gym.make_vec("okgin/OklahomaGin-v0", num_envs=3, vectorization_mode="vector_entry_point")
    envs.reset(seed=0)
    with pytest.raises(ValueError, match="out of range"):
        envs.step(np.array([107, 104, 104]))
    sb3 = OkginSB3VecEnv(num_envs=3, opponent="random")
    sb3.reset()
    for bad in (-5, 107, 10**6):
        a = random_legal_actions(sb3.action_masks(), np.random.default_rng(0))
        a[1] = bad
        with pytest.raises(ValueError, match=f"action {bad} in game 1 is out of range"):
            sb3.step(a)


@pytest.mark.parametrize("action", OUTSIDE, ids=repr)
def test_aec_raw_env_outside_the_space_raises(action):
    e = okgin_env.raw_env()
    e.reset(seed=0)
    with pytest.raises(ValueError, match="out of range|must be an integer"):
        e.step(action)


@pytest.mark.parametrize("action", [-5, 107, 10**6, 3.0])
def test_aec_env_keeps_pettingzoo_assert_out_of_bounds(action):
    """``env()``'s ``AssertOutOfBoundsWrapper`` refuses it first (an AssertionError, PettingZoo's way)."""
    e = okgin_env.env()
    e.reset(seed=0)
    with pytest.raises(AssertionError, match="action is not in action space"):
        e.step(action)
