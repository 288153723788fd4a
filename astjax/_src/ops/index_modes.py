"""JAX's out-of-bounds modes of ``x.at[idx]``: ``"clip"`` clamps every integer index into
its axis, ``"fill"`` makes a gather of an index out of bounds give ``fill_value`` and
``"drop"`` (the same mode in JAX) skips such an update. Negative indices count from the
end first, as in JAX, so -1 is in bounds and -4 on an axis of 3 is not.

Both are built from the ops the other indexing uses, so transforms and backends see
nothing new: an index out of bounds is sent to one extra element padded at the end of its
axis, which holds the fill value (a gather) or is cut off after the update (a scatter).
Eagerly, ``apply`` runs that on arrays; compiled code calls a function ``source`` writes
for the index's structure (infer.at_update)."""
import re

import numpy as np

from .indexing import _classify, _axes_used, _items

MODES = (None, "promise_in_bounds", "clip", "fill", "drop")


def check(mode, fn):
    from ..errors import ShapeError
    if mode not in MODES:
        raise ShapeError(f"{fn}: mode={mode!r} is not one of {MODES[1:]} (or None, where "
                         f"an index out of bounds raises IndexError as in NumPy)")


def integer_axes(items, ndim, fn):
    """{position of an integer index item: the axis it indexes} for abstract items."""
    kinds = [_classify(item, fn) for item in items]
    used = sum(_axes_used(*k) for k in kinds)
    out, axis = {}, 0
    for pos, (kind, data) in enumerate(kinds):
        if kind in ("int", "array"):
            out[pos] = axis
        axis += ndim - used if kind == "ellipsis" else _axes_used(kind, data)
    return out


def default_fill(dtype):
    """JAX's fill value of a gather out of bounds: NaN, or the integer type's extreme."""
    dtype = np.dtype(dtype)
    if dtype.kind in "fc":
        return float("nan")
    if dtype.kind == "b":
        return True
    return int(np.iinfo(dtype).min if dtype.kind == "i" else np.iinfo(dtype).max)


def apply(x, index, mode, method, values=None, fill_value=None):
    """``x.at[index].<method>(values, mode=mode)`` (``get``: with fill_value) on arrays."""
    import astjax.numpy as jnp
    from .indexing import getitem
    fn = f"x.at[idx].{method}()"
    items = list(_items(index, fn))
    abstract = [np.asarray(i) if hasattr(i, "__array__") else i for i in items]
    axes = integer_axes(abstract, np.ndim(x), fn)
    shape = np.shape(x)
    for pos, axis in axes.items():
        n = shape[axis]
        i = np.asarray(items[pos])
        i = np.where(i < 0, i + n, i)
        items[pos] = np.clip(i, 0, max(n - 1, 0)) if mode == "clip" else \
            np.where((i >= 0) & (i < n), i, n)
    index = tuple(items)
    if mode == "clip":
        return getitem(x, index) if method == "get" else \
            getattr(jnp.asarray(x).at[index], method)(values)
    pads = [(0, int(a in axes.values())) for a in range(len(shape))]
    if method == "get":
        fill = default_fill(jnp.asarray(x).dtype) if fill_value is None else fill_value
        return getitem(jnp.pad(x, pads, constant_values=fill), index)
    out = getattr(jnp.pad(x, pads).at[index], method)(values)
    return getitem(out, tuple(slice(0, n) for n in shape))


def source(method, items, axes, ndim, clip):
    """A function ``at_<method>_<mode>(x, [values,] a0, a1, ..., [fill])`` for compiled code:
    ``items`` are the index items' source in terms of the parameters ``a<k>`` (``a0``,
    ``a1:a2``, ``None``), ``axes`` integer_axes of them; a gather not clipped takes
    ``fill``."""
    mode = "clip" if clip else "fill" if method == "get" else "drop"
    nparams = 1 + max([int(p[1:]) for item in items for p in re.findall(r"\ba\d+\b", item)]
                      or [-1])
    params = ["x"] + (["values"] if method != "get" else []) + \
        [f"a{k}" for k in range(nparams)] + (["fill"] if mode == "fill" else [])
    lines, items = [], list(items)
    for pos, axis in axes.items():
        j = f"j{pos}"
        lines += [f"n{pos} = x.shape[{axis}]",
                  f"{j} = _jnp.asarray({items[pos]})",
                  f"{j} = _jnp.where({j} < 0, {j} + n{pos}, {j})",
                  f"{j} = _jnp.clip({j}, 0, n{pos} - 1)" if clip else
                  f"{j} = _jnp.where(({j} >= 0) & ({j} < n{pos}), {j}, n{pos})"]
        items[pos] = j
    index = ", ".join(items) + ("," if len(items) == 1 else "")
    pads = "".join(f"(0, {int(a in axes.values())}), " for a in range(ndim))
    if clip:
        lines.append(f"return x[{index}]" if method == "get" else
                     f"return x.at[{index}].{method}(values)")
    elif method == "get":  # out of bounds: the padded fill value
        lines += [f"x = _jnp.pad(x, ({pads}), constant_values=fill)", f"return x[{index}]"]
    else:  # out of bounds: updates to the padding, cut off
        cut = ", ".join(f":shape[{a}]" if a in axes.values() else ":" for a in range(ndim))
        lines += ["shape = x.shape", f"x = _jnp.pad(x, ({pads}))",
                  f"x = x.at[{index}].{method}(values)", f"return x[{cut}]"]
    body = "".join(f"    {line}\n" for line in lines)
    return f"def at_{method}_{mode}({', '.join(params)}):\n{body}"
