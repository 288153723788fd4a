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


def _rule(kind, op_names):
    def register(fn):
        for name in op_names:
            REGISTRY[name].rules[kind] = fn
        return fn
    return register


def vjp_rule(*op_names):
    return _rule("vjp", op_names)


def nondifferentiable(*op_names):
    for name in op_names:
        REGISTRY[name].differentiable = False


# A JVP rule (forward mode, ``forward.py``) gets the op's output ``z``, its operands in
# order, then one tangent per operand (None for an operand with no tangent: a constant, an
# integer, or a value that does not depend on the inputs), then the op's params as
# keywords, and returns the output's tangent (a tuple for a tuple output). The tangent may
# have a broadcast-compatible shape and a weak dtype: the transform casts it to z's.
#
#     @jvp_rule("prod")
#     def prod_jvp(z, a, ta, axis=None, dtype=None, out=None, keepdims=False, ...):
#
# Ops without one are covered by forward.py's families: elementwise ops reuse their VJP
# rule (a diagonal Jacobian is its own transpose), linear and multilinear ops are applied
# to the tangents.
def jvp_rule(*op_names):
    return _rule("jvp", op_names)
