"""Public device functions: device_put, device_get, block_until_ready, devices."""
import numpy as np

from .array import Array, to_numpy_input
from .devices import default_backend, device_count, devices, local_devices  # noqa: F401


def _tree_map(fn, tree):
    from ..tree_util import tree_map
    return tree_map(fn, tree)


def device_put(x, device=None):
    """Place a pytree of arrays on ``device`` (the default CPU device)."""
    if device is not None and device not in devices():
        raise ValueError(f"device_put: unknown device {device!r}; available: {devices()}")

    def put(leaf):
        if isinstance(leaf, Array):
            return leaf
        value = to_numpy_input(np.asarray(leaf) if not np.isscalar(leaf) else leaf)
        weak = not isinstance(leaf, (np.ndarray, np.generic)) and np.isscalar(leaf)
        return Array(np.asarray(value), weak)
    return _tree_map(put, x)


def device_get(x):
    """Copy a pytree of arrays to host NumPy arrays."""
    return _tree_map(lambda leaf: np.asarray(leaf) if isinstance(leaf, Array) else leaf, x)


def block_until_ready(x):
    """Wait for every array in a pytree (work is synchronous on CPU for now)."""
    _tree_map(lambda leaf: leaf.block_until_ready() if isinstance(leaf, Array) else leaf, x)
    return x
