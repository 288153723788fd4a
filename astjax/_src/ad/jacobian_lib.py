"""Jacobians over basis vectors, compiled like user code: one batched sweep (the step
under vmap, as JAX does), or a loop of sweeps where the step does not batch.

The loops see flat vectors: the output leaves raveled one after another (``n`` elements of
dtype ``y_dtype``), likewise the differentiated input leaves (``m``, ``x_dtype``); the
caller splits the flat n x m Jacobian into the tree of blocks. ``y`` and ``x`` are those
layouts, a ``(start, stop, shape)`` per leaf. ``pull(args, y, x, e)`` / ``push(args, y, x,
v)`` are generated functions (passed as static arguments): the flat input cotangent for the
flat output cotangent ``e``, and the flat output tangent for the flat input tangent ``v``.
"""
import astjax.numpy as jnp


def jacrev_rows(pull, args, y, x, n, m, y_dtype, x_dtype):
    """d y / d x, one reverse sweep per output element."""
    rows = jnp.zeros((n, m), x_dtype)
    for i in range(n):
        e = jnp.zeros(n, y_dtype).at[i].set(1.0)
        rows = rows.at[i].set(pull(args, y, x, e))
    return rows


def jacfwd_columns(push, args, y, x, n, m, y_dtype, x_dtype):
    """d y / d x, one forward (jvp) evaluation per input element."""
    cols = jnp.zeros((m, n), y_dtype)
    for j in range(m):
        v = jnp.zeros(m, x_dtype).at[j].set(1.0)
        cols = cols.at[j].set(push(args, y, x, v))
    return jnp.transpose(cols)


def jacrev_batched(pull, args, y, x, n, m, y_dtype, x_dtype):
    """d y / d x as one reverse sweep batched over the n output basis vectors (``pull`` is
    vmapped over its last argument)."""
    return pull(args, y, x, jnp.eye(n, dtype=y_dtype))


def jacfwd_batched(push, args, y, x, n, m, y_dtype, x_dtype):
    """d y / d x as one forward sweep batched over the m input basis vectors."""
    return jnp.transpose(push(args, y, x, jnp.eye(m, dtype=x_dtype)))
