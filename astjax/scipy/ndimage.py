"""``astjax.scipy.ndimage``, as ``jax.scipy.ndimage``: ``map_coordinates`` of order 0
(nearest, rounding halves away from zero) and 1 (linear), modes constant, nearest, wrap,
mirror and reflect, written in ``astjax.numpy`` as JAX's: one gather per corner of the
interpolation cell (2**ndim for order 1), weighted and summed."""
import numpy as np

import astjax.numpy as jnp
from astjax import lax
from astjax._src.random.checks import static_helper  # evaluated while generating code

__all__ = ["map_coordinates"]

_MODES = ("constant", "nearest", "wrap", "mirror", "reflect")


@static_helper
def _check(order, mode):
    if mode not in _MODES:
        raise NotImplementedError(
            f"jax.scipy.ndimage.map_coordinates does not yet support mode {mode}. "
            f"Currently supported modes are {set(_MODES)}.")
    if order not in (0, 1):
        raise NotImplementedError(
            "jax.scipy.ndimage.map_coordinates currently requires order<=1")
    return order


@static_helper
def _is_integer(dtype):
    return np.issubdtype(dtype, np.integer)


def _mirror(index, size):
    s = size - 1  # half the period of the triangular wave
    return jnp.abs((index + s) % (2 * s) - s)


def _fixed(index, size, mode):
    """``index`` moved inside ``[0, size)`` as ``mode`` extends the input (constant: clipped
    for the gather, the value masked by the caller)."""
    if mode == "wrap":
        return index % size
    if mode == "mirror":
        return _mirror(index, size)
    if mode == "reflect":
        return (_mirror(2 * index + 1, 2 * size + 1) - 1) // 2
    return jnp.clip(index, 0, size - 1)


def _corners(x, coords, order, mode, cval, d, index, valid, weight):
    """The sum over the corners of the cell around ``coords`` of the input at the corner
    times its weight, the corners' indices for the axes before ``d`` being ``index``."""
    if d == x.ndim:
        value = x[index]
        if mode == "constant":
            value = jnp.where(valid, value, cval)
        return weight * value
    c = coords[d]
    size = x.shape[d]
    if order == 0:
        i = c.astype(jnp.int32) if _is_integer(c.dtype) else lax.round(c).astype(jnp.int32)
        return _corners(x, coords, order, mode, cval, d + 1, index + (_fixed(i, size, mode),),
                        valid & (i >= 0) & (i < size), weight)
    lower = jnp.floor(c)
    upper_weight = c - lower
    i = lower.astype(jnp.int32)
    j = i + 1
    low = _corners(x, coords, order, mode, cval, d + 1, index + (_fixed(i, size, mode),),
                   valid & (i >= 0) & (i < size), weight * (1 - upper_weight))
    high = _corners(x, coords, order, mode, cval, d + 1, index + (_fixed(j, size, mode),),
                    valid & (j >= 0) & (j < size), weight * upper_weight)
    return low + high


def _inexact_coordinates(coordinates, k, n):
    if k == n:
        return ()
    c = jnp.asarray(coordinates[k])
    if _is_integer(c.dtype):
        c = c.astype(jnp.float32)
    return (c,) + _inexact_coordinates(coordinates, k + 1, n)


def map_coordinates(input, coordinates, order, mode="constant", cval=0.0):
    """The input's values at ``coordinates`` (one array per axis of ``input``, broadcast
    together), interpolated with ``order`` 0 or 1; points outside follow ``mode``
    (``cval`` for 'constant'). Integer inputs round the result, as JAX's."""
    order = _check(order, mode)
    x = jnp.asarray(input)
    if len(coordinates) != x.ndim:
        raise ValueError(f"coordinates must be a sequence of length input.ndim, but "
                         f"{len(coordinates)} != {x.ndim}")
    cval = jnp.asarray(cval).astype(x.dtype)
    if order == 1:
        coordinates = _inexact_coordinates(coordinates, 0, x.ndim)
    out = _corners(x, coordinates, order, mode, cval, 0, (), True, 1)
    if _is_integer(x.dtype):
        out = lax.round(out)
    return out.astype(x.dtype)
