"""jnp.sort, jnp.take_along_axis and jnp.linalg.norm: plain astjax.numpy functions (not
ops), checked eagerly, under jit, grad (forward and reverse), vmap and on Numba."""
import numpy as np
import pytest

import astjax
import astjax.numpy as jnp
from astjax.test_util import check_grads

RNG = np.random.default_rng(0)
X3 = RNG.standard_normal((3, 4, 5))
IDX3 = RNG.integers(-4, 4, (3, 2, 5))


def _close(got, want, dtype):
    got = np.asarray(got)
    assert got.dtype == np.dtype(dtype), (got.dtype, dtype)
    assert got.shape == np.shape(want)
    tol = 1e-6 if np.dtype(dtype) == np.float64 else 2e-6
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


def _scalar(f):
    """A smooth scalar function of f(a), for order-2 checks."""
    def g(a):
        out = f(a)
        return jnp.sum(jnp.sin(out) + 0.5 * out * out)
    return g


def _sample(shape):
    n = int(np.prod(shape))
    return X3.reshape(-1)[:n].reshape(shape).copy()


@pytest.fixture(params=["float32", "float64"])
def dtype(request):
    if request.param == "float64":
        before = astjax.config.jax_enable_x64
        astjax.config.update("jax_enable_x64", True)
        yield np.dtype(np.float64)
        astjax.config.update("jax_enable_x64", before)
    else:
        yield np.dtype(np.float32)


# --- sort ---------------------------------------------------------------------------------

@pytest.mark.parametrize("axis", [0, 1, 2, -1, -2, None])
def test_sort_matches_numpy(dtype, axis):
    x = X3.astype(dtype)
    want = np.sort(x, axis=axis, kind="stable")
    np.testing.assert_array_equal(np.asarray(jnp.sort(x, axis=axis)), want)
    got = astjax.jit(lambda a: jnp.sort(a, axis=axis))(x)
    assert np.asarray(got).dtype == dtype
    np.testing.assert_array_equal(np.asarray(got), want)


def test_sort_default_axis_1d_ints_nans_and_descending():
    np.testing.assert_array_equal(np.asarray(jnp.sort(np.array([3, 1, 2], np.int32))), [1, 2, 3])
    x = np.array([2.0, np.nan, -1.0, 0.5], np.float32)
    np.testing.assert_array_equal(np.asarray(astjax.jit(jnp.sort)(x)), np.sort(x))
    m = X3[0].astype(np.float32)
    got = astjax.jit(lambda a: jnp.sort(a, axis=0, descending=True))(m)
    np.testing.assert_array_equal(np.asarray(got), np.sort(m, axis=0)[::-1])


def test_sort_errors():
    with pytest.raises(ValueError, match="rank >= 1"):
        jnp.sort(np.float32(1.0))
    with pytest.raises(ValueError, match="out of bounds"):
        jnp.sort(np.ones((2, 3), np.float32), axis=2)
    with pytest.raises(NotImplementedError, match="order"):
        jnp.sort(np.ones(3, np.float32), order="a")


@pytest.mark.parametrize("axis", [0, 1, -1, None])
def test_sort_grads(x64, axis):
    x = X3[:2, :3, :4]  # distinct values: sort is smooth there
    check_grads(lambda a: jnp.sort(a, axis=axis), (x,), order=1, modes=("fwd", "rev"))
    check_grads(_scalar(lambda a: jnp.sort(a, axis=axis)), (x,), order=2, modes=("fwd", "rev"))
    check_grads(astjax.jit(lambda a: jnp.sort(a, axis=axis)), (x,), order=1,
                modes=("fwd", "rev"))


def test_sort_grad_sends_cotangent_through_permutation(x64):
    x = np.array([0.3, -1.0, 2.0, 0.0])
    w = np.arange(4.0)
    g = astjax.grad(lambda a: jnp.sum(jnp.sort(a) * w))(x)
    np.testing.assert_array_equal(np.asarray(g), w[np.argsort(np.argsort(x))])


def test_sort_vmap_matches_loop():
    x = X3.astype(np.float32)
    for axis in (0, -1):
        got = astjax.vmap(lambda a: jnp.sort(a, axis=axis))(x)
        want = np.stack([np.sort(a, axis=axis) for a in x])
        np.testing.assert_array_equal(np.asarray(got), want)
    got = astjax.vmap(jnp.sort, in_axes=1)(x)
    np.testing.assert_array_equal(np.asarray(got), np.stack([np.sort(x[:, i]) for i in range(4)]))


# --- take_along_axis ----------------------------------------------------------------------

@pytest.mark.parametrize("axis", [0, 1, 2, -1])
def test_take_along_axis_matches_numpy(dtype, axis):
    x = X3.astype(dtype)
    shape = list(x.shape)
    shape[axis] = 2
    idx = RNG.integers(-x.shape[axis], x.shape[axis], shape).astype(np.int32)
    want = np.take_along_axis(x, idx, axis)
    _close(jnp.take_along_axis(x, idx, axis), want, dtype)
    _close(astjax.jit(lambda a, i: jnp.take_along_axis(a, i, axis))(x, idx), want, dtype)


def test_take_along_axis_broadcasts_and_flattens():
    x = X3.astype(np.float32)
    idx = np.array([[[0], [3]]], np.int32)  # (1, 2, 1) against (3, 4, 5): axis 1
    f = astjax.jit(lambda a, i: jnp.take_along_axis(a, i, 1))
    np.testing.assert_array_equal(np.asarray(f(x, idx)), np.take_along_axis(x, idx, 1))
    x1 = x[:1, :, :1]  # arr broadcast against the indices
    idx2 = np.zeros((3, 2, 5), np.int32)
    np.testing.assert_array_equal(np.asarray(f(x1, idx2)), np.take_along_axis(x1, idx2, 1))
    flat = np.array([5, 0, 59], np.int32)
    np.testing.assert_array_equal(np.asarray(jnp.take_along_axis(x, flat, None)),
                                  np.take_along_axis(x, flat, None))
    np.testing.assert_array_equal(
        np.asarray(astjax.jit(lambda a, i: jnp.take_along_axis(a, i, None))(x, flat)),
        np.take_along_axis(x, flat, None))


def test_take_along_axis_errors():
    x = np.ones((2, 3), np.float32)
    with pytest.raises(ValueError, match="same rank"):
        jnp.take_along_axis(x, np.zeros(3, np.int32), 1)
    with pytest.raises(TypeError, match="integer"):
        jnp.take_along_axis(x, np.zeros((2, 3), np.float32), 1)


@pytest.mark.parametrize("axis", [0, -1])
def test_take_along_axis_grads(x64, axis):
    x = X3[:, :3]
    shape = list(x.shape)
    shape[axis] += 2  # more picks than elements: some repeat, their cotangents add up
    idx = np.random.default_rng(3).integers(0, x.shape[axis], shape)
    f = lambda a: jnp.take_along_axis(a, idx, axis)  # noqa: E731
    check_grads(f, (x,), order=1, modes=("fwd", "rev"))
    check_grads(_scalar(f), (x,), order=2, modes=("fwd", "rev"))
    check_grads(astjax.jit(f), (x,), order=1, modes=("fwd", "rev"))
    g = astjax.grad(lambda a: jnp.sum(f(a)))(x)
    want = np.zeros_like(x)
    np.add.at(want, tuple(np.indices(idx.shape)[:axis % 3]) + (idx,)
              + tuple(np.indices(idx.shape)[axis % 3 + 1:]), 1.0)
    np.testing.assert_array_equal(np.asarray(g), want)


def test_take_along_axis_vmap_matches_loop():
    x = X3.astype(np.float32)
    idx = (IDX3 % 4).astype(np.int32)
    got = astjax.vmap(lambda a, i: jnp.take_along_axis(a, i, 0))(x, idx)
    want = np.stack([np.take_along_axis(a, i, 0) for a, i in zip(x, idx)])
    np.testing.assert_array_equal(np.asarray(got), want)
    got = astjax.vmap(lambda a: jnp.take_along_axis(a, idx[0, :, :], 0))(x)
    want = np.stack([np.take_along_axis(a, idx[0], 0) for a in x])
    np.testing.assert_array_equal(np.asarray(got), want)


# --- linalg.norm --------------------------------------------------------------------------

NORM_CASES = [
    ((5,), None, None), ((5,), 2, None), ((5,), 1, None), ((5,), np.inf, None),
    ((5,), -np.inf, None), ((5,), 0, None), ((5,), 3, None), ((5,), 0.5, None),
    ((3, 4), None, None), ((3, 4), "fro", None), ((3, 4), 1, None), ((3, 4), -1, None),
    ((3, 4), np.inf, None), ((3, 4), -np.inf, None),
    ((3, 4, 5), None, None), ((3, 4, 5), None, 1), ((3, 4, 5), 2, -1), ((3, 4, 5), 1, 0),
    ((3, 4, 5), None, (0, 2)), ((3, 4, 5), "fro", (2, 0)), ((3, 4, 5), 1, (0, 2)),
    ((3, 4, 5), np.inf, (2, 1)), ((3, 4, 5), -1, (1, 0)),
]


@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("shape,ord,axis", NORM_CASES)
def test_norm_matches_numpy(dtype, shape, ord, axis, keepdims):
    x = _sample(shape).astype(dtype)
    x[(0,) * len(shape)] = 0.0  # for ord=0
    want = np.linalg.norm(x, ord=ord, axis=axis, keepdims=keepdims)
    _close(jnp.linalg.norm(x, ord, axis, keepdims), want, dtype)
    f = astjax.jit(lambda a: jnp.linalg.norm(a, ord=ord, axis=axis, keepdims=keepdims))
    _close(f(x), want, dtype)


def test_norm_of_ints_and_complex():
    _close(jnp.linalg.norm(np.array([3, 4], np.int32)), 5.0, np.float32)
    z = np.array([3 + 4j, 1 - 1j], np.complex64)
    _close(astjax.jit(jnp.linalg.norm)(z), np.linalg.norm(z), np.float32)


def test_norm_errors():
    m = np.ones((2, 3), np.float32)
    with pytest.raises(ValueError, match="invalid ord"):
        jnp.linalg.norm(m, 3)
    with pytest.raises(ValueError, match="invalid ord"):
        jnp.linalg.norm(m[0], "fro")
    with pytest.raises(ValueError, match="rank"):
        jnp.linalg.norm(np.ones((2, 2, 2), np.float32), 1)
    with pytest.raises(Exception, match="invalid ord"):
        astjax.jit(lambda a: jnp.linalg.norm(a, "nope"))(m[0])


@pytest.mark.parametrize("shape,ord,axis", [
    ((5,), None, None), ((5,), 2, None), ((5,), 3, None), ((3, 4), None, None),
    ((3, 4), "fro", None), ((3, 4, 5), None, 1), ((3, 4, 5), None, (0, 2)),
    ((3, 4), 1, None), ((3, 4), np.inf, None), ((5,), 1, None), ((5,), np.inf, None)])
def test_norm_grads(x64, shape, ord, axis):
    x = _sample(shape) + 0.1
    f = lambda a: jnp.linalg.norm(a, ord=ord, axis=axis)  # noqa: E731
    check_grads(f, (x,), order=1, modes=("fwd", "rev"))
    if ord in (None, 2, "fro", 3):  # smooth: second order too
        check_grads(_scalar(f), (x,), order=2, modes=("fwd", "rev"))
    check_grads(astjax.jit(f), (x,), order=1, modes=("fwd", "rev"))
    g = astjax.grad(lambda a: jnp.sum(f(a)))(x)
    assert np.all(np.isfinite(np.asarray(g)))


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_norm_grad_at_zero_is_nan_as_in_jax(x64):
    # JAX's norm is sqrt(sum(x * x)): d sqrt at 0 is inf, times 0 gives NaN there too
    g = astjax.grad(jnp.linalg.norm)(np.zeros(3))
    assert np.all(np.isnan(np.asarray(g)))


def test_norm_vmap_matches_loop():
    x = X3.astype(np.float32)
    got = astjax.vmap(jnp.linalg.norm)(x)
    _close(got, np.stack([np.linalg.norm(a) for a in x]), np.float32)
    got = astjax.vmap(lambda a: jnp.linalg.norm(a, 1, axis=0))(x)
    _close(got, np.stack([np.linalg.norm(a, 1, axis=0) for a in x]), np.float32)


def test_linalg_namespace():
    import astjax.numpy.linalg as la
    assert jnp.linalg is la and la.norm is jnp.linalg.norm


# --- the Numba backend against the python backend -----------------------------------------

def _program(x, idx):
    s = jnp.sort(x, axis=0)
    t = jnp.take_along_axis(x, idx, 1)
    return s, t, jnp.linalg.norm(x, axis=1), jnp.linalg.norm(s)


def _numpy_written(x):
    """Existing NumPy code: np.sort, np.take_along_axis and np.linalg.norm compile as the
    jnp functions."""
    order = np.argsort(x)
    return np.linalg.norm(x) * np.sort(x)[0] + np.take_along_axis(x, order, 0)[-1]


def test_numpy_names_in_compiled_code(x64):
    x = np.array([3.0, -1.0, 2.0, 0.5])
    np.testing.assert_allclose(astjax.jit(_numpy_written)(x), _numpy_written(x), rtol=1e-12)
    check_grads(_numpy_written, (x,), order=2)


def test_numba_backend_matches_python(numba_backend):
    x = X3[0].astype(np.float32)
    x[1, 2] = np.nan  # sorts last, as in NumPy
    idx = (IDX3[0] % 5).astype(np.int32)[:, :4].T.copy()  # (4, 2), negative ones too
    jitted = astjax.jit(_program)
    got = jitted(x, idx)
    (compiled,) = jitted.cache.values()
    assert compiled.backend == "numba", compiled.fallback_reason
    astjax.config.update("astjax_jit_backend", "python")
    want = astjax.jit(_program)(x, idx)
    for g, w in zip(got, want):
        assert np.asarray(g).dtype == np.asarray(w).dtype
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-6)
    np.testing.assert_array_equal(np.asarray(got[0]), np.sort(x, axis=0))


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.bool_])
def test_numba_argsort_and_sort(numba_backend, dtype):
    y = (X3 * 3).astype(dtype)
    y.reshape(-1)[::5] = np.nan if dtype == np.float32 else 0
    for axis in (0, 1, -1):
        jitted = astjax.jit(lambda a: (jnp.argsort(a, axis=axis), jnp.sort(a, axis=axis)))
        order, values = jitted(y)
        (compiled,) = jitted.cache.values()
        assert compiled.backend == "numba", compiled.fallback_reason
        np.testing.assert_array_equal(np.asarray(order), np.argsort(y, axis=axis, kind="stable"))
        np.testing.assert_array_equal(np.asarray(values), np.sort(y, axis=axis))


def _complex_sample(dtype):
    """Ties in the real part (ordered by the imaginary part), repeats, NaNs (last)."""
    re = np.array([[3, 1, 1, 3, -2, 1], [0, np.nan, 2, 0, 2, np.nan], [5, 5, 5, 4, 4, 4]])
    im = np.array([[1, 2, -1, 0, 5, 2], [1, 0, -3, -1, np.nan, 2], [2, 1, 0, 2, 1, 0]])
    return (re + 1j * im).astype(dtype)


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_complex_sort_is_lexicographic(x64, dtype):
    # JAX sorts complex values by real part, then imaginary part, as NumPy
    z = _complex_sample(dtype)
    for axis in (0, 1):
        want = np.argsort(z, axis=axis, kind="stable")
        for f in (jnp.argsort, astjax.jit(jnp.argsort, static_argnums=1)):
            np.testing.assert_array_equal(np.asarray(f(z, axis)), want)
        got = astjax.jit(lambda a: jnp.sort(a, axis=axis))(z)
        assert np.asarray(got).dtype == dtype
        np.testing.assert_array_equal(np.asarray(got), np.sort(z, axis=axis))
    np.testing.assert_array_equal(np.asarray(astjax.vmap(jnp.sort)(z)), np.sort(z))
    np.testing.assert_array_equal(np.asarray(jnp.sort_complex(z)), np.sort_complex(z))
    got = astjax.jit(lambda a: jnp.unique(a, size=5))(z[0])
    np.testing.assert_array_equal(np.asarray(got), np.unique(z[0]))
    np.testing.assert_array_equal(np.asarray(jnp.lexsort((z[0], z[2]))), np.lexsort((z[0], z[2])))
    im = z[0].imag
    g = astjax.grad(lambda a: jnp.sum(jnp.real(jnp.sort(a + 1j * im)) * jnp.arange(6.0)))
    g = g(z[0].real)
    np.testing.assert_array_equal(np.asarray(g), np.argsort(np.argsort(z[0], kind="stable")))


def test_numba_complex_argsort_and_sort(numba_backend):
    z = _complex_sample(np.complex64)
    jitted = astjax.jit(lambda a: (jnp.argsort(a, axis=0), jnp.sort(a), jnp.sort(a[1])))
    order, values, row = jitted(z)
    (compiled,) = jitted.cache.values()
    assert compiled.backend == "numba", compiled.fallback_reason
    np.testing.assert_array_equal(np.asarray(order), np.argsort(z, axis=0, kind="stable"))
    np.testing.assert_array_equal(np.asarray(values), np.sort(z))
    np.testing.assert_array_equal(np.asarray(row), np.sort(z[1]))


# --- jnp.select and jnp.piecewise (Control flow and logical operators with JIT) ---------------

def _select_mixed(x):  # entries of different shapes broadcast, as in np.select
    return jnp.select((x < 0, x > 1), (1.0, jnp.ones((2, 3))), default=x)


def _piecewise_closure(x, a):
    return jnp.piecewise(x, [x < 0, x > 1], [lambda x: -x * a, lambda x: x ** 2 + a, 0.5])


def test_select_and_piecewise():
    # astjax.numpy had neither (AttributeError); JAX's docs point to both
    x = np.float32([-1.0, 0.0, 2.0])
    conds, choices = [x < 0, x > 1], [x, x * 10]
    want = np.select(conds, choices, default=5)
    _close(jnp.select(conds, choices, default=5), want, np.float32)
    _close(astjax.jit(lambda x: jnp.select([x < 0, x > 1], [x, x * 10], default=5))(x), want,
           np.float32)
    _close(astjax.jit(_select_mixed)(x), np.select((x < 0, x > 1), (1.0, np.ones((2, 3))), x),
           np.float32)
    _close(astjax.grad(lambda x: jnp.sum(jnp.select([x < 0, x > 1], [x, x * 10])))(x),
           [1.0, 0.0, 10.0], np.float32)
    _close(jnp.select([x], [x]), x, np.float32)  # a float condition holds where nonzero
    assert jnp.select([x < 0], [np.int32([1, 2, 3])]).dtype == np.int32
    with pytest.raises(ValueError, match="length equal"):
        jnp.select([x < 0], [x, x])
    # piecewise: a later condition overrides, a constant entry, an extra default function
    pw = np.piecewise(x, [x < 0, x > 1], [lambda x: -x * 3, lambda x: x ** 2 + 3, 0.5])
    _close(astjax.jit(_piecewise_closure)(x, 3.0), pw, np.float32)
    ga, gb = astjax.grad(lambda x, a: jnp.sum(_piecewise_closure(x, a)), argnums=(0, 1))(x, 3.0)
    _close(ga, [-3.0, 0.0, 4.0], np.float32)
    _close(gb, 1.0 - 0.0 + 1.0, np.float32)  # -x at x=-1, 1 at x=2
    out = astjax.vmap(lambda x: jnp.piecewise(x, [x < 0], [jnp.sin, jnp.cos]))(np.stack([x, -x]))
    _close(out, np.where(np.stack([x, -x]) < 0, np.sin(np.stack([x, -x])),
                         np.cos(np.stack([x, -x]))), np.float32)
    # JAX casts each piece to x's dtype: 2.5 * 1 is 2 for an int x
    got = jnp.piecewise(np.int32([1, 2]), [np.array([True, False])], [lambda x: x * 2.5])
    np.testing.assert_array_equal(got, np.int32([2, 0]))
    assert got.dtype == np.int32
    with pytest.raises(ValueError, match="either 1 or 2 functions"):
        jnp.piecewise(x, [x < 0], [lambda x: -x, 7.0, 3.0])
