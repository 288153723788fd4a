"""Optional: gradients against JAX as an oracle, when JAX is installed (CI has no JAX).

Each program from ad_programs is run twice from the same code object: once with astjax
(``jnp`` = astjax.numpy) and once with ``jnp`` rebound to ``jax.numpy``.
Run it with JAX on the path, e.g. ``PYTHONPATH=<a venv with jax>/site-packages``.
"""
import types

import numpy as np
import pytest

import astjax

from . import ad_programs as P

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)


def as_jax(fn):
    namespace = dict(fn.__globals__, jnp=jax.numpy, np=jax.numpy)
    return types.FunctionType(fn.__code__, namespace, fn.__name__, fn.__defaults__)


rng = np.random.default_rng(1)
X = rng.standard_normal(4)
Y = rng.uniform(0.5, 1.5, 4)


@pytest.mark.parametrize("fn,args,argnums", [
    (P.poly, (0.3,), 0), (P.sum_logistic, (X,), 0), (P.broadcasting, (X, Y), (0, 1)),
    (P.loop_for, (X, 4), 0), (P.loop_while, (X,), 0), (P.branches, (X, -2), 0),
    (P.value_branch, (X,), 0), (P.break_early, (X, 6), 0), (P.reassign, (X,), 0),
    (P.numpy_style, (X,), 0), (P.nested_loops, (X, 3), 0),
])
def test_grad_matches_jax(fn, args, argnums, x64):
    ours = astjax.grad(fn, argnums=argnums)(*args)
    theirs = jax.grad(as_jax(fn), argnums=argnums)(*args)
    for a, b in zip(ours if isinstance(argnums, tuple) else (ours,),
                    theirs if isinstance(argnums, tuple) else (theirs,)):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("fn", P.COMPLEX_FUNCTIONS, ids=lambda f: f.__name__)
def test_complex_grad_matches_jax(fn, x64):
    z = X + 1j * Y
    np.testing.assert_allclose(np.asarray(astjax.grad(fn)(z)),
                               np.asarray(jax.grad(as_jax(fn))(z)), rtol=1e-10, atol=1e-12)


def test_hessian_matches_jax(x64):
    w = np.array([0.3, -0.2, 0.5])
    np.testing.assert_allclose(astjax.hessian(P.numpy_style)(w),
                               jax.hessian(as_jax(P.numpy_style))(w), rtol=1e-10)
