"""Source to A-normal form: parse, check, desugar, ANF. Cached per function."""
import inspect
import os
import sys
from types import FunctionType

import gast

from ..ir import anno
from .anf import ANF, local_names
from .desugar import Desugar, check_supported
from .naming import Names, assign, copy_loc, load
from .parse import ParsedFunction, parse_function
from .synthetic import SyntheticFunction, from_source

_CACHE = {}


def dump_enabled(stage):
    return stage in os.environ.get("ASTJAX_DUMP", "").split(",")


def dump(stage, title, source):
    if dump_enabled(stage):
        print(f"# ---- ASTJAX_DUMP {stage}: {title} ----\n{source}", file=sys.stderr)


def _positional_parameters(fdef):
    """Positional-only and keyword-only parameters as plain ones, in the signature's order:
    calls are bound to the real signature (defaults included) before they reach generated
    code, which takes every parameter positionally (see ``PositionalView``)."""
    a = fdef.args
    a.args = list(a.posonlyargs) + list(a.args) + list(a.kwonlyargs)
    a.posonlyargs, a.kwonlyargs, a.kw_defaults, a.defaults = [], [], [], []


class PositionalView:
    """A user function with keyword-only or positional-only parameters as generated code
    calls it: every parameter positional-or-keyword, in the signature's order. Its ANF is
    the function's own; calls in the user's code still bind to the real signature."""

    def __init__(self, fn):
        self.fn = fn
        self.__name__, self.__qualname__ = fn.__name__, fn.__qualname__
        self.__module__, self.__globals__ = fn.__module__, fn.__globals__
        params = [p.replace(kind=p.POSITIONAL_OR_KEYWORD)
                  for p in inspect.signature(fn).parameters.values()]
        self.__signature__ = inspect.Signature(params, __validate_parameters__=False)

    def __call__(self, *args, **kwargs):
        raise TypeError(f"{self!r} stands for the function in generated code only")

    def __repr__(self):
        return f"<positional view of {self.fn.__qualname__}>"


_VIEWS = {}


def positional_view(fn):
    """``fn`` itself, or its PositionalView if it has keyword-only or positional-only
    parameters (and no *args/**kwargs, which astjax does not compile)."""
    if not isinstance(fn, FunctionType):
        return fn
    kinds = {p.kind for p in inspect.signature(fn).parameters.values()}
    if not kinds & {inspect.Parameter.KEYWORD_ONLY, inspect.Parameter.POSITIONAL_ONLY} or \
            kinds & {inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD}:
        return fn
    view = _VIEWS.get(fn)
    if view is None:
        view = _VIEWS[fn] = PositionalView(fn)
    return view


class VarargView:
    """A function with ``*xs`` as generated code calls it with ``k`` arguments in their
    place: each is a parameter of its own (``xs_0``, ...), and its ANF starts with
    ``xs = (xs_0, ...)``, so ``len(xs)`` is static (as in JAX). Other parameters are taken
    positionally, as in ``PositionalView``."""

    def __init__(self, fn, k):
        self.fn, self.k = fn, k
        self.__name__, self.__qualname__ = fn.__name__, fn.__qualname__
        self.__module__ = getattr(fn, "__module__", None)
        self.__globals__ = fn.__globals__
        self.checkpoint = getattr(fn, "checkpoint", False)  # (reverse mode reads spec.fn's)
        names = Names(to_anf(fn)[1])
        params, self.items = [], []
        for p in inspect.signature(fn).parameters.values():
            if p.kind is p.VAR_POSITIONAL:
                self.at, self.vararg = len(params), p.name
                self.items = [names.fresh(f"{p.name}_") for _ in range(k)]
                params += [inspect.Parameter(n, p.POSITIONAL_OR_KEYWORD) for n in self.items]
            else:
                params.append(p.replace(kind=p.POSITIONAL_OR_KEYWORD))
        self.__signature__ = inspect.Signature(params, __validate_parameters__=False)

    def __call__(self, *args, **kwargs):
        raise TypeError(f"{self!r} stands for the function in generated code only")

    def __repr__(self):
        return f"<{self.k} arguments for *{self.vararg} of {self.fn.__qualname__}>"

    def anf(self):
        parsed, base = to_anf(self.fn)
        fdef = anno.copy_tree(base)
        a = fdef.args
        items = [gast.Name(id=n, ctx=gast.Param(), annotation=None, type_comment=None)
                 for n in self.items]
        a.args[self.at:self.at] = items
        a.vararg = None
        pack = assign(self.vararg, gast.Tuple(elts=[load(n) for n in self.items],
                                             ctx=gast.Load()))
        fdef.body.insert(0, copy_loc(pack, fdef))
        return parsed, fdef


_VARARG_VIEWS = {}


def varargs_view(fn, n):
    """``fn`` itself, or, if it takes ``*args``, its VarargView for ``n`` arguments."""
    if not isinstance(fn, (FunctionType, SyntheticFunction)):
        return fn
    params = inspect.signature(fn).parameters.values()
    if not any(p.kind is p.VAR_POSITIONAL for p in params):
        return fn
    k = n - sum(p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in params)
    if k < 0:
        return fn  # too few arguments: specialize's error
    view = _VARARG_VIEWS.get((fn, k))
    if view is None:
        view = _VARARG_VIEWS[(fn, k)] = VarargView(fn, k)
    return view


_POSITIONAL = {}  # (function, n) -> its wrapper taking n arguments (called_positionally)


def called_positionally(fn, n):
    """``fn`` called as ``fn(*args)`` with ``n`` arguments (jvp(f, primals), an entry point):
    ``fn`` itself, or, when its other parameters take defaults (keyword-only ones), a
    function of those ``n`` that calls it so. Generated code takes every parameter
    positionally, and derivatives differentiate every parameter of the function they get."""
    if not isinstance(fn, FunctionType):
        return fn
    try:
        sig = inspect.signature(fn)
        sig.bind(*range(n))
    except (TypeError, ValueError):
        return fn  # a wrong count: to_anf's error
    if len(sig.parameters) <= n or any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
                                       for p in sig.parameters.values()):
        return fn
    wrapper = _POSITIONAL.get((fn, n))
    if wrapper is None:
        names = ", ".join(list(sig.parameters)[:n])
        wrapper = _POSITIONAL[(fn, n)] = from_source(
            fn.__name__, f"def {fn.__name__}({names}):\n    return _fn({names})\n",
            {"_fn": fn}, to_anf(fn)[0])
    return wrapper


def to_anf(fn):
    """(ParsedFunction, ANF FunctionDef) for ``fn``. The FunctionDef is shared (cached):
    copy it (``anno.clean_copy``) before annotating or changing it."""
    key = fn
    hit = _CACHE.get(key)
    if hit is None:
        if isinstance(fn, SyntheticFunction):
            origin = fn.origin
            parsed = ParsedFunction(fn, fn.fdef, origin.filename, origin.lines)
        elif isinstance(fn, PositionalView):
            return to_anf(fn.fn)
        elif isinstance(fn, VarargView):
            hit = _CACHE[key] = fn.anf()
            return hit
        else:
            parsed = parse_function(fn)
            check_supported(parsed)
        fdef = anno.copy_tree(parsed.node)  # (copy.deepcopy, faster)
        _positional_parameters(fdef)
        names = Names(fdef)
        fdef = Desugar(parsed, names).function(fdef)
        fdef = ANF(parsed, names, local_names(fdef)).function(fdef)
        hit = (parsed, fdef)
        _CACHE[key] = hit
        if dump_enabled("anf"):
            from ..backends.source import unparse
            dump("anf", parsed.node.name, unparse(fdef))
    return hit
