"""``pmap``: JAX's API, as ``jit(vmap(fun))`` over this process's devices.

astjax has one device per process (``astjax.local_device_count()``), so the mapped axis
may have at most that many entries; the collectives (``lax.psum``, ``pmean``, ``pmax``,
``pmin``, ``axis_index``) over ``axis_name`` are vmap's. Code written for JAX's pmap on a
single CPU device runs unchanged; spreading work over processes is not provided.
"""
import inspect

from ..api import Jitted
from ..config import config
from ..runtime.devices import local_device_count
from .api import Vmapped, keyword_call


class Pmapped(Jitted):
    """``pmap(fun, ...)``: a jit of ``vmap(fun, ...)`` that checks the mapped size against
    the devices."""

    def __init__(self, fun, axis_name=None, in_axes=0, out_axes=0,
                 static_broadcasted_argnums=(), devices=None, axis_size=None,
                 donate_argnums=()):
        static = (static_broadcasted_argnums,) if isinstance(static_broadcasted_argnums, int) \
            else tuple(static_broadcasted_argnums)
        if static and not isinstance(in_axes, (tuple, list)):
            # a static argument is broadcast, not mapped
            params = inspect.signature(fun).parameters.values()
            if any(p.kind is p.VAR_POSITIONAL for p in params):
                raise NotImplementedError("pmap: static_broadcasted_argnums with a *args "
                                          "parameter needs in_axes as a tuple")
            in_axes = tuple(None if i in static else in_axes for i in range(len(params)))
        self.mapped = Vmapped(fun, in_axes, out_axes, axis_name, axis_size)
        super().__init__(self.mapped, static_argnums=static, donate_argnums=donate_argnums)
        self.n_devices = len(devices) if devices is not None else local_device_count()
        self.options = (axis_name, out_axes, static, devices, axis_size, donate_argnums)
        self.with_keywords = {}  # (n positional, keyword names) -> the pmap of a call of fun

    def backend_now(self):
        return config.astjax_jit_backend  # compiled, as jit

    def __repr__(self):
        return f"pmap({getattr(self.mapped.fun, '__name__', self.mapped.fun)})"

    def __call__(self, *args, **kwargs):
        if kwargs:  # mapped along axis 0, as vmap maps them
            return self._with_keywords(args, kwargs)
        size = self.mapped._check_sizes(args)  # (in compiled code, sizes are run-time values)
        if size > self.n_devices:
            raise ValueError(f"pmap: the mapped axis has size {size}, but astjax has "
                             f"{self.n_devices} device{'s' if self.n_devices != 1 else ''} "
                             f"(astjax.local_device_count()); use vmap to map over more "
                             f"examples")
        return super().__call__(*args, **kwargs)

    def _with_keywords(self, args, kwargs):
        self.bind(args, kwargs)  # Python's errors for the call
        return self.keyword_variant(len(args), tuple(kwargs))(*args, *kwargs.values())

    def keyword_variant(self, n_positional, keywords):
        """This pmap for calls with ``n_positional`` arguments and then ``keywords``, all
        passed by position."""
        key = (n_positional, keywords)
        mapped = self.with_keywords.get(key)
        if mapped is None:
            fun, in_axes = keyword_call(self.mapped.fun, self.mapped.in_axes, n_positional,
                                        keywords)
            axis_name, out_axes, static, devices, axis_size, donate = self.options
            mapped = self.with_keywords[key] = Pmapped(
                fun, axis_name, in_axes, out_axes, static, devices, axis_size, donate)
        return mapped


def pmap(fun=None, axis_name=None, *, in_axes=0, out_axes=0, static_broadcasted_argnums=(),
         devices=None, backend=None, axis_size=None, donate_argnums=(),
         global_arg_shapes=None):
    """JAX's ``pmap``: ``fun`` mapped over the leading axis (``in_axes``), one entry per
    device, compiled; ``axis_name`` names the axis for the collectives. ``backend`` and
    ``global_arg_shapes`` are accepted and ignored."""
    if fun is None:  # @pmap(axis_name="i")
        return lambda f: pmap(f, axis_name, in_axes=in_axes, out_axes=out_axes,
                              static_broadcasted_argnums=static_broadcasted_argnums,
                              devices=devices, axis_size=axis_size,
                              donate_argnums=donate_argnums)
    return Pmapped(fun, axis_name, in_axes, out_axes, static_broadcasted_argnums, devices,
                   axis_size, donate_argnums)
