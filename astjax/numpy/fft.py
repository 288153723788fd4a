"""``astjax.numpy.fft``: as ``jax.numpy.fft``.

Plain functions written in ``astjax.numpy`` (as ``linalg``): the compiler reads their
source, so they work eagerly, under ``jit`` on both backends, ``grad`` and ``vmap``. Each
transform is the 1-D op ``fft`` (``_src/ops/fft.py``, NumPy's semantics along the last
axis) applied along one axis at a time, the axis moved last and back; an n-D transform is
one per axis, as NumPy computes it. ``n``/``s`` crop or zero-pad the input as in NumPy
and JAX.
"""
import operator

import astjax.numpy as jnp

from .._src import dtypes
from .._src.ops.registry import REGISTRY
from .._src.random.checks import static_helper

__all__ = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fft2", "ifft2", "rfft2",
           "irfft2", "fftn", "ifftn", "rfftn", "irfftn", "fftfreq", "rfftfreq", "fftshift",
           "ifftshift"]

_fft = REGISTRY["fft"]
_SWAP = {None: "forward", "backward": "forward", "ortho": "ortho", "forward": "backward"}


@static_helper
def _check_norm(norm):
    if norm not in (None, "backward", "ortho", "forward"):
        raise ValueError(f'Invalid norm value {norm}; should be "backward", "ortho" or '
                         f'"forward".')
    return norm


@static_helper
def _swap(norm):
    """hfft/ihfft are irfft/rfft of the conjugate with the other normalization (NumPy's
    _swap_direction; JAX's scaling by n comes to the same)."""
    return _SWAP[_check_norm.fn(norm)]


@static_helper
def _axis_1d(name, axis, ndim):
    if isinstance(axis, (list, tuple)):
        raise ValueError(f"jax.numpy.fft.{name} does not support multiple axes. Please use "
                         f"jax.numpy.fft.{name}n. Got axis = {axis!r}.")
    if not -ndim <= operator.index(axis) < ndim:
        raise ValueError(f"jax.numpy.fft.{name}: axis {axis} is out of bounds for an array "
                         f"of rank {ndim}")
    return axis % ndim


@static_helper
def _plan(name, ndim, s, axes, two_d):
    """(axes, lengths): the normalized axes and the length for each (None: the input's),
    after JAX's checks."""
    if two_d and (axes is None or len(axes) != 2):
        raise ValueError(f"jax.numpy.fft.{name} only supports 2 axes. Got axes = {axes!r}.")
    if s is not None:
        s = tuple(operator.index(x) for x in s)
        if any(x <= 0 for x in s):
            raise ValueError("Shape should be positive.")
    if s is not None and axes is not None and len(s) != len(axes):
        raise ValueError("Shape and axes have different lengths.")
    if axes is None:
        axes = range(ndim) if s is None else range(ndim - len(s), ndim)
    axes = tuple(axes)
    for a in axes:
        if not -ndim <= operator.index(a) < ndim:
            raise ValueError(f"jax.numpy.fft.{name}: axis {a} is out of bounds for an array "
                             f"of rank {ndim}")
    axes = tuple(a % ndim for a in axes)
    if len(axes) != len(set(axes)):
        raise ValueError(f"jax.numpy.fft.{name} does not support repeated axes. Got axes "
                         f"{axes}.")
    return axes, (None,) * len(axes) if s is None else s


def _along(a, fft_type, n, axis, norm):
    """The 1-D transform along ``axis`` (normalized)."""
    if axis == a.ndim - 1:
        return _fft(a, fft_type, n, norm)
    moved = _fft(jnp.moveaxis(a, axis, -1), fft_type, n, norm)
    return jnp.moveaxis(moved, -1, axis)


def _nd(a, fft_type, axes, lengths, norm):
    """fft/ifft along each axis, last axis first (as NumPy)."""
    for k in range(len(axes) - 1, -1, -1):
        a = _along(a, fft_type, lengths[k], axes[k], norm)
    if len(axes) == 0:  # no axes: the input as complex, as JAX's lax.fft does
        a = _fft_free(a)
    return a


@static_helper
def _complex_of(dtype):
    from .._src.ops.fft import out_dtype
    return out_dtype(dtype, "fft")


def _fft_free(a):
    return jnp.asarray(a, _complex_of(a.dtype))


def fft(a, n=None, axis=-1, norm=None):
    a = jnp.asarray(a)
    return _along(a, "fft", n, _axis_1d("fft", axis, a.ndim), _check_norm(norm))


def ifft(a, n=None, axis=-1, norm=None):
    a = jnp.asarray(a)
    return _along(a, "ifft", n, _axis_1d("ifft", axis, a.ndim), _check_norm(norm))


def rfft(a, n=None, axis=-1, norm=None):
    a = jnp.asarray(a)
    return _along(a, "rfft", n, _axis_1d("rfft", axis, a.ndim), _check_norm(norm))


def irfft(a, n=None, axis=-1, norm=None):
    a = jnp.asarray(a)
    return _along(a, "irfft", n, _axis_1d("irfft", axis, a.ndim), _check_norm(norm))


def hfft(a, n=None, axis=-1, norm=None):
    a = jnp.conj(jnp.asarray(a))
    return _along(a, "irfft", n, _axis_1d("hfft", axis, a.ndim), _swap(norm))


def ihfft(a, n=None, axis=-1, norm=None):
    a = jnp.asarray(a)
    return jnp.conj(_along(a, "rfft", n, _axis_1d("ihfft", axis, a.ndim), _swap(norm)))


def fftn(a, s=None, axes=None, norm=None):
    a = jnp.asarray(a)
    axes, lengths = _plan("fftn", a.ndim, s, axes, False)
    return _nd(a, "fft", axes, lengths, _check_norm(norm))


def ifftn(a, s=None, axes=None, norm=None):
    a = jnp.asarray(a)
    axes, lengths = _plan("ifftn", a.ndim, s, axes, False)
    return _nd(a, "ifft", axes, lengths, _check_norm(norm))


def rfftn(a, s=None, axes=None, norm=None):
    a = jnp.asarray(a)
    axes, lengths = _plan("rfftn", a.ndim, s, axes, False)
    norm = _check_norm(norm)
    a = _along(a, "rfft", lengths[-1], axes[-1], norm)
    return _nd(a, "fft", axes[:-1], lengths[:-1], norm)


def irfftn(a, s=None, axes=None, norm=None):
    a = jnp.asarray(a)
    axes, lengths = _plan("irfftn", a.ndim, s, axes, False)
    norm = _check_norm(norm)
    a = _nd(a, "ifft", axes[:-1], lengths[:-1], norm)
    return _along(a, "irfft", lengths[-1], axes[-1], norm)


def fft2(a, s=None, axes=(-2, -1), norm=None):
    a = jnp.asarray(a)
    axes, lengths = _plan("fft2", a.ndim, s, axes, True)
    return _nd(a, "fft", axes, lengths, _check_norm(norm))


def ifft2(a, s=None, axes=(-2, -1), norm=None):
    a = jnp.asarray(a)
    axes, lengths = _plan("ifft2", a.ndim, s, axes, True)
    return _nd(a, "ifft", axes, lengths, _check_norm(norm))


def rfft2(a, s=None, axes=(-2, -1), norm=None):
    a = jnp.asarray(a)
    axes, lengths = _plan("rfft2", a.ndim, s, axes, True)
    norm = _check_norm(norm)
    a = _along(a, "rfft", lengths[-1], axes[-1], norm)
    return _nd(a, "fft", axes[:-1], lengths[:-1], norm)


def irfft2(a, s=None, axes=(-2, -1), norm=None):
    a = jnp.asarray(a)
    axes, lengths = _plan("irfft2", a.ndim, s, axes, True)
    norm = _check_norm(norm)
    a = _nd(a, "ifft", axes[:-1], lengths[:-1], norm)
    return _along(a, "irfft", lengths[-1], axes[-1], norm)


# --- frequencies and shifts ---------------------------------------------------------------

@static_helper
def _freq_dtypes(dtype):
    """(dtype computed in, dtype returned)."""
    out = dtypes.default_float() if dtype is None else dtypes.canonicalize_dtype(dtype)
    inexact = dtypes.to_inexact(out)[0]
    if inexact.kind == "c":
        inexact = dtypes.float64 if inexact == dtypes.complex128 else dtypes.float32
    return inexact, out


def fftfreq(n, d=1.0, *, dtype=None, device=None):
    inexact, out = _freq_dtypes(dtype)
    i = jnp.arange(n, dtype=inexact)
    k = (i + n // 2) % n - n // 2
    return (k / jnp.asarray(d * n, inexact)).astype(out)


def rfftfreq(n, d=1.0, *, dtype=None, device=None):
    inexact, out = _freq_dtypes(dtype)
    k = jnp.arange(0, n // 2 + 1, dtype=inexact)
    return (k / jnp.asarray(d * n, inexact)).astype(out)


@static_helper
def _shift_axes(axes, ndim):
    """The normalized axes as a tuple (every axis for None)."""
    if axes is None:
        return tuple(range(ndim))
    if isinstance(axes, (list, tuple)):
        return tuple(operator.index(a) % ndim for a in axes)
    return (operator.index(axes) % ndim,)


def fftshift(x, axes=None):
    x = jnp.asarray(x)
    for ax in _shift_axes(axes, x.ndim):
        x = jnp.roll(x, x.shape[ax] // 2, ax)
    return x


def ifftshift(x, axes=None):
    x = jnp.asarray(x)
    for ax in _shift_axes(axes, x.ndim):
        x = jnp.roll(x, -(x.shape[ax] // 2), ax)
    return x
