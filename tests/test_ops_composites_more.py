"""jnp.pad, convolve, correlate, quantile, percentile, median, searchsorted, interp, cov,
corrcoef, ptp, average, nancumsum, cumulative_sum, ...: plain astjax.numpy functions (astjax/numpy/_composites2.py), checked
against NumPy eagerly and under jit, their dtypes against JAX 0.10.2, gradients, vmap, Numba."""
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
XN[0, 1, 2] = np.nan
XN2 = XN.copy()  # a slice all NaN along each axis, one NaN-free
XN2[1, :, 3] = np.nan
XN2[2, 2, :] = np.nan
A, V = X[0, 0], X[1, 1, :3]
Q = np.float32([0.1, 0.5, 0.9])
W = np.float32([1.0, 2.0, 3.0, 4.0])
XP, FP = np.sort(A), V[[0, 1, 2, 0, 1]]
S = np.float32([0.0, 1.0, 1.0, 2.0, np.nan])
SV = np.float32([1.0, 0.0, 3.0, -1.0, 2.0, np.nan])


# (name, function of the arrays, the arrays, NumPy's value); each is run eagerly and jitted
def _cases():
    return [
    ("pad", lambda x: jnp.pad(x, 2), (X[0],), np.pad(X[0], 2)),
    ("pad pairs", lambda x: jnp.pad(x, ((1, 2), (0, 3)), constant_values=1.5), (X[0],),
     np.pad(X[0], ((1, 2), (0, 3)), constant_values=1.5)),
    # one (before, after) value per axis: corners take the later axis's, as JAX's and NumPy's
    ("pad constant pairs", lambda x: jnp.pad(x, ((1, 2), (2, 1)),
                                             constant_values=((1, 2), (3, 4))), (X[0],),
     np.pad(X[0], ((1, 2), (2, 1)), constant_values=((1, 2), (3, 4)))),
    ("pad constant pair", lambda x: jnp.pad(x, 1, constant_values=(5, x[0, 0])), (X[0],),
     np.pad(X[0], 1, constant_values=(5, X[0, 0, 0]))),
    ("pad edge", lambda x: jnp.pad(x, (1, 2), mode="edge"), (X,), np.pad(X, (1, 2), "edge")),
    ("pad wrap", lambda x: jnp.pad(x, 7, mode="wrap"), (X[0],), np.pad(X[0], 7, "wrap")),
    ("pad reflect", lambda x: jnp.pad(x, 7, mode="reflect"), (X[0],),
     np.pad(X[0], 7, "reflect")),
    ("pad symmetric", lambda x: jnp.pad(x, ((9, 2),), mode="symmetric"), (A,),
     np.pad(A, ((9, 2),), "symmetric")),
    ("pad reflect 1", lambda x: jnp.pad(x, 2, mode="reflect"), (A[:1],),
     np.pad(A[:1], 2, "reflect")),
    # an empty axis padded with constants (it indexed the empty axis: IndexError)
    ("pad empty", lambda x: jnp.pad(x, ((1, 0), (0, 2)), constant_values=7.0), (X[0, :0],),
     np.pad(X[0, :0], ((1, 0), (0, 2)), constant_values=7.0)),
    ("convolve", lambda a, v: jnp.convolve(a, v), (A, V), np.convolve(A, V)),
    ("convolve same", lambda a, v: jnp.convolve(v, a, "same"), (A, V), np.convolve(V, A, "same")),
    ("convolve valid", lambda a, v: jnp.convolve(a, v, "valid"), (A, V),
     np.convolve(A, V, "valid")),
    ("correlate full", lambda a, v: jnp.correlate(a, v, "full"), (A, V),
     np.correlate(A, V, "full")),
    ("correlate same", lambda a, v: jnp.correlate(v, a, "same"), (A, V),
     np.correlate(V, A, "same")),
    ("correlate", lambda a, v: jnp.correlate(v, a), (A, V), np.correlate(V, A)),
    ("median", lambda x: jnp.median(x, axis=1), (X,), np.median(X, axis=1)),
    ("median all", lambda x: jnp.median(x), (X,), np.median(X)),
    ("median nan", lambda x: jnp.median(x, 2, keepdims=True), (XN,),
     np.median(XN, 2, keepdims=True)),
    ("quantile", lambda x, q: jnp.quantile(x, q, axis=2, keepdims=True), (X, Q),
     np.quantile(X, Q, axis=2, keepdims=True)),
    ("quantile 2-D q", lambda x, q: jnp.quantile(x, q.reshape(3, 1), keepdims=True), (X, Q),
     np.quantile(X, Q.reshape(3, 1), keepdims=True)),
    ("quantile lower", lambda x, q: jnp.quantile(x, q, axis=0, method="lower"), (X, Q),
     np.quantile(X, Q, axis=0, method="lower")),
    ("quantile higher", lambda x, q: jnp.quantile(x, q, 0, method="higher"), (X, Q),
     np.quantile(X, Q, 0, method="higher")),
    ("quantile midpoint", lambda x, q: jnp.quantile(x, q, -1, method="midpoint"), (X, Q),
     np.quantile(X, Q, -1, method="midpoint")),
    # JAX's nearest takes the lower value at a tie (NumPy rounds half to even: 4.0 at 0.5)
    ("quantile nearest", lambda x, q: jnp.quantile(x, q, method="nearest"),
     (np.float32([3, 1, 4, 1, 5, 9, 2, 6]), np.float32([0.1, 0.25, 0.5, 0.75, 0.9])),
     np.float32([1.0, 2.0, 3.0, 5.0, 6.0])),
    ("nanmedian", lambda x: jnp.nanmedian(x, axis=1), (XN2,), np.nanmedian(XN2, axis=1)),
    ("nanmedian all", lambda x: jnp.nanmedian(x, keepdims=True), (XN2,),
     np.nanmedian(XN2, keepdims=True)),
    ("nanquantile", lambda x, q: jnp.nanquantile(x, q, axis=2, keepdims=True), (XN2, Q),
     np.nanquantile(XN2, Q, axis=2, keepdims=True)),
    ("nanquantile lower", lambda x, q: jnp.nanquantile(x, q.reshape(3, 1), 0, method="lower"),
     (XN2, Q), np.nanquantile(XN2, Q.reshape(3, 1), 0, method="lower")),
    ("nanpercentile", lambda x: jnp.nanpercentile(x, 30.0, axis=0), (XN2,),
     np.nanpercentile(XN2, 30.0, axis=0)),
    ("percentile", lambda x: jnp.percentile(x, 30.0, axis=0), (X,), np.percentile(X, 30.0, 0)),
    # a tuple of axes, as JAX (it raised NotImplementedError)
    ("percentile axes", lambda x, q: jnp.percentile(x, q * 100, axis=(2, 0), keepdims=True),
     (X, Q), np.percentile(X, Q * 100, axis=(2, 0), keepdims=True)),
    ("nanquantile axes", lambda x: jnp.nanquantile(x, 0.3, axis=(-1, 1)), (XN2,),
     np.nanquantile(XN2, 0.3, axis=(-1, 1))),
    ("median axes", lambda x: jnp.median(x, axis=(0, 1)), (XN,), np.median(XN, axis=(0, 1))),
    ("searchsorted", lambda s, v: jnp.searchsorted(s, v), (S, SV), np.searchsorted(S, SV)),
    ("searchsorted right", lambda s, v: jnp.searchsorted(s, v, side="right"), (S[:4], SV),
     np.searchsorted(S[:4], SV, side="right")),
    ("searchsorted 2-D v", lambda s, v: jnp.searchsorted(s, v), (XP, X[1]),
     np.searchsorted(XP, X[1])),
    ("interp", lambda x, xp, fp: jnp.interp(x, xp, fp), (X[1], XP, FP), np.interp(X[1], XP, FP)),
    ("interp left right", lambda x, xp, fp: jnp.interp(x, xp, fp, left=-5.0, right=7.0),
     (X[1] * 3, XP, FP), np.interp(X[1] * 3, XP, FP, left=-5.0, right=7.0)),
    ("cov", lambda x: jnp.cov(x), (X[0],), np.cov(X[0])),
    ("cov y rowvar bias", lambda x: jnp.cov(x, x[:, :3] ** 2, rowvar=False, bias=True), (X[0],),
     np.cov(X[0], X[0][:, :3] ** 2, rowvar=False, bias=True)),
    ("cov 1-D ddof", lambda x: jnp.cov(x, ddof=2), (A,), np.cov(A, ddof=2)),
    ("corrcoef", lambda x: jnp.corrcoef(x), (X[0],), np.corrcoef(X[0])),
    ("corrcoef y", lambda x, y: jnp.corrcoef(x, y), (A, V[[0, 1, 2, 2, 0]]),
     np.corrcoef(A, V[[0, 1, 2, 2, 0]])),
    ("ptp", lambda x: jnp.ptp(x, axis=1), (X,), np.ptp(X, axis=1)),
    ("ptp all", lambda x: jnp.ptp(x, keepdims=True), (X,), np.ptp(X, keepdims=True)),
    ("average", lambda x, w: jnp.average(x, axis=1, weights=w), (X, W),
     np.average(X, axis=1, weights=W)),
    ("average returned", lambda x, w: jnp.average(x, -2, w, returned=True, keepdims=True)[1],
     (X, W), np.average(X, -2, W, returned=True, keepdims=True)[1]),
    ("average same shape", lambda x: jnp.average(x, weights=x ** 2), (X,),
     np.average(X, weights=X ** 2)),
    ("nancumsum", lambda x: jnp.nancumsum(x, axis=2), (XN,), np.nancumsum(XN, axis=2)),
    ("nancumsum flat", lambda x: jnp.nancumsum(x), (XN,), np.nancumsum(XN)),
    ("nancumprod", lambda x: jnp.nancumprod(x, 1), (XN,), np.nancumprod(XN, 1)),
    ("cumulative_sum", lambda x: jnp.cumulative_sum(x, axis=1, include_initial=True), (X,),
     np.concatenate((np.zeros((3, 1, 5), np.float32), np.cumsum(X, 1)), 1)),
    ("cumulative_sum 1-D", lambda x: jnp.cumulative_sum(x), (A,), np.cumsum(A)),
    ("cumulative_prod", lambda x: jnp.cumulative_prod(x, axis=-1, include_initial=True), (X,),
     np.concatenate((np.ones((3, 4, 1), np.float32), np.cumprod(X, -1)), -1)),
    ("average no weights", lambda x: jnp.average(x, axis=(0, 2), returned=True)[1], (X,),
     np.average(X, axis=(0, 2), returned=True)[1]),
]


with warnings.catch_warnings():  # NumPy on all-NaN slices
    warnings.simplefilter("ignore")
    CASES = _cases()


@pytest.mark.parametrize("name,fn,args,want", CASES, ids=[c[0] for c in CASES])
def test_values_against_numpy(name, fn, args, want):
    # each raised AttributeError ("astjax.numpy has no function 'pad' yet")
    for got in (fn(*args), astjax.jit(fn)(*args)):
        got = np.asarray(got)
        assert got.shape == np.shape(want)
        np.testing.assert_allclose(got, want, rtol=2e-6, atol=2e-6)


def test_numpy_names_in_compiled_code_are_these():
    def f(a, v):
        return np.convolve(a, v, "same") + np.pad(v, 1)[:5] + np.median(a) + np.ptp(v)
    np.testing.assert_allclose(astjax.jit(f)(A, V), f(A, V), rtol=1e-6)


I32, I8 = np.int32([1, 2, 4]), np.int8([1, 2, 4])
F16, F32, F64 = np.float16([1, 2, 4]), np.float32([1, 2, 4]), np.float64([1, 2, 4])
B = np.array([True, False, True])
# dtypes JAX 0.10.2 gives, the same with 64-bit types off and on
DTYPES = [
    (lambda: jnp.pad(I8, 1), "int8"),
    (lambda: jnp.pad(I32, 1, constant_values=1.5), "int32"),
    (lambda: jnp.pad(F16, (1, 2), mode="reflect"), "float16"),
    (lambda: jnp.pad(B, 1, mode="wrap"), "bool"),
    (lambda: jnp.convolve(I32, I32), "float32"),
    (lambda: jnp.convolve(F16, F32), "float32"),
    (lambda: jnp.convolve(I8, F16), "float16"),
    (lambda: jnp.correlate(I32, F16), "float16"),
    (lambda: jnp.median(I32), "float32"),
    (lambda: jnp.median(F16), "float16"),
    (lambda: jnp.quantile(I32, 0.5), "float32"),
    (lambda: jnp.quantile(F16, F32), "float16"),
    (lambda: jnp.quantile(F32, F64), "float32"),
    (lambda: jnp.percentile(I8, 50), "float32"),
    (lambda: jnp.searchsorted(F32, F32), "int32"),
    (lambda: jnp.searchsorted(I8, 2.5), "int32"),
    (lambda: jnp.interp(I32, I32, I32), "float32"),
    (lambda: jnp.interp(F16, F16, F16), "float16"),
    (lambda: jnp.interp(F16, F32, F16), "float32"),
    (lambda: jnp.cov(I32), "float32"),
    (lambda: jnp.cov(F16), "float16"),
    (lambda: jnp.corrcoef(I8), "float32"),
    (lambda: jnp.corrcoef(F16, F16), "float16"),
    (lambda: jnp.ptp(I8), "int8"),
    (lambda: jnp.average(I32), "float32"),
    (lambda: jnp.average(F16, weights=I32), "float16"),
    (lambda: jnp.average(I32, weights=I32), "float32"),
    (lambda: jnp.average(I8, weights=B), "float32"),
    (lambda: jnp.nancumsum(I8), "int8"),
    (lambda: jnp.nanmedian(I32), "float32"),
    (lambda: jnp.nanmedian(F16), "float16"),
    (lambda: jnp.nanquantile(I8, F32), "float32"),
    (lambda: jnp.nanpercentile(F16, 50.0), "float16"),
    (lambda: jnp.nancumprod(F16), "float16"),
    (lambda: jnp.cumulative_prod(I8, include_initial=True), "int8"),
]
# ... and those that differ: (64-bit types off, on)
DTYPES_X64 = [
    (lambda: jnp.cumulative_sum(I8), ("int32", "int64")),
    (lambda: jnp.cumulative_sum(B), ("int32", "int64")),
]


def _check_dtypes(x64):
    check_dtype_table(DTYPES + DTYPES_X64, x64)


@pytest.mark.filterwarnings("ignore:float64 input converted")  # F64 with 64-bit types off
def test_dtypes_as_jax():
    _check_dtypes(False)


def test_dtypes_as_jax_x64(x64):
    _check_dtypes(True)


def test_gradients(x64):
    r = np.random.default_rng(1)
    a, b = r.standard_normal((3, 4)), r.standard_normal(3)
    check_grads(lambda a: jnp.pad(a, ((1, 2), (3, 0)), constant_values=2.0), (a,))
    check_grads(lambda a: jnp.pad(a, 5, mode="reflect") + jnp.pad(a, 5, mode="wrap")
                + jnp.pad(a, 5, mode="symmetric") * jnp.pad(a, 5, mode="edge"), (a,))
    check_grads(lambda a, v: jnp.convolve(a, v, "same") + jnp.correlate(a, v, "same"),
                (a[0], b))
    check_grads(lambda a: jnp.quantile(a, np.array([0.2, 0.7]), axis=1), (a,))
    check_grads(lambda a: jnp.median(a, 0) + jnp.percentile(a, 40.0, 0, method="midpoint"), (a,))
    xp = np.sort(a[0])
    check_grads(lambda x, fp: jnp.interp(x, xp, fp), (b, a[1]))
    check_grads(lambda a: jnp.cov(a) + jnp.corrcoef(a), (a,))
    check_grads(lambda a, w: jnp.average(a, 1, w) + jnp.ptp(a, 0)[:3], (a, abs(a[0]) + 1))
    check_grads(lambda a: jnp.cumulative_sum(a, axis=0, include_initial=True)
                + jnp.cumulative_prod(a, axis=0, include_initial=True), (a,))
    an = a.copy()
    an[1, 2] = np.nan  # NaNs count as absent: their cotangent is 0
    g = astjax.grad(lambda a: jnp.sum(jnp.nancumsum(a, 1) + jnp.nancumprod(a, 1)))(an)
    assert g[1, 2] == 0 and np.isfinite(g).all()
    # nanquantile of the row with a NaN: as quantile of its other values, 0 at the NaN
    g = np.asarray(astjax.grad(lambda a: jnp.sum(jnp.nanquantile(a, 0.25, axis=1)))(an))[1]
    want = astjax.grad(lambda r: jnp.quantile(r, 0.25))(an[1, [0, 1, 3]])
    np.testing.assert_allclose(g[[0, 1, 3]], want)
    assert g[2] == 0
    check_grads(lambda a: jnp.nanmedian(a, 1) + jnp.nanquantile(a, np.array([0.3]), 0)[0],
                (an[:, [0, 1, 3]],))
    # linear quantile between two ranks: weights 1 - frac, frac on the two values
    g = astjax.grad(lambda a: jnp.quantile(a, 0.25))(np.array([4.0, 1.0, 3.0, 2.0]))
    np.testing.assert_allclose(g, [0, 0.25, 0, 0.75])


def test_vmap():
    np.testing.assert_allclose(astjax.vmap(lambda m: jnp.pad(m, 1, mode="reflect"))(X),
                               np.stack([np.pad(m, 1, mode="reflect") for m in X]), rtol=1e-6)
    np.testing.assert_allclose(astjax.vmap(jnp.convolve, in_axes=(0, None))(X[0], V),
                               np.stack([np.convolve(r, V) for r in X[0]]), rtol=1e-6)
    np.testing.assert_allclose(astjax.vmap(jnp.median)(X), np.median(X, axis=(1, 2)),
                               rtol=1e-6)
    np.testing.assert_array_equal(astjax.vmap(jnp.searchsorted, in_axes=(None, 0))(XP, X[1]),
                                  np.searchsorted(XP, X[1]))


def _several(a, v, q):
    return (jnp.convolve(jnp.pad(a, 2, mode="symmetric"), v, "valid")
            + jnp.interp(a, jnp.sort(v), v) + jnp.quantile(a, q)
            + jnp.searchsorted(jnp.sort(a), a, side="right") + jnp.average(a, weights=v * v))


def test_numba(numba_backend):
    a, v, q = X[0, 0], X[1, 1], np.float32(0.3)
    jitted = astjax.jit(_several)
    got = jitted(a, v, q)
    (compiled,) = jitted.cache.values()
    assert compiled.backend == "numba", compiled.fallback_reason  # not the python fallback
    want = (np.convolve(np.pad(a, 2, mode="symmetric"), v, "valid")
            + np.interp(a, np.sort(v), v) + np.quantile(a, q)
            + np.searchsorted(np.sort(a), a, side="right") + np.average(a, weights=v * v))
    np.testing.assert_allclose(got, want, rtol=1e-5)


def test_errors():
    with pytest.raises(ValueError, match="negative"):
        jnp.pad(A, -1)
    with pytest.raises(TypeError, match="integral"):
        jnp.pad(A, 1.5)
    with pytest.raises(ValueError, match="does not fit"):
        jnp.pad(A, ((1, 2), (3, 4)))
    with pytest.raises(ValueError, match="unsupported keyword arguments for mode 'edge'"):
        jnp.pad(A, 1, mode="edge", constant_values=0)  # as JAX
    with pytest.raises(NotImplementedError, match="'mean' is not supported"):
        jnp.pad(A, 1, mode="mean")
    with pytest.raises(ValueError, match="1-dimensional inputs"):
        jnp.convolve(X[0], A)
    with pytest.raises(ValueError, match="a should be 1-dimensional"):
        jnp.searchsorted(X[0], A)
    with pytest.raises(ValueError, match="method must be one of"):
        jnp.quantile(A, 0.5, method="foo")
    with pytest.raises(ValueError, match="repeated axis"):
        jnp.median(X, axis=(0, -3))
    with pytest.raises(ValueError, match="out of bounds"):
        astjax.jit(lambda a: jnp.median(a, axis=3))(X)
    with pytest.raises(ValueError, match="axis was not set"):
        jnp.cumulative_sum(X)
    with pytest.raises(ValueError, match="non-scalar"):
        jnp.cumulative_prod(np.float32(1.0))
    with pytest.raises(ValueError, match="Axis must be specified"):
        jnp.average(X, weights=W)
