"""The decompositions of ``astjax.numpy.linalg`` and their derivatives.

Each is one op of ``_src/ops/decompositions.py`` (NumPy's LAPACK call, per matrix of a
stack) wrapped in a ``custom_jvp`` whose rule is JAX's (lax.linalg's JVP rules), written
with products and ``solve``: reverse mode transposes the rule, and a derivative of a
derivative differentiates it again, as in JAX. The rules assume what JAX's assume
(distinct eigenvalues or singular values; for ``det``, a nonsingular matrix).
"""
import astjax.numpy as jnp

from .._src.ad.custom import custom_jvp
from .._src.errors import at_user_call
from .._src.ops.registry import REGISTRY
from .._src.random.checks import static_helper

_solve_op = REGISTRY["linalg_solve"]
_cholesky_op = REGISTRY["linalg_cholesky"]
_eigh_op = REGISTRY["linalg_eigh"]
_svd_op = REGISTRY["linalg_svd"]
_qr_op = REGISTRY["linalg_qr"]
_det_op = REGISTRY["linalg_det"]
_slogdet_op = REGISTRY["linalg_slogdet"]
_eig_op = REGISTRY["linalg_eig"]  # (eigenvectors are not differentiable: no rule)


def _H(x):
    return jnp.conj(jnp.matrix_transpose(x))


@static_helper
def _is_complex(dtype):
    return dtype.kind == "c"


def _eye_like(x):
    """The identity of x's last dim, in x's dtype."""
    return jnp.eye(x.shape[-1], dtype=x.dtype)


def _right_solve(r, x):
    """x r^-1."""
    return jnp.matrix_transpose(_solve_op(jnp.matrix_transpose(r), jnp.matrix_transpose(x)))


# --- cholesky ------------------------------------------------------------------------------


@custom_jvp
def cholesky_lower(a):
    return _cholesky_op(a)


@cholesky_lower.defjvp
def _cholesky_jvp(primals, tangents):
    (a,), (ta,) = primals, tangents
    low = cholesky_lower(a)
    inner = _solve_op(low, _H(_solve_op(low, _H(ta))))  # L^-1 dA L^-H
    phi = jnp.tril(inner, -1) + 0.5 * (inner * _eye_like(inner))
    return low, jnp.matmul(low, phi)


# --- eigh ----------------------------------------------------------------------------------


@custom_jvp
def eigh_pair(a):
    return _eigh_op(a)


@eigh_pair.defjvp
def _eigh_jvp(primals, tangents):
    (a,), (ta,) = primals, tangents
    w, v = eigh_pair(a)
    eye = _eye_like(a)
    wc = w.astype(a.dtype)
    gaps = 1.0 / (eye + jnp.expand_dims(wc, -2) - jnp.expand_dims(wc, -1)) - eye
    projected = jnp.matmul(_H(v), jnp.matmul(ta, v))
    dw = jnp.real(jnp.diagonal(projected, axis1=-2, axis2=-1))
    return (w, v), (dw, jnp.matmul(v, gaps * projected))


# --- eig ----------------------------------------------------------------------------------


@custom_jvp
def eig_pair(a):
    return _eig_op(a)


@eig_pair.defjvp
def _eig_jvp(primals, tangents):
    raise at_user_call(NotImplementedError(
        "Derivatives of non-symmetric eigenvectors are only valid under assumptions on the "
        "input that cannot be checked, and astjax does not compute them (JAX's "
        "jnp.linalg.eig refuses them too); differentiate jnp.linalg.eigvals for the "
        "eigenvalues."))




@custom_jvp
def eigenvalues(a):
    return _eig_op(a)[0]


@eigenvalues.defjvp
def _eigenvalues_jvp(primals, tangents):
    (a,), (ta,) = primals, tangents
    w, v = _eig_op(a)
    # diag(V^-1 dA V), as JAX's rule
    return w, jnp.sum(_solve_op(v, ta.astype(v.dtype)) * jnp.matrix_transpose(v), axis=-1)


# --- svd -----------------------------------------------------------------------------------


@custom_jvp
def singular_values(a):
    return _svd_op(a, False)[1]


@singular_values.defjvp
def _singular_values_jvp(primals, tangents):
    (a,), (ta,) = primals, tangents
    u, s, vt = svd_reduced(a)
    projected = jnp.matmul(_H(u), jnp.matmul(ta, _H(vt)))
    return s, jnp.real(jnp.diagonal(projected, axis1=-2, axis2=-1))


@custom_jvp
def svd_reduced(a):
    return _svd_op(a, False)


@svd_reduced.defjvp
def _svd_jvp(primals, tangents):
    (a,), (ta,) = primals, tangents
    u, s, vt = svd_reduced(a)
    ut, v = _H(u), _H(vt)
    s_row = jnp.expand_dims(s, -2)
    s_col = jnp.expand_dims(s, -1)
    d_s = jnp.matmul(ut, jnp.matmul(ta, v))
    ds = jnp.real(jnp.diagonal(d_s, axis1=-2, axis2=-1))
    eye = jnp.eye(s.shape[-1], dtype=s.dtype)
    diffs = (s_row + s_col) * (s_row - s_col)
    f = (1.0 / (diffs + eye) - eye).astype(a.dtype)
    dss = s_row.astype(a.dtype) * d_s
    sds = s_col.astype(a.dtype) * d_s
    zero = (s == 0).astype(s.dtype)
    s_inv = jnp.expand_dims(1.0 / (s + zero) - zero, -1) * eye
    du = jnp.matmul(u, f * (dss + _H(dss)) + 0.5 * (d_s - _H(d_s)) * s_inv.astype(a.dtype))
    dv = jnp.matmul(v, f * (sds + _H(sds)))
    m, n = a.shape[-2], a.shape[-1]
    if m > n:
        dav = jnp.matmul(ta, v)
        du = du + (dav - jnp.matmul(u, jnp.matmul(ut, dav))) / s_row.astype(a.dtype)
    if n > m:
        dahu = jnp.matmul(_H(ta), u)
        dv = dv + (dahu - jnp.matmul(v, jnp.matmul(vt, dahu))) / s_row.astype(a.dtype)
    return (u, s, vt), (du, ds, _H(dv))


@custom_jvp
def svd_full(a):
    return _svd_op(a, True)


@svd_full.defjvp
def _svd_full_jvp(primals, tangents):
    (a,), (ta,) = primals, tangents
    if a.shape[-2] != a.shape[-1]:
        raise NotImplementedError("Singular value decomposition JVP not implemented for full "
                                  "matrices")
    return svd_full(a), _svd_jvp(primals, tangents)[1]


# --- qr ------------------------------------------------------------------------------------


def _thin_qr_jvp(q, r, dx):
    """JAX's JVP of the QR decomposition of an (m, n) matrix with m >= n."""
    dx_rinv = _right_solve(r, dx)
    qt_dx_rinv = jnp.matmul(_H(q), dx_rinv)
    lower = jnp.tril(qt_dx_rinv, -1)
    skew = lower - _H(lower)
    if _is_complex(qt_dx_rinv.dtype):
        skew = skew + _eye_like(r) * (qt_dx_rinv - jnp.real(qt_dx_rinv).astype(qt_dx_rinv.dtype))
    dq = jnp.matmul(q, skew - qt_dx_rinv) + dx_rinv
    dr = jnp.matmul(qt_dx_rinv - skew, r)
    return dq, dr


def _qr_tangents(a, ta, q, r):
    m, n = a.shape[-2], a.shape[-1]
    if m >= n:
        return _thin_qr_jvp(q, r, ta)
    dq, dr1 = _thin_qr_jvp(q, r[..., :, :m], ta[..., :, :m])
    dr2 = jnp.matmul(_H(dq), a[..., :, m:]) + jnp.matmul(_H(q), ta[..., :, m:])
    return dq, jnp.concatenate([dr1, dr2], axis=-1)


@custom_jvp
def qr_reduced(a):
    return _qr_op(a, False)


@qr_reduced.defjvp
def _qr_jvp(primals, tangents):
    (a,), (ta,) = primals, tangents
    q, r = qr_reduced(a)
    return (q, r), _qr_tangents(a, ta, q, r)


@custom_jvp
def qr_complete(a):
    return _qr_op(a, True)


@qr_complete.defjvp
def _qr_complete_jvp(primals, tangents):
    (a,), (ta,) = primals, tangents
    q, r = qr_complete(a)
    if a.shape[-2] > a.shape[-1]:
        raise NotImplementedError("astjax: the derivative of qr(mode='complete') of a matrix "
                                  "with more rows than columns is not implemented; use "
                                  "mode='reduced'")
    return (q, r), _qr_tangents(a, ta, q, r)


# --- det, slogdet ----------------------------------------------------------------------------


def _trace_solve(a, ta):
    """trace(a^-1 da)."""
    return jnp.trace(_solve_op(a, ta), axis1=-2, axis2=-1)


@custom_jvp
def det(a):
    return _det_op(a)


@det.defjvp
def _det_jvp(primals, tangents):
    (a,), (ta,) = primals, tangents
    d = det(a)
    return d, d * _trace_solve(a, ta)


@custom_jvp
def slogdet_pair(a):
    return _slogdet_op(a)


@slogdet_pair.defjvp
def _slogdet_jvp(primals, tangents):
    (a,), (ta,) = primals, tangents
    sign, logabs = slogdet_pair(a)
    t = _trace_solve(a, ta)
    if _is_complex(a.dtype):
        d_sign = sign * (t - jnp.real(t).astype(t.dtype))
    else:
        d_sign = jnp.zeros_like(sign)
    return (sign, logabs), (d_sign, jnp.real(t))


# --- pinv ----------------------------------------------------------------------------------


@custom_jvp
def pinv_with(a, rtol):
    """The pseudo-inverse, singular values up to rtol * the largest dropped (NumPy's and
    JAX's algorithm); rtol gets no derivative."""
    u, s, vt = svd_reduced(jnp.conj(a))
    cutoff = jnp.expand_dims(rtol, -1) * s[..., 0:1]
    s = jnp.where(s > cutoff, s, float("inf")).astype(u.dtype)
    return jnp.matmul(jnp.matrix_transpose(vt),
                      jnp.matrix_transpose(u) / jnp.expand_dims(s, -1))


@pinv_with.defjvp
def _pinv_jvp(primals, tangents):
    """Golub and Pereyra's derivative, as JAX's."""
    (a, rtol), (ta, _) = primals, tangents
    p = pinv_with(a, rtol)
    m, n = a.shape[-2], a.shape[-1]
    if m >= n:
        s = jnp.matmul(jnp.matmul(p, _H(p)), _H(ta))
        t = jnp.matmul(jnp.matmul(_H(ta), _H(p)), p)
        dp = (-jnp.matmul(jnp.matmul(p, ta), p) + s - jnp.matmul(jnp.matmul(s, a), p) + t
              - jnp.matmul(jnp.matmul(p, a), t))
    else:
        s = jnp.matmul(p, jnp.matmul(_H(p), _H(ta)))
        t = jnp.matmul(_H(ta), jnp.matmul(_H(p), p))
        dp = (-jnp.matmul(p, jnp.matmul(ta, p)) + s - jnp.matmul(s, jnp.matmul(a, p)) + t
              - jnp.matmul(p, jnp.matmul(a, t)))
    return p, dp
