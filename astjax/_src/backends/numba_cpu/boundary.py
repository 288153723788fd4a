"""Values crossing into and out of Numba-compiled code.

Inside, 0-d arrays are scalars, containers (dicts, namedtuples, registered
classes) are tuples of their children in flatten order, and static values are
not passed at all. Arrays go in C-contiguous, so one compiled version serves
every layout the user passes.
"""
import hashlib
import os
import re
import sys
import threading

import numba
import numpy as np

from ...ir.types import ArrayType, ListType, SequenceType, Static, TreeType
from ...runtime.array import to_numpy_input
from ...runtime.dispatch import new_array, wrap_outputs


def to_numba(value, t):
    if isinstance(t, ArrayType):
        value = to_numpy_input(value)
        if t.ndim == 0:
            return np.asarray(value, dtype=t.dtype)[()]
        value = np.asarray(value)
        if value.dtype != t.dtype:
            value = value.astype(t.dtype)
        return value if value.flags.c_contiguous else np.ascontiguousarray(value)
    if isinstance(t, Static):
        return None
    if isinstance(t, SequenceType):
        return tuple(to_numba(v, e) for v, e in zip(value, t.elts))
    if isinstance(t, TreeType):
        from ...tree_util import flatten_one_level
        children, _, _ = flatten_one_level(value)
        return tuple(to_numba(v, e) for v, e in zip(children, t.children))
    raise TypeError(f"cannot pass {type(value).__name__} to compiled code")


def wrap_output(value, t):
    if isinstance(t, ArrayType):
        arr = np.asarray(value)
        if arr.dtype != t.dtype:
            arr = arr.astype(t.dtype)
        return new_array(arr, t.weak)
    if isinstance(t, SequenceType):
        items = [wrap_output(v, e) for v, e in zip(value, t.elts)]
        return items if t.kind == "list" else tuple(items)
    if isinstance(t, ListType):  # a list built at run time: Numba gives Python scalars back
        return [wrap_output(v, t.elt) for v in value]
    if isinstance(t, TreeType):
        from ...tree_util import unflatten_one_level
        return unflatten_one_level(t.node_type, t.aux,
                                   [wrap_output(v, e) for v, e in zip(value, t.children)])
    if isinstance(t, Static):
        return wrap_outputs(t.value, t)
    return value


def module_namespace(namespace):
    """Captured 0-d arrays become scalars, as 0-d values are everywhere else."""
    return {k: (v[()] if isinstance(v, np.ndarray) and v.ndim == 0 else v)
            for k, v in namespace.items()}


def _file_hash(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()[:12]


_HERE = os.path.dirname(os.path.abspath(__file__))
# what generated code calls and LLVM inlines from Numba's cache into the user's function's
# cache (the kernels keep their bitcode): the runtime, its kernels, and the functions that
# random_kernels.py compiles. A change to one must not leave old copies in users' caches.
RUNTIME_SOURCES = ("runtime.py", "special_kernels.py", "random_kernels.py", "fft_kernels.py",
                   "linalg_kernels.py", "../../random/threefry_hash.py",
                   "../../random/xla_f32.py")


def _runtime_hash():
    h = hashlib.sha256()
    for name in RUNTIME_SOURCES:
        h.update(_file_hash(os.path.join(_HERE, name)).encode())
    return h.hexdigest()[:12]


def key_comment(namespace):
    """A last source line keying the module (and so Numba's disk cache) on what the source
    does not show: captured arrays' contents and the versions that compile it."""
    h = hashlib.sha256()
    for name in sorted(namespace):
        value = namespace[name]
        h.update(name.encode())
        if isinstance(value, (np.ndarray, np.generic)):
            h.update(str(value.dtype).encode())
            h.update(str(np.shape(value)).encode())
            h.update(np.ascontiguousarray(value).tobytes())
        elif isinstance(value, (bool, int, float, complex, str, type(None))):
            h.update(repr(value).encode())
    import astjax
    from .. import mathlib
    versions = f"astjax {astjax.__version__}, numba {numba.__version__}, numpy " \
               f"{np.__version__}, python {sys.version.split()[0]}, mathlib " \
               f"{mathlib.CACHE_KEY}, runtime {_runtime_hash()}"
    return f"# {versions}; constants {h.hexdigest()[:16]}\n"


_PARALLEL_LAUNCH = threading.Lock()


def one_parallel_call_at_a_time(entry):
    """``entry`` (compiled with ``parallel=True``) behind one process-wide lock: Numba's
    workqueue threading layer, the one every machine has, aborts the process when two
    threads (the caller and a device's worker) launch parallel loops at once."""

    def call(*inputs):
        with _PARALLEL_LAUNCH:
            return entry(*inputs)
    call.__wrapped__ = entry
    return call


def dispatcher(entry):
    """The Numba dispatcher of a loaded entry (under one_parallel_call_at_a_time's
    wrapper, if any)."""
    while not hasattr(entry, "py_func") and hasattr(entry, "__wrapped__"):
        entry = entry.__wrapped__
    return entry


def numba_failure(error, entry):
    """A one-line reason for a Numba compile failure (which means generated code it cannot
    type, our bug, not the user's): Numba's own first line, and the user's file:line that
    the failing generated line came from."""
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    body = [line for line in lines if not line.startswith("Failed in")] or lines or ["?"]
    what = body[0]
    if what.endswith(":"):  # "No implementation of function ... found for signature:"
        what += " " + next((line for line in body[1:] if line.startswith(">>>")), "")
    entry = dispatcher(entry)
    namespace = getattr(getattr(entry, "py_func", entry), "__globals__", {})
    line_map = namespace.get("__astjax_line_map__", {})
    module_file = os.path.basename(namespace.get("__file__") or "?")
    for path, number in re.findall(r'File "([^"]+)", line (\d+)', str(error)):
        where = line_map.get(int(number)) if os.path.basename(path) == module_file else None
        if where is not None:
            return f"Numba: {what.strip()} (at {where[0]}:{where[1]})"
    return f"Numba: {what.strip()}"
