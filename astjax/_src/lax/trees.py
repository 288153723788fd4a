"""``tree_util.tree_map``, ``tree_leaves`` and ``tree_reduce`` in compiled code: the tree's
structure is in its type, so a call becomes a display, e.g. ``tree_map`` over a dict of two
arrays

    def tree_map(f, tree, r0, is_leaf):
        return {'b': f(tree['b'], r0['b']), 'w': f(tree['w'], r0['w'])}

(``f`` may be a lambda using the caller's variables, as lax's body functions may).
Eagerly each is ``_src.tree_util``'s function itself.
"""
from .. import tree_util as _trees
from ..ir.infer import closure_function
from ..ir.trees import namespace_ref
from ..ir.types import SequenceType, Static, TreeType
from .common import (as_sequence, call_type, check_callable, leaves, lax_function, path_str,
                     rebuild, synthesize, type_error)


def _lower_tree_map(f, tree, *rest_and_is_leaf):
    *rest, is_leaf = rest_and_is_leaf
    _check_is_leaf(is_leaf, "tree_map")
    if isinstance(f, Static) and closure_function(f) is None:  # (a closure over constants)
        check_callable("tree_map f", f.value)
    paths = [path for path, _ in leaves(tree)]
    for k, other in enumerate(rest):  # each has the first tree's structure (or more below)
        theirs = [path for path, _ in leaves(other)]
        missing = [p for p in paths if not any(q[:len(p)] == p for q in theirs)]
        if missing:
            raise type_error(f"tree_map: argument {k + 3} does not have the structure of "
                             f"the first tree (nothing at {missing[0]!r})")
    names = [f"r{k}" for k in range(len(rest))]

    def apply(path, t):
        if _empty(t):
            return "None"
        return "f(" + ", ".join(path_str(x, path) for x in ["tree"] + names) + ")"
    namespace = {}
    body = rebuild(tree, apply, namespace_ref(namespace))
    params = ", ".join(["f", "tree"] + names + ["is_leaf"])
    return synthesize("tree_map", f"def tree_map({params}):\n    return {body}\n",
                      _trees.tree_map, namespace)


def _check_is_leaf(is_leaf, name):
    if not (isinstance(is_leaf, Static) and is_leaf.value is None):
        raise type_error(f"{name}(is_leaf=...) is not supported in compiled code yet")


def _empty(t):
    """None: an empty subtree, as in JAX."""
    return isinstance(t, Static) and t.value is None


def _leaf_texts(tree, root):
    """Source of each leaf of ``tree`` (held in ``root``) in flatten order."""
    return [path_str(root, path) for path, t in leaves(tree) if not _empty(t)]


def _lower_tree_leaves(tree, is_leaf):
    _check_is_leaf(is_leaf, "tree_leaves")
    return synthesize("tree_leaves", f"def tree_leaves(tree, is_leaf):\n"
                                     f"    return [{', '.join(_leaf_texts(tree, 'tree'))}]\n",
                      _trees.tree_leaves)


def _lower_tree_reduce(function, tree, initializer, is_leaf):
    _check_is_leaf(is_leaf, "tree_reduce")
    texts = _leaf_texts(tree, "tree")
    if isinstance(initializer, Static) and initializer.value is _trees._no_initializer:
        if not texts:
            raise type_error("tree_reduce() of an empty tree needs an initializer")
        acc, texts = texts[0], texts[1:]
    else:
        acc = "initializer"
    for text in texts:
        acc = f"function({acc}, {text})"
    return synthesize("tree_reduce", f"def tree_reduce(function, tree, initializer, is_leaf):\n"
                                     f"    return {acc}\n", _trees.tree_reduce)


tree_map = lax_function(_lower_tree_map)(_trees.tree_map)
tree_leaves = lax_function(_lower_tree_leaves)(_trees.tree_leaves)
tree_reduce = lax_function(_lower_tree_reduce)(_trees.tree_reduce)


def _dict_from(f, xs, unpack, view):
    """What ``{k: v for t in xs}`` means (frontend/desugar.py writes it as this call;
    ``view``: "keys", "values" or "items" for ``xs.keys()`` ...)."""
    xs = getattr(xs, view)() if view else xs
    return dict(f(*x) if unpack else f(x) for x in xs)


def _lower_dict_from(f, xs, unpack, view):
    """The dict display, its keys found from the types of ``f``'s results: iterating a dict
    (its keys, values or items), or a tuple or list of known length."""
    n, view = unpack.value, view.value
    if isinstance(xs, TreeType) and xs.node_type is dict:
        items = []
        for k, child in zip(xs.keys, xs.children):
            key, value = (repr(k), Static(k)), (f"xs[{k!r}]", child)
            items.append({None: [key], "keys": [key], "values": [value],
                          "items": [key, value]}[view])
    elif view is None and isinstance(as_sequence(xs), SequenceType):
        items = [[(f"xs[{i}]", e)] for i, e in enumerate(as_sequence(xs).elts)]
    else:
        raise type_error(f"a dict comprehension over {xs}: its keys must be known when the "
                         f"code is generated (iterate over a dict, its items(), or a tuple)")
    entries = []
    for parts in items:
        if len(parts) == 2 and not n:  # for item in d.items(): one (key, value) tuple
            parts = [("(" + ", ".join(text for text, _ in parts) + ")",
                      SequenceType(tuple(t for _, t in parts)))]
        elif len(parts) == 1 and n:  # for a, b in xs: unpack each element
            (text, t), seq = parts[0], as_sequence(parts[0][1])
            if not isinstance(seq, SequenceType) or len(seq.elts) != n:
                raise type_error(f"cannot unpack {t} into {n} names")
            parts = [(f"{text}[{j}]", e) for j, e in enumerate(seq.elts)]
        elif len(parts) != max(n, 1):
            raise type_error(f"cannot unpack {len(parts)} values into {n} names")
        out = as_sequence(call_type(f, [t for _, t in parts], "dict comprehension"))
        key = out.elts[0] if isinstance(out, SequenceType) else None
        if not isinstance(key, Static):
            raise type_error(f"a dict comprehension's keys must be known when the code is "
                             f"generated, got {key}")
        entries.append(f"{key.value!r}: f({', '.join(text for text, _ in parts)})[1]")
    return synthesize("dict_from", "def dict_from(f, xs, unpack, view):\n"
                                   f"    return {{{', '.join(entries)}}}\n", _dict_from)


dict_from = lax_function(_lower_dict_from)(_dict_from)
