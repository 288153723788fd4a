"""The hot path of a jitted call on small, plain arguments.

A call whose arguments are NumPy arrays, Arrays or scalars, or dicts, tuples, lists
and namedtuples of them, with no keywords or static arguments (parameters left to their
defaults are fine), is keyed by what the compiled version depends on (structure, dtypes,
which dims are 1) without building abstract types, and runs the Numba entry directly.
A call big enough for async dispatch to queue skips only the typing: it runs its
compiled version's full ``run``. Anything else (debug_nans, committed devices, pending
arguments) takes the full path.
"""
import numpy as np

from ...ir.trees import is_namedtuple_class
from ...ir.types import ArrayType, SequenceType, Static, TreeType
from ...runtime import profiling
from ...runtime.array import Array
from ...runtime.devices import default_device
from ...runtime.dispatch import flags, new_array
from .boundary import to_numba, wrap_output

_SCALARS = {float: np.dtype(np.float32), int: np.dtype(np.int32), bool: np.dtype(np.bool_)}
_NUMPY_SCALARS = {np.dtype(code).type for code in "?bBhHiIlLqQefdFD"}  # np.float32(1.5), ...


def key(args):
    """A hashable key for ``args`` (``is_big`` tells whether async dispatch queues the
    call), or None when the fast path does not apply (not plain values)."""
    parts, nbytes = [], 0
    for a in args:
        t = type(a)
        if t is np.ndarray:  # the usual cases, inline
            shape = a.shape  # which dims are 1; just the rank when none is
            parts.append((a.dtype, tuple(d == 1 for d in shape) if 1 in shape else len(shape)))
            nbytes += a.nbytes
            continue
        if t in _NUMPY_SCALARS or t in _SCALARS:
            parts.append(t)
            continue
        part = _part(a)
        if part is None:
            return None
        parts.append(part)
        nbytes += _nbytes(a)
    return tuple(parts), flags.async_dispatch and nbytes >= flags.async_min_bytes


def is_big(key):
    return key[1]


def _part(a):
    t = type(a)
    if t is np.ndarray:
        shape = a.shape  # which dims are 1; just the rank when none is (the usual case)
        return (a.dtype, tuple(d == 1 for d in shape) if 1 in shape else len(shape))
    if t is Array:
        if a._device is not None or a._pending is not None:
            return None
        value = a._value
        shape = value.shape
        return ("Array", value.dtype, a._weak,
                tuple(d == 1 for d in shape) if 1 in shape else len(shape))
    if t in _SCALARS or t in _NUMPY_SCALARS:
        return t
    if t is dict or t is tuple or t is list or is_namedtuple_class(t):
        try:
            items = [a[k] for k in sorted(a)] if t is dict else a
        except TypeError:  # keys that do not sort
            return None
        leaves = tuple(_part(v) for v in items)
        if None in leaves:
            return None
        return (t, tuple(sorted(a)) if t is dict else len(a), leaves)
    return None


def _nbytes(a):
    t = type(a)
    if t is np.ndarray:
        return a.nbytes
    if t is Array:
        return a._value.nbytes
    if t is dict:
        return sum(_nbytes(v) for v in a.values())
    if isinstance(a, (tuple, list)):
        return sum(_nbytes(v) for v in a)
    return 0


def allowed():
    """No reason to take the full path: nothing queued, traced or checked (``key`` has
    ruled out big arguments)."""
    if flags.debug_nans or profiling._state.active:
        return False
    q = default_device()._queue
    return q is None or not q.busy()


def fast_call(compiled, key):
    """``call(args)``: the outputs of one compiled Numba version for arguments matching
    ``key``, or None where the full path must run the call. Closures, not a class: every
    attribute lookup shows in a call that takes a few microseconds."""
    entry = compiled.entry
    out_type = compiled.out_type
    converters = [_converter(t, part) for t, part in zip(compiled.arg_types, key[0])]
    wrap = _wrapper(out_type)
    if len(converters) == 1 and isinstance(out_type, ArrayType):
        (convert,), dtype, weak = converters, out_type.dtype, out_type.weak

        def call(args):  # one argument, one array: the usual small call, inlined
            try:
                out = entry(args[0] if convert is None else convert(args[0]))
            except (ValueError, IndexError, ArithmeticError, AssertionError):
                return None  # RuntimeBroadcast, or an error: the full path reruns in Python
            if type(out) is np.ndarray:
                if out.dtype is dtype:
                    return new_array(out, weak)
            elif out_type.ndim == 0:  # Numba returns a 0-d result as a Python number
                return new_array(np.asarray(out, dtype), weak)
            return wrap(out)
        return call

    converters = [(lambda a: a) if convert is None else convert for convert in converters]

    def call(args):
        try:
            out = entry(*[convert(a) for convert, a in zip(converters, args)])
        except (ValueError, IndexError, ArithmeticError, AssertionError):
            return None  # RuntimeBroadcast, or an error: the full path reruns in Python
        return wrap(out)
    return call


def _wrapper(out):
    """Raw entry result -> Arrays, laid out like ``out``."""
    if isinstance(out, ArrayType):
        return lambda value: _wrap(value, out)
    if getattr(out, "kind", "") == "tuple" and all(isinstance(e, ArrayType) for e in out.elts):
        return lambda values: tuple(_wrap(v, t) for v, t in zip(values, out.elts))
    return lambda value: wrap_output(value, out)  # dicts, nested containers


def applies(compiled, n_given):
    """The first ``n_given`` arguments are plain; the rest are defaults (static)."""
    types = compiled.arg_types
    return all(_plain(t) for t in types[:n_given]) and \
        all(isinstance(t, Static) for t in types[n_given:])


def _plain(t):
    """Arrays and containers of arrays (no static parts the key does not cover)."""
    if isinstance(t, ArrayType):
        return True
    if isinstance(t, SequenceType):
        return all(_plain(e) for e in t.elts)
    if isinstance(t, TreeType):
        return (t.node_type is dict or is_namedtuple_class(t.node_type)) and \
            all(_plain(e) for e in t.children)
    return False


def _converter(t, part):
    """How an argument matching key ``part`` becomes the entry's input of type ``t``
    (None: as it is)."""
    if not isinstance(t, ArrayType):
        return lambda a: to_numba(a, t)  # a container: converted leaf by leaf
    dtype = t.dtype
    if t.ndim == 0:
        scalar = dtype.type
        if part is scalar:  # np.float32(0.5) for a float32 scalar
            return None
        if isinstance(part, tuple) and part[0] == "Array":
            return lambda a: scalar(a._value)
        return scalar
    as_array = isinstance(part, tuple) and part[0] == "Array"
    exact = (part[1] if as_array else part[0]) == dtype
    if not exact:  # a float64 input narrowed as the full path does
        return (lambda a: to_numba(a._value, t)) if as_array else (lambda a: to_numba(a, t))
    if as_array:
        def convert(a):
            a = a._value
            return a if a.flags.c_contiguous else np.ascontiguousarray(a)
        return convert
    return lambda a: a if a.flags.c_contiguous else np.ascontiguousarray(a)


def _wrap(value, t):
    if type(value) is not np.ndarray or value.dtype != t.dtype:
        value = np.asarray(value, dtype=t.dtype)
    return new_array(value, t.weak)
