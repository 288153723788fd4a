"""``lax``'s remaining array functions (``select_n``, ``split``, ``stack``, ``unstack``,
``tile``, ``collapse``, ``complex``, ``broadcast_to_rank``, ``index_take``, ``reduce_xor``),
as plain ``astjax.numpy`` code compiled like user code; checks of the static arguments run
while the code is generated.
"""
import numpy as np

import astjax.numpy as jnp

from ..random.checks import known_or_run_time, static_helper
from .bits import bit_reduce


@static_helper
def _select_n_check(which_dtype, which_ndim, case_dtypes, case_ndims):
    if not case_dtypes:
        raise ValueError("select_n() must have at least one case")
    which_dtype = np.dtype(which_dtype)
    if which_dtype.kind not in "biu":
        raise TypeError(f"select `which` must be boolean or integer type, got "
                        f"{which_dtype.name}.")
    if which_dtype.kind == "b" and len(case_dtypes) > 2:
        raise TypeError("select with boolean `which` cannot have > 2 cases.")
    if len({np.dtype(d) for d in case_dtypes}) > 1:
        raise TypeError(f"lax.select requires arguments to have the same dtypes, got "
                        f"{', '.join(np.dtype(d).name for d in case_dtypes)}.")
    if len(set(case_ndims)) > 1:
        raise TypeError(f"select cases must have the same shapes, got ranks {case_ndims}.")
    if which_ndim not in (0, case_ndims[0]):
        raise TypeError(f"select `which` must be scalar or have the same shape as cases, "
                        f"got `which` of rank {which_ndim} but cases of rank "
                        f"{case_ndims[0]}.")
    return which_dtype.kind == "b"


# recursions rather than generators: compiled code builds tuples of known length this way
def _arrays(xs, k):
    return () if k == len(xs) else (jnp.asarray(xs[k]),) + _arrays(xs, k + 1)


def _dtypes(xs, k):
    return () if k == len(xs) else (xs[k].dtype,) + _dtypes(xs, k + 1)


def _ndims(xs, k):
    return () if k == len(xs) else (xs[k].ndim,) + _ndims(xs, k + 1)


def _select_from(which, cases, k):
    """``cases[which]`` for the cases from ``k`` on (``which`` >= ``k`` there)."""
    if k == len(cases) - 1:
        return cases[k]
    return jnp.where(which == k, cases[k], _select_from(which, cases, k + 1))


def select_n(which, *cases):
    """``cases[which]`` elementwise: ``which`` boolean (two cases at most: False picks the
    first) or integer, scalar or of the cases' shape; the cases share a dtype."""
    which = jnp.asarray(which)
    cases = _arrays(cases, 0)
    boolean = _select_n_check(which.dtype, which.ndim, _dtypes(cases, 0), _ndims(cases, 0))
    if len(cases) == 1:
        return cases[0]
    if boolean:
        return jnp.where(which, cases[1], cases[0])
    return _select_from(which, cases, 0)


@static_helper
def _split_points(sizes, axis, ndim):
    sizes = tuple(int(s) for s in sizes)
    if any(s < 0 for s in sizes):
        raise ValueError(f"Sizes must be nonnegative, got {list(sizes)}")
    if not -ndim <= axis < ndim:
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {ndim}")
    return tuple(int(p) for p in np.cumsum(sizes)[:-1])


def _check_split_sum(sizes, length, axis):
    if sum(int(s) for s in sizes) != length:
        raise ValueError(f"Sum of sizes {sum(int(s) for s in sizes)} must be equal to "
                         f"dimension {axis} of the operand shape [{length}]")


def _unchecked(sizes, length, axis):
    return None


# the sum is checked where the axis's length is known (eagerly), not against a run-time one
_split_sum = known_or_run_time(_check_split_sum, _unchecked)


def split(operand, sizes, axis=0):
    """``operand`` cut along ``axis`` into pieces of ``sizes`` (static ints summing to the
    axis's length; under jit, where that length is a run-time int, the sum is not
    checked)."""
    x = jnp.asarray(operand)
    points = _split_points(sizes, axis, x.ndim)
    _split_sum(sizes, x.shape[axis], axis)
    return jnp.split(x, points, axis=axis)


def stack(operands, axis=0):
    return jnp.stack(operands, axis=axis)


def unstack(x, axis=0):
    """``x``'s slices along ``axis``: a tuple eagerly, under jit a list (see jnp.unstack)."""
    return jnp.unstack(x, axis=axis)


@static_helper
def _tile_reps(reps, ndim):
    reps = tuple(int(r) for r in reps)
    if len(reps) != ndim:
        raise TypeError(f"reps length must be equal to the ndim of x, got len(reps)="
                        f"{len(reps)} and x.ndim={ndim}.")
    return reps


def tile(operand, reps):
    """``operand`` repeated ``reps[i]`` times along axis ``i`` (one rep per axis)."""
    x = jnp.asarray(operand)
    return jnp.tile(x, _tile_reps(reps, x.ndim))


def _product(sizes, k):
    if k == len(sizes):
        return 1
    return sizes[k] * _product(sizes, k + 1)


def collapse(operand, start_dimension, stop_dimension=None):
    """``operand`` with its axes ``start_dimension:stop_dimension`` (a Python slice of the
    shape) merged into one."""
    x = jnp.asarray(operand)
    shape = x.shape
    middle = shape[start_dimension:stop_dimension]
    return jnp.reshape(x, shape[:start_dimension] + (_product(middle, 0),) +
                       shape[start_dimension:][len(middle):])


@static_helper
def _complex_check(x_dtype, y_dtype):
    for position, dtype in enumerate((x_dtype, y_dtype)):
        dtype = np.dtype(dtype)
        if dtype.kind != "f" or dtype.itemsize < 4:
            raise TypeError(f"complex does not accept dtype {dtype.name} at position "
                            f"{position}. Accepted dtypes at position {position} are "
                            f"subtypes of float32, float64.")


def complex(x, y):
    """``x + 1j * y`` for float32 or float64 ``x`` and ``y`` (complex64 or complex128)."""
    x, y = jnp.asarray(x), jnp.asarray(y)
    _complex_check(x.dtype, y.dtype)
    return x + y * 1j


@static_helper
def _ones(n):
    return (1,) * n


def broadcast_to_rank(x, rank):
    """``x`` with size-1 axes added in front up to ``rank`` axes (unchanged if it has as
    many or more)."""
    x = jnp.asarray(x)
    return jnp.reshape(x, _ones(rank - x.ndim) + x.shape)


@static_helper
def _take_axes(axes, n_idxs, ndim):
    axes = tuple(int(a) for a in axes)
    if len(axes) != n_idxs:
        raise TypeError(f"index_take: len(idxs) == {n_idxs} must equal len(axes) == "
                        f"{len(axes)}")
    if any(not 0 <= a < ndim for a in axes) or len(set(axes)) != len(axes):
        raise ValueError(f"index_take: axes {axes} must be distinct axes of an array of "
                         f"rank {ndim}")
    return axes, tuple(range(len(axes)))


def index_take(src, idxs, axes):
    """``src`` indexed along ``axes`` by the index arrays ``idxs`` (one per axis): the
    indexed dimension comes first, then ``src``'s other axes in order."""
    x = jnp.asarray(src)
    axes, front = _take_axes(axes, len(idxs), x.ndim)
    return jnp.moveaxis(x, axes, front)[tuple(idxs)]


def reduce_xor(operand, axes):
    """The exclusive or of ``operand``'s elements along ``axes`` (booleans or integers):
    bit by bit, the parity of the number of elements with that bit set."""
    return bit_reduce(operand, tuple(axes), "xor")
