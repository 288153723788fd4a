"""Registry-driven: every elementwise op, eager and compiled, against NumPy, across dtypes."""
import numpy as np
import pytest

import astjax
import astjax.numpy as jnp
from astjax._src.ops.registry import REGISTRY

from .apply import apply1, apply2, apply3

ELEMENTWISE = sorted(n for n, op in REGISTRY.items() if op.family == "elementwise")
# inputs inside each function's domain
DOMAIN = {"arccosh": (1.1, 3.0), "arcsin": (-0.9, 0.9), "arccos": (-0.9, 0.9),
          "arctanh": (-0.9, 0.9), "log": (0.1, 3.0), "log1p": (0.1, 3.0), "log2": (0.1, 3.0),
          "log10": (0.1, 3.0), "sqrt": (0.1, 3.0), "reciprocal": (0.5, 3.0),
          "power": (0.5, 2.0), "true_divide": (0.5, 2.0), "floor_divide": (0.5, 2.0),
          "remainder": (0.5, 2.0)}
NO_FLOAT = {"bitwise_and", "bitwise_or", "bitwise_xor", "invert"}
jit1 = astjax.jit(apply1, static_argnums=0)
jit2 = astjax.jit(apply2, static_argnums=0)
jit3 = astjax.jit(apply3, static_argnums=0)


def sample(name, dtype, shape, seed):
    rng = np.random.default_rng(seed)
    lo, hi = DOMAIN.get(name, (-2.0, 2.0))
    if np.dtype(dtype).kind == "b":
        if name in DOMAIN and seed == 1:  # a divisor: not 0 (x // 0 is JAX's, not NumPy's)
            return np.ones(shape, bool)
        return rng.integers(0, 2, shape).astype(bool)
    if np.dtype(dtype).kind in "iu":
        return rng.integers(max(int(lo), 1) if name in DOMAIN else -3, 4, shape).astype(dtype)
    return rng.uniform(lo, hi, shape).astype(dtype)


def reference(op, *args):
    """NumPy in float64 (or the integer dtype), then JAX's result dtype."""
    out_type = op.infer({n: astjax._src.ir.types.type_of_value(a)
                         for n, a in zip(op.operands, args)}, {})
    wide = [a.astype(np.float64) if a.dtype.kind == "f" else a for a in args]
    if op.inexact:
        wide = [a.astype(np.float64) for a in wide]
    with np.errstate(all="ignore"):
        return np.asarray(op.numpy_reference(*wide)).astype(out_type.dtype)


CASES = [(name, dtype) for name in ELEMENTWISE for dtype in (np.float32, np.int32, np.bool_)
         if not (dtype is np.float32 and name in NO_FLOAT)]  # floats: test_rejects_bad_dtype


@pytest.mark.parametrize("name,dtype", CASES)
@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # integer/bool division by zero samples
def test_elementwise_against_numpy(name, dtype):
    op = REGISTRY[name]
    n = len(op.operands)
    args = [sample(name, dtype, (3, 4) if k == 0 else (4,), k) for k in range(n)]
    try:
        expected = reference(op, *args)
    except TypeError:
        with pytest.raises(TypeError):
            op(*args)
        return
    eager = op(*args)
    compiled = (jit1, jit2, jit3)[n - 1](op, *args)
    for got in (eager, compiled):
        assert got.dtype == expected.dtype, (name, got.dtype, expected.dtype)
        assert got.shape == expected.shape
        np.testing.assert_allclose(np.asarray(got, np.float64), expected.astype(np.float64),
                                   rtol=2e-6, atol=1e-6)


def test_rejects_bad_dtype():
    with pytest.raises(TypeError, match="integer"):
        REGISTRY["bitwise_and"](np.ones(2, np.float32), np.ones(2, np.float32))
    with pytest.raises(TypeError, match="boolean"):
        REGISTRY["subtract"](np.ones(2, bool), np.ones(2, bool))


def test_booleans_subtract_with_numbers():
    """Only bool - bool is refused (as JAX, NumPy): a bool minus a number promotes."""
    b, x = np.array([True, False]), np.array([0.5, 1.5], np.float32)
    for got in (REGISTRY["subtract"](b, x), jit2(REGISTRY["subtract"], b, x)):
        assert got.dtype == np.float32
        np.testing.assert_array_equal(got, [0.5, -1.5])
    got = astjax.jit(lambda b: 1 - b)(b)
    np.testing.assert_array_equal(got, [0, 1])
    assert got.dtype == np.int32


def test_integers_become_float32_with_x64_unless_64_bit(x64):
    """JAX 0.10 with 64-bit types on: bool and integers of up to 32 bits compute math in
    float32, int64 (and Python ints, weak) in float64."""
    for dtype, want in ((np.int8, np.float32), (np.uint16, np.float32), (np.int32, np.float32),
                        (np.bool_, np.float32), (np.int64, np.float64)):
        x = np.array([1, 2, 1], dtype)
        for got in (jnp.sqrt(x), jnp.mean(x), REGISTRY["true_divide"](x, x),
                    jit1(REGISTRY["exp"], x)):
            assert got.dtype == want, (dtype, got.dtype)
    assert (np.array([1, 2], np.int32) * jnp.asarray(1.5)).dtype == np.float64
    assert jnp.sqrt(3).dtype == np.float64


def test_weak_scalars_keep_array_dtype():
    x16 = np.ones(3, np.float16)
    for got in (REGISTRY["multiply"](x16, 2.0), jit2(REGISTRY["multiply"], x16, 2.0)):
        assert got.dtype == np.float16
    i8 = np.ones(3, np.int8)
    assert REGISTRY["add"](i8, 3).dtype == np.int8
    assert REGISTRY["add"](i8, 3.5).dtype == np.float32
    assert REGISTRY["add"](np.int8(1), np.uint8(1)).dtype == np.int16


def test_math_of_ints_is_float32():
    for got in (REGISTRY["sin"](np.arange(3, dtype=np.int32)), jit1(REGISTRY["sin"], np.arange(3, dtype=np.int32))):
        assert got.dtype == np.float32


def _out_of_range_literals(u8, i8):
    return u8 < -2, u8 + -2, i8 + 200, u8 * 256, jnp.maximum(u8, -1)


def test_int_literals_out_of_the_arrays_range_wrap_as_in_jax():
    """JAX converts a Python int the array's dtype cannot hold, wrapping (-2 is 254 for
    uint8); NumPy compared by value (u8 < -2 was all False) or raised OverflowError.
    Found by fuzzing against JAX."""
    u8 = np.array([1, 2, 200, 255], np.uint8)
    i8 = np.array([-100, 0, 5, 127], np.int8)
    want = (u8 < np.uint8(254), u8 + np.uint8(254), i8 + np.int8(-56), u8 * np.uint8(0),
            np.maximum(u8, np.uint8(255)))
    for run in (_out_of_range_literals, astjax.jit(_out_of_range_literals),
                astjax.vmap(_out_of_range_literals)):
        for got, expected in zip(run(jnp.asarray(u8), jnp.asarray(i8)), want):
            assert np.asarray(got).dtype == expected.dtype
            np.testing.assert_array_equal(got, expected)


def _bool_operands(b, c, i8):
    return (b // c, b % c, b ** c, b ** 2, 2 ** b, jnp.square(b), b << c, b >> 1, i8 << b,
            5 // c)


# JAX 0.10.2 (promote_args_numeric): bools compute as int32, with x64 on too; a weak Python
# int makes the result the weak default int, except b ** 2 (integer_pow: x's own dtype)
# and 2 ** b (an integer power is strong)
_BOOL_OPERANDS = [("int32", False, [1, 0, 1]), ("int32", False, [0, 0, 0]),
                  ("int32", False, [1, 0, 1]), ("int32", False, [1, 0, 1]),
                  ("int", False, [2, 1, 2]), ("int32", False, [1, 0, 1]),
                  ("int32", False, [2, 0, 2]), ("int", True, [0, 0, 0]),
                  ("int8", False, [2, -2, 6]), ("int", True, [5, 5, 5])]


@pytest.mark.parametrize("wide", [False, True])
def test_bool_operands_of_integer_ops_compute_as_int32(wide, request):
    """Found by fuzzing against JAX: b // b, b % b and b ** b stayed bool, shifts of bools
    gave int8 and jnp.square(b) bool."""
    if wide:
        request.getfixturevalue("x64")
    b, c = jnp.array([True, False, True]), jnp.array([True, True, True])
    i8 = jnp.array([1, -2, 3], jnp.int8)
    default_int = "int64" if wide else "int32"
    for run in (_bool_operands, astjax.jit(_bool_operands), astjax.vmap(_bool_operands)):
        for got, (dtype, weak, values) in zip(run(b, c, i8), _BOOL_OPERANDS):
            assert got.dtype == (default_int if dtype == "int" else dtype)
            assert got.tolist() == values
            if run is _bool_operands:  # (compiled results are never weak)
                assert got.weak_type == weak
    with pytest.raises(TypeError, match="boolean"):
        jnp.sign(b)  # as JAX
    assert jnp.positive(b).dtype == np.bool_


def _integer_powers(x, y, i8, j8):
    return x ** y, 2 ** y, i8 ** j8, x ** 64, jnp.power(x, y[0])


def _negative_literal_power(x):
    return x ** -1


# JAX 0.10.2 under jit: an integer power by an array keeps the exponent's low 6 bits
# (_pow_int_int: 3 ** -1 is 3 ** 63 wrapped, 3 ** 64 is 1, 0 ** 64 is 0); by a Python int
# it is exact (integer_pow: 3 ** 64 wrapped), and a negative one is an error
_X = [2, 3, 1, -1, 0, 0, -2, 3, 2, 0, 5, -3]
_Y = [-1, 2, -1, -1, -1, 0, -3, 64, 65, 64, -2, 63]
_INTEGER_POWERS = (
    [0, 9, 1, -1, 0, 1, 0, 1, 2, 0, -558738647, -2111105451],
    [0, 4, 0, 0, 0, 1, 0, 1, 2, 1, 0, 0], [0, -117, 1],
    [0, 2038349057, 1, 1, 0, 0, 0, 2038349057, 0, 0, -1083564287, 2038349057],
    [0, 2111105451, 1, -1, 0, 0, 0, 2111105451, 0, 0, 1501274061, -2111105451])


def _integer_power_args():
    return (jnp.array(_X), jnp.array(_Y), jnp.array([2, 3, 0], jnp.int8),
            jnp.array([-1, 7, 0], jnp.int8))


def test_integer_powers_by_negative_or_large_exponents_as_in_jax():
    """Found by fuzzing: jnp.array([2, 3]) ** jnp.array([-1, 2]) raised NumPy's 'Integers
    to negative integer powers are not allowed' eagerly and on the python backend."""
    for run in (_integer_powers, astjax.jit(_integer_powers)):
        assert [r.tolist() for r in run(*_integer_power_args())] == list(_INTEGER_POWERS)
    for run in (_negative_literal_power, astjax.jit(_negative_literal_power)):
        with pytest.raises(TypeError, match="negative power"):
            run(jnp.array([2, 3]))


def test_integer_powers_numba(numba_backend):
    jitted = astjax.jit(_integer_powers)
    got = jitted(*_integer_power_args())
    (compiled,) = jitted.cache.values()
    assert compiled.backend == "numba", compiled.fallback_reason
    assert [r.tolist() for r in got] == list(_INTEGER_POWERS)


def _signed_zeros(x, half):
    return x ** 0.5, x ** half, jnp.sign(x), jnp.maximum(x, -x), jnp.minimum(x, -x), \
        jnp.clip(x, 0.0, 1.0)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # (-1.) ** 0.5
def test_float_powers_signs_and_extrema_of_signed_zeros_as_in_jax():
    """NumPy's x ** 0.5 is sqrt: (-inf) ** 0.5 gave nan (C's pow and JAX: inf) and
    (-0.) ** 0.5 gave -0.; np.sign(-0.) is 0. (JAX: -0.); np.maximum(-0., 0.) is
    whichever operand NumPy's loop picks (JAX: +0. beats -0. in maximum, -0. in minimum)."""
    for run in (_signed_zeros, astjax.jit(_signed_zeros)):
        _check_signed_zeros(run)


def _check_signed_zeros(run):
    x = jnp.array([-np.inf, np.inf, -0.0, 0.0, -1.0, 4.0])
    root, root_by_array, sign, big, small, clipped = (
        np.asarray(r) for r in run(x, jnp.float32(0.5)))
    for r in (root, root_by_array):
        np.testing.assert_array_equal(r, [np.inf, np.inf, 0.0, 0.0, np.nan, 2.0])
        assert not np.signbit(r[2])
    np.testing.assert_array_equal(np.signbit(sign), [True, False, True, False, True, False])
    np.testing.assert_array_equal(np.signbit(big), [False] * 6)       # +0. at x = -0., 0.
    np.testing.assert_array_equal(np.signbit(small), [True] * 6)
    np.testing.assert_array_equal(np.signbit(clipped), [False] * 6)   # maximum(0., -0.)


def test_signed_zeros_numba(numba_backend):
    """Numba's _rt.maximum(-0., 0.) was -0. and _rt.minimum(0., -0.) 0. (JAX: 0., -0.)."""
    jitted = astjax.jit(_signed_zeros)
    _check_signed_zeros(jitted)
    (compiled,) = jitted.cache.values()
    assert compiled.backend == "numba", compiled.fallback_reason
