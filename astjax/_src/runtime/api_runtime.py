"""Public device functions: device_put, device_get, block_until_ready, devices."""
import numpy as np

from . import dispatch, profiling  # noqa: F401  (dispatch follows astjax.config from import on)
from .array import Array, to_numpy_input
from .devices import (Device, default_backend, device_count, devices,  # noqa: F401
                      local_device_count, local_devices, process_count, process_index)


def _tree_map(fn, tree):
    from ..tree_util import tree_map
    return tree_map(fn, tree)


def _leaves(tree):
    from ..tree_util import tree_leaves
    return tree_leaves(tree)


class SingleDeviceSharding:
    """The placement of an array that lives whole on one device (JAX's class of that name)."""

    def __init__(self, device):
        self._device = device

    @property
    def device_set(self):
        return {self._device}

    def __eq__(self, other):
        return isinstance(other, SingleDeviceSharding) and other._device is self._device

    def __hash__(self):
        return hash(self._device)

    def __repr__(self):
        return f"SingleDeviceSharding(device={self._device!r})"


def _target_device(device):
    if device is None:
        return None
    if isinstance(device, SingleDeviceSharding):
        device = device._device
    if not isinstance(device, Device) or device not in devices(device.platform):
        raise ValueError(f"device_put: unknown device {device!r}; available: {devices()}")
    return device


def device_put(x, device=None, *, donate=False):
    """Place a pytree of arrays on ``device``.

    With ``device`` None, NumPy values and Python scalars become Arrays on the default
    device (uncommitted: they follow the arrays they are used with) and Arrays are
    returned as they are. With a device, every leaf is committed to it; an Array on
    another device is copied there (an Array already there is returned as is). Host
    values are always copied, so changing the NumPy array later does not change the
    Array. ``donate=True`` deletes the source Arrays that were copied.
    """
    target = _target_device(device)

    def put(leaf):
        if isinstance(leaf, Array):
            if target is None or leaf._device is target:
                return leaf
            start = profiling.now_ns() if profiling.tracing() else 0
            source = leaf.device
            value = source.to_host(leaf._value)  # waits for pending work on the source
            out = Array(target.put(value), leaf._weak, target)
            if donate:
                leaf._mark_deleted("donated to device_put")
            if start:
                profiling.record_event("transfer", "transfer", start, profiling.now_ns() - start,
                                       {"from": str(source), "to": str(target),
                                        "bytes": value.nbytes})
            return out
        weak = not isinstance(leaf, (np.ndarray, np.generic)) and np.isscalar(leaf)
        raw = np.asarray(leaf) if not np.isscalar(leaf) else leaf
        value = np.asarray(to_numpy_input(raw))
        dest = target if target is not None else devices()[0]
        if value is leaf or target is not None:
            value = dest.put(value)  # a copy the device owns
        return Array(value, weak, target)
    return _tree_map(put, x)


def device_get(x):
    """Copy a pytree of arrays to host NumPy arrays (waiting for pending work)."""
    for leaf in _leaves(x):
        if isinstance(leaf, Array):
            leaf.copy_to_host_async()
    return _tree_map(lambda leaf: leaf.device.to_host(leaf._value)
                     if isinstance(leaf, Array) else leaf, x)


def block_until_ready(x):
    """Wait for every array in a pytree; raise the first error of their work. Other
    arrays with a ``block_until_ready`` method (JAX's) are waited for too, as JAX does."""
    error = None
    for leaf in _leaves(x):
        if isinstance(leaf, Array) or callable(getattr(leaf, "block_until_ready", None)):
            try:
                leaf.block_until_ready()
            except Exception as e:  # wait for the rest before raising
                error = error or e
    if error is not None:
        raise error
    return x


def effects_barrier():
    """Wait until all work queued on every device has run."""
    from .dispatch import synchronize_all
    synchronize_all()


def live_arrays(platform=None):
    """The Arrays alive in this process (not deleted)."""
    if platform not in (None, "cpu"):
        return []
    return [a for a in profiling._live_arrays() if not a.is_deleted()]
