"""``astjax.scipy``: special functions and probability distributions, as ``jax.scipy``."""
from . import special, stats  # noqa: F401
