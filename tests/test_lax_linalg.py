"""lax.linalg's triangular_solve, tridiagonal_solve, lu and lu_pivots_to_permutation against
NumPy/SciPy and JAX 0.10.2's values (literals from a JAX run): eagerly, under jit, grad and
vmap; one small Numba program."""
import numpy as np
import pytest
import scipy.linalg

import astjax
import astjax.numpy as jnp
from astjax import lax

RNG = np.random.default_rng(0)
A = np.array([[2.0, 0.5, -1.0], [1.0, 3.0, 0.25], [-0.5, 1.5, 4.0]], np.float32)
B = np.array([[1.0, -2.0], [0.5, 1.0], [3.0, -1.0]], np.float32)


@pytest.mark.parametrize("left_side", [True, False])
@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("transpose_a", [False, True])
def test_triangular_solve_against_numpy(left_side, lower, transpose_a):
    a = RNG.normal(size=(2, 4, 4)).astype(np.float32) + 4 * np.eye(4, dtype=np.float32)
    a[(0, 0, 3) if lower else (0, 3, 0)] = np.nan  # (the other triangle is not read)
    b = RNG.normal(size=(2, 4, 3) if left_side else (2, 3, 4)).astype(np.float32)
    t = np.tril(np.nan_to_num(a)) if lower else np.triu(np.nan_to_num(a))
    if transpose_a:
        t = np.swapaxes(t, -1, -2)
    want = np.linalg.solve(t, b) if left_side else np.swapaxes(
        np.linalg.solve(np.swapaxes(t, -1, -2), np.swapaxes(b, -1, -2)), -1, -2)
    kw = dict(left_side=left_side, lower=lower, transpose_a=transpose_a)
    got = lax.linalg.triangular_solve(a, b, **kw)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    if left_side and lower:
        got = astjax.jit(lambda a, b: lax.linalg.triangular_solve(
            a, b, left_side=True, lower=True, transpose_a=transpose_a))(a, b)
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_triangular_solve_unit_diagonal_and_gradients():
    x = lax.linalg.triangular_solve(A, B, left_side=True, lower=True, unit_diagonal=True)
    np.testing.assert_allclose(x, np.linalg.solve(np.tril(A, -1) + np.eye(3), B), rtol=1e-6)
    ga, gb = astjax.grad(lambda a, b: jnp.sum(lax.linalg.triangular_solve(
        a, b, left_side=True, lower=True) ** 2), (0, 1))(A, B)
    np.testing.assert_allclose(ga, [[-1.7300347, 0, 0], [0.702257, -0.40046299, 0],
                                    [-0.515625, 0.20833334, -0.5253906]], rtol=1e-5)
    np.testing.assert_allclose(gb, [[0.703125, -1.3784722], [-0.203125, 0.6006945],
                                    [0.40625, -0.3125]], rtol=1e-5)
    ga, gb = astjax.jit(astjax.grad(lambda a, b: jnp.sum(jnp.sin(lax.linalg.triangular_solve(
        a, b.T, left_side=False, lower=False, transpose_a=True))), (0, 1)))(A, B)
    np.testing.assert_allclose(ga, [[-0.0682912, -0.09634154, -0.20407408],
                                    [0, -0.12920563, -0.13647121], [0, 0, -0.1191237]],
                               rtol=1e-5)
    np.testing.assert_allclose(gb, [[0.3303827, 0.17485179], [0.27646273, 0.28350332],
                                    [0.24823897, 0.2682221]], rtol=1e-5)


DL = np.array([0.0, 1.0, -0.5], np.float32)
D = np.array([3.0, 4.0, 2.5], np.float32)
DU = np.array([0.5, -1.0, 0.0], np.float32)


def test_tridiagonal_solve():
    want = [[0.2706422, -0.7247706], [0.3761468, 0.3486239], [1.2752293, -0.3302752]]  # JAX
    for f in (lax.linalg.tridiagonal_solve, astjax.jit(lax.linalg.tridiagonal_solve)):
        np.testing.assert_allclose(f(DL, D, DU, B), want, rtol=1e-5)
    grads = astjax.grad(lambda *args: jnp.sum(lax.linalg.tridiagonal_solve(*args) ** 2),
                        (0, 1, 2, 3))(DL, D, DU, B)
    want_grads = [[0.0, 0.07361112, -0.37112832], [-0.42356345, -0.19875774, -1.5234637],
                  [0.16683334, -0.33807656, 0.0],
                  [[0.07288948, -0.55719215], [0.32261592, 0.22203521],
                   [1.1492298, -0.17540608]]]
    for g, w in zip(grads, want_grads):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-7)
    got = astjax.vmap(lax.linalg.tridiagonal_solve, in_axes=(None, None, None, 0))(
        DL, D, DU, np.stack([B, 2 * B]))
    np.testing.assert_allclose(got, [want, 2 * np.array(want)], rtol=1e-5)


def test_lu_and_pivots():
    c = np.array([[1.0, 2.0, 0.5], [4.0, -1.0, 2.0], [-2.0, 3.0, 1.0]], np.float32)
    lu, piv, perm = lax.linalg.lu(c)
    np.testing.assert_allclose(lu, [[4.0, -1.0, 2.0], [-0.5, 2.5, 2.0],
                                    [0.25, 0.90000004, -1.8000002]], rtol=1e-6)  # JAX
    np.testing.assert_array_equal(piv, [1, 2, 2])
    np.testing.assert_array_equal(perm, [1, 2, 0])
    assert piv.dtype == perm.dtype == np.int32
    np.testing.assert_allclose(astjax.grad(lambda c: jnp.sum(lax.linalg.lu(c)[0] ** 2))(c),
                               [[2.8250003, 3.6000004, -3.6000006],
                                [5.5787497, -2.0200005, 8.52],
                                [-3.4300003, 1.7599995, 7.2400007]], rtol=1e-5)
    for shape in [(5, 5), (3, 5), (5, 3), (2, 4, 4)]:
        x = RNG.normal(size=shape).astype(np.float32)
        lu, piv, perm = astjax.jit(lax.linalg.lu)(x)
        for k in np.ndindex(shape[:-2]):
            lu_s, piv_s = scipy.linalg.lu_factor(x[k])
            np.testing.assert_allclose(lu[k], lu_s, rtol=1e-5, atol=1e-6)
            np.testing.assert_array_equal(piv[k], piv_s)
            m = min(shape[-2:])
            low = np.tril(lu[k], -1)[:, :m] + np.eye(shape[-2], m)
            np.testing.assert_allclose(x[k][perm[k]], low @ np.triu(lu[k])[:m], atol=1e-5)
    np.testing.assert_array_equal(
        lax.linalg.lu_pivots_to_permutation(np.array([2, 2, 3], np.int32), 5),
        [2, 0, 3, 1, 4])  # JAX
    got = astjax.jit(astjax.vmap(lambda p: lax.linalg.lu_pivots_to_permutation(p, 4)))(
        np.array([[1, 1, 2], [3, 2, 2]], np.int32))
    np.testing.assert_array_equal(got, [[1, 0, 2, 3], [3, 2, 1, 0]])


def test_integer_operands_are_refused_as_jax():
    """lax.linalg's primitives take floats only (jnp.linalg converts): JAX 0.10.2's
    TypeError, naming the operand's position; it converted them to float32."""
    a, b = np.array([[4, 2], [2, 3]], np.int32), np.array([[1.0], [2.0]], np.float32)
    cases = [(lambda: lax.linalg.lu(a), "lu", 0), (lambda: lax.linalg.qr(a), "qr", 0),
             (lambda: lax.linalg.svd(a), "svd", 0), (lambda: lax.linalg.eig(a), "eig", 0),
             (lambda: lax.linalg.schur(a), "schur", 0),
             (lambda: lax.linalg.triangular_solve(b[:, 0] * a, a[:, :1], left_side=True,
                                                  lower=True), "triangular_solve", 1),
             (lambda: lax.linalg.tridiagonal_solve(a[0], b[:, 0], b[:, 0], b),
              "tridiagonal_solve", 0)]
    for fn, name, position in cases:
        with pytest.raises(TypeError, match=f"{name} does not accept dtype int32 at "
                                            f"position {position}"):
            fn()
    assert lax.linalg.cholesky(a).dtype == np.float32  # (cholesky symmetrizes: converts)


def test_tridiagonal_solve_on_numba(numba_backend):
    got = astjax.jit(lax.linalg.tridiagonal_solve)(DL, D, DU, B)
    np.testing.assert_allclose(got, [[0.2706422, -0.7247706], [0.3761468, 0.3486239],
                                     [1.2752293, -0.3302752]], rtol=1e-5)


S = np.array([[4.0, 1.0, 0.5], [1.0, 3.0, -1.0], [0.5, -1.0, 2.0]], np.float32)
M = np.array([[1.0, 2.0, 0.5], [4.0, -1.0, 2.0], [-2.0, 3.0, 1.0]], np.float32)


def _same_up_to_sign(got, want):
    got, want = np.asarray(got), np.asarray(want)
    signs = np.sign(np.sum(got * np.conj(want), axis=0).real)
    np.testing.assert_allclose(got * signs, want, rtol=1e-5, atol=1e-6)


def test_decompositions_in_lax_form():
    chol = [[2.0, 0.0, 0.0], [0.5, 1.6583124, 0.0], [0.25, -0.6784005, 1.2154311]]  # JAX
    for f in (lax.linalg.cholesky, astjax.jit(lax.linalg.cholesky)):
        np.testing.assert_allclose(f(S), chol, rtol=1e-6)
    np.testing.assert_allclose(
        astjax.grad(lambda s: jnp.sum(jnp.sin(lax.linalg.cholesky(s))))(S),
        [[-0.16274408, 0.15932406, 0.15101075], [0.15932406, 0.09363445, 0.2933037],
         [0.15101075, 0.2933037, 0.14313145]], rtol=1e-5)
    v, w = lax.linalg.eigh(S)  # (vectors, values): lax's order
    np.testing.assert_allclose(w, [1.0595504, 3.3175445, 4.622905], rtol=1e-6)
    np.testing.assert_allclose(S @ v, v * w, atol=1e-5)
    np.testing.assert_allclose(
        astjax.jit(astjax.grad(lambda s: jnp.sum(lax.linalg.eigh(s)[1] *
                                                 jnp.array([1.0, 2.0, 3.0]))))(S),
        [[2.5976279, 0.63542074, 0.20433404], [0.63542074, 1.9848821, -0.45401877],
         [0.20433404, -0.45401877, 1.4174876]], rtol=1e-5)
    np.testing.assert_allclose(
        astjax.grad(lambda m: jnp.sum(lax.linalg.svd(m, compute_uv=False) ** 3))(M),
        [[7.9198203, 18.681484, 9.979527], [61.808784, -20.275965, 23.400005],
         [-32.28315, 40.1981, 4.142618]], rtol=1e-5)
    u, s, vh = lax.linalg.svd(M)
    np.testing.assert_allclose((u * s) @ vh, M, atol=1e-5)
    q, r = lax.linalg.qr(M)
    np.testing.assert_allclose(q, [[-0.21821785, 0.7194431, -0.65938044],
                                   [-0.8728715, 0.15827739, 0.46156636],
                                   [0.43643576, 0.6762765, 0.59344244]], rtol=1e-5)
    np.testing.assert_allclose(r, [[-4.582576, 1.745743, -1.4184163], [0, 3.309438, 1.3525529],
                                   [0, 0, 1.1868849]], rtol=1e-5, atol=1e-6)
    tall = np.concatenate([M, M[:1]])
    assert [a.shape for a in lax.linalg.qr(tall, full_matrices=False)] == [(4, 3), (3, 3)]
    w, vl, vr = lax.linalg.eig(M)
    np.testing.assert_allclose(w, [-3.8502836, 1.326808, 3.5234756], rtol=1e-5, atol=1e-6)
    _same_up_to_sign(vl, [[0.67318034, -0.6835732, 0.513051],
                          [-0.70551825, 0.28096834, 0.6203123],
                          [0.2215222, 0.6736353, 0.59328866]])
    _same_up_to_sign(vr, [[0.25767165, -0.55641586, 0.62452],
                          [-0.77061313, -0.2859574, 0.7028339],
                          [0.58289, 0.7801473, 0.34058654]])
    assert len(lax.linalg.eig(M, compute_left_eigenvectors=False)) == 2
    with pytest.raises(NotImplementedError, match="pivoting"):
        lax.linalg.qr(M, pivoting=True)
    with pytest.raises(NotImplementedError, match="subset_by_index"):
        lax.linalg.eigh(S, subset_by_index=(0, 1))


def test_hessenberg_schur_tridiagonal():
    h, taus = lax.linalg.hessenberg(M)  # JAX 0.10.2's values (LAPACK gehrd)
    np.testing.assert_allclose(h, [[1.0, -1.5652473, 1.3416407],
                                   [-4.472136, -2.5999997, -0.19999981],
                                   [-0.236068, -1.1999998, 2.5999997]], rtol=1e-5)
    np.testing.assert_allclose(taus, [1.8944271, 0.0], rtol=1e-6)
    t, vs = astjax.jit(lax.linalg.schur)(M)
    np.testing.assert_allclose(t, [[-3.8502836, 3.2504075, -0.65707767],
                                   [0.0, 1.326808, -0.5030808], [0.0, 0.0, 3.5234756]],
                               rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(vs @ t @ vs.T, M, atol=1e-5)
    assert len(lax.linalg.schur(M, compute_schur_vectors=False)) == 1
    arr, d, e, taus = astjax.jit(lambda s: lax.linalg.tridiagonal(s, lower=False))(S)
    np.testing.assert_allclose(arr, [[4.6000004, -0.19999969, -0.236068],
                                     [1.0, 2.3999996, 1.118034], [0.5, -1.0, 2.0]], rtol=1e-5)
    np.testing.assert_allclose(d, [4.6000004, 2.3999996, 2.0], rtol=1e-6)
    np.testing.assert_allclose(e, [-0.19999969, 1.118034], rtol=1e-5)
    np.testing.assert_allclose(taus, [0.0, 1.8944271], rtol=1e-6)
    np.testing.assert_allclose(lax.linalg.tridiagonal(S)[1], [4.0, 2.0, 3.0])
    batched = astjax.vmap(lax.linalg.hessenberg)(np.stack([M, 2 * M]))[1]
    np.testing.assert_allclose(batched, [[1.8944271, 0.0]] * 2, rtol=1e-6)
    with pytest.raises(ValueError, match="do not support JVP") as info:
        astjax.grad(lambda m: jnp.sum(lax.linalg.hessenberg(m)[0]))(M)
    assert "test_lax_linalg.py" in str(info.value)
