"""The core's arrays behind one pointer, for the kernel calls of ``VectorGame`` (step, deal, observe)
and of the vector env.

numba checks the type of each argument at every call of a compiled function, array by array:
the core's records (``okgin_env.records``) hold about fifty arrays, and checking them costs a few
microseconds per call, as much as a move of one game. A step of one game from Python (the AEC
and single-agent envs, one decision at a time) paid it at every decision. ``CoreRef`` is a numba
structref holding the records and the legal-action mask: its type is known once, and a call
passes one pointer. The kernels are unchanged (they still read ``Core``'s named records).
"""

from __future__ import annotations

import numpy as np
from numba import njit, types
from numba.experimental import structref

from .kernels import deal_kernel, observe_kernel, step_kernel
from .vector_kernels import advance_kernel, clear_log, close_episodes, opponent_move, views_kernel


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


@njit(cache=True)
def _core_ref_fields(ref):
    return ref.core, ref.mask


def core_ref(core: tuple, mask: np.ndarray) -> CoreRef:
    """A ``CoreRef`` over ``core`` (``records.plain(VectorGame.core)``) and ``mask`` (no copies)."""
    return CoreRef(core, mask)


@njit(cache=True)
def step_with_ref(ref, actions, move, obs, every_row, autoreset):
    """``kernels.step_kernel`` on the arrays behind ``ref``: (deals, over, observed)."""
    return step_kernel(actions, move, ref.core, (obs, ref.mask), every_row, autoreset)


@njit(cache=True)
def deal_with_ref(ref, idx, decks, dealers, new_episode):
    """``kernels.deal_kernel`` on the arrays behind ``ref``."""
    deal_kernel(idx, decks, dealers, ref.core, new_episode)


@njit(cache=True)
def observe_with_ref(ref, request, obs):
    """``kernels.observe_kernel`` into ``obs`` and the mask behind ``ref`` (both views)."""
    views = (obs, ref.mask)
    observe_kernel(ref.core, request, views, views)


# ------------------------------------------------------------------ the vector env's
# The vector env (okgin_env.vector) calls its fused kernels a few times a step with the game's core,
# its own arrays and the booking: about a hundred arrays, checked at each call (the cost of a
# one-game step, again). ``EnvRef`` holds them behind one pointer; each entry below reads its
# fields once and calls the kernel (a separate function: its loops read the records' arrays as
# arguments, not through the structref).


@structref.register
class EnvRefType(types.StructRef):
    """numba's type of an ``EnvRef``: its fields' types, fixed when it is made."""

    def preprocess_fields(self, fields):
        return tuple((name, types.unliteral(typ)) for name, typ in fields)


class EnvRef(structref.StructRefProxy):
    """``core``, ``env``, ``book``: the plain tuples of the game's ``Core`` and the env's
    ``vector_kernels.EnvArrays`` and ``Booking``."""

    def fields(self) -> tuple:
        """(core, env, book) as numba boxes them (new array objects over the same memory)."""
        return _env_ref_fields(self)


structref.define_proxy(EnvRef, EnvRefType, ["core", "env", "book"])


@njit(cache=True)
def _env_ref_fields(ref):
    return ref.core, ref.env, ref.book


def env_ref(core: tuple, env: tuple, book: tuple) -> EnvRef:
    """An ``EnvRef`` over the plain records (no copies: the arrays are shared)."""
    return EnvRef(core, env, book)


@njit(cache=True)
def advance_with_ref(ref, idx, acts, step):
    """``vector_kernels.advance_kernel`` on the arrays behind ``ref``."""
    return advance_kernel(idx, acts, ref.core, ref.env, ref.book, step)


@njit(cache=True)
def opponent_move_with_ref(ref, idx, acts, step, opp, opp_observes):
    """``vector_kernels.opponent_move`` on the arrays behind ``ref``."""
    return opponent_move(idx, acts, ref.core, ref.env, ref.book, step, opp, opp_observes)


@njit(cache=True)
def views_with_ref(ref, step, opp, opp_observes):
    """``vector_kernels.views_kernel`` on the arrays behind ``ref``."""
    return views_kernel(ref.core, ref.env, step, opp, opp_observes)


@njit(cache=True)
def close_episodes_with_ref(ref, step, illegal, ends, final_obs):
    """``vector_kernels.close_episodes`` on the arrays behind ``ref``."""
    return close_episodes(ref.core, ref.env, step, illegal, ends, final_obs)


@njit(cache=True)
def clear_logs_with_ref(ref):
    """``vector_kernels.clear_log`` of the booking's step and reset logs, in one call."""
    book = ref.book
    clear_log(book[1])
    clear_log(book[2])
