"""The vector env's arrays behind one pointer, for its fused kernel calls.

The vector env (``okgin_env.envs.vector``) calls its fused kernels a few times a step with the game's
core, its own arrays and the booking: about a hundred arrays, which numba type-checks at each call
(the cost of a one-game step, again). ``EnvRef`` holds them behind one pointer, as
``okgin_env.game.handle.CoreRef`` does for the game; each entry below reads its fields once and
calls the kernel (a separate function: its loops read the records' arrays as arguments, not
through the structref).
"""

from __future__ import annotations

from numba import types
from numba.experimental import structref

from okgin_env.envs.vector_kernels import (
    advance_kernel,
    clear_named_log,
    close_episodes,
    named_booking,
    opponent_move,
    views_kernel,
)
from okgin_env.game.jit import kernel


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


@kernel
def _env_ref_fields(ref):
    return ref.core, ref.env, ref.book


def env_ref(core: tuple, env: tuple, book: tuple) -> EnvRef:
    """An ``EnvRef`` over the plain records (no copies: the arrays are shared)."""
    return _new_env_ref(core, env, book)


@kernel
def _new_env_ref(core, env, book):
    # a kernel, cached on disk, rather than the proxy's constructor, which numba compiles anew in
    # every process (seconds for these ~100 array types): see game.handle.core_ref
    return EnvRef(core, env, book)


@kernel
def advance_with_ref(ref, idx, acts, step):
    """``vector_kernels.advance_kernel`` on the arrays behind ``ref``."""
    return advance_kernel(idx, acts, ref.core, ref.env, ref.book, step)


@kernel
def opponent_move_with_ref(ref, idx, acts, step, opp, opp_observes):
    """``vector_kernels.opponent_move`` on the arrays behind ``ref``."""
    return opponent_move(idx, acts, ref.core, ref.env, ref.book, step, opp, opp_observes)


@kernel
def views_with_ref(ref, step, opp, opp_observes):
    """``vector_kernels.views_kernel`` on the arrays behind ``ref``."""
    return views_kernel(ref.core, ref.env, step, opp, opp_observes)


@kernel
def close_episodes_with_ref(ref, step, illegal, ends, final_obs):
    """``vector_kernels.close_episodes`` on the arrays behind ``ref``."""
    return close_episodes(ref.core, ref.env, step, illegal, ends, final_obs)


@kernel
def clear_logs_with_ref(ref):
    """Blank the booking's step and reset logs (``vector_kernels.clear_named_log``), in one call."""
    book = named_booking(ref.book)
    clear_named_log(book.step_log)
    clear_named_log(book.reset_log)
