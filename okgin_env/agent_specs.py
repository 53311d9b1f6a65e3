"""Agents and agent specs: the one ``Agent`` protocol, the one registry of names, the one ``make_agent``.

An *agent* is any object with the batched ``act(observations (B, OBS_SIZE), action_masks (B, 107))
-> (B,) int64`` surface (:class:`Agent`). A *spec* names one:

* ``"random"``: uniformly random legal actions (:class:`RandomAgent`, the one random agent, built in
  here because it needs nothing but the mask);
* ``"NAME"`` or ``"NAME:ARG"``: an agent registered with :func:`register_agent` (the bundled bots
  ``greedy``, ``simple``, ``expert``, ``ppo:PATH``, ``search[:K[:PATH]]`` are registered by the
  ``okgin_agents`` package, the checkout's ``agents/`` folder);
* ``"module.path:Attr"``: a user's class or factory, imported and called as ``Attr(seed=seed)``.

An agent may set ``uses_observations = False`` when it reads only the masks: an env may then
pass it all-zero observations (the vector env does, and skips writing those views).

Layering: ``okgin_env`` never imports ``okgin_agents``. Names it does not know are looked up in the
``okgin.agents`` entry-point group (``pyproject.toml`` points it at the ``okgin_agents`` package, whose
import registers the bundled bots); any installed package can add agents the same way. A
registered name wins over a module of the same name.

One answer per name, whatever was imported first: a name is registered once (registering it again
with another factory is an error), so ``make_agent("simple")`` gives the same class before and after
``import okgin_agents`` and whichever package's entry point loads first.
"""

from __future__ import annotations

import copy
import importlib
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Protocol, runtime_checkable

import numpy as np

from okgin_env.game.actions import NUM_ACTIONS, action_text, legal_listing
from okgin_env.game.rules import Rules

ENTRY_POINT_GROUP = "okgin.agents"


@runtime_checkable
class Agent(Protocol):
    """What every agent is: ``act(observations, action_masks) -> actions``, batched and stateless.

    ``observations`` (B, OBS_SIZE) float32 and ``action_masks`` (B, 107) bool give one legal action
    per row, a (B,) int64 array; rows may come from different games, seats and moments. A row
    without any legal action (a finished game, whose action ``VectorGame.step`` ignores) may get any
    id. Optional attributes: ``name`` (a display name, :func:`agent_name`), ``uses_observations``
    (False: it reads only the masks) and ``rules`` (a ``Rules`` the agent simulates, :func:`for_rules`).
    """

    def act(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        """(B, OBS_SIZE) observations and (B, 107) masks -> (B,) int64 legal actions."""
        ...


class RandomAgent:
    """Uniformly random legal actions from a seeded generator: the ``"random"`` agent.

    Defined here, once, so that the env resolves ``"random"`` without the bots and ``okgin_agents``
    hands out this same class (its ``RandomAgent``). Its draws are ``random_legal_actions`` from
    ``np.random.default_rng(seed)``: seeded results recorded with it stay as they are.
    """

    name = "random"
    uses_observations = False  #: it reads only the masks (an env may pass it all-zero observations)

    def __init__(self, seed: int | np.random.SeedSequence | None = None) -> None:
        self.rng = np.random.default_rng(seed)

    def act(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        """A uniformly random legal action per row of ``action_masks`` ((B, 107), or one row (107,))."""
        from okgin_env.game.core import random_legal_actions  # numba kernels load with the core, not with this module

        mask = np.asarray(action_masks, bool)
        if mask.shape[-1:] != (NUM_ACTIONS,) or mask.ndim > 2:
            raise ValueError(f"action_masks must have shape (B, {NUM_ACTIONS}) or ({NUM_ACTIONS},), got {mask.shape}")
        if mask.ndim == 1:
            return random_legal_actions(mask[None], self.rng)[0]
        return random_legal_actions(mask, self.rng)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r}>"


@dataclass(frozen=True)
class AgentEntry:
    """How a registered name is built: ``factory(arg, seed)``; ``arg`` is the text after ``NAME:``."""

    factory: Callable[[str | None, int | None], Any]
    usage: str  #: how the spec is written, e.g. "ppo:PATH" or "search[:K[:PATH]]"
    needs_arg: bool = False
    origin: str = ""  #: the module that registered it (said when another module tries the same name)


_REGISTRY: dict[str, AgentEntry] = {
    "random": AgentEntry(lambda arg, seed: RandomAgent(seed), "random", origin=__name__),
}
_ENTRY_POINTS_LOADED = False


def register_agent(name: str, factory: Callable[[str | None, int | None], Any], usage: str | None = None,
                   needs_arg: bool = False) -> None:
    """Make ``name`` (and ``name:ARG``) a spec: ``factory(arg, seed)`` returns the agent. ``arg`` is
    None for the bare name and the (stripped) text after the colon otherwise, "" for ``name:``.

    A name is registered once: registering it again from another module is a ``ValueError`` (a
    replacement would make the answer depend on which package was imported first). The same module
    registering it again (a reload) replaces its own entry.
    """
    key = name.strip().lower() if isinstance(name, str) else ""
    if not key or ":" in key:
        raise ValueError(f"agent name must be a non-empty word without ':', got {name!r}")
    origin = getattr(factory, "__module__", None) or ""
    held = _REGISTRY.get(key)
    if held is not None and held.origin != origin:
        raise ValueError(f"agent name {key!r} is already registered by {held.origin or 'another module'}; "
                         f"{origin or 'this factory'} must register its agent under another name")
    _REGISTRY[key] = AgentEntry(factory, usage or name, needs_arg, origin)


def _load_entry_points() -> None:
    """Import every package that registers agents through the ``okgin.agents`` entry points (once)."""
    global _ENTRY_POINTS_LOADED
    if _ENTRY_POINTS_LOADED:
        return
    _ENTRY_POINTS_LOADED = True
    from importlib.metadata import entry_points

    for ep in entry_points(group=ENTRY_POINT_GROUP):
        ep.load()


def registered_specs() -> tuple[str, ...]:
    """How each known spec is written (after loading the entry points), plus the plug-in form."""
    _load_entry_points()
    return (*(e.usage for e in _REGISTRY.values()), "module:Attr")


def is_registered(name: str) -> bool:
    """Whether ``name`` (case-insensitive, the part of a spec before any ':') is a registered agent."""
    return _lookup(name.partition(":")[0]) is not None


def _lookup(name: str) -> AgentEntry | None:
    key = name.strip().lower()
    if key not in _REGISTRY:
        _load_entry_points()
    return _REGISTRY.get(key)


def make_agent(spec: str, seed: int | None = None, rules: Rules | None = None) -> Agent:
    """The agent a spec names (see the module docstring); ``seed`` seeds randomised agents.

    ``rules``: the rules of the games it will play (default: the agent's own, ``Rules()``). Only an
    agent that simulates the game itself (``search``) reads them; see :func:`for_rules`.
    A bad spec raises ``ValueError`` in one line: what was wrong and which specs are valid.
    """
    if not isinstance(spec, str) or not spec.strip():
        raise ValueError(f"agent spec must be a non-empty string, one of: {', '.join(registered_specs())}; "
                         f"got {spec!r}")
    text = spec.strip()
    head, sep, arg = text.partition(":")
    entry = _lookup(head)
    if entry is not None:
        arg = arg.strip() if sep else None
        if entry.needs_arg and not arg:
            raise ValueError(f"agent spec {entry.usage!r} needs a value after '{head}:' (got {spec!r})")
        agent = entry.factory(arg, seed)  # None without a colon; "" for "name:" (the factory says what is missing)
    elif sep:
        agent = _plugin(text, head.strip(), arg.strip(), seed)
    else:
        raise ValueError(f"unknown agent spec {spec!r}; valid specs: {', '.join(registered_specs())}")
    if not callable(getattr(agent, "act", None)):
        raise ValueError(f"agent spec {spec!r} gave {agent!r}, which has no act(observations, action_masks) method")
    return agent if rules is None else for_rules(agent, rules)


def for_rules(agent: Agent, rules: Rules) -> Agent:
    """``agent`` playing games under ``rules``.

    An agent that simulates the game to choose its moves (the search bot, or any agent with a ``rules``
    attribute holding a ``Rules``) must simulate the rules it plays under, or it plans for another
    game: such an agent is returned as a shallow copy with ``rules`` replaced. Every other agent reads
    only its observation and mask and is returned as it is.
    """
    if not isinstance(rules, Rules):
        raise TypeError(f"rules must be an okgin_env.Rules, got {type(rules).__name__}")
    current = getattr(agent, "rules", None)
    if not isinstance(current, Rules) or current == rules:
        return agent
    twin = copy.copy(agent)
    twin.rules = rules
    return twin


def _plugin(spec: str, module_name: str, attr: str, seed: int | None) -> Any:
    """``module:Attr`` -> ``Attr(seed=seed)`` (Attr may be dotted: ``module:Class.factory``)."""
    if not module_name or not attr:
        raise ValueError(f"agent spec {spec!r}: a plug-in agent is written 'module:Attr' "
                         f"(e.g. mybots:MyBot); valid specs: {', '.join(registered_specs())}")
    try:
        obj: Any = _import_from_cwd_too(module_name)
    except ImportError as e:
        raise ValueError(f"agent spec {spec!r}: cannot import module {module_name!r} ({e}); "
                         f"it is neither a registered agent ({', '.join(registered_specs()[:-1])}) "
                         "nor an importable module") from None
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise ValueError(f"agent spec {spec!r}: {getattr(obj, '__name__', obj)!s} has no attribute {part!r}")
        obj = getattr(obj, part)
    if not callable(obj):
        raise ValueError(f"agent spec {spec!r}: {attr} is not a class or factory (it is {type(obj).__name__})")
    try:
        return obj(seed=seed)
    except TypeError as e:
        raise ValueError(f"agent spec {spec!r}: {attr}(seed=...) failed ({e}); a plug-in agent's class or "
                         "factory must take a seed keyword argument") from None


def saved_file(path: str | os.PathLike | None, env_var: str, default: str | os.PathLike, script: str) -> Path:
    """Where a plug-in agent's saved model is: ``path`` when given, else ``$env_var``, else ``default``; a
    ``FileNotFoundError`` naming the script that saves it and the variable when nothing is there."""
    where = Path(path or os.environ.get(env_var) or default)
    if not where.exists():
        raise FileNotFoundError(f"no trained model at {str(where)!r}: run {script} first, or set {env_var} "
                                "to what it saved")
    return where


def unreadable_file_error(path: str | os.PathLike, what: str, error: BaseException) -> ValueError:
    """The one-line error of a plug-in agent whose saved file at ``path`` is not ``what`` (e.g. "a policy
    saved by examples/tianshou_ppo.py"): the file, what it should be, and the first sentence of the reader's
    own error (torch's and the RL libraries' run to paragraphs, some with advice that does not apply)."""
    reason = (str(error).strip().splitlines() or [""])[0].split(". ")[0]
    return ValueError(f"{os.fspath(path)!r} is not {what} ({type(error).__name__}: {reason})")


# ----------------------------------------------------------------- checking an agent's output

class AgentOutputError(ValueError):
    """An agent returned something that is not a legal action per row (see :func:`checked_actions`);
    scripts catch it to print their one-line error."""


def _describe(value: Any) -> str:
    """A short account of what an agent returned, for error messages: type, dtype/shape, a short repr."""
    if value is None:
        return "None"
    if isinstance(value, np.ndarray):
        text = np.array2string(value.ravel()[:6], separator=", ", threshold=6, max_line_width=10_000)
        more = ", ..." if value.size > 6 else ""
        article = "an" if value.dtype.name[0] in "aeiou" else "a"
        return f"{article} {value.dtype} array of shape {value.shape}: {text[:-1]}{more}]"
    text = repr(value)
    return f"{type(value).__name__} {text if len(text) <= 60 else text[:57] + '...'}"


def checked_actions(actions: Any, masks: np.ndarray, name: str, role: str = "agent",
                    games: np.ndarray | None = None, check_legal: bool = True) -> np.ndarray:
    """An agent's output for ``masks`` (B, NUM_ACTIONS) as a (B,) int64 array, checked once for
    every consumer (evaluate, the learner envs, play, the trainer's opponents).

    Accepted: a 1-D integer array (or list) of length B, or integral values of another numeric
    dtype (3.0). Anything else (None, 106.4, shape (B, 1), another length, strings, bools) is a
    one-line ``AgentOutputError`` (a ``ValueError``) naming the ``role`` and ``name`` ("the opponent
    'mybots:BadBot'") and what it returned. With ``check_legal`` an out-of-range or illegal action
    is one too, naming the agent, the game (``games[j]`` for row j, default j) and the legal
    actions. No Python loop over rows: an int64 array of the right shape costs a range test and
    one gather (~13 us for 1024 rows, ~2 us for one).
    """
    masks = np.asarray(masks)
    b, n = masks.shape[0], masks.shape[-1]
    a = actions
    if not (type(a) is np.ndarray and a.dtype == np.int64 and a.shape == (b,)):  # the fast path skips all this
        try:
            arr = a if isinstance(a, np.ndarray) else np.asarray(a)
        except Exception:  # noqa: BLE001 - ragged lists and odd objects: reported below as returned
            arr = None
        kind = None if arr is None else arr.dtype.kind
        if arr is None or arr.shape != (b,) or kind not in "iuf":
            raise AgentOutputError(f"the {role} {name!r} returned {_describe(a)}; an agent's act(observations, "
                             f"action_masks) must return a 1-D integer array of length {b} (an action per row)")
        if kind == "f":
            whole = np.isfinite(arr) & (arr == np.round(arr))
            if not whole.all():
                j = int(np.argmin(whole))
                raise AgentOutputError(f"the {role} {name!r} returned the non-integral action {float(arr[j])!r} "
                                 f"({_describe(a)}); actions are integers 0-{n - 1}")
            outside = (arr < 0) | (arr >= n)
            if check_legal and outside.any():  # before the cast, which could wrap huge values into range
                raise illegal_action_error(name, arr, masks, int(np.argmax(outside)), role, games)
            arr = np.clip(arr, -1, n)
        elif kind == "u":
            arr = np.minimum(arr, n)  # uint64 values above 2**63 would wrap to negatives in the cast
        a = arr.astype(np.int64)
    if check_legal and b == 1:  # one game (the single-agent env, play): plain indexing is cheapest
        a0 = int(a[0])
        if not (0 <= a0 < n and masks[0, a0]):
            raise illegal_action_error(name, a, masks, 0, role, games)
    elif check_legal and b:
        if masks.dtype == np.bool_ and masks.flags.c_contiguous and a.flags.c_contiguous:  # VectorGame's masks
            bad = _first_illegal_row()(a, masks)  # one pass in a kernel: ~1 us for 1024 rows
            if bad >= 0:
                raise illegal_action_error(name, a, masks, bad, role, games)
        # others: range first (min/max), then one gather from the flat masks: ~13 us for 1024 rows
        elif int(a.min()) < 0 or int(a.max()) >= n or not masks.reshape(-1)[np.arange(0, b * n, n) + a].all():
            ok = masks[np.arange(b), np.clip(a, 0, n - 1)] & (a >= 0) & (a < n)
            raise illegal_action_error(name, a, masks, int(np.argmin(ok)), role, games)
    return a


def _first_illegal_row() -> Callable[[np.ndarray, np.ndarray], int]:
    """``game.core.first_illegal_row``, imported at the first batched check: numba loads with the core,
    not with this module."""
    global _FIRST_ILLEGAL_ROW
    if _FIRST_ILLEGAL_ROW is None:
        from okgin_env.game.core import first_illegal_row

        _FIRST_ILLEGAL_ROW = first_illegal_row
    return _FIRST_ILLEGAL_ROW


_FIRST_ILLEGAL_ROW: Callable[[np.ndarray, np.ndarray], int] | None = None


def illegal_action_error(name: str, actions: np.ndarray, masks: np.ndarray, row: int, role: str = "agent",
                         games: np.ndarray | None = None) -> AgentOutputError:
    """The error for agent ``name``'s illegal ``actions[row]`` (named in game ``games[row]``, default ``row``)."""
    action = int(actions[row])
    n = masks.shape[-1]
    what = action_text(action) if 0 <= action < n else f"out of range 0-{n - 1}"
    if games is None and len(masks) == 1:  # one game (single-agent env, play): no number to give
        where = ""
    else:
        where = f" in game {row if games is None else int(games[row])}"
    return AgentOutputError(f"the {role} {name!r} chose the illegal action {action} ({what}){where}; "
                      f"legal: {legal_listing(masks[row])}")


def _import_from_cwd_too(module_name: str) -> Any:
    """``import_module``, retried with the current directory on ``sys.path`` when the module is not
    found and the directory is not there: ``python -m evaluate`` puts the cwd first on the path, but
    ``python /path/to/evaluate.py`` and console scripts (``okgin-evaluate``) put the script's folder
    there instead, and a user's ``mybots.py`` beside them should import the same way. The cwd is
    appended, not prepended, so it never shadows an installed module imported later."""
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as e:
        cwd = os.getcwd()
        on_path = {os.path.abspath(p or os.curdir) for p in sys.path if isinstance(p, str)}
        if e.name != module_name.split(".")[0] or cwd in on_path:
            raise  # a missing dependency inside the module, or the cwd was searched already
        sys.path.append(cwd)
        importlib.invalidate_caches()
        try:
            return importlib.import_module(module_name)
        except ModuleNotFoundError:
            sys.path.remove(cwd)  # not there either: leave the path as it was
            raise


def agent_name(agent: Any, spec: str | None = None) -> str:
    """A display name: the agent's own ``name`` if it has one, else the spec, else its class name."""
    name = getattr(agent, "name", None)
    if isinstance(name, str) and name:
        return name
    return spec.strip() if isinstance(spec, str) and spec.strip() else type(agent).__name__


class CallableAgent:
    """A plain ``f(observations, action_masks) -> actions`` as an agent object."""

    def __init__(self, fn: Callable[[np.ndarray, np.ndarray], Any]) -> None:
        self.fn = fn
        self.name = getattr(fn, "__name__", type(fn).__name__)

    def act(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        return self.fn(observations, action_masks)


def resolve_agent(agent: Any, seed: int | None = None, what: str = "agent") -> tuple[Any, str]:
    """An agent object, spec string or plain callable ``f(observations, action_masks)`` ->
    (agent, display name); anything else is a clear ``ValueError``."""
    if isinstance(agent, str):
        return make_agent(agent, seed=seed), agent.strip()
    if callable(getattr(agent, "act", None)):
        return agent, agent_name(agent)
    if callable(agent):
        wrapped = CallableAgent(agent)
        return wrapped, wrapped.name
    raise ValueError(f"{what} must be an agent spec string (one of {', '.join(registered_specs())}), an object "
                     f"with act(observations, action_masks) or a callable f(observations, action_masks) -> actions; "
                     f"got {agent!r}")
