"""VJP rules of the elementwise ops against central finite differences of the ops themselves.

Rules are plain jnp functions, so they run eagerly here (in float64 for the
finite differences); a second set compiles each rule and compares, and one
test takes second derivatives through the AD transform (which compiles the
rules and differentiates them again). ``check_vjp`` is shared with the
reduction and conversion rule tests.
"""
import numpy as np
import pytest

import astjax
import astjax.numpy as jnp
from astjax._src.ad import vjp_rules  # noqa: F401  (registers the rules)
from astjax._src.ad.adops import unbroadcast
from astjax._src.ops.registry import REGISTRY
from astjax.test_util import check_grads

EPS = 1e-6


def rule(name):
    return REGISTRY[name].rules["vjp"]


def check_vjp(name, operands, params=None, wrt=None, seed=0, rtol=1e-6, atol=1e-9):
    """For a random cotangent g and direction v per operand, <rule's cotangent, v> must equal
    the central difference <g, (op(x + eps v) - op(x - eps v)) / 2 eps>.

    ``operands``: name -> value (float64 arrays or numbers, passed as Arrays); ``wrt``: the
    operands to check (default: every array operand). Returns the rule's cotangents.
    """
    op, params = REGISTRY[name], params or {}
    rng = np.random.default_rng(seed)
    values = {k: jnp.asarray(v) if isinstance(v, np.ndarray) else v for k, v in operands.items()}
    z = op(**values, **params)
    g = jnp.asarray(rng.standard_normal(z.shape).astype(z.dtype))  # as the transform gives it
    cts = rule(name)(z, *[values.get(n) for n in op.operands], g, **params)
    assert isinstance(cts, tuple) and len(cts) == len(op.operands)
    wrt = [n for n in op.operands if isinstance(operands.get(n), np.ndarray)] \
        if wrt is None else wrt
    for k, n in enumerate(op.operands):
        if n not in wrt:
            continue
        x = values[n]
        v = rng.standard_normal(np.shape(x))
        plus = op(**{**values, n: x + EPS * v}, **params)
        minus = op(**{**values, n: x - EPS * v}, **params)
        numeric = np.sum(np.asarray(g) * (np.asarray(plus) - np.asarray(minus))) / (2 * EPS)
        ct = cts[k]
        analytic = 0.0 if ct is None else np.sum(np.asarray(unbroadcast(ct, x)) * v)
        np.testing.assert_allclose(analytic, numeric, rtol=rtol, atol=atol,
                                   err_msg=f"{name}: cotangent of {n}")
    return cts


def _rand(shape, low=-2.0, high=2.0, seed=1):
    return np.random.default_rng(seed).uniform(low, high, shape)


def _away_from_zero(shape, seed=1):
    """Values in +-[0.5, 2] (for divisors and the like)."""
    r = np.random.default_rng(seed)
    return r.uniform(0.5, 2.0, shape) * r.choice([-1.0, 1.0], shape)


# op -> operand generator (shape -> float64 values in the op's domain)
UNARY = {
    "negative": _rand, "positive": _rand, "square": _rand, "exp": _rand, "exp2": _rand,
    "expm1": _rand, "sin": _rand, "cos": _rand, "sinh": _rand, "cosh": _rand, "tanh": _rand,
    "arcsinh": _rand, "arctan": _rand, "erf": _rand, "erfc": _rand, "real": _rand,
    "imag": _rand, "conjugate": _rand,
    "abs": _away_from_zero, "reciprocal": _away_from_zero, "cbrt": _away_from_zero,
    "log": lambda s: _rand(s, 0.3, 3.0), "log2": lambda s: _rand(s, 0.3, 3.0),
    "log10": lambda s: _rand(s, 0.3, 3.0), "sqrt": lambda s: _rand(s, 0.3, 3.0),
    "log1p": lambda s: _rand(s, -0.7, 3.0), "tan": lambda s: _rand(s, -1.2, 1.2),
    "arcsin": lambda s: _rand(s, -0.9, 0.9), "arccos": lambda s: _rand(s, -0.9, 0.9),
    "arctanh": lambda s: _rand(s, -0.9, 0.9), "arccosh": lambda s: _rand(s, 1.2, 3.0),
}

# op -> (x generator, y generator)
BINARY = {
    "add": (_rand, _rand), "subtract": (_rand, _rand), "multiply": (_rand, _rand),
    "maximum": (_rand, _rand), "minimum": (_rand, _rand), "arctan2": (_rand, _rand),
    "true_divide": (_rand, _away_from_zero),
    "power": (lambda s, seed: _rand(s, 0.3, 3.0, seed), _rand),
    "remainder": (lambda s, seed: _rand(s, -6.0, 6.0, seed), _away_from_zero),
    "floor_divide": (lambda s, seed: _rand(s, -6.0, 6.0, seed), _away_from_zero),
}

SHAPES = [((3, 4), (3, 4)), ((3, 4), (4,)), ((4,), (3, 4)), ((3, 1), (1, 4)), ((3, 4), ()),
          ((), (3, 4)), ((), ())]


@pytest.mark.parametrize("name", sorted(UNARY))
@pytest.mark.parametrize("shape", [(3, 4), ()])
def test_unary(x64, name, shape):
    check_vjp(name, {"x": np.asarray(UNARY[name](shape))})


@pytest.mark.parametrize("name", sorted(BINARY))
@pytest.mark.parametrize("shapes", SHAPES)
def test_binary_broadcasting(x64, name, shapes):
    gen_x, gen_y = BINARY[name]
    check_vjp(name, {"x": np.asarray(gen_x(shapes[0], seed=2)),
                     "y": np.asarray(gen_y(shapes[1], seed=3))})


@pytest.mark.parametrize("name", sorted(BINARY))
def test_python_number_operand(x64, name):
    """A number written in the code is a constant: None for it, the right cotangent for x."""
    gen_x, gen_y = BINARY[name]
    cts = check_vjp(name, {"x": np.asarray(gen_x((3, 4), seed=2)),
                           "y": float(gen_y((), seed=3))})
    assert cts[1] is None or name == "add"
    cts = check_vjp(name, {"x": float(gen_x((), seed=2)),
                           "y": np.asarray(gen_y((3, 4), seed=3))})
    assert cts[0] is None or name in ("add", "subtract", "remainder")


def test_power_at_zero(x64):
    """JAX's values where x ** y is not differentiable in y (x <= 0) or 0 * inf looms."""
    x = jnp.asarray(np.array([0.0, 0.0, 0.0, 0.0, -2.0]))
    y = jnp.asarray(np.array([0.0, 1.0, 2.0, 0.5, 2.0]))
    with np.errstate(divide="ignore"):  # 0 ** -0.5 on the way to an inf that JAX gives too
        z = x ** y
        gx, gy = rule("power")(z, x, y, jnp.ones_like(z))
    np.testing.assert_array_equal(np.asarray(gx), [0.0, 1.0, 0.0, np.inf, -4.0])
    np.testing.assert_array_equal(np.asarray(gy), [0.0, 0.0, 0.0, 0.0, 0.0])


def test_power_number_exponent():
    x = jnp.asarray(np.array([0.0, 1.5, -2.0], np.float32))
    gx, gy = rule("power")(x ** 3, x, 3, jnp.ones_like(x))
    assert gy is None and gx.dtype == np.float32
    np.testing.assert_allclose(np.asarray(gx), 3 * np.asarray(x) ** 2)
    assert rule("power")(x ** 0, x, 0, jnp.ones_like(x)) == (None, None)  # z is constant


def test_maximum_minimum_ties_split(x64):
    x = jnp.asarray(np.array([1.0, 2.0, 3.0]))
    y = jnp.asarray(np.array([1.0, 5.0, 0.0]))
    for name, x_share in (("maximum", [0.5, 0.0, 1.0]), ("minimum", [0.5, 1.0, 0.0])):
        z = REGISTRY[name](x, y)
        gx, gy = rule(name)(z, x, y, jnp.ones_like(z))
        np.testing.assert_array_equal(np.asarray(gx), x_share)
        np.testing.assert_array_equal(np.asarray(gy), 1.0 - np.asarray(x_share))


def test_abs_at_zero_is_one_as_jax(x64):
    x = jnp.asarray(np.array([-1.0, 0.0, 2.0]))
    (gx,) = rule("abs")(jnp.abs(x), x, jnp.ones_like(x))
    np.testing.assert_array_equal(np.asarray(gx), [-1.0, 1.0, 1.0])


def test_remainder_y_cotangent_is_minus_floor(x64):
    x, y = jnp.asarray(np.array([7.5, -7.5, 7.5])), jnp.asarray(np.array([2.0, 2.0, -2.0]))
    z = x % y
    gx, gy = rule("remainder")(z, x, y, jnp.ones_like(z))
    np.testing.assert_array_equal(np.asarray(gx), [1.0, 1.0, 1.0])
    np.testing.assert_array_equal(np.asarray(gy), -np.floor(np.asarray(x) / np.asarray(y)))


def test_floor_divide_and_imag_have_zero_gradients():
    x = jnp.asarray(np.array([7.5, -7.5], np.float32))
    assert rule("floor_divide")(x // 2.0, x, 2.0, jnp.ones_like(x)) == (None, None)
    assert rule("imag")(jnp.imag(x), x, jnp.ones_like(x)) == (None,)


@pytest.mark.parametrize("name", sorted(UNARY) + sorted(BINARY))
def test_float32_stays_float32(name):
    op = REGISTRY[name]
    gens = [UNARY[name]] if name in UNARY else [lambda s, f=f: f(s, seed=2) for f in BINARY[name]]
    args = [jnp.asarray(gen((3, 4)).astype(np.float32)) for gen in gens]
    z = op(*args)
    cts = rule(name)(z, *args, jnp.ones_like(z))
    for ct in cts:
        assert ct is None or ct.dtype == np.float32, (name, ct.dtype)


def test_sign_is_not_differentiable():
    assert REGISTRY["sign"].differentiable is False


def test_every_differentiable_elementwise_op_has_a_rule():
    missing = [name for name, op in REGISTRY.items()
               if op.family == "elementwise" and op.differentiable and "vjp" not in op.rules]
    assert missing == []


# --- compiled: the same rules through the compiler ------------------------------------------

@pytest.mark.parametrize("name", sorted(UNARY) + sorted(BINARY))
def test_compiled_rule_matches_eager(name):
    op = REGISTRY[name]
    gens = [UNARY[name]] if name in UNARY else [lambda s, f=f: f(s, seed=2) for f in BINARY[name]]
    shapes = [(3, 4)] if name in UNARY else [(3, 4), (4,)]
    args = [jnp.asarray(gen(s).astype(np.float32)) for gen, s in zip(gens, shapes)]
    z = op(*args)
    g = jnp.asarray(_rand(z.shape, seed=4).astype(np.float32))
    eager = rule(name)(z, *args, g)
    compiled = astjax.jit(rule(name))(z, *args, g)
    for e, c in zip(eager, compiled):
        if e is None:
            assert c is None
        else:
            assert c.dtype == e.dtype
            np.testing.assert_allclose(np.asarray(c), np.asarray(e), rtol=1e-6)


_power_rule = rule("power")
_multiply_rule = rule("multiply")


def _square_by_power(z, x, g):
    return _power_rule(z, x, 2, g)


def _scale(z, x, g):
    return _multiply_rule(z, 2.5, x, g)


def test_compiled_number_operand_gets_no_cotangent():
    x = jnp.asarray(np.array([0.0, 1.5, -2.0], np.float32))
    gx, gy = astjax.jit(_square_by_power)(x ** 2, x, jnp.ones_like(x))
    assert gy is None and gx.dtype == np.float32
    np.testing.assert_allclose(np.asarray(gx), 2 * np.asarray(x))
    gc, gx = astjax.jit(_scale)(2.5 * x, x, jnp.ones_like(x))
    assert gc is None
    np.testing.assert_allclose(np.asarray(gx), 2.5)


# --- through the AD transform: the rules compile and differentiate again ----------------------

def _mixed(x, y):
    """Rules with helpers, jnp.where and calls of other ops (x in [0.3, 0.9], y in [1.2, 1.8])."""
    return jnp.sum(x / y + x ** y + y ** x + jnp.maximum(x, y - 0.9) * jnp.minimum(x, y - 0.9)
                   + jnp.arctan2(x, y) * jnp.abs(x - 0.6) + (x * 5.0) % y + (x * 5.0) // y)


def test_second_order_through_the_transform(x64):
    """The rules compile and differentiate again: d(grad) against finite differences.
    (The other rules are products of jnp ops the same way; compiling every rule twice
    more would make this test slow.)"""
    rng = np.random.default_rng(8)
    check_grads(_mixed, (rng.uniform(0.3, 0.9, (3, 4)), rng.uniform(1.2, 1.8, (4,))), order=2,
                modes=("rev",))


def test_ldexp_and_frexp_scale_by_a_power_of_two():
    # JAX 0.10.2's values: d ldexp(x, n) = 2**n, d frexp(x)[0] = 2**-e (e = 0 at 0, inf, nan;
    # a float32 subnormal's 2**132 overflows); they were 0, both ops not differentiable
    x = np.array([0.0, 3.0, -3.0, np.inf, np.nan, 1e-40], np.float32)
    want = [1.0, 0.25, 0.25, 1.0, 1.0, np.inf]
    np.testing.assert_array_equal(astjax.grad(lambda x: jnp.sum(jnp.frexp(x)[0]))(x), want)
    np.testing.assert_array_equal(astjax.vmap(lambda x: astjax.jvp(
        lambda x: jnp.frexp(x)[0], (x,), (1.0,))[1])(x), want)
    assert astjax.grad(lambda x: jnp.sum(jnp.ldexp(x, np.array([1, -2], np.int32))))(1.0) == 2.25
    assert astjax.jvp(lambda x: jnp.ldexp(x, 3), (1.0,), (1.0,))[1] == 8.0
    assert astjax.hessian(lambda x: jnp.ldexp(x * x, 2))(1.5) == 8.0
