"""The learner features (okgin_env.features.learner) and the envs' ``features=`` option.

The features moved from okgin_agents into okgin_env (issue 25, item 7): the shipped checkpoint
must read the same bits as before, and a learner on any env must get exactly what okgin's own
trainer feeds its network.
"""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest
from support import ROOT, assert_plays_legally, load_example_agent

from okgin_env.envs.aec import raw_env
from okgin_env.envs.options import observation_box
from okgin_env.envs.single_agent import SingleAgentEnv
from okgin_env.envs.vector import OkginVectorEnv
from okgin_env.features import rows as k
from okgin_env.features.learner import (
    FEATURES,
    FEATURES_PARAMS,
    MELD_FEATURES,
    MELD_FIELDS,
    NUM_OUTS_FIELDS,
    OUTS_FEATURES,
    OUTS_FIELDS,
    TableReading,
    TableView,
    can_meld,
    discard_outs,
    features_for_size,
    input_size,
    learner_input,
    meld_features,
    outs,
    outs_features,
    read_table,
)
from okgin_env.game.cards import parse_cards
from okgin_env.game.core import VectorGame, random_legal_actions
from okgin_env.game.observation import OBS_FIELDS, OBS_SIZE
from okgin_env.game.rules import Rules

FIXTURE = ROOT / "tests" / "data" / "features_v1.npz"


# ------------------------------------------------------------------ same bits as before
def test_features_are_the_bits_computed_before_the_move():
    """``tests/data/features_v1.npz`` holds 320 observations (hand and game episodes, every phase,
    six with no decision) and their meld and outs features as commit 547085e computed them, in
    okgin_agents (``tests/data/make_features_v1.py``). The code in okgin_env gives the same bits,
    so the shipped network reads what it was trained on and makes the same moves."""
    from okgin_agents.ppo import load_ppo_agent, network_input

    d = np.load(FIXTURE)
    obs = d["obs"]
    x = network_input(obs, "outs")
    assert x.dtype == np.float32 and x.shape == (len(obs), input_size("outs")) == (320, 861)
    assert x[:, OBS_SIZE:OBS_SIZE + MELD_FEATURES].tobytes() == d["meld"].tobytes()
    assert x[:, OBS_SIZE + MELD_FEATURES:].tobytes() == d["outs"].tobytes()
    assert network_input(obs, "meld")[:, OBS_SIZE:].tobytes() == d["meld"].tobytes()
    agent = load_ppo_agent(str(ROOT / "checkpoints" / "okgin_ppo.pt"), seed=0)
    assert agent.network.features == "outs"
    np.testing.assert_array_equal(agent.act(obs[6:], d["mask"][6:]), d["ppo_actions"][6:])


def test_a_networks_input_width_tells_its_features():
    """``features_for_size`` reads a saved network's feature set from its input width (the SB3 and
    RLlib examples' agents load models that did not record it); any other width is refused by name."""
    assert [features_for_size(input_size(f)) for f in FEATURES] == list(FEATURES)
    with pytest.raises(ValueError, match=r"reading 7 inputs .* allowed are .*861 \(outs\)"):
        features_for_size(7)


def test_outs_features_read_with_frozen_params_not_the_bots_defaults():
    """Retuning the expert bot (its ``ExpertParams``) must not change what trained networks read:
    the features read the table with ``FEATURES_PARAMS``, the expert's weights of 2026-11-30."""
    from okgin_agents.expert import ExpertParams

    assert FEATURES_PARAMS == TableReading(signal_factor=0.3, taken_partner_belief=1.0, thrown_partner_doubt=0.15)
    assert isinstance(ExpertParams(), ExpertParams)  # the bot's weights are its own dataclass
    obs = np.load(FIXTURE)["obs"]
    retuned = TableReading(signal_factor=0.9, taken_partner_belief=1.0, thrown_partner_doubt=0.6)
    assert not np.array_equal(outs_features(obs, params=retuned), outs_features(obs))  # the params matter


# ------------------------------------------------------------------ what they say
def _table(hand: str, phase: int, knock_limit: int) -> np.ndarray:
    """An observation with only the own hand, the phase and the knock limit set (nothing else seen)."""
    obs = np.zeros((1, OBS_SIZE), np.float32)
    obs[0, OBS_FIELDS["own_hand"].start + np.array(parse_cards(hand))] = 1
    obs[0, OBS_FIELDS["phase"].start + phase] = 1
    obs[0, OBS_FIELDS["knock_limit"].start + knock_limit] = 1
    return obs


def test_meld_features_read_the_hand_like_a_player():
    """Own hand As 2s 3s (a run) 7h 7d (a pair) Kc ...; the top discard 7c would make a set."""
    obs = _table("As 2s 3s 7h 7d Kc Qd 9h 5c Jd", phase=3, knock_limit=10)
    obs[0, OBS_FIELDS["discard_top"].start + parse_cards("7c")[0]] = 1
    f = meld_features(obs)[0]
    assert f.shape == (MELD_FEATURES,)
    assert set(np.flatnonzero(f[MELD_FIELDS["melded"]])) == set(parse_cards("As 2s 3s"))
    assert set(np.flatnonzero(f[MELD_FIELDS["melded_with_top"]])) == set(parse_cards("As 2s 3s 7h 7d 7c"))
    dw_now, dw_take, gain = (round(110 * f[MELD_FIELDS[n]][0]) for n in ("deadwood_now", "deadwood_take", "take_gain"))
    assert dw_now == 7 + 7 + 10 + 10 + 9 + 5 + 10 and f[MELD_FIELDS["top_melded"]][0] == 1
    assert dw_take == 10 + 10 + 9 + 5 and gain == dw_now - dw_take  # keeps the set, drops a king


def test_outs_features_count_the_cards_that_give_gin():
    """Nine melded cards and a king: 4s, 3h, 7h and 9h each give gin (the king goes). Nothing is
    known about the other 42 cards, so they are equally likely to come next."""
    draw = outs_features(_table("As 2s 3s 4h 5h 6h 9c 9d 9s Kc", phase=3, knock_limit=10))[0]
    assert draw.shape == (OUTS_FEATURES,)
    assert draw[OUTS_FIELDS["draw_gin"]][0] == pytest.approx(4 / 42)
    assert draw[OUTS_FIELDS["draw_knock"]][0] == pytest.approx(1.0)  # at worst it keeps the king
    # the same hand with the queen drawn: discarding the king (or the queen) leaves those outs
    disc = outs_features(_table("As 2s 3s 4h 5h 6h 9c 9d 9s Kc Qd", phase=4, knock_limit=10))[0]
    gin_after = disc[OUTS_FIELDS["gin_after"]]
    kc, qd, as_ = parse_cards("Kc Qd As")
    assert gin_after[kc] == pytest.approx(4 / 41) and gin_after[qd] == pytest.approx(4 / 41)
    assert gin_after[as_] < gin_after[kc]  # breaking the run of spades leaves fewer gin cards
    held = parse_cards("As 2s 3s 4h 5h 6h 9c 9d 9s Kc Qd")
    assert (gin_after[np.setdiff1d(np.arange(52), held)] == 0).all()
    opp = disc[OUTS_FIELDS["opp_holds"]]
    assert (opp[held] == 0).all() and np.allclose(np.delete(opp, held), 10 / 41)


def _played_observations(n: int = 256, steps: int = 50) -> np.ndarray:
    """Observations of games between two expert bots (every phase, hands rich in melds)."""
    import okgin_agents as agents

    game, bot = VectorGame(n, seed=11, autoreset=True), agents.make("expert", seed=3)
    out, seen = game.reset(), []
    for _ in range(steps):
        seen.append(out.observation.copy())
        out = game.step(bot.act(out.observation, out.legal_action_mask))
    return np.concatenate(seen)


def test_discard_outs_in_one_pass_equal_the_outs_of_each_discard():
    """The outs after each discard (one meld search per drawn card, for the features and the
    expert's discards) are exactly ``outs`` of the hand without that card (eleven searches per
    drawn card), every field."""
    obs = _played_observations()
    rows = np.flatnonzero(obs[:, OBS_FIELDS["phase"].start + 4] > 0.5)[:400]
    assert len(rows) > 100
    unseen, signal = np.empty(52, np.bool_), np.empty(52, np.bool_)
    opp, belief, weight = np.empty(52), np.empty(52), np.empty(52)
    pairs, work, ms = np.empty((6, 2), np.int64), np.empty(8, np.int64), np.empty(4, np.int64)
    res = np.empty(NUM_OUTS_FIELDS)
    table, scratch = np.empty((NUM_OUTS_FIELDS, 52)), np.empty((5, 52), np.int64)
    p = FEATURES_PARAMS
    for i in rows:
        o = obs[i]
        view = TableView(unseen, signal, opp, pairs, belief, weight)
        read_table(o, p.taken_partner_belief, p.thrown_partner_doubt, view)
        limit = k.row_knock_limit(o)
        k.row_field_masks(o, k.OWN_HAND, ms)
        discard_outs(ms, weight, limit, scratch, table, work)
        for c in np.flatnonzero(o[OBS_FIELDS["own_hand"]] > 0.5):
            k.remove(ms, c)
            outs(ms, weight, limit, work, res)
            k.add(ms, c)
            assert list(table[:, c]) == list(res), (i, c)


def test_a_card_that_cannot_meld_adds_its_points_exactly():
    """``can_meld`` is False only for a card with no two meld partners in the hand: then it is
    deadwood in every arrangement, and the outs count it without a meld search."""
    from okgin_env.game import melds
    from okgin_env.game.cards import CARD_POINTS

    rng = np.random.default_rng(5)
    ms, work = np.empty(4, np.int64), np.empty(8, np.int64)
    checked = 0
    for _ in range(3000):
        hand = np.zeros(52, bool)
        hand[rng.choice(52, 10, replace=False)] = True
        melds.masks_of_row(hand, ms)
        now, best9 = k.deadwood_and_best_discard(ms, work)
        for u in np.flatnonzero(~hand):
            if can_meld(ms, u):
                continue
            k.add(ms, u)
            got = k.deadwood_and_best_discard(ms, work)
            k.remove(ms, u)
            assert got == (now + CARD_POINTS[u], min(now, best9 + CARD_POINTS[u]))
            checked += 1
    assert checked > 10000


def test_features_lie_in_the_documented_box():
    """Every column of real features (random and expert play, hand and game episodes, terminal
    views included) lies within ``observation_box(rules, features)``."""
    rules = Rules()
    obs = np.concatenate([_played_observations(64, 40), np.load(FIXTURE)["obs"]])
    for features in FEATURES:
        box = observation_box(rules, features)
        x = learner_input(obs, features)
        assert box.shape == (input_size(features),) and x.shape[1:] == box.shape
        assert ((x >= box.low) & (x <= box.high)).all(), features
        assert all(box.contains(row) for row in x[::17])
    x = learner_input(obs, "outs")
    assert x[:, OBS_SIZE + MELD_FIELDS["take_gain"].start].min() < 0  # taking the top card may cost: low is -1


# ------------------------------------------------------------------ the envs' option
class Recorder:
    """A batched opponent that plays random legal moves and records the observation widths it got."""

    def __init__(self) -> None:
        self.rng = np.random.default_rng(0)
        self.widths: set[int] = set()

    def act(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        self.widths.add(np.asarray(observations).shape[1])
        return random_legal_actions(action_masks, self.rng)


@pytest.mark.parametrize("features", ["meld", "outs"])
@pytest.mark.parametrize("obs_format", ["vector", "dict"])
def test_vector_env_gives_the_trainers_network_input(features, obs_format):
    """Twin vector envs, one plain and one with ``features``, stepped with the same seeds and
    actions: the featured observations (and final observations) are exactly ``network_input`` of
    the plain ones, the games are the same (rewards, masks), and the opponent sees plain
    observations."""
    from okgin_agents.ppo import network_input

    n = 16
    opp_plain, opp_feat = Recorder(), Recorder()
    plain = OkginVectorEnv(n, opponent=opp_plain, knock_limit=5)
    feat = OkginVectorEnv(n, opponent=opp_feat, knock_limit=5, features=features,
                          obs_format=obs_format)
    space = feat.single_observation_space
    assert (space["observation"] if obs_format == "dict" else space) == observation_box(Rules(knock_limit=5), features)

    def unpack(o):
        return o["observation"] if obs_format == "dict" else o

    o_plain, _ = plain.reset(seed=3)
    o_feat, _ = feat.reset(seed=3)
    rng = np.random.default_rng(1)
    finals = 0
    for _ in range(150):
        np.testing.assert_array_equal(unpack(o_feat), network_input(o_plain, features))
        assert feat.observation_space.contains(o_feat)
        np.testing.assert_array_equal(feat.action_masks(), plain.action_masks())
        a = random_legal_actions(plain.action_masks(), rng)
        o_plain, r_plain, t_plain, _, i_plain = plain.step(a)
        o_feat, r_feat, t_feat, _, i_feat = feat.step(a)
        np.testing.assert_array_equal(r_feat, r_plain)
        np.testing.assert_array_equal(t_feat, t_plain)
        for g in np.flatnonzero(i_plain.get("_final_obs", np.zeros(n, bool))):
            expected = network_input(i_plain["final_obs"][g][None], features)[0]
            np.testing.assert_array_equal(unpack(i_feat["final_obs"][g]), expected)
            finals += 1
    assert finals > 10
    assert opp_feat.widths == opp_plain.widths == {OBS_SIZE}


@pytest.mark.parametrize("obs_format", ["vector", "dict"])
def test_single_agent_env_gives_the_trainers_network_input(obs_format):
    from okgin_agents.ppo import network_input

    opp = Recorder()
    plain = SingleAgentEnv(opponent=Recorder())
    feat = SingleAgentEnv(opponent=opp, features="outs", obs_format=obs_format)
    assert (feat.observation_space["observation"] if obs_format == "dict" else feat.observation_space).shape == (861,)
    rng = np.random.default_rng(2)
    for episode in range(12):
        o_plain, _ = plain.reset(seed=episode)
        o_feat, _ = feat.reset(seed=episode)
        done = False
        while True:
            got = o_feat["observation"] if obs_format == "dict" else o_feat
            np.testing.assert_array_equal(got, network_input(o_plain[None], "outs")[0])
            assert feat.observation_space.contains(o_feat)
            if done:
                break
            a = int(random_legal_actions(plain.action_masks()[None], rng)[0])
            o_plain, r_plain, t, tr, _ = plain.step(a)
            o_feat, r_feat, *_ = feat.step(a)
            assert r_feat == r_plain
            done = t or tr
    assert opp.widths == {OBS_SIZE}


def test_aec_env_gives_every_agent_the_trainers_network_input():
    from okgin_agents.ppo import network_input

    plain, feat = raw_env(), raw_env(features="outs")
    assert feat.observation_space("player_1")["observation"].shape == (861,)
    rng = np.random.default_rng(4)
    for seed in range(4):
        plain.reset(seed=seed)
        feat.reset(seed=seed)
        for agent in plain.agent_iter():
            o_plain, r_plain, term, trunc, _ = plain.last()
            o_feat, r_feat, *_ = feat.last()
            for a in plain.possible_agents:  # the other agent's view too
                np.testing.assert_array_equal(feat.observe(a)["observation"],
                                              network_input(plain.observe(a)["observation"][None], "outs")[0])
            assert r_feat == r_plain and feat.observation_space(agent).contains(o_feat)
            np.testing.assert_array_equal(o_feat["action_mask"], o_plain["action_mask"])
            action = None if term or trunc else int(random_legal_actions(o_plain["action_mask"][None].astype(bool),
                                                                         rng)[0])
            plain.step(action)
            feat.step(action)


def test_a_bad_features_option_is_a_one_line_error():
    for make in (lambda: SingleAgentEnv(features="out"), lambda: OkginVectorEnv(2, features="outs+"),
                 lambda: raw_env(features=None)):
        with pytest.raises(ValueError, match=r"^invalid option features=.*: allowed is 'raw' \| 'meld' \| 'outs'$"):
            make()


@pytest.mark.slow
def test_the_env_package_imports_neither_agents_nor_torch():
    code = ("import sys, numpy as np, okgin_env, okgin_env.features.learner, okgin_env.envs.vector, okgin_env.envs.aec\n"
            "e = okgin_env.envs.vector.OkginVectorEnv(4, opponent='random', features='outs'); e.reset(seed=0)\n"
            "bad = [m for m in sys.modules if m.split('.')[0] in ('okgin_agents', 'torch', 'okgin_trainer')]\n"
            "assert not bad, bad")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)


def test_sb3_vec_env_passes_the_features_through():
    """``OkginSB3VecEnv(..., features="outs")``: observations and terminal observations carry them."""
    pytest.importorskip("stable_baselines3")
    from okgin_env.envs.sb3 import OkginSB3VecEnv

    env = OkginSB3VecEnv(num_envs=4, opponent="random", features="outs")
    assert env.observation_space.shape == (861,)
    obs = env.reset()
    rng = np.random.default_rng(0)
    terminal = 0
    for _ in range(200):
        assert obs.shape == (4, 861) and env.observation_space.contains(obs[0])
        obs, _, dones, infos = env.step(random_legal_actions(env.action_masks(), rng))
        for i in np.flatnonzero(dones):
            assert infos[i]["terminal_observation"].shape == (861,)
            terminal += 1
    assert terminal > 0


@pytest.mark.slow
def test_sb3_example_trains_on_the_outs_features(tmp_path):
    pytest.importorskip("sb3_contrib")
    env = dict(os.environ, PYTHONPATH=str(ROOT), OMP_NUM_THREADS="1")
    done = subprocess.run([sys.executable, str(ROOT / "examples" / "sb3_maskable_ppo.py"), "--timesteps", "512",
                           "--n-envs", "2", "--hands", "10", "--features", "outs",
                           "--out", str(tmp_path / "model.zip")],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "features=outs" in done.stdout and done.stdout.count("points/hand (95% CI)") == 2
    agent = load_example_agent("examples.sb3_maskable_ppo:Agent", "OKGIN_SB3_MASKABLE_PPO_MODEL", tmp_path / "model.zip")
    assert agent.features == "outs"  # told by the saved model's input width
    assert_plays_legally(agent)
