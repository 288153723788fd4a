import pytest

import astjax


@pytest.fixture
def x64():
    """Run a test with 64-bit types enabled, restoring the switch after."""
    before = astjax.config.jax_enable_x64
    astjax.config.update("jax_enable_x64", True)
    yield
    astjax.config.update("jax_enable_x64", before)
