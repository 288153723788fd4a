"""Deterministic fresh names that never clash with the user's."""
import gast


class Names:
    def __init__(self, fdef):
        self.used = {n.id for n in gast.walk(fdef) if isinstance(n, gast.Name)}
        self.used |= {a.id for a in fdef.args.args + fdef.args.kwonlyargs}
        self.counters = {}

    def fresh(self, hint="t"):
        """``t0``, ``t1``, ... (or ``hint0``...), skipping names the user already uses."""
        while True:
            n = self.counters.get(hint, 0)
            self.counters[hint] = n + 1
            name = f"{hint}{n}"
            if name not in self.used:
                self.used.add(name)
                return name


def load(name):
    return gast.Name(id=name, ctx=gast.Load(), annotation=None, type_comment=None)


def store(name):
    return gast.Name(id=name, ctx=gast.Store(), annotation=None, type_comment=None)


def const(value):
    return gast.Constant(value=value, kind=None)


def assign(name, value, like=None):
    node = gast.Assign(targets=[store(name)], value=value, type_comment=None)
    if like is not None:
        copy_loc(node, like)
    return node


def copy_loc(new, old):
    """Copy the user's location onto every node of ``new`` that lacks one."""
    if old is None or not hasattr(old, "lineno"):
        return new
    for n in gast.walk(new):
        if isinstance(n, (gast.stmt, gast.expr)) and not hasattr(n, "lineno"):
            n.lineno, n.col_offset = old.lineno, old.col_offset
            n.end_lineno = getattr(old, "end_lineno", old.lineno)
            n.end_col_offset = getattr(old, "end_col_offset", old.col_offset)
    return new


def call(func_name, *args, **kwargs):
    return gast.Call(func=load(func_name), args=list(args),
                     keywords=[gast.keyword(arg=k, value=v) for k, v in kwargs.items()])


def not_(expr):
    return gast.UnaryOp(op=gast.Not(), operand=expr)


def and_(*exprs):
    return exprs[0] if len(exprs) == 1 else gast.BoolOp(op=gast.And(), values=list(exprs))


def or_(*exprs):
    return exprs[0] if len(exprs) == 1 else gast.BoolOp(op=gast.Or(), values=list(exprs))
