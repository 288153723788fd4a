"""Batching values: which parts of a value carry the batch axis, and moving them around.

A value inside a batched function is *batched* when it holds one entry per example, its
batch axis first, or *unbatched* when it is the same for every example (a constant, a
shape, a closed-over array, anything computed from those). ``bt`` ("batch tree") records
this per leaf, in the structure of the value's per-example type:

* ``ArrayType`` (and ``ListType``: per element): a bool;
* ``SequenceType`` / ``TreeType``: a tuple, one entry per element / child;
* ``Static``: always False (a constant is the same for every example).

Types in the batching transform are always per-example types: those of the function
being batched, as its typed ANF records them.
"""
import gast

from ..ir.types import (UNKNOWN, ArrayType, ListType, SequenceType, Static, TreeType,
                        keyed_children)


def unwrap(t):
    """A MaybeUndefined type's inner type."""
    return getattr(t, "inner", t) if type(t).__name__ == "MaybeUndefined" else t


def children(t):
    if isinstance(t, SequenceType):
        return t.elts
    if isinstance(t, TreeType):
        return t.children
    return None


def child(b, k):
    return b if isinstance(b, bool) else b[k]


def full(t, value=True):
    """The bt of a value of type ``t`` whose every array leaf is (``value``) batched."""
    t = unwrap(t)
    kids = children(t)
    if kids is not None:
        return tuple(full(c, value) for c in kids)
    if isinstance(t, ListType):
        return value if t.elt is UNKNOWN else full(t.elt, value)
    if isinstance(t, ArrayType):
        return value
    return False


def any_(b):
    return b if isinstance(b, bool) else any(any_(x) for x in b)


def join(t, a, b):
    """The bt of a value that is ``a`` on one path and ``b`` on another (type ``t``)."""
    t = unwrap(t)
    kids = children(t)
    if kids is not None:
        if isinstance(a, bool) and isinstance(b, bool):
            return tuple(join(c, a, b) for c in kids)
        return tuple(join(c, child(a, k), child(b, k)) for k, c in enumerate(kids))
    if isinstance(t, ListType) and t.elt is not UNKNOWN:
        return join(t.elt, a, b)
    if isinstance(t, Static):
        return False
    return any_(a) or any_(b)


def norm(t, b):
    """``b`` in exactly the structure of ``t``."""
    return join(t, b, False)


def leq(t, a, b):
    """Every leaf batched in ``a`` is batched in ``b``."""
    return norm(t, join(t, a, b)) == norm(t, b)


def leaves(t, b, path=()):
    """``(path, leaf type, batched)`` for every array leaf of a value of type ``t``."""
    t = unwrap(t)
    pairs = keyed_children(t)
    if pairs is not None:
        for k, (key, c) in enumerate(pairs):
            yield from leaves(c, child(b, k), path + (key,))
    elif isinstance(t, ArrayType):
        yield path, t, bool(any_(b))


def batched_type(t, b, one=False):
    """The type of the batched value: batch axis first on batched leaves."""
    t = unwrap(t)
    if isinstance(t, SequenceType):
        return SequenceType(tuple(batched_type(e, child(b, k), one)
                                  for k, e in enumerate(t.elts)), t.kind)
    if isinstance(t, TreeType):
        return TreeType(t.node_type, t.aux, t.keys,
                        tuple(batched_type(c, child(b, k), one)
                              for k, c in enumerate(t.children)))
    if isinstance(t, ArrayType) and any_(b):
        return ArrayType(t.dtype, (one,) + t.ones, t.weak)
    return t


def rank(t):
    t = unwrap(t)
    if isinstance(t, ArrayType):
        return t.ndim
    return 0


def is_array_like(t):
    from ..ir.types import is_numeric
    return is_numeric(unwrap(t))


def path_text(text, path):
    for key in path:
        text = f"{text}[{key!r}]"
    return text


# --- AST helpers -------------------------------------------------------------------------------

def stores(stmts):
    """Names assigned anywhere in ``stmts`` (in order of first assignment)."""
    out = []
    for s in stmts:
        for n in gast.walk(s):
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store) and n.id not in out:
                out.append(n.id)
            elif isinstance(n, gast.Call) and isinstance(n.func, gast.Attribute) and \
                    n.func.attr in ("append", "pop") and isinstance(n.func.value, gast.Name) \
                    and n.func.value.id not in out:
                out.append(n.func.value.id)  # a list changed in place
    return out


def loads(stmts):
    out = []
    for s in stmts:
        for n in gast.walk(s):
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load) and n.id not in out:
                out.append(n.id)
    return out
