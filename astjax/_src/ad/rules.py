"""How differentiation rules are declared.

A VJP rule is a plain Python function written with ``astjax.numpy`` ops, so
the compiler reads and compiles it like user code: it shows up in generated
source, and differentiating it again gives higher derivatives. Its
parameters are the op's output ``z``, the op's operands in order, the output
cotangent ``g``, then the op's params as keywords::

    @vjp_rule("sin")
    def sin(z, x, g):
        return (g * jnp.cos(x),)

It returns one cotangent per operand, in order (``None`` for an operand with no
gradient; a tuple of cotangents for a sequence operand such as concatenate's).
A cotangent may have the broadcast (output) shape: the AD transform sums it
back to each operand's shape. Rules must be straight-line jnp code; ``if`` on
params (static values such as ``axis is None``) is fine.
"""
from ..ops.registry import REGISTRY


def vjp_rule(*op_names):
    def register(fn):
        for name in op_names:
            REGISTRY[name].rules["vjp"] = fn
        return fn
    return register


def nondifferentiable(*op_names):
    for name in op_names:
        REGISTRY[name].differentiable = False
