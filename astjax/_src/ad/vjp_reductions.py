"""VJP rules of the reductions (``ops/reductions.py``).

The AD transform does not unbroadcast these cotangents: each rule returns one
of the operand's exact shape. ``g`` is brought back to the keepdims shape
(``expand_dims`` at the reduced axes, which normalizes negative axes against
the operand's rank) and broadcast from there. A ``dtype=`` param computes in
another dtype; the cotangent is cast back to the operand's. Complex operands
are not supported yet.
"""
import astjax.numpy as jnp

from .rules import vjp_rule


def _keepdims(g, axis, keepdims):
    """``g`` of a reduction with the reduced axes kept as size 1."""
    if axis is None or keepdims:
        return g  # a full reduction without keepdims is 0-d: it broadcasts as it is
    return jnp.expand_dims(g, axis)


def _as_operand(ct, a, dtype):
    """The cotangent in the operand's dtype when ``dtype=`` changed the computation's."""
    return ct if dtype is None else jnp.astype(ct, a.dtype)


def _count(a, z):
    """How many elements of ``a`` each element of the reduction ``z`` combines."""
    return a.size // max(z.size, 1)  # an empty result has an empty cotangent: any n will do


@vjp_rule("sum")
def sum_vjp(z, a, g, axis=None, dtype=None, out=None, keepdims=False,
            promote_integers=True):
    ct = jnp.broadcast_to(_keepdims(g, axis, keepdims), a.shape)
    return (_as_operand(ct, a, dtype),)


@vjp_rule("mean")
def mean_vjp(z, a, g, axis=None, dtype=None, out=None, keepdims=False):
    ct = jnp.broadcast_to(_keepdims(g, axis, keepdims) / _count(a, z), a.shape)
    return (_as_operand(ct, a, dtype),)


@vjp_rule("prod")
def prod_vjp(z, a, g, axis=None, dtype=None, out=None, keepdims=False,
             promote_integers=True):
    """d prod / d a_i is the product of the other elements of a_i's slice (see
    prod_partials): exact with zeros, infinities and nans, as JAX's. Its own derivative
    (second order) is exact as far as cumprod's is (away from zeros)."""
    return (_as_operand(_keepdims(g, axis, keepdims) * prod_partials(a, axis), a, dtype),)


def prod_partials(a, axis):
    """d prod(a, axis) / d a_i, in a's shape: the product of the other elements of the
    slice, from the exclusive products on each side of a_i (no division, which gave nan
    beside an inf and 0 beside a nan). Several axes at once divide instead,
    exact with zeros only: a product without a_i is others / a_i, with one zero in the
    slice the product of the non-zeros at the zero, with two or more zeros 0."""
    if axis is None or a.ndim == 0:
        return jnp.reshape(_others_on_last_axis(jnp.ravel(a)), a.shape)
    if isinstance(axis, (tuple, list)):
        zero = a == 0
        zeros = jnp.sum(zero, axis=axis, keepdims=True)
        safe = jnp.where(zero, 1.0, a)
        others = jnp.prod(safe, axis=axis, keepdims=True)  # the product of the non-zeros
        return jnp.where(zeros == 0, others / safe,
                         jnp.where(zero & (zeros == 1), others, 0.0))
    return jnp.moveaxis(_others_on_last_axis(jnp.moveaxis(a, axis, -1)), -1, axis)


def _others_on_last_axis(x):
    """At each element, the product of the others along the last axis."""
    ones = jnp.ones_like(x[..., :1])
    before = jnp.cumprod(jnp.concatenate([ones, x[..., :-1]], axis=-1), axis=-1)
    after = jnp.flip(jnp.cumprod(jnp.flip(jnp.concatenate([x[..., 1:], ones], axis=-1), -1),
                                 axis=-1), -1)
    return before * after


def _chooser(z, a, g, axis, keepdims):
    """max/min: g split equally among the elements equal to the result (JAX's rule)."""
    selected = a == _keepdims(z, axis, keepdims)
    counts = jnp.sum(selected, axis=axis, keepdims=True)
    return (jnp.where(selected, _keepdims(g, axis, keepdims) / counts, 0.0),)


@vjp_rule("max")
def max_vjp(z, a, g, axis=None, out=None, keepdims=False):
    return _chooser(z, a, g, axis, keepdims)


@vjp_rule("min")
def min_vjp(z, a, g, axis=None, out=None, keepdims=False):
    return _chooser(z, a, g, axis, keepdims)


def _variance_parts(z, a, g, axis, keepdims, ddof, correction):
    """(a - mean, N - ddof, g in the keepdims shape) for var and std."""
    centered = a - jnp.mean(a, axis=axis, keepdims=True)
    dof = _count(a, z) - (ddof if correction is None else correction)
    return centered, dof, _keepdims(g, axis, keepdims)


@vjp_rule("var")
def var_vjp(z, a, g, axis=None, dtype=None, out=None, ddof=0, keepdims=False,
            correction=None):
    # the mean's own derivative drops out: the centered values sum to 0
    centered, dof, gk = _variance_parts(z, a, g, axis, keepdims, ddof, correction)
    return (_as_operand(gk * (2.0 / dof) * centered, a, dtype),)


@vjp_rule("std")
def std_vjp(z, a, g, axis=None, dtype=None, out=None, ddof=0, keepdims=False,
            correction=None):
    # d sqrt(v) = dv / (2 sqrt(v)): nan where the slice is constant (z == 0), as in JAX
    centered, dof, gk = _variance_parts(z, a, g, axis, keepdims, ddof, correction)
    ct = gk / (dof * _keepdims(z, axis, keepdims)) * centered
    return (_as_operand(ct, a, dtype),)


# --- cumulative: axis None (or a 0-d operand) scans the flattened array ----------------------

def _reverse_cumsum(x, axis):
    return jnp.flip(jnp.cumsum(jnp.flip(x, axis), axis), axis)


def _flattened(a, axis):
    return axis is None or a.ndim == 0


def _scan_axis(a, axis):
    return 0 if _flattened(a, axis) else axis


def _unflattened(ct, a, axis):
    """A cotangent of the scanned array back in the operand's shape."""
    return jnp.reshape(ct, a.shape) if _flattened(a, axis) else ct


@vjp_rule("cumsum")
def cumsum_vjp(z, a, g, axis=None, dtype=None, out=None):
    ct = _reverse_cumsum(g, _scan_axis(a, axis))
    return (_as_operand(_unflattened(ct, a, axis), a, dtype),)


@vjp_rule("cumprod")
def cumprod_vjp(z, a, g, axis=None, dtype=None, out=None):
    """d z_j / d a_i (j >= i) is the product of a_0..a_j without a_i. Before the first zero
    of the scan that is z_j / a_i; at the first zero it is the product of the non-zeros up
    to j while no second zero is reached (0 after); after the first zero it is 0.
    As for prod: exact with zeros, its own derivative exact only away from them."""
    ax = _scan_axis(a, axis)
    x = jnp.ravel(a) if _flattened(a, axis) else a
    zero = x == 0
    zeros_so_far = jnp.cumsum(zero, ax)
    safe = jnp.where(zero, 1.0, x)
    # the products without the first zero, where it is the only zero so far
    single = jnp.where(zeros_so_far == 1, jnp.cumprod(safe, ax), 0.0)
    before = _reverse_cumsum(g * z, ax) / safe
    at_first = _reverse_cumsum(g * single, ax)
    # (at a later zero, at_first is 0: single is 0 from there on)
    ct = jnp.where(zeros_so_far == 0, before, jnp.where(zero, at_first, 0.0))
    return (_as_operand(_unflattened(ct, a, axis), a, dtype),)
