"""VJP rules for indexing (``astjax/_src/ops/indexing.py``): ``x[idx]`` and the pure
updates ``x.at[idx].set/add/subtract/multiply/divide/power(values)``.

The index arrives as the keyword ``index``. The cotangent of ``values`` has the shape
of ``x[idx]``; the transform sums it to the values' own shape (these ops broadcast
their values).

Repeated positions (an integer index array naming one element twice):
  * getitem, add, subtract: each occurrence gets its share (scatter-add), exact.
  * set: only the write that lands (the last one) gets a cotangent, found as JAX does,
    by scattering an id per write and reading back which id stayed. Skipped when the
    index cannot repeat: ``unique_indices=True``, or (eagerly) an index of ints,
    slices, None, Ellipsis and boolean masks. Compiled code sees the index as an
    opaque run-time object, so there only ``unique_indices=True`` skips it.
  * multiply, divide, power: exact. The product of the other values written to the
    same position (multiply, power) is counted out with zeros in mind, so no division
    by a zero value; it is computed only when positions may repeat (JAX raises for
    multiply's values gradient unless unique_indices=True).
  * min, max: the output at a position takes the derivative of whichever of x and the
    values written there equal it; ties share it evenly, as JAX's scatter_min/max do.
The index is data, not differentiated.
"""
import numpy as np

import astjax.numpy as jnp

from ..runtime.array import Array
from .rules import vjp_rule
from .vjp_shape import full_ct

_CANNOT_REPEAT = (int, np.integer, slice, type(None), type(Ellipsis))


def may_repeat(index):
    """Whether ``index`` may name one position twice (static; True when unsure)."""
    if isinstance(index, tuple):
        return _any_may_repeat(index)
    return _item_may_repeat(index)


def _any_may_repeat(items):
    if len(items) == 0:
        return False
    if _item_may_repeat(items[0]):
        return True
    return _any_may_repeat(items[1:])


def _item_may_repeat(item):
    if isinstance(item, _CANNOT_REPEAT):
        return False
    if isinstance(item, (np.ndarray, Array)):  # a 0-d int or a mask names each place once
        if item.ndim == 0:
            return False
        return item.dtype != np.bool_
    return True  # a list of ints, or an index only known at run time


def _check_repeats(index, unique_indices):
    """Whether a rule must account for repeated positions (static)."""
    if unique_indices:
        return False
    return may_repeat(index)


def _landed(x, index, target):
    """Which elements of ``target`` (shaped as ``x[index]``) a set at ``index`` keeps:
    with repeated positions only the last write lands."""
    ids = jnp.reshape(jnp.arange(1, target.size + 1), target.shape)
    written = jnp.zeros_like(x, dtype=ids.dtype).at[index].set(ids)
    return written[index] == ids


def _others_product(values, index, like, target):
    """For each element of ``target`` (shaped as ``x[index]``), the product of the other
    values multiplied into the same position, without dividing by a zero value."""
    v = jnp.broadcast_to(values, target.shape)
    is_zero = v == 0
    nonzero = jnp.where(is_zero, 1, v)
    product = jnp.ones_like(like).at[index].multiply(nonzero)[index]
    zeros = jnp.zeros_like(like).at[index].add(jnp.where(is_zero, 1.0, 0.0))[index]
    return jnp.where(is_zero, jnp.where(zeros == 1, product, 0),
                     jnp.where(zeros == 0, product / nonzero, 0))


@vjp_rule("getitem")
def getitem(z, x, g, index=None):
    return (jnp.zeros_like(x).at[index].add(g),)


def _landed_only(ct_values, x, index, unique_indices):
    """``ct_values`` where the write landed, 0 where a later write to the same position
    replaced it."""
    if _check_repeats(index, unique_indices):
        return jnp.where(_landed(x, index, ct_values), ct_values, 0)
    return ct_values


@vjp_rule("at_set")
def at_set(z, x, values, g, index=None, indices_are_sorted=False, unique_indices=False,
           mode=None):
    dz = full_ct(g, z)
    return dz.at[index].set(0), _landed_only(dz[index], x, index, unique_indices)


@vjp_rule("at_add")
def at_add(z, x, values, g, index=None, indices_are_sorted=False, unique_indices=False,
           mode=None):
    dz = full_ct(g, z)
    return dz, dz[index]


@vjp_rule("at_subtract")
def at_subtract(z, x, values, g, index=None, indices_are_sorted=False, unique_indices=False,
                mode=None):
    dz = full_ct(g, z)
    return dz, -dz[index]


def _times_others(ct_values, values, index, like, unique_indices):
    """``ct_values`` times the product of the other values multiplied into the same
    position (1 when positions cannot repeat)."""
    if _check_repeats(index, unique_indices):
        return ct_values * _others_product(values, index, like, ct_values)
    return ct_values


@vjp_rule("at_multiply")
def at_multiply(z, x, values, g, index=None, indices_are_sorted=False, unique_indices=False,
                mode=None):
    """z = x * F with F the product of the values at each position (1 elsewhere)."""
    dz = full_ct(g, z)
    return (dz.at[index].multiply(values),
            _times_others(dz[index] * x[index], values, index, dz, unique_indices))


@vjp_rule("at_divide")
def at_divide(z, x, values, g, index=None, indices_are_sorted=False, unique_indices=False,
              mode=None):
    """z = x / F: d z / d v = -z / v for each value v multiplied into F."""
    dz = full_ct(g, z)
    return dz.at[index].divide(values), -(dz[index] * z[index]) / values


@vjp_rule("at_power")
def at_power(z, x, values, g, index=None, indices_are_sorted=False, unique_indices=False,
             mode=None):
    """z = x ** F with F the product of the values at each position (1 elsewhere).

    d z / d v is z log(x) times the other values' product; log(x) is taken as 0 at
    x = 0, as JAX's pow does (z is 0 there for a positive power)."""
    dz = full_ct(g, z)
    gi = dz[index]
    xi = x[index]
    fi = jnp.ones_like(dz).at[index].multiply(values)[index]
    ct_values = gi * z[index] * jnp.log(jnp.where(xi == 0, 1, xi))
    return (dz.at[index].set(gi * fi * xi ** (fi - 1)),
            _times_others(ct_values, values, index, dz, unique_indices))


def extremum_shares(z, x, values, index):
    """For z = x.at[index].min/max(values): the share of z's derivative that x takes
    (shaped as x; 1 at positions not written) and that each value takes (shaped as
    x[index]): the winners are those equal to z, ties split evenly. A NaN x keeps its
    share, so a position no value reached still passes x's derivative."""
    zi = z[index]
    value_wins = jnp.where(jnp.broadcast_to(values, zi.shape) == zi, 1.0, 0.0)
    x_wins = jnp.where((x == z) | (x != x), 1.0, 0.0)
    winners = x_wins.at[index].add(value_wins)
    return x_wins / winners, value_wins / winners[index]


@vjp_rule("at_min", "at_max")
def at_extremum(z, x, values, g, index=None, indices_are_sorted=False, unique_indices=False,
                mode=None):
    dz = full_ct(g, z)
    x_share, value_share = extremum_shares(z, x, values, index)
    return dz * x_share, dz[index] * value_share
