"""Python list mutations other than ``append`` and ``pop()``, as the ones that do compile
and differentiate (a list built at run time: ``append``, ``pop()``, reads by index):

* ``xs.extend(ys)`` and ``xs += ys`` (on a list built at run time): an append per element;
* ``xs.pop(i)``: pop the elements after ``i`` onto a list of their own, pop ``xs[i]``,
  append them back; ``xs[i] = v`` likewise, with ``v`` appended in ``xs[i]``'s place.
  Both change the list in place, as Python does, so a callee may do them to its caller's
  list (its derivative keeps that list's cotangent list in step, as for append);
* ``xs.insert(i, v)``: as ``xs[i] = v`` without the pop (``i`` clamped as Python does);
  ``del xs[i]`` is ``xs.pop(i)``; ``xs[a:b] = ys`` pops the elements after ``b``, pops
  ``xs[a:b]``, appends ``ys``'s and those after ``b`` back (``del xs[a:b]``: no ``ys``;
  ``xs.clear()``: ``del xs[:]``);
* ``while xs:`` (``if xs``, ``not xs``) on such a list: ``len(xs) > 0``, as Python's truth;
* ``xs[c] = v`` with ``c`` an integer literal, on a list display nothing grows:
  ``xs = [*xs[:c], v, *xs[c + 1:]]``, a list of known length whose elements may differ in
  type (``params[0] = w``), as JAX's traced lists may.

The list must be made in the function (a display or a comprehension: a name assigned
something else too may be an array, whose ``x[i] = v`` is ``.at[i].set``) or, for
``extend`` and ``pop(i)``, which only lists have, be a parameter.
"""
import copy

import gast

from ..errors import UnsupportedSyntaxError
from .naming import const, copy_loc, load, store

# (an index past the end pops more elements than there are: an IndexError, as in Python)
_POP_AT = """
N = len(LST)
J = IDX
J = J if J < N else -1 - N
TAIL = []
for K in range(N - 1 - J):
    TAIL.append(LST.pop())
OLD = LST.pop()
for K in range(N - 1 - J):
    LST.append(TAIL.pop())
"""
_INSERT_AT = """
N = len(LST)
J = IDX
J = J if J > 0 else 0
J = J if J < N else N
TAIL = []
for K in range(N - J):
    TAIL.append(LST.pop())
LST.append(VALUE)
for K in range(N - J):
    LST.append(TAIL.pop())
"""
# (Python's slice bounds: negative ones count from the end, then clamped to the list)
_SLICE_POPPED = """
N = len(LST)
LO = LOWER
LO = LO if LO >= 0 else LO + N
LO = LO if LO > 0 else 0
LO = LO if LO < N else N
HI = UPPER
HI = HI if HI >= 0 else HI + N
HI = HI if HI > LO else LO
HI = HI if HI < N else N
TAIL = []
for K in range(N - HI):
    TAIL.append(LST.pop())
for K in range(HI - LO):
    OLD = LST.pop()
"""
_SLICE_RESTORED = """
for K in range(N - HI):
    LST.append(TAIL.pop())
"""
_SET_AT = """
N = len(LST)
J = IDX
J = J if J < N else -1 - N
TAIL = []
for K in range(N - 1 - J):
    TAIL.append(LST.pop())
OLD = LST.pop()
LST.append(VALUE)
for K in range(N - 1 - J):
    LST.append(TAIL.pop())
"""


def list_mutations_as_appends(fdef, names, parsed=None):
    """Rewrite the mutations above in ``fdef`` (in place); True where that wrote a list
    display (``[*ps]`` for ``list(ps)``)."""
    displays = _copies_as_displays(fdef)
    if not any(_mutates(n) for n in gast.walk(fdef)):
        _truth_as_length(fdef, lambda: _made_lists(fdef) | _grown_names(fdef))
        return displays
    made, params = _made_lists(fdef), _params(fdef)
    for stmts in _blocks(fdef):
        stmts[:] = [t for s in stmts for t in _delete_as_pops(s, made, made | params,
                                                                  parsed)]
    for stmts in _blocks(fdef):  # `xs[i] += v` is `xs[i] = xs[i] + v`
        stmts[:] = [_item_update_as_assignment(s, made) for s in stmts]
    grown = _grown(fdef, made, params)
    _truth_as_length(fdef, lambda: made | grown)
    if not grown and not any(_static_item_assignment(s, made) for s in gast.walk(fdef)):
        return displays
    rewrite = _Rewrite(names, made, params, grown, parsed)
    for stmts in _blocks(fdef):
        stmts[:] = [t for s in stmts for t in rewrite.statement(s)]
    return displays


def grows_list(node):
    """The name of the list that ``node`` extends (``xs.extend(ys)``, ``xs += [...]``),
    or None."""
    if isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute) and \
            node.func.attr == "extend" and isinstance(node.func.value, gast.Name) and \
            len(node.args) == 1 and not node.keywords:
        return node.func.value.id
    if isinstance(node, gast.AugAssign) and isinstance(node.op, gast.Add) and \
            isinstance(node.target, gast.Name) and isinstance(node.value, (gast.List,
                                                                         gast.ListComp)):
        return node.target.id
    return None


def changes_list(node):
    """The name of the list ``node`` changes in place other than by growing it (append,
    pop, insert, ``del xs[i]``), or None: such a name is a list built at run time."""
    if isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute) and \
            isinstance(node.func.value, gast.Name) and \
            node.func.attr in ("append", "pop", "insert"):
        return node.func.value.id
    if isinstance(node, gast.Delete) and len(node.targets) == 1 and \
            isinstance(node.targets[0], gast.Subscript) and \
            isinstance(node.targets[0].value, gast.Name):
        return node.targets[0].value.id
    return None


def _grown_names(fdef):
    return {changes_list(n) for n in gast.walk(fdef) if changes_list(n) is not None}


def _delete_as_pops(s, made, lists, parsed):
    """``del xs[i]`` as ``xs.pop(i)``, ``del xs[a:b]`` as ``xs[a:b] = []``, on ``lists``
    (one statement per target; any other ``del`` is a located error), and ``xs.clear()``
    as ``xs[:] = []`` on a ``made`` list."""
    if _cleared(s) in made:
        target = gast.Subscript(value=load(_cleared(s)), slice=gast.Slice(
            lower=None, upper=None, step=None), ctx=gast.Store())
        return [copy_loc(gast.Assign(targets=[target], value=gast.List(
            elts=[], ctx=gast.Load()), type_comment=None), s)]
    if not isinstance(s, gast.Delete):
        return [s]
    out = []
    for t in s.targets:
        if not (isinstance(t, gast.Subscript) and isinstance(t.value, gast.Name) and
                t.value.id in lists):
            raise _unsupported(parsed, s, "astjax cannot compile del here: only del xs[i] "
                               "and del xs[a:b] on a list the function makes or is passed")
        target = gast.Subscript(value=load(t.value.id), slice=t.slice, ctx=gast.Store())
        if isinstance(t.slice, gast.Slice):
            new = gast.Assign(targets=[target], value=gast.List(elts=[], ctx=gast.Load()),
                              type_comment=None)
        else:
            new = gast.Expr(value=gast.Call(func=gast.Attribute(
                value=load(t.value.id), attr="pop", ctx=gast.Load()), args=[t.slice],
                keywords=[]))
        out.append(copy_loc(new, s))
    return out


def _copies_as_displays(fdef):
    """``qs = list(ps)`` (``ps.copy()``) where ``qs`` is then changed in place: ``qs =
    [*ps]``, a list the function makes, whatever ``ps`` is (a list argument, whose length
    the call fixes, cannot change its own)."""
    copies = [n for n in gast.walk(fdef) if isinstance(n, gast.Assign) and
              len(n.targets) == 1 and isinstance(n.targets[0], gast.Name) and
              isinstance(n.value, gast.Call) and not n.value.keywords and (
                  isinstance(n.value.func, gast.Name) and n.value.func.id == "list" and
                  len(n.value.args) == 1 or isinstance(n.value.func, gast.Attribute) and
                  n.value.func.attr == "copy" and not n.value.args)]
    if not copies:
        return False
    # (x.copy() of an array, then x[i] = v or x += [1.0], is an array's: only what lists
    # alone do counts for it)
    by_lists = {changes_list(n) or _cleared(n) or
                isinstance(n, gast.Call) and grows_list(n) for n in gast.walk(fdef)}
    by_any = by_lists | {grows_list(n) or _subscript_stored(n) for n in gast.walk(fdef)}
    copies = [n for n in copies if n.targets[0].id in (by_any if n.value.args else by_lists)]
    for n in copies:
        copied = n.value.args[0] if n.value.args else n.value.func.value
        n.value = copy_loc(gast.List(elts=[gast.Starred(value=copied, ctx=gast.Load())],
                                     ctx=gast.Load()), n)
    return bool(copies)


def _subscript_stored(s):
    """The name of ``xs`` in ``xs[i] = v`` (``xs[i] += v``, ``xs[a:b] = ys``), or None."""
    target = s.targets[0] if isinstance(s, gast.Assign) and len(s.targets) == 1 else \
        s.target if isinstance(s, gast.AugAssign) else None
    if isinstance(target, gast.Subscript) and isinstance(target.value, gast.Name):
        return target.value.id
    return None


def _cleared(s):
    """The name of the list statement ``s`` clears (``xs.clear()``), or None."""
    if isinstance(s, gast.Expr) and isinstance(s.value, gast.Call) and \
            isinstance(s.value.func, gast.Attribute) and s.value.func.attr == "clear" and \
            isinstance(s.value.func.value, gast.Name) and not s.value.args and \
            not s.value.keywords:
        return s.value.func.value.id
    return None


def _truth_as_length(fdef, find_lists):
    """``while xs:`` on a list: ``while len(xs) > 0:`` (a list built at run time has no
    truth value of its own; a display's length folds)."""
    tests = [n for n in gast.walk(fdef) if isinstance(n, (gast.If, gast.While, gast.IfExp,
                                                          gast.Assert, gast.comprehension))]
    if not tests:
        return
    lists = find_lists()

    def length(test):
        if isinstance(test, gast.Name) and test.id in lists:
            return copy_loc(gast.Compare(left=gast.Call(func=load("len"), args=[test],
                                                        keywords=[]),
                                         ops=[gast.Gt()], comparators=[const(0)]), test)
        if isinstance(test, gast.UnaryOp) and isinstance(test.op, gast.Not):
            test.operand = length(test.operand)
        elif isinstance(test, gast.BoolOp):
            test.values = [length(v) for v in test.values]
        return test
    for n in tests if lists else ():
        if isinstance(n, gast.comprehension):
            n.ifs = [length(c) for c in n.ifs]
        else:
            n.test = length(n.test)


def _mutates(n):
    return grows_list(n) is not None or isinstance(n, (gast.Assign, gast.AugAssign)) and \
        isinstance(getattr(n, "target", None) or n.targets[0], gast.Subscript) or \
        isinstance(n, gast.Delete) or _cleared(n) is not None or isinstance(n, gast.Call) and \
        isinstance(n.func, gast.Attribute) and (n.func.attr == "pop" and len(n.args) == 1 or
                                                n.func.attr == "insert")


def _made_lists(fdef):
    """Names that every assignment in ``fdef`` gives a list display or comprehension."""
    lists, other = set(), set()
    for n in gast.walk(fdef):
        if isinstance(n, gast.Assign):
            for t in n.targets:
                if isinstance(t, gast.Name):
                    (lists if isinstance(n.value, (gast.List, gast.ListComp)) and
                     len(n.targets) == 1 else other).add(t.id)
                else:
                    other.update(m.id for m in gast.walk(t) if isinstance(m, gast.Name) and
                                 isinstance(m.ctx, gast.Store))
        elif isinstance(n, (gast.For, gast.comprehension)):
            other.update(m.id for m in gast.walk(n.target) if isinstance(m, gast.Name))
        elif isinstance(n, gast.AnnAssign) and isinstance(n.target, gast.Name):
            other.add(n.target.id)
    return lists - other - _params(fdef)


def _params(fdef):
    a = fdef.args
    return {x.id for x in a.posonlyargs + a.args + a.kwonlyargs}


def _pops_at(node):
    """The ``xs.pop(i)`` calls in ``node`` (an index other than a literal -1)."""
    return [n for n in gast.walk(node) if isinstance(n, gast.Call) and
            isinstance(n.func, gast.Attribute) and n.func.attr == "pop" and
            isinstance(n.func.value, gast.Name) and len(n.args) == 1 and not n.keywords and
            not (isinstance(n.args[0], gast.Constant) and isinstance(n.args[0].value, str))]


def _item_assignment(s, made):
    """(list name, index) of ``xs[i] = v`` on a made list ``xs``; else None."""
    if isinstance(s, gast.Assign) and len(s.targets) == 1 and \
            isinstance(s.targets[0], gast.Subscript) and \
            isinstance(s.targets[0].value, gast.Name) and s.targets[0].value.id in made and \
            not isinstance(s.targets[0].slice, (gast.Slice, gast.Tuple)):
        return s.targets[0].value.id, s.targets[0].slice
    return None


def _slice_assignment(s, made):
    """(list name, slice) of ``xs[a:b] = ys`` on a made list ``xs``; else None."""
    if isinstance(s, gast.Assign) and len(s.targets) == 1 and \
            isinstance(s.targets[0], gast.Subscript) and \
            isinstance(s.targets[0].value, gast.Name) and s.targets[0].value.id in made and \
            isinstance(s.targets[0].slice, gast.Slice):
        return s.targets[0].value.id, s.targets[0].slice
    return None


def _item_update_as_assignment(s, made):
    if not (isinstance(s, gast.AugAssign) and isinstance(s.target, gast.Subscript) and
            isinstance(s.target.value, gast.Name) and s.target.value.id in made):
        return s
    read = copy.deepcopy(s.target)
    read.ctx = gast.Load()
    value = gast.BinOp(left=read, op=s.op, right=s.value)
    return copy_loc(gast.Assign(targets=[s.target], value=value, type_comment=None), s)


def _literal_int(node):
    if isinstance(node, gast.Constant) and type(node.value) is int:
        return node.value
    if isinstance(node, gast.UnaryOp) and isinstance(node.op, gast.USub) and \
            isinstance(node.operand, gast.Constant) and type(node.operand.value) is int:
        return -node.operand.value
    return None


def _static_item_assignment(s, made):
    found = _item_assignment(s, made)
    return found is not None and _literal_int(found[1]) is not None


def _in_loops(fdef):
    """Ids of the nodes inside a loop's body."""
    return {id(m) for n in gast.walk(fdef) if isinstance(n, (gast.For, gast.While))
            for s in n.body for m in gast.walk(s)}


def _grown(fdef, made, params):
    """The lists to rewrite in place (built at run time): those made by a comprehension,
    appended to, popped from, extended, given ``xs[i] = v`` at an index that is not a
    literal, or ``xs += [...]`` in a loop (or as a parameter)."""
    looped = _in_loops(fdef)
    out, added = set(), []
    for n in gast.walk(fdef):
        if isinstance(n, gast.Assign) and isinstance(n.value, gast.ListComp):
            out.update(t.id for t in n.targets if isinstance(t, gast.Name))
        elif isinstance(n, gast.Call) and isinstance(n.func, gast.Attribute) and \
                isinstance(n.func.value, gast.Name) and n.func.attr in ("append", "pop",
                                                                        "insert"):
            out.add(n.func.value.id)
        if isinstance(n, gast.AugAssign) and grows_list(n) is not None:
            added.append((n.target.id, id(n) in looped))
        elif grows_list(n) is not None:
            out.add(grows_list(n))
        found = _item_assignment(n, made)
        if found is not None and _literal_int(found[1]) is None:
            out.add(found[0])
        found = _slice_assignment(n, made)
        if found is not None:
            out.add(found[0])
    out.update(name for name, looping in added if looping or name in params)
    return out & (made | params)


def _insert(s):
    """The ``xs.insert(...)`` call that statement ``s`` is, or None."""
    if isinstance(s, gast.Expr) and isinstance(s.value, gast.Call) and \
            isinstance(s.value.func, gast.Attribute) and s.value.func.attr == "insert" and \
            isinstance(s.value.func.value, gast.Name):
        return s.value
    return None


class _Rewrite:
    def __init__(self, names, made, params, grown, parsed=None):
        self.names, self.made, self.params, self.grown = names, made, params, grown
        self.parsed = parsed

    def statement(self, s):
        pre = []
        for field in ("test", "iter", "value"):  # (a while's test is its every trip)
            if not isinstance(s, gast.While) and isinstance(getattr(s, field, None), gast.AST):
                setattr(s, field, self._pops_hoisted(getattr(s, field), pre, s))
        if isinstance(s, gast.Expr) and isinstance(s.value, gast.Name) and pre:
            return pre  # `xs.pop(0)` as a statement
        if isinstance(s, gast.Expr) and grows_list(s.value) in self.grown:
            return pre + self._appends(s.value.func.value.id, s.value.args[0], s)
        if isinstance(s, gast.AugAssign) and grows_list(s) in self.grown:
            return pre + self._appends(s.target.id, s.value, s)
        inserted = _insert(s)
        if inserted is not None and inserted.func.value.id in self.grown:
            if len(inserted.args) != 2 or inserted.keywords:
                raise _unsupported(self.parsed, s, "insert() takes an index and a value")
            index, value = inserted.args
            return pre + self._in_place(_INSERT_AT, inserted.func.value.id, index, s,
                                        value=value)[0]
        found = _slice_assignment(s, self.made)
        if found is not None:
            return pre + self._slice_set(found[0], found[1], s.value, s)
        found = _item_assignment(s, self.made)
        if found is None:
            return pre + [s]
        name, index = found
        if name in self.grown:
            return pre + self._in_place(_SET_AT, name, index, s, value=s.value)[0]
        c = _literal_int(index)
        sub = lambda lo, hi: gast.Starred(value=gast.Subscript(
            value=load(name), slice=gast.Slice(lower=lo, upper=hi, step=None),
            ctx=gast.Load()), ctx=gast.Load())
        elts = [sub(None, const(c)) if c != 0 else None, s.value,
                sub(const(c + 1), None) if c != -1 else None]
        display = gast.List(elts=[e for e in elts if e is not None], ctx=gast.Load())
        return pre + [copy_loc(gast.Assign(targets=[store(name)], value=display,
                                           type_comment=None), s)]

    def _slice_set(self, name, bounds, value, where):
        """``name[a:b] = value`` in place: the statements of _SLICE_POPPED, an append per
        element of ``value`` (computed first: it may read the list), _SLICE_RESTORED."""
        if bounds.step is not None:
            raise _unsupported(self.parsed, where, "astjax cannot assign to (or del) a list "
                               "slice with a step; assign the elements one by one")
        pre, items = [], []
        if isinstance(value, (gast.List, gast.Tuple)) and \
                not any(isinstance(e, gast.Starred) for e in value.elts):
            for e in value.elts:
                items.append(load(self.names.fresh("item")))
                pre.append(copy_loc(gast.Assign(targets=[store(items[-1].id)], value=e,
                                                type_comment=None), where))
            items = gast.List(elts=items, ctx=gast.Load())
        else:  # (any iterable: copied to a list first, as Python does)
            items = load(self.names.fresh("items"))
            pre.append(copy_loc(gast.Assign(targets=[store(items.id)], value=gast.List(
                elts=[], ctx=gast.Load()), type_comment=None), where))
            pre += self._appends(items.id, value, where)
        fresh = {k: self.names.fresh(k.lower()) for k in ("N", "LO", "HI", "TAIL", "K",
                                                          "OLD")}
        exprs = {"LST": load(name), "LOWER": bounds.lower or const(0),
                 "UPPER": bounds.upper or load(fresh["N"])}
        return pre + _instantiate(_SLICE_POPPED, fresh, exprs, where) + \
            self._appends(name, items, where) + \
            _instantiate(_SLICE_RESTORED, fresh, exprs, where)

    def _pops_hoisted(self, expr, pre, where):
        for call in _pops_at(expr):
            name = call.func.value.id
            if name not in self.made | self.params:
                continue
            if _literal_int(call.args[0]) == -1:
                call.args = []
                continue
            stmts, old = self._in_place(_POP_AT, name, call.args[0], where)
            pre.extend(stmts)
            if call is expr:
                return load(old)
            for n in gast.walk(expr):
                for field, value in gast.iter_fields(n):
                    if value is call:
                        setattr(n, field, load(old))
                    elif isinstance(value, list) and any(v is call for v in value):
                        setattr(n, field, [load(old) if v is call else v for v in value])
        return expr

    def _in_place(self, template, name, index, where, value=None):
        """The statements of ``template`` for list ``name`` at ``index``, and the name that
        holds the element it takes out."""
        fresh = {k: self.names.fresh(k.lower()) for k in ("N", "J", "TAIL", "K", "OLD")}
        c = _literal_int(index)
        if c is not None and c >= 0:
            j = const(c)
        elif c is not None:
            j = gast.BinOp(left=load(fresh["N"]), op=gast.Add(), right=const(c))
        else:  # Python's negative indices count from the end
            negative = gast.Compare(left=index, ops=[gast.Lt()], comparators=[const(0)])
            j = gast.IfExp(test=negative, body=gast.BinOp(left=load(fresh["N"]), op=gast.Add(),
                                                         right=copy.deepcopy(index)),
                           orelse=copy.deepcopy(index))
        pre = []
        if value is not None:  # computed first: it may read the list (`xs[i] = xs[i] * 2`)
            v = self.names.fresh("item")
            pre.append(copy_loc(gast.Assign(targets=[store(v)], value=value,
                                            type_comment=None), where))
            value = load(v)
        exprs = {"LST": load(name), "IDX": j, "VALUE": value}
        return pre + _instantiate(template, fresh, exprs, where), fresh["OLD"]

    def _appends(self, name, items, where):
        """``name.append(item)`` per element of ``items`` (a loop unless it is a display)."""
        def append(item):
            return gast.Expr(value=gast.Call(func=gast.Attribute(
                value=load(name), attr="append", ctx=gast.Load()), args=[item], keywords=[]))
        if isinstance(items, (gast.List, gast.Tuple)) and \
                not any(isinstance(e, gast.Starred) for e in items.elts):
            return [copy_loc(append(e), where) for e in items.elts]
        item = self.names.fresh("item")
        loop = gast.For(target=store(item), iter=items, body=[append(load(item))], orelse=[],
                        type_comment=None)
        return [copy_loc(loop, where)]


def _unsupported(parsed, where, message):
    if parsed is None:  # (generated code: never these)
        return UnsupportedSyntaxError(message)
    return parsed.error(where, message, UnsupportedSyntaxError)


def _instantiate(template, fresh, exprs, where):
    body = gast.parse(template).body
    nodes = list(gast.walk(gast.Module(body=body, type_ignores=[])))
    for n in nodes:
        for attr in ("lineno", "col_offset", "end_lineno", "end_col_offset"):
            if hasattr(n, attr):
                delattr(n, attr)  # (the template's own lines: the user's are copied on)
        if isinstance(n, gast.Name) and n.id in fresh:
            n.id = fresh[n.id]
    for n in nodes:  # (the user's expressions are put in last: their names stay theirs)
        for field, value in gast.iter_fields(n):
            if isinstance(value, gast.Name) and value.id in exprs:
                setattr(n, field, copy.deepcopy(exprs[value.id]))
            elif isinstance(value, list):
                setattr(n, field, [copy.deepcopy(exprs[v.id]) if isinstance(v, gast.Name) and
                                   v.id in exprs else v for v in value])
    return [copy_loc(s, where) for s in body]


def _blocks(fdef):
    """Every statement list of ``fdef`` (its body, and each nested block)."""
    return [getattr(n, f) for n in gast.walk(fdef) for f in ("body", "orelse")
            if isinstance(getattr(n, f, None), list) and
            (n is fdef or not isinstance(n, (gast.FunctionDef, gast.Lambda)))]
