"""``lax.linalg``. The solvers that need no decomposition op (``triangular_solve``,
``tridiagonal_solve``, ``lu``, ``lu_pivots_to_permutation``) are plain ``astjax.numpy`` code
(loops over a run-time size in ``fori_loop``/``scan``), so jit on both backends, grad and
vmap need no new rules; ``cholesky``, ``eigh``, ``qr``, ``svd`` and ``eig`` are
``jnp.linalg``'s in lax's forms; ``hessenberg``, ``schur`` and ``tridiagonal`` are LAPACK's
(``lapack.py``). Each works on a batch of matrices (leading axes), as JAX's.
"""
import astjax.numpy as jnp

from ..random.checks import static_helper  # evaluated while generating code
from .control_flow import fori_loop, scan
from .lapack import floating
from .lapack import hessenberg, schur, tridiagonal  # noqa: F401 (lax.linalg's names)




def _lower_solve(a, b, unit_diagonal):
    """``x`` with ``a @ x == b`` for the lower triangle of ``a`` ([..., m, m]), b [..., m, n]:
    forward substitution, row by row (rows not solved yet are zeros, so a whole row of the
    strictly lower triangle times x is the sum over the solved ones)."""
    strict = jnp.tril(a, -1)

    def step(i, x):
        s = jnp.einsum("...k,...kn->...n", strict[..., i, :], x)
        r = b[..., i, :] - s
        if not unit_diagonal:
            r = r / a[..., i, i][..., None]
        return x.at[..., i, :].set(r)

    return fori_loop(0, a.shape[-1], step, jnp.zeros_like(b))


def triangular_solve(a, b, *, left_side=False, lower=False, transpose_a=False,
                     conjugate_a=False, unit_diagonal=False):
    """``x`` with ``op(a) @ x == b`` (``left_side``) or ``x @ op(a) == b``, ``op(a)``: the
    ``lower`` (else upper) triangle of ``a``, transposed if ``transpose_a``, conjugated if
    ``conjugate_a``; the other triangle is not read, nor the diagonal if ``unit_diagonal``."""
    a, b = jnp.asarray(a), jnp.asarray(b)
    floating("triangular_solve", a.dtype, 0)
    floating("triangular_solve", b.dtype, 1)
    dtype = jnp.result_type(a, b)
    a, b = a.astype(dtype), b.astype(dtype)
    if conjugate_a:
        a = jnp.conj(a)
    if transpose_a:
        a = jnp.swapaxes(a, -1, -2)
        lower = not lower
    if not left_side:  # x a = b is a^T x^T = b^T
        a = jnp.swapaxes(a, -1, -2)
        b = jnp.swapaxes(b, -1, -2)
        lower = not lower
    if not lower:  # reversing rows and columns makes an upper triangle lower
        a = jnp.flip(a, (-2, -1))
        b = jnp.flip(b, -2)
    x = _lower_solve(a, b, unit_diagonal)
    if not lower:
        x = jnp.flip(x, -2)
    if not left_side:
        x = jnp.swapaxes(x, -1, -2)
    return x


def tridiagonal_solve(dl, d, du, b, *, perturb_singular=False):
    """``x`` with ``T @ x == b``, T tridiagonal: sub-diagonal ``dl`` (``dl[..., 0]`` unused),
    diagonal ``d``, super-diagonal ``du`` (``du[..., -1]`` unused), each [..., m], b
    [..., m, n]; the Thomas algorithm (no pivoting). ``perturb_singular`` is ignored."""
    dl, d, du, b = jnp.asarray(dl), jnp.asarray(d), jnp.asarray(du), jnp.asarray(b)
    for position, operand in enumerate((dl, d, du, b)):
        floating("tridiagonal_solve", operand.dtype, position)
    dtype = jnp.result_type(dl, d, du, b)
    m = d.shape[-1]
    keep = jnp.arange(m) < m - 1
    du = jnp.where(keep, du, jnp.zeros_like(du))
    lower = jnp.where(jnp.arange(m) > 0, dl, jnp.zeros_like(dl))
    # the diagonals' axis first, for the scans
    dl_, d_, du_ = (jnp.moveaxis(v.astype(dtype), -1, 0) for v in (lower, d, du))
    b_ = jnp.moveaxis(b.astype(dtype), -2, 0)

    def forward(carry, row):
        c_prev, y_prev = carry
        l, di, ui, bi = row
        denom = di - l * c_prev
        c = ui / denom
        y = (bi - l[..., None] * y_prev) / denom[..., None]
        return (c, y), (c, y)

    zero_c = jnp.zeros_like(d_[0])
    _, (c, y) = scan(forward, (zero_c, jnp.zeros_like(b_[0])), (dl_, d_, du_, b_))

    def backward(x_next, row):
        ci, yi = row
        x = yi - ci[..., None] * x_next
        return x, x

    _, x = scan(backward, jnp.zeros_like(b_[0]), (c, y), reverse=True)
    return jnp.moveaxis(x, 0, -2)


@static_helper
def _check_integer(dtype):
    if dtype.kind not in "iu":
        raise TypeError(f"lu_pivots_to_permutation: pivots must be integers, got {dtype}")


def lu_pivots_to_permutation(pivots, permutation_size):
    """The permutation [..., permutation_size] that swapping row ``i`` with row
    ``pivots[..., i]``, for each ``i`` in turn, makes of ``arange(permutation_size)``."""
    pivots = jnp.asarray(pivots)
    _check_integer(pivots.dtype)
    idx = jnp.arange(permutation_size, dtype=jnp.int32)
    perm = jnp.broadcast_to(idx, pivots.shape[:-1] + (permutation_size,))

    def swap(i, perm):
        j = pivots[..., i].astype(jnp.int32)[..., None]
        at_i = perm[..., i][..., None]
        at_j = jnp.sum(jnp.where(idx == j, perm, 0), axis=-1, keepdims=True, dtype=jnp.int32)
        return jnp.where(idx == i, at_j, jnp.where(idx == j, at_i, perm))

    return fori_loop(0, pivots.shape[-1], swap, perm)


def lu(x):
    """``(lu, pivots, permutation)`` of ``x`` ([..., m, n]), as JAX's: partial pivoting
    (the largest magnitude in each column), ``lu`` holding L's strictly lower part (unit
    diagonal) and U, ``pivots`` [..., min(m, n)] int32 (row ``i`` was swapped with
    ``pivots[i]``), ``permutation`` [..., m] int32 (``x[perm] == L @ U``)."""
    a = jnp.asarray(x)
    floating("lu", a.dtype)
    m, n = a.shape[-2], a.shape[-1]
    k_steps = min(m, n)
    rows = jnp.arange(m)
    cols = jnp.arange(n)

    def step(k, state):
        a, pivots = state
        col = jnp.abs(a[..., :, k])
        p = jnp.argmax(jnp.where(rows >= k, col, -1.0), axis=-1).astype(jnp.int32)
        row_k = a[..., k, :]
        row_p = jnp.sum(jnp.where((rows == p[..., None])[..., None], a, 0), axis=-2)
        a = jnp.where((rows == k)[:, None], row_p[..., None, :],
                      jnp.where((rows == p[..., None])[..., None], row_k[..., None, :], a))
        pivot = a[..., k, k]
        below = rows > k
        l = jnp.where(below, a[..., :, k] / pivot[..., None], 0)
        u = jnp.where(cols > k, a[..., k, :], 0)
        a = a - l[..., :, None] * u[..., None, :]
        a = jnp.where(below[:, None] & (cols == k)[None, :], l[..., :, None], a)
        return a, pivots.at[..., k].set(p)

    pivots = jnp.zeros(a.shape[:-2] + (k_steps,), jnp.int32)
    a, pivots = fori_loop(0, k_steps, step, (a, pivots))
    return a, pivots, lu_pivots_to_permutation(pivots, m)


# --- the decompositions: jnp.linalg's (LAPACK ops with JAX's derivatives), in lax's forms ---

@static_helper
def _no_subset(fn, subset_by_index):
    if subset_by_index is not None:
        raise NotImplementedError(f"lax.linalg.{fn}: subset_by_index is not supported")


def cholesky(x, *, symmetrize_input=True):
    """The lower Cholesky factor of ``x`` (symmetrized first, as JAX's); NaN where ``x`` is
    not positive definite."""
    return jnp.linalg.cholesky(x, symmetrize_input=symmetrize_input)


def eigh(x, *, lower=True, symmetrize_input=True, sort_eigenvalues=True,
         subset_by_index=None, implementation=None):
    """``(v, w)``: eigenvectors (columns) then ascending eigenvalues, lax's order (jnp's is
    ``(w, v)``); ``lower`` picks the triangle read when not ``symmetrize_input``;
    ``sort_eigenvalues=False`` and ``implementation`` still give them sorted."""
    _no_subset("eigh", subset_by_index)
    w, v = jnp.linalg.eigh(x, UPLO="L" if lower else "U", symmetrize_input=symmetrize_input)
    return v, w


@static_helper
def _no_pivoting(pivoting):
    if pivoting:
        raise NotImplementedError("lax.linalg.qr: pivoting=True is not supported")


def qr(x, *, pivoting=False, full_matrices=True, use_magma=None):
    """``(q, r)``: complete (``full_matrices``) or reduced; no column pivoting."""
    _no_pivoting(pivoting)
    floating("qr", jnp.asarray(x).dtype)
    return jnp.linalg.qr(x, mode="complete" if full_matrices else "reduced")


def svd(x, *, full_matrices=True, compute_uv=True, subset_by_index=None, algorithm=None):
    """``(u, s, vh)``, or ``s`` alone without ``compute_uv``; ``algorithm`` is ignored."""
    _no_subset("svd", subset_by_index)
    floating("svd", jnp.asarray(x).dtype)
    return jnp.linalg.svd(x, full_matrices=full_matrices, compute_uv=compute_uv)


def eig(x, *, compute_left_eigenvectors=True, compute_right_eigenvectors=True,
        use_magma=None):
    """``[w, vl, vr]`` as JAX's list (each vector only if asked for): eigenvalues, left
    eigenvectors (``vl[:, j]^H x = w[j] vl[:, j]^H``, from ``x^H``'s eigenvectors, each of
    unit norm), right ones; complex, not differentiable."""
    floating("eig", jnp.asarray(x).dtype)
    w, vr = jnp.linalg.eig(x)
    out = [w]
    if compute_left_eigenvectors:
        vl = jnp.swapaxes(jnp.conj(jnp.linalg.inv(vr)), -1, -2)
        out.append(vl / jnp.linalg.norm(vl, axis=-2, keepdims=True))
    if compute_right_eigenvectors:
        out.append(vr)
    return out
