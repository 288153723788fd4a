"""Peel the first trip of a ``for`` loop whose carried variable widens to an array.

``acc = 0.0; for w in ws: acc = acc + w`` (a NumPy habit) makes ``acc`` a scalar on
the first trip and an array after it. Python runs that as it is; compiled code
needs one type per variable. Typing tells which loops do this (the loop head's
type has a higher rank than the value before the loop); those are rewritten as

    if start < stop:             # (> for a negative step)
        i = start
        <body>                   # acc is the scalar here
        for i in range(start + step, stop, step):
            <body>               # and the array here
    # zero trips: acc is still the scalar (the Numba backend reruns that call in Python)

and typed again. Loops with a ``break``/``continue`` of their own, a step not known
when the code is generated, or another kind of iteration are left alone.
"""
import gast

from ..frontend.naming import Names, assign, const, load, store
from . import anno
from .types import ArrayType, Static, is_numeric


def widening_loops(fdef, narrowing=False):
    """{position (in ``gast.walk`` order of ``for`` loops): step} of the typed loops to
    peel: a carried variable widens, and the range's step is known. With ``narrowing``
    (Numba: one type per variable), also where a variable read as a trip starts is an
    array on entry and a number where a trip ends, and nothing reads it after the loop
    (reverse mode's cotangent of a value each trip sets: the rest of the loop then
    starts from the number)."""
    loops = [n for n in gast.walk(fdef) if isinstance(n, gast.For)]
    after, heads = {}, {}
    if narrowing:
        live_names(fdef.body, set(), after, heads)
    out = {}
    for k, loop in enumerate(loops):
        merge = anno.get(loop, "merge")
        if merge is None or not _peelable(loop):
            continue
        entry, body_end, head = merge
        step = anno.get(loop.iter.args[2], "type") if len(loop.iter.args) == 3 else Static(1)
        if not (isinstance(step, Static) and type(step.value) is int and step.value):
            continue
        if any(widens(entry.get(name), t) for name, t in head.items()) or narrowing and any(
                widens(body_end.get(name), t) and not widens(entry.get(name), t) and
                name in heads[id(loop)] and name not in after[id(loop)]
                for name, t in head.items()):
            out[k] = step.value
    return out


def live_names(stmts, out, after, heads):
    """Names live before ``stmts`` (read before they are assigned again) given those live
    after them (``out``); records the names live after each statement (``after``) and
    where each trip of a loop starts (``heads``)."""
    live = set(out)
    for s in reversed(stmts):
        after[id(s)] = live
        if isinstance(s, gast.Assign):
            target = s.targets[0]
            live = (live - {target.id} if isinstance(target, gast.Name) else
                    live | _loads(target)) | _loads(s.value)
        elif isinstance(s, gast.If):
            live = live_names(s.body, live, after, heads) | \
                live_names(s.orelse, live, after, heads) | _loads(s.test)
        elif isinstance(s, (gast.For, gast.While)):
            head = set(live)
            while True:
                new = head | live_names(s.body, head, after, heads)
                if new == head:
                    break
                head = new
            heads[id(s)] = head
            live = head | _loads(s.iter if isinstance(s, gast.For) else s.test)
        else:
            live = live | _loads(s)
    return live


def _loads(node):
    return {n.id for n in gast.walk(node) if isinstance(n, gast.Name)
            and isinstance(n.ctx, gast.Load)}


def widens(before, after):
    """Whether a variable goes from a number of lower rank (``before``) to an array
    (``after``): one type per variable cannot hold both."""
    if not isinstance(after, ArrayType) or not after.ndim or before is None \
            or not is_numeric(before):
        return False
    return (0 if isinstance(before, Static) else before.ndim) < after.ndim


def peel(anf, steps):
    """A copy of the untyped ``anf`` with the loops ``widening_loops`` found peeled; None
    when there are none."""
    if not steps:
        return None
    fdef = anno.clean_copy(anf)
    names = Names(fdef)
    loops = [n for n in gast.walk(fdef) if isinstance(n, gast.For)]
    _rewrite(fdef, {id(loops[k]): step for k, step in steps.items()}, names, fdef)
    return fdef


def _peelable(loop):
    bounds = loop.iter.args
    if not (isinstance(loop.iter, gast.Call) and isinstance(loop.iter.func, gast.Name)
            and loop.iter.func.id == "range" and 1 <= len(bounds) <= 3
            and isinstance(loop.target, gast.Name) and not loop.orelse):
        return False
    return not _own_jumps(loop.body)


def _own_jumps(stmts):
    """Whether a ``break``/``continue`` in ``stmts`` belongs to the loop around them."""
    for s in stmts:
        if isinstance(s, (gast.Break, gast.Continue)):
            return True
        if isinstance(s, gast.If) and (_own_jumps(s.body) or _own_jumps(s.orelse)):
            return True
    return False


def _rewrite(node, targets, names, fdef):
    for field in ("body", "orelse"):
        stmts = getattr(node, field, None)
        if not isinstance(stmts, list):
            continue
        out = []
        for s in stmts:
            _rewrite(s, targets, names, fdef)
            out.extend(_peeled(s, targets[id(s)], names, _trip_locals(s, fdef))
                       if id(s) in targets else [s])
        setattr(node, field, out)


def _trip_locals(loop, fdef):
    """Variables each trip sets before reading and nothing after the loop reads: the
    peeled trip gets names of its own for them, so the loop's stay single-assigned (and
    fusable) there."""
    inside = {id(n) for n in gast.walk(loop)}
    read_outside = {n.id for n in gast.walk(fdef) if isinstance(n, gast.Name)
                    and isinstance(n.ctx, gast.Load) and id(n) not in inside}
    seen, out = set(), set()
    for s in loop.body:
        loads = {n.id for n in gast.walk(s) if isinstance(n, gast.Name)
                 and isinstance(n.ctx, gast.Load)}
        stores = {n.id for n in gast.walk(s) if isinstance(n, gast.Name)
                  and isinstance(n.ctx, gast.Store)}
        if isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name):
            name = s.targets[0].id
            if name not in seen and name not in loads and name not in read_outside:
                out.add(name)
        seen |= loads | stores
    return out - {loop.target.id}


def _peeled(loop, step, names, trip_locals):
    args = list(loop.iter.args)
    start, stop = (const(0), args[0]) if len(args) == 1 else (args[0], args[1])
    test, after = names.fresh("trips"), names.fresh("start")
    first = [assign(loop.target.id, anno.clean_copy(start))] + \
        [anno.clean_copy(s) for s in loop.body]
    renamed = {name: names.fresh(name + "_first") for name in sorted(trip_locals)}
    for n in (n for s in first for n in gast.walk(s)):
        if isinstance(n, gast.Name) and n.id in renamed:
            n.id = renamed[n.id]
    rest = gast.For(target=store(loop.target.id),
                    iter=gast.Call(func=load("range"), args=[
                        load(after), anno.clean_copy(stop), anno.clean_copy(args[2])
                        if len(args) == 3 else const(1)], keywords=[]),
                    body=loop.body, orelse=[], type_comment=None)
    compare = gast.Compare(left=anno.clean_copy(start),
                           ops=[gast.Lt() if step > 0 else gast.Gt()],
                           comparators=[anno.clean_copy(stop)])
    body = first + [assign(after, gast.BinOp(left=anno.clean_copy(start), op=gast.Add(),
                                             right=const(step))), rest]
    out = [assign(test, compare), gast.If(test=load(test), body=body, orelse=[])]
    for n in out:
        for m in gast.walk(n):
            if isinstance(m, (gast.stmt, gast.expr)) and not hasattr(m, "lineno"):
                m.lineno, m.col_offset = loop.lineno, loop.col_offset
    return out
