"""Index arrays and indexed updates written with ``astjax.numpy`` ops (``take``,
``put_along_axis``, ``tril_indices``, ``indices``, ``delete``, ``insert``, ``unravel_index``,
``meshgrid``, ...) and NumPy's index helpers (``s_``, ``mgrid``, ``r_``, ...), part of
``_array_building``. Semantics and dtypes follow JAX 0.10.2.
"""
import numpy as np

import astjax.numpy as jnp

from .._src.random.checks import static_helper  # evaluated while generating code
from ._sorting import _normalize_axis


def _first(mask, count):
    """The positions where the 1-D ``mask`` holds, in order, of which there are
    ``count``: JAX's ``where(mask, size=count)[0]`` with ``count`` a run-time int."""
    return jnp.argsort(jnp.logical_not(mask), stable=True)[:count]


def _along(a, i, axis):
    """``a`` gathered at the 1-D ``i`` along ``axis``."""
    return jnp.moveaxis(jnp.moveaxis(a, axis, 0)[i], 0, axis)


def _index_dtype(x):
    """``x`` in the default int (int32, or int64 with 64-bit types on)."""
    return x.astype(jnp.arange(0).dtype)


# ---- take, put_along_axis -------------------------------------------------------------

@static_helper
def _take_args(ndim, axis, mode, kind, out):
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.take is not supported.")
    if kind not in "iu":
        raise TypeError("take(): indices must be an integer array")
    if mode is None:
        mode = "fill"
    if mode == "raise":
        raise NotImplementedError("The 'raise' mode to jnp.take is not supported.")
    if mode not in ("fill", "clip", "wrap", "promise_in_bounds"):
        raise ValueError(f"Invalid mode '{mode}' for np.take")
    return mode, _normalize_axis.fn(axis, ndim, "take")


@static_helper
def _fill_value(dtype):
    """JAX's fill for out-of-bounds gathers: NaN, the least signed int, the largest
    unsigned one, True."""
    if dtype.kind in "fc":
        return np.nan
    if dtype.kind == "i":
        return int(np.iinfo(dtype).min)
    if dtype.kind == "u":
        return int(np.iinfo(dtype).max)
    return True


@static_helper
def _span(start, stop):
    return tuple(range(start, stop))


def take(a, indices, axis=None, out=None, mode=None, unique_indices=False,
         indices_are_sorted=False, fill_value=None):
    """The elements of ``a`` at ``indices`` along ``axis`` (``a`` flattened if None), as
    ``jnp.take``: by default (``mode='fill'``) negative indices count from the end and
    ones out of bounds give ``fill_value`` (NaN for inexact dtypes, the extreme int for
    integers, True for bools); ``'clip'`` clamps, ``'wrap'`` wraps around."""
    a = jnp.asarray(a)
    indices = jnp.asarray(indices)
    if axis is None:
        a = jnp.ravel(a)
        axis = 0
    mode, ax = _take_args(a.ndim, axis, mode, indices.dtype.kind, out)
    n = a.shape[ax]
    if mode == "wrap":
        i = jnp.remainder(indices, n)
    elif mode == "clip":
        i = jnp.clip(indices, 0, n - 1)
    elif mode == "fill":
        i = jnp.where(indices < 0, indices + n, indices)
    else:
        i = indices
    rest = a.ndim - 1
    if mode == "fill":
        inside = jnp.logical_and(i >= 0, i < n)
        g = jnp.moveaxis(a, ax, -1)[..., jnp.where(inside, i, jnp.zeros_like(i))]
        if fill_value is None:
            fill = jnp.asarray(_fill_value(a.dtype)).astype(a.dtype)
        else:
            fill = jnp.asarray(fill_value).astype(a.dtype)
        g = jnp.where(inside, g, fill)
    else:
        g = jnp.moveaxis(a, ax, -1)[..., i]
    return jnp.moveaxis(g, _span(rest, rest + indices.ndim), _span(ax, ax + indices.ndim))


@static_helper
def _put_along_args(arr_ndim, indices_ndim, kind, axis, inplace, mode):
    if inplace:
        raise ValueError("jax.numpy.put_along_axis cannot modify arrays in-place, because "
                         "JAX arrays are immutable. Pass inplace=False to instead return an "
                         "updated array.")
    if mode not in (None, "promise_in_bounds"):
        raise NotImplementedError(f"put_along_axis(): mode {mode!r} is not supported (out "
                                  "of bounds indices raise IndexError)")
    if kind not in "iu":
        raise TypeError("put_along_axis(): indices must be an integer array")
    if arr_ndim != indices_ndim:
        raise ValueError("put_along_axis arguments 'arr' and 'indices' must have same ndim. "
                         f"Got arr.ndim={arr_ndim} and indices.ndim={indices_ndim}.")
    return _normalize_axis.fn(axis, arr_ndim, "put_along_axis")


def put_along_axis(arr, indices, values, axis, inplace=True, mode=None):
    """``arr`` with ``values`` written at ``indices`` along ``axis`` (the other axes of
    ``indices`` broadcast against ``arr``'s), as ``jnp.put_along_axis``; JAX's arrays are
    immutable, so ``inplace=False`` is required."""
    arr = jnp.asarray(arr)
    indices = jnp.asarray(indices)
    shape = arr.shape
    if axis is None:
        arr = jnp.ravel(arr)
        axis = 0
    ax = _put_along_args(arr.ndim, indices.ndim, indices.dtype.kind, axis, inplace, mode)
    values = jnp.broadcast_to(jnp.asarray(values).astype(arr.dtype), indices.shape)
    am = jnp.moveaxis(arr, ax, -1)
    im = jnp.moveaxis(indices, ax, -1)
    vm = jnp.moveaxis(values, ax, -1)
    lead = am.shape[:-1]
    im = jnp.broadcast_to(im, lead + im.shape[-1:])
    vm = jnp.broadcast_to(vm, im.shape)
    a2 = jnp.reshape(am, (-1, am.shape[-1]))  # one row per position of the other axes
    i2 = jnp.reshape(im, (a2.shape[0], im.shape[-1]))
    rows = jnp.expand_dims(jnp.arange(a2.shape[0]), -1)
    out = a2.at[rows, i2].set(jnp.reshape(vm, i2.shape))
    return jnp.reshape(jnp.moveaxis(jnp.reshape(out, am.shape), -1, ax), shape)


# ---- index arrays -----------------------------------------------------------------------

def _tri_indices(n, m, k, lower):
    """The row and column indices, row by row, of where ``col - row <= k`` (``>= k`` if
    not ``lower``) in an ``n`` by ``m`` array."""
    rows = jnp.expand_dims(jnp.arange(n), -1)
    cols = jnp.arange(m)
    if lower:
        mask = jnp.ravel(cols - rows <= k)
    else:
        mask = jnp.ravel(cols - rows >= k)
    flat = _index_dtype(_first(mask, jnp.sum(mask)))
    m1 = jnp.maximum(m, 1)  # m == 0: no indices, and no division by 0
    return flat // m1, flat % m1


def tril_indices(n, k=0, m=None):
    """The indices of the lower triangle (on and below the ``k``-th diagonal) of an
    ``n`` by ``m`` (default ``n``) array."""
    if m is None:
        m = n
    return _tri_indices(n, m, k, True)


def triu_indices(n, k=0, m=None):
    """The indices of the upper triangle (on and above the ``k``-th diagonal) of an
    ``n`` by ``m`` (default ``n``) array."""
    if m is None:
        m = n
    return _tri_indices(n, m, k, False)


@static_helper
def _check_2d(ndim):
    if ndim != 2:
        raise ValueError("Only 2-D inputs are accepted")
    return ndim


def tril_indices_from(arr, k=0):
    """``tril_indices`` for the shape of the 2-D ``arr``."""
    arr = jnp.asarray(arr)
    _check_2d(arr.ndim)
    return _tri_indices(arr.shape[0], arr.shape[1], k, True)


def triu_indices_from(arr, k=0):
    """``triu_indices`` for the shape of the 2-D ``arr``."""
    arr = jnp.asarray(arr)
    _check_2d(arr.ndim)
    return _tri_indices(arr.shape[0], arr.shape[1], k, False)


@static_helper
def _check_diag_indices(n, ndim):
    if isinstance(n, int) and n < 0:
        raise ValueError(f"n argument to diag_indices must be nonnegative, got {n}")
    if not isinstance(ndim, int) or ndim < 0:
        raise ValueError(f"ndim argument to diag_indices must be a nonnegative int, got {ndim}")
    return ndim


def diag_indices(n, ndim=2):
    """``ndim`` copies of ``arange(n)``: the indices of the main diagonal of an
    ``n``-cube of rank ``ndim``."""
    ndim = _check_diag_indices(n if isinstance(n, int) else 0, ndim)
    return (jnp.arange(n),) * ndim


@static_helper
def _check_square(ndim, shape):
    if ndim < 2:
        raise ValueError("input array must be at least 2-d")
    if shape is not None and len(set(shape)) != 1:
        raise ValueError("All dimensions of input must be of equal length")
    return ndim


def _static_shape(x):
    """``x.shape`` where its sizes are Python ints (eagerly), else None (under ``jit``,
    where they are known only at run time and cannot be checked)."""
    if isinstance(x.shape[0], int):
        return x.shape
    return None


def diag_indices_from(arr):
    """``diag_indices`` for the square ``arr`` (all its axes of one length)."""
    arr = jnp.asarray(arr)
    ndim = _check_square(arr.ndim, _static_shape(arr) if arr.ndim else None)
    return (jnp.arange(arr.shape[0]),) * ndim


@static_helper
def _ones_but(n, i):
    return (1,) * i + (-1,) + (1,) * (n - i - 1)


def _grids(dimensions, i, dtype, sparse):
    """The index grids of ``dimensions`` from axis ``i`` on (a tuple)."""
    n = len(dimensions)
    if i == n:
        return ()
    g = jnp.reshape(jnp.arange(dimensions[i]), _ones_but(n, i))
    if dtype is not None:
        g = g.astype(dtype)
    if not sparse:
        g = jnp.broadcast_to(g, dimensions)
    return (g,) + _grids(dimensions, i + 1, dtype, sparse)


def indices(dimensions, dtype=None, sparse=False):
    """The grid of indices of an array of shape ``dimensions``: one array per axis,
    stacked (or, if ``sparse``, a tuple of arrays broadcast against each other)."""
    dimensions = tuple(dimensions)
    grids = _grids(dimensions, 0, dtype, sparse)
    if sparse:
        return grids
    if len(dimensions) == 0:
        out = jnp.zeros((0,), int)
        if dtype is not None:
            return out.astype(dtype)
        return out
    return jnp.stack(grids, 0)


@static_helper
def _check_meshgrid(copy, indexing):
    if not copy:
        raise ValueError("jax.numpy.meshgrid only supports copy=True")
    if indexing not in ("xy", "ij"):
        raise ValueError(f"Valid values for indexing are 'xy' and 'ij', got {indexing}")
    return indexing


@static_helper
def _check_1d(ndim, kind, fn):
    if ndim != 1:
        raise ValueError(f"Arguments to jax.numpy.{fn} must be 1D, got an array of rank {ndim}")
    if fn == "ix_" and kind == "b":
        raise NotImplementedError("Boolean arguments to jax.numpy.ix_ are not implemented")
    return ndim


def _open_mesh(xs, i, swap, fn):
    """``xs[i:]``, each 1-D, reshaped to lie along its own axis of ``len(xs)`` (the first
    two swapped if ``swap``), as a tuple."""
    n = len(xs)
    if i == n:
        return ()
    x = jnp.asarray(xs[i])
    _check_1d(x.ndim, x.dtype.kind, fn)
    j = i
    if swap and i < 2:
        j = 1 - i
    return (jnp.reshape(x, _ones_but(n, j)),) + _open_mesh(xs, i + 1, swap, fn)


def _mesh_shape(grids, k):
    """The shape of the dense grid: the length of each sparse grid along its axis (the
    ``k``-th lies along axis ``k``)."""
    if k == len(grids):
        return ()
    return (grids[k].shape[k],) + _mesh_shape(grids, k + 1)


def _dense(grids, i, shape):
    if i == len(grids):
        return ()
    return (jnp.broadcast_to(grids[i], shape),) + _dense(grids, i + 1, shape)


def meshgrid(*xi, copy=True, sparse=False, indexing="xy"):
    """Coordinate grids of the 1-D arrays ``xi``: with ``indexing='xy'`` the first two
    axes are swapped (Cartesian), with ``'ij'`` they are not (matrix indexing); ``sparse``
    keeps length-1 axes instead of broadcasting. A list, as in JAX."""
    indexing = _check_meshgrid(copy, indexing)
    n = len(xi)
    out = _open_mesh(xi, 0, indexing == "xy" and n >= 2, "meshgrid")
    if sparse or n == 0:
        return list(out)
    by_axis = out
    if indexing == "xy" and n >= 2:
        by_axis = (out[1], out[0]) + out[2:]
    return list(_dense(out, 0, _mesh_shape(by_axis, 0)))


def ix_(*args):
    """An open mesh of the 1-D integer arrays ``args``: the ``i``-th reshaped to lie along
    axis ``i`` of ``len(args)``, for indexing the cross product of their positions."""
    return _open_mesh(args, 0, False, "ix_")


# ---- delete, insert, fill_diagonal ----------------------------------------------------

@static_helper
def _no_sequence(obj, fn):
    raise TypeError(f"{fn} requires ndarray or scalar arguments, got {type(obj)} at position 1.")


@static_helper
def _check_delete_index(obj, n):
    if not -n <= obj < n:
        raise IndexError(f"index {obj} is out of bounds for axis with size {n}")
    return obj % n


def _flat_or_along(arr, obj, axis, name):
    """delete's and insert's ``arr`` as an array, flattened when ``axis`` is None, and the
    axis ``obj`` indexes; ``obj`` a list or tuple is refused, as in JAX."""
    a = jnp.asarray(arr)
    if axis is None:
        a = jnp.ravel(a)
        axis = 0
    ax = _normalize_axis(axis, a.ndim, name)
    if isinstance(obj, (list, tuple)):
        _no_sequence(obj, name)
    return a, ax


def delete(arr, obj, axis=None, assume_unique_indices=False):
    """``arr`` without the entries at ``obj`` (an int, a slice, an integer array, or a
    boolean mask of the axis' length) along ``axis`` (``arr`` flattened if None). Indices
    may be known only at run time, and repeat."""
    a, ax = _flat_or_along(arr, obj, axis, "delete")
    n = a.shape[ax]
    if isinstance(obj, int) and not isinstance(obj, bool):
        if isinstance(n, int):
            obj = _check_delete_index(obj, n)
        elif obj < 0:
            obj = obj + n
        am = jnp.moveaxis(a, ax, 0)
        return jnp.moveaxis(jnp.concatenate((am[:obj], am[obj + 1:])), 0, ax)
    if isinstance(obj, slice):
        keep = jnp.ones((n,), bool).at[obj].set(False)
    else:
        obj = jnp.asarray(obj)
        if _is_bool_kind(obj.dtype.kind, obj.ndim):
            keep = jnp.logical_not(jnp.broadcast_to(obj, (n,)))
        else:
            keep = jnp.ones((n,), bool).at[jnp.ravel(obj)].set(False)
    return _along(a, _first(keep, jnp.sum(keep)), ax)


@static_helper
def _is_bool_kind(kind, ndim):
    if kind == "b":
        if ndim != 1:
            raise ValueError("np.delete(arr, obj): for boolean indices, obj must be "
                             "one-dimensional with length matching specified axis.")
        return True
    if kind not in "iu":
        raise ValueError(f"np.delete(arr, obj): got obj of kind {kind!r}; must be integer "
                         "or bool.")
    return False


@static_helper
def _insert_check(kind, ndim, v_ndim, a_ndim):
    if ndim > 1:
        raise ValueError("jnp.insert(): obj must be a slice, a one-dimensional array, or a "
                         "scalar")
    if kind not in "iu":
        raise ValueError("jnp.insert(): index array must be integer typed")
    if v_ndim > a_ndim:
        return ()
    return (1,) * (a_ndim - v_ndim)


def insert(arr, obj, values, axis=None):
    """``arr`` with ``values`` inserted before the positions ``obj`` (an int, a slice or a
    1-D integer array) along ``axis`` (``arr`` flattened if None), as ``jnp.insert``:
    ``values`` take ``arr``'s dtype; an int ``obj`` inserts ``values`` (its first axis
    along ``axis``) as a block."""
    a, ax = _flat_or_along(arr, obj, axis, "insert")
    n_input = a.shape[ax]
    if isinstance(obj, slice):
        idx = jnp.arange(n_input)[obj]
    else:
        idx = jnp.asarray(obj)
    v = jnp.asarray(values).astype(a.dtype)
    v = jnp.reshape(v, _insert_check(idx.dtype.kind, idx.ndim, v.ndim, a.ndim) + v.shape)
    if idx.ndim == 0:
        v = jnp.moveaxis(v, 0, ax)
        n_insert = v.shape[ax]
        idx = jnp.full((n_insert,), idx)
    else:
        n_insert = jnp.maximum(idx.shape[0], v.shape[ax])
        idx = jnp.broadcast_to(idx, (n_insert,))
    idx = jnp.where(idx < 0, idx + n_input, idx)
    idx = jnp.clip(idx, 0, n_input)
    # where each inserted value lands: its index, plus the values inserted before it
    at = idx.at[jnp.argsort(idx, stable=True)].add(jnp.arange(n_insert).astype(idx.dtype))
    keep = jnp.ones((n_input + n_insert,), bool).at[at].set(False)
    am = jnp.moveaxis(a, ax, 0)
    vm = jnp.moveaxis(v, ax, 0)
    out = jnp.zeros((n_input + n_insert,) + am.shape[1:], a.dtype)
    out = out.at[at].set(jnp.broadcast_to(vm, (n_insert,) + am.shape[1:]))
    out = out.at[_first(keep, n_input)].set(am)
    return jnp.moveaxis(out, 0, ax)


@static_helper
def _fill_diagonal_check(wrap, inplace, ndim, shape):
    if inplace:
        raise NotImplementedError("JAX arrays are immutable, must use inplace=False")
    if wrap:
        raise NotImplementedError("wrap=True is not implemented, must use wrap=False")
    if ndim < 2:
        raise ValueError("array must be at least 2-d")
    if ndim > 2 and shape is not None and len(set(shape)) != 1:
        raise ValueError("All dimensions of input must be of equal length")
    return ndim


def fill_diagonal(a, val, wrap=False, inplace=True):
    """``a`` with ``val`` (a scalar, or values repeated along the diagonal) on its main
    diagonal, as ``jnp.fill_diagonal``, which needs ``inplace=False``."""
    a = jnp.asarray(a)
    val = jnp.asarray(val)
    shape = _static_shape(a) if a.ndim else None
    ndim = _fill_diagonal_check(wrap, inplace, a.ndim, shape)
    if ndim == 2:
        n = jnp.minimum(a.shape[0], a.shape[1])
    else:
        n = a.shape[0]
    i = jnp.arange(n)
    if val.ndim == 0:
        return a.at[(i,) * ndim].set(val.astype(a.dtype))
    v = jnp.ravel(val).astype(a.dtype)
    return a.at[(i,) * ndim].set(v[jnp.remainder(i, v.shape[0])])


# ---- flat indices -----------------------------------------------------------------------

@static_helper
def _unravel_shape(shape, kind):
    if kind not in "iu":
        raise TypeError("unravel_index(): indices must be an integer array")
    shape = tuple(shape) if isinstance(shape, (tuple, list)) else (shape,)
    if any(np.ndim(s) != 0 for s in shape):
        raise ValueError("unravel_index: shape should be a scalar or 1D sequence.")
    shape = tuple(int(s) for s in shape)
    strides = tuple(int(np.prod(shape[i + 1:], dtype=np.int64)) for i in range(len(shape)))
    return shape, strides, int(np.prod(shape, dtype=np.int64))


def _unravel(idx, q, shape, strides, i, signed):
    if i == len(shape):
        return ()
    c = jnp.remainder(jnp.floor_divide(idx, strides[i]), shape[i])
    if signed:
        c = jnp.where(q < -1, jnp.zeros_like(c), c)
    c = jnp.where(q > 0, jnp.full_like(c, shape[i] - 1), c)
    return (c,) + _unravel(idx, q, shape, strides, i + 1, signed)


def unravel_index(indices, shape):
    """The coordinates in an array of ``shape`` of the flat ``indices``, as a tuple of
    arrays of their dtype. As JAX: an index from ``-size`` to ``-1`` counts from the end;
    ones further out are clamped to the first or last element (NumPy raises)."""
    idx = jnp.asarray(indices)
    shape, strides, size = _unravel_shape(shape, idx.dtype.kind)
    q = jnp.floor_divide(idx, size)
    return _unravel(idx, q, shape, strides, 0, idx.dtype.kind == "i")


@static_helper
def _ravel_args(n_index, dims, mode, order):
    dims = tuple(int(d) for d in dims)
    if n_index != len(dims):
        raise ValueError(f"len(multi_index)={n_index} != len(dims)={len(dims)}")
    if mode not in ("raise", "wrap", "clip", "ignore"):
        raise ValueError(f"invalid mode={mode!r}. Expected 'raise', 'wrap', 'clip', or "
                         "'ignore'.")
    if order == "F":
        strides = np.cumprod((1,) + dims[:-1])
    elif order == "C":
        strides = np.cumprod((1,) + dims[1:][::-1])[::-1]
    else:
        raise ValueError(f"invalid order={order!r}. Expected 'C' or 'F'")
    return dims, tuple(int(s) for s in strides)


@static_helper
def _ravel_dtype(dtype, promoted):
    dt = promoted if dtype is None else np.dtype(dtype)
    if dt.kind not in "iu":
        raise ValueError(f"dtype={dt!r} is not an integer type.")
    return dt


def _promoted_kind(multi_index, i):
    """The dtype of the ``multi_index`` arrays from ``i`` on, promoted together with a
    Python int (an empty slice)."""
    z = jnp.ravel(jnp.asarray(multi_index[i]))[:0]
    if i + 1 == len(multi_index):
        return z + 0
    return z + _promoted_kind(multi_index, i + 1)


@static_helper
def _check_int_kind(kind):
    if kind not in "iu":
        raise TypeError("only int indices permitted")
    return kind


def _flat_sum(multi_index, dims, strides, mode, dt, i):
    if i == len(dims):
        return jnp.zeros((), dt)
    c = jnp.asarray(multi_index[i])
    _check_int_kind(c.dtype.kind)
    if mode == "clip":
        c = jnp.clip(c, 0, dims[i] - 1)
    elif mode == "wrap":
        c = jnp.remainder(c, dims[i])
    return c.astype(dt) * strides[i] + _flat_sum(multi_index, dims, strides, mode, dt, i + 1)


def _ravel_core(multi_index, dims, mode="raise", order="C", dtype=None):
    dims, strides = _ravel_args(len(multi_index), dims, mode, order)
    dt = _ravel_dtype(dtype, _promoted_kind(multi_index, 0).dtype)
    return _flat_sum(multi_index, dims, strides, mode, dt, 0)


def _ravel_multi_index(multi_index, dims, mode="raise", order="C", dtype=None):
    """The flat indices, in an array of shape ``dims``, of the coordinates
    ``multi_index`` (a sequence of integer arrays), as ``jnp.ravel_multi_index``: out of
    bounds coordinates raise ValueError (``mode='raise'``, eager only, as in JAX), are
    clamped (``'clip'``) or wrap (``'wrap'``)."""
    out = _ravel_core(multi_index, dims, mode, order, dtype)
    if mode == "raise":
        for c, d in zip(multi_index, dims):
            c = np.asarray(c)
            if np.any((c < 0) | (c >= d)):
                raise ValueError("invalid entry in coordinates array")
    return out


def _ravel_compiled(multi_index, dims, mode, order, dtype):
    from .._src.errors import at_user_call
    from .._src.ir.types import Static
    if isinstance(mode, Static) and mode.value == "raise":
        raise at_user_call(ValueError(
            "ravel_multi_index(): mode='raise' checks the values, which jit does not know "
            "(as in JAX); use mode='wrap' or mode='clip' instead"))
    return _ravel_core


def _with_compiled(eager, lower):
    from .._src.lax.common import LaxFunction
    return LaxFunction(eager, lower)


ravel_multi_index = _with_compiled(_ravel_multi_index, _ravel_compiled)


# ---- index helpers: NumPy's own objects, used eagerly -----------------------------------

s_ = np.s_
index_exp = np.index_exp


class _Grid:
    """``mgrid[...]``/``ogrid[...]``: NumPy's grid of the (constant) slices, as an astjax
    array in JAX's dtypes (the default int for int steps, else the default float)."""

    def __init__(self, np_grid, sparse):
        self.np_grid = np_grid
        self.sparse = sparse

    def __getitem__(self, key):
        out = self.np_grid[key]
        if self.sparse and isinstance(out, (tuple, list)):
            return tuple(_default_typed(o) for o in out)
        return _default_typed(out)


class _Concat:
    """``r_[...]``/``c_[...]``: NumPy's concatenation of slices, scalars and arrays, the
    result in JAX's dtype (arrays promoted as jnp.concatenate would). In compiled code, with
    arrays computed at run time, it is the call of a function ``index_source`` writes."""

    def __init__(self, np_concat, axis, ndmin, trans1d):
        self.np_concat = np_concat
        self.params = (axis, ndmin, trans1d)

    def index_source(self, items, ndims):
        """JAX's _AxisConcat.__getitem__ as source, ``def concat(a0, a1, ...)``, for
        ``items``: constants (a directive string first, slices of constants, numbers,
        lists) or the names of run-time items, whose ndims are ``ndims[k]``."""
        axis, ndmin, trans1d = self.params
        matrix, lines, parts = -1, [], []
        if isinstance(items[0], str) and items[0] not in ndims:
            directive, items = items[0], items[1:]
            if directive in ("r", "c"):
                matrix = "rc".index(directive)
            else:
                vec = directive.split(",")[:3]
                try:
                    axis, ndmin, trans1d = list(map(int, vec)) + [ndmin, trans1d][len(vec) - 1:]
                except ValueError:
                    raise ValueError(f"could not understand directive {directive!r}") from None
        out_ndim = 0
        for k, item in enumerate(items):
            p = f"p{k}"
            if isinstance(item, slice):
                start, stop, step = item.start or 0, item.stop, item.step or 1
                lines.append(f"{p} = _jnp.linspace({start!r}, {stop!r}, {int(abs(step))})"
                             if np.iscomplex(step) else
                             f"{p} = _jnp.arange({start!r}, {stop!r}, {step!r})")
                item_ndim, ndim = 0, 1
            elif isinstance(item, str) and item not in ndims:
                raise ValueError("string directive must be placed at the beginning")
            else:
                lines.append(f"{p} = _jnp.asarray({item if item in ndims else repr(item)})")
                item_ndim = ndim = ndims[item] if item in ndims else np.ndim(item)
            if ndim < ndmin:
                lines.append(f"{p} = _jnp.reshape({p}, {(1,) * (ndmin - ndim)!r} + "
                             f"_jnp.shape({p}))")
            if trans1d != -1 and ndmin - item_ndim > 0:
                shifts = ndmin - abs(ndmin + trans1d + 1) % ndmin
                perm = tuple(range(ndmin))[shifts:] + tuple(range(ndmin))[:shifts]
                lines.append(f"{p} = _jnp.transpose({p}, {perm!r})")
            parts.append(p)
            out_ndim = max(ndim, ndmin)
        lines.append(f"r = _jnp.concatenate(({''.join(q + ', ' for q in parts)}), "
                     f"axis={axis})")
        if matrix != -1 and out_ndim == 1:
            lines.append(f"r = _jnp.expand_dims(r, {matrix})")
        params = ", ".join(name for name in items if isinstance(name, str) and name in ndims)
        return f"def concat({params}):\n" + "".join(f"    {q}\n" for q in lines) + \
            "    return r\n"

    def __getitem__(self, key):
        from .._src.runtime.array import Array
        items = key if isinstance(key, tuple) else (key,)
        plain = tuple(np.asarray(i) if isinstance(i, Array) else i for i in items)
        out = _default_typed(self.np_concat[plain if isinstance(key, tuple) else plain[0]])
        if any(isinstance(i, slice) for i in items):
            return out
        # the dtype jnp.concatenate gives the values (Python scalars weak), not NumPy's
        values = [jnp.ravel(jnp.asarray(i))[:0] for i in items if not isinstance(i, str)]
        return out.astype(jnp.concatenate(values).dtype) if values else out


def _default_typed(x):
    x = np.asarray(x)
    if x.dtype.kind == "f":
        return jnp.asarray(x.astype(jnp.zeros(0).dtype))
    if x.dtype.kind in "iu":
        return jnp.asarray(x.astype(jnp.arange(0).dtype))
    return jnp.asarray(x)


mgrid = _Grid(np.mgrid, False)
ogrid = _Grid(np.ogrid, True)
r_ = _Concat(np.r_, 0, 1, -1)
c_ = _Concat(np.c_, -1, 2, 0)
