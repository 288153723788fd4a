"""``lax.rng_bit_generator`` and ``lax.rng_uniform``, as JAX's names.

``rng_bit_generator`` is a pure function of its uint32[4] key, built on ``astjax.random``'s
Threefry (the two halves of the key xor-ed into a raw key): the same key gives the same bits
and new key, but not XLA's bits, which JAX does not promise across backends either.
``rng_uniform`` is JAX's stateful generator (its values depend on hidden state): NumPy's
global generator through ``pure_callback``.
"""
import enum

import numpy as np

import astjax.numpy as jnp
import astjax.random as jrandom

from ..callbacks import pure_callback
from ..random.checks import static_helper  # evaluated while generating code
from ..shapes_api import ShapeDtypeStruct


class RandomAlgorithm(enum.IntEnum):
    RNG_DEFAULT = 0
    RNG_THREE_FRY = 1
    RNG_PHILOX = 2


@static_helper
def _bits_dtypes(dtype, shape):
    """(the unsigned dtype drawn, the result dtype, the shape as a tuple); JAX's errors."""
    dtype = np.dtype(dtype)
    if dtype.kind not in "iu":
        raise TypeError(f"rng_bit_generator: unsupported dtype {dtype}")
    return np.dtype(f"uint{dtype.itemsize * 8}"), dtype, tuple(shape)


@static_helper
def _check_key(dtype, ndim):
    if np.dtype(dtype) != np.uint32 or ndim != 1:
        raise TypeError(f"rng_bit_generator: the key must be a uint32 array of shape (4,), "
                        f"got a {np.dtype(dtype).name} array of rank {ndim}")


def rng_bit_generator(key, shape, dtype=np.uint32, algorithm=RandomAlgorithm.RNG_DEFAULT):
    """``(new_key, bits)``: ``bits`` of ``shape`` and integer ``dtype`` drawn from ``key``
    (uint32[4]); ``algorithm`` is accepted and the bits are Threefry's whatever it is."""
    key = jnp.asarray(key)
    _check_key(key.dtype, key.ndim)
    if key.shape[0] != 4:
        raise TypeError(f"rng_bit_generator: the key must be a uint32 array of shape (4,), "
                        f"got shape {key.shape}")
    udt, out_dtype, shape = _bits_dtypes(dtype, shape)
    raw = jnp.stack([key[0] ^ key[2], key[1] ^ key[3]])
    pair = jrandom.split(raw)
    bits = jrandom.bits(pair[0], shape, udt)
    new_key = jrandom.bits(pair[1], (4,), jnp.uint32)
    return new_key, bits.astype(out_dtype)


_STATE = np.random.default_rng()


def _uniform(a, b, shape):
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype.kind in "iu":
        return _STATE.integers(a, b, size=shape, dtype=a.dtype, endpoint=False)
    return _STATE.uniform(a, b, size=shape).astype(a.dtype)


@static_helper
def _uniform_plan(a_dtype, b_dtype, shape):
    if np.dtype(a_dtype) != np.dtype(b_dtype):
        raise TypeError(f"rng_uniform: a and b must have one dtype, got {np.dtype(a_dtype)} "
                        f"and {np.dtype(b_dtype)}")
    import functools
    return functools.partial(_uniform, shape=tuple(shape)), tuple(shape)


def rng_uniform(a, b, shape):
    """Uniform values in ``[a, b)`` (scalars of one dtype) of ``shape``, from hidden state
    (NumPy's generator), as JAX's stateful ``rng_uniform``."""
    a, b = jnp.asarray(a), jnp.asarray(b)
    draw, shape = _uniform_plan(a.dtype, b.dtype, shape)
    return pure_callback(draw, ShapeDtypeStruct(shape, a.dtype), a, b)
