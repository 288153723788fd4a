"""``astjax.scipy.linalg``: as ``jax.scipy.linalg``, built on ``astjax.numpy.linalg`` and
``astjax.lax.linalg`` (plain jnp code: it works eagerly, under jit on both backends, grad
and vmap, with the derivatives of what it is written with).

Not provided: schur, rsf2csf, hessenberg, sqrtm, funm, polar, expm_frechet,
eigh_tridiagonal (an AttributeError says so).
"""
import astjax.numpy as jnp

from .._src.lax import linalg as _lax_linalg
from .._src.random.checks import static_helper
from ..numpy import linalg as _linalg
from ..numpy._linalg_decomp import _H
from ..numpy.linalg import _inexact

__all__ = ["solve_triangular", "cholesky", "cho_factor", "cho_solve", "lu_factor", "lu_solve",
           "lu", "solve", "inv", "det", "eigh", "svd", "qr", "expm", "block_diag",
           "toeplitz"]


@static_helper
def _trans(trans):
    """(transpose_a, conjugate_a) of scipy's ``trans`` (0/'N', 1/'T', 2/'C')."""
    modes = {0: (False, False), "N": (False, False), 1: (True, False), "T": (True, False),
             2: (True, True), "C": (True, True)}
    if trans not in modes:
        raise ValueError(f"Invalid 'trans' value {trans!r}; expected 0, 1, 2, 'N', 'T' or "
                         f"'C'")
    return modes[trans]


def solve_triangular(a, b, trans=0, lower=False, unit_diagonal=False, overwrite_b=False,
                     debug=None, check_finite=True):
    """x with op(a) x = b for the ``lower`` (else upper) triangle of a; b of one rank less
    than a is a vector."""
    a, b = _inexact(a), _inexact(b)
    transpose_a, conjugate_a = _trans(trans)
    if b.ndim == a.ndim - 1:
        x = _lax_linalg.triangular_solve(a, jnp.expand_dims(b, -1), left_side=True,
                                         lower=lower, transpose_a=transpose_a,
                                         conjugate_a=conjugate_a, unit_diagonal=unit_diagonal)
        return x[..., 0]
    return _lax_linalg.triangular_solve(a, b, left_side=True, lower=lower,
                                        transpose_a=transpose_a, conjugate_a=conjugate_a,
                                        unit_diagonal=unit_diagonal)


def cholesky(a, lower=False, overwrite_a=False, check_finite=True):
    """The Cholesky factor from the ``lower`` (else upper) triangle of a, as scipy: the
    other triangle is not read."""
    a = _inexact(a)
    if lower:
        return _linalg.cholesky(a, symmetrize_input=False)
    return _H(_linalg.cholesky(_H(a), symmetrize_input=False))


def cho_factor(a, lower=False, overwrite_a=False, check_finite=True):
    return cholesky(a, lower=lower), lower


def cho_solve(c_and_lower, b, overwrite_b=False, check_finite=True):
    """x with a x = b, from ``cho_factor(a)``."""
    c, lower = c_and_lower
    c, b = _inexact(c), _inexact(b)
    if lower:
        y = solve_triangular(c, b, lower=True)
        return solve_triangular(c, y, trans="C", lower=True)
    y = solve_triangular(c, b, trans="C", lower=False)
    return solve_triangular(c, y, lower=False)


def lu_factor(a, overwrite_a=False, check_finite=True):
    """(lu, piv): L's strictly lower part and U in one matrix, and the row swaps."""
    lu_, pivots, _ = _lax_linalg.lu(_inexact(a))
    return lu_, pivots


def lu_solve(lu_and_piv, b, trans=0, overwrite_b=False, check_finite=True):
    """x with op(a) x = b, from ``lu_factor(a)``."""
    lu_, pivots = lu_and_piv
    lu_, b = _inexact(lu_), _inexact(b)
    transpose_a, conjugate_a = _trans(trans)
    perm = _lax_linalg.lu_pivots_to_permutation(pivots, lu_.shape[-2])
    vector = b.ndim == 1
    rhs = jnp.expand_dims(b, -1) if vector else b
    if transpose_a:  # op(a) = op(U) op(L) P: solve with U's, then L's, then unpermute
        trans_ = "C" if conjugate_a else "T"
        y = solve_triangular(lu_, rhs, trans=trans_, lower=False)
        z = solve_triangular(lu_, y, trans=trans_, lower=True, unit_diagonal=True)
        x = jnp.zeros_like(z).at[perm].set(z)
    else:  # a[perm] = L U
        y = solve_triangular(lu_, rhs[perm], lower=True, unit_diagonal=True)
        x = solve_triangular(lu_, y, lower=False)
    if vector:
        return x[..., 0]
    return x


def lu(a, permute_l=False, overwrite_a=False, check_finite=True):
    """(p, l, u) with a = p @ l @ u, or (p @ l, u) for ``permute_l``."""
    lu_, _, perm = _lax_linalg.lu(_inexact(a))
    m, n = lu_.shape[-2], lu_.shape[-1]
    k = min(m, n)
    low = jnp.tril(lu_[..., :, :k], -1) + jnp.eye(m, k, dtype=lu_.dtype)
    up = jnp.triu(lu_[..., :k, :])
    p = jnp.matrix_transpose(jnp.eye(m, dtype=lu_.dtype)[perm])
    if permute_l:
        return jnp.matmul(p, low), up
    return p, low, up


@static_helper
def _check_assume_a(assume_a):
    if assume_a not in ("gen", "sym", "her", "pos"):
        raise ValueError(f"Unrecognized assume_a value: {assume_a!r}")
    return assume_a


def solve(a, b, lower=False, overwrite_a=False, overwrite_b=False, debug=False,
          check_finite=True, assume_a="gen"):
    """x with a x = b; ``assume_a="pos"`` solves with the Cholesky factor of the
    ``lower`` (else upper) triangle, as JAX's."""
    if _check_assume_a(assume_a) == "pos":
        return cho_solve(cho_factor(a, lower=lower), b)
    return _linalg.solve(a, b)


def inv(a, overwrite_a=False, check_finite=True):
    return _linalg.inv(a)


def det(a, overwrite_a=False, check_finite=True):
    return _linalg.det(a)


@static_helper
def _eigh_args(b, eigvals, type):
    if b is not None:
        raise NotImplementedError("Only the b=None case of eigh is implemented")
    if type != 1:
        raise NotImplementedError("Only the type=1 case of eigh is implemented.")
    if eigvals is not None:
        raise NotImplementedError("Only the eigvals=None case of eigh is implemented.")
    return None


def eigh(a, b=None, lower=True, eigvals_only=False, overwrite_a=False, overwrite_b=False,
         turbo=True, eigvals=None, type=1, check_finite=True):
    _eigh_args(b, eigvals, type)
    w, v = _linalg.eigh(a, UPLO="L" if lower else "U")
    if eigvals_only:
        return w
    return w, v


def svd(a, full_matrices=True, compute_uv=True, overwrite_a=False, check_finite=True,
        lapack_driver="gesdd"):
    return _linalg.svd(a, full_matrices=full_matrices, compute_uv=compute_uv)


@static_helper
def _qr_mode(mode, pivoting):
    if pivoting:
        raise NotImplementedError("qr(pivoting=True) is not supported by astjax")
    if mode not in ("full", "r", "economic"):
        raise ValueError(f"Unsupported QR decomposition mode '{mode}'")
    return mode


def qr(a, overwrite_a=False, lwork=None, mode="full", pivoting=False, check_finite=True):
    """(q, r); mode "full" is numpy's "complete", "economic" its "reduced", "r" gives
    (r,) as scipy and JAX do."""
    if _qr_mode(mode, pivoting) == "economic":
        return _linalg.qr(a, "reduced")
    q, r = _linalg.qr(a, "complete")
    if mode == "r":
        return (r,)
    return q, r


# --- expm: scaling and squaring with a Pade approximant ------------------------------------

_PADE13 = (64764752532480000.0, 32382376266240000.0, 7771770303897600.0,
           1187353796428800.0, 129060195264000.0, 10559470521600.0, 670442572800.0,
           33522128640.0, 1323241920.0, 40840800.0, 960960.0, 16380.0, 182.0, 1.0)
_PADE7 = (17297280.0, 8648640.0, 1995840.0, 277200.0, 25200.0, 1512.0, 56.0, 1.0)


@static_helper
def _double(dtype):
    return dtype.itemsize >= 8 and dtype.kind == "f" or dtype.itemsize >= 16


def _pade13(a, eye):
    b = _PADE13
    a2 = jnp.matmul(a, a)
    a4 = jnp.matmul(a2, a2)
    a6 = jnp.matmul(a4, a2)
    u = jnp.matmul(a, jnp.matmul(a6, b[13] * a6 + b[11] * a4 + b[9] * a2)
                   + b[7] * a6 + b[5] * a4 + b[3] * a2 + b[1] * eye)
    v = (jnp.matmul(a6, b[12] * a6 + b[10] * a4 + b[8] * a2) + b[6] * a6 + b[4] * a4
         + b[2] * a2 + b[0] * eye)
    return u, v


def _pade7(a, eye):
    b = _PADE7
    a2 = jnp.matmul(a, a)
    a4 = jnp.matmul(a2, a2)
    a6 = jnp.matmul(a4, a2)
    u = jnp.matmul(a, b[7] * a6 + b[5] * a4 + b[3] * a2 + b[1] * eye)
    v = b[6] * a6 + b[4] * a4 + b[2] * a2 + b[0] * eye
    return u, v


def expm(A, *, upper_triangular=False, max_squarings=16):
    """The matrix exponential of a (stack of) square matrices: each scaled by a power of
    two to 1-norm at most 5.37 (float64; 3.93 with the 7th-order approximant in float32,
    JAX's bounds), the [13/13] (or [7/7]) Pade approximant, squared back. JAX picks a
    lower order for small norms; the results agree to rounding. More than
    ``max_squarings`` squarings give NaN, as in JAX."""
    a = _inexact(A)
    eye = jnp.eye(a.shape[-1], dtype=a.dtype)
    norm1 = jnp.max(jnp.sum(jnp.abs(a), axis=-2), axis=-1)
    if _double(a.dtype):
        maxnorm = 5.371920351148152
    else:
        maxnorm = 3.925724783138660
    squarings = jnp.maximum(0.0, jnp.floor(jnp.log2(norm1 / maxnorm)))
    scaled = a / jnp.expand_dims(2.0 ** squarings, (-2, -1)).astype(a.dtype)
    if _double(a.dtype):
        u, v = _pade13(scaled, eye)
    else:
        u, v = _pade7(scaled, eye)
    if upper_triangular:
        r = solve_triangular(v - u, u + v)
    else:
        r = _linalg.solve(v - u, u + v)
    todo = jnp.expand_dims(squarings, (-2, -1))
    for i in range(max_squarings):
        r = jnp.where(todo > i, jnp.matmul(r, r), r)
    return jnp.where(todo > max_squarings, float("nan"), r)


def block_diag(*arrs):
    """The arrays (0-, 1- or 2-D) on the diagonal of one matrix."""
    rows, cols = 0, 0
    for x in arrs:
        rows = rows + jnp.atleast_2d(x).shape[0]
        cols = cols + jnp.atleast_2d(x).shape[1]
    out = jnp.zeros((rows, cols), jnp.result_type(*arrs))
    r, c = 0, 0
    for x in arrs:
        b = jnp.atleast_2d(x)
        out = out.at[r:r + b.shape[0], c:c + b.shape[1]].set(b)
        r = r + b.shape[0]
        c = c + b.shape[1]
    return out


def toeplitz(c, r=None):
    """The Toeplitz matrix with first column c and first row r (c's conjugate if None;
    r[0] is ignored)."""
    c = jnp.ravel(jnp.asarray(c))
    if r is None:
        r = jnp.conj(c)
    r = jnp.ravel(jnp.asarray(r))
    i = jnp.arange(c.shape[0])[:, None]
    j = jnp.arange(r.shape[0])[None, :]
    below = jnp.take(c, jnp.clip(i - j, 0, c.shape[0] - 1))
    above = jnp.take(r, jnp.clip(j - i, 0, r.shape[0] - 1))
    return jnp.where(i >= j, below, above)


def __getattr__(name):
    raise AttributeError(f"astjax.scipy.linalg has no function {name!r} (jax.scipy.linalg "
                         f"does; astjax does not provide it yet)")
