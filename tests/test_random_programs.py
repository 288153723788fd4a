"""Random elementwise programs on the Numba backend against running them eagerly, and
their jit(grad) against the python backend's grad (see random_programs.py)."""
import importlib.util

import numpy as np
import pytest

import astjax

from .random_programs import program

SEEDS = [2, 5, 10]  # ones that mix ranks, loops, reductions and redefinitions


def _load(seed, tmp_path):
    path = tmp_path / f"prog_{seed}.py"
    path.write_text("import astjax.numpy as jnp\n\n\n" + program(seed))
    spec = importlib.util.spec_from_file_location(f"prog_{seed}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, f"prog_{seed}")


@pytest.mark.parametrize("seed", SEEDS)
def test_random_program_matches_eager_and_its_gradient(seed, tmp_path):
    fn = _load(seed, tmp_path)
    rng = np.random.default_rng(seed)
    a, b = (rng.normal(size=5).astype(np.float32) for _ in range(2))
    c, s = rng.normal(size=(3, 5)).astype(np.float32), np.float32(0.7)

    def loss(a, b, c, s):
        return fn(a, b, c, s)[1]

    want, want_grad = fn(a, b, c, s), astjax.grad(loss)(a, b, c, s)  # the python backend
    astjax.config.update("astjax_jit_backend", "numba")
    try:
        jitted, jitted_grad = astjax.jit(fn), astjax.jit(astjax.grad(loss))
        got, got_grad = jitted(a, b, c, s), jitted_grad(a, b, c, s)
    finally:
        astjax.config.update("astjax_jit_backend", "python")
    for compiled in list(jitted.cache.values()) + list(jitted_grad.cache.values()):
        assert compiled.backend == "numba", compiled.fallback_reason
    for g, w in zip(got[0], want[0]):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=2e-5, atol=1e-5)
    np.testing.assert_allclose(np.asarray(got_grad), np.asarray(want_grad), rtol=1e-4,
                               atol=1e-5)
