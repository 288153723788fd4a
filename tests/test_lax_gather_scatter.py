"""lax.gather and the lax.scatter family with the dimension numbers jnp indexing produces
(x[i], x[:, i], x[i, :, j], vmap's batching dimensions) and with windows, in every mode,
against NumPy indexing and JAX 0.10.2's values (literals from a JAX run), eagerly and under
jit (python backend), with gradients against finite differences and vmap; one small Numba
program."""
import numpy as np
import pytest

import astjax
import astjax.numpy as jnp
from astjax import lax
from astjax.test_util import check_grads

from .op_checks import both

G, S = lax.GatherDimensionNumbers, lax.ScatterDimensionNumbers
X = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
RNG = np.random.default_rng(0)


def assert_both(fn, args, want):
    want = np.asarray(want)
    for got in both(fn, *args):
        assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, got.dtype)
        np.testing.assert_allclose(got, want)


# --- gather ----------------------------------------------------------------------------------

# (name, indices, dimension numbers, slice sizes, what NumPy indexing gives), the dimension
# numbers as jax.make_jaxpr shows them for that jnp indexing
JNP_GATHERS = [
    ("x[i]", np.int32([1, 0, 1, 1])[:, None], G((1, 2), (0,), (0,)), (1, 3, 4),
     X[[1, 0, 1, 1]]),
    ("x[:, i]", np.int32([2, 0, 1])[:, None], G((0, 2), (1,), (1,)), (2, 1, 4), X[:, [2, 0, 1]]),
    ("x[:, :, i2]", np.int32([[1, 0], [3, 3]])[..., None], G((0, 1), (2,), (2,)), (2, 3, 1),
     X[:, :, np.int32([[1, 0], [3, 3]])]),
    ("x[i, :, j]", np.int32([[1, 3], [0, 0], [1, 2]]), G((1,), (0, 2), (0, 2)), (1, 3, 1),
     X[[1, 0, 1], :, [3, 0, 2]]),
    ("vmap(r[i])", np.int32([[1, 2], [0, 0]])[..., None], G((2,), (1,), (1,), (0,), (0,)),
     (1, 1, 4), np.stack([X[0][[1, 2]], X[1][[0, 0]]])),
]


@pytest.mark.parametrize("case", range(len(JNP_GATHERS)), ids=[c[0] for c in JNP_GATHERS])
def test_gather_as_jnp_indexing(case):
    _, idx, dn, sizes, want = JNP_GATHERS[case]
    assert_both(lambda x, i: lax.gather(x, i, dn, sizes), (X, idx), want)


WINDOWS = np.int32([[0, 1], [2, 1], [-1, 0], [1, 3]])  # the 2nd to 4th out of bounds
# JAX: the (2, 3) windows of X[0] at those starts, clamped into bounds
_CLAMPED = [[[1, 2, 3], [5, 6, 7]], [[5, 6, 7], [9, 10, 11]], [[0, 1, 2], [4, 5, 6]],
            [[5, 6, 7], [9, 10, 11]]]


def gather_windows(x, i):
    return (lax.gather(x, i, G((1, 2), (0,), (1, 2)), (1, 2, 3)),  # promise_in_bounds
            lax.gather(x, i, G((1, 2), (0,), (1, 2)), (1, 2, 3), mode="clip"),
            lax.gather(x, i, G((1, 2), (0,), (1, 2)), (1, 2, 3), mode="fill"),
            lax.gather(x, i, G((1, 2), (0,), (1, 2)), (1, 2, 3),
                       mode=lax.GatherScatterMode.FILL_OR_DROP, fill_value=-1.0))


def test_gather_windows_and_modes():
    filled = np.float32(_CLAMPED)
    filled[1:] = np.nan
    minus_one = np.where(np.isnan(filled), -1, filled)
    for got in both(lambda x, i: gather_windows(x, i), X, WINDOWS):
        np.testing.assert_allclose(got[0], _CLAMPED)
        np.testing.assert_allclose(got[1], _CLAMPED)
        np.testing.assert_allclose(got[2], filled)
        np.testing.assert_allclose(got[3], minus_one)
    # JAX: an integer operand fills with its minimum
    got = lax.gather(X.astype(np.int32), np.int32([[5], [1]]), G((1, 2), (0,), (0,)),
                     (1, 3, 4), mode="fill")
    np.testing.assert_array_equal(got[0], np.full((3, 4), -2 ** 31))
    np.testing.assert_array_equal(got[1], X[1])
    # JAX: offset dimension first: [[12, 8], [13, 9], [14, 10]]
    assert_both(lambda x, i: lax.gather(x, i, G((0,), (0, 1), (0, 1)), (1, 1, 3), mode="clip"),
                (X, np.int32([[1, 0], [0, 2]])), np.float32([[12, 8], [13, 9], [14, 10]]))


def gather_rows(x, i):
    return lax.gather(x, i, G((1,), (0,), (0,)), (1, 4), mode="fill", fill_value=0.0)


def test_gather_grad_and_vmap():
    x = RNG.standard_normal((3, 4)).astype(np.float32)
    i = np.int32([[2], [0], [5], [2]])
    check_grads(lambda x: jnp.sum(jnp.sin(gather_rows(x, i))), (x,), order=1, modes=("rev",),
                atol=1e-2, rtol=1e-2)
    g = astjax.jit(astjax.grad(lambda x: jnp.sum(gather_rows(x, i))))(x)
    np.testing.assert_allclose(g, [[1] * 4, [0] * 4, [2] * 4])  # row 2 twice, 5 filled
    got = astjax.vmap(lambda r, k: lax.gather(r, k, G((), (0,), (0,)), (1,)))(
        x, np.int32([[1], [0], [3]]))
    np.testing.assert_allclose(got, x[[0, 1, 2], [1, 0, 3]])


# --- scatter ---------------------------------------------------------------------------------

ROWS = np.int32([[2], [0], [5], [2]])  # row 5 is out of bounds, row 2 twice
ROW_DN = S((1,), (0,), (0,))  # x.at[i] for rows i
UPD = np.arange(16, dtype=np.float32).reshape(4, 4)


def scatter_rows(x, i, u):
    return (lax.scatter(x, i, u, ROW_DN), lax.scatter_add(x, i, u, ROW_DN),
            lax.scatter_sub(x, i, u, ROW_DN), lax.scatter_mul(x, i, u, ROW_DN),
            lax.scatter_min(x, i, u, ROW_DN), lax.scatter_max(x, i, u, ROW_DN),
            lax.scatter_add(x, i, u, ROW_DN, mode="clip"))


def test_scatter_family_as_at_updates():
    x = np.ones((3, 4), np.float32)
    valid = ROWS[[0, 1, 3], 0]
    add = x.copy()
    np.add.at(add, valid, UPD[[0, 1, 3]])
    sub = x.copy()
    np.subtract.at(sub, valid, UPD[[0, 1, 3]])
    mul = x.copy()
    np.multiply.at(mul, valid, UPD[[0, 1, 3]])
    low = x.copy()
    np.minimum.at(low, valid, UPD[[0, 1, 3]])
    high = x.copy()
    np.maximum.at(high, valid, UPD[[0, 1, 3]])
    setting = x.copy()
    setting[valid] = UPD[[0, 1, 3]]  # the last of the repeated row wins
    clipped = x.copy()
    np.add.at(clipped, np.minimum(ROWS[:, 0], 2), UPD)
    for got in both(scatter_rows, x, ROWS, UPD):
        for g, w in zip(got, (setting, add, sub, mul, low, high, clipped)):
            np.testing.assert_allclose(g, w)


def scatter_windows(x, i, u):
    dn = S((1, 2), (0,), (1, 2))
    return lax.scatter_add(x, i, u, dn), lax.scatter_add(x, i, u, dn, mode="clip")


def test_scatter_windows_batching_and_apply():
    u = np.arange(18, dtype=np.float32).reshape(3, 2, 3)
    i = np.int32([[0, 1], [1, 2], [-1, 0]])
    # JAX: out-of-bounds windows dropped; clamped into bounds
    dropped = np.zeros((2, 3, 4), np.float32)
    dropped[0, :2] = [[0, 0, 1, 2], [0, 3, 4, 5]]
    clamped = np.zeros((2, 3, 4), np.float32)
    clamped[0] = [[12, 13, 15, 2], [15, 25, 28, 13], [0, 9, 10, 11]]
    for got in both(scatter_windows, np.zeros((2, 3, 4), np.float32), i, u):
        np.testing.assert_allclose(got[0], dropped)
        np.testing.assert_allclose(got[1], clamped)
    # vmap's batching dimensions (JAX: [[0, 2, 0], [3, 0, 4]])
    assert_both(lambda x, i, u: lax.scatter(x, i, u, S((), (1,), (1,), (0,), (0,))),
                (np.zeros((2, 3), np.float32), np.int32([[[1], [1]], [[0], [2]]]),
                 np.float32([[1, 2], [3, 4]])), np.float32([[0, 2, 0], [3, 0, 4]]))
    # func once per window holding the element (JAX: row 2, hit twice, is (0 * 2 + 1) * 2 + 1)
    assert_both(lambda x, i: lax.scatter_apply(x, i, lambda v: v * 2 + 1, ROW_DN,
                                               update_shape=(4, 4)),
                (np.zeros((3, 4), np.float32), ROWS),
                np.float32([[1] * 4, [0] * 4, [3] * 4]))


def test_scatter_grad_and_vmap():
    x = RNG.standard_normal((3, 4)).astype(np.float32)
    u = RNG.standard_normal((4, 4)).astype(np.float32)
    for fn in (lax.scatter_add, lax.scatter_mul, lax.scatter):
        check_grads(lambda x, u: jnp.sum(jnp.sin(fn(x, ROWS[:3], u[:3], ROW_DN))), (x, u),
                    order=1, modes=("rev",), atol=1e-2, rtol=1e-2)
    g = astjax.jit(astjax.grad(lambda u: jnp.sum(lax.scatter_add(x, ROWS, u, ROW_DN)), ))(u)
    np.testing.assert_allclose(g, [[1] * 4, [1] * 4, [0] * 4, [1] * 4])  # row 5 dropped
    got = astjax.vmap(lambda r, k: lax.scatter_add(r, k, jnp.float32(10), S((), (0,), (0,))))(
        x, np.int32([[1], [0], [3]]))
    want = x.copy()
    want[[0, 1, 2], [1, 0, 3]] += 10
    np.testing.assert_allclose(got, want)


# --- errors ----------------------------------------------------------------------------------

def gather_one_hot(x, i):
    return lax.gather(x, i, G((1,), (0,), (0,)), (1, 4), mode="one_hot")


def test_errors():
    x, i = np.ones((3, 4), np.float32), np.int32([[0]])
    with pytest.raises(NotImplementedError, match=r"test_lax_gather_scatter.py:\d+:\d+: "
                                                  r"gather: mode=one_hot is not supported"):
        astjax.jit(gather_one_hot)(x, i)
    with pytest.raises(ValueError, match='Unknown gather mode "wrap"'):
        lax.gather(x, i, G((1,), (0,), (0,)), (1, 4), mode="wrap")
    with pytest.raises(TypeError, match="one slice size for every input dimension"):
        lax.gather(x, i, G((1,), (0,), (0,)), (1,))
    with pytest.raises(TypeError, match="can only collapse slice dims with bound 1"):
        lax.gather(x, i, G((1,), (0,), (0,)), (2, 4))
    with pytest.raises(TypeError, match="index vectors .* have 2 entries, but the dimension "
                                        "numbers map 1"):
        lax.gather(x, np.int32([[0, 1]]), G((1,), (0,), (0,)), (1, 4))
    with pytest.raises(TypeError, match="scatter_add: the index vectors"):
        lax.scatter_add(x, np.int32([[0, 1]]), np.ones((1, 4), np.float32), ROW_DN)
    with pytest.raises(TypeError, match="update_window_dims"):
        lax.scatter_add(x, i, np.ones((1, 4, 1), np.float32), ROW_DN)


# --- Numba -----------------------------------------------------------------------------------

def _numba_program(x, i, u):
    return lax.gather(x, i, G((1,), (0,), (0,)), (1, 4)), lax.scatter_add(x, i, u, ROW_DN)


def test_numba(numba_backend):
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    jitted = astjax.jit(_numba_program)
    got = jitted(x, ROWS, UPD)
    (compiled,) = jitted.cache.values()
    assert compiled.backend == "numba", compiled.fallback_reason
    want = _numba_program(x, ROWS, UPD)  # eagerly
    np.testing.assert_allclose(got[0], want[0])
    np.testing.assert_allclose(got[1], want[1])
