"""astjax.scipy.stats: each distribution against scipy.stats (eagerly and under jit, with
loc/scale), JAX 0.10.2's values at the support's edges (literals from a run of
jax.scipy.stats with 64-bit types on), gradients against finite differences, vmap, dtypes."""
import numpy as np
import pytest
import scipy.stats as ss

import astjax
from astjax.scipy import stats as st
from astjax.scipy.stats import norm
from astjax.test_util import check_grads

X = np.linspace(-3.0, 3.0, 13)
U = np.linspace(0.02, 0.98, 9)
K = np.array([0.0, 1.0, 2.0, 3.0, 7.0])
CASES = [  # ours, scipy's, sample
    (lambda x: norm.logpdf(x, 1.0, 2.0), lambda x: ss.norm.logpdf(x, 1, 2), X),
    (lambda x: norm.pdf(x, 1.0, 2.0), lambda x: ss.norm.pdf(x, 1, 2), X),
    (lambda x: norm.cdf(x, 1.0, 2.0), lambda x: ss.norm.cdf(x, 1, 2), X),
    (lambda x: norm.logcdf(x, 1.0, 2.0), lambda x: ss.norm.logcdf(x, 1, 2), X * 10),
    (lambda x: norm.sf(x, 1.0, 2.0), lambda x: ss.norm.sf(x, 1, 2), X),
    (lambda x: norm.logsf(x, 1.0, 2.0), lambda x: ss.norm.logsf(x, 1, 2), X * 10),
    (lambda q: norm.ppf(q, 1.0, 2.0), lambda q: ss.norm.ppf(q, 1, 2), U),
    (lambda k: st.bernoulli.logpmf(k, 0.3), lambda k: ss.bernoulli.logpmf(k, 0.3), K[:2]),
    (lambda k: st.bernoulli.pmf(k, 0.3, 1.0), lambda k: ss.bernoulli.pmf(k, 0.3, 1), K[1:3]),
    (lambda k: st.poisson.logpmf(k, 2.5, 1.0), lambda k: ss.poisson.logpmf(k, 2.5, 1), K),
    (lambda k: st.poisson.pmf(k, 2.5), lambda k: ss.poisson.pmf(k, 2.5), K),
    (lambda x: st.gamma.logpdf(x, 2.5, -4.0, 2.0), lambda x: ss.gamma.logpdf(x, 2.5, -4, 2), X),
    (lambda x: st.gamma.pdf(x, 0.5, -4.0), lambda x: ss.gamma.pdf(x, 0.5, -4), X),
    (lambda u: st.beta.logpdf(u, 2.0, 3.0), lambda u: ss.beta.logpdf(u, 2, 3), U),
    (lambda x: st.beta.pdf(x, 2.0, 3.0, -4.0, 8.0), lambda x: ss.beta.pdf(x, 2, 3, -4, 8), X),
    (lambda x: st.t.logpdf(x, 3.0, 1.0, 2.0), lambda x: ss.t.logpdf(x, 3, 1, 2), X),
    (lambda x: st.uniform.logpdf(x, -4.0, 8.0), lambda x: ss.uniform.logpdf(x, -4, 8), X),
    (lambda x: st.uniform.pdf(x, -4.0, 8.0), lambda x: ss.uniform.pdf(x, -4, 8), X),
    (lambda x: st.expon.logpdf(x, -4.0, 2.0), lambda x: ss.expon.logpdf(x, -4, 2), X),
    (lambda x: st.laplace.logpdf(x, 1.0, 2.0), lambda x: ss.laplace.logpdf(x, 1, 2), X),
    (lambda x: st.logistic.logpdf(x, 1.0, 2.0), lambda x: ss.logistic.logpdf(x, 1, 2), X),
    (lambda x: st.logistic.cdf(x, 1.0, 2.0), lambda x: ss.logistic.cdf(x, 1, 2), X),
    (lambda x: st.cauchy.logpdf(x, 1.0, 2.0), lambda x: ss.cauchy.logpdf(x, 1, 2), X),
    (lambda q: norm.isf(q, 1.0, 2.0), lambda q: ss.norm.isf(q, 1, 2), U),
    (lambda k: st.bernoulli.cdf(k, 0.3), lambda k: ss.bernoulli.cdf(k, 0.3), X),
    (lambda x: st.uniform.cdf(x, -2.0, 3.0), lambda x: ss.uniform.cdf(x, -2, 3), X),
    (lambda q: st.uniform.ppf(q, -2.0, 3.0), lambda q: ss.uniform.ppf(q, -2, 3), U),
    (lambda x: st.expon.cdf(x, -2.0, 3.0), lambda x: ss.expon.cdf(x, -2, 3), X),
    (lambda x: st.expon.sf(x, -2.0, 3.0), lambda x: ss.expon.sf(x, -2, 3), X),
    (lambda x: st.expon.logsf(x, -2.0, 3.0), lambda x: ss.expon.logsf(x, -2, 3), X),
    (lambda x: st.expon.logcdf(x, -2.0, 3.0), lambda x: ss.expon.logcdf(x, -2, 3), X[5:]),
    (lambda x: st.laplace.cdf(x, 1.0, 2.0), lambda x: ss.laplace.cdf(x, 1, 2), X),
    (lambda x: st.logistic.sf(x, 1.0, 2.0), lambda x: ss.logistic.sf(x, 1, 2), X),
    (lambda q: st.logistic.ppf(q, 1.0, 2.0), lambda q: ss.logistic.ppf(q, 1, 2), U),
    (lambda q: st.logistic.isf(q, 1.0, 2.0), lambda q: ss.logistic.isf(q, 1, 2), U),
    (lambda x: st.cauchy.cdf(x, 1.0, 2.0), lambda x: ss.cauchy.cdf(x, 1, 2), X),
    (lambda x: st.cauchy.sf(x, 1.0, 2.0), lambda x: ss.cauchy.sf(x, 1, 2), X),
    (lambda q: st.cauchy.ppf(q, 1.0, 2.0), lambda q: ss.cauchy.ppf(q, 1, 2), U),
]


@pytest.mark.parametrize("f,ref,x", CASES)
def test_against_scipy(x64, f, ref, x):
    # (atol: log(ndtr(x)) up to x = 8 is JAX's formula, 1e-16 from 0 where -sf(x) is right)
    want = ref(x)
    np.testing.assert_allclose(np.asarray(f(x)), want, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(np.asarray(astjax.jit(f)(x)), want, rtol=1e-12, atol=1e-15)


M = np.array([0.5, -1.0, 2.0])
C = np.array([[2.0, 0.3, 0.1], [0.3, 1.5, -0.2], [0.1, -0.2, 1.0]])
XS = np.random.default_rng(0).normal(size=(4, 3))
X32, M32, C32 = X.astype(np.float32), M.astype(np.float32), C.astype(np.float32)


def test_multivariate_normal(x64):
    want = ss.multivariate_normal.logpdf(XS, M, C)
    np.testing.assert_allclose(st.multivariate_normal.logpdf(XS, M, C), want, rtol=1e-12)
    np.testing.assert_allclose(astjax.jit(st.multivariate_normal.pdf)(XS, M, C), np.exp(want),
                               rtol=1e-12)
    # JAX's values: a scalar covariance, and a scalar mean (elementwise)
    x = np.array([0.5, 1.0])
    assert float(st.multivariate_normal.logpdf(x, np.zeros(2), 2.0)) == pytest.approx(
        -2.8435242469692907, rel=1e-15)
    np.testing.assert_allclose(st.multivariate_normal.logpdf(x, 0.0, 2.0),
                               [-1.3280121234846454, -1.5155121234846454], rtol=1e-15)
    # the gradient with respect to the covariance is symmetric, as JAX's
    g = astjax.grad(lambda c: st.multivariate_normal.logpdf(x, np.zeros(2), c))(
        np.array([[2.0, 0.3], [0.3, 1.0]]))
    np.testing.assert_allclose(g, [[-0.25629779885419807, 0.12924536059866779],
                                   [0.12924536059866779, -0.05448041446232282]], rtol=1e-13)
    check_grads(lambda m, c: st.multivariate_normal.logpdf(XS, m, c @ c.T), (M, C), order=1,
                modes=("rev",), eps=1e-6, rtol=1e-6)


E = np.array([-np.inf, -1.0, 0.0, 0.5, 1.0, 2.0, np.inf, np.nan])
KE = np.array([-1.0, 0.0, 1.0, 2.0, 0.5, np.nan])
NAN, INF = np.nan, np.inf
JAX_EDGES = [  # (ours, input, JAX 0.10.2's values)
    (norm.logcdf, E, [-INF, -1.8410216450092634, -0.6931471805599453, -0.36894641528865635,
                      -0.1727537790234499, -0.02301290932896349, -0.0, NAN]),
    (norm.logsf, E, [-0.0, -0.1727537790234499, -0.6931471805599453, -1.1759117615936188,
                     -1.8410216450092634, -3.783184333682032, -INF, NAN]),
    (norm.ppf, np.array([-0.5, 0.0, 1e-300, 0.5, 1.0, 1.5, NAN]),
     [NAN, -INF, -37.0470962993612, 0.0, INF, NAN, NAN]),
    (norm.logcdf, np.array([-40.0, -25.0, -15.0, 9.0, 30.0]),
     [-804.6084420137697, -316.63940800869966, -116.13138484571171, -1.1285884059538324e-19,
      -4.906713927147908e-198]),
    (lambda x: st.uniform.pdf(x, 0.0, 1.0), E, [0.0, 0.0, 1.0, 1.0, 1.0, 0.0, 0.0, 1.0]),
    (st.expon.logpdf, E, [-INF, -INF, -0.0, -0.5, -1.0, -2.0, -INF, NAN]),
    (st.laplace.logpdf, E, [-INF, -1.6931471805599454, -0.6931471805599453,
                            -1.1931471805599454, -1.6931471805599454, -2.6931471805599454,
                            -INF, NAN]),
    (st.logistic.cdf, E, [0.0, 0.2689414213699951, 0.5, 0.6224593312018546,
                          0.7310585786300049, 0.8807970779778823, 1.0, NAN]),
    (st.cauchy.logpdf, E, [-INF, -1.8378770664093453, -1.1447298858494002,
                           -1.3678734371636099, -1.8378770664093453, -2.7541677982835004,
                           -INF, NAN]),
    (lambda x: st.t.logpdf(x, 3.0), E, [-INF, -1.5762529945270718, -1.00088884962351,
                                        -1.1609742649705828, -1.5762529945270718,
                                        -2.695484570397917, -INF, NAN]),
    (lambda x: st.gamma.logpdf(x, 2.0), E, [-INF, -INF, -INF, -1.1931471805599454, -1.0,
                                            -1.3068528194400546, NAN, -INF]),
    (lambda x: st.gamma.logpdf(x, 0.5), E, [-INF, -INF, INF, -0.7257913526447277,
                                            -1.5723649429247004, -2.918938533204673, -INF,
                                            -INF]),
    (lambda x: st.beta.logpdf(x, 1.0, 1.0), E, [-INF, -INF, 0.0, 0.0, 0.0, -INF, -INF, NAN]),
    (lambda x: st.beta.logpdf(x, 0.5, 0.5), E, [-INF, -INF, INF, -0.45158270528945554, INF,
                                                -INF, -INF, NAN]),
    (lambda x: st.beta.logpdf(x, -1.0, 1.0), np.array([0.5]), [NAN]),
    (lambda k: st.bernoulli.logpmf(k, 0.3), KE, [-INF, -0.3566749439387324,
                                                 -1.2039728043259361, -INF,
                                                 -0.7803238741323343, NAN]),
    (lambda k: st.bernoulli.logpmf(k, 0.0), KE, [-INF, 0.0, -INF, -INF, -INF, NAN]),
    (lambda k: st.poisson.logpmf(k, 2.5), KE, [-INF, -2.5, -1.583709268125845,
                                               -1.3605657168116339, -INF, -INF]),
    (lambda k: st.poisson.logpmf(k, 0.0), KE, [-INF, 0.0, -INF, -INF, -INF, -INF]),
]


@pytest.mark.parametrize("f,x,want", JAX_EDGES)
@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_jax_values_at_the_edges(x64, f, x, want):
    np.testing.assert_allclose(np.asarray(f(x)), np.array(want), rtol=4e-15)
    np.testing.assert_allclose(np.asarray(astjax.jit(f)(x)), np.array(want), rtol=4e-15)


def test_gradients(x64):
    check_grads(lambda x, loc, scale: norm.logcdf(x, loc, scale), (X[1:5], 0.5, 1.5), order=2,
                eps=1e-6, rtol=1e-6)
    check_grads(lambda q: norm.ppf(q, 1.0, 2.0), (U,), order=1, eps=1e-7, rtol=1e-6)
    check_grads(lambda mu, a: st.poisson.logpmf(K, mu).sum() + st.gamma.logpdf(U, a, 0.0, 0.5),
                (2.5, 1.7), order=1, eps=1e-6, rtol=1e-6)
    check_grads(lambda df, p: st.t.logpdf(X, df).sum() + st.beta.logpdf(U, p, 2.0).sum()
                + st.bernoulli.logpmf(K[:2], p / 4).sum(), (3.0, 1.5), order=1, eps=1e-6, rtol=1e-6)
    # JAX's value: d/dmu poisson.logpmf(3, mu) at 2.5
    assert float(astjax.grad(lambda m: st.poisson.logpmf(3.0, m))(2.5)) == pytest.approx(0.2)


def test_float32_gradients_and_dtypes():
    g = astjax.grad(lambda s: norm.logpdf(X32, 0.5, s).sum())(np.float32(1.5))
    assert g.dtype == np.float32
    assert float(g) == pytest.approx(float(np.sum(-1 / 1.5 + (X - 0.5) ** 2 / 1.5 ** 3)),
                                     rel=1e-5)
    # JAX 0.10.2 with 64-bit types off
    assert norm.logpdf(np.int32(1)).dtype == np.float32
    assert st.poisson.logpmf(np.int32(2), 3).dtype == np.float32


def test_vmap():
    xs = np.random.default_rng(1).normal(size=(5, 3)).astype(np.float32)
    f = lambda x: norm.logcdf(x, 0.5, 2.0) + st.t.logpdf(x, 4.0) \
        + st.multivariate_normal.logpdf(x, M32, C32)  # noqa
    np.testing.assert_allclose(astjax.vmap(f)(xs), np.stack([f(x) for x in xs]), rtol=1e-5)
