"""Weight averaging of PPO checkpoints (trainer.soup)."""

from __future__ import annotations

import pytest
import torch
from okgin_agents.ppo import (
    ActorCritic,
    load_checkpoint,
    load_ppo_agent,
    save_checkpoint,
)
from okgin_trainer.soup import average_checkpoints, main


@pytest.fixture
def soup_input(write_checkpoint):
    """``soup_input(path, seed, **config)``: a training checkpoint of a small network (weights from
    ``seed``) at ``path``, with an optimiser and an in-training evaluation; returns the network."""
    def make(path, seed: int, **config) -> ActorCritic:
        torch.manual_seed(seed)
        net = ActorCritic(hidden_sizes=[8], shared_trunk=False, **config)
        write_checkpoint(path, net, optimizer={"lr": 1.0}, global_step=100 * seed, iteration=seed,
                         eval={"expert": {"points_per_hand": float(seed)}})
        return net

    return make


def test_the_soup_is_the_mean_of_the_weights_and_critics_of_other_inputs_keep_out(tmp_path, soup_input):
    a = soup_input(tmp_path / "a.pt", 1, privileged_size=5)
    b = soup_input(tmp_path / "b.pt", 2, privileged_size=5)
    c = soup_input(tmp_path / "c.pt", 3)  # no privileged inputs: its first critic layer is narrower
    soup = average_checkpoints([str(tmp_path / n) for n in ("a.pt", "b.pt", "c.pt")])
    sa, sb, sc = a.state_dict(), b.state_dict(), c.state_dict()
    for key, w in soup["model"].items():
        if key.startswith("critic"):  # c's critic reads other inputs: only a's and b's are averaged
            assert torch.allclose(w, (sa[key] + sb[key]) / 2, atol=1e-6), key
        else:
            assert torch.allclose(w, (sa[key] + sb[key] + sc[key]) / 3, atol=1e-6), key
    assert soup["model_config"] == a.config and "optimizer" not in soup
    assert "eval" not in soup  # the first input's in-training evaluation does not describe the mean
    assert [s["global_step"] for s in soup["soup_of"]] == [100, 200, 300]


def test_a_narrower_input_is_widened_to_the_first_as_init_from_widens_it(tmp_path, soup_input):
    """The start of a widened run averages with it: the narrow input is widened exactly as
    load_widened widens it (the same function, the same new weights)."""
    from okgin_agents.ppo import load_widened
    soup_input(tmp_path / "narrow.pt", 1, privileged_size=5)
    torch.manual_seed(2)
    wide = ActorCritic(hidden_sizes=[12], shared_trunk=False, privileged_size=5)
    save_checkpoint(str(tmp_path / "wide.pt"), {**load_checkpoint(str(tmp_path / "narrow.pt")),
                                                 "model_config": wide.config, "model": wide.state_dict()})
    soup = average_checkpoints([str(tmp_path / "wide.pt"), str(tmp_path / "narrow.pt")])
    widened = ActorCritic(hidden_sizes=[12], shared_trunk=False, privileged_size=5)
    load_widened(widened, load_checkpoint(str(tmp_path / "narrow.pt")))
    for key, w in soup["model"].items():
        assert torch.allclose(w, (wide.state_dict()[key] + widened.state_dict()[key]) / 2, atol=1e-6), key
    with pytest.raises(ValueError, match="does not fit"):  # the first input sets the sizes: none may shrink
        average_checkpoints([str(tmp_path / "narrow.pt"), str(tmp_path / "wide.pt")])


def test_the_command_writes_a_playable_checkpoint_and_never_replaces_a_file(tmp_path, capsys, soup_input):
    soup_input(tmp_path / "a.pt", 1)
    soup_input(tmp_path / "b.pt", 2)
    out = tmp_path / "soup.pt"
    main([str(tmp_path / "a.pt"), str(tmp_path / "b.pt"), "--out", str(out)])
    load_ppo_agent(str(out))
    assert load_checkpoint(str(out))["soup_of"][0]["path"].endswith("a.pt")
    before = out.read_bytes()
    with pytest.raises(SystemExit):
        main([str(tmp_path / "a.pt"), str(tmp_path / "b.pt"), "--out", str(out)])
    assert "exists; pass --force" in capsys.readouterr().err and out.read_bytes() == before
    with pytest.raises(SystemExit):
        main([str(tmp_path / "a.pt"), str(tmp_path / "b.pt"), "--out", str(tmp_path / "a.pt"), "--force"])
    assert "is one of the inputs" in capsys.readouterr().err


@pytest.mark.parametrize("other, message", [
    ({"hidden_sizes": [16]}, "does not fit"),
    ({"activation": "tanh"}, "does not fit"),
    (None, "not found"),
])
def test_checkpoints_that_cannot_be_averaged_are_refused_with_the_reason(tmp_path, capsys, other, message, soup_input):
    soup_input(tmp_path / "a.pt", 1)
    if other is not None:
        torch.manual_seed(0)
        config = {"hidden_sizes": [8], "shared_trunk": False, **other}
        net = ActorCritic(**config)
        save_checkpoint(str(tmp_path / "b.pt"), {**load_checkpoint(str(tmp_path / "a.pt")),
                                                 "model_config": net.config, "model": net.state_dict()})
    with pytest.raises(SystemExit):
        main([str(tmp_path / "a.pt"), str(tmp_path / "b.pt"), "--out", str(tmp_path / "soup.pt")])
    assert message in capsys.readouterr().err
    assert not (tmp_path / "soup.pt").exists()
    with pytest.raises(SystemExit):
        main([str(tmp_path / "a.pt"), "--out", str(tmp_path / "soup.pt")])
    assert "at least two" in capsys.readouterr().err
