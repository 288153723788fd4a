"""astype, where, clip, round, nan_to_num against NumPy, with JAX's dtype rules.

``run`` (also used by the creation and reduction tests) calls an op eagerly and
checks that its impl's raw result has exactly the dtype its abstract_eval gives,
and that the abstract type agrees with the result's rank and size-1 dims.
"""
import warnings

import numpy as np
import pytest

import astjax
import astjax.numpy as jnp
from astjax._src.errors import ShapeError
from astjax._src.ops import registry


from .op_checks import check as run  # noqa: E402


F32 = jnp.array([[-1.5, 0.25, 2.5], [3.5, -0.5, 7.0]], dtype=jnp.float32)
I32 = jnp.array([[1, -2, 3], [4, 0, -6]], dtype=jnp.int32)


# --- astype --------------------------------------------------------------------------------

@pytest.mark.parametrize("x, dtype, expected", [
    (F32, jnp.int32, np.int32), (F32, bool, np.bool_), (I32, jnp.float32, np.float32),
    (I32, float, np.float32), (I32, int, np.int32), (F32, "float16", np.float16),
    (F32, jnp.float64, np.float32), (jnp.array([True, False]), jnp.uint8, np.uint8),
    (F32, None, np.float32),
])
def test_astype(x, dtype, expected):
    out = run("astype", x, dtype)
    assert out.dtype == expected and out.shape == x.shape
    np.testing.assert_array_equal(out, np.asarray(x).astype(expected))


def test_astype_x64(x64):
    assert run("astype", I32, float).dtype == np.float64
    assert run("astype", F32, int).dtype == np.int64


def test_astype_scalars_and_method():
    out = run("astype", 2.7, jnp.int32)
    assert out.dtype == np.int32 and out == 2 and not out.weak_type
    assert not run("astype", 1.0, None).weak_type  # a conversion is never weak
    assert F32.astype(jnp.int32).dtype == np.int32
    assert run("astype", jnp.zeros((0, 3)), int).shape == (0, 3)


# JAX (XLA) converts floats to integers saturating, NaN to 0; NumPy's cast is undefined there
_OUT_OF_RANGE = np.array([1e10, -1e10, np.nan, np.inf, -np.inf, 3e9, -0.5, 255.9, 256.0],
                         np.float32)
_SATURATED = {
    np.int32: [2**31 - 1, -2**31, 0, 2**31 - 1, -2**31, 2**31 - 1, 0, 255, 256],
    np.uint32: [2**32 - 1, 0, 0, 2**32 - 1, 0, 3_000_000_000, 0, 255, 256],
    np.uint8: [255, 0, 0, 255, 0, 255, 0, 255, 255],
    np.int8: [127, -128, 0, 127, -128, 127, 0, 127, 127],
}


@pytest.mark.parametrize("dtype", list(_SATURATED))
def test_float_to_int_saturates_as_in_jax(dtype):
    for out in (run("astype", _OUT_OF_RANGE, dtype), jnp.asarray(_OUT_OF_RANGE, dtype),
                jnp.array(_OUT_OF_RANGE, dtype)):
        np.testing.assert_array_equal(out, np.array(_SATURATED[dtype], dtype))
        assert out.dtype == dtype


def _conversions(x):
    return (x.astype(jnp.int32), x.astype(jnp.uint32), jnp.asarray(x, jnp.uint8),
            x.astype(jnp.int8), x[3].astype(jnp.int32))


def test_float_to_int_saturates_in_compiled_code(numba_backend):
    outs = astjax.jit(_conversions)(_OUT_OF_RANGE)
    for out, dtype in zip(outs, [np.int32, np.uint32, np.uint8, np.int8]):
        np.testing.assert_array_equal(out, np.array(_SATURATED[dtype], dtype))
    assert int(outs[4]) == 2**31 - 1
    astjax.config.update("astjax_jit_backend", "python")
    for a, b in zip(astjax.jit(_conversions)(_OUT_OF_RANGE), outs):
        np.testing.assert_array_equal(a, b)


def _astype_300():
    return jnp.astype(300, jnp.int8)


def test_astype_of_a_python_int_wraps_as_in_jax():
    """astype(-1, uint8) is 255 in JAX; eagerly it raised NumPy's OverflowError."""
    out = run("astype", -1, jnp.uint8)
    assert out.dtype == np.uint8 and int(out) == 255
    assert int(astjax.jit(_astype_300)()) == 44


def test_astype_errors():
    with pytest.raises(ShapeError, match="astype.*not understood"):
        jnp.astype(F32, "foo")
    with pytest.raises(ShapeError, match="not a dtype"):
        jnp.astype(F32, 3)
    with pytest.raises(ShapeError, match="must be an array"):
        jnp.astype([1, 2], int)


# --- where ---------------------------------------------------------------------------------

def test_where_broadcasts():
    c = jnp.array([[True], [False], [True]])
    x = jnp.array([[0.0, 1.0, 2.0, 3.0]])
    y = jnp.array([10.0, 20.0, 30.0, 40.0])
    out = run("where", c, x, y)
    assert out.shape == (3, 4) and out.dtype == np.float32
    np.testing.assert_array_equal(out, np.where(np.asarray(c), np.asarray(x), np.asarray(y)))


@pytest.mark.parametrize("x, y, dtype, weak", [
    (I32, 0.5, np.float32, True),  # a strong int meeting a Python float is a weak float in JAX
    (F32, 0, np.float32, False),
    (jnp.array([1, 2], dtype=jnp.int8), 3, np.int8, False),
    (jnp.array([1.0, 2.0], dtype=jnp.float16), 3.0, np.float16, False),
    (jnp.array([True, False]), 2, np.int32, True),
    (I32, F32, np.float32, False), (1.0, 2.0, np.float32, True), (1, 2, np.int32, True),
])
def test_where_promotes_x_and_y(x, y, dtype, weak):
    out = run("where", jnp.array(True), x, y)
    assert out.dtype == dtype and out.weak_type == weak


def test_where_condition_is_truthiness_of_numbers():
    out = run("where", jnp.array([0, 2, -1]), 1.0, 0.0)
    np.testing.assert_array_equal(out, [0.0, 1.0, 1.0])
    assert run("where", 1, F32, 0.0).shape == F32.shape


def test_where_x64(x64):
    assert run("where", True, 1.0, 2).dtype == np.float64
    assert run("where", jnp.array([True]), jnp.array([1], dtype=jnp.int32), 2.0).dtype == \
        np.float64


def test_where_one_argument_is_an_error():
    with pytest.raises(ShapeError, match=r"where\(condition\) with one argument"):
        jnp.where(jnp.array([True, False]))
    with pytest.raises(ShapeError, match="pass both x and y"):
        jnp.where(jnp.array([True]), 1.0)
    with pytest.raises(ShapeError, match="pass both x and y"):
        jnp.where(jnp.array([True]), None, 1.0)
    with pytest.raises(ShapeError, match="condition must be an array"):
        jnp.where([True, False], 1.0, 2.0)


def test_where_resolves_np_where():
    assert registry.op_for_object(np.where) is jnp.where


# --- clip ----------------------------------------------------------------------------------

@pytest.mark.parametrize("args, kwargs", [
    ((0.0, 3.0), {}), ((0.0,), {}), ((None, 3.0), {}), ((), {"max": 3.0}),
    ((), {"min": 0.0}), ((), {"a_min": 0.0, "a_max": 3.0}), ((), {"a_max": 3.0}),
    ((None, None), {}), ((5.0, 1.0), {}),
])
def test_clip_bounds(args, kwargs):
    out = run("clip", F32, *args, **kwargs)
    lo = kwargs.get("min", kwargs.get("a_min", args[0] if args else None))
    hi = kwargs.get("max", kwargs.get("a_max", args[1] if len(args) > 1 else None))
    expected = np.asarray(F32)
    if lo is not None:
        expected = np.maximum(lo, expected)
    if hi is not None:
        expected = np.minimum(hi, expected)
    np.testing.assert_array_equal(out, expected)
    assert out.dtype == np.float32 and not out.weak_type


def test_clip_dtypes():
    assert run("clip", I32, 0, 2).dtype == np.int32
    assert run("clip", I32, 0.5, 2).dtype == np.float32  # int with a float bound: float
    assert run("clip", jnp.array([1.0], dtype=jnp.float16), 0, 0.5).dtype == np.float16
    assert run("clip", 3.0, 0.0, 1.0).weak_type


def test_clip_array_bounds_broadcast_and_nan():
    lo = jnp.array([[0.0], [1.0]])
    out = run("clip", jnp.array([-1.0, 0.5, np.nan]), lo, 2.0)
    assert out.shape == (2, 3)
    np.testing.assert_array_equal(out, [[0.0, 0.5, np.nan], [1.0, 1.0, np.nan]])


def test_clip_method_and_alias():
    np.testing.assert_array_equal(I32.clip(0, 3), np.clip(np.asarray(I32), 0, 3))
    np.testing.assert_array_equal(I32.clip(max=0), np.minimum(np.asarray(I32), 0))
    assert registry.op_for_object(np.clip) is jnp.clip


def test_clip_errors():
    with pytest.raises(ShapeError, match="pass min= or a_min=, not both"):
        jnp.clip(F32, 0.0, a_min=1.0)
    with pytest.raises(ShapeError, match="complex"):
        jnp.clip(jnp.array([1 + 1j]), 0.0, 1.0)


# --- round ---------------------------------------------------------------------------------

@pytest.mark.parametrize("decimals", [0, 1, 2, -1])
def test_round_floats(decimals):
    x = jnp.array([0.5, 1.5, 2.5, -2.5, 1.234567, 15.0, 25.0, -0.126], dtype=jnp.float32)
    out = run("round", x, decimals)
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, np.round(np.asarray(x), decimals), rtol=1e-6)


def test_round_half_to_even():
    out = run("round", jnp.array([10.5, 21.5, 12.5, 31.5]))
    np.testing.assert_array_equal(out, [10.0, 22.0, 12.0, 32.0])


def test_round_integers_unchanged_and_weak_kept():
    out = run("round", I32, 2)
    assert out.dtype == np.int32
    np.testing.assert_array_equal(out, I32)
    scalar = run("round", 2.5)
    assert scalar == 2.0 and scalar.dtype == np.float32 and scalar.weak_type
    assert run("round", 7).dtype == np.int32


def test_round_past_precision_is_a_noop():
    x = jnp.array([1.5, -3.25], dtype=jnp.float32)
    np.testing.assert_array_equal(run("round", x, 40), x)


def test_round_complex_and_x64(x64):
    out = run("round", jnp.array([1.26 + 2.44j]), 1)
    assert out.dtype == np.complex128
    np.testing.assert_allclose(out, [1.3 + 2.4j])
    assert run("round", jnp.array([1.5])).dtype == np.float64


def test_round_names():
    assert jnp.around is jnp.round
    assert registry.op_for_object(np.round) is jnp.round
    assert registry.op_for_object(np.around) is jnp.round
    np.testing.assert_array_equal(F32.round(), np.round(np.asarray(F32)))


def test_round_errors():
    with pytest.raises(ShapeError, match="decimals < 0"):
        jnp.round(I32, -1)
    with pytest.raises(ShapeError, match="boolean"):
        jnp.round(jnp.array([True]))
    with pytest.raises(ShapeError, match="decimals must be an int"):
        jnp.round(F32, 1.5)


# --- nan_to_num ----------------------------------------------------------------------------

def test_nan_to_num_defaults():
    x = jnp.array([np.nan, np.inf, -np.inf, 1.5], dtype=jnp.float32)
    out = run("nan_to_num", x)
    assert out.dtype == np.float32
    big = np.finfo(np.float32).max
    np.testing.assert_array_equal(out, [0.0, big, -big, 1.5])


def test_nan_to_num_values_ints_and_x64(x64):
    x = jnp.array([np.nan, np.inf, -np.inf])
    out = run("nan_to_num", x, nan=1.0, posinf=2.0, neginf=-2.0)
    assert out.dtype == np.float64
    np.testing.assert_array_equal(out, [1.0, 2.0, -2.0])
    ints = jnp.array([1, 2])
    np.testing.assert_array_equal(run("nan_to_num", ints), ints)


def test_nan_to_num_weak_scalar():
    assert not run("nan_to_num", float("nan")).weak_type  # JAX builds it with where()
    assert run("nan_to_num", 3).weak_type


def test_no_warnings_for_plain_conversions():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        jnp.where(F32 > 0, F32, 0.0)
        jnp.clip(F32, 0.0, 1.0)


def test_numpy_functions_on_arrays_delegate_to_the_ops():
    """np.round(x) calls x.round(decimals, out=None), np.clip(x, ...) x.clip(..., out=None)."""
    rounded = np.round(F32)
    assert isinstance(rounded, astjax.Array) and rounded.dtype == np.float32
    clipped = np.clip(I32, 0, 2.5)
    assert isinstance(clipped, astjax.Array) and clipped.dtype == np.float32
    np.testing.assert_array_equal(clipped, np.clip(np.asarray(I32), 0, 2.5))
    with pytest.raises(ShapeError, match="out= is not supported"):
        jnp.round(F32, out=F32)


# --- compiled ------------------------------------------------------------------------------

def conversions(x, i, lo):
    return (x.astype(jnp.int32), jnp.astype(i, float), jnp.where(x > 0, x, 0),
            jnp.where(i > 0, i, 0.5), jnp.clip(x, lo, None), jnp.clip(i, a_max=2), x.clip(max=1.0),
            jnp.round(x, 1), np.round(x), jnp.around(i), jnp.nan_to_num(x / 0.0))


def test_compiled_matches_eager():
    x = np.array([[-1.26, 0.0, 2.55]], np.float32)
    i = np.array([1, -2, 3], np.int32)
    with np.errstate(divide="ignore", invalid="ignore"):
        eager = conversions(jnp.array(x), jnp.array(i), -0.5)
        compiled = astjax.jit(conversions)(x, i, -0.5)
    for e, c in zip(eager, compiled):
        assert c.dtype == e.dtype and c.shape == e.shape and c.weak_type == e.weak_type
        np.testing.assert_array_equal(np.asarray(c), np.asarray(e))


def numpy_spelling(x, i):
    return np.where(x > 1, 1.0, -1.0), np.clip(i, 0, 1.5), jnp.float32(i)


def test_compiled_numpy_functions_follow_jax():
    where, clip, cast = astjax.jit(numpy_spelling)(np.ones(2, np.float32), np.ones(2, np.int32))
    assert where.dtype == np.float32 and where.weak_type      # eager NumPy would give float64
    assert clip.dtype == np.float32 and cast.dtype == np.float32


def test_compiled_errors_name_the_user_line():
    def one_argument_where(x):
        return jnp.where(x > 0)

    with pytest.raises(TypeError, match=r"test_ops_conversions.py:\d+.*where\(condition\)"):
        astjax.jit(one_argument_where)(np.ones(3, np.float32))


def _xor_with_a_large_literal(a):
    return a ^ jnp.uint32(2166136261), jnp.int32(2.7)


def test_scalar_types_convert_python_literals_directly():
    """``jnp.uint32(2166136261)`` converts the literal itself, not an int32 first (that
    overflowed in generated code)."""
    a = np.array([1, 2**31, 77], np.uint32)
    out, i = astjax.jit(_xor_with_a_large_literal)(a)
    np.testing.assert_array_equal(out, a ^ np.uint32(2166136261))
    assert out.dtype == np.uint32 and i.dtype == np.int32 and int(i) == 2


def test_scalar_types_are_dtypes_and_make_arrays_as_in_jax():
    three = jnp.int32(3)
    assert isinstance(three, astjax.Array) and three.dtype == np.int32 and not three.weak_type
    product = jnp.float32(2.0) * jnp.int32(3)  # NumPy's scalars would give float64
    assert product.dtype == np.float32 and float(product) == 6.0
    assert np.dtype(jnp.float32) == np.float32 and jnp.float32 == np.float32
    assert jnp.zeros(2, jnp.uint8).dtype == np.uint8 and jnp.ones(2).dtype == jnp.float32
    assert isinstance(np.float32(1.0), jnp.float32) and not isinstance(1.0, jnp.float32)
    assert jnp.issubdtype(jnp.int32, jnp.integer) and jnp.finfo(jnp.float32).bits == 32


def _scalar_types_of_lists(x, k):
    return (x * np.float32([1.0, 2.0, 3.0]), jnp.int32([[1, 2], [3, 4]]) + k,
            np.uint8((k, 2.5)))


@pytest.mark.parametrize("backend", ["python", "numba"])
def test_scalar_types_called_on_a_list_make_an_array(backend):
    """``np.float32([1.0, 2.0])`` in compiled code is the array, as ``jnp.asarray(..,
    dtype)`` (it was a constant tuple that astype refused)."""
    before = astjax.config.astjax_jit_backend
    astjax.config.update("astjax_jit_backend", backend)
    try:
        jitted = astjax.jit(_scalar_types_of_lists)
        scaled, ints, small = jitted(np.float32([0.5, 1.0, 1.5]), np.int32(1))
        (compiled,) = jitted.cache.values()
        assert compiled.backend == backend, compiled.fallback_reason
    finally:
        astjax.config.update("astjax_jit_backend", before)
    np.testing.assert_array_equal(scaled, np.float32([0.5, 2.0, 4.5]))
    np.testing.assert_array_equal(ints, [[2, 3], [4, 5]])
    np.testing.assert_array_equal(small, [1, 2])
    assert (scaled.dtype, ints.dtype, small.dtype) == (np.float32, np.int32, np.uint8)
    assert not scaled.weak_type and not ints.weak_type
    grad = astjax.grad(lambda x: jnp.sum(np.float32([x, 2.0]) * x))(1.5)
    assert float(grad) == 5.0
