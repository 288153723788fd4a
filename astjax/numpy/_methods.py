"""Array methods JAX's Array has that call ``astjax.numpy`` functions (``x.sort()`` is
``jnp.sort(x)``), eagerly and in compiled code. Those that are ops are ordinary methods of
the op (``register_method``); the others call the function with the array first."""
import astjax.numpy as jnp

from .._src.ops.registry import FUNCTION_METHODS, Op, register_method


def _compress(a, condition, axis=None, *, size=None, fill_value=0):
    return jnp.compress(condition, a, axis, size=size, fill_value=fill_value)


for _name, _fn in {"sort": jnp.sort, "argsort": jnp.argsort, "argpartition": jnp.argpartition,
                   "diagonal": jnp.diagonal, "take": jnp.take, "nonzero": jnp.nonzero,
                   "searchsorted": jnp.searchsorted, "compress": _compress, "ptp": jnp.ptp,
                   "choose": jnp.choose}.items():
    if isinstance(_fn, Op):
        register_method(_name, _fn.name)
    else:
        FUNCTION_METHODS[_name] = _fn
