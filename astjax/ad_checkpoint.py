"""``jax.ad_checkpoint``: ``checkpoint``, ``checkpoint_name``, ``checkpoint_policies`` and
``print_saved_residuals``."""
from . import checkpoint_policies  # noqa: F401
from ._src.ad.checkpoint import checkpoint, checkpoint_name, remat  # noqa: F401
from ._src.ad.saved_residuals import print_saved_residuals  # noqa: F401
