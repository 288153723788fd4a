"""Forward mode as a source rewrite of typed A-normal form.

From one specialization of ``f(x1, ..., xn)`` it writes ``f_jvp(x1, ..., xn, v1, ..., vn)
-> (f(x...), J v)``: f's own statements, each followed by the statements computing its
result's tangent. Loops stay loops and branches stay branches; nothing is taped, since
a tangent is computed when its primal is.

Tangents are kept per floating-point leaf (``tan_<name>``, like reverse mode's
cotangents) and only for *active* variables, those that depend on a differentiated
input. A tangent always has its primal's shape and dtype (``cotangent_like``), so it types
as the primal does through loops and branches.

Per op (``ops/registry.py``), the tangent comes from:

* an explicit JVP rule (``jvp_rules.py``), for the nonlinear ops that need one;
* the elementwise family: the VJP rule with the tangent as its cotangent (a diagonal
  Jacobian is its own transpose);
* ``_LINEAR``: the op applied to the tangents (reshape, sum, getitem, concatenate, ...);
* ``_MULTILINEAR``: the sum over operands of the op with one operand's tangent in its
  place (dot, matmul, einsum, ...).

Calls to user functions call the callee's own ``*_jvp``; custom_jvp functions call the
user's rule. Anything else (custom_vjp, a builtin ``min``) raises ``NoTangentRule`` and
``api.jvp_function`` falls back to differentiating the pullback.
"""
import inspect

import gast

from ..frontend.naming import Names, assign, const, load
from ..frontend.synthetic import SyntheticFunction, function_def
from ..ir import anno
from ..ir.types import UNKNOWN, ArrayType, ListType, SequenceType, Static
from . import adlib
from .analysis import (bound_arguments, changed_list_arguments, child_key, float_leaves,
                       runtime_index, static_slice_positions)
from .custom_closures import refuse_captured_derivative
from .list_adjoints import holds_float_list
from .nodes import _ajx, _call, _locate, _statements, _sub, literal_node
from .reverse import holds, leaf_name, refuse_list_residuals, rule_arguments, tree_expr


class NoTangentRule(Exception):
    """Forward mode cannot differentiate this function (the caller falls back)."""


_CACHE = {}  # id of a Specialization -> (spec, SyntheticFunction, or why there is none)

# ops linear in their operands (jointly): the tangent is the op applied to their tangents
# (zeros for those without one), except for an operand that only gives a shape or selects
_LINEAR = {
    "asarray", "array", "atleast_1d", "atleast_2d", "atleast_3d", "broadcast_to", "cumsum",
    "diag", "expand_dims", "flip", "matrix_transpose", "mean", "moveaxis", "ravel", "repeat",
    "reshape", "roll", "split", "array_split", "squeeze", "sum", "swapaxes", "tile", "trace",
    "transpose", "astype", "getitem", "concatenate", "stack", "hstack", "vstack",
    "broadcast_arrays", "at_set", "at_add", "at_subtract", "where", "full", "full_like",
    "linspace", "unbroadcast", "cotangent_like"}
_NOT_LINEAR = {"full_like": "a", "cotangent_like": "z", "unbroadcast": "like",
               "where": "condition"}
# ops linear in each operand separately: the tangent is the sum over operands of the op
# with that operand's tangent in its place (each element of einsum's operands)
_MULTILINEAR = {"dot", "matmul", "inner", "outer", "vdot", "tensordot", "einsum"}


def forward_function(spec, wrt=None):
    """The ``*_jvp`` SyntheticFunction of a typed specialization (cached); raises
    NoTangentRule where forward mode does not apply. ``wrt``: None, or the positions of
    the inputs whose tangents it reads (the others' are taken as zeros)."""
    custom = getattr(spec.fn, "custom_rule", None)
    if wrt is not None and custom is None and any(
            k not in wrt for k, t in enumerate(spec.arg_types) if _leaves(t)):
        wrt = frozenset(wrt)
    else:
        wrt = None  # (every input with a tangent)
    key = id(spec) if wrt is None else (id(spec), wrt)
    hit = _CACHE.get(key)
    if hit is None or hit[0] is not spec:
        if custom is not None:
            if not hasattr(custom, "jvp_function"):
                _CACHE[key] = (spec, f"{spec.name}, a custom_vjp function")
                raise NoTangentRule(_CACHE[key][1])
            fn = SyntheticFunction(f"{spec.name}_jvp", None, {}, spec.parsed)
            _CACHE[key] = (spec, fn)
            custom.jvp_function(spec, fn)
            return fn
        mode = ForwardMode(spec, wrt)
        part = "" if wrt is None else "_wrt_" + "_".join(map(str, sorted(wrt)))
        fn = SyntheticFunction(f"{spec.name}{part}_jvp", None, mode.namespace, spec.parsed)
        _CACHE[key] = hit = (spec, fn)  # before building: a recursive call finds it
        try:
            mode.build(fn)
        except NoTangentRule as e:
            _CACHE[key] = (spec, str(e))
            raise
    if isinstance(hit[1], str):
        raise NoTangentRule(hit[1])
    return hit[1]


def _leaves(t):
    """The floating-point leaves of a value of type ``t``; a list's are its elements'."""
    return list(float_leaves(t.elt if isinstance(t, ListType) else t))


class ForwardMode:
    def __init__(self, spec, wrt=None):
        refuse_list_residuals(spec)
        self.spec, self.wrt = spec, wrt
        self.parsed = spec.parsed
        self.fdef = spec.fdef
        self.names = Names(self.fdef)
        self.params = [a.id for a in self.fdef.args.args]
        self.tangents = {}
        self.namespace = dict(self.parsed.fn.__globals__)
        self.namespace.update(self.parsed.freevars)
        self.namespace["_ajx"] = adlib
        self.active = self.activity()

    # --- names ---------------------------------------------------------------------------
    def tan(self, var, path=()):
        return leaf_name(self.tangents, self.names, "tan_", var, path)

    def global_ref(self, value, hint):
        name = self.names.fresh(hint)
        self.namespace[name] = value
        return load(name)

    def paths(self, var):
        """The floating-point leaf paths of ``var`` over all its assignments."""
        if not hasattr(self, "_paths"):
            self._paths = {}
            for n in gast.walk(self.fdef):
                if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store):
                    self._paths.setdefault(n.id, set()).update(
                        p for p, _ in _leaves(anno.get(n, "type")))
        return self._paths.get(var, set())

    def list_paths(self, lst):
        """The floating-point leaf paths of the elements appended to list ``lst``."""
        paths = set()
        for n in gast.walk(self.fdef):
            if anno.get(n, "list_append") and n.func.value.id == lst:
                paths.update(p for p, _ in _leaves(anno.get(n.args[0], "type")))
            elif isinstance(n, gast.Name) and n.id == lst and isinstance(
                    anno.get(n, "type"), ListType) and anno.get(n, "type").elt is not UNKNOWN:
                paths.update(p for p, _ in _leaves(anno.get(n, "type")))  # (a callee's)
        return paths

    def is_active(self, node):
        """Whether ``node`` carries a tangent here (a variable that is a constant at this
        point, as ``acc = 0.0`` before a peeled loop, has none)."""
        return isinstance(node, gast.Name) and node.id in self.active and \
            not isinstance(anno.get(node, "type"), Static)

    # --- which variables carry tangents ------------------------------------------------------
    def activity(self):
        """The variables that depend, through differentiable operations, on a
        floating-point argument (a fixed point over loops and branches)."""
        active = {a.id for k, a in enumerate(self.fdef.args.args) if _leaves(anno.get(a, "type"))
                  and (self.wrt is None or k in self.wrt)}
        parts = {}  # an active variable -> the paths of its active leaves, where not all are
        statements = [n for n in gast.walk(self.fdef) if isinstance(n, (gast.Assign, gast.Expr))]
        changed = True
        while changed:
            changed = False
            for s in statements:
                filled = [n.id for n in changed_list_arguments(s.value) if n.id not in active]
                if filled and any(isinstance(n, gast.Name) and n.id in active
                                  for n in gast.walk(s.value)):
                    active.update(filled)  # fill(hs, x): hs holds what fill appended
                    changed = True
                if isinstance(s, gast.Expr):
                    if not anno.get(s.value, "list_append"):
                        continue
                    target, item = s.value.func.value.id, s.value.args[0]
                    if target not in active and isinstance(item, gast.Name) and \
                            item.id in active:
                        active.add(target)
                        changed = True
                    continue
                target = s.targets[0].id
                t = anno.get(s.targets[0], "type")
                # (a container holding a list of floats is active too, so that taking the
                # list out of it is refused in ``structural``, not left without a tangent)
                if target in active and target not in parts or \
                        not (_leaves(t) or holds(t, holds_float_list)):
                    continue
                op = anno.get(s.value, "op")
                if op is not None and not op.differentiable:
                    continue
                if anno.has(s.value, "folded"):
                    continue
                found = self.reached(s.value, t, active, parts)
                if found is None:
                    continue
                if found is _ALL:
                    changed |= target not in active or target in parts
                    parts.pop(target, None)
                elif target not in active or not found <= parts[target]:
                    parts[target] = found | parts.get(target, frozenset())
                    changed = True
                active.add(target)
        self.parts = parts
        return active

    def reached(self, value, t, active, parts):
        """Which leaves of ``value`` (of type ``t``) depend on the active variables: None
        (none), _ALL, or a frozenset of paths. A tuple's elements are told apart, through
        calls too, so that an element with a zero tangent (modf(x)[1], a callee's integer
        part) gets none, as JAX's symbolic zeros: sqrt of it is not inf * 0."""
        def of(node, prefix):
            if not (isinstance(node, gast.Name) and node.id in active):
                return frozenset()
            return frozenset({prefix} if node.id not in parts else
                             {prefix + p for p in parts[node.id]})

        if not any(isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load) and n.id in active
                   for n in gast.walk(value)):
            return None
        if isinstance(value, gast.Name):
            return parts.get(value.id, _ALL)
        if isinstance(value, (gast.Tuple, gast.List)) and isinstance(t, SequenceType):
            return frozenset().union(*[of(e, (k,)) for k, e in enumerate(value.elts)]) or None
        if isinstance(value, (gast.Subscript, gast.Attribute)) and anno.get(value, "op") is None \
                and isinstance(value.value, gast.Name) and child_key(value) is not None and \
                not isinstance(anno.get(value.value, "type"), ListType) and \
                runtime_index(value) is None:
            if value.value.id not in active:
                return None
            if value.value.id not in parts:
                return _ALL
            key = child_key(value)
            rest = {p[1:] for p in parts[value.value.id] if p[0] == key}
            return _ALL if () in rest else frozenset(rest) or None
        callee = anno.get(value, "callee")
        if callee is not None and getattr(callee.fn, "custom_rule", None) is None:
            return _callee_output(callee, value, active)
        return _ALL


    # --- entry ---------------------------------------------------------------------------
    def build(self, fn):
        body = self.fdef.body
        ret = body[-1]
        assert isinstance(ret, gast.Return)
        vs = [self.names.fresh(f"v_{p}") for p in self.params]
        stmts = []
        for arg, v in zip(self.fdef.args.args, vs):
            if holds_float_list(anno.get(arg, "type")):  # the caller's tangent list
                stmts.append(assign(self.tan(arg.id, ()), load(v)))
            elif arg.id in self.active:
                for path, _ in _leaves(anno.get(arg, "type")):
                    stmts.append(assign(self.tan(arg.id, path), _call(_ajx("cotangent_like"), [
                        _sub(load(v), path), _sub(load(arg.id), path)])))
        stmts += self.statements(body[:-1])
        out = ret.value
        tangent = self.assemble(anno.get(out, "type"), out)
        if holds_float_list(anno.get(out, "type")):  # a list built by append: its tangents
            tangent = self.list_tangent(out, stmts)
        result = gast.Tuple(elts=[anno.clean_copy(out), tangent], ctx=gast.Load())
        stmts.append(gast.Return(value=result))
        for node in stmts:
            _locate(node, ret)
        fn.set_body(function_def(f"{self.fdef.name}_jvp", self.params + vs, stmts))

    def assemble(self, t, node):
        """The tangent of ``node`` (of type ``t``) as one value shaped like it: tangents at
        its floating-point leaves, zeros where it has none, None at other leaves."""
        def leaf(path, leaf_type):
            if leaf_type.dtype.kind not in "fc":
                return const(None)
            if self.is_active(node):
                return load(self.tan(node.id, path))
            return self.zeros(_sub(anno.clean_copy(node), path))
        return tree_expr(t, leaf, lambda value: self.global_ref(value, "_" + value.__name__))

    def list_tangent(self, node, stmts):
        """The tangent list of the list ``node`` (zeros where it has none)."""
        if [p for p, _ in _leaves(anno.get(node, "type"))] != [()]:
            raise NoTangentRule("a list of containers returned")
        if self.is_active(node):
            return load(self.tan(node.id, ()))
        zeros, k = self.names.fresh("zeros"), self.names.fresh("k")
        stmts += _statements(f"{zeros} = []\n"
                             f"for {k} in range(len({node.id})):\n"
                             f"    {zeros}.append(_ajx.cotangent_like(0.0, {node.id}[{k}]))\n")
        return load(zeros)

    @staticmethod
    def zeros(like):
        return _call(_ajx("cotangent_like"), [const(0.0), like])

    # --- statements --------------------------------------------------------------------------
    def statements(self, stmts):
        out = []
        for s in stmts:
            if isinstance(s, gast.If):
                taken = anno.get(s, "taken")
                if taken is not None:
                    out += self.statements(s.body if taken else s.orelse)
                    continue
                out.append(gast.If(test=anno.clean_copy(s.test),
                                   body=self.statements(s.body) or [gast.Pass()],
                                   orelse=self.statements(s.orelse)))
            elif isinstance(s, gast.For):
                out.append(_locate(gast.For(target=anno.clean_copy(s.target),
                                            iter=anno.clean_copy(s.iter),
                                            body=self.statements(s.body) or [gast.Pass()],
                                            orelse=[], type_comment=None), s))
            elif isinstance(s, gast.While):
                out.append(_locate(gast.While(test=anno.clean_copy(s.test),
                                              body=self.statements(s.body) or [gast.Pass()],
                                              orelse=[]), s))
            elif isinstance(s, gast.Assign):
                out += [_locate(n, s) for n in self.assignment(s)]
            elif isinstance(s, gast.Expr) and anno.get(s.value, "list_append"):
                out.append(anno.clean_copy(s))
                out += [_locate(n, s) for n in self.append(s.value)]
            elif isinstance(s, gast.Expr) and any(
                    self.is_active(n) for n in changed_list_arguments(s.value)):
                # push(hs, x): the callee's jvp appends to hs's tangent list as well (a
                # statement of its own: an unread result's call would be dead code)
                call = self.call(s, self.names.fresh("unused"),
                                 anno.get(s.value, "callee").return_type)[0].value
                out.append(_locate(gast.Expr(value=call), s))
            else:
                out.append(anno.clean_copy(s))
        return out

    def append(self, call):
        lst, item = call.func.value.id, call.args[0]
        if lst not in self.active:
            return []
        stmts = []
        for path in sorted(self.list_paths(lst), key=repr):
            value = load(self.tan(item.id, path)) if self.is_active(item) else \
                self.zeros(_sub(anno.clean_copy(item), path))
            stmts.append(gast.Expr(value=_call(gast.Attribute(
                value=load(self.tan(lst, path)), attr="append", ctx=gast.Load()), [value])))
        return stmts

    def assignment(self, s):
        target, value = s.targets[0].id, s.value
        t = anno.get(s.targets[0], "type")
        if target not in self.active:
            return [anno.clean_copy(s)]
        if isinstance(value, gast.List) and not value.elts:  # a list, appended to later
            return [anno.clean_copy(s)] + [assign(self.tan(target, path), gast.List(
                elts=[], ctx=gast.Load())) for path in sorted(self.list_paths(target), key=repr)]
        if anno.get(value, "callee") is not None and not anno.has(value, "folded"):
            return self.call(s, target, t)
        # the primal goes first (rules read it); into a new name if the value reads target
        reads_target = any(isinstance(n, gast.Name) and n.id == target
                           for n in gast.walk(value))
        z = self.names.fresh(target) if reads_target else target
        stmts = [assign(z, anno.clean_copy(value))]
        tangents = self.tangent_of(s, value, t, load(z), stmts)
        if reads_target:
            stmts.append(assign(target, load(z)))
        # every leaf gets its tangent (zeros where the value gives none); a constant that
        # the variable's later (array) values replace gets a zero like itself
        paths = [()] if isinstance(t, Static) and () in self.paths(target) else \
            [p for p, _ in _leaves(t)]
        computed = []
        for path in paths:
            expr = tangents.get(path) if tangents is not None else None
            if expr is None:
                expr = self.zeros(_sub(load(z), path))
            if len(paths) == 1:
                stmts.append(assign(self.tan(target, path), expr))
            else:  # all read before any is written: (a, b) = (b, a) swaps tangents too
                fresh = self.names.fresh("tan")
                stmts.append(assign(fresh, expr))
                computed.append(assign(self.tan(target, path), load(fresh)))
        return stmts + computed

    def tangent_of(self, s, value, t, z, stmts):
        """{leaf path: tangent expression} of the value of ``s`` (``z`` holds it); missing
        paths (or None) are zero."""
        if anno.has(value, "folded") or isinstance(value, gast.Constant) or \
                isinstance(t, Static):
            return None
        op = anno.get(value, "op")
        if op is not None:
            return self.op_tangent(s, op, value, t, z, stmts)
        return self.structural(s, value, t, z)

    # --- ops ---------------------------------------------------------------------------------
    def op_tangent(self, s, op, value, t, z, stmts):
        if not op.differentiable:
            return None
        operands = anno.get(value, "operand_nodes")
        if not any(self.is_active(n) for node in operands.values() if node is not None
                   for n in (node if isinstance(node, tuple) else (node,))):
            return None
        rule = op.rules.get("jvp")
        if rule is not None:
            return self.rule_tangent(op, value, rule, t, z, stmts)
        if op.family == "elementwise":
            return self.elementwise_tangent(op, value, t, z, stmts)
        if op.name in _LINEAR:
            return self.linear_tangent(op, value, operands, t, z)
        if op.name in _MULTILINEAR:
            return self.multilinear_tangent(op, value, operands, t, z, stmts)
        raise NoTangentRule(op.name)

    def tangent_args(self, op, value):
        """The rule's tangent arguments: one per operand (a tuple for a sequence operand)."""
        operands = anno.get(value, "operand_nodes")
        args = []
        for name in op.operands:
            node = operands.get(name)
            if isinstance(node, tuple):
                args.append(gast.Tuple(elts=[self.tangent_or_none(n) for n in node],
                                       ctx=gast.Load()))
            else:
                args.append(self.tangent_or_none(node))
        return args

    def tangent_or_none(self, node):
        return self.tangent_expr(node) if self.is_active(node) else const(None)

    def rule_tangent(self, op, value, rule, t, z, stmts):
        args, keywords = rule_arguments(value, op, anno.clean_copy)
        r = self.names.fresh("r")
        stmts.append(assign(r, _call(self.global_ref(rule, f"jvp_{op.name}"),
                                     [z] + args + self.tangent_args(op, value), keywords)))
        return self.split_result(load(r), t, z, stmts)

    def elementwise_tangent(self, op, value, t, z, stmts):
        """Sum over active operands k of the VJP rule's part k, given tangent k as ``g``."""
        rule = op.rules["vjp"]
        args, keywords = rule_arguments(value, op, anno.clean_copy)
        operands = anno.get(value, "operand_nodes")
        acc = self.names.fresh("tsum")
        stmts.append(assign(acc, const(0.0)))
        ref = self.global_ref(rule, f"vjp_{op.name}")
        for k, name in enumerate(op.operands):
            node = operands.get(name)
            if not self.is_active(node):
                continue
            c = self.names.fresh("c")
            call = _call(anno.clean_copy(ref), [anno.clean_copy(z)] +
                         [anno.clean_copy(a) for a in args] + [load(self.tan(node.id))],
                         keywords)
            stmts.append(assign(c, _sub(call, (k,))))
            self.add_if_not_none(acc, c, stmts)
        return {(): self.like(load(acc), z)}

    @staticmethod
    def add_if_not_none(acc, c, stmts):
        # a rule returns None for "no derivative"; typing decides this test statically
        stmts.append(gast.If(test=gast.Compare(left=load(c), ops=[gast.IsNot()],
                                               comparators=[const(None)]),
                             body=[assign(acc, gast.BinOp(left=load(acc), op=gast.Add(),
                                                          right=load(c)))], orelse=[]))

    def split_result(self, r, t, z, stmts):
        """{path: tangent} from a rule's result ``r`` (None meaning zero), cast like z."""
        tangents = {}
        for path, _ in _leaves(t):
            acc, c = self.names.fresh("tsum"), self.names.fresh("c")
            stmts += [assign(acc, const(0.0)), assign(c, _sub(anno.clean_copy(r), path))]
            self.add_if_not_none(acc, c, stmts)
            tangents[path] = self.like(load(acc), _sub(anno.clean_copy(z), path))
        return tangents

    @staticmethod
    def like(expr, z):
        return _call(_ajx("cotangent_like"), [expr, z])

    def linear_tangent(self, op, value, operands, t, z):
        replace = {}
        for name, node in operands.items():
            for n in (node if isinstance(node, tuple) else (node,)):
                if n is None:
                    continue
                if name == _NOT_LINEAR.get(op.name):
                    continue
                replace[id(n)] = self.tangent_expr(n) if self.is_active(n) else \
                    self.zeros(anno.clean_copy(n))
        return self.substituted(value, replace, t, z)

    def tangent_expr(self, node):
        """The tangent of an active operand: an array, a list of arrays (``jnp.array(xs)``
        of a list built by append), or a tuple or list display of arrays
        (``jnp.stack([a, b])``) as one value shaped like it. An op on another container has
        no rule here."""
        t = anno.get(node, "type")
        if [path for path, _ in _leaves(t)] == [()]:
            return load(self.tan(node.id))
        if isinstance(t, SequenceType) and all(
                isinstance(e, ArrayType) and e.dtype.kind in "fc" for e in t.elts):
            return self.assemble(t, node)
        raise NoTangentRule("an op on a container")

    def multilinear_tangent(self, op, value, operands, t, z, stmts):
        factors = [n for name in op.operands for n in
                   (operands[name] if isinstance(operands[name], tuple) else (operands[name],))]
        acc = self.names.fresh("tsum")
        stmts.append(assign(acc, const(0.0)))
        for f in factors:
            if self.is_active(f):
                term = self.substituted(value, {id(f): self.tangent_expr(f)}, t, None)
                c = self.names.fresh("c")
                stmts.append(assign(c, term[()]))
                stmts.append(assign(acc, gast.BinOp(left=load(acc), op=gast.Add(),
                                                    right=load(c))))
        return {(): self.like(load(acc), z)}

    def substituted(self, value, replace, t, z):
        """The op call ``value`` with the nodes ``replace`` names (by id) replaced: applied
        to tangents. ``z`` given: the result's leaves cast like z's."""
        pairs = []
        new = anno.clean_copy(value, pairs)
        by_copy = {id(c): replace[id(o)] for o, c in pairs if id(o) in replace}

        class Replace(gast.NodeTransformer):
            def visit(self, node):
                if id(node) in by_copy:
                    return by_copy[id(node)]
                return self.generic_visit(node)
        new = Replace().visit(new)
        if z is None:
            return {(): new}
        return {path: self.like(_sub(anno.clean_copy(new), path), _sub(anno.clean_copy(z), path))
                for path, _ in _leaves(t)}

    # --- calls -------------------------------------------------------------------------------
    def call(self, s, target, t):
        value, callee = s.value, anno.get(s.value, "callee")
        sig = inspect.signature(callee.fn)
        bound = sig.bind(*value.args, **{k.arg: k.value for k in value.keywords})
        args, tangents, nodes = [], [], []
        for (name, p), param_type in zip(sig.parameters.items(), callee.arg_types):
            node = bound.arguments.get(name)
            node = node if node is not None else literal_node(p.default)
            nodes.append(node)
            args.append(anno.clean_copy(node))
            if holds_float_list(param_type):  # a list of arrays: its tangent list
                if not self.is_active(node) or [p for p, _ in _leaves(param_type)] != [()]:
                    raise NoTangentRule(f"a list passed to {callee.fn.__name__}()")
                tangents.append(load(self.tan(node.id, ())))
                continue
            tangents.append(self.assemble(param_type, node))
        refuse_captured_derivative(self, s, callee, lambda: self.active)
        # the callee differentiates only the arguments with tangents here
        floats = [k for k, t in enumerate(callee.arg_types) if _leaves(t)]
        wrt = [k for k in floats
               if holds_float_list(callee.arg_types[k]) or self.is_active(nodes[k])]
        fn = forward_function(callee, None if wrt == floats else wrt)
        r = self.names.fresh("r")
        stmts = [assign(r, _call(self.global_ref(fn, fn.__name__), args + tangents)),
                 assign(target, _sub(load(r), (0,)))]
        if holds_float_list(t):  # a list returned (jnp.unstack): its tangent list
            return stmts + [assign(self.tan(target, ()), _sub(load(r), (1,)))]
        for path, _ in _leaves(t):  # (a custom_jvp rule's tangent may be weak)
            stmts.append(assign(self.tan(target, path), self.like(
                _sub(load(r), (1,) + path), _sub(load(target), path))))
        return stmts

    # --- copies, containers, lists -------------------------------------------------------------
    def structural(self, s, value, t, z):
        def from_var(node, prefix=()):
            """The tangents of local ``node``'s leaves, placed under ``prefix``."""
            if not self.is_active(node):
                return {}
            return {prefix + path: load(self.tan(node.id, path))
                    for path, _ in _leaves(anno.get(node, "type"))}

        if isinstance(value, gast.Name):
            return from_var(value)
        if isinstance(value, (gast.Tuple, gast.List)):
            found = {}
            for k, e in enumerate(value.elts):
                found.update(from_var(e, (k,)))
            return found
        if anno.get(value, "tree_build") is not None:  # {"a": x}, P(x, y)
            found = {}
            for key, v in zip(t.keys, anno.get(value, "tree_build")):
                found.update(from_var(v, (key,)))
            return found
        positions = static_slice_positions(value)
        if positions is not None:  # params[:-1]
            if not self.is_active(value.value):
                return None
            return {(k,) + path: load(self.tan(value.value.id, (position,) + path))
                    for k, position in enumerate(positions) for path, _ in _leaves(t.elts[k])}
        if isinstance(value, (gast.Subscript, gast.Attribute)) and \
                isinstance(value.value, gast.Name):
            key = child_key(value)
            if isinstance(anno.get(value.value, "type"), ListType):
                # xs[i] of a list built at run time: the element of each tangent list
                if not self.is_active(value.value):
                    return None
                return {path: gast.Subscript(value=load(self.tan(value.value.id, path)),
                                             slice=anno.clean_copy(value.slice),
                                             ctx=gast.Load()) for path, _ in _leaves(t)}
            if holds_float_list(t):  # (tangents do not follow lists inside containers)
                raise NoTangentRule("a list taken out of a container")
            if runtime_index(value) is not None:
                # xs[i], i known at run time only: index the tuple of element tangents
                if not self.is_active(value.value):
                    return None
                n = len(anno.get(value.value, "type").elts)
                return {path: gast.Subscript(value=gast.Tuple(elts=[
                    load(self.tan(value.value.id, (k,) + path)) for k in range(n)],
                    ctx=gast.Load()), slice=anno.clean_copy(value.slice), ctx=gast.Load())
                    for path, _ in _leaves(t)}
            if key is None:
                raise NoTangentRule("a container indexed at run time")
            if not self.is_active(value.value):
                return None
            return {path: load(self.tan(value.value.id, (key,) + path))
                    for path, _ in _leaves(t)}
        if isinstance(value, gast.BinOp) and isinstance(t, SequenceType):
            found, offset = {}, 0
            for node in (value.left, value.right):
                part = anno.get(node, "type")
                found.update({(offset + p[0],) + p[1:]: e for p, e in from_var(node).items()})
                offset += len(part.elts) if isinstance(part, SequenceType) else len(part.value)
            return found
        if anno.get(value, "scalar_conversion") == "float":
            return {(): self.like(e, z) for e in from_var(value.args[0]).values()}
        if anno.get(value, "list_pop"):
            lst = value.func.value
            return {path: _call(gast.Attribute(value=load(self.tan(lst.id, path)), attr="pop",
                                               ctx=gast.Load()), [])
                    for path, _ in _leaves(t)} if self.is_active(lst) else None
        raise NoTangentRule(f"statement at line {getattr(s, 'lineno', '?')}")


_ALL = "all"  # (every leaf of a value: see ForwardMode.reached)
_OUTPUTS = {}  # (id of a Specialization, wrt) -> (spec, which leaves of its output are active)
_ANALYZING = set()


def _callee_output(callee, value, active):
    """Which leaves of ``callee``'s output depend on its arguments that are active here
    (``ForwardMode.reached``): _ALL where that is not worked out (lists, recursion)."""
    if holds(callee.return_type, holds_float_list) or any(
            holds(t, holds_float_list) for t in callee.arg_types):
        return _ALL
    bound = bound_arguments(callee, value)
    if bound is None:
        return _ALL
    params = [a.id for a in callee.fdef.args.args]
    wrt = frozenset(k for k, name in enumerate(params) if isinstance(bound.get(name), gast.Name)
                    and bound[name].id in active)
    key = (id(callee), wrt)
    hit = _OUTPUTS.get(key)
    if hit is None or hit[0] is not callee:
        if key in _ANALYZING:
            return _ALL
        _ANALYZING.add(key)
        try:
            mode = ForwardMode(callee, wrt)
        except Exception:  # (whatever stops forward mode there is reported when it is built)
            return _ALL
        finally:
            _ANALYZING.discard(key)
        out = callee.fdef.body[-1].value.id
        _OUTPUTS[key] = hit = (callee, None if out not in mode.active else
                               mode.parts.get(out, _ALL))
    return hit[1]
