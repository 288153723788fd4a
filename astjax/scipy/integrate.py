"""``astjax.scipy.integrate``, as ``jax.scipy.integrate``: ``trapezoid`` is
``jnp.trapezoid``, as JAX's is."""
from astjax.numpy import trapezoid  # noqa: F401

__all__ = ["trapezoid"]
