"""``astjax.lax``: lower-level operations, as in ``jax.lax``.

Control flow (``fori_loop``, ``while_loop``, ``cond``, ``switch``, ``scan``) compiles to
Python loops and branches in the generated source, and reverse mode differentiates them
(``while_loop`` included). Body functions may be nested defs or lambdas that use the
enclosing function's variables. The other functions (``map``, ``associative_scan``,
``dot_general``, ``conv_general_dilated``, ``conv_transpose``, ``reduce_window``,
``reduce``, ``gather``/``scatter``, ``sort``, ``top_k``, the cumulative reductions, the
special functions, elementwise, bit and shape functions, ``custom_root`` and
``custom_linear_solve``) are plain ``astjax.numpy`` code
compiled like yours. See ``astjax/_src/lax/``.
"""
import sys as _sys

from ._src.lax.control_flow import cond, fori_loop, scan, switch, while_loop
from ._src.lax.slicing import (dynamic_index_in_dim, dynamic_slice, dynamic_slice_in_dim,
                               dynamic_update_index_in_dim, dynamic_update_slice,
                               dynamic_update_slice_in_dim, select)
from ._src.lax.elementwise import (
    RoundingMethod, abs, acos, acosh, add, asin, asinh, atan, atan2, atanh, bitwise_and,
    bitwise_not, bitwise_or, bitwise_xor, cbrt, ceil, clamp, conj, convert_element_type, cos,
    cosh, digamma, div, eq, erf, erfc, exp, exp2, expm1, floor, ge, gt, imag, integer_pow,
    is_finite, le, lgamma, log, log1p, logistic, lt, max, min, mul, ne, neg, nextafter,
    polygamma, pow, real, reciprocal, rem, round, rsqrt, shift_left, shift_right_arithmetic,
    sign, sin, sinh, sqrt, square, sub, tan, tanh)
from ._src.lax.shapes import (
    broadcast, broadcast_in_dim, broadcasted_iota, concatenate, expand_dims, full, full_like,
    index_in_dim, iota, pad, reduce_and, reduce_max, reduce_min, reduce_or, reduce_prod,
    reduce_sum, reshape, rev, slice, slice_in_dim, squeeze, transpose)
from ._src.lax.products import batch_matmul, dot, dot_general
from ._src.lax.scans import (associative_scan, cumlogsumexp, cummax, cummin, cumprod, cumsum,
                             map)
from ._src.lax.sorting import argmax, argmin, sort, sort_key_val, top_k
from ._src.lax.windowed import (conv, conv_general_dilated, conv_with_general_padding,
                                padtype_to_pads, reduce_window)
from ._src.lax.bits import clz, mulhi, population_count, shift_right_logical
from ._src.lax.arrays import (broadcast_to_rank, collapse, complex, index_take, reduce_xor,
                              select_n, split, stack, tile, unstack)
from ._src.lax.special import zeta
from ._src.lax.fft import FftType, fft
from ._src.lax.solves import custom_linear_solve, custom_root
from ._src.lax.bitcast import bitcast_convert_type
from ._src.lax.ragged import ragged_dot
from ._src.lax import linalg
from ._src.lax.rng import RandomAlgorithm, rng_bit_generator, rng_uniform
from ._src.lax.incomplete import betainc, igamma, igamma_grad_a, igammac, random_gamma_grad
from ._src.lax.conv_shapes import (ConvDimensionNumbers, conv_dimension_numbers,
                                   conv_general_permutations, conv_general_shape_tuple,
                                   conv_shape_tuple, conv_transpose_shape_tuple,
                                   reduce_window_shape_tuple)
from ._src.lax.misc import (Precision, approx_max_k, approx_min_k, broadcast_like,
                            broadcast_shapes, composite, dtype, empty, optimization_barrier,
                            reduce_precision)
from ._src.lax.patches import conv_general_dilated_patches
from ._src.lax.reduce import reduce
from ._src.lax.conv_transpose import conv_transpose
from ._src.lax.gather_scatter import (GatherDimensionNumbers, GatherScatterMode,
                                      ScatterDimensionNumbers, gather, scatter, scatter_add,
                                      scatter_apply, scatter_max, scatter_min, scatter_mul,
                                      scatter_sub)
from ._src.batching.collectives import all_gather, axis_index, pmax, pmean, pmin, psum
from ._src.ops.registry import REGISTRY as _REGISTRY

from ._src.lax.trees import tree_map as _tree_map
from ._src.ops.registry import register_alias as _register_alias


def stop_gradient(x):
    """``x`` with no derivative; as in JAX, ``x`` may be a pytree (each leaf stopped)."""
    return _tree_map(_REGISTRY["stop_gradient"], x)


# compiled code calls the op itself on an array, and this function on a pytree
_register_alias(stop_gradient, _REGISTRY["stop_gradient"])
_REGISTRY["stop_gradient"].tree_function = stop_gradient

__all__ = ["stop_gradient", "fori_loop", "while_loop", "cond", "switch", "scan", "select",
           "dynamic_slice", "dynamic_update_slice", "dynamic_slice_in_dim",
           "dynamic_index_in_dim", "dynamic_update_slice_in_dim",
           "dynamic_update_index_in_dim", "psum", "pmean", "pmax", "pmin", "all_gather",
           "axis_index",
           # loops and scans
           "map", "associative_scan", "cumsum", "cumprod", "cummax", "cummin", "cumlogsumexp",
           # products, convolutions, windows, sorting
           "dot_general", "dot", "batch_matmul", "conv_general_dilated", "conv",
           "conv_with_general_padding", "reduce_window", "padtype_to_pads", "sort",
           "sort_key_val", "top_k", "argmax", "argmin",
           # elementwise
           "RoundingMethod", "abs", "acos", "acosh", "add", "asin", "asinh", "atan", "atan2",
           "atanh", "bitwise_and", "bitwise_not", "bitwise_or", "bitwise_xor", "cbrt", "ceil",
           "clamp", "conj", "convert_element_type", "cos", "cosh", "digamma", "div", "eq",
           "erf_inv",
           "erf", "erfc", "exp", "exp2", "expm1", "floor", "ge", "gt", "imag", "integer_pow",
           "is_finite", "le", "lgamma", "log", "log1p", "logistic", "lt", "max", "min", "mul",
           "ne", "neg", "nextafter", "polygamma", "pow", "real", "reciprocal", "rem", "round",
           "rsqrt", "shift_left", "shift_right_arithmetic", "sign", "sin", "sinh", "sqrt",
           "square", "sub", "tan", "tanh",
           # shapes and reductions
           "broadcast", "broadcast_in_dim", "broadcasted_iota", "concatenate", "expand_dims",
           "full", "full_like", "index_in_dim", "iota", "pad", "reduce_and", "reduce_max",
           "reduce_min", "reduce_or", "reduce_prod", "reduce_sum", "reshape", "rev", "slice",
           "slice_in_dim", "squeeze", "transpose",
           # bits, arrays, special functions
           "clz", "population_count", "shift_right_logical", "broadcast_to_rank", "collapse",
           "complex", "index_take", "reduce_xor", "select_n", "split", "stack", "tile",
           "unstack", "zeta", "bessel_i0e", "bessel_i1e", "igamma", "igammac",
           "igamma_grad_a", "betainc", "random_gamma_grad", "reduce",
           "conv_transpose", "GatherDimensionNumbers", "GatherScatterMode",
           "ScatterDimensionNumbers", "gather", "scatter", "scatter_add", "scatter_apply",
           "scatter_max", "scatter_min", "scatter_mul", "scatter_sub",
           # shape helpers and smaller functions
           "ConvDimensionNumbers", "conv_dimension_numbers", "conv_general_permutations",
           "conv_general_shape_tuple", "conv_shape_tuple", "conv_transpose_shape_tuple",
           "reduce_window_shape_tuple", "Precision", "approx_max_k", "approx_min_k",
           "broadcast_shapes", "dtype", "empty", "optimization_barrier", "mulhi",
           "reduce_precision", "conv_general_dilated_patches", "composite",
           "broadcast_like", "custom_root", "custom_linear_solve",
           "bitcast_convert_type", "ragged_dot", "linalg",
           "RandomAlgorithm", "rng_bit_generator", "rng_uniform"]

# ``import astjax.lax.linalg`` (``astjax.lax`` is a module, ``linalg`` a module in it)
_sys.modules.setdefault(__name__ + ".linalg", linalg)

# names astjax.scipy.special defines (that module imports this one)
_FROM_SCIPY_SPECIAL = {"erf_inv": "erfinv", "bessel_i0e": "i0e", "bessel_i1e": "i1e"}


def __getattr__(name):
    # erf_inv, bessel_i0e and bessel_i1e are astjax.scipy.special's functions (their custom
    # derivatives included); that module imports this one, so they are looked up on first use
    if name in _FROM_SCIPY_SPECIAL:
        from .scipy import special
        return getattr(special, _FROM_SCIPY_SPECIAL[name])
    raise AttributeError(f"module 'astjax.lax' has no attribute {name!r}")
