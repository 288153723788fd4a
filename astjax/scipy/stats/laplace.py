"""The Laplace distribution, as ``jax.scipy.stats.laplace``."""
import astjax.numpy as jnp
from astjax.numpy._composites import _inexact


def logpdf(x, loc=0, scale=1):
    x = _inexact(x)
    return -(jnp.abs(x - loc) / scale + jnp.log(2.0 * scale * jnp.ones_like(x)))


def pdf(x, loc=0, scale=1):
    return jnp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    d = (_inexact(x) - loc) / scale
    return jnp.where(d <= 0.0, 0.5 * jnp.exp(d), 1.0 - 0.5 * jnp.exp(-d))
