"""Eager execution of one op on concrete values (what ``jnp.sin(x)`` does outside a transform).

It applies the same typing and dtype promotion as generated code, so eager and
compiled results agree bit for bit in dtype.
"""
import numpy as np

from .. import dtypes
from ..ir.types import ArrayType, SequenceType, as_array_type, type_of_value
from ..ops.registry import operand_casts
from . import profiling
from .array import Array, committed_device, to_numpy_input
from .dispatch import flags


def _to_numpy(value):
    if isinstance(value, (tuple, list)) and not hasattr(value, "_fields"):
        return type(value)(_to_numpy(v) for v in value)
    if isinstance(value, Array):
        return value._value
    if isinstance(value, np.ndarray) or isinstance(value, np.generic):
        return to_numpy_input(value)
    return value


def _param_value(value):
    """A param as impl gets it: Arrays inside it (index arrays) become NumPy arrays."""
    if isinstance(value, Array):
        return value._value
    if isinstance(value, (tuple, list)) and not hasattr(value, "_fields"):
        return type(value)(_param_value(v) for v in value)
    if isinstance(value, slice):
        return slice(*(_param_value(v) for v in (value.start, value.stop, value.step)))
    return value


def abstract_param(value):
    """A concrete param as abstract_eval sees it: arrays inside it become their types."""
    if isinstance(value, (Array, np.ndarray)):
        return type_of_value(value)
    if isinstance(value, (tuple, list)) and not hasattr(value, "_fields"):
        return type(value)(abstract_param(v) for v in value)
    if isinstance(value, slice):
        return slice(*(abstract_param(v) for v in (value.start, value.stop, value.step)))
    return value


def _cast(value, dtype):
    if isinstance(value, np.ndarray):
        return value.astype(dtype, copy=False)
    return dtype.type(value)


def apply_eagerly(op, args, kwargs):
    """Run ``op`` now, on the caller's thread (eager ops are synchronous).

    Pending Array operands are waited for (reading ``_value`` does that). The result
    goes on the operands' committed device, if any. With ``debug_nans`` on, a NaN in
    the result raises ``FloatingPointError`` naming the user's line.
    """
    start = profiling.now_ns() if profiling._state.active else 0
    operands, params = op.bind(args, kwargs)
    device = committed_device(operands.values())
    values = {k: _to_numpy(v) for k, v in operands.items()}
    types = {}
    for name, value in operands.items():
        types[name] = type_of_value(value if isinstance(value, Array) else values[name])
    out_type = op.infer(types, {k: abstract_param(v) for k, v in params.items()})
    params = {k: _param_value(v) for k, v in params.items()}
    casts = operand_casts(op, types, lambda n: dtypes.is_python_scalar(values[n]))
    for name, dtype in casts.items():
        values[name] = _cast(values[name], dtype)
    for name, t in types.items():
        if not isinstance(t, SequenceType) or op.raw_python_scalars:
            continue
        if name in op.promote:  # concatenate's tuple promotes element by element
            target = op.promoted_dtype(types)[0]
            values[name] = type(values[name])(_cast(np.asarray(v), target) for v in values[name])
        else:  # Python scalars in it take their weak dtype (NumPy would make them 64-bit)
            values[name] = type(values[name])(
                _cast(v, as_array_type(e).dtype) if dtypes.is_python_scalar(v) else v
                for v, e in zip(values[name], t.elts))
    args, kwargs = op.arrange({**values, **params})
    with np.errstate(over="ignore"):  # integers wrap silently, as in JAX
        out = op.impl(*args, **kwargs)
    if flags.debug_nans and profiling.has_nan(out):
        where, text = profiling.describe_frame(profiling.user_frame(1))
        raise profiling.nan_error(where, f"jnp.{op.name}", text)
    result = wrap_typed(out, out_type, device)
    if start:
        profiling.record_event(op.name, "eager", start, profiling.now_ns() - start)
    return result


def wrap_typed(value, out_type, device=None):
    """Wrap an impl's NumPy result as Arrays shaped like its abstract type."""
    if isinstance(out_type, SequenceType):
        return type(value)(wrap_typed(v, t, device) for v, t in zip(value, out_type.elts))
    if isinstance(out_type, ArrayType):
        arr = np.asarray(value)
        if arr.dtype != out_type.dtype:  # impls are tested to match; this guards eager users
            arr = arr.astype(out_type.dtype)
        return Array(arr, out_type.weak, device)
    return value
