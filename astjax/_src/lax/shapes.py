"""``lax``'s shape functions (``broadcast_in_dim``, ``slice``, ``pad`` with interior padding,
``rev``, ``reshape`` with ``dimensions``, ``iota``, ``reduce_sum``, ...), as plain
``astjax.numpy`` code compiled like user code; index bookkeeping on the static arguments is
done by static helpers while the code is generated.
"""
import builtins

import numpy as np

import astjax.numpy as jnp

from ..random.checks import static_helper  # evaluated while generating code
from .bits import bit_reduce


def _ints(seq, what):
    try:
        return tuple(int(s) for s in seq)
    except TypeError:
        raise TypeError(f"{what} must be a sequence of ints, got {seq!r}") from None


@static_helper
def _inserted_axes(rank, broadcast_dimensions, ndim):
    """The axes ``broadcast_in_dim`` adds to an operand of rank ``ndim`` (the sizes of the
    result may be run-time ints, so only its ``rank`` is read here)."""
    dims = _ints(broadcast_dimensions, "broadcast_in_dim: broadcast_dimensions")
    if len(dims) != ndim:
        raise TypeError(f"broadcast_in_dim broadcast_dimensions must have length equal to "
                        f"operand ndim; got broadcast_dimensions {dims} for operand ndim "
                        f"{ndim}.")
    if any(b <= a for a, b in zip(dims, dims[1:])) or any(not 0 <= d < rank
                                                         for d in dims):
        raise TypeError(f"broadcast_in_dim broadcast_dimensions must be strictly increasing "
                        f"and within the output rank {rank}; got {dims}")
    return tuple(d for d in range(rank) if d not in dims)


def broadcast_in_dim(operand, shape, broadcast_dimensions, *, out_sharding=None):
    """``operand``'s axis ``i`` becomes axis ``broadcast_dimensions[i]`` of an array of
    ``shape``; the other axes are broadcast."""
    x = jnp.asarray(operand)
    axes = _inserted_axes(len(shape), broadcast_dimensions, x.ndim)
    return jnp.broadcast_to(jnp.expand_dims(x, axes), shape)


@static_helper
def _leading(rank, ndim):
    return tuple(range(rank, rank + ndim))


def broadcast(operand, sizes, *, out_sharding=None):
    """``operand`` broadcast to ``sizes + operand.shape``."""
    x = jnp.asarray(operand)
    return broadcast_in_dim(x, tuple(sizes) + x.shape, _leading(len(sizes), x.ndim))


@static_helper
def _slices(start_indices, limit_indices, strides, ndim):
    starts = _ints(start_indices, "slice: start_indices")
    limits = _ints(limit_indices, "slice: limit_indices")
    steps = (1,) * ndim if strides is None else _ints(strides, "slice: strides")
    if not len(starts) == len(limits) == len(steps) == ndim:
        raise TypeError(f"slice start_indices, limit_indices and strides must have the "
                        f"operand's rank {ndim}, got {starts}, {limits}, {strides}")
    if any(s < 0 for s in starts) or any(l < s for s, l in zip(starts, limits)) or \
            any(st < 1 for st in steps):
        raise TypeError(f"slice: bad indices start {starts}, limit {limits}, strides "
                        f"{steps}")
    return tuple(builtins.slice(s, l, st) for s, l, st in zip(starts, limits, steps))


def slice(operand, start_indices, limit_indices, strides=None):
    """``operand[start:limit:stride]`` on each axis (static ints)."""
    x = jnp.asarray(operand)
    return x[_slices(start_indices, limit_indices, strides, x.ndim)]


@static_helper
def _in_dim(ndim, axis, start, limit, stride):
    if not -ndim <= axis < ndim:
        raise ValueError(f"axis {axis} is out of bounds for an array of rank {ndim}")
    axis %= ndim
    return (np.s_[:],) * axis + (np.s_[start:limit:stride],)


def slice_in_dim(operand, start_index, limit_index, stride=1, axis=0):
    """``operand[start_index:limit_index:stride]`` along ``axis``."""
    x = jnp.asarray(operand)
    return x[_in_dim(x.ndim, axis, start_index, limit_index, stride)]


@static_helper
def _index_at(ndim, axis, index, keepdims):
    if not -ndim <= axis < ndim:
        raise ValueError(f"axis {axis} is out of bounds for an array of rank {ndim}")
    axis %= ndim
    return (np.s_[:],) * axis + ((np.s_[index:index + 1] if index != -1 else np.s_[-1:])
                                 if keepdims else index,)


def index_in_dim(operand, index, axis=0, keepdims=True):
    """``operand``'s ``index``-th slice along ``axis`` (keeping the axis, as size 1, with
    ``keepdims``)."""
    x = jnp.asarray(operand)
    return x[_index_at(x.ndim, axis, index, keepdims)]


def concatenate(operands, dimension):
    return jnp.concatenate(operands, axis=dimension)


def iota(dtype, size):
    """``0, 1, ..., size - 1`` in ``dtype``."""
    return jnp.arange(size, dtype=dtype)


@static_helper
def _iota_dim(rank, dimension):
    if not 0 <= dimension < rank:
        raise ValueError(f"broadcasted_iota: dimension {dimension} is out of bounds for "
                         f"an array of rank {rank}")
    return dimension


def broadcasted_iota(dtype, shape, dimension, *, out_sharding=None):
    """An array of ``shape`` holding each element's index along ``dimension``."""
    return broadcast_in_dim(iota(dtype, shape[_iota_dim(len(shape), dimension)]), shape,
                            (dimension,))


def rev(operand, dimensions):
    """``operand`` reversed along each of ``dimensions``."""
    x = jnp.asarray(operand)
    return jnp.flip(x, axis=tuple(dimensions)) if len(dimensions) else x


def expand_dims(array, dimensions):
    return jnp.expand_dims(array, tuple(dimensions))


def squeeze(array, dimensions):
    return jnp.squeeze(array, axis=tuple(dimensions))


def transpose(operand, permutation):
    return jnp.transpose(operand, tuple(permutation))


def reshape(operand, new_sizes, dimensions=None, *, out_sharding=None):
    """``operand`` (its axes first permuted by ``dimensions``) reshaped to ``new_sizes``."""
    x = jnp.asarray(operand)
    if dimensions is not None:
        x = jnp.transpose(x, tuple(dimensions))
    return jnp.reshape(x, new_sizes)


# ---- pad ---------------------------------------------------------------------------------

@static_helper
def _padding_config(padding_config, ndim):
    try:
        config = tuple((int(lo), int(hi), int(interior)) for lo, hi, interior in padding_config)
    except (TypeError, ValueError):
        raise TypeError(f"pad: padding_config must be a (low, high, interior) triple per "
                        f"dimension, got {padding_config!r}") from None
    if len(config) != ndim:
        raise ValueError(f"length of padding_config must equal the number of axes of "
                         f"operand, got padding_config {config} for operand of rank {ndim}")
    if any(c[2] < 0 for c in config):
        raise ValueError(f"interior padding in padding_config must be nonnegative, got "
                         f"padding_config {config}")
    return config


def _pad_last(x, value, lo, hi, interior):
    """``x`` padded on its last axis: ``interior`` values between elements, ``lo`` before
    and ``hi`` after (negative: cut off), by a gather with computed indices."""
    n = x.shape[-1]
    size = jnp.maximum(n + (n - 1) * interior, 0) + lo + hi
    q = jnp.arange(size) - lo
    src = q // (interior + 1)
    inside = jnp.logical_and(jnp.logical_and(q >= 0, q % (interior + 1) == 0), src < n)
    return jnp.where(inside, x[..., jnp.clip(src, 0, n - 1)], value)


def _pad_axes(x, value, config, k):
    if k == len(config):
        return x
    lo, hi, interior = config[k]
    if lo or hi or interior:
        x = jnp.moveaxis(_pad_last(jnp.moveaxis(x, k, -1), value, lo, hi, interior), -1, k)
    return _pad_axes(x, value, config, k + 1)


def pad(operand, padding_value, padding_config):
    """``operand`` padded with the scalar ``padding_value``: per axis a ``(low, high,
    interior)`` triple (``low``/``high`` may be negative, cutting elements off)."""
    x = jnp.asarray(operand)
    value = jnp.asarray(padding_value).astype(x.dtype)
    return _pad_axes(x, value, _padding_config(padding_config, x.ndim), 0)


# ---- reductions --------------------------------------------------------------------------

def reduce_sum(operand, axes, *, out_sharding=None):
    x = jnp.asarray(operand)
    return jnp.sum(x, axis=tuple(axes), dtype=x.dtype)


def reduce_prod(operand, axes):
    x = jnp.asarray(operand)
    return jnp.prod(x, axis=tuple(axes), dtype=x.dtype)


def reduce_max(operand, axes):
    return jnp.max(operand, axis=tuple(axes))


def reduce_min(operand, axes):
    return jnp.min(operand, axis=tuple(axes))


def reduce_and(operand, axes):
    """The and of ``operand``'s elements along ``axes``; bitwise for integers, as JAX."""
    return bit_reduce(operand, tuple(axes), "and")


def reduce_or(operand, axes):
    """The or of ``operand``'s elements along ``axes``; bitwise for integers, as JAX."""
    return bit_reduce(operand, tuple(axes), "or")


def full(shape, fill_value, dtype=None, *, sharding=None):
    return jnp.full(shape, fill_value, dtype=dtype)


def full_like(x, fill_value, dtype=None, shape=None, sharding=None):
    if shape is None:
        return jnp.full_like(x, fill_value, dtype=dtype)
    return jnp.full(shape, fill_value, dtype=jnp.asarray(x).dtype if dtype is None else dtype)
