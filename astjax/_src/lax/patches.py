"""``lax.conv_general_dilated_patches``: the patches a convolution with a kernel of
``filter_shape`` would see, as JAX's (whose output channel ``c * prod(filter_shape) + s``
holds input channel ``c`` at filter position ``s``, in C order), gathered directly with
``windowed._windows`` (JAX convolves with an identity kernel grouped per channel; the
channel count is a run-time int in compiled code).
"""
import numpy as np

import astjax.numpy as jnp

from ..random.checks import static_helper  # evaluated while generating code
from .windowed import _conv_spec, _windows


@static_helper
def _patches_spec(ndim, filter_shape, window_strides, padding, lhs_dilation, rhs_dilation,
                  dimension_numbers):
    filter_shape = tuple(int(k) for k in filter_shape)
    if len(filter_shape) != ndim - 2:
        raise ValueError(f"conv_general_dilated_patches: filter_shape {filter_shape} must "
                         f"have {ndim - 2} entries, one per spatial dimension")
    (lhs_perm, _, back, strides, pads, lhs_dil, rhs_dil, _, spatial,
     modes) = _conv_spec(ndim, ndim, window_strides, padding, lhs_dilation, rhs_dilation,
                         dimension_numbers, 1, 1)
    n = ndim - 2
    # after _windows: N C (o1 k1) (o2 k2) ...; the window axes k go right after C
    order = (0, 1) + tuple(3 + 2 * d for d in range(n)) + tuple(2 + 2 * d for d in range(n))
    return (lhs_perm, back, strides, pads, lhs_dil, rhs_dil, modes, filter_shape,
            tuple(range(n)), order, int(np.prod(filter_shape)))


def _out_sizes(shape, n, d):
    """The output spatial sizes: axes 2, 4, ... of the windows' shape."""
    if d == n:
        return ()
    return (shape[2 + 2 * d],) + _out_sizes(shape, n, d + 1)


def conv_general_dilated_patches(lhs, filter_shape, window_strides, padding,
                                 lhs_dilation=None, rhs_dilation=None,
                                 dimension_numbers=None, precision=None,
                                 preferred_element_type=None):
    """The patches of ``lhs`` (one per output position, flattened into the channel
    dimension: ``C * prod(filter_shape)`` channels) that ``conv_general_dilated`` with a
    kernel of spatial shape ``filter_shape`` and the same arguments would multiply, in
    the output layout of ``dimension_numbers``."""
    x = jnp.asarray(lhs)
    (lhs_perm, back, strides, pads, lhs_dil, rhs_dil, modes, sizes, size_axes, order,
     window) = _patches_spec(x.ndim, filter_shape, window_strides, padding, lhs_dilation,
                             rhs_dilation, dimension_numbers)
    x = jnp.transpose(x, lhs_perm)
    patches = _windows(x, jnp.zeros((), x.dtype), 2, sizes, size_axes, strides, pads,
                       lhs_dil, rhs_dil, modes, 0)
    out_sizes = _out_sizes(patches.shape, len(sizes), 0)
    patches = jnp.transpose(patches, order)
    out = jnp.reshape(patches, (patches.shape[0], x.shape[1] * window) + out_sizes)
    out = jnp.transpose(out, back)
    if preferred_element_type is not None:
        out = out.astype(preferred_element_type)
    return out
