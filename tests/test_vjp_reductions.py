"""VJP rules of the reductions against central finite differences (every axis and keepdims),
JAX's tie and zero conventions, dtypes, and the rules compiled."""
import numpy as np
import pytest

import astjax
import astjax.numpy as jnp
from astjax._src.ops.registry import REGISTRY
from astjax.test_util import check_grads
from .test_vjp_elementwise import check_vjp, rule

A = np.random.default_rng(7).uniform(0.5, 1.5, (2, 3, 4)) * np.array([1, -1, 1, 1])
AXES = [None, 0, 1, 2, -1, -3, (0, 2), (2, 0), (-1, 1), (0, 1, 2), (), [1, 2]]
REDUCTIONS = ["sum", "mean", "prod", "max", "min", "var", "std"]


@pytest.mark.parametrize("name", REDUCTIONS)
@pytest.mark.parametrize("axis", AXES)
@pytest.mark.parametrize("keepdims", [False, True])
def test_reduction(x64, name, axis, keepdims):
    if name == "std" and axis == ():
        return  # a std of single elements is 0: not differentiable (test_std_at_zero)
    (ct,) = check_vjp(name, {"a": A}, {"axis": axis, "keepdims": keepdims})
    assert ct.shape == A.shape  # not unbroadcast by the AD transform: the operand's shape


@pytest.mark.parametrize("name", REDUCTIONS)
def test_zero_dim_operand(x64, name):
    if name != "std":
        check_vjp(name, {"a": np.asarray(1.7)})
        check_vjp(name, {"a": np.asarray(1.7)}, {"axis": (), "keepdims": True})


def test_std_at_zero_is_nan_as_jax():
    a = jnp.asarray(np.array([[2.0, 2.0], [1.0, 3.0]], np.float32))
    z = jnp.std(a, axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        (ct,) = rule("std")(z, a, jnp.ones_like(z), axis=1)
    assert np.all(np.isnan(np.asarray(ct)[0]))
    np.testing.assert_allclose(np.asarray(ct)[1], [-0.5, 0.5])


@pytest.mark.parametrize("name", ["var", "std"])
@pytest.mark.parametrize("params", [{"ddof": 1}, {"ddof": 2, "axis": -1},
                                    {"correction": 1, "axis": (0, 2), "keepdims": True}])
def test_variance_ddof(x64, name, params):
    check_vjp(name, {"a": A}, params)


@pytest.mark.parametrize("axis", [None, 0, 1, 2, -1, -2])
def test_prod_with_zeros(x64, axis):
    """One zero in a slice, two zeros, none: the product of the others, never 0 / 0."""
    a = A.copy()
    a[0, 1, 2] = 0.0
    a[1, :, 3] = 0.0
    a[1, 2, :2] = 0.0
    (ct,) = check_vjp("prod", {"a": a}, {"axis": axis})
    assert np.all(np.isfinite(np.asarray(ct)))


def test_prod_zero_cotangents_exactly():
    a = jnp.asarray(np.array([[2.0, 0.0, 3.0], [0.0, 0.0, 5.0], [1.0, 2.0, 4.0]], np.float32))
    z = jnp.prod(a, axis=1)
    (ct,) = rule("prod")(z, a, jnp.ones_like(z), axis=1)
    np.testing.assert_array_equal(np.asarray(ct), [[0, 6, 0], [0, 0, 0], [8, 4, 2]])


@pytest.mark.parametrize("axis", [None, 0, 1, -1])
def test_prod_beside_inf_and_nan_is_the_product_of_the_others(axis):
    """No division: beside an inf the others' product is finite, as in JAX (x / x gave
    nan), and a nan spoils only the other elements' derivatives."""
    a = np.array([[0.5, np.inf, 2.0, 3.0], [0.5, np.nan, 2.0, 1.5], [0.5, np.inf, 0.0, 2.0]])
    with np.errstate(invalid="ignore"):
        got = np.asarray(astjax.grad(lambda a: jnp.sum(jnp.prod(a, axis=axis)))(a))

        def others(v):  # NumPy: the product of the other elements, one by one
            return np.array([np.prod(np.delete(v, i)) for i in range(v.size)])
        if axis is None:
            want = others(a.ravel()).reshape(a.shape)
        else:
            want = np.apply_along_axis(others, axis, a)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("name,expected", [("max", [0, 1 / 3, 0, 1 / 3, 1 / 3]),
                                           ("min", [0.5, 0, 0.5, 0, 0])])
def test_max_min_split_ties_equally(name, expected):
    a = jnp.asarray(np.array([1.0, 4.0, 1.0, 4.0, 4.0], np.float32))
    z = REGISTRY[name](a)
    (ct,) = rule(name)(z, a, jnp.ones_like(z))
    np.testing.assert_allclose(np.asarray(ct), expected)


@pytest.mark.parametrize("name", ["cumsum", "cumprod"])
@pytest.mark.parametrize("axis", [None, 0, 1, 2, -1, -3])
def test_cumulative(x64, name, axis):
    (ct,) = check_vjp(name, {"a": A}, {"axis": axis})
    assert ct.shape == A.shape


@pytest.mark.parametrize("name", ["cumsum", "cumprod"])
@pytest.mark.parametrize("axis", [None, 0, -1])
def test_cumulative_zero_dim(x64, name, axis):
    (ct,) = check_vjp(name, {"a": np.asarray(1.3)}, {"axis": axis})
    assert ct.shape == ()


@pytest.mark.parametrize("axis", [None, 0, 1, -1])
def test_cumprod_with_zeros(x64, axis):
    """Before the first zero, at it (one zero so far, or a second one later), after it."""
    a = np.random.default_rng(3).uniform(0.5, 1.5, (3, 5))
    a[0, 1] = 0.0
    a[1, 1] = a[1, 3] = 0.0
    a[2, 4] = 0.0
    a[2, 0] = 0.0
    check_vjp("cumprod", {"a": a}, {"axis": axis})


@pytest.mark.parametrize("name,params", [
    ("sum", {"axis": 1, "dtype": np.float64}), ("mean", {"dtype": np.float64}),
    ("prod", {"axis": (0, 2), "dtype": np.float64}), ("var", {"axis": 0, "dtype": np.float64}),
    ("std", {"dtype": np.float64, "keepdims": True}), ("cumsum", {"axis": 1, "dtype": np.float64}),
    ("cumprod", {"dtype": np.float64})])
def test_dtype_param_casts_back(x64, name, params):
    """A float32 operand reduced in float64 gets a float32 cotangent."""
    a = jnp.asarray(A.astype(np.float32))
    z = REGISTRY[name](a, **params)
    assert z.dtype == np.float64
    (ct,) = rule(name)(z, a, jnp.ones_like(z), **params)
    assert ct.dtype == np.float32 and ct.shape == a.shape
    (reference,) = rule(name)(z, jnp.asarray(A), jnp.ones_like(z), **params)
    np.testing.assert_allclose(np.asarray(ct), np.asarray(reference), rtol=1e-5)


@pytest.mark.parametrize("name", REDUCTIONS + ["cumsum", "cumprod"])
@pytest.mark.parametrize("axis", [None, 1])
def test_float32_stays_float32(name, axis):
    a = jnp.asarray(A.astype(np.float32))
    z = REGISTRY[name](a, axis=axis)
    (ct,) = rule(name)(z, a, jnp.ones_like(z), axis=axis)
    assert ct.dtype == np.float32


def test_every_differentiable_reduction_has_a_rule():
    ops = [op for op in REGISTRY.values() if (op.impl.__module__ or "").endswith("ops.reductions")]
    assert {op.name for op in ops} >= set(REDUCTIONS) | {"cumsum", "cumprod"}
    assert [op.name for op in ops if op.differentiable and "vjp" not in op.rules] == []


COMPILED_CASES = [(name, params) for name in REDUCTIONS
                  for params in ({}, {"axis": 1}, {"axis": (0, -1), "keepdims": True})]
COMPILED_CASES += [(name, params) for name in ("cumsum", "cumprod")
                   for params in ({}, {"axis": 1}, {"axis": -1})]
COMPILED_CASES += [(name, {"axis": -1, "dtype": np.float32})
                   for name in ("sum", "mean", "prod", "var", "std", "cumsum", "cumprod")]


@pytest.mark.parametrize("name,params", COMPILED_CASES)
def test_compiled_rule_matches_eager(name, params):
    a = jnp.asarray(A.astype(np.float32))
    z = REGISTRY[name](a, **params)
    g = jnp.asarray(np.random.default_rng(5).standard_normal(z.shape).astype(z.dtype))
    (eager,) = rule(name)(z, a, g, **params)
    (compiled,) = astjax.jit(rule(name), static_argnames=tuple(params))(z, a, g, **params)
    assert compiled.dtype == eager.dtype == np.float32
    np.testing.assert_allclose(np.asarray(compiled), np.asarray(eager), rtol=1e-6)


def test_compiled_dtype_param_casts_back(x64):
    a = jnp.asarray(A.astype(np.float32))
    z = jnp.sum(a, axis=0, dtype=np.float64)
    (ct,) = astjax.jit(rule("sum"), static_argnames=("axis", "dtype"))(
        z, a, jnp.ones_like(z), axis=0, dtype=np.float64)
    assert ct.dtype == np.float32


def _reduced(a):
    b = a * a
    return (jnp.sum(jnp.prod(a, axis=1) ** 2) + jnp.sum(jnp.cumprod(a, axis=-1) * a)
            + jnp.sum(jnp.cumsum(b) * b.ravel()) + jnp.sum(jnp.max(b, axis=(0, 2)) ** 2)
            + jnp.min(b) * jnp.mean(b, axis=-1, keepdims=True).sum()
            + jnp.sum(jnp.var(a, axis=0, ddof=1) * jnp.std(b, axis=(1, 2), keepdims=True)))


def test_second_order_through_the_transform(x64):
    """The rules compile and differentiate again: d(grad) against finite differences (away
    from zeros: prod's and cumprod's cotangents at an exact zero are right, their own
    derivatives there are not, see vjp_reductions)."""
    check_grads(_reduced, (A,), order=2, modes=("rev",))
