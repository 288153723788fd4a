"""``astjax.scipy``: linear algebra, special functions, probability distributions,
signal processing, DCTs, integration, interpolation and clustering, as ``jax.scipy``."""
from . import (cluster, fft, integrate, interpolate, linalg, ndimage, signal,  # noqa: F401
               special, stats)
