"""Zeros shaped like a value where a cotangent is 0.0 on one path and an array on another.

Reverse mode starts every cotangent as the weak scalar 0.0, and an overwritten variable's
goes back to 0.0 once its statement has passed it on (``ReverseMode.reset_cotangent``).
NumPy broadcasts that 0.0, so the python backend needs nothing more; Numba needs one type
per variable where paths meet. Where the backward sweep's paths meet (the two arms of an
``if``; a loop's entry and the end of each trip) with a cotangent 0.0 on one and an array
on the other, and the cotangent is read after, the paths with 0.0 get

    d_y = _ajx.cotangent_like(d_y, y)    # zeros shaped like y (an array: unchanged)

where ``y`` is the value the forward sweep had at that point: before the ``if``, where
a trip starts, or after the loop (for the backward loop's entry). A variable set again
later is kept aside there: in a variable of its own at the top level, on a tape
elsewhere. E.g. ``if c: w = y * 3`` (y's cotangent is an array after one arm only), a
loop ``for ...: y = f(x)`` that overwrites y without reading it (each trip of the
backward sweep ends with y's cotangent reset to 0.0), a loop reading x that nothing
after it reads (x's cotangent is 0.0 where the backward loop starts).

A variable not set on every path to that point (set only by the loop) has no value to
take a shape from: ir/peel.py then peels the backward loop's first trip instead.
"""
import gast

from ..frontend.naming import assign, load
from ..ir import anno
from ..ir.peel import live_names
from .analysis import float_leaves
from .nodes import _ajx, _call, _locate, _sub

ZERO, ARRAY, EITHER = "zero", "array", "either"
_PASSES = 20  # a loop's kinds settle in a few; the bound only guards against a bug


def settle(mode, forward, backward, read_at_end):
    """Give ``mode``'s backward sweep (``backward``, whose results ``read_at_end`` reads)
    the zeros Numba needs, and its forward sweep (``forward``) the values they copy."""
    tracked = _array_cotangents(mode)
    if tracked and mode.merges:
        sweep = _Sweep(mode, tracked, backward, read_at_end)
        sweep.block(backward, sweep.start())
        sweep.write(forward)


def _array_cotangents(mode):
    """Cotangent name -> (variable, path), for the leaves that are arrays of rank >= 1
    wherever the variable is set (the leaves whose 0.0 Numba cannot unify with them)."""
    ranks = {}
    for n in gast.walk(mode.fdef):
        if isinstance(n, gast.Name) and isinstance(n.ctx, (gast.Store, gast.Param)):
            for path, t in float_leaves(anno.get(n, "type")):
                ranks.setdefault((n.id,) + path, set()).add(t.ndim)
    return {name: (key[0], key[1:]) for key, name in mode.cts.items()
            if ranks.get(key) and 0 not in ranks[key] and name not in mode.unset_flags
            and name not in mode.list_cts}


class _Source:
    """Where the backward sweep finds a variable's value at a point of the forward sweep:
    ``name``, which ``save`` (run by the forward sweep there) and ``restore`` (run by the
    backward sweep) fill in when the variable itself no longer holds it."""

    def __init__(self, name, save=None, restore=None):
        self.name, self.save, self.restore = name, save, restore
        self.placed = False


class _Sweep:
    def __init__(self, mode, tracked, backward, read_at_end):
        self.mode, self.tracked, self.backward = mode, tracked, backward
        self.after, self.heads = {}, {}  # names live after a statement, where a trip starts
        live_names(backward, set(read_at_end), self.after, self.heads)
        self.sources = {}  # (id of a merge, variable, where) -> _Source or None
        # (merge, "body"/"orelse"/"loop"/"entry") -> {cotangent: (variable, path, where)}
        self.fixes = {}

    def start(self):
        kinds = {name: ZERO for name in self.mode.cts.values()}
        kinds.update({name: ARRAY for name in self.mode.unset_flags})  # (placeholders)
        return kinds

    # --- which cotangents are 0.0 and which arrays, along the backward sweep ---------------
    def block(self, stmts, kinds):
        for s in stmts:
            if isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name):
                kinds[s.targets[0].id] = _kind(s.value, kinds)
            elif isinstance(s, gast.If) and _tests_for_none(s.test):
                self.block(s.body, kinds)  # (a rule's "no gradient": decided by typing)
            elif isinstance(s, gast.If):
                arms = {}
                for side in ("body", "orelse"):
                    arms[side] = dict(kinds)
                    self.block(getattr(s, side), arms[side])
                for name in set(arms["body"]) | set(arms["orelse"]):
                    kinds[name] = self.meet(s, name, arms)
            elif isinstance(s, (gast.For, gast.While)):
                self.loop(s, kinds)

    def meet(self, node, name, arms):
        pair = {side: arm.get(name) for side, arm in arms.items()}
        found = {k for k in pair.values() if k is not None}
        if len(found) == 1:
            return found.pop()
        if name in self.tracked and name in self.after[id(node)] and \
                self.fix(node, name, [side for side, k in pair.items() if k != ARRAY]):
            return ARRAY
        return EITHER

    def loop(self, s, kinds):
        """A trip starts with the cotangents the loop is entered with, or those the last
        trip ended with: 0.0 at the entry (the loop reads what nothing after it does) gets
        zeros there, 0.0 at the end of a trip (the trip overwrote the variable) there."""
        entry, head = dict(kinds), dict(kinds)
        for _ in range(_PASSES):
            end = dict(head)
            self.block(s.body, end)
            for name in self.tracked:
                if name not in self.heads[id(s)]:
                    continue
                if entry[name] != ARRAY and end[name] != ZERO and \
                        self.fix(s, name, ["entry"], "exit"):
                    entry[name] = ARRAY
                if entry[name] == ARRAY and end[name] != ARRAY and \
                        self.fix(s, name, ["loop"], "start"):
                    end[name] = ARRAY
            new = {name: _join(entry.get(name), end.get(name)) for name in set(entry) | set(end)}
            if new == head:
                break
            head = new
        kinds.clear()
        kinds.update(head)

    # --- zeros where they are needed ---------------------------------------------------------
    def fix(self, node, name, sides, where="start"):
        var, path = self.tracked[name]
        if self.source(node, var, where) is None:
            return False
        for side in sides:
            self.fixes.setdefault((node, side), {})[name] = (var, path, where)
        return True

    def source(self, node, var, where):
        key = (id(node), var, where)
        if key not in self.sources:
            self.sources[key] = self._source(node, var, where)
        return self.sources[key]

    def _source(self, node, var, where):
        """``var``'s value where the forward sweep's statement reversed by ``node`` starts
        (a branch; where each trip of a loop starts) or, for ``where == "exit"``, where it
        ends (a loop)."""
        mode = self.mode
        s = mode.merges.get(id(node))
        if s is None or not _set_before(mode, var, s):
            return None
        if var not in mode.unsafe:
            return _Source(var)  # set once: it still holds that value
        name = mode.names.fresh(f"{var}_at")
        if id(s) in mode.top_level and (isinstance(s, gast.If) or where == "exit"):
            return _Source(name, assign(name, load(var)))
        tape = mode.tapes[("zeros", id(s), var, where)] = mode.names.fresh(f"tape_{var}_at")
        push = gast.Expr(value=_call(gast.Attribute(value=load(tape), attr="append",
                                                    ctx=gast.Load()), [load(var)]))
        pop = assign(name, _call(gast.Attribute(value=load(tape), attr="pop",
                                                ctx=gast.Load()), []))
        return _Source(name, push, pop)

    def write(self, forward):
        for (node, side), names in self.fixes.items():
            s = self.mode.merges[id(node)]
            stmts = []
            for name, (var, path, where) in names.items():
                src = self.sources[(id(node), var, where)]
                if src.save is not None and not src.placed:
                    src.placed = True
                    self.place(forward, node, s, src, where)
                stmts.append(_locate(assign(name, _call(_ajx("cotangent_like"), [
                    load(name), _sub(load(src.name), path)])), s))
            if side == "entry":
                for t in stmts:
                    _insert(self.backward, node, t)
            else:
                (node.orelse if side == "orelse" else node.body).extend(stmts)

    def place(self, forward, node, s, src, where):
        """The forward sweep keeps the value where ``s`` starts, each trip starts or ``s``
        ends (``where``); the backward sweep takes it back before its copy of ``s`` needs
        it (where each trip ends, for a trip's start)."""
        made = self.mode.generated[id(s)]  # the forward sweep's copy of s
        save, restore = _locate(src.save, s), src.restore and _locate(src.restore, s)
        if isinstance(s, gast.If) or where == "exit":
            _insert(forward, made, save, after=where == "exit")
            if restore is not None:
                _insert(self.backward, node, restore)
        else:
            made.body.insert(0, save)
            node.body.append(restore)


def _kind(value, kinds):
    if isinstance(value, gast.Constant):
        return ZERO if type(value.value) is float else ARRAY
    if isinstance(value, gast.Name):
        return kinds.get(value.id, ARRAY)
    if isinstance(value, gast.BinOp) and isinstance(value.op, gast.Add):  # d + c
        left, right = _kind(value.left, kinds), _kind(value.right, kinds)
        return left if left == right else ARRAY if ARRAY in (left, right) else EITHER
    return ARRAY  # an op's or a rule's result


def _join(a, b):
    return b if a is None or a == b else a if b is None else EITHER


def _tests_for_none(test):
    return isinstance(test, gast.Compare) and isinstance(test.ops[0], gast.IsNot) and \
        isinstance(test.comparators[0], gast.Constant) and test.comparators[0].value is None


def _set_before(mode, var, stmt):
    """Whether ``var`` is set on every path to ``stmt`` in the function differentiated (a
    parameter, or assigned earlier in a block around it)."""
    if var in mode.params:
        return True
    for block, index in _ancestry(mode.fdef.body, stmt) or ():
        if any(isinstance(t, gast.Assign) and isinstance(t.targets[0], gast.Name) and
               t.targets[0].id == var for t in block[:index]):
            return True
    return False


def _ancestry(stmts, node):
    """[(block, index)] from the function body down to the block holding ``node``."""
    for k, s in enumerate(stmts):
        if s is node:
            return [(stmts, k)]
        for field in ("body", "orelse"):
            inner = getattr(s, field, None)
            if isinstance(s, (gast.If, gast.For, gast.While)) and inner:
                found = _ancestry(inner, node)
                if found is not None:
                    return [(stmts, k)] + found
    return None


def _insert(stmts, node, new, after=False):
    """Put statement ``new`` before (or after) ``node``, found in ``stmts`` or below."""
    (block, index), = _ancestry(stmts, node)[-1:]
    block.insert(index + after, new)
