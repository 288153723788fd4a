"""Reductions against NumPy, with JAX's result dtypes (not NumPy's), eager and compiled."""
import warnings

import numpy as np
import pytest

import astjax
import astjax.numpy as jnp
from astjax._src.errors import ShapeError
from astjax._src.ir.types import ArrayType
from astjax._src.ops import registry
from .op_checks import check as run

X = np.arange(24, dtype=np.float32).reshape(2, 3, 4) / 7 - 1.5
AXES = [None, 0, 1, -1, (0, 2), (2, 0), (), [1, 2], (0, 1, 2)]

# op name -> NumPy reference computed in float64 (JAX's dtype is checked separately)
REFERENCE = {
    "sum": np.sum, "prod": np.prod, "mean": np.mean, "max": np.max, "min": np.min,
    "var": np.var, "std": np.std, "any": np.any, "all": np.all,
    "count_nonzero": lambda a, axis, keepdims: np.count_nonzero(
        a, axis=tuple(axis) if isinstance(axis, list) else axis, keepdims=keepdims),
}


def _np_axis(axis):
    return tuple(axis) if isinstance(axis, list) else axis


@pytest.mark.parametrize("name", sorted(REFERENCE))
@pytest.mark.parametrize("axis", AXES)
@pytest.mark.parametrize("keepdims", [False, True])
def test_against_numpy(name, axis, keepdims):
    out = run(name, X, axis=axis, keepdims=keepdims)
    expected = REFERENCE[name](X.astype(np.float64), axis=_np_axis(axis), keepdims=keepdims)
    assert out.shape == np.shape(expected)
    np.testing.assert_allclose(np.asarray(out, np.float64), expected, rtol=2e-6, atol=1e-6)


def test_keepdims_ones():
    x = jnp.zeros((2, 3, 4))
    out = run("sum", x, axis=(0, 2), keepdims=True)
    assert out.shape == (1, 3, 1)
    op = registry.NAMESPACE["sum"]
    t = op.infer({"a": ArrayType(np.dtype(np.float32), (False, True, False))},
                 {"axis": 1, "keepdims": True})
    assert t.ones == (False, True, False)
    t = op.infer({"a": ArrayType(np.dtype(np.float32), (False, True, False))},
                 {"axis": 0})
    assert t.ones == (True, False)


# --- dtypes --------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype, expected", [
    (np.bool_, np.int32), (np.int8, np.int32), (np.int16, np.int32), (np.int32, np.int32),
    (np.uint8, np.uint32), (np.uint16, np.uint32), (np.uint32, np.uint32),
    (np.float16, np.float16), (np.float32, np.float32), (np.complex64, np.complex64),
])
@pytest.mark.parametrize("name", ["sum", "prod"])
def test_sum_prod_dtypes(name, dtype, expected):
    x = (np.arange(6).reshape(2, 3) % 3).astype(dtype)
    out = run(name, x, axis=0)
    assert out.dtype == expected and not out.weak_type
    ref = getattr(np, name)(x.astype(np.complex128 if dtype is np.complex64 else np.float64), 0)
    np.testing.assert_allclose(np.asarray(out), ref, rtol=1e-3)


def test_sum_dtype_argument_and_promote_integers():
    i8 = np.array([100, 100, 100], np.int8)
    assert run("sum", i8) == 300
    assert run("sum", i8, promote_integers=False).dtype == np.int8
    assert run("sum", i8, dtype=float).dtype == np.float32
    assert run("prod", i8, dtype=jnp.int16).dtype == np.int16
    assert run("sum", np.array([True, True])) == 2


def test_sum_dtypes_x64(x64):
    assert run("sum", np.array([1, 2], np.int32)).dtype == np.int64
    assert run("sum", np.array([True])).dtype == np.int64
    assert run("sum", np.array([1, 2], np.uint8)).dtype == np.uint64
    assert run("prod", np.array([1.5])).dtype == np.float64
    assert run("mean", np.array([1, 2])).dtype == np.float64
    assert run("argmax", np.array([1, 2])).dtype == np.int64
    assert run("cumsum", np.array([True])).dtype == np.int64
    assert run("count_nonzero", np.array([1.0])).dtype == np.int64


@pytest.mark.parametrize("dtype, expected", [
    (np.bool_, np.float32), (np.int8, np.float32), (np.int32, np.float32),
    (np.float16, np.float16), (np.float32, np.float32), (np.complex64, np.complex64),
])
def test_mean_dtypes(dtype, expected):
    x = np.array([[1, 0, 1], [1, 1, 0]]).astype(dtype)
    out = run("mean", x, axis=1)
    assert out.dtype == expected
    np.testing.assert_allclose(np.asarray(out), [2 / 3, 2 / 3], rtol=1e-3)


def test_mean_dtype_argument():
    assert run("mean", np.array([1, 2], np.int32), dtype=jnp.float16).dtype == np.float16
    out = run("mean", np.array([-7, 0], np.int32), dtype=jnp.int32)
    assert out.dtype == np.int32 and out == -3  # truncated toward zero, as lax.div


@pytest.mark.parametrize("dtype, expected", [
    (np.bool_, np.float32), (np.int32, np.float32), (np.float16, np.float16),
    (np.float32, np.float32), (np.complex64, np.float32),
])
@pytest.mark.parametrize("name", ["var", "std"])
def test_var_std_dtypes(name, dtype, expected):
    x = np.array([[1, 0, 3], [2, 2, 0]]).astype(dtype)
    if dtype is np.complex64:
        x = x + 1j * x[::-1]
    out = run(name, x, axis=1)
    assert out.dtype == expected
    np.testing.assert_allclose(np.asarray(out), getattr(np, name)(x.astype(np.complex128), 1),
                               rtol=2e-3)


@pytest.mark.parametrize("name", ["max", "min"])
@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.uint16, np.float16, np.float32])
def test_max_min_keep_the_dtype(name, dtype):
    x = np.array([[1, 0, 1], [0, 0, 1]]).astype(dtype)
    out = run(name, x, axis=0)
    assert out.dtype == dtype
    np.testing.assert_array_equal(out, getattr(np, name)(x, axis=0))


def _zero_extremes(d):
    return jnp.max(d, axis=1), jnp.min(d, axis=0, keepdims=True), jnp.max(d[0]), jnp.min(d[1])


def test_max_min_of_signed_zeros_as_in_jax():
    """NumPy's max of [0., -0.] is -0. (the zero its loop meets last); JAX's is 0., and its
    min of zeros -0. if any is -0. Numba already agreed (runtime.maximum/minimum)."""
    d = jnp.array([[0.0, -0.0], [-0.0, -3.0]])
    for run_ in (_zero_extremes, astjax.jit(_zero_extremes)):
        signs = [np.signbit(np.asarray(r)).tolist() for r in run_(d)]
        assert signs == [[False, True], [[True, True]], False, True]  # JAX 0.10.2


@pytest.mark.parametrize("name", ["any", "all"])
def test_any_all(name):
    x = np.array([[0, 2, 0], [0, 0, 0]], np.int32)
    for axis in (None, 0, 1):
        out = run(name, x, axis=axis)
        assert out.dtype == np.bool_
        np.testing.assert_array_equal(out, getattr(np, name)(x, axis=axis))


def test_scalars_are_not_weak():
    out = run("sum", 2.0)
    assert out.dtype == np.float32 and not out.weak_type and out == 2.0
    assert run("max", 3).dtype == np.int32
    assert run("mean", 3).dtype == np.float32


# --- argmax / argmin -----------------------------------------------------------------------

@pytest.mark.parametrize("name", ["argmax", "argmin"])
@pytest.mark.parametrize("axis", [None, 0, 1, -1])
@pytest.mark.parametrize("keepdims", [False, True])
def test_argmax_argmin(name, axis, keepdims):
    x = np.array([[3, 1, 3, 0], [1, 5, 5, -2], [0, 0, 9, 9]], np.float32)
    out = run(name, x, axis=axis, keepdims=keepdims)
    assert out.dtype == np.int32 and not out.weak_type
    np.testing.assert_array_equal(out, getattr(np, name)(x, axis=axis, keepdims=keepdims))


def test_argmax_nan_and_bool():
    assert run("argmax", np.array([1.0, np.nan, 5.0, np.nan], np.float32)) == 1
    assert run("argmin", np.array([True, False, False])) == 1


# --- empty reductions ----------------------------------------------------------------------

def test_empty_reductions():
    e = np.zeros((0, 3), np.float32)
    np.testing.assert_array_equal(run("sum", e, axis=0), np.zeros(3))
    np.testing.assert_array_equal(run("prod", e, axis=0), np.ones(3))
    assert run("sum", e, axis=1).shape == (0,)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nan as in JAX, without NumPy's warnings
        assert np.isnan(run("mean", e)) and np.isnan(run("var", e)) and np.isnan(run("std", e))
    assert run("any", e) == False and run("all", e) == True  # noqa: E712
    assert run("max", e, axis=1).shape == (0,)


@pytest.mark.parametrize("name", ["max", "min", "argmax", "argmin"])
def test_empty_max_raises(name):
    with pytest.raises(ValueError):
        getattr(jnp, name)(np.zeros((0, 3), np.float32), axis=0)


# --- var / std -----------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["var", "std"])
@pytest.mark.parametrize("ddof", [0, 1, 2])
def test_var_std_ddof(name, ddof):
    out = run(name, X, axis=(0, 1), ddof=ddof)
    expected = getattr(np, name)(X.astype(np.float64), axis=(0, 1), ddof=ddof)
    np.testing.assert_allclose(out, expected, rtol=2e-6)
    np.testing.assert_allclose(run(name, X, axis=-1, correction=ddof),
                               getattr(np, name)(X.astype(np.float64), axis=-1, ddof=ddof),
                               rtol=2e-6)


def test_var_ddof_too_large_is_nan():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = run("var", np.array([1.0, 2.0], np.float32), ddof=2)
    assert np.isnan(out) and out.dtype == np.float32


def test_var_large_offset_is_accurate():
    x = np.float32(1e4) + np.array([0.0, 1.0, 2.0], np.float32)
    np.testing.assert_allclose(run("var", x), 2 / 3, rtol=1e-5)


def test_var_std_errors():
    with pytest.raises(ShapeError, match="ddof or correction"):
        jnp.var(X, ddof=1, correction=1)
    with pytest.raises(ShapeError, match="float or complex dtype"):
        jnp.std(X, dtype=jnp.int32)
    with pytest.raises(ShapeError, match="complex"):
        jnp.var(np.array([1j], np.complex64), dtype=jnp.float32)


# --- cumulative ----------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["cumsum", "cumprod"])
@pytest.mark.parametrize("axis", [None, 0, 1, -1])
def test_cumulative(name, axis):
    out = run(name, X, axis=axis)
    expected = getattr(np, name)(X.astype(np.float64), axis=axis)
    assert out.shape == expected.shape and out.dtype == np.float32
    np.testing.assert_allclose(out, expected, rtol=2e-5, atol=1e-6)


@pytest.mark.parametrize("dtype, expected", [
    (np.bool_, np.int32), (np.int8, np.int8), (np.uint8, np.uint8), (np.int32, np.int32),
    (np.float16, np.float16),
])
def test_cumulative_dtypes(dtype, expected):
    x = np.array([1, 0, 1, 1]).astype(dtype)
    out = run("cumsum", x)
    assert out.dtype == expected
    np.testing.assert_array_equal(out, [1, 1, 2, 3])
    assert run("cumprod", x).dtype == expected


def test_cumulative_dtype_argument_and_scalars():
    assert run("cumsum", np.array([1, 2], np.int8), dtype=jnp.float32).dtype == np.float32
    # a bool result accumulates (x != 0): -1 and 1 do not cancel
    np.testing.assert_array_equal(run("cumsum", np.array([0, -1, 1], np.int32), dtype=bool),
                                  [False, True, True])
    np.testing.assert_array_equal(run("cumprod", np.array([2, 0, 1], np.int32), dtype=bool),
                                  [True, False, False])
    assert run("cumsum", 3.0).shape == (1,)
    assert run("cumsum", 3.0, axis=0).shape == (1,)
    assert run("cumsum", np.ones((1, 1), np.float32), axis=None).shape == (1,)  # ones: (True,)


def test_cumulative_errors():
    with pytest.raises(ShapeError, match="single int"):
        jnp.cumsum(X, axis=(0, 1))
    with pytest.raises(ShapeError, match="out of range"):
        jnp.cumprod(X, axis=3)
    with pytest.raises(ShapeError, match="out of range"):
        jnp.cumsum(2.0, axis=1)


# --- bad arguments -------------------------------------------------------------------------

@pytest.mark.parametrize("call, match", [
    (lambda: jnp.sum(X, axis=3), "axis 3 is out of range for an array of rank 3"),
    (lambda: jnp.mean(X, axis=-4), "out of range"),
    (lambda: jnp.max(X, axis=(0, -3)), "names an axis twice"),
    (lambda: jnp.sum(X, axis=1.0), "axis must be None, an int or a tuple"),
    (lambda: jnp.sum(1.0, axis=0), "out of range for an array of rank 0"),
    (lambda: jnp.argmax(X, axis=(0, 1)), "axis must be None or a single int"),
    (lambda: jnp.sum([1, 2]), "must be an array or a number"),
    (lambda: jnp.sum(X, dtype="nope"), "not understood"),
    (lambda: jnp.sum(X, 0, None, None, True, 5), "too many positional"),
    (lambda: jnp.sum(X, out=jnp.zeros(())), "out= is not supported"),
])
def test_errors(call, match):
    with pytest.raises(ShapeError, match=match):
        call()


# --- names ---------------------------------------------------------------------------------

def test_methods_aliases_and_flags():
    x = jnp.array(X)
    for name in ("sum", "prod", "mean", "max", "min", "argmax", "argmin", "var", "std", "any",
                 "all", "cumsum", "cumprod"):
        np.testing.assert_allclose(np.asarray(getattr(x, name)(axis=1), np.float64),
                                   getattr(np, name)(X, axis=1), rtol=1e-5)
        assert registry.op_for_object(getattr(np, name)) is registry.NAMESPACE[name]
    assert jnp.amax is jnp.max and jnp.amin is jnp.min
    assert registry.op_for_object(np.amax) is jnp.max
    for name in ("argmax", "argmin", "any", "all", "count_nonzero"):
        assert not registry.NAMESPACE[name].differentiable
    for name in ("sum", "prod", "mean", "max", "min", "var", "std", "cumsum", "cumprod"):
        assert registry.NAMESPACE[name].differentiable


# --- compiled ------------------------------------------------------------------------------

def reduce_with(f, x, axis, keepdims):
    return f(x, axis=axis, keepdims=keepdims)


def statistics(x):
    return (x.sum(), x.mean(axis=0), jnp.var(x, axis=-1, ddof=1), jnp.max(x, axis=(0, 1)),
            x.argmin(axis=1), jnp.cumsum(x, axis=0), jnp.any(x > 0, keepdims=True),
            np.sum(x, axis=1, dtype=np.float16), jnp.count_nonzero(x))


@pytest.mark.parametrize("name", ["sum", "prod", "mean", "max", "min", "var", "std", "any",
                                  "all", "argmax", "argmin", "count_nonzero"])
def test_compiled_matches_eager(name):
    jitted = astjax.jit(reduce_with, static_argnames=("f", "axis", "keepdims"))
    for x in (X, X.astype(np.int32), X > 0):
        for axis, keepdims in ((None, False), (1, True), (-1, False)):
            f = registry.NAMESPACE[name]
            eager, compiled = f(x, axis=axis, keepdims=keepdims), jitted(f, x, axis, keepdims)
            assert compiled.dtype == eager.dtype and compiled.shape == eager.shape
            assert compiled.weak_type == eager.weak_type
            np.testing.assert_allclose(np.asarray(compiled), np.asarray(eager), rtol=1e-6)


def test_compiled_statistics():
    eager, compiled = statistics(jnp.array(X)), astjax.jit(statistics)(X)
    for e, c in zip(eager, compiled):
        assert c.dtype == e.dtype and c.shape == e.shape
        np.testing.assert_allclose(np.asarray(c), np.asarray(e), rtol=1e-6)


def test_numpy_functions_on_arrays_delegate_to_the_ops():
    """np.sum(x) calls x.sum(axis=..., out=None): JAX's dtypes, an Array back."""
    x = jnp.array([[1, 2], [3, 4]], dtype=jnp.int8)
    for fn, dtype in ((np.sum, np.int32), (np.prod, np.int32), (np.mean, np.float32),
                      (np.max, np.int8), (np.amin, np.int8), (np.argmax, np.int32),
                      (np.var, np.float32), (np.std, np.float32), (np.any, np.bool_),
                      (np.cumsum, np.int8)):
        out = fn(x, axis=0)
        assert isinstance(out, astjax.Array) and out.dtype == dtype, fn.__name__
        np.testing.assert_allclose(np.asarray(out), fn(np.asarray(x), axis=0), rtol=1e-6)


# --- where= and initial= (JAX's keywords, written with the ops) ----------------------------

M = np.array([[1, 0, 1, 1], [0, 1, 0, 1], [1, 1, 1, 0]], bool)
X2 = X[0] ** 3 + X[1]


def masked(x, m, xp=jnp):  # NumPy's keywords agree with JAX's (checked against JAX 0.10.2)
    return (xp.sum(x, where=m, keepdims=True), xp.sum(x, axis=1, initial=2.0, where=m),
            xp.mean(x, axis=0, where=m), xp.var(x, axis=1, ddof=1, where=m),
            xp.std(x, axis=1, where=m), xp.max(x, axis=1, initial=-10.0, where=m),
            xp.min(x, axis=0, initial=0.5, where=m), xp.prod(x, axis=1, initial=0.5, where=m),
            x.mean(axis=1, where=m), x.sum(where=m), xp.max(x, initial=100.0),
            xp.any(x > 0.3, axis=1, where=m), xp.all(x > 0, axis=0, where=m))


def masked_loss(x, m):
    return sum(jnp.sum(jnp.sin(r)) for r in masked(x, m)[:9])


def test_where_and_initial():
    expected = masked(X2.astype(np.float64), M, np)
    for out in (masked(jnp.asarray(X2), M), astjax.jit(masked)(X2, M)):
        for o, e in zip(out, expected):
            assert o.shape == e.shape and o.dtype == (np.bool_ if e.dtype == bool else X2.dtype)
            np.testing.assert_allclose(np.asarray(o, np.float64), e, rtol=2e-6, atol=1e-6)
    assert astjax.jit(masked)(X2, M)[11].dtype == np.bool_
    for fn in (jnp.max, jnp.min):  # as JAX: a mask needs an initial value
        with pytest.raises(ValueError, match="does not have an identity, so to use a where"):
            fn(X2, where=M)
        with pytest.raises(ValueError, match="does not have an identity"):
            astjax.jit(lambda x: fn(x, axis=0, where=x > 0))(X2)


def test_where_and_initial_gradients():
    g = astjax.grad(masked_loss)(X2, M)
    eps, x64 = 1e-6, X2.astype(np.float64)
    numeric = np.zeros_like(x64)
    for i in np.ndindex(x64.shape):
        d = np.zeros_like(x64)
        d[i] = eps
        numeric[i] = (sum(np.sum(np.sin(r)) for r in masked(x64 + d, M, np)[:9])
                      - sum(np.sum(np.sin(r)) for r in masked(x64 - d, M, np)[:9])) / (2 * eps)
    np.testing.assert_allclose(g, numeric, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(astjax.jit(astjax.grad(masked_loss))(X2, M), g, rtol=1e-5)


def test_where_and_initial_on_numba(numba_backend):
    f = astjax.jit(lambda x, m: (jnp.var(x, axis=1, where=m), x.max(initial=0.5, where=m)))
    v, mx = f(X2, M)
    np.testing.assert_allclose(v, np.var(X2, axis=1, where=M), rtol=1e-5)
    assert mx == np.max(X2, initial=0.5, where=M)


def test_jit_of_a_reduction_itself_takes_its_keywords():
    """jit(jnp.sum)(x, where=m), jit(jnp.max)(x, initial=v), jit(jnp.where)(c, size=n):
    the op's keywords reach its keyword function (jit had bound the op's own signature:
    "unexpected keyword argument 'where'")."""
    x = np.arange(6.0, dtype=np.float32)
    m = x > 2
    np.testing.assert_allclose(astjax.jit(jnp.sum)(x, where=m), np.sum(x, where=m))
    np.testing.assert_allclose(astjax.jit(jnp.sum)(x), np.sum(x))
    np.testing.assert_allclose(astjax.jit(jnp.max)(x, initial=10.0), np.max(x, initial=10.0))
    (got,) = astjax.jit(jnp.where, static_argnames="size")(m, size=4)
    np.testing.assert_array_equal(got, [3, 4, 5, 0])


def test_max_and_min_with_initial_of_an_empty_reduction_give_initial():
    """jnp.max(a, initial=v) where a row has no elements is v, as in NumPy and JAX (it
    raised "zero-size array to reduction operation maximum which has no identity")."""
    empty, x = np.zeros((0, 3), np.float32), np.float32([[1, 5, -2], [0, -1, 7]])
    for xp_max, want in [(lambda a: jnp.max(a, initial=-1.0), np.max(empty, initial=-1.0)),
                         (lambda a: jnp.max(a, axis=0, initial=-1.0),
                          np.max(empty, axis=0, initial=-1.0)),
                         (lambda a: jnp.min(a, axis=1, initial=2.0, keepdims=True),
                          np.min(empty, axis=1, initial=2.0, keepdims=True))]:
        for f in (xp_max, astjax.jit(xp_max)):
            got = f(empty)
            assert got.shape == want.shape
            np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(astjax.jit(lambda a: jnp.min(a, axis=1, initial=0.5))(x),
                                  np.min(x, axis=1, initial=0.5))
