"""``lax.reduce_window`` (pooling) and ``lax.conv_general_dilated`` (with ``conv`` and
``conv_with_general_padding``), written with ``astjax.numpy`` ops and compiled like user
code, so jit (both backends), grad and vmap need no new rules.

Both gather windows: each spatial axis of size ``n`` becomes two axes ``(out, k)`` by one
gather with computed indices (the position ``o * stride + j * dilation - pad_low`` in the
base-dilated operand), masked where that position is padding or a dilation hole. A
convolution is then one ``einsum`` of those patches with the kernel (im2col), a pooling one
reduction over the window axes. Sizes are run-time ints in compiled code, so 'SAME' padding
is computed at run time too.
"""
import operator

import numpy as np

import astjax.numpy as jnp

from ..random.checks import static_helper  # evaluated while generating code
from . import elementwise as _lax_ew
from .reduce import reduce_one


def _window_axis(x, fill, k, stride, dilation, lo, hi, base, exact):
    """``x``'s last axis (of size n) replaced by two, ``(out, k)``: the windows of ``k``
    elements ``dilation`` apart, every ``stride`` positions, in ``x`` dilated by ``base`` and
    padded by ``lo`` and ``hi``; ``fill`` at padding and holes. ``exact``: no padding before,
    none after and no holes, so every position is inside and nothing is masked."""
    n = x.shape[-1]
    padded = jnp.maximum((n - 1) * base + 1, 0) + lo + hi
    out = jnp.maximum((padded - ((k - 1) * dilation + 1)) // stride + 1, 0)
    pos = jnp.expand_dims(jnp.arange(out) * stride - lo, -1) + jnp.arange(k) * dilation
    if exact:
        return x[..., pos]
    src = pos // base
    inside = jnp.logical_and(jnp.logical_and(pos >= 0, pos % base == 0), src < n)
    return jnp.where(inside, x[..., jnp.clip(src, 0, n - 1)], fill)


def _same_pads(n, k, stride, dilation, lower):
    """'SAME' padding of an axis of ``n`` for a window of ``k`` (run-time ints)."""
    out = (n + stride - 1) // stride
    total = jnp.maximum((out - 1) * stride + (k - 1) * dilation + 1 - n, 0)
    small = total // 2
    return (total - small, small) if lower else (small, total - small)


def _windows(x, fill, first, sizes, size_axes, strides, pads, base, dilation, modes, d):
    """``x`` with each axis from ``first`` on (one per entry of ``strides``) replaced by its
    ``(out, k)`` pair, in order: each step moves the next such axis (always at ``first``,
    those done having gone to the end) to the end and gathers it; an axis whose mode is
    "skip" (a window of 1, nothing to gather) only moves."""
    if d == len(strides):
        return x
    x = jnp.moveaxis(x, first, -1)
    if modes[d] == "skip":
        return _windows(x, fill, first, sizes, size_axes, strides, pads, base, dilation, modes,
                        d + 1)
    k = sizes[size_axes[d]]  # (``sizes`` a kernel's shape: run-time ints)
    if isinstance(pads, str):
        lo, hi = _same_pads(x.shape[-1], k, strides[d], dilation[d], pads == "SAME_LOWER")
    else:
        lo, hi = pads[d]
    x = _window_axis(x, fill, k, strides[d], dilation[d], lo, hi, base[d], modes[d] == "exact")
    return _windows(x, fill, first, sizes, size_axes, strides, pads, base, dilation, modes,
                    d + 1)


def _modes(dims, strides, pads, base):
    """Per axis: "skip" (a window of 1 at every position: the axis stays as it is), "exact"
    (no padding before or after, no holes: nothing to mask) or "masked"; ``dims`` None when
    the window sizes are known only at run time (a kernel's)."""
    modes = []
    for d in range(len(strides)):
        no_pad = not isinstance(pads, str) and pads[d][0] == 0 and pads[d][1] <= 0
        if dims is not None and dims[d] == 1 and strides[d] == 1 and base[d] == 1 and \
                (isinstance(pads, str) or pads[d] == (0, 0)):
            modes.append("skip")
        elif no_pad and base[d] == 1:
            modes.append("exact")
        else:
            modes.append("masked")
    return tuple(modes)


def _window_axes(modes):
    """The window axes of ``_windows``'s result: an axis skipped leaves one axis, the
    others two (out, k)."""
    axes, at = [], 0
    for mode in modes:
        if mode != "skip":
            axes.append(at + 1)
        at += 1 if mode == "skip" else 2
    return tuple(axes)


def _ints(seq, n, default, what, fn):
    if seq is None:
        return (default,) * n
    out = tuple(int(s) for s in seq)
    if len(out) != n:
        raise ValueError(f"{fn}: {what} must have {n} entries, got {tuple(seq)!r}")
    if any(s < 1 for s in out):
        raise ValueError(f"{fn}: {what} must be positive, got {out}")
    return out


def _pads(padding, n, fn):
    if isinstance(padding, str):
        if padding.upper() not in ("SAME", "SAME_LOWER", "VALID"):
            raise RuntimeError(f"Unrecognized padding type: expected 'VALID', 'SAME', or "
                               f"'SAME_LOWER', got {padding}.")
        return ((0, 0),) * n if padding.upper() == "VALID" else padding.upper()
    try:
        pads = tuple((int(lo), int(hi)) for lo, hi in padding)
    except (TypeError, ValueError):
        raise ValueError(f"{fn}: padding must be 'SAME', 'VALID' or a sequence of (low, "
                         f"high) int pairs, got {padding!r}") from None
    if len(pads) != n:
        raise ValueError(f"{fn}: padding has {len(pads)} pairs for {n} spatial dimensions")
    return pads


# ---- reduce_window -------------------------------------------------------------------------

def _reducer(computation):
    """'add', 'mul', 'max' or 'min' for the monoid ``computation`` (lax's, jnp's, NumPy's or
    ``operator``'s function)."""
    kinds = {"add": (_lax_ew.add, jnp.add, np.add, operator.add),
             "mul": (_lax_ew.mul, jnp.multiply, np.multiply, operator.mul),
             "max": (_lax_ew.max, jnp.maximum, np.maximum),
             "min": (_lax_ew.min, jnp.minimum, np.minimum)}
    for kind, fns in kinds.items():
        if any(computation is f for f in fns):
            return kind
    raise NotImplementedError(f"reduce_window: computation {computation!r} is not supported "
                              f"(only add, mul, max and min: lax's, jnp's or NumPy's)")


def _identity(kind, dtype):
    dtype = np.dtype(dtype)
    if kind in ("add", "mul"):
        return 0 if kind == "add" else 1
    if dtype.kind == "f":
        return -np.inf if kind == "max" else np.inf
    if dtype.kind == "b":
        return kind == "min"
    info = np.iinfo(dtype)
    return int(info.min if kind == "max" else info.max)


@static_helper
def _reduce_window_spec(computation, ndim, dtype, window_dimensions, window_strides, padding,
                        base_dilation, window_dilation):
    fn = "reduce_window"
    kind = _reducer(computation)
    dims = _ints(window_dimensions, ndim, 1, "window_dimensions", fn)
    strides = _ints(window_strides, ndim, 1, "window_strides", fn)
    base = _ints(base_dilation, ndim, 1, "base_dilation", fn)
    dilation = _ints(window_dilation, ndim, 1, "window_dilation", fn)
    pads = _pads(padding, ndim, fn)
    modes = _modes(dims, strides, pads, base)
    return (kind, _identity(kind, dtype), dims, tuple(range(ndim)), strides, pads, base,
            dilation, modes, _window_axes(modes))


def reduce_window(operand, init_value, computation, window_dimensions, window_strides=None,
                  padding="VALID", base_dilation=None, window_dilation=None):
    """``lax.reduce_window`` for one array and a monoid ``computation`` (add, mul, max, min;
    lax's, jnp's or NumPy's): each output element is ``init_value`` combined with the
    operand's elements in its window (padding and base-dilation holes take no part), as
    used for pooling. 'SAME' padding is computed on the undilated operand, as in JAX."""
    x = jnp.asarray(operand)
    (kind, identity, dims, order, strides, pads, base, dilation, modes,
     axes) = _reduce_window_spec(computation, x.ndim, x.dtype, window_dimensions,
                                 window_strides, padding, base_dilation, window_dilation)
    fill = jnp.asarray(identity).astype(x.dtype)
    w = _windows(x, fill, 0, dims, order, strides, pads, base, dilation, modes, 0)
    return reduce_one(w, init_value, kind, axes)  # (each window's elements, then init)


def padtype_to_pads(in_shape, window_shape, window_strides, padding):
    """The ``(low, high)`` pads of ``padding`` ('SAME', 'SAME_LOWER', 'VALID') per spatial
    dimension, as ``lax.padtype_to_pads``."""
    pads = _pads(padding, len(in_shape), "padtype_to_pads")
    if not isinstance(pads, str):
        return list(pads)
    out = []
    for n, k, s in zip(in_shape, window_shape, window_strides):
        total = max((-(-int(n) // int(s)) - 1) * int(s) + int(k) - int(n), 0)
        small = total // 2
        out.append((total - small, small) if pads == "SAME_LOWER" else (small, total - small))
    return out


# ---- convolutions --------------------------------------------------------------------------

def _perms(dimension_numbers, nd):
    """(lhs_perm, rhs_perm, out_perm): each operand's axes in the order N C spatial... (O I
    spatial... for the kernel), the spatial axes in the kernel spec's order, as JAX's
    ``conv_general_permutations``."""
    if dimension_numbers is None:
        return (tuple(range(nd)),) * 3
    lhs, rhs, out = dimension_numbers
    if all(isinstance(s, str) for s in (lhs, rhs, out)):
        if not len(lhs) == len(rhs) == len(out) == nd:
            raise TypeError(f"conv_general_dilated: dimension_numbers {dimension_numbers!r} "
                            f"do not match operands of rank {nd}")
        if set(lhs) - {"N", "C"} != set(rhs) - {"O", "I"} or \
                set(out) - {"N", "C"} != set(rhs) - {"O", "I"}:
            raise TypeError(f"conv_general_dilated: dimension_numbers {dimension_numbers!r} "
                            f"must name the same spatial dimensions")
        spatial = [c for c in rhs if c not in "OI"]

        def perm(spec, a, b):
            return (spec.index(a), spec.index(b)) + tuple(spec.index(c) for c in spatial)
        return perm(lhs, "N", "C"), perm(rhs, "O", "I"), perm(out, "N", "C")
    return tuple(tuple(int(i) for i in s) for s in (lhs, rhs, out))


@static_helper
def _conv_spec(lhs_ndim, rhs_ndim, window_strides, padding, lhs_dilation, rhs_dilation,
               dimension_numbers, feature_group_count, batch_group_count):
    fn = "conv_general_dilated"
    if lhs_ndim != rhs_ndim or lhs_ndim < 3:
        raise TypeError(f"{fn}: lhs and rhs must have the same rank, at least 3, got "
                        f"{lhs_ndim} and {rhs_ndim}")
    if batch_group_count != 1:
        raise NotImplementedError(f"{fn}: batch_group_count={batch_group_count} is not "
                                  f"supported (only 1)")
    if isinstance(feature_group_count, bool) or not isinstance(feature_group_count, int) \
            or feature_group_count < 1:
        raise ValueError(f"{fn}: feature_group_count must be a positive int, got "
                         f"{feature_group_count!r}")
    n = lhs_ndim - 2
    strides = _ints(window_strides, n, 1, "window_strides", fn)
    lhs_dil = _ints(lhs_dilation, n, 1, "lhs_dilation", fn)
    rhs_dil = _ints(rhs_dilation, n, 1, "rhs_dilation", fn)
    pads = _pads(padding, n, fn)
    if isinstance(pads, str) and lhs_dil != (1,) * n:
        raise ValueError("String padding is not implemented for transposed convolution "
                         "using this op. Please either exactly specify the required padding "
                         "or use conv_transpose.")
    lhs_perm, rhs_perm, out_perm = _perms(dimension_numbers, lhs_ndim)
    # output positions a, b, ..., window offsets A, B, ...; n batch, c in and o out channels,
    # g groups
    letters = "abdefhijklm"[:n]
    windows = "".join(f"{c}{c.upper()}" for c in letters)
    kernel = "".join(c.upper() for c in letters)
    back = tuple(int(i) for i in np.argsort(out_perm))  # the output's axes, from N O ...
    if feature_group_count == 1:
        # the einsum writes the output's layout itself (channels last is 2.5x faster that
        # way than a transpose after it, for a 32x32 NHWC layer)
        out = "".join(("no" + letters)[i] for i in back)
        subscripts = f"nc{windows},oc{kernel}->{out}"
    else:
        subscripts = f"ngc{windows},goc{kernel}->ngo{letters}"
    return (lhs_perm, rhs_perm, back, strides, pads, lhs_dil, rhs_dil, subscripts,
            tuple(range(2, 2 + n)), _modes(None, strides, pads, lhs_dil))


def conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation=None,
                         rhs_dilation=None, dimension_numbers=None, feature_group_count=1,
                         batch_group_count=1, precision=None, preferred_element_type=None,
                         out_sharding=None):
    """``lax.conv_general_dilated``: the N-D convolution (a cross-correlation, as in JAX) of
    ``lhs`` with the kernel ``rhs``, with strides, padding ('SAME', 'SAME_LOWER', 'VALID' or
    ``(low, high)`` pairs), input (``lhs_dilation``) and kernel (``rhs_dilation``) dilation,
    ``dimension_numbers`` as strings (``('NHWC', 'HWIO', 'NHWC')``) or permutations, and
    ``feature_group_count``. ``batch_group_count`` must be 1; ``precision`` is ignored."""
    x = jnp.asarray(lhs)
    w = jnp.asarray(rhs)
    spec = _conv_spec(x.ndim, w.ndim, window_strides, padding, lhs_dilation, rhs_dilation,
                      dimension_numbers, feature_group_count, batch_group_count)
    return conv_from_spec(x, w, spec, spec[4], feature_group_count, preferred_element_type)


def conv_from_spec(x, w, spec, pads, feature_group_count, preferred_element_type):
    """The convolution ``_conv_spec`` describes, with ``pads`` (in place of the spec's:
    conv_transpose's are run-time ints where they depend on the kernel's size)."""
    (lhs_perm, rhs_perm, back, strides, _, lhs_dil, rhs_dil, subscripts, spatial,
     modes) = spec
    x = jnp.transpose(x, lhs_perm)
    w = jnp.transpose(w, rhs_perm)
    zero = jnp.zeros((), x.dtype)
    patches = _windows(x, zero, 2, w.shape, spatial, strides, pads, lhs_dil, rhs_dil, modes,
                       0)
    if feature_group_count == 1:
        out = jnp.einsum(subscripts, patches, w)
    else:
        g = feature_group_count
        patches = jnp.reshape(patches, (patches.shape[0], g, -1) + patches.shape[2:])
        w = jnp.reshape(w, (g, -1) + w.shape[1:])
        out = jnp.einsum(subscripts, patches, w)
        out = jnp.transpose(jnp.reshape(out, (out.shape[0], -1) + out.shape[3:]), back)
    if preferred_element_type is not None:
        out = out.astype(preferred_element_type)
    return out


def conv_with_general_padding(lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation,
                              precision=None, preferred_element_type=None):
    """``conv_general_dilated`` in the NC... / OI... layouts."""
    return conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation,
                                rhs_dilation, precision=precision,
                                preferred_element_type=preferred_element_type)


def conv(lhs, rhs, window_strides, padding, precision=None, preferred_element_type=None):
    """``conv_general_dilated`` in the NC... / OI... layouts, without dilation."""
    return conv_general_dilated(lhs, rhs, window_strides, padding, precision=precision,
                                preferred_element_type=preferred_element_type)
