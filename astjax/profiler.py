"""``astjax.profiler``: traces and device memory profiles (JAX's ``jax.profiler`` API).

Traces::

    with astjax.profiler.trace("/tmp/trace"):
        with astjax.profiler.TraceAnnotation("my step"):
            y = f(x).block_until_ready()

writes ``/tmp/trace/plugins/profile/<YYYY_MM_DD_HH_MM_SS>/<host>.trace.json.gz``: Chrome
trace-event JSON that https://ui.perfetto.dev and chrome://tracing open. It shows
compiles, cache hits, eager ops, dispatches, executions (on the device worker's thread
when asynchronous), waits, transfers, and your annotations. ``stop_trace`` returns
the file's path (JAX returns None).

Memory::

    astjax.profiler.save_device_memory_profile("memory.prof")

writes the live Arrays grouped by where they were created (your file:line, and the
transform such as ``jit(f)`` that made them) as a gzipped pprof protobuf: open it with
``go tool pprof -http=: memory.prof`` or ``pprof``. Sample values: allocations (count)
and space (bytes). A buffer shared by several Arrays counts once. Results of small
jitted calls (under 16 KiB) record only the transform, not the line, to keep tiny calls
cheap; ``astjax.config.update("astjax_record_allocation_sites", False)`` records nothing.
"""
import contextlib
import functools

from ._src.runtime import profiling as _profiling
from ._src.runtime.profiling import (device_memory_profile,  # noqa: F401
                                     save_device_memory_profile, start_trace, stop_trace)

__all__ = ["trace", "start_trace", "stop_trace", "TraceAnnotation", "StepTraceAnnotation",
           "annotate_function", "save_device_memory_profile", "device_memory_profile"]


@contextlib.contextmanager
def trace(log_dir, create_perfetto_link=False, create_perfetto_trace=False):
    """Record a trace of the enclosed code into ``log_dir`` (see the module docstring)."""
    start_trace(log_dir, create_perfetto_link, create_perfetto_trace)
    try:
        yield
    finally:
        stop_trace()


class TraceAnnotation:
    """A named span in the trace around the enclosed code (a no-op when not tracing).

    ``with TraceAnnotation("load batch", size=32): ...``; keyword arguments are shown
    as the event's args.
    """

    def __init__(self, name, **kwargs):
        self.name, self.kwargs = name, kwargs
        self._start = 0

    def __enter__(self):
        self._start = _profiling.now_ns() if _profiling.tracing() else 0
        return self

    def __exit__(self, exc_type, exc, tb):
        if self._start:
            _profiling.record_event(self.name, "user", self._start,
                                    _profiling.now_ns() - self._start, self.kwargs)
        return False


class StepTraceAnnotation(TraceAnnotation):
    """A training-step span: ``with StepTraceAnnotation("train", step_num=i): ...``."""

    def __init__(self, name, **kwargs):
        super().__init__(name, **kwargs)


def annotate_function(func=None, name=None, **kwargs):
    """Decorator: each call of ``func`` is a ``TraceAnnotation`` named after it."""
    if func is None:
        return functools.partial(annotate_function, name=name, **kwargs)
    label = name or getattr(func, "__qualname__", getattr(func, "__name__", "function"))

    @functools.wraps(func)
    def wrapper(*args, **kw):
        with TraceAnnotation(label, **kwargs):
            return func(*args, **kw)
    return wrapper
