"""The hot path of a jitted call on small, plain arguments.

A call whose arguments are NumPy arrays, Arrays or scalars, or dicts, tuples and
lists of them, with no keywords, defaults or static arguments, is keyed by what
the compiled version depends on (structure, dtypes, which dims are 1) without
building abstract types, and runs the Numba entry directly. Anything else, or
any call that could be queued (async dispatch, debug_nans, committed devices),
takes the full path.
"""
import numpy as np

from ...ir.types import ArrayType, SequenceType, TreeType
from ...runtime import profiling
from ...runtime.array import Array
from ...runtime.devices import default_device
from ...runtime.dispatch import flags, new_array
from .boundary import to_numba, wrap_output
from .runtime import RuntimeBroadcast

_SCALARS = {float: np.dtype(np.float32), int: np.dtype(np.int32), bool: np.dtype(np.bool_)}
_NUMPY_SCALARS = {np.dtype(code).type for code in "?bBhHiIlLqQefdFD"}  # np.float32(1.5), ...


def key(args):
    """A hashable key for ``args`` or None when the fast path does not apply."""
    parts = []
    for a in args:
        part = _part(a)
        if part is None:
            return None
        parts.append(part)
    return tuple(parts)


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
    if t is dict or t is tuple or t is list:
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
    if t is tuple or t is list:
        return sum(_nbytes(v) for v in a)
    return 0


def allowed(args):
    """No reason to take the full path: nothing queued, traced, checked or big."""
    if flags.debug_nans or profiling._state.active:
        return False
    q = default_device()._queue
    if q is not None and q.busy():
        return False
    if flags.async_dispatch:
        n = 0
        for a in args:
            t = type(a)  # plain arrays inline: this runs on every call
            n += a.nbytes if t is np.ndarray else a._value.nbytes if t is Array else _nbytes(a)
        if n >= flags.async_min_bytes:
            return False
    return True


class FastCall:
    """Converts arguments and wraps results for one compiled Numba version and one key."""

    def __init__(self, compiled, key):
        self.entry = compiled.entry
        out = self.out_type = compiled.out_type
        self.single = isinstance(out, ArrayType)
        self.flat = getattr(out, "kind", "") == "tuple" and all(
            isinstance(e, ArrayType) for e in out.elts)
        self.out_types = (out,) if self.single else out.elts if self.flat else None
        self.dtype = out.dtype if self.single else None
        self.weak = self.single and out.weak
        self.converters = [_converter(t, part) for t, part in zip(compiled.arg_types, key)]

    def __call__(self, args):
        """The outputs, or None where the full path must run the call."""
        inputs = [conv(a) for conv, a in zip(self.converters, args)]
        try:
            out = self.entry(*inputs)
        except RuntimeBroadcast:
            return None
        if self.single:
            if type(out) is np.ndarray and out.dtype is self.dtype:  # the usual case, inline
                return new_array(out, self.weak)
            return _wrap(out, self.out_types[0])
        if self.flat:
            return tuple(_wrap(o, t) for o, t in zip(out, self.out_types))
        return wrap_output(out, self.out_type)  # dicts, nested containers


def applies(compiled):
    return all(_plain(t) for t in compiled.arg_types)


def _plain(t):
    """Arrays and containers of arrays (no static parts the key does not cover)."""
    if isinstance(t, ArrayType):
        return True
    if isinstance(t, SequenceType):
        return all(_plain(e) for e in t.elts)
    if isinstance(t, TreeType):
        return t.node_type in (dict, tuple, list) and all(_plain(e) for e in t.children)
    return False


def _converter(t, part):
    """How an argument matching key ``part`` becomes the entry's input of type ``t``."""
    if not isinstance(t, ArrayType):
        return lambda a: to_numba(a, t)  # a container: converted leaf by leaf
    dtype = t.dtype
    if t.ndim == 0:
        scalar = dtype.type
        if isinstance(part, tuple) and part[0] == "Array":
            return lambda a: scalar(a._value)
        return scalar
    as_array = isinstance(part, tuple) and part[0] == "Array"
    exact = (part[1] if as_array else part[0]) == dtype

    def convert(a):
        if as_array:
            a = a._value
        if not exact:  # a float64 input narrowed as the full path does
            return to_numba(a, t)
        return a if a.flags.c_contiguous else np.ascontiguousarray(a)
    return convert


def _wrap(value, t):
    if type(value) is not np.ndarray or value.dtype != t.dtype:
        value = np.asarray(value, dtype=t.dtype)
    return new_array(value, t.weak)
