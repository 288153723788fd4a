"""Annotations on AST nodes (types, resolved ops, callees), kept off the node's fields."""
import types

_KEY = "_astjax"


def get(node, key, default=None):
    return getattr(node, _KEY, {}).get(key, default)


def set_(node, key, value):
    d = getattr(node, _KEY, None)
    if d is None:
        d = {}
        setattr(node, _KEY, d)
    d[key] = value


def has(node, key):
    return key in getattr(node, _KEY, {})


def clear(node):
    if hasattr(node, _KEY):
        delattr(node, _KEY)


_LOCATION = ("lineno", "col_offset", "end_lineno", "end_col_offset")
# (a module: a constant node may hold one, a default parameter xp=jnp; deepcopy refuses them)
_ATOMS = (str, int, float, bool, type(None), bytes, complex, type(Ellipsis), types.ModuleType)


def clean_copy(node, pairs=None):
    """A deep copy of an AST without annotations (they hold types, ops, specializations).
    ``pairs`` collects (original, copy) for every node copied."""
    import gast
    if isinstance(node, list):
        return [clean_copy(n, pairs) for n in node]
    if not isinstance(node, gast.AST):
        return node
    # (filled in directly: this runs on every node of every function typed, and the
    # nodes' constructor only sets these same attributes)
    cls = type(node)
    new = cls.__new__(cls)
    d = new.__dict__
    for f in cls._fields:
        v = getattr(node, f)
        if isinstance(v, list):
            d[f] = [clean_copy(n, pairs) for n in v]
        elif isinstance(v, gast.AST):
            d[f] = clean_copy(v, pairs)
        else:
            d[f] = v
    for attr in _LOCATION:
        v = getattr(node, attr, d)
        if v is not d:
            d[attr] = v
    if pairs is not None:
        pairs.append((node, new))
    return new


def copy_tree(node, memo=None):
    """``copy.deepcopy(node)`` for an AST (annotations included), without deepcopy's
    generic per-object machinery for the nodes themselves."""
    import copy

    import gast
    if memo is None:
        memo = {}

    def visit(x):
        if isinstance(x, _ATOMS):
            return x
        hit = memo.get(id(x))
        if hit is not None:
            return hit
        if isinstance(x, list):
            new = memo[id(x)] = []
            new.extend(visit(v) for v in x)
        elif isinstance(x, gast.AST):
            cls = type(x)
            new = memo[id(x)] = cls.__new__(cls)
            new.__dict__.update({k: visit(v) for k, v in x.__dict__.items()})
        else:
            return copy.deepcopy(x, memo)
        memo.setdefault(id(memo), []).append(x)  # keep x alive, as deepcopy does
        return new
    return visit(node)
