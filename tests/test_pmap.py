"""pmap: JAX's API as jit(vmap(f)) over astjax's single device. Values against NumPy and
JAX 0.10.2's (its pmap on one CPU device), collectives by axis_name, static and unmapped
arguments, composition with grad, jit and vmap, and the error for more entries than
devices."""
from functools import partial

import numpy as np
import pytest

import astjax
import astjax.numpy as jnp
from astjax import lax

X = np.arange(1.0, 4.0, dtype=np.float32)[None]  # one entry per device: astjax has one


def test_values_and_collectives_as_jax():
    f = astjax.pmap(lambda x: x * 2 + lax.psum(x, "i"), axis_name="i")
    got = f(np.ones((1, 3), np.float32))
    assert got.shape == (1, 3) and got.dtype == np.float32
    np.testing.assert_array_equal(got, [[3, 3, 3]])  # JAX: [[3. 3. 3.]]

    @partial(astjax.pmap, axis_name="i")
    def normalized(x):
        return x / lax.psum(x.sum(), "i") + lax.axis_index("i")
    np.testing.assert_allclose(normalized(X), X / X.sum(), rtol=1e-6)


def test_unmapped_and_static_arguments():
    add = astjax.pmap(lambda x, y: x + y, in_axes=(0, None))
    np.testing.assert_array_equal(add(np.ones((1, 2), np.float32), 3.0), [[4, 4]])
    scale = astjax.pmap(lambda x, n: x * n, static_broadcasted_argnums=1)
    np.testing.assert_array_equal(scale(X, 3), X * 3)
    np.testing.assert_array_equal(scale(X, 2), X * 2)  # another static value
    total = astjax.pmap(lambda x: x.sum())
    np.testing.assert_array_equal(total(np.ones((1, 4), np.float32)), [4])


def test_composes_with_grad_jit_and_vmap():
    g = astjax.grad(lambda x: astjax.pmap(jnp.sin)(x).sum())(np.ones((1, 2), np.float32))
    np.testing.assert_allclose(g, np.cos(np.ones((1, 2))), rtol=1e-6)  # JAX: 0.5403023
    sin2 = astjax.pmap(lambda x: jnp.sin(x) * 2)
    np.testing.assert_allclose(astjax.jit(lambda x: sin2(x) + 1)(X), np.sin(X) * 2 + 1,
                               rtol=1e-6)
    assert astjax.vmap(astjax.pmap(jnp.cos))(np.zeros((3, 1, 2), np.float32)).shape == (3, 1, 2)


def test_more_entries_than_devices_is_an_error():
    f = astjax.pmap(lambda x: x * 2)
    with pytest.raises(ValueError, match="size 2, but astjax has 1 device"):
        f(np.ones((2, 3), np.float32))
    with pytest.raises(ValueError, match="rank should be at least 1"):
        f(np.float32(1.0))
    assert astjax.pmap(lambda x: x, devices=astjax.devices())(X).shape == (1, 3)


def _shifted_sum(x, scale=2.0, shift=0.0):
    return jnp.sum(x * scale + shift)


def test_keyword_arguments_are_mapped_and_skipped_parameters_keep_defaults():
    """pmap(f)(xs, shift=s): s is mapped along axis 0, scale keeps its default (pmap had
    mapped the default 2.0 too: "vmap was requested to map ... it is static 2.0")."""
    xs = np.arange(6.0, dtype=np.float32).reshape(1, 6)
    s = np.float32([10.0])
    np.testing.assert_allclose(astjax.pmap(_shifted_sum)(xs, shift=s),
                               (xs * 2.0 + s[:, None]).sum(1))
