"""``astjax.scipy.special``, as ``jax.scipy.special``.

gammaln, digamma and polygamma are ops (``_src/ops/special.py``); erf and erfc are
``astjax.numpy``'s. The rest are plain functions written in ``astjax.numpy`` and compiled
like user code, with JAX's formulas: erfinv is XLA's polynomial (``_src/random/special.py``),
ndtri Cephes' rational functions as JAX writes them, and where JAX gives a function its own
derivative (erfinv, ndtri, log_ndtr, logit, xlogy, xlog1py, entr) so does a custom_jvp here,
written with the function itself so higher derivatives hold too.
"""
import numpy as np

import astjax.numpy as jnp
from astjax import lax, nn
from astjax._src.ad.custom import custom_jvp
from astjax._src.ops.special import digamma, gammaln  # noqa: F401
from astjax._src.ops.special import polygamma as _polygamma
from astjax._src.random.checks import static_helper  # evaluated while generating code
from astjax._src.random.special import _erfinv32, _erfinv64
from astjax.numpy._composites import _inexact, _inexact2

from ._special_erf import dawsn, erfcx, fresnel, wofz  # noqa: F401
from ._special_expint import exp1, expi, expn, sici, spence  # noqa: F401
from ._special_more import bernoulli, bessel_jn, owens_t  # noqa: F401
from ._special_sph import sph_harm_y  # noqa: F401

__all__ = ["bernoulli", "bessel_jn", "beta", "betainc", "betaln", "boxcox", "boxcox1p", "comb",
           "dawsn", "digamma", "entr", "erf", "erfc", "erfcx", "erfinv", "exp1", "expi", "expit",
           "expn", "factorial", "fresnel", "gamma", "gammainc", "gammaincc", "gammaln",
           "gammasgn", "hyp1f1", "hyp2f1", "i0", "i0e", "i1", "i1e", "kl_div", "log_ndtr",
           "log_softmax", "loggamma", "logit", "logsumexp", "multigammaln", "ndtr", "ndtri",
           "owens_t", "poch", "polygamma", "rel_entr", "sici", "softmax", "spence", "sph_harm_y",
           "wofz",
           "xlog1py", "xlogy", "zeta"]

erf = jnp.erf
erfc = jnp.erfc
_HALF_SQRT_PI = 0.886226925452758
_SQRT_2PI = 2.5066282746310002
_LOG_SQRT_2PI = 0.9189385332046728
_HALF_SQRT_2 = 0.7071067811865476


@static_helper
def _check_order(dtype):
    if dtype.kind not in "iu":
        raise TypeError(f"polygamma(): n must be an integer array or int, as in JAX; "
                        f"got {dtype}")
    return dtype


def polygamma(n, x):
    """The n-th derivative of digamma (n an integer; NaN where it is negative)."""
    n = jnp.asarray(n)
    _check_order(n.dtype)
    return _polygamma(n, x)


def logsumexp(a, axis=None, b=None, keepdims=False, return_sign=False):
    """log(sum(b * exp(a))) over ``axis``, shifted by the max as JAX. With ``b``, a negative
    sum gives NaN unless ``return_sign``, which returns (log|sum|, sign(sum))."""
    if b is None and not return_sign:
        return nn.logsumexp(_inexact(a), axis=axis, keepdims=keepdims)
    if b is None:
        a = _inexact(a)
    else:
        a, b = _inexact2(a, b)
        a = jnp.where(b != 0, a, -jnp.inf)
    amax = jnp.max(a, axis=axis, keepdims=True)
    amax = lax.stop_gradient(jnp.where(jnp.isfinite(amax), amax, 0.0))
    exp_a = jnp.exp(a - amax)
    if b is not None:
        exp_a = exp_a * b
    total = jnp.sum(exp_a, axis=axis, keepdims=keepdims)
    sign = jnp.sign(total)
    out = jnp.log(jnp.abs(total)) + jnp.max(amax, axis=axis, keepdims=keepdims)
    if return_sign:
        return out, sign
    return jnp.where(sign < 0, jnp.nan, out)


def softmax(x, axis=None):
    return nn.softmax(_inexact(x), axis=axis)


def log_softmax(x, axis=None):
    return nn.log_softmax(_inexact(x), axis=axis)


def expit(x):
    return nn.sigmoid(_inexact(x))


@custom_jvp
def logit(x):
    x = _inexact(x)
    return jnp.log(x / (1.0 - x))


@logit.defjvp
def _logit_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    x = _inexact(x)
    return logit(x), t / (x * (1.0 - x))


@custom_jvp
def erfinv(x):
    """Inverse error function: XLA's ErfInv32/ErfInv64 (float16 computes in float32)."""
    x = _inexact(x)
    if x.dtype == np.float64:
        return _erfinv64(x)
    if x.dtype == np.float32:
        return _erfinv32(x)
    return _erfinv32(x.astype(jnp.float32)).astype(x.dtype)


@erfinv.defjvp
def _erfinv_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    y = erfinv(x)
    return y, _HALF_SQRT_PI * jnp.exp(y * y) * t


def ndtr(x):
    """The standard normal CDF, through erf near 0 and erfc in the tails (as JAX)."""
    x = _inexact(x)
    w = x * _HALF_SQRT_2
    z = jnp.abs(w)
    y = jnp.where(z < _HALF_SQRT_2, 1.0 + jnp.erf(w),
                  jnp.where(w > 0.0, 2.0 - jnp.erfc(z), jnp.erfc(z)))
    return 0.5 * y


# Cephes ndtri's rational functions, as jax.scipy.special.ndtri writes them (highest first)
_P0 = (-5.99633501014107895267e1, 9.80010754185999661536e1, -5.66762857469070293439e1,
       1.39312609387279679503e1, -1.23916583867381258016e0)
_Q0 = (1.0, 1.95448858338141759834e0, 4.67627912898881538453e0, 8.63602421390890590575e1,
       -2.25462687854119370527e2, 2.00260212380060660359e2, -8.20372256168333339912e1,
       1.59056225126211695515e1, -1.18331621121330003142e0)
_P1 = (4.05544892305962419923e0, 3.15251094599893866154e1, 5.71628192246421288162e1,
       4.40805073893200834700e1, 1.46849561928858024014e1, 2.18663306850790267539e0,
       -1.40256079171354495875e-1, -3.50424626827848203418e-2, -8.57456785154685413611e-4)
_Q1 = (1.0, 1.57799883256466749731e1, 4.53907635128879210584e1, 4.13172038254672030440e1,
       1.50425385692907503408e1, 2.50464946208309415979e0, -1.42182922854787788574e-1,
       -3.80806407691578277194e-2, -9.33259480895457427372e-4)
_P2 = (3.23774891776946035970e0, 6.91522889068984211695e0, 3.93881025292474443415e0,
       1.33303460815807542389e0, 2.01485389549179081538e-1, 1.23716634817820021358e-2,
       3.01581553508235416007e-4, 2.65806974686737550832e-6, 6.23974539184983293730e-9)
_Q2 = (1.0, 6.02427039364742014255e0, 3.67983563856160859403e0, 1.37702099489081330271e0,
       2.16236993594496635890e-1, 1.34204006088543189037e-2, 3.28014464682127739104e-4,
       2.89247864745380683936e-6, 6.79019408009981274425e-9)
_EXP_M2 = 0.1353352832366127  # exp(-2)


def _horner(coefficients, x):
    out = jnp.zeros_like(x) + coefficients[0]
    for c in coefficients[1:]:
        out = out * x + c
    return out


@custom_jvp
def ndtri(p):
    """The inverse of ndtr (Cephes' algorithm, as JAX): -inf at 0, inf at 1, NaN outside."""
    p = _inexact(p)
    mcp = jnp.where(p > 1.0 - _EXP_M2, 1.0 - p, p)
    mcp = jnp.where(mcp == 0.0, 0.5, mcp)  # a value that makes no NaN in unused branches
    w = mcp - 0.5
    ww = w * w
    big = -(w + w * ww * (_horner(_P0, ww) / _horner(_Q0, ww))) * _SQRT_2PI
    z = jnp.sqrt(-2.0 * jnp.log(mcp))
    first = z - jnp.log(z) / z
    small = first - _horner(_P2, 1.0 / z) / _horner(_Q2, 1.0 / z) / z
    other = first - _horner(_P1, 1.0 / z) / _horner(_Q1, 1.0 / z) / z
    x = jnp.where(mcp > _EXP_M2, big, jnp.where(z >= 8.0, small, other))
    x = jnp.where(p > 1.0 - _EXP_M2, x, -x)
    return jnp.where(p == 0.0, -jnp.inf, jnp.where(p == 1.0, jnp.inf, x))


@ndtri.defjvp
def _ndtri_jvp(primals, tangents):
    (p,), (t,) = primals, tangents
    x = ndtri(p)
    return x, _SQRT_2PI * jnp.exp(0.5 * (x * x)) * t


def _log_ndtr_series(x, series_order):
    """log of the asymptotic series of ndtr(x) * sqrt(2 pi) (-x) exp(x^2 / 2), x << -1."""
    x2 = x * x
    total = jnp.ones_like(x)
    x2n = x2
    term = 1.0
    for n in range(1, series_order + 1):
        term = term * (2 * n - 1)  # (2n - 1)!!
        if n % 2:
            total = total - term / x2n
        else:
            total = total + term / x2n
        x2n = x2n * x2
    return -0.5 * x2 - jnp.log(-x) - _LOG_SQRT_2PI + jnp.log(total)


def log_ndtr(x, series_order=3):
    """log(ndtr(x)), accurate in both tails: -ndtr(-x) above 8 (float32: 5), an asymptotic
    series below -20 (float32: -10), as JAX."""
    return _log_ndtr(_inexact(x), series_order)


@custom_jvp  # (every argument passed: the Numba inliner does not fill a custom_jvp's defaults)
def _log_ndtr(x, series_order):
    if x.dtype == np.float64:
        lower, upper = -20.0, 8.0
    else:
        lower, upper = -10.0, 5.0
    above = x > upper
    value = ndtr(jnp.where(above, -x, jnp.maximum(x, lower)))
    return jnp.where(above, -value,
                     jnp.where(x > lower, jnp.log(value),
                               _log_ndtr_series(jnp.minimum(x, lower), series_order)))


@_log_ndtr.defjvp
def _log_ndtr_jvp(primals, tangents):
    x, t = primals[0], tangents[0]
    out = _log_ndtr(x, primals[1])
    return out, t * jnp.exp(-0.5 * (x * x) - _LOG_SQRT_2PI - out)


@custom_jvp
def xlogy(x, y):
    """x * log(y), 0 where x == 0 (unless y is NaN)."""
    x, y = _inexact2(x, y)
    return jnp.where((x != 0.0) | jnp.isnan(y), x * jnp.log(y), 0.0)


@xlogy.defjvp
def _xlogy_jvp(primals, tangents):
    (x, y), (tx, ty) = primals, tangents
    out = xlogy(x, y)
    return out, tx * jnp.log(y) + ty * x / y


@custom_jvp
def xlog1py(x, y):
    """x * log1p(y), 0 where x == 0 (unless y is NaN)."""
    x, y = _inexact2(x, y)
    return jnp.where((x != 0.0) | jnp.isnan(y), x * jnp.log1p(y), 0.0)


@xlog1py.defjvp
def _xlog1py_jvp(primals, tangents):
    (x, y), (tx, ty) = primals, tangents
    out = xlog1py(x, y)
    return out, tx * jnp.log1p(y) + ty * x / (1.0 + y)


@custom_jvp
def _xlogx(x):
    return xlogy(x, x)


@_xlogx.defjvp
def _xlogx_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return _xlogx(x), t * (jnp.log(x) + 1.0)


def entr(x):
    """-x log(x) for x > 0, 0 at 0, -inf below."""
    x = _inexact(x)
    return jnp.where(x < 0.0, -jnp.inf, -_xlogx(x))


def gammasgn(x):
    """The sign of gamma(x): NaN at the poles and at NaN, -1 at -0. and where
    floor(x) is odd below 0."""
    x = _inexact(x)
    floor_x = jnp.floor(x)
    negative = x < 0.0
    nan = (negative & (x == floor_x)) | jnp.isnan(x)
    minus = (negative & (jnp.remainder(floor_x, 2.0) != 0.0)) | ((x == 0.0) & jnp.signbit(x))
    return jnp.where(nan, jnp.nan, jnp.where(minus, -1.0, 1.0)).astype(x.dtype)


def gamma(x):
    x = _inexact(x)
    return gammasgn(x) * jnp.exp(gammaln(x))


def _algdiv(a, b):
    """gammaln(b) - gammaln(a + b) for b >= 8 and a <= b (SciPy's cdflib algdiv)."""
    h = a / b
    c = h / (1.0 + h)
    x = 1.0 / (1.0 + h)  # cdflib's (JAX's port uses h / (1 + h): 5e-10 off at (20, 30))
    d = b + (a - 0.5)
    x2 = x * x
    s3 = 1.0 + (x + x2)
    s5 = 1.0 + (x + x2 * s3)
    s7 = 1.0 + (x + x2 * s5)
    s9 = 1.0 + (x + x2 * s7)
    s11 = 1.0 + (x + x2 * s9)
    t = (1.0 / b) ** 2
    w = ((((-0.165322962780713e-02 * s11 * t + 0.837308034031215e-03 * s9) * t
           - 0.595202931351870e-03 * s7) * t + 0.793650666825390e-03 * s5) * t
         - 0.277777777760991e-02 * s3) * t + 0.833333333333333e-01
    w = w * (c / b)
    u = d * jnp.log1p(a / b)
    v = a * (jnp.log(b) - 1.0)
    return jnp.where(u <= v, (w - v) - u, (w - u) - v)


def betaln(a, b):
    """log|B(a, b)|, as JAX: gammaln(a) + gammaln(b) - gammaln(a + b) for max(a, b) < 8,
    else gammaln(a) + algdiv(a, b), which does not cancel for large arguments."""
    a, b = _inexact2(a, b)
    a, b = jnp.minimum(a, b), jnp.maximum(a, b)
    small_b = gammaln(a) + (gammaln(b) - gammaln(a + b))
    return jnp.where(b < 8.0, small_b, gammaln(a) + _algdiv(a, jnp.maximum(b, 8.0)))


def multigammaln(a, d):
    """log of the multivariate gamma function of dimension ``d`` (a Python int)."""
    a = _inexact(a)
    out = jnp.zeros_like(a) + 0.25 * d * (d - 1) * 1.1447298858494002  # log(pi)
    for j in range(d):
        out = out + gammaln(a - 0.5 * j)
    return out


# Cephes' Chebyshev coefficients of i0e (as jax.lax.bessel_i0e): |x| <= 8, then 32 / |x|
_I0E_A = (-4.41534164647933937950e-18, 3.33079451882223809783e-17, -2.43127984654795469359e-16,
          1.71539128555513303061e-15, -1.16853328779934516808e-14, 7.67618549860493561688e-14,
          -4.85644678311192946090e-13, 2.95505266312963983461e-12,
          -1.72682629144155570723e-11, 9.67580903537323691224e-11,
          -5.18979560163526290666e-10, 2.65982372468238665035e-9,
          -1.30002500998624804212e-8, 6.04699502254191894932e-8, -2.67079385394061173391e-7,
          1.11738753912010371815e-6, -4.41673835845875056359e-6, 1.64484480707288970893e-5,
          -5.75419501008210370398e-5, 1.88502885095841655729e-4, -5.76375574538582365885e-4,
          1.63947561694133579842e-3, -4.32430999505057594430e-3, 1.05464603945949983183e-2,
          -2.37374148058994688156e-2, 4.93052842396707084878e-2, -9.49010970480476444210e-2,
          1.71620901522208775349e-1, -3.04682672343198398683e-1, 6.76795274409476084995e-1)
_I0E_B = (-7.23318048787475395456e-18, -4.83050448594418207126e-18, 4.46562142029675999901e-17,
          3.46122286769746109310e-17, -2.82762398051658348494e-16, -3.42548561967721913462e-16,
          1.77256013305652638360e-15, 3.81168066935262242075e-15, -9.55484669882830764870e-15,
          -4.15056934728722208663e-14, 1.54008621752140982691e-14, 3.85277838274214270114e-13,
          7.18012445138366623367e-13, -1.79417853150680611778e-12,
          -1.32158118404477131188e-11, -3.14991652796324136454e-11,
          1.18891471078464383424e-11, 4.94060238822496958910e-10, 3.39623202570838634515e-9,
          2.26666899049817806459e-8, 2.04891858946906374183e-7, 2.89137052083475648297e-6,
          6.88975834691682398426e-5, 3.36911647825569408990e-3, 8.04490411014108831608e-1)


def _chebyshev(x, coefficients):
    b0 = jnp.zeros_like(x)
    b1 = jnp.zeros_like(x)
    b2 = jnp.zeros_like(x)
    for c in coefficients:
        b2 = b1
        b1 = b0
        b0 = x * b1 - b2 + c
    return 0.5 * (b0 - b2)


@custom_jvp
def i0e(x):
    """exp(-|x|) I0(x) (Cephes' Chebyshev series, as JAX; float32 takes the same terms)."""
    x = jnp.abs(_inexact(x))
    big = _chebyshev(32.0 / jnp.maximum(x, 8.0) - 2.0, _I0E_B) / jnp.sqrt(jnp.maximum(x, 8.0))
    return jnp.where(x <= 8.0, _chebyshev(0.5 * x - 2.0, _I0E_A), big)


@i0e.defjvp
def _i0e_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    y = i0e(x)
    return y, t * (i1e(x) - jnp.sign(x) * y)


@custom_jvp
def i1e(x):
    """exp(-|x|) I1(x): the power series (positive terms) up to |x| = 30, then Hankel's
    asymptotic expansion (25 terms)."""
    x = _inexact(x)
    ax = jnp.abs(x)
    small = jnp.minimum(ax, 30.0)
    q = 0.25 * small * small
    term = 0.5 * small
    total = term
    for k in range(1, 70):
        term = term * q / (k * (k + 1))
        total = total + term
    series = total * jnp.exp(-small)
    large = jnp.maximum(ax, 30.0)
    coefficient = jnp.ones_like(large)
    asymptotic = jnp.ones_like(large)
    for k in range(1, 26):
        coefficient = coefficient * -((4.0 - (2 * k - 1) ** 2) / (8.0 * k)) / large
        asymptotic = asymptotic + coefficient
    asymptotic = asymptotic / jnp.sqrt(2 * np.pi * large)
    return jnp.sign(x) * jnp.where(ax <= 30.0, series, asymptotic)


@i1e.defjvp
def _i1e_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    y = i1e(x)
    tiny = jnp.abs(x) <= jnp.finfo(y.dtype).eps
    safe = jnp.where(tiny, 1.0, x)
    return y, t * jnp.where(tiny, 0.5, i0e(safe) - y * (jnp.sign(safe) + 1.0 / safe))


# --- built on lax's special functions and the ones above (JAX's definitions) ------------------

def gammainc(a, x):
    """The regularized lower incomplete gamma function P(a, x) (lax.igamma)."""
    a, x = _inexact2(a, x)
    return lax.igamma(a, x)


def gammaincc(a, x):
    """The regularized upper incomplete gamma function Q(a, x) (lax.igammac)."""
    a, x = _inexact2(a, x)
    return lax.igammac(a, x)


def betainc(a, b, x):
    """The regularized incomplete beta function (lax.betainc)."""
    a, b = _inexact2(a, b)
    a, x = _inexact2(a, x)
    return lax.betainc(a, b, x)


@static_helper
def _no_riemann(q):
    if q is None:
        raise NotImplementedError("Riemann zeta function not implemented; pass q != None to "
                                  "compute the Hurwitz Zeta function.")
    return None


def zeta(x, q=None):
    """The Hurwitz zeta function (JAX's: q is required)."""
    _no_riemann(q)
    x, q = _inexact2(x, q)
    return lax.zeta(x, q)


def i0(x):
    x = _inexact(x)
    return jnp.exp(jnp.abs(x)) * i0e(x)


def i1(x):
    x = _inexact(x)
    return jnp.exp(jnp.abs(x)) * i1e(x)


def beta(a, b):
    a, b = _inexact2(a, b)
    return gammasgn(a) * gammasgn(b) * gammasgn(a + b) * jnp.exp(betaln(a, b))


@static_helper
def _not_exact(exact):
    if exact:
        raise NotImplementedError("factorial with exact=True")
    return None


def factorial(n, exact=False):
    _not_exact(exact)
    n = _inexact(n)
    return jnp.where(n < 0, 0.0, jnp.exp(gammaln(n + 1.0)))


def comb(N, k, *, repetition=False):
    """N choose k through gammaln (0 where N < 0, k < 0 or k > N without repetition)."""
    N, k = _inexact2(N, k)
    if repetition:
        return jnp.where((k == 0) & (N >= 0), 1.0, comb(N + k - 1.0, k))
    ok = (k <= N) & (N >= 0) & (k >= 0)
    safe_n = jnp.where(ok, N, 0.0)
    safe_k = jnp.where(ok, k, 0.0)
    value = jnp.exp(gammaln(safe_n + 1.0) - gammaln(safe_k + 1.0)
                    - gammaln(safe_n + 1.0 - safe_k))
    return jnp.where(ok, value, 0.0)


def poch(z, m):
    """The Pochhammer symbol gamma(z + m) / gamma(z) (1 where m == 0)."""
    z, m = _inexact2(z, m)
    return jnp.where(m == 0.0, 1.0, gamma(z + m) / gamma(z)).astype(z.dtype)


def rel_entr(p, q):
    """p log(p / q) for p, q > 0; 0 for p == 0 <= q; inf otherwise."""
    p, q = _inexact2(p, q)
    both = (p > 0.0) & (q > 0.0)
    safe_p = jnp.where(both, p, 1.0)
    safe_q = jnp.where(both, q, 1.0)
    value = _xlogx(safe_p) - xlogy(safe_p, safe_q)
    return jnp.where(both, value, jnp.where((p == 0.0) & (q >= 0.0), 0.0, jnp.inf))


def kl_div(p, q):
    p, q = _inexact2(p, q)
    return rel_entr(p, q) - p + q


def _boxcox_of_log(log_x, lmbda):
    """(x**lmbda - 1) / lmbda from log(x), log(x) where lmbda == 0 (JAX's formula)."""
    zero = lmbda == 0.0
    safe = jnp.where(zero, 1.0, lmbda)
    return jnp.where(zero, log_x, jnp.expm1(safe * log_x) / safe)


def boxcox(x, lmbda):
    x, lmbda = _inexact2(x, lmbda)
    return _boxcox_of_log(jnp.log(x), lmbda)


def boxcox1p(x, lmbda):
    x, lmbda = _inexact2(x, lmbda)
    return _boxcox_of_log(jnp.log1p(x), lmbda)


@static_helper
def _real_only(name, dtype):
    if dtype.kind == "c":
        raise NotImplementedError(f"astjax: {name} of complex arguments is not implemented")
    return None


def loggamma(x):
    """log(gamma(x)) for x > 0, NaN below (real x, as JAX's)."""
    x = _inexact(x)
    _real_only("loggamma", x.dtype)
    return jnp.where(x > 0.0, gammaln(x), jnp.nan)


from ._special_hyp import hyp1f1, hyp2f1  # noqa: E402,F401  (last: it takes gamma from this module)
