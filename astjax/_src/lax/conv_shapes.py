"""``lax``'s convolution and window shape helpers (``ConvDimensionNumbers``,
``conv_dimension_numbers``, ``conv_general_permutations``, ``conv_shape_tuple``,
``conv_general_shape_tuple``, ``conv_transpose_shape_tuple``, ``reduce_window_shape_tuple``),
JAX 0.10.2's pure-Python functions on static shapes.
"""
from typing import NamedTuple, Sequence

import numpy as np

from ..random.checks import static_helper  # evaluated while generating code
from .windowed import padtype_to_pads


class ConvDimensionNumbers(NamedTuple):
    """The batch, feature and spatial dimensions of a convolution's operands, as
    permutations: ``lhs_spec`` (batch, feature, spatial...), ``rhs_spec`` (out feature, in
    feature, spatial...), ``out_spec`` (batch, feature, spatial...)."""
    lhs_spec: Sequence[int]
    rhs_spec: Sequence[int]
    out_spec: Sequence[int]


def conv_general_permutations(dimension_numbers):
    """The (lhs, rhs, out) permutations of string ``dimension_numbers`` such as
    ``('NHWC', 'HWIO', 'NHWC')``, relative to N C spatial... (O I spatial...)."""
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    charpairs = (("N", "C"), ("O", "I"), ("N", "C"))
    for i, (a, b) in enumerate(charpairs):
        if not dimension_numbers[i].count(a) == dimension_numbers[i].count(b) == 1:
            raise TypeError(f"convolution dimension_numbers[{i}] must contain the characters "
                            f"'{a}' and '{b}' exactly once, got {dimension_numbers[i]}.")
        if len(dimension_numbers[i]) != len(set(dimension_numbers[i])):
            raise TypeError(f"convolution dimension_numbers[{i}] cannot have duplicate "
                            f"characters, got {dimension_numbers[i]}.")
    if not (set(lhs_spec) - set(charpairs[0]) == set(rhs_spec) - set(charpairs[1]) ==
            set(out_spec) - set(charpairs[2])):
        raise TypeError(f"convolution dimension_numbers elements must each have the same "
                        f"set of spatial characters, got {dimension_numbers}.")

    def getperm(spec, charpair):
        spatial = [i for i, c in enumerate(spec) if c not in charpair]
        if spec is not rhs_spec:
            spatial = sorted(spatial, key=lambda i: rhs_spec.index(spec[i]))
        return (spec.index(charpair[0]), spec.index(charpair[1])) + tuple(spatial)

    return tuple(getperm(spec, pair) for spec, pair in zip(dimension_numbers, charpairs))


def conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers):
    """``dimension_numbers`` (None, three strings or a ConvDimensionNumbers) as a
    ConvDimensionNumbers (only the shapes' lengths are read, so in compiled code they may
    hold run-time sizes)."""
    return _dimension_numbers(len(lhs_shape), len(rhs_shape), dimension_numbers)


@static_helper
def _dimension_numbers(lhs_ndim, rhs_ndim, dimension_numbers):
    if isinstance(dimension_numbers, ConvDimensionNumbers):
        return dimension_numbers
    if lhs_ndim != rhs_ndim:
        raise TypeError(f"convolution requires lhs and rhs ndim to be equal, got "
                        f"{lhs_ndim} and {rhs_ndim}.")
    if dimension_numbers is None:
        iota = tuple(range(lhs_ndim))
        return ConvDimensionNumbers(iota, iota, iota)
    if not isinstance(dimension_numbers, (list, tuple)):
        raise TypeError(f"convolution dimension_numbers must be tuple/list or None, got "
                        f"{type(dimension_numbers)}.")
    if len(dimension_numbers) != 3:
        raise TypeError(f"convolution dimension_numbers list/tuple must be length 3, got "
                        f"{len(dimension_numbers)}.")
    if not all(isinstance(e, str) for e in dimension_numbers):
        raise TypeError(f"convolution dimension_numbers elements must be strings, got "
                        f"{tuple(map(type, dimension_numbers))}.")
    for i, e in enumerate(dimension_numbers):
        if len(e) != lhs_ndim:
            raise TypeError(f"convolution dimension_numbers[{i}] must have len equal to the "
                            f"ndim of lhs and rhs, got {len(e)} for lhs and rhs of rank "
                            f"{lhs_ndim}.")
    return ConvDimensionNumbers(*conv_general_permutations(dimension_numbers))


def _stride_dim(d, window, stride):
    return max(0, (d - window) // stride + 1)


def _dilate_shape(shape, dilation):
    return tuple(0 if d == 0 else 1 + r * (d - 1) for d, r in zip(shape, dilation))


def conv_shape_tuple(lhs_shape, rhs_shape, strides, pads, batch_group_count=1):
    """The output shape of a convolution of operands in N C spatial... / O I spatial...
    order."""
    if isinstance(pads, str):
        pads = padtype_to_pads(lhs_shape[2:], rhs_shape[2:], strides, pads)
    if len(pads) != len(lhs_shape) - 2:
        raise TypeError(f"Wrong number of explicit pads for convolution: expected "
                        f"{len(lhs_shape) - 2}, got {len(pads)}.")
    padded = [int(d) + int(lo) + int(hi) for d, (lo, hi) in zip(lhs_shape[2:], pads)]
    if any(p < 0 for p in padded):
        raise ValueError(f"Negative padding is larger than the size of the corresponding "
                         f"dimension: got padding={pads} for lhs_shape[2:]={lhs_shape[2:]}")
    out_space = tuple(_stride_dim(p, int(k), int(s))
                      for p, k, s in zip(padded, rhs_shape[2:], strides))
    batch = lhs_shape[0] // batch_group_count if batch_group_count > 1 else lhs_shape[0]
    return (int(batch), int(rhs_shape[0])) + out_space


def _permuted(dimension_numbers, lhs_shape, rhs_shape):
    perms = _perms_of(dimension_numbers, len(lhs_shape))
    return (perms, tuple(int(lhs_shape[i]) for i in perms[0]),
            tuple(int(rhs_shape[i]) for i in perms[1]))


def _perms_of(dimension_numbers, ndim):
    if dimension_numbers is None:
        return (tuple(range(ndim)),) * 3
    if all(isinstance(s, str) for s in dimension_numbers):
        return conv_general_permutations(dimension_numbers)
    return tuple(tuple(int(i) for i in s) for s in dimension_numbers)


def conv_general_shape_tuple(lhs_shape, rhs_shape, window_strides, padding,
                             dimension_numbers):
    """The output shape of ``conv_general_dilated`` (no dilation) in the output's layout."""
    perms, lhs_t, rhs_t = _permuted(dimension_numbers, lhs_shape, rhs_shape)
    out_t = conv_shape_tuple(lhs_t, rhs_t, window_strides, padding)
    return tuple(out_t[i] for i in np.argsort(perms[2]))


def _transpose_padding(k, s, padding):
    if padding == "SAME":
        pad_len = k + s - 2
        pad_a = k - 1 if s > k - 1 else -(-pad_len // 2)
    elif padding == "VALID":
        pad_len = k + s - 2 + max(k - s, 0)
        pad_a = k - 1
    else:
        raise ValueError(f"Invalid padding mode: {padding}")
    return pad_a, pad_len - pad_a


def conv_transpose_shape_tuple(lhs_shape, rhs_shape, window_strides, padding,
                               dimension_numbers):
    """The output shape of ``conv_transpose`` (without kernel dilation)."""
    perms, lhs_t, rhs_t = _permuted(dimension_numbers, lhs_shape, rhs_shape)
    if isinstance(padding, str):
        padding = [_transpose_padding(k, int(s), padding)
                   for k, s in zip(rhs_t[2:], window_strides)]
    out_space = [(i - 1) * int(s) - k + 2 + int(lo) + int(hi)
                 for i, k, s, (lo, hi) in zip(lhs_t[2:], rhs_t[2:], window_strides, padding)]
    out_t = (lhs_t[0], rhs_t[0]) + tuple(out_space)
    return tuple(out_t[i] for i in np.argsort(perms[2]))


def reduce_window_shape_tuple(operand_shape, window_dimensions, window_strides, padding,
                              base_dilation=None, window_dilation=None):
    """The output shape of ``reduce_window`` with explicit ``(low, high)`` pads."""
    if base_dilation is not None:
        operand_shape = _dilate_shape(operand_shape, base_dilation)
    if window_dilation is not None:
        window_dimensions = _dilate_shape(window_dimensions, window_dilation)
    padded = tuple(int(d) + int(lo) + int(hi) for d, (lo, hi) in zip(operand_shape, padding))
    return tuple(_stride_dim(p, int(w), int(s))
                 for p, w, s in zip(padded, window_dimensions, window_strides))
