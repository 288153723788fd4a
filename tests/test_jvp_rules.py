"""Explicit JVP rules (``ad/jvp_rules.py``), run eagerly: against central finite differences
of the op (float64) with random tangents and some tangents None, as the exact transpose of
the op's VJP rule (ties of max/min, zeros of prod/cumprod, clip at its bounds, nan_to_num's
replaced values, repeated and zero-valued index updates), and float32 in, float32 out."""
import numpy as np
import pytest

import astjax.numpy as jnp
from astjax._src.ad import vjp_rules  # noqa: F401  (registers the rules)
from astjax._src.ad.adops import unbroadcast
from astjax._src.ops.registry import REGISTRY

from .test_vjp_conversions import CLIP_CASES, X
from .test_vjp_indexing import REPEATED, UPDATES
from .test_vjp_reductions import A, AXES

EPS = 1e-6
JVP_OPS = ["at_multiply", "at_divide", "at_power", "at_min", "at_max", "clip", "cumprod", "fma", "max", "min",
           "prod", "std", "var", "nan_to_num"]


# --- helpers ---------------------------------------------------------------------------------

def jvp(name):
    return REGISTRY[name].rules["jvp"]


def vjp(name):
    return REGISTRY[name].rules["vjp"]


def _as_values(operands, dtype):
    """Float NumPy operands as Arrays of ``dtype``; Python numbers and None as they are."""
    return {k: jnp.asarray(np.asarray(v, dtype)) if isinstance(v, np.ndarray) else v
            for k, v in operands.items()}


def _evaluate(op, values, params):
    args, kwargs = op.arrange({**{k: v for k, v in values.items() if v is not None},
                               **params})
    return op(*args, **kwargs)


def _differentiable(operands):
    return [k for k, v in operands.items()
            if isinstance(v, np.ndarray) and v.dtype.kind == "f"]


def _apply_jvp(op, values, tangents, z, params):
    return jvp(op.name)(z, *[values.get(n) for n in op.operands],
                        *[tangents.get(n) for n in op.operands], **params)


def _tangents(values, wrt, rng):
    return {k: jnp.asarray(rng.standard_normal(np.shape(values[k]))) for k in wrt}


def check_jvp(name, operands, params=None, wrt=None, seed=0, rtol=1e-6, atol=1e-8):
    """The rule's tangent, with random tangents for the operands in ``wrt`` (default: every
    float array operand) and None for the others, against the central difference
    (op(x + eps t) - op(x - eps t)) / 2 eps, element by element. Run under ``x64``."""
    op, params = REGISTRY[name], params or {}
    values = _as_values(operands, np.float64)
    z = _evaluate(op, values, params)
    wrt = _differentiable(operands) if wrt is None else wrt
    tangents = _tangents(values, wrt, np.random.default_rng(seed))
    t = _apply_jvp(op, values, tangents, z, params)
    if not wrt:
        assert t is None, name
        return None
    assert t is not None
    assert np.broadcast_shapes(np.shape(t), np.shape(z)) == np.shape(z), (np.shape(t), z.shape)
    plus = _evaluate(op, {**values, **{k: values[k] + EPS * tangents[k] for k in wrt}}, params)
    minus = _evaluate(op, {**values, **{k: values[k] - EPS * tangents[k] for k in wrt}}, params)
    numeric = (np.asarray(plus) - np.asarray(minus)) / (2 * EPS)
    np.testing.assert_allclose(np.broadcast_to(np.asarray(t), np.shape(z)), numeric,
                               rtol=rtol, atol=atol, err_msg=f"{name}: tangent wrt {wrt}")
    return t


def check_subsets(name, operands, params=None, **kw):
    """check_jvp with every float operand's tangent, each one alone, and none (-> None)."""
    every = _differentiable(operands)
    check_jvp(name, operands, params, every, **kw)
    if len(every) > 1:
        for k in every:
            check_jvp(name, operands, params, [k], **kw)
    check_jvp(name, operands, params, [], **kw)


def _inner(a, b):
    return float(np.sum(np.asarray(a, np.float64) * np.asarray(b, np.float64)))


def check_transpose(name, operands, params=None, wrt=None, seed=0, rtol=1e-10):
    """<u, jvp(v)> == sum_k <vjp(u)[k], v_k> for random u and v (the rules are each other's
    exact transpose, at ties and zeros too). Run under ``x64``."""
    op, params = REGISTRY[name], params or {}
    values = _as_values(operands, np.float64)
    z = _evaluate(op, values, params)
    wrt = _differentiable(operands) if wrt is None else wrt
    rng = np.random.default_rng(seed)
    tangents = _tangents(values, wrt, rng)
    u = jnp.asarray(rng.standard_normal(np.shape(z)))
    t = _apply_jvp(op, values, tangents, z, params)
    lhs = 0.0 if t is None else _inner(u, np.broadcast_to(np.asarray(t), np.shape(z)))
    cts = vjp(name)(z, *[values.get(n) for n in op.operands], u, **params)
    rhs = 0.0
    for n, ct in zip(op.operands, cts):
        if n in wrt and ct is not None:
            rhs += _inner(unbroadcast(ct, values[n]), tangents[n])
    assert abs(lhs - rhs) <= rtol * max(1.0, abs(lhs), abs(rhs)), (name, lhs, rhs)


def check_float32(name, operands, params=None):
    """Float32 operands and tangents (32-bit mode) give a float32 tangent."""
    op, params = REGISTRY[name], params or {}
    values = _as_values(operands, np.float32)
    z = _evaluate(op, values, params)
    tangents = {k: jnp.ones_like(values[k]) for k in _differentiable(operands)}
    t = _apply_jvp(op, values, tangents, z, params)
    assert z.dtype == np.float32
    assert t.dtype == np.float32, (name, t.dtype)


# --- completeness ----------------------------------------------------------------------------

def test_every_listed_op_has_a_jvp_rule():
    assert [n for n in JVP_OPS if "jvp" not in REGISTRY[n].rules] == []


# --- reductions ------------------------------------------------------------------------------

REDUCTIONS = ["prod", "max", "min", "var", "std"]


@pytest.mark.parametrize("name", REDUCTIONS)
@pytest.mark.parametrize("axis", AXES)
@pytest.mark.parametrize("keepdims", [False, True])
def test_reduction(x64, name, axis, keepdims):
    if name == "std" and axis == ():
        return  # a std of single elements is 0: not differentiable (test_std_at_zero)
    params = {"axis": axis, "keepdims": keepdims}
    t = check_jvp(name, {"a": A}, params)
    assert np.shape(t) == np.shape(REGISTRY[name](A, **params))
    check_jvp(name, {"a": A}, params, wrt=[])
    check_transpose(name, {"a": A}, params)


@pytest.mark.parametrize("name", REDUCTIONS)
def test_zero_dim_operand(x64, name):
    if name != "std":
        for params in ({}, {"axis": (), "keepdims": True}):
            check_jvp(name, {"a": np.asarray(1.7)}, params)
            check_transpose(name, {"a": np.asarray(1.7)}, params)


@pytest.mark.parametrize("name", ["var", "std"])
@pytest.mark.parametrize("params", [{"ddof": 1}, {"ddof": 2, "axis": -1},
                                    {"correction": 1, "axis": (0, 2), "keepdims": True}])
def test_variance_ddof(x64, name, params):
    check_jvp(name, {"a": A}, params)
    check_transpose(name, {"a": A}, params)


def test_std_at_zero_is_nan_as_jax():
    a = jnp.asarray(np.array([[2.0, 2.0], [1.0, 3.0]], np.float32))
    z = jnp.std(a, axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = jvp("std")(z, a, jnp.asarray(np.array([[1.0, -1.0], [0.0, 1.0]], np.float32)),
                       axis=1)
    assert np.isnan(np.asarray(t)[0])
    np.testing.assert_allclose(np.asarray(t)[1], 0.5)


def test_var_with_no_degrees_of_freedom_does_not_raise():
    a = jnp.asarray(np.array([1.0, 2.0], np.float32))
    z = jnp.var(a, ddof=2)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = jvp("var")(z, a, jnp.ones_like(a), ddof=2)
    assert not np.isfinite(np.asarray(t))


def _with_zeros():
    a = A.copy()
    a[0, 1, 2] = 0.0
    a[1, :, 3] = 0.0
    a[1, 2, :2] = 0.0
    return a


@pytest.mark.parametrize("axis", [None, 0, 1, 2, -1, -2, (0, 2)])
@pytest.mark.parametrize("keepdims", [False, True])
def test_prod_with_zeros(x64, axis, keepdims):
    """One zero in a slice, two zeros, none: the product of the others, never 0 / 0."""
    params = {"axis": axis, "keepdims": keepdims}
    t = check_jvp("prod", {"a": _with_zeros()}, params)
    assert np.all(np.isfinite(np.asarray(t)))
    check_transpose("prod", {"a": _with_zeros()}, params)


def test_prod_zero_tangents_exactly():
    a = jnp.asarray(np.array([[2.0, 0.0, 3.0], [0.0, 0.0, 5.0], [1.0, 2.0, 4.0]], np.float32))
    z = jnp.prod(a, axis=1)
    np.testing.assert_array_equal(np.asarray(jvp("prod")(z, a, jnp.ones_like(a), axis=1)),
                                  [6, 0, 8 + 4 + 2])
    ta = jnp.asarray(np.array([[0.0, 1.0, 0.0], [1.0, 1.0, 1.0], [0.0, 0.0, 0.0]], np.float32))
    np.testing.assert_array_equal(np.asarray(jvp("prod")(z, a, ta, axis=1)), [6, 0, 0])


TIES = np.array([[1.0, 4.0, 1.0, 4.0, 4.0], [2.0, 2.0, 2.0, 2.0, 2.0],
                 [3.0, -1.0, 0.5, -1.0, 3.0]])


@pytest.mark.parametrize("name", ["max", "min"])
@pytest.mark.parametrize("axis", [None, 0, 1, -1, (0, 1)])
@pytest.mark.parametrize("keepdims", [False, True])
def test_max_min_ties_transpose_the_vjp(x64, name, axis, keepdims):
    check_transpose(name, {"a": TIES}, {"axis": axis, "keepdims": keepdims})


@pytest.mark.parametrize("name,expected", [("max", [11 / 3, 3, 3]), ("min", [2, 3, 3])])
def test_max_min_average_tied_tangents(name, expected):
    """The mean of the tied elements' tangents (JAX's rule), the VJP's split transposed."""
    a = jnp.asarray(TIES.astype(np.float32))
    ta = jnp.asarray(np.array([[1, 2, 3, 4, 5], [1, 2, 3, 4, 5], [5, 2, 7, 4, 1]], np.float32))
    z = REGISTRY[name](a, axis=1)
    t = jvp(name)(z, a, ta, axis=1)
    assert t.dtype == np.float32
    np.testing.assert_allclose(np.asarray(t), expected, rtol=1e-6)


# --- cumprod ---------------------------------------------------------------------------------

@pytest.mark.parametrize("axis", [None, 0, 1, 2, -1, -3])
def test_cumprod(x64, axis):
    t = check_jvp("cumprod", {"a": A}, {"axis": axis})
    assert np.shape(t) == np.shape(jnp.cumprod(A, axis=axis))
    check_transpose("cumprod", {"a": A}, {"axis": axis})


@pytest.mark.parametrize("axis", [None, 0, -1])
def test_cumprod_zero_dim(x64, axis):
    t = check_jvp("cumprod", {"a": np.asarray(1.3)}, {"axis": axis})
    assert np.shape(t) == np.shape(jnp.cumprod(jnp.asarray(1.3), axis=axis))
    check_transpose("cumprod", {"a": np.asarray(1.3)}, {"axis": axis})


def _cumprod_zeros():
    a = np.random.default_rng(3).uniform(0.5, 1.5, (3, 5))
    a[0, 1] = 0.0
    a[1, 1] = a[1, 3] = 0.0
    a[2, 4] = 0.0
    a[2, 0] = 0.0
    return a


@pytest.mark.parametrize("axis", [None, 0, 1, -1])
def test_cumprod_with_zeros(x64, axis):
    """Before the first zero, at it (one zero so far, or a second one later), after it."""
    check_jvp("cumprod", {"a": _cumprod_zeros()}, {"axis": axis})
    check_transpose("cumprod", {"a": _cumprod_zeros()}, {"axis": axis})


def test_cumprod_zero_tangents_exactly():
    a = jnp.asarray(np.array([2.0, 0.0, 3.0, 0.0, 5.0], np.float32))
    t = jvp("cumprod")(jnp.cumprod(a), a, jnp.ones_like(a))
    assert t.dtype == np.float32
    np.testing.assert_array_equal(np.asarray(t), [1, 2, 6, 0, 0])


# --- dtype= and float32 ----------------------------------------------------------------------

@pytest.mark.parametrize("name,params", [
    ("prod", {"axis": (0, 2), "dtype": np.float64}), ("var", {"axis": 0, "dtype": np.float64}),
    ("std", {"dtype": np.float64, "keepdims": True}), ("cumprod", {"dtype": np.float64}),
    ("cumprod", {"axis": 1, "dtype": np.float64})])
def test_dtype_param_computes_in_it(x64, name, params):
    """A float32 operand reduced in float64: the tangent is computed in float64."""
    a32 = jnp.asarray(A.astype(np.float32))
    a64 = jnp.asarray(A.astype(np.float32).astype(np.float64))
    ta = np.random.default_rng(2).standard_normal(A.shape).astype(np.float32)
    z = REGISTRY[name](a32, **params)
    assert z.dtype == np.float64
    t = jvp(name)(z, a32, jnp.asarray(ta), **params)
    assert t.dtype == np.float64
    reference = jvp(name)(REGISTRY[name](a64, **params), a64,
                          jnp.asarray(ta.astype(np.float64)), **params)
    np.testing.assert_allclose(np.asarray(t), np.asarray(reference), rtol=1e-12)


FLOAT32_CASES = [(name, {"a": A}, {"axis": axis}) for name in REDUCTIONS + ["cumprod"]
                 for axis in (None, 1)]
FLOAT32_CASES += [(name, {"a": A}, {"axis": (0, 2), "keepdims": True})
                  for name in REDUCTIONS]
FLOAT32_CASES += [("clip", {"arr": X, **bounds}, {}) for bounds in CLIP_CASES]
FLOAT32_CASES += [("nan_to_num", {"x": X}, {}),
                  ("fma", {"x": X, "y": X[0], "z": np.asarray(0.5)}, {}),
                  ("fma", {"x": X, "y": 2.0, "z": 1.0}, {})]
FLOAT32_CASES += [(name, {"x": np.random.default_rng(7).uniform(0.5, 1.5, xs),
                          "values": 0.7 if vs == "s" else
                          np.random.default_rng(8).uniform(0.5, 1.5, vs)}, {"index": index})
                  for name in ("at_multiply", "at_divide", "at_power")
                  for xs, vs, index in UPDATES]


@pytest.mark.parametrize("k", range(len(FLOAT32_CASES)))
def test_float32_stays_float32(k):
    check_float32(*FLOAT32_CASES[k])


# --- clip, nan_to_num, fma -------------------------------------------------------------------

@pytest.mark.parametrize("bounds", CLIP_CASES)
def test_clip(x64, bounds):
    check_subsets("clip", {"arr": X, **bounds})
    check_transpose("clip", {"arr": X, **bounds})


def test_clip_both_names_of_a_bound(x64):
    """A bound's tangent comes from the operand that gave it (min= or a_min=)."""
    lo, hi = np.full((4,), -0.5), np.asarray(0.6)
    for bounds in ({"a_min": lo, "max": hi}, {"min": lo, "a_max": hi}):
        check_subsets("clip", {"arr": X, **bounds})
        check_transpose("clip", {"arr": X, **bounds})


CLIP_AT_BOUNDS = np.array([-1.0, 0.0, 1.0, 2.0, -3.0])


def test_clip_at_the_bounds_shares_the_tangents():
    """x == min or x == max: arr's and the bound's tangents, half each, as JAX's
    minimum(max, maximum(min, x)) shares ties."""
    x = jnp.asarray(CLIP_AT_BOUNDS.astype(np.float32))
    lo, hi = jnp.asarray(np.float32(-1.0)), jnp.asarray(np.float32(1.0))
    tx = jnp.ones_like(x)
    t_lo, t_hi = jnp.asarray(np.float32(10.0)), jnp.asarray(np.float32(100.0))
    z = jnp.clip(x, lo, hi)
    t = jvp("clip")(z, x, lo, hi, None, None, tx, t_lo, t_hi, None, None)
    assert t.dtype == np.float32
    np.testing.assert_array_equal(np.asarray(t), [5.5, 1, 50.5, 100, 10])
    # one tangent at a time, bounds given as a_min/a_max, a single bound
    np.testing.assert_array_equal(
        np.asarray(jvp("clip")(z, x, None, None, lo, hi, None, None, None, t_lo, None)),
        [5, 0, 0, 0, 10])
    np.testing.assert_array_equal(
        np.asarray(jvp("clip")(jnp.clip(x, max=hi), x, None, hi, None, None, tx, None, t_hi,
                               None, None)), [1, 1, 50.5, 100, 1])
    assert jvp("clip")(z, x, lo, hi, None, None, None, None, None, None, None) is None


@pytest.mark.parametrize("bounds", [
    {"min": np.asarray(-1.0), "max": np.asarray(1.0)}, {"min": np.asarray(-1.0)},
    {"a_max": np.asarray(1.0)}, {"min": np.asarray(0.5), "max": np.asarray(-0.5)},
    {"a_min": np.full(5, 0.0), "a_max": np.array([0.0, 0.0, 1.0, 2.0, -3.0])}])
def test_clip_at_the_bounds_transposes_the_vjp(x64, bounds):
    check_transpose("clip", {"arr": CLIP_AT_BOUNDS, **bounds})


def test_clip_number_bounds_get_no_tangent(x64):
    x = jnp.asarray(X)
    z = jnp.clip(x, -0.5, 0.5)
    assert jvp("clip")(z, x, -0.5, 0.5, None, None, None, None, None, None, None) is None
    check_subsets("clip", {"arr": X, "min": -0.5, "max": 0.5})


def test_nan_to_num(x64):
    check_subsets("nan_to_num", {"x": X}, {"nan": 1.5})
    special = np.array([1.0, np.nan, np.inf, -np.inf, -2.0])
    check_transpose("nan_to_num", {"x": special}, {"posinf": 7.0})
    x = jnp.asarray(special.astype(np.float32))
    t = jvp("nan_to_num")(jnp.nan_to_num(x), x, jnp.full_like(x, 3.0))
    assert t.dtype == np.float32
    np.testing.assert_array_equal(np.asarray(t), [3, 0, 0, 0, 3])


FMA_CASES = [
    {"x": X, "y": X + 1.0, "z": X * 2.0},
    {"x": X, "y": X[0], "z": np.asarray(0.5)},
    {"x": X[:, :1], "y": X[0], "z": X},
    {"x": X, "y": 2.5, "z": 1.0},
    {"x": 0.5, "y": X, "z": X[1]},
    {"x": np.asarray(1.5), "y": np.asarray(-0.5), "z": np.asarray(2.0)},
]


@pytest.mark.parametrize("k", range(len(FMA_CASES)))
def test_fma(x64, k):
    check_subsets("fma", FMA_CASES[k])
    check_transpose("fma", FMA_CASES[k])


# --- multiplicative index updates ------------------------------------------------------------

def _update_operands(name, xs, vs, seed=7):
    rng = np.random.default_rng(seed)
    x = rng.uniform(0.5, 1.5, xs)  # positive, for power's log(x)
    values = 0.7 if vs == "s" else rng.uniform(0.5, 1.5, vs) * rng.choice([-1, 1], vs)
    return {"x": x, "values": values}


@pytest.mark.parametrize("name", ["at_multiply", "at_divide", "at_power"])
@pytest.mark.parametrize("xs,vs,index", UPDATES)
def test_multiplicative_updates(x64, name, xs, vs, index):
    operands = _update_operands(name, xs, vs)
    check_subsets(name, operands, {"index": index})
    check_transpose(name, operands, {"index": index})


@pytest.mark.parametrize("name", ["at_min", "at_max"])
@pytest.mark.parametrize("xs,vs,index", UPDATES)
def test_extremal_updates(x64, name, xs, vs, index):
    operands = _update_operands(name, xs, vs)
    check_subsets(name, operands, {"index": index})
    check_transpose(name, operands, {"index": index})


def test_extremal_ties_transpose_the_vjp(x64):
    """x[1] and two values tie at 2.0: each winner's tangent counts a third."""
    operands = {"x": np.array([1.0, 2.0, 3.0]), "values": np.array([2.0, 2.0, 0.5])}
    check_transpose("at_max", operands, {"index": np.array([1, 1, 2])})
    x, v = (jnp.asarray(operands[k]) for k in ("x", "values"))
    z = x.at[np.array([1, 1, 2])].max(v)
    t = jvp("at_max")(z, x, v, jnp.array([1.0, 3.0, 2.0]), jnp.array([6.0, 0.0, 9.0]),
                      index=np.array([1, 1, 2]))
    np.testing.assert_allclose(t, [1.0, 3.0, 2.0])


@pytest.mark.parametrize("name", ["at_multiply", "at_divide", "at_power"])
def test_unique_indices(x64, name):
    operands = _update_operands(name, (5,), (3,))
    params = {"index": np.array([4, 0, 2]), "unique_indices": True}
    check_subsets(name, operands, params)
    check_transpose(name, operands, params)


ZERO_VALUES = [[0.0, 1.5, 0.7, -1.2, 0.9],     # one zero among the writes to 2
               [0.0, 1.5, 0.0, -1.2, 0.9],     # two zeros at 2: every other product 0
               [0.8, 0.0, 0.7, 0.0, 0.9]]      # zeros at positions written once


@pytest.mark.parametrize("name", ["at_multiply", "at_power"])
@pytest.mark.parametrize("values", ZERO_VALUES)
def test_repeated_positions_with_zero_values(x64, name, values):
    """The other values' product at a position, counted without dividing by a zero."""
    x = np.random.default_rng(1).uniform(0.5, 1.5, 5)
    operands = {"x": x, "values": np.array(values)}
    t = check_jvp(name, operands, {"index": REPEATED})
    assert np.all(np.isfinite(np.asarray(t)))
    check_jvp(name, operands, {"index": REPEATED}, wrt=["values"])
    check_transpose(name, operands, {"index": REPEATED})


def test_at_multiply_repeated_exactly():
    """x[2] times three values: d z_2 = x_2 (t_a v_b v_c + v_a t_b v_c + v_a v_b t_c)."""
    x = jnp.asarray(np.array([1.0, 2.0, 3.0], np.float32))
    v = jnp.asarray(np.array([2.0, 0.0, 5.0], np.float32))
    index = np.array([2, 2, 2])
    z = x.at[index].multiply(v)
    tv = jnp.asarray(np.array([1.0, 1.0, 1.0], np.float32))
    t = jvp("at_multiply")(z, x, v, None, tv, index=index)
    assert t.dtype == np.float32
    np.testing.assert_array_equal(np.asarray(t), [0, 0, 3 * 2 * 5])
    t = jvp("at_multiply")(z, x, v, jnp.ones_like(x), None, index=index)
    np.testing.assert_array_equal(np.asarray(t), [1, 1, 0])


def test_at_power_at_zero_base_transposes_the_vjp(x64):
    """log(0) taken as 0 (JAX's pow): finite tangents where x == 0."""
    x = np.array([0.0, 1.2, 0.0, 0.8, 1.5])
    values = np.array([2.0, 1.5, 3.0, 2.5, 1.1])
    for index in (np.array([0, 2, 0, 1, 3]), slice(None)):
        check_transpose("at_power", {"x": x, "values": values}, {"index": index})
        z = jnp.asarray(x).at[index].power(jnp.asarray(values))
        t = jvp("at_power")(z, jnp.asarray(x), jnp.asarray(values), jnp.ones(5),
                            jnp.ones(5), index=index)
        assert np.all(np.isfinite(np.asarray(t)))


def test_no_tangents_give_none():
    x = jnp.asarray(np.abs(A).astype(np.float32))
    for name in ("prod", "max", "min", "var", "std", "cumprod", "nan_to_num"):
        assert jvp(name)(REGISTRY[name](x), x, None) is None, name
    assert jvp("fma")(x, x, 2.0, 1.0, None, None, None) is None
    for name in ("at_multiply", "at_divide", "at_power"):
        z = REGISTRY[name](x, 1.5, index=0)
        assert jvp(name)(z, x, 1.5, None, None, index=0) is None, name

