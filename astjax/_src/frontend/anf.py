"""A-normal form: every statement is ``name = <one operation on atoms>`` or control flow.

Atoms are local names, constants, and references to outside objects
(``np.sin``, a global function): attribute chains rooted at a name that is not
local stay whole, since they name a fixed object. Operation forms kept (in
Python syntax, so the output stays readable): calls, method calls, binary /
unary / single comparisons, attribute reads, subscripts whose index is built of
atoms, slices, None and Ellipsis, tuple / list displays, ``lst.append(a)`` and
the functional update ``x.at[idx].set(v)`` (NumPy's ``x[idx] = v`` becomes
that). Short-circuit ``and``/``or``, conditional expressions and chained
comparisons become ``if`` statements; a ``while`` condition is computed before
the loop and again at the end of its body.
"""
import gast

from ..errors import TypeCheckError, UnsupportedSyntaxError
from .checks import assert_as_if, format_call, raise_calls
from .naming import assign, const, copy_loc, load, store

_AT_METHODS = {"set", "add", "subtract", "multiply", "mul", "divide", "power", "min", "max",
               "get"}


def local_names(fdef):
    names = {a.id for a in fdef.args.args + fdef.args.kwonlyargs + fdef.args.posonlyargs}
    names |= {a.id for a in (fdef.args.vararg, fdef.args.kwarg) if a is not None}
    for n in gast.walk(fdef):
        if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store):
            names.add(n.id)
    return names


class Display:
    """What ANF calls for a tuple or list display with starred items, ``(*xs, y)``: typing
    knows the lengths and makes it the call of a generated function (infer.starred_call)."""

    def __init__(self, kind):
        self.kind = kind

    def __repr__(self):
        return f"<{self.kind} display>"

    def __deepcopy__(self, memo):
        return self


DISPLAYS = {gast.Tuple: Display("tuple"), gast.List: Display("list")}


class ANF:
    def __init__(self, parsed, names, locals_):
        self.parsed = parsed
        self.names = names
        self.locals = locals_

    def function(self, fdef):
        fdef.body = self.block(fdef.body)
        return fdef

    def block(self, stmts):
        out = []
        for s in stmts:
            out.extend(self.statement(s))
        return out

    # --- statements ------------------------------------------------------------------------
    def statement(self, s):
        pre = []
        if isinstance(s, gast.Assign):
            if len(s.targets) == 1 and _same_arity(s.targets[0], s.value):
                return self.parallel_assign(s.targets[0], s.value, pre, s)
            value = self.expr(s.value, pre, s)
            if len(s.targets) > 1 and not self.is_atom(value):
                value = self.bind(value, pre, s)
            for target in s.targets:
                self.assign_to(target, value, pre, s)
            return pre
        if isinstance(s, gast.AnnAssign):
            if s.value is None:
                return []
            return self.statement(copy_loc(gast.Assign(targets=[s.target], value=s.value,
                                                       type_comment=None), s))
        if isinstance(s, gast.AugAssign):
            current = self.read_target(s.target)
            value = gast.BinOp(left=current, op=s.op, right=s.value)
            return self.statement(copy_loc(gast.Assign(targets=[s.target], value=value,
                                                       type_comment=None), s))
        if isinstance(s, gast.Expr):
            if isinstance(s.value, gast.Constant):  # docstring
                return []
            value = self.expr(s.value, pre, s)
            if self.is_atom(value):
                return pre
            if isinstance(value, gast.Call) and isinstance(value.func, gast.Attribute) and \
                    value.func.attr == "pop":
                self.bind(value, pre, s)  # xs.pop() as a statement: the transforms see
                return pre                # the pop of an assignment (t = xs.pop())
            return pre + [copy_loc(gast.Expr(value=value), s)]
        if isinstance(s, gast.Return):
            value = self.atom(s.value if s.value is not None else const(None), pre, s)
            return pre + [copy_loc(gast.Return(value=value), s)]
        if isinstance(s, gast.If):
            test = self.atom(s.test, pre, s)
            return pre + [copy_loc(gast.If(test=test, body=self.block(s.body) or [gast.Pass()],
                                           orelse=self.block(s.orelse)), s)]
        if isinstance(s, gast.For):
            it = s.iter
            args = [self.atom(a, pre, s) for a in it.args]
            new_iter = copy_loc(gast.Call(func=load("range"), args=args, keywords=[]), it)
            loop = gast.For(target=s.target, iter=new_iter, body=self.block(s.body),
                            orelse=[], type_comment=None)
            return pre + [copy_loc(loop, s)]
        if isinstance(s, gast.While):
            cond = self.names.fresh("cond")
            test_pre = []
            test = self.expr(s.test, test_pre, s)
            test_pre.append(assign(cond, test, s))
            again = [copy_node(n) for n in test_pre]
            body = self.block(s.body) + again
            return test_pre + [copy_loc(gast.While(test=load(cond), body=body, orelse=[]), s)]
        if isinstance(s, gast.Pass):
            return []
        if isinstance(s, gast.Raise):
            if s.exc is None:
                raise self.parsed.error(s, "a bare `raise` (re-raising) cannot be compiled: "
                                        "there is no `except` in transformed code",
                                        UnsupportedSyntaxError)
            return [x for c in raise_calls(s) for x in self.statement(c)]
        if isinstance(s, gast.Assert):
            return self.statement(assert_as_if(s))
        raise self.parsed.error(s, f"astjax cannot compile this statement "
                                f"({type(s).__name__})", UnsupportedSyntaxError)

    def parallel_assign(self, target, value, pre, where):
        """``a, (b, c) = x, (y, z)`` element by element: every value is computed first, and
        a value that is also assigned here (``a, b = b, a``) is copied before."""
        assigned = {n.id for n in gast.walk(target) if isinstance(n, gast.Name)}
        pairs = []

        def collect(t, v):
            if _same_arity(t, v):
                for te, ve in zip(t.elts, v.elts):
                    collect(te, ve)
                return
            atom = self.atom(v, pre, where)
            if isinstance(atom, gast.Name) and atom.id in assigned:
                atom = self.bind(atom, pre, where)
            pairs.append((t, atom))

        collect(target, value)
        for t, atom in pairs:
            self.assign_to(t, atom, pre, where)
        return pre

    def read_target(self, target):
        if isinstance(target, (gast.Name, gast.Subscript, gast.Attribute)):
            node = copy_node(target)
            for n in gast.walk(node):
                if hasattr(n, "ctx"):
                    n.ctx = gast.Load()
            return node
        raise self.parsed.error(target, "augmented assignment needs a single target",
                                UnsupportedSyntaxError)

    def assign_to(self, target, value, pre, where):
        if isinstance(target, gast.Name):
            pre.append(copy_loc(gast.Assign(targets=[store(target.id)], value=value,
                                            type_comment=None), where))
        elif isinstance(target, (gast.Tuple, gast.List)):
            seq = value if isinstance(value, gast.Name) else self.bind(value, pre, where)
            for check in _length_checks(seq.id, len(target.elts), where):
                pre.extend(self.statement(check))
            for k, elt in enumerate(target.elts):
                item = gast.Subscript(value=load(seq.id), slice=const(k), ctx=gast.Load())
                if not isinstance(elt, gast.Name):
                    item = self.bind(item, pre, where)
                self.assign_to(elt, item, pre, where)
        elif isinstance(target, gast.Subscript):
            # NumPy's in-place x[idx] = v becomes the functional x = x.at[idx].set(v)
            if not isinstance(target.value, gast.Name) or target.value.id not in self.locals:
                raise self.parsed.error(target, "only local array variables can be assigned "
                                        "by index (x[i] = v); arguments are fine too, outside "
                                        "ones are not", UnsupportedSyntaxError)
            index = self.index(target.slice, pre, where)
            atom = self.atom_of(value, pre, where)
            update = at_update(load(target.value.id), index, "set", atom)
            pre.append(copy_loc(gast.Assign(targets=[store(target.value.id)], value=update,
                                            type_comment=None), where))
        else:
            raise self.parsed.error(target, "astjax can only assign to names, tuples of "
                                    "names and array elements", UnsupportedSyntaxError)

    # --- expressions -----------------------------------------------------------------------
    def is_atom(self, e):
        return (isinstance(e, gast.Constant) or isinstance(e, gast.Name)
                or self.is_static_ref(e))

    def is_static_ref(self, e):
        """``np.linalg.norm``-style chains rooted at a non-local name name a fixed object."""
        while isinstance(e, gast.Attribute):
            e = e.value
        return isinstance(e, gast.Name) and e.id not in self.locals

    def atom(self, e, pre, where):
        return self.atom_of(self.expr(e, pre, where), pre, where)

    def atom_of(self, value, pre, where):
        return value if self.is_atom(value) else self.bind(value, pre, where)

    def bind(self, value, pre, where):
        name = self.names.fresh("t")
        self.locals.add(name)  # so `t0.kind` is an attribute of a local, not a global
        pre.append(assign(name, value, getattr(value, "lineno", None) and value or where))
        return load(name)

    def expr(self, e, pre, where):
        """Flatten ``e`` into ``pre``; return one operation whose operands are atoms."""
        where = e if hasattr(e, "lineno") else where
        a = lambda x: self.atom(x, pre, where)
        if self.is_atom(e):
            return e
        if isinstance(e, gast.BinOp):
            return copy_loc(gast.BinOp(left=a(e.left), op=e.op, right=a(e.right)), where)
        if isinstance(e, gast.UnaryOp):
            return copy_loc(gast.UnaryOp(op=e.op, operand=a(e.operand)), where)
        if isinstance(e, gast.Compare):
            if len(e.ops) == 1:
                return copy_loc(gast.Compare(left=a(e.left), ops=e.ops,
                                             comparators=[a(e.comparators[0])]), where)
            # a < b < c: (a < b) and (b < c), evaluating b once
            left, parts = a(e.left), []
            for op, right in zip(e.ops, e.comparators):
                right = a(right)
                parts.append(gast.Compare(left=left, ops=[op], comparators=[right]))
                left = right
            return self.expr(copy_loc(gast.BoolOp(op=gast.And(), values=parts), where),
                             pre, where)
        if isinstance(e, gast.BoolOp):
            return self.short_circuit(e, pre, where)
        if isinstance(e, gast.IfExp):
            out = self.names.fresh("t")
            self.locals.add(out)
            test = a(e.test)
            body, orelse = [], []
            body.append(assign(out, self.expr(e.body, body, where), where))
            orelse.append(assign(out, self.expr(e.orelse, orelse, where), where))
            pre.append(copy_loc(gast.If(test=test, body=body, orelse=orelse), where))
            return load(out)
        if isinstance(e, gast.Call):
            return self.call(e, pre, where)
        if isinstance(e, gast.Attribute):
            return copy_loc(gast.Attribute(value=a(e.value), attr=e.attr, ctx=gast.Load()),
                            where)
        if isinstance(e, gast.Subscript):
            return copy_loc(gast.Subscript(value=a(e.value), slice=self.index(e.slice, pre,
                                                                              where),
                                           ctx=gast.Load()), where)
        if isinstance(e, (gast.Tuple, gast.List)):
            cls = type(e)
            if any(isinstance(x, gast.Starred) for x in e.elts):
                display = gast.Constant(value=DISPLAYS[cls], kind=None)
                return self.call(gast.Call(func=display, args=e.elts, keywords=[]), pre, where)
            return copy_loc(cls(elts=[a(x) for x in e.elts], ctx=gast.Load()), where)
        if isinstance(e, gast.Dict):
            if any(k is None for k in e.keys):
                raise self.parsed.error(e, "dict unpacking (**) is not supported",
                                        UnsupportedSyntaxError)
            return copy_loc(gast.Dict(keys=[a(k) for k in e.keys],
                                      values=[a(v) for v in e.values]), where)
        if isinstance(e, gast.Lambda):
            raise self.parsed.error(e, "a lambda inside a transformed function is not "
                                    "supported yet; define it at module level",
                                    UnsupportedSyntaxError)
        if isinstance(e, gast.JoinedStr):
            return self.expr(format_call(e), pre, where)
        raise self.parsed.error(e, f"astjax cannot compile this expression "
                                f"({type(e).__name__})", UnsupportedSyntaxError)

    def call(self, e, pre, where):
        a = lambda x: self.atom(x, pre, where)
        f = e.func
        # x.at[idx].method(v): JAX's functional update
        if (isinstance(f, gast.Attribute) and f.attr in _AT_METHODS
                and isinstance(f.value, gast.Subscript)
                and isinstance(f.value.value, gast.Attribute) and f.value.value.attr == "at"):
            target = a(f.value.value.value)
            index = self.index(f.value.slice, pre, where)
            args = [a(x) for x in e.args]
            update = at_update(target, index, f.attr, *args)
            # (mode=, fill_value=, the hints: typing reads them, infer.at_update)
            update.keywords = [gast.keyword(arg=k.arg, value=a(k.value)) for k in e.keywords]
            return copy_loc(update, where)
        if isinstance(f, gast.Attribute) and not self.is_static_ref(f):
            func = gast.Attribute(value=a(f.value), attr=f.attr, ctx=gast.Load())
        elif self.is_atom(f):
            func = f
        else:
            func = a(f)
        # f(*xs) keeps its Starred: typing knows xs's length (infer.starred_call)
        args = [gast.Starred(value=a(x.value), ctx=gast.Load()) if isinstance(x, gast.Starred)
                else a(x) for x in e.args]
        keywords = [gast.keyword(arg=k.arg, value=a(k.value)) for k in e.keywords]
        return copy_loc(gast.Call(func=func, args=args, keywords=keywords), where)

    def index(self, idx, pre, where):
        a = lambda x: self.atom(x, pre, where)
        if isinstance(idx, gast.Slice):
            parts = [None if p is None else a(p) for p in (idx.lower, idx.upper, idx.step)]
            return gast.Slice(lower=parts[0], upper=parts[1], step=parts[2])
        if isinstance(idx, gast.Tuple) and not any(isinstance(x, gast.Starred)
                                                   for x in idx.elts):  # (x[*i, 0]: a tuple)
            # a list inside the tuple is an index array (x[0, [1, 2]]), as in JAX
            return gast.Tuple(elts=[a(x) if isinstance(x, gast.List) else
                                    self.index(x, pre, where) for x in idx.elts],
                              ctx=gast.Load())
        if isinstance(idx, gast.List):  # as eager indexing (and JAX) says
            raise self.parsed.error(idx, "a list as the index is not supported (as in JAX); "
                                    "use x[jnp.array(idx)] for an index array, or "
                                    "x[tuple(idx)] to index several axes", TypeCheckError)
        return a(idx)

    def short_circuit(self, e, pre, where):
        """``a and b`` -> ``t = a; if t: t = b`` (``or``: ``if not t``), as Python evaluates."""
        out = self.names.fresh("t")
        self.locals.add(out)
        pre.append(assign(out, self.expr(e.values[0], pre, where), where))
        inner = pre
        for value in e.values[1:]:
            body = []
            body.append(assign(out, self.expr(value, body, where), where))
            test = load(out)
            if isinstance(e.op, gast.Or):
                flag = self.names.fresh("t")
                self.locals.add(flag)
                inner.append(assign(flag, gast.UnaryOp(op=gast.Not(), operand=load(out)), where))
                test = load(flag)
            node = copy_loc(gast.If(test=test, body=body, orelse=[]), where)
            inner.append(node)
            inner = body
        return load(out)


def _length_checks(seq, n, where):
    """Python's errors for unpacking ``seq`` into ``n`` names, as statements: decided while
    code is generated for a tuple, when it runs for an array (its length is a run-time
    size)."""
    source = (f"if len({seq}) > {n}:\n"
              f"    raise ValueError('too many values to unpack (expected {n})')\n"
              f"if len({seq}) < {n}:\n"
              f"    raise ValueError(f'not enough values to unpack (expected {n}, got "
              f"{{len({seq})}})')\n")
    checks = gast.parse(source).body
    for node in gast.walk(gast.Module(body=checks, type_ignores=[])):
        if isinstance(node, (gast.stmt, gast.expr)):  # (at the user's line)
            node.lineno, node.col_offset = where.lineno, where.col_offset
    return checks


def _same_arity(target, value):
    return (isinstance(target, (gast.Tuple, gast.List)) and isinstance(value, (gast.Tuple, gast.List))
            and len(target.elts) == len(value.elts)
            and not any(isinstance(e, gast.Starred) for e in value.elts))  # (a, b = *xs,)


def at_update(target, index, method, *args):
    """The ANF form ``target.at[index].method(*args)``."""
    at = gast.Attribute(value=target, attr="at", ctx=gast.Load())
    sub = gast.Subscript(value=at, slice=index, ctx=gast.Load())
    return gast.Call(func=gast.Attribute(value=sub, attr=method, ctx=gast.Load()),
                     args=list(args), keywords=[])


def is_at_update(node):
    f = getattr(node, "func", None)
    return (isinstance(node, gast.Call) and isinstance(f, gast.Attribute)
            and isinstance(f.value, gast.Subscript)
            and isinstance(f.value.value, gast.Attribute) and f.value.value.attr == "at")


def copy_node(node):
    import copy
    return copy.deepcopy(node)
