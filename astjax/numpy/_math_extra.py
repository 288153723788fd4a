"""Elementwise math, Array API aliases and dtype utilities written with ``astjax.numpy`` ops
(``fmax``, ``copysign``, ``gcd``, ``i0``, ``result_type``, ...), read by the compiler like user
code, as those in ``_composites``. Semantics and dtypes follow JAX 0.10.2.

The dtype utilities (``result_type``, ``promote_types``, ``can_cast``, ``isdtype``,
``iscomplexobj``, ``isscalar``, ``ndim``, ...) work on arrays inside compiled code too: they
read only an array's dtype, weak type and rank, which are known when code is generated.
"""
import builtins

import numpy as np
import scipy.special

import astjax.numpy as jnp

from .._src import dtypes
from .._src.errors import at_user_call
from .._src.ir.types import ArrayType, Static
from .._src.lax.common import synthesize
from .._src.lax.control_flow import fori_loop, while_loop
from .._src.ops.registry import NAMESPACE as _OPS
from .._src.ops.registry import REGISTRY
from .._src.random.checks import static_helper  # evaluated while generating code
from .._src.runtime.array import Array
from .._src.scalar_types import (bool_, complex64, complex128, float32, float64, int64,
                                 uint64)
from ._composites import _inexact, _inexact2
from ._sorting import _normalize_axis

# ---- Array API names: the same ops ------------------------------------------------------

acos, acosh, asin, asinh, atan, atanh, atan2 = (
    _OPS["arccos"], _OPS["arccosh"], _OPS["arcsin"], _OPS["arcsinh"], _OPS["arctan"],
    _OPS["arctanh"], _OPS["arctan2"])
bitwise_invert, bitwise_left_shift, bitwise_right_shift = (
    _OPS["invert"], _OPS["left_shift"], _OPS["right_shift"])
signbit = _OPS["signbit"]  # an op: a NaN's sign bit shows in no comparison
_stop_gradient = REGISTRY["stop_gradient"]

# ---- dtype names, as jax.numpy defines them (64-bit ones narrow unless x64 is on) -------

int_, uint, float_, double, single = int64, uint64, float64, float64, float32
cdouble, csingle, complex_ = complex128, complex64, complex128


# ---- checks and promotion (evaluated while code is generated) ---------------------------

@static_helper
def _kind(dtype):
    return np.dtype(dtype).kind


@static_helper
def _not_complex(dtype, message, value_error=False):
    if np.dtype(dtype).kind == "c":
        raise (ValueError if value_error else TypeError)(message)


def _promote(a, b):
    """``a`` and ``b`` in their promoted dtype (found from empty slices), as JAX's
    promote_dtypes; one already of that dtype is left as it is (a Python scalar stays weak)."""
    a = jnp.asarray(a)
    b = jnp.asarray(b)
    dt = (jnp.ravel(a)[:0] + jnp.ravel(b)[:0]).dtype
    if a.dtype != dt:
        a = a.astype(dt)
    if b.dtype != dt:
        b = b.astype(dt)
    return a, b


def _promote_inexact(a, b):
    """``a`` and ``b`` in one inexact dtype, as JAX's promote_args_inexact."""
    a, b = _inexact2(a, b)
    return _promote(a, b)


# ---- elementwise ------------------------------------------------------------------------

def fabs(x):
    """``|x|`` in an inexact dtype (ints become floats); complex is refused, as in JAX."""
    x = jnp.asarray(x)
    _not_complex(x.dtype, "ufunc 'fabs' does not support complex dtypes")
    return jnp.abs(_inexact(x))


def fmax(x1, x2):
    """The elementwise maximum, ignoring NaNs (NaN only where both are); ties give ``x2``."""
    return jnp.where(jnp.logical_or(jnp.greater(x1, x2), jnp.isnan(x2)), x1, x2)


def fmin(x1, x2):
    """The elementwise minimum, ignoring NaNs (NaN only where both are); ties give ``x2``."""
    return jnp.where(jnp.logical_or(jnp.less(x1, x2), jnp.isnan(x2)), x1, x2)


def fmod(x1, x2):
    """The remainder of ``x1 / x2`` rounded toward zero (C's fmod: the sign of ``x1``);
    integers modulo 0 give 0, as in JAX."""
    x1 = jnp.asarray(x1)
    x2 = jnp.asarray(x2)
    r = jnp.remainder(x1, x2)  # floor rounding, in JAX's promoted dtype (bool: int32)
    if _kind(r.dtype) in "iu":
        x2 = jnp.where(x2 == 0, jnp.ones_like(x2), x2)
        r = jnp.remainder(x1, x2)
        return jnp.where(jnp.logical_and(r != 0, (r < 0) != (x1 < 0)), r - x2, r)
    # |x1| mod |x2| is fmod's magnitude exactly; x1 * s (not abs) keeps d/dx1 = 1 at 0
    s = jnp.where(jnp.signbit(x1), -1, 1)
    return s * jnp.remainder(x1 * s, jnp.abs(x2))


def copysign(x1, x2):
    """``|x1|`` with the sign bit of ``x2`` (in an inexact dtype)."""
    x1, x2 = _promote_inexact(x1, x2)
    _not_complex(x1.dtype, "copysign does not support complex-valued inputs")
    a = jnp.abs(x1)
    return jnp.where(jnp.signbit(x2), -a, a)


def modf(x):
    """``(fractional part, integral part)`` of ``x`` (inexact dtype), computed as JAX does:
    the fractional part of an infinity is NaN and that of -7. is 0. (NumPy: 0. and -0.)."""
    x = _inexact(x)
    whole = jnp.where(x >= 0, jnp.floor(x), jnp.ceil(x))
    return x - whole, whole


def divmod(x1, x2):
    """``(x1 // x2, x1 % x2)`` (bools compute as int32)."""
    return jnp.floor_divide(x1, x2), jnp.remainder(x1, x2)


def float_power(x, y):
    """``x ** y`` in an inexact dtype (ints become floats first)."""
    x, y = _promote_inexact(x, y)
    return jnp.power(x, y)


def _gcd_cond(ab):
    return jnp.any(ab[1] != 0)


def _gcd_body(ab):
    a, b = ab
    nonzero = b != 0
    a, b = (jnp.where(nonzero, b, a),
            jnp.where(nonzero, jnp.remainder(a, jnp.where(nonzero, b, jnp.ones_like(b))),
                      jnp.zeros_like(b)))
    swap = a < b
    return jnp.where(swap, b, a), jnp.where(swap, a, b)


@static_helper
def _check_integers(dtype, fn):
    if np.dtype(dtype).kind not in "iu":
        raise ValueError(f"Arguments to jax.numpy.{fn} must be integers.")


def gcd(x1, x2):
    """The greatest common divisor of ``|x1|`` and ``|x2|`` (integers), by Euclid's
    algorithm on the whole array until every element is done, as JAX does."""
    x1, x2 = _promote(x1, x2)
    _check_integers(x1.dtype, "gcd")
    zero = jnp.zeros_like(x1) + jnp.zeros_like(x2)  # (broadcast_arrays has no Numba lowering)
    a = jnp.abs(x1) + zero
    b = jnp.abs(x2) + zero
    return while_loop(_gcd_cond, _gcd_body, (a, b))[0]


def lcm(x1, x2):
    """The least common multiple of ``|x1|`` and ``|x2|`` (integers; 0 if either is)."""
    x1, x2 = _promote(x1, x2)
    _check_integers(x1.dtype, "lcm")
    x1 = jnp.abs(x1)
    x2 = jnp.abs(x2)
    d = gcd(x1, x2)
    zero = d == 0
    return jnp.where(zero, jnp.zeros_like(d),
                     x1 * jnp.floor_divide(x2, jnp.where(zero, jnp.ones_like(d), d)))


@static_helper
def _smallest_subnormal(dtype):
    return float(np.finfo(dtype).smallest_subnormal)


@static_helper
def _is_float16(dtype):
    return np.dtype(dtype) == np.float16


def spacing(x):
    """The distance from ``x`` to the next float away from zero, with ``x``'s sign, as
    ``jnp.spacing`` (float16: toward +inf). Its derivative is 0 (JAX raises)."""
    x = jnp.asarray(x)
    _not_complex(x.dtype, "jnp.spacing is not defined for complex inputs.", True)
    x = _stop_gradient(_inexact(x))  # piecewise constant
    if _is_float16(x.dtype):
        return jnp.nextafter(x, np.inf) - x
    neg = jnp.signbit(x)
    result = jnp.nextafter(x, jnp.where(neg, -np.inf, np.inf)) - x
    tiny = _smallest_subnormal(x.dtype)
    return jnp.where(result == 0, jnp.where(neg, -tiny, tiny), result)


def _isposneginf(x, infinity):
    x = jnp.asarray(x)
    _not_complex(x.dtype, "isposinf/isneginf are not well defined for complex types", True)
    if _kind(x.dtype) == "f":
        return x == infinity
    return jnp.zeros_like(x, dtype=bool_)


def isposinf(x):
    """Where ``x`` is +inf (False for integers and bools)."""
    return _isposneginf(x, np.inf)


def isneginf(x):
    """Where ``x`` is -inf (False for integers and bools)."""
    return _isposneginf(x, -np.inf)


def iscomplex(x):
    """Where ``x``'s imaginary part is not 0 (False everywhere for real dtypes)."""
    return jnp.imag(jnp.asarray(x)) != 0


def isreal(x):
    """Where ``x``'s imaginary part is 0 (True everywhere for real dtypes)."""
    return jnp.imag(jnp.asarray(x)) == 0


# ---- i0: Chebyshev series of exp(-|x|) I0(x), fitted here to SciPy's i0e -----------------

def _chebyshev_fit(f, degree):
    c = np.polynomial.chebyshev.chebinterpolate(f, degree)
    return c.astype(np.float32), c


# [0, 8] as t = x / 4 - 1; (8, inf) as t = 16 / x - 1, there times sqrt(x)
_I0_SMALL32, _I0_SMALL64 = _chebyshev_fit(lambda t: scipy.special.i0e(4 * (t + 1)), 32)
_I0_LARGE32, _I0_LARGE64 = _chebyshev_fit(
    lambda t: scipy.special.i0e(16 / (t + 1)) * np.sqrt(16 / (t + 1)), 32)


@static_helper
def _is_float64(dtype):
    return np.dtype(dtype) == np.float64


def _chebyshev(c, t):
    """``sum_k c[k] T_k(t)`` by Clenshaw's recurrence."""
    n = c.shape[0]

    def step(i, carry):
        b1, b2 = carry
        return 2 * t * b1 - b2 + c[n - 1 - i], b1
    zero = jnp.zeros_like(t)
    b1, b2 = fori_loop(0, n - 1, step, (zero, zero))
    return t * b1 - b2 + c[0]


@static_helper
def _check_i0(dtype):
    if np.dtype(dtype).kind != "f":
        raise ValueError(f"Unsupported input type to jax.numpy.i0: {dtype}")


def i0(x):
    """The modified Bessel function of the first kind, order 0 (inexact dtype; float16
    computes in float32). Its derivative is I1's, and 0 at 0, as JAX's."""
    x = _inexact(x)
    _check_i0(x.dtype)
    y = x
    if _is_float16(x.dtype):
        y = x.astype(float32)
    # |y|, constant at 0: i0's derivatives there are 0, as JAX's custom rule makes them
    ax = jnp.where(y == 0, jnp.zeros_like(y), jnp.abs(y))
    small = ax <= 8
    xs = jnp.where(small, ax, 8)
    xl = jnp.where(small, 8, ax)  # both branches stay finite, and so do their derivatives
    if _is_float64(y.dtype):
        e_small = _chebyshev(_I0_SMALL64, xs / 4 - 1)
        e_large = _chebyshev(_I0_LARGE64, 16 / xl - 1) / jnp.sqrt(xl)
    else:
        e_small = _chebyshev(_I0_SMALL32, xs / 4 - 1)
        e_large = _chebyshev(_I0_LARGE32, 16 / xl - 1) / jnp.sqrt(xl)
    out = jnp.exp(ax) * jnp.where(small, e_small, e_large)
    return out.astype(x.dtype)


# ---- shapes ----------------------------------------------------------------------------

def ndim(a):
    """The rank of ``a`` (an int, known when code is generated)."""
    if isinstance(a, (np.ndarray, Array)):
        return a.ndim
    return jnp.asarray(a).ndim


def shape(a):
    """The shape of ``a`` (in compiled code, a tuple of ints known at run time)."""
    if isinstance(a, (np.ndarray, Array)):
        return a.shape
    return jnp.asarray(a).shape


@static_helper
def _size_axes(axis, ndim):
    axes = tuple(axis) if isinstance(axis, (tuple, list)) else (axis,)
    out = tuple(_normalize_axis.fn(ax, ndim, "size") for ax in axes)
    if len(set(out)) != len(out):
        raise ValueError(f"repeated axis: {axis}")
    return out


def _dims_product(dims, axes):
    if len(axes) == 0:
        return 1
    return dims[axes[0]] * _dims_product(dims, axes[1:])


def size(a, axis=None):
    """The number of elements of ``a``, or along ``axis`` (an int or a tuple of them)."""
    if not isinstance(a, (np.ndarray, Array)):
        a = jnp.asarray(a)
    if axis is None:
        return a.size
    return _dims_product(a.shape, _size_axes(axis, a.ndim))


# ---- dtype utilities: eagerly plain calls, in compiled code evaluated on types ----------

class _Abstract:
    """An array argument as compiled code knows it when generating: dtype, weak type, rank."""

    def __init__(self, t):
        self.dtype, self.weak_type, self.ndim = t.dtype, t.weak, t.ndim


class _on_types(static_helper):
    """A function of dtypes, weak types and ranks: called eagerly, a plain call; called from
    compiled code, it runs while the code is generated, on its arguments' types, and the
    call is its value."""

    def __repr__(self):
        return f"<function astjax.numpy.{self.fn.__name__}>"

    def function_for(self, arg_types, program):
        values = []
        for t in arg_types:
            if isinstance(t, Static):
                values.append(t.value)
            elif isinstance(t, ArrayType):
                values.append(_Abstract(t))
            else:
                raise at_user_call(TypeError(
                    f"{self.fn.__name__}(): takes arrays, dtypes or constants, got {t}"))
        try:
            value = self.fn(*values)
        except (TypeError, ValueError, NotImplementedError) as e:
            raise at_user_call(e) from None
        params = ", ".join(f"a{k}" for k in range(len(values)))
        return synthesize(self.fn.__name__, f"def {self.fn.__name__}({params}):\n"
                          f"    return _value\n", self.fn, {"_value": value})


def _dtype_and_weak(x):
    """JAX's (dtype, weak type) of a value or dtype-like (Python scalars and the types
    int, float, complex are weak)."""
    if x is None:
        return dtypes.default_float(), False
    if x is int or x is float or x is complex:
        return dtypes.python_scalar_dtype(x(0)), True
    if dtypes.is_python_scalar(x):
        return dtypes.python_scalar_dtype(x), not isinstance(x, _bool)
    if isinstance(getattr(x, "dtype", None), np.dtype):  # arrays, NumPy scalars, jnp.int32
        return x.dtype, _bool(getattr(x, "weak_type", False))
    try:
        return np.dtype(x), False
    except TypeError:
        raise TypeError(f"Cannot determine dtype of {x!r}") from None


@_on_types
def result_type(*args):
    """The dtype JAX's promotion gives ``args`` (arrays, scalars or dtypes) together; 64-bit
    types narrow unless x64 is on."""
    if not args:
        raise ValueError("at least one array or dtype is required")
    typed = []
    for a in args:
        dt, weak = _dtype_and_weak(a)
        typed.append((dtypes.canonicalize_dtype(dt), weak))
    return dtypes.promote_types(*typed)[0]


@_on_types
def promote_types(a, b):
    """The dtype two dtypes promote to by JAX's lattice (not narrowed: float64 stays)."""
    node = dtypes._promote_nodes((np.dtype(a), np.dtype(b)))
    # uint64 with int64 meet at the weak float, which JAX gives as float64 here
    return _WIDEST.get(node, node) if isinstance(node, str) else np.dtype(node)


_WIDEST = {"i*": np.dtype(np.int64), "f*": np.dtype(np.float64), "c*": np.dtype(np.complex128)}


@_on_types
def can_cast(from_, to, casting="safe"):
    """NumPy's ``can_cast`` (as ``jnp.can_cast``), of a dtype or an array's dtype."""
    if isinstance(from_, (np.ndarray, Array, _Abstract)):
        from_ = from_.dtype
    return _bool(np.can_cast(from_, to, casting))


_KINDS = {"bool": "b", "signed integer": "i", "unsigned integer": "u", "integral": "iu",
          "real floating": "f", "complex floating": "c", "numeric": "iufc"}


@_on_types
def isdtype(dtype, kind):
    """Whether ``dtype`` is of ``kind``: a name ('bool', 'signed integer', 'unsigned
    integer', 'integral', 'real floating', 'complex floating', 'numeric'), a dtype, or a
    tuple of those."""
    the_dtype = np.dtype(dtype)
    for k in kind if isinstance(kind, tuple) else (kind,):
        if isinstance(k, str) and k in _KINDS:
            if the_dtype.kind in _KINDS[k] and the_dtype in dtypes._SUPPORTED:
                return True
            continue
        try:
            other = np.dtype(k)
        except TypeError:
            if isinstance(k, str):
                raise ValueError(f"Unrecognized kind={k!r} expected one of "
                                 f"{list(_KINDS)}, or a compatible input for jnp.dtype()")
            raise TypeError(f"Expected kind to be a dtype, string, or tuple; got kind={k!r}")
        if the_dtype == other:
            return True
    return False


@_on_types
def iscomplexobj(x):
    """Whether ``x`` has a complex dtype (by type, not value)."""
    if isinstance(x, (complex, np.complexfloating)):
        return True
    if x is None or isinstance(x, (_bool, int, float, str, np.generic)):
        return False
    dt = getattr(x, "dtype", None)
    if not isinstance(dt, np.dtype):
        dt = np.asarray(x).dtype
    return dt.kind == "c"


@_on_types
def isrealobj(x):
    """Whether ``x`` does not have a complex dtype."""
    return not iscomplexobj.fn(x)


@_on_types
def isscalar(element):
    """Whether ``element`` is a scalar: a Python or NumPy scalar, or an array of rank 0."""
    if isinstance(element, (np.ndarray, Array, _Abstract)):
        return element.ndim == 0
    return _bool(np.isscalar(element))


_bool = builtins.bool  # the module's own name bool is jnp.bool
bool = bool_  # noqa: A001

__all__ = ["acos", "acosh", "asin", "asinh", "atan", "atanh", "atan2", "bitwise_invert",
           "bitwise_left_shift", "bitwise_right_shift", "bool", "can_cast", "cdouble",
           "complex_", "copysign", "csingle", "divmod", "double", "fabs", "float_",
           "float_power", "fmax", "fmin", "fmod", "gcd", "i0", "int_", "iscomplex",
           "iscomplexobj", "isdtype", "isneginf", "isposinf", "isreal", "isrealobj",
           "isscalar", "lcm", "modf", "ndim", "promote_types", "result_type", "shape",
           "signbit", "single", "size", "spacing", "uint"]
