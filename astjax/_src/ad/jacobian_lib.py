"""Jacobians as ordinary jnp loops over basis vectors, compiled like user code.

``pull(args, e)`` / ``push(args, v)`` are generated functions (passed as static
arguments): the cotangent of argument k for output cotangent ``e``, and the
tangent of the output for a tangent ``v`` of argument k.
"""
import astjax.numpy as jnp


def jacrev_rows(pull, args, x, out):
    """d out / d x, one reverse sweep per output element."""
    n = out.size
    rows = jnp.zeros((n, x.size), x.dtype)
    for i in range(n):
        e = jnp.zeros(n, out.dtype).at[i].set(1.0).reshape(out.shape)
        rows = rows.at[i].set(jnp.ravel(pull(args, e)))
    return rows.reshape(out.shape + x.shape)


def jacfwd_columns(push, args, x, out):
    """d out / d x, one forward (jvp) evaluation per input element."""
    m = x.size
    cols = jnp.zeros((m, out.size), out.dtype)
    for j in range(m):
        v = jnp.zeros(m, x.dtype).at[j].set(1.0).reshape(x.shape)
        cols = cols.at[j].set(jnp.ravel(push(args, v)))
    return jnp.transpose(cols).reshape(out.shape + x.shape)
