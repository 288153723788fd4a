"""``jax.checkpoint_policies``: JAX's names, accepted by ``checkpoint(policy=...)``. astjax
saves nothing inside a checkpointed function under any of them but ``everything_saveable``
(see ``astjax._src.ad.checkpoint``)."""
from ._src.ad.checkpoint import (  # noqa: F401
    checkpoint_dots, checkpoint_dots_with_no_batch_dims, dots_saveable,
    dots_with_no_batch_dims_saveable, everything_saveable, nothing_saveable,
    offload_dot_with_no_batch_dims, save_and_offload_only_these_names, save_any_names_but_these,
    save_anything_except_these_names, save_from_both_policies, save_only_these_names)
