"""Jacobians over basis vectors, compiled like user code: one batched sweep (the step
under vmap, as JAX does), or a loop of sweeps where the step does not batch.

The loops see flat vectors: the output leaves raveled one after another (``n`` elements of
dtype ``y_dtype``), likewise the differentiated input leaves (``m``, ``x_dtype``); the
caller splits the flat n x m Jacobian into the tree of blocks. ``y`` and ``x`` are those
layouts, a ``(start, stop, shape)`` per leaf. ``pull(args, y, x, e)`` and ``push(args, x,
v)`` are generated functions (passed as static arguments): the flat input cotangent for the
flat output cotangent ``e``; f's output and the flat output tangent for the flat input
tangent ``v`` (jacfwd learns the output's layout from that output, not from running f).
"""
import astjax.numpy as jnp


def jacrev_rows(pull, args, y, x, n, m, y_dtype, x_dtype):
    """d y / d x, one reverse sweep per output element."""
    rows = jnp.zeros((n, m), x_dtype)
    for i in range(n):
        e = jnp.zeros(n, y_dtype).at[i].set(1.0)
        rows = rows.at[i].set(pull(args, y, x, e))
    return rows


def jacrev_single(pull, args, y, x, n, m, y_dtype, x_dtype):
    """d y / d x of a one-element y (n is 1): one reverse sweep, with nothing to batch."""
    return jnp.reshape(pull(args, y, x, jnp.ones(1, y_dtype)), (1, m))


def jacfwd_columns(push, args, x, m, x_dtype):
    """d y / d x and y, one forward (jvp) evaluation per input element."""
    out, col = push(args, x, jnp.zeros(m, x_dtype))  # y, and the columns' length and dtype
    cols = jnp.zeros((m, col.size), col.dtype)
    for j in range(m):
        v = jnp.zeros(m, x_dtype).at[j].set(1.0)
        cols = cols.at[j].set(push(args, x, v)[1])
    return jnp.transpose(cols), out


def jacrev_batched(pull, args, y, x, n, m, y_dtype, x_dtype):
    """d y / d x as one reverse sweep batched over the n output basis vectors (``pull`` is
    vmapped over its last argument)."""
    return pull(args, y, x, jnp.eye(n, dtype=y_dtype))


def jacfwd_batched(push, args, x, m, x_dtype):
    """d y / d x and y, from one forward sweep batched over the m input basis vectors
    (``push`` is vmapped over its last argument; y is not batched)."""
    out, cols = push(args, x, jnp.eye(m, dtype=x_dtype))
    return jnp.transpose(cols), out


def jacrev_single_with_output(pull, args, y, x, n, m, y_dtype, x_dtype):
    """``jacrev_single`` and f's output, where ``pull`` returns that output first (from
    the sweep that also runs f's forward statements)."""
    out, flat = pull(args, y, x, jnp.ones(1, y_dtype))
    return jnp.reshape(flat, (1, m)), out
