"""Expert iteration on a search that follows a PPO policy (experiments.distill).

Not part of the default test run: ``python -m pytest experiments`` from the checkout's root."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from experiments.distill.distill import _load, change_value, collect, fit, main, search_targets
from okgin_agents.ppo import ActorCritic, load_checkpoint, load_ppo_agent, save_checkpoint


@pytest.fixture
def policy_path(tmp_path, write_checkpoint) -> str:
    torch.manual_seed(0)
    return write_checkpoint(tmp_path / "p.pt", ActorCritic(hidden_sizes=[16], shared_trunk=False, mask_input=True))


def test_collect_resumes_to_the_same_data_and_fit_writes_a_playable_checkpoint(policy_path, tmp_path, expert_positions):
    first, whole = str(tmp_path / "a.npz"), str(tmp_path / "b.npz")
    collect(policy_path, first, hands=4, seed=7, worlds=2, chunk=2)
    collect(policy_path, first, hands=6, seed=7, worlds=2, chunk=2)  # resumes at chunk 2
    collect(policy_path, whole, hands=6, seed=7, worlds=2, chunk=2)
    (a, meta), (b, _) = _load(first), _load(whole)
    assert meta["chunks"] == 3 and len(meta["points"]) == 3
    for k in a:
        np.testing.assert_array_equal(a[k], b[k], err_msg=k)  # NaN (rows not searched) equal NaN
    rows = np.arange(len(a["label"]))
    assert a["mask"][rows, a["label"]].all() and (a["policy"] == a["cand"][:, 0]).all()
    assert np.isnan(a["values"][a["cand"] < 0]).all()
    over = np.flatnonzero(a["label"] != a["policy"])  # the search overrode the policy: on a better mean value
    assert len(over)  # a random policy is overridden often
    chosen = (a["cand"][over] == a["label"][over, None]).argmax(axis=1)
    assert (a["values"][over, chosen] > a["values"][over, 0]).all()
    with pytest.raises(ValueError, match="another --out"):
        collect(policy_path, first, hands=8, seed=8, worlds=2, chunk=2)
    with pytest.raises(ValueError, match="multiple of the chunk"):
        collect(policy_path, str(tmp_path / "c.npz"), hands=3, seed=7, chunk=2)

    out = str(tmp_path / "student.pt")
    fit(policy_path, [first], out, epochs=1, learning_rate=1e-2)
    student, start = load_checkpoint(out), load_checkpoint(policy_path)
    assert student["distilled_from"]["data"] == [first]
    assert all(torch.equal(v, start["model"][k]) for k, v in student["model"].items() if k.startswith("critic"))
    assert any(not torch.equal(v, start["model"][k]) for k, v in student["model"].items() if k.startswith("actor"))
    obs, mask = expert_positions
    assert mask[np.arange(len(obs)), load_ppo_agent(out).act(obs, mask)].all()
    fit(policy_path, [first], str(tmp_path / "values.pt"), epochs=1, temperature=3.0)
    with pytest.raises(ValueError, match="temperature > 0"):
        fit(policy_path, [first], str(tmp_path / "bad.pt"), temperature=0.0)
    with pytest.raises(SystemExit, match="--force"):
        main(["fit", "--init-from", policy_path, "--out", out, first])


def test_search_targets_reweight_the_candidates_by_their_value_lead_and_keep_the_rest():
    start = np.array([[0.7, 0.2, 0.1], [0.5, 0.3, 0.2]], np.float32)
    cand = np.array([[0, 1, -1], [2, 0, -1]])
    values = np.array([[0.0, 2.0, np.nan], [np.nan] * 3])  # row 1 was not searched
    t = search_targets(start, cand, values, temperature=1.0)
    w = np.array([0.7, 0.2 * np.exp(2.0)])
    np.testing.assert_allclose(t[0], [*(0.9 * w / w.sum()), 0.1], rtol=1e-6)  # the candidates keep their mass 0.9
    np.testing.assert_array_equal(t[1], start[1])
    assert np.allclose(search_targets(start, cand, values, 1e6), start)  # a high temperature changes nothing
    assert search_targets(start, cand, values, 0.1)[0].argmax() == 1  # a low one follows the values


def test_change_value_reads_the_value_lead_of_changed_decisions():
    cand = np.array([[4, 7, -1], [4, 7, 9], [1, 2, -1], [5, 6, -1]])
    values = np.array([[1.0, 3.0, np.nan], [2.0, 1.0, 0.5], [np.nan] * 3, [0.0, 1.0, np.nan]])
    # row 0 changes to a better action (+2), row 1 to a worse one (-1.5), row 2 was not valued, row 3 keeps
    gain, share = change_value(np.array([7, 9, 2, 5]), cand, values)
    assert gain == pytest.approx((2.0 - 1.5) / 4) and share == 0.75


def test_collect_never_mixes_policies_and_bad_files_say_what_is_wrong(policy_path, tmp_path):
    data = str(tmp_path / "d.npz")
    collect(policy_path, data, hands=2, seed=1, worlds=2, chunk=2)
    ckpt = load_checkpoint(policy_path)
    ckpt["model"] = {k: v + 1 for k, v in ckpt["model"].items()}
    save_checkpoint(policy_path, ckpt)  # the same path, other weights: its decisions must not join the file
    with pytest.raises(ValueError, match="another --out"):
        collect(policy_path, data, hands=4, seed=1, worlds=2, chunk=2)
    (tmp_path / "junk.npz").write_bytes(b"not a zip")
    with pytest.raises(ValueError, match="not a readable experiments.distill data file"):
        fit(policy_path, [str(tmp_path / "junk.npz")], str(tmp_path / "s.pt"))
    with pytest.raises(FileNotFoundError, match="data file not found"):
        fit(policy_path, [str(tmp_path / "none.npz")], str(tmp_path / "s.pt"))
    threads = torch.get_num_threads()
    with pytest.raises(SystemExit, match="not found"):
        main(["collect", "--policy", str(tmp_path / "none.pt"), "--out", data, "--hands", "200", "--seed", "1",
              "--threads", str(threads + 1)])
    assert torch.get_num_threads() == threads  # the command's threads are the command's alone
    with pytest.raises(SystemExit, match="--threads must be >= 1"):
        main(["collect", "--policy", policy_path, "--out", data, "--hands", "200", "--seed", "1", "--threads", "0"])
