"""``jnp.sort`` and ``jnp.take_along_axis``: plain functions written in ``astjax.numpy``,
not ops, as ``astjax.nn``. The compiler reads their source like user code, so they
differentiate (through ``getitem``, whose VJP scatter-adds into zeros), batch and
compile wherever ``argsort``, ``moveaxis``, ``reshape`` and indexing do.
"""
import astjax.numpy as jnp

from .._src.random.checks import static_helper  # evaluated while generating code


@static_helper
def _normalize_axis(axis, ndim, fn):
    if not isinstance(axis, int) or isinstance(axis, bool):
        raise TypeError(f"{fn}(): axis must be an int or None, got {axis!r}")
    if not -ndim <= axis < ndim:
        raise ValueError(f"{fn}(): axis {axis} is out of bounds for an array of rank {ndim}")
    return axis % ndim


@static_helper
def _take_along_axis_axis(arr_ndim, indices_ndim, indices_kind, axis):
    """The normalized axis, after checking the arguments (returned, so that the call is
    folded into a constant where compiled)."""
    if indices_kind not in "iu":
        raise TypeError("take_along_axis(): indices must be an integer array")
    if arr_ndim != indices_ndim:
        raise ValueError(f"take_along_axis(): indices and arr must have the same rank; "
                         f"got {indices_ndim} and {arr_ndim}")
    return _normalize_axis.fn(axis, arr_ndim, "take_along_axis")


def take_along_axis(arr, indices, axis):
    """``arr`` gathered along ``axis`` at ``indices`` (same rank as ``arr``; the other axes
    broadcast against each other), as ``np.take_along_axis``. ``axis=None`` works on the
    flattened ``arr`` (``indices`` then 1-D). Negative indices count from the end;
    out-of-bounds indices raise IndexError as in NumPy (JAX fills or clamps them)."""
    arr = jnp.asarray(arr)
    indices = jnp.asarray(indices)
    if axis is None:
        arr = jnp.ravel(arr)
        axis = 0
    axis = _take_along_axis_axis(arr.ndim, indices.ndim, indices.dtype.kind, axis)
    if arr.ndim == 1:
        return arr[indices]
    am = jnp.moveaxis(arr, axis, -1)
    im = jnp.moveaxis(indices, axis, -1)
    # the other axes broadcast: their shape is that of a comparison of empty slices
    lead = (am[..., :0] == im[..., :0]).shape[:-1]
    am = jnp.broadcast_to(am, lead + am.shape[-1:])
    im = jnp.broadcast_to(im, lead + im.shape[-1:])
    a2 = jnp.reshape(am, (-1, am.shape[-1]))  # (rows, n): one row per position of lead
    i2 = jnp.reshape(im, (a2.shape[0], im.shape[-1]))
    rows = jnp.expand_dims(jnp.arange(a2.shape[0]), -1)
    out = jnp.reshape(a2[rows, i2], im.shape)
    return jnp.moveaxis(out, -1, axis)


@static_helper
def _sort_axis(ndim, order, axis):
    """The normalized axis, after checking the arguments."""
    if order is not None:
        raise NotImplementedError("sort(): order is not supported (as in JAX)")
    if ndim == 0:
        raise ValueError("sort(): needs an array of rank >= 1, got a scalar (or use "
                         "axis=None)")
    return _normalize_axis.fn(axis, ndim, "sort")


def sort(a, axis=-1, kind=None, order=None, stable=True, descending=False):
    """``a`` sorted along ``axis`` (``None``: flattened first), ascending unless
    ``descending``; NaNs go last, as in NumPy and JAX. The sort is stable; ``kind`` and
    ``stable`` are accepted and ignored, as in JAX (where these parameters are
    keyword-only; here they may also be positional, since compiled code does not take
    keyword-only parameters yet). The gradient sends each cotangent back to the element
    that landed there (ties: in the stable order)."""
    a = jnp.asarray(a)
    if axis is None:
        a = jnp.ravel(a)
        axis = 0
    axis = _sort_axis(a.ndim, order, axis)
    out = take_along_axis(a, jnp.argsort(a, axis=axis), axis)
    if descending:
        return jnp.flip(out, axis)
    return out
