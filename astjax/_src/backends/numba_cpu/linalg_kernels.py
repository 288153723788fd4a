"""The LAPACK ops (``ops/decompositions.py``) for generated Numba code: NumPy's
np.linalg functions as Numba compiles them, called once per matrix of a stack
``(batch, m, n)``. A matrix whose factorization fails (singular, not positive definite,
NaN entries, no convergence) gets NaN results, as in JAX, where Numba would raise."""
import numpy as np
from numba import njit

_OPTIONS = dict(cache=True)


@njit(**_OPTIONS)
def solve_stack(a, b):
    out = np.empty(b.shape, b.dtype)
    for i in range(a.shape[0]):
        try:
            out[i] = np.linalg.solve(a[i], b[i])
        except Exception:  # noqa: B902  (Numba catches no narrower class)
            out[i] = np.nan
    return out


@njit(**_OPTIONS)
def cholesky_stack(a):
    out = np.empty(a.shape, a.dtype)
    for i in range(a.shape[0]):
        try:
            out[i] = np.linalg.cholesky(a[i])
        except Exception:  # noqa: B902
            out[i] = np.nan
    return out


@njit(**_OPTIONS)
def eigh_stack(a, real):
    n = a.shape[-1]
    w = np.empty((a.shape[0], n), real)
    v = np.empty(a.shape, a.dtype)
    for i in range(a.shape[0]):
        try:
            wi, vi = np.linalg.eigh(a[i])
            w[i] = wi
            v[i] = vi
        except Exception:  # noqa: B902
            w[i] = np.nan
            v[i] = np.nan
    return w, v


@njit(**_OPTIONS)
def eig_stack(a, complex_):
    n = a.shape[-1]
    w = np.empty((a.shape[0], n), complex_)
    v = np.empty(a.shape, complex_)
    for i in range(a.shape[0]):
        try:
            wi, vi = np.linalg.eig(a[i].astype(complex_))
            w[i] = wi
            v[i] = vi
        except Exception:  # noqa: B902
            w[i] = np.nan
            v[i] = np.nan
    return w, v


@njit(**_OPTIONS)
def svd_stack(a, full_matrices, real):
    m, n = a.shape[1], a.shape[2]
    k = min(m, n)
    u_cols, v_rows = (m, n) if full_matrices else (k, k)
    u = np.empty((a.shape[0], m, u_cols), a.dtype)
    s = np.empty((a.shape[0], k), real)
    vt = np.empty((a.shape[0], v_rows, n), a.dtype)
    for i in range(a.shape[0]):
        try:
            ui, si, vti = np.linalg.svd(a[i], full_matrices)
            u[i] = ui
            s[i] = si
            vt[i] = vti
        except Exception:  # noqa: B902
            u[i] = np.nan
            s[i] = np.nan
            vt[i] = np.nan
    return u, s, vt


@njit(**_OPTIONS)
def qr_stack(a):
    m, n = a.shape[1], a.shape[2]
    k = min(m, n)
    q = np.empty((a.shape[0], m, k), a.dtype)
    r = np.empty((a.shape[0], k, n), a.dtype)
    for i in range(a.shape[0]):
        try:
            qi, ri = np.linalg.qr(a[i])
            q[i] = qi
            r[i] = ri
        except Exception:  # noqa: B902
            q[i] = np.nan
            r[i] = np.nan
    return q, r


@njit(**_OPTIONS)
def det_stack(a):
    out = np.empty(a.shape[0], a.dtype)
    for i in range(a.shape[0]):
        try:
            out[i] = np.linalg.det(a[i])
        except Exception:  # noqa: B902
            out[i] = np.nan
    return out


@njit(**_OPTIONS)
def slogdet_stack(a, real):
    sign = np.empty(a.shape[0], a.dtype)
    logabs = np.empty(a.shape[0], real)
    for i in range(a.shape[0]):
        try:
            si, li = np.linalg.slogdet(a[i])
            sign[i] = si
            logabs[i] = li
        except Exception:  # noqa: B902
            sign[i] = np.nan
            logabs[i] = np.nan
    return sign, logabs
