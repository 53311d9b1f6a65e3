"""Average the weights of several PPO checkpoints into one ("model soup").

    python -m okgin_trainer.soup --out checkpoints/soup.pt runs/a/best.pt runs/b/checkpoint.pt ...

Runs fine-tuned from one common checkpoint stay in one basin of the loss, so the mean of their
weights is a network of the same shape that often plays better than each of them (Wortsman et
al. 2022, "Model soups"; the shipped agent is one, see docs/training.md). Averaging networks that
did not start from one checkpoint gives a meaningless network: evaluate the result before use.

Every input must have the same policy network (sizes, activation, inputs, shared or split
bodies), except that an input with narrower hidden layers than the first is widened to the
first's sizes as ``train.py``'s ``init_from`` widens it (``agents.ppo.load_widened``: the same
function, and new units' weights from a fixed seed), so a widened run can be averaged with the
checkpoint it started from. Critics may differ in their privileged inputs: the critic is
averaged over the inputs whose network is configured exactly as the first input's (the others
shape the policy only). The output is written like an exported checkpoint (no optimiser or
training state), with the first input's configuration, and records what it averaged under
``soup_of``.
"""

from __future__ import annotations

import argparse
import os
from typing import Any, Sequence

import torch
from okgin_agents.ppo import (
    TRAINING_ONLY,
    ActorCritic,
    load_checkpoint,
    load_widened,
    network_from_checkpoint,
    save_checkpoint,
)

_CRITIC_KEYS = ("privileged_size",)  #: model_config keys the inputs may differ in (critic only)
# the first input's entries a soup does not keep: what only --resume needs, and its in-training
# evaluation ("eval"), which measured that input and not the mean
_NOT_OF_THE_MEAN = TRAINING_ONLY + ("eval",)


def average_checkpoints(paths: Sequence[str]) -> dict[str, Any]:
    """A checkpoint whose weights are the mean of those of ``paths`` (module docstring)."""
    if len(paths) < 2:
        raise ValueError(f"averaging needs at least two checkpoints, got {len(paths)}")
    ckpts = [load_checkpoint(p) for p in paths]  # each one checked to read this version's inputs
    first = ckpts[0]
    ckpts[1:] = [_widened(ck, first["model_config"]["hidden_sizes"]) for ck in ckpts[1:]]
    policy_config = {k: v for k, v in first["model_config"].items() if k not in _CRITIC_KEYS}
    for path, ck in zip(paths[1:], ckpts[1:]):
        config = {k: v for k, v in ck["model_config"].items() if k not in _CRITIC_KEYS}
        if config != policy_config:
            raise ValueError(f"{path} has the network {ck['model_config']}, which does not fit {paths[0]}'s "
                             f"{first['model_config']}: only the critic's privileged inputs may differ, and a later "
                             f"input's hidden layers may be narrower (it is widened to the first's)")
    same_critic = [ck for ck in ckpts if ck["model_config"] == first["model_config"]]
    model = {}
    for key, w in first["model"].items():
        group = same_critic if key.startswith("critic") else ckpts
        model[key] = torch.stack([ck["model"][key].double() for ck in group]).mean(0).to(w.dtype)
    out = {k: v for k, v in first.items() if k not in _NOT_OF_THE_MEAN}
    out["model"] = model
    out["soup_of"] = [{"path": os.fspath(p), "global_step": int(ck.get("global_step", -1))}
                      for p, ck in zip(paths, ckpts)]
    network_from_checkpoint(out)  # the result must load as a network
    return out


def _widened(ckpt: dict[str, Any], hidden_sizes: list[int]) -> dict[str, Any]:
    """``ckpt`` with its hidden layers widened to ``hidden_sizes`` where they are narrower (else as is)."""
    config = dict(ckpt["model_config"], hidden_sizes=list(hidden_sizes))
    if config == ckpt["model_config"]:
        return ckpt
    network = ActorCritic(**config)
    try:
        load_widened(network, ckpt)
    except ValueError:  # not a narrower network of the same depth: the caller's check names the misfit
        return ckpt
    return dict(ckpt, model=network.state_dict(), model_config=network.config)


def main(argv: Sequence[str] | None = None) -> str:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                     epilog="Weights are averaged with equal shares; see the module docstring.")
    parser.add_argument("checkpoints", nargs="+", help="two or more PPO checkpoints (training or exported)")
    parser.add_argument("--out", required=True, help="where to write the averaged checkpoint")
    parser.add_argument("--force", action="store_true", help="replace --out if it exists")
    args = parser.parse_args(argv)
    if os.path.exists(args.out) and not args.force:
        parser.error(f"{args.out} exists; pass --force to replace it")
    if os.path.abspath(args.out) in {os.path.abspath(p) for p in args.checkpoints}:
        parser.error(f"--out {args.out} is one of the inputs; write the average elsewhere")
    try:
        ckpt = average_checkpoints(args.checkpoints)
    except (ValueError, FileNotFoundError) as e:
        parser.error(str(e))
    save_checkpoint(args.out, ckpt)
    print(f"wrote {args.out}: the mean of {len(args.checkpoints)} checkpoints")
    return args.out


if __name__ == "__main__":
    main()
