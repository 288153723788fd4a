"""``lax.ragged_dot``: ``lhs``'s rows in consecutive groups (``group_sizes``), each group
multiplied by its own ``rhs[g]``, as JAX's; rows past the groups' total are zeros. Plain
``astjax.numpy`` code (each row's group, its ``rhs`` slice gathered, one ``einsum``), so
jit, grad and vmap need no new rules.
"""
import astjax.numpy as jnp

from ..random.checks import static_helper  # evaluated while generating code


@static_helper
def _check(lhs_ndim, rhs_ndim, gs_ndim, group_offset):
    if group_offset is not None:
        raise NotImplementedError("ragged_dot: group_offset is not supported")
    if lhs_ndim != 2 or rhs_ndim != 3 or gs_ndim != 1:
        raise TypeError(f"ragged_dot takes lhs [m, k], rhs [g, k, n] and group_sizes [g]; "
                        f"got arrays of rank {lhs_ndim}, {rhs_ndim} and {gs_ndim}")


def ragged_dot(lhs, rhs, group_sizes, precision=None, preferred_element_type=None,
               group_offset=None):
    """``out[i] = lhs[i] @ rhs[g(i)]``, ``g(i)`` the group of row ``i`` (groups of
    ``group_sizes[0]``, ``group_sizes[1]``, ... consecutive rows); rows after the last
    group are zeros. ``precision`` is ignored, as elsewhere."""
    lhs, rhs, group_sizes = jnp.asarray(lhs), jnp.asarray(rhs), jnp.asarray(group_sizes)
    _check(lhs.ndim, rhs.ndim, group_sizes.ndim, group_offset)
    if lhs.shape[1] != rhs.shape[1]:
        raise TypeError(f"dot_general requires contracting dimensions to have the same "
                        f"shape, got ({lhs.shape[1]},) and ({rhs.shape[1]},).")
    if group_sizes.shape[0] != rhs.shape[0]:
        raise TypeError(f"expected rhs group dimension size to be {group_sizes.shape[0]}, "
                        f"got {rhs.shape[0]}.")
    ends = jnp.cumsum(group_sizes)
    rows = jnp.arange(lhs.shape[0])
    group = jnp.sum((rows[:, None] >= ends[None, :]).astype(jnp.int32), axis=1)
    inside = group < rhs.shape[0]
    per_row = rhs[jnp.minimum(group, rhs.shape[0] - 1)]
    out = jnp.einsum("mk,mkn->mn", lhs, per_row, preferred_element_type=preferred_element_type)
    return jnp.where(inside[:, None], out, jnp.zeros_like(out))
