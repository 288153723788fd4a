"""Inline calls to generated functions before emitting Numba code.

Numba pays about a second per compiled function, and a derivative calls one
small VJP rule per op: ``jit(grad(mlp))`` was 28 functions and 29 s to compile.
Inlining every non-recursive callee leaves one function per recursion cycle,
and lets fusion see across what were call boundaries.

Works on annotated copies of the specializations' typed ANF: a callee's locals
get a fresh suffix, its non-static parameters become assignments from the
arguments, and its final ``return v`` becomes ``target = v``. Static
parameters need nothing: their uses are already literals.
"""
import gast

from ...ir import anno
from ...ir.types import Static


def copy_annotated(node):
    """A deep copy of an AST whose annotations point at the copied nodes."""
    pairs = []
    new_root = anno.clean_copy(node, pairs)
    memo = {id(old): new for old, new in pairs}

    def remap(value):
        if isinstance(value, gast.AST):
            return memo.get(id(value), value)
        if isinstance(value, dict):
            return {k: remap(v) for k, v in value.items()}
        if isinstance(value, tuple):
            return tuple(remap(v) for v in value)
        return value

    for old, new in pairs:
        d = getattr(old, anno._KEY, None)
        if d:
            setattr(new, anno._KEY, {k: remap(v) for k, v in d.items()})
    return new_root


def _calls(spec):
    return [anno.get(n, "callee") for n in gast.walk(spec.fdef)
            if isinstance(n, gast.Call) and anno.get(n, "callee") is not None]


def recursive_specs(program):
    """Specializations on a call cycle (they stay functions)."""
    graph = {spec: set(_calls(spec)) for spec in program.specs.values()}
    on_cycle = set()
    for start in graph:
        stack, seen = list(graph[start]), set()
        while stack:
            s = stack.pop()
            if s is start:
                on_cycle.add(start)
                break
            if s in seen:
                continue
            seen.add(s)
            stack.extend(graph.get(s, ()))
    return on_cycle


def _single_final_return(fdef):
    returns = [n for n in gast.walk(fdef) if isinstance(n, gast.Return)]
    return len(returns) == 1 and fdef.body and fdef.body[-1] is returns[0]


class Inliner:
    def __init__(self, program):
        self.program = program
        self.keep = recursive_specs(program)
        self.taken = {n.id for spec in program.specs.values() for n in gast.walk(spec.fdef)
                      if isinstance(n, gast.Name)}
        self.counter = 0

    def inlinable(self, spec):
        return spec not in self.keep and _single_final_return(spec.fdef)

    def run(self, entry):
        """Inline into the entry and into the functions still called after that (recursion
        cycles); return those. (A callee that is inlined is only read: ``expand`` copies
        it.)"""
        live, stack = [], [entry]
        while stack:
            spec = stack.pop()
            if spec in live:
                continue
            live.append(spec)
            spec.fdef.body = self.block(spec.fdef.body, spec)
            stack.extend(_calls(spec))
        return live

    def block(self, stmts, spec):
        out = []
        for s in stmts:
            for field in ("body", "orelse"):
                inner = getattr(s, field, None)
                if isinstance(inner, list) and inner and isinstance(inner[0], gast.stmt):
                    setattr(s, field, self.block(inner, spec))
            callee = None
            if isinstance(s, gast.Assign) and isinstance(s.value, gast.Call):
                callee = anno.get(s.value, "callee")
            if callee is None or not self.inlinable(callee):
                out.append(s)
                continue
            out.extend(self.expand(s, callee))
        return out

    def expand(self, stmt, callee):
        """``stmt``'s call of ``callee`` as a renamed copy of the callee's body, whose own
        calls are then expanded in turn: each statement is copied and renamed once (copying
        a callee's inlined body at every level of a chain of calls took half of the code
        generation of jit(grad(sum of gamma draws)), a chain twelve deep)."""
        body = copy_annotated(callee.fdef.body)
        suffix = self.fresh_suffix()
        filename = anno.get(callee.fdef, "origin_file") or callee.parsed.filename
        builtins = {id(n.func) for s in body for n in gast.walk(s) if isinstance(n, gast.Call)
                    and isinstance(n.func, gast.Name) and anno.get(n, "callee") is None
                    and anno.get(n, "op") is None}  # len(...), tuple(...): keep their names
        for n in (x for s in body for x in gast.walk(s)):
            if isinstance(n, gast.Name) and id(n) not in builtins:
                n.id = f"{n.id}{suffix}"
            if isinstance(n, gast.stmt) and not anno.has(n, "origin_file"):
                anno.set_(n, "origin_file", filename)
            merge = anno.get(n, "merge")
            if merge is not None:  # types where paths meet, by (now renamed) variable
                anno.set_(n, "merge", tuple({f"{k}{suffix}": t for k, t in env.items()}
                                            for env in merge))
        bindings = []
        args = self.bound_args(stmt.value, callee)
        for param, arg_type, arg in zip(callee.fdef.args.args, callee.arg_types, args):
            if isinstance(arg_type, Static):
                if not _is_literal(arg_type.value):
                    continue  # (read as a literal wherever it is read)
                # bound too: the callee may assign it and read it where the paths meet
                value = gast.Constant(value=arg_type.value, kind=None)
                anno.set_(value, "type", arg_type)
            else:
                value = copy_annotated(arg)
            target = gast.Name(id=f"{param.id}{suffix}", ctx=gast.Store(), annotation=None,
                               type_comment=None)
            anno.set_(target, "type", arg_type)
            assign = gast.Assign(targets=[target], value=value, type_comment=None)
            gast.copy_location(assign, stmt)
            bindings.append(assign)
        ret = body.pop()
        result = gast.Assign(targets=[stmt.targets[0]], value=ret.value, type_comment=None)
        gast.copy_location(result, ret)
        anno.set_(result, "origin_file", filename)
        return bindings + self.block(body, callee) + [result]

    def bound_args(self, call, callee):
        import inspect
        sig = inspect.signature(callee.fn)
        ba = sig.bind(*call.args, **{k.arg: k.value for k in call.keywords})
        out = []
        for name in sig.parameters:
            out.append(ba.arguments.get(name))
        return out

    def fresh_suffix(self):
        while True:
            self.counter += 1
            suffix = f"__{self.counter}"
            if not any(suffix in name for name in self.taken):
                return suffix


def _is_literal(value):
    """A number, bool or None: what a generated ``name = value`` can bind."""
    return value is None or type(value) in (bool, int, float)
