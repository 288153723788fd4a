"""Asynchronous dispatch: per-device FIFO work queues, pending results, donation.

``execute`` is how a compiled call runs (``api.Compiled.run`` calls it, after
``placement`` picked the device, the committed device of the arguments, and
``convert_inputs`` converted and donated them). It either

- runs the call inline and returns ready Arrays (the synchronous path), or
- submits it to the device's ``WorkQueue`` and returns at once with Arrays whose
  data is pending (``LeafRef``): reading them waits, and an error raised by the
  work is raised there, to every reader, with its original message.

Policy (``config.astjax_async_dispatch``, ``config.astjax_async_min_bytes``): a call
goes to the queue when async dispatch is on and its array arguments hold at least
``astjax_async_min_bytes`` bytes, or when the device's queue still has work (so the
calls on one device always run in the order they were made), or when it takes pending
Arrays (``behind``: it waits for them on the worker, not in the caller). Smaller calls run
inline: handing a call to the worker thread costs tens of microseconds of latency
(see ``benchmarks/dispatch_async.py``), far more than a tiny call's own work.

A ``WorkQueue`` is one worker thread fed by a FIFO (``queue.SimpleQueue``); it is
started on first use. ``Task.wait`` blocks on a lock the worker releases, so
waiting costs nothing when the work is already done. A CUDA device supplies its
own queue with the same ``submit``/``busy``/``synchronize`` methods (a stream).
"""
import atexit
import os
import queue as _queue
import sys
import threading
import warnings
from _thread import allocate_lock

import numpy as np

from .. import dtypes
from ..config import config
from . import profiling
from .array import _SITES, Array, committed_device, to_numpy_input
from .devices import default_device

# --- switches (kept in sync with astjax.config) ------------------------------------------------


class _Flags:
    async_dispatch = True
    async_min_bytes = 1 << 22
    debug_nans = False


flags = _Flags()

# A synchronous call records the full allocation site (a stack walk, ~0.5 us) only when one
# of its results holds at least this many bytes; smaller results record just the transform.
SITE_MIN_BYTES = 1 << 14


def _on_config(name, value):
    if name == "astjax_async_dispatch":
        flags.async_dispatch = bool(value)
    elif name == "astjax_async_min_bytes":
        flags.async_min_bytes = int(value)
    elif name in ("debug_nans", "debug_infs"):
        # debug_nans is the switch every check reads: on for either option
        profiling.CHECKED[name == "debug_infs"] = bool(value)
        flags.debug_nans = any(profiling.CHECKED)
    elif name == "astjax_record_allocation_sites":
        from . import array
        array._SITES[0] = bool(value)


for _name in ("astjax_async_dispatch", "astjax_async_min_bytes", "debug_nans", "debug_infs",
              "astjax_record_allocation_sites"):
    if _name in config._values:
        _on_config(_name, config._values[_name])
config.on_change(_on_config)


# --- tasks and queues ---------------------------------------------------------------------------

class Task:
    """One unit of queued work: ``fn(*args)``; its result or error once run."""
    __slots__ = ("fn", "args", "name", "lock", "done", "result", "error", "traceback",
                 "observed")

    def __init__(self, fn, args, name=None):
        self.fn, self.args, self.name = fn, args, name
        self.lock = allocate_lock()
        self.lock.acquire()
        self.done = False
        self.result = self.error = self.traceback = None
        self.observed = False

    def run(self):
        start = profiling.now_ns() if profiling._state.active else 0
        try:
            self.result = self.fn(*self.args)
        except BaseException as e:  # delivered to whoever waits
            self.error, self.traceback = e, e.__traceback__
        if start:
            profiling.record_event(f"execute {self.name or 'call'}", "execute", start,
                                   profiling.now_ns() - start, {"async": True})
        self.fn = self.args = None  # drop the inputs now
        self.done = True
        self.lock.release()

    def wait(self):
        """The result, waiting for the work; its error is raised (every time)."""
        if not self.done:
            start = profiling.now_ns() if profiling._state.active else 0
            self.lock.acquire()
            self.lock.release()
            if start:
                profiling.record_event(f"wait {self.name or 'call'}", "wait", start,
                                       profiling.now_ns() - start)
        if self.error is not None:
            self.observed = True
            raise self.error.with_traceback(self.traceback)
        return self.result

    def __del__(self):
        if self.error is not None and not self.observed:
            try:
                warnings.warn(f"an error raised by asynchronously dispatched work "
                              f"({self.name or 'call'}) was never observed, because no "
                              f"result of it was read: {self.error!r}", RuntimeWarning)
            except Exception:  # interpreter shutdown
                pass


class WorkQueue:
    """A FIFO of tasks run in order by one worker thread (a CPU device's queue)."""

    def __init__(self, name):
        self.name = name
        self._queue = _queue.SimpleQueue()
        self._lock = threading.Lock()
        self._tail = None
        self._thread = None

    def submit(self, fn, args, name=None):
        task = Task(fn, args, name)
        with self._lock:
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._work, name=self.name, daemon=True)
                self._thread.start()
                _QUEUES.append(self)
            self._tail = task
            self._queue.put(task)
        return task

    def _work(self):
        get = self._queue.get
        while True:
            task = get()
            if task is None:
                return
            task.run()
            if self._tail is task:
                with self._lock:
                    if self._tail is task:
                        self._tail = None  # let a finished task (and its error) go
            del task

    def busy(self):
        tail = self._tail
        return tail is not None and not tail.done

    def synchronize(self):
        """Wait for every task submitted so far (their errors stay with their results)."""
        tail = self._tail
        if tail is not None and not tail.done:
            tail.lock.acquire()
            tail.lock.release()


_QUEUES = []


@atexit.register
def _drain():
    for q in list(_QUEUES):
        q.synchronize()


def _after_fork():
    """Worker threads do not survive fork: forget them (the child starts new ones)."""
    from . import devices
    _QUEUES.clear()
    for d in devices._CPU or []:
        d._queue = None
        d._queue_lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork)


class LeafRef:
    """Output ``index`` of a queued call: the ref of a pending Array (see array.py).

    ``ones`` is which dims the call's type knows to be 1: a call taking the pending Array
    is specialized on it (``types.type_of_value``) and queued behind (``execute``'s
    ``behind``).
    """
    __slots__ = ("task", "index", "dtype", "ones", "ndim", "shape", "value")

    def __init__(self, task, index, dtype, ones):
        self.task, self.index, self.dtype, self.ones = task, index, dtype, ones
        self.ndim = len(ones)
        self.shape = None
        self.value = None

    def get(self):
        value = self.value
        if value is None:
            leaves = self.task.wait()
            value = leaves[self.index]
            if value is None:  # another thread took it
                return self.value
            self.value = value
            leaves[self.index] = None  # the Array holds it now (donation checks ownership)
        return value

    def ready(self):
        return self.task.done

    def peek(self):
        if self.value is not None:
            return self.value
        task = self.task
        if not task.done or task.error is not None:
            return None
        return task.result[self.index]

    def copy_to_host_async(self):
        pass  # CPU buffers are host memory


# --- output structure ------------------------------------------------------------------------

_TYPES = []


def _types():
    """``ir.types``, imported on first use (runtime is imported before ir)."""
    if not _TYPES:
        from ..ir import types
        _TYPES.append(types)
    return _TYPES[0]


def wrap_outputs(value, t, device=None, site=None):
    """Wrap a python-backend call's raw result as Arrays following its abstract type ``t``,
    on ``device`` with allocation site ``site``."""
    types = _TYPES[0] if _TYPES else _types()
    if type(t) is types.ArrayType:
        arr = value if type(value) is np.ndarray else np.asarray(value)
        if arr.dtype != t.dtype:
            arr = arr.astype(t.dtype)
        return new_array(arr, t.weak, device, site)
    if isinstance(t, types.Static):
        if dtypes.is_python_scalar(t.value):  # a folded constant result, as JAX returns it
            return new_array(np.asarray(t.value, dtypes.python_scalar_dtype(t.value)), True,
                              device, site)
        return value
    if isinstance(t, types.SequenceType):
        return type(value)(wrap_outputs(v, e, device, site) for v, e in zip(value, t.elts))
    if isinstance(t, types.TreeType):
        from ..tree_util import flatten_one_level, unflatten_one_level
        children, _, aux = flatten_one_level(value)
        return unflatten_one_level(type(value), aux, [wrap_outputs(c, e, device, site)
                                                      for c, e in zip(children, t.children)])
    return value


def new_array(value, weak=False, device=None, site=None):
    """An Array on ``value`` without recording an allocation site (``execute`` does that)."""
    a = object.__new__(Array)
    a._value = value
    a._weak = weak
    a._device = device
    a._pending = None
    a._site = site
    return a


def _plannable(t):
    """Whether the output structure is fully known from the type (then it can be pending)."""
    types = _types()
    if isinstance(t, (types.ArrayType, types.Static)):
        return True
    if isinstance(t, types.SequenceType):
        return all(_plannable(e) for e in t.elts)
    if isinstance(t, types.TreeType):
        return all(_plannable(c) for c in t.children)
    return False


def _array_leaves(wrapped, t, out, fix=None):
    """The Arrays of a wrapped result at the ArrayType positions of ``t``, in order.

    Appends their buffers to ``out`` (or, with ``fix=(device, site)``, sets those on them).
    """
    types = _types()
    if isinstance(t, types.ArrayType):
        if fix is None:
            out.append(wrapped._value)
        else:
            wrapped._device, wrapped._site = fix
    elif isinstance(t, types.SequenceType):
        for v, e in zip(wrapped, t.elts):
            _array_leaves(v, e, out, fix)
    elif isinstance(t, types.TreeType):
        from ..tree_util import flatten_one_level
        for c, e in zip(flatten_one_level(wrapped)[0], t.children):
            _array_leaves(c, e, out, fix)
    return out


def _pending_outputs(t, task, counter, device, site):
    """The caller side: the output structure with a pending Array per array leaf."""
    types = _types()
    if isinstance(t, types.ArrayType):
        i = counter[0]
        counter[0] += 1
        return Array._from_ref(LeafRef(task, i, t.dtype, t.ones), t.weak, device, site)
    if isinstance(t, types.Static):
        return wrap_outputs(t.value, t, device, site)
    if isinstance(t, types.SequenceType):
        items = [_pending_outputs(e, task, counter, device, site) for e in t.elts]
        return tuple(items) if t.kind == "tuple" else items
    from ..tree_util import unflatten_one_level
    return unflatten_one_level(t.node_type, t.aux, [
        _pending_outputs(c, task, counter, device, site) for c in t.children])


# --- donation -------------------------------------------------------------------------------------

def donate(array, later=False):
    """Take ``array``'s buffer for reuse by a call, and mark ``array`` deleted.

    With ``later``, a pending ``array`` (a queued call's result) is deleted now but its
    buffer is taken when the call it was handed to runs: this returns a ``DonatedLater``
    for ``wait_for_arguments`` to turn into the buffer. Otherwise this waits for it.

    Returns a writable ndarray holding the array's value that nothing else refers to:
    the array's own buffer when it owned it alone (the usual case for results of
    earlier calls; then it really is reused), else a private copy (the buffer was
    shared with a view, another Array or a NumPy array of the user's). Reading
    ``array`` afterwards raises ``RuntimeError: Array has been deleted (donated ...)``.
    """
    if not isinstance(array, Array):
        return np.array(to_numpy_input(array), copy=True)
    if array.is_deleted():
        array._value  # raises the deleted error
    if later and type(array._pending) is LeafRef:
        deferred = DonatedLater(array._pending, array._weak)
        array._mark_deleted("donated to a jitted call")
        return deferred
    value = array._value  # waits for pending work
    array._mark_deleted("donated to a jitted call")
    # references now: `value` here and getrefcount's argument
    if (isinstance(value, np.ndarray) and value.base is None and value.flags.writeable
            and sys.getrefcount(value) <= 2):
        return value
    return np.array(value, copy=True)


class DonatedLater:
    """A donated Array whose value a queued call is still computing (see ``donate``)."""
    __slots__ = ("ref", "weak")

    def __init__(self, ref, weak):
        self.ref, self.weak = ref, weak

    def take(self):
        """The value as an Array on a buffer nothing else refers to (waits for it)."""
        value = self.ref.get()
        self.ref.value = None  # now `value` here and getrefcount's argument
        if not (value.base is None and value.flags.writeable and sys.getrefcount(value) <= 2):
            value = np.array(value, copy=True)
        return new_array(value, self.weak)


def donated_buffer_reused(array_value, buffer):
    """Whether ``donate`` handed back the Array's own buffer (for tests and stats)."""
    return array_value is buffer


# --- the hook api.py calls -----------------------------------------------------------------------

def _input_bytes(values):
    """Bytes held by the ndarrays among ``values`` (nested tuples, lists and dicts)."""
    n = 0
    for v in values:
        t = type(v)
        if t is np.ndarray:
            n += v.nbytes
        elif t is tuple or t is list:
            n += _input_bytes(v)
        elif t is dict:
            n += _input_bytes(v.values())
    return n


def _convert(value):
    t = type(value)
    if t is Array:
        return value._value
    if t is tuple or t is list:
        return t(_convert(v) for v in value)
    if t is np.ndarray or t is float or t is int or t is bool:
        return to_numpy_input(value)
    from ..tree_util import tree_map
    return tree_map(to_numpy_input, value)


def placement(values):
    """The device a call on ``values`` runs on if they commit it, else None (the default).

    ``values`` are the user's arguments (pytrees); ``ValueError`` if committed Arrays
    among them are on different devices.
    """
    return committed_device(values)


def convert_inputs(values, arg_types, donate_argnums=()):
    """The python backend's inputs: NumPy values for dynamic arguments, Statics as they are.

    Arguments at ``donate_argnums`` are donated (``donate`` on each Array leaf): their
    buffers may be overwritten by the call, and the Arrays are deleted.
    """
    Static = _types().Static
    values = donate_arguments(values, donate_argnums)
    return [v if isinstance(t, Static) or i in donate_argnums else _convert(v)
            for i, (v, t) in enumerate(zip(values, arg_types))]


def donate_arguments(values, donate_argnums, later=False):
    """``values`` with every leaf of the arguments at ``donate_argnums`` donated
    (``later``: see ``donate``)."""
    if not donate_argnums:
        return values
    from ..tree_util import tree_map
    return [tree_map(lambda leaf: donate(leaf, later), v) if i in donate_argnums else v
            for i, v in enumerate(values)]


# --- calls on pending Arrays ----------------------------------------------------------------

def any_pending(values):
    """Whether Arrays among ``values`` (pytrees) are results of queued calls, not read yet."""
    for v in values:
        t = type(v)
        if t is Array:
            if type(v._pending) is LeafRef:
                return True
        elif t is tuple or t is list:
            if any_pending(v):
                return True
        elif t is dict:
            if any_pending(v.values()):
                return True
        elif t is not np.ndarray and v is not None and not dtypes.is_python_scalar(v):
            from ..tree_util import flatten_one_level
            node = flatten_one_level(v)
            if node is not None and any_pending(node[0]):
                return True
    return False


def wait_for_arguments(values):
    """On the worker running a call queued behind pending arguments: the arguments once
    ready (a failed call's error is raised here), donated ones on their buffers; and
    whether each pending one had the size-1 dims its call's type promised (``LeafRef.ones``:
    what the call was specialized on)."""
    from ..tree_util import tree_map
    exact = [True]

    def settle(leaf):
        if type(leaf) is DonatedLater:
            ones = leaf.ref.ones
            leaf = leaf.take()
        elif type(leaf) is Array and type(leaf._pending) is LeafRef:
            ones = leaf._pending.ones
            leaf.block_until_ready()
        else:
            return leaf
        if tuple(d == 1 for d in leaf._value.shape) != ones:
            exact[0] = False
        return leaf
    ready = [tree_map(settle, v) for v in values]
    return ready, exact[0]


def execute(fn, inputs, out_type, *, device=None, name=None, wrap=None, nan_origin=None,
            behind=False):
    """Run one compiled call ``fn(*inputs)``; return its outputs as Arrays.

    fn:       the generated entry. It must do its own error location
              (``locate_runtime_error``) and ``np.errstate``: it may run on a worker thread.
    inputs:   what ``fn`` takes (``convert_inputs`` for the python backend).
    out_type: the abstract type of the result.
    device:   ``placement(values)``: the committed device, or None for the default device
              (results are then uncommitted).
    name:     the computation's name for traces, memory profiles and NaN errors
              (``"jit(f)"``); results are attributed to that transform.
    wrap:     ``wrap(raw_result, out_type) -> Arrays`` for backends whose raw results are
              laid out differently (Numba); it may run on the worker thread. Default:
              ``wrap_outputs`` (the python backend's layout).
    nan_origin: with ``debug_nans``, a callable finding the operation that made a NaN
              (``profiling.nan_error``); it may run on the worker thread.

    behind:   the call takes pending Arrays (``any_pending``): ``fn()`` (no inputs) waits
              for them itself, on the device's queue behind the work making them.

    Runs inline, or, when async dispatch applies (see the module docstring) or ``behind``,
    on the device's queue, returning pending Arrays at once. With ``debug_nans`` on, a NaN in
    the result raises ``FloatingPointError`` naming the caller's line (at the call, or
    when a pending result is first read).
    """
    target = device if device is not None else default_device()
    q = target._queue
    busy = q is not None and q.busy()
    if (behind or busy or (flags.async_dispatch and _input_bytes(inputs) >= flags.async_min_bytes)
            ) and _plannable(out_type):
        site = profiling.capture_site(name) if _SITES[0] else None
        return _submit(fn, inputs, out_type, target, device, site, name, wrap, nan_origin)
    if busy:  # cannot express the result as pending: keep the device's order anyway
        target.synchronize()

    tracing = profiling._state.active
    start = profiling.now_ns() if tracing else 0
    out = fn(*inputs)
    if tracing:
        profiling.record_event(f"execute {name or 'call'}", "execute", start,
                               profiling.now_ns() - start, {"device": str(target)})
    if flags.debug_nans:
        profiling.check_nans(out, None, name or "a jitted call", nan_origin)
    if wrap is None:
        result = wrap_outputs(out, out_type, device, None)
    else:
        result = wrap(out, out_type)
    if _SITES[0]:
        # Walking the stack costs ~0.5 us; small results only record the transform.
        if type(result) is Array:
            big = result._value.nbytes >= SITE_MIN_BYTES
            result._site = profiling.capture_site(name) if big else (None, 0, name)
            if device is not None:
                result._device = device
        else:
            leaves = _array_leaves(result, out_type, [])
            big = any(v.nbytes >= SITE_MIN_BYTES for v in leaves)
            site = profiling.capture_site(name) if big else (None, 0, name)
            _array_leaves(result, out_type, None, (device, site))
    elif device is not None:
        _array_leaves(result, out_type, None, (device, None))
    return result


def _submit(fn, inputs, out_type, target, device, site, name, wrap, nan_origin):
    where = None
    if flags.debug_nans:  # the user's line, now, while the caller's frame is live
        where = profiling.describe_frame(profiling.user_frame(2))

    def work(*args):
        out = fn(*args)
        kind = profiling.has_nan(out) if where is not None else None
        if kind:
            raise profiling.nan_error(where[0], name or "a jitted call", where[1], nan_origin,
                                      kind)
        wrapped = wrap_outputs(out, out_type) if wrap is None else wrap(out, out_type)
        return _array_leaves(wrapped, out_type, [])

    start = profiling.now_ns() if profiling._state.active else 0
    task = target.queue().submit(work, inputs, name)
    if start:
        profiling.record_event(f"dispatch {name or 'call'}", "dispatch", start,
                               profiling.now_ns() - start, {"device": str(target)})
    return _pending_outputs(out_type, task, [0], device, site)


def check_nans(outputs, where=None, what="a jitted call", origin=None):
    """Raise ``FloatingPointError`` if ``outputs`` holds a NaN (see profiling.check_nans)."""
    profiling.check_nans(outputs, where, what, origin)


def synchronize_all():
    """Wait for all queued work on every device (``effects_barrier``)."""
    from .devices import devices
    for d in devices():
        d.synchronize()
