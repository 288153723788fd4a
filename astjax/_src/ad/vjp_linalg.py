"""VJP rules for products and transposes (``astjax/_src/ops/linalg.py``).

Every product is linear in each operand, so each cotangent is another product of
``g`` with the other operand: tensordot/einsum with the contracted and free axes
exchanged, then a transpose back into the operand's axis order. Cotangents come back
in each operand's own shape (the transform does not unbroadcast these ops): a scalar
factor of ``dot``/``inner`` and the broadcast batch dims of ``matmul`` and ``einsum``
are summed here. As in JAX, nothing is conjugated except where the op conjugates
(``vdot``'s first operand). ``precision`` and ``preferred_element_type`` are not
passed on: the cotangent products compute in the promoted dtype of ``g`` and the
other operand.
"""
import string
from types import SimpleNamespace

import astjax.numpy as jnp

from ..ops.linalg import _parse_einsum, _tensordot_axes, _transpose_axes
from ..ops.shape import normalize_axes, normalize_axis
from .adlib import unbroadcast
from .rules import vjp_rule
from .vjp_shape import each, full_ct, is_complex, ndim_of, ndims, nth, shape_of, static

# --- tensordot, and dot/inner through it ----------------------------------------------------------


@static
def _tensordot_plan(ndim_a, ndim_b, axes):
    """How to pull ``g`` back through ``tensordot(a, b, axes)``.

    ``g``'s axes are a's free axes then b's. ``ct_a = tensordot(g, b, axes_ga)`` has a's
    free axes then b's contracted axes (ascending); ``perm_a`` puts them in a's order.
    ``ct_b = tensordot(a, g, axes_gb)`` has a's contracted axes (ascending) then b's free
    axes; ``perm_b`` orders them as b's. A perm is None when it is the identity.
    """
    ax_a, ax_b = _tensordot_axes(SimpleNamespace(ndim=ndim_a), SimpleNamespace(ndim=ndim_b),
                                 axes)
    free_a = [i for i in range(ndim_a) if i not in ax_a]
    free_b = [i for i in range(ndim_b) if i not in ax_b]
    nfa = len(free_a)
    rest_b, rest_a = sorted(ax_b), sorted(ax_a)
    pos_a = {d: k for k, d in enumerate(free_a)}
    pos_a.update({a: nfa + rest_b.index(b) for a, b in zip(ax_a, ax_b)})
    pos_b = {d: len(ax_a) + k for k, d in enumerate(free_b)}
    pos_b.update({b: rest_a.index(a) for a, b in zip(ax_a, ax_b)})
    perm_a = tuple(pos_a[d] for d in range(ndim_a))
    perm_b = tuple(pos_b[d] for d in range(ndim_b))
    axes_ga = (tuple(range(nfa, nfa + len(free_b))), tuple(free_b))
    axes_gb = (tuple(free_a), tuple(range(nfa)))
    return (axes_ga, None if perm_a == tuple(range(ndim_a)) else perm_a,
            axes_gb, None if perm_b == tuple(range(ndim_b)) else perm_b)


def permuted(x, perm):
    """``jnp.transpose(x, perm)``; ``x`` itself for ``perm=None`` (static)."""
    if perm is None:
        return x
    return jnp.transpose(x, perm)


def _tensordot_cts(a, b, g, axes):
    axes_ga, perm_a, axes_gb, perm_b = _tensordot_plan(ndim_of(a), ndim_of(b), axes)
    return (permuted(jnp.tensordot(g, b, axes_ga), perm_a),
            permuted(jnp.tensordot(a, g, axes_gb), perm_b))


@vjp_rule("tensordot")
def tensordot(z, a, b, g, axes=2, precision=None, preferred_element_type=None):
    return _tensordot_cts(a, b, full_ct(g, z), axes)


def _scaled(a, b, g):
    """Cotangents of ``a * b`` when one factor is a scalar, summed to each operand."""
    return unbroadcast(g * b, a), unbroadcast(g * a, b)


@static
def _dot_axes(ndim_a, ndim_b):
    """dot contracts a's last axis with b's second-to-last (its only one if 1-D)."""
    return ((ndim_a - 1,), (max(ndim_b - 2, 0),))


@vjp_rule("dot")
def dot(z, a, b, g, precision=None, preferred_element_type=None):
    dz = full_ct(g, z)
    if ndim_of(a) == 0 or ndim_of(b) == 0:
        return _scaled(a, b, dz)
    return _tensordot_cts(a, b, dz, _dot_axes(a.ndim, b.ndim))


@static
def _inner_axes(ndim_a, ndim_b):
    return ((ndim_a - 1,), (ndim_b - 1,))


@vjp_rule("inner")
def inner(z, a, b, g, precision=None, preferred_element_type=None):
    dz = full_ct(g, z)
    if ndim_of(a) == 0 or ndim_of(b) == 0:
        return _scaled(a, b, dz)
    return _tensordot_cts(a, b, dz, _inner_axes(a.ndim, b.ndim))


# --- matmul ---------------------------------------------------------------------------------------

def _as_matrix(x, axis):
    """A 1-D matmul operand as the matrix it stands for: a row (a, ``axis=0``) or a
    column (b, ``axis=1``)."""
    if x.ndim >= 2:
        return x
    return jnp.expand_dims(x, axis)


def _matmul_g(g, ndim_a, ndim_b):
    """``g`` with the row/column dims that 1-D operands made matmul drop put back."""
    if ndim_a >= 2 and ndim_b >= 2:
        return g
    if ndim_a >= 2:
        return jnp.expand_dims(g, -1)
    if ndim_b >= 2:
        return jnp.expand_dims(g, -2)
    return jnp.expand_dims(g, (-2, -1))


def _matmul_ct(ct, x, axis, batched):
    """The cotangent of operand ``x``: its vector dim dropped again if it is 1-D, the
    broadcast batch dims summed."""
    if x.ndim >= 2:
        if batched:
            return unbroadcast(ct, x)
        return ct
    if batched:
        return unbroadcast(jnp.squeeze(ct, axis), x)
    return jnp.squeeze(ct, axis)


@vjp_rule("matmul")
def matmul(z, a, b, g, precision=None, preferred_element_type=None):
    """A 1-D operand is a row (a) or column (b) whose dim the result drops: put it
    back, take the 2-D products, drop it again. Batch dims broadcast, so the
    cotangents are summed to each operand's shape."""
    g2 = _matmul_g(full_ct(g, z), a.ndim, b.ndim)
    batched = a.ndim > 2 or b.ndim > 2
    ct_a = jnp.matmul(g2, jnp.matrix_transpose(_as_matrix(b, 1)))
    ct_b = jnp.matmul(jnp.matrix_transpose(_as_matrix(a, 0)), g2)
    return _matmul_ct(ct_a, a, -2, batched), _matmul_ct(ct_b, b, -1, batched)


# --- vdot, outer ----------------------------------------------------------------------------------


@vjp_rule("vdot")
def vdot(z, a, b, g, precision=None, preferred_element_type=None):
    """vdot(a, b) = sum(conj(a).ravel() * b.ravel()); a and b may differ in shape."""
    dz = full_ct(g, z)
    if is_complex(z.dtype):
        return (jnp.reshape(jnp.conj(dz * b), shape_of(a)),
                jnp.reshape(dz * jnp.conj(a), shape_of(b)))
    return jnp.reshape(dz * b, shape_of(a)), jnp.reshape(dz * a, shape_of(b))


@vjp_rule("outer")
def outer(z, a, b, g):
    dz = full_ct(g, z)
    return (jnp.reshape(jnp.dot(dz, jnp.ravel(b)), shape_of(a)),
            jnp.reshape(jnp.dot(jnp.ravel(a), dz), shape_of(b)))


# --- einsum ---------------------------------------------------------------------------------------

@static
def _einsum_plan(subscripts, ranks):
    """For each operand k: how its cotangent comes from ``g`` and the other operands.

    Every label, the ellipsis dims included, gets a letter. Operand k's cotangent is the
    einsum of the operands with ``g`` in place of operand k (its term replaced by the
    output's), giving the labels of k that g or another operand has; then
      * labels only operand k has (summed out, e.g. j in ``ij->i``) get a new axis of
        size 1 (``expand``), which the final broadcast to k's shape fills;
      * a repeated label (``ii``) is put on the diagonal: each ``(spec, position)`` in
        ``diagonals`` multiplies by an identity matrix of that axis' size;
      * ``perm`` orders the axes as in operand k (None when they are).
    """
    labels, out = _parse_einsum(subscripts, list(ranks))
    used = {c for ls in labels for c in ls if isinstance(c, str)}
    fresh = iter([c for c in string.ascii_letters if c not in used])
    names = {}

    def letter(label):
        if isinstance(label, str):
            return label
        if label not in names:
            names[label] = next(fresh)
        return names[label]

    terms = ["".join(letter(c) for c in ls) for ls in labels]
    out_term = "".join(letter(c) for c in out)
    plans = []
    for k, term in enumerate(terms):
        others = terms[:k] + terms[k + 1:]
        available = set(out_term).union(*others)
        uniq = "".join(dict.fromkeys(term))  # first occurrences, in order
        computed = "".join(c for c in uniq if c in available)
        spec = ",".join(terms[:k] + [out_term] + terms[k + 1:]) + "->" + computed
        expand = tuple(i for i, c in enumerate(uniq) if c not in available)
        current, target, diagonals = uniq, "", []
        for pos, c in enumerate(term):
            if term.index(c) == pos:
                target += c
                continue
            new = next(fresh)
            diagonals.append((f"{current},{c}{new}->{current}{new}", pos))
            current += new
            target += new
        perm = tuple(current.index(c) for c in target)
        plans.append((spec, expand, tuple(diagonals),
                      None if perm == tuple(range(len(perm))) else perm))
    return tuple(plans)


def _arg(ops, g, k, i):
    if i == k:
        return g
    return nth(ops, i)


def _einsum_with_g(spec, ops, g, k):
    """``jnp.einsum(spec, *ops)`` with ``g`` in place of ``ops[k]``, for a static number
    of operands (the calls are written out: no ``*args`` in compiled code)."""
    n = len(ops)
    if n == 1:
        return jnp.einsum(spec, g)
    if n == 2:
        return jnp.einsum(spec, _arg(ops, g, k, 0), _arg(ops, g, k, 1))
    if n == 3:
        return jnp.einsum(spec, _arg(ops, g, k, 0), _arg(ops, g, k, 1), _arg(ops, g, k, 2))
    if n == 4:
        return jnp.einsum(spec, _arg(ops, g, k, 0), _arg(ops, g, k, 1), _arg(ops, g, k, 2),
                          _arg(ops, g, k, 3))
    if n == 5:
        return jnp.einsum(spec, _arg(ops, g, k, 0), _arg(ops, g, k, 1), _arg(ops, g, k, 2),
                          _arg(ops, g, k, 3), _arg(ops, g, k, 4))
    if n == 6:
        return jnp.einsum(spec, _arg(ops, g, k, 0), _arg(ops, g, k, 1), _arg(ops, g, k, 2),
                          _arg(ops, g, k, 3), _arg(ops, g, k, 4), _arg(ops, g, k, 5))
    return _too_many_operands(n)


@static
def _too_many_operands(n):
    raise NotImplementedError(f"the derivative of einsum is written for up to 6 operands, "
                              f"got {n}")


def _diagonals(ct, x, steps):
    """Spread ``ct`` onto the diagonal of each repeated label, one step at a time."""
    if len(steps) == 0:
        return ct
    spec, pos = steps[0]
    sizes = shape_of(x)
    eye = jnp.eye(sizes[pos], dtype=ct.dtype)
    return _diagonals(jnp.einsum(spec, ct, eye), x, steps[1:])


def _expanded(x, axes):
    if len(axes) == 0:
        return x
    return jnp.expand_dims(x, axes)


def _einsum_piece(k, g, operands, plans):
    spec, expand, steps, perm = plans[k]
    x = nth(operands, k)
    ct = _einsum_with_g(spec, operands, g, k)
    spread = permuted(_diagonals(_expanded(ct, expand), x, steps), perm)
    # a label's size is the broadcast of its dims: sum where x had 1 and others more,
    # spread where x had more and the rest 1 (and over the labels only x has)
    return jnp.broadcast_to(unbroadcast(spread, x), shape_of(x))


@vjp_rule("einsum")
def einsum(z, operands, g, subscripts=None, optimize="auto", precision=None,
           preferred_element_type=None):
    plans = _einsum_plan(subscripts, ndims(operands))
    return (each(_einsum_piece, len(operands), full_ct(g, z), operands, plans),)


# --- transposes and trace -------------------------------------------------------------------------

@static
def _inverse_perm(axes, more, ndim):
    perm = normalize_axes(_transpose_axes(axes, more), ndim, "transpose", "axes")
    inverse = [0] * ndim
    for i, p in enumerate(perm):
        inverse[p] = i
    return tuple(inverse)


@vjp_rule("transpose")
def transpose(z, a, g, axes=None, more=()):
    if axes is None and len(more) == 0:
        return (jnp.transpose(full_ct(g, z)),)
    return (jnp.transpose(full_ct(g, z), _inverse_perm(axes, more, z.ndim)),)


@vjp_rule("matrix_transpose")
def matrix_transpose(z, x, g):
    return (jnp.matrix_transpose(full_ct(g, z)),)


@static
def _trace_axes(axis1, axis2, ndim):
    return normalize_axis(axis1, ndim, "trace"), normalize_axis(axis2, ndim, "trace")


@vjp_rule("trace")
def trace(z, a, g, offset=0, axis1=0, axis2=1, dtype=None):
    """g on the (offset) diagonal of the two axes, zero elsewhere."""
    dz = full_ct(g, z)
    i, j = _trace_axes(axis1, axis2, a.ndim)
    sizes = a.shape
    eye = jnp.eye(sizes[i], sizes[j], offset, dtype=dz.dtype)
    return (jnp.moveaxis(jnp.expand_dims(dz, (-2, -1)) * eye, (-2, -1), (i, j)),)
