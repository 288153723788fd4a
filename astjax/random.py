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
code computes them, fused multiply-adds included (``_src/random/special.py``). So are
the distributions built on them (``_src/random/derived.py``): ``cauchy``, ``lognormal``,
``pareto``, ``rayleigh``, ``wald``, ``weibull_min``, ``maxwell``,
``double_sided_maxwell``, ``triangular`` and ``rademacher``/``geometric`` (integers),
and the counts of ``poisson``, ``binomial`` and ``multinomial`` (``_src/random/discrete.py``;
their rejection tests use SciPy's lgamma where XLA has its own, so about one draw in 40000
of ``poisson`` with lam >= 10 differs).
Gamma, beta and dirichlet agree to float rounding (JAX's uses the CPU's approximate rsqrt
instruction; most draws are still bit-identical), and so do the samplers built on gamma
(``chisquare``, ``f``, ``t``, ``generalized_normal``, ``ball``), multivariate_normal and
``orthogonal`` (another summation order, LAPACK's QR) and float64 results (NumPy's
log/exp there).

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
from ._src.random import derived as _d
from ._src.random import discrete as _dd
from ._src.random import samplers as _s
from ._src.random import threefry as _tf
from ._src.random.checks import random_function

__all__ = ["PRNGKey", "key", "key_data", "key_impl", "split", "fold_in", "bits", "uniform", "normal",
           "truncated_normal", "bernoulli", "randint", "choice", "permutation", "categorical",
           "gumbel", "exponential", "laplace", "logistic", "multivariate_normal", "gamma",
           "loggamma", "beta", "dirichlet", "wrap_key_data", "clone", "cauchy", "lognormal",
           "pareto", "t", "chisquare", "f", "rademacher", "maxwell", "double_sided_maxwell",
           "weibull_min", "triangular", "rayleigh", "wald", "generalized_normal", "ball",
           "orthogonal", "geometric", "poisson", "binomial", "multinomial"]


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


@random_function("key_impl", batched_key=True, key="keys")
def key_impl(keys):
    """The name of the keys' PRNG implementation: always ``"threefry2x32"``."""
    return "threefry2x32"


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


# --- distributions built on the samplers above (_src/random/derived.py) ---------------------------

def _float_params(*params):
    return _c.all_checks(_c.check_param_shapes("shape", *params),
                         _c.check_safe_to_cast(*params))


@random_function("cauchy", static=("shape", "dtype"), run_time_shape=True)
def cauchy(key, shape=(), dtype=None):
    """Standard Cauchy floats: ``tan(pi * (u - 1/2))``."""
    shape = _c.sample_shape("cauchy", shape)
    dtype = _c.float_dtype("cauchy", dtype)
    return _d.cauchy(key, shape, dtype, _c.partitionable())


@random_function("lognormal", static=("shape", "dtype"), check=_float_params("sigma"))
def lognormal(key, sigma=np.float32(1), shape=None, dtype=None):
    """``exp(sigma * normal)`` (float or complex dtype)."""
    dtype = _c.inexact_user_dtype("lognormal", dtype)
    shape = _c.optional_shape("lognormal", shape)
    if shape is None:  # the parameters' broadcast shape
        shape = _c.broadcast_shapes("lognormal", np.shape(sigma))
    return _d.lognormal(key, sigma, shape, dtype, _c.partitionable())


@random_function("pareto", static=("shape", "dtype"), check=_float_params("b"))
def pareto(key, b, shape=None, dtype=None):
    """Pareto(b) floats on ``[1, inf)``: ``exp(exponential / b)``."""
    dtype = _c.float_dtype("pareto", dtype)
    shape = _c.optional_shape("pareto", shape)
    if shape is None:  # the parameters' broadcast shape
        shape = _c.broadcast_shapes("pareto", np.shape(b))
    return _d.pareto(key, b, shape, dtype, _c.partitionable())


@random_function("t", static=("shape", "dtype"), check=_float_params("df"))
def t(key, df, shape=None, dtype=None):
    """Student's t floats with ``df`` degrees of freedom (a normal over a gamma)."""
    dtype = _c.float_dtype("t", dtype)
    shape = _c.optional_shape("t", shape)
    if shape is None:  # the parameters' broadcast shape
        shape = _c.broadcast_shapes("t", np.shape(df))
    return _d.t(key, df, shape, dtype, _c.partitionable())


@random_function("chisquare", static=("shape", "dtype"), check=_float_params("df"))
def chisquare(key, df, shape=None, dtype=None):
    """Chi-square floats with ``df`` degrees of freedom (twice a Gamma(df / 2))."""
    dtype = _c.float_dtype("chisquare", dtype)
    shape = _c.optional_shape("chisquare", shape)
    if shape is None:  # the parameters' broadcast shape
        shape = _c.broadcast_shapes("chisquare", np.shape(df))
    return _d.chisquare(key, df, shape, dtype, _c.partitionable())


@random_function("f", static=("shape", "dtype"), check=_float_params("dfnum", "dfden"))
def f(key, dfnum, dfden, shape=None, dtype=None):
    """F-distribution floats: a ratio of two scaled chi-squares."""
    dtype = _c.float_dtype("f", dtype)
    shape = _c.optional_shape("f", shape)
    if shape is None:  # the parameters' broadcast shape
        shape = _c.broadcast_shapes("f", np.shape(dfnum), np.shape(dfden))
    return _d.f(key, dfnum, dfden, shape, dtype, _c.partitionable())


@random_function("rademacher", static=("shape", "dtype"), run_time_shape=True)
def rademacher(key, shape=(), dtype=None):
    """-1 or 1 with probability 1/2 each (int32 by default; any dtype)."""
    shape = _c.sample_shape("rademacher", shape)
    dtype = _c.any_dtype("rademacher", dtype, int)
    return _d.rademacher(key, shape, dtype, _c.partitionable())


@random_function("maxwell", static=("shape", "dtype"))
def maxwell(key, shape=(), dtype=None):
    """One-sided Maxwell floats: the norm of 3 standard normals."""
    dtype = _c.float_dtype("maxwell", dtype)
    shape = _c.canonical_shape("maxwell", shape)
    return _d.maxwell(key, shape, dtype, _c.partitionable())


@random_function("double_sided_maxwell", static=("shape", "dtype"))
def double_sided_maxwell(key, loc, scale, shape=(), dtype=None):
    """``loc + scale * sign * maxwell``; the result's shape is ``shape`` (or, if empty,
    loc and scale's broadcast shape) followed by loc and scale's broadcast shape, as JAX's."""
    dtype = _c.float_dtype("double_sided_maxwell", dtype)
    shape = _c.canonical_shape("double_sided_maxwell", shape)
    shape = _d.sided_maxwell_shape("double_sided_maxwell", shape, np.shape(loc),
                                   np.shape(scale))
    return _d.double_sided_maxwell(key, loc, scale, shape, dtype, _c.partitionable())


@random_function("weibull_min", static=("shape", "dtype"))
def weibull_min(key, scale, concentration, shape=(), dtype=None):
    """Weibull floats: ``scale * (-log1p(-u)) ** (1 / concentration)``."""
    dtype = _c.float_dtype("weibull_min", dtype)
    shape = _c.canonical_shape("weibull_min", shape)
    return _d.weibull_min(key, scale, concentration, shape, dtype, _c.partitionable())


@random_function("triangular", static=("shape", "dtype"),
                 check=_float_params("left", "mode", "right"))
def triangular(key, left, mode, right, shape=None, dtype=None):
    """Triangular floats on ``[left, right]`` with peak at ``mode`` (inverse CDF)."""
    dtype = _c.float_dtype("triangular", dtype)
    shape = _c.optional_shape("triangular", shape)
    if shape is None:  # the parameters' broadcast shape
        shape = _c.broadcast_shapes("triangular", np.shape(left), np.shape(mode), np.shape(right))
    return _d.triangular(key, left, mode, right, shape, dtype, _c.partitionable())


@random_function("rayleigh", static=("shape", "dtype"), check=_float_params("scale"))
def rayleigh(key, scale, shape=None, dtype=None):
    """Rayleigh floats: ``scale * sqrt(-2 log u)``."""
    dtype = _c.float_dtype("rayleigh", dtype)
    shape = _c.optional_shape("rayleigh", shape)
    if shape is None:  # the parameters' broadcast shape
        shape = _c.broadcast_shapes("rayleigh", np.shape(scale))
    return _d.rayleigh(key, scale, shape, dtype, _c.partitionable())


@random_function("wald", static=("shape", "dtype"), check=_float_params("mean"))
def wald(key, mean, shape=None, dtype=None):
    """Wald (inverse Gaussian) floats with mean ``mean``."""
    dtype = _c.float_dtype("wald", dtype)
    shape = _c.optional_shape("wald", shape)
    if shape is None:  # the parameters' broadcast shape
        shape = _c.broadcast_shapes("wald", np.shape(mean))
    return _d.wald(key, mean, shape, dtype, _c.partitionable())


@random_function("generalized_normal", static=("shape", "dtype"))
def generalized_normal(key, p, shape=(), dtype=None):
    """Floats of density proportional to ``exp(-|x| ** p)``: a signed Gamma(1/p) ** (1/p)."""
    dtype = _c.float_dtype("generalized_normal", dtype)
    shape = _c.canonical_shape("generalized_normal", shape)
    return _d.generalized_normal(key, p, shape, dtype, _c.partitionable())


@random_function("ball", static=("d", "shape", "dtype"), check=_c.check_scalar_int("d"))
def ball(key, d, p=2, shape=(), dtype=None):
    """Points uniform in the unit Lp ball of dimension ``d``: shape ``shape + (d,)``."""
    dtype = _c.float_dtype("ball", dtype)
    shape = _c.canonical_shape("ball", shape)
    return _d.ball(key, d, p, shape, dtype, _c.partitionable())


@random_function("orthogonal", static=("n", "shape", "dtype", "m"),
                 check=_c.check_scalar_int("n", "m"))
def orthogonal(key, n, shape=(), dtype=None, m=None):
    """Uniformly random orthogonal (unitary, for a complex dtype) ``n x m`` matrices, batch
    shape ``shape``: orthonormal rows if n <= m, columns if m <= n."""
    dtype = _c.inexact_user_dtype("orthogonal", dtype)
    shape = _c.canonical_shape("orthogonal", shape)
    m = _c.default_to(m, n)
    return _d.orthogonal(key, n, m, shape, dtype, _c.partitionable())


@random_function("geometric", static=("shape", "dtype"),
                 check=_c.check_param_shapes("shape", "p"))
def geometric(key, p, shape=None, dtype=None):
    """The number of Bernoulli(p) trials up to the first success (int32 by default)."""
    dtype = _c.int_result_dtype("geometric", dtype)
    shape = _c.optional_shape("geometric", shape)
    if shape is None:  # the parameters' broadcast shape
        shape = _c.broadcast_shapes("geometric", np.shape(p))
    return _d.geometric(key, p, shape, dtype, _c.partitionable())


# --- counts (_src/random/discrete.py) ------------------------------------------------------------

@random_function("poisson", static=("shape", "dtype"), check=_c.check_param_shapes("shape", "lam"))
def poisson(key, lam, shape=None, dtype=None):
    """Poisson(lam) integers (int32 by default): Knuth's algorithm for lam < 10, else
    transformed rejection."""
    dtype = _c.int_dtype("poisson", dtype)
    shape = _c.optional_shape("poisson", shape)
    if shape is None:
        shape = np.shape(lam)
    return _dd.poisson(key, lam, shape, dtype, _c.partitionable())


@random_function("binomial", static=("shape", "dtype"),
                 check=_c.check_param_shapes("shape", "n", "p"))
def binomial(key, n, p, shape=None, dtype=None):
    """Binomial(n, p) counts as floats (float32 by default): inversion for n * min(p, 1 - p)
    <= 10, else BTRS rejection."""
    dtype = _c.float_dtype("binomial", dtype)
    shape = _c.optional_shape("binomial", shape)
    if shape is None:  # the parameters' broadcast shape
        shape = _c.broadcast_shapes("binomial", np.shape(n), np.shape(p))
    return _dd.binomial(key, n, p, shape, dtype, _c.partitionable())


@random_function("multinomial", static=("shape", "dtype", "unroll"),
                 check=_c.check_multinomial)
def multinomial(key, n, p, *, shape=None, dtype=None, unroll=1):
    """Counts of ``n`` trials among the outcomes along p's last axis (floats, float32 by
    default): one binomial per outcome. ``unroll`` is accepted and ignored."""
    dtype = _c.float_dtype("multinomial", dtype)
    n, p = _s.promote_inexact(n, p)
    shape = _c.optional_shape("multinomial", shape)
    if shape is None:
        shape = p.shape
    return _dd.multinomial(key, n, p, shape, dtype, _c.partitionable())
