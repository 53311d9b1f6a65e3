"""The core's arrays behind one pointer, for the kernel call of every ``VectorGame.step``.

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

from .kernels import step_kernel


@structref.register
class CoreRefType(types.StructRef):
    """numba's type of a ``CoreRef``: its fields' types, fixed when it is made."""

    def preprocess_fields(self, fields):
        return tuple((name, types.unliteral(typ)) for name, typ in fields)


class CoreRef(structref.StructRefProxy):
    """``core``: the kernels' plain tuple of the game's records; ``mask``: (N, 107) bool legal actions."""


structref.define_proxy(CoreRef, CoreRefType, ["core", "mask"])


def core_ref(core: tuple, mask: np.ndarray) -> CoreRef:
    """A ``CoreRef`` over ``core`` (``records.plain(VectorGame.core)``) and ``mask`` (no copies)."""
    return CoreRef(core, mask)


@njit(cache=True)
def step_with_ref(ref, actions, move, obs, every_row, autoreset):
    """``kernels.step_kernel`` on the arrays behind ``ref``: (deals, over, observed)."""
    return step_kernel(actions, move, ref.core, (obs, ref.mask), every_row, autoreset)
