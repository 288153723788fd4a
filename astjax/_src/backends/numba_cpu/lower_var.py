"""Lowering of var and std (``ops/reductions.py``): the reduced axes moved last, the array
as C-contiguous (rows, reduced size) in the computation dtype, one call of
``runtime.variance_rows`` (two passes per row, as NumPy: the mean, then the centered
squares), and the rows reshaped to the result's shape."""
import math

import numpy as np

from ...ir.types import as_array_type
from ...ops.reductions import _axes, _correction, _var_dtypes
from .emitter import Unsupported
from .fusion import tuple_source
from .lowering import lowering


@lowering("var", "std")
def _var(c):
    name, a, a_type = c.op.name, c.text("a"), as_array_type(c.type("a"))
    result, computation = _var_dtypes(name, a_type.dtype, c.param("dtype"))
    if computation.kind != "f" or a_type.ndim == 0:
        raise Unsupported(f"{name} of {a_type}")
    axes = _axes(name, c.param("axis"), a_type.ndim)
    correction = _correction(name, c.param("ddof", 0), c.param("correction"))
    if not isinstance(correction, (int, float)) or isinstance(correction, bool) \
            or not math.isfinite(correction):
        raise Unsupported(f"{name}(ddof={correction!r})")
    kept = [d for d in range(a_type.ndim) if d not in axes]
    names = c.emitter.names
    moved, rows, out = names.fresh("moved"), names.fresh("rows"), names.fresh("var")
    comp = f"np.{np.dtype(computation).name}"
    order = kept + sorted(axes)
    x = a if order == list(range(a_type.ndim)) else \
        f"_rt.transpose({a}, {tuple_source(map(str, order))})"
    size = " * ".join([f"{moved}.shape[{d}]" for d in range(len(kept))] or ["1"])
    lines = [f"{moved} = _rt.ascontiguousarray({x}).astype({comp})",
             f"{rows} = {moved}.reshape(({size}, -1)) if {moved}.size else "
             f"{moved}.reshape(({size}, {moved}.size))",
             f"{out} = _rt.variance_rows({rows}, {comp}({rows}.shape[1]), "
             f"{comp}({rows}.shape[1] - {correction!r}), {name == 'std'})"]
    if c.out.ndim == 0:
        return lines + c.assign(f"np.{np.dtype(result).name}({out}[0])")
    keepdims = c.param("keepdims", False)
    shape = [f"{a}.shape[{d}]" if d not in axes else "1" for d in range(a_type.ndim)
             if d not in axes or keepdims]
    return lines + c.assign(f"{out}.reshape({tuple_source(shape)})"
                            f".astype(np.{np.dtype(result).name})")
