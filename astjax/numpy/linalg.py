"""``astjax.numpy.linalg``: as ``jax.numpy.linalg``, for now ``norm`` only.

Plain functions written in ``astjax.numpy`` (as ``astjax.nn``): the compiler reads their
source like user code, so ``jnp.linalg.norm(x)`` works eagerly and in transformed code.
"""
import astjax.numpy as jnp

from .._src.random.checks import static_helper  # evaluated while generating code
from ._sorting import _normalize_axis

_INF = float("inf")


def _norm_axes(axis, ndim):
    """None, or a tuple of one or two normalized axes."""
    if axis is None:
        return None
    axes = tuple(axis) if isinstance(axis, (tuple, list)) else (axis,)
    if len(axes) not in (1, 2):
        raise ValueError(f"norm(): axis must be None, an int or a pair of ints, got {axis!r}")
    axes = tuple(_normalize_axis.fn(a, ndim, "norm") for a in axes)
    if len(axes) == 2 and axes[0] == axes[1]:
        raise ValueError(f"norm(): the two axes are the same: {axis!r}")
    return axes


def _vector_ord(ord):
    if ord is None or ord == 2:
        return 2
    if isinstance(ord, str) or isinstance(ord, bool) or not isinstance(ord, (int, float)):
        raise ValueError(f"norm(): invalid ord {ord!r} for a vector norm")
    return ord


def _matrix_ord(ord):
    if ord is None or ord == "fro":
        return "fro"
    if ord in (2, -2, "nuc"):
        raise NotImplementedError(f"norm(): ord={ord!r} for matrices needs singular values, "
                                  f"which astjax does not compute yet; ord=None ('fro'), 1, "
                                  f"-1, inf and -inf are supported")
    if isinstance(ord, bool) or ord not in (1, -1, _INF, -_INF):
        raise ValueError(f"norm(): invalid ord {ord!r} for a matrix norm")
    return ord


@static_helper
def _plan(ord, axis, ndim):
    """(kind, ord, axes): kind "all" (the 2-norm of everything), "vector" or "matrix"."""
    axes = _norm_axes(axis, ndim)
    if axes is None:
        if ord is None:
            return "all", None, None
        if ndim not in (1, 2):
            raise ValueError(f"norm(): an ord needs a 1-D or 2-D array or an axis, got an "
                             f"array of rank {ndim}")
        axes = (0,) if ndim == 1 else (0, 1)
    if len(axes) == 1:
        return "vector", _vector_ord(ord), axes
    return "matrix", _matrix_ord(ord), axes


@static_helper
def _is_inexact(dtype):
    return dtype.kind in "fc"


@static_helper
def _is_complex(dtype):
    return dtype.kind == "c"


def _abs_squared(x):
    if _is_complex(x.dtype):
        return jnp.real(x * jnp.conj(x))
    return x * x


def norm(x, ord=None, axis=None, keepdims=False):
    """The vector or matrix norm of ``x``, as ``jnp.linalg.norm``.

    ``axis=None``: the vector norm of a 1-D ``x``, the matrix norm of a 2-D one, and
    with ``ord=None`` the 2-norm of ``x`` flattened, whatever its rank. An int axis:
    vector norms (ord None/2, 1, inf, -inf, 0 or any other number p); a pair of axes:
    matrix norms (ord None/'fro', 1, -1, inf, -inf; 2, -2 and 'nuc' need an SVD and
    raise NotImplementedError). The 2-norm is sqrt(sum(|x|**2)), as in JAX, so its
    gradient at x = 0 is NaN there too."""
    x = jnp.asarray(x)
    if not _is_inexact(x.dtype):
        x = x * 1.0  # ints and bools: the default float (a weak 1.0), as JAX promotes
    kind, p, axes = _plan(ord, axis, x.ndim)
    if kind == "all":
        return jnp.sqrt(jnp.sum(_abs_squared(x), keepdims=keepdims))
    if kind == "vector":
        ax = axes[0]
        if p == 2:
            return jnp.sqrt(jnp.sum(_abs_squared(x), axis=ax, keepdims=keepdims))
        if p == _INF:
            return jnp.max(jnp.abs(x), axis=ax, keepdims=keepdims)
        if p == -_INF:
            return jnp.min(jnp.abs(x), axis=ax, keepdims=keepdims)
        if p == 0:
            return jnp.sum(x != 0, axis=ax, keepdims=keepdims).astype(jnp.abs(x).dtype)
        if p == 1:
            return jnp.sum(jnp.abs(x), axis=ax, keepdims=keepdims)
        return jnp.sum(jnp.abs(x) ** p, axis=ax, keepdims=keepdims) ** (1.0 / p)
    row, col = axes
    m = p
    if m == "fro":
        return jnp.sqrt(jnp.sum(_abs_squared(x), axis=axes, keepdims=keepdims))
    if m == 1 or m == -1:
        if not keepdims and col > row:
            col = col - 1
        sums = jnp.sum(jnp.abs(x), axis=row, keepdims=keepdims)
        if m == 1:
            return jnp.max(sums, axis=col, keepdims=keepdims)
        return jnp.min(sums, axis=col, keepdims=keepdims)
    if not keepdims and row > col:
        row = row - 1
    sums = jnp.sum(jnp.abs(x), axis=col, keepdims=keepdims)
    if m == _INF:
        return jnp.max(sums, axis=row, keepdims=keepdims)
    return jnp.min(sums, axis=row, keepdims=keepdims)
