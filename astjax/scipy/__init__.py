"""``astjax.scipy``: linear algebra, special functions, probability distributions,
signal processing, DCTs and integration, as ``jax.scipy``."""
from . import fft, integrate, linalg, signal, special, stats  # noqa: F401
