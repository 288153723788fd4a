"""``astjax.lax``: lower-level operations, as in ``jax.lax``.

Control flow (``fori_loop``, ``while_loop``, ``cond``, ``switch``, ``scan``) compiles to
Python loops and branches in the generated source, and reverse mode differentiates them
(``while_loop`` included). Body functions may be nested defs or lambdas that use the
enclosing function's variables. See ``astjax/_src/lax/``.
"""
from ._src.lax.control_flow import cond, fori_loop, scan, switch, while_loop
from ._src.lax.slicing import (dynamic_index_in_dim, dynamic_slice, dynamic_slice_in_dim,
                               dynamic_update_index_in_dim, dynamic_update_slice,
                               dynamic_update_slice_in_dim, select)
from ._src.batching.collectives import all_gather, axis_index, pmax, pmean, pmin, psum
from ._src.ops.registry import REGISTRY as _REGISTRY

from ._src.lax.trees import tree_map as _tree_map
from ._src.ops.registry import register_alias as _register_alias


def stop_gradient(x):
    """``x`` with no derivative; as in JAX, ``x`` may be a pytree (each leaf stopped)."""
    return _tree_map(_REGISTRY["stop_gradient"], x)


# compiled code calls the op itself on an array, and this function on a pytree
_register_alias(stop_gradient, _REGISTRY["stop_gradient"])
_REGISTRY["stop_gradient"].tree_function = stop_gradient

__all__ = ["stop_gradient", "fori_loop", "while_loop", "cond", "switch", "scan", "select",
           "dynamic_slice", "dynamic_update_slice", "dynamic_slice_in_dim",
           "dynamic_index_in_dim", "dynamic_update_slice_in_dim",
           "dynamic_update_index_in_dim", "psum", "pmean", "pmax", "pmin", "all_gather",
           "axis_index"]
