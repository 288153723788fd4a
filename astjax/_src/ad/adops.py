"""Ops that only derivative code uses (not exported as jnp functions)."""
import numpy as np

from ..errors import ShapeError
from ..ir.types import ArrayType, as_array_type
from ..ops.registry import NAMESPACE, Op


def _unbroadcast(g, like):
    """Sum ``g`` down to the shape of ``like`` (undoing NumPy broadcasting)."""
    g = np.asarray(g)
    shape = np.shape(like)
    if g.shape == shape:
        return g
    lead = g.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(
        lead + i for i, n in enumerate(shape) if n == 1 and g.shape[lead + i] != 1)
    out = g.sum(axis=axes, keepdims=True, dtype=g.dtype) if axes else g
    return out.reshape(shape) if lead else out


def _unbroadcast_rule(g, like):
    g, like = as_array_type(g), as_array_type(like)
    if g.ndim < like.ndim:
        raise ShapeError(f"unbroadcast(): cotangent of rank {g.ndim} for a value of rank "
                         f"{like.ndim}")
    return ArrayType(g.dtype, like.ones, g.weak and like.weak)


unbroadcast = Op("unbroadcast", _unbroadcast, _unbroadcast_rule, operands=("g", "like"))
del NAMESPACE["unbroadcast"]


def _cotangent_like(d, z):
    """``d`` (possibly the weak scalar 0.0 meaning "no cotangent yet") in z's shape and dtype."""
    d = np.asarray(d, dtype=np.result_type(z))
    shape = np.shape(z)
    return d if d.shape == shape else np.broadcast_to(d, shape).copy()


def _cotangent_like_rule(d, z):
    d, z = as_array_type(d), as_array_type(z)
    return ArrayType(z.dtype, z.ones, z.weak)


cotangent_like = Op("cotangent_like", _cotangent_like, _cotangent_like_rule,
                    operands=("d", "z"))
del NAMESPACE["cotangent_like"]


def _shape_stub(x):
    """An array with x's shape and dtype that holds one element (zero strides): what a tape
    keeps of a value whose adjoint reads only its shape (python backend, reverse.py)."""
    x = np.asarray(x)
    return np.broadcast_to(np.zeros((), x.dtype), x.shape)


shape_stub = Op("shape_stub", _shape_stub, lambda x: as_array_type(x), differentiable=False)
del NAMESPACE["shape_stub"]
