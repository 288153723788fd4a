"""Helpers that generated Numba modules call; compiled once and cached on disk.

Kept small and generic: the generated code does the heavy lifting in fused
loops, these only cover shape bookkeeping and NaN-aware scalar combinators.
"""
import numpy as np
from numba import njit

_OPTIONS = dict(cache=True, error_model="numpy")


class RuntimeBroadcast(ValueError):
    """Raised by generated code when operands' sizes differ at run time: either a size-1
    dimension the types did not know about (NumPy would broadcast it) or a real mismatch.
    The caller reruns the call on the python backend, which does what NumPy does."""


class BroadcastAfterDonation(ValueError):
    """Sizes differ at run time after a donated argument's buffer was overwritten: the
    call cannot rerun on the python backend, so the user sees this error."""


@njit(**_OPTIONS)
def bcast_to(x, shape):
    """``x`` itself when it already has ``shape``, else a broadcast copy (broadcast_to)."""
    if x.shape == shape:
        return x
    return np.broadcast_to(x, shape).copy()


@njit(inline="always", **_OPTIONS)
def maximum(a, b):
    """NumPy's maximum: NaN wins."""
    return a if (a >= b or a != a) else b


@njit(inline="always", **_OPTIONS)
def minimum(a, b):
    return a if (a <= b or a != a) else b


@njit(**_OPTIONS)
def empty_reduction(name):
    raise ValueError(name)


@njit(**_OPTIONS)
def grow(buf, needed=0):
    """A tape array at least twice as long (and ``needed`` long), holding ``buf``'s
    contents."""
    out = np.empty(max(2 * buf.shape[0], needed), buf.dtype)
    out[:buf.shape[0]] = buf
    return out

