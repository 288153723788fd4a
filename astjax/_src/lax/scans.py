"""``lax.map``, ``associative_scan`` and the cumulative reductions ``cumsum``, ``cumprod``,
``cummax``, ``cummin``, ``cumlogsumexp``: plain ``astjax.numpy`` code (and ``lax.scan`` /
``while_loop``), compiled like user code, so jit, grad and vmap need no new rules.

``associative_scan`` is the Hillis-Steele scan: ceil(log2(n)) rounds, each combining every
element with the one ``2**k`` places before it. It is a ``while_loop`` because an axis's
length is a run-time int in compiled code (JAX unrolls its odd/even recursion at trace time).
"""
import astjax.numpy as jnp

from ..random.checks import static_helper  # evaluated while generating code
from .trees import tree_leaves, tree_map
from .control_flow import scan, while_loop


@static_helper
def _check_batch_size(batch_size):
    if batch_size is not None and (isinstance(batch_size, bool) or
                                   not isinstance(batch_size, int) or batch_size < 1):
        raise ValueError(f"lax.map: batch_size must be a positive int or None, got "
                         f"{batch_size!r}")
    return batch_size


def map(f, xs, *, batch_size=None):
    """``lax.map``: ``f`` applied to each slice of ``xs`` (a pytree) along its leading axis,
    the results stacked; a ``scan`` loop, as in JAX. ``batch_size`` changes only how JAX
    groups the calls, not the result: it is checked and otherwise ignored."""
    _check_batch_size(batch_size)
    return scan(lambda carry, x: (carry, f(x)), (), xs)[1]


@static_helper
def _scan_axis(axis, ndim):
    if isinstance(axis, bool) or not isinstance(axis, int) or not -ndim <= axis < ndim:
        raise ValueError(f"associative_scan: axis {axis!r} is out of bounds for arrays of "
                         f"rank {ndim}")
    return axis % ndim


def _to_front(x, axis, reverse):
    x = jnp.moveaxis(jnp.asarray(x), _scan_axis(axis, jnp.ndim(x)), 0)
    return jnp.flip(x, 0) if reverse else x


def _from_front(x, axis, reverse):
    x = jnp.flip(x, 0) if reverse else x
    return jnp.moveaxis(x, 0, _scan_axis(axis, jnp.ndim(x)))


def _shifted(x, shift):
    """``x[i - shift]`` at each ``i`` along axis 0 (``x[0]`` where ``i < shift``)."""
    i = jnp.arange(x.shape[0]) - shift
    return x[jnp.maximum(i, 0)]


def _combine(fn, ys, shift):
    n = tree_leaves(ys)[0].shape[0]
    new = fn(tree_map(lambda y: _shifted(y, shift), ys), ys)
    keep = jnp.arange(n) < shift

    def pick(y, z):
        k = jnp.reshape(keep, (n,) + (1,) * (jnp.ndim(y) - 1))
        return jnp.where(k, y, z)
    return tree_map(pick, ys, new)


def associative_scan(fn, elems, reverse=False, axis=0):
    """``lax.associative_scan``: the inclusive scan of ``elems`` (a pytree of arrays of one
    length along ``axis``) with the associative ``fn(a, b)``, ``a`` the earlier part; with
    ``reverse``, from the end, as JAX (``fn`` still takes the earlier part, counted from the
    end, first)."""
    ys = tree_map(lambda x: _to_front(x, axis, reverse), elems)
    n = tree_leaves(ys)[0].shape[0]

    def cond(state):
        return state[1] < n

    def body(state):
        return _combine(fn, state[0], state[1]), state[1] * 2
    ys = while_loop(cond, body, (ys, 1))[0]
    return tree_map(lambda y: _from_front(y, axis, reverse), ys)


def _cum(x, axis, reverse, kind):
    x = jnp.asarray(x)
    y = _to_front(x, axis, reverse)
    if kind == "sum":
        y = jnp.cumsum(y, axis=0, dtype=x.dtype)
    elif kind == "prod":
        y = jnp.cumprod(y, axis=0, dtype=x.dtype)
    else:
        y = associative_scan(kind, y)
    return _from_front(y, axis, reverse)


def cumsum(operand, axis=0, reverse=False):
    """``lax.cumsum``: the running sum along ``axis`` (from the end with ``reverse``), in
    ``operand``'s dtype."""
    return _cum(operand, axis, reverse, "sum")


def cumprod(operand, axis=0, reverse=False):
    """``lax.cumprod``: the running product along ``axis``, in ``operand``'s dtype."""
    return _cum(operand, axis, reverse, "prod")


def cummax(operand, axis=0, reverse=False):
    """``lax.cummax``: the running maximum along ``axis``."""
    return _cum(operand, axis, reverse, jnp.maximum)


def cummin(operand, axis=0, reverse=False):
    """``lax.cummin``: the running minimum along ``axis``."""
    return _cum(operand, axis, reverse, jnp.minimum)


def cumlogsumexp(operand, axis=0, reverse=False):
    """``lax.cumlogsumexp``: the running ``log(sum(exp(...)))`` along ``axis``."""
    return _cum(operand, axis, reverse, jnp.logaddexp)
