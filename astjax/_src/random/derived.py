"""The distributions JAX builds on the basic samplers (jax/_src/random/core.py: cauchy,
lognormal, pareto, ... ball, orthogonal), computed as JAX computes them.

Same conventions as ``samplers.py``: arguments are checked and canonicalized by
``astjax.random``, and every function compiles as well as it runs eagerly. Where XLA
fuses or reorders an operation, the comment says so: float32 results then equal JAX's
bit for bit wherever their inputs do (uniform, normal, exponential); the gamma-based
ones (chisquare, f, t, generalized_normal, ball) agree to float rounding, as gamma does.
"""
import numpy as np

import astjax.numpy as jnp

from . import checks as _c
from . import samplers as _s
from . import special as _sp
from . import threefry as _tf
from .checks import static_helper


@static_helper
def eps(dtype):
    return float(np.finfo(dtype).eps)


@static_helper
def sided_maxwell_shape(name, shape, loc_shape, scale_shape):
    """double_sided_maxwell's shape: ``shape`` (or, if empty, the parameters' broadcast
    shape) followed by the parameters' broadcast shape, as JAX's."""
    params = _c.broadcast_shapes(name, loc_shape, scale_shape)
    return (tuple(shape) or params) + params


@static_helper
def orthogonal_shape(shape, n, m):
    return tuple(shape) + (max(n, m), min(n, m))


def _exp(x):
    return jnp.exp(x) if x.dtype.kind == "c" else _sp.exp(x)


def cauchy(key, shape, dtype, partitionable):
    u = _s.uniform(key, shape, dtype, eps(dtype), 1.0, partitionable)
    return jnp.tan(jnp.asarray(np.pi, dtype=dtype) * (u - 0.5))


def lognormal(key, sigma, shape, dtype, partitionable):
    sigma = jnp.asarray(sigma).astype(dtype)
    return _exp(_s.normal(key, shape, dtype, partitionable) * sigma)


def pareto(key, b, shape, dtype, partitionable):
    b = jnp.asarray(b).astype(dtype)
    return _sp.exp(_s.exponential(key, shape, dtype, partitionable) / b)


def rayleigh(key, scale, shape, dtype, partitionable):
    u = _s.uniform(key, shape, dtype, 0.0, 1.0, partitionable)
    scale = jnp.broadcast_to(jnp.asarray(scale).astype(dtype), shape)
    return scale * jnp.sqrt(_sp.log(u) * -2.0)


def wald(key, mean, shape, dtype, partitionable):
    k1, k2 = _tf.split2(key, partitionable)
    mean = jnp.broadcast_to(jnp.asarray(mean).astype(dtype), shape)
    v = _s.normal(k1, shape, dtype, partitionable)
    z = _s.uniform(k2, shape, dtype, 0.0, 1.0, partitionable)
    y = v * v
    mean_sq = mean * mean
    # XLA fuses two products and the sums after them into multiply-adds
    sqrt_term = jnp.sqrt(jnp.fma(4.0 * mean, y, mean_sq * (y * y)))
    x = jnp.fma(-(mean / 2.0), sqrt_term, mean + mean_sq * y / 2.0)
    return jnp.where(z <= mean / (mean + x), x, mean_sq / x)


def weibull_min(key, scale, concentration, shape, dtype, partitionable):
    u = _s.uniform(key, shape, dtype, 0.0, 1.0, partitionable)
    return jnp.power(-_sp.log1p(-u), 1.0 / concentration) * scale


def rademacher(key, shape, dtype, partitionable):
    bits = _s.bernoulli(key, 0.5, shape, "low", partitionable).astype(dtype)
    return (2 * bits - 1).astype(dtype)


def maxwell(key, shape, dtype, partitionable):
    z = _s.normal(key, shape + (3,), dtype, partitionable)
    sq = z * z
    # the norm of the last axis, summed in the order XLA's CPU reduction sums 3 elements
    return jnp.sqrt((sq[..., 0] + sq[..., 2]) + sq[..., 1])


def double_sided_maxwell(key, loc, scale, shape, dtype, partitionable):
    maxwell_key, rademacher_key = _tf.split2(key, partitionable)
    m = maxwell(maxwell_key, shape, dtype, partitionable)
    sign = rademacher(rademacher_key, shape, dtype, partitionable)
    return sign * m * scale + loc


def triangular(key, left, mode, right, shape, dtype, partitionable):
    left = jnp.broadcast_to(jnp.asarray(left).astype(dtype), shape)
    right = jnp.broadcast_to(jnp.asarray(right).astype(dtype), shape)
    mode = jnp.broadcast_to(jnp.asarray(mode).astype(dtype), shape)
    fc = (mode - left) / (right - left)
    u = _s.uniform(key, shape, dtype, 0.0, 1.0, partitionable)
    out1 = left + jnp.sqrt(u * (right - left) * (mode - left))
    out2 = right - jnp.sqrt((1.0 - u) * (right - left) * (right - mode))
    return jnp.where(u < fc, out1, out2)


# --- gamma-based -------------------------------------------------------------------------------

def chisquare(key, df, shape, dtype, partitionable):
    half_df = jnp.asarray(df).astype(dtype) / 2.0
    log_g = _s.gamma(key, half_df, shape, dtype, True, partitionable)
    return _sp.exp(log_g) * 2.0


def f(key, dfnum, dfden, shape, dtype, partitionable):
    dfnum = jnp.asarray(dfnum).astype(dtype)
    dfden = jnp.asarray(dfden).astype(dtype)
    key_dfd, key_dfn = _tf.split2(key, partitionable)
    chi2_dfn = chisquare(key_dfn, dfnum, shape, dtype, partitionable)
    chi2_dfd = chisquare(key_dfd, dfden, shape, dtype, partitionable)
    # JAX writes (chi2_dfn / dfnum) / (chi2_dfd / dfden); XLA's simplifier rewrites it so
    return (chi2_dfn * dfden) / (dfnum * chi2_dfd)


def t(key, df, shape, dtype, partitionable):
    df = jnp.asarray(df).astype(dtype)
    key_n, key_g = _tf.split2(key, partitionable)
    n = _s.normal(key_n, shape, dtype, partitionable)
    half_df = df / 2.0
    g = _s.gamma(key_g, half_df, shape, dtype, False, partitionable)
    return n * jnp.sqrt(half_df / g)


def generalized_normal(key, p, shape, dtype, partitionable):
    k0, k1 = _tf.split2(key, partitionable)
    g = _s.gamma(k0, 1.0 / p, shape, dtype, False, partitionable)
    r = rademacher(k1, shape, dtype, partitionable)
    return r * g ** (1.0 / p)


def ball(key, d, p, shape, dtype, partitionable):
    k1, k2 = _tf.split2(key, partitionable)
    g = generalized_normal(k1, p, shape + (d,), dtype, partitionable)
    e = _s.exponential(k2, shape, dtype, partitionable)
    norm = (jnp.sum(jnp.abs(g) ** p, axis=-1) + e) ** (1.0 / p)
    return g / jnp.expand_dims(norm, -1)


def orthogonal(key, n, m, shape, dtype, partitionable):
    """Mezzadri's method: the Q of a normal matrix's QR, its columns' signs those of R's
    diagonal (QR here is LAPACK's, so the floats agree with JAX's to rounding)."""
    z = _s.normal(key, orthogonal_shape(shape, n, m), dtype, partitionable)
    q, r = jnp.linalg.qr(z)
    d = jnp.diagonal(r, axis1=-2, axis2=-1)
    x = q * jnp.expand_dims(jnp.sign(d), -2)
    if n < m:
        return jnp.swapaxes(x, -1, -2)
    return x


def geometric(key, p, shape, dtype, partitionable):
    p = jnp.asarray(p)
    p = p.astype(_c.inexact_dtype(p.dtype))
    u = _s.uniform(key, shape, p.dtype, 0.0, 1.0, partitionable)
    u = jnp.where(u == 0.0, 1.0, u)  # as JAX: no log(0); such a draw gives 1
    log_one_minus_p = jnp.broadcast_to(_sp.log1p(-p), shape)
    return (jnp.floor(_sp.log(u) / log_one_minus_p) + 1.0).astype(dtype)
