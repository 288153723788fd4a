"""``astjax.lax``: lower-level operations, as in ``jax.lax``."""
from ._src.ops.registry import REGISTRY as _REGISTRY

stop_gradient = _REGISTRY["stop_gradient"]

__all__ = ["stop_gradient"]
