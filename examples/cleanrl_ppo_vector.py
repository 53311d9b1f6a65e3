"""CleanRL-style masked PPO on the okgin vector env (one file, torch only).

    OMP_NUM_THREADS=1 python examples/cleanrl_ppo_vector.py --timesteps 2000000 --seed 1

The env is ``gymnasium.make_vec("okgin/OklahomaGin-v0", vectorization_mode="vector_entry_point")``:
N games on one batched core, same-step autoreset, masks in ``infos["action_mask"]``. The policy
never picks an illegal action (masked logits); deadwood shaping (potential-based) gives a signal
long before the first knock. It is potential-based, phi(s') - phi(s), which leaves the best policy
unchanged only at ``gamma = 1`` (docs/conformance.md, "Deadwood shaping"), so ``--gamma`` defaults
to 1 here, not to CleanRL's 0.99 (with gamma < 1, pass ``--deadwood-shaping 0`` or accept a
shaped objective). The last line evaluates the greedy policy against the opponent: mean points
per hand (the learner's points minus the opponent's, unshaped) and the hand win rate. The saved
weights (``--out``) are an okgin plug-in agent afterwards, ``examples.cleanrl_ppo_vector:Player``
(``okgin-evaluate``, ``okgin-benchmark``).

Expected result and run time (the command above, torch on one thread): 2M learner steps in 6.0 min
on a quiet 2-core machine, ending ``eval: greedy vs random: +55.49 points/hand [+54.09, +56.89] (95% CI),
hand win rate 95.2% over 1000 hands``; the record is
docs/figures/cleanrl_example.json, shown in docs/vector_env.md ("CleanRL").
``tests/integrations/test_cleanrl_example.py`` runs it with 256 steps (seconds), which checks that it runs,
not what it learns.
"""

from __future__ import annotations

import argparse
import os
import time
from collections import deque
from pathlib import Path

import gymnasium
import numpy as np
import torch
import torch.nn as nn
from torch.distributions.categorical import Categorical

import okgin_env  # noqa: F401  (registers okgin/OklahomaGin-v0)
from okgin_env.agent_specs import saved_file, unreadable_file_error

DEFAULT_OUT = Path("runs/examples/cleanrl_ppo_vector/agent.pt")
WEIGHTS_ENV_VAR = "OKGIN_CLEANRL_PPO_WEIGHTS"


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    # the examples' common flags: --timesteps, --hands, --seed, --out, --device (tests/docs/test_examples_cli.py)
    p.add_argument("--timesteps", dest="total_timesteps", type=int, default=2_000_000,
                   help="learner decisions over all games")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--num-envs", type=int, default=128, help="games stepped together")
    p.add_argument("--num-steps", type=int, default=64, help="steps per game per rollout")
    p.add_argument("--opponent", default="random", help="agent spec of the opponent")
    p.add_argument("--deadwood-shaping", type=float, default=0.5)
    p.add_argument("--learning-rate", type=float, default=3e-4)
    # 1, not CleanRL's 0.99: the env's shaping terms phi(s') - phi(s) telescope (leave the best policy
    # unchanged) only undiscounted, and a hand is a few dozen decisions with its points at the end
    p.add_argument("--gamma", type=float, default=1.0, help="discount; keep 1 with --deadwood-shaping")
    p.add_argument("--gae-lambda", type=float, default=0.95)
    p.add_argument("--num-minibatches", type=int, default=4)
    p.add_argument("--update-epochs", type=int, default=4)
    p.add_argument("--clip-coef", type=float, default=0.2)
    p.add_argument("--ent-coef", type=float, default=0.01)
    p.add_argument("--vf-coef", type=float, default=0.5)
    p.add_argument("--max-grad-norm", type=float, default=0.5)
    p.add_argument("--hands", dest="eval_episodes", type=int, default=1000, help="greedy hands played for the final line")
    p.add_argument("--out", type=Path, default=DEFAULT_OUT, help="where the trained network's weights are saved")
    p.add_argument("--device", choices=["cpu", "cuda", "auto"], default="cpu",
                   help="where torch runs (auto: cuda if available); the GPU path has not been run")
    return p.parse_args()


def layer(i: int, o: int, std: float = np.sqrt(2)) -> nn.Linear:
    lin = nn.Linear(i, o)
    nn.init.orthogonal_(lin.weight, std)
    nn.init.constant_(lin.bias, 0.0)
    return lin


class Agent(nn.Module):
    def __init__(self, obs_size: int, n_actions: int) -> None:
        super().__init__()
        self.critic = nn.Sequential(layer(obs_size, 256), nn.Tanh(), layer(256, 256), nn.Tanh(), layer(256, 1, 1.0))
        self.actor = nn.Sequential(layer(obs_size, 256), nn.Tanh(), layer(256, 256), nn.Tanh(),
                                   layer(256, n_actions, 0.01))

    def value(self, x: torch.Tensor) -> torch.Tensor:
        return self.critic(x).squeeze(-1)

    def act(self, x: torch.Tensor, mask: torch.Tensor, action: torch.Tensor | None = None):
        logits = self.actor(x).masked_fill(~mask, -1e9)  # illegal actions get no probability
        dist = Categorical(logits=logits)
        if action is None:
            action = dist.sample()
        return action, dist.log_prob(action), dist.entropy(), self.value(x)


class Player:
    """The saved network as an okgin plug-in agent (``examples.cleanrl_ppo_vector:Player``; ``Agent`` is the
    network, as in CleanRL): the most probable legal action.

    Loads the weights this script saved from ``$OKGIN_CLEANRL_PPO_WEIGHTS`` or
    ``runs/examples/cleanrl_ppo_vector/agent.pt``. Deterministic, so ``seed`` is accepted and unused.
    """

    def __init__(self, seed: int | None = None, path: str | os.PathLike | None = None, name: str = "cleanrl_ppo"):
        path = saved_file(path, WEIGHTS_ENV_VAR, DEFAULT_OUT, "examples/cleanrl_ppo_vector.py")
        try:
            state = torch.load(path, map_location="cpu", weights_only=True)
            self.net = Agent(state["actor.0.weight"].shape[1], state["actor.4.weight"].shape[0])
            self.net.load_state_dict(state)
        except Exception as e:  # torch.load and load_state_dict raise many kinds on a file that is not ours
            raise unreadable_file_error(path, "weights saved by examples/cleanrl_ppo_vector.py", e) from None
        self.net.eval()
        self.name = name

    @torch.no_grad()
    def act(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        """(B, OBS_SIZE) observations and (B, 107) legal-action masks -> (B,) int64 greedy legal actions."""
        logits = self.net.actor(torch.as_tensor(np.asarray(observations, np.float32)))
        mask = torch.as_tensor(np.asarray(action_masks, bool))
        return logits.masked_fill(~mask, -torch.inf).argmax(-1).numpy().astype(np.int64)


def make_env(args: argparse.Namespace, num_envs: int, shaping: float) -> gymnasium.vector.VectorEnv:
    return gymnasium.make_vec("okgin/OklahomaGin-v0", num_envs=num_envs, vectorization_mode="vector_entry_point",
                              opponent=args.opponent, deadwood_shaping=shaping)


def hand_points(info: dict, done: np.ndarray) -> np.ndarray:
    """The learner's net points of the hands that ended their episode in this step."""
    final = info.get("final_info", {})
    rows = done & final.get("_net_points", np.zeros_like(done))
    return final["net_points"][rows] if rows.any() else np.zeros(0)


@torch.no_grad()
def evaluate(agent: Agent, args: argparse.Namespace) -> tuple[float, float, float]:
    """Greedy play against the opponent until ``eval_episodes`` hands ended: (points/hand, the half-width
    of its 95% confidence interval (normal approximation over independent hands), hand win rate)."""
    env = make_env(args, min(args.num_envs, args.eval_episodes), 0.0)
    obs, info = env.reset(seed=args.seed + 10_000)
    points: list[float] = []
    while len(points) < args.eval_episodes:
        device = next(agent.parameters()).device
        logits = agent.actor(torch.as_tensor(obs, device=device)).masked_fill(
            ~torch.as_tensor(info["action_mask"], device=device), -1e9)
        obs, _, term, trunc, info = env.step(logits.argmax(-1).cpu().numpy())
        points.extend(hand_points(info, term | trunc).tolist())
    pts = np.asarray(points[:args.eval_episodes])
    half = 1.96 * float(pts.std(ddof=1)) / np.sqrt(len(pts)) if len(pts) > 1 else float("nan")
    return float(pts.mean()), half, float((pts > 0).mean())


def main() -> None:
    args = parse_args()
    device = torch.device("cuda" if args.device == "auto" and torch.cuda.is_available() else
                          "cpu" if args.device == "auto" else args.device)
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    envs = make_env(args, args.num_envs, args.deadwood_shaping)
    n, t_len = args.num_envs, args.num_steps
    obs_size, n_actions = envs.single_observation_space.shape[0], envs.single_action_space.n
    agent = Agent(obs_size, n_actions).to(device)
    optimizer = torch.optim.Adam(agent.parameters(), lr=args.learning_rate, eps=1e-5)
    batch = n * t_len
    minibatch = batch // args.num_minibatches
    iterations = max(1, args.total_timesteps // batch)

    obs_buf = torch.zeros((t_len, n, obs_size), device=device)
    mask_buf = torch.zeros((t_len, n, n_actions), dtype=torch.bool, device=device)
    act_buf = torch.zeros((t_len, n), dtype=torch.long, device=device)
    logp_buf, rew_buf, done_buf, val_buf = (torch.zeros((t_len, n), device=device) for _ in range(4))

    next_obs, info = envs.reset(seed=args.seed)
    next_obs, next_mask = torch.as_tensor(next_obs, device=device), torch.as_tensor(info["action_mask"], device=device)
    next_done = torch.zeros(n, device=device)
    recent = deque(maxlen=1000)  # net points of the last hands (unshaped)
    start = time.time()
    for it in range(1, iterations + 1):
        for step in range(t_len):
            obs_buf[step], mask_buf[step], done_buf[step] = next_obs, next_mask, next_done
            with torch.no_grad():
                action, logp, _, value = agent.act(next_obs, next_mask)
            act_buf[step], logp_buf[step], val_buf[step] = action, logp, value
            obs, reward, term, trunc, info = envs.step(action.cpu().numpy())
            done = term | trunc
            if trunc.any():  # a cut-off episode (turn cap) is worth its last state's value, not 0
                rows = np.flatnonzero(trunc)
                with torch.no_grad():
                    final = torch.as_tensor(np.stack(info["final_obs"][rows]), device=device)
                    reward[rows] += args.gamma * agent.value(final).cpu().numpy()
            rew_buf[step] = torch.as_tensor(reward, dtype=torch.float32, device=device)
            recent.extend(hand_points(info, done).tolist())
            next_obs, next_mask = torch.as_tensor(obs, device=device), torch.as_tensor(info["action_mask"], device=device)
            next_done = torch.as_tensor(done, dtype=torch.float32, device=device)

        with torch.no_grad():  # GAE; same-step autoreset: done[t + 1] marks step t as an episode's last
            next_value = agent.value(next_obs)
            adv = torch.zeros_like(rew_buf)
            last = torch.zeros(n, device=device)
            for t in reversed(range(t_len)):
                nonterminal = 1.0 - (next_done if t == t_len - 1 else done_buf[t + 1])
                nxt = next_value if t == t_len - 1 else val_buf[t + 1]
                delta = rew_buf[t] + args.gamma * nxt * nonterminal - val_buf[t]
                last = delta + args.gamma * args.gae_lambda * nonterminal * last
                adv[t] = last
            returns = adv + val_buf

        b_obs, b_mask = obs_buf.reshape(batch, obs_size), mask_buf.reshape(batch, n_actions)
        b_act, b_logp = act_buf.reshape(batch), logp_buf.reshape(batch)
        b_adv, b_ret = adv.reshape(batch), returns.reshape(batch)
        for _ in range(args.update_epochs):
            for idx in torch.randperm(batch).split(minibatch):
                _, logp, entropy, value = agent.act(b_obs[idx], b_mask[idx], b_act[idx])
                ratio = (logp - b_logp[idx]).exp()
                a = b_adv[idx]
                a = (a - a.mean()) / (a.std() + 1e-8)
                pg_loss = torch.max(-a * ratio, -a * ratio.clamp(1 - args.clip_coef, 1 + args.clip_coef)).mean()
                v_loss = 0.5 * ((value - b_ret[idx]) ** 2).mean()
                loss = pg_loss - args.ent_coef * entropy.mean() + args.vf_coef * v_loss
                optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(agent.parameters(), args.max_grad_norm)
                optimizer.step()
        sps = int(it * batch / (time.time() - start))
        mean_pts = np.mean(recent) if recent else float("nan")
        print(f"iter {it}/{iterations} steps {it * batch} SPS {sps} points/hand(last {len(recent)}) {mean_pts:+.2f}",
              flush=True)
    envs.close()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    torch.save(agent.state_dict(), args.out)
    pts, half, win = evaluate(agent, args)
    print(f"eval: greedy vs {args.opponent}: {pts:+.2f} points/hand [{pts - half:+.2f}, {pts + half:+.2f}] "
          f"(95% CI), hand win rate {win:.1%} over {args.eval_episodes} hands")


if __name__ == "__main__":
    main()
