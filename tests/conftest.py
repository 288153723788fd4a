import pytest

import astjax

# jit runs the python backend in the suite (no Numba compile per test); the Numba backend
# is tested against it in tests/test_numba_*.py, which switch backends explicitly
astjax.config.update("astjax_jit_backend", "python")


@pytest.fixture
def x64():
    """Run a test with 64-bit types enabled, restoring the switch after."""
    before = astjax.config.jax_enable_x64
    astjax.config.update("jax_enable_x64", True)
    yield
    astjax.config.update("jax_enable_x64", before)


@pytest.fixture
def numba_backend():
    """Run a test with jit on the Numba backend, restoring the switch after."""
    before = astjax.config.astjax_jit_backend
    astjax.config.update("astjax_jit_backend", "numba")
    yield
    astjax.config.update("astjax_jit_backend", before)
