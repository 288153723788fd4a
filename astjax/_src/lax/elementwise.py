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
from ..ops.registry import REGISTRY

_stop_gradient = REGISTRY["stop_gradient"]


def _a(x):
    return jnp.asarray(x)


# the unary functions are the jnp ops themselves (each takes x, as lax's does)
neg = jnp.negative
sign = jnp.sign
floor = jnp.floor
ceil = jnp.ceil
is_finite = jnp.isfinite
abs = jnp.abs
exp = jnp.exp
exp2 = jnp.exp2
expm1 = jnp.expm1
log = jnp.log
log1p = jnp.log1p
sqrt = jnp.sqrt
cbrt = jnp.cbrt
square = jnp.square
reciprocal = jnp.reciprocal
sin = jnp.sin
cos = jnp.cos
tan = jnp.tan
asin = jnp.arcsin
acos = jnp.arccos
atan = jnp.arctan
sinh = jnp.sinh
cosh = jnp.cosh
tanh = jnp.tanh
asinh = jnp.arcsinh
acosh = jnp.arccosh
atanh = jnp.arctanh
erf = jnp.erf
erfc = jnp.erfc
real = jnp.real
imag = jnp.imag
conj = jnp.conj
bitwise_not = jnp.bitwise_not
lgamma, digamma = _gammaln, _digamma  # log|gamma(x)| and its derivative


def rsqrt(x):
    return 1 / jnp.sqrt(x)


def logistic(x):
    """``1 / (1 + exp(-x))``."""
    return 1 / (1 + jnp.exp(-_a(x)))


def polygamma(m, x):
    return _polygamma(m, x)


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


def shift_left(x, y):
    return jnp.left_shift(x, y)


def shift_right_arithmetic(x, y):
    return jnp.right_shift(x, y)


def clamp(min, x, max):
    """``x`` clipped to ``[min, max]`` (``min`` and ``max`` scalars or of ``x``'s shape), in
    ``x``'s dtype."""
    x = _a(x)
    value = jnp.minimum(jnp.maximum(x, min), max).astype(x.dtype)
    # JAX's derivative: to x strictly inside (min, max), to min while it clamps (and is below
    # max), to max while it clamps; none at a bound. `followed` carries those derivatives and
    # equals `value` wherever one applies, so adding the stopped rest leaves the value exact.
    zero = jnp.zeros_like(value)
    followed = (jnp.where((min > x) & (min < max), min, zero)
                + jnp.where((x > min) & (x < max), x, zero)
                + jnp.where(max < x, max, zero)).astype(x.dtype)
    return followed + _stop_gradient(value - followed)


def convert_element_type(operand, new_dtype):
    """``operand`` cast to ``new_dtype`` (floats to integers as ``astype``)."""
    return _a(operand).astype(new_dtype)
