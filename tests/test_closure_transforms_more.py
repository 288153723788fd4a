"""jvp, vjp, linearize, checkpoint and jit, inside compiled code, of a nested function that
uses the enclosing function's variables (grad, vmap, ... of one: tests/test_lax.py). Each
was the located error 'jvp() of a nested function that uses variables of the enclosing
function cannot be compiled yet'. Expected values are JAX 0.10.2's (jax.jit and jax.grad
of the same programs), and finite differences. Also print_saved_residuals, at the end."""
import inspect

import numpy as np
import pytest

import astjax
import astjax.numpy as jnp
from astjax.test_util import check_grads

X = np.float32([0.5, 1.0, 2.0])
W = np.float32([0.3, -0.2, 0.4])


def line_of(fn, text):
    lines, start = inspect.getsourcelines(fn)
    return start + next(k for k, line in enumerate(lines) if text in line)


def checkpoint_of_closure(x):
    g = lambda y: jnp.sin(y * x)
    return jnp.sum(astjax.checkpoint(g)(x))


def jit_of_closure(x):
    g = lambda y: jnp.sin(y * x)
    return jnp.sum(astjax.jit(g)(x))


def jvp_of_closure(x):
    g = lambda y: jnp.sin(y * x)
    p, t = astjax.jvp(g, (x,), (jnp.ones_like(x),))
    return jnp.sum(t)


def vjp_of_closure(x):
    g = lambda y: jnp.sin(y * x)
    p, vjp = astjax.vjp(g, x)
    return jnp.sum(vjp(jnp.ones_like(x))[0])


def linearize_of_closure(x):
    g = lambda y: jnp.sin(y * x)
    p, lin = astjax.linearize(g, x)
    return jnp.sum(lin(jnp.ones_like(x)))


# sum(sin(x * x)) and d/dx of it (JAX 0.10.2)
SIN_SQUARE = (0.33207244, [0.9689124, 1.0806046, -2.6145744])
# sum(x cos(x * x)) (the derivative with respect to y at y = x) and d/dx of it, where the
# captured x counts too: cos(x^2) - 2 x^2 sin(x^2), not cos(x^2) - x^2 sin(x^2)
X_COS_SQUARE = (-0.28252876, [0.8452105, -1.1426396, 5.4007764])


@pytest.mark.parametrize("fn,want", [
    (checkpoint_of_closure, SIN_SQUARE),
    (jit_of_closure, SIN_SQUARE),
    (jvp_of_closure, X_COS_SQUARE),
    (vjp_of_closure, X_COS_SQUARE),
    (linearize_of_closure, X_COS_SQUARE),
])
def test_transform_of_a_capturing_closure_in_compiled_code(fn, want):
    value, grad = want
    np.testing.assert_allclose(astjax.jit(fn)(X), value, rtol=1e-6)
    np.testing.assert_allclose(astjax.grad(fn)(X), grad, rtol=1e-5)
    x2 = X ** 2
    if want is X_COS_SQUARE:
        np.testing.assert_allclose(grad, np.cos(x2) - 2 * x2 * np.sin(x2), rtol=1e-5)


@pytest.mark.parametrize("fn", [checkpoint_of_closure, jvp_of_closure, vjp_of_closure,
                                linearize_of_closure])
def test_derivatives_against_finite_differences(fn, x64):
    # forward over these (jvp of a program calling vjp of a closure, ...) and reverse
    check_grads(fn, (X.astype(np.float64),), modes=("fwd", "rev"), rtol=1e-6, atol=1e-8)


def vjp_with_aux_of_two_primals(x, w):
    s = jnp.sum(w)

    def g(a, b):
        return jnp.sin(a * s) * b, a * 2.0
    out, pull, aux = astjax.vjp(g, x, w, has_aux=True)
    da, db = pull(jnp.cos(x))
    return jnp.sum(out) + jnp.sum(da * db) + jnp.sum(aux)


def jvp_capturing_an_int_and_a_closure(x, n):
    h = lambda y: y * x
    g = lambda a, b: jnp.tanh(h(a)) ** n * b
    p, t = astjax.jvp(g, (x, x[0]), (jnp.cos(x), 2.0 * x[1]))
    return jnp.sum(p) + jnp.sum(t)


def linearize_called_twice(x):
    g = lambda y: jnp.exp(y * x)
    out, lin = astjax.linearize(g, x)
    return jnp.sum(out + lin(x) + lin(jnp.ones_like(x)))


def checkpoint_and_jit_with_options(x):
    g = astjax.checkpoint(lambda n, y: jnp.sin(y * x) ** n, static_argnums=(0,),
                          policy=astjax.checkpoint_policies.nothing_saveable)
    h = astjax.jit(lambda y: jnp.cos(y * x), static_argnums=())
    return jnp.sum(g(2, x) * h(x))


def test_more_arguments_and_options():
    np.testing.assert_allclose(astjax.jit(vjp_with_aux_of_two_primals)(X, W), 7.3460813,
                               rtol=1e-6)
    dx, dw = astjax.grad(vjp_with_aux_of_two_primals, (0, 1))(X, W)
    np.testing.assert_allclose(dx, [2.1657705, 1.9426126, 2.1696696], rtol=1e-5)
    np.testing.assert_allclose(dw, [0.810178, 1.0113039, 1.351305], rtol=1e-5)
    # an int captured (its tangent is None) and a closure captured by the closure
    np.testing.assert_allclose(astjax.jit(jvp_capturing_an_int_and_a_closure)(X, 3), 3.868926,
                               rtol=1e-6)
    np.testing.assert_allclose(astjax.grad(jvp_capturing_an_int_and_a_closure)(X, 3),
                               [2.6637125, 6.2867856, 0.049040087], rtol=1e-5, atol=2e-5)
    np.testing.assert_allclose(astjax.jit(linearize_called_twice)(X), 392.58896, rtol=1e-6)
    np.testing.assert_allclose(astjax.grad(linearize_called_twice)(X),
                               [4.8150954, 24.464535, 1801.739], rtol=1e-5)
    # static_argnums counts the closure's own parameters (moved by one in its lifted form)
    np.testing.assert_allclose(astjax.jit(checkpoint_and_jit_with_options)(X), 0.06750514,
                               rtol=1e-5)
    np.testing.assert_allclose(astjax.grad(checkpoint_and_jit_with_options)(X),
                               [0.4493781, -0.20905545, -0.8529161], rtol=1e-5)


def test_under_vmap_and_second_order():
    x2 = np.float32([[0.5, 1.0, 2.0], [0.1, -0.3, 0.7]])
    np.testing.assert_allclose(astjax.vmap(jvp_of_closure)(x2), [-0.28252876, 0.41884214],
                               rtol=1e-6)
    np.testing.assert_allclose(astjax.vmap(astjax.grad(vjp_of_closure))(x2),
                               [[0.8452105, -1.1426396, 5.4007764],
                                [0.99974996, 0.9797746, 0.4211195]], rtol=1e-5)
    np.testing.assert_allclose(astjax.jacfwd(astjax.grad(jvp_of_closure))(X),
                               np.diag([-1.2266681, -7.210035, 29.998226]), rtol=1e-5,
                               atol=1e-6)


def jvp_with_a_primal_too_many(x):
    g = lambda y: jnp.sin(y * x)
    return astjax.jvp(g, (x, x), (x, x))[1]


def test_primal_count_is_a_located_error():
    with pytest.raises(TypeError, match="jvp: the function takes 1 argument, got 2 primals") \
            as info:
        astjax.jit(jvp_with_a_primal_too_many)(X)
    assert info.value.filename == __file__
    assert info.value.lineno == line_of(jvp_with_a_primal_too_many, "astjax.jvp")


def all_five(x):
    g = lambda y: jnp.sin(y * x)
    t = astjax.jvp(g, (x,), (jnp.ones_like(x),))[1]
    ct = astjax.vjp(g, x)[1](t)[0]
    lt = astjax.linearize(g, x)[1](ct)
    return jnp.sum(astjax.checkpoint(g)(lt) + astjax.jit(g)(x))


def test_numba(numba_backend):
    jitted = astjax.jit(astjax.grad(all_five))
    got = jitted(X)
    (compiled,) = jitted.cache.values()
    assert compiled.backend == "numba", compiled.fallback_reason
    astjax.config.update("astjax_jit_backend", "python")
    np.testing.assert_allclose(got, astjax.jit(astjax.grad(all_five))(X), rtol=1e-5)


# --- print_saved_residuals --------------------------------------------------------------------

def residual_example(x, w):
    y = jnp.sin(x * w)
    z = jnp.dot(y, w)
    return jnp.tanh(z) + 2.0


def residual_loop(x):
    s = 0.0
    for i in range(3):
        s = s + jnp.sum(jnp.cos(x) * x)
    return s


def _residual_callee(v):
    return jnp.sum(jnp.exp(v) * v)


def residual_call(x):
    return _residual_callee(jnp.sin(x)) * 2.0


def residual_branch(x, flag):
    if flag > 0:
        y = jnp.sin(x)
    else:
        y = jnp.cos(x)
    return jnp.sum(y * y)


def test_print_saved_residuals(capsys):
    from astjax.ad_checkpoint import print_saved_residuals
    x, w = np.float32([1, 2, 3]), np.float32([0.1, 0.2, 0.3])
    print_saved_residuals(residual_example, x, w)
    at = lambda text: f"from {__file__}:{line_of(residual_example, text)} (residual_example)"
    assert capsys.readouterr().out.splitlines() == [
        "f32[3] from the argument x",
        "f32[3] from the argument w",
        f"f32[3] output of mul {at('jnp.sin')}",
        f"f32[3] output of sin {at('jnp.sin')}",
        f"f32[] output of dot {at('jnp.dot')}",
        f"f32[] output of tanh {at('jnp.tanh')}",
        f"f32[] output of add {at('jnp.tanh')}",
    ]
    # checkpoint(f) keeps only its arguments, as JAX's prints
    print_saved_residuals(astjax.checkpoint(residual_example), x, w)
    assert capsys.readouterr().out.splitlines() == ["f32[3] from the argument x",
                                                    "f32[3] from the argument w"]
    # a loop's tapes: a value per trip
    print_saved_residuals(residual_loop, x)
    out = capsys.readouterr().out.splitlines()
    loop = f"{__file__}:{line_of(residual_loop, 'for i')}"
    cos = f"output of cos from {__file__}:{line_of(residual_loop, 'jnp.cos')} (residual_loop)"
    assert [f"f32[3] {cos}, trip {k} of the loop at {loop}" for k in range(3)] == \
        [line for line in out if "output of cos" in line]
    assert out[-1] == f"i32[] the trip count of the loop at {loop}"
    # a callee's output and what its own backward sweep reads
    print_saved_residuals(residual_call, x)
    at = f"from {__file__}:{line_of(residual_call, '_residual_callee(')} (residual_call)"
    out = capsys.readouterr().out.splitlines()
    assert f"f32[] output of _residual_callee {at}" in out
    assert out.count(f"f32[3] saved by _residual_callee, called {at}") == 2
    # a value set in either branch: both, as either may have run
    print_saved_residuals(residual_branch, x, np.float32(1))
    at = lambda text: f"from {__file__}:{line_of(residual_branch, text)} (residual_branch)"
    assert f"f32[3] output of sin {at('jnp.sin')} or output of cos {at('jnp.cos')}" in \
        capsys.readouterr().out.splitlines()
