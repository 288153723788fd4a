"""grad, value_and_grad and vjp: reverse mode, as transforms that compose.

``grad(f)`` stands, at each argument signature, for a generated function
``f_grad(x, ...)`` that calls ``f_vjp`` (see reverse.py) with the seed 1.0.
Compiled code can call ``grad(f)``, and ``grad(grad(f))`` differentiates the
generated ``f_grad``.
"""
import inspect

import gast
import numpy as np

import astjax.numpy as jnp

from .. import dtypes
from ..api import Jitted, Transformed
from ..frontend.naming import assign, const, load
from ..frontend.synthetic import SyntheticFunction, function_def
from ..ir.types import ArrayType, Static
from . import vjp_rules  # noqa: F401  (registers the rules)
from .reverse import split_vjp_functions, vjp_function


def _argnums_tuple(argnums, n, name):
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    for i in nums:
        if not isinstance(i, int) or not -n <= i < n:
            raise ValueError(f"{name}: argnums {argnums!r} out of range for a function of "
                             f"{n} positional arguments")
    return tuple(i % n for i in nums)


class _Primal(Jitted):
    """The primal outputs of ``vjp``/``jvp``, computed on the python backend."""


class Grad(Jitted):
    """``grad`` / ``value_and_grad`` of ``fun``."""

    def __init__(self, fun, argnums=0, has_aux=False, with_value=False, holomorphic=False,
                 allow_int=False):
        super().__init__(fun)
        self.argnums = argnums
        self.has_aux = has_aux
        self.with_value = with_value
        self.holomorphic, self.allow_int = holomorphic, allow_int
        self.kind = "value_and_grad" if with_value else "grad"

    def __call__(self, *args, **kwargs):
        return self.finish(args, kwargs, super().__call__(*args, **kwargs))

    def finish(self, args, kwargs, out):
        """``out`` with integer inputs' gradients as float0 zeros, as in JAX (they are
        None in compiled code); also where ``jit`` calls this function."""
        if not self.allow_int:
            return out
        values = list(self.signature.bind(*args, **kwargs).arguments.values())
        nums = _argnums_tuple(self.argnums, len(values), self.kind)
        grads = out[1] if self.with_value else out[0] if self.has_aux else out
        if isinstance(self.argnums, int):
            grads = _float0_where_none(values[nums[0]], grads)
        else:
            grads = tuple(_float0_where_none(values[i], g) for i, g in zip(nums, grads))
        if self.with_value:
            return out[0], grads
        return (grads, out[1]) if self.has_aux else grads

    def function_for(self, arg_types, program):
        inner = self.fun
        nums = _argnums_tuple(self.argnums, len(arg_types), self.kind)
        given, arg_types = arg_types, traced_numbers(arg_types, nums)
        fn = inner.function_for(arg_types, program) if hasattr(inner, "function_for") else inner
        spec = program.specialize(fn, arg_types)
        self._check(spec, arg_types, nums)
        # (wrt: nothing else is differentiated, so a custom function may capture the rest)
        vjp_fn = vjp_function(spec, {0} if self.has_aux else None, differentiated(spec, nums))
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
        seed = gast.Tuple(elts=[const(1.0), const(None)], ctx=gast.Load()) if self.has_aux \
            else const(1.0)  # the output's cotangent; an aux output gets none
        namespace["_traced"] = jnp.asarray
        args = [gast.Call(func=load("_traced"), args=[load(p)], keywords=[])
                if given[k] is not arg_types[k] else load(p) for k, p in enumerate(params)]
        call = gast.Call(func=load("_vjp"), args=args + [seed], keywords=[])
        body = [assign(r, call), gast.Return(value=result)]
        for node in body:
            for n in gast.walk(node):
                if isinstance(n, (gast.stmt, gast.expr)):
                    n.lineno, n.col_offset = spec.parsed.node.lineno, 0
        name = f"{spec.name}_{self.kind}"
        return SyntheticFunction(name, function_def(name, params, body), namespace,
                                 spec.parsed)

    def _check(self, spec, arg_types, nums):
        """JAX's checks on the differentiated inputs and the output (their dtypes)."""
        for i in nums:
            t = arg_types[i]
            for leaf in _array_leaves(t):
                if self.holomorphic and leaf.dtype.kind != "c":
                    raise TypeError(f"{self.kind} with holomorphic=True requires inputs with "
                                    f"complex dtype, but got {leaf.dtype} for argument {i} "
                                    f"of {spec.fn.__name__}")
                if leaf.dtype.kind not in "fc" and not self.allow_int:
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
        if self.holomorphic and out.dtype.kind != "c":
            raise TypeError(f"{self.kind} with holomorphic=True requires outputs with complex "
                            f"dtype, but {spec.fn.__name__} returns {out.dtype}")
        if not self.holomorphic and out.dtype.kind != "f":
            raise TypeError(f"{self.kind} requires real-valued outputs (output dtype that is a "
                            f"sub-dtype of np.floating), but {spec.fn.__name__} returns "
                            f"{out.dtype}. For holomorphic differentiation, pass "
                            f"holomorphic=True. For differentiation of non-holomorphic "
                            f"functions involving complex outputs, use vjp directly.")


def traced_numbers(arg_types, nums):
    """The argument types with a Python number written in compiled code at a
    differentiated position (``grad(f)(1.0, y)``, a constant there) made a weak scalar, as
    JAX traces it: its derivative is then taken, not None."""
    out = list(arg_types)
    for i in nums:
        t = out[i]
        if isinstance(t, Static) and dtypes.is_python_scalar(t.value):
            out[i] = ArrayType(dtypes.python_scalar_dtype(t.value), (), True)
    return tuple(out)


def _traced_lines(names, given, types_):
    """Source making each parameter ``traced_numbers`` changed a run-time scalar."""
    return "".join(f"    {n} = jnp.asarray({n})\n" for n, g, t in zip(names, given, types_)
                   if g is not t)


def differentiated(spec, nums):
    """``wrt`` for a derivative of ``spec`` with respect to its arguments ``nums``: None
    where those are all its floating-point ones (the derivative they share)."""
    from .analysis import float_leaves
    others = [k for k, t in enumerate(spec.arg_types) if k not in nums and
              any(True for _ in float_leaves(t))]
    return frozenset(nums) if others else None


def _is_none(x):
    return x is None


def _integer_valued(x):
    return np.result_type(x).kind in "biu"


def _float0_where_none(reference, value):
    """``value`` (a tangent or cotangent tree shaped like ``reference``) with the None
    leaves that stand for integer or boolean leaves of ``reference`` as float0 zeros of
    their shapes, as JAX gives them (compiled code keeps None)."""
    from .. import tree_util
    leaves, treedef = tree_util.tree_flatten(value, is_leaf=_is_none)
    refs = tree_util.tree_flatten(reference, is_leaf=_is_none)[0]
    if len(refs) != len(leaves):
        return value
    filled = [np.zeros(np.shape(r), dtypes.float0)
              if v is None and r is not None and _integer_valued(r) else v
              for r, v in zip(refs, leaves)]
    return tree_util.tree_unflatten(treedef, filled)


def _float0_as_zeros(where, reference, value):
    """``value`` with its float0 leaves, JAX's tangents of integer values, as zeros of the
    matching ``reference`` leaf (the generated code ignores them); float0 for a float
    leaf is JAX's TypeError."""
    from .. import tree_util
    leaves, treedef = tree_util.tree_flatten(value)
    refs = tree_util.tree_leaves(reference)
    filled = []
    for r, v in zip(refs, leaves):
        if np.result_type(v) == dtypes.float0:
            if not _integer_valued(r):
                raise TypeError(f"{where}: a float0 value stands for the derivative of an "
                                f"integer or boolean value, got one for {np.result_type(r)}")
            v = type(r)(0) if dtypes.is_python_scalar(r) else \
                np.zeros(np.shape(r), dtypes.canonicalize_dtype(np.result_type(r)))
        filled.append(v)
    return tree_util.tree_unflatten(treedef, filled)


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


def grad(fun, argnums=0, has_aux=False, holomorphic=False, allow_int=False):
    """The gradient of scalar-valued ``fun`` with respect to argument(s) ``argnums``.

    For complex inputs and a real output it is df/dx - i df/dy, as in JAX; with
    ``holomorphic=True`` (complex inputs and output) it is f'(z). With ``allow_int=True``
    an integer input's gradient is zeros of dtype ``astjax.dtypes.float0`` (None inside
    compiled code)."""
    return Grad(fun, argnums, has_aux, holomorphic=holomorphic, allow_int=allow_int)


def value_and_grad(fun, argnums=0, has_aux=False, holomorphic=False, allow_int=False):
    """``(fun(*args), grad(fun)(*args))`` from one forward and one backward sweep."""
    return Grad(fun, argnums, has_aux, with_value=True, holomorphic=holomorphic,
                allow_int=allow_int)


class _Half:
    """A compile target that is one half (``*_fwd`` or ``*_bwd``) of f's derivative as
    ``_eager_split`` split it: eager vjp's forward call and its pullback compile the two
    halves of one split, so the backward sweep reads the residuals laid out as the forward
    one wrote them (two splits may split f's callees differently). Generated functions are
    not something the source cache can describe, so neither half is cached there."""

    def __init__(self, fn, hoisted):
        self.fn = fn
        self.hoisted = hoisted  # the split program's leaves of pytrees read from outside

    def function_for(self, arg_types, program):
        for name, value in self.hoisted.items():  # (names the halves' source reads)
            program.hoisted.setdefault(name, value)
        return self.fn


def _eager_split(fun, primals, has_aux):
    """(the argument values, their types, f's ``(*_fwd, *_bwd)``) for eager vjp, split once
    in a program of its own (as api.Compiled builds one); None where f's derivative does
    not split, or an argument is no array tree (the primal call then reports it)."""
    from ..ir.specialize import Program
    from ..ir.types import type_of_value
    from .reverse import SplitRefused
    target = Transformed(fun)
    ba, defaulted = target.bind(primals, {})
    values, types_ = [], []
    for name, value, _ in target._each_argument(ba):
        try:  # (a default not passed is a constant, as in compiled_for)
            types_.append(Static(value) if name in defaulted else type_of_value(value))
        except TypeError:
            return None
        values.append(value)
    types_ = tuple(types_)
    for split_lists in (True, False):
        program = Program()
        program.backend, program.split_lists = "python", split_lists
        try:
            spec = program.specialize(target.function_for(types_, program), types_)
            split = split_vjp_functions(spec, {0} if has_aux else None)
            break
        except SplitRefused:
            if not split_lists:
                raise
    return None if split is None else (tuple(values), types_, split, program.hoisted)


def _residual_values(value, t):
    """The forward sweep's residuals ``value`` (of type ``t``) to pass to the backward
    sweep: lists (a loop's tapes) copied, as the backward sweep pops them and a pullback
    may be called again; an array of another dtype than its type's (a size the python
    backend computed as int64) cast to it, which passing it as an input would do with a
    warning about narrowing the user's data."""
    from ..ir.types import ListType, SequenceType
    if isinstance(value, list) and isinstance(t, ListType):
        return [_residual_values(v, t.elt) for v in value]
    if type(value) is tuple and isinstance(t, SequenceType):
        return tuple(_residual_values(v, c) for v, c in zip(value, t.elts))
    if isinstance(t, ArrayType) and getattr(value, "dtype", t.dtype) != t.dtype:
        return np.asarray(value).astype(t.dtype)
    return value


class _Pullback:
    """What ``vjp`` returns: maps an output cotangent to the input cotangents (f's backward
    sweep ``*_bwd`` on the forward sweep's residuals, where vjp ran f's ``*_fwd``: ``split``
    is (argument values, their types, the pair, the residuals, their type); else f's
    ``*_vjp``, which reruns the forward statements)."""

    def __init__(self, fun, primals, has_aux, out, split=None):
        self.target = Transformed(fun)
        self.primals = primals
        self.has_aux = has_aux
        self.cache = {}
        self.out = out  # the primal output, which the cotangent must match
        self.split = split

    def __call__(self, cotangent):
        from ..api import Compiled
        from ..ir.types import type_of_value
        _check_like("vjp function", "cotangent", self.out, "output", cotangent)
        cotangent = _float0_as_zeros("vjp function", self.out, cotangent)
        if self.has_aux:
            cotangent = (cotangent, None)  # the aux output gets no cotangent
        if self.split is not None:
            values, types_, (_, bwd), hoisted, residuals, res_type = self.split
            types_ += (res_type, type_of_value(cotangent))
            values += (_residual_values(residuals, res_type), cotangent)
        else:
            types_ = tuple(type_of_value(p) for p in self.primals) + \
                (type_of_value(cotangent),)
            values = self.primals + (cotangent,)
        compiled = self.cache.get(types_)
        if compiled is None:
            compiled = Compiled(_VjpTarget(self.target, self.has_aux) if self.split is None
                                else _Half(bwd, hoisted), types_)
            self.cache[types_] = compiled
        cotangents = compiled.run(values)
        if self.split is None:
            cotangents = cotangents[1]
        elif len(cotangents) > len(self.primals):  # (a default's, not passed)
            cotangents = cotangents[:len(self.primals)]
        return _float0_where_none(self.primals, cotangents)

    def function_for(self, arg_types, program):
        """``jit(pullback)``, ``vmap(pullback)``, a call from compiled code: a function of
        the cotangent calling ``fun``'s ``*_vjp`` with the primals as captured arrays (as
        JAX closes over them); an integer primal's cotangent is None there."""
        from ..frontend.synthetic import from_source
        spec, primals, namespace = _closed_over_primals(self.target, self.primals, program)
        namespace["_vjp"] = vjp_function(spec, {0} if self.has_aux else None)
        seed = "(g, None)" if self.has_aux else "g"
        source = (f"def {spec.name}_pullback(g):\n"
                  f"    return _vjp({primals}{',' if primals else ''} {seed})[1]\n")
        return from_source(f"{spec.name}_pullback", source, namespace, spec.parsed)


def _closed_over_primals(target, primals, program):
    """For a function closing over concrete ``primals`` (vjp's pullback, linearize's
    f_jvp) called from compiled code: ``target``'s specialization at their types, the
    source text of the primals as arguments, and the namespace it reads them from (each
    array a captured constant, Python numbers weak arrays)."""
    from ..ir.trees import container_source, namespace_ref
    from ..ir.types import keyed_children, type_of_value
    from ..runtime.array import Array, to_numpy_input
    primal_types = tuple(type_of_value(p) for p in primals)
    spec = program.specialize(target.function_for(primal_types, program), primal_types)
    namespace = {}
    ref = namespace_ref(namespace)

    def source_of(t, value):
        pairs = keyed_children(t)
        if pairs is not None:
            return container_source(t, [source_of(c, value[k]) for k, c in pairs], ref)
        if isinstance(t, Static):
            return repr(t.value) if t.value is None else ref(t.value)
        name = f"_primal{len(namespace)}"
        namespace[name] = Array(np.asarray(to_numpy_input(value)), t.weak)
        return name

    return spec, ", ".join(source_of(t, p) for t, p in zip(primal_types, primals)), namespace


class _VjpTarget:
    """``fun``'s vjp function at the primal types (the cotangent type is the last)."""

    def __init__(self, target, has_aux):
        self.target, self.has_aux = target, has_aux

    def function_for(self, arg_types, program):
        primal_types = arg_types[:-1]
        fn = self.target.function_for(primal_types, program)
        return vjp_function(program.specialize(fn, primal_types), {0} if self.has_aux else None)


def vjp(fun, *primals, has_aux=False):
    """``(fun(*primals), pullback)`` [``, aux``]: ``pullback(g)`` gives the cotangents."""
    from ..api import Compiled
    split = _eager_split(fun, primals, has_aux)
    if split is None:
        out = _Primal(fun)(*primals)
    else:  # f's forward sweep, once: the pullback runs the backward one on its residuals
        values, types_, (fwd, _), hoisted = split
        compiled = Compiled(_Half(fwd, hoisted), types_)
        out, residuals = compiled.run(values)
        split += (residuals, compiled.out_type.elts[1])
    pull = _Pullback(fun, primals, has_aux, out[0] if has_aux else out, split)
    if has_aux:
        return out[0], pull, out[1]
    return out, pull


def _static_function(fun_t, name):
    from ..errors import TypeCheckError
    if not isinstance(fun_t, Static) or not callable(fun_t.value):
        raise TypeCheckError(f"{name}: the function must be known when the code is generated, "
                             f"got {fun_t}")
    return fun_t.value


def _function_and_closure(fun_t, name, n_primals):
    """(the function to transform, the types of the arguments that come before the
    primals). A closure (a nested function that captured run-time values) is its lifted
    function, whose first argument, the closure tuple, the transform takes as a constant of
    its own (a zero tangent, no cotangent returned) while an outer derivative reaches the
    captured values through it, as JAX's (ir/closure_transforms.py does the same for grad)."""
    from ..errors import TypeCheckError
    from ..ir.infer import closure_function
    lifted = closure_function(fun_t)
    if lifted is None:
        return _static_function(fun_t, name), ()
    n = len(lifted.fdef.args.args) - 1  # (a nested function has no defaults or *args)
    if n != n_primals:
        raise TypeCheckError(f"{name}: the function takes {n} argument{'s' * (n != 1)}, got "
                             f"{n_primals} primal{'s' * (n_primals != 1)}")
    return lifted, (fun_t,)


def _vjp_in_compiled_code(arg_types, program):
    """``vjp(f, *primals, has_aux=)`` inside jit/grad/vmap: f's output from its forward
    sweep ``*_fwd`` and a nested ``pullback(g)`` that runs its backward sweep ``*_bwd`` on
    the residuals (``reverse.split_vjp_functions``). Where f's derivative does not split,
    the pullback calls f's ``*_vjp``, which reruns f's forward sweep."""
    from ..errors import TypeCheckError
    from ..frontend.synthetic import from_source
    fun_t, *primal_types, has_aux_t = arg_types
    if not isinstance(has_aux_t, Static):
        raise TypeCheckError("vjp: has_aux must be a constant")
    has_aux = bool(has_aux_t.value)
    fun, closure = _function_and_closure(fun_t, "vjp", len(primal_types))
    given, primal_types = primal_types, traced_numbers(primal_types, range(len(primal_types)))
    spec = _inner_spec(Transformed(fun), closure + tuple(primal_types), program)
    names = [f"p{k}" for k in range(len(primal_types))]
    primals = ", ".join(names)
    seed = "(g, None)" if has_aux else "g"
    result = "out[0], pullback, out[1]" if has_aux else "out, pullback"
    n = len(closure)
    # (the closure's cotangent is left out)
    cotangents = "r[1]" if not n else \
        "(" + "".join(f"r[1][{k + n}], " for k in range(len(names))) + ")"
    wrt = range(n, n + len(names)) if n else None
    live = {0} if has_aux else None
    split = split_vjp_functions(spec, live, wrt)
    args = f"{'fun, ' * n}{primals}"
    if split is None:
        forward, backward = f"    out = fun({primals})\n", f"        r = _vjp({args}, {seed})\n"
    else:  # (the backward sweep returns the cotangents alone)
        forward = f"    pair = _fwd({args})\n    out = pair[0]\n    res = pair[1]\n"
        backward = f"        r = (None, _vjp({args}, res, {seed}))\n"
    source = (f"def {spec.name}_vjp_call(fun, {primals}, has_aux=False):\n"
              f"{_traced_lines(names, given, primal_types)}{forward}"
              f"    def pullback(g):\n"
              f"{backward}"
              f"        return {cotangents}\n"
              f"    return {result}\n")
    namespace = {"_vjp": vjp_function(spec, live, wrt)} if split is None else \
        {"_fwd": split[0], "_vjp": split[1]}
    namespace["jnp"] = jnp
    return from_source(f"{spec.name}_vjp_call", source, namespace, spec.parsed)


vjp.function_for = _vjp_in_compiled_code
vjp._astjax_takes_closures = True  # (of a closure too: _function_and_closure)


# --- forward mode and Jacobians ---------------------------------------------------------------
# jvp differentiates the pullback: u -> J^T u is linear, so its vjp at any u, applied to v,
# is J v. That reuses every VJP rule (no second rule set) at the cost of extra sweeps.

def _zeros_like_expr(t, expr, namespace):
    """Source text for a zero cotangent shaped like ``expr`` of type ``t`` (the containers
    it builds are bound in ``namespace``)."""
    from ..ir.trees import container_source, namespace_ref
    from ..ir.types import keyed_children
    pairs = keyed_children(t)
    if pairs is not None:
        return container_source(t, [_zeros_like_expr(c, f"{expr}[{k!r}]", namespace)
                                    for k, c in pairs], namespace_ref(namespace))
    if isinstance(t, ArrayType) and t.dtype.kind in "fc" or \
            isinstance(t, Static) and type(t.value) in (float, complex):  # a constant's: 0.0
        return f"_ajx.cotangent_like(0.0, {expr})"
    return "None"


def jvp_function(spec, program, wrt=None):
    """``<name>_jvp(x..., v...) -> (f(x...), J v)`` for a typed specialization: forward
    mode where every statement has a tangent rule, else the pullback differentiated.
    ``wrt``: None, or the positions of the inputs whose tangents it reads (the others'
    count as zeros)."""
    from .forward import NoTangentRule, forward_function
    try:
        return forward_function(spec, wrt)
    except NoTangentRule as e:
        from ..config import config
        if config.log_compiles:
            import sys
            print(f"astjax: jvp of {spec.name} differentiates the pullback: forward mode has "
                  f"no tangent for {e}", file=sys.stderr)
        return pullback_jvp_function(spec, program, wrt)


def pullback_jvp_function(spec, program, wrt=None):
    """``jvp_function`` by differentiating the pullback (see above)."""
    from ..frontend.synthetic import from_source
    from . import adlib
    n = len(spec.arg_types)
    xs = ", ".join(f"x{i}" for i in range(n))
    vs = ", ".join(f"v{i}" for i in range(n))
    tup = lambda names: "(" + names + ("," if n == 1 else "") + ")"
    out_type = spec.return_type
    pullback = from_source(f"{spec.name}_pullback",
                           f"def pullback({xs}, u):\n    return _vjp({xs}, u)[1]\n",
                           {"_vjp": vjp_function(spec, wrt=wrt)}, spec.parsed)
    pull_spec = program.specialize(pullback, spec.arg_types + (_dynamic(out_type),))
    namespace = {"_f": spec.fn, "_pull_vjp": vjp_function(pull_spec), "_ajx": adlib}
    source = (f"def {spec.name}_jvp({xs}, {vs}):\n"
              f"    out = _f({xs})\n"
              f"    u = {_zeros_like_expr(out_type, 'out', namespace)}\n"
              f"    r = _pull_vjp({xs}, u, {tup(vs)})\n"
              f"    return out, r[1][{n}]\n")
    return from_source(f"{spec.name}_jvp", source, namespace, spec.parsed)


def _dynamic(t):
    """A static Python number as the (weak) array type it has at run time."""
    if isinstance(t, Static) and dtypes.is_python_scalar(t.value):
        return ArrayType(dtypes.python_scalar_dtype(t.value), (), True)
    return t


def _inner_spec(transform, arg_types, program):
    inner = transform.fun
    fn = inner.function_for(arg_types, program) if hasattr(inner, "function_for") else inner
    return program.specialize(fn, arg_types)


class _JvpTarget:
    """``fun``'s jvp function: the argument types are the primals' then the tangents'."""

    def __init__(self, target):
        self.target = target

    def function_for(self, arg_types, program):
        primal_types = arg_types[:len(arg_types) // 2]
        fn = self.target.function_for(primal_types, program)
        return jvp_function(program.specialize(fn, primal_types), program)


def jvp(fun, primals, tangents):
    """``(fun(*primals), J tangents)``: the directional derivative (forward mode)."""
    from ..api import Compiled
    from ..ir.types import type_of_value
    primals, tangents = tuple(primals), tuple(tangents)
    if len(primals) != len(tangents):
        raise TypeError(f"jvp: {len(primals)} primals but {len(tangents)} tangents")
    for p, t in zip(primals, tangents):
        _check_like("jvp", "tangent", p, "primal", t)
    tangents = _float0_as_zeros("jvp", primals, tangents)
    values = primals + tangents
    types_ = tuple(type_of_value(v) for v in values)
    out, tangents_out = Compiled(_JvpTarget(Transformed(fun)), types_).run(values)
    return out, _float0_where_none(out, tangents_out)


def _check_like(where, what, reference, of, value):
    """JAX's check that a tangent (cotangent) matches its primal (output): the same tree,
    shapes and, for floating-point leaves, dtypes."""
    from ..tree_util import tree_flatten
    (r_leaves, r_def), (v_leaves, v_def) = tree_flatten(reference), tree_flatten(value)
    if r_def != v_def:
        raise ValueError(f"{where}: {of} and {what} structures differ: {r_def} and {v_def}")
    for r, v in zip(r_leaves, v_leaves):
        if np.shape(r) != np.shape(v):
            raise ValueError(f"{where}: {of} and {what} shapes differ: {np.shape(r)} and "
                             f"{np.shape(v)}")
        r_dtype = dtypes.canonicalize_dtype(np.result_type(r))
        if np.result_type(v) == dtypes.float0:  # an integer's (co)tangent: _float0_as_zeros
            continue
        v_dtype = dtypes.canonicalize_dtype(np.result_type(v))
        if r_dtype.kind in "fc" and r_dtype != v_dtype and not dtypes.is_python_scalar(v):
            raise TypeError(f"{where}: {of} and {what} dtypes differ: {of} dtype {r_dtype}, "
                            f"{what} dtype {v_dtype} (they must be equal)")


def _jvp_in_compiled_code(arg_types, program):
    """``jvp(f, primals, tangents)`` inside jit/grad/vmap: a call of f's generated
    ``*_jvp`` (f a static function, primals and tangents tuples)."""
    from ..errors import TypeCheckError
    from ..frontend.synthetic import from_source
    from ..ir.types import SequenceType
    fun_t, primals_t, tangents_t = arg_types

    def elements(t, what):
        if isinstance(t, SequenceType):
            return t.elts
        if isinstance(t, Static) and isinstance(t.value, (tuple, list)):
            return tuple(Static(v) for v in t.value)
        raise TypeCheckError(f"jvp: {what} must be a tuple or a list, got {t}")
    primal_types, tangent_types = elements(primals_t, "primals"), elements(tangents_t, "tangents")
    if len(primal_types) != len(tangent_types):
        raise TypeCheckError(f"jvp: {len(primal_types)} primals but {len(tangent_types)} "
                             f"tangents")
    fun, closure = _function_and_closure(fun_t, "jvp", len(primal_types))
    given, primal_types = primal_types, traced_numbers(primal_types, range(len(primal_types)))
    spec = _inner_spec(Transformed(fun), closure + tuple(primal_types), program)
    n = len(primal_types)
    from . import adlib
    # (the closure's tangent is zeros: a custom function may capture its values)
    wrt = range(len(closure), len(closure) + n) if closure else None
    namespace = {"_jvp": jvp_function(spec, program, wrt), "_ajx": adlib, "jnp": jnp}
    zero = [_zeros_like_expr(fun_t, "fun", namespace)] if closure else []
    args = ["fun"] * len(closure) + [
        f"primals[{k}]" if given[k] is primal_types[k] else f"jnp.asarray(primals[{k}])"
        for k in range(n)] + zero + [f"tangents[{k}]" for k in range(n)]
    source = (f"def {spec.name}_jvp_call(fun, primals, tangents):\n"
              f"    return _jvp({', '.join(args)})\n")
    return from_source(f"{spec.name}_jvp_call", source, namespace, spec.parsed)


jvp.function_for = _jvp_in_compiled_code
jvp._astjax_takes_closures = True


def linearize(fun, *primals):
    """``(fun(*primals), f_jvp)`` where ``f_jvp(*tangents)`` is the jvp at ``primals``."""
    out = _Primal(fun)(*primals)
    return out, _Linearized(fun, primals)


class _Linearized:
    """What ``linearize`` returns: ``f_jvp(*tangents)``, one tangent per primal."""

    def __init__(self, fun, primals):
        self.fun, self.primals = fun, primals
        # one parameter per primal, so that jit and vmap can bind the tangents
        self.__signature__ = inspect.Signature(
            [inspect.Parameter(f"t{k}", inspect.Parameter.POSITIONAL_ONLY)
             for k in range(len(primals))])

    def __call__(self, *tangents):
        return jvp(self.fun, self.primals, tangents)[1]

    def function_for(self, arg_types, program):
        """``jit(f_jvp)``, ``vmap(f_jvp)``, a call from compiled code (see _Pullback)."""
        from ..frontend.synthetic import from_source
        spec, primals, namespace = _closed_over_primals(Transformed(self.fun), self.primals,
                                                        program)
        namespace["_jvp"] = jvp_function(spec, program)
        tangents = ", ".join(f"t{k}" for k in range(len(self.primals)))
        source = (f"def {spec.name}_linearized({tangents}):\n"
                  f"    return _jvp({primals}, {tangents})[1]\n")
        return from_source(f"{spec.name}_linearized", source, namespace, spec.parsed)


def _linearize_in_compiled_code(arg_types, program):
    """``linearize(f, *primals)`` inside jit/grad/vmap: f's output and a nested ``f_jvp``
    calling f's generated ``*_jvp`` (each call reruns f's forward statements)."""
    from ..frontend.synthetic import from_source
    fun_t, *primal_types = arg_types
    fun, closure = _function_and_closure(fun_t, "linearize", len(primal_types))
    given, primal_types = primal_types, traced_numbers(primal_types, range(len(primal_types)))
    spec = _inner_spec(Transformed(fun), closure + tuple(primal_types), program)
    names = [f"p{k}" for k in range(len(primal_types))]
    tangents = [f"t{k}" for k in range(len(primal_types))]
    from . import adlib
    wrt = range(len(closure), len(closure) + len(names)) if closure else None
    namespace = {"_jvp": jvp_function(spec, program, wrt), "_ajx": adlib, "jnp": jnp}
    zero = [_zeros_like_expr(fun_t, "fun", namespace)] if closure else []
    args = ["fun"] * len(closure) + names + zero + tangents
    source = (f"def {spec.name}_linearize_call(fun, {', '.join(names)}):\n"
              f"{_traced_lines(names, given, primal_types)}"
              f"    def f_jvp({', '.join(tangents)}):\n"
              f"        return _jvp({', '.join(args)})[1]\n"
              f"    return fun({', '.join(names)}), f_jvp\n")
    return from_source(f"{spec.name}_linearize_call", source, namespace, spec.parsed)


linearize.function_for = _linearize_in_compiled_code
linearize._astjax_takes_closures = True
