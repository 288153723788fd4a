"""lax.conv_general_dilated (conv, conv_with_general_padding) and lax.reduce_window: against
a direct NumPy loop over output positions and JAX 0.10.2's values (literals from a JAX run),
eagerly and under jit (python backend), gradients w.r.t. both operands by finite
differences, vmap. The Numba backend runs them in tests/test_lax_more.py::test_numba."""
import itertools
import math

import numpy as np
import pytest

import astjax
import astjax.numpy as jnp
from astjax import lax
from astjax.test_util import check_grads

RNG = np.random.default_rng(1)


def _same(n, k, s):
    out = -(-n // s)
    total = max((out - 1) * s + k - n, 0)
    return total // 2, total - total // 2


def ref_conv(lhs, rhs, strides, padding, lhs_dil=None, rhs_dil=None, groups=1):
    """NCH.../OIH... convolution by a loop over output positions (float64)."""
    lhs, rhs = lhs.astype(np.float64), rhs.astype(np.float64)
    nsp = lhs.ndim - 2
    lhs_dil = lhs_dil or (1,) * nsp
    rhs_dil = rhs_dil or (1,) * nsp
    x = np.zeros(lhs.shape[:2] + tuple((s - 1) * d + 1 for s, d in zip(lhs.shape[2:], lhs_dil)))
    x[(Ellipsis,) + tuple(slice(None, None, d) for d in lhs_dil)] = lhs
    w = np.zeros(rhs.shape[:2] + tuple((k - 1) * d + 1 for k, d in zip(rhs.shape[2:], rhs_dil)))
    w[(Ellipsis,) + tuple(slice(None, None, d) for d in rhs_dil)] = rhs
    if padding == "VALID":
        padding = [(0, 0)] * nsp
    elif padding == "SAME":
        padding = [_same(n, k, s) for n, k, s in zip(x.shape[2:], w.shape[2:], strides)]
    for i, (lo, hi) in enumerate(padding):  # negative pads cut off
        x = np.pad(x, [(0, 0)] * (2 + i) + [(max(lo, 0), max(hi, 0))] + [(0, 0)] * (nsp - i - 1))
        n = x.shape[2 + i]
        x = x.take(range(max(-lo, 0), n - max(-hi, 0)), axis=2 + i)
    kd = w.shape[2:]
    out_sp = [(n - k) // s + 1 for n, k, s in zip(x.shape[2:], kd, strides)]
    o_total, cg = rhs.shape[0], rhs.shape[1]
    og = o_total // groups
    out = np.zeros((x.shape[0], o_total) + tuple(out_sp))
    for pos in itertools.product(*[range(m) for m in out_sp]):
        win = tuple(slice(p * s, p * s + k) for p, s, k in zip(pos, strides, kd))
        for o in range(o_total):
            g = o // og
            patch = x[(slice(None), slice(g * cg, (g + 1) * cg)) + win]
            out[(slice(None), o) + pos] = (patch * w[o]).sum(axis=tuple(range(1, nsp + 2)))
    return out


CASES = [  # (lhs shape, rhs shape, (strides, padding, lhs_dilation, rhs_dilation, groups))
    ((2, 3, 7), (4, 3, 3), ((2,), "VALID", None, None, 1)),
    ((2, 3, 7), (4, 3, 2), ((1,), "SAME", None, (2,), 1)),
    ((1, 4, 6, 5), (6, 2, 3, 2), ((2, 1), "SAME", None, (1, 2), 2)),
    ((2, 2, 5, 4), (3, 2, 2, 3), ((1, 2), ((1, 2), (-1, 1)), (2, 1), None, 1)),
    ((1, 2, 4, 4), (2, 2, 3, 3), ((1, 1), ((2, 2), (2, 2)), (2, 2), None, 1)),  # transposed
    ((1, 2, 3, 4, 3), (2, 1, 2, 2, 2), ((1, 2, 1), "SAME", None, None, 2)),  # 3-D
    ((1, 3, 9), (2, 3, 2), ((2,), ((0, -2),), None, (3,), 1)),  # cut off, nothing masked
]


def _conv_fn(p):
    return lambda lhs, rhs: lax.conv_general_dilated(lhs, rhs, p[0], p[1], p[2], p[3],
                                                     feature_group_count=p[4])


@pytest.mark.parametrize("case", range(len(CASES)))
def test_conv_against_a_loop(case):
    lshape, rshape, params = CASES[case]
    lhs = RNG.standard_normal(lshape).astype(np.float32)
    rhs = RNG.standard_normal(rshape).astype(np.float32)
    want = ref_conv(lhs, rhs, *params)
    fn = _conv_fn(params)
    for got in (fn(lhs, rhs), astjax.jit(fn)(lhs, rhs)):
        assert got.dtype == np.float32 and got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


L = (np.arange(24, dtype=np.float32).reshape(1, 2, 4, 3) - 10) / 10
R = (np.arange(16, dtype=np.float32).reshape(4, 1, 2, 2) - 7) / 10
# jax.lax.conv_general_dilated(L, R, (2, 1), 'SAME', rhs_dilation=(1, 2), feature_group_count=2)
JAX_SAME = [[[[0.78, 1.73, 0.93], [0.18, 0.41, 0.21]], [[0.18, 0.53, 0.33], [0.06, 0.17, 0.09]],
             [[0.3, 0.53, 0.21], [0.66, 1.13, 0.45]], [[0.66, 1.25, 0.57], [1.5, 2.81, 1.29]]]]
# the same in NHWC/HWIO layouts with strides (1, 2) and no dilation, as JAX gives it (NHWC)
JAX_NHWC = [[[[1.83, 0.55, 0.47, 1.11], [0.81, 0.29, 0.25, 0.69]],
             [[1.17, 0.37, 0.77, 1.89], [0.45, 0.17, 0.37, 1.05]],
             [[0.51, 0.19, 1.07, 2.67], [0.09, 0.05, 0.49, 1.41]],
             [[0.07, 0.03, 0.35, 1.27], [-0.07, -0.03, 0.13, 0.65]]]]


def nchw(lhs, rhs):
    return lax.conv_general_dilated(lhs, rhs, (2, 1), "SAME", rhs_dilation=(1, 2),
                                    feature_group_count=2)


def nhwc(lhs, rhs):
    return lax.conv_general_dilated(lhs, rhs, (1, 2), "SAME", feature_group_count=2,
                                    dimension_numbers=("NHWC", "HWIO", "NHWC"))


def test_conv_jax_values_and_layouts():
    for got in (nchw(L, R), astjax.jit(nchw)(L, R)):
        np.testing.assert_allclose(got, JAX_SAME, rtol=1e-5, atol=1e-6)
    lt, rt = L.transpose(0, 2, 3, 1), R.transpose(2, 3, 1, 0)
    for got in (nhwc(lt, rt), astjax.jit(nhwc)(lt, rt)):
        np.testing.assert_allclose(got, JAX_NHWC, rtol=1e-5, atol=1e-6)
    # conv and conv_with_general_padding are conv_general_dilated in NC.../OI...
    rhs = RNG.standard_normal((3, 2, 2, 2)).astype(np.float32)
    np.testing.assert_allclose(lax.conv(L, rhs, (1, 1), "SAME"),
                               ref_conv(L, rhs, (1, 1), "SAME"), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(
        lax.conv_with_general_padding(L, rhs, (2, 1), ((0, 0), (1, 1)), (1, 2), (2, 1)),
        ref_conv(L, rhs, (2, 1), ((0, 0), (1, 1)), (1, 2), (2, 1)), rtol=1e-5, atol=1e-6)
    # a 1-D layout whose output puts channels last
    got = lax.conv_general_dilated(L[..., 0], rhs[..., 0], (1,), "VALID",
                                   dimension_numbers=("NCH", "OIH", "NHC"))
    np.testing.assert_allclose(got, ref_conv(L[..., 0], rhs[..., 0], (1,), "VALID")
                               .transpose(0, 2, 1), rtol=1e-5, atol=1e-6)


def test_conv_grads_and_vmap():
    lhs = RNG.standard_normal((1, 2, 5, 4)).astype(np.float32)
    rhs = RNG.standard_normal((2, 1, 2, 3)).astype(np.float32)

    def loss(lhs, rhs):
        y = lax.conv_general_dilated(lhs, rhs, (2, 1), ((1, 0), (1, 1)), lhs_dilation=(1, 2),
                                     rhs_dilation=(2, 1), feature_group_count=2)
        return jnp.sum(jnp.tanh(y))
    check_grads(loss, (lhs, rhs), order=1, atol=1e-2, rtol=1e-2)
    check_grads(lambda l, r: nhwc(l, r), (L.transpose(0, 2, 3, 1), R.transpose(2, 3, 1, 0)),
                order=1, modes=("rev",), atol=1e-2, rtol=1e-2)
    g = astjax.jit(astjax.grad(loss, argnums=(0, 1)))(lhs, rhs)
    g_eager = astjax.grad(loss, argnums=(0, 1))(lhs, rhs)
    for a, b in zip(g, g_eager):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    # vmap over a batch of kernels
    kernels = RNG.standard_normal((3, 2, 2, 2, 2)).astype(np.float32)
    got = astjax.vmap(lambda k: lax.conv(L, k, (1, 1), "VALID"))(kernels)
    for i in range(3):
        np.testing.assert_allclose(got[i], ref_conv(L, kernels[i], (1, 1), "VALID"),
                                   rtol=1e-5, atol=1e-6)


def test_conv_errors():
    with pytest.raises(NotImplementedError, match="batch_group_count"):
        lax.conv_general_dilated(L, R, (1, 1), "SAME", batch_group_count=2)
    with pytest.raises(ValueError, match="String padding"):
        lax.conv_general_dilated(L, R, (1, 1), "SAME", lhs_dilation=(2, 2))
    with pytest.raises(RuntimeError, match="Unrecognized padding"):
        lax.conv(L, R, (1, 1), "FULL")
    with pytest.raises(ValueError, match="window_strides"):
        astjax.jit(lambda l, r: lax.conv(l, r, (1,), "SAME"))(L, R)


# --- reduce_window ---------------------------------------------------------------------------

P = np.float32(np.arange(40).reshape(2, 5, 4) * 7 % 11)
# jax.lax.reduce_window(P, -inf, lax.max, (1, 3, 3), (1, 2, 2), 'SAME')
JAX_MAX_SAME = [[[9, 10], [10, 10], [10, 10]], [[10, 7], [10, 8], [10, 9]]]
# jax.lax.reduce_window(P, 0., lax.add, (1, 2, 2), (1, 2, 1), 'SAME')
JAX_SUM_SAME = [[[15, 21, 27, 15], [19, 25, 20, 6], [11, 14, 6, 1]],
                [[25, 20, 15, 9], [18, 13, 19, 11], [16, 8, 11, 9]]]


def max_pool(x):
    return lax.reduce_window(x, -jnp.inf, lax.max, (1, 3, 3), (1, 2, 2), "SAME")


def avg_pool(x):  # as stax's AvgPool and flax's avg_pool: a window sum over its size
    return lax.reduce_window(x, 0.0, lax.add, (1, 2, 2), (1, 2, 1), "SAME") / 4.0


def test_reduce_window_pooling():
    for got in (max_pool(P), astjax.jit(max_pool)(P)):
        np.testing.assert_array_equal(got, JAX_MAX_SAME)
    for got in (avg_pool(P), astjax.jit(avg_pool)(P)):
        np.testing.assert_allclose(got, np.float32(JAX_SUM_SAME) / 4)
    x = RNG.standard_normal((2, 6, 4)).astype(np.float32)
    want = x.reshape(2, 3, 2, 2, 2).max(axis=(2, 4))  # 2x2 windows, stride 2
    got = lax.reduce_window(x, -np.inf, jnp.maximum, (1, 2, 2), (1, 2, 2), "VALID")
    np.testing.assert_array_equal(got, want)
    got = lax.reduce_window(x, np.inf, np.minimum, (1, 2, 2), (1, 2, 2))
    np.testing.assert_array_equal(got, x.reshape(2, 3, 2, 2, 2).min(axis=(2, 4)))


def test_reduce_window_dilation_and_init():
    v = np.arange(1, 6, dtype=np.float32)
    # JAX 0.10.2: init_value enters each window once; padding and holes take no part
    cases = [
        (lambda v: lax.reduce_window(v, 1.0, lax.add, (2,), (1,), ((1, 1),)),
         [2, 4, 6, 8, 10, 6]),
        (lambda v: lax.reduce_window(v, 2.0, lax.mul, (2,), (1,), ((1, 1),), base_dilation=(2,)),
         [2, 2, 4, 4, 6, 6, 8, 8, 10, 10]),
        (lambda v: lax.reduce_window(v, -jnp.inf, lax.max, (3,), (2,), "SAME",
                                     window_dilation=(2,)), [3, 5, 5]),
        (lambda v: lax.reduce_window(v, 1.0, lax.add, (2,), (2,), "SAME", base_dilation=(2,)),
         [2, 3, 4, 5, 6]),
    ]
    for fn, want in cases:
        for got in (fn(v), astjax.jit(fn)(v)):
            np.testing.assert_array_equal(got, want)
    i = np.arange(12, dtype=np.int32).reshape(3, 4)
    got = lax.reduce_window(i, -2 ** 31, lax.max, (2, 2), (1, 1), ((1, 0), (0, 1)))
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, [[1, 2, 3, 3], [5, 6, 7, 7], [9, 10, 11, 11]])
    assert lax.padtype_to_pads((7, 6), (3, 4), (2, 1), "SAME") == [(1, 1), (1, 2)]
    assert lax.padtype_to_pads((7, 6), (3, 4), (2, 1), "SAME_LOWER") == [(1, 1), (2, 1)]


def test_reduce_window_grads_and_vmap():
    x = RNG.permutation(30).astype(np.float32).reshape(5, 6) / 7  # no ties
    check_grads(lambda x: lax.reduce_window(x, -jnp.inf, lax.max, (2, 3), (1, 2), "SAME"),
                (x,), order=1)
    check_grads(lambda x: lax.reduce_window(x, 0.0, lax.add, (2, 2), (2, 1), ((1, 0), (0, 1)),
                                            window_dilation=(1, 2)), (x,), order=1)
    got = astjax.vmap(lambda r: lax.reduce_window(r, -jnp.inf, lax.max, (2,), (2,)))(x)
    np.testing.assert_array_equal(got, x.reshape(5, 3, 2).max(-1))
    with pytest.raises(NotImplementedError, match="computation"):
        lax.reduce_window(x, 0.0, jnp.subtract, (2, 2), (1, 1))
    with pytest.raises(ValueError, match="window_dimensions"):
        lax.reduce_window(x, 0.0, lax.add, (2,), (1,))


def test_small_cnn_layer_matches_numpy_and_jit():
    """A conv (NHWC, SAME, 3x3) + ReLU + 2x2 max pool layer, as the benchmark times it."""
    x = RNG.standard_normal((2, 8, 8, 3)).astype(np.float32)
    k = RNG.standard_normal((3, 3, 3, 4)).astype(np.float32)

    def layer(x, k):
        y = lax.conv_general_dilated(x, k, (1, 1), "SAME",
                                     dimension_numbers=("NHWC", "HWIO", "NHWC"))
        return lax.reduce_window(jnp.maximum(y, 0.0), -jnp.inf, lax.max, (1, 2, 2, 1),
                                 (1, 2, 2, 1), "VALID")
    want = ref_conv(x.transpose(0, 3, 1, 2), k.transpose(3, 2, 0, 1), (1, 1), "SAME")
    want = np.maximum(want.transpose(0, 2, 3, 1), 0).reshape(2, 4, 2, 4, 2, 4).max(axis=(2, 4))
    np.testing.assert_allclose(astjax.jit(layer)(x, k), want, rtol=1e-5, atol=1e-5)
    assert math.isfinite(float(astjax.grad(lambda x, k: layer(x, k).sum())(x, k).sum()))
