"""``lax.dot_general``, ``dot`` and ``batch_matmul``, lowered to ``jnp.einsum`` with
subscripts worked out when the code is generated (from the ranks and the static
``dimension_numbers``), so jit, grad and vmap use einsum's rules and Numba's lowering of it.
"""
import astjax.numpy as jnp

from ..random.checks import static_helper  # evaluated while generating code

_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _dims(dims, ndim, what):
    out = tuple(int(d) for d in dims)
    for d in out:
        if not 0 <= d < ndim:
            raise TypeError(f"dot_general requires {what} dimension numbers in the range "
                            f"[0, {ndim}), got {tuple(dims)}")
    if len(set(out)) != len(out):
        raise TypeError(f"dot_general requires {what} dimensions to be unique, got "
                        f"{tuple(dims)}")
    return out


@static_helper
def _dot_general_subscripts(dimension_numbers, lhs_ndim, rhs_ndim):
    """The einsum subscripts of ``dot_general`` (batch dims, then lhs free, then rhs free)."""
    try:
        (lc, rc), (lb, rb) = dimension_numbers
    except (TypeError, ValueError):
        raise TypeError(f"dot_general: dimension_numbers must be ((lhs_contracting, "
                        f"rhs_contracting), (lhs_batch, rhs_batch)), got "
                        f"{dimension_numbers!r}") from None
    lc, lb = _dims(lc, lhs_ndim, "lhs contracting"), _dims(lb, lhs_ndim, "lhs batch")
    rc, rb = _dims(rc, rhs_ndim, "rhs contracting"), _dims(rb, rhs_ndim, "rhs batch")
    if len(lc) != len(rc):
        raise TypeError(f"dot_general requires equal numbers of lhs and rhs contracting "
                        f"dimensions, got lhs_contracting_dimensions={lc} and "
                        f"rhs_contracting_dimensions={rc}.")
    if len(lb) != len(rb):
        raise TypeError(f"dot_general requires equal numbers of lhs and rhs batch "
                        f"dimensions, got lhs_batch_dimensions={lb} and "
                        f"rhs_batch_dimensions={rb}.")
    if set(lc) & set(lb) or set(rc) & set(rb):
        raise TypeError("dot_general requires contracting and batch dimensions to be "
                        "disjoint")
    letters = iter(_LETTERS)
    lhs = [None] * lhs_ndim
    rhs = [None] * rhs_ndim
    batch = []
    for i, j in zip(lb, rb):
        lhs[i] = rhs[j] = next(letters)
        batch.append(lhs[i])
    for i, j in zip(lc, rc):
        lhs[i] = rhs[j] = next(letters)
    lfree = []
    for i in range(lhs_ndim):
        if lhs[i] is None:
            lhs[i] = next(letters)
            lfree.append(lhs[i])
    rfree = []
    for j in range(rhs_ndim):
        if rhs[j] is None:
            rhs[j] = next(letters)
            rfree.append(rhs[j])
    return f"{''.join(lhs)},{''.join(rhs)}->{''.join(batch + lfree + rfree)}"


def _preferred(out, preferred_element_type):
    if preferred_element_type is None:
        return out
    return out.astype(preferred_element_type)


def dot_general(lhs, rhs, dimension_numbers, precision=None, preferred_element_type=None,
                out_sharding=None):
    """``lax.dot_general``: contracts ``lhs`` and ``rhs`` over the contracting dimensions,
    batched over the batch dimensions; the result's dimensions are the batch dimensions,
    then ``lhs``'s free ones, then ``rhs``'s. ``precision`` is ignored."""
    lhs = jnp.asarray(lhs)
    rhs = jnp.asarray(rhs)
    subscripts = _dot_general_subscripts(dimension_numbers, lhs.ndim, rhs.ndim)
    return _preferred(jnp.einsum(subscripts, lhs, rhs), preferred_element_type)


@static_helper
def _dot_numbers(lhs_ndim, rhs_ndim):
    """``lax.dot``'s contraction: the last axis of ``lhs`` with the first (or only) of
    ``rhs``, for vectors and matrices."""
    if lhs_ndim not in (1, 2) or rhs_ndim not in (1, 2):
        raise TypeError(f"Incompatible shapes for dot: got arrays of rank {lhs_ndim} and "
                        f"{rhs_ndim}.")
    return (((lhs_ndim - 1,), (0,)), ((), ()))


def dot(lhs, rhs, *, dimension_numbers=None, precision=None, preferred_element_type=None,
        out_sharding=None):
    """``lax.dot``: vector/matrix products of ``lhs`` and ``rhs`` (rank 1 or 2), or
    ``dot_general`` when ``dimension_numbers`` is given."""
    lhs = jnp.asarray(lhs)
    rhs = jnp.asarray(rhs)
    if dimension_numbers is None:
        dimension_numbers = _dot_numbers(lhs.ndim, rhs.ndim)
    return dot_general(lhs, rhs, dimension_numbers, precision, preferred_element_type)


@static_helper
def _check_batch_matmul(lhs_ndim, rhs_ndim):
    if lhs_ndim < 2 or rhs_ndim < 2 or lhs_ndim != rhs_ndim:
        raise ValueError(f"batch_matmul requires arguments of the same rank of at least 2, "
                         f"got ranks {lhs_ndim} and {rhs_ndim}")
    batch = tuple(range(lhs_ndim - 2))
    return ((lhs_ndim - 1,), (rhs_ndim - 2,)), (batch, batch)


def batch_matmul(lhs, rhs, precision=None):
    """``lax.batch_matmul``: matrix products over matching leading batch dimensions."""
    lhs = jnp.asarray(lhs)
    rhs = jnp.asarray(rhs)
    return dot_general(lhs, rhs, _check_batch_matmul(lhs.ndim, rhs.ndim), precision)
