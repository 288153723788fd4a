"""Array creation: array/asarray, zeros/ones/empty/full and their ``*_like``, arange,
linspace, eye/identity/tri, diag.

Shapes and sizes (``zeros(n)``, ``eye(n)``, ``arange(n)``) may be computed at run
time: their rules then see an int32 ``ArrayType`` in place of the int, and
only a static 1 makes a dimension known to be 1.
"""
import math
import operator

import numpy as np

from .. import dtypes
from ..errors import ShapeError
from ..ir.types import (UNKNOWN, ArrayType, ListType, SequenceType, Static, broadcast_ones,
                        is_numeric, type_of_value)
from .conversions import array_operand, convert, user_dtype, value_dtype
from .registry import Op, register_alias, register_method, register_name, wrapped_int


# --- helpers -------------------------------------------------------------------------------

def _is_int(v):
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))


def _dim_is_one(fn, what, d):
    """Whether a size argument is known to be 1; checks that it is a (dynamic) integer."""
    if isinstance(d, ArrayType):
        if d.ndim != 0 or d.dtype.kind not in "iu":
            raise ShapeError(f"{fn}(): {what} must be an integer scalar, got an array {d}")
        return False
    if not _is_int(d):
        raise ShapeError(f"{fn}(): {what} must be an integer, got {d!r}")
    if d < 0:
        raise ShapeError(f"{fn}(): {what} must not be negative, got {d}")
    return d == 1


def _dims(shape):
    return tuple(shape) if isinstance(shape, (tuple, list)) else (shape,)


def _shape_ones(fn, shape):
    """The ``ones`` pattern of a shape argument: an int, or a tuple/list of ints."""
    return tuple(_dim_is_one(fn, "each shape entry", d) for d in _dims(shape))


def _concrete_shape(shape):
    return tuple(operator.index(d) for d in _dims(shape))


def _float_dtype(fn, dtype):
    """``dtype=`` of a creation op, defaulting to the default float."""
    return dtypes.default_float() if dtype is None else user_dtype(fn, dtype)


# --- array / asarray -----------------------------------------------------------------------

def _stack_parts(fn, t):
    """(ones, leaf (dtype, weak) pairs) of np.array(t): each sequence level adds a dim."""
    if isinstance(t, Static) and isinstance(t.value, (tuple, list)):
        t = type_of_value(t.value)  # a sequence of constants
    if isinstance(t, ListType):  # built at run time: its length is unknown
        if t.elt is UNKNOWN:  # nothing appended: empty
            return (False,), []
        ones, leaves = _stack_parts(fn, t.elt)
        return (False,) + ones, leaves
    if isinstance(t, SequenceType):
        parts = [_stack_parts(fn, e) for e in t.elts]
        ranks = sorted({len(ones) for ones, _ in parts})
        if len(ranks) > 1:
            raise ShapeError(f"{fn}(): the elements of a sequence must all have the same "
                             f"rank to form an array, got ranks {ranks}")
        inner = tuple(map(all, zip(*(ones for ones, _ in parts))))
        return (len(parts) == 1,) + inner, [leaf for _, leaves in parts for leaf in leaves]
    a = array_operand(fn, "object", t)
    return a.ones, [(a.dtype, a.weak)]


def _array_type(fn, t, dtype, ndmin):
    ones, leaves = _stack_parts(fn, t)
    ones = (True,) * (ndmin - len(ones)) + ones
    if dtype is not None:
        return ArrayType(user_dtype(fn, dtype), ones, False)
    if not leaves:  # jnp.array([]) is float, as in JAX
        return ArrayType(dtypes.default_float(), ones, False)
    out, weak = dtypes.promote_types(*leaves)
    # only a weak value itself stays weak: array([1, 2]) is a strong int32, as in JAX
    return ArrayType(out, ones, weak and is_numeric(t))


def array(object, dtype=None, *, copy=True, ndmin=0):
    """An array from an array, a number or nested tuples/lists of them (stacked)."""
    out = _array_type("array", type_of_value(object), dtype, ndmin).dtype
    return np.array(convert(object, out), ndmin=ndmin)


def asarray(a, dtype=None, *, copy=None):
    """Like ``array``; arrays are immutable, so whether it copies is invisible."""
    return np.array(convert(a, _array_type("asarray", type_of_value(a), dtype, 0).dtype))


Op("array", array, lambda object, dtype=None, *, copy=True, ndmin=0:
   _array_type("array", object, dtype, ndmin),
   static=("dtype", "copy", "ndmin"), aliases=(np.array,), raw_python_scalars=True)
_asarray = Op("asarray", asarray,
              lambda a, dtype=None, *, copy=None: _array_type("asarray", a, dtype, 0),
              static=("dtype", "copy"), aliases=(np.asarray,), raw_python_scalars=True)
# arrays are immutable, so jnp.copy(x) and x.copy() are asarray (a NumPy-style y = x.copy()
# before y[i] = v leaves x alone either way)
register_name("copy", _asarray)
register_alias(np.copy, _asarray)
register_method("copy", "asarray")


# --- zeros, ones, empty, full --------------------------------------------------------------

def zeros(shape, dtype=None):
    return np.zeros(_concrete_shape(shape), _float_dtype("zeros", dtype))


def ones(shape, dtype=None):
    return np.ones(_concrete_shape(shape), _float_dtype("ones", dtype))


def empty(shape, dtype=None):
    """Zeros: deterministic contents make eager and compiled runs comparable."""
    return np.zeros(_concrete_shape(shape), _float_dtype("empty", dtype))


def _shape_rule(fn):
    def rule(shape, dtype=None):
        return ArrayType(_float_dtype(fn, dtype), _shape_ones(fn, shape), False)
    return rule


for _fn, _np_fn in ((zeros, np.zeros), (ones, np.ones), (empty, np.empty)):
    Op(_fn.__name__, _fn, _shape_rule(_fn.__name__), operands=(), static=("dtype",),
       differentiable=False, aliases=(_np_fn,))


def _check_fill_rank(fn, fill, ones):
    if fill.ndim > len(ones):
        raise ShapeError(f"{fn}(): fill_value has rank {fill.ndim}, more than the "
                         f"{len(ones)} dimensions of the result")


def full(shape, fill_value, dtype=None):
    """An array of ``shape`` filled with ``fill_value`` (broadcast if it is an array)."""
    out = value_dtype(fill_value) if dtype is None else user_dtype("full", dtype)
    return _filled(_concrete_shape(shape), fill_value, out)


def _filled(shape, fill_value, dtype):
    """np.full, converting ``fill_value`` as JAX does: a Python int the integer ``dtype``
    cannot hold wraps (full_like(u8, -1) is 255), floats become integers as astype does."""
    if type(fill_value) is int:
        fill_value = wrapped_int(fill_value, dtype)
    return np.full(shape, convert(fill_value, dtype), dtype=dtype)


def _full_rule(shape, fill_value, dtype=None):
    fill = array_operand("full", "fill_value", fill_value)
    ones = _shape_ones("full", shape)
    _check_fill_rank("full", fill, ones)
    if dtype is not None:
        return ArrayType(user_dtype("full", dtype), ones, False)
    return ArrayType(fill.dtype, ones, fill.weak and fill.dtype != dtypes.bool_)  # as in JAX


Op("full", full, _full_rule, operands=("fill_value",), static=("dtype",), aliases=(np.full,),
   raw_python_scalars=True)


# --- *_like --------------------------------------------------------------------------------

def _like_type(fn, a, dtype, shape):
    a = array_operand(fn, "a", a)
    ones = a.ones if shape is None else _shape_ones(fn, shape)
    out = a.dtype if dtype is None else user_dtype(fn, dtype)
    return ArrayType(out, ones, dtype is None and a.weak)


def _like(fn, a, dtype, shape, fill):
    out = value_dtype(a) if dtype is None else user_dtype(fn, dtype)
    return _filled(np.shape(a) if shape is None else _concrete_shape(shape), fill, out)


def zeros_like(a, dtype=None, shape=None):
    return _like("zeros_like", a, dtype, shape, 0)


def ones_like(a, dtype=None, shape=None):
    return _like("ones_like", a, dtype, shape, 1)


def empty_like(a, dtype=None, shape=None):
    return _like("empty_like", a, dtype, shape, 0)  # zeros, as empty()


def _like_rule(fn):
    def rule(a, dtype=None, shape=None):
        return _like_type(fn, a, dtype, shape)
    return rule


for _fn, _np_fn in ((zeros_like, np.zeros_like), (ones_like, np.ones_like),
                    (empty_like, np.empty_like)):
    Op(_fn.__name__, _fn, _like_rule(_fn.__name__), static=("dtype",), differentiable=False,
       aliases=(_np_fn,))


def full_like(a, fill_value, dtype=None, shape=None):
    return _like("full_like", a, dtype, shape, fill_value)


def _full_like_rule(a, fill_value, dtype=None, shape=None):
    like = _like_type("full_like", a, dtype, shape)
    fill = array_operand("full_like", "fill_value", fill_value)
    _check_fill_rank("full_like", fill, like.ones)
    # an array fill_value goes through asarray(fill, dtype=a.dtype) in JAX: strong
    return ArrayType(like.dtype, like.ones, like.weak and fill.ndim == 0)


Op("full_like", full_like, _full_like_rule, operands=("a", "fill_value"), static=("dtype",),
   aliases=(np.full_like,), raw_python_scalars=True)


# --- arange, linspace ----------------------------------------------------------------------

def _arange_dtype(start, stop, step, dtype):
    """dtype of arange: ``dtype=``, else the promotion of the bounds given.

    Bounds are numbers, or (dynamic) 0-d arrays: NumPy values in impl, types in the rule.
    """
    types = []
    for name, v in (("start", start), ("stop", stop), ("step", step)):
        if v is None:
            continue
        t = v if isinstance(v, ArrayType) else type_of_value(v)
        if not isinstance(t, ArrayType) or t.ndim != 0 or t.dtype.kind not in "iuf":
            raise ShapeError(f"arange(): {name} must be a real number (not bool or complex), "
                             f"got {t}")
        types.append((t.dtype, t.weak))
    if dtype is not None:
        return user_dtype("arange", dtype)
    return dtypes.promote_types(*types)[0]


def arange(start, stop=None, step=None, dtype=None):
    """Evenly spaced values in ``[start, stop)``; ``arange(n)`` counts from 0."""
    return np.arange(start, stop, step, dtype=_arange_dtype(start, stop, step, dtype))


def _static_length(start, stop, step):
    """arange's length when every bound is a static number, else None."""
    if stop is None:
        start, stop = 0, start
    step = 1 if step is None else step
    if any(isinstance(v, ArrayType) for v in (start, stop, step)):
        return None
    if step == 0:
        raise ShapeError("arange(): step must not be zero")
    return max(0, math.ceil((stop - start) / step))


def _arange_rule(start, stop=None, step=None, dtype=None):
    out = _arange_dtype(start, stop, step, dtype)
    return ArrayType(out, (_static_length(start, stop, step) == 1,), False)


Op("arange", arange, _arange_rule, operands=(), static=("dtype",), differentiable=False,
   aliases=(np.arange,))


def _linspace_axis(axis, ndim):
    try:
        axis = operator.index(axis)
    except TypeError:
        raise ShapeError(f"linspace(): axis must be an int, got {axis!r}") from None
    if not -ndim - 1 <= axis <= ndim:
        raise ShapeError(f"linspace(): axis {axis} is out of range for a result of rank "
                         f"{ndim + 1}")
    return axis % (ndim + 1)


def linspace(start, stop, num=50, endpoint=True, dtype=None, axis=0):
    """``num`` evenly spaced values from ``start`` to ``stop`` (included if ``endpoint``)."""
    out = np.result_type(start, stop) if dtype is None else user_dtype("linspace", dtype)
    return np.linspace(start, stop, num, endpoint, dtype=out, axis=axis)


def _linspace_rule(start, stop, num=50, endpoint=True, dtype=None, axis=0):
    start, stop = array_operand("linspace", "start", start), array_operand("linspace", "stop", stop)
    if not _is_int(num) or num < 0:
        raise ShapeError(f"linspace(): num must be a non-negative int, got {num!r}")
    bounds = broadcast_ones(start, stop)
    axis = _linspace_axis(axis, len(bounds))
    if dtype is None:
        out = dtypes.to_inexact(dtypes.promote_types((start.dtype, start.weak),
                                                     (stop.dtype, stop.weak))[0])[0]
    else:
        out = user_dtype("linspace", dtype)
    return ArrayType(out, bounds[:axis] + (num == 1,) + bounds[axis:], False)


Op("linspace", linspace, _linspace_rule, operands=("start", "stop"),
   static=("num", "endpoint", "dtype", "axis"), promote=("start", "stop"), inexact=True,
   aliases=(np.linspace,))


# --- eye, identity, tri, diag --------------------------------------------------------------

def _matrix_type(fn, N, M, k, dtype):
    """The (N, M) matrix type of eye/tri; ``k`` (the diagonal) may be dynamic."""
    n_one = _dim_is_one(fn, "N", N)
    m_one = n_one if M is None else _dim_is_one(fn, "M", M)
    dynamic_int = isinstance(k, ArrayType) and k.ndim == 0 and k.dtype.kind in "iu"
    if not (dynamic_int or _is_int(k)):
        raise ShapeError(f"{fn}(): k must be an integer, got {k!r}")
    return ArrayType(_matrix_dtype(fn, dtype), (n_one, m_one), False)


def _matrix_dtype(fn, dtype):
    """eye and identity default to the default float; tri to float32 even with x64 on, as
    in JAX (jnp.tri's own comment calls it "a strange default")."""
    if fn == "tri" and dtype is None:
        return dtypes.float32
    return _float_dtype(fn, dtype)


def _matrix_args(N, M, k):
    return operator.index(N), None if M is None else operator.index(M), operator.index(k)


def eye(N, M=None, k=0, dtype=None):
    """Ones on diagonal ``k`` of an N x M matrix, zeros elsewhere."""
    return np.eye(*_matrix_args(N, M, k), dtype=_float_dtype("eye", dtype))


def identity(n, dtype=None):
    return np.identity(operator.index(n), dtype=_float_dtype("identity", dtype))


def tri(N, M=None, k=0, dtype=None):
    """Ones at and below diagonal ``k`` of an N x M matrix, zeros above."""
    return np.tri(*_matrix_args(N, M, k), dtype=_matrix_dtype("tri", dtype))


Op("eye", eye, lambda N, M=None, k=0, dtype=None: _matrix_type("eye", N, M, k, dtype),
   operands=(), static=("dtype",), differentiable=False, aliases=(np.eye,))
Op("identity", identity, lambda n, dtype=None: _matrix_type("identity", n, None, 0, dtype),
   operands=(), static=("dtype",), differentiable=False, aliases=(np.identity,))
Op("tri", tri, lambda N, M=None, k=0, dtype=None: _matrix_type("tri", N, M, k, dtype),
   operands=(), static=("dtype",), differentiable=False, aliases=(np.tri,))


def diag(v, k=0):
    """The diagonal ``k`` of a matrix, or a matrix with ``v`` on its diagonal ``k``."""
    return np.diag(v, k)


def _diag_rule(v, k=0):
    v = array_operand("diag", "v", v)
    if not _is_int(k):
        raise ShapeError(f"diag(): k must be an int, got {k!r}")
    if v.ndim == 1:  # an (n + |k|) square matrix
        one = v.ones[0] and k == 0
        return ArrayType(v.dtype, (one, one), v.weak)
    if v.ndim == 2:  # the diagonal's length is 1 for sure only for a 1 x 1 matrix
        return ArrayType(v.dtype, (all(v.ones) and k == 0,), v.weak)
    raise ShapeError(f"diag(): v must be 1-D (to build a matrix) or 2-D (to take a "
                     f"diagonal), got rank {v.ndim}")


Op("diag", diag, _diag_rule, static=("k",), aliases=(np.diag,))
