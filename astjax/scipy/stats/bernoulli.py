"""The Bernoulli distribution, as ``jax.scipy.stats.bernoulli``."""
import astjax.numpy as jnp
from astjax.numpy._composites import _inexact
from astjax.scipy.special import xlog1py, xlogy


def logpmf(k, p, loc=0):
    x = _inexact(k) - loc
    p = p + jnp.zeros_like(x)
    log_probs = xlogy(x, p) + xlog1py(1.0 - x, -p)
    return jnp.where((x < 0.0) | (x > 1.0), -jnp.inf, log_probs)


def pmf(k, p, loc=0):
    return jnp.exp(logpmf(k, p, loc))


def cdf(k, p):
    k = _inexact(k)
    p = p + jnp.zeros_like(k)
    bad = jnp.isnan(k) | jnp.isnan(p) | (p < 0.0) | (p > 1.0)
    return jnp.where(bad, jnp.nan, jnp.where(k < 0.0, 0.0, jnp.where(k < 1.0, 1.0 - p, 1.0)))
