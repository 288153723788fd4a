"""Reductions, statistics, polynomials and ``gradient`` written with ``astjax.numpy`` ops
(``nanvar``, ``digitize``, ``bincount``, ``histogram``, ``polyadd``, ``vecdot``, ...), read by
the compiler like user code, as those in ``_composites``; the set functions, ``unique``,
``nonzero`` and partial sorts are in ``_setops`` and exported from here. Semantics and
dtypes follow JAX 0.10.2.
"""
import numpy as np

import astjax.numpy as jnp

from .._src.ir.types import Static
from .._src.lax.common import LaxFunction
from .._src.lax.control_flow import fori_loop
from .._src.random.checks import static_helper  # evaluated while generating code
from ._composites import _inexact, _is_bool, _to_inexact
from ._composites2 import convolve, searchsorted
from ._linalg_decomp import eigenvalues
from ._setops import (  # noqa: F401  (exported)
    _checked_size, _index_dtype, _promote, _result_size, _static_arg, argpartition, argwhere,
    compress, extract, flatnonzero, intersect1d, isin, lexsort, nonzero, partition, setdiff1d,
    setxor1d, union1d, unique, unique_all, unique_counts, unique_inverse, unique_values)
from ._sorting import _normalize_axis
from .linalg import _is_inexact


# ---- reductions that skip NaNs --------------------------------------------------------

@static_helper
def _check_unsupported(fn, **args):
    for name, value in args.items():
        if value is not None:
            raise NotImplementedError(f"{fn}(): the {name!r} argument is not supported")
    return fn


def _counted(a, where):
    """Where ``a`` is not NaN (and ``where`` holds, if given)."""
    keep = jnp.logical_not(jnp.isnan(a))
    if where is None:
        return keep
    return jnp.logical_and(keep, where)


def nanvar(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, where=None, mean=None):
    """The variance of the values that are not NaN (and where ``where`` holds), about
    their mean or the given ``mean``; NaN where fewer than ``ddof + 1``, as ``jnp.nanvar``
    (``out`` not taken)."""
    _check_unsupported("nanvar", out=out)
    a = _inexact(a)
    if dtype is not None:
        a = a.astype(dtype)
    keep = _counted(a, where)
    zero = jnp.zeros_like(a)
    if mean is None:
        avg = (jnp.sum(jnp.where(keep, a, zero), axis=axis, keepdims=True)
               / jnp.sum(keep, axis=axis, keepdims=True).astype(a.dtype))
    else:
        avg = jnp.asarray(mean).astype(a.dtype)
    centered = jnp.where(keep, a - avg, zero)
    sq = jnp.real(centered * jnp.conj(centered))
    total = jnp.sum(sq, axis=axis, keepdims=keepdims)
    n = jnp.sum(keep, axis=axis, keepdims=keepdims) - ddof
    empty = n <= 0
    out = total / jnp.where(empty, jnp.ones_like(n), n).astype(total.dtype)
    return jnp.where(empty, jnp.full_like(out, np.nan), out)


def nanstd(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, where=None, mean=None):
    """The square root of ``nanvar``."""
    return jnp.sqrt(nanvar(a, axis, dtype, out, ddof, keepdims, where, mean))


def nanprod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    """``prod`` with NaNs (and elements where ``where`` is false) counted as 1, times
    ``initial`` if given (``out`` not taken)."""
    _check_unsupported("nanprod", out=out)
    a = jnp.asarray(a)
    if _is_inexact(a.dtype):
        a = jnp.where(_counted(a, where), a, jnp.ones_like(a))
    elif where is not None:
        a = jnp.where(where, a, jnp.ones_like(a))
    res = jnp.prod(a, axis=axis, dtype=dtype, keepdims=keepdims)
    if initial is None:
        return res
    return res * jnp.asarray(initial).astype(res.dtype)


def _nanarg(a, axis, keepdims, fill, largest):
    a = jnp.asarray(a)
    keep = bool(keepdims)
    if not _is_inexact(a.dtype):
        if largest:
            return jnp.argmax(a, axis=axis, keepdims=keep)
        return jnp.argmin(a, axis=axis, keepdims=keep)
    nan = jnp.isnan(a)
    b = jnp.where(nan, jnp.full_like(a, fill), a)
    if largest:
        res = jnp.argmax(b, axis=axis, keepdims=keep)
    else:
        res = jnp.argmin(b, axis=axis, keepdims=keep)
    all_nan = jnp.all(nan, axis=axis, keepdims=keep)
    return jnp.where(all_nan, jnp.full_like(res, -1), res)


def nanargmax(a, axis=None, out=None, keepdims=None):
    """The index of the largest value that is not NaN (-1 where all are)."""
    _check_unsupported("nanargmax", out=out)
    return _nanarg(a, axis, keepdims, -np.inf, True)


def nanargmin(a, axis=None, out=None, keepdims=None):
    """The index of the smallest value that is not NaN (-1 where all are)."""
    _check_unsupported("nanargmin", out=out)
    return _nanarg(a, axis, keepdims, np.inf, False)


def _promote_inexact(a, b):
    """``a`` and ``b`` both in the inexact dtype of their promoted type (a Python scalar
    weak), as JAX's promote_dtypes_inexact."""
    a = jnp.asarray(a)
    b = jnp.asarray(b)
    dt = _to_inexact((jnp.ravel(a)[:0] + jnp.ravel(b)[:0]).dtype)
    return a.astype(dt), b.astype(dt)


# ---- membership, bins -----------------------------------------------------------------

def _check_bins(ndim):
    if ndim != 1:
        raise ValueError("digitize: bins must be a 1-dimensional array")
    return ndim


def digitize(x, bins, right=False, method=None):
    """The index of the bin of ``bins`` (increasing or decreasing) holding each ``x``
    (int32), as ``jnp.digitize``."""
    x = jnp.asarray(x)
    bins = jnp.asarray(bins)
    _check_bins(bins.ndim)
    side = "left" if right else "right"
    n = bins.shape[0]
    up = searchsorted(bins, x, side)
    down = n - searchsorted(jnp.flip(bins), x, side)
    # the ends compared through sums of (at most) one element: no bins, increasing
    increasing = jnp.sum(bins[-1:]) >= jnp.sum(bins[:1])
    return jnp.where(increasing, up, down.astype(np.int32))


@static_helper
def _check_bincount(kind, ndim, minlength):
    if kind not in "iub":
        raise TypeError("x argument to bincount must have an integer type")
    if ndim != 1:
        raise ValueError("only 1-dimensional input supported.")
    return _checked_size(minlength, "bincount")


def bincount(x, weights=None, minlength=0, length=None):
    """The number of times each value 0, 1, ... occurs in the non-negative ints ``x`` (or
    the sum of their ``weights``), as ``jnp.bincount``: negative values count as 0, values
    past ``length`` are dropped; ``length`` is needed in compiled code."""
    x = jnp.asarray(x)
    minlength = _check_bincount(x.dtype.kind, x.ndim, _static_arg(minlength, "minlength",
                                                                   "bincount"))
    x = x.astype(np.int32) if _is_bool(x.dtype) else x
    need = jnp.max(jnp.concatenate((x + 1, jnp.full((1,), minlength, x.dtype))))
    length = _result_size(need, length, "bincount")
    if weights is None:
        w = jnp.ones(x.shape, _index_dtype())
    else:
        w = jnp.asarray(weights)
    idx = jnp.clip(x, 0, length)  # past the end: an extra bin, dropped
    return jnp.zeros(length + 1, w.dtype).at[idx].add(w)[:-1]


@static_helper
def _bins_kind(ndim):
    if ndim not in (0, 1):
        raise ValueError("histogram: bins must be an int or a 1-dimensional array")
    return ndim == 1


@static_helper
def _num_bins(bins):
    if not isinstance(bins, (int, np.integer)) or isinstance(bins, bool) or bins < 1:
        raise TypeError(f"histogram: bins must be a positive int known when code is "
                        f"generated, or an array of edges; got {bins!r}")
    return int(bins) + 1


def histogram_bin_edges(a, bins=10, range=None, weights=None):
    """The edges of ``histogram``'s bins: ``bins`` itself if an array, else ``bins + 1``
    evenly spaced over ``range`` (``a``'s min and max by default; widened by 0.5 each way
    when they are equal)."""
    a = jnp.asarray(a)
    dt = _to_inexact(a.dtype)
    if _bins_kind(jnp.asarray(bins).ndim):
        return jnp.asarray(bins).astype(dt)
    num = _num_bins(_static_arg(bins, "bins", "histogram"))
    if range is None:
        lo = jnp.min(a).astype(dt)
        hi = jnp.max(a).astype(dt)
    else:
        lo = jnp.asarray(range[0]).astype(dt)
        hi = jnp.asarray(range[1]).astype(dt)
    same = lo == hi
    lo = jnp.where(same, lo - 0.5, lo)
    hi = jnp.where(same, hi + 0.5, hi)
    # JAX's linspace, written out (jnp.linspace has no Numba lowering): lo (1 - t) + hi t
    # at t = i / bins, and hi itself last
    t = (jnp.arange(num - 1) / (num - 1)).astype(dt)
    return jnp.concatenate((lo * (1 - t) + hi * t, jnp.reshape(hi, (1,))))


def histogram(a, bins=10, range=None, weights=None, density=None):
    """The counts (or summed ``weights``) of ``a``'s values in each bin, and the bin
    edges, as ``jnp.histogram`` (the last bin includes its right edge; values outside
    the edges are left out)."""
    if weights is None:
        a = _inexact(a)
        w = jnp.ones_like(a)
    else:
        a, w = _promote_inexact(a, weights)
    edges = histogram_bin_edges(a, bins, range)
    n = edges.shape[0]
    idx = searchsorted(edges, a, "right")
    idx = jnp.where(a == edges[-1], n - 1, idx)
    counts = jnp.zeros(n + 1, w.dtype).at[idx].add(w)[1:-1]
    if density:
        counts = counts / jnp.diff(edges) / jnp.sum(counts)
    return counts, edges


# ---- equality -------------------------------------------------------------------------

def _same_shape(a1, a2, i):
    """Whether the axes from ``i`` on are the same length (a run-time bool)."""
    if i == a1.ndim:
        return jnp.asarray(True)
    return jnp.logical_and(a1.shape[i] == a2.shape[i], _same_shape(a1, a2, i + 1))


def array_equal(a1, a2, equal_nan=False):
    """Whether ``a1`` and ``a2`` have the same shape and elements (NaNs equal with
    ``equal_nan``)."""
    a1 = jnp.asarray(a1)
    a2 = jnp.asarray(a2)
    if a1.ndim != a2.ndim:
        return jnp.asarray(False)
    # compared element by element through the flat index, clipped, so that arrays of
    # different lengths (known only at run time) still index safely
    f1 = jnp.ravel(a1)
    f2 = jnp.ravel(a2)
    n2 = f2.shape[0]
    g2 = f2[jnp.minimum(jnp.arange(f1.shape[0]), jnp.maximum(n2 - 1, 0))]
    eq = f1 == g2
    if equal_nan:
        eq = jnp.logical_or(eq, jnp.logical_and(jnp.isnan(f1), jnp.isnan(g2)))
    return jnp.logical_and(_same_shape(a1, a2, 0), jnp.all(eq))


def _broadcastable(a1, a2, i):
    """Whether ``a1`` and ``a2`` (same rank) broadcast along the axes from ``i`` on."""
    if i == a1.ndim:
        return jnp.asarray(True)
    d1 = a1.shape[i]
    d2 = a2.shape[i]
    ok = jnp.logical_or(d1 == d2, jnp.logical_or(d1 == 1, d2 == 1))
    return jnp.logical_and(ok, _broadcastable(a1, a2, i + 1))


@static_helper
def _lead_ones(n):
    return (1,) * max(n, 0)


def array_equiv(a1, a2):
    """Whether ``a1`` and ``a2`` broadcast together and are equal everywhere."""
    a1 = jnp.asarray(a1)
    a2 = jnp.asarray(a2)
    a1 = jnp.reshape(a1, _lead_ones(a2.ndim - a1.ndim) + a1.shape)
    a2 = jnp.reshape(a2, _lead_ones(a1.ndim - a2.ndim) + a2.shape)
    ok = _broadcastable(a1, a2, 0)
    if ok:  # a run-time branch: the comparison only runs when the shapes broadcast
        return jnp.all(a1 == a2)
    return jnp.asarray(False)



# ---- polynomials ----------------------------------------------------------------------

def _right_aligned(p, n):
    """The 1-D ``p`` with zeros before it up to length ``n`` (>= its own)."""
    m = p.shape[0]
    k = jnp.arange(n) - (n - m)
    got = p[jnp.clip(k, 0, jnp.maximum(m - 1, 0))]
    return jnp.where(k >= 0, got, jnp.zeros_like(got))


def polyadd(a1, a2):
    """The sum of two polynomials (coefficients highest power first)."""
    a1, a2 = _promote(a1, a2)
    n = jnp.maximum(a1.shape[0], a2.shape[0])
    return _right_aligned(a1, n) + _right_aligned(a2, n)


def polysub(a1, a2):
    """The difference of two polynomials."""
    a1, a2 = _promote(a1, a2)
    return polyadd(a1, -a2)


def _trim_leading(a):
    a = np.trim_zeros(np.asarray(a), "f")
    return jnp.asarray(a if a.size else np.zeros(1, a.dtype))


def _eager_trim(a1, a2, trim_leading_zeros):
    if trim_leading_zeros and (a1.shape[0] > 1 or a2.shape[0] > 1):
        return _trim_leading(a1), _trim_leading(a2)
    return a1, a2


def _untrimmed(a1, a2, trim_leading_zeros):
    return a1, a2


def _compiled_trim(a1_t, a2_t, trim_t):
    if not isinstance(trim_t, Static) or trim_t.value:
        raise ValueError("polymul(): trim_leading_zeros=True needs the values (the length of "
                         "the result depends on them), so it works only outside compiled "
                         "code, as in JAX")
    return _untrimmed


# the leading zeros trimmed eagerly, as JAX (its trim_zeros needs concrete values)
_trim_pair = LaxFunction(_eager_trim, _compiled_trim)


def polymul(a1, a2, *, trim_leading_zeros=False):
    """The product of two polynomials (inexact dtype), their full convolution."""
    a1, a2 = _promote_inexact(jnp.atleast_1d(jnp.asarray(a1)), jnp.atleast_1d(jnp.asarray(a2)))
    a1, a2 = _trim_pair(a1, a2, trim_leading_zeros)
    return convolve(a1, a2)


@static_helper
def _order(m, fn, what):
    if not isinstance(m, (int, np.integer)) or isinstance(m, bool):
        raise TypeError(f"{fn}(): m must be an int known when code is generated, got {m!r}")
    if m < 0:
        raise ValueError(f"Order of {what} must be positive")
    return int(m)


def polyder(p, m=1):
    """The ``m``-th derivative of the polynomial ``p``."""
    m = _order(_static_arg(m, "m", "polyder"), "polyder", "derivative")
    p = _inexact(p)
    if m == 0:
        return p
    n = p.shape[0]
    # coefficient j of the result: p[j] times (n-1-j)(n-2-j)...(n-m-j)
    j = jnp.arange(n - m).astype(p.dtype)
    grid = (n - 1 - j) - jnp.expand_dims(jnp.arange(m).astype(p.dtype), -1)
    return p[:-m] * jnp.prod(grid, axis=0)


@static_helper
def _k_length(k_ndim, m):
    if k_ndim > 1:
        raise ValueError("k must be a scalar or a rank-1 array of length 1 or m.")
    return m


def polyint(p, m=1, k=None):
    """The ``m``-th antiderivative of the polynomial ``p``, with integration constants
    ``k`` (a scalar or ``m`` of them, the first for the innermost integral)."""
    m = _order(_static_arg(m, "m", "polyint"), "polyint", "integral")
    if k is None:
        k = 0
    p, k = _promote_inexact(p, k)
    if m == 0:
        return p
    _k_length(k.ndim, m)
    k = jnp.broadcast_to(jnp.ravel(k), (m,))  # one constant (or m) stretched to m
    n = p.shape[0]
    grid = jnp.arange(n + m).astype(p.dtype) - jnp.expand_dims(jnp.arange(m).astype(p.dtype), -1)
    coeff = jnp.flip(jnp.prod(jnp.maximum(grid, jnp.ones_like(grid)), axis=0))
    return jnp.concatenate((p, k)) / coeff


@static_helper
def _check_poly(ndim):
    if ndim not in (1, 2):
        raise ValueError("input must be 1d or non-empty square 2d array.")
    return ndim


def poly(seq_of_zeros):
    """The coefficients of the monic polynomial with the given roots, or (a square matrix)
    with the matrix's eigenvalues as roots: complex then, as JAX's."""
    z = jnp.atleast_1d(_inexact(seq_of_zeros))
    if _check_poly(z.ndim) == 2:
        if z.shape[0] != z.shape[1] or z.shape[0] == 0:
            raise ValueError("input must be 1d or non-empty square 2d array.")
        z = eigenvalues(z)
    n = z.shape[0]
    a = (jnp.arange(n + 1) == 0).astype(z.dtype)

    def step(i, a):  # a times (x - z[i]): a - z[i] * (a shifted one place to the right)
        shifted = jnp.concatenate((jnp.zeros_like(a[:1]), a[:-1]))
        return a - z[i] * shifted

    return fori_loop(0, n, step, a)


# ---- gradient -------------------------------------------------------------------------

@static_helper
def _gradient_axes(axis, ndim, nspacing, edge_order):
    if edge_order is not None and edge_order != 1:
        raise NotImplementedError("gradient(): only edge_order=1 is supported")
    if axis is None:
        axes = tuple(range(ndim))
    elif isinstance(axis, (tuple, list)):
        axes = tuple(_normalize_axis.fn(a, ndim, "gradient") for a in axis)
    else:
        axes = (_normalize_axis.fn(axis, ndim, "gradient"),)
    if nspacing not in (0, 1, len(axes)):
        raise TypeError(f"Invalid number of spacing arguments {nspacing} for axis={axis!r}")
    return axes


@static_helper
def _check_spacing(ndim):
    if ndim > 1:
        raise ValueError("Spacing arrays must be 1D arrays or scalars.")
    return ndim


def _gradient_last(a, h):
    """The gradient of ``a`` along its last axis, at spacing ``h`` (a scalar or the
    coordinates along that axis)."""
    h = jnp.asarray(h)
    _check_spacing(h.ndim)
    if h.ndim:  # coordinates in a's dtype (a scalar divides as a weak or promoted value)
        h = h.astype(a.dtype)
    upper = a[..., 1:2] - a[..., :1]
    lower = a[..., -1:] - a[..., -2:-1]
    if h.ndim == 0:
        inner = (a[..., 2:] - a[..., :-2]) * 0.5 / h
        return jnp.concatenate((upper / h, inner, lower / h), axis=-1)
    dx1 = h[1:-1] - h[:-2]
    dx2 = h[2:] - h[1:-1]
    c0 = -dx2 / (dx1 * (dx1 + dx2))
    c1 = (dx2 - dx1) / (dx1 * dx2)
    c2 = dx1 / (dx2 * (dx1 + dx2))
    inner = c0 * a[..., :-2] + c1 * a[..., 1:-1] + c2 * a[..., 2:]
    upper = upper / (h[1:2] - h[:1])
    lower = lower / (h[-1:] - h[-2:-1])
    return jnp.concatenate((upper, inner, lower), axis=-1)


def _eager_long_enough(a, ok):
    if not ok:
        raise ValueError("Shape of array too small to calculate a numerical gradient, at "
                         "least 2 elements are required.")
    return a


def _same_array(a, ok):
    return a


# JAX's check of the axis length; compiled code cannot raise at run time (sizes are
# run-time ints there), so it is made eagerly only
_long_enough = LaxFunction(_eager_long_enough, lambda *arg_types: _same_array)


def _gradient_axes_from(a, spacing, axes, i):
    if i == len(axes):
        return ()
    h = spacing[0] if len(spacing) == 1 else spacing[i]
    ax = axes[i]
    a_ax = _long_enough(jnp.moveaxis(a, ax, -1), a.shape[ax] >= 2)
    g = jnp.moveaxis(_gradient_last(a_ax, h), -1, ax)
    return (g,) + _gradient_axes_from(a, spacing, axes, i + 1)


def _with_spacing_dtype(a, spacing, i):
    """``a`` in the inexact dtype promoted with all the spacings (each cast when used)."""
    if i == len(spacing):
        return a
    a, _ = _promote(a, spacing[i])
    return _with_spacing_dtype(a, spacing, i + 1)


def _gradient(f, spacing, axis, edge_order):
    a = _inexact(_with_spacing_dtype(jnp.asarray(f), spacing, 0))
    axes = _gradient_axes(axis, a.ndim, len(spacing), edge_order)
    if len(spacing) == 0:
        spacing = (1.0,)
    grads = _gradient_axes_from(a, spacing, axes, 0)
    if len(axes) == 1:
        return grads[0]
    return grads


def _gradient_eager(f, *varargs, axis=None, edge_order=None):
    return _gradient(f, varargs, axis, edge_order)


# compiled code cannot take *args: a call is compiled as the function of its arity
def _gradient0(f, axis=None, edge_order=None):
    return _gradient(f, (), axis, edge_order)


def _gradient1(f, h0, axis=None, edge_order=None):
    return _gradient(f, (h0,), axis, edge_order)


def _gradient2(f, h0, h1, axis=None, edge_order=None):
    return _gradient(f, (h0, h1), axis, edge_order)


def _gradient3(f, h0, h1, h2, axis=None, edge_order=None):
    return _gradient(f, (h0, h1, h2), axis, edge_order)


def _gradient4(f, h0, h1, h2, h3, axis=None, edge_order=None):
    return _gradient(f, (h0, h1, h2, h3), axis, edge_order)


_GRADIENTS = (_gradient0, _gradient1, _gradient2, _gradient3, _gradient4)


def _gradient_for(*arg_types):
    n = len(arg_types) - 3
    if n >= len(_GRADIENTS):
        raise NotImplementedError(f"gradient(): at most {len(_GRADIENTS) - 1} spacing "
                                  f"arguments in compiled code, got {n}")
    return _GRADIENTS[n]


gradient = LaxFunction(_gradient_eager, _gradient_for)
gradient.__doc__ = """The gradient of ``f`` by central differences inside and one-sided ones at the
edges (``edge_order=1``), along each of ``axis`` (all by default), at unit spacing or the
given spacings (one scalar, or one scalar or coordinate array per axis), as
``jnp.gradient``; one array per axis, as a tuple (JAX: a list) when more than one."""


# ---- products -------------------------------------------------------------------------

@static_helper
def _vec_axis(axis, ndim1, ndim2):
    _normalize_axis.fn(axis, ndim1, "vecdot")
    _normalize_axis.fn(axis, ndim2, "vecdot")
    return axis


def vecdot(x1, x2, axis=-1, precision=None, preferred_element_type=None):
    """The dot product of ``conj(x1)`` and ``x2`` along ``axis``, the other axes
    broadcast."""
    x1 = jnp.asarray(x1)
    x2 = jnp.asarray(x2)
    axis = _vec_axis(axis, x1.ndim, x2.ndim)
    a = jnp.expand_dims(jnp.moveaxis(jnp.conj(x1), axis, -1), -2)
    b = jnp.expand_dims(jnp.moveaxis(x2, axis, -1), -1)
    return jnp.matmul(a, b)[..., 0, 0]


def matvec(x1, x2):
    """The matrix-vector product of ``x1`` (..., n, m) and ``x2`` (..., m), batch axes
    broadcast."""
    x2 = jnp.expand_dims(jnp.asarray(x2), -1)
    return jnp.matmul(jnp.asarray(x1), x2)[..., 0]


def vecmat(x1, x2):
    """The vector-matrix product of ``conj(x1)`` (..., n) and ``x2`` (..., n, m)."""
    x1 = jnp.expand_dims(jnp.conj(jnp.asarray(x1)), -2)
    return jnp.matmul(x1, jnp.asarray(x2))[..., 0, :]


# ---- unwrap ---------------------------------------------------------------------------

@static_helper
def _check_unwrap(kind):
    if kind == "c":
        raise ValueError("jnp.unwrap does not support complex inputs.")
    return kind


def unwrap(p, discont=None, axis=-1, period=2 * np.pi):
    """``p`` with jumps larger than ``discont`` along ``axis`` undone by multiples of
    ``period``, as ``jnp.unwrap``."""
    p, period = _promote(p, period)
    kind = _check_unwrap(p.dtype.kind)
    if discont is None:
        discont = period / 2
    if kind in "iu":
        interval = period // 2
    else:
        interval = period / 2
    ax = _normalize_axis(axis, p.ndim, "unwrap")
    q = jnp.moveaxis(p, ax, -1)
    dd = q[..., 1:] - q[..., :-1]
    ddmod = jnp.remainder(dd + interval, period) - interval
    ddmod = jnp.where(jnp.logical_and(ddmod == -interval, dd > 0), interval, ddmod)
    correct = jnp.where(jnp.abs(dd) < discont, jnp.zeros_like(dd), ddmod - dd)
    up = jnp.concatenate((q[..., :1], q[..., 1:] + jnp.cumsum(correct, axis=-1)), axis=-1)
    return jnp.moveaxis(up, -1, ax)



__all__ = ["argpartition", "argwhere", "array_equal", "array_equiv", "bincount", "compress",
           "digitize", "extract", "flatnonzero", "gradient", "histogram", "histogram_bin_edges",
           "intersect1d", "isin", "lexsort", "matvec", "nanargmax", "nanargmin", "nanprod",
           "nanstd", "nanvar", "nonzero", "partition", "poly", "polyadd", "polyder", "polyint",
           "polymul", "polysub", "setdiff1d", "setxor1d", "union1d", "unique", "unique_all",
           "unique_counts", "unique_inverse", "unique_values", "unwrap", "vecdot", "vecmat"]