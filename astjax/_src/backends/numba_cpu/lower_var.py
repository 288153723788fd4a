"""Lowering of var, std and count_nonzero (``ops/reductions.py``): the reduced axes moved
last, the array as C-contiguous (rows, reduced size), one pass over each row (for var,
``runtime.variance_rows``: the mean, then the centered squares, as NumPy), and the rows
reshaped to the result's shape."""
import math

import numpy as np

from ...ir.types import as_array_type
from ...ops.reductions import _axes, _correction, _var_dtypes
from .emitter import Unsupported
from .fusion import tuple_source
from .lowering import lowering


def _rows(c, a, a_type, axes, dtype):
    """Lines making ``rows``: ``a`` in ``dtype`` as (kept elements, reduced elements)."""
    kept = [d for d in range(a_type.ndim) if d not in axes]
    moved, rows = c.emitter.names.fresh("moved"), c.emitter.names.fresh("rows")
    order = kept + sorted(axes)
    x = a if order == list(range(a_type.ndim)) else \
        f"_rt.transpose({a}, {tuple_source(map(str, order))})"
    size = " * ".join([f"{moved}.shape[{d}]" for d in range(len(kept))] or ["1"])
    return rows, [f"{moved} = _rt.ascontiguousarray({x}).astype({dtype})",
                  f"{rows} = {moved}.reshape(({size}, -1)) if {moved}.size else "
                  f"{moved}.reshape(({size}, {moved}.size))"]


def _result(c, a, a_type, axes, per_row):
    """Assign the 1-D ``per_row`` reshaped to the result (keepdims kept), in its dtype."""
    dtype = f"np.{np.dtype(c.out.dtype).name}"
    if c.out.ndim == 0:
        return c.assign(f"{dtype}({per_row}[0])")
    keepdims = c.param("keepdims", False)
    shape = [f"{a}.shape[{d}]" if d not in axes else "1" for d in range(a_type.ndim)
             if d not in axes or keepdims]
    return c.assign(f"{per_row}.reshape({tuple_source(shape)}).astype({dtype})")


@lowering("var", "std")
def _var(c):
    name, a, a_type = c.op.name, c.text("a"), as_array_type(c.type("a"))
    computation = _var_dtypes(name, a_type.dtype, c.param("dtype"))[1]
    if computation.kind != "f" or a_type.ndim == 0:
        raise Unsupported(f"{name} of {a_type}")
    axes = _axes(name, c.param("axis"), a_type.ndim)
    correction = _correction(name, c.param("ddof", 0), c.param("correction"))
    if not isinstance(correction, (int, float)) or isinstance(correction, bool) \
            or not math.isfinite(correction):
        raise Unsupported(f"{name}(ddof={correction!r})")
    comp = f"np.{np.dtype(computation).name}"
    rows, lines = _rows(c, a, a_type, axes, comp)
    out = c.emitter.names.fresh("var")
    lines.append(f"{out} = _rt.variance_rows({rows}, {comp}({rows}.shape[1]), "
                 f"{comp}({rows}.shape[1] - {correction!r}), {name == 'std'})")
    return lines + _result(c, a, a_type, axes, out)


@lowering("count_nonzero")
def _count_nonzero(c):
    a, a_type = c.text("a"), as_array_type(c.type("a"))
    if a_type.ndim == 0:
        raise Unsupported(f"count_nonzero of {a_type}")
    axes = _axes("count_nonzero", c.param("axis"), a_type.ndim)
    rows, lines = _rows(c, a, a_type, axes, f"np.{np.dtype(a_type.dtype).name}")
    out = c.emitter.names.fresh("count")
    lines.append(f"{out} = ({rows} != 0).sum(axis=1)")
    return lines + _result(c, a, a_type, axes, out)
