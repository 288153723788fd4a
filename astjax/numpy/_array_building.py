"""Array building and rearranging functions written with ``astjax.numpy`` ops
(``cross``, ``rot90``, ``tril_indices``, ``take``, ``insert``, ``block``, ...), read by the
compiler like user code, as those in ``_composites``. Semantics and dtypes follow JAX 0.10.2.
Sizes are run-time ints under ``jit``, so where JAX compacts an array to a size known only
from the data (``where(mask, size=n)``), these take the first ``n`` positions of a stable
``argsort`` of the mask instead, and ``unstack`` gives a list of run-time length.
"""
import numpy as np

import astjax.numpy as jnp

from .._src.random.checks import static_helper  # evaluated while generating code
from ._array_index import (  # noqa: F401
    c_, delete, diag_indices, diag_indices_from, fill_diagonal, index_exp, indices, insert, ix_,
    meshgrid, mgrid, ogrid, put_along_axis, r_, ravel_multi_index, s_, take, tril_indices,
    tril_indices_from, triu_indices, triu_indices_from, unravel_index)
from ._composites import _to_inexact
from ._sorting import _normalize_axis


@static_helper
def _check_ndim(ndim, least, fn):
    if ndim < least:
        raise ValueError(f"{fn}() requires an array of at least {least} dimension"
                         f"{'s' if least > 1 else ''}, got one of rank {ndim}")
    return ndim


# ---- flips and rotations --------------------------------------------------------------

def fliplr(m):
    """``m`` with its columns (axis 1) reversed."""
    m = jnp.asarray(m)
    _check_ndim(m.ndim, 2, "fliplr")
    return jnp.flip(m, 1)


def flipud(m):
    """``m`` with its rows (axis 0) reversed."""
    m = jnp.asarray(m)
    _check_ndim(m.ndim, 1, "flipud")
    return jnp.flip(m, 0)


@static_helper
def _rot90_args(ndim, k, axes):
    if ndim < 2:
        raise ValueError("rot90 requires its first argument to have ndim at least two, but "
                         f"got one of rank {ndim}")
    if not isinstance(k, int) or isinstance(k, bool):
        raise TypeError(f"rot90(): k must be an int, got {k!r}")
    if len(axes) != 2:
        raise ValueError("len(axes) must be 2.")
    ax1 = _normalize_axis.fn(axes[0], ndim, "rot90")
    ax2 = _normalize_axis.fn(axes[1], ndim, "rot90")
    if ax1 == ax2:
        raise ValueError("Axes must be different")
    perm = list(range(ndim))
    perm[ax1], perm[ax2] = perm[ax2], perm[ax1]
    return k % 4, ax1, ax2, tuple(perm)


def rot90(m, k=1, axes=(0, 1)):
    """``m`` rotated by 90 degrees ``k`` times in the plane of ``axes`` (from the first
    towards the second)."""
    m = jnp.asarray(m)
    k, ax1, ax2, perm = _rot90_args(m.ndim, k, axes)
    if k == 0:
        return m
    if k == 2:
        return jnp.flip(jnp.flip(m, ax1), ax2)
    if k == 1:
        return jnp.transpose(jnp.flip(m, ax2), perm)
    return jnp.flip(jnp.transpose(m, perm), ax2)


@static_helper
def _rollaxis_args(ndim, axis, start):
    axis = _normalize_axis.fn(axis, ndim, "rollaxis")
    if not isinstance(start, int) or isinstance(start, bool):
        raise TypeError(f"rollaxis(): start must be an int, got {start!r}")
    if not -ndim <= start <= ndim:
        raise ValueError(f"start={start} must satisfy {-ndim}<=start<={ndim}")
    if start < 0:
        start += ndim
    if start > axis:
        start -= 1
    return axis, start


def rollaxis(a, axis, start=0):
    """``a`` with ``axis`` moved to before ``start`` (NumPy's older ``moveaxis``)."""
    a = jnp.asarray(a)
    axis, start = _rollaxis_args(a.ndim, axis, start)
    return jnp.moveaxis(a, axis, start)


# ---- cross product --------------------------------------------------------------------

@static_helper
def _check_cross_kinds(a_kind, b_kind):
    if a_kind == "b" or b_kind == "b":
        raise TypeError("cross(): boolean arrays are not supported (as in JAX)")
    return a_kind


@static_helper
def _both_2(na, nb):
    """Whether both vectors have 2 components (their lengths known: eagerly)."""
    if na not in (2, 3) or nb not in (2, 3):
        raise ValueError("Dimension must be either 2 or 3 for cross product")
    return na == 2 and nb == 2


def _third(v, n):
    """``v``'s third component, 0 for a 2-vector (``n``, its length, may be a run-time
    int: the component is then gathered and masked)."""
    if isinstance(n, int):
        if n == 3:
            return v[..., 2]
        return jnp.zeros_like(v[..., 0])
    return jnp.where(n > 2, v[..., jnp.minimum(n - 1, 2)], jnp.zeros_like(v[..., 0]))


def cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """The cross product of the 2- or 3-vectors of ``a`` (along ``axisa``) and ``b``
    (``axisb``), broadcast over the other axes, its vectors along ``axisc`` (``axis``
    sets all three). Two 2-vectors give the scalar z component. Under ``jit`` a vector's
    length is a run-time int, so two 2-vectors there give the 3-vector ``(0, 0, z)``."""
    a = jnp.asarray(a)
    b = jnp.asarray(b)
    if axis is not None:
        axisa = axis
        axisb = axis
        axisc = axis
    a = jnp.moveaxis(a, axisa, -1)
    b = jnp.moveaxis(b, axisb, -1)
    _check_cross_kinds(a.dtype.kind, b.dtype.kind)
    na = a.shape[-1]
    nb = b.shape[-1]
    if isinstance(na, int) and isinstance(nb, int) and _both_2(na, nb):
        return a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0]
    a0 = a[..., 0]
    a1 = a[..., 1]
    a2 = _third(a, na)
    b0 = b[..., 0]
    b1 = b[..., 1]
    b2 = _third(b, nb)
    c = jnp.stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0])
    return jnp.moveaxis(c, 0, axisc)


# ---- joining and splitting ------------------------------------------------------------

def append(arr, values, axis=None):
    """``values`` joined to the end of ``arr`` along ``axis`` (both flattened if None)."""
    if axis is None:
        return jnp.concatenate((jnp.ravel(arr), jnp.ravel(values)), 0)
    return jnp.concatenate((arr, values), axis=axis)


def _as_column(a):
    a = jnp.asarray(a)
    if a.ndim < 2:
        return jnp.reshape(a, (-1, 1))
    return a


def column_stack(tup):
    """The 1-D arrays of ``tup`` as columns (others as they are), joined along axis 1."""
    return jnp.concatenate([_as_column(a) for a in tup], axis=1)


def dstack(tup, dtype=None):
    """The arrays of ``tup`` made at least 3-D, joined along axis 2."""
    out = jnp.concatenate([jnp.atleast_3d(a) for a in tup], axis=2)
    if dtype is not None:
        return out.astype(dtype)
    return out


@static_helper
def _split_axis(ndim, fn):
    if fn == "hsplit":
        if ndim == 0:
            raise ValueError("hsplit only works on arrays of 1 or more dimensions")
        return 0 if ndim == 1 else 1
    least = 2 if fn == "vsplit" else 3
    if ndim < least:
        raise ValueError(f"{fn} only works on arrays of {least} or more dimensions")
    return 0 if fn == "vsplit" else 2


def hsplit(ary, indices_or_sections):
    """``split`` along axis 1 (axis 0 for a 1-D ``ary``)."""
    ary = jnp.asarray(ary)
    return jnp.split(ary, indices_or_sections, axis=_split_axis(ary.ndim, "hsplit"))


def vsplit(ary, indices_or_sections):
    """``split`` along axis 0 (``ary`` at least 2-D)."""
    ary = jnp.asarray(ary)
    return jnp.split(ary, indices_or_sections, axis=_split_axis(ary.ndim, "vsplit"))


def dsplit(ary, indices_or_sections):
    """``split`` along axis 2 (``ary`` at least 3-D)."""
    ary = jnp.asarray(ary)
    return jnp.split(ary, indices_or_sections, axis=_split_axis(ary.ndim, "dsplit"))


def _slices(x, i, n):
    if i == n:
        return ()
    return (x[i],) + _slices(x, i + 1, n)


def unstack(x, axis=0):
    """The slices of ``x`` along ``axis``: a tuple where their number is known (eagerly),
    else (under ``jit``, where it is a run-time int) a list of that length, which
    compiled code can index, loop over and unpack as well."""
    x = jnp.asarray(x)
    x = jnp.moveaxis(x, _normalize_axis(axis, x.ndim, "unstack"), 0)
    n = x.shape[0]
    if isinstance(n, int):
        return _slices(x, 0, n)
    return [x[i] for i in range(n)]


# ---- block ----------------------------------------------------------------------------

@static_helper
def _block_error(what):
    if what == "tuple":
        raise ValueError("jax.numpy.block does not allow tuples")
    raise ValueError("jax.numpy.block does not allow empty list arguments")


@static_helper
def _same_depth(d0, d1):
    if d0 != d1:
        raise ValueError("Mismatched list depths in jax.numpy.block")
    return d0


@static_helper
def _leading_ones(rank, ndim):
    return (1,) * (rank - ndim)


def _atleast_nd(x, rank):
    return jnp.reshape(x, _leading_ones(rank, x.ndim) + x.shape)


def _list_depth(xs, i):
    """The depth of the lists ``xs[i:]``, one for all (checked)."""
    if not isinstance(len(xs), int):  # compiled: a list of one type, its length run-time
        return _block_depth(xs[0])
    d = _block_depth(xs[i])
    if i + 1 == len(xs):
        return d
    return _same_depth(d, _list_depth(xs, i + 1))


def _block_depth(xs):
    if isinstance(xs, list):
        if isinstance(len(xs), int):
            if len(xs) == 0:
                return _block_error("empty")
        return _list_depth(xs, 0) + 1
    if isinstance(xs, tuple):
        return _block_error("tuple")
    return 0


def _max_ndim(parts, i):
    if i + 1 == len(parts):
        return parts[i].ndim
    return max(parts[i].ndim, _max_ndim(parts, i + 1))


def _blocks(xs, i):
    """The blocks ``xs[i:]`` assembled, as a tuple (the elements of a list display of
    several types are typed one by one only through indexing)."""
    if i == len(xs):
        return ()
    return (_block(xs[i]),) + _blocks(xs, i + 1)


def _at_rank(parts, i, rank):
    if i == len(parts):
        return ()
    return (_atleast_nd(parts[i], rank),) + _at_rank(parts, i + 1, rank)


def _block(xs):
    if isinstance(xs, list):
        depth = _block_depth(xs)
        if isinstance(len(xs), int):
            parts = _blocks(xs, 0)
            parts = _at_rank(parts, 0, max(depth, _max_ndim(parts, 0)))
        else:  # compiled: a list of one type, its length known at run time
            parts = [_block(x) for x in xs]
            rank = max(depth, parts[0].ndim)
            parts = [_atleast_nd(p, rank) for p in parts]
        return jnp.concatenate(parts, axis=-depth)
    if isinstance(xs, tuple):
        return _block_error("tuple")
    return jnp.asarray(xs)


def block(arrays):
    """An array assembled from nested lists of blocks: the innermost lists are joined
    along the last axis, the next ones along the one before, and so on (blocks padded
    with leading axes of length 1 to a common rank)."""
    return _block(arrays)


def diagflat(v, k=0):
    """A 2-D array with ``v`` flattened on its ``k``-th diagonal."""
    return jnp.diag(jnp.ravel(v), k)


def resize(a, new_shape):
    """``a`` flattened and repeated (cyclically) to fill ``new_shape`` (zeros if ``a`` is
    empty)."""
    shape, size = _resize_shape(new_shape)
    flat = jnp.ravel(a)
    n = flat.shape[0]
    # one zero after the values, read only when there are none (n == 0)
    src = jnp.concatenate((flat, jnp.zeros((1,), flat.dtype)))
    i = jnp.remainder(jnp.arange(size), jnp.maximum(n, 1))
    return jnp.reshape(src[i], shape)


@static_helper
def _resize_shape(new_shape):
    shape = (new_shape,) if isinstance(new_shape, (int, np.integer)) else tuple(new_shape)
    shape = tuple(int(d) for d in shape)
    if any(d < 0 for d in shape):
        raise ValueError("all elements of `new_shape` must be non-negative")
    return shape, int(np.prod(shape, dtype=np.int64))


# ---- sequences --------------------------------------------------------------------------

@static_helper
def _space_dtype(dtype, promoted):
    """The result dtype (``dtype``, else the inexact type of the arguments' promoted type)
    and the dtype computed in (the inexact type of that)."""
    out = _to_inexact.fn(promoted) if dtype is None else np.dtype(dtype)
    return out, _to_inexact.fn(out)


def _space_args(start, stop, dtype):
    start = jnp.asarray(start)
    stop = jnp.asarray(stop)
    dt, cdt = _space_dtype(dtype, (jnp.ravel(start)[:0] + jnp.ravel(stop)[:0]).dtype)
    return start.astype(cdt), stop.astype(cdt), dt, cdt


def logspace(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
    """``base ** linspace(start, stop, num)``, computed in an inexact dtype and cast to
    ``dtype``."""
    start, stop, dt, cdt = _space_args(start, stop, dtype)
    lin = jnp.linspace(start, stop, num, endpoint=endpoint, axis=axis)
    return jnp.power(base, lin).astype(dt)


def geomspace(start, stop, num=50, endpoint=True, dtype=None, axis=0):
    """``num`` numbers from ``start`` to ``stop`` spaced evenly on a log scale (both of the
    same sign), as JAX computes them (through ``logspace``, so the ends may be off by an
    ulp)."""
    start, stop, dt, cdt = _space_args(start, stop, dtype)
    sign = jnp.sign(start)
    res = sign * logspace(jnp.log10(start / sign), jnp.log10(stop / sign), num,
                          endpoint=endpoint, base=10.0, dtype=cdt, axis=0)
    return jnp.moveaxis(res, 0, axis).astype(dt)


@static_helper
def _vander_check(ndim, kind, n):
    if ndim != 1:
        raise ValueError("x must be a one-dimensional array")
    if kind == "b":
        raise TypeError("vander(): x must be numeric, not bool (as in JAX)")
    if n is not None and (not isinstance(n, (int, np.integer)) or n < 0):
        raise ValueError(f"N must be a nonnegative int, got {n!r}")
    return n


def vander(x, N=None, increasing=False):
    """The Vandermonde matrix of 1-D ``x``: its columns are powers of ``x``, from ``N - 1``
    down to 0 (up, if ``increasing``), in ``x``'s dtype."""
    x = jnp.asarray(x)
    N = _vander_check(x.ndim, x.dtype.kind, N)
    if N is None:
        N = x.shape[0]
    p = jnp.arange(N).astype(x.dtype)
    if not increasing:
        p = (N - 1) - p
    return jnp.power(jnp.expand_dims(x, -1), p)


# ---- window functions -----------------------------------------------------------------

def _window_n(M):
    """``arange(M)`` in the default float, and ``M - 1`` (1 where ``M <= 1``: the window
    is then all ones, as JAX's)."""
    n = jnp.arange(M, dtype=float)
    return n, jnp.maximum(M - 1, 1)


def hamming(M):
    """The Hamming window of ``M`` points."""
    n, d = _window_n(M)
    w = 0.54 - 0.46 * jnp.cos(2 * np.pi * n / d)
    return jnp.where(M <= 1, jnp.ones_like(w), w)


def hanning(M):
    """The Hann window of ``M`` points."""
    n, d = _window_n(M)
    w = 0.5 * (1 - jnp.cos(2 * np.pi * n / d))
    return jnp.where(M <= 1, jnp.ones_like(w), w)


def blackman(M):
    """The Blackman window of ``M`` points."""
    n, d = _window_n(M)
    w = 0.42 - 0.5 * jnp.cos(2 * np.pi * n / d) + 0.08 * jnp.cos(4 * np.pi * n / d)
    return jnp.where(M <= 1, jnp.ones_like(w), w)


def bartlett(M):
    """The Bartlett (triangular) window of ``M`` points."""
    n, d = _window_n(M)
    w = 1 - jnp.abs(2 * n + 1 - M) / d
    return jnp.where(M <= 1, jnp.ones_like(w), w)


# ---- trim_zeros: eager only -----------------------------------------------------------

def trim_zeros(filt, trim="fb", axis=None):
    """``filt`` without its leading (``'f'``) and trailing (``'b'``) zeros, along each of
    ``axis`` (all axes if None). The result's size depends on the values, so, as in JAX,
    this needs concrete values: it cannot be called under ``jit``."""
    from .._src.runtime.array import Array
    a = np.asarray(filt._value if isinstance(filt, Array) else filt)
    axes = range(a.ndim) if axis is None else np.atleast_1d(axis)
    axes = {int(ax) % a.ndim for ax in axes}
    trim = trim.lower()
    index = []
    for ax in range(a.ndim):
        if ax not in axes or ("f" not in trim and "b" not in trim):
            index.append(slice(None))
            continue
        mask = np.any(a != 0, axis=tuple(i for i in range(a.ndim) if i != ax))
        if not mask.any():
            index.append(slice(0, 0))
            continue
        start = int(mask.argmax()) if "f" in trim else None
        stop = a.shape[ax] - int(mask[::-1].argmax()) if "b" in trim else None
        index.append(slice(start, stop))
    return jnp.asarray(filt)[tuple(index)]


def _trim_zeros_compiled(*arg_types):
    from .._src.errors import at_user_call
    raise at_user_call(ValueError(
        "trim_zeros(): the result's size depends on the values of filt, so it cannot be "
        "compiled (as in JAX); call it outside jit"))


def _not_jittable(eager, lower):
    from .._src.lax.common import LaxFunction
    return LaxFunction(eager, lower)


trim_zeros = _not_jittable(trim_zeros, _trim_zeros_compiled)


__all__ = ["append", "bartlett", "blackman", "block", "c_", "column_stack", "cross", "delete",
           "diag_indices", "diag_indices_from", "diagflat", "dsplit", "dstack", "fill_diagonal",
           "fliplr", "flipud", "geomspace", "hamming", "hanning", "hsplit", "index_exp",
           "indices", "insert", "ix_", "logspace", "meshgrid", "mgrid", "ogrid",
           "put_along_axis", "r_", "ravel_multi_index", "resize", "rollaxis", "rot90", "s_",
           "take", "tril_indices", "tril_indices_from", "trim_zeros", "triu_indices",
           "triu_indices_from", "unravel_index", "unstack", "vander", "vsplit"]
