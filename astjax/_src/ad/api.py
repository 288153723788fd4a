"""grad, value_and_grad and vjp: reverse mode, as transforms that compose.

``grad(f)`` stands, at each argument signature, for a generated function
``f_grad(x, ...)`` that calls ``f_vjp`` (see reverse.py) with the seed 1.0.
Compiled code can call ``grad(f)``, and ``grad(grad(f))`` differentiates the
generated ``f_grad``.
"""
import gast

from .. import dtypes
from ..api import Jitted, Transformed, _convert_input, _wrap_output
from ..frontend.naming import assign, const, load
from ..frontend.synthetic import SyntheticFunction, function_def
from ..ir.types import ArrayType, Static
from . import vjp_rules  # noqa: F401  (registers the rules)
from .reverse import vjp_function


def _argnums_tuple(argnums, n, name):
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    for i in nums:
        if not isinstance(i, int) or not -n <= i < n:
            raise ValueError(f"{name}: argnums {argnums!r} out of range for a function of "
                             f"{n} positional arguments")
    return tuple(i % n for i in nums)


class Grad(Jitted):
    """``grad`` / ``value_and_grad`` of ``fun``."""

    def __init__(self, fun, argnums=0, has_aux=False, with_value=False):
        super().__init__(fun)
        self.argnums = argnums
        self.has_aux = has_aux
        self.with_value = with_value
        self.kind = "value_and_grad" if with_value else "grad"

    def function_for(self, arg_types, program):
        inner = self.fun
        fn = inner.function_for(arg_types, program) if hasattr(inner, "function_for") else inner
        spec = program.specialize(fn, arg_types)
        nums = _argnums_tuple(self.argnums, len(arg_types), self.kind)
        self._check(spec, arg_types, nums)
        vjp_fn = vjp_function(spec, self.has_aux)
        params = [a.id for a in spec.fdef.args.args]
        namespace = {"_vjp": vjp_fn}
        r = "r"
        while r in params:
            r += "_"
        grads = [gast.Subscript(value=gast.Subscript(value=load(r), slice=const(1),
                                                     ctx=gast.Load()),
                                slice=const(i), ctx=gast.Load()) for i in nums]
        grad = grads[0] if isinstance(self.argnums, int) else gast.Tuple(elts=grads,
                                                                         ctx=gast.Load())
        value = gast.Subscript(value=load(r), slice=const(0), ctx=gast.Load())
        if self.has_aux:
            out = gast.Subscript(value=value, slice=const(0), ctx=gast.Load())
            aux = gast.Subscript(value=value, slice=const(1), ctx=gast.Load())
            value = gast.Tuple(elts=[out, aux], ctx=gast.Load())
            result = (gast.Tuple(elts=[value, grad], ctx=gast.Load()) if self.with_value
                      else gast.Tuple(elts=[grad, aux], ctx=gast.Load()))
        else:
            result = gast.Tuple(elts=[value, grad], ctx=gast.Load()) if self.with_value \
                else grad
        call = gast.Call(func=load("_vjp"), args=[load(p) for p in params] + [const(1.0)],
                         keywords=[])
        body = [assign(r, call), gast.Return(value=result)]
        for node in body:
            for n in gast.walk(node):
                if isinstance(n, (gast.stmt, gast.expr)):
                    n.lineno, n.col_offset = spec.parsed.node.lineno, 0
        name = f"{spec.name}_{self.kind}"
        return SyntheticFunction(name, function_def(name, params, body), namespace,
                                 spec.parsed)

    def _check(self, spec, arg_types, nums):
        for i in nums:
            t = arg_types[i]
            for leaf in _array_leaves(t):
                if leaf.dtype.kind not in "fc":
                    raise TypeError(f"{self.kind} requires real- or complex-valued inputs "
                                    f"(input dtype that is a sub-dtype of np.inexact), but got "
                                    f"{leaf.dtype} for argument {i} of {spec.fn.__name__}. If "
                                    f"you want to use integer-valued inputs, mark the argument "
                                    f"as static or convert it to float")
        out = spec.return_type
        if self.has_aux:
            if not (hasattr(out, "elts") and len(out.elts) == 2):
                raise TypeError(f"{self.kind} with has_aux=True requires {spec.fn.__name__} to "
                                f"return a pair (output, aux), got {out}")
            out = out.elts[0]
        if isinstance(out, Static) and dtypes.is_python_scalar(out.value):
            out = ArrayType(dtypes.python_scalar_dtype(out.value), (), True)
        if not isinstance(out, ArrayType) or out.ndim != 0:
            raise TypeError(f"Gradient only defined for scalar-output functions. Output of "
                            f"{spec.fn.__name__} was {out}; use jax-style vjp or jacrev for "
                            f"non-scalar outputs")
        if out.dtype.kind not in "fc":
            raise TypeError(f"{self.kind} requires real- or complex-valued outputs, but "
                            f"{spec.fn.__name__} returns {out.dtype}")


def _array_leaves(t):
    from ..ir.types import SequenceType, TreeType
    if isinstance(t, ArrayType):
        yield t
    elif isinstance(t, SequenceType):
        for e in t.elts:
            yield from _array_leaves(e)
    elif isinstance(t, TreeType):
        for c in t.children:
            yield from _array_leaves(c)
    elif isinstance(t, Static) and dtypes.is_python_scalar(t.value):
        yield ArrayType(dtypes.python_scalar_dtype(t.value), (), True)


def grad(fun, argnums=0, has_aux=False):
    """The gradient of scalar-valued ``fun`` with respect to argument(s) ``argnums``."""
    return Grad(fun, argnums, has_aux)


def value_and_grad(fun, argnums=0, has_aux=False):
    """``(fun(*args), grad(fun)(*args))`` from one forward and one backward sweep."""
    return Grad(fun, argnums, has_aux, with_value=True)


class _Pullback:
    """What ``vjp`` returns: maps an output cotangent to the input cotangents."""

    def __init__(self, fun, primals, has_aux):
        self.target = Transformed(fun)
        self.primals = primals
        self.has_aux = has_aux
        self.cache = {}

    def __call__(self, cotangent):
        from ..api import Compiled
        from ..ir.types import type_of_value
        types_ = tuple(type_of_value(p) for p in self.primals) + (type_of_value(cotangent),)
        compiled = self.cache.get(types_)
        if compiled is None:
            compiled = Compiled(_VjpTarget(self.target, self.has_aux), types_)
            self.cache[types_] = compiled
        inputs = [_convert_input(v) for v in self.primals + (cotangent,)]
        out = compiled.entry(*inputs)
        return _wrap_output(out, compiled.out_type)[1]


class _VjpTarget:
    """``fun``'s vjp function at the primal types (the cotangent type is the last)."""

    def __init__(self, target, has_aux):
        self.target, self.has_aux = target, has_aux

    def function_for(self, arg_types, program):
        primal_types = arg_types[:-1]
        fn = self.target.function_for(primal_types, program)
        return vjp_function(program.specialize(fn, primal_types), self.has_aux)


def vjp(fun, *primals, has_aux=False):
    """``(fun(*primals), pullback)`` [``, aux``]: ``pullback(g)`` gives the cotangents."""
    out = Jitted(fun)(*primals)
    pull = _Pullback(fun, primals, has_aux)
    if has_aux:
        return out[0], pull, out[1]
    return out, pull
