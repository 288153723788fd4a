"""Pytree behaviour, checked against what JAX documents and does."""
import collections
import dataclasses
import functools

import numpy as np
import pytest

import astjax
import astjax.numpy as jnp
from astjax import tree_util as tu
from astjax.test_util import check_grads

Point = collections.namedtuple("Point", ["x", "y"])
Other = collections.namedtuple("Other", ["x", "y"])


# --- round trips -------------------------------------------------------------------------------

@pytest.mark.parametrize("tree, leaves", [
    ((1, 2, 3), [1, 2, 3]),
    ([1, [2, 3]], [1, 2, 3]),
    ({"b": 1, "a": 2}, [2, 1]),
    (None, []),
    ((), []),
    ({}, []),
    (Point(1, 2), [1, 2]),
    (collections.OrderedDict([("b", 1), ("a", 2)]), [1, 2]),
    (collections.defaultdict(list, {"b": 1, "a": 2}), [2, 1]),
    ((1, (None, [2, {"z": 3, "y": (4,)}]), Point(x=5, y=[6])), [1, 2, 4, 3, 5, 6]),
    (7, [7]),
    ("a string", ["a string"]),
])
def test_flatten_unflatten_round_trip(tree, leaves):
    got, treedef = tu.tree_flatten(tree)
    assert got == leaves
    assert tu.tree_leaves(tree) == leaves
    assert treedef.num_leaves == len(leaves)
    rebuilt = tu.tree_unflatten(treedef, got)
    assert rebuilt == tree
    assert type(rebuilt) is type(tree)


def test_unflatten_restores_container_types_and_new_leaves():
    tree = {"a": (1, [2]), "b": Point(3, None), "c": collections.OrderedDict(q=4, p=5)}
    treedef = tu.tree_structure(tree)
    out = treedef.unflatten(["A", "B", "C", "D", "E"])
    assert out == {"a": ("A", ["B"]), "b": Point("C", None),
                   "c": collections.OrderedDict(q="D", p="E")}
    assert type(out["a"][1]) is list and type(out["b"]) is Point
    assert list(out["c"]) == ["q", "p"]  # OrderedDict keeps insertion order


def test_dict_flattens_in_sorted_key_order_and_insertion_order_is_irrelevant():
    leaves1, td1 = tu.tree_flatten({"b": 1, "c": 2, "a": 0})
    leaves2, td2 = tu.tree_flatten({"a": 0, "c": 2, "b": 1})
    assert leaves1 == leaves2 == [0, 1, 2]
    assert td1 == td2
    # JAX rebuilds dicts in sorted key order.
    assert list(td1.unflatten([0, 1, 2])) == ["a", "b", "c"]


def test_ordered_dict_keeps_insertion_order_in_structure():
    a = collections.OrderedDict([("b", 1), ("a", 2)])
    b = collections.OrderedDict([("a", 2), ("b", 1)])
    assert tu.tree_leaves(a) == [1, 2]
    assert tu.tree_structure(a) != tu.tree_structure(b)


def test_defaultdict_keeps_factory():
    d = collections.defaultdict(list, {"b": 1, "a": 2})
    out = tu.tree_map(lambda x: x * 10, d)
    assert type(out) is collections.defaultdict
    assert out.default_factory is list
    assert out == {"a": 20, "b": 10}
    assert tu.tree_structure(d) != tu.tree_structure(collections.defaultdict(int, d))


def test_mixed_type_dict_keys_raise_value_error():
    with pytest.raises(ValueError, match="sorting pytree dictionary keys"):
        tu.tree_flatten({1: "x", "a": "y"})


def test_none_is_an_empty_node_not_a_leaf():
    assert tu.tree_leaves(None) == []
    assert tu.tree_leaves([None, 1, (None,)]) == [1]
    td = tu.tree_structure(None)
    assert td.num_leaves == 0 and td.num_nodes == 1
    assert td.unflatten([]) is None
    assert tu.tree_map(lambda x: x + 1, (None, 1)) == (None, 2)
    # ... but it is a leaf when is_leaf says so.
    assert tu.tree_leaves([None, 1], is_leaf=lambda x: x is None) == [None, 1]


def test_non_containers_are_leaves():
    arr = np.arange(3)

    class Plain:
        pass

    class TupleSub(tuple):  # a tuple subclass that is not a namedtuple is a leaf
        pass

    p, ts = Plain(), TupleSub((1, 2))
    leaves = tu.tree_leaves([arr, 1.5, "s", p, np.float32(2), ts, {1, 2}])
    assert leaves[0] is arr and leaves[3] is p and leaves[5] is ts
    assert len(leaves) == 7


def test_namedtuple_children_and_type_preserved():
    leaves, td = tu.tree_flatten(Point(x=1, y=(2, 3)))
    assert leaves == [1, 2, 3]
    out = td.unflatten([4, 5, 6])
    assert type(out) is Point and out == Point(4, (5, 6))
    # Same fields, different type: different structure; and not equal to a plain tuple.
    assert tu.tree_structure(Point(1, 2)) != tu.tree_structure(Other(1, 2))
    assert tu.tree_structure(Point(1, 2)) != tu.tree_structure((1, 2))


# --- PyTreeDef -------------------------------------------------------------------------------

def test_treedef_equality_and_hash():
    a = tu.tree_structure((1, {"a": 2, "b": [3, None]}))
    b = tu.tree_structure(("x", {"b": ["y", None], "a": "z"}))
    assert a == b and hash(a) == hash(b)
    assert len({a, b}) == 1
    assert a != tu.tree_structure((1, {"a": 2, "c": [3, None]}))  # dict keys differ
    assert a != tu.tree_structure((1, {"a": 2, "b": (3, None)}))  # list vs tuple
    assert a != tu.tree_structure((1, {"a": 2, "b": [3, 4]}))     # None vs leaf
    assert tu.tree_structure([1, 2]) != tu.tree_structure([1, 2, 3])
    assert a != "not a treedef"


def test_treedef_repr_matches_jax():
    assert repr(tu.tree_structure((1, {"b": 2, "a": 3}))) == "PyTreeDef((*, {'a': *, 'b': *}))"
    assert repr(tu.tree_structure(None)) == "PyTreeDef(None)"
    assert repr(tu.tree_structure(1)) == "PyTreeDef(*)"
    assert repr(tu.tree_structure((1,))) == "PyTreeDef((*,))"
    assert repr(tu.tree_structure([1, None, []])) == "PyTreeDef([*, None, []])"
    assert repr(tu.tree_structure(Point(1, (2,)))) == \
        "PyTreeDef(CustomNode(namedtuple[Point], [*, (*,)]))"
    assert repr(tu.tree_structure(collections.OrderedDict(b=1, a=2))) == \
        "PyTreeDef(CustomNode(OrderedDict[('b', 'a')], [*, *]))"


def test_num_leaves_num_nodes_children():
    td = tu.tree_structure((1, [2, 3], {"a": None}))
    assert td.num_leaves == 3
    # Nodes: tuple, 1, list, 2, 3, dict, None.
    assert td.num_nodes == 7
    kids = td.children()
    assert kids == tu.treedef_children(td)
    assert [repr(k) for k in kids] == ["PyTreeDef(*)", "PyTreeDef([*, *])",
                                       "PyTreeDef({'a': None})"]
    assert [k.num_leaves for k in kids] == [1, 2, 0]
    assert tu.tree_structure(1).children() == []
    assert tu.treedef_is_leaf(tu.tree_structure(1))
    assert not tu.treedef_is_leaf(tu.tree_structure(None))


def test_unflatten_wrong_leaf_count():
    td = tu.tree_structure((1, 2, 3))
    with pytest.raises(ValueError, match="expected 3, got 2"):
        td.unflatten([1, 2])
    with pytest.raises(ValueError, match="expected 3, got 4"):
        tu.tree_unflatten(td, [1, 2, 3, 4])


def test_unflatten_accepts_any_iterable():
    td = tu.tree_structure([1, (2, 3)])
    assert td.unflatten(iter("abc")) == ["a", ("b", "c")]


def test_flatten_up_to():
    td = tu.tree_structure((1, {"a": 2}))
    assert td.flatten_up_to(([1, 2], {"a": (3, 4)})) == [[1, 2], (3, 4)]
    with pytest.raises(ValueError):
        td.flatten_up_to((1, {"b": 2}))
    with pytest.raises(ValueError):
        td.flatten_up_to([1, {"a": 2}])
    with pytest.raises(ValueError):
        td.flatten_up_to((1, {"a": 2}, 3))


# --- tree_map / reduce / all -------------------------------------------------------------

def test_tree_map_single_and_multiple_trees():
    tree = {"a": [1, 2], "b": (3, None)}
    assert tu.tree_map(lambda x: x * 2, tree) == {"a": [2, 4], "b": (6, None)}
    other = {"b": (30, None), "a": [10, 20]}
    assert tu.tree_map(lambda x, y, z: x + y + z, tree, other, other) == \
        {"a": [21, 42], "b": (63, None)}


def test_tree_map_rest_may_be_deeper_at_leaves():
    # ``rest`` trees need the first tree's structure only down to its leaves (as JAX).
    out = tu.tree_map(lambda x, y: (x, y), [1, 2], [(3, 4), {"k": 5}])
    assert out == [(1, (3, 4)), (2, {"k": 5})]


@pytest.mark.parametrize("first, other", [
    ([1, 2], [1, 2, 3]),                      # arity
    ([1, 2], (1, 2)),                         # list vs tuple
    ({"a": 1, "b": 2}, {"a": 1, "c": 2}),     # dict keys
    ([1, 2], Point(1, 2)),                    # namedtuple vs list
    ([1, None], [1, 2]),                      # None node vs leaf
])
def test_tree_map_structure_mismatch(first, other):
    with pytest.raises(ValueError) as info:
        tu.tree_map(lambda x, y: x, first, other)
    msg = str(info.value)  # names both structures
    assert repr(tu.tree_structure(first)) in msg
    assert repr(tu.tree_structure(other)) in msg


def test_tree_map_leaf_matches_any_subtree_including_none():
    assert tu.tree_map(lambda x, y: y, [1, 2], [1, None]) == [1, None]


def test_tree_map_namedtuple_type_mismatch():
    with pytest.raises(ValueError, match="Point"):
        tu.tree_map(lambda x, y: x, Point(1, 2), Other(1, 2))


def test_tree_map_is_leaf():
    tree = [(1, 2), (3, 4), 5]
    out = tu.tree_map(lambda t: "T" if isinstance(t, tuple) else t, tree,
                      is_leaf=lambda x: isinstance(x, tuple))
    assert out == ["T", "T", 5]
    assert tu.tree_leaves(tree, is_leaf=lambda x: isinstance(x, tuple)) == [(1, 2), (3, 4), 5]
    # is_leaf is asked about the root too.
    assert tu.tree_leaves(tree, is_leaf=lambda x: isinstance(x, list)) == [tree]


def test_tree_reduce_and_all():
    tree = [1, (2, {"a": 3})]
    assert tu.tree_reduce(lambda a, b: a + b, tree) == 6
    assert tu.tree_reduce(lambda a, b: a + b, tree, 10) == 16
    assert tu.tree_reduce(lambda a, b: a + b, [], 0) == 0
    with pytest.raises(TypeError):  # like functools.reduce on no leaves and no initializer
        tu.tree_reduce(lambda a, b: a + b, [])
    assert tu.tree_all([True, (1, {"a": True})])
    assert not tu.tree_all([True, (0, {"a": True})])
    assert tu.tree_all(None)


# --- registration ------------------------------------------------------------------------

class Box:
    def __init__(self, value, label):
        self.value, self.label = value, label

    def __eq__(self, other):
        return type(other) is Box and (self.value, self.label) == (other.value, other.label)


tu.register_pytree_node(Box, lambda b: ((b.value,), b.label),
                        lambda label, children: Box(children[0], label))


@tu.register_pytree_node_class
class Pair:
    def __init__(self, a, b, tag="t"):
        self.a, self.b, self.tag = a, b, tag

    def tree_flatten(self):
        return (self.a, self.b), self.tag

    @classmethod
    def tree_unflatten(cls, aux, children):
        return cls(*children, tag=aux)


def test_register_pytree_node():
    tree = [Box((1, 2), "L"), 3]
    leaves, td = tu.tree_flatten(tree)
    assert leaves == [1, 2, 3]
    assert td.unflatten([4, 5, 6]) == [Box((4, 5), "L"), 6]
    assert repr(td) == "PyTreeDef([CustomNode(Box[L], [(*, *)]), *])"  # str(aux), as JAX
    # aux data is part of the structure.
    assert td != tu.tree_structure([Box((1, 2), "M"), 3])
    with pytest.raises(ValueError, match="node data"):
        tu.tree_map(lambda x, y: x, Box(1, "L"), Box(1, "M"))


def test_register_pytree_node_class():
    assert isinstance(Pair, type)  # the decorator returns the class
    p = Pair(1, [2, 3], tag="q")
    leaves, td = tu.tree_flatten(p)
    assert leaves == [1, 2, 3]
    out = td.unflatten([7, 8, 9])
    assert type(out) is Pair and (out.a, out.b, out.tag) == (7, [8, 9], "q")
    out = tu.tree_map(lambda x: x + 1, p)
    assert (out.a, out.b, out.tag) == (2, [3, 4], "q")


def test_duplicate_registration_raises():
    with pytest.raises(ValueError):
        tu.register_pytree_node(Box, lambda b: ((), None), lambda a, c: Box(None, None))
    with pytest.raises(ValueError):
        tu.register_pytree_node(dict, lambda d: ((), None), lambda a, c: {})


def test_plain_dataclass_is_a_leaf():
    @dataclasses.dataclass
    class Unregistered:
        x: int

    u = Unregistered(1)
    assert tu.tree_leaves([u]) == [u]


def test_register_dataclass_explicit_fields():
    @dataclasses.dataclass
    class Params:
        w: object
        b: object
        name: str

    tu.register_dataclass(Params, data_fields=["w", "b"], meta_fields=["name"])
    p = Params(w=1, b=(2, 3), name="lin")
    leaves, td = tu.tree_flatten(p)
    assert leaves == [1, 2, 3]
    out = td.unflatten([4, 5, 6])
    assert out == Params(w=4, b=(5, 6), name="lin")
    assert td != tu.tree_structure(Params(1, (2, 3), "other"))
    assert tu.tree_map(lambda x, y: x + y, p, p) == Params(2, (4, 6), "lin")


def test_register_dataclass_infers_static_fields_and_decorates():
    @tu.register_dataclass
    @dataclasses.dataclass
    class Layer:
        w: object
        act: str = dataclasses.field(default="relu", metadata=dict(static=True))

    leaves, td = tu.tree_flatten(Layer(w=[1, 2]))
    assert leaves == [1, 2]
    assert td.unflatten([3, 4]) == Layer(w=[3, 4], act="relu")


def test_register_dataclass_rejects_incomplete_fields():
    @dataclasses.dataclass
    class C:
        a: int
        b: int

    with pytest.raises(ValueError):
        tu.register_dataclass(C, data_fields=["a"], meta_fields=[])


# --- Partial -----------------------------------------------------------------------------

def test_partial_is_a_pytree():
    def f(x, y, scale=1):
        return (x + y) * scale

    p = tu.Partial(f, 1, scale=np.float64(2.0))
    assert isinstance(p, functools.partial)
    assert p(3) == 8
    leaves, td = tu.tree_flatten(p)
    assert leaves == [1, 2.0]
    q = td.unflatten([10, 3])
    assert isinstance(q, tu.Partial) and q(1) == 33
    assert tu.tree_map(lambda x: x * 2, p)(0) == 8
    # Same function, same arguments structure: same treedef; the function is static.
    assert td == tu.tree_structure(tu.Partial(f, 5, scale=6))
    assert td != tu.tree_structure(tu.Partial(max, 5, scale=6))


def test_partial_of_partial_keeps_inner_arguments_static():
    inner = functools.partial(lambda a, b: a - b, 10)
    p = tu.Partial(inner, 3)
    assert p() == 7
    assert tu.tree_leaves(p) == [3]


# --- one-level helpers (compiler contract) ----------------------------------------------

def test_flatten_one_level():
    from astjax._src.tree_util import flatten_one_level

    assert flatten_one_level(np.zeros(2)) is None
    assert flatten_one_level(3) is None
    assert flatten_one_level((1, (2, 3))) == ([1, (2, 3)], (0, 1), None)
    assert flatten_one_level([1, 2]) == ([1, 2], (0, 1), None)
    assert flatten_one_level({"b": 1, "a": [2]}) == ([[2], 1], ("a", "b"), ("a", "b"))
    assert flatten_one_level(Point(1, 2)) == ([1, 2], ("x", "y"), Point)
    assert flatten_one_level(Box(5, "L")) == ([5], (0,), "L")
    assert flatten_one_level(None) == ([], (), None)


def test_flatten_one_level_dataclass_uses_field_names():
    from astjax._src.tree_util import flatten_one_level

    @dataclasses.dataclass
    class D:
        p: object
        q: object
        meta: str

    tu.register_dataclass(D, ["p", "q"], ["meta"])
    assert flatten_one_level(D(1, 2, "m")) == ([1, 2], ("p", "q"), ("m",))


@pytest.mark.parametrize("value", [
    (1, 2), [1, 2], {"b": 1, "a": 2}, Point(1, 2), None, Box(1, "L"),
    collections.OrderedDict(b=1, a=2), collections.defaultdict(int, b=1),
])
def test_unflatten_one_level_inverts_flatten_one_level(value):
    from astjax._src.tree_util import flatten_one_level, unflatten_one_level

    children, keys, aux = flatten_one_level(value)
    assert len(keys) == len(children)
    rebuilt = unflatten_one_level(type(value), aux, children)
    assert type(rebuilt) is type(value) and rebuilt == value


def test_unflatten_one_level_unknown_type():
    from astjax._src.tree_util import unflatten_one_level

    with pytest.raises(TypeError):
        unflatten_one_level(int, None, [])


# --- paths -------------------------------------------------------------------------------

def test_tree_flatten_with_path():
    tree = {"a": [1, Point(2, 3)], "b": Box(4, "L")}
    path_leaves, td = tu.tree_flatten_with_path(tree)
    assert td == tu.tree_structure(tree)
    assert [x for _, x in path_leaves] == [1, 2, 3, 4]
    assert [p for p, _ in path_leaves] == [
        (tu.DictKey("a"), tu.SequenceKey(0)),
        (tu.DictKey("a"), tu.SequenceKey(1), tu.GetAttrKey("x")),
        (tu.DictKey("a"), tu.SequenceKey(1), tu.GetAttrKey("y")),
        (tu.DictKey("b"), tu.FlattenedIndexKey(0)),
    ]
    assert tu.keystr(path_leaves[1][0]) == "['a'][1].x"
    # Key entries are leaves, not containers.
    assert tu.tree_leaves(path_leaves[0][0]) == [tu.DictKey("a"), tu.SequenceKey(0)]


def test_tree_map_with_path():
    tree = {"w": 1, "b": (2,)}
    out = tu.tree_map_with_path(lambda p, x, y: (tu.keystr(p), x + y), tree, tree)
    assert out == {"w": ("['w']", 2), "b": (("['b'][0]", 4),)}


# --- tree_map, tree_leaves and tree_reduce inside compiled code ------------------------------

def _sgd(params, grads, lr):
    return tu.tree_map(lambda p, g: p - lr * g, params, grads)


def _twice(tree):
    return tu.tree_map(lambda a: a * 2.0, tree)


def _sum_of_squares(params):
    return tu.tree_reduce(lambda acc, p: acc + jnp.sum(p * p), params, 0.0)


def _leaves(tree):
    return tu.tree_leaves(tree)


def _decay(tree, rate=0.9):
    return tu.tree_map(lambda a: rate * a, tree)  # a closure over a constant (a default)


def _mismatch(a, b):
    return tu.tree_map(lambda u, v: u + v, a, b)


@pytest.mark.parametrize("backend", ["python", "numba"])
def test_tree_functions_compile_inside_jit(backend):
    rng = np.random.default_rng(0)
    params = {"w": rng.normal(size=(3, 2)).astype(np.float32), "b": np.ones(2, np.float32)}
    grads = {"w": np.ones((3, 2), np.float32), "b": np.full(2, 2.0, np.float32)}
    nested = (params["w"], [params["b"], None], {"s": 1.5})
    before = astjax.config.astjax_jit_backend
    astjax.config.update("astjax_jit_backend", backend)
    try:
        for fn, args in ((_sgd, (params, grads, 0.1)), (_twice, (nested,)),
                         (_sum_of_squares, (params,)), (_leaves, (nested,)),
                         (_decay, (params,))):
            got, want = astjax.jit(fn)(*args), fn(*args)  # eagerly: the Python functions
            assert tu.tree_structure(got) == tu.tree_structure(want), fn
            for g, w in zip(tu.tree_leaves(got), tu.tree_leaves(want)):
                np.testing.assert_allclose(g, w, rtol=1e-6)
        with pytest.raises(TypeError, match="argument 3 does not have the structure"):
            astjax.jit(_mismatch)((params["b"], params["b"]), (params["b"],))
    finally:
        astjax.config.update("astjax_jit_backend", before)


def test_tree_map_inside_grad(x64):
    params = {"w": np.linspace(-1, 1, 4), "b": np.array([0.5])}
    g = astjax.grad(_sum_of_squares)(params)
    np.testing.assert_allclose(g["w"], 2 * params["w"])
    check_grads(lambda p: jnp.sum(_twice(p)["w"] ** 3), (params,), order=2)


# --- dict comprehensions inside compiled code (their keys are known from the types) ----------

def _scaled(params, lr):
    return {k: v * lr for k, v in params.items()}


def _stepped(params, grads, lr):
    return {k: params[k] - lr * grads[k] for k in params}


def _over_a_tuple(x):
    return {name: x * 2.0 for name in ("a", "b")}


def _with_a_condition(params):
    return {k: v for k, v in params.items() if k != "b"}


@pytest.mark.parametrize("backend", ["python", "numba"])
def test_dict_comprehensions_compile(backend):
    params = {"w": np.arange(3, dtype=np.float32), "b": np.ones(2, np.float32)}
    before = astjax.config.astjax_jit_backend
    astjax.config.update("astjax_jit_backend", backend)
    try:
        for fn, args in ((_scaled, (params, 2.0)), (_stepped, (params, params, 0.5)),
                         (_over_a_tuple, (params["b"],))):
            got, want = astjax.jit(fn)(*args), fn(*args)
            assert sorted(got) == sorted(want), fn
            for k in want:
                np.testing.assert_allclose(got[k], want[k])
    finally:
        astjax.config.update("astjax_jit_backend", before)


def test_dict_comprehension_gradients_and_errors(x64):
    params = {"w": np.linspace(-1, 1, 3), "b": np.array([0.5, 2.0])}
    check_grads(lambda p: jnp.sum(_scaled(p, 3.0)["w"] ** 2) + jnp.sum(_stepped(p, p, 0.1)["b"]),
                (params,), order=1)
    from astjax._src.errors import UnsupportedSyntaxError
    with pytest.raises(UnsupportedSyntaxError, match="one `for` and no `if`"):
        astjax.jit(_with_a_condition)(params)


class Scaled:
    """JAX's docs' class-method example: static fields as a dict of aux data (unhashable)."""

    def __init__(self, x, mul):
        self.x, self.mul = x, mul


tu.register_pytree_node(Scaled, lambda s: ((s.x,), {"mul": s.mul}),
                        lambda aux, children: Scaled(*children, **aux))


def _scaled_calc(s, y):
    if s.mul:
        return s.x * y
    return y


def _scaled_double(s):
    return Scaled(s.x * 2.0, s.mul)


def test_unhashable_aux_data_as_in_jax():
    # jit(f)(Scaled(2, True), 3) raised TypeError: unhashable type: 'dict'
    structure = tu.tree_structure(Scaled(1.0, True))
    assert hash(structure) == hash(tu.tree_structure(Scaled(2.0, True)))
    assert structure != tu.tree_structure(Scaled(1.0, False))
    f = astjax.jit(_scaled_calc)
    s = Scaled(2, True)
    assert f(s, 3) == 6
    assert f(Scaled(5, True), 3) == 15 and len(f.cache) == 1  # equal aux: no new compile
    s.mul = False  # the aux data changed: compiled again, as in JAX
    assert f(s, 3) == 3 and len(f.cache) == 2
    out = astjax.jit(_scaled_double)(Scaled(jnp.array([1.0, 2.0]), True))
    assert type(out) is Scaled and out.mul is True
    np.testing.assert_array_equal(out.x, [2.0, 4.0])
    g = astjax.grad(lambda s, y: jnp.sum(_scaled_calc(s, y)))(
        Scaled(jnp.array([1.0, 2.0]), True), 3.0)
    assert type(g) is Scaled and g.mul is True
    np.testing.assert_array_equal(g.x, [3.0, 3.0])
    v = astjax.vmap(_scaled_calc, in_axes=(0, None))(Scaled(jnp.arange(3.0), True), 2.0)
    np.testing.assert_array_equal(v, [0.0, 2.0, 4.0])


def _sgd_with_tree_namespace(params, grads):
    return astjax.tree.map(lambda p, g: p - 0.1 * g, params, grads)


def test_tree_namespace_as_in_jax():
    # JAX's docs use jax.tree.map / leaves / structure / transpose; astjax had no astjax.tree
    params = {"n": 5, "W": jnp.ones((2, 2)), "b": jnp.zeros(2)}
    assert astjax.tree.leaves(params) == tu.tree_leaves(params)
    assert str(astjax.tree.structure(params)) == "PyTreeDef({'W': *, 'b': *, 'n': *})"
    leaves, treedef = astjax.tree.flatten(params)
    assert astjax.tree.unflatten(treedef, leaves) is not None and treedef.num_leaves == 3
    assert astjax.tree.map(lambda x: x * 2, [[1, 2], [3]]) == [[2, 4], [6]]
    assert astjax.tree.reduce(lambda a, b: a + b, [1, (2, 3)]) == 6
    assert astjax.tree.all([True, 1]) and not astjax.tree.all([True, {"a": 0}])
    assert astjax.tree.map_with_path(lambda p, x: len(p) + x, {"a": [1, 2]}) == {"a": [3, 4]}
    # the docs' tree_transpose example, and JAX's inner_treedef=None
    steps = [dict(t=1, obs=3), dict(t=2, obs=4)]
    want = {"obs": [3, 4], "t": [1, 2]}
    outer = astjax.tree.structure([0 for _ in steps])
    assert astjax.tree.transpose(outer_treedef=outer, inner_treedef=astjax.tree.structure(
        steps[0]), pytree_to_transpose=steps) == want
    assert astjax.tree.transpose(outer, None, steps) == want
    with pytest.raises(TypeError, match="Mismatch"):
        astjax.tree.transpose(astjax.tree.structure([0, 0, 0]), outer, steps)
    # compiles inside jit as tree_util.tree_map does
    got = astjax.jit(_sgd_with_tree_namespace)({"w": jnp.ones(3), "b": 1.0},
                                               {"w": jnp.arange(3.0), "b": 2.0})
    np.testing.assert_allclose(got["w"], [1.0, 0.9, 0.8], rtol=1e-6)
    np.testing.assert_allclose(got["b"], 0.8, rtol=1e-6)


@functools.partial(tu.register_dataclass, data_fields=["w", "b"], meta_fields=["act"])
@dataclasses.dataclass
class _Dense:
    w: object
    b: object
    act: str = "relu"

    def apply(self, x):
        return self.activate(x @ self.w + self.b)

    def activate(self, y):
        if self.act == "relu":
            return jnp.maximum(y, 0.0)
        return y


class _Vec(collections.namedtuple("_Vec", ["a", "b"])):
    def dot(self, other, scale=1.0):
        return (self.a * other.a + self.b * other.b) * scale


def _dense_loss(m, x):
    return jnp.sum(m.apply(x) ** 2)


def _dense_loss_inline(m, x):
    return jnp.sum(jnp.maximum(x @ m.w + m.b, 0.0) ** 2)


def _vec_dots(v, u):
    return v.dot(u) + v.dot(u, scale=2.0)


def test_methods_of_pytree_arguments_compile(numba_backend):
    # m.apply(x) of a registered dataclass (or a namedtuple subclass's method) inside
    # compiled code raised "_Dense{...} has no method 'apply' usable here"
    rng = np.random.default_rng(1)
    m = _Dense(rng.normal(size=(2, 3)).astype(np.float32), np.float32([0.1, -0.3, 0.2]))
    x = rng.normal(size=(4, 2)).astype(np.float32)
    for backend in ("python", "numba"):
        astjax.config.update("astjax_jit_backend", backend)
        np.testing.assert_allclose(astjax.jit(_dense_loss)(m, x), _dense_loss_inline(m, x),
                                   rtol=1e-5)
    astjax.config.update("astjax_jit_backend", "python")
    got, want = astjax.grad(_dense_loss)(m, x), astjax.grad(_dense_loss_inline)(m, x)
    assert type(got) is _Dense and got.act == "relu"
    np.testing.assert_allclose(got.w, want.w, rtol=1e-5)
    np.testing.assert_allclose(got.b, want.b, rtol=1e-5)
    v, u = _Vec(np.float32(1.0), np.float32(2.0)), _Vec(np.float32(3.0), np.float32(-1.0))
    np.testing.assert_allclose(astjax.jit(_vec_dots)(v, u), 3.0)
    g = astjax.grad(_vec_dots)(v, u)
    np.testing.assert_allclose((g.a, g.b), (9.0, -3.0))


# a model's parameters read from outside the function, as JAX's closures read them
_PARAMS = {"w": np.float32([[1.0, -1.0], [0.5, 2.0], [0.0, 1.0]]), "b": np.float32([0.5, -0.5]),
           "act": "tanh", "n": 2, "scale": 0.5}
_LAYERS = [(np.float32([[1.0, 2.0], [0.0, -1.0]]), np.float32([0.1, 0.2])),
           (np.float32([[0.5], [1.5]]), np.float32([-0.3]))]
_CFG = collections.namedtuple("_CFG", ["params", "name"])(_PARAMS, "model")
_MODEL = _Dense(np.float32([[1.0, 0.0, -1.0], [2.0, 1.0, 0.5]]), np.float32([0.0, 0.1, -0.2]))


def _layer(p, x):
    y = x @ p["w"] + p["b"]
    return jnp.tanh(y) if p["act"] == "tanh" else y


def _global_dict_loss(x):
    h = _layer(_PARAMS, x) + jnp.zeros(_PARAMS["n"])  # a Python int leaf stays static
    for w, b in _LAYERS:
        h = jnp.tanh(h @ w + b)
    return jnp.sum(h) * _CFG.params["scale"] + jnp.sum(_MODEL.apply(x[:, :2]))


def _global_dict_loss_numpy(x):
    h = np.tanh(x @ _PARAMS["w"] + _PARAMS["b"])
    for w, b in _LAYERS:
        h = np.tanh(h @ w + b)
    return np.sum(h) * 0.5 + np.sum(np.maximum(x[:, :2] @ _MODEL.w + _MODEL.b, 0.0))


def test_pytrees_of_arrays_read_from_outside(numba_backend):
    # a global dict of arrays read inside jit raised "matmul(): argument b must be an
    # array, got static array(...)", a list of (w, b) likewise, and a registered
    # dataclass passed to a helper a SyntaxError or an unsupported-container error
    x = np.float32([[0.3, -0.2, 1.0], [1.5, 0.4, -0.7]])
    want = _global_dict_loss_numpy(x)
    for backend in ("numba", "python"):
        astjax.config.update("astjax_jit_backend", backend)
        np.testing.assert_allclose(astjax.jit(_global_dict_loss)(x), want, rtol=1e-5)
    check_grads(_global_dict_loss, (x,), order=2, modes=("fwd", "rev"))
    g = astjax.grad(_global_dict_loss)(x)
    eps, fd = 1e-3, np.zeros_like(x)
    for i in np.ndindex(x.shape):
        d = np.zeros_like(x, np.float64)
        d[i] = eps
        fd[i] = (_global_dict_loss_numpy(x + d) - _global_dict_loss_numpy(x - d)) / (2 * eps)
    np.testing.assert_allclose(g, fd, rtol=1e-3, atol=1e-3)
    xs = np.stack([x, -x])
    np.testing.assert_allclose(astjax.vmap(_global_dict_loss)(xs),
                               [want, _global_dict_loss_numpy(-x)], rtol=1e-5)
