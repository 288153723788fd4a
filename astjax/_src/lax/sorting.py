"""``lax.sort`` (several operands, ``num_keys``), ``sort_key_val``, ``top_k``, ``argmax`` and
``argmin``, written with ``argsort`` and ``take_along_axis`` and compiled like user code.
Sorts are stable and put NaN last (first in ``top_k``, which takes the largest), as in JAX.
"""
import numpy as np

import astjax.numpy as jnp

from ..random.checks import static_helper  # evaluated while generating code
from .trees import tree_map


@static_helper
def _sort_args(n, ndim, dimension, num_keys):
    if n < 1:
        raise TypeError("sort: at least one operand is required")
    if isinstance(num_keys, bool) or not isinstance(num_keys, int) or not 1 <= num_keys <= n:
        raise ValueError(f"sort: num_keys must be an int in [1, {n}], got {num_keys!r}")
    if not -ndim <= dimension < ndim:
        raise ValueError(f"sort: dimension {dimension} is out of bounds for operands of rank "
                         f"{ndim}")
    dimension %= ndim
    return dimension, tuple(a for a in range(ndim) if a != dimension)


def _order(keys, axis, k, idx):
    """``idx`` (a permutation along ``axis``) refined by the stable sorts on ``keys[k]``,
    ``keys[k - 1]``, ..., ``keys[0]``: lexicographic order, ``keys[0]`` first."""
    if k < 0:
        return idx
    key = jnp.take_along_axis(keys[k], idx, axis)
    idx = jnp.take_along_axis(idx, jnp.argsort(key, axis=axis, stable=True), axis)
    return _order(keys, axis, k - 1, idx)


def _sort_many(operands, dimension, num_keys):
    """``operands`` (a tuple or list) reordered along ``dimension`` by their first
    ``num_keys``."""
    first = jnp.asarray(operands[0])
    axis, others = _sort_args(len(operands), first.ndim, dimension, num_keys)
    if num_keys == 1:
        idx = jnp.argsort(first, axis=axis, stable=True)
    else:
        start = jnp.zeros(first.shape, jnp.int32) + jnp.expand_dims(
            jnp.arange(first.shape[axis], dtype=jnp.int32), others)
        idx = _order(operands, axis, num_keys - 1, start)
    return tree_map(lambda x: jnp.take_along_axis(jnp.asarray(x), idx, axis), operands)


def sort(operand, dimension=-1, is_stable=True, num_keys=1):
    """``lax.sort``: ``operand`` sorted along ``dimension``, or, for a tuple of arrays of one
    shape, all of them reordered by the lexicographic order of the first ``num_keys``.
    Sorting is always stable (``is_stable`` is ignored: a stable order is also a valid
    unstable one)."""
    if isinstance(operand, (tuple, list)):
        return _sort_many(operand, dimension, num_keys)
    x = jnp.asarray(operand)
    return jnp.sort(x, axis=_sort_args(1, x.ndim, dimension, num_keys)[0])


def sort_key_val(keys, values, dimension=-1, is_stable=True):
    """``keys`` sorted along ``dimension`` and ``values`` in the same order."""
    return _sort_many((keys, values), dimension, 1)


@static_helper
def _descending_kind(dtype, ndim, k, axis):
    if ndim < 1:
        raise TypeError("top_k operand must have >= 1 dimension, got 0")
    if isinstance(k, bool) or not isinstance(k, int) or k < 0:
        raise ValueError(f"k argument to top_k must be a nonnegative int, got {k!r}")
    if not -ndim <= axis < ndim:
        raise ValueError(f"top_k: axis {axis} is out of bounds for an operand of rank {ndim}")
    return np.dtype(dtype).kind, axis % ndim


def top_k(operand, k, *, axis=-1):
    """The ``k`` largest values along ``axis`` (the last by default) in descending order,
    and their int32 indices; equal values in index order, NaN largest, as in JAX."""
    x = jnp.asarray(operand)
    kind, axis = _descending_kind(x.dtype, x.ndim, k, axis)
    x = jnp.moveaxis(x, axis, -1)
    if kind == "b":
        idx = jnp.argsort(jnp.logical_not(x), axis=-1, stable=True)
    elif kind in "iu":
        idx = jnp.argsort(jnp.bitwise_not(x), axis=-1, stable=True)
    else:  # descending, then the NaNs moved first (stably)
        idx = jnp.argsort(-x, axis=-1, stable=True)
        nan_last = jnp.logical_not(jnp.isnan(jnp.take_along_axis(x, idx, -1)))
        idx = jnp.take_along_axis(idx, jnp.argsort(nan_last, axis=-1, stable=True), -1)
    idx = idx[..., :k]
    values = jnp.take_along_axis(x, idx, -1)
    return jnp.moveaxis(values, -1, axis), jnp.moveaxis(idx.astype(jnp.int32), -1, axis)


@static_helper
def _arg_axis(ndim, axis, fn):
    if isinstance(axis, bool) or not isinstance(axis, int) or not 0 <= axis < max(ndim, 1):
        raise ValueError(f"{fn}: invalid axis {axis!r} for an operand of rank {ndim}")
    return axis


def argmax(operand, axis, index_dtype):
    """The index of the largest element along ``axis`` (the first if tied, a NaN counting as
    largest), in ``index_dtype``."""
    x = jnp.asarray(operand)
    return jnp.argmax(x, axis=_arg_axis(x.ndim, axis, "argmax")).astype(index_dtype)


def argmin(operand, axis, index_dtype):
    """The index of the smallest element along ``axis`` (the first if tied, a NaN counting
    as smallest), in ``index_dtype``."""
    x = jnp.asarray(operand)
    return jnp.argmin(x, axis=_arg_axis(x.ndim, axis, "argmin")).astype(index_dtype)
