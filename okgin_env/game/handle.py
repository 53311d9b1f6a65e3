"""The core's arrays behind one pointer, for the kernel calls of ``VectorGame`` (step, deal, observe).

numba checks the type of each argument at every call of a compiled function, array by array:
the core's records (``okgin_env.game.records``) hold about fifty arrays, and checking them costs a few
microseconds per call, as much as a move of one game. A step of one game from Python (the AEC
and single-agent envs, one decision at a time) paid it at every decision. ``CoreRef`` is a numba
structref holding the records and the legal-action mask: its type is known once, and a call
passes one pointer. The kernels are unchanged (they still read ``Core``'s named records).
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
from numba import typeof, types
from numba.experimental import structref

from okgin_env.game.jit import kernel
from okgin_env.game.kernels import clear_outputs, deal_kernel, observe, step_kernel
from okgin_env.game.records import ObserveRequest, Views, named_core


@structref.register
class CoreRefType(types.StructRef):
    """numba's type of a ``CoreRef``: its fields' types, fixed when it is made."""

    def preprocess_fields(self, fields):
        return tuple((name, types.unliteral(typ)) for name, typ in fields)


class CoreRef(structref.StructRefProxy):
    """``core``: the kernels' plain tuple of the game's records; ``mask``: (N, 107) bool legal actions."""

    def fields(self) -> tuple:
        """(core, mask) as numba boxes them (new array objects over the same memory)."""
        return _core_ref_fields(self)


structref.define_proxy(CoreRef, CoreRefType, ["core", "mask"])


@kernel
def _core_ref_fields(ref):
    return ref.core, ref.mask


def core_ref(core: tuple, mask: np.ndarray) -> CoreRef:
    """A ``CoreRef`` over ``core`` (``records.plain(VectorGame.core)``) and ``mask`` (no copies)."""
    return _new_core_ref(core, mask)


@kernel
def _new_core_ref(core, mask):
    # Made in a kernel, not by ``CoreRef(core, mask)`` from Python: the proxy's own constructor is a
    # jit function numba never caches, so every process compiled it for the records' ~50 array types
    # when it made its first VectorGame (1.3-1.9 s of CPU, 2026-12-03; an evaluate.py run of 100,000
    # hands lasts about 6 s). A kernel's compiled code comes from the disk cache.
    return CoreRef(core, mask)


@kernel
def step_with_ref(ref, actions, move, obs, every_row, autoreset):
    """``kernels.step_kernel`` on the arrays behind ``ref``: (deals, over, observed)."""
    return step_kernel(actions, move, named_core(ref.core), Views(obs, ref.mask), every_row, autoreset)


def compiled_for(function: Any, *args: Any) -> Callable:
    """The compiled form of the numba function ``function`` for the types of ``args`` (loaded from the
    disk cache or compiled, not run), callable without numba's per-call dispatch, which types every
    argument in Python first (~0.9 us with a ``CoreRef`` among them). Its caller must pass arguments
    of exactly those types: anything else is not checked (a crash, or memory written wrongly)."""
    return function.compile(tuple(typeof(a) for a in args))


@kernel
def step_one_with_ref(ref, action, obs, autoreset):
    """``step_with_ref`` for a one-game core (N = 1): the action as an int and the view (OBS_SIZE,)
    as one row, so that the call checks three arguments instead of six (a one-game step from Python,
    as the AEC env makes, costs a few microseconds, of which argument checks are a large part).
    Returns whether the view was written (``step_kernel``'s ``observed``)."""
    actions = np.empty(1, np.int64)
    actions[0] = action
    rows = obs.reshape((1, obs.shape[0]))
    return step_kernel(actions, np.ones(1, np.bool_), named_core(ref.core), Views(rows, ref.mask), True, autoreset)[2]


@kernel
def deal_with_ref(ref, idx, decks, dealers, new_episode):
    """``kernels.deal_kernel`` on the arrays behind ``ref``."""
    deal_kernel(idx, decks, dealers, ref.core, new_episode)


@kernel
def observe_with_ref(ref, games, players, rows, write_mask, obs):
    """``kernels.observe`` of player players[j] in game games[j] into obs[rows[j]] and, with
    ``write_mask``, the movers' legal actions into the mask behind ``ref``. The request's arrays
    come one by one: numba checks a NamedTuple argument in Python, a microsecond per call."""
    c = named_core(ref.core)
    views = Views(obs, ref.mask)
    observe(c.rules, c.state, ObserveRequest(games, players, rows, np.zeros(0, np.bool_), write_mask), views, views)


@kernel
def clear_outputs_with_ref(ref):
    """``kernels.clear_outputs`` on the records behind ``ref`` (``VectorGame.reset``)."""
    c = named_core(ref.core)
    clear_outputs(c.result, c.out)
