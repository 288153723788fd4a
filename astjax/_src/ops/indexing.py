"""Indexing: ``x[idx]`` (op ``getitem``) and JAX's pure updates ``x.at[idx].set(y)`` etc.

The index is a param holding the raw Python structure: ints, slices (whose
bounds may be dynamic scalars), None, Ellipsis, and index arrays (their types,
in rules). NumPy itself indexes (generated code writes ``x[idx]``), so the rule
follows NumPy's rules, with JAX's restriction (no list as the whole index). A boolean
scalar is a 0-d mask, as in both: ``x[True]`` adds an axis of size 1, ``x[False]`` one of
size 0. JAX differs in two corners the rule does not follow: an
Ellipsis covering no axes between two advanced indices does not separate them
in JAX, and JAX's ``x[None, True]`` is 1 x 1 x x.shape[1:]. Out-of-bounds integer indices raise IndexError as in NumPy; JAX clamps
them when reading and drops them when updating, which we do not follow for now.
"""
import operator

import numpy as np

from .. import dtypes
from ..errors import ShapeError
from ..ir.types import ArrayType, Static, as_array_type
from .conversions import convert
from .elementwise import power
from .registry import Op, wrapped_int
from .shape import broadcast_dims, plain, slice_is_one

# --- the type of x[idx] ----------------------------------------------------------------------

def _items(index, fn):
    index = plain(index)
    if isinstance(index, list):
        raise ShapeError(f"{fn}: a list as the index is not supported (as in JAX); use "
                         f"x[jnp.array(idx)] for an index array, or x[tuple(idx)] to index "
                         f"several axes")
    return index if isinstance(index, tuple) else (index,)


def _static_array_type(item, fn):
    """The type of a nested list/tuple of Python ints or bools used as an index array."""
    try:
        arr = np.asarray(item)
    except ValueError:  # ragged
        arr = None
    if arr is None or arr.dtype == object:
        raise ShapeError(f"{fn}: a list inside an index must hold only Python ints or bools; "
                         f"build dynamic index arrays with jnp.array or jnp.stack")
    if arr.size == 0:  # NumPy indexes with an empty list as with an empty int array
        arr = arr.astype(np.intp)
    return ArrayType(arr.dtype, tuple(d == 1 for d in arr.shape))


def _slice_bound(value, fn):
    """None, a static int, or an integer scalar known at run time."""
    if isinstance(value, ArrayType):
        ok = value.ndim == 0 and value.dtype.kind in "iu"
    else:
        ok = value is None or (hasattr(value, "__index__")
                               and not isinstance(value, (bool, np.bool_)))
    if not ok:
        raise ShapeError(f"{fn}: slice bounds must be integers or None, got {value}")


def _classify(item, fn):
    """(kind, data) of one index item; kind is new, ellipsis, slice, int, array or mask."""
    if item is None:
        return ("new", None)
    if item is Ellipsis:
        return ("ellipsis", None)
    if isinstance(item, slice):
        for bound in (item.start, item.stop, item.step):
            _slice_bound(bound, fn)
        if item.step is not None and not isinstance(item.step, ArrayType) and item.step == 0:
            raise ShapeError(f"{fn}: slice step cannot be zero")
        return ("slice", item)
    if isinstance(item, (bool, np.bool_)):  # a 0-d mask of known size
        return ("bool", bool(item))
    if isinstance(item, (tuple, list, np.ndarray)):
        item = _static_array_type(item, fn)
    if isinstance(item, ArrayType):
        if item.dtype.kind == "b":  # (0-d: a boolean scalar known at run time)
            return ("mask", item.ndim)
        if item.dtype.kind not in "iu":
            raise ShapeError(f"{fn}: index arrays must be integer or boolean, got {item}")
        return ("int", None) if item.ndim == 0 else ("array", item.ones)
    if hasattr(item, "__index__"):
        return ("int", None)
    raise ShapeError(f"{fn}: invalid index {item!r}; only integers, slices (:), None, "
                     f"Ellipsis (...) and integer or boolean arrays are valid indices")


def _axes_used(kind, data):
    return {"new": 0, "ellipsis": 0, "mask": data, "bool": 0}.get(kind, 1)


def index_type(x, index, fn="getitem()"):
    """The ArrayType of ``x[index]`` under NumPy's rules."""
    items = [_classify(i, fn) for i in _items(index, fn)]
    used = sum(_axes_used(*item) for item in items)
    if used > x.ndim:
        raise ShapeError(f"{fn}: too many indices for an array of rank {x.ndim}: the index "
                         f"uses {used} axes")
    if sum(kind == "ellipsis" for kind, _ in items) > 1:
        raise ShapeError(f"{fn}: an index can have only one Ellipsis (...)")

    advanced = any(kind in ("array", "mask", "bool") for kind, _ in items)
    # output dims as (position of their index item, known to be 1); positions decide
    # whether the advanced indices are adjacent, and any other item separates them
    basic, adv_positions, adv_ones, axis = [], [], [], 0
    for pos, (kind, data) in enumerate(items):
        if kind == "new":
            basic.append((pos, True))
        elif kind == "ellipsis":
            width = x.ndim - used
            basic += [(pos, one) for one in x.ones[axis:axis + width]]
            axis += width
        elif kind == "slice":
            basic.append((pos, slice_is_one(data.start, data.stop, data.step, x.ones[axis])))
        elif advanced:  # integers join the advanced indices
            adv_positions.append(pos)
            # a mask selects a data-dependent number of elements: never known to be 1;
            # True selects one (its dim is 1), False none
            adv_ones.append({"int": (), "array": data, "mask": (False,),
                             "bool": (data,)}[kind])
        axis += _axes_used(kind, data)
    basic += [(len(items), one) for one in x.ones[axis:]]  # axes not indexed
    if not adv_positions:
        ones = tuple(one for _, one in basic)
    else:
        adv = broadcast_dims(*adv_ones)
        first = adv_positions[0]
        if adv_positions == list(range(first, first + len(adv_positions))):
            # adjacent advanced indices: their dims replace them in place
            ones = (tuple(one for pos, one in basic if pos < first) + adv
                    + tuple(one for pos, one in basic if pos > first))
        else:  # separated: their dims come first
            ones = adv + tuple(one for _, one in basic)
    return ArrayType(x.dtype, ones, x.weak)


def _getitem(x, index):
    return x[index]


getitem = Op("getitem", _getitem, lambda x, index: index_type(as_array_type(x), index),
             aliases=(operator.getitem,))


# --- x.at[idx].<update>(values) -----------------------------------------------------------
# As JAX's _scatter_impl: x and the values are promoted to one dtype, the update is done in
# it, and the result converted back to x's dtype (as astype: floats saturate into
# integers), so jnp.array([10, 3]).at[0].multiply(2.5) is 25, not 10 * 2. JAX converts all
# of x, so an int32 above 2**24 updated with a float comes back rounded, here too. (JAX
# also warns that such unsafe casts will become an error.) A Python number is weak. Values
# broadcast to the shape x[idx] has, as in JAX, which unlike NumPy does not drop extra
# leading dims of size 1.

_MODES = (None, "promise_in_bounds")


def _check_mode(mode, fn):
    """The modes the ops take (index_modes rewrites clip, fill and drop into them)."""
    if mode not in _MODES:
        from .index_modes import check
        check(mode, fn)
        raise ShapeError(f"{fn}: mode={mode!r} is rewritten before it reaches the op")


def _cast_values(values, dtype):
    """``values`` in ``dtype``, converted as astype does."""
    if type(values) is int:
        values = wrapped_int(values, dtype)
    values = np.asarray(values)
    if values.dtype.kind == "c" and dtype.kind != "c":
        values = values.real  # as JAX's conversion, without NumPy's ComplexWarning
    return convert(values, dtype)


def update_dtype(x, values):
    """_update_dtype from the types of ``x`` and the values (a Static number is weak, as a
    Python number is where impl runs)."""
    x = as_array_type(x)
    if isinstance(values, Static) and type(values.value) is int and x.dtype.kind in "iu":
        return x.dtype
    v = as_array_type(values)
    weak = isinstance(values, Static) and not isinstance(values.value, bool)
    return dtypes.promote_types((x.dtype, False), (v.dtype, weak))[0]


def _update_dtype(x, values):
    """The dtype JAX updates ``x`` in: x's promoted with the values' (a Python number weak;
    a Python int x's integer dtype cannot hold wraps to it, as in JAX)."""
    dtype = np.asarray(x).dtype
    if dtypes.is_python_scalar(values):
        if type(values) is int and dtype.kind in "iu":
            return dtype
        other = (dtypes.python_scalar_dtype(values), not isinstance(values, bool))
    else:
        other = (dtypes.canonicalize_dtype(np.asarray(values).dtype), False)
    return dtypes.promote_types((dtype, False), other)[0]


def _update_rule(method, inexact=False, allow_bool=True):
    fn = f"x.at[idx].{method}()"

    def rule(x, values, index, *, indices_are_sorted=False, unique_indices=False, mode=None):
        x = as_array_type(x)
        target = index_type(x, index, fn)
        try:
            values = as_array_type(values)
        except TypeError:
            raise ShapeError(f"{fn}: values must be an array or a number, got {values}") from None
        if values.ndim > target.ndim:
            raise ShapeError(f"{fn}: values of rank {values.ndim} cannot be broadcast to x[idx], "
                             f"of rank {target.ndim}")
        if not allow_bool and x.dtype.kind == "b" and values.dtype.kind == "b":
            raise ShapeError(f"{fn} is not defined for boolean x and values")  # as in JAX
        _check_mode(mode, fn)
        dtype, weak = dtypes.to_inexact(x.dtype, x.weak) if inexact else (x.dtype, x.weak)
        if method == "power" and dtype.kind == "b":  # bool ** bool is int32, as jnp.power's
            dtype = dtypes.int32
        return ArrayType(dtype, x.ones, weak)
    return rule


def _in_update_dtype(update):
    """``update(out, index, values)``, which writes into ``out``, as an impl that updates a
    copy of x in the dtype _update_dtype gives and converts the result back."""
    def impl(x, values, index, *, indices_are_sorted=False, unique_indices=False, mode=None):
        x = np.asarray(x)
        dtype = _update_dtype(x, values)
        out = np.array(x, dtype=dtype, copy=True)
        update(out, index, _cast_values(values, dtype))
        return out if dtype == x.dtype else _cast_values(out, x.dtype)
    return impl


def _write(out, index, values):
    out[index] = values  # with repeated indices the last wins


_at_set = _in_update_dtype(_write)


def _accumulate(ufunc):
    """An update where repeated indices accumulate (``ufunc.at``), as JAX's scatters."""
    return _in_update_dtype(ufunc.at)


_multiply_at = _accumulate(np.multiply)


def _factors(x, values, index):
    """ones_like(x) multiplied at idx by the values: JAX's divide and power use it."""
    return _multiply_at(np.ones(np.shape(x), np.asarray(x).dtype), values, index)


def _at_divide(x, values, index, *, indices_are_sorted=False, unique_indices=False, mode=None):
    dtype = dtypes.to_inexact(np.asarray(x).dtype)[0]
    return np.true_divide(x, _factors(x, values, index), dtype=dtype)


def _at_power(x, values, index, *, indices_are_sorted=False, unique_indices=False, mode=None):
    factors = _factors(x, values, index)
    if factors.dtype == np.bool_:  # bool ** bool computes as int32, as jnp.power's
        x, factors = np.asarray(x, np.int32), factors.astype(np.int32)
    return power.impl(x, factors)  # (an integer power as jnp.power's)


def _update_op(method, impl, inexact=False, allow_bool=True):
    return Op(f"at_{method}", impl, _update_rule(method, inexact, allow_bool),
              operands=("x", "values"), static=("indices_are_sorted", "unique_indices", "mode"),
              raw_python_scalars=True)  # impl reads a Python number as weak


at_set = _update_op("set", _at_set)
at_add = _update_op("add", _accumulate(np.add))
at_subtract = _update_op("subtract", _accumulate(np.subtract), allow_bool=False)
at_multiply = _update_op("multiply", _accumulate(np.multiply))
at_divide = _update_op("divide", _at_divide, inexact=True)
at_power = _update_op("power", _at_power, allow_bool=False)
at_min = _update_op("min", _accumulate(np.minimum))
at_max = _update_op("max", _accumulate(np.maximum))


def _update_method(op, doc):
    def method(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        if mode in ("clip", "fill", "drop"):
            from . import index_modes
            return index_modes.apply(self.array, self.index, mode, op.name[3:], values)
        return op(self.array, values, self.index, indices_are_sorted=indices_are_sorted,
                  unique_indices=unique_indices, mode=mode)
    method.__doc__ = doc
    return method


class IndexUpdateHelper:
    """``x.at``: ``x.at[idx]`` names the positions that an update changes."""
    __slots__ = ("array",)

    def __init__(self, array):
        self.array = array

    def __getitem__(self, index):
        return IndexUpdateRef(self.array, index)

    def __repr__(self):
        return f"IndexUpdateHelper({self.array!r})"


class IndexUpdateRef:
    """``x.at[idx]``: each method returns an updated copy; ``x`` itself never changes.

    ``indices_are_sorted`` and ``unique_indices`` are JAX's performance hints,
    accepted and not needed here.
    """
    __slots__ = ("array", "index")

    def __init__(self, array, index):
        self.array = array
        self.index = index

    def __repr__(self):
        return f"IndexUpdateRef({self.array!r}, {self.index!r})"

    def get(self, *, indices_are_sorted=False, unique_indices=False, mode=None,
            fill_value=None):
        """``x[idx]``; mode "fill" (or "drop") gives ``fill_value`` (NaN, or the integer
        type's extreme, by default) where an index is out of bounds, "clip" clamps them."""
        if mode in ("clip", "fill", "drop"):
            from . import index_modes
            return index_modes.apply(self.array, self.index, mode, "get",
                                     fill_value=fill_value if mode != "clip" else None)
        _check_mode(mode, "x.at[idx].get()")
        if fill_value is not None:
            raise ShapeError("x.at[idx].get(): fill_value is not supported (it needs "
                             "mode='fill')")
        return getitem(self.array, self.index)

    set = _update_method(at_set, "``x[idx] = values``; with repeated indices the last wins.")
    add = _update_method(at_add, "``x[idx] += values``; repeated indices accumulate.")
    subtract = _update_method(at_subtract, "``x[idx] -= values``; repeated indices accumulate.")
    multiply = _update_method(at_multiply, "``x[idx] *= values``; repeated indices accumulate.")
    mul = multiply
    divide = _update_method(at_divide, "``x[idx] /= values`` (a float result, as ``/``).")
    power = _update_method(at_power, "``x[idx] **= values``.")
    min = _update_method(at_min, "``x[idx] = minimum(x[idx], values)``, accumulating.")
    max = _update_method(at_max, "``x[idx] = maximum(x[idx], values)``, accumulating.")
