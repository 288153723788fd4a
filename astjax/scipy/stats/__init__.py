"""``astjax.scipy.stats``, as ``jax.scipy.stats``: one module per distribution, each a set of
plain functions written in ``astjax.numpy`` (compiled like user code) with JAX's formulas,
its ``loc``/``scale`` parameters and its values outside the support."""
from . import (bernoulli, beta, cauchy, expon, gamma, laplace, logistic,  # noqa: F401
               multivariate_normal, norm, poisson, t, uniform)
