"""custom_jvp / custom_vjp of a nested function that captured run-time values, defined
(with decorators or by calls) and called inside compiled code (ad/custom_closures.py):
values as JAX 0.10.2 gives for the same functions, written as literals."""
import inspect
from functools import partial

import numpy as np
import pytest

import astjax
import astjax.numpy as jnp


def decorated_jvp(x, y):
    @astjax.custom_jvp
    def g(z):
        return jnp.sin(z) * y

    @g.defjvp
    def g_jvp(p, t):
        (z,), (tz,) = p, t
        return g(z), jnp.cos(z) * y * tz * 2.0  # twice the true derivative

    return g(x)


def decorated_with_nondiff_argnums(x, y):
    @partial(astjax.custom_jvp, nondiff_argnums=(1,))
    def g(z, k):
        return jnp.sin(z) * y * k

    @g.defjvp
    def g_jvp(k, p, t):
        (z,), (tz,) = p, t
        return g(z, k), jnp.cos(z) * y * tz * k * 2.0

    return g(x, 3.0)


def called_jvp(x, y):
    def g(z):
        return jnp.sin(z) * y

    def g_jvp(p, t):
        return jnp.sin(p[0]) * y, jnp.cos(p[0]) * y * t[0] * 2.0

    h = astjax.custom_jvp(g)
    h.defjvp(g_jvp)
    return h(x)


def called_vjp(x, y):
    def g(z):
        return jnp.sin(z) * y

    def fwd(z):
        return g(z), jnp.cos(z) * y

    def bwd(r, ct):
        return (r * ct * 2.0,)

    h = astjax.custom_vjp(g)
    h.defvjp(fwd, bwd)
    return h(x)


def partial_with_nondiff_argnums(x, y):
    def g_def(z, k):
        return jnp.sin(z) * y * k

    g = partial(astjax.custom_jvp, nondiff_argnums=(1,))(g_def)

    def g_jvp(k, p, t):
        (z,), (tz,) = p, t
        return g(z, k), jnp.cos(z) * y * tz * k * 2.0  # (g here: its value)

    g.defjvp(g_jvp)
    return g(x, 3.0)


XS = jnp.arange(3.0)


def _vmapped_sum_grad(f, argnum):
    return astjax.grad(lambda x, y: astjax.vmap(f, (0, None))(x, y).sum(), argnum)
# JAX 0.10.2: f(1, 2), grad, vmap(grad) at (0, 1, 2) with y = 2, grad(grad) at (1, 2)
RULE_TWICE = (1.6829419, 2.161209, [4.0, 2.161209, -1.6645874], -3.3658838)
NONDIFF = (5.0488257, 6.4836273, [12.0, 6.4836273, -4.993762], -10.0976515)


@pytest.mark.parametrize("f, want", [
    (decorated_jvp, RULE_TWICE), (called_jvp, RULE_TWICE), (called_vjp, RULE_TWICE),
    (decorated_with_nondiff_argnums, NONDIFF), (partial_with_nondiff_argnums, NONDIFF)])
def test_the_rule_is_used(f, want):
    value, slope, slopes, curvature = want
    np.testing.assert_allclose(astjax.jit(f)(1.0, 2.0), value, rtol=1e-6)
    np.testing.assert_allclose(astjax.grad(f)(1.0, 2.0), slope, rtol=1e-6)
    np.testing.assert_allclose(astjax.jit(astjax.grad(f))(1.0, 2.0), slope, rtol=1e-6)
    np.testing.assert_allclose(astjax.jvp(lambda x: f(x, 2.0), (1.0,), (1.0,))[1], slope,
                               rtol=1e-6)
    np.testing.assert_allclose(astjax.vmap(astjax.grad(f))(XS, jnp.full(3, 2.0)), slopes,
                               rtol=1e-6)
    np.testing.assert_allclose(
        astjax.grad(lambda x: astjax.vmap(f, (0, None))(x, 2.0).sum())(XS), slopes, rtol=1e-6)
    # y a run-time value the examples share (the vmapped code did not compile)
    np.testing.assert_allclose(astjax.vmap(f, (0, None))(XS, 2.0),
                               np.sin(np.arange(3.0)) * (value / np.sin(1.0)), rtol=1e-6)
    np.testing.assert_allclose(_vmapped_sum_grad(f, 0)(XS, 2.0), slopes, rtol=1e-6)
    np.testing.assert_allclose(astjax.grad(astjax.grad(f))(1.0, 2.0), curvature, rtol=1e-5)


def _line_of(f, text):
    lines, first = inspect.getsourcelines(f)
    return first + next(k for k, line in enumerate(lines) if text in line)


@pytest.mark.parametrize("f, call", [(called_jvp, "return h(x)"), (called_vjp, "return h(x)"),
                                     (decorated_jvp, "return g(x)")])
def test_a_derivative_into_a_captured_value_is_a_located_error(f, call):
    # the rule reads captured values as constants: grad with respect to y gave 0.0 (JAX
    # raises UnexpectedTracerError, for jvp and jacfwd too)
    transforms = [(astjax.grad(f, 1), 1.0), (_vmapped_sum_grad(f, 1), XS),
                  (astjax.jacfwd(f, 1), 1.0),
                  (lambda x, y: astjax.jvp(lambda y: f(x, y), (y,), (1.0,)), 1.0)]
    for transform, x in transforms if f is called_jvp else transforms[:2]:
        with pytest.raises(TypeError, match="a derivative flows into a value that this "
                           "custom_[jv]+p function .* captured") as info:
            transform(x, 2.0)
        assert info.value.lineno == _line_of(f, call)


def captures_a_constant(x):
    c = jnp.arange(3.0) + 1.0  # (computed from constants: no derivative reaches it)

    def g(z):
        return jnp.sin(z) * c

    def fwd(z):
        return g(z), jnp.cos(z) * c

    def bwd(r, ct):
        return (jnp.sum(r * ct) * 2.0,)

    h = astjax.custom_vjp(g)
    h.defvjp(fwd, bwd)
    return jnp.sum(h(x))


def calls_it(x, y):
    return called_jvp(x, y * 2.0) * y


def test_derivatives_that_do_not_reach_a_captured_value():
    # JAX 0.10.2's values; differentiating with respect to x only, the callee's captured
    # y * 2.0 gets none (as in grad, jacfwd, a jvp of a closure over y)
    np.testing.assert_allclose(astjax.grad(captures_a_constant)(1.0), 6.4836273, rtol=1e-6)
    slope = 4.8627205
    np.testing.assert_allclose(astjax.grad(calls_it)(1.0, 1.5), slope, rtol=1e-6)
    np.testing.assert_allclose(astjax.jacfwd(calls_it)(1.0, 1.5), slope, rtol=1e-6)
    np.testing.assert_allclose(astjax.jit(lambda x, y: astjax.jvp(
        lambda x: calls_it(x, y), (x,), (1.0,))[1])(1.0, 1.5), slope, rtol=1e-6)
    # (the outer derivative differentiates the inner one's rule as written, reaching y)
    np.testing.assert_allclose(astjax.grad(astjax.grad(called_jvp), 1)(1.0, 2.0), 1.0806046,
                               rtol=1e-6)


def jitted_nested_def(x, y):
    @astjax.jit
    def inner(z):
        return z * y

    return inner(x)


def test_decorators_on_nested_defs():
    # they were a located error ('a nested def ... cannot have decorators')
    assert astjax.jit(jitted_nested_def)(2.0, 3.0) == 6.0
    assert astjax.grad(jitted_nested_def)(2.0, 3.0) == 3.0


def test_numba(numba_backend):
    f = astjax.jit(astjax.grad(called_jvp))
    np.testing.assert_allclose(f(1.0, 2.0), RULE_TWICE[1], rtol=1e-6)
    (compiled,) = f.cache.values()
    assert compiled.backend == "numba", compiled.fallback_reason


def _apply(fn, x):
    return fn(x)  # a custom function of a nested function, called in another function


def passes_the_custom_function_on(x, y):
    @astjax.custom_jvp
    def g(z):
        return jnp.sin(z) * y

    g.defjvp(lambda p, t: (jnp.sin(p[0]) * y, t[0]))
    return _apply(g, x)


def test_called_where_its_rule_is_not_is_a_located_error():
    # (the rule's variables are read where it is called: elsewhere they are not in scope)
    with pytest.raises(TypeError, match="can be called only in the function that defines "
                       "its rule") as info:
        astjax.jit(passes_the_custom_function_on)(1.0, 2.0)
    assert info.value.lineno == inspect.getsourcelines(_apply)[1] + 1
