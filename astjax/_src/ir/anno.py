"""Annotations on AST nodes (types, resolved ops, callees), kept off the node's fields."""

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


def clean_copy(node, pairs=None):
    """A deep copy of an AST without annotations (they hold types, ops, specializations).
    ``pairs`` collects (original, copy) for every node copied."""
    import gast
    if isinstance(node, list):
        return [clean_copy(n, pairs) for n in node]
    if not isinstance(node, gast.AST):
        return node
    new = type(node)(**{f: clean_copy(getattr(node, f), pairs) for f in node._fields})
    for attr in ("lineno", "col_offset", "end_lineno", "end_col_offset"):
        if hasattr(node, attr):
            setattr(new, attr, getattr(node, attr))
    if pairs is not None:
        pairs.append((node, new))
    return new
