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
