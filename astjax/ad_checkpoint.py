"""``jax.ad_checkpoint``: ``checkpoint``, ``checkpoint_name`` and ``checkpoint_policies``."""
from . import checkpoint_policies  # noqa: F401
from ._src.ad.checkpoint import checkpoint, checkpoint_name, remat  # noqa: F401
