"""Pytree containers (dicts, namedtuples, registered classes) inside compiled code.

A container has a ``TreeType``. Code builds one with a dict display, a call of a
namedtuple class, or a call of a ``TreeBuilder`` (what generated code calls for any
other node type, e.g. a gradient shaped like a registered class); typing marks such
an expression ``tree_build`` with its children's nodes in flatten order, and every
read of a child (``p.w``, ``p[0]``, ``d["k"]``, ``p[key]`` in generated code)
``tree_child`` with the child's position. The passes after typing (derivatives,
batching, the backends) work from these two marks and so treat every node type alike:
the Numba backend lays every container out as the tuple of its children.
"""
import dataclasses

from .. import tree_util
from .types import SequenceType, Type


def is_namedtuple_class(value):
    """A namedtuple class that flattens as namedtuples do (not registered otherwise)."""
    return isinstance(value, type) and tree_util._is_namedtuple_type(value) and \
        value not in tree_util._registry


def is_registered_class(value):
    return isinstance(value, type) and value in tree_util._registry and \
        value not in (tuple, list, dict, type(None))


class Placeholder:
    """A value known only at run time, given to a registered class's ``__init__`` while
    code is generated (``FunctionTyper.registered_build``)."""

    def __repr__(self):
        return "<a value known only at run time>"

    @staticmethod
    def inside(value):
        """Whether ``value`` is or holds (in a tuple, list or dict) a Placeholder."""
        if isinstance(value, Placeholder):
            return True
        if isinstance(value, (tuple, list)):
            return any(Placeholder.inside(v) for v in value)
        if isinstance(value, dict):
            return any(Placeholder.inside(v) for v in value.values())
        return False


@dataclasses.dataclass(frozen=True)
class TreeBuilder:
    """``TreeBuilder(node_type, aux)(*children)``: the node with these children (what
    generated code calls to build a registered class, an OrderedDict, ...)."""
    node_type: type
    aux: object

    def __hash__(self):
        return hash((self.node_type, tree_util.aux_key(self.aux)))

    def __call__(self, *children):
        return tree_util.unflatten_one_level(self.node_type, self.aux, children)

    @property
    def __name__(self):  # names the generated code's reference to it
        return f"make_{self.node_type.__name__}"

    def keys(self, n):
        return tuple(tree_util._entry_for(self.node_type).keys(self.aux, n))


def builder(t):
    """What generated code calls to build a value of TreeType ``t`` from its children in
    flatten order: the namedtuple class itself, else a TreeBuilder."""
    if is_namedtuple_class(t.node_type) and t.aux is t.node_type:
        return t.node_type
    return TreeBuilder(t.node_type, t.aux)


def child_position(t, key):
    """The position of ``t``'s child named ``key`` (a key, or for a namedtuple an index),
    or None."""
    if not isinstance(key, (Type, slice)) and key in t.keys:
        return t.keys.index(key)
    if type(key) is int and tree_util._is_namedtuple_type(t.node_type) and \
            -len(t.keys) <= key < len(t.keys):
        return key % len(t.keys)
    return None


def container_source(t, parts, ref):
    """Source text building a value of type ``t`` (a SequenceType or TreeType) from its
    children's source ``parts`` (flatten order); ``ref(value)`` names a value the text
    refers to (a namedtuple class or TreeBuilder) in the generated code's namespace."""
    if isinstance(t, SequenceType):
        inner = ", ".join(parts)
        return f"[{inner}]" if t.kind == "list" else \
            f"({inner}{',' if len(parts) == 1 else ''})"
    if t.node_type is dict:
        return "{" + ", ".join(f"{k!r}: {p}" for k, p in zip(t.keys, parts)) + "}"
    return f"{ref(builder(t))}({', '.join(parts)})"


def namespace_ref(namespace):
    """A ``ref`` for container_source that binds values to fresh names in ``namespace``."""
    def ref(value):
        base = "_" + getattr(value, "__name__", "tree")
        name, k = base, 0
        while name in namespace and namespace[name] is not value:
            k += 1
            name = f"{base}{k}"
        namespace[name] = value
        return name
    return ref


class _Probe:
    def __init__(self, position):
        self.position = position


def attribute_position(t, attr):
    """The position of the child that attribute ``attr`` of a registered class instance
    (TreeType ``t``) reads, found by unflattening the node around probes; None when
    unflattening fails or the attribute is not one child."""
    value = _probed_attribute(t, attr)
    return value.position if isinstance(value, _Probe) else None


def static_attribute(t, attr):
    """``(True, value)`` where attribute ``attr`` of a registered class instance (TreeType
    ``t``) comes from its static (aux) data alone (a dataclass's meta field), else
    ``(False, None)``."""
    value = _probed_attribute(t, attr)
    if value is _UNREADABLE or not _is_plain_data(value):
        return False, None
    return True, value


_UNREADABLE = object()


def _probed_attribute(t, attr):
    try:
        node = tree_util.unflatten_one_level(t.node_type, t.aux,
                                             [_Probe(i) for i in range(len(t.children))])
        return getattr(node, attr)
    except Exception:  # noqa: BLE001 (user code: anything it raises means "unknown")
        return _UNREADABLE


def _is_plain_data(value):
    """Numbers, strings, None and containers of them: what static data may be (not a
    probe standing for a child, nor an object built from one)."""
    if isinstance(value, (tuple, list)):
        return all(_is_plain_data(v) for v in value)
    if isinstance(value, dict):
        return all(_is_plain_data(v) for v in value.values())
    return isinstance(value, (bool, int, float, complex, str, bytes, type(None)))


_REPLACE = {}


def replace_function(cls, fields, origin):
    """The function that ``p._replace(**{field: ...})`` of namedtuple class ``cls`` calls
    in compiled code (``p._replace(w=v)`` is ``P_replace(p, w=v)``, one per set of fields)."""
    key = (cls, tuple(fields), id(origin))
    hit = _REPLACE.get(key)
    if hit is None:
        from ..frontend.synthetic import from_source
        parts = [f if f in fields else f"_node.{f}" for f in cls._fields]
        source = (f"def {cls.__name__}_replace(_node, {', '.join(fields)}):\n"
                  f"    return _cls({', '.join(parts)})\n")
        hit = _REPLACE[key] = (from_source(f"{cls.__name__}_replace", source, {"_cls": cls},
                                           origin), origin)
    return hit[0]


def has_dict_keys(t):
    """Whether ``t``'s node type is a mapping read as ``d[key]`` (dict, OrderedDict, ...)."""
    entry = tree_util._entry_for(t.node_type)
    return entry is not None and entry.key_type is tree_util.DictKey


def tree_child(node, position):
    """Child ``position`` (in flatten order) of a pytree node (python-backend code reads the
    children of registered classes this way)."""
    return tree_util.flatten_one_level(node)[0][position]
