"""``astjax.random``: JAX's counter-based PRNG (Threefry-2x32), bit for bit.

Keys are explicit, as in JAX: ``PRNGKey(seed)`` (or ``key(seed)``) gives a uint32
array of shape (2,) (JAX's legacy key); ``split`` and ``fold_in`` make new keys; a
sampler never changes its key. Both settings of ``jax_threefry_partitionable`` (on
by default, as in current JAX) are supported::

    astjax.config.update("jax_threefry_partitionable", False)   # older JAX releases

Integer and boolean results (keys, ``bits``, ``randint``, ``permutation``, ``choice``,
``categorical``, ``bernoulli``) equal JAX's exactly, and so do uniform floats and the
float32 results of ``normal``, ``truncated_normal``, ``exponential``, ``laplace``,
``logistic`` and ``gumbel``: log, log1p, exp, erf and erfinv are computed as XLA's CPU
code computes them, fused multiply-adds included (``_src/random/special.py``). Gamma,
beta and dirichlet agree to float rounding (JAX's uses the CPU's approximate rsqrt
instruction; most draws are still bit-identical), as do multivariate_normal (another
summation order) and float64 results (NumPy's log/exp there).

Every function here is ``astjax.numpy`` code: it runs eagerly and compiles under
``jit`` and ``vmap`` (``vmap`` over a batch of keys gives each key's own draws, bit for
bit); shapes and dtypes must then be static (``static_argnums``), as in JAX. Compiled
shapes are symbolic, so a parameter array computed at run time (a jit argument, an array
made or captured in compiled code) cannot give the sample shape: pass ``shape=`` (for
``categorical``, ``multivariate_normal``, ``dirichlet``, ``gamma``, ...); its own sizes
(the number of categories, of dimensions, of elements to permute or choose from) may be
known at run time only.

Deliberate difference from JAX: ``uniform`` and ``randint`` raise ValueError when
``minval > maxval`` and both are known (JAX silently returns ``minval``).
"""
import numpy as np

import astjax.numpy as jnp

from ._src.ir.types import ArrayType as _ArrayType
from ._src.random import checks as _c
from ._src.random import samplers as _s
from ._src.random import threefry as _tf
from ._src.random.checks import random_function

__all__ = ["PRNGKey", "key", "key_data", "split", "fold_in", "bits", "uniform", "normal",
           "truncated_normal", "bernoulli", "randint", "choice", "permutation", "categorical",
           "gumbel", "exponential", "laplace", "logistic", "multivariate_normal", "gamma",
           "loggamma", "beta", "dirichlet", "wrap_key_data", "clone"]


# --- keys ----------------------------------------------------------------------------------------

@random_function("PRNGKey", check=_c.check_seed, key=None)
def PRNGKey(seed):
    """A key from an integer seed: uint32 ``[seed >> 32, seed & 0xFFFFFFFF]`` (the high word
    is 0 unless jax_enable_x64 is on and the seed is 64-bit)."""
    return _tf.seed(seed)


@random_function("key", check=_c.check_seed, key=None)
def key(seed):
    """Same as ``PRNGKey``: astjax has no typed key arrays; keys are uint32 (2,) arrays."""
    return _tf.seed(seed)


@random_function("key_data", batched_key=True, key="keys")
def key_data(keys):
    """The uint32 data of a key (or of an array of keys ``(..., 2)``): the key itself."""
    return keys


@random_function("wrap_key_data", batched_key=True, key="key_bits_array")
def wrap_key_data(key_bits_array):
    """Keys from their uint32 data ``(..., 2)``: the data itself (astjax keys are raw)."""
    return key_bits_array


@random_function("clone", batched_key=True)
def clone(key):
    """The key itself (JAX's clone matters only to its key-reuse checker)."""
    return key


@random_function("split", static=("num",))
def split(key, num=2):
    """``num`` new keys (an int, or a tuple for a shape of keys): shape ``(*num, 2)``."""
    shape = _c.split_shape(num)
    return _tf.split(key, shape, _c.partitionable())


@random_function("fold_in", check=_c.check_fold_in_data)
def fold_in(key, data):
    """A new key from ``key`` and a 32-bit integer ``data``."""
    return _tf.fold_in(key, data)


# --- samplers ------------------------------------------------------------------------------------

@random_function("bits", static=("shape", "dtype"), run_time_shape=True)
def bits(key, shape=(), dtype=None):
    """Uniform random bits as unsigned integers (uint32 by default, uint64 with x64)."""
    shape = _c.sample_shape("bits", shape)
    dtype = _c.uint_dtype("bits", dtype)
    return _tf.random_bits(key, dtype.itemsize * 8, shape, _c.partitionable())


@random_function("uniform", static=("shape", "dtype"), run_time_shape=True,
                 check=_c.all_checks(_c.check_param_shapes("shape", "minval", "maxval"),
                                     _c.check_range("minval", "maxval")))
def uniform(key, shape=(), dtype=None, minval=0.0, maxval=1.0):
    """Uniform floats in ``[minval, maxval)``."""
    shape = _c.sample_shape("uniform", shape)
    dtype = _c.float_dtype("uniform", dtype)
    return _s.uniform(key, shape, dtype, minval, maxval, _c.partitionable())


@random_function("normal", static=("shape", "dtype"), run_time_shape=True)
def normal(key, shape=(), dtype=None):
    """Standard normal floats (``sqrt(2) * erfinv(u)`` with u uniform in (-1, 1)); for a
    complex dtype, real and imaginary parts each of variance 1/2."""
    shape = _c.sample_shape("normal", shape)
    dtype = _c.inexact_user_dtype("normal", dtype)
    return _s.normal(key, shape, dtype, _c.partitionable())


@random_function("truncated_normal", static=("shape", "dtype"), run_time_shape=True,
                 check=_c.check_param_shapes("shape", "lower", "upper"))
def truncated_normal(key, lower, upper, shape=None, dtype=None):
    """Standard normal floats truncated to the open interval ``(lower, upper)``."""
    shape = _c.optional_sample_shape("truncated_normal", shape)
    dtype = _c.float_dtype("truncated_normal", dtype)
    if shape is None:
        shape = _c.broadcast_shapes("truncated_normal", np.shape(lower), np.shape(upper))
    return _s.truncated_normal(key, lower, upper, shape, dtype, _c.partitionable())


@random_function("bernoulli", static=("shape", "mode"), run_time_shape=True,
                 check=_c.all_checks(_c.check_one_of("mode", ("high", "low")),
                                     _c.check_probability_dtype("p"),
                                     _c.check_param_shapes("shape", "p")))
def bernoulli(key, p=0.5, shape=None, mode="low"):
    """Booleans that are True with probability ``p`` (a float or float array)."""
    shape = _c.optional_sample_shape("bernoulli", shape)
    if shape is None:
        shape = np.shape(p)
    return _s.bernoulli(key, p, shape, mode, _c.partitionable())


@random_function("randint", static=("shape", "dtype"), run_time_shape=True,
                 check=_c.all_checks(_c.check_param_shapes("shape", "minval", "maxval"),
                                     _c.check_range("minval", "maxval")))
def randint(key, shape, minval, maxval, dtype=None):
    """Uniform integers in ``[minval, maxval)`` (int32 by default, int64 with x64)."""
    shape = _c.sample_shape("randint", shape)
    dtype = _c.int_dtype("randint", dtype)
    sampling = _c.randint_sampling(dtype)
    if sampling != dtype:  # 8 and 16 bits are sampled at 32 bits, then converted
        lo, hi = _c.iinfo_bounds(dtype)
        minval = jnp.clip(jnp.asarray(minval).astype(jnp.int32), lo, hi)
        maxval = jnp.clip(jnp.asarray(maxval).astype(jnp.int32), lo, hi + 1)
    out = _s.randint(key, shape, minval, maxval, sampling, _c.partitionable())
    return out.astype(dtype)


def _check_permutation(name, args):
    x = args["x"]
    if _c.is_dynamic(x):  # an array computed at run time: shuffled along its axis
        if not isinstance(x, _ArrayType) or x.ndim == 0:
            raise TypeError(f"{name}: x must be an array, or an int known when the code is "
                            f"generated (it is the size of the shuffle), got {x}")
        _c.normalize_axis(name, args["axis"], x.ndim)
        return
    value = np.asarray(x._value if hasattr(x, "_value") else x)
    if value.ndim == 0 and value.dtype.kind not in "iu":
        raise TypeError("x must be an integer or at least 1-dimensional")
    _c.normalize_axis(name, args["axis"], max(value.ndim, 1))


@random_function("permutation", static=("axis", "independent"), check=_check_permutation)
def permutation(key, x, axis=0, independent=False):
    """A random permutation of ``arange(x)`` (x an int) or of ``x`` along ``axis``
    (each slice shuffled separately with ``independent=True``)."""
    arr = jnp.asarray(x)
    axis = _c.normalize_axis("permutation", axis, max(arr.ndim, 1))
    if arr.ndim == 0:
        n = _c.as_int(x)
        return _s.shuffle(key, jnp.arange(n), 0, (n,), _c.partitionable())
    return _s.permutation(key, arr, axis, independent, _c.partitionable())


@random_function("choice", static=("shape", "replace", "axis", "mode"),
                 check=_c.check_choice)
def choice(key, a, shape=(), replace=True, p=None, axis=0, mode=None):
    """Samples from ``a`` (an array, or ``arange(a)`` for an int), with or without
    replacement, uniformly or with probabilities ``p``."""
    arr = jnp.asarray(a)
    shape = _c.canonical_shape("choice", shape)
    if arr.ndim == 0:
        n_inputs = _c.as_int(a)
    else:  # (known at run time only for an array computed at run time)
        axis = _c.normalize_axis("choice", axis, arr.ndim)
        n_inputs = arr.shape[axis]
    mode = _c.gumbel_mode("choice", mode)
    if _c.size_of(shape) == 0:
        return jnp.zeros(shape, dtype=arr.dtype)
    if p is not None:
        p = jnp.asarray(p)
        p = p.astype(_c.inexact_dtype(p.dtype))
    return _s.choice(key, arr, n_inputs, shape, replace, p, axis, mode, _c.partitionable())


@random_function("categorical", static=("axis", "shape", "replace", "mode"),
                 check=_c.check_categorical)
def categorical(key, logits, axis=-1, shape=None, replace=True, mode=None):
    """Category indices drawn with probabilities ``softmax(logits, axis)`` (the Gumbel-max
    trick; without replacement, Gumbel top-k)."""
    logits = jnp.asarray(logits)
    axis = _c.normalize_axis("categorical", axis, logits.ndim)
    shape = _c.optional_shape("categorical", shape)
    if shape is None:  # the batch shape: logits' shape without axis
        shape = logits.shape[:axis] + logits.shape[axis + 1:]
    mode = _c.gumbel_mode("categorical", mode)
    return _s.categorical(key, logits, axis, shape, replace, mode, _c.partitionable())


@random_function("gumbel", static=("shape", "dtype", "mode"), run_time_shape=True)
def gumbel(key, shape=(), dtype=None, mode=None):
    """Standard Gumbel floats (``mode="high"`` uses twice the bits for the far tail)."""
    shape = _c.sample_shape("gumbel", shape)
    dtype = _c.float_dtype("gumbel", dtype)
    mode = _c.gumbel_mode("gumbel", mode)
    return _s.gumbel(key, shape, dtype, mode, _c.partitionable())


@random_function("exponential", static=("shape", "dtype"), run_time_shape=True)
def exponential(key, shape=(), dtype=None):
    """Standard exponential floats (``-log1p(-u)``)."""
    shape = _c.sample_shape("exponential", shape)
    dtype = _c.float_dtype("exponential", dtype)
    return _s.exponential(key, shape, dtype, _c.partitionable())


@random_function("laplace", static=("shape", "dtype"), run_time_shape=True)
def laplace(key, shape=(), dtype=None):
    """Standard Laplace floats."""
    shape = _c.sample_shape("laplace", shape)
    dtype = _c.float_dtype("laplace", dtype)
    return _s.laplace(key, shape, dtype, _c.partitionable())


@random_function("logistic", static=("shape", "dtype"), run_time_shape=True)
def logistic(key, shape=(), dtype=None):
    """Standard logistic floats."""
    shape = _c.sample_shape("logistic", shape)
    dtype = _c.float_dtype("logistic", dtype)
    return _s.logistic(key, shape, dtype, _c.partitionable())


@random_function("multivariate_normal", static=("shape", "dtype", "method"),
                 check=_c.check_multivariate_normal)
def multivariate_normal(key, mean, cov, shape=None, dtype=None, method="cholesky"):
    """Normal vectors with mean ``mean (..., n)`` and covariance ``cov (..., n, n)``; the
    factor of cov is its Cholesky factor (``method="svd"``/``"eigh"``: eagerly only)."""
    mean, cov = _s.promote_inexact(mean, cov)
    dtype = _c.float_dtype("multivariate_normal", _c.default_to(dtype, mean.dtype))
    shape = _c.optional_shape("multivariate_normal", shape)
    if shape is None:
        shape = _c.broadcast_shapes("multivariate_normal", np.shape(mean)[:-1],
                                    np.shape(cov)[:-2])
    return _s.multivariate_normal(key, mean, cov, shape, dtype, method, _c.partitionable())


@random_function("gamma", static=("shape", "dtype"), run_time_shape=True,
                 check=_c.check_param_shapes("shape", "a"))
def gamma(key, a, shape=None, dtype=None):
    """Gamma(a) floats (unit scale): Marsaglia-Tsang rejection, one key per element."""
    dtype = _c.float_dtype("gamma", dtype)
    shape = _c.optional_sample_shape("gamma", shape)
    if shape is None:
        shape = np.shape(a)
    return _s.gamma(key, a, shape, dtype, False, _c.partitionable())


@random_function("loggamma", static=("shape", "dtype"), run_time_shape=True,
                 check=_c.check_param_shapes("shape", "a"))
def loggamma(key, a, shape=None, dtype=None):
    """log of Gamma(a) floats, computed in log space (accurate for small ``a``)."""
    dtype = _c.float_dtype("loggamma", dtype)
    shape = _c.optional_sample_shape("loggamma", shape)
    if shape is None:
        shape = np.shape(a)
    return _s.gamma(key, a, shape, dtype, True, _c.partitionable())


@random_function("beta", static=("shape", "dtype"), run_time_shape=True,
                 check=_c.check_param_shapes("shape", "a", "b"))
def beta(key, a, b, shape=None, dtype=None):
    """Beta(a, b) floats, from two log-gamma draws."""
    dtype = _c.float_dtype("beta", dtype)
    shape = _c.optional_sample_shape("beta", shape)
    if shape is None:
        shape = _c.broadcast_shapes("beta", np.shape(a), np.shape(b))
    return _s.beta(key, a, b, shape, dtype, _c.partitionable())


@random_function("dirichlet", static=("shape", "dtype"), run_time_shape=True,
                 check=_c.all_checks(_c.check_dirichlet,
                                     _c.check_param_shapes("shape", "alpha", trailing=1)))
def dirichlet(key, alpha, shape=None, dtype=None):
    """Dirichlet(alpha) vectors: ``alpha (..., n)``, result ``shape + (n,)``."""
    dtype = _c.float_dtype("dirichlet", dtype)
    shape = _c.optional_sample_shape("dirichlet", shape)
    if shape is None:
        shape = np.shape(alpha)[:-1]
    alpha = jnp.asarray(alpha).astype(dtype)
    return _s.dirichlet(key, alpha, shape, dtype, _c.partitionable())
