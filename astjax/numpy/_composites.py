"""Common NumPy functions written with ``astjax.numpy`` ops (``diff``, ``isclose``, ``triu``,
``logaddexp``, ``nansum``, ``kron``, ``sinc``, ...): plain functions that the compiler reads
like user code, so ``jit``, ``grad`` and ``vmap`` go through them with no rules of their own.
Semantics (arguments, dtypes) follow JAX 0.10.2. Where a list's length or an axis decides
the code, it is a constant when code is generated; repeated steps recurse on a constant
count (each level its own specialization, so shapes may change from one to the next).
"""
import math

import numpy as np

import astjax.numpy as jnp

from .._src import dtypes
from .._src.ad.custom import custom_jvp
from .._src.lax.control_flow import fori_loop
from .._src.random.checks import static_helper  # evaluated while generating code
from ._sorting import _normalize_axis
from .linalg import _is_inexact

_INV_LN2 = 1 / math.log(2)  # a Python float: weak, as JAX's constants


@static_helper
def _is_bool(dtype):
    return dtype.kind == "b"


@static_helper
def _to_inexact(dtype):
    return dtypes.to_inexact(dtype)[0]


def _inexact(x):
    """``x`` in an inexact dtype as JAX's promote_args_inexact: bools and integers up to 32
    bits become float32, 64-bit ones the default float."""
    x = jnp.asarray(x)
    if not _is_inexact(x.dtype):
        return x.astype(_to_inexact(x.dtype))
    return x


def _inexact2(a, b):
    """``a`` and ``b`` promoted together, then to an inexact dtype (promote_args_inexact).
    When either is inexact, arithmetic with it promotes the other (keeping a Python scalar
    weak); else both take the inexact dtype of their promoted type (found from empty
    slices, so nothing is computed)."""
    a = jnp.asarray(a)
    b = jnp.asarray(b)
    if not _is_inexact(a.dtype) and not _is_inexact(b.dtype):
        dt = _to_inexact((jnp.ravel(a)[:0] + jnp.ravel(b)[:0]).dtype)
        return a.astype(dt), b.astype(dt)
    return a, b


# ---- angles, elementwise -------------------------------------------------------------

def deg2rad(x):
    """``x`` degrees in radians (ints become the default float)."""
    x = _inexact(x)
    return x * (np.pi / 180)


def rad2deg(x):
    """``x`` radians in degrees (ints become the default float)."""
    x = _inexact(x)
    return x * (180 / np.pi)


def radians(x):
    """As ``deg2rad``."""
    return deg2rad(x)


def degrees(x):
    """As ``rad2deg``."""
    return rad2deg(x)


def hypot(x1, x2):
    """``sqrt(x1**2 + x2**2)`` without overflow, as JAX computes it (inf if either leg is)."""
    x1, x2 = _inexact2(x1, x2)
    x1 = jnp.abs(x1)
    x2 = jnp.abs(x2)
    idx_inf = jnp.logical_or(jnp.isinf(x1), jnp.isinf(x2))
    big = jnp.maximum(x1, x2)
    small = jnp.minimum(x1, x2)
    safe = jnp.where(big == 0, jnp.ones_like(big), big)
    out = jnp.where(big == 0, big, big * jnp.sqrt(1 + jnp.square(small / safe)))
    return jnp.where(idx_inf, jnp.full_like(out, np.inf), out)


@custom_jvp
def logaddexp(x1, x2):
    """``log(exp(x1) + exp(x2))`` without overflow. Its derivative is JAX's rule (below):
    differentiating the formula where x1 == x2 meets the kinks of max and |x| and gave
    slopes 1 and 0 instead of 1/2 each."""
    x1, x2 = _inexact2(x1, x2)
    amax = jnp.maximum(x1, x2)
    delta = x1 - x2
    return jnp.where(jnp.isnan(delta), x1 + x2,
                     amax + jnp.log1p(jnp.exp(-jnp.abs(delta))))


def _logaddexp_reduce(array, axis=0, dtype=None, out=None, keepdims=False):
    """``jnp.logaddexp.reduce``: ``log(sum(exp(array)))`` along ``axis`` (0 by default, as
    JAX's ufunc method), shifted by the maximum so that it does not overflow."""
    a = _inexact(array)
    if dtype is not None:
        a = a.astype(dtype)
    shift = jnp.max(a, axis=axis, keepdims=True)
    shift = jnp.where(jnp.isfinite(shift), shift, jnp.zeros_like(shift))
    total = jnp.sum(jnp.exp(a - shift), axis=axis, keepdims=keepdims)
    return jnp.log(total) + jnp.reshape(shift, total.shape)


@logaddexp.defjvp
def _logaddexp_jvp(primals, tangents):
    """JAX's: t1 exp(x1 - out) + t2 exp(x2 - out), +inf read as 0 (no inf - inf)."""
    (x1, x2), (t1, t2) = primals, tangents
    out = logaddexp(x1, x2)
    return out, _weighted_tangents(jnp.exp, out, x1, x2, t1, t2)


def _weighted_tangents(exp, out, x1, x2, t1, t2):
    return (t1 * exp(_finite_above(x1) - _finite_above(out)) +
            t2 * exp(_finite_above(x2) - _finite_above(out)))


def _finite_above(x):
    x = jnp.asarray(x)
    return jnp.where(jnp.isposinf(x), jnp.zeros_like(x), x)


logaddexp.reduce = _logaddexp_reduce  # (JAX's logaddexp is a ufunc; this is its one method)


@custom_jvp
def logaddexp2(x1, x2):
    """``log2(2**x1 + 2**x2)`` without overflow (its derivative JAX's rule, as logaddexp's)."""
    x1, x2 = _inexact2(x1, x2)
    amax = jnp.maximum(x1, x2)
    delta = x1 - x2
    return jnp.where(jnp.isnan(delta), x1 + x2,
                     amax + jnp.log1p(jnp.exp2(-jnp.abs(delta))) * _INV_LN2)


@logaddexp2.defjvp
def _logaddexp2_jvp(primals, tangents):
    (x1, x2), (t1, t2) = primals, tangents
    out = logaddexp2(x1, x2)
    return out, _weighted_tangents(jnp.exp2, out, x1, x2, t1, t2)


def sinc(x):
    """``sin(pi x) / (pi x)``, 1 at 0. At exactly 0 the value comes from the Taylor
    polynomial ``1 - (pi x)**2/6 + (pi x)**4/120``, so derivatives there (up to the fourth)
    are right rather than those of the guard (JAX uses a custom JVP for the same reason)."""
    x = _inexact(x)
    is_zero = x == 0
    safe = jnp.where(is_zero, jnp.ones_like(x), x)
    px = np.pi * safe
    p0 = np.pi * x
    p2 = p0 * p0
    return jnp.where(is_zero, 1 - p2 / 6 + p2 * p2 / 120, jnp.sin(px) / px)


def heaviside(x1, x2):
    """0 where ``x1 < 0``, 1 where ``x1 > 0``, ``x2`` where ``x1 == 0`` (inexact dtype)."""
    x1, x2 = _inexact2(x1, x2)
    zero = jnp.zeros_like(x1)
    return jnp.where(x1 < 0, zero, jnp.where(x1 > 0, jnp.ones_like(x1), x2))


# ---- comparisons ----------------------------------------------------------------------

@static_helper
def _real_dtype(dtype):
    return np.array(0, dtype).real.dtype


def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Where ``|a - b| <= atol + rtol * |b|`` (infinities equal to themselves; NaNs only
    with ``equal_nan``), as ``jnp.isclose``."""
    a, b = _inexact2(a, b)
    dt = _real_dtype((a - b).dtype)
    rtol = jnp.asarray(rtol).astype(dt)
    atol = jnp.asarray(atol).astype(dt)
    in_range = jnp.abs(a - b) <= atol + rtol * jnp.abs(b)
    out = jnp.logical_or(a == b, jnp.logical_and(jnp.isfinite(b), in_range))
    if equal_nan:
        return jnp.logical_or(out, jnp.logical_and(jnp.isnan(a), jnp.isnan(b)))
    return out


def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Whether ``isclose`` holds everywhere (a bool array of shape ())."""
    return jnp.all(isclose(a, b, rtol, atol, equal_nan))


# ---- differences ----------------------------------------------------------------------

@static_helper
def _diff_axis(n, axis, ndim):
    if not isinstance(n, int) or isinstance(n, bool):
        raise TypeError(f"diff(): n must be an int, got {n!r}")
    if n < 0:
        raise ValueError(f"order must be non-negative but got {n}")
    if ndim == 0 and n > 0:
        raise ValueError("diff requires input that is at least one dimensional")
    if n == 0:
        return 0
    return _normalize_axis.fn(axis, ndim, "diff")


def _edge(v, a):
    """``prepend``/``append`` for ``a`` (its diff axis last): a scalar is broadcast to one
    slice of ``a``; an array is taken as it is, its axis moved likewise by the caller."""
    v = jnp.asarray(v)
    if v.ndim == 0:  # added, not broadcast_to, so that a Python scalar stays weak
        return jnp.zeros_like(a[..., :1]) + v
    return v


def _diff_last(a, n):
    if n == 0:
        return a
    if _is_bool(a.dtype):
        return _diff_last(a[..., 1:] != a[..., :-1], n - 1)
    return _diff_last(a[..., 1:] - a[..., :-1], n - 1)


def diff(a, n=1, axis=-1, prepend=None, append=None):
    """The ``n``-th differences of ``a`` along ``axis``, with ``prepend``/``append`` joined
    first, as ``jnp.diff`` (bools: ``!=``)."""
    a = jnp.asarray(a)
    ax = _diff_axis(n, axis, a.ndim)
    if n == 0:
        return a
    a = jnp.moveaxis(a, ax, -1)
    if prepend is not None:
        p = jnp.asarray(prepend)
        if p.ndim:
            p = jnp.moveaxis(p, ax, -1)
        a = jnp.concatenate((_edge(p, a), a), axis=-1)
    if append is not None:
        q = jnp.asarray(append)
        if q.ndim:
            q = jnp.moveaxis(q, ax, -1)
        a = jnp.concatenate((a, _edge(q, a)), axis=-1)
    return jnp.moveaxis(_diff_last(a, n), -1, ax)


def ediff1d(ary, to_end=None, to_begin=None):
    """The differences of ``ary`` flattened, with ``to_begin``/``to_end`` (cast to ``ary``'s
    dtype, as in JAX) joined on."""
    arr = jnp.ravel(jnp.asarray(ary))
    result = arr[1:] - arr[:-1]
    if to_begin is not None:
        result = jnp.concatenate((jnp.ravel(jnp.asarray(to_begin).astype(arr.dtype)), result))
    if to_end is not None:
        result = jnp.concatenate((result, jnp.ravel(jnp.asarray(to_end).astype(arr.dtype))))
    return result


def trapezoid(y, x=None, dx=1.0, axis=-1):
    """The integral of ``y`` along ``axis`` by the trapezoidal rule, at points ``x`` (or
    spaced ``dx``), as ``jnp.trapezoid``."""
    y = jnp.moveaxis(_inexact(y), axis, -1)
    if x is None:
        d = jnp.asarray(dx)
    else:
        x = jnp.asarray(x)
        if x.ndim == 1:
            d = diff(x)
        else:
            d = jnp.moveaxis(diff(x, 1, axis), axis, -1)
    return 0.5 * jnp.sum(d * (y[..., 1:] + y[..., :-1]), axis=-1)


# ---- triangles and diagonals ----------------------------------------------------------

@static_helper
def _check_matrix(ndim, fn):
    if ndim < 1:
        raise ValueError(f"{fn}(): needs an array of rank >= 1")


def _lower_mask(m, k):
    """Where column - row <= k, for the last two axes of ``m``."""
    rows = jnp.expand_dims(jnp.arange(m.shape[-2]), -1)
    cols = jnp.arange(m.shape[-1])
    return cols - rows <= k


def tril(m, k=0):
    """``m`` with the entries above the ``k``-th diagonal zeroed (a 1-D ``m`` is repeated
    as rows first, as in NumPy)."""
    m = jnp.asarray(m)
    _check_matrix(m.ndim, "tril")
    if m.ndim == 1:
        m = jnp.broadcast_to(m, m.shape + m.shape)
    return jnp.where(_lower_mask(m, k), m, jnp.zeros_like(m))


def triu(m, k=0):
    """``m`` with the entries below the ``k``-th diagonal zeroed (a 1-D ``m`` is repeated
    as rows first, as in NumPy)."""
    m = jnp.asarray(m)
    _check_matrix(m.ndim, "triu")
    if m.ndim == 1:
        m = jnp.broadcast_to(m, m.shape + m.shape)
    return jnp.where(_lower_mask(m, k - 1), jnp.zeros_like(m), m)


@static_helper
def _diagonal_axes(ndim, axis1, axis2):
    if ndim < 2:
        raise ValueError("diagonal requires an array of at least two dimensions.")
    a1 = _normalize_axis.fn(axis1, ndim, "diagonal")
    a2 = _normalize_axis.fn(axis2, ndim, "diagonal")
    if a1 == a2:
        raise ValueError("axis1 and axis2 can not be same.")
    return a1, a2


def diagonal(a, offset=0, axis1=0, axis2=1):
    """The ``offset``-th diagonal of ``a`` over ``axis1``, ``axis2``, as the last axis of
    the result, as ``jnp.diagonal``."""
    a = jnp.asarray(a)
    a1, a2 = _diagonal_axes(a.ndim, axis1, axis2)
    a = jnp.moveaxis(a, (a1, a2), (-2, -1))
    if offset >= 0:
        a = a[..., :, offset:]
    else:
        a = a[..., -offset:, :]
    n = jnp.minimum(a.shape[-2], a.shape[-1])
    i = jnp.arange(n)
    return a[..., i, i]


# ---- reductions that skip NaNs --------------------------------------------------------

def nansum(a, axis=None, dtype=None, keepdims=False):
    """``sum`` with NaNs counted as 0 (JAX's ``out``, ``initial``, ``where`` are not taken)."""
    a = jnp.asarray(a)
    if _is_inexact(a.dtype):
        a = jnp.where(jnp.isnan(a), jnp.zeros_like(a), a)
    return jnp.sum(a, axis=axis, dtype=dtype, keepdims=keepdims)


def nanmean(a, axis=None, dtype=None, keepdims=False):
    """``mean`` of the values that are not NaN (NaN where all are)."""
    a = jnp.asarray(a)
    if not _is_inexact(a.dtype):
        return jnp.mean(a, axis=axis, dtype=dtype, keepdims=keepdims)
    count = jnp.sum(jnp.logical_not(jnp.isnan(a)), axis=axis, keepdims=keepdims)
    return nansum(a, axis, dtype, keepdims) / count


def nanmax(a, axis=None, keepdims=False):
    """``max`` of the values that are not NaN (NaN where all are)."""
    a = jnp.asarray(a)
    if not _is_inexact(a.dtype):
        return jnp.max(a, axis=axis, keepdims=keepdims)
    nan = jnp.isnan(a)
    out = jnp.max(jnp.where(nan, jnp.full_like(a, -np.inf), a), axis=axis, keepdims=keepdims)
    all_nan = jnp.all(nan, axis=axis, keepdims=keepdims)
    return jnp.where(all_nan, jnp.full_like(out, np.nan), out)


def nanmin(a, axis=None, keepdims=False):
    """``min`` of the values that are not NaN (NaN where all are)."""
    a = jnp.asarray(a)
    if not _is_inexact(a.dtype):
        return jnp.min(a, axis=axis, keepdims=keepdims)
    nan = jnp.isnan(a)
    out = jnp.min(jnp.where(nan, jnp.full_like(a, np.inf), a), axis=axis, keepdims=keepdims)
    all_nan = jnp.all(nan, axis=axis, keepdims=keepdims)
    return jnp.where(all_nan, jnp.full_like(out, np.nan), out)


# ---- products -------------------------------------------------------------------------

def _interleave(a, i, n):
    """``a`` (rank ``n``) with a new axis of length 1 after each of its first ``n - i``
    original axes, counting from axis ``i``."""
    if i == n:
        return a
    return _interleave(jnp.expand_dims(a, 2 * i + 1), i + 1, n)


def _merge_pairs(x, k, n):
    """``x`` (rank ``2 n``, after ``k`` merges) with axes ``2j, 2j + 1`` merged, ``j >= k``."""
    if k == n:
        return x
    x = jnp.reshape(x, x.shape[:k] + (x.shape[k] * x.shape[k + 1],) + x.shape[k + 2:])
    return _merge_pairs(x, k + 1, n)


@static_helper
def _ones(n):
    return (1,) * n


def kron(a, b):
    """The Kronecker product of ``a`` and ``b`` (the lower rank padded with leading 1s)."""
    a = jnp.asarray(a)
    b = jnp.asarray(b)
    if a.ndim < b.ndim:
        a = jnp.reshape(a, _ones(b.ndim - a.ndim) + a.shape)
    if b.ndim < a.ndim:
        b = jnp.reshape(b, _ones(a.ndim - b.ndim) + b.shape)
    n = a.ndim
    out = _interleave(a, 0, n) * _interleave_before(b, 0, n)
    return _merge_pairs(out, 0, n)


def _interleave_before(b, i, n):
    """``b`` (rank ``n``) with a new axis of length 1 before each of its axes."""
    if i == n:
        return b
    return _interleave_before(jnp.expand_dims(b, 2 * i), i + 1, n)


def polyval(p, x):
    """The polynomial with coefficients ``p`` (highest power first, along ``p``'s first
    axis) at ``x``, by Horner's rule in a ``fori_loop`` (as JAX's scan), in the promoted
    dtype (ints stay ints), as ``jnp.polyval`` (whose ``unroll`` is not taken)."""
    p = jnp.asarray(p)
    x = jnp.asarray(x)
    return fori_loop(0, p.shape[0], lambda i, y: y * x + p[i], jnp.zeros_like(x + p[0]))


__all__ = ["allclose", "deg2rad", "degrees", "diagonal", "diff", "ediff1d", "heaviside",
           "hypot", "isclose", "kron", "logaddexp", "logaddexp2", "nanmax", "nanmean", "nanmin",
           "nansum", "polyval", "rad2deg", "radians", "sinc", "trapezoid", "tril", "triu"]
