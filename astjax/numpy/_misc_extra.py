"""``angle``, ``choose``, ``sort_complex``, ``histogram2d``, ``histogramdd``, ``place``,
``put``, ``mask_indices``, ``fromfunction`` and ``einsum_path``, written with
``astjax.numpy`` ops and read by the compiler like user code, as those in ``_composites``.
Semantics, dtypes and messages follow JAX 0.10.2.
"""
import inspect
import operator

import numpy as np

import astjax.numpy as jnp

from .._src import dtypes
from .._src.batching.api import vmap as _vmap
from .._src.errors import at_user_call
from .._src.ir.types import Static
from .._src.lax.common import LaxFunction
from .._src.random.checks import static_helper  # evaluated while generating code
from ._composites import _inexact
from ._composites2 import searchsorted
from ._math_extra import _promote_inexact
from ._setops import _index_dtype, nonzero
from ._sorting import take_along_axis

class _TwoWay(LaxFunction):
    """A public function with an eager form and one for compiled code (chosen, or refused,
    at the argument types)."""

    def __repr__(self):
        return f"<function astjax.numpy.{self.__name__}>"


def two_way(name, eager, lower, doc):
    fn = _TwoWay(eager, lower)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return fn


# ---- angle, sort_complex ----------------------------------------------------------------

@static_helper
def _angle_dtype(dtype, kind, ndim):
    if np.dtype(dtype).kind != "f" or (kind == "f" and ndim == 0):
        return dtypes.canonicalize_dtype(np.dtype(np.float64))  # JAX's default float
    return np.dtype(dtype)


def angle(z, deg=False):
    """The angle of the complex ``z`` (radians, or degrees with ``deg``), as ``jnp.angle``:
    integers, and real scalars, in the default float dtype."""
    z = jnp.asarray(z)
    re = jnp.real(z)
    dt = _angle_dtype(re.dtype, z.dtype.kind, z.ndim)
    result = jnp.arctan2(jnp.imag(z).astype(dt), re.astype(dt))
    if deg:
        return jnp.degrees(result)
    return result


@static_helper
def _complex_of(dtype):
    """JAX's to_complex_dtype: complex64 for float16/32 and narrow ints, else complex128."""
    dtype = dtypes.to_inexact(dtype)[0]
    return dtype if dtype.kind == "c" else np.result_type(dtype, np.complex64)


def sort_complex(a):
    """``a`` sorted along its last axis, by real part and then imaginary part, in a complex
    dtype."""
    a = jnp.asarray(a)
    return jnp.sort(a, axis=-1).astype(_complex_of(a.dtype))


# ---- choose -----------------------------------------------------------------------------

@static_helper
def _choose_args(kind, out, mode):
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.choose is not supported.")
    if kind not in "iu":
        raise ValueError("`a` array must be integer typed")
    if mode not in ("raise", "wrap", "clip"):
        raise ValueError(f"mode={mode!r} not understood. Must be 'raise', 'wrap', or 'clip'")
    return mode


def _common_shape(xs, i, shape):
    if i == len(xs):
        return shape
    return _common_shape(xs, i + 1, jnp.broadcast_shapes(shape, jnp.shape(xs[i])))


def _broadcast_each(xs, i, shape):
    if i == len(xs):
        return ()
    return (jnp.broadcast_to(xs[i], shape),) + _broadcast_each(xs, i + 1, shape)


def _choose(a, choices, out=None, mode="raise"):
    a = jnp.asarray(a)
    mode = _choose_args(a.dtype.kind, out, mode)
    if isinstance(choices, (list, tuple)):  # broadcast together, then stacked
        shape = _common_shape(choices, 0, a.shape)
        c = jnp.stack(_broadcast_each(choices, 0, shape))
    else:
        c = jnp.asarray(choices)
        shape = jnp.broadcast_shapes(a.shape, c.shape[1:])
        c = jnp.broadcast_to(c, (c.shape[0],) + shape)
    n = c.shape[0]
    if mode == "wrap":
        a = a % n
    elif mode == "clip":
        a = jnp.clip(a, 0, n - 1)
    a = jnp.broadcast_to(a, shape)
    return take_along_axis(c, jnp.expand_dims(a, 0), axis=0)[0]


def _choose_eager(a, choices, out=None, mode="raise"):
    if mode == "raise":
        arr = np.asarray(a)
        if np.any((arr < 0) | (arr >= len(choices))):
            raise ValueError("invalid entry in choice array")
    return _choose(a, choices, out, mode)


def _choose_for(a_t, choices_t, out_t=Static(None), mode_t=Static("raise")):
    if not isinstance(mode_t, Static) or mode_t.value == "raise":
        raise at_user_call(ValueError(
            "jnp.choose with mode='raise' needs the values of a, so it works only outside "
            "compiled code, as in JAX. Use mode='wrap' or mode='clip' instead."))
    return _choose


choose = two_way(
    "choose", _choose_eager, _choose_for,
    """The elements of ``choices`` picked by the ints ``a``: ``choices[a[i]][i]``
    (all broadcast together), as ``jnp.choose``. ``mode='raise'`` (the default) checks the
    indices and works only outside compiled code; 'wrap' and 'clip' bring them into range.""")


# ---- histograms -------------------------------------------------------------------------

@static_helper
def _unknown_dims():
    raise TypeError("histogramdd(): in compiled code the number of dimensions must be known "
                    "when code is generated: give bins (or range) as a sequence with one "
                    "entry per dimension")


@static_helper
def _repeated(bins, d):
    return (bins,) * d


@static_helper
def _check_bins_length(n, d):
    if n != d:
        raise ValueError("should be a bin for each dimension.")
    return n


@static_helper
def _check_range(range, d, n):
    if range is not None and (len(range) != d or any(
            r is not None and np.shape(r)[0] != 2 for r in range)):
        shape = f"({'N' if n is None else n}, {d})"
        raise ValueError(f"For sample.shape={shape}, range must be a sequence of {d} pairs "
                         f"or Nones; got range={range!r}")
    return (None,) * d if range is None else tuple(range)


def _edges(sample, bins, range, i):
    """The bin edges of columns ``i`` on, as a tuple."""
    if i == len(bins):
        return ()
    return (jnp.histogram_bin_edges(sample[:, i], bins[i], range[i]),) + _edges(
        sample, bins, range, i + 1)


def _bin_index(sample, edges, i):
    """The bin of each sample along dimensions ``i`` on (0 and len(edges) are outside)."""
    if i == len(edges):
        return ()
    x = sample[:, i]
    e = edges[i]
    idx = searchsorted(e, x, "right")
    idx = jnp.where(x == e[-1], idx - 1, idx)  # the last bin holds its right edge
    return (idx,) + _bin_index(sample, edges, i + 1)


def _padded_shape(edges, i):
    if i == len(edges):
        return ()
    return (edges[i].shape[0] + 1,) + _padded_shape(edges, i + 1)


@static_helper
def _inner(d):
    return (slice(1, -1),) * d


@static_helper
def _along(i, d):
    return (1,) * i + (-1,) + (1,) * (d - 1 - i)


def _per_width(hist, edges, i):
    if i == len(edges):
        return hist
    width = jnp.reshape(jnp.diff(edges[i]), _along(i, len(edges)))
    return _per_width(hist / width, edges, i + 1)


def _histogramdd(sample, bins, range, weights, density, d=None):
    if weights is None:
        sample = _inexact(sample)
        w = jnp.ones(sample.shape[:1], _index_dtype())
    else:
        sample, w = _promote_inexact(sample, weights)
        if w.ndim != 1:
            raise ValueError("should have one weight for each sample.")
        m = w.shape[0]
        if isinstance(m, int) and isinstance(sample.shape[0], int):  # eagerly; compiled,
            if m != sample.shape[0]:  # the scatter below refuses other lengths
                raise ValueError("should have one weight for each sample.")
    if d is None:
        d = sample.shape[1]
    if not isinstance(d, int):  # compiled code: sizes are run-time values
        if isinstance(bins, (list, tuple)):
            d = len(bins)
        elif isinstance(range, (list, tuple)):
            d = len(range)
        else:
            d = _unknown_dims()
    n = sample.shape[0]
    if not isinstance(n, int):  # compiled: a run-time size, for the message only
        n = None
    range = _check_range(range, d, n)
    if isinstance(bins, (list, tuple)):
        _check_bins_length(len(bins), d)
    else:
        bins = _repeated(bins, d)
    edges = _edges(sample, bins, range, 0)
    hist = jnp.zeros(_padded_shape(edges, 0), w.dtype).at[_bin_index(sample, edges, 0)].add(w)
    hist = hist[_inner(d)]  # outside the edges: dropped
    if density:
        hist = hist.astype(sample.dtype)
        hist = _per_width(hist / jnp.sum(hist), edges, 0)
    return hist, edges


def histogramdd(sample, bins=10, range=None, weights=None, density=None):
    """The counts (or summed ``weights``) of the ``(N, D)`` ``sample``'s points in each box
    of a grid, and each dimension's edges (a list), as ``jnp.histogramdd``: ``bins`` is a
    static int or one per dimension (an int or an array of edges). In compiled code ``D``
    is read from the length of ``bins`` or ``range``, which must then be sequences."""
    hist, edges = _histogramdd(sample, bins, range, weights, density)
    return hist, [*edges]


def histogram2d(x, y, bins=10, range=None, weights=None, density=None):
    """The counts (or summed ``weights``) of the points ``(x, y)`` in each cell of a grid,
    and the edges along x and along y, as ``jnp.histogram2d``."""
    x = jnp.asarray(x)
    y = jnp.asarray(y)
    if not isinstance(bins, (int, np.integer)) and not (
            isinstance(bins, (list, tuple)) and len(bins) <= 2):
        edges = jnp.asarray(bins)  # one array of edges for both
        bins = [edges, edges]
    hist, edges = _histogramdd(jnp.stack((x, y), axis=1), bins, range, weights, density, 2)
    return hist, edges[0], edges[1]


# ---- place, put -------------------------------------------------------------------------

@static_helper
def _not_in_place(fn, inplace):
    if inplace:
        raise ValueError(
            f"jax.numpy.{fn} cannot modify arrays in-place, because JAX arrays are immutable. "
            f"Pass inplace=False to instead return an updated array.")


def place(arr, mask, vals, *, inplace=True):
    """``arr`` with its elements where ``mask`` holds replaced by ``vals`` in order
    (repeated as needed), as ``jnp.place``, which needs ``inplace=False``."""
    _not_in_place("place", inplace)
    arr = jnp.asarray(arr)
    mask = jnp.ravel(jnp.asarray(mask)).astype(bool)
    vals = jnp.ravel(jnp.asarray(vals))
    if arr.size != mask.size:
        raise ValueError("place: arr and mask must be the same size")
    if vals.size == 0:
        raise ValueError("Cannot place values from an empty array")
    # the k-th masked element takes vals[k % len(vals)]
    k = jnp.cumsum(mask.astype(_index_dtype())) - 1
    got = vals[jnp.maximum(k, 0) % vals.shape[0]].astype(arr.dtype)
    return jnp.reshape(jnp.where(mask, got, jnp.ravel(arr)), arr.shape)


@static_helper
def _put_mode(mode):
    if mode == "raise":
        raise NotImplementedError("The 'raise' mode to jnp.put is not supported.")
    if mode not in (None, "clip", "wrap"):
        raise ValueError(f"mode should be one of 'wrap' or 'clip'; got mode={mode!r}")
    return mode


def put(a, ind, v, mode=None, *, inplace=True):
    """``a`` with the flat positions ``ind`` set to ``v`` (repeated as needed), as
    ``jnp.put``, which needs ``inplace=False``: without ``mode``, negative indices count
    from the end and others are clipped (JAX's unravel_index); 'clip' and 'wrap' as NumPy.
    Where an index repeats, the last value wins."""
    _not_in_place("put", inplace)
    arr = jnp.asarray(a)
    ind = jnp.ravel(jnp.asarray(ind))
    v = jnp.ravel(jnp.asarray(v))
    mode = _put_mode(mode)
    flat = jnp.ravel(arr)
    n = flat.shape[0]
    if n == 0 or ind.shape[0] == 0 or v.shape[0] == 0:
        return arr
    if mode == "wrap":
        ind = ind % n
    elif mode is None:
        ind = jnp.where(ind < 0, ind + n, ind)
    ind = jnp.clip(ind, 0, n - 1)
    v = v[jnp.arange(ind.shape[0]) % v.shape[0]]
    return jnp.reshape(flat.at[ind].set(v), arr.shape)


# ---- mask_indices, fromfunction ---------------------------------------------------------

def mask_indices(n, mask_func, k=0, *, size=None):
    """The indices (rows, columns) where ``mask_func(ones((n, n)), k)`` is nonzero, as
    ``jnp.mask_indices`` (``size`` as ``nonzero``'s, needed in compiled code)."""
    return nonzero(mask_func(jnp.ones((n, n)), k), size=size)


@static_helper
def _shape_tuple(shape):
    if isinstance(shape, (int, np.integer)):
        shape = (shape,)
    try:
        return tuple(operator.index(s) for s in shape)
    except TypeError:
        raise TypeError(f"Shapes must be 1D sequences of concrete values of integer type, "
                        f"got {shape!r}. (shape argument of jnp.fromfunction())") from None


@static_helper
def _in_axes(i, d):
    return tuple(0 if j == d - 1 - i else None for j in range(d))


def _vmapped(function, d, i):
    """``function`` vmapped over each of its ``d`` arguments, the last innermost."""
    if i == d:
        return function
    return _vmapped(_vmap(function, in_axes=_in_axes(i, d)), d, i + 1)


def _aranges(shape, dtype, i):
    if i == len(shape):
        return ()
    return (jnp.arange(shape[i], dtype=dtype),) + _aranges(shape, dtype, i + 1)


def _fromfunction(function, shape, dtype=float):
    shape = _shape_tuple(shape)
    return _vmapped(function, len(shape), 0)(*_aranges(shape, dtype, 0))


def _fromfunction_eager(function, shape, *, dtype=float, **kwargs):
    shape = _shape_tuple(shape)
    fn = _vmapped(function, len(shape), 0)
    return fn(*_aranges(shape, dtype, 0), **kwargs)


def _fromfunction_for(function_t, shape_t, dtype_t=Static(float)):
    return _fromfunction


fromfunction = two_way(
    "fromfunction", _fromfunction_eager, _fromfunction_for,
    """An array of ``shape`` whose element at ``(i, j, ...)`` is
    ``function(i, j, ...)``, the indices of ``dtype``, as ``jnp.fromfunction``: ``function``
    is vmapped over each index, so it sees scalars. Keyword arguments for ``function`` are
    passed eagerly only.""")
# compiled code passes no **kwargs (close over the values instead)
fromfunction.__signature__ = inspect.signature(_fromfunction)


# ---- einsum_path ------------------------------------------------------------------------

def _einsum_path_eager(subscripts, *operands, optimize="auto"):
    if isinstance(optimize, (list, tuple)):
        how = list(optimize)
        if how[:1] != ["einsum_path"]:
            how = ["einsum_path"] + how
    elif optimize is False:
        n = subscripts.count(",") + 1 if isinstance(subscripts, str) else len(operands) // 2
        return [(0, 1)] * max(n - 1, 1), np.einsum_path(
            subscripts, *operands, optimize=False)[1]
    elif optimize is True or optimize == "optimal":
        how = "optimal"
    elif optimize == "greedy":
        how = "greedy"
    elif optimize == "auto":  # opt_einsum's choice, as far as NumPy has its algorithms
        n = subscripts.count(",") + 1 if isinstance(subscripts, str) else len(operands) // 2
        how = "optimal" if n <= 4 else "greedy"
    else:
        raise NotImplementedError(f"einsum_path(): optimize={optimize!r} is not supported "
                                  f"(astjax uses NumPy's einsum_path, which has 'optimal' "
                                  f"and 'greedy')")
    arrays = [np.asarray(o) if hasattr(o, "__array__") else o for o in operands]
    path, info = np.einsum_path(subscripts, *arrays, optimize=how)
    return [tuple(p) for p in path[1:]], info


def _einsum_path_for(*arg_types):
    raise at_user_call(NotImplementedError(
        "einsum_path() reads the operands' sizes, which compiled code knows only at run "
        "time: call it outside jit, grad and vmap and pass the path to einsum"))


einsum_path = two_way(
    "einsum_path", _einsum_path_eager, _einsum_path_for,
    """The order in which to contract einsum's operands, and a text
    describing it, as ``jnp.einsum_path``: a list of pairs, found by NumPy's einsum_path
    (JAX's opt_einsum: the same paths for 'optimal' and 'greedy'; 'auto' is 'optimal' up
    to 4 operands, else 'greedy'). Its text is NumPy's. Only outside compiled code.""")

__all__ = ["angle", "choose", "einsum_path", "fromfunction", "histogram2d", "histogramdd",
           "mask_indices", "place", "put", "sort_complex"]


def repeat(a, repeats, axis=None, total_repeat_length=None):
    """``jnp.repeat`` with ``total_repeat_length``: an output of that length along ``axis``,
    cut short, or filled with the last element, as JAX's (jnp.repeat's keyword function)."""
    a = jnp.asarray(a)
    if total_repeat_length is None:
        return jnp.repeat(a, repeats, axis)
    if axis is None:
        return repeat(a.ravel(), repeats, 0, total_repeat_length)
    n = a.shape[axis]
    ends = jnp.cumsum(jnp.broadcast_to(jnp.asarray(repeats), (n,)))
    rows = jnp.searchsorted(ends, jnp.arange(total_repeat_length), side="right")
    return jnp.take(a, jnp.minimum(rows, n - 1), axis=axis)
