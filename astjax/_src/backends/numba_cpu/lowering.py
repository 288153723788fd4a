"""Lowerings of the ops that are not loops: products, shape ops, creation, indexing.

Each returns the source lines assigning ``target``. Results keep JAX's dtype
(Numba's ``np.argmax`` gives int64, ``np.arange`` float64 ...), 0-d results
are scalars, and anything not listed raises ``Unsupported``.
"""
import numpy as np

from ...ir import anno
from ...ir.types import ArrayType, SequenceType, Static, as_array_type
from .emitter import Unsupported
from .fusion import Loop, tuple_source

_INDENT = "    "
_LOWERINGS = {}


def lowering(*names):
    def register(fn):
        for name in names:
            _LOWERINGS[name] = fn
        return fn
    return register


def lower(emitter, op, node, target, out_type, where):
    fn = _LOWERINGS.get(op.name)
    if fn is None:
        raise Unsupported(f"jnp.{op.name}")
    return fn(Call(emitter, node, target, out_type, where))


class Call:
    """One op call being lowered: its operands as source, types, static params."""

    def __init__(self, emitter, node, target, out_type, where):
        self.emitter = emitter
        self.node = node
        self.target = target
        self.out = out_type
        self.where = where
        self.operands = anno.get(node, "operand_nodes")
        self.op = anno.get(node, "op")

    def text(self, name):
        value = self.operands.get(name)
        if isinstance(value, tuple):
            return tuple_source(self.emitter.atom(v) for v in value)
        return self.emitter.atom(value)

    def type(self, name):
        value = self.operands[name]
        if isinstance(value, tuple):
            return SequenceType(tuple(anno.get(v, "type") for v in value))
        return anno.get(value, "type")

    def param(self, name, default=None):
        return self.emitter.static_param(self.node, name, default)

    def param_text(self, name):
        """Source of a param that may be computed at run time (a shape)."""
        params = anno.get(self.node, "param_nodes")
        value = params.get(name)
        if value is None:
            return None
        t = anno.get(value, "type")
        if isinstance(t, Static):
            return self.emitter.literal(t.value)
        return self.emitter.atom(value)

    def dtype(self):
        return f"np.{np.dtype(self.out.dtype).name}"

    def assign(self, text):
        return [f"{self.target} = {text}"]


def _ndim(t):
    return as_array_type(t).ndim


@lowering("dot", "matmul")
def _dot(c):
    a, b = c.type("a"), c.type("b")
    for t in (a, b):
        t = as_array_type(t)
        if t.ndim not in (1, 2) or t.dtype.kind not in "fc":
            raise Unsupported(f"{c.op.name} of {t}")
    if as_array_type(a).dtype != as_array_type(b).dtype:
        raise Unsupported(f"{c.op.name} of mixed dtypes")
    return c.assign(f"np.dot({c.text('a')}, {c.text('b')})")


@lowering("transpose", "matrix_transpose")
def _transpose(c):
    a = c.text("a") if "a" in c.operands else c.text("x")
    rank = _ndim(c.type("a") if "a" in c.operands else c.type("x"))
    axes = c.param("axes") if c.op.name == "transpose" else None
    if axes is None and c.op.name == "matrix_transpose":
        axes = tuple(range(rank - 2)) + (rank - 1, rank - 2)
    if rank <= 1:
        return c.assign(a)
    if axes is None or tuple(axes) == tuple(reversed(range(rank))):
        readers = c.emitter.consumers.get(c.target, [None])
        if rank == 2 and all(r in ("dot", "matmul") for r in readers):
            return c.assign(f"{a}.T")  # BLAS reads the transposed layout, no copy
        return c.assign(f"np.ascontiguousarray({a}.T)")
    return c.assign(f"np.ascontiguousarray(np.transpose({a}, {tuple_source(map(str, axes))}))")


def _reshaped(c, a, a_type, shape_text):
    if c.out.ndim == 0:
        return c.assign(a if a_type.ndim == 0 else f"{a}.ravel()[0]")
    if a_type.ndim == 0:
        return c.assign(f"np.full({shape_text}, {a})")
    return c.assign(f"np.ascontiguousarray({a}).reshape({shape_text})")


@lowering("reshape")
def _reshape(c):
    if c.param("more", ()) or c.param("order", "C") not in ("C", None):
        raise Unsupported("reshape(order=...)")
    shape = c.param_text("shape")
    return _reshaped(c, c.text("a"), as_array_type(c.type("a")), shape)


@lowering("ravel")
def _ravel(c):
    return _reshaped(c, c.text("a"), as_array_type(c.type("a")), "(-1,)")


def _shape_from_type(c, a, a_type, out_ones, keep):
    """Shape source for the output: ``keep[d]`` is the input dim feeding output dim d."""
    parts = [("1" if keep[d] is None else f"{a}.shape[{keep[d]}]") for d in range(len(out_ones))]
    return tuple_source(parts) if parts else "()"


@lowering("expand_dims")
def _expand_dims(c):
    a, a_type = c.text("a"), as_array_type(c.type("a"))
    axis = c.param("axis")
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    rank = c.out.ndim
    new = {x % rank for x in axes}
    it = iter(range(a_type.ndim))
    keep = [None if d in new else next(it) for d in range(rank)]
    return _reshaped(c, a, a_type, _shape_from_type(c, a, a_type, c.out.ones, keep))


@lowering("squeeze")
def _squeeze(c):
    a, a_type = c.text("a"), as_array_type(c.type("a"))
    axis = c.param("axis")
    if axis is None:
        raise Unsupported("squeeze without axis")
    axes = {x % a_type.ndim for x in (axis if isinstance(axis, (tuple, list)) else (axis,))}
    keep = [d for d in range(a_type.ndim) if d not in axes]
    return _reshaped(c, a, a_type, _shape_from_type(c, a, a_type, c.out.ones, keep))


@lowering("broadcast_to")
def _broadcast_to(c):
    a, a_type = c.text("a"), as_array_type(c.type("a"))
    shape = c.param_text("shape")
    if c.out.ndim == 0:
        return c.assign(a)
    if a_type.ndim == 0:
        return c.assign(f"np.full({shape}, {a})")
    if a_type.ndim != c.out.ndim:  # bcast_to compares shapes: only of one rank
        return c.assign(f"np.broadcast_to({a}, {shape}).copy()")
    return c.assign(f"_rt.bcast_to({a}, {shape})")


@lowering("unbroadcast")
def _unbroadcast(c):
    """Sum a cotangent down to the shape of the value it belongs to."""
    g = c.operands["g"]
    g_type, like_type = as_array_type(c.type("g")), as_array_type(c.type("like"))
    g_text, like_text = c.text("g"), c.text("like")
    if like_type.ndim == 0:
        if g_type.ndim == 0:
            return c.assign(g_text)
        loop = Loop(c.emitter, g_type.ndim, c.where)
        value = loop.operand(g)
        lines, sizes, texts = loop.header()
        idx = loop.indices()
        value = loop.substitute(value, texts, idx)
        acc = c.emitter.names.fresh("acc")
        lines.append(f"{acc} = {_zero(c.out.dtype)}")
        lines += loop.nest(sizes, idx, [f"{acc} = {acc} + {value}"])
        return lines + [f"{c.target} = {acc}"]
    if g_type.ndim == like_type.ndim and g_type.ones == like_type.ones:
        return [f"if {g_text}.shape != {like_text}.shape:",  # broadcast at run time
                _INDENT + f"raise _Broadcast({c.where + ': cotangent shape differs'!r})",
                f"{c.target} = {g_text}"]
    # sum over leading dims and dims that are 1 in ``like``: out[j] += g[i]
    lead = g_type.ndim - like_type.ndim
    names = c.emitter.names
    sizes = [names.fresh("n") for _ in range(g_type.ndim)]
    idx = [names.fresh("i") for _ in range(g_type.ndim)]
    keep = [names.fresh("s") for _ in range(like_type.ndim)]
    out = names.fresh("ub")
    body = []
    for d in range(g_type.ndim):
        body.append(f"{sizes[d]} = {g_text}.shape[{d}]")
    for k in range(like_type.ndim):
        body.append(f"{keep[k]} = 0 if {like_text}.shape[{k}] == 1 else 1")
    body.append(f"{out} = np.zeros({like_text}.shape, np.{np.dtype(c.out.dtype).name})")
    for d in range(g_type.ndim):
        body.append(_INDENT * d + f"for {idx[d]} in range({sizes[d]}):")
    at = ", ".join(f"{idx[lead + k]} * {keep[k]}" for k in range(like_type.ndim))
    body.append(_INDENT * g_type.ndim + f"{out}[{at}] += {g_text}[{', '.join(idx)}]")
    body.append(f"{c.target} = {out}")
    return body


def _zero(dtype):
    return f"np.{np.dtype(dtype).name}(0)"


@lowering("zeros", "ones", "empty")
def _zeros(c):
    fill = {"zeros": 0, "ones": 1, "empty": 0}[c.op.name]
    if c.out.ndim == 0:
        return c.assign(f"{c.dtype()}({fill})")
    fn = "empty" if c.op.name == "empty" else c.op.name
    return c.assign(f"np.{fn}({c.param_text('shape')}, {c.dtype()})")


@lowering("full")
def _full(c):
    fill = Loop(c.emitter, 0, c.where).operand(c.operands["fill_value"], c.out.dtype)
    if c.out.ndim == 0:
        return c.assign(fill)
    if _ndim(c.type("fill_value")):
        raise Unsupported("full with an array fill value")
    return c.assign(f"np.full({c.param_text('shape')}, {fill})")


@lowering("zeros_like", "ones_like", "empty_like", "full_like")
def _zeros_like(c):
    if c.param("shape") is not None:
        raise Unsupported(f"{c.op.name}(shape=...)")
    a_type = as_array_type(c.type("a"))
    if c.op.name == "full_like":
        if _ndim(c.type("fill_value")):
            raise Unsupported("full_like with an array fill value")
        fill = Loop(c.emitter, 0, c.where).operand(c.operands["fill_value"], c.out.dtype)
    else:
        fill = f"{c.dtype()}({1 if c.op.name == 'ones_like' else 0})"
    if a_type.ndim == 0:
        return c.assign(fill)
    return c.assign(f"np.full({c.text('a')}.shape, {fill})")


@lowering("arange")
def _arange(c):
    args = [c.param_text(n) for n in ("start", "stop", "step")]
    args = [a for a in args if a is not None and a != "None"]
    return c.assign(f"np.arange({', '.join(args)}).astype({c.dtype()})")


@lowering("getitem")
def _getitem(c):
    index = anno.get(c.node, "param_nodes").get("index")
    if index is None:
        raise Unsupported("getitem")
    for sub in _index_parts(index):
        t = anno.get(sub, "type")
        if isinstance(t, ArrayType) and t.ndim > 0:
            raise Unsupported("indexing with an array")
    return c.assign(f"{c.text('x')}[{c.emitter.index(index)}]")


def _index_parts(index):
    import gast
    return index.elts if isinstance(index, gast.Tuple) else [index]


@lowering("at_set", "at_add", "at_subtract", "at_multiply", "at_divide", "at_min", "at_max")
def _at(c):
    index = anno.get(c.node, "param_nodes").get("index")
    for sub in _index_parts(index):
        t = anno.get(sub, "type")
        if isinstance(t, ArrayType) and t.ndim > 0:
            raise Unsupported("x.at[array] updates")  # duplicates accumulate in JAX
    x_type = as_array_type(c.type("x"))
    if x_type.ndim == 0:
        raise Unsupported("x.at on a scalar")
    v_type = as_array_type(c.type("values"))
    x, idx = c.text("x"), c.emitter.index(index)
    values = Loop(c.emitter, 0, c.where).operand(c.operands["values"], x_type.dtype) \
        if v_type.ndim == 0 else c.text("values")
    if v_type.ndim and v_type.dtype != x_type.dtype:
        values = f"{values}.astype(np.{x_type.dtype.name})"
    copy = c.emitter.names.fresh(f"{c.target}_at")
    lines = [f"{copy} = {x}.copy()"]
    if c.op.name == "at_set":
        lines.append(f"{copy}[{idx}] = {values}")
    else:
        symbol = {"at_add": "+", "at_subtract": "-", "at_multiply": "*", "at_divide": "/"}.get(
            c.op.name)
        if symbol is None:
            raise Unsupported(f"x.at[].{c.op.name[3:]}")
        lines.append(f"{copy}[{idx}] = {copy}[{idx}] {symbol} {values}")
    return lines + [f"{c.target} = {copy}"]


@lowering("concatenate", "stack")
def _join(c):
    arrays = c.operands["arrays"]
    if not isinstance(arrays, tuple) or any(_ndim(anno.get(v, "type")) == 0 for v in arrays):
        raise Unsupported(f"{c.op.name} of these operands")
    dtype = np.dtype(c.out.dtype)
    parts = [c.emitter.atom(v) if as_array_type(anno.get(v, "type")).dtype == dtype
             else f"{c.emitter.atom(v)}.astype(np.{dtype.name})" for v in arrays]
    axis = c.param("axis", 0)
    return c.assign(f"np.{c.op.name}({tuple_source(parts)}, axis={axis})")


@lowering("argmax", "argmin")
def _argmax(c):
    if c.param("axis") is not None or c.param("keepdims"):
        raise Unsupported(f"{c.op.name}(axis=...)")
    return c.assign(f"{c.dtype()}(np.{c.op.name}({c.text('a')}))")


@lowering("cumsum", "cumprod")
def _cumsum(c):
    a_type = as_array_type(c.type("a"))
    if a_type.ndim != 1:
        raise Unsupported(f"{c.op.name} of {a_type}")
    a = c.text("a")
    if a_type.dtype != c.out.dtype:
        a = f"{a}.astype({c.dtype()})"
    return c.assign(f"np.{c.op.name}({a}).astype({c.dtype()})")


@lowering("asarray", "array")
def _asarray(c):
    """Of an array: a cast (or the array itself); lists and tuples are not lowered."""
    name = "a" if "a" in c.operands else "object"
    t = c.type(name)
    if c.out.ndim == 0 and (isinstance(t, ArrayType) or (
            isinstance(t, Static) and isinstance(t.value, (bool, int, float, np.generic)))):
        return c.assign(Loop(c.emitter, 0, c.where).operand(c.operands[name], c.out.dtype))
    if not isinstance(t, ArrayType) or c.param("ndmin", 0):
        raise Unsupported(f"jnp.{c.op.name} of {t}")
    x = c.text(name)
    if t.ndim == 0:
        return c.assign(Loop(c.emitter, 0, c.where).operand(c.operands[name], c.out.dtype))
    if t.dtype == c.out.dtype:
        return c.assign(f"{x}.copy()" if c.op.name == "array" else x)
    return c.assign(f"{x}.astype({c.dtype()})")


@lowering("frexp")
def _frexp(c):
    """Per element through ``mathlib.frexp`` (bit operations: the loop vectorizes)."""
    x_type = as_array_type(c.type("x"))
    m_type, e_type = c.out.elts
    if x_type.dtype.kind != "f":
        raise Unsupported(f"frexp of {x_type}")
    loop = Loop(c.emitter, x_type.ndim, c.where)
    value = loop.operand(c.operands["x"])
    names = c.emitter.names
    m, e, pair = names.fresh("mant"), names.fresh("expo"), names.fresh("fr")
    if x_type.ndim == 0:
        return [f"{pair} = _ml.frexp({value})",
                f"{c.target} = (np.{m_type.dtype.name}({pair}[0]), "
                f"np.{e_type.dtype.name}({pair}[1]))"]
    lines, sizes, texts = loop.header()
    idx = loop.indices()
    value = loop.substitute(value, texts, idx)
    at = ", ".join(idx)
    lines.append(f"{m} = np.empty({tuple_source(sizes)}, np.{m_type.dtype.name})")
    lines.append(f"{e} = np.empty({tuple_source(sizes)}, np.{e_type.dtype.name})")
    lines += loop.nest(sizes, idx, [f"{pair} = _ml.frexp({value})",
                                    f"{m}[{at}] = {pair}[0]", f"{e}[{at}] = {pair}[1]"])
    return lines + [f"{c.target} = ({m}, {e})"]
