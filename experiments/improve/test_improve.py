"""Policy improvement from rollouts of the real game (experiments.improve).

Not part of the default test run: ``python -m pytest experiments`` from the checkout's root."""

from __future__ import annotations

import os

import numpy as np
import pytest
import torch

import okgin_agents as agents
from experiments.improve.improve import combine, deviation_gain, fit, label, label_chunk, load_labels, main
from okgin_agents.ppo import ActorCritic, load_checkpoint, load_ppo_agent, network_from_checkpoint, network_input, save_checkpoint
from okgin_env.game.actions import NUM_ACTIONS
from okgin_env.game.core import VectorGame


@pytest.fixture
def policy_path(tmp_path, write_checkpoint) -> str:
    torch.manual_seed(0)
    return write_checkpoint(tmp_path / "p.pt", ActorCritic(hidden_sizes=[16, 8], shared_trunk=False, mask_input=True))


def test_every_legal_action_is_rolled_out_and_the_policys_own_choice_replays_the_hand(policy_path):
    policy = load_ppo_agent(policy_path)
    d = label_chunk(policy, 12, seed=5)
    n = len(d["choice"])
    assert n > 50 and len(d["value"]) > 2 * n
    # each decision: every legal action exactly once, nothing illegal
    labelled = np.zeros((n, NUM_ACTIONS), np.int64)
    np.add.at(labelled, (d["row"], d["action"]), 1)
    assert (labelled == d["mask"]).all() and (d["mask"].sum(1) > 1).all()
    # the rollout of the choice the policy made is the hand as it was played: the copies are exact
    q = np.full((n, NUM_ACTIONS), np.nan)
    q[d["row"], d["action"]] = d["value"]
    assert (q[np.arange(n), d["choice"]] == d["points"][d["hand"]]).all()
    assert len(np.unique(d["value"])) > 5  # the test can tell outcomes apart
    # the decisions are the policy's: it plays the recorded choice on the recorded observation
    assert (policy.act(d["obs"].astype(np.float32), d["mask"]) == d["choice"]).all()


def test_label_resumes_a_folder_and_refuses_another_policy_or_seed(policy_path, tmp_path):
    out = str(tmp_path / "lab")
    assert label(policy_path, out, hands=4, seed=1, chunk=2, log=lambda *a, **k: None) == 2
    first = os.path.getmtime(os.path.join(out, "chunk00001.npz"))
    os.remove(os.path.join(out, "chunk00000.npz"))
    label(policy_path, out, hands=4, seed=1, chunk=2, log=lambda *a, **k: None)  # redoes only the missing chunk
    assert os.path.getmtime(os.path.join(out, "chunk00001.npz")) == first
    data, chunk_of = load_labels([out])
    again = label_chunk(load_ppo_agent(policy_path), 2, seed=1 * 1000 + 0)
    assert np.array_equal(data["choice"][chunk_of == 0], again["choice"])
    with pytest.raises(ValueError, match="give another --out"):
        label(policy_path, out, hands=4, seed=2, chunk=2)
    with pytest.raises(ValueError, match="multiple of the chunk"):
        label(policy_path, str(tmp_path / "x"), hands=6, seed=1, chunk=4)
    with pytest.raises(FileNotFoundError):
        label(str(tmp_path / "missing.pt"), str(tmp_path / "y"), hands=4, seed=1, chunk=4)
    with pytest.raises(ValueError, match="not an experiments.improve label folder"):
        load_labels([str(tmp_path)])


def test_deviation_gain_reads_the_exact_label_of_the_action_played_instead():
    logits = np.array([[2.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
    mask = np.array([[True, True, False], [True, True, True]])
    adv = np.array([[0.0, 3.0, np.nan], [-1.0, 0.0, -2.0]])  # over the policy's choices 0 and 1
    pred = np.array([[0.0, 1.5, 9.0], [2.0, 0.0, 0.0]])
    choice = np.array([0, 1])
    assert deviation_gain(logits, pred, adv, mask, choice, temperature=100.0) == (0.0, 0.0)
    # T = 1: row 0 moves to action 1 (2 < 0 + 1.5? no: stays); row 1 moves to action 0 (0 + 2 > 1)
    assert deviation_gain(logits, pred, adv, mask, choice, temperature=1.0) == (0.5, -0.5)
    # T = 0.5: row 0 moves to action 1 (3 > 2), worth +3; the illegal action 2 is never played
    assert deviation_gain(logits, pred, adv, mask, choice, temperature=0.5) == (1.0, 1.0)


def test_combine_plays_the_policy_plus_the_advantage_over_temperature(policy_path, tmp_path, write_checkpoint):
    torch.manual_seed(1)
    adv = network_from_checkpoint(load_checkpoint(policy_path))
    for p in adv.parameters():
        torch.nn.init.normal_(p, std=0.3)
    adv_path = write_checkpoint(tmp_path / "a.pt", adv)
    combine(policy_path, adv_path, 0.5, str(tmp_path / "c.pt"))
    both = network_from_checkpoint(load_checkpoint(str(tmp_path / "c.pt")))
    policy = network_from_checkpoint(load_checkpoint(policy_path))
    assert both.config["hidden_sizes"] == [32, 16]
    out = VectorGame(32, seed=2).reset(seed=2)
    x = torch.as_tensor(network_input(out.observation, policy.features))
    m = torch.as_tensor(out.legal_action_mask)
    with torch.no_grad():
        want = policy.policy_logits(x, m) + adv.policy_logits(x, m) / 0.5
        assert torch.allclose(both.policy_logits(x, m), want, atol=1e-5)
        assert torch.allclose(both.get_value(x, m), policy.get_value(x, m), atol=1e-6)  # the critic is kept
    assert (agents.make(f"ppo:{tmp_path / 'c.pt'}").act(out.observation, out.legal_action_mask)
            == np.where(out.legal_action_mask, want.numpy(), -np.inf).argmax(1)).all()
    training = dict(load_checkpoint(policy_path), optimizer={"state": {}}, train_state={"x": 1})
    save_checkpoint(str(tmp_path / "t.pt"), training)  # a training checkpoint: what makes it resumable stays behind
    combine(str(tmp_path / "t.pt"), adv_path, 0.5, str(tmp_path / "ct.pt"))
    assert not {"optimizer", "train_state"} & set(load_checkpoint(str(tmp_path / "ct.pt")))
    with pytest.raises(ValueError, match="temperature must be > 0"):
        combine(policy_path, adv_path, 0.0, str(tmp_path / "d.pt"))
    other = write_checkpoint(tmp_path / "o.pt", ActorCritic(hidden_sizes=[16, 8], shared_trunk=False))
    with pytest.raises(ValueError, match="does not read what"):
        combine(policy_path, other, 1.0, str(tmp_path / "d.pt"))


def test_fit_learns_an_advantage_and_writes_a_checkpoint_combine_reads(policy_path, tmp_path, capsys):
    out = str(tmp_path / "lab")
    label(policy_path, out, hands=20, seed=3, chunk=2, log=lambda *a, **k: None)  # 10 chunks, one held out
    res = fit(policy_path, [out], str(tmp_path / "adv.pt"), epochs=2, learning_rate=1e-3)
    # the untrained policy is poor: following the fitted advantage on held-out hands gains points
    changed, gain = res[1.0]
    assert changed > 0.1 and gain > 1.0
    assert "held-out mse" in capsys.readouterr().out
    ckpt = load_checkpoint(str(tmp_path / "adv.pt"))
    assert ckpt["model_config"] == load_checkpoint(policy_path)["model_config"]
    main(["combine", "--policy", policy_path, "--advantage", str(tmp_path / "adv.pt"), "--temperature", "1",
          "--out", str(tmp_path / "c.pt")])
    assert os.path.isfile(tmp_path / "c.pt")
    with pytest.raises(SystemExit, match="exists; pass --force"):
        main(["combine", "--policy", policy_path, "--advantage", str(tmp_path / "adv.pt"), "--temperature", "1",
              "--out", str(tmp_path / "c.pt")])
    with pytest.raises(SystemExit, match="epochs must be >= 1"):
        main(["fit", "--policy", policy_path, "--out", str(tmp_path / "f.pt"), "--epochs", "0", out])
