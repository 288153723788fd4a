"""``astjax.numpy.linalg``: as ``jax.numpy.linalg``.

Plain functions written in ``astjax.numpy`` (as ``astjax.nn``): the compiler reads their
source like user code, so ``jnp.linalg.norm(x)`` works eagerly and in transformed code.
Solving and decomposing go through the ops of ``_src/ops/decompositions.py`` and the
custom_jvp rules of ``_linalg_decomp.py``.
"""
import astjax.numpy as jnp

from .._src.random.checks import static_helper  # evaluated while generating code
from ._sorting import _normalize_axis

__all__ = ["norm", "solve", "inv", "det", "slogdet", "cholesky", "eigh", "eigvalsh", "eig",
           "eigvals", "svd", "svdvals", "qr", "pinv", "lstsq", "matrix_rank", "matrix_power",
           "cond", "tensorinv", "tensorsolve", "multi_dot", "outer", "cross", "matmul",
           "tensordot", "vecdot", "diagonal", "trace", "matrix_transpose", "matrix_norm",
           "vector_norm"]

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
    if isinstance(ord, bool) or ord not in (1, -1, 2, -2, "nuc", _INF, -_INF):
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


def _vector_norm(x, p, axis, keepdims):
    """The ``p``-norm of the vectors along ``axis`` (None, an int or a tuple: the vector
    of all those axes' elements) of an inexact ``x``."""
    if p == 2:
        return jnp.sqrt(jnp.sum(_abs_squared(x), axis=axis, keepdims=keepdims))
    if p == _INF:
        return jnp.max(jnp.abs(x), axis=axis, keepdims=keepdims)
    if p == -_INF:
        return jnp.min(jnp.abs(x), axis=axis, keepdims=keepdims)
    if p == 0:
        return jnp.sum(x != 0, axis=axis, keepdims=keepdims).astype(jnp.abs(x).dtype)
    if p == 1:
        return jnp.sum(jnp.abs(x), axis=axis, keepdims=keepdims)
    return jnp.sum(jnp.abs(x) ** p, axis=axis, keepdims=keepdims) ** (1.0 / p)


def norm(x, ord=None, axis=None, keepdims=False):
    """The vector or matrix norm of ``x``, as ``jnp.linalg.norm``.

    ``axis=None``: the vector norm of a 1-D ``x``, the matrix norm of a 2-D one, and
    with ``ord=None`` the 2-norm of ``x`` flattened, whatever its rank. An int axis:
    vector norms (ord None/2, 1, inf, -inf, 0 or any other number p); a pair of axes:
    matrix norms (ord None/'fro', 1, -1, inf, -inf, and through the singular values 2,
    -2 and 'nuc'). The 2-norm is sqrt(sum(|x|**2)), as in JAX, so its
    gradient at x = 0 is NaN there too."""
    x = jnp.asarray(x)
    if not _is_inexact(x.dtype):
        x = x * 1.0  # ints and bools: the default float (a weak 1.0), as JAX promotes
    kind, p, axes = _plan(ord, axis, x.ndim)
    if kind == "all":
        return jnp.sqrt(jnp.sum(_abs_squared(x), keepdims=keepdims))
    if kind == "vector":
        return _vector_norm(x, p, axes[0], keepdims)
    row, col = axes
    m = p
    if m == "fro":
        return jnp.sqrt(jnp.sum(_abs_squared(x), axis=axes, keepdims=keepdims))
    if m == 2 or m == -2 or m == "nuc":
        s = svdvals(jnp.moveaxis(x, (row, col), (-2, -1)))
        if m == 2:
            out = jnp.max(s, axis=-1)
        elif m == -2:
            out = jnp.min(s, axis=-1)
        else:
            out = jnp.sum(s, axis=-1)
        if keepdims:
            return jnp.expand_dims(out, (min(row, col), max(row, col)))
        return out
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


# --- solving and decomposing (the ops and rules: _linalg_decomp.py) ---------------------------

def _inexact(x):
    x = jnp.asarray(x)
    if not _is_inexact(x.dtype):
        return x * 1.0  # ints and bools: the default float, as JAX promotes
    return x


@static_helper
def _check_matrix(fn, ndim):
    if ndim < 2:
        raise ValueError(f"{fn}: argument must have at least 2 dimensions, got {ndim}")
    return ndim


def _check_square(a, before, after=""):
    """JAX's error, ``before + str(shape) + after``, for matrices that are not square (in
    compiled code sizes are run-time values: the generated code raises it)."""
    if a.shape[-1] != a.shape[-2]:
        raise ValueError(f"{before}{a.shape}{after}")


def _symmetrize(a):
    return (a + _decomp._H(a)) / 2


def solve(a, b):
    """x with a @ x == b: ``b`` of shape (n,) is one vector (batched over a's leading
    dims), of shape (..., n, k) a stack of matrices; the batch dims broadcast. A singular
    matrix gives NaN, as JAX's gives NaN or inf."""
    a, b = _inexact(a), _inexact(b)
    _check_matrix("solve", a.ndim)
    return _decomp._solve_op(a, b, b.ndim == 1)


def inv(a):
    a = _inexact(a)
    _check_matrix("inv", a.ndim)
    _check_square(a, "Argument to inv must have shape [..., n, n], got ", ".")
    eye = jnp.broadcast_to(jnp.eye(a.shape[-1], dtype=a.dtype), a.shape)
    return _decomp._solve_op(a, eye, False)


def det(a):
    a = _inexact(a)
    _check_matrix("det", a.ndim)
    _check_square(a, "Argument to _det() must have shape [..., n, n], got ")
    return _decomp.det(a)


def slogdet(a, *, method=None):
    """(sign, log|det|); ``method`` is accepted as JAX's ("lu" or "qr") and both give
    LAPACK's LU result."""
    a = _inexact(a)
    _check_matrix("slogdet", a.ndim)
    _check_square(a, "Argument to slogdet() must have shape [..., n, n], got ")
    _check_method(method)
    return _decomp.slogdet_pair(a)


@static_helper
def _check_method(method):
    if method not in (None, "lu", "qr"):
        raise ValueError(f"Unknown slogdet method '{method}'. Supported methods are 'lu' "
                         f"(`None`), and 'qr'.")
    return method


def cholesky(a, *, upper=False, symmetrize_input=True):
    a = _inexact(a)
    _check_matrix("cholesky", a.ndim)
    if symmetrize_input:
        a = _symmetrize(a)
    low = _decomp.cholesky_lower(a)
    if upper:
        return _decomp._H(low)
    return low


@static_helper
def _check_uplo(uplo):
    if uplo not in (None, "L", "U"):
        raise ValueError(f"UPLO must be 'L' or 'U', got {uplo!r}")
    return uplo


def _hermitian(a, uplo, symmetrize_input):
    """What eigh decomposes: a symmetrized (JAX's default), else LAPACK reads one triangle
    (the lower one of a, or of a's conjugate transpose for "U") while the derivative sees
    the whole matrix, as in JAX."""
    if symmetrize_input:
        return _symmetrize(a)
    if uplo == "U":
        return _decomp._H(a)
    return a


def eigh(a, UPLO=None, symmetrize_input=True):
    """(eigenvalues ascending, eigenvectors as columns) of a Hermitian matrix."""
    a = _inexact(a)
    _check_matrix("eigh", a.ndim)
    _check_uplo(UPLO)
    return _decomp.eigh_pair(_hermitian(a, UPLO, symmetrize_input))


def eigvalsh(a, UPLO="L", *, symmetrize_input=True):
    return eigh(a, UPLO, symmetrize_input)[0]


def eig(a):
    """(eigenvalues, eigenvectors), complex, in LAPACK's order (as JAX on CPU). Not
    differentiable (as JAX's without ``enable_eigvec_derivs``): use ``eigvals``."""
    a = _inexact(a)
    _check_matrix("eig", a.ndim)
    _check_square(a, "The input to eig must be a square matrix. Got shape ", ".")
    return _decomp.eig_pair(a)


def eigvals(a):
    """The eigenvalues, complex, in LAPACK's order; differentiable (JAX's rule)."""
    a = _inexact(a)
    _check_matrix("eigvals", a.ndim)
    _check_square(a, "The input to eig must be a square matrix. Got shape ", ".")
    return _decomp.eigenvalues(a)


def svd(a, full_matrices=True, compute_uv=True, hermitian=False, subset_by_index=None):
    """(U, S, Vh) with a == U @ (S[..., None] * Vh) for full_matrices=False; S alone for
    compute_uv=False. ``hermitian`` is accepted and computes the general SVD."""
    a = _inexact(a)
    _check_matrix("svd", a.ndim)
    _no_subset(subset_by_index)
    if not compute_uv:
        return _decomp.singular_values(a)
    if full_matrices:
        return _decomp.svd_full(a)
    return _decomp.svd_reduced(a)


@static_helper
def _no_subset(subset_by_index):
    if subset_by_index is not None:
        raise NotImplementedError("svd(): subset_by_index is not supported by astjax")
    return None


def svdvals(x):
    return svd(x, compute_uv=False)


@static_helper
def _qr_mode(mode):
    if mode not in ("reduced", "complete", "r"):
        raise ValueError(f"Unsupported QR decomposition mode '{mode}'" + (
            " (astjax has no mode='raw')" if mode == "raw" else ""))
    return mode


def qr(a, mode="reduced"):
    a = _inexact(a)
    _check_matrix("qr", a.ndim)
    if _qr_mode(mode) == "complete":
        return _decomp.qr_complete(a)
    if mode == "r":
        return _decomp.qr_reduced(a)[1]
    return _decomp.qr_reduced(a)


def pinv(a, rtol=None, hermitian=False, *, rcond=None):
    """The Moore-Penrose pseudo-inverse through the SVD (singular values up to
    rtol * the largest count as zero), with JAX's derivative (Golub and Pereyra)."""
    a = _inexact(a)
    _check_matrix("pinv", a.ndim)
    if rcond is not None:
        rtol = rcond
    if rtol is None:
        rtol = 10.0 * max(a.shape[-2], a.shape[-1]) * jnp.finfo(a.dtype).eps
    return _decomp.pinv_with(a, jnp.real(jnp.asarray(rtol, dtype=a.dtype)))


def matrix_rank(M, rtol=None, *, tol=None):
    M = _inexact(M)
    _check_matrix("matrix_rank", M.ndim)
    s = svd(M, compute_uv=False)
    if tol is None:
        tol = rtol
    if tol is None:
        tol = s[..., 0] * max(M.shape[-2], M.shape[-1]) * jnp.finfo(s.dtype).eps
        return jnp.sum(s > jnp.expand_dims(tol, -1), axis=-1)
    return jnp.sum(s > jnp.expand_dims(jnp.asarray(tol) * s[..., 0], -1), axis=-1)


def matrix_power(a, n):
    """a @ a @ ... (n times) by repeated squaring; a negative n inverts first."""
    a = jnp.asarray(a)
    _check_matrix("matrix_power", a.ndim)
    if n < 0:
        a = inv(a)
    result = jnp.broadcast_to(jnp.eye(a.shape[-1], dtype=a.dtype), a.shape)
    k = abs(n)
    while k > 0:
        if k % 2 == 1:
            result = jnp.matmul(result, a)
        a = jnp.matmul(a, a)
        k = k // 2
    return result


def cond(x, p=None):
    """The condition number: largest over smallest singular value for p None or 2,
    the smallest over the largest for -2, else norm(x, p) * norm(inv(x), p)."""
    x = _inexact(x)
    _check_matrix("cond", x.ndim)
    if p is None or p == 2:
        s = svd(x, compute_uv=False)
        return s[..., 0] / s[..., -1]
    if p == -2:
        s = svd(x, compute_uv=False)
        return s[..., -1] / s[..., 0]
    return norm(x, p, axis=(-2, -1)) * norm(inv(x), p, axis=(-2, -1))


def lstsq(a, b, rcond=None, *, numpy_resid=False):
    """(x, residuals, rank, singular values), as JAX's: a 2-D, b 1-D or 2-D; singular
    values up to rcond * the largest (default eps * max(m, n)) count as zero; residuals
    are always computed (JAX's default)."""
    a, b = _inexact(a), _inexact(b)
    _check_lstsq(a.ndim, b.ndim, numpy_resid)
    b2 = b
    if b.ndim == 1:
        b2 = jnp.expand_dims(b, -1)
    u, s, vt = svd(a, full_matrices=False)
    if rcond is None:
        cut = jnp.finfo(s.dtype).eps * max(a.shape[0], a.shape[1]) * s[0]
    else:
        cut = jnp.where(rcond < 0, jnp.finfo(s.dtype).eps, rcond) * s[0]
    mask = (s > 0) & (s >= cut)
    safe = jnp.where(mask, s, 1.0)
    s_inv = jnp.expand_dims(jnp.where(mask, 1.0 / safe, 0.0).astype(a.dtype), -1)
    x = jnp.matmul(_decomp._H(vt), s_inv * jnp.matmul(_decomp._H(u), b2))
    resid = norm(b2 - jnp.matmul(a, x), axis=0) ** 2
    if b.ndim == 1:
        x = x[:, 0]
    return x, resid, jnp.sum(mask), s


@static_helper
def _check_lstsq(a_ndim, b_ndim, numpy_resid):
    if a_ndim != 2:
        raise TypeError(f"{a_ndim}-dimensional array given. Array must be two-dimensional")
    if b_ndim not in (1, 2):
        raise TypeError(f"{b_ndim}-dimensional array given. Array must be one or "
                        f"two-dimensional")
    if numpy_resid:
        raise NotImplementedError("lstsq(numpy_resid=True): astjax returns JAX's default "
                                  "full residuals only")
    return None


def tensorinv(a, ind=2):
    a = jnp.asarray(a)
    out_shape = a.shape[ind:] + a.shape[:ind]
    rows = 1
    for d in a.shape[:ind]:
        rows = rows * d
    return jnp.reshape(inv(jnp.reshape(a, (rows, -1))), out_shape)


def tensorsolve(a, b, axes=None):
    a, b = jnp.asarray(a), jnp.asarray(b)
    if axes is not None:
        a = jnp.moveaxis(a, axes, tuple(range(a.ndim - len(axes), a.ndim)))
    out_shape = a.shape[b.ndim:]
    return jnp.reshape(solve(jnp.reshape(a, (b.size, -1)), jnp.ravel(b)), out_shape)


def multi_dot(arrays, *, precision=None):
    """Products left to right (no search for the cheapest order)."""
    out = arrays[0]
    for x in arrays[1:]:
        out = jnp.matmul(out, x)
    return out


def outer(x1, x2, /):
    return jnp.outer(x1, x2)


def cross(x1, x2, /, *, axis=-1):
    return jnp.cross(x1, x2, axis=axis)


def matmul(x1, x2, /, *, precision=None, preferred_element_type=None):
    return jnp.matmul(x1, x2, precision=precision, preferred_element_type=preferred_element_type)


def tensordot(x1, x2, /, *, axes=2, precision=None, preferred_element_type=None):
    return jnp.tensordot(x1, x2, axes, precision=precision,
                         preferred_element_type=preferred_element_type)


def vecdot(x1, x2, /, *, axis=-1, precision=None, preferred_element_type=None):
    return jnp.vecdot(x1, x2, axis=axis, precision=precision,
                      preferred_element_type=preferred_element_type)


def diagonal(x, /, *, offset=0):
    return jnp.diagonal(x, offset, axis1=-2, axis2=-1)


def trace(x, /, *, offset=0, dtype=None):
    return jnp.trace(x, offset, axis1=-2, axis2=-1, dtype=dtype)


def matrix_transpose(x, /):
    return jnp.matrix_transpose(x)


def matrix_norm(x, /, *, keepdims=False, ord="fro"):
    return norm(x, ord=ord, axis=(-2, -1), keepdims=keepdims)


@static_helper
def _vector_norm_ord(ord):
    return _vector_ord(ord)


def vector_norm(x, /, *, axis=None, keepdims=False, ord=2):
    """The vector norm over ``axis``, as JAX's: a tuple of axes (or None, all of them) is
    one vector of their elements, never a matrix."""
    x = jnp.asarray(x)
    if not _is_inexact(x.dtype):
        x = x * 1.0  # as norm: the default float
    return _vector_norm(x, _vector_norm_ord(ord), axis, keepdims)


from . import _linalg_decomp as _decomp  # noqa: E402
