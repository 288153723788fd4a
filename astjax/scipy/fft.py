"""``astjax.scipy.fft``, as ``jax.scipy.fft``: the type-2 DCT (``dct``, ``dctn``) and its
inverse (``idct``, ``idctn``), norm None/'backward' or 'ortho', written in
``astjax.numpy`` on ``jnp.fft.fft`` as JAX's (Makhoul's reordering: even samples, then the
odd ones reversed). An n-D transform is one 1-D transform per axis (JAX pairs axes into
2-D transforms: the same values to rounding). Sizes are run-time ints in compiled code,
so the reorderings and the padding or cropping to ``n`` are gathers with computed indices.
"""
import operator

import numpy as np

import astjax.numpy as jnp
from astjax._src.random.checks import static_helper  # evaluated while generating code
from astjax.numpy._composites import _inexact

__all__ = ["dct", "dctn", "idct", "idctn"]


@static_helper
def _check(type, norm, fn):
    if type != 2:
        raise NotImplementedError("Only DCT type 2 is implemented.")
    if norm is not None and norm not in ("backward", "ortho"):
        raise ValueError(f"jax.scipy.fft.{fn}: norm={norm!r} is not implemented")
    return norm == "ortho"


@static_helper
def _axis(axis, ndim):
    if not -ndim <= operator.index(axis) < ndim:
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {ndim}")
    return axis % ndim


@static_helper
def _plan(s, axes, ndim):
    """(axes, lengths) of an n-D transform, as JAX's dctn (a length None: the input's)."""
    if s is not None:
        s = [operator.index(s)] if np.ndim(s) == 0 else [operator.index(n) for n in s]
        if len(s) > ndim:
            raise ValueError(f"s must have at most x.ndim ({ndim}) elements, got {len(s)}")
    if axes is None:
        axes = tuple(range(ndim - len(s), ndim)) if s is not None else tuple(range(ndim))
    else:
        axes = (axes,) if np.ndim(axes) == 0 else tuple(axes)
        axes = tuple(_axis.fn(a, ndim) for a in axes)
        if len(set(axes)) != len(axes):
            raise ValueError(f"repeated axis in axes {axes}")
    lengths = (None,) * len(axes) if s is None else tuple(s)
    if len(lengths) != len(axes):
        raise ValueError(f"s and axes have different lengths: {s} and {axes}")
    return axes, lengths


def _resized(x, n):
    """``x``'s last axis cropped or zero-padded to ``n`` (unchanged for None)."""
    if n is None:
        return x
    size = x.shape[-1]
    i = jnp.arange(n)
    taken = x[..., jnp.clip(i, 0, jnp.maximum(size - 1, 0))]
    return jnp.where(i < size, taken, jnp.zeros_like(taken))


def _ortho_scale(n, dtype):
    """1 / sqrt(4n) for the first coefficient, 1 / sqrt(2n) for the others."""
    factor = jnp.where(jnp.arange(n) == 0, 4.0, 2.0).astype(dtype)
    return 1.0 / jnp.sqrt(factor * n)


def _dct_last(x, n, ortho):
    """The type-2 DCT along the last axis of the real ``x``."""
    x = _resized(x, n)
    size = x.shape[-1]
    j = jnp.arange(size)
    # even samples, then the odd ones reversed
    v = x[..., jnp.where(j < (size + 1) // 2, 2 * j, 2 * (size - 1 - j) + 1)]
    spec = jnp.fft.fft(v)
    angle = (0.5 * np.pi / size) * j.astype(x.dtype)
    out = 2 * (jnp.real(spec) * jnp.cos(angle) + jnp.imag(spec) * jnp.sin(angle))
    if ortho:
        out = out * _ortho_scale(size, x.dtype)
    return out


def _idct_last(x, n, ortho):
    """The inverse of ``_dct_last`` (a type-3 DCT) along the last axis of the real ``x``."""
    x = _resized(x, n)
    size = x.shape[-1]
    j = jnp.arange(size)
    scale = _ortho_scale(size, x.dtype)
    if not ortho:
        scale = scale * scale
    angle = (0.5 * np.pi / size) * j.astype(x.dtype)
    z = (x * scale * (2 * size)) * (jnp.cos(angle) + 1j * jnp.sin(angle))
    y = jnp.real(jnp.fft.ifft(z))
    # out[2i] = y[i], out[2i + 1] = y[size - 1 - i]
    return y[..., jnp.where(j % 2 == 0, j // 2, size - 1 - j // 2)]


def _along(fn, x, n, axis, ortho):
    x = jnp.moveaxis(x, axis, -1)
    if jnp.iscomplexobj(x):
        out = fn(jnp.real(x), n, ortho) + 1j * fn(jnp.imag(x), n, ortho)
    else:
        out = fn(x, n, ortho)
    return jnp.moveaxis(out, -1, axis)


def dct(x, type=2, n=None, axis=-1, norm=None):
    """The type-2 discrete cosine transform along ``axis`` (``n``: crop or zero-pad to
    ``n`` first), as ``scipy.fft.dct``."""
    ortho = _check(type, norm, "dct")
    x = _inexact(x)
    return _along(_dct_last, x, n, _axis(axis, x.ndim), ortho)


def idct(x, type=2, n=None, axis=-1, norm=None):
    """The inverse of ``dct`` along ``axis``, as ``scipy.fft.idct``."""
    ortho = _check(type, norm, "idct")
    x = _inexact(x)
    return _along(_idct_last, x, n, _axis(axis, x.ndim), ortho)


def dctn(x, type=2, s=None, axes=None, norm=None):
    """The type-2 DCT over ``axes`` (all by default; ``s`` the lengths), as
    ``scipy.fft.dctn``."""
    ortho = _check(type, norm, "dctn")
    x = _inexact(x)
    axes, lengths = _plan(s, axes, x.ndim)
    for k in range(len(axes)):
        x = _along(_dct_last, x, lengths[k], axes[k], ortho)
    return x


def idctn(x, type=2, s=None, axes=None, norm=None):
    """The inverse of ``dctn`` over ``axes``, as ``scipy.fft.idctn``."""
    ortho = _check(type, norm, "idctn")
    x = _inexact(x)
    axes, lengths = _plan(s, axes, x.ndim)
    for k in range(len(axes)):
        x = _along(_idct_last, x, lengths[k], axes[k], ortho)
    return x
