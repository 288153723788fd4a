"""Devices: where arrays live and where work runs.

A ``Device`` owns three things, and ``Array`` talks to it only through them, so a
CUDA device (Numba device buffers, CUDA streams) plugs in without changing ``Array``:

- buffers: ``put(host_ndarray) -> buffer`` moves a host array onto the device (a copy
  the device owns); ``to_host(buffer) -> ndarray`` brings it back (waiting as needed).
  On a CPU device a buffer *is* a host ``ndarray``, so both are cheap (``put`` copies
  so that two devices never alias memory, which donation relies on). A CUDA device
  would return Numba ``DeviceNDArray``s and copy on its stream.
- a work queue (``queue()``): a FIFO that runs compiled calls in issue order.
  ``dispatch.WorkQueue`` is the CPU one: a worker thread. A CUDA device would
  wrap a stream: ``submit`` launches kernels on it and the returned task's ``wait``
  synchronizes on an event recorded after them.
- identity: ``platform``, ``device_kind``, ``id``, ``process_index``. Devices are
  singletons compared by identity.

The CPU can be split into ``ASTJAX_NUM_CPU_DEVICES`` logical devices (like XLA's
``--xla_force_host_platform_device_count``) so multi-device code runs on one machine.
The variable is read once, when devices are first asked for.
"""
import os
import threading

import numpy as np


class Device:
    """Base class of devices (see the module docstring for the interface)."""
    platform = "cpu"
    device_kind = "cpu"
    process_index = 0
    host_id = 0

    def __init__(self, id=0):
        self.id = id
        self._queue = None
        self._queue_lock = threading.Lock()

    # --- buffers ------------------------------------------------------------------------
    def put(self, host):
        """A buffer on this device holding a copy of host ndarray ``host``."""
        raise NotImplementedError

    def to_host(self, buffer):
        """The host ndarray for a buffer of this device."""
        raise NotImplementedError

    # --- work ---------------------------------------------------------------------------
    def queue(self):
        """This device's FIFO work queue (created on first use)."""
        q = self._queue
        if q is None:
            with self._queue_lock:
                if self._queue is None:
                    self._queue = self._make_queue()
                q = self._queue
        return q

    def _make_queue(self):
        raise NotImplementedError

    def busy(self):
        """Whether work submitted to this device has not finished yet."""
        q = self._queue
        return q is not None and q.busy()

    def synchronize(self):
        """Wait until all work submitted so far to this device has run."""
        q = self._queue
        if q is not None:
            q.synchronize()

    def __str__(self):
        return f"{self.platform.upper()}_{self.id}"


class CpuDevice(Device):
    """One logical CPU device. Buffers are host ndarrays; work runs on one worker thread."""

    def put(self, host):
        return np.array(host, copy=True)

    def to_host(self, buffer):
        return buffer

    def _make_queue(self):
        from .dispatch import WorkQueue
        return WorkQueue(f"astjax {self} worker")

    def __repr__(self):
        return f"CpuDevice(id={self.id})"


_CPU = None
_lock = threading.Lock()


def _num_cpu_devices_from_env():
    text = os.environ.get("ASTJAX_NUM_CPU_DEVICES", "").strip()
    if not text:
        return 1
    try:
        n = int(text)
    except ValueError:
        n = 0
    if n < 1:
        raise ValueError(f"ASTJAX_NUM_CPU_DEVICES must be a positive integer, got {text!r}")
    return n


def _cpu_devices():
    global _CPU
    if _CPU is None:
        with _lock:
            if _CPU is None:
                _CPU = [CpuDevice(i) for i in range(_num_cpu_devices_from_env())]
    return _CPU


def _set_num_cpu_devices(n):
    """Re-create the CPU devices (tests only; arrays on the old devices stay on them)."""
    global _CPU
    if n < 1:
        raise ValueError(f"the number of CPU devices must be positive, got {n}")
    old = _CPU or []
    for d in old:
        d.synchronize()
    _CPU = [CpuDevice(i) for i in range(n)]
    return old


def _check_backend(backend):
    if backend not in (None, "cpu"):
        raise RuntimeError(f"backend {backend!r} is not available; available backends: cpu")


def devices(backend=None):
    """All devices of ``backend`` (the default, and only one for now: ``"cpu"``)."""
    _check_backend(backend)
    return list(_cpu_devices())


def local_devices(process_index=None, backend=None, host_id=None):
    """The devices of this process (all of them: astjax runs in one process)."""
    if isinstance(process_index, str) and backend is None:  # local_devices("cpu")
        process_index, backend = None, process_index
    _check_backend(backend)
    index = process_index if process_index is not None else host_id
    if index not in (None, 0):
        raise ValueError(f"process_index {index} does not exist: there is one process (0)")
    return list(_cpu_devices())


def device_count(backend=None):
    _check_backend(backend)
    return len(_cpu_devices())


def local_device_count(backend=None):
    return device_count(backend)


def process_index():
    return 0


def process_count():
    return 1


def default_backend():
    return "cpu"


def default_device():
    return _cpu_devices()[0]
