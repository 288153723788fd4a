"""``astjax.scipy``: linear algebra, special functions, probability distributions and
signal processing, as ``jax.scipy``."""
from . import linalg, signal, special, stats  # noqa: F401
