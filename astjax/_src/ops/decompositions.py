"""The LAPACK ops ``astjax.numpy.linalg`` is written with (as JAX's is with lax.linalg):
solve, cholesky, eigh, eig, svd, qr, det and slogdet of a stack of matrices (the last two
axes; leading axes are a batch, broadcast between solve's operands as NumPy does).

Operands become inexact (int32 -> float32) and keep their precision. Where LAPACK fails
(a singular matrix for solve, one not positive definite for cholesky, no convergence) the
matrix's results are NaN, as JAX's are, instead of NumPy's LinAlgError.

Only ``solve`` is differentiable here (its rules: ``ad/vjp_linalg_solve.py``); the
decompositions get their derivatives as custom_jvp rules in ``astjax/numpy/linalg.py``,
written with solve and products, so every order of derivative composes. Numba kernels:
``backends/numba_cpu/linalg_kernels.py``.
"""
import numpy as np

from .. import dtypes
from ..errors import ShapeError
from ..ir.types import ArrayType, SequenceType
from .conversions import array_operand
from .registry import NAMESPACE, Op
from .shape import broadcast_dims

_REAL = {dtypes.complex64: dtypes.float32, dtypes.complex128: dtypes.float64}
_COMPLEX = {dtypes.float32: dtypes.complex64, dtypes.float64: dtypes.complex128}


def real_dtype(dtype):
    dtype = np.dtype(dtype)
    return _REAL.get(dtype, dtype)


def _matrices(fn, t):
    """The array type of ``t``, checked to be a (stack of) matrices."""
    a = array_operand(fn, "a", t)
    if a.ndim < 2:
        raise ShapeError(f"{fn}(): the input must be a matrix (at least 2-D), got a "
                         f"{a.ndim}-D array")
    return a


def _inexact(op, t):
    dtype, _ = op.promoted_dtype({op.operands[0]: t})
    dtype = np.dtype(dtype)
    if dtype == np.float16:  # LAPACK has no half precision: JAX computes float16 in float32
        raise ShapeError(f"{op.name}(): float16 matrices are not supported; cast to float32")
    return dtype


def _per_matrix(compute, a, shapes, dtypes_):
    """``compute`` on each matrix of the stack ``a``; a matrix whose LAPACK call fails gives
    NaN outputs (JAX's behaviour). ``shapes`` are the outputs' per-matrix shapes."""
    batch = a.shape[:-2]
    outs = [np.empty(batch + s, d) for s, d in zip(shapes, dtypes_)]
    for idx in np.ndindex(*batch):
        try:
            values = compute(a[idx])
        except np.linalg.LinAlgError:
            values = [np.full(s, np.nan, d) for s, d in zip(shapes, dtypes_)]
        for out, v in zip(outs, values):
            out[idx] = v
    return outs


# --- solve -------------------------------------------------------------------------------------

def _solve(a, b, vector=False):
    a, b = np.asarray(a), np.asarray(b)
    n = a.shape[-1]
    rhs = b[..., None] if vector else b
    batch = np.broadcast_shapes(a.shape[:-2], rhs.shape[:-2])
    a = np.broadcast_to(a, batch + a.shape[-2:])
    rhs = np.broadcast_to(rhs, batch + rhs.shape[-2:])
    if rhs.shape[-2] != n or a.shape[-2] != n:
        raise ShapeError(f"solve(): a of shape {a.shape} and b of shape {b.shape} do not "
                         f"match: a must be (..., n, n) and b (..., n) or (..., n, k)")
    stacked = np.concatenate([a, rhs], axis=-1)
    (x,) = _per_matrix(lambda m: [np.linalg.solve(m[:, :n], m[:, n:])], stacked,
                       [rhs.shape[-2:]], [np.result_type(a, rhs)])
    return x[..., 0] if vector else x


def _solve_rule(a, b, vector=False):
    dtype = _inexact(solve, a)
    a = _matrices("solve", a)
    b = array_operand("solve", "b", b)
    if b.ndim < (1 if vector else 2):
        raise ShapeError(f"solve(): b must be at least {1 if vector else 2}-D, got {b}")
    rhs = b.ones[:-1] if vector else b.ones[:-2]
    batch = broadcast_dims(a.ones[:-2], rhs)
    return ArrayType(dtype, batch + ((a.ones[-1],) if vector else (a.ones[-1], b.ones[-1])),
                     False)


solve = Op("linalg_solve", _solve, _solve_rule, operands=("a", "b"), promote=("a", "b"),
           inexact=True, static=("vector",))


# --- the decompositions (not differentiable as ops) ----------------------------------------

def _square(fn, a):
    a = _matrices(fn, a)
    if a.ones[-1] != a.ones[-2]:
        raise ShapeError(f"{fn}(): the matrices must be square, got {a}")
    return a


def _cholesky(a):
    a = np.asarray(a)
    return _per_matrix(lambda m: [np.linalg.cholesky(m)], a, [a.shape[-2:]], [a.dtype])[0]


def _cholesky_rule(a):
    return ArrayType(_inexact(cholesky, a), _square("cholesky", a).ones, False)


def _eigh(a):
    a = np.asarray(a)
    n = a.shape[-1]
    return tuple(_per_matrix(np.linalg.eigh, a, [(n,), (n, n)], [real_dtype(a.dtype), a.dtype]))


def _eigh_rule(a):
    dtype = _inexact(eigh, a)
    a = _square("eigh", a)
    return SequenceType((ArrayType(real_dtype(dtype), a.ones[:-1], False),
                         ArrayType(dtype, a.ones, False)), "tuple")


def _complex(dtype):
    return _COMPLEX.get(np.dtype(dtype), np.dtype(dtype))


def _eig(a):
    a = np.asarray(a)
    n, dtype = a.shape[-1], _complex(a.dtype)
    return tuple(_per_matrix(np.linalg.eig, a, [(n,), (n, n)], [dtype, dtype]))


def _eig_rule(a):
    dtype = _complex(_inexact(eig, a))
    a = _square("eig", a)
    return SequenceType((ArrayType(dtype, a.ones[:-1], False), ArrayType(dtype, a.ones, False)),
                        "tuple")


def _svd(a, full_matrices=True):
    a = np.asarray(a)
    m, n = a.shape[-2:]
    k = min(m, n)
    u_cols, v_rows = (m, n) if full_matrices else (k, k)
    return tuple(_per_matrix(lambda x: np.linalg.svd(x, full_matrices=full_matrices), a,
                             [(m, u_cols), (k,), (v_rows, n)],
                             [a.dtype, real_dtype(a.dtype), a.dtype]))


def _svd_rule(a, full_matrices=True):
    dtype = _inexact(svd, a)
    a = _matrices("svd", a)
    batch, m1, n1 = a.ones[:-2], a.ones[-2], a.ones[-1]
    k1 = m1 or n1  # min(m, n) == 1 exactly when m or n is
    u = batch + (m1, m1 if full_matrices else k1)
    v = batch + (n1 if full_matrices else k1, n1)
    return SequenceType((ArrayType(dtype, u, False), ArrayType(real_dtype(dtype), batch + (k1,),
                                                               False),
                         ArrayType(dtype, v, False)), "tuple")


def _qr(a, complete=False):
    a = np.asarray(a)
    m, n = a.shape[-2:]
    k = m if complete else min(m, n)
    mode = "complete" if complete else "reduced"
    return tuple(_per_matrix(lambda x: np.linalg.qr(x, mode), a, [(m, k), (k, n)],
                             [a.dtype, a.dtype]))


def _qr_rule(a, complete=False):
    dtype = _inexact(qr, a)
    a = _matrices("qr", a)
    batch, m1, n1 = a.ones[:-2], a.ones[-2], a.ones[-1]
    k1 = m1 if complete else (m1 or n1)
    return SequenceType((ArrayType(dtype, batch + (m1, k1), False),
                         ArrayType(dtype, batch + (k1, n1), False)), "tuple")


def _det(a):
    a = np.asarray(a)
    return np.asarray(np.linalg.det(a), a.dtype)


def _det_rule(a):
    return ArrayType(_inexact(det, a), _square("det", a).ones[:-2], False)


def _slogdet(a):
    a = np.asarray(a)
    sign, logabs = np.linalg.slogdet(a)
    return np.asarray(sign, a.dtype), np.asarray(logabs, real_dtype(a.dtype))


def _slogdet_rule(a):
    dtype = _inexact(slogdet, a)
    batch = _square("slogdet", a).ones[:-2]
    return SequenceType((ArrayType(dtype, batch, False),
                         ArrayType(real_dtype(dtype), batch, False)), "tuple")


def _decomposition(name, impl, rule, static=()):
    op = Op(name, impl, rule, operands=("a",), promote=("a",), inexact=True, static=static,
            differentiable=False)
    del NAMESPACE[name]  # reached through astjax.numpy.linalg, not as jnp.<name>
    return op


cholesky = _decomposition("linalg_cholesky", _cholesky, _cholesky_rule)
eigh = _decomposition("linalg_eigh", _eigh, _eigh_rule)
eig = _decomposition("linalg_eig", _eig, _eig_rule)
svd = _decomposition("linalg_svd", _svd, _svd_rule, static=("full_matrices",))
qr = _decomposition("linalg_qr", _qr, _qr_rule, static=("complete",))
det = _decomposition("linalg_det", _det, _det_rule)
slogdet = _decomposition("linalg_slogdet", _slogdet, _slogdet_rule)
del NAMESPACE["linalg_solve"]
