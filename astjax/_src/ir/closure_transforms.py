"""``vmap(g)``, ``grad(g)``, ``checkpoint(g)``, ``jit(g)``, ... in compiled code, of a nested
function ``g`` that captured run-time values (JAX's
``vmap(lambda x: vmap(lambda y: f(x, y))(xs))(xs)``). (``jvp``, ``vjp`` and ``linearize``,
which take the primals with ``g``, take the closure as it is: ad/api.py.)

The transform is built when code is generated, while the captured values exist only at
run time, so it is built of ``g``'s lifted function, whose first parameter is the closure
tuple, with that parameter left out of the transform (``in_axes`` None, ``argnums``
shifted by one). The result is again a closure, of the same captured values and a new
lifted function

    def vmap_lambda(_astjax_closure, y):
        return _astjax_transformed(_astjax_closure, y)

so calling it (``vmap(g)(xs)``) is an ordinary closure call, and a derivative of the code
around it sends cotangents to the captured values through that argument.
"""
import functools

import gast

from ..frontend.desugar import LiftedFunction
from ..frontend.synthetic import from_source

_REBINDERS = {}  # (number of captured values, origin) -> the function building the closure


def _shift(argnums):
    """``argnums`` of g as argnums of g's lifted function (non-negative ones move by one;
    negative ones count from the end either way)."""
    if isinstance(argnums, int):
        return argnums + 1 if argnums >= 0 else argnums
    return tuple(_shift(a) for a in argnums)


def _transform_kwargs(name, n_params, args, kwargs):
    """(the transform, its arguments for the lifted function)."""
    import inspect
    factory = _factories()[name]
    signature = inspect.signature(factory.__call__ if name in ("vmap", "checkpoint")
                                  else factory)
    bound = signature.bind(None, *args, **kwargs)
    bound.apply_defaults()
    params = dict(bound.arguments)
    params.pop(next(iter(params)))  # the function itself
    params.pop("self", None)
    if name == "vmap":
        in_axes = params["in_axes"]
        if isinstance(in_axes, list):
            in_axes = tuple(in_axes)
        if not isinstance(in_axes, tuple):  # one spec for every argument
            in_axes = (in_axes,) * n_params
        params["in_axes"] = (None,) + in_axes
    elif name == "jit":  # inside compiled code, a call as any other (as JAX inlines it)
        return (lambda fun: fun), {}
    elif name == "checkpoint":
        params["static_argnums"] = _shift(params["static_argnums"])
    elif name == "vectorize":  # the closure: passed whole to each call
        params["excluded"] = frozenset({0} | {e + 1 if isinstance(e, int) else e
                                              for e in params["excluded"]})
    elif name in ("custom_jvp", "custom_vjp"):  # the closure: nondiff (ad/custom_closures.py)
        params["nondiff_argnums"] = (0,) + _shift(tuple(params["nondiff_argnums"]))
    else:
        params["argnums"] = _shift(params["argnums"])
    return factory, params


def closure_of_transform(target, closure_fn, n_captured, args, kwargs):
    """(the new lifted function, the rebinder) for ``target(g, *args, **kwargs)`` with g a
    closure of ``closure_fn``; None when ``target`` is not vmap, grad, value_and_grad,
    jacrev, jacfwd, hessian, checkpoint, jit, custom_jvp, custom_vjp or jnp.vectorize."""
    if isinstance(target, functools.partial) and _factory_name(target.func) is not None:
        # @partial(custom_jvp, nondiff_argnums=(1,)) on a nested def
        args, kwargs = tuple(target.args) + tuple(args), {**target.keywords, **kwargs}
        target = target.func
    name = _factory_name(target)
    if name is None:
        return None
    params = [a.id for a in closure_fn.fdef.args.args[1:]]
    if closure_fn.fdef.args.vararg is not None or closure_fn.fdef.args.kwarg is not None:
        return None
    factory, transform_params = _transform_kwargs(name, len(params), args, kwargs)
    transformed = factory(closure_fn, **transform_params)
    transformed._astjax_takes_closures = True  # its first argument is the closure tuple
    ps = ", ".join(["_astjax_closure"] + params)  # (names the user's code cannot hold)
    source = f"def {name}_{closure_fn.__name__.strip('_')}({ps}):\n" \
             f"    return _astjax_transformed({ps})\n"
    fdef = gast.parse(source).body[0]
    for node in gast.walk(fdef):
        if isinstance(node, (gast.stmt, gast.expr)):
            node.lineno, node.col_offset = closure_fn.origin.node.lineno, 0
    new = LiftedFunction(fdef.name, fdef, {"_astjax_transformed": transformed}, closure_fn.origin,
                         closure_fn.captured)
    return _shared(new), _rebinder(n_captured, closure_fn.origin)


def _shared(fn):
    """``fn`` stands in the rewritten call as a constant node, which derivatives copy with
    the function's definition (deepcopy): the copy is ``fn`` itself."""
    fn.__deepcopy__ = lambda memo: fn
    return fn


def _factories():
    from ..ad.api import grad, value_and_grad  # (imported late: they import this package)
    from ..ad.jacobian import hessian, jacfwd, jacrev
    from ..ad.checkpoint import checkpoint
    from ..api import jit
    from ..ad.custom import custom_jvp, custom_vjp
    from ..batching.api import vmap
    from ...numpy import vectorize
    return {"vmap": vmap, "vectorize": vectorize, "grad": grad, "value_and_grad": value_and_grad, "jacrev": jacrev,
            "jacfwd": jacfwd, "hessian": hessian, "checkpoint": checkpoint, "jit": jit,
            "custom_jvp": custom_jvp, "custom_vjp": custom_vjp}


def _factory_name(target):
    return next((name for name, f in _factories().items() if target is f), None)


def _rebinder(n, origin):
    """``(fn, closure[1], ..., closure[n])``: the closure of the same captured values with
    lifted function ``fn`` (a constant)."""
    fn = _REBINDERS.get((n, id(origin)))
    if fn is None:
        elts = ", ".join(["fn"] + [f"closure[{i}]" for i in range(1, n + 1)])
        fn = _REBINDERS[n, id(origin)] = _shared(from_source(
            "closure_of_transform", f"def closure_of_transform(fn, closure):\n"
                                    f"    return ({elts},)\n", {}, origin))
    return fn
