"""Reductions: sum, prod, mean, max, min, argmax, argmin, var, std, any, all,
count_nonzero, and the cumulative cumsum, cumprod.

Result dtypes follow JAX, not NumPy: sums of bool and of small integers give
the default int (NumPy: int64), means of integers the default float
(NumPy: float64), argmax the default int. Results are never weak.

This module defines sum, max, min, any and all: use ``builtins.<name>`` for Python's.
"""
import builtins
import math
import operator

import numpy as np

from .. import dtypes
from ..errors import ShapeError
from ..ir.types import ArrayType
from .conversions import array_operand, no_out, user_dtype
from .registry import Op, register_method, register_name


# --- axes ----------------------------------------------------------------------------------

def _axes(fn, axis, ndim):
    """The reduced axes, normalized to a tuple of non-negative ints (None: all of them)."""
    if axis is None:
        return tuple(range(ndim))
    out = []
    for a in axis if isinstance(axis, (tuple, list)) else (axis,):
        try:
            i = operator.index(a)
        except TypeError:
            raise ShapeError(f"{fn}(): axis must be None, an int or a tuple of ints, "
                             f"got {axis!r}") from None
        if not -ndim <= i < ndim:
            raise ShapeError(f"{fn}(): axis {i} is out of range for an array of rank {ndim}")
        out.append(i % ndim)
    if len(set(out)) != len(out):
        raise ShapeError(f"{fn}(): axis {axis!r} names an axis twice")
    return tuple(out)


def _single_axis(fn, axis, ndim):
    """argmax/argmin/cumsum take one axis or None."""
    if axis is not None and isinstance(axis, (tuple, list)):
        raise ShapeError(f"{fn}(): axis must be None or a single int, got {axis!r}")
    return None if axis is None else _axes(fn, axis, ndim)[0]


def _reduced_ones(fn, a, axis, keepdims):
    axes = _axes(fn, axis, a.ndim)
    if keepdims:
        return tuple(one or i in axes for i, one in enumerate(a.ones))
    return tuple(one for i, one in enumerate(a.ones) if i not in axes)


def _count(shape, axes):
    return math.prod(shape[i] for i in axes)


# --- dtype rules (JAX's) -------------------------------------------------------------------

def _promote_integer(dtype):
    """bool and narrow integers accumulate in the default (unsigned) int."""
    if dtype.kind == "b":
        return dtypes.default_int()
    if dtype.kind in "iu":
        default = dtypes.canonicalize_dtype(np.int64 if dtype.kind == "i" else np.uint64)
        return default if dtype.itemsize < default.itemsize else dtype
    return dtype


def _upcast_f16(dtype):
    """float16 is accumulated in float32, as in JAX."""
    return dtypes.float32 if dtype == dtypes.float16 else dtype


def _sum_dtype(fn, a_dtype, dtype=None, promote_integers=True):
    if dtype is not None:
        return user_dtype(fn, dtype)
    return _promote_integer(a_dtype) if promote_integers else a_dtype


def _mean_dtype(fn, a_dtype, dtype=None):
    return dtypes.to_inexact(a_dtype)[0] if dtype is None else user_dtype(fn, dtype)


def _var_dtypes(fn, a_dtype, dtype=None):
    """(result dtype, computation dtype) of var/std: the variance of complex is real."""
    if dtype is not None:
        out = user_dtype(fn, dtype)
        if not dtypes.is_inexact(out):
            raise ShapeError(f"{fn}(): dtype must be a float or complex dtype, got {out}")
        if a_dtype.kind == "c" and out.kind != "c":
            raise ShapeError(f"{fn}(): a real dtype for the variance of complex values is not "
                             f"supported (as in JAX); take the result's .real instead")
        return out, _upcast_f16(out)
    if not dtypes.is_inexact(a_dtype):
        out = dtypes.to_inexact(a_dtype)[0]
        return out, out
    return np.zeros((), a_dtype).real.dtype, _upcast_f16(a_dtype)


def _cumulative_dtypes(fn, a_dtype, dtype=None):
    """(result, computation) dtypes of cumsum/cumprod: only bool is promoted."""
    if dtype is None:
        out = dtypes.default_int() if a_dtype.kind == "b" else a_dtype
        return out, out
    out = user_dtype(fn, dtype)
    # a bool result accumulates (a != 0) in int, as in JAX
    return out, dtypes.default_int() if out.kind == "b" else out


# --- registration --------------------------------------------------------------------------

def _reduction(name, impl, result_dtype, *, axis_rule=_reduced_ones, differentiable=True,
               method=True, aliases=()):
    """Register a reduction whose params are (axis, out, keepdims, *dtype params).

    ``result_dtype(fn, a_dtype, **dtype_params)`` gives the result dtype, for the
    rule and (with the runtime dtype) for the impl alike.
    """
    def rule(a, axis=None, out=None, keepdims=False, **params):
        no_out(name, out)
        a = array_operand(name, "a", a)
        return ArrayType(result_dtype(name, a.dtype, **params),
                         axis_rule(name, a, axis, keepdims), False)

    op = Op(name, impl, rule, static=("axis", "keepdims", "dtype", "promote_integers",
                                      "ddof", "correction"),
            promote=("a",), differentiable=differentiable, aliases=aliases)
    if method:
        register_method(name)
    return op


def _accumulate(np_fn, fn, a, axis, result_dtype, keepdims):
    """sum/prod of ``a`` in ``result_dtype`` (float16 accumulated in float32)."""
    a = np.asarray(a)
    total = np_fn(a, axis=_axes(fn, axis, a.ndim), dtype=_upcast_f16(result_dtype),
                  keepdims=keepdims)
    return np.asarray(total).astype(result_dtype, copy=False)


def sum(a, axis=None, dtype=None, out=None, keepdims=False, *, promote_integers=True):
    result_dtype = _sum_dtype("sum", np.asarray(a).dtype, dtype, promote_integers)
    return _accumulate(np.sum, "sum", a, axis, result_dtype, keepdims)


def prod(a, axis=None, dtype=None, out=None, keepdims=False, *, promote_integers=True):
    result_dtype = _sum_dtype("prod", np.asarray(a).dtype, dtype, promote_integers)
    return _accumulate(np.prod, "prod", a, axis, result_dtype, keepdims)


_reduction("sum", sum, _sum_dtype, aliases=(np.sum,))
_reduction("prod", prod, _sum_dtype, aliases=(np.prod,))


def _same_dtype(fn, a_dtype):
    return a_dtype


def max(a, axis=None, out=None, keepdims=False):
    """Largest element; raises for an empty reduction (there is no identity to return)."""
    a = np.asarray(a)
    axes = _axes("max", axis, a.ndim)
    return _signed_zero(np.max(a, axis=axes, keepdims=keepdims), a, axes, keepdims, False)


def min(a, axis=None, out=None, keepdims=False):
    """Smallest element; raises for an empty reduction (there is no identity to return)."""
    a = np.asarray(a)
    axes = _axes("min", axis, a.ndim)
    return _signed_zero(np.min(a, axis=axes, keepdims=keepdims), a, axes, keepdims, True)


def _signed_zero(out, a, axes, keepdims, negative_wins):
    """A zero max is +0. if the slice holds a +0. and a zero min -0. if it holds a -0., as
    in JAX (NumPy returns whichever zero its loop meets)."""
    if a.dtype.kind != "f" or not np.any(out == 0):
        return out
    sign = np.signbit(a) if negative_wins else ~np.signbit(a)
    found = np.any((a == 0) & sign, axis=axes, keepdims=keepdims)
    magnitude = np.abs(out)
    return np.where(out == 0, np.where(found == negative_wins, -magnitude, magnitude), out)


register_name("amax", _reduction("max", max, _same_dtype, aliases=(np.max, np.amax)))
register_name("amin", _reduction("min", min, _same_dtype, aliases=(np.min, np.amin)))


def _bool_dtype(fn, a_dtype):
    return dtypes.bool_


def any(a, axis=None, out=None, keepdims=False):
    a = np.asarray(a)
    return np.any(a, axis=_axes("any", axis, a.ndim), keepdims=keepdims)


def all(a, axis=None, out=None, keepdims=False):
    a = np.asarray(a)
    return np.all(a, axis=_axes("all", axis, a.ndim), keepdims=keepdims)


_reduction("any", any, _bool_dtype, differentiable=False, aliases=(np.any,))
_reduction("all", all, _bool_dtype, differentiable=False, aliases=(np.all,))


def _int_dtype(fn, a_dtype):
    return dtypes.default_int()


def count_nonzero(a, axis=None, keepdims=False):
    a = np.asarray(a)
    count = np.count_nonzero(a, axis=_axes("count_nonzero", axis, a.ndim), keepdims=keepdims)
    return np.asarray(count).astype(dtypes.default_int())


_reduction("count_nonzero", count_nonzero, _int_dtype, differentiable=False, method=False,
           aliases=(np.count_nonzero,))


def _arg_ones(fn, a, axis, keepdims):
    axis = _single_axis(fn, axis, a.ndim)
    return _reduced_ones(fn, a, axis, keepdims)


def argmax(a, axis=None, out=None, keepdims=False):
    """Index of the first largest element (of the flattened array when axis is None)."""
    a = np.asarray(a)
    index = np.argmax(a, axis=_single_axis("argmax", axis, a.ndim), keepdims=keepdims)
    return np.asarray(index).astype(dtypes.default_int())


def argmin(a, axis=None, out=None, keepdims=False):
    """Index of the first smallest element (of the flattened array when axis is None)."""
    a = np.asarray(a)
    index = np.argmin(a, axis=_single_axis("argmin", axis, a.ndim), keepdims=keepdims)
    return np.asarray(index).astype(dtypes.default_int())


_reduction("argmax", argmax, _int_dtype, axis_rule=_arg_ones, differentiable=False,
           aliases=(np.argmax,))
_reduction("argmin", argmin, _int_dtype, axis_rule=_arg_ones, differentiable=False,
           aliases=(np.argmin,))


# --- mean, var, std: sums divided by counts, an empty reduction gives nan as in JAX ------------

def mean(a, axis=None, dtype=None, out=None, keepdims=False):
    a = np.asarray(a)
    result_dtype = _mean_dtype("mean", a.dtype, dtype)
    axes = _axes("mean", axis, a.ndim)
    total = np.sum(a, axis=axes, dtype=_upcast_f16(result_dtype), keepdims=keepdims)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.asarray(total / _count(a.shape, axes)).astype(result_dtype)


_reduction("mean", mean, _mean_dtype, aliases=(np.mean,))


def _correction(fn, ddof, correction):
    if correction is None:
        return ddof
    if ddof != 0:
        raise ShapeError(f"{fn}(): pass ddof or correction, not both")
    return correction


def _variance(fn, a, axis, dtype, ddof, keepdims, correction):
    """(variance in the computation dtype, result dtype); nan where N - ddof <= 0."""
    a = np.asarray(a)
    result_dtype, computation = _var_dtypes(fn, a.dtype, dtype)
    axes = _axes(fn, axis, a.ndim)
    x = a.astype(computation)
    n = _count(a.shape, axes)
    denominator = n - _correction(fn, ddof, correction)
    with np.errstate(invalid="ignore", divide="ignore"):
        centered = x - np.sum(x, axis=axes, keepdims=True) / n
        squares = (centered * centered.conj()).real if computation.kind == "c" else centered ** 2
        total = np.sum(squares, axis=axes, keepdims=keepdims)
        if denominator <= 0:
            return np.full_like(total, np.nan), result_dtype
        return total / denominator, result_dtype


def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, correction=None):
    variance, result_dtype = _variance("var", a, axis, dtype, ddof, keepdims, correction)
    return np.asarray(variance).astype(result_dtype)


def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, correction=None):
    variance, result_dtype = _variance("std", a, axis, dtype, ddof, keepdims, correction)
    return np.asarray(np.sqrt(variance)).astype(result_dtype)


def _var_dtype(fn, a_dtype, dtype=None, ddof=0, correction=None):
    _correction(fn, ddof, correction)
    return _var_dtypes(fn, a_dtype, dtype)[0]


_reduction("var", var, _var_dtype, aliases=(np.var,))
_reduction("std", std, _var_dtype, aliases=(np.std,))


# --- cumulative ----------------------------------------------------------------------------

def _cumulative(np_fn, fn, a, axis, dtype):
    a = np.asarray(a)
    if axis is None or a.ndim == 0:  # the flattened array, as in JAX
        a = a.reshape(-1)
    axis = _single_axis(fn, 0 if axis is None else axis, a.ndim)
    result_dtype, computation = _cumulative_dtypes(fn, a.dtype, dtype)
    if result_dtype.kind == "b":
        a = a != 0
    return np.asarray(np_fn(a, axis=axis, dtype=computation)).astype(result_dtype, copy=False)


def cumsum(a, axis=None, dtype=None, out=None):
    return _cumulative(np.cumsum, "cumsum", a, axis, dtype)


def cumprod(a, axis=None, dtype=None, out=None):
    return _cumulative(np.cumprod, "cumprod", a, axis, dtype)


def _cumulative_rule(name):
    def rule(a, axis=None, dtype=None, out=None):
        no_out(name, out)
        a = array_operand(name, "a", a)
        result_dtype = _cumulative_dtypes(name, a.dtype, dtype)[0]
        if axis is None or a.ndim == 0:
            _single_axis(name, 0 if axis is None else axis, 1)
            return ArrayType(result_dtype, (builtins.all(a.ones),), False)
        _single_axis(name, axis, a.ndim)
        return ArrayType(result_dtype, a.ones, False)
    return rule


for _name, _fn, _np_fn in (("cumsum", cumsum, np.cumsum), ("cumprod", cumprod, np.cumprod)):
    Op(_name, _fn, _cumulative_rule(_name), static=("axis", "dtype"), promote=("a",),
       aliases=(_np_fn,))
    register_method(_name)
