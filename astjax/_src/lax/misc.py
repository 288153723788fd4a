"""Smaller ``lax`` functions: ``Precision`` (accepted and ignored, as astjax's products
and convolutions ignore ``precision``), ``optimization_barrier`` (the identity: astjax
does not reorder across calls), ``empty`` (zeros), ``broadcast_shapes``, ``dtype``, and
``approx_max_k``/``approx_min_k`` (exact: ``top_k``, which is within any recall target).
"""
import enum

import numpy as np

import astjax.numpy as jnp

from .. import dtypes as _dtypes
from ..random.checks import static_helper  # evaluated while generating code
from .sorting import top_k


class Precision(enum.Enum):
    """Matrix-multiply precision, as ``jax.lax.Precision``; astjax computes in the operands'
    dtype whatever is asked."""
    DEFAULT = 0
    HIGH = 1
    HIGHEST = 2

    @classmethod
    def _missing_(cls, value):
        names = {"default": cls.DEFAULT, "bfloat16": cls.DEFAULT, "fastest": cls.DEFAULT,
                 "high": cls.HIGH, "bfloat16_3x": cls.HIGH, "tensorfloat32": cls.HIGH,
                 "highest": cls.HIGHEST, "float32": cls.HIGHEST}
        if isinstance(value, str) and value.lower() in names:
            return names[value.lower()]
        return None

    def __str__(self):
        return self.name


def optimization_barrier(operand, /):
    """``operand`` (any pytree) itself."""
    return operand


def empty(shape, dtype, *, out_sharding=None):
    """An array of ``shape`` and ``dtype`` whose values do not matter (zeros here)."""
    return jnp.zeros(shape, dtype)


def broadcast_shapes(*shapes):
    return jnp.broadcast_shapes(*shapes)


def dtype(x):
    """``x``'s dtype as JAX canonicalizes it (Python scalars their default dtypes, 64-bit
    types 32-bit unless x64 is on)."""
    if _dtypes.is_python_scalar(x):
        return np.dtype(_dtypes.python_scalar_dtype(x))
    found = getattr(x, "dtype", None)
    return _dtypes.canonicalize_dtype(np.dtype(found if found is not None
                                               else np.result_type(x)))


@static_helper
def _order_key(dtype_):
    return np.dtype(dtype_).kind


def approx_max_k(operand, k, reduction_dimension=-1, recall_target=0.95,
                 reduction_input_size_override=-1, aggregate_to_topk=True):
    """The ``k`` largest values along ``reduction_dimension`` and their indices: exactly
    (``top_k``), which meets any ``recall_target``."""
    return top_k(operand, k, axis=reduction_dimension)


def approx_min_k(operand, k, reduction_dimension=-1, recall_target=0.95,
                 reduction_input_size_override=-1, aggregate_to_topk=True):
    """The ``k`` smallest values along ``reduction_dimension`` (ascending) and their
    indices, exactly."""
    x = jnp.asarray(operand)
    kind = _order_key(x.dtype)
    if kind == "b":
        flipped = jnp.logical_not(x)
    elif kind in "iu":
        flipped = jnp.bitwise_not(x)  # order-reversing without overflow
    else:
        flipped = -x
    _, idx = top_k(flipped, k, axis=reduction_dimension)
    return jnp.take_along_axis(x, idx, axis=reduction_dimension), idx


@static_helper
def _precision_plan(dtype_, exponent_bits, mantissa_bits):
    """(source mantissa bits, source's smallest normal exponent, reduced exponent bias or
    None when the exponent keeps its width)."""
    dtype_ = np.dtype(dtype_)
    if dtype_.kind != "f":
        raise TypeError(f"reduce_precision does not accept dtype {dtype_.name}. Accepted "
                        f"dtypes are subtypes of floating.")
    if int(exponent_bits) < 1 or int(mantissa_bits) < 0:
        raise ValueError(f"reduce_precision: exponent_bits must be >= 1 and mantissa_bits "
                         f">= 0, got {exponent_bits} and {mantissa_bits}")
    info = np.finfo(dtype_)
    src_exponent_bits = info.bits - info.nmant - 1
    bias = (1 << (int(exponent_bits) - 1)) - 1
    return (int(info.nmant), int(info.minexp),
            bias if int(exponent_bits) < src_exponent_bits else None)


def _exponent(x):
    """floor(log2 |x|), exactly: log2's guess corrected by comparing with powers of two
    (frexp would do, but its tuple result breaks Numba's loop fusion)."""
    magnitude = jnp.abs(x)
    finite = jnp.logical_and(jnp.isfinite(magnitude), magnitude > 0)
    guess = jnp.floor(jnp.log2(jnp.where(finite, magnitude, 1))).astype(jnp.int32)
    one = jnp.ones_like(magnitude)
    guess = jnp.where(jnp.ldexp(one, guess) > magnitude, guess - 1, guess)
    return jnp.where(jnp.ldexp(one, guess + 1) <= magnitude, guess + 1, guess)


def reduce_precision(operand, exponent_bits, mantissa_bits):
    """``operand`` rounded as XLA's ReducePrecision rounds it: the significand to
    ``mantissa_bits`` (to nearest, ties to even), then, with fewer ``exponent_bits``,
    magnitudes past the reduced range to inf and below its smallest normal to a signed
    zero; NaN stays NaN. Written with ldexp and rounding, exact in the operand's dtype."""
    x = jnp.asarray(operand)
    src_mantissa, min_exponent, bias = _precision_plan(x.dtype, exponent_bits, mantissa_bits)
    r = x
    if mantissa_bits < src_mantissa:
        quantum = jnp.maximum(_exponent(x), min_exponent) - mantissa_bits
        r = jnp.ldexp(jnp.round(jnp.ldexp(x, -quantum)), quantum)
    if bias is not None:
        magnitude = jnp.abs(r)
        r = jnp.where(magnitude >= 2.0 ** (bias + 1), jnp.copysign(jnp.inf, r), r)
        r = jnp.where(magnitude < 2.0 ** (1 - bias), jnp.copysign(0.0, r), r)
    return jnp.where(jnp.isnan(x), x, r).astype(x.dtype)


def composite(decomposition, name, version=0):
    """``decomposition`` itself: astjax has no composite ops to name, and running the
    decomposition is what JAX does where a backend does not know ``name``."""
    return decomposition


def broadcast_like(arr, like_arr):
    """``arr`` broadcast to ``like_arr``'s shape."""
    return jnp.broadcast_to(arr, jnp.shape(like_arr))
