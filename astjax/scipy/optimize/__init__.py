"""``astjax.scipy.optimize``, as ``jax.scipy.optimize``: ``minimize`` (method 'BFGS') and
its ``OptimizeResults``."""
from ._minimize import OptimizeResults, minimize  # noqa: F401
