"""Bit-level and sorting ops that ``astjax.random`` needs: shifts, the Threefry hash, XLA's
float32 log / log1p / exp / erf / erfinv, nextafter, frexp, ldexp, fma, argsort.

Shifts follow XLA (and so JAX), not C: a shift by the bit width or more gives 0
(``right_shift`` of a negative signed value gives -1), where NumPy's result is
platform-defined. ``right_shift`` of an unsigned integer is a logical shift, as
``lax.shift_right_logical``; of a signed one, arithmetic. Booleans shift as int32,
as in JAX (its promote_args_numeric). None of these ops is differentiable.
"""
import numpy as np

from .. import dtypes
from ..errors import ShapeError
from ..ir.types import ArrayType, SequenceType, as_array_type
from .elementwise import _int_or_bool, _no_complex
from ..random import xla_f32 as _xla_f32
from ..random.threefry_hash import threefry2x32_hash
from .registry import NAMESPACE, Op, elementwise, elementwise_rule
from .shape import normalize_axis


def _shift_operands(x, y):
    """Both operands in the promoted dtype (bools were cast to int32 before). NumPy, like
    XLA, gives 0 (or -1 for a negative signed value shifted right) for amounts outside
    [0, bits); a Python int amount is checked here since it cannot be cast first."""
    dtype = np.result_type(x, y)  # NEP 50: a Python int takes the array's dtype
    x = np.asarray(x).astype(dtype, copy=False)
    if isinstance(y, (int, np.integer)) and not isinstance(y, bool):
        big = not 0 <= int(y) < dtype.itemsize * 8
        return x, dtype.type(dtype.itemsize * 8 - 1 if big else int(y)), dtype, big
    return x, np.asarray(y).astype(dtype, copy=False), dtype, False


def _left_shift(x, y):
    x, y, dtype, big = _shift_operands(x, y)
    if big:
        return np.zeros_like(x)
    return np.asarray(np.left_shift(x, y)).astype(dtype, copy=False)


def _right_shift(x, y):
    x, y, dtype, big = _shift_operands(x, y)
    if big and dtype.kind == "u":
        return np.zeros_like(x)
    return np.asarray(np.right_shift(x, y)).astype(dtype, copy=False)  # big: bits-1 fills


left_shift = elementwise("left_shift", _left_shift, nin=2, numeric=True,
                         dtype_check=_int_or_bool, differentiable=False,
                         aliases=(np.left_shift,))
right_shift = elementwise("right_shift", _right_shift, nin=2, numeric=True,
                          dtype_check=_int_or_bool, differentiable=False,
                          aliases=(np.right_shift,))
left_shift.numpy_reference = np.left_shift
right_shift.numpy_reference = np.right_shift


def _threefry_operands(name, dtype):
    if dtype != np.uint32:
        raise TypeError(f"{name} hashes uint32 words, got {dtype}")


_last_hash = [(), ()]  # the last operands and both words: the x1 op after the x0 op reuses them


def _threefry_word(i):
    def impl(*operands):
        last, words = _last_hash
        if len(last) != 4 or any(a is not b for a, b in zip(last, operands)):
            with np.errstate(over="ignore"):  # 0-d arithmetic warns when it wraps
                words = threefry2x32_hash(*(np.asarray(a, np.uint32) for a in operands))
            _last_hash[:] = [operands, words]
        return np.asarray(words[i], np.uint32)[()]
    return impl


# Threefry-2x32's two output words of the key words and counter words (broadcast together).
# Generated Numba code calls the hash compiled once, one call per word (LLVM may inline both
# and share the work: jit of random.bits(key, (10**7,)) ran as fast as with the hash written
# as array code); random/threefry.py builds JAX's key operations on them.
threefry2x32_x0, threefry2x32_x1 = (
    elementwise(f"threefry2x32_x{i}", _threefry_word(i), nin=4,
                dtype_check=_threefry_operands, differentiable=False) for i in (0, 1))
for _i, _op in enumerate((threefry2x32_x0, threefry2x32_x1)):
    _op.rules["numba_scalar"] = \
        lambda args, dtype, i=_i: f"_rt.threefry2x32({', '.join(args)})[{i}]"
    del NAMESPACE[_op.name]  # not a jnp function: random/threefry.py calls the ops


def _float32_operand(name, dtype):
    if dtype != np.float32:
        raise TypeError(f"{name} computes float32, got {dtype}")


def _xla_value(fn):
    def impl(x):
        with np.errstate(all="ignore"):  # nan from log of a negative, erfinv beyond 1
            return np.asarray(fn(np.asarray(x, np.float32)), np.float32)[()]
    return impl


# XLA's float32 algorithms (random/xla_f32.py), one elementwise op each: generated Numba code
# calls the function compiled once. Their values only: random/special.py applies them to
# stop_gradient(x) and adds the exact derivative.
xla_log32, xla_log1p32, xla_exp32, xla_erf32, xla_erfinv32 = (
    elementwise(f"xla_{f.__name__}", _xla_value(f), dtype_check=_float32_operand,
                differentiable=False)
    for f in (_xla_f32.log32, _xla_f32.log1p32, _xla_f32.exp32, _xla_f32.erf32,
              _xla_f32.erfinv32))
for _op in (xla_log32, xla_log1p32, xla_exp32, xla_erf32, xla_erfinv32):
    _op.rules["numba_scalar"] = lambda args, dtype, n=_op.name: f"_rt.{n}({args[0]})"
    del NAMESPACE[_op.name]  # not jnp functions: random/special.py calls the ops


def _nextafter(x, y):
    """The next float after ``x`` towards ``y`` (in the promoted float dtype)."""
    return np.nextafter(x, y)


nextafter = elementwise("nextafter", _nextafter, nin=2, inexact=True, dtype_check=_no_complex,
                        differentiable=False, aliases=(np.nextafter,))


# --- frexp / ldexp: a float's exponent, exactly ------------------------------------------------

def _frexp(x):
    """(mantissa in [0.5, 1) with x's sign, int32 exponent): x == mantissa * 2**exponent."""
    m, e = np.frexp(x)
    return (np.asarray(m), np.asarray(e).astype(np.int32))


def _frexp_rule(x):
    t = as_array_type(x)
    if t.dtype.kind == "c":
        raise ShapeError("frexp() is not defined for complex arrays")
    dtype, weak = dtypes.to_inexact(t.dtype, t.weak)
    return SequenceType((ArrayType(np.dtype(dtype), t.ones, weak),
                         ArrayType(np.dtype(np.int32), t.ones, False)), "tuple")


frexp = Op("frexp", _frexp, _frexp_rule, aliases=(np.frexp,))


def _ldexp(x1, x2):
    """x1 * 2**x2, exactly (x2 an integer array)."""
    x1 = np.asarray(x1)
    return np.asarray(np.ldexp(x1, np.asarray(x2).astype(np.int32))).astype(x1.dtype, copy=False)


def _ldexp_rule(x1, x2):
    a, n = as_array_type(x1), as_array_type(x2)
    if n.dtype.kind not in "iub":
        raise ShapeError(f"ldexp(): the exponent must be an integer array, got {n.dtype}")
    if a.dtype.kind == "c":
        raise ShapeError("ldexp() is not defined for complex arrays")
    from ..ir.types import broadcast_ones
    dtype, weak = dtypes.to_inexact(a.dtype, a.weak)
    return ArrayType(np.dtype(dtype), broadcast_ones(a, n), weak)


ldexp = Op("ldexp", _ldexp, _ldexp_rule, operands=("x1", "x2"), promote=("x1",), inexact=True,
           aliases=(np.ldexp,))


# --- fused multiply-add -----------------------------------------------------------------------

def _two_product(a, b):
    """p, e with p + e == a * b exactly (Dekker, Veltkamp's split; float64)."""
    p = a * b
    split = 134217729.0  # 2**27 + 1
    ah = a * split
    ah = ah - (ah - a)
    al = a - ah
    bh = b * split
    bh = bh - (bh - b)
    bl = b - bh
    e = ((ah * bh - p) + ah * bl + al * bh) + al * bl
    return p, e


def _two_sum(a, b):
    """s, e with s + e == a + b exactly (Knuth's TwoSum)."""
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def _round_to_odd_sum(p, z):
    """p + z in float64 rounded to odd (an inexact sum gets the neighbour whose last bit is
    1): rounding that to a float of at most 51 bits rounds the exact sum once."""
    s, err = _two_sum(p, z)
    even = (s.view(np.int64) & 1) == 0
    away = np.where(err > 0, np.inf, -np.inf)
    return np.where((err != 0) & even & np.isfinite(s), np.nextafter(s, away), s)


def _fma(x, y, z):
    """``x * y + z`` rounded once, as XLA computes a multiply feeding an add (it fuses them
    into an FMA instruction on CPUs and GPUs that have one). float16/float32: the product
    is exact in float64, and so is rounding the float64 sum to the result type unless that
    sum is a tie there: those sums are rounded to odd first (then they round once).
    float64: the exact product and sum (error-free transformations) give the correctly
    rounded result but for rare ties."""
    dtype = np.result_type(x, y, z)
    x, y, z = (np.asarray(v, dtype) for v in (x, y, z))
    if dtype.kind != "f":
        return np.asarray(x * y + z).astype(dtype, copy=False)
    if dtype.itemsize <= 4:
        p = np.multiply(x, y, dtype=np.float64)  # exact
        s = np.asarray(np.add(p, z, dtype=np.float64))
        info = np.finfo(dtype)
        # (in place in p: temporaries of 8 bytes per element cost more than the arithmetic)
        work = p if isinstance(p, np.ndarray) and p.shape == s.shape else np.empty_like(s)
        low = np.bitwise_and(s.view(np.int64), (1 << (52 - info.nmant)) - 1,
                             out=work.view(np.int64))
        tie = low == 1 << (51 - info.nmant)
        tie |= np.abs(s, out=work) < info.tiny
        if tie.any():  # a tie of dtype (or in its subnormal range): rounding s may be wrong
            x, y, z = (np.broadcast_to(v, s.shape)[tie] for v in (x, y, z))
            s[tie] = _round_to_odd_sum(np.multiply(x, y, dtype=np.float64),
                                       z.astype(np.float64))
        return s.astype(dtype)
    with np.errstate(all="ignore"):
        p, e = _two_product(x, y)
        s, t = _two_sum(p, z)
        out = s + (t + e)
        plain = x * y + z
        return np.asarray(np.where(np.isfinite(out), out, plain)).astype(dtype, copy=False)


def _fma_rule(x, y, z):
    return _fma_op_rule(x, y, z, _op=fma)


_fma_op_rule = elementwise_rule()
fma = Op("fma", _fma, _fma_rule, operands=("x", "y", "z"), promote=("x", "y", "z"))
# its VJP rule is registered by astjax._src.random.ad_rules (it needs the AD package)


# --- argsort --------------------------------------------------------------------------------

def argsort(a, axis=-1, stable=True):
    """Indices that sort ``a`` along ``axis`` (ascending; equal elements keep their order,
    as JAX's default ``stable=True``; complex values by real part, then imaginary part, as
    JAX and NumPy). The indices have the default integer dtype."""
    a = np.asarray(a)
    out = np.argsort(a, axis=axis, kind="stable")
    return out.astype(dtypes.default_int(), copy=False)


def _argsort_rule(a, axis=-1, stable=True):
    if not isinstance(a, ArrayType) and not hasattr(a, "value"):
        raise ShapeError("argsort(): a must be an array")
    a = as_array_type(a)
    if a.ndim == 0:
        raise ShapeError("argsort(): needs an array of rank >= 1, got a scalar")
    normalize_axis(axis, a.ndim, "argsort")
    if stable is not True:
        raise ShapeError("argsort(): only stable=True is supported")
    return ArrayType(dtypes.default_int(), a.ones, False)


Op("argsort", argsort, _argsort_rule, static=("axis", "stable"), differentiable=False,
   aliases=(np.argsort,))
