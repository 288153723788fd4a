"""Builders of the AST nodes derivative code is made of (shared by both modes)."""
import gast

from ..frontend.naming import const, load
from ..ir import anno


def _sub(expr, path):
    for key in path:
        expr = gast.Subscript(value=expr, slice=const(key), ctx=gast.Load())
    return expr


def _call(func, args, keywords=()):
    return gast.Call(func=func, args=list(args),
                     keywords=[gast.keyword(arg=k, value=v) for k, v in keywords])


def _ajx(attr):
    return gast.Attribute(value=load("_ajx"), attr=attr, ctx=gast.Load())


def literal_node(value):
    if isinstance(value, tuple):
        return gast.Tuple(elts=[literal_node(v) for v in value], ctx=gast.Load())
    return const(value)


def _statements(source):
    """Statements parsed from generated text, without locations (``_locate`` gives them
    the user's)."""
    body = gast.parse(source).body
    for n in (n for s in body for n in gast.walk(s)):
        for attr in ("lineno", "col_offset", "end_lineno", "end_col_offset"):
            if hasattr(n, attr):
                delattr(n, attr)
    return body


def _locate(node, like):
    """Give generated nodes the location of the user statement they derive from."""
    for n in gast.walk(node):
        if isinstance(n, (gast.stmt, gast.expr)) and not hasattr(n, "lineno"):
            n.lineno = getattr(like, "lineno", 1)
            n.col_offset = getattr(like, "col_offset", 0)
    return node


def _names(stmts, ctx):
    """The names stored (``gast.Store``) or loaded in ``stmts``, in order of appearance."""
    out = {}
    for s in stmts:
        for n in gast.walk(s):
            if isinstance(n, gast.Name) and isinstance(n.ctx, ctx):
                out.setdefault(n.id, None)
    return list(out)


def _renamed(node, val):
    node = anno.clean_copy(node)
    if isinstance(node, gast.Name):
        return val(node.id) if isinstance(node.ctx, gast.Load) else node
    for n in gast.walk(node):
        for field, child in gast.iter_fields(n):
            if isinstance(child, gast.Name) and isinstance(child.ctx, gast.Load):
                setattr(n, field, val(child.id))
            elif isinstance(child, list):
                setattr(n, field, [val(c.id) if isinstance(c, gast.Name) and
                                   isinstance(c.ctx, gast.Load) else c for c in child])
    return node
