"""The distributions, as JAX computes them (jax/_src/random/core.py), in ``astjax.numpy``.

Arguments here are already checked and canonicalized by ``astjax.random``: shapes
are tuples of ints, dtypes NumPy dtypes, ``partitionable`` a bool. In compiled code (jit,
vmap) a shape taken from a parameter array computed at run time (``logits.shape``) has
sizes known only at run time: ``threefry`` then counts its random bits at run time. Keys are uint32
arrays ``B + (2,)``; the scalar draws inside the gamma sampler use a batch ``B`` of
keys, everything else one key. Every function is compiled by ``jit`` as well as run
eagerly, so no try/except, nested defs or value-dependent Python branches.
"""
import functools

import numpy as np

import astjax.numpy as jnp

# registers the VJP rule of the fma op used below
from ..ad.custom import custom_jvp
from ..lax.incomplete import random_gamma_grad
from . import ad_rules  # noqa: F401
from . import checks as _c
from . import threefry as _tf
from . import special as _sp
from .special import cholesky, erfinv

_SQRT2 = 1.4142135623730951


# --- uniform floats and their transforms ------------------------------------------------------

def uniform(key, shape, dtype, minval, maxval, partitionable):
    """[minval, maxval): random mantissa bits with exponent 0 give a float in [1, 2); minus 1
    that is ``m * 2**-nmant`` exactly, computed here without a bitcast. The scaling is a
    fused multiply-add in float32/float64, as XLA computes it (float16: two roundings)."""
    nbits, nmant, _, _ = _c.finfo(dtype)
    minval = jnp.asarray(minval).astype(dtype)
    maxval = jnp.asarray(maxval).astype(dtype)
    bits = _tf.random_bits(key, nbits, shape, partitionable)
    mantissa = jnp.right_shift(bits, nbits - nmant)
    floats = mantissa.astype(dtype) * jnp.asarray(2.0 ** -nmant, dtype=dtype)
    if nbits == 16:
        return jnp.maximum(minval, floats * (maxval - minval) + minval)
    return jnp.maximum(minval, jnp.fma(floats, maxval - minval, minval))


def normal(key, shape, dtype, partitionable):
    if dtype.kind == "c":  # real and imaginary parts from split keys, variance 1 in all
        key_re, key_im = _tf.split2(key, partitionable)
        real_dtype = _c.real_dtype(dtype)
        re = normal(key_re, shape, real_dtype, partitionable).astype(dtype)
        im = normal(key_im, shape, real_dtype, partitionable).astype(dtype)
        return (re + 1j * im) / jnp.asarray(_SQRT2, dtype=dtype)
    lo = jnp.nextafter(jnp.asarray(-1.0, dtype=dtype), jnp.asarray(0.0, dtype=dtype))
    u = uniform(key, shape, dtype, lo, 1.0, partitionable)
    return jnp.asarray(_SQRT2, dtype=dtype) * erfinv(u)


def truncated_normal(key, lower, upper, shape, dtype, partitionable):
    sqrt2 = jnp.asarray(_SQRT2, dtype=dtype)
    lower = jnp.asarray(lower).astype(dtype)
    upper = jnp.asarray(upper).astype(dtype)
    a = _sp.erf(lower / sqrt2)
    b = _sp.erf(upper / sqrt2)
    u = uniform(key, shape, dtype, a, b, partitionable)
    out = sqrt2 * erfinv(u)
    # clamp to the open interval (lower, upper)
    inf = jnp.asarray(np.inf, dtype=dtype)
    return jnp.clip(out, jnp.nextafter(lower, inf), jnp.nextafter(upper, -inf))


def exponential(key, shape, dtype, partitionable):
    u = uniform(key, shape, dtype, 0.0, 1.0, partitionable)
    return -_sp.log1p(-u)


def laplace(key, shape, dtype, partitionable):
    _, _, _, epsneg = _c.finfo(dtype)
    u = uniform(key, shape, dtype, -1.0 + epsneg, 1.0, partitionable)
    return jnp.sign(u) * _sp.log1p(-jnp.abs(u))


def logistic(key, shape, dtype, partitionable):
    _, _, tiny, _ = _c.finfo(dtype)
    x = uniform(key, shape, dtype, tiny, 1.0, partitionable)
    return _sp.log(x) - _sp.log1p(-x)


def gumbel(key, shape, dtype, mode, partitionable):
    _, nmant, tiny, _ = _c.finfo(dtype)
    if mode == "high":
        both = uniform(key, (2,) + shape, dtype, 0.0, 1.0, partitionable)
        high = both[0]
        low = both[1]
        x = jnp.where(high >= 0.5, high, high + (2.0 ** -nmant) * low + tiny)
        return -_sp.log(-_sp.log1p(-x))
    return -_sp.log(-_sp.log(uniform(key, shape, dtype, tiny, 1.0, partitionable)))


def bernoulli(key, p, shape, mode, partitionable):
    p = jnp.asarray(p)
    if mode == "high":
        _, nmant, _, _ = _c.finfo(p.dtype)
        both = uniform(key, (2,) + shape, p.dtype, 0.0, 1.0, partitionable)
        u2 = both[1] * (2.0 ** -nmant)
        return u2 < p - both[0]
    return uniform(key, shape, p.dtype, 0.0, 1.0, partitionable) < p


# --- integers ---------------------------------------------------------------------------------

def _urem(x, y):
    """Unsigned remainder with XLA's x % 0 == x."""
    zero = y == 0
    return jnp.where(zero, x, x % jnp.where(zero, jnp.ones_like(y), y))


def _convert_and_clip(val, dtype):
    lo, hi = _c.clip_bounds(dtype, val.dtype)
    return jnp.clip(val, jnp.asarray(lo, dtype=val.dtype),
                    jnp.asarray(hi, dtype=val.dtype)).astype(dtype)


def randint(key, shape, minval, maxval, dtype, partitionable):
    """JAX's modulus method with twice the bits: (hi * (2**nbits % span) + lo) % span."""
    minval = jnp.asarray(minval)
    maxval = jnp.asarray(maxval)
    if minval.dtype.kind not in "iu":
        minval = minval.astype(_c.int_dtype("randint", None))
    if maxval.dtype.kind not in "iu":
        maxval = maxval.astype(_c.int_dtype("randint", None))
    _, dtype_max = _c.iinfo_bounds(dtype)
    maxval_out_of_range = maxval > _convert_and_clip(jnp.asarray(dtype_max, dtype=dtype),
                                                     maxval.dtype)
    # at least 1-d from here: NumPy warns when 0-d integer arithmetic wraps, arrays wrap quietly
    maxval_out_of_range = jnp.atleast_1d(maxval_out_of_range)
    minval = jnp.atleast_1d(_convert_and_clip(minval, dtype))
    maxval = jnp.atleast_1d(_convert_and_clip(maxval, dtype))
    nbits = dtype.itemsize * 8
    k1, k2 = _tf.split2(key, partitionable)
    higher_bits = _tf.random_bits(k1, nbits, shape, partitionable)
    lower_bits = _tf.random_bits(k2, nbits, shape, partitionable)
    udtype = _c.uint_of_width(nbits)
    span = (maxval - minval).astype(udtype)
    span = jnp.where(maxval <= minval, jnp.ones_like(span), span)
    span = jnp.where(maxval_out_of_range & (maxval > minval), span + jnp.ones_like(span), span)
    multiplier = _urem(jnp.asarray(2 ** (nbits // 2), dtype=udtype), span)
    multiplier = _urem(multiplier * multiplier, span)
    offset = _urem(higher_bits, span) * multiplier + _urem(lower_bits, span)
    offset = _urem(offset, span)
    return jnp.reshape(minval + offset.astype(dtype), shape)


# --- sorting-based samplers -------------------------------------------------------------------

def take_along_axis(x, idx, axis):
    """``x`` gathered along ``axis`` with ``idx`` (same shape as ``x``)."""
    if x.ndim == 1:
        return x[idx]
    xm = jnp.moveaxis(x, axis, -1)
    im = jnp.moveaxis(idx, axis, -1)
    n = xm.shape[-1]
    m = xm.size // n
    rows = jnp.expand_dims(jnp.arange(m), -1)
    out = jnp.reshape(xm.reshape(m, n)[rows, im.reshape(m, n)], xm.shape)
    return jnp.moveaxis(out, -1, axis)


def _shuffle_rounds_known(shape):
    return _c.shuffle_rounds(_c.size_of(shape))


def _shuffle_rounds_at_run_time(shape):
    n = _tf.size(shape)
    return jnp.sum((n > _c.SHUFFLE_ROUND_LIMITS).astype(jnp.int32))


# JAX's number of rounds for ``shape``'s size: 0 to 3 (limits computed from its formula)
shuffle_rounds = _c.known_or_run_time(_shuffle_rounds_known, _shuffle_rounds_at_run_time)


def shuffle(key, x, axis, shape, partitionable):
    """Sort by random 32-bit keys, as many rounds as JAX takes for this size (stable).
    ``shape`` is ``x.shape``, passed as a constant where it is one (``x = arange(n)``), so
    that compiled code knows the number of rounds and of random bits."""
    rounds = shuffle_rounds(shape)
    for _ in range(rounds):
        key, subkey = _tf.split2(key, partitionable)
        sort_keys = _tf.random_bits(subkey, 32, shape, partitionable)
        x = take_along_axis(x, jnp.argsort(sort_keys, axis=axis), axis)
    return x


def take(arr, ind, axis):
    """jnp.take(arr, ind, axis) for an index array of any shape."""
    moved = jnp.moveaxis(arr, axis, 0)
    picked = moved[jnp.ravel(ind)]
    picked = jnp.reshape(picked, ind.shape + moved.shape[1:])
    return jnp.moveaxis(picked, _c.leading_axes(ind.ndim), _c.trailing_axes(axis, ind.ndim))


def top_k_indices(x, k):
    """Indices of the k largest entries along the last axis; ties: lower index first."""
    return jnp.argsort(-x, axis=-1)[..., :k]


def permutation(key, x, axis, independent, partitionable):
    if independent or x.ndim == 1:
        return shuffle(key, x, axis, x.shape, partitionable)
    n = x.shape[axis]
    ind = shuffle(key, jnp.arange(n), 0, (n,), partitionable)
    return take(x, ind, axis)


def choice(key, arr, n_inputs, shape, replace, p, axis, mode, partitionable):
    n_draws = _c.size_of(shape)
    if p is None:
        if replace:
            ind = randint(key, shape, 0, n_inputs, _c.int_dtype("choice", None), partitionable)
            if arr.ndim == 0:
                return ind
            return take(arr, ind, axis)
        if arr.ndim == 0:
            perm = shuffle(key, jnp.arange(n_inputs), 0, (n_inputs,), partitionable)
            return jnp.reshape(perm[:n_draws], shape)
        perm = permutation(key, arr, axis, False, partitionable)
        picked = jnp.moveaxis(jnp.moveaxis(perm, axis, 0)[:n_draws], 0, axis)
        return jnp.reshape(picked, arr.shape[:axis] + shape + arr.shape[axis + 1:])
    p_arr = jnp.asarray(p)
    if replace:
        p_cuml = jnp.cumsum(p_arr)
        r = p_cuml[-1] * (1 - uniform(key, shape, p_cuml.dtype, 0.0, 1.0, partitionable))
        # searchsorted(p_cuml, r), side='left': how many cumulative sums are below r
        below = jnp.expand_dims(p_cuml, _c.leading_axes(len(shape))) < jnp.expand_dims(r, -1)
        ind = jnp.sum(below, axis=-1).astype(_c.int_dtype("choice", None))
    else:
        g = gumbel(key, (n_inputs,), p_arr.dtype, mode, partitionable) + _sp.log(p_arr)
        ind = jnp.reshape(top_k_indices(g, n_draws), shape)
    if arr.ndim == 0:
        return ind
    return take(arr, ind, axis)


def categorical(key, logits, axis, shape, replace, mode, partitionable):
    """``shape``: the sample shape, ending in the shape of logits without ``axis`` (the batch
    shape) or one that broadcasts to it."""
    ndim = logits.ndim
    n_batch = ndim - 1
    prefix = shape[:len(shape) - n_batch]
    if replace:
        batch = shape[len(shape) - n_batch:]
        # the batch shape with the categories inserted at axis (their number may be known
        # at run time only)
        logits_shape = batch[:axis] + (logits.shape[axis],) + batch[axis:]
        g = gumbel(key, prefix + logits_shape, logits.dtype, mode, partitionable)
        shifted = g + jnp.expand_dims(logits, _c.leading_axes(len(prefix)))
        return jnp.argmax(shifted, axis=axis - ndim)
    perturbed = logits + gumbel(key, logits.shape, logits.dtype, mode, partitionable)
    k = _c.size_of(prefix)
    indices = top_k_indices(jnp.moveaxis(perturbed, axis, -1), k)   # batch_shape + (k,)
    return jnp.reshape(jnp.moveaxis(indices, -1, 0), shape)


def _promote_inexact_known(mean, cov):
    return _c.promote_inexact(mean, cov)


def _promote_inexact_at_run_time(mean, cov):
    mean = jnp.asarray(mean)
    cov = jnp.asarray(cov)
    dtype = _c.promote_inexact_dtypes(mean.dtype, cov.dtype)
    return mean.astype(dtype), cov.astype(dtype)


# mean and cov of one common inexact dtype (JAX's promote_dtypes_inexact)
promote_inexact = _c.known_or_run_time(_promote_inexact_known, _promote_inexact_at_run_time)


def multivariate_normal(key, mean, cov, shape, dtype, method, partitionable):
    if method == "svd":
        u, s, _ = np.linalg.svd(np.asarray(cov))
        factor = jnp.asarray(u * np.sqrt(s[..., None, :]))
    elif method == "eigh":
        w, v = np.linalg.eigh(np.asarray(cov))
        factor = jnp.asarray(v * np.sqrt(w[..., None, :]))
    else:
        factor = cholesky(cov)
    z = normal(key, shape + mean.shape[-1:], dtype, partitionable)
    return mean + jnp.einsum("...ij,...j->...i", factor, z)


# --- gamma and friends ------------------------------------------------------------------------

def _gamma_accept_not_yet(X, V, U, d):
    """Marsaglia-Tsang: keep going while U >= 1 - 0.0331 X^2 and log U >= X/2 + d(1 - V + log V)
    (X is x^2 here, V = v^3)."""
    first = U >= jnp.fma(-0.0331, X * X, 1.0)
    second = _sp.log(U) >= X * 0.5 + d * ((1.0 - V) + _sp.log(V))
    return first & second


def _gamma_batch(keys, alpha, log_space, partitionable):
    """One Marsaglia-Tsang draw per element of ``alpha`` (shape (n,)) with its own key
    (``keys``: (n, 2)): JAX's per-element while loops, run for all elements at once;
    an element's state stops changing once its loop is over, as under JAX's vmap."""
    dtype = alpha.dtype
    boost_mask = alpha >= 1.0
    alpha_orig = alpha
    alpha = jnp.where(boost_mask, alpha, alpha + 1.0)
    d = alpha - 1.0 / 3.0
    # XLA computes this as (1/3) * rsqrt(d) with the CPU's approximate rsqrt instruction
    # and one Newton step (hardware-dependent): c, and so the sample, may differ from JAX's
    # in the last bits (about 4% of float32 draws)
    c = (1.0 / 3.0) / jnp.sqrt(d)

    key, subkey = _tf.split2(keys, partitionable)
    X = jnp.zeros_like(alpha)
    V = jnp.ones_like(alpha)
    U = jnp.full_like(alpha, 2.0)
    active = _gamma_accept_not_yet(X, V, U, d)
    while jnp.any(active):
        three = _tf.split(key, (3,), partitionable)
        next_key = three[..., 0, :]
        x_key = three[..., 1, :]
        u_key = three[..., 2, :]
        x = jnp.zeros_like(alpha)
        v = jnp.full_like(alpha, -1.0)
        redo = v <= 0.0
        while jnp.any(redo):
            x_key_next, sub = _tf.split2(x_key, partitionable)
            x_new = normal(sub, (), dtype, partitionable)
            v_new = jnp.fma(x_new, c, 1.0)
            x_key = jnp.where(jnp.expand_dims(redo, -1), x_key_next, x_key)
            x = jnp.where(redo, x_new, x)
            v = jnp.where(redo, v_new, v)
            redo = v <= 0.0
        U_new = uniform(u_key, (), dtype, 0.0, 1.0, partitionable)
        key = jnp.where(jnp.expand_dims(active, -1), next_key, key)
        X = jnp.where(active, x * x, X)
        V = jnp.where(active, v * v * v, V)
        U = jnp.where(active, U_new, U)
        active = active & _gamma_accept_not_yet(X, V, U, d)

    if log_space:
        log_samples = -exponential(subkey, (), dtype, partitionable)
        log_boost = jnp.where(boost_mask | (log_samples == 0.0), 0.0,
                              log_samples * (1.0 / alpha_orig))
        return (_sp.log(d) + _sp.log(V)) + log_boost
    samples = 1.0 - uniform(subkey, (), dtype, 0.0, 1.0, partitionable)
    boost = jnp.where(boost_mask, 1.0, samples ** (1.0 / alpha_orig))
    return (d * V) * boost


@functools.partial(custom_jvp, nondiff_argnums=(2, 3))
def _gamma_draws(keys, alpha, log_space, partitionable):
    return _gamma_batch(keys, alpha, log_space, partitionable)


@_gamma_draws.defjvp
def _gamma_draws_jvp(log_space, partitionable, primals, tangents):
    """JAX's implicit derivative of a draw in its shape ``alpha`` (the sample's quantile
    held fixed): lax.random_gamma_grad, not the derivative through the rejection loop."""
    keys, alpha = primals
    t_alpha = tangents[1]
    sample = _gamma_draws(keys, alpha, log_space, partitionable)
    if log_space:  # d log x = dx / x, x = 0 (underflow) read as the smallest normal
        x = jnp.exp(sample)
        x = jnp.where(x == 0.0, jnp.finfo(x.dtype).tiny, x)
        slope = random_gamma_grad(alpha, x) / x
    else:
        slope = random_gamma_grad(alpha, sample)
    return sample, t_alpha * slope


def _gamma_inputs(key, a, shape, dtype, partitionable):
    """One key per element of ``shape`` and ``a`` broadcast to it, both flat."""
    a = jnp.broadcast_to(jnp.asarray(a).astype(dtype), shape)
    n = _tf.size(shape)
    return _tf.split(key, (n,), partitionable), jnp.reshape(a, (n,))


def gamma(key, a, shape, dtype, log_space, partitionable):
    """Gamma(a) samples of ``shape`` (``a`` broadcast to it), one key per element."""
    keys, a = _gamma_inputs(key, a, shape, dtype, partitionable)
    return jnp.reshape(_gamma_draws(keys, a, log_space, partitionable), shape)


def beta(key, a, b, shape, dtype, partitionable):
    key_a, key_b = _tf.split2(key, partitionable)
    keys_a, a = _gamma_inputs(key_a, a, shape, dtype, partitionable)
    keys_b, b = _gamma_inputs(key_b, b, shape, dtype, partitionable)
    # JAX's two gamma draws as one batch (each element's draw is its own): one rejection
    # loop to compile, not two (jit of beta took 51 s to compile, gamma 19 s)
    both = _gamma_draws(jnp.concatenate([keys_a, keys_b]), jnp.concatenate([a, b]), True,
                        partitionable)
    both = jnp.reshape(both, (2,) + shape)
    log_gamma_a = both[0]
    log_gamma_b = both[1]
    log_max = jnp.maximum(log_gamma_a, log_gamma_b)
    gamma_a_scaled = _sp.exp(log_gamma_a - log_max)
    gamma_b_scaled = _sp.exp(log_gamma_b - log_max)
    return gamma_a_scaled / (gamma_a_scaled + gamma_b_scaled)


def dirichlet(key, alpha, shape, dtype, partitionable):
    log_gamma_samples = gamma(key, alpha, shape + alpha.shape[-1:], dtype, True, partitionable)
    # softmax, as jax.nn.softmax computes it once XLA has turned the division by the
    # broadcast sum into a multiplication by its reciprocal
    unnormalized = _sp.exp(log_gamma_samples - jnp.max(log_gamma_samples, axis=-1,
                                                        keepdims=True))
    return unnormalized * (1.0 / jnp.sum(unnormalized, axis=-1, keepdims=True))
