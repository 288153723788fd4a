"""``astjax.debug``: print and call Python from compiled code, as ``jax.debug``.

``print(fmt, *args, **kwargs)`` prints ``fmt.format(*args, **kwargs)`` and
``callback(fn, *args, **kwargs)`` calls ``fn`` with the values (astjax Arrays) each time
the code runs: under ``jit`` on either backend, once per example under ``vmap``, with
primal values in the forward pass under ``grad``. See astjax/_src/debugging.py.
"""
from ._src.debugging import debug_callback as callback, debug_print as print

__all__ = ["print", "callback"]
