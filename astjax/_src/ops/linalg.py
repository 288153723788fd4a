"""Products and transposes: dot, matmul (``@``), vdot, inner, outer, tensordot, einsum,
transpose, matrix_transpose, trace.

Products promote their operands to one dtype (JAX's rules) and compute in it:
integer products stay int32, booleans stay bool. ``precision`` is accepted for
JAX compatibility and ignored (NumPy always computes at full precision);
``preferred_element_type`` sets the dtype the product is computed and
returned in.
"""
import operator
import string

import numpy as np

from .. import dtypes
from ..errors import ShapeError
from ..ir.types import ArrayType, SequenceType, as_array_type
from .registry import Op, register_method, register_name
from .shape import (broadcast_dims, normalize_axes, normalize_axis,
                    numpy_functions, plain, star_types, static_int)

_PRODUCT_PARAMS = ("precision", "preferred_element_type")


def _out_dtype(op, operand_types, preferred):
    """(dtype, weak) of a product: the promoted dtype, or preferred_element_type."""
    if preferred is not None:
        return dtypes.canonicalize_dtype(preferred), False
    return op.promoted_dtype(operand_types)


def _common(operands, preferred):
    """The operands as arrays of the dtype the product computes in.

    Eager mode and generated code have cast them to the promoted dtype already,
    except Python scalar literals, which ``np.result_type`` treats as weak.
    """
    dtype = (dtypes.canonicalize_dtype(preferred) if preferred is not None
             else np.result_type(*operands))
    return [np.asarray(x, dtype) for x in operands], dtype


def _product_op(name, compute, rule, aliases=()):
    """A two-operand product ``name(a, b, *, precision=None, preferred_element_type=None)``;
    ``rule(a, b)`` gives the ``ones`` of the result from the two array types."""
    def impl(a, b, *, precision=None, preferred_element_type=None):
        (a, b), dtype = _common((a, b), preferred_element_type)
        return np.asarray(compute(a, b), dtype)

    def abstract_eval(a, b, *, precision=None, preferred_element_type=None):
        dtype, weak = _out_dtype(op, {"a": a, "b": b}, preferred_element_type)
        return ArrayType(dtype, rule(as_array_type(a), as_array_type(b)), weak)

    op = Op(name, impl, abstract_eval, operands=("a", "b"), promote=("a", "b"),
            static=_PRODUCT_PARAMS, aliases=aliases)
    return op


def _dot_ones(a, b):
    if a.ndim == 0 or b.ndim == 0:  # a scalar factor: elementwise product
        return broadcast_dims(a.ones, b.ones)
    if b.ndim == 1:  # sum over the last axis of a and b's only axis
        return a.ones[:-1]
    return a.ones[:-1] + b.ones[:-2] + b.ones[-1:]


def _matmul_ones(a, b):
    if a.ndim == 0 or b.ndim == 0:
        raise ShapeError("matmul(): both operands must be at least 1-D, got a 0-d array; "
                         "use * (jnp.multiply) to scale by a scalar")
    # a 1-D operand is a row (a) or column (b) vector whose vector dim is then dropped
    rows = a.ones[-2:-1] if a.ndim >= 2 else ()
    cols = b.ones[-1:] if b.ndim >= 2 else ()
    batch = broadcast_dims(a.ones[:-2], b.ones[:-2])
    return batch + rows + cols


def _inner_ones(a, b):
    if a.ndim == 0 or b.ndim == 0:
        return broadcast_dims(a.ones, b.ones)
    return a.ones[:-1] + b.ones[:-1]


dot = _product_op("dot", np.dot, _dot_ones, aliases=(np.dot,))
matmul = _product_op("matmul", np.matmul, _matmul_ones, aliases=(np.matmul, operator.matmul))
vdot = _product_op("vdot", np.vdot, lambda a, b: (), aliases=(np.vdot,))
inner = _product_op("inner", np.inner, _inner_ones, aliases=(np.inner,))


def _outer(a, b):
    return np.outer(*_common((a, b), None)[0])


def _outer_rule(a, b):
    dtype, weak = outer.promoted_dtype({"a": a, "b": b})
    # both operands are flattened: a dim is 1 when the whole operand is one element
    return ArrayType(dtype, (all(as_array_type(a).ones), all(as_array_type(b).ones)), weak)


outer = Op("outer", _outer, _outer_rule, operands=("a", "b"), promote=("a", "b"),
           aliases=(np.outer,))


# --- tensordot ---------------------------------------------------------------------------------

def _tensordot_axes(a, b, axes):
    """The contracted axes of a and of b, normalized."""
    axes = plain(axes)
    if isinstance(axes, (tuple, list)):
        if len(axes) != 2:
            raise ShapeError(f"tensordot(): axes must be an int or a pair (axes_a, axes_b), "
                             f"got {axes!r}")
        ax_a = normalize_axes(axes[0], a.ndim, "tensordot", "axes[0]")
        ax_b = normalize_axes(axes[1], b.ndim, "tensordot", "axes[1]")
        if len(ax_a) != len(ax_b):
            raise ShapeError(f"tensordot(): axes[0] and axes[1] must have the same length, "
                             f"got {axes!r}")
        return ax_a, ax_b
    n = static_int(axes, "tensordot", "axes")
    if not 0 <= n <= min(a.ndim, b.ndim):
        raise ShapeError(f"tensordot(): axes={n} must be between 0 and the smaller rank "
                         f"({a.ndim} and {b.ndim})")
    return tuple(range(a.ndim - n, a.ndim)), tuple(range(n))


def _tensordot(a, b, axes=2, *, precision=None, preferred_element_type=None):
    (a, b), dtype = _common((a, b), preferred_element_type)
    return np.asarray(np.tensordot(a, b, axes), dtype)


def _tensordot_rule(a, b, axes=2, *, precision=None, preferred_element_type=None):
    dtype, weak = _out_dtype(tensordot, {"a": a, "b": b}, preferred_element_type)
    a, b = as_array_type(a), as_array_type(b)
    ax_a, ax_b = _tensordot_axes(a, b, axes)
    ones = tuple(o for i, o in enumerate(a.ones) if i not in ax_a) + tuple(
        o for i, o in enumerate(b.ones) if i not in ax_b)
    return ArrayType(dtype, ones, weak)


tensordot = Op("tensordot", _tensordot, _tensordot_rule, operands=("a", "b"),
               promote=("a", "b"), static=("axes",) + _PRODUCT_PARAMS, aliases=(np.tensordot,))


# --- einsum ------------------------------------------------------------------------------------
# Parsed once at generation time into labels per operand; the dims an ellipsis
# covers get labels (None, k), numbered from the right so they broadcast as NumPy.

def _parse_term(term, ndim, k):
    """Labels of operand ``k``'s term (``"ij"``, ``"...j"``) for an array of rank ``ndim``."""
    if term.count("...") > 1 or any(c not in string.ascii_letters for c in
                                    term.replace("...", "")):
        raise ShapeError(f"einsum(): invalid subscripts {term!r} for operand {k}; use letters "
                         f"and at most one '...'")
    head, dots, tail = term.partition("...")
    width = ndim - len(head) - len(tail)
    if width < 0 or (width and not dots):
        raise ShapeError(f"einsum(): operand {k} has rank {ndim} but its subscripts "
                         f"{term!r} name {len(head) + len(tail)} axes")
    return list(head) + [(None, j) for j in range(width, 0, -1)] + list(tail)


def _parse_einsum(subscripts, ndims):
    """(labels per operand, output labels)."""
    if not isinstance(subscripts, str):
        raise ShapeError("einsum(): subscripts must be a string such as 'ij,jk->ik' (the "
                         "interleaved operand, sublist form is not supported)")
    spec = subscripts.replace(" ", "")
    inputs, arrow, output = spec.partition("->")
    terms = inputs.split(",")
    if len(terms) != len(ndims):
        raise ShapeError(f"einsum(): {subscripts!r} has {len(terms)} operand terms but "
                         f"{len(ndims)} operands were given")
    labels = [_parse_term(t, n, k) for k, (t, n) in enumerate(zip(terms, ndims))]
    width = max([n - len(t.replace("...", "")) for t, n in zip(terms, ndims)
                 if "..." in t], default=0)
    dots = [(None, j) for j in range(width, 0, -1)]
    letters = [c for ls in labels for c in ls if isinstance(c, str)]
    if not arrow:  # implicit output: the ellipsis, then letters used once, sorted
        return labels, dots + sorted(c for c in set(letters) if letters.count(c) == 1)
    head, has_dots, tail = output.partition("...")
    if width and not has_dots:
        raise ShapeError(f"einsum(): {subscripts!r}: the output needs '...' for the "
                         f"broadcast dims of the operands")
    for c in head + tail:
        if c not in letters or (head + tail).count(c) > 1:
            raise ShapeError(f"einsum(): output subscript {c!r} in {subscripts!r} must appear "
                             f"in an operand, and only once in the output")
    return labels, list(head) + (dots if has_dots else []) + list(tail)


def _einsum(subscripts, *operands, optimize="auto", precision=None,
            preferred_element_type=None):
    arrays, dtype = _common(operands, preferred_element_type)
    out = np.einsum(subscripts, *arrays, optimize=optimize is not False)
    return np.asarray(out, dtype)


def _einsum_rule(subscripts, operands, optimize="auto", precision=None,
                 preferred_element_type=None):
    elts = star_types(operands)
    types = [as_array_type(t) for t in elts]
    labels, out = _parse_einsum(plain(subscripts), [t.ndim for t in types])
    dtype, weak = _out_dtype(einsum, {"operands": SequenceType(elts)}, preferred_element_type)
    # a label's size is the broadcast of its dims, so it is 1 when every dim is known 1
    known = {}
    for t, ls in zip(types, labels):
        for one, label in zip(t.ones, ls):
            known[label] = known.get(label, True) and one
    return ArrayType(dtype, tuple(known.get(label, True) for label in out), weak)


einsum = Op("einsum", _einsum, _einsum_rule, operands=("operands",), promote=("operands",),
            static=("subscripts", "optimize") + _PRODUCT_PARAMS, aliases=(np.einsum,))


# --- transposes and trace ---------------------------------------------------------------------
# ``x.transpose(1, 0)`` calls ``transpose(x, 1, 0)``: further axes after the first come in
# ``*more``, so the method and ``jnp.transpose(x, (1, 0))`` are the same op.

def _transpose_axes(axes, more):
    axes, more = plain(axes), tuple(plain(more))
    return (axes,) + more if more else axes


def _transpose(a, axes=None, *more):
    return np.transpose(a, _transpose_axes(axes, more))


def _transpose_rule(a, axes=None, more=()):
    a = as_array_type(a)
    axes = _transpose_axes(axes, more)
    if axes is None:
        return ArrayType(a.dtype, a.ones[::-1], a.weak)
    perm = normalize_axes(axes, a.ndim, "transpose", "axes")
    if len(perm) != a.ndim:
        raise ShapeError(f"transpose(): axes {axes!r} must be a permutation of the {a.ndim} "
                         f"axes of the array")
    return ArrayType(a.dtype, tuple(a.ones[i] for i in perm), a.weak)


transpose = Op("transpose", _transpose, _transpose_rule, static=("axes", "more"),
               aliases=(np.transpose,))
register_name("permute_dims", transpose)


def _matrix_transpose_rule(x):
    x = as_array_type(x)
    if x.ndim < 2:
        raise ShapeError(f"matrix_transpose(): needs an array of rank 2 or more, got rank "
                         f"{x.ndim}")
    return ArrayType(x.dtype, x.ones[:-2] + x.ones[-1:] + x.ones[-2:-1], x.weak)


matrix_transpose = Op("matrix_transpose", lambda x: np.swapaxes(x, -1, -2),
                      _matrix_transpose_rule, aliases=numpy_functions("matrix_transpose"))


def _sum_dtype(dtype):
    """jnp.sum's result dtype: booleans and narrow integers widen to the default int width."""
    if dtype.kind == "b":
        return dtypes.default_int()
    if dtype.kind in "iu" and dtype.itemsize < dtypes.default_int().itemsize:
        return np.dtype(f"{dtype.kind}{dtypes.default_int().itemsize}")
    return dtype


def _trace_dtype(a_dtype, dtype):
    return dtypes.canonicalize_dtype(dtype) if dtype is not None else _sum_dtype(a_dtype)


def _trace(a, offset=0, axis1=0, axis2=1, dtype=None):
    out_dtype = _trace_dtype(np.asarray(a).dtype, dtype)
    return np.asarray(np.trace(a, offset, axis1, axis2, dtype=out_dtype), out_dtype)


def _trace_rule(a, offset=0, axis1=0, axis2=1, dtype=None):
    a = as_array_type(a)
    if a.ndim < 2:
        raise ShapeError(f"trace(): needs an array of rank 2 or more, got rank {a.ndim}")
    static_int(offset, "trace", "offset")
    i = normalize_axis(axis1, a.ndim, "trace", "axis1")
    j = normalize_axis(axis2, a.ndim, "trace", "axis2")
    if i == j:
        raise ShapeError(f"trace(): axis1 and axis2 must differ, got {axis1} and {axis2}")
    ones = tuple(o for k, o in enumerate(a.ones) if k not in (i, j))
    return ArrayType(_trace_dtype(a.dtype, plain(dtype)), ones, a.weak and plain(dtype) is None)


trace = Op("trace", _trace, _trace_rule, static=("offset", "axis1", "axis2", "dtype"),
           aliases=(np.trace,))

for _method in ("transpose", "dot", "trace"):
    register_method(_method)
