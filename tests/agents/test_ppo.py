"""PPO pieces in isolation: the masked policy, per-player GAE, one update, configs, checkpoint errors."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from okgin_agents.ppo import (
    ActorCritic,
    PPOAgent,
    export_checkpoint,
    load_checkpoint,
    load_ppo_agent,
    masked_entropy,
    masked_log_probs,
    save_checkpoint,
)
from okgin_trainer import bc, config
from okgin_trainer.storage import Decisions

from okgin import train
from okgin_env.agent_specs import make_agent
from okgin_env.game.actions import NUM_ACTIONS
from okgin_env.game.core import VectorGame, random_legal_actions
from okgin_env.game.observation import OBS_SIZE, OBS_VERSION
from okgin_env.game.rules import Rules


def legal_batch(n: int = 64, seed: int = 0):
    """Real observations and masks from random play."""
    game = VectorGame(n, seed=seed, autoreset=True)
    out = game.reset()
    rng = np.random.default_rng(seed)
    obs, masks = [], []
    for _ in range(7):
        obs.append(out.observation)
        masks.append(out.legal_action_mask)
        a = np.argmax(np.where(out.legal_action_mask, rng.random(out.legal_action_mask.shape), -1), axis=1)
        out = game.step(a)
    return np.concatenate(obs), np.concatenate(masks)


# ------------------------------------------------------------------ masked policy
def test_masked_actions_get_probability_zero_and_are_never_sampled():
    torch.manual_seed(0)
    net = ActorCritic(hidden_sizes=[32])
    obs, masks = legal_batch()
    with torch.no_grad():
        logits, _ = net(torch.from_numpy(obs))
        logits = logits * 50  # sharp policy: illegal favourites must still get nothing
        probs = masked_log_probs(logits, torch.from_numpy(masks)).exp().numpy()
    assert (probs[~masks] == 0).all()
    np.testing.assert_allclose(probs.sum(1), 1.0, rtol=1e-5)
    for _ in range(20):
        actions, _, _, _ = net.get_action_and_value(torch.from_numpy(obs), torch.from_numpy(masks))
        assert masks[np.arange(len(masks)), actions.numpy()].all()
    for deterministic in (True, False):
        a = PPOAgent(net, deterministic=deterministic, seed=0).act(obs, masks)
        assert a.dtype == np.int64 and masks[np.arange(len(masks)), a].all()


def test_entropy_is_over_legal_actions_only():
    logits = torch.zeros(3, NUM_ACTIONS)
    mask = torch.zeros(3, NUM_ACTIONS, dtype=torch.bool)
    mask[0, :2] = True
    mask[1, :11] = True
    mask[2, 104] = True
    ent = masked_entropy(masked_log_probs(logits, mask))
    np.testing.assert_allclose(ent.numpy(), [math.log(2), math.log(11), 0.0], atol=1e-6)
    assert torch.isfinite(ent).all()


# ----------------------------------------------------------------- per-player GAE
def test_per_player_gae_on_a_hand_made_two_player_trajectory():
    """One game, both seats learner decisions (self-play):

    step 0: P0 takes the upcard (V=.1)      step 3: P0 discards (V=.4)
    step 1: P1 draws (V=.2)                 step 4: P1 knocks and wins: rewards (P0 -.3, P1 +.3)
    step 2: P0 draws (V=.3)                 step 5: new hand, P1 decides (V=.6) -> pending at the end

    P0's chain is 0 -> 2 -> 3 -> end (its reward arrives on P1's step 4), P1's is 1 -> 4 -> end.
    """
    gamma, lam = 0.9, 0.8
    st = train.TurnStorage(num_steps=6, num_envs=1)
    env = np.array([0])
    players = [0, 1, 0, 0, 1, 1]
    values = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6]
    rewards = {4: (-0.3, 0.3)}
    for t, (p, v) in enumerate(zip(players, values)):
        st.add(train.CARRY + t, env, np.array([p]),
               Decisions(np.zeros((1, OBS_SIZE)), np.ones((1, NUM_ACTIONS), bool), np.array([0]), np.array([0.0]), np.array([v])))
        r = rewards.get(t, (0.0, 0.0))
        st.credit(np.array([r], np.float32), np.array([t == 4]))
    adv, ret, trainable = train.per_player_gae(st.rewards, st.values, st.dones, st.next_row, st.valid, gamma, lam)
    a = adv[train.CARRY:, 0]

    a3 = -0.3 - 0.4                          # P0 terminal: reward -0.3, no bootstrap
    a2 = (0.9 * 0.4 - 0.3) + gamma * lam * a3
    a0 = (0.9 * 0.3 - 0.1) + gamma * lam * a2
    a4 = 0.3 - 0.5                           # P1 terminal
    a1 = (0.9 * 0.5 - 0.2) + gamma * lam * a4
    np.testing.assert_allclose(a[:5], [a0, a1, a2, a3, a4], rtol=1e-5)
    assert a[5] == 0 and list(trainable[train.CARRY:, 0]) == [True] * 5 + [False]
    np.testing.assert_allclose(ret[train.CARRY:, 0][:5], np.array([a0, a1, a2, a3, a4]) + values[:5], rtol=1e-5)

    # the pending decision moves to carry row 1 (player 1) and is trained in the next rollout
    st.carry_over()
    assert st.valid[1, 0] and not st.valid[train.CARRY:].any() and st.values[1, 0] == pytest.approx(0.6)
    st.add(train.CARRY, env, np.array([0]),
               Decisions(np.zeros((1, OBS_SIZE)), np.ones((1, NUM_ACTIONS), bool), np.array([0]), np.array([0.0]), np.array([0.7])))   # P0 moves (its first decision of the hand)
    st.add(train.CARRY + 1, env, np.array([1]),
               Decisions(np.zeros((1, OBS_SIZE)), np.ones((1, NUM_ACTIONS), bool), np.array([0]), np.array([0.0]), np.array([0.8])))   # P1's next decision
    adv, _, trainable = train.per_player_gae(st.rewards, st.values, st.dones, st.next_row, st.valid, gamma, lam)
    assert trainable[1, 0] and not trainable[train.CARRY, 0] and not trainable[train.CARRY + 1, 0]
    assert adv[1, 0] == pytest.approx(0.9 * 0.8 - 0.6)  # bootstraps on P1's own next state, not P0's


def test_bot_seat_decisions_are_not_stored_and_rewards_reach_the_learner():
    """Learner is player 1 against a bot: the bot's knock pays player 1's last decision."""
    st = train.TurnStorage(num_steps=3, num_envs=1)
    env = np.array([0])
    st.add(train.CARRY + 1, env, np.array([1]),
               Decisions(np.zeros((1, OBS_SIZE)), np.ones((1, NUM_ACTIONS), bool), np.array([0]), np.array([0.0]), np.array([0.5])))
    st.credit(np.array([[0.0, 0.0]], np.float32), np.array([False]))
    st.credit(np.array([[0.4, -0.4]], np.float32), np.array([True]))  # bot (player 0) knocks at step 2
    adv, _, trainable = train.per_player_gae(st.rewards, st.values, st.dones, st.next_row, st.valid, 1.0, 0.95)
    assert trainable.sum() == 1 and adv[train.CARRY + 1, 0] == pytest.approx(-0.4 - 0.5)


def test_potential_shaping_telescopes_along_a_chain():
    st = train.TurnStorage(num_steps=3, num_envs=1)
    env = np.array([0])
    for t in range(3):
        st.add(train.CARRY + t, env, np.array([0]),
               Decisions(np.zeros((1, OBS_SIZE)), np.ones((1, NUM_ACTIONS), bool), np.array([0]), np.array([0.0]), np.array([0.0]), np.array([-0.1 * (3 - t)])))
        st.credit(np.array([[1.0 if t == 2 else 0.0, 0.0]], np.float32), np.array([t == 2]))
    adv, _, _ = train.per_player_gae(st.rewards, st.values, st.dones, st.next_row, st.valid, 1.0, 1.0, st.potentials)
    # gamma = lambda = 1, V = 0: advantage of the first decision = return + (0 - phi(first))
    assert adv[train.CARRY, 0] == pytest.approx(1.0 + 0.3)


# -------------------------------------------------------------------- PPO update
@pytest.mark.slow  # about a second: the fast loop (-m 'not slow') stays under a minute
def test_one_ppo_update_changes_weights_and_lowers_the_clipped_loss():
    torch.manual_seed(0)
    args = train.Args(hidden_sizes=[32], update_epochs=4, num_minibatches=1, learning_rate=3e-3, anneal_lr=False)
    net = ActorCritic(hidden_sizes=args.hidden_sizes)
    opt = torch.optim.Adam(net.parameters(), lr=args.learning_rate, eps=1e-5)
    obs, masks = legal_batch(16)
    o, m = torch.from_numpy(obs), torch.from_numpy(masks)
    with torch.no_grad():
        actions, logprobs, _, values = net.get_action_and_value(o, m)
    g = torch.Generator().manual_seed(1)
    batch = dict(obs=o, masks=m, actions=actions, logprobs=logprobs, values=values,
                 advantages=torch.randn(len(o), generator=g), returns=torch.randn(len(o), generator=g))
    before = {k: v.clone() for k, v in net.state_dict().items()}
    with torch.no_grad():
        loss_before, _ = train.ppo_loss(net, batch, args)
    stats = train.ppo_update(net, opt, batch, args, np.random.default_rng(0))
    with torch.no_grad():
        loss_after, _ = train.ppo_loss(net, batch, args)
    assert any(not torch.equal(before[k], v) for k, v in net.state_dict().items())
    assert loss_after.item() < loss_before.item()
    assert set(stats) >= {"policy_loss", "value_loss", "entropy", "approx_kl", "clipfrac"}


# ------------------------------------------------------------------ opponent pool
def test_the_learner_joins_the_pool_on_schedule_when_it_beats_the_pool_or_while_the_pool_is_empty():
    from okgin_trainer.pool import Opponents
    net = ActorCritic(hidden_sizes=[8])
    opp = Opponents({"self": 0.5, "snapshot": 0.5}, 4, 3, np.random.default_rng(0), make_agent,
                    agent_seed=0, model_config=net.config, device=torch.device("cpu"))
    due = lambda it, margin=5.0: opp.snapshot_due(it, every=10, margin=margin, min_hands=100)  # noqa: E731
    assert due(3)  # the pool is empty
    opp.add_snapshot(net, 3)
    assert not due(4) and due(10)
    opp.pool_points, opp.pool_hands = 600.0, 99  # +6 points per hand, but too few hands to judge
    assert not due(4)
    opp.pool_hands = 100
    assert due(4) and not due(4, margin=0) and not due(4, margin=7.0)
    only_self = Opponents({"self": 1.0}, 4, 3, np.random.default_rng(0), make_agent, agent_seed=0,
                          model_config=net.config, device=torch.device("cpu"))
    assert not only_self.snapshot_due(10, every=10, margin=5.0, min_hands=100)  # no snapshot in the mix


# ------------------------------------------------------------------------ config
@pytest.mark.parametrize("cfg, message", [
    ({"num_envz": 8}, "unknown config key(s) num_envz (did you mean num_envs?); valid keys: exp_name"),
    ({"num_envs": 0}, "'num_envs': 0 is invalid; allowed: an integer >= 1"),
    ({"num_envs": 2.5}, "'num_envs': 2.5 is not an integer"),
    ({"learning_rate": "fast"}, "'learning_rate': 'fast' is not a number"),
    ({"anneal_lr": "yes"}, "'anneal_lr': 'yes' is not true/false"),
    ({"gamma": 1.5}, "0 < gamma <= 1"),
    ({"device": "tpu"}, "cpu, cuda or auto"),
    ({"hidden_sizes": 256}, "is not a list"),
    ({"opponent_mix": {"self": 1, "grandma": 1}}, "'opponent_mix' (self, snapshot or an agent spec): unknown agent spec 'grandma'; valid specs: random"),
    ({"eval_opponents": ["nosuchmodule:Bot"], "best_metric_opponent": "nosuchmodule:Bot"},
     "'eval_opponents': agent spec 'nosuchmodule:Bot': cannot import module 'nosuchmodule'"),
    ({"bc_agent": "ppo:missing.pt"}, "'bc_agent': PPO checkpoint not found: missing.pt"),
    ({"rules": {"knock_limit": 11}}, "invalid rule option knock_limit=11"),
    ({"rules": {"knok_limit": 3}}, "unknown rule option(s) knok_limit"),
    ({"eval_opponents": ["random"], "best_metric_opponent": "expert"}, "one of eval_opponents (random)"),
    # a bad agent spec is its own key's problem, with the valid specs and the closest one (#25 item 5)
    ({"eval_opponents": ["expret"], "best_metric_opponent": "expert"},
     "config key 'eval_opponents': unknown agent spec 'expret'; valid specs: random"),
    ({"eval_opponents": ["expret"], "best_metric_opponent": "expert"}, "(did you mean expert?)"),
    ({"opponent_mix": {"self": 1, "expret": 1}}, "(did you mean expert?)"),
    ({"opponent_mix": {"slef": 1}}, "config key 'opponent_mix' (self, snapshot or an agent spec): unknown agent spec 'slef'"),
    ({"opponent_mix": {"slef": 1}}, "(did you mean self?)"),
    ({"bc_agent": "simpel"}, "config key 'bc_agent': unknown agent spec 'simpel'; valid specs: random"),
    ({"eval_opponents": ["random", "simple"], "best_metric_opponent": "simpel"},
     "'best_metric_opponent': 'simpel' must be one of eval_opponents (random, simple)"),
    ({"init_from": "ppo:checkpoints/okgin_ppo.pt"},
     "'init_from': 'ppo:checkpoints/okgin_ppo.pt' is invalid; allowed: a checkpoint path, not an agent spec"),
    # a YAML value of another form says the form expected; {expert:1.0} is a key without a value
    ({"opponent_mix": {"expert:1.0": None}}, "is not a mapping of names to numbers, e.g. {self: 0.5, expert: 0.5} "
     "(YAML read 'expert:1.0' as a key without a value: write a space after the colon, expert: 1.0)"),
    ({"hidden_sizes": "256 256"}, "'256 256' is not a list of integers, e.g. [256, 256]"),
    ({"rules": {"knock_limit:10": None}}, "config key 'rules': unknown rule option(s) knock_limit:10"),
    ({"rules": {"knock_limit:10": None}}, "write a space after the colon, knock_limit: 10"),
])
def test_bad_config_keys_and_values_give_clear_errors(cfg, message):
    with pytest.raises(ValueError) as e:
        config.args_from_dict(cfg)
    assert message in str(e.value)


@pytest.mark.parametrize("value, message", [
    # YAML reads {expret:1.0} as {'expret:1.0': None}: the error said "None is not a number"
    ("opponent_mix={expret:1.0}", "--set opponent_mix={expret:1.0}: YAML read the value as {'expret:1.0': None}, "
     "which is not a mapping of names to numbers, e.g. {self: 0.5, expert: 0.5} (YAML read 'expret:1.0' as a key "
     "without a value: write a space after the colon, expret: 1.0)"),
    ("opponent_mix={expret: 1.0}", "config key 'opponent_mix' (self, snapshot or an agent spec): unknown agent spec 'expret'"),
    # the typo is eval_opponents' problem (the error complained about best_metric_opponent)
    ("eval_opponents=[expret]", "config key 'eval_opponents': unknown agent spec 'expret'; valid specs: random"),
    ("eval_opponents=expert", "--set eval_opponents=expert: YAML read the value as 'expert', which is not a list "
     "of strings, e.g. [random, simple, expert]"),
    ("hidden_sizes=256, 256", "YAML read the value as '256, 256', which is not a list of integers, e.g. [256, 256]"),
    ("learning_rat=0.1", "unknown config key(s) learning_rat (did you mean learning_rate?); valid keys: exp_name"),
    ("eval_opponents=[random]", "'best_metric_opponent': 'simple' must be one of eval_opponents (random): set it to "
     "one of them, or add it to eval_opponents"),
])
def test_set_values_read_differently_than_meant_say_what_was_read(value, message, tmp_path):
    cfg = tmp_path / "c.yaml"
    cfg.write_text("eval_opponents: [simple]\nbest_metric_opponent: simple\n")
    with pytest.raises(ValueError) as e:
        train.parse_cli(["--config", str(cfg), "--set", value])
    assert message in str(e.value) and "\n" not in str(e.value)
    if value == "eval_opponents=[expret]":
        assert "best_metric_opponent" not in str(e.value) and "(did you mean expert?)" in str(e.value)


def test_set_overrides_and_help_lists_every_key(capsys, tmp_path):
    cfg = tmp_path / "c.yaml"
    cfg.write_text("num_envs: 8\nhidden_sizes: [16]\n")
    args, resume = train.parse_cli(["--config", str(cfg), "--set", "num_envs=4", "--set", "opponent_mix={self: 1}",
                                    "--seed", "7"])
    assert (args.num_envs, args.hidden_sizes, args.opponent_mix, args.seed, resume) == (4, [16], {"self": 1.0}, 7, None)
    args, _ = train.parse_cli(["--config", str(cfg), "--set", "learning_rate=3e-4"])  # YAML 1.1 reads this as text
    assert args.learning_rate == 3e-4
    args, _ = train.parse_cli(["--config", str(cfg), "--set", "rules=eaai"])  # a rule set's name, as in a file
    assert args.rules == Rules.eaai().to_dict()
    with pytest.raises(ValueError, match="unknown rule set 'eaia'; rule sets: oklahoma, eaai"):
        train.parse_cli(["--config", str(cfg), "--set", "rules=eaia"])
    with pytest.raises(ValueError, match="must look like key=value"):
        train.parse_cli(["--config", str(cfg), "--set", "num_envs"])
    with pytest.raises(SystemExit):
        train.parse_cli(["--help"])
    text = capsys.readouterr().out
    for key, help_text in train.key_help().items():
        assert f"  {key} (default " in text and help_text, f"{key} needs a help text"
        assert help_text in text, f"--help lacks the help text of {key}"


# ------------------------------------------------------------------- checkpoints
def test_checkpoint_load_errors_are_clear(tmp_path, write_checkpoint):
    with pytest.raises(FileNotFoundError, match="not found"):
        load_ppo_agent(str(tmp_path / "missing.pt"))
    bad = tmp_path / "corrupt.pt"
    bad.write_bytes(b"this is not a checkpoint")
    with pytest.raises(ValueError, match="not a readable okgin PPO checkpoint"):
        load_ppo_agent(str(bad))
    old = tmp_path / "old.pt"
    write_checkpoint(old, obs_version=OBS_VERSION - 1)
    with pytest.raises(ValueError, match="observation layout version"):
        load_ppo_agent(str(old))
    good = tmp_path / "good.pt"
    write_checkpoint(good)
    small = tmp_path / "small.pt"
    export_checkpoint(str(good), str(small))
    agent = load_ppo_agent(str(small), seed=0)
    obs, masks = legal_batch(4)
    assert masks[np.arange(len(masks)), agent.act(obs, masks)].all()
    assert "optimizer" not in load_checkpoint(str(small))


def test_features_version_is_checked_and_missing_reads_as_version_1(tmp_path, write_checkpoint):
    """A network trained on other input features is refused, naming both versions; a checkpoint
    written before the version existed (as the shipped one of 2026-11-30) is version 1 and loads."""
    from okgin_agents.ppo import FEATURES_VERSION
    newer = tmp_path / "newer.pt"
    write_checkpoint(newer, features_version=FEATURES_VERSION + 1)
    with pytest.raises(ValueError, match=f"features version {FEATURES_VERSION + 1}, but .* version {FEATURES_VERSION}"):
        load_ppo_agent(str(newer))
    old = {k: v for k, v in load_checkpoint("checkpoints/okgin_ppo.pt").items() if k != "features_version"}
    save_checkpoint(str(tmp_path / "old.pt"), old)  # as the checkpoints of 2026-11-30 were written
    assert FEATURES_VERSION == 1 and load_checkpoint(str(tmp_path / "old.pt")).get("features_version", 1) == 1
    load_ppo_agent(str(tmp_path / "old.pt"))


def test_behaviour_cloning_warm_start_imitates_the_bot():
    torch.manual_seed(0)
    args = train.Args(num_envs=32, bc_agent="simple", bc_decisions=2048, bc_epochs=8, bc_minibatch_size=256,
                      hidden_sizes=[64])
    net = ActorCritic(hidden_sizes=args.hidden_sizes, mask_input=True)
    obs, masks, actions, targets, has_target, _ = bc.collect_imitation_data(
        make_agent("simple", seed=0), args, Rules(), seed=5)
    assert len(obs) == 2048 and masks[np.arange(len(actions)), actions].all() and has_target.any()

    def mean_logprob():
        with torch.no_grad():
            _, lp, _, _ = net.get_action_and_value(torch.from_numpy(obs.astype(np.float32)), torch.from_numpy(masks),
                                                   torch.from_numpy(actions))
        return lp.mean().item()

    before = mean_logprob()
    bc.behaviour_cloning(net, args, Rules(), "cpu", log=lambda *_: None)
    assert mean_logprob() > before + 0.3


def test_meld_features_read_the_hand_like_a_player():
    """Own hand As 2s 3s (a run) 7h 7d (a pair) Kc ...; the top discard 7c would make a set."""
    from okgin_agents.ppo import MELD_FEATURES, meld_features, network_input

    from okgin_env.game.cards import parse_cards
    from okgin_env.game.observation import OBS_FIELDS
    obs = np.zeros((1, OBS_SIZE), np.float32)
    hand = parse_cards("As 2s 3s 7h 7d Kc Qd 9h 5c Jd")
    obs[0, OBS_FIELDS["own_hand"].start + np.array(hand)] = 1
    obs[0, OBS_FIELDS["discard_top"].start + parse_cards("7c")[0]] = 1
    obs[0, OBS_FIELDS["phase"].start + 3] = 1  # draw
    f = meld_features(obs)[0]
    assert f.shape == (MELD_FEATURES,)
    melded, melded_top = f[:52], f[52:104]
    assert set(np.flatnonzero(melded)) == set(parse_cards("As 2s 3s"))
    assert set(np.flatnonzero(melded_top)) == set(parse_cards("As 2s 3s 7h 7d 7c"))
    dw_now, dw_take, gain, top_melded = f[-4:] * [110, 110, 110, 1]
    assert (round(dw_now), top_melded) == (7 + 7 + 10 + 10 + 9 + 5 + 10, 1)
    assert round(dw_take) == 10 + 10 + 9 + 5 and round(gain) == round(dw_now - dw_take)  # keeps the set, drops a king
    assert network_input(obs, "meld").shape == (1, OBS_SIZE + MELD_FEATURES)
    net = ActorCritic(hidden_sizes=[16], mask_input=True, features="meld")
    o, m = legal_batch(8)
    assert m[np.arange(len(m)), PPOAgent(net, seed=0).act(o, m)].all()


def test_init_from_may_widen_the_features_and_keeps_the_policy():
    """A meld network loaded into an outs network computes the same logits and values; nothing
    else may differ."""
    from okgin_agents.ppo import load_widened, network_input
    net = ActorCritic(hidden_sizes=[32], mask_input=True, features="meld", shared_trunk=False)
    ckpt = {"model": net.state_dict(), "model_config": net.config}
    wide = ActorCritic(hidden_sizes=[32], mask_input=True, features="outs", shared_trunk=False)
    load_widened(wide, ckpt)
    o, m = legal_batch(64)
    mask = torch.as_tensor(m)
    with torch.no_grad():
        a, b = net(torch.as_tensor(network_input(o, "meld")), mask), wide(torch.as_tensor(network_input(o, "outs")), mask)
    torch.testing.assert_close(a[0], b[0])
    torch.testing.assert_close(a[1], b[1])
    with pytest.raises(ValueError, match="only the features may grow"):
        load_widened(ActorCritic(hidden_sizes=[32], mask_input=True, features="raw", shared_trunk=False), ckpt)
    with pytest.raises(ValueError, match="only the features may grow"):
        load_widened(ActorCritic(hidden_sizes=[16], mask_input=True, features="outs", shared_trunk=False), ckpt)


def test_a_shared_trunk_may_split_into_an_oracle_critic_and_keeps_the_policy_and_value():
    """A shared-trunk checkpoint loaded into a network with its own critic body reading privileged
    inputs computes the same logits and values, whatever those inputs are (their weights start at 0)."""
    from okgin_agents.ppo import load_widened, network_input
    from okgin_trainer.oracle import PRIVILEGED_SIZE
    net = ActorCritic(hidden_sizes=[32, 16], mask_input=True, features="meld")
    ckpt = {"model": net.state_dict(), "model_config": net.config}
    oracle = ActorCritic(hidden_sizes=[32, 16], mask_input=True, features="outs", shared_trunk=False,
                         privileged_size=PRIVILEGED_SIZE)
    load_widened(oracle, ckpt)
    o, m = legal_batch(64)
    mask = torch.as_tensor(m)
    priv = torch.rand(len(o), PRIVILEGED_SIZE)
    with torch.no_grad():
        a = net(torch.as_tensor(network_input(o, "meld")), mask)
        b = oracle(torch.as_tensor(network_input(o, "outs")), mask, priv)
        logits = oracle.policy_logits(torch.as_tensor(network_input(o, "outs")), mask)
    torch.testing.assert_close(a[0], b[0])
    torch.testing.assert_close(a[1], b[1])
    torch.testing.assert_close(logits, b[0])
    with pytest.raises(ValueError, match="privileged"):
        oracle(torch.as_tensor(network_input(o, "outs")), mask)  # the critic cannot run without them
    with pytest.raises(ValueError, match="shared_trunk=False"):
        ActorCritic(privileged_size=PRIVILEGED_SIZE)  # the policy would read them
    with pytest.raises(ValueError, match="does not fit"):  # a critic cannot lose its privileged inputs
        load_widened(net, {"model": oracle.state_dict(), "model_config": oracle.config})


def test_init_from_may_widen_the_hidden_layers_and_keeps_the_policy_and_value():
    """A 32x16 oracle network loaded into a 48x40 one computes the same logits and values; the new
    units do not depend on the run's seed (so widened runs can be averaged) and do learn; depth
    may not change."""
    from okgin_agents.ppo import load_widened, network_input
    from okgin_trainer.oracle import PRIVILEGED_SIZE
    kw = dict(mask_input=True, features="outs", shared_trunk=False, privileged_size=PRIVILEGED_SIZE)
    net = ActorCritic(hidden_sizes=[32, 16], **kw)
    ckpt = {"model": net.state_dict(), "model_config": net.config}
    wide = []
    for seed in (1, 2):
        torch.manual_seed(seed)
        wide.append(ActorCritic(hidden_sizes=[48, 40], **kw))
        load_widened(wide[-1], ckpt)
    for k, v in wide[0].state_dict().items():
        torch.testing.assert_close(v, wide[1].state_dict()[k])
    o, m = legal_batch(64)
    x, mask, priv = torch.as_tensor(network_input(o, "outs")), torch.as_tensor(m), torch.rand(len(o), PRIVILEGED_SIZE)
    with torch.no_grad():
        a, b = net(x, mask, priv), wide[0](x, mask, priv)
    torch.testing.assert_close(a[0], b[0])
    torch.testing.assert_close(a[1], b[1])
    logits, value = wide[0](x, mask, priv)
    (logits.logsumexp(-1).mean() + value.mean()).backward()
    assert wide[0].actor.weight.grad[:, 16:].abs().sum() > 0  # the new units feed the heads once trained
    assert wide[0].critic.weight.grad[:, 16:].abs().sum() > 0
    with pytest.raises(ValueError, match="may widen, not deepen"):
        load_widened(ActorCritic(hidden_sizes=[32, 16, 16], **kw), ckpt)
    with pytest.raises(ValueError, match="may widen, not deepen"):
        load_widened(ActorCritic(hidden_sizes=[48, 8], **kw), ckpt)


def test_privileged_inputs_are_the_opponents_hand_and_the_stock_order():
    from okgin_trainer.oracle import PRIVILEGED_SIZE, privileged_inputs

    from okgin_env.game.actions import DRAW_STOCK
    from okgin_env.game.cards import CARD_POINTS
    game = VectorGame(64, seed=11)
    out = game.reset()
    rng = np.random.default_rng(1)
    checked = 0
    for _ in range(30):
        players = out.current_player.astype(np.int64)
        games = np.arange(64)
        priv = privileged_inputs(game.state, games, players)
        assert priv.shape == (64, PRIVILEGED_SIZE)
        opp = game.state.hands[games, 1 - players]
        np.testing.assert_array_equal(priv[:, :52], opp)
        melded = priv[:, 52:104] > 0
        assert not (melded & ~opp).any()
        dw = np.where(opp & ~melded, CARD_POINTS, 0).sum(1)  # unmelded points
        np.testing.assert_allclose(priv[:, 104] * 110, dw, atol=1e-4)
        stock = priv[:, 105:]
        in_stock = stock > 0
        np.testing.assert_array_equal(in_stock.sum(1), 52 - game.state.stock_next)
        assert not (in_stock & game.state.hands.any(1)).any()  # no held card is in the stock
        top = stock.argmax(1)  # the next stock card reads 1
        has_stock = in_stock.any(1)
        np.testing.assert_array_equal(stock[has_stock, top[has_stock]], 1.0)
        np.testing.assert_array_equal(top[has_stock], game.state.deck[has_stock, game.state.stock_next[has_stock]])
        before = game.state.hands.copy()
        actions = random_legal_actions(out.legal_action_mask, rng)
        out = game.step(actions)
        drew = np.flatnonzero((actions == DRAW_STOCK) & ~game.state.done)
        for g in drew:  # a stock draw takes exactly the card that read 1
            assert np.flatnonzero(game.state.hands[g, players[g]] & ~before[g, players[g]]).tolist() == [top[g]]
        checked += len(drew)
    assert checked > 50
