"""Abstract values: what the compiler knows about a variable.

Shapes stay symbolic: an array type records dtype, rank and which dims are
known to be 1 (enough to generate broadcasting code), never concrete sizes,
so one generated function serves every batch size. Python values that are
known when the code is generated (``axis=0``, ``"ij,jk->ik"``, tuples of
them) are ``Static``.
"""
from dataclasses import dataclass

import numpy as np

from .. import dtypes
from ..tree_util import aux_key


class Type:
    """Base of all abstract values."""


@dataclass(frozen=True)
class ArrayType(Type):
    """An array (or a dynamic scalar when ndim == 0).

    ``ones[i]`` is True when dim i is known to be 1. ``weak`` marks values that
    come from Python scalars (JAX's weak_type).
    """
    dtype: np.dtype
    ones: tuple = ()
    weak: bool = False

    @property
    def ndim(self):
        return len(self.ones)

    def with_dtype(self, dtype, weak=False):
        return ArrayType(np.dtype(dtype), self.ones, weak)

    def __str__(self):
        code = {"b": "bool", "i": "i", "u": "u", "f": "f", "c": "c"}[self.dtype.kind]
        name = code if code == "bool" else f"{code}{self.dtype.itemsize * 8}"
        dims = ",".join("1" if one else "_" for one in self.ones)
        return f"{name}[{dims}]" + ("~" if self.weak else "")


def array_type(dtype, ndim=0, weak=False, ones=None):
    return ArrayType(np.dtype(dtype), tuple(ones) if ones is not None else (False,) * ndim, weak)


@dataclass(frozen=True)
class Static(Type):
    """A Python value known at generation time (number, str, None, dtype, tuple, callable)."""
    value: object

    def __hash__(self):
        return hash((type(self.value), _hashable(self.value)))

    def __eq__(self, other):
        return (isinstance(other, Static) and type(self.value) is type(other.value)
                and _hashable(self.value) == _hashable(other.value))

    def __str__(self):
        return f"static {self.value!r}"


def _hashable(value):
    if isinstance(value, (tuple, list)):
        return tuple(_hashable(v) for v in value)
    try:
        hash(value)
        return value
    except TypeError:
        return ("id", id(value))


@dataclass(frozen=True)
class SequenceType(Type):
    """A tuple or list whose length is known; elements may be static or dynamic."""
    elts: tuple
    kind: str = "tuple"  # or "list"

    def __str__(self):
        inner = ", ".join(map(str, self.elts))
        return f"({inner})" if self.kind == "tuple" else f"[{inner}]"


@dataclass(frozen=True)
class TreeType(Type):
    """A pytree container other than tuple/list (dict, namedtuple, dataclass, registered class).

    ``treedef`` is the container's one-level structure from tree_util; children
    are the types of its direct children in flatten order.
    """
    node_type: type
    aux: object
    keys: tuple
    children: tuple

    def __hash__(self):
        return hash((self.node_type, aux_key(self.aux), self.keys, self.children))

    def child(self, key):
        return self.children[self.keys.index(key)]

    def __str__(self):
        inner = ", ".join(f"{k}: {c}" for k, c in zip(self.keys, self.children))
        return f"{self.node_type.__name__}{{{inner}}}"


# --- helpers -------------------------------------------------------------------------------

def keyed_children(t):
    """``(key, child type)`` pairs of a container type, keys as paths name them (positions
    for a tuple or list, the node's keys for a TreeType); None for any other type."""
    if isinstance(t, SequenceType):
        return list(enumerate(t.elts))
    if isinstance(t, TreeType):
        return list(zip(t.keys, t.children))
    return None


def is_numeric(t):
    """Array-like: an array type or a static Python number."""
    return isinstance(t, ArrayType) or (
        isinstance(t, Static) and isinstance(t.value, (bool, int, float, complex, np.generic)))


def as_array_type(t):
    """View a static number as a (weak, for Python scalars) 0-d array type."""
    if isinstance(t, ArrayType):
        return t
    if isinstance(t, Static):
        v = t.value
        if dtypes.is_python_scalar(v):
            return ArrayType(dtypes.python_scalar_dtype(v), (), True)
        if isinstance(v, np.generic):
            return ArrayType(dtypes.canonicalize_dtype(v.dtype), (), False)
    raise TypeError(f"expected an array, got {t}")


_ARRAY = []  # runtime.array.Array, imported on first use (runtime imports ir)


def type_of_value(value):
    """Abstract value of a concrete runtime value (used for specialization keys)."""
    if not _ARRAY:
        from ..runtime.array import Array
        _ARRAY.append(Array)
    if isinstance(value, _ARRAY[0]):
        ones = getattr(value._pending, "ones", None)
        if ones is not None:  # the result of a queued call: its type, without waiting
            return ArrayType(value._pending.dtype, ones, value._weak)
        return ArrayType(value._value.dtype, tuple(d == 1 for d in value._value.shape),
                         value._weak)
    if isinstance(value, np.ndarray):
        return ArrayType(dtypes.canonicalize_dtype(value.dtype),
                         tuple(d == 1 for d in value.shape), False)
    if isinstance(value, np.generic):
        return ArrayType(dtypes.canonicalize_dtype(value.dtype), (), False)
    if dtypes.is_python_scalar(value):
        return ArrayType(dtypes.python_scalar_dtype(value), (), True)
    if isinstance(value, (tuple, list)) and not hasattr(value, "_fields"):
        return SequenceType(tuple(type_of_value(v) for v in value),
                            "tuple" if isinstance(value, tuple) else "list")
    if value is None or isinstance(value, (str, np.dtype, type)):
        return Static(value)
    from ..tree_util import flatten_one_level  # containers: dict, namedtuple, registered
    node = flatten_one_level(value)
    if node is None:
        raise TypeError(f"astjax cannot take an argument of type {type(value).__name__}")
    children, keys, aux = node
    return TreeType(type(value), aux, tuple(keys), tuple(type_of_value(c) for c in children))


def broadcast_ones(*types):
    """The ``ones`` pattern of the broadcast of array types (NumPy rules, from the right)."""
    ndim = max((t.ndim for t in types), default=0)
    out = []
    for axis in range(-ndim, 0):
        out.append(all(t.ones[axis] for t in types if t.ndim >= -axis))
    return tuple(out)


@dataclass(frozen=True)
class ListType(Type):
    """A Python list built at run time (``append``), of unknown length."""
    elt: Type

    def __str__(self):
        return f"list[{self.elt}]"


class _Unknown(Type):
    """Not yet known (the result of a recursive call while its return type is inferred)."""

    def __str__(self):
        return "?"


UNKNOWN = _Unknown()


@dataclass(frozen=True)
class IndexType(Type):
    """An index object (``s_[i:n, None]``) with run-time parts; ``view`` is its param view."""
    view: object

    def __hash__(self):
        return hash(repr(self.view))

    def __eq__(self, other):
        return isinstance(other, IndexType) and repr(other.view) == repr(self.view)

    def __str__(self):
        return f"index{self.view!r}"
