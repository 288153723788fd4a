"""Shape ops: reshape, moving and adding axes, joining, splitting, tiling, flipping.

Sizes are symbolic (see ``ir.types``): the rules below compute ranks and which
dims are known to be 1, and leave size mismatches to NumPy at run time. The
helpers at the top are shared with ``linalg`` and ``indexing``.
"""
import operator

import numpy as np

from .. import dtypes
from ..errors import ShapeError
from ..ir.types import (UNKNOWN, ArrayType, ListType, SequenceType, Static, as_array_type,
                        broadcast_ones)
from .registry import Op, register_method, register_name

# --- helpers ---------------------------------------------------------------------------------


def plain(value):
    """A param as plain Python values: ``Static`` unwrapped, ``SequenceType`` as a tuple
    or list; ``ArrayType`` (a part known only at run time) is kept."""
    if isinstance(value, Static):
        return plain(value.value)
    if isinstance(value, SequenceType):
        elts = [plain(v) for v in value.elts]
        return elts if value.kind == "list" else tuple(elts)
    if isinstance(value, (tuple, list)):
        return type(value)(plain(v) for v in value)
    return value


def static_int(value, fn, what):
    """``value`` as a Python int, or a ShapeError naming ``what``."""
    value = plain(value)
    if isinstance(value, ArrayType):
        raise ShapeError(f"{fn}(): {what} must be known when the code is generated "
                         f"(a constant or a static argument), not computed")
    if isinstance(value, (bool, np.bool_)) or not hasattr(value, "__index__"):
        raise ShapeError(f"{fn}(): {what} must be an integer, got {value!r}")
    return operator.index(value)


def normalize_axis(axis, ndim, fn, what="axis"):
    """A static axis in ``[-ndim, ndim)`` as a non-negative int."""
    axis = static_int(axis, fn, what)
    if not -ndim <= axis < ndim:
        raise ShapeError(f"{fn}(): {what} {axis} is out of bounds for an array of rank {ndim}")
    return axis % ndim


def normalize_axes(axes, ndim, fn, what="axis"):
    """An int or a sequence of ints as a tuple of distinct non-negative axes."""
    axes = plain(axes)
    items = axes if isinstance(axes, (tuple, list)) else (axes,)
    out = tuple(normalize_axis(a, ndim, fn, what) for a in items)
    if len(set(out)) != len(out):
        raise ShapeError(f"{fn}(): repeated axis in {what}={axes!r}")
    return out


def broadcast_dims(*ones):
    """``broadcast_ones`` for bare ``ones`` tuples."""
    return broadcast_ones(*(ArrayType(dtypes.bool_, tuple(o)) for o in ones))


def star_types(value):
    """The types of a ``*args`` operand: a SequenceType eagerly, a tuple when compiling."""
    return tuple(value.elts if isinstance(value, SequenceType) else value)


def sequence_elts(seq, fn):
    """The array types inside a sequence operand (concatenate's tuple)."""
    if not isinstance(seq, SequenceType):
        raise ShapeError(f"{fn}(): expected a tuple or list of arrays, got {seq}")
    if not seq.elts:
        raise ShapeError(f"{fn}(): need at least one array")
    try:
        return [as_array_type(t) for t in seq.elts]
    except TypeError:
        raise ShapeError(f"{fn}(): every element must be an array, got {seq}") from None


def numpy_functions(*names):
    """The NumPy functions of these names that this NumPy version has (np.concat is 2.0+)."""
    return tuple(getattr(np, n) for n in names if hasattr(np, n))


def _as_dims(shape):
    """A shape param (an int or a sequence of entries) as a tuple of entries."""
    shape = plain(shape)
    return tuple(shape) if isinstance(shape, (tuple, list)) else (shape,)


def _check_dims(dims, fn):
    """Shape entries are ints, or integer scalars known only at run time."""
    for d in dims:
        if isinstance(d, ArrayType):
            if d.ndim != 0 or d.dtype.kind not in "iu":
                raise ShapeError(f"{fn}(): shape entries must be integer scalars, got {d}")
        else:
            static_int(d, fn, "each shape entry")
    return dims


def _run_dims(dims):
    """Shape entries at run time (ints or 0-d integer arrays) as ints."""
    return tuple(operator.index(d) for d in dims)


# --- reshape ---------------------------------------------------------------------------------
# ``jnp.reshape(x, (2, 3))`` and the method forms ``x.reshape(2, 3)`` / ``x.reshape((2, 3))``
# are one op: the method calls ``reshape(x, 2, 3)``, so the signature takes the first entry
# as ``shape`` and any further ones as ``*more``. A trailing string among them is the
# positional ``order`` of ``jnp.reshape(x, shape, "C")``.

def _reshape_args(shape, more, order):
    """(shape entries, order) from the call's arguments."""
    shape, more = plain(shape), tuple(plain(more))
    if more and isinstance(more[-1], str):
        more, order = more[:-1], more[-1]
    return _as_dims((shape,) + more if more else shape), order


def _reshape(a, shape=None, *more, order="C"):
    return np.reshape(a, _run_dims(_reshape_args(shape, more, order)[0]))


def _reshape_rule(a, shape=None, more=(), order="C"):
    a = as_array_type(a)
    if shape is None:
        raise ShapeError("reshape(): missing the new shape, as in x.reshape(2, 3)")
    dims, order = _reshape_args(shape, more, order)
    if order != "C":
        raise ShapeError(f"reshape(): order={order!r} is not supported; only order='C'")
    _check_dims(dims, "reshape")
    static = [d for d in dims if not isinstance(d, ArrayType)]
    if static.count(-1) > 1:
        raise ShapeError(f"reshape(): only one dimension can be -1, got {dims}")
    if any(d < -1 for d in static):
        raise ShapeError(f"reshape(): negative dimension in {dims}; only -1 (inferred) is allowed")
    # a -1 entry is 1 only when the whole array is known to hold one element
    ones = tuple(not isinstance(d, ArrayType) and (d == 1 or (d == -1 and all(a.ones)))
                 for d in dims)
    return ArrayType(a.dtype, ones, a.weak)


reshape = Op("reshape", _reshape, _reshape_rule, aliases=(np.reshape,))


def _ravel_rule(a, order="C"):
    if order != "C":
        raise ShapeError(f"ravel(): order={order!r} is not supported; only order='C'")
    a = as_array_type(a)
    return ArrayType(a.dtype, (all(a.ones),), a.weak)


ravel = Op("ravel", lambda a, order="C": np.ravel(a), _ravel_rule, static=("order",),
           aliases=(np.ravel,))


# --- moving and adding axes ------------------------------------------------------------------

def _swapaxes_rule(a, axis1, axis2):
    a = as_array_type(a)
    i = normalize_axis(axis1, a.ndim, "swapaxes", "axis1")
    j = normalize_axis(axis2, a.ndim, "swapaxes", "axis2")
    ones = list(a.ones)
    ones[i], ones[j] = ones[j], ones[i]
    return ArrayType(a.dtype, tuple(ones), a.weak)


swapaxes = Op("swapaxes", lambda a, axis1, axis2: np.swapaxes(a, axis1, axis2), _swapaxes_rule,
              static=("axis1", "axis2"), aliases=(np.swapaxes,))


def _moveaxis_rule(a, source, destination):
    a = as_array_type(a)
    src = normalize_axes(source, a.ndim, "moveaxis", "source")
    dst = normalize_axes(destination, a.ndim, "moveaxis", "destination")
    if len(src) != len(dst):
        raise ShapeError(f"moveaxis(): source and destination must have the same number of "
                         f"axes, got {source!r} and {destination!r}")
    order = [i for i in range(a.ndim) if i not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return ArrayType(a.dtype, tuple(a.ones[i] for i in order), a.weak)


moveaxis = Op("moveaxis", lambda a, source, destination: np.moveaxis(a, source, destination),
              _moveaxis_rule, static=("source", "destination"), aliases=(np.moveaxis,))


def _expand_dims_rule(a, axis):
    a = as_array_type(a)
    axes = plain(axis)
    n = len(axes) if isinstance(axes, (tuple, list)) else 1
    new = normalize_axes(axis, a.ndim + n, "expand_dims")
    rest = iter(a.ones)
    ones = tuple(True if i in new else next(rest) for i in range(a.ndim + n))
    return ArrayType(a.dtype, ones, a.weak)


expand_dims = Op("expand_dims", lambda a, axis: np.expand_dims(a, axis), _expand_dims_rule,
                 static=("axis",), aliases=(np.expand_dims,))


def squeeze_axes(a, axis):
    """The axes squeeze removes, from the operand's type.

    Sizes are symbolic, so ``axis=None`` squeezes only the dims the type knows
    to be 1 (eagerly that is every size-1 dim, as in JAX). An explicit axis
    need not be known-1: NumPy checks its size at run time.
    """
    a = as_array_type(a)
    if plain(axis) is None:
        return tuple(i for i, one in enumerate(a.ones) if one)
    return normalize_axes(axis, a.ndim, "squeeze")


def _squeeze(a, axis=None):
    # generated code passes the axes from ``squeeze_axes``; eagerly None means every 1
    return np.squeeze(a, axis)


def _squeeze_rule(a, axis=None):
    a = as_array_type(a)
    axes = squeeze_axes(a, axis)
    return ArrayType(a.dtype, tuple(o for i, o in enumerate(a.ones) if i not in axes), a.weak)


squeeze = Op("squeeze", _squeeze, _squeeze_rule, static=("axis",), aliases=(np.squeeze,))
# The compiler must give the impl the axes the type removed (a size-1 dim the type does
# not know about must stay): params -> params with axis made explicit.
squeeze.rules["resolve_params"] = lambda types, params: {
    **params, "axis": squeeze_axes(types["a"], params.get("axis"))}


def _broadcast_to_rule(a, shape):
    a = as_array_type(a)
    dims = _check_dims(_as_dims(shape), "broadcast_to")
    if len(dims) < a.ndim:
        raise ShapeError(f"broadcast_to(): cannot broadcast an array of rank {a.ndim} to a "
                         f"shape of rank {len(dims)}")
    if any(not isinstance(d, ArrayType) and d < 0 for d in dims):
        raise ShapeError(f"broadcast_to(): negative dimension in {dims}")
    ones = tuple(not isinstance(d, ArrayType) and d == 1 for d in dims)
    return ArrayType(a.dtype, ones, a.weak)


def _broadcast_to(a, shape):
    return np.broadcast_to(a, _run_dims(_as_dims(shape)))


broadcast_to = Op("broadcast_to", _broadcast_to, _broadcast_to_rule, aliases=(np.broadcast_to,))


def _broadcast_arrays(*args):
    return [np.asarray(v) for v in np.broadcast_arrays(*args)]


def _broadcast_arrays_rule(args):
    types = [as_array_type(t) for t in star_types(args)]
    ones = broadcast_dims(*(t.ones for t in types))
    return SequenceType(tuple(ArrayType(t.dtype, ones, t.weak) for t in types), "list")


broadcast_arrays = Op("broadcast_arrays", _broadcast_arrays, _broadcast_arrays_rule,
                      operands=("args",), aliases=(np.broadcast_arrays,))


def _atleast(n):
    """atleast_1d/2d/3d: one result for one argument, else a list (as JAX)."""
    np_fn = {1: np.atleast_1d, 2: np.atleast_2d, 3: np.atleast_3d}[n]

    def pad(ones):  # where NumPy puts the new size-1 dims
        if len(ones) >= n:
            return ones
        if n == 3 and len(ones) == 2:
            return ones + (True,)
        if n == 3 and len(ones) == 1:
            return (True,) + ones + (True,)
        return (True,) * (n - len(ones)) + ones

    def impl(*arys):
        out = [np.asarray(np_fn(v)) for v in arys]
        return out[0] if len(out) == 1 else out

    def rule(arys):
        types = [ArrayType(t.dtype, pad(t.ones), t.weak)
                 for t in (as_array_type(e) for e in star_types(arys))]
        return types[0] if len(types) == 1 else SequenceType(tuple(types), "list")

    return Op(f"atleast_{n}d", impl, rule, operands=("arys",), aliases=(np_fn,))


atleast_1d, atleast_2d, atleast_3d = _atleast(1), _atleast(2), _atleast(3)


# --- joining -------------------------------------------------------------------------------

def _join_dtype(op, arrays, dtype):
    if dtype is not None:
        return dtypes.canonicalize_dtype(dtype), False
    return op.promoted_dtype({op.operands[0]: arrays})


def _cast_result(out, dtype):
    return out if dtype is None else out.astype(dtypes.canonicalize_dtype(dtype), copy=False)


def _concat_ones(name, types, axis):
    """Joining along ``axis``: other dims must agree, so one known-1 makes the result 1."""
    ndim = types[0].ndim
    if any(t.ndim != ndim for t in types):
        raise ShapeError(f"{name}(): all arrays must have the same rank, got ranks "
                         f"{[t.ndim for t in types]}")
    if ndim == 0:
        raise ShapeError(f"{name}(): zero-dimensional arrays cannot be concatenated")
    axis = normalize_axis(axis, ndim, name)
    return tuple((len(types) == 1 and types[0].ones[i]) if i == axis
                 else any(t.ones[i] for t in types) for i in range(ndim))


def _concatenate(arrays, axis=0, dtype=None):
    return _cast_result(np.concatenate(arrays, axis), dtype)


def _concatenate_rule(arrays, axis=0, dtype=None):
    if isinstance(arrays, ListType):  # built by append: one element type, length unknown
        elt = _appended_element(arrays, "concatenate")
        if plain(axis) is None:
            ones = (False,)
        else:
            ones = list(_concat_ones("concatenate", [elt], axis))
            ones[normalize_axis(axis, elt.ndim, "concatenate")] = False
        return _list_join_type(elt, ones, dtype)
    types = sequence_elts(arrays, "concatenate")
    out_dtype, weak = _join_dtype(concatenate, arrays, dtype)
    if plain(axis) is None:  # flatten everything first
        ones = (len(types) == 1 and all(types[0].ones),)
    else:
        ones = _concat_ones("concatenate", types, axis)
    return ArrayType(out_dtype, ones, weak)


concatenate = Op("concatenate", _concatenate, _concatenate_rule, operands=("arrays",),
                 promote=("arrays",), static=("axis", "dtype"),
                 aliases=numpy_functions("concatenate", "concat"))
register_name("concat", concatenate)


def _stack(arrays, axis=0, dtype=None):
    return _cast_result(np.stack(arrays, axis), dtype)


def _appended_element(arrays, name):
    if arrays.elt is UNKNOWN:
        raise ShapeError(f"{name}(): need at least one array (nothing is appended to this "
                         f"list)")
    return as_array_type(arrays.elt)


def _list_join_type(elt, ones, dtype):
    """Joining a list's elements: their dtype, unless ``dtype`` is given."""
    if dtype is not None:
        return ArrayType(dtypes.canonicalize_dtype(dtype), tuple(ones), False)
    return ArrayType(elt.dtype, tuple(ones), elt.weak)


def _stack_rule(arrays, axis=0, dtype=None):
    if isinstance(arrays, ListType):  # built by append: one element type, length unknown
        elt = _appended_element(arrays, "stack")
        ones = list(elt.ones)
        ones.insert(normalize_axis(axis, elt.ndim + 1, "stack"), False)
        return _list_join_type(elt, ones, dtype)
    types = sequence_elts(arrays, "stack")
    out_dtype, weak = _join_dtype(stack, arrays, dtype)
    ndim = types[0].ndim
    if any(t.ndim != ndim for t in types):
        raise ShapeError(f"stack(): all arrays must have the same shape, got ranks "
                         f"{[t.ndim for t in types]}")
    axis = normalize_axis(axis, ndim + 1, "stack")
    ones = [any(t.ones[i] for t in types) for i in range(ndim)]
    ones.insert(axis, len(types) == 1)
    return ArrayType(out_dtype, tuple(ones), weak)


stack = Op("stack", _stack, _stack_rule, operands=("arrays",), promote=("arrays",),
           static=("axis", "dtype"), aliases=(np.stack,))


def _hstack(tup, dtype=None):
    return _cast_result(np.hstack(tup), dtype)


def _hstack_rule(tup, dtype=None):
    types = [t if t.ndim else ArrayType(t.dtype, (True,), t.weak)
             for t in sequence_elts(tup, "hstack")]
    out_dtype, weak = _join_dtype(hstack, tup, dtype)
    return ArrayType(out_dtype, _concat_ones("hstack", types, 0 if types[0].ndim == 1 else 1),
                     weak)


hstack = Op("hstack", _hstack, _hstack_rule, operands=("tup",), promote=("tup",),
            static=("dtype",), aliases=(np.hstack,))


def _vstack(tup, dtype=None):
    return _cast_result(np.vstack(tup), dtype)


def _vstack_rule(tup, dtype=None):
    types = [ArrayType(t.dtype, (True,) * (2 - t.ndim) + t.ones, t.weak) if t.ndim < 2 else t
             for t in sequence_elts(tup, "vstack")]
    out_dtype, weak = _join_dtype(vstack, tup, dtype)
    return ArrayType(out_dtype, _concat_ones("vstack", types, 0), weak)


vstack = Op("vstack", _vstack, _vstack_rule, operands=("tup",), promote=("tup",),
            static=("dtype",), aliases=(np.vstack,))


# --- splitting -----------------------------------------------------------------------------

def slice_is_one(start, stop, step, dim_is_one):
    """Whether ``x[start:stop:step]`` along one dim is known to have length 1.

    Bounds known only at run time give False. On a dim known to be 1 the length
    is exact. Otherwise sizes are symbolic: when both ends count from the same
    end of the axis and are one step apart (``x[2:3]``, ``x[-1:]``,
    ``x[4:3:-1]``) the length is 1 -- or 0 on an axis too short to reach the
    slice, which we accept (NumPy then reports any size mismatch).
    """
    if any(isinstance(v, ArrayType) for v in (start, stop, step)):
        return False
    step = 1 if step is None else step
    if dim_is_one:
        return len(range(*slice(start, stop, step).indices(1))) == 1

    def anchor(v, default):  # (counts from the end?, offset)
        return default if v is None else (v < 0, v)
    first = anchor(start, (False, 0) if step > 0 else (True, -1))
    last = anchor(stop, (True, 0) if step > 0 else (False, -1))
    if first[0] != last[0]:
        return False
    return -((first[1] - last[1]) // step) == 1  # ceil((stop - start) / step)


def _split_pieces(fn, a, indices_or_sections, axis, even):
    """The known-1 flag of each piece's split dim, and the normalized axis."""
    axis = normalize_axis(axis, a.ndim, fn)
    dim_is_one = a.ones[axis]
    spec = plain(indices_or_sections)
    if isinstance(spec, ArrayType):
        raise ShapeError(f"{fn}(): indices_or_sections must be known when the code is "
                         f"generated (an int or a sequence of ints)")
    if isinstance(spec, (tuple, list)):
        cuts = [static_int(i, fn, "each split index") for i in spec]
        bounds = [None] + cuts + [None]
        return [slice_is_one(lo, hi, 1, dim_is_one) for lo, hi in zip(bounds, bounds[1:])], axis
    n = static_int(spec, fn, "the number of sections")
    if n <= 0:
        raise ShapeError(f"{fn}(): the number of sections must be positive, got {n}")
    # a known-1 dim splits into one piece of 1 (and, for array_split, empty ones)
    return [dim_is_one and (i == 0 if not even else n == 1) for i in range(n)], axis


def _split_op(name, np_fn, even):
    def impl(a, indices_or_sections, axis=0):
        return list(np_fn(a, indices_or_sections, axis))

    def rule(a, indices_or_sections, axis=0):
        a = as_array_type(a)
        if a.ndim == 0:
            raise ShapeError(f"{name}(): cannot split a zero-dimensional array")
        pieces, axis = _split_pieces(name, a, indices_or_sections, axis, even)
        return SequenceType(tuple(
            ArrayType(a.dtype, a.ones[:axis] + (one,) + a.ones[axis + 1:], a.weak)
            for one in pieces), "list")

    return Op(name, impl, rule, static=("indices_or_sections", "axis"), aliases=(np_fn,))


split = _split_op("split", np.split, even=True)
array_split = _split_op("array_split", np.array_split, even=False)


# --- tiling, repeating, flipping -------------------------------------------------------------

def _tile_rule(A, reps):
    a = as_array_type(A)
    reps = plain(reps)
    reps = tuple(reps) if isinstance(reps, (tuple, list)) else (reps,)
    reps = tuple(static_int(r, "tile", "each repetition count") for r in reps)
    if any(r < 0 for r in reps):
        raise ShapeError(f"tile(): repetition counts must be non-negative, got {reps}")
    ndim = max(a.ndim, len(reps))
    ones = (True,) * (ndim - a.ndim) + a.ones
    reps = (1,) * (ndim - len(reps)) + reps
    return ArrayType(a.dtype, tuple(o and r == 1 for o, r in zip(ones, reps)), a.weak)


tile = Op("tile", lambda A, reps: np.tile(A, reps), _tile_rule, static=("reps",),
          aliases=(np.tile,))


def _repeat_rule(a, repeats, axis=None):
    a = as_array_type(a)
    repeats = plain(repeats)
    if isinstance(repeats, ArrayType):
        if repeats.dtype.kind not in "iu" or repeats.ndim > 1:
            raise ShapeError(f"repeat(): repeats must be an integer or a 1-D integer array, "
                             f"got {repeats}")
        once = False
    else:
        once = static_int(repeats, "repeat", "repeats") == 1
    if plain(axis) is None:  # repeats the flattened array
        return ArrayType(a.dtype, (all(a.ones) and once,), a.weak)
    axis = normalize_axis(axis, a.ndim, "repeat")
    return ArrayType(a.dtype, a.ones[:axis] + (a.ones[axis] and once,) + a.ones[axis + 1:],
                     a.weak)


repeat = Op("repeat", lambda a, repeats, axis=None: np.repeat(a, repeats, axis), _repeat_rule,
            static=("axis",), aliases=(np.repeat,))


def _flip_rule(m, axis=None):
    m = as_array_type(m)
    if plain(axis) is not None:
        normalize_axes(axis, m.ndim, "flip")
    return m


flip = Op("flip", lambda m, axis=None: np.flip(m, axis), _flip_rule, static=("axis",),
          aliases=(np.flip,))


def _roll_rule(a, shift, axis=None):
    a = as_array_type(a)
    shift = plain(shift)
    if isinstance(shift, ArrayType):
        if shift.dtype.kind not in "iu" or shift.ndim > 1:
            raise ShapeError(f"roll(): shift must be an integer or a 1-D integer array, "
                             f"got {shift}")
    else:
        for s in (shift if isinstance(shift, (tuple, list)) else (shift,)):
            if not isinstance(s, ArrayType):
                static_int(s, "roll", "shift")
    axis = plain(axis)
    if axis is not None:  # an axis may repeat: its shifts add up, as in NumPy and JAX
        for d in axis if isinstance(axis, (tuple, list)) else (axis,):
            normalize_axis(d, a.ndim, "roll")
    return a


roll = Op("roll", lambda a, shift, axis=None: np.roll(a, shift, axis), _roll_rule,
          static=("axis",), aliases=(np.roll,))


for _method in ("reshape", "ravel", "swapaxes", "squeeze", "repeat"):
    register_method(_method)
register_method("flatten", "ravel")
