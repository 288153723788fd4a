"""``functools.partial`` objects and bound methods as functions the compiler reads
(``jit(partial(f, a))``, ``grad(partial(loss, params))``, ``jit(obj.method)``, either called
inside compiled code).

``partial(f, a, k=v)`` becomes a generated

    def f(x, k=<unset>):
        return _fn(_a0, x=x, k=(_k0 if k is _unset else k))

whose signature is the partial's own. The bound values are constants of its namespace, as
captured values are (JAX closes over them too); a pytree of them is written out as a
display of its leaves (``{'b': _a0, 'w': _a1}``), since compiled code captures arrays one
by one.
"""
import copy
import functools
import inspect
import types
import weakref

from .synthetic import SyntheticFunction, from_source

_WRAPPERS = weakref.WeakKeyDictionary()  # partial -> its generated function


class _Unset:
    def __repr__(self):
        return "<bound by the partial>"


_UNSET = _Unset()


def partial_function(p):
    fn = _WRAPPERS.get(p)
    if fn is None:
        fn = _WRAPPERS[p] = _wrap(p)
    return fn


_METHODS = {}  # bound method -> its generated function (a method hashes by its object's id)


def method_function(m):
    """A bound method ``obj.f`` as a function (``jit(obj.f)``, or ``obj.f(x)`` in compiled
    code for an ``obj`` from outside): ``f``'s definition without its ``self`` parameter,
    ``self`` being ``obj`` in its namespace, so ``self.w`` reads a constant as a global's
    attribute does (JAX closes over ``obj`` too)."""
    fn = _METHODS.get(m)
    if fn is None:
        fn = _METHODS[m] = _method(m)
    return fn


def _method(m):
    from .desugar import check_supported
    from .parse import parse_function
    func = m.__func__
    if not isinstance(func, types.FunctionType):  # a jitted method, say
        return _wrap(functools.partial(func, m.__self__))
    parsed = parse_function(func)
    check_supported(parsed)
    fdef = copy.deepcopy(parsed.node)
    args = fdef.args
    first = (args.posonlyargs or args.args)[0]
    args.posonlyargs, args.args = [a for a in args.posonlyargs if a is not first], \
        [a for a in args.args if a is not first]
    args.defaults, args.kw_defaults = [], []  # the signature below has them
    namespace = dict(func.__globals__, **parsed.freevars)
    namespace[first.id] = m.__self__
    fn = SyntheticFunction(func.__name__, fdef, namespace, parsed)
    fn.__signature__ = inspect.signature(m)
    return fn


def keyword_call_function(fn, n_positional, keywords):
    """``def f(_a0, .., k1, ..): return fn(_a0, .., k1=k1, ..)``: a call of ``fn`` with
    keyword arguments as a function of positional ones (vmap maps keywords)."""
    positional = [f"_a{i}" for i in range(n_positional)]
    passed = positional + [f"{k}={k}" for k in keywords]
    name = getattr(fn, "__name__", "")
    name = name if name.isidentifier() else "keywords"
    return from_source(name, f"def {name}({', '.join(positional + list(keywords))}):\n"
                             f"    return _fn({', '.join(passed)})\n", {"_fn": fn}, _origin(fn))


def _wrap(p):
    from ..ops.registry import Op
    if isinstance(p.func, Op):  # partial(jnp.sum, axis=0): the op as a function
        from ..api import _op_function
        p = functools.partial(_op_function(p.func), *p.args, **p.keywords)
    sig = inspect.signature(p)
    params = []
    for q in sig.parameters.values():
        if q.kind in (q.VAR_POSITIONAL, q.VAR_KEYWORD):
            raise TypeError(f"astjax cannot compile {p!r}: its function takes *{q.name}")
        params.append(q.replace(default=_UNSET) if q.name in p.keywords else q)
    namespace = {"_fn": p.func, "_unset": _UNSET}
    passed = [_display(a, f"_a{i}", namespace) for i, a in enumerate(p.args)]
    for n, q in sig.parameters.items():
        if n in p.keywords:
            n = f"({_display(p.keywords[n], f'_k_{n}', namespace)} if {n} is _unset else {n})"
        passed.append(n if q.kind is q.POSITIONAL_ONLY else f"{q.name}={n}")
    name = getattr(p.func, "__name__", "")
    name = name if name.isidentifier() else "partial"
    fn = from_source(name, f"def {name}({', '.join(sig.parameters)}):\n"
                           f"    return _fn({', '.join(passed)})\n", namespace, _origin(p.func))
    # calls bind to the partial's signature; generated code takes every parameter positionally
    fn.__signature__ = sig.replace(parameters=params)
    return fn


def _display(value, name, namespace):
    """Source of ``value``: a namespace name for a leaf, a display for a container."""
    from ..ir.trees import namespace_ref
    from ..ir.types import type_of_value
    from ..lax.common import rebuild
    try:
        t = type_of_value(value)
    except TypeError:  # not a pytree of arrays: a constant (a function, a string, ...)
        t = None
    leaves = iter(_leaf_values(value, t))

    def leaf(path, _):
        key = f"{name}_{len(namespace)}" if path else name
        namespace[key] = next(leaves)
        return key
    if t is None:
        return leaf((), None)
    return rebuild(t, leaf, namespace_ref(namespace))


def _leaf_values(value, t):
    """The leaves of ``value`` in the order ``rebuild`` visits its type ``t``'s leaves."""
    from ..ir.types import SequenceType, TreeType
    from .. import tree_util
    if isinstance(t, SequenceType):
        for v, e in zip(value, t.elts):
            yield from _leaf_values(v, e)
    elif isinstance(t, TreeType):
        children, _, _ = tree_util.flatten_one_level(value)
        for v, c in zip(children, t.children):
            yield from _leaf_values(v, c)
    else:
        yield value


def _origin(func):
    """The parsed function whose lines the wrapper's code points at: ``func``'s own when
    it has source (through jit and friends), else this module's."""
    from .parse import parse_function
    while hasattr(func, "__astjax_wrapped__"):
        func = func.__astjax_wrapped__
    if getattr(func, "origin", None) is not None:  # a generated function (an op's)
        return func.origin
    try:
        return parse_function(func)
    except Exception:
        return parse_function(partial_function)
