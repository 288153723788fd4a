"""``astjax.dtypes``: the dtype of gradients with respect to integer inputs, as in JAX."""
from ._src.dtypes import float0

__all__ = ["float0"]
