"""Scalar kernels of the special-function ops (``ops/special.py``) for generated Numba code,
in float64 (the caller rounds to the op's dtype). Digamma: reflection below 0, the
recurrence up to 10, then the asymptotic series; polygamma(n >= 1): (-1)^(n+1) n! times the
Hurwitz zeta function, by Cephes' Euler-Maclaurin summation (what SciPy uses); igamma and
igammac: JAX's series and continued fraction. Each compiles once and loads from disk:
inlined into the user's function, lax.igamma's loops over whole arrays took about 9 s of
CPU to compile."""
import math

import numpy as np

from numba import njit

_OPTIONS = dict(cache=True, error_model="numpy")
_MACHEP = 1.11022302462515654042e-16
# Cephes zeta.c: (2k)! / B_2k
_ZETA_A = (12.0, -720.0, 30240.0, -1209600.0, 47900160.0, -1.8924375803183791606e9,
           7.47242496e10, -2.950130727918164224e12, 1.1646782814350067249e14,
           -4.5979787224074726105e15, 1.8152105401943546773e17, -7.1661652561756670113e18)


# the double nearest psi's positive root, and psi there (SciPy's constants)
_ROOT = 1.4616321449683623
_PSI_AT_ROOT = -9.2412655217294275e-17


@njit(**_OPTIONS)
def _digamma_near_root(x):
    """psi(x) = psi(x0) + sum over n >= 1 of (-1)^(n+1) zeta(n+1, x0) (x - x0)^n, as SciPy
    does within 0.3 of the root x0: the recurrence would cancel there."""
    dx = x - _ROOT  # exact (Sterbenz)
    total = _PSI_AT_ROOT
    power = -1.0
    for n in range(1, 100):
        power *= -dx
        term = power * hurwitz_zeta(n + 1.0, _ROOT)
        total += term
        if abs(term) < _MACHEP * abs(total):
            break
    return total


@njit(**_OPTIONS)
def digamma(x):
    x = float(x)
    if math.isnan(x) or x == -math.inf:
        return math.nan
    if x == math.inf:
        return math.inf
    if x <= 0.0 and math.floor(x) == x:
        return math.nan  # poles, as JAX
    if abs(x - _ROOT) < 0.3:
        return _digamma_near_root(x)
    shift = 0.0
    if x < 0.0:  # psi(x) = psi(1 - x) - pi / tan(pi x)
        shift = -math.pi / math.tan(math.pi * (x - math.floor(x + 0.5)))  # exact residue
        x = 1.0 - x
    while x < 10.0:
        shift -= 1.0 / x
        x += 1.0
    z = 1.0 / (x * x)
    # Bernoulli terms B_2k / (2k): 1/12, -1/120, 1/252, -1/240, 1/132, -691/32760, 1/12
    series = z * (1.0 / 12 - z * (1.0 / 120 - z * (1.0 / 252 - z * (
        1.0 / 240 - z * (1.0 / 132 - z * (691.0 / 32760 - z / 12.0))))))
    return shift + math.log(x) - 0.5 / x - series


@njit(**_OPTIONS)
def hurwitz_zeta(s, q):
    """sum over k >= 0 of (k + q)^-s, s > 1 (Cephes' zeta)."""
    if s == 1.0:
        return math.inf
    if s < 1.0 or math.isnan(s) or math.isnan(q):
        return math.nan
    if q <= 0.0:
        if q == math.floor(q):
            return math.inf
        if s != math.floor(s):
            return math.nan
    if q > 1e8:
        return (1.0 / (s - 1.0) + 1.0 / (2.0 * q)) * q ** (1.0 - s)
    total = q ** -s
    a = q
    i = 0
    b = 0.0
    while i < 9 or a <= 9.0:
        i += 1
        a += 1.0
        b = a ** -s
        total += b
        if abs(b / total) < _MACHEP:
            return total
    w = a
    total += b * w / (s - 1.0)
    total -= 0.5 * b
    a = 1.0
    k = 0.0
    for j in range(12):
        a *= s + k
        b /= w
        t = a * b / _ZETA_A[j]
        total += t
        if abs(t / total) < _MACHEP:
            return total
        k += 1.0
        a *= s + k
        b /= w
        k += 1.0
    return total


@njit(**_OPTIONS)
def polygamma(n, x):
    n = float(n)
    x = float(x)
    if not (n >= 0.0 and math.floor(n) == n):
        return math.nan
    if n == 0.0:
        return digamma(x)
    sign = 1.0 if int(n) % 2 == 1 else -1.0
    return sign * math.gamma(n + 1.0) * hurwitz_zeta(n + 1.0, x)


# --- the regularized incomplete gamma functions: JAX's algorithm (lax/incomplete.py) one
# element at a time, in float64: the series of P(a, x) for x < 1 or x <= a, else the
# continued fraction of Q(a, x), each run until its term falls below eps

_LOG_MAX = 709.782712893384  # log of the largest double


@njit(**_OPTIONS)
def _log_ax(a, x):
    return a * math.log(x) - x - math.lgamma(a)


@njit(**_OPTIONS)
def _igamma_series(a, x, ax):
    r, c, ans = a, 1.0, 1.0
    while True:
        r += 1.0
        c *= x / r
        ans += c
        if not c / ans > _MACHEP:
            return ans * ax / a


@njit(**_OPTIONS)
def _igammac_fraction(a, x, ax):
    y = 1.0 - a
    z = x + y + 1.0
    c = 0.0
    pkm2, qkm2 = 1.0, x
    pkm1, qkm1 = x + 1.0, z * x
    ans = pkm1 / qkm1
    for _ in range(2000):
        c += 1.0
        y += 1.0
        z += 2.0
        yc = y * c
        pk = pkm1 * z - pkm2 * yc
        qk = qkm1 * z - qkm2 * yc
        t = 1.0
        if qk != 0.0:
            r = pk / qk
            t = abs((ans - r) / r)
            ans = r
        scale = _MACHEP if abs(pk) > 1.0 / _MACHEP else 1.0
        pkm2, pkm1, qkm2, qkm1 = pkm1 * scale, pk * scale, qkm1 * scale, qk * scale
        if not t > _MACHEP:
            break
    return ans * ax


@njit(**_OPTIONS)
def _igamma_special(a, x):
    """Outside the domain (as JAX: a == x == 0 too): the result is NaN."""
    return math.isnan(a) or math.isnan(x) or x < 0.0 or a < 0.0 or (a == 0.0 and x == 0.0)


@njit(**_OPTIONS)
def igamma(a, x):
    """P(a, x), with JAX's values at the edges (NaN for 0 < x < 1 with a == 0, for an
    infinite a with a finite x)."""
    a, x = float(a), float(x)
    if _igamma_special(a, x):
        return math.nan
    if x == 0.0:
        return 0.0
    if x == math.inf:
        return 1.0
    log_ax = _log_ax(a, x)
    ax = math.exp(log_ax)
    if x >= 1.0 and x > a:
        if log_ax < -_LOG_MAX:
            return 1.0 - (x + 1.0) / ((x + 2.0 - a) * x) * ax  # the fraction's first term
        return 1.0 - _igammac_fraction(a, x, ax)
    if log_ax < -_LOG_MAX:
        return ax / a  # the series' first term: 0, or NaN for a == 0
    return _igamma_series(a, x, ax)


@njit(**_OPTIONS)
def igammac(a, x):
    """Q(a, x) = 1 - P(a, x), with JAX's values at the edges."""
    a, x = float(a), float(x)
    if _igamma_special(a, x):
        return math.nan
    if x == math.inf or a == 0.0:
        return 0.0
    log_ax = _log_ax(a, x)
    ax = math.exp(log_ax)
    if x < 1.0 or x < a:
        if log_ax < -_LOG_MAX:
            return 1.0 - ax / a
        return 1.0 - _igamma_series(a, x, ax)
    if log_ax < -_LOG_MAX:
        return (x + 1.0) / ((x + 2.0 - a) * x) * ax  # the fraction's first term
    return _igammac_fraction(a, x, ax)


# --- the regularized incomplete beta function: JAX's continued fraction (DLMF 8.17.22, the
# modified Lentz method), one element at a time in float64

_SMALL = _MACHEP  # half of float64's eps: Lentz's floor and the convergence test
_TINY2 = 2 * 2.2250738585072014e-308


@njit(**_OPTIONS)
def _betainc_fraction(a, b, x):
    h = _SMALL  # the fraction's first denominator, 0, raised to the floor
    c, d = h, 0.0
    for n in range(1, 600):
        m = float((n - 1) // 2)
        if n == 1:
            num = 1.0
        elif n % 2 == 0:
            num = -(a + b) * x / (a + 1.0) if m == 0.0 else \
                -(a + m) * (a + b + m) * x / ((a + 2.0 * m) * (a + 2.0 * m + 1.0))
        else:
            num = m * (b - m) * x / ((a + 2.0 * m - 1.0) * (a + 2.0 * m))
        c = 1.0 + num / c
        if abs(c) < _SMALL:
            c = _SMALL
        d = 1.0 + num * d
        d = 1.0 / (_SMALL if abs(d) < _SMALL else d)
        delta = c * d
        h *= delta
        if not abs(delta - 1.0) >= _SMALL:
            break
    return h


@njit(**_OPTIONS)
def betainc(a, b, x):
    """I_x(a, b), with JAX's values outside a, b > 0 and 0 < x < 1."""
    a, b, x = float(a), float(b), float(x)
    if math.isnan(a) or math.isnan(b) or math.isnan(x) or a < 0.0 or b < 0.0 or x < 0.0 \
            or x > 1.0:
        return math.nan
    a_zero = a == 0.0 or b == math.inf
    b_zero = b == 0.0 or a == math.inf
    if a_zero and b_zero:
        return math.nan
    if (a_zero and x != 0.0) or (b_zero and x == 1.0):
        return 1.0
    if b_zero or a_zero:
        return 0.0
    fast = x < (a + 1.0) / (a + b + 2.0)
    if not fast:  # I_x(a, b) = 1 - I_{1-x}(b, a)
        a, b, x = b, a, 1.0 - x
    lbeta_small_a = math.lgamma(b) - math.lgamma(a + b)
    if a < _TINY2:  # a * Gamma(a) -> 1 as a -> 0+
        factor = math.exp(math.log1p(-x) * b - lbeta_small_a)
    else:
        factor = math.exp(math.log(x) * a + math.log1p(-x) * b - math.lgamma(a)
                          - lbeta_small_a) / a
    out = _betainc_fraction(a, b, x) * factor
    return out if fast else 1.0 - out


# --- the derivative of a Gamma(a) sample x in a (implicit reparameterization): JAX's
# random_gamma_grad, the series or continued fraction of d/da of P(a, x) tracked along

@njit(**_OPTIONS)
def _sample_grad_series(a, x, log_ax):
    r, c, ans, dc_da, dans_da = a, 1.0, 1.0, 0.0, 0.0
    if not log_ax < -_LOG_MAX:  # (JAX's loops run unless P underflows)
        while True:
            r += 1.0
            dc_da = dc_da * (x / r) - (c * x) / (r * r)
            dans_da += dc_da
            c *= x / r
            ans += c
            if not abs(dc_da / dans_da) > _MACHEP:
                break
    return -(dans_da + ans * (math.log(x) - digamma(a + 1.0))) * x / a


@njit(**_OPTIONS)
def _sample_grad_fraction(a, x, log_ax):
    y = 1.0 - a
    z = x + y + 1.0
    pkm1, qkm1, pkm2, qkm2 = x + 1.0, z * x, 1.0, x
    ans = pkm1 / qkm1
    dpkm2, dqkm2, dpkm1, dqkm1 = 0.0, 0.0, 0.0, -x
    dans_da = -ans * dqkm1 / qkm1
    if not log_ax < -_LOG_MAX:  # (JAX's loops run unless P underflows)
        for c in range(1, 2001):
            y += 1.0
            z += 2.0
            yc = y * c
            pk = pkm1 * z - pkm2 * yc
            qk = qkm1 * z - qkm2 * yc
            dpk = dpkm1 * z - pkm1 - dpkm2 * yc + pkm2 * c
            dqk = dqkm1 * z - qkm1 - dqkm2 * yc + qkm2 * c
            change = 1.0
            if qk != 0.0:
                ans = pk / qk
                new = (dpk - ans * dqk) / qk
                change = abs(new - dans_da)
                dans_da = new
            scale = _MACHEP if abs(pk) > 1.0 / _MACHEP else 1.0
            pkm2, pkm1, qkm2, qkm1 = pkm1 * scale, pk * scale, qkm1 * scale, qk * scale
            dpkm2, dqkm2, dpkm1, dqkm1 = dpkm1 * scale, dqkm1 * scale, dpk * scale, dqk * scale
            if not change > _MACHEP:
                break
    return (dans_da + ans * (math.log(x) - digamma(a))) * x


@njit(**_OPTIONS)
def random_gamma_grad(a, x):
    a, x = float(a), float(x)
    if math.isnan(a) or math.isnan(x) or x < 0.0 or a <= 0.0:
        return math.nan
    if x == 0.0:
        return 0.0
    log_ax = _log_ax(a, x)
    if x > 1.0 and x > a:
        return _sample_grad_fraction(a, x, log_ax)
    return _sample_grad_series(a, x, log_ax)


@njit(**_OPTIONS)
def random_gamma_grad_array(a, x):
    """random_gamma_grad over flat float64 arrays (the python backend's op)."""
    out = np.empty(a.shape[0])
    for i in range(a.shape[0]):
        out[i] = random_gamma_grad(a[i], x[i])
    return out
