"""sph_harm_y of ``astjax.scipy.special``: JAX 0.10.2's algorithm (normalized associated
Legendre functions of degree and order up to n_max by its three recurrences, the
recurrence's coefficient masks computed with NumPy when the code is generated, since they
depend on n_max and the dtype only)."""
import operator

import numpy as np

import astjax.numpy as jnp
from astjax import lax
from astjax._src.random.checks import static_helper  # evaluated while generating code

_INITIAL = 0.28209479177387814  # 0.5 / sqrt(pi), the normalized P_0^0


@static_helper
def _n_max(n_max):
    try:
        return operator.index(n_max)
    except TypeError:
        raise TypeError("The `n_max` argument of `jnp.scipy.special.sph_harm` must be "
                        "statically specified to use `sph_harm` within JAX "
                        "transformations.") from None


@static_helper
def _legendre_constants(l_max, dtype):
    """JAX's recurrence masks d0[i], d1[i] (order by degree, nonzero where degree - order
    = i) and the diagonal's and first off-diagonal's factors, in ``dtype``."""
    dtype = np.dtype(dtype)
    m, l = np.meshgrid(np.arange(l_max + 1, dtype=dtype), np.arange(l_max + 1, dtype=dtype),
                       indexing="ij")
    with np.errstate(all="ignore"):
        c0 = l * l
        c1 = m * m
        c2 = dtype.type(2.0) * l
        c3 = (l - dtype.type(1.0)) * (l - dtype.type(1.0))
        d0 = np.sqrt((dtype.type(4.0) * c0 - dtype.type(1.0)) / (c0 - c1))
        d1 = np.sqrt(((c2 + dtype.type(1.0)) * (c3 - c1))
                     / ((c2 - dtype.type(3.0)) * (c0 - c1)))
        a = np.arange(1, l_max + 1, dtype=dtype)
        f_a = np.cumprod(-np.sqrt(dtype.type(1.0) + dtype.type(0.5) / a)).astype(dtype)
        f_b = np.sqrt(dtype.type(2.0) * np.arange(l_max, dtype=dtype) + dtype.type(3.0))
    j, k = np.indices((l_max + 1, l_max + 1))
    d0 = np.where(k > j, d0, 0).astype(dtype)
    d1 = np.where(k > j + 1, d1, 0).astype(dtype)
    i = np.arange(l_max + 1)[:, None, None]
    on = (i + j - k == 0).astype(dtype)
    return d0 * on, d1 * on, f_a, f_b


def _normalized_legendre(l_max, x):
    """P[m, l, :] for m, l <= l_max at the points x (1-D), normalized as JAX's."""
    if l_max == 0:
        return jnp.zeros((1, 1) + x.shape, x.dtype) + _INITIAL
    d0, d1, f_a, f_b = _legendre_constants(l_max, x.dtype)
    y = jnp.cumprod(jnp.broadcast_to(jnp.sqrt(1.0 - x * x), (l_max,) + x.shape), axis=0)
    p_diag = _INITIAL * (f_a[:, None] * y)
    p = jnp.zeros((l_max + 1, l_max + 1) + x.shape, x.dtype)
    p = p.at[0, 0].set(_INITIAL)
    diag = np.arange(1, l_max + 1)
    p = p.at[diag, diag].set(p_diag)
    below = np.arange(l_max)
    p = p.at[below, below + 1].set((f_b[:, None] * x[None, :]) * p[below, below])
    for i in range(2, l_max + 1):
        # jnp.roll(p, 1 and 2, axis=1) as JAX writes it, by concatenation (which the Numba
        # backend lowers; roll it does not)
        p1 = jnp.concatenate([p[:, -1:], p[:, :-1]], axis=1)
        p2 = jnp.concatenate([p[:, -2:], p[:, :-2]], axis=1)
        p = p + (d0[i][:, :, None] * (p1 * x) - d1[i][:, :, None] * p2)
    return p


def sph_harm_y(n, m, theta, phi, diff_n=None, n_max=None):
    """The spherical harmonics Y_n^m(theta, phi) (theta the colatitude) of 1-D n, m,
    theta, phi, as JAX's: n_max (the largest n, static) bounds the degrees, larger n and
    |m| clip to it; values for n < 0 or |m| > n are undefined."""
    if diff_n is not None:
        raise NotImplementedError(
            "The 'diff_n' argument to jax.scipy.special.sph_harm_y is not supported.")
    n = jnp.asarray(n)
    m = jnp.asarray(m)
    theta = jnp.asarray(theta)
    if theta.ndim == 0:
        theta = theta.reshape(1)
    if n_max is None:
        n_max = np.max(n)
    n_max = _n_max(n_max)
    legendre = _normalized_legendre(n_max, jnp.cos(theta))
    order = jnp.clip(jnp.abs(m), 0, n_max)
    degree = jnp.clip(n, 0, n_max)
    point = jnp.clip(jnp.arange(n.shape[0]), 0, legendre.shape[2] - 1)
    value = legendre[order, degree, point]
    angle = jnp.abs(m) * phi
    harmonics = lax.complex(value * jnp.cos(angle), value * jnp.sin(angle))
    # (-1)^|m| as JAX writes it: a float of the default precision, so with 64-bit types on
    # float32 arguments give complex128, as in JAX
    sign = (-1.0) ** jnp.abs(m).astype(float)
    return jnp.where(m < 0, sign * jnp.conjugate(harmonics), harmonics)
