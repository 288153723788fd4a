"""poisson, binomial and multinomial, as JAX computes them (jax/_src/random/core.py).

Rejection samplers: each loop runs, for all elements at once, until every element has its
draw; the keys advance once per round for all of them, so an element's draw depends on
how many rounds it needed only, as in JAX's while loops. Same conventions as
``samplers.py``. The counts are exact wherever the floats that decide them are: Knuth's
and the inversion algorithm's (uniform and XLA's log), not always the transformed
rejection's acceptance tests, which use lgamma (SciPy's, XLA's differs in the last bits).
"""
import numpy as np

import astjax.numpy as jnp
from astjax import lax

from . import checks as _c
from . import samplers as _s
from . import special as _sp
from . import threefry as _tf
from .checks import static_helper

_STIRLING_TAIL = np.array([0.0810614667953272, 0.0413406959554092, 0.0276779256849983,
                           0.02079067210376509, 0.0166446911898211, 0.0138761288230707,
                           0.0118967099458917, 0.0104112652619720, 0.00925546218271273,
                           0.00833056343336287])


@static_helper
def _stirling_table(dtype):
    return _STIRLING_TAIL.astype(dtype)


def _three_keys(key, partitionable):
    keys = _tf.split(key, (3,), partitionable)
    return keys[0], keys[1], keys[2]


# --- poisson ---------------------------------------------------------------------------------

def _poisson_knuth(key, lam, shape, dtype, partitionable):
    k = jnp.zeros(shape, dtype)
    log_prod = jnp.zeros(shape, jnp.float32)
    while jnp.any(log_prod > -lam):
        key, subkey = _tf.split2(key, partitionable)
        k = jnp.where(log_prod > -lam, k + 1, k)
        u = _s.uniform(subkey, shape, np.dtype(np.float32), 0.0, 1.0, partitionable)
        log_prod = log_prod + _sp.log(u)
    return (k - 1).astype(dtype)


def _poisson_rejection(key, lam, shape, dtype, partitionable):
    """Hormann's transformed rejection (lam >= 10)."""
    log_lam = _sp.log(lam)
    b = 0.931 + 2.53 * jnp.sqrt(lam)
    a = -0.059 + 0.02483 * b
    inv_alpha = 1.1239 + 1.1328 / (b - 3.4)
    v_r = 0.9277 - 3.6224 / (b - 2.0)
    k_out = jnp.full(shape, -1.0, lam.dtype)
    accepted = jnp.zeros(shape, bool)
    while jnp.any(~accepted):
        key, subkey_0, subkey_1 = _three_keys(key, partitionable)
        u = _s.uniform(subkey_0, shape, lam.dtype, 0.0, 1.0, partitionable) - 0.5
        v = _s.uniform(subkey_1, shape, lam.dtype, 0.0, 1.0, partitionable)
        u_shifted = 0.5 - jnp.abs(u)
        k = jnp.floor((2.0 * a / u_shifted + b) * u + lam + 0.43)
        s = _sp.log(v * inv_alpha / (a / (u_shifted * u_shifted) + b))
        t = -lam + k * log_lam - lax.lgamma(k + 1.0)
        accept1 = (u_shifted >= 0.07) & (v <= v_r)
        reject = (k < 0.0) | ((u_shifted < 0.013) & (v > u_shifted))
        accept = accept1 | (~reject & (s <= t))
        k_out = jnp.where(accept, k, k_out)
        accepted = accepted | accept
    return k_out.astype(dtype)


def poisson(key, lam, shape, dtype, partitionable):
    """Knuth's algorithm for lam < 10 (and NaN), else transformed rejection; lam is float32
    whatever the dtype, as in JAX."""
    lam = jnp.broadcast_to(jnp.asarray(lam), shape).astype(jnp.float32)
    use_knuth = jnp.isnan(lam) | (lam < 10.0)
    lam_knuth = jnp.where(use_knuth, lam, 0.0)
    # (the rejection's acceptance rate grows with lam: any large value ends its loop soon)
    lam_rejection = jnp.where(use_knuth, 1e5, lam)
    result = jnp.where(use_knuth, _poisson_knuth(key, lam_knuth, shape, dtype, partitionable),
                       _poisson_rejection(key, lam_rejection, shape, dtype, partitionable))
    return jnp.where(lam == 0.0, jnp.zeros_like(result), result)


# --- binomial ----------------------------------------------------------------------------------

def _stirling_approx_tail(k):
    """JAX's: its table for k <= 9, else the series at k clamped to 9 (as JAX computes it)."""
    use_table = k <= 9.0
    k = jnp.clip(k, 0.0, 9.0)
    kp1sq = (k + 1.0) * (k + 1.0)
    approx = (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / kp1sq) / kp1sq) / (k + 1.0)
    table = jnp.asarray(_stirling_table(k.dtype))
    return jnp.where(use_table, table[jnp.floor(k).astype(jnp.int32)], approx)


def _binomial_inversion(key, count, prob, shape, partitionable):
    """The number of geometric(prob) waiting times that fit in count (count * prob <= 10)."""
    log1minusprob = _sp.log1p(-prob)
    num_geom = jnp.zeros(shape, prob.dtype)
    geom_sum = jnp.zeros(shape, prob.dtype)
    while jnp.any(geom_sum <= count):
        subkey, key = _tf.split2(key, partitionable)
        num_geom = jnp.where(geom_sum <= count, num_geom + 1.0, num_geom)
        u = _s.uniform(subkey, shape, prob.dtype, 0.0, 1.0, partitionable)
        geom_sum = geom_sum + jnp.ceil(_sp.log(u) / log1minusprob)
    return num_geom - 1.0


def _btrs(key, count, prob, shape, partitionable):
    """Hormann's BTRS transformed rejection (count * prob > 10)."""
    stddev = jnp.sqrt(count * prob * (1.0 - prob))
    b = 1.15 + 2.53 * stddev
    a = -0.0873 + 0.0248 * b + 0.01 * prob
    c = count * prob + 0.5
    v_r = 0.92 - 4.2 / b
    r = prob / (1.0 - prob)
    alpha = (2.83 + 5.1 / b) * stddev
    m = jnp.floor((count + 1.0) * prob)
    k_out = jnp.full(shape, -1.0, prob.dtype)
    accepted = jnp.zeros(shape, bool)
    while jnp.any(~accepted):
        key, subkey_0, subkey_1 = _three_keys(key, partitionable)
        u = _s.uniform(subkey_0, shape, prob.dtype, 0.0, 1.0, partitionable)
        v = _s.uniform(subkey_1, shape, prob.dtype, 0.0, 1.0, partitionable)
        u = u - 0.5
        us = 0.5 - jnp.abs(u)
        accept1 = (us >= 0.07) & (v <= v_r)
        k = jnp.floor((2.0 * a / us + b) * u + c)
        reject = (k < 0.0) | (k > count)
        v = _sp.log(v * alpha / (a / (us * us) + b))
        ub = ((m + 0.5) * _sp.log((m + 1.0) / (r * (count - m + 1.0)))
              + (count + 1.0) * _sp.log((count - m + 1.0) / (count - k + 1.0))
              + (k + 0.5) * _sp.log(r * (count - k + 1.0) / (k + 1.0))
              + _stirling_approx_tail(m) + _stirling_approx_tail(count - m)
              - _stirling_approx_tail(k) - _stirling_approx_tail(count - k))
        accept = accept1 | (~reject & (v <= ub))
        k_out = jnp.where(accept, k, k_out)
        accepted = accepted | accept
    return k_out


def binomial(key, count, prob, shape, dtype, partitionable):
    """Inversion where count * q <= 10 (q = min(p, 1 - p)), else BTRS; NaN for a NaN or
    negative count or a NaN or negative q, inf for an infinite count."""
    prob = jnp.asarray(prob)
    prob = prob.astype(_c.inexact_dtype(prob.dtype))
    count = jnp.broadcast_to(jnp.asarray(count).astype(prob.dtype), shape)
    prob = jnp.broadcast_to(prob, shape)
    p_lt_half = prob < 0.5
    q = jnp.where(p_lt_half, prob, 1.0 - prob)
    count_nan_or_neg = jnp.isnan(count) | (count < 0.0)
    count_inf = jnp.isinf(count)
    q_is_nan = jnp.isnan(q)
    q_l_0 = q < 0.0
    q = jnp.where(q_is_nan | q_l_0, 0.01, q)
    use_inversion = count_nan_or_neg | (count * q <= 10.0)
    count = jnp.floor(count)  # a float count, as NumPy's binomial takes it
    count_inv = jnp.where(use_inversion, count, 0.0)
    count_btrs = jnp.where(use_inversion, 1e4, count)
    q_btrs = jnp.where(use_inversion, 0.5, q)
    samples = jnp.where(use_inversion,
                        _binomial_inversion(key, count_inv, q, shape, partitionable),
                        _btrs(key, count_btrs, q_btrs, shape, partitionable)).astype(dtype)
    invalid = q_l_0 | q_is_nan | count_nan_or_neg
    samples = jnp.where(invalid, np.nan, samples)
    samples = jnp.where(count_inf & ~invalid, np.inf, samples)
    return jnp.where(p_lt_half | count_nan_or_neg | q_is_nan | count_inf, samples,
                     count.astype(dtype) - samples)


def multinomial(key, n, p, shape, dtype, partitionable):
    """Counts of each outcome (the last axis of p): one binomial per outcome, of the trials
    left and that outcome's share of the probability left."""
    n = jnp.broadcast_to(n, shape[:-1])
    p = jnp.moveaxis(jnp.broadcast_to(p, shape), -1, 0)
    remaining = jnp.flip(jnp.cumsum(jnp.flip(p, 0), axis=0), 0)
    ratios = p / jnp.where(remaining == 0.0, 1.0, remaining)
    keys = _tf.split(key, (shape[-1],), partitionable)
    counts = jnp.zeros(p.shape, n.dtype)
    remainder = n
    for i in range(shape[-1]):
        count = binomial(keys[i], remainder, jnp.clip(ratios[i], 0.0, 1.0), shape[:-1],
                         n.dtype, partitionable)
        remainder = remainder - count
        counts = counts.at[i].set(count)
    return jnp.moveaxis(counts, 0, -1).astype(dtype)
