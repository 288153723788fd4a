"""Elementwise ops: arithmetic, comparison, logic and math functions."""
import math
import operator

import numpy as np
import scipy.special

from ..errors import ShapeError
from ..ir.types import Static, as_array_type, is_numeric
from .registry import elementwise, register_method, register_name


def _no_bool(name, dtype):
    if dtype.kind == "b":
        raise ShapeError(f"{name}() does not accept boolean arrays; convert with .astype(int)")


def _int_or_bool(name, dtype):
    if dtype.kind not in "biu":
        raise ShapeError(f"{name}() needs integer or boolean arrays, got {dtype}")


def _no_complex(name, dtype):
    if dtype.kind == "c":
        raise ShapeError(f"{name}() is not defined for complex arrays")


# --- arithmetic (binary, numeric promotion) ------------------------------------------------
add = elementwise("add", np.add, nin=2, infix="+", aliases=(np.add, operator.add))
subtract = elementwise("subtract", np.subtract, nin=2, infix="-", dtype_check=_no_bool,
                       aliases=(np.subtract, operator.sub))
multiply = elementwise("multiply", np.multiply, nin=2, infix="*",
                       aliases=(np.multiply, operator.mul))
true_divide = elementwise("true_divide", np.true_divide, nin=2, infix="/", inexact=True,
                          aliases=(np.true_divide, operator.truediv))
def _floor_divide(x, y):
    """x // y; of floats as JAX computes it (CPython's float_divmod, rounded half away from
    zero), where NumPy's zero quotients take the sign of x / y: -0. // 1. is 0. in JAX."""
    if np.result_type(x, y).kind != "f":
        with np.errstate(divide="ignore"):
            out = np.floor_divide(x, y)
        if out.dtype.kind in "iu" and np.any(np.asarray(y) == 0):
            # XLA's x / 0 is -1 (all ones unsigned), which JAX's floor adjustment makes -2
            # for x != 0; NumPy gives 0
            by_zero = np.iinfo(out.dtype).max if out.dtype.kind == "u" else \
                np.where(np.asarray(x) == 0, -1, -2)
            out = np.where(np.asarray(y) == 0, by_zero, out).astype(out.dtype)
        return out
    with np.errstate(invalid="ignore", divide="ignore"):
        mod = np.fmod(x, y)
        div = np.where(y == 0, x, x - mod) / y
        div = np.where((mod != 0) & (np.sign(y) != np.sign(mod)), div - 1, div)
        rounded = np.trunc(div)
        return np.where(np.abs(div - rounded) >= 0.5, rounded + np.sign(div), rounded)


def _remainder(x, y):
    """x % y; of floats as JAX computes it: C's fmod moved to y's sign when it is not zero,
    so a zero keeps x's sign (NumPy's takes y's: remainder(-0., 2.) is -0. in JAX)."""
    if np.result_type(x, y).kind != "f":
        return np.remainder(x, y)
    with np.errstate(invalid="ignore"):
        mod = np.fmod(x, y)
        return np.where((mod != 0) & ((mod < 0) != (y < 0)), mod + y, mod)


def _integer_infix(op, by_constant=False):
    """Whether generated python-backend code may print ``a % b`` (``a // b``): for integers
    only, NumPy's float ``%`` and ``//`` differ from JAX's in the sign of zeros; and
    (``by_constant``) by a nonzero constant only, NumPy's x // 0 of integers being 0."""
    def infix(types):
        y = types["y"]
        return op.promoted_dtype(types)[0].kind != "f" and (
            not by_constant or isinstance(y, Static) and y.value != 0)
    return infix


# numeric=True: bool operands compute as int32 (bool // bool is int32 in JAX)
floor_divide = elementwise("floor_divide", _floor_divide, nin=2, infix="//", numeric=True,
                           dtype_check=_no_complex, aliases=(np.floor_divide, operator.floordiv))
remainder = elementwise("remainder", _remainder, nin=2, infix="%", numeric=True,
                        dtype_check=_no_complex, aliases=(np.remainder, np.mod, operator.mod))
floor_divide.numpy_reference, remainder.numpy_reference = np.floor_divide, np.remainder
floor_divide.infix_when = _integer_infix(floor_divide, by_constant=True)
remainder.infix_when = _integer_infix(remainder)
def _power(x, y):
    """x ** y as JAX computes it, where NumPy differs. Integers: a Python int exponent
    (JAX's integer_pow) must not be negative; an array exponent keeps only its low 6 bits
    and 0 ** y is 0 for y != 0 (JAX's _pow_int_int: 2 ** -1 is 0, 3 ** -1 is 3 ** 63
    wrapped, 3 ** 64 is 1), where NumPy raises for negative exponents. Floats: NumPy's
    x ** 0.5 is sqrt, so (-inf) ** 0.5 gave nan and (-0.) ** 0.5 gave -0. (C's pow, and
    JAX: inf and 0.)."""
    dtype = np.result_type(x, y)
    if dtype.kind in "iu":
        if type(y) is int or type(y) is bool:
            _check_exponent(y)
            return np.power(x, y)
        x, y = np.asarray(x, dtype), np.asarray(y, dtype)
        out = np.power(x, y & dtype.type(63))
        return np.where((x == 0) & (y != 0), dtype.type(0), out) if (x == 0).any() else out
    out = np.power(x, y)
    if dtype.kind == "f" and np.ndim(y) == 0 and y == 0.5:
        out = np.where(np.isneginf(x), np.inf, out) + dtype.type(0)  # + 0 makes -0. 0.
    return out


def _check_exponent(y):
    if y < 0:
        raise ShapeError(f"power(): integers cannot be raised to a negative power ({y}), as "
                         f"in JAX; make the base a float (x.astype(float) ** {y})")


power = elementwise("power", _power, nin=2, infix="**", numeric=True,
                    aliases=(np.power, operator.pow, math.pow))
power.numpy_reference = np.power
_power_rule = power.abstract_eval


def _power_abstract_eval(x, y):
    exponent = y.value if isinstance(y, Static) else None
    if type(exponent) is int and power.promoted_dtype({"x": x, "y": y})[0].kind in "iu":
        _check_exponent(exponent)  # (eagerly, where it is a weak int type, impl checks)
    return _power_rule(x=x, y=y)


power.abstract_eval = _power_abstract_eval
# generated code may print x ** c only for a constant c whose NumPy power is _power's
power.infix_when = lambda types: isinstance(types["y"], Static) and types["y"].value != 0.5


def _integer_exponent(types, dtype, weak):
    """``x ** 2`` with a Python int exponent computes in x's dtype (JAX's integer_pow), so a
    bool ``x`` gives a strong int32 where promotion with the weak 2 gives a weak int. Other
    integer powers are strong in JAX (``2 ** bool_array`` too)."""
    x, y = types.get("x"), types.get("y")
    if x is None or y is None or not (is_numeric(x) and is_numeric(y)):
        return dtype, weak
    x, y = as_array_type(x), as_array_type(y)
    if y.weak and y.ndim == 0 and y.dtype.kind in "iu":
        return (np.dtype(np.int32), False) if x.dtype == np.bool_ else (dtype, weak)
    return dtype, weak and dtype.kind not in "iu"


power.adjust_promotion = _integer_exponent
def signed_zero_maximum(x, y):
    """np.maximum, with JAX's signed zeros: +0. beats -0. (NumPy returns either)."""
    return _signed_zeros(np.maximum(x, y), x, y, np.logical_and)


def signed_zero_minimum(x, y):
    """np.minimum, with JAX's signed zeros: -0. beats +0."""
    return _signed_zeros(np.minimum(x, y), x, y, np.logical_or)


def _signed_zeros(out, x, y, negative_when):
    """``out`` with a zero result negative where ``negative_when(signbit(x), signbit(y))``
    (a zero maximum is -0. only when both operands are negative or -0.)."""
    if np.result_type(out).kind != "f":
        return out
    zero = out == 0
    if not np.any(zero):
        return out
    magnitude = np.abs(out)
    fixed = np.where(negative_when(np.signbit(x), np.signbit(y)), -magnitude, magnitude)
    return np.where(zero, fixed, out)


maximum = elementwise("maximum", signed_zero_maximum, nin=2, aliases=(np.maximum,))
minimum = elementwise("minimum", signed_zero_minimum, nin=2, aliases=(np.minimum,))
maximum.numpy_reference, minimum.numpy_reference = np.maximum, np.minimum
arctan2 = elementwise("arctan2", np.arctan2, nin=2, inexact=True, aliases=(np.arctan2, math.atan2))

negative = elementwise("negative", np.negative, dtype_check=_no_bool,
                       aliases=(np.negative, operator.neg))
positive = elementwise("positive", lambda x: x if np.asarray(x).dtype == np.bool_ else
                       np.positive(x), aliases=(np.positive, operator.pos))  # +bool: bool
absolute = elementwise("abs", np.absolute, aliases=(np.absolute, np.abs, abs),
                       out_dtype=lambda d: np.abs(np.zeros((), d)).dtype)
def _sign(x):
    """np.sign, except that sign(-0.) is -0. as in JAX (NumPy: 0.)."""
    out = np.sign(x)
    return np.copysign(out, x) if np.result_type(out).kind == "f" else out


sign = elementwise("sign", _sign, dtype_check=_no_bool, aliases=(np.sign,))
sign.numpy_reference = np.sign
square = elementwise("square", np.square, numeric=True, aliases=(np.square,))
reciprocal = elementwise("reciprocal", lambda x: np.reciprocal(x), inexact=True,
                         aliases=(np.reciprocal,))

# --- comparisons and logic ---------------------------------------------------------------------
for _name, _np, _sym, _pyop in [
        ("less", np.less, "<", operator.lt), ("less_equal", np.less_equal, "<=", operator.le),
        ("greater", np.greater, ">", operator.gt),
        ("greater_equal", np.greater_equal, ">=", operator.ge),
        ("equal", np.equal, "==", operator.eq), ("not_equal", np.not_equal, "!=", operator.ne)]:
    elementwise(_name, _np, nin=2, out_dtype=np.bool_, infix=_sym, aliases=(_np, _pyop),
                differentiable=False)

logical_and = elementwise("logical_and", np.logical_and, nin=2, out_dtype=np.bool_,
                          aliases=(np.logical_and,), differentiable=False)
logical_or = elementwise("logical_or", np.logical_or, nin=2, out_dtype=np.bool_,
                         aliases=(np.logical_or,), differentiable=False)
logical_xor = elementwise("logical_xor", np.logical_xor, nin=2, out_dtype=np.bool_,
                          aliases=(np.logical_xor,), differentiable=False)
logical_not = elementwise("logical_not", np.logical_not, out_dtype=np.bool_,
                          aliases=(np.logical_not,), differentiable=False)
bitwise_and = elementwise("bitwise_and", np.bitwise_and, nin=2, infix="&", differentiable=False,
                          dtype_check=_int_or_bool, aliases=(np.bitwise_and, operator.and_))
bitwise_or = elementwise("bitwise_or", np.bitwise_or, nin=2, infix="|", differentiable=False,
                         dtype_check=_int_or_bool, aliases=(np.bitwise_or, operator.or_))
bitwise_xor = elementwise("bitwise_xor", np.bitwise_xor, nin=2, infix="^", differentiable=False,
                          dtype_check=_int_or_bool, aliases=(np.bitwise_xor, operator.xor))
invert = elementwise("invert", np.invert, differentiable=False, dtype_check=_int_or_bool,
                     aliases=(np.invert, np.bitwise_not, operator.invert))
isnan = elementwise("isnan", np.isnan, out_dtype=np.bool_, differentiable=False,
                    aliases=(np.isnan, math.isnan))
isinf = elementwise("isinf", np.isinf, out_dtype=np.bool_, differentiable=False,
                    aliases=(np.isinf, math.isinf))
isfinite = elementwise("isfinite", np.isfinite, out_dtype=np.bool_, differentiable=False,
                       aliases=(np.isfinite, math.isfinite))
# an op, not a composite: a NaN's sign bit (0. / 0. is -nan on x86) shows in no comparison
signbit = elementwise("signbit", np.signbit, out_dtype=np.bool_, differentiable=False,
                      dtype_check=_no_complex, aliases=(np.signbit,))

# --- math functions (computed in floating point: ints promote to the default float) ----------
_UNARY_MATH = [
    ("exp", np.exp, math.exp), ("exp2", np.exp2, None), ("expm1", np.expm1, math.expm1),
    ("log", np.log, math.log), ("log1p", np.log1p, math.log1p), ("log2", np.log2, math.log2),
    ("log10", np.log10, math.log10), ("sqrt", np.sqrt, math.sqrt), ("cbrt", np.cbrt, None),
    ("sin", np.sin, math.sin), ("cos", np.cos, math.cos), ("tan", np.tan, math.tan),
    ("arcsin", np.arcsin, math.asin), ("arccos", np.arccos, math.acos),
    ("arctan", np.arctan, math.atan), ("sinh", np.sinh, math.sinh), ("cosh", np.cosh, math.cosh),
    ("tanh", np.tanh, math.tanh), ("arcsinh", np.arcsinh, math.asinh),
    ("arccosh", np.arccosh, math.acosh), ("arctanh", np.arctanh, math.atanh),
]
_UNARY_MATH += [("erf", scipy.special.erf, math.erf), ("erfc", scipy.special.erfc, math.erfc)]
for _name, _np, _math in _UNARY_MATH:
    globals()[_name] = elementwise(_name, _np, inexact=True,
                                   aliases=(_np,) + ((_math,) if _math else ()))



def _float_only(fn):
    """floor/ceil/... leave integers unchanged, as in JAX (NumPy would make them float64)."""
    def impl(x):
        return x if np.asarray(x).dtype.kind in "biu" else fn(x)
    impl.__doc__ = fn.__doc__
    return impl


floor = elementwise("floor", _float_only(np.floor), dtype_check=_no_complex, aliases=(np.floor,),
                    differentiable=False)
ceil = elementwise("ceil", _float_only(np.ceil), dtype_check=_no_complex, aliases=(np.ceil,),
                   differentiable=False)
trunc = elementwise("trunc", _float_only(np.trunc), dtype_check=_no_complex, aliases=(np.trunc,),
                    differentiable=False)
rint = elementwise("rint", _float_only(np.rint), dtype_check=_no_complex, aliases=(np.rint,),
                   differentiable=False)
def _real_dtype(dtype):
    return np.zeros((), dtype).real.dtype


real = elementwise("real", np.real, aliases=(np.real,), out_dtype=_real_dtype)
imag = elementwise("imag", np.imag, aliases=(np.imag,), out_dtype=_real_dtype)
conjugate = elementwise("conjugate", np.conjugate, aliases=(np.conjugate, np.conj))

for _public, _op in [("divide", true_divide), ("mod", remainder), ("absolute", absolute),
                     ("conj", conjugate), ("pow", power), ("bitwise_not", invert)]:
    register_name(_public, _op)
for _m in ("conjugate", "conj"):
    register_method(_m, "conjugate")
