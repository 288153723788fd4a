"""Numba lowerings of batched matmul, einsum, tensordot, argmax/argmin(axis=...),
integer-array indexing (gathers and ``x.at[idx]`` scatters), flip, atleast_nd,
``x.at[idx].min/max``, constant arrays and arrays of scalars, against NumPy.

Each compile costs Numba seconds here, so every test compiles one function that
returns many results.
"""
import numpy as np
import pytest

import astjax
import astjax.numpy as jnp
from astjax import random
from astjax.scipy.linalg import solve_triangular

from .test_numba_backend import _run


def _check(got, expected, rtol=1e-5, atol=1e-5):
    assert len(got) == len(expected)
    for k, (g, e) in enumerate(zip(got, expected)):
        g, e = np.asarray(g), np.asarray(e)
        assert g.shape == e.shape, (k, g.shape, e.shape)
        assert g.dtype == e.dtype, (k, g.dtype, e.dtype)
        np.testing.assert_allclose(g, e, rtol=rtol, atol=atol, err_msg=f"result {k}")


_RNG = np.random.default_rng(0)


def _normal(*shape, dtype=np.float32):
    return _RNG.standard_normal(shape).astype(dtype)


# --- products --------------------------------------------------------------------------------

def products(a3, b2, v3, w4, a4, b4, m, n, i3, j2):
    return (a3 @ b2,                                   # batch dims on one side: one BLAS call
            v3 @ a3,                                   # a 1-D row vector against a batch
            a3 @ w4,                                   # a batch against a 1-D column vector
            a4 @ b4,                                   # batch dims (2, 1) and (5,) broadcast
            jnp.matmul(a3, jnp.transpose(a3, (0, 2, 1))),
            i3 @ j2,                                   # integers: a loop nest
            jnp.einsum("ij,jk->ik", m, n),
            jnp.einsum("ij,kj->ik", m, m),             # a transposed operand
            jnp.einsum("bij,bkj->bki", a3, a3),        # batch, then a transposed output
            jnp.einsum("ii->i", n[:3]),                # a diagonal
            jnp.einsum("ii", n[:3]),                   # implicit output: the trace
            jnp.einsum("ij", m), jnp.einsum("ji", m),  # implicit output, sorted labels
            jnp.einsum("ij->", m),
            jnp.einsum("...ij,jk->...ik", a4, b2),     # an ellipsis
            jnp.einsum("i,i->", v3, v3),
            jnp.einsum("i,j->ij", v3, w4),             # an outer product
            jnp.einsum("ij,jk,kl->il", m, n, m),       # three operands
            jnp.einsum("ijk,j->ik", a3, v3),
            jnp.einsum("ij,jk->ik", i3[0], j2),        # integers
            jnp.tensordot(a3, b2, axes=1),
            jnp.tensordot(a3, n, axes=([2, 1], [0, 1])),
            jnp.dot(a3, b2))


def test_batched_matmul_einsum_tensordot_float32(numba_backend):
    a3, b2, v3, w4 = _normal(2, 3, 4), _normal(4, 5), _normal(3), _normal(4)
    a4, b4, m, n = _normal(2, 1, 3, 4), _normal(5, 4, 2), _normal(3, 4), _normal(4, 3)
    i3 = _RNG.integers(-5, 5, (2, 3, 4)).astype(np.int32)
    j2 = _RNG.integers(-5, 5, (4, 2)).astype(np.int32)
    got, compiled = _run(products, a3, b2, v3, w4, a4, b4, m, n, i3, j2)
    assert compiled.backend == "numba", compiled.fallback_reason
    expected = (np.matmul(a3, b2), np.matmul(v3, a3), np.matmul(a3, w4), np.matmul(a4, b4),
                np.matmul(a3, a3.transpose(0, 2, 1)), np.matmul(i3, j2),
                np.einsum("ij,jk->ik", m, n), np.einsum("ij,kj->ik", m, m),
                np.einsum("bij,bkj->bki", a3, a3), np.einsum("ii->i", n[:3]),
                np.einsum("ii", n[:3]), np.einsum("ij", m), np.einsum("ji", m),
                np.einsum("ij->", m), np.einsum("...ij,jk->...ik", a4, b2),
                np.einsum("i,i->", v3, v3), np.einsum("i,j->ij", v3, w4),
                np.einsum("ij,jk,kl->il", m, n, m), np.einsum("ijk,j->ik", a3, v3),
                np.einsum("ij,jk->ik", i3[0], j2), np.tensordot(a3, b2, axes=1),
                np.tensordot(a3, n, axes=([2, 1], [0, 1])), np.dot(a3, b2))
    # NumPy's scalars are 0-d float32 arrays here too
    _check(got, [np.asarray(e) for e in expected])
    assert "_rt.dot(" in compiled.source and "jnp." not in compiled.source


def chains(m, n, v, a3, i3):
    return (jnp.einsum("ij,jk,kl,lm->im", m, n, m, n),   # four operands, three np.dot calls
            jnp.einsum("ij,ij,ij->i", m, m, m),           # a label in every operand
            jnp.einsum("ii,ij,jk->k", n[:3, :3], m, n),   # a diagonal first
            jnp.einsum("...j,jk,k->...", a3, n, v),       # an ellipsis
            jnp.einsum("ij,jk,kl->", i3[0], i3[1].T, i3[0]))  # integers: loop nests


def test_einsum_of_three_or_more_operands_contracts_pairwise(numba_backend):
    m, n, v = _normal(3, 4), _normal(4, 3), _normal(3)
    a3, i3 = _normal(2, 3, 4), _RNG.integers(-3, 3, (2, 3, 4)).astype(np.int32)
    got, compiled = _run(chains, m, n, v, a3, i3)
    assert compiled.backend == "numba", compiled.fallback_reason
    expected = (np.einsum("ij,jk,kl,lm->im", m, n, m, n), np.einsum("ij,ij,ij->i", m, m, m),
                np.einsum("ii,ij,jk->k", n[:3, :3], m, n),
                np.einsum("...j,jk,k->...", a3, n, v),
                np.asarray(np.einsum("ij,jk,kl->", i3[0], i3[1].T, i3[0])))
    _check(got, expected)
    chain = compiled.source.split("def ")[1]
    assert chain.count("_rt.dot(") >= 3


def products64(a, b, v, m):
    return (a @ b, v @ a, jnp.einsum("bij,bjk->bik", a, jnp.transpose(a, (0, 2, 1))),
            jnp.einsum("ii->", m), jnp.argmax(a, axis=-1), jnp.einsum("bij,j->bi", a, b[:, 0]))


def test_products_float64(numba_backend, x64):
    a, b, v, m = (_normal(3, 2, 4, dtype=np.float64), _normal(4, 3, dtype=np.float64),
                  _normal(2, dtype=np.float64), _normal(3, 3, dtype=np.float64))
    got, compiled = _run(products64, a, b, v, m)
    assert compiled.backend == "numba", compiled.fallback_reason
    expected = (a @ b, v @ a, np.einsum("bij,bjk->bik", a, a.transpose(0, 2, 1)),
                np.asarray(np.trace(m)), np.argmax(a, axis=-1),  # int64 under x64
                np.einsum("bij,j->bi", a, b[:, 0]))
    _check(got, expected, rtol=1e-12, atol=1e-12)


def test_batch_dims_that_differ_raise_as_the_python_backend(numba_backend):
    def bmm(a, b):
        return a @ b
    a, b = _normal(2, 3, 4), _normal(2, 4, 5)
    jitted = astjax.jit(bmm)
    np.testing.assert_allclose(jitted(a, b), a @ b, rtol=1e-5, atol=1e-6)
    (compiled,) = jitted.cache.values()
    assert compiled.backend == "numba", compiled.fallback_reason
    with pytest.raises(ValueError):
        jitted(a, _normal(3, 4, 5))  # 2 vs 3 batch: NumPy's error, from the python backend


# --- argmax / argmin --------------------------------------------------------------------------

def arg_reductions(x, xi, xb):
    return (jnp.argmax(x, axis=1), jnp.argmin(x, axis=-1), jnp.argmax(x, axis=0, keepdims=True),
            jnp.argmin(x, axis=-3), jnp.argmax(x[0, 0], axis=0), jnp.argmax(x, keepdims=True),
            jnp.argmax(xi, axis=0), jnp.argmin(xi, axis=-1), jnp.argmax(xb, axis=1),
            jnp.argmin(xb, axis=1))


def test_argmax_argmin_with_axis(numba_backend):
    x = _normal(3, 4, 5)
    x[1, 2, 3] = x[1, 2, 1] = x[2, 0, 0] = x[0, 3, 4] = np.nan  # the first NaN wins
    x[0, 1, :] = 7.0                                            # ties: the first wins
    xi = np.array([[3, 1, 3], [3, 7, 0], [-2, 7, -2]], np.int32)
    xb = np.array([[False, True, True], [False, False, False], [True, True, False]])
    got, compiled = _run(arg_reductions, x, xi, xb)
    assert compiled.backend == "numba", compiled.fallback_reason
    expected = (np.argmax(x, axis=1), np.argmin(x, axis=-1), np.argmax(x, axis=0, keepdims=True),
                np.argmin(x, axis=-3), np.argmax(x[0, 0], axis=0), np.argmax(x, keepdims=True),
                np.argmax(xi, axis=0), np.argmin(xi, axis=-1), np.argmax(xb, axis=1),
                np.argmin(xb, axis=1))
    _check(got, [np.asarray(e).astype(np.int32) for e in expected], 0, 0)  # JAX: int32


# --- gathers and scatters ---------------------------------------------------------------------

def gathers(x, idx, idx2, k):
    return (x[idx], x[:, idx], x[idx, 1], x[1, :, idx2], x[idx2, :, idx2], x[..., idx],
            x[idx, k], x[None, idx], x[idx2[:, None], idx], x[1:, idx, ::2], x[idx, -1, 1:],
            x[idx2[:2, None], :, idx])


def test_gather(numba_backend):
    x = np.arange(2 * 3 * 4, dtype=np.float32).reshape(2, 3, 4)
    idx = np.array([0, -1, 1, -2, 1], np.int32)
    idx2 = np.array([1, 0, -1], np.int32)
    got, compiled = _run(gathers, x, idx, idx2, -2)
    assert compiled.backend == "numba", compiled.fallback_reason
    expected = (x[idx], x[:, idx], x[idx, 1], x[1, :, idx2], x[idx2, :, idx2], x[..., idx],
                x[idx, -2], x[None, idx], x[idx2[:, None], idx], x[1:, idx, ::2],
                x[idx, -1, 1:], x[idx2[:2, None], :, idx])
    _check(got, expected, 0, 0)


def _index_with_a_tuple(m, rows, cols):
    idx = (rows, cols)  # as jnp.tril_indices returns it
    return m[idx], m.at[idx].add(1.0), m[jnp.tril_indices(3)]


def test_gather_and_scatter_with_a_tuple_of_index_arrays(numba_backend):
    # m[idx] with idx a tuple variable of index arrays ran on the python backend
    # ("an index of (i32[_], i32[_])")
    m = np.arange(9, dtype=np.float32).reshape(3, 3)
    rows, cols = np.int32([0, 2, 1]), np.int32([1, 0, 2])
    got, compiled = _run(_index_with_a_tuple, m, rows, cols)
    assert compiled.backend == "numba", compiled.fallback_reason
    added = m.copy()
    added[rows, cols] += 1.0
    _check(got, (m[rows, cols], added, m[np.tril_indices(3)]), 0, 0)


def _pick_and_put(x, i, v):
    return x[i, -1] + x[..., 2][0], x.at[i].set(v)


def test_basic_indices_out_of_bounds_raise_instead_of_reading_memory(numba_backend):
    """Numba does not check bounds: an integer index past the end read (or wrote) memory
    outside the array. Now the call reruns on the python backend, which raises NumPy's
    IndexError at the user's line."""
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    v = np.ones(3, np.float32)
    (got, put), compiled = _run(_pick_and_put, x, -2, v)
    assert compiled.backend == "numba", compiled.fallback_reason
    np.testing.assert_array_equal(got, x[-2, -1] + x[..., 2][0])
    np.testing.assert_array_equal(put, np.array([[1, 1, 1], [3, 4, 5]], np.float32))
    jitted = astjax.jit(_pick_and_put)
    for i in (2, -3):
        with pytest.raises(IndexError, match=r"test_numba_lowerings.py:\d+: index"):
            jitted(x, i, v)


def test_gather_out_of_bounds_raises_as_the_python_backend(numba_backend):
    def take(x, idx):
        return x[:, idx]
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    got, compiled = _run(take, x, np.array([2, -3], np.int32))
    assert compiled.backend == "numba", compiled.fallback_reason
    np.testing.assert_array_equal(got, x[:, [2, -3]])
    jitted = astjax.jit(take)
    with pytest.raises(IndexError):
        jitted(x, np.array([0, 3], np.int32))
    with pytest.raises(IndexError):
        jitted(x, np.array([-4], np.int32))


def scatters(x, idx, v):
    return (x.at[idx].add(v), x.at[idx, 1].add(1.0), x.at[:, idx].set(5.0),
            x.at[idx].max(v), x.at[idx].multiply(2.0), x.at[idx].subtract(v))


def test_scatter_with_repeated_indices(numba_backend):
    x = np.arange(12, dtype=np.float32).reshape(4, 3) / 7
    idx = np.array([0, -1, 2, 0], np.int32)
    v = np.arange(3, dtype=np.float32)
    got, compiled = _run(scatters, x, idx, v)
    assert compiled.backend == "numba", compiled.fallback_reason

    def at(ufunc, index, values):
        out = x.copy()
        ufunc.at(out, index, values)
        return out
    set_ = x.copy()
    set_[:, idx] = 5.0
    expected = (at(np.add, idx, v), at(np.add, (idx, 1), 1.0), set_, at(np.maximum, idx, v),
                at(np.multiply, idx, 2.0), at(np.subtract, idx, v))
    _check(got, expected, 1e-6, 1e-6)


# --- jit(grad(...)) through the new lowerings ---------------------------------------------------

def contractions_loss(a, b, m, idx):
    return (jnp.sum(jnp.tanh(jnp.einsum("bij,jk->bik", a, b)))
            + jnp.sum(jnp.einsum("ii,ij->j", m, m) ** 2)  # a diagonal
            + jnp.sum(jnp.einsum("ij,jk->i", m, b[:3]) ** 2)  # k summed in one operand
            + jnp.sum(jnp.sin(a @ b[None]))
            + jnp.sum(jnp.cos(m[idx] * 2.0)) + jnp.sum(m[:, idx[:2]] ** 2))


def test_jit_grad_through_einsum_matmul_and_gather(numba_backend):
    a, b, m = _normal(2, 3, 4), _normal(4, 5), _normal(3, 3)
    idx = np.array([0, -1, 2, 0], np.int32)
    grad = astjax.grad(contractions_loss, argnums=(0, 1, 2))
    got, compiled = _run(grad, a, b, m, idx)
    assert compiled.backend == "numba", compiled.fallback_reason
    astjax.config.update("astjax_jit_backend", "python")
    expected = astjax.jit(grad)(a, b, m, idx)
    _check(got, expected, 1e-5, 1e-5)
    # and the python backend's against central differences of the loss, in float64
    x64 = [np.asarray(t, np.float64) for t in (a, b, m)]
    for k, x in enumerate(x64):
        direction = _RNG.standard_normal(x.shape)
        eps = 1e-3
        plus = [t + eps * direction if j == k else t for j, t in enumerate(x64)]
        minus = [t - eps * direction if j == k else t for j, t in enumerate(x64)]
        fd = (float(_loss64(*plus, idx)) - float(_loss64(*minus, idx))) / (2 * eps)
        assert np.isclose(float(np.sum(np.asarray(expected[k]) * direction)), fd, rtol=1e-2,
                          atol=1e-2)


def _loss64(a, b, m, idx):
    return (np.sum(np.tanh(np.einsum("bij,jk->bik", a, b)))
            + np.sum(np.einsum("ii,ij->j", m, m) ** 2)
            + np.sum(np.einsum("ij,jk->i", m, b[:3]) ** 2) + np.sum(np.sin(a @ b[None]))
            + np.sum(np.cos(m[idx] * 2.0)) + np.sum(m[:, idx[:2]] ** 2))


# --- joins of a tuple held in a variable, reshapes of a 0-d value ----------------------------

def joins(x, s, n):
    parts = (x, x * 2.0, jnp.sin(x))  # a variable: the lowering indexes it
    rows, sums, wide = [], [], []
    for i in range(n):  # lists built by append
        rows.append(x * i)
        sums.append(jnp.sum(x) * i)
        wide.append(x[:, None] * x[:i + 1])  # (3, i + 1)
    return (jnp.concatenate(parts), jnp.stack(parts, axis=1), jnp.ravel(s),
            jnp.reshape(s, (1, -1)), jnp.array(rows), jnp.stack(rows, axis=1),
            jnp.array(sums), jnp.moveaxis(jnp.array(rows), 0, -1), jnp.concatenate(rows),
            jnp.concatenate(wide, axis=-1), jnp.concatenate(wide, axis=None))


def joined_pair(x, y):
    xs = [x]
    xs.append(y)
    return jnp.concatenate(xs, axis=1)


def test_joins_lists_and_scalar_reshapes(numba_backend):
    x, s = _normal(3), np.float32(2.0)
    got, compiled = _run(joins, x, s, 4)
    assert compiled.backend == "numba", compiled.fallback_reason
    parts = (x, x * np.float32(2.0), np.sin(x))
    rows = [x * np.float32(i) for i in range(4)]
    sums = np.array([np.sum(x) * np.float32(i) for i in range(4)], np.float32)
    wide = [np.outer(x, x[:i + 1]) for i in range(4)]
    _check(got, (np.concatenate(parts), np.stack(parts, axis=1), np.ravel(s),
                 np.reshape(s, (1, -1)), np.array(rows), np.stack(rows, axis=1), sums,
                 np.moveaxis(np.array(rows), 0, -1), np.concatenate(rows),
                 np.concatenate(wide, axis=-1), np.concatenate(wide, axis=None)))
    with pytest.raises(ValueError, match="at least one array"):  # NumPy's error, located
        astjax.jit(joins)(x, s, 0)
    a, b = _normal(2, 2), _normal(2, 3)
    got, compiled = _run(joined_pair, a, b)
    assert compiled.backend == "numba", compiled.fallback_reason
    _check([got], [np.concatenate([a, b], axis=1)])
    with pytest.raises(ValueError, match=r"test_numba_lowerings.py:\d+: all the input array "
                                         r"dimensions except for the concatenation axis"):
        astjax.jit(joined_pair)(a, _normal(3, 2))  # NumPy's error, located


# --- flip, atleast_nd -------------------------------------------------------------------------

def flips(x, v, s):
    return (jnp.flip(x), jnp.flip(x, 1), jnp.flip(x, -1), jnp.flip(x, (0, 2)), jnp.flip(x, ()),
            jnp.flip(v) * 2.0, jnp.flip(s), jnp.reshape(jnp.flip(x, 0), (-1,)),
            jnp.atleast_1d(s), jnp.atleast_1d(jnp.sum(v)) + 1.0, jnp.atleast_2d(v),
            jnp.atleast_3d(v), jnp.atleast_3d(x[0]), jnp.atleast_2d(x), jnp.atleast_1d(2),
            jnp.atleast_3d(s, v, 2.0))


def test_flip_and_atleast_nd(numba_backend):
    x, v, s = _normal(2, 3, 4), _normal(5), np.float32(1.5)
    got, compiled = _run(flips, x, v, s)
    assert compiled.backend == "numba", compiled.fallback_reason
    _check(got[:-1], (np.flip(x), np.flip(x, 1), np.flip(x, -1), np.flip(x, (0, 2)), x,
                      np.flip(v) * np.float32(2), np.asarray(s), np.flip(x, 0).ravel(),
                      np.atleast_1d(s), np.atleast_1d(np.sum(v) + np.float32(1)),
                      np.atleast_2d(v), np.atleast_3d(v), np.atleast_3d(x[0]), x,
                      np.array([2], np.int32)), 0, 0)
    _check(got[-1], (np.full((1, 1, 1), s), np.atleast_3d(v), np.full((1, 1, 1), 2, np.float32)),
           0, 0)


def prod_cumsum_loss(x, m):
    # prod's and cumsum's derivative rules reverse with flip
    return jnp.prod(x) + jnp.sum(jnp.cumsum(x) ** 2) + jnp.sum(jnp.prod(m, axis=1))


def test_jit_grad_through_flip(numba_backend):
    x, m = np.linspace(0.5, 1.5, 5).astype(np.float32), _normal(3, 4)
    got, compiled = _run(astjax.grad(prod_cumsum_loss, argnums=(0, 1)), x, m)
    assert compiled.backend == "numba", compiled.fallback_reason
    dx = np.prod(x) / x + 2 * np.cumsum(np.cumsum(x)[::-1])[::-1]
    dm = np.prod(m, axis=1, keepdims=True) / m
    _check(got, (dx.astype(np.float32), dm), 1e-5, 1e-5)


# --- x.at[basic index].min / max / multiply ----------------------------------------------------

def basic_updates(x, i, v, s):
    return (x.at[1].min(0.0), x.at[1].max(s), x.at[:, 1:].min(v[1:]), x.at[0, i].max(-1.0),
            x.at[i].mul(3.0), x.at[..., 0].multiply(s), x.at[-1].min(v),
            x.astype(jnp.int32).at[0].max(2), x.astype(jnp.int32).at[1, :2].min(-1))


def test_at_min_max_with_basic_indices(numba_backend):
    x, v, s = _normal(2, 3), _normal(3), np.float32(0.25)
    x[0, 2] = np.nan
    v[2] = np.nan  # NaN wins, in either place (NumPy's minimum/maximum, and JAX's)
    got, compiled = _run(basic_updates, x, -1, v, s)
    assert compiled.backend == "numba", compiled.fallback_reason

    def put(index, fn, values, a=x):
        out = a.copy()
        out[index] = fn(out[index], values)
        return out
    xi = np.nan_to_num(x).astype(np.int32)  # NaN as int32: JAX makes it 0
    _check(got[:7], (put(1, np.minimum, np.float32(0)), put(1, np.maximum, s),
                     put((slice(None), slice(1, None)), np.minimum, v[1:]),
                     put((0, -1), np.maximum, np.float32(-1)), put(-1, np.multiply, 3),
                     put((Ellipsis, 0), np.multiply, s), put(-1, np.minimum, v)), 0, 0)
    _check(got[7:], (put(0, np.maximum, 2, xi), put((1, slice(None, 2)), np.minimum, -1, xi)),
           0, 0)


# --- constant arrays, arrays and stacks of 0-d values -------------------------------------------

def built(x, s, k):
    t = jnp.sum(x)
    row = [s, t]  # a list held in a variable
    return (x * jnp.array([1.0, 2.0, 3.0]), jnp.array([[1, 2, 3], [4, 5, 6]]) * k,
            jnp.asarray((1.5, -2.5), dtype=jnp.int32), jnp.array([True, False]),
            jnp.array([[0.5], [jnp.inf]]), jnp.array([1, 2.5], ndmin=2),
            jnp.stack([t, jnp.max(x)]), jnp.stack((s, t * 2.0), axis=-1), jnp.array(row),
            jnp.array([[s, 1.0], [t, s * t]]), jnp.array([s, k]), jnp.array([k, 1]),
            jnp.asarray([s, t], dtype=jnp.int32), jnp.array([x, x * 2.0]))


def test_constant_arrays_and_arrays_of_scalars(numba_backend):
    x, s, k = _normal(3), np.float32(2.5), 3
    got, compiled = _run(built, x, s, k)
    assert compiled.backend == "numba", compiled.fallback_reason
    t = np.sum(x)
    f32 = np.float32
    _check(got, (x * np.array([1, 2, 3], f32), np.array([[1, 2, 3], [4, 5, 6]], np.int32) * 3,
                 np.array([1, -2], np.int32), np.array([True, False]),
                 np.array([[0.5], [np.inf]], f32),
                 np.array([[1, 2.5]], f32), np.array([t, np.max(x)]),
                 np.array([s, t * 2]), np.array([s, t]), np.array([[s, 1], [t, s * t]], f32),
                 np.array([s, k], f32), np.array([k, 1], np.int32),
                 np.array([s, t]).astype(np.int32), np.stack([x, x * 2])), 1e-6, 1e-6)
    got, compiled = _run(lambda x: x + jnp.array([]), x[:0])  # Numba cannot type []
    assert compiled.backend == "python" and "jnp.array([])" in compiled.fallback_reason
    assert got.shape == (0,) and got.dtype == np.float32


def folded(key, x):
    # fold_in stacks two 0-d words into a key
    return random.normal(random.fold_in(key, 3), x.shape) + x


def test_fold_in_bit_identical_to_the_python_backend(numba_backend):
    key, x = random.PRNGKey(7), _normal(5)
    got, compiled = _run(folded, key, x)
    assert compiled.backend == "numba", compiled.fallback_reason
    astjax.config.update("astjax_jit_backend", "python")
    np.testing.assert_array_equal(np.asarray(got), np.asarray(astjax.jit(folded)(key, x)))


def unsigned_sign_and_transpose_varargs(u8, u32, x):
    return jnp.sign(u8), jnp.sign(u32), x.transpose(1, 0, 2), x.transpose(2, 0, 1) * 2.0


def test_unsigned_sign_and_transpose_with_axes_as_arguments(numba_backend):
    """Found by fuzzing against JAX: np.sign of a uint8 scalar in Numba gave 255 for 200
    (read as negative); x.transpose(1, 0, 2) raised a raw TypeError."""
    u8 = np.array([0, 1, 2, 200, 255], np.uint8)
    u32 = np.array([0, 3, 2 ** 31 + 5, 2 ** 32 - 1], np.uint32)
    x = _normal(2, 3, 4)
    got, compiled = _run(unsigned_sign_and_transpose_varargs, u8, u32, x)
    assert compiled.backend == "numba", compiled.fallback_reason
    _check(got, (np.sign(u8), np.sign(u32), x.transpose(1, 0, 2), x.transpose(2, 0, 1) * 2.0))
    assert got[0].dtype == np.uint8 and got[1].dtype == np.uint32


def _measured_sum(a, b):
    return (a[:, None] + b[:, None]).shape  # the sum is only measured


def test_an_elementwise_result_only_measured_still_checks_sizes(numba_backend):
    # its shape was read from an operand and the sum dropped, size check and all: (2, 1)
    # for operands of sizes 2 and 3, where NumPy raises
    jitted = astjax.jit(_measured_sum)
    assert tuple(int(n) for n in jitted(np.ones(2, np.float32), np.ones(2, np.float32))) \
        == (2, 1)
    with pytest.raises(ValueError, match="could not be broadcast"):
        jitted(np.ones(2, np.float32), np.ones(3, np.float32))


# --- reshape's argument forms, cumsum of the flattened array, outer, diag, linspace ----------

def shapes_and_builders(x, n):
    return (x.reshape(4, 3), x.reshape(n, -1), x.reshape(2, 3, 2, "C"), x.reshape(n),
            jnp.reshape(x, (x.shape[0] * 2, 2, x.shape[1] // 4)),  # int32 and int64 entries
            jnp.cumsum(x), jnp.cumprod(x[:2] * 0.5), jnp.cumsum(x > 0),
            jnp.outer(x[0], x[1]), jnp.outer(x[:2], jnp.arange(3)),
            jnp.diag(x), jnp.diag(x, 1), jnp.diag(x[0], -1),
            jnp.linspace(-1.0, 2.0, 7), jnp.linspace(0, x[0, 0], 5, endpoint=False),
            jnp.linspace(1.0, 2.0, 1), jnp.linspace(0, 10, 4, dtype=jnp.int32))


def test_reshape_arguments_flat_cumsum_outer_diag_linspace(numba_backend):
    x = np.arange(12.0, dtype=np.float32).reshape(3, 4) - 4
    got, compiled = _run(shapes_and_builders, x, 12)
    assert compiled.backend == "numba", compiled.fallback_reason
    f32 = np.float32
    _check(got, (x.reshape(4, 3), x.reshape(12, -1), x.reshape(2, 3, 2), x.reshape(12),
                 x.reshape(6, 2, 1), np.cumsum(x), np.cumprod(x[:2] * f32(0.5)),
                 np.cumsum(x > 0).astype(np.int32), np.outer(x[0], x[1]),
                 np.outer(x[:2], np.arange(3, dtype=f32)), np.diag(x), np.diag(x, 1),
                 np.diag(x[0], -1), np.linspace(-1, 2, 7, dtype=f32),
                 np.linspace(0, -4, 5, endpoint=False, dtype=f32), np.array([1], f32),
                 np.linspace(0, 10, 4, dtype=np.int32)), 0, 0)


# --- var, std, count_nonzero ------------------------------------------------------------------

def variances(x, i):
    return (jnp.var(x), jnp.std(x, axis=1), jnp.var(x, axis=(0, 2), keepdims=True),
            jnp.std(x[0], ddof=1), x.var(axis=-1, ddof=5), jnp.var(i),
            jnp.std(i, axis=0, dtype=jnp.float32), jnp.var(x[:, :0], axis=1),
            jnp.count_nonzero(x > 0), jnp.count_nonzero(x > 0, axis=1),
            jnp.count_nonzero(i, axis=(0,), keepdims=True), jnp.count_nonzero(x[:, :0], axis=1))


def test_var_std_and_count_nonzero(numba_backend):
    x, i = _normal(3, 4, 5), np.arange(6, dtype=np.int32).reshape(2, 3)
    got, compiled = _run(variances, x, i)
    assert compiled.backend == "numba", compiled.fallback_reason
    with np.errstate(invalid="ignore", divide="ignore"):
        expected = (np.var(x), np.std(x, axis=1), np.var(x, axis=(0, 2), keepdims=True),
                    np.std(x[0], ddof=1), np.full((3, 4), np.nan, np.float32),
                    np.float32(np.var(i)), np.std(i, axis=0).astype(np.float32),
                    np.full((3, 5), np.nan, np.float32),
                    np.int32(np.count_nonzero(x > 0)),
                    np.count_nonzero(x > 0, axis=1).astype(np.int32),
                    np.count_nonzero(i, axis=0, keepdims=True).astype(np.int32),
                    np.zeros((3, 5), np.int32))
    _check(got, expected)


# --- split, array_split, hstack, vstack ------------------------------------------------------

def splits_and_stacks(x, i):
    a, b = jnp.split(x, [1], axis=0)
    return (a, b, *jnp.split(x, 3, axis=1), *jnp.array_split(x, 4, axis=1),
            *jnp.split(x[0], [-2, 2]), jnp.hstack([x, x]), jnp.hstack((x[0], i)),
            jnp.vstack([x[0], x]), jnp.vstack((i, x[1, :3])),
            jnp.hstack([x[0, 1], x[1, 1], 2.0]), jnp.hstack((x[0], x[1, 1], i[2])),
            jnp.vstack([x[0, 0], x[1, 1]]))  # 0-d items


def test_split_array_split_hstack_vstack(numba_backend):
    x, i = np.arange(24.0, dtype=np.float32).reshape(4, 6), np.arange(3, dtype=np.int32)
    got, compiled = _run(splits_and_stacks, x, i)
    assert compiled.backend == "numba", compiled.fallback_reason
    i32 = i.astype(np.float32)
    _check(got, (*np.split(x, [1]), *np.split(x, 3, axis=1), *np.array_split(x, 4, axis=1),
                 *np.split(x[0], [-2, 2]), np.hstack([x, x]), np.hstack((x[0], i32)),
                 np.vstack([x[0], x]), np.vstack((i32, x[1, :3])),
                 np.array([x[0, 1], x[1, 1], 2], np.float32),
                 np.hstack((x[0], x[1, 1], 2)).astype(np.float32),
                 np.array([[x[0, 0]], [x[1, 1]]])), 0, 0)
    with pytest.raises(ValueError, match=r"test_numba_lowerings.py:\d+: array split does not "
                                         r"result in an equal division"):
        astjax.jit(splits_and_stacks)(x[:, :5], i)  # NumPy's error, located


def rolls(x, s):
    return (jnp.roll(x, 2), jnp.roll(x, -1, axis=1), jnp.roll(x, s, axis=0),
            jnp.roll(x, (1, -8), axis=(0, 1)), jnp.roll(x[0], 13), jnp.roll(x[:0], 2, 0),
            jnp.roll(x > 3, s), jnp.roll(x, (1, 2), (1, -1)))  # a repeated axis: 3 along 1


def test_roll(numba_backend):
    x = np.arange(24.0, dtype=np.float32).reshape(4, 6)
    got, compiled = _run(rolls, x, np.int32(-3))
    assert compiled.backend == "numba", compiled.fallback_reason
    _check(got, (np.roll(x, 2), np.roll(x, -1, axis=1), np.roll(x, -3, axis=0),
                 np.roll(x, (1, -8), axis=(0, 1)), np.roll(x[0], 13), x[:0],
                 np.roll(x > 3, -3), np.roll(x, 3, 1)), 0, 0)


def ldexps(x, n):
    return jnp.ldexp(x, n), jnp.ldexp(x, 3), jnp.ldexp(2.0, n) * x, jnp.ldexp(n, n > 0)


def test_ldexp_fuses_into_loops(numba_backend):
    x = np.array([1.5, -3.0, 0.0, 1e-38, 3e38, np.inf, np.nan, 0.75], np.float32)
    n = np.array([1, -2, 5, -10, 1, 3, 0, 200], np.int32)
    got, compiled = _run(ldexps, x, n)
    assert compiled.backend == "numba", compiled.fallback_reason
    with np.errstate(over="ignore"):
        _check(got, (np.ldexp(x, n), np.ldexp(x, 3), np.ldexp(np.float32(2), n) * x,
                     np.ldexp(n.astype(np.float32), (n > 0).astype(np.int32))), 0, 0)


def run_time_lists(x):
    return [x[i] * i for i in range(3)], [x[:2] * i for i in range(2)]


def test_lists_built_at_run_time_come_back_as_arrays_of_their_dtype(numba_backend):
    x = np.arange(4, dtype=np.float32) + np.float32(0.1)
    (scalars, rows), compiled = _run(run_time_lists, x)
    assert compiled.backend == "numba", compiled.fallback_reason
    for got, expected in zip(scalars + rows, [x[i] * np.float32(i) for i in range(3)] +
                             [x[:2] * np.float32(i) for i in range(2)]):
        assert isinstance(got, astjax.Array) and got.dtype == np.float32  # not a Python float
        np.testing.assert_array_equal(np.asarray(got), expected)


def nans_to_nums(x, i):
    return (jnp.nan_to_num(x), jnp.nan_to_num(x * 2, nan=-1.0, posinf=9.0, neginf=-9.0),
            jnp.nan_to_num(i), jnp.sum(jnp.nan_to_num(x, posinf=0.0, neginf=0.0)))


def test_nan_to_num_fuses_into_loops(numba_backend):
    x = np.array([1.5, -np.inf, np.nan, np.inf, 0.0, -2.0], np.float32)
    i = np.arange(3, dtype=np.int32)
    got, compiled = _run(nans_to_nums, x, i)
    assert compiled.backend == "numba", compiled.fallback_reason
    _check(got, (np.nan_to_num(x), np.nan_to_num(x * 2, nan=-1.0, posinf=9.0, neginf=-9.0), i,
                 np.float32(-0.5)), 0, 0)


def swaps_traces_inners(x, t, i):
    return (jnp.swapaxes(t, 0, 2), x.swapaxes(1, 0), jnp.trace(x), jnp.trace(x, 1),
            jnp.trace(x, -2), jnp.trace(i), jnp.trace(x, 7), jnp.inner(x[0], x[1]),
            jnp.inner(x, x), jnp.inner(t, x), jnp.inner(i, i[0]), jnp.inner(x, i),
            jnp.trace(t, axis1=1, axis2=2), jnp.trace(t, 1, 2, 0), jnp.trace(x, 1, 1, 0))


def test_swapaxes_trace_inner(numba_backend):
    x, t, i = _normal(3, 4), _normal(2, 3, 4), np.arange(12, dtype=np.int32).reshape(3, 4)
    got, compiled = _run(swaps_traces_inners, x, t, i)
    assert compiled.backend == "numba", compiled.fallback_reason
    _check(got, (np.swapaxes(t, 0, 2), x.T, np.trace(x), np.trace(x, 1), np.trace(x, -2),
                 np.int32(np.trace(i)), np.float32(0), np.inner(x[0], x[1]), np.inner(x, x),
                 np.inner(t, x), np.inner(i, i[0]), np.inner(x, i.astype(np.float32)),
                 np.trace(t, axis1=1, axis2=2), np.trace(t, 1, 2, 0), np.trace(x, 1, 1, 0)))


def scalar_dims_and_vector_solve(m, s):
    return (m[0, 0][..., None], s[None, None] * 2, s[...],  # a 0-d value is a scalar here
            solve_triangular(m, m[0], lower=True))  # a dot of vectors into a (1,) result


def test_indexing_a_scalar_with_none_and_a_triangular_solve_of_a_vector(numba_backend):
    m = np.tril(_normal(4, 4)) + np.float32(4) * np.eye(4, dtype=np.float32)
    got, compiled = _run(scalar_dims_and_vector_solve, m, np.float32(1.5))
    assert compiled.backend == "numba", compiled.fallback_reason
    _check(got, (m[0, :1], np.full((1, 1), 3, np.float32), np.float32(1.5),
                 np.linalg.solve(m, m[0])))


def tiles_and_repeats(x, s):
    return (jnp.tile(x[0], 2), jnp.tile(x, (2, 1)), jnp.tile(x, (2, 1, 3)), jnp.tile(s, 3),
            jnp.tile(x[0] > 1, (2, 2)), jnp.repeat(x[0], 2), jnp.repeat(x, 2, axis=1),
            jnp.repeat(x, 3), jnp.repeat(x, 0, axis=-1))


def test_tile_and_repeat(numba_backend):
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    got, compiled = _run(tiles_and_repeats, x, np.float32(2))
    assert compiled.backend == "numba", compiled.fallback_reason
    _check(got, (np.tile(x[0], 2), np.tile(x, (2, 1)), np.tile(x, (2, 1, 3)),
                 np.full(3, 2, np.float32), np.tile(x[0] > 1, (2, 2)), np.repeat(x[0], 2),
                 np.repeat(x, 2, axis=1), np.repeat(x, 3), np.repeat(x, 0, axis=-1)), 0, 0)


def vdots(x, i):
    return jnp.vdot(x, x), jnp.vdot(x[0], i[:3]), jnp.vdot(i, i), jnp.vdot(x + 1j * x, x * 2j)


def test_vdot(numba_backend):
    x, i = np.arange(6, dtype=np.float32).reshape(2, 3) - 2, np.arange(6, dtype=np.int32)
    got, compiled = _run(vdots, x, i)
    assert compiled.backend == "numba", compiled.fallback_reason
    z = (x + 1j * x).astype(np.complex64)
    _check(got, (np.vdot(x, x), np.vdot(x[0], i[:3].astype(np.float32)), np.int32(np.vdot(i, i)),
                 np.vdot(z, (x * 2j).astype(np.complex64))), 0, 0)


def tris(k, n):
    return jnp.tri(3), jnp.tri(3, 4, 1), jnp.tri(n, 2, -1, dtype=jnp.int32) * 2, jnp.tri(2, k=k)


def test_tri(numba_backend):
    got, compiled = _run(tris, np.int32(1), np.int32(4))
    assert compiled.backend == "numba", compiled.fallback_reason
    _check(got, (np.tri(3, dtype=np.float32), np.tri(3, 4, 1, dtype=np.float32),
                 np.tri(4, 2, -1, dtype=np.int32) * 2, np.tri(2, k=1, dtype=np.float32)), 0, 0)


def _updates_of_a_scalar(x, v):
    s = x.sum()
    return (s.at[()].set(v), s.at[...].add(v), s.at[()].multiply(v), s.at[()].min(v),
            s.at[()].max(jnp.float32(np.nan)), s.at[None].add(jnp.ones(1)), s.at[()].divide(v))


def test_at_updates_of_a_0d_array(numba_backend):
    """x.at[()] / x.at[...] of a 0-d x (a scalar getitem's cotangent, as in the gradient of
    a Gaussian process's length scale) fell back to the python backend ("x.at on a
    scalar"). Values against NumPy."""
    got, compiled = _run(_updates_of_a_scalar, np.float32([1.0, 2.0]), np.float32(5.0))
    assert compiled.backend == "numba", compiled.fallback_reason
    _check(got, tuple(np.float32(v) for v in (5.0, 8.0, 15.0, 3.0, np.nan, 4.0, 0.6)))
