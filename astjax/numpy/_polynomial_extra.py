"""``polyfit``, ``roots`` and ``polydiv`` written with ``astjax.numpy`` ops, read by the
compiler like user code, as those in ``_composites``. Semantics and dtypes follow JAX 0.10.2.
``roots`` takes the eigenvalues of the companion matrix (``jnp.linalg.eigvals``), as JAX does;
``polyfit`` solves its least squares problem by ``jnp.linalg.lstsq`` (an SVD), as JAX does.
All of them jit, vmap and differentiate like any other code.
"""
import numpy as np

import astjax.numpy as jnp

from .._src import dtypes
from .._src.errors import at_user_call
from .._src.ir.types import Static
from .._src.lax.control_flow import fori_loop
from .._src.random.checks import static_helper  # evaluated while generating code
from ._composites import _inexact
from ._linalg_decomp import eigenvalues
from ._math_extra import _promote_inexact
from ._misc_extra import two_way
from ._setops import _static_arg

# ---- polyfit ----------------------------------------------------------------------------


@static_helper
def _fit_args(deg, x_ndim, y_ndim, cov):
    if not isinstance(deg, (int, np.integer)) or isinstance(deg, bool):
        raise TypeError(f"polyfit(): deg must be an int known when code is generated, "
                        f"got {deg!r}")
    if deg < 0:
        raise ValueError("expected deg >= 0")
    if x_ndim != 1:
        raise TypeError("expected 1D vector for x")
    if y_ndim < 1 or y_ndim > 2:
        raise TypeError("expected 1D or 2D array for y")
    if cov not in (False, True, "unscaled"):
        raise ValueError(f"polyfit(): cov must be a bool or 'unscaled', got {cov!r}")
    return int(deg) + 1


@static_helper
def _check_weights(ndim):
    if ndim != 1:
        raise TypeError("expected a 1-d array for weights")
    return ndim


def polyfit(x, y, deg, rcond=None, full=False, w=None, cov=False):
    """The coefficients (highest power first) of the degree ``deg`` polynomial that fits
    ``y`` at ``x`` by least squares (each column of a 2-D ``y`` separately), as
    ``jnp.polyfit``: ``jnp.linalg.lstsq`` of the Vandermonde matrix with unit columns,
    singular values below ``rcond`` (default ``len(x) * eps``) cut, so fewer points than
    ``deg + 1`` give the least-norm fit. With ``full``, also the residuals, rank, singular
    values and ``rcond``; else with ``cov``, the covariance matrix. ``deg``, ``rcond``,
    ``full`` and ``cov`` must be static."""
    x, y = _promote_inexact(x, y)
    order = _fit_args(_static_arg(deg, "deg", "polyfit"), x.ndim, y.ndim, cov)
    rcond = _static_arg(rcond, "rcond", "polyfit")
    full = _static_arg(full, "full", "polyfit")
    # sizes: checked at run time in compiled code
    if x.shape[0] == 0:
        raise TypeError("expected non-empty vector for x")
    if x.shape[0] != y.shape[0]:
        raise TypeError("expected x and y to have same length")
    if rcond is None:
        rcond = x.shape[0] * float(jnp.finfo(x.dtype).eps)  # a Python float, as JAX
    lhs = jnp.vander(x, order)
    rhs = y
    if w is not None:
        w = _inexact(w)
        _check_weights(w.ndim)
        if w.shape[0] != y.shape[0]:
            raise TypeError("expected w and y to have the same length")
        lhs = lhs * jnp.expand_dims(w, 1)
        if rhs.ndim == 2:
            rhs = rhs * jnp.expand_dims(w, 1)
        else:
            rhs = rhs * w
    scale = jnp.sqrt(jnp.sum(lhs * lhs, axis=0))  # unit columns: a better conditioned solve
    lhs = lhs / scale
    c, resids, rank, s = jnp.linalg.lstsq(lhs, rhs, rcond)
    if c.ndim > 1:
        c = c / jnp.expand_dims(scale, 1)
    else:
        c = c / scale
    if full:
        return c, resids, rank, s, jnp.asarray(rcond)
    if not cov:
        return c
    v = jnp.linalg.inv(lhs.T @ lhs) / jnp.outer(scale, scale)
    if cov == "unscaled":
        fac = jnp.ones((), v.dtype)  # JAX: array(1.0), weak
    else:
        if x.shape[0] <= order:
            raise ValueError("the number of data points must exceed order to scale the "
                             "covariance matrix")
        fac = resids / (x.shape[0] - order)
    if y.ndim == 1:
        return c, v * jnp.expand_dims(jnp.atleast_1d(fac), 0)
    return c, jnp.expand_dims(v, 2) * jnp.atleast_1d(fac)


# ---- roots ------------------------------------------------------------------------------

@static_helper
def _complex_of(dtype):
    """JAX's to_complex_dtype: complex64 for float16/32 and narrow ints, else complex128."""
    dtype = dtypes.to_inexact(dtype)[0]
    return dtype if dtype.kind == "c" else np.result_type(dtype, np.complex64)


@static_helper
def _check_roots_ndim(ndim):
    if ndim != 1:
        raise ValueError("Input must be a rank-1 array.")
    return ndim


def _companion_roots(p):
    """The eigenvalues of ``p``'s companion matrix (1-D, inexact, p[0] != 0, length >= 2),
    as JAX finds the roots."""
    n = p.shape[0]
    a = jnp.diag(jnp.ones((n - 2,), p.dtype), -1)
    return eigenvalues(a.at[0, :].set(-p[1:] / p[0]))


def _roots_with_zeros(p, num_zeros):
    """JAX's: the leading zeros rolled to the end, the zero roots they add sorted last and
    replaced by NaN (all roots NaN when p is all zeros)."""
    p = jnp.where(p.shape[0] == num_zeros, jnp.ones_like(p), p)
    n = p.shape[0]
    r = _companion_roots(p[(jnp.arange(n) + num_zeros) % n])  # jnp.roll(p, -num_zeros)
    r = r[jnp.argsort(r == 0, stable=True)]
    nan = jnp.full_like(r, complex(np.nan, np.nan))
    return jnp.where(jnp.arange(n - 1) < n - 1 - num_zeros, r, nan)


def _leading_zeros(p):
    return jnp.where(jnp.all(p == 0), p.shape[0], jnp.argmin(p == 0))


def _roots_eager(p, *, strip_zeros=True):
    p = jnp.atleast_1d(_inexact(p))
    _check_roots_ndim(p.ndim)
    if p.shape[0] < 2:
        return jnp.zeros((0,), _complex_of(p.dtype))
    num_zeros = _leading_zeros(p)
    if not strip_zeros:
        return _roots_with_zeros(p, num_zeros)
    p = p[int(num_zeros):]
    if p.shape[0] < 2:
        return jnp.zeros((0,), _complex_of(p.dtype))
    return _companion_roots(p)


def _roots_compiled(p, strip_zeros):
    p = jnp.atleast_1d(_inexact(p))
    _check_roots_ndim(p.ndim)
    return _roots_with_zeros(p, _leading_zeros(p))


def _roots_for(p_t, strip_zeros_t=Static(True)):
    if not isinstance(strip_zeros_t, Static) or strip_zeros_t.value:
        raise at_user_call(ValueError(
            "The error occurred in the jnp.roots() function. To use this within a "
            "JIT-compiled context, pass strip_zeros=False, but be aware that leading zeros "
            "will result in some returned roots being set to NaN."))
    return _roots_compiled


roots = two_way(
    "roots", _roots_eager, _roots_for,
    """The complex roots of the polynomial ``p`` (highest power first), as
    ``jnp.roots``: leading zeros stripped (eagerly only; in compiled code pass
    ``strip_zeros=False``, which gives NaN for the roots they stand for): the eigenvalues
    of the companion matrix, as JAX's, differentiable; ``p`` needs at least 2 entries in
    compiled code.""")


# ---- polydiv ----------------------------------------------------------------------------

def _placed(v, k, n):
    """``v`` (1-D) at offset ``k`` of a length-``n`` vector of zeros."""
    j = jnp.arange(n) - k
    got = v[jnp.clip(j, 0, v.shape[0] - 1)]
    return jnp.where(jnp.logical_and(j >= 0, j < v.shape[0]), got, jnp.zeros_like(got))


def _polydiv(u, v, trim_leading_zeros=False):
    u, v = _promote_inexact(u, v)
    m = u.shape[0] - 1
    n = v.shape[0] - 1
    scale = 1.0 / v[0]

    def step(k, qu):
        q, u = qu
        d = scale * u[k]
        return q.at[k].set(d), u - d * _placed(v, k, m + 1)

    q = jnp.zeros(jnp.maximum(m - n + 1, 1), u.dtype)
    return fori_loop(0, jnp.maximum(m - n + 1, 0), step, (q, u))


def _polydiv_eager(u, v, *, trim_leading_zeros=False):
    q, r = _polydiv(u, v)
    if trim_leading_zeros:  # NumPy's tolerance, as JAX approximates it
        small = np.abs(np.asarray(r)) < np.sqrt(np.finfo(r.dtype).eps)
        r = r[int(np.argmin(small)):] if not small.all() else r[:0]
    return q, r


def _polydiv_for(u_t, v_t, trim_leading_zeros_t=Static(False)):
    if not isinstance(trim_leading_zeros_t, Static) or trim_leading_zeros_t.value:
        raise at_user_call(ValueError(
            "polydiv(): trim_leading_zeros=True needs the values (the length of the result "
            "depends on them), so it works only outside compiled code, as in JAX"))
    return _polydiv


polydiv = two_way(
    "polydiv", _polydiv_eager, _polydiv_for,
    """The quotient and remainder of dividing the polynomial ``u`` by ``v``,
    as ``jnp.polydiv``: the remainder keeps ``u``'s length (its leading entries zero) unless
    ``trim_leading_zeros`` (eagerly only).""")

__all__ = ["polydiv", "polyfit", "roots"]
