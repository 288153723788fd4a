"""hyp1f1 of ``astjax.scipy.special``: JAX 0.10.2's Taylor series for |x| < 100 and
asymptotic series above (Pearson, Olver and Porter 2014), at most 250 terms each, with
JAX's custom derivatives (series in a and b, a / b 1F1(a + 1, b + 1, x) in x). JAX runs
each series per element in a while_loop; here on the whole array, an element frozen once
its next term is below eps times its sum, so the values are the same."""
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
