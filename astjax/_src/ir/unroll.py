"""Unroll a loop over a sequence of constants that differ in kind (functions, modules).

``for fun in funs: x = fun(x)`` with ``funs`` a list of functions from outside (JAX's
``chain_compose``) is desugared to a loop indexing ``funs`` with the trip's counter, a
value known only at run time; the elements have no common type, so compiled code cannot
pick one at run time. As JAX's tracing does, such a loop is unrolled: when typing finds
that subscript inside a ``for i in range(...)`` whose bounds are constants and whose body
has no ``break``/``continue`` of its own, it raises ``Unroll``, and the loop is replaced by
one copy of its body per trip, each after ``i = <trip's value>``, and typed again. A
branch that sets constants differing by path (``state['even' if i % 2 == 0 else 'odd']``)
unrolls the innermost such loop around it too: its condition may then be a constant.
"""
import gast

from . import anno
from .peel import _own_jumps

MAX_TRIPS = 256


MAX_UNROLLED = 1024  # trips unrolled in one function, over all its loops


class Unroll(Exception):
    """Typing needs loop ``loop`` (a node of the typed copy) unrolled over ``trips``;
    ``error``: what to raise instead once the function has unrolled ``MAX_UNROLLED`` trips
    (a condition that stays unknown after unrolling one loop unrolls the next one out)."""

    def __init__(self, fdef, loop, trips, error):
        super().__init__("internal: an unrolled loop escaped its function's typing")
        self.fdef, self.loop, self.trips, self.error = fdef, loop, trips, error


def trips_if_unrollable(loop, bounds):
    """The values of the counter of ``loop`` (its range's bounds typed as ``bounds``, each a
    Static or not), or None where it cannot be unrolled."""
    from .types import Static
    if loop.orelse or _own_jumps(loop.body) or not all(
            isinstance(b, Static) and type(b.value) is int for b in bounds):
        return None
    trips = range(*[b.value for b in bounds])
    return list(trips) if len(trips) <= MAX_TRIPS else None


def unroll(anf, typed_fdef, typed_loop, trips):
    """A copy of the untyped ``anf`` with the loop at ``typed_loop``'s position (in
    ``gast.walk`` order of ``typed_fdef``'s ``for`` loops) unrolled."""
    position = [id(n) for n in gast.walk(typed_fdef) if isinstance(n, gast.For)] \
        .index(id(typed_loop))
    fdef = anno.clean_copy(anf)
    loop = [n for n in gast.walk(fdef) if isinstance(n, gast.For)][position]
    _replace(fdef, loop, _copies(loop, trips))
    return fdef


def _copies(loop, trips):
    out = []
    for k in trips:
        out.append(gast.Assign(targets=[gast.Name(id=loop.target.id, ctx=gast.Store(),
                                                  annotation=None, type_comment=None)],
                               value=gast.Constant(value=k, kind=None), type_comment=None))
        out.extend(anno.clean_copy(s) for s in loop.body)
    out = out or [gast.Pass()]
    for n in out:
        for m in gast.walk(n):
            if isinstance(m, (gast.stmt, gast.expr)) and not hasattr(m, "lineno"):
                m.lineno, m.col_offset = loop.lineno, loop.col_offset
    return out


def _replace(node, loop, stmts):
    for m in gast.walk(node):
        for field in ("body", "orelse"):
            block = getattr(m, field, None)
            if isinstance(block, list) and any(s is loop for s in block):
                k = next(i for i, s in enumerate(block) if s is loop)
                block[k:k + 1] = stmts
                return
    raise AssertionError("internal: the loop to unroll is not in its function")
