"""Derivatives of ``linalg_solve`` (``ops/decompositions.py``): x = a^-1 b.

Forward: dx = a^-1 (db - da x). Reverse, the transpose of that (no conjugation, JAX's
convention): ct_b = a^-T g, ct_a = -ct_b x^T. ``vector`` marks b (and x) as stacks of
vectors; the batch dims broadcast between a and b, so each cotangent is summed back to
its operand's shape.
"""
import astjax.numpy as jnp

from ..ops.registry import REGISTRY
from .adlib import unbroadcast
from .rules import jvp_rule, vjp_rule
from .vjp_shape import full_ct

_solve = REGISTRY["linalg_solve"]


def _times_x(m, x, vector):
    """m x: a matrix times the solution (a vector or matrix per batch entry)."""
    if vector:
        return jnp.sum(m * jnp.expand_dims(x, -2), axis=-1)
    return jnp.matmul(m, x)


@vjp_rule("linalg_solve")
def solve_vjp(z, a, b, g, vector=False):
    ct_b = _solve(jnp.matrix_transpose(a), full_ct(g, z), vector)
    if vector:
        ct_a = -jnp.expand_dims(ct_b, -1) * jnp.expand_dims(z, -2)
    else:
        ct_a = -jnp.matmul(ct_b, jnp.matrix_transpose(z))
    return unbroadcast(ct_a, a), unbroadcast(ct_b, b)


@jvp_rule("linalg_solve")
def solve_jvp(z, a, b, ta, tb, vector=False):
    if ta is None:
        return _solve(a, tb, vector)
    rhs = -_times_x(ta, z, vector)
    if tb is not None:
        rhs = rhs + tb
    return _solve(a, rhs, vector)
