"""The Array type, device functions and eager dispatch."""
import pickle
import subprocess
import sys

import numpy as np
import pytest

import astjax
import astjax.numpy as jnp
from astjax import Array


def test_attributes_and_repr():
    x = jnp.asarray(np.arange(6, dtype=np.float32).reshape(2, 3))
    assert isinstance(x, Array)
    assert (x.shape, x.dtype, x.ndim, x.size) == ((2, 3), np.float32, 2, 6)
    assert x.T.shape == (3, 2)
    np.testing.assert_array_equal(x.T, np.arange(6).reshape(2, 3).T)
    assert repr(jnp.zeros(2)) == "Array([0., 0.], dtype=float32)"
    assert x.device == astjax.devices()[0]
    assert x.block_until_ready() is x


def test_operators_follow_numpy_values_and_jax_dtypes():
    a = np.arange(1, 5, dtype=np.float32)
    x = jnp.asarray(a)
    cases = [(x + 1, a + 1), (1 - x, 1 - a), (x * x, a * a), (x / 2, a / 2), (2 ** x, 2 ** a),
             (x // 2, a // 2), (x % 3, a % 3), (-x, -a), (abs(-x), a), (x @ x, a @ a),
             (x > 2, a > 2), (x == 2, a == 2)]
    for got, want in cases:
        assert isinstance(got, Array)
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6)
    assert (x + 1).dtype == np.float32 and (x > 2).dtype == np.bool_
    assert (np.ones(4, np.float32) + x).dtype == np.float32  # ndarray + Array -> Array
    assert isinstance(np.ones(4, np.float32) + x, Array)


def test_conversions():
    x = jnp.asarray(np.float32(2.5))
    assert float(x) == 2.5 and int(x) == 2 and bool(x)
    assert jnp.arange(3).tolist() == [0, 1, 2]
    assert jnp.arange(3).astype(jnp.float32).dtype == np.float32
    assert np.asarray(jnp.arange(3)).dtype == np.int32
    assert [float(v) for v in jnp.arange(3.0)] == [0.0, 1.0, 2.0]
    with pytest.raises(ValueError, match="ambiguous"):
        bool(jnp.arange(3))
    with pytest.raises(TypeError, match="unhashable"):
        hash(jnp.arange(3))


def test_arrays_are_immutable():
    x = jnp.zeros(3)
    with pytest.raises(TypeError, match="at\\[idx\\].set"):
        x[0] = 1.0
    y = x.at[0].set(1.0)
    np.testing.assert_array_equal(x, [0, 0, 0])
    np.testing.assert_array_equal(y, [1, 0, 0])


def test_methods_and_indexing():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    x = jnp.asarray(a)
    np.testing.assert_allclose(x.sum(axis=0), a.sum(axis=0))
    np.testing.assert_allclose(x.reshape(4, 3), a.reshape(4, 3))
    np.testing.assert_allclose(x[1:, None, ::2], a[1:, None, ::2])
    np.testing.assert_allclose(x[np.array([2, 0])], a[[2, 0]])
    with pytest.raises(AttributeError, match="frobnicate"):
        x.frobnicate()


def _jax_methods(x):
    return (x.sort(axis=-1), x.argsort(), x.diagonal(), x.take(jnp.array([0, 2]), axis=1),
            x[0].searchsorted(2.5), x.compress(jnp.array([True, False]), axis=0, size=1),
            x.ptp(axis=1), x.nonzero(size=6)[1], x.argpartition(1, axis=1)[:, :1], x.real, x.mT)


def test_methods_jax_arrays_have_run_eagerly_and_compiled():
    """x.sort(), x.take(...), x.real, x.mT, ... as JAX's Array has them (they raised
    AttributeError eagerly, and x.sort() 'arrays have no method' in compiled code), and
    their derivatives reach x."""
    m = np.array([[3.0, 1.0, 2.0], [0.0, 5.0, 4.0]], np.float32)
    want = (np.sort(m), np.argsort(m), np.diagonal(m), m[:, [0, 2]], 2, m[:1], np.ptp(m, 1),
            [0, 1, 2, 1, 2, 0], [[1], [0]], m, m.T)
    for got in (_jax_methods(jnp.asarray(m)), astjax.jit(_jax_methods)(m)):
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g, w)
    z = jnp.array([1 + 2j, 3 - 1j])
    np.testing.assert_array_equal(z.real, [1, 3])
    np.testing.assert_array_equal(z.imag, [2, -1])
    g = astjax.grad(lambda x: x.sort()[:, -1].sum() + x.diagonal().sum() + x.ptp(axis=1).sum())
    np.testing.assert_array_equal(g(m), [[3, -1, 0], [-1, 3, 0]])
    np.testing.assert_array_equal(jnp.array([0, 1]).choose([np.float32([1, 2]),
                                                            np.float32([3, 4])]), [1, 4])


def test_pickle_round_trip():
    x = jnp.arange(3.0)
    y = pickle.loads(pickle.dumps(x))
    assert isinstance(y, Array) and y.dtype == np.float32
    np.testing.assert_array_equal(x, y)


def test_device_put_get_and_block():
    tree = {"a": np.ones(2, np.float32), "b": (1.0, np.arange(3))}
    placed = astjax.device_put(tree, astjax.devices()[0])
    assert isinstance(placed["a"], Array) and isinstance(placed["b"][1], Array)
    assert placed["b"][1].dtype == np.int32  # int64 narrows as in JAX
    assert astjax.block_until_ready(placed) is placed
    got = astjax.device_get(placed)
    assert isinstance(got["a"], np.ndarray)
    assert astjax.device_count() == 1 and astjax.default_backend() == "cpu"
    with pytest.raises(RuntimeError, match="backend"):
        astjax.devices("gpu")
    with pytest.raises(ValueError, match="device"):
        astjax.device_put(1.0, "tpu:0")


def test_block_until_ready_waits_for_other_libraries_arrays():
    """An array of another library with a block_until_ready method (JAX's) is waited for,
    as jax.block_until_ready does; a plain NumPy array passes through."""
    class Pending:
        waited = False

        def block_until_ready(self):
            Pending.waited = True
            return self
    tree = [Pending(), np.ones(2)]
    assert astjax.block_until_ready(tree) is tree and Pending.waited


def test_config_rejects_unknown_option():
    with pytest.raises(AttributeError, match="jax_enable_x64"):
        astjax.config.update("jax_enable_x65", True)


def test_dump_prints_stages(tmp_path):
    script = tmp_path / "prog.py"
    script.write_text("import numpy as np\nimport astjax\n\n"
                      "def f(x):\n    return np.sin(x) * 2\n\n"
                      "astjax.jit(f)(np.ones(2, np.float32))\n")
    env = {"ASTJAX_DUMP": "anf,emit", "ASTJAX_CACHE_DIR": str(tmp_path / "cache"),
           "PATH": "/usr/bin:/bin"}
    import os
    env["PYTHONPATH"] = os.path.dirname(os.path.dirname(os.path.abspath(astjax.__file__)))
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                         env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "ASTJAX_DUMP anf: f" in out.stderr and "t0 = np.sin(x)" in out.stderr
    # jit's default backend is Numba: the emitted stage is a fused loop
    assert "ASTJAX_DUMP emit: f" in out.stderr and "_ml.sin(x[i" in out.stderr
