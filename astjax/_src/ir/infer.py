"""Type inference over A-normal form, with specialization of called user functions.

Walks the structured ANF once per path with an environment ``name -> Type``;
``if`` joins its branches, loops iterate to a fixed point. Every assignment's
value gets annotations: ``type``, and ``op`` (a registry Op) with its ``bound``
arguments, or ``callee`` (a specialized user function). Where a variable has
different dtypes on two paths, a cast is inserted so that every variable has
one type at each merge point (what Numba needs, and what JAX's cond requires).
Errors name the user's line.
"""
import builtins
import functools
import inspect
import operator
import types as pytypes

import gast
import numpy as np

from .. import dtypes, tree_util
from ..errors import ShapeError, TypeCheckError, UserCodeError, checks_at_user_call
from ..frontend import anf as anf_mod

from ..frontend.desugar import LiftedFunction
from ..frontend.naming import copy_loc, load
from ..frontend.partials import method_function, partial_function
from ..frontend.pipeline import PositionalView, VarargView
from ..frontend.synthetic import SyntheticFunction
from ..ops.registry import (FUNCTION_METHODS, METHODS, REGISTRY, Op, function_for_object,
                             op_for_object)
from ..scalar_types import ScalarType
from . import anno, trees
from .static_checks import HANDLERS
from .types import (UNKNOWN, ArrayType, IndexType, ListType, SequenceType, Static, TreeType,
                    Type, as_array_type, is_numeric, type_of_value)

_BINOPS = {gast.Add: "add", gast.Sub: "subtract", gast.Mult: "multiply",
           gast.Div: "true_divide", gast.FloorDiv: "floor_divide", gast.Mod: "remainder",
           gast.Pow: "power", gast.MatMult: "matmul", gast.BitAnd: "bitwise_and",
           gast.BitOr: "bitwise_or", gast.BitXor: "bitwise_xor", gast.LShift: "left_shift",
           gast.RShift: "right_shift"}
_PYOPS = {gast.Add: operator.add, gast.Sub: operator.sub, gast.Mult: operator.mul,
          gast.Div: operator.truediv, gast.FloorDiv: operator.floordiv, gast.Mod: operator.mod,
          gast.Pow: operator.pow, gast.BitAnd: operator.and_, gast.BitOr: operator.or_,
          gast.BitXor: operator.xor, gast.LShift: operator.lshift, gast.RShift: operator.rshift,
          gast.Lt: operator.lt, gast.LtE: operator.le,
          gast.Gt: operator.gt, gast.GtE: operator.ge, gast.Eq: operator.eq,
          gast.NotEq: operator.ne, gast.Is: operator.is_, gast.IsNot: operator.is_not,
          gast.In: lambda a, b: a in b, gast.NotIn: lambda a, b: a not in b}
_CMPOPS = {gast.Lt: "less", gast.LtE: "less_equal", gast.Gt: "greater",
           gast.GtE: "greater_equal", gast.Eq: "equal", gast.NotEq: "not_equal"}
_UNARY = {gast.USub: "negative", gast.UAdd: "positive", gast.Invert: "invert"}
_AT_OPS = {"set": "at_set", "add": "at_add", "subtract": "at_subtract",
           "multiply": "at_multiply", "mul": "at_multiply",
           "divide": "at_divide", "power": "at_power", "min": "at_min", "max": "at_max"}
_MAX_ITERATIONS = 20
_NOT_GIVEN = object()
COMPUTED_PREFIX = "_astjax_computed_"  # arrays computed from constants (computed_array)


def _dyn_int():
    return ArrayType(dtypes.default_int(), (), True)


class Undefined(Type):
    """A variable not assigned on every path to here."""

    def __str__(self):
        return "undefined"


UNDEFINED = Undefined()


class Env(dict):
    def copy(self):
        return Env(self)


class FunctionTyper:
    """Types one specialization of one function (its ANF ``fdef``)."""

    def __init__(self, spec, parsed, fdef, arg_types, module):
        self.spec = spec            # the Specialization record (holds return type)
        self.parsed = parsed
        self.fdef = fdef
        self.arg_types = arg_types
        self.module = module        # the Module being built (callees, captured constants)
        self.returns = []
        self.for_loops = []         # (loop, its range's bounds) around the statement typed
        self.dynamic = []           # ifs and loops around it that run time decides (a raise)

    # --- errors ----------------------------------------------------------------------------
    def error(self, node, message):
        return self.parsed.error(node, message, TypeCheckError)

    # --- entry -----------------------------------------------------------------------------
    def run(self):
        env = Env()
        for arg, t in zip(self.fdef.args.args, self.arg_types):
            env[arg.id] = t
            anno.set_(arg, "type", t)
        self.returns = []
        self.block(self.fdef.body, env)
        types_ = [t for t in self.returns if t is not UNKNOWN]
        result = types_[0] if types_ else UNKNOWN
        for t in types_[1:]:
            result = self.join(result, t, self.fdef, "the return value")
        return result

    def block(self, stmts, env):
        for s in stmts:
            self.statement(s, env)
        return env

    def statement(self, s, env):
        if isinstance(s, gast.Assign):
            t = self.rhs(s.value, env)
            s.value = anno.get(s.value, "replaced_by", s.value)  # (sequence_equal)
            if anno.get(s.value, "computed_array"):  # read from now on as a captured array
                s.value = copy_loc(load(anno.get(s.value, "computed_array")), s.value)
                t = self.atom(s.value, env)
            anno.set_(s.value, "type", t)
            name = s.targets[0].id
            env[name] = t
            anno.set_(s.targets[0], "type", t)
        elif isinstance(s, gast.Expr):
            self.expression_statement(s, env)
        elif isinstance(s, gast.Return):
            t = self.atom(s.value, env)
            anno.set_(s.value, "type", t)
            self.returns.append(t)
            if any(isinstance(t, ListType) for t in self.arg_types):
                self.spec.lists_out = self.lists_out(env)
        elif isinstance(s, gast.If):
            self.if_(s, env)
        elif isinstance(s, gast.For):
            self.loop(s, env)
        elif isinstance(s, gast.While):
            self.loop(s, env)
        elif isinstance(s, gast.Pass):
            pass
        else:
            raise self.error(s, f"cannot type statement {type(s).__name__}")

    # --- control flow ----------------------------------------------------------------------
    def truth(self, node, env):
        t = self.atom(node, env)
        if t is UNKNOWN:
            return ArrayType(dtypes.bool_, (), False)
        if isinstance(t, Static):
            return t
        if isinstance(t, ArrayType):
            if t.ndim != 0:
                raise self.error(node, "the truth value of an array with more than one element "
                                 "is ambiguous: use .any() or .all() for a Python condition, "
                                 "or jnp.where(cond, a, b) to select elementwise")
            return t
        if isinstance(t, (SequenceType, TreeType)):
            return Static(len(t.elts if isinstance(t, SequenceType) else t.children) > 0)
        if isinstance(t, ListType):  # (a list the function makes or changes is rewritten)
            raise self.error(node, f"cannot use a {t} as a condition here (a list "
                             "argument, whose length is a run-time value): write "
                             "len(xs) > 0")
        raise self.error(node, f"cannot use a {t} as a condition")

    def if_(self, s, env):
        test = self.truth(s.test, env)
        anno.set_(s, "static_test", test.value if isinstance(test, Static) else None)
        if isinstance(test, Static):
            # a condition known when generating code picks its branch now (like `axis is None`)
            branch = s.body if test.value else s.orelse
            anno.set_(s, "taken", bool(test.value))
            self.block(branch, env)
            return
        anno.set_(s, "taken", None)
        self.dynamic.append(s)
        try:
            env_body = self.block(s.body, env.copy())
            env_else = self.block(s.orelse, env.copy())
        finally:
            self.dynamic.pop()
        try:
            merged = self.merge(env_body, env_else, s)
        except TypeCheckError as e:
            # constants that differ by branch (state['even' if i % 2 == 0 else 'odd'] in a
            # loop): unrolling a loop around may make the condition a constant, as in JAX
            if any(isinstance(env_body[k], Static) and isinstance(env_else[k], Static)
                   and env_body[k] != env_else[k] for k in set(env_body) & set(env_else)):
                self.unroll_a_loop_around(e)
            raise
        anno.set_(s, "merge", (env_body, env_else, merged))
        env.clear()
        env.update(merged)

    def loop(self, s, env):
        is_for = isinstance(s, gast.For)
        if is_for:
            bounds = [self.atom(a, env) for a in s.iter.args]
            for node, t in zip(s.iter.args, bounds):
                anno.set_(node, "type", t)
                if not _is_int_like(t):
                    raise self.error(node, f"range() needs integers, got {t}")
        head = env.copy()
        # a body that runs at least once whatever the run-time values is not a run-time path
        runs = is_for and all(isinstance(b, Static) for b in bounds) and \
            len(range(*[b.value for b in bounds])) > 0
        if not runs:
            self.dynamic.append(s)
        try:
            self.loop_to_fixed_point(s, head, env, is_for, bounds if is_for else None)
        finally:
            if not runs:
                self.dynamic.pop()

    def loop_to_fixed_point(self, s, head, env, is_for, bounds):
        for _ in range(_MAX_ITERATIONS):
            body_env = head.copy()
            if is_for:
                body_env[s.target.id] = _dyn_int()
                anno.set_(s.target, "type", body_env[s.target.id])
                self.for_loops.append((s, bounds))
            else:
                self.truth(s.test, body_env)
            try:
                self.block(s.body, body_env)
            finally:
                if is_for:
                    self.for_loops.pop()
            new_head = self.merge(head, body_env, s, loop=True)
            if new_head == head:
                break
            head = new_head
        else:
            raise self.error(s, "the types of the variables in this loop do not settle")
        if not is_for:
            test = self.truth(s.test, head)
            if isinstance(test, Static) and test.value:
                raise self.error(s, "this while loop never ends: its condition is always true")
        anno.set_(s, "merge", (env.copy(), body_env, head))
        # after the loop: variables first set in the body keep their body type (>= 1 trip)
        env.clear()
        env.update({k: (v if v is not UNDEFINED else body_env.get(k, v))
                    for k, v in head.items()})

    def merge(self, a, b, node, loop=False):
        out = Env()
        for name in set(a) | set(b):
            ta, tb = a.get(name, UNDEFINED), b.get(name, UNDEFINED)
            if ta is UNDEFINED or tb is UNDEFINED:
                # in a loop head a variable first set in the body is not defined yet
                out[name] = UNDEFINED if loop else UNDEFINED_OR(ta, tb)
                continue
            out[name] = self.join(ta, tb, node, f"variable {name!r}")
        return out

    def join(self, a, b, node, what):
        if a == b:
            return a
        if a is UNKNOWN:
            return b
        if b is UNKNOWN:
            return a
        if isinstance(a, MaybeUndefined) or isinstance(b, MaybeUndefined):
            inner_a = a.inner if isinstance(a, MaybeUndefined) else a
            inner_b = b.inner if isinstance(b, MaybeUndefined) else b
            return MaybeUndefined(self.join(inner_a, inner_b, node, what))
        if is_numeric(a) and is_numeric(b):
            x, y = as_array_type(a), as_array_type(b)
            if x.ndim != y.ndim and (x.ndim == 0 and x.weak or y.ndim == 0 and y.weak):
                # NumPy habit: `acc = 0.0` then `acc = acc + array` (the scalar broadcasts)
                x, y = (y, y) if x.ndim == 0 else (x, x)
            if x.ndim != y.ndim:
                raise self.error(node, f"{what} is an array of rank {x.ndim} on one path and "
                                 f"rank {y.ndim} on another; give it one shape before the "
                                 f"branch or loop (e.g. start from jnp.zeros_like(...))")
            dtype, weak = dtypes.promote_types((x.dtype, x.weak), (y.dtype, y.weak))
            ones = tuple(p and q for p, q in zip(x.ones, y.ones))
            return ArrayType(dtype, ones, weak and x.weak and y.weak)
        if isinstance(a, SequenceType) and isinstance(b, SequenceType) and \
                len(a.elts) == len(b.elts):
            return SequenceType(tuple(self.join(p, q, node, what)
                                      for p, q in zip(a.elts, b.elts)), a.kind)
        if isinstance(a, ListType) and isinstance(b, ListType):
            return ListType(self.join(a.elt, b.elt, node, what))
        if isinstance(a, TreeType) and isinstance(b, TreeType) and a.keys == b.keys and \
                a.node_type is b.node_type:
            return TreeType(a.node_type, a.aux, a.keys,
                            tuple(self.join(p, q, node, what)
                                  for p, q in zip(a.children, b.children)))
        raise self.error(node, f"{what} is {a} on one path and {b} on another; astjax needs "
                         f"one type per variable where paths meet")

    # --- expression statements -----------------------------------------------------------------
    def expression_statement(self, s, env):
        call = s.value
        f = getattr(call, "func", None)
        if isinstance(f, gast.Attribute) and f.attr == "append" and isinstance(f.value, gast.Name):
            lst = self.atom(f.value, env)
            if not isinstance(lst, ListType) or len(call.args) != 1:
                raise self.error(s, f"append() needs a list built in this function, got {lst}")
            item = self.atom(call.args[0], env)
            elt = item if lst.elt is UNKNOWN else self.join(lst.elt, item, s, "list element")
            env[f.value.id] = ListType(elt)
            anno.set_(call, "type", Static(None))
            anno.set_(call, "list_append", True)
            return
        t = self.rhs(call, env)
        s.value = call = anno.get(call, "replaced_by", call)
        anno.set_(call, "type", t)

    # --- right-hand sides ------------------------------------------------------------------
    def atom(self, node, env):
        anno.clear(node)
        if isinstance(node, gast.Constant):
            t = Static(node.value)
        elif isinstance(node, gast.Name) and node.id in env:
            t = env[node.id]
            if t is UNDEFINED:
                raise self.error(node, f"{node.id!r} is used before it is assigned")
            if isinstance(t, MaybeUndefined):
                # set on some paths only: Python raises at run time if it really is unset
                t = t.inner
        elif isinstance(node, (gast.Name, gast.Attribute)):
            t = self.outside(node)
        else:
            raise self.error(node, f"internal: {type(node).__name__} is not an atom")
        anno.set_(node, "type", t)
        return t

    def outside(self, node):
        """The type of a name defined outside the function (global, closure, builtin)."""
        value = self.module.resolve(self.parsed, node)
        if is_array_value(value):
            return self.module.capture(self.parsed, node, value)
        return Static(value)

    def rhs(self, node, env):
        anno.clear(node)  # a loop is typed several times: drop the last pass's facts
        if isinstance(node, (gast.Constant, gast.Name)) or anf_mod_is_ref(node, env):
            return self.atom(node, env)
        if isinstance(node, gast.BinOp):
            return self.binop(node, env)
        if isinstance(node, gast.UnaryOp):
            return self.unaryop(node, env)
        if isinstance(node, gast.Compare):
            return self.compare(node, env)
        if isinstance(node, (gast.Tuple, gast.List)):
            elts = tuple(self.atom(e, env) for e in node.elts)
            if isinstance(node, gast.List) and not elts:
                return ListType(UNKNOWN)
            kind = "tuple" if isinstance(node, gast.Tuple) else "list"
            if all(isinstance(e, Static) for e in elts):
                return Static(tuple(e.value for e in elts) if kind == "tuple"
                              else tuple(e.value for e in elts))
            return SequenceType(elts, kind)
        if isinstance(node, gast.Dict):
            keys = [self.atom(k, env) for k in node.keys]
            if not all(isinstance(k, Static) for k in keys):
                raise self.error(node, "dict keys must be constants")
            values = tuple(self.atom(v, env) for v in node.values)
            order = sorted(range(len(keys)), key=lambda i: keys[i].value)
            anno.set_(node, "tree_build", tuple(node.values[i] for i in order))
            return TreeType(dict, tuple(keys[i].value for i in order),
                            tuple(keys[i].value for i in order), tuple(values[i] for i in order))
        if isinstance(node, gast.Attribute):
            return self.attribute(node, env)
        if isinstance(node, gast.Subscript):
            return self.subscript(node, env)
        if isinstance(node, gast.Call):
            if anf_mod.is_at_update(node):
                return self.at_update(node, env)
            return self.call(node, env)
        raise self.error(node, f"cannot type {type(node).__name__}")

    def apply_op(self, node, op, operands, params, operand_nodes, param_nodes=None):
        """Infer an op application; annotate ``node`` with the op and which AST nodes feed it."""
        if any(t is UNKNOWN for t in operands.values()):
            return UNKNOWN  # a recursive call's result, while its type is being inferred
        try:
            t = op.infer(operands, params)
        except ShapeError as e:
            raise self.error(node, str(e)) from None
        except TypeError as e:
            raise self.error(node, f"{op.name}(): {e}") from None
        anno.set_(node, "op", op)
        anno.set_(node, "operand_types", operands)
        anno.set_(node, "operand_nodes", operand_nodes)
        anno.set_(node, "param_nodes", param_nodes or {})
        resolve = op.rules.get("resolve_params")
        if resolve is not None:  # params the types decide (squeeze's axes)
            resolved = resolve(operands, params)
            anno.set_(node, "resolved_params", {k: v for k, v in resolved.items()
                                                if params.get(k, _NOT_GIVEN) != v})
        return t

    def binop(self, node, env):
        a, b = self.atom(node.left, env), self.atom(node.right, env)
        if isinstance(a, Static) and isinstance(b, Static):
            return self.fold(node, _PYOPS[type(node.op)], a, b)
        if isinstance(a, ListType) or isinstance(b, ListType):
            return self.list_binop(node, a, b)
        if isinstance(a, SequenceType) or isinstance(b, SequenceType):
            return self.sequence_binop(node, a, b)
        op = REGISTRY[_BINOPS[type(node.op)]]
        return self.apply_op(node, op, {op.operands[0]: a, op.operands[1]: b}, {},
                             {op.operands[0]: node.left, op.operands[1]: node.right})

    def list_binop(self, node, a, b):
        """``xs + ys`` and ``xs * n`` of lists whose length is known at run time only (a
        comprehension over an array's rows): a generated loop of appends."""
        def is_list(t):
            return isinstance(t, ListType) or (isinstance(t, SequenceType) and t.kind == "list")
        call = copy_loc(gast.Call(func=None, args=[], keywords=[]), node)
        if isinstance(node.op, gast.Add) and is_list(a) and is_list(b):
            anno.set_(node, "replaced_by", call)  # statement() puts the call in its place
            return self.call_generated(call, _LIST_CONCAT, [node.left, node.right], [a, b])
        if isinstance(node.op, gast.Mult):
            (xs, xs_node), n = ((a, node.left), b) if is_list(a) else ((b, node.right), a)
            if isinstance(n, Static) and type(n.value) is int:
                anno.set_(node, "replaced_by", call)
                return self.call_generated(call, _LIST_REPEAT.format(n=n.value), [xs_node],
                                           [xs])
        raise self.error(node, f"unsupported operation between {a} and {b}")

    def sequence_binop(self, node, a, b):
        """Tuple arithmetic (``x.shape + (1,)``, ``(n,) * 2``) on tuples of known length."""
        def elts(t):
            if isinstance(t, SequenceType):
                return t.elts
            if isinstance(t, Static) and isinstance(t.value, tuple):
                return tuple(Static(v) for v in t.value)
            return None
        if isinstance(node.op, gast.Add) and elts(a) is not None and elts(b) is not None:
            return SequenceType(elts(a) + elts(b))
        if isinstance(node.op, gast.Mult):
            seq, n = (a, b) if elts(a) is not None else (b, a)
            if isinstance(n, Static) and isinstance(n.value, int):
                return SequenceType(elts(seq) * n.value)
        raise self.error(node, f"unsupported operation between {a} and {b}")

    def fold(self, node, fn, a, b):
        try:
            value = fn(a.value, b.value)
        except Exception as e:  # the user's Python would raise the same
            raise self.error(node, f"{type(e).__name__}: {e}") from None
        anno.set_(node, "folded", value)
        return Static(value)

    def unaryop(self, node, env):
        t = self.atom(node.operand, env)
        if isinstance(t, Static):
            fn = {gast.Not: operator.not_, gast.USub: operator.neg, gast.UAdd: operator.pos,
                  gast.Invert: operator.invert}[type(node.op)]
            try:
                value = fn(t.value)
            except Exception as e:
                raise self.error(node, f"{type(e).__name__}: {e}") from None
            anno.set_(node, "folded", value)
            return Static(value)
        if isinstance(node.op, gast.Not):
            t = self.truth(node.operand, env)
            return ArrayType(dtypes.bool_, (), False)
        op = REGISTRY[_UNARY[type(node.op)]]
        return self.apply_op(node, op, {op.operands[0]: t}, {}, {op.operands[0]: node.operand})

    def compare(self, node, env):
        a, b = self.atom(node.left, env), self.atom(node.comparators[0], env)
        cmp = type(node.ops[0])
        if isinstance(a, Static) and isinstance(b, Static):
            return self.fold(node, _PYOPS[cmp], a, b)
        if cmp in (gast.Is, gast.IsNot):
            # a dynamic value is never None / a given constant: `x is None` is static False
            value = (cmp is gast.IsNot)
            anno.set_(node, "folded", value)
            return Static(value)
        if cmp in (gast.In, gast.NotIn):
            raise self.error(node, "'in' needs values known when the code is generated")
        if cmp in (gast.Eq, gast.NotEq) and (isinstance(a, SequenceType) or
                                             isinstance(b, SequenceType)):
            return self.sequence_equal(node, a, b, cmp is gast.NotEq)
        op = REGISTRY[_CMPOPS[cmp]]
        return self.apply_op(node, op, {op.operands[0]: a, op.operands[1]: b}, {},
                             {op.operands[0]: node.left, op.operands[1]: node.comparators[0]})

    def sequence_equal(self, node, a, b, negate):
        """``x.shape == y.shape``: tuples of run-time ints, equal where every element is
        (Python's element-by-element ``and``, in a generated function)."""
        def length(t):
            return len(t.elts) if isinstance(t, SequenceType) else \
                len(t.value) if isinstance(t, Static) and isinstance(t.value, tuple) else None
        if length(a) is None or length(b) is None:
            raise self.error(node, f"cannot compare {a} with {b}")
        if length(a) != length(b):
            anno.set_(node, "folded", negate)
            return Static(negate)
        test = " and ".join([f"_a[{k}] == _b[{k}]" for k in range(length(a))]) or "True"
        test = f"not ({test})" if negate else test
        call = copy_loc(gast.Call(func=None, args=[], keywords=[]), node)
        anno.set_(node, "replaced_by", call)  # statement() puts the call in its place
        return self.call_generated(call, f"def tuple_equal(_a, _b):\n    return {test}\n",
                                   [node.left, node.comparators[0]], [a, b])

    def attribute(self, node, env):
        t = self.atom(node.value, env)
        if t is UNKNOWN:
            return UNKNOWN
        attr = node.attr
        if isinstance(t, ArrayType):
            if attr == "shape":
                return SequenceType(tuple(Static(1) if one else _dyn_int() for one in t.ones))
            if attr == "ndim":
                return Static(t.ndim)
            if attr == "dtype":
                return Static(t.dtype)
            if attr == "size":
                return Static(1) if all(t.ones) else _dyn_int()
            if attr in ("T", "real", "imag", "mT"):
                name = {"T": "transpose", "mT": "matrix_transpose"}.get(attr, attr)
                op = REGISTRY.get(name)
                if op is None:
                    raise self.error(node, f"x.{attr} is not supported yet")
                return self.apply_op(node, op, {op.operands[0]: t}, {},
                                     {op.operands[0]: node.value})
            raise self.error(node, f"arrays have no attribute {attr!r} usable here")
        if isinstance(t, TreeType) and t.node_type is not dict:
            position = trees.child_position(t, attr) if attr in t.keys else \
                trees.attribute_position(t, attr)
            if position is None:
                known, value = trees.static_attribute(t, attr)
                if known:  # a meta field: static data
                    anno.set_(node, "folded", value)
                    return Static(value)
                raise self.error(node, f"{t} has no attribute {attr!r} that astjax can read "
                                 f"(it reads the fields and static data of pytree nodes)")
            anno.set_(node, "tree_child", position)
            return t.children[position]
        if isinstance(t, Static):
            try:
                value = getattr(t.value, attr)
            except AttributeError as e:
                raise self.error(node, str(e)) from None
            if is_array_value(value):  # obj.w of a constant obj (a bound method's self)
                return self.module.capture(self.parsed, node, value)
            anno.set_(node, "folded", value)
            return Static(value)
        raise self.error(node, f"{t} has no attribute {attr!r}")

    # --- indexing -------------------------------------------------------------------------------
    def index_param(self, idx, env):
        """The abstract view of an index: Python structure with types for dynamic parts."""
        if isinstance(idx, gast.Slice):
            parts = [None if p is None else self.index_param(p, env)
                     for p in (idx.lower, idx.upper, idx.step)]
            return slice(*parts)
        if isinstance(idx, gast.Tuple):
            return tuple(self.index_param(e, env) for e in idx.elts)
        t = self.atom(idx, env)
        return param_view(t)

    def subscript(self, node, env):
        t = self.atom(node.value, env)
        if t is UNKNOWN:
            return UNKNOWN
        if isinstance(t, ArrayType):
            op = REGISTRY["getitem"]
            return self.apply_op(node, op, {op.operands[0]: t},
                                 {"index": self.index_param(node.slice, env)},
                                 {op.operands[0]: node.value}, {"index": node.slice})
        idx = self.index_param(node.slice, env)
        if isinstance(t, Static) and hasattr(t.value, "index_source") and \
                not _constant_index(idx):
            return self.index_call(node, t.value, env)
        if isinstance(t, Static) and t.value is np.s_:
            return IndexType(idx)  # an index built at run time, e.g. for a VJP rule
        if isinstance(t, Static) and _constant_index(idx):
            try:
                value = t.value[idx]
            except Exception as e:  # the user's Python would raise the same
                raise self.error(node, f"{type(e).__name__}: {e}") from None
            if is_array_value(value):  # jnp.mgrid[0:3, 0:2], jnp.r_[1.0, 2.0]
                return self.computed_array(node, value)
            anno.set_(node, "folded", value)
            return Static(value)
        if isinstance(t, (Static, SequenceType)) and isinstance(idx, ArrayType):
            self.unroll_if_loop_counter(node, t)
        if isinstance(t, SequenceType):
            if isinstance(idx, int):
                try:
                    return t.elts[idx]
                except IndexError:
                    raise self.error(node, f"tuple index {idx} out of range "
                                     f"(length {len(t.elts)})") from None
            if isinstance(idx, slice) and all(not isinstance(p, Type) for p in
                                              (idx.start, idx.stop, idx.step)):
                return SequenceType(t.elts[idx], t.kind)
            if isinstance(idx, ArrayType):
                joined = t.elts[0]
                for e in t.elts[1:]:
                    joined = self.join(joined, e, node, "an element indexed at run time")
                return joined
        if isinstance(t, ListType):
            if isinstance(idx, (int, ArrayType)):
                return t.elt
            return t
        if isinstance(t, TreeType):
            position = trees.child_position(t, idx)
            if position is None and type(idx) is int and trees.is_namedtuple_class(t.node_type):
                raise self.error(node, f"tuple index {idx} out of range ({t.node_type.__name__} "
                                 f"has {len(t.keys)} fields)")
            if position is None:
                raise self.error(node, f"key {idx!r} not found in {t}")
            anno.set_(node, "tree_child", position)
            return t.children[position]
        raise self.error(node, f"cannot index {t} with {idx!r}")

    def index_call(self, node, obj, env):
        """``jnp.r_[x, 0, y]`` with values known at run time: the call, with those values,
        of the function ``obj.index_source`` writes for the constant items and the others'
        ndims; statement() puts it in the subscript's place."""
        import astjax.numpy as jnp
        elts = node.slice.elts if isinstance(node.slice, gast.Tuple) else [node.slice]
        items, ndims, passed = [], {}, []
        for e in elts:
            if isinstance(e, gast.Slice):
                parts = [None if p is None else self.atom(p, env) for p in
                         (e.lower, e.upper, e.step)]
                if not all(p is None or isinstance(p, Static) for p in parts):
                    raise self.error(node, "a slice in this index needs constant bounds (it "
                                     "is an arange, whose length must be known)")
                items.append(slice(*(p if p is None else p.value for p in parts)))
                continue
            t = self.atom(e, env)
            if isinstance(t, Static):
                items.append(t.value)
            elif isinstance(t, ArrayType):
                items.append(f"a{len(passed)}")
                ndims[items[-1]] = t.ndim
                passed.append(e)
            else:
                raise self.error(node, f"cannot index {obj} with {t}")
        try:
            source = obj.index_source(items, ndims)
        except ValueError as e:
            raise self.error(node, str(e)) from None
        call = copy_loc(gast.Call(func=None, args=[], keywords=[]), node)
        anno.set_(node, "replaced_by", call)
        return self.call_generated(call, source, passed, [self.atom(a, env) for a in passed],
                                   {"_jnp": jnp})

    def unroll_if_loop_counter(self, node, t):
        """``seq[i]`` with ``i`` the counter of a loop around it with constant bounds, and
        ``seq`` constants (``for fun in funs``) or values without one common type: the
        loop is unrolled (ir/unroll.py), as JAX's tracing unrolls it."""
        from .unroll import Unroll, trips_if_unrollable
        if isinstance(t, Static):
            if not isinstance(t.value, (list, tuple)) or any(is_array_value(v) for v in t.value):
                return
        else:
            try:
                joined = t.elts[0]
                for e in t.elts[1:]:
                    joined = self.join(joined, e, node, "an element indexed at run time")
                return
            except TypeCheckError:
                pass
        for loop, bounds in reversed(self.for_loops):
            if isinstance(node.slice, gast.Name) and loop.target.id == node.slice.id:
                trips = trips_if_unrollable(loop, bounds)
                if trips is not None:
                    raise Unroll(self.fdef, loop, trips, self.error(
                        node, f"cannot index {t} with the loop's counter, a value known only "
                              f"at run time (the loop is too long to unroll)"))
                return

    def unroll_a_loop_around(self, error):
        """Raise ``Unroll`` for the innermost loop around that can be unrolled, if any."""
        from .unroll import Unroll, trips_if_unrollable
        for loop, bounds in reversed(self.for_loops):
            trips = trips_if_unrollable(loop, bounds)
            if trips is not None:
                raise Unroll(self.fdef, loop, trips, error)

    def at_update(self, node, env):
        method = node.func.attr
        sub = node.func.value
        x = self.atom(sub.value.value, env)
        if method == "set" and (isinstance(x, TreeType) and x.node_type is dict or
                                isinstance(x, Static) and type(x.value) is dict):
            return self.dict_set(node, x, env)
        if method == "set" and isinstance(x, SequenceType) and x.kind == "list":
            return self.list_set(node, x, env)
        if not isinstance(x, ArrayType):
            raise self.error(node, f".at[] needs an array, got {x}")
        index = self.index_param(sub.slice, env)
        target = sub.value.value
        mode = self.at_keywords(node, method, env)
        if mode in ("clip", "fill", "drop"):
            return self.at_mode(node, x, method, index, mode == "clip", env)
        if method == "get":
            op = REGISTRY["getitem"]
            return self.apply_op(node, op, {op.operands[0]: x}, {"index": index},
                                 {op.operands[0]: target}, {"index": sub.slice})
        op = REGISTRY[_AT_OPS[method]]
        if len(node.args) != 1:
            raise self.error(node, f".at[].{method}() takes one value")
        v = self.atom(node.args[0], env)
        return self.apply_op(node, op, {op.operands[0]: x, op.operands[1]: v}, {"index": index},
                             {op.operands[0]: target, op.operands[1]: node.args[0]},
                             {"index": sub.slice})

    def at_keywords(self, node, method, env):
        """The mode of ``x.at[idx].<method>(..., mode=, fill_value=)`` (the hints
        indices_are_sorted and unique_indices are accepted and not needed)."""
        from ..ops import index_modes
        known = {"mode", "indices_are_sorted", "unique_indices"} | \
            ({"fill_value"} if method == "get" else set())
        kw = {k.arg: self.atom(k.value, env) for k in node.keywords}
        for name in kw:
            if name not in known:
                raise self.error(node, f".at[].{method}() got an unexpected keyword argument "
                                 f"{name!r}")
        mode = kw.get("mode", Static(None))
        if not (isinstance(mode, Static) and (mode.value is None or isinstance(mode.value,
                                                                                str))):
            raise self.error(node, f".at[].{method}(): mode must be a constant string")
        try:
            index_modes.check(mode.value, f"x.at[idx].{method}()")
        except ShapeError as e:
            raise self.error(node, str(e)) from None
        if "fill_value" in kw and mode.value not in ("fill", "drop"):
            raise self.error(node, "x.at[idx].get(): fill_value needs mode='fill'")
        return mode.value

    def at_mode(self, node, x, method, index, clip, env):
        """``x.at[idx].<method>(...)`` in mode clip, fill or drop: the call of a function
        index_modes writes for the index's structure, with the index's atoms passed."""
        from ..ops import index_modes
        import astjax.numpy as jnp
        sub = node.func.value
        passed = [sub.value.value] + list(node.args)
        atoms = []

        def text(e):
            if isinstance(e, gast.Constant):
                return "..." if e.value is Ellipsis else repr(e.value)
            atoms.append(e)
            return f"a{len(atoms) - 1}"
        items = index if isinstance(index, tuple) else (index,)
        if isinstance(sub.slice, gast.Tuple):
            texts = [":".join("" if p is None else text(p) for p in
                              (e.lower, e.upper, e.step)) if isinstance(e, gast.Slice)
                     else text(e) for e in sub.slice.elts]
        elif isinstance(sub.slice, gast.Slice):
            texts = [":".join("" if p is None else text(p) for p in
                              (sub.slice.lower, sub.slice.upper, sub.slice.step))]
        elif isinstance(index, tuple):  # a tuple variable of index items
            name = text(sub.slice)
            texts = [f"{name}[{k}]" for k in range(len(index))]
        else:
            texts = [text(sub.slice)]
        try:
            axes = index_modes.integer_axes(items, x.ndim, f"x.at[idx].{method}()")
        except ShapeError as e:
            raise self.error(node, str(e)) from None
        passed += atoms
        if method == "get" and not clip:
            fill = next((k.value for k in node.keywords if k.arg == "fill_value"), None)
            passed.append(fill if fill is not None else gast.Constant(
                value=index_modes.default_fill(x.dtype), kind=None))
        source = index_modes.source(method, texts, axes, x.ndim, clip)
        return self.call_generated(node, source, passed, [self.atom(a, env) for a in passed],
                                   {"_jnp": jnp})

    def starred_call(self, node, env):
        """``f(a, *xs, k=v)`` with ``xs`` a tuple or list of known length: the call of a
        function generated for these lengths, ``star_call(f, a, xs, v)``, which returns
        ``f(a, xs[0], xs[1], k=v)`` (a method's receiver is passed in ``f``'s place)."""
        f = node.func
        method = isinstance(f, gast.Attribute) and not anf_mod_is_ref(f, env)
        display = f.value.kind if isinstance(f, gast.Constant) and \
            isinstance(f.value, anf_mod.Display) else None  # (*xs, y): no callee
        head = f.value if method else f
        passed, params, items = ([], [], []) if display else ([head], ["_f"], [])
        for k, a in enumerate(node.args):
            params.append(f"_a{k}")
            if not isinstance(a, gast.Starred):
                passed.append(a)
                items.append(params[-1])
                continue
            passed.append(a.value)
            t = self.atom(a.value, env)
            n = len(t.elts) if isinstance(t, SequenceType) else \
                len(t.value) if isinstance(t, Static) and isinstance(t.value, (tuple, list)) \
                else None
            if n is None and isinstance(t, ArrayType):
                raise self.error(node, _rows_of_array(f"*{t}"))
            if n is None:
                raise self.error(node, f"*{t}: astjax unpacks tuples and lists whose length "
                                 f"is known while it generates code (not a list built by "
                                 f"append, whose length is a run-time value)")
            items += [f"{params[-1]}[{i}]" for i in range(n)]
        for k, kw in enumerate(node.keywords):
            if kw.arg is None:
                raise self.error(node, "astjax cannot compile **kwargs in calls")
            params.append(f"_k{k}")
            passed.append(kw.value)
            items.append(f"{kw.arg}={params[-1]}")
        target = f"_f.{f.attr}" if method else "_f"
        built = f"{target}({', '.join(items)})" if not display else \
            f"({''.join(i + ', ' for i in items)})" if display == "tuple" else \
            f"[{', '.join(items)}]"
        source = f"def star_{display or 'call'}({', '.join(params)}):\n    return {built}\n"
        return self.call_generated(node, source, passed, [self.atom(a, env) for a in passed])

    def call_generated(self, node, source, passed, types, namespace=None, located=False):
        """Make ``node`` a call, with the atoms ``passed`` (typed ``types``), of the function
        ``source`` defines (one per program and source; its names resolve in ``namespace``;
        ``located``: one per line too, what it raises reported at ``node``'s)."""
        from ..frontend.synthetic import from_source
        located = located and getattr(node, "lineno", None) is not None
        key = (source, node.lineno) if located else source
        helper = self.module.dict_setters.get(key)  # (generated helpers, by source)
        if helper is None:
            name = source[len("def "):source.index("(")]
            helper = self.module.dict_setters[key] = from_source(
                name, source, namespace or {}, self.parsed)
            for n in gast.walk(helper.fdef) if located else ():
                if isinstance(n, (gast.stmt, gast.expr)):
                    n.lineno, n.col_offset = node.lineno, node.col_offset
            # a name that resolves to it in every function of the program (vmap prints a
            # call of values it does not batch as source)
            helper.ref = f"_astjax_{name}_{len(self.module.hoisted)}"
            self.module.hoisted[helper.ref] = helper
        node.func = gast.Name(id=helper.ref, ctx=gast.Load(), annotation=None,
                              type_comment=None)
        node.args, node.keywords = list(passed), []
        return self.user_call(node, helper, list(types), {})

    def list_set(self, node, xs, env):
        """``xs[i] = v`` on a list of known length (a parameter: desugaring rewrites those
        the function makes) with a constant ``i``: a new list, ``v`` in ``i``'s place."""
        sub = node.func.value
        n = len(xs.elts)
        if isinstance(sub.slice, gast.Slice):
            return self.list_slice_set(node, xs, env)
        index = self.atom(sub.slice, env)
        if not (isinstance(index, Static) and type(index.value) is int):
            raise self.error(node, f"assigning to a list passed in needs a constant index "
                             f"here, got {index}")
        if not -n <= index.value < n:
            raise self.error(node, "list assignment index out of range")
        k = index.value % n
        items = ", ".join("v" if j == k else f"xs[{j}]" for j in range(n))
        value = node.args[0]
        return self.call_generated(node, f"def list_set(xs, v):\n    return [{items}]\n",
                                   [sub.value.value, value], [xs, self.atom(value, env)])

    def list_slice_set(self, node, xs, env):
        """``xs[a:b] = ys`` on a list of known length passed in, with constant bounds and
        ``ys`` of known length: a new list, as list_set makes."""
        sub, value = node.func.value, node.args[0]
        bounds = [Static(None) if b is None else self.atom(b, env)
                  for b in (sub.slice.lower, sub.slice.upper, sub.slice.step)]
        v = self.atom(value, env)
        if not (all(isinstance(b, Static) and (b.value is None or type(b.value) is int)
                    for b in bounds) and bounds[2].value is None and
                isinstance(v, SequenceType)):
            raise self.error(node, "assigning to a slice of a list passed in needs constant "
                             "bounds, no step and a list or tuple of known length here; "
                             "or copy it into a list the function makes (xs = list(xs))")
        n = len(xs.elts)
        lo, hi, _ = slice(bounds[0].value, bounds[1].value).indices(n)
        items = [f"xs[{j}]" for j in range(lo)] + [f"v[{k}]" for k in range(len(v.elts))] + \
            [f"xs[{j}]" for j in range(max(hi, lo), n)]
        source = f"def list_set(xs, v):\n    return [{', '.join(items)}]\n"
        return self.call_generated(node, source, [sub.value.value, value], [xs, v])

    def dict_set(self, node, d, env):
        """``d[k] = v`` on a dict (desugared as ``d = d.at[k].set(v)``, as for arrays): a new
        dict with ``k``'s entry ``v``, built by a generated function for these keys (the
        node becomes a call of it)."""
        from ..frontend.synthetic import from_source
        sub = node.func.value
        key = self.atom(sub.slice, env)
        if not (isinstance(key, Static) and type(key.value) in (str, int, bool)):
            raise self.error(node, f"a dict's key must be a constant (str or int) here, "
                             f"got {key}")
        keys = list(d.keys) if isinstance(d, TreeType) else list(d.value)
        if not all(type(k) in (str, int, bool) for k in keys):
            raise self.error(node, "assigning to a dict whose keys are not str or int")
        entries = [f"{k!r}: v" if k == key.value else f"{k!r}: d[{k!r}]" for k in keys]
        if key.value not in keys:
            entries.append(f"{key.value!r}: v")
        source = "def dict_set(d, v):\n    return {" + ", ".join(entries) + "}\n"
        helper = self.module.dict_setters.get(source)
        if helper is None:
            helper = self.module.dict_setters[source] = from_source(
                "dict_set", source, {}, self.parsed)
        value = node.args[0]
        node.func = gast.Constant(value=helper, kind=None)
        node.args = [sub.value.value, value]
        node.keywords = []
        return self.user_call(node, helper, [d, self.atom(value, env)], {})

    # --- calls ------------------------------------------------------------------------------------
    def call(self, node, env):
        if any(k.arg is None for k in node.keywords):
            self.expand_double_star(node, env)
        if any(isinstance(a, gast.Starred) for a in node.args):
            return self.starred_call(node, env)
        f = node.func
        if isinstance(f, gast.Attribute) and not anf_mod_is_ref(f, env):
            return self.method_call(node, env)
        fn = self.atom(f, env)
        if isinstance(fn, TreeType) and isinstance(f, gast.Name) and \
                isinstance(getattr(fn.node_type, "__call__", None), pytypes.FunctionType):
            # a pytree instance called, interp(x): its __call__ method
            node.func = gast.Attribute(value=f, attr="__call__", ctx=gast.Load())
            return self.method_call(node, env)
        if closure_function(fn) is not None:
            # a nested def/lambda with captured values: call its lifted function with the
            # closure tuple first (the node is rewritten once: `f._astjax_closure_call(f, ...)`)
            node.args.insert(0, gast.Name(id=f.id, ctx=gast.Load(), annotation=None,
                                         type_comment=None))
            node.func = gast.Attribute(value=f, attr=CLOSURE_CALL, ctx=gast.Load())
            return self.method_call(node, env)
        if not isinstance(fn, Static):
            raise self.error(node, f"cannot call a value of type {fn}")
        target = fn.value
        args = [self.atom(a, env) for a in node.args]
        kwargs = {k.arg: self.atom(k.value, env) for k in node.keywords}
        if args and closure_function(args[0]) is not None and \
                all(isinstance(a, Static) for a in args[1:] + list(kwargs.values())):
            made = self.transform_of_closure(node, target, args, kwargs, env)
            if made is not None:
                return made
        if isinstance(target, Op) or op_for_object(target) is not None:
            op = target if isinstance(target, Op) else op_for_object(target)
            if op.tree_function is not None and args and \
                    isinstance(args[0], (TreeType, SequenceType, ListType)):
                return self.user_call(node, op.tree_function, args, kwargs)
            if op.keyword_call(kwargs) is not None:  # jnp.sum(x, where=m)
                return self.user_call(node, op.keyword_call(kwargs), args, kwargs)
            return self.op_call(node, op, args, kwargs, node.args,
                                {k.arg: k.value for k in node.keywords})
        if isinstance(target, functools.partial):
            return self.user_call(node, partial_function(target), args, kwargs)
        if target in _BUILTINS:
            return _BUILTINS[target](self, node, args, kwargs)
        if isinstance(target, type) and issubclass(target, np.generic) or \
                isinstance(target, (np.dtype, ScalarType)):  # np.int32(x), jnp.int32(x)
            dtype = gast.Constant(value=str(np.dtype(target)), kind=None)
            if len(args) == 1 and (isinstance(args[0], (SequenceType, ListType)) or isinstance(
                    args[0], Static) and isinstance(args[0].value, (tuple, list))):
                # np.float32([1.0, 2.0]): an array of that dtype, as jnp.asarray(.., dtype)
                anno.set_(dtype, "type", Static(np.dtype(target)))
                return self.op_call(node, REGISTRY["asarray"], args, {"dtype": Static(
                    np.dtype(target))}, list(node.args), {"dtype": dtype})
            return self.op_call(node, REGISTRY["astype"], args + [Static(np.dtype(target))], {},
                                list(node.args) + [dtype], {})
        if hasattr(target, "function_for") and not isinstance(target, type):
            # grad(f) etc. called from compiled code (the class Grad itself is not one)
            return self.user_call(node, target, args, kwargs)
        callee = function_for_object(target) or getattr(target, "__astjax_wrapped__", None) \
            or target  # np.sort -> jnp.sort
        if callee is not target and hasattr(callee, "function_for"):  # np.result_type
            return self.user_call(node, callee, args, kwargs)
        if isinstance(callee, (pytypes.FunctionType, SyntheticFunction, PositionalView,
                               VarargView)):  # (a view: a transform's generated call)
            t = self.user_call(node, callee, args, kwargs)
            self.lists_filled_by_callee(node, env)
            return t
        if trees.is_namedtuple_class(target) or isinstance(target, trees.TreeBuilder):
            return self.tree_build(node, target, env)  # (of constants too, as a dict display)
        from ..random.checks import is_known, static_helper
        if isinstance(target, static_helper):  # a known tuple (np.shape of a 0-d array) is
            args = [_as_static(a) for a in args]  # a constant for a generation-time helper
            kwargs = {k: _as_static(v) for k, v in kwargs.items()}
        if all(isinstance(a, Static) for a in args + list(kwargs.values())):
            # a pure function of constants (math.sqrt(2), len(("a",)), vmap(f)): evaluate
            # now, once per program for equal arguments, so that a transform built in a loop
            # body is one static value in every copy of it (peeled trips, derivative sweeps)
            if _draws_random_numbers(target):
                raise self.error(node, f"{getattr(target, '__name__', target)}() draws random "
                                 f"numbers: in a transformed function it would run once, "
                                 f"while the code is generated, and every call would see the "
                                 f"same values; use astjax.random with a key")
            key = (Static(target), tuple(args), tuple(sorted(kwargs.items())))
            value = self.module.folded_calls.get(key, _NOT_FOLDED)
            if value is _NOT_FOLDED:
                value = self.module.folded_calls[key] = target(
                    *[a.value for a in args], **{k: v.value for k, v in kwargs.items()})
            if is_array_value(value):  # scipy.special.jv(0, (1.0, 2.0)): a constant array
                return self.computed_array(node, value)
            anno.set_(node, "folded", value)
            return Static(value)
        if trees.is_registered_class(target):
            return self.registered_build(node, target, args, kwargs, env)
        if isinstance(target, pytypes.MethodType):  # obj.f(x) of an obj from outside
            return self.user_call(node, method_function(target), args, kwargs)
        self.refuse_transformed_closure(node, target, args, kwargs)
        if isinstance(target, static_helper):  # a check in astjax.numpy code: name the argument
            bound = inspect.signature(target.fn).bind(*args, **kwargs).arguments
            names = [k for k, t in bound.items()  # (a tuple: a *args parameter's types)
                     if not (all(map(is_known, t)) if isinstance(t, tuple) else is_known(t))]
            raise self.error(node, f"{', '.join(names)} must be known when the code is "
                             f"generated (a Python number or tuple, a shape, a static "
                             f"argument), not a value computed at run time")
        raise self.error(node, f"astjax cannot call {getattr(target, '__name__', target)!r} on "
                         f"values computed at run time; use astjax.numpy functions")

    def registered_build(self, node, cls, args, kwargs, env):
        """``C(a, b)`` for a class registered with tree_util (a dataclass, a flax-style
        module): C's own ``__init__`` runs now, on placeholders for the values known only
        at run time, and its flatten function says which argument became which child (as
        JAX traces it). A TreeType; its children are the arguments it keeps as they are."""
        placeholders = {}

        def value(t, arg_node):
            if isinstance(t, Static):
                return t.value
            mark = trees.Placeholder()
            placeholders[id(mark)] = arg_node
            return mark
        try:
            obj = cls(*[value(t, n) for t, n in zip(args, node.args)],
                      **{k.arg: value(kwargs[k.arg], k.value) for k in node.keywords})
            children, keys, aux = tree_util.flatten_one_level(obj)
        except Exception as e:
            raise self.error(node, f"building a {cls.__name__} (a registered pytree class) "
                             f"from values known only at run time: its __init__ or flatten "
                             f"function raised {type(e).__name__}: {e}. Build it outside and "
                             f"pass it in, or use a namedtuple or a dict") from None
        child_nodes = []
        for child in children:
            if id(child) in placeholders:
                child_nodes.append(placeholders[id(child)])
            elif trees.Placeholder.inside(child):
                raise self.error(node, f"{cls.__name__}(...) computes a child from an "
                                 f"argument known only at run time; astjax keeps arguments "
                                 f"as children unchanged: compute it before the call")
            else:  # a constant child (a default)
                child_nodes.append(gast.Constant(value=child, kind=None))
                self.atom(child_nodes[-1], env)
        if trees.Placeholder.inside(aux):
            raise self.error(node, f"{cls.__name__}(...) puts an argument known only at run "
                             f"time into its static (aux) data")
        anno.set_(node, "tree_build", tuple(child_nodes))
        return TreeType(cls, aux, tuple(keys), tuple(anno.get(c, "type") for c in child_nodes))

    def tree_build(self, node, target, env):
        """``P(a, b=c)`` for a namedtuple class P (or a TreeBuilder's call in generated
        code): a TreeType; the call is rewritten to pass its children in field order."""
        import inspect
        if isinstance(target, trees.TreeBuilder):
            if node.keywords:
                raise self.error(node, "internal: a TreeBuilder takes its children only")
            children = list(node.args)
            node_type, aux, keys = target.node_type, target.aux, target.keys(len(children))
        else:
            try:
                bound = inspect.signature(target).bind(*node.args, **{
                    k.arg: k.value for k in node.keywords})
            except TypeError as e:
                raise self.error(node, f"{target.__name__}(): {e}") from None
            children = []
            for field in target._fields:
                child = bound.arguments.get(field)
                if child is None:  # a field's default: a constant
                    child = gast.Constant(value=target._field_defaults[field], kind=None)
                    self.atom(child, env)
                children.append(child)
            node_type, aux, keys = target, target, target._fields
            node.args, node.keywords = list(children), []
        anno.set_(node, "tree_build", tuple(children))
        return TreeType(node_type, aux, tuple(keys),
                        tuple(anno.get(c, "type") for c in children))

    def expand_double_star(self, node, env):
        """``f(x, **kw)`` with ``kw`` a dict known while generating code (a global or
        captured dict of constants): its items become keywords of the call, once."""
        keywords = []
        for k in node.keywords:
            if k.arg is not None:
                keywords.append(k)
                continue
            t = self.atom(k.value, env)
            mapping = t.value if isinstance(t, Static) else None
            if not isinstance(mapping, dict) or not all(
                    isinstance(key, str) for key in mapping) or not all(
                    isinstance(v, (bool, int, float, complex, str, type(None), tuple))
                    for v in mapping.values()):
                raise self.error(node, f"**{t}: astjax passes **kwargs of a dict of constants "
                                 f"known while it generates code (a global or captured dict "
                                 f"of numbers, strings, tuples); pass the keywords instead")
            for key, value in mapping.items():
                constant = gast.Constant(value=value, kind=None)
                self.atom(constant, env)
                keywords.append(gast.keyword(arg=key, value=constant))
        names = [k.arg for k in keywords]
        repeated = sorted({n for n in names if names.count(n) > 1})
        if repeated:
            raise self.error(node, f"got multiple values for keyword argument {repeated[0]!r}")
        node.keywords = keywords

    def op_call(self, node, op, args, kwargs, arg_nodes, kwarg_nodes):
        try:
            operands, params = op.bind(args, kwargs)
            operand_nodes, param_nodes = op.bind(arg_nodes, kwarg_nodes)
        except ShapeError as e:
            raise self.error(node, str(e)) from None
        for name, value in operands.items():  # einsum's *operands: one sequence operand
            if isinstance(value, tuple):
                operands[name] = SequenceType(value)
        return self.apply_op(node, op, operands, {k: param_view(v) for k, v in params.items()},
                             operand_nodes, param_nodes)

    def lists_out(self, env):
        """What the list arguments hold at a return (a caller's ``hs = []`` that this
        function appends to), read through other names for them (``t = lst``, as a jvp
        names its tangent list argument)."""
        stores = {}
        for n in gast.walk(self.fdef):
            if isinstance(n, gast.Assign):
                for t in n.targets:
                    stores.setdefault(getattr(t, "id", None), []).append(n.value)
        out = {}
        for k, a in enumerate(self.fdef.args.args):
            names, more = set(), {a.id}
            while more:
                names |= more
                more = {name for name, values in stores.items() if name not in names and
                        len(values) == 1 and isinstance(values[0], gast.Name) and
                        values[0].id in names}
            held = [env[name] for name in sorted(names) if isinstance(env.get(name), ListType)]
            if held:
                out[k] = next((t for t in held if t.elt is not UNKNOWN), held[0])
        return out

    def lists_filled_by_callee(self, node, env):
        """An empty list passed to a function that appends to it (``hs = []; fill(hs,
        x)``) holds what that function appended from then on."""
        out = getattr(anno.get(node, "callee"), "lists_out", None) or {}
        for k, a in enumerate(node.args):
            if k in out and isinstance(a, gast.Name) and env.get(a.id) == ListType(UNKNOWN):
                env[a.id] = out[k]

    def method_call(self, node, env):
        f = node.func
        t = self.atom(f.value, env)
        args = [self.atom(a, env) for a in node.args]
        kwargs = {k.arg: self.atom(k.value, env) for k in node.keywords}
        if closure_function(t) is not None:
            from ..ad import custom_closures  # custom_jvp/custom_vjp of a closure
            custom = custom_closures.custom_of_closure(closure_function(t))
            if f.attr == CLOSURE_CALL and custom is not None:
                return custom_closures.call(self, node, custom, t, args, kwargs, env)
            if f.attr == CLOSURE_CALL:
                return self.user_call(node, closure_function(t), args, kwargs)
            if custom is not None and f.attr in ("defjvp", "defvjp", "defjvps"):
                return custom_closures.define_rule(self, node, custom, f.attr, args, kwargs)
        if isinstance(t, ArrayType):
            name = METHODS.get(f.attr)
            rewritten = f.attr.startswith(ARRAY_METHOD_CALL)
            method = f.attr[len(ARRAY_METHOD_CALL):] if rewritten else f.attr
            keyed = REGISTRY[METHODS[method]].keyword_call(kwargs) if method in METHODS \
                else None  # x.sum(where=m): the function, as a method of FUNCTION_METHODS
            if keyed is not None or name is None and method in FUNCTION_METHODS:
                if not rewritten:  # rewritten once: `x._astjax_array_sort(x)`
                    node.args.insert(0, gast.Name(id=f.value.id, ctx=gast.Load(),
                                                  annotation=None, type_comment=None))
                    node.func = gast.Attribute(value=f.value, attr=ARRAY_METHOD_CALL + method,
                                               ctx=gast.Load())
                    args = [self.atom(node.args[0], env)] + args  # (typed, as any argument)
                return self.user_call(node, keyed or FUNCTION_METHODS[method], args, kwargs)
            if name is None:
                raise self.error(node, f"arrays have no method {f.attr!r} usable in "
                                 f"transformed code")
            return self.op_call(node, REGISTRY[name], [t] + args, kwargs,
                                [f.value] + list(node.args),
                                {k.arg: k.value for k in node.keywords})
        if isinstance(t, Static) and isinstance(t.value, pytypes.ModuleType) and \
                callable(getattr(t.value, f.attr, None)):
            # xp.sum(x) of a module passed as a value (a default, a static argument): the
            # call of that function, as jnp.sum(x) of a module global is (rewritten once)
            node.func = gast.Constant(value=getattr(t.value, f.attr), kind=None)
            return self.call(node, env)
        if isinstance(t, Static):
            return self.call_static_method(node, t, f.attr, args, kwargs)
        if isinstance(t, ListType) and f.attr == "pop" and not args:
            anno.set_(node, "list_pop", True)
            return t.elt
        if isinstance(t, TreeType) and f.attr in ("_replace", REPLACE_CALL) and \
                trees.is_namedtuple_class(t.node_type):
            if f.attr == "_replace":  # rewritten once: `p._astjax_replace(p, w=v)`
                if node.args:
                    raise self.error(node, "_replace() takes keyword arguments only")
                node.args.insert(0, gast.Name(id=f.value.id, ctx=gast.Load(), annotation=None,
                                              type_comment=None))
                node.func = gast.Attribute(value=f.value, attr=REPLACE_CALL, ctx=gast.Load())
                args = [self.atom(node.args[0], env)]
            unknown = sorted(set(kwargs) - set(t.node_type._fields))
            if unknown:
                raise self.error(node, f"{t.node_type.__name__}._replace(): got unexpected "
                                 f"field names: {unknown}")
            fn = trees.replace_function(t.node_type, sorted(kwargs), self.parsed)
            return self.user_call(node, fn, args, kwargs)
        if isinstance(t, TreeType) and t.node_type is dict and f.attr in ("keys", "values",
                                                                          "items"):
            parts = {"keys": [Static(k) for k in t.keys], "values": list(t.children),
                     "items": [SequenceType((Static(k), c)) for k, c in zip(t.keys, t.children)]}
            anno.set_(node, "dict_view", (f.attr, t.keys))  # in JAX's (sorted) key order
            return SequenceType(tuple(parts[f.attr]), "list")
        if isinstance(t, TreeType):
            name = f.attr[len(METHOD_CALL):] if f.attr.startswith(METHOD_CALL) else f.attr
            method = getattr(t.node_type, name, None)
            if isinstance(method, pytypes.FunctionType):  # m.apply(x) of a pytree class
                if name == f.attr:  # rewritten once: `m._astjax_method_apply(m, x)`
                    node.args.insert(0, gast.Name(id=f.value.id, ctx=gast.Load(),
                                                  annotation=None, type_comment=None))
                    node.func = gast.Attribute(value=f.value, attr=METHOD_CALL + name,
                                               ctx=gast.Load())
                    args = [self.atom(node.args[0], env)] + args  # typed, as read
                return self.user_call(node, method, args, kwargs)
        if isinstance(t, ListType) or isinstance(t, SequenceType) and t.kind == "list":
            hint = _LIST_METHOD_HINTS.get(f.attr)
            if isinstance(t, SequenceType) and f.attr in _GROWING:  # (or del, insert: pops)
                raise self.error(node, "astjax cannot change this list's length here: the "
                                 "call fixes it (a list argument, or one made from it); "
                                 "copy it into a list the function makes (xs = list(xs)) "
                                 "and change that")
            if hint is not None:
                raise self.error(node, f"astjax cannot compile list.{f.attr}() here: {hint}")
        raise self.error(node, f"{t} has no method {f.attr!r} usable here")

    def computed_array(self, node, value):
        """An array computed from constants while the code is generated (a method of a
        captured array, a NumPy function of constants): a constant of the generated module,
        as an array read from outside is, under a name the program resolves."""
        name = f"{COMPUTED_PREFIX}{len(self.module.hoisted)}"
        self.module.hoisted[name] = value
        anno.set_(node, "computed_array", name)
        return type_of_value(value)

    def call_static_method(self, node, t, attr, args, kwargs):
        method = getattr(t.value, attr, None)
        if isinstance(method, pytypes.MethodType) and not all(
                isinstance(a, Static) for a in args + list(kwargs.values())):
            return self.user_call(node, method_function(method), args, kwargs)  # self.f(x)
        if not all(isinstance(a, Static) for a in args + list(kwargs.values())):
            raise self.error(node, f"cannot call {attr}() of a constant with run-time values")
        value = getattr(t.value, attr)(*[a.value for a in args],
                                       **{k: v.value for k, v in kwargs.items()})
        if is_array_value(value):  # w.astype(np.float32) of a captured w
            return self.computed_array(node, value)
        anno.set_(node, "folded", value)
        return Static(value)

    def transform_of_closure(self, node, target, args, kwargs, env):
        """``vmap(g, ...)``, ``grad(g, ...)``, ... of a closure ``g``: the call is rewritten
        as one making a closure of the same captured values (ir/closure_transforms.py)."""
        from .closure_transforms import closure_of_transform
        g = args[0]
        n = len(g.elts if isinstance(g, SequenceType) else g.value) - 1
        try:
            made = closure_of_transform(target, closure_function(g), n,
                                        [a.value for a in args[1:]],
                                        {k: v.value for k, v in kwargs.items()})
        except (TypeError, ValueError) as e:
            raise self.error(node, f"{getattr(target, '__name__', target)}(): {e}") from None
        if made is None:
            return None
        new, rebind = made
        node.func = gast.Constant(value=rebind, kind=None)
        node.args = [gast.Constant(value=new, kind=None), node.args[0]]
        node.keywords = []
        return self.user_call(node, rebind, [self.atom(a, env) for a in node.args], {})

    def refuse_transformed_closure(self, node, fn, args, kwargs):
        """grad, vmap, ... of a closure: the transform is built when code is generated, the
        closure's captured values exist only at run time."""
        if getattr(fn, "__module__", None) in _TRANSFORM_MODULES and \
                not getattr(fn, "_astjax_takes_closures", False) and any(
                closure_function(t) is not None for t in args + list(kwargs.values())):
            raise self.error(node, f"{fn.__name__}() of a nested function that uses variables of "
                             f"the enclosing function cannot be compiled yet; pass them to it "
                             f"as arguments, or define it at module level")

    def user_call(self, node, fn, args, kwargs):
        import inspect
        self.refuse_transformed_closure(node, fn, args, kwargs)
        if kwargs and hasattr(fn, "keyword_variant"):  # vmap(f)(x, k=v): v mapped too
            fn = fn.keyword_variant(len(args), tuple(kwargs))
            node.args, node.keywords = list(node.args) + [k.value for k in node.keywords], []
            args, kwargs = list(args) + list(kwargs.values()), {}
        sig = inspect.signature(fn)
        try:
            bound = sig.bind(*args, **kwargs)
        except TypeError as e:
            raise self.error(node, f"{fn.__name__}(): {e}") from None
        bound.apply_defaults()
        if hasattr(fn, "function_for"):
            _pass_every_parameter(node, sig)
        arg_types, keywords = [], {}
        for name, p in sig.parameters.items():
            v = bound.arguments[name]
            if p.kind is p.VAR_POSITIONAL:
                # g(a, b, c) of def g(x, *xs), or lax.cond(pred, f, g, *operands): the
                # function generated takes them one by one, in the same positions
                arg_types.extend(x if isinstance(x, Type) else Static(x) for x in v)
                continue
            if p.kind is p.VAR_KEYWORD and hasattr(fn, "function_for"):
                # a transform taking **kwargs (vectorize): the function it stands for
                # takes them last, by these names
                keywords = {"keywords": tuple(v)} if v else {}
                arg_types.extend(x if isinstance(x, Type) else Static(x) for x in v.values())
                continue
            if p.kind is p.VAR_KEYWORD:
                raise self.error(node, f"{fn.__name__}() takes **{name}, which astjax "
                                 f"cannot compile")
            arg_types.append(v if isinstance(v, Type) else Static(v))
        if hasattr(fn, "function_for"):  # a transform: the function it stands for here
            try:
                fn = fn.function_for(tuple(arg_types), self.module, **keywords)
            except UserCodeError as e:
                if e.filename is not None:
                    raise
                # a check on the argument types (lax.fori_loop's carry, ...): at this call
                raise self.parsed.error(node, e.message, type(e)) from None
        # a check inside astjax's own code (jnp.select's lengths, an op's dtype rule
        # reached through take_along_axis) names the user's call
        with checks_at_user_call(self.parsed, node):
            spec = self.module.specialize(fn, tuple(arg_types), caller=(self.parsed, node))
        anno.set_(node, "callee", spec)
        anno.set_(node, "callee_args", list(sig.parameters))
        return spec.return_type


def _pass_every_parameter(node, sig):
    """A call of a transform passing every positional parameter by position, the defaults
    it leaves out as constants: the function the transform stands for takes them all so
    (``grad(loss)(p, x)`` of ``def loss(p, x, l2=1e-3)``). Keyword-only ones stay keywords."""
    params = sig.parameters.values()
    if any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in params):
        return
    positional = [p for p in params if p.kind is not p.KEYWORD_ONLY]
    if len(node.args) == len(positional):
        return
    passed = sig.bind(*node.args, **{k.arg: k.value for k in node.keywords}).arguments
    node.args = [passed[p.name] if p.name in passed else _static_constant(p.default)
                 for p in positional]
    node.keywords = [k for k in node.keywords if k.arg not in {p.name for p in positional}]


def _static_constant(value):
    const = gast.Constant(value=value, kind=None)
    anno.set_(const, "type", Static(value))
    return const


def _constant_index(idx):
    """An index known while the code is generated: numbers, strings, slices of numbers
    (``mgrid[0:1:5j]``), None, ``...``, or tuples of those."""
    def item(i):
        if isinstance(i, slice):
            return all(p is None or isinstance(p, (int, float, complex))
                       for p in (i.start, i.stop, i.step))
        if isinstance(i, (tuple, list)):  # jnp.c_[(1., 2.), (3., 4.)]
            return all(item(e) for e in i)
        return i is None or i is Ellipsis or isinstance(i, (int, float, complex, str))
    return item(idx)


def _as_static(t):
    """A tuple type whose elements are all known, as one constant."""
    if isinstance(t, SequenceType) and t.kind == "tuple":
        elts = [_as_static(e) for e in t.elts]
        if all(isinstance(e, Static) for e in elts):
            return Static(tuple(e.value for e in elts))
    return t


def _draws_random_numbers(fn):
    """np.random.rand, a Generator's normal, random.random: impure, unlike other calls of
    constants, which are evaluated while the code is generated."""
    owner = getattr(fn, "__self__", None)
    module = type(owner).__module__ if owner is not None and not isinstance(
        owner, pytypes.ModuleType) else getattr(fn, "__module__", None) or ""
    return module.split(".")[:2] == ["numpy", "random"] or module == "random"


def is_array_value(value):
    """A NumPy array or an astjax Array (not a scalar)."""
    return isinstance(value, np.ndarray) or type(value).__name__ == "Array"


_NOT_FOLDED = object()
CLOSURE_CALL = "_astjax_closure_call"
REPLACE_CALL = "_astjax_replace"  # p._replace(w=v) of a namedtuple, rewritten
ARRAY_METHOD_CALL = "_astjax_array_"  # x.sort() of an array, rewritten: x._astjax_array_sort(x)
METHOD_CALL = "_astjax_method_"  # m.f(x) of a pytree m, rewritten as m.<this>f(m, x)
# grad, jit, vmap, ... build their transform when the code is generated: a closure's
# captured values exist only at run time
_TRANSFORM_MODULES = ("astjax._src.api", "astjax._src.ad.api", "astjax._src.ad.jacobian",
                      "astjax._src.ad.custom", "astjax._src.ad.checkpoint",
                      "astjax._src.batching.api")


def closure_function(t):
    """The lifted function of a closure value (a nested def or lambda that captured
    variables: a tuple ``(function, captured...)``, see frontend/desugar.py), else None."""
    if isinstance(t, SequenceType) and t.elts and isinstance(t.elts[0], Static) and \
            isinstance(t.elts[0].value, LiftedFunction):
        return t.elts[0].value
    if isinstance(t, Static) and isinstance(t.value, tuple) and t.value and \
            isinstance(t.value[0], LiftedFunction):  # it captured constants only
        return t.value[0]
    return None


class MaybeUndefined(Type):
    def __init__(self, inner):
        self.inner = inner

    def __eq__(self, other):
        return isinstance(other, MaybeUndefined) and other.inner == self.inner

    def __hash__(self):
        return hash(("maybe", self.inner))


def UNDEFINED_OR(a, b):
    t = b if a is UNDEFINED else a
    return t if isinstance(t, MaybeUndefined) or t is UNDEFINED else MaybeUndefined(t)


def anf_mod_is_ref(node, env):
    """An attribute chain rooted at a name that is not a local variable."""
    while isinstance(node, gast.Attribute):
        node = node.value
    return isinstance(node, gast.Name) and node.id not in env


def param_view(t):
    """A type as an op param: static values unwrap, tuples become tuples of views."""
    if isinstance(t, Static):
        return t.value
    if isinstance(t, IndexType):
        return t.view
    if isinstance(t, SequenceType):
        return tuple(param_view(e) for e in t.elts)
    return t


def _is_int_like(t):
    if isinstance(t, Static):
        return isinstance(t.value, (int, np.integer)) and not isinstance(t.value, bool)
    return isinstance(t, ArrayType) and t.ndim == 0 and t.dtype.kind in "iu"


# --- builtins ---------------------------------------------------------------------------------

def _len(self, node, args, kwargs):
    (t,) = args
    if isinstance(t, ArrayType):
        if t.ndim == 0:
            raise self.error(node, "len() of a 0-d array")
        return Static(1) if t.ones[0] else _dyn_int()
    if isinstance(t, SequenceType):
        return Static(len(t.elts))
    if isinstance(t, TreeType):
        return Static(len(t.children))
    if isinstance(t, ListType):
        return _dyn_int()
    if isinstance(t, Static):
        return Static(len(t.value))
    raise self.error(node, f"len() of {t}")


def _scalar_conversion(kind):
    def convert(self, node, args, kwargs):
        (t,) = args
        if isinstance(t, Static):
            return self.fold(node, lambda v, _: kind(v), t, t)
        a = as_array_type(t)
        if a.ndim != 0:
            raise self.error(node, f"{kind.__name__}() needs a scalar, got an array of rank "
                             f"{a.ndim}")
        anno.set_(node, "scalar_conversion", kind.__name__)
        dtype = {float: dtypes.default_float(), int: dtypes.default_int(),
                 bool: dtypes.bool_}[kind]
        return ArrayType(dtype, (), kind is not bool)
    return convert


def _minmax(name):
    def fn(self, node, args, kwargs):
        if len(args) == 1:
            seq = args[0]
            elts = seq.elts if isinstance(seq, SequenceType) else None
            if elts is None:
                raise self.error(node, f"{name}() of one argument needs a tuple")
            args = list(elts)
        if all(isinstance(a, Static) for a in args):
            value = (min if name == "minimum" else max)(a.value for a in args)
            anno.set_(node, "folded", value)
            return Static(value)
        op = REGISTRY[name]
        t = args[0]
        for other in args[1:]:
            t = op.infer({"x": t, "y": other}, {})
        anno.set_(node, "builtin", name)
        return t
    return fn


# (what compiles: pop, append, insert, extend, clear, del, item and slice assignment)
_BY_VALUE = ("it compares elements with ==, which for arrays is elementwise (JAX's traced "
             "lists match only the very same object); use the element's position")
_LIST_METHOD_HINTS = {
    "remove": _BY_VALUE + " (del xs[i] or xs.pop(i))", "index": _BY_VALUE,
    "count": _BY_VALUE, "sort": "sort an array instead (jnp.sort(jnp.stack(xs)))",
    "reverse": "make the reversed list (xs = xs[::-1])",
    "copy": "copy with list(xs) or xs[:]",
}
_GROWING = ("pop", "append", "insert", "extend", "clear")
_LIST_SUM = """def list_sum(_s, _start):
    _acc = _start + _s[0]
    for _k in range(1, len(_s)):
        _acc = _acc + _s[_k]
    return _acc
"""


_LIST_CONCAT = """def list_concat(_a, _b):
    _out = []
    for _k in range(len(_a)):
        _out.append(_a[_k])
    for _k in range(len(_b)):
        _out.append(_b[_k])
    return _out
"""
_LIST_REPEAT = """def list_repeat(_a):
    _out = []
    for _r in range({n}):
        for _k in range(len(_a)):
            _out.append(_a[_k])
    return _out
"""


def _sum(self, node, args, kwargs):
    seq = args[0]
    start = args[1] if len(args) > 1 else Static(0)
    if isinstance(seq, Static) and isinstance(start, Static):  # sum(()) of an empty *xs
        return self.fold(node, builtins.sum, seq, start)
    if isinstance(seq, SequenceType):
        # a tuple of known length (a *args): Python's adds, which compile and differentiate
        start_node = node.args[1] if len(node.args) > 1 else gast.Constant(value=0, kind=None)
        anno.set_(start_node, "type", start)
        adds = " + ".join(["_start"] + [f"_s[{k}]" for k in range(len(seq.elts))])
        return self.call_generated(node, f"def sum_of(_s, _start):\n    return {adds}\n",
                                   [node.args[0], start_node], [seq, start])
    if isinstance(seq, ListType) and seq.elt is UNKNOWN and isinstance(start, Static):
        return self.fold(node, lambda _, v: v, start, start)  # nothing is ever appended
    if isinstance(seq, ListType):
        # a list built at run time: a loop of Python's adds, which compile (Numba too) and
        # differentiate as reads by index (an empty list fails on its first element, an
        # IndexError at the sum's line)
        start_node = node.args[1] if len(node.args) > 1 else gast.Constant(value=0, kind=None)
        anno.set_(start_node, "type", start)
        return self.call_generated(node, _LIST_SUM, [node.args[0], start_node], [seq, start],
                                   located=True)
    raise self.error(node, "sum() of an array: use jnp.sum(x) (or x.sum())")


def _isinstance(self, node, args, kwargs):
    t, cls = args
    if isinstance(t, Static):
        return Static(isinstance(t.value, cls.value))
    from ..runtime.array import Array
    if isinstance(t, ArrayType):
        kinds = (np.ndarray, Array, object)
    elif isinstance(t, TreeType):
        kinds = (t.node_type, object)
    elif isinstance(t, (SequenceType, ListType)):
        kinds = (tuple if getattr(t, "kind", "list") == "tuple" else list, object)
    else:
        kinds = (object,)
    classes = cls.value if isinstance(cls.value, tuple) else (cls.value,)
    value = any(issubclass(k, c) for k in kinds for c in classes)
    anno.set_(node, "folded", value)
    return Static(value)


def _tuple_of(kind):
    def fn(self, node, args, kwargs):
        (t,) = args
        if isinstance(t, SequenceType) and t.elts:
            # a display of its elements (a generated function), which every transform reads
            items = ", ".join(f"_s[{k}]" for k in range(len(t.elts)))
            display = f"[{items}]" if kind == "list" else f"({items},)"
            return self.call_generated(node, f"def as_{kind}(_s):\n    return {display}\n",
                                       [node.args[0]], [t])
        if isinstance(t, SequenceType):
            return SequenceType(t.elts, kind)
        if isinstance(t, Static):
            return self.fold(node, lambda v, _: (tuple if kind == "tuple" else list)(v), t, t)
        if isinstance(t, ArrayType):
            raise self.error(node, _rows_of_array(f"{kind}() of {t}"))
        raise self.error(node, f"{kind}() of {t} is not supported")
    return fn


def _rows_of_array(what):
    return (f"{what}: an array's first axis has a run-time length in astjax, so its rows "
            f"are not a sequence of known length; unpack them into names (a, b = x, or "
            f"a, b = [*x]), loop over them (for row in x) or use the array itself")


def _sorted(self, node, args, kwargs):
    """sorted() of a sequence whose order is known while the code is generated: a dict's
    keys, or tuples led by distinct constants (``sorted(d.items())`` of a dict of arrays,
    whose keys are static as in JAX): the list of its elements in that order."""
    (t,) = args
    key, reverse = kwargs.get("key", Static(None)), kwargs.get("reverse", Static(False))
    if not (isinstance(key, Static) and key.value is None and isinstance(reverse, Static)):
        raise self.error(node, "sorted() of values computed at run time takes no key= and a "
                         "constant reverse=; sort an array instead (jnp.sort)")
    if isinstance(t, TreeType) and issubclass(t.node_type, dict):  # sorted(d): its keys
        return self.fold(node, lambda r, _: sorted(t.keys, reverse=r), reverse, reverse)
    firsts = [e.elts[0] if isinstance(e, SequenceType) and e.elts else e
              for e in (t.elts if isinstance(t, SequenceType) else ())]
    if not (isinstance(t, SequenceType) and all(isinstance(f, Static) for f in firsts)
            and len({repr(f.value) for f in firsts}) == len(firsts)):
        raise self.error(node, f"sorted() of {t}: astjax sorts a sequence while generating "
                         f"the code, so its order must follow from constants (a dict's "
                         f"keys, or tuples led by distinct ones); sort an array instead "
                         f"(jnp.sort)")
    order = sorted(range(len(firsts)), key=lambda k: firsts[k].value, reverse=reverse.value)
    items = ", ".join(f"_s[{k}]" for k in order)
    return self.call_generated(node, f"def sorted_by_key(_s):\n    return [{items}]\n",
                               [node.args[0]], [t])


def _range_outside_for(self, node, args, kwargs):
    raise self.error(node, "range() can only be used as a for-loop iterable here")


def _print(self, node, args, kwargs):
    from ..debugging import lower_call  # prints the run-time values, as debug.print
    return lower_call(self, node, builtins.print, args, kwargs)


_BUILTINS = {
    builtins.len: _len, builtins.float: _scalar_conversion(float),
    builtins.int: _scalar_conversion(int), builtins.bool: _scalar_conversion(bool),
    builtins.min: _minmax("minimum"), builtins.max: _minmax("maximum"), builtins.sum: _sum,
    builtins.isinstance: _isinstance, builtins.tuple: _tuple_of("tuple"),
    builtins.list: _tuple_of("list"), builtins.range: _range_outside_for,
    builtins.print: _print, builtins.sorted: _sorted,
    **HANDLERS,  # raise, assert and f-strings (static_checks.py)
}
