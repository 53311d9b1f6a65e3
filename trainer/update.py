"""The PPO loss and update (after CleanRL's ``ppo.py``): clipped policy loss, (clipped) value loss, entropy
bonus, minibatch epochs, and under torchrun the gradients averaged over processes before clipping."""

from __future__ import annotations

import math

import numpy as np
import torch
import torch.distributed as dist
import torch.nn as nn
import torch.optim as optim
from okgin_agents.ppo import ActorCritic
from okgin_trainer.config import Args


def explained_variance(y_pred: np.ndarray, y_true: np.ndarray) -> float:
    """1 - Var(returns - values) / Var(returns): how much of the returns the critic explains (nan if they are constant)."""
    var_y = np.var(y_true)
    return np.nan if var_y == 0 else float(1 - np.var(y_true - y_pred) / var_y)


def ppo_loss(network: ActorCritic, mb: dict, args: Args):
    """Clipped PPO loss of one minibatch (dict of tensors: obs, masks, actions, logprobs,
    advantages, returns, values); returns (loss, stats of that minibatch)."""
    _, newlogprob, entropy, newvalue = network.get_action_and_value(mb["obs"], mb["masks"], mb["actions"],
                                                                    privileged=mb.get("privileged"))
    logratio = newlogprob - mb["logprobs"]
    ratio = logratio.exp()

    with torch.no_grad():
        # calculate approx_kl http://joschu.net/blog/kl-approx.html
        old_approx_kl = (-logratio).mean()
        approx_kl = ((ratio - 1) - logratio).mean()
        clipfrac = ((ratio - 1.0).abs() > args.clip_coef).float().mean()

    mb_advantages = mb["advantages"]
    if args.norm_adv and len(mb_advantages) > 1:
        mb_advantages = (mb_advantages - mb_advantages.mean()) / (mb_advantages.std() + 1e-8)

    # Policy loss
    pg_loss1 = -mb_advantages * ratio
    pg_loss2 = -mb_advantages * torch.clamp(ratio, 1 - args.clip_coef, 1 + args.clip_coef)
    pg_loss = torch.max(pg_loss1, pg_loss2).mean()

    # Value loss
    if args.clip_vloss:
        v_loss_unclipped = (newvalue - mb["returns"]) ** 2
        v_clipped = mb["values"] + torch.clamp(newvalue - mb["values"], -args.clip_coef, args.clip_coef)
        v_loss_clipped = (v_clipped - mb["returns"]) ** 2
        v_loss = 0.5 * torch.max(v_loss_unclipped, v_loss_clipped).mean()
    else:
        v_loss = 0.5 * ((newvalue - mb["returns"]) ** 2).mean()

    entropy_loss = entropy.mean()
    loss = pg_loss - args.ent_coef * entropy_loss + v_loss * args.vf_coef
    stats = dict(policy_loss=pg_loss.item(), value_loss=v_loss.item(), entropy=entropy_loss.item(),
                 old_approx_kl=old_approx_kl.item(), approx_kl=approx_kl.item(), clipfrac=clipfrac.item())
    return loss, stats


def ppo_update(network: ActorCritic, optimizer: optim.Optimizer, batch: dict, args: Args,
               shuffle_rng: np.random.Generator, world_size: int = 1) -> dict:
    """``update_epochs`` epochs of ``num_minibatches`` minibatches over the flattened batch.

    With several processes each one holds its own batch; gradients are averaged with
    all_reduce before clipping, so every process takes the same optimizer step.
    """
    batch_size = len(batch["obs"])
    minibatch_size = max(1, math.ceil(batch_size / args.num_minibatches))
    b_inds = np.arange(batch_size)
    clipfracs, stats = [], {}
    for epoch in range(args.update_epochs):
        shuffle_rng.shuffle(b_inds)
        for start in range(0, args.num_minibatches * minibatch_size, minibatch_size):
            mb_inds = b_inds[start:start + minibatch_size]
            if len(mb_inds) == 0:  # (tiny batches) keep the optimizer steps in line across processes
                mb_inds = b_inds[:1]
            loss, stats = ppo_loss(network, {k: v[mb_inds] for k, v in batch.items()}, args)
            clipfracs.append(stats["clipfrac"])

            optimizer.zero_grad()
            loss.backward()
            if world_size > 1:  # data parallel: average the gradients of all processes
                grads = [p.grad for p in network.parameters()]
                flat = torch.cat([g.reshape(-1) for g in grads])
                dist.all_reduce(flat)
                flat /= world_size
                offset = 0
                for g in grads:
                    g.copy_(flat[offset:offset + g.numel()].view_as(g))
                    offset += g.numel()
            nn.utils.clip_grad_norm_(network.parameters(), args.max_grad_norm)
            optimizer.step()

        if args.target_kl is not None:
            kl = torch.tensor(stats["approx_kl"], dtype=torch.float64)
            if world_size > 1:
                dist.all_reduce(kl)
                kl /= world_size
            if kl > args.target_kl:
                break
    stats["clipfrac"] = float(np.mean(clipfracs))
    return stats
