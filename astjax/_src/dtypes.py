"""JAX's dtype rules: canonical dtypes, weak types and the promotion lattice.

float32 is the default float; 64-bit types need ``jax_enable_x64``. Python
scalars are *weak*: they take the dtype of the array they meet
(``float32_array * 2.0`` stays float32), as in JAX.
"""
import functools
import warnings

import numpy as np

from .config import config

bool_ = np.dtype(np.bool_)
int8, int16, int32, int64 = (np.dtype(t) for t in (np.int8, np.int16, np.int32, np.int64))
uint8, uint16, uint32, uint64 = (np.dtype(t) for t in (np.uint8, np.uint16, np.uint32, np.uint64))
float16, float32, float64 = (np.dtype(t) for t in (np.float16, np.float32, np.float64))
complex64, complex128 = np.dtype(np.complex64), np.dtype(np.complex128)

# the dtype of a gradient with respect to an integer input (grad(allow_int=True)): no data
float0 = np.dtype([("float0", np.void, 0)])

_NARROW = {int64: int32, uint64: uint32, float64: float32, complex128: complex64}
_SUPPORTED = {bool_, int8, int16, int32, int64, uint8, uint16, uint32, uint64,
              float16, float32, float64, complex64, complex128}


def x64_enabled():
    return config._values["jax_enable_x64"]  # hot: skips Config.__getattr__ (0.7 us)


def canonicalize_dtype(dtype):
    """The dtype an array of ``dtype`` gets: 64-bit types narrow unless x64 is on."""
    dtype = np.dtype(dtype)
    if dtype not in _SUPPORTED:
        raise TypeError(f"astjax does not support arrays of dtype {dtype}")
    if not x64_enabled():
        return _NARROW.get(dtype, dtype)
    return dtype


_warned = set()


def warn_if_narrowed(dtype):
    """One warning per dtype when a 64-bit input is narrowed, naming the switch."""
    dtype = np.dtype(dtype)
    if dtype in _NARROW and not x64_enabled() and dtype not in _warned:
        _warned.add(dtype)
        warnings.warn(
            f"{dtype} input converted to {_NARROW[dtype]}: 64-bit types are off by default, as "
            f"in JAX. Enable them with astjax.config.update('jax_enable_x64', True).",
            UserWarning, stacklevel=_user_stacklevel())


def _user_stacklevel():
    """The stacklevel of the first frame outside astjax, so warnings name the user's line."""
    import os
    import sys
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    frame, level = sys._getframe(1), 1
    while frame is not None and frame.f_code.co_filename.startswith(package):
        frame, level = frame.f_back, level + 1
    return level


def default_int():
    return int64 if x64_enabled() else int32


def default_float():
    return float64 if x64_enabled() else float32


def default_complex():
    return complex128 if x64_enabled() else complex64


def python_scalar_dtype(value):
    """Canonical (weak) dtype of a Python scalar."""
    if isinstance(value, (bool, np.bool_)):
        return bool_
    if isinstance(value, int):
        return default_int()
    if isinstance(value, float):
        return default_float()
    if isinstance(value, complex):
        return default_complex()
    raise TypeError(f"{type(value).__name__} is not a Python scalar")


def is_python_scalar(value):
    return isinstance(value, (bool, int, float, complex)) and not isinstance(value, np.generic)


# --- promotion lattice (JAX's, see jax._src.dtypes) ----------------------------------------
# Nodes are dtypes or the weak kinds 'i*', 'f*', 'c*'; an edge a -> b means a promotes to b.
_I, _F, _C = "i*", "f*", "c*"
_EDGES = {
    bool_: [_I],
    _I: [uint8, int8],
    uint8: [int16, uint16], uint16: [int32, uint32], uint32: [int64, uint64], uint64: [_F],
    int8: [int16], int16: [int32], int32: [int64], int64: [_F],
    _F: [float16], float16: [float32], float32: [float64, complex64], float64: [complex128],
    _C: [complex64], complex64: [complex128], complex128: [],
}
_EDGES[_F].append(_C)


@functools.lru_cache(maxsize=None)
def _upper_set(node):
    out = {node}
    for nxt in _EDGES[node]:
        out |= _upper_set(nxt)
    return frozenset(out)


def _node(dtype, weak):
    if not weak or dtype == bool_:
        return dtype
    kind = dtype.kind
    return _I if kind in "iu" else _F if kind == "f" else _C


def _weak_kind_dtype(node):
    return {_I: default_int(), _F: default_float(), _C: default_complex()}[node]


@functools.lru_cache(maxsize=4096)
def _promote_nodes(nodes):
    common = functools.reduce(lambda a, b: a & b, (_upper_set(n) for n in nodes))
    # the least upper bound: the common node whose upper set contains all the others
    for cand in common:
        if all(other in _upper_set(cand) for other in common):
            return cand
    raise TypeError("no common dtype")  # unreachable: complex128 bounds everything


def promote_types(*typed):
    """Promote ``(dtype, weak)`` pairs; return ``(dtype, weak)`` of the result."""
    node = _promote_nodes(tuple(_node(np.dtype(d), w) for d, w in typed))
    if isinstance(node, str):
        return _weak_kind_dtype(node), True
    return canonicalize_dtype(node), False


def is_float(dtype):
    return np.dtype(dtype).kind == "f"


def is_inexact(dtype):
    return np.dtype(dtype).kind in "fc"


def is_integer(dtype):
    return np.dtype(dtype).kind in "iu"


def to_inexact(dtype, weak=False):
    """The float dtype that ``sin(x)`` etc. compute in (JAX's promote_args_inexact)."""
    dtype = np.dtype(dtype)
    if is_inexact(dtype):
        return dtype, weak
    if weak or dtype.itemsize == 8:  # a Python int or a 64-bit integer: the default float
        return default_float(), weak
    return np.dtype(np.float32), weak  # bool and narrower integers, as JAX with x64 on
