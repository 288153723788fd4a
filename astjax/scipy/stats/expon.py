"""The exponential distribution, as ``jax.scipy.stats.expon``."""
import astjax.numpy as jnp
from astjax.numpy._composites import _inexact


def logpdf(x, loc=0, scale=1):
    x = _inexact(x)
    return jnp.where(x < loc, -jnp.inf, -((x - loc) / scale + jnp.log(scale * jnp.ones_like(x))))


def pdf(x, loc=0, scale=1):
    return jnp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    x = _inexact(x)
    return jnp.where(x < loc, 0.0, -jnp.expm1((loc - x) / scale))


def logsf(x, loc=0, scale=1):
    x = _inexact(x)
    return jnp.where(x < loc, 0.0, (loc - x) / scale)


def sf(x, loc=0, scale=1):
    return jnp.exp(logsf(x, loc, scale))


def logcdf(x, loc=0, scale=1):
    return jnp.log1p(-sf(x, loc, scale))
