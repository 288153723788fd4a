"""Dtype conversion and value selection: astype, where, clip, round, nan_to_num.

Also the small helpers that the creation and reduction ops share: reading a
user's ``dtype=`` argument and checking that an operand is an array.
"""
import operator

import numpy as np

from .. import dtypes
from ..errors import ShapeError
from ..ir.types import (ArrayType, Static, as_array_type, broadcast_ones, is_numeric,
                        type_of_value)
from .elementwise import signed_zero_maximum, signed_zero_minimum
from .registry import NAMESPACE, Op, register_method, register_name, wrapped_int


# --- shared helpers ------------------------------------------------------------------------

def user_dtype(fn, dtype):
    """The dtype an array gets for a user's ``dtype=`` (``float`` -> float32 unless x64)."""
    if isinstance(dtype, (int, np.integer)):
        raise ShapeError(f"{fn}(): dtype={dtype!r} is not a dtype; did you pass a shape's "
                         f"dimensions as separate arguments instead of one tuple?")
    try:
        return dtypes.canonicalize_dtype(np.dtype(dtype))
    except TypeError as e:
        raise ShapeError(f"{fn}(): dtype={dtype!r}: {e}") from None


def array_operand(fn, name, t):
    """The array type of operand ``name``; a list or other non-array is an error."""
    if is_numeric(t):
        return as_array_type(t)
    raise ShapeError(f"{fn}(): {name} must be an array or a number, got {t}; "
                     f"convert a list with jnp.array(...) first")


def value_dtype(value):
    """The dtype an impl's runtime value has for JAX (Python scalars: the canonical one)."""
    return type_of_value(value).dtype


def no_out(fn, out):
    """``out=`` exists so that NumPy's ``np.sum(x)`` can delegate to ``x.sum(out=None)``."""
    if out is not None:
        raise ShapeError(f"{fn}(): out= is not supported: arrays are immutable, use the result")


class OptionalOperandsOp(Op):
    """An op whose optional operands count as not given when passed as None (clip's max)."""

    def bind(self, args, kwargs):
        operands, params = super().bind(args, kwargs)
        given = {name: v for name, v in operands.items()
                 if v is not None and not (isinstance(v, Static) and v.value is None)}
        return given, params


# --- astype --------------------------------------------------------------------------------

def convert(x, dtype):
    """``x`` as an array of ``dtype``. Floats become integers as in JAX (XLA): NaN gives 0
    and values beyond the integer range its nearest bound, where NumPy's cast is undefined
    (the Numba backend does the same: ``backends/numba_cpu/runtime.float_to_int``)."""
    dtype, values = np.dtype(dtype), np.asarray(x)
    if dtype.kind not in "iu" or values.dtype.kind != "f":
        return np.asarray(x, dtype=dtype)  # (Python ints that do not fit raise, as in JAX)
    info = np.iinfo(dtype)
    above, below = values >= info.max, values <= info.min  # (NaN is neither)
    inside = np.where(above | below | np.isnan(values), 0, values).astype(dtype)
    return np.where(above, info.max, np.where(below, info.min, inside)).astype(dtype)


def astype(x, dtype, *, copy=False):
    """Convert ``x`` to ``dtype`` (``copy`` is accepted for NumPy compatibility)."""
    dtype = value_dtype(x) if dtype is None else user_dtype("astype", dtype)
    if type(x) is int:  # wraps, as in JAX: astype(-1, uint8) is 255
        x = wrapped_int(x, dtype)
    return convert(x, dtype)


def _astype_rule(x, dtype, *, copy=False):
    x = array_operand("astype", "x", x)
    out = x.dtype if dtype is None else user_dtype("astype", dtype)
    return ArrayType(out, x.ones, False)


Op("astype", astype, _astype_rule, static=("dtype", "copy"), raw_python_scalars=True)
register_method("astype")


# --- where ---------------------------------------------------------------------------------

def where(condition, x=None, y=None):
    """Elements of ``x`` where ``condition`` is true, else of ``y``."""
    return np.where(condition, x, y)


def _where_rule(condition, x=None, y=None):
    if x is None and y is None:
        raise ShapeError("where(condition) with one argument is not supported: the number of "
                         "results depends on the values. Pass both x and y: "
                         "where(condition, x, y), or a size: where(condition, size=n)")
    if x is None or y is None:
        raise ShapeError("where(): pass both x and y (where(condition, x, y)), not just one")
    cond = array_operand("where", "condition", condition)
    x, y = array_operand("where", "x", x), array_operand("where", "y", y)
    dtype, weak = dtypes.promote_types((x.dtype, x.weak), (y.dtype, y.weak))
    return ArrayType(dtype, broadcast_ones(cond, x, y), weak)


OptionalOperandsOp("where", where, _where_rule, operands=("condition", "x", "y"),
                   promote=("x", "y"), aliases=(np.where,))


# --- clip ----------------------------------------------------------------------------------

def clip(arr, min=None, max=None, *, a_min=None, a_max=None, out=None):
    """Limit ``arr`` to ``[min, max]``; ``a_min``/``a_max`` are NumPy's older names."""
    lower = a_min if min is None else min
    upper = a_max if max is None else max
    out = arr
    if lower is not None:  # maximum(min, arr) then minimum(max, arr), in JAX's order
        out = signed_zero_maximum(lower, out)
    if upper is not None:
        out = signed_zero_minimum(upper, out)
    return out


def _bound(name, new, old):
    if new is not None and old is not None:
        raise ShapeError(f"clip(): pass {name}= or a_{name}=, not both")
    return old if new is None else new


def _clip_rule(arr, min=None, max=None, *, a_min=None, a_max=None, out=None):
    no_out("clip", out)
    given = [("arr", arr), ("min", _bound("min", min, a_min)), ("max", _bound("max", max, a_max))]
    types = [array_operand("clip", name, t) for name, t in given if t is not None]
    if any(t.dtype.kind == "c" for t in types):
        raise ShapeError("clip(): complex values have no order; clip x.real and x.imag instead")
    dtype, weak = dtypes.promote_types(*[(t.dtype, t.weak) for t in types])
    return ArrayType(dtype, broadcast_ones(*types), weak)


OptionalOperandsOp("clip", clip, _clip_rule, operands=("arr", "min", "max", "a_min", "a_max"),
                   promote=("arr", "min", "max", "a_min", "a_max"), aliases=(np.clip,))
register_method("clip")


# --- round ---------------------------------------------------------------------------------

def round(x, decimals=0, out=None):
    """Round half to even at ``decimals`` digits; integers are returned unchanged."""
    dtype = np.asarray(x).dtype
    # rounding past the dtype's precision is a no-op (NumPy would overflow to nan)
    if dtype.kind in "iu" or decimals > np.log10(np.finfo(dtype).max):
        return x
    return np.round(x, decimals)


def _round_rule(x, decimals=0, out=None):
    no_out("round", out)
    x = array_operand("round", "x", x)
    try:
        decimals = operator.index(decimals)
    except TypeError:
        raise ShapeError(f"round(): decimals must be an int, got {decimals!r}") from None
    if x.dtype.kind == "b":
        raise ShapeError("round(): boolean arrays cannot be rounded; convert with .astype(int)")
    if x.dtype.kind in "iu" and decimals < 0:
        raise ShapeError("round(): decimals < 0 is not supported for integer arrays (as in JAX)")
    return x


_round = Op("round", round, _round_rule, static=("decimals",), promote=("x",),
            differentiable=False, aliases=(np.round, np.around))
register_name("around", _round)
register_method("round")


# --- nan_to_num ----------------------------------------------------------------------------

def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    """Replace nan by ``nan`` and infinities by ``posinf``/``neginf`` (default: the dtype's
    largest/smallest finite value)."""
    if np.asarray(x).dtype.kind in "biu":
        return x
    return np.nan_to_num(x, nan=nan, posinf=posinf, neginf=neginf)


def _nan_to_num_rule(x, copy=True, nan=0.0, posinf=None, neginf=None):
    x = array_operand("nan_to_num", "x", x)
    for name, value in (("nan", nan), ("posinf", posinf), ("neginf", neginf)):
        if value is not None and not isinstance(value, (int, float, np.number)):
            raise ShapeError(f"nan_to_num(): {name} must be a number, got {value!r}")
    if dtypes.is_inexact(x.dtype):  # JAX builds the result with where(): no longer weak
        return ArrayType(x.dtype, x.ones, False)
    return x


Op("nan_to_num", nan_to_num, _nan_to_num_rule, static=("copy", "nan", "posinf", "neginf"),
   promote=("x",), aliases=(np.nan_to_num,))


def _stop_gradient_rule(x):
    return as_array_type(x)


# the identity, marked non-differentiable: reverse mode sends no cotangent through it
stop_gradient = Op("stop_gradient", lambda x: x, _stop_gradient_rule, differentiable=False)
del NAMESPACE["stop_gradient"]  # jax.lax.stop_gradient, not a jnp function
