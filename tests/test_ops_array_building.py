"""jnp.cross, rot90, take, insert, delete, block, tril_indices, logspace, vander, windows, ...:
plain astjax.numpy functions (astjax/numpy/_array_building.py, _array_index.py), checked
against NumPy (or JAX 0.10.2's values where NumPy differs) eagerly and under jit, their
dtypes against JAX 0.10.2, gradients, vmap, Numba and the errors."""
import warnings

import numpy as np
import pytest

import astjax
import astjax.numpy as jnp
from astjax.test_util import check_grads

from .op_checks import check_dtype_table

RNG = np.random.default_rng(0)
X = RNG.standard_normal((3, 4, 5)).astype(np.float32)
M = X[0]  # 4 x 5
V3, W3 = X[1, :, :3], X[2, :, :3]  # rows of 3-vectors
F32 = np.float32([1.0, 2.0, 3.0])
I32, I8 = np.int32([1, 2, 3]), np.int8([1, 2, 3])
B = np.array([True, False, True, True])
NAN = np.nan


# (name, function of the arrays, the arrays, the value wanted); each is run eagerly and jitted
def _cases():
    return [
    ("cross", lambda a, b: jnp.cross(a, b), (V3, W3), np.cross(V3, W3)),
    ("cross axes", lambda a, b: jnp.cross(a, b, axisa=0, axisb=-1, axisc=0), (V3.T, W3),
     np.cross(V3.T, W3, axisa=0, axisb=-1, axisc=0)),
    ("cross axis", lambda a, b: jnp.cross(a, b, axis=0), (V3[:3], W3[:3]),
     np.cross(V3[:3], W3[:3], axis=0)),
    ("cross 2 and 3", lambda a, b: jnp.cross(a, b), (V3[:, :2], W3), np.cross(V3[:, :2], W3)),
    ("cross 3 and 2", lambda a, b: jnp.cross(a, b), (V3[0], W3[:, :2]),
     np.cross(V3[0], W3[:, :2])),
    ("rot90", lambda m: jnp.rot90(m), (M,), np.rot90(M)),
    ("rot90 k axes", lambda m: jnp.rot90(m, 3, axes=(2, 0)), (X,), np.rot90(X, 3, axes=(2, 0))),
    ("rot90 -2", lambda m: jnp.rot90(m, -2, (1, 2)), (X,), np.rot90(X, -2, (1, 2))),
    ("rot90 4", lambda m: jnp.rot90(m, 4), (M,), M),
    ("fliplr", lambda m: jnp.fliplr(m), (X,), np.fliplr(X)),
    ("flipud", lambda m: jnp.flipud(m), (F32,), np.flipud(F32)),
    ("rollaxis", lambda a: jnp.rollaxis(a, 2), (X,), np.rollaxis(X, 2)),
    ("rollaxis start", lambda a: jnp.rollaxis(a, 0, 3), (X,), np.rollaxis(X, 0, 3)),
    ("rollaxis -1 1", lambda a: jnp.rollaxis(a, -1, 1), (X,), np.rollaxis(X, -1, 1)),
    ("append", lambda a, b: jnp.append(a, b), (M, F32), np.append(M, F32)),
    ("append axis", lambda a, b: jnp.append(a, b, axis=0), (M, M[:2]),
     np.append(M, M[:2], axis=0)),
    ("column_stack", lambda a, b: jnp.column_stack((a, b, a)), (F32, I32),
     np.column_stack((F32, I32, F32))),
    ("column_stack 2-D", lambda a, b: jnp.column_stack([a, b]), (M, M[:, 0]),
     np.column_stack([M, M[:, 0]])),
    ("dstack", lambda a, b: jnp.dstack((a, b)), (M, M), np.dstack((M, M))),
    ("dstack 1-D", lambda a, b: jnp.dstack([a, b]), (F32, F32), np.dstack([F32, F32])),
    ("hsplit", lambda a: jnp.hsplit(a, [1, 3])[1], (M,), np.hsplit(M, [1, 3])[1]),
    ("hsplit 1-D", lambda a: jnp.hsplit(a, 3)[2], (F32,), np.hsplit(F32, 3)[2]),
    ("vsplit", lambda a: jnp.vsplit(a, 2)[1], (M,), np.vsplit(M, 2)[1]),
    ("dsplit", lambda a: jnp.dsplit(a, [2])[1], (X,), np.dsplit(X, [2])[1]),
    ("tril_indices", lambda: jnp.tril_indices(4, 1, 5), (), np.tril_indices(4, 1, 5)),
    ("triu_indices", lambda: jnp.triu_indices(4, -1), (), np.triu_indices(4, -1)),
    ("tril_indices_from", lambda m: m[jnp.tril_indices_from(m, -1)], (M,),
     M[np.tril_indices_from(M, -1)]),
    ("triu_indices_from", lambda m: jnp.triu_indices_from(m, 2), (M,),
     np.triu_indices_from(M, 2)),
    ("triu_indices empty", lambda: jnp.triu_indices(3, 5), (), np.triu_indices(3, 5)),
    ("diag_indices", lambda: jnp.diag_indices(3, 3), (), np.diag_indices(3, 3)),
    ("diag_indices_from", lambda m: m[jnp.diag_indices_from(m)], (X[:, :3, :3],),
     X[:, :3, :3][np.diag_indices_from(X[:, :3, :3])]),
    ("indices", lambda: jnp.indices((2, 3)), (), np.indices((2, 3))),
    ("indices sparse", lambda m: jnp.indices(m.shape, sparse=True), (M,),
     np.indices(M.shape, sparse=True)),
    ("indices dtype", lambda: jnp.indices((3, 1, 2), dtype=np.int8), (),
     np.indices((3, 1, 2), dtype=np.int8)),
    ("logspace", lambda: jnp.logspace(0.0, 2.0, 5), (), np.logspace(0.0, 2.0, 5)),
    ("logspace arrays", lambda a, b: jnp.logspace(a, b, 4, endpoint=False, base=2.0, axis=1),
     (F32, F32 + 1), np.logspace(F32, F32 + 1, 4, endpoint=False, base=2.0, axis=1)),
    ("geomspace", lambda: jnp.geomspace(1.0, 1000.0, 4), (), np.geomspace(1.0, 1000.0, 4)),
    ("geomspace negative", lambda a: jnp.geomspace(-a, -a * 8, 3, axis=-1), (F32,),
     np.geomspace(-F32, -F32 * 8, 3, axis=-1)),
    ("vander", lambda a: jnp.vander(a), (F32,), np.vander(F32)),
    ("vander N increasing", lambda a: jnp.vander(a, 4, increasing=True), (I32,),
     np.vander(I32, 4, increasing=True)),
    ("take", lambda a: jnp.take(a, np.int32([[0, 5], [19, 2]])), (M,),
     np.take(M, [[0, 5], [19, 2]])),
    ("take axis", lambda a, i: jnp.take(a, i, axis=1), (X, np.int32([[0, 2], [-1, 1]])),
     np.take(X, [[0, 2], [-1, 1]], axis=1)),
    # JAX's default mode fills out-of-bounds gathers (NaN for floats), where NumPy raises
    ("take fill", lambda a, i: jnp.take(a, i), (F32, np.int32([0, 5, -1, -4])),
     np.float32([1.0, NAN, 3.0, NAN])),
    ("take fill_value", lambda a, i: jnp.take(a, i, axis=0, fill_value=7), (M, np.int32([9, 1])),
     np.stack([np.full(5, 7, np.float32), M[1]])),
    ("take fill int", lambda a, i: jnp.take(a, i), (I32, np.int32([0, 5, -4])),
     np.int32([1, -2 ** 31, -2 ** 31])),
    ("take clip", lambda a, i: jnp.take(a, i, axis=-1, mode="clip"), (X, np.int32([-3, 9, 2])),
     np.take(X, [-3, 9, 2], axis=-1, mode="clip")),
    ("take wrap", lambda a, i: jnp.take(a, i, axis=0, mode="wrap"), (M, np.int32([-5, 9, 2])),
     np.take(M, [-5, 9, 2], axis=0, mode="wrap")),
    ("resize", lambda a: jnp.resize(a, (2, 4)), (F32,), np.resize(F32, (2, 4))),
    ("resize int", lambda a: jnp.resize(a, 7), (M,), np.resize(M, 7)),
    ("unstack", lambda a: jnp.unstack(a, axis=1)[2], (M,), M[:, 2]),
    ("block", lambda a, b: jnp.block([[a, b], [b, a]]), (M, M * 2),
     np.block([[M, M * 2], [M * 2, M]])),
    ("block ranks", lambda a, b: jnp.block([[a], [b]]), (F32, M[:2, :3]),
     np.block([[F32], [M[:2, :3]]])),
    ("block scalar", lambda a: jnp.block([a, 1.5]), (F32,), np.block([F32, 1.5])),
    ("diagflat", lambda a: jnp.diagflat(a, -1), (M[:2, :2],), np.diagflat(M[:2, :2], -1)),
    ("diagflat k", lambda a: jnp.diagflat(a, 2), (F32,), np.diagflat(F32, 2)),
    ("delete", lambda a: jnp.delete(a, 1), (F32,), np.delete(F32, 1)),
    ("delete -1 axis", lambda a: jnp.delete(a, -1, axis=1), (M,), np.delete(M, -1, axis=1)),
    ("delete slice", lambda a: jnp.delete(a, slice(0, 5, 2), axis=1), (M,),
     np.delete(M, slice(0, 5, 2), axis=1)),
    ("delete array", lambda a, i: jnp.delete(a, i), (M, np.int32([0, -1, 0, 7])),
     np.delete(M, [0, -1, 0, 7])),
    ("delete mask", lambda a, i: jnp.delete(a, i, axis=0), (M, B), np.delete(M, B, axis=0)),
    ("insert", lambda a: jnp.insert(a, 1, 9.0), (F32,), np.insert(F32, 1, 9.0)),
    ("insert array", lambda a, i: jnp.insert(a, i, F32), (M, np.int32([1, 1, -2])),
     np.insert(M, [1, 1, -2], F32)),
    ("insert block", lambda a, v: jnp.insert(a, -1, v, axis=1), (M, X[1, :2, :4]),
     np.insert(M, -1, X[1, :2, :4], axis=1)),
    ("insert one index", lambda a, v: jnp.insert(a, np.int32([2]), v, axis=1), (M, M[:, :1]),
     np.insert(M, [2], M[:, :1], axis=1)),
    ("insert slice", lambda a: jnp.insert(a, slice(0, 2), 7), (I32,),
     np.insert(I32, slice(0, 2), 7)),
    ("insert cast", lambda a: jnp.insert(a, 0, 2.7), (I8,), np.int8([2, 1, 2, 3])),
    ("fill_diagonal", lambda a, v: jnp.fill_diagonal(a, v, inplace=False), (M, F32[:2]),
     _filled(M, F32[:2])),
    ("fill_diagonal scalar", lambda a: jnp.fill_diagonal(a, 5.0, inplace=False),
     (X[:, :3, :3],), _filled(X[:, :3, :3], 5.0)),
    ("put_along_axis", lambda a, i: jnp.put_along_axis(a, i, 5.0, axis=1, inplace=False),
     (M, np.int32([[1], [2], [0], [-1]])), _put(M, np.int32([[1], [2], [0], [-1]]), 5.0, 1)),
    ("put_along_axis values", lambda a, i, v: jnp.put_along_axis(a, i, v, 0, inplace=False),
     (X, np.int32([[[1, 0, 2, 0, 1]]]), X[:1, :1]),
     _put(X, np.int32([[[1, 0, 2, 0, 1]]]), X[:1, :1], 0)),
    ("put_along_axis None", lambda a, i: jnp.put_along_axis(a, i, 5, None, inplace=False),
     (M, np.int32([1, 14])), _put(M, np.int32([1, 14]), 5, None)),
    ("unravel_index", lambda i: jnp.unravel_index(i, (3, 4)), (np.int32([5, 7, 0, 11, -1]),),
     np.unravel_index([5, 7, 0, 11, 11], (3, 4))),
    # out of range: JAX clamps (NumPy raises)
    ("unravel_index clamped", lambda i: jnp.unravel_index(i, (3, 4)),
     (np.int32([-12, -13, 12, 30]),), (np.int32([0, 0, 2, 2]), np.int32([0, 0, 3, 3]))),
    ("ravel_multi_index clip", lambda i, j: jnp.ravel_multi_index((i, j), (3, 4), mode="clip"),
     (np.int32([1, 2, -1]), np.int32([3, 5, 0])),
     np.ravel_multi_index(([1, 2, -1], [3, 5, 0]), (3, 4), mode="clip")),
    ("ravel_multi_index wrap F", lambda i, j: jnp.ravel_multi_index(
        (i, j), (3, 4), mode="wrap", order="F"), (np.int8([1, 2, -1]), np.int8([3, 5, 0])),
     np.ravel_multi_index(([1, 2, -1], [3, 5, 0]), (3, 4), mode="wrap", order="F")
     .astype(np.int8)),  # the indices' dtype, as JAX
    ("hamming", lambda: jnp.hamming(5), (), np.hamming(5)),
    ("hanning", lambda: jnp.hanning(6), (), np.hanning(6)),
    ("blackman", lambda: jnp.blackman(7), (), np.blackman(7)),
    ("bartlett", lambda: jnp.bartlett(6), (), np.bartlett(6)),
    ("window of 1", lambda: jnp.hamming(1) + jnp.bartlett(1), (), np.float32([2.0])),
    ("window of 0", lambda: jnp.blackman(0), (), np.blackman(0)),
    ("window of a run-time length", lambda a: jnp.hanning(a.shape[1]), (M,), np.hanning(5)),
]


def _filled(a, v):
    a = a.copy()
    np.fill_diagonal(a, v)
    return a


def _put(a, i, v, axis):
    a = a.copy()
    np.put_along_axis(a, i, v, axis)
    return a


with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # NumPy 2 deprecates its cross of 2-vectors
    CASES = _cases()


def _as_list(x):
    return list(x) if isinstance(x, (tuple, list)) else [x]


@pytest.mark.parametrize("name,fn,args,want", CASES, ids=[c[0] for c in CASES])
def test_values(name, fn, args, want):
    # each raised AttributeError ("astjax.numpy has no function 'cross' yet")
    for got in (fn(*args), astjax.jit(fn)(*args)):
        got, wants = _as_list(got), _as_list(want)
        assert len(got) == len(wants)
        for g, w in zip(got, wants):
            g, w = np.asarray(g), np.asarray(w)
            assert g.shape == w.shape, (g.shape, w.shape)
            assert g.dtype == w.dtype or g.dtype == np.float32 and w.dtype == np.float64 or \
                g.dtype == np.int32 and w.dtype == np.int64, (g.dtype, w.dtype)
            np.testing.assert_allclose(g, w, rtol=2e-6, atol=2e-6)


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # NumPy 2's cross of 2-vectors
def test_cross_of_2_vectors():
    # the z component, a scalar per pair (eagerly, where the lengths are known)
    np.testing.assert_allclose(jnp.cross(V3[:, :2], W3[:, :2]), np.cross(V3[:, :2], W3[:, :2]),
                               rtol=1e-6)
    # under jit a length is a run-time int: two 2-vectors give (0, 0, z)
    got = astjax.jit(jnp.cross)(V3[:, :2], W3[:, :2])
    want = np.cross(np.pad(V3[:, :2], ((0, 0), (0, 1))), np.pad(W3[:, :2], ((0, 0), (0, 1))))
    np.testing.assert_allclose(got, want, rtol=1e-6)


def test_numpy_names_in_compiled_code_are_these():
    def f(a, b):
        return np.cross(a, b) + np.take(a, np.int32([2, 0, 1])) + np.flipud(a) + np.hamming(3)
    np.testing.assert_allclose(astjax.jit(f)(F32, F32[::-1]), f(F32, F32[::-1]), rtol=1e-6)


def test_unstack_in_compiled_code_is_a_list():
    def f(x):
        a, b, c, d = jnp.unstack(x)
        return a * d + jnp.unstack(x, axis=1)[4].sum()
    np.testing.assert_allclose(astjax.jit(f)(M), M[0] * M[3] + M[:, 4].sum(), rtol=1e-6)
    assert isinstance(jnp.unstack(M), tuple) and len(jnp.unstack(M)) == 4


U8, F16 = np.uint8([1, 2, 3]), np.float16([1, 2, 3])
# dtypes JAX 0.10.2 gives, the same with 64-bit types off and on except where a pair is given
DTYPES = [
    (lambda: jnp.tril_indices(3)[0], ("int32", "int64")),
    (lambda: jnp.triu_indices_from(np.ones((2, 3)))[1], ("int32", "int64")),
    (lambda: jnp.diag_indices(3)[0], ("int32", "int64")),
    (lambda: jnp.indices((2, 3)), ("int32", "int64")),
    (lambda: jnp.indices((2, 3), sparse=True)[1], ("int32", "int64")),
    (lambda: jnp.indices((2, 3), dtype=np.int8), "int8"),
    (lambda: jnp.logspace(0, 2, 5), ("float32", "float64")),
    (lambda: jnp.logspace(np.int32(0), np.int32(2), 3), "float32"),
    (lambda: jnp.logspace(0, 2, 5, dtype=np.int32), "int32"),
    (lambda: jnp.geomspace(F16[0], F16[2], 3), "float16"),
    (lambda: jnp.geomspace(1, np.int8(8), 4), "float32"),
    (lambda: jnp.vander(I8), "int8"),
    (lambda: jnp.vander(F16), "float16"),
    (lambda: jnp.hamming(3), ("float32", "float64")),
    (lambda: jnp.bartlett(0), ("float32", "float64")),
    (lambda: jnp.unravel_index(I8, (3, 4))[0], "int8"),
    (lambda: jnp.unravel_index(U8, (3, 4))[1], "uint8"),
    (lambda: jnp.ravel_multi_index((I8, I8), (4, 4), order="F"), "int8"),
    (lambda: jnp.ravel_multi_index((I8, I32), (3, 4), mode="clip"), "int32"),
    (lambda: jnp.append(I32, 1.5), ("float32", "float64")),
    (lambda: jnp.cross(I32, I8), "int32"),
    (lambda: jnp.take(F16, np.int8([0])), "float16"),
    (lambda: jnp.delete(I8, 0), "int8"),
    (lambda: jnp.insert(I8, 0, 2.7), "int8"),
    (lambda: jnp.resize(I8, 4), "int8"),
    (lambda: jnp.fill_diagonal(np.zeros((2, 2), np.int8), 2.7, inplace=False), "int8"),
    (lambda: jnp.put_along_axis(I8, np.int32([1]), 2.7, 0, inplace=False), "int8"),
    (lambda: jnp.diagflat(I8), "int8"),
    (lambda: jnp.block([I8, F16]), "float16"),
    (lambda: jnp.block([I8, 2.5]), ("float32", "float64")),
    (lambda: jnp.column_stack((I8, U8)), "int16"),
    (lambda: jnp.mgrid[0:3, 0:2], ("int32", "int64")),
    (lambda: jnp.mgrid[0:1:3j], ("float32", "float64")),
    (lambda: jnp.ogrid[0:3, 0:2][1], ("int32", "int64")),
    (lambda: jnp.r_[F32, 0, I32], "float32"),
    (lambda: jnp.r_[0:4, 7], ("int32", "int64")),
]


def _check_dtypes(x64):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # np.ones is float64, converted
        check_dtype_table(DTYPES, x64)


def test_dtypes_as_jax():
    _check_dtypes(False)


def test_dtypes_as_jax_x64(x64):
    _check_dtypes(True)


def test_gradients(x64):
    r = np.random.default_rng(1)
    a, b = r.standard_normal((3, 4)), r.standard_normal((3, 4))
    check_grads(lambda x, y: jnp.cross(x, y), (a[:, :3], b[:, 1:]))
    check_grads(lambda x, y: jnp.cross(x, y, axisa=0, axisc=0), (a[:2, :3], b[:, 1:]))
    check_grads(lambda x, y: jnp.cross(x, y), (a[:, :2], b[:, 1:]))
    check_grads(lambda x: jnp.rot90(x) * 2 + jnp.fliplr(x).T + jnp.flipud(x).T, (a,))
    check_grads(lambda x: jnp.rollaxis(x[None], 2) * jnp.resize(x, (4, 1, 3)), (a,))
    check_grads(lambda x, y: jnp.append(x, y[0] * 2), (a, b))
    check_grads(lambda x, y: jnp.column_stack((x[0], y[0])) + jnp.dstack((x[:2], y[:2]))[0],
                (a, b))
    check_grads(lambda x: jnp.hsplit(x, 2)[1][1:] * jnp.vsplit(x, [1])[1][:, 2:], (a,))
    check_grads(lambda x: jnp.take(x, np.array([0, 3, -1, 5]), axis=1, mode="clip")
                + jnp.take(x, np.array([[0, 2, 1]]), axis=0)[0], (a,))
    check_grads(lambda x: jnp.take(x, np.array([0, 17, -1]), fill_value=0.0), (a,))
    check_grads(lambda x, y: jnp.block([[x, y], [y, x]]), (a, b))
    check_grads(lambda x: jnp.diagflat(x[:2], 1), (a,))
    check_grads(lambda x, y: jnp.fill_diagonal(x, y[0, :2], inplace=False), (a, b))
    check_grads(lambda x: jnp.delete(x, 1, axis=1) * jnp.delete(x, np.array([0, 2]), 1)[:, :1],
                (a,))
    check_grads(lambda x, y: jnp.insert(x, np.array([1, 1, 4]), y[:, :3], axis=1), (a, b))
    check_grads(lambda x, y: jnp.insert(x, 2, y[0]), (a, b))
    check_grads(lambda x, y: jnp.put_along_axis(x, np.array([[1], [0], [3]]), y[:, :1], axis=1,
                                                inplace=False), (a, b))
    check_grads(lambda x, y: jnp.logspace(x[0], y[0], 4, base=2.0), (a, b))
    check_grads(lambda x, y: jnp.geomspace(x, y, 3), (np.abs(a[0]) + 1, np.abs(b[0]) + 1))
    check_grads(lambda x: jnp.vander(x, 4), (a[0],))
    check_grads(lambda x: x[jnp.tril_indices(3, 0, 4)] * x[jnp.triu_indices_from(x, 1)].sum()
                + x[jnp.diag_indices_from(x[:, :3])].sum(), (a,))


def test_vmap():
    np.testing.assert_allclose(astjax.vmap(jnp.cross)(V3, W3), np.cross(V3, W3), rtol=1e-6)
    i = np.int32([2, -1, 7])
    np.testing.assert_allclose(astjax.vmap(lambda r: jnp.take(r, i))(M),
                               np.stack([[r[2], r[-1], np.nan] for r in M]), rtol=1e-6)
    np.testing.assert_allclose(astjax.vmap(lambda m: jnp.rot90(jnp.delete(m, 1, axis=0)))(X),
                               np.stack([np.rot90(np.delete(m, 1, axis=0)) for m in X]))
    np.testing.assert_allclose(astjax.vmap(lambda r: jnp.insert(r, 2, r[0]))(M),
                               np.stack([np.insert(r, 2, r[0]) for r in M]))


def _several(a, b, i):
    return (jnp.cross(a[:3], b[:3]), jnp.take(a, i) + jnp.fliplr(jnp.vander(a[:2], 2))[0, 0]
            + jnp.hamming(i.shape[0]), jnp.delete(a, 1), jnp.append(a, b))


def test_numba(numba_backend):
    a, b, i = np.float32([1, 2, 3, 4]), np.float32([4, 5, 6, 7]), np.int32([0, 5, -1])
    jitted = astjax.jit(_several)
    cross, taken, deleted, appended = jitted(a, b, i)
    (compiled,) = jitted.cache.values()
    assert compiled.backend == "numba", compiled.fallback_reason
    np.testing.assert_allclose(cross, np.cross(a[:3], b[:3]))
    np.testing.assert_allclose(taken, np.float32([1, NAN, 4]) + 1 + np.hamming(3), rtol=1e-6)
    np.testing.assert_allclose(deleted, np.delete(a, 1))
    np.testing.assert_allclose(appended, np.append(a, b))


def _meshes(a, b, c):
    return (jnp.meshgrid(a, b, c), jnp.meshgrid(a, b, c, indexing="ij"),
            jnp.meshgrid(a, b, c, sparse=True), jnp.meshgrid(a, b, c, sparse=True, indexing="ij"),
            jnp.meshgrid(b))


def test_meshgrid_and_ix():
    a, b, c = F32, I32[:2], F32[:1]
    want = (np.meshgrid(a, b, c), np.meshgrid(a, b, c, indexing="ij"),
            np.meshgrid(a, b, c, sparse=True), np.meshgrid(a, b, c, sparse=True, indexing="ij"),
            np.meshgrid(b))
    for got in (_meshes(a, b, c), astjax.jit(_meshes)(a, b, c)):
        for gs, ws in zip(got, want):
            assert isinstance(gs, list) and len(gs) == len(ws)
            for g, w in zip(gs, ws):
                np.testing.assert_array_equal(g, w)
                assert np.asarray(g).dtype == w.dtype
    assert jnp.meshgrid() == []
    i, j = np.int32([0, 2]), np.int32([1, 0, 3])
    for got in (jnp.ix_(i, j), astjax.jit(jnp.ix_)(i, j)):
        assert len(got) == 2
        for g, w in zip(got, np.ix_(i, j)):
            np.testing.assert_array_equal(g, w)
    np.testing.assert_array_equal(astjax.jit(lambda m, i, j: m[jnp.ix_(i, j)])(M, i, j),
                                  M[np.ix_(i, j)])


def _grids_times(x):
    yy, xx = jnp.mgrid[0:1:3j, 0:2]
    rows, cols = jnp.ogrid[0:3, 0:2]
    return yy * x + xx + rows * cols, jnp.c_[(1.0, 2.0), (3.0, 4.0)] * x + jnp.r_[1.0, 2.0]


def test_index_helpers_with_constant_indices_in_compiled_code():
    # mgrid, ogrid, r_, c_ of constants are computed while the code is generated (they
    # were "cannot index static <..._Grid object>")
    x = np.float32(2.0)
    yy, xx = np.mgrid[0:1:3j, 0:2]
    rows, cols = np.ogrid[0:3, 0:2]
    want = (yy * x + xx + rows * cols, np.c_[(1.0, 2.0), (3.0, 4.0)] * x + np.r_[1.0, 2.0])
    for got, w in zip(astjax.jit(_grids_times)(x), want):
        np.testing.assert_allclose(got, w, rtol=1e-6)
    np.testing.assert_allclose(astjax.grad(lambda x: jnp.sum(_grids_times(x)[0]))(x),
                               np.sum(yy), rtol=1e-6)


def _concat_run_time(x, i):
    return (jnp.r_[x, 0, x * 2, 1:3], jnp.c_[x, jnp.sin(x)], jnp.r_["0,2", x, i],
            jnp.r_["-1,2,0", x, x], jnp.r_["r", x, 1.5], jnp.r_[i, 0:1:3j], jnp.r_[i, 7])


def test_r_and_c_of_run_time_arrays_in_compiled_code():
    # JAX 0.10.2's values (they were "cannot index static <..._Concat object>")
    x, i = np.float32([0.5, -1.0, 2.0]), np.int32([1, 2, 3])
    s = np.sin(x)
    want = (np.float32([0.5, -1, 2, 0, 1, -2, 4, 1, 2]), np.stack([x, s], 1),
            np.float32([[0.5, -1, 2], [1, 2, 3]]), np.float32([[0.5, 0.5], [-1, -1], [2, 2]]),
            np.float32([[0.5, -1, 2, 1.5]]), np.float32([1, 2, 3, 0, 0.5, 1]),
            np.int32([1, 2, 3, 7]))
    for got, w in zip(astjax.jit(_concat_run_time)(x, i), want):
        assert got.dtype == w.dtype and got.shape == w.shape
        np.testing.assert_allclose(got, w, rtol=1e-6)
    g = astjax.grad(lambda x: (jnp.c_[x, x * x] ** 2).sum())(x)
    np.testing.assert_allclose(g, 2 * x + 4 * x ** 3, rtol=1e-6)
    got = astjax.vmap(lambda r: jnp.r_[r, 0, r])(np.stack([x, 2 * x]))
    np.testing.assert_array_equal(got, [[0.5, -1, 2, 0, 0.5, -1, 2], [1, -2, 4, 0, 1, -2, 4]])
    got = astjax.jit(lambda i: jnp.r_[i, [5, 6]])(i)  # a list item (JAX's value)
    assert got.dtype == np.int32 and got.tolist() == [1, 2, 3, 5, 6]
    with pytest.raises(TypeError, match="slice in this index needs constant bounds"):
        astjax.jit(lambda x, n: jnp.r_[x, 0:n])(x, 2)


def test_r_and_c_of_run_time_arrays_on_numba(numba_backend):
    x = np.float32([0.5, -1.0, 2.0])
    jitted = astjax.jit(lambda x: (jnp.r_[x, 0, 1:3], jnp.c_[x, x]))
    got = jitted(x)
    (compiled,) = jitted.cache.values()
    assert compiled.backend == "numba", compiled.fallback_reason
    np.testing.assert_array_equal(got[0], [0.5, -1, 2, 0, 1, 2])
    np.testing.assert_array_equal(got[1], np.stack([x, x], 1))


def test_index_helpers_eagerly():
    # (in compiled code, mgrid and ogrid take constants only)
    np.testing.assert_array_equal(jnp.mgrid[0:3, 0:2], np.mgrid[0:3, 0:2])
    np.testing.assert_allclose(jnp.mgrid[0:1:5j], np.mgrid[0:1:5j])
    for g, w in zip(jnp.ogrid[0:3, 1:4:2], np.ogrid[0:3, 1:4:2]):
        np.testing.assert_array_equal(g, w)
    np.testing.assert_array_equal(jnp.r_[F32, 0, I32], np.r_[F32, 0, I32])
    np.testing.assert_array_equal(jnp.r_["0,2", F32, F32], np.r_["0,2", F32, F32])
    np.testing.assert_array_equal(jnp.c_[F32, I32], np.c_[F32, I32])
    assert jnp.s_[1:2, ...] == (slice(1, 2), Ellipsis)
    assert jnp.index_exp[3] == (3,)
    # s_ is a constant in compiled code too
    np.testing.assert_array_equal(astjax.jit(lambda x: x[jnp.s_[1:, ::2]])(M), M[1:, ::2])
    # trim_zeros: the result's size depends on the values
    z = np.float32([0, 0, 1, 0, 2, 0])
    np.testing.assert_array_equal(jnp.trim_zeros(z), np.trim_zeros(z))
    np.testing.assert_array_equal(jnp.trim_zeros(z, "b"), np.trim_zeros(z, "b"))
    np.testing.assert_array_equal(jnp.trim_zeros(np.zeros(3)), np.zeros(0))
    z2 = np.pad(np.ones((2, 2), np.float32), ((1, 0), (0, 2)))
    np.testing.assert_array_equal(jnp.trim_zeros(z2, axis=1), np.ones((3, 2)) * (z2[:, :2] != 0))


def _trim_in_jit(x):
    return jnp.trim_zeros(x)  # MARK trim


def _fill_inplace(x):
    return jnp.fill_diagonal(x, 1.0)  # MARK fill


def _put_inplace(x):
    return jnp.put_along_axis(x, np.int32([[0]]), 1.0, 1)  # MARK put


def _ravel_raise(x):
    return jnp.ravel_multi_index((x, x), (3, 4))  # MARK ravel


def _rot_same_axes(x):
    return jnp.rot90(x, axes=(1, -1))  # MARK rot


def _line(tag):
    with open(__file__) as f:
        for k, line in enumerate(f, 1):
            if f"MARK {tag}" in line and "def " not in line:
                return k
    raise AssertionError(tag)


@pytest.mark.parametrize("fn,arg,tag,cls,words", [
    (_trim_in_jit, F32, "trim", ValueError, "cannot be compiled"),
    (_fill_inplace, M, "fill", NotImplementedError, "inplace=False"),
    (_put_inplace, M, "put", ValueError, "Pass inplace=False"),
    (_ravel_raise, I32, "ravel", ValueError, "mode='wrap' or mode='clip'"),
    (_rot_same_axes, M, "rot", ValueError, "Axes must be different"),
])
def test_errors_name_the_users_line(fn, arg, tag, cls, words):
    with pytest.raises(cls, match=words) as info:
        astjax.jit(fn)(arg)
    assert f"test_ops_array_building.py:{_line(tag)}" in str(info.value)


def test_errors():
    with pytest.raises(NotImplementedError, match="inplace=False"):
        jnp.fill_diagonal(M, 1.0)
    with pytest.raises(NotImplementedError, match="wrap=True"):
        jnp.fill_diagonal(M, 1.0, wrap=True, inplace=False)
    with pytest.raises(ValueError, match="equal length"):
        jnp.fill_diagonal(X, 1.0, inplace=False)
    with pytest.raises(ValueError, match="inplace=False"):
        jnp.put_along_axis(M, np.int32([[0]]), 1.0, 1)
    with pytest.raises(ValueError, match="either 2 or 3"):
        jnp.cross(M, M)
    with pytest.raises(TypeError, match="bool"):
        jnp.cross(B[:3], B[:3])
    with pytest.raises(ValueError, match="ndim at least two"):
        jnp.rot90(F32)
    with pytest.raises(ValueError, match="at least 2"):
        jnp.fliplr(F32)
    with pytest.raises(ValueError, match="3 or more"):
        jnp.dsplit(M, 2)
    with pytest.raises(ValueError, match="Only 2-D"):
        jnp.tril_indices_from(X)
    with pytest.raises(ValueError, match="equal length"):
        jnp.diag_indices_from(M)
    with pytest.raises(ValueError, match="one-dimensional"):
        jnp.vander(M)
    with pytest.raises(NotImplementedError, match="'raise' mode"):
        jnp.take(F32, I32, mode="raise")
    with pytest.raises(NotImplementedError, match="'out' argument"):
        jnp.take(F32, I32, out=F32)
    with pytest.raises(ValueError, match="invalid entry"):
        jnp.ravel_multi_index((I32, I32), (3, 3))
    with pytest.raises(TypeError, match="scalar arguments"):
        jnp.delete(F32, [0, 1])
    with pytest.raises(ValueError, match="does not allow tuples"):
        jnp.block((F32, F32))
    with pytest.raises(ValueError, match="Mismatched list depths"):
        jnp.block([[F32], F32])
    with pytest.raises(ValueError, match="must be 1D"):
        jnp.meshgrid(M)
    with pytest.raises(NotImplementedError, match="Boolean"):
        jnp.ix_(B)
    with pytest.raises(ValueError, match="out of bounds"):
        astjax.jit(lambda a: jnp.rollaxis(a, 3))(X)
