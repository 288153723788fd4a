"""Skip what a loop's last trip computes for a next trip that never comes.

In ``for k in range(n)``, a value each trip computes only for the next trip (a
loop-carried variable that nothing reads after the loop) is wasted in the last trip.
Reverse mode makes such values: the backward sweep of ``for w, b in layers: x =
relu(w @ x + b)`` computes the cotangent of each layer's input, and in its last trip (the
first layer) that is the cotangent of the input batch, which nothing asks for: a
128x512x784 product, a fifth of the work of JAX's MLP tutorial. JAX unrolls the loop and
drops that product as dead code; here the statements that only feed such a variable go
under ``if k != n - 1``.

A variable qualifies when the loop body assigns it once, with a pure value (see
``simplify.pure_assignment``), and:

* every read of it later in the same trip is by another skipped statement;
* it is dead after the loop (``liveness``);
* if a trip reads it before assigning it (loop-carried), the loop's block assigns it
  before the loop, so the first trip never sees the skipped value of an earlier run.
"""
from collections import Counter

import gast

from ...ir import anno
from ...ir.types import ArrayType, Static
from .liveness import Liveness
from .simplify import load_nodes, pure_assignment, statement_lists, stored_names


def skip_last_trip_work(fdef):
    live = None
    for block in statement_lists(fdef):
        for position, s in enumerate(block):
            n = _trip_count(s)
            if n is not None:
                live = live or Liveness(fdef)  # (a guard adds no reads nor stores)
                _guard(live.after[id(s)], block, position, s, n)


def _trip_count(s):
    """The source text of n for ``for k in range(n)`` (n a name the body does not assign,
    or a number); else None."""
    if not (isinstance(s, gast.For) and isinstance(s.target, gast.Name) and
            isinstance(s.iter, gast.Call) and len(s.iter.args) == 1 and
            isinstance(s.iter.func, gast.Name) and s.iter.func.id == "range"):
        return None
    n = s.iter.args[0]
    if isinstance(n, gast.Constant) and type(n.value) is int:
        return str(n.value)
    known = anno.get(n, "type")
    if isinstance(known, Static) and type(known.value) is int:  # printed as a literal
        return str(known.value)
    if not isinstance(n, gast.Name) or anno.get(n, "captured"):
        return None
    if any(isinstance(m, gast.Name) and not isinstance(m.ctx, gast.Load) and m.id == n.id
           for m in gast.walk(s)):
        return None
    return n.id


def _guard(live_after, block, position, loop, n):
    body = loop.body
    stores = Counter(name for s in body for name in stored_names(s))
    defs = {s.targets[0].id: i for i, s in enumerate(body)
            if isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name)
            and stores[s.targets[0].id] == 1 and pure_assignment(s)}
    loads = [[m.id for m in load_nodes(s)] for s in body]
    candidates = {x: i for x, i in defs.items() if x not in live_after and (
        not any(x in loads[j] for j in range(i + 1)) or _assigned_before(block, position, x))}
    skipped, changed = set(), True
    while changed:
        changed = False
        for x, i in candidates.items():
            if i not in skipped and all(j in skipped for j in range(i + 1, len(body))
                                        if x in loads[j]):
                skipped.add(i)
                changed = True
    if not any(_array_op(body[i]) for i in skipped):
        return  # only scalar work: not worth a branch per trip
    guarded, run = [], []
    for i, s in enumerate(body + [None]):
        if i in skipped:
            run.append(s)
            continue
        if run:
            test = gast.Name(id="_not_last_trip", ctx=gast.Load(), annotation=None,
                             type_comment=None)
            anno.set_(test, "captured", f"{loop.target.id} != {n} - 1")
            branch = gast.If(test=test, body=run, orelse=[])
            anno.set_(branch, "merge", ({}, {}, {}))  # nothing it sets is read after it
            guarded.append(branch)
            run = []
        if s is not None:
            guarded.append(s)
    loop.body = guarded


def _assigned_before(block, position, name):
    return any(isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name) and
               s.targets[0].id == name for s in block[:position])


def _array_op(s):
    t = anno.get(s.targets[0], "type")
    return anno.get(s.value, "op") is not None and isinstance(t, ArrayType) and t.ndim > 0
