"""The Gymnasium vector env (``okgin_env.envs.vector``): it must behave exactly like N ``SingleAgentEnv``s
(replays of seeded and fixed deals), with Gymnasium's same-step autoreset, potential-based
shaping, both illegal-action modes, dict observations, make_vec and clear errors."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

import okgin_env  # noqa: F401  (registers okgin/OklahomaGin-v0)
from okgin_env import NUM_ACTIONS, OBS_SIZE, SingleAgentEnv, random_legal_actions
from okgin_env.envs.options import ILLEGAL_REWARD
from okgin_env.envs.vector import OkginVectorEnv
from okgin_env.features.shaping import potential
from okgin_env.game.actions import TAKE_DISCARD, TERMINAL_ACTION, knock_action
from okgin_env.game.cards import deck_from, parse_card

# The non-dealer (player 0) takes the upcard 7h and knocks with Kc: 66 points (test_single_agent).
KNOCK_WIN = deck_from("As 2s 3s 5h 6h 9c 9d 9s 2d Kc", "Kh Qd Js Tc 8d 6s 5c 4d 3h 2c", "7h")


class HashPolicy:
    """Deterministic and row-independent: a legal action picked by a hash of the observation,
    so a batch of games and the same games one at a time choose alike."""

    def __init__(self, salt: int = 0) -> None:
        self.salt = salt
        self.calls: list[int] = []

    def act(self, observations, action_masks):
        obs = np.asarray(observations, np.float64)
        mask = np.asarray(action_masks, bool)
        self.calls.append(len(mask))
        assert mask.any(axis=1).all(), "the opponent was asked to move in a game where it has no legal action"
        key = (obs @ np.arange(1, obs.shape[1] + 1) * 7.0 + self.salt).astype(np.int64)
        n = mask.sum(axis=1)
        k = key % n
        order = np.cumsum(mask, axis=1) - 1
        return np.argmax(mask & (order == k[:, None]), axis=1)


def row_info(info: dict, key: str, i: int):
    """Value of a vector-info key for game i, or None where its mask says it is absent."""
    if key not in info or not info[f"_{key}"][i]:
        return None
    return info[key][i]


# --------------------------------------------------------------------------- equivalence

def test_net_points_include_game_bonuses_in_both_envs():
    """With ``game_bonuses`` a game's end pays line and game bonuses beyond the last hand's points:
    ``net_points`` counts them in the single-agent env as in the vector env (the learner's reward,
    unscaled), step for step until two games have ended."""
    options = {"episode": "game", "game_bonuses": True, "target_score": 30, "deadwood_shaping": 0.0}
    single = SingleAgentEnv(opponent="random", **options)
    vec = OkginVectorEnv(1, opponent="random", **options)
    _, s_info = single.reset(seed=11)
    vec.reset(seed=11)
    rng = np.random.default_rng(0)
    games = 0
    for _ in range(20_000):
        a = int(rng.choice(np.flatnonzero(s_info["action_mask"])))
        _, s_r, s_term, s_trunc, s_info = single.step(a)
        _, _, _, _, v_info = vec.step(np.array([a]))
        ended = s_term or s_trunc
        info = v_info["final_info"] if ended else v_info
        assert row_info(info, "net_points", 0) == s_info.get("net_points")
        if ended:
            hr, me = s_info["hand_result"], single.seat
            assert s_info["net_points"] * single.config.reward_scale == pytest.approx(s_r)
            assert abs(s_info["net_points"]) > abs(int(hr["points"][me]) - int(hr["points"][1 - me]))  # bonuses in
            games += 1
            if games == 2:
                break
            _, s_info = single.reset()
    assert games == 2


@pytest.mark.parametrize("options", [{}, {"episode": "game", "target_score": 40}, {"reward": "win"},
                                     {"episode": "game", "reward": "win", "target_score": 30}])
def test_one_game_matches_single_agent_env_draw_for_draw(options):
    """N = 1 with the same seed draws exactly what SingleAgentEnv draws: deals, seats, the random
    opponent's choices; so every observation, mask, reward, flag and hand result is the same,
    across episode ends (autoreset there, reset() in the single env)."""
    single = SingleAgentEnv(opponent="random", seat="random", **options)
    vec = OkginVectorEnv(1, opponent="random", seat="random", **options)
    s_obs, s_info = single.reset(seed=11)
    v_obs, v_info = vec.reset(seed=11)
    rng = np.random.default_rng(0)
    episodes = hands = 0
    seats = set()
    for _ in range(600):
        np.testing.assert_array_equal(v_obs[0], s_obs)
        np.testing.assert_array_equal(v_info["action_mask"][0], s_info["action_mask"])
        np.testing.assert_array_equal(vec.action_masks()[0], single.action_masks())
        assert v_info["seat"][0] == s_info["seat"]
        assert row_info(v_info, "skipped_episodes", 0) == s_info.get("skipped_episodes")
        seats.add(s_info["seat"])
        a = random_legal_actions(vec.action_masks(), rng)
        s_obs, s_r, s_term, s_trunc, s_info = single.step(int(a[0]))
        v_obs, v_r, v_term, v_trunc, v_info = vec.step(a)
        assert v_r[0] == pytest.approx(s_r, abs=1e-12) and (v_term[0], v_trunc[0]) == (s_term, s_trunc)
        ended = s_term or s_trunc
        info = v_info["final_info"] if ended else v_info
        if "hand_result" in s_info:  # the last hand that ended in the step, in both
            hr = s_info["hand_result"]
            hands += 1
            assert row_info(info, "hands", 0) == s_info["hands"]
            for key in info["hand_result"]:  # the vector env's fields, equal to the single env's
                if not key.startswith("_"):
                    np.testing.assert_array_equal(info["hand_result"][key][0], hr[key], err_msg=key)
            assert row_info(info, "net_points", 0) == s_info["net_points"]  # game bonuses included in both
        else:
            assert row_info(info, "hand_result", 0) is None
        if ended:
            episodes += 1
            assert v_info["_final_obs"][0] and v_info["_final_info"][0]
            np.testing.assert_array_equal(v_info["final_obs"][0], s_obs)
            np.testing.assert_array_equal(v_info["final_info"]["action_mask"][0], s_info["action_mask"])
            assert np.flatnonzero(s_info["action_mask"]).tolist() == [TERMINAL_ACTION]
            assert v_info["final_info"]["seat"][0] == s_info["seat"]
            s_obs, s_info = single.reset()
        else:
            assert "final_obs" not in v_info
    assert hands >= 3 and (options.get("episode") == "game" or (episodes >= 3 and seats == {0, 1}))


def deterministic_opponent_pair(n: int) -> tuple[HashPolicy, list[HashPolicy]]:
    return HashPolicy(salt=5), [HashPolicy(salt=5) for _ in range(n)]


@pytest.mark.parametrize("seat", [0, 1])
def test_fixed_decks_match_n_single_agent_envs(seat):
    """Replayed decks through one vector env and through N SingleAgentEnvs (same seat, the same
    deterministic opponent): identical observations, masks, rewards and flags, episode after
    episode; each autoreset deal is replayed into the matching single env."""
    n = 6
    rng = np.random.default_rng(seat)
    decks = np.stack([rng.permutation(52) for _ in range(n)])
    dealers = rng.integers(0, 2, n)
    opp, opps = deterministic_opponent_pair(n)
    vec = OkginVectorEnv(n, opponent=opp, seat=seat, reward_scale=1.0)
    singles = [SingleAgentEnv(opponent=opps[i], seat=seat, reward_scale=1.0) for i in range(n)]
    v_obs, v_info = vec.reset(seed=3, options={"deck": decks, "dealer": dealers})
    s_out = [s.reset(options={"deck": decks[i], "dealer": int(dealers[i])}) for i, s in enumerate(singles)]
    learner = HashPolicy(salt=1)
    ends = 0
    for _ in range(400):
        for i, (obs, info) in enumerate(s_out):
            np.testing.assert_array_equal(v_obs[i], obs, err_msg=f"game {i}")
            np.testing.assert_array_equal(v_info["action_mask"][i], info["action_mask"])
        a = learner.act(v_obs, vec.action_masks())
        v_obs, v_r, v_term, v_trunc, v_info = vec.step(a)
        for i, s in enumerate(singles):
            obs, r, term, trunc, info = s.step(int(a[i]))
            assert v_r[i] == r and v_term[i] == term and v_trunc[i] == trunc, f"game {i}"
            if term or trunc:
                ends += 1
                np.testing.assert_array_equal(v_info["final_obs"][i], obs)
                assert row_info(v_info, "skipped_episodes", i) is None  # (a skip would need its deck too)
                st = vec.game.state  # the new episode's deal, replayed into the single env
                s_out[i] = s.reset(options={"deck": st.deck[i], "dealer": int(st.dealer[i])})
            else:
                s_out[i] = obs, info
    assert ends >= 2 * n


def test_same_seed_same_run_and_reset_seed_repeats():
    def run(env, seed):
        obs, _ = env.reset(seed=seed)
        rng = np.random.default_rng(1)
        trace = [obs.copy()]
        for _ in range(60):
            obs, r, term, trunc, info = env.step(random_legal_actions(env.action_masks(), rng))
            trace += [obs.copy(), r, term, info["seat"]]
        return trace

    a, b = OkginVectorEnv(5, seat="random"), OkginVectorEnv(5, seat="random")
    ta = run(a, 7)
    for x, y in zip(ta, run(b, 7)):
        np.testing.assert_array_equal(x, y)
    for x, y in zip(ta, run(a, 7)):  # reset(seed=) again on a used env: the same run
        np.testing.assert_array_equal(x, y)
    assert any(not np.array_equal(x, y) for x, y in zip(ta, run(b, 8)))


# ------------------------------------------------------------------------------- autoreset

def test_same_step_autoreset_semantics_and_masks():
    """Every game is at a learner decision after every step; an ended game's returned obs, mask
    and seat are its new episode's, final_obs/final_info the ended one's."""
    env = OkginVectorEnv(16, opponent="random", seat="random")
    assert env.metadata["autoreset_mode"] == AutoresetMode.SAME_STEP
    obs, info = env.reset(seed=2)
    rng = np.random.default_rng(2)
    ended_total = 0
    for _ in range(300):
        mask = env.action_masks()
        assert mask.any(axis=1).all() and mask is info["action_mask"]
        assert env.observation_space.contains(obs)
        obs, r, term, trunc, info = env.step(random_legal_actions(mask, rng))
        done = term | trunc
        assert r.shape == (16,) and term.dtype == bool and trunc.dtype == bool
        assert info["_action_mask"].all() and info["_seat"].all()
        if done.any():
            ended_total += int(done.sum())
            np.testing.assert_array_equal(info["_final_obs"], done)
            np.testing.assert_array_equal(info["_final_info"], done)
            assert all((info["final_obs"][i] is None) != done[i] for i in range(16))
            # hand episodes: every ended episode ended with a hand, reported in final_info only
            np.testing.assert_array_equal(info["final_info"]["_hand_result"], done)
            assert "hand_result" not in info
            hr = info["final_info"]["hand_result"]
            pts = hr["points"][done]
            seat = info["final_info"]["seat"][done]
            np.testing.assert_array_equal(info["final_info"]["net_points"][done],
                                          pts[np.arange(len(seat)), seat] - pts[np.arange(len(seat)), 1 - seat])
            np.testing.assert_allclose(r[done], info["final_info"]["net_points"][done] * 0.02, atol=1e-6)
            # the new episode starts at the learner's decision: its observation shows it is to move
            new_obs = obs[done]
            assert (okgin_env.obs_field(new_obs, "phase").sum(axis=1) == 1).all()
        else:
            assert "final_obs" not in info and "final_info" not in info
    assert ended_total > 20


def test_record_episode_statistics_reads_same_step_autoreset():
    env = gymnasium.wrappers.vector.RecordEpisodeStatistics(OkginVectorEnv(8))
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    seen = 0
    for _ in range(200):
        _, _, term, trunc, info = env.step(random_legal_actions(env.unwrapped.action_masks(), rng))
        if "episode" in info:
            seen += int(info["_episode"].sum())
            assert (info["episode"]["l"][info["_episode"]] >= 1).all()
    assert seen > 5


def test_scripted_knock_reward_and_hand_result():
    env = OkginVectorEnv(2, opponent=HashPolicy(), seat=0)
    env.reset(options={"deck": KNOCK_WIN, "dealer": 1})
    assert np.flatnonzero(env.action_masks()[0]).tolist() == [TAKE_DISCARD, TAKE_DISCARD + 1]
    env.step(np.array([TAKE_DISCARD, TAKE_DISCARD]))
    knock = knock_action(parse_card("Kc"))
    obs, r, term, trunc, info = env.step(np.array([knock, knock]))
    assert term.all() and not trunc.any() and r == pytest.approx([66 * 0.02] * 2)
    fi = info["final_info"]
    assert fi["hand_result"]["points"].tolist() == [[66, 0], [66, 0]]
    assert fi["net_points"].tolist() == [66, 66] and fi["hands"].tolist() == [1, 1]
    assert fi["hand_result"]["knocker"].tolist() == [0, 0] and fi["hand_result"]["winner"].tolist() == [0, 0]
    assert not fi["hand_result"]["gin"].any() and not fi["illegal_action"].any()


def test_game_episodes_report_hands_at_the_top_level():
    """In game episodes a hand that does not end the game is reported in the step's own infos."""
    env = OkginVectorEnv(8, episode="game", target_score=60)
    env.reset(seed=4)
    rng = np.random.default_rng(4)
    mid_game = 0
    for _ in range(400):
        _, r, term, trunc, info = env.step(random_legal_actions(env.action_masks(), rng))
        if "hand_result" in info:
            rows = info["_hand_result"]
            mid_game += int(rows.sum())
            np.testing.assert_array_equal(info["_net_points"], rows)
            assert not info["hand_result"]["game_over"][rows & ~(term | trunc)].any()
    assert mid_game > 0


# --------------------------------------------------------------------------------- shaping

def test_shaping_telescopes_to_minus_phi_of_the_start():
    """Summed over an episode, shaped minus unshaped rewards equal -phi(s0); points in infos are unshaped."""
    coef, n = 0.5, 8
    plain = OkginVectorEnv(n, opponent=HashPolicy(3), seat="random")
    shaped = OkginVectorEnv(n, opponent=HashPolicy(3), seat="random", deadwood_shaping=coef)
    p_obs, _ = plain.reset(seed=9)
    s_obs, _ = shaped.reset(seed=9)
    np.testing.assert_array_equal(p_obs, s_obs)
    phi0 = potential(p_obs, coef, 0.02).astype(np.float64)
    diff = np.zeros(n)
    learner = HashPolicy(salt=2)
    checked = 0
    for _ in range(200):
        a = learner.act(p_obs, plain.action_masks())
        p_obs, p_r, p_term, p_trunc, p_info = plain.step(a)
        s_obs, s_r, s_term, s_trunc, s_info = shaped.step(a)
        np.testing.assert_array_equal(p_obs, s_obs)
        diff += s_r - p_r
        done = p_term | p_trunc
        if done.any():
            np.testing.assert_allclose(diff[done], -phi0[done], atol=1e-6)
            np.testing.assert_array_equal(s_info["final_info"]["net_points"], p_info["final_info"]["net_points"])
            checked += int(done.sum())
            diff[done] = 0.0
            phi0[done] = potential(p_obs[done], coef, 0.02)
    assert checked >= n and (phi0 < 0).any()


# ------------------------------------------------------------------------- illegal actions

def test_illegal_action_raise_names_game_and_leaves_state_untouched():
    env = OkginVectorEnv(4, opponent=HashPolicy(), illegal_action="raise")
    ref = OkginVectorEnv(4, opponent=HashPolicy(), illegal_action="raise")
    obs, _ = env.reset(seed=1)
    ref.reset(seed=1)
    a = HashPolicy(1).act(obs, env.action_masks())
    bad = a.copy()
    bad[2] = int(np.flatnonzero(~env.action_masks()[2])[0])
    with pytest.raises(ValueError, match=rf"illegal action {bad[2]} .* in game 2; legal actions: .*\d+ \("):
        env.step(bad)
    with pytest.raises(ValueError, match="out of range"):
        env.step(np.where(np.arange(4) == 0, 500, a))
    o1, r1, t1, _, _ = env.step(a)
    o2, r2, t2, _, _ = ref.step(a)
    np.testing.assert_array_equal(o1, o2)
    np.testing.assert_array_equal(r1, r2)


def test_illegal_action_terminate_ends_only_that_game():
    env = OkginVectorEnv(4, opponent=HashPolicy(), seat=0)  # "terminate" is the default
    ref = OkginVectorEnv(4, opponent=HashPolicy(), seat=0)
    obs, _ = env.reset(seed=1)
    ref.reset(seed=1)
    a = HashPolicy(1).act(obs, env.action_masks())
    bad = a.copy()
    bad[1] = -3  # outside the space: raises before anything moves, even with "terminate"
    with pytest.raises(ValueError, match="action -3 in game 1 is out of range 0-106"):
        env.step(bad)
    bad[1] = int(np.flatnonzero(~env.action_masks()[1])[0])  # in the space, not legal
    o, r, term, trunc, info = env.step(bad)
    o_ref, r_ref, term_ref, _, _ = ref.step(a)
    assert term[1] and not trunc[1] and r[1] == ILLEGAL_REWARD
    assert info["illegal_action"].tolist() == [False, True, False, False] and info["_illegal_action"].all()
    assert info["final_info"]["illegal_action"][1] and info["_final_info"][1]
    np.testing.assert_array_equal(info["final_obs"][1], obs[1])  # the state it stopped in
    others = [0, 2, 3]
    np.testing.assert_array_equal(o[others], o_ref[others])
    np.testing.assert_array_equal(r[others], r_ref[others])
    np.testing.assert_array_equal(term[others], term_ref[others])
    assert env.action_masks()[1].any()  # game 1 was dealt a new episode


# ------------------------------------------------------------------------------ dict obs

def test_dict_observations():
    env = OkginVectorEnv(3, obs_format="dict")
    assert isinstance(env.single_observation_space, gymnasium.spaces.Dict)
    obs, info = env.reset(seed=0)
    assert env.observation_space.contains(obs)
    assert obs["observation"].shape == (3, OBS_SIZE) and obs["action_mask"].dtype == np.int8
    np.testing.assert_array_equal(obs["action_mask"], info["action_mask"])
    rng = np.random.default_rng(0)
    for _ in range(200):
        obs, _, term, trunc, info = env.step(random_legal_actions(env.action_masks(), rng))
        assert env.observation_space.contains(obs)
        if (term | trunc).any():
            i = int(np.argmax(term | trunc))
            final = info["final_obs"][i]
            assert set(final) == {"observation", "action_mask"}
            assert np.flatnonzero(final["action_mask"]).tolist() == [TERMINAL_ACTION]
            assert env.single_observation_space.contains(final)
            return
    pytest.fail("no episode ended")


# ----------------------------------------------------------------------- opponents, errors

def test_opponent_callable_spec_and_set_opponent():
    calls = []

    def first_legal(observations, action_masks):
        calls.append(len(action_masks))
        assert action_masks.any(axis=1).all()
        return np.argmax(action_masks, axis=1)

    env = OkginVectorEnv(6, opponent=first_legal)
    assert env.opponent_name == "first_legal"
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    for _ in range(20):
        env.step(random_legal_actions(env.action_masks(), rng))
    assert calls and max(calls) <= 6
    env.set_opponent("random", seed=3)
    assert env.opponent_name == "random"
    env.step(random_legal_actions(env.action_masks(), rng))
    hp = HashPolicy()
    env.set_opponent(hp)
    for _ in range(5):
        env.step(random_legal_actions(env.action_masks(), rng))
    assert hp.calls


@pytest.mark.parametrize("options", [{}, {"episode": "game", "target_score": 30}, {"illegal_action": "terminate"}])
def test_mask_only_opponent_gets_zeros_and_plays_as_an_observing_one(options):
    """An opponent with ``uses_observations = False`` (random's) gets a read-only all-zero array and
    real masks; the games go exactly as with the same opponent given real observations."""
    from okgin_env.agent_specs import RandomAgent

    seen = []

    class Probe(RandomAgent):
        def act(self, observations, action_masks):
            seen.append((np.asarray(observations).any(), observations.flags.writeable, action_masks.any(axis=1).all()))
            return super().act(observations, action_masks)

    observing = RandomAgent()
    observing.uses_observations = True
    runs = []
    for opponent in (Probe(), observing):
        env = OkginVectorEnv(16, opponent=opponent, **options)
        rng = np.random.default_rng(1)
        out = [env.reset(seed=4)[0]]
        for t in range(60):
            actions = random_legal_actions(env.action_masks(), rng)
            if "illegal_action" in options and t % 9 == 0:
                # illegal in the space: that game's episode ends as a loss
                actions[t % 16] = np.flatnonzero(~env.action_masks()[t % 16])[0]
            obs, reward, term, trunc, info = env.step(actions)
            finals = [np.zeros(OBS_SIZE) if f is None else f for f in info.get("final_obs", [None] * 16)]
            out += [obs, reward, term, trunc, info["seat"], np.stack(finals)]
        runs.append(out)
    assert seen and all(not nonzero and not writeable and masks_ok for nonzero, writeable, masks_ok in seen)
    assert all(np.array_equal(a, b) for a, b in zip(*runs))


def test_opponent_illegal_choice_is_named():
    env = OkginVectorEnv(2, opponent=lambda o, m: np.full(len(m), 200), seat=1)
    with pytest.raises(ValueError, match="chose the illegal action 200"):
        env.reset(seed=0)


@pytest.mark.parametrize("kwargs,message", [
    ({"num_envs": 0}, "num_envs must be an integer >= 1"),
    ({"num_envs": True}, "num_envs must be"),
    ({"seat": 2}, "seat must be 0, 1 or 'random'"),
    ({"opponent": 42}, "opponent must be an agent spec string"),
    ({"opponent": "nosuchbot"}, "unknown agent spec"),
    ({"render_mode": "human"}, "render_mode must be None"),
    ({"deadwood_shaping": -1}, "deadwood_shaping"),
    ({"illegal_action": "ignore"}, "illegal_action"),
    ({"obs_format": "image"}, "obs_format"),
])
def test_constructor_errors(kwargs, message):
    with pytest.raises(ValueError, match=message):
        OkginVectorEnv(**{"num_envs": 2, **kwargs})
    with pytest.raises(TypeError, match="unknown option"):
        OkginVectorEnv(num_envs=2, bogus=1)


def test_step_and_reset_errors():
    env = OkginVectorEnv(3)
    with pytest.raises(RuntimeError, match="before reset"):
        env.step(np.zeros(3, np.int64))
    with pytest.raises(ValueError, match="reset options: .*52"):
        env.reset(options={"deck": [1, 2, 3]})
    with pytest.raises(ValueError, match="reset options: dealers must be 0 or 1"):
        env.reset(options={"dealer": 2})
    with pytest.warns(UserWarning, match="ignoring unknown reset option"):
        env.reset(options={"decks": None})
    with pytest.raises(ValueError, match=r"actions must be an integer array of shape \(3,\)"):
        env.step(np.zeros(2, np.int64))
    with pytest.raises(ValueError, match="actions must be an integer array"):
        env.step(np.zeros(3))


def test_reset_replays_one_deck_per_game():
    env = OkginVectorEnv(3, seat=0)
    decks = [np.roll(np.arange(52), k) for k in range(3)]
    env.reset(options={"deck": decks, "dealer": [0, 1, 0]})
    np.testing.assert_array_equal(env.game.state.deck, np.stack(decks))
    env.reset(options={"deck": " ".join(okgin_env.card_text(c) for c in range(52)), "dealer": 1})
    assert (env.game.state.deck == np.arange(52)).all() and (env.game.state.dealer == 1).all()


# ---------------------------------------------------------------------------- make_vec

def test_make_vec_builds_the_vector_env():
    env = gymnasium.make_vec("okgin/OklahomaGin-v0", num_envs=4, vectorization_mode="vector_entry_point",
                             opponent="random", episode="game", deadwood_shaping=0.25)
    assert isinstance(env.unwrapped, OkginVectorEnv) and env.num_envs == 4
    assert env.unwrapped.config.episode == "game" and env.unwrapped.config.deadwood_shaping == 0.25
    assert env.single_action_space == gymnasium.spaces.Discrete(NUM_ACTIONS)
    assert env.action_space.shape == (4,) and env.observation_space.shape == (4, OBS_SIZE)
    obs, info = env.reset(seed=0)
    obs, r, term, trunc, info = env.step(random_legal_actions(info["action_mask"], np.random.default_rng(0)))
    assert obs.shape == (4, OBS_SIZE)
    env.close()


def test_make_vec_default_mode_is_the_vector_env_and_sync_still_works():
    assert isinstance(gymnasium.make_vec("okgin/OklahomaGin-v0", num_envs=2).unwrapped, OkginVectorEnv)
    sync = gymnasium.make_vec("okgin/OklahomaGin-v0", num_envs=2, vectorization_mode="sync", opponent="random")
    assert isinstance(sync, gymnasium.vector.SyncVectorEnv)
    obs, _ = sync.reset(seed=0)
    assert obs.shape == (2, OBS_SIZE)
