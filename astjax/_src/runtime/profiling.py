"""Profiling and debugging machinery behind ``astjax.profiler`` and ``debug_nans``.

- Allocation sites: every ``Array`` records, when it is created, the first frame
  outside astjax (the user's ``file:line``) as ``(code, f_lasti, transform)``;
  the line number is worked out only when a profile is written. ``transform`` is
  the innermost ``transform_scope`` name (e.g. ``"jit(f)"``) active at creation.
- Traces: while a trace is on, ``record_event`` / ``trace_event`` collect Chrome
  trace-event "complete" events (``"ph": "X"``, microseconds) from every thread;
  ``stop_trace`` writes them, gzipped JSON, to
  ``<log_dir>/plugins/profile/<YYYY_MM_DD_HH_MM_SS>/<host>.trace.json.gz`` (JAX's
  layout); Perfetto (ui.perfetto.dev) and chrome://tracing open it.
- Memory profiles: live Arrays grouped by (site, transform, device), written as a
  gzipped pprof ``perftools.profiles.Profile`` protobuf (encoded by hand below).
- NaN checks (``debug_nans``): ``check_nans`` raises ``FloatingPointError`` naming
  the user's line.
"""
import contextlib
import contextvars
import gzip
import itertools
import json
import linecache
import os
import socket
import sys
import threading
import time

import numpy as np

_PKG_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# --- allocation sites -------------------------------------------------------------------------

_transform = contextvars.ContextVar("astjax_transform", default=None)
_internal_files = {}
_getframe = sys._getframe


def _is_internal(frame):
    filename = frame.f_code.co_filename
    internal = _internal_files.get(filename)
    if internal is None:
        internal = (filename.startswith(_PKG_DIR + os.sep)
                    or "__astjax_line_map__" in frame.f_globals)  # generated modules
        _internal_files[filename] = internal
    return internal


def user_frame(depth=1):
    """The innermost frame outside astjax, starting ``depth`` frames above the caller."""
    f = _getframe(depth + 1)
    get = _internal_files.get
    while f is not None:
        internal = get(f.f_code.co_filename)
        if internal is None:
            internal = _is_internal(f)
        if not internal:
            return f
        f = f.f_back
    return None


def capture_site(transform=None):
    """A cheap record of where the caller's caller was called from in user code.

    ``(code, f_lasti, transform)``; ``site_location`` turns it into file/line/function.
    """
    f = _getframe(2)
    get = _internal_files.get
    while f is not None:
        internal = get(f.f_code.co_filename)
        if internal is None:
            internal = _is_internal(f)
        if not internal:
            return (f.f_code, f.f_lasti, transform or _transform.get())
        f = f.f_back
    return (None, 0, transform or _transform.get())


def site_location(site):
    """``(filename, lineno, function)`` of a site from ``capture_site`` (or Nones)."""
    if site is None or site[0] is None:
        return None, None, None
    code, lasti, _ = site
    line = code.co_firstlineno
    for start, end, lineno in code.co_lines():
        if start <= lasti < end:
            if lineno is not None:
                line = lineno
            break
    return code.co_filename, line, code.co_qualname


@contextlib.contextmanager
def transform_scope(name):
    """Arrays created inside are attributed to transform ``name`` (e.g. ``"jit(f)"``)."""
    token = _transform.set(name)
    try:
        yield
    finally:
        _transform.reset(token)


def current_transform():
    return _transform.get()


# --- traces -----------------------------------------------------------------------------------

class _TraceState:
    def __init__(self):
        self.active = False
        self.log_dir = None
        self.events = []
        self.thread_names = {}
        self.start_wall = None
        self.lock = threading.Lock()


_state = _TraceState()
_perf_ns = time.perf_counter_ns
_PID = os.getpid()


def tracing():
    """Whether a trace is being recorded (cheap: check before building event args)."""
    return _state.active


def now_ns():
    return _perf_ns()


def record_event(name, category, start_ns, duration_ns, args=None):
    """Record one complete event (``perf_counter_ns`` start and duration) if tracing.

    Called from any thread; the event goes on that thread's track.
    """
    if not _state.active:
        return
    thread = threading.current_thread()
    tid = threading.get_native_id()
    if tid not in _state.thread_names:
        _state.thread_names[tid] = thread.name
    event = {"name": name, "cat": category, "ph": "X", "ts": start_ns / 1000.0,
             "dur": duration_ns / 1000.0, "pid": _PID, "tid": tid}
    if args:
        event["args"] = {k: _jsonable(v) for k, v in args.items()}
    _state.events.append(event)


def record_instant(name, category, args=None):
    """A zero-length event (a cache hit, say)."""
    if _state.active:
        record_event(name, category, _perf_ns(), 0, args)


def _jsonable(value):
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return str(value)


class _Span:
    __slots__ = ("name", "category", "args", "start")

    def __init__(self, name, category, args):
        self.name, self.category, self.args = name, category, args

    def __enter__(self):
        self.start = _perf_ns()
        return self

    def __exit__(self, exc_type, exc, tb):
        args = self.args
        if exc_type is not None:
            args = dict(args or {}, error=f"{exc_type.__name__}: {exc}")
        record_event(self.name, self.category, self.start, _perf_ns() - self.start, args)
        return False


_NULL = contextlib.nullcontext()


def trace_event(name, category="astjax", **args):
    """``with trace_event("compile jit(f)", "compile"):`` records a span when tracing."""
    if not _state.active:
        return _NULL
    return _Span(name, category, args)


def start_trace(log_dir, create_perfetto_link=False, create_perfetto_trace=False):
    """Start collecting events; ``stop_trace`` writes them under ``log_dir``."""
    with _state.lock:
        if _state.active:
            raise RuntimeError("a trace is already being recorded; call "
                               "astjax.profiler.stop_trace() first")
        _state.log_dir = os.fspath(log_dir)
        _state.events = []
        _state.thread_names = {}
        _state.start_wall = time.localtime()
        _state.active = True


def stop_trace():
    """Stop collecting; write the trace file and return its path."""
    with _state.lock:
        if not _state.active:
            raise RuntimeError("no trace is being recorded; call "
                               "astjax.profiler.start_trace(log_dir) first")
        from .devices import devices
        for d in devices():  # queued work belongs in the trace
            d.synchronize()
        _state.active = False
        events, names = _state.events, _state.thread_names
        _state.events, _state.thread_names = [], {}
        meta = [{"name": "process_name", "ph": "M", "pid": _PID, "tid": 0,
                 "args": {"name": f"astjax (pid {_PID})"}}]
        for tid, tname in sorted(names.items()):
            meta.append({"name": "thread_name", "ph": "M", "pid": _PID, "tid": tid,
                         "args": {"name": tname}})
        stamp = time.strftime("%Y_%m_%d_%H_%M_%S", _state.start_wall)
        run_dir = os.path.join(_state.log_dir, "plugins", "profile", stamp)
        os.makedirs(run_dir, exist_ok=True)
        host = socket.gethostname() or "localhost"
        path = os.path.join(run_dir, f"{host}.trace.json.gz")
        for i in itertools.count(1):
            if not os.path.exists(path):
                break
            path = os.path.join(run_dir, f"{host}_{i}.trace.json.gz")
        body = {"displayTimeUnit": "ns", "traceEvents": meta + events}
        with gzip.open(path, "wt", encoding="utf-8") as fh:
            json.dump(body, fh)
        return path


# --- NaN checks -------------------------------------------------------------------------------

def _leaves(value, out):
    if isinstance(value, (np.ndarray, np.generic)):
        out.append(value)
    elif isinstance(value, (float, complex)):  # a 0-d result of Numba code
        out.append(np.asarray(value))
    elif isinstance(value, (tuple, list)):
        for v in value:
            _leaves(v, out)
    elif isinstance(value, dict):
        for v in value.values():
            _leaves(v, out)
    elif hasattr(value, "_value") and hasattr(value, "_weak"):  # an Array
        out.append(value._value)
    else:
        from ..tree_util import flatten_one_level
        node = flatten_one_level(value)
        if node is not None:
            for v in node[0]:
                _leaves(v, out)
    return out


CHECKED = [True, False]  # [NaNs, infinities]: set by debug_nans and debug_infs (dispatch)


def has_nan(value):
    """``"NaN"`` (or ``"Inf"``, with debug_infs on) if a NumPy value, Array or pytree of
    them holds one (floats and complex), else None."""
    nans, infs = CHECKED
    for leaf in _leaves(value, []):
        if leaf.dtype.kind in "fc":
            if nans and np.isnan(leaf).any():
                return "NaN"
            if infs and np.isinf(leaf).any():
                return "Inf"
    return None


def describe_frame(frame):
    """``"file:line"`` and the stripped source line of a frame (or of nothing)."""
    if frame is None:
        return "<unknown>", ""
    filename, lineno = frame.f_code.co_filename, frame.f_lineno
    return f"{filename}:{lineno}", linecache.getline(filename, lineno).strip()


def nan_error(where, what, text="", origin=None, kind="NaN"):
    """The error for a NaN (``kind``: or ``"Inf"``) out of ``what`` called at ``where``;
    ``origin`` (a callable giving the first invalid operation's ``"file:line: ..."`` or
    None) leads when known."""
    switch = "debug_nans" if kind == "NaN" else "debug_infs"
    value = "invalid value (NaN)" if kind == "NaN" else "infinite value (Inf)"
    message = f"{where}: {value} produced by {what} ({switch} is on)"
    if text:
        message += f"\n    {text}"
    found = origin() if origin is not None else None
    if found:
        message = (f"{found}\n  a{'n' if kind == 'Inf' else ''} {kind} in the result of "
                   f"{what} ({switch} is on), called at {where}" + (f": {text}" if text else ""))
    return FloatingPointError(message)


def check_nans(outputs, where, what="a jitted call", origin=None):
    """Raise ``FloatingPointError`` if ``outputs`` (a pytree) holds a NaN.

    ``where`` is a ``"file:line"`` string, a frame, or None (the innermost user frame
    of the caller); ``what`` names the computation (``"jit(f)"``); ``origin`` see
    ``nan_error``.
    """
    kind = has_nan(outputs)
    if not kind:
        return
    text = ""
    if where is None or hasattr(where, "f_code"):
        where, text = describe_frame(where if where is not None else user_frame(1))
    raise nan_error(where, what, text, origin, kind)


# --- memory profiles (pprof) ------------------------------------------------------------------

def _live_arrays():
    import gc

    from .array import Array
    return [o for o in gc.get_objects() if type(o) is Array]


def _buffer_key(value):
    base = value
    while isinstance(getattr(base, "base", None), np.ndarray):
        base = base.base
    return id(base), int(getattr(base, "nbytes", 0))


def memory_profile_samples():
    """``{(site_location, transform, device_str): [count, bytes]}`` over live Arrays.

    Waits for queued work first. A buffer shared by several Arrays (views) counts once.
    """
    from .devices import devices
    for d in devices():
        d.synchronize()
    groups, seen = {}, set()
    for a in _live_arrays():
        value = a._peek()
        if value is None:  # deleted, or failed work
            continue
        key, nbytes = _buffer_key(value)
        if key in seen:
            continue
        seen.add(key)
        site = a._site
        transform = site[2] if site is not None else None
        g = groups.setdefault((site_location(site), transform, str(a.device)), [0, 0])
        g[0] += 1
        g[1] += nbytes
    return groups


def _varint(n):
    if n < 0:
        n += 1 << 64
    out = bytearray()
    while True:
        byte = n & 0x7F
        n >>= 7
        if n:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _field_varint(field, n):
    return _varint(field << 3) + _varint(n)


def _field_bytes(field, data):
    return _varint((field << 3) | 2) + _varint(len(data)) + data


def _field_packed(field, numbers):
    return _field_bytes(field, b"".join(_varint(n) for n in numbers))


class _Strings:
    def __init__(self):
        self.table, self.index = [""], {"": 0}

    def __call__(self, s):
        i = self.index.get(s)
        if i is None:
            i = self.index[s] = len(self.table)
            self.table.append(s)
        return i


def encode_pprof(groups, time_nanos=None):
    """The (uncompressed) ``perftools.profiles.Profile`` bytes for ``groups``."""
    strings, functions, locations = _Strings(), {}, {}
    out = []

    def function_id(name, filename, start_line):
        key = (name, filename)
        if key not in functions:
            fid = len(functions) + 1
            functions[key] = fid
            out.append(_field_bytes(5, _field_varint(1, fid) + _field_varint(2, strings(name))
                                    + _field_varint(3, strings(name))
                                    + _field_varint(4, strings(filename))
                                    + _field_varint(5, start_line)))
        return functions[key]

    def location_id(name, filename, line):
        key = (name, filename, line)
        if key not in locations:
            lid = len(locations) + 1
            locations[key] = lid
            fid = function_id(name, filename, 0)
            line_msg = _field_varint(1, fid) + _field_varint(2, line)
            out.append(_field_bytes(4, _field_varint(1, lid) + _field_bytes(4, line_msg)))
        return locations[key]

    def value_type(kind, unit):
        return _field_varint(1, strings(kind)) + _field_varint(2, strings(unit))

    head = [_field_bytes(1, value_type("allocations", "count")),
            _field_bytes(1, value_type("space", "bytes"))]
    for ((filename, line, func), transform, device), (count, nbytes) in sorted(
            groups.items(), key=lambda kv: -kv[1][1]):
        stack = [location_id(func or "<unknown>", filename or "<unknown>", line or 0)]
        if transform:
            stack.append(location_id(transform, "<astjax transform>", 0))
        labels = [_field_varint(1, strings("device")) + _field_varint(2, strings(device))]
        if transform:
            labels.append(_field_varint(1, strings("transform")) +
                          _field_varint(2, strings(transform)))
        sample = _field_packed(1, stack) + _field_packed(2, [count, nbytes])
        sample += b"".join(_field_bytes(3, lab) for lab in labels)
        out.append(_field_bytes(2, sample))
    tail = [_field_varint(9, time_nanos if time_nanos is not None else time.time_ns()),
            _field_bytes(11, value_type("space", "bytes")),
            _field_varint(12, 1),
            _field_varint(14, strings("space"))]
    table = b"".join(_field_bytes(6, s.encode("utf-8")) for s in strings.table)
    return b"".join(head) + b"".join(out) + table + b"".join(tail)


def device_memory_profile():
    """The gzipped pprof bytes of the live Arrays (JAX's ``device_memory_profile``)."""
    return gzip.compress(encode_pprof(memory_profile_samples()))


def save_device_memory_profile(filename):
    """Write live Arrays by allocation site to ``filename`` (gzipped pprof protobuf)."""
    data = device_memory_profile()
    with open(filename, "wb") as fh:
        fh.write(data)
