"""Devices. For now one synchronous CPU device; the device runtime issue extends this."""


class Device:
    platform = "cpu"
    device_kind = "cpu"

    def __init__(self, id=0):
        self.id = id

    def __repr__(self):
        return f"CpuDevice(id={self.id})"


_CPU = [Device(0)]


def devices(backend=None):
    if backend not in (None, "cpu"):
        raise RuntimeError(f"backend {backend!r} is not available; available backends: cpu")
    return list(_CPU)


def local_devices(backend=None):
    return devices(backend)


def device_count():
    return len(_CPU)


def default_backend():
    return "cpu"


def default_device():
    return _CPU[0]
