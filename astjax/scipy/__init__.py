"""``astjax.scipy``: linear algebra, special functions, probability distributions,
signal processing, DCTs, integration and interpolation, as ``jax.scipy``."""
from . import (fft, integrate, interpolate, linalg, ndimage, signal, special,  # noqa: F401
               stats)
