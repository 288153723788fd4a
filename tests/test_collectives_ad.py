"""Derivatives of the collectives (lax.psum, pmean, pmax, pmin, all_gather) under
vmap(..., axis_name=...).

As in JAX, grad of f inside the vmap differentiates ``sum_i f_i(x)`` with respect to example
i's x (the cotangent of a psum's output is summed over the axis, and so on): references
are central differences of that total objective in float64, written in NumPy, or closed
forms; JAX 0.10.2 gives the same values (its values are written where noted).
"""
import numpy as np
import pytest

import astjax.numpy as jnp
from astjax import grad, hessian, jacfwd, jacrev, jit, jvp, lax, vmap

X = np.array([[1.0, 2.0], [3.0, -4.0], [2.5, 5.0]], np.float32)  # 3 examples of (2,)


def total_grad(total, x):
    """Central differences of ``total`` (NumPy, float64) at ``x``."""
    x = x.astype(np.float64)
    out = np.zeros_like(x)
    for k in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[k] = 1e-6
        out[k] = (total(x + e) - total(x - e)) / 2e-6
    return out


def f_psum(x):
    return jnp.sum(jnp.sin(lax.psum(x * x, "i")) * x)


def f_pmean(x):
    return jnp.sum(lax.pmean(x, "i") ** 2 * x)


def f_gather(x):  # the examples' x as the columns, for each example
    return jnp.sum(jnp.sin(lax.all_gather(x, "i", axis=1)) * x[:, None])


def f_gather0(x):
    return jnp.sum(jnp.cos(lax.all_gather(x, "i")) * jnp.arange(3.0)[:, None] * x)


TOTALS = {  # sum over the examples of f(x_i), x the whole batch
    f_psum: lambda x: np.sum(np.sin((x * x).sum(0)) * x.sum(0)),
    f_pmean: lambda x: np.sum(x.mean(0) ** 2 * x.sum(0)),
    f_gather: lambda x: np.sum(np.sin(x).sum(0) * x.sum(0)),
    f_gather0: lambda x: np.sum(np.cos(x) * np.arange(3.0)[:, None] * x.sum(0)),
}


def test_the_repro_psum_is_not_the_identity():
    def f(x):
        return jnp.sum(lax.psum(x, "i") * x)
    x = np.array([[1.0, 2.0], [3.0, -4.0]], np.float32)
    np.testing.assert_array_equal(vmap(grad(f), axis_name="i")(x), [[8, -4], [8, -4]])  # JAX


@pytest.mark.parametrize("f", list(TOTALS), ids=lambda f: f.__name__)
def test_per_example_grad_is_the_grad_of_the_total(f):
    want = total_grad(TOTALS[f], X)
    np.testing.assert_allclose(vmap(grad(f), axis_name="i")(X), want, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(jit(vmap(grad(f), axis_name="i"))(X), want, rtol=1e-4,
                               atol=1e-4)
    # grad of the vmapped function (the collective is a reduction there) agrees
    np.testing.assert_allclose(grad(lambda x: jnp.sum(vmap(f, axis_name="i")(x)))(X), want,
                               rtol=1e-4, atol=1e-4)


def f_max(x):
    return jnp.sum(jnp.sin(lax.pmax(x, "i")) * x)


def f_min(x):
    return jnp.sum(jnp.sin(lax.pmin(x, "i")) * x)


def test_pmax_pmin_send_the_cotangent_to_the_extreme():
    """JAX has no rule; astjax's shares it among ties as jnp.max does, so vmap(grad(f))
    agrees with grad(vmap(f)), where pmax is jnp.max over the batch."""
    want = total_grad(lambda x: np.sum(np.sin(x.max(0)) * x.sum(0)), X)  # no ties in X
    np.testing.assert_allclose(vmap(grad(f_max), axis_name="i")(X), want, rtol=1e-4)
    want = total_grad(lambda x: np.sum(np.sin(x.min(0)) * x.sum(0)), X)
    np.testing.assert_allclose(vmap(grad(f_min), axis_name="i")(X), want, rtol=1e-4)
    tie = np.array([[1.0, 2.0], [3.0, -4.0], [3.0, 5.0]], np.float32)  # max of column 0 twice
    m, s = tie.max(0), tie.sum(0)
    share = (tie == m) / (tie == m).sum(0)
    want = np.sin(m) + share * np.cos(m) * s
    got = vmap(grad(f_max), axis_name="i")(tie)
    np.testing.assert_allclose(got, want, rtol=1e-5)
    np.testing.assert_allclose(got[1:, 0], np.sin(3.0) + 0.5 * np.cos(3.0) * 7.0, rtol=1e-5)
    np.testing.assert_allclose(grad(lambda x: jnp.sum(vmap(f_max, axis_name="i")(x)))(tie),
                               got, rtol=1e-5)
    # forward mode: the tangent of the extreme is the tied examples' mean tangent
    t = np.array([[1.0, 0.0], [2.0, 1.0], [4.0, 1.0]], np.float32)
    got = vmap(lambda x, t: jvp(lambda x: lax.pmax(x, "i"), (x,), (t,))[1],
               axis_name="i")(tie, t)
    np.testing.assert_allclose(got, np.broadcast_to([3.0, 1.0], (3, 2)))


def f_vec(x):
    return lax.psum(x, "i") * x


def test_forward_mode_and_jacobians():
    x = np.array([[1.0, 2.0], [3.0, -4.0], [3.0, 5.0]], np.float32)
    s, n = x.sum(0), len(x)
    # jvp with the tangent t for every example: psum(t) * x_i + psum(x) * t
    t = np.ones_like(x)
    got = vmap(lambda x, t: jvp(lambda x: jnp.sum(f_vec(x)), (x,), (t,))[1],
               axis_name="i")(x, t)
    np.testing.assert_allclose(got, (n * x + s).sum(1))  # JAX: [19, 7, 34]
    np.testing.assert_allclose(vmap(jacfwd(f_vec), axis_name="i")(x),
                               [np.diag(n * xi + s) for xi in x])
    np.testing.assert_allclose(vmap(jacrev(f_vec), axis_name="i")(x),  # JAX: diag(14, 6)
                               np.broadcast_to(np.diag(2 * s), (3, 2, 2)))
    # second order: jacfwd of the per-example gradient 2 x_i S1 + S2 (S1, S2: psums of
    # x and x * x), its tangent summed over the axis too
    def f(x):
        return jnp.sum(lax.psum(x * x, "i") * x)
    np.testing.assert_allclose(vmap(hessian(f), axis_name="i")(x),  # JAX: diag(34, 24), ...
                               [np.diag(4 * s + 2 * n * xi) for xi in x])


def _nested(x):
    return jnp.sum(jnp.sin(lax.psum(x, "rows")) * x)


def _nested_gather(x):
    return jnp.sum(jnp.sin(lax.all_gather(x, "rows")) * jnp.arange(3.0))


def test_a_collective_over_the_outer_axis_of_nested_vmaps():
    def per_example(f):
        return vmap(vmap(grad(f), axis_name="cols"), axis_name="rows")(X)
    np.testing.assert_allclose(
        per_example(_nested), total_grad(lambda x: np.sum(np.sin(x.sum(0)) * x.sum(0)), X),
        rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(
        per_example(_nested_gather),
        total_grad(lambda x: len(x) * np.sum(np.sin(x) * np.arange(3.0)[:, None]), X),
        rtol=1e-4, atol=1e-4)


def test_shared_parameters_and_pytrees():
    def loss(w, x):
        return jnp.sum(lax.pmean(w * x, "i") ** 2)
    w = np.array([1.0, 2.0], np.float32)
    got = vmap(grad(loss), in_axes=(None, 0), axis_name="i")(w, X)
    np.testing.assert_allclose(got, 2 * (w * X.mean(0)) * X, rtol=1e-5)

    def tree(x):
        parts = lax.psum({"a": x, "b": (x * x, None)}, "i")
        return jnp.sum(parts["b"][0] * x + parts["a"])
    np.testing.assert_allclose(vmap(tree, axis_name="i")(X),
                               (X * X).sum(0) @ X.T + X.sum(), rtol=1e-5)
    want = total_grad(lambda x: np.sum((x * x).sum(0) * x.sum(0)) + len(x) * x.sum(), X)
    np.testing.assert_allclose(vmap(grad(tree), axis_name="i")(X), want, rtol=1e-4)


def test_grad_of_a_collective_outside_the_vmap_is_an_unbound_axis():
    """Outside any vmap binding 'i', even after one did (grad took psum for the identity)."""
    vmap(f_psum, axis_name="i")(X)
    with pytest.raises(NameError, match=r"test_collectives_ad.py:\d+:.*unbound axis name: i"):
        grad(f_psum)(X[0])
    with pytest.raises(NameError, match=r"test_collectives_ad.py:\d+:.*unbound axis name: i"):
        jit(grad(f_pmean))(X[0])


def test_on_numba(numba_backend):
    def f(x):
        return jnp.sum(lax.psum(x, "i") * x)
    np.testing.assert_allclose(jit(vmap(grad(f), axis_name="i"))(X),
                               np.broadcast_to(2 * X.sum(0), X.shape), rtol=1e-6)
