"""The training config: every key with its default and help (``Args``), reading it from YAML and
``--set key=value`` (``parse_cli``), and checking it with one-line errors that say what was read
and what is allowed (``args_from_dict``).

A config is a YAML mapping whose keys are ``Args`` fields; ``okgin/train.py`` runs it. Errors name
the key at fault: a value YAML read differently than meant (``{expert:1.0}`` is a key without a
value) says what it was read as and the form expected, a bad agent spec is that key's problem with
the valid specs, and a misspelt key or spec gets the closest valid name.
"""

from __future__ import annotations

import argparse
import copy
import difflib
import os
import typing
from dataclasses import dataclass, field, fields

import yaml
from okgin_agents.ppo import FEATURES, load_checkpoint

from okgin_env.agent_specs import make_agent, registered_specs
from okgin_env.game.rules import Rules

#: opponent_mix's own opponents besides agent specs
MIX_KINDS = ("self", "snapshot")

#: config keys ``--set`` may change on resume; anything else would make the run a different run
RESUME_OVERRIDABLE = ("total_timesteps", "device", "num_threads", "log_every", "progress_bar")


def resume_config(path: str, overrides: dict) -> dict:
    """The config of the run saved in checkpoint ``path`` with ``overrides`` applied.

    ValueError when ``path`` is an exported agent (no training state) or an override changes a key
    outside ``RESUME_OVERRIDABLE``; FileNotFoundError / ValueError from ``load_checkpoint`` otherwise.
    """
    ckpt = load_checkpoint(path)
    if "train_state" not in ckpt:
        raise ValueError(f"{path} is an exported agent without training state; cannot resume it")
    changed = sorted(set(overrides) - set(RESUME_OVERRIDABLE))
    if changed:
        raise ValueError(f"--resume keeps the run's config; only {', '.join(RESUME_OVERRIDABLE)} may be "
                         f"changed (got {', '.join(changed)})")
    return {**ckpt["args"], **overrides}


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
    rules: dict = arg({}, "rule options of the training games (okgin_env.Rules keys; {} = Oklahoma defaults; "
                          "a rule set's name such as eaai stands for its options)")
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
        "network input: raw (the observation), meld (plus meld features computed from it, "
        "okgin_env.features.learner.meld_features) or outs (plus the expert's reading of the table: outs, danger, the "
        "opponent's likely cards, okgin_env.features.learner.outs_features); init_from may start an outs network from a "
        "meld one")
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


def key_help() -> dict[str, str]:
    """Config key -> its help text, for every field of ``Args``."""
    return {f.name: f.metadata["help"] for f in fields(Args)}


def did_you_mean(name: str, valid) -> str:
    """`` (did you mean X?)`` for the valid name closest to a misspelt ``name``, or ''."""
    close = difflib.get_close_matches(str(name).strip().lower(), list(valid), n=1, cutoff=0.6)
    return f" (did you mean {close[0]}?)" if close else ""


# ------------------------------------------------------------------- value types
_EXAMPLES = {"hidden_sizes": "[256, 256]", "eval_opponents": "[random, simple, expert]",
             "opponent_mix": "{self: 0.5, expert: 0.5}", "rules": "{knock_limit: 10}"}


def _expected(key: str, tp) -> str:
    """How a value of field type ``tp`` is written, e.g. 'a list of integers, e.g. [256, 256]'."""
    origin, targs = typing.get_origin(tp), typing.get_args(tp)
    example = f", e.g. {_EXAMPLES[key]}" if key in _EXAMPLES else ""
    if origin is typing.Union:  # Optional[X]
        return "null or " + _expected(key, next(a for a in targs if a is not type(None)))
    if tp is bool:
        return "true/false"
    if tp is int:
        return "an integer"
    if tp is float:
        return "a number (e.g. 0.5 or 3e-4)"
    if tp is str:
        return "a string"
    if origin is list:
        return f"a list of {'integers' if targs[0] is int else 'strings'}{example}"
    if origin is dict:
        return f"a mapping of names to numbers{example}"
    if tp is dict:
        return f"a mapping{example}"
    return getattr(tp, "__name__", str(tp))


class _Mismatch(Exception):
    """A value that does not have its field's type (``check_value`` words the error)."""


def _convert(value, tp):
    """``value`` as field type ``tp`` (ints are numbers, YAML 1.1's text '3e-4' is a number); _Mismatch otherwise."""
    origin, targs = typing.get_origin(tp), typing.get_args(tp)
    if origin is typing.Union:  # Optional[X]
        return None if value is None else _convert(value, next(a for a in targs if a is not type(None)))
    if tp is bool:
        if not isinstance(value, bool):
            raise _Mismatch
        return value
    if tp is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise _Mismatch
        return value
    if tp is float:
        if isinstance(value, str):  # YAML 1.1 reads 3e-4 (no dot) as a string
            try:
                value = float(value)
            except ValueError:
                pass
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise _Mismatch
        return float(value)
    if tp is str:
        if not isinstance(value, str):
            raise _Mismatch
        return value
    if origin is list:
        if not isinstance(value, (list, tuple)):
            raise _Mismatch
        return [_convert(v, targs[0]) for v in value]
    if tp is dict or origin is dict:
        if not isinstance(value, dict):
            raise _Mismatch
        return {str(k): (_convert(v, targs[1]) if targs else v) for k, v in value.items()}
    raise _Mismatch


def _colon_hint(value) -> str:
    """YAML reads {expert:1.0} (no space after the colon) as the key 'expert:1.0' without a value: say so, or ''."""
    empty = [k for k, v in value.items() if v is None and ":" in str(k)] if isinstance(value, dict) else []
    if not empty:
        return ""
    head, _, tail = str(empty[0]).rpartition(":")
    return f" (YAML read {str(empty[0])!r} as a key without a value: write a space after the colon, {head}: {tail})"


def check_value(key: str, value, tp, read_from: str = ""):
    """``value`` converted to the field type ``tp``; else a ValueError naming the key, the value and the form
    expected. ``read_from``: the text YAML read ``value`` from (``--set key=TEXT``), named in the error."""
    try:
        return _convert(value, tp)
    except _Mismatch:
        pass
    hint = _colon_hint(value)
    if read_from:
        raise ValueError(f"--set {key}={read_from}: YAML read the value as {value!r}, which is not "
                         f"{_expected(key, tp)}{hint}")
    raise ValueError(f"config key {key!r}: {value!r} is not {_expected(key, tp)}{hint}")


# ----------------------------------------------------------------------- checking
def _named_rules(name: str) -> dict:
    """The options of the rule set called ``name`` (``eaai``); else a ValueError naming the sets."""
    try:
        return Rules.named(name).to_dict()
    except ValueError as e:
        raise ValueError(f"config key 'rules': {e}") from None


def args_from_dict(d: dict) -> Args:
    """Build ``Args`` from a mapping of config keys; unknown keys and bad values raise a one-line ValueError."""
    hints = typing.get_type_hints(Args)
    if isinstance(d.get("rules"), str):  # a rule set's name ("rules: eaai") stands for its options
        d = {**d, "rules": _named_rules(d["rules"])}
    unknown = sorted(map(str, set(d) - set(hints)))
    if unknown:
        named = ", ".join(k + did_you_mean(k, hints) for k in unknown)
        raise ValueError(f"unknown config key(s) {named}; valid keys: {', '.join(hints)}")
    args = Args(**{k: check_value(k, v, hints[k]) for k, v in d.items()})
    validate_args(args)
    return args


def spec_names() -> list[str]:
    """The names of the registered agents (``ppo`` of ``ppo:PATH``), for suggestions."""
    return [s.split(":")[0].split("[")[0] for s in registered_specs()[:-1]]


def short_name(spec: str) -> str:
    """How the training log and its TensorBoard tags (``eval/points_per_hand_vs_<name>``) name an agent:
    a ``ppo:PATH`` agent by its file name, any other by its spec."""
    return os.path.basename(spec) if spec.startswith("ppo:") else spec


def check_agent_spec(key: str, spec: str, extra: tuple[str, ...] = ()) -> None:
    """A ValueError naming config key ``key`` when ``spec`` builds no agent (``extra``: other names that key takes)."""
    try:
        make_agent(spec, seed=0)
    except (ValueError, FileNotFoundError) as e:
        also = f" ({', '.join(extra)} or an agent spec)" if extra else ""
        raise ValueError(f"config key {key!r}{also}: {e}{did_you_mean(spec, [*extra, *spec_names()])}") from None


def validate_args(args: Args) -> None:
    """Range checks and agent specs, with messages that say what is allowed."""
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
    try:
        Rules.from_dict(args.rules)  # names the bad rule option itself
    except ValueError as e:
        raise ValueError(f"config key 'rules': {e}{_colon_hint(args.rules)}") from None
    mix = args.opponent_mix
    need(len(mix) > 0 and all(v >= 0 for v in mix.values()) and sum(mix.values()) > 0, "opponent_mix",
         "a mapping of opponent -> share >= 0 with a positive sum")
    need(not (set(mix) <= {"snapshot"}), "opponent_mix", "at least one opponent other than snapshot")
    need(not args.init_from.startswith("ppo:"), "init_from",
         f"a checkpoint path, not an agent spec (init_from={args.init_from[4:]})")
    # agents are any spec okgin_env.agent_specs resolves (bundled bots, ppo:PATH, module:Attr): build each once now,
    # so a typo fails at startup, as its key's problem with the valid specs, rather than after the warm start
    if args.bc_agent:
        check_agent_spec("bc_agent", args.bc_agent)
    for spec in args.eval_opponents:
        check_agent_spec("eval_opponents", spec)
    for spec in mix:
        if spec not in MIX_KINDS:
            check_agent_spec("opponent_mix", spec, extra=MIX_KINDS)
    if args.best_metric_opponent not in args.eval_opponents:
        raise ValueError(f"config key 'best_metric_opponent': {args.best_metric_opponent!r} must be one of "
                         f"eval_opponents ({', '.join(args.eval_opponents)}): set it to one of them, or add it to "
                         f"eval_opponents{did_you_mean(args.best_metric_opponent, args.eval_opponents)}")


# ----------------------------------------------------------------- command line
def parse_cli(argv: list[str] | None, *, description: str, default_config: str) -> tuple[Args, str | None]:
    """(args, resume path) from the command line; configs are YAML files whose keys are Args fields.

    ``--set key=value`` values are YAML; one read differently than meant says what it was read as."""
    defaults = Args()
    epilog = "config keys (YAML keys of --config, and --set key=value):\n" + "\n".join(
        f"  {key} (default {getattr(defaults, key)!r}): {text}" for key, text in key_help().items())
    parser = argparse.ArgumentParser(description=description, epilog=epilog,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    shown = os.path.relpath(default_config) if os.path.abspath(default_config).startswith(os.getcwd() + os.sep) \
        else default_config
    parser.add_argument("--config", default=None, help=f"YAML config (default: the quick config, {shown})")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="override one config key (YAML value syntax); repeatable")
    parser.add_argument("--seed", type=int, default=None, help="shortcut for --set seed=N")
    parser.add_argument("--device", default=None, help="shortcut for --set device=cpu|cuda|auto")
    parser.add_argument("--total-timesteps", type=int, default=None, help="shortcut for --set total_timesteps=N")
    parser.add_argument("--resume", default=None, metavar="CHECKPOINT",
                        help="continue the run of this checkpoint.pt (its config; --set may change only "
                             + ", ".join(RESUME_OVERRIDABLE) + ")")
    ns = parser.parse_args(argv)
    overrides = parse_overrides(ns.set)
    for key, val in (("seed", ns.seed), ("device", ns.device), ("total_timesteps", ns.total_timesteps)):
        if val is not None:
            overrides[key] = val
    if ns.resume:
        if ns.config:
            raise ValueError("--resume continues a run with its own config; do not pass --config with it")
        return args_from_dict(resume_config(ns.resume, overrides)), ns.resume
    path = ns.config or default_config
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


def parse_overrides(items: list[str]) -> dict:
    """``--set key=value`` items as {key: YAML value}; a value of the wrong type says how YAML read the text."""
    hints = typing.get_type_hints(Args)
    overrides: dict = {}
    for item in items:
        if "=" not in item:
            raise ValueError(f"--set {item!r} must look like key=value; valid keys: {', '.join(hints)}")
        key, text = (s.strip() for s in item.split("=", 1))
        try:
            value = yaml.safe_load(text) if text else ""
        except yaml.YAMLError as e:
            raise ValueError(f"--set {key}: cannot parse {text!r}: {' '.join(str(e).split())}") from None
        if key == "rules" and isinstance(value, str) and value:  # a rule set's name, as in a config file
            value = _named_rules(value)
        if key in hints:  # unknown keys are reported together (with suggestions) by args_from_dict
            value = check_value(key, value, hints[key], read_from=text)
        overrides[key] = value
    return overrides
