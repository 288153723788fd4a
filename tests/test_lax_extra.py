"""astjax.lax functions added after test_lax_more: the bit functions (shift_right_logical,
population_count, clz), select_n, split/stack/unstack/tile/collapse/complex/
broadcast_to_rank/index_take/reduce_xor, zeta and the scaled Bessel functions. Each against
JAX 0.10.2's values (literals from a JAX run) or NumPy, eagerly and under jit (python
backend), with gradients where JAX has them and vmap; one small Numba program."""
import numpy as np
import pytest

import astjax
import astjax.numpy as jnp
from astjax import lax
from astjax.test_util import check_grads

from .op_checks import both

RNG = np.random.default_rng(0)


def assert_both(fn, args, want, rtol=1e-6, atol=0.0, dtype=None):
    """``want``: one array, or a tuple/list of the result's leaves."""
    want_leaves = list(want) if isinstance(want, (tuple, list)) else [want]
    for got in both(fn, *args):
        got_leaves = astjax.tree_util.tree_leaves(got)
        assert len(got_leaves) == len(want_leaves)
        for g, w in zip(got_leaves, want_leaves):
            w = np.asarray(w)
            assert g.shape == w.shape, (g.shape, w.shape)
            assert g.dtype == (w.dtype if dtype is None else dtype), (g.dtype, w.dtype)
            np.testing.assert_allclose(g, w, rtol=rtol, atol=atol)


# --- bits ------------------------------------------------------------------------------------

def bits32(x, s):
    return lax.shift_right_logical(x, s), lax.population_count(x), lax.clz(x)


def bits_small(x, s):
    return lax.shift_right_logical(x, s), lax.population_count(x), lax.clz(x)


def test_bit_functions():
    x = np.int32([-8, 7, -1, 1 << 30, 0])
    s = np.int32([1, 2, 31, 32, -1])
    # JAX: shift_right_logical, population_count, clz
    assert_both(bits32, (x, s), (np.int32([2147483644, 1, 1, 0, 0]), np.int32([29, 3, 32, 1, 0]),
                                 np.int32([0, 29, 0, 1, 32])))
    assert_both(bits_small, (np.int8([-128, 127]), np.int8([7, 1])),
                (np.int8([1, 63]), np.int8([1, 7]), np.int8([0, 1])))
    assert_both(bits_small, (np.uint8([200, 1, 0]), np.uint8([3, 8, 0])),
                (np.uint8([25, 0, 0]), np.uint8([3, 1, 0]), np.uint8([0, 7, 8])))
    got = astjax.vmap(bits32)(x.reshape(5, 1), s.reshape(5, 1))
    np.testing.assert_array_equal(np.asarray(got[2])[:, 0], [0, 29, 0, 1, 32])
    with pytest.raises(TypeError, match="population_count does not accept dtype float32"):
        lax.population_count(np.float32([1.0]))


def test_bit_functions_64(x64):
    x = np.int64([-1, 1, 0, (1 << 40) + 7])
    # JAX (x64): clz [0 63 64 23], population_count [64 1 0 4]
    np.testing.assert_array_equal(lax.clz(x), [0, 63, 64, 23])
    np.testing.assert_array_equal(astjax.jit(bits32)(x, x)[1], [64, 1, 0, 4])
    got = lax.shift_right_logical(np.int64([-1, -1 << 40]), np.int64([60, 3]))
    np.testing.assert_array_equal(got, [15, 2305842871774740480])
    assert got.dtype == np.int64


# --- select_n --------------------------------------------------------------------------------

def select3(which, a, b, c):
    return lax.select_n(which, a, b, c)


def select2(which, a, b):
    return lax.select_n(which, a, b)


def test_select_n():
    a, b, c = np.float32([1, 2, 3]), np.float32([3, 4, 5]), np.float32([7, 8, 9])
    assert_both(select3, (np.int32([0, 2, 1]), a, b, c), np.float32([1, 8, 5]))  # JAX
    assert_both(select2, (np.bool_([True, False, True]), a, b), np.float32([3, 2, 5]))
    assert_both(select2, (True, a, b), b)
    assert_both(lambda w, a: lax.select_n(w, a), (np.int32([0, 0, 0]), a), a)
    grad = astjax.grad(lambda b: select3(np.int32([0, 2, 1]), a, b * b, c).sum())(b)
    np.testing.assert_allclose(grad, [0, 0, 10])
    batched = astjax.vmap(select3, in_axes=(0, None, 0, None))(np.int32([[0, 1, 2], [1, 1, 0]]),
                                                               a, np.stack([b, b]), c)
    np.testing.assert_allclose(batched, [[1, 4, 9], [3, 4, 3]])
    for args, message in [((np.int32([0, 1]), np.ones(2, np.float32), np.ones(2, np.int32)),
                           "same dtypes, got float32, int32"),
                          ((np.bool_([True]), a, a, a), "cannot have > 2 cases"),
                          ((np.float32([0.0]), a, a), "must be boolean or integer type"),
                          ((np.int32([0]),), "at least one case")]:
        with pytest.raises((TypeError, ValueError), match=message):
            lax.select_n(*args)


# --- split, stack, unstack, tile, collapse, complex, broadcast_to_rank -----------------------

def split_stack(x):
    a, b = lax.split(x, (2, 4))
    return lax.stack([a, b[:2]], 1), lax.unstack(x.reshape(3, 2), 1)[1]


def tile_collapse(x):
    return lax.tile(x, (2, 1)), lax.collapse(x[None, :, :, None], 1, 3), \
        lax.broadcast_to_rank(x, 4)


def test_split_stack_tile_collapse():
    x = np.arange(6, dtype=np.float32)
    # JAX: split(arange(6.), (2, 4)) -> [0, 1], [2, 3, 4, 5]
    assert_both(split_stack, (x,), (np.float32([[0, 2], [1, 3]]), np.float32([1, 3, 5])))
    m = x.reshape(2, 3)
    assert_both(tile_collapse, (m,), (np.tile(m, (2, 1)), m.reshape(1, 6, 1),
                                      m.reshape(1, 1, 2, 3)))
    assert lax.collapse(np.ones((2, 3, 4, 5), np.float32), 1).shape == (2, 60)
    assert lax.collapse(np.ones((2, 3, 4, 5), np.float32), -2).shape == (2, 3, 20)
    assert lax.broadcast_to_rank(m, 1).shape == (2, 3)
    check_grads(lambda x: jnp.sum(split_stack(x)[0] ** 2) + jnp.sum(tile_collapse(
        x.reshape(2, 3))[0] ** 3), (x,), order=1, modes=("rev",))
    got = astjax.vmap(lambda r: lax.split(r, (1, 2))[1])(m)
    np.testing.assert_allclose(got, m[:, 1:])
    with pytest.raises(ValueError, match="Sum of sizes 4 must be equal to dimension 0"):
        lax.split(np.ones(5, np.float32), (2, 2))
    with pytest.raises(TypeError, match="reps length must be equal to the ndim of x"):
        lax.tile(x, (2, 2))


def make_complex(x, y):
    return lax.complex(x, y)


def test_complex():
    x, y = np.float32([1, -2]), np.float32([0.5, 3])
    assert_both(make_complex, (x, y), x + 1j * y, dtype=np.complex64)
    assert_both(make_complex, (1.0, y), 1 + 1j * y, dtype=np.complex64)
    with pytest.raises(TypeError, match="complex does not accept dtype int32 at position 1"):
        lax.complex(x, np.int32([1, 2]))


# --- index_take, reduce_xor ------------------------------------------------------------------

def take02(s, i, j):
    return lax.index_take(s, (i, j), (0, 2))


def test_index_take():
    s = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    i, j = np.int32([1, 0]), np.int32([3, 2])
    assert_both(take02, (s, i, j), np.float32([[15, 19, 23], [2, 6, 10]]))  # JAX
    # adjacent axes: the indexed dimension still comes first (NumPy would keep it in place)
    got = lax.index_take(s, (np.int32([2, 0]), np.int32([1, 1])), (1, 2))
    np.testing.assert_allclose(got, s[:, [2, 0], [1, 1]].T)
    grad = astjax.grad(lambda s: take02(s, i, j).sum())(s)
    want = np.zeros_like(s)
    want[1, :, 3] = want[0, :, 2] = 1
    np.testing.assert_allclose(grad, want)


def xor_rows(x):
    return lax.reduce_xor(x, (1,))


def test_reduce_xor():
    assert_both(xor_rows, (np.int32([[1, 2, 4], [3, 3, 5], [-1, 5, -7]]),),
                np.int32([7, 5, 3]))  # 1^2^4, 3^3^5, -1^5^-7
    assert_both(lambda x: lax.reduce_xor(x, (0,)), (np.bool_([[True, False], [True, True]]),),
                np.bool_([False, True]))  # JAX
    # JAX: [203  72]
    np.testing.assert_array_equal(lax.reduce_xor(np.uint8([[200, 5], [3, 77]]), (0,)),
                                  np.uint8([203, 72]))
    assert lax.reduce_xor(np.int32([[-1, 5], [3, -7]]), (0, 1)) == 0  # JAX


# --- special functions -----------------------------------------------------------------------

@pytest.mark.filterwarnings("ignore:divide by zero:RuntimeWarning")
@pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning")
def test_zeta_and_scaled_bessel():
    x, q = np.float32([1.5, 2.0, 4.0]), np.float32([0.25, 3.0, 10.0])
    # JAX: zeta(x, q)
    assert_both(lax.zeta, (x, q), np.float32([1.0213057e+01, 3.9493403e-01, 3.8665021e-04]),
                rtol=2e-6)
    # domain: x < 1 NaN, x == 1 inf, q <= 0 with x not an integer NaN, the poles (JAX)
    got = lax.zeta(np.float32([0.5, 1.0, 1.5, 2.0, 3.0, 2.0]),
                   np.float32([1.0, 1.0, -0.5, -1.5, -2.0, 0.0]))
    np.testing.assert_allclose(got, [np.nan, np.inf, np.nan, 9.379247, np.nan, np.inf],
                               rtol=1e-6)
    # d/dq zeta(x, q) = -x zeta(x + 1, q)
    g = astjax.grad(lax.zeta, 1)(2.0, 3.0)
    np.testing.assert_allclose(g, -2 * (1.2020569031595942 - 1 - 1 / 8), rtol=1e-5)
    v = np.float32([0.5, -2.0, 30.0])
    # JAX: bessel_i0e, bessel_i1e
    assert_both(lax.bessel_i0e, (v,), np.float32([0.6450353, 0.3085083, 0.07314594]))
    assert_both(lax.bessel_i1e, (v,), np.float32([0.1564208, -0.21526928, 0.07191633]))


@pytest.mark.filterwarnings("ignore:divide by zero:RuntimeWarning")
@pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning")
def test_incomplete_gamma_and_beta():
    a = np.float32([0.5, 1.0, 3.0, 10.0, 0.0, 2.0, -1.0])
    x = np.float32([0.3, 2.0, 1.0, 12.0, 1.0, 0.0, 1.0])
    # JAX: igamma, igammac (the last NaN: a < 0)
    assert_both(lax.igamma, (a, x), np.float32([0.5614221, 0.8646648, 0.08030137, 0.7576085,
                                                1.0, 0.0, np.nan]), rtol=2e-6)
    assert_both(lax.igammac, (a, x), np.float32([0.4385779, 0.13533522, 0.91969866, 0.24239154,
                                                 0.0, 1.0, np.nan]), rtol=5e-6)
    abx = (np.float32([0.5, 2.0, 3.0, 10.0]), np.float32([0.5, 3.0, 1.0, 12.0]),
           np.float32([0.3, 0.2, 0.9, 0.5]))
    # JAX: betainc
    assert_both(lax.betainc, abx, np.float32([0.3690103, 0.18080005, 0.7290001, 0.66818994]),
                rtol=5e-6)
    # JAX: grad in x and in a of igamma(2, 1.5); of betainc(2, 3, x) in x at 0.4
    np.testing.assert_allclose(astjax.grad(lax.igamma, 1)(2.0, 1.5), 0.33469525, rtol=1e-6)
    np.testing.assert_allclose(astjax.grad(lax.igamma, 0)(2.0, 1.5), -0.3134886, rtol=1e-6)
    np.testing.assert_allclose(astjax.jit(astjax.grad(lax.igammac, 0))(2.0, 1.5), 0.3134886,
                               rtol=1e-6)
    np.testing.assert_allclose(astjax.grad(lax.betainc, 2)(2.0, 3.0, 0.4), 1.7280011, rtol=1e-6)
    got = astjax.vmap(lax.igamma)(a[:4], x[:4])
    np.testing.assert_allclose(got, lax.igamma(a[:4], x[:4]), rtol=1e-6)


def test_incomplete_gamma_and_beta_64(x64):
    special = pytest.importorskip("scipy.special")
    rng = np.random.default_rng(1)
    a, b = rng.uniform(0.1, 20, 40), rng.uniform(0.1, 20, 40)
    x, t = rng.uniform(0, 30, 40), rng.uniform(0, 1, 40)
    np.testing.assert_allclose(lax.igamma(a, x), special.gammainc(a, x), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(lax.igammac(a, x), special.gammaincc(a, x), rtol=1e-12,
                               atol=1e-14)
    np.testing.assert_allclose(lax.betainc(a, b, t), special.betainc(a, b, t), rtol=1e-11,
                               atol=1e-13)
    h = 1e-6  # igamma_grad_a, and betainc's derivatives in a and b (through its loop), against
    # central differences of SciPy's functions (JAX raises for betainc's)
    fd = (special.gammainc(a + h, x) - special.gammainc(a - h, x)) / (2 * h)
    np.testing.assert_allclose(lax.igamma_grad_a(a, x), fd, atol=1e-8)
    ga, gb = astjax.grad(lambda a, b: lax.betainc(a, b, t).sum(), (0, 1))(a, b)
    np.testing.assert_allclose(ga, (special.betainc(a + h, b, t) -
                                    special.betainc(a - h, b, t)) / (2 * h), atol=1e-8)
    np.testing.assert_allclose(gb, (special.betainc(a, b + h, t) -
                                    special.betainc(a, b - h, t)) / (2 * h), atol=1e-8)


def _incomplete_gammas(a, x):
    return lax.igamma(a, x), lax.igammac(a, x)


# JAX 0.10.2's igamma and igammac (64-bit types on) at the edges of their domain, where
# some differ from SciPy's (a == 0 < x < 1, an infinite a)
_EDGE_A = [0, 0, 0, 0, 1, 1, 1, 2, -1, 1, np.nan, 1, np.inf, np.inf, 3, 1e-300, 5, 50, 200]
_EDGE_X = [0, 0.5, 1, 2, 0, np.inf, -1, 1e-320, 1, np.nan, 1, 1e3, 1, np.inf, np.inf, 1, 800,
           50, 190]
_JAX_P = [np.nan, np.nan, 1, 1, 0, 1, np.nan, 0, np.nan, np.nan, np.nan, 1, np.nan, 1, 1, 1, 1,
          0.51880832, 0.24334743]
_JAX_Q = [np.nan, 0, 0, 0, 1, 0, np.nan, 1, np.nan, np.nan, np.nan, 0, np.nan, 0, 0,
          2.19383934e-301, 0, 0.481191685, 0.756652573]


@pytest.mark.filterwarnings("ignore:divide by zero:RuntimeWarning")
@pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning")
def test_incomplete_gamma_and_beta_kernels_on_numba(x64, numba_backend):
    """igamma, igammac and betainc are ops: SciPy's eagerly, per-element kernels under Numba
    (the generated code calls them, no loop over arrays), JAX's values at the edges on both."""
    a, x = np.array(_EDGE_A), np.array(_EDGE_X)
    jitted = astjax.jit(_incomplete_gammas)
    got = jitted(a, x)
    (compiled,) = jitted.cache.values()
    assert compiled.backend == "numba", compiled.fallback_reason
    assert "_rt.igamma(" in compiled.source and "while" not in compiled.source
    eager = _incomplete_gammas(a, x)
    for g, e, want in zip(got, eager, (_JAX_P, _JAX_Q)):
        np.testing.assert_allclose(g, want, rtol=5e-8, atol=0)  # (8 digits recorded)
        np.testing.assert_allclose(e, want, rtol=5e-8, atol=0)
    rng = np.random.default_rng(2)
    a, x = rng.uniform(0.01, 40, 200), rng.uniform(0, 60, 200)
    for g, e in zip(jitted(a, x), _incomplete_gammas(a, x)):
        np.testing.assert_allclose(g, e, rtol=1e-12, atol=1e-300)
    # betainc likewise, with JAX's values outside a, b > 0 and 0 < x < 1
    inf, nan = np.inf, np.nan
    a = np.array([0, 0, 0, 1, 1, inf, inf, 2, -1, 1, nan, 0.5, 2, 1e-310, 3, 0, inf])
    b = np.array([1, 1, 0, 0, 0, 1, 1, 3, 1, 1, 1, 0.5, 3, 2, inf, inf, 0])
    t = np.array([0, 0.5, 0.5, 0.5, 1, 0.5, 1, 0.4, 0.5, 1.5, 0.5, 0.3, 1, 0.5, 0.5, 0.5, 0.5])
    want = [0, 1, nan, 0, 1, 0, 1, 0.5248, nan, nan, nan, 0.36901012, 1, 1, 1, 1, 0]
    beta = astjax.jit(lax.betainc)
    for got in (beta(a, b, t), lax.betainc(a, b, t)):
        np.testing.assert_allclose(got, want, rtol=5e-8, atol=0)
    assert "_rt.betainc(" in next(iter(beta.cache.values())).source
    a, b, t = rng.uniform(0.01, 40, 200), rng.uniform(0.01, 40, 200), rng.uniform(0, 1, 200)
    np.testing.assert_allclose(beta(a, b, t), lax.betainc(a, b, t), rtol=1e-12, atol=1e-300)


def test_random_gamma_grad():
    # JAX: [1.0098022 0.936639 1.3498812]
    got = lax.random_gamma_grad(np.float32([0.5, 2.0, 3.0]), np.float32([0.3, 1.5, 5.0]))
    np.testing.assert_allclose(got, [1.0098022, 0.936639, 1.3498812], rtol=1e-6)


# --- shape helpers and smaller functions -----------------------------------------------------

def test_conv_shape_helpers():
    # JAX 0.10.2's results for the same calls
    assert lax.conv_dimension_numbers((1, 5, 5, 3), (3, 3, 3, 8), ("NHWC", "HWIO", "NHWC")) == \
        lax.ConvDimensionNumbers((0, 3, 1, 2), (3, 2, 0, 1), (0, 3, 1, 2))
    assert lax.conv_dimension_numbers((1, 5, 5, 3), (3, 3, 3, 8), None) == \
        lax.ConvDimensionNumbers((0, 1, 2, 3), (0, 1, 2, 3), (0, 1, 2, 3))
    assert lax.conv_general_permutations(("NCHW", "OIHW", "NHWC")) == \
        ((0, 1, 2, 3), (0, 1, 2, 3), (0, 3, 1, 2))
    assert lax.conv_shape_tuple((2, 3, 7, 9), (8, 3, 3, 2), (2, 1), "SAME") == (2, 8, 4, 9)
    assert lax.conv_shape_tuple((2, 3, 7, 9), (8, 3, 3, 2), (2, 3), ((1, 0), (2, 2)),
                                batch_group_count=2) == (1, 8, 3, 4)
    nhwc = ("NHWC", "HWIO", "NHWC")
    assert lax.conv_general_shape_tuple((2, 7, 9, 3), (3, 2, 3, 8), (2, 1), "VALID",
                                        nhwc) == (2, 3, 8, 8)
    for padding, want in [("SAME", (2, 14, 27, 8)), ("VALID", (2, 15, 27, 8)),
                          (((1, 2), (0, 0)), (2, 14, 24, 8))]:
        assert lax.conv_transpose_shape_tuple((2, 7, 9, 3), (3, 2, 3, 8), (2, 3), padding,
                                              nhwc) == want
    assert lax.reduce_window_shape_tuple((4, 7), (2, 3), (1, 2), ((0, 0), (1, 1)), (1, 2),
                                         (1, 2)) == (3, 6)
    # the conv_transpose of a SAME case has the shape the helper gives
    assert lax.conv_transpose(X1, K1, (2,), "SAME").shape == \
        lax.conv_transpose_shape_tuple(X1.shape, K1.shape, (2,), "SAME", ("NHC", "HIO", "NHC"))
    with pytest.raises(TypeError, match="must contain the characters 'N' and 'C' exactly once"):
        lax.conv_general_permutations(("NHW", "OIH", "NCH"))
    # inside compiled code, where the shapes hold run-time sizes (only their lengths count)
    x, k = np.ones((1, 5, 5, 2), np.float32), np.ones((3, 3, 2, 4), np.float32)
    assert astjax.jit(conv_with_numbers)(x, k).shape == (1, 5, 5, 4)


def conv_with_numbers(x, k):
    dn = lax.conv_dimension_numbers(x.shape, k.shape, ("NHWC", "HWIO", "NHWC"))
    return lax.conv_general_dilated(x, k, (1, 1), "SAME", dimension_numbers=dn)


def min_k(x):
    return lax.approx_min_k(x, 2), lax.approx_max_k(x, 2, reduction_dimension=0)


def test_smaller_functions():
    x = np.float32([[3, 1, 4, 1.5], [9, 2, 6, 5]])
    # JAX: approx_max_k(x, 2) -> [[4, 3], [9, 6]], [[2, 0], [0, 2]]
    values, idx = lax.approx_max_k(x, 2)
    np.testing.assert_array_equal(values, [[4, 3], [9, 6]])
    np.testing.assert_array_equal(idx, [[2, 0], [0, 2]])
    for (lo, lo_idx), (hi, hi_idx) in both(min_k, x):
        np.testing.assert_array_equal(lo, [[1, 1.5], [2, 5]])
        np.testing.assert_array_equal(lo_idx, [[1, 3], [1, 3]])
        np.testing.assert_array_equal(hi, [[9, 2, 6, 5], [3, 1, 4, 1.5]])
        np.testing.assert_array_equal(hi_idx, [[1, 1, 1, 1], [0, 0, 0, 0]])
    got = lax.approx_min_k(np.int32([5, -3, 7, -2 ** 31]), 2)
    np.testing.assert_array_equal(got[0], [-2 ** 31, -3])
    assert lax.Precision("highest") is lax.Precision.HIGHEST
    assert lax.dot(x, x.T, precision=lax.Precision.HIGH).shape == (2, 2)
    assert lax.optimization_barrier((x, 1.0))[1] == 1.0
    assert lax.empty((2, 3), jnp.float32).shape == (2, 3)
    assert lax.dtype(1.0) == np.float32 and lax.dtype(np.int64(1)) == np.int32
    assert lax.broadcast_shapes((2, 1), (3,)) == (2, 3)
    # JAX: [[1, 2, 3], [1, 2, 3]]; [2, 2]
    assert_both(lambda a, b: lax.broadcast_like(a, b),
                (np.float32([1, 2, 3]), np.ones((2, 3), np.int32)),
                np.float32([[1, 2, 3], [1, 2, 3]]))
    np.testing.assert_array_equal(lax.broadcast_like(np.float32(2), np.ones(2)), [2, 2])


def mulhi_and_precision(a, b, x):
    return lax.mulhi(a, b), lax.reduce_precision(x, 5, 10), lax.reduce_precision(x, 8, 7)


def test_mulhi_and_reduce_precision():
    a = np.int32([7, -7, 1 << 30, -2 ** 31, 123456789])
    b = np.int32([3, 5, 1 << 30, -2 ** 31, -987654321])
    x = np.float32([1.0009766, 3.14159265, 65504.0, 65520.0, 1e-5, -0.1, np.inf, np.nan, 1e38,
                    3.0e-39])
    inf, nan = np.inf, np.nan
    # JAX: mulhi; reduce_precision to float16's and bfloat16's widths
    for hi, half, bf16 in both(mulhi_and_precision, a, b, x):
        np.testing.assert_array_equal(hi, [0, -1, 268435456, 1073741824, -28389653])
        np.testing.assert_array_equal(half, np.float32([1.0009765625, 3.140625, 65504.0, inf, 0.0,
                                                        -0.0999755859375, inf, nan, inf, 0.0]))
        np.testing.assert_array_equal(bf16, np.float32([1.0, 3.140625, 65536.0, 65536.0,
                                                        1.0013580322265625e-05, -0.10009765625,
                                                        inf, nan, 9.969209968386869e+37,
                                                        3.03057137321371e-39]))
    # JAX: [4294967294 0], [64 39]
    np.testing.assert_array_equal(
        lax.mulhi(np.uint32([2 ** 32 - 1, 5]), np.uint32([2 ** 32 - 1, 7])),
        np.uint32([4294967294, 0]))
    np.testing.assert_array_equal(lax.mulhi(np.int8([-128, 100]), np.int8([-128, 100])), [64, 39])
    rng = np.random.default_rng(2)
    for dt in (np.int16, np.uint16, np.int32, np.uint32):  # against Python's integers
        info = np.iinfo(dt)
        p, q = (rng.integers(info.min, info.max, 300, endpoint=True).astype(dt) for _ in "pq")
        want = [(int(u) * int(v)) >> info.bits for u, v in zip(p, q)]
        np.testing.assert_array_equal(lax.mulhi(p, q), np.array(want).astype(dt))


def test_mulhi_64(x64):
    p = np.int64([-(2 ** 63), 2 ** 62 + 12345, -987654321987654321])
    q = np.int64([-(2 ** 63), 3, 123456789123456789])
    want = [(int(u) * int(v)) >> 64 for u, v in zip(p, q)]
    np.testing.assert_array_equal(lax.mulhi(p, q), want)


def patches_same(x):
    return lax.conv_general_dilated_patches(x, (3, 2), (2, 1), "SAME")


def test_conv_general_dilated_patches():
    x = np.arange(2 * 3 * 5 * 4, dtype=np.float32).reshape(2, 3, 5, 4)
    # the patches, contracted with a kernel, are the convolution
    k = RNG.standard_normal((4, 3, 3, 2)).astype(np.float32)
    for p in both(patches_same, x):
        assert p.shape == (2, 18, 3, 4)  # JAX's
        np.testing.assert_allclose(np.einsum("ncab,oc->noab", p, k.reshape(4, -1)),
                                   lax.conv(x, k, (2, 1), "SAME"), rtol=1e-5, atol=1e-3)
    # JAX: channels last, explicit pads and rhs dilation; the patch at output (0, 0, 0)
    got = lax.conv_general_dilated_patches(x.transpose(0, 2, 3, 1), (2, 2), (1, 2),
                                           ((1, 0), (0, 1)), rhs_dilation=(2, 1),
                                           dimension_numbers=("NHWC", "HWIO", "NHWC"))
    assert got.shape == (2, 4, 2, 12)
    np.testing.assert_array_equal(got[0, 0, 0], [0, 0, 4, 5, 0, 0, 24, 25, 0, 0, 44, 45])
    assert lax.composite(jnp.sin, "my.sin")(0.5) == jnp.sin(0.5)


# --- reduce ----------------------------------------------------------------------------------

def reduce_floats(x):
    return (lax.reduce(x, 0.0, lax.add, (1,)), lax.reduce(x, 1.0, jnp.add, (1,)),
            lax.reduce(x, 10.0, lax.max, (0, 1)), lax.reduce(x, 2.0, lambda a, b: a * b, (0,)),
            lax.reduce(x, np.inf, np.minimum, (1,)))


def reduce_bits(i, b):
    return (lax.reduce(i, -1, lax.bitwise_and, (0,)), lax.reduce(i, 0, jnp.bitwise_or, (1,)),
            lax.reduce(i, 0, lambda p, q: p ^ q, (0, 1)),
            lax.reduce(b, True, jnp.logical_and, (1,)))


def _max(a, b):
    return jnp.maximum(a, b)


def reduce_pair(x):
    return lax.reduce((x, x * 2), (0.0, 0.0), lambda a, b: (a[0] + b[0], _max(b[1], a[1])),
                      (1,))


def reduce_unknown(x):
    return lax.reduce(x, 0.0, lambda a, b: a - b, (1,))


def test_reduce():
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    # JAX: [3, 12], [4, 13], 10, [0, 8, 20] (the init value counted once)
    assert_both(reduce_floats, (x,), (np.float32([3, 12]), np.float32([4, 13]), np.float32(10),
                                      np.float32([0, 8, 20]), np.float32([0, 3])))
    # JAX: [4 0], [7 14], [False True]
    assert_both(reduce_bits, (np.int32([[5, 3], [6, 12]]), np.bool_([[True, False], [True, True]])),
                (np.int32([4, 0]), np.int32([7, 14]), np.int32(5 ^ 3 ^ 6 ^ 12),
                 np.bool_([False, True])))
    # JAX: (Array([3., 12.]), Array([6., 24.])) for the sum of both; here a sum and a max
    assert_both(reduce_pair, (x,), (np.float32([3, 12]), np.float32([4, 10])))
    # JAX: 30 everywhere; the row of maxima
    np.testing.assert_allclose(
        astjax.grad(lambda x: lax.reduce(x, 0.0, lax.add, (1,)).sum() ** 2)(x), np.full((2, 3), 30))
    np.testing.assert_allclose(astjax.jit(astjax.grad(
        lambda x: lax.reduce(x, -jnp.inf, lax.max, (0,)).sum()))(x), [[0, 0, 0], [1, 1, 1]])
    np.testing.assert_allclose(astjax.vmap(lambda r: lax.reduce(r, 0.0, lax.add, (0,)))(x),
                               [3, 12])


def and_or(x):
    return lax.reduce_and(x, (0,)), lax.reduce_or(x, (0,))


def test_reduce_and_or_of_integers_are_bitwise():
    # JAX: reduce_and(int32 [6, 3]) is 2, reduce_or 7 (they were all/any: True, True)
    assert_both(and_or, (np.int32([6, 3]),), (np.int32(2), np.int32(7)))
    assert_both(and_or, (np.bool_([[True, False], [True, True]]),),
                (np.bool_([True, False]), np.bool_([True, True])))


def test_reduce_errors():
    x = np.ones((2, 3), np.float32)
    with pytest.raises(NotImplementedError, match=r"cannot reduce with <lambda> \(defined at "
                                                  r".*test_lax_extra.py:\d+\)"):
        reduce_unknown(x)
    with pytest.raises(NotImplementedError,
                       match=r"test_lax_extra.py:\d+:\d+: lax.reduce: astjax cannot reduce"):
        astjax.jit(reduce_unknown)(x)
    with pytest.raises(ValueError, match="reduction axes \\(2,\\) contains out-of-bounds"):
        lax.reduce(x, 0.0, lax.add, (2,))
    with pytest.raises(TypeError, match="use bitwise_and"):
        lax.reduce(np.int32([1, 2]), 1, jnp.logical_and, (0,))


# --- conv_transpose --------------------------------------------------------------------------

X1 = np.arange(1, 7, dtype=np.float32).reshape(1, 3, 2)  # NHC: 3 positions, 2 channels
K1 = np.float32([[[1, 0, 2], [0, 1, -1]], [[2, 1, 0], [1, -1, 1]]])  # HIO
X2 = np.arange(1, 9, dtype=np.float32).reshape(1, 2, 2, 2)  # NHWC
K2 = np.arange(-6, 6, dtype=np.float32).reshape(3, 2, 2, 1)  # HWIO
_ROW = [4, -1, 2, 1, 2, 0, 10, -1, 4, 3, 4, 2, 16, -1, 6, 5, 6, 4]

# (args, keywords, JAX 0.10.2's result)
CONV_T_CASES = [
    ((X1, K1, (2,), "SAME"), {}, np.float32(_ROW).reshape(1, 6, 3)),
    ((X1, K1, (2,), "VALID"), {}, np.float32(_ROW).reshape(1, 6, 3)),
    ((X1, K1, (2,), ((1, 0),)), {}, np.float32(_ROW[:15]).reshape(1, 5, 3)),
    ((X1, K1, (2,), ((0, 1),)), {"use_consistent_padding": True},
     np.float32(_ROW[:15]).reshape(1, 5, 3)),
    ((X1, K1[:, :, :2], (3,), "SAME"), {"rhs_dilation": (2,), "transpose_kernel": True},
     np.float32([1, 2, 0, 0, 4, -1, 3, 4, 0, 0, 10, -1, 5, 6, 0, 0, 16, -1]).reshape(1, 9, 2)),
    ((X2, K2, (2, 1), "SAME"), {}, np.float32([14, 40, 2, 0, 40, 56, 6, -8]).reshape(1, 4, 2, 1)),
    ((X2.transpose(0, 3, 1, 2), K2.transpose(3, 2, 0, 1), (2, 2), "SAME"),
     {"dimension_numbers": ("NCHW", "OIHW", "NCHW")},
     np.float32([14, 8, 32, 18, 2, -4, 4, -10, 40, 12, 44, 0, 6, -16, 8, -22]).reshape(1, 1, 4, 4)),
]

_conv_t_jit = astjax.jit(lax.conv_transpose, static_argnums=(2, 3, 4, 5, 6, 7, 8, 9))


@pytest.mark.parametrize("case", range(len(CONV_T_CASES)))
def test_conv_transpose(case):
    args, kw, want = CONV_T_CASES[case]
    got = lax.conv_transpose(*args, **kw)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want)
    full = args + (kw.get("rhs_dilation"), kw.get("dimension_numbers"),
                   kw.get("transpose_kernel", False), None, None,
                   kw.get("use_consistent_padding", False))
    np.testing.assert_allclose(_conv_t_jit(*full), want)


def conv_t_same(x, k):
    return lax.conv_transpose(x, k, (2,), "SAME")


def test_conv_transpose_grad_and_vmap():
    x = RNG.standard_normal((2, 3, 2)).astype(np.float32)
    k = RNG.standard_normal((3, 2, 2)).astype(np.float32)
    check_grads(lambda x, k: jnp.sum(jnp.sin(conv_t_same(x, k))), (x, k), order=1,
                modes=("rev",), atol=1e-2, rtol=1e-2)
    batched = astjax.vmap(lambda r: conv_t_same(r[None], k)[0])(x)
    np.testing.assert_allclose(batched, conv_t_same(x, k), rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="Invalid padding mode: SAME_LOWER"):
        lax.conv_transpose(x, k, (2,), "SAME_LOWER", use_consistent_padding=True)


# --- Numba -----------------------------------------------------------------------------------

def _numba_program(x, s, w, a, b, q, lhs, kernel):
    bits = lax.population_count(x) + lax.clz(x) + lax.shift_right_logical(x, s)
    return (bits, lax.select_n(w, a, b) + lax.zeta(2.0, q),
            lax.reduce(x, 0, lax.bitwise_xor, (0,)) + lax.reduce(a, 1.0, lambda u, v: u + v, (0,)),
            lax.conv_transpose(lhs, kernel, (2,), "SAME"))


def test_numba(numba_backend):
    x, s = np.int32([-8, 7, -1, 0]), np.int32([1, 2, 31, 40])
    w = np.int32([0, 1, 1, 0])
    a, b = np.float32([1, 2, 3, 4]), np.float32([5, 6, 7, 8])
    q = np.float32([1, 2, 3, 0.5])
    jitted = astjax.jit(_numba_program)
    got = jitted(x, s, w, a, b, q, X1, K1)
    (compiled,) = jitted.cache.values()
    assert compiled.backend == "numba", compiled.fallback_reason
    want = _numba_program(x, s, w, a, b, q, X1, K1)  # eagerly
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_allclose(got[1], want[1], rtol=1e-6)
    assert got[2] == want[2] == (-8 ^ 7 ^ -1) + 11
    np.testing.assert_allclose(got[3], CONV_T_CASES[0][2])
