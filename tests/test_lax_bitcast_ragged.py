"""lax.bitcast_convert_type and lax.ragged_dot against JAX 0.10.2's values (literals from a
JAX run), eagerly, under jit, grad and vmap, with JAX's errors; one small Numba program
each."""
import numpy as np
import pytest

import astjax
import astjax.numpy as jnp
from astjax import lax


def test_bitcast_convert_type_values():
    x = np.array([1.0, -2.5], np.float32)
    for f in (lax.bitcast_convert_type, astjax.jit(lax.bitcast_convert_type, static_argnums=1)):
        got = f(x, jnp.int32)
        assert got.dtype == np.int32
        np.testing.assert_array_equal(got, [1065353216, -1071644672])
        np.testing.assert_array_equal(f(got, jnp.float32), x)
        # narrower: a trailing axis, least significant byte first; wider: the axis goes
        np.testing.assert_array_equal(f(np.uint32(0x01020304), jnp.uint8), [4, 3, 2, 1])
        wide = f(np.array([[1, 2, 3, 4]], np.uint8), jnp.uint32)
        assert wide.shape == (1,) and int(wide[0]) == 67305985
    got = astjax.vmap(lambda v: lax.bitcast_convert_type(v, jnp.uint8))(
        np.array([1, 256], np.uint32))
    np.testing.assert_array_equal(got, [[1, 0, 0, 0], [0, 1, 0, 0]])


def test_bitcast_convert_type_derivative_and_errors():
    def f(x):
        return jnp.sum(lax.bitcast_convert_type(x, jnp.int32).astype(jnp.float32)) + jnp.sum(x)

    np.testing.assert_array_equal(astjax.grad(f)(np.ones(2, np.float32)), [1.0, 1.0])
    with pytest.raises(ValueError, match="Attempting to convert array of shape"):
        lax.bitcast_convert_type(np.ones((3, 2), np.uint8), jnp.uint32)
    with pytest.raises(TypeError, match="does not support bool or complex"):
        lax.bitcast_convert_type(np.ones(3, np.float32), jnp.bool_)


def test_bitcast_convert_type_on_numba(numba_backend):
    f = astjax.jit(lambda x: lax.bitcast_convert_type(x * 2.0, jnp.uint32) + 1)
    np.testing.assert_array_equal(f(np.array([0.5, 1.0], np.float32)),
                                  [1065353217, 1073741825])


LHS = np.arange(12.0, dtype=np.float32).reshape(4, 3)
RHS = np.arange(12.0, dtype=np.float32).reshape(2, 3, 2)
GS = np.array([1, 2], np.int32)


def test_ragged_dot_values():
    want = [[10.0, 13.0], [100.0, 112.0], [172.0, 193.0], [0.0, 0.0]]  # JAX 0.10.2
    for f in (lax.ragged_dot, astjax.jit(lax.ragged_dot)):
        got = f(LHS, RHS, GS)
        assert got.dtype == np.float32
        np.testing.assert_array_equal(got, want)
    # groups past the rows: the last rows' group is cut short
    np.testing.assert_array_equal(lax.ragged_dot(LHS, RHS, np.array([3, 3], np.int32)),
                                  [[10, 13], [28, 40], [46, 67], [244, 274]])
    assert lax.ragged_dot(LHS.astype(np.int32), RHS.astype(np.int32), GS).dtype == np.int32
    assert lax.ragged_dot(LHS, RHS.astype(np.int32), GS).dtype == np.float32
    got = astjax.vmap(lax.ragged_dot, in_axes=(0, None, None))(np.stack([LHS, -LHS]), RHS, GS)
    np.testing.assert_array_equal(got, [want, -np.array(want)])


def test_ragged_dot_gradient_and_errors():
    gl, gr = astjax.grad(lambda l, r: jnp.sum(lax.ragged_dot(l, r, GS) ** 2), (0, 1))(LHS, RHS)
    np.testing.assert_allclose(gl, [[26, 118, 210], [2768, 3616, 4464], [4766, 6226, 7686],
                                    [0, 0, 0]], rtol=1e-6)  # JAX 0.10.2
    np.testing.assert_allclose(gr, [[[0, 0], [20, 26], [40, 52]],
                                    [[2664, 2988], [3208, 3598], [3752, 4208]]], rtol=1e-6)
    with pytest.raises(TypeError, match="contracting dimensions to have the same shape"):
        lax.ragged_dot(LHS, RHS[:, :2], GS)
    with pytest.raises(TypeError, match="expected rhs group dimension size to be 1, got 2"):
        lax.ragged_dot(LHS, RHS, GS[:1])


def test_ragged_dot_on_numba(numba_backend):
    np.testing.assert_array_equal(astjax.jit(lax.ragged_dot)(LHS, RHS, GS)[:2],
                                  [[10.0, 13.0], [100.0, 112.0]])
