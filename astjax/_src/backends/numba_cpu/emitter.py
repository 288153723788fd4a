"""Typed ANF to Numba-ready source.

What changes from the python backend (whose statement walk this reuses):
  * elementwise work becomes scalar loop nests: an elementwise result read once,
    by the next elementwise op or reduction in the same block, is inlined into
    that consumer's loop body instead of being stored (see ``fusion.py``), so
    ``sum(1 / (1 + exp(-x)))`` is one loop with no temporaries;
  * reductions are loops; 1-D/2-D products call BLAS through ``np.dot``;
  * every constant is typed (``np.float32(0.5)``): Numba would widen to float64;
  * 0-d values are scalars, containers (dicts, namedtuples, registered classes) are
    tuples of their children (ir/trees.py), and
    static values are literals, never parameters.
An op without a lowering raises ``Unsupported``; the caller then uses the
python backend for the whole function (and says so when log_compiles is on).
"""
import gast
import numpy as np

from ...ir import anno
from ...ir.types import (ArrayType, IndexType, SequenceType, Static, TreeType,
                         as_array_type)
from ...ir.peel import widens
from ..python import PythonEmitter
from . import carried_chains, donation, fusion, last_trip, simplify
from .liveness import Liveness
from .parallel import loop_nest
from .scalar import typed_literal

_INDENT = "    "
_DEPS = ["import math", "import numpy as np", "import numba as _nb",
         "from astjax._src.backends import mathlib as _ml",
         "from astjax._src.backends.numba_cpu import runtime as _rt",
         "from astjax._src.backends.numba_cpu.runtime import RuntimeBroadcast as _Broadcast",
         "from astjax._src.backends.numba_cpu.runtime import BroadcastAfterDonation as "
         "_BroadcastDonated"]
# literals Numba can type; anything else that is static is never needed at run time
_NUMBA_LITERALS = (type(None), bool, int, float, complex, str, np.generic, slice,
                   type(Ellipsis))


def _consumers(fdef):
    """Variable -> the op names (or None for anything else) of the statements reading it."""
    out = {}
    for s in gast.walk(fdef):
        if isinstance(s, (gast.Assign, gast.Expr, gast.Return, gast.If, gast.While)):
            value = getattr(s, "value", None) or getattr(s, "test", None)
            op = anno.get(value, "op") if value is not None else None
            for n in gast.walk(value) if value is not None else ():
                if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load):
                    out.setdefault(n.id, []).append(op.name if op is not None else None)
        elif isinstance(s, gast.For):
            for n in gast.walk(s.iter):
                if isinstance(n, gast.Name):
                    out.setdefault(n.id, []).append(None)
    return out


def _scalar_tapes(fdef):
    """Lists only built empty, appended scalars of one dtype to and popped: name -> dtype."""
    kinds, other_uses = {}, set()
    uses = {}
    for n in gast.walk(fdef):
        if isinstance(n, gast.Assign) and isinstance(n.value, gast.List) and not n.value.elts:
            uses.setdefault(n.targets[0].id, set())
        if isinstance(n, gast.Call) and (anno.get(n, "list_append") or anno.get(n, "list_pop")):
            name = n.func.value.id
            t = anno.get(n.args[0], "type") if anno.get(n, "list_append") else \
                anno.get(n, "type")
            ok = isinstance(t, ArrayType) and t.ndim == 0
            kinds.setdefault(name, set()).add(t.dtype if ok else None)
            uses.setdefault(name, set()).add(id(n.func.value))
    for n in gast.walk(fdef):
        if isinstance(n, gast.Name) and n.id in uses and isinstance(n.ctx, gast.Load) \
                and id(n) not in uses[n.id]:
            other_uses.add(n.id)
    return {name: next(iter(dtypes)) for name, dtypes in kinds.items()
            if name in uses and name not in other_uses and len(dtypes) == 1
            and None not in dtypes}


def _joined_types(fdef):
    """Variable -> its array type where branches or loop iterations meet."""
    joined = {}
    for s in gast.walk(fdef):
        merge = anno.get(s, "merge") if isinstance(s, (gast.If, gast.For, gast.While)) else None
        if merge is not None:
            for name, t in merge[2].items():
                if isinstance(t, ArrayType):
                    joined[name] = t
    return joined


class Unsupported(Exception):
    """The numba backend has no lowering for this; the python backend runs instead."""


class NumbaEmitter(PythonEmitter):
    backend = "numba"

    def __init__(self, program, entry_spec, donated=(), parallel=False):
        super().__init__(program)
        self.entry_spec = entry_spec  # what the caller calls; the rest is inlined into it
        self.donated = tuple(donated)  # entry parameters whose buffers results may reuse
        self.parallel = parallel  # elementwise loop nests split their outer loop over cores
        self.kernels = []  # parallel loop bodies of the function being emitted (parallel.py)

    def emitted_specs(self):
        if not hasattr(self, "_live"):
            from .inline import Inliner
            self._live = Inliner(self.program).run(self.entry_spec)
        return self._live

    def prelude(self):
        return list(_DEPS)

    def decorators(self, spec):
        # nogil: a call queued on a device's worker thread runs beside Python
        parallel = ", parallel=True" if self.parallel else ""
        return [f'@_nb.njit(cache=True, error_model="numpy", nogil=True{parallel})']

    def kernel_decorator(self):
        return '@_nb.njit(cache=True, error_model="numpy", nogil=True)'

    def parameters(self, spec):
        return [a.id for a, t in zip(spec.fdef.args.args, spec.arg_types)
                if not isinstance(t, Static)]

    def function(self, spec):
        simplify.propagate_copies(spec.fdef)
        last_trip.skip_last_trip_work(spec.fdef)
        carried_chains.shorten_carried_chains(spec.fdef)
        self.names = fusion.Names(spec.fdef)
        self.plan = fusion.plan(spec.fdef)
        self.joined = _joined_types(spec.fdef)
        self.live = None  # Liveness, made when a branch needs it
        self.consumers = _consumers(spec.fdef)
        self.assigned_once = {name for name, k in simplify._stores(spec.fdef).items() if k == 1}
        self.reusable = donation.reusable(
            spec.fdef, self.donated if spec is self.entry_spec else (), self.plan)
        self.broadcast_error = "_Broadcast"  # _BroadcastDonated once a donated buffer is written
        fusion.group(spec.fdef, self.plan, exclude={s for s in gast.walk(spec.fdef)
                                                    if id(s) in self.reusable})
        self.tapes = {name: (dtype, self.names.fresh(f"{name}_n"))
                      for name, dtype in _scalar_tapes(spec.fdef).items()}
        self.reserved = set()  # pushes that reserve_tapes made room for
        self.kernels = []
        out = super().function(spec)
        if self.parallel and not any("_nb.prange(" in line for line in out):
            out[0] = out[0].replace(", parallel=True", "")  # else Numba warns: nothing to do
        return [line for kernel in self.kernels for line in kernel + ["", ""]] + out

    def block(self, stmts, depth):
        lines = []
        for s in stmts:
            if s in self.plan.inlined or s in self.plan.grouped:
                continue
            for early in self.plan.before.get(s, ()):
                lines.extend(self.statement(early, depth))
            if s in self.plan.groups:
                lines.extend(self.group_statement(self.plan.groups[s], depth))
                continue
            lines.extend(self.statement(s, depth))
        return lines

    def branch(self, s, which, depth):
        """A branch that leaves a variable a scalar where the other makes it an array (a
        peeled loop's zero-trip path, see ir/peel.py) hands the call to the python backend:
        Numba needs one type per variable read after the branches meet."""
        lines = super().branch(s, which, depth)
        merged = anno.get(s, "merge")[2]
        env = anno.get(s, "merge")[which]
        if self.live is None:
            self.live = Liveness(self.spec.fdef)
        live = self.live.after.get(id(s), self.live.everything)
        narrow = sorted(name for name, t in merged.items()
                        if widens(env.get(name), t) and name in live)
        if narrow:
            where = self.where(s)
            lines.append(_INDENT * depth + f"raise {self.broadcast_error}("
                         f"{where + ': ' + ', '.join(narrow) + ' is a scalar here'!r})")
        return lines

    def group_statement(self, group, depth):
        """One loop nest for a fused group: a scalar per statement, stores for the values
        read after it (see ``fusion.group``)."""
        first = group.members[0]
        # (a frexp's target is a pair: the rank is that of the first array target)
        rank = next(t.ndim for t in (anno.get(s.targets[0], "type") for s in group.members)
                    if isinstance(t, ArrayType))
        loop = fusion.Loop(self, rank, self.where(first))
        body, outputs = [], []
        for s in group.members:
            target = s.targets[0].id
            scalar = self.names.fresh(f"{target}_e")
            body.append((s, f"{scalar} = {self.group_expression(loop, s)}"))
            loop.scalars[target] = scalar
            if s in group.escapes:
                outputs.append((target, scalar, anno.get(s.targets[0], "type")))
        header, sizes, texts = loop.header()
        idx = loop.indices()
        lines = [self.line(text, depth, first) for text in header[:1]] + \
            [_INDENT * depth + text for text in header[1:]]
        stores, rebind = [], []
        for target, scalar, t in outputs:
            out, allocation, rebinding = loop.output(target, t.dtype, sizes)
            lines.append(_INDENT * depth + allocation)
            stores.append(f"{out}[{', '.join(idx)}] = {scalar}")
            rebind += rebinding
        body = [(loop.substitute(text, texts, idx), s) for s, text in body]
        for item in loop_nest(self, sizes, idx, body + stores):
            lines.append((_INDENT * depth + item[0], item[1]) if isinstance(item, tuple)
                         else _INDENT * depth + item)
        return lines + [_INDENT * depth + text for text in rebind]

    def statement(self, s, depth):
        if isinstance(s, gast.For):
            return self.reserve_tapes(s, depth) + super().statement(s, depth)
        tape = self.tape_statement(s)
        if tape is not None:
            first = self.line(tape[0], depth, s)
            return [first] + [_INDENT * depth + text for text in tape[1:]]
        effect = anno.get(s.value, "op").rules.get("numba_statement") \
            if isinstance(s, gast.Expr) and anno.get(s.value, "op") is not None else None
        if effect is not None:  # debug_callback: Python, in object mode
            first, *rest = effect(self, s.value)
            return [self.line(first, depth, s)] + [_INDENT * depth + text for text in rest]
        if isinstance(s, gast.Assign) and anno.get(s.value, "op") is not None \
                and not anno.has(s.value, "folded"):
            target = s.targets[0]
            if isinstance(anno.get(target, "type"), Static):
                return []
            return self.op_statement(target.id, s.value, s, depth)
        if isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name):
            t = anno.get(s.targets[0], "type")
            joined = self.joined.get(s.targets[0].id)
            if isinstance(t, Static) and isinstance(t.value, (bool, int, float)) \
                    and isinstance(joined, ArrayType) and joined.ndim == 0:
                # a scalar that becomes dynamic where paths meet (a zero cotangent before a
                # loop): give it its joined dtype, or Numba would widen float32 to float64
                return [self.line(f"{s.targets[0].id} = "
                                  f"{typed_literal(t.value, joined.dtype)}", depth, s)]
        return super().statement(s, depth)

    def group_expression(self, loop, s):
        if fusion._is_frexp(s):
            return f"_ml.frexp({loop.operand(anno.get(s.value, 'operand_nodes')['x'])})"
        if isinstance(s.value, gast.Subscript):  # an element of a frexp pair
            dtype = anno.get(s.targets[0], "type").dtype
            k = anno.get(s.value.slice, "type").value
            return f"np.{dtype.name}({loop.scalars[s.value.value.id]}[{k}])"
        return loop.expression(s.value)

    def reserve_tapes(self, loop, depth):
        """Room, before a ``for`` loop, for what its body pushes on each trip: the trip
        count is known at loop entry, so the pushes never grow a tape."""
        pushes, top = {}, []
        for s in loop.body:
            if self._push(s):
                tape = s.value.func.value.id
                pushes[tape] = pushes.get(tape, 0) + 1
                top.append(s)
        if not pushes:
            return []
        nested = {n.value.func.value.id for s in loop.body if not self._push(s)
                  for n in gast.walk(s) if self._push(n)}
        # pushes of a tape only this body's top level pushes fit the room made here: no
        # check each trip (a nested loop's pushes would use up some of it)
        self.reserved.update(id(s) for s in top if s.value.func.value.id not in nested)
        trips = f"len(range({', '.join(self.atom(a) for a in loop.iter.args)}))"
        lines = []
        for tape, k in pushes.items():
            count = self.tapes[tape][1]
            needed = f"{count} + {k} * {trips}" if k > 1 else f"{count} + {trips}"
            lines += [f"if {needed} > {tape}.shape[0]:",
                      _INDENT + f"{tape} = _rt.grow({tape}, {needed})"]
        return [_INDENT * depth + line for line in lines]

    def _push(self, s):
        return isinstance(s, gast.Expr) and anno.get(s.value, "list_append") \
            and s.value.func.value.id in self.tapes

    def tape_statement(self, s):
        """A list of scalars that is only appended to and popped (a reverse-mode tape) is an
        array that doubles when full: a typed list costs ~24 ns per push, this ~1 ns."""
        if isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name):
            name = s.targets[0].id
            if name in self.tapes and isinstance(s.value, gast.List):
                dtype, count = self.tapes[name]
                return [f"{name} = _rt.empty(16, np.{dtype.name})", f"{count} = 0"]
            value = s.value
            if anno.get(value, "list_pop") and value.func.value.id in self.tapes:
                tape = value.func.value.id
                count = self.tapes[tape][1]
                return [f"{count} -= 1", f"{name} = {tape}[{count}]"]
        if isinstance(s, gast.Expr) and anno.get(s.value, "list_append") \
                and s.value.func.value.id in self.tapes:
            tape = s.value.func.value.id
            count = self.tapes[tape][1]
            grow = [] if id(s) in self.reserved else [
                f"if {count} == {tape}.shape[0]:", _INDENT + f"{tape} = _rt.grow({tape})"]
            return grow + [f"{tape}[{count}] = {self.atom(s.value.args[0])}", f"{count} += 1"]
        return None

    # --- values ------------------------------------------------------------------------------
    def literal(self, value):
        if isinstance(value, float) and not np.isfinite(value):
            return "np.nan" if np.isnan(value) else ("np.inf" if value > 0 else "-np.inf")
        if isinstance(value, (np.floating, np.complexfloating)) and not np.isfinite(value):
            return f"np.{value.dtype.name}({self.literal(value.item())})"
        return super().literal(value)

    def atom(self, node):
        t = anno.get(node, "type")
        if isinstance(t, Static) and not anno.get(node, "captured") \
                and not isinstance(t.value, _NUMBA_LITERALS) \
                and not (isinstance(t.value, tuple) and all(
                    isinstance(v, _NUMBA_LITERALS) for v in t.value)):
            return "None"  # a dtype, function, ...: only its static uses matter
        return super().atom(node)

    def rhs(self, node):
        t = anno.get(node, "type")
        builtin = anno.get(node, "builtin")
        if builtin in ("minimum", "maximum"):
            if any(as_array_type(anno.get(a, "type")).ndim for a in node.args
                   if not isinstance(anno.get(a, "type"), (SequenceType, TreeType))):
                raise Unsupported(f"builtin {builtin[:3]}() of arrays")
            return f"{builtin[:3]}({', '.join(self.atom(a) for a in node.args)})"
        if isinstance(node, gast.Attribute):
            value_type = anno.get(node.value, "type")
            if node.attr in ("shape", "size") and isinstance(value_type, ArrayType):
                if value_type.ndim == 0:
                    return "()" if node.attr == "shape" else "1"
                return f"{self.atom(node.value)}.{node.attr}"
        if anno.get(node, "tree_child") is not None:  # containers are tuples of children
            return f"{self.atom(node.value)}[{anno.get(node, 'tree_child')}]"
        if isinstance(node, gast.Subscript) and isinstance(t, IndexType):
            # s_[...] passed on: a tuple of its run-time parts
            from .lower_gather import index_value
            return index_value(self, node)
        if isinstance(node, gast.List) and isinstance(t, SequenceType):
            # a list display of known length is a tuple here (its items may differ in type)
            inner = ", ".join(self.atom(e) for e in node.elts)
            return f"({inner},)" if len(node.elts) == 1 else f"({inner})"
        if anno.get(node, "tree_build") is not None:
            inner = ", ".join(self.atom(c) for c in anno.get(node, "tree_build"))
            return f"({inner},)" if len(anno.get(node, "tree_build")) == 1 else f"({inner})"
        if anno.get(node, "dict_view") is not None:
            kind, keys = anno.get(node, "dict_view")
            d = node.func.value
            d_type = anno.get(d, "type")
            if not isinstance(d_type, TreeType):
                raise Unsupported("dict view")
            parts = {"keys": [self.literal(k) for k in keys],
                     "values": [f"{self.atom(d)}[{d_type.keys.index(k)}]" for k in keys],
                     "items": [f"({self.literal(k)}, {self.atom(d)}[{d_type.keys.index(k)}])"
                               for k in keys]}[kind]
            return "(" + ", ".join(parts) + ("," if len(parts) == 1 else "") + ")"
        if isinstance(node, gast.Call) and isinstance(node.func, gast.Name) \
                and node.func.id in ("len", "tuple", "list") and len(node.args) == 1 \
                and anno.get(node, "op") is None and anno.get(node, "callee") is None:
            arg = self.atom(node.args[0])  # lists are tuples here; len works on both
            return f"len({arg})" if node.func.id == "len" else arg
        if isinstance(node, gast.Call) and anno.get(node, "callee") is None \
                and anno.get(node, "op") is None and not anno.get(node, "list_pop") \
                and not anno.get(node, "list_append") and builtin is None \
                and not anno.get(node, "scalar_conversion"):
            raise Unsupported(f"call {self.rhs_text(node)}")
        return super().rhs(node)

    def rhs_text(self, node):
        from ..source import unparse
        return unparse(node).strip()

    def user_call(self, node, callee):
        bound = self._bind_user_args(node, callee)
        keep = [text for text, t in zip(bound, callee.arg_types) if not isinstance(t, Static)]
        return f"{callee.name}({', '.join(keep)})"

    # --- ops ---------------------------------------------------------------------------------
    def op_statement(self, target, node, stmt, depth):
        op = anno.get(node, "op")
        out_type = anno.get(stmt.targets[0], "type")
        where = self.where(stmt)
        same = fusion.trivial(node, out_type)
        if same is not None:
            return [self.line(f"{target} = {self.atom(same)}", depth, stmt)]
        if op.name in fusion.FUSABLE and isinstance(out_type, ArrayType):
            loop = fusion.Loop(self, out_type.ndim, where)
            expr = loop.expression(node)
            body = loop.elementwise(target, out_type, expr, self.reusable.get(id(stmt)))
        elif op.name in fusion.REDUCTIONS:
            body = fusion.reduction(self, target, node, out_type, where)
        else:
            from .lowering import lower
            body = lower(self, op, node, target, out_type, where)
        first = self.line(body[0], depth, stmt)
        return [first] + [_INDENT * depth + text for text in body[1:]]

    def static_param(self, node, name, default=None):
        resolved = anno.get(node, "resolved_params", {})
        if name in resolved:
            return resolved[name]
        params = anno.get(node, "param_nodes")
        if name not in params:
            return default
        value = params[name]
        types = [anno.get(v, "type") for v in value] if isinstance(value, tuple) else \
            [anno.get(value, "type")]  # a tuple: *args (x.transpose(1, 0, 2))
        if not all(isinstance(t, Static) for t in types):
            raise Unsupported(f"{anno.get(node, 'op').name}(): {name} computed at run time")
        values = tuple(t.value for t in types)
        return values if isinstance(value, tuple) else values[0]

