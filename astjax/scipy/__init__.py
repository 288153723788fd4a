"""``astjax.scipy``: linear algebra, special functions, probability distributions,
signal processing, DCTs, integration, interpolation, clustering and BFGS, as ``jax.scipy``."""
from . import (cluster, fft, integrate, interpolate, linalg, ndimage, optimize,  # noqa: F401
               signal, special, stats)
