"""``packbits``, ``unpackbits`` and ``bitwise_count`` written with ``astjax.numpy`` ops,
read by the compiler like user code, as those in ``_composites``. Semantics and dtypes follow
JAX 0.10.2. Lengths are computed at run time (gathers with clipped indices instead of
padding), so one compiled function serves every size.
"""
import numpy as np

import astjax.numpy as jnp

from .._src.random.checks import static_helper  # evaluated while generating code
from ._sorting import _normalize_axis


@static_helper
def _pack_args(kind, bitorder, axis, ndim):
    if kind not in "iub":
        raise TypeError("Expected an input array of integer or boolean data type")
    if bitorder not in ("little", "big"):
        raise ValueError("'order' must be either 'little' or 'big'")
    return None if axis is None else _normalize_axis(axis, ndim, "packbits")


@static_helper
def _unpack_args(dtype, bitorder, axis, ndim, count):
    if np.dtype(dtype) != np.uint8:
        raise TypeError("Expected an input array of unsigned byte data type")
    if bitorder not in ("little", "big"):
        raise ValueError("'order' must be either 'little' or 'big'")
    if count is not None and (not isinstance(count, (int, np.integer)) or isinstance(count, bool)):
        raise TypeError(f"unpackbits(): count must be an int known when code is generated, "
                        f"got {count!r}")
    return None if axis is None else _normalize_axis(axis, ndim, "unpackbits")


def _shifts(bitorder):
    """The shift of each of a byte's 8 places (the first place is the highest bit for
    'big')."""
    s = jnp.arange(8, dtype=np.uint8)
    if bitorder == "big":
        return 7 - s
    return s


def packbits(a, axis=None, bitorder="big"):
    """The elements of ``a`` as bits (nonzero is 1), packed 8 to a uint8 along ``axis``
    (the flattened array if None), zero-padded at the end, as ``jnp.packbits``."""
    a = jnp.asarray(a)
    axis = _pack_args(a.dtype.kind, bitorder, axis, a.ndim)
    bits = (a != 0).astype(np.uint8)
    if axis is None:
        bits = jnp.ravel(bits)
        axis = 0
    bits = jnp.moveaxis(bits, axis, -1)
    n = bits.shape[-1]
    # place j of byte i is element 8 i + j, zero past the end
    idx = jnp.expand_dims(jnp.arange((n + 7) // 8), 1) * 8 + jnp.arange(8)
    got = jnp.take(bits, jnp.minimum(idx, jnp.maximum(n - 1, 0)), axis=-1)
    got = jnp.where(idx < n, got, jnp.zeros_like(got))
    packed = jnp.sum(jnp.left_shift(got, _shifts(bitorder)), axis=-1).astype(np.uint8)
    return jnp.moveaxis(packed, -1, axis)


def unpackbits(a, axis=None, count=None, bitorder="big"):
    """The bits of the uint8 ``a`` along ``axis`` (the flattened array if None), 8 per
    byte, as uint8; ``count`` (static) keeps that many (zero-padded) or, negative, drops
    that many from the end, as ``jnp.unpackbits``."""
    a = jnp.asarray(a)
    axis = _unpack_args(a.dtype, bitorder, axis, a.ndim, count)
    if axis is None:
        a = jnp.ravel(a)
        axis = 0
    a = jnp.moveaxis(a, axis, -1)
    bits = jnp.right_shift(jnp.expand_dims(a, -1), _shifts(bitorder)) & np.uint8(1)
    bits = jnp.reshape(bits, a.shape[:-1] + (a.shape[-1] * 8,))
    if count is not None:
        if count < 0:
            bits = bits[..., :count]
        else:
            pad = jnp.zeros(bits.shape[:-1] + (count,), np.uint8)
            bits = jnp.concatenate((bits, pad), axis=-1)[..., :count]
    return jnp.moveaxis(bits, -1, axis)


@static_helper
def _count_args(dtype):
    dtype = np.dtype(dtype)
    if dtype.kind not in "iub":
        raise TypeError(f"population_count does not accept dtype {dtype.name}. Accepted "
                        f"dtypes are subtypes of integer.")
    return 1 if dtype.kind == "b" else dtype.itemsize * 8


def bitwise_count(x, /):
    """The number of 1 bits in ``|x|`` (uint8), as ``jnp.bitwise_count``."""
    x = jnp.asarray(x)
    nbits = _count_args(x.dtype)
    if nbits == 1:
        return x.astype(np.uint8)
    x = jnp.abs(x)  # |int min| wraps to itself, one bit set, as JAX's
    count = jnp.zeros(x.shape, np.uint8)
    for b in range(nbits):
        count = count + (jnp.right_shift(x, b) & 1).astype(np.uint8)
    return count


__all__ = ["bitwise_count", "packbits", "unpackbits"]
