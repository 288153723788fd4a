"""``lax.conv_transpose``, as JAX's: a ``conv_general_dilated`` with unit window strides,
the input dilated by ``strides``, and padding computed from the kernel's size for 'SAME'
and 'VALID' (and for explicit forward pads with ``use_consistent_padding``), following
keras' Conv2DTranspose. The kernel's size is a run-time int in compiled code, so those
pads are computed at run time (``windowed.conv_from_spec``).
"""
import astjax.numpy as jnp

from ..random.checks import static_helper  # evaluated while generating code
from .windowed import _conv_spec, _ints, _perms, conv_from_spec

_DEFAULT_DIMENSION_NUMBERS = {3: ("NHC", "HIO", "NHC"), 4: ("NHWC", "HWIO", "NHWC"),
                              5: ("NHWDC", "HWDIO", "NHWDC")}


@static_helper
def _transpose_spec(lhs_ndim, rhs_ndim, strides, padding, rhs_dilation, dimension_numbers,
                    use_consistent_padding):
    fn = "conv_transpose"
    if lhs_ndim != rhs_ndim or lhs_ndim < 3:
        raise TypeError(f"{fn}: lhs and rhs must have the same rank, at least 3, got "
                        f"{lhs_ndim} and {rhs_ndim}")
    n = lhs_ndim - 2
    if dimension_numbers is None:
        if lhs_ndim not in _DEFAULT_DIMENSION_NUMBERS:
            raise ValueError("No 4+ dimensional dimension_number defaults.")
        dimension_numbers = _DEFAULT_DIMENSION_NUMBERS[lhs_ndim]
    strides = _ints(strides, n, 1, "strides", fn)
    dilation = _ints(rhs_dilation, n, 1, "rhs_dilation", fn)
    rhs_perm = _perms(dimension_numbers, lhs_ndim)[1]
    per_axis = None
    spec_padding = padding
    if use_consistent_padding or (isinstance(padding, str) and padding in ("SAME", "VALID")):
        per_axis = (padding,) * n if isinstance(padding, str) else \
            tuple(tuple(int(p) for p in pair) for pair in padding)
        for p in per_axis:
            if p not in ("SAME", "VALID") and not (isinstance(p, tuple) and len(p) == 2):
                raise ValueError(f"Invalid padding mode: {p}")
        if len(per_axis) != n:
            raise ValueError(f"{fn}: padding has {len(per_axis)} pairs for {n} spatial "
                             f"dimensions")
        spec_padding = ((1, 1),) * n  # (any padding: every axis masked, pads run-time)
    return (dimension_numbers, (1,) * n, strides, dilation, rhs_perm, per_axis,
            spec_padding)


def _kernel_pads(shape, rhs_perm, strides, dilation, per_axis, d):
    """The (low, high) pads of each spatial axis from ``d`` on, from the dilated kernel's
    size ``k`` and the stride ``s`` (JAX's ``_conv_transpose_padding``)."""
    if d == len(strides):
        return ()
    k = (shape[rhs_perm[2 + d]] - 1) * dilation[d] + 1
    s = strides[d]
    p = per_axis[d]
    if p == "SAME":
        pad_len = k + s - 2
        pad_a = jnp.minimum(k - 1, (pad_len + 1) // 2)  # k - 1 when s > k - 1
    elif p == "VALID":
        pad_len = k + s - 2 + jnp.maximum(k - s, 0)
        pad_a = k - 1
    else:
        pad_a = k - p[0] - 1
        pad_len = pad_a + k - p[1] - 1
    return ((pad_a, pad_len - pad_a),) + _kernel_pads(shape, rhs_perm, strides, dilation,
                                                      per_axis, d + 1)


def conv_transpose(lhs, rhs, strides, padding, rhs_dilation=None, dimension_numbers=None,
                   transpose_kernel=False, precision=None, preferred_element_type=None,
                   use_consistent_padding=False):
    """``lax.conv_transpose``: the transposed convolution of ``lhs`` with ``rhs``
    (``dimension_numbers`` default to channels last, ``('NHWC', 'HWIO', 'NHWC')`` in 2-D).
    ``padding`` 'SAME' or 'VALID' is the forward convolution's (the output is ``strides``
    times larger for 'SAME'); explicit ``(low, high)`` pairs pad the dilated input, or with
    ``use_consistent_padding`` are the forward convolution's too. ``transpose_kernel``
    flips the kernel's spatial axes and swaps its in and out channels (the gradient of
    ``conv_general_dilated``). ``precision`` is ignored."""
    x, w = jnp.asarray(lhs), jnp.asarray(rhs)
    (dn, ones, strides, dilation, rhs_perm, per_axis,
     spec_padding) = _transpose_spec(x.ndim, w.ndim, strides, padding, rhs_dilation,
                                     dimension_numbers, use_consistent_padding)
    if transpose_kernel:
        w = jnp.swapaxes(jnp.flip(w, axis=rhs_perm[2:]), rhs_perm[0], rhs_perm[1])
    spec = _conv_spec(x.ndim, w.ndim, ones, spec_padding, strides, dilation, dn, 1, 1)
    if per_axis is None:
        pads = spec[4]
    else:
        pads = _kernel_pads(w.shape, rhs_perm, strides, dilation, per_axis, 0)
    return conv_from_spec(x, w, spec, pads, 1, preferred_element_type)
