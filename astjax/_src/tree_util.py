"""Pytrees: JAX-compatible flattening of nested containers into leaves and a structure.

A structure is stored as nested node tuples ``(node_type, aux, children)``, where
``children`` is a tuple of nodes and a leaf is marked by ``None`` (a cheap identity
test in the hot loops; the pytree value ``None`` itself is the node ``(NoneType, None, ())``).
"""
import collections
import dataclasses
import functools
from typing import NamedTuple

__all__ = [
    "PyTreeDef", "Partial",
    "tree_flatten", "tree_unflatten", "tree_leaves", "tree_structure", "tree_map",
    "tree_reduce", "tree_all", "tree_transpose", "treedef_children", "treedef_is_leaf",
    "register_pytree_node", "register_pytree_node_class", "register_dataclass",
    "DictKey", "SequenceKey", "GetAttrKey", "FlattenedIndexKey", "keystr",
    "tree_flatten_with_path", "tree_leaves_with_path", "tree_map_with_path",
]

_NoneType = type(None)


# --- key entries (for paths) ------------------------------------------------------------------

# Frozen dataclasses, not namedtuples: key paths must themselves be leaves, as in JAX.

@dataclasses.dataclass(frozen=True)
class DictKey:
    key: object

    def __str__(self):
        return f"[{self.key!r}]"


@dataclasses.dataclass(frozen=True)
class SequenceKey:
    idx: int

    def __str__(self):
        return f"[{self.idx!r}]"


@dataclasses.dataclass(frozen=True)
class GetAttrKey:
    name: str

    def __str__(self):
        return f".{self.name}"


@dataclasses.dataclass(frozen=True)
class FlattenedIndexKey:
    key: int

    def __str__(self):
        return f"[<flat index {self.key}>]"


def keystr(keys):
    """A path as a string, e.g. ``"['a'][0].x"``."""
    return "".join(map(str, keys))


# --- registry ---------------------------------------------------------------------------------

class _Entry(NamedTuple):
    flatten: object    # node -> (children, aux)
    unflatten: object  # (aux, children) -> node
    keys: object       # (aux, num_children) -> tuple of plain keys
    key_type: type     # wraps a plain key into a path entry


def _positions(aux, n):
    return tuple(range(n))


def _sorted_keys(d):
    try:
        return tuple(sorted(d))
    except TypeError as e:  # as JAX: dict keys must be mutually orderable
        raise ValueError("Comparator raised exception while sorting pytree dictionary "
                         f"keys: {list(d)!r}") from e


def _flatten_dict(d):
    keys = _sorted_keys(d)
    return [d[k] for k in keys], keys


def _flatten_defaultdict(d):
    keys = _sorted_keys(d)
    return [d[k] for k in keys], (d.default_factory, keys)


_registry = {
    tuple: _Entry(lambda x: (x, None), lambda aux, ch: tuple(ch), _positions, SequenceKey),
    list: _Entry(lambda x: (x, None), lambda aux, ch: list(ch), _positions, SequenceKey),
    dict: _Entry(_flatten_dict, lambda aux, ch: dict(zip(aux, ch)),
                 lambda aux, n: aux, DictKey),
    _NoneType: _Entry(lambda x: ((), None), lambda aux, ch: None, _positions, SequenceKey),
    collections.OrderedDict: _Entry(
        lambda x: (list(x.values()), tuple(x)),
        lambda aux, ch: collections.OrderedDict(zip(aux, ch)),
        lambda aux, n: aux, DictKey),
    collections.defaultdict: _Entry(
        _flatten_defaultdict,
        lambda aux, ch: collections.defaultdict(aux[0], zip(aux[1], ch)),
        lambda aux, n: aux[1], DictKey),
}


def _is_namedtuple_type(t):
    # Namedtuples are recognised structurally (as JAX does) unless explicitly registered.
    return issubclass(t, tuple) and hasattr(t, "_fields")


_NAMEDTUPLE_ENTRY = _Entry(lambda x: (x, type(x)), lambda aux, ch: aux(*ch),
                           lambda aux, n: aux._fields, GetAttrKey)


def _entry_for(t):
    entry = _registry.get(t)
    if entry is None and _is_namedtuple_type(t):
        return _NAMEDTUPLE_ENTRY
    return entry


def register_pytree_node(nodetype, flatten_func, unflatten_func):
    """Make ``nodetype`` a pytree node.

    ``flatten_func(x) -> (children, aux_data)``; ``unflatten_func(aux_data, children) -> x``.
    ``aux_data`` is part of the tree structure, compared with ``==`` (as in JAX, it need
    not be hashable: a dict of static fields works).
    """
    _register(nodetype, _Entry(flatten_func, unflatten_func, _positions, FlattenedIndexKey))
    return nodetype


def _register(nodetype, entry):
    if nodetype in _registry:
        raise ValueError(f"Duplicate pytree node registration for {nodetype}.")
    _registry[nodetype] = entry


def register_pytree_node_class(cls):
    """Class decorator: ``x.tree_flatten() -> (children, aux)``,
    ``cls.tree_unflatten(aux, children) -> x`` (a classmethod)."""
    register_pytree_node(cls, lambda x: x.tree_flatten(), cls.tree_unflatten)
    return cls


def register_dataclass(nodetype, data_fields=None, meta_fields=None, drop_fields=()):
    """Register a dataclass-like type: ``data_fields`` are children, ``meta_fields`` are static.

    Given neither, ``nodetype`` must be a dataclass; fields with ``metadata=dict(static=True)``
    become meta fields and the rest data fields (as JAX does). Unflattening calls the
    constructor with all fields as keyword arguments.
    """
    if data_fields is None and meta_fields is None:
        if not dataclasses.is_dataclass(nodetype):
            raise TypeError("register_dataclass: data_fields and meta_fields are required "
                            f"when {nodetype.__name__} is not a dataclass")
        fields = [f for f in dataclasses.fields(nodetype) if f.init and f.name not in drop_fields]
        meta_fields = [f.name for f in fields if f.metadata.get("static", False)]
        data_fields = [f.name for f in fields if not f.metadata.get("static", False)]
    elif data_fields is None or meta_fields is None:
        raise TypeError("register_dataclass: give both data_fields and meta_fields, or neither")
    data_fields, meta_fields = tuple(data_fields), tuple(meta_fields)
    if dataclasses.is_dataclass(nodetype):
        # Every init field must be accounted for, or unflattening cannot rebuild the object.
        init = {f.name for f in dataclasses.fields(nodetype) if f.init}
        given = set(data_fields) | set(meta_fields) | set(drop_fields)
        if init != given:
            raise ValueError(
                f"register_dataclass: data_fields {list(data_fields)} and meta_fields "
                f"{list(meta_fields)} must cover the init fields {sorted(init)} of "
                f"{nodetype.__name__} (exclude init=False fields via drop_fields)")

    def flatten(x):
        return ([getattr(x, name) for name in data_fields],
                tuple(getattr(x, name) for name in meta_fields))

    def unflatten(aux, children):
        return nodetype(**dict(zip(meta_fields, aux)), **dict(zip(data_fields, children)))

    _register(nodetype, _Entry(flatten, unflatten, lambda aux, n: data_fields, GetAttrKey))
    return nodetype


# --- one-level helpers used by the compiler ------------------------------------------------

def flatten_one_level(value):
    """For a registered container node: (children, keys, aux). For a leaf: None.

    children: list of the node's direct children in flatten order.
    keys: a tuple naming each child: dict keys for dicts, field names for
          namedtuples/dataclasses, integer positions for tuples/lists/custom nodes.
    aux: the node's static auxiliary data (dict keys, namedtuple type, custom aux_data).
    """
    entry = _entry_for(type(value))
    if entry is None:
        return None
    children, aux = entry.flatten(value)
    children = list(children)
    return children, tuple(entry.keys(aux, len(children))), aux


def unflatten_one_level(node_type, aux, children):
    """Rebuild a node of ``node_type`` from its aux data and direct children."""
    entry = _entry_for(node_type)
    if entry is None:
        raise TypeError(f"{node_type.__name__} is not a pytree node type")
    return entry.unflatten(aux, tuple(children))


# --- flatten / unflatten ----------------------------------------------------------------------

def _flatten(x, leaves, is_leaf):
    """Append ``x``'s leaves to ``leaves``; return its structure node (None for a leaf)."""
    if is_leaf is not None and is_leaf(x):
        leaves.append(x)
        return None
    t = type(x)
    # Built-in containers inline: this runs on every jitted call's arguments.
    if t is tuple or t is list:
        children, aux = x, None
    elif t is dict:
        aux = _sorted_keys(x)
        children = [x[k] for k in aux]
    elif x is None:
        return _NONE_NODE
    else:
        entry = _registry.get(t)
        if entry is not None:
            children, aux = entry.flatten(x)
        elif isinstance(x, tuple) and hasattr(t, "_fields"):
            children, aux = x, t
        else:
            leaves.append(x)
            return None
    return (t, aux, tuple([_flatten(c, leaves, is_leaf) for c in children]))


_NONE_NODE = (_NoneType, None, ())


def _unflatten(node, leaves):
    """Rebuild the value for ``node`` from the leaf iterator ``leaves``."""
    if node is None:
        return next(leaves)
    t, aux, children = node
    values = [_unflatten(c, leaves) for c in children]
    if t is tuple:
        return tuple(values)
    if t is list:
        return values
    if t is dict:
        return dict(zip(aux, values))
    return unflatten_one_level(t, aux, values)


def _count(node):
    """(num_leaves, num_nodes) of a structure node."""
    if node is None:
        return 1, 1
    leaves, nodes = 0, 1
    for c in node[2]:
        lc, nc = _count(c)
        leaves += lc
        nodes += nc
    return leaves, nodes


def _node_repr(node):
    if node is None:
        return "*"
    t, aux, children = node
    inner = [_node_repr(c) for c in children]
    if t is _NoneType:
        return "None"
    if t is tuple:
        return "(" + ", ".join(inner) + ("," if len(inner) == 1 else "") + ")"
    if t is list:
        return "[" + ", ".join(inner) + "]"
    if t is dict:
        return "{" + ", ".join(f"{k!r}: {c}" for k, c in zip(aux, inner)) + "}"
    # JAX's format: aux data shown with str(), namedtuples as a namedtuple[...] custom node.
    if t not in _registry and _is_namedtuple_type(t):
        return f"CustomNode(namedtuple[{t.__name__}], [{', '.join(inner)}])"
    return f"CustomNode({t.__name__}[{aux}], [{', '.join(inner)}])"


class PyTreeDef:
    """The structure of a pytree: hashable, comparable, and able to rebuild trees."""
    __slots__ = ("_node", "_num_leaves", "_hash")

    def __init__(self, node, num_leaves=None):
        self._node = node
        self._num_leaves = num_leaves
        self._hash = None

    @property
    def num_leaves(self):
        if self._num_leaves is None:
            self._num_leaves = _count(self._node)[0]
        return self._num_leaves

    @property
    def num_nodes(self):
        return _count(self._node)[1]

    def unflatten(self, leaves):
        leaves = list(leaves)
        if len(leaves) != self.num_leaves:
            few = "few" if len(leaves) < self.num_leaves else "many"
            raise ValueError(f"Too {few} leaves for PyTreeDef; expected {self.num_leaves}, "
                             f"got {len(leaves)}: {self}")
        return _unflatten(self._node, iter(leaves))

    def flatten_up_to(self, tree):
        """The subtrees of ``tree`` found at this structure's leaves; ``tree`` must match
        this structure down to them."""
        out = []
        _flatten_up_to(self._node, tree, out)
        return out

    def children(self):
        if self._node is None:
            return []
        return [PyTreeDef(c) for c in self._node[2]]

    def node_data(self):
        """(node type, aux data) of the root, or None for a leaf."""
        return None if self._node is None else self._node[:2]

    def __eq__(self, other):
        if not isinstance(other, PyTreeDef):
            return NotImplemented
        return self is other or self._node == other._node

    def __hash__(self):
        # Cached: structures are dispatch-cache keys.
        if self._hash is None:
            self._hash = _node_hash(self._node)
        return self._hash

    def __repr__(self):
        return f"PyTreeDef({_node_repr(self._node)})"


def aux_key(aux):
    """A hashable stand-in for a node's aux data: JAX accepts unhashable aux data (a dict of
    static fields, in its docs' class-method example) and compares it with ==."""
    try:
        hash(aux)
        return aux
    except TypeError:
        pass
    if isinstance(aux, dict):
        return ("dict",) + tuple((k, aux_key(v)) for k, v in aux.items())
    if isinstance(aux, (list, tuple)):
        return (type(aux).__name__,) + tuple(aux_key(v) for v in aux)
    return type(aux)  # equal values hash alike; == tells them apart


def _node_hash(node):
    if node is None:
        return hash(None)
    t, aux, children = node
    return hash((t, aux_key(aux), tuple(_node_hash(c) for c in children)))


def _flatten_up_to(node, x, out):
    if node is None:
        out.append(x)
        return
    t, aux, children = node
    if type(x) is not t:
        raise ValueError(f"Expected {t.__name__}, got {x!r}.")
    entry = _entry_for(t)
    xs, x_aux = entry.flatten(x)
    xs = list(xs)
    if len(xs) != len(children):
        raise ValueError(f"{t.__name__} arity mismatch: {len(xs)} != {len(children)}; "
                         f"{t.__name__}: {x!r}.")
    if x_aux != aux:
        raise ValueError(f"Mismatched {t.__name__} node data: {x_aux!r} != {aux!r}; "
                         f"value: {x!r}.")
    for c, v in zip(children, xs):
        _flatten_up_to(c, v, out)


def tree_flatten(tree, is_leaf=None):
    """``(leaves, treedef)``: leaves in flatten order and the tree's structure."""
    leaves = []
    node = _flatten(tree, leaves, is_leaf)
    return leaves, PyTreeDef(node, len(leaves))


def tree_unflatten(treedef, leaves):
    return treedef.unflatten(leaves)


def tree_leaves(tree, is_leaf=None):
    leaves = []
    _flatten(tree, leaves, is_leaf)
    return leaves


def tree_structure(tree, is_leaf=None):
    return tree_flatten(tree, is_leaf)[1]


def treedef_children(treedef):
    return treedef.children()


def treedef_is_leaf(treedef):
    return treedef._node is None


def _leaves_of_rest(treedef, tree, rest, is_leaf):
    """Leaves of each tree in ``rest``, cut at ``treedef``'s leaves."""
    out = []
    for i, r in enumerate(rest, 1):
        try:
            out.append(treedef.flatten_up_to(r))
        except ValueError as e:
            raise ValueError(
                f"Tree {i} must have the same structure as tree 0 up to its leaves, but tree 0 "
                f"is {treedef} and tree {i} is {tree_structure(r, is_leaf)}: {e}") from None
    return out


def tree_map(f, tree, *rest, is_leaf=None):
    """Apply ``f`` to corresponding leaves of ``tree`` and ``rest``; ``tree``'s structure."""
    leaves, treedef = tree_flatten(tree, is_leaf)
    if not rest:
        return treedef.unflatten([f(x) for x in leaves])
    all_leaves = [leaves] + _leaves_of_rest(treedef, tree, rest, is_leaf)
    return treedef.unflatten([f(*xs) for xs in zip(*all_leaves)])


_no_initializer = object()


def tree_reduce(function, tree, initializer=_no_initializer, is_leaf=None):
    leaves = tree_leaves(tree, is_leaf)
    if initializer is _no_initializer:
        return functools.reduce(function, leaves)
    return functools.reduce(function, leaves, initializer)


def tree_all(tree, *, is_leaf=None):
    return all(tree_leaves(tree, is_leaf))


def tree_transpose(outer_treedef, inner_treedef, pytree_to_transpose):
    """An ``outer`` tree of ``inner`` trees as an ``inner`` tree of ``outer`` trees (JAX's;
    ``inner_treedef=None`` takes the first inner tree's structure)."""
    flat, treedef = tree_flatten(pytree_to_transpose)
    if inner_treedef is None:
        inner_treedef = tree_structure(outer_treedef.flatten_up_to(pytree_to_transpose)[0])
    inner, outer = inner_treedef.num_leaves, outer_treedef.num_leaves
    if treedef.num_leaves != inner * outer:
        raise TypeError(f"Mismatch\n{treedef}\n != \n{outer_treedef} of {inner_treedef}")
    rows = [flat[i * inner:(i + 1) * inner] for i in range(outer)]
    return inner_treedef.unflatten([outer_treedef.unflatten(col) for col in zip(*rows)])


# --- paths ------------------------------------------------------------------------------------

def _flatten_with_path(x, path, out, is_leaf):
    if is_leaf is not None and is_leaf(x):
        out.append((path, x))
        return
    entry = _entry_for(type(x))
    if entry is None:
        out.append((path, x))
        return
    children, aux = entry.flatten(x)
    children = list(children)
    for k, c in zip(entry.keys(aux, len(children)), children):
        _flatten_with_path(c, path + (entry.key_type(k),), out, is_leaf)


def tree_flatten_with_path(tree, is_leaf=None):
    """``([(key_path, leaf), ...], treedef)``; a key path is a tuple of key entries."""
    out = []
    _flatten_with_path(tree, (), out, is_leaf)
    return out, tree_structure(tree, is_leaf)


def tree_leaves_with_path(tree, is_leaf=None):
    out = []
    _flatten_with_path(tree, (), out, is_leaf)
    return out


def tree_map_with_path(f, tree, *rest, is_leaf=None):
    """Like tree_map, but ``f(key_path, leaf, *rest_leaves)``."""
    path_leaves, treedef = tree_flatten_with_path(tree, is_leaf)
    paths = [p for p, _ in path_leaves]
    all_leaves = [[x for _, x in path_leaves]] + _leaves_of_rest(treedef, tree, rest, is_leaf)
    return treedef.unflatten([f(p, *xs) for p, *xs in zip(paths, *all_leaves)])


# --- Partial ----------------------------------------------------------------------------------

class _HashableCallableShim:
    """Wraps a functools.partial so that Partial does not merge its arguments with ours."""
    __slots__ = ("fun",)

    def __init__(self, fun):
        self.fun = fun

    def __call__(self, *args, **kw):
        return self.fun(*args, **kw)

    def __hash__(self):
        return hash(self.fun)

    def __eq__(self, other):
        if isinstance(other, _HashableCallableShim):
            other = other.fun
        return self.fun == other


class Partial(functools.partial):
    """A functools.partial that is a pytree: ``args`` and ``keywords`` are children and the
    function is static, so a Partial can be passed to and returned from jitted functions."""

    def __new__(cls, func, *args, **kw):
        # functools.partial flattens a partial ``func`` into this one; JAX keeps the inner
        # partial (and its arguments) static, so hide it behind a shim.
        if isinstance(func, functools.partial):
            func = _HashableCallableShim(func)
        return super().__new__(cls, func, *args, **kw)


register_pytree_node(
    Partial,
    lambda p: ((p.args, p.keywords), p.func),
    lambda func, children: Partial(func, *children[0], **children[1]))
