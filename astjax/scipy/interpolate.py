"""``astjax.scipy.interpolate``, as ``jax.scipy.interpolate``: ``RegularGridInterpolator``
(methods linear and nearest, ``fill_value`` outside the grid, NaN by default), a pytree
(grid, values and fill value its children) whose call is ``astjax.numpy`` code, as JAX's.
As in JAX, each axis of the grid must be strictly increasing (a decreasing one gives wrong
values silently) and ``bounds_error`` is not implemented."""
import numpy as np

import astjax.numpy as jnp
from astjax._src.ir.trees import Placeholder
from astjax._src.random.checks import static_helper  # evaluated while generating code
from astjax.numpy._composites import _inexact
from astjax.tree_util import register_pytree_node

__all__ = ["RegularGridInterpolator"]


@static_helper
def _check_method(method):
    if method not in ("linear", "nearest"):
        raise ValueError(f"method {method!r} is not defined")
    return method


def _stacked(points, k):
    """The coordinate arrays ``points[k:]`` as columns of one array (last axis)."""
    column = jnp.expand_dims(points[k], -1)
    if k == len(points) - 1:
        return column
    return jnp.concatenate([column, _stacked(points, k + 1)], axis=-1)


def _coordinates(xi, ndim):
    """The points as an array of shape (..., ndim), as JAX's ``_ndim_coords_from_arrays``."""
    if isinstance(xi, tuple) and len(xi) == 1:
        xi = xi[0]
    if isinstance(xi, (tuple, list)):
        parts = jnp.broadcast_arrays(*xi)
        return _stacked(tuple(jnp.asarray(p, jnp.asarray(0.0).dtype) for p in parts), 0)
    xi = jnp.asarray(xi)
    if xi.ndim == 1:
        xi = jnp.reshape(xi, (-1, ndim))
    return xi


def _cells(grid, xi, k):
    """Per axis from ``k`` on, the lower index of each point's cell and the point's distance
    from it in cell widths; and whether each point is outside the grid on those axes."""
    if k == len(grid):
        return (), (), jnp.zeros((xi.shape[0],), bool)
    g = jnp.asarray(grid[k])
    x = xi[:, k]
    i = jnp.clip(jnp.searchsorted(g, x) - 1, 0, g.shape[0] - 2)
    indices, distances, outside = _cells(grid, xi, k + 1)
    outside = outside | (x < g[0]) | (x > g[-1])
    return (i,) + indices, ((x - g[i]) / (g[i + 1] - g[i]),) + distances, outside


def _linear(values, indices, distances, k, index, weight):
    """The sum over the cell's corners of the value there times its weight."""
    if k == len(indices):
        w = jnp.reshape(weight, weight.shape + (1,) * (values.ndim - len(indices)))
        return values[index] * w
    i, y = indices[k], distances[k]
    return (_linear(values, indices, distances, k + 1, index + (i,), weight * (1 - y)) +
            _linear(values, indices, distances, k + 1, index + (i + 1,), weight * y))


def _nearest_index(indices, distances, k):
    if k == len(indices):
        return ()
    i = jnp.where(distances[k] <= 0.5, indices[k], indices[k] + 1)
    return (i,) + _nearest_index(indices, distances, k + 1)


def _interpolate(grid, values, fill_value, xi, method):
    values = _inexact(values)
    ndim = len(grid)
    if ndim > values.ndim:
        raise ValueError(f"there are {ndim} point arrays, but values has {values.ndim} "
                         f"dimensions")
    xi = _coordinates(xi, ndim)
    if xi.shape[-1] != ndim:
        raise ValueError(f"the requested sample points xi have dimension {xi.shape[-1]}, "
                         f"but this RegularGridInterpolator has dimension {ndim}")
    lead = xi.shape[:-1]
    xi = jnp.reshape(xi, (-1, ndim))
    indices, distances, outside = _cells(grid, xi, 0)
    if method == "linear":
        result = _linear(values, indices, distances, 0, (), jnp.ones_like(distances[0]))
    else:
        result = values[_nearest_index(indices, distances, 0)]
    if fill_value is not None:
        mask = jnp.reshape(outside, outside.shape + (1,) * (result.ndim - 1))
        result = jnp.where(mask, fill_value, result)
    return jnp.reshape(result, lead + values.shape[ndim:])


def _check(points, values, fill_value):
    ndim = np.ndim(values)
    if len(points) > ndim:
        raise ValueError(f"there are {len(points)} point arrays, but values has {ndim} "
                         f"dimensions")
    if fill_value is not None:
        dtype = jnp.result_type(values, 0.0)  # (values' inexact dtype)
        if not np.can_cast(jnp.result_type(fill_value), dtype, casting="same_kind"):
            raise ValueError("fill_value must be either 'None' or of a type compatible with "
                             "values")


class RegularGridInterpolator:
    """Interpolation on a rectilinear grid: ``points`` one strictly increasing array per
    axis of ``values`` (its leading axes), ``method`` 'linear' or 'nearest', ``fill_value``
    for points outside the grid (None: extrapolate). The arrays are kept as given and
    converted when called, so that compiled code can build one from its own values."""

    def __init__(self, points, values, method="linear", bounds_error=False,
                 fill_value=np.nan):
        self.method = _check_method(method)
        self.bounds_error = bounds_error
        if bounds_error:
            raise NotImplementedError("`bounds_error` takes no effect under JIT")
        if not Placeholder.inside((points, values, fill_value)):  # (eagerly, as JAX)
            _check(points, values, fill_value)
        self.fill_value = fill_value
        self.grid = points if isinstance(points, Placeholder) else tuple(points)
        self.values = values

    def __call__(self, xi, method=None):
        method = _check_method(self.method if method is None else method)
        return _interpolate(self.grid, self.values, self.fill_value, xi, method)


def _unflatten(aux, children):
    # (without __init__, so that compiled code can read the attributes, probing them)
    obj = object.__new__(RegularGridInterpolator)
    obj.grid, obj.values, obj.fill_value = children
    obj.method, obj.bounds_error = aux
    return obj


register_pytree_node(
    RegularGridInterpolator,
    lambda obj: ((obj.grid, obj.values, obj.fill_value), (obj.method, obj.bounds_error)),
    _unflatten)
