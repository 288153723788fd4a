"""The gamma distribution (shape ``a``), as ``jax.scipy.stats.gamma``."""
import astjax.numpy as jnp
from astjax.numpy._composites import _inexact
from astjax.scipy.special import gammaln, xlogy


def logpdf(x, a, loc=0, scale=1):
    x = _inexact(x)
    ok = x >= loc
    y = jnp.where(ok, (x - loc) / scale, 1.0)
    a = a + jnp.zeros_like(y)
    log_probs = xlogy(a - 1.0, y) - y - (gammaln(a) + jnp.log(scale * jnp.ones_like(y)))
    return jnp.where(ok, log_probs, -jnp.inf)


def pdf(x, a, loc=0, scale=1):
    return jnp.exp(logpdf(x, a, loc, scale))
