"""lax.custom_root and lax.custom_linear_solve: the solver's value, with derivatives from the
implicit function theorem (the tangent/transpose solves), as JAX's. The solvers below are
wrapped in stop_gradient, so a derivative that came from differentiating the solver would be
zero: the right values (closed forms, NumPy, finite differences) come from the rules."""
import numpy as np
import pytest

import astjax
import astjax.numpy as jnp
from astjax import lax


def newton(f, x0):
    def step(i, x):
        return x - f(x) / astjax.grad(f)(x)
    return lax.stop_gradient(lax.fori_loop(0, 30, step, x0))


def sqrt_by_root(p):
    return lax.custom_root(lambda x: x * x - p, 1.0, newton, lambda g, y: y / g(1.0))


def test_custom_root_value_and_derivatives():
    assert float(sqrt_by_root(2.0)) == pytest.approx(np.sqrt(2.0), rel=1e-6)
    assert float(astjax.jit(sqrt_by_root)(2.0)) == pytest.approx(np.sqrt(2.0), rel=1e-6)
    # d sqrt(p)/dp = p**-0.5 / 2, d2/dp2 = -p**-1.5 / 4
    assert float(astjax.grad(sqrt_by_root)(2.0)) == pytest.approx(0.5 / np.sqrt(2), rel=1e-6)
    assert float(astjax.jit(astjax.grad(sqrt_by_root))(9.0)) == pytest.approx(1 / 6, rel=1e-6)
    out, t = astjax.jvp(sqrt_by_root, (4.0,), (2.0,))
    assert (float(out), float(t)) == pytest.approx((2.0, 0.5), rel=1e-6)
    second = -0.25 * 2.0 ** -1.5
    assert float(astjax.grad(astjax.grad(sqrt_by_root))(2.0)) == pytest.approx(second, rel=1e-5)
    np.testing.assert_allclose(astjax.vmap(astjax.grad(sqrt_by_root))(jnp.array([4.0, 9.0])),
                               [0.25, 1 / 6], rtol=1e-6)


def test_custom_root_of_a_vector_with_aux():
    def roots(p):
        x, aux = lax.custom_root(lambda x: x ** 3 - p, jnp.ones(3),
                                 lambda f, x0: (newton_elementwise(f, x0), jnp.sum(x0)),
                                 lambda g, y: y / g(jnp.ones(3)), has_aux=True)
        return jnp.sum(x * jnp.array([1.0, 2.0, 3.0])) + aux

    p = np.array([8.0, 27.0, 2.0], np.float32)
    assert float(roots(p)) == pytest.approx(np.cbrt(p) @ [1, 2, 3] + 3, rel=1e-6)
    want = np.array([1.0, 2.0, 3.0]) * p ** (-2 / 3) / 3  # d cbrt(p)/dp; aux has none
    np.testing.assert_allclose(astjax.grad(roots)(p), want, rtol=1e-5)


def newton_elementwise(f, x0):
    def step(i, x):
        return x - f(x) / astjax.vmap(astjax.grad(f_scalar(f)))(x)
    return lax.stop_gradient(lax.fori_loop(0, 30, step, x0))


def f_scalar(f):
    return lambda t: f(t * jnp.ones(3))[0] * 0 + f(jnp.full(3, t))[0]


def cramer(matvec, r):
    """The 3x3 system of ``matvec`` solved by Cramer's rule, with no derivative."""
    e = jnp.eye(3)
    a = jnp.stack([matvec(e[0]), matvec(e[1]), matvec(e[2])], axis=1)
    d = det3(a)
    x = jnp.stack([det3(a.at[:, 0].set(r)), det3(a.at[:, 1].set(r)),
                   det3(a.at[:, 2].set(r))]) / d
    return lax.stop_gradient(x)


def det3(m):
    return (m[0, 0] * (m[1, 1] * m[2, 2] - m[1, 2] * m[2, 1])
            - m[0, 1] * (m[1, 0] * m[2, 2] - m[1, 2] * m[2, 0])
            + m[0, 2] * (m[1, 0] * m[2, 1] - m[1, 1] * m[2, 0]))


A = np.array([[4.0, 1.0, 0.0], [2.0, 3.0, 1.0], [0.0, 1.0, 2.0]], np.float32)
B = np.array([1.0, -2.0, 4.0], np.float32)
W = np.array([1.0, -2.0, 0.5], np.float32)


def weighted_solution(a, b):
    x = lax.custom_linear_solve(lambda v: a @ v, b, cramer, transpose_solve=cramer)
    return jnp.sum(x * W)


def test_custom_linear_solve_value_and_first_derivatives():
    a, b = A.astype(np.float64), B.astype(np.float64)
    x = np.linalg.solve(a, b)
    np.testing.assert_allclose(lax.custom_linear_solve(lambda v: A @ v, B, cramer), x,
                               rtol=1e-5)
    assert float(astjax.jit(weighted_solution)(A, B)) == pytest.approx(x @ W, rel=1e-5)
    # d(w.x)/db = A^-T w, d(w.x)/dA = -(A^-T w) x^T
    u = np.linalg.solve(a.T, W)
    for grad in (astjax.grad(weighted_solution, (0, 1)),
                 astjax.jit(astjax.grad(weighted_solution, (0, 1)))):
        ga, gb = grad(A, B)
        np.testing.assert_allclose(gb, u, rtol=1e-5)
        np.testing.assert_allclose(ga, -np.outer(u, x), rtol=1e-5, atol=1e-6)
    da, db = np.ones((3, 3)), np.array([0.5, -1.0, 2.0])
    _, t = astjax.jvp(weighted_solution, (A, B), (da.astype(np.float32), db.astype(np.float32)))
    want = W @ np.linalg.solve(a, db - da @ x)
    assert float(t) == pytest.approx(want, rel=1e-5)
    got = astjax.vmap(astjax.grad(weighted_solution, 1), in_axes=(None, 0))(A, np.stack([B, B]))
    np.testing.assert_allclose(got, [u, u], rtol=1e-5)


def test_custom_linear_solve_symmetric_with_aux():
    s = A + A.T

    def solve(matvec, r):
        return cramer(matvec, r), jnp.sum(r)

    def f(a, b):
        x, aux = lax.custom_linear_solve(lambda v: a @ v, b, solve, symmetric=True,
                                         has_aux=True)
        return jnp.sum(x * W) + aux

    u = np.linalg.solve(s.astype(np.float64), W)
    assert float(f(s, B)) == pytest.approx(np.linalg.solve(s, B) @ W + B.sum(), rel=1e-5)
    # aux has a zero derivative, as in JAX (not d sum(b)/db = 1)
    np.testing.assert_allclose(astjax.grad(f, 1)(s, B), u, rtol=1e-5)


def test_custom_linear_solve_in_reverse_mode_needs_transpose_solve():
    def f(b):
        return jnp.sum(lax.custom_linear_solve(lambda v: A @ v, b, cramer))

    assert float(astjax.jvp(f, (B,), (B,))[1]) == pytest.approx(
        np.linalg.solve(A.astype(np.float64), B).sum(), rel=1e-5)  # forward mode needs none
    with pytest.raises(TypeError, match="transpose_solve required") as info:
        astjax.grad(f)(B)
    assert "test_lax_solves.py" in str(info.value)


def test_custom_root_on_numba(numba_backend):
    assert float(astjax.jit(astjax.grad(sqrt_by_root))(4.0)) == pytest.approx(0.25, rel=1e-6)


def test_custom_linear_solve_whose_solvers_capture_the_matrix():
    # JAX's idiom: solve and transpose_solve close over the matrix (here its inverse); only
    # matvec's captured values get a derivative, as in JAX
    def f(a, b):
        inv = jnp.array([[a[1, 1], -a[0, 1]], [-a[1, 0], a[0, 0]]]) / (
            a[0, 0] * a[1, 1] - a[0, 1] * a[1, 0])
        x = lax.custom_linear_solve(lambda v: a @ v, b, lambda mv, r: inv @ r,
                                    lambda vm, r: inv.T @ r)
        return jnp.sum(x * jnp.array([1.0, 3.0]))

    a = np.array([[4.0, 1.0], [2.0, 3.0]], np.float32)
    b = np.array([1.0, -2.0], np.float32)
    x, u = np.linalg.solve(a, b), np.linalg.solve(a.T, [1.0, 3.0])
    ga, gb = astjax.grad(f, (0, 1))(a, b)
    np.testing.assert_allclose(ga, -np.outer(u, x), rtol=1e-5)
    np.testing.assert_allclose(gb, u, rtol=1e-5)


def test_custom_root_whose_tangent_solve_is_a_custom_linear_solve():
    # JAX's idiom: the tangent system solved by custom_linear_solve of f linearized
    def tangent_solve(g, y):
        return lax.custom_linear_solve(g, y, lambda matvec, r: r / matvec(1.0),
                                       symmetric=True)

    def root(p):
        return lax.custom_root(lambda x: x * x - p, 1.0, newton, tangent_solve)

    assert float(astjax.grad(root)(2.0)) == pytest.approx(0.5 / np.sqrt(2), rel=1e-6)
    assert float(astjax.jvp(root, (9.0,), (6.0,))[1]) == pytest.approx(1.0, rel=1e-6)


def test_custom_linear_solve_of_a_pytree():
    def f(s, b):
        def matvec(v):
            return {"x": s * v["x"], "y": 2.0 * s * v["y"]}

        def solve(_, r):
            return {"x": r["x"] / s, "y": r["y"] / (2.0 * s)}

        out = lax.custom_linear_solve(matvec, b, solve, symmetric=True)
        return jnp.sum(out["x"]) + jnp.sum(out["y"])

    b = {"x": np.array([1.0, 2.0], np.float32), "y": np.float32(3.0)}
    assert float(f(2.0, b)) == pytest.approx(3 / 2 + 3 / 4)
    gs, gb = astjax.grad(f, (0, 1))(2.0, b)
    assert float(gs) == pytest.approx(-(3 / 4 + 3 / 8))  # d/ds of 3/(2s) + 3/(4s)
    np.testing.assert_allclose(gb["x"], [0.5, 0.5])
    assert float(gb["y"]) == pytest.approx(0.25)
