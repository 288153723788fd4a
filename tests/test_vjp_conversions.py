"""VJP rules of the conversion and creation ops against central finite differences, and
their conventions: which operands get None, dtypes, sequence operands, compiled rules."""
import numpy as np
import pytest

import astjax
import astjax.numpy as jnp
from astjax._src.ops.registry import REGISTRY
from astjax.test_util import check_grads
from .test_vjp_elementwise import EPS, check_vjp, rule

RNG = np.random.default_rng(11)
X = RNG.uniform(-2.0, 2.0, (3, 4))
ROW = RNG.uniform(-2.0, 2.0, (4,))


# --- astype ------------------------------------------------------------------------------------

@pytest.mark.parametrize("src,dst", [(np.float32, np.float64), (np.float64, np.float32),
                                     (np.float32, np.float16), (np.float64, np.complex128)])
def test_astype_float_cotangent_goes_back_to_the_input_dtype(x64, src, dst):
    x = jnp.asarray(X.astype(src))
    z = x.astype(dst)
    g = jnp.asarray((X * 3).astype(dst) + (1j if np.dtype(dst).kind == "c" else 0))
    (ct,) = rule("astype")(z, x, g, dtype=dst)
    assert ct.dtype == src
    np.testing.assert_allclose(np.asarray(ct), np.real(np.asarray(g)).astype(src), rtol=1e-3)


def test_astype_fd(x64):
    check_vjp("astype", {"x": X}, {"dtype": np.float64})


@pytest.mark.parametrize("src,dst", [(np.float32, np.int32), (np.int32, np.float32),
                                     (np.float32, np.bool_)])
def test_astype_through_integers_has_no_gradient(src, dst):
    x = jnp.asarray(X.astype(src))
    z = x.astype(dst)
    assert rule("astype")(z, x, jnp.ones_like(z), dtype=dst) == (None,)


# --- where, clip, nan_to_num --------------------------------------------------------------------

@pytest.mark.parametrize("shapes", [((3, 4), (3, 4), (3, 4)), ((3, 4), (4,), ()),
                                    ((4,), (3, 1), (3, 4)), ((), (3, 4), (4,))])
def test_where(x64, shapes):
    cond = RNG.random(shapes[0]) > 0.5
    cts = check_vjp("where", {"condition": np.asarray(cond), "x": RNG.standard_normal(shapes[1]),
                              "y": RNG.standard_normal(shapes[2])}, wrt=["x", "y"])
    assert cts[0] is None


CLIP_CASES = [
    {"min": -0.5, "max": 0.7}, {"min": RNG.uniform(-1, 0, (4,)), "max": 1.0},
    {"min": RNG.uniform(-1, 0, (3, 1)), "max": RNG.uniform(0, 1, (3, 4))},
    {"min": -0.5}, {"max": RNG.uniform(-1, 1, (4,))}, {"a_min": RNG.uniform(-1, 0, (4,))},
    {"a_max": np.asarray(0.3)}, {"a_min": np.asarray(-0.2), "a_max": np.asarray(0.4)},
    {"min": np.asarray(0.5), "a_max": np.asarray(-0.5)},  # lower > upper: upper wins
    {},
]


@pytest.mark.parametrize("bounds", CLIP_CASES)
def test_clip(x64, bounds):
    cts = check_vjp("clip", {"arr": X, **bounds})
    for name, ct in zip(REGISTRY["clip"].operands, cts):
        assert (ct is None) == (name not in bounds and name != "arr"), name


def test_clip_at_the_bounds_shares_as_jax():
    """x == min or x == max: the gradient is shared between x and the bound, as JAX's
    clip (minimum(max, maximum(min, x))) shares ties; the upper bound wins where
    min > max. Values: jax.grad of sum(clip(x, lo, hi) * [1..6]) and jax.jvp, JAX 0.10.2."""
    x = np.array([0.0, 2.0, 1.0, -1.0, 3.0, 5.0], np.float32)
    lo = np.array([0.0, 0.0, 0.0, 0.0, 0.0, 6.0], np.float32)
    hi = np.array([2.0, 2.0, 2.0, 2.0, 2.0, 4.0], np.float32)
    weights = np.arange(1.0, 7.0, dtype=np.float32)
    f = lambda x, lo, hi: jnp.sum(jnp.clip(x, lo, hi) * weights)  # noqa: E731
    for grad in (astjax.grad(f, argnums=(0, 1, 2)), astjax.jit(astjax.grad(f, (0, 1, 2)))):
        d_arr, d_lo, d_hi = grad(x, lo, hi)
        np.testing.assert_array_equal(np.asarray(d_arr), [0.5, 1, 3, 0, 0, 0])
        np.testing.assert_array_equal(np.asarray(d_lo), [0.5, 0, 0, 4, 0, 0])
        np.testing.assert_array_equal(np.asarray(d_hi), [0, 1, 0, 0, 5, 6])
    tangent = astjax.jvp(lambda x: jnp.clip(x, lo, hi), (x,), (np.ones(6, np.float32),))[1]
    np.testing.assert_array_equal(np.asarray(tangent), [0.5, 0.5, 1, 0, 0, 0])
    assert float(astjax.grad(lambda x: jnp.clip(x, 0.0))(0.0)) == 0.5
    assert float(astjax.grad(lambda x: jnp.clip(x, max=2.0))(2.0)) == 0.5


def test_nan_to_num(x64):
    check_vjp("nan_to_num", {"x": X}, {"nan": 1.5})
    x = jnp.asarray(np.array([1.0, np.nan, np.inf, -np.inf, -2.0], np.float32))
    (ct,) = rule("nan_to_num")(jnp.nan_to_num(x), x, jnp.full_like(x, 3.0))
    assert ct.dtype == np.float32
    np.testing.assert_array_equal(np.asarray(ct), [3, 0, 0, 0, 3])


# --- array / asarray ----------------------------------------------------------------------------

def _fd_array(name, seq, params, paths):
    """Finite differences of jnp.<name>(seq) in each array leaf at ``paths``."""
    op = REGISTRY[name]
    z = op(seq, **params)
    g = jnp.asarray(RNG.standard_normal(z.shape))
    (cts,) = rule(name)(z, seq, g, **params)

    def replaced(obj, path, value):
        if not path:
            return value
        parts = list(obj)
        parts[path[0]] = replaced(obj[path[0]], path[1:], value)
        return type(obj)(parts)

    for path in paths:
        leaf, ct = seq, cts
        for i in path:
            leaf, ct = leaf[i], ct[i]
        v = RNG.standard_normal(np.shape(leaf))
        plus = op(replaced(seq, path, leaf + EPS * v), **params)
        minus = op(replaced(seq, path, leaf - EPS * v), **params)
        numeric = np.sum(np.asarray(g) * (np.asarray(plus) - np.asarray(minus))) / (2 * EPS)
        assert np.shape(ct) == np.shape(leaf)
        np.testing.assert_allclose(np.sum(np.asarray(ct) * v), numeric, rtol=1e-6)
    return cts


@pytest.mark.parametrize("name", ["array", "asarray"])
def test_array_of_a_sequence(x64, name):
    a, b = jnp.asarray(X), jnp.asarray(X * 2 + 1)
    cts = _fd_array(name, [a, b], {}, [(0,), (1,)])
    assert isinstance(cts, tuple) and len(cts) == 2


def test_array_of_nested_sequences_with_numbers(x64):
    s, t = jnp.asarray(np.float64(0.5)), jnp.asarray(np.float64(-1.5))
    seq = [(s, 2.0, t), [1.0, t, s]]
    cts = _fd_array("array", seq, {}, [(0, 0), (0, 2), (1, 1), (1, 2)])
    assert cts[0][1] is None and cts[1][0] is None  # numbers are constants


def test_array_ndmin(x64):
    seq = [jnp.asarray(ROW), jnp.asarray(ROW * 3)]
    cts = _fd_array("array", seq, {"ndmin": 4}, [(0,), (1,)])
    assert cts[0].shape == (4,)
    x = jnp.asarray(ROW)
    z = jnp.array(x, ndmin=3)
    (ct,) = rule("array")(z, x, jnp.ones_like(z) * 2.0, ndmin=3)
    assert ct.shape == (4,)
    np.testing.assert_array_equal(np.asarray(ct), 2.0)


def test_array_of_an_array(x64):
    check_vjp("array", {"object": X})
    check_vjp("asarray", {"a": X})


def test_array_dtype_param_casts_back(x64):
    a = jnp.asarray(ROW.astype(np.float32))
    b = jnp.asarray(ROW)
    z = jnp.array([a, b])  # promoted to float64
    ((ca, cb),) = rule("array")(z, [a, b], jnp.ones_like(z))
    assert ca.dtype == np.float32 and cb.dtype == np.float64
    z = jnp.asarray(a, dtype=np.float64)
    (ct,) = rule("asarray")(z, a, jnp.ones_like(z), dtype=np.float64)
    assert ct.dtype == np.float32


# --- filled arrays ------------------------------------------------------------------------------

@pytest.mark.parametrize("fill", [np.asarray(1.5), ROW, RNG.standard_normal((3, 1))])
def test_full_fill_value_gets_the_summed_cotangent(x64, fill):
    (ct,) = check_vjp("full", {"fill_value": fill}, {"shape": (3, 4)})
    assert ct.shape == fill.shape  # summed by the rule: full's result is not unbroadcast


def test_full_like(x64):
    cts = check_vjp("full_like", {"a": X, "fill_value": np.asarray(0.25)}, wrt=["fill_value"])
    assert cts[0] is None and cts[1].shape == ()
    cts = check_vjp("full_like", {"a": X, "fill_value": ROW}, {"dtype": np.float32},
                    wrt=[], rtol=1e-5)
    assert cts[1].dtype == np.float64 and cts[1].shape == (4,)


def test_fill_value_number_is_a_constant():
    z = jnp.full((2, 3), 2.0)
    assert rule("full")(z, 2.0, jnp.ones_like(z), shape=(2, 3)) == (None,)


@pytest.mark.parametrize("params", [{"num": 5}, {"num": 4, "endpoint": False},
                                    {"num": 1}, {"num": 6, "axis": 1}, {"num": 3, "axis": -1},
                                    {"num": 3, "axis": 0}])
def test_linspace(x64, params):
    check_vjp("linspace", {"start": ROW, "stop": ROW * 2 + 3}, params)
    check_vjp("linspace", {"start": np.asarray(1.0), "stop": RNG.standard_normal((3, 1))},
              params)


def test_linspace_number_bound():
    stop = jnp.asarray(np.array([1.0, 2.0], np.float32))
    z = jnp.linspace(0.0, stop, 5)
    d_start, d_stop = rule("linspace")(z, 0.0, stop, jnp.ones_like(z), num=5)
    assert d_start is None and d_stop.dtype == np.float32
    np.testing.assert_allclose(np.asarray(d_stop), 2.5)


@pytest.mark.parametrize("shape,k", [((4,), 0), ((4,), 2), ((4,), -1), ((3, 4), 0),
                                     ((3, 4), 1), ((3, 4), -2), ((4, 3), 2), ((4, 3), -1)])
def test_diag(x64, shape, k):
    (ct,) = check_vjp("diag", {"v": RNG.standard_normal(shape)}, {"k": k})
    assert ct.shape == shape


# --- dtypes, completeness, compiled -----------------------------------------------------------

CASES = {  # name -> (operands, params), float32
    "astype": ({"x": X}, {"dtype": np.float16}),
    "where": ({"condition": X > 0, "x": X, "y": ROW}, {}),
    "clip": ({"arr": X, "min": ROW - 1, "max": np.asarray(0.5)}, {}),
    "nan_to_num": ({"x": X}, {}),
    "array": ({"object": X}, {"ndmin": 3}),
    "asarray": ({"a": X}, {}),
    "full": ({"fill_value": ROW}, {"shape": (3, 4)}),
    "full_like": ({"a": X, "fill_value": ROW}, {}),
    "linspace": ({"start": ROW, "stop": ROW + 1}, {"num": 5, "axis": -1}),
    "diag": ({"v": X}, {"k": 1}),
}


def _float32_case(name):
    operands, params = CASES[name]
    op = REGISTRY[name]
    args = [None if operands.get(n) is None else
            jnp.asarray(np.asarray(operands[n]).astype(np.float32)
                        if np.asarray(operands[n]).dtype.kind == "f" else operands[n])
            for n in op.operands]
    z = op(**{n: a for n, a in zip(op.operands, args) if a is not None}, **params)
    return op, args, z, params


@pytest.mark.parametrize("name", sorted(CASES))
def test_float32_stays_float32(name):
    op, args, z, params = _float32_case(name)
    cts = rule(name)(z, *args, jnp.ones_like(z), **params)
    for ct in cts:
        assert ct is None or ct.dtype == np.float32


@pytest.mark.parametrize("name", sorted(CASES))
def test_compiled_rule_matches_eager(name):
    op, args, z, params = _float32_case(name)
    g = jnp.asarray(RNG.standard_normal(z.shape).astype(z.dtype))
    eager = rule(name)(z, *args, g, **params)
    compiled = astjax.jit(rule(name), static_argnames=tuple(params))(z, *args, g, **params)
    for e, c in zip(eager, compiled):
        assert (e is None) == (c is None)
        if e is not None:
            assert c.dtype == e.dtype
            np.testing.assert_allclose(np.asarray(c), np.asarray(e), rtol=1e-6)


_array_rule, _clip_rule, _astype_rule = rule("array"), rule("clip"), rule("astype")


def _stacked(z, a, b, g):
    return _array_rule(z, [a, 2.0, b], g)


def _unit_clip(z, x, g):
    return _clip_rule(z, x, 0.0, 1.0, None, None, g)


def _cast_number(z, g):
    return _astype_rule(z, 0.5, g, dtype=np.float32)


def test_compiled_sequences_and_numbers():
    a, b = jnp.float32(1.5), jnp.float32(-1.0)
    z = jnp.array([a, 2.0, b])
    g = jnp.asarray(np.array([3.0, 4.0, 5.0], np.float32))
    ((ca, cnum, cb),) = astjax.jit(_stacked)(z, a, b, g)
    assert cnum is None and ca.dtype == np.float32
    assert (float(ca), float(cb)) == (3.0, 5.0)
    x = jnp.asarray(np.array([-0.5, 0.5, 1.5], np.float32))
    cts = astjax.jit(_unit_clip)(jnp.clip(x, 0.0, 1.0), x, jnp.ones_like(x))
    np.testing.assert_array_equal(np.asarray(cts[0]), [0, 1, 0])
    assert astjax.jit(_cast_number)(jnp.float32(0.5), jnp.float32(1.0)) == (None,)


def test_every_differentiable_conversion_and_creation_op_has_a_rule():
    modules = ("ops.conversions", "ops.creation")
    ops = [op for op in REGISTRY.values() if (op.impl.__module__ or "").endswith(modules)]
    assert {op.name for op in ops} >= set(CASES) | {"zeros_like", "ones_like", "round"}
    assert [op.name for op in ops if op.differentiable and "vjp" not in op.rules] == []
    assert not any(REGISTRY[n].differentiable for n in ("zeros_like", "ones_like", "empty_like",
                                                         "zeros", "ones", "arange", "eye"))


def _converted(x, s):
    """x: (3, 4), s: a scalar."""
    stacked = jnp.array([s, 2.0, s * x[0, 1]], ndmin=2)
    clipped = jnp.clip(x * s, -0.5, s) + jnp.where(x > 0, x * x, s)
    return (jnp.sum(stacked ** 2) + jnp.sum(clipped * x)
            + jnp.sum(jnp.linspace(s, x[0], 5, axis=-1) ** 2) + jnp.sum(jnp.diag(x, 1) ** 2)
            + jnp.sum(jnp.full((3, 4), x[1] * s) * x))


def test_second_order_through_the_transform(x64):
    """The rules compile and differentiate again: d(grad) against finite differences."""
    check_grads(_converted, (X, 0.8), order=2, modes=("rev",))
