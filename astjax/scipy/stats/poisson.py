"""The Poisson distribution, as ``jax.scipy.stats.poisson``."""
import astjax.numpy as jnp
from astjax.numpy._composites import _inexact
from astjax.scipy.special import gammaln, xlogy


def logpmf(k, mu, loc=0):
    k = _inexact(k)
    x = k - loc
    mu = mu + jnp.zeros_like(x)
    log_probs = xlogy(x, mu) - gammaln(x + 1.0) - mu
    return jnp.where((x < 0.0) | (jnp.round(k) != k), -jnp.inf, log_probs)


def pmf(k, mu, loc=0):
    return jnp.exp(logpmf(k, mu, loc))
