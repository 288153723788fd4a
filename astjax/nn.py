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


@custom_jvp
def relu(x):
    return jnp.maximum(x, 0)


@relu.defjvp
def _relu_jvp(primals, tangents):
    # JAX's rule: slope 0 at 0 (the formula's max gives 1/2 there)
    (x,), (t,) = primals, tangents
    return relu(x), jnp.where(x > 0, t, jnp.zeros_like(t))


@custom_jvp
def relu6(x):
    return jnp.minimum(jnp.maximum(x, 0), 6.0)


@relu6.defjvp
def _relu6_jvp(primals, tangents):
    # JAX's rule: slope 0 at both kinks (the formula's max and min would give 1/2 there)
    (x,), (t,) = primals, tangents
    return relu6(x), jnp.where((x > 0) & (x < 6), t, jnp.zeros_like(t))


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


tanh = jnp.tanh


def identity(x):
    return jnp.asarray(x)


def hard_tanh(x):
    return jnp.where(x > 1, 1, jnp.where(x < -1, -1, x))


def hard_sigmoid(x):
    return relu6(x + 3.0) / 6.0


def hard_silu(x):
    return x * hard_sigmoid(x)


hard_swish = hard_silu


def celu(x, alpha=1.0):
    return jnp.maximum(x, 0.0) + alpha * jnp.expm1(jnp.minimum(x, 0.0) / alpha)


def soft_sign(x):
    return x / (jnp.abs(x) + 1)


def squareplus(x, b=4):
    return (x + jnp.sqrt(jnp.square(x) + b)) / 2


def sparse_plus(x):
    return jnp.where(x <= -1.0, 0.0, jnp.where(x >= 1.0, x, (x + 1.0) ** 2 / 4))


def sparse_sigmoid(x):
    # JAX's clip is this min of a max: slope 1/4 at -1 and 1 (astjax's clip gives 1/2)
    return 0.5 * jnp.minimum(jnp.maximum(x + 1.0, 0.0), 2.0)


def mish(x):
    return x * jnp.tanh(softplus(x))


def glu(x, axis=-1):
    """x1 * sigmoid(x2), the halves of ``x`` along ``axis`` (whose size must be even)."""
    x1, x2 = jnp.split(x, 2, axis)
    return x1 * sigmoid(x2)


def logmeanexp(x, axis=None, where=None, keepdims=False):
    """logsumexp(x) - log(n), n the number of elements reduced (those ``where`` selects)."""
    if where is None:
        count = jnp.sum(jnp.ones_like(x), axis=axis, keepdims=keepdims)
    else:
        x = jnp.where(where, x, -jnp.inf)
        count = jnp.sum(jnp.where(where, 1.0, 0.0), axis=axis, keepdims=keepdims)
    lse = logsumexp(x, axis=axis, keepdims=keepdims)
    return lse - jnp.log(count.astype(lse.dtype))


@custom_jvp
def log1mexp(x):
    """log(1 - exp(-x)) for x >= 0, by Maechler's two formulas on either side of log 2."""
    return jnp.where(x < 0.6931471805599453, jnp.log(-jnp.expm1(-x)), jnp.log1p(-jnp.exp(-x)))


@log1mexp.defjvp
def _log1mexp_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return log1mexp(x), t / jnp.expm1(x)


def _ensure_4d(t):
    t = jnp.asarray(t)
    if t.ndim == 3:
        return t[None]
    if t.ndim == 2:
        return t[None, None]
    if t.ndim == 1:
        return t[None, None, None]
    return t


def dot_product_attention(query, key, value, bias=None, mask=None, *, scale=None,
                          is_causal=False, query_seq_lengths=None, key_value_seq_lengths=None,
                          local_window_size=None, implementation=None, return_residual=False):
    """softmax(Q K^T * scale + bias, masked) V per head, JAX's "xla" implementation.

    query is (B, T, N, H) or (T, N, H), key and value (B, S, K, H) with N a multiple of K
    (grouped-query attention: query head n reads key/value head n // (N // K)); bias and
    mask broadcast to (B, N, T, S), mask True where a logit takes part. Masked logits get
    -0.7 * the dtype's max (capped at float32's), as JAX, so a fully masked row averages
    the values. The softmax is taken in float32 (or wider).
    """
    if implementation not in (None, "xla"):
        raise NotImplementedError(f"dot_product_attention: implementation={implementation!r}: "
                                  "astjax has only the 'xla' one")
    squeeze = jnp.ndim(query) == 3
    q, k, v = _ensure_4d(query), _ensure_4d(key), _ensure_4d(value)
    if k.ndim != 4 or v.ndim != 4 or q.ndim != 4:
        raise ValueError("dot_product_attention: query, key and value must be 3-D or 4-D")
    if q.dtype != k.dtype or v.dtype != k.dtype:
        raise ValueError(f"dot_product_attention: query, key and value dtypes differ: "
                         f"{q.dtype}, {k.dtype}, {v.dtype}")
    heads, kv_heads = q.shape[2], k.shape[2]
    groups = heads // kv_heads
    if groups > 1:
        k = jnp.repeat(k, groups, axis=2)
        v = jnp.repeat(v, groups, axis=2)
    logits_dtype = jnp.promote_types(q.dtype, jnp.float32)
    logits = jnp.einsum("BTNH,BSNH->BNTS", q, k).astype(logits_dtype)
    if scale is None:
        scale = 1.0 / jnp.sqrt(q.shape[3])
    logits = logits * jnp.asarray(scale, dtype=logits_dtype)
    if bias is not None:
        logits = (logits + _ensure_4d(bias)).astype(logits_dtype)
    keep = _attention_mask(logits, mask, is_causal, query_seq_lengths, key_value_seq_lengths,
                           local_window_size)
    if keep is not None:
        big = min(float(jnp.finfo(logits_dtype).max), float(jnp.finfo(jnp.float32).max))
        logits = jnp.where(keep, logits, -0.7 * big)
    padded = logits.astype(jnp.promote_types(logits_dtype, jnp.float32))
    probs = softmax(padded, axis=-1).astype(k.dtype)
    encoded = jnp.einsum("BNTS,BSNH->BTNH", probs, v)
    if query_seq_lengths is not None:
        t_pos = jnp.arange(encoded.shape[1])
        valid = t_pos[None, :] < jnp.asarray(query_seq_lengths)[:, None]
        encoded = encoded * valid[:, :, None, None].astype(encoded.dtype)
    if return_residual:
        lse = jnp.transpose(logsumexp(padded, axis=-1).astype(k.dtype), (0, 2, 1))
        lse = lax.stop_gradient(lse)
        if squeeze:
            return encoded[0], lse[0]
        return encoded, lse
    if squeeze:
        return encoded[0]
    return encoded


def _attention_mask(logits, mask, is_causal, q_seqlen, kv_seqlen, local_window_size):
    """The boolean (.., T, S) mask of the logits kept, or None for all."""
    t_len, s_len = logits.shape[2], logits.shape[3]
    q_pos = jnp.arange(t_len)[:, None]
    k_pos = jnp.arange(s_len)[None, :]
    keep = None
    if mask is not None:
        keep = _ensure_4d(mask)
    if is_causal:
        causal = q_pos >= k_pos
        keep = causal if keep is None else keep & causal
    if local_window_size is not None:
        if isinstance(local_window_size, int):
            local_window_size = (local_window_size, local_window_size)
        left, right = local_window_size
        window = (q_pos <= k_pos + left) & (q_pos >= k_pos - right)
        keep = window if keep is None else keep & window
    if q_seqlen is not None:
        valid = jnp.arange(t_len)[None, :, None] < jnp.asarray(q_seqlen)[:, None, None]
        valid = valid[:, None, :, :]
        keep = valid if keep is None else keep & valid
    if kv_seqlen is not None:
        valid = jnp.arange(s_len)[None, None, :] < jnp.asarray(kv_seqlen)[:, None, None]
        valid = valid[:, None, :, :]
        keep = valid if keep is None else keep & valid
    return keep


# ``import astjax.nn.initializers`` (``astjax.nn`` is a module, ``initializers`` one in it)
from astjax._src import initializers  # noqa: E402
import sys as _sys  # noqa: E402
_sys.modules.setdefault(__name__ + ".initializers", initializers)
