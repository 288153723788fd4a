"""custom_gradient, linear_transpose, closure_convert, named_call, named_scope,
ensure_compile_time_eval and clear_caches (astjax/_src/misc_api.py), against JAX 0.10.2's
values for the same calls (written as literals) and the analytic derivatives."""
from functools import partial

import numpy as np
import pytest

import astjax
import astjax.numpy as jnp


@astjax.custom_gradient
def sin_with_rule(x):
    return jnp.sin(x), lambda g: (g * 3.0 * x,)


@astjax.custom_gradient
def product_with_rule(x, y):
    return x * y, lambda g: (g * y, g * x * 10)


@astjax.custom_gradient
def double_with_bare_cotangent(x):
    return x * 2, lambda g: g * 5  # one argument: a bare cotangent, as JAX accepts


def test_custom_gradient():
    # JAX: 0.84147096 3.0 6.0 [0. 3. 6.], (3.0, 20.0), 5.0, and 3.0 for grad of grad
    # (the rule as written, differentiated)
    np.testing.assert_allclose(sin_with_rule(1.0), 0.84147096)
    assert astjax.grad(sin_with_rule)(1.0) == 3.0
    assert astjax.jit(astjax.grad(sin_with_rule))(2.0) == 6.0
    np.testing.assert_allclose(astjax.vmap(astjax.grad(sin_with_rule))(jnp.arange(3.0)),
                               [0.0, 3.0, 6.0])
    assert astjax.grad(product_with_rule, (0, 1))(2.0, 3.0) == (3.0, 20.0)
    assert astjax.grad(double_with_bare_cotangent)(1.0) == 5.0
    assert astjax.grad(astjax.grad(sin_with_rule))(1.0) == 3.0


def test_linear_transpose():
    lt = astjax.linear_transpose(lambda x, y: 2 * x + y.sum(), 1.0, jnp.ones(3))
    got = lt(1.0)  # JAX: (2.0, [1. 1. 1.])
    assert isinstance(got, tuple) and got[0] == 2.0
    np.testing.assert_array_equal(got[1], np.ones(3, np.float32))
    got = astjax.jit(lt)(2.0)  # JAX: (4.0, [2. 2. 2.])
    assert got[0] == 4.0 and np.array_equal(got[1], np.full(3, 2.0, np.float32))
    lt2 = astjax.linear_transpose(lambda x: (x * 3, x[:2]),
                                  astjax.ShapeDtypeStruct((3,), jnp.float32))
    (ct,) = lt2((jnp.ones(3), jnp.ones(2)))  # JAX: ([4. 4. 3.],)
    np.testing.assert_array_equal(ct, np.float32([4, 4, 3]))
    with pytest.raises(ValueError, match="shapes differ"):  # JAX: TypeError, same check
        lt(jnp.ones(2))


@partial(astjax.custom_vjp, nondiff_argnums=(0,))
def apply_with_rule(fn, x, c):
    return fn(x, c)


def _apply_fwd(fn, x, c):
    return fn(x, c), (x, c)


def _apply_bwd(fn, res, g):
    x, c = res
    return g * 100.0, jnp.zeros_like(c)


apply_with_rule.defvjp(_apply_fwd, _apply_bwd)


def converted_closure_through_a_custom_vjp(x, y):
    g = lambda z: jnp.sin(z) * y
    gc, consts = astjax.closure_convert(g, x)
    return gc(x, *consts) + apply_with_rule(gc, x, *consts)


def converted_closure_of_constants(x):
    g = lambda z: jnp.sin(z) * 2.0
    gc, consts = astjax.closure_convert(g, x)
    return gc(x, *consts)


def test_closure_convert():
    w = jnp.ones(3)
    gc, consts = astjax.closure_convert(lambda z: z * w, jnp.ones(3))
    assert consts == []  # as JAX: concrete captured values are not hoisted
    np.testing.assert_array_equal(gc(jnp.full(3, 2.0)), np.full(3, 2.0))
    # in compiled code, the captured run-time values are the consts (JAX: 3.3658838; its
    # grad with respect to x 101.080605, cos(1) * 2 + the rule's 100)
    f = converted_closure_through_a_custom_vjp
    np.testing.assert_allclose(astjax.jit(f)(1.0, 2.0), 3.3658838, rtol=1e-6)
    np.testing.assert_allclose(astjax.grad(f)(1.0, 2.0), 101.080605, rtol=1e-6)
    np.testing.assert_allclose(astjax.jit(converted_closure_of_constants)(1.0),
                               2 * np.sin(1.0), rtol=1e-6)


def named_call_of_a_closure(x, y):
    return astjax.named_call(lambda z: jnp.sin(z) * y, name="g")(x)


def test_named_call_scope_and_compile_time_eval():
    assert astjax.named_call(lambda x: x + 1, name="foo")(1.0) == 2.0
    np.testing.assert_allclose(astjax.jit(named_call_of_a_closure)(1.0, 2.0),
                               2 * np.sin(1.0), rtol=1e-6)
    np.testing.assert_allclose(astjax.grad(named_call_of_a_closure)(1.0, 2.0),
                               2 * np.cos(1.0), rtol=1e-6)
    with astjax.named_scope("layer"):
        assert astjax.jit(lambda x: x * 2)(3.0) == 6.0
    with pytest.raises(TypeError, match="must be a string"):
        with astjax.named_scope(3):
            pass
    with astjax.ensure_compile_time_eval():
        assert isinstance(jnp.ones(2) + 1, astjax.Array)


def test_clear_caches():
    f = astjax.jit(lambda x: x + 1)
    assert f(1.0) == 2.0 and len(f.cache) == 1
    assert astjax.clear_caches() is None
    assert len(f.cache) == 0
    assert f(2.0) == 3.0 and len(f.cache) == 1


def with_noop_contexts(x):
    with astjax.named_scope("layer"):
        y = x * 2
        with astjax.named_scope("inner"), astjax.ensure_compile_time_eval():
            y = y + 1
    return y


def with_another_context(x):
    with open(__file__) as fh:
        x = x + len(fh.name)
    return x


def test_noop_context_managers_in_compiled_code():
    # a with of named_scope / ensure_compile_time_eval is its body ('cannot compile with')
    assert astjax.jit(with_noop_contexts)(1.0) == 3.0
    assert astjax.grad(with_noop_contexts)(1.0) == 2.0
    from astjax._src.errors import UnsupportedSyntaxError
    with pytest.raises(UnsupportedSyntaxError, match="cannot compile with"):
        astjax.jit(with_another_context)(1.0)


class _Quadratic:
    def __init__(self, c):
        self.c = c

    def __call__(self, x):
        return self.c[0] + self.c[1] * x + self.c[2] * x ** 2


def test_transforms_of_an_object_with_a_call_method():
    """jit(obj), vmap(obj), grad(obj) of an instance whose class defines __call__ transform
    obj.__call__, as JAX does; they raised "'_Quadratic' object has no attribute
    '__name__'"."""
    q = _Quadratic(np.array([1.0, 2.0, 3.0], np.float32))
    x = np.array([0.5, 1.0], np.float32)
    want = 1 + 2 * x + 3 * x ** 2
    np.testing.assert_allclose(astjax.jit(q)(x), want, rtol=1e-6)
    np.testing.assert_allclose(astjax.vmap(q)(x), want, rtol=1e-6)
    assert float(astjax.grad(q)(1.0)) == 8.0


def test_scipy_is_an_attribute_after_import_astjax(tmp_path):
    """jax.scipy.special.logsumexp works after `import jax`; so does astjax's, in compiled
    code too (there it was "module has no attribute 'scipy'"). A new process: in this one
    another test may have imported astjax.scipy already."""
    import subprocess
    import sys
    script = (
        "import numpy as np, scipy.special, astjax\n"
        "astjax.config.update('astjax_jit_backend', 'python')\n"
        "x = np.float32([[0.5, -1.0], [2.0, 0.25]])\n"
        "f = astjax.jit(lambda v: astjax.scipy.special.logsumexp(v, axis=1))\n"
        "np.testing.assert_allclose(f(x), scipy.special.logsumexp(x, axis=1), rtol=1e-6)\n"
        "try:\n"
        "    astjax.scipyy\n"
        "except AttributeError as e:\n"
        "    assert \"no attribute 'scipyy'\" in str(e)\n"
        "else:\n"
        "    raise AssertionError('no error')\n")
    (tmp_path / "use_scipy.py").write_text(script)  # (compiled code needs a source file)
    done = subprocess.run([sys.executable, str(tmp_path / "use_scipy.py")],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def _scaled_sin(x, n=2):
    return jnp.sin(x) * n


def test_jit_lower_and_compile_as_jax():
    """jax.jit(f).lower(*args).compile() (JAX's ahead-of-time API) gave "'Jitted' object has
    no attribute 'lower'": lowered code for those argument types, callable with arguments
    of the same types (any batch size), a TypeError for others; as_text() is the source."""
    x = np.float32([1.0, 2.0, 3.0])
    lowered = astjax.jit(_scaled_sin, static_argnums=1).lower(x, 3)
    assert "def _scaled_sin" in lowered.as_text()
    compiled = lowered.compile()
    np.testing.assert_allclose(compiled(x, 3), np.sin(x) * 3, rtol=1e-6)
    np.testing.assert_allclose(compiled(x[:2], 3), np.sin(x[:2]) * 3, rtol=1e-6)
    with pytest.raises(TypeError, match=r"static 4\) differ from the types it was lowered "
                       r"for \(f32\[_\], static 3\)"):
        compiled(x, 4)
    with pytest.raises(TypeError, match="differ from the types it was lowered for"):
        compiled(x[None], 3)
