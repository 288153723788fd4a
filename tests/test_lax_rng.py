"""lax.rng_bit_generator (a pure function of its key: same key, same bits, eagerly, under
jit, vmap and on Numba; not XLA's bits) and lax.rng_uniform (stateful, in [a, b))."""
import numpy as np
import pytest

import astjax
import astjax.numpy as jnp
from astjax import lax

KEY = np.array([1, 2, 3, 4], np.uint32)


def test_rng_bit_generator_is_a_function_of_the_key():
    new_key, bits = lax.rng_bit_generator(KEY, (2, 3))
    assert new_key.dtype == bits.dtype == np.uint32
    assert new_key.shape == (4,) and bits.shape == (2, 3)
    assert not np.array_equal(new_key, KEY)
    jitted = astjax.jit(lax.rng_bit_generator, static_argnums=(1, 2))(KEY, (2, 3))
    np.testing.assert_array_equal(jitted[0], new_key)
    np.testing.assert_array_equal(jitted[1], bits)
    _, other = lax.rng_bit_generator(new_key, (2, 3))
    assert not np.array_equal(other, bits)
    _, small = lax.rng_bit_generator(KEY, (5,), dtype=jnp.int8,
                                     algorithm=lax.RandomAlgorithm.RNG_PHILOX)
    assert small.dtype == np.int8 and small.shape == (5,)
    keys = np.stack([KEY, np.asarray(new_key)])
    batched = astjax.vmap(lambda k: lax.rng_bit_generator(k, (3,))[1])(keys)
    for k, row in zip(keys, batched):
        np.testing.assert_array_equal(row, lax.rng_bit_generator(k, (3,))[1])
    _, many = lax.rng_bit_generator(KEY, (4000,))
    assert abs(np.asarray(many, np.float64).mean() / 2.0 ** 32 - 0.5) < 0.02


def test_rng_bit_generator_errors():
    with pytest.raises(TypeError, match="unsupported dtype float32"):
        lax.rng_bit_generator(KEY, (2,), dtype=jnp.float32)
    with pytest.raises(TypeError, match="shape \\(4,\\)"):
        lax.rng_bit_generator(KEY[:2], (2,))
    with pytest.raises(TypeError, match="shape \\(4,\\)") as info:
        astjax.jit(lambda k: lax.rng_bit_generator(k, (2,)))(KEY[:2])
    assert "test_lax_rng.py" in str(info.value)


def test_rng_uniform():
    x = lax.rng_uniform(2.0, 3.0, (1000,))
    assert x.dtype == np.float32 and x.shape == (1000,)
    assert 2.0 <= float(x.min()) and float(x.max()) < 3.0 and np.unique(x).size > 900
    y = astjax.jit(lambda a: lax.rng_uniform(a, a + 1.0, (3, 2)))(np.float32(-1.0))
    assert y.shape == (3, 2) and bool(((-1.0 <= y) & (y < 0.0)).all())
    z = lax.rng_uniform(0, 5, (200,))
    assert z.dtype == np.int32 and set(np.unique(z)) == {0, 1, 2, 3, 4}


def test_rng_bit_generator_on_numba(numba_backend):
    new_key, bits = astjax.jit(lambda k: lax.rng_bit_generator(k, (3,)))(KEY)
    astjax.config.update("astjax_jit_backend", "python")
    want = lax.rng_bit_generator(KEY, (3,))
    np.testing.assert_array_equal(new_key, want[0])
    np.testing.assert_array_equal(bits, want[1])
