"""Behaviour cloning, the warm start of a run (``bc_agent``): a bot plays itself for ``bc_decisions``
decisions, and the network learns its moves (cross-entropy of the masked policy) and the returns
that followed them (the critic), before PPO begins."""

from __future__ import annotations

import math
import time

import numpy as np
import torch
import torch.nn as nn
import torch.optim as optim
from okgin_agents.ppo import ActorCritic, input_size, network_input
from okgin_trainer.config import Args
from okgin_trainer.oracle import PRIVILEGED_SIZE, privileged_inputs

from okgin_env.agent_specs import make_agent
from okgin_env.features.shaping import potential
from okgin_env.game.actions import NUM_ACTIONS
from okgin_env.game.core import VectorGame
from okgin_env.game.observation import OBS_SIZE
from okgin_env.game.rules import Rules

#: rows per chunk when the inputs are computed after collection: small enough that a chunk's float32 copies stay
#: in cache-sized blocks, large enough that numpy's and the kernels' per-call costs do not count
_CHUNK = 16384


def _store_half(dst: np.ndarray, src: np.ndarray) -> None:
    """``dst[...] = src`` for a float16 ``dst``: torch's cast rounds as numpy's does (to nearest, ties to even)
    and is several times faster on a CPU, where numpy converts to float16 one element at a time."""
    torch.from_numpy(dst).copy_(torch.from_numpy(np.asarray(src, np.float32)))


def collect_imitation_data(agent, args: Args, rules: Rules, seed: int):
    """``bc_decisions`` decisions of ``agent`` playing itself: (obs float16, masks, actions,
    value targets, has_target, privileged float16 or None). A value target is the player's shaped return from that decision,
    (hand points * reward_scale) - phi(s) (the shaping telescopes); decisions of hands still running
    at the end have none."""
    n = args.num_envs
    steps = max(1, args.bc_decisions // n)
    game = VectorGame(n, rules, episode=args.episode, autoreset=True, seed=seed)
    out = game.reset()
    obs = np.zeros((steps, n, OBS_SIZE), np.float16)
    masks = np.zeros((steps, n, NUM_ACTIONS), bool)
    actions = np.zeros((steps, n), np.int64)
    players = np.zeros((steps, n), np.int64)
    episode = np.zeros((steps, n), np.int64)  # running episode number of each game
    privileged = np.zeros((steps, n, PRIVILEGED_SIZE), np.float16) if args.oracle_critic else None
    all_games = np.arange(n)
    ep_no = np.arange(n)
    next_ep = n
    ended_eps, ended_points = [], []  # episode numbers that ended, and their (2,) points
    running = np.zeros((n, 2))
    for t in range(steps):
        _store_half(obs[t], out.observation)
        masks[t], players[t], episode[t] = out.legal_action_mask, out.current_player, ep_no
        if privileged is not None:
            privileged[t] = privileged_inputs(game.state, all_games, out.current_player)
        actions[t] = agent.act(out.observation, out.legal_action_mask)
        out = game.step(actions[t])
        running += out.rewards
        fin = np.flatnonzero(out.terminated | out.truncated)
        if len(fin):
            ended_eps.append(ep_no[fin].copy())
            ended_points.append(running[fin].copy())
            running[fin] = 0.0
            ep_no[fin] = next_ep + np.arange(len(fin))
            next_ep += len(fin)
    flat = lambda x: x.reshape(steps * n, *x.shape[2:])  # noqa: E731
    obs, masks, actions, players, episode = map(flat, (obs, masks, actions, players, episode))
    if privileged is not None:
        privileged = flat(privileged)
    ep_points, ep_ended = np.zeros((next_ep, 2)), np.zeros(next_ep, bool)
    if ended_eps:
        ids = np.concatenate(ended_eps)
        ep_points[ids], ep_ended[ids] = np.concatenate(ended_points), True
    has_target = ep_ended[episode]
    points = ep_points[episode, players]
    # phi and the network's inputs in one pass over row chunks (both are computed row by row): each chunk is
    # made float32 once, and no float32 copy of all decisions, nor a list of chunks to concatenate, is made
    phi = np.empty(len(obs), np.float32)
    net_in = obs if args.features == "raw" else np.empty((len(obs), input_size(args.features)), np.float16)
    for i in range(0, len(obs), _CHUNK):
        chunk = obs[i:i + _CHUNK].astype(np.float32)
        phi[i:i + _CHUNK] = potential(chunk, args.deadwood_shaping, args.reward_scale)
        if args.features != "raw":
            _store_half(net_in[i:i + _CHUNK], network_input(chunk, args.features))
    targets = (points * args.reward_scale - phi).astype(np.float32)
    return net_in, masks, actions, targets, has_target, privileged


def behaviour_cloning(network: ActorCritic, args: Args, rules: Rules, device, log=print) -> dict:
    """Supervised warm start: cross-entropy to ``bc_agent``'s actions (masked policy) plus the
    value loss on its shaped returns."""
    t0 = time.time()
    agent = make_agent(args.bc_agent, seed=args.seed)
    obs, masks, actions, targets, has_target, privileged = collect_imitation_data(agent, args, rules, seed=args.seed + 7919)
    log(f"behaviour cloning: {len(obs):,} decisions of {args.bc_agent} collected in {time.time() - t0:.0f}s")
    optimizer = optim.Adam(network.parameters(), lr=args.bc_learning_rate, eps=1e-5)
    rng = np.random.default_rng([args.seed, 3])
    inds = np.arange(len(obs))
    # minibatches gathered by torch from the float16 arrays (no copy made here): faster than numpy's fancy indexing
    # and float16 conversion, and the same float32 values
    obs_t = torch.from_numpy(obs)
    privileged_t = None if privileged is None else torch.from_numpy(privileged)
    num_updates, done = args.bc_epochs * math.ceil(len(inds) / args.bc_minibatch_size), 0
    for epoch in range(args.bc_epochs):
        rng.shuffle(inds)
        losses, accs = [], []
        for start in range(0, len(inds), args.bc_minibatch_size):
            if args.bc_anneal_lr:
                optimizer.param_groups[0]["lr"] = args.bc_learning_rate * (1.0 - done / num_updates)
            done += 1
            mb = inds[start:start + args.bc_minibatch_size]
            mb_t = torch.from_numpy(mb)
            o = obs_t.index_select(0, mb_t).to(device).float()
            m = torch.from_numpy(masks[mb]).to(device)
            a = torch.from_numpy(actions[mb]).to(device)
            p = None if privileged_t is None else privileged_t.index_select(0, mb_t).to(device).float()
            _, logprob, _, value = network.get_action_and_value(o, m, a, entropy=False, privileged=p)
            h = torch.from_numpy(has_target[mb]).to(device)
            v_loss = (((value - torch.from_numpy(targets[mb]).to(device)) ** 2) * h).sum() / h.sum().clamp(min=1)
            loss = -logprob.mean() + args.vf_coef * v_loss
            optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(network.parameters(), args.max_grad_norm)
            optimizer.step()
            losses.append(loss.item())
            accs.append((logprob > math.log(0.5)).float().mean().item())
        log(f"behaviour cloning epoch {epoch + 1}/{args.bc_epochs}: loss {np.mean(losses):.4f}, "
            f"P(bot's action) > 0.5 on {np.mean(accs):.1%} ({time.time() - t0:.0f}s)")
    return {"decisions": len(obs), "seconds": time.time() - t0}
