"""Creation ops against NumPy, with JAX's dtypes and weak types."""
import numpy as np
import pytest

import astjax
import astjax.numpy as jnp
from astjax._src.errors import ShapeError
from astjax._src.ir.types import ArrayType
from astjax._src.ops import registry
from astjax.test_util import check_grads

from .op_checks import check as run
from .test_numba_backend import _run


def rule(name, *operand_types, **params):
    """The abstract result of op ``name`` for operand types and (possibly dynamic) params."""
    op = registry.NAMESPACE[name]
    return op.infer(dict(zip(op.operands, operand_types)), params)


INT = ArrayType(np.dtype(np.int32))        # a size computed at run time
F32 = jnp.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])


# --- array / asarray -----------------------------------------------------------------------

@pytest.mark.parametrize("name", ["array", "asarray"])
@pytest.mark.parametrize("obj, dtype, weak, shape", [
    (1.0, np.float32, True, ()),          # JAX: a weak value stays weak
    (1, np.int32, True, ()), (1j, np.complex64, True, ()),
    (True, np.bool_, False, ()),          # JAX: bools are never weak
    ([1, 2, 3], np.int32, False, (3,)),   # a list is strong
    ([1, 2.5], np.float32, False, (2,)), ([True, 2], np.int32, False, (2,)),
    ([[1, 2], [3, 4]], np.int32, False, (2, 2)), (((1.0,), (2.0,)), np.float32, False, (2, 1)),
    ([], np.float32, False, (0,)), ([[], []], np.float32, False, (2, 0)),
    ([[]], np.float32, False, (1, 0)), (np.float32(2.0), np.float32, False, ()),
    (np.arange(3, dtype=np.int16), np.int16, False, (3,)),
])
def test_array_from_python_values(name, obj, dtype, weak, shape):
    out = run(name, obj)
    assert out.dtype == dtype and out.weak_type == weak and out.shape == shape
    np.testing.assert_array_equal(out, np.array(obj))


def test_array_stacks_arrays_with_promotion():
    a = jnp.array([1, 2, 3])
    out = run("array", [a, a * 2])
    assert out.shape == (2, 3) and out.dtype == np.int32
    np.testing.assert_array_equal(out, [[1, 2, 3], [2, 4, 6]])
    mixed = run("array", (a, 0.5 * jnp.ones(3)))
    assert mixed.dtype == np.float32
    half = jnp.array(1.0, dtype=jnp.float16)
    assert run("array", [half, 3.0]).dtype == np.float16       # the literal is weak
    assert run("array", [[half], [half]]).shape == (2, 1)


def test_array_of_array_keeps_weak_and_dtype():
    assert run("array", jnp.array(2.0)).weak_type
    assert run("asarray", F32).dtype == np.float32 and not run("asarray", F32).weak_type
    np.testing.assert_array_equal(run("asarray", F32), F32)


@pytest.mark.filterwarnings("ignore:.*64 input converted")
def test_array_narrows_64_bit_inputs():
    assert run("array", np.float64(2.0)).dtype == np.float32
    assert run("asarray", np.arange(3)).dtype == np.int32


def test_array_dtype_and_ndmin():
    out = run("array", [1, 2], dtype=float)
    assert out.dtype == np.float32 and not out.weak_type
    assert run("array", 1.0, dtype=jnp.float16).dtype == np.float16
    assert run("array", 2**40, dtype=jnp.float32) == 2.0**40
    assert run("array", [1, 2], ndmin=3).shape == (1, 1, 2)
    assert run("asarray", [1.7, -1.2], dtype=jnp.int32).tolist() == [1, -1]


def test_array_rule_ones():
    assert rule("array", ArrayType(np.dtype(np.float32), (False,))).ones == (False,)
    assert run("array", [jnp.zeros(3)]).shape == (1, 3)  # run checks ones == (True, False)
    from astjax._src.ir.types import SequenceType
    seq = SequenceType((ArrayType(np.dtype(np.float32), (True, False)),) * 2)
    assert rule("array", seq).ones == (False, True, False)


def test_array_x64(x64):
    assert run("array", 1.0).dtype == np.float64
    assert run("array", [1, 2]).dtype == np.int64
    assert run("array", np.float64(1.0)).dtype == np.float64
    assert run("array", [1.0], dtype=jnp.float32).dtype == np.float32


def copy_then_write(x):
    y = x.copy()
    y[0] = 1.0
    return y * jnp.copy(x) + np.copy(x)


def test_copy_is_numpys(x64):
    x = np.array([0.5, -1.5, 2.0])
    want = np.concatenate([[1.0], x[1:]]) * x + x
    np.testing.assert_allclose(copy_then_write(x), want)
    np.testing.assert_allclose(astjax.jit(copy_then_write)(x), want)
    np.testing.assert_allclose(x, [0.5, -1.5, 2.0])
    check_grads(copy_then_write, (x,), order=1)


def test_array_errors():
    with pytest.raises(ShapeError, match="same rank"):
        jnp.array([jnp.zeros(2), 1.0])
    with pytest.raises(ShapeError, match="same rank"):
        jnp.array([[1, 2], 3])
    with pytest.raises(ShapeError, match="must be an array or a number"):
        jnp.array("abc")
    with pytest.raises(ShapeError, match="not understood"):
        jnp.array([1], dtype="nope")
    with pytest.raises(OverflowError):
        jnp.array([2**40])  # does not fit the default int32, as in JAX
    with pytest.raises(ValueError):
        jnp.array([[1, 2], [3]])  # ragged: same rank, sizes differ at run time


# --- zeros, ones, empty, full --------------------------------------------------------------

@pytest.mark.parametrize("name, fill", [("zeros", 0), ("ones", 1), ("empty", None)])
@pytest.mark.parametrize("shape", [3, (2, 3), (), (0, 2), [1, 4], (np.int64(2),)])
def test_zeros_ones_empty(name, fill, shape):
    out = run(name, shape)
    assert out.dtype == np.float32 and not out.weak_type
    assert out.shape == np.zeros(shape).shape
    if fill is not None:
        np.testing.assert_array_equal(out, np.full(np.zeros(shape).shape, fill))


@pytest.mark.parametrize("name", ["zeros", "ones", "empty"])
def test_zeros_dtypes(name):
    assert run(name, 2, jnp.int32).dtype == np.int32
    assert run(name, 2, dtype=bool).dtype == np.bool_
    assert run(name, 2, dtype=float).dtype == np.float32
    assert run(name, 2, dtype=jnp.float64).dtype == np.float32
    assert run(name, (2,), dtype="complex64").dtype == np.complex64


def test_zeros_x64(x64):
    assert run("zeros", 2).dtype == np.float64
    assert run("ones", 2, dtype=int).dtype == np.int64


def test_zeros_dynamic_shape():
    n = jnp.array(3)
    assert run("zeros", n).shape == (3,)
    assert run("ones", (n, 2)).shape == (3, 2)
    assert rule("zeros", shape=(INT, 1)).ones == (False, True)
    assert rule("zeros", shape=INT).ones == (False,)
    assert rule("ones", shape=(1, 1, 5)).ones == (True, True, False)


@pytest.mark.parametrize("shape, match", [
    (2.0, "must be an integer, got 2.0"), ((2, 1.5), "must be an integer"),
    (-1, "must not be negative"), ((True,), "must be an integer"),
    (ArrayType(np.dtype(np.float32)), "integer scalar"),
    (ArrayType(np.dtype(np.int32), (False,)), "integer scalar"),
])
def test_zeros_bad_shapes(shape, match):
    with pytest.raises(ShapeError, match=match):
        rule("zeros", shape=shape)


def test_zeros_shape_as_separate_arguments():
    with pytest.raises(ShapeError, match="one tuple"):
        jnp.zeros(2, 3)


def test_full():
    out = run("full", (2, 3), 1.5)
    assert out.dtype == np.float32 and out.weak_type  # JAX: the fill value's weak type
    np.testing.assert_array_equal(out, np.full((2, 3), 1.5))
    assert run("full", 3, 7).dtype == np.int32
    strong = run("full", 3, 7, dtype=jnp.float32)
    assert strong.dtype == np.float32 and not strong.weak_type
    assert run("full", 2, 2**40, dtype=jnp.float32)[0] == 2.0**40
    assert run("full", (2,), jnp.array(1, dtype=jnp.int8)).dtype == np.int8
    assert run("full", (1, 2), True).shape == (1, 2)


def test_full_broadcasts_an_array_fill_value():
    out = run("full", (2, 3), jnp.array([1, 2, 3]))
    np.testing.assert_array_equal(out, [[1, 2, 3], [1, 2, 3]])
    assert out.dtype == np.int32 and not out.weak_type
    with pytest.raises(ShapeError, match="fill_value has rank 2"):
        jnp.full(3, jnp.zeros((2, 3)))


# --- *_like --------------------------------------------------------------------------------

@pytest.mark.parametrize("name, fill", [("zeros_like", 0), ("ones_like", 1), ("empty_like", None)])
def test_like(name, fill):
    x = jnp.array([[1, 2, 3]], dtype=jnp.int8)
    out = run(name, x)
    assert out.dtype == np.int8 and out.shape == (1, 3) and not out.weak_type
    if fill is not None:
        np.testing.assert_array_equal(out, np.full((1, 3), fill))
    assert run(name, x, dtype=float).dtype == np.float32
    assert run(name, x, shape=(2, 2)).shape == (2, 2)
    assert run(name, 2.0).weak_type  # like the prototype
    assert not run(name, 2.0, dtype=jnp.float32).weak_type
    assert run(name, jnp.zeros((0, 2))).shape == (0, 2)


def test_full_like():
    out = run("full_like", F32, 7)
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out, np.full((2, 3), 7.0))
    assert run("full_like", jnp.array([1, 2]), 2.7).tolist() == [2, 2]
    assert run("full_like", 1.0, 3.0).weak_type
    arr = run("full_like", F32, jnp.array([1, 2, 3]))
    assert arr.dtype == np.float32 and not arr.weak_type
    np.testing.assert_array_equal(arr, [[1, 2, 3], [1, 2, 3]])
    assert run("full_like", F32, 1, dtype=bool, shape=4).dtype == np.bool_


def fills(u8, f):
    return (jnp.full_like(u8, -1), jnp.full_like(u8, 300), jnp.full(2, -1, jnp.uint8),
            jnp.full_like(f, 200, dtype=jnp.int8), jnp.full(2, 2**31, jnp.int32),
            jnp.full(2, -1.5, jnp.uint8), jnp.full(2, 1e10, jnp.uint8),
            jnp.full(2, float("nan"), jnp.int32), jnp.full(2, True))


# JAX 0.10.2: a Python int the dtype cannot hold wraps, floats convert as astype does
_FILLS = ([255, 255, 255], [44, 44, 44], [255, 255], [-56, -56], [-2**31, -2**31], [0, 0],
          [255, 255], [0, 0], [True, True])


def test_fill_values_convert_as_in_jax():
    """Found by fuzzing: full_like(uint8 zeros, -1) raised OverflowError (JAX gives 255),
    full(2, -1.5, uint8) gave 255 (JAX: 0), full(2, True) was weak (JAX: bools never are)."""
    args = jnp.zeros(3, jnp.uint8), jnp.zeros(2)
    for outs in (fills(*args), astjax.jit(fills)(*args)):
        for out, expected in zip(outs, _FILLS):
            assert out.tolist() == expected and not out.weak_type
        assert [o.dtype for o in outs[:4]] == [np.uint8] * 3 + [np.int8]


def test_fill_values_convert_as_in_jax_numba(numba_backend):
    got, compiled = _run(fills, jnp.zeros(3, jnp.uint8), jnp.zeros(2))
    assert compiled.backend == "numba", compiled.fallback_reason
    assert [g.tolist() for g in got] == list(_FILLS)


def test_like_x64(x64):
    assert run("zeros_like", 1.0).dtype == np.float64
    assert run("full_like", jnp.array([1]), 2).dtype == np.int64


# --- arange --------------------------------------------------------------------------------

@pytest.mark.parametrize("args, kwargs, dtype", [
    ((5,), {}, np.int32), ((1, 6), {}, np.int32), ((0, 2, 0.5), {}, np.float32),
    ((5.0,), {}, np.float32), ((10, 0, -3), {}, np.int32), ((0,), {}, np.int32),
    ((3, 1), {}, np.int32), ((5,), {"dtype": float}, np.float32),
    ((0, 1, 0.1), {}, np.float32), ((1,), {}, np.int32), ((2, None, None), {}, np.int32),
    ((np.int16(4),), {}, np.int16), ((-2.5, 2.5), {"dtype": jnp.float16}, np.float16),
])
def test_arange(args, kwargs, dtype):
    out = run("arange", *args, **kwargs)
    assert out.dtype == dtype and not out.weak_type
    np.testing.assert_allclose(out, np.arange(*args, dtype=dtype), rtol=1e-6)


def test_arange_dynamic_bounds():
    out = run("arange", jnp.array(2), jnp.array(8), 2)
    np.testing.assert_array_equal(out, [2, 4, 6])
    assert out.dtype == np.int32
    assert run("arange", jnp.array(3.0)).dtype == np.float32
    assert rule("arange", start=INT).ones == (False,)
    assert rule("arange", start=1).ones == (True,)
    assert rule("arange", start=2, stop=3.5).ones == (False,)


def test_arange_x64(x64):
    assert run("arange", 3).dtype == np.int64
    assert run("arange", 0.0, 1.0, 0.25).dtype == np.float64


@pytest.mark.parametrize("args, match", [
    ((0, 5, 0), "step must not be zero"), ((1j,), "real number"), ((True,), "real number"),
    ((ArrayType(np.dtype(np.int32), (False,)),), "real number"), (("a",), "real number"),
])
def test_arange_errors(args, match):
    with pytest.raises(ShapeError, match=match):
        rule("arange", **dict(zip(("start", "stop", "step"), args)))


# --- linspace ------------------------------------------------------------------------------

@pytest.mark.parametrize("args, kwargs, dtype", [
    ((0, 1), {}, np.float32), ((0.0, 1.0, 5), {}, np.float32),
    ((2, 3, 4), {"endpoint": False}, np.float32), ((1, 5, 1), {}, np.float32),
    ((0, 1, 0), {}, np.float32), ((-1.0, 1.0, 7), {"dtype": jnp.int32}, np.int32),
    ((0, 10, 4), {"dtype": float}, np.float32),
])
def test_linspace(args, kwargs, dtype):
    out = run("linspace", *args, **kwargs)
    expected = np.linspace(*args, **{**kwargs, "dtype": dtype})
    assert out.dtype == dtype and out.shape == expected.shape and not out.weak_type
    np.testing.assert_allclose(out, expected, rtol=1e-6)


def test_linspace_array_bounds_and_axis():
    start, stop = jnp.array([0.0, 1.0]), jnp.array([[10.0], [20.0]])
    out = run("linspace", start, stop, 3, axis=-1)
    assert out.shape == (2, 2, 3)
    np.testing.assert_allclose(out, np.linspace(np.asarray(start), np.asarray(stop), 3, axis=-1))
    assert run("linspace", start, 5.0, 4).shape == (4, 2)
    assert run("linspace", start, 5.0, 1, axis=1).shape == (2, 1)


def test_linspace_dtypes(x64):
    assert run("linspace", 0, 1, 3).dtype == np.float64
    # an int32 start: float32, as JAX 0.10 with 64-bit types (int64 would give float64)
    assert run("linspace", jnp.array(0, dtype=jnp.int32), 1, 3).dtype == np.float32
    assert run("linspace", jnp.array(0.0, dtype=jnp.float32), 1, 3).dtype == np.float32


@pytest.mark.parametrize("kwargs, match", [
    ({"num": -1}, "non-negative int"), ({"num": 2.0}, "non-negative int"),
    ({"num": 3, "axis": 2}, "out of range"),
])
def test_linspace_errors(kwargs, match):
    with pytest.raises(ShapeError, match=match):
        jnp.linspace(0.0, 1.0, **kwargs)


# --- eye, identity, tri, diag --------------------------------------------------------------

@pytest.mark.parametrize("args, kwargs, dtype", [
    ((3,), {}, np.float32), ((2, 4), {}, np.float32), ((4, 3, 1), {}, np.float32),
    ((3, None, -1), {}, np.float32), ((3,), {"k": 5}, np.float32), ((1,), {}, np.float32),
    ((0,), {}, np.float32), ((2,), {"dtype": int}, np.int32),
    ((2,), {"dtype": bool}, np.bool_),
])
@pytest.mark.parametrize("name", ["eye", "tri"])
def test_eye_and_tri(name, args, kwargs, dtype):
    out = run(name, *args, **kwargs)
    expected = getattr(np, name)(*args, **{**kwargs, "dtype": dtype})
    assert out.dtype == dtype and out.shape == expected.shape and not out.weak_type
    np.testing.assert_array_equal(out, expected)


def test_eye_dynamic():
    out = run("eye", jnp.array(3), k=jnp.array(1))
    np.testing.assert_array_equal(out, np.eye(3, k=1))
    assert rule("eye", N=INT, M=1).ones == (False, True)
    assert rule("tri", N=1).ones == (True, True)
    with pytest.raises(ShapeError, match="k must be an integer"):
        rule("eye", N=3, k=0.5)
    with pytest.raises(ShapeError, match="N must be an integer"):
        rule("eye", N=3.0)


def test_identity(x64):
    out = run("identity", 3)
    assert out.dtype == np.float64
    np.testing.assert_array_equal(out, np.identity(3))
    assert run("identity", 2, dtype=int).dtype == np.int64
    assert run("eye", 2).dtype == np.float64
    assert run("tri", 2).dtype == np.float32  # JAX's tri default, even with x64 on
    assert run("tri", 2, dtype=float).dtype == np.float64
    assert astjax.jit(tri_of)(2).dtype == np.float32


def tri_of(n):
    return jnp.tri(n, n + 1)


def test_diag():
    v = jnp.array([1, 2, 3])
    for k in (0, 1, -2):
        np.testing.assert_array_equal(run("diag", v, k), np.diag(np.asarray(v), k))
        np.testing.assert_array_equal(run("diag", F32, k), np.diag(np.asarray(F32), k))
    assert run("diag", jnp.array([5.0])).shape == (1, 1)
    assert run("diag", jnp.array([[5.0]])).shape == (1,)
    assert rule("diag", ArrayType(np.dtype(np.float32), (True,)), k=1).ones == (False, False)
    with pytest.raises(ShapeError, match="got rank 3"):
        jnp.diag(jnp.zeros((2, 2, 2)))
    with pytest.raises(ShapeError, match="got rank 0"):
        jnp.diag(1.0)


def test_creation_is_not_differentiable_except_from_values():
    for name in ("zeros", "ones", "empty", "zeros_like", "ones_like", "empty_like", "arange",
                 "eye", "identity", "tri"):
        assert not registry.NAMESPACE[name].differentiable, name
    for name in ("array", "asarray", "full", "full_like", "linspace", "diag"):
        assert registry.NAMESPACE[name].differentiable, name


def test_numpy_aliases():
    for fn in (np.array, np.asarray, np.zeros, np.ones, np.empty, np.full, np.zeros_like,
               np.ones_like, np.empty_like, np.full_like, np.arange, np.linspace, np.eye,
               np.identity, np.tri, np.diag):
        assert registry.op_for_object(fn) is registry.NAMESPACE[fn.__name__]


# --- compiled ------------------------------------------------------------------------------

def creations(x, n):
    return (jnp.array([x, 2.0 * x]), jnp.asarray((1, 2)), jnp.array(3.0), jnp.array([]),
            jnp.zeros((n, 2)), jnp.ones(x.shape, jnp.int32), jnp.empty(3), jnp.full((2, n), 1.5),
            jnp.zeros_like(x), jnp.ones_like(x, dtype=bool), jnp.full_like(x, 7),
            jnp.arange(n), jnp.arange(1, n, 2), jnp.arange(0.0, 1.0, 0.25),
            jnp.linspace(0, 1, 5), jnp.linspace(x, 2.0, 3, axis=-1), jnp.eye(n),
            jnp.eye(2, 3, k=1), jnp.identity(n, dtype=int), jnp.tri(n), jnp.diag(x))


def test_compiled_matches_eager():
    x = np.array([0.5, -1.0, 2.0], np.float32)
    eager = creations(jnp.array(x), 3)
    compiled = astjax.jit(creations)(x, 3)
    for e, c in zip(eager, compiled):
        assert c.dtype == e.dtype and c.shape == e.shape and c.weak_type == e.weak_type
        np.testing.assert_array_equal(np.asarray(c), np.asarray(e))


def numpy_spelling(n):
    return np.zeros((n, 2)), np.arange(n), np.array([1.0, 2.0]), np.full(n, 2), np.eye(n)


def test_compiled_numpy_functions_follow_jax():
    zeros, count, arr, full, eye = astjax.jit(numpy_spelling)(3)
    assert zeros.dtype == arr.dtype == eye.dtype == np.float32  # NumPy would give float64
    assert count.dtype == full.dtype == np.int32 and full.weak_type


def stack_rows(x, n):
    rows = []
    for i in range(n):
        rows.append(x * i)
    return jnp.array(rows)


def test_compiled_array_of_a_list_built_at_run_time():
    out = astjax.jit(stack_rows)(np.array([1.0, 2.0], np.float32), 3)
    np.testing.assert_array_equal(out, [[0, 0], [1, 2], [2, 4]])
    assert out.dtype == np.float32 and not out.weak_type
