"""More NumPy functions written with ``astjax.numpy`` ops (``pad``, ``convolve``,
``quantile``, ``median``, ``searchsorted``, ``interp``, ``cov``, ``ptp``, ``average``, ...),
read by the compiler like user code, as those in ``_composites``. Semantics and dtypes follow
JAX 0.10.2. Lengths that depend on an array's shape are run-time ints, so these work by
index arithmetic (gathers with computed indices) rather than by slicing to computed sizes.
"""
import numpy as np

import astjax.numpy as jnp

from .._src.random.checks import static_helper  # evaluated while generating code
from ._composites import _inexact, _inexact2, _to_inexact
from ._sorting import _normalize_axis
from .linalg import _is_inexact

# ---- pad ------------------------------------------------------------------------------

_PAD_MODES = ("constant", "edge", "wrap", "reflect", "symmetric")


@static_helper
def _pad_widths(pad_width, ndim, mode):
    """``pad_width`` as NumPy takes it (an int, ``(n,)``, ``(before, after)`` or one pair per
    axis) as one ``(before, after)`` pair of ints per axis."""
    if mode not in _PAD_MODES:
        raise NotImplementedError(f"pad(): mode {mode!r} is not supported (only "
                                  f"{', '.join(_PAD_MODES)})")
    w = np.asarray(pad_width)
    if w.dtype.kind not in "iu":
        raise TypeError(f"pad(): pad_width must be of integral type, got {pad_width!r}")
    if (w < 0).any():
        raise ValueError("index can't contain negative values")
    try:
        w = np.broadcast_to(w, (ndim, 2))
    except ValueError:
        raise ValueError(f"pad(): pad_width {pad_width!r} does not fit an array of rank "
                         f"{ndim}") from None
    return tuple((int(b), int(a)) for b, a in w)


def _pad_axis(x, before, after, mode, cval):
    """``x`` padded on its last axis."""
    if mode == "constant":  # cval: this axis's (before, after) values (x may be empty)
        rows = x.shape[:-1]
        return jnp.concatenate([jnp.broadcast_to(cval[0], rows + (before,)), x,
                                jnp.broadcast_to(cval[1], rows + (after,))], axis=-1)
    n = x.shape[-1]
    i = jnp.arange(n + before + after) - before
    if mode == "wrap":
        j = jnp.remainder(i, n)
    elif mode == "reflect":  # period 2n - 2 (1 when n == 1: the edge)
        period = jnp.maximum(2 * n - 2, 1)
        j = jnp.remainder(i, period)
        j = jnp.where(j >= n, period - j, j)
    elif mode == "symmetric":
        j = jnp.remainder(i, 2 * n)
        j = jnp.where(j >= n, 2 * n - 1 - j, j)
    else:
        j = jnp.clip(i, 0, n - 1)
    return x[..., j]


def _pad_axes(x, widths, k, mode, cval):
    if k == len(widths):
        return x
    before, after = widths[k]
    if before or after:
        x = jnp.moveaxis(_pad_axis(jnp.moveaxis(x, k, -1), before, after, mode, cval[k]),
                         -1, k)
    return _pad_axes(x, widths, k + 1, mode, cval)


@static_helper
def _pad_keyword_error(mode):
    raise ValueError(f"unsupported keyword arguments for mode '{mode}': {{'constant_values'}}")


def pad(array, pad_width, mode="constant", constant_values=None):
    """``array`` padded by ``pad_width`` as ``jnp.pad`` (modes constant, edge, wrap, reflect,
    symmetric; ``constant_values`` cast to ``array``'s dtype: a scalar, a (before, after)
    pair or one pair per axis, as ``pad_width``; axes are padded in order, so a corner
    takes the later axis's value, as in JAX)."""
    x = jnp.asarray(array)
    widths = _pad_widths(pad_width, x.ndim, mode)
    if constant_values is None:
        constant_values = 0
    elif mode != "constant":  # as JAX
        _pad_keyword_error(mode)
    cval = jnp.broadcast_to(jnp.asarray(constant_values).astype(x.dtype), (x.ndim, 2))
    return _pad_axes(x, widths, 0, mode, cval)


# ---- convolve, correlate --------------------------------------------------------------

@static_helper
def _check_conv(a_ndim, v_ndim, mode, fn):
    if a_ndim != 1 or v_ndim != 1:
        raise ValueError(f"{fn}() only support 1-dimensional inputs.")
    if mode not in ("full", "same", "valid"):
        raise ValueError(f"{fn}(): mode must be one of 'full', 'same', 'valid', got {mode!r}")
    return mode


def _conv(a, v, mode, fn):
    a, v = _inexact2(a, v)
    # a check's value is used: a call to a static helper whose value is dropped is left in
    # the generated code, which Numba cannot compile
    mode = _check_conv(a.ndim, v.ndim, mode, fn)
    n = a.shape[0]
    m = v.shape[0]
    lo = jnp.minimum(n, m)
    hi = jnp.maximum(n, m)
    if mode == "full":
        k = jnp.arange(n + m - 1)
    elif mode == "same":
        k = jnp.arange(hi) + (lo - 1) // 2
    else:
        k = jnp.arange(hi - lo + 1) + (lo - 1)
    # out[k] = sum_j a[k - j] v[j], the terms outside a left out
    idx = jnp.expand_dims(k, -1) - jnp.arange(m)
    inside = jnp.logical_and(idx >= 0, idx < n)
    terms = a[jnp.clip(idx, 0, n - 1)] * v
    return jnp.sum(jnp.where(inside, terms, jnp.zeros_like(terms)), axis=-1)


def convolve(a, v, mode="full"):
    """The discrete convolution of 1-D ``a`` and ``v`` (modes full, same, valid)."""
    return _conv(a, v, mode, "convolve")


def correlate(a, v, mode="valid"):
    """The cross-correlation of 1-D ``a`` and ``v``: ``convolve(a, conj(v)[::-1])``."""
    v = jnp.asarray(v)
    return _conv(a, jnp.flip(jnp.conj(v)), mode, "correlate")


# ---- quantiles ------------------------------------------------------------------------

_QMETHODS = ("linear", "lower", "higher", "midpoint", "nearest")


@static_helper
def _quantile_axis(axis, ndim, method, fn):
    if method not in _QMETHODS:
        raise ValueError(f"{fn}(): method must be one of {_QMETHODS}, got {method!r}")
    if axis is None:
        return None
    if not isinstance(axis, (tuple, list)):
        return (_normalize_axis.fn(axis, ndim, fn),)
    axes = tuple(sorted(_normalize_axis.fn(a, ndim, fn) for a in axis))
    if len(set(axes)) != len(axes):
        raise ValueError(f"{fn}(): repeated axis in {tuple(axis)}")
    return axes


@static_helper
def _shifted(axes, by):
    return tuple(a + by for a in axes)


@static_helper
def _keep_shape(ndim):
    return (1,) * ndim


@static_helper
def _span(start, stop):
    return tuple(range(start, stop))


def _gather_last(s, i):
    """``s[..., i]`` where ``i`` has the shape of ``s`` less its last axis, then ``q``'s
    (through take_along_axis on ``i`` flattened over ``q``'s axes)."""
    flat = jnp.reshape(i, s.shape[:-1] + (-1,))
    return jnp.reshape(jnp.take_along_axis(s, flat, axis=-1), i.shape)


def _quantile(a, q, axis, method, keepdims, fn, skip_nan=False):
    a = _inexact(a)
    q = jnp.asarray(q).astype(a.dtype)
    ax = _quantile_axis(axis, a.ndim, method, fn)
    ndim = a.ndim
    if ax is None:
        s = jnp.sort(jnp.ravel(a))  # NaNs last
    else:  # the reduced axes last, merged into one
        kept = ndim - len(ax)
        moved = jnp.moveaxis(a, ax, _span(kept, ndim))
        s = jnp.sort(jnp.reshape(moved, moved.shape[:kept] + (-1,)), axis=-1)
    nan = jnp.isnan(s)
    if skip_nan:  # the ranks run over the values that are not NaN, one count per slice
        count = jnp.sum(jnp.logical_not(nan), axis=-1)
        n = jnp.reshape(count, count.shape + _keep_shape(q.ndim)).astype(a.dtype)
        has_nan = count == 0
    else:
        n = s.shape[-1]
        has_nan = jnp.any(nan, axis=-1)
    pos = q * (n - 1)
    low = jnp.clip(jnp.floor(pos), 0, n - 1)
    high = jnp.clip(jnp.ceil(pos), 0, n - 1)
    hw = pos - low
    if skip_nan:
        lv = _gather_last(s, low.astype(np.int32))
        hv = _gather_last(s, high.astype(np.int32))
    else:
        lv = s[..., low.astype(np.int32)]  # shape: the other axes, then q's
        hv = s[..., high.astype(np.int32)]
    if method == "linear":
        out = lv * (1 - hw) + hv * hw
    elif method == "lower":
        out = lv
    elif method == "higher":
        out = hv
    elif method == "midpoint":
        out = (lv + hv) * 0.5
    else:  # JAX's nearest: the lower one when at or below the middle
        out = jnp.where(hw <= 0.5, lv, hv)
    rest = s.ndim - 1
    nan_shape = has_nan.shape + _keep_shape(q.ndim)
    out = jnp.where(jnp.reshape(has_nan, nan_shape), jnp.full_like(out, np.nan), out)
    out = jnp.moveaxis(out, _span(rest, rest + q.ndim), _span(0, q.ndim))
    if keepdims:
        if ax is None:
            return jnp.reshape(out, q.shape + _keep_shape(ndim))
        return jnp.expand_dims(out, _shifted(ax, q.ndim))
    return out


def quantile(a, q, axis=None, method="linear", keepdims=False):
    """The ``q``-th quantiles of ``a`` along ``axis`` (an int, a tuple or None), as ``jnp.quantile``
    (NaN where a slice holds one); ``q``'s axes come first in the result."""
    return _quantile(a, q, axis, method, keepdims, "quantile")


def percentile(a, q, axis=None, method="linear", keepdims=False):
    """As ``quantile`` with ``q`` in percent."""
    a = _inexact(a)
    q = jnp.asarray(q).astype(a.dtype) / 100
    return _quantile(a, q, axis, method, keepdims, "percentile")


def median(a, axis=None, keepdims=False):
    """The median of ``a`` along ``axis`` (an int, a tuple or None)."""
    return _quantile(a, 0.5, axis, "midpoint", keepdims, "median")


def nanquantile(a, q, axis=None, method="linear", keepdims=False):
    """As ``quantile`` over the values that are not NaN (NaN where all are)."""
    return _quantile(a, q, axis, method, keepdims, "nanquantile", True)


def nanpercentile(a, q, axis=None, method="linear", keepdims=False):
    """As ``percentile`` over the values that are not NaN (NaN where all are)."""
    a = _inexact(a)
    q = jnp.asarray(q).astype(a.dtype) / 100
    return _quantile(a, q, axis, method, keepdims, "nanpercentile", True)


def nanmedian(a, axis=None, keepdims=False):
    """As ``median`` over the values that are not NaN (NaN where all are)."""
    return _quantile(a, 0.5, axis, "midpoint", keepdims, "nanmedian", True)


# ---- searching, interpolation ---------------------------------------------------------

def _sort_lt(x, y):
    """``x < y`` in the order NumPy sorts by: NaNs last."""
    if _is_inexact(x.dtype):
        return jnp.logical_or(x < y, jnp.logical_and(jnp.isnan(y), jnp.logical_not(jnp.isnan(x))))
    return x < y


@static_helper
def _check_searchsorted(ndim, side):
    if ndim != 1:
        raise ValueError("a should be 1-dimensional")
    if side not in ("left", "right"):
        raise ValueError(f"{side!r} is an invalid value for keyword 'side'. "
                         "Expected one of ['left', 'right'].")
    return side


def searchsorted(a, v, side="left"):
    """Where in the sorted 1-D ``a`` to insert each of ``v`` to keep it sorted (int32, as
    JAX), by comparing against all of ``a`` (NaNs sort last)."""
    a = jnp.asarray(a)
    v = jnp.asarray(v)
    side = _check_searchsorted(a.ndim, side)  # used: see _conv
    ve = jnp.expand_dims(v, -1)
    if side == "left":
        before = _sort_lt(a, ve)
    else:
        before = jnp.logical_not(_sort_lt(ve, a))
    return jnp.sum(before, axis=-1, dtype=np.int32)


@static_helper
def _eps10(dtype):
    return float(10 * np.finfo(dtype).eps)


def interp(x, xp, fp, left=None, right=None):
    """The piecewise-linear interpolant through ``(xp, fp)`` at ``x``, as ``jnp.interp``
    (``fp[0]``/``fp[-1]``, or ``left``/``right``, outside ``xp``'s range)."""
    x, xp = _inexact2(x, xp)
    xp, fp = _inexact2(xp, fp)
    x, fp = _inexact2(x, fp)
    x, xp = _inexact2(x, xp)
    n = xp.shape[0]
    i = jnp.clip(searchsorted(xp, x, side="right"), 1, n - 1)
    df = fp[i] - fp[i - 1]
    dx = xp[i] - xp[i - 1]
    delta = x - xp[i - 1]
    dx0 = jnp.abs(dx) <= _eps10(dx.dtype)
    f = jnp.where(dx0, fp[i - 1], fp[i - 1] + (delta / jnp.where(dx0, jnp.ones_like(dx), dx)) * df)
    lval = fp[0] if left is None else left
    rval = fp[-1] if right is None else right
    f = jnp.where(x < xp[0], lval, f)
    return jnp.where(x > xp[-1], rval, f)


# ---- statistics -----------------------------------------------------------------------

def ptp(a, axis=None, keepdims=False):
    """``max - min`` along ``axis``."""
    a = jnp.asarray(a)
    return jnp.max(a, axis=axis, keepdims=keepdims) - jnp.min(a, axis=axis, keepdims=keepdims)


@static_helper
def _weights_shape(a_ndim, w_ndim, axis):
    if w_ndim == a_ndim:
        return None
    if axis is None:
        raise ValueError("Axis must be specified when shapes of a and weights differ.")
    if w_ndim != 1:
        raise ValueError("1D weights expected when shapes of a and weights differ.")
    ax = _normalize_axis.fn(axis, a_ndim, "average")
    return ax


def average(a, axis=None, weights=None, returned=False, keepdims=False):
    """The mean of ``a`` along ``axis``, weighted by ``weights`` (same shape as ``a``, or 1-D
    along ``axis``); with ``returned``, also the sum of the weights."""
    if weights is None:
        a = _inexact(a)
        avg = jnp.mean(a, axis=axis, keepdims=keepdims)
        if returned:
            return avg, jnp.full_like(avg, a.size / avg.size)
        return avg
    a, w = _inexact2(a, weights)
    ax = _weights_shape(a.ndim, w.ndim, axis)
    if ax is not None:
        w = jnp.moveaxis(jnp.reshape(w, w.shape + _keep_shape(a.ndim - 1)), 0, ax)
    w = jnp.broadcast_to(w, a.shape)
    total = jnp.sum(w, axis=axis, keepdims=keepdims)
    avg = jnp.sum(a * w, axis=axis, keepdims=keepdims) / total
    if returned:
        return avg, total
    return avg


def cov(m, y=None, rowvar=True, bias=False, ddof=None):
    """The covariance matrix of the variables in ``m`` (rows, or columns without ``rowvar``)
    and ``y``, as ``jnp.cov`` (``fweights``/``aweights`` not taken)."""
    x = jnp.atleast_2d(_inexact(m))
    if not rowvar and x.shape[0] != 1:
        x = x.T
    if y is not None:
        yy = jnp.atleast_2d(_inexact(y))
        if not rowvar and yy.shape[0] != 1:
            yy = yy.T
        x, yy = _inexact2(x, yy)
        x = jnp.concatenate((x, yy), axis=0)
    if ddof is None:
        ddof = 0 if bias else 1
    avg = jnp.mean(x, axis=1, keepdims=True)
    x = x - avg
    fact = x.shape[1] - ddof
    return jnp.squeeze(jnp.dot(x, jnp.conj(x.T)) / fact)


def corrcoef(x, y=None, rowvar=True):
    """Pearson correlation coefficients, ``cov`` normalized by the standard deviations
    (real parts clipped to [-1, 1])."""
    c = cov(x, y, rowvar)
    if c.ndim == 0:
        return c / c
    d = jnp.diagonal(c)
    sd = jnp.sqrt(jnp.real(d))
    c = c / jnp.expand_dims(sd, -1)
    c = c / sd
    return jnp.clip(c, -1, 1)


# ---- cumulative ---------------------------------------------------------------------

def nancumsum(a, axis=None, dtype=None):
    """``cumsum`` with NaNs counted as 0."""
    a = jnp.asarray(a)
    if _is_inexact(a.dtype):
        a = jnp.where(jnp.isnan(a), jnp.zeros_like(a), a)
    return jnp.cumsum(a, axis=axis, dtype=dtype)


def nancumprod(a, axis=None, dtype=None):
    """``cumprod`` with NaNs counted as 1."""
    a = jnp.asarray(a)
    if _is_inexact(a.dtype):
        a = jnp.where(jnp.isnan(a), jnp.ones_like(a), a)
    return jnp.cumprod(a, axis=axis, dtype=dtype)


@static_helper
def _cumulative_axis(ndim, axis, include_initial, fn):
    if ndim == 0:
        raise ValueError(f"The input must be non-scalar to take a {fn}, however a scalar "
                         "value or scalar array was given.")
    if axis is None:
        if ndim > 1:
            raise ValueError(f"The input array has rank {ndim}, however axis was not set to "
                             "an explicit value. The axis argument is only optional for "
                             "one-dimensional arrays.")
        axis = 0
    ax = _normalize_axis.fn(axis, ndim, fn)
    return tuple((int(include_initial and i == ax), 0) for i in range(ndim)), ax


def cumulative_sum(x, axis=None, dtype=None, include_initial=False):
    """``cumsum`` along ``axis`` (needed unless ``x`` is 1-D), small ints summed in the
    default int as ``sum``, with a leading 0 if ``include_initial``, as JAX's."""
    x = jnp.asarray(x)
    widths, ax = _cumulative_axis(x.ndim, axis, include_initial, "cumulative sum")
    if dtype is None:
        dtype = jnp.sum(jnp.ravel(x)[:0]).dtype
    out = jnp.cumsum(x, axis=ax, dtype=dtype)
    if include_initial:
        return pad(out, widths)
    return out


def cumulative_prod(x, axis=None, dtype=None, include_initial=False):
    """``cumprod`` along ``axis`` (needed unless ``x`` is 1-D), with a leading 1 if
    ``include_initial``, as JAX's."""
    x = jnp.asarray(x)
    widths, ax = _cumulative_axis(x.ndim, axis, include_initial, "cumulative product")
    out = jnp.cumprod(x, axis=ax, dtype=dtype)
    if include_initial:
        return pad(out, widths, constant_values=1)
    return out


__all__ = ["cumulative_prod", "cumulative_sum", "nancumprod", "nancumsum", "nanmedian",
           "nanpercentile", "nanquantile", "average", "convolve", "corrcoef", "correlate", "cov", "interp", "median", "pad",
           "percentile", "ptp", "quantile", "searchsorted"]
