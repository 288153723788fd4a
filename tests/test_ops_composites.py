"""jnp.diff, isclose, tril/triu, diagonal, logaddexp, hypot, nansum, kron, sinc, trapezoid,
polyval, ...: plain astjax.numpy functions (astjax/numpy/_composites.py), checked against
NumPy eagerly and under jit, their dtypes against JAX 0.10.2, gradients, vmap and Numba."""
import warnings

import numpy as np
import pytest

import astjax
import astjax.numpy as jnp
from astjax.test_util import check_grads

from .op_checks import check_dtype_table

RNG = np.random.default_rng(0)
X = RNG.standard_normal((3, 4, 5)).astype(np.float32)
XN = X.copy()
XN[0, 1] = np.nan
XN[1, :, 2] = np.nan
P = np.float32([1.0, -2.0, 3.0])
FIN = np.float32([np.inf, 0.0, 3.0, -np.inf, 1.0])
FIN2 = np.float32([np.nan, 0.0, 4.0, -np.inf, np.inf])

# (name, function of the arrays, the arrays, NumPy's value); each is run eagerly and jitted
def _cases():
    return [
    ("diff", lambda a: jnp.diff(a), (X,), np.diff(X)),
    ("diff n axis", lambda a: jnp.diff(a, n=2, axis=1), (X,), np.diff(X, n=2, axis=1)),
    ("diff n=0", lambda a: jnp.diff(a, 0), (X,), X),
    ("diff edges", lambda a, b: jnp.diff(a, axis=0, prepend=1.0, append=b), (X, X[:1]),
     np.diff(X, axis=0, prepend=1.0, append=X[:1])),
    ("diff bool", lambda a: jnp.diff(a > 0), (X,), np.diff(X > 0)),
    ("ediff1d", lambda a, b: jnp.ediff1d(a, to_end=3.0, to_begin=b), (X[0], P),
     np.ediff1d(X[0], to_end=3.0, to_begin=P)),
    ("trapezoid", lambda a: jnp.trapezoid(a), (X,), np.trapezoid(X)),
    ("trapezoid dx", lambda a: jnp.trapezoid(a, dx=0.5, axis=1), (X,),
     np.trapezoid(X, dx=0.5, axis=1)),
    ("trapezoid x", lambda a, b: jnp.trapezoid(a, b), (X[0, 0], P[[0, 1, 2, 0, 1]] ** 2),
     np.trapezoid(X[0, 0], P[[0, 1, 2, 0, 1]] ** 2)),
    ("tril", lambda a: jnp.tril(a), (X,), np.tril(X)),
    ("triu k", lambda a: jnp.triu(a, k=1), (X,), np.triu(X, k=1)),
    ("triu -1", lambda a: jnp.triu(a, -1), (X[0],), np.triu(X[0], -1)),
    ("tril 1-D", lambda a: jnp.tril(a), (P,), np.tril(P)),
    ("diagonal", lambda a: jnp.diagonal(a), (X,), np.diagonal(X)),
    ("diagonal axes", lambda a: jnp.diagonal(a, offset=1, axis1=2, axis2=0), (X,),
     np.diagonal(X, offset=1, axis1=2, axis2=0)),
    ("diagonal -2", lambda a: jnp.diagonal(a, -2, 1, 2), (X,), np.diagonal(X, -2, 1, 2)),
    ("deg2rad", lambda a: jnp.deg2rad(a), (X,), np.deg2rad(X)),
    ("rad2deg", lambda a: jnp.rad2deg(a), (X,), np.rad2deg(X)),
    ("radians", lambda a: jnp.radians(a), (X,), np.radians(X)),
    ("degrees", lambda a: jnp.degrees(a), (X,), np.degrees(X)),
    ("hypot", lambda a, b: jnp.hypot(a, b), (X, X[0] * 2), np.hypot(X, X[0] * 2)),
    ("hypot inf", lambda a, b: jnp.hypot(a, b), (FIN, FIN2), np.hypot(FIN, FIN2)),
    ("logaddexp", lambda a, b: jnp.logaddexp(a, b), (X, X[0]), np.logaddexp(X, X[0])),
    ("logaddexp inf", lambda a, b: jnp.logaddexp(a, b), (FIN, FIN), np.logaddexp(FIN, FIN)),
    ("logaddexp2", lambda a, b: jnp.logaddexp2(a, b), (X, X[0]), np.logaddexp2(X, X[0])),
    # JAX's logaddexp is a ufunc with a reduce method (axis 0 by default, as NumPy's)
    ("logaddexp.reduce", lambda a: jnp.logaddexp.reduce(a * 30), (X,),
     np.logaddexp.reduce(X.astype(np.float64) * 30)),
    ("logaddexp.reduce axis", lambda a: jnp.logaddexp.reduce(a, axis=-1, keepdims=True), (X,),
     np.logaddexp.reduce(X.astype(np.float64), axis=-1, keepdims=True)),
    ("logaddexp.reduce inf", lambda a: jnp.logaddexp.reduce(a[1:]), (FIN,),
     np.logaddexp.reduce(FIN[1:])),
    ("sinc", lambda a: jnp.sinc(a), (np.float32([0.0, 0.5, -1.5, 2.0, 1e-3]),),
     np.sinc(np.float32([0.0, 0.5, -1.5, 2.0, 1e-3]))),
    ("heaviside", lambda a: jnp.heaviside(a, 0.5), (np.float32([-1.0, 0.0, 2.0]),),
     np.heaviside(np.float32([-1.0, 0.0, 2.0]), 0.5)),
    ("isclose", lambda a, b: jnp.isclose(a, b), (FIN, FIN * (1 + 1e-6)),
     np.isclose(FIN, FIN * (1 + 1e-6))),
    ("isclose nan", lambda a, b: jnp.isclose(a, b, rtol=0.3, equal_nan=True), (FIN2, FIN2 + 1),
     np.isclose(FIN2, FIN2 + 1, rtol=0.3, equal_nan=True)),
    ("allclose", lambda a, b: jnp.allclose(a, b), (X, X * (1 + 1e-6)), True),
    ("allclose no", lambda a, b: jnp.allclose(a, b, 0.0, 1e-3), (X, X + 1e-2), False),
    ("nansum", lambda a: jnp.nansum(a), (XN,), np.nansum(XN)),
    ("nansum axis", lambda a: jnp.nansum(a, axis=1, keepdims=True), (XN,),
     np.nansum(XN, axis=1, keepdims=True)),
    ("nanmean", lambda a: jnp.nanmean(a, axis=(0, 2)), (XN,), np.nanmean(XN, axis=(0, 2))),
    ("nanmax", lambda a: jnp.nanmax(a, axis=2), (XN,), np.nanmax(XN, axis=2)),
    ("nanmin", lambda a: jnp.nanmin(a, 1, True), (XN,), np.nanmin(XN, 1, keepdims=True)),
    ("kron", lambda a, b: jnp.kron(a, b), (X[0], X[1, :2, :3]), np.kron(X[0], X[1, :2, :3])),
    ("kron ranks", lambda a, b: jnp.kron(a, b), (X[0, 0], X[:2, :2]), np.kron(X[0, 0], X[:2, :2])),
    ("polyval", lambda p, x: jnp.polyval(p, x), (P, X), np.polyval(P, X)),
    ("polyval 2-D p", lambda p, x: jnp.polyval(p, x), (X[:, :2, 0], P[:2]),
     np.polyval(X[:, :2, 0], P[:2])),
]


with warnings.catch_warnings(), np.errstate(all="ignore"):  # inf - inf, all-NaN slices
    warnings.simplefilter("ignore")
    CASES = _cases()


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # NumPy on inf - inf, all-NaN slices
@pytest.mark.parametrize("name,fn,args,want", CASES, ids=[c[0] for c in CASES])
def test_values_against_numpy(name, fn, args, want):
    # each raised AttributeError ("astjax.numpy has no function 'diff' yet")
    for got in (fn(*args), astjax.jit(fn)(*args)):
        got = np.asarray(got)
        assert got.shape == np.shape(want)
        assert got.dtype == np.asarray(want).dtype or got.dtype == np.float32
        np.testing.assert_allclose(got, want, rtol=2e-6, atol=2e-6)


def test_numpy_names_in_compiled_code_are_these():
    def f(a, b):
        return np.diff(a, prepend=0.0) + np.hypot(a, b) + np.nansum(a) + np.radians(a)
    a, b = np.float32([1.0, 2.0, 3.0]), np.float32([3.0, 2.0, 0.5])
    np.testing.assert_allclose(astjax.jit(f)(a, b), f(a, b), rtol=1e-6)


I32, I8, U8 = np.int32([1, 2, 4]), np.int8([1, 2, 4]), np.uint8([1, 2, 4])
F16, F32, B = np.float16([1, 2, 4]), np.float32([1, 2, 4]), np.array([True, False, True])
# dtypes JAX 0.10.2 gives, the same with 64-bit types off and on except where a pair is given
DTYPES = [
    (lambda: jnp.diff(I8), "int8"),
    (lambda: jnp.diff(B), "bool"),
    (lambda: jnp.diff(F32, prepend=1.0), "float32"),
    (lambda: jnp.diff(I32, prepend=1.5), ("float32", "float64")),
    (lambda: jnp.ediff1d(I32, to_begin=1.5), "int32"),
    (lambda: jnp.deg2rad(I32), "float32"),
    (lambda: jnp.deg2rad(F16), "float16"),
    (lambda: jnp.rad2deg(B), "float32"),
    (lambda: jnp.hypot(I32, I8), "float32"),
    (lambda: jnp.hypot(F16, 2.0), "float16"),
    (lambda: jnp.hypot(I32, F16), "float16"),
    (lambda: jnp.logaddexp(I8, U8), "float32"),
    (lambda: jnp.logaddexp2(F32, 1), "float32"),
    (lambda: jnp.sinc(I32), "float32"),
    (lambda: jnp.sinc(F16), "float16"),
    (lambda: jnp.heaviside(I32, 0.5), ("float32", "float64")),
    (lambda: jnp.heaviside(F16, I32), "float16"),
    (lambda: jnp.isclose(I32, I32), "bool"),
    (lambda: jnp.allclose(F32, F16), "bool"),
    (lambda: jnp.nansum(I8), ("int32", "int64")),
    (lambda: jnp.nansum(F16), "float16"),
    (lambda: jnp.nanmean(I32), "float32"),
    (lambda: jnp.nanmean(F16), "float16"),
    (lambda: jnp.nanmax(I8), "int8"),
    (lambda: jnp.nanmin(B), "bool"),
    (lambda: jnp.trapezoid(I32), "float32"),
    (lambda: jnp.trapezoid(F16), "float16"),
    (lambda: jnp.trapezoid(F32, I32), "float32"),
    (lambda: jnp.tril(np.ones((2, 2), np.int8)), "int8"),
    (lambda: jnp.diagonal(np.ones((2, 2), bool)), "bool"),
    (lambda: jnp.kron(I8, F32), "float32"),
    (lambda: jnp.polyval(I32, I32), "int32"),
    (lambda: jnp.polyval(F16, 2), "float16"),
]


def _check_dtypes(x64):
    check_dtype_table(DTYPES, x64)


def test_dtypes_as_jax():
    _check_dtypes(False)


def test_dtypes_as_jax_x64(x64):
    _check_dtypes(True)


def test_gradients(x64):
    r = np.random.default_rng(1)
    a, b = r.standard_normal((3, 4)), r.standard_normal((3, 4))
    check_grads(lambda a: jnp.diff(a, n=2, axis=0, append=a[:1] * 2), (a,))
    check_grads(lambda a: jnp.ediff1d(a, to_begin=a[0]), (a,))
    check_grads(lambda a, b: jnp.trapezoid(a, b[0], axis=1), (a, np.cumsum(abs(b), 1)))
    check_grads(lambda a: jnp.triu(a, 1) + 2 * jnp.tril(a, -1), (a,))
    check_grads(lambda a: jnp.diagonal(a, 1), (a,))
    check_grads(lambda a, b: jnp.hypot(a, b), (a, b))
    check_grads(lambda a, b: jnp.logaddexp(a, b), (a, b))
    check_grads(lambda a, b: jnp.logaddexp2(a, b), (a, b))
    check_grads(lambda a: jnp.deg2rad(a) + jnp.rad2deg(a), (a,))
    check_grads(lambda a: jnp.heaviside(a, b), (b,))  # through x2 (where a == 0: nowhere)
    check_grads(lambda a: jnp.kron(a, a[:2, :2]), (a,))
    check_grads(lambda p, x: jnp.polyval(p, x), (a[:, 0], b))
    check_grads(lambda a: jnp.nanmax(a, axis=1) + jnp.nanmin(a, 0)[:3] + jnp.nanmean(a), (a,))
    # sinc: at exactly 0 too, and its second derivative there is -pi**2/3, not a guard's 0
    check_grads(jnp.sinc, (np.array([0.0, 0.3, -1.2]),))
    g2 = astjax.grad(astjax.grad(jnp.sinc))(0.0)
    np.testing.assert_allclose(g2, -np.pi ** 2 / 3, rtol=1e-12)
    # NaNs count as absent: their cotangent is 0
    an = a.copy()
    an[0, 1] = np.nan
    g = astjax.grad(lambda a: jnp.nansum(a) + jnp.nanmean(a))(an)
    want = np.full(a.shape, 1 + 1 / 11)
    want[0, 1] = 0
    np.testing.assert_allclose(g, want)


def test_vmap():
    xs = X[:, :3, :3]
    np.testing.assert_allclose(astjax.vmap(lambda m: jnp.diagonal(jnp.triu(m), 0))(xs),
                               np.stack([np.diagonal(np.triu(m)) for m in xs]), rtol=1e-6)
    np.testing.assert_allclose(astjax.vmap(jnp.polyval, in_axes=(None, 0))(P, X[:, 0]),
                               np.polyval(P, X[:, 0]), rtol=1e-6)
    np.testing.assert_allclose(astjax.vmap(lambda a: jnp.diff(a, 2))(X[0]), np.diff(X[0], 2),
                               rtol=1e-6)


def _several(a, b):
    return (jnp.diff(a, prepend=0.0) + jnp.logaddexp(a, b) + jnp.hypot(a, b) + jnp.sinc(a)
            + jnp.nanmax(jnp.tril(jnp.kron(a[:2], b[:2]))), jnp.isclose(a, b))


def test_numba(numba_backend):
    a, b = X[0, 0], X[1, 1]
    jitted = astjax.jit(_several)
    got, close = jitted(a, b)
    (compiled,) = jitted.cache.values()
    # tril's argument check runs while generating code; its call once stayed in the
    # Numba source and sent the whole function to the python fallback
    assert compiled.backend == "numba", compiled.fallback_reason
    with np.errstate(all="ignore"):
        want = (np.diff(a, prepend=0.0) + np.logaddexp(a, b) + np.hypot(a, b) + np.sinc(a)
                + np.nanmax(np.tril(np.kron(a[:2], b[:2]))))
    np.testing.assert_allclose(got, want, rtol=1e-5)
    np.testing.assert_array_equal(close, np.isclose(a, b))


def test_errors():
    with pytest.raises(ValueError, match="non-negative"):
        jnp.diff(X, -1)
    with pytest.raises(ValueError, match="at least one dimensional"):
        jnp.diff(np.float32(1.0))
    with pytest.raises(ValueError, match="can not be same"):
        jnp.diagonal(X, 0, 1, -2)
    with pytest.raises(ValueError, match="out of bounds"):
        astjax.jit(lambda a: jnp.diff(a, axis=3))(X)


def test_logaddexp_derivatives_are_jaxs_rule():
    """d logaddexp(a, b) = exp(a - out) da + exp(b - out) db, as JAX's custom JVP: where
    a == b the formula's max and |a - b| gave slopes 1 and 0 instead of 1/2 each (a Newton
    step of a logistic loss started at 0 went the wrong way). JAX 0.10.2's values."""
    a = np.float32([0.0, 1.0, -np.inf, np.inf, 2.0, 100.0])
    b = np.float32([0.0, 0.5, 0.0, 1.0, np.inf, -100.0])
    da, db = astjax.grad(lambda a, b: jnp.logaddexp(a, b).sum(), argnums=(0, 1))(a, b)
    np.testing.assert_allclose(da, [0.5, 0.62245935, 0.0, 1.0, 7.389056, 1.0], rtol=1e-6)
    np.testing.assert_allclose(db, [0.5, 0.37754068, 1.0, 2.7182817, 1.0, 0.0], rtol=1e-6)
    d2a, d2b = astjax.grad(lambda a, b: jnp.logaddexp2(a, b).sum(), argnums=(0, 1))(a, b)
    np.testing.assert_allclose(d2a, [0.5, 0.5857864, 0.0, 1.0, 4.0, 1.0], rtol=1e-6)
    np.testing.assert_allclose(d2b, [0.5, 0.41421354, 1.0, 2.0, 1.0, 0.0], rtol=1e-6)
    hess = astjax.hessian(lambda w: jnp.logaddexp(0.0, w).sum())(np.float32([0.0, 1.0]))
    np.testing.assert_allclose(hess, [[0.25, 0.0], [0.0, 0.19661196]], rtol=1e-6)
