"""The multivariate normal distribution, as ``jax.scipy.stats.multivariate_normal``: a mean
vector (or scalar) and a covariance matrix (or scalar variance). The covariance is factored
by a Cholesky decomposition and (x - mean) solved against it by forward substitution."""
import astjax.numpy as jnp
from astjax._src.random.special import cholesky
from astjax.numpy._composites import _inexact

_LOG_2PI = 1.8378770664093453


def _forward_solve(low, d):
    """y with low @ y = d for each vector d[..., :] (low lower triangular)."""
    n = low.shape[-1]
    y = jnp.zeros_like(d)
    for j in range(n):  # y[..., j:] is zero here, as are low's entries above the diagonal
        yj = (d[..., j] - jnp.sum(low[..., j, :] * y, axis=-1)) / low[..., j, j]
        y = y.at[..., j].set(yj)
    return y


def logpdf(x, mean, cov, allow_singular=None):
    if allow_singular is not None:
        raise NotImplementedError("allow_singular argument of multivariate_normal.logpdf")
    x = _inexact(x)
    mean = jnp.asarray(mean)
    cov = jnp.asarray(cov)
    if mean.ndim == 0:
        return -0.5 * (x - mean) ** 2 / cov - 0.5 * (_LOG_2PI + jnp.log(cov))
    n = mean.shape[-1]
    if cov.ndim == 0:
        y = x - mean
        return -0.5 * jnp.sum(y * y, axis=-1) / cov - 0.5 * n * (_LOG_2PI + jnp.log(cov))
    if cov.ndim < 2:
        raise ValueError("multivariate_normal.logpdf got incompatible shapes")
    d = x - mean
    # promote d and cov together (an empty sum is a 0-d zero of its operand's dtype)
    cov = cov + jnp.sum(jnp.ravel(d)[:0])
    # symmetrized, so the gradient with respect to cov is symmetric as JAX's
    low = cholesky(0.5 * (cov + jnp.swapaxes(cov, -1, -2)))
    y = _forward_solve(low, d + jnp.sum(jnp.ravel(cov)[:0]))
    half_logdet = jnp.sum(jnp.log(jnp.diagonal(low, axis1=-2, axis2=-1)), axis=-1)
    return -0.5 * jnp.sum(y * y, axis=-1) - 0.5 * n * _LOG_2PI - half_logdet


def pdf(x, mean, cov):
    return jnp.exp(logpdf(x, mean, cov))
