"""jacrev / jacfwd / hessian: JAX's API and layout (tuple argnums, pytrees, has_aux).

Checked against central finite differences in float64 and against stacked ``grad`` rows.
"""
import inspect

import numpy as np
import pytest

import astjax
import astjax.numpy as jnp
from astjax import grad, hessian, jacfwd, jacrev, jit
from astjax.tree_util import tree_flatten, tree_leaves, tree_structure, tree_unflatten

from . import ad_programs as AD

rng = np.random.default_rng(3)
X = rng.uniform(0.5, 1.5, 3)
W = rng.uniform(0.5, 1.5, (2, 3))


@pytest.fixture
def x64():
    before = astjax.config.jax_enable_x64
    astjax.config.update("jax_enable_x64", True)
    try:
        yield
    finally:
        astjax.config.update("jax_enable_x64", before)


def numeric_jacobian(f, args, argnums=0, eps=1e-6):
    """JAX's layout by central differences: the output's tree, then (tuple argnums) one entry
    per argnum, then the input's tree; each leaf out_leaf.shape + in_leaf.shape."""
    nums = (argnums,) if isinstance(argnums, int) else argnums
    out_leaves, out_def = tree_flatten(f(*args))
    per_arg = []
    for k in nums:
        in_leaves, in_def = tree_flatten(args[k])
        blocks = [[] for _ in out_leaves]
        for n, leaf in enumerate(in_leaves):
            leaf = np.asarray(leaf, np.float64)
            cols = [np.zeros(np.shape(o) + leaf.shape) for o in out_leaves]
            for idx in np.ndindex(leaf.shape):
                def shifted(d):
                    moved = leaf.copy()
                    moved[idx] += d
                    leaves = list(in_leaves)
                    leaves[n] = moved
                    new_args = list(args)
                    new_args[k] = tree_unflatten(in_def, leaves)
                    return [np.asarray(o, np.float64) for o in tree_leaves(f(*new_args))]
                for col, hi, lo in zip(cols, shifted(eps), shifted(-eps)):
                    col[(Ellipsis,) + idx] = (hi - lo) / (2 * eps)
            for block, col in zip(blocks, cols):
                block.append(col)
        per_arg.append([tree_unflatten(in_def, b) for b in blocks])
    at_leaf = [per_arg[0][j] if isinstance(argnums, int) else tuple(p[j] for p in per_arg)
               for j in range(len(out_leaves))]
    return tree_unflatten(out_def, at_leaf)


def assert_tree_close(got, want, rtol=1e-6, atol=1e-8):
    assert tree_structure(got) == tree_structure(want), (tree_structure(got),
                                                         tree_structure(want))
    for a, b in zip(tree_leaves(got), tree_leaves(want)):
        assert np.shape(a) == np.shape(b)
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=rtol, atol=atol)


# --- functions ---------------------------------------------------------------------------------

def vector_fn(x):
    return jnp.sin(x) * x[0] + x ** 2


def two_args(w, x):
    return jnp.tanh(w @ x) * x[1]


def dict_in(p):
    return jnp.tanh(p["w"] @ p["x"]) + p["b"] ** 2


def tree_out(p, x):
    h = p["w"] @ x + p["b"]
    return {"h": jnp.sin(h), "stats": (jnp.sum(h ** 2), h[0] * x)}


def tuple_in(t):
    a, b = t
    return a * jnp.exp(b)


def scalar_fn(x):
    return jnp.sin(x) * x ** 2


def with_aux(x):
    y = jnp.sin(x) * x
    return y, {"norm": jnp.sum(y ** 2), "count": x.shape[0]}


def dict_energy(p):
    return jnp.sum(p["w"] ** 3) * p["b"] + jnp.sin(p["b"]) * jnp.sum(p["w"])


def int_out(x):
    return jnp.argmax(x)


# --- values ------------------------------------------------------------------------------------

@pytest.mark.parametrize("jac", [jacrev, jacfwd])
def test_array_matches_finite_differences_and_grad_rows(jac, x64):
    J = jac(vector_fn)(X)
    assert J.shape == (3, 3) and J.dtype == np.float64
    np.testing.assert_allclose(J, numeric_jacobian(vector_fn, (X,)), rtol=1e-6)
    rows = np.stack([grad(lambda x, i: vector_fn(x)[i])(X, i) for i in range(3)])
    np.testing.assert_allclose(J, rows, rtol=1e-12)


@pytest.mark.parametrize("jac", [jacrev, jacfwd])
def test_tuple_argnums(jac, x64):
    jw, jx = jac(two_args, argnums=(0, 1))(W, X)
    assert jw.shape == (2, 2, 3) and jx.shape == (2, 3)
    assert_tree_close((jw, jx), numeric_jacobian(two_args, (W, X), (0, 1)))
    # a one-element tuple still gives a tuple
    (only,) = jac(two_args, argnums=(1,))(W, X)
    np.testing.assert_allclose(only, jx, rtol=1e-12)


@pytest.mark.parametrize("jac", [jacrev, jacfwd])
def test_negative_argnum(jac, x64):
    np.testing.assert_allclose(jac(two_args, argnums=-1)(W, X),
                               numeric_jacobian(two_args, (W, X), 1), rtol=1e-6)
    J = jac(two_args, argnums=(-1, 0))(W, X)  # in the order given
    assert J[0].shape == (2, 3) and J[1].shape == (2, 2, 3)
    assert_tree_close(J, numeric_jacobian(two_args, (W, X), (1, 0)))


@pytest.mark.parametrize("jac", [jacrev, jacfwd])
def test_dict_input(jac, x64):
    p = {"w": W, "x": X, "b": 0.7}
    J = jac(dict_in)(p)
    assert set(J) == {"w", "x", "b"}
    assert J["w"].shape == (2, 2, 3) and J["x"].shape == (2, 3) and J["b"].shape == (2,)
    assert_tree_close(J, numeric_jacobian(dict_in, (p,)))


@pytest.mark.parametrize("jac", [jacrev, jacfwd])
def test_tree_output_and_tuple_argnums(jac, x64):
    p = {"w": W, "b": np.array([0.1, -0.2])}
    J = jac(tree_out, argnums=(0, 1))(p, X)
    # output tree outside, then one entry per argnum, then the input tree
    assert J["h"][0]["w"].shape == (2, 2, 3) and J["h"][1].shape == (2, 3)
    assert J["stats"][0][0]["b"].shape == (2,) and J["stats"][1][1].shape == (3, 3)
    assert_tree_close(J, numeric_jacobian(tree_out, (p, X), (0, 1)))


@pytest.mark.parametrize("jac", [jacrev, jacfwd])
def test_tuple_input(jac, x64):
    t = (X, X[::-1].copy())
    J = jac(tuple_in)(t)
    assert isinstance(J, tuple) and J[0].shape == J[1].shape == (3, 3)
    assert_tree_close(J, numeric_jacobian(tuple_in, (t,)))


@pytest.mark.parametrize("jac", [jacrev, jacfwd])
def test_scalar_in_and_out(jac, x64):
    J = jac(scalar_fn)(0.8)
    assert np.shape(J) == ()
    np.testing.assert_allclose(J, np.cos(0.8) * 0.64 + 2 * 0.8 * np.sin(0.8), rtol=1e-12)
    # scalar output of a vector, vector output of a scalar
    np.testing.assert_allclose(jac(lambda x: jnp.sum(x ** 2))(X), 2 * X, rtol=1e-12)
    np.testing.assert_allclose(jac(lambda s: X * s ** 2)(0.5), X, rtol=1e-12)


@pytest.mark.parametrize("jac", [jacrev, jacfwd])
def test_has_aux(jac, x64):
    J, aux = jac(with_aux, has_aux=True)(X)
    np.testing.assert_allclose(J, np.diag(np.cos(X) * X + np.sin(X)), rtol=1e-12)
    assert set(aux) == {"norm", "count"} and int(aux["count"]) == 3
    np.testing.assert_allclose(aux["norm"], np.sum((np.sin(X) * X) ** 2), rtol=1e-12)


@pytest.mark.parametrize("jac", [jacrev, jacfwd])
def test_float32_preserved(jac):
    x = X.astype(np.float32)
    jw, jx = jac(two_args, argnums=(0, 1))(W.astype(np.float32), x)
    assert jw.dtype == jx.dtype == np.float32
    J = jac(dict_in)({"w": W.astype(np.float32), "x": x, "b": np.float32(0.7)})
    assert all(leaf.dtype == np.float32 for leaf in tree_leaves(J))


def test_mixed_dtypes_follow_jax(x64):
    # jacrev blocks take the input leaf's dtype, jacfwd blocks the output leaf's (as JAX)
    def f(p):
        return p["a"] * 2.0, jnp.sum(p["b"])
    p = {"a": X.astype(np.float32), "b": X}
    rev, fwd = jacrev(f)(p), jacfwd(f)(p)
    assert [leaf.dtype for leaf in tree_leaves(rev)] == [np.float32, np.float64] * 2
    assert [leaf.dtype for leaf in tree_leaves(fwd)] == [np.float32] * 2 + [np.float64] * 2
    assert_tree_close(rev, fwd, rtol=1e-6)
    np.testing.assert_allclose(rev[0]["a"], 2 * np.eye(3))
    np.testing.assert_allclose(rev[1]["b"], np.ones(3))
    # hessian blocks: JAX's jacfwd(jacrev(f)) gives H[i][j] the dtype of input i
    H = hessian(lambda q: jnp.sum(q["a"] ** 2) * jnp.sum(q["b"]))(p)
    assert [H[i][j].dtype for i in "ab" for j in "ab"] == [np.float32] * 2 + [np.float64] * 2
    np.testing.assert_allclose(H["a"]["b"], np.outer(2 * X, np.ones(3)), rtol=1e-6)


@pytest.mark.parametrize("jac", [jacrev, jacfwd])
def test_constant_and_list_outputs(jac):
    J = jac(lambda x: [x * 2.0, 1.0, None])(X.astype(np.float32))
    assert isinstance(J, list) and J[2] is None
    np.testing.assert_allclose(J[0], 2 * np.eye(3))
    np.testing.assert_array_equal(J[1], np.zeros(3))


def test_hessian_of_dict(x64):
    p = {"w": X[:2], "b": 0.5}
    H = hessian(dict_energy)(p)
    assert set(H) == {"w", "b"} and set(H["w"]) == {"w", "b"}
    assert H["w"]["w"].shape == (2, 2) and H["w"]["b"].shape == (2,) and np.shape(
        H["b"]["b"]) == ()
    g = lambda q: grad(dict_energy)(q)  # noqa: E731
    assert_tree_close(H, numeric_jacobian(g, (p,)), rtol=1e-6)


def test_hessian_array_argnums_and_aux(x64):
    def f(w, x):
        return jnp.sum(jnp.tanh(w @ x) ** 2), w.shape[0]
    H, aux = hessian(f, argnums=1, has_aux=True)(W, X)
    assert H.shape == (3, 3) and int(aux) == 2
    np.testing.assert_allclose(H, H.T, rtol=1e-10)
    np.testing.assert_allclose(H, numeric_jacobian(grad(lambda x: f(W, x)[0]), (X,)),
                               rtol=1e-6, atol=1e-8)


def stacked_sines(x):
    return jnp.sum(jnp.sin(jnp.stack([x, x * 2.0])))


@pytest.mark.parametrize("fn", [stacked_sines, AD.joined])
def test_hessian_through_stack_and_concatenate(x64, fn):
    """Forward over reverse through the VJP rules of stack and concatenate (vmapped inside
    jacfwd, they raised a rank error; forward mode now takes tangents of list displays)."""
    x = np.linspace(0.2, 1.1, 4)
    np.testing.assert_allclose(hessian(fn)(x), numeric_jacobian(grad(fn), (x,)), rtol=1e-6,
                               atol=1e-8)


def tuple_element_replaced(x, n):
    p = (x * 2.0, x * 3.0)
    for i in range(n):
        p = (jnp.sin(x) * i, p[1])
    return jnp.sum(p[0] * p[1])


def dict_entry_replaced(x, n):
    p = {"a": x * 2.0, "b": x * 3.0}
    for i in range(n):
        p = {"a": jnp.sin(x) * i, "b": p["b"]}
    return jnp.sum(p["a"] * p["b"])


@pytest.mark.parametrize("h", [hessian(tuple_element_replaced), jit(hessian(tuple_element_replaced)),
                               jacfwd(grad(dict_entry_replaced))],
                         ids=["hessian", "jit_hessian", "jacfwd_grad_dict"])
def test_hessian_through_a_container_element_replaced_in_a_loop(x64, h):
    """p[0]'s cotangent is 0.0 after the backward loop and is copied into another
    cotangent; forward over reverse under vmap (jacfwd's basis) gives its zero tangent a
    size-1 axis where branches meet, and cotangent_like(tangent, 0.0) raised a rank error."""
    x = np.linspace(-1.0, 1.2, 4)
    for n in (2, 1, 0):
        # f = 3 (n - 1) sum(x sin x) after a trip, else 6 sum(x ** 2)
        want = np.diag(3.0 * (n - 1) * (2 * np.cos(x) - x * np.sin(x)) if n else 12.0 + 0 * x)
        np.testing.assert_allclose(h(x, n), want, rtol=1e-12, atol=1e-12)


def fourth_power(x):
    return x ** 4


def test_third_order_by_reverse_mode(x64):
    """jacrev(jacrev(jacrev(f))) was all zeros: the second-order code it differentiates
    holds d_x = d_x + 0.0, whose adjoint (a copy onto itself) lost the cotangent."""
    x = np.array([0.5, -1.0, 2.0])
    want = np.zeros((3, 3, 3, 3))
    want[np.arange(3), np.arange(3), np.arange(3), np.arange(3)] = 24.0 * x
    np.testing.assert_allclose(jacrev(jacrev(jacrev(fourth_power)))(x), want, rtol=1e-12)


def accumulated_sines(x, n):
    acc = 0.0  # an array after a trip, the scalar with none
    for i in range(n):
        acc = acc + jnp.sin(x) * i
    return jnp.sum(acc * acc)


@pytest.mark.parametrize("h", [hessian(accumulated_sines), jit(hessian(accumulated_sines)),
                               jacrev(grad(accumulated_sines))],
                         ids=["hessian", "jit_hessian", "jacrev_grad"])
def test_second_order_through_an_array_variable_holding_its_starting_scalar(x64, h):
    """acc and its cotangent are typed as arrays but hold the 0.0 they start as where no
    trip set them; vmap over the basis broadcast such a value to (B,), one axis short, so
    unbroadcast and cotangent_like lined the batch axis up with x's axis (n = 0: 'cannot
    reshape array of size 1 into shape (4,)')."""
    x = np.linspace(-1.0, 1.2, 4)
    for n in (3, 2, 1, 0):
        c = n * (n - 1) / 2  # f = c**2 sum(sin(x)**2)
        H = h(x, n)
        assert H.shape == (4, 4)
        np.testing.assert_allclose(H, np.diag(2.0 * c ** 2 * np.cos(2.0 * x)), rtol=1e-12,
                                   atol=1e-12)


@pytest.mark.parametrize("h", [jacrev(jacrev(AD.accumulator_skips_its_first_trip)),
                               jacrev(grad(AD.accumulator_skips_its_first_trip))],
                         ids=["jacrev_jacrev", "jacrev_grad"])
def test_second_order_where_an_accumulator_skips_its_first_trip(x64, h):
    """With one trip acc keeps its 0.0 (the trip continues before setting it): a rank
    error in cotangent_like under vmap. f = sum(acc) is linear in x."""
    x = np.linspace(-1.0, 1.2, 4)
    for n in (3, 1, 0):
        H = h(x, n)
        assert H.shape == (4, 4)
        np.testing.assert_array_equal(H, np.zeros((4, 4)))


def test_second_order_through_an_array_variable_holding_its_starting_scalar_numba(
        numba_backend):
    """Numba's code (where acc is an array on every path) is unchanged and runs with
    trips; with none the call runs on the python backend, which gave the error above."""
    x = np.linspace(-1.0, 1.2, 4).astype(np.float32)
    jitted = jit(hessian(accumulated_sines))
    np.testing.assert_allclose(jitted(x, 3), np.diag(18.0 * np.cos(2.0 * x)), rtol=1e-5,
                               atol=1e-5)
    (compiled,) = jitted.cache.values()
    assert compiled.backend == "numba" and getattr(compiled, "_twin", None) is None
    np.testing.assert_array_equal(jitted(x, 0), np.zeros((4, 4), np.float32))


# --- compiled ----------------------------------------------------------------------------------

@pytest.mark.parametrize("jac", [jacrev, jacfwd])
def test_under_jit(jac, x64):
    expected = numeric_jacobian(vector_fn, (X,))
    np.testing.assert_allclose(jit(jac(vector_fn))(X), expected, rtol=1e-6)
    p = {"w": W, "b": np.array([0.1, -0.2])}
    assert_tree_close(jit(jac(tree_out, argnums=(0, 1)))(p, X),
                      numeric_jacobian(tree_out, (p, X), (0, 1)))

    @jit
    def caller(x):  # a Jacobian called from compiled code
        return jnp.sum(jac(vector_fn)(x) ** 2)
    np.testing.assert_allclose(caller(X), np.sum(expected ** 2), rtol=1e-6)


def _two_args(x, y):
    return jnp.sin(x) * y[0] + x ** 2


@pytest.mark.parametrize("transform", [jacfwd, jacrev])
def test_repeated_argnums(x64, transform):
    """argnums naming an argument twice gives its block twice, as in JAX."""
    x, y = np.array([0.1, 0.5, 0.9]), np.array([2.0, 3.0])
    jx, jy = jacrev(_two_args)(x, y), jacrev(_two_args, argnums=1)(x, y)
    got = transform(_two_args, argnums=(1, 0, 1))(x, y)
    for block, want in zip(got, (jy, jx, jy)):
        np.testing.assert_allclose(block, want, rtol=1e-12)


def test_one_sweep_batched_over_the_basis():
    """As in JAX, the Jacobian is one vjp (jvp) sweep under vmap, not a loop of sweeps."""
    for transform in (jacrev, jacfwd):
        source = astjax.make_source(jit(transform(tree_out, argnums=(0, 1))))(
            {"w": W, "b": np.zeros(2)}, X)
        assert f"{transform.__name__}_batched(" in source and "_batched(args, " in source
        assert "for i in range(n):" not in source and "for j in range(m):" not in source
        # jacfwd's sweep gives f's output (its layout) too, and jacrev's batched backward
        # sweeps read the residuals of one forward sweep: f itself is not called
        assert "= tree_out(" not in source, source
        assert ("= tree_out_fwd_wrt_0_1(" in source) == (transform is jacrev), source


def test_a_step_that_does_not_batch_loops_over_the_basis(x64):
    """vmap of a recursive jvp does not type (the recursion's batch size is unknown while it
    is typed): jacfwd then loops over the basis vectors, with the same values."""
    from .ad_programs import recursive
    x = np.array([0.3, 0.7, 1.1])
    assert "for j in range(m):" in astjax.make_source(jacfwd(recursive))(x, 3)
    np.testing.assert_allclose(jacfwd(recursive)(x, 3), jacrev(recursive)(x, 3), rtol=1e-12)


def scaled(x):
    return x * x[0]


def test_numba_backend(numba_backend):
    x = X.astype(np.float32)
    jitted = jit(jacrev(scaled))
    J = jitted(x)
    (compiled,) = jitted.cache.values()
    assert compiled.backend == "numba", compiled.fallback_reason
    assert J.dtype == np.float32
    expected = x[0] * np.eye(3)
    expected[:, 0] += x
    np.testing.assert_allclose(J, expected, rtol=1e-6)


# --- errors ------------------------------------------------------------------------------------

@pytest.mark.parametrize("jac", [jacrev, jacfwd])
def test_integer_input_is_a_type_error(jac):
    with pytest.raises(TypeError, match=f"{jac.__name__} requires real.*but got int") as e:
        jac(vector_fn)(np.arange(3, dtype=np.int32))
    # located at the user's function
    assert f"test_jacobian.py:{inspect.getsourcelines(vector_fn)[1]}" in str(e.value)
    with pytest.raises(TypeError, match="but got int"):
        jac(dict_in)({"w": W, "x": np.arange(3), "b": 0.7})


def test_allow_int_leaves_float_inputs_alone():
    np.testing.assert_allclose(jacrev(vector_fn, allow_int=True)(X), jacrev(vector_fn)(X))


@pytest.mark.parametrize("jac", [jacrev, jacfwd])
def test_integer_output_is_a_type_error(jac):
    with pytest.raises(TypeError, match=f"{jac.__name__} requires real-valued outputs.*int"):
        jac(int_out)(X)


@pytest.mark.parametrize("jac", [jacrev, jacfwd, hessian])
def test_bad_argnums_like_grad(jac):
    with pytest.raises(ValueError, match="argnums"):
        grad(two_args, argnums=2)(W, X)
    with pytest.raises(ValueError, match="argnums"):
        jac(two_args, argnums=2)(W, X)
    with pytest.raises(ValueError, match="argnums"):
        jac(two_args, argnums=(0, -3))(W, X)


@pytest.mark.parametrize("jac", [jacrev, jacfwd])
def test_has_aux_needs_a_pair(jac):
    with pytest.raises(TypeError, match="has_aux=True requires vector_fn to return a pair"):
        jac(vector_fn, has_aux=True)(X)


@pytest.mark.parametrize("jac", [jacrev, jacfwd, hessian])
def test_holomorphic_needs_complex_inputs(jac):
    with pytest.raises(TypeError, match="holomorphic=True requires inputs with complex dtype"):
        jac(vector_fn, holomorphic=True)(X)


def test_jacrev_of_a_real_function_of_complex_inputs(x64):
    """Row i is output i's gradient in JAX's convention, df_i/dx - i df_i/dy (central
    differences); jacfwd of complex inputs needs holomorphic=True here."""
    from . import ad_programs as P
    z = np.array([1 + 2j, 0.5 - 1j, -0.3 + 0.4j])
    h = 1e-6
    f = P.complex_to_real_vector
    want = np.stack([(np.asarray(f(z + h * e)) - np.asarray(f(z - h * e))) / (2 * h)
                     - 1j * (np.asarray(f(z + 1j * h * e)) - np.asarray(f(z - 1j * h * e)))
                     / (2 * h) for e in np.eye(3)], axis=-1)
    np.testing.assert_allclose(jacrev(f)(z), want, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(jit(jacrev(f))(z), want, rtol=1e-6, atol=1e-8)


def test_holomorphic_jacobians_are_the_complex_derivative(x64):
    """With holomorphic=True, f'(z), checked against central differences along the real
    axis (for a holomorphic f they equal those along any direction)."""
    from . import ad_programs as P
    z = np.array([1 + 2j, 0.5 - 1j, -0.3 + 0.4j])
    h = 1e-6

    def fd(fn):
        return np.stack([(np.asarray(fn(z + h * e)) - np.asarray(fn(z - h * e))) / (2 * h)
                         for e in np.eye(3)], axis=-1)
    want = fd(P.holomorphic_vector)
    for jac in (jacfwd, jacrev):
        np.testing.assert_allclose(jac(P.holomorphic_vector, holomorphic=True)(z), want,
                                   rtol=1e-6)
    np.testing.assert_allclose(grad(P.holomorphic_scalar, holomorphic=True)(z),
                               fd(P.holomorphic_scalar), rtol=1e-6)
    np.testing.assert_allclose(hessian(P.holomorphic_scalar, holomorphic=True)(z),
                               fd(grad(P.holomorphic_scalar, holomorphic=True)), rtol=1e-5)
    with pytest.raises(TypeError, match="grad requires real-valued outputs"):
        grad(P.holomorphic_scalar)(z)
    # without holomorphic=True, JAX's TypeErrors: forward mode needs real inputs, reverse
    # mode real outputs
    for jac, f in ((jacfwd, P.holomorphic_vector), (hessian, P.holomorphic_scalar)):
        with pytest.raises(TypeError, match=f"jacfwd requires real-valued inputs.*{f.__name__}"):
            jac(f)(z)
    with pytest.raises(TypeError, match="jacrev requires real-valued outputs"):
        jacrev(P.holomorphic_vector)(z)


@pytest.mark.parametrize("compiled", [False, True])
def test_jacfwd_of_complex_outputs_of_real_inputs(x64, compiled):
    """Column j is d(u + iv)/dx_j (central differences), a real output's block stays real,
    and an integer input's jacrev block (allow_int) is zeros of its dtype, as in JAX."""
    from . import ad_programs as P
    x, n = np.array([0.3, -0.7, 1.1]), np.array([1, 2, 3])
    h = 1e-6
    wrap = jit if compiled else (lambda f: f)
    columns = [[(np.asarray(y1) - np.asarray(y0)) / (2 * h) for y0, y1 in zip(
        P.real_to_complex_pair(x - h * e, n), P.real_to_complex_pair(x + h * e, n))]
        for e in np.eye(3)]  # columns[input j][output k]
    got = wrap(jacfwd(P.real_to_complex_pair))(x, n)
    assert got[0].dtype == np.complex128 and got[1].dtype == np.float64
    for k, block in enumerate(got):
        np.testing.assert_allclose(block, np.stack([c[k] for c in columns], axis=-1),
                                   rtol=1e-6, atol=1e-9)
    loss = lambda x, n: jnp.sum(jnp.real(P.real_to_complex_pair(x, n)[0]))  # noqa: E731
    gx, gn = wrap(jacrev(loss, argnums=(0, 1), allow_int=True))(x, n)
    np.testing.assert_allclose(gx, grad(loss)(x, n), rtol=1e-12)
    assert gn.dtype == n.dtype and gn.shape == n.shape and not np.any(gn)
    rows = wrap(jacrev(lambda n, x: P.real_to_complex_pair(x, n)[1], allow_int=True))(n, x)
    assert rows.dtype == n.dtype and rows.shape == (3, 3) and not np.any(rows)


def test_jacobian_is_jacrev():
    # "Thinking in JAX": jacobian(jnp.exp)(x) (astjax had no astjax.jacobian)
    x = jnp.arange(3.0)
    np.testing.assert_allclose(astjax.jacobian(jnp.exp)(x), np.diag(np.exp(np.arange(3.0))),
                               rtol=1e-6)
    assert astjax.jacobian is jacrev


_forward_runs = []


def _count_forward_run(x):
    _forward_runs.append(x)


def _counted(x):
    astjax.debug.callback(_count_forward_run, x)
    y = jnp.sin(x) * x
    for _ in range(2):  # (the backward sweep pops a tape: a list among the residuals)
        y = y * 1.5
    return y[:2] * 1.3333333


def _counted_sum(x):  # (the loop in the function hessian differentiates)
    astjax.debug.callback(_count_forward_run, x)
    y = jnp.sin(x) * x
    for _ in range(2):
        y = y * 1.5
    return jnp.sum(y[:2]) * 1.3333333


def _counted_straight(x):  # (no loop: hessian's inner jacrev splits, see the test)
    astjax.debug.callback(_count_forward_run, x)
    return jnp.sin(x) * x


def _vjp_in_jit(x):
    y, pullback = astjax.vjp(_counted, x)
    return pullback(jnp.ones_like(y))[0]


def test_forward_sweep_runs_once():
    """As in JAX, f's forward statements run once per call of jacrev, hessian, and vjp with
    its pullback, eagerly or in compiled code (each ran them twice: for f's output, then
    again inside the backward sweep); the values stay those of finite differences. hessian
    of a function that loops ran them twice too: its split derivative is refused when
    differentiated again (its tapes are lists), and jacrev called f for its output besides
    the sweep, which now gives it. (Under hessian a callee that loops still runs twice: its
    split is refused there too, and the caller's derivative reruns it as a checkpoint.)"""
    x = np.float32([0.5, 1.0, 1.5])
    expected = numeric_jacobian(lambda v: np.sin(v)[:2] * v[:2] * 3.0, (x.astype(float),))
    second = np.diag(np.r_[3.0 * (2.0 * np.cos(x[:2]) - x[:2] * np.sin(x[:2])), 0.0])
    for fn, check in ((jacrev(_counted), expected),
                      (hessian(lambda v: jnp.sum(_counted_straight(v))), None),
                      (hessian(_counted_sum), second), (jit(hessian(_counted_sum)), second),
                      (jit(_vjp_in_jit), expected.sum(0))):
        _forward_runs.clear()
        out = fn(x)
        assert len(_forward_runs) == 1, fn
        if check is not None:
            np.testing.assert_allclose(out, check, rtol=1e-4, atol=1e-5)
    _forward_runs.clear()
    out, pullback = astjax.vjp(_counted, x)  # eagerly, and its pullback called twice
    for scale in (1.0, 2.0):
        np.testing.assert_allclose(pullback(np.float32([scale, scale]))[0],
                                   scale * expected.sum(0), rtol=1e-4, atol=1e-5)
    assert len(_forward_runs) == 1
    _forward_runs.clear()  # with has_aux and a tree of inputs
    out, pullback, aux = astjax.vjp(lambda d: (_counted(d["x"]), d["x"][0]), {"x": x},
                                    has_aux=True)
    assert float(aux) == 0.5
    np.testing.assert_allclose(pullback(np.float32([1.0, 1.0]))[0]["x"], expected.sum(0),
                               rtol=1e-4, atol=1e-5)
    assert len(_forward_runs) == 1


def test_eager_pullback_uses_the_forward_calls_split(x64):
    """Eager vjp's pullback runs the backward sweep of the very split whose forward sweep
    vjp ran: with the two compiled from separate splits, the pullback of vjp(jacrev(
    log_ndtr)) read residuals of another layout ('cannot broadcast a non-scalar to a
    scalar array'). jit and vmap of the pullback still work (they rerun f, closed over
    the primals)."""
    from astjax.scipy.special import log_ndtr
    from astjax.test_util import check_grads
    x = np.array([-30.0, -12.0, 0.5, 6.0])
    check_grads(log_ndtr, (x,), order=2, modes=("fwd", "rev"), eps=1e-5, rtol=1e-5,
                atol=1e-7)
    _, pullback = astjax.vjp(lambda v: jnp.sin(v) * v, x)
    expected = np.cos(x) * x + np.sin(x)
    np.testing.assert_allclose(jit(pullback)(np.ones(4))[0], expected, rtol=1e-12)
    np.testing.assert_allclose(astjax.vmap(pullback)(np.eye(4))[0], np.diag(expected),
                               rtol=1e-12, atol=1e-15)


def _same_conv_loss(x, k):
    return jnp.sum(astjax.lax.conv(x, k, (2,), "SAME") ** 2)


def test_eager_pullback_takes_the_residuals_as_typed():
    """The residuals of a SAME convolution hold sizes the python backend computes as int64;
    vjp's pullback passed them back as inputs, which warned 'int64 input converted to
    int32' as if the user's data were narrowed. The cotangents equal grad's."""
    import warnings
    x = rng.uniform(-1, 1, (1, 1, 8)).astype(np.float32)
    k = rng.uniform(-1, 1, (1, 1, 3)).astype(np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _, pullback = astjax.vjp(_same_conv_loss, x, k)
        cotangents = pullback(np.float32(1.0))
    expected = grad(_same_conv_loss, argnums=(0, 1))(x, k)
    for got, want in zip(cotangents, expected):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def _sin_times(x, y):
    return jnp.sin(x) * y


def test_a_python_number_written_in_compiled_code_is_differentiated():
    """grad(f)(1.0, y) inside jit: the 1.0 is traced, as in JAX (it was a constant, so grad
    returned None, jacfwd 0.0 and jacrev/hessian None; jvp and linearize 0.0, vjp None);
    an int is JAX's TypeError."""
    c, s = np.cos(1.0) * 2.0, -np.sin(1.0) * 2.0
    cases = [(lambda y: astjax.grad(_sin_times)(1.0, y), c),
             (lambda y: astjax.value_and_grad(_sin_times, argnums=(0, 1))(1.0, y)[1][0], c),
             (lambda y: astjax.jacfwd(_sin_times)(1.0, y), c),
             (lambda y: astjax.jacrev(_sin_times)(1.0, y), c),
             (lambda y: astjax.hessian(_sin_times)(1.0, y), s),
             (lambda y: astjax.jvp(_sin_times, (1.0, y), (1.0, 0.0))[1], c),
             (lambda y: astjax.vjp(_sin_times, 1.0, y)[1](1.0)[0], c),
             (lambda y: astjax.linearize(_sin_times, 1.0, y)[1](1.0, 0.0), c)]
    for fn, want in cases:
        got = astjax.jit(fn)(2.0)
        assert got is not None and np.asarray(got).dtype == np.float32
        np.testing.assert_allclose(got, want, rtol=1e-6)
    with pytest.raises(TypeError, match="real- or complex-valued inputs"):
        astjax.jit(lambda y: astjax.grad(_sin_times)(1, y))(2.0)
