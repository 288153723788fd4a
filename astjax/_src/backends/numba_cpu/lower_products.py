"""Lowerings of the products Numba cannot call: ``matmul`` with batch dims and ``einsum``.

Numba's ``np.dot`` takes 1-D/2-D arrays of one float dtype, so both ops are
first described as a contraction: for each operand, one label per dim (batch
dims of matmul are labelled like einsum's ``...``), plus the output's labels.
Subscripts are static, so the plan is made here, at generation time:

  * two float operands whose labels split into batch (both operands and the
    output), free (one operand and the output) and contracted (both operands,
    not the output) labels: each operand is transposed and reshaped to
    ``(batch, free, contracted)``, then one ``np.dot`` (BLAS) per batch element
    writes into a preallocated result, reshaped and transposed to the output;
  * anything else (integers, one operand, traces, diagonals, labels summed in
    one operand only): a loop nest, output indices outer and summed indices
    inner, accumulating in the output dtype;
  * three or more operands: contracted two at a time, left to right (each step
    planned as above), so a chain ``ij,jk,kl->il`` costs two matrix products,
    not one loop over every label at once.

A dim known to be 1 is indexed at 0 and takes no part in the sizes, so it
broadcasts as in NumPy; a label whose sizes differ at run time (a size-1 dim
the types did not know) raises ``_Broadcast`` and the call reruns on the python
backend, which does what NumPy does.
"""
import copy

import numpy as np

from ...ir import anno
from ...ir.types import ArrayType, Static, as_array_type
from ...ops.linalg import _parse_einsum
from .emitter import Unsupported
from .fusion import Loop, tuple_source
from .lowering import _INDENT, _dot, dot_lines, lowering
from .scalar import cast, typed_literal

_BLAS = (np.float32, np.float64, np.complex64, np.complex128)


class _Operand:
    """One operand of a contraction: its source, type and a label per dim."""

    def __init__(self, node, text, t, labels):
        self.node = node
        self.text = text
        self.type = t
        self.labels = labels  # one per dim, in order

    def live(self):
        """(dim, label) of the dims not known to be 1: only these are indexed by a label."""
        return [(d, label) for d, (label, one) in enumerate(zip(self.labels, self.type.ones))
                if not one]


def _label_name(label):
    if isinstance(label, str):
        return label
    return f"batch{label[1]}"  # an ellipsis / batch dim, counted from the right


def _sizes(c, operands, out_labels, what):
    """Lines binding a size name per label, checking that the operands agree on it.
    Returns (lines, label -> size source); labels of known-1 dims only have size "1"."""
    names = c.emitter.names
    lines, size, source = [], {}, {}
    mismatch = f"{c.where}: {what}: operand sizes differ"
    for op in operands:
        for d, label in op.live():
            dim = f"{op.text}.shape[{d}]"
            if label not in size:
                size[label] = names.fresh("n")
                source[label] = {dim}
                lines.append(f"{size[label]} = {dim}  # {_label_name(label)}")
            elif dim not in source[label]:  # (one array passed twice needs no check)
                source[label].add(dim)
                lines += [f"if {dim} != {size[label]}:",
                          _INDENT + f"raise {c.emitter.broadcast_error}({mismatch!r})"]
    for op in operands:
        for label in op.labels:
            size.setdefault(label, "1")
    for label in out_labels:
        size.setdefault(label, "1")
    return lines, size


def contract(c, operands, out_labels, what):
    """Source lines for ``c.target``: the contraction of ``operands`` into ``out_labels``."""
    dtype = np.dtype(c.out.dtype)
    if dtype.kind not in "biufc" or (dtype.kind in "fc" and dtype.itemsize < 4):
        raise Unsupported(f"{what} of {dtype.name}")
    if len(operands) > 2:
        return _pairwise(c, operands, out_labels, what)
    lines, size = _sizes(c, operands, out_labels, what)
    plan = _blas_plan(operands, out_labels, dtype)
    if plan is not None:
        return lines + _blas(c, operands, out_labels, size, plan, what)
    return lines + _loop_nest(c, operands, out_labels, size, what)


def _pairwise(c, operands, out_labels, what):
    """Contract the first two operands into an intermediate that keeps the labels the
    output or a later operand still needs, then go on with it and the rest."""
    first, second, rest = operands[0], operands[1], operands[2:]
    needed = set(out_labels) | {label for op in rest for label in op.labels}
    labels = []
    for label in first.labels + second.labels:
        if label in needed and label not in labels:
            labels.append(label)
    live = {label for op in (first, second) for _, label in op.live()}
    t = ArrayType(np.dtype(c.out.dtype), tuple(label not in live for label in labels), False)
    step = copy.copy(c)
    step.target, step.out = c.emitter.names.fresh("pair"), t
    lines = contract(step, [first, second], labels, what)
    return lines + contract(c, [_Operand(None, step.target, t, labels)] + rest, out_labels,
                            what)


# --- BLAS: transpose and reshape to (batch, free, contracted), np.dot per batch element -----

def _blas_plan(operands, out_labels, dtype):
    """(batch, free_a, free_b, contracted) labels, or None when the contraction is not a
    (batched) matrix product of two float operands."""
    if len(operands) != 2 or dtype.type not in _BLAS:
        return None
    a, b = (set(label for _, label in op.live()) for op in operands)
    for op in operands:
        live = [label for _, label in op.live()]
        if op.type.ndim == 0 or len(set(live)) != len(live):
            return None  # a scalar, or a label repeated in one operand (a diagonal)
    out = set(out_labels)
    if (a - b - out) or (b - a - out):
        return None  # summed in one operand only: the loop nest sums it
    contracted = [label for _, label in operands[0].live() if label in b and label not in out]
    if not contracted:
        return None  # no sum: an outer product, elementwise work for a loop
    batch = [label for label in out_labels if label in a and label in b]
    free_a = [label for label in out_labels if label in a and label not in b]
    free_b = [label for label in out_labels if label in b and label not in a]
    return batch, free_a, free_b, contracted


def _product(size, labels):
    return " * ".join(size[label] for label in labels) if labels else "1"


def _prepared(c, op, order, shape, dtype, batched):
    """Source of operand ``op`` with its live dims in ``order`` and reshaped to ``shape``
    (sizes of the label groups), in ``dtype``, contiguous (or its transpose)."""
    text = op.text
    if op.type.dtype != dtype:
        text = f"{text}.astype(np.{dtype.name})"
    dims = {label: d for d, label in op.live()}
    live = [dims[label] for label in order]
    # dims known to be 1 may stay anywhere: a reshape drops them; only the live dims'
    # order decides whether a transposed copy is needed
    in_order = live == sorted(live)
    # (np.ascontiguousarray returns a contiguous array itself: Numba's np.dot wants one)
    if in_order and op.type.ndim == len(shape):  # already the matrix or vector np.dot takes
        return f"_rt.ascontiguousarray({text})"
    if not batched and op.type.ndim == len(shape) == 2:
        return f"_rt.ascontiguousarray({text}).T"  # BLAS reads the transposed layout
    if not in_order:
        perm = [d for d, one in enumerate(op.type.ones) if one] + live
        text = f"_rt.transpose({text}, {tuple_source(map(str, perm))})"
    return f"_rt.ascontiguousarray({text}).reshape({tuple_source(shape)})"


def _blas(c, operands, out_labels, size, plan, what):
    batch, free_a, free_b, contracted = plan
    dtype = np.dtype(c.out.dtype)
    names = c.emitter.names
    a, b = operands
    kept = [label for label in out_labels if label in batch + free_a + free_b]
    if kept != batch + free_a + free_b and kept == batch + free_b + free_a:
        a, b, free_a, free_b = b, a, free_b, free_a  # (b a^T) is the output's order already
    lines = [f"# {what}: np.dot (BLAS) on (batch, free, contracted) reshapes"]
    group = {"batch": _product(size, batch), "m": _product(size, free_a),
             "k": _product(size, contracted), "n": _product(size, free_b)}
    a_shape = ([group["batch"]] if batch else []) + ([group["m"]] if free_a else []) + \
        [group["k"]]
    b_shape = ([group["batch"]] if batch else []) + [group["k"]] + \
        ([group["n"]] if free_b else [])
    x = [names.fresh("x"), names.fresh("x")]
    prepared = [_prepared(c, a, batch + free_a + contracted, a_shape, dtype, bool(batch)),
                _prepared(c, b, batch + contracted + free_b, b_shape, dtype, bool(batch))]
    lines += [f"{x[0]} = {prepared[0]}", f"{x[1]} = {prepared[1]}"]
    r = names.fresh("prod")
    if not batch:
        lines += dot_lines(c, r, x[0], x[1], bool(free_a))
    else:
        nb = names.fresh("nb")
        i = names.fresh("i")
        r_shape = [nb] + ([group["m"]] if free_a else []) + ([group["n"]] if free_b else [])
        lines.append(f"{nb} = {group['batch']}")
        lines.append(f"{r} = _rt.empty({tuple_source(r_shape)}, np.{dtype.name})")
        if c.emitter.parallel and (free_a or free_b):
            lines.append(f"_rt.batched_dot_on_threads({x[0]}, {x[1]}, {r})  # into {r}")
        else:
            lines.append(f"for {i} in range({nb}):")
            if free_a or free_b:
                lines.append(_INDENT + f"_rt.dot_into({x[0]}[{i}], {x[1]}[{i}], {r}[{i}])  # into {r}")
            else:
                lines.append(_INDENT + f"{r}[{i}] = _rt.dot({x[0]}[{i}], {x[1]}[{i}])")
    if c.out.ndim == 0:
        return lines + [f"{c.target} = {r}"]
    if not (batch or free_a or free_b):  # a dot of vectors: a scalar, in dims known to be 1
        shape = tuple_source([size[label] for label in out_labels])
        return lines + [f"{c.target} = _rt.full({shape}, {r})"]
    # the product's dims are the groups batch, free_a, free_b; output labels no operand
    # has (their dims are known 1) come last
    order = batch + free_a + free_b
    for p, label in enumerate(out_labels):  # each after the label it follows in the output
        if label not in order:
            order.insert(order.index(out_labels[p - 1]) + 1 if p else 0, label)
    lone = len(order) > len(batch + free_a + free_b)
    groups = [g for g in (batch, free_a, free_b) if g]
    if [len(g) for g in groups] != [1] * len(groups) or lone:
        lines.append(f"{r} = {r}.reshape({tuple_source([size[label] for label in order])})")
    perm = [order.index(label) for label in out_labels]
    if perm != list(range(len(perm))):
        lines.append(f"{r} = _rt.ascontiguousarray(_rt.transpose({r}, "
                     f"{tuple_source(map(str, perm))}))")
    return lines + [f"{c.target} = {r}"]


# --- the loop nest -------------------------------------------------------------------------

def _loop_nest(c, operands, out_labels, size, what):
    dtype = np.dtype(c.out.dtype)
    names = c.emitter.names
    labels = []
    for label in list(out_labels) + [label for op in operands for label in op.labels]:
        if label not in labels:
            labels.append(label)
    index = {label: names.fresh("i") for label in labels}
    summed = [label for label in labels if label not in out_labels and size[label] != "1"]
    lines = [f"# {what}: a loop nest, output indices outer, summed indices inner"]
    factors = []
    for op in operands:
        if op.type.ndim == 0:
            factors.append(Loop(c.emitter, 0, c.where).operand(op.node, dtype))
            continue
        at = ", ".join("0" if one else index[label]
                       for label, one in zip(op.labels, op.type.ones))
        factors.append(cast(f"{op.text}[{at}]", op.type.dtype, dtype))
    term = " and ".join(factors) if dtype.kind == "b" else " * ".join(factors)
    depth = 0
    out_loops = [label for label in out_labels if size[label] != "1"]
    result = names.fresh("out") if c.out.ndim else None
    if result is not None:
        shape = tuple_source([size[label] for label in out_labels])
        lines.append(f"{result} = _rt.empty({shape}, np.{dtype.name})")
    for label in out_loops:
        lines.append(_INDENT * depth + f"for {index[label]} in range({size[label]}):")
        depth += 1
    at = ", ".join("0" if size[label] == "1" else index[label] for label in out_labels)
    store = f"{result}[{at}]" if result is not None else c.target
    narrow = dtype.kind in "iu"  # Numba widens integer products: wrap back, as JAX does
    if not summed:
        value = f"np.{dtype.name}({term})" if narrow else term
        lines.append(_INDENT * depth + f"{store} = {value}")
    else:
        acc = names.fresh("acc")
        lines.append(_INDENT * depth + f"{acc} = {typed_literal(0, dtype)}")
        inner = depth
        for label in summed:
            lines.append(_INDENT * inner + f"for {index[label]} in range({size[label]}):")
            inner += 1
        combined = f"{acc} or {term}" if dtype.kind == "b" else f"{acc} + {term}"
        lines.append(_INDENT * inner + f"{acc} = {combined}")
        lines.append(_INDENT * depth + f"{store} = " + (f"np.{dtype.name}({acc})" if narrow
                                                        else acc))
    if result is not None:
        lines.append(f"{c.target} = {result}")
    return lines


# --- the ops -------------------------------------------------------------------------------

def _operand(c, node, labels):
    t = anno.get(node, "type")
    if isinstance(t, Static) and not anno.get(node, "captured"):
        t = as_array_type(t)
        if t.ndim:
            raise Unsupported("a static array operand")
        return _Operand(node, None, t, labels)
    if not isinstance(t, ArrayType):
        raise Unsupported(f"a product of {t}")
    return _Operand(node, c.emitter.atom(node), t, labels)


@lowering("matmul")
def _matmul(c):
    """``a @ b``: 1-D/2-D operands of one float dtype are ``np.dot`` itself; with batch
    dims (broadcast as in NumPy), a 1-D operand as a row (a) or a column (b) vector."""
    a_type, b_type = as_array_type(c.type("a")), as_array_type(c.type("b"))
    if a_type.ndim <= 2 and b_type.ndim <= 2 and a_type.dtype == b_type.dtype \
            and a_type.dtype.type in _BLAS and c.out.dtype == a_type.dtype:
        return _dot(c)
    if a_type.ndim == 0 or b_type.ndim == 0:
        raise Unsupported("matmul of a scalar")
    batch = max(a_type.ndim, b_type.ndim) - 2

    def labels(t, matrix):
        own = matrix if t.ndim >= 2 else ["k"]  # a vector: only the contracted dim
        return [(None, j) for j in range(t.ndim - len(own), 0, -1)] + own
    a = _operand(c, c.operands["a"], labels(a_type, ["m", "k"]))
    b = _operand(c, c.operands["b"], labels(b_type, ["k", "n"]))
    out = [(None, j) for j in range(max(batch, 0), 0, -1)] + \
        (["m"] if a_type.ndim >= 2 else []) + (["n"] if b_type.ndim >= 2 else [])
    return contract(c, [a, b], out, f"matmul of {a_type} and {b_type}")


@lowering("einsum")
def _einsum(c):
    subscripts = c.param("subscripts")
    nodes = c.operands["operands"]
    nodes = nodes if isinstance(nodes, tuple) else (nodes,)
    types = [as_array_type(anno.get(n, "type")) for n in nodes]
    labels, out = _parse_einsum(subscripts, [t.ndim for t in types])
    operands = [_operand(c, n, ls) for n, ls in zip(nodes, labels)]
    return contract(c, operands, out, f"einsum {subscripts!r}")


@lowering("tensordot")
def _tensordot(c):
    from types import SimpleNamespace

    from ...ops.linalg import _tensordot_axes
    a_type, b_type = as_array_type(c.type("a")), as_array_type(c.type("b"))
    ax_a, ax_b = _tensordot_axes(SimpleNamespace(ndim=a_type.ndim),
                                 SimpleNamespace(ndim=b_type.ndim), c.param("axes", 2))
    a_labels = [f"a{d}" for d in range(a_type.ndim)]
    b_labels = [f"b{d}" for d in range(b_type.ndim)]
    for i, j in zip(ax_a, ax_b):  # contracted pairs share a label
        b_labels[j] = a_labels[i]
    out = [a_labels[d] for d in range(a_type.ndim) if d not in ax_a] + \
        [b_labels[d] for d in range(b_type.ndim) if d not in ax_b]
    a = _operand(c, c.operands["a"], a_labels)
    b = _operand(c, c.operands["b"], b_labels)
    return contract(c, [a, b], out, f"tensordot of {a_type} and {b_type}")


@lowering("inner")
def _inner(c):
    """The contraction of a's and b's last axes."""
    a_type, b_type = as_array_type(c.type("a")), as_array_type(c.type("b"))
    if a_type.ndim == 0 or b_type.ndim == 0:
        raise Unsupported("inner of a scalar")
    a_labels = [f"a{d}" for d in range(a_type.ndim - 1)] + ["k"]
    b_labels = [f"b{d}" for d in range(b_type.ndim - 1)] + ["k"]
    a = _operand(c, c.operands["a"], a_labels)
    b = _operand(c, c.operands["b"], b_labels)
    return contract(c, [a, b], a_labels[:-1] + b_labels[:-1], f"inner of {a_type} and {b_type}")


def nd_dot(c):
    """``np.dot`` of operands of rank 3 or more: a's last axis with b's second-to-last."""
    a_type, b_type = as_array_type(c.type("a")), as_array_type(c.type("b"))
    if a_type.ndim == 0 or b_type.ndim == 0:
        raise Unsupported("dot of a scalar")
    a_labels = [f"a{d}" for d in range(a_type.ndim)]
    b_labels = [f"b{d}" for d in range(b_type.ndim)]
    b_labels[max(b_type.ndim - 2, 0)] = a_labels[-1]
    out = a_labels[:-1] + [label for label in b_labels if label != a_labels[-1]]
    a = _operand(c, c.operands["a"], a_labels)
    b = _operand(c, c.operands["b"], b_labels)
    return contract(c, [a, b], out, f"dot of {a_type} and {b_type}")
