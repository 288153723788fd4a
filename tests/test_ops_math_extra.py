"""fmax, fmod, copysign, signbit, modf, divmod, float_power, gcd, lcm, spacing, i0, the Array
API aliases, the dtype names and utilities (result_type, isdtype, ndim, size, ...):
astjax/numpy/_math_extra.py, checked against NumPy eagerly and under jit, their dtypes and
the values where NumPy differs against JAX 0.10.2, gradients, vmap and Numba."""
import warnings

import numpy as np
import pytest
import scipy.special

import astjax
import astjax.numpy as jnp
from astjax.test_util import check_grads

from .op_checks import check_dtype_table

RNG = np.random.default_rng(0)
X = (RNG.standard_normal((3, 4)) * 4).astype(np.float32)
Y = (RNG.standard_normal(4) * 2).astype(np.float32)
SPECIAL = np.float32([-7, 7, -0.0, 5.5, np.inf, 1, np.nan, -np.inf])
DIVISOR = np.float32([3, -3, 2, 0, 2, np.inf, 1, 2])
I = np.int32([12, -18, 0, 0, 7, -2147483648])
J = np.int32([8, 12, 5, 0, -21, -1])
NZ = [0, 1, 3, 4, 5, 6, 7]  # not -0.: NumPy's remainder(-0., 2) is 0., JAX's -0. (EDGE_X)
# x % y, x // y and divmod of floats where NumPy's signed zeros differ from JAX's (the sign
# of a zero remainder, of a zero quotient), with infinities, NaN and zero divisors
EDGE_X = np.float32([-0.0, 0.0, 1, -1, -0.0, 0.0, 5, -5, 5, -5, -1, 1, np.inf, 2.5, -0.0, 7])
EDGE_Y = np.float32([2, -2, -1, 1, np.inf, -np.inf, -np.inf, np.inf, 0, 0, -2.5, 2.5, 2,
                     np.nan, -3, -0.0])
NAN, INF = np.nan, np.inf
JAX_REMAINDER = np.float32([-0.0, 0.0, 0.0, -0.0, -0.0, 0.0, -INF, INF, NAN, NAN, -1.0, 1.0,
                            NAN, NAN, -0.0, NAN])  # JAX 0.10.2's
JAX_FLOOR_DIVIDE = np.float32([0.0, -0.0, -1.0, -1.0, 0.0, -0.0, -1.0, -1.0, INF, -INF, -0.0,
                               0.0, NAN, NAN, -0.0, -INF])


def _edges(a, b):
    q, r = jnp.divmod(a, b)
    return a % b, a // b, jnp.remainder(a, b), jnp.floor_divide(a, b), q, r


def _check_edges(got):
    for g, want in zip(got, (JAX_REMAINDER, JAX_FLOOR_DIVIDE) * 2 + (JAX_FLOOR_DIVIDE,
                                                                     JAX_REMAINDER)):
        g = np.asarray(g)
        assert g.dtype == np.float32
        np.testing.assert_array_equal(g, want)
        np.testing.assert_array_equal(np.signbit(g[g == 0]), np.signbit(want[want == 0]))


def test_remainder_and_floor_divide_edge_values_as_jax():
    with np.errstate(all="ignore"):
        _check_edges(_edges(jnp.asarray(EDGE_X), jnp.asarray(EDGE_Y)))
        _check_edges(astjax.jit(_edges)(EDGE_X, EDGE_Y))


def test_remainder_and_floor_divide_edge_values_as_jax_on_numba(numba_backend):
    jitted = astjax.jit(_edges)
    _check_edges(jitted(EDGE_X, EDGE_Y))
    (compiled,) = jitted.cache.values()
    assert compiled.backend == "numba", compiled.fallback_reason


# integer x // 0: XLA's x / 0 is -1 (all ones unsigned), -2 after JAX's floor adjustment
# for x != 0 (NumPy: 0); x % 0 is 0 in both. JAX 0.10.2's values:
INT_X, INT_Y = np.int32([7, 0, -3, -5]), np.int32([0, 0, 0, 2])
U8_X, U8_Y = np.uint8([7, 0, 3, 5]), np.uint8([0, 0, 0, 2])


def _int_edges(a, b, c, d):
    return a // b, jnp.divmod(a, b)[0], a % b, c // d


def _check_int_edges(got):
    want = (np.int32([-2, -1, -2, -3]),) * 2 + (np.int32([0, 0, 0, 1]),
                                                 np.uint8([255, 255, 255, 2]))
    for g, w in zip(got, want):
        assert np.asarray(g).dtype == w.dtype
        np.testing.assert_array_equal(g, w)


def test_integer_floor_divide_by_zero_as_jax():
    with np.errstate(all="ignore"):
        _check_int_edges(_int_edges(*map(jnp.asarray, (INT_X, INT_Y, U8_X, U8_Y))))
        _check_int_edges(astjax.jit(_int_edges)(INT_X, INT_Y, U8_X, U8_Y))


def test_integer_floor_divide_by_zero_as_jax_on_numba(numba_backend):
    jitted = astjax.jit(_int_edges)
    _check_int_edges(jitted(INT_X, INT_Y, U8_X, U8_Y))
    (compiled,) = jitted.cache.values()
    assert compiled.backend == "numba", compiled.fallback_reason


def _cases():
    return [
        ("fabs", lambda a: jnp.fabs(a), (X,), np.fabs(X)),
        ("fabs int", lambda a: jnp.fabs(a), (I[:5],), np.fabs(I[:5]).astype(np.float32)),
        ("fmax", lambda a, b: jnp.fmax(a, b), (SPECIAL, DIVISOR[::-1]),
         np.fmax(SPECIAL, DIVISOR[::-1])),
        ("fmin", lambda a, b: jnp.fmin(a, b), (SPECIAL, DIVISOR[::-1]),
         np.fmin(SPECIAL, DIVISOR[::-1])),
        ("fmax nan", lambda a, b: jnp.fmax(a, b), (X, np.float32(np.nan)), X),
        ("fmod", lambda a, b: jnp.fmod(a, b), (X, Y), np.fmod(X, Y)),
        ("fmod special", lambda a, b: jnp.fmod(a, b), (SPECIAL, DIVISOR),
         np.fmod(SPECIAL, DIVISOR)),
        ("fmod int", lambda a, b: jnp.fmod(a, b), (I[:5], J[:5]),
         np.int32([4, -6, 0, 0, 7])),  # JAX: x % 0 is 0
        ("fmod int min", lambda a, b: jnp.fmod(a, b), (I, J), np.int32([4, -6, 0, 0, 7, 0])),
        ("copysign", lambda a, b: jnp.copysign(a, b), (X, Y), np.copysign(X, Y)),
        ("copysign special", lambda a, b: jnp.copysign(a, b), (DIVISOR, SPECIAL),
         np.copysign(DIVISOR, SPECIAL)),
        ("signbit", lambda a: jnp.signbit(a), (np.float32([-0.0, 0.0, -1, np.nan, -np.nan]),),
         np.array([True, False, True, False, True])),
        ("signbit int", lambda a: jnp.signbit(a), (I,), I < 0),
        ("modf", lambda a: jnp.modf(a), (X,), np.modf(X)),
        # JAX: the fractional part of an infinity is nan (NumPy: 0), and of -7 or -0. is 0.
        ("modf special", lambda a: jnp.modf(a), (SPECIAL,),
         (np.float32([0, 0, 0, 0.5, np.nan, 0, np.nan, np.nan]),
          np.float32([-7, 7, -0.0, 5, np.inf, 1, np.nan, -np.inf]))),
        # a zero quotient has y's sign in JAX (x / y's in NumPy)
        ("divmod", lambda a, b: jnp.divmod(a, b), (X, Y),
         (np.where(X // Y == 0, np.copysign(np.float32(0), Y), X // Y), X % Y)),
        ("divmod special", lambda a, b: jnp.divmod(a, b), (SPECIAL[NZ], DIVISOR[NZ]),
         np.divmod(SPECIAL[NZ], DIVISOR[NZ])),
        ("divmod int", lambda a, b: jnp.divmod(a, b), (I[:3], J[:3]), np.divmod(I[:3], J[:3])),
        ("float_power", lambda a, b: jnp.float_power(a, b), (np.abs(X), Y),
         np.float_power(np.abs(X), Y).astype(np.float32)),
        ("float_power int", lambda a, b: jnp.float_power(a, b), (I[:5], np.int32(2)),
         np.float_power(I[:5], 2).astype(np.float32)),
        ("gcd", lambda a, b: jnp.gcd(a, b), (I[:5], J[:5]), np.gcd(I[:5], J[:5])),
        ("gcd broadcast", lambda a, b: jnp.gcd(a, b), (I[:5, None], J[:5]),
         np.gcd(I[:5, None], J[:5])),
        ("lcm", lambda a, b: jnp.lcm(a, b), (I[:5], J[:5]), np.lcm(I[:5], J[:5])),
        # JAX: -0.'s spacing is minus the smallest subnormal (NumPy: plus)
        ("spacing", lambda a: jnp.spacing(a), (SPECIAL,), np.spacing(SPECIAL) * np.float32(
            [1, 1, -1, 1, 1, 1, 1, 1])),
        ("spacing tiny", lambda a: jnp.spacing(a),
         (np.float32([0.0, -0.0, 1e-45, 1.0, -1.0, 3e38]),),
         np.float32([1.4e-45, -1.4e-45, 1.4e-45, 2.0 ** -23, -(2.0 ** -23), 2.0 ** 104])),
        # JAX: float16 steps toward +inf, so -1's spacing is positive (NumPy: negative)
        ("spacing float16", lambda a: jnp.spacing(a), (np.float16([1, -1, 0]),),
         np.float16([9.766e-04, 4.883e-04, 5.960e-08])),
        ("isposinf", lambda a: jnp.isposinf(a), (SPECIAL,), np.isposinf(SPECIAL)),
        ("isneginf", lambda a: jnp.isneginf(a), (SPECIAL,), np.isneginf(SPECIAL)),
        ("isneginf int", lambda a: jnp.isneginf(a), (I,), np.zeros(6, bool)),
        ("i0", lambda a: jnp.i0(a), (X,), scipy.special.i0(X.astype(np.float64))),
        ("i0 large", lambda a: jnp.i0(a), (np.float32([0, 8, -8.5, 30, 85, 100]),),
         np.append(scipy.special.i0(np.float64([0, 8, -8.5, 30, 85])), np.inf)),  # overflows
        ("iscomplex", lambda a: jnp.iscomplex(a), (X,), np.iscomplex(X)),
        ("isreal", lambda a: jnp.isreal(a), (X,), np.isreal(X)),
        ("acos", lambda a: jnp.acos(a), (Y / 8,), np.arccos(Y / 8)),
        ("asinh atanh", lambda a: jnp.asinh(a) + jnp.atanh(a / 8), (Y,),
         np.arcsinh(Y) + np.arctanh(Y / 8)),
        ("atan2", lambda a, b: jnp.atan2(a, b), (X, Y), np.arctan2(X, Y)),
        ("bitwise", lambda a: (jnp.bitwise_invert(a), jnp.bitwise_left_shift(a, 2),
                               jnp.bitwise_right_shift(a, 1)), (I,),
         (np.invert(I), np.left_shift(I, 2), np.right_shift(I, 1))),
    ]


with warnings.catch_warnings(), np.errstate(all="ignore"):  # inf - inf, x % 0
    warnings.simplefilter("ignore")
    CASES = _cases()


def _close(got, want, rtol):
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want):
            _close(g, w, rtol)
        return
    got = np.asarray(got)
    if got.dtype.kind in "biu":
        np.testing.assert_array_equal(got, want)
    else:
        np.testing.assert_allclose(got, want, rtol=rtol, atol=0)
        np.testing.assert_array_equal(np.signbit(got[got == 0]), np.signbit(
            np.broadcast_to(want, got.shape)[got == 0]))  # signed zeros too


@pytest.mark.parametrize("name,fn,args,want", CASES, ids=[c[0] for c in CASES])
def test_against_numpy_eagerly_and_jitted(name, fn, args, want):
    rtol = 2e-6 if name.startswith("i0") else 1e-6
    with np.errstate(all="ignore"):
        _close(fn(*args), want, rtol)
        _close(astjax.jit(fn)(*args), want, rtol)


def _numpy_spelling(a, b, k):
    return (np.fmax(a, b), np.fmin(a, b), np.fmod(a, b), np.copysign(a, b), np.signbit(a),
            np.modf(a), np.divmod(a, b), np.float_power(np.abs(a), b), np.gcd(k, 6),
            np.lcm(k, 4), np.spacing(a), np.isposinf(a), np.isneginf(a), np.i0(a),
            np.iscomplex(a), np.isreal(a), np.fabs(a), np.acos(a / 8), np.atan2(a, b))


def test_numpy_functions_in_compiled_code_are_these():
    args = (X[0], Y, np.int32([12, -18, 0, 7]))
    got = astjax.jit(_numpy_spelling)(*args)
    want = tuple(f(*a) for f, a in [
        (jnp.fmax, args[:2]), (jnp.fmin, args[:2]), (jnp.fmod, args[:2]),
        (jnp.copysign, args[:2]), (jnp.signbit, args[:1]), (jnp.modf, args[:1]),
        (jnp.divmod, args[:2]), (lambda a, b: jnp.float_power(jnp.abs(a), b), args[:2]),
        (lambda k: jnp.gcd(k, 6), args[2:]), (lambda k: jnp.lcm(k, 4), args[2:]),
        (jnp.spacing, args[:1]), (jnp.isposinf, args[:1]), (jnp.isneginf, args[:1]),
        (jnp.i0, args[:1]), (jnp.iscomplex, args[:1]), (jnp.isreal, args[:1]),
        (jnp.fabs, args[:1]), (lambda a: jnp.acos(a / 8), args[:1]),
        (jnp.atan2, args[:2])])
    _close(got, want, 1e-6)
    assert jnp.acos is jnp.arccos and jnp.bitwise_invert is jnp.invert
    assert jnp.bool is jnp.bool_ and jnp.single is jnp.float32


I32, I8, U8 = np.int32([3, -7, 0, 12]), np.int8([4, -6, 9, 0]), np.uint8([3, 200, 0, 7])
F16, F32, B = np.float16([1.5, -2.25, 0, 0]), np.float32([1.5, -2.25, 0, 0]), np.array(
    [True, False, True, True])
# dtypes JAX 0.10.2 gives, the same with 64-bit types off and on except where a pair is given
DTYPES = [
    (lambda: jnp.fabs(I32), "float32"),
    (lambda: jnp.fabs(B), "float32"),
    (lambda: jnp.fabs(-1), ("float32", "float64")),
    (lambda: jnp.fmax(I32, F32), "float32"),
    (lambda: jnp.fmax(I8, 2), "int8"),
    (lambda: jnp.fmax(B, B), "bool"),
    (lambda: jnp.fmin(I8, U8), "int16"),
    (lambda: jnp.fmod(I32, I8), "int32"),
    (lambda: jnp.fmod(B, B), "int32"),
    (lambda: jnp.fmod(F32, 2), "float32"),
    (lambda: jnp.fmod(I32, 2.5), ("float32", "float64")),
    (lambda: jnp.copysign(I32, F32), "float32"),
    (lambda: jnp.copysign(I8, I8), "float32"),
    (lambda: jnp.copysign(F16, -1), "float16"),
    (lambda: jnp.copysign(B, B), "float32"),
    (lambda: jnp.signbit(U8), "bool"),
    (lambda: jnp.signbit(B), "bool"),
    (lambda: jnp.modf(I32)[1], "float32"),
    (lambda: jnp.modf(F16)[0], "float16"),
    (lambda: jnp.divmod(I32, I8)[0], "int32"),
    (lambda: jnp.divmod(B, B)[1], "int32"),
    (lambda: jnp.divmod(F32, I32)[0], "float32"),
    (lambda: jnp.divmod(U8, 3)[1], "uint8"),
    (lambda: jnp.float_power(I32, I32), "float32"),
    (lambda: jnp.float_power(I8, 2), "float32"),
    (lambda: jnp.float_power(F16, 2), "float16"),
    (lambda: jnp.float_power(B, B), "float32"),
    (lambda: jnp.gcd(I32, I8), "int32"),
    (lambda: jnp.gcd(U8, 4), "uint8"),
    (lambda: jnp.lcm(I8, I8), "int8"),
    (lambda: jnp.spacing(I32), "float32"),
    (lambda: jnp.spacing(F16), "float16"),
    (lambda: jnp.spacing(B), "float32"),
    (lambda: jnp.isneginf(I32), "bool"),
    (lambda: jnp.i0(I32), "float32"),
    (lambda: jnp.i0(F16), "float16"),
    (lambda: jnp.i0(B), "float32"),
    (lambda: jnp.iscomplex(I32), "bool"),
    (lambda: jnp.acos(I32), "float32"),
    (lambda: jnp.atan2(I8, I8), "float32"),
    (lambda: jnp.bitwise_invert(B), "bool"),
    (lambda: jnp.bitwise_left_shift(B, B), "int32"),
    (lambda: jnp.bitwise_left_shift(I8, 2), "int8"),
    (lambda: jnp.bitwise_right_shift(U8, I8), "int16"),
]


def _check_dtypes(x64):
    check_dtype_table(DTYPES, x64)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # x // 0
def test_dtypes_as_jax():
    _check_dtypes(False)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_dtypes_as_jax_x64(x64):
    _check_dtypes(True)


def test_gradients(x64):
    r = np.random.default_rng(1)
    a, b = r.standard_normal((3, 4)) * 3, r.standard_normal((3, 4)) * 2
    check_grads(jnp.fmod, (a, b))
    check_grads(jnp.copysign, (a, b))
    check_grads(lambda a, b: jnp.fmax(a, b) + 2 * jnp.fmin(a, b), (a, b))
    check_grads(jnp.fabs, (a,))
    check_grads(lambda a: jnp.modf(a)[0] + 3 * jnp.modf(a)[1], (a,))
    check_grads(lambda a, b: jnp.divmod(a, b)[1], (a, b))
    check_grads(lambda a, b: jnp.float_power(jnp.abs(a) + 0.1, b), (a, b))
    check_grads(jnp.i0, (np.array([-30.0, -9.0, -2.5, 0.3, 1.0, 7.9, 8.1, 12.0]),))
    # i0' is I1 (vmap of grad), and 0 at 0 to every order, as JAX's custom rule makes it
    v = np.array([0.0, 1.0, -2.5, 9.0, 30.0])
    np.testing.assert_allclose(astjax.vmap(astjax.grad(jnp.i0))(v), scipy.special.i1(v),
                               rtol=1e-12)
    assert float(astjax.grad(astjax.grad(jnp.i0))(0.0)) == 0.0
    # JAX's values where the pieces meet: fmod's d/dx2 is -trunc(x1 / x2), copysign's
    # d/dx2 is 0, fmax's tie goes to x2, fmod's d/dx1 is 1 at 0 too
    assert [float(g) for g in astjax.grad(jnp.fmod, (0, 1))(-7.5, 2.0)] == [1.0, 3.0]
    assert [float(g) for g in astjax.grad(jnp.copysign, (0, 1))(-7.5, 2.0)] == [-1.0, 0.0]
    assert [float(g) for g in astjax.grad(jnp.fmax, (0, 1))(1.0, 1.0)] == [0.0, 1.0]
    assert float(astjax.grad(jnp.fmod)(0.0, 2.0)) == 1.0
    assert float(astjax.grad(jnp.spacing)(1.5)) == 0.0  # JAX raises (nextafter has no rule)


def test_vmap():
    got = astjax.vmap(lambda a, b: (jnp.gcd(a, b), jnp.fmod(a, b), jnp.i0(a * 0.5)))(
        I[:4].reshape(2, 2), J[:4].reshape(2, 2) + 1)
    a, b = I[:4].reshape(2, 2), J[:4].reshape(2, 2) + 1
    np.testing.assert_array_equal(got[0], np.gcd(a, b))
    np.testing.assert_array_equal(got[1], np.fmod(a, b))
    np.testing.assert_allclose(got[2], scipy.special.i0(a * 0.5), rtol=2e-6)
    got = astjax.vmap(jnp.copysign, in_axes=(None, 0))(Y, X)
    np.testing.assert_array_equal(got, np.copysign(Y, X))


def _several(a, b, k):
    frac, whole = jnp.modf(a)
    return (jnp.fmod(a, b) + jnp.copysign(frac, b) + jnp.fmax(a, b) + jnp.i0(a) + whole,
            jnp.gcd(k, 6), jnp.signbit(a), jnp.spacing(a))


def test_numba(numba_backend):
    a, b, k = X[0], Y, np.int32([12, -18, 0, 7])
    jitted = astjax.jit(_several)
    got = jitted(a, b, k)
    (compiled,) = jitted.cache.values()
    assert compiled.backend == "numba", compiled.fallback_reason
    eager = _several(a, b, k)  # NumPy
    np.testing.assert_allclose(got[0], eager[0], rtol=1e-6, atol=1e-6)  # a sum that cancels
    frac, whole = np.modf(a)
    np.testing.assert_allclose(got[0], np.fmod(a, b) + np.copysign(frac, b) + np.fmax(a, b)
                               + scipy.special.i0(a.astype(np.float64)) + whole, atol=1e-5)
    _close(got[1:], (np.gcd(k, 6), np.signbit(a), np.spacing(a)), 0)


# ---- dtype utilities, shapes ----------------------------------------------------------

def test_dtype_utilities_as_jax():
    assert jnp.result_type(F16, 1.0) == np.float16 and jnp.result_type(I32, 1.0) == np.float32
    assert jnp.result_type(1) == np.int32 and jnp.result_type(float) == np.float32
    assert jnp.result_type(jnp.float16, float) == np.float16
    assert jnp.result_type(np.float64) == np.float32 and jnp.result_type(None) == np.float32
    assert jnp.result_type(np.int8, np.uint8) == np.int16
    assert jnp.result_type(True, np.int8) == np.int8 and jnp.result_type("float16", 3) == np.float16
    assert jnp.result_type(np.uint64, np.int64) == np.int32  # narrowed first, as JAX
    assert jnp.promote_types("float64", "int32") == np.float64  # not narrowed, as JAX
    assert jnp.promote_types(np.int32, np.float32) == np.float32
    assert jnp.promote_types(np.uint64, np.int64) == np.float64
    assert jnp.promote_types(bool, jnp.float16) == np.float16
    assert jnp.can_cast(np.int8, np.int32) and not jnp.can_cast(np.int32, np.float32)
    assert jnp.can_cast(I32, np.int64) and jnp.can_cast(jnp.asarray(I32), np.int8, "same_kind")
    assert jnp.isdtype(np.float32, "real floating") and jnp.isdtype(jnp.int8, ("bool", "integral"))
    assert not jnp.isdtype(np.uint8, "signed integer") and jnp.isdtype(np.complex64, "numeric")
    assert jnp.isdtype(np.float32, np.float32) and not jnp.isdtype(np.bool_, "numeric")
    assert [jnp.isscalar(v) for v in (1, 1.0, "a", np.float32(1), jnp.float32(1), np.zeros(()),
                                      np.zeros(2), [1], None, (1,))] == [True] * 6 + [False] * 4
    assert [jnp.iscomplexobj(v) for v in (1, 1j, np.zeros(2, complex), [1j], "a", None,
                                          jnp.zeros(2))] == [False, True, True, True, False,
                                                             False, False]
    assert jnp.isrealobj(I32) and not jnp.isrealobj(1j)
    assert [jnp.ndim(v) for v in (1, [1, 2], np.zeros((2, 3)), jnp.zeros(2))] == [0, 1, 2, 1]
    assert [jnp.shape(v) for v in (1, [1, 2], np.zeros((2, 3)))] == [(), (2,), (2, 3)]
    assert [jnp.size(v) for v in (1, [1, 2], np.zeros((2, 3)))] == [1, 2, 6]
    assert jnp.size(np.zeros((2, 3, 4)), 1) == 3 and jnp.size(np.zeros((2, 3, 4)), (0, -1)) == 8
    names = [jnp.bool, jnp.int_, jnp.uint, jnp.float_, jnp.double, jnp.single, jnp.cdouble,
             jnp.csingle, jnp.complex_]
    assert [np.dtype(n).name for n in names] == ["bool", "int64", "uint64", "float64", "float64",
                                                 "float32", "complex128", "complex64",
                                                 "complex128"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "int64 input converted to int32", once
        assert jnp.int_(3).dtype == np.int32  # narrowed, as JAX (which warns too)


def _utilities_in_compiled_code(a, s):
    rank = jnp.ndim(a) + np.ndim(s)
    count = jnp.shape(a)[0] + np.size(a) + jnp.size(a, 1) + jnp.size(a, (0, 1))
    b = s.astype(jnp.result_type(a, s))  # a weak float with int32: float32
    c = a.astype(np.result_type(a, 1.0))
    d = a.astype(jnp.promote_types(a.dtype, jnp.int8))
    flags = (jnp.iscomplexobj(a), np.isrealobj(s), jnp.isscalar(s), np.isscalar(a),
             jnp.isdtype(a.dtype, "integral"), jnp.can_cast(a, jnp.float32),
             jnp.can_cast(a, jnp.float64, "same_kind"))
    if jnp.isdtype(c.dtype, "real floating"):  # a static branch
        c = c * 2
    return rank, count, b, c, d, flags


def test_utilities_in_compiled_code():
    a = np.ones((2, 3), np.int32)
    rank, count, b, c, d, flags = astjax.jit(_utilities_in_compiled_code)(a, 2.5)
    assert int(rank) == 2 and int(count) == 2 + 6 + 3 + 6
    assert b.dtype == np.float32 and c.dtype == np.float32 and d.dtype == np.int32
    np.testing.assert_array_equal(c, 2 * a)
    assert flags == (False, True, True, False, True, False, True)


def test_errors():
    with pytest.raises(ValueError, match="must be integers"):
        jnp.gcd(F32, 2)
    with pytest.raises(TypeError, match="does not support complex"):
        jnp.fabs(1j)
    with pytest.raises(ValueError, match="Unsupported input type to jax.numpy.i0"):
        jnp.i0(np.complex64(1j))
    with pytest.raises(ValueError, match="at least one array or dtype"):
        jnp.result_type()
    with pytest.raises(ValueError, match="Unrecognized kind='floaty'"):
        jnp.isdtype(np.float32, "floaty")
    x = np.float32([1, 2])
    for fn, kind, message in [
            (lambda x: jnp.lcm(x, 2), ValueError, "must be integers"),
            (lambda x: jnp.copysign(x * 1j, x), TypeError, "copysign does not support"),
            (lambda x: jnp.spacing(x * 1j), ValueError, "not defined for complex"),
            (lambda x: jnp.isposinf(x * 1j), ValueError, "not well defined for complex"),
            (lambda x: jnp.size(x, 3), ValueError, "out of bounds"),
            (lambda x: jnp.size(x, (0, 0)), ValueError, "repeated axis"),
            (lambda x: x.astype(jnp.result_type()), ValueError, "at least one"),
            (lambda x: jnp.result_type([x, x]), TypeError, "arrays, dtypes or constants")]:
        with pytest.raises(kind, match=r"test_ops_math_extra.py:\d+.*" + message):
            astjax.jit(fn)(x)
