"""Reductions called with JAX's ``where=`` mask or ``initial=`` value (``jnp.sum(x, where=m)``,
``jnp.max(x, initial=0.0)``, ``x.mean(where=m)``), written with the reduction ops: masked-out
elements become the reduction's identity (or ``initial``), ``mean``/``var`` divide by the
count of selected elements, as JAX computes them. A call of the op with one of these keywords
is compiled (and run eagerly) as the function here (``Op.keyword_function``), so jit, grad and
vmap go through it with no rules of their own.
"""
import astjax.numpy as jnp

from .._src.ops import conversions as _c, reductions as _r
from .._src.random.checks import static_helper  # evaluated while generating code


@static_helper
def _sum_dtype(fn, a_dtype, dtype, promote_integers):
    return _r._sum_dtype(fn, a_dtype, dtype, promote_integers)


@static_helper
def _mean_dtype(a_dtype, dtype):
    return _r._mean_dtype("mean", a_dtype, dtype)


@static_helper
def _var_dtypes(fn, a_dtype, dtype):
    return _r._var_dtypes(fn, a_dtype, dtype)


@static_helper
def _correction(fn, ddof, correction):
    return _r._correction(fn, ddof, correction)


@static_helper
def _is_complex(dtype):
    return dtype.kind == "c"


@static_helper
def _no_identity(fn):
    raise ValueError(f"reduction operation {fn} does not have an identity, so to use a where "
                     f"mask one has to specify 'initial'")


@static_helper
def _no_out(fn, out):
    _c.no_out(fn, out)


def _initial(initial, like):
    """``initial`` as a 0-d value of ``like``'s dtype, as JAX converts it."""
    return jnp.asarray(initial).astype(like.dtype)


def _accumulated(fn, a, axis, dtype, keepdims, initial, where, promote_integers, identity):
    """sum/prod of ``a`` with masked-out elements replaced by ``identity``, then ``initial``."""
    a = jnp.asarray(a)
    out_dtype = _sum_dtype(fn, a.dtype, dtype, promote_integers)
    a = a.astype(out_dtype)
    if where is not None:
        a = jnp.where(where, a, jnp.asarray(identity).astype(out_dtype))
    if fn == "sum":
        out = jnp.sum(a, axis=axis, keepdims=keepdims)
        if initial is not None:
            out = out + _initial(initial, out)
    else:
        out = jnp.prod(a, axis=axis, keepdims=keepdims)
        if initial is not None:
            out = out * _initial(initial, out)
    return out.astype(out_dtype)


def sum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None,
        promote_integers=True):
    """``jnp.sum`` with ``initial`` and ``where``: masked-out elements count as 0."""
    _no_out("sum", out)
    return _accumulated("sum", a, axis, dtype, keepdims, initial, where, promote_integers, 0)


def prod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None,
         promote_integers=True):
    """``jnp.prod`` with ``initial`` and ``where``: masked-out elements count as 1."""
    _no_out("prod", out)
    return _accumulated("prod", a, axis, dtype, keepdims, initial, where, promote_integers, 1)


@static_helper
def _one_more_along(ndim, axis):
    """pad widths adding one element at the end of each axis ``axis`` reduces."""
    axes = range(ndim) if axis is None else (axis,) if isinstance(axis, int) else axis
    reduced = {int(ax) % ndim for ax in axes}
    return tuple((0, 1 if i in reduced else 0) for i in range(ndim))


def _extremum(name, reduce, a, axis, out, keepdims, initial, where):
    _no_out(name, out)
    if initial is None:
        if where is not None:
            _no_identity(name)
        return reduce(a, axis=axis, keepdims=keepdims)
    a = jnp.asarray(a)
    init = _initial(initial, a)
    if where is not None:
        a = jnp.where(where, a, init)
    # ``initial`` one more element of each reduced row, so a row with none (an empty array,
    # or an axis of size 0) gives ``initial``, as in JAX
    return reduce(jnp.pad(a, _one_more_along(a.ndim, axis), constant_values=init), axis=axis,
                  keepdims=keepdims)


def max(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    """``jnp.max`` with ``initial`` and ``where`` (a mask needs ``initial``, as in JAX)."""
    return _extremum("max", jnp.max, a, axis, out, keepdims, initial, where)


def min(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    """``jnp.min`` with ``initial`` and ``where`` (a mask needs ``initial``, as in JAX)."""
    return _extremum("min", jnp.min, a, axis, out, keepdims, initial, where)


def _count(a, axis, keepdims, where, dtype):
    """How many elements of ``a`` the mask selects along ``axis``."""
    selected = jnp.broadcast_to(jnp.asarray(where), a.shape).astype(dtype)
    return jnp.sum(selected, axis=axis, keepdims=keepdims)


def mean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=None):
    """``jnp.mean`` of the elements ``where`` selects (nan where it selects none)."""
    _no_out("mean", out)
    a = jnp.asarray(a)
    out_dtype = _mean_dtype(a.dtype, dtype)
    a = a.astype(out_dtype)
    if where is None:
        return jnp.mean(a, axis=axis, keepdims=keepdims)
    total = jnp.sum(jnp.where(where, a, jnp.zeros_like(a)), axis=axis, keepdims=keepdims)
    return (total / _count(a, axis, keepdims, where, out_dtype)).astype(out_dtype)


def _variance(fn, a, axis, dtype, ddof, keepdims, where, correction):
    a = jnp.asarray(a)
    out_dtype, computation = _var_dtypes(fn, a.dtype, dtype)
    a = a.astype(computation)
    if where is None:
        return jnp.var(a, axis=axis, ddof=ddof, keepdims=keepdims, correction=correction)
    centered = a - mean(a, axis=axis, keepdims=True, where=where)
    if _is_complex(computation):
        squares = jnp.real(centered * jnp.conj(centered))
    else:
        squares = centered * centered
    squares = jnp.where(where, squares, jnp.zeros_like(squares))
    total = jnp.sum(squares, axis=axis, keepdims=keepdims)
    count = _count(a, axis, keepdims, where, total.dtype)
    return (total / (count - _correction(fn, ddof, correction))).astype(out_dtype)


def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None,
        correction=None):
    """``jnp.var`` of the elements ``where`` selects: N is their count."""
    _no_out("var", out)
    return _variance("var", a, axis, dtype, ddof, keepdims, where, correction)


def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None,
        correction=None):
    """``jnp.std`` of the elements ``where`` selects: N is their count."""
    _no_out("std", out)
    return jnp.sqrt(_variance("std", a, axis, dtype, ddof, keepdims, where, correction))


def any(a, axis=None, out=None, keepdims=False, *, where=None):
    """``jnp.any`` of the elements ``where`` selects (False where it selects none)."""
    _no_out("any", out)
    a = jnp.asarray(a)
    if where is not None:
        a = jnp.logical_and(a, where)
    return jnp.any(a, axis=axis, keepdims=keepdims)


def all(a, axis=None, out=None, keepdims=False, *, where=None):
    """``jnp.all`` of the elements ``where`` selects (True where it selects none)."""
    _no_out("all", out)
    a = jnp.asarray(a)
    if where is not None:
        a = jnp.logical_or(a, jnp.logical_not(where))
    return jnp.all(a, axis=axis, keepdims=keepdims)


KEYWORDS = {"sum": ({"initial", "where"}, sum), "prod": ({"initial", "where"}, prod),
            "max": ({"initial", "where"}, max), "min": ({"initial", "where"}, min),
            "mean": ({"where"}, mean), "var": ({"where"}, var), "std": ({"where"}, std),
            "any": ({"where"}, any), "all": ({"where"}, all)}
