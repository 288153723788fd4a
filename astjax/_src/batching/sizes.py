"""The batch-size check a vmap's batched function starts with (JAX's "inconsistent sizes" error).

Eager ``vmap`` checks concrete arguments in Python (api.py); under ``jit`` sizes are only
known when the call runs, so the generated function checks them itself:
``batch_size = _jnp.same_batch_size((x.shape[0], y.shape[0]), message)``. Without it,
sizes 1 and n would silently broadcast. The Numba backend never drops this statement
(simplify.EFFECTFUL) and lowers it to a compare and ``raise``.
"""
from ..errors import ShapeError
from ..ir.types import Static, as_array_type
from ..ops.registry import NAMESPACE, Op


def _same_batch_size(sizes, message):
    for size in sizes[1:]:
        if size != sizes[0]:
            raise ValueError(message)
    return sizes[0]


def _same_batch_size_rule(sizes, message):
    if isinstance(sizes, Static):  # every size known: nothing left to check at run time
        if len(set(sizes.value)) > 1:
            raise ShapeError(message)
        return Static(sizes.value[0])
    known = {t.value for t in sizes.elts if isinstance(t, Static)}
    if len(known) > 1:
        raise ShapeError(message)
    dynamic = [t for t in sizes.elts if not isinstance(t, Static)]
    # never static: a static result would let the statement (and its check) be dropped
    return as_array_type(dynamic[0] if dynamic else sizes.elts[0])


same_batch_size = Op("same_batch_size", _same_batch_size, _same_batch_size_rule,
                     operands=("sizes",), static=("message",), differentiable=False)
del NAMESPACE["same_batch_size"]
