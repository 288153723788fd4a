"""Set functions, ``unique``, ``nonzero`` and partial sorts written with ``astjax.numpy``
ops, read by the compiler like user code, as those in ``_composites`` (exported through
``_statistics``). Semantics and dtypes follow JAX 0.10.2.

A result whose length depends on the values (``unique``, ``nonzero``, ``bincount``, the set
functions) is as long as the values make it when called eagerly; in compiled code (jit,
grad, vmap) its length must be given (``size=``, ``length=``), as JAX requires. Results are
gathered from computed indices (a stable argsort puts the selected elements first), so no
step has a data-dependent shape.
"""
import collections

import numpy as np

import astjax.numpy as jnp

from .._src import dtypes
from .._src.ir.types import SequenceType, Static
from .._src.lax.common import LaxFunction
from .._src.lax.control_flow import fori_loop
from .._src.random.checks import static_helper  # evaluated while generating code
from ._composites import _is_bool
from ._composites2 import _keep_shape
from ._sorting import _normalize_axis, take_along_axis
from .linalg import _is_inexact


# ---- result lengths known only from the values ----------------------------------------

def _checked_size(size, fn):
    if not isinstance(size, (int, np.integer)) or isinstance(size, bool) or size < 0:
        raise TypeError(f"{fn}(): size must be a non-negative int, got {size!r}")
    return int(size)


def _eager_size(count, size, fn):
    return int(count) if size is None else _checked_size(size, fn)


def _given_size(count, size, fn):
    return size


def _compiled_size(count_t, size_t, fn_t):
    fn = fn_t.value
    if not isinstance(size_t, Static):
        raise TypeError(f"{fn}(): the size of the result must be known when code is generated "
                        f"(a constant, or a static argument of jit), got {size_t}")
    if size_t.value is None:
        raise ValueError(f"{fn}(): the length of the result depends on the values, so in "
                         f"compiled code (jit, grad, vmap) it must be given as a static int, "
                         f"as JAX requires: pass {'length' if fn == 'bincount' else 'size'}=")
    _checked_size(size_t.value, fn)
    return _given_size


# eagerly the count itself (or ``size``); compiled, ``size``, which must be a static int
_result_size = LaxFunction(_eager_size, _compiled_size)


def _eager_static(value, name, fn):
    return value


def _same_value(value, name, fn):
    return value


def _static_lower(value_t, name_t, fn_t):
    if not isinstance(value_t, Static):
        raise TypeError(f"{fn_t.value}(): {name_t.value} must be known when code is "
                        f"generated (a constant, or a static argument of jit), got {value_t}")
    return _same_value


# ``value`` itself; in compiled code it must be static (else an error naming the argument)
_static_arg = LaxFunction(_eager_static, _static_lower)


def _first_true(mask, size):
    """The indices of the first ``size`` True elements of the 1-D ``mask`` (0 after the
    last), and where that list holds a real index."""
    order = jnp.argsort(jnp.logical_not(mask).astype(np.int32))  # stable: Trues first
    k = jnp.arange(size)
    n = mask.shape[0]
    valid = k < jnp.sum(mask)
    idx = order[jnp.minimum(k, jnp.maximum(n - 1, 0))]
    return jnp.where(valid, idx, jnp.zeros_like(idx)), valid


@static_helper
def _index_dtype():
    """The default int (int64 with 64-bit types on), JAX's dtype for indices."""
    return dtypes.canonicalize_dtype(np.dtype(np.int64))


# ---- membership ---------------------------------------------------------------------

def isin(element, test_elements, assume_unique=False, invert=False, method="auto"):
    """Where ``element`` equals some entry of ``test_elements`` (compared with all of
    them), or does not, with ``invert``."""
    element = jnp.asarray(element)
    test = jnp.ravel(jnp.asarray(test_elements))
    eq = jnp.expand_dims(element, -1) == test
    if invert:
        return jnp.logical_not(jnp.any(eq, axis=-1))
    return jnp.any(eq, axis=-1)


def _promote(a1, a2):
    """``a1`` and ``a2`` in their promoted dtype (ints stay ints, as promote_dtypes)."""
    a1 = jnp.asarray(a1)
    a2 = jnp.asarray(a2)
    dt = (jnp.ravel(a1)[:0] + jnp.ravel(a2)[:0]).dtype
    return a1.astype(dt), a2.astype(dt)


# ---- unique values, sets --------------------------------------------------------------

_UniqueAllResult = collections.namedtuple("_UniqueAllResult",
                                          ["values", "indices", "inverse_indices", "counts"])
_UniqueCountsResult = collections.namedtuple("_UniqueCountsResult", ["values", "counts"])
_UniqueInverseResult = collections.namedtuple("_UniqueInverseResult",
                                              ["values", "inverse_indices"])


def _differ(s, equal_nan):
    """Where each element of ``s`` after the first differs from the one before (NaNs
    equal to each other with ``equal_nan``)."""
    neq = s[1:] != s[:-1]
    if equal_nan and _is_inexact(s.dtype):
        neq = jnp.logical_and(neq, jnp.logical_not(jnp.logical_and(jnp.isnan(s[1:]),
                                                                    jnp.isnan(s[:-1]))))
    return neq


def _sorted_runs(a, equal_nan):
    """``a`` (1-D) sorted, the sorting permutation, and where each run of equal values
    starts (NaNs one run with ``equal_nan``, else one each)."""
    perm = jnp.argsort(a)
    s = a[perm]
    neq = _differ(s, equal_nan)
    return s, perm, jnp.concatenate((jnp.arange(1) < s.shape[0], neq))  # none when empty


def _sorted_row_runs(rows, equal_nan):
    """As ``_sorted_runs`` for the rows of a 2-D array, in lexicographic order (the first
    column first, as JAX)."""
    perm = _lexsort_array(jnp.flip(rows.T, 0))
    s = rows[perm]
    neq = jnp.any(_differ(s, equal_nan), axis=1)
    return s, perm, jnp.concatenate((jnp.arange(1) < s.shape[0], neq))


def _filled(vals, valid, fill_value):
    if fill_value is None:
        return vals
    return jnp.where(valid, vals, jnp.asarray(fill_value).astype(vals.dtype))


def unique(ar, return_index=False, return_inverse=False, return_counts=False, axis=None,
           equal_nan=True, size=None, fill_value=None, sorted=True):
    """The sorted distinct values of ``ar`` flattened (or its distinct slices along
    ``axis``), with the index of each one's first occurrence, the index of each element's
    value among them (shaped as ``ar`` without ``axis``) and the counts, as asked, as
    ``jnp.unique``. With ``size`` (needed in compiled code) the
    results are cut or padded to that length: values with ``fill_value`` (the smallest
    value by default), indices with the smallest value's, counts with 0."""
    ar = jnp.asarray(ar)
    if axis is None:
        s, perm, mask = _sorted_runs(jnp.ravel(ar), equal_nan)
    else:  # the distinct slices along axis: rows of the other axes flattened
        ax = _normalize_axis(axis, ar.ndim, "unique")
        moved = jnp.moveaxis(ar, ax, 0)
        s, perm, mask = _sorted_row_runs(jnp.reshape(moved, (moved.shape[0], -1)), equal_nan)
    size = _result_size(jnp.sum(mask), size, "unique")
    ind, valid = _first_true(mask, size)
    if axis is None:
        out = (_filled(s[ind], valid, fill_value),)
    else:
        rows = _filled(s[ind], jnp.expand_dims(valid, -1), fill_value)
        out = (jnp.moveaxis(jnp.reshape(rows, (size,) + moved.shape[1:]), 0, ax),)
    n = perm.shape[0]
    if return_index:
        out = out + (perm[ind],)
    if return_inverse:
        groups = jnp.cumsum(mask.astype(np.int32)) - 1
        inv = jnp.zeros(n, perm.dtype).at[perm].set(groups.astype(perm.dtype))
        out = out + ((jnp.reshape(inv, ar.shape) if axis is None else inv),)
    if return_counts:
        starts, _ = _first_true(mask, size + 1)
        # the start of the next value (the end for the last): the counts are the steps
        ends = jnp.where(starts[1:] != 0, starts[1:], jnp.full_like(starts[1:], n))
        bounds = jnp.concatenate((starts[:1], ends))
        out = out + (bounds[1:] - bounds[:-1],)
    if len(out) == 1:
        return out[0]
    return out


def unique_values(x, *, size=None, fill_value=None):
    """The sorted distinct values of ``x`` (each NaN its own)."""
    return unique(x, False, False, False, None, False, size, fill_value)


def unique_counts(x, *, size=None, fill_value=None):
    """``(values, counts)`` of ``x``'s distinct values."""
    v, c = unique(x, False, False, True, None, False, size, fill_value)
    return _UniqueCountsResult(v, c)


def unique_inverse(x, *, size=None, fill_value=None):
    """``(values, inverse_indices)``: ``x``'s distinct values and each element's index
    among them."""
    v, i = unique(x, False, True, False, None, False, size, fill_value)
    return _UniqueInverseResult(v, i)


def unique_all(x, *, size=None, fill_value=None):
    """``(values, indices, inverse_indices, counts)`` of ``x``'s distinct values."""
    v, i, inv, c = unique(x, True, True, True, None, False, size, fill_value)
    return _UniqueAllResult(v, i, inv, c)


def _min_fill(vals, valid, fill_value):
    """JAX's padding of the set functions: ``fill_value``, else the smallest result."""
    if fill_value is None:  # the first value is the smallest (no result: 0)
        first = jnp.where(valid[:1], vals[:1], jnp.zeros_like(vals[:1]))
        head = jnp.concatenate((first, jnp.zeros(1, vals.dtype)))[0]
        return jnp.where(valid, vals, head)
    return _filled(vals, valid, fill_value)


def union1d(ar1, ar2, *, size=None, fill_value=None):
    """The sorted distinct values found in either array."""
    a1, a2 = _promote(ar1, ar2)
    return unique(jnp.concatenate((jnp.ravel(a1), jnp.ravel(a2))), size=size,
                  fill_value=fill_value)


def intersect1d(ar1, ar2, assume_unique=False, return_indices=False, *, size=None,
                fill_value=None):
    """The sorted distinct values found in both arrays (with ``return_indices``, also the
    index of each one's first occurrence in ``ar1`` and in ``ar2``)."""
    a1, a2 = _promote(ar1, ar2)
    a1 = jnp.ravel(a1)
    a2 = jnp.ravel(a2)
    s, perm, first = _sorted_runs(a1, True)
    keep = jnp.logical_and(first, isin(s, a2))
    size = _result_size(jnp.sum(keep), size, "intersect1d")
    ind, valid = _first_true(keep, size)
    vals = _min_fill(s[ind], valid, fill_value)
    if not return_indices:
        return vals
    i1 = jnp.where(valid, perm[ind], a1.shape[0])
    i2 = jnp.argmax(jnp.expand_dims(vals, -1) == a2, axis=-1)  # the first occurrence
    i2 = jnp.where(valid, i2.astype(i1.dtype), a2.shape[0])
    return vals, i1, i2


def setdiff1d(ar1, ar2, assume_unique=False, *, size=None, fill_value=None):
    """The sorted distinct values of ``ar1`` not in ``ar2`` (padded with ``fill_value``,
    0 by default)."""
    a1 = jnp.ravel(jnp.asarray(ar1))
    a2 = jnp.ravel(jnp.asarray(ar2))
    s, _, first = _sorted_runs(a1, True)
    keep = jnp.logical_and(first, isin(s, a2, invert=True))
    size = _result_size(jnp.sum(keep), size, "setdiff1d")
    ind, valid = _first_true(keep, size)
    return _filled(s[ind], valid, 0 if fill_value is None else fill_value)


def setxor1d(ar1, ar2, assume_unique=False, *, size=None, fill_value=None):
    """The sorted distinct values found in exactly one of the arrays."""
    a1, a2 = _promote(ar1, ar2)
    a1 = jnp.ravel(a1)
    a2 = jnp.ravel(a2)
    s, _, first = _sorted_runs(jnp.concatenate((a1, a2)), True)
    keep = jnp.logical_and(first, jnp.logical_xor(isin(s, a1), isin(s, a2)))
    size = _result_size(jnp.sum(keep), size, "setxor1d")
    ind, valid = _first_true(keep, size)
    return _min_fill(s[ind], valid, fill_value)


# ---- where the nonzero elements are ---------------------------------------------------

@static_helper
def _nonzero_fill(fill_value, ndim):
    if ndim == 0:
        raise ValueError("Calling nonzero on 0d arrays is not allowed. Use "
                         "jnp.atleast_1d(scalar).nonzero() instead.")
    if fill_value is None:
        return None
    fills = tuple(fill_value) if isinstance(fill_value, (tuple, list)) else (fill_value,) * ndim
    if len(fills) != ndim or any(np.shape(v) != () for v in fills):
        raise ValueError(f"fill_value must be a scalar or a tuple of length {ndim}; got "
                         f"{fill_value!r}")
    return fills


def _unravel(rem, shape, d):
    """The coordinates (axes ``0..d``) of the flat indices ``rem`` in an array of ``shape``."""
    if d == 0:
        return (rem,)
    return _unravel(rem // shape[d], shape, d - 1) + (rem % shape[d],)


def _fill_each(coords, valid, fills, d):
    if d == len(coords):
        return ()
    c = jnp.where(valid, coords[d], fills[d])
    return (c,) + _fill_each(coords, valid, fills, d + 1)


def nonzero(a, *, size=None, fill_value=None):
    """The indices of ``a``'s nonzero elements, one array per axis (row-major order); with
    ``size`` (needed in compiled code) cut or padded to that length with ``fill_value``
    (0 by default; a scalar or one per axis)."""
    a = jnp.asarray(a)
    fills = _nonzero_fill(fill_value, a.ndim)
    if _is_bool(a.dtype):
        mask = jnp.ravel(a)
    else:
        mask = jnp.ravel(a != 0)
    size = _result_size(jnp.sum(mask), size, "nonzero")
    ind, valid = _first_true(mask, size)
    coords = _unravel(ind, a.shape, a.ndim - 1)
    if fills is None:
        return coords
    return _fill_each(coords, valid, fills, 0)


def flatnonzero(a, *, size=None, fill_value=None):
    """The indices of the nonzero elements of ``a`` flattened."""
    return nonzero(jnp.ravel(jnp.asarray(a)), size=size, fill_value=fill_value)[0]


def argwhere(a, *, size=None, fill_value=None):
    """The indices of ``a``'s nonzero elements, one row each (shape ``(count, a.ndim)``)."""
    a = jnp.asarray(a)
    out = jnp.stack(nonzero(jnp.atleast_1d(a), size=size, fill_value=fill_value), axis=1)
    if a.ndim == 0:
        return out[:, :0]
    return out


@static_helper
def _check_compress(ndim, out):
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.compress is not supported.")
    if ndim != 1:
        raise ValueError("condition must be a 1D array")
    return ndim


def _eager_in_bounds(count, extra, size):
    if size is None and extra:
        raise ValueError("condition contains entries that are out of bounds")
    return count


def _count(count, extra, size):
    return count


# JAX's check without size= (only possible eagerly: compiled code needs size=)
_in_bounds = LaxFunction(_eager_in_bounds, lambda *arg_types: _count)


def compress(condition, a, axis=None, *, size=None, fill_value=0, out=None):
    """The slices of ``a`` along ``axis`` (of ``a`` flattened if None) where ``condition``
    is true; with ``size`` (needed in compiled code) cut or padded with ``fill_value``.
    A ``condition`` longer than the axis is cut to it (without ``size``, a true entry past
    the axis is an error, as in JAX)."""
    cond = jnp.asarray(condition).astype(np.bool_)
    _check_compress(cond.ndim, out)
    a = jnp.asarray(a)
    if axis is None:
        arr = jnp.ravel(a)
        ax = 0
    else:
        ax = _normalize_axis(axis, a.ndim, "compress")
        arr = jnp.moveaxis(a, ax, 0)
    k = jnp.arange(arr.shape[0])
    m = cond.shape[0]
    c = jnp.logical_and(k < m, cond[jnp.minimum(k, jnp.maximum(m - 1, 0))])
    count = _in_bounds(jnp.sum(c), jnp.sum(cond) - jnp.sum(c), size)
    size = _result_size(count, size, "compress")
    ind, valid = _first_true(c, size)
    got = arr[ind]
    valid = jnp.reshape(valid, valid.shape + _keep_shape(arr.ndim - 1))
    got = jnp.where(valid, got, jnp.asarray(fill_value).astype(got.dtype))
    return jnp.moveaxis(got, 0, ax)


def extract(condition, arr, *, size=None, fill_value=0):
    """The elements of ``arr`` flattened where ``condition`` (flattened) is true."""
    return compress(jnp.ravel(jnp.asarray(condition)), jnp.ravel(jnp.asarray(arr)), None,
                    size=size, fill_value=fill_value)


# ---- partial sorts --------------------------------------------------------------------

@static_helper
def _check_partition(kth, kind, fn):
    if kind == "c":
        raise NotImplementedError(f"jnp.{fn} for complex dtype is not implemented.")
    if not isinstance(kth, (int, np.integer)) or isinstance(kth, bool):
        raise TypeError(f"{fn}(): kth must be an int known when code is generated, got "
                        f"{kth!r}")
    return int(kth)


def _partition_positions(n, kth):
    """Each output position along the axis, whether it is among the ``kth + 1`` smallest
    (kth counted from the end when negative: the length is a run-time int), and the
    normalized kth."""
    k = kth + n if kth < 0 else kth
    p = jnp.arange(n)
    return p, p <= k, k


def partition(a, kth, axis=-1):
    """``a`` with its ``kth + 1`` smallest values first along ``axis``, ascending, then the
    rest descending (JAX's order, from its top_k)."""
    a = jnp.asarray(a)
    kth = _check_partition(_static_arg(kth, "kth", "partition"), a.dtype.kind, "partition")
    ax = _normalize_axis(axis, a.ndim, "partition")
    s = jnp.sort(jnp.moveaxis(a, ax, -1), axis=-1)
    n = s.shape[-1]
    p, low, k = _partition_positions(n, kth)
    # the rest in reverse: position p (> k) takes sorted element n + k - p
    out = s[..., jnp.where(low, p, n + k - p)]
    return jnp.moveaxis(out, -1, ax)


def argpartition(a, kth, axis=-1):
    """The indices that ``partition`` would take: those of the ``kth + 1`` smallest values
    in ascending order, then the others in increasing index order (as JAX's)."""
    a = jnp.asarray(a)
    kth = _check_partition(_static_arg(kth, "kth", "argpartition"), a.dtype.kind,
                           "argpartition")
    ax = _normalize_axis(axis, a.ndim, "argpartition")
    order = jnp.argsort(jnp.moveaxis(a, ax, -1), axis=-1)
    n = order.shape[-1]
    p, low, k = _partition_positions(n, kth)
    rank = jnp.argsort(order, axis=-1)  # the inverse permutation
    rest = jnp.argsort((rank <= k).astype(np.int32), axis=-1)  # stable: others first
    out = jnp.where(low, order[..., p], rest[..., jnp.clip(p - k - 1, 0, n - 1)])
    out = out.astype(np.int32)  # as JAX's top_k indices, with 64-bit types on too
    return jnp.moveaxis(out, -1, ax)


def _lexsort_by(key, idx, ax):
    """``idx`` (the order so far, along the last axis) sorted stably by ``key``."""
    cur = take_along_axis(jnp.moveaxis(key, ax, -1), idx, -1)
    return take_along_axis(idx, jnp.argsort(cur, axis=-1), -1)


def _lexsort_keys(keys, i, idx, ax):
    if i == len(keys):
        return idx
    return _lexsort_keys(keys, i + 1, _lexsort_by(jnp.asarray(keys[i]), idx, ax), ax)


def _lexsort_sequence(keys, axis=-1):
    """lexsort of a tuple or list of keys, each sorted in its own dtype, as JAX."""
    k0 = jnp.asarray(keys[0])
    if k0.ndim == 0:
        return jnp.zeros((), _index_dtype())
    ax = _normalize_axis(axis, k0.ndim, "lexsort")
    n = k0.shape[ax]
    idx = jnp.broadcast_to(jnp.arange(n), jnp.moveaxis(k0, ax, -1).shape)
    return jnp.moveaxis(_lexsort_keys(keys, 0, idx, ax), -1, ax)


def _lexsort_array(keys, axis=-1):
    """lexsort of the rows of an array (their number known only at run time: a loop)."""
    k = jnp.asarray(keys)
    if k.ndim == 1:
        return jnp.zeros((), _index_dtype())
    ax = _normalize_axis(axis, k.ndim - 1, "lexsort")
    idx = jnp.broadcast_to(jnp.arange(k.shape[ax + 1]), jnp.moveaxis(k[0], ax, -1).shape)
    idx = fori_loop(0, k.shape[0], lambda i, idx: _lexsort_by(k[i], idx, ax), idx)
    return jnp.moveaxis(idx, -1, ax)


def _lexsort_eager(keys, axis=-1):
    """The indices that sort by the last key, ties broken by the one before, and so on
    (stably), along ``axis``; ``keys``: a sequence of arrays of one shape or a 2-D array
    (one key per row)."""
    if isinstance(keys, (tuple, list)):
        return _lexsort_sequence(keys, axis)
    return _lexsort_array(keys, axis)


lexsort = LaxFunction(_lexsort_eager, lambda keys_t, axis_t: _lexsort_sequence
                      if isinstance(keys_t, SequenceType) else _lexsort_array)


@static_helper
def _no_size_with_operands():
    raise ValueError("size and fill_value arguments cannot be used in three-term where "
                         "function.")


def where(condition, x=None, y=None, *, size=None, fill_value=None):
    """``jnp.where`` called with ``size``/``fill_value``: the one-argument form,
    ``nonzero(condition, size=, fill_value=)``, as JAX's (the op does the three-argument
    form, where these keywords are an error)."""
    if x is not None or y is not None:
        _no_size_with_operands()
    return nonzero(condition, size=size, fill_value=fill_value)
