"""``astjax.nn``: activation functions and softmax, as in ``jax.nn``.

Plain functions written in ``astjax.numpy``, not ops: the compiler reads their
source like user code, so they stay straight-line jnp code (softplus carries its
derivative as a custom_jvp, as JAX's logaddexp does). Every formula is
safe for large |x|: ``exp`` only ever sees non-positive numbers (or the shift
by the maximum makes them so), so no intermediate overflows to inf.
Constants are Python floats, which are weak and keep the input's dtype.
"""
import astjax.numpy as jnp
from astjax import lax
from astjax._src.ad.custom import custom_jvp

_SQRT_2_OVER_PI = 0.7978845608028654
_SQRT_HALF = 0.7071067811865476
_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def relu(x):
    return jnp.maximum(x, 0)


def relu6(x):
    return jnp.minimum(jnp.maximum(x, 0), 6.0)


def sigmoid(x):
    """1 / (1 + exp(-x)), through e = exp(-|x|) <= 1 on both sides of 0."""
    e = jnp.exp(-jnp.abs(x))
    return jnp.where(x >= 0, 1 / (1 + e), e / (1 + e))


@custom_jvp
def softplus(x):
    """log(1 + exp(x)) = max(x, 0) + log1p(exp(-|x|)). Its derivative is sigmoid's rule
    (as JAX's logaddexp has its own): differentiating the formula meets the kinks of max
    and |x| at 0, where it gave slope 0 instead of 1/2."""
    return jnp.maximum(x, 0) + jnp.log1p(jnp.exp(-jnp.abs(x)))


@softplus.defjvp
def _softplus_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return softplus(x), sigmoid(x) * t


def log_sigmoid(x):
    return -softplus(-x)


def silu(x):
    return x * sigmoid(x)


swish = silu


def gelu(x, approximate=True):
    """Gaussian error linear unit; ``approximate`` uses the tanh formula, as JAX's default."""
    if approximate:
        # 0.5 * (1 + tanh(u)) is sigmoid(2u), which does not cancel for negative x
        return x * sigmoid(2 * _SQRT_2_OVER_PI * (x + 0.044715 * (x ** 3)))
    return 0.5 * x * jnp.erfc(-x * _SQRT_HALF)


def elu(x, alpha=1.0):
    safe_x = jnp.where(x > 0, 0.0, x)  # expm1 of the positive side is never taken
    return jnp.where(x > 0, x, alpha * jnp.expm1(safe_x))


def selu(x):
    return _SELU_SCALE * elu(x, _SELU_ALPHA)


def leaky_relu(x, negative_slope=0.01):
    return jnp.where(x >= 0, x, negative_slope * x)


def logsumexp(a, axis=None, keepdims=False):
    """log(sum(exp(a))) over ``axis``, computed as max + log(sum(exp(a - max))).

    A non-finite max (all -inf, or an inf) shifts by 0 instead, so the result is
    -inf or inf rather than nan. The max over the kept size-1 axes drops them
    when ``keepdims`` is False.
    """
    amax = jnp.max(a, axis=axis, keepdims=True)
    # the shift cancels in the value, so its derivative is zero: stop_gradient (as JAX)
    # spares the derivative the max's adjoint
    shift = lax.stop_gradient(jnp.where(jnp.isfinite(amax), amax, 0))
    total = jnp.sum(jnp.exp(a - shift), axis=axis, keepdims=keepdims)
    return jnp.log(total) + jnp.max(shift, axis=axis, keepdims=keepdims)


def softmax(x, axis=-1):
    unnormalized = jnp.exp(x - lax.stop_gradient(jnp.max(x, axis=axis, keepdims=True)))
    return unnormalized / jnp.sum(unnormalized, axis=axis, keepdims=True)


def log_softmax(x, axis=-1):
    shifted = x - lax.stop_gradient(jnp.max(x, axis=axis, keepdims=True))
    return shifted - jnp.log(jnp.sum(jnp.exp(shifted), axis=axis, keepdims=True))


def standardize(x, axis=-1, mean=None, variance=None, epsilon=1e-5):
    """(x - mean) / sqrt(variance + epsilon), by default over ``axis`` of ``x`` itself.

    The variance is the two-pass mean((x - mean)**2), which cannot go negative.
    """
    if mean is None:
        mean = jnp.mean(x, axis=axis, keepdims=True)
    centered = x - mean
    if variance is None:
        variance = jnp.mean(centered * centered, axis=axis, keepdims=True)
    return centered / jnp.sqrt(variance + epsilon)


def one_hot(x, num_classes, dtype=float, axis=-1):
    """1 where the class index along ``axis`` equals ``x``, else 0 (float32 by default).

    Indices outside ``[0, num_classes)`` give all zeros.
    """
    hit = jnp.expand_dims(x, -1) == jnp.arange(num_classes)
    return jnp.moveaxis(hit, -1, axis).astype(dtype)
