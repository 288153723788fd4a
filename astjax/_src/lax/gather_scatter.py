"""``lax.gather`` and the ``lax.scatter`` family (``scatter``, ``scatter_add``, ``_sub``,
``_mul``, ``_min``, ``_max``, ``_apply``) for any dimension numbers, written as jnp indexing
and ``.at[]`` updates so jit (both backends), grad and vmap need no new rules.

Each operand dimension ``d`` gets one index array: the slice's start along ``d`` (from the
index vector, for a dimension in ``start_index_map``; the batch position, for an operand
batching dimension; 0 otherwise) plus ``arange(size_d)`` on an axis of its own. Indexing the
operand with all of them gives ``batch dims + the full slice``; the collapsed (inserted)
dimensions are then squeezed out (added) and the axes moved where the dimension numbers put
them. Out-of-bounds starts follow ``mode``: 'clip' clamps them so the whole window is in
bounds; 'fill' (gather) fills the window with ``fill_value``; 'drop' (scatter) discards the
window, which goes to padding added past the end and cut off after.
"""
import enum
from typing import NamedTuple, Sequence

import numpy as np

import astjax.numpy as jnp

from ..random.checks import known_or_run_time, static_helper
from .control_flow import fori_loop


class GatherDimensionNumbers(NamedTuple):
    """As ``jax.lax.GatherDimensionNumbers``: the index vector is the last axis of
    ``start_indices``."""
    offset_dims: tuple
    collapsed_slice_dims: tuple
    start_index_map: tuple
    operand_batching_dims: tuple = ()
    start_indices_batching_dims: tuple = ()


class ScatterDimensionNumbers(NamedTuple):
    """As ``jax.lax.ScatterDimensionNumbers``."""
    update_window_dims: Sequence[int]
    inserted_window_dims: Sequence[int]
    scatter_dims_to_operand_dims: Sequence[int]
    operand_batching_dims: Sequence[int] = ()
    scatter_indices_batching_dims: Sequence[int] = ()


class GatherScatterMode(enum.Enum):
    """What out-of-bounds indices do, as ``jax.lax.GatherScatterMode``: CLIP clamps the
    window into bounds, FILL_OR_DROP fills a gathered window (drops a scattered one),
    PROMISE_IN_BOUNDS clamps gathers and drops scatters (as XLA does)."""
    CLIP = enum.auto()
    FILL_OR_DROP = enum.auto()
    PROMISE_IN_BOUNDS = enum.auto()
    ONE_HOT = enum.auto()

    @staticmethod
    def from_any(s):
        if isinstance(s, GatherScatterMode):
            return s
        if s == "clip":
            return GatherScatterMode.CLIP
        if s is None or s == "fill" or s == "drop":
            return GatherScatterMode.FILL_OR_DROP
        if s == "promise_in_bounds":
            return GatherScatterMode.PROMISE_IN_BOUNDS
        if s == "one_hot":
            return GatherScatterMode.ONE_HOT
        raise ValueError(f'Unknown gather mode "{s}"')


def _tuple(seq, what, fn):
    try:
        return tuple(int(d) for d in seq)
    except TypeError:
        raise TypeError(f"{fn}: {what} must be a tuple of ints, got {seq!r}") from None


def _mode(mode, fn, scatter):
    if mode is None and not scatter:  # lax.gather's default (jnp's indexing asks for it)
        mode = GatherScatterMode.PROMISE_IN_BOUNDS
    parsed = GatherScatterMode.from_any(mode)
    if parsed is GatherScatterMode.ONE_HOT:
        raise NotImplementedError(f"{fn}: mode=one_hot is not supported by astjax")
    if parsed is GatherScatterMode.CLIP:
        return "clip"
    if parsed is GatherScatterMode.PROMISE_IN_BOUNDS:
        return "drop" if scatter else "clip"
    return "drop" if scatter else "fill"


def _check_dims(fn, rank, dims, names):
    """``dims``: {what: tuple of operand dimensions}; each in range, and disjoint."""
    seen = set()
    for what, ds in dims.items():
        for d in ds:
            if not 0 <= d < rank:
                raise TypeError(f"{fn}: {what} {ds} must be dimensions of the operand "
                                f"(rank {rank})")
            if d in seen:
                raise TypeError(f"{fn}: operand dimension {d} appears twice in "
                                f"{', '.join(names)}")
            seen.add(d)


def _layout(rank, start_map, batching, index_batching):
    """The static plan shared by gather and scatter: per operand dimension, where its start
    comes from ("start", i), ("batch", indices axis) or None."""
    source = []
    for d in range(rank):
        if d in start_map:
            source.append(("start", start_map.index(d)))
        elif d in batching:
            source.append(("batch", index_batching[batching.index(d)]))
        else:
            source.append(None)
    return tuple(source)


@static_helper
def _gather_spec(offset, collapsed, start_map, batching, index_batching, slice_sizes, rank,
                 indices_ndim, mode, dtype, fill_value):
    fn = "gather"
    offset = _tuple(offset, "offset_dims", fn)
    collapsed = _tuple(collapsed, "collapsed_slice_dims", fn)
    start_map = _tuple(start_map, "start_index_map", fn)
    batching = _tuple(batching, "operand_batching_dims", fn)
    index_batching = _tuple(index_batching, "start_indices_batching_dims", fn)
    sizes = _tuple(slice_sizes, "slice_sizes", fn)
    nb = indices_ndim - 1
    if indices_ndim < 1:
        raise TypeError("gather: start_indices must have at least one dimension (the index "
                        "vector, last)")
    if len(sizes) != rank:
        raise TypeError(f"Gather op must have one slice size for every input dimension; got: "
                        f"len(slice_sizes)={len(sizes)}, input_shape.rank={rank}")
    _check_dims(fn, rank, {"collapsed_slice_dims": collapsed,
                               "operand_batching_dims": batching},
                ("collapsed_slice_dims", "operand_batching_dims"))
    if any(sizes[d] != 1 for d in collapsed + batching):
        raise TypeError(f"Gather op can only collapse slice dims with bound 1, but bound is "
                        f"{[sizes[d] for d in collapsed + batching]} for collapsed and "
                        f"batching dims {collapsed + batching}")
    if any(not 0 <= d < rank for d in start_map) or len(set(start_map)) != len(start_map):
        raise TypeError(f"gather: start_index_map {start_map} must be distinct dimensions of "
                        f"the operand (rank {rank})")
    if len(batching) != len(index_batching) or \
            any(not 0 <= d < nb for d in index_batching):
        raise TypeError(f"gather: start_indices_batching_dims {index_batching} must name one "
                        f"batch dimension of start_indices per operand batching dimension "
                        f"{batching}")
    out_rank = nb + len(offset)
    kept = [d for d in range(rank) if d not in collapsed + batching]
    if len(offset) != len(kept) or list(offset) != sorted(offset) or \
            any(not 0 <= p < out_rank for p in offset):
        raise TypeError(f"gather: offset_dims {offset} must be {len(kept)} ascending output "
                        f"dimensions (of {out_rank})")
    mode_ = _mode(mode, fn, False)
    if mode_ == "fill" and fill_value is None:
        dtype = np.dtype(dtype)
        fill_value = (np.nan if dtype.kind in "fc" else int(np.iinfo(dtype).min)
                      if dtype.kind == "i" else int(np.iinfo(dtype).max) if dtype.kind == "u"
                      else True)
    source = _layout(rank, start_map, batching, index_batching)
    squeezed = tuple(nb + d for d in sorted(collapsed + batching))
    # after the squeeze: batch dims, then the kept slice dims; output position p holds
    # kept slice dim offset.index(p), or the next batch dim
    perm, b = [], 0
    for p in range(out_rank):
        if p in offset:
            perm.append(nb + offset.index(p))
        else:
            perm.append(b)
            b += 1
    return source, sizes, mode_, fill_value, squeezed, tuple(perm), nb, len(start_map)


def _check_vector(length, n_starts, fn):
    if length != n_starts:
        raise TypeError(f"{fn}: the index vectors (the last axis of the indices) have "
                        f"{length} entries, but the dimension numbers map {n_starts}")


def _unchecked(length, n_starts, fn):
    return None


# the index vector's length is checked where it is known (eagerly), not at run time
_index_vector = known_or_run_time(_check_vector, _unchecked)


def _axis_shape(position, ndim):
    """A shape of ``ndim`` ones with -1 at ``position``."""
    return tuple(-1 if k == position else 1 for k in range(ndim))


_axis_shape = static_helper(_axis_shape)


def _index_arrays(starts, index_axes, source, sizes, nb, d):
    """The index array of each operand dimension from ``d`` on: ``starts`` (batch shaped,
    already clipped, one per start_index_map entry), ``index_axes`` the indices array's
    batch sizes (for batching dimensions), ``sizes`` the window's sizes."""
    rank = len(source)
    if d == rank:
        return ()
    where = source[d]
    offsets = jnp.reshape(jnp.arange(sizes[d]), _axis_shape(nb + d, nb + rank))
    if where is None:
        ix = offsets
    elif where[0] == "start":
        ix = jnp.expand_dims(starts[where[1]], _trailing(nb, rank)) + offsets
    else:
        ix = jnp.reshape(jnp.arange(index_axes[where[1]]), _axis_shape(where[1], nb + rank))
    return (ix,) + _index_arrays(starts, index_axes, source, sizes, nb, d + 1)


@static_helper
def _trailing(nb, rank):
    return tuple(range(nb, nb + rank))


def _starts(indices, k, n):
    """The columns ``indices[..., k:n]`` as a tuple."""
    if k == n:
        return ()
    return (indices[..., k],) + _starts(indices, k + 1, n)


def _bounds(operand_shape, starts, source, sizes, d):
    """(clipped starts, in bounds) for the start-mapped dimensions from ``d`` on."""
    if d == len(source):
        return (), True
    rest, ok = _bounds(operand_shape, starts, source, sizes, d + 1)
    where = source[d]
    if where is None or where[0] != "start":
        return rest, ok
    s = starts[where[1]]
    high = operand_shape[d] - sizes[d]
    inside = jnp.logical_and(s >= 0, s <= high)
    return ((where[1], jnp.clip(s, 0, high)),) + rest, jnp.logical_and(inside, ok)


def _ordered(pairs, n, k):
    """The clipped starts in start_index_map order (``pairs``: (position, start))."""
    if k == n:
        return ()
    return (_find(pairs, k, 0),) + _ordered(pairs, n, k + 1)


def _find(pairs, k, j):
    if pairs[j][0] == k:
        return pairs[j][1]
    return _find(pairs, k, j + 1)


def gather(operand, start_indices, dimension_numbers, slice_sizes, *,
           unique_indices=False, indices_are_sorted=False, mode=None, fill_value=None):
    """``lax.gather``: slices of ``slice_sizes`` of ``operand`` starting at the index
    vectors (the last axis of ``start_indices``) laid out by ``dimension_numbers``;
    ``mode`` 'clip' or 'promise_in_bounds' (the default) clamps windows into bounds, 'fill'
    fills out-of-bounds windows with ``fill_value`` (NaN, or the integer type's extreme,
    or True)."""
    x = jnp.asarray(operand)
    indices = jnp.asarray(start_indices)
    dn = dimension_numbers  # (its fields are static; the tuple, a pytree, is not)
    (source, sizes, mode_, fill, squeezed, perm, nb,
     n_starts) = _gather_spec(dn.offset_dims, dn.collapsed_slice_dims, dn.start_index_map,
                              dn.operand_batching_dims, dn.start_indices_batching_dims,
                              slice_sizes, x.ndim, indices.ndim, mode, x.dtype, fill_value)
    _index_vector(indices.shape[-1], n_starts, "gather")
    pairs, ok = _bounds(x.shape, _starts(indices, 0, n_starts), source, sizes, 0)
    starts = _ordered(pairs, n_starts, 0)
    out = x[_index_arrays(starts, indices.shape, source, sizes, nb, 0)]
    if mode_ == "fill":
        mask = jnp.expand_dims(ok, _trailing(nb, x.ndim))
        out = jnp.where(mask, out, jnp.asarray(fill).astype(x.dtype))
    if len(squeezed):
        out = jnp.squeeze(out, axis=squeezed)
    return jnp.transpose(out, perm)


# ---- scatter -------------------------------------------------------------------------------

@static_helper
def _scatter_spec(window, inserted, start_map, batching, index_batching, rank, indices_ndim,
                  updates_ndim, mode, fn):
    window = _tuple(window, "update_window_dims", fn)
    inserted = _tuple(inserted, "inserted_window_dims", fn)
    start_map = _tuple(start_map, "scatter_dims_to_operand_dims", fn)
    batching = _tuple(batching, "operand_batching_dims", fn)
    index_batching = _tuple(index_batching, "scatter_indices_batching_dims", fn)
    if indices_ndim < 1:
        raise TypeError(f"{fn}: scatter_indices must have at least one dimension (the index "
                        f"vector, last)")
    nb = indices_ndim - 1
    _check_dims(fn, rank, {"inserted_window_dims": inserted,
                               "operand_batching_dims": batching},
                ("inserted_window_dims", "operand_batching_dims"))
    if any(not 0 <= d < rank for d in start_map) or len(set(start_map)) != len(start_map):
        raise TypeError(f"{fn}: scatter_dims_to_operand_dims {start_map} must be distinct "
                        f"dimensions of the operand (rank {rank})")
    if len(batching) != len(index_batching) or \
            any(not 0 <= d < nb for d in index_batching):
        raise TypeError(f"{fn}: scatter_indices_batching_dims {index_batching} must name one "
                        f"batch dimension of scatter_indices per operand batching dimension "
                        f"{batching}")
    kept = [d for d in range(rank) if d not in inserted + batching]
    if len(window) != len(kept) or list(window) != sorted(window) or \
            any(not 0 <= p < updates_ndim for p in window) or \
            updates_ndim != nb + len(window):
        raise TypeError(f"{fn}: update_window_dims {window} must be {len(kept)} ascending "
                        f"dimensions of updates, which must have rank {nb + len(kept)} "
                        f"(got {updates_ndim})")
    source = _layout(rank, start_map, batching, index_batching)
    # updates' axes: batch dims first, then the window dims; then the inserted dims added
    to_front = tuple(p for p in range(updates_ndim) if p not in window) + window
    added = tuple(nb + d for d in sorted(inserted + batching))
    return source, _mode(mode, fn, True), to_front, added, nb, len(start_map)


def _window_sizes(u_shape, nb, d, rank):
    if d == rank:
        return ()
    return (u_shape[nb + d],) + _window_sizes(u_shape, nb, d + 1, rank)


def _pad_end(x, d, w):
    """``x`` with ``w`` zeros appended along axis ``d``."""
    return jnp.concatenate([x, jnp.zeros(x.shape[:d] + (w,) + x.shape[d + 1:], x.dtype)],
                           axis=d)


def _padded(x, source, sizes, d):
    """``x`` padded past the end of each start-mapped dimension by its window size, where
    dropped windows go."""
    if d == len(source):
        return x
    if source[d] is not None and source[d][0] == "start":
        x = _pad_end(x, d, sizes[d])
    return _padded(x, source, sizes, d + 1)


def _cut(x, shape, source, d):
    if d == len(source):
        return x
    if source[d] is not None and source[d][0] == "start":
        x = jnp.moveaxis(jnp.moveaxis(x, d, 0)[:shape[d]], 0, d)
    return _cut(x, shape, source, d + 1)


def _scatter(operand, scatter_indices, updates, dimension_numbers, mode, kind, fn, func):
    x = jnp.asarray(operand)
    indices = jnp.asarray(scatter_indices)
    u = jnp.asarray(updates)
    dn = dimension_numbers  # (its fields are static; the tuple, a pytree, is not)
    source, mode_, to_front, added, nb, n_starts = _scatter_spec(
        dn.update_window_dims, dn.inserted_window_dims, dn.scatter_dims_to_operand_dims,
        dn.operand_batching_dims, dn.scatter_indices_batching_dims, x.ndim, indices.ndim,
        u.ndim, mode, fn)
    _index_vector(indices.shape[-1], n_starts, fn)
    u = jnp.transpose(u, to_front)
    if len(added):
        u = jnp.expand_dims(u, added)
    sizes = _window_sizes(u.shape, nb, 0, x.ndim)
    pairs, ok = _bounds(x.shape, _starts(indices, 0, n_starts), source, sizes, 0)
    shape = x.shape
    if mode_ == "drop":
        x = _padded(x, source, sizes, 0)
        pairs = _moved(pairs, ok, shape, source, 0)
    index = _index_arrays(_ordered(pairs, n_starts, 0), indices.shape, source, sizes, nb, 0)
    u = u.astype(x.dtype)
    if kind == "set":
        x = x.at[index].set(u)
    elif kind == "add":
        x = x.at[index].add(u)
    elif kind == "sub":
        x = x.at[index].subtract(u)
    elif kind == "mul":
        x = x.at[index].multiply(u)
    elif kind == "min":
        x = x.at[index].min(u)
    elif kind == "max":
        x = x.at[index].max(u)
    else:  # func once per time an element is hit, as JAX's one scatter update at a time
        hits = jnp.zeros(x.shape, jnp.int32).at[index].add(jnp.ones(u.shape, jnp.int32))

        def apply_again(step, acc):
            return jnp.where(hits > step, func(acc), acc)
        x = fori_loop(0, jnp.max(hits), apply_again, x)
    if mode_ == "drop":
        x = _cut(x, shape, source, 0)
    return x


def _moved(pairs, ok, shape, source, d):
    """``pairs`` (position in start_index_map, clipped start) with the start of a window out
    of bounds (``ok`` False) moved past the end of its dimension, into the padding."""
    if d == len(source):
        return ()
    rest = _moved(pairs, ok, shape, source, d + 1)
    where = source[d]
    if where is None or where[0] != "start":
        return rest
    return ((where[1], jnp.where(ok, _find(pairs, where[1], 0), shape[d])),) + rest


def scatter(operand, scatter_indices, updates, dimension_numbers, *,
            indices_are_sorted=False, unique_indices=False, mode=None):
    """``lax.scatter``: ``operand`` with the windows at the index vectors (the last axis of
    ``scatter_indices``) replaced by ``updates``; repeated indices: the last wins.
    ``mode`` 'clip' clamps windows into bounds, 'drop' (the default) discards those out of
    bounds."""
    return _scatter(operand, scatter_indices, updates, dimension_numbers, mode, "set",
                    "scatter", None)


def scatter_add(operand, scatter_indices, updates, dimension_numbers, *,
                indices_are_sorted=False, unique_indices=False, mode=None):
    """``lax.scatter_add``: ``updates`` added at the windows (repeated indices add up)."""
    return _scatter(operand, scatter_indices, updates, dimension_numbers, mode, "add",
                    "scatter_add", None)


def scatter_sub(operand, scatter_indices, updates, dimension_numbers, *,
                indices_are_sorted=False, unique_indices=False, mode=None):
    return _scatter(operand, scatter_indices, updates, dimension_numbers, mode, "sub",
                    "scatter_sub", None)


def scatter_mul(operand, scatter_indices, updates, dimension_numbers, *,
                indices_are_sorted=False, unique_indices=False, mode=None):
    return _scatter(operand, scatter_indices, updates, dimension_numbers, mode, "mul",
                    "scatter_mul", None)


def scatter_min(operand, scatter_indices, updates, dimension_numbers, *,
                indices_are_sorted=False, unique_indices=False, mode=None):
    return _scatter(operand, scatter_indices, updates, dimension_numbers, mode, "min",
                    "scatter_min", None)


def scatter_max(operand, scatter_indices, updates, dimension_numbers, *,
                indices_are_sorted=False, unique_indices=False, mode=None):
    return _scatter(operand, scatter_indices, updates, dimension_numbers, mode, "max",
                    "scatter_max", None)


def scatter_apply(operand, scatter_indices, func, dimension_numbers, *, update_shape=(),
                  indices_are_sorted=False, unique_indices=False, mode=None):
    """``lax.scatter_apply``: the scalar function ``func`` applied to each element of the
    windows at the index vectors, once per window that holds it (as JAX)."""
    x = jnp.asarray(operand)
    return _scatter(x, scatter_indices, jnp.zeros(update_shape, x.dtype), dimension_numbers,
                    mode, "apply", "scatter_apply", func)
