"""astjax.numpy.linalg: values against NumPy (eagerly and under jit, stacks of matrices,
dtypes), JAX's NaN for failed factorizations, derivatives against finite differences and
JAX 0.10.2's values (literals from jax.grad with 64-bit types on), vmap, and one Numba
program per group of kernels."""
import numpy as np
import pytest

import astjax
import astjax.numpy as jnp
from astjax._src.errors import UserCodeError
from astjax.test_util import check_grads

L = jnp.linalg
R = np.random.default_rng(0)
A = R.normal(size=(4, 4))
SPD = A @ A.T + 4 * np.eye(4)
STACK = R.normal(size=(2, 3, 4, 4))
TALL = R.normal(size=(5, 3))
B = R.normal(size=(4,))
BM = R.normal(size=(4, 2))


def _both(fn, *args):
    """fn eagerly and under jit, as NumPy trees."""
    return fn(*args), astjax.jit(fn)(*args)


def _close(got, want, atol=1e-5):
    """A result (or tuple of results) against NumPy's, leaf by leaf, shapes included."""
    got = list(got) if isinstance(got, tuple) else [got]
    want = list(want) if isinstance(want, tuple) else [want]
    assert len(got) == len(want)
    for g, w in zip(got, want):
        g, w = np.asarray(g), np.asarray(w)
        assert g.shape == w.shape, (g.shape, w.shape)
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=atol)


# --- values --------------------------------------------------------------------------------

VALUES = {
    "solve_vector": (lambda a: L.solve(a, B), lambda a: np.linalg.solve(a, B), A),
    "solve_matrix": (lambda a: L.solve(a, BM), lambda a: np.linalg.solve(a, BM), A),
    "solve_stack": (lambda a: L.solve(a, STACK[0]), lambda a: np.linalg.solve(a, STACK[0]),
                    STACK),
    "inv": (L.inv, np.linalg.inv, STACK),
    "det": (L.det, np.linalg.det, STACK),
    "slogdet": (L.slogdet, lambda a: tuple(np.linalg.slogdet(a)), STACK),
    "cholesky": (L.cholesky, np.linalg.cholesky, SPD),
    "cholesky_upper": (lambda a: L.cholesky(a, upper=True),
                       lambda a: np.linalg.cholesky(a).T, SPD),
    "eigvalsh": (L.eigvalsh, np.linalg.eigvalsh, SPD),
    "svdvals": (L.svdvals, lambda a: np.linalg.svd(a, compute_uv=False), STACK),
    "svd_reconstructs": (lambda a: (lambda u, s, vt: u @ (s[..., None] * vt))(
        *L.svd(a, full_matrices=False)), lambda a: a, TALL),
    "svd_full_orthogonal": (lambda a: L.svd(a)[0].T @ L.svd(a)[0], lambda a: np.eye(5), TALL),
    "eigh_reconstructs": (lambda a: (lambda w, v: (v * w) @ v.T)(*L.eigh(a)), lambda a: a,
                          SPD),
    "qr_reconstructs": (lambda a: (lambda q, r: q @ r)(*L.qr(a)), lambda a: a, TALL),
    "qr_r": (lambda a: jnp.abs(L.qr(a, mode="r")), lambda a: np.abs(np.linalg.qr(a, "r")),
             TALL),
    "qr_complete_shapes": (lambda a: jnp.array([s for x in L.qr(a, "complete")
                                                for s in x.shape]),
                           lambda a: np.array([5, 5, 5, 3]), TALL),
    "pinv": (L.pinv, np.linalg.pinv, TALL),
    "matrix_rank": (L.matrix_rank, np.linalg.matrix_rank, TALL @ np.diag([1.0, 1.0, 0.0])),
    "cond": (L.cond, np.linalg.cond, A),
    "cond_fro": (lambda a: L.cond(a, "fro"), lambda a: np.linalg.cond(a, "fro"), A),
    "matrix_power": (lambda a: L.matrix_power(a, 5), lambda a: np.linalg.matrix_power(a, 5), A),
    "matrix_power_negative": (lambda a: L.matrix_power(a, -2),
                              lambda a: np.linalg.matrix_power(a, -2), A),
    "lstsq": (lambda a: L.lstsq(a, TALL[:, 0] + 1.0)[:2],
              lambda a: tuple(np.linalg.lstsq(a, TALL[:, 0] + 1.0)[:2]), TALL),
    "norm_2": (lambda a: L.norm(a, 2), lambda a: np.linalg.norm(a, 2), TALL),
    "norm_nuc_axes": (lambda a: L.norm(a, "nuc", axis=(3, 1), keepdims=True),
                      lambda a: np.linalg.norm(a, "nuc", axis=(3, 1), keepdims=True), STACK),
    "tensorinv": (lambda a: L.tensorinv(jnp.reshape(a, (4, 2, 2)), ind=1),
                  lambda a: np.linalg.tensorinv(a.reshape(4, 2, 2), ind=1), A),
    "tensorsolve": (lambda a: L.tensorsolve(jnp.reshape(a, (2, 2, 4)), jnp.reshape(B, (2, 2))),
                    lambda a: np.linalg.tensorsolve(a.reshape(2, 2, 4), B.reshape(2, 2)), A),
    "multi_dot": (lambda a: L.multi_dot([B, a, a, BM]),
                  lambda a: np.linalg.multi_dot([B, a, a, BM]), A),
    "vector_norm": (lambda a: L.vector_norm(a, ord=1, keepdims=True),
                    lambda a: np.sum(np.abs(a), keepdims=True), STACK),
    # a tuple axis is one vector of those axes' elements, as in JAX (not a matrix norm)
    "vector_norm_axes": (lambda a: L.vector_norm(a, ord=3, axis=(0, 1)),
                         lambda a: np.linalg.vector_norm(a, ord=3, axis=(0, 1)), STACK),
    "vector_norm_axes_inf": (lambda a: L.vector_norm(a, ord=-np.inf, axis=(3, 0, 1),
                                                     keepdims=True),
                             lambda a: np.linalg.vector_norm(a, ord=-np.inf, axis=(3, 0, 1),
                                                             keepdims=True), STACK),
    "vector_norm_2": (lambda a: L.vector_norm(a, axis=(-1, 1)),
                      lambda a: np.linalg.vector_norm(a, axis=(-1, 1)), STACK),
}


@pytest.mark.parametrize("name", sorted(VALUES))
def test_values_match_numpy(name, x64):
    fn, want, arg = VALUES[name]
    for got in _both(fn, arg):
        _close(got, want(arg), atol=1e-9)


def test_eig_matches_numpy_and_is_complex():
    a = A.astype(np.float32)
    w, v = L.eig(a)
    assert w.dtype == np.complex64 and v.dtype == np.complex64
    np.testing.assert_allclose(np.asarray(a @ v), np.asarray(v * w), atol=1e-4)
    got = np.asarray(L.eigvals(a))
    for want in np.linalg.eigvals(a):  # the same set, whatever the order
        assert np.min(np.abs(got - want)) < 1e-4


def test_dtypes_follow_jax():
    """float32 stays float32, an integer matrix becomes float32, eigh's and svd's values
    are real for complex input."""
    assert L.inv(A.astype(np.float32)).dtype == np.float32
    assert L.det(np.array([[2, 1], [1, 3]])).dtype == np.float32
    np.testing.assert_allclose(L.det(np.array([[2, 1], [1, 3]])), 5.0, rtol=1e-6)
    herm = (A + 1j * A.T).astype(np.complex64)
    herm = herm + herm.conj().T
    w, v = L.eigh(herm)
    assert w.dtype == np.float32 and v.dtype == np.complex64
    np.testing.assert_allclose(w, np.linalg.eigvalsh(herm), rtol=1e-4, atol=1e-4)
    assert L.svd(herm, compute_uv=False).dtype == np.float32


def test_failed_factorizations_give_nan_as_jax():
    """NumPy raises LinAlgError; JAX returns NaN (inf for some solves): astjax gives NaN
    for that matrix only, eagerly and under jit."""
    singular = np.stack([np.ones((3, 3)), np.eye(3)])
    for solve in (L.solve, astjax.jit(L.solve)):
        x = np.asarray(solve(singular, np.ones((2, 3, 1))))
        assert np.isnan(x[0]).all() and np.allclose(x[1], 1.0)
    chol = np.asarray(astjax.jit(L.cholesky)(-np.eye(2)))
    assert np.isnan(chol).all()


def test_eigenvectors_are_not_differentiated_and_matrices_must_be_square():
    """As JAX: eig's derivative is refused (eigvals has one); a matrix that is not square
    is JAX's ValueError, eagerly and in compiled code (it gave NaN)."""
    for transform in (astjax.grad, astjax.jacfwd, astjax.jacrev):  # (jacfwd: the refusal,
        with pytest.raises(NotImplementedError, match="eigvals") as info:  # not "len() of ?")
            transform(lambda a: jnp.sum(jnp.real(L.eig(a)[0])))(A)
        assert "test_linalg.py" in str(info.value)  # the user's line, not astjax's
    wide = np.ones((2, 3))
    for fn, match in ((L.eig, "input to eig must be a square"), (L.eigvals, "square"),
                      (L.inv, r"inv must have shape \[..., n, n\], got \(2, 3\)"),
                      (L.det, "_det"), (L.slogdet, "slogdet")):
        for f in (fn, astjax.jit(fn)):
            with pytest.raises(ValueError, match=match):
                f(wide)


def test_solve_shapes_and_errors():
    with pytest.raises((ValueError, UserCodeError), match="at least 2"):
        L.solve(B, B)
    with pytest.raises(Exception, match="solve"):
        L.solve(A, np.ones(3))
    x = L.solve(np.stack([A, 2 * A]), B)  # one vector, a stack of matrices
    np.testing.assert_allclose(x, np.stack([np.linalg.solve(A, B), np.linalg.solve(A, B) / 2]),
                               rtol=1e-5, atol=1e-6)


# --- derivatives ---------------------------------------------------------------------------

DERIVATIVES = {
    "solve": (lambda a, b: jnp.sum(jnp.sin(L.solve(a, b))), (A, BM)),
    "solve_vector_batched": (lambda a, b: jnp.sum(L.solve(a, b) ** 2),
                             (STACK[0] + 4 * np.eye(4), B)),
    "inv": (lambda a: jnp.sum(L.inv(a) * A), (A,)),
    "det": (L.det, (A,)),
    "slogdet": (lambda a: L.slogdet(a)[1], (A,)),
    "cholesky": (lambda a: jnp.sum(L.cholesky(a) * A), (SPD,)),
    "eigh": (lambda a: jnp.sum(L.eigh(a)[0] * jnp.arange(4.0)) + L.eigh(a)[1][0, 0] ** 2,
             (SPD,)),
    "svd": (lambda a: jnp.sum(L.svd(a, full_matrices=False)[1] * jnp.arange(3.0))
            + L.svd(a, full_matrices=False)[0][1, 0] ** 2, (TALL,)),
    "svd_wide": (lambda a: L.svd(a, full_matrices=False)[2][0, 1] ** 2, (TALL.T,)),
    "qr": (lambda a: jnp.sum(L.qr(a)[0][:3] * L.qr(a)[1]), (TALL,)),
    "qr_wide": (lambda a: jnp.sum(L.qr(a)[1] ** 2 * TALL.T), (TALL.T,)),
    "pinv": (lambda a: jnp.sum(L.pinv(a) * TALL.T), (TALL,)),
    "pinv_wide": (lambda a: jnp.sum(L.pinv(a) ** 3), (TALL.T,)),
    "lstsq": (lambda a: jnp.sum(L.lstsq(a, TALL[:, 1])[0] ** 2), (TALL,)),
    "norm_2": (lambda a: L.norm(a, 2), (TALL,)),
    "matrix_power": (lambda a: jnp.sum(L.matrix_power(a, 3)), (A,)),
    "eigvals": (lambda a: jnp.sum(jnp.real(L.eigvals(a)) * jnp.arange(4.0))
                + jnp.prod(jnp.imag(L.eigvals(a)) + 1.0), (A,)),
}


# second derivatives cost seconds of generation each: checked for the rules that others
# are written with (solve) and one that differentiates its own rule again (det)
SECOND_ORDER = {"solve", "det"}


@pytest.mark.parametrize("name", sorted(DERIVATIVES))
def test_derivatives_against_finite_differences(name, x64):
    fn, args = DERIVATIVES[name]
    order = 2 if name in SECOND_ORDER else 1
    check_grads(fn, args, order=order, modes=("fwd", "rev"), atol=1e-5, rtol=1e-5)


X3 = np.diag([1.0, 2.0, 3.0]) + np.triu(np.full((3, 3), 0.1), 1)
# jax.grad(f)(X3) with 64-bit types on, JAX 0.10.2: the input symmetrized before the
# decomposition decides these
JAX_GRADS = {
    "eigh_vector": (lambda a: L.eigh(a)[1][0, 0] ** 2, X3,
                    [[-0.00512309, -0.04740208, -0.01046925],
                     [-0.04740208, 0.0046231, 0.00164049],
                     [-0.01046925, 0.00164049, 0.00049999]]),
    "cholesky": (lambda a: jnp.sum(L.cholesky(a) * jnp.arange(9.0).reshape(3, 3)),
                 X3 + 2 * np.eye(3),
                 [[-0.04157229, 0.820908, 1.67342917], [0.820908, 0.97885746, 1.72818657],
                  [1.67342917, 1.72818657, 1.78911164]]),
    "eigvals": (lambda a: jnp.sum(jnp.real(L.eigvals(a)) * jnp.arange(1.0, 4.0)),
                np.array([[2.0, 1.0, 0.3], [0.5, 3.0, 1.0], [0.2, 0.1, 1.5]]),
                [[2.17736631, -0.45867007, -0.05593371], [-0.77434711, 1.39915452, -0.13424545],
                 [-0.44138312, -0.62748941, 2.42347918]]),
}


@pytest.mark.parametrize("name", sorted(JAX_GRADS))
def test_gradients_match_jax(name, x64):
    f, x, want = JAX_GRADS[name]
    for grad in (astjax.grad(f), astjax.jit(astjax.grad(f))):
        np.testing.assert_allclose(np.asarray(grad(x)), want, atol=1e-8)


def test_vmap_keeps_per_example_vectors(x64):
    """Under vmap, b of shape (n,) per example stays a vector: (batch, n) is not read as a
    matrix; each op is one call on the stack (no loop over the examples)."""
    source = astjax.make_source(astjax.vmap(L.det))(STACK[0])
    assert "for " not in source and "linalg_det" in source
    xs = astjax.vmap(L.solve)(STACK[0], np.stack([B, 2 * B, 3 * B]))
    want = np.stack([np.linalg.solve(STACK[0][i], (i + 1) * B) for i in range(3)])
    np.testing.assert_allclose(xs, want, rtol=1e-10)
    shared = astjax.vmap(L.solve, in_axes=(None, 0))(A, np.stack([B, 2 * B]))
    np.testing.assert_allclose(shared, np.stack([np.linalg.solve(A, B)] * 2) * [[1], [2]],
                               rtol=1e-10)
    w, v = astjax.vmap(L.eigh)(STACK[0] + np.swapaxes(STACK[0], 1, 2))
    np.testing.assert_allclose(w, np.linalg.eigvalsh(STACK[0] + np.swapaxes(STACK[0], 1, 2)),
                               rtol=1e-10)
    np.testing.assert_allclose(astjax.jacrev(L.inv)(A), astjax.jacfwd(L.inv)(A), rtol=1e-9)
    dets = astjax.vmap(astjax.grad(L.det))(STACK[0])
    want = np.stack([np.linalg.det(m) * np.linalg.inv(m).T for m in STACK[0]])
    np.testing.assert_allclose(dets, want, rtol=1e-8)


def test_unsymmetrized_eigh_reads_a_triangle_and_differentiates_the_whole_matrix(x64):
    """symmetrize_input=False: LAPACK reads the lower (UPLO "L") or upper triangle; the
    derivative of an eigenvalue is v v^T over the whole matrix."""
    for uplo, want in (("L", np.linalg.eigh(X3, "L")), ("U", np.linalg.eigh(X3, "U"))):
        f = lambda a: L.eigh(a, UPLO=uplo, symmetrize_input=False)[0][2]  # noqa: E731
        np.testing.assert_allclose(f(X3), want[0][2], rtol=1e-12)
        v = want[1][:, 2]
        np.testing.assert_allclose(astjax.grad(f)(X3), np.outer(v, v), atol=1e-10)


# --- the Numba kernels -------------------------------------------------------------------
# Numba compiles np.linalg slowly (seconds per function): two programs, one per group.

def _solvers(a, stack, b):
    return (L.solve(a, b), L.solve(stack, b), L.inv(stack), L.det(a), L.slogdet(stack),
            L.cholesky(a @ a.T + 4.0 * jnp.eye(4)), L.solve(jnp.ones((2, 2)), b[:2]))


def _decompositions(a, tall):
    w, v = L.eigh(a)
    u, s, vt = L.svd(tall, full_matrices=False)
    q, r = L.qr(tall)
    e, ev = L.eig(a)
    return w, v, u, s, vt, q, r, jnp.abs(e), L.svd(a)[0]


@pytest.mark.parametrize("fn,args", [(_solvers, (A, STACK, B)), (_decompositions, (SPD, TALL))],
                         ids=["solvers", "decompositions"])
def test_numba_kernels_match_the_python_backend(fn, args, x64, numba_backend):
    jitted = astjax.jit(fn)
    got = jitted(*args)
    (compiled,) = jitted.cache.values()
    assert compiled.backend == "numba", compiled.fallback_reason
    astjax.config.update("astjax_jit_backend", "python")
    want = astjax.jit(fn)(*args)
    for g, w in zip(astjax.tree_util.tree_leaves(got), astjax.tree_util.tree_leaves(want)):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-9, atol=1e-9,
                                   equal_nan=True)
