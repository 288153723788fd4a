"""hyp1f1 and hyp2f1 of ``astjax.scipy.special``: JAX 0.10.2's algorithms (Pearson, Olver
and Porter 2014: 1F1's Taylor series for |x| < 100 and asymptotic series above; 2F1's
Taylor series, terminating sum and AMS55 15.3.10-12 digamma transformation near x = 1,
Euler's transformation for c - a - b <= -1), at most 250 terms each, with JAX's custom
derivatives (series in the parameters, the parameters shifted by one in x). JAX runs each
series per element in a while_loop; here on the whole array, an element frozen once its
loop would have stopped, so the values are the same; each branch runs on inputs of its
own (harmless ones elsewhere), so no element lengthens another's loop."""
import numpy as np

import astjax.numpy as jnp
from astjax._src.ad.custom import custom_jvp
from astjax._src.ops.special import digamma
from astjax._src.random.checks import static_helper  # evaluated while generating code
from astjax.numpy._composites import _inexact

from ._special_erf import _kind
from .special import gamma

_MAX_TERMS = 250


@static_helper
def _eps(dtype):
    return float(np.finfo(dtype).eps)


def _taylor(a, b, x):
    eps = _eps(x.dtype)
    total = jnp.ones_like(x)
    term = a / b * x
    active = jnp.abs(term) / jnp.abs(total) > eps
    k = 1
    while jnp.any(active) & (k < _MAX_TERMS):
        total = jnp.where(active, total + term, total)
        term = jnp.where(active, term * ((a + k) / (b + k) * x / (k + 1)), term)
        k = k + 1
        active = active & (jnp.abs(term) / jnp.abs(total) > eps)
    return total


def _asymptotic(a, b, x):
    eps = _eps(x.dtype)
    total = jnp.ones_like(x)
    term = (b - a) * (1.0 - a) / x
    active = jnp.abs(term) / jnp.abs(total) > eps
    k = 1
    while jnp.any(active) & (k < _MAX_TERMS):
        total = jnp.where(active, total + term, total)
        term = jnp.where(active, term * ((b - a + k) * (1.0 - a + k) / (k + 1) / x), term)
        k = k + 1
        active = active & (jnp.abs(term) / jnp.abs(total) > eps)
    return gamma(b) / gamma(a) * jnp.exp(x) * x ** (a - b) * total


def _parameter_derivative(a, b, x, wrt_a):
    """d/da or d/db of the Taylor series, term by term (JAX's, for every x)."""
    eps = _eps(x.dtype)
    total = jnp.zeros_like(x)
    term = a / b * x
    active = jnp.abs(term) / jnp.abs(total) > eps
    k = 1
    while jnp.any(active) & (k < _MAX_TERMS):
        if wrt_a:
            factor = digamma(a + k) - digamma(a)
        else:
            factor = digamma(b) - digamma(b + k)
        total = jnp.where(active, total + term * factor, total)
        term = jnp.where(active, term * ((a + k) / (b + k) * x / (k + 1)), term)
        k = k + 1
        active = active & (jnp.abs(term) / jnp.abs(total) > eps)
    return total


@custom_jvp
def _hyp1f1(a, b, x):
    near = jnp.abs(x) < 100.0
    value = jnp.where(near, _taylor(a, b, jnp.where(near, x, 0.0)),
                      _asymptotic(a, b, jnp.where(near, 100.0, x)))
    # JAX's conventions: 1 where a = 0 (b = 0 too), exp(x) where a = b, inf where b = 0
    nonzero = a != 0.0
    value = jnp.where(a == 0.0, 1.0, value)
    value = jnp.where((a == b) & nonzero, jnp.exp(x), value)
    return jnp.where((b == 0.0) & nonzero, jnp.inf, value)


@_hyp1f1.defjvp
def _hyp1f1_jvp(primals, tangents):
    (a, b, x), (da, db, dx) = primals, tangents
    out = _hyp1f1(a, b, x)
    return out, (_parameter_derivative(a, b, x, True) * da
                 + _parameter_derivative(a, b, x, False) * db
                 + a / b * _hyp1f1(a + 1.0, b + 1.0, x) * dx)


def hyp1f1(a, b, x):
    """The confluent hypergeometric function 1F1(a; b; x) of real arguments (JAX's series:
    1 at a = b = 0, unlike SciPy; inaccurate where the function is large)."""
    a = _inexact(a)
    b = _inexact(b)
    x = _inexact(x)
    zero = jnp.zeros_like(a + b + x)  # one dtype and shape, as JAX's vectorize
    a, b, x = a + zero, b + zero, x + zero
    if _kind(x.dtype) == "c":
        raise ValueError("hyp1f1 does not support complex-valued inputs.")
    return _hyp1f1(a, b, x)


# --- hyp2f1 ---------------------------------------------------------------------------------

def _hyp2f1_series(a, b, c, x):
    eps = _eps(x.dtype)
    total = jnp.zeros_like(x)
    term = jnp.ones_like(x)
    active = jnp.abs(term) > eps * jnp.abs(total)
    k = 1
    while jnp.any(active) & (k < _MAX_TERMS):
        total = jnp.where(active, total + term, total)
        term = jnp.where(active, term * ((a + k - 1) * (b + k - 1) / (c + k - 1) / k * x), term)
        k = k + 1
        active = active & (jnp.abs(term) > eps * jnp.abs(total))
    return total


def _hyp2f1_terminal(a, b, c, x):
    """The finite sum when a or b is a non-positive integer: the one of larger magnitude
    (below |c| if c is a non-positive integer) bounds it."""
    eps = _eps(x.dtype) * 50
    swap = (b < a) & (jnp.abs(b - jnp.round(b)) < eps) \
        & ~((c % 1 == 0) & (c <= 0) & (c > b))
    a, b = jnp.where(swap, b, a), jnp.where(swap, a, b)
    a = jnp.abs(a)
    total = jnp.ones_like(x)
    term = jnp.ones_like(x)
    i = 1.0
    active = i < a + 1.0
    while jnp.any(active):
        term = jnp.where(active, term * (-(a - i + 1) / (c + i - 1) * (b + i - 1) / i * x), term)
        total = jnp.where(active, total + term, total)
        i = i + 1.0
        active = i < a + 1.0
    return total


def _hyp2f1_digamma(a, b, c, x):
    """Near x = 1 with c - a - b near an integer: AMS55 15.3.10-12."""
    eps = _eps(x.dtype)
    d = c - a - b
    s = 1.0 - x
    rd = jnp.round(d)
    up = rd >= 0
    e = jnp.where(up, d, -d)
    d1 = jnp.where(up, d, 0.0)
    d2 = jnp.where(up, 0.0, d)
    ard = jnp.where(up, rd, -rd).astype(np.int32)
    ax = jnp.log(s)
    y = digamma(jnp.ones_like(x)) + digamma(1.0 + e) - digamma(a + d1) - digamma(b + d1) - ax
    y = y / gamma(e + 1.0)
    p = (a + d1) * (b + d1) * s / gamma(e + 2.0)
    q = y
    t = jnp.ones_like(x)
    active = jnp.abs(q) >= eps * jnp.abs(y)
    while jnp.any(active & (t < _MAX_TERMS)):
        active = active & (t < _MAX_TERMS)
        r = digamma(1.0 + t) + digamma(1.0 + t + e) - digamma(a + t + d1) \
            - digamma(b + t + d1) - ax
        q = jnp.where(active, p * r, q)
        y = jnp.where(active, y + q, y)
        p = jnp.where(active, p * (s * (a + t + d1) / (t + 1.0)), p)
        p = jnp.where(active, p * ((b + t + d1) / (t + 1.0 + e)), p)
        t = jnp.where(active, t + 1.0, t)
        active = active & (jnp.abs(q) >= eps * jnp.abs(y))
    y1 = jnp.ones_like(x)
    p = jnp.ones_like(x)
    t = jnp.zeros_like(x)
    i = 1
    while jnp.any(i < ard):
        more = i < ard
        r = 1.0 - e + t
        p = jnp.where(more, p * (s * (a + t + d2) * (b + t + d2) / r), p)
        t = jnp.where(more, t + 1.0, t)
        p = jnp.where(more, p / t, p)
        y1 = jnp.where(more, y1 + p, y1)
        i = i + 1
    gamma_c = gamma(c)
    y1 = y1 * (gamma(e) * gamma_c / (gamma(a + d1) * gamma(b + d1)))
    y2 = y * (gamma_c / (gamma(a + d2) * gamma(b + d2)))
    y2 = jnp.where((ard & 1) != 0, -y2, y2)
    q = s ** rd
    total = jnp.where(rd > 0, y2 * q + y1, y2 + y1 * q)
    return jnp.where(rd == 0, y * gamma_c / (gamma(a) * gamma(b)), total)


def _hyp2f1_terminal_or_series(a, b, c, x, used):
    """JAX's choice among the series, the digamma transformation and the finite sum, at
    the elements ``used``; each runs on harmless inputs elsewhere."""
    eps = _eps(x.dtype) * 50
    d = c - a - b
    neg_int = ((a <= 0) & (jnp.abs(a - jnp.round(a)) < eps)) \
        | ((b <= 0) & (jnp.abs(b - jnp.round(b)) < eps))
    transform = (x > 0.9) & ~neg_int & ~(jnp.abs(d - jnp.round(d)) >= eps) & used
    terminal = neg_int & used
    series = used & ~transform & ~terminal
    one = jnp.ones_like(x)
    out = _hyp2f1_series(jnp.where(series, a, one), jnp.where(series, b, one),
                         jnp.where(series, c, one), jnp.where(series, x, 0.0))
    out = jnp.where(transform, _hyp2f1_digamma(
        jnp.where(transform, a, one), jnp.where(transform, b, one),
        jnp.where(transform, c, 3.0), jnp.where(transform, x, 0.95)), out)
    return jnp.where(terminal, _hyp2f1_terminal(
        jnp.where(terminal, a, 0.0), jnp.where(terminal, b, 0.0), jnp.where(terminal, c, one),
        jnp.where(terminal, x, 0.0)), out)


@custom_jvp
def _hyp2f1(a, b, c, x):
    eps = _eps(x.dtype) * 50
    d = c - a - b
    s = 1.0 - x
    ca = c - a
    cb = c - b
    # JAX's index, first match wins
    one = (x == 0) | (((a == 0) | (b == 0)) & (c != 0))
    inf = ~one & ((c == 0) | ((c < 0) & (c % 1 == 0)))
    rest = ~(one | inf)
    euler = rest & (d <= -1) & ~((jnp.abs(d - jnp.round(d)) >= eps) & (s < 0))
    rest = rest & ~euler
    inf = inf | (rest & (d <= 0) & (x == 1))
    rest = rest & ~((d <= 0) & (x == 1))
    b_is_c = rest & (x < 1) & (b == c)
    rest = rest & ~b_is_c
    a_is_c = rest & (x < 1) & (a == c)
    rest = rest & ~a_is_c
    inf = inf | (rest & (x > 1))
    rest = rest & ~(x > 1)
    at_one = rest & (x == 1)
    direct = rest & ~(x == 1)
    out = _hyp2f1_terminal_or_series(a, b, c, x, direct)
    out = jnp.where(euler, s ** d * _hyp2f1_terminal_or_series(ca, cb, c, x, euler), out)
    out = jnp.where(at_one, gamma(c) * gamma(d) / (gamma(ca) * gamma(cb)), out)
    out = jnp.where(a_is_c, s ** (-b), out)
    out = jnp.where(b_is_c, s ** (-a), out)
    out = jnp.where(inf, jnp.inf, out)
    return jnp.where(one, 1.0, out)


def _hyp2f1_parameter_derivative(a, b, c, x, which):
    """d/da, d/db or d/dc of the series, term by term (JAX's)."""
    eps = _eps(x.dtype)
    total = jnp.zeros_like(x)
    term = a * b / c * x
    active = jnp.abs(term) / jnp.abs(total) > eps
    k = 1
    while jnp.any(active) & (k < _MAX_TERMS):
        if which == 0:
            factor = digamma(a + k) - digamma(a)
        elif which == 1:
            factor = digamma(b + k) - digamma(b)
        else:
            factor = digamma(c) - digamma(c + k)
        total = jnp.where(active, total + term * factor, total)
        term = jnp.where(active, term * ((a + k) * (b + k) / (c + k) / (k + 1) * x), term)
        k = k + 1
        active = active & (jnp.abs(term) / jnp.abs(total) > eps)
    return total


@_hyp2f1.defjvp
def _hyp2f1_jvp(primals, tangents):
    (a, b, c, x), (da, db, dc, dx) = primals, tangents
    out = _hyp2f1(a, b, c, x)
    return out, (_hyp2f1_parameter_derivative(a, b, c, x, 0) * da
                 + _hyp2f1_parameter_derivative(a, b, c, x, 1) * db
                 + _hyp2f1_parameter_derivative(a, b, c, x, 2) * dc
                 + a * b / c * _hyp2f1(a + 1.0, b + 1.0, c + 1.0, x) * dx)


def hyp2f1(a, b, c, x):
    """The Gauss hypergeometric function 2F1(a, b; c; x) of real arguments (JAX's
    algorithms: inf for x > 1, inaccurate where the function is large)."""
    a, b, c, x = _inexact(a), _inexact(b), _inexact(c), _inexact(x)
    zero = jnp.zeros_like(a + b + c + x)  # one dtype and shape, as JAX's vectorize
    a, b, c, x = a + zero, b + zero, c + zero, x + zero
    return _hyp2f1(a, b, c, x)
