"""Lowerings of the ops that are not loops: products, shape ops, creation, indexing.

Each returns the source lines assigning ``target``. Results keep JAX's dtype
(Numba's ``np.argmax`` gives int64, ``np.arange`` float64 ...), 0-d results
are scalars, and anything not listed raises ``Unsupported``.
"""
import numpy as np

from ...ir import anno
from ...ir.types import (UNKNOWN, ArrayType, IndexType, ListType, SequenceType, Static,
                         as_array_type)
from ...ops.indexing import update_dtype
from .emitter import Unsupported
from .fusion import Loop, tuple_source
from .scalar import cast, integer_range

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


@lowering("dot")
def _dot(c):
    a, b = c.type("a"), c.type("b")
    a_type, b_type = as_array_type(a), as_array_type(b)
    if a_type.ndim == 0 or b_type.ndim == 0:
        raise Unsupported(f"{c.op.name} of a scalar")
    if a_type.ndim > 2 or b_type.ndim > 2 or a_type.dtype != b_type.dtype \
            or a_type.dtype.kind not in "fc" or c.out.dtype != a_type.dtype:
        # Numba's np.dot: 1-D/2-D and one float dtype; else a contraction (lower_products)
        return lower_products.nd_dot(c)
    a_text, b_text, suffix = c.text("a"), c.text("b"), ""
    readers = c.emitter.consumers.get(c.target, [])
    if a_type.ndim == b_type.ndim == 2 and c.target in c.emitter.assigned_once \
            and len(readers) == 1 and readers[0] in ("transpose", "matrix_transpose"):
        # only transposed (a vmapped matrix-vector product): the product of the
        # transposes, whose .T the transpose reads without a copy
        a_text, b_text, suffix = f"{b_text}.T", f"{a_text}.T", ".T"
    check = []
    if c.emitter.parallel and a_type.ndim == 2:
        # np.dot's size check, here: raised inside the threaded runtime helper, the error
        # would not name the user's line
        message = f"{c.where}: incompatible array sizes for np.dot(a, b)"
        check = [f"if {a_text}.shape[1] != {b_text}.shape[0]:",
                 _INDENT + f"raise ValueError({message!r})"]
    return check + dot_lines(c, c.target, a_text, b_text, a_type.ndim == 2, suffix)


def dot_lines(c, target, a, b, a_is_matrix, suffix=""):
    """``target = np.dot(a, b)`` (with ``suffix``); with ``parallel=True``, a matrix
    ``a``'s rows split over Numba's threads (the count is fixed when the source is
    generated, part of its cache key), after the caller has checked the sizes."""
    if not (c.emitter.parallel and a_is_matrix):
        return [f"{target} = _rt.dot({a}, {b}){suffix}"]
    import numba
    return [f"{target} = _rt.dot_on_threads({a}, {b}, {numba.config.NUMBA_NUM_THREADS}){suffix}"]


@lowering("transpose", "matrix_transpose")
def _transpose(c):
    a = c.text("a") if "a" in c.operands else c.text("x")
    rank = _ndim(c.type("a") if "a" in c.operands else c.type("x"))
    axes = c.param("axes") if c.op.name == "transpose" else None
    if c.op.name == "transpose" and c.param("more", ()):  # x.transpose(1, 0, 2)
        axes = (axes,) + tuple(c.param("more"))
    if axes is None and c.op.name == "matrix_transpose":
        axes = tuple(range(rank - 2)) + (rank - 1, rank - 2)
    if rank <= 1:
        return c.assign(a)
    if axes is None or tuple(axes) == tuple(reversed(range(rank))):
        readers = c.emitter.consumers.get(c.target, [None])
        if rank == 2 and all(r in ("dot", "matmul") for r in readers):
            return c.assign(f"{a}.T")  # BLAS reads the transposed layout, no copy
        return c.assign(f"_rt.ascontiguousarray({a}.T)")
    return c.assign(f"_rt.ascontiguousarray(_rt.transpose({a}, {tuple_source(map(str, axes))}))")


@lowering("swapaxes")
def _swapaxes(c):
    a, rank = c.text("a"), _ndim(c.type("a"))
    i, j = c.param("axis1") % max(rank, 1), c.param("axis2") % max(rank, 1)
    order = list(range(rank))
    order[i], order[j] = order[j], order[i]
    return _permuted(c, a, order)


def _permuted(c, a, order):
    """``a`` with its axes in ``order``, C-ordered (later reshapes and BLAS calls want it)."""
    if order == list(range(len(order))):
        return c.assign(a)
    return c.assign(f"_rt.ascontiguousarray(_rt.transpose({a}, {tuple_source(map(str, order))}))")


@lowering("trace")
def _trace(c):
    a, rank = c.text("a"), _ndim(c.type("a"))
    i, j = c.param("axis1", 0) % rank, c.param("axis2", 1) % rank
    offset = int(c.param("offset", 0))
    if rank == 2:
        m = a if (i, j) == (0, 1) else f"{a}.T"
        return c.assign(f"{c.dtype()}(np.sum(np.diag({m}, {offset}).astype({c.dtype()})))")
    # a stack of matrices: axis1, axis2 moved last, one trace per matrix
    kept = [d for d in range(rank) if d not in (i, j)]
    names = c.emitter.names
    moved, out, r = names.fresh("moved"), names.fresh("trace"), names.fresh("r")
    size = " * ".join(f"{a}.shape[{d}]" for d in kept)
    order = tuple_source(map(str, kept + [i, j]))
    return [f"{moved} = _rt.ascontiguousarray(_rt.transpose({a}, {order})).reshape(("
            f"{size}, {a}.shape[{i}], {a}.shape[{j}]))",
            f"{out} = _rt.empty(({size},), {c.dtype()})",
            f"for {r} in range({out}.shape[0]):",
            _INDENT + f"{out}[{r}] = np.sum(np.diag({moved}[{r}], {offset}).astype({c.dtype()}))"
            ] + c.assign(f"{out}.reshape({tuple_source([f'{a}.shape[{d}]' for d in kept])})")


@lowering("moveaxis")
def _moveaxis(c):
    a, rank = c.text("a"), _ndim(c.type("a"))
    source, destination = c.param("source"), c.param("destination")
    source = [x % rank for x in (source if isinstance(source, (tuple, list)) else (source,))]
    destination = [x % rank for x in (destination if isinstance(destination, (tuple, list))
                                      else (destination,))]
    order = [d for d in range(rank) if d not in source]
    for dst, src in sorted(zip(destination, source)):
        order.insert(dst, src)
    return _permuted(c, a, order)


@lowering("flip")
def _flip(c):
    """A reversed slice per flipped axis, copied: later reshapes and BLAS calls want C order."""
    a, rank = c.text("m"), _ndim(c.type("m"))
    axis = c.param("axis")
    axes = range(rank) if axis is None else \
        {x % rank for x in (axis if isinstance(axis, (tuple, list)) else (axis,))}
    if rank == 0 or not axes:
        return c.assign(a)
    index = ", ".join("::-1" if d in axes else ":" for d in range(max(axes) + 1))
    return c.assign(f"_rt.ascontiguousarray({a}[{index}])")


@lowering("atleast_1d", "atleast_2d", "atleast_3d")
def _atleast(c):
    """A reshape adding the size-1 dims where NumPy puts them; several arguments give a
    tuple (lists are tuples here)."""
    n = int(c.op.name[len("atleast_")])
    arys = c.operands["arys"]
    nodes = arys if isinstance(arys, tuple) else (arys,)
    outs = c.out.elts if isinstance(c.out, SequenceType) else (c.out,)
    results = []
    for node, out in zip(nodes, outs):
        a, rank = c.emitter.atom(node), _ndim(anno.get(node, "type"))
        sizes = [f"{a}.shape[{d}]" for d in range(rank)]
        if rank >= n:
            results.append(a)
        elif rank == 0:  # typed: a Python number would fill a float64 array
            value = Loop(c.emitter, 0, c.where).operand(node, out.dtype)
            results.append(f"_rt.full({tuple_source(['1'] * n)}, {value})")
        else:  # atleast_3d puts a 2-d (m, n) at (m, n, 1) and a 1-d (n,) at (1, n, 1)
            shape = ["1"] * (n - rank) + sizes if n < 3 else \
                sizes + ["1"] if rank == 2 else ["1"] + sizes + ["1"]
            results.append(f"_rt.ascontiguousarray({a}).reshape({tuple_source(shape)})")
    if isinstance(c.out, SequenceType):
        return c.assign(tuple_source(results))
    return c.assign(results[0])


def _reshaped(c, a, a_type, shape_text):
    if c.out.ndim == 0:
        return c.assign(a if a_type.ndim == 0 else f"{a}.ravel()[0]")
    if a_type.ndim == 0:  # one element: every dim of the result is 1 (shape_text may hold -1)
        return c.assign(f"_rt.full({tuple_source(['1'] * c.out.ndim)}, {a})")
    return c.assign(f"_rt.ascontiguousarray({a}).reshape({shape_text})")


@lowering("reshape")
def _reshape(c):
    params = anno.get(c.node, "param_nodes")
    more = params.get("more") or ()
    more = more if isinstance(more, tuple) else (more,)
    if more and _static_value(more[-1]) in ("C", "F", "A"):  # x.reshape(2, 3, "C")
        order, more = _static_value(more[-1]), more[:-1]
    else:
        order = c.param("order", "C")
    if order not in ("C", None):
        raise Unsupported("reshape(order=...)")
    shape = params["shape"]
    if more:  # x.reshape(2, 3): the entries as arguments
        shape = tuple_source(_dim_text(c, e) for e in (shape, *more))
    elif isinstance(anno.get(shape, "type"), Static):
        shape = c.emitter.literal(anno.get(shape, "type").value)
    elif isinstance(anno.get(shape, "type"), ArrayType):  # x.reshape(n)
        shape = f"({_dim_text(c, shape)},)"
    else:  # entries of mixed int types (x.shape[0] * 2 is int32): Numba wants one int type
        t = c.emitter.atom(shape)
        shape = tuple_source(f"np.intp({t}[{d}])" for d in range(c.out.ndim))
    return _reshaped(c, c.text("a"), as_array_type(c.type("a")), shape)


def _dim_text(c, node):
    t = anno.get(node, "type")
    if isinstance(t, Static):
        return c.emitter.literal(t.value)
    return f"np.intp({c.emitter.atom(node)})"  # int() of an int32 stays int32 in Numba


def _static_value(node):
    t = anno.get(node, "type")
    return t.value if isinstance(t, Static) else None


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
        return c.assign(f"_rt.full({shape}, {a})")
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
                _INDENT + f"raise {c.emitter.broadcast_error}"
                          f"({c.where + ': cotangent shape differs'!r})",
                f"{c.target} = {g_text}"]
    # sum over leading dims and dims that are 1 in ``like``: out[j] += g[i]
    lead = g_type.ndim - like_type.ndim
    names = c.emitter.names
    sizes = [names.fresh("n") for _ in range(g_type.ndim)]
    idx = [names.fresh("i") for _ in range(g_type.ndim)]
    keep = [names.fresh("s") for _ in range(like_type.ndim)]
    out = names.fresh("ub")
    body = []
    # a dim of g known to be 1 where like's is not (einsum's adjoint, for a label only one
    # operand has, hands such a g on to a broadcast_to): g broadcasts along it
    spread = [d >= lead and g_type.ones[d] and not like_type.ones[d - lead]
              for d in range(g_type.ndim)]
    for d in range(g_type.ndim):
        dim = f"{like_text}.shape[{d - lead}]" if spread[d] else f"{g_text}.shape[{d}]"
        body.append(f"{sizes[d]} = {dim}")
    for k in range(like_type.ndim):
        body.append(f"{keep[k]} = 0 if {like_text}.shape[{k}] == 1 else 1")
    body.append(f"{out} = _rt.zeros({like_text}.shape, np.{np.dtype(c.out.dtype).name})")
    for d in range(g_type.ndim):
        body.append(_INDENT * d + f"for {idx[d]} in range({sizes[d]}):")
    at = ", ".join(f"{idx[lead + k]} * {keep[k]}" for k in range(like_type.ndim))
    read = ", ".join("0" if spread[d] else idx[d] for d in range(g_type.ndim))
    body.append(_INDENT * g_type.ndim + f"{out}[{at}] += {g_text}[{read}]")
    body.append(f"{c.target} = {out}")
    return body


def _zero(dtype):
    return f"np.{np.dtype(dtype).name}(0)"


@lowering("zeros", "ones", "empty")
def _zeros(c):
    fill = {"zeros": 0, "ones": 1, "empty": 0}[c.op.name]
    if c.out.ndim == 0:
        return c.assign(f"{c.dtype()}({fill})")
    if fill:
        return c.assign(f"_rt.full({c.param_text('shape')}, {c.dtype()}({fill}))")
    return c.assign(f"_rt.zeros({c.param_text('shape')}, {c.dtype()})")  # JAX's empty: zeros


@lowering("full")
def _full(c):
    fill = Loop(c.emitter, 0, c.where).operand(c.operands["fill_value"], c.out.dtype)
    if c.out.ndim == 0:
        return c.assign(fill)
    if _ndim(c.type("fill_value")):
        raise Unsupported("full with an array fill value")
    return c.assign(f"_rt.full({c.param_text('shape')}, {fill})")


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
    return c.assign(f"_rt.full({c.text('a')}.shape, {fill})")


@lowering("eye", "identity")
def _eye(c):
    """Zeros with ones on diagonal k (einsum's adjoint for a repeated index uses it)."""
    n = c.param_text("N") if c.op.name == "eye" else c.param_text("n")
    m = c.param_text("M") if c.op.name == "eye" else None
    m = n if m in (None, "None") else m
    k = (c.param_text("k") if c.op.name == "eye" else None) or "0"
    names = c.emitter.names
    out, i = names.fresh("eye"), names.fresh("i")
    one = "True" if c.out.dtype.kind == "b" else f"{c.dtype()}(1)"
    return [f"{out} = _rt.zeros(({n}, {m}), {c.dtype()})",
            f"for {i} in range(max(0, -({k})), min({n}, {m} - ({k}))):",
            _INDENT + f"{out}[{i}, {i} + {k}] = {one}",
            f"{c.target} = {out}"]


@lowering("same_batch_size")
def _same_batch_size(c):
    """vmap's size check (batching/sizes.py): a raise the python rerun then locates."""
    sizes = c.operands["sizes"]
    sizes = [c.emitter.atom(v) for v in sizes] if isinstance(sizes, tuple) else \
        [f"{c.emitter.atom(sizes)}[{k}]" for k in range(len(c.type("sizes").elts))]
    lines = [line for size in sizes[1:] for line in (
        f"if {size} != {sizes[0]}:", _INDENT + f"raise ValueError({c.param('message')!r})")]
    return lines + [f"{c.target} = {sizes[0]}"]


@lowering("arange")
def _arange(c):
    args = [c.param_text(n) for n in ("start", "stop", "step")]
    args = [a for a in args if a is not None and a != "None"]
    return c.assign(f"np.arange({', '.join(args)}).astype({c.dtype()})")


@lowering("linspace")
def _linspace(c):
    start, stop = c.type("start"), c.type("stop")
    if any(as_array_type(t).ndim or as_array_type(t).dtype.kind == "c" for t in (start, stop)):
        raise Unsupported("linspace of arrays")
    num, endpoint = c.param("num", 50), c.param("endpoint", True)
    div = num - 1 if endpoint else num
    # NumPy's formula, in float64, then cast: start + i * step, the last one exactly stop
    lo, hi = f"np.float64({c.text('start')})", f"np.float64({c.text('stop')})"
    text = f"np.arange({num}) * (({hi} - {lo}) / {max(div, 1)}) + {lo}"
    lines = c.assign(f"({text}).astype({c.dtype()})")
    if endpoint and num > 1:
        lines.append(f"{c.target}[{num - 1}] = {hi}")
    return lines


@lowering("outer")
def _outer(c):
    types = [as_array_type(c.type(n)) for n in ("a", "b")]
    if any(t.ndim == 0 for t in types):
        raise Unsupported("outer of a scalar")
    a, b = _flattened(c, "a", "b")
    return c.assign(f"np.outer({a}, {b})")


def _flattened(c, *names):
    """The operands ``names`` flattened, C-ordered, in the result's dtype."""
    return [f"_rt.ascontiguousarray({c.text(n)}).ravel().astype({c.dtype()})" for n in names]


@lowering("vdot")
def _vdot(c):
    """The dot of the flattened operands, a's conjugated (np.vdot: BLAS for floats)."""
    if any(as_array_type(c.type(n)).ndim == 0 for n in ("a", "b")):
        raise Unsupported("vdot of a scalar")
    a, b = _flattened(c, "a", "b")
    if c.out.dtype.kind in "fc":
        return c.assign(f"{c.dtype()}(np.vdot({a}, {b}))")
    return c.assign(f"{c.dtype()}(np.sum({a} * {b}))")


@lowering("diag")
def _diag(c):
    if as_array_type(c.type("v")).ndim not in (1, 2):
        raise Unsupported("diag of a scalar")
    return c.assign(f"np.diag({c.text('v')}, {int(c.param('k', 0))})")


@lowering("tri")
def _tri(c):
    n, m, k = (c.param_text(name) for name in ("N", "M", "k"))
    n = f"np.intp({n})"
    m = n if m in (None, "None") else f"np.intp({m})"
    k = "0" if k in (None, "None") else f"np.intp({k})"
    return c.assign(f"(np.arange({n}).reshape(({n}, 1)) + {k} >= np.arange({m}))"
                    f".astype({c.dtype()})")


@lowering("getitem")
def _getitem(c):
    index = anno.get(c.node, "param_nodes").get("index")
    if index is None:
        raise Unsupported("getitem")
    if _ndim(c.type("x")) == 0 and not isinstance(c.out, SequenceType):
        # of a 0-d value (a scalar here): only ... and None index it, adding dims of 1
        if c.out.ndim == 0:
            return c.assign(c.text("x"))
        return c.assign(f"_rt.full({tuple_source(['1'] * c.out.ndim)}, {c.text('x')})")
    parts = lower_gather.items(c.emitter, index)
    if lower_gather.advanced(parts):  # an index array: a gather loop nest
        return lower_gather.gather(c, c.text("x"), as_array_type(c.type("x")), parts)
    checks = lower_gather.bounds_checks(c, c.text("x"), as_array_type(c.type("x")).ndim, parts)
    if isinstance(anno.get(index, "type"), IndexType):  # s_[...] passed on: a tuple
        return checks + c.assign(f"{c.text('x')}[{lower_gather.basic_text(parts)}]")
    return checks + c.assign(f"{c.text('x')}[{c.emitter.index(index)}]")


@lowering("at_set", "at_add", "at_subtract", "at_multiply", "at_divide", "at_min", "at_max")
def _at(c):
    index = anno.get(c.node, "param_nodes").get("index")
    x_type = as_array_type(c.type("x"))
    if update_dtype(x_type, c.type("values")) != x_type.dtype:  # (float values, int x)
        raise Unsupported("x.at[] update computed in a wider dtype than x's")
    parts = lower_gather.items(c.emitter, index)
    if x_type.ndim == 0:
        return _at_of_a_scalar(c, x_type, parts)
    if lower_gather.advanced(parts):  # repeated positions accumulate: element by element
        return lower_gather.scatter(c, c.text("x"), x_type, parts)
    v_type = as_array_type(c.type("values"))
    x, idx = c.text("x"), c.emitter.index(index)
    if isinstance(anno.get(index, "type"), IndexType):  # s_[...] passed on: a tuple
        idx = lower_gather.basic_text(parts)
    work = c.out.dtype  # x's, or for divide of an integer x the float it divides in
    values = Loop(c.emitter, 0, c.where).operand(c.operands["values"], work) \
        if v_type.ndim == 0 else c.text("values")
    if v_type.ndim and v_type.dtype != work:
        values = f"{values}.astype(np.{work.name})"
    copy = c.emitter.names.fresh(f"{c.target}_at")
    start = f"{x}.copy()" if work == x_type.dtype else f"{x}.astype(np.{work.name})"
    lines = lower_gather.bounds_checks(c, x, x_type.ndim, parts) + [f"{copy} = {start}"]
    if c.op.name == "at_set":
        lines.append(f"{copy}[{idx}] = {values}")
    else:
        symbol = {"at_add": "+", "at_subtract": "-", "at_multiply": "*", "at_divide": "/",
                  "at_min": "np.minimum", "at_max": "np.maximum"}.get(c.op.name)
        if symbol is None:
            raise Unsupported(f"x.at[].{c.op.name[3:]}")
        if symbol.startswith("np."):  # NumPy's minimum/maximum: NaN wins, as in JAX
            lines.append(f"{copy}[{idx}] = {symbol}({copy}[{idx}], {values})")
        else:
            lines.append(f"{copy}[{idx}] = {copy}[{idx}] {symbol} {values}")
    return lines + [f"{c.target} = {copy}"]


def _at_of_a_scalar(c, x_type, parts):
    """``x.at[()]`` / ``x.at[...]`` of a 0-d ``x`` (a getitem's cotangent): the one element
    combined with the one value."""
    if not all(p.kind in ("ellipsis", "new") for p in parts):
        raise Unsupported("x.at on a scalar with an index")
    v_type = as_array_type(c.type("values"))
    if not all(v_type.ones):  # (more than one value: NumPy's error, on the python backend)
        raise Unsupported("x.at on a scalar with values of run-time size")
    value = c.text("values") if v_type.ndim == 0 else f"{c.text('values')}.ravel()[0]"
    value = f"np.{x_type.dtype.name}({value})"
    x = c.text("x")
    combined = {"at_set": value, "at_add": f"{x} + {value}", "at_subtract": f"{x} - {value}",
                "at_multiply": f"{x} * {value}", "at_divide": f"{x} / {value}",
                "at_min": f"_rt.minimum({x}, {value})",
                "at_max": f"_rt.maximum({x}, {value})"}[c.op.name]
    return c.assign(f"np.{x_type.dtype.name}({combined})")


@lowering("concatenate", "stack")
def _join(c):
    arrays = c.operands["arrays"]
    if c.op.name == "stack" and isinstance(c.type("arrays"), ListType):
        return _stack_list(c, c.text("arrays"), c.type("arrays"), c.param("axis", 0))
    if isinstance(c.type("arrays"), ListType):
        return _concatenate_list(c, c.text("arrays"), c.type("arrays"), c.param("axis", 0))
    items = _items(c, arrays)
    if items is None:
        raise Unsupported(f"{c.op.name} of {anno.get(arrays, 'type')}")
    if c.op.name == "stack" and all(_ndim(t) == 0 for _, t in items):
        return _from_scalars(c, items, (len(items),))  # axis can only be 0 (or -1)
    if any(_ndim(t) == 0 for _, t in items):
        raise Unsupported(f"{c.op.name} of 0-d arrays")
    return _joined(c, items, c.op.name, c.param("axis", 0))


@lowering("roll")
def _roll(c):
    """Two slices joined per rolled axis; without an axis, of the flattened array."""
    a, a_type, axis = c.text("a"), as_array_type(c.type("a")), c.param("axis")
    node = c.operands.get("shift", anno.get(c.node, "param_nodes").get("shift"))
    shift = UNKNOWN if node is None or isinstance(node, tuple) else anno.get(node, "type")
    shifts = shift.value if isinstance(shift, Static) else None
    if isinstance(shifts, (tuple, list)) and isinstance(axis, (tuple, list)) \
            and len(shifts) == len(axis):
        pairs = [(str(int(s)), d) for s, d in zip(shifts, axis)]
    elif isinstance(shift, ArrayType) and shift.ndim == 0 or isinstance(shifts, int):
        if isinstance(axis, (tuple, list)):
            raise Unsupported("roll of one shift along several axes")
        pairs = [(f"np.intp({c.emitter.atom(node)})", 0 if axis is None else axis)]
    else:
        raise Unsupported(f"roll by {shift}")
    if a_type.ndim == 0:
        return c.assign(a)
    names = c.emitter.names
    x = names.fresh("rolled")
    lines = [f"{x} = _rt.ascontiguousarray({a})" + (".ravel()" if axis is None else "")]
    for text, d in pairs:
        d %= 1 if axis is None else a_type.ndim
        n, k = names.fresh("n"), names.fresh("k")
        head = ", ".join([":"] * d)
        head = head + ", " if head else ""
        lines += [f"{n} = {x}.shape[{d}]",
                  f"{k} = {n} - {text} % {n} if {n} else 0",
                  f"{x} = np.concatenate(({x}[{head}{k}:], {x}[{head}:{k}]), axis={d})"]
    return lines + c.assign(f"{x}.reshape({a}.shape)" if axis is None else x)


def _repeated(c, a, sizes, reps, merged):
    """``a`` (of dims ``sizes``) with a dim of each ``reps[j]`` before (tile) or after
    (repeat) dim j, broadcast and then merged into it: one copy."""
    inner = [x for s in sizes for x in (("1", s) if merged == "tile" else (s, "1"))]
    target = [x for r, s in zip(reps, sizes) for x in ((str(r), s) if merged == "tile"
                                                      else (s, str(r)))]
    final = [f"{r} * {s}" for r, s in zip(reps, sizes)]
    return c.assign(f"_rt.bcast_to(_rt.ascontiguousarray({a}).reshape({tuple_source(inner)}), "
                    f"{tuple_source(target)}).reshape({tuple_source(final)})")


@lowering("tile")
def _tile(c):
    a, a_type = c.text("A"), as_array_type(c.type("A"))
    reps = c.param("reps")
    reps = tuple(int(r) for r in (reps if isinstance(reps, (tuple, list)) else (reps,)))
    n = max(a_type.ndim, len(reps))
    reps = (1,) * (n - len(reps)) + reps
    if a_type.ndim == 0:
        return c.assign(f"_rt.full({tuple_source(map(str, reps))}, {a})")
    sizes = ["1"] * (n - a_type.ndim) + [f"{a}.shape[{j}]" for j in range(a_type.ndim)]
    return _repeated(c, a, sizes, reps, "tile")


@lowering("repeat")
def _repeat(c):
    a, a_type, axis = c.text("a"), as_array_type(c.type("a")), c.param("axis")
    node = c.operands.get("repeats", anno.get(c.node, "param_nodes").get("repeats"))
    t = None if node is None or isinstance(node, tuple) else anno.get(node, "type")
    if not isinstance(t, Static) or not isinstance(t.value, (int, np.integer)) \
            or isinstance(t.value, bool) or t.value < 0 or a_type.ndim == 0:
        raise Unsupported(f"repeat by {t}")
    if axis is None:
        a, rank, axis = f"_rt.ascontiguousarray({a}).ravel()", 1, 0
    else:
        rank, axis = a_type.ndim, axis % a_type.ndim
    sizes = [f"{a}.shape[{j}]" for j in range(rank)]
    reps = [int(t.value) if j == axis else 1 for j in range(rank)]
    return _repeated(c, a, sizes, reps, "repeat")


@lowering("hstack", "vstack")
def _hvstack(c):
    items = None if isinstance(c.type("tup"), ListType) else _items(c, c.operands["tup"])
    if not items:
        raise Unsupported(f"{c.op.name} of {c.type('tup')}")
    if c.op.name == "hstack" and all(_ndim(t) == 0 for _, t in items):
        return _from_scalars(c, items, (len(items),))  # hstack([a, b]) of scalars
    # a 0-d item (a scalar here) joins as an array of one element
    ones = 1 if c.op.name == "hstack" else 2
    items = [(f"_rt.full({tuple_source(['1'] * ones)}, {text})",
              ArrayType(as_array_type(t).dtype, (True,) * ones, False))
             if _ndim(t) == 0 else (text, t) for text, t in items]
    if c.op.name == "hstack":  # of vectors: one vector; else along axis 1
        return _joined(c, items, "concatenate", 0 if _ndim(items[0][1]) == 1 else 1)
    rows = [(f"_rt.ascontiguousarray({text}).reshape((1, {text}.shape[0]))"
             if _ndim(t) == 1 else text, t) for text, t in items]
    return _joined(c, rows, "concatenate", 0)


@lowering("split", "array_split")
def _split(c):
    """Views of ``a`` between NumPy's split points along ``axis``."""
    a, a_type = c.text("a"), as_array_type(c.type("a"))
    axis, spec = c.param("axis", 0) % a_type.ndim, c.param("indices_or_sections")
    n, size, extra = (c.emitter.names.fresh(x) for x in ("n", "size", "extra"))
    lines = [f"{n} = {a}.shape[{axis}]"]
    if isinstance(spec, (tuple, list)):
        cuts = [""] + [str(int(i)) for i in spec] + [""]
    else:
        k = int(spec)
        lines.append(f"{size}, {extra} = divmod({n}, {k})")
        if c.op.name == "split":  # NumPy's "does not result in an equal division"
            lines += [f"if {extra}:", _INDENT + f"raise {c.emitter.broadcast_error}"
                      f"({c.where + ': split into unequal pieces'!r})"]
        cuts = [f"{i} * {size} + min({i}, {extra})" for i in range(k + 1)]
    pieces = [f"{a}[{', '.join([':'] * axis + [f'{lo}:{hi}'])}]"
              for lo, hi in zip(cuts, cuts[1:])]
    return lines + c.assign(tuple_source(pieces))


def _items(c, value):
    """(source, type) of each element of a sequence operand: a tuple display or a tuple
    held in a variable (a list of known length is a tuple here); None for anything else."""
    if isinstance(value, tuple):
        return [(c.emitter.atom(v), anno.get(v, "type")) for v in value]
    t = anno.get(value, "type")
    if isinstance(t, SequenceType):
        seq = c.emitter.atom(value)
        return [(f"{seq}[{k}]", e) for k, e in enumerate(t.elts)]
    return None


def _scalar_leaves(items, shape):
    """The 0-d leaves of nested sequences (source, type) in C order, their sizes appended
    to ``shape``; None if a leaf is an array or the nesting is ragged."""
    if all(isinstance(t, SequenceType) for _, t in items):
        sizes = {len(t.elts) for _, t in items}
        if len(sizes) != 1:
            return None
        shape.append(sizes.pop())
        return _scalar_leaves([(f"{text}[{k}]", e) for text, t in items
                               for k, e in enumerate(t.elts)], shape)
    if any(isinstance(t, SequenceType) or isinstance(t, Static) and not np.isscalar(t.value)
           or _ndim(t) for _, t in items):
        return None
    return items


def _constant(c, value):
    """``jnp.array`` of static numbers: the values converted here, by the op itself, and
    written as one literal tuple of the result's dtype."""
    params = {k: c.param(k, p.default) for k, p in c.op.signature.parameters.items()
              if k in ("dtype", "ndmin")}
    data = np.asarray(c.op.impl(value, **params)).astype(c.out.dtype)
    shape = tuple_source(map(str, data.shape))
    if data.size == 0:
        return c.assign(f"_rt.empty({shape}, {c.dtype()})")
    flat = tuple_source(c.emitter.literal(v) for v in data.ravel().tolist())
    reshape = f".reshape({shape})" if data.ndim > 1 else ""
    return c.assign(f"np.array({flat}, {c.dtype()}){reshape}")


def _from_scalars(c, items, shape):
    """An array of a static ``shape`` from 0-d values computed at run time: one store per
    element (Numba's np.array takes only sequences of one type)."""
    out = c.emitter.names.fresh("stacked")
    lines = [f"{out} = _rt.empty({tuple_source(map(str, shape))}, {c.dtype()})"]
    for k, (text, t) in enumerate(items):
        at = ", ".join(str(int(i)) for i in np.unravel_index(k, shape))
        lines.append(f"{out}[{at}] = {cast(text, as_array_type(t).dtype, c.out.dtype)}")
    return lines + [f"{c.target} = {out}"]


def _joined(c, items, name, axis):
    """np.stack / np.concatenate of a tuple of arrays, each cast to the result's dtype."""
    dtype = np.dtype(c.out.dtype)
    parts = [text if as_array_type(t).dtype == dtype else f"{text}.astype(np.{dtype.name})"
             for text, t in items]
    return c.assign(f"np.{name}({tuple_source(parts)}, axis={axis})")


@lowering("argmax", "argmin")
def _argmax(c):
    a, a_type = c.text("a"), as_array_type(c.type("a"))
    axis, keepdims = c.param("axis"), c.param("keepdims", False)
    if a_type.dtype.kind == "c":
        raise Unsupported(f"{c.op.name} of {a_type}")  # NumPy orders complex numbers
    if axis is None:
        value = f"{c.dtype()}(np.{c.op.name}({a}))"
        if keepdims and c.out.ndim:
            return c.assign(f"_rt.full({tuple_source(['1'] * c.out.ndim)}, {value})")
        return c.assign(value)
    rank = a_type.ndim
    axis %= rank
    names = c.emitter.names
    sizes = [names.fresh("n") for _ in range(rank)]
    idx = [names.fresh("i") for _ in range(rank)]
    best, at, k, v = (names.fresh(n) for n in ("best", "at", "k", "v"))
    out = names.fresh("arg")
    kept = [d for d in range(rank) if d != axis]
    shape = [("1" if d == axis else sizes[d]) for d in range(rank)] if keepdims \
        else [sizes[d] for d in kept]
    lines = [f"{sizes[d]} = {a}.shape[{d}]" for d in range(rank)]
    lines += [f"if {sizes[axis]} == 0:",  # the python backend raises NumPy's ValueError
              _INDENT + f"raise {c.emitter.broadcast_error}"
                        f"({c.where + ': ' + c.op.name + ' of an empty axis'!r})",
              f"{out} = _rt.empty({tuple_source(shape)}, {c.dtype()})"]
    loop = [f"for {idx[d]} in range({sizes[d]}):" for d in kept]
    lines += [_INDENT * depth + text for depth, text in enumerate(loop)]

    def element(i):
        return f"{a}[{', '.join(i if d == axis else idx[d] for d in range(rank))}]"
    better = ">" if c.op.name == "argmax" else "<"
    store = ", ".join("0" if d == axis else idx[d] for d in range(rank)) if keepdims \
        else ", ".join(idx[d] for d in kept)
    body = [f"{best} = {element('0')}",
            f"{at} = 0",
            f"for {k} in range(1, {sizes[axis]}):",
            _INDENT + f"if {best} != {best}:",
            _INDENT * 2 + "break  # the first NaN wins, as in NumPy",
            _INDENT + f"{v} = {element(k)}",
            _INDENT + f"if {v} {better} {best} or {v} != {v}:",
            _INDENT * 2 + f"{best} = {v}",
            _INDENT * 2 + f"{at} = {k}",
            f"{out}[{store}] = {at}" if c.out.ndim else f"{out} = {at}"]
    if not c.out.ndim:  # a 1-D input: the result is a scalar, no array to store into
        lines = [line for line in lines if not line.startswith(f"{out} = _rt.empty")]
        body[-1] = f"{out} = {c.dtype()}({at})"
    lines += [_INDENT * len(kept) + text for text in body]
    return lines + [f"{c.target} = {out}"]


@lowering("argsort")
def _argsort(c):
    """NumPy's stable sort (Numba's mergesort orders NaNs last and keeps ties in order, as
    NumPy does), one 1-D slice at a time along ``axis``; complex slices by
    ``_rt.argsort_complex`` (Numba's argsort takes no complex keys)."""
    a, a_type = c.text("a"), as_array_type(c.type("a"))
    if a_type.dtype.kind not in "biufc" or a_type.dtype == np.float16:
        raise Unsupported(f"argsort of {a_type}")
    rank = a_type.ndim
    axis = c.param("axis", -1) % rank
    sort = "_rt.argsort_complex({})" if a_type.dtype.kind == "c" else \
        "np.argsort({}, kind='mergesort')"
    if rank == 1:
        return c.assign(sort.format(a) + f".astype({c.dtype()})")
    names = c.emitter.names
    sizes = [names.fresh("n") for _ in range(rank)]
    idx = [names.fresh("i") for _ in range(rank)]
    out = names.fresh("order")
    kept = [d for d in range(rank) if d != axis]
    lines = [f"{sizes[d]} = {a}.shape[{d}]" for d in range(rank)]
    lines.append(f"{out} = _rt.empty({tuple_source(sizes)}, {c.dtype()})")
    loop = [f"for {idx[d]} in range({sizes[d]}):" for d in kept]
    lines += [_INDENT * depth + text for depth, text in enumerate(loop)]
    at = ", ".join(":" if d == axis else idx[d] for d in range(rank))
    lines.append(_INDENT * len(kept) + f"{out}[{at}] = " + sort.format(f"{a}[{at}]"))
    return lines + [f"{c.target} = {out}"]


@lowering("cumsum", "cumprod")
def _cumsum(c):
    a_type, axis = as_array_type(c.type("a")), c.param("axis")
    if a_type.ndim > 1 and axis is not None and c.out.dtype.kind != "b":
        # along an axis (prod's derivative rule): one slice at a time, in NumPy's order
        out, k = c.emitter.names.fresh("cum"), c.emitter.names.fresh("k")
        at = ", ".join([":"] * (axis % a_type.ndim) + [k])
        before = ", ".join([":"] * (axis % a_type.ndim) + [f"{k} - 1"])
        symbol = "+" if c.op.name == "cumsum" else "*"
        return [f"{out} = {c.text('a')}.astype({c.dtype()})",  # a copy
                f"for {k} in range(1, {out}.shape[{axis % a_type.ndim}]):",
                _INDENT + f"{out}[{at}] = {out}[{at}] {symbol} {out}[{before}]",
                f"{c.target} = {out}"]
    a = c.text("a")
    if a_type.ndim > 1 and axis is None:  # of the flattened array, as NumPy
        a = f"_rt.ascontiguousarray({a}).ravel()"
    elif a_type.ndim != 1:
        raise Unsupported(f"{c.op.name} of {a_type}")
    if a_type.dtype != c.out.dtype:
        a = f"{a}.astype({c.dtype()})"
    return c.assign(f"np.{c.op.name}({a}).astype({c.dtype()})")


@lowering("asarray", "array")
def _asarray(c):
    """Of an array: a cast (or the array itself). Of a static sequence of numbers: the
    constant, built where it is generated. Of a (nested) sequence of values: one store per
    number, or np.stack of arrays."""
    name = "a" if "a" in c.operands else "object"
    t = c.type(name)
    if isinstance(t, Static) and isinstance(t.value, (tuple, list)):
        return _constant(c, t.value)
    if isinstance(t, SequenceType) and not c.param("ndmin", 0):
        items = _items(c, c.operands[name])
        shape = [len(items)]
        leaves = _scalar_leaves(items, shape)
        if leaves is not None and items:
            return _from_scalars(c, leaves, shape)
        if items and all(isinstance(e, ArrayType) and e.ndim for _, e in items):
            return _joined(c, items, "stack", 0)
    if c.out.ndim == 0 and (isinstance(t, ArrayType) or (
            isinstance(t, Static) and isinstance(t.value, (bool, int, float, np.generic)))):
        return c.assign(Loop(c.emitter, 0, c.where).operand(c.operands[name], c.out.dtype))
    if isinstance(t, ListType) and t.elt is UNKNOWN:  # Numba cannot type an empty list
        raise Unsupported(f"jnp.{c.op.name}([])")
    if isinstance(t, ListType) and not c.param("ndmin", 0):
        return _stack_list(c, c.text(name), t, 0)
    if not isinstance(t, ArrayType) or c.param("ndmin", 0):
        raise Unsupported(f"jnp.{c.op.name} of {t}")
    x = c.text(name)
    if t.ndim == 0:
        return c.assign(Loop(c.emitter, 0, c.where).operand(c.operands[name], c.out.dtype))
    if t.dtype == c.out.dtype:
        return c.assign(f"{x}.copy()" if c.op.name == "array" else x)
    if t.dtype.kind == "f" and c.out.dtype.kind in "iu":  # as JAX converts (saturating)
        return c.assign(f"_rt.floats_to_ints({x}, {integer_range(c.out.dtype)})")
    return c.assign(f"{x}.astype({c.dtype()})")


def _list_elements(c, lst, elt):
    """For joining a list built by ``append``: its length ``n``, a loop index ``k``, its
    element ``k`` in the result's dtype, and lines raising (to rerun on the python backend
    for NumPy's error) when it is empty."""
    n, k = c.emitter.names.fresh("n"), c.emitter.names.fresh("k")
    item = f"{lst}[{k}]" if elt.dtype == c.out.dtype else f"{lst}[{k}].astype({c.dtype()})"
    error = c.emitter.broadcast_error
    return n, k, item, [f"{n} = len({lst})", f"if {n} == 0:",
                        _INDENT + f"raise {error}({c.where + ': an empty list'!r})"]


def _stack_list(c, lst, t, axis):
    """``jnp.array(xs)`` / ``jnp.stack(xs, axis)`` of a list built by ``append``: one copy
    per element into a new array. An empty or ragged list reruns on the python backend,
    which builds it (or raises NumPy's error) as NumPy does."""
    elt = as_array_type(t.elt)
    n, k, item, lines = _list_elements(c, lst, elt)
    first, out = (c.emitter.names.fresh(h) for h in ("first", "stacked"))
    error = c.emitter.broadcast_error
    if elt.ndim == 0:
        lines.append(f"{out} = _rt.empty({n}, {c.dtype()})")
        body = [f"{out}[{k}] = {item}"]
    else:
        lines += [f"{first} = {lst}[0]",
                  f"{out} = _rt.empty(({n},) + {first}.shape, {c.dtype()})"]
        body = [f"if {lst}[{k}].shape != {first}.shape:",
                _INDENT + f"raise {error}({c.where + ': elements of different shapes'!r})",
                f"{out}[{k}] = {item}"]
    lines += [f"for {k} in range({n}):"] + [_INDENT + line for line in body]
    axis %= c.out.ndim
    if axis:  # built along axis 0: move it where stack puts it
        order = list(range(1, c.out.ndim))
        order.insert(axis, 0)
        lines.append(f"{out} = _rt.ascontiguousarray(_rt.transpose({out}, {tuple(order)}))")
    return lines + [f"{c.target} = {out}"]


def _concatenate_list(c, lst, t, axis):
    """``jnp.concatenate(xs, axis)`` of a list built by ``append``: the sizes along the axis
    are added up (the other sizes checked against the first element's), then each element
    is copied into its slice of a new array. ``axis=None`` joins the flattened elements."""
    elt = as_array_type(t.elt)
    n, k, item, lines = _list_elements(c, lst, elt)
    first, total, off, size, out = (
        c.emitter.names.fresh(h) for h in ("first", "total", "off", "size", "joined"))
    error = c.emitter.broadcast_error
    lines += [f"{first} = {lst}[0]", f"{total} = 0", f"for {k} in range({n}):"]
    if axis is None:
        lines.append(_INDENT + f"{total} += {lst}[{k}].size")
        shape, piece, item = f"{total}", f"{off}:{off} + {size}", f"{item}.ravel()"
    else:
        axis %= elt.ndim
        others = [f"{lst}[{k}].shape[{d}] != {first}.shape[{d}]"
                  for d in range(elt.ndim) if d != axis]
        if others:
            lines += [_INDENT + f"if {' or '.join(others)}:", _INDENT * 2 + f"raise {error}(" +
                      repr(c.where + ": the elements' sizes differ off the joining axis") + ")"]
        lines.append(_INDENT + f"{total} += {lst}[{k}].shape[{axis}]")
        shape = tuple_source([total if d == axis else f"{first}.shape[{d}]"
                              for d in range(elt.ndim)])
        piece = ", ".join([":"] * axis + [f"{off}:{off} + {size}"])
    whole = ".size" if axis is None else f".shape[{axis}]"
    return lines + [f"{out} = _rt.empty({shape}, {c.dtype()})", f"{off} = 0",
                    f"for {k} in range({n}):",
                    _INDENT + f"{size} = {lst}[{k}]{whole}",
                    _INDENT + f"{out}[{piece}] = {item}",
                    _INDENT + f"{off} += {size}",
                    f"{c.target} = {out}"]


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
    lines.append(f"{m} = _rt.empty({tuple_source(sizes)}, np.{m_type.dtype.name})")
    lines.append(f"{e} = _rt.empty({tuple_source(sizes)}, np.{e_type.dtype.name})")
    lines += loop.nest(sizes, idx, [f"{pair} = _ml.frexp({value})",
                                    f"{m}[{at}] = {pair}[0]", f"{e}[{at}] = {pair}[1]"])
    return lines + [f"{c.target} = ({m}, {e})"]


# lowerings kept in modules of their own register themselves on import
from . import lower_fft, lower_gather, lower_linalg, lower_products, lower_var  # noqa: E402,F401
