"""The logistic distribution, as ``jax.scipy.stats.logistic``."""
import astjax.numpy as jnp
from astjax.numpy._composites import _inexact
from astjax.scipy.special import expit, logit


def logpdf(x, loc=0, scale=1):
    half = (_inexact(x) - loc) / scale / 2.0
    return -2.0 * jnp.logaddexp(half, -half) - jnp.log(scale * jnp.ones_like(half))


def pdf(x, loc=0, scale=1):
    return jnp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    return expit((_inexact(x) - loc) / scale)


def sf(x, loc=0, scale=1):
    return expit(-(_inexact(x) - loc) / scale)


def ppf(q, loc=0, scale=1):
    return logit(q) * scale + loc


def isf(q, loc=0, scale=1):
    return -logit(q) * scale + loc
