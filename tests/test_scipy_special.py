"""astjax.scipy.special: values against SciPy (eagerly and under jit), JAX 0.10.2's values
at the edges (literals from a run of jax.scipy.special with 64-bit types on), derivatives
against finite differences, vmap, dtypes, the Numba kernels' accuracy and one Numba program."""
import numpy as np
import pytest
import scipy.special as sp

import astjax
import astjax.scipy.special as jss
from astjax._src.backends.numba_cpu import special_kernels
from astjax.test_util import check_grads

R = np.random.default_rng(0)
POS = np.concatenate([np.geomspace(1e-3, 1e3, 25), R.uniform(0.1, 30.0, 15)])
ANY = np.concatenate([POS, -POS[np.abs(POS - np.round(POS)) > 1e-2]])  # away from poles
PROB = np.concatenate([np.geomspace(1e-300, 0.1, 20), R.uniform(0.0, 1.0, 20),
                       1.0 - np.geomspace(1e-15, 0.1, 10)])
UNIT = R.uniform(-0.999, 0.999, 30)
REAL = np.concatenate([np.linspace(-40.0, 10.0, 51), R.normal(size=10)])

# name, our function, SciPy's, sample, float64 rtol
CASES = [
    ("gammaln", jss.gammaln, sp.gammaln, ANY, 1e-13),
    ("digamma", jss.digamma, sp.digamma, POS, 1e-13),
    ("trigamma", lambda x: jss.polygamma(1, x), lambda x: sp.polygamma(1, x), ANY, 1e-13),
    ("polygamma3", lambda x: jss.polygamma(3, x), lambda x: sp.polygamma(3, x), POS, 1e-13),
    ("gamma", jss.gamma, sp.gamma, np.concatenate([POS[POS < 100], -POS[:20] - 0.5]), 1e-12),
    ("erf", jss.erf, sp.erf, REAL, 1e-14),
    ("erfc", jss.erfc, sp.erfc, REAL, 1e-13),
    ("erfinv", jss.erfinv, sp.erfinv, UNIT, 1e-14),
    ("ndtr", jss.ndtr, sp.ndtr, REAL, 1e-13),
    ("ndtri", jss.ndtri, sp.ndtri, PROB, 1e-13),
    # JAX's algorithm: a 3-term asymptotic series below -20 (1e-12 at -24), log(ndtr) up to 8
    ("log_ndtr", jss.log_ndtr, sp.log_ndtr, np.concatenate([REAL[REAL < 6], [-1e3, 20.0]]), 1e-9),
    ("expit", jss.expit, sp.expit, REAL, 1e-14),
    ("logit", jss.logit, sp.logit, PROB[PROB > 1e-30], 1e-13),
    ("entr", jss.entr, sp.entr, POS, 1e-14),
    ("xlogy", lambda x: jss.xlogy(x - 3.0, x), lambda x: sp.xlogy(x - 3.0, x), POS, 1e-14),
    ("xlog1py", lambda x: jss.xlog1py(x, x - 0.5), lambda x: sp.xlog1py(x, x - 0.5), POS,
     1e-13),
    ("betaln", lambda x: jss.betaln(x, 2.5), lambda x: sp.betaln(x, 2.5), POS[POS < 100], 1e-12),
    ("i0e", jss.i0e, sp.i0e, np.concatenate([ANY, [0.0, 1e-300, 1e6]]), 1e-15),
    ("i1e", jss.i1e, sp.i1e, np.concatenate([ANY, [0.0, 1e-300, 1e6]]), 4e-15),  # 12 ulps
    ("multigammaln", lambda x: jss.multigammaln(x + 2.0, 3),
     lambda x: np.array([sp.multigammaln(v + 2.0, 3) for v in x]), POS, 1e-13),
]


@pytest.mark.parametrize("name,f,ref,x,rtol", CASES, ids=[c[0] for c in CASES])
def test_values_against_scipy(x64, name, f, ref, x, rtol):
    want = ref(x)
    np.testing.assert_allclose(np.asarray(f(x)), want, rtol=rtol, atol=0)
    np.testing.assert_allclose(np.asarray(astjax.jit(f)(x)), want, rtol=rtol, atol=0)


@pytest.mark.parametrize("name,f,ref,x,rtol", CASES, ids=[c[0] for c in CASES])
def test_float32_values(name, f, ref, x, rtol):
    x32 = x.astype(np.float32)
    want = ref(x32.astype(np.float64))
    keep = (np.abs(want) > 1e-30) & (np.abs(want) < 1e38)  # float32's range
    got = np.asarray(astjax.jit(f)(x32))
    assert got.dtype == np.float32
    # the float32 input's rounding moves gammaln near its zeros and digamma's root: atol
    np.testing.assert_allclose(got[keep], want[keep], rtol=2e-5, atol=1e-5)


def _ulps(got, want):
    return np.abs(got - want) / np.spacing(np.abs(want))


def test_numba_kernels_accurate_to_a_few_ulps():
    x = np.concatenate([np.geomspace(1e-8, 1e8, 400), np.linspace(-30.0, 30.0, 1201)])
    x = x[np.abs(x - np.round(x)) > 1e-3]
    want = sp.digamma(x)
    got = np.array([special_kernels.digamma(v) for v in x])
    positive = x > 0  # (within 0.3 of the root, a Taylor series in Hurwitz zetas, as SciPy)
    # (cancellation beyond the root series: 9 ulps from mpmath at 1.86, 12 from SciPy here)
    assert _ulps(got[positive], want[positive]).max() <= 12
    assert _ulps(np.array([special_kernels.digamma(1.4616321449683623)]),
                 np.array([-9.2412655217294275e-17])).max() == 0
    # below 0 the reflection psi(1 - x) - pi / tan(pi x) cancels near psi's roots: the error
    # is a few ulps of its terms (SciPy's own is up to 170 ulps there against mpmath)
    scale = np.abs(want) + np.pi / np.abs(np.tan(np.pi * x))
    assert (np.abs(got - want) / np.spacing(scale))[~positive].max() <= 32
    for n in (1, 2, 4):
        want = sp.polygamma(n, x)
        got = np.array([special_kernels.polygamma(n, v) for v in x])
        assert _ulps(got, want).max() <= 4, n


JAX_EDGES = [  # (function, input, JAX 0.10.2's values)
    (jss.gammaln, [-np.inf, -2.0, -0.0, 0.0, 1.0, 2.0, np.inf, np.nan],
     [np.inf, np.inf, np.inf, np.inf, 0.0, 0.0, np.inf, np.nan]),
    (jss.digamma, [-np.inf, -2.0, -0.0, 0.0, 1.0, np.inf, np.nan],
     [np.nan, np.nan, np.nan, np.nan, -0.5772156649015334, np.inf, np.nan]),
    (jss.gammasgn, [-0.0, 0.0, -1.5, -2.5, -np.inf, np.inf], [-1.0, 1.0, 1.0, -1.0, np.nan, 1.0]),
    (jss.gamma, [-0.0, 0.0, -1.5, 0.5], [-np.inf, np.inf, 2.3632718012073535, 1.7724538509055165]),
    (jss.ndtri, [-0.5, 0.0, 1e-300, 0.5, 1.0, 1.5, np.nan],
     [np.nan, -np.inf, -37.0470962993612, 0.0, np.inf, np.nan, np.nan]),
    (jss.log_ndtr, [-np.inf, -40.0, -25.0, 9.0, 30.0, np.inf],
     [-np.inf, -804.6084420137697, -316.63940800869966, -1.1285884059538324e-19,
      -4.906713927147908e-198, -0.0]),
    (jss.entr, [-1.0, 0.0, 0.5, np.inf], [-np.inf, -0.0, 0.34657359027997264, -np.inf]),
    (jss.logit, [0.0, 1.0, 0.5, -1.0], [-np.inf, np.inf, 0.0, np.nan]),
    (jss.erfinv, [-1.0, 1.0, 0.0, 2.0], [-np.inf, np.inf, 0.0, np.nan]),
    (jss.i0e, [-np.inf, -0.0, 0.0, 1e-300, 30.0, np.inf, np.nan],
     [0.0, 1.0, 1.0, 1.0, 0.07314594648223728, 0.0, np.nan]),
    (jss.i1e, [-np.inf, -0.0, 0.0, 1e-300, 30.0, np.inf, np.nan],
     [-0.0, -0.0, 0.0, 5.000000000000001e-301, 0.07191633059864753, 0.0, np.nan]),
    (lambda x: jss.multigammaln(x, 3), [2.0, 3.5], [1.5963125911388554, 3.8958984821540388]),
    (lambda x: jss.xlogy(x, np.array([0.0, np.nan, 0.0, -1.0])), [0.0, 0.0, 1.0, 0.0],
     [0.0, np.nan, -np.inf, 0.0]),
    (lambda x: jss.xlog1py(x, np.array([-1.0, np.nan, -1.0])), [0.0, 0.0, 1.0],
     [0.0, np.nan, -np.inf]),
]


@pytest.mark.parametrize("f,x,want", JAX_EDGES)
@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_jax_values_at_the_edges(x64, f, x, want):
    x = np.array(x)
    # (digamma(1) and gamma(-1.5) are 1 ulp from JAX's, which is 1 ulp from the true value)
    np.testing.assert_allclose(np.asarray(f(x)), np.array(want), rtol=2e-15)
    np.testing.assert_allclose(np.asarray(astjax.jit(f)(x)), np.array(want), rtol=2e-15)


def test_betaln_accurate_for_large_arguments(x64):
    # log B(a, b) from mpmath at 40 digits. SciPy's betaln (the difference of gammaln) is
    # 1e-9 off at the second pair; JAX's port of cdflib's algdiv uses h / (1 + h) where
    # cdflib has 1 / (1 + h), and is 5e-10 off at the first
    a = np.array([20.0, 0.16278456925012047, 3.0, 1e8, 2.0, 0.5, 7.5])
    b = np.array([30.0, 468917.6681408714, 1e6, 1.0, 9.0, 2.0, 1e12])
    want = [-33.968820791977386, -0.3840695840174068, -40.75338749333038, -18.420680743952367,
            -4.499809670330265, 0.2876820724517809, -199.69829413272976]
    np.testing.assert_allclose(jss.betaln(a, b), want, rtol=4e-15)
    np.testing.assert_allclose(astjax.jit(jss.betaln)(b, a), want, rtol=4e-15)


def test_logsumexp(x64):
    a = np.array([1.0, 2.0, 3.0])
    b = np.array([1.0, -2.0, 0.5])
    assert np.isnan(jss.logsumexp(a, b=b))  # JAX: a negative sum is NaN
    out, sign = jss.logsumexp(a, b=b, return_sign=True)
    assert float(out) == pytest.approx(0.7016419515146479, rel=1e-15) and float(sign) == -1.0
    assert float(jss.logsumexp(np.array([-np.inf, -np.inf]))) == -np.inf
    m = np.array([[1.0, 2.0], [3.0, 4.0]])
    np.testing.assert_allclose(jss.logsumexp(m, axis=0, b=np.array([0.0, 1.0])),
                               [-np.inf, 4.126928011042972], rtol=1e-15)
    x = R.normal(size=(3, 4))
    w = R.uniform(0.1, 1.0, size=(3, 4))
    f = astjax.jit(lambda x, w: jss.logsumexp(x, axis=1, b=w, keepdims=True))
    np.testing.assert_allclose(f(x, w), sp.logsumexp(x, axis=1, b=w, keepdims=True), rtol=1e-14)
    np.testing.assert_allclose(jss.logsumexp(x, axis=0), sp.logsumexp(x, axis=0), rtol=1e-14)
    np.testing.assert_allclose(jss.softmax(x), sp.softmax(x), rtol=1e-14)
    np.testing.assert_allclose(jss.log_softmax(x, axis=1), sp.log_softmax(x, axis=1),
                               rtol=1e-14)


GRAD_CASES = [
    (jss.gammaln, [0.3, 2.5, -1.5]), (jss.digamma, [0.3, 2.5, -1.5]),
    (lambda x: jss.polygamma(2, x), [0.7, 3.0]), (jss.gamma, [0.5, 3.2, -0.5]),
    (jss.erfinv, [-0.9, 0.1, 0.6]), (jss.ndtri, [0.01, 0.3, 0.97]),
    (jss.log_ndtr, [-30.0, -12.0, 0.5, 6.0]), (jss.ndtr, [-3.0, 0.2]), (jss.logit, [0.2, 0.7]),
    (jss.expit, [-2.0, 1.0]), (jss.entr, [0.2, 1.5]), (lambda x: jss.xlogy(x, x + 1.0), [0.5]),
    (lambda x: jss.xlog1py(x + 1.0, x), [0.5]), (lambda x: jss.betaln(x, 2.0 * x), [0.4, 3.0]),
    (lambda x: jss.multigammaln(x, 2), [1.5, 4.0]),
    (lambda x: jss.logsumexp(x, b=x * x), [0.5, -1.0, 2.0]),
    (jss.i0e, [-9.0, 0.5, 3.0, 40.0]), (jss.i1e, [-9.0, 0.5, 3.0, 40.0]),
]


@pytest.mark.parametrize("f,x", GRAD_CASES)
def test_derivatives_against_finite_differences(x64, f, x):
    check_grads(f, (np.array(x),), order=2, modes=("fwd", "rev"), eps=1e-5, rtol=1e-5,
                atol=1e-7)


@pytest.mark.parametrize("f,x", GRAD_CASES)
def test_float32_gradients(f, x):
    x = np.array(x)
    g32 = astjax.grad(lambda v: f(v).sum())(x.astype(np.float32))
    assert g32.dtype == np.float32
    with _x64():
        g64 = astjax.grad(lambda v: f(v).sum())(x)
    np.testing.assert_allclose(g32, g64, rtol=2e-4, atol=1e-5)


class _x64:
    def __enter__(self):
        self.before = astjax.config.jax_enable_x64
        astjax.config.update("jax_enable_x64", True)

    def __exit__(self, *exc):
        astjax.config.update("jax_enable_x64", self.before)


def test_jax_derivative_conventions(x64):
    gx, gy = astjax.grad(jss.xlogy, argnums=(0, 1))(0.0, 0.0)  # JAX: -inf, nan
    assert float(gx) == -np.inf and np.isnan(gy)
    assert float(astjax.grad(jss.entr)(0.0)) == np.inf
    assert float(astjax.grad(astjax.grad(jss.erfinv))(0.3)) == pytest.approx(0.496486526010743)
    assert float(astjax.grad(jss.ndtri)(0.2)) == pytest.approx(3.5719143465773593, rel=1e-14)
    assert float(astjax.grad(jss.log_ndtr)(-30.0)) == pytest.approx(30.033259672197733,
                                                                    rel=1e-14)
    assert float(astjax.grad(jss.i1e)(0.0)) == 0.5 and float(astjax.grad(jss.i0e)(0.0)) == 0.0
    assert float(astjax.grad(astjax.grad(jss.i0e))(1.5)) == pytest.approx(0.1507621849858483,
                                                                          rel=1e-14)


def test_vmap():
    x = R.uniform(0.1, 0.9, size=(4, 3)).astype(np.float32)
    f = lambda v: jss.gammaln(v) + jss.digamma(v) + jss.polygamma(1, v) + jss.ndtri(v) \
        + jss.erfinv(v) + jss.log_ndtr(v) + jss.logsumexp(v, b=v)  # noqa: E731
    np.testing.assert_allclose(astjax.vmap(f)(x), np.stack([f(r) for r in x]), rtol=1e-6)
    np.testing.assert_allclose(astjax.jit(astjax.vmap(f))(x), np.stack([f(r) for r in x]),
                               rtol=1e-6)


def test_dtypes():
    # JAX 0.10.2 with 64-bit types off: float32 for integers, as promote_args_inexact
    assert jss.gammaln(np.int32(3)).dtype == np.float32
    assert jss.xlogy(np.int32(1), np.float32(2)).dtype == np.float32
    assert jss.polygamma(1, np.float32(2.0)).dtype == np.float32
    assert jss.ndtri(np.float32(0.3)).dtype == np.float32
    assert astjax.jit(jss.digamma)(np.arange(1, 4)).dtype == np.float32


def test_errors():
    with pytest.raises(TypeError, match="n must be an integer"):
        jss.polygamma(1.0, np.float32(2.0))
    with pytest.raises(TypeError, match="complex"):
        jss.gammaln(np.complex64(1.0))
    import astjax.numpy as jnp
    assert not hasattr(jnp, "gammaln")  # as in JAX: only in scipy.special


def _several(x):
    return (jss.gammaln(x) + jss.digamma(x) + jss.polygamma(1, x) + jss.ndtri(x / 4)
            + jss.log_ndtr(-x) + jss.erfinv(x / 4))


def test_numba(numba_backend):
    x = np.array([0.25, 0.5, 1.5, 3.0], np.float64)
    with _x64():
        jitted = astjax.jit(_several)
        got = jitted(x)
        (compiled,) = jitted.cache.values()
        assert compiled.backend == "numba", compiled.fallback_reason
        want = (sp.gammaln(x) + sp.digamma(x) + sp.polygamma(1, x) + sp.ndtri(x / 4)
                + sp.log_ndtr(-x) + sp.erfinv(x / 4))
        np.testing.assert_allclose(got, want, rtol=1e-13)
        g = astjax.jit(astjax.grad(lambda v: _several(v).sum()))(x)
        want = (sp.digamma(x) + sp.polygamma(1, x) + sp.polygamma(2, x)
                + np.sqrt(2 * np.pi) * np.exp(sp.ndtri(x / 4) ** 2 / 2) / 4
                - np.exp(-x * x / 2 - sp.log_ndtr(-x)) / np.sqrt(2 * np.pi)
                + np.sqrt(np.pi) / 2 * np.exp(sp.erfinv(x / 4) ** 2) / 4)
        np.testing.assert_allclose(g, want, rtol=1e-12)
