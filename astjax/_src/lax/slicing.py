"""``select`` and the dynamic slices, with JAX's clamping of start indices.

A start index may be negative (counted from the end, when ``allow_negative_indices``),
and is then clamped to ``[0, dim - size]`` so the slice always lies inside the operand.
In compiled code each function is a few lines of jnp generated for the operand's rank
(the clamp, then basic slicing or ``.at[...].set``), so the existing indexing rules give
the derivatives; slice sizes must be known when the code is generated, as in JAX.
"""
import numpy as np

from ..ir.types import ArrayType, SequenceType, Static
from .common import as_sequence, dynamic, lax_function, synthesize, type_error


def _jnp():
    import astjax.numpy as jnp
    return jnp


# --- select -----------------------------------------------------------------------------------

def _check_select(pred, on_true, on_false):
    """JAX's checks, on types (``ArrayType`` after ``dynamic``)."""
    if pred.dtype != np.bool_:
        raise type_error(f"select pred must be boolean type, got {pred}")
    if on_true.dtype != on_false.dtype:
        raise type_error(f"select cases must have the same dtypes, got {on_true.dtype} and "
                         f"{on_false.dtype}.")
    if on_true.ndim != on_false.ndim:
        raise type_error(f"select cases must have the same shapes, got arrays of rank "
                         f"{on_true.ndim} and {on_false.ndim}.")
    if pred.ndim not in (0, on_true.ndim):
        raise type_error(f"select pred must be scalar or have the same shape as cases, got "
                         f"pred of rank {pred.ndim} and cases of rank {on_true.ndim}.")


def _lower_select(pred, on_true, on_false):
    types_ = [dynamic(t) for t in (pred, on_true, on_false)]
    for t in types_:
        if not isinstance(t, ArrayType):
            raise type_error(f"select needs arrays, got {t}")
    _check_select(*types_)
    return synthesize("select", "def select(pred, on_true, on_false):\n"
                                "    return _jnp.where(pred, on_true, on_false)\n", select.eager)


@lax_function(_lower_select)
def select(pred, on_true, on_false):
    """``on_true`` where ``pred`` else ``on_false``, elementwise; the cases must have one
    shape and dtype, ``pred`` is boolean, scalar or of that shape."""
    from ..ir.types import type_of_value
    jnp = _jnp()
    p, t, f = (type_of_value(v) for v in (pred, on_true, on_false))
    _check_select(p, t, f)
    if np.shape(on_true) != np.shape(on_false):
        raise type_error(f"select cases must have the same shapes, got {np.shape(on_true)} "
                         f"and {np.shape(on_false)}.")
    if p.ndim and np.shape(pred) != np.shape(on_true):
        raise type_error(f"select pred must be scalar or have the same shape as cases, got "
                         f"pred shape {np.shape(pred)} for cases of shape {np.shape(on_true)}.")
    return jnp.where(pred, on_true, on_false)


# --- shared: per-dimension start indices --------------------------------------------------------

def _negative_flags(allow, ndim, fn):
    if not isinstance(allow, Static):
        raise type_error(f"{fn}: allow_negative_indices must be known when the code is "
                         f"generated")
    value = allow.value
    flags = tuple(value) if isinstance(value, (tuple, list)) else (value,) * ndim
    if len(flags) != ndim:
        raise type_error(f"{fn}: allow_negative_indices has {len(flags)} entries for an "
                         f"operand of rank {ndim}")
    return tuple(bool(f) for f in flags)


def _start_types(starts, ndim, fn):
    """The types of the start indices, one per dimension."""
    seq = as_sequence(starts)
    if isinstance(seq, SequenceType):
        elts = seq.elts
    elif isinstance(seq, ArrayType) and seq.ndim == 1:
        elts = [ArrayType(seq.dtype, (), False)] * ndim
    else:
        raise type_error(f"{fn}: start_indices must be a tuple of scalars or a 1-D array, "
                         f"got {starts}")
    if len(elts) != ndim:
        raise type_error(f"{fn}: start_indices must have length equal to the number of "
                         f"dimensions of the operand ({ndim}), got {len(elts)}")
    for t in elts:
        d = dynamic(t)
        if not (isinstance(d, ArrayType) and d.ndim == 0 and d.dtype.kind in "iu"):
            raise type_error(f"{fn}: start indices must be integer scalars, got {t}")
    return list(elts)


def _clamped_start(d, t, expr, size, negative, lines):
    """Append the lines computing ``s<d>``, start index ``d`` clamped as JAX clamps it."""
    dim = f"operand.shape[{d}]"
    if isinstance(t, Static):
        v = int(t.value)
        base = f"{v} + {dim}" if v < 0 and negative else repr(v)
    else:
        lines.append(f"    s{d} = {expr}")
        if negative:
            lines.append(f"    s{d} = _jnp.where(s{d} < 0, s{d} + {dim}, s{d})")
        base = f"s{d}"
    lines.append(f"    s{d} = _jnp.clip({base}, 0, {dim} - {size})")


def _eager_start(s, dim, size, negative):
    s = int(np.asarray(s))
    if negative and s < 0:
        s += dim
    return min(max(s, 0), dim - size)


def _array_type(t, what, fn):
    a = dynamic(t)
    if not isinstance(a, ArrayType):
        raise type_error(f"{fn}: {what} must be an array, got {t}")
    return a


# --- dynamic_slice ----------------------------------------------------------------------------

def _static_sizes(sizes, ndim, fn):
    seq = as_sequence(sizes)
    if not (isinstance(seq, SequenceType) and all(isinstance(e, Static) for e in seq.elts)):
        raise type_error(f"{fn}: slice_sizes must be a tuple of ints known when the code is "
                         f"generated (constants or static arguments), got {sizes}")
    values = tuple(e.value for e in seq.elts)
    _check_sizes(values, ndim, fn)
    return values


def _check_sizes(sizes, ndim, fn):
    if len(sizes) != ndim:
        raise type_error(f"{fn}: slice_sizes must have length equal to the number of "
                         f"dimensions of the operand ({ndim}), got {len(sizes)}")
    for s in sizes:
        if isinstance(s, bool) or not isinstance(s, (int, np.integer)) or s < 0:
            raise type_error(f"{fn}: slice_sizes must be non-negative integers, got {sizes}")


def _lower_dynamic_slice(operand, start_indices, slice_sizes, allow_negative_indices):
    fn = "dynamic_slice"
    x = _array_type(operand, "operand", fn)
    starts = _start_types(start_indices, x.ndim, fn)
    sizes = _static_sizes(slice_sizes, x.ndim, fn)
    negative = _negative_flags(allow_negative_indices, x.ndim, fn)
    lines = []
    for d in range(x.ndim):
        _clamped_start(d, starts[d], f"start_indices[{d}]", sizes[d], negative[d], lines)
    index = ", ".join(f"s{d}:s{d} + {sizes[d]}" for d in range(x.ndim))
    result = f"operand[{index}]" if x.ndim else "operand"
    lines.append(f"    return _jnp.reshape({result}, {tuple(int(s) for s in sizes)!r})")
    return synthesize(fn, "def dynamic_slice(operand, start_indices, slice_sizes, "
                          "allow_negative_indices):\n" + "\n".join(lines) + "\n",
                      dynamic_slice.eager)


@lax_function(_lower_dynamic_slice)
def dynamic_slice(operand, start_indices, slice_sizes, allow_negative_indices=True):
    """``operand[s0:s0 + size0, ...]`` with each start clamped to ``[0, dim - size]``."""
    jnp = _jnp()
    x = jnp.asarray(operand)
    sizes = tuple(slice_sizes)
    _check_sizes(sizes, x.ndim, "dynamic_slice")
    starts = list(start_indices)
    if len(starts) != x.ndim:
        raise type_error(f"dynamic_slice: start_indices must have length equal to the number "
                         f"of dimensions of the operand ({x.ndim}), got {len(starts)}")
    for size, dim in zip(sizes, x.shape):
        if size > dim:
            raise type_error(f"dynamic_slice: slice_sizes {sizes} must be less than or equal "
                             f"to the operand shape {x.shape}")
    negative = _negative_flags(Static(allow_negative_indices), x.ndim, "dynamic_slice")
    index = tuple(slice(s, s + size) for s, size in (
        (_eager_start(s, dim, size, neg), size)
        for s, dim, size, neg in zip(starts, x.shape, sizes, negative)))
    return x[index] if index else x


# --- dynamic_update_slice ---------------------------------------------------------------------

def _check_update(x, u, fn):
    if u.ndim != x.ndim:
        raise type_error(f"{fn} update must have the same rank as operand, got update of rank "
                         f"{u.ndim} and operand of rank {x.ndim}")
    if u.dtype != x.dtype:
        raise type_error(f"{fn} update and operand must have the same dtype, got "
                         f"{u.dtype} and {x.dtype}")


def _lower_dynamic_update_slice(operand, update, start_indices, allow_negative_indices):
    fn = "dynamic_update_slice"
    x = _array_type(operand, "operand", fn)
    u = _array_type(update, "update", fn)
    _check_update(x, u, fn)
    starts = _start_types(start_indices, x.ndim, fn)
    negative = _negative_flags(allow_negative_indices, x.ndim, fn)
    lines = []
    for d in range(x.ndim):
        _clamped_start(d, starts[d], f"start_indices[{d}]", f"update.shape[{d}]", negative[d],
                       lines)
    if x.ndim:
        index = ", ".join(f"s{d}:s{d} + update.shape[{d}]" for d in range(x.ndim))
        lines.append(f"    return operand.at[{index}].set(update)")
    else:
        lines.append("    return _jnp.astype(update, operand.dtype)")
    return synthesize(fn, "def dynamic_update_slice(operand, update, start_indices, "
                          "allow_negative_indices):\n" + "\n".join(lines) + "\n",
                      dynamic_update_slice.eager)


@lax_function(_lower_dynamic_update_slice)
def dynamic_update_slice(operand, update, start_indices, allow_negative_indices=True):
    """``operand`` with ``update`` written at the (clamped) start indices."""
    from ..ir.types import type_of_value
    jnp = _jnp()
    x, u = jnp.asarray(operand), jnp.asarray(update)
    _check_update(type_of_value(x), type_of_value(u), "dynamic_update_slice")
    starts = list(start_indices)
    if len(starts) != x.ndim:
        raise type_error(f"dynamic_update_slice: start_indices must have length equal to the "
                         f"number of dimensions of the operand ({x.ndim}), got {len(starts)}")
    if any(a > b for a, b in zip(u.shape, x.shape)):
        raise type_error(f"dynamic_update_slice update shape {u.shape} must be smaller than "
                         f"operand shape {x.shape}")
    negative = _negative_flags(Static(allow_negative_indices), x.ndim, "dynamic_update_slice")
    index = tuple(slice(s, s + size) for s, size in (
        (_eager_start(s, dim, size, neg), size)
        for s, dim, size, neg in zip(starts, x.shape, u.shape, negative)))
    return x.at[index].set(u) if index else u.astype(x.dtype)


# --- along one axis ---------------------------------------------------------------------------

def _axis(axis, ndim, fn):
    if not isinstance(axis, Static) or isinstance(axis.value, bool) or \
            not isinstance(axis.value, (int, np.integer)):
        raise type_error(f"{fn}: axis must be an int known when the code is generated")
    a = int(axis.value)
    if not -ndim <= a < ndim:
        raise value_error_axis(fn, a, ndim)
    return a % ndim


def value_error_axis(fn, axis, ndim):
    from .common import value_error
    return value_error(f"{fn}: axis {axis} is out of bounds for an array of rank {ndim}")


def _start_type(t, fn):
    d = dynamic(t)
    if not (isinstance(d, ArrayType) and d.ndim == 0 and d.dtype.kind in "iu"):
        raise type_error(f"{fn}: the start index must be an integer scalar, got {t}")


def _lower_dynamic_slice_in_dim(operand, start_index, slice_size, axis=Static(0),
                                allow_negative_indices=Static(True)):
    fn = "dynamic_slice_in_dim"
    x = _array_type(operand, "operand", fn)
    a = _axis(axis, x.ndim, fn)
    _start_type(start_index, fn)
    if not isinstance(slice_size, Static) or isinstance(slice_size.value, bool) or \
            not isinstance(slice_size.value, (int, np.integer)) or slice_size.value < 0:
        raise type_error(f"{fn}: slice_size must be a non-negative int known when the code is "
                         f"generated, got {slice_size}")
    size = int(slice_size.value)
    negative = _negative_flags(allow_negative_indices, 1, fn)[0]
    lines = []
    _clamped_start(a, start_index, "start_index", size, negative, lines)
    pre = ":, " * a
    if size == 1:  # an integer index, then the axis back (known to be 1)
        lines.append(f"    return _jnp.expand_dims(operand[{pre}s{a}], {a})")
    else:
        lines.append(f"    return operand[{pre}s{a}:s{a} + {size}]")
    return synthesize(fn, "def dynamic_slice_in_dim(operand, start_index, slice_size, axis, "
                          "allow_negative_indices):\n" + "\n".join(lines) + "\n",
                      dynamic_slice_in_dim.eager)


@lax_function(_lower_dynamic_slice_in_dim)
def dynamic_slice_in_dim(operand, start_index, slice_size, axis=0, allow_negative_indices=True):
    """``dynamic_slice`` along one axis: ``operand[..., s:s + slice_size, ...]``."""
    x = _jnp().asarray(operand)
    axis = _axis(Static(axis), x.ndim, "dynamic_slice_in_dim")
    starts = [0] * x.ndim
    starts[axis] = start_index
    sizes = list(x.shape)
    sizes[axis] = slice_size
    flags = [True] * x.ndim
    flags[axis] = allow_negative_indices
    return dynamic_slice(x, starts, sizes, tuple(flags))


def _lower_dynamic_index_in_dim(operand, index, axis=Static(0), keepdims=Static(True),
                                allow_negative_indices=Static(True)):
    fn = "dynamic_index_in_dim"
    x = _array_type(operand, "operand", fn)
    a = _axis(axis, x.ndim, fn)
    _start_type(index, fn)
    if not isinstance(keepdims, Static):
        raise type_error(f"{fn}: keepdims must be known when the code is generated")
    negative = _negative_flags(allow_negative_indices, 1, fn)[0]
    lines = []
    _clamped_start(a, index, "index", 1, negative, lines)
    item = f"operand[{':, ' * a}s{a}]"
    lines.append(f"    return _jnp.expand_dims({item}, {a})" if keepdims.value
                 else f"    return {item}")
    return synthesize(fn, "def dynamic_index_in_dim(operand, index, axis, keepdims, "
                          "allow_negative_indices):\n" + "\n".join(lines) + "\n",
                      dynamic_index_in_dim.eager)


@lax_function(_lower_dynamic_index_in_dim)
def dynamic_index_in_dim(operand, index, axis=0, keepdims=True, allow_negative_indices=True):
    """``operand[..., index, ...]`` along ``axis`` (clamped); ``keepdims`` keeps the axis."""
    out = dynamic_slice_in_dim(operand, index, 1, axis, allow_negative_indices)
    if keepdims:
        return out
    return _jnp().squeeze(out, axis)


def _lower_dynamic_update_slice_in_dim(operand, update, start_index, axis,
                                       allow_negative_indices=Static(True)):
    fn = "dynamic_update_slice_in_dim"
    x = _array_type(operand, "operand", fn)
    u = _array_type(update, "update", fn)
    _check_update(x, u, fn)
    a = _axis(axis, x.ndim, fn)
    _start_type(start_index, fn)
    negative = _negative_flags(allow_negative_indices, 1, fn)[0]
    lines = []
    _clamped_start(a, start_index, "start_index", f"update.shape[{a}]", negative, lines)
    index = ", ".join(f"s{a}:s{a} + update.shape[{a}]" if d == a else f":update.shape[{d}]"
                      for d in range(x.ndim))
    lines.append(f"    return operand.at[{index}].set(update)")
    return synthesize(fn, "def dynamic_update_slice_in_dim(operand, update, start_index, axis, "
                          "allow_negative_indices):\n" + "\n".join(lines) + "\n",
                      dynamic_update_slice_in_dim.eager)


@lax_function(_lower_dynamic_update_slice_in_dim)
def dynamic_update_slice_in_dim(operand, update, start_index, axis,
                                allow_negative_indices=True):
    """``dynamic_update_slice`` with start ``start_index`` along ``axis``, 0 elsewhere."""
    x = _jnp().asarray(operand)
    a = _axis(Static(axis), x.ndim, "dynamic_update_slice_in_dim")
    starts = [0] * x.ndim
    starts[a] = start_index
    flags = [True] * x.ndim
    flags[a] = allow_negative_indices
    return dynamic_update_slice(x, update, starts, tuple(flags))


def _lower_dynamic_update_index_in_dim(operand, update, index, axis,
                                       allow_negative_indices=Static(True)):
    fn = "dynamic_update_index_in_dim"
    x = _array_type(operand, "operand", fn)
    u = _array_type(update, "update", fn)
    a = _axis(axis, x.ndim, fn)
    expand = u.ndim == x.ndim - 1
    if expand:
        u = ArrayType(u.dtype, u.ones[:a] + (True,) + u.ones[a:], u.weak)
    _check_update(x, u, fn)
    _start_type(index, fn)
    negative = _negative_flags(allow_negative_indices, 1, fn)[0]
    lines = []
    _clamped_start(a, index, "index", 1, negative, lines)
    if expand:
        lines.append(f"    update = _jnp.expand_dims(update, {a})")
    idx = ", ".join(f"s{a}:s{a} + 1" if d == a else f":update.shape[{d}]"
                    for d in range(x.ndim))
    lines.append(f"    return operand.at[{idx}].set(update)")
    return synthesize(fn, "def dynamic_update_index_in_dim(operand, update, index, axis, "
                          "allow_negative_indices):\n" + "\n".join(lines) + "\n",
                      dynamic_update_index_in_dim.eager)


@lax_function(_lower_dynamic_update_index_in_dim)
def dynamic_update_index_in_dim(operand, update, index, axis, allow_negative_indices=True):
    """Write ``update`` (with or without the ``axis`` dimension) at ``index`` along ``axis``."""
    jnp = _jnp()
    x, u = jnp.asarray(operand), jnp.asarray(update)
    a = _axis(Static(axis), x.ndim, "dynamic_update_index_in_dim")
    if u.ndim == x.ndim - 1:
        u = jnp.expand_dims(u, a)
    return dynamic_update_slice_in_dim(x, u, index, a, allow_negative_indices)
