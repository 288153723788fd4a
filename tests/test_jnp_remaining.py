"""The last jax.numpy functions: angle, choose, polyfit, roots, polydiv, sort_complex,
histogram2d, histogramdd, packbits, unpackbits, bitwise_count, place, put, mask_indices,
fromfunction, einsum_path (astjax/numpy/_polynomial_extra.py, _bits_extra.py,
_misc_extra.py), and the eager-only names NumPy lends jax.numpy (_numpy_names.py).
Values are JAX 0.10.2's, recorded from it, eagerly and under jit; gradients against finite
differences; vmap against per-example calls; one Numba program."""
import io

import numpy as np
import pytest

import astjax
import astjax.numpy as jnp
from astjax.test_util import check_grads

from .op_checks import check_dtype_table

Z = np.complex64([1 + 1j, -2 + 0.5j, -3j, -1 - 0j])
A = np.int32([[0, 1], [2, 1]])
CH = [np.float32([[1, 2], [3, 4]]), np.float32([10, 20]), np.float32(7)]
I3, C0, C1 = np.int32([3, -1, 5]), np.int32([1, 2, 3]), np.int32([4, 5, 6])
X = np.linspace(0, 1, 7).astype(np.float32)
Y = (2 * X ** 2 - X + 0.5 + np.float32([0.01, -0.02, 0.03, 0, -0.01, 0.02, -0.03])).astype(
    np.float32)
W = np.float32([1, 2, 1, 0.5, 1, 2, 1])
Y2 = np.stack([Y, 3 * X - 1], 1)
HX = np.float32([0.5118216, 0.9504637, 0.14415962, 0.94864947, 0.31183144, 0.42332646,
                 0.8277026, 0.40919915, 0.5495937, 0.027559113, 0.7535131, 0.53814334,
                 0.3297317, 0.7884287, 0.30319482, 0.4534979, 0.1340417, 0.40311298,
                 0.20345524, 0.26231334])
HY = np.float32([0.5007293, -0.4391825, -0.02961805, 0.9614744, 0.9233144, 0.4495799,
                 0.08245371, -0.4462176, -0.678696, 0.9398508, 0.03213717, -0.76826876,
                 0.2469795, 0.55336624, 0.2260066, 0.8345954, -0.9208143, 0.057178527,
                 -0.081328236, -0.8753008])
HW = np.float32([1.2826563, 1.7052656, 1.1858821, 0.5201949, 1.6797631, 1.0189917, 1.0217777,
                 1.5060604, 0.29584408, 1.6392535, 1.3665738, 1.5741938, 0.3832325,
                 1.6047283, 0.38264784, 0.16310523, 1.710454, 1.722567, 1.7530742,
                 0.94381946])
S3 = np.stack([HX, HY, HW], 1)
EX = np.float32([0.027559113, 0.4890114, 0.9504637])  # edges JAX gave
EY3 = np.float32([-0.9208143, -0.29338464, 0.3340449, 0.9614744])
BITS = np.array([[1, 0, 1, 1, 0, 0, 1, 0, 1, 1], [0, 1, 1, 1, 1, 1, 1, 1, 1, 0]], bool)
U = np.uint8([[2, 7], [23, 255]])
PA = np.arange(6, dtype=np.float32).reshape(2, 3)
PM = np.array([[True, False, True], [False, True, True]])
f32, i32, u8 = np.float32, np.int32, np.uint8

# (name, function, arguments, JAX 0.10.2's result)
CASES = [
    ("angle", lambda z: jnp.angle(z), (Z,), f32([0.7853982, 2.896614, -1.5707964, 3.1415927])),
    ("angle deg", lambda z: jnp.angle(z, deg=True), (Z,), f32([45, 165.96376, -90, 180])),
    ("angle real", lambda x: jnp.angle(x), (f32([-1.5, 2, 0, -0.0]),),
     f32([3.1415927, 0, 0, 3.1415927])),
    ("angle int", lambda x: jnp.angle(x), (i32([-1, 2]),), f32([3.1415927, 0])),
    ("angle float16 scalar", lambda x: jnp.angle(x), (np.float16(-1),), f32(3.1415927)),
    ("choose", lambda a, c0, c1, c2: jnp.choose(a, [c0, c1, c2], mode="clip"), (A, *CH),
     f32([[1, 20], [7, 20]])),
    ("choose wrap", lambda a, c0, c1: jnp.choose(a, (c0, c1), mode="wrap"), (I3, C0, C1),
     i32([4, 5, 6])),
    ("choose clip", lambda a, c0, c1: jnp.choose(a, [c0, c1], mode="clip"), (I3, C0, C1),
     i32([4, 2, 6])),
    ("choose weak scalar", lambda a, c0: jnp.choose(a, [c0, 2.5], mode="clip"),
     (i32([0, 1]), i32([1, 2])), f32([1, 2.5])),
    ("choose array", lambda a, c: jnp.choose(a, c, mode="clip"),
     (i32([1, 0]), i32([[1, 2], [3, 4]])),
     i32([3, 2])),
    ("polydiv", lambda u, v: jnp.polydiv(u, v), (f32([3, 5, 2, 1]), f32([2, 1])),
     (f32([1.5, 1.75, 0.125]), f32([0, 0, 0, 0.875]))),
    ("polydiv int", lambda u, v: jnp.polydiv(u, v), (i32([1, 0, -1]), i32([1, 1])),
     (f32([1, -1]), f32([0, 0, 0]))),
    ("polydiv short", lambda u, v: jnp.polydiv(u, v), (f32([1, 2]), f32([1, 2, 3])),
     (f32([0]), f32([1, 2]))),
    ("sort_complex", lambda z: jnp.sort_complex(z), (np.complex64([3 + 1j, 1 + 2j, 1 - 1j, 2]),),
     np.complex64([1 - 1j, 1 + 2j, 2, 3 + 1j])),
    ("sort_complex int", lambda x: jnp.sort_complex(x), (i32([[5, 3, 4], [6, 9, 2]]),),
     np.complex64([[3, 4, 5], [2, 6, 9]])),
    ("histogram2d", lambda x, y: jnp.histogram2d(x, y, bins=3), (HX, HY),
     (i32([[2, 4, 2], [3, 1, 3], [1, 2, 2]]), f32([0.027559113, 0.335194, 0.6428289, 0.9504637]),
      EY3)),
    ("histogram2d bins pair", lambda x, y, e: jnp.histogram2d(x, y, bins=[2, e]),
     (HX, HY, f32([-1, 0, 0.5, 1])), (i32([[5, 4, 3], [3, 2, 3]]), EX, f32([-1, 0, 0.5, 1]))),
    ("histogram2d range weights",
     lambda x, y, w: jnp.histogram2d(x, y, bins=2, range=[(0, 0.5), (-1, 1)], weights=w),
     (HX, HY, HW), (f32([[4.6494102, 1.6392535], [2.44988, 5.3503075]]), f32([0, 0.25, 0.5]),
                    f32([-1, 0, 1]))),
    ("histogram2d density", lambda x, y: jnp.histogram2d(x, y, bins=(2, 3), density=True),
     (HX, HY), (f32([[0.5180831, 0.8634719, 0.6907776], [0.5180831, 0.34538877, 0.51808316]]),
                EX, EY3)),
    ("histogramdd", lambda s: jnp.histogramdd(s, bins=(2, 3, 2)), (S3,),
     (i32([[[1, 2], [2, 3], [1, 3]], [[1, 2], [0, 2], [1, 2]]]),
      [EX, EY3, f32([0.16310523, 0.9580897, 1.7530742])])),
    ("histogramdd weights density",
     lambda s, w: jnp.histogramdd(s, bins=[2, 2], weights=w, density=True), (S3[:, :2], HW),
     (f32([[0.69679046, 0.6860207], [0.3509136, 0.56886667]]),
      [EX, f32([-0.9208143, 0.020330071, 0.9614744])])),
    ("packbits", lambda b: jnp.packbits(b), (BITS,), u8([178, 223, 224])),
    ("packbits axis", lambda b: jnp.packbits(b, axis=1), (BITS,), u8([[178, 192], [127, 128]])),
    ("packbits little", lambda b: jnp.packbits(b, axis=0, bitorder="little"), (BITS,),
     u8([[1, 2, 3, 3, 2, 2, 3, 2, 3, 1]])),
    ("packbits int", lambda x: jnp.packbits(x), (i32([0, 2, -1, 0, 5]),), u8([104])),
    ("unpackbits", lambda u: jnp.unpackbits(u), (U,),
     u8([0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1, 1, 1, 0, 0, 0, 1, 0, 1, 1, 1] + [1] * 8)),
    ("unpackbits count", lambda u: jnp.unpackbits(u, axis=0, count=5), (U,),
     np.zeros((5, 2), np.uint8)),
    ("unpackbits count past", lambda u: jnp.unpackbits(u, axis=1, count=20), (U,),
     u8([[0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1, 1, 1, 0, 0, 0, 0],
         [0, 0, 0, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0]])),
    ("unpackbits negative count", lambda u: jnp.unpackbits(u, count=-3), (U,),
     u8([0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1, 1, 1, 0, 0, 0, 1, 0, 1, 1, 1, 1, 1, 1, 1,
         1])),
    ("unpackbits little", lambda u: jnp.unpackbits(u, axis=1, bitorder="little"), (U,),
     u8([[0, 1, 0, 0, 0, 0, 0, 0, 1, 1, 1, 0, 0, 0, 0, 0],
         [1, 1, 1, 0, 1, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1]])),
    ("bitwise_count int8", lambda x: jnp.bitwise_count(x), (np.int8([-128, -1, 0, 7, 127]),),
     u8([1, 1, 0, 3, 7])),
    ("bitwise_count uint16", lambda x: jnp.bitwise_count(x), (np.uint16([65535, 256]),),
     u8([16, 1])),
    ("bitwise_count int32", lambda x: jnp.bitwise_count(x), (i32([-2147483648, -5, 1023]),),
     u8([1, 2, 10])),
    ("bitwise_count bool", lambda x: jnp.bitwise_count(x), (np.array([True, False]),),
     u8([1, 0])),
    ("place", lambda a, m, v: jnp.place(a, m, v, inplace=False), (PA, PM, f32([10, 20])),
     f32([[10, 1, 20], [3, 10, 20]])),
    ("place int values", lambda a, m, v: jnp.place(a, m, v, inplace=False), (PA, PM, i32([7])),
     f32([[7, 1, 7], [3, 7, 7]])),
    ("put", lambda a, i, v: jnp.put(a, i, v, inplace=False), (PA, i32([0, 5, 7]), f32([9, 8])),
     f32([[9, 1, 2], [3, 4, 9]])),
    ("put clip", lambda a, i: jnp.put(a, i, 1.5, mode="clip", inplace=False),
     (PA, i32([[0], [7]])), f32([[1.5, 1, 2], [3, 4, 1.5]])),
    ("put wrap", lambda a, i, v: jnp.put(a, i, v, mode="wrap", inplace=False),
     (PA, i32([-1, 7]), f32([3, 4])), f32([[0, 4, 2], [3, 4, 3]])),
    ("mask_indices", lambda: jnp.mask_indices(3, jnp.triu, 1, size=4), (),
     (i32([0, 0, 1, 0]), i32([1, 2, 2, 0]))),
    ("fromfunction", lambda: jnp.fromfunction(lambda i, j: i * 10 + j, (2, 3)), (),
     f32([[0, 1, 2], [10, 11, 12]])),
    ("fromfunction int", lambda: jnp.fromfunction(lambda i, j: i - j, (2, 3), dtype=jnp.int32),
     (), i32([[0, -1, -2], [1, 0, -1]])),
]


def _same(got, want, rtol=2e-6):
    if isinstance(want, (tuple, list)):
        assert type(got) is type(want) and len(got) == len(want)
        for g, w in zip(got, want):
            _same(g, w, rtol)
        return
    got = np.asarray(got)
    assert got.dtype == np.asarray(want).dtype, (got.dtype, np.asarray(want).dtype)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=1e-6)


@pytest.mark.parametrize("name,fn,args,want", CASES, ids=[c[0] for c in CASES])
def test_as_jax_eagerly_and_jitted(name, fn, args, want):
    _same(fn(*args), want)
    _same(astjax.jit(fn)(*args), want)


def test_eager_only_forms_as_jax():
    _same(jnp.choose(A, CH), f32([[1, 20], [7, 20]]))  # mode='raise', checked
    _same(jnp.polydiv(f32([3, 5, 2, 1]), f32([2, 1]), trim_leading_zeros=True),
          (f32([1.5, 1.75, 0.125]), f32([0.875])))
    _same(jnp.mask_indices(3, jnp.tril, -1), (i32([1, 2, 2]), i32([0, 0, 1])))
    _same(jnp.histogramdd(S3, bins=2)[0], i32([[[1, 4], [3, 4]], [[1, 2], [1, 4]]]))


def _sorted(z):
    z = np.asarray(z)
    return z[np.lexsort((z.imag, z.real))]


ROOTS = [  # JAX's roots, in LAPACK's order (the companion matrix's eigenvalues, as astjax's)
    (f32([1, -6, 11, -6]), {}, np.complex64([3, 2, 1])),
    (f32([0, 1, 2]), {}, np.complex64([-2])),
    (f32([0, 1, 2]), {"strip_zeros": False}, np.complex64([-2, complex(np.nan, np.nan)])),
    (f32([1, 0, 1]), {}, np.complex64([1j, -1j])),
    (i32([2, -2]), {}, np.complex64([1])),
    (f32([3]), {}, np.zeros(0, np.complex64)),
    (f32([0, 0, 0]), {"strip_zeros": False}, np.full(2, complex(np.nan, np.nan), np.complex64)),
    (f32([1, -1, 0]), {}, np.complex64([0, 1])),
]


def _roots_kept(p):
    return jnp.roots(p, strip_zeros=False)


@pytest.mark.parametrize("p,kw,want", ROOTS)
def test_roots_as_jax(p, kw, want):
    got = jnp.roots(p, **kw)
    assert got.dtype == np.complex64
    np.testing.assert_allclose(got, want, atol=2e-5)
    if kw:
        np.testing.assert_allclose(astjax.jit(_roots_kept)(p), want, atol=2e-5)


def test_poly_of_a_square_matrix_takes_its_eigenvalues_as_jax():
    m = f32([[1, 2], [3, 4]])
    for poly in (jnp.poly, astjax.jit(jnp.poly)):
        got = poly(m)
        assert got.dtype == np.complex64
        np.testing.assert_allclose(got, [1, -5, -2], atol=1e-5)  # JAX 0.10.2's
    for bad in (np.ones((2, 3)), np.ones((0, 0)), np.ones((2, 2, 2))):
        with pytest.raises(ValueError, match="non-empty square 2d"):
            jnp.poly(bad)


def test_roots_of_higher_degree_and_multiple_roots_against_numpy():
    p = np.poly(np.float64([-3, -1.5, 0.25, 1, 2, 4.5, 7])).astype(np.float32)
    np.testing.assert_allclose(_sorted(jnp.roots(p)), _sorted(np.roots(p)), atol=1e-4)
    # a double root: about sqrt(eps) accurate, as eigenvalues are
    p = np.poly(np.float64([1, 1, -2])).astype(np.float32)
    np.testing.assert_allclose(_sorted(jnp.roots(p)), _sorted(np.roots(p)), atol=2e-3)


POLYFIT = [
    ("plain", lambda x, y: jnp.polyfit(x, y, 2), (X, Y), f32([1.9314278, -0.9485705, 0.4990474])),
    ("weights", lambda x, y, w: jnp.polyfit(x, y, 2, w=w), (X, Y, W),
     f32([1.9191746, -0.90071315, 0.48009345])),
    ("2-D y", lambda x, y: jnp.polyfit(x, y, 1), (X, Y2),
     f32([[0.9828571, 3.0], [0.23079373, -0.99999994]])),
    ("cov", lambda x, y: jnp.polyfit(x, y, 2, cov=True), (X, Y),
     (f32([1.9314278, -0.9485705, 0.4990474]),
      f32([[0.008742867, -0.008742867, 0.001214287], [-0.008742867, 0.009471441, -0.001578573],
           [0.001214287, -0.001578573, 0.000431746]]))),
    ("cov unscaled", lambda x, y: jnp.polyfit(x, y, 1, cov="unscaled"), (X, Y),
     (f32([0.9828571, 0.23079371]), f32([[1.2857143, -0.6428571], [-0.6428571, 0.46428567]]))),
    ("cov 2-D y", lambda x, y: jnp.polyfit(x, y, 1, cov=True), (X, Y2),
     (f32([[0.9828571, 3.0], [0.23079373, -0.99999994]]),
      f32([[[6.2756456e-02, 0], [-3.1378224e-02, 0]], [[-3.1378224e-02, 0], [2.2662053e-02, 0]]]))),
]


POLYFIT += [  # JAX 0.10.2's (p, resids, rank, s, rcond) and cuts by rcond
    ("full", lambda x, y: jnp.polyfit(x, y, 2, full=True), (X, Y),
     (f32([1.9314278, -0.9485705, 0.4990474]), f32([0.002266668]), 3,
      f32([1.6388184, 0.5478889, 0.11870911]), f32(8.34465e-07))),
    ("full 2-D y", lambda x, y: jnp.polyfit(x, y, 1, full=True), (X, Y2),
     (f32([[0.9828571, 3.0], [0.23079373, -0.99999994]]), f32([0.24405289, 0]), 2,
      f32([1.3535326, 0.40981671]), f32(8.34465e-07))),
    ("rcond cuts", lambda x, y: jnp.polyfit(x, y, 4, rcond=0.01), (X, Y),
     f32([-0.64454484, 1.066403, 1.4694709, -0.92083245, 0.5025956])),
    ("rcond < 0 is eps", lambda x, y: jnp.polyfit(x, y, 4, rcond=-1.0, full=True), (X, Y),
     (f32([-0.19636802, 0.15273932, 2.0490823, -1.0359294, 0.5049350]), f32([0.0019896142]), 5,
      f32([2.1024482, 0.72171348, 0.23789604, 0.047114167, 0.0051651974]), f32(-1.0))),
    ("fewer points: least norm", lambda x, y: jnp.polyfit(x[:2], y[:2], 2, full=True), (X, Y),
     (f32([-2.539999, -0.42333317, 0.51]), f32([0]), 2, f32([1.6180336, 0.61803395]),
      f32(2.3841858e-07))),
]


@pytest.mark.parametrize("name,fn,args,want", POLYFIT, ids=[c[0] for c in POLYFIT])
def test_polyfit_as_jax(name, fn, args, want):
    for f in (fn, astjax.jit(fn)):
        got = f(*args)
        for g, w in zip(got if isinstance(want, tuple) else (got,),
                        want if isinstance(want, tuple) else (want,)):
            assert np.asarray(g).dtype == (np.int32 if isinstance(w, int) else np.float32)
            # degree 4 in float32 (condition ~400): LAPACK builds differ in the last digits
            np.testing.assert_allclose(g, w, rtol=2e-4 if name.startswith("rcond <") else 2e-5,
                                       atol=1e-6)


@pytest.mark.filterwarnings("ignore::numpy.exceptions.RankWarning")  # the fit of 2 points
def test_polyfit_full_against_numpy(x64):
    x, y = X.astype(np.float64), np.stack([Y, X ** 3], 1).astype(np.float64)
    for args in ((x, y, 3, None), (x, y[:, 0], 2, 1e-3), (x[:2], y[:2], 2, None)):
        want = np.polyfit(*args, full=True)
        for f in (jnp.polyfit, astjax.jit(jnp.polyfit, static_argnums=(2, 3, 4))):
            got = f(*args, True)
            # NumPy gives no residuals when the rank is short (JAX: always)
            for i in (0, 1, 2, 3) if want[1].size else (0, 2, 3):
                np.testing.assert_allclose(got[i], want[i], rtol=1e-10, atol=1e-12)
            assert float(got[4]) == want[4]


def _err(fn, cls, match):
    with pytest.raises(cls, match=match) as info:
        fn()
    return info


def test_errors_as_jax():
    inplace = (r"jax.numpy.put cannot modify arrays in-place, because JAX arrays are "
               r"immutable. Pass inplace=False to instead return an updated array.")
    _err(lambda: jnp.put(PA, i32([0]), f32([1])), ValueError, inplace)
    _err(lambda: jnp.place(PA, PM, f32([1])), ValueError, inplace.replace("put", "place"))
    _err(lambda: jnp.put(PA, i32([0]), f32([1]), mode="raise", inplace=False),
         NotImplementedError, "The 'raise' mode to jnp.put is not supported.")
    _err(lambda: jnp.put(PA, i32([0]), f32([1]), mode="x", inplace=False), ValueError,
         "mode should be one of 'wrap' or 'clip'; got mode='x'")
    _err(lambda: jnp.place(PA, PM[0], f32([1]), inplace=False), ValueError,
         "place: arr and mask must be the same size")
    _err(lambda: jnp.place(PA, PM, f32([]), inplace=False), ValueError,
         "Cannot place values from an empty array")
    _err(lambda: jnp.choose(i32([0, 3]), [C0[:2], C1[:2]]), ValueError,
         "invalid entry in choice array")
    _err(lambda: jnp.choose(f32([0]), [C0]), ValueError, "`a` array must be integer typed")
    _err(lambda: jnp.packbits(f32([1])), TypeError,
         "Expected an input array of integer or boolean data type")
    _err(lambda: jnp.packbits(BITS, bitorder="x"), ValueError,
         "'order' must be either 'little' or 'big'")
    _err(lambda: jnp.unpackbits(i32([1])), TypeError,
         "Expected an input array of unsigned byte data type")
    _err(lambda: jnp.bitwise_count(f32([1])), TypeError,
         "population_count does not accept dtype float32. Accepted dtypes are subtypes of "
         "integer.")
    for f in (jnp.polyfit, astjax.jit(jnp.polyfit, static_argnums=(2,),
                                      static_argnames=("cov",))):  # sizes: at run time
        _err(lambda: f(X[:3], Y[:3], 2, cov=True), ValueError,
             "the number of data points must exceed order to scale the covariance matrix")
        _err(lambda: f(X[:0], Y[:0], 1), TypeError, "expected non-empty vector for x")
        _err(lambda: f(X, Y[:3], 1), TypeError, "expected x and y to have same length")
        _err(lambda: f(X, Y, 1, w=W[:3]), TypeError, "expected w and y to have the same length")
    _err(lambda: jnp.fromfile("x"), NotImplementedError, r"jnp.fromfile\(\) is not implemented")
    _err(lambda: jnp.fromiter([1]), NotImplementedError, r"jnp.fromiter\(\) is not implemented")


def _roots_jitted(p):
    return jnp.roots(p)  # strip_zeros=True needs the values


def _choose_jitted(a):
    return jnp.choose(a, [a, a])  # mode='raise' needs the values


def _put_jitted(a):
    return jnp.put(a, i32([0]), f32([1]))  # inplace=True


def _einsum_path_jitted(a):
    return jnp.einsum_path("ij,jk", a, a)


@pytest.mark.parametrize("fn,arg,cls,match", [
    (_roots_jitted, f32([1, 2]), ValueError, "pass strip_zeros=False"),
    (_choose_jitted, i32([0, 1]), ValueError, "Use mode='wrap' or mode='clip' instead"),
    (_put_jitted, PA, ValueError, "Pass inplace=False"),
    (_einsum_path_jitted, PA, NotImplementedError, "outside jit"),
])
def test_errors_in_compiled_code_name_the_users_line(fn, arg, cls, match):
    info = _err(lambda: astjax.jit(fn)(arg), cls, match)
    assert f"test_jnp_remaining.py:{fn.__code__.co_firstlineno + 1}" in str(info.value)


def test_einsum_path_as_jax():
    ops = (np.ones((2, 3)), np.ones((3, 100)), np.ones((100, 5)))
    path, info = jnp.einsum_path("ij,jk,kl", *ops, optimize="optimal")
    assert path == [(1, 2), (0, 1)] and "Complete contraction:  ij,jk,kl->il" in info
    assert jnp.einsum_path("ij,jk,kl", *ops)[0] == [(1, 2), (0, 1)]
    assert jnp.einsum_path("ij,jk,kl", *ops, optimize=False)[0] == [(0, 1), (0, 1)]
    assert jnp.einsum_path("ij,jk,kl,lm", *ops, np.ones((5, 2)), optimize="greedy")[0] == [
        (1, 2), (1, 2), (0, 1)]


def test_numpy_names_as_jax(tmp_path):
    assert jnp.iterable([1]) and not jnp.iterable(3)
    assert jnp.issubdtype(jnp.int8, jnp.signedinteger)  # as in JAX (issubclass: False)
    assert jnp.issubdtype(jnp.uint8, jnp.unsignedinteger)
    assert not jnp.issubdtype(jnp.uint8, jnp.signedinteger)
    assert jnp.issubdtype(jnp.complex64, jnp.complexfloating) and jnp.object_ is np.object_
    assert jnp.generic is np.generic and jnp.character is np.character
    assert jnp.flexible is np.flexible and jnp.ComplexWarning is np.exceptions.ComplexWarning
    x = jnp.asarray(f32([1, 2]))
    assert jnp.array_repr(x) == "Array([1., 2.], dtype=float32)" and jnp.array_str(x) == "[1. 2.]"
    with jnp.printoptions(precision=2):
        assert jnp.get_printoptions()["precision"] == 2
    f = io.BytesIO()
    jnp.save(f, x)
    f.seek(0)
    loaded = jnp.load(f)
    assert isinstance(loaded, astjax.Array) and loaded.dtype == np.float32
    np.testing.assert_array_equal(loaded, [1, 2])
    jnp.savez(tmp_path / "a.npz", x=x)
    assert type(jnp.load(tmp_path / "a.npz")["x"]) is np.ndarray  # .npz: NumPy's, as JAX
    got = jnp.frombuffer(b"\x01\x00\x00\x00\x02\x00\x00\x00", dtype=np.int32)
    assert isinstance(got, astjax.Array) and got.tolist() == [1, 2]
    got = jnp.fromstring("1 2", dtype=np.int32, sep=" ")
    assert isinstance(got, astjax.Array) and got.tolist() == [1, 2]
    got = jnp.from_dlpack(np.arange(3, dtype=np.int32))
    assert isinstance(got, astjax.Array) and got.dtype == np.int32 and got.tolist() == [0, 1, 2]


X64 = np.float64([0.3, -1.2, 2.0])
GRADS = [
    ("angle", lambda x, y: jnp.angle(x + 1j * y), (X64, X64[::-1] + 0.5)),
    ("polyfit", lambda x, y: jnp.polyfit(x, y, 2, w=x + 1), (X.astype(np.float64),
                                                             Y.astype(np.float64))),
    ("polyfit cov", lambda y: jnp.polyfit(X.astype(np.float64), y, 1, cov=True)[1],
     (Y.astype(np.float64),)),
    ("roots", lambda p: jnp.real(jnp.roots(p, strip_zeros=False)), (np.float64([1, -6, 11, -6]),)),
    ("complex roots", lambda p: jnp.imag(jnp.roots(p, strip_zeros=False)),
     (np.float64([1, 1, 1]),)),
    ("polydiv", lambda u, v: jnp.polydiv(u, v), (np.float64([3, 5, 2, 1]), np.float64([2, 1]))),
    ("choose", lambda c0, c1: jnp.choose(i32([0, 1, 1]), [c0, c1], mode="clip"), (X64, X64 * 2)),
    ("place", lambda a, v: jnp.place(a, np.array([True, False, True]), v, inplace=False),
     (X64, X64[:1])),
    ("put", lambda a, v: jnp.put(a, i32([2, 0]), v, inplace=False), (X64, X64[:2] * 3)),
    ("histogramdd weights",
     lambda w: jnp.histogramdd(np.float64([[0, 1], [0.5, 0.2], [1, 1]]), bins=(2, 2), weights=w,
                               density=True)[0], (X64 + 2,)),
    ("histogram2d weights",
     lambda w: jnp.histogram2d(X64, X64[::-1], bins=2, weights=w)[0], (X64 + 2,)),
    ("fromfunction", lambda s: jnp.fromfunction(lambda i, j: jnp.sin(i * s + j), (2, 3)),
     (np.float64(0.7),)),
    ("sort_complex", lambda x: jnp.real(jnp.sort_complex(x)), (X64,)),
]


@pytest.mark.parametrize("name,fn,args", GRADS, ids=[g[0] for g in GRADS])
def test_gradients(name, fn, args, x64):
    check_grads(fn, args, order=1, modes=("fwd", "rev"))
    if name in ("roots", "polyfit"):
        check_grads(astjax.jit(fn), args, order=1, modes=("rev",))


VMAPS = [
    ("angle", lambda z: jnp.angle(z), Z.reshape(2, 2)),
    ("polyfit", lambda y: jnp.polyfit(X, y, 1), np.stack([Y, 2 * Y])),
    ("roots", lambda p: jnp.roots(p, strip_zeros=False), f32([[1, -3, 2], [0, 1, 2]])),
    ("polydiv", lambda u: jnp.polydiv(u, f32([2, 1])), f32([[3, 5, 2, 1], [1, 1, 1, 1]])),
    ("packbits", lambda b: jnp.packbits(b), BITS),
    ("unpackbits", lambda u: jnp.unpackbits(u, count=10), U),
    ("bitwise_count", lambda x: jnp.bitwise_count(x), i32([[1, 255], [7, -8]])),
    ("choose", lambda a: jnp.choose(a, [f32([1, 2]), f32([3, 4])], mode="wrap"),
     i32([[0, 1], [1, 2]])),
    ("place", lambda a: jnp.place(a, PM[0], f32([9, 8]), inplace=False), PA),
    ("put", lambda i: jnp.put(PA, i, f32([9]), inplace=False), i32([[0], [4]])),
    ("histogramdd", lambda s: jnp.histogramdd(s, bins=(2, 2))[0], S3[:, :2].reshape(2, 10, 2)),
    ("sort_complex", lambda z: jnp.sort_complex(z), np.complex64([[3 + 1j, 1], [2, 1j]])),
]


@pytest.mark.parametrize("name,fn,xs", VMAPS, ids=[v[0] for v in VMAPS])
def test_vmap_as_per_example_calls(name, fn, xs):
    got = astjax.vmap(fn)(xs)
    want = [fn(x) for x in xs]
    if isinstance(got, tuple):
        for i, g in enumerate(got):
            np.testing.assert_allclose(g, np.stack([w[i] for w in want]), rtol=1e-6, atol=1e-6)
    elif name == "roots":
        np.testing.assert_allclose([_sorted(g) for g in got], [_sorted(w) for w in want],
                                   atol=1e-5)
    else:
        np.testing.assert_allclose(got, np.stack(want), rtol=1e-6, atol=1e-6)


DTYPES = [  # JAX 0.10.2's, without and with 64-bit types where they differ
    (lambda: jnp.angle(np.int8([1])), ("float32", "float64")),
    (lambda: jnp.angle(np.float16([1])), "float16"),
    (lambda: jnp.angle(np.float16(1)), ("float32", "float64")),
    (lambda: jnp.angle(np.float32(1)), ("float32", "float64")),
    (lambda: jnp.angle(np.complex64([1j])), "float32"),
    (lambda: jnp.angle(np.array([True])), ("float32", "float64")),
    (lambda: jnp.bitwise_count(np.int8([1])), "uint8"),
    (lambda: jnp.sort_complex(i32([1])), "complex64"),
    (lambda: jnp.sort_complex(np.float16([1])), "complex64"),
    (lambda: jnp.roots(i32([1, 2])), "complex64"),
    (lambda: jnp.polydiv(i32([1, 2]), i32([1]))[0], "float32"),
    (lambda: jnp.polyfit(f32([0.5, 2]), i32([1, 2]), 1), "float32"),
    (lambda: jnp.histogramdd(np.stack([f32([0.5, 2])] * 2, 1), bins=2)[0], ("int32", "int64")),
    (lambda: jnp.histogram2d(i32([1, 2]), i32([1, 2]), bins=2)[1], "float32"),
    (lambda: jnp.histogram2d(f32([1, 2]), f32([1, 2]), bins=2, weights=i32([1, 2]))[0],
     "float32"),
    (lambda: jnp.mask_indices(2, jnp.triu)[0], ("int32", "int64")),
    (lambda: jnp.fromfunction(lambda i: i, (2,)), ("float32", "float64")),
    (lambda: jnp.choose(i32([0, 1]), [np.int8([1, 2]), np.float16([1, 2])]), "float16"),
    (lambda: jnp.place(np.int8([1, 2]), np.array([True, False]), f32([1.5]), inplace=False),
     "int8"),
    (lambda: jnp.put(np.int8([1, 2]), i32([0]), f32([1.5]), inplace=False), "int8"),
]


@pytest.mark.parametrize("x64", [False, True])
def test_dtypes_as_jax(x64):
    check_dtype_table(DTYPES, x64)


def test_numpy_spellings_in_compiled_code_are_these():
    got = astjax.jit(lambda z, x: (np.angle(z), np.bitwise_count(x), np.sort_complex(x)))(
        Z, i32([3, 1]))
    _same(got, (f32([0.7853982, 2.896614, -1.5707964, 3.1415927]), u8([2, 1]),
                np.complex64([1, 3])))


def _small(z, x, a):
    return jnp.angle(z), jnp.bitwise_count(x), jnp.put(a, x, a[:1], mode="wrap", inplace=False)


def test_numba(numba_backend):
    jitted = astjax.jit(_small)
    args = (Z, i32([7, -1]), f32([1, 2, 3]))
    got = jitted(*args)
    (compiled,) = jitted.cache.values()
    assert compiled.backend == "numba", compiled.fallback_reason
    _same(got, (f32([0.7853982, 2.896614, -1.5707964, 3.1415927]), u8([3, 1]),
                f32([1, 1, 1])))


def _hypot(a, b):
    return jnp.sqrt(a * a + b * b)


HYPOT = jnp.frompyfunc(_hypot, 2, 1)
ADD = jnp.frompyfunc(lambda a, b: a + b, nin=2, nout=1, identity=0)
MUL = jnp.frompyfunc(lambda a, b: a * b, 2, 1)


def test_frompyfunc_as_jax():
    x = jnp.arange(4)
    m = i32([[1, 2, 3], [4, 5, 6]])
    assert repr(ADD) == "<jnp.ufunc '<lambda>'>" and ADD.nin == 2 and ADD.identity == 0
    assert isinstance(ADD, jnp.ufunc) and HYPOT == jnp.frompyfunc(_hypot, 2, 1)
    _same(ADD(x, 10), i32([10, 11, 12, 13]))
    _same(ADD.outer(x, x), np.add.outer(np.arange(4), np.arange(4)).astype(np.int32))
    _same(ADD.reduce(x), i32(6))
    _same(ADD.accumulate(x), i32([0, 1, 3, 6]))
    _same(ADD.at(x, 1, 10, inplace=False), i32([0, 11, 2, 3]))
    # JAX 0.10.2's values
    _same(ADD.reduce(m, where=m > 2), i32([4, 5, 9]))
    _same(ADD.reduce(m, axis=None, keepdims=True), i32([[21]]))
    _same(ADD.reduce(m, axis=1), i32([6, 15]))
    _same(ADD.accumulate(m, axis=1), i32([[1, 3, 6], [4, 9, 15]]))
    _same(ADD.at(jnp.ones(10, np.int32), i32([2, 5, 7, 2]), i32([10, 20, 30, 1]), inplace=False),
          i32([1, 1, 12, 1, 1, 21, 1, 31, 1, 1]))  # a repeated index applies twice
    _same(MUL.accumulate(f32([1.5, 2, 3])), f32([1.5, 3, 9]))
    _same(MUL.outer(f32([1, 2]), i32([1, 2, 3])), f32([[1, 2, 3], [2, 4, 6]]))
    assert MUL.reduce(np.int8([3, 4])).dtype == np.int8
    _err(lambda: ADD.at(x, 1, 10), NotImplementedError, "pass inplace=False")
    _err(lambda: MUL.reduce(f32([[1]]), where=np.array([[True]])), ValueError,
         "does not have an identity")


def _ufunc_methods_jitted(a):
    return ADD.reduce(a)


def test_frompyfunc_in_compiled_code():
    a, b = f32([3, 5]), f32([4, 12])
    _same(astjax.jit(lambda a, b: HYPOT(a, b) * 2)(a, b), f32([10, 26]))
    _same(astjax.grad(lambda a: jnp.sum(HYPOT(a, 4.0)))(a), f32([0.6, 0.7808688]))  # JAX's
    _same(astjax.vmap(HYPOT)(a, b), f32([5, 13]))
    info = _err(lambda: astjax.jit(_ufunc_methods_jitted)(a), NotImplementedError,
                r"reduce\(\) works only outside compiled code")
    line = _ufunc_methods_jitted.__code__.co_firstlineno + 1
    assert f"test_jnp_remaining.py:{line}" in str(info.value)
