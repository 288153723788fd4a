"""Helpers that generated Numba modules call; compiled once and cached on disk.

Kept small and generic: the generated code does the heavy lifting in fused
loops, these only cover shape bookkeeping and NaN-aware scalar combinators.
"""
import numpy as np
from numba import njit

_OPTIONS = dict(cache=True, error_model="numpy")


@njit(**_OPTIONS)
def bdim(a, b, where):
    """The broadcast of two dimension sizes, as NumPy defines it."""
    if a == b or b == 1:
        return a
    if a == 1:
        return b
    raise ValueError(where)


@njit(**_OPTIONS)
def bcast_to(x, shape):
    """``x`` itself when it already has ``shape`` (the usual case), else a broadcast copy:
    fused loops index every operand at the full loop shape."""
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
