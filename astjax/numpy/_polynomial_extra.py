"""``polyfit``, ``roots`` and ``polydiv`` written with ``astjax.numpy`` ops, read by the
compiler like user code, as those in ``_composites``. Semantics and dtypes follow JAX 0.10.2.
``roots`` takes the eigenvalues of the companion matrix (``jnp.linalg.eigvals``), as JAX does;
``polyfit`` solves its least squares problem by Householder QR (JAX: ``lstsq``'s SVD), a loop
of jnp ops. All of them jit, vmap and differentiate like any other code.
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
def _fit_args(deg, x_ndim, y_ndim, full, cov):
    if not isinstance(deg, (int, np.integer)) or isinstance(deg, bool):
        raise TypeError(f"polyfit(): deg must be an int known when code is generated, "
                        f"got {deg!r}")
    if deg < 0:
        raise ValueError("expected deg >= 0")
    if x_ndim != 1:
        raise TypeError("expected 1D vector for x")
    if y_ndim < 1 or y_ndim > 2:
        raise TypeError("expected 1D or 2D array for y")
    if full:
        raise NotImplementedError("polyfit(): full=True (the rank and singular values) is not "
                                  "supported: astjax has no SVD")
    if cov not in (False, True, "unscaled"):
        raise ValueError(f"polyfit(): cov must be a bool or 'unscaled', got {cov!r}")
    return int(deg) + 1


@static_helper
def _check_weights(ndim):
    if ndim != 1:
        raise TypeError("expected a 1-d array for weights")
    return ndim


def _householder(a, b):
    """``a`` (m, n) and ``b`` (m, k) times the n reflections that make ``a`` upper
    triangular (``Q^T a``, ``Q^T b``). Masks stand for the shrinking blocks, so every array
    keeps its shape."""
    rows = jnp.arange(a.shape[0])

    def reflect(k, ab):
        a, b = ab
        col = a[:, k]
        x = jnp.where(rows >= k, col, jnp.zeros_like(col))
        norm = jnp.sqrt(jnp.sum(x * x))
        alpha = jnp.where(col[k] >= 0, -norm, norm)  # the sign that avoids cancellation
        v = x - alpha * (rows == k).astype(x.dtype)
        vv = jnp.sum(v * v)
        scale = 2 / jnp.where(vv == 0, jnp.ones_like(vv), vv)  # a zero column: no reflection
        a = a - jnp.expand_dims(v, 1) * (jnp.expand_dims(v, 0) @ a * scale)
        b = b - jnp.expand_dims(v, 1) * (jnp.expand_dims(v, 0) @ b * scale)
        return a, b

    return fori_loop(0, a.shape[1], reflect, (a, b))


def _back_substitute(r, y):
    """The solution of the upper triangular ``r`` (n, n) times x = ``y`` (n, k)."""
    n = r.shape[0]

    def row(i, x):
        j = n - 1 - i
        return x.at[j].set((y[j] - r[j] @ x) / r[j, j])  # rows past j are solved, j's is 0

    return fori_loop(0, n, row, jnp.zeros_like(y))


def polyfit(x, y, deg, rcond=None, full=False, w=None, cov=False):
    """The coefficients (highest power first) of the degree ``deg`` polynomial that fits
    ``y`` at ``x`` by least squares (each column of a 2-D ``y`` separately), as
    ``jnp.polyfit``; with ``cov``, also their covariance matrix. ``deg`` must be static.
    ``rcond`` is not used: the columns of the scaled Vandermonde matrix are assumed
    independent (JAX cuts its singular values below ``rcond``); ``full=True`` is refused."""
    x, y = _promote_inexact(x, y)
    order = _fit_args(_static_arg(deg, "deg", "polyfit"), x.ndim, y.ndim, full, cov)
    if x.shape[0] < order:  # at run time in compiled code (a size)
        raise NotImplementedError("polyfit(): fewer points than deg + 1 (an underdetermined "
                                  "fit, JAX's least-norm solution) is not supported")
    lhs = jnp.vander(x, order)
    rhs = y
    if w is not None:
        w = _inexact(w)
        _check_weights(w.ndim)
        lhs = lhs * jnp.expand_dims(w, 1)
        if rhs.ndim == 2:
            rhs = rhs * jnp.expand_dims(w, 1)
        else:
            rhs = rhs * w
    scale = jnp.sqrt(jnp.sum(lhs * lhs, axis=0))  # unit columns: a better conditioned solve
    lhs = lhs / scale
    r, qb = _householder(lhs, jnp.reshape(rhs, (rhs.shape[0], -1)))
    r = r[:order]
    c = _back_substitute(r, qb[:order]) / jnp.expand_dims(scale, 1)
    if y.ndim == 1:
        c = c[:, 0]
    if not cov:
        return c
    # inv(lhs^T lhs) = inv(r) inv(r)^T, of the scaled matrix
    r_inv = _back_substitute(r, jnp.eye(order, dtype=r.dtype))
    v = (r_inv @ r_inv.T) / (jnp.expand_dims(scale, 1) * scale)
    if cov == "unscaled":
        fac = jnp.ones((1,), v.dtype)
    else:
        # the sum of squared residuals of each column, over the degrees of freedom
        fac = jnp.sum(qb[order:] * qb[order:], axis=0) / (x.shape[0] - order)
    if y.ndim == 1:
        return c, v * fac
    return c, jnp.expand_dims(v, 2) * fac


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
