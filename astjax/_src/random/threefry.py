"""Threefry-2x32 (20 rounds) and the key operations JAX builds on it, bit for bit.

Everything is ``astjax.numpy`` code on uint32 arrays (arithmetic wraps), so it
runs eagerly and compiles; the hash itself is a pair of ops (``ops/bits.py``). A key is a uint32 array of shape ``B + (2,)``: one key
(``B == ()``) in the public API, a batch of keys inside the gamma sampler; every
function here maps over the batch.

Two layouts of the counters, chosen by ``jax_threefry_partitionable``:

* partitionable (JAX's default): element ``i`` of an output of shape ``S`` hashes
  the 64-bit counter ``i`` (split into two 32-bit words) and combines the two
  output words (``x0 ^ x1`` for 32-bit results);
* original: the counters ``0 .. n-1`` are split into two halves that form the two
  input words; the outputs are concatenated.
"""
import numpy as np

import astjax.numpy as jnp

from ..ops import bits as _bits
from . import checks as _c


def threefry2x32(k1, k2, x0, x1):
    """The Threefry-2x32 block cipher, 20 rounds: key words ``k1, k2``, counter words
    ``x0, x1`` (uint32 arrays, broadcast together). Returns the two output words."""
    return _bits.threefry2x32_x0(k1, k2, x0, x1), _bits.threefry2x32_x1(k1, k2, x0, x1)


def threefry_2x32(keypair, count):
    """JAX's ``threefry_2x32`` (jax/_src/random/threefry2x32.py; not in jax.random): hash
    the uint32 array ``count`` with the key words ``keypair = (k1, k2)``, the original
    counter layout (the halves of the flat count are the two input words)."""
    k1, k2 = keypair
    count = jnp.asarray(count)
    flat = jnp.ravel(count)
    n = flat.shape[0]
    padded = jnp.concatenate([flat, jnp.zeros((n % 2,), dtype=jnp.uint32)])
    half = padded.shape[0] // 2
    y0, y1 = threefry2x32(jnp.asarray(k1, dtype=jnp.uint32), jnp.asarray(k2, dtype=jnp.uint32),
                          padded[:half], padded[half:])
    return jnp.reshape(jnp.concatenate([y0, y1])[:n], count.shape)


# --- sizes: known when code is generated, or counted at run time --------------------------------
#
# Eagerly every shape is a tuple of ints. In compiled code a shape is known when it is a
# constant (the ``shape`` argument of a sampler); one taken from an array (``x.shape``) is
# known only at run time, and so is its number of elements.

def _size_known(shape):
    return _c.size_of(shape)


def _size_at_run_time(shape):
    return jnp.broadcast_to(jnp.zeros((), dtype=jnp.bool_), shape).size


size = _c.known_or_run_time(_size_known, _size_at_run_time)


def _counter_count_known(shape):
    return _c.counter_count(shape)


# (more than 2**32 - 2 elements in a shape known at run time only: not checked)
counter_count = _c.known_or_run_time(_counter_count_known, _size_at_run_time)


def _key_words(key, n):
    """The two words of a batch of keys ``B + (2,)``, with ``n`` trailing axes added so
    they broadcast against counters of rank ``n``."""
    k1 = key[..., 0]
    k2 = key[..., 1]
    if n > 0:
        axes = _c.trailing_axes(key.ndim - 1, n)
        k1 = jnp.expand_dims(k1, axes)
        k2 = jnp.expand_dims(k2, axes)
    return k1, k2


def _hash_iota(key, m):
    """JAX's ``threefry_2x32(key, iota(m))``: the counters 0..m-1, padded to even length
    with a 0 and split in halves as the two input words; the output halves are
    concatenated and the padding dropped. Shape ``B + (m,)``."""
    half = (counter_count((m,)) + 1) // 2
    k1, k2 = _key_words(key, 1)
    x0 = jnp.arange(half, dtype=jnp.uint32)
    x1 = jnp.arange(half, 2 * half, dtype=jnp.uint32)
    if m % 2 == 1:
        x1 = jnp.where(x1 < m, x1, np.uint32(0))
    y0, y1 = threefry2x32(k1, k2, x0, x1)
    out = jnp.concatenate([y0, y1], axis=-1)
    if m % 2 == 1:
        out = out[..., :m]
    return out


def _counters(shape):
    """The partitionable layout's counter words for an output of ``shape``: the high and
    low 32 bits of the flat index (the high word is 0 below 2**32 elements). A scalar
    output hashes counter 0 as a 1-element array (NumPy warns on wrapping 0-d
    arithmetic, not on arrays); ``_scalar_out`` drops that axis. The high word has size-1
    dims: it broadcasts, so compiled code never stores a zero per element."""
    n = counter_count(shape)
    full = shape
    if len(shape) == 0:
        full = (1,)
    lo = jnp.arange(n, dtype=jnp.uint32)
    if len(full) > 1:
        lo = jnp.reshape(lo, full)
    hi = jnp.zeros((1,) * len(full), dtype=jnp.uint32)
    return hi, lo


def _scalar_out(x, shape, trailing=0):
    """Drop the axis ``_counters`` added for a scalar ``shape`` (``trailing`` axes follow)."""
    if len(shape) > 0:
        return x
    if trailing == 0:
        return x[..., 0]
    return x[..., 0, :]


def seed(seed_value):
    """PRNGKey(seed): the seed's high 32 bits (0 for seeds of 32 bits or less) and its low
    32 bits, as uint32 words. ``seed_value`` is an integer scalar array."""
    s = jnp.asarray(seed_value)
    lo = s.astype(jnp.uint32)
    if s.dtype.itemsize == 8:
        hi = jnp.right_shift(s.astype(jnp.uint64), 32).astype(jnp.uint32)
    else:
        hi = jnp.zeros((), dtype=jnp.uint32)
    return jnp.stack([hi, lo])


def split(key, shape, partitionable):
    """``shape`` new keys from each key: ``B + shape + (2,)``."""
    if partitionable:
        hi, lo = _counters(shape)
        k1, k2 = _key_words(key, max(len(shape), 1))
        b1, b2 = threefry2x32(k1, k2, hi, lo)
        return _scalar_out(jnp.stack([b1, b2], axis=-1), shape, 1)
    n = size(shape)
    bits = _hash_iota(key, 2 * n)
    return jnp.reshape(bits, key.shape[:-1] + shape + (2,))


def split2(key, partitionable):
    """split(key, 2) as a pair of keys."""
    keys = split(key, (2,), partitionable)
    return keys[..., 0, :], keys[..., 1, :]


def fold_in(key, data):
    """A new key from ``key`` and a uint32 ``data``: the hash of the counter (0, data).
    The same in both layouts."""
    k1, k2 = _key_words(key, 1)
    x1 = jnp.reshape(jnp.asarray(data, dtype=jnp.uint32), (1,))
    y0, y1 = threefry2x32(k1, k2, jnp.zeros((1,), dtype=jnp.uint32), x1)
    return jnp.stack([y0[..., 0], y1[..., 0]], axis=-1)


def random_bits(key, bit_width, shape, partitionable):
    """Uniform random unsigned integers of ``bit_width`` (8, 16, 32, 64) bits, ``B + shape``."""
    if partitionable:
        hi, lo = _counters(shape)
        k1, k2 = _key_words(key, max(len(shape), 1))
        b1, b2 = threefry2x32(k1, k2, hi, lo)
        if bit_width == 64:
            out = jnp.left_shift(b1.astype(jnp.uint64), 32) | b2.astype(jnp.uint64)
        elif bit_width == 32:
            out = b1 ^ b2
        else:
            out = (b1 ^ b2).astype(_c.uint_of_width(bit_width))
        return _scalar_out(out, shape)
    count = size(shape)
    max_count = (bit_width * count + 31) // 32
    bits = _hash_iota(key, max_count)
    batch = key.shape[:-1]
    if bit_width == 64:
        half = max_count // 2
        hi64 = bits[..., :half].astype(jnp.uint64)
        lo64 = bits[..., half:].astype(jnp.uint64)
        return jnp.reshape(jnp.left_shift(hi64, 32) | lo64, batch + shape)
    if bit_width == 32:
        return jnp.reshape(bits, batch + shape)
    # 8 or 16 bits: each 32-bit word gives 32 // bit_width values, low bits first
    per_word = 32 // bit_width
    shifts = jnp.arange(per_word, dtype=jnp.uint32) * np.uint32(bit_width)
    mask = np.uint32(2 ** bit_width - 1)
    parts = jnp.right_shift(jnp.expand_dims(bits, -1), shifts) & mask
    flat = jnp.reshape(parts, batch + (max_count * per_word,))
    flat = flat[..., :count].astype(_c.uint_of_width(bit_width))
    return jnp.reshape(flat, batch + shape)
