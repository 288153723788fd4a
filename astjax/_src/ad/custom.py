"""custom_vjp and custom_jvp: user-supplied derivatives, as in JAX.

Inside compiled code a custom function stands for a small generated wrapper
that calls the primal; the wrapper carries the rule, and reverse mode
(``reverse.vjp_function``) uses it instead of differentiating the primal:

* custom_vjp: ``fwd(x...) -> (out, res)`` then ``bwd(res, g) -> cotangents``;
* custom_jvp: the user's ``jvp(primals, tangents) -> (out, t_out)`` is linear in
  the tangents, so the vjp of ``v -> t_out`` (reverse mode over the user's
  rule, at v = 0) is ``J^T g``. Forward mode (``forward.forward_function``) calls
  the rule itself (``jvp_function``); a custom_vjp function has none there.

Reverse mode's forward sweep takes a custom function's value from its rule
(``primal_function``: the jvp rule's primal output, or fwd's), so a derivative of the
derivative differentiates the rule as written, as JAX does.
"""
import functools
import inspect

import astjax.numpy as jnp

from ..frontend.synthetic import from_source


class _Custom:
    def __init__(self, fun, nondiff_argnums=()):
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = tuple(nondiff_argnums)
        self.rule = None
        self.wrappers = {}  # argument types -> the generated wrapper (one specialization each)

    def __call__(self, *args, **kwargs):
        from ..api import Jitted
        return Jitted(self)(*args, **kwargs)

    def function_for(self, arg_types, program):
        if self.rule is None:
            raise TypeError(f"{self.fun.__name__} is a {type(self).__name__.lower()} function "
                            f"with no rule yet: call .{self.definer}(...) first")
        wrapper = self.wrappers.get(arg_types)
        if wrapper is not None:
            return wrapper
        names = list(inspect.signature(self.fun).parameters)
        source = f"def {self.fun.__name__}({', '.join(names)}):\n" + self._primal_source(names)
        parsed = _origin(self.fun)
        wrapper = from_source(self.fun.__name__, source, {"_primal": self.fun}, parsed)
        wrapper.__signature__ = inspect.signature(self.fun)  # its defaults: f(x) of f(x, k=3.)
        wrapper.custom_rule = self
        self.wrappers[arg_types] = wrapper
        return wrapper

    def _primal_source(self, names):
        return f"    return _primal({', '.join(names)})\n"


_PRIMALS = {}  # id of a Specialization -> (spec, its rule's primal function)


def _cached_primal(spec, body, namespace):
    """A custom function's value as its rule computes it: reverse mode's forward sweep
    calls this, not the function, so that differentiating the derivative again
    differentiates the rule as written, as JAX does (not the rule again)."""
    hit = _PRIMALS.get(id(spec))
    if hit is None or hit[0] is not spec:
        params = ", ".join(_param_names(spec))
        fn = from_source(f"{spec.name}_rule_primal",
                         f"def {spec.name}_rule_primal({params}):\n" + body, namespace,
                         spec.parsed)
        _PRIMALS[id(spec)] = hit = (spec, fn)
    return hit[1]


_SPLITS = {}  # (id of a Specialization, live) -> (spec, its split rule or None)


def _split_pair(spec, params, namespace, fwd_body, bwd_body):
    """``<name>_fwd(x...)`` and ``<name>_bwd(x..., res, g)`` with these bodies."""
    args = ", ".join(params)
    fwd = from_source(f"{spec.name}_fwd", f"def {spec.name}_fwd({args}):\n" + fwd_body,
                      namespace, spec.parsed)
    bwd = from_source(f"{spec.name}_bwd", f"def {spec.name}_bwd({args}, res, g):\n" + bwd_body,
                      namespace, spec.parsed)
    return fwd, bwd


def _cached_split(spec, live, make):
    """``make()``'s (fwd, bwd) for ``spec``, made once. A rule that calls the function on
    the tangents reaches here again while its split is made: it gets None (no split)."""
    key = (id(spec), None if live is None else frozenset(live))
    hit = _SPLITS.get(key)
    if hit is None or hit[0] is not spec:
        _SPLITS[key] = (spec, None)
        _SPLITS[key] = hit = (spec, make())
    return hit[1]


def _param_names(spec):
    """The parameters of the functions written from a rule: a0, a1, ... (the user's own
    names could be those of the generated code's locals: g, r, cts, t_x)."""
    return [f"a{i}" for i in range(len(spec.fdef.args.args))]


def _tup(names):
    return "(" + ", ".join(names) + ("," if len(names) == 1 else "") + ")"


def _origin(fn):
    from ..frontend.parse import parse_function
    from ..frontend.synthetic import SyntheticFunction
    if isinstance(fn, SyntheticFunction):  # (ad/custom_closures.py: a generated primal)
        return fn.origin
    return parse_function(fn)


class custom_vjp(_Custom):
    """``@custom_vjp`` then ``f.defvjp(fwd, bwd)``."""
    definer = "defvjp"

    def defvjp(self, fwd, bwd):
        self.rule = (fwd, bwd)
        return self

    def split_functions(self, spec, live=None):
        """``<name>_fwd(x...) -> (out, residuals)``, ``<name>_bwd(x..., residuals, g) ->
        cotangents``: the caller's forward sweep runs ``fwd`` once (as JAX does), where
        ``vjp_function`` runs it again in the backward sweep."""
        def make():
            params = _param_names(spec)
            namespace = {"_fwd": self.rule[0], "_bwd": self.rule[1]}
            fixed = [params[i] for i in self.nondiff_argnums]
            diff = [p for i, p in enumerate(params) if i not in self.nondiff_argnums]
            cts = [f"cts[{diff.index(p)}]" if p in diff else _nondiff_cotangent(t, p, namespace)
                   for p, t in zip(params, spec.arg_types)]
            return _split_pair(spec, params, namespace,
                               f"    return _fwd({', '.join(params)})\n",
                               f"    cts = _bwd({', '.join(fixed + ['res', 'g'])})\n"
                               f"    return {_tup(cts)}\n")
        return _cached_split(spec, None, make)

    def primal_function(self, spec):
        """``<name>_rule_primal(x...)``: the value as ``fwd`` computes it."""
        params = ", ".join(_param_names(spec))
        return _cached_primal(spec, f"    return _fwd({params})[0]\n", {"_fwd": self.rule[0]})

    def vjp_function(self, spec, into):
        fwd, bwd = self.rule
        params = _param_names(spec)
        diff = [p for i, p in enumerate(params) if i not in self.nondiff_argnums]
        fixed = [params[i] for i in self.nondiff_argnums]
        namespace = {"_fwd": fwd, "_bwd": bwd}
        cts = ", ".join(f"cts[{diff.index(p)}]" if p in diff else
                        _nondiff_cotangent(t, p, namespace)
                        for p, t in zip(params, spec.arg_types))
        source = (f"def {spec.name}_vjp({', '.join(params)}, g):\n"
                  f"    r = _fwd({', '.join(params)})\n"
                  f"    cts = _bwd({', '.join(fixed + ['r[1]', 'g'])})\n"
                  f"    return r[0], ({cts}{',' if len(params) == 1 else ''})\n")
        return from_source(f"{spec.name}_vjp", source, namespace, spec.parsed, into)


class custom_jvp(_Custom):
    """``@custom_jvp`` then ``@f.defjvp`` on ``jvp(primals, tangents) -> (out, t_out)``."""
    definer = "defjvp"
    follows_live = True  # (see vjp_function)

    def defjvp(self, jvp):
        self.rule = jvp
        return jvp

    def defjvps(self, *jvps):
        """One rule per argument, ``jvps[i](t_i, out, *primals)`` (None: no tangent), their
        tangents summed, as JAX's ``defjvps``."""
        if self.nondiff_argnums:
            raise TypeError("Can't use ``defjvps`` with ``nondiff_argnums``.")
        n = len(inspect.signature(self.fun).parameters)
        jvps = jvps[:n]  # as JAX's zip(tangents, jvps): a missing rule counts as None
        ps, ts = [f"p{i}" for i in range(n)], [f"t{i}" for i in range(n)]
        terms = [f"_j{i}({ts[i]}, out, {', '.join(ps)})" for i, j in enumerate(jvps) if j]
        total = "_tree_map(jnp.zeros_like, out)" if not terms else terms[0]
        for term in terms[1:]:
            total = f"_tree_map(_add, {total}, {term})"
        from astjax.tree_util import tree_map
        namespace = {"_f": self, "_tree_map": tree_map, "_add": _add, "jnp": jnp,
                     **{f"_j{i}": j for i, j in enumerate(jvps) if j}}
        source = (f"def {self.fun.__name__}_jvps(primals, tangents):\n"
                  f"    {', '.join(ps)}, = primals\n"
                  f"    {', '.join(ts)}, = tangents\n"
                  f"    out = _f({', '.join(ps)})\n"
                  f"    return out, {total}\n")
        self.rule = from_source(f"{self.fun.__name__}_jvps", source, namespace,
                                _origin(self.fun))

    def rule_call(self, params, tangents):
        """Source calling the rule as JAX does: ``nondiff_argnums`` arguments first, then
        the primals and the tangents of the others."""
        fixed = [p for i, p in enumerate(params) if i in self.nondiff_argnums]
        diff = [i for i in range(len(params)) if i not in self.nondiff_argnums]
        return f"_rule({', '.join(fixed)}{', ' if fixed else ''}" \
               f"{_tup([params[i] for i in diff])}, {_tup([tangents[i] for i in diff])})"

    def vjp_function(self, spec, into, live=None):
        """``live``: the paths of the output the caller reads (None: all); the tangent
        map is differentiated for those alone, so the rule's terms for the others are not
        multiplied by their zero cotangents (inf * 0 = nan in sici's at 0)."""
        split = self.split_functions(spec, live)
        if split is not None:  # the value from the rule's forward sweep, not the rule again
            params = ", ".join(_param_names(spec))
            return from_source(f"{spec.name}_vjp", f"def {spec.name}_vjp({params}, g):\n"
                               f"    p = _fwd({params})\n"
                               f"    return p[0], _bwd({params}, p[1], g)\n",
                               {"_fwd": split[0], "_bwd": split[1]}, spec.parsed, into)
        from . import adlib
        from .api import _zeros_like_expr
        from .reverse import vjp_function
        params = _param_names(spec)
        n = len(params)
        tangents = [f"t_{p}" for p in params]
        # the tangent map v -> t_out, differentiated with respect to v
        tangent_map = from_source(
            f"{spec.name}_tangent_map",
            f"def tangent_map({', '.join(params + tangents)}):\n"
            f"    return {self.rule_call(params, tangents)}[1]\n",
            {"_rule": self.rule}, spec.parsed)
        program = spec.program
        namespace = {"_map_vjp": None, "_primal": self.primal_function(spec), "_ajx": adlib}
        zeros = [_zeros_like_expr(t, p, namespace) for p, t in zip(params, spec.arg_types)]
        map_spec = program.specialize(tangent_map, spec.arg_types + spec.arg_types)
        cts = [_nondiff_cotangent(t, p, namespace) if k in self.nondiff_argnums
               else f"r[1][{n + k}]" for k, (p, t) in enumerate(zip(params, spec.arg_types))]
        source = (f"def {spec.name}_vjp({', '.join(params)}, g):\n"
                  f"    r = _map_vjp({', '.join(params + zeros)}, g)\n"
                  f"    return _primal({', '.join(params)}), {_tup(cts)}\n")
        # only the tangents' cotangents: at v = 0 the primals' are zero, and a rule calling
        # the function (ans = f(x); ans * t) would differentiate this rule again, forever
        namespace["_map_vjp"] = vjp_function(map_spec, live, wrt=range(n, 2 * n))
        return from_source(f"{spec.name}_vjp", source, namespace, spec.parsed, into)

    def split_functions(self, spec, live=None):
        """``<name>_fwd(x...) -> (out, residuals)``, ``<name>_bwd(x..., residuals, g) ->
        cotangents``: the two sweeps of the rule ``(x, v) -> (out, t_out)`` differentiated
        in ``v`` at ``v = 0``, so that the caller's forward sweep computes ``out`` once and
        the backward sweep reads what it kept (``vjp_function`` runs the rule again, which
        for a rejection sampler's draw compiles the sampler twice more). None where that
        derivative does not split (the caller then uses ``vjp_function``)."""
        def make():
            from . import adlib
            from .api import _zeros_like_expr
            from .reverse import live_paths, split_vjp_functions
            params = _param_names(spec)
            n = len(params)
            tangents = [f"t_{p}" for p in params]
            both = from_source(f"{spec.name}_rule_map",
                               f"def rule_map({', '.join(params + tangents)}):\n"
                               f"    return {self.rule_call(params, tangents)}\n",
                               {"_rule": self.rule}, spec.parsed)
            map_spec = spec.program.specialize(both, spec.arg_types + spec.arg_types)
            # (only t_out's live part, with respect to v alone: see vjp_function)
            out_live = {(1,)} if live is None else {(1,) + p for p in live_paths(live)}
            split = split_vjp_functions(map_spec, out_live, range(n, 2 * n))
            if split is None:
                return None
            namespace = {"_map_fwd": split[0], "_map_bwd": split[1], "_ajx": adlib}
            zeros = [_zeros_like_expr(t, p, namespace) for p, t in zip(params, spec.arg_types)]
            cts = [_nondiff_cotangent(t, p, namespace) if k in self.nondiff_argnums
                   else f"r[{n + k}]" for k, (p, t) in enumerate(zip(params, spec.arg_types))]
            return _split_pair(spec, params, namespace,
                               f"    p = _map_fwd({', '.join(params + zeros)})\n"
                               f"    return p[0][0], p[1]\n",
                               f"    r = _map_bwd({', '.join(params + zeros)}, res, (None, g))\n"
                               f"    return {_tup(cts)}\n")
        return _cached_split(spec, live, make)

    def primal_function(self, spec):
        """``<name>_rule_primal(x...)``: the value as the rule computes it (its primal
        output, with zero tangents; the rest is dead code)."""
        from . import adlib
        from .api import _zeros_like_expr
        params = _param_names(spec)
        namespace = {"_rule": self.rule, "_ajx": adlib}
        zeros = [_zeros_like_expr(t, p, namespace) for p, t in zip(params, spec.arg_types)]
        return _cached_primal(spec, f"    return {self.rule_call(params, zeros)}[0]\n",
                              namespace)

    def jvp_function(self, spec, into):
        from . import adlib
        from .api import _zeros_like_expr
        params = _param_names(spec)
        tangents = [f"t_{p}" for p in params]
        namespace = {"_rule": self.rule, "_ajx": adlib}
        lines = [f"def {spec.name}_jvp({', '.join(params + tangents)}):"]
        for p, t_p, t in zip(params, tangents, spec.arg_types):
            zeros = _zeros_like_expr(t, p, namespace)
            if zeros != "None":  # a constant's tangent (None here) reaches the rule as zeros
                lines.append(f"    {t_p} = {zeros} if {t_p} is None else {t_p}")
        lines.append(f"    return {self.rule_call(params, tangents)}")
        return from_source(f"{spec.name}_jvp", "\n".join(lines) + "\n", namespace,
                           spec.parsed, into)


def _nondiff_cotangent(t, p, namespace):
    """Source of a nondiff argument's cotangent: None, or for a container (the closure
    tuple of a nested function, ad/custom_closures.py) a container of zeros, whose
    elements the caller reads."""
    from ..ir.types import keyed_children
    if keyed_children(t) is None:
        return "None"
    from . import adlib
    from .api import _zeros_like_expr
    namespace.setdefault("_ajx", adlib)
    return _zeros_like_expr(t, p, namespace)


def _add(a, b):
    return a + b


class BatchedCustomVjp:
    """The rule of a custom_vjp function batched by vmap: fwd and bwd under vmap, as JAX
    batches them. ``in_axes``/``out_axes``: vmap's axes (pytree prefixes) of the arguments
    and the output; ``args``, ``out``: each argument's and the output's (type, bt). fwd's
    residuals and bwd's cotangents carry the batch; an argument leaf without it is shared
    by every example: its cotangent is summed over the batch. An output leaf without it
    is too: each example's bwd gets its share of its cotangent (JAX 0.10.2 gives each the
    whole, counting it once per example)."""

    def __init__(self, custom, in_axes, out_axes, args, out):
        from ..batching.api import Vmapped
        self.custom, self.in_axes, self.out_axes = custom, in_axes, out_axes
        self.args, self.out = args, out
        self.fwd = Vmapped(custom.rule[0], in_axes=in_axes, out_axes=(out_axes, 0))

    def vjp_function(self, spec, into):
        from ..batching.api import Vmapped
        bwd = self.custom.rule[1]
        params = _param_names(spec)
        fixed_at = self.custom.nondiff_argnums
        namespace = {"_summed": _summed}
        diff = [p for i, p in enumerate(params) if i not in fixed_at]
        cts = [_nondiff_cotangent(t, p, namespace) if p not in diff else
               _summed_unbatched(t, b, f"cts[{diff.index(p)}]", namespace)
               for p, (t, b) in zip(params, self.args)]
        fixed = [params[i] for i in fixed_at]
        out_type, out_bt = self.out
        g = "g"
        if not all_batched(out_bt):
            size = next(f"{e}.shape[0]" for p, (t, b) in zip(params, self.args)
                        for e in _batched_leaves(t, b, p))
            namespace["_share"] = _share
            g = _shared_unbatched(out_type, out_bt, "g", size, namespace)
        source = (f"def {spec.name}_vjp({', '.join(params)}, g):\n"
                  f"    r = _fwd({', '.join(params)})\n"
                  f"    cts = _bwd({', '.join(fixed + ['r[1]', g])})\n"
                  f"    return r[0], ({', '.join(cts)}{',' if len(params) == 1 else ''})\n")
        namespace["_fwd"] = self.fwd
        namespace["_bwd"] = Vmapped(bwd, in_axes=tuple(self.in_axes[i] for i in fixed_at) +
                                    (0, self.out_axes))
        return from_source(f"{spec.name}_vjp", source, namespace, spec.parsed, into)

    def primal_function(self, spec):
        params = ", ".join(_param_names(spec))
        return _cached_primal(spec, f"    return _fwd({params})[0]\n", {"_fwd": self.fwd})


def all_batched(b):
    return b is True or not isinstance(b, bool) and all(all_batched(x) for x in b)


def _batched_leaves(t, b, expr):
    """Source of the leaves of ``expr`` (type ``t``, bt ``b``) that carry the batch."""
    from ..ir.types import ListType, keyed_children
    if b is True:
        pairs = keyed_children(t)
        if pairs is None:
            yield f"{expr}[0]" if isinstance(t, ListType) else expr
        for k, c in pairs or ():
            yield from _batched_leaves(c, True, f"{expr}[{k!r}]")
    elif b is not False:
        for (k, c), x in zip(keyed_children(t) or (), b):
            yield from _batched_leaves(c, x, f"{expr}[{k!r}]")


def _shared_unbatched(t, b, expr, size, namespace):
    """Source of the cotangent ``expr`` of an output of type ``t`` batched as ``b``: each
    leaf without the batch divided by the batch size ``size``."""
    from ..ir.trees import container_source, namespace_ref
    from ..ir.types import keyed_children
    if all_batched(b):
        return expr
    if isinstance(b, bool):
        return f"_share({expr}, {size})"
    return container_source(t, [_shared_unbatched(c, x, f"{expr}[{k!r}]", size, namespace)
                                for (k, c), x in zip(keyed_children(t), b)],
                            namespace_ref(namespace))


def _share(g, n):
    """One example's share of the cotangent of an output every example shares."""
    if g is None:
        return None
    return g / n


def _summed_unbatched(t, b, expr, namespace):
    """Source of the cotangent ``expr`` of an argument of type ``t`` batched as ``b`` (a
    batched bwd gives every leaf the batch): the leaves without it summed over it."""
    from ..ir.trees import container_source, namespace_ref
    from ..ir.types import keyed_children
    if isinstance(b, bool):
        return expr if b else f"_summed({expr})"
    if all(x is True for x in b):
        return expr
    pairs = keyed_children(t)
    return container_source(t, [_summed_unbatched(c, x, f"{expr}[{k!r}]", namespace)
                                for (k, c), x in zip(pairs, b)], namespace_ref(namespace))


class BatchedCustomJvp:
    """The rule of a custom_jvp function batched by vmap: the user's jvp rule (and the
    primal) under vmap; both modes then proceed as for custom_jvp."""

    def __init__(self, custom, in_axes, out_axes):
        from ..batching.api import Vmapped
        fixed = custom.nondiff_argnums
        diff = tuple(a for i, a in enumerate(in_axes) if i not in fixed)
        self.custom = custom
        self.batched = custom_jvp.__new__(custom_jvp)
        self.batched.nondiff_argnums = fixed
        self.batched.fun = Vmapped(custom.fun, in_axes=in_axes, out_axes=out_axes)
        self.batched.rule = Vmapped(custom.rule,
                                    in_axes=tuple(in_axes[i] for i in fixed) + (diff, diff),
                                    out_axes=(out_axes, out_axes))

    follows_live = True

    def vjp_function(self, spec, into, live=None):
        return self.batched.vjp_function(spec, into, live)

    def split_functions(self, spec, live=None):
        return self.batched.split_functions(spec, live)

    def jvp_function(self, spec, into):
        return self.batched.jvp_function(spec, into)

    def primal_function(self, spec):
        return self.batched.primal_function(spec)


class UnbatchableCustom:
    """A custom function vmap batched in a way its rule cannot follow (yet): differentiating
    it raises instead of silently differentiating the primal."""

    def __init__(self, what):
        self.what = what

    def vjp_function(self, spec, into):
        raise NotImplementedError(f"differentiating {self.what} under vmap is not supported "
                                  f"yet; apply grad inside the vmap (vmap(grad(f)))")


def _summed(ct):
    """The cotangent of an argument every example shares: summed over the batch."""
    if ct is None:
        return None
    return jnp.sum(ct, axis=0)
