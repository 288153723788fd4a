"""The normal distribution, as ``jax.scipy.stats.norm``."""
import astjax.numpy as jnp
from astjax.numpy._composites import _inexact
from astjax.scipy import special

_LOG_2PI = 1.8378770664093453


def logpdf(x, loc=0, scale=1):
    x = _inexact(x)
    scale_sq = scale * scale
    return -0.5 * (_LOG_2PI + jnp.log(scale_sq * jnp.ones_like(x)) + (x - loc) ** 2 / scale_sq)


def pdf(x, loc=0, scale=1):
    return jnp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    return special.ndtr((_inexact(x) - loc) / scale)


def logcdf(x, loc=0, scale=1):
    return special.log_ndtr((_inexact(x) - loc) / scale)


def sf(x, loc=0, scale=1):
    return cdf(-_inexact(x), -loc, scale)


def logsf(x, loc=0, scale=1):
    return logcdf(-_inexact(x), -loc, scale)


def ppf(q, loc=0, scale=1):
    return special.ndtri(q) * scale + loc


def isf(q, loc=0, scale=1):
    return ppf(1.0 - _inexact(q), loc, scale)
