"""``lax``'s bit functions missing from jnp: ``shift_right_logical``, ``population_count``
and ``clz``, as plain ``astjax.numpy`` code on the operand viewed as an unsigned integer of
its width (``astype`` wraps), compiled like user code.
"""
import numpy as np

import astjax.numpy as jnp

from ..random.checks import static_helper  # evaluated while generating code


@static_helper
def _unsigned(dtype, fn):
    """(the unsigned dtype of ``dtype``'s width, its number of bits)."""
    dtype = np.dtype(dtype)
    if dtype.kind not in "iu":
        raise TypeError(f"{fn} does not accept dtype {dtype.name}. Accepted dtypes are "
                        f"subtypes of integer.")
    return np.dtype(f"uint{8 * dtype.itemsize}"), 8 * dtype.itemsize


@static_helper
def _halvings(bits):
    """1, 2, 4, ... up to ``bits // 2``."""
    return tuple(1 << k for k in range(bits.bit_length() - 1))


def shift_right_logical(x, y):
    """``x >> y`` filling with zeros (of a signed ``x`` too); shifts of the width or more,
    and negative ones, give 0, as in JAX."""
    x, y = jnp.asarray(x), jnp.asarray(y)
    udt, bits = _unsigned(x.dtype, "shift_right_logical")
    u = x.astype(udt)
    s = jnp.asarray(y).astype(udt)  # a negative shift becomes one of the width or more
    out_of_range = s >= bits
    shifted = jnp.right_shift(u, jnp.where(out_of_range, 0, s).astype(udt))
    return jnp.where(out_of_range, 0, shifted).astype(x.dtype)


def _popcount_unsigned(u, bits):
    # bit counts of pairs, nibbles, then bytes, summed into the low byte (no products, so
    # nothing overflows)
    udt = u.dtype
    m1 = jnp.asarray(0x5555555555555555 >> (64 - bits), dtype=udt)
    m2 = jnp.asarray(0x3333333333333333 >> (64 - bits), dtype=udt)
    m4 = jnp.asarray(0x0F0F0F0F0F0F0F0F >> (64 - bits), dtype=udt)
    v = u - (jnp.right_shift(u, 1) & m1)
    v = (v & m2) + (jnp.right_shift(v, 2) & m2)
    v = (v + jnp.right_shift(v, 4)) & m4
    for shift in _halvings(bits)[3:]:
        v = v + jnp.right_shift(v, shift)
    return v & jnp.asarray(0x7F, dtype=udt)


def population_count(x):
    """The number of bits set in each element of the integer ``x``, in ``x``'s dtype."""
    x = jnp.asarray(x)
    udt, bits = _unsigned(x.dtype, "population_count")
    return _popcount_unsigned(x.astype(udt), bits).astype(x.dtype)


def clz(x):
    """The number of leading zero bits of each element of the integer ``x`` (its width for
    0), in ``x``'s dtype."""
    x = jnp.asarray(x)
    udt, bits = _unsigned(x.dtype, "clz")
    v = x.astype(udt)
    for shift in _halvings(bits):  # every bit below the highest set one set too
        v = v | jnp.right_shift(v, shift)
    return (bits - _popcount_unsigned(v, bits)).astype(x.dtype)


def bit_reduce(x, axes, kind):
    """The and, or or xor ("and", "or", "xor") of the boolean or integer ``x``'s elements
    along ``axes``; for integers bit by bit: all set, any set, an odd number set."""
    x = jnp.asarray(x)
    if _is_bool(x.dtype):
        if kind == "and":
            return jnp.all(x, axis=axes)
        if kind == "or":
            return jnp.any(x, axis=axes)
        return jnp.sum(x, axis=axes, dtype=jnp.int32) % 2 == 1
    udt, bits = _unsigned(x.dtype, "reduce_" + kind)
    u = x.astype(udt)
    out = jnp.zeros_like(jnp.sum(u, axis=axes, dtype=udt))
    for k in range(bits):
        bit = jnp.right_shift(u, k) & 1
        if kind == "and":
            set_ = jnp.all(bit == 1, axis=axes)
        elif kind == "or":
            set_ = jnp.any(bit == 1, axis=axes)
        else:
            set_ = jnp.sum(bit, axis=axes, dtype=jnp.int32) % 2 == 1
        out = out | jnp.left_shift(set_.astype(udt), k)
    return out.astype(x.dtype)


@static_helper
def _is_bool(dtype):
    return np.dtype(dtype).kind == "b"


def mulhi(x, y, /):
    """The high half of the double-width product of the integers ``x`` and ``y`` (of one
    dtype): from four half-width partial products in the unsigned type, then corrected by
    the operands' signs for signed types (mod 2^width, as two's complement)."""
    x, y = jnp.asarray(x), jnp.asarray(y)
    udt, bits = _unsigned(x.dtype, "mulhi")
    half = bits // 2
    mask = jnp.asarray((1 << half) - 1, dtype=udt)
    ux, uy = x.astype(udt), y.astype(udt)
    x_lo, x_hi = ux & mask, jnp.right_shift(ux, half)
    y_lo, y_hi = uy & mask, jnp.right_shift(uy, half)
    lo_hi, hi_lo = x_lo * y_hi, x_hi * y_lo
    cross = jnp.right_shift(x_lo * y_lo, half) + (lo_hi & mask) + (hi_lo & mask)
    high = x_hi * y_hi + jnp.right_shift(lo_hi, half) + jnp.right_shift(hi_lo, half) + \
        jnp.right_shift(cross, half)
    if _signed(x.dtype):  # (x + 2^n [x < 0]) (y + 2^n [y < 0]) = x y + 2^n (...)
        high = high - jnp.where(x < 0, uy, 0).astype(udt) - jnp.where(y < 0, ux, 0).astype(udt)
    return high.astype(x.dtype)


@static_helper
def _signed(dtype):
    return np.dtype(dtype).kind == "i"
