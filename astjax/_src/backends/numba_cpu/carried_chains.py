"""Shorter chains of products through a loop's carried scalars.

A trip of a scalar loop takes as long as the chain of operations from a carried value
(``g``) to its next value; the rest of the trip runs beside it. Reverse mode writes
products in the order the chain rule meets them: the backward sweep of ``x = x - 0.01 *
sin(x) * x`` computes ``((-g * x) * 0.01) * cos(x)``, three multiplications after the
negation on the chain, where ``-g * ((x * 0.01) * cos(x))`` has one. So in a loop body,
a product of 0-d floats ``t = a * b`` with ``a`` depending on a carried value and ``b``
not, where ``a = c * d`` is read nowhere else (``c`` carried-dependent, ``d`` not),
becomes ``a = b * d; t = a * c``: the same product, rounded in another order (a few
ulps, as with any reassociation). The 1000-step scalar loop's backward sweep took 7.2
us instead of 5.9 us.
"""
import gast

from ...ir import anno
from ...ir.types import ArrayType, Static
from .simplify import _stores, load_nodes, statement_lists, stored_names


def shorten_carried_chains(fdef):
    loops = [n for n in gast.walk(fdef) if isinstance(n, (gast.For, gast.While))]
    if not loops:
        return
    reads = {}
    for n in load_nodes(fdef):
        reads[n.id] = reads.get(n.id, 0) + 1
    stores = _stores(fdef)
    bodies = {id(loop.body) for loop in loops}
    for block in statement_lists(fdef):
        if id(block) in bodies:
            while _reassociate_once(block, reads, stores):
                pass


def _carried_dependent(body):
    """Names whose value in a trip depends on a value carried from the previous trip."""
    assigned, carried = set(), set()
    for s in body:
        carried |= {m.id for m in load_nodes(s)} - assigned
        assigned.update(stored_names(s))
    dependent = carried & assigned
    for s in body:
        if {m.id for m in load_nodes(s)} & dependent:
            dependent.update(stored_names(s))
    return dependent


def _product(s):
    """The operand nodes of ``t = x * y`` on 0-d floats of one dtype (or numbers)."""
    if not (isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name) and
            isinstance(s.value, gast.BinOp) and isinstance(s.value.op, gast.Mult) and
            getattr(anno.get(s.value, "op"), "name", None) == "multiply"):
        return None
    t = anno.get(s.targets[0], "type")
    if not (isinstance(t, ArrayType) and t.ndim == 0 and t.dtype.kind == "f"):
        return None
    for node in (s.value.left, s.value.right):
        u = anno.get(node, "type")
        if not (isinstance(u, Static) and type(u.value) in (int, float) or
                isinstance(u, ArrayType) and u.ndim == 0 and u.dtype == t.dtype):
            return None
    return s.value.left, s.value.right


def _dependent(node, dependent):
    return isinstance(node, gast.Name) and node.id in dependent


def _carried_and_other(operands, dependent):
    """(the operand that depends on a carried value, the other one), when only one does."""
    for a, b in (operands, operands[::-1]):
        if _dependent(a, dependent) and not _dependent(b, dependent):
            return a, b
    return None


def _reassociate_once(body, reads, stores):
    dependent = _carried_dependent(body)
    defs = {s.targets[0].id: i for i, s in enumerate(body) if isinstance(s, gast.Assign)
            and isinstance(s.targets[0], gast.Name)}
    for j, outer in enumerate(body):
        operands = _product(outer)
        split = operands and _carried_and_other(operands, dependent)
        if not split:
            continue
        a, b = split
        i = defs.get(a.id)
        if i is None or i >= j or reads.get(a.id) != 1 or stores.get(a.id) != 1:
            continue
        inner = body[i]
        inner_operands = _product(inner)
        split = inner_operands and _carried_and_other(inner_operands, dependent)
        if not split:
            continue
        c, d = split
        between = {name for s in body[i + 1:j] for name in stored_names(s)}
        if any(isinstance(n, gast.Name) and n.id in between for n in (c, d)):
            continue
        # a = c * d; ...; t = a * b   ->   ...; a = b * d; t = a * c
        _replace(inner.value, c, b)
        _replace(outer.value, b, c)
        body.insert(j - 1, body.pop(i))
        return True
    return False


def _replace(binop, old, new):
    if binop.left is old:
        binop.left = new
    else:
        binop.right = new
    operands = anno.get(binop, "operand_nodes")
    anno.set_(binop, "operand_nodes", {k: (new if v is old else v)
                                       for k, v in operands.items()})
