"""astjax.nn against NumPy/scipy.special references, in float32 and float64, including
large-magnitude inputs; eager and compiled (the functions are compiled like user code)."""
import numpy as np
import pytest
from scipy import special

import astjax
import astjax.numpy as jnp
from astjax import nn

BIG = [-1e30, -1e4, -100.0, -30.0, -5.0, -1.0, -1e-3, 0.0, 1e-3, 1.0, 5.0, 30.0, 100.0, 1e4,
       1e30]
MODERATE = [v for v in BIG if abs(v) <= 1e4]  # gelu's x**3 overflows past ~1e12, harmlessly

SELU_ALPHA, SELU_SCALE = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946


def _elu(x, alpha=1.0):
    return np.where(x > 0, x, alpha * np.expm1(np.minimum(x, 0)))


def _gelu_tanh(x):
    """0.5 x (1 + tanh(u)), written as x sigmoid(2u): no cancellation for negative x."""
    return x * special.expit(2 * np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3))


# name -> (reference on float64 inputs, inputs)
ELEMENTWISE = {
    "relu": (lambda x: np.maximum(x, 0), BIG),
    "relu6": (lambda x: np.clip(x, 0, 6), BIG),
    "sigmoid": (special.expit, BIG),
    "log_sigmoid": (special.log_expit, BIG),
    "softplus": (lambda x: np.logaddexp(x, 0), BIG),
    "silu": (lambda x: x * special.expit(x), BIG),
    "swish": (lambda x: x * special.expit(x), BIG),
    "elu": (_elu, BIG),
    "selu": (lambda x: SELU_SCALE * _elu(x, SELU_ALPHA), BIG),
    "leaky_relu": (lambda x: np.where(x >= 0, x, 0.01 * x), BIG),
    "gelu": (_gelu_tanh, MODERATE),
}


def check_close(got, expected, dtype):
    """Same dtype; finite wherever the reference is; close (relative, or tiny absolute)."""
    expected = np.asarray(expected, np.float64)
    got = np.asarray(got)
    assert got.dtype == dtype
    finite = np.isfinite(expected)
    assert np.all(np.isfinite(got[finite])), (got, expected)
    tiny = np.finfo(dtype).tiny
    rtol = 4e-6 if dtype == np.float32 else 1e-13
    np.testing.assert_allclose(got.astype(np.float64), expected, rtol=rtol, atol=tiny)


@pytest.mark.parametrize("name", sorted(ELEMENTWISE))
def test_elementwise_float32(name):
    reference, values = ELEMENTWISE[name]
    x = np.array(values, np.float32)
    with np.errstate(over="ignore"):
        expected = reference(x.astype(np.float64))
    check_close(getattr(nn, name)(jnp.array(x)), expected.astype(np.float32), np.float32)


@pytest.mark.parametrize("name", sorted(ELEMENTWISE))
def test_elementwise_float64(name, x64):
    reference, values = ELEMENTWISE[name]
    x = np.array(values, np.float64)
    with np.errstate(over="ignore"):
        expected = reference(x)
    check_close(getattr(nn, name)(jnp.array(x)), expected, np.float64)


def test_gelu_exact():
    x = np.array(MODERATE, np.float32)
    check_close(nn.gelu(jnp.array(x), approximate=False),
                (x.astype(np.float64) * special.ndtr(x.astype(np.float64))).astype(np.float32),
                np.float32)


def test_parameters_and_int_inputs():
    x = np.array([-2.0, -0.5, 0.0, 3.0], np.float32)
    check_close(nn.elu(jnp.array(x), alpha=0.5), _elu(x.astype(np.float64), 0.5), np.float32)
    check_close(nn.leaky_relu(jnp.array(x), negative_slope=0.2),
                np.where(x >= 0, x, 0.2 * x), np.float32)
    ints = jnp.array([-3, 0, 4])
    assert nn.relu(ints).dtype == np.int32
    check_close(nn.sigmoid(ints), special.expit([-3.0, 0.0, 4.0]).astype(np.float32), np.float32)
    check_close(nn.softplus(ints), np.logaddexp([-3.0, 0.0, 4.0], 0), np.float32)
    assert nn.swish is nn.silu


def test_nan_propagates():
    x = jnp.array([np.nan, 1.0])
    for fn in (nn.sigmoid, nn.softplus, nn.log_sigmoid, nn.silu, nn.elu, nn.gelu):
        assert np.isnan(np.asarray(fn(x))[0]), fn.__name__


# --- logsumexp, softmax, log_softmax -------------------------------------------------------

ROWS = np.array([[1e4, 1e4 + 1, 1e4 - 3, 0.0],
                 [-1e4, -1e4 - 2, -1e4, -1e4],
                 [0.5, -0.25, 3.0, 2.0]])


@pytest.mark.parametrize("axis", [None, 0, 1, -1, (0, 1)])
@pytest.mark.parametrize("keepdims", [False, True])
def test_logsumexp(axis, keepdims):
    expected = special.logsumexp(ROWS, axis=axis, keepdims=keepdims)
    check_close(nn.logsumexp(jnp.array(ROWS.astype(np.float32)), axis=axis, keepdims=keepdims),
                expected, np.float32)


def test_logsumexp_float64_and_infinities(x64):
    check_close(nn.logsumexp(jnp.array(ROWS), axis=1), special.logsumexp(ROWS, axis=1),
                np.float64)
    inf = np.array([[-np.inf, -np.inf], [np.inf, 1.0], [-np.inf, 2.0]])
    with np.errstate(divide="ignore"):  # log(0) for the all -inf row, as NumPy's own
        out = nn.logsumexp(jnp.array(inf), axis=1)
    np.testing.assert_array_equal(out, [-np.inf, np.inf, 2.0])
    assert nn.logsumexp(jnp.array([1, 2, 3])).dtype == np.float64


@pytest.mark.parametrize("axis", [0, 1, -1, (0, 1), None])
def test_softmax_and_log_softmax(axis):
    x = jnp.array(ROWS.astype(np.float32))
    ref_axis = axis if axis is not None else (0, 1)
    check_close(nn.softmax(x, axis=axis),
                special.softmax(ROWS, axis=ref_axis).astype(np.float32), np.float32)
    check_close(nn.log_softmax(x, axis=axis), special.log_softmax(ROWS, axis=ref_axis),
                np.float32)


def test_softmax_float64_sums_to_one(x64):
    out = nn.softmax(jnp.array(ROWS))
    assert out.dtype == np.float64
    np.testing.assert_allclose(np.sum(np.asarray(out), axis=-1), 1.0, rtol=1e-15)
    check_close(nn.log_softmax(jnp.array(ROWS)), special.log_softmax(ROWS, axis=-1), np.float64)


# --- one_hot, standardize ------------------------------------------------------------------

def _one_hot(x, n, axis=-1):
    hot = (np.asarray(x)[..., None] == np.arange(n)).astype(np.float32)
    return np.moveaxis(hot, -1, axis)


@pytest.mark.parametrize("axis", [-1, 0, 1, 2, -2, -3])
def test_one_hot(axis):
    x = np.array([[0, 2, 5], [-1, 1, 1]], np.int32)  # 5 and -1 are out of range: all zeros
    out = nn.one_hot(jnp.array(x), 3, axis=axis)
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out, _one_hot(x, 3, axis))


def test_one_hot_dtypes(x64):
    assert nn.one_hot(jnp.array([1, 0]), 2).dtype == np.float64  # the default float
    out = nn.one_hot(jnp.array([1, 0]), 2, dtype=jnp.int8)
    assert out.dtype == np.int8
    np.testing.assert_array_equal(out, [[0, 1], [1, 0]])
    assert nn.one_hot(jnp.array(2), 4, dtype=bool).tolist() == [False, False, True, False]


def test_standardize():
    x = np.array([[1e4, 1e4 + 1, 1e4 + 2], [0.0, 3.0, -3.0]], np.float32)
    mean = x.astype(np.float64).mean(-1, keepdims=True)
    var = x.astype(np.float64).var(-1, keepdims=True)
    check_close(nn.standardize(jnp.array(x)), (x - mean) / np.sqrt(var + 1e-5), np.float32)
    got = nn.standardize(jnp.array(x), axis=0, mean=0.0, variance=4.0, epsilon=0.0)
    check_close(got, x / 2.0, np.float32)


# --- compiled ------------------------------------------------------------------------------

def activations(x):
    return (nn.relu(x), nn.relu6(x), nn.sigmoid(x), nn.log_sigmoid(x), nn.softplus(x),
            nn.silu(x), nn.swish(x), nn.gelu(x), nn.elu(x, 0.5), nn.selu(x),
            nn.leaky_relu(x, negative_slope=0.2), nn.logsumexp(x), nn.logsumexp(x, 1, True),
            nn.softmax(x), nn.log_softmax(x, axis=0), nn.standardize(x))


def encode(labels):
    return nn.one_hot(labels, 4), nn.one_hot(labels, 3, dtype=jnp.int32, axis=0)


def test_compiled_matches_eager():
    x = ROWS.astype(np.float32)
    eager, compiled = activations(jnp.array(x)), astjax.jit(activations)(x)
    for e, c in zip(eager, compiled):
        assert c.dtype == e.dtype and c.shape == e.shape
        np.testing.assert_allclose(np.asarray(c), np.asarray(e), rtol=1e-6)
    labels = np.array([[0, 3], [2, 1]], np.int32)
    for e, c in zip(encode(jnp.array(labels)), astjax.jit(encode)(labels)):
        assert c.dtype == e.dtype
        np.testing.assert_array_equal(np.asarray(c), np.asarray(e))


def test_softplus_slopes_at_zero(x64):
    """softplus' = sigmoid, log_sigmoid' = sigmoid(-x): 1/2 at 0, curvature 1/4 (the
    formula's kinks at 0 once gave slope 0), and finite differences elsewhere."""
    x = np.array([-30.0, -1.5, 0.0, 0.7, 30.0])
    curvature = special.expit(x) * special.expit(-x)
    for fn, slope, sign in ((nn.softplus, special.expit(x), 1.0),
                            (nn.log_sigmoid, special.expit(-x), -1.0)):
        np.testing.assert_allclose(astjax.vmap(astjax.grad(fn))(x), slope, rtol=1e-12)
        np.testing.assert_allclose(astjax.vmap(astjax.grad(astjax.grad(fn)))(x),
                                   sign * curvature, rtol=1e-10)
    np.testing.assert_allclose(astjax.jit(astjax.grad(nn.softplus))(0.0), 0.5)
