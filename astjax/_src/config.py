"""Global switches, read as attributes and set with ``config.update(name, value)``.

Names follow JAX's (``jax_enable_x64``) so ported code keeps working.
"""
import contextlib
import os

_DEFAULTS = {
    "jax_enable_x64": False,
    "jax_threefry_partitionable": True,  # the PRNG's counter layout; on in current JAX
    "log_compiles": False,
    "debug_nans": False,
    "debug_infs": False,  # as debug_nans, for infinities (JAX's jax_debug_infs)
    # JAX's: jit(f)(x) calls f in Python on its arguments (print, breakpoint(), pdb work)
    "jax_disable_jit": False,
    # asynchronous dispatch of jitted calls (runtime/dispatch.py): a call whose array
    # arguments hold at least astjax_async_min_bytes bytes goes to its device's worker
    "astjax_async_dispatch": True,
    "astjax_async_min_bytes": 1 << 22,  # 4 MiB: benchmarks/dispatch_async.py
    # record each Array's creation site (user file:line) for memory profiles
    "astjax_record_allocation_sites": True,
    # what jit compiles to: "numba" (fused loops, njit) or "python" (generated NumPy code)
    "astjax_jit_backend": "numba",
    # Numba backend: elementwise loop nests run on every core (prange); jit(parallel=...)
    # decides per function
    "astjax_parallel": False,
    # tiered jit: Numba compiles on a background thread while the first calls run the
    # python backend's code, so no call waits for a compile (results may differ in the
    # last bits until the switch: the two backends' math kernels round differently)
    "astjax_tiered_compile": False,
}
_CHOICES = {"astjax_jit_backend": ("numba", "python")}
# JAX's names for astjax's own options (ported code writes config.update("jax_debug_nans", True))
_ALIASES = {"jax_debug_nans": "debug_nans", "jax_debug_infs": "debug_infs",
            "jax_log_compiles": "log_compiles"}


def _env_bool(name, default):
    value = os.environ.get(name.upper())
    if value is None:
        return default
    if not isinstance(default, bool):
        return value
    return value.lower() in ("1", "true", "yes", "on")


class Config:
    def __init__(self):
        values = {k: _env_bool(k, v) for k, v in _DEFAULTS.items()}
        for alias, name in _ALIASES.items():  # JAX_DEBUG_NANS=1
            values[name] = _env_bool(alias, values[name])
        object.__setattr__(self, "_values", values)
        object.__setattr__(self, "_listeners", [])

    def update(self, name, value):
        name = _ALIASES.get(name, name)
        if name not in self._values:
            known = ", ".join(sorted(self._values))
            raise AttributeError(f"astjax.config has no option {name!r}; known options: {known}")
        if name in _CHOICES and value not in _CHOICES[name]:
            raise ValueError(f"astjax.config {name} must be one of {_CHOICES[name]}, "
                             f"got {value!r}")
        self._values[name] = value
        for listener in self._listeners:
            listener(name, value)

    def on_change(self, listener):
        """Call ``listener(name, value)`` after every update (caches keyed on config use this)."""
        self._listeners.append(listener)

    def __getattr__(self, name):
        try:
            return self._values[_ALIASES.get(name, name)]
        except KeyError:
            raise AttributeError(f"astjax.config has no option {name!r}") from None

    def __setattr__(self, name, value):
        raise AttributeError("use astjax.config.update(name, value)")

    def snapshot(self):
        """The values that change generated code (part of every specialization key)."""
        return (self._values["jax_enable_x64"], self._values["jax_threefry_partitionable"],
                self._values["astjax_jit_backend"], self._values["astjax_parallel"])


config = Config()


def _switch(name):
    """JAX's context manager of an option: ``with astjax.debug_nans(True): ...``."""
    @contextlib.contextmanager
    def switch(value=True):
        before = getattr(config, name)
        config.update(name, value)
        try:
            yield
        finally:
            config.update(name, before)
    switch.__name__ = switch.__qualname__ = name
    return switch


debug_nans = _switch("debug_nans")
debug_infs = _switch("debug_infs")
log_compiles = _switch("log_compiles")


def disable_jit(disable=True):
    """``with astjax.disable_jit():`` jitted functions run as plain Python, as in JAX."""
    return _switch("jax_disable_jit")(disable)
