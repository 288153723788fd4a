"""owens_t, bessel_jn and bernoulli of ``astjax.scipy.special``: JAX 0.10.2's algorithms
(Owen's T by Patefield and Tandy's 13-point quadrature with JAX's exact values and custom
derivative; Miller's backward recurrence for J_0..J_v; the Chowla-Hartung series for the
Bernoulli numbers), in ``astjax.numpy``."""
import operator

import numpy as np

import astjax.numpy as jnp
from astjax import lax
from astjax._src.ad.custom import custom_jvp
from astjax._src.random.checks import static_helper  # evaluated while generating code
from astjax.numpy._composites import _inexact, _inexact2

from ._special_erf import _kind

_SQRT_2 = 1.4142135623730951
_SQRT_2PI = 2.5066282746310002

# T(h, a) ~ a sum_i w_i exp(-h^2 (1 + a^2 t_i) / 2) / (1 + a^2 t_i) for |a| <= 1
_OWENS_T_POINTS = (0.0035082039676451715, 0.031279042338030754, 0.085266826283219451,
                   0.16245071730812277, 0.25851196049125435, 0.36807553840697534,
                   0.48501092905604697, 0.60277514152618577, 0.71477884217753227,
                   0.81475510988760099, 0.89711029755948966, 0.95723808085944262,
                   0.99178832974629704)
_OWENS_T_WEIGHTS = (0.018831438115323503, 0.018567086243977649, 0.018042093461223386,
                    0.017263829606398753, 0.016243219975989857, 0.014994592034116705,
                    0.013535474469662088, 0.011886351605820165, 0.010070377242777432,
                    0.0081130545742299587, 0.0060419009528470239, 0.0038862217010742058,
                    0.0016793031084546090)


@custom_jvp
def _owens_t(h, a):
    h = jnp.abs(h)
    abs_a = jnp.abs(a)
    h_normed = h / _SQRT_2
    inside = abs_a <= 1.0
    ma = jnp.where(inside, abs_a, 1.0 / abs_a)
    mh = jnp.where(inside, h, abs_a * h)
    a2 = ma * ma
    h2 = mh * mh
    total = jnp.zeros_like(a2 + h2)
    for t, w in zip(_OWENS_T_POINTS, _OWENS_T_WEIGHTS):
        r = a2 * t
        total = total + w * (jnp.exp(-0.5 * h2 * (1.0 + r)) / (1.0 + r))
    out = ma * total
    out = jnp.where(mh == 0.0, jnp.arctan(ma) / (2 * np.pi), out)  # exact at h = 0, a = 1
    out = jnp.where(ma == 1.0, 0.125 * lax.erfc(-mh / _SQRT_2) * lax.erfc(mh / _SQRT_2), out)
    # T(h, a) for |a| > 1 from T(ah, 1 / a)
    normh = lax.erfc(h_normed)
    normah = lax.erfc(abs_a * h_normed)
    reflected = jnp.where(abs_a * h <= 0.67,
                          0.25 - 0.25 * lax.erf(h_normed) * lax.erf(abs_a * h_normed) - out,
                          0.25 * (normh + normah - normh * normah) - out)
    out = jnp.sign(a) * jnp.where(abs_a > 1.0, reflected, out)
    return jnp.where(jnp.isnan(a) | jnp.isnan(h), jnp.nan, out)


@_owens_t.defjvp
def _owens_t_jvp(primals, tangents):
    (h, a), (dh, da) = primals, tangents
    out = _owens_t(h, a)
    d_h = -jnp.exp(-0.5 * (h * h)) * lax.erf(a * h / _SQRT_2) / (2.0 * _SQRT_2PI)
    d_a = jnp.exp(-0.5 * (a * a + 1.0) * (h * h)) / (2.0 * np.pi * (a * a + 1.0))
    return out, (d_h * dh + d_a * da).astype(out.dtype)


def owens_t(h, a):
    """Owen's T function (JAX's 13-point quadrature, exact at h = 0 and |a| = 1)."""
    h, a = _inexact2(h, a)
    return _owens_t(h, a)


@static_helper
def _index(v, name):
    try:
        return operator.index(v)
    except TypeError:
        raise TypeError(f"Argument {name} of bessel_jn must be an integer, got {v!r}") \
            from None


def bessel_jn(z, *, v, n_iter=50):
    """J_0(z), ..., J_v(z) (shape (v + 1, *z.shape)) by Miller's backward recurrence from
    order n_iter, normalized by J_0 + 2 J_2 + 2 J_4 + ... = 1 (Zhang and Jin, as JAX)."""
    z = _inexact(z)
    if _kind(z.dtype) == "c":
        raise ValueError("complex input not supported.")
    v = _index(v, "v")
    n_iter = _index(n_iter, "n_iter")
    f0 = jnp.zeros_like(z)
    f1 = jnp.zeros_like(z) + 1e-16
    total = jnp.zeros_like(z)
    values = jnp.zeros((v + 1,) + z.shape, z.dtype)
    f = f0
    for k in range(n_iter, -1, -1):
        f = 2.0 * (k + 1.0) * f1 / z - f0
        if k % 2 == 0:
            total = total + 2.0 * f
        if k <= v:
            values = values.at[k].set(f)
        f0 = f1
        f1 = f
    return values / (total - f)


@static_helper
def _bernoulli_order(n):
    n = operator.index(n)
    if n < 0:
        raise ValueError("n must be a non-negative integer.")
    return n


def bernoulli(n):
    """The Bernoulli numbers B_0..B_n (B_1 = -1/2), by the Chowla-Hartung series (JAX's)."""
    n = _bernoulli_order(n)
    first = jnp.array([1.0, -0.5, 1.0 / 6.0])
    if n < 3:
        return first[:n + 1]
    out = jnp.zeros(n + 1, first.dtype).at[:3].set(first)
    m = jnp.arange(4, n + 1, 2, dtype=first.dtype)
    q1 = (1.0 / np.pi ** 2) * jnp.cumprod(-(m - 1.0) * m / 4.0 / np.pi ** 2)
    k = jnp.arange(2, 50, dtype=first.dtype)
    q2 = jnp.sum(k[:, None] ** -m[None, :], axis=0)
    return out.at[4::2].set(q1 * (1.0 + q2))
