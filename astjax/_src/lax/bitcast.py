"""``lax.bitcast_convert_type``: an array's bits read as another dtype, as JAX's.

The bits are NumPy's ``view`` of the operand, run through ``pure_callback`` (so eagerly, under
jit on both backends, and under vmap, which maps it over the batch). A narrower dtype adds a
trailing axis of ``itemsize ratio`` elements (least significant first on this little-endian
machine, as XLA's); a wider one takes that axis away. Its derivative is zero, as in JAX.
"""
import functools

import numpy as np

import astjax.numpy as jnp

from .. import dtypes
from ..callbacks import pure_callback
from ..random.checks import static_helper  # evaluated while generating code
from ..ops.registry import REGISTRY
from ..shapes_api import ShapeDtypeStruct

_stop_gradient = REGISTRY["stop_gradient"]


@static_helper
def _plan(dtype, new_dtype):
    """(the result's dtype, its trailing axis's change: 0, +ratio or -ratio); JAX's errors."""
    old, new = np.dtype(dtype), np.dtype(dtypes.canonicalize_dtype(new_dtype))
    if old != new and (old.kind in "bc" or new.kind in "bc"):
        raise TypeError(f"lax.bitcast_convert_type does not support bool or complex values "
                        f"unless the operand and destination types match. Got operand "
                        f"dtype={old}, new_dtype={new!r}. Consider using the arr.view() "
                        f"method instead.")
    if new.itemsize >= old.itemsize:
        return new, -(new.itemsize // old.itemsize) if new.itemsize > old.itemsize else 0
    return new, old.itemsize // new.itemsize


@static_helper
def _bits(dtype):
    return 8 * np.dtype(dtype).itemsize


def _view(x, new_dtype, change):
    x = np.asarray(x)
    bits = np.ascontiguousarray(x).reshape(-1).view(new_dtype)  # (a 0-d view cannot resize)
    if change < 0:
        return bits.reshape(x.shape[:-1])
    return bits.reshape(x.shape + (change,)) if change > 0 else bits.reshape(x.shape)


@static_helper
def _viewer(new_dtype, change):
    """The callback (a Python function of the operand alone, as pure_callback takes)."""
    return functools.partial(_view, new_dtype=new_dtype, change=change)


def bitcast_convert_type(operand, new_dtype):
    """``operand``'s bits as ``new_dtype``; no derivative (zero), as in JAX."""
    x = jnp.asarray(operand)
    new, change = _plan(x.dtype, new_dtype)
    if change == 0:
        shape = x.shape
    elif change > 0:
        shape = x.shape + (change,)
    else:
        if x.ndim == 0 or x.shape[-1] != -change:
            raise ValueError(f"Attempting to convert array of shape {x.shape} from "
                             f"{x.dtype} of size {_bits(x.dtype)} bits to {new} of size "
                             f"{_bits(new)}, bits but the last dimension is not "
                             f"{-change}")
        shape = x.shape[:-1]
    # the callback has no derivative: JAX's is zero, so the operand's is stopped
    return pure_callback(_viewer(new, change), ShapeDtypeStruct(shape, new),
                         _stop_gradient(x), vmap_method="expand_dims")
