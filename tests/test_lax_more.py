"""astjax.lax beyond control flow: map, associative_scan, the cumulative reductions,
dot_general/dot/batch_matmul, sort/top_k/argmax, and the elementwise and shape functions.
Each against NumPy or JAX 0.10.2's values (written as literals from a JAX run), eagerly and
under jit (python backend), with finite-difference gradients and vmap; one small Numba
program. Convolutions and reduce_window are in test_lax_conv.py."""
import numpy as np
import pytest

import astjax
import astjax.numpy as jnp
from astjax import lax
from astjax.test_util import check_grads

from .op_checks import both

RNG = np.random.default_rng(0)
X = RNG.standard_normal((4, 3)).astype(np.float32)
A = RNG.standard_normal((2, 3, 4)).astype(np.float32)
B = RNG.standard_normal((2, 4, 5)).astype(np.float32)


def assert_both(fn, args, want, rtol=1e-6, atol=0.0, dtype=None):
    """``want``: one array, or a tuple of the result's leaves."""
    want_leaves = list(want) if isinstance(want, tuple) else [want]
    for got in both(fn, *args):
        got_leaves = astjax.tree_util.tree_leaves(got)
        assert len(got_leaves) == len(want_leaves)
        for g, w in zip(got_leaves, want_leaves):
            w = np.asarray(w)
            assert g.shape == w.shape, (g.shape, w.shape)
            if dtype is not None:
                assert g.dtype == dtype
            np.testing.assert_allclose(g, w, rtol=rtol, atol=atol)


# --- map -------------------------------------------------------------------------------------

def map_pytree(xs):
    return lax.map(lambda r: (r.sum(), r * 2), xs)


def map_closure(xs, w):
    return lax.map(lambda r: jnp.tanh(r["a"] @ w), {"a": xs}, batch_size=2)


def test_map():
    xs = np.arange(6, dtype=np.float32).reshape(3, 2)
    # JAX: (Array([1., 5., 9.]), Array([[0., 2.], [4., 6.], [8., 10.]]))
    assert_both(map_pytree, (xs,), ([1.0, 5.0, 9.0], [[0.0, 2.0], [4.0, 6.0], [8.0, 10.0]]))
    w = X[:2, :2]
    assert_both(map_closure, (X[:, :2], w), np.tanh(X[:, :2] @ w), rtol=1e-5)
    check_grads(lambda xs, w: map_closure(xs, w).sum(), (X[:, :2], w), modes=("rev",),
                atol=1e-2, rtol=1e-2)
    batched = astjax.vmap(lambda xs: map_pytree(xs)[0])(A)
    np.testing.assert_allclose(batched, A.sum(-1), rtol=1e-6)
    with pytest.raises(ValueError, match="batch_size"):
        lax.map(lambda r: r, X, batch_size=0)


# --- associative_scan and the cumulative reductions ------------------------------------------

def _compose(f, g):  # affine maps x -> a x + b: f, then g
    return g[0] * f[0], g[0] * f[1] + g[1]


def affine_scan(a, b):
    return lax.associative_scan(_compose, (a, b))


def affine_scan_reverse(a, b):
    return lax.associative_scan(_compose, (a, b), reverse=True)


def test_associative_scan():
    a = np.float32([2.0, 3.0, 0.5, -1.0])
    b = np.float32([1.0, -1.0, 2.0, 0.5])
    # JAX 0.10.2's values: the combination is not commutative, so the order shows
    assert_both(affine_scan, (a, b), ([2.0, 6.0, 3.0, -3.0], [1.0, 2.0, 3.0, -2.5]))
    assert_both(affine_scan_reverse, (a, b), ([-3.0, -1.5, -0.5, -1.0],
                                              [12.5, 5.75, 2.25, 0.5]))
    x = RNG.standard_normal((3, 9)).astype(np.float32)  # 9: not a power of two
    assert_both(lambda x: lax.associative_scan(jnp.add, x, axis=1), (x,), np.cumsum(x, 1),
                rtol=1e-5, atol=1e-6)
    assert_both(lambda x: lax.associative_scan(jnp.add, x, axis=-1, reverse=True), (x,),
                np.cumsum(x[:, ::-1], 1)[:, ::-1], rtol=1e-5, atol=1e-6)
    check_grads(lambda a, b: affine_scan(a, b)[1].sum(), (a, b), order=1)
    got = astjax.vmap(lambda a, b: affine_scan(a, b)[1])(np.stack([a, b]), np.stack([b, a]))
    np.testing.assert_allclose(got[1], np.asarray(affine_scan(b, a)[1]))


def test_cumulative():
    x = RNG.standard_normal((5, 3)).astype(np.float32)
    cases = [
        (lambda x: lax.cumsum(x), np.cumsum(x, 0)),
        (lambda x: lax.cumsum(x, axis=1, reverse=True), np.cumsum(x[:, ::-1], 1)[:, ::-1]),
        (lambda x: lax.cumprod(x, 1), np.cumprod(x, 1)),
        (lambda x: lax.cummax(x), np.maximum.accumulate(x, 0)),
        (lambda x: lax.cummin(x, 1, True), np.minimum.accumulate(x[:, ::-1], 1)[:, ::-1]),
        (lambda x: lax.cumlogsumexp(x), np.logaddexp.accumulate(x, 0)),
    ]
    for fn, want in cases:
        assert_both(fn, (x,), want, rtol=1e-5, atol=1e-6, dtype=np.float32)
    # JAX: lax.cumsum keeps int8 (wrapping), cumlogsumexp/cummax reverse
    assert_both(lambda i: lax.cumsum(i), (np.int8([100, 100, 100]),), [100, -56, 44],
                dtype=np.int8)
    assert_both(lambda v: lax.cumlogsumexp(v, reverse=True), (np.float32([0.0, 1.0, 2.0]),),
                [2.4076061, 2.3132617, 2.0], rtol=1e-6)
    assert_both(lambda i: lax.cummax(i, axis=0, reverse=True),
                (np.int32([[1, 3], [2, 0], [5, 1]]),), [[5, 3], [5, 1], [5, 1]])
    for fn in (lambda x: lax.cumsum(x, 1).sum(), lambda x: lax.cumprod(x).sum(),
               lambda x: (lax.cummax(x, 1) * x).sum(), lambda x: lax.cumlogsumexp(x).sum()):
        check_grads(fn, (x,), order=1, atol=1e-2, rtol=1e-2)
    got = astjax.vmap(lambda r: lax.cummax(r))(x)
    np.testing.assert_array_equal(got, np.maximum.accumulate(x, 1))


# --- products --------------------------------------------------------------------------------

def test_dot_general():
    dn = (((2,), (1,)), ((0,), (0,)))
    assert_both(lambda a, b: lax.dot_general(a, b, dn), (A, B), np.einsum("bij,bjk->bik", A, B),
                rtol=1e-5, atol=1e-6)
    # batch dims not leading, two contracting dims: batch, then lhs free, then rhs free
    c = RNG.standard_normal((3, 5, 2, 4)).astype(np.float32)
    dn2 = (((1, 2), (0, 3)), ((0,), (2,)))
    assert_both(lambda a, c: lax.dot_general(a, c, dn2), (A, c),
                np.einsum("bij,ikbj->bk", A, c), rtol=1e-5, atol=1e-6)
    # no contraction: an outer product per batch
    dn3 = (((), ()), ((0,), (0,)))
    assert_both(lambda a, b: lax.dot_general(a, b, dn3), (A, B),
                np.einsum("bij,bkl->bijkl", A, B), rtol=1e-6)
    # JAX's dtypes: int8 x int16 -> int16; preferred_element_type
    got = lax.dot_general(np.ones((2, 3), np.int8), np.ones(3, np.int16), (((1,), (0,)), ((), ())))
    assert got.dtype == np.int16 and got.tolist() == [3, 3]
    got = lax.dot(np.ones((2, 3), np.int8), np.ones(3, np.int8), preferred_element_type=np.int32)
    assert got.dtype == np.int32
    assert_both(lambda a, b: lax.dot(a, b), (A[0], B[0]), A[0] @ B[0], rtol=1e-5)
    assert_both(lambda a: lax.dot(a[0, 0], a[1, 0]), (A,), A[0, 0] @ A[1, 0], rtol=1e-5)
    assert_both(lambda a, b: lax.batch_matmul(a, b), (A, B), A @ B, rtol=1e-5)
    check_grads(lambda a, c: lax.dot_general(a, c, dn2), (A, c), order=1, atol=1e-2,
                rtol=1e-2)
    check_grads(lambda a, b: lax.batch_matmul(a, b), (A, B), order=1, atol=1e-2, rtol=1e-2)
    got = astjax.vmap(lambda a, b: lax.dot(a, b))(A, B)
    np.testing.assert_allclose(got, A @ B, rtol=1e-5)
    with pytest.raises(TypeError, match="equal numbers of lhs and rhs contracting"):
        lax.dot_general(A, B, (((2,), ()), ((), ())))
    with pytest.raises(TypeError, match="in the range"):
        astjax.jit(lambda a, b: lax.dot_general(a, b, (((3,), (1,)), ((), ()))))(A, B)
    with pytest.raises(TypeError, match="Incompatible shapes for dot"):
        lax.dot(A, B)


# --- sorting ---------------------------------------------------------------------------------

XN = np.float32([[3.0, 1.0, np.nan, 1.0, 5.0], [0.0, -0.0, 2.0, 2.0, -1.0]])


def test_sort_top_k_argmax():
    for fn, want in [
        (lambda x: lax.sort(x), np.sort(XN, -1)),
        (lambda x: lax.sort(x, 0), np.sort(XN, 0)),
        # JAX 0.10.2: NaN largest, ties in index order, int32 indices
        (lambda x: lax.top_k(x, 3),
         ([[np.nan, 5.0, 3.0], [2.0, 2.0, 0.0]], [[2, 4, 0], [2, 3, 0]])),
        (lambda x: lax.argmax(x, 1, jnp.int32), [2, 2]),
        (lambda x: lax.argmin(x, 1, jnp.int16), [2, 4]),
    ]:
        for got in both(fn, XN):
            wants = want if isinstance(want, tuple) else (want,)
            for g, w in zip(astjax.tree_util.tree_leaves(got), wants):
                np.testing.assert_array_equal(g, np.asarray(w, g.dtype))
    assert both(lambda x: lax.top_k(x, 3), XN)[1][1].dtype == np.int32
    assert lax.argmin(XN, 1, jnp.int16).dtype == np.int16
    i = np.int32([[1, 3, 3, 2], [0, -1, 5, 5]])
    for got in both(lambda i: lax.top_k(i, 3), i):
        np.testing.assert_array_equal(got[0], [[3, 3, 2], [5, 5, 0]])
        np.testing.assert_array_equal(got[1], [[1, 2, 3], [2, 3, 0]])
    keys = np.int32([2, 1, 2, 1])
    second = np.float32([4.0, 3.0, 1.0, 2.0])
    for got in both(lambda k, s: lax.sort((k, s, jnp.arange(4)), num_keys=2), keys, second):
        # JAX: (Array([1, 1, 2, 2]), Array([2., 3., 1., 4.]), Array([3, 1, 2, 0]))
        np.testing.assert_array_equal(got[0], [1, 1, 2, 2])
        np.testing.assert_array_equal(got[1], [2.0, 3.0, 1.0, 4.0])
        np.testing.assert_array_equal(got[2], [3, 1, 2, 0])
    for got in both(lambda k, v: lax.sort_key_val(k, v), keys, second):
        np.testing.assert_array_equal(got[0], [1, 1, 2, 2])
        np.testing.assert_array_equal(got[1], [3.0, 2.0, 4.0, 1.0])
    x = RNG.permutation(12).astype(np.float32).reshape(3, 4)
    check_grads(lambda x: lax.top_k(x, 2)[0], (x,), order=1)
    check_grads(lambda x: lax.sort_key_val(x[0], x[1] * x[2])[1], (x,), order=1)
    got = astjax.vmap(lambda r: lax.top_k(r, 2)[1])(x)
    np.testing.assert_array_equal(got, np.argsort(-x, 1)[:, :2])
    with pytest.raises(ValueError, match="num_keys"):
        lax.sort((keys, second), num_keys=3)
    with pytest.raises(ValueError, match="nonnegative"):
        lax.top_k(x, -1)


# --- elementwise -----------------------------------------------------------------------------

def test_elementwise_lax_semantics():
    # JAX 0.10.2: rounding away from zero by default, C division and remainder
    r = np.float32([-2.5, -0.5, 0.5, 1.5, 2.5, 0.49999997])
    assert_both(lambda r: lax.round(r), (r,), [-3.0, -1.0, 1.0, 2.0, 3.0, 0.0])
    assert_both(lambda r: lax.round(r, lax.RoundingMethod.TO_NEAREST_EVEN), (r,),
                np.round(r))
    i, j = np.int32([7, -7, 7, -7, 0]), np.int32([2, 2, -2, -2, 3])
    assert_both(lambda i, j: lax.div(i, j), (i, j), [3, -3, -3, 3, 0], dtype=np.int32)
    assert_both(lambda i, j: lax.rem(i, j), (i, j), [1, -1, 1, -1, 0], dtype=np.int32)
    assert_both(lambda f: lax.rem(f, 2.0), (np.float32([5.5, -5.5]),), [1.5, -1.5])
    assert_both(lambda f: lax.div(f, 2.0), (np.float32([5.0, -3.0]),), [2.5, -1.5])
    assert_both(lambda f: lax.integer_pow(f, -2), (np.float32([2.0, -3.0]),), [0.25, 1 / 9])
    assert_both(lambda f: lax.logistic(f), (np.float32([-100.0, 0.0, 2.0]),),
                [0.0, 0.5, 0.880797], rtol=1e-6)
    assert_both(lambda v: lax.clamp(1, v, 3), (np.int32([0, 2, 5]),), [1, 2, 3],
                dtype=np.int32)
    assert_both(lambda v: lax.clamp(-0.5, v, 0.5), (X,), np.clip(X, -0.5, 0.5),
                dtype=np.float32)
    assert_both(lambda v: lax.convert_element_type(v, jnp.int32), (r,),
                [-2, 0, 0, 1, 2, 0], dtype=np.int32)
    with pytest.raises(TypeError, match="Python int"):
        lax.integer_pow(X, 1.5)


def test_clamp_derivatives_follow_jax_with_none_at_a_bound():
    # JAX 0.10.2: d/dx inside (min, max) only, d/dmin and d/dmax while they clamp; at
    # x == min or x == max every derivative is 0 (jnp.clip's there are 0.5 each).
    f = lambda x, lo, hi: lax.clamp(lo, x, hi)
    cases = {(1.0, 1.0, 2.0): (0, 0, 0), (2.0, 1.0, 2.0): (0, 0, 0), (1.5, 1.0, 2.0): (1, 0, 0),
             (0.5, 1.0, 2.0): (0, 1, 0), (2.5, 1.0, 2.0): (0, 0, 1), (2.0, 3.0, 1.0): (0, 0, 1),
             (0.0, 3.0, 1.0): (0, 0, 0)}
    for args, want in cases.items():
        assert [float(g) for g in astjax.grad(f, argnums=(0, 1, 2))(*args)] == list(want)
        assert float(astjax.jvp(f, args, (1.0, 1.0, 1.0))[1]) == sum(want)
    v = np.float32([np.nan, np.inf, -np.inf, 0.25])
    np.testing.assert_array_equal(lax.clamp(-0.5, v, 0.5), [np.nan, 0.5, -0.5, 0.25])


def test_elementwise_wrappers():
    pos = np.abs(X) + 0.5
    unary = [("neg", np.negative), ("sign", np.sign), ("floor", np.floor), ("ceil", np.ceil),
             ("is_finite", np.isfinite), ("abs", np.abs), ("exp", np.exp), ("exp2", np.exp2),
             ("expm1", np.expm1), ("sin", np.sin), ("cos", np.cos), ("tanh", np.tanh),
             ("atan", np.arctan), ("sinh", np.sinh), ("square", np.square),
             ("cbrt", np.cbrt), ("asinh", np.arcsinh)]
    for name, ref in unary:
        fn = getattr(lax, name)
        np.testing.assert_allclose(fn(X), ref(X), rtol=2e-6, atol=1e-7, err_msg=name)
    for name, ref in [("log", np.log), ("log1p", np.log1p), ("sqrt", np.sqrt),
                      ("rsqrt", lambda v: 1 / np.sqrt(v)), ("reciprocal", np.reciprocal),
                      ("acosh", np.arccosh)]:
        np.testing.assert_allclose(getattr(lax, name)(pos + 1), ref(pos + 1), rtol=2e-6,
                                   err_msg=name)
    binary = [("add", np.add), ("sub", np.subtract), ("mul", np.multiply), ("max", np.maximum),
              ("min", np.minimum), ("pow", lambda a, b: np.power(np.abs(a), b)),
              ("atan2", np.arctan2), ("eq", np.equal), ("lt", np.less), ("ge", np.greater_equal)]
    for name, ref in binary:
        a = np.abs(X) if name == "pow" else X
        np.testing.assert_allclose(getattr(lax, name)(a, X[::-1]), ref(a, X[::-1]),
                                   rtol=2e-6, err_msg=name)
    np.testing.assert_array_equal(lax.shift_left(np.int32([1, 3]), 2), [4, 12])
    np.testing.assert_array_equal(lax.bitwise_xor(np.int32([5]), np.int32([3])), [6])
    from scipy import special
    np.testing.assert_allclose(lax.erf(X), special.erf(X), rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(lax.lgamma(pos), special.gammaln(pos), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(lax.digamma(pos), special.digamma(pos), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(lax.polygamma(1, pos), special.polygamma(1, pos), rtol=1e-5)

    def several(x):
        return (lax.rsqrt(lax.square(x) + 1.0) + lax.logistic(x) * lax.integer_pow(x, 3)
                + lax.tanh(lax.exp2(x)) + lax.clamp(-0.3, x, 0.4) + lax.erf(x))
    check_grads(several, (X * 0.9 + 0.05,), order=1, atol=1e-2, rtol=1e-2)
    np.testing.assert_allclose(astjax.jit(several)(X), several(X), rtol=1e-6)
    np.testing.assert_allclose(astjax.vmap(several)(X), several(X), rtol=1e-6)


# --- shapes ----------------------------------------------------------------------------------

def test_erf_inv():
    # lax.erf_inv is astjax.scipy.special.erfinv (AttributeError before)
    import scipy.special
    x = np.float32([-0.9, 0.1, 0.5])
    np.testing.assert_allclose(lax.erf_inv(x), scipy.special.erfinv(x), rtol=2e-6)
    np.testing.assert_allclose(astjax.jit(lambda v: lax.erf_inv(v))(x),
                               scipy.special.erfinv(x), rtol=2e-6)
    np.testing.assert_allclose(astjax.grad(lambda v: jnp.sum(lax.erf_inv(v)))(x),
                               np.sqrt(np.pi) / 2 * np.exp(scipy.special.erfinv(x) ** 2),
                               rtol=1e-5)
    assert "erf_inv" in lax.__all__


def test_shapes():
    v = np.arange(1, 7, dtype=np.float32).reshape(2, 3)
    # JAX 0.10.2: interior padding and a negative low pad
    want_pad = [[0, 0, 0, 0, 0, 0], [0, 2, 0, 3, 0, 0], [0, 0, 0, 0, 0, 0],
                [0, 0, 0, 0, 0, 0], [0, 5, 0, 6, 0, 0]]
    assert_both(lambda v: lax.pad(v, 0.0, ((1, 0, 2), (-1, 2, 1))), (v,), want_pad)
    assert_both(lambda v: lax.broadcast_in_dim(v[0, :2], (3, 2, 2), (1,)), (v,),
                [[[1, 1], [2, 2]]] * 3)
    assert_both(lambda v: lax.broadcast(v, (2,)), (v,), np.broadcast_to(v, (2, 2, 3)))
    assert_both(lambda v: lax.broadcast_in_dim(v, v.shape + (2,), (0, 1)), (v,),
                np.broadcast_to(v[..., None], (2, 3, 2)))
    r = np.arange(10, dtype=np.float32)
    assert_both(lambda r: lax.slice(r, (1,), (9,), (3,)), (r,), [1, 4, 7])
    assert_both(lambda v: lax.slice(v, (0, 1), (2, 3)), (v,), v[:, 1:3])
    assert_both(lambda v: lax.slice_in_dim(v, 0, 3, 2, axis=1), (v,), v[:, 0:3:2])
    assert_both(lambda v: lax.index_in_dim(v, -1, 1), (v,), v[:, -1:])
    assert_both(lambda v: lax.index_in_dim(v, 1, 0, keepdims=False), (v,), v[1])
    assert_both(lambda v: lax.rev(v, (0, 1)), (v,), v[::-1, ::-1])
    assert_both(lambda v: lax.reshape(v, (3, 2), (1, 0)), (v,), v.T.reshape(3, 2))
    assert_both(lambda v: lax.transpose(v, (1, 0)), (v,), v.T)
    assert_both(lambda v: lax.expand_dims(v, (0, 3)), (v,), v[None, :, :, None])
    assert_both(lambda v: lax.squeeze(v[None], (0,)), (v,), v)
    assert_both(lambda v: lax.concatenate([v, v * 2], 1), (v,), np.concatenate([v, v * 2], 1))
    assert_both(lambda v: lax.reduce_max(v, (1,)), (v,), v.max(1))
    assert_both(lambda i: lax.reduce_sum(i, (0, 1)), (np.int8([[100, 100], [1, 1]]),), -54,
                dtype=np.int8)
    np.testing.assert_array_equal(lax.iota(jnp.int16, 4), np.arange(4, dtype=np.int16))
    np.testing.assert_array_equal(lax.broadcasted_iota(jnp.int32, (2, 3), 1),
                                  [[0, 1, 2], [0, 1, 2]])
    assert lax.iota(jnp.int16, 4).dtype == np.int16
    check_grads(lambda v: lax.pad(v, 0.5, ((1, -1, 1), (0, 2, 0))), (v,), order=1)
    check_grads(lambda v: lax.broadcast_in_dim(v, (4, 2, 3), (1, 2)), (v,), order=1)
    got = astjax.vmap(lambda v: lax.pad(v, -1.0, ((1, 1, 1),)))(v)
    np.testing.assert_array_equal(got, [[-1, 1, -1, 2, -1, 3, -1], [-1, 4, -1, 5, -1, 6, -1]])
    with pytest.raises(ValueError, match="padding_config"):
        lax.pad(v, 0.0, ((0, 0, 0),))


# --- Numba -----------------------------------------------------------------------------------

def _numba_several(x, k):
    y = lax.conv(x, k, (1,), "SAME")
    p = lax.reduce_window(y, -jnp.inf, lax.max, (1, 1, 2), (1, 1, 1), "VALID")
    return lax.clamp(-1.0, p, 1.0) + lax.rsqrt(lax.integer_pow(p, 2) + 1.0)


def test_numba(numba_backend):
    x = RNG.standard_normal((1, 3, 5)).astype(np.float32)
    k = RNG.standard_normal((2, 3, 3)).astype(np.float32)
    jitted = astjax.jit(_numba_several)
    got = jitted(x, k)
    (compiled,) = jitted.cache.values()
    assert compiled.backend == "numba", compiled.fallback_reason
    # the python backend's result
    np.testing.assert_allclose(got, _numba_several(x, k), rtol=1e-5, atol=1e-6)
