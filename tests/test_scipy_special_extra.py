"""scipy.special functions ported from JAX 0.10.2's own algorithms (erfcx, wofz, dawsn,
fresnel, expi, exp1, expn, sici, spence, owens_t, bessel_jn, bernoulli, hyp1f1,
hyp2f1, sph_harm_y): values against SciPy in float64 and float32,
eagerly and under jit, over a range with its edges; JAX's values where JAX's differ from
SciPy's (literals from jax.scipy.special with 64-bit types on); derivatives against finite
differences and JAX's conventions; vmap; one small Numba program."""
import numpy as np
import pytest
import scipy.special as ss

import astjax
import astjax.numpy as jnp
import astjax.scipy.special as S
from astjax.test_util import check_grads

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

REAL = np.array([-np.inf, -30.0, -7.0, -5.0, -1.0, -0.3, -0.0, 0.0, 1e-300, 1e-5, 0.3, 1.0,
                 1.5, 2.0, 3.0, 3.3, 5.0, 6.3, 7.0, 10.0, 20.0, 26.0, 27.0, 40.0, 70.0, 800.0,
                 1e5, 1e300, np.inf, np.nan])
POSITIVE = REAL[~(REAL < 0.0)]
COMPLEX = np.array([0.0, 1 + 2j, -3 + 0.5j, 0.1 - 0.1j, 5j, -5j, 10 + 10j, -7 - 0.5j,
                    2.5 - 4j, 40 + 1j, -1e-3 + 1e-3j])



def _fresnel(x):
    """SciPy's, with JAX's 0.5 past x = 36974 in float32 (Cephes' fresnlf; SciPy:
    0.5 - cos / (pi x)) and at 1e300 (SciPy: NaN)."""
    big = np.abs(x) > (36974 if x.dtype == np.float32 else 1e200)
    return [np.where(big, np.sign(x) * 0.5, v) for v in ss.fresnel(x)]


# name, ours, SciPy's with JAX's values where they differ, sample
CASES = [
    ("erfcx", S.erfcx, ss.erfcx, REAL),
    ("dawsn", S.dawsn, ss.dawsn, REAL),
    ("fresnel_s", lambda x: S.fresnel(x)[0], lambda x: _fresnel(x)[0], REAL),
    ("fresnel_c", lambda x: S.fresnel(x)[1], lambda x: _fresnel(x)[1], REAL),
    # JAX: NaN at 0 and +-inf (SciPy: -inf, -inf, inf and -0 at -inf)
    ("expi", S.expi, lambda x: np.where((x == 0) | np.isinf(x), np.nan, ss.expi(x)), REAL),
    ("exp1", S.exp1, lambda x: np.where(x == np.inf, np.nan, ss.exp1(x)), REAL),  # JAX: NaN
    ("si", lambda x: S.sici(x)[0], lambda x: ss.sici(x)[0], REAL),
    ("ci", lambda x: S.sici(x)[1], lambda x: ss.sici(x)[1], REAL),
    ("spence", S.spence, ss.spence, REAL),
]


def _check(got, want, dtype):
    got = np.asarray(got)
    assert got.dtype == dtype
    # (float32: Ci(3.3), near a zero, is 1e-5 off SciPy's, as JAX's; atol takes it)
    rtol, atol = (2e-6, 1e-6) if dtype == np.float32 else (2e-14, 1e-300)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)


@pytest.mark.parametrize("name,f,ref,x", CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_values_against_scipy(x64, name, f, ref, x, dtype):
    x = x.astype(dtype)
    want = ref(x)
    _check(f(x), want, dtype)
    _check(astjax.jit(f)(x), want, dtype)


def test_expn_against_scipy(x64):
    n = np.array([0, 1, 2, 3, 5, 10, 50, 4999])[:, None]
    x = np.array([1e-5, 0.5, 1.0, 1.5, 3.0, 30.0, 800.0, np.nan])
    _check(S.expn(n, x), ss.expn(n, x), np.float64)
    _check(astjax.jit(S.expn)(n, x), ss.expn(n, x), np.float64)
    _check(S.expn(n.astype(np.float32), x.astype(np.float32)),
           ss.expn(n, x).astype(np.float32), np.float32)


def test_expn_jax_values(x64):
    # JAX's piecewise lets its last true condition win: 1 / n at x = 0 (SciPy: 1 / (n - 1)),
    # the expansion in n for n >= 5000 at x = 0 and below, the continued fraction above 1
    # for any n, NaN at inf; a non-integer n is NaN below 1 but at 0
    n = np.array([0.0, 1.0, 2.0, 3.0, 5000.0, 6000.0, -1.0, 2.5])[:, None]
    x = np.array([0.0, np.inf, -1.0, 2.0])
    want = [[np.inf, np.nan, np.nan, 0.06766764161830635],
            [np.inf, np.nan, np.nan, 0.048900510708061125],
            [0.5, np.nan, np.nan, 0.03753426182049047],
            [0.3333333333333333, np.nan, np.nan, 0.030133379797815916],
            [0.0002000400080016, np.nan, 0.0005438739370346421, 2.706164215396073e-05],
            [0.0001666944490748457, np.nan, 0.00045319805002164745, 2.255212059977337e-05],
            [np.inf, np.nan, np.nan, 0.10150146242745953],
            [0.4, np.nan, np.nan, 0.033468761488865524]]
    for f in (S.expn, astjax.jit(S.expn)):
        np.testing.assert_allclose(np.asarray(f(n, x)), want, rtol=2e-15)
    assert np.isnan(S.expn(2.5, 0.5))


@pytest.mark.parametrize("dtype", [np.complex128, np.complex64])
def test_wofz_and_complex_erfcx(x64, dtype):
    z = COMPLEX.astype(dtype)
    rtol = 1e-6 if dtype == np.complex64 else 1e-13
    for f in (S.wofz, astjax.jit(S.wofz)):
        got = f(z)
        assert got.dtype == dtype
        np.testing.assert_allclose(got, ss.wofz(z), rtol=rtol)
    np.testing.assert_allclose(S.erfcx(z), ss.erfcx(z), rtol=rtol * 10)
    # JAX's values where SciPy's are 0: w(inf) and w(i inf) are NaN
    got = S.wofz(np.array([np.inf, 1j * np.inf, -3j], dtype))
    np.testing.assert_allclose(got, [complex(np.nan, np.nan), complex(np.nan, np.nan),
                                     16205.988853999586], rtol=rtol)


# (function, points, order): second order where it is cheap to compile
GRAD_CASES = [
    (S.erfcx, [-2.0, 0.5, 3.0, 30.0], 2), (S.dawsn, [-4.0, 0.5, 3.0, 5.0, 8.0], 2),
    (lambda x: S.fresnel(x)[0], [-2.0, 0.5, 1.7], 1),
    (lambda x: S.fresnel(x)[1], [-2.0, 0.5, 1.7], 1),
    (S.expi, [-3.0, 0.5, 3.0, 10.0, 50.0, 100.0], 2), (S.exp1, [0.1, 0.5, 3.0, 10.0], 1),
    (lambda x: S.expn(3, x), [0.1, 0.5, 3.0, 10.0], 1),
    (lambda x: S.sici(x)[0], [-6.0, 0.5, 3.0, 9.0], 2),
    (lambda x: S.sici(x)[1], [0.5, 3.0, 6.0, 9.0], 1),
    # JAX's gradient of spence is NaN on (1, 2] (a branch's NaN leaks through its select)
    (S.spence, [0.3, 0.7, 1.2, 1.7, 3.0], 1),
    (lambda x: jnp.real(S.wofz(x)), [-1.0, 0.5, 2.0], 1),
    (lambda x: jnp.imag(S.wofz(x * 1j + 0.5)), [-1.0, 0.5], 1),
]


@pytest.mark.parametrize("k", range(len(GRAD_CASES)))
def test_derivatives_against_finite_differences(x64, k):
    f, x, order = GRAD_CASES[k]
    check_grads(f, (np.array(x),), order=order, modes=("fwd", "rev"), eps=1e-5, rtol=1e-5,
                atol=1e-7)


def test_jax_derivative_conventions(x64):
    grad = astjax.grad
    assert float(grad(S.expi)(0.0)) == np.inf and float(grad(S.exp1)(0.0)) == -np.inf
    assert float(astjax.jvp(S.sici, (0.0,), (1.0,))[1][0]) == 1.0  # (reverse mode: NaN)
    assert float(grad(lambda x: S.sici(x)[1])(0.0)) == np.inf
    # exp1'' is expn(-1, x), JAX's E_{-1}: NaN up to x = 1, exp(-x) (1 / x + 1 / x^2) above
    assert np.isnan(grad(grad(S.exp1))(0.5))
    assert float(grad(grad(S.exp1))(3.0)) == pytest.approx(np.exp(-3.0) * (1 / 3 + 1 / 9))
    assert float(grad(S.spence)(1.0)) == 0.0 and float(grad(S.spence)(0.0)) == 0.0
    assert float(grad(S.expn, argnums=0)(3.0, 2.5)) == 0.0  # n is not differentiated
    assert float(grad(S.erfcx)(-np.inf)) == -np.inf
    assert float(grad(lambda x: S.fresnel(x)[0])(1.5)) == pytest.approx(-0.3826834323650898)


def test_vmap():
    x = np.array([[0.3, 1.5, 4.0], [2.0, 7.0, 0.9]])
    def f(v):
        si, ci = S.sici(v)
        return S.erfcx(v) + S.dawsn(v) + S.expi(v) + S.exp1(v) + S.expn(2, v) + si + ci \
            + S.spence(v) + S.fresnel(v)[0] + jnp.imag(S.wofz(v)) + S.owens_t(v, 0.5 * v) \
            + S.bessel_jn(v, v=2)[2] + S.hyp1f1(0.5, 1.5, v) + S.hyp2f1(0.5, 1.5, 2.5, v / 10)
    want = np.stack([f(r) for r in x])
    np.testing.assert_allclose(astjax.vmap(f)(x), want, rtol=1e-6)
    np.testing.assert_allclose(astjax.jit(astjax.vmap(f, in_axes=1, out_axes=1))(x), want,
                               rtol=1e-6)


H = np.array([0.0, 0.3, 1.0, 2.5, -1.0, 5.0, np.inf, np.nan, 10.0, 0.5, 1.0, -np.inf, 2.0])
A = np.array([0.5, 1.0, 3.0, -0.7, 2.0, 0.0, 1.0, 1.0, 20.0, np.inf, -np.inf, 0.5, 1e10])


def _owens_t(h, a):
    """SciPy's, with JAX's values: NaN at h = 0, a = +-inf (SciPy: +-0.25), and the
    quadrature's -3.8099265112688866e-24 at (10, -0.7) (SciPy: -3.809926512073739e-24)."""
    h, a = np.broadcast_arrays(h, a)
    want = np.where((h == 0) & np.isinf(a), np.nan, ss.owens_t(h, a))
    return np.where((h == 10.0) & np.isclose(a, -0.7), -3.8099265112688866e-24, want)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_owens_t(x64, dtype):
    h, a = H.astype(dtype), A.astype(dtype)
    for f in (S.owens_t, astjax.jit(S.owens_t)):
        _check(f(h, a), ss.owens_t(h, a), dtype)
        _check(f(h[:, None], a), _owens_t(h[:, None], a).astype(dtype), dtype)


def test_bessel_jn(x64):
    z = np.array([0.1, 1.0, 5.0, 20.0, -3.0, 12.0])
    want = np.stack([ss.jv(k, z) for k in range(4)])
    for f in (S.bessel_jn, astjax.jit(S.bessel_jn, static_argnames="v")):
        got = f(z, v=3)
        assert got.shape == (4, 6)
        np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-16)
    assert S.bessel_jn(z.reshape(2, 3), v=1).shape == (2, 2, 3)
    # JAX's values: NaN at 0 and at NaN, +-inf at inf in odd orders; in float32 the recurrence
    # from order 50 overflows for small |z| (NaN), and is JAX's above
    edge = np.asarray(S.bessel_jn(np.array([0.0, np.inf, np.nan]), v=1))
    np.testing.assert_array_equal(edge, [[np.nan, np.nan, np.nan], [np.nan, -np.inf, np.nan]])
    # at 40, 50 steps are too few: JAX's values (SciPy: 0.0073668905842372906, 0.126038...)
    np.testing.assert_allclose(S.bessel_jn(40.0, v=1), [0.0073707960579535983,
                                                        0.12609991016421321], rtol=1e-15)
    got = S.bessel_jn(np.array([0.1, 1.0, -3.0, 5.0, 20.0], np.float32), v=2)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, [[np.nan, np.nan, np.nan, -0.17759672, 0.16702464],
                                     [np.nan, np.nan, np.nan, -0.3275791, 0.066833094],
                                     [np.nan, np.nan, np.nan, 0.04656507, -0.16034134]],
                               rtol=2e-7)


def test_bernoulli(x64):
    # JAX's (Chowla-Hartung, 48 terms): B_4 is 8.5e-8 off -1/30
    want = [1.0, -0.5, 0.16666666666666666, 0.0, -0.03333324870879498, 0.0,
            0.0238095237937816, 0.0, -0.03333333333332683, 0.0, 0.07575757575757575]
    np.testing.assert_allclose(S.bernoulli(10), want, rtol=1e-15)
    np.testing.assert_allclose(S.bernoulli(10)[6:], ss.bernoulli(10)[6:], rtol=1e-9)
    np.testing.assert_array_equal(S.bernoulli(1), [1.0, -0.5])
    assert S.bernoulli(0).shape == (1,)
    np.testing.assert_allclose(astjax.jit(lambda x: S.bernoulli(6) * x)(2.0), 2 * np.array(
        want[:7]), rtol=1e-15)
    with pytest.raises(ValueError, match="non-negative"):
        S.bernoulli(-1)


def test_bernoulli_float32():
    got = S.bernoulli(8)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, ss.bernoulli(8), rtol=1e-5, atol=1e-7)


HA = np.array([0.5, 1.0, 2.0, -1.5, 3.0, 0.0, 2.0, 1.0, 0.5, 1.5, 0.3, 4.0])
HB = np.array([1.5, 2.0, 2.0, 2.5, 0.0, 0.0, 3.0, 5.0, 1.5, 2.5, 0.7, 1.5])
HX = np.array([0.3, -2.0, 1.0, 5.0, 1.0, 1.0, 150.0, -20.0, 30.0, 120.0, -0.5, 12.0])


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_hyp1f1(x64, dtype):
    a, b, x = HA.astype(dtype), HB.astype(dtype), HX.astype(dtype)
    want = ss.hyp1f1(a, b, x)
    want[5] = 1.0  # JAX's at a = b = 0 (SciPy: inf)
    if dtype == np.float32:
        want[7] = 0.17246097  # JAX's: the alternating series at x = -20 (SciPy: 0.17285)
    rtol = 1e-5 if dtype == np.float32 else 1e-12
    for f in (S.hyp1f1, astjax.jit(S.hyp1f1)):
        got = f(a, b, x)
        assert got.dtype == dtype
        np.testing.assert_allclose(got, want, rtol=rtol)
    assert np.isnan(S.hyp1f1(1.0, 2.0, np.nan))


P2 = np.array([[0.5, 1.5, 2.5], [1.0, 2.0, 3.0], [-2.0, 1.0, 1.5], [2.0, 3.0, 2.0],
               [1.5, 0.5, 2.5], [0.0, 1.0, 2.0], [1.0, 1.0, 2.0], [0.3, 0.7, 1.3],
               [3.0, 1.0, 1.0], [-3.0, 2.0, 2.5]])


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_hyp2f1(x64, dtype):
    a, b, c = (P2[:, i:i + 1].astype(dtype) for i in range(3))
    x = np.array([-0.5, 0.0, 0.3, 0.7, 0.9, 1.0], dtype)
    rtol = 1e-5 if dtype == np.float32 else 1e-12
    for f in (S.hyp2f1, astjax.jit(S.hyp2f1)):
        got = f(a, b, c, x)
        assert got.dtype == dtype
        np.testing.assert_allclose(got, ss.hyp2f1(a, b, c, x), rtol=rtol)


def test_hyp2f1_jax_values(x64):
    # JAX 0.10.2's, where SciPy's differ: its series does not converge at x = -5 (SciPy:
    # 0.5276 and 0.2567) nor reach 2.2647 at 0.999 in 250 terms; 1 at x = NaN, inf for a
    # non-positive integer c (SciPy: -94 for a = -3) and above x = 1, NaN at x = 1 when
    # c - a - b < -1 (SciPy: inf)
    a = np.array([0.5, 1.0, 0.5, 0.5, -3.0, -2.0, 2.5, 0.3])
    b = np.array([1.5, 2.0, 1.5, 1.5, 2.0, 1.0, 1.5, 0.7])
    c = np.array([2.5, 3.0, 2.5, 2.5, -4.0, 1.5, 1.0, 1.3])
    x = np.array([-5.0, -5.0, 0.999, np.nan, -5.0, 1.5, 1.0, 0.95])
    want = [3.96226289885821e+169, 1.472920873133115e+171, 2.226759632743337, 1.0, np.inf,
            np.inf, np.nan, 1.4140193279132598]
    for f in (S.hyp2f1, astjax.jit(S.hyp2f1)):
        np.testing.assert_allclose(f(a, b, c, x), want, rtol=1e-13)


def test_derivatives_of_owens_t_bessel_jn_hyp1f1(x64):
    check_grads(S.owens_t, (np.array([0.0, 0.7, 2.0, -1.5]), np.array([0.4, -3.0, 1.0, 0.9])),
                order=1, modes=("fwd", "rev"), eps=1e-6, rtol=1e-6)
    check_grads(lambda z: S.bessel_jn(z, v=2), (np.array([0.5, 1.5, 7.0]),), order=1,
                modes=("rev",), eps=1e-6, rtol=1e-6)
    check_grads(S.hyp1f1, (np.array([0.5, 2.0, -1.5]), np.array([1.5, 3.0, 2.5]),
                           np.array([0.7, -3.0, 2.0])), order=1, modes=("fwd", "rev"),
                eps=1e-6, rtol=1e-5)
    # jax.grad(hyp2f1, argnums=(0, 1, 2, 3))(0.5, 1.5, 2.5, 0.3), JAX 0.10.2
    got = astjax.grad(S.hyp2f1, argnums=(0, 1, 2, 3))(0.5, 1.5, 2.5, 0.3)
    np.testing.assert_allclose(got, [0.22988108250652228, 0.08051103957211206,
                                     -0.04936366585392217, 0.43583029138730817], rtol=1e-13)
    check_grads(S.hyp2f1, (np.array([0.5, 2.0]), np.array([1.5, 0.7]), np.array([2.5, 3.5]),
                           np.array([0.3, -0.5])), order=1, modes=("fwd", "rev"), eps=1e-6,
                rtol=1e-5)


SPH_N = np.array([0, 1, 2, 3, 3, 4, 5, 2, 6])
SPH_M = np.array([0, -1, 1, -2, 3, 0, -4, 2, 1])
SPH_THETA = np.array([0.3, 1.0, 2.0, 0.0, 1.5, np.pi, 0.1, 1.2, 0.4])
SPH_PHI = np.array([0.1, 0.5, 2.0, -1.0, 3.0, 0.0, 1.5, 4.0, 0.2])


def test_sph_harm_y(x64):
    args = (SPH_N, SPH_M, SPH_THETA, SPH_PHI)
    want = ss.sph_harm_y(*args)
    np.testing.assert_allclose(S.sph_harm_y(*args), want, rtol=1e-13, atol=1e-16)
    got = astjax.jit(S.sph_harm_y, static_argnames="n_max")(*args, n_max=6)
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-16)
    # JAX's: degrees above n_max clip to it
    got = S.sph_harm_y(*args, n_max=5)
    np.testing.assert_allclose(got[:8], want[:8], rtol=1e-13, atol=1e-16)
    np.testing.assert_allclose(got[8], -0.5178983617356643 - 0.10498319529731981j, rtol=1e-13)
    # float32 arguments give complex128 with 64-bit types on, as in JAX ((-1)^|m| is a
    # default float)
    f32 = S.sph_harm_y(SPH_N.astype(np.int32), SPH_M.astype(np.int32),
                       SPH_THETA.astype(np.float32), SPH_PHI.astype(np.float32))
    assert f32.dtype == np.complex128
    np.testing.assert_allclose(f32, want, rtol=2e-6, atol=1e-6)
    np.testing.assert_allclose(S.sph_harm_y(np.array([2]), np.array([1]), 0.7, np.array([0.3])),
                               [-0.36365247258846456 - 0.11249089203178193j], rtol=1e-14)
    with pytest.raises(NotImplementedError, match="diff_n"):
        S.sph_harm_y(*args, diff_n=1)


def test_sph_harm_y_complex64_and_derivative(x64):
    with _x32():
        t = SPH_THETA.astype(np.float32)
        assert S.sph_harm_y(SPH_N, SPH_M, t, t, n_max=6).dtype == np.complex64
    def f(t):
        return jnp.real(S.sph_harm_y(SPH_N[:3], SPH_M[:3], t, SPH_PHI[:3], n_max=6))
    check_grads(f, (np.array([0.3, 1.0, 2.0]),), order=1, modes=("rev",), eps=1e-6,
                rtol=1e-6)
    # JAX 0.10.2's: NaN at the poles (sqrt(1 - cos^2) has no derivative there)
    g = astjax.grad(lambda t: jnp.real(S.sph_harm_y(SPH_N, SPH_M, t, SPH_PHI, n_max=6)).sum())(
        SPH_THETA)
    np.testing.assert_allclose(g, [0.0, 0.16381946506867764, -0.21014222407052519, np.nan,
                                   0.08026757517144265, np.nan, 0.00553902293797296,
                                   -0.03796299597587136, 1.7719974130182776], rtol=1e-13)


class _x32:
    def __enter__(self):
        self.before = astjax.config.jax_enable_x64
        astjax.config.update("jax_enable_x64", False)

    def __exit__(self, *exc):
        astjax.config.update("jax_enable_x64", self.before)


def _three(x):
    return S.erfcx(x) + S.spence(x) + S.owens_t(x, 0.5)


def test_numba(numba_backend, x64):
    # (compiles in about 10 s; expi takes 40 to 50 s, expn and hyp1f1 15, each alone)
    x = np.array([0.25, 0.5, 1.5, 3.0, 30.0])
    jitted = astjax.jit(_three)
    got = jitted(x)
    (compiled,) = jitted.cache.values()
    assert compiled.backend == "numba", compiled.fallback_reason
    np.testing.assert_allclose(got, ss.erfcx(x) + ss.spence(x) + ss.owens_t(x, 0.5),
                               rtol=1e-14)


def test_dtypes():
    # JAX 0.10.2, 64-bit types off: float32 from integers, complex64 from reals for wofz
    assert S.erfcx(np.int32(1)).dtype == np.float32
    assert S.wofz(np.float32(0.5)).dtype == np.complex64
    assert S.expn(2, np.float32(0.5)).dtype == np.float32
    assert S.sici(np.float32(2.0))[1].dtype == np.float32
    assert S.fresnel(np.float16(2.0))[0].dtype == np.float16
    assert S.dawsn(np.float16(2.0)).dtype == np.float16


def test_errors():
    with pytest.raises(ValueError, match="complex"):
        S.dawsn(np.complex64(1.0))
    with pytest.raises(ValueError, match="complex"):
        S.expi(np.complex64(1.0))
    with pytest.raises(TypeError, match="not supported"):
        S.spence(np.float16(1.0))
