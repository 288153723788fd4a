"""jnp.nanvar, isin, digitize, bincount, histogram, poly*, gradient, unique, set functions,
nonzero, compress, partition, lexsort, vecdot, unwrap, ...: plain astjax.numpy functions
(astjax/numpy/_statistics.py), checked against NumPy eagerly and under jit, their dtypes and
the padded results of size= against JAX 0.10.2, gradients, vmap, Numba and the errors."""
import warnings

import numpy as np
import pytest

import astjax
import astjax.numpy as jnp
from astjax.test_util import check_grads

from .op_checks import check_dtype_table

RNG = np.random.default_rng(0)
X = RNG.standard_normal((3, 4)).astype(np.float32)
XN = X.copy()
XN[0, 1] = np.nan
XN[2, :] = np.nan
M = np.int32([[3, 1, 2], [1, 3, 5]])
A = np.int32([1, 3, 4, 3])
B = np.int32([3, 1, 2, 1])
F = np.float32([0.2, 1.0, 2.5, 9.0, -1.0])
E = np.float32([0.0, 1.0, 2.0])
P = np.float32([1.0, -2.0, 3.0])
Y = np.int32([5, 1, 4, 2, 3, 1])
XW = np.float32([[1, np.nan, 3, 4], [2, 5, np.nan, 7]])
W = np.array([[True, True, False, True], [False, True, True, True]])
MR = np.int32([[3, 1, 2], [1, 3, 5], [3, 1, 2], [0, 9, 9]])  # a repeated row
XR = np.float32([[np.nan, 1, 2, np.nan, 1], [0, 0, 0, 0, 0]])  # equal NaN columns


def _cases():
    return [
    ("nanvar", lambda a: jnp.nanvar(a, axis=1, ddof=1), (XN,), np.nanvar(XN, axis=1, ddof=1)),
    ("nanvar all", lambda a: jnp.nanvar(a), (XN,), np.nanvar(XN)),
    ("nanvar keepdims", lambda a: jnp.nanvar(a, 0, keepdims=True), (XN,),
     np.nanvar(XN, 0, keepdims=True)),
    ("nanstd", lambda a: jnp.nanstd(a, axis=0), (XN,), np.nanstd(XN, axis=0)),
    # where=, mean=, initial=: values from JAX 0.10.2
    ("nanvar where", lambda a, w: jnp.nanvar(a, axis=1, where=w), (XW, W), np.float32([2.25, 1])),
    ("nanstd where", lambda a, w: jnp.nanstd(a, where=w, ddof=1), (XW, W), np.float32(2.5)),
    ("nanvar mean", lambda a, m: jnp.nanvar(a, 1, mean=m, keepdims=True),
     (XW, np.float32([[2], [3]])),
     np.float32([[2], [7]])),
    ("nanprod where", lambda a, w: jnp.nanprod(a, axis=1, where=w), (XW, W), np.float32([4, 35])),
    ("nanprod initial", lambda a: jnp.nanprod(a, initial=2.0), (XW,), np.float32(1680)),
    ("nanprod", lambda a: jnp.nanprod(a, axis=1), (XN,), np.nanprod(XN, axis=1)),
    ("nanargmax", lambda a: jnp.nanargmax(a[:2], axis=1), (XN,), np.nanargmax(XN[:2], axis=1)),
    ("nanargmin", lambda a: jnp.nanargmin(a), (XN,), np.nanargmin(XN)),
    ("nanargmin keepdims", lambda a: jnp.nanargmin(a[:2], 1, keepdims=True), (XN,),
     np.nanargmin(XN[:2], 1, keepdims=True)),
    ("isin", lambda a, b: jnp.isin(a, b), (M, B), np.isin(M, B)),
    ("isin invert", lambda a, b: jnp.isin(a, b, invert=True), (M, B), np.isin(M, B, invert=True)),
    ("digitize", lambda x, b: jnp.digitize(x, b), (F, E), np.digitize(F, E)),
    ("digitize right", lambda x, b: jnp.digitize(x, b, right=True), (F, E),
     np.digitize(F, E, right=True)),
    ("digitize decreasing", lambda x, b: jnp.digitize(x, b[::-1], True), (F, E),
     np.digitize(F, E[::-1], True)),
    ("bincount", lambda x: jnp.bincount(x, length=6), (A,), np.bincount(A, minlength=6)),
    ("bincount weights", lambda x, w: jnp.bincount(x, w, length=5), (A, P[[0, 1, 2, 0]]),
     np.bincount(A, P[[0, 1, 2, 0]])),
    ("histogram", lambda a: jnp.histogram(a, 4), (X,), np.histogram(X, 4)),
    ("histogram edges", lambda a, b: jnp.histogram(a, b), (X, E), np.histogram(X, E)),
    ("histogram range", lambda a, w: jnp.histogram(a, 3, (-1, 1), w, True), (X[0], X[1] ** 2),
     np.histogram(X[0], 3, (-1, 1), weights=X[1] ** 2, density=True)),
    ("histogram_bin_edges", lambda a: jnp.histogram_bin_edges(a, 5), (X,),
     np.histogram_bin_edges(X, 5)),
    ("histogram_bin_edges same", lambda a: jnp.histogram_bin_edges(a, 2), (E[:1] + 2,),
     np.histogram_bin_edges(E[:1] + 2, 2)),
    ("array_equal", lambda a, b: jnp.array_equal(a, b), (M, M.copy()), True),
    ("array_equal shapes", lambda a, b: jnp.array_equal(a, b), (M, M[:1]), False),
    ("array_equal values", lambda a, b: jnp.array_equal(a, b), (M, M + (M == 5)), False),
    ("array_equal nan", lambda a, b: jnp.array_equal(a, b, equal_nan=True), (XN, XN), True),
    ("array_equal nan not", lambda a, b: jnp.array_equal(a, b), (XN, XN), False),
    ("array_equiv", lambda a, b: jnp.array_equiv(a, b), (M[:1], M[0]), True),
    ("array_equiv no", lambda a, b: jnp.array_equiv(a, b), (M, M[0]), False),
    ("array_equiv shapes", lambda a, b: jnp.array_equiv(a, b), (M, M[:, :2]), False),
    ("polyadd", lambda a, b: jnp.polyadd(a, b), (P, X[0]), np.polyadd(P, X[0])),
    ("polyadd short", lambda a, b: jnp.polyadd(a, b), (X[0], P[:1]), np.polyadd(X[0], P[:1])),
    ("polysub", lambda a, b: jnp.polysub(a, b), (P, X[0]), np.polysub(P, X[0])),
    ("polymul", lambda a, b: jnp.polymul(a, b), (P, X[0]), np.polymul(P, X[0])),
    ("polyder", lambda p: jnp.polyder(p, 2), (X[0],), np.polyder(X[0], 2)),
    ("polyder 0", lambda p: jnp.polyder(p, 0), (X[0],), X[0]),
    ("polyint", lambda p, k: jnp.polyint(p, 2, k), (P, E[1:]), np.polyint(P, 2, k=E[1:])),
    ("polyint scalar k", lambda p: jnp.polyint(p, 3, 5.0), (P,), np.polyint(P, 3, k=5.0)),
    ("poly", lambda z: jnp.poly(z), (P,), np.poly(P)),
    ("gradient", lambda f: jnp.gradient(f), (X[0],), np.gradient(X[0])),
    ("gradient 2-D", lambda f: jnp.gradient(f, 2.0), (X,), np.gradient(X, 2.0)),
    ("gradient axis", lambda f: jnp.gradient(f, axis=-1, edge_order=1), (X,),
     np.gradient(X, axis=-1)),
    ("gradient coordinates", lambda f, x: jnp.gradient(f, 1.0, x), (X[:, :3], E ** 2 + E),
     np.gradient(X[:, :3], 1.0, E ** 2 + E)),
    ("unique", lambda a: jnp.unique(a, size=4), (M,), np.unique(M)),
    ("unique all", lambda a: jnp.unique(a, True, True, True, size=4), (M,),
     np.unique(M, True, True, True)),
    ("unique nan", lambda a: jnp.unique(a, size=3), (np.float32([1, np.nan, 2, np.nan, 1]),),
     np.float32([1, 2, np.nan])),
    ("unique axis", lambda a: jnp.unique(a, True, False, True, axis=0, size=3), (MR,),
     np.unique(MR, True, False, True, axis=0)),
    ("unique axis nan", lambda a: jnp.unique(a, axis=1, size=3), (XR,),
     np.float32([[1, 2, np.nan], [0, 0, 0]])),
    # the other results as JAX 0.10.2 gives them, padded
    ("unique axis padded", lambda a: jnp.unique(a, True, True, True, axis=1, size=4), (MR,),
     (np.int32([[1, 2, 3, 1], [3, 5, 1, 3], [1, 2, 3, 1], [9, 9, 0, 9]]),
      np.int32([1, 2, 0, 1]), np.int32([2, 0, 1]), np.int32([1, 1, 1, 0]))),
    ("unique_values", lambda a: jnp.unique_values(a, size=4), (M,), np.unique(M)),
    ("unique_counts", lambda a: jnp.unique_counts(a, size=4), (M,),
     np.unique(M, return_counts=True)),
    ("unique_inverse", lambda a: jnp.unique_inverse(a, size=4), (M,),
     np.unique(M, return_inverse=True)),
    ("unique_all", lambda a: jnp.unique_all(a, size=4), (M,), np.unique(M, True, True, True)),
    ("intersect1d", lambda a, b: jnp.intersect1d(a, b, size=2), (A, B), np.intersect1d(A, B)),
    ("intersect1d indices", lambda a, b: jnp.intersect1d(a, b, return_indices=True, size=2),
     (A, B), np.intersect1d(A, B, return_indices=True)),
    ("union1d", lambda a, b: jnp.union1d(a, b, size=4), (A, B), np.union1d(A, B)),
    ("setdiff1d", lambda a, b: jnp.setdiff1d(a, b, size=1), (A, B), np.setdiff1d(A, B)),
    ("setxor1d", lambda a, b: jnp.setxor1d(a, b, size=2), (A, B), np.setxor1d(A, B)),
    ("nonzero", lambda a: jnp.nonzero(a > 1, size=4), (M,), np.nonzero(M > 1)),
    ("flatnonzero", lambda a: jnp.flatnonzero(a, size=2), (A - 3,), np.flatnonzero(A - 3)),
    ("argwhere", lambda a: jnp.argwhere(a > 1, size=4), (M,), np.argwhere(M > 1)),
    ("extract", lambda c, a: jnp.extract(c, a, size=3), (M > 2, X[:2, :3]),
     np.extract(M > 2, X[:2, :3])),
    ("compress", lambda a: jnp.compress(np.int32([1, 0, 1]), a, axis=1, size=2), (M,),
     np.compress([1, 0, 1], M, axis=1)),
    ("compress flat", lambda a: jnp.compress(np.int32([1, 0, 1, 1]), a, size=3), (X,),
     np.compress([1, 0, 1, 1], X)),
    ("lexsort", lambda a, b: jnp.lexsort((a, b)), (A, B), np.lexsort((A, B))),
    ("lexsort array", lambda k: jnp.lexsort(k), (M,), np.lexsort(M)),
    ("lexsort axis", lambda a, b: jnp.lexsort((a, b), axis=0), (M.T, M.T % 2),
     np.lexsort((M.T, M.T % 2), axis=0)),
    ("lexsort dtypes", lambda a, b: jnp.lexsort((a, b)),
     (np.float32([0.5, 0.25, 0.5, 0.25]), np.int32([2 ** 30 + 1, 2 ** 30, 2 ** 30, 2 ** 30])),
     np.int32([1, 3, 2, 0])),
    ("vecdot", lambda a, b: jnp.vecdot(a, b), (X, X[0]), np.sum(X * X[0], -1)),
    ("vecdot axis", lambda a, b: jnp.vecdot(a, b, axis=0), (X, X[:, :1]),
     np.sum(X * X[:, :1], 0)),
    ("matvec", lambda a, b: jnp.matvec(a, b), (X, X[0]), X @ X[0]),
    ("vecmat", lambda a, b: jnp.vecmat(a, b), (X[:, 0], X), X[:, 0] @ X),
    ("unwrap", lambda a: jnp.unwrap(a * 4), (X,), np.unwrap(X * 4)),
    ("unwrap axis", lambda a: jnp.unwrap(a * 4, axis=0, discont=4.0), (X,),
     np.unwrap(X * 4, axis=0, discont=4.0)),
    ("unwrap int", lambda a: jnp.unwrap(a, period=8), (np.int32([0, 5, 11, 2]),),
     np.unwrap(np.int32([0, 5, 11, 2]), period=8)),
    # NumPy leaves the order inside each side unspecified: JAX 0.10.2's
    ("partition", lambda a: jnp.partition(a, 2), (Y,), np.int32([1, 1, 2, 5, 4, 3])),
    ("argpartition", lambda a: jnp.argpartition(a, 2), (Y,), np.int32([1, 5, 3, 0, 2, 4])),
    ("partition negative", lambda a: jnp.partition(a, -2), (Y,), np.int32([1, 1, 2, 3, 4, 5])),
    ("argpartition negative", lambda a: jnp.argpartition(a, -3), (Y,),
     np.int32([1, 5, 3, 4, 0, 2])),
    ("partition axis", lambda a: jnp.partition(a, 1, axis=0), (X,),
     np.concatenate((np.sort(X, 0)[:2], np.sort(X, 0)[:1:-1]))),
    # size= beyond the count: padded as JAX 0.10.2 pads
    ("unique padded", lambda a: jnp.unique(a, True, True, True, size=6), (M,),
     (np.int32([1, 2, 3, 5, 1, 1]), np.int32([1, 2, 0, 5, 1, 1]),
      np.int32([[2, 0, 1], [0, 2, 3]]), np.int32([2, 1, 2, 1, 0, 0]))),
    ("unique fill", lambda a: jnp.unique(a, size=5, fill_value=-1), (M,),
     np.int32([1, 2, 3, 5, -1])),
    ("nonzero padded", lambda a: jnp.nonzero(a > 2, size=4), (M,),
     (np.int32([0, 1, 1, 0]), np.int32([0, 1, 2, 0]))),
    ("nonzero fill", lambda a: jnp.nonzero(a > 2, size=4, fill_value=(-1, 9)), (M,),
     (np.int32([0, 1, 1, -1]), np.int32([0, 1, 2, 9]))),
    # JAX's one-argument where with size: nonzero's
    ("where size", lambda a: jnp.where(a > 2, size=4, fill_value=(-1, 9)), (M,),
     (np.int32([0, 1, 1, -1]), np.int32([0, 1, 2, 9]))),
    ("where size cut", lambda a: jnp.where(a[1], size=2), (M,), (np.int32([0, 1]),)),
    ("flatnonzero fill", lambda a: jnp.flatnonzero(a > 2, size=4, fill_value=9), (M,),
     np.int32([0, 4, 5, 9])),
    ("argwhere padded", lambda a: jnp.argwhere(a > 2, size=4), (M,),
     np.int32([[0, 0], [1, 1], [1, 2], [0, 0]])),
    ("extract padded", lambda a: jnp.extract(a > 1, a, size=6), (M,),
     np.int32([3, 2, 3, 5, 0, 0])),
    ("compress fill", lambda a: jnp.compress(np.int32([0, 1]), a, 0, size=2, fill_value=7),
     (M,), np.int32([[1, 3, 5], [7, 7, 7]])),
    ("intersect1d padded", lambda a, b: jnp.intersect1d(a, b, return_indices=True, size=4),
     (A, B), (np.int32([1, 3, 1, 1]), np.int32([0, 1, 4, 4]), np.int32([1, 0, 4, 4]))),
    ("intersect1d none", lambda a, b: jnp.intersect1d(a, b, size=2), (A, A + 10),
     np.int32([0, 0])),
    ("setxor1d none", lambda a, b: jnp.setxor1d(a, b, size=2), (A, A), np.int32([0, 0])),
    ("union1d padded", lambda a, b: jnp.union1d(a, b, size=6), (A, B),
     np.int32([1, 2, 3, 4, 1, 1])),
    ("setdiff1d padded", lambda a, b: jnp.setdiff1d(a, b, size=3), (np.int32([5, 1, 3, 4]), B),
     np.int32([4, 5, 0])),
    ("setxor1d padded", lambda a, b: jnp.setxor1d(a, b, size=4), (A, B),
     np.int32([2, 4, 2, 2])),
    ("bincount negative", lambda x: jnp.bincount(x, length=3), (np.int32([-1, 1, 5, 2]),),
     np.int32([1, 1, 1])),
]


with warnings.catch_warnings(), np.errstate(all="ignore"):  # all-NaN slices
    warnings.simplefilter("ignore")
    CASES = _cases()


def _check(got, want):
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want):
            _check(g, w)
        return
    got = np.asarray(got)
    assert got.shape == np.shape(want)
    np.testing.assert_allclose(got, want, rtol=2e-5, atol=2e-6)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # NumPy on all-NaN slices
@pytest.mark.parametrize("name,fn,args,want", CASES, ids=[c[0] for c in CASES])
def test_values_against_numpy(name, fn, args, want):
    # each raised AttributeError ("astjax.numpy has no function 'nanvar' yet")
    _check(fn(*args), want)
    _check(astjax.jit(fn)(*args), want)


def test_where_size_needs_the_one_argument_form():
    def f(c, x):
        return jnp.where(c, x, 0, size=3)
    for fn in (f, astjax.jit(f)):  # as JAX 0.10.2
        with pytest.raises(ValueError, match="cannot be used in three-term where"):
            fn(M > 2, M)


def test_eager_lengths_come_from_the_values():
    # without size=/length=, outside compiled code, as in JAX
    _check(jnp.unique(M, True, True, True), np.unique(M, True, True, True))
    _check(jnp.nonzero(M > 1), np.nonzero(M > 1))
    _check(jnp.argwhere(M > 1), np.argwhere(M > 1))
    _check(jnp.argwhere(np.int32(3)), np.zeros((1, 0)))
    _check(jnp.extract(M > 2, M), np.extract(M > 2, M))
    _check(jnp.compress(np.int32([1, 0, 1]), M, axis=1), np.compress([1, 0, 1], M, axis=1))
    _check(jnp.bincount(A, minlength=7), np.bincount(A, minlength=7))
    _check(jnp.bincount(A), np.bincount(A))
    _check(jnp.intersect1d(A, B, return_indices=True), np.intersect1d(A, B, return_indices=True))
    _check(jnp.setxor1d(A, B), np.setxor1d(A, B))
    _check(jnp.setxor1d(A, A), np.setxor1d(A, A))
    _check(jnp.unique(np.int32([])), np.unique(np.int32([])))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _check(jnp.unique_values(XN[2]), XN[2])  # each NaN its own
    assert type(jnp.unique_all(M)).__name__ == "_UniqueAllResult"
    assert jnp.unique_counts(M).counts.tolist() == [2, 1, 2, 1]


def test_numpy_names_in_compiled_code_are_these():
    def f(a, b):
        return np.nanvar(a) + np.sum(np.polyadd(b, b)) + np.vecdot(b, b)
    a, b = np.float32([1.0, np.nan, 3.0]), np.float32([3.0, 2.0, 0.5])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        np.testing.assert_allclose(astjax.jit(f)(a, b), 1.0 + 11.0 + 13.25, rtol=1e-6)


I32, I8, U8 = np.int32([1, 2, 4]), np.int8([1, 2, 4]), np.uint8([1, 2, 4])
F16, F32, BL = np.float16([1, 2, 4]), np.float32([1, 2, 4]), np.array([True, False, True])
# dtypes JAX 0.10.2 gives, the same with 64-bit types off and on except where a pair is given
DTYPES = [
    (lambda: jnp.nanvar(I32), "float32"),
    (lambda: jnp.nanvar(F16), "float16"),
    (lambda: jnp.nanstd(I8), "float32"),
    (lambda: jnp.nanvar(F32, dtype=jnp.float16), "float16"),
    (lambda: jnp.nanprod(I8), ("int32", "int64")),
    (lambda: jnp.nanprod(U8), ("uint32", "uint64")),
    (lambda: jnp.nanprod(BL), ("int32", "int64")),
    (lambda: jnp.nanprod(F16), "float16"),
    (lambda: jnp.nanargmax(F32), ("int32", "int64")),
    (lambda: jnp.nanargmin(I8), ("int32", "int64")),
    (lambda: jnp.digitize(F32, F32), "int32"),
    (lambda: jnp.digitize(I8, I32), "int32"),
    (lambda: jnp.bincount(I32), ("int32", "int64")),
    (lambda: jnp.bincount(BL), ("int32", "int64")),
    (lambda: jnp.bincount(I32, weights=F16), "float16"),
    (lambda: jnp.bincount(U8, weights=I8), "int8"),
    (lambda: jnp.histogram(I32)[0], "float32"),
    (lambda: jnp.histogram(I32)[1], "float32"),
    (lambda: jnp.histogram(F16, weights=I32)[0], "float16"),
    (lambda: jnp.histogram_bin_edges(I8, bins=F32), "float32"),
    (lambda: jnp.histogram(F16, 3)[1], "float16"),
    (lambda: jnp.polyadd(I32, I8), "int32"),
    (lambda: jnp.polyadd(I8, U8), "int16"),
    (lambda: jnp.polysub(F16, I32), "float16"),
    (lambda: jnp.polymul(I32, I8), "float32"),
    (lambda: jnp.polymul(F16, F16), "float16"),
    (lambda: jnp.polyder(I32), "float32"),
    (lambda: jnp.polyint(I8), "float32"),
    (lambda: jnp.polyint(F16, k=1.0), "float16"),
    (lambda: jnp.poly(I32), "float32"),
    (lambda: jnp.poly(F16), "float16"),
    (lambda: jnp.gradient(I32), "float32"),
    (lambda: jnp.gradient(F16), "float16"),
    (lambda: jnp.gradient(I32, F16), "float16"),
    (lambda: jnp.unique(I8), "int8"),
    (lambda: jnp.unique(BL, return_inverse=True)[1], ("int32", "int64")),
    (lambda: jnp.unique(F16, return_counts=True)[1], ("int32", "int64")),
    (lambda: jnp.unique(I8, return_index=True)[1], ("int32", "int64")),
    (lambda: jnp.nonzero(F32)[0], ("int32", "int64")),
    (lambda: jnp.argwhere(I8), ("int32", "int64")),
    (lambda: jnp.flatnonzero(BL), ("int32", "int64")),
    (lambda: jnp.compress(BL, I8), "int8"),
    (lambda: jnp.extract(BL, F16), "float16"),
    (lambda: jnp.partition(U8, 1), "uint8"),
    (lambda: jnp.argpartition(F16, 1), "int32"),
    (lambda: jnp.lexsort((I8, F32)), ("int32", "int64")),
    (lambda: jnp.vecdot(I8, I8), "int8"),
    (lambda: jnp.vecdot(I8, F16), "float16"),
    (lambda: jnp.matvec(I8[None], U8), "int16"),
    (lambda: jnp.vecmat(BL, BL[:, None]), "bool"),
    (lambda: jnp.unwrap(I32), ("float32", "float64")),
    (lambda: jnp.unwrap(F16), "float16"),
    (lambda: jnp.unwrap(I8, period=4), "int8"),
    (lambda: jnp.isin(F32, I8), "bool"),
    (lambda: jnp.array_equal(I8, F32), "bool"),
    (lambda: jnp.intersect1d(I8, U8), "int16"),
    (lambda: jnp.union1d(I8, F16), "float16"),
    (lambda: jnp.setdiff1d(I8, F32), "int8"),
    (lambda: jnp.setxor1d(U8, I8), "int16"),
]


@pytest.mark.parametrize("x64", [False, True])
def test_dtypes_as_jax(x64):
    check_dtype_table(DTYPES, x64)


X64 = RNG.standard_normal((3, 4))
X64N = X64.copy()
X64N[0, 1] = np.nan
P64 = np.float64([1.0, -2.0, 3.0])
GRADS = [
    ("nanvar", lambda a: jnp.nanvar(a, axis=1, ddof=1), (X64N,)),
    ("nanstd", lambda a: jnp.nanstd(a), (X64N,)),
    ("nanprod", lambda a: jnp.nanprod(a, axis=0), (X64N,)),
    ("polyadd", lambda a, b: jnp.polyadd(a, b), (P64, X64[0])),
    ("polysub", lambda a, b: jnp.polysub(a, b), (P64, X64[0])),
    ("polymul", lambda a, b: jnp.polymul(a, b), (P64, X64[0])),
    ("polyder", lambda a: jnp.polyder(a, 2), (X64[0],)),
    ("polyint", lambda a, k: jnp.polyint(a, 2, k), (X64[0], P64[:2])),
    ("poly", lambda a: jnp.poly(a), (P64,)),
    ("gradient", lambda a: jnp.gradient(a, 0.5, axis=1), (X64,)),
    ("gradient coordinates", lambda a, h: jnp.gradient(a, h), (X64[0], np.cumsum(np.abs(X64[1])))),
    ("vecdot", lambda a, b: jnp.vecdot(a, b), (X64, X64[0])),
    ("matvec", lambda a, b: jnp.matvec(a, b), (X64, X64[0])),
    ("vecmat", lambda a, b: jnp.vecmat(a, b), (X64[:, 0], X64)),
    ("unwrap", lambda a: jnp.unwrap(a * 3), (X64,)),
    ("partition", lambda a: jnp.partition(a, 1), (X64,)),
    ("histogram weights", lambda w: jnp.histogram(X64[0], 3, weights=w, density=True)[0],
     (X64[1],)),
    ("bincount weights", lambda w: jnp.bincount(np.int32([0, 2, 2, 1]), w, length=3),
     (X64[0],)),
    ("unique values", lambda a: jnp.unique(a, size=5), (X64[0],)),
    ("compress", lambda a: jnp.compress(np.array([True, False, True]), a, 0, size=2), (X64,)),
]


@pytest.mark.parametrize("name,fn,args", GRADS, ids=[g[0] for g in GRADS])
def test_gradients(name, fn, args):
    before = astjax.config.jax_enable_x64
    astjax.config.update("jax_enable_x64", True)
    try:
        # first order: a second costs tens of seconds of code generation here
        check_grads(fn, args, order=1, modes=("fwd", "rev"))
        if name in ("nanstd", "poly"):
            check_grads(astjax.jit(fn), args, order=1, modes=("rev",))
    finally:
        astjax.config.update("jax_enable_x64", before)


def test_nan_cotangents_are_zero():
    g = astjax.grad(lambda a: jnp.nanvar(a) + jnp.nanprod(a))(np.float32([1.0, np.nan, 3.0]))
    assert np.asarray(g)[1] == 0 and np.all(np.isfinite(np.asarray(g)))


I = np.int32([[1, 3, 1, 0, 3], [2, 2, 2, 0, 1], [4, 3, 2, 1, 0]])
VMAPS = [
    ("nanvar", lambda a: jnp.nanvar(a), XN),
    ("unique", lambda a: jnp.unique(a, size=4, fill_value=-1), I),
    ("nonzero", lambda a: jnp.nonzero(a, size=5)[0], I),
    ("bincount", lambda a: jnp.bincount(a, length=4), I),
    ("gradient", jnp.gradient, X),
    ("argpartition", lambda a: jnp.argpartition(a, 2), I),
    ("lexsort", lambda a: jnp.lexsort((a, a % 2)), I),
    ("setdiff1d", lambda a: jnp.setdiff1d(a, np.int32([1, 2]), size=3), I),
]


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("name,fn,xs", VMAPS, ids=[v[0] for v in VMAPS])
def test_vmap(name, fn, xs):
    got = np.asarray(astjax.vmap(fn)(xs))
    want = np.stack([np.asarray(fn(x)) for x in xs])
    np.testing.assert_allclose(got, want, rtol=1e-6)


def _several(a, b):
    return (jnp.nanvar(a) + jnp.vecdot(a, b) + jnp.sum(jnp.polyadd(a, b[:2])),
            jnp.digitize(a, b), jnp.histogram(a, 3)[0])


def test_numba(numba_backend):
    a, b = np.float32([0.5, 3.0, -1.0, 2.0]), np.float32([-1.0, 1.0, 2.0, 4.0])
    jitted = astjax.jit(_several)
    got, bins, counts = jitted(a, b)
    (compiled,) = jitted.cache.values()
    # histogram's edges once came from jnp.linspace, which Numba code cannot call
    assert compiled.backend == "numba", compiled.fallback_reason
    want = np.var(a) + a @ b + np.sum(np.polyadd(a, b[:2]))
    np.testing.assert_allclose(got, want, rtol=1e-5)
    np.testing.assert_array_equal(bins, np.digitize(a, b))
    np.testing.assert_array_equal(counts, np.histogram(a, 3)[0])


def _unique_no_size(a):
    return jnp.unique(a)


def _bincount_no_length(a):
    return jnp.bincount(a)


def _nonzero_no_size(a):
    return jnp.nonzero(a)


def _digitize_2d(a):
    return jnp.digitize(a, a[None])


@pytest.mark.parametrize("fn,kind,match", [
    (_unique_no_size, ValueError, "unique.*pass size="),
    (_bincount_no_length, ValueError, "bincount.*pass length="),
    (_nonzero_no_size, ValueError, "nonzero.*pass size="),
    (_digitize_2d, ValueError, "1-dimensional"),
])
def test_errors_name_the_users_line(fn, kind, match):
    with pytest.raises(kind, match=match) as info:
        astjax.jit(fn)(A)
    assert "test_ops_statistics.py" in str(info.value)


def _partition_run_time_kth(a, k):
    return jnp.partition(a, k)


def _histogram_run_time_bins(a, k):
    return jnp.histogram(a, k)


def _unique_run_time_size(a, k):
    return jnp.unique(a, size=k)


@pytest.mark.parametrize("fn,match", [
    (_partition_run_time_kth, r"partition\(\): kth must be known"),
    (_histogram_run_time_bins, r"histogram\(\): bins must be known"),
    (_unique_run_time_size, r"unique\(\): the size of the result must be known"),
])
def test_static_arguments_given_at_run_time(fn, match):
    # they named astjax's own helpers ("cannot call '_check_partition' on values computed
    # at run time")
    with pytest.raises(TypeError, match=match) as info:
        astjax.jit(fn)(A, 2)
    assert "test_ops_statistics.py" in str(info.value)


def _polymul_trimmed(a, b):
    return jnp.polymul(a, b, trim_leading_zeros=True)


def test_errors():
    with pytest.raises(TypeError, match="integer type"):
        jnp.bincount(F)
    with pytest.raises(ValueError, match="0d arrays"):
        jnp.nonzero(np.int32(1))
    with pytest.raises(ValueError, match="out of bounds"):
        jnp.unique(M, axis=2)
    with pytest.raises(NotImplementedError, match="edge_order"):
        jnp.gradient(X, edge_order=2)
    with pytest.raises(ValueError, match="fill_value"):
        jnp.nonzero(M, size=2, fill_value=(1, 2, 3))
    with pytest.raises(ValueError, match="Order of derivative"):
        jnp.polyder(P, -1)
    with pytest.raises(ValueError, match="out of bounds"):
        jnp.compress(np.bool_([True, False, False, True]), A[:3])
    _check(jnp.compress(np.bool_([True, False, False, True]), A[:3], size=1), A[:1])
    _check(jnp.compress(np.bool_([True, False, False, False]), A[:3]), A[:1])
    with pytest.raises(ValueError, match="too small"):  # it gave an empty array
        jnp.gradient(X[:1])
    _check(jnp.gradient(X[:1], axis=1), np.gradient(X[:1], axis=1))
    _check(jnp.digitize(F, F[:0]), np.zeros(5))  # no bins: 0, as JAX (was IndexError)
    _check(jnp.polymul(P[:2] * 0, E, trim_leading_zeros=True), np.float32([0, 0]))  # JAX's
    _check(jnp.polymul(np.float32([0, 0, 1, 2]), P, trim_leading_zeros=True),
           np.polymul([1, 2], P))
    with pytest.raises(ValueError, match="trim_leading_zeros"):
        astjax.jit(_polymul_trimmed)(P, P)
    with pytest.raises(TypeError, match="spacing"):
        jnp.gradient(X, 1.0, 2.0, 3.0)
