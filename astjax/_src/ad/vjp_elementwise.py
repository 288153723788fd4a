"""VJP rules of the elementwise ops (``ops/elementwise.py``).

Binary rules return cotangents of the broadcast (output) shape; the AD
transform sums them back to each operand's shape. Constants are Python floats,
which are weak and keep the operand's dtype. Where JAX picks a value at a point
the derivative does not exist (abs at 0, ties of maximum, power at x == 0), the
rule picks the same. Complex inputs follow JAX's convention where a rule says so (real,
imag, conj, abs); the holomorphic ops' rules hold for complex inputs as written.
"""
import astjax.numpy as jnp

from .adops import unbroadcast
from .rules import nondifferentiable, vjp_rule
from .vjp_shape import is_complex, static

_LN2 = 0.6931471805599453
_LN10 = 2.302585092994046
_TWO_OVER_SQRT_PI = 1.1283791670955126

# sign and floor_divide are constant almost everywhere: no gradient flows through them (as
# floor, ceil), and no tangent: JAX's is a symbolic zero, so sqrt(x // 1.0) has none at 0.5
nondifferentiable("sign", "floor_divide")


# --- arithmetic ------------------------------------------------------------------------------
# A Python number written in the code (``x * 2.0``) is a constant: it gets None, and its
# cotangent is not computed.

def _number(x):
    return isinstance(x, (int, float, complex))


@vjp_rule("add")
def add_vjp(z, x, y, g):
    return (g, g)


@vjp_rule("subtract")
def subtract_vjp(z, x, y, g):
    return (g, None if _number(y) else -g)


@vjp_rule("multiply")
def multiply_vjp(z, x, y, g):
    return (None if _number(x) else g * y, None if _number(y) else g * x)


@vjp_rule("true_divide")
def true_divide_vjp(z, x, y, g):
    gx = g / y
    return (None if _number(x) else gx, None if _number(y) else -gx * z)


@vjp_rule("floor_divide")
def floor_divide_vjp(z, x, y, g):
    # piecewise constant: zero gradients, as in JAX (None: nothing to add; not called by
    # the transforms, which see floor_divide as not differentiable)
    return (None, None)


# ldexp(x1, n) = x1 * 2**n and frexp's mantissa x * 2**-e: scalings by a power of two, as in
# JAX (the integer exponents get no cotangent)

@vjp_rule("ldexp")
def ldexp_vjp(z, x1, x2, g):
    if _number(x1) or not _inexact(x1):
        return (None, None)
    return (unbroadcast(jnp.ldexp(g, x2), x1), None)


@vjp_rule("frexp")
def frexp_vjp(z, x, g):
    if _number(x) or not _inexact(x):
        return (None,)
    return (jnp.ldexp(g[0], -z[1]),)


@static
def _inexact_dtype(dtype):
    return dtype.kind in "fc"


def _inexact(x):
    return _inexact_dtype(x.dtype)


@vjp_rule("remainder")
def remainder_vjp(z, x, y, g):
    # z = x - y * floor(x / y); NumPy's floor_divide is the floor its remainder uses
    return (g, None if _number(y) else -g * jnp.floor_divide(x, y))


def _power_dx(x, y, g):
    """g * y * x ** (y - 1), 0 where y == 0 (no 0 * inf at x == 0, as JAX's integer powers).
    A number exponent (x ** 2, the common case) is decided when the rule is compiled."""
    if _number(y):
        return None if y == 0 else g * (y * x ** (y - 1))
    return g * (y * x ** jnp.where(y == 0, 1.0, y - 1))


@vjp_rule("power")
def power_vjp(z, x, y, g):
    gx = None if _number(x) else _power_dx(x, y, g)
    # z * log(x); x <= 0 gives 0 (JAX: 0 at x == 0), and log never sees x <= 0
    gy = None if _number(y) else g * (z * jnp.log(jnp.where(x > 0, x, 1.0)))
    return (gx, gy)


def _balanced(x, z, y):
    """1 where x is the selected value, 0.5 where x and y tie, 0 elsewhere (JAX's rule)."""
    return jnp.where(x == z, jnp.where(y == z, 0.5, 1.0), 0.0)


@vjp_rule("maximum", "minimum")
def maximum_vjp(z, x, y, g):
    return (None if _number(x) else g * _balanced(x, z, y),
            None if _number(y) else g * _balanced(y, z, x))


@vjp_rule("arctan2")
def arctan2_vjp(z, x, y, g):
    # z = atan(x / y): d/dx = y / (x^2 + y^2), d/dy = -x / (x^2 + y^2)
    scale = g / (x * x + y * y)
    return (None if _number(x) else scale * y, None if _number(y) else -scale * x)


# --- unary arithmetic ------------------------------------------------------------------------

@vjp_rule("negative")
def negative_vjp(z, x, g):
    return (-g,)


@vjp_rule("positive")
def identity_vjp(z, x, g):
    return (g,)


# real, imag, conj and abs of a complex input are not holomorphic. As in JAX, cotangents
# transpose the real-linear tangent maps: real's sends a real g to the complex g + 0j,
# imag's to -1j * g, conj's to conj(g), abs's to g * conj(x) / |x| (0 at x == 0). Forward
# mode has their tangent maps (jvp_rules.py): these are not their own transposes.


@vjp_rule("real")
def real_vjp(z, x, g):
    if is_complex(x.dtype):
        return (jnp.astype(g, x.dtype),)
    return (g,)


@vjp_rule("imag")
def imag_vjp(z, x, g):
    if is_complex(x.dtype):
        return (jnp.astype(g, x.dtype) * -1j,)
    return (None,)  # the imaginary part of a real input is 0 whatever x is


@vjp_rule("conjugate")
def conjugate_vjp(z, x, g):
    if is_complex(x.dtype):
        return (jnp.conj(g),)
    return (g,)


@vjp_rule("abs")
def abs_vjp(z, x, g):
    if is_complex(x.dtype):
        return (g * jnp.conj(x) / jnp.where(z == 0, 1.0, z),)
    # JAX's choice at 0: the derivative of the x >= 0 side
    return (jnp.where(x >= 0, g, -g),)


@vjp_rule("square")
def square_vjp(z, x, g):
    return (g * (2.0 * x),)


@vjp_rule("reciprocal")
def reciprocal_vjp(z, x, g):
    return (-g * (z * z),)


# --- exponentials and logarithms -------------------------------------------------------------

@vjp_rule("exp")
def exp_vjp(z, x, g):
    return (g * z,)


@vjp_rule("exp2")
def exp2_vjp(z, x, g):
    return (g * (z * _LN2),)


@vjp_rule("expm1")
def expm1_vjp(z, x, g):
    return (g * (z + 1.0),)


@vjp_rule("log")
def log_vjp(z, x, g):
    return (g / x,)


@vjp_rule("log1p")
def log1p_vjp(z, x, g):
    return (g / (x + 1.0),)


@vjp_rule("log2")
def log2_vjp(z, x, g):
    return (g / (x * _LN2),)


@vjp_rule("log10")
def log10_vjp(z, x, g):
    return (g / (x * _LN10),)


@vjp_rule("sqrt")
def sqrt_vjp(z, x, g):
    return (g * (0.5 / z),)


@vjp_rule("cbrt")
def cbrt_vjp(z, x, g):
    # 1 / (3 z^2) rather than z / (3 x): inf, not nan, at x == 0 (as JAX)
    return (g / (3.0 * (z * z)),)


# --- trigonometric and hyperbolic ------------------------------------------------------------

@vjp_rule("sin")
def sin_vjp(z, x, g):
    return (g * jnp.cos(x),)


@vjp_rule("cos")
def cos_vjp(z, x, g):
    return (-g * jnp.sin(x),)


@vjp_rule("tan")
def tan_vjp(z, x, g):
    return (g * (1.0 + z * z),)


@vjp_rule("arcsin")
def arcsin_vjp(z, x, g):
    return (g / jnp.sqrt((1.0 - x) * (1.0 + x)),)


@vjp_rule("arccos")
def arccos_vjp(z, x, g):
    return (-g / jnp.sqrt((1.0 - x) * (1.0 + x)),)


@vjp_rule("arctan")
def arctan_vjp(z, x, g):
    return (g / (1.0 + x * x),)


@vjp_rule("sinh")
def sinh_vjp(z, x, g):
    return (g * jnp.cosh(x),)


@vjp_rule("cosh")
def cosh_vjp(z, x, g):
    return (g * jnp.sinh(x),)


@vjp_rule("tanh")
def tanh_vjp(z, x, g):
    return (g * (1.0 - z * z),)


@vjp_rule("arcsinh")
def arcsinh_vjp(z, x, g):
    return (g / jnp.sqrt(x * x + 1.0),)


@vjp_rule("arccosh")
def arccosh_vjp(z, x, g):
    # (x - 1)(x + 1) keeps precision near x == 1, where x * x - 1 cancels
    return (g / jnp.sqrt((x - 1.0) * (x + 1.0)),)


@vjp_rule("arctanh")
def arctanh_vjp(z, x, g):
    return (g / ((1.0 - x) * (1.0 + x)),)


# --- error function --------------------------------------------------------------------------

@vjp_rule("erf")
def erf_vjp(z, x, g):
    return (g * (_TWO_OVER_SQRT_PI * jnp.exp(-(x * x))),)


@vjp_rule("erfc")
def erfc_vjp(z, x, g):
    return (g * (-_TWO_OVER_SQRT_PI * jnp.exp(-(x * x))),)
