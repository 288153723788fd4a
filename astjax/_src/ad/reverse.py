"""Reverse mode as a source rewrite of typed A-normal form.

From one specialization of ``f(x1, ..., xn)`` it writes a new function
``f_vjp(x1, ..., xn, g) -> (f(x...), (dx1, ..., dxn))``:

* a forward sweep: f's own statements, plus, for variables that are
  overwritten (assigned twice, or in a loop), a push of the values the
  backward sweep will need onto one list per variable, a trip counter per
  loop and the branch conditions;
* a backward sweep: the statements in reverse, each replaced by a call of its
  op's VJP rule (a jnp function, see rules.py) or of the callee's own
  ``*_vjp`` function, accumulating cotangents ``d_<name>``; loops run their
  trip count backwards, branches take the recorded condition.

Cotangents of containers (tuples, dicts, namedtuples, registered classes) are kept
per leaf. Everything emitted is ordinary Python with registered ops, so the result is
typed and compiled like user code and can be differentiated again.
"""
import inspect

import gast

from ..errors import TypeCheckError, checks_at_user_call
from ..frontend.naming import Names, assign, const, load, store
from ..frontend.synthetic import SyntheticFunction, function_def
from ..ir import anno, trees
from ..ir.types import ArrayType, SequenceType, Static, TreeType
from . import adlib, zero_cotangents
from .analysis import (activity, changed_list_arguments, changed_list_params, child_key,
                       float_leaves, holds, holds_list, liveness, overwritten, runtime_index,
                       static_slice_positions)
from .custom_closures import refuse_captured_derivative
from .list_adjoints import ListAdjoints, holds_float_list, list_read, list_slice
from .nodes import _ajx, _call, _locate, _names, _renamed, _statements, _sub, literal_node

_CACHE = {}  # id of a Specialization -> (spec, SyntheticFunction)


def _passes_lists(spec, in_place):
    """Whether the derivative of ``spec`` takes its list arguments' cotangent lists (and
    its returned list's) from the caller, to add to in place (``in_place``: asked for by
    a caller in compiled code, see call_adjoint), rather than returning them."""
    return bool(in_place) and (holds_float_list(spec.return_type) or any(
        holds_float_list(t) for t in spec.arg_types))


def _leaf_paths(t):
    return sorted({p for p, _ in float_leaves(t)}, key=repr)


def live_paths(live):
    """``live`` as a frozenset of paths: a key k of the output's elements stands for
    ``(k,)``; a tuple is a path into nested containers."""
    if live is None:
        return None
    return frozenset(k if isinstance(k, tuple) else (k,) for k in live)


def _suffix(live, wrt, in_place):
    """The part of a derivative's name that tells its specializations apart."""
    suffix = "" if live is None else "_" + "_".join(
        "x".join(map(str, path)) for path in sorted(live, key=str))
    suffix += "" if wrt is None else "_wrt_" + "_".join(map(str, sorted(wrt)))
    return suffix + ("_in_place" if in_place else "")


def vjp_function(spec, live=None, wrt=None, in_place=False):
    """The ``*_vjp`` SyntheticFunction of a typed specialization (cached).

    ``live``: None when the whole output gets a cotangent, else the keys of the
    output tuple/dict elements that do (``{0}`` for has_aux), or paths to elements
    inside them (``(1, 0)``: ``out[1][0]``); the rest count as zero (see ``liveness``).
    ``wrt``: None for every input's cotangent, else the positions of the inputs whose
    cotangents are wanted; the others' are zeros, and nothing that depends on them alone
    is differentiated.
    ``in_place``: see ``_passes_lists``.
    """
    live = live_paths(live)
    wrt = None if wrt is None else frozenset(wrt)
    custom = getattr(spec.fn, "custom_rule", None)
    if custom is not None:  # custom_vjp / custom_jvp: the user's rule
        # a custom_jvp rule's tangents of outputs nothing reads are not transposed (JAX's
        # symbolic zeros); a custom_vjp's bwd gets zeros for them, as in JAX
        live = live if getattr(custom, "follows_live", False) else None
        key = (id(spec), "custom", live)
        hit = _CACHE.get(key)
        if hit is None or hit[0] is not spec:
            fn = SyntheticFunction(f"{spec.name}_vjp{_suffix(live, None, False)}", None, {},
                                   spec.parsed)
            _CACHE[key] = hit = (spec, fn)  # named first: the rule may call the function
            if live is None:
                custom.vjp_function(spec, fn)
            else:
                custom.vjp_function(spec, fn, live)
        return hit[1]
    in_place = _passes_lists(spec, in_place)
    key = (id(spec), live, wrt, in_place)
    hit = _CACHE.get(key)
    if hit is None or hit[0] is not spec:
        mode = ReverseMode(spec, live, wrt, in_place)
        fn = SyntheticFunction(f"{spec.name}_vjp{_suffix(live, wrt, in_place)}", None,
                               mode.namespace, spec.parsed)
        _CACHE[key] = hit = (spec, fn)  # before building: a recursive call finds it
        mode.build(fn)
    return hit[1]


_BUILDING = set()  # ids of the specializations whose derivative is being written


class SplitRefused(Exception):
    """A ``*_fwd``/``*_bwd`` pair whose residuals hold lists (a callee's tapes) is being
    differentiated again (``grad(grad(f))``): derivatives do not follow lists inside
    containers, so the program is rebuilt with such callees as checkpoints instead
    (``Program.split_lists``; see api.Compiled)."""


def refuse_list_residuals(spec):
    """Raise SplitRefused if ``spec`` is one half of a pair with lists among its residuals."""
    if getattr(spec.fn, "list_residuals", False):
        raise SplitRefused(spec.name)


def split_vjp_functions(spec, live=None, wrt=None, in_place=False):
    """``<name>_fwd(x...) -> (f(x...), residuals)`` and ``<name>_bwd(x..., residuals, g) ->
    (dx...)``: the forward and backward sweeps of ``vjp_function(spec, live)`` as two
    functions (cached), so a caller runs f's forward sweep once, in its own, and keeps what
    f's backward sweep reads. None for a custom rule, or a function whose derivative is
    being written (recursion), or a ``checkpoint``'s wrapper: callers then call ``*_vjp``,
    which reruns the forward sweep."""
    if getattr(spec.fn, "custom_rule", None) is not None or \
            getattr(spec.fn, "checkpoint", False) or changed_list_params(spec):
        return None  # (a callee changing a list argument takes that list's cotangent too)
    live = live_paths(live)
    wrt = None if wrt is None else frozenset(wrt)
    in_place = _passes_lists(spec, in_place)
    key = (id(spec), live, wrt, "split", in_place)
    hit = _CACHE.get(key)
    if hit is None or hit[0] is not spec:
        if id(spec) in _BUILDING:
            return None
        mode = ReverseMode(spec, live, wrt, in_place)
        suffix = _suffix(live, wrt, in_place)
        fwd = SyntheticFunction(f"{spec.name}_fwd{suffix}", None, mode.namespace, spec.parsed)
        bwd = SyntheticFunction(f"{spec.name}_bwd{suffix}", None, mode.namespace, spec.parsed)
        split = (fwd, bwd) if mode.build(fwd, bwd) else None
        _CACHE[key] = hit = (spec, split)
    return hit[1]


def leaf_name(table, names, prefix, var, path=()):
    """The variable holding the (co)tangent of ``var``'s leaf at ``path`` (``table`` keeps
    them: one name each, made on first use)."""
    key = (var,) + tuple(path)
    name = table.get(key)
    if name is None:
        hint = prefix + "_".join([var] + [str(p) for p in path])
        name = table[key] = names.fresh(hint if hint.isidentifier() else prefix)
    return name


def tree_expr(t, leaf, ref, path=()):
    """An expression shaped like a value of type ``t``: ``leaf(path, type)`` for each array
    leaf, tuples, dicts and other containers around them (built by the namedtuple class or
    TreeBuilder that ``ref(value)`` names), None for anything else."""
    if isinstance(t, ArrayType):
        return leaf(path, t)
    if isinstance(t, SequenceType):  # a list's (co)tangent is a list, as in JAX
        display = gast.List if t.kind == "list" and t.elts else gast.Tuple
        return display(elts=[tree_expr(e, leaf, ref, path + (k,))
                             for k, e in enumerate(t.elts)], ctx=gast.Load())
    if isinstance(t, TreeType):
        children = [tree_expr(c, leaf, ref, path + (k,)) for k, c in zip(t.keys, t.children)]
        if t.node_type is dict:
            return gast.Dict(keys=[const(k) for k in t.keys], values=children)
        return _call(ref(trees.builder(t)), children)
    return const(None)


class ReverseMode(ListAdjoints):
    def __init__(self, spec, live=None, wrt=None, in_place=False):
        refuse_list_residuals(spec)
        self.in_place = in_place  # (see _passes_lists)
        self.spec = spec
        self.parsed = spec.parsed
        self.fdef = spec.fdef
        self.live = live
        self.wrt = wrt
        self.names = Names(self.fdef)
        self.params = [a.id for a in self.fdef.args.args]
        self.unsafe = overwritten(self.fdef)
        self.tapes = {}
        self.cts = {}
        self.list_cts = set()  # cotangent variables that are lists (see list_ct)
        self.loop_depth = 0    # loops around what the forward (then backward) sweep writes
        # each value is taped once: (statement id, "before"/"after", var) -> the value it
        # reads; the reads that push it (the last of each value in its block); what the
        # backward sweep popped it into
        self.value_at, self.push_at, self.popped = {}, set(), {}
        self.residuals = {}  # id of a top-level call -> (callee's backward sweep, residuals)
        self.top_level = {id(t) for t in self.fdef.body}  # statements that run once
        self.saved = {}  # (statement id, "before"/"after", var) pushed there -> its variable
        self.read_lists = {}  # list read by index -> its first read (list_read_adjoint)
        self.unset_flags, self.unset_adds = {}, set()  # see settle_unset
        self.branch_tests = {}  # id of an if that changes its test -> the test on entry
        self.loop_bodies = {}  # id of a loop -> [its forward sweep's body, its backward one]
        self.branch_bodies = {}  # id of an if -> its backward sweep's (body, orelse)
        # id of a branch or loop -> the forward sweep's copy; id of the backward sweep's
        # copy -> the statement (see zero_cotangents)
        self.generated, self.merges = {}, {}
        # a stack's rows appended to an empty cotangent list: (list, the If appending them,
        # the sum that replaces an else branch if read_lists_init fills the list after all)
        self.stacks_onto_empty = []
        # id of a loop -> its trip counter (kept here, not on the shared typed function:
        # a function differentiated twice, split and whole, gets a counter in each)
        self.trip_counts = {}
        self.values_made = 0
        self.namespace = dict(self.parsed.fn.__globals__)
        self.namespace.update(self.parsed.freevars)
        self.namespace["_ajx"] = adlib

    def error(self, node, message):
        return self.parsed.error(node, message, TypeCheckError)

    def at_user_call(self, s, make):
        """``make()``: a callee's derivative. An error raised inside astjax's own code while
        it is generated (jnp.linalg.eig's refused derivative) names the user's call ``s``
        when this function is the user's, as errors of astjax's code typed there do."""
        with checks_at_user_call(self.parsed, s):
            return make()

    # --- names ---------------------------------------------------------------------------
    def ct(self, var, path=()):
        return leaf_name(self.cts, self.names, "d_", var, path)

    def tape(self, var, kind=None, s=None):
        """The tape of ``var``'s values; results taped after their statement ("after") get
        their own, which the Numba backend drops when no rule reads them, and so do values
        of another type (``v = a * 2.0; v = c * v`` changes rank: a tape is one list), and
        values taped in another loop (a loop's tape, no longer shared with a read after the
        loop, is dropped when no rule reads it: ``y.at[i].set(v)`` needs no old ``y``)."""
        key = (var, kind == "after", _type_at(s, var, kind), self.loop_of(s))
        if key not in self.tapes:
            self.tapes[key] = self.names.fresh(f"tape_{var}" + ("_out" if key[1] else ""))
        return self.tapes[key]

    def loop_of(self, s):
        """The innermost loop around statement ``s`` (its id), or None."""
        if not hasattr(self, "_loops"):
            self._loops = {}

            def visit(stmts, loop):
                for t in stmts:
                    self._loops[id(t)] = loop
                    inner = id(t) if isinstance(t, (gast.For, gast.While)) else loop
                    for field in ("body", "orelse"):
                        visit(getattr(t, field, []) or [], inner)
            visit(self.fdef.body, None)
        return self._loops.get(id(s)) if s is not None else None

    def global_ref(self, value, hint):
        name = self.names.fresh(hint)
        self.namespace[name] = value
        return load(name)

    # --- entry ---------------------------------------------------------------------------
    def build(self, fn, bwd=None):
        """Write the body of ``fn``, the SyntheticFunction ``<name>_vjp``; with ``bwd``, split
        it: ``fn`` is ``<name>_fwd`` and ``bwd`` ``<name>_bwd`` (``split_vjp_functions``)."""
        outermost = id(self.spec) not in _BUILDING  # (a recursive function builds again)
        _BUILDING.add(id(self.spec))
        try:
            return self._build(fn, bwd)
        finally:
            if outermost:
                _BUILDING.discard(id(self.spec))

    def _build(self, fn, bwd):
        g = self.names.fresh("g")
        body = self.fdef.body
        ret = body[-1]
        assert isinstance(ret, gast.Return)
        out = ret.value
        # a reassigned parameter: keep its input value, which its cotangent is shaped like
        self.inputs = {p: (self.names.fresh(f"{p}_in") if p in self.unsafe else p)
                       for p in self.params}
        self.useful = liveness(self.fdef, out.id, self.live) \
            if isinstance(out, gast.Name) else {}
        # a list argument's cotangent list is the caller's, passed (after g) and added to
        # in place: no list inside the result, so a second derivative differentiates
        # calls that change list arguments, not lists taken out of tuples. One the function
        # appends to is an output too: the list comes as the call left it and goes back
        # as the call found it
        changed = changed_list_params(self.spec)
        self.list_in = [p for p in self.params if self.in_place and
                        holds_float_list(anno.get(self.arg_node(p), "type"))]
        for p in changed:
            self.useful.update({k: None for k in liveness(self.fdef, p)})
        if self.wrt is not None:  # only what depends on those inputs needs an adjoint
            self.active = activity(self.fdef, {self.params[i] for i in self.wrt} |
                                   set(changed))
            self.useful = {k: v for k, v in self.useful.items() if k in self.active}
        forward = [assign(new, load(p)) for p, new in self.inputs.items() if new != p]
        for arg in self.fdef.args.args:
            forward += self.element_cotangents(arg.id, anno.get(arg, "type"))
        self.plan_remade_lists()
        forward += self.forward(body[:-1])
        backward = []
        out_type = anno.get(out, "type")
        # seed: the output's cotangent (only its live elements)
        if isinstance(out, gast.Name):
            for path, _ in float_leaves(out_type):
                if self.live is None or any(path[:len(p)] == p for p in self.live):
                    backward.append(assign(self.ct(out.id, path), _sub(load(g), path)))
            if holds_float_list(out_type):  # a returned list's: the caller's, in place
                self.output_list = self.list_root(out.id)
                self.read_lists.setdefault(self.output_list, ret)
                self.seed = g  # (not in place: copied, read_lists_init)
        self.refuse_changed_list_arguments()
        swept = self.backward(body[:-1])
        backward += self.read_lists_init() + swept
        grads = []
        for arg in self.fdef.args.args:
            t = anno.get(arg, "type")
            grads.append(self.final_cotangent(arg.id, t, backward))
        if self.spec.program.backend == "numba":  # (one type per variable where paths meet)
            zero_cotangents.settle(self, forward, backward, _names(grads, gast.Load))
        backward = self.settle_unset(backward)
        # every cotangent starts as the weak zero 0.0; tapes start empty
        # (parameters named as the cotangent lists themselves: no other name for them, so
        # that a second derivative sees the callee change its parameter)
        passed = [self.list_ct(p, path) for p in self.list_in for path in self.list_leaves(p)]
        if getattr(self, "output_list", None) is not None and self.in_place:
            g = self.list_ct(self.output_list)
        init = [assign(name, gast.List(elts=[], ctx=gast.Load()) if name in self.list_cts
                       else const(0.0)) for name in self.cts.values()
                if name not in passed and name != g]
        init += [assign(name, const(True)) for name in self.unset_flags.values()]
        init += [assign(name, gast.List(elts=[], ctx=gast.Load())) for name in
                 self.tapes.values()]
        grads = gast.Tuple(elts=grads, ctx=gast.Load())
        if bwd is not None:
            return self.write_split(fn, bwd, init, forward, backward, out, grads, [g] + passed,
                                    ret)
        result = gast.Tuple(elts=[anno.clean_copy(out), grads], ctx=gast.Load())
        body = init + forward + backward + [gast.Return(value=result)]
        for node in body:
            _locate(node, ret)
        fn.set_body(function_def(f"{self.fdef.name}_vjp",
                                 self.params + [g] + passed, body))

    def write_split(self, fwd, bwd, init, forward, backward, out, grads, g, ret):
        """The two sweeps as two functions (True), or False where they cannot be split.

        The residuals are what the forward sweep sets (values, tapes, reassigned
        parameters, trip counts) and the backward sweep reads, all set whatever path the
        forward sweep takes; a cotangent the forward sweep never touches starts in the
        backward one. Residuals that are lists (the tapes of a callee that loops) are
        refused when the program is built without them (see ``SplitRefused``)."""
        touched = set(_names(forward, gast.Store)) | set(_names(forward, gast.Load))
        fwd_body = [s for s in init if s.targets[0].id in touched] + forward
        bwd_init = [s for s in init if s.targets[0].id not in touched]
        read = set(_names(backward + [gast.Return(value=grads)], gast.Load))
        residuals = [n for n in _names(fwd_body, gast.Store) if n in read]
        types = {}
        for n in gast.walk(self.fdef):
            if isinstance(n, gast.Name) and isinstance(n.ctx, (gast.Store, gast.Param)):
                types.setdefault(n.id, []).append(anno.get(n, "type"))
        tapes = set(self.tapes.values()) | set(self.list_cts)
        always_set = set(self.params) | {s.targets[0].id for s in fwd_body
                                         if isinstance(s, gast.Assign)}
        if any(n not in always_set for n in residuals):
            return False  # set in a branch or loop only: read only on the path that sets it
        lists = any(n in tapes or any(holds_list(t) for t in types.get(n, ()))
                    for n in residuals)
        if lists and not self.spec.program.split_lists:
            return False
        fwd.list_residuals = bwd.list_residuals = lists
        res = self.names.fresh("residuals")
        fwd_body.append(gast.Return(value=gast.Tuple(elts=[anno.clean_copy(out), gast.Tuple(
            elts=[load(n) for n in residuals], ctx=gast.Load())], ctx=gast.Load())))
        unpack = [assign(n, _sub(load(res), (k,))) for k, n in enumerate(residuals)]
        bwd_body = unpack + bwd_init + backward + [gast.Return(value=grads)]
        for node in fwd_body + bwd_body:
            _locate(node, ret)
        fwd.set_body(function_def(fwd.__name__, self.params, fwd_body))
        bwd.set_body(function_def(bwd.__name__, self.params + [res] + g, bwd_body))
        return True

    def arg_node(self, name):
        return next(a for a in self.fdef.args.args if a.id == name)

    def assemble(self, t, leaf):
        return tree_expr(t, leaf, lambda value: self.global_ref(value, "_" + value.__name__))

    def final_cotangent(self, var, t, out):
        """Expression for the cotangent of argument ``var``, shaped like its input value (a
        list argument's is the caller's list, added to in place: its length stands there,
        a value known at run time only, so that the call is not folded away as a constant
        where the other cotangents are None)."""
        if holds_float_list(t) and var in self.list_in:
            return _call(load("len"), [load(self.list_ct(var, self.list_leaves(var)[0]))])
        if holds_float_list(t):  # (not in place: returned)
            return load(self.list_ct(var)) if var in self.read_lists else const(None)

        def leaf(path, leaf_type):
            if leaf_type.dtype.kind not in "fc":
                return const(None)
            name = self.names.fresh(f"grad_{var}")
            out.append(assign(name, _call(_ajx("cotangent_like"), [
                load(self.ct(var, path)), _sub(load(self.inputs[var]), path)])))
            return load(name)
        return self.assemble(t, leaf)

    # --- forward sweep -----------------------------------------------------------------------
    def plan_pushes(self, stmts):
        """Within a straight-line block a value read by several statements is pushed once,
        at its last read before it changes: the backward sweep pops it at that read (the
        first it meets) and the earlier reads reuse it."""
        current = {}

        def fresh(var):
            self.values_made += 1
            current[var] = self.values_made
            return current[var]

        occurrences = []
        for s in stmts:
            if isinstance(s, gast.Assign):
                reads, target = self.reads(s), s.targets[0].id
                for v in reads:
                    if v != target or v in self.read_old(s):
                        occurrences.append(((id(s), "before", v), current.get(v) or fresh(v)))
                fresh(target)
                if target in reads:
                    occurrences.append(((id(s), "after", target), current[target]))
            else:
                for n in gast.walk(s):
                    if isinstance(n, gast.Name) and not isinstance(n.ctx, gast.Load):
                        fresh(n.id)
        last = {}
        for key, value in occurrences:
            self.value_at[key] = value
            last[value] = key
        self.push_at.update(last.values())

    def forward(self, stmts):
        self.plan_pushes(stmts)
        out = []
        for s in stmts:
            if isinstance(s, gast.If):
                taken = anno.get(s, "taken")
                if taken is not None:
                    out += self.forward(s.body if taken else s.orelse)
                    continue
                test = s.test.id
                if test in _names(s.body + s.orelse, gast.Store):
                    # the branch changes its own test (``if first: first = False``): the
                    # backward sweep needs the test's value on entry, kept aside
                    test = self.branch_tests.setdefault(id(s), self.names.fresh(f"{test}_on"))
                    if self.loop_depth:
                        self.unsafe.add(test)
                    out.append(assign(test, load(s.test.id)))
                new = gast.If(test=load(test), body=self.forward(s.body) or [gast.Pass()],
                              orelse=self.forward(s.orelse))
                self.generated[id(s)] = new
                out.append(new)
                out += self.push([test])
            elif isinstance(s, (gast.For, gast.While)):
                trips = self.trips_name(s, nested=self.loop_depth > 0)
                out.append(assign(trips, const(0)))
                self.loop_depth += 1
                body = self.forward(s.body)
                self.loop_depth -= 1
                body += [assign(trips, gast.BinOp(
                    left=load(trips), op=gast.Add(), right=const(1)))]
                self.loop_bodies[id(s)] = [body]  # (see cotangent_list_per_trip)
                if isinstance(s, gast.For):
                    loop = gast.For(target=anno.clean_copy(s.target),
                                    iter=anno.clean_copy(s.iter), body=body, orelse=[],
                                    type_comment=None)
                else:
                    loop = gast.While(test=anno.clean_copy(s.test), body=body, orelse=[])
                self.generated[id(s)] = loop
                out.append(_locate(loop, s))
                out += self.push([trips])
            elif isinstance(s, (gast.Assign, gast.Expr)) and changed_list_arguments(s.value):
                out += self.changing_call_forward(s)
                if isinstance(s, gast.Assign):
                    out += self.element_cotangents(s.targets[0].id,
                                                   anno.get(s.targets[0], "type"))
            elif isinstance(s, gast.Assign):
                reads = self.reads(s)
                target = s.targets[0].id
                out += self.push([v for v in reads if v != target or v in self.read_old(s)],
                                 (id(s), "before"), s)
                out += self.tape_replaced_list(s) + self.tape_list_arguments(s)
                out += self.primal(s)
                if target in reads:
                    out += self.push([target], (id(s), "after"), s)
                out += self.element_cotangents(target, anno.get(s.targets[0], "type"))
            else:
                out.append(anno.clean_copy(s))
        return out

    def primal(self, s):
        """The forward sweep's copy of assignment ``s``. A call of a user function at the top
        level of the body (run once) calls the callee's forward sweep, and keeps its
        residuals for the callee's backward sweep (``call_adjoint``): the callee's primal
        work is done once. Calls in loops and branches stay checkpoints (their residuals
        would need a tape), and so do calls no cotangent flows through. A custom function
        gives its value as its rule computes it: from the rule's own forward sweep where
        it splits (``split_functions``), else from ``primal_function``."""
        callee = anno.get(s.value, "callee")
        custom = getattr(getattr(callee, "fn", None), "custom_rule", None)
        runs_once = callee is not None and id(s) in self.top_level and \
            s.targets[0].id in self.useful and self.has_float_input(s.value)
        if hasattr(custom, "primal_function"):
            split = self.at_user_call(s, lambda: custom.split_functions(
                callee, self.useful.get(s.targets[0].id))) \
                if runs_once and hasattr(custom, "split_functions") else None
            if split is None:
                fn = custom.primal_function(callee)
                args = self.call_arguments(s.value, callee, anno.clean_copy)  # defaults too
                return [assign(s.targets[0].id, _call(self.global_ref(fn, fn.__name__), args),
                               s)]
        elif not runs_once:
            return [anno.clean_copy(s)]
        else:
            split = self.at_user_call(s, lambda: split_vjp_functions(
                callee, self.useful.get(s.targets[0].id), self.call_wrt(s.value, callee),
                in_place=True))
        if split is None:
            return [anno.clean_copy(s)]
        pair, res = self.names.fresh("pair"), self.names.fresh("res")
        self.residuals[id(s)] = (split[1], res)
        args = self.call_arguments(s.value, callee, lambda node: anno.clean_copy(node))
        return [assign(pair, _call(self.global_ref(split[0], split[0].__name__), args), s),
                assign(s.targets[0].id, _sub(load(pair), (0,)), s),
                assign(res, _sub(load(pair), (1,)), s)]

    def call_wrt(self, value, callee):
        """The callee's parameters whose arguments depend on the differentiated inputs
        through differentiable ops, so that it differentiates only those (as JAX's symbolic
        zeros: a pure_callback on stop_gradient(x) in the callee gets no cotangent); None:
        all, where every local argument with floats does."""
        sig = inspect.signature(callee.fn)
        bound = sig.bind(*value.args, **{k.arg: k.value for k in value.keywords})
        nodes = {k: bound.arguments[name] for k, name in enumerate(sig.parameters)
                 if name in bound.arguments}
        reached = frozenset(k for k, node in nodes.items() if self.derivative_reaches(node))
        if self.wrt is None and all(k in reached for k, node in nodes.items()
                                    if self.has_float_input(node)):
            return None
        return reached

    def reaches_inputs(self, value):
        """Whether an operand of op ``value`` depends on the differentiated inputs through
        differentiable ops."""
        return any(self.derivative_reaches(node if not isinstance(node, tuple) else gast.Tuple(
            elts=list(node), ctx=gast.Load()))
            for node in anno.get(value, "operand_nodes").values() if node is not None)

    def derivative_reaches(self, node):
        """Whether expression ``node`` reads a variable that depends on the differentiated
        inputs through differentiable ops."""
        if getattr(self, "_derivative_activity", None) is None:
            seeds = set(self.params) if self.wrt is None else {self.params[i] for i in self.wrt}
            self._derivative_activity = activity(
                self.fdef, seeds | set(changed_list_params(self.spec)), through_derivatives=True)
        return any(isinstance(n, gast.Name) and n.id in self._derivative_activity
                   for n in gast.walk(node))

    def call_arguments(self, value, callee, arg):
        """The arguments of call ``value`` in the callee's parameter order, each as
        ``arg(node)``; defaults as literals."""
        sig = inspect.signature(callee.fn)
        bound = sig.bind(*value.args, **{k.arg: k.value for k in value.keywords})
        return [arg(bound.arguments[name]) if name in bound.arguments else
                literal_node(p.default) for name, p in sig.parameters.items()]

    def trips_name(self, loop, nested=False):
        name = self.trip_counts.get(id(loop))
        if name is None:
            name = self.trip_counts[id(loop)] = self.names.fresh("trips")
            if nested:  # a loop inside a loop runs a different count on each outer trip
                self.unsafe.add(name)
        return name

    def push(self, variables, where=None, stmt=None):
        """Tape ``variables`` (those later overwritten); ``where`` (statement id, "before" or
        "after") names a statement's reads: only the last read of a value pushes it."""
        stmts = []
        for v in variables:
            if v in self.unsafe and (where is None or where + (v,) in self.push_at):
                value = load(v)
                if where is not None and where[1] == "after" and self.shape_only_result(stmt):
                    value = _call(_ajx("shape_stub"), [value])
                if where is not None and id(stmt) in self.top_level:
                    # a statement that runs once keeps the value in a variable of its own
                    self.saved[where + (v,)] = name = self.names.fresh(f"{v}_saved")
                    stmts.append(assign(name, value))
                    continue
                tape = self.tape(v, where and where[1], stmt)
                stmts.append(gast.Expr(value=_call(gast.Attribute(
                    value=load(tape), attr="append", ctx=gast.Load()), [value])))
        return stmts

    def shape_only_result(self, s):
        """Whether the rule of ``s`` reads only the shape of its result, so that the python
        backend can tape a one-element stub of it (``y.at[i].set(v)`` in a loop would
        otherwise keep a copy of y per trip; Numba drops that tape after inlining)."""
        return self.spec.program.backend == "python" and \
            _unread_operand(s.value) is not None

    def pop(self, variables, renames, where=None, stmt=None):
        """Pop recorded values (reverse order) into fresh names; ``renames`` maps old->new.
        A value pushed at a later read (``push``) was popped already: reuse that name."""
        stmts = []
        for v in reversed(variables):
            if v not in self.unsafe:
                continue
            key = where + (v,) if where is not None else None
            if key is not None and key not in self.push_at:
                renames.setdefault(v, []).append(self.popped[self.value_at[key]])
                continue
            if key in self.saved:  # (see push)
                renames.setdefault(v, []).append(self.saved[key])
                self.popped[self.value_at[key]] = self.saved[key]
                continue
            new = self.names.fresh(f"{v}_")
            renames.setdefault(v, []).append(new)
            if key is not None:
                self.popped[self.value_at[key]] = new
            stmts.append(assign(new, _call(gast.Attribute(
                value=load(self.tape(v, where and where[1], stmt)), attr="pop",
                ctx=gast.Load()),
                [])))
        return stmts

    def reads(self, s):
        """Variables whose values the backward sweep needs for statement ``s``, in order."""
        value, target = s.value, s.targets[0].id
        if not self.needs_values(s) or changed_list_arguments(value):
            return []  # (a call changing a list tapes its own: changing_call_forward)
        if anno.get(value, "list_pop"):
            return [target]  # its cotangent goes back on the list shaped like it
        index = runtime_index(value, self.locals())
        read = list_read(value, self.locals())
        if read is not None:
            index = read[1].id if isinstance(read[1], gast.Name) and \
                read[1].id in self.locals() else None
        if index is not None or read is not None:
            return [index] if index is not None and index != target else []
        seen = []
        for n in gast.walk(value):
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load) and \
                    n.id in self.locals() and n.id not in seen:
                seen.append(n.id)
        unread = _unread_operand(value)
        seen = [v for v in seen if v != unread]
        return seen + ([target] if target not in seen else [])

    def read_old(self, s):
        unread = _unread_operand(s.value)
        return {n.id for n in gast.walk(s.value) if isinstance(n, gast.Name) and n.id != unread}

    def float_paths(self):
        """Variable -> the paths of its floating-point leaves, over all its assignments."""
        if not hasattr(self, "_float_paths"):
            self._float_paths = {}
            for n in gast.walk(self.fdef):
                if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store):
                    paths = self._float_paths.setdefault(n.id, set())
                    paths.update(p for p, _ in float_leaves(anno.get(n, "type")))
        return self._float_paths

    def locals(self):
        if not hasattr(self, "_locals"):
            self._locals = set(self.params) | {
                n.id for n in gast.walk(self.fdef)
                if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)}
        return self._locals

    def needs_values(self, s):
        """Whether the backward sweep computes anything for ``s`` (and so reads values)."""
        value = s.value
        if anno.get(value, "list_pop") and any(True for _ in float_leaves(
                anno.get(s.targets[0], "type"))):
            return value.func.value.id in self.useful  # (see pop_adjoint)
        if s.targets[0].id not in self.useful:
            return False
        t = anno.get(s.targets[0], "type")
        if not (any(True for _ in float_leaves(t)) or holds_float_list(t)) or \
                anno.has(value, "folded"):
            return False
        if runtime_index(value, self.locals()) is not None or \
                list_read(value, self.locals()) is not None:
            return True  # the backward sweep needs the index
        if anno.get(value, "op") is None and anno.get(value, "callee") is None:
            return False
        return self.has_float_input(value)

    def has_float_input(self, value):
        """Some operand is a local variable with floating-point leaves (else no cotangents)."""
        for n in gast.walk(value):
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load) and \
                    n.id in self.locals() and (any(True for _ in float_leaves(
                        anno.get(n, "type"))) or holds_float_list(anno.get(n, "type"))):
                return True
        return False

    # --- backward sweep ----------------------------------------------------------------------
    def backward(self, stmts):
        out = []
        for s in reversed(stmts):
            if isinstance(s, gast.If):
                taken = anno.get(s, "taken")
                if taken is not None:
                    out += self.backward(s.body if taken else s.orelse)
                    continue
                renames, test = {}, self.branch_tests.get(id(s), s.test.id)
                out += self.pop([test], renames)
                test = load(renames[test][0]) if test in renames else load(test)
                back = gast.If(test=test, body=self.backward(s.body) or [gast.Pass()],
                               orelse=self.backward(s.orelse))
                self.branch_bodies[id(s)] = (back.body, back.orelse)  # (cotangent_list_in_branch)
                self.merges[id(back)] = s
                out.append(back)
            elif isinstance(s, (gast.For, gast.While)):
                renames = {}
                trips = self.trips_name(s)
                out += self.pop([trips], renames)
                count = load(renames[trips][0]) if trips in renames else load(trips)
                self.loop_depth += 1
                body = self.backward(s.body)
                self.loop_depth -= 1
                loop = gast.For(target=store(self.names.fresh("_")),
                                iter=_call(load("range"), [count]),
                                body=body or [gast.Pass()], orelse=[], type_comment=None)
                self.loop_bodies[id(s)].append(loop.body)
                self.merges[id(loop)] = s
                out.append(loop)
            elif isinstance(s, (gast.Assign, gast.Expr)) and changed_list_arguments(s.value):
                out += [_locate(n, s) for n in self.changing_call_adjoint(s)]
            elif isinstance(s, gast.Assign):
                out += [_locate(n, s) for n in self.adjoint(s) + self.restore_replaced_list(s)]
            elif isinstance(s, gast.Expr) and anno.get(s.value, "list_append"):
                out += [_locate(n, s) for n in self.append_adjoint(s.value)]
        return out

    def adjoint(self, s):
        target = s.targets[0].id
        popped_from_live_list = anno.get(s.value, "list_pop") and \
            s.value.func.value.id in self.useful  # its append's adjoint pops an entry
        if target not in self.useful and not popped_from_live_list:
            return []  # does not reach the output: its cotangent is zero
        t = anno.get(s.targets[0], "type")
        value = s.value
        leaves = list(float_leaves(t))
        if isinstance(t, Static):
            return self.reset_cotangent(target)
        sliced = list_slice(value, self.locals())
        if sliced is not None:
            return self.list_slice_adjoint(s, *sliced, target)
        if (leaves or holds_list(t)) and self.stacked_list(value, anno.get(value, "op")) is None:
            self.refuse_other_list_uses(s)
        if not leaves and not (holds_float_list(t) and anno.get(value, "callee") is not None):
            return []  # (a list a call returns: call_adjoint passes its cotangent list)
        if anno.has(value, "folded") or isinstance(value, gast.Constant):
            return self.reset_cotangent(target)
        stmts, renames = [], {}
        reads = self.reads(s)
        if reads:
            # values pushed before the statement (operands) and after (its result)
            after = [target] if target in reads else []
            stmts += self.pop(after, renames, (id(s), "after"), s)
            stmts += self.pop([v for v in reads if v != target or v in self.read_old(s)],
                              renames, (id(s), "before"), s)

        def val(name, old=True):
            """The value of ``name`` as the statement saw it (operand) or made it (result)."""
            versions = renames.get(name)
            if not versions:
                return load(name)
            if name == target and not old:
                return load(versions[0])
            return load(versions[-1])

        op = anno.get(value, "op")
        callee = anno.get(value, "callee")
        stacked = self.stacked_list(value, op)
        if anno.get(value, "list_pop"):
            return stmts + self.pop_adjoint(s, target, val)
        if stacked is not None and op.name == "concatenate":
            return stmts + self.concatenated_list_adjoint(s, stacked, target, t, val)
        if stacked is not None:
            return stmts + self.stacked_list_adjoint(s, stacked, target, t, val)
        if (op is not None or callee is not None) and not self.has_float_input(value):
            # computed from constants and integers only: no cotangent flows
            return stmts + self.reset_cotangent(target)
        if op is not None:
            return stmts + self.op_adjoint(s, op, target, t, val)
        if callee is not None:
            refuse_captured_derivative(self, s, callee, lambda: self.active if self.wrt is not None
                                       else activity(self.fdef, set(self.params)))
            return stmts + self.call_adjoint(s, callee, target, t, val)
        read = list_read(value, self.locals())
        if read is not None:
            return stmts + self.list_read_adjoint(s, read, target, t, val)
        index = runtime_index(value, self.locals())
        if index is not None:
            return stmts + self.runtime_index_adjoint(s, target, t, val(index))
        return stmts + self.structural_adjoint(s, target, t)

    def reset_cotangent(self, target, t=None):
        """Once the statement that set an overwritten ``target`` (to a value of type ``t``;
        None: any value it ever holds) has passed its cotangent on, or when no cotangent
        flows through that value (a constant, a global, an op with no derivative): what
        was gathered for it must not reach ``target``'s earlier value."""
        if target not in self.unsafe:
            return []
        paths = sorted(self.float_paths().get(target, ()), key=repr) if t is None else \
            [path for path, _ in float_leaves(t)]
        return [assign(self.ct(target, path), const(0.0)) for path in paths]

    def element_cotangents(self, var, t):
        """For a tuple ``var`` (set to a value of type ``t``) indexed at run time: its
        elements' cotangents start unset when ``var`` is set, holding the element itself as
        a placeholder (so each branch of ``runtime_index_adjoint`` sees an array: a weak 0.0
        on the other paths would not type in Numba; see ``settle_unset``)."""
        if not hasattr(self, "_indexed"):
            self._indexed = {s.value.value.id for s in gast.walk(self.fdef)
                             if isinstance(s, gast.Assign) and s.targets[0].id in self.useful
                             and runtime_index(s.value, self.locals()) is not None}
        if var not in self._indexed:
            return []
        stmts = []
        for path, _ in float_leaves(t):
            d = self.ct(var, path)
            unset = self.unset_flags.setdefault(d, self.names.fresh(f"{d}_unset"))
            stmts += [assign(d, _sub(load(var), path)), assign(unset, const(True))]
        return stmts

    def settle_unset(self, stmts):
        """The element cotangents of ``element_cotangents`` start unset: their placeholder
        (the element itself) gives them an array type without allocating, the first add
        assigns (zero-filling 2.6 MB of accumulators was a tenth of the tutorial MLP's
        step) and any other read finds zeros. A reset to 0.0 unsets them again."""
        out = []
        for s in stmts:
            if id(s) in self.unset_adds:
                out.append(s)
                continue
            if isinstance(s, gast.Assign) and s.targets[0].id in self.unset_flags and \
                    isinstance(s.value, gast.Constant) and type(s.value.value) is float:
                out.append(assign(self.unset_flags[s.targets[0].id], const(True)))
                continue
            header = s.test if isinstance(s, (gast.If, gast.While)) else \
                s.iter if isinstance(s, gast.For) else None
            if header is not None:
                s.body, s.orelse = self.settle_unset(s.body), self.settle_unset(s.orelse)
            read = set(_names([header] if header is not None else [s], gast.Load))
            for d in sorted(read & set(self.unset_flags)):
                out.append(gast.If(test=load(self.unset_flags[d]), body=[assign(
                    d, _call(_ajx("cotangent_like"), [const(0.0), load(d)]))], orelse=[]))
            out.append(s)
        return out

    def runtime_index_adjoint(self, s, target, t, index):
        """``c = xs[i]`` with ``i`` known at run time only (``for w, b in params``: the
        elements of ``xs`` share one type): ``c``'s cotangent goes to element ``i``'s, chosen
        by a branch per element (each leaf of a tuple has its own cotangent variable)."""
        xs = s.value.value
        n = len(anno.get(xs, "type").elts)
        stmts = []
        for k in range(n):
            body = []
            for path, _ in float_leaves(t):
                self._add(xs.id, (k,) + path, load(self.ct(target, path)), body, False)
            position = gast.BinOp(left=anno.clean_copy(index), op=gast.Mod(), right=const(n))
            stmts.append(gast.If(test=gast.Compare(left=position, ops=[gast.Eq()],
                                                   comparators=[const(k)]),
                                 body=body or [gast.Pass()], orelse=[]))
        return stmts + self.reset_cotangent(target, t)

    def contribute(self, atom, expr, stmts, unbroadcast, like=None):
        """``d_atom += expr`` for a floating-point variable ``atom``; ``like`` is the value
        the operand had (what a broadcast cotangent is summed back to)."""
        if not isinstance(atom, gast.Name) or atom.id not in self.locals():
            return
        t = anno.get(atom, "type")
        if isinstance(t, (SequenceType, TreeType)):
            for path, _ in float_leaves(t):
                self._add(atom.id, path, _sub(anno.clean_copy(expr), path), stmts, False)
            return
        if not isinstance(t, ArrayType) or t.dtype.kind not in "fc":
            return
        self._add(atom.id, (), expr, stmts, unbroadcast, like=like or load(atom.id))

    def _add(self, var, path, expr, stmts, unbroadcast, like=None):
        d = self.ct(var, path)
        c = self.names.fresh("c")
        stmts.append(assign(c, expr))
        contribution = load(c)
        if unbroadcast:
            contribution = _call(_ajx("unbroadcast"), [contribution, like])
        add = assign(d, gast.BinOp(left=load(d), op=gast.Add(), right=contribution))
        unset = self.unset_flags.get(d)
        if unset is not None:  # (see settle_unset)
            add = gast.If(test=load(unset), body=[
                assign(d, _call(_ajx("cotangent_like"), [contribution, load(d)])),
                assign(unset, const(False))], orelse=[add])
            self.unset_adds.add(id(add))
        # a rule returns None for "no gradient"; typing decides this test statically
        stmts.append(gast.If(test=gast.Compare(left=load(c), ops=[gast.IsNot()],
                                               comparators=[const(None)]),
                             body=[add], orelse=[]))

    def op_adjoint(self, s, op, target, t, val):
        value = s.value
        if not op.differentiable:
            return self.reset_cotangent(target)
        rule = op.rules.get("vjp")
        if (rule is None or getattr(rule, "refuses", False)) and not self.reaches_inputs(value):
            # as JAX, whose rule sees only symbolic zero tangents there (a callback on
            # stop_gradient(x)): no cotangent goes from here to the inputs
            return self.reset_cotangent(target)
        if rule is None:
            raise self.error(s, f"astjax has no derivative rule for {op.name}() yet")
        stmts = []
        g = self.container_seed(target, t, stmts, val(target, old=False))  # split: a tuple
        operands = anno.get(value, "operand_nodes")
        rename = lambda node: _renamed(node, val)
        args, keywords = rule_arguments(value, op, rename)
        args = [val(target, old=False)] + args + [g]
        if op.name.startswith("at_") and _names_one_place(anno.get(value, "param_nodes").get(
                "index")):
            # ints and slices cannot name a place twice: the rule then needs no old value
            # (so a loop of y.at[i].set(v) tapes no copy of y on the Numba backend)
            keywords = [kw for kw in keywords if kw[0] != "unique_indices"] + [
                ("unique_indices", const(True))]
        r = self.names.fresh("r")
        stmts.append(assign(r, _call(self.global_ref(rule, f"vjp_{op.name}"), args, keywords)))
        broadcasting = op.family == "elementwise" or op.name in _BROADCASTING
        for k, name in enumerate(op.operands):
            node = operands.get(name)
            if node is None:
                continue
            part = _sub(load(r), (k,))
            if isinstance(node, tuple):
                for j, elt in enumerate(node):
                    self.contribute(elt, _sub(anno.clean_copy(part), (j,)), stmts, True,
                                    rename(elt))
            else:
                # the operand no rule reads was not taped: its cotangent already has its
                # shape (the update's result's), and no value is at hand to unbroadcast to
                unread = isinstance(node, gast.Name) and node.id == _unread_operand(value)
                self.contribute(node, part, stmts, broadcasting and not unread, rename(node))
        return stmts

    def call_adjoint(self, s, callee, target, t, val):
        value = s.value
        sig = inspect.signature(callee.fn)
        bound = sig.bind(*value.args, **{k.arg: k.value for k in value.keywords})
        stmts = []
        if t is not None:  # (else changing_call_adjoint popped them)
            copies = {}
            stmts += self.pop_list_arguments(s, copies)
            if copies:
                renamed = val
                val = lambda name, old=True: load(copies[name][0]) if name in copies \
                    else renamed(name, old)
        args = self.call_arguments(value, callee, lambda node: _renamed(node, val))
        changed = changed_list_params(callee)
        in_place = getattr(callee.fn, "custom_rule", None) is None
        extra = []  # the cotangent lists of list arguments, added to in place (see _build)
        for name, param_type in zip(sig.parameters, callee.arg_types):
            node = bound.arguments.get(name)
            if not (in_place and holds_float_list(param_type)):
                continue
            if not (isinstance(node, gast.Name) and node.id in self.locals()):
                raise self.error(s, f"differentiating a call of {callee.fn.__name__}() with "
                                 f"a list that is not a variable is not supported yet")
            lst = self.list_root(node.id)
            if name in changed and lst not in self.useful:
                raise self.error(s, f"differentiating a call that changes list {lst!r}, "
                                 f"which the result does not read, is not supported yet")
            # one cotangent list per float leaf of its elements (a list of pairs: two)
            if self.list_leaves(lst) != _leaf_paths(param_type.elt):
                raise self.error(s, f"the list {lst!r} passed to {callee.fn.__name__}() "
                                 f"holds elements of other kinds elsewhere: differentiating "
                                 f"that is not supported yet")
            self.read_lists.setdefault(lst, s)
            extra += [load(self.list_ct(lst, path)) for path in self.list_leaves(lst)]
        emptied = []
        if t is None:  # (changing_call_adjoint): the result's cotangent, or zeros
            t = anno.get(s.targets[0], "type") if target is not None else None
            if target is None or target not in self.useful or isinstance(t, Static):
                t = None
        if t is None:
            seed = self.assemble(callee.return_type, lambda path, leaf_type: const(
                0.0 if leaf_type.dtype.kind in "fc" else None))
        elif holds_float_list(t):
            # a list returned (``jnp.unstack``): the callee's derivative takes its cotangent
            # list, which (filled by read_lists_init, kept by the reads) ends here
            self.read_lists.setdefault(target, s)
            seed = load(self.list_ct(target))
            k = self.names.fresh("k")
            emptied = _statements(f"for {k} in range(len({seed.id})):\n"
                                  f"    {seed.id}.pop()\n")
        else:
            seed = self.container_seed(target, t, stmts, val(target, old=False))
        r = self.names.fresh("r")
        if id(s) in self.residuals:  # the forward sweep ran the callee's: its backward one
            bwd, res = self.residuals[id(s)]
            stmts.append(assign(r, _call(self.global_ref(bwd, bwd.__name__),
                                         args + [load(res), seed] + extra)))
            cts = (lambda k: _sub(load(r), (k,)))
        else:
            # only the elements used here (and, see call_wrt, the arguments that need it)
            fn = self.at_user_call(s, lambda: vjp_function(
                callee, self.useful.get(target), self.call_wrt(value, callee), in_place=True))
            stmts.append(assign(r, _call(self.global_ref(fn, fn.__name__),
                                         args + [seed] + extra)))
            cts = (lambda k: _sub(load(r), (1, k)))
        for k, name in enumerate(sig.parameters):
            node = bound.arguments.get(name)
            if in_place and holds_float_list(callee.arg_types[k]):
                continue  # (added to in place)
            elif isinstance(node, gast.Name) and node.id in self.locals() and \
                    holds_float_list(anno.get(node, "type")):
                stmts += self.list_argument_adjoint(s, node.id, cts(k), callee)
            elif node is not None:
                self.contribute(node, cts(k), stmts, False)
        return stmts + emptied

    def container_seed(self, target, t, stmts, z_expr):
        """Read (and, for an overwritten variable, reset) the cotangent of ``target``, as one
        value shaped like ``z_expr``, the value the statement made (a tuple for split)."""
        def leaf(path, leaf_type):
            if leaf_type.dtype.kind not in "fc":
                return const(None)
            g = self.names.fresh("g")
            stmts.append(assign(g, _call(_ajx("cotangent_like"), [
                load(self.ct(target, path)), _sub(anno.clean_copy(z_expr), path)])))
            if target in self.unsafe:
                stmts.append(assign(self.ct(target, path), const(0.0)))
            return load(g)
        return self.assemble(t, leaf)

    def structural_adjoint(self, s, target, t):
        """Copies, tuple displays, containers built (``{"a": x}``, ``P(x, y)``), static
        indexing of containers, float(x)."""
        value = s.value
        stmts = []
        # a statement reading its own target (y = y, p = p[::-1]) moves the cotangent into
        # the variable it comes from: it is read into temporaries and reset first (moved
        # and then reset, it was added to itself and lost: grad of y = y was 0)
        own = {}
        if target in _names([value], gast.Load):
            for path, _ in float_leaves(t):
                own[path] = self.names.fresh("c")
                stmts.append(assign(own[path], load(self.ct(target, path))))
            stmts += [assign(self.ct(target, path), const(0.0)) for path in own]

        def move(src_path, dst_var, dst_path, dst_type):
            for path, _ in float_leaves(dst_type):
                d_src = own.get(src_path + path) or self.ct(target, src_path + path)
                self._add(dst_var, dst_path + path, load(d_src), stmts, False)

        if isinstance(value, gast.Name) and value.id in self.locals():
            move((), value.id, (), anno.get(value, "type"))
        elif isinstance(value, (gast.Tuple, gast.List)):
            for k, e in enumerate(value.elts):
                if isinstance(e, gast.Name) and e.id in self.locals():
                    move((k,), e.id, (), anno.get(e, "type"))
        elif anno.get(value, "tree_build") is not None:  # {"a": x}, P(x, y)
            for key, v in zip(t.keys, anno.get(value, "tree_build")):
                if isinstance(v, gast.Name) and v.id in self.locals():
                    move((key,), v.id, (), anno.get(v, "type"))
        elif anno.get(value, "dict_view") is not None and \
                isinstance(value.func.value, gast.Name) and value.func.value.id in self.locals():
            kind, keys = anno.get(value, "dict_view")  # d.values(), d.items(): d's entries
            for k, key in enumerate(keys if kind != "keys" else ()):
                element = t.elts[k] if kind == "values" else t.elts[k].elts[1]
                move((k,) if kind == "values" else (k, 1), value.func.value.id, (key,), element)
        elif static_slice_positions(value) is not None:  # params[:-1]
            if isinstance(value.value, gast.Name) and value.value.id in self.locals():
                for k, position in enumerate(static_slice_positions(value)):
                    move((k,), value.value.id, (position,), t.elts[k])
        elif isinstance(value, (gast.Subscript, gast.Attribute)) and \
                isinstance(value.value, gast.Name) and value.value.id in self.locals():
            key = child_key(value)
            if key is None:
                raise self.error(s, "differentiating through a container indexed at run time "
                                 "is not supported yet")
            move((), value.value.id, (key,), t)
        elif isinstance(value, gast.BinOp) and isinstance(t, SequenceType):
            # tuple concatenation (a + b): element k comes from a, or from b past len(a)
            parts = [(value.left, anno.get(value.left, "type")),
                     (value.right, anno.get(value.right, "type"))]
            offset = 0
            for node, part_type in parts:
                size = len(part_type.elts) if isinstance(part_type, SequenceType) else \
                    len(part_type.value)
                if isinstance(node, gast.Name) and node.id in self.locals() and \
                        isinstance(part_type, SequenceType):
                    for k, e in enumerate(part_type.elts):
                        move((offset + k,), node.id, (k,), e)
                offset += size
        elif anno.get(value, "scalar_conversion") == "float":
            move((), value.args[0].id, (), t)
        elif anno.get(value, "builtin"):
            raise self.error(s, "differentiating through builtin min/max/sum is not supported "
                             "yet; use jnp.minimum/jnp.maximum/jnp.sum")
        elif isinstance(value, gast.Name) or isinstance(value, gast.Constant):
            pass  # a global or a constant: nothing to move
        else:
            raise self.error(s, "astjax cannot differentiate this statement yet")
        if own:
            return stmts  # reset before the move
        return stmts + self.reset_cotangent(target, t)  # after the move has read it


def rule_arguments(value, op, rename):
    """The operands (in order; a tuple for a sequence operand, None where absent) and the
    params (``(name, node)`` keywords) of the op call ``value``, as a rule takes them;
    ``rename`` copies a node of the call (reading the values the rule should see)."""
    operands = anno.get(value, "operand_nodes")
    params = anno.get(value, "param_nodes")
    resolved = anno.get(value, "resolved_params") or {}
    args = []
    for name in op.operands:
        node = operands.get(name)
        if isinstance(node, tuple):
            args.append(gast.Tuple(elts=[rename(n) for n in node], ctx=gast.Load()))
        elif node is None:
            args.append(const(None))
        else:
            args.append(rename(node))
    keywords = []
    for name, node in params.items():
        if name in resolved:
            keywords.append((name, literal_node(resolved[name])))
        elif name == "index":
            keywords.append((name, gast.Subscript(value=_ajx("s_"), slice=rename(node),
                                                  ctx=gast.Load())))
        elif isinstance(node, tuple):
            keywords.append((name, gast.Tuple(elts=[rename(n) for n in node], ctx=gast.Load())))
        else:
            keywords.append((name, rename(node)))
    return args, keywords


_BROADCASTING = {"where", "clip", "at_set", "at_add", "at_subtract", "at_multiply",
                 "at_divide", "at_power", "at_min", "at_max", "unbroadcast", "cotangent_like"}


def _unread_operand(value):
    """The operand a rule never reads: the old array of ``y.at[i].set/add/subtract(v)``
    at an index naming each place once (so a loop filling ``y`` tapes no copies of it)."""
    op = anno.get(value, "op")
    if op is None or op.name not in ("at_set", "at_add", "at_subtract") or \
            not _names_one_place((anno.get(value, "param_nodes") or {}).get("index")):
        return None
    x = anno.get(value, "operand_nodes").get("x")
    if not isinstance(x, gast.Name):
        return None
    uses = sum(1 for n in gast.walk(value) if isinstance(n, gast.Name) and n.id == x.id)
    return x.id if uses == 1 else None


def _names_one_place(index):
    """Whether an index node (ints, 0-d int arrays, slices, None, ...) names each place
    once: no index arrays."""
    if index is None:
        return False
    for part in index.elts if isinstance(index, gast.Tuple) else [index]:
        if isinstance(part, gast.Slice):
            continue
        t = anno.get(part, "type")
        if isinstance(t, ArrayType) and t.ndim == 0 and t.dtype.kind in "iu":
            continue
        if isinstance(t, Static) and (t.value is None or t.value is Ellipsis or isinstance(
                t.value, slice) or (isinstance(t.value, int) and not isinstance(t.value, bool))):
            continue
        return False
    return True


def _type_at(s, var, kind):
    """The type of ``var`` as statement ``s`` reads it ("before") or makes it ("after")."""
    if s is None:
        return None
    t = None
    if kind == "after":
        t = anno.get(s.targets[0], "type")
    else:
        t = next((anno.get(n, "type") for n in gast.walk(s.value) if isinstance(n, gast.Name)
                  and n.id == var and isinstance(n.ctx, gast.Load)), None)
    try:
        hash(t)
    except TypeError:  # a static value that does not hash: its text tells types apart
        return repr(t)
    return t
