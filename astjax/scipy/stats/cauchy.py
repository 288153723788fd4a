"""The Cauchy distribution, as ``jax.scipy.stats.cauchy``."""
import numpy as np

import astjax.numpy as jnp
from astjax.numpy._composites import _inexact


def logpdf(x, loc=0, scale=1):
    z = (_inexact(x) - loc) / scale
    return -(jnp.log(np.pi * scale * jnp.ones_like(z)) + jnp.log1p(z * z))


def pdf(x, loc=0, scale=1):
    return jnp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    return 0.5 + jnp.arctan((_inexact(x) - loc) / scale) / np.pi


def sf(x, loc=0, scale=1):
    return cdf(-_inexact(x), -loc, scale)


def ppf(q, loc=0, scale=1):
    return jnp.tan(np.pi * _inexact(q) - np.pi / 2) * scale + loc
