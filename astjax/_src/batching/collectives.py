"""Collectives over a named vmap axis: ``psum``, ``pmean``, ``pmax``, ``pmin``,
``all_gather``, ``axis_index`` (JAX's ``jax.lax`` functions, for ``vmap(axis_name=...)``).

Inside the function being vmapped each is a call of a small per-example stand-in (so the
function types as usual); the batching transform replaces a call whose axis name is the
vmap's own by the reduction over the batch axis (transform.py, ``Batcher.collective``).
A call naming an outer vmap's axis is left for that vmap to replace.
"""
import inspect

from ..frontend.synthetic import from_source

_ACTIVE = []     # axis names of the vmaps whose functions are being typed
_BOUND = set()   # every axis name a vmap has used

_STANDINS = {
    # per-example meaning as far as types go: what each example gets back
    "psum": "def psum(x, axis_name):\n    return _jnp.asarray(x)\n",
    "pmean": "def pmean(x, axis_name):\n    return _jnp.true_divide(_jnp.asarray(x), 1)\n",
    "pmax": "def pmax(x, axis_name):\n    return _jnp.asarray(x)\n",
    "pmin": "def pmin(x, axis_name):\n    return _jnp.asarray(x)\n",
    "all_gather": "def all_gather(x, axis_name, axis=0):\n"
                  "    return _jnp.stack((_jnp.asarray(x), _jnp.asarray(x)), axis=axis)\n",
    "axis_index": "def axis_index(axis_name):\n"
                  "    return _jnp.asarray(0, dtype='int32')\n",
}


class Collective:
    """``lax.<kind>``: callable from functions under ``vmap(..., axis_name=...)``."""

    def __init__(self, kind, doc):
        self.kind = kind
        self.__name__ = self.__qualname__ = kind
        self.__doc__ = doc
        params = ["x", "axis_name"] if kind != "axis_index" else ["axis_name"]
        parameters = [inspect.Parameter(p, inspect.Parameter.POSITIONAL_OR_KEYWORD)
                      for p in params]
        if kind == "all_gather":  # where the gathered axis goes, as in JAX
            parameters.append(inspect.Parameter("axis", inspect.Parameter.KEYWORD_ONLY,
                                                default=0))
        self.__signature__ = inspect.Signature(parameters)
        self.standins = {}

    def __call__(self, *args, **kwargs):
        bound = self.__signature__.bind(*args, **kwargs)
        raise NameError(f"unbound axis name: {bound.arguments['axis_name']}. The axis name "
                        f"is bound by vmap(..., axis_name=...); call {self.kind} inside the "
                        f"function being vmapped")

    def __repr__(self):
        return f"<collective {self.kind}>"

    def function_for(self, arg_types, program):
        from ..ir.types import Static
        name_t = arg_types[1 if self.kind == "all_gather" else -1]
        if not isinstance(name_t, Static):
            raise TypeError(f"{self.kind}: axis_name must be a constant (a str), got {name_t}")
        name = name_t.value
        if name not in _ACTIVE and name not in _BOUND:
            raise NameError(f"unbound axis name: {name}")
        fn = self.standins.get(name)
        if fn is None:
            from .transform import OPS
            origin = _origin()
            fn = from_source(self.kind, _STANDINS[self.kind], {"_jnp": OPS}, origin)
            fn.astjax_collective = (self.kind, name)
            self.standins[name] = fn
        return fn


def _origin():
    from ..frontend.parse import parse_function
    return parse_function(_anchor)


def _anchor():
    """Generated stand-ins are located here."""


psum = Collective("psum", "Sum of ``x`` over the examples of the vmap axis ``axis_name``; "
                          "every example gets the total (``psum(1, name)`` is the batch "
                          "size).")
pmean = Collective("pmean", "Mean of ``x`` over the examples of the vmap axis ``axis_name``.")
pmax = Collective("pmax", "Maximum of ``x`` over the examples of the vmap axis.")
pmin = Collective("pmin", "Minimum of ``x`` over the examples of the vmap axis.")
all_gather = Collective("all_gather", "Every example's ``x``, stacked along a new axis "
                                      "(at ``axis``, 0 by default), for each example.")
axis_index = Collective("axis_index", "The index of the example along the vmap axis "
                                      "``axis_name``.")

__all__ = ["psum", "pmean", "pmax", "pmin", "all_gather", "axis_index"]
