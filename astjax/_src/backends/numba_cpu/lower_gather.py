"""Indexing with integer arrays: gathers ``x[idx]``, ``x[:, idx]``, ``x[idx, 1]`` and the
scatters ``x.at[idx].add(v)`` (the gather's adjoint) and ``set``/``subtract``/
``multiply``/``min``/``max``, as loop nests with NumPy's semantics.

Slices are applied first as a view (``x[1:n, :]``, Numba's basic indexing); then
one loop per output dim reads (or, for a scatter, updates) that view, the
integer and index-array items giving the view's index on their axes. Index
arrays broadcast together; their dims go where NumPy puts them (in place when
the advanced items are adjacent, else first). A negative index counts from the
end; an out-of-bounds one raises ``_Broadcast``, so the call reruns on the
python backend, which raises NumPy's IndexError as it would have.

An index that derivative code passes on (``s_[idx]``, type ``IndexType``) is,
at run time, a tuple holding its run-time parts (``index_value``); its static
parts are rebuilt from the type.
"""
import gast
import numpy as np

from ...ir import anno
from ...ir.types import ArrayType, IndexType, SequenceType, Static, as_array_type
from .emitter import Unsupported
from .fusion import Loop, tuple_source
from .scalar import cast

_INDENT = "    "


class Item:
    """One item of an index: ``kind`` is new, ellipsis, slice, int, array or mask;
    ``text`` its source (a slice as ``a:b``, or a slice object)."""

    def __init__(self, kind, text=None, type=None):
        self.kind = kind
        self.text = text
        self.type = type


def _static_item(emitter, value):
    if value is None:
        return Item("new", "None")
    if value is Ellipsis:
        return Item("ellipsis", "...")
    if isinstance(value, slice):
        parts = ["" if p is None else emitter.literal(p) for p in (value.start, value.stop,
                                                                   value.step)]
        return Item("slice", f"{parts[0]}:{parts[1]}" + (f":{parts[2]}" if parts[2] else ""))
    if isinstance(value, (bool, np.bool_)):
        raise Unsupported("a boolean scalar index")
    if isinstance(value, (int, np.integer)):
        return Item("int", emitter.literal(int(value)))
    if isinstance(value, (list, tuple, np.ndarray)):
        arr = np.asarray(value)
        if arr.ndim != 1 or arr.dtype.kind not in "iu" or arr.size == 0:
            raise Unsupported("this static index list")
        t = ArrayType(np.dtype(np.int64), (arr.size == 1,))
        return Item("array", f"np.array({arr.tolist()!r}, np.int64)", t)
    raise Unsupported(f"index item {value!r}")


def _dynamic_item(text, t):
    if isinstance(t, ArrayType):
        if t.dtype.kind == "b":
            raise Unsupported("indexing with a boolean mask")
        if t.dtype.kind not in "iu":
            raise Unsupported(f"an index of {t}")
        return Item("int" if t.ndim == 0 else "array", text, t)
    raise Unsupported(f"an index of {t}")


def items(emitter, index):
    """The index param ``index`` (a node) as a list of ``Item``."""
    t = anno.get(index, "type")
    if isinstance(t, IndexType):  # a tuple of run-time parts: see ``index_value``
        name = emitter.atom(index)
        view = t.view
        parts = view if isinstance(view, tuple) else (view,)
        texts = [f"{name}[{k}]" for k in range(len(parts))] if isinstance(view, tuple) \
            else [name]
        out = []
        for part, text in zip(parts, texts):
            if isinstance(part, slice) and any(isinstance(p, ArrayType) for p in (
                    part.start, part.stop, part.step)):
                out.append(Item("slice", text))  # a slice object built at run time
            elif isinstance(part, ArrayType):
                out.append(_dynamic_item(text, part))
            else:
                out.append(_static_item(emitter, part))
        return out
    if isinstance(t, Static) and isinstance(t.value, tuple) and not anno.get(index, "captured"):
        return [_static_item(emitter, v) for v in t.value]  # a static tuple: one item each
    if isinstance(t, SequenceType) and t.kind == "tuple":  # m[idx], idx = tril_indices(n)
        name = emitter.atom(index)
        return [_static_item(emitter, e.value) if isinstance(e, Static) else
                _dynamic_item(f"{name}[{k}]", e) for k, e in enumerate(t.elts)]
    nodes = index.elts if isinstance(index, gast.Tuple) else [index]
    out = []
    for node in nodes:
        if isinstance(node, gast.Slice):
            out.append(Item("slice", emitter.index(node)))
            continue
        t = anno.get(node, "type")
        if isinstance(t, Static) and not anno.get(node, "captured"):
            out.append(_static_item(emitter, t.value))
        else:
            out.append(_dynamic_item(emitter.atom(node), t))
    return out


def advanced(index_items):
    return any(item.kind in ("array", "mask") for item in index_items)


def basic_text(index_items):
    """Source of a basic index (no arrays) for ``x[...]``."""
    text = ", ".join(item.text for item in index_items)
    return text + ("," if len(index_items) == 1 else "")


def bounds_checks(c, x, ndim, index_items):
    """Lines raising ``_Broadcast`` (the call then reruns on the python backend, where
    NumPy raises its IndexError at the user's line) when an integer item of a basic index
    is out of bounds: Numba would read or write outside the array."""
    consuming = [item for item in index_items if item.kind in ("slice", "int")]
    lines, axis = [], 0
    for item in index_items:
        if item.kind == "ellipsis":  # the items after it index the last axes
            axis = ndim - (len(consuming) - axis)
        elif item.kind in ("slice", "int"):
            if item.kind == "int" and axis < ndim and len(consuming) <= ndim:
                size = f"{x}.shape[{axis}]"
                lines += [f"if not (-{size} <= {item.text} < {size}):",
                          _INDENT + f"raise {c.emitter.broadcast_error}("
                                    f"{c.where + ': index out of bounds'!r})"]
            axis += 1
    return lines


def index_value(emitter, node):
    """Source of ``s_[...]`` (``node``, a Subscript typed ``IndexType``) in compiled code:
    a tuple of its run-time parts, ``None`` in place of the static ones."""
    index = node.slice
    parts = index.elts if isinstance(index, gast.Tuple) else [index]
    texts = []
    for part in parts:
        if isinstance(part, gast.Slice):
            bounds = [part.lower, part.upper, part.step]
            if any(b is not None and not isinstance(anno.get(b, "type"), Static)
                   for b in bounds):
                args = ", ".join("None" if b is None else emitter.atom(b) for b in bounds)
                texts.append(f"slice({args})")
                continue
            texts.append("None")
            continue
        t = anno.get(part, "type")
        static = isinstance(t, Static) and not anno.get(part, "captured")
        texts.append("None" if static else emitter.atom(part))
    if not isinstance(index, gast.Tuple):
        return texts[0]
    return tuple_source(texts) if texts else "()"


# --- the loop nest shared by gathers and scatters ----------------------------------------------

class _Plan:
    """How the output dims of ``x[index]`` map to a view of ``x`` and to the index arrays."""

    def __init__(self, c, x, x_type, index_items, names):
        self.lines = []
        self.error = c.emitter.broadcast_error  # _Broadcast, or past a donated write
        if any(item.kind == "mask" for item in index_items):
            raise Unsupported("indexing with a boolean mask")
        used = sum(item.kind in ("slice", "int", "array") for item in index_items)
        if used > x_type.ndim:
            raise Unsupported("too many indices")
        # NumPy: advanced items (arrays and ints) side by side put their dims in place,
        # else first; anything between them (a slice, None, ...) separates them
        positions = [p for p, item in enumerate(index_items) if item.kind in ("int", "array")]
        adjacent = positions == list(range(positions[0], positions[0] + len(positions)))
        expanded = []  # (item, position)
        for p, item in enumerate(index_items):
            if item.kind == "ellipsis":
                expanded += [(Item("slice", ":"), p)] * (x_type.ndim - used)
            else:
                expanded.append((item, p))
        expanded += [(Item("slice", ":"), len(index_items))] * (
            x_type.ndim - sum(item.kind != "new" for item, _ in expanded))
        self.expanded = expanded
        # the view: slices applied, advanced axes kept whole
        consumed = [(item, p) for item, p in expanded if item.kind != "new"]
        view_index = [item.text if item.kind == "slice" else ":" for item, _ in consumed]
        if all(text == ":" for text in view_index):
            self.view = x
        else:
            self.view = names.fresh("view")
            self.lines.append(f"{self.view} = {x}[{', '.join(view_index)}]")
        self.consumed = consumed
        arrays = [item for item, _ in consumed if item.kind == "array"]
        rank = max(item.type.ndim for item in arrays)
        # sizes of the broadcast index-array dims
        mismatch = f"{c.where}: index arrays of different shapes"
        adv_sizes = []
        for j in range(rank):
            found = [f"{item.text}.shape[{q}]" for item in arrays
                     for q in range(item.type.ndim)
                     if rank - item.type.ndim + q == j and not item.type.ones[q]]
            if not found:
                adv_sizes.append("1")
                continue
            size = names.fresh("na")
            self.lines.append(f"{size} = {found[0]}")
            for other in dict.fromkeys(found[1:]):
                if other != found[0]:
                    self.lines += [f"if {other} != {size}:",
                                   _INDENT + f"raise {self.error}({mismatch!r})"]
            adv_sizes.append(size)
        self.adv_rank = rank
        # output dims: ("basic", view dim or None for a new axis) or ("adv", j)
        basic = []
        v = 0
        for item, p in expanded:
            if item.kind == "new":
                basic.append((p, ("basic", None)))
            elif item.kind == "slice":
                basic.append((p, ("basic", v)))
            if item.kind != "new":
                v += 1
        adv = [("adv", j) for j in range(rank)]
        if adjacent:
            first = positions[0]
            dims = [d for p, d in basic if p < first] + adv + [d for p, d in basic if p > first]
        else:
            dims = adv + [d for _, d in basic]
        self.dims = dims
        self.sizes = [adv_sizes[j] if kind == "adv" else
                      ("1" if j is None else f"{self.view}.shape[{j}]") for kind, j in dims]
        # a dim of size 1 (a new axis) needs no loop: its index is 0
        self.idx = ["0" if size == "1" else names.fresh("i") for size in self.sizes]
        self.names = names
        self.where = c.where

    def tail(self):
        """How many trailing output dims are trailing dims of the view, in order: a gather
        copies them as one slice instead of looping."""
        count, v = 0, len(self.consumed) - 1
        for kind, j in reversed(self.dims):
            if kind != "basic" or j is None or j != v or self.consumed[v][0].kind != "slice":
                break
            count += 1
            v -= 1
        return count

    def view_index(self, before, body, skip=0):
        """Lines normalizing each advanced item's index (into ``before`` the loops for an
        integer, into the loop ``body`` for an array element), and the source indexing the
        view; the last ``skip`` view dims are left whole."""
        at = []
        out_dim = {d: k for k, d in enumerate(self.dims)}
        oob = f"{self.where}: index out of bounds"
        n_view = len(self.consumed)
        for v, (item, _) in enumerate(self.consumed):
            if v >= n_view - skip:
                break
            if item.kind == "slice":
                at.append(self.idx[out_dim[("basic", v)]])
                continue
            if item.kind == "int":
                value = item.text
            else:
                t = item.type
                sub = ", ".join("0" if t.ones[q] else self.idx[out_dim[
                    ("adv", self.adv_rank - t.ndim + q)]] for q in range(t.ndim))
                value = f"{item.text}[{sub}]"
                if t.dtype == np.uint64:
                    value = f"np.int64({value})"  # uint64 + int64 is a float in Numba
            j = self.names.fresh("j")
            size = f"{self.view}.shape[{v}]"
            (before if item.kind == "int" else body).extend([
                     f"{j} = {value}",
                     f"if {j} < 0:",
                     _INDENT + f"{j} += {size}  # from the end, as in NumPy",
                     f"if {j} < 0 or {j} >= {size}:",
                     _INDENT + f"raise {self.error}({oob!r})  # NumPy's IndexError, from python"])
            at.append(j)
        return at

    def nest(self, body, loops=None):
        loops = len(self.dims) if loops is None else loops
        lines = [f"for {self.idx[d]} in range({self.sizes[d]}):" for d in range(loops)
                 if self.idx[d] != "0"]
        lines = [_INDENT * depth + line for depth, line in enumerate(lines)]
        return lines + [_INDENT * len(lines) + line for line in body]


def gather(c, x, x_type, index_items):
    """``x[index]`` with at least one integer index array."""
    names = c.emitter.names
    plan = _Plan(c, x, x_type, index_items, names)
    if len(plan.dims) != c.out.ndim:
        raise Unsupported("this index")  # a case the rule and this plan read differently
    tail = plan.tail()
    loops = len(plan.dims) - tail
    out = names.fresh("gathered")
    lines = [f"# {x}[...] with an index array: a loop per output dim"] + plan.lines
    lines.append(f"{out} = _rt.empty({tuple_source(plan.sizes)}, np.{x_type.dtype.name})")
    body = []
    at = plan.view_index(lines, body, skip=tail)
    target = ", ".join(plan.idx[:loops])
    source = ", ".join(at)
    if tail:
        body.append(f"{out}[{target}] = {plan.view}[{source}]  # the last {tail} dim(s) "
                    f"as one slice")
    else:
        body.append(f"{out}[{target}] = {plan.view}[{source}]")
    lines += plan.nest(body, loops)
    return lines + [f"{c.target} = {out}"]


_COMBINE = {"at_set": None, "at_add": "+", "at_subtract": "-", "at_multiply": "*",
            "at_min": "_rt.minimum", "at_max": "_rt.maximum"}


def scatter(c, x, x_type, index_items):
    """``x.at[index].<op>(values)`` with at least one integer index array: a copy of x,
    updated element by element in order (repeated positions accumulate, or for ``set``
    the last write wins, as NumPy's ``ufunc.at`` and assignment do)."""
    name = c.op.name
    if name not in _COMBINE:
        raise Unsupported(f"x.at[array].{name[3:]}")
    names = c.emitter.names
    copy = names.fresh(f"{c.target}_at")
    lines = ["# x.at[...] with an index array: element by element, in order",
             f"{copy} = {x}.copy()"]
    plan = _Plan(c, copy, x_type, index_items, names)
    lines += plan.lines
    values = c.operands["values"]
    v_type = as_array_type(c.type("values"))
    body = []
    at = ", ".join(plan.view_index(lines, body))
    dtype = x_type.dtype
    if v_type.ndim == 0:
        value = Loop(c.emitter, 0, c.where).operand(values, dtype)
    else:
        # values broadcast against x[index]: right-aligned, dims known 1 read at 0
        v_text = c.emitter.atom(values)
        rank = len(plan.dims)
        mismatch = f"{c.where}: values do not broadcast to x[idx]"
        for q in range(v_type.ndim):
            if not v_type.ones[q]:
                lines += [f"if {v_text}.shape[{q}] != {plan.sizes[rank - v_type.ndim + q]}:",
                          _INDENT + f"raise {c.emitter.broadcast_error}({mismatch!r})"]
        sub = ", ".join("0" if v_type.ones[q] else plan.idx[rank - v_type.ndim + q]
                        for q in range(v_type.ndim))
        value = cast(f"{v_text}[{sub}]", v_type.dtype, dtype)
    place = f"{plan.view}[{at}]"
    symbol = _COMBINE[name]
    if symbol is None:
        new = value
    elif dtype.kind == "b" and symbol in "+*":
        new = f"{place} {'or' if symbol == '+' else 'and'} {value}"
    elif symbol.startswith("_rt"):
        new = f"{symbol}({place}, {value})"
    else:
        new = f"{place} {symbol} {value}"
        if dtype.kind in "iu":
            new = f"np.{dtype.name}({new})"  # Numba widens: wrap back as JAX does
    body.append(f"{place} = {new}")
    lines += plan.nest(body)
    return lines + [f"{c.target} = {copy}"]
