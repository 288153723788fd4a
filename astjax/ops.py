"""``jax.ops``: segment reductions (``segment_sum``, ``segment_prod``, ``segment_max``,
``segment_min``), written with ``.at[]`` updates, so they run eagerly, compile, batch and
differentiate as those do.

Row ``i`` of ``data`` goes to segment ``segment_ids[i]``; ids outside ``[0, num_segments)``
are dropped, and a segment no row reaches holds the reduction's identity (0, 1, the
lowest or the highest value of the dtype), as in JAX. ``num_segments=None`` counts
``max(segment_ids) + 1`` segments, at run time under ``jit`` too (JAX needs a constant
there). ``indices_are_sorted``, ``unique_indices`` and ``bucket_size`` are hints astjax
does not need.
"""
import numpy as np

import astjax.numpy as jnp

from ._src.random.checks import static_helper


@static_helper
def _lowest(dtype):
    return -np.inf if dtype.kind in "fc" else False if dtype.kind == "b" \
        else np.iinfo(dtype).min


@static_helper
def _highest(dtype):
    return np.inf if dtype.kind in "fc" else True if dtype.kind == "b" \
        else np.iinfo(dtype).max


def _segments(kind, identity, data, segment_ids, num_segments, mode):
    data = jnp.asarray(data)
    ids = jnp.asarray(segment_ids)
    if num_segments is None:
        num_segments = jnp.max(ids) + 1
    out = jnp.full((num_segments,) + data.shape[1:], identity, data.dtype)
    if mode is None or mode == "drop" or mode == "fill":
        ids = jnp.where(ids < 0, num_segments, ids)  # dropped too (.at[] counts from the end)
        mode = "drop"
    if kind == "sum":
        return out.at[ids].add(data, mode=mode)
    if kind == "prod":
        return out.at[ids].multiply(data, mode=mode)
    if kind == "max":
        return out.at[ids].max(data, mode=mode)
    return out.at[ids].min(data, mode=mode)


def segment_sum(data, segment_ids, num_segments=None, indices_are_sorted=False,
                unique_indices=False, bucket_size=None, mode=None):
    """The sum of the rows of ``data`` in each segment (0 where there are none)."""
    return _segments("sum", 0, data, segment_ids, num_segments, mode)


def segment_prod(data, segment_ids, num_segments=None, indices_are_sorted=False,
                 unique_indices=False, bucket_size=None, mode=None):
    """The product of the rows of ``data`` in each segment (1 where there are none)."""
    return _segments("prod", 1, data, segment_ids, num_segments, mode)


def segment_max(data, segment_ids, num_segments=None, indices_are_sorted=False,
                unique_indices=False, bucket_size=None, mode=None):
    """The maximum of the rows of ``data`` in each segment (the dtype's lowest value, -inf
    for floats, where there are none)."""
    data = jnp.asarray(data)
    return _segments("max", _lowest(data.dtype), data, segment_ids, num_segments, mode)


def segment_min(data, segment_ids, num_segments=None, indices_are_sorted=False,
                unique_indices=False, bucket_size=None, mode=None):
    """The minimum of the rows of ``data`` in each segment (the dtype's highest value, inf
    for floats, where there are none)."""
    data = jnp.asarray(data)
    return _segments("min", _highest(data.dtype), data, segment_ids, num_segments, mode)
