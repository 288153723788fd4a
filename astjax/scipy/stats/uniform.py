"""The uniform distribution on [loc, loc + scale], as ``jax.scipy.stats.uniform``."""
import astjax.numpy as jnp
from astjax.numpy._composites import _inexact


def logpdf(x, loc=0, scale=1):
    x = _inexact(x)
    inside = -jnp.log(scale * jnp.ones_like(x))
    return jnp.where((x > loc + scale) | (x < loc), -jnp.inf, inside)


def pdf(x, loc=0, scale=1):
    return jnp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    x = _inexact(x)
    return jnp.where(x < loc, 0.0, jnp.where(x > loc + scale, 1.0, (x - loc) / scale))


def ppf(q, loc=0, scale=1):
    q = _inexact(q)
    return jnp.where(jnp.isnan(q) | (q < 0.0) | (q > 1.0), jnp.nan, loc + scale * q)
