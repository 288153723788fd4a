"""Collectives over a named vmap axis: ``psum``, ``pmean``, ``pmax``, ``pmin``,
``all_gather``, ``axis_index`` (JAX's ``jax.lax`` functions, for ``vmap(axis_name=...)``).

Inside the function being vmapped each is a call of a small per-example stand-in (so the
function types as usual); the batching transform replaces a call whose axis name is the
vmap's own by the reduction over the batch axis (transform.py, ``Batcher.collective``).
A call naming an outer vmap's axis is left for that vmap to replace.

A stand-in carries its derivative rules (``custom_rule``, as a custom_vjp function does):
each calls the collective itself on the (co)tangent, over the same axis, so the vmap that
batches the derivative code reduces it too. Without them grad differentiated the stand-in's
body, as if ``psum`` were the identity.
"""
import inspect
import sys

from ..errors import TypeCheckError, UserCodeError
from ..frontend.synthetic import from_source
from ..ir.trees import namespace_ref
from ..ir.types import Static, keyed_children
from ..lax.common import as_sequence, path_str, rebuild

_ACTIVE = []     # axis names of the vmaps whose functions are being typed or batched

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


# x's cotangent from the output's (g) and the output's tangent from x's (t), as JAX's rules:
# psum and pmean are linear and their own transposes; all_gather's transpose is psum_scatter
# (each example takes its slice of the summed cotangent). pmax and pmin (no rule in JAX)
# share the derivative among the examples holding the extreme, w each, as jnp.max shares it
# among ties: so vmap(grad(f)) agrees with grad(vmap(f)), where pmax is jnp.max.
_SHARES = ("    at = _jnp.where(x == out, _jnp.ones_like(out), _jnp.zeros_like(out))\n"
           "    w = at / _c.psum(at, axis_name)\n")
_RULES = {  # kind -> (lines run first, x's cotangent, the output's tangent)
    "psum": ("", "_c.psum(g, axis_name)", "_c.psum(t, axis_name)"),
    "pmean": ("", "_c.pmean(g, axis_name)", "_c.pmean(t, axis_name)"),
    "pmax": (_SHARES, "w * _c.psum(g, axis_name)", "_c.psum(w * t, axis_name)"),
    "pmin": (_SHARES, "w * _c.psum(g, axis_name)", "_c.psum(w * t, axis_name)"),
    "all_gather": ("", "_jnp.moveaxis(_c.psum(g, axis_name), axis, 0)[_c.axis_index(axis_name)]",
                   "_c.all_gather(t, axis_name, axis=axis)"),
}


class UnboundAxisName(UserCodeError, NameError):
    """A collective names an axis no enclosing vmap binds (located at the call)."""


class _Rule:
    """The derivative rules of a collective's stand-in, called as a custom_jvp function's
    are (ad/custom.py): ``<name>_vjp(x, axis_name, ..., g) -> (out, cotangents)`` and
    ``<name>_jvp(x, axis_name, ..., t, ...) -> (out, tangent)``."""

    def __init__(self, kind):
        self.kind = kind

    def vjp_function(self, spec, into):
        first, ct, _ = _RULES[self.kind]
        params = [a.id for a in spec.fdef.args.args]  # x, axis_name[, axis]
        nones = ", None" * (len(params) - 1)
        source = (f"def {spec.name}_vjp({', '.join(params)}, g):\n"
                  f"    out = {_primal(params, spec)}\n{first}"
                  f"    return out, ({ct}{nones})\n")
        return from_source(f"{spec.name}_vjp", source, _namespace(), spec.parsed, into)

    def jvp_function(self, spec, into):
        first, _, tangent = _RULES[self.kind]
        params = [a.id for a in spec.fdef.args.args]
        tangents = ["t"] + [f"t_{p}" for p in params[1:]]
        source = (f"def {spec.name}_jvp({', '.join(params + tangents)}):\n"
                  f"    out = {_primal(params, spec)}\n{first}"
                  f"    return out, {tangent}\n")
        return from_source(f"{spec.name}_jvp", source, _namespace(), spec.parsed, into)


def _primal(params, spec):
    """The collective's call again (all_gather's ``axis`` is keyword-only)."""
    x, name, *rest = params
    return f"_c.{spec.fn.__name__}({', '.join([x, name] + [f'{p}={p}' for p in rest])})"


def _namespace():
    from .transform import OPS
    return {"_c": sys.modules[__name__], "_jnp": OPS}


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
        raise NameError(self.unbound(bound.arguments['axis_name']))

    def unbound(self, name):
        return (f"unbound axis name: {name}. The axis name is bound by vmap(..., "
                f"axis_name=...); call {self.kind} inside the function being vmapped")

    def __repr__(self):
        return f"<collective {self.kind}>"

    def function_for(self, arg_types, program):
        name_t = arg_types[1 if self.kind == "all_gather" else -1]
        if not isinstance(name_t, Static):
            raise TypeCheckError(f"{self.kind}: axis_name must be a constant (a str), got "
                                 f"{name_t}")
        name = name_t.value
        if name not in _ACTIVE:  # (grad(f) outside the vmap, say)
            raise UnboundAxisName(self.unbound(name))
        if self.kind != "axis_index" and keyed_children(as_sequence(arg_types[0])) is not None:
            return self.over_leaves(arg_types[0])
        fn = self.standins.get(name)
        if fn is None:
            from .transform import OPS
            origin = _origin()
            fn = from_source(self.kind, _STANDINS[self.kind], {"_jnp": OPS}, origin)
            fn.astjax_collective = (self.kind, name)
            if self.kind != "axis_index":  # (an integer: nothing to differentiate)
                fn.custom_rule = _Rule(self.kind)
            self.standins[name] = fn
        return fn

    def over_leaves(self, t):
        """A pytree ``x``: the collective of each leaf, as in JAX (``psum((a, b), 'i')``)."""
        namespace = {"_c": sys.modules[__name__]}
        rest = ", axis=axis" if self.kind == "all_gather" else ""

        def leaf(path, leaf_t):
            if isinstance(leaf_t, Static) and leaf_t.value is None:
                return "None"  # (an empty subtree)
            return f"_c.{self.kind}({path_str('x', path)}, axis_name{rest})"
        body = rebuild(t, leaf, namespace_ref(namespace))
        params = "x, axis_name" + (", axis=0" if rest else "")
        source = f"def {self.kind}({params}):\n    return {body}\n"
        key = (source, tuple(sorted(namespace.items())))  # (the classes it builds)
        fn = self.standins.get(key)
        if fn is None:
            fn = self.standins[key] = from_source(self.kind, source, namespace, _origin())
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
