"""JVP rules (forward mode) of the ops that ``forward.py``'s families do not cover: the
non-linear reductions (prod, max, min, var, std, cumprod), clip, nan_to_num, fma and the
multiplicative and extremal index updates (at_multiply, at_divide, at_power, at_min,
at_max).

Each rule is the exact transpose of the op's VJP rule (for every u and v,
``<u, jvp(v)> == sum_k <vjp(u)[k], v_k>``), so the two modes agree wherever the derivative
is a convention: ties of max/min share the tangent equally, prod and cumprod are exact at
zeros without 0 / 0, clip at a bound shares it as JAX's minimum(maximum(...)) does, a
value nan_to_num replaced has tangent 0, log(0) counts as 0 in at_power.

The convention (``rules.py``): ``rule(z, <operands>, <one tangent per operand>, **params)``
returns the output's tangent, possibly of a broadcast-compatible shape and weak dtype (the
transform casts it to z's), or None when no tangent reaches the output. A tangent is None
for an operand with none (a Python number, an integer, a constant). Rules are straight-line
jnp code: ``if`` only on static params and on tangents being None; a name keeps one type.
Constants are Python floats (weak), so float32 stays float32.
"""
import astjax.numpy as jnp

from .rules import jvp_rule
from .vjp_conversions import clip_shares
from .vjp_indexing import _times_others, extremum_shares
from .vjp_reductions import _count, _flattened, _keepdims, _scan_axis, prod_partials
from .vjp_shape import is_complex


def _plus(a, b):
    """a + b where either may be None (no tangent)."""
    if a is None:
        return b
    if b is None:
        return a
    return a + b


def _masked(mask, t):
    """t where mask holds, 0 elsewhere (None for no tangent)."""
    if t is None:
        return None
    return jnp.where(mask, t, 0.0)


def _in_dtype(x, dtype):
    """``x`` in the dtype a ``dtype=`` param computes in (JAX casts the operand first)."""
    if dtype is None:
        return x
    return jnp.astype(x, dtype)


# --- ldexp, frexp: scalings by a power of two (vjp_elementwise.py) ----------------------------

@jvp_rule("ldexp")
def ldexp_jvp(z, x1, x2, t1, t2):
    if t1 is None:
        return None
    return jnp.ldexp(t1, x2)


@jvp_rule("frexp")
def frexp_jvp(z, x, tx):
    return (jnp.ldexp(tx, -z[1]), None)


# --- real, imag, conj, abs: not holomorphic for complex inputs ---------------------------------
# (their VJP rules are the transposes of these, vjp_elementwise.py)


@jvp_rule("real")
def real_jvp(z, x, tx):
    if tx is None:
        return None
    return jnp.real(tx)


@jvp_rule("imag")
def imag_jvp(z, x, tx):
    if tx is None or not is_complex(x.dtype):
        return None
    return jnp.imag(tx)


@jvp_rule("conjugate")
def conjugate_jvp(z, x, tx):
    if tx is None:
        return None
    return jnp.conj(tx)


@jvp_rule("abs")
def abs_jvp(z, x, tx):
    if tx is None:
        return None
    if is_complex(x.dtype):
        return jnp.real(jnp.conj(x) * tx) / jnp.where(z == 0, 1.0, z)
    return jnp.where(x >= 0, tx, -tx)


# --- reductions ------------------------------------------------------------------------------

@jvp_rule("prod")
def prod_jvp(z, a, ta, axis=None, dtype=None, out=None, keepdims=False,
             promote_integers=True):
    """The sum of ta_i times the product of the other elements, counted as prod's VJP rule
    does: prod / a_i without zeros; with one zero, the product of the non-zeros at the
    zero and 0 elsewhere; with two or more zeros, 0."""
    if ta is None:
        return None
    partials = prod_partials(_in_dtype(a, dtype), axis)
    return jnp.sum(partials * _in_dtype(ta, dtype), axis=axis, keepdims=keepdims)


@jvp_rule("max", "min")
def chooser_jvp(z, a, ta, axis=None, out=None, keepdims=False):
    """max/min: the mean of the tangents of the elements equal to the result (JAX's rule,
    the transpose of the VJP's equal split)."""
    if ta is None:
        return None
    selected = a == _keepdims(z, axis, keepdims)
    counts = jnp.sum(selected, axis=axis, keepdims=keepdims)
    return jnp.sum(jnp.where(selected, ta, 0.0), axis=axis, keepdims=keepdims) / counts


def _centered_dot(z, a, ta, axis, dtype, keepdims, ddof, correction):
    """(sum((a - mean) * ta) over the reduced axes, N - ddof) for var and std. The mean's
    own tangent drops out: the centered values sum to 0."""
    b = _in_dtype(a, dtype)
    centered = b - jnp.mean(b, axis=axis, keepdims=True)
    dof = _count(a, z) - (ddof if correction is None else correction)
    return jnp.sum(centered * _in_dtype(ta, dtype), axis=axis, keepdims=keepdims), dof


@jvp_rule("var")
def var_jvp(z, a, ta, axis=None, dtype=None, out=None, ddof=0, keepdims=False,
            correction=None):
    if ta is None:
        return None
    dot, dof = _centered_dot(z, a, ta, axis, dtype, keepdims, ddof, correction)
    return (2.0 * dot) / dof  # an array over dof: inf/nan for dof == 0, as JAX, no raise


@jvp_rule("std")
def std_jvp(z, a, ta, axis=None, dtype=None, out=None, ddof=0, keepdims=False,
            correction=None):
    # d sqrt(v) = dv / (2 sqrt(v)): nan where the slice is constant (z == 0), as in JAX
    if ta is None:
        return None
    dot, dof = _centered_dot(z, a, ta, axis, dtype, keepdims, ddof, correction)
    return dot / (dof * z)


def _scanned(x, a, axis, dtype):
    """The array cumprod scans: flattened for axis None or a 0-d operand, in ``dtype``."""
    if _flattened(a, axis):
        return _in_dtype(jnp.ravel(x), dtype)
    return _in_dtype(x, dtype)


@jvp_rule("cumprod")
def cumprod_jvp(z, a, ta, axis=None, dtype=None, out=None):
    """d z_j = sum over i <= j of d z_j / d a_i times ta_i. Before the first zero of the
    scan that is z_j times the running sum of ta_i / a_i; while the first zero is the only
    one so far, the product of the non-zeros up to j times the first zero's tangent;
    after a second zero, 0 (the transpose of cumprod's VJP rule)."""
    if ta is None:
        return None
    ax = _scan_axis(a, axis)
    x = _scanned(a, a, axis, dtype)
    tx = _scanned(ta, a, axis, dtype)
    zero = x == 0
    zeros_so_far = jnp.cumsum(zero, ax)
    safe = jnp.where(zero, 1.0, x)
    # the products without the first zero, where it is the only zero so far
    single = jnp.where(zeros_so_far == 1, jnp.cumprod(safe, ax), 0.0)
    # z_j is 0 from the first zero on: the first term counts only before it; where single
    # is not 0, the running sum of the zeros' tangents is the first zero's alone
    # (a flattened scan's z is 1-d, as the tangent)
    return z * jnp.cumsum(tx / safe, ax) + single * jnp.cumsum(jnp.where(zero, tx, 0.0), ax)


# --- clip, nan_to_num, fma -------------------------------------------------------------------

@jvp_rule("clip")
def clip_jvp(z, arr, min, max, a_min, a_max, t_arr, t_min, t_max, t_a_min, t_a_max,
             out=None):
    """The tangents of arr and the bounds weighted by ``clip_shares`` (clip's VJP rule's)."""
    lower = a_min if min is None else min
    upper = a_max if max is None else max
    t_lower = t_a_min if min is None else t_min  # a bound's tangent: from min= or a_min=
    t_upper = t_a_max if max is None else t_max
    if t_arr is None and t_lower is None and t_upper is None:
        return None
    if lower is None and upper is None:
        return t_arr
    to_arr, to_lower, to_upper = clip_shares(arr, lower, upper)
    return _plus(_plus(_times(t_arr, to_arr), _times(t_lower, to_lower)),
                 _times(t_upper, to_upper))


@jvp_rule("nan_to_num")
def nan_to_num_jvp(z, x, tx, copy=True, nan=0.0, posinf=None, neginf=None):
    # replaced values are constants
    return _masked(jnp.isfinite(x), tx)


def _times(t, other):
    return None if t is None else t * other


@jvp_rule("fma")
def fma_jvp(z, x, y, w, tx, ty, tw):
    # z is the op's output: its third operand is named w here (as in fma's VJP rule)
    return _plus(_plus(_times(tx, y), _times(ty, x)), tw)


# --- multiplicative index updates -------------------------------------------------------------
# z = x * F, x / F or x ** F with F the product of the values written to each position
# (1 elsewhere); repeated positions multiply their values in, as the impls' ufunc.at.
# A values tangent arrives in the values' shape, which broadcasts to x[index]; its part of
# the output's tangent is scattered back with .at[index].add (repeated positions add up).

def _scattered(t, z, index):
    """zeros like z, with t (shaped as z[index]) added at index."""
    return jnp.zeros_like(z).at[index].add(t)


def _multiply_values_part(z, x, values, tv, index, unique_indices):
    """d F_p = the sum over the writes to p of tv times the other values written there
    (counted without dividing by a zero value, as the VJP rule)."""
    if tv is None:
        return None
    return _scattered(_times_others(x[index] * tv, values, index, z, unique_indices), z, index)


@jvp_rule("at_multiply")
def at_multiply_jvp(z, x, values, tx, tv, index=None, indices_are_sorted=False,
                    unique_indices=False, mode=None):
    dx = None if tx is None else tx.at[index].multiply(values)
    return _plus(dx, _multiply_values_part(z, x, values, tv, index, unique_indices))


def _divide_values_part(z, values, tv, index):
    """d z / d v = -z / v for each value v multiplied into F."""
    if tv is None:
        return None
    return _scattered(-(z[index] * tv) / values, z, index)


@jvp_rule("at_divide")
def at_divide_jvp(z, x, values, tx, tv, index=None, indices_are_sorted=False,
                  unique_indices=False, mode=None):
    dx = None if tx is None else tx.at[index].divide(values)
    return _plus(dx, _divide_values_part(z, values, tv, index))


def _power_x_part(z, x, values, tx, index):
    """d z / d x = F x ** (F - 1) at index, 1 elsewhere."""
    if tx is None:
        return None
    xi = x[index]
    fi = jnp.ones_like(z).at[index].multiply(values)[index]
    return tx.at[index].set(tx[index] * fi * xi ** (fi - 1))


def _power_values_part(z, x, values, tv, index, unique_indices):
    """d z / d v = z log(x) times the other values' product; log(x) is taken as 0 at
    x = 0, as JAX's pow does (and the VJP rule)."""
    if tv is None:
        return None
    xi = x[index]
    t = z[index] * jnp.log(jnp.where(xi == 0, 1, xi)) * tv
    return _scattered(_times_others(t, values, index, z, unique_indices), z, index)


@jvp_rule("at_power")
def at_power_jvp(z, x, values, tx, tv, index=None, indices_are_sorted=False,
                 unique_indices=False, mode=None):
    return _plus(_power_x_part(z, x, values, tx, index),
                 _power_values_part(z, x, values, tv, index, unique_indices))


@jvp_rule("at_min", "at_max")
def at_extremum_jvp(z, x, values, tx, tv, index=None, indices_are_sorted=False,
                    unique_indices=False, mode=None):
    """Each winner's tangent times its share (``extremum_shares``), as the VJP rule."""
    if tx is None and tv is None:
        return None
    x_share, value_share = extremum_shares(z, x, values, index)
    dx = None if tx is None else tx * x_share
    dv = None if tv is None else _scattered(tv * value_share, z, index)
    return _plus(dx, dv)
