"""``lax.igamma``, ``igammac``, ``igamma_grad_a``, ``random_gamma_grad`` and ``betainc``:
the regularized incomplete gamma and beta functions, ported from JAX 0.10.2
(``jax/_src/lax/special.py``, itself XLA's math.cc): a power series or a continued
fraction evaluated in a ``lax.while_loop`` until every element has converged. igamma and
igammac are ops (``ops/special.py``: SciPy's values with JAX's at the edges eagerly, JAX's
algorithm one element at a time under Numba) carrying JAX's derivatives (a custom_jvp: the
closed form in ``x``, ``igamma_grad_a`` in ``a``, which runs the loops here); betainc is an
op too, differentiated through the loop here (JAX gives only the derivative in ``x`` and
raises for ``a`` and ``b``).
"""
import numpy as np

import astjax.numpy as jnp

from ..ad.custom import custom_jvp
from ..ad.api import jvp
from ..ops.special import betainc as _betainc_op, digamma, gammaln
from ..ops.special import igamma as _igamma_op, igammac as _igammac_op
from ..ops.special import random_gamma_grad as _random_gamma_grad_op
from ..random.checks import static_helper  # evaluated while generating code
from .control_flow import while_loop


@static_helper
def _info(dtype):
    """(eps, log of the largest finite value, twice the smallest normal) of ``dtype``."""
    f = np.finfo(dtype)
    return float(f.eps), float(np.log(f.max)), float(f.tiny) * 2


def _floats(a, x):
    """``a`` and ``x`` promoted to one inexact dtype and broadcast together."""
    a, x = jnp.asarray(a), jnp.asarray(x)
    dtype = _inexact_of(jnp.result_type(a, x))
    zero = jnp.zeros_like(a, dtype) + jnp.zeros_like(x, dtype)  # (broadcasts on Numba too)
    return a.astype(dtype) + zero, x.astype(dtype) + zero


def _floats3(a, b, x):
    a, b, x = jnp.asarray(a), jnp.asarray(b), jnp.asarray(x)
    dtype = _inexact_of(jnp.result_type(a, b, x))
    zero = jnp.zeros_like(a, dtype) + jnp.zeros_like(b, dtype) + jnp.zeros_like(x, dtype)
    return a.astype(dtype) + zero, b.astype(dtype) + zero, x.astype(dtype) + zero


@static_helper
def _inexact_of(dtype):
    return np.dtype(dtype) if np.dtype(dtype).kind in "fc" else jnp.float32


# ---- the incomplete gamma function -------------------------------------------------------

def _igamma_series(ax, x, a, enabled, eps, mode):
    """The series of P(a, x) (``mode`` "value") or of its derivative in ``a``
    ("derivative"); special_kernels.random_gamma_grad follows the derivative's terms."""
    def not_done(state):
        return jnp.any(state[0])

    def step(state):
        on, r, c, ans, dc_da, dans_da = state
        r_ = r + 1
        dc_da_ = dc_da * (x / r_) - (c * x) / (r_ * r_)
        dans_da_ = dans_da + dc_da_
        c_ = c * (x / r_)
        ans_ = ans + c_
        if mode != "value":
            going = jnp.logical_and(on, jnp.abs(dc_da_ / dans_da_) > eps)
        else:
            going = jnp.logical_and(on, c_ / ans_ > eps)
        return (going, jnp.where(on, r_, r), jnp.where(on, c_, c), jnp.where(on, ans_, ans),
                jnp.where(on, dc_da_, dc_da), jnp.where(on, dans_da_, dans_da))

    one, zero = jnp.ones_like(a), jnp.zeros_like(a)
    state = while_loop(not_done, step, (enabled, a, one, one, zero, zero))
    ans, dans_da = state[3], state[5]
    if mode == "value":
        return ans * ax / a
    dlogax_da = jnp.log(x) - digamma(a + 1)
    return ax * (ans * dlogax_da + dans_da) / a


def _igammac_fraction(ax, x, a, enabled, eps, mode):
    """The continued fraction of Q(a, x) (``mode`` as for the series)."""
    def not_done(state):
        return jnp.logical_and(state[5] < 2000, jnp.any(state[0]))

    def step(state):
        (on, ans, t, y, z, c, pkm1, qkm1, pkm2, qkm2, dpkm2_da, dqkm2_da, dpkm1_da, dqkm1_da,
         dans_da) = state
        c_ = c + 1
        y_ = y + 1
        z_ = z + 2
        yc = y_ * c_
        pk = pkm1 * z_ - pkm2 * yc
        qk = qkm1 * z_ - qkm2 * yc
        nonzero = qk != 0
        r = pk / qk
        t_ = jnp.where(nonzero, jnp.abs((ans - r) / r), jnp.ones_like(r))
        ans_ = jnp.where(nonzero, r, ans)
        dpk_da = dpkm1_da * z_ - pkm1 - dpkm2_da * yc + pkm2 * c_
        dqk_da = dqkm1_da * z_ - qkm1 - dqkm2_da * yc + qkm2 * c_
        dans_da_ = jnp.where(nonzero, (dpk_da - ans_ * dqk_da) / qk, dans_da)
        grad_change = jnp.where(nonzero, jnp.abs(dans_da_ - dans_da), jnp.ones_like(dans_da))
        rescale = jnp.abs(pk) > 1 / eps
        scale = jnp.where(rescale, eps, 1.0)
        pkm2_, pkm1_, qkm2_, qkm1_ = pkm1 * scale, pk * scale, qkm1 * scale, qk * scale
        dpkm2_, dqkm2_ = dpkm1_da * scale, dqkm1_da * scale
        dpkm1_, dqkm1_ = dpk_da * scale, dqk_da * scale
        if mode != "value":
            going = jnp.logical_and(on, grad_change > eps)
        else:
            going = jnp.logical_and(on, t_ > eps)
        return (going, jnp.where(on, ans_, ans), jnp.where(on, t_, t), jnp.where(on, y_, y),
                jnp.where(on, z_, z), c_, jnp.where(on, pkm1_, pkm1),
                jnp.where(on, qkm1_, qkm1), jnp.where(on, pkm2_, pkm2),
                jnp.where(on, qkm2_, qkm2), jnp.where(on, dpkm2_, dpkm2_da),
                jnp.where(on, dqkm2_, dqkm2_da), jnp.where(on, dpkm1_, dpkm1_da),
                jnp.where(on, dqkm1_, dqkm1_da), jnp.where(on, dans_da_, dans_da))

    y = 1 - a
    z = x + y + 1
    pkm1 = x + 1
    qkm1 = z * x
    ans = pkm1 / qkm1
    zero = jnp.zeros_like(x)
    dqkm1_da = -x
    dans_da = (zero - ans * dqkm1_da) / qkm1
    state = while_loop(not_done, step,
                       (enabled, ans, jnp.ones_like(x), y, z, jnp.zeros((), jnp.int32), pkm1,
                        qkm1, jnp.ones_like(x), x, zero, zero, zero, dqkm1_da, dans_da))
    ans, dans_da = state[1], state[14]
    if mode == "value":
        return ans * ax
    dlogax_da = jnp.log(x) - digamma(a)
    return ax * (ans * dlogax_da + dans_da)


def _setup(a, x):
    """(eps, is_nan, x == 0, x == inf, a == 0, ax = x^a e^-x / Gamma(a), its underflow)."""
    eps, log_max, _ = _info(a.dtype)
    log_ax = a * jnp.log(x) - x - gammaln(a)
    return (eps, jnp.logical_or(jnp.isnan(a), jnp.isnan(x)), x == 0, x == jnp.inf, a == 0,
            jnp.exp(log_ax), log_ax < -log_max)


def _in_a(a, x):
    """The derivative of igamma in ``a``."""
    a, x = _floats(a, x)
    eps, is_nan, x_zero, _, _, ax, underflow = _setup(a, x)
    domain_error = jnp.logical_or(x < 0, a <= 0)
    use_igammac = jnp.logical_and(x > 1, x > a)
    enabled = ~(x_zero | domain_error | underflow | is_nan)
    mode = "derivative"
    out = jnp.where(use_igammac,
                    -_igammac_fraction(ax, x, a, enabled & use_igammac, eps, mode),
                    _igamma_series(ax, x, a, enabled & ~use_igammac, eps, mode))
    out = jnp.where(x_zero, 0.0, out)
    return jnp.where(jnp.logical_or(domain_error, is_nan), jnp.nan, out)


def igamma_grad_a(a, x):
    """The derivative of ``igamma(a, x)`` in ``a``."""
    return _in_a(a, x)


def random_gamma_grad(a, x):
    """The derivative in ``a`` of a Gamma(a) sample ``x`` (implicit reparameterization): an
    op, per element (special_kernels.py: the series and fraction below, in float64)."""
    a, x = _floats(a, x)
    return _random_gamma_grad_op(a, x)


def _igamma_tangent(a, x, ta, tx):
    """The tangent of P(a, x) (Q = 1 - P's is its negative)."""
    dx = jnp.exp(-x + (a - 1) * jnp.log(x) - gammaln(a))
    return dx * tx + igamma_grad_a(a, x) * ta


@custom_jvp
def _igamma_cj(a, x):
    return _igamma_op(a, x)


@_igamma_cj.defjvp
def _igamma_jvp(primals, tangents):
    (a, x), (ta, tx) = primals, tangents
    return _igamma_cj(a, x), _igamma_tangent(a, x, ta, tx)


@custom_jvp
def _igammac_cj(a, x):
    return _igammac_op(a, x)


@_igammac_cj.defjvp
def _igammac_jvp(primals, tangents):
    (a, x), (ta, tx) = primals, tangents
    return _igammac_cj(a, x), -_igamma_tangent(a, x, ta, tx)


def igamma(a, x):
    """The regularized lower incomplete gamma function P(a, x); NaN for ``x < 0``,
    ``a < 0`` or ``a == x == 0``."""
    a, x = _floats(a, x)
    return _igamma_cj(a, x)


def igammac(a, x):
    """The regularized upper incomplete gamma function Q(a, x) = 1 - P(a, x)."""
    a, x = _floats(a, x)
    return _igammac_cj(a, x)


# ---- the incomplete beta function --------------------------------------------------------

def _betainc_fraction(a, b, x, iterations, small):
    """The continued fraction of I_x(a, b) (DLMF 8.17.22) by the modified Lentz method."""
    def numerator(n):
        m = ((n - 1) // 2).astype(a.dtype)
        zero_numerator = -(a + b) * x / (a + 1)
        even = jnp.where(m == 0, zero_numerator,
                         -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1)))
        odd = m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m))
        return jnp.where(n == 1, jnp.ones_like(x), jnp.where(n % 2 == 0, even, odd))

    def denominator(n):
        return jnp.where(n == 0, jnp.zeros_like(x), jnp.ones_like(x))

    def not_done(state):
        return jnp.logical_and(state[0] < iterations, state[1])

    def step(state):
        n, _, c, d, h = state
        num, den = numerator(n), denominator(n)
        c_ = den + num / c
        c_ = jnp.where(jnp.abs(c_) < small, small, c_)
        d_ = den + num * d
        d_ = 1 / jnp.where(jnp.abs(d_) < small, small, d_)
        delta = c_ * d_
        return (n + 1, jnp.any(jnp.abs(delta - 1) >= small), c_, d_, h * delta)

    h = denominator(0)
    h = jnp.where(jnp.abs(h) < small, small, h)
    state = while_loop(not_done, step, (jnp.ones((), jnp.int32), jnp.asarray(True), h,
                                        jnp.zeros_like(h), h))
    return state[4]


@static_helper
def _iterations(dtype):
    return 200 if np.dtype(dtype) == np.float32 else 600


def betainc(a, b, x):
    """The regularized incomplete beta function I_x(a, b); NaN outside ``a, b >= 0``,
    ``0 <= x <= 1``."""
    a, b, x = _floats3(a, b, x)
    return _betainc_cj(a, b, x)


@custom_jvp
def _betainc_cj(a, b, x):
    return _betainc_op(a, b, x)


@_betainc_cj.defjvp
def _betainc_jvp(primals, tangents):
    # the derivative of the loops below, in x, a and b (JAX's raises for a and b)
    return _betainc_cj(*primals), jvp(_betainc_loops, primals, tangents)[1]


def _betainc_loops(a, b, x):
    """I_x(a, b) in jnp: the op's value, computed by JAX's algorithm, for derivatives."""
    eps, _, tiny2 = _info(a.dtype)
    a_zero = jnp.logical_or(a == 0, b == jnp.inf)
    b_zero = jnp.logical_or(b == 0, a == jnp.inf)
    x_zero, x_one = x == 0, x == 1
    is_nan = jnp.isnan(a) | jnp.isnan(b) | jnp.isnan(x)
    result_zero = (b_zero & ~x_one) | (a_zero & x_zero)
    result_one = (a_zero & ~x_zero) | (b_zero & x_one)
    result_nan = (a < 0) | (b < 0) | (x < 0) | (x > 1) | (a_zero & b_zero) | is_nan
    # the fraction converges fast for x < (a + 1) / (a + b + 2); else I_x(a, b) =
    # 1 - I_{1-x}(b, a) (DLMF 8.17.4)
    fast = x < (a + 1) / (a + b + 2)
    a, b = jnp.where(fast, a, b), jnp.where(fast, b, a)
    x = jnp.where(fast, x, 1 - x)
    fraction = _betainc_fraction(a, b, x, _iterations(a.dtype), eps / 2)
    lbeta_small_a = gammaln(b) - gammaln(a + b)
    lbeta = gammaln(a) + lbeta_small_a
    # a * Gamma(a) -> 1 as a -> 0+
    factor = jnp.where(a < tiny2, jnp.exp(jnp.log1p(-x) * b - lbeta_small_a),
                       jnp.exp(jnp.log(x) * a + jnp.log1p(-x) * b - lbeta) / a)
    out = fraction * factor
    out = jnp.where(fast, out, 1 - out)
    out = jnp.where(result_zero, 0.0, out)
    out = jnp.where(result_one, 1.0, out)
    return jnp.where(result_nan, jnp.nan, out)
