"""VJP rules of the conversions (``ops/conversions.py``) and creation ops (``ops/creation.py``).

An operand may be a Python number written in the code (``jnp.full(n, 0.5)``,
``jnp.clip(x, 0.0, 1.0)``): the compiler sees a constant, which has no dtype
or shape, and needs no cotangent, so rules never look at such an operand's
attributes. Only where and clip have their cotangents unbroadcast by the AD
transform; the others return cotangents of their operands' exact shapes.
"""
import astjax.numpy as jnp

from .adops import unbroadcast
from .rules import vjp_rule
from .vjp_shape import each, nth


def _number(x):
    """A Python number written in the code (a constant: no gradient)."""
    return isinstance(x, (int, float, complex))


def _inexact(dtype):
    return dtype.kind in "fc"


def _complex(dtype):
    return dtype.kind == "c"


# --- conversions -----------------------------------------------------------------------------

@vjp_rule("astype")
def astype_vjp(z, x, g, dtype=None, copy=False):
    if _number(x) or not (_inexact(x.dtype) and _inexact(z.dtype)):
        return (None,)  # to or from an integer or bool: no gradient
    if _complex(z.dtype) and not _complex(x.dtype):
        return (jnp.astype(jnp.real(g), x.dtype),)  # the imaginary part was not an input
    return (jnp.astype(g, x.dtype),)


@vjp_rule("where")
def where_vjp(z, condition, x, y, g):
    return (None, jnp.where(condition, g, 0.0), jnp.where(condition, 0.0, g))


def clip_shares(arr, lower, upper):
    """The share of a derivative that arr, the lower and the upper bound each get in
    ``clip``, which is JAX's ``minimum(upper, maximum(lower, arr))``: where two are equal
    they share it equally, as maximum and minimum do (so at a bound arr gets half, as in
    JAX); the upper bound wins wherever lower > upper. None for a bound not given."""
    to_arr, to_lower, m = 1.0, None, arr
    if lower is not None:
        to_arr = jnp.where(arr > lower, 1.0, jnp.where(arr == lower, 0.5, 0.0))
        to_lower = 1.0 - to_arr
        m = jnp.maximum(lower, arr)
    if upper is None:
        return to_arr, to_lower, None
    below = jnp.where(m < upper, 1.0, jnp.where(m == upper, 0.5, 0.0))
    return to_arr * below, None if to_lower is None else to_lower * below, 1.0 - below


@vjp_rule("clip")
def clip_vjp(z, arr, min, max, a_min, a_max, g, out=None):
    """g split among arr and the bounds by ``clip_shares``."""
    lower = a_min if min is None else min
    upper = a_max if max is None else max
    if lower is None and upper is None:
        return (g, None, None, None, None)
    to_arr, to_lower, to_upper = clip_shares(arr, lower, upper)
    d_arr = g * to_arr
    d_lower = None if to_lower is None else g * to_lower
    d_upper = None if to_upper is None else g * to_upper
    # each bound's cotangent goes to the operand that gave it (min= or a_min=)
    if min is None:
        return (d_arr, None, None, d_lower, d_upper) if max is None else \
            (d_arr, None, d_upper, d_lower, None)
    return (d_arr, d_lower, None, None, d_upper) if max is None else \
        (d_arr, d_lower, d_upper, None, None)


@vjp_rule("nan_to_num")
def nan_to_num_vjp(z, x, g, copy=True, nan=0.0, posinf=None, neginf=None):
    # replaced values are constants
    return (jnp.where(jnp.isfinite(x), g, 0.0),)


# --- array / asarray: a sequence operand gets a (nested) tuple of cotangents -------------------

def _ndim(obj):
    """The rank of the array that ``array(obj)`` builds (without ndmin)."""
    if isinstance(obj, (tuple, list)):
        return 1 + _ndim(obj[0]) if len(obj) else 1
    if _number(obj):
        return 0
    return obj.ndim


def _element(g, obj):
    """The cotangent of ``obj``, one element of a stacked sequence, from its part ``g``."""
    if isinstance(obj, (tuple, list)):
        # tuple displays and literal indices (each, nth): what the transform differentiates
        return each(_element_piece, len(obj), g, obj, None)
    if _number(obj):
        return None
    return jnp.astype(g, obj.dtype)  # elements of another dtype were promoted


def _element_piece(k, g, seq, unused):
    return _element(g[k], nth(seq, k))


def _array_vjp(z, obj, g):
    added = z.ndim - _ndim(obj)  # ndmin's leading dims (g is not reassigned: a name
    if added > 0:                # keeps one type, which the transform needs to record it)
        return (_element(g[(0,) * added], obj),)
    return (_element(g, obj),)


@vjp_rule("array")
def array_vjp(z, object, g, dtype=None, copy=True, ndmin=0):
    return _array_vjp(z, object, g)


@vjp_rule("asarray")
def asarray_vjp(z, a, g, dtype=None, copy=None):
    return _array_vjp(z, a, g)


# --- filled arrays ---------------------------------------------------------------------------

def _fill_vjp(fill_value, g):
    """Every element of the result is fill_value (broadcast): it gets their summed cotangent."""
    if _number(fill_value):
        return None
    return jnp.astype(unbroadcast(g, fill_value), fill_value.dtype)


@vjp_rule("full")
def full_vjp(z, fill_value, g, shape=None, dtype=None):
    return (_fill_vjp(fill_value, g),)


@vjp_rule("full_like")
def full_like_vjp(z, a, fill_value, g, dtype=None, shape=None):
    return (None, _fill_vjp(fill_value, g))  # only a's shape and dtype are used


def _bound_vjp(weighted, bound, axis):
    """A linspace bound's cotangent: summed along axis, unbroadcast, in its own dtype."""
    return jnp.astype(unbroadcast(jnp.sum(weighted, axis=axis), bound), bound.dtype)


@vjp_rule("linspace")
def linspace_vjp(z, start, stop, g, num=50, endpoint=True, dtype=None, axis=0):
    # z = start + t * (stop - start), t running from 0 to 1 (or short of 1) along axis
    t = jnp.linspace(jnp.zeros_like(start), jnp.ones_like(stop), num, endpoint, axis=axis)
    return (None if _number(start) else _bound_vjp(g * (1.0 - t), start, axis),
            None if _number(stop) else _bound_vjp(g * t, stop, axis))


@vjp_rule("diag")
def diag_vjp(z, v, g, k=0):
    if v.ndim == 1:  # z has v on its diagonal k
        return (jnp.diag(g, k),)
    # z is v's diagonal k: its cotangent goes back onto that diagonal
    i = jnp.arange(g.shape[0])
    return (jnp.zeros_like(v).at[i + max(-k, 0), i + max(k, 0)].set(g),)
