"""``print_saved_residuals(f, *args)``: what the reverse pass of ``f`` keeps from its forward
sweep (JAX's ``jax.ad_checkpoint.print_saved_residuals``).

astjax's are the residuals of ``f``'s split derivative (``reverse.split_vjp_functions``):
the values ``<f>_fwd`` returns for ``<f>_bwd``, plus the arguments the backward sweep reads.
The forward sweep runs on ``args`` (python backend) so that shapes are concrete. The lines
read as JAX's (``f32[3] output of sin from file:line (f)``), but they name the generated
code's values: a loop's tapes (one value per trip), a callee's residuals, the output itself
where its cotangent is shaped like it, so the list differs from JAX's for the same ``f``.
"""
import inspect

import gast
import numpy as np

from .. import tree_util
from ..api import Compiled, Transformed
from ..ir.types import type_of_value
from .reverse import split_vjp_functions

_OPS = {gast.Add: "add", gast.Sub: "sub", gast.Mult: "mul", gast.Div: "div",
        gast.Pow: "pow", gast.MatMult: "matmul", gast.USub: "neg", gast.FloorDiv: "floordiv",
        gast.Mod: "rem"}


class _ForwardSweep:
    """The compile target: ``f``'s ``*_fwd`` at the argument types (what it found is kept
    for the descriptions); ``f`` itself where its derivative is not split."""

    def __init__(self, fun):
        self.target = Transformed(fun)
        self.spec = self.fwd = self.bwd = None

    def function_for(self, arg_types, program):
        fn = self.target.function_for(arg_types, program)
        self.spec = program.specialize(fn, arg_types)
        split = split_vjp_functions(self.spec)
        if split is None:  # a checkpoint or custom rule: the backward sweep starts again
            if not (getattr(self.spec.fn, "checkpoint", False) or
                    getattr(self.spec.fn, "custom_rule", None) is not None):
                raise NotImplementedError(
                    f"print_saved_residuals: the derivative of {fn.__name__} is not split "
                    f"into a forward and a backward sweep, so astjax cannot list its residuals")
            return fn
        self.fwd, self.bwd = split
        return self.fwd


def saved_residuals(f, *args, **kwargs):
    """[(value, description)] of what ``f``'s reverse pass saves, at ``args``."""
    signature = inspect.signature(f)
    bound = signature.bind(*args, **kwargs)
    bound.apply_defaults()
    values = tuple(bound.args)
    target = _ForwardSweep(f)
    compiled = Compiled(target, tuple(type_of_value(v) for v in values), "python",
                        parallel=False)  # (forced: not from the source cache)
    out = compiled.run(values)
    spec = target.spec
    params = [a.id for a in spec.fdef.args.args]
    if target.fwd is None:  # the arguments are all the backward sweep starts from
        return [(v, f"from the argument {p}") for p, v in zip(params, values)
                if tree_util.tree_leaves(v)]
    read = {n.id for n in gast.walk(target.bwd.fdef)
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load)}
    saved = [(v, f"from the argument {p}") for p, v in zip(params, values)
             if p in read and tree_util.tree_leaves(v)]
    where = _Describer(target.fwd.fdef, spec.parsed.filename, spec.fn.__name__)
    names = [e.id for e in target.fwd.fdef.body[-1].value.elts[1].elts]
    for name, value in zip(names, out[1]):
        text = where.describe(name)
        # a tape holds one value per trip; a callee's residuals are a tuple
        loop = where.loop_of(name)  # (None: a tape pushed in a branch, not in a loop)
        trips = enumerate(value) if isinstance(value, list) and loop else [(None, value)]
        for k, v in trips:
            at = "" if k is None else f", trip {k} of the loop at {loop}"
            saved += [(leaf, text + at) for leaf in tree_util.tree_leaves(v)]
    return saved


def print_saved_residuals(f, *args, **kwargs):
    """Print what differentiating ``f`` at ``args`` saves from the forward sweep for the
    backward one, a line per value (see this module's docstring for how it differs from
    JAX's list)."""
    for value, text in saved_residuals(f, *args, **kwargs):
        print(f"{_shape_text(value)} {text}")


def _shape_text(value):
    if isinstance(value, (bool, int, float, complex)):
        return type(value).__name__
    a = np.asarray(value)
    kind = {"f": "f", "i": "i", "u": "u", "c": "c", "b": "bool"}.get(a.dtype.kind, a.dtype.name)
    bits = "" if kind == "bool" else str(a.dtype.itemsize * 8)
    return f"{kind}{bits}[{','.join(map(str, a.shape))}]"


class _Describer:
    """Where each name in a ``*_fwd`` function's body comes from."""

    def __init__(self, fdef, filename, fname):
        self.filename, self.fname = filename, fname
        self.assigned, self.appended, self.loops = {}, {}, {}  # name -> [Assign], ...
        self._scan(fdef.body, None)

    def _scan(self, stmts, loop):
        for s in stmts:
            if isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name):
                self.assigned.setdefault(s.targets[0].id, []).append(s)
                self.loops[s.targets[0].id] = loop
            elif isinstance(s, gast.Expr) and isinstance(s.value, gast.Call) and \
                    isinstance(s.value.func, gast.Attribute) and s.value.func.attr == "append":
                tape = s.value.func.value.id
                self.appended[tape], self.loops[tape] = s, loop
            for field in ("body", "orelse"):
                if isinstance(getattr(s, field, None), list):
                    self._scan(getattr(s, field), s if isinstance(s, (gast.For, gast.While))
                               else loop)

    def at(self, node):
        return f"from {self.filename}:{node.lineno} ({self.fname})"

    def loop_of(self, tape):
        loop = self.loops.get(tape)
        return f"{self.filename}:{loop.lineno}" if loop is not None else None

    def describe(self, name):
        if name in self.appended:  # a tape: what was pushed
            push = self.appended[name]
            item = push.value.args[0]
            if isinstance(item, gast.Name) and len(self.assigned.get(item.id, ())) > 1:
                return f"the value of {item.id} {self.at(push)}"  # (before it changes)
            return self.describe(item.id) if isinstance(item, gast.Name) else "a value"
        stmts = self.assigned.get(name)
        if not stmts:
            return f"the value {name}"
        if name.startswith("trips") and len(stmts) > 1:
            return f"the trip count of the loop at {self.loop_of(name)}"
        # (set in several places, in branches: each, as the run may have taken either)
        return " or ".join(dict.fromkeys(self._describe(name, s) for s in stmts))

    def _describe(self, name, s):
        v = s.value
        if isinstance(v, gast.Subscript) and isinstance(v.value, gast.Name) and \
                isinstance(v.slice, gast.Constant) and v.slice.value in (0, 1):
            call = self.assigned.get(v.value.id, [None])[-1]
            callee = _callee_name(call.value) if call is not None and \
                isinstance(call.value, gast.Call) else ""
            if "_fwd" in callee:  # pair = g_fwd(...): g's output and residuals
                callee = callee[:callee.rfind("_fwd")]
                return f"output of {callee} {self.at(s)}" if v.slice.value == 0 else \
                    f"saved by {callee}, called {self.at(s)}"
        if isinstance(v, gast.Call):
            return f"output of {_callee_name(v)} {self.at(s)}"
        if isinstance(v, (gast.BinOp, gast.UnaryOp)):
            return f"output of {_OPS.get(type(v.op), type(v.op).__name__.lower())} {self.at(s)}"
        if isinstance(v, gast.Subscript):
            return f"output of indexing {self.at(s)}"
        if isinstance(v, gast.Name):
            return self.describe(v.id)
        return f"the value of {name} {self.at(s)}"


def _callee_name(call):
    f = call.func
    if isinstance(f, gast.Attribute):
        return f.attr
    if isinstance(f, gast.Name):
        return f.id
    return getattr(getattr(f, "value", None), "__name__", "a call")
