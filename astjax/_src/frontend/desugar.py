"""Structural desugaring, before A-normal form.

* ``for`` over anything but ``range`` becomes a counted loop over
  ``range(len(seq))`` (``enumerate``/``zip`` included), so every loop the later
  stages see has a trip count known at loop entry.
* Comprehensions become loops that append to a list.
* ``return`` inside control flow, ``break`` and ``continue`` become flags: the
  statements after one are guarded by ``if not flag``, and a loop that can be
  left early becomes a ``while`` whose condition tests the flag. The function
  ends in exactly one ``return``.
* Nested defs and lambdas become functions of their own, taking the enclosing
  variables they use as a closure tuple (``lift_nested_functions``, below).
* Constructs we do not compile are rejected with the user's file:line:col.
"""
import copy
import inspect

import gast

from ..errors import UnsupportedSyntaxError
from .list_mutations import changes_list, grows_list, list_mutations_as_appends
from .naming import (Names, and_, assign, call, const, copy_loc, load, not_, or_, store)
from .synthetic import SyntheticFunction, function_def

_UNSUPPORTED = {
    gast.Try: "try/except", gast.With: "with", gast.AsyncWith: "async with",
    gast.AsyncFor: "async for", gast.AsyncFunctionDef: "async def", gast.Global: "global",
    gast.Nonlocal: "nonlocal", gast.Yield: "yield (generators)",
    gast.YieldFrom: "yield from (generators)", gast.Await: "await", gast.ClassDef: "class",
    gast.Delete: "del", gast.Import: "import", gast.ImportFrom: "import",
    gast.SetComp: "set comprehensions",
    gast.Set: "set literals", gast.Match: "match", gast.NamedExpr: "the walrus operator :=",
}
# what the first rewrites of Desugar.function act on (a nested def or lambda included)
_SUGAR = {gast.Starred, gast.DictComp, gast.ListComp, gast.GeneratorExp, gast.Lambda,
          gast.FunctionDef}
_HINTS = {
    "try/except": "move error handling outside the transformed function",
    "global": "pass the value as an argument and return the new value",
}


def check_supported(parsed):
    starred_targets = {e for n in gast.walk(parsed.node) if isinstance(n, gast.Assign)
                       for t in n.targets for e in _starred_in(t)}
    starred_targets |= {e for n in gast.walk(parsed.node) if isinstance(n, gast.Call)
                        for e in n.args if isinstance(e, gast.Starred)}  # f(*xs)
    starred_targets |= {e for n in gast.walk(parsed.node) if isinstance(n, (gast.Tuple, gast.List))
                        and isinstance(n.ctx, gast.Load)
                        for e in n.elts if isinstance(e, gast.Starred)}  # (*xs, y)
    for node in gast.walk(parsed.node):
        if node is parsed.node:
            continue
        what = _UNSUPPORTED.get(type(node))
        if isinstance(node, gast.With) and _noop_with(parsed, node):
            what = None
        if isinstance(node, gast.Delete) and all(isinstance(t, gast.Subscript)
                                                 for t in node.targets):
            what = None  # del xs[i] of a list: list_mutations (which refuses the rest)
        if what is not None:
            hint = _HINTS.get(what, "rewrite it with supported Python (see the README)")
            raise parsed.error(node, f"astjax cannot compile {what} here; {hint}",
                               UnsupportedSyntaxError)
        if isinstance(node, gast.Starred) and node not in starred_targets:
            raise parsed.error(node, "astjax cannot compile starred expressions (*x); index "
                               "the sequence explicitly", UnsupportedSyntaxError)
    if parsed.node.args.kwarg:
        raise parsed.error(parsed.node, "astjax cannot compile **kwargs parameters",
                           UnsupportedSyntaxError)


class Desugar:
    def __init__(self, parsed, names):
        self.parsed = parsed
        self.names = names
        self.ret_flag = self.ret_val = None
        self.loops = []  # stack of {"brk": name|None, "cont": name|None}

    # --- entry -----------------------------------------------------------------------------
    def function(self, fdef):
        # the rewrites below that find nothing to rewrite are skipped: most functions
        # desugared are generated ones (derivatives), hundreds of statements long
        kinds = {type(n) for n in gast.walk(fdef) if n is not fdef}
        if gast.With in kinds:
            _inline_noop_withs(self.parsed, fdef.body)
        sugared = bool(kinds & _SUGAR)
        if sugared or gast.Tuple in kinds or gast.List in kinds:
            _copies_unpacked_as_their_iterable(fdef)
        if sugared:
            _StarredTargets(self.names).visit(fdef)
            _DictComprehensions(self.parsed).visit(fdef)
            lift_nested_functions(self.parsed, self.names, fdef)
        displays = list_mutations_as_appends(fdef, self.names, self.parsed)
        _list_aliases_resolved(fdef)
        _remade_lists_renamed(fdef.body, self.names)
        if sugared or gast.List in kinds or displays:
            _grown_list_displays_as_appends(fdef, self.names, self.parsed)
        body = [x for s in fdef.body for x in _as_list(self.comprehensions(s))] if sugared \
            else list(fdef.body)
        body = self.loops_over_sequences(body)
        early = self._has_early_return(body)
        fdef.body = body
        if early:
            self.ret_flag, self.ret_val = self.names.fresh("returned"), self.names.fresh("retval")
        body, _ = self.block(body)
        if early:
            init = assign(self.ret_flag, const(False), fdef)
            tail = gast.Return(value=load(self.ret_val))
            # a path that falls off the end returns None, as in Python
            body = [init] + body
            if not _always_returns(fdef.body):
                fall = gast.If(test=not_(load(self.ret_flag)),
                               body=[assign(self.ret_val, const(None))], orelse=[])
                body.append(copy_loc(fall, fdef))
            body.append(copy_loc(tail, fdef))
        elif not body or not isinstance(body[-1], gast.Return):
            body.append(copy_loc(gast.Return(value=const(None)), fdef))
        fdef.body = body
        return fdef

    @staticmethod
    def _has_early_return(body):
        returns = [n for s in body for n in gast.walk(s) if isinstance(n, gast.Return)]
        return bool(returns) and not (len(returns) == 1 and body[-1] is returns[0])

    # --- break / continue / return ---------------------------------------------------------
    def block(self, stmts):
        """Lower a statement list; return (new statements, flags that may be set)."""
        out = []
        for k, s in enumerate(stmts):
            new, escapes = self.statement(s)
            out.extend(new)
            if escapes:
                rest, rest_escapes = self.block(stmts[k + 1:])
                if rest:
                    guard = not_(or_(*[load(f) for f in sorted(escapes)]))
                    out.append(copy_loc(gast.If(test=guard, body=rest, orelse=[]), stmts[k + 1]))
                return out, escapes | rest_escapes
        return out, set()

    def statement(self, s):
        if isinstance(s, gast.Return):
            if self.ret_flag is None:
                return [s], set()
            value = s.value if s.value is not None else const(None)
            new = [assign(self.ret_val, value, s), assign(self.ret_flag, const(True), s)]
            return new, {self.ret_flag}
        if isinstance(s, (gast.Break, gast.Continue)):
            loop = self.loops[-1]
            flag = loop["brk" if isinstance(s, gast.Break) else "cont"]
            return [assign(flag, const(True), s)], {flag}
        if isinstance(s, gast.If):
            body, e1 = self.block(s.body)
            orelse, e2 = self.block(s.orelse)
            s.body, s.orelse = body or [gast.Pass()], orelse
            return [s], e1 | e2
        if isinstance(s, (gast.For, gast.While)):
            return self.loop(s)
        return [s], set()

    def loop(self, s):
        """A loop with its break/continue as flags; its ``else`` runs unless it was left early."""
        orelse, s.orelse = s.orelse, []
        new, escapes, exits = self._loop_body(s)
        if orelse:
            else_body, else_escapes = self.block(orelse)
            if exits:
                guard = not_(or_(*[load(f) for f in exits]))
                new.append(copy_loc(gast.If(test=guard, body=else_body, orelse=[]), orelse[0]))
            else:
                new.extend(else_body)
            escapes |= else_escapes
        return new, escapes

    def _loop_body(self, s):
        has = lambda kind: any(isinstance(n, kind) for n in _walk_loop_body(s.body))
        info = {"brk": self.names.fresh("brk") if has(gast.Break) else None,
                "cont": self.names.fresh("cont") if has(gast.Continue) else None}
        self.loops.append(info)
        body, escapes = self.block(s.body)
        self.loops.pop()
        escapes.discard(info["cont"])
        if info["cont"]:
            body.insert(0, assign(info["cont"], const(False), s))
        exits = [f for f in (info["brk"], self.ret_flag) if f in escapes]
        escapes.discard(info["brk"])
        pre = [assign(info["brk"], const(False), s)] if info["brk"] else []
        if not exits:
            s.body = body or [gast.Pass()]
            return pre + [s], escapes, exits
        stay = not_(or_(*[load(f) for f in exits]))
        if isinstance(s, gast.While):
            s.test, s.body = and_(stay, s.test), body
            return pre + [s], escapes, exits
        return pre + self._for_as_while(s, body, stay), escapes, exits

    def _for_as_while(self, s, body, stay):
        """``for i in range(a, b, c)`` left early: ``while not flag and i' < b``."""
        args = s.iter.args
        start, stop, step = ((const(0), args[0], const(1)) if len(args) == 1 else
                             (args[0], args[1], args[2] if len(args) == 3 else const(1)))
        nxt, end, inc = self.names.fresh("i"), self.names.fresh("stop"), self.names.fresh("step")
        if isinstance(step, gast.Constant):
            cmp = gast.Lt() if step.value > 0 else gast.Gt()
            in_range = gast.Compare(left=load(nxt), ops=[cmp], comparators=[load(end)])
        else:
            up = gast.Compare(left=load(nxt), ops=[gast.Lt()], comparators=[load(end)])
            down = gast.Compare(left=load(nxt), ops=[gast.Gt()], comparators=[load(end)])
            pos = gast.Compare(left=load(inc), ops=[gast.Gt()], comparators=[const(0)])
            in_range = gast.IfExp(test=pos, body=up, orelse=down)
        head = [assign(nxt, start, s), assign(end, stop, s), assign(inc, step, s)]
        advance = [gast.Assign(targets=[s.target], value=load(nxt), type_comment=None),
                   assign(nxt, gast.BinOp(left=load(nxt), op=gast.Add(), right=load(inc)))]
        loop = gast.While(test=and_(stay, in_range), body=copy_loc_all(advance, s) + body,
                          orelse=[])
        return copy_loc_all(head, s) + [copy_loc(loop, s)]

    # --- for over sequences ------------------------------------------------------------------
    def loops_over_sequences(self, stmts):
        out = []
        for s in stmts:
            for field in ("body", "orelse"):
                if hasattr(s, field) and isinstance(getattr(s, field), list):
                    setattr(s, field, self.loops_over_sequences(getattr(s, field)))
            if isinstance(s, gast.For) and not (_is_call_to(s.iter, "range")
                                                and isinstance(s.target, gast.Name)):
                out.extend(self._counted(s))
            else:
                out.append(s)
        return out

    def _counted(self, s):
        """``for x in seq`` -> ``for i in range(len(seq)): x = seq[i]`` (zip/enumerate too)."""
        pre, idx = [], self.names.fresh("i")
        length, element = self._element(s.iter, load(idx), pre, s)
        bind = copy_loc(gast.Assign(targets=[s.target], value=element, type_comment=None), s)
        loop = gast.For(target=store(idx), iter=call("range", length), body=[bind] + s.body,
                        orelse=s.orelse, type_comment=None)
        return copy_loc_all(pre, s) + [copy_loc(loop, s)]

    def _element(self, it, idx, pre, where):
        """(length expression, element-at-idx expression) of an iterable expression."""
        if _is_call_to(it, "enumerate"):
            length, elem = self._element(it.args[0], idx, pre, where)
            start = it.args[1] if len(it.args) > 1 else next(
                (k.value for k in it.keywords if k.arg == "start"), None)
            i = idx if start is None else gast.BinOp(left=idx, op=gast.Add(), right=start)
            return length, gast.Tuple(elts=[i, elem], ctx=gast.Load())
        if _is_call_to(it, "zip"):
            parts = [self._element(a, idx, pre, where) for a in it.args]
            length = parts[0][0] if len(parts) == 1 else call("min", *[p[0] for p in parts])
            return length, gast.Tuple(elts=[p[1] for p in parts], ctx=gast.Load())
        if _is_call_to(it, "reversed"):
            if len(it.args) != 1 or it.keywords:
                raise self.parsed.error(it, "reversed() takes one sequence",
                                        UnsupportedSyntaxError)
            # the element at n - 1 - idx, with n (the length) computed once before the loop
            n = self.names.fresh("n")
            back = gast.BinOp(left=gast.BinOp(left=load(n), op=gast.Sub(), right=const(1)),
                              op=gast.Sub(), right=idx)
            length, elem = self._element(it.args[0], back, pre, where)
            pre.append(assign(n, length, where))
            return load(n), elem
        if _is_call_to(it, "range"):
            return self._range_element(it, idx, pre, where)
        if _copied_iterable(it) is not None:  # for r in [*x], list(x): x's elements
            return self._element(_copied_iterable(it), idx, pre, where)
        seq = self.names.fresh("seq")
        pre.append(assign(seq, it, where))
        return call("len", load(seq)), gast.Subscript(value=load(seq), slice=idx,
                                                      ctx=gast.Load())

    def _range_element(self, it, idx, pre, where):
        """``range(a, b, c)`` as (length, a + idx * c); the step must be a literal."""
        if it.keywords or not 1 <= len(it.args) <= 3:
            raise self.parsed.error(it, "range() takes one to three positional arguments",
                                    UnsupportedSyntaxError)
        if len(it.args) == 1:
            return it.args[0], idx
        step = it.args[2] if len(it.args) == 3 else const(1)
        value = step.value if isinstance(step, gast.Constant) else None
        if isinstance(step, gast.UnaryOp) and isinstance(step.op, gast.USub) and \
                isinstance(step.operand, gast.Constant):
            value = -step.operand.value
        if type(value) is not int or value == 0:
            raise self.parsed.error(it, "here range() needs a nonzero integer literal step "
                                    "(inside zip/enumerate/reversed)", UnsupportedSyntaxError)
        start, stop = self.names.fresh("start"), self.names.fresh("stop")
        pre.extend([assign(start, it.args[0], where), assign(stop, it.args[1], where)])
        # len(range(a, b, c)) = max(0, (b - a + c - sign(c)) // c)
        span = gast.BinOp(left=load(stop), op=gast.Sub(), right=load(start))
        if value != 1:
            span = gast.BinOp(left=span, op=gast.Add(),
                              right=const(value - (1 if value > 0 else -1)))
            span = gast.BinOp(left=span, op=gast.FloorDiv(), right=const(value))
        length = call("max", const(0), span)
        offset = idx if value == 1 else gast.BinOp(left=idx, op=gast.Mult(), right=const(value))
        return length, gast.BinOp(left=load(start), op=gast.Add(), right=offset)

    # --- comprehensions ------------------------------------------------------------------------
    def comprehensions(self, stmt):
        """Hoist list comprehensions / generator expressions in ``stmt`` into loops before it."""
        pre = []

        class Hoist(gast.NodeTransformer):
            def visit_ListComp(inner, node):
                inner.generic_visit(node)
                return self._hoist(node, pre)
            visit_GeneratorExp = visit_ListComp

        if _builds_a_named_list(stmt):
            # `xs = [f(i) for i in ...]`: the loop appends to xs itself; a fresh list that
            # xs then names would be a second list to reverse mode (_list_aliases_resolved)
            Hoist().generic_visit(stmt.value)
            self._hoist(stmt.value, pre, out=stmt.targets[0].id)
            return pre
        for name, value in gast.iter_fields(stmt):
            if name in ("body", "orelse"):
                continue  # nested statements hoist into their own block, below
            if isinstance(stmt, gast.While) and name == "test":
                if any(isinstance(n, (gast.ListComp, gast.GeneratorExp)) for n in gast.walk(value)):
                    raise self.parsed.error(value, "a comprehension in a while condition is not "
                                            "supported; compute it in the loop body",
                                            UnsupportedSyntaxError)
                continue
            if isinstance(value, gast.AST):
                setattr(stmt, name, Hoist().visit(value))
            elif isinstance(value, list):
                setattr(stmt, name, [Hoist().visit(v) if isinstance(v, gast.AST) else v
                                     for v in value])
        for field in ("body", "orelse"):
            if hasattr(stmt, field) and isinstance(getattr(stmt, field), list):
                setattr(stmt, field, [x for s in getattr(stmt, field)
                                      for x in _as_list(self.comprehensions(s))])
        return pre + [stmt] if pre else stmt

    def _hoist(self, node, pre, out=None):
        out = out or self.names.fresh("lst")
        renames = {}
        for gen in node.generators:
            if gen.is_async:
                raise self.parsed.error(node, "async comprehensions are not supported",
                                        UnsupportedSyntaxError)
            for n in gast.walk(gen.target):
                if isinstance(n, gast.Name):
                    renames[n.id] = self.names.fresh(n.id + "_")
        _rename(node, renames)
        append = gast.Expr(value=gast.Call(
            func=gast.Attribute(value=load(out), attr="append", ctx=gast.Load()),
            args=[node.elt], keywords=[]))
        body = [append]
        for gen in reversed(node.generators):
            for cond in reversed(gen.ifs):
                body = [gast.If(test=cond, body=body, orelse=[])]
            body = [gast.For(target=gen.target, iter=gen.iter, body=body, orelse=[],
                             type_comment=None)]
        pre.append(assign(out, gast.List(elts=[], ctx=gast.Load()), node))
        pre.extend(copy_loc_all(body, node))
        return copy_loc(load(out), node)


def _list_aliases_resolved(fdef):
    """``cols = hs`` at the top of the body, where ``hs`` is a list the function makes once
    (``hs = []`` or a comprehension) and ``cols`` is assigned nowhere else: ``cols`` reads
    become ``hs`` reads and the copy goes. Both names are one list in Python; to reverse
    mode two names were two lists, and the cotangents given to ``cols`` never reached
    ``hs`` (an IndexError, or a zero gradient)."""
    stores = {}
    for n in gast.walk(fdef):
        if isinstance(n, gast.Name) and isinstance(n.ctx, (gast.Store, gast.Del, gast.Param)):
            stores[n.id] = stores.get(n.id, 0) + 1
    lists = {s.targets[0].id for s in fdef.body
             if isinstance(s, gast.Assign) and len(s.targets) == 1 and
             isinstance(s.targets[0], gast.Name) and
             isinstance(s.value, (gast.List, gast.ListComp))}
    for s in list(fdef.body):
        if not (isinstance(s, gast.Assign) and len(s.targets) == 1 and
                isinstance(s.targets[0], gast.Name) and isinstance(s.value, gast.Name)):
            continue
        alias, source = s.targets[0].id, s.value.id
        if source in lists and stores.get(source) == 1 and stores.get(alias) == 1:
            fdef.body.remove(s)
            for later in fdef.body:
                _rename(later, {alias: source})


def _builds_a_named_list(stmt):
    """``name = [... for ...]`` where the comprehension does not read ``name``."""
    if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and
            isinstance(stmt.targets[0], gast.Name) and isinstance(stmt.value, gast.ListComp)):
        return False
    name = stmt.targets[0].id
    return not any(isinstance(n, gast.Name) and n.id == name for n in gast.walk(stmt.value))


DICT_FROM = "_astjax_dict_from"  # lax/trees.py's dict_from, whatever the user's names


def _remade_lists_renamed(body, names):
    """A list made again in the function's body (``xs = [...]`` a second time, outside
    control flow) gets a fresh name from there on: each list is then made once on every
    path, as differentiating reads of it by index needs."""
    made = set()
    for k, s in enumerate(body):
        if not (isinstance(s, gast.Assign) and len(s.targets) == 1 and
                isinstance(s.targets[0], gast.Name) and (isinstance(s.value, gast.List) or
                                                         _slice_of(s.value, made))):
            continue
        name = s.targets[0].id
        if name in made:
            new = names.fresh(name)
            s.targets[0].id = new  # the display itself may still read the old list
            for later in body[k + 1:]:
                _rename(later, {name: new})
            name = new
        made.add(name)


def _slice_of(value, lists):
    """``xs[a:b]`` of one of ``lists`` (``hs = hs[1:]`` makes the list again too)."""
    return isinstance(value, gast.Subscript) and isinstance(value.slice, gast.Slice) and \
        isinstance(value.value, gast.Name) and value.value.id in lists


def _grown_list_displays_as_appends(fdef, names, parsed=None):
    """``xs = [a, b]`` for a list the function appends to (or pops from) later, itself or
    in a function it passes the list to (``push(xs, h)``), becomes ``xs = []`` and an
    append per element (``*ys``: a loop over ``ys``): a list built at run time from the
    start (one element type), as the NumPy habit ``activations = [x]; ...
    activations.append(h)`` expects."""
    grown = _grown_names(fdef) | _slices_in_loops_as_displays(fdef)
    displays = {s.targets[0].id for s in gast.walk(fdef) if isinstance(s, gast.Assign) and
                len(s.targets) == 1 and isinstance(s.targets[0], gast.Name) and
                isinstance(s.value, gast.List) and s.value.elts} - grown
    if displays and parsed is not None:
        grown |= _passed_to_callees_growing_them(parsed, fdef, displays)
    if not grown:
        return
    blocks = [getattr(n, f) for n in gast.walk(fdef) for f in ("body", "orelse")
              if isinstance(getattr(n, f, None), list)]
    for stmts in blocks:
        stmts[:] = [t for s in stmts for t in _split_parallel_assignment(s, grown)]
        new = []
        for s in stmts:
            if isinstance(s, gast.Assign) and len(s.targets) == 1 and \
                    isinstance(s.targets[0], gast.Name) and s.targets[0].id in grown and \
                    isinstance(s.value, gast.List) and s.value.elts:
                name = s.targets[0].id
                elts = s.value.elts
                if any(isinstance(n, gast.Name) and n.id == name for n in gast.walk(s.value)):
                    # ``hs = [hs[-1] * 2.0]``: the elements read the old list, so they are
                    # computed before it is replaced (a starred one's items copied to a
                    # list of their own: ``hs = [*hs, y]``)
                    kept = []
                    for e in elts:
                        tmp = names.fresh("item")
                        if isinstance(e, gast.Starred):
                            item = names.fresh("item")
                            new.append(assign(tmp, gast.List(elts=[], ctx=gast.Load()), s))
                            new.append(copy_loc(gast.For(
                                target=store(item), iter=e.value, body=[copy_loc(gast.Expr(
                                    value=gast.Call(func=gast.Attribute(
                                        value=load(tmp), attr="append", ctx=gast.Load()),
                                        args=[load(item)], keywords=[])), s)],
                                orelse=[], type_comment=None), s))
                            e = gast.Starred(value=load(tmp), ctx=gast.Load())
                        else:
                            new.append(assign(tmp, e, s))
                            e = load(tmp)
                        kept.append(e)
                    elts = kept
                new.append(assign(name, gast.List(elts=[], ctx=gast.Load()), s))
                for e in elts:
                    item = load(names.fresh("item")) if isinstance(e, gast.Starred) else e
                    append = copy_loc(gast.Expr(value=gast.Call(func=gast.Attribute(
                        value=load(name), attr="append", ctx=gast.Load()), args=[item],
                        keywords=[])), s)
                    if isinstance(e, gast.Starred):
                        append = copy_loc(gast.For(target=store(item.id), iter=e.value,
                                                   body=[append], orelse=[],
                                                   type_comment=None), s)
                    new.append(append)
            else:
                new.append(s)
        stmts[:] = new


def _slices_in_loops_as_displays(fdef):
    """``hs = hs[1:]`` in a loop's body, on a list made by a display or comprehension (or
    appended to): ``hs = [*hs[1:]]``, and the names it does this to, lists built at run
    time from then on (their length changes from trip to trip, which a list of known
    length cannot do; a slice made again under the same name is a new list to reverse
    mode, as ``hs = [hs[-1] * 2.0]`` in a loop is)."""
    looped = [m for n in gast.walk(fdef) if isinstance(n, (gast.For, gast.While))
              for b in n.body for m in gast.walk(b)]
    remade = [m for m in looped if isinstance(m, gast.Assign) and len(m.targets) == 1 and
              isinstance(m.targets[0], gast.Name) and _slice_of(m.value, {m.targets[0].id})]
    if not remade:
        return set()
    names = {m.targets[0].id for m in remade}
    lists, other, skip = set(), set(), {id(m.targets[0]) for m in remade}
    for n in gast.walk(fdef):  # (every other assignment to the name makes a list)
        if isinstance(n, gast.Assign) and len(n.targets) == 1 and \
                isinstance(n.targets[0], gast.Name) and \
                isinstance(n.value, (gast.List, gast.ListComp)):
            lists.add(n.targets[0].id)
            skip.add(id(n.targets[0]))
        elif isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store) and id(n) not in skip:
            other.add(n.id)
    names &= (lists | _grown_names(fdef)) - other
    for m in remade:
        if m.targets[0].id in names:
            m.value = copy_loc(gast.List(elts=[gast.Starred(value=m.value, ctx=gast.Load())],
                                         ctx=gast.Load()), m)
    return names


def _split_parallel_assignment(s, grown):
    """``hs, gs = [x], [y]`` where the function appends to ``hs`` (or ``gs``): one
    assignment per name (no target is read on the right), so each display is seen as the
    making of a list built at run time."""
    if not (isinstance(s, gast.Assign) and len(s.targets) == 1 and
            isinstance(s.targets[0], (gast.Tuple, gast.List)) and
            isinstance(s.value, (gast.Tuple, gast.List)) and
            len(s.targets[0].elts) == len(s.value.elts) and
            all(isinstance(t, gast.Name) for t in s.targets[0].elts) and
            not any(isinstance(e, gast.Starred) for e in s.value.elts)):
        return [s]
    targets = {t.id for t in s.targets[0].elts}
    if not targets & grown or len(targets) < len(s.targets[0].elts) or any(
            isinstance(n, gast.Name) and n.id in targets for n in gast.walk(s.value)):
        return [s]
    return [copy_loc(gast.Assign(targets=[store(t.id)], value=v, type_comment=None), s)
            for t, v in zip(s.targets[0].elts, s.value.elts)]


def _grown_names(fdef):
    """The names ``fdef`` calls ``append``, ``pop``, ``insert`` or ``extend`` on (or adds a
    list to, or deletes an element of)."""
    return {changes_list(n) for n in gast.walk(fdef) if changes_list(n) is not None} | \
        {grows_list(n) for n in gast.walk(fdef) if grows_list(n) is not None}


def _passed_to_callees_growing_them(parsed, fdef, candidates, seen=None):
    """The names of ``candidates`` that ``fdef`` passes to a Python function that appends
    to or pops from that parameter (itself, or in a function it passes it on to)."""
    from .parse import parse_function
    seen = set() if seen is None else seen
    namespace = {**getattr(getattr(parsed, "fn", None), "__globals__", {}),
                 **getattr(parsed, "freevars", {})}
    out = set()
    for n in gast.walk(fdef):
        if not (isinstance(n, gast.Call) and isinstance(n.func, gast.Name)):
            continue
        passed = list(enumerate(n.args)) + [(k.arg, k.value) for k in n.keywords]
        passed = [(k, a.id) for k, a in passed if isinstance(a, gast.Name) and
                  a.id in candidates and a.id not in out]
        fn = namespace.get(n.func.id)
        if not passed or not inspect.isfunction(fn) or fn in seen:
            continue
        try:
            callee = parse_function(fn)
        except Exception:  # (no source: not compiled as a user function anyway)
            continue
        seen.add(fn)
        params = [a.id for a in callee.node.args.posonlyargs + callee.node.args.args]
        positions = {k: params[k] if isinstance(k, int) and k < len(params) else k
                     for k, _ in passed}
        changed = _grown_names(callee.node) | _passed_to_callees_growing_them(
            callee, callee.node, set(params) - _grown_names(callee.node), seen)
        out.update(name for k, name in passed if positions[k] in changed)
        seen.discard(fn)
    return out


def _starred_in(target):
    """The starred element of a tuple or list assignment target (``a, *b = x``), nested
    targets included."""
    if not isinstance(target, (gast.Tuple, gast.List)):
        return []
    return [e for elt in target.elts
            for e in ([elt] if isinstance(elt, gast.Starred) else _starred_in(elt))]


class _StarredTargets(gast.NodeTransformer):
    """``first, *rest, last = x`` becomes ``t = x; first = t[0]; rest = t[1:-1];
    last = t[-1]`` (JAX's docs: ``*hidden, last = params``). ``rest`` is a slice of ``x``,
    so a tuple gives a tuple where Python gives a list."""

    def __init__(self, names):
        self.names = names

    def visit_Assign(self, node):
        if len(node.targets) != 1 or not _starred_in(node.targets[0]):
            return node
        elts = node.targets[0].elts
        tmp = self.names.fresh("unpacked")
        out = [assign(tmp, node.value, node)]
        k = next((i for i, e in enumerate(elts) if isinstance(e, gast.Starred)), None)
        for i, elt in enumerate(elts):
            if k is None or i < k:
                index = const(i)
            elif i == k:
                after = len(elts) - k - 1
                index = gast.Slice(lower=const(k) if k else None,
                                   upper=const(-after) if after else None, step=None)
                elt = elt.value
            else:
                index = const(i - len(elts))
            value = gast.Subscript(value=load(tmp), slice=index, ctx=gast.Load())
            item = copy_loc(gast.Assign(targets=[elt], value=value, type_comment=None), node)
            out.extend(_as_list(self.visit_Assign(item)))
        return out


class _DictComprehensions(gast.NodeTransformer):
    """``{k: v for t in xs}`` -> ``dict_from(lambda t: (k, v), xs)``: the keys must be known
    when the code is generated (a dict's keys are part of its type), so the display is
    built then (lax/trees.py), from the types of ``xs``'s elements."""

    def __init__(self, parsed):
        self.parsed = parsed

    def visit_DictComp(self, node):
        self.generic_visit(node)
        if len(node.generators) != 1 or node.generators[0].ifs or \
                node.generators[0].is_async:
            raise self.parsed.error(node, "astjax compiles dict comprehensions with one "
                                    "`for` and no `if` only", UnsupportedSyntaxError)
        gen = node.generators[0]
        names = [n.id for n in gast.walk(gen.target) if isinstance(n, gast.Name)]
        if not isinstance(gen.target, gast.Name) and not (
                isinstance(gen.target, gast.Tuple) and len(names) == len(gen.target.elts)):
            raise self.parsed.error(gen.target, "a dict comprehension's target must be a name "
                                    "or a tuple of names", UnsupportedSyntaxError)
        params = gast.arguments(args=[gast.Name(id=name, ctx=gast.Param(), annotation=None,
                                                type_comment=None) for name in names],
                                posonlyargs=[], vararg=None, kwonlyargs=[], kw_defaults=[],
                                kwarg=None, defaults=[])
        pair = gast.Tuple(elts=[node.key, node.value], ctx=gast.Load())
        fn = gast.Lambda(args=params, body=pair)
        unpack = const(len(names) if isinstance(gen.target, gast.Tuple) else 0)
        it, view = gen.iter, const(None)
        if isinstance(it, gast.Call) and isinstance(it.func, gast.Attribute) and \
                it.func.attr in ("keys", "values", "items") and not it.args:
            # d.items(): pass d itself, so that its values stay differentiable
            it, view = it.func.value, const(it.func.attr)
        return copy_loc(call(DICT_FROM, fn, it, unpack, view), node)


def _always_returns(stmts):
    """Every path through ``stmts`` ends in a return (so no implicit ``return None``)."""
    if not stmts:
        return False
    last = stmts[-1]
    if isinstance(last, (gast.Return, gast.Raise)):  # (a raise never falls off the end)
        return True
    if isinstance(last, gast.If):
        return _always_returns(last.body) and _always_returns(last.orelse)
    return False


def _rename(node, renames):
    for n in gast.walk(node):
        if isinstance(n, gast.Name) and n.id in renames:
            n.id = renames[n.id]


def _as_list(x):
    return x if isinstance(x, list) else [x]


def _copied_iterable(node):
    """``x`` of ``[*x]``, ``(*x,)``, ``list(x)`` or ``tuple(x)``, whose elements are x's."""
    if isinstance(node, (gast.List, gast.Tuple)) and len(node.elts) == 1 and \
            isinstance(node.elts[0], gast.Starred):
        return node.elts[0].value
    if (_is_call_to(node, "list") or _is_call_to(node, "tuple")) and len(node.args) == 1 \
            and not node.keywords and not isinstance(node.args[0], gast.Starred):
        return node.args[0]
    return None


def _copies_unpacked_as_their_iterable(fdef):
    """``a, b = [*x]`` (``list(x)``, ``tuple(x)``) is ``a, b = x``, as in Python: an array
    ``x``, whose first axis has a run-time length here, is then unpacked as JAX does (a
    starred target, ``a, *b = [*x]``, would make ``b`` a slice of x, not a list: left alone)."""
    for s in gast.walk(fdef):
        if isinstance(s, gast.Assign) and len(s.targets) == 1 and \
                isinstance(s.targets[0], (gast.Tuple, gast.List)) and \
                not _starred_in(s.targets[0]) and _copied_iterable(s.value) is not None:
            s.value = _copied_iterable(s.value)


def _is_call_to(node, name):
    return (isinstance(node, gast.Call) and isinstance(node.func, gast.Name)
            and node.func.id == name)


def _walk_loop_body(stmts):
    """Nodes of a loop body, not descending into nested loop bodies (their break is their
    own; a break in a nested loop's else is this loop's)."""
    for s in stmts:
        yield s
        nested_loop = isinstance(s, (gast.For, gast.While))
        for field in ("orelse",) if nested_loop else ("body", "orelse"):
            yield from _walk_loop_body(getattr(s, field, []) or [])


def copy_loc_all(stmts, like):
    return [copy_loc(s, like) for s in stmts]


# --- nested functions ---------------------------------------------------------------------------
# A def or lambda inside a transformed function becomes a function of its own (a
# LiftedFunction) whose first parameter is its closure: the tuple (function, captured...)
# of the enclosing variables it reads. Each place that refers to the nested function gets
# that tuple, built there (so it sees the variables' current values, as a call made there
# would); calling a closure calls the lifted function with the tuple first (ir/infer.py).
# A nested function that captures nothing is the lifted function itself, a constant.

class LiftedFunction(SyntheticFunction):
    """A nested def or lambda, lifted out of the function that contains it."""

    def __init__(self, name, fdef, namespace, origin, captured):
        super().__init__(name, fdef, namespace, origin)
        self.captured = captured  # names of the enclosing variables, in closure order


def _scope_nodes(nodes):
    """Nodes of one scope: not descending into nested defs and lambdas (yielded themselves)."""
    stack = list(reversed(nodes))
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, (gast.FunctionDef, gast.Lambda)):
            continue
        stack.extend(reversed(list(gast.iter_child_nodes(node))))


def _function_parts(fn):
    """(parameter names, body nodes) of a FunctionDef or Lambda."""
    a = fn.args
    params = [x.id for x in a.posonlyargs + a.args + a.kwonlyargs]
    params += [x.id for x in (a.vararg, a.kwarg) if x is not None]
    body = fn.body if isinstance(fn, gast.FunctionDef) else [fn.body]
    return params, body


def _scope_locals(params, body):
    names = set(params)
    for n in _scope_nodes(body):
        if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store):
            names.add(n.id)
        elif isinstance(n, gast.FunctionDef):
            names.add(n.name)
    return names


def _free_names(fn):
    """Names a nested function reads from enclosing scopes (its nested ones' included)."""
    params, body = _function_parts(fn)
    own = _scope_locals(params, body)
    free = set()
    for n in _scope_nodes(body):
        if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load):
            free.add(n.id)
        elif isinstance(n, (gast.FunctionDef, gast.Lambda)) and n is not fn:
            free |= _free_names(n)
    return free - own


def lift_nested_functions(parsed, names, fdef):
    """Lift the defs and lambdas directly inside ``fdef`` (in place); see above."""
    _undecorate(fdef.body, names)
    params, _ = _function_parts(fdef)
    nested = [n for n in _scope_nodes(fdef.body) if isinstance(n, (gast.FunctionDef, gast.Lambda))]
    if not nested:
        return
    outer = _scope_locals(params, fdef.body)
    defs = {}
    for n in nested:
        _check_liftable(parsed, n)
        if isinstance(n, gast.FunctionDef):
            if n.name in defs or n.name in params:
                raise parsed.error(n, f"nested function {n.name!r} is defined twice (or is also "
                                   f"a parameter); give each nested def its own name",
                                   UnsupportedSyntaxError)
            defs[n.name] = n
    assigned = {n.id for n in _scope_nodes(fdef.body)
                if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)}
    for name in set(defs) & assigned:
        raise parsed.error(defs[name], f"{name!r} names a nested def and is also assigned; "
                           f"use another name for one of them", UnsupportedSyntaxError)
    namespace = dict(parsed.fn.__globals__)
    namespace.update(parsed.freevars)
    lifted = {}  # node -> (LiftedFunction, name that refers to it from fdef)
    for n in nested:
        captured = sorted(_free_names(n) & outer)
        name = n.name if isinstance(n, gast.FunctionDef) else "_lambda"
        fn = LiftedFunction(name, _lifted_def(n, name, captured), namespace, parsed, captured)
        ref = names.fresh(f"_astjax_{name.strip('_')}_fn")
        parsed.freevars[ref] = fn  # a constant of fdef's (Program.resolve reads freevars)
        lifted[n] = (fn, ref)

    def closure(n, active):
        """The expression for nested function ``n`` where it is referred to."""
        fn, ref = lifted[n]
        if not fn.captured:
            return copy_loc(load(ref), n)
        if n in active:
            raise parsed.error(n, "a nested function that calls itself (or another that calls "
                               "it back) cannot be compiled; define it at module level",
                               UnsupportedSyntaxError)
        elts = [load(ref)]
        for c in fn.captured:
            elts.append(closure(defs[c], active | {n}) if c in defs else load(c))
        return copy_loc(gast.Tuple(elts=elts, ctx=gast.Load()), n)

    class Replace(gast.NodeTransformer):
        def visit_FunctionDef(self, node):
            return gast.Pass() if node in lifted else node

        def visit_Lambda(self, node):
            return closure(node, frozenset()) if node in lifted else node

        def visit_Name(self, node):
            if isinstance(node.ctx, gast.Load) and node.id in defs:
                return closure(defs[node.id], frozenset())
            return node

    fdef.body = [Replace().visit(s) for s in fdef.body]


def _noop_with(parsed, node):
    """A ``with`` of context managers that do nothing in compiled code
    (``astjax.named_scope(name)``, ``astjax.ensure_compile_time_eval()``), without ``as``."""
    from ..misc_api import ensure_compile_time_eval, named_scope
    namespace = {**getattr(parsed.fn, "__globals__", {}), **parsed.freevars}

    def resolve(e):
        if isinstance(e, gast.Name):
            return namespace.get(e.id)
        if isinstance(e, gast.Attribute):
            return getattr(resolve(e.value), e.attr, None)
        return None
    return all(i.optional_vars is None and isinstance(i.context_expr, gast.Call) and
               resolve(i.context_expr.func) in (named_scope, ensure_compile_time_eval)
               for i in node.items)


def _inline_noop_withs(parsed, stmts):
    """Such a ``with`` (see ``_noop_with``) is its body (in place, in nested blocks too)."""
    for k in range(len(stmts) - 1, -1, -1):
        s = stmts[k]
        for field in ("body", "orelse"):
            if not isinstance(s, gast.FunctionDef) and isinstance(getattr(s, field, None), list):
                _inline_noop_withs(parsed, getattr(s, field))
        if isinstance(s, gast.With) and _noop_with(parsed, s):
            stmts[k:k + 1] = s.body


def _undecorate(stmts, names):
    """``@dec def g`` in a statement list (and the ones inside its ifs and loops, in place)
    as ``def g_def`` then ``g = dec(g_def)``, Python's own order: a decorator applied to
    a nested function is a call on its closure (``@custom_jvp``, ``@g.defjvp``, ``@jit``)."""
    for k in range(len(stmts) - 1, -1, -1):
        s = stmts[k]
        for field in ("body", "orelse"):
            if not isinstance(s, (gast.FunctionDef, gast.Lambda)) and \
                    isinstance(getattr(s, field, None), list):
                _undecorate(getattr(s, field), names)
        if isinstance(s, gast.FunctionDef) and s.decorator_list:
            name, s.name = s.name, names.fresh(f"{s.name}_def")
            value = copy_loc(load(s.name), s)
            for dec in reversed(s.decorator_list):
                value = copy_loc(gast.Call(func=dec, args=[value], keywords=[]), s)
            s.decorator_list = []
            stmts[k + 1:k + 1] = [assign(name, value, s)]


def _check_liftable(parsed, n):
    a = n.args
    what = "nested def" if isinstance(n, gast.FunctionDef) else "lambda"
    problem = ("decorators" if getattr(n, "decorator_list", None) else
               "**kwargs" if a.kwarg else
               "default values" if a.defaults or any(d is not None for d in a.kw_defaults) else
               "keyword-only parameters" if a.kwonlyargs else None)
    if problem:
        raise parsed.error(n, f"a {what} inside a transformed function cannot have {problem}; "
                           f"define it at module level", UnsupportedSyntaxError)


def _lifted_def(n, name, captured):
    """``def name(closure, params...)``: the captured variables are read from the closure."""
    params, body = _function_parts(n)
    vararg = n.args.vararg
    params = params[:-1] if vararg is not None else params  # (*args stays *args)
    if isinstance(n, gast.Lambda):
        body = [copy_loc(gast.Return(value=n.body), n.body)]
    body = copy.deepcopy(body)
    pre = []
    if captured:
        cl = Names(n).fresh("closure")
        params = [cl] + params
        for k, c in enumerate(captured, 1):
            item = gast.Subscript(value=load(cl), slice=const(k), ctx=gast.Load())
            pre.append(assign(c, item, n))
    fdef = function_def(name, params, pre + body)
    fdef.args.vararg = copy.deepcopy(vararg)
    return gast.copy_location(fdef, n)
