"""Student's t distribution, as ``jax.scipy.stats.t``."""
import numpy as np

import astjax.numpy as jnp
from astjax.numpy._composites import _inexact
from astjax.scipy.special import gammaln


def logpdf(x, df, loc=0, scale=1):
    z = (_inexact(x) - loc) / scale
    half_df = df / 2.0 + jnp.zeros_like(z)
    normalize = (gammaln(half_df) + jnp.log(scale * scale * np.pi * df) / 2.0
                 - gammaln(half_df + 0.5))
    return -(normalize + (half_df + 0.5) * jnp.log1p(z * z / df))


def pdf(x, df, loc=0, scale=1):
    return jnp.exp(logpdf(x, df, loc, scale))
