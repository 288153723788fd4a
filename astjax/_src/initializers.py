"""``astjax.nn.initializers``: JAX's initializers, on ``astjax.random``.

An initializer is ``init(key, shape, dtype=...)``; the factories (``normal(stddev)``,
``variance_scaling(...)``, ...) return one. They draw with ``astjax.random``, so a key gives
JAX's values wherever astjax.random is bit-exact (uniform, normal and truncated_normal in
float32), and they compile under ``jit`` and ``vmap`` over keys with a static ``shape``.
Complex dtypes and ``out_sharding`` are not supported.
"""
import math
from functools import partial

import astjax.numpy as jnp
from astjax import random

__all__ = ["zeros", "ones", "constant", "uniform", "normal", "truncated_normal",
           "variance_scaling", "glorot_uniform", "glorot_normal", "xavier_uniform",
           "xavier_normal", "lecun_uniform", "lecun_normal", "he_uniform", "he_normal",
           "kaiming_uniform", "kaiming_normal", "orthogonal", "delta_orthogonal"]


def zeros(key, shape, dtype=None):
    """The key is ignored."""
    return jnp.zeros(shape, dtype)


def ones(key, shape, dtype=None):
    """The key is ignored."""
    return jnp.ones(shape, dtype)


# A factory returns a partial of a module-level function, not a nested def: compiled code
# lifts no nested def with defaults, and init's dtype defaults to the factory's.

def constant(value, dtype=None):
    return partial(_constant, value, dtype)


def _constant(value, default_dtype, key, shape, dtype=None):
    return jnp.full(shape, value, default_dtype if dtype is None else dtype)


def uniform(scale=0.01, dtype=None):
    """Values uniform in [0, scale)."""
    return partial(_uniform, scale, dtype)


def _uniform(scale, default_dtype, key, shape, dtype=None):
    dtype = default_dtype if dtype is None else dtype
    return random.uniform(key, shape, dtype) * jnp.asarray(scale, _float(dtype))


def normal(stddev=0.01, dtype=None):
    return partial(_normal, stddev, dtype)


def _normal(stddev, default_dtype, key, shape, dtype=None):
    dtype = default_dtype if dtype is None else dtype
    return random.normal(key, shape, dtype) * jnp.asarray(stddev, _float(dtype))


def truncated_normal(stddev=0.01, dtype=None, lower=-2.0, upper=2.0):
    """A normal truncated to (lower, upper) before the scaling by stddev (not corrected)."""
    return partial(_truncated_normal, stddev, lower, upper, dtype)


def _truncated_normal(stddev, lower, upper, default_dtype, key, shape, dtype=None):
    dtype = default_dtype if dtype is None else dtype
    sample = random.truncated_normal(key, lower, upper, shape, dtype)
    return sample * jnp.asarray(stddev, _float(dtype))


def _float(dtype):
    """The dtype, JAX's default float (float32, or float64 with x64) where it is None."""
    return jnp.zeros((), dtype).dtype


def _compute_fans(shape, in_axis=-2, out_axis=-1, batch_axis=()):
    """(fan_in, fan_out): the input and output sizes times the receptive field (the axes
    that are none of in_axis, out_axis, batch_axis)."""
    if isinstance(in_axis, int) and in_axis == -2 and len(shape) <= 1:
        raise ValueError(f"Can't compute input and output sizes of a {len(shape)}-dimensional "
                         "weights tensor with default in_axis. Must be at least 2D or specify "
                         "in_axis explicitly.")
    in_size = _axes_size(shape, in_axis)
    out_size = _axes_size(shape, out_axis)
    batch_size = _axes_size(shape, batch_axis)
    receptive_field_size = math.prod(shape) / in_size / out_size / batch_size
    return in_size * receptive_field_size, out_size * receptive_field_size


def _axes_size(shape, axes):
    if isinstance(axes, int):
        return shape[axes]
    # map, not a list comprehension: a static product where the code is compiled
    return math.prod(map(shape.__getitem__, axes))


def variance_scaling(scale, mode, distribution, in_axis=-2, out_axis=-1, batch_axis=(),
                     dtype=None):
    """Samples of variance scale / n, n the fan given by ``mode`` ("fan_in", "fan_out",
    "fan_avg", "fan_geo_avg"), from ``distribution``: "truncated_normal" (at 2 standard
    deviations, rescaled to keep the variance), "normal" or "uniform"."""
    if mode not in ("fan_in", "fan_out", "fan_avg", "fan_geo_avg"):
        raise ValueError(f"invalid mode for variance scaling initializer: {mode}")
    if distribution not in ("truncated_normal", "normal", "uniform"):
        raise ValueError(f"invalid distribution for variance scaling initializer: "
                         f"{distribution}")
    return partial(_variance_scaling, scale, mode, distribution, in_axis, out_axis, batch_axis,
                   dtype)


def _variance_scaling(scale, mode, distribution, in_axis, out_axis, batch_axis, default_dtype,
                      key, shape, dtype=None):
    dtype = default_dtype if dtype is None else dtype
    if _float(dtype).kind == "c":
        raise NotImplementedError("astjax's variance_scaling has no complex dtypes")
    fan_in, fan_out = _compute_fans(shape, in_axis, out_axis, batch_axis)
    if mode == "fan_in":
        denominator = fan_in
    elif mode == "fan_out":
        denominator = fan_out
    elif mode == "fan_avg":
        denominator = (fan_in + fan_out) / 2
    else:
        denominator = (fan_in * fan_out) ** 0.5
    variance = jnp.asarray(scale / denominator, _float(dtype))
    if distribution == "truncated_normal":
        # the standard deviation of a unit normal truncated to (-2, 2)
        stddev = jnp.sqrt(variance) / jnp.asarray(0.8796256610342398, _float(dtype))
        return random.truncated_normal(key, -2, 2, shape, dtype) * stddev
    if distribution == "normal":
        return random.normal(key, shape, dtype) * jnp.sqrt(variance)
    return random.uniform(key, shape, dtype, -1) * jnp.sqrt(3 * variance)


def glorot_uniform(in_axis=-2, out_axis=-1, batch_axis=(), dtype=None):
    return variance_scaling(1.0, "fan_avg", "uniform", in_axis, out_axis, batch_axis, dtype)


def glorot_normal(in_axis=-2, out_axis=-1, batch_axis=(), dtype=None):
    return variance_scaling(1.0, "fan_avg", "truncated_normal", in_axis, out_axis, batch_axis,
                            dtype)


def lecun_uniform(in_axis=-2, out_axis=-1, batch_axis=(), dtype=None):
    return variance_scaling(1.0, "fan_in", "uniform", in_axis, out_axis, batch_axis, dtype)


def lecun_normal(in_axis=-2, out_axis=-1, batch_axis=(), dtype=None):
    return variance_scaling(1.0, "fan_in", "truncated_normal", in_axis, out_axis, batch_axis,
                            dtype)


def he_uniform(in_axis=-2, out_axis=-1, batch_axis=(), dtype=None):
    return variance_scaling(2.0, "fan_in", "uniform", in_axis, out_axis, batch_axis, dtype)


def he_normal(in_axis=-2, out_axis=-1, batch_axis=(), dtype=None):
    return variance_scaling(2.0, "fan_in", "truncated_normal", in_axis, out_axis, batch_axis,
                            dtype)


xavier_uniform, xavier_normal = glorot_uniform, glorot_normal
kaiming_uniform, kaiming_normal = he_uniform, he_normal


def _orthogonal_matrix(key, n, m, dtype):
    """JAX's random.orthogonal: Q of the QR of a normal (max, min) sample, its columns'
    signs those of R's diagonal, transposed when n < m."""
    z = random.normal(key, (max(n, m), min(n, m)), dtype)
    q, r = jnp.linalg.qr(z)
    q = q * jnp.sign(jnp.diagonal(r))[None, :]
    if n < m:
        return q.T
    return q


def orthogonal(scale=1.0, column_axis=-1, dtype=None):
    """A (scaled) matrix with orthonormal rows or columns, reshaped to ``shape``: the
    ``column_axis`` is its columns, the other axes flattened its rows."""
    return partial(_orthogonal, scale, column_axis, dtype)


def _orthogonal(scale, column_axis, default_dtype, key, shape, dtype=None):
    dtype = default_dtype if dtype is None else dtype
    shape = tuple(shape)
    if len(shape) < 2:
        raise ValueError("orthogonal initializer requires at least a 2D shape")
    if 0 in shape:
        return jnp.zeros(shape, dtype)
    n_cols = shape[column_axis]
    n_rows = math.prod(shape) // n_cols
    q = _orthogonal_matrix(key, n_rows, n_cols, dtype)
    c = column_axis % len(shape)
    q = jnp.reshape(q, shape[:c] + shape[c + 1:] + (n_cols,))
    return jnp.asarray(scale, _float(dtype)) * jnp.moveaxis(q, -1, column_axis)


def delta_orthogonal(scale=1.0, column_axis=-1, dtype=None):
    """A 3-, 4- or 5-D convolution kernel, zero but at the centre of its spatial axes, where
    it is an orthogonal (in, out) matrix (in <= out)."""
    return partial(_delta_orthogonal, scale, column_axis, dtype)


def _delta_orthogonal(scale, column_axis, default_dtype, key, shape, dtype=None):
    dtype = default_dtype if dtype is None else dtype
    if len(shape) not in (3, 4, 5):
        raise ValueError("Delta orthogonal initializer requires a 3D, 4D or 5D shape.")
    if shape[-1] < shape[-2]:
        raise ValueError("`fan_in` must be less or equal than `fan_out`. ")
    matrix = _orthogonal(scale, column_axis, dtype, key, shape[-2:])
    w = jnp.zeros(shape, matrix.dtype)
    if len(shape) == 3:
        return w.at[(shape[0] - 1) // 2].set(matrix)
    if len(shape) == 4:
        return w.at[(shape[0] - 1) // 2, (shape[1] - 1) // 2].set(matrix)
    return w.at[(shape[0] - 1) // 2, (shape[1] - 1) // 2, (shape[2] - 1) // 2].set(matrix)
