"""PPO self-play trainer for Oklahoma Gin (after CleanRL's ``ppo.py``).

    python train.py                                   # configs/quick.yaml: about 5 CPU minutes, beats simple
    python train.py --config configs/default.yaml     # the recipe of the shipped agent
    python train.py --config configs/default.yaml --set learning_rate=1e-4 --set num_envs=2048
    python train.py --resume runs/<run>/checkpoint.pt # continue a killed run where it left off
    torchrun --nproc_per_node 2 train.py --config ... # data-parallel (gloo on CPU, nccl on GPU)
    python train.py --help                            # every config key with its documentation

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
  (``evaluate.play_match``); ``best.pt`` keeps the best checkpoint.
"""

from __future__ import annotations

import argparse
import copy
import math
import os
import random
import sys
import time
import typing
from dataclasses import asdict, dataclass, field, fields

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
import yaml

from okgin_agents.ppo import (FEATURES, ActorCritic, PPOAgent, input_size, load_checkpoint, load_widened, network_input,
                        save_checkpoint)
from okgin_env.actions import NUM_ACTIONS
from okgin_env.agent_specs import make_agent as make_agent_spec
from okgin_env.core import VectorGame
from okgin_env.observation import OBS_SIZE
from okgin_env.rules import Rules
from okgin_env.shaping import potential
from okgin_trainer.checkpoint import move_aside
from okgin_trainer.oracle import PRIVILEGED_SIZE, privileged_inputs
from okgin_trainer.pool import Opponents
from okgin_trainer.resume import RESUME_OVERRIDABLE, restore, resume_config, training_checkpoint

# the checkout's configs/ folder (okgin/ sits beside it)
DEFAULT_CONFIG = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "configs", "quick.yaml")


def arg(default, help: str):
    """A config key of ``Args``: its default and its help text (``--help``, TensorBoard's config table).
    A list or dict default is copied for each ``Args``, so no two configs share it."""
    if isinstance(default, (list, dict)):
        return field(default_factory=lambda: copy.deepcopy(default), metadata={"help": help})
    return field(default=default, metadata={"help": help})


@dataclass
class Args:
    """Every config key: a field declared with ``arg(default, help)``."""

    # ---------------------------------------------------------------- experiment
    exp_name: str = arg("okgin_ppo",
        "the name of this experiment (TensorBoard run names, and the run directory unless run_name is set)")
    seed: int = arg(1,
        "seed of the experiment (games, opponents, network init, sampling); rank r uses seed + r for its games")
    torch_deterministic: bool = arg(True,
        "if toggled, `torch.backends.cudnn.deterministic=True` (CPU runs are reproducible either way)")
    device: str = arg("auto", "where the network runs: cpu, cuda or auto (cuda if available)")
    num_threads: int = arg(0,
        "threads of torch and of the numba kernels (features, bots); 0: one per core. Idle threads sleep "
        "(OMP_WAIT_POLICY=PASSIVE), so a second run beside this one slows it by less than 2x instead of 10x; "
        "set 1 to leave the other cores to other work")
    run_dir: str = arg("runs", "directory for TensorBoard events and checkpoints")
    run_name: str = arg("",
        "name of this run's directory under run_dir ('': <exp_name>__<seed>__<unix time>); with a "
        "fixed name the directory always holds the newest run: an earlier run found there is moved "
        "aside to <name>-<time of its last write>")
    log_every: int = arg(10, "print a progress line every this many updates")
    progress_bar: typing.Optional[bool] = arg(None,
        "a tqdm progress bar (steps, SPS, ETA, latest evaluation) instead of progress lines; null: "
        "when stderr is a terminal")

    # ---------------------------------------------------------------------- game
    rules: dict = arg({}, "rule options of the training games (okgin_env.Rules keys; {} = Oklahoma defaults)")
    episode: str = arg("hand", "episode unit: hand (one hand per episode; points per hand) or game (to target_score)")

    # ----------------------------------------------------------------- algorithm
    total_timesteps: int = arg(3_000_000, "total env steps (decisions of both players, all processes) of the run")
    learning_rate: float = arg(2.5e-4, "the learning rate of the optimizer")
    num_envs: int = arg(256, "the number of parallel games per process")
    num_steps: int = arg(64, "env steps per game per rollout (about half are the learner's decisions against a bot)")
    anneal_lr: bool = arg(True, "toggle learning rate annealing (linear to 0 over the run)")
    gamma: float = arg(1.0, "the discount factor gamma (per decision of the same player)")
    gae_lambda: float = arg(0.95, "the lambda for the general advantage estimation")
    num_minibatches: int = arg(4, "the number of mini-batches per epoch")
    update_epochs: int = arg(4, "the K epochs to update the policy")
    norm_adv: bool = arg(True, "toggles advantages normalization (per minibatch)")
    clip_coef: float = arg(0.2, "the surrogate clipping coefficient")
    clip_vloss: bool = arg(True,
        "toggles whether or not to use a clipped loss for the value function, as per the paper")
    ent_coef: float = arg(0.01, "coefficient of the entropy (over legal actions)")
    vf_coef: float = arg(0.5, "coefficient of the value function")
    max_grad_norm: float = arg(0.5, "the maximum norm for the gradient clipping")
    target_kl: typing.Optional[float] = arg(None,
        "stop the epochs of an update early when approx_kl exceeds this (null: never)")
    reward_scale: float = arg(0.02, "rewards (hand points, zero-sum) are multiplied by this before GAE")
    deadwood_shaping: float = arg(0.5,
        "potential-based shaping: phi(s) = -deadwood_shaping * (the player's best deadwood at its "
        "decision), in points (times reward_scale); it telescopes along each player's chain, so it "
        "speeds learning without changing the optimum (0: off)")

    # ------------------------------------------------------------------- network
    hidden_sizes: typing.List[int] = arg([256, 256], "widths of the MLP's hidden layers")
    activation: str = arg("relu", "activation of the hidden layers: relu, tanh or gelu")
    shared_trunk: bool = arg(True,
        "actor and critic share the MLP body (two heads); false: separate bodies as in CleanRL")
    mask_input: bool = arg(True,
        "append the legal-action mask to the network's input (it then sees exactly when it may knock)")
    features: str = arg("raw",
        "network input: raw (the observation), meld (plus meld features computed from it, agents.ppo.meld_features) "
        "or outs (plus the expert's reading of the table: outs, danger, the opponent's likely cards, "
        "agents.expert.outs_features); init_from may start an outs network from a meld one")
    oracle_critic: bool = arg(False,
        "the critic also reads what the player cannot see, the opponent's hand and the stock order "
        "(trainer.oracle; needs shared_trunk: false): less noisy advantages. The policy never reads it, "
        "and playing the trained agent needs none of it")

    # ------------------------------------------------------------ starting point
    init_from: str = arg("",
        "start from the weights of this checkpoint (same network config, or a smaller one: fewer features, narrower "
        "hidden layers, a shared trunk, no privileged critic inputs; it computes the same at first), e.g. to fine-tune")
    bc_agent: str = arg("",
        "before PPO, imitate this agent (any agent spec, e.g. expert) playing itself; '' = start from random weights")
    bc_decisions: int = arg(1_000_000, "decisions of bc_agent self-play to imitate")
    bc_epochs: int = arg(4, "epochs over the imitation data")
    bc_minibatch_size: int = arg(4096, "minibatch size of the imitation updates")
    bc_learning_rate: float = arg(1e-3,
        "learning rate of the imitation updates (the critic learns the bot's returns meanwhile)")
    bc_anneal_lr: bool = arg(False,
        "anneal the imitation learning rate linearly to 0 over its updates (a closer fit in few epochs)")

    # ----------------------------------------------------------------- opponents
    opponent_mix: typing.Dict[str, float] = arg({"self": 0.5, "snapshot": 0.3, "random": 0.2},
        "share of games per opponent: self (both seats the learner), snapshot (a frozen past learner "
        "from the pool), or any agent spec (random, greedy, simple, expert, ppo:PATH, module:Attr, ...; "
        "see okgin_env.agent_specs); normalised; snapshot falls back to self while the pool is empty")
    pool_size: int = arg(8, "the most snapshots kept in the pool (oldest dropped first)")
    snapshot_every: int = arg(20, "add the learner to the pool every this many updates (0: never on schedule)")
    snapshot_margin: float = arg(5.0,
        "also add a snapshot when the learner scores at least this many points per hand against the pool (0: off)")
    snapshot_min_hands: int = arg(2000, "hands against the pool needed before snapshot_margin is judged")

    # ------------------------------------------------------ evaluation, checkpoints
    eval_every: int = arg(25, "evaluate every this many updates (and at the end; 0: only at the end)")
    eval_hands: int = arg(2000, "hands per evaluation match (duplicate: each deal played from both seats)")
    eval_opponents: typing.List[str] = arg(["random", "simple", "expert"],
        "agent specs (as opponent_mix) the greedy policy is evaluated against")
    eval_seed: int = arg(12345, "seed of the fixed evaluation deals")
    best_metric_opponent: str = arg("expert",
        "eval opponent whose points per hand selects best.pt (must be in eval_opponents)")
    checkpoint_every: int = arg(25, "save checkpoint.pt every this many updates (and at the end)")


# ----------------------------------------------------------------------- config
def key_help() -> dict[str, str]:
    """Config key -> its help text, for every field of ``Args``."""
    return {f.name: f.metadata["help"] for f in fields(Args)}


def _check_type(key: str, value, tp):
    """``value`` converted to the field type ``tp``; ValueError naming key, value and type."""
    origin, targs = typing.get_origin(tp), typing.get_args(tp)
    bad = ValueError(f"config key {key!r}: {value!r} is not a valid {getattr(tp, '__name__', str(tp))}")
    if origin is typing.Union:  # Optional[float]
        if value is None:
            return None
        return _check_type(key, value, next(a for a in targs if a is not type(None)))
    if tp is bool:
        if not isinstance(value, bool):
            raise ValueError(f"config key {key!r}: {value!r} is not true/false")
        return value
    if tp is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(f"config key {key!r}: {value!r} is not an integer")
        return value
    if tp is float:
        if isinstance(value, str):  # YAML 1.1 reads 3e-4 (no dot) as a string
            try:
                value = float(value)
            except ValueError:
                pass
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ValueError(f"config key {key!r}: {value!r} is not a number")
        return float(value)
    if tp is str:
        if not isinstance(value, str):
            raise ValueError(f"config key {key!r}: {value!r} is not a string")
        return value
    if origin is list:
        if not isinstance(value, (list, tuple)):
            raise ValueError(f"config key {key!r}: {value!r} is not a list")
        return [_check_type(key, v, targs[0]) for v in value]
    if tp is dict or origin is dict:
        if not isinstance(value, dict):
            raise ValueError(f"config key {key!r}: {value!r} is not a mapping")
        return {str(k): (_check_type(key, v, targs[1]) if targs else v) for k, v in value.items()}
    raise bad


def args_from_dict(d: dict) -> Args:
    """Build ``Args`` from a mapping of config keys; unknown keys and bad values raise ValueError."""
    hints = typing.get_type_hints(Args, globalns=globals())  # globals(): also when run under cProfile
    unknown = sorted(set(d) - set(hints))
    if unknown:
        raise ValueError(f"unknown config key(s) {', '.join(map(str, unknown))}; valid keys: {', '.join(hints)}")
    args = Args(**{k: _check_type(k, v, hints[k]) for k, v in d.items()})
    validate_args(args)
    return args


def validate_args(args: Args) -> None:
    """Range checks with messages that say what is allowed."""
    def need(ok: bool, key: str, allowed: str) -> None:
        if not ok:
            raise ValueError(f"config key {key!r}: {getattr(args, key)!r} is invalid; allowed: {allowed}")

    for key in ("total_timesteps", "num_envs", "num_steps", "num_minibatches", "update_epochs",
                "log_every", "eval_hands", "pool_size", "snapshot_min_hands"):
        need(getattr(args, key) >= 1, key, "an integer >= 1")
    for key in ("bc_decisions", "bc_epochs", "bc_minibatch_size"):
        need(getattr(args, key) >= 1, key, "an integer >= 1")
    need(args.bc_learning_rate > 0, "bc_learning_rate", "a number > 0")
    for key in ("snapshot_every", "eval_every", "checkpoint_every", "num_threads"):
        need(getattr(args, key) >= 0, key, "an integer >= 0")
    need(args.learning_rate > 0, "learning_rate", "a number > 0")
    need(0 < args.gamma <= 1, "gamma", "0 < gamma <= 1")
    need(0 <= args.gae_lambda <= 1, "gae_lambda", "0 <= gae_lambda <= 1")
    need(args.clip_coef > 0, "clip_coef", "a number > 0")
    for key in ("ent_coef", "vf_coef", "max_grad_norm", "snapshot_margin"):
        need(getattr(args, key) >= 0, key, "a number >= 0")
    need(args.reward_scale > 0, "reward_scale", "a number > 0")
    need(args.deadwood_shaping >= 0, "deadwood_shaping", "a number >= 0")
    need(args.target_kl is None or args.target_kl > 0, "target_kl", "null or a number > 0")
    need(args.device in ("cpu", "cuda", "auto") or args.device.startswith("cuda:"), "device", "cpu, cuda or auto")
    need(args.episode in ("hand", "game"), "episode", "hand or game")
    need(len(args.hidden_sizes) >= 1 and all(h >= 1 for h in args.hidden_sizes), "hidden_sizes",
         "a non-empty list of integers >= 1")
    need(args.activation in ("relu", "tanh", "gelu"), "activation", "relu, tanh or gelu")
    need(args.features in FEATURES, "features", " or ".join(FEATURES))
    need(not (args.oracle_critic and args.shared_trunk), "oracle_critic",
         "false, or true with shared_trunk: false (the policy must not read the critic's privileged inputs)")
    Rules.from_dict(args.rules)  # names the bad rule option itself
    mix = args.opponent_mix
    need(len(mix) > 0 and all(v >= 0 for v in mix.values()) and sum(mix.values()) > 0, "opponent_mix",
         "a mapping of opponent -> share >= 0 with a positive sum")
    need(not (set(mix) <= {"snapshot"}), "opponent_mix", "at least one opponent other than snapshot")
    need(args.best_metric_opponent in args.eval_opponents, "best_metric_opponent",
         f"one of eval_opponents ({', '.join(args.eval_opponents)})")
    # agents are any spec okgin_env.agent_specs resolves (bundled bots, ppo:PATH, module:Attr): build each once now,
    # so a typo fails at startup with the list of valid specs rather than after the warm start
    for key, specs in (("bc_agent", [args.bc_agent] if args.bc_agent else []), ("eval_opponents", args.eval_opponents),
                       ("opponent_mix", [k for k in mix if k not in ("self", "snapshot")])):
        for spec in specs:
            try:
                make_agent(spec, seed=0)
            except (ValueError, FileNotFoundError) as e:
                raise ValueError(f"config key {key!r}: {e}") from None


def parse_cli(argv: list[str] | None = None) -> tuple[Args, str | None]:
    """(args, resume path) from the command line; configs are YAML files whose keys are Args fields."""
    defaults = Args()
    epilog = "config keys (YAML keys of --config, and --set key=value):\n" + "\n".join(
        f"  {key} (default {getattr(defaults, key)!r}): {text}" for key, text in key_help().items())
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0], epilog=epilog,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--config", default=None, help=f"YAML config (default: {os.path.relpath(DEFAULT_CONFIG)})")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="override one config key (YAML value syntax); repeatable")
    parser.add_argument("--seed", type=int, default=None, help="shortcut for --set seed=N")
    parser.add_argument("--device", default=None, help="shortcut for --set device=cpu|cuda|auto")
    parser.add_argument("--total-timesteps", type=int, default=None, help="shortcut for --set total_timesteps=N")
    parser.add_argument("--resume", default=None, metavar="CHECKPOINT",
                        help="continue the run of this checkpoint.pt (its config; --set may change only "
                             + ", ".join(RESUME_OVERRIDABLE) + ")")
    ns = parser.parse_args(argv)
    overrides: dict = {}
    for item in ns.set:
        if "=" not in item:
            raise ValueError(f"--set {item!r} must look like key=value; valid keys: {', '.join(f.name for f in fields(Args))}")
        key, text = (s.strip() for s in item.split("=", 1))
        try:
            overrides[key] = yaml.safe_load(text) if text else ""
        except yaml.YAMLError as e:
            raise ValueError(f"--set {key}: cannot parse {text!r}: {e}") from None
    for key, val in (("seed", ns.seed), ("device", ns.device), ("total_timesteps", ns.total_timesteps)):
        if val is not None:
            overrides[key] = val
    if ns.resume:
        if ns.config:
            raise ValueError("--resume continues a run with its own config; do not pass --config with it")
        return args_from_dict(resume_config(ns.resume, overrides)), ns.resume
    path = ns.config or DEFAULT_CONFIG
    try:
        with open(path, encoding="utf-8") as f:
            cfg = yaml.safe_load(f) or {}
    except FileNotFoundError:
        raise FileNotFoundError(f"config file not found: {path}") from None
    if not isinstance(cfg, dict):
        raise ValueError(f"{path}: a config must be a YAML mapping of keys to values")
    try:
        args_from_dict(cfg)
    except ValueError as e:
        raise ValueError(f"{path}: {e}") from None
    return args_from_dict({**cfg, **overrides}), None


# ---------------------------------------------------------------- per-player storage
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


# --------------------------------------------------------------------- PPO update
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


# --------------------------------------------------------------------- opponents
def make_agent(spec: str, seed: int):
    """The agent a spec names (``okgin_env.agent_specs.make_agent``: a bundled bot, ppo:PATH or module:Attr)."""
    import okgin_agents as agents  # noqa: F401 - registers the bundled bots (without relying on the installed entry point)
    return make_agent_spec(spec, seed=seed)


# ------------------------------------------------------- behaviour cloning warm start
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
        obs[t], masks[t], players[t], episode[t] = out.observation, out.legal_action_mask, out.current_player, ep_no
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
    phi = potential(obs, args.deadwood_shaping, args.reward_scale)
    targets = (points * args.reward_scale - phi).astype(np.float32)
    if args.features != "raw":
        obs = np.concatenate([network_input(obs[i:i + 65536].astype(np.float32), args.features).astype(np.float16)
                              for i in range(0, len(obs), 65536)])
    return obs, masks, actions, targets, has_target, privileged


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
    num_updates, done = args.bc_epochs * math.ceil(len(inds) / args.bc_minibatch_size), 0
    for epoch in range(args.bc_epochs):
        rng.shuffle(inds)
        losses, accs = [], []
        for start in range(0, len(inds), args.bc_minibatch_size):
            if args.bc_anneal_lr:
                optimizer.param_groups[0]["lr"] = args.bc_learning_rate * (1.0 - done / num_updates)
            done += 1
            mb = inds[start:start + args.bc_minibatch_size]
            o = torch.from_numpy(obs[mb].astype(np.float32)).to(device)
            m = torch.from_numpy(masks[mb]).to(device)
            a = torch.from_numpy(actions[mb]).to(device)
            p = None if privileged is None else torch.from_numpy(privileged[mb].astype(np.float32)).to(device)
            _, logprob, _, value = network.get_action_and_value(o, m, a, privileged=p)
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


# ------------------------------------------------------------------- evaluation
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


def short_name(spec: str) -> str:
    return os.path.basename(spec) if spec.startswith("ppo:") else spec


def report_eval(results: dict[str, dict], writer, global_step: int, seconds: int, took: float, log) -> None:
    """Evaluation results to TensorBoard, against steps (eval/*) and against the run's wall time ``seconds``
    (eval_time/*, warm start included), and as one log line."""
    for spec, r in results.items():
        for key in ("win_rate", "points_per_hand"):
            writer.add_scalar(f"eval/{key}_vs_{short_name(spec)}", r[key], global_step)
            writer.add_scalar(f"eval_time/{key}_vs_{short_name(spec)}", r[key], seconds)
    line = "  ".join(f"{short_name(s)} {r['points_per_hand']:+.2f}pts {r['win_rate']:.0%}" for s, r in results.items())
    log(f"eval @ step {global_step:,}, {seconds}s ({took:.0f}s): {line}")


# ========================================================================== main
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
        dist.init_process_group(backend="nccl" if device.type == "cuda" else "gloo")
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


def main(argv: list[str] | None = None) -> dict:
    args, resume_path = parse_cli(argv)
    rules = Rules.from_dict(args.rules)
    run_start, elapsed_before = time.time(), 0.0  # wall time of the run (earlier sessions of a resumed run included)
    elapsed = lambda: elapsed_before + time.time() - run_start  # noqa: E731
    log = lambda line: print(line, flush=True)  # noqa: E731

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

    network = ActorCritic(hidden_sizes=args.hidden_sizes, activation=args.activation,
                          shared_trunk=args.shared_trunk, mask_input=args.mask_input,
                          features=args.features, privileged_size=PRIVILEGED_SIZE if args.oracle_critic else 0).to(device)
    if args.init_from and not resume_path:
        try:
            load_widened(network, load_checkpoint(args.init_from, map_location=device))
        except ValueError as e:
            raise ValueError(f"init_from {args.init_from}: {e}") from None
    if args.bc_agent and not resume_path and is_main:  # rank 0 imitates; the broadcast below shares it
        behaviour_cloning(network, args, rules, device)
    optimizer = optim.Adam(network.parameters(), lr=args.learning_rate, eps=1e-5)
    if world_size > 1:
        for p in network.parameters():
            dist.broadcast(p.data, src=0)
        torch.manual_seed(args.seed + 1000 * rank)  # different sampling streams per rank

    # opponents: self-play, snapshots from the pool, agents (trainer/pool.py)
    opponents = Opponents(args.opponent_mix, args.num_envs, args.pool_size, rng, make_agent,
                          agent_seed=args.seed * 1000 + rank * 100, model_config=network.config, device=device)

    storage = TurnStorage(args.num_steps, args.num_envs, input_size(args.features), network.privileged_size)
    ep_points = np.zeros((args.num_envs, 2), np.float64)  # raw points of the running episode
    global_step, start_iteration, best_metric = 0, 1, -math.inf
    last_eval: dict = {}

    out = game.reset()
    opponents.assign(np.arange(args.num_envs))
    next_obs, next_mask, next_player = out.observation, out.legal_action_mask, out.current_player.astype(np.int64)

    if resume_path:
        r = restore(load_checkpoint(resume_path, map_location=device), args=args, rules=rules, rank=rank,
                    world_size=world_size, network=network, optimizer=optimizer, game=game, storage=storage,
                    opponents=opponents, ep_points=ep_points, shuffle_rng=shuffle_rng)
        game, next_obs, next_mask, next_player = r.game, r.next_obs, r.next_mask, r.next_player
        global_step, start_iteration, best_metric, last_eval = r.global_step, r.start_iteration, r.best_metric, r.last_eval
        elapsed_before = r.elapsed - (time.time() - run_start)  # continue the wall clock

    writer = None
    if is_main:
        from torch.utils.tensorboard import SummaryWriter
        writer = SummaryWriter(run_path, purge_step=global_step if resume_path else None)
        docs = key_help()
        writer.add_text("config", "|key|value|doc|\n|-|-|-|\n" + "\n".join(
            f"|{k}|{v}|{docs[k]}|" for k, v in asdict(args).items()) + f"\n\nrules: {rules.to_dict()}", global_step)
        print(f"run {run_path}: {num_iterations} updates x {steps_per_iteration:,} steps, {world_size} process(es), "
              f"device {device}, opponents {args.opponent_mix}", flush=True)

    def checkpoint_dict(iteration: int) -> dict:  # the run after this update, resumable
        return training_checkpoint(
            network=network, optimizer=optimizer, config=asdict(args), rules=rules, global_step=global_step,
            iteration=iteration, last_eval=last_eval, world_size=world_size, best_metric=best_metric, elapsed=elapsed(),
            game=game, storage=storage, opponents=opponents, ep_points=ep_points, next_obs=next_obs, next_mask=next_mask,
            next_player=next_player, shuffle_rng=shuffle_rng)

    def run_eval(iteration: int) -> None:  # a new best result is saved as best.pt
        nonlocal best_metric, last_eval
        t0 = time.time()
        last_eval = evaluate_policy(network, args, rules, device)
        report_eval(last_eval, writer, global_step, int(elapsed()), time.time() - t0, log)
        metric = last_eval[args.best_metric_opponent]["points_per_hand"]
        if metric > best_metric:
            best_metric = metric
            save_checkpoint(os.path.join(run_path, "best.pt"), checkpoint_dict(iteration))

    bar = None
    if is_main and (sys.stderr.isatty() if args.progress_bar is None else args.progress_bar):
        from tqdm import tqdm
        bar = tqdm(total=num_iterations * steps_per_iteration, initial=global_step, unit="step", unit_scale=True,
                   smoothing=0.1, dynamic_ncols=True)
        log = bar.write  # lines print above the bar

    if is_main and not resume_path and (args.bc_agent or args.init_from) and args.eval_every:
        run_eval(0)  # the starting point is a candidate for best.pt: PPO must beat it to replace it

    start_time, start_step = time.time(), global_step
    iteration = start_iteration - 1
    for iteration in range(start_iteration, num_iterations + 1):
        # Annealing the rate if instructed to do so.
        if args.anneal_lr:
            frac = 1.0 - (iteration - 1.0) / num_iterations
            optimizer.param_groups[0]["lr"] = frac * args.learning_rate

        # ALGO LOGIC: rollout -- one decision per game per step, learner decisions stored per player
        ep_returns: dict[str, list] = {}
        for step in range(args.num_steps):
            global_step += args.num_envs * world_size
            row = CARRY + step
            learner_turn = opponents.learner_turn(next_player)
            actions = np.zeros(args.num_envs, np.int64)
            envs = np.flatnonzero(learner_turn)
            if len(envs):
                net_in = network_input(next_obs[envs], args.features)  # computed once: stored for the update
                obs_t = torch.from_numpy(net_in).to(device)
                mask_t = torch.from_numpy(next_mask[envs]).to(device)
                priv = privileged_inputs(game.state, envs, next_player[envs]) if args.oracle_critic else None
                with torch.inference_mode():
                    action, logprob, _, value = network.get_action_and_value(
                        obs_t, mask_t, entropy=False, privileged=None if priv is None else torch.from_numpy(priv).to(device))
                a_np = action.cpu().numpy()
                actions[envs] = a_np
                phi = potential(next_obs[envs], args.deadwood_shaping, args.reward_scale) \
                    if args.deadwood_shaping else 0.0
                storage.add(row, envs, next_player[envs], net_in, next_mask[envs], a_np,
                            logprob.cpu().numpy(), value.cpu().numpy(), phi, priv)
            opponents.act(np.flatnonzero(~learner_turn), next_obs, next_mask, args.features, actions)

            # TRY NOT TO MODIFY: execute the game and log data.
            out = game.step(actions)
            ended = out.terminated | out.truncated
            storage.credit(out.rewards * args.reward_scale, ended)
            ep_points += out.rewards
            if ended.any():
                fin = np.flatnonzero(ended)
                opponents.record(fin, ep_points, ep_returns)
                ep_points[fin] = 0.0
                opponents.assign(fin)
            next_obs, next_mask = out.observation, out.legal_action_mask
            next_player = out.current_player.astype(np.int64)

        # bootstrap value per player: GAE along each player's own chain of decisions
        b_adv, b_ret, trainable = per_player_gae(storage.rewards, storage.values, storage.dones, storage.next_row,
                                                 storage.valid, args.gamma, args.gae_lambda, storage.potentials)

        # flatten the batch
        b_obs = torch.from_numpy(storage.obs[trainable]).to(device)
        b_masks = torch.from_numpy(storage.masks[trainable]).to(device)
        b_actions = torch.from_numpy(storage.actions[trainable]).to(device)
        b_logprobs = torch.from_numpy(storage.logprobs[trainable]).to(device)
        b_advantages = torch.from_numpy(b_adv[trainable]).to(device)
        b_returns = torch.from_numpy(b_ret[trainable]).to(device)
        b_values = torch.from_numpy(storage.values[trainable]).to(device)
        b_privileged = torch.from_numpy(storage.privileged[trainable]).to(device) if args.oracle_critic else None
        storage.carry_over()  # pending decisions wait for their successor in the next rollout

        # Optimizing the policy and value network
        batch_size = len(b_obs)
        batch = dict(obs=b_obs, masks=b_masks, actions=b_actions, logprobs=b_logprobs, advantages=b_advantages,
                     returns=b_returns, values=b_values)
        if b_privileged is not None:
            batch["privileged"] = b_privileged
        stats = ppo_update(network, optimizer, batch, args, shuffle_rng, world_size)

        y_pred, y_true = b_values.cpu().numpy(), b_returns.cpu().numpy()
        var_y = np.var(y_true)
        explained_var = np.nan if var_y == 0 else 1 - np.var(y_true - y_pred) / var_y

        # opponent pool: snapshots on schedule, or when the learner beats the pool by a margin
        if world_size > 1:
            t = torch.tensor([opponents.pool_points, float(opponents.pool_hands)], dtype=torch.float64)
            dist.all_reduce(t)
            total_pool_points, total_pool_hands = float(t[0]), int(t[1])
        else:
            total_pool_points, total_pool_hands = opponents.pool_points, opponents.pool_hands
        beats_pool = (args.snapshot_margin > 0 and total_pool_hands >= args.snapshot_min_hands
                      and total_pool_points / total_pool_hands >= args.snapshot_margin)
        if opponents.uses_snapshots and ((args.snapshot_every and iteration % args.snapshot_every == 0) or beats_pool
                                         or not opponents.pool):
            opponents.add_snapshot(network, iteration)

        if is_main:
            sps = int((global_step - start_step) / (time.time() - start_time))
            writer.add_scalar("charts/learning_rate", optimizer.param_groups[0]["lr"], global_step)
            writer.add_scalar("charts/SPS", sps, global_step)
            writer.add_scalar("charts/learner_decisions", batch_size, global_step)
            writer.add_scalar("charts/pool_size", len(opponents.pool), global_step)
            all_returns = [x for v in ep_returns.values() for x in v]
            if all_returns:
                writer.add_scalar("charts/episodic_return", float(np.mean(all_returns)), global_step)
            for kind, v in ep_returns.items():
                writer.add_scalar(f"charts/points_per_hand_vs_{kind}", float(np.mean(v)), global_step)
            for key in ("policy_loss", "value_loss", "entropy", "old_approx_kl", "approx_kl", "clipfrac"):
                writer.add_scalar(f"losses/{key}", stats[key], global_step)
            writer.add_scalar("losses/explained_variance", explained_var, global_step)
            if bar is not None:
                bar.update(steps_per_iteration)
                bar.set_postfix_str(f"SPS {sps:,} | last eval " + (" ".join(
                    f"{short_name(s)} {r['points_per_hand']:+.2f}" for s, r in last_eval.items()) or "-"))
            elif iteration % args.log_every == 0 or iteration == num_iterations:
                vs = " ".join(f"{k} {np.mean(v):+.1f}" for k, v in sorted(ep_returns.items()))
                ev = " ".join(f"{short_name(s)} {r['points_per_hand']:+.2f}" for s, r in last_eval.items())
                print(f"update {iteration}/{num_iterations} step {global_step:,} SPS {sps:,} | rollout pts/hand {vs or '-'} "
                      f"| ent {stats['entropy']:.2f} kl {stats['approx_kl']:.4f} ev {explained_var:.2f} "
                      f"| pool {len(opponents.pool)} | last eval {ev or '-'}", flush=True)
            if args.eval_every and iteration % args.eval_every == 0 and iteration != num_iterations:
                run_eval(iteration)
            if args.checkpoint_every and iteration % args.checkpoint_every == 0:
                save_checkpoint(os.path.join(run_path, "checkpoint.pt"), checkpoint_dict(iteration))

    if is_main:
        if iteration >= start_iteration:  # final evaluation and checkpoint
            run_eval(iteration)
            save_checkpoint(os.path.join(run_path, "checkpoint.pt"), checkpoint_dict(iteration))
        if bar is not None:
            bar.close()
        writer.close()
        log(f"done: {global_step:,} steps in {time.time() - start_time:.0f}s ({elapsed():.0f}s in all); "
            f"checkpoint {run_path}/checkpoint.pt, best {run_path}/best.pt")
    if world_size > 1:
        # the other ranks wait here for rank 0's final evaluation and checkpoint: a rank that tears down
        # gloo while its peer still holds the connection can abort the whole job
        dist.barrier()
        dist.destroy_process_group()
    return {"run_path": run_path, "global_step": global_step, "eval": last_eval}


def cli() -> None:
    """The ``okgin-train`` command (and ``python train.py``): ``main`` with one-line errors."""
    try:
        main()
    except (ValueError, FileNotFoundError) as e:
        if os.environ.get("OKGIN_TRACEBACK"):
            raise
        sys.exit(f"error: {e}")


if __name__ == "__main__":
    cli()
