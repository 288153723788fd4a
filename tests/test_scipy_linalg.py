"""astjax.scipy.linalg: values against SciPy (eagerly and under jit), derivatives against
JAX 0.10.2's values (literals from jax.grad with 64-bit types on) and finite
differences."""
import numpy as np
import pytest
import scipy.linalg as sl

import astjax
import astjax.numpy as jnp
from astjax.scipy import linalg as L
from astjax.test_util import check_grads

R = np.random.default_rng(1)
A = R.normal(size=(4, 4))
SPD = A @ A.T + 4 * np.eye(4)
B = R.normal(size=4)
BM = R.normal(size=(4, 2))

VALUES = {
    "solve_triangular_upper": (lambda a: L.solve_triangular(a, B),
                               lambda a: sl.solve_triangular(a, B), A),
    "solve_triangular_lower_T": (lambda a: L.solve_triangular(a, BM, trans=1, lower=True),
                                 lambda a: sl.solve_triangular(a, BM, trans=1, lower=True), A),
    "solve_triangular_C_unit": (lambda a: L.solve_triangular(a, B, trans="C",
                                                             unit_diagonal=True),
                                lambda a: sl.solve_triangular(a, B, trans="C",
                                                              unit_diagonal=True), A),
    "cholesky": (L.cholesky, sl.cholesky, SPD),
    "cho_solve_lower": (lambda a: L.cho_solve(L.cho_factor(a, lower=True), BM),
                        lambda a: sl.cho_solve(sl.cho_factor(a, lower=True), BM), SPD),
    "cho_solve_upper": (lambda a: L.cho_solve(L.cho_factor(a), B),
                        lambda a: sl.cho_solve(sl.cho_factor(a), B), SPD),
    "lu_solve": (lambda a: L.lu_solve(L.lu_factor(a), BM), lambda a: sl.lu_solve(
        sl.lu_factor(a), BM), A),
    "lu_solve_T": (lambda a: L.lu_solve(L.lu_factor(a), B, trans=1), lambda a: sl.lu_solve(
        sl.lu_factor(a), B, trans=1), A),
    "lu": (L.lu, sl.lu, A[:, :3]),
    "lu_permute_l": (lambda a: L.lu(a, permute_l=True), lambda a: sl.lu(a, permute_l=True),
                     A),
    "solve_pos": (lambda a: L.solve(a, B, assume_a="pos"),
                  lambda a: sl.solve(a, B, assume_a="pos"), SPD),
    "solve": (lambda a: L.solve(a, BM), lambda a: sl.solve(a, BM), A),
    "expm": (L.expm, sl.expm, A),
    "expm_large_norm": (lambda a: L.expm(30.0 * a), lambda a: sl.expm(30.0 * a), A),
    "expm_stack": (lambda a: L.expm(jnp.stack([a, 0.01 * a])),
                   lambda a: np.stack([sl.expm(a), sl.expm(0.01 * a)]), A),
    "eigh_values": (lambda a: L.eigh(a, eigvals_only=True),
                    lambda a: sl.eigh(a, eigvals_only=True), SPD),
    "qr_full_r": (lambda a: jnp.abs(L.qr(a)[1]), lambda a: np.abs(sl.qr(a)[1]), A[:, :3]),
    "qr_r": (lambda a: jnp.abs(L.qr(a, mode="r")[0]),
             lambda a: np.abs(sl.qr(a, mode="r")[0]), A[:, :3]),
    "block_diag": (lambda a: L.block_diag(a[:2, :3], B, 3.0),
                   lambda a: sl.block_diag(a[:2, :3], B, 3.0), A),
    "toeplitz": (lambda a: L.toeplitz(a[0], a[1, :3]), lambda a: sl.toeplitz(a[0], a[1, :3]),
                 A),
}


@pytest.mark.parametrize("name", sorted(VALUES))
def test_values_match_scipy(name, x64):
    fn, want, arg = VALUES[name]
    want = want(arg)
    want = list(want) if isinstance(want, tuple) else [want]
    for got in (fn(arg), astjax.jit(fn)(arg)):
        got = astjax.tree_util.tree_leaves(got)
        assert len(got) == len(want)
        for g, w in zip(got, want):
            np.testing.assert_allclose(np.asarray(g), w, rtol=1e-9, atol=1e-9)


A3 = np.array([[2.0, 0.5, -0.3], [0.2, 1.5, 0.4], [-0.1, 0.3, 1.2]])
B3 = np.array([1.0, -2.0, 0.5])
# jax.grad(f)(A3), JAX 0.10.2 with 64-bit types on: solve_triangular reads (and
# differentiates) one triangle only
JAX_GRADS = {
    "solve_triangular": (lambda a: jnp.sum(L.solve_triangular(a, B3, lower=True) ** 2),
                         [[-0.39048611, 0.0, 0.0], [1.06805556, -2.99055556, 0.0],
                          [-0.67361111, 1.88611111, -1.08900463]]),
    "cho_solve": (lambda a: jnp.sum(L.cho_solve(L.cho_factor(a @ a.T), B3)),
                  [[-0.72327583, 0.20079695, -0.88790671], [0.87540463, 0.7033972, 1.32552335],
                   [-1.57475456, 0.63230686, -1.88147882]]),
    "expm": (lambda a: jnp.sum(L.expm(a) * a),
             [[24.32596789, 7.50968518, -2.7842196], [7.17278427, 13.66051575, 4.25025258],
              [-2.29352228, 4.02086973, 8.51664944]]),
    "lu_solve_T": (lambda a: jnp.sum(L.lu_solve(L.lu_factor(a), B3, trans=1)),
                   [[-0.3858669, -0.28940018, -0.57880036], [0.94697827, 0.7102337, 1.4204674],
                    [-0.62857637, -0.47143227, -0.94286455]]),
}


@pytest.mark.parametrize("name", sorted(JAX_GRADS))
def test_gradients_match_jax(name, x64):
    f, want = JAX_GRADS[name]
    for grad in (astjax.grad(f), astjax.jit(astjax.grad(f))):
        np.testing.assert_allclose(np.asarray(grad(A3)), want, atol=1e-7)


def test_expm_derivatives_against_finite_differences(x64):
    check_grads(lambda a: jnp.sum(L.expm(a) ** 2), (0.3 * A,), order=1, modes=("fwd", "rev"))


def test_errors_and_missing_functions():
    with pytest.raises(NotImplementedError, match="b=None"):
        L.eigh(SPD, SPD)
    with pytest.raises(ValueError, match="trans"):
        L.solve_triangular(A, B, trans=3)
    with pytest.raises(AttributeError, match="sqrtm"):
        L.sqrtm(A)
