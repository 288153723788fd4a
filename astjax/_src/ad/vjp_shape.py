"""VJP rules for the shape ops (``astjax/_src/ops/shape.py``), and helpers shared with
``vjp_linalg`` and ``vjp_indexing``.

Every rule is jnp code the compiler reads like user code (see ``rules.py``), and the
reverse-mode transform differentiates it again for higher orders. That shapes the code:
  * What a rule decides from params and ranks it decides in Python that folds when the
    rule is compiled: ``static`` helpers (called with static values only) and ``if`` on
    ``isinstance``/``ndim``/params. Sizes are run-time values, read from ``x.shape``.
  * Each variable is assigned once (the transform tapes reassigned variables, and a
    tape holds one type); branches that differ in rank return from separate helpers.
  * Containers of arrays are indexed with literal constants (``nth``) and built as
    tuple displays (``each``): the transform differentiates those, not ``xs[k]`` with
    a variable ``k``, slicing, or tuple concatenation. Each element goes through its
    own call, specialized for its type (a loop would need one type for all).

``g`` may be a Python 0.0 (a zero cotangent): rules whose code needs an array call
``full_ct(g, z)`` first; for a sequence result any element of ``g`` may be 0.0.
"""
import numpy as np

import astjax.numpy as jnp

from ..ops.shape import normalize_axes, normalize_axis
from ..runtime.array import Array
from .adlib import unbroadcast
from .rules import vjp_rule

_PY_SCALARS = (bool, int, float, complex)


# --- helpers --------------------------------------------------------------------------------------

class static:
    """A helper evaluated when the rule is compiled: its arguments are static (params,
    ranks) and it returns plain Python values. The compiler calls a non-function
    callable with static arguments and folds its result into the generated code."""

    def __init__(self, fn):
        self.fn = fn
        self.__name__ = fn.__name__
        self.__doc__ = fn.__doc__

    def __call__(self, *args, **kwargs):
        return self.fn(*args, **kwargs)


@static
def is_complex(dtype):
    return dtype.kind == "c"


def full_ct(g, z):
    """The cotangent ``g`` as an array of ``z``'s shape: a Python number (0.0 stands for a
    zero cotangent) or a lower-rank array is broadcast, None (an integer result's: no
    cotangent) is zeros; decided when compiling."""
    if g is None:
        return jnp.zeros_like(z)
    if isinstance(g, _PY_SCALARS):
        return jnp.full_like(z, g)
    if g.ndim != z.ndim:
        return jnp.broadcast_to(g, z.shape)
    return g


def shape_of(x):
    """``x.shape``; ``()`` for a Python number."""
    if isinstance(x, _PY_SCALARS):
        return ()
    return x.shape


def ndim_of(x):
    """``x.ndim`` (static); 0 for a Python number."""
    if isinstance(x, _PY_SCALARS):
        return 0
    return x.ndim


def size_of(x):
    if isinstance(x, _PY_SCALARS):
        return 1
    return x.size


def reshape_like(ct, x):
    """``ct`` reshaped to ``x``'s shape; no reshape when the ranks already agree."""
    if ct.ndim == ndim_of(x):
        return ct
    return jnp.reshape(ct, shape_of(x))


@static
def _axis(axis, ndim, fn):
    return normalize_axis(axis, ndim, fn)


@static
def _axes(axis, ndim, fn):
    return normalize_axes(axis, ndim, fn)


@static
def _index_at(axis, i):
    """The index ``[:, ..., :, i]`` with ``i`` at ``axis``."""
    return (slice(None),) * axis + (i,)


def slice_axis(g, axis, start, stop):
    """``g[start:stop]`` along ``axis`` (static, non-negative); bounds may be run-time
    ints, so the slice is written out per axis (a slice object cannot be built at run
    time in compiled code)."""
    if axis == 0:
        return g[start:stop]
    if axis == g.ndim - 1:
        return g[..., start:stop]
    if axis == 1:
        return g[:, start:stop]
    if axis == 2:
        return g[:, :, start:stop]
    return jnp.moveaxis(jnp.moveaxis(g, axis, 0)[start:stop], 0, axis)


def ndims(xs):
    """The ranks of the arrays in a sequence, as a static tuple."""
    if len(xs) == 0:
        return ()
    x0 = xs[0]
    return (ndim_of(x0),) + ndims(xs[1:])


def nth(xs, k):
    """``xs[k]`` for a static ``k``, read with a literal index (``_item_<k>``): the
    transform differentiates containers indexed by constants only."""
    if k < len(_ITEMS):
        return _ITEMS[k](xs)
    return xs[k]  # compiles; differentiates once only


def each(fn, n, a, b, c):
    """``(fn(0, a, b, c), ..., fn(n - 1, a, b, c))`` for a static ``n``, written out as
    a tuple display (``_each_<n>``): the transform differentiates displays, not tuple
    concatenation. Each function is small, so each specialization compiles fast."""
    if n < len(_EACH):
        return _EACH[n](fn, a, b, c)
    return _each_from(fn, 0, n, a, b, c)  # compiles; differentiates once only


def _each_from(fn, k, n, a, b, c):
    if k == n:
        return ()
    return (fn(k, a, b, c),) + _each_from(fn, k + 1, n, a, b, c)


def _full_piece(k, gs, zs, unused):
    return full_ct(nth(gs, k), nth(zs, k))


def full_cts(gs, zs):
    """``full_ct`` for each element of a sequence result."""
    return each(_full_piece, len(zs), gs, zs, None)


# --- reshaping ------------------------------------------------------------------------------------

@vjp_rule("reshape")
def reshape(z, a, g, shape=None, more=(), order="C"):
    return (jnp.reshape(full_ct(g, z), shape_of(a)),)


@vjp_rule("ravel")
def ravel(z, a, g, order="C"):
    return (jnp.reshape(full_ct(g, z), shape_of(a)),)


@vjp_rule("squeeze")
def squeeze(z, a, g, axis=None):
    # reshape, not expand_dims: which axes went depends on the type (axis=None)
    return (jnp.reshape(full_ct(g, z), shape_of(a)),)


@vjp_rule("expand_dims")
def expand_dims(z, a, g, axis=None):
    return (jnp.squeeze(full_ct(g, z), _axes(axis, z.ndim, "expand_dims")),)


@vjp_rule("swapaxes")
def swapaxes(z, a, g, axis1=None, axis2=None):
    return (jnp.swapaxes(full_ct(g, z), axis1, axis2),)


@vjp_rule("moveaxis")
def moveaxis(z, a, g, source=None, destination=None):
    return (jnp.moveaxis(full_ct(g, z), destination, source),)


@vjp_rule("flip")
def flip(z, m, g, axis=None):
    return (jnp.flip(full_ct(g, z), axis),)


def _negated(shift):
    if isinstance(shift, (tuple, list)):
        return _negated_each(shift)
    return -shift


def _negated_each(shifts):
    if len(shifts) == 0:
        return ()
    return (-shifts[0],) + _negated_each(shifts[1:])


@vjp_rule("roll")
def roll(z, a, g, shift=0, axis=None):
    return (jnp.roll(full_ct(g, z), _negated(shift), axis),)


# --- broadcasting ---------------------------------------------------------------------------------

@vjp_rule("broadcast_to")
def broadcast_to(z, a, g, shape=None):
    return (unbroadcast(full_ct(g, z), a),)


def _unbroadcast_piece(k, gs, zs, xs):
    return unbroadcast(full_ct(nth(gs, k), nth(zs, k)), nth(xs, k))


@vjp_rule("broadcast_arrays")
def broadcast_arrays(z, args, g):
    return (each(_unbroadcast_piece, len(args), g, z, args),)


def _reshape_piece(k, gs, zs, xs):
    return reshape_like(full_ct(nth(gs, k), nth(zs, k)), nth(xs, k))


def _atleast(z, arys, g):
    if len(arys) == 1:  # one argument: one result, not a list
        x0 = arys[0]
        return ((reshape_like(full_ct(g, z), x0),),)
    return (each(_reshape_piece, len(arys), g, z, arys),)


@vjp_rule("atleast_1d")
def atleast_1d(z, arys, g):
    return _atleast(z, arys, g)


@vjp_rule("atleast_2d")
def atleast_2d(z, arys, g):
    return _atleast(z, arys, g)


@vjp_rule("atleast_3d")
def atleast_3d(z, arys, g):
    return _atleast(z, arys, g)


# --- joining: each input's cotangent is its slice of g --------------------------------------------

def _length(x, axis, rank):
    """How far ``x`` extends along the joined axis; 1 for an array of lower rank than the
    result (hstack's 0-d, vstack's 0-d and 1-D arrays fill one row)."""
    if ndim_of(x) < rank:
        return 1
    sizes = x.shape
    return sizes[axis]


def _bounds(xs, axis, rank, start):
    """Where each array starts along the joined axis, then where the last one ends."""
    if len(xs) == 0:
        return (start,)
    x0 = xs[0]
    return (start,) + _bounds(xs[1:], axis, rank, start + _length(x0, axis, rank))


def _flat_bounds(xs, start):
    if len(xs) == 0:
        return (start,)
    x0 = xs[0]
    return (start,) + _flat_bounds(xs[1:], start + size_of(x0))


def _join_piece(k, g, xs, span):
    axis, bounds = span
    piece = slice_axis(g, axis, nth(bounds, k), nth(bounds, k + 1))
    return reshape_like(piece, nth(xs, k))


def _flat_piece(k, g, xs, bounds):
    x = nth(xs, k)
    return jnp.reshape(g[nth(bounds, k):nth(bounds, k + 1)], shape_of(x))


def _join(g, xs, axis):
    bounds = _bounds(xs, axis, g.ndim, 0)
    return each(_join_piece, len(xs), g, xs, (axis, bounds))


@vjp_rule("concatenate")
def concatenate(z, arrays, g, axis=0, dtype=None):
    dz = full_ct(g, z)
    if axis is None:  # the arrays were flattened, then joined
        return (each(_flat_piece, len(arrays), dz, arrays, _flat_bounds(arrays, 0)),)
    return (_join(dz, arrays, _axis(axis, z.ndim, "concatenate")),)


@vjp_rule("hstack")
def hstack(z, tup, g, dtype=None):
    return (_join(full_ct(g, z), tup, 0 if z.ndim == 1 else 1),)


@vjp_rule("vstack")
def vstack(z, tup, g, dtype=None):
    return (_join(full_ct(g, z), tup, 0),)


def _stack_piece(k, g, axis, unused):
    return g[_index_at(axis, k)]


@vjp_rule("stack")
def stack(z, arrays, g, axis=0, dtype=None):
    dz = full_ct(g, z)
    return (each(_stack_piece, len(arrays), dz, _axis(axis, z.ndim, "stack"), None),)


# --- splitting: the pieces' cotangents joined back ------------------------------------------------

def _split(z, a, g, axis):
    if isinstance(g, _PY_SCALARS):  # the whole result's cotangent is zero
        return (jnp.full_like(a, g),)
    return (jnp.concatenate(full_cts(g, z), axis=axis),)


@vjp_rule("split")
def split(z, a, g, indices_or_sections=None, axis=0):
    return _split(z, a, g, axis)


@vjp_rule("array_split")
def array_split(z, a, g, indices_or_sections=None, axis=0):
    return _split(z, a, g, axis)


# --- tiling and repeating: sum the copies ---------------------------------------------------------

@static
def _tile_plan(reps, ndim_a, ndim_z):
    """(reps padded to the result's rank, the result axes that hold the copies once g is
    reshaped to (rep_0, size_0, rep_1, size_1, ...) with dims of rep 1 left unsplit)."""
    reps = tuple(reps) if isinstance(reps, (tuple, list)) else (reps,)
    reps = (1,) * (ndim_z - len(reps)) + tuple(int(r) for r in reps)
    copies, pos = [], 0
    for r in reps:
        if r != 1:
            copies.append(pos)
            pos += 1
        pos += 1
    return reps, tuple(copies), ndim_z - ndim_a


def _tile_shape(reps, sizes):
    """(rep_0, size_0, rep_1, size_1, ...), leaving out the reps that are 1."""
    if len(reps) == 0:
        return ()
    head = (sizes[0],) if reps[0] == 1 else (reps[0], sizes[0])
    return head + _tile_shape(reps[1:], sizes[1:])


@vjp_rule("tile")
def tile(z, A, g, reps=None):
    dz = full_ct(g, z)
    all_reps, copies, pad = _tile_plan(reps, ndim_of(A), z.ndim)
    if len(copies) == 0:
        return (reshape_like(dz, A),)
    sizes = (1,) * pad + shape_of(A)  # A's shape with the leading 1s tile gives it
    ct = jnp.sum(jnp.reshape(dz, _tile_shape(all_reps, sizes)), axis=copies)
    return (reshape_like(ct, A),)


def _scalar_repeats(repeats):
    """Whether ``repeats`` is one count for every element (static)."""
    if isinstance(repeats, (int, np.integer)):
        return True
    if isinstance(repeats, (np.ndarray, Array)):
        return repeats.ndim == 0
    return False


@vjp_rule("repeat")
def repeat(z, a, g, repeats=1, axis=None):
    dz = full_ct(g, z)
    if _scalar_repeats(repeats):  # the copies of each element are adjacent: reshape and sum
        if axis is None:
            flat = jnp.sum(jnp.reshape(dz, (size_of(a), repeats)), axis=1)
            return (jnp.reshape(flat, shape_of(a)),)
        ax = _axis(axis, a.ndim, "repeat")
        sizes = a.shape
        split_shape = sizes[:ax] + (sizes[ax], repeats) + sizes[ax + 1:]
        return (jnp.sum(jnp.reshape(dz, split_shape), axis=ax + 1),)
    # a count per element: add each copy back into its source element
    if axis is None:
        source = jnp.repeat(jnp.arange(size_of(a)), repeats)
        flat = jnp.zeros_like(jnp.ravel(a), dtype=dz.dtype).at[source].add(dz)
        return (jnp.reshape(flat, shape_of(a)),)
    ax = _axis(axis, a.ndim, "repeat")
    sizes = a.shape
    source = jnp.repeat(jnp.arange(sizes[ax]), repeats)
    front = jnp.moveaxis(jnp.zeros_like(a, dtype=dz.dtype), ax, 0)
    return (jnp.moveaxis(front.at[source].add(jnp.moveaxis(dz, ax, 0)), 0, ax),)


# --- written out: literal indices and tuple displays for nth() and each() -------------------------

def _item_0(xs):
    return xs[0]


def _item_1(xs):
    return xs[1]


def _item_2(xs):
    return xs[2]


def _item_3(xs):
    return xs[3]


def _item_4(xs):
    return xs[4]


def _item_5(xs):
    return xs[5]


def _item_6(xs):
    return xs[6]


def _item_7(xs):
    return xs[7]


def _item_8(xs):
    return xs[8]


def _item_9(xs):
    return xs[9]


def _item_10(xs):
    return xs[10]


def _item_11(xs):
    return xs[11]


def _item_12(xs):
    return xs[12]


def _item_13(xs):
    return xs[13]


def _item_14(xs):
    return xs[14]


def _item_15(xs):
    return xs[15]


_ITEMS = (_item_0, _item_1, _item_2, _item_3, _item_4, _item_5, _item_6, _item_7, _item_8, _item_9,
          _item_10, _item_11, _item_12, _item_13, _item_14, _item_15)


def _each_0(fn, a, b, c):
    return ()


def _each_1(fn, a, b, c):
    return (fn(0, a, b, c),)


def _each_2(fn, a, b, c):
    return (fn(0, a, b, c), fn(1, a, b, c))


def _each_3(fn, a, b, c):
    return (fn(0, a, b, c), fn(1, a, b, c), fn(2, a, b, c))


def _each_4(fn, a, b, c):
    return (fn(0, a, b, c), fn(1, a, b, c), fn(2, a, b, c), fn(3, a, b, c))


def _each_5(fn, a, b, c):
    return (fn(0, a, b, c), fn(1, a, b, c), fn(2, a, b, c), fn(3, a, b, c), fn(4, a, b, c))


def _each_6(fn, a, b, c):
    return (fn(0, a, b, c), fn(1, a, b, c), fn(2, a, b, c), fn(3, a, b, c), fn(4, a, b, c),
            fn(5, a, b, c))


def _each_7(fn, a, b, c):
    return (fn(0, a, b, c), fn(1, a, b, c), fn(2, a, b, c), fn(3, a, b, c), fn(4, a, b, c),
            fn(5, a, b, c), fn(6, a, b, c))


def _each_8(fn, a, b, c):
    return (fn(0, a, b, c), fn(1, a, b, c), fn(2, a, b, c), fn(3, a, b, c), fn(4, a, b, c),
            fn(5, a, b, c), fn(6, a, b, c), fn(7, a, b, c))


def _each_9(fn, a, b, c):
    return (fn(0, a, b, c), fn(1, a, b, c), fn(2, a, b, c), fn(3, a, b, c), fn(4, a, b, c),
            fn(5, a, b, c), fn(6, a, b, c), fn(7, a, b, c), fn(8, a, b, c))


def _each_10(fn, a, b, c):
    return (fn(0, a, b, c), fn(1, a, b, c), fn(2, a, b, c), fn(3, a, b, c), fn(4, a, b, c),
            fn(5, a, b, c), fn(6, a, b, c), fn(7, a, b, c), fn(8, a, b, c), fn(9, a, b, c))


def _each_11(fn, a, b, c):
    return (fn(0, a, b, c), fn(1, a, b, c), fn(2, a, b, c), fn(3, a, b, c), fn(4, a, b, c),
            fn(5, a, b, c), fn(6, a, b, c), fn(7, a, b, c), fn(8, a, b, c), fn(9, a, b, c),
            fn(10, a, b, c))


def _each_12(fn, a, b, c):
    return (fn(0, a, b, c), fn(1, a, b, c), fn(2, a, b, c), fn(3, a, b, c), fn(4, a, b, c),
            fn(5, a, b, c), fn(6, a, b, c), fn(7, a, b, c), fn(8, a, b, c), fn(9, a, b, c),
            fn(10, a, b, c), fn(11, a, b, c))


def _each_13(fn, a, b, c):
    return (fn(0, a, b, c), fn(1, a, b, c), fn(2, a, b, c), fn(3, a, b, c), fn(4, a, b, c),
            fn(5, a, b, c), fn(6, a, b, c), fn(7, a, b, c), fn(8, a, b, c), fn(9, a, b, c),
            fn(10, a, b, c), fn(11, a, b, c), fn(12, a, b, c))


def _each_14(fn, a, b, c):
    return (fn(0, a, b, c), fn(1, a, b, c), fn(2, a, b, c), fn(3, a, b, c), fn(4, a, b, c),
            fn(5, a, b, c), fn(6, a, b, c), fn(7, a, b, c), fn(8, a, b, c), fn(9, a, b, c),
            fn(10, a, b, c), fn(11, a, b, c), fn(12, a, b, c), fn(13, a, b, c))


def _each_15(fn, a, b, c):
    return (fn(0, a, b, c), fn(1, a, b, c), fn(2, a, b, c), fn(3, a, b, c), fn(4, a, b, c),
            fn(5, a, b, c), fn(6, a, b, c), fn(7, a, b, c), fn(8, a, b, c), fn(9, a, b, c),
            fn(10, a, b, c), fn(11, a, b, c), fn(12, a, b, c), fn(13, a, b, c), fn(14, a, b, c))


def _each_16(fn, a, b, c):
    return (fn(0, a, b, c), fn(1, a, b, c), fn(2, a, b, c), fn(3, a, b, c), fn(4, a, b, c),
            fn(5, a, b, c), fn(6, a, b, c), fn(7, a, b, c), fn(8, a, b, c), fn(9, a, b, c),
            fn(10, a, b, c), fn(11, a, b, c), fn(12, a, b, c), fn(13, a, b, c), fn(14, a, b, c),
            fn(15, a, b, c))


_EACH = (_each_0, _each_1, _each_2, _each_3, _each_4, _each_5, _each_6, _each_7, _each_8, _each_9,
         _each_10, _each_11, _each_12, _each_13, _each_14, _each_15, _each_16)
