"""``astjax.scipy.signal``, as ``jax.scipy.signal``: convolve, correlate, convolve2d,
correlate2d, fftconvolve and detrend, written in ``astjax.numpy`` and compiled like user code.

Sizes are run-time ints in compiled code, so where JAX picks between swapped operands by
their shapes (the smaller one is the kernel), this code uses formulas that hold either way:
the full convolution is symmetric, and each mode takes a window of it (start and length per
axis, computed at run time) as the padding of one ``lax`` convolution
(``_src/lax/windowed.py``, as JAX's ``_convolve_nd``).
"""
import operator

import numpy as np

import astjax.numpy as jnp
from astjax._src.lax.windowed import _conv_spec, conv_from_spec
from astjax._src.random.checks import static_helper  # evaluated while generating code
from astjax.numpy._composites import _inexact, _inexact2

__all__ = ["convolve", "convolve2d", "correlate", "correlate2d", "detrend", "fftconvolve"]

_MODES = ("full", "same", "valid")


@static_helper
def _direct_spec(ndim1, ndim2, mode, method, fn):
    if method not in ("auto", "direct", "fft"):
        raise ValueError(f"Got method={method!r}; expected 'auto', 'fft', or 'direct'.")
    if mode not in _MODES:
        raise ValueError("mode must be one of ['full', 'same', 'valid']")
    if ndim1 != ndim2:
        raise ValueError("in1 and in2 must have the same number of dimensions")
    if fn.endswith("2d") and ndim1 != 2:
        raise ValueError(f"{fn}() only supports 2-dimensional inputs.")
    # (any padding: every axis masked, the pads are run-time ints)
    return _conv_spec.fn(ndim1 + 2, ndim1 + 2, None, ((1, 1),) * ndim1, None, None, None, 1, 1)


@static_helper
def _check_boundary(boundary, fillvalue, fn):
    if boundary != "fill" or fillvalue != 0:
        raise NotImplementedError(f"{fn}() only supports boundary='fill', fillvalue=0")
    return fn


def _window(n, m, mode):
    """(start, length) of a mode's output in the full convolution of sizes n and m."""
    if mode == "full":
        return 0, n + m - 1
    if mode == "same":
        return (m - 1) // 2, n
    return jnp.minimum(n, m) - 1, jnp.abs(n - m) + 1


def _pads(s1, s2, mode, d):
    """The (low, high) padding of each axis from ``d`` on, correlating ``in1`` with the
    flipped ``in2``, that yields the mode's window of the full convolution."""
    if d == len(s1):
        return ()
    n, m = s1[d], s2[d]
    start, length = _window(n, m, mode)
    lo = m - 1 - start
    return ((lo, length + m - 1 - n - lo),) + _pads(s1, s2, mode, d + 1)


def _ordered(s1, s2, d):
    """Whether one shape is at least the other in every axis (JAX's condition)."""
    if d == len(s1):
        return True, True
    ge, le = _ordered(s1, s2, d + 1)
    return ge and s1[d] >= s2[d], le and s1[d] <= s2[d]


def _convolve_nd(in1, in2, mode, spec):
    if in1.size == 0 or in2.size == 0:
        raise ValueError(f"zero-size arrays not supported in convolutions, got shapes "
                         f"{in1.shape} and {in2.shape}.")
    ge, le = _ordered(in1.shape, in2.shape, 0)
    if not (ge or le):
        raise ValueError("One input must be smaller than the other in every dimension.")
    pads = _pads(in1.shape, in2.shape, mode, 0)
    out = conv_from_spec(in1[None, None], jnp.flip(in2)[None, None], spec, pads, 1, None)
    return out[0, 0]


def convolve(in1, in2, mode="full", method="auto", precision=None):
    """The N-D convolution of ``in1`` and ``in2`` (same rank), modes full, same (``in1``'s
    shape) and valid; method 'auto' and 'direct' convolve directly, 'fft' as
    ``fftconvolve``. ``precision`` is ignored."""
    in1, in2 = _inexact2(in1, in2)
    spec = _direct_spec(in1.ndim, in2.ndim, mode, method, "convolve")
    if method == "fft":
        return fftconvolve(in1, in2, mode=mode)
    return _convolve_nd(in1, in2, mode, spec)


def correlate(in1, in2, mode="full", method="auto", precision=None):
    """The N-D cross-correlation: ``convolve(in1, flip(conj(in2)))``."""
    in2 = jnp.asarray(in2)
    return convolve(in1, jnp.flip(jnp.conj(in2)), mode, method, precision)


def convolve2d(in1, in2, mode="full", boundary="fill", fillvalue=0, precision=None):
    """The 2-D convolution (``boundary='fill'``, ``fillvalue=0`` only, as in JAX)."""
    _check_boundary(boundary, fillvalue, "convolve2d")
    in1, in2 = _inexact2(in1, in2)
    return _convolve_nd(in1, in2, mode, _direct_spec(in1.ndim, in2.ndim, mode, "direct",
                                                     "convolve2d"))


def correlate2d(in1, in2, mode="full", boundary="fill", fillvalue=0, precision=None):
    """The 2-D cross-correlation, as JAX's: 'same' centres the window as the flipped
    convolution does (one later than ``correlate`` for an even kernel size), and 'valid'
    with ``in1`` smaller than ``in2`` gives the conjugate of ``correlate``'s."""
    _check_boundary(boundary, fillvalue, "correlate2d")
    in1, in2 = _inexact2(in1, in2)
    spec = _direct_spec(in1.ndim, in2.ndim, mode, "direct", "correlate2d")
    if mode == "same":
        return jnp.flip(_convolve_nd(jnp.flip(in1), jnp.conj(in2), mode, spec))
    out = _convolve_nd(in1, jnp.flip(jnp.conj(in2)), mode, spec)
    if mode == "valid" and jnp.iscomplexobj(out):
        ge, le = _ordered(in1.shape, in2.shape, 0)
        swapped = jnp.logical_and(le, jnp.logical_not(ge))
        out = jnp.where(swapped, jnp.conj(out), out)
    return out


# ---- fftconvolve ---------------------------------------------------------------------------

@static_helper
def _fft_axes(ndim1, ndim2, mode, axes):
    if ndim1 != ndim2:
        raise ValueError("in1 and in2 should have the same dimensionality")
    if mode not in _MODES:
        raise ValueError("mode must be one of ['same', 'full', 'valid']")
    if axes is None:
        return tuple(range(ndim1))
    axes = (axes,) if not isinstance(axes, (tuple, list)) else axes
    out = []
    for a in axes:
        a = operator.index(a)
        if not -ndim1 <= a < ndim1:
            raise ValueError(f"axis {a} is out of bounds for array of dimension {ndim1}")
        out.append(a % ndim1)
    return tuple(sorted(set(out)))


@static_helper
def _mapped(ndim, axes):
    return tuple(d for d in range(ndim) if d not in axes)


def _same_mapped(s1, s2, mapped, k):
    if k == len(mapped):
        return True
    return s1[mapped[k]] == s2[mapped[k]] and _same_mapped(s1, s2, mapped, k + 1)


def fftconvolve(in1, in2, mode="full", axes=None):
    """The convolution of ``in1`` and ``in2`` through the FFT (``rfft`` for real inputs)
    over ``axes`` (all by default); the other axes must match and are convolved
    elementwise, as JAX's vmap over them."""
    in1, in2 = _inexact2(in1, in2)
    axes = _fft_axes(in1.ndim, in2.ndim, mode, axes)
    mapped = _mapped(in1.ndim, axes)
    if not _same_mapped(in1.shape, in2.shape, mapped, 0):
        raise ValueError(f"mapped axes must have same shape; got in1.shape={in1.shape} "
                         f"in2.shape={in2.shape} axes={axes}")
    if mode == "valid":
        ge, le = _ordered(in1.shape, in2.shape, 0)
        if not (ge or le):
            raise ValueError("For 'valid' mode, One input must be at least as large as the "
                             "other in every dimension.")
    real = not (jnp.iscomplexobj(in1) or jnp.iscomplexobj(in2))
    a, b = in1, in2
    first = 0
    if real and len(axes) > 0:
        last = axes[-1]
        full = in1.shape[last] + in2.shape[last] - 1
        a = jnp.fft.rfft(a, n=full, axis=last)
        b = jnp.fft.rfft(b, n=full, axis=last)
        first = 1
    for k in range(len(axes) - 1 - first, -1, -1):
        ax = axes[k]
        full = in1.shape[ax] + in2.shape[ax] - 1
        a = jnp.fft.fft(a, n=full, axis=ax)
        b = jnp.fft.fft(b, n=full, axis=ax)
    conv = a * b
    for k in range(len(axes) - first):
        ax = axes[k]
        conv = jnp.fft.ifft(conv, n=in1.shape[ax] + in2.shape[ax] - 1, axis=ax)
    if real and len(axes) > 0:
        last = axes[-1]
        conv = jnp.fft.irfft(conv, n=in1.shape[last] + in2.shape[last] - 1, axis=last)
    for ax in axes:
        n, m = in1.shape[ax], in2.shape[ax]
        start, length = _window(n, m, mode)  # (JAX's (full - length) // 2)
        conv = jnp.take(conv, jnp.arange(length) + start, axis=ax)
    return conv


# ---- detrend -------------------------------------------------------------------------------

@static_helper
def _check_detrend(type, overwrite_data, bp):
    if overwrite_data is not None:
        raise NotImplementedError("overwrite_data argument not implemented.")
    if type not in ("constant", "linear"):
        raise ValueError("Trend type must be 'linear' or 'constant'.")
    bps = tuple(sorted({int(b) for b in np.atleast_1d(bp).tolist()} | {0}))
    if bps[0] < 0:
        raise ValueError("Breakpoints must be non-negative and less than length of data "
                         "along given axis.")
    return bps


def _detrend_segments(x, t, n, bps, k):
    """``x`` (the data axis first) less the least-squares line of each segment from
    breakpoint ``k`` on (a segment of one point becomes 0, as JAX's lstsq gives)."""
    if k == len(bps):
        return x
    lo = bps[k]
    hi = bps[k + 1] if k + 1 < len(bps) else n
    inside = jnp.logical_and(t >= lo, t < hi)
    w = jnp.where(inside, 1.0, 0.0).astype(t.dtype)
    w = jnp.reshape(w, (-1,) + (1,) * (x.ndim - 1))
    tt = jnp.reshape(t, w.shape)
    count = jnp.maximum(jnp.sum(w, axis=0), 1.0)
    tc = (tt - jnp.sum(w * tt, axis=0) / count) * w
    xc = (x - jnp.sum(w * x, axis=0) / count) * w
    den = jnp.sum(tc * tc, axis=0)
    slope = jnp.sum(tc * xc, axis=0) / jnp.where(den == 0, 1.0, den)
    x = jnp.where(w > 0, xc - slope * tc, x)
    return _detrend_segments(x, t, n, bps, k + 1)


def detrend(data, axis=-1, type="linear", bp=0, overwrite_data=None):
    """``data`` less its mean ('constant') or its least-squares line ('linear'), along
    ``axis``; ``bp`` breakpoints fit a line to each segment between them."""
    bps = _check_detrend(type, overwrite_data, bp)
    x = _inexact(data)
    if type == "constant":
        return x - jnp.mean(x, axis=axis, keepdims=True)
    x = jnp.moveaxis(x, axis, 0)
    n = x.shape[0]
    if bps[-1] > n:
        raise ValueError("Breakpoints must be non-negative and less than length of data "
                         "along given axis.")
    t = jnp.arange(n).astype(jnp.real(x).dtype)
    return jnp.moveaxis(_detrend_segments(x, t, n, bps, 0), 0, axis)
