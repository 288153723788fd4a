"""custom_jvp / custom_vjp of a nested function that captured run-time values, defined and
called inside compiled code:

    def f(x, y):
        g = astjax.custom_jvp(lambda z: jnp.sin(z) * y)
        g.defjvp(lambda p, t: (g_primal..., jnp.cos(p[0]) * y * t[0]))
        return g(x)

The custom function is built when the code is generated, while the closures' captured
values exist only at run time. So:

* ``custom_jvp(g)`` is, as ``vmap(g)`` is (ir/closure_transforms.py), a closure of g's
  captured values whose lifted function calls a custom function ``C`` of g's lifted one;
* ``h.defjvp(rule)`` (``defvjp(fwd, bwd)``) records on ``C`` the names of the variables
  holding the rules, and passes the rule on (``defjvp`` returns it, as JAX's);
* a call ``h(x)`` becomes a call of a custom function ``C2(h, rule, x)`` whose closure
  arguments are nondiff arguments (``nondiff_argnums``), whose primal calls g's lifted
  function, and whose rule calls the user's rule closure. The rule reads the captured
  values as constants, so where a derivative would flow into one of them (it depends on
  a differentiated input), reverse and forward mode raise a located error, as JAX does
  (``refuse_captured_derivative``).

Inside the rule itself a call of the custom function is a call of its primal (JAX's rules
call the function for its value); elsewhere than where the rule was defined (the function
passed to another one), a located error.
"""
import re

import gast

from ..errors import TypeCheckError
from ..frontend.synthetic import from_source
from ..ir import anno
from .analysis import float_leaves
from .custom import custom_jvp, custom_vjp

_RULE_METHODS = {"defjvp": custom_jvp, "defvjp": custom_vjp}


def custom_of_closure(lifted):
    """The custom function a closure's lifted function calls (``custom_jvp(g)`` of a
    nested g, see above), else None."""
    namespace = getattr(lifted, "__globals__", None) or {}
    custom = namespace.get("_astjax_transformed")
    return custom if isinstance(custom, (custom_jvp, custom_vjp)) else None


def define_rule(typer, node, custom, attr, args, kwargs):
    """``h.defjvp(rule)`` / ``h.defvjp(fwd, bwd)`` of such a closure ``h``."""
    n = 1 if isinstance(custom, custom_jvp) else 2
    if _RULE_METHODS.get(attr) is not type(custom) or kwargs or len(args) != n:
        raise typer.error(node, f"{type(custom).__name__} of a nested function in compiled "
                          f"code takes its rule{'s' * (n > 1)} by "
                          f"{'defjvp(jvp)' if n == 1 else 'defvjp(fwd, bwd)'} only")
    from ..ir.infer import closure_function
    from ..ir.types import Static
    rules, functions = [], set()
    for a, t in zip(node.args, args):
        if isinstance(t, Static):  # a function of constants only: a constant
            _shared(t.value)
            rules.append(("static", t))
            functions.add(closure_function(t) or t.value)
        elif isinstance(a, gast.Name):
            rules.append(("name", a.id, t))
            functions.add(closure_function(t))
        else:
            raise typer.error(node, f"{attr}(): pass the rule as a variable")
    custom.closure_rules = tuple(rules)
    # (where the rules' variables are in scope, and the rules themselves)
    custom.rule_home, custom.rule_functions = typer.parsed.fn, functions
    if n == 1:  # the rule itself, as JAX's defjvp returns it (@h.defjvp on a def)
        return typer.call_generated(node, "def defjvp_rule(_r):\n    return _r\n",
                                    node.args, args)
    return typer.call_generated(node, "def defvjp_rules(_f, _b):\n    return None\n",
                                node.args, args)


def call(typer, node, custom, t, args, kwargs, env):
    """``h(x...)`` of such a closure (``node``: ``h._astjax_closure_call(h, x...)``)."""
    recorded = getattr(custom, "closure_rules", None)
    if recorded is None:
        raise typer.error(node, f"{custom.fun.__name__} is a {type(custom).__name__} function "
                          f"with no rule yet: call .{custom.definer}(...) first")
    where = next((f for f in _lineage(typer.parsed.fn)
                  if f in custom.rule_functions or f is custom.rule_home), None)
    if where in custom.rule_functions:
        # inside a rule (it reads the function for its value): the primal
        return typer.user_call(node, custom.fun, args, kwargs)
    if where is None or any(
            r[0] == "name" and (r[1] not in env or env[r[1]] != r[2]) for r in recorded):
        raise typer.error(node, f"{custom.fun.__name__}: a {type(custom).__name__} function "
                          f"of a nested function can be called only in the function that "
                          f"defines its rule, after that, and in the rule itself")
    nodes = [gast.Name(id=r[1], ctx=gast.Load(), annotation=None, type_comment=None)
             if r[0] == "name" else gast.Constant(value=r[1].value, kind=None)
             for r in recorded]
    rules = [typer.atom(n, env) for n in nodes]
    with_rules = _with_rules(custom, tuple(rules))
    node.func = gast.Constant(value=with_rules, kind=None)
    node.args = node.args[:1] + nodes + node.args[1:]
    return typer.user_call(node, with_rules, [args[0]] + rules + list(args[1:]), kwargs)


def refuse_captured_derivative(mode, s, callee, active):
    """Raise where call ``s`` of such a custom function passes a closure (of the function or
    its rules) holding a value in ``active`` (one a derivative flows into): the rule reads
    captured values as constants, so that derivative would silently be 0 (JAX raises
    UnexpectedTracerError)."""
    custom = getattr(callee.fn, "custom_rule", None)
    custom = getattr(custom, "custom", custom)  # (batched by vmap: the rule it batches)
    n = getattr(custom, "closure_arity", 0)
    if n and any(isinstance(a, gast.Name) and a.id in active() and
                 any(True for _ in float_leaves(anno.get(a, "type"))) for a in s.value.args[:n]):
        name = re.sub(r"_def\d*$", "", custom.fun.__name__.removesuffix("_custom"))
        raise mode.parsed.error(s, f"{name}: a derivative flows into a value that this "
                                f"{type(custom).__name__} function (of a nested function) "
                                f"or its rule captured, which the rule reads as a constant "
                                f"(JAX raises UnexpectedTracerError); pass that value as an "
                                f"argument of the custom function instead", TypeCheckError)


def _lineage(fn):
    """``fn``, then the functions it was made from: a generated function's (a derivative's)
    origin, a nested function's enclosing one."""
    seen = []
    while fn is not None and not any(fn is f for f in seen):
        seen.append(fn)
        yield fn
        fn = getattr(getattr(fn, "origin", None), "fn", None)


def _with_rules(custom, rule_types):
    """The custom function ``C2(closure, rules..., x...)`` (one per rule types)."""
    cache = custom.__dict__.setdefault("closure_rule_customs", {})
    hit = cache.get(rule_types)
    if hit is not None:
        return hit
    lifted = custom.fun  # g's lifted function: (closure, x...)
    origin = lifted.origin
    params = [a.id for a in lifted.fdef.args.args[1:]]
    xs = [f"a{k}" for k in range(len(params))]
    extra = ["_c"] + (["_r"] if isinstance(custom, custom_jvp) else ["_f", "_b"])
    user_fixed = [k - 1 for k in custom.nondiff_argnums if k > 0]  # (0: the closure)
    fixed = [xs[k] for k in user_fixed]
    primal = from_source(f"{lifted.__name__.strip('_')}_custom",
                         f"def {lifted.__name__.strip('_')}_custom({', '.join(extra + xs)}):\n"
                         f"    return _lifted(_c, {', '.join(xs)})\n",
                         {"_lifted": lifted}, origin)
    nondiff = tuple(range(len(extra))) + tuple(len(extra) + k for k in user_fixed)
    made = type(custom)(primal, nondiff_argnums=nondiff)
    pre = ", ".join(extra + fixed)
    if isinstance(custom, custom_jvp):
        made.rule = from_source(
            "jvp_rule", f"def jvp_rule({pre}, primals, tangents):\n"
                        f"    return _r({''.join(p + ', ' for p in fixed)}primals, tangents)\n",
            {}, origin)
    else:
        made.rule = (
            from_source("fwd_rule", f"def fwd_rule({', '.join(extra + xs)}):\n"
                                    f"    return _f({', '.join(xs)})\n", {}, origin),
            from_source("bwd_rule", f"def bwd_rule({pre}, res, g):\n"
                                    f"    return _b({''.join(p + ', ' for p in fixed)}res, g)\n",
                        {}, origin))
    made._astjax_takes_closures = True  # (its first arguments are closures)
    made.closure_arity = len(extra)  # (... this many: refuse_captured_derivative)
    made.__deepcopy__ = lambda memo: made  # (a constant of the code: copies are itself)
    cache[rule_types] = made
    return made


def _shared(value):
    """A constant the call passes: derivatives copy the code (deepcopy), and the copy of a
    generated function (a lifted def of constants) must be the function itself."""
    from ..frontend.synthetic import SyntheticFunction
    if isinstance(value, SyntheticFunction):
        value.__deepcopy__ = lambda memo: value
    elif isinstance(value, tuple):
        for v in value:
            _shared(v)
