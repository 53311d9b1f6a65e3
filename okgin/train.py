"""PPO self-play trainer for Oklahoma Gin (after CleanRL's ``ppo.py``).

    python train.py                                   # the quick config: about 5 CPU minutes, beats simple
    python train.py --config configs/default.yaml     # the recipe of the shipped agent
    python train.py --config configs/default.yaml --set learning_rate=1e-4 --set num_envs=2048
    python train.py --resume runs/<run>/checkpoint.pt # continue a killed run where it left off
    torchrun --nproc_per_node 2 train.py --config ... # data-parallel (gloo on CPU, nccl on GPU)
    python train.py --help                            # every config key with its documentation

The file reads top to bottom as the algorithm runs: the rollout storage, GAE, the PPO loss and
update, then ``main`` (setup, and per update: rollout, GAE, update, snapshot, log, evaluate,
checkpoint). What is not the PPO loop lives in ``okgin_trainer`` (the checkout's ``trainer/``):
the config keys and their checks (``config``), the behaviour-cloning warm start (``bc``), the
opponents and their pool (``pool``), the run's state, its checkpoint and resume (``resume``).

Two players take turns, so the usual one-agent PPO bookkeeping does not fit as is:

* Rollouts step ``VectorGame`` directly (``num_envs`` games, hand episodes, autoreset). Each env
  step is one decision of one player in every game; only the learner's decisions are stored.
* Credit is per player: a stored decision's next state is the *same player's* next decision,
  rewards ``rewards[:, p]`` go to player p's latest decision (a hand's points arrive after the
  opponent's knock), and GAE runs along each player's own chain. The value of the opponent's
  turn is never mixed into the learner's. A decision still waiting for its successor when a
  rollout ends is carried into the next rollout (storage rows 0 and 1) and trained there.
* Opponents (``trainer/pool.py``): each game gets one when it is dealt: pure self-play (both seats
  are learner decisions), a frozen past snapshot from the pool, or any agent spec (a bundled bot,
  ``ppo:PATH``, ``module:Attr``), in the proportions of ``opponent_mix``. Snapshots join the pool
  every ``snapshot_every`` updates, or early when the learner beats the pool by ``snapshot_margin``.
* Runs are never lost (``trainer/checkpoint.py``): a fixed ``run_name`` whose directory holds an
  earlier run moves that run aside; checkpoints are written atomically, and ``--resume`` continues
  one exactly (``trainer/resume.py``). See docs/training.md.
* Every ``eval_every`` updates the greedy policy plays ``eval_opponents`` on fixed duplicate deals
  (``okgin.evaluate.play_match``); ``best.pt`` keeps the best checkpoint.
"""

from __future__ import annotations

import math
import os
import random
import sys
import time
from dataclasses import asdict

import numba
import numpy as np

# Idle OpenMP threads sleep instead of spinning: with spinning, two torch threads on a 2-core machine
# next to one busy process ran a minibatch 5x slower than one thread; sleeping, as fast as one thread.
# It has to be set before torch (and its OpenMP runtime) loads; a user's own setting wins.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
import torch  # noqa: E402
import torch.distributed as dist
import torch.nn as nn
import torch.optim as optim

from okgin_agents.ppo import ActorCritic, PPOAgent, input_size, load_checkpoint, load_widened, network_input, save_checkpoint
from okgin_env.actions import NUM_ACTIONS
from okgin_env.core import VectorGame
from okgin_env.observation import OBS_SIZE
from okgin_env.rules import Rules
from okgin_env.shaping import potential
from okgin_trainer import config
from okgin_trainer.bc import behaviour_cloning
from okgin_trainer.checkpoint import move_aside
from okgin_trainer.cli import run_cli
from okgin_trainer.config import Args, key_help, make_agent, short_name
from okgin_trainer.oracle import PRIVILEGED_SIZE, privileged_inputs
from okgin_trainer.pool import Opponents
from okgin_trainer.resume import TrainingState, restore, training_checkpoint

#: ``python train.py`` with no --config runs the quick config. It ships inside the package (okgin/quick.yaml), so
#: ``okgin-train`` works installed from a wheel too; configs/quick.yaml is the same file (tests/test_train.py checks).
DEFAULT_CONFIG = os.path.join(os.path.dirname(os.path.abspath(__file__)), "quick.yaml")


def parse_cli(argv: list[str] | None = None) -> tuple[Args, str | None]:
    """(args, resume path) from the command line (``okgin_trainer.config.parse_cli`` with this program's defaults)."""
    return config.parse_cli(argv, description=__doc__.splitlines()[0], default_config=DEFAULT_CONFIG)


# ------------------------------------------------- rollout storage, per player
CARRY = 2  #: storage rows 0 and 1 hold player 0's / player 1's decision carried over from the last rollout


class TurnStorage:
    """Rollout storage shaped (CARRY + num_steps, num_envs), linked per player.

    Row ``CARRY + t`` holds the learner decision made at env step t (``valid``). ``next_row``
    points at the same player's next decision in the same game; ``dones`` marks a decision
    after which that player's episode ended (terminal: no bootstrap); a valid row with
    neither is *pending* and is carried into the next rollout by :meth:`carry_over`.
    """

    def __init__(self, num_steps: int, num_envs: int, input_size: int = OBS_SIZE, privileged_size: int = 0) -> None:
        rows, n = CARRY + num_steps, num_envs
        self.obs = np.zeros((rows, n, input_size), np.float32)  # the network's input (observation [+ features])
        self.privileged = np.zeros((rows, n, privileged_size), np.float32)  # the critic's hidden-state inputs
        self.masks = np.zeros((rows, n, NUM_ACTIONS), bool)
        self.actions = np.zeros((rows, n), np.int64)
        self.logprobs = np.zeros((rows, n), np.float32)
        self.values = np.zeros((rows, n), np.float32)
        self.potentials = np.zeros((rows, n), np.float32)  # shaping potential of the decision's state
        self.rewards = np.zeros((rows, n), np.float32)
        self.dones = np.zeros((rows, n), bool)
        self.next_row = np.full((rows, n), -1, np.int64)
        self.valid = np.zeros((rows, n), bool)
        self.last_row = np.full((n, 2), -1, np.int64)  # each player's latest decision row in its current episode
        self._cols = np.arange(n)

    _ROW_FIELDS = ("obs", "privileged", "masks", "actions", "logprobs", "values", "potentials", "rewards", "dones", "next_row", "valid")

    def add(self, row: int, envs: np.ndarray, players: np.ndarray, obs, masks, actions, logprobs, values,
            potentials=0.0, privileged=None) -> None:
        """Store learner decisions of ``players`` in games ``envs`` at ``row``; link their predecessors."""
        prev = self.last_row[envs, players]
        linked = prev >= 0
        self.next_row[prev[linked], envs[linked]] = row
        self.last_row[envs, players] = row
        self.obs[row, envs], self.masks[row, envs] = obs, masks
        self.actions[row, envs], self.logprobs[row, envs], self.values[row, envs] = actions, logprobs, values
        self.potentials[row, envs] = potentials
        if privileged is not None:
            self.privileged[row, envs] = privileged
        self.valid[row, envs] = True

    def credit(self, rewards: np.ndarray, ended: np.ndarray) -> None:
        """rewards (N, 2) of this step go to each player's latest decision; ``ended`` games close both chains."""
        for p in range(2):
            has = self.last_row[:, p] >= 0
            envs = self._cols[has]
            rows = self.last_row[has, p]
            self.rewards[rows, envs] += rewards[has, p]
            fin = ended[has]
            self.dones[rows[fin], envs[fin]] = True
        self.last_row[ended] = -1

    def carry_over(self) -> None:
        """Start a new rollout: pending decisions move to rows 0/1, everything else is cleared.

        A carried decision keeps the log-probability and value the *previous* policy gave it (the
        policy that acted): its PPO ratio is taken against that behaviour policy, one update older
        than the others in the batch, which is what importance ratios are for; the clip bounds it.
        At most one decision per player and game is carried, so this is a small slice of a batch."""
        keep = []
        for p in range(2):
            envs = np.flatnonzero(self.last_row[:, p] >= 0)
            rows = self.last_row[envs, p]
            keep.append((p, envs, [getattr(self, f)[rows, envs].copy() for f in self._ROW_FIELDS]))
        self.rewards[:] = 0
        self.dones[:] = False
        self.next_row[:] = -1
        self.valid[:] = False
        for p, envs, vals in keep:
            for f, v in zip(self._ROW_FIELDS, vals):
                getattr(self, f)[p, envs] = v
            self.last_row[envs, p] = p

    def flatten(self, trainable: np.ndarray, advantages: np.ndarray, returns: np.ndarray, device: torch.device,
                privileged: bool = False) -> dict[str, torch.Tensor]:
        """The batch of an update: the ``trainable`` rows (from :func:`per_player_gae`) as tensors on ``device``
        (obs, masks, actions, logprobs, advantages, returns, values; privileged with an oracle critic)."""
        batch = {name: torch.from_numpy(x[trainable]).to(device) for name, x in (
            ("obs", self.obs), ("masks", self.masks), ("actions", self.actions), ("logprobs", self.logprobs),
            ("advantages", advantages), ("returns", returns), ("values", self.values))}
        if privileged:
            batch["privileged"] = torch.from_numpy(self.privileged[trainable]).to(device)
        return batch

    def state_dict(self) -> dict:
        """The carried rows (call after :meth:`carry_over`), for checkpoints."""
        d = {f: torch.from_numpy(getattr(self, f)[:CARRY].copy()) for f in self._ROW_FIELDS}
        d["last_row"] = torch.from_numpy(self.last_row.copy())
        return d

    def load_state_dict(self, d: dict) -> None:
        for f in self._ROW_FIELDS:
            if f in d:  # runs saved before oracle_critic existed have no privileged rows (and need none)
                getattr(self, f)[:CARRY] = d[f].numpy()
        self.last_row[:] = d["last_row"].numpy()


# ---------------------------------------------------------------------- GAE
def per_player_gae(rewards, values, dones, next_row, valid, gamma: float, gae_lambda: float, potentials=None):
    """GAE along each player's own chain of decisions.

    All inputs are (R, N) over storage rows; ``next_row[t, e]`` is the row of the same player's
    next decision (-1: none yet). Returns (advantages, returns, trainable), where trainable rows
    are valid decisions whose successor is known (or whose episode ended); a pending row is
    the bootstrap of its predecessor (truncated GAE) and gets advantage 0 here.
    ``potentials`` (optional) add potential-based shaping gamma * phi(next) - phi(t), with
    phi = 0 after the episode's end (Ng et al. 1999: the optimal policy is unchanged).
    """
    rows, n = rewards.shape
    cols = np.arange(n)
    trainable = valid & (dones | (next_row >= 0))
    linked = (next_row >= 0) & ~dones
    nxt = np.where(linked, next_row, 0)
    advantages = np.zeros((rows, n), np.float32)
    for t in reversed(range(rows)):
        next_values = np.where(linked[t], values[nxt[t], cols], 0.0)
        next_adv = np.where(linked[t], advantages[nxt[t], cols], 0.0)
        shaped = rewards[t]
        if potentials is not None:
            shaped = shaped + gamma * np.where(linked[t], potentials[nxt[t], cols], 0.0) - potentials[t]
        delta = shaped + gamma * next_values - values[t]
        advantages[t] = np.where(trainable[t], delta + gamma * gae_lambda * next_adv, 0.0)
    return advantages, advantages + values, trainable


def explained_variance(y_pred: np.ndarray, y_true: np.ndarray) -> float:
    """1 - Var(returns - values) / Var(returns): how much of the returns the critic explains (nan if they are constant)."""
    var_y = np.var(y_true)
    return np.nan if var_y == 0 else float(1 - np.var(y_true - y_pred) / var_y)


# ------------------------------------------------------- PPO loss and update
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


# ------------------------------------------------------ evaluation and logging
def evaluate_policy(network: ActorCritic, args: Args, rules: Rules, device) -> dict[str, dict]:
    """Greedy policy against each of ``eval_opponents`` on fixed duplicate deals."""
    from okgin.evaluate import play_match
    learner = PPOAgent(network, name="learner", deterministic=True, seed=0, device=device)
    results = {}
    for spec in args.eval_opponents:
        opponent = make_agent(spec, seed=args.eval_seed)
        m = play_match(learner, opponent, num_hands=args.eval_hands, seed=args.eval_seed, rules=rules, duplicate=True)
        results[spec] = {"win_rate": float(m.win_rate), "points_per_hand": float(m.points_per_hand),
                         "points_ci": tuple(float(x) for x in m.points_ci), "hands": int(m.hands)}
    network.train()
    return results


def report_eval(results: dict[str, dict], writer, global_step: int, seconds: int, took: float, log) -> None:
    """Evaluation results to TensorBoard, against steps (eval/*) and against the run's wall time ``seconds``
    (eval_time/*, warm start included), and as one log line."""
    for spec, r in results.items():
        for key in ("win_rate", "points_per_hand"):
            writer.add_scalar(f"eval/{key}_vs_{short_name(spec)}", r[key], global_step)
            writer.add_scalar(f"eval_time/{key}_vs_{short_name(spec)}", r[key], seconds)
    line = "  ".join(f"{short_name(s)} {r['points_per_hand']:+.2f}pts {r['win_rate']:.0%}" for s, r in results.items())
    log(f"eval @ step {global_step:,}, {seconds}s ({took:.0f}s): {line}")


# ------------------------------------------------------------------------- setup
def init_process(args: Args) -> tuple[int, int, torch.device]:
    """(rank, world_size, device) of this process, with the process group joined under torchrun (which
    sets RANK / WORLD_SIZE / LOCAL_RANK); resolves ``args.device`` auto and sets torch's thread count."""
    world_size = int(os.environ.get("WORLD_SIZE", "1"))
    rank = int(os.environ.get("RANK", "0"))
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    if args.device == "auto":
        args.device = "cuda" if torch.cuda.is_available() else "cpu"
    if args.device.startswith("cuda") and not torch.cuda.is_available():
        raise ValueError(f"device {args.device!r} asked for, but torch.cuda.is_available() is False")
    device = torch.device(f"cuda:{local_rank}" if args.device == "cuda" and world_size > 1 else args.device)
    if world_size > 1:
        # on GPUs: nccl for CUDA tensors, gloo for the CPU ones (the pool's scores, the KL); nccl alone refuses CPU tensors
        dist.init_process_group(backend="cpu:gloo,cuda:nccl" if device.type == "cuda" else "gloo")
    if args.num_threads:  # torch's intra-op threads and the numba kernels' (features, bots) alike
        torch.set_num_threads(args.num_threads)
        numba.set_num_threads(min(args.num_threads, numba.config.NUMBA_NUM_THREADS))
    return rank, world_size, device


def run_directory(args: Args, resume_path: str | None, is_main: bool) -> str:
    """The run's directory: the resumed checkpoint's, else ``run_dir/run_name``. Never lose a run: rank 0
    moves an earlier run found there aside (``trainer.checkpoint.move_aside``) and says where it went."""
    if resume_path:
        return os.path.dirname(os.path.abspath(resume_path))
    run_path = os.path.join(args.run_dir, args.run_name or f"{args.exp_name}__{args.seed}__{int(time.time())}")
    if is_main:
        moved = move_aside(run_path)
        if moved:
            print(f"{run_path} held an earlier run: moved it to {moved} (continue it with "
                  f"--resume {os.path.join(moved, 'checkpoint.pt')})", flush=True)
    return run_path


def make_learner(args: Args, rules: Rules, device: torch.device, rank: int, world_size: int,
                 fresh: bool) -> tuple[ActorCritic, optim.Optimizer]:
    """The network and its optimizer, the same on every process. A ``fresh`` run (not resumed) starts from
    ``init_from``'s weights and/or imitates ``bc_agent`` (rank 0; the broadcast shares it)."""
    network = ActorCritic(hidden_sizes=args.hidden_sizes, activation=args.activation,
                          shared_trunk=args.shared_trunk, mask_input=args.mask_input,
                          features=args.features, privileged_size=PRIVILEGED_SIZE if args.oracle_critic else 0).to(device)
    if args.init_from and fresh:
        try:
            load_widened(network, load_checkpoint(args.init_from, map_location=device))
        except (ValueError, FileNotFoundError) as e:
            raise type(e)(f"config key 'init_from': {e}") from None
    if args.bc_agent and fresh and rank == 0:
        behaviour_cloning(network, args, rules, device)
    optimizer = optim.Adam(network.parameters(), lr=args.learning_rate, eps=1e-5)
    if world_size > 1:
        for p in network.parameters():
            dist.broadcast(p.data, src=0)
        torch.manual_seed(args.seed + 1000 * rank)  # different sampling streams per rank
    return network, optimizer


# ------------------------------------------------------------- reports, best.pt
class RunLog:
    """What rank 0 reports: the config table and scalars in TensorBoard, progress lines (or a tqdm bar:
    steps, SPS, ETA, the latest evaluation), evaluations, and steps per second since :meth:`start_clock`."""

    def __init__(self, s: TrainingState, run_path: str, device: torch.device, num_iterations: int,
                 steps_per_iteration: int, resumed: bool) -> None:
        from torch.utils.tensorboard import SummaryWriter
        args = s.args
        self.writer = SummaryWriter(run_path, purge_step=s.global_step if resumed else None)
        docs = key_help()
        self.writer.add_text("config", "|key|value|doc|\n|-|-|-|\n" + "\n".join(
            f"|{k}|{v}|{docs[k]}|" for k, v in asdict(args).items()) + f"\n\nrules: {s.rules.to_dict()}", s.global_step)
        print(f"run {run_path}: {num_iterations} updates x {steps_per_iteration:,} steps, {s.world_size} process(es), "
              f"device {device}, opponents {args.opponent_mix}", flush=True)
        self.num_iterations, self.steps_per_iteration, self.bar = num_iterations, steps_per_iteration, None
        self.line = lambda text: print(text, flush=True)  # noqa: E731
        if sys.stderr.isatty() if args.progress_bar is None else args.progress_bar:
            from tqdm import tqdm
            self.bar = tqdm(total=num_iterations * steps_per_iteration, initial=s.global_step, unit="step",
                            unit_scale=True, smoothing=0.1, dynamic_ncols=True)
            self.line = self.bar.write  # lines print above the bar
        self.start_clock(s.global_step)

    def start_clock(self, global_step: int) -> None:
        self.start_time, self.start_step = time.time(), global_step

    def update(self, s: TrainingState, stats: dict, explained_var: float, ep_returns: dict, batch_size: int) -> None:
        """Scalars of update ``s.iteration``, and its progress line every ``log_every`` updates (or the bar)."""
        w, step = self.writer, s.global_step
        sps = int((step - self.start_step) / (time.time() - self.start_time))
        w.add_scalar("charts/learning_rate", s.optimizer.param_groups[0]["lr"], step)
        w.add_scalar("charts/SPS", sps, step)
        w.add_scalar("charts/learner_decisions", batch_size, step)
        w.add_scalar("charts/pool_size", len(s.opponents.pool), step)
        all_returns = [x for v in ep_returns.values() for x in v]
        if all_returns:
            w.add_scalar("charts/episodic_return", float(np.mean(all_returns)), step)
        for kind, v in ep_returns.items():
            w.add_scalar(f"charts/points_per_hand_vs_{kind}", float(np.mean(v)), step)
        for key in ("policy_loss", "value_loss", "entropy", "old_approx_kl", "approx_kl", "clipfrac"):
            w.add_scalar(f"losses/{key}", stats[key], step)
        w.add_scalar("losses/explained_variance", explained_var, step)
        ev = " ".join(f"{short_name(spec)} {r['points_per_hand']:+.2f}" for spec, r in s.last_eval.items())
        if self.bar is not None:
            self.bar.update(self.steps_per_iteration)
            self.bar.set_postfix_str(f"SPS {sps:,} | last eval {ev or '-'}")
        elif s.iteration % s.args.log_every == 0 or s.iteration == self.num_iterations:
            vs = " ".join(f"{k} {np.mean(v):+.1f}" for k, v in sorted(ep_returns.items()))
            print(f"update {s.iteration}/{self.num_iterations} step {step:,} SPS {sps:,} | rollout pts/hand {vs or '-'} "
                  f"| ent {stats['entropy']:.2f} kl {stats['approx_kl']:.4f} ev {explained_var:.2f} "
                  f"| pool {len(s.opponents.pool)} | last eval {ev or '-'}", flush=True)

    def evaluation(self, s: TrainingState, took: float) -> None:
        report_eval(s.last_eval, self.writer, s.global_step, int(s.elapsed()), took, self.line)

    def close(self, s: TrainingState, run_path: str) -> None:
        if self.bar is not None:
            self.bar.close()
        self.writer.close()
        self.line(f"done: {s.global_step:,} steps in {time.time() - self.start_time:.0f}s ({s.elapsed():.0f}s in all); "
                  f"checkpoint {run_path}/checkpoint.pt, best {run_path}/best.pt")


def evaluate_and_keep_best(s: TrainingState, device: torch.device, run_path: str, log: RunLog) -> None:
    """Evaluate the greedy policy (``s.last_eval``); a new best result against best_metric_opponent is saved as best.pt."""
    t0 = time.time()
    s.last_eval = evaluate_policy(s.network, s.args, s.rules, device)
    log.evaluation(s, time.time() - t0)
    metric = s.last_eval[s.args.best_metric_opponent]["points_per_hand"]
    if metric > s.best_metric:
        s.best_metric = metric
        save_checkpoint(os.path.join(run_path, "best.pt"), training_checkpoint(s))


# ========================================================================== main
def main(argv: list[str] | None = None) -> dict:
    """Train as the command line says; returns {"run_path", "global_step", "eval": the last evaluation}."""
    args, resume_path = parse_cli(argv)
    rules = Rules.from_dict(args.rules)
    session_start = time.time()  # wall time of this session (a resumed run adds its earlier sessions')
    rank, world_size, device = init_process(args)
    is_main = rank == 0
    steps_per_iteration = args.num_envs * args.num_steps * world_size
    num_iterations = max(1, args.total_timesteps // steps_per_iteration)
    run_path = run_directory(args, resume_path, is_main)

    # TRY NOT TO MODIFY: seeding
    random.seed(args.seed + rank)
    np.random.seed(args.seed + rank)
    torch.manual_seed(args.seed)  # same initial weights on every rank
    torch.backends.cudnn.deterministic = args.torch_deterministic

    # env setup: num_envs games stepped together, one decision per game per step
    game = VectorGame(args.num_envs, rules, episode=args.episode, autoreset=True, seed=args.seed + rank)
    rng = np.random.default_rng([args.seed, rank, 1])  # opponent assignment
    shuffle_rng = np.random.default_rng([args.seed, rank, 2])  # minibatch order

    # agent setup: the network (init_from, behaviour cloning) and the opponents: self-play, snapshots, agents
    network, optimizer = make_learner(args, rules, device, rank, world_size, fresh=not resume_path)
    opponents = Opponents(args.opponent_mix, args.num_envs, args.pool_size, rng, make_agent,
                          agent_seed=args.seed * 1000 + rank * 100, model_config=network.config, device=device)
    storage = TurnStorage(args.num_steps, args.num_envs, input_size(args.features), network.privileged_size)

    out = game.reset()
    opponents.assign(np.arange(args.num_envs))
    s = TrainingState(args=args, rules=rules, rank=rank, world_size=world_size, network=network, optimizer=optimizer,
                      game=game, storage=storage, opponents=opponents, shuffle_rng=shuffle_rng,
                      ep_points=np.zeros((args.num_envs, 2), np.float64),  # raw points of the running episode
                      next_obs=out.observation, next_mask=out.legal_action_mask,
                      next_player=out.current_player.astype(np.int64), session_start=session_start)
    if resume_path:
        # on the CPU: restore reads the games' arrays with .numpy(); load_state_dict moves the weights and the
        # optimizer's state to the network's device
        restore(s, load_checkpoint(resume_path, map_location="cpu"))
    start_iteration = s.iteration + 1
    log = RunLog(s, run_path, device, num_iterations, steps_per_iteration, resumed=bool(resume_path)) if is_main else None
    if is_main and not resume_path and (args.bc_agent or args.init_from) and args.eval_every:
        evaluate_and_keep_best(s, device, run_path, log)  # the starting point is a candidate for best.pt
        log.start_clock(s.global_step)

    for iteration in range(start_iteration, num_iterations + 1):
        s.iteration = iteration
        # Annealing the rate if instructed to do so.
        if args.anneal_lr:
            frac = 1.0 - (iteration - 1.0) / num_iterations
            optimizer.param_groups[0]["lr"] = frac * args.learning_rate

        # ALGO LOGIC: rollout -- one decision per game per step, learner decisions stored per player
        ep_returns: dict[str, list] = {}
        for step in range(args.num_steps):
            s.global_step += args.num_envs * world_size
            learner_turn = opponents.learner_turn(s.next_player)
            actions = np.zeros(args.num_envs, np.int64)
            envs = np.flatnonzero(learner_turn)
            if len(envs):
                net_in = network_input(s.next_obs[envs], args.features)  # computed once: stored for the update
                mask = s.next_mask[envs]
                priv = privileged_inputs(s.game.state, envs, s.next_player[envs]) if args.oracle_critic else None
                with torch.inference_mode():
                    action, logprob, _, value = network.get_action_and_value(
                        torch.from_numpy(net_in).to(device), torch.from_numpy(mask).to(device), entropy=False,
                        privileged=None if priv is None else torch.from_numpy(priv).to(device))
                actions[envs] = a_np = action.cpu().numpy()
                phi = potential(s.next_obs[envs], args.deadwood_shaping, args.reward_scale) \
                    if args.deadwood_shaping else 0.0
                storage.add(CARRY + step, envs, s.next_player[envs], net_in, mask, a_np,
                            logprob.cpu().numpy(), value.cpu().numpy(), phi, priv)
            opponents.act(np.flatnonzero(~learner_turn), s.next_obs, s.next_mask, args.features, actions)

            # TRY NOT TO MODIFY: execute the game and log data.
            out = s.game.step(actions)
            ended = out.terminated | out.truncated
            storage.credit(out.rewards * args.reward_scale, ended)
            s.ep_points += out.rewards
            if ended.any():
                fin = np.flatnonzero(ended)
                opponents.record(fin, s.ep_points, ep_returns)
                s.ep_points[fin] = 0.0
                opponents.assign(fin)
            s.next_obs, s.next_mask = out.observation, out.legal_action_mask
            s.next_player = out.current_player.astype(np.int64)

        # ALGO LOGIC: GAE along each player's own chain of decisions (bootstrap value per player)
        b_adv, b_ret, trainable = per_player_gae(storage.rewards, storage.values, storage.dones, storage.next_row,
                                                 storage.valid, args.gamma, args.gae_lambda, storage.potentials)

        batch = storage.flatten(trainable, b_adv, b_ret, device, privileged=args.oracle_critic)
        storage.carry_over()  # pending decisions wait for their successor in the next rollout

        # Optimizing the policy and value network
        stats = ppo_update(network, optimizer, batch, args, shuffle_rng, world_size)
        explained_var = explained_variance(batch["values"].cpu().numpy(), batch["returns"].cpu().numpy())

        # opponent pool: snapshots on schedule, or when the learner beats the pool by a margin
        if opponents.snapshot_due(iteration, every=args.snapshot_every, margin=args.snapshot_margin,
                                  min_hands=args.snapshot_min_hands, world_size=world_size):
            opponents.add_snapshot(network, iteration)

        if is_main:
            log.update(s, stats, explained_var, ep_returns, batch_size=len(batch["obs"]))
            if args.eval_every and iteration % args.eval_every == 0 and iteration != num_iterations:
                evaluate_and_keep_best(s, device, run_path, log)
            if args.checkpoint_every and iteration % args.checkpoint_every == 0:
                save_checkpoint(os.path.join(run_path, "checkpoint.pt"), training_checkpoint(s))

    if is_main:
        if s.iteration >= start_iteration:  # final evaluation and checkpoint
            evaluate_and_keep_best(s, device, run_path, log)
            save_checkpoint(os.path.join(run_path, "checkpoint.pt"), training_checkpoint(s))
        log.close(s, run_path)
    if world_size > 1:
        # the other ranks wait here for rank 0's final evaluation and checkpoint: a rank that tears down
        # gloo while its peer still holds the connection can abort the whole job
        dist.barrier()
        dist.destroy_process_group()
    return {"run_path": run_path, "global_step": s.global_step, "eval": s.last_eval}


def cli() -> None:
    """The ``okgin-train`` command (and ``python train.py``): ``main`` with one-line errors."""
    run_cli(main, errors=(ValueError, FileNotFoundError))


if __name__ == "__main__":
    cli()
