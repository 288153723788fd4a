"""Eager execution of one op on concrete values (what ``jnp.sin(x)`` does outside a transform).

It applies the same typing and dtype promotion as generated code, so eager and
compiled results agree bit for bit in dtype.
"""
import numpy as np

from .. import dtypes
from ..config import config
from ..ir.types import ArrayType, SequenceType, as_array_type, type_of_value
from ..ops.registry import operand_casts, wrapped_int
from . import profiling
from .array import Array, committed_device, to_numpy_input
from .dispatch import LeafRef, execute, flags, wrap_outputs


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
    """Run ``op`` on concrete values; return its result as Arrays.

    It runs now, on the caller's thread, unless an operand is pending (the result of
    queued work) or async dispatch applies to its size (``dispatch.execute``'s policy):
    then it is queued on the device behind that work and returns pending Arrays, typed by
    the op's rule (an error then surfaces at the first read, naming the line of the call).
    The result goes on the operands' committed device, if any. With ``debug_nans`` on, a
    NaN in the result raises ``FloatingPointError`` naming the user's line.
    """
    start = profiling.now_ns() if profiling._state.active else 0
    operands, params = op.bind(args, kwargs)
    device = committed_device(operands.values())
    if _queue_it(operands.values()):
        return _apply_queued(op, operands, params, device)
    out, out_type = _compute(op, operands, params)
    kind = flags.debug_nans and profiling.has_nan(out)
    if kind:
        where, text = profiling.describe_frame(profiling.user_frame(1))
        raise profiling.nan_error(where, f"jnp.{op.name}", text, kind=kind)
    result = wrap_typed(out, out_type, device)
    if start:
        profiling.record_event(op.name, "eager", start, profiling.now_ns() - start)
    return result


def _queue_it(operands):
    """Whether an op on ``operands`` goes to the device queue: one is pending, or async
    dispatch is on and they hold at least ``astjax_async_min_bytes``."""
    nbytes = 0
    for v in operands:
        t = type(v)
        if t is Array:
            if type(v._pending) is LeafRef:
                return True
            nbytes += v._value.nbytes
        elif t is np.ndarray:
            nbytes += v.nbytes
        elif t is tuple or t is list:
            if any(type(e) is Array and type(e._pending) is LeafRef for e in v):
                return True
    return flags.async_dispatch and nbytes >= flags.async_min_bytes


def _apply_queued(op, operands, params, device):
    types = {name: _type_of(value) for name, value in operands.items()}
    out_type = op.infer(types, {k: abstract_param(v) for k, v in params.items()})
    where, text = profiling.describe_frame(profiling.user_frame(2))

    def work():
        _wait_for(operands.values())  # a failed producer's error passes through unchanged
        _wait_for(params.values())
        try:
            out, ran_type = _compute(op, operands, params)
        except Exception as e:  # raised at the first read: say where the op was called
            e.args = (f"{where}: jnp.{op.name}: {e.args[0] if e.args else ''}\n    {text}",) \
                + tuple(e.args[1:])
            raise
        kind = flags.debug_nans and profiling.has_nan(out)
        if kind:
            raise profiling.nan_error(where, f"jnp.{op.name}", text, kind=kind)
        return out, ran_type
    return execute(work, (), out_type, device=device, name=f"jnp.{op.name}", behind=True,
                   wrap=_wrap_queued)


def _wait_for(values):
    for v in values:
        if type(v) is Array:
            v.block_until_ready()
        elif type(v) is tuple or type(v) is list:
            _wait_for(v)
        elif type(v) is slice:
            _wait_for((v.start, v.stop, v.step))


def _wrap_queued(result, out_type):
    out, ran_type = result  # the types of the values the op really ran on
    return wrap_outputs(out, ran_type)


def _type_of(value):
    if isinstance(value, (tuple, list)) and not hasattr(value, "_fields"):
        return SequenceType(tuple(_type_of(v) for v in value),
                            "tuple" if isinstance(value, tuple) else "list")
    return type_of_value(value if isinstance(value, Array) else _to_numpy(value))


_TYPINGS = {}  # (op, operand types, which are Python scalars, abstract params) -> typing
config.on_change(lambda name, value: _TYPINGS.clear())  # x64 changes promotion


def _typing(op, types, abstract_params, values):
    """``op``'s output type, operand casts (``operand_casts``) for these operands, and the
    integer dtype Python int literals are wrapped into (``wrapped_int``; None: none).

    Cached: a tiny op spends most of its time here otherwise (an eager ``x * y`` took
    47 us, JAX's 11 us). Keys that do not hash (slices, lists among params) are not."""
    scalars = tuple(dtypes.is_python_scalar(v) for v in values.values())
    key = (op, tuple(types.items()), scalars,
           tuple((k, type(v), v) for k, v in abstract_params.items()))  # 1 vs 1.0 vs True
    try:
        hit = _TYPINGS.get(key)
    except TypeError:
        key = hit = None
    if hit is not None:
        return hit
    out_type = op.infer(types, abstract_params)
    casts = operand_casts(op, types, lambda n: dtypes.is_python_scalar(values[n]))
    target = op.promoted_dtype(types) if any(
        type(values.get(n)) is int for n in op.promote) else None
    int_target = target[0] if target is not None and target[0].kind in "iu" else None
    if key is not None:
        if len(_TYPINGS) > 4096:
            _TYPINGS.clear()
        _TYPINGS[key] = out_type, casts, int_target
    return out_type, casts, int_target


def _compute(op, operands, params):
    """``op``'s NumPy result on the operands' values (waiting for pending ones), with
    its abstract type."""
    raw_params = {k: _param_value(v) for k, v in params.items()}  # (waiting: then typed)
    values = {k: _to_numpy(v) for k, v in operands.items()}
    types = {}
    for name, value in operands.items():
        types[name] = type_of_value(value if isinstance(value, Array) else values[name])
    out_type, casts, int_target = _typing(
        op, types, {k: abstract_param(v) for k, v in params.items()}, values)
    params = raw_params
    for name, dtype in casts.items():
        values[name] = _cast(values[name], dtype)
    if int_target is not None:
        for name in op.promote:
            if type(values.get(name)) is int and name not in casts:
                values[name] = wrapped_int(values[name], int_target)
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
        return op.impl(*args, **kwargs), out_type


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
