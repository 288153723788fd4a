"""``lax``'s elementwise functions (``add``, ``rsqrt``, ``integer_pow``, ``clamp``, ``round``,
``rem``, ...), as plain ``astjax.numpy`` code compiled like user code. Where lax differs from
jnp it follows lax: ``div`` and ``rem`` of integers round toward zero (C semantics), ``round``
rounds halves away from zero by default. Unlike JAX, operands of two different dtypes are
promoted as jnp promotes them (JAX raises a TypeError).
"""
import numpy as np

import astjax.numpy as jnp

from ..ops.special import digamma as _digamma, gammaln as _gammaln, polygamma as _polygamma
from ..random.checks import static_helper  # evaluated while generating code


def _a(x):
    return jnp.asarray(x)


def neg(x):
    return jnp.negative(x)


def sign(x):
    return jnp.sign(x)


def floor(x):
    return jnp.floor(x)


def ceil(x):
    return jnp.ceil(x)


def is_finite(x):
    return jnp.isfinite(x)


def abs(x):
    return jnp.abs(x)


def exp(x):
    return jnp.exp(x)


def exp2(x):
    return jnp.exp2(x)


def expm1(x):
    return jnp.expm1(x)


def log(x):
    return jnp.log(x)


def log1p(x):
    return jnp.log1p(x)


def sqrt(x):
    return jnp.sqrt(x)


def rsqrt(x):
    return 1 / jnp.sqrt(x)


def cbrt(x):
    return jnp.cbrt(x)


def square(x):
    return jnp.square(x)


def reciprocal(x):
    return jnp.reciprocal(x)


def sin(x):
    return jnp.sin(x)


def cos(x):
    return jnp.cos(x)


def tan(x):
    return jnp.tan(x)


def asin(x):
    return jnp.arcsin(x)


def acos(x):
    return jnp.arccos(x)


def atan(x):
    return jnp.arctan(x)


def sinh(x):
    return jnp.sinh(x)


def cosh(x):
    return jnp.cosh(x)


def tanh(x):
    return jnp.tanh(x)


def asinh(x):
    return jnp.arcsinh(x)


def acosh(x):
    return jnp.arccosh(x)


def atanh(x):
    return jnp.arctanh(x)


def logistic(x):
    """``1 / (1 + exp(-x))``."""
    return 1 / (1 + jnp.exp(-_a(x)))


def erf(x):
    return jnp.erf(x)


def erfc(x):
    return jnp.erfc(x)


def lgamma(x):
    """``log|gamma(x)|``."""
    return _gammaln(x)


def digamma(x):
    return _digamma(x)


def polygamma(m, x):
    return _polygamma(m, x)


def real(x):
    return jnp.real(x)


def imag(x):
    return jnp.imag(x)


def conj(x):
    return jnp.conj(x)


@static_helper
def _check_integer_pow(y):
    if isinstance(y, bool) or not isinstance(y, (int, np.integer)):
        raise TypeError(f"integer_pow: the exponent must be a Python int, got {y!r}")
    return int(y)


def integer_pow(x, y):
    """``x ** y`` for a static int ``y``."""
    return _a(x) ** _check_integer_pow(y)


class RoundingMethod:
    """How ``round`` breaks ties, as ``lax.RoundingMethod`` (plain ints here: compiled code
    passes them as constants)."""
    AWAY_FROM_ZERO = 0
    TO_NEAREST_EVEN = 1


@static_helper
def _rounding(rounding_method):
    method = int(getattr(rounding_method, "value", rounding_method))
    if method not in (0, 1):
        raise ValueError(f"round: unknown rounding_method {rounding_method!r}")
    return method


def round(x, rounding_method=0):
    """``x`` rounded to an integral value: halves away from zero (``rounding_method`` 0,
    ``RoundingMethod.AWAY_FROM_ZERO``) or to even (1, ``TO_NEAREST_EVEN``)."""
    x = _a(x)
    if _rounding(rounding_method) == 1:
        return jnp.round(x)
    t = jnp.trunc(x)
    return jnp.where(jnp.abs(x - t) >= 0.5, t + jnp.sign(x), t)


def add(x, y):
    return jnp.add(x, y)


def sub(x, y):
    return jnp.subtract(x, y)


def mul(x, y):
    return jnp.multiply(x, y)


@static_helper
def _integers(*dtypes_):
    return all(np.dtype(d).kind in "iu" for d in dtypes_)


def div(x, y):
    """``x / y``; for integers the quotient rounded toward zero."""
    x, y = _a(x), _a(y)
    if _integers(x.dtype, y.dtype):
        q = jnp.floor_divide(x, y)
        inexact = jnp.logical_and(jnp.not_equal(x - q * y, 0),
                                  jnp.not_equal(x < 0, y < 0))
        return jnp.where(inexact, q + 1, q)
    return jnp.divide(x, y)


def rem(x, y):
    """The remainder of ``x / y`` rounded toward zero: its sign is ``x``'s (C's ``fmod``)."""
    x, y = _a(x), _a(y)
    r = jnp.remainder(x, y)
    fix = jnp.logical_and(jnp.not_equal(r, 0), jnp.not_equal(r < 0, x < 0))
    return jnp.where(fix, r - y, r)


def pow(x, y):
    return jnp.power(x, y)


def max(x, y):
    return jnp.maximum(x, y)


def min(x, y):
    return jnp.minimum(x, y)


def atan2(x, y):
    return jnp.arctan2(x, y)


def nextafter(x, y):
    return jnp.nextafter(x, y)


def eq(x, y):
    return jnp.equal(x, y)


def ne(x, y):
    return jnp.not_equal(x, y)


def lt(x, y):
    return jnp.less(x, y)


def le(x, y):
    return jnp.less_equal(x, y)


def gt(x, y):
    return jnp.greater(x, y)


def ge(x, y):
    return jnp.greater_equal(x, y)


def bitwise_and(x, y):
    return jnp.bitwise_and(x, y)


def bitwise_or(x, y):
    return jnp.bitwise_or(x, y)


def bitwise_xor(x, y):
    return jnp.bitwise_xor(x, y)


def bitwise_not(x):
    return jnp.bitwise_not(x)


def shift_left(x, y):
    return jnp.left_shift(x, y)


def shift_right_arithmetic(x, y):
    return jnp.right_shift(x, y)


def clamp(min, x, max):
    """``x`` clipped to ``[min, max]`` (``min`` and ``max`` scalars or of ``x``'s shape), in
    ``x``'s dtype."""
    x = _a(x)
    return jnp.minimum(jnp.maximum(x, min), max).astype(x.dtype)


def convert_element_type(operand, new_dtype):
    """``operand`` cast to ``new_dtype`` (floats to integers as ``astype``)."""
    return _a(operand).astype(new_dtype)
