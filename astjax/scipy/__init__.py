"""``astjax.scipy``: linear algebra, special functions and probability distributions, as ``jax.scipy``."""
from . import linalg, special, stats  # noqa: F401
