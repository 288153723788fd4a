"""Batching rules: how each op computes every example at once.

A rule gets the batcher ``bx`` (for emitting helper statements: ``bx.tmp``, ``bx.call``,
``bx.expand``, ``bx.broadcast``, ``bx.B``), the op, its operands as ``Val``s (source text,
per-example type, batched or not; sequence operands as lists), its params as ``Param``s
(source text, static value, whether they depend on batched values) and the per-example
result type. It returns ``(source of the batched result, batched?)``, batch axis first, or
raises ``NoRule`` to make the statement loop over the examples.

Families:

* broadcasting (every elementwise op, where, clip, fma, ...): a batched operand of lower
  rank than the result gets size-1 axes after its batch axis, so the batch axes line up;
  unbatched operands are left alone (NumPy aligns them from the right);
* axis ops (reductions, shape ops, transposes): per-example axes are shifted by one, and
  ``axis=None`` means every per-example axis;
* products: batched matmuls (one GEMM where the batch folds into the rows), einsum for
  the rest;
* indexing: an index that is the same for all examples gets a leading ``:``; one that
  differs per example becomes an advanced index next to a batch index ``arange(B)``.

Rules emit only registered ops, so the batched code can be differentiated again.
"""
import string
from types import SimpleNamespace

from ..ir.types import ArrayType, ListType, SequenceType, Static
from ..ops.indexing import _classify
from ..ops.linalg import _tensordot_axes, _transpose_axes
from ..ops.reductions import _axes
from ..ops.shape import normalize_axes, normalize_axis, plain
from .batched import any_, full, is_array_like, norm, unwrap
from .transform import NoRule, Unsafe, Val, literal

RULES = {}


def rule(*names):
    def register(fn):
        for name in names:
            RULES[name] = fn
        return fn
    return register


def rule_for(op):
    fn = RULES.get(op.name)
    if fn is None and op.family == "elementwise":
        return broadcasting
    return fn


def _params(params, *drop):
    return {name: p.text for name, p in params.items() if name not in drop}


def _no_batched_params(params, op):
    for name, p in params.items():
        if p.batched:
            raise NoRule(f"{op.name}(): its {name} differs between examples")


def _lit(value):
    text = literal(value)
    assert text is not None, value
    return text


def _shift(axes, ndim, fn="axis"):
    """Per-example axes (an int or a tuple) as batched axes (+1), normalized."""
    if isinstance(axes, (tuple, list)):
        return tuple(a + 1 for a in normalize_axes(tuple(axes), ndim, fn))
    return normalize_axis(axes, ndim, fn) + 1


# --- broadcasting ---------------------------------------------------------------------------

def broadcasting_call(bx, opname, vals, params=None):
    """``op(vals...)`` with batched operands of lower rank expanded to the result's rank."""
    ranks = [v.ndim for v in vals.values() if isinstance(v, Val) and is_array_like(v.t)]
    ndim = max(ranks, default=0)
    texts = {name: (bx.expand(v, ndim).text if isinstance(v, Val) else v)
             for name, v in vals.items()}
    return bx.call(opname, texts, params)


@rule("where", "clip", "fma", "ldexp", "astype", "round", "nan_to_num", "stop_gradient",
      "frexp", "matrix_transpose", "shape_stub")
def broadcasting(bx, op, vals, params, t):
    _no_batched_params(params, op)
    if op.name == "add":
        same = _plus_zero(vals, t)
        if same is not None:
            return same.text, True
    return broadcasting_call(bx, op.name, vals, _params(params)), True


def _plus_zero(vals, t):
    """``0.0 + c`` (how derivative code starts accumulating a cotangent) is ``c`` itself when
    c already has the result's dtype and rank: no copy of a batch-sized array."""
    x, y = vals.get("x"), vals.get("y")
    for zero, other in ((x, y), (y, x)):
        if isinstance(zero, Val) and isinstance(zero.t, Static) and \
                type(zero.t.value) in (int, float) and zero.t.value == 0 and \
                isinstance(other, Val) and other.batched and isinstance(other.t, ArrayType) \
                and isinstance(t, ArrayType) and other.t.dtype == t.dtype and \
                other.t.ndim == t.ndim and other.t.weak == t.weak:
            return other
    return None


def select(bx, cond, a, b, t):
    """``where(cond, a, b)`` leaf by leaf for values of type ``t``; ``cond`` is a batched
    per-example boolean scalar."""
    t = unwrap(t)
    if isinstance(t, SequenceType) or (hasattr(t, "children") and hasattr(t, "node_type")):
        keys = t.keys if hasattr(t, "keys") and not isinstance(t, SequenceType) \
            else range(len(t.elts))
        kids = t.elts if isinstance(t, SequenceType) else t.children
        parts = []
        for k, (key, c) in enumerate(zip(keys, kids)):
            pa = Val(bx.path_text(a.text, a.t, (key,)), _kid(a.t, k), _sub(a.b, k))
            pb = Val(bx.path_text(b.text, b.t, (key,)), _kid(b.t, k), _sub(b.b, k))
            parts.append(select(bx, cond, pa, pb, c))
        return bx.container(t, parts)
    if isinstance(t, Static):
        return bx.static_text(t.value)
    if isinstance(t, ListType):
        raise Unsafe("a list assigned in a branch")
    if a.text == b.text:
        return a.text
    return broadcasting_call(bx, "where", {"condition": cond, "x": a, "y": b})


def _kid(t, k):
    t = unwrap(t)
    return t.elts[k] if isinstance(t, SequenceType) else t.children[k]


def _sub(b, k):
    return b if isinstance(b, bool) else b[k]


# --- side effects ------------------------------------------------------------------------------

@rule("debug_callback")
def debug_callback(bx, op, vals, params, t):
    """The callback runs once per example (ops/effects.py): which leaves carry this vmap's
    axis goes in front of the ``batched`` of the vmaps inside it."""
    level = tuple(norm(v.t, v.b) for v in vals["args"])
    inner = params["batched"].value if "batched" in params else ()
    params = {"callback": params["callback"].text, "batched": _lit((level,) + inner)}
    return bx.call("debug_callback", {"args": [v.text for v in vals["args"]]}, params), False


# --- reductions and other axis ops ------------------------------------------------------------

@rule("sum", "prod", "max", "min", "any", "all", "count_nonzero", "mean", "var", "std")
def reduction(bx, op, vals, params, t):
    _no_batched_params(params, op)
    a = vals["a"]
    axis = params["axis"].value if "axis" in params else None
    p = _params(params)
    if axis is None:
        new = tuple(range(1, a.ndim + 1))
    else:
        new = tuple(i + 1 for i in _axes(op.name, axis, a.ndim))
        if not isinstance(axis, (tuple, list)):
            new = new[0]
    p["axis"] = _lit(new)
    return bx.call(op.name, {"a": a.text}, p), True


def _flat_shape(bx, v):
    """``(B, n)``, n the per-example size (spelled out: -1 cannot be inferred for B = 0)."""
    size = " * ".join(f"{v.text}.shape[{i}]" for i in range(1, v.ndim + 1)) or "1"
    return f"({bx.B}, {size})"


def _flat(bx, v):
    """A batched value as (B, n): each example flattened."""
    return bx.tmp(bx._hint(v.text, "flat"), bx.call("reshape", {"a": v.text},
                                                   {"shape": _flat_shape(bx, v)}))


@rule("argmax", "argmin")
def arg_reduction(bx, op, vals, params, t):
    _no_batched_params(params, op)
    a = vals["a"]
    axis = params["axis"].value if "axis" in params else None
    keepdims = params["keepdims"].value if "keepdims" in params else False
    p = _params(params)
    if axis is not None:
        p["axis"] = _lit(_shift(axis, a.ndim))
        return bx.call(op.name, {"a": a.text}, p), True
    p["axis"] = "1"
    out = bx.call(op.name, {"a": _flat(bx, a)}, p)
    if keepdims and a.ndim != 1:
        out = bx.call("reshape", {"a": bx.tmp("t", out)},
                      {"shape": f"({bx.B},{' 1,' * a.ndim})"})
    return out, True


@rule("cumsum", "cumprod")
def cumulative(bx, op, vals, params, t):
    _no_batched_params(params, op)
    a = vals["a"]
    axis = params["axis"].value if "axis" in params else None
    p = _params(params)
    if axis is None or a.ndim == 0:
        p["axis"] = "1"
        return bx.call(op.name, {"a": _flat(bx, a)}, p), True
    p["axis"] = _lit(_shift(axis, a.ndim))
    return bx.call(op.name, {"a": a.text}, p), True


@rule("fft")
def fft(bx, op, vals, params, t):
    """Along the last axis: the batch axis in front changes nothing."""
    _no_batched_params(params, op)
    return bx.call(op.name, {"a": vals["a"].text}, _params(params)), True


@rule("linalg_solve", "linalg_cholesky", "linalg_eigh", "linalg_eig", "linalg_svd",
      "linalg_qr", "linalg_det", "linalg_slogdet")
def stacked_matrices(bx, op, vals, params, t):
    """On the last two axes, leading axes a batch broadcast between operands: the batch
    axis in front changes nothing (an unbatched operand broadcasts)."""
    _no_batched_params(params, op)
    return bx.call(op.name, {k: v.text for k, v in vals.items()}, _params(params)), True


@rule("argsort")
def argsort(bx, op, vals, params, t):
    _no_batched_params(params, op)
    a = vals["a"]
    axis = params["axis"].value if "axis" in params else -1
    p = _params(params)
    if axis is None:
        p["axis"] = "1"
        return bx.call(op.name, {"a": _flat(bx, a)}, p), True
    p["axis"] = _lit(_shift(axis, a.ndim))
    return bx.call(op.name, {"a": a.text}, p), True


@rule("swapaxes")
def swapaxes(bx, op, vals, params, t):
    _no_batched_params(params, op)
    a = vals["a"]
    p = _params(params)
    p["axis1"] = _lit(_shift(params["axis1"].value, a.ndim))
    p["axis2"] = _lit(_shift(params["axis2"].value, a.ndim))
    return bx.call(op.name, {"a": a.text}, p), True


@rule("moveaxis")
def moveaxis(bx, op, vals, params, t):
    _no_batched_params(params, op)
    a = vals["a"]
    p = _params(params)
    for name in ("source", "destination"):
        p[name] = _lit(_shift(plain(params[name].value), a.ndim))
    return bx.call(op.name, {"a": a.text}, p), True


@rule("expand_dims")
def expand_dims(bx, op, vals, params, t):
    _no_batched_params(params, op)
    a = vals["a"]
    axis = plain(params["axis"].value)
    n = len(axis) if isinstance(axis, (tuple, list)) else 1
    p = _params(params)
    p["axis"] = _lit(_shift(axis, a.ndim + n))
    return bx.call(op.name, {"a": a.text}, p), True


@rule("squeeze")
def squeeze(bx, op, vals, params, t):
    _no_batched_params(params, op)
    a = vals["a"]
    from ..ops.shape import squeeze_axes
    axes = squeeze_axes(a.t, plain(params["axis"].value) if "axis" in params else None)
    p = _params(params)
    p["axis"] = _lit(tuple(i + 1 for i in axes))
    return bx.call(op.name, {"a": a.text}, p), True


@rule("transpose")
def transpose(bx, op, vals, params, t):
    _no_batched_params(params, op)
    a = vals["a"]
    axes = params["axes"].value if "axes" in params else None
    more = params["more"].value if "more" in params else ()
    axes = _transpose_axes(axes, more)
    if axes is None:
        perm = tuple(reversed(range(a.ndim)))
    else:
        perm = normalize_axes(axes, a.ndim, "transpose", "axes")
    new = (0,) + tuple(i + 1 for i in perm)
    return bx.call(op.name, {"a": a.text}, {"axes": _lit(new)}), True


@rule("trace")
def trace(bx, op, vals, params, t):
    _no_batched_params(params, op)
    a = vals["a"]
    p = _params(params)
    p["axis1"] = _lit(_shift(params["axis1"].value if "axis1" in params else 0, a.ndim))
    p["axis2"] = _lit(_shift(params["axis2"].value if "axis2" in params else 1, a.ndim))
    return bx.call(op.name, {"a": a.text}, p), True


@rule("flip")
def flip(bx, op, vals, params, t):
    _no_batched_params(params, op)
    m = vals["m"]
    axis = plain(params["axis"].value) if "axis" in params else None
    p = _params(params)
    p["axis"] = _lit(tuple(range(1, m.ndim + 1)) if axis is None else _shift(axis, m.ndim))
    return bx.call(op.name, {"m": m.text}, p), True


@rule("roll")
def roll(bx, op, vals, params, t):
    _no_batched_params(params, op)
    a = vals["a"]
    axis = plain(params["axis"].value) if "axis" in params else None
    p = _params(params)
    if axis is None:
        p["axis"] = "1"
        rolled = bx.tmp("t", bx.call(op.name, {"a": _flat(bx, a)}, p))
        return bx.call("reshape", {"a": rolled}, {"shape": f"{a.text}.shape"}), True
    p["axis"] = _lit(_shift(axis, a.ndim))
    return bx.call(op.name, {"a": a.text}, p), True


@rule("repeat")
def repeat(bx, op, vals, params, t):
    _no_batched_params(params, op)
    a = vals["a"]
    axis = plain(params["axis"].value) if "axis" in params else None
    p = _params(params)
    if axis is None:
        p["axis"] = "1"
        return bx.call(op.name, {"a": _flat(bx, a)}, p), True
    p["axis"] = _lit(_shift(axis, a.ndim))
    return bx.call(op.name, {"a": a.text}, p), True


@rule("tile")
def tile(bx, op, vals, params, t):
    _no_batched_params(params, op)
    a = vals["A"]
    reps = plain(params["reps"].value)
    reps = tuple(reps) if isinstance(reps, (tuple, list)) else (reps,)
    ndim = max(a.ndim, len(reps))
    a = bx.expand(a, ndim)
    reps = (1,) * (ndim - len(reps)) + reps
    return bx.call(op.name, {"A": a.text}, {"reps": _lit((1,) + reps)}), True


@rule("split", "array_split")
def split(bx, op, vals, params, t):
    _no_batched_params(params, op)
    a = vals["a"]
    p = _params(params)
    p["axis"] = _lit(_shift(params["axis"].value if "axis" in params else 0, a.ndim))
    return bx.call(op.name, {"a": a.text}, p), True


def _shape_text(bx, param):
    """``(B, *shape)`` source for a shape param (an int or a sequence)."""
    value = plain(param.value)
    if isinstance(value, tuple):
        return f"({bx.B},) + {param.text}", len(value)
    if isinstance(value, list):
        return f"({bx.B},) + tuple({param.text})", len(value)
    return f"({bx.B}, {param.text})", 1


@rule("reshape")
def reshape(bx, op, vals, params, t):
    _no_batched_params(params, op)
    a = vals["a"]
    more = params.get("more")
    p = _params(params, "shape", "more")
    if more is not None and more.value:
        entries = [params["shape"]] + [SimpleNamespace(text=bx.text(n), value=v) for n, v in
                                       zip(more.node, more.value)]
        if isinstance(entries[-1].value, str):
            p["order"] = repr(entries[-1].value)
            entries = entries[:-1]
        shape = "(" + ", ".join([bx.B] + [e.text for e in entries]) + ")"
    else:
        shape, _ = _shape_text(bx, params["shape"])
    return bx.call("reshape", {"a": a.text}, {"shape": shape, **p}), True


@rule("ravel")
def ravel(bx, op, vals, params, t):
    _no_batched_params(params, op)
    return bx.call("reshape", {"a": vals["a"].text}, {"shape": _flat_shape(bx, vals["a"])}), \
        True


@rule("broadcast_to")
def broadcast_to(bx, op, vals, params, t):
    _no_batched_params(params, op)
    shape, n = _shape_text(bx, params["shape"])
    a = bx.expand(vals["a"], n)
    if not vals["a"].batched:
        a = bx.broadcast(vals["a"], n)
    return bx.call(op.name, {"a": a.text}, {"shape": shape}), True


@rule("broadcast_arrays")
def broadcast_arrays(bx, op, vals, params, t):
    args = vals["args"]
    ndim = max(v.ndim for v in args)
    texts = tuple(bx.expand(v, ndim).text for v in args)
    return bx.call(op.name, {"args": texts}), full(t)


_ATLEAST = {1: {0: (1,)}, 2: {0: (1, 2), 1: (1,)}, 3: {0: (1, 2, 3), 1: (1, 3), 2: (3,)}}


@rule("atleast_1d", "atleast_2d", "atleast_3d")
def atleast(bx, op, vals, params, t):
    n = int(op.name[-2])
    outs, bts = [], []
    for v in vals["arys"]:
        if not v.batched:
            outs.append(bx.tmp("t", bx.call(op.name, {"arys": (v.text,)})))
            bts.append(False)
            continue
        axes = _ATLEAST[n].get(v.ndim)
        if axes is None:
            outs.append(v.text)
        else:
            outs.append(bx.tmp(bx._hint(v.text, "e"), bx.call(
                "expand_dims", {"a": v.text}, {"axis": _lit(axes)})))
        bts.append(True)
    if len(outs) == 1:
        return outs[0], bts[0]
    return "[" + ", ".join(outs) + "]", tuple(bts)


def _batched_elements(bx, elts):
    return [bx.broadcast(v) if not v.batched else v for v in elts]


def _tuple(texts):
    return "(" + ", ".join(texts) + ("," if len(texts) == 1 else "") + ")"


@rule("concatenate")
def concatenate(bx, op, vals, params, t):
    _no_batched_params(params, op)
    axis = plain(params["axis"].value) if "axis" in params else 0
    p = _params(params)
    arrays = vals["arrays"]
    if isinstance(arrays, Val):  # a list built by append: each element batched on axis 0
        elt = unwrap(arrays.t).elt
        if axis is not None:
            p["axis"] = _lit(_shift(axis, elt.ndim))
            return bx.call(op.name, {"arrays": arrays.text}, p), True
        # axis=None: each example's elements flattened, joined (0-d elements: stacked)
        p["axis"] = "1"
        if elt.ndim == 0:
            return bx.call("stack", {"arrays": arrays.text}, p), True
        texts = arrays.text
        if elt.ndim > 1:  # a loop flattens the elements, whose shapes may differ
            texts, e = bx.fresh("flat"), bx.fresh("e")
            bx.emit(f"{texts} = []")
            bx.emit(f"for {e} in {arrays.text}:")
            flat = bx.call("reshape", {"a": e}, {"shape": _flat_shape(bx, Val(e, elt, True))})
            bx.out.add(f"{texts}.append({flat})", bx.lineno, 1)
        return bx.call(op.name, {"arrays": texts}, p), True
    elts = _batched_elements(bx, arrays)
    if axis is None:
        texts = [_flat(bx, v) for v in elts]
        p["axis"] = "1"
    else:
        texts = [v.text for v in elts]
        p["axis"] = _lit(_shift(axis, elts[0].ndim))
    return bx.call(op.name, {"arrays": _tuple(texts)}, p), True


@rule("stack")
def stack(bx, op, vals, params, t):
    _no_batched_params(params, op)
    axis = plain(params["axis"].value) if "axis" in params else 0
    p = _params(params)
    arrays = vals["arrays"]
    if isinstance(arrays, Val):  # a list built by append: each element batched on axis 0
        p["axis"] = _lit(_shift(axis, unwrap(arrays.t).elt.ndim + 1))
        return bx.call(op.name, {"arrays": arrays.text}, p), True
    elts = _batched_elements(bx, arrays)
    p["axis"] = _lit(_shift(axis, elts[0].ndim + 1))
    return bx.call(op.name, {"arrays": _tuple([v.text for v in elts])}, p), True


@rule("hstack", "vstack")
def hvstack(bx, op, vals, params, t):
    _no_batched_params(params, op)
    elts = _batched_elements(bx, vals["tup"])
    want = 1 if op.name == "hstack" else 2
    texts = []
    for v in elts:
        if v.ndim < want:
            axes = (1,) if want - v.ndim == 1 and op.name == "hstack" else \
                _ATLEAST[2][v.ndim]
            texts.append(bx.tmp(bx._hint(v.text, "e"), bx.call(
                "expand_dims", {"a": v.text}, {"axis": _lit(axes)})))
        else:
            texts.append(v.text)
    ndim = max(elts[0].ndim, want)
    axis = 0 if op.name == "vstack" or ndim == 1 else 1
    p = _params(params)
    p["axis"] = str(axis + 1)
    return bx.call("concatenate", {"arrays": _tuple(texts)}, p), True


# --- products --------------------------------------------------------------------------------

def _product_params(params):
    return {k: params[k].text for k in ("precision", "preferred_element_type") if k in params}


@rule("matmul")
def matmul(bx, op, vals, params, t):
    _no_batched_params(params, op)
    return _matmul(bx, vals["a"], vals["b"], _product_params(params)), True


def _matmul(bx, a, b, p):
    ra, rb = a.ndim, b.ndim
    if ra == 0 or rb == 0:
        raise NoRule("matmul of a 0-d array")
    if ra >= 2 and rb >= 2 and a.t.ones[-1] and b.t.ones[-2] and not p:
        # (..., k, 1) @ (..., 1, n) is an outer product: a broadcasting multiply
        return broadcasting_call(bx, "multiply", {"x": a, "y": b})
    if not a.batched and ra == 2 and b.batched and rb == 1:
        # (m, k) @ (B, k).T, transposed back: one matrix product for the whole batch, and
        # only batch-sized transposes (the matrix itself is never copied)
        bt = bx.tmp(bx._hint(b.text, "T"), bx.call("matrix_transpose", {"x": b.text}))
        prod = bx.tmp("t", bx.call("matmul", {"a": a.text, "b": bt}, p))
        return bx.call("matrix_transpose", {"x": prod})
    if a.batched and ra == 1 and not b.batched and rb <= 2:
        return bx.call("matmul", {"a": a.text, "b": b.text}, p)  # (B, k) @ (k, n)
    if not a.batched and ra == 2 and b.batched and rb == 2:
        if b.t.ones[-1]:  # (m, k) @ (k, 1): the matrix-vector case, as a column
            col = Val(bx.tmp(bx._hint(b.text, "vec"), bx.call(
                "squeeze", {"a": b.text}, {"axis": "(2,)"})), ArrayType(b.t.dtype, (False,)),
                True)
            prod = bx.tmp("t", _matmul(bx, a, col, p))
            return bx.call("expand_dims", {"a": prod}, {"axis": "-1"})
        # the batch folds into the columns: one (m, k) @ (k, B*n) product
        cols = bx.tmp(bx._hint(b.text, "cols"), bx.call(
            "reshape", {"a": bx.call("moveaxis", {"a": b.text}, {"source": "0",
                                                                 "destination": "1"})},
            {"shape": f"({b.text}.shape[1], -1)"}))
        prod = bx.tmp("t", bx.call("matmul", {"a": a.text, "b": cols}, p))
        split = bx.tmp("t", bx.call("reshape", {"a": prod}, {
            "shape": f"({a.text}.shape[0], {bx.B}, {b.text}.shape[2])"}))
        return bx.call("moveaxis", {"a": split}, {"source": "1", "destination": "0"})
    if a.batched and ra == 2 and a.t.ones[-2] and not b.batched and rb == 2:
        # (1, k) @ (k, n): a row vector times the matrix
        row = Val(bx.tmp(bx._hint(a.text, "vec"), bx.call(
            "squeeze", {"a": a.text}, {"axis": "(1,)"})), ArrayType(a.t.dtype, (False,)), True)
        prod = bx.tmp("t", _matmul(bx, row, b, p))
        return bx.call("expand_dims", {"a": prod}, {"axis": "1"})
    if a.batched and ra >= 2 and not b.batched and rb == 2:
        # the batch folds into the rows: one (B*m, k) @ (k, n) product
        rows = bx.tmp(bx._hint(a.text, "rows"), bx.call(
            "reshape", {"a": a.text}, {"shape": f"(-1, {a.text}.shape[-1])"}))
        prod = bx.tmp("t", bx.call("matmul", {"a": rows, "b": b.text}, p))
        return bx.call("reshape", {"a": prod},
                       {"shape": f"{a.text}.shape[:-1] + {b.text}.shape[-1:]"})
    ta, tb = a.text, b.text
    if ra == 1:
        ta = bx.tmp(bx._hint(ta, "row"), bx.call("expand_dims", {"a": ta},
                                                 {"axis": "1" if a.batched else "0"}))
    if rb == 1:
        tb = bx.tmp(bx._hint(tb, "col"), bx.call("expand_dims", {"a": tb}, {"axis": "-1"}))
    ma, mb = max(ra, 2), max(rb, 2)
    nd = max(ma, mb)
    if a.batched and ma < nd:
        ta = bx.expand(Val(ta, ArrayType(a.t.dtype, (False,) * ma), True), nd).text
    if b.batched and mb < nd:
        tb = bx.expand(Val(tb, ArrayType(b.t.dtype, (False,) * mb), True), nd).text
    out = bx.call("matmul", {"a": ta, "b": tb}, p)
    squeeze = tuple(ax for ax, vec in ((-2, ra == 1), (-1, rb == 1)) if vec)
    if squeeze:
        out = bx.call("squeeze", {"a": bx.tmp("t", out)}, {"axis": _lit(squeeze)})
    return out


def _letters(used, n):
    free = [c for c in string.ascii_letters if c not in used]
    return free[:n]


def _einsum(bx, terms, out, vals, p):
    """einsum with per-example subscripts; batched operands and the output get a batch
    label in front."""
    used = set("".join(terms) + out)
    z = _letters(used, 1)[0]
    subs = ",".join((z + term) if v.batched else term for term, v in zip(terms, vals))
    subscripts = f"{subs}->{z}{out}"
    texts = tuple(v.text for v in vals)
    return bx.call("einsum", {"operands": texts}, {"subscripts": repr(subscripts), **p})


@rule("dot", "inner")
def dot(bx, op, vals, params, t):
    _no_batched_params(params, op)
    a, b = vals["a"], vals["b"]
    p = _product_params(params)
    if a.ndim == 0 or b.ndim == 0:
        if "preferred_element_type" in p:
            raise NoRule(f"{op.name} of a scalar with preferred_element_type")
        return broadcasting_call(bx, "multiply", {"x": a, "y": b}), True
    if op.name == "dot" and a.ndim <= 2 and b.ndim <= 2:
        return _matmul(bx, a, b, p), True
    la = _letters("", a.ndim)
    lb = _letters(la, b.ndim)
    if op.name == "dot":
        k = b.ndim - 2 if b.ndim >= 2 else 0
    else:
        k = b.ndim - 1
    lb[k] = la[-1]
    out = la[:-1] + [c for i, c in enumerate(lb) if i != k]
    return _einsum(bx, ["".join(la), "".join(lb)], "".join(out), [a, b], p), True


def _flat_operand(bx, v):
    if v.batched:
        return Val(_flat(bx, v), ArrayType(v.t.dtype, (False,)), True)
    return Val(bx.tmp("t", bx.call("ravel", {"a": v.text})), ArrayType(v.t.dtype, (False,)),
               False)


@rule("vdot")
def vdot(bx, op, vals, params, t):
    _no_batched_params(params, op)
    a, b = (_flat_operand(bx, vals[n]) for n in ("a", "b"))
    if a.t.dtype.kind == "c":
        a = Val(bx.tmp("t", bx.call("conjugate", {"x": a.text})), a.t, a.batched)
    return _einsum(bx, ["i", "i"], "", [a, b], _product_params(params)), True


@rule("outer")
def outer(bx, op, vals, params, t):
    a, b = (_flat_operand(bx, vals[n]) for n in ("a", "b"))
    return _einsum(bx, ["i", "j"], "ij", [a, b], {}), True


@rule("tensordot")
def tensordot(bx, op, vals, params, t):
    _no_batched_params(params, op)
    a, b = vals["a"], vals["b"]
    axes = params["axes"].value if "axes" in params else 2
    ax_a, ax_b = _tensordot_axes(SimpleNamespace(ndim=a.ndim), SimpleNamespace(ndim=b.ndim),
                                 axes)
    la = _letters("", a.ndim)
    lb = _letters(la, b.ndim)
    for i, j in zip(ax_a, ax_b):
        lb[j] = la[i]
    out = [c for i, c in enumerate(la) if i not in ax_a] + \
        [c for j, c in enumerate(lb) if j not in ax_b]
    return _einsum(bx, ["".join(la), "".join(lb)], "".join(out), [a, b],
                   _product_params(params)), True


@rule("einsum")
def einsum(bx, op, vals, params, t):
    _no_batched_params(params, op)
    subscripts = plain(params["subscripts"].value).replace(" ", "")
    inputs, arrow, output = subscripts.partition("->")
    terms = inputs.split(",")
    if not arrow:  # NumPy's implicit output: the ellipsis, then labels used once, sorted
        letters = [c for term in terms for c in term.replace("...", "")]
        dots = "..." if any("..." in term for term in terms) else ""
        output = dots + "".join(sorted(c for c in set(letters) if letters.count(c) == 1))
    p = _params(params, "subscripts")
    operands = vals["operands"]
    used = set(subscripts)
    z = _letters(used, 1)[0]
    subs = ",".join((z + term) if v.batched else term for term, v in zip(terms, operands))
    return bx.call("einsum", {"operands": tuple(v.text for v in operands)},
                   {"subscripts": repr(f"{subs}->{z}{output}"), **p}), True


# --- indexing --------------------------------------------------------------------------------

def _index_items(bx, param):
    """(items, prebatched): the items of an index param as SimpleNamespaces (kind, text,
    value, batched, per-example rank), and, for an index object built at run time with a
    batch index already in front (see ``index_object``), its source text."""
    import gast
    from ..ir.types import IndexType
    node = param.node
    value = param.value
    values = value if isinstance(value, tuple) else (value,)
    if isinstance(node, gast.Name) and isinstance(bx.type_of(node), IndexType):
        batched = bool(any_(bx.bt_of(node)))
        items = [_item(v, None, batched) for v in values]
        return items, (bx.text(node) if batched else None)
    if isinstance(node, gast.Tuple) or not isinstance(value, tuple):
        nodes = node.elts if isinstance(node, gast.Tuple) else [node]
        items = [_item(v, bx.text(n), bx.node_batched(n), n) for n, v in zip(nodes, values)]
    else:  # a tuple made elsewhere (``g[_index_at(axis, k)]``): its items one by one
        whole, batched = bx.text(node), bx.node_batched(node)
        items = []
        for k, v in enumerate(values):
            text = _static_item_text(v)
            items.append(_item(v, text or f"{whole}[{k}]", batched and text is None))
    return _windows(bx, items), None


def _static_item_text(v):
    """Index syntax for an index item known when code is generated, else None."""
    if v is Ellipsis:
        return "..."
    if v is None or type(v) is int:
        return repr(v)
    if type(v) is slice and all(b is None or type(b) is int for b in (v.start, v.stop, v.step)):
        return ":".join("" if b is None else repr(b) for b in (v.start, v.stop, v.step))
    return None


def _item(v, text, batched, node=None):
    kind, data = _classify(v, "x[idx]")
    nd = {"array": len(data) if kind == "array" else 0, "mask": data}.get(kind, 0)
    if kind == "array" and isinstance(v, ArrayType):
        nd = v.ndim
    return SimpleNamespace(kind=kind, text=text, value=v, batched=batched, ndim=nd, node=node,
                           ready=False)


def _windows(bx, items):
    """Slices ``i:i + n`` whose start differs between examples (lax.dynamic_slice writes
    them) as gathers: each becomes an index array ``i + arange(n)``, on an axis of its own."""
    runs = [k for k, i in enumerate(items) if i.kind == "slice" and i.batched]
    if not runs or any(i.kind in ("int", "array", "mask") for i in items) or \
            runs != list(range(runs[0], runs[0] + len(runs))):
        return items
    windows = [bx.window(items[k].node) for k in runs]
    if any(w is None for w in windows):
        return items
    n = len(runs)
    out = list(items)
    for j, (k, (start, length)) in enumerate(zip(runs, windows)):
        first = bx.tmp("start", bx.call("reshape", {"a": start},
                                        {"shape": f"({bx.B},{' 1,' * n})"}))
        dims = ["1"] * n
        dims[j] = length
        offsets = bx.tmp("offsets", bx.call("reshape", {"a": bx.call("arange", {},
                                                                     {"start": length})},
                                            {"shape": f"({', '.join(dims)},)"}))
        text = bx.tmp("window", bx.call("add", {"x": first, "y": offsets}))
        out[k] = SimpleNamespace(kind="array", text=text, value=None, batched=True, ndim=n,
                                 node=None, ready=True)
    return out


def index_object(bx, s_text, slice_node):
    """``s_[...]`` built at run time (derivative code does) from parts that differ between
    examples: the batched index, a batch index in front, as the indexing rules use it."""
    import gast
    nodes = slice_node.elts if isinstance(slice_node, gast.Tuple) else [slice_node]
    view = bx.view(slice_node)
    values = view if isinstance(view, tuple) else (view,)
    # (no windows here: where the object is used, only its per-example view is known)
    items = [_item(v, bx.text(n), bx.node_batched(n), n) for n, v in zip(nodes, values)]
    texts, adv, nadv, before = _batched_index(bx, items, None, "an index object")
    return f"{s_text}[{_index_text([_batch_index(bx, nadv)] + texts)}]"


def _advanced_layout(items, x_ndim):
    """(advanced positions, rank of the advanced broadcast, output dims before them)."""
    advanced = any(i.kind in ("array", "mask") for i in items)
    if not advanced and not any(i.batched for i in items):
        return [], 0, 0
    adv = [k for k, i in enumerate(items) if i.kind in ("array", "mask", "int")]
    nadv = max([1 if i.kind == "mask" else i.ndim for i in items
                if i.kind in ("array", "mask", "int")], default=0)
    used = sum({"new": 0, "ellipsis": 0, "mask": i.ndim}.get(i.kind, 1) for i in items)
    before = 0
    for i in items[:adv[0]] if adv else []:
        if i.kind in ("new", "slice"):
            before += 1
        elif i.kind == "ellipsis":
            before += x_ndim - used
    return adv, nadv, before


def _batch_last(bx, x, items):
    """``x`` (batched) with its batch axis last, for an index object that cannot be taken
    apart: the per-example index then applies to the leading axes as it is."""
    kinds = [i.kind for i in items]
    if "ellipsis" in kinds and kinds.index("ellipsis") < len(kinds) - 1:
        raise NoRule("an index object with items after its Ellipsis")
    return bx.tmp(bx._hint(x.text, "last"), bx.call("moveaxis", {"a": x.text},
                                                     {"source": "0", "destination": "-1"}))


def _adjacent(positions):
    return bool(positions) and \
        positions == list(range(positions[0], positions[0] + len(positions)))


def _batched_index(bx, items, x, safe_what):
    """Index texts for a batched index (some item differs per example), and the layout."""
    if bx.safe:
        raise Unsafe(f"{safe_what} with an index that differs between examples")
    if any(i.kind == "mask" for i in items):
        raise NoRule("a boolean mask index with other indices that differ between examples")
    if any(i.kind == "slice" and i.batched for i in items):
        raise NoRule("slice bounds that differ between examples")
    adv, nadv, before = _advanced_layout(items, x.ndim if x is not None else 0)
    texts = []
    for i in items:
        if i.ready:
            texts.append(i.text)
        elif i.kind in ("array", "int") and i.batched:
            v = bx.expand(Val(i.text, i.value if isinstance(i.value, ArrayType) else
                              ArrayType(i.value.dtype, ()), True), nadv)
            texts.append(v.text)
        else:
            texts.append(i.text)
    return texts, adv, nadv, before


def _batch_index(bx, nadv):
    arange = bx.tmp("batch_index", bx.call("arange", {}, {"start": bx.B}))
    if nadv:
        arange = bx.tmp("batch_index", bx.call("reshape", {"a": arange},
                                               {"shape": f"({bx.B},{' 1,' * nadv})"}))
    return arange


def _index_text(texts):
    return ", ".join(texts) + ("," if len(texts) == 1 else "")


@rule("getitem")
def getitem(bx, op, vals, params, t):
    x = vals["x"]
    items, pre = _index_items(bx, params["index"])
    if pre is not None:  # an index object with the batch index in it
        if bx.safe:
            raise Unsafe("indexing with an index that differs between examples")
        adv, nadv, before = _advanced_layout(items, x.ndim)
        xb = x if x.batched else bx.broadcast(x)
        out = bx.tmp("t", f"{xb.text}[{pre}]")
        if _adjacent(adv) and adv[0] > 0:
            src = tuple(range(1, 1 + nadv))
            dst = tuple(range(1 + before, 1 + before + nadv))
            return bx.call("moveaxis", {"a": out}, {"source": _lit(src),
                                                    "destination": _lit(dst)}), True
        return out, True
    if any(i.text is None for i in items):  # an index object, the same for every example
        xt = _batch_last(bx, x, items)
        out = bx.tmp("t", f"{xt}[{bx.text(params['index'].node)}]")
        return bx.call("moveaxis", {"a": out}, {"source": "-1", "destination": "0"}), True
    if not any(i.batched for i in items):
        adv, nadv, before = _advanced_layout(items, x.ndim)
        out = f"{x.text}[{_index_text([':'] + [i.text for i in items])}]"
        if adv and not _adjacent(adv):
            # advanced indices apart: their dims come first, before the batch axis
            return bx.call("moveaxis", {"a": bx.tmp("t", out)},
                           {"source": str(nadv), "destination": "0"}), True
        return out, True
    texts, adv, nadv, before = _batched_index(bx, items, x, "indexing")
    if x.batched:
        out = bx.tmp("t", f"{x.text}[{_index_text([_batch_index(bx, nadv)] + texts)}]")
        if _adjacent(adv) and adv[0] > 0:
            src = tuple(range(1, 1 + nadv))
            dst = tuple(range(1 + before, 1 + before + nadv))
            return bx.call("moveaxis", {"a": out}, {"source": _lit(src),
                                                    "destination": _lit(dst)}), True
        return out, True
    out = f"{x.text}[{_index_text(texts)}]"
    if _adjacent(adv) and adv[0] > 0:
        return bx.call("moveaxis", {"a": bx.tmp("t", out)},
                       {"source": str(before), "destination": "0"}), True
    return out, True


_AT_METHODS = {"at_set": "set", "at_add": "add", "at_subtract": "subtract",
               "at_multiply": "multiply", "at_divide": "divide", "at_power": "power",
               "at_min": "min", "at_max": "max"}


@rule(*_AT_METHODS)
def at_update(bx, op, vals, params, t):
    from ..ops.indexing import index_type
    x, values = vals["x"], vals["values"]
    for name in ("indices_are_sorted", "unique_indices", "mode"):
        if name in params and params[name].batched:
            raise NoRule(f"{op.name}: {name} differs between examples")
    items, pre = _index_items(bx, params["index"])
    target = index_type(x.t, params["index"].value)
    rt = target.ndim
    method = _AT_METHODS[op.name]
    if pre is None and any(i.text is None for i in items):
        xt = _batch_last(bx, x if x.batched else bx.broadcast(x), items)
        v = values
        if values.batched:
            v = bx.expand(values, rt)
            v = Val(bx.tmp("t", bx.call("moveaxis", {"a": v.text},
                                        {"source": "0", "destination": "-1"})), v.t, True)
        elif values.ndim:
            v = Val(bx.tmp("t", bx.call("expand_dims", {"a": v.text}, {"axis": "-1"})),
                    v.t, False)
        out = bx.tmp("t", f"{xt}.at[{bx.text(params['index'].node)}].{method}({v.text})")
        return bx.call("moveaxis", {"a": out}, {"source": "-1", "destination": "0"}), True
    if pre is None and not any(i.batched for i in items):
        adv, nadv, before = _advanced_layout(items, x.ndim)
        xb = x if x.batched else bx.broadcast(x)
        v = values
        if values.batched:
            v = bx.expand(values, rt)
            if adv and not _adjacent(adv):
                v = Val(bx.tmp("t", bx.call("moveaxis", {"a": v.text},
                                            {"source": "0", "destination": str(nadv)})),
                        v.t, True)
        idx = _index_text([":"] + [i.text for i in items])
        return f"{xb.text}.at[{idx}].{method}({v.text})", True
    if pre is None:
        texts, adv, nadv, before = _batched_index(bx, items, x, "an indexed update")
    else:
        if bx.safe:
            raise Unsafe("an indexed update with an index that differs between examples")
        adv, nadv, before = _advanced_layout(items, x.ndim)
    xb = x if x.batched else bx.broadcast(x)
    v = bx.broadcast(values, rt) if not values.batched else bx.expand(values, rt)
    if _adjacent(adv) and adv[0] > 0:
        src = tuple(range(1 + before, 1 + before + nadv))
        dst = tuple(range(1, 1 + nadv))
        v = Val(bx.tmp("t", bx.call("moveaxis", {"a": v.text}, {"source": _lit(src),
                                                                "destination": _lit(dst)})),
                v.t, True)
    idx = pre if pre is not None else _index_text([_batch_index(bx, nadv)] + texts)
    return f"{xb.text}.at[{idx}].{method}({v.text})", True


# --- creation ----------------------------------------------------------------------------------

@rule("full")
def full_(bx, op, vals, params, t):
    _no_batched_params(params, op)
    shape, n = _shape_text(bx, params["shape"])
    fill = bx.expand(vals["fill_value"], n)
    p = _params(params, "shape")
    return bx.call(op.name, {"fill_value": fill.text}, {"shape": shape, **p}), True


@rule("zeros_like", "ones_like", "empty_like")
def like(bx, op, vals, params, t):
    _no_batched_params(params, op)
    if "shape" in params and plain(params["shape"].value) is not None:
        return bx.call(op.name, {"a": vals["a"].text}, _params(params)), False
    return bx.call(op.name, {"a": vals["a"].text}, _params(params)), True


@rule("full_like")
def full_like(bx, op, vals, params, t):
    _no_batched_params(params, op)
    a, fill = vals["a"], vals["fill_value"]
    p = _params(params)
    if "shape" in params and plain(params["shape"].value) is not None:
        if not fill.batched:
            return bx.call(op.name, {"a": a.text, "fill_value": fill.text}, p), False
        shape, n = _shape_text(bx, params["shape"])
        fill = bx.expand(fill, n)
        dtype = p.get("dtype", f"{a.text}.dtype")
        return bx.call("full", {"fill_value": fill.text},
                       {"shape": shape, "dtype": dtype}), True
    ab = a if a.batched else bx.broadcast(a)
    fill = bx.expand(fill, a.ndim)
    return bx.call(op.name, {"a": ab.text, "fill_value": fill.text}, p), True


@rule("array", "asarray")
def array(bx, op, vals, params, t):
    _no_batched_params(params, op)
    name = "object" if op.name == "array" else "a"
    obj = vals[name]
    ndmin = params["ndmin"].value if "ndmin" in params else 0
    dtype = repr(str(t.dtype))
    if isinstance(obj, Val) and isinstance(obj.t, ListType):
        stacked = bx.tmp("t", bx.call(op.name, {name: obj.text}, {"dtype": dtype}))
        return bx.call("moveaxis", {"a": stacked}, {"source": "0", "destination": "1"}), True
    if isinstance(obj, list):
        built = _stack_sequence(bx, obj)
    elif isinstance(obj.t, SequenceType):
        built = _stack_sequence(bx, [Val(f"{obj.text}[{k}]", e, _sub(obj.b, k))
                                     for k, e in enumerate(obj.t.elts)])
    else:
        built = obj
    out = bx.call("astype", {"x": built.text}, {"dtype": dtype}) if built is not obj else \
        bx.call(op.name, {name: built.text}, {"dtype": dtype})
    if ndmin > built.ndim:
        out = bx.call("expand_dims", {"a": bx.tmp("t", out)},
                      {"axis": _lit(tuple(range(1, 1 + ndmin - built.ndim)))})
    return out, True


def _stack_sequence(bx, elts):
    """A nested sequence of per-example values stacked the way array() does, batched."""
    parts = []
    for v in elts:
        t = unwrap(v.t)
        if isinstance(t, SequenceType):
            parts.append(_stack_sequence(bx, [Val(f"{v.text}[{k}]", e, _sub(v.b, k))
                                              for k, e in enumerate(t.elts)]))
        else:
            parts.append(v if v.batched else bx.broadcast(v))
    ndim = parts[0].ndim
    text = bx.tmp("t", bx.call("stack", {"arrays": _tuple([p.text for p in parts])},
                               {"axis": "1"}))
    return Val(text, ArrayType(_result_dtype(parts), (False,) * (ndim + 1)), True)


def _result_dtype(parts):
    from ..ir.types import as_array_type
    from .. import dtypes
    return dtypes.promote_types(*[(as_array_type(p.t).dtype, as_array_type(p.t).weak)
                                  for p in parts])[0]


@rule("linspace")
def linspace(bx, op, vals, params, t):
    _no_batched_params(params, op)
    start, stop = vals["start"], vals["stop"]
    ndim = max(start.ndim, stop.ndim)
    p = _params(params)
    axis = params["axis"].value if "axis" in params else 0
    p["axis"] = _lit(normalize_axis(axis, ndim + 1, "linspace") + 1)
    return bx.call(op.name, {"start": bx.expand(start, ndim).text,
                             "stop": bx.expand(stop, ndim).text}, p), True


# --- derivative-code ops -----------------------------------------------------------------------

@rule("cotangent_like")
def cotangent_like(bx, op, vals, params, t):
    d, z = vals["d"], vals["z"]
    zb = z if z.batched else bx.broadcast(z)
    return bx.call(op.name, {"d": bx.expand(d, z.ndim).text, "z": zb.text}), True


@rule("unbroadcast")
def unbroadcast(bx, op, vals, params, t):
    g, like = vals["g"], vals["like"]
    gb = g if g.batched else bx.broadcast(g)
    lb = like if like.batched else bx.broadcast(like)
    lead = gb.ndim - lb.ndim
    text = gb.text
    if lead > 0:
        text = bx.tmp(bx._hint(g.text, "sum"), bx.call(
            "sum", {"a": text}, {"axis": _lit(tuple(range(1, lead + 1)))}))
    return bx.call(op.name, {"g": text, "like": lb.text}), True


