"""Training as a function: ``train(args) -> TrainResult``, the PPO self-play loop that ``okgin-train``,
the recipe (``okgin_trainer.recipe``) and the exploit (``okgin_trainer.exploit``) call in-process.

Per update: rollout (one decision per game per step, the learner's decisions stored per player),
GAE along each player's own chain, the PPO update, a snapshot for the opponent pool, then on rank 0
the log, an evaluation (``okgin_trainer.matches.play_match``: the greedy policy on fixed duplicate
deals; ``best.pt`` keeps the best) and the checkpoint. The pieces: ``storage`` (rollout storage and
GAE), ``update`` (the PPO loss and update), ``pool`` (opponents), ``resume`` (the run's state as one
object, its checkpoint and resume), ``config`` (the keys). docs/training.md tells the whole story.
"""

from __future__ import annotations

import os
import random
import sys
import time
from dataclasses import asdict, dataclass, field
from typing import NamedTuple

import numba
import numpy as np
import torch
import torch.distributed as dist
import torch.optim as optim
from okgin_agents.ppo import (
    ActorCritic,
    PPOAgent,
    input_size,
    load_checkpoint,
    load_widened,
    network_input,
    save_checkpoint,
)
from okgin_trainer.bc import behaviour_cloning
from okgin_trainer.checkpoint import move_aside
from okgin_trainer.config import Args, key_help, short_name
from okgin_trainer.matches import play_match
from okgin_trainer.oracle import PRIVILEGED_SIZE, privileged_inputs
from okgin_trainer.pool import Opponents
from okgin_trainer.resume import TrainingState
from okgin_trainer.storage import CARRY, Decisions, TurnStorage, per_player_gae
from okgin_trainer.update import explained_variance, ppo_update

from okgin_env.agent_specs import make_agent
from okgin_env.features.shaping import potential
from okgin_env.game.core import VectorGame
from okgin_env.game.rules import Rules


@dataclass
class TrainResult:
    """What a run ends with (on rank 0; other ranks get their network and counters, no log)."""

    run_path: str  #: the run's directory: checkpoint.pt, best.pt, TensorBoard events
    global_step: int
    iteration: int  #: the last update done
    network: ActorCritic  #: the trained network (the weights of checkpoint.pt)
    last_eval: dict[str, dict]  #: the final evaluation, per opponent spec (``evaluate_policy``)
    evaluations: list[dict] = field(default_factory=list)  #: this session's: {"step", "seconds", "results"}
    metrics: dict[str, list[tuple[int, float]]] = field(default_factory=dict)  #: every logged scalar: tag -> (step, value)

    @property
    def checkpoint(self) -> str:
        return os.path.join(self.run_path, "checkpoint.pt")

    @property
    def best(self) -> str:
        return os.path.join(self.run_path, "best.pt")


# ------------------------------------------------------ evaluation and logging
def evaluate_policy(network: ActorCritic, args: Args, rules: Rules, device) -> dict[str, dict]:
    """Greedy policy against each of ``eval_opponents`` on fixed duplicate deals."""
    learner = PPOAgent(network, name="learner", deterministic=True, seed=0, device=device)
    results = {}
    for spec in args.eval_opponents:
        opponent = make_agent(spec, seed=args.eval_seed)
        m = play_match(learner, opponent, num_hands=args.eval_hands, seed=args.eval_seed, rules=rules, duplicate=True)
        results[spec] = {"win_rate": float(m.win_rate), "points_per_hand": float(m.points_per_hand),
                         "points_ci": tuple(float(x) for x in m.points_ci), "hands": int(m.hands)}
    network.train()
    return results


class RunLog:
    """What rank 0 reports: the config table and scalars in TensorBoard (each also kept in ``metrics``),
    progress lines (or a tqdm bar: steps, SPS, ETA, the latest evaluation), evaluations (also kept in
    ``evaluations``), and steps per second since :meth:`start_clock`."""

    def __init__(self, s: TrainingState, run_path: str, device: torch.device, num_iterations: int,
                 steps_per_iteration: int, resumed: bool) -> None:
        from torch.utils.tensorboard import SummaryWriter
        args = s.args
        self.writer = SummaryWriter(run_path, purge_step=s.global_step if resumed else None)
        self.metrics: dict[str, list[tuple[int, float]]] = {}
        self.evaluations: list[dict] = []
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

    def scalar(self, tag: str, value: float, step: int) -> None:
        """One scalar to TensorBoard and to ``metrics`` (as TensorBoard stores it: float32)."""
        self.writer.add_scalar(tag, value, step)
        self.metrics.setdefault(tag, []).append((int(step), float(np.float32(value))))

    def update(self, s: TrainingState, stats: dict, explained_var: float, ep_returns: dict, batch_size: int) -> None:
        """Scalars of update ``s.iteration``, and its progress line every ``log_every`` updates (or the bar)."""
        step = s.global_step
        sps = int((step - self.start_step) / (time.time() - self.start_time))
        self.scalar("charts/learning_rate", s.optimizer.param_groups[0]["lr"], step)
        self.scalar("charts/SPS", sps, step)
        self.scalar("charts/learner_decisions", batch_size, step)
        self.scalar("charts/pool_size", len(s.opponents.pool), step)
        all_returns = [x for v in ep_returns.values() for x in v]
        if all_returns:
            self.scalar("charts/episodic_return", float(np.mean(all_returns)), step)
        for kind, v in ep_returns.items():
            self.scalar(f"charts/points_per_hand_vs_{kind}", float(np.mean(v)), step)
        for key in ("policy_loss", "value_loss", "entropy", "old_approx_kl", "approx_kl", "clipfrac"):
            self.scalar(f"losses/{key}", stats[key], step)
        self.scalar("losses/explained_variance", explained_var, step)
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
        """An evaluation to TensorBoard, against steps (eval/*) and against the run's wall time (eval_time/*,
        warm start included), and as one log line."""
        results, step, seconds = s.last_eval, s.global_step, int(s.elapsed())
        for spec, r in results.items():
            for key in ("win_rate", "points_per_hand"):
                self.scalar(f"eval/{key}_vs_{short_name(spec)}", r[key], step)
                self.scalar(f"eval_time/{key}_vs_{short_name(spec)}", r[key], seconds)
        self.evaluations.append({"step": step, "seconds": seconds, "results": results})
        line = "  ".join(f"{short_name(k)} {r['points_per_hand']:+.2f}pts {r['win_rate']:.0%}" for k, r in results.items())
        self.line(f"eval @ step {step:,}, {seconds}s ({took:.0f}s): {line}")

    def close(self, s: TrainingState, run_path: str) -> None:
        if self.bar is not None:
            self.bar.close()
        self.writer.close()
        self.line(f"done: {s.global_step:,} steps in {time.time() - self.start_time:.0f}s ({s.elapsed():.0f}s in all); "
                  f"checkpoint {run_path}/checkpoint.pt, best {run_path}/best.pt")


def evaluate_and_keep_best(s: TrainingState, run_path: str, log: RunLog) -> None:
    """Evaluate the greedy policy (``s.last_eval``); a new best result against best_metric_opponent is saved as best.pt."""
    t0 = time.time()
    s.last_eval = evaluate_policy(s.network, s.args, s.rules, s.device)
    log.evaluation(s, time.time() - t0)
    metric = s.last_eval[s.args.best_metric_opponent]["points_per_hand"]
    if metric > s.best_metric:
        s.best_metric = metric
        save_checkpoint(os.path.join(run_path, "best.pt"), s.state_dict())


# ------------------------------------------------------------------------- setup
class Process(NamedTuple):
    """This process of the run: its rank, the number of processes and its torch device."""

    rank: int
    world_size: int
    device: torch.device


def init_process(args: Args) -> Process:
    """This process, with the process group joined under torchrun (which sets RANK / WORLD_SIZE /
    LOCAL_RANK); resolves ``args.device`` auto and sets torch's thread count."""
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
    return Process(rank, world_size, device)


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


def make_learner(args: Args, rules: Rules, proc: Process, fresh: bool) -> tuple[ActorCritic, optim.Optimizer]:
    """The network and its optimizer, the same on every process. A ``fresh`` run (not resumed) starts from
    ``init_from``'s weights and/or imitates ``bc_agent`` (rank 0; the broadcast shares it)."""
    network = ActorCritic(hidden_sizes=args.hidden_sizes, activation=args.activation,
                          shared_trunk=args.shared_trunk, mask_input=args.mask_input, features=args.features,
                          privileged_size=PRIVILEGED_SIZE if args.oracle_critic else 0).to(proc.device)
    if args.init_from and fresh:
        try:
            load_widened(network, load_checkpoint(args.init_from, map_location=proc.device))
        except (ValueError, FileNotFoundError) as e:
            raise type(e)(f"config key 'init_from': {e}") from None
    if args.bc_agent and fresh and proc.rank == 0:
        behaviour_cloning(network, args, rules, proc.device)
    optimizer = optim.Adam(network.parameters(), lr=args.learning_rate, eps=1e-5)
    if proc.world_size > 1:
        for p in network.parameters():
            dist.broadcast(p.data, src=0)
        torch.manual_seed(args.seed + 1000 * proc.rank)  # different sampling streams per rank
    return network, optimizer


def new_state(args: Args, rules: Rules, proc: Process, resume_path: str | None) -> TrainingState:
    """The run's state at its start: seeded, games dealt, learner and opponents made; a resumed run's
    checkpoint put back (``TrainingState.load_state_dict``)."""
    # TRY NOT TO MODIFY: seeding
    rank = proc.rank
    random.seed(args.seed + rank)
    np.random.seed(args.seed + rank)
    torch.manual_seed(args.seed)  # same initial weights on every rank
    torch.backends.cudnn.deterministic = args.torch_deterministic

    # env setup: num_envs games stepped together, one decision per game per step
    game = VectorGame(args.num_envs, rules, episode=args.episode, autoreset=True, seed=args.seed + rank)
    rng = np.random.default_rng([args.seed, rank, 1])  # opponent assignment
    shuffle_rng = np.random.default_rng([args.seed, rank, 2])  # minibatch order

    # agent setup: the network (init_from, behaviour cloning) and the opponents: self-play, snapshots, agents
    network, optimizer = make_learner(args, rules, proc, fresh=not resume_path)
    opponents = Opponents(args.opponent_mix, args.num_envs, args.pool_size, rng, make_agent,
                          agent_seed=args.seed * 1000 + rank * 100, model_config=network.config, device=proc.device)
    storage = TurnStorage(args.num_steps, args.num_envs, input_size(args.features), network.privileged_size)
    s = TrainingState(args=args, rules=rules, rank=rank, world_size=proc.world_size, network=network,
                      optimizer=optimizer, game=game, storage=storage, opponents=opponents, shuffle_rng=shuffle_rng,
                      ep_points=np.zeros((args.num_envs, 2), np.float64))  # raw points of the running episode
    s.start_games(game)
    if resume_path:
        # on the CPU: the games' arrays are read with .numpy(); load_state_dict moves the weights and the
        # optimizer's state to the network's device
        s.load_state_dict(load_checkpoint(resume_path, map_location="cpu"))
    return s


# ------------------------------------------------------------------- one update
def rollout(s: TrainingState) -> dict[str, list]:
    """``num_steps`` env steps, one decision per game per step; the learner's decisions are stored per player.
    Returns the finished episodes' raw points per opponent kind."""
    args, network, storage, opponents, device = s.args, s.network, s.storage, s.opponents, s.device
    ep_returns: dict[str, list] = {}
    for step in range(args.num_steps):
        s.global_step += args.num_envs * s.world_size
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
            storage.add(CARRY + step, envs, s.next_player[envs],
                        Decisions(net_in, mask, a_np, logprob.cpu().numpy(), value.cpu().numpy(), phi, priv))
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
    return ep_returns


def learn(s: TrainingState) -> tuple[dict, float, int]:
    """GAE along each player's own chain, then the PPO update: (its stats, explained variance, batch size)."""
    args, storage = s.args, s.storage
    # ALGO LOGIC: GAE along each player's own chain of decisions (bootstrap value per player)
    b_adv, b_ret, trainable = per_player_gae(storage.rewards, storage.values, storage.dones, storage.next_row,
                                             storage.valid, args.gamma, args.gae_lambda, storage.potentials)
    batch = storage.flatten(trainable, b_adv, b_ret, s.device, privileged=args.oracle_critic)
    storage.carry_over()  # pending decisions wait for their successor in the next rollout

    # Optimizing the policy and value network
    stats = ppo_update(s.network, s.optimizer, batch, args, s.shuffle_rng, s.world_size)
    explained_var = explained_variance(batch["values"].cpu().numpy(), batch["returns"].cpu().numpy())
    return stats, explained_var, len(batch["obs"])


# ========================================================================= train
def train(args: Args, resume_path: str | None = None) -> TrainResult:
    """Train as ``args`` says (``resume_path``: continue that checkpoint's run exactly); under torchrun every
    process calls it. Rank 0 logs, evaluates and writes the checkpoints."""
    session_start = time.time()  # wall time of this session (a resumed run adds its earlier sessions')
    rules = Rules.from_dict(args.rules)
    proc = init_process(args)
    is_main = proc.rank == 0
    steps_per_iteration = args.num_envs * args.num_steps * proc.world_size
    num_iterations = max(1, args.total_timesteps // steps_per_iteration)
    run_path = run_directory(args, resume_path, is_main)
    s = new_state(args, rules, proc, resume_path)
    if not resume_path:
        s.session_start = session_start
    start_iteration = s.iteration + 1
    log = RunLog(s, run_path, proc.device, num_iterations, steps_per_iteration, resumed=bool(resume_path)) \
        if is_main else None
    if is_main and not resume_path and (args.bc_agent or args.init_from) and args.eval_every:
        evaluate_and_keep_best(s, run_path, log)  # the starting point is a candidate for best.pt
        log.start_clock(s.global_step)

    for iteration in range(start_iteration, num_iterations + 1):
        s.iteration = iteration
        if args.anneal_lr:  # Annealing the rate if instructed to do so.
            s.optimizer.param_groups[0]["lr"] = (1.0 - (iteration - 1.0) / num_iterations) * args.learning_rate
        ep_returns = rollout(s)
        stats, explained_var, batch_size = learn(s)
        # opponent pool: snapshots on schedule, or when the learner beats the pool by a margin
        if s.opponents.snapshot_due(iteration, every=args.snapshot_every, margin=args.snapshot_margin,
                                    min_hands=args.snapshot_min_hands, world_size=proc.world_size):
            s.opponents.add_snapshot(s.network, iteration)
        if is_main:
            log.update(s, stats, explained_var, ep_returns, batch_size=batch_size)
            if args.eval_every and iteration % args.eval_every == 0 and iteration != num_iterations:
                evaluate_and_keep_best(s, run_path, log)
            if args.checkpoint_every and iteration % args.checkpoint_every == 0:
                save_checkpoint(os.path.join(run_path, "checkpoint.pt"), s.state_dict())

    if is_main:
        if s.iteration >= start_iteration:  # final evaluation and checkpoint
            evaluate_and_keep_best(s, run_path, log)
            save_checkpoint(os.path.join(run_path, "checkpoint.pt"), s.state_dict())
        log.close(s, run_path)
    if proc.world_size > 1:
        # the other ranks wait here for rank 0's final evaluation and checkpoint: a rank that tears down
        # gloo while its peer still holds the connection can abort the whole job
        dist.barrier()
        dist.destroy_process_group()
    return TrainResult(run_path, s.global_step, s.iteration, s.network, s.last_eval,
                       log.evaluations if log else [], log.metrics if log else {})
