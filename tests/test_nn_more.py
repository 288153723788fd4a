"""The rest of jax.nn in astjax.nn: activations, glu, logmeanexp, log1mexp and
dot_product_attention, against JAX 0.10.2's values (recorded as literals), NumPy and finite
differences; eagerly, under jit, grad and vmap."""
import numpy as np
import pytest

import astjax
import astjax.numpy as jnp
from astjax import nn
from astjax.test_util import check_grads

X = np.array([-5.0, -3.0, -2.0, -1.0, -0.5, 0.0, 0.5, 1.0, 2.0, 3.0, 5.0], np.float32)

# name -> (JAX's f(X), JAX's vmap(grad(f))(X)), float32; the kinks (-3, -1, 0, 1, 3) are
# among the points, so the slopes there are JAX's choices (relu6's rule, clip's 1/2s)
JAX_AT_X = {
    "identity": (
        [-5.0, -3.0, -2.0, -1.0, -0.5, 0.0, 0.5, 1.0, 2.0, 3.0, 5.0],
        [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0]),
    "tanh": (
        [-0.99990916, -0.99505472, -0.96402758, -0.76159418, -0.46211717, 0.0, 0.46211717,
         0.76159418, 0.96402758, 0.99505472, 0.99990916],
        [0.00018167496, 0.0098661184, 0.070650816, 0.41997433, 0.78644776, 1.0, 0.7864477,
         0.41997433, 0.070650816, 0.0098661007, 0.00018166671]),
    "hard_tanh": (
        [-1.0, -1.0, -1.0, -1.0, -0.5, 0.0, 0.5, 1.0, 1.0, 1.0, 1.0],
        [0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.0, 0.0, 0.0]),
    "hard_sigmoid": (
        [0.0, 0.0, 0.16666667, 0.33333334, 0.41666669, 0.5, 0.58333337, 0.66666669, 0.83333337,
         1.0, 1.0],
        [0.0, 0.0, 0.16666667, 0.16666667, 0.16666667, 0.16666667, 0.16666667, 0.16666667,
         0.16666667, 0.0, 0.0]),
    "hard_silu": (
        [-0.0, -0.0, -0.33333334, -0.33333334, -0.20833334, 0.0, 0.29166669, 0.66666669,
         1.6666667, 3.0, 5.0],
        [0.0, 0.0, -0.16666667, 0.16666667, 0.33333334, 0.5, 0.66666669, 0.83333337, 1.1666667,
         1.0, 1.0]),
    "celu": (
        [-0.99326205, -0.95021296, -0.86466473, -0.63212055, -0.39346933, 0.0, 0.5, 1.0, 2.0,
         3.0, 5.0],
        [0.0067379475, 0.049787045, 0.13533527, 0.36787945, 0.60653067, 1.0, 1.0, 1.0, 1.0,
         1.0, 1.0]),
    "soft_sign": (
        [-0.83333331, -0.75, -0.66666669, -0.5, -0.33333334, 0.0, 0.33333334, 0.5, 0.66666669,
         0.75, 0.83333331],
        [0.027777776, 0.0625, 0.11111112, 0.25, 0.44444448, 1.0, 0.44444448, 0.25, 0.11111112,
         0.0625, 0.027777776]),
    "squareplus": (
        [0.19258237, 0.30277562, 0.41421354, 0.61803401, 0.78077638, 1.0, 1.2807764, 1.618034,
         2.4142137, 3.3027756, 5.1925821],
        [0.035761662, 0.083974853, 0.14644662, 0.2763932, 0.37873217, 0.5, 0.6212678,
         0.72360682, 0.85355341, 0.91602516, 0.96423835]),
    "sparse_plus": (
        [0.0, 0.0, 0.0, 0.0, 0.0625, 0.25, 0.5625, 1.0, 2.0, 3.0, 5.0],
        [0.0, 0.0, 0.0, 0.0, 0.25, 0.5, 0.75, 1.0, 1.0, 1.0, 1.0]),
    "sparse_sigmoid": (
        [0.0, 0.0, 0.0, 0.0, 0.25, 0.5, 0.75, 1.0, 1.0, 1.0, 1.0],
        [0.0, 0.0, 0.0, 0.25, 0.5, 0.5, 0.5, 0.25, 0.0, 0.0, 0.0]),
    "mish": (
        [-0.033576235, -0.14564745, -0.25250146, -0.30340144, -0.22074378, 0.0, 0.37524524,
         0.86509848, 1.943959, 2.9865355, 4.9995522],
        [-0.026747501, -0.093393117, -0.10835509, 0.059216753, 0.28951067, 0.60000002,
         0.88642442, 1.0490361, 1.0693178, 1.0211061, 1.0007997]),
}


@pytest.mark.parametrize("name", sorted(JAX_AT_X))
def test_elementwise_against_jax(name):
    value, slope = JAX_AT_X[name]
    f = getattr(nn, name)
    got = f(X)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, value, rtol=2e-6, atol=1e-7)
    np.testing.assert_allclose(astjax.jit(f)(X), value, rtol=2e-6, atol=1e-7)
    # JAX's tanh' is 1 - tanh**2 rounded in float32: a few 1e-4 off near |x| = 5
    rtol = 1e-3 if name == "tanh" else 2e-6
    np.testing.assert_allclose(astjax.vmap(astjax.grad(f))(X), slope, rtol=rtol, atol=1e-7)
    np.testing.assert_allclose(astjax.jit(astjax.vmap(astjax.grad(f)))(X), slope, rtol=rtol,
                               atol=1e-7)


def test_aliases_and_parameters():
    assert nn.hard_swish is nn.hard_silu and nn.tanh is jnp.tanh
    x = np.linspace(-3, 3, 7, dtype=np.float32)
    np.testing.assert_allclose(nn.celu(x, 2.0), np.where(x > 0, x, 2.0 * np.expm1(x / 2.0)),
                               rtol=1e-6)
    np.testing.assert_allclose(nn.squareplus(x, 1.0), (x + np.sqrt(x * x + 1)) / 2, rtol=1e-6)


def test_relu_and_relu6_slopes_are_jaxs():
    """relu and relu6 carry JAX's custom_jvps: slope 0 at every kink (relu6's reach
    hard_sigmoid's); the formulas' max and min gave 1/2."""
    x = np.array([-1.0, 0.0, 3.0, 6.0, 7.0], np.float32)
    np.testing.assert_array_equal(astjax.vmap(astjax.grad(nn.relu6))(x), [0, 0, 1, 0, 0])
    np.testing.assert_array_equal(astjax.vmap(astjax.grad(nn.relu))(x), [0, 0, 1, 1, 1])
    np.testing.assert_array_equal(astjax.jit(astjax.grad(nn.relu))(0.0), 0.0)
    check_grads(nn.relu6, (np.array([-1.5, 0.5, 5.5, 8.0]),), order=2)
    check_grads(nn.relu, (np.array([-1.5, 0.5, 5.5]),), order=2)


def test_log1mexp_against_jax():
    y = np.array([0.01, 0.3, 0.69, 0.7, 2.0, 30.0], np.float32)
    value = [-4.6101661, -1.3502257, -0.69630426, -0.68634099, -0.14541346, -9.3576229e-14]
    slope = [99.500839, 2.8582962, 1.0063242, 0.98643386, 0.15651764, 9.3576236e-14]
    np.testing.assert_allclose(nn.log1mexp(y), value, rtol=2e-6)
    np.testing.assert_allclose(astjax.jit(nn.log1mexp)(y), value, rtol=2e-6)
    np.testing.assert_allclose(astjax.vmap(astjax.grad(nn.log1mexp))(y), slope, rtol=2e-6)
    check_grads(nn.log1mexp, (np.array([0.2, 0.6, 1.5]),), order=2, modes=("fwd", "rev"))


def test_glu_and_logmeanexp():
    x = np.random.RandomState(1).randn(3, 4, 6)
    a, b = x[..., :3], x[..., 3:]
    np.testing.assert_allclose(nn.glu(x), a / (1 + np.exp(-b)), rtol=1e-6)
    np.testing.assert_allclose(astjax.jit(nn.glu, static_argnums=1)(x, 1),
                               x[:, :2] / (1 + np.exp(-x[:, 2:])), rtol=1e-6)
    with np.errstate(divide="ignore"):
        lme = np.log(np.mean(np.exp(x), axis=1))
    np.testing.assert_allclose(nn.logmeanexp(x, axis=1), lme, rtol=1e-5)
    np.testing.assert_allclose(astjax.jit(lambda v: nn.logmeanexp(v, axis=1, keepdims=True))(x),
                               lme[:, None], rtol=1e-5)
    np.testing.assert_allclose(nn.logmeanexp(x), np.log(np.mean(np.exp(x))), rtol=1e-5)
    where = x > 0
    masked = np.log(np.sum(np.where(where, np.exp(x), 0), -1) / where.sum(-1))
    np.testing.assert_allclose(astjax.jit(lambda v, w: nn.logmeanexp(v, -1, w))(x, where),
                               masked, rtol=1e-5)
    check_grads(lambda v: nn.logmeanexp(v, axis=(0, 2)), (x,), order=1)
    check_grads(lambda v: nn.glu(v, axis=1), (x[:, :, :2],), order=1)


def _attention_inputs():
    r = np.random.RandomState(0)
    q = r.randn(2, 3, 4, 5).astype(np.float32)  # B T N H
    k = r.randn(2, 6, 2, 5).astype(np.float32)  # B S K H: two query heads per key head
    v = r.randn(2, 6, 2, 5).astype(np.float32)
    bias = r.randn(1, 4, 3, 6).astype(np.float32)
    mask = r.rand(2, 1, 3, 6) > 0.3
    w = np.linspace(-1, 1, q.size).reshape(q.shape).astype(np.float32)
    return q, k, v, bias, mask, w


def _ramp(a):
    a = np.asarray(a)
    return float((a * np.linspace(0, 1, a.size).reshape(a.shape)).sum())


def test_dot_product_attention_against_jax():
    q, k, v, bias, mask, w = _attention_inputs()
    q_lengths, kv_lengths = np.array([2, 3], np.int32), np.array([4, 6], np.int32)

    def masked(q, k, v, b):
        return (nn.dot_product_attention(q, k, v, b, mask, is_causal=True) * w).sum()

    def windowed(q, k, v):
        out = nn.dot_product_attention(q, k, v, scale=0.7, local_window_size=(1, 2),
                                       query_seq_lengths=q_lengths,
                                       key_value_seq_lengths=kv_lengths)
        return (out * w).sum()

    # JAX 0.10.2 (implementation "xla") on the same inputs
    np.testing.assert_allclose(float((nn.dot_product_attention(q, k, v) * w).sum()),
                               1.3009836673736572, rtol=1e-5)
    np.testing.assert_allclose(masked(q, k, v, bias), 2.3022477626800537, rtol=1e-5)
    np.testing.assert_allclose(astjax.jit(masked)(q, k, v, bias), 2.3022477626800537, rtol=1e-5)
    np.testing.assert_allclose(windowed(q, k, v), 7.422250747680664, rtol=1e-5)
    grads = astjax.jit(astjax.grad(masked, argnums=(0, 1, 2, 3)))(q, k, v, bias)
    np.testing.assert_allclose([_ramp(g) for g in grads],
                               [-2.6166272188122033, 0.05013496336378473, 17.947144863000062,
                                0.0010610982041123762], rtol=1e-5, atol=1e-6)
    grads = astjax.grad(windowed, argnums=(0, 1, 2))(q, k, v)
    np.testing.assert_allclose([_ramp(g) for g in grads],
                               [-2.9165414596590833, 0.3168424768686419, 16.638087951061667],
                               rtol=1e-5)
    out, lse = nn.dot_product_attention(q, k, v, return_residual=True)
    assert out.shape == q.shape and lse.shape == (2, 3, 4)
    np.testing.assert_allclose(_ramp(lse), 25.96300652752752, rtol=1e-5)
    # a row with every logit masked averages the values, as JAX's large negative number does
    nothing = np.zeros((1, 1, 3, 6), bool)
    np.testing.assert_allclose(float((nn.dot_product_attention(q, k, v, mask=nothing) * w).sum()),
                               -4.574384689331055, rtol=1e-5)


def test_dot_product_attention_layouts_and_vmap():
    q, k, v, bias, mask, w = _attention_inputs()
    per_example = nn.dot_product_attention(q, k, v, bias, mask)
    # (T, N, H) inputs without the batch axis, and vmap over the batch, give each example's
    np.testing.assert_allclose(nn.dot_product_attention(q[1], k[1], v[1], bias[0], mask[1, 0]),
                               per_example[1], rtol=1e-5, atol=1e-6)
    batched = astjax.vmap(lambda a, b, c, m: nn.dot_product_attention(a, b, c, bias[0], m))
    np.testing.assert_allclose(batched(q, k, v, mask[:, 0]), per_example, rtol=1e-5, atol=1e-6)
    # against NumPy: softmax(q k^T / sqrt(H)) v per head, key head n // 2 for query head n
    kk, vv = np.repeat(k, 2, axis=2), np.repeat(v, 2, axis=2)
    logits = np.einsum("btnh,bsnh->bnts", q, kk) / np.sqrt(5.0)
    p = np.exp(logits - logits.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    np.testing.assert_allclose(nn.dot_product_attention(q, k, v),
                               np.einsum("bnts,bsnh->btnh", p, vv), rtol=1e-5, atol=1e-6)
    with pytest.raises(NotImplementedError, match="cudnn"):
        nn.dot_product_attention(q, k, v, implementation="cudnn")


def new_activations(x):
    return nn.hard_silu(x) + nn.mish(x) + nn.sparse_plus(x) + nn.log1mexp(jnp.abs(x) + 0.5)


def test_on_numba(numba_backend):
    jitted = astjax.jit(new_activations)
    got = jitted(X)
    (compiled,) = jitted.cache.values()
    assert compiled.backend == "numba" and getattr(compiled, "_twin", None) is None
    np.testing.assert_allclose(got, new_activations(X), rtol=2e-6, atol=1e-6)
