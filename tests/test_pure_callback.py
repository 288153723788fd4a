"""astjax.pure_callback (astjax/_src/callbacks.py): eagerly, under jit on both backends,
under vmap with each vmap_method (the shapes the callback sees and the values, as JAX
0.10.2's for the same calls), and JAX's errors (grad, vmap without a vmap_method, a wrong
result shape)."""
import inspect

import numpy as np
import pytest

import astjax
import astjax.numpy as jnp
from astjax import ShapeDtypeStruct as S

SEEN = []


def sin_plus(x, y):
    SEEN.append((type(x).__name__, np.shape(x), np.shape(y)))
    return np.sin(x) + np.asarray(y)[..., None]  # (y batched without x's last axis)


def sin_and_sum(x, y):
    return np.sin(x) + y, np.sum(np.asarray(x), -1)


def record_add(a, b):
    SEEN.append((np.shape(a), np.shape(b)))
    return np.asarray(a) + np.asarray(b)[..., None]


def wrong_shape(x):
    return np.ones(2, np.float32)


def calls_sin_plus(x, y, method=None):
    return astjax.pure_callback(sin_plus, S(x.shape, x.dtype), x, y, vmap_method=method)


def two_results(x, y):
    a, s = astjax.pure_callback(sin_and_sum, (S(x.shape, x.dtype), S((), jnp.float32)), x, y,
                                vmap_method="expand_dims")
    return a * 2 + s


def returns_wrong_shape(x):
    return astjax.pure_callback(wrong_shape, S((3,), jnp.float32), x)


X3, WANT = jnp.ones(3), np.sin(np.ones(3, np.float32)) + 2  # JAX: [2.841471 ...]


def test_eager():
    SEEN.clear()
    np.testing.assert_allclose(calls_sin_plus(X3, 2.0), WANT, rtol=1e-6)
    assert SEEN == [("Array", (3,), ())]  # JAX hands it Arrays too
    got = astjax.pure_callback(lambda x, k=1: (x * k, {"a": x.sum()}),
                               (S((3,), jnp.float32), {"a": S((), jnp.float32)}), X3, k=3)
    assert repr(got) == "(Array([3., 3., 3.], dtype=float32), {'a': Array(3., dtype=float32)})"
    got = astjax.pure_callback(lambda x: np.float64(1), S((), jnp.float32), 1.0)
    assert got.dtype == np.float32 and got == 1.0  # cast to the struct's dtype, as JAX
    assert repr(astjax.pure_callback(lambda x: x, S((), jnp.int32), 3)) == \
        "Array(3, dtype=int32)"
    with pytest.raises(RuntimeError, match="Incorrect output shape for return value #0: "
                       "Expected: \\(3,\\), Actual: \\(2,\\)"):
        astjax.pure_callback(wrong_shape, S((3,), jnp.float32), 1.0)
    with pytest.raises(RuntimeError, match="Expected: 1, Actual: 3"):
        astjax.pure_callback(lambda x: [1.0, 2.0, 3.0], S((3,), jnp.float32), X3)
    with pytest.raises(ValueError, match="vmap_method must be on of the allowed"):
        astjax.pure_callback(sin_plus, S((3,), jnp.float32), X3, 1.0, vmap_method="foo")


def test_jit():
    np.testing.assert_allclose(astjax.jit(calls_sin_plus)(X3, 2.0), WANT, rtol=1e-6)
    np.testing.assert_allclose(astjax.jit(two_results)(X3, 2.0), 2 * WANT + 3, rtol=1e-6)
    with pytest.raises(RuntimeError, match="Incorrect output shape"):
        astjax.jit(returns_wrong_shape)(X3)


@pytest.mark.parametrize("method, shapes", [
    ("sequential", [((3,), ()), ((3,), ())]),
    ("expand_dims", [((2, 3), (1,))]),
    ("broadcast_all", [((2, 3), (2,))]),
])
def test_vmap_methods(method, shapes):  # the shapes JAX's callback saw for the same calls
    SEEN.clear()
    got = astjax.vmap(lambda x, y: calls_sin_plus(x, y[0], method), (0, None))(
        jnp.ones((2, 3)), jnp.full((1,), 2.0))
    np.testing.assert_allclose(got, np.stack([WANT, WANT]), rtol=1e-6)
    assert [s[1:] for s in SEEN] == shapes


def test_nested_vmaps():
    outer_inner = lambda m: astjax.vmap(astjax.vmap(
        lambda x, y: calls_sin_plus(x, y, m), (0, None)), (None, 0))
    xs, ys = jnp.ones((2, 3)), jnp.arange(4.0)
    want = np.sin(1.0) + np.arange(4.0)[:, None, None] * np.ones((4, 2, 3))
    SEEN.clear()
    np.testing.assert_allclose(outer_inner("sequential")(xs, ys), want, rtol=1e-6)
    assert len(SEEN) == 8 and all(s[1:] == ((3,), ()) for s in SEEN)
    for method, shapes in [("expand_dims", ((1, 2, 3), (4, 1))),  # JAX's shapes
                           ("broadcast_all", ((4, 2, 3), (4, 2)))]:
        SEEN.clear()
        f = lambda x, y: astjax.pure_callback(record_add, S(x.shape, x.dtype), x, y,
                                              vmap_method=method)
        f = astjax.vmap(astjax.vmap(f, (0, None)), (None, 0))
        np.testing.assert_allclose(f(xs, ys), 1 + np.arange(4.0)[:, None, None] * np.ones(
            (4, 2, 3)), rtol=1e-6)
        assert SEEN == [shapes]


def test_jax_errors_are_located():
    line = inspect.getsourcelines(calls_sin_plus)[1] + 1
    with pytest.raises(NotImplementedError, match="Got vmap_method=None") as info:
        astjax.vmap(calls_sin_plus, (0, None))(jnp.ones((2, 3)), 2.0)
    assert (info.value.filename, info.value.lineno) == (__file__, line)
    for derivative in (lambda: astjax.grad(lambda x: calls_sin_plus(x, 2.0).sum())(X3),
                       lambda: astjax.jvp(lambda x: calls_sin_plus(x, 2.0), (X3,), (X3,))):
        with pytest.raises(ValueError, match="Pure callbacks do not support JVP") as info:
            derivative()
        assert (info.value.filename, info.value.lineno) == (__file__, line)
    # of a constant it is fine (JAX: 0.9092974)
    got = astjax.grad(lambda x: x * astjax.pure_callback(np.sin, S((), jnp.float32), 2.0))(1.0)
    np.testing.assert_allclose(got, 0.9092974, rtol=1e-6)


def test_grad_where_no_tangent_reaches_the_callback():
    # JAX's jvp rule raises only for a tangent that is not a symbolic zero: on
    # stop_gradient(x) or floor(x) grad gives a value (JAX 0.10.2's literals)
    c = jnp.arange(3.0)
    f1 = lambda x: x ** 2 + x * astjax.pure_callback(
        np.cos, S((3,), jnp.float32), astjax.lax.stop_gradient(x) * c).sum()
    f2 = lambda x: jnp.sin(x) * astjax.pure_callback(
        np.exp, S((3,), jnp.float32), jnp.floor(x) + c).sum()
    np.testing.assert_allclose(astjax.grad(f1)(0.7), 3.3348093, rtol=1e-6)
    np.testing.assert_allclose(astjax.jit(astjax.grad(f1))(0.7), 3.3348093, rtol=1e-6)
    np.testing.assert_allclose(astjax.grad(f2)(1.3), 8.07656, rtol=1e-6)


def cos_of(c):  # (a lambda: the op holds where it is, copied with the callee's body)
    return astjax.pure_callback(lambda v: np.cos(v), S(c.shape, c.dtype), c)


def sin_times_cos_of(x, c):
    return jnp.sin(x) * cos_of(c)


def test_callee_on_an_argument_no_tangent_reaches():
    # the callbacks are in callees, on stop_gradient(x) or floor(x): the callee's derivative
    # gives them no cotangent (it raised); on x itself JAX's error still (JAX 0.10.2's values)
    x = jnp.array([0.5, 1.5])
    f = lambda x: jnp.sum(sin_times_cos_of(x, astjax.lax.stop_gradient(x)) * x)
    for grad in (astjax.grad(f), astjax.jit(astjax.grad(f))):
        np.testing.assert_allclose(grad(x), [0.8058110, 0.07806563], rtol=1e-5)
    want = np.diag([1.3299346, -0.0958325])
    np.testing.assert_allclose(astjax.hessian(f)(x), want, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(astjax.jacfwd(astjax.grad(f))(x), want, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(astjax.jvp(f, (x,), (jnp.ones(2),))[1], 0.8838767, rtol=1e-5)
    g = lambda a, b: jnp.sum(sin_times_cos_of(a, astjax.lax.stop_gradient(a)) * b)
    np.testing.assert_allclose(astjax.grad(g, argnums=1)(x, x), [0.4207355, 0.07056],
                               rtol=1e-5)
    k = lambda x: jnp.sum(sin_times_cos_of(x, jnp.floor(x)))
    np.testing.assert_allclose(astjax.grad(k)(x), [0.8775826, 0.03821947], rtol=1e-5)
    line = inspect.getsourcelines(cos_of)[1] + 1
    for m in (lambda x: jnp.sum(sin_times_cos_of(x, x)), lambda x: jnp.sum(cos_of(x))):
        with pytest.raises(ValueError, match="Pure callbacks do not support JVP") as info:
            astjax.grad(m)(x)
        assert (info.value.filename, info.value.lineno) == (__file__, line)


def test_numba(numba_backend):
    for f, args, want in [(two_results, (X3, 2.0), 2 * WANT + 3),
                          (astjax.vmap(two_results, (0, None)), (jnp.ones((2, 3)), 2.0),
                           2 * np.stack([WANT, WANT]) + 3)]:
        jitted = astjax.jit(f)
        np.testing.assert_allclose(jitted(*args), want, rtol=1e-6)
        (compiled,) = jitted.cache.values()
        assert compiled.backend == "numba", compiled.fallback_reason


def nested_callbacks(x, y):
    def cosine(v):
        return np.cos(v)

    a = astjax.pure_callback(lambda v: np.sin(v) * 2, S(x.shape, x.dtype), x)
    return a + astjax.pure_callback(cosine, S(x.shape, x.dtype), x)


def nested_callback_using_a_variable(x, y):
    return astjax.pure_callback(lambda v: v * y, S(x.shape, x.dtype), x)


def test_nested_callbacks():
    # a nested def or lambda that uses none of the function's variables is a Python
    # function (it was 'the callback must be a Python function defined outside')
    np.testing.assert_allclose(astjax.jit(nested_callbacks)(X3, 2.0),
                               2 * np.sin(np.ones(3)) + np.cos(np.ones(3)), rtol=1e-6)
    with pytest.raises(TypeError, match="uses none of its variables") as info:
        astjax.jit(nested_callback_using_a_variable)(X3, 2.0)
    assert info.value.lineno == inspect.getsourcelines(nested_callback_using_a_variable)[1] + 1
