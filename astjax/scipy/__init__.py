"""``astjax.scipy``: linear algebra, special functions, probability distributions,
signal processing, DCTs, integration and interpolation, as ``jax.scipy``."""
from . import fft, integrate, linalg, ndimage, signal, special, stats  # noqa: F401
