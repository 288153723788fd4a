"""The beta distribution, as ``jax.scipy.stats.beta``."""
import astjax.numpy as jnp
from astjax.numpy._composites import _inexact
from astjax.scipy.special import betaln, xlog1py, xlogy


def logpdf(x, a, b, loc=0, scale=1):
    x = _inexact(x)
    y = (x - loc) / scale
    a = a + jnp.zeros_like(y)
    b = b + jnp.zeros_like(y)
    log_probs = (-betaln(a, b) + xlogy(a - 1.0, y) + xlog1py(b - 1.0, -y)
                 - jnp.log(scale * jnp.ones_like(y)))
    out = jnp.where((x > loc + scale) | (x < loc), -jnp.inf, log_probs)
    return jnp.where((a <= 0.0) | (b <= 0.0) | (scale <= 0.0), jnp.nan, out)


def pdf(x, a, b, loc=0, scale=1):
    return jnp.exp(logpdf(x, a, b, loc, scale))
