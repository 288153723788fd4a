"""The source pipeline end to end: each program compiled (python backend) against
running the very same Python function on NumPy values."""
import enum
import functools

import numpy as np
import pytest

import astjax
from astjax._src.frontend.pipeline import to_anf
from astjax._src.backends.source import unparse

from . import programs as P

rng = np.random.default_rng(0)
X = rng.standard_normal(5).astype(np.float32)
Y = rng.standard_normal(5).astype(np.float32)


def check(fn, *args, rtol=1e-6):
    import copy
    expected = fn(*copy.deepcopy(args))  # the reference may write into its arguments
    got = astjax.jit(fn)(*args)
    _assert_tree_close(got, expected, rtol)
    return got


def _assert_tree_close(got, expected, rtol):
    if isinstance(expected, dict):
        assert set(got) == set(expected)
        for k in expected:
            _assert_tree_close(got[k], expected[k], rtol)
    elif isinstance(expected, (tuple, list)):
        assert type(got) is type(expected) and len(got) == len(expected)
        for g, e in zip(got, expected):
            _assert_tree_close(g, e, rtol)
    else:
        np.testing.assert_allclose(np.asarray(got), np.asarray(expected), rtol=rtol, atol=1e-6)


CASES = [
    (P.arith, (X, Y)),
    (P.aug_assign, (X,)),
    (P.conditional_expr, (X, 1)), (P.conditional_expr, (X, -1)),
    (P.early_return, (X, 2)), (P.early_return, (X, 1)), (P.early_return, (X, 0)),
    (P.for_range, (X, 4)), (P.for_range, (X, 0)),
    (P.for_range_step, (X, 7)),
    (P.while_loop, (X, 3)),
    (P.break_continue, (X, 8)), (P.break_continue, (X, 3)),
    (P.return_in_loop, (X, 5)), (P.return_in_loop, (X, 2)),
    (P.tuple_unpack, (X, Y)), (P.starred_unpack, (X, Y)),
    (P.enumerate_zip, (X, Y)),
    (P.iterate_array, (X.reshape(5, 1),)),
    (P.comprehension, (X, 4)),
    (P.shapes, (X,)), (P.loop_in_a_branch_never_taken, (X,)),
    (P.calls_helper, (X,)),
    (P.recursion, (X, 3)),
    (P.uses_globals, (np.ones(3, np.float32),)),
    (P.lambda_fn, (X, Y)),
    (P.logical, (X, 1, -1)), (P.logical, (X, -1, -1)),
    (P.chained_compare, (0.5,)), (P.chained_compare, (1.5,)),
    (P.shifts, (np.arange(5, dtype=np.int32), 2)),
    (P.loop_else, (X, 5)), (P.loop_else, (X, 2)), (P.loop_else, (X, 0)),
    (P.reversed_loops, (X, 5)), (P.reversed_loops, (X, 1)), (P.reversed_loops, (X, 0)),
]


@pytest.mark.parametrize("fn,args", CASES)
def test_program_matches_python(fn, args):
    check(fn, *args)


def test_closure():
    check(P.make_closure(4.0), X)


def test_pytree_arguments_and_outputs():
    params = {"w": np.float32(2.0), "b": np.ones(5, np.float32)}
    check(P.dict_and_tuple, params, (X, Y))


def test_dict_items_follow_sorted_keys():
    """As in JAX, a dict's entries come in sorted key order (Python would use insertion)."""
    params = {"b": np.float32(2.0), "a": np.ones(5, np.float32)}
    out, diff, keys = astjax.jit(P.dict_items)(params, X)
    np.testing.assert_allclose(out, X - 2.0, rtol=1e-6)
    np.testing.assert_allclose(diff, np.ones(5) - 2.0)
    assert keys == "ab"


@pytest.mark.filterwarnings("error::RuntimeWarning")
def test_integer_overflow_wraps_silently_as_in_jax():
    k = np.array([2**32 - 1, 1], np.uint32)
    assert int(astjax.jit(P.add_words)(k)) == 0
    assert int(astjax.numpy.add(np.uint32(2**32 - 1), np.uint32(1))) == 0


def test_dtypes_follow_jax():
    i = np.arange(4, dtype=np.int32)
    f = np.ones(4, np.float32)
    a, b, c, d = astjax.jit(P.promotion)(i, f)
    assert (a.dtype, b.dtype, c.dtype, d.dtype) == (np.float32, np.float32, np.int32, np.float32)
    np.testing.assert_allclose(b, i * 2.5)
    x, y = astjax.jit(P.python_scalars)(f)
    assert x.dtype == np.float32 and y.dtype == np.float32
    np.testing.assert_allclose(y, np.sin(1.0) + 6.0, rtol=1e-6)


def test_float64_input_is_narrowed_with_one_warning():
    from astjax._src import dtypes
    dtypes._warned.clear()
    with pytest.warns(UserWarning, match="jax_enable_x64"):
        out = astjax.jit(P.arith)(X.astype(np.float64), Y.astype(np.float64))
    assert out.dtype == np.float32


def test_x64_switch_keeps_float64():
    astjax.config.update("jax_enable_x64", True)
    try:
        out = astjax.jit(P.arith)(X.astype(np.float64), Y.astype(np.float64))
        assert out.dtype == np.float64
    finally:
        astjax.config.update("jax_enable_x64", False)


def test_new_size_reuses_generated_code():
    f = astjax.jit(P.arith)
    f(X, Y)
    f(np.ones(17, np.float32), np.ones(17, np.float32))
    f(np.ones(1000, np.float32), np.ones(1000, np.float32))
    assert len(f.cache) == 1
    f(np.ones(1, np.float32), np.ones(1, np.float32))  # a size-1 dim is part of the key
    assert len(f.cache) == 2


def test_anf_statements_are_single_operations():
    """Every assignment's value is one operation whose operands are names or constants."""
    import gast
    _, fdef = to_anf(P.arith)
    for node in gast.walk(fdef):
        if isinstance(node, gast.Assign):
            for child in gast.iter_child_nodes(node.value):
                assert isinstance(child, (gast.Name, gast.Constant, gast.operator,
                                          gast.expr_context, gast.keyword, gast.Attribute)), \
                    unparse(node)


def test_loops_stay_loops():
    src = astjax.make_source(P.for_range)(X, 1000)
    assert "for i in range(" in src
    assert src.count("acc = ") < 10


def test_generated_source_names_user_lines():
    src = astjax.make_source(P.arith)(X, Y)
    line = P.arith.__code__.co_firstlineno + 1
    assert f"# programs.py:{line}" in src


def test_generated_module_is_a_file_in_the_cache(tmp_path, monkeypatch):
    import os
    import stat
    import sys
    monkeypatch.setenv("ASTJAX_CACHE_DIR", str(tmp_path))
    f = astjax.jit(P.make_closure(123.25))  # a constant no other test uses: new source
    f(X)
    files = list((tmp_path / "src").glob("inner_*.py"))
    assert len(files) == 1
    assert stat.S_IMODE(os.stat(tmp_path / "src").st_mode) & 0o077 == 0
    module = sys.modules[f.cache[next(iter(f.cache))].entry.__module__]
    assert module.__file__ == str(files[0])


def _scaler(w):
    def scale(x):
        return x * w
    return scale


@pytest.mark.parametrize("backend", ["python", "numba"])
def test_same_source_with_other_captured_values_and_lambdas_on_one_line(backend):
    """Two closures print the same code over different arrays: each keeps its own. Two
    lambdas on one line are told apart by column."""
    astjax.config.update("astjax_jit_backend", backend)
    try:
        first, second = astjax.jit(_scaler(np.float32([1, 2]))), \
            astjax.jit(_scaler(np.float32([3, 4])))
        add, double = astjax.jit(lambda x: x + 1), astjax.jit(lambda x: x * 2)
        ones = np.ones(2, np.float32)
        np.testing.assert_array_equal(np.asarray(first(ones)), [1, 2])
        np.testing.assert_array_equal(np.asarray(second(ones)), [3, 4])
        assert float(add(np.float32(3))) == 4.0 and float(double(np.float32(3))) == 6.0
    finally:
        astjax.config.update("astjax_jit_backend", "python")


class _Affine:
    """JAX's docs jit methods in a class body (the sharp bits, 'jax.jit with class
    methods'): a transformed function there binds ``self`` as a plain function does."""

    def __init__(self, w, mul=True):
        self.w, self.mul = w, mul

    @astjax.jit
    def calc(self, y):
        if self.mul:
            return self.w * y
        return y

    def loss(self, x):
        return astjax.numpy.sum(self.w * x ** 2)

    dloss = astjax.grad(loss, argnums=1)
    losses = astjax.vmap(loss, in_axes=(None, 0))


astjax.tree_util.register_pytree_node(_Affine, lambda a: ((a.w,), a.mul),
                                      lambda mul, children: _Affine(children[0], mul))


class _Hashed:
    def __init__(self, w, mul):
        self.w, self.mul = w, mul

    def calc(self, y):
        return self.w * y if self.mul else y

    def __hash__(self):
        return hash((self.w, self.mul))

    def __eq__(self, other):
        return isinstance(other, _Hashed) and (self.w, self.mul) == (other.w, other.mul)

    calc = astjax.jit(calc, static_argnums=0)


def test_transformed_functions_bind_as_methods():
    # c.calc(3) raised "calc(): missing a required argument: 'y'"
    a = _Affine(np.float32(2.0))
    assert a.calc(3.0) == 6.0 and _Affine.calc(a, 3.0) == 6.0
    a.mul = False
    assert a.calc(3.0) == 3.0
    a = _Affine(np.array([1.0, 2.0], np.float32))
    np.testing.assert_array_equal(a.dloss(np.array([3.0, 4.0], np.float32)), [6.0, 16.0])
    np.testing.assert_array_equal(a.losses(np.ones((3, 2), np.float32)), [3.0, 3.0, 3.0])
    assert _Hashed(2, True).calc(3) == 6 and _Hashed(2, False).calc(y=3) == 3


def _mlp_starred(params, x):
    *hidden, last = params  # JAX's pytree tutorial
    for layer in hidden:
        x = astjax.nn.relu(x @ layer["w"] + layer["b"])
    return astjax.numpy.sum(x @ last["w"] + last["b"])


def _mlp_indexed(params, x):
    for layer in params[:-1]:
        x = astjax.nn.relu(x @ layer["w"] + layer["b"])
    return astjax.numpy.sum(x @ params[-1]["w"] + params[-1]["b"])


def test_starred_assignment_of_a_pytree_list():
    # *hidden, last = params raised 'astjax cannot compile starred expressions'
    params = [{"w": rng.standard_normal((m, n)).astype(np.float32),
               "b": rng.standard_normal(n).astype(np.float32)} for m, n in [(1, 4), (4, 4), (4, 1)]]
    x = rng.standard_normal((3, 1)).astype(np.float32)
    np.testing.assert_allclose(astjax.jit(_mlp_starred)(params, x), _mlp_indexed(params, x),
                               rtol=1e-6)
    got, want = astjax.grad(_mlp_starred)(params, x), astjax.grad(_mlp_indexed)(params, x)
    for g, w in zip(astjax.tree_util.tree_leaves(got), astjax.tree_util.tree_leaves(want)):
        np.testing.assert_allclose(g, w, rtol=1e-6)


def _scaled_loss(params, x, *, scale=1.0):
    return scale * astjax.numpy.sum(params["w"] * x ** 2) + params["b"]


def _uses_partials(x):
    return functools.partial(_scaled_loss, scale=3.0)({"w": x, "b": 1.0}, x) + \
        functools.partial(astjax.numpy.sum, axis=0)(x)


def test_partial_functions_transform_and_compile():
    # jit(partial(f, ...)) raised AttributeError: 'functools.partial' object has no
    # attribute '__name__'; a partial called in compiled code was a TypeCheckError
    params = {"w": np.array([1.0, 2.0, 3.0], np.float32), "b": np.float32(0.5)}
    x = np.array([1.0, -1.0, 2.0], np.float32)
    loss = functools.partial(_scaled_loss, params, scale=2.0)
    np.testing.assert_allclose(astjax.jit(loss)(x), 2 * (1 + 2 + 12) + 0.5, rtol=1e-6)
    np.testing.assert_allclose(astjax.jit(loss)(x, scale=1.0), 15.5, rtol=1e-6)  # overridden
    np.testing.assert_allclose(astjax.grad(loss)(x), 2 * 2 * params["w"] * x, rtol=1e-6)
    g = astjax.grad(functools.partial(_scaled_loss, x=x))(params)  # bound by keyword
    np.testing.assert_allclose(g["w"], x ** 2, rtol=1e-6)
    np.testing.assert_allclose(g["b"], 1.0)
    np.testing.assert_allclose(astjax.vmap(loss)(np.stack([x, 2 * x])), [30.5, 120.5],
                               rtol=1e-6)
    np.testing.assert_allclose(astjax.jit(functools.partial(astjax.numpy.sum, axis=1))(
        np.ones((2, 3), np.float32)), [3.0, 3.0])
    np.testing.assert_allclose(astjax.jit(_uses_partials)(x), 3 * 8 + 1 + 2, rtol=1e-6)


class _Model:
    """A plain object (not a pytree) whose methods are jitted bound: self is a constant,
    as in JAX, and its array attributes are captured."""

    def __init__(self):
        self.w = np.array([1.0, -2.0, 3.0], np.float32)
        self.scale = 2.0

    def apply(self, x):
        return astjax.numpy.sum(self.w * x) * self.scale

    def twice(self, x, k=2.0):
        return self.apply(x) * k

    def count(self, n):  # "Stateful computations": CounterV2.count
        return n + 1, n + 1


_MODEL = _Model()


def _calls_a_bound_method(x):
    return _MODEL.twice(x, 3.0) + 1.0


def test_bound_methods_transform_and_compile():
    # jit(counter.count)(0) raised "count() takes 2 arguments, got 1"; a bound method
    # called in compiled code on run-time values was a TypeCheckError
    x = np.array([1.0, 1.0, 2.0], np.float32)
    assert astjax.jit(_MODEL.count)(0) == (1, 1)
    np.testing.assert_allclose(astjax.jit(_MODEL.apply)(x), 10.0)
    np.testing.assert_allclose(astjax.jit(_MODEL.twice)(x), 20.0)  # self.apply(x) inside
    np.testing.assert_allclose(astjax.grad(_MODEL.apply)(x), 2 * _MODEL.w)
    np.testing.assert_allclose(astjax.vmap(_MODEL.apply)(np.stack([x, -x])), [10.0, -10.0])
    np.testing.assert_allclose(astjax.jit(_calls_a_bound_method)(x), 31.0)
    np.testing.assert_allclose(astjax.grad(_calls_a_bound_method)(x), 6 * _MODEL.w)


def _chain_compose(funs):  # JAX's "Gradient checkpointing" page
    def f(x):
        for fun in funs:
            x = fun(x)
        return x
    return f


def _enumerated_functions(x):
    out = []
    for k, fun in enumerate((astjax.numpy.sin, astjax.numpy.exp)):
        out.append(fun(x) * (k + 1))
    return astjax.numpy.stack(out)


def _mixed_tuple(x):
    acc = 0.0
    for v in (x, (x, 2.0 * x), 3.0):
        acc = acc + astjax.numpy.sum(astjax.numpy.asarray(v))
    return acc


def _breaks_out(funs, x):
    for fun in funs:
        x = fun(x)
        if x > 0:
            break
    return x


_WEIGHTS = {"even": 2.0, "odd": 3.0}


def _key_by_parity(x, p):  # a constant chosen per trip, as in The Sharp Bits' state dict
    acc = 0.0
    for i in range(5):
        acc = acc + x * p["even" if i % 2 == 0 else "odd"]
    return acc


def _key_by_value(x):
    for i in range(3):
        y = "a" if x > 0 else "b"
    return x


def test_a_branch_choosing_constants_by_trip_unrolls_its_loop():
    # 'even' if i % 2 == 0 else 'odd' with i a run-time counter: "variable 't0' is static
    # 'even' on one path and static 'odd' on another"; JAX's unrolled loop knows i
    np.testing.assert_allclose(astjax.jit(_key_by_parity)(1.5, _WEIGHTS), 1.5 * 12)
    np.testing.assert_allclose(astjax.grad(_key_by_parity)(1.5, _WEIGHTS), 12.0)
    g = astjax.grad(_key_by_parity, argnums=1)(1.5, _WEIGHTS)
    np.testing.assert_allclose([g["even"], g["odd"]], [4.5, 3.0])
    # a condition on a value known only at run time stays the located error
    with pytest.raises(astjax._src.errors.TypeCheckError, match="static 'a' on one path"):
        astjax.jit(_key_by_value)(1.0)


def test_loops_over_constants_of_different_kinds_unroll():
    # `for fun in funs` over a list of functions indexed the list with the trip counter, a
    # run-time value: "cannot index static [<op sin>, ...] with int32" under grad and jit
    jnp = astjax.numpy
    f = _chain_compose([jnp.sin] * 4)
    want, d = 0.7, 1.0
    for _ in range(4):
        d, want = d * np.cos(want), np.sin(want)
    for g in (f, astjax.jit(f)):
        np.testing.assert_allclose(g(0.7), want, rtol=1e-6)
    for g in (astjax.grad(f), astjax.jit(astjax.grad(f))):
        np.testing.assert_allclose(g(0.7), d, rtol=1e-6)
    mixed = _chain_compose([jnp.sin, lambda x: x * 2.0, jnp.tanh])
    x = np.linspace(-1.0, 1.0, 3, dtype=np.float32)
    np.testing.assert_allclose(astjax.vmap(mixed)(x), np.tanh(2 * np.sin(x)), rtol=1e-6)
    np.testing.assert_allclose(astjax.jit(mixed)(x), np.tanh(2 * np.sin(x)), rtol=1e-6)
    np.testing.assert_allclose(astjax.jit(_chain_compose([]))(x), x)
    np.testing.assert_allclose(astjax.jit(_enumerated_functions)(0.5),
                               [np.sin(0.5), 2 * np.exp(0.5)], rtol=1e-6)
    np.testing.assert_allclose(astjax.jacrev(_enumerated_functions)(0.5),
                               [np.cos(0.5), 2 * np.exp(0.5)], rtol=1e-6)
    v = np.float32([1.0, 2.0])
    np.testing.assert_allclose(astjax.jit(_mixed_tuple)(v), 3 + 9 + 3)
    # a loop with a break of its own is not unrolled: still the located error
    with pytest.raises(astjax._src.errors.TypeCheckError, match="cannot index static"):
        astjax.jit(_breaks_out, static_argnums=0)((jnp.sin, jnp.cos), 0.5)


def _pure_uses_internal_state(x):  # The Sharp Bits, "Pure functions"
    state = dict(even=0, odd=0)
    for i in range(10):
        state["even" if i % 2 == 0 else "odd"] += x
    return state["even"] + state["odd"]


def _builds_a_dict(x):
    d = {}
    d["w"] = x * 2
    d["b"] = x + 1
    d["w"] = d["w"] * d["b"]
    return d


def _keyed_at_run_time(x, k):
    d = {0: x, 1: x}
    d[k] = x * 2
    return d


def test_dict_item_assignment():
    # d[k] = v on a dict compiled as d.at[k].set(v), which took arrays only: ".at[] needs
    # an array, got dict{...}" (so did The Sharp Bits' state dict under jit)
    np.testing.assert_allclose(astjax.jit(_pure_uses_internal_state)(5.0), 50.0)
    np.testing.assert_allclose(astjax.grad(_pure_uses_internal_state)(5.0), 10.0)
    out = astjax.jit(_builds_a_dict)(3.0)
    assert sorted(out) == ["b", "w"]
    np.testing.assert_allclose([out["w"], out["b"]], [24.0, 4.0])
    jac = astjax.jacrev(_builds_a_dict)(3.0)
    np.testing.assert_allclose([jac["w"], jac["b"]], [14.0, 1.0])  # d(2x(x+1))/dx = 4x + 2
    x = np.float32([0.0, 1.0, 2.0])
    out = astjax.vmap(_builds_a_dict)(x)
    np.testing.assert_allclose(out["w"], 2 * x * (x + 1))
    with pytest.raises(astjax._src.errors.TypeCheckError, match="key must be a constant"):
        astjax.jit(_keyed_at_run_time)(1.0, 1)
    np.testing.assert_allclose(astjax.jit(_keyed_at_run_time, static_argnums=1)(1.0, 1)[1], 2.0)


def test_a_function_is_typed_once_unless_a_call_reaches_it_while_typing(monkeypatch):
    """Typing is redone only where a recursive call read the still-unknown return type:
    every function was typed twice (the first result never equals UNKNOWN), which doubled
    the typing of each generated derivative under hessian."""
    import collections

    from astjax._src.ir import infer
    counts = collections.Counter()
    run = infer.FunctionTyper.run

    def counting(self):
        counts[self.spec.name] += 1
        return run(self)
    monkeypatch.setattr(infer.FunctionTyper, "run", counting)
    monkeypatch.setenv("ASTJAX_SOURCE_CACHE", "0")  # generate, do not load
    astjax.make_source(P.calls_helper)(X)
    assert counts and set(counts.values()) == {1}, counts
    counts.clear()
    n = np.int32(3)  # a run-time trip count: _countdown calls itself at its own types
    np.testing.assert_allclose(astjax.jit(P.recursion)(X, n), P.recursion(X, 3), rtol=1e-6)
    assert counts["_countdown"] == 2 and counts["recursion"] == 1, counts


def test_copy_tree_is_deepcopy_of_an_ast():
    import copy

    import gast

    from astjax._src.ir import anno
    fdef = gast.parse("def f(x):\n    y = [x, (1, 'a')]\n    return y[0] + 2.5\n").body[0]
    shared = fdef.body[1].value
    fdef.body.append(gast.Expr(value=shared))  # one node twice: copied once, as deepcopy does
    anno.set_(shared, "type", [1, 2])
    got, want = anno.copy_tree(fdef), copy.deepcopy(fdef)
    assert gast.dump(got, include_attributes=True) == gast.dump(want, include_attributes=True)
    assert got.body[1].value is got.body[2].value and got.body[1].value is not shared
    assert anno.get(got.body[1].value, "type") == [1, 2]
    assert anno.get(got.body[1].value, "type") is not anno.get(shared, "type")


def test_isinstance_tells_a_list_from_a_tuple():
    def kinds(x):
        return (isinstance([x], tuple), isinstance((x,), tuple), isinstance([x], list),
                isinstance((x, x), list), isinstance([x, 1.0], (tuple, list)))
    assert astjax.jit(kinds)(X) == kinds(X) == (False, True, True, False, True)


_TABLE = np.linspace(0.0, 1.0, 6).reshape(2, 3)  # float64, as NumPy code has it


def _uses_computed_constants(x):
    w = _TABLE.astype(np.float32)  # a method of a captured array, run while generating
    return np.sum(np.tanh(w @ x) * np.float32(_TABLE.sum()))


@pytest.mark.parametrize("backend", ["python", "numba"])
def test_arrays_computed_from_constants_are_constants(backend, request):
    """``w.astype(np.float32)`` of an array from outside is computed while the code is
    generated; the result is a constant array of the program, under every transform
    (it was a static value that add/matmul/asarray refused)."""
    if backend == "numba":
        request.getfixturevalue("numba_backend")
    x = np.float32([0.5, -1.0, 2.0])
    jitted = astjax.jit(_uses_computed_constants)
    np.testing.assert_allclose(jitted(x), _uses_computed_constants(x), rtol=1e-6)
    assert jitted.compiled_for((x,), {})[0].backend == backend
    w, s = _TABLE.astype(np.float32), np.float32(_TABLE.sum())
    want = w.T @ ((1 - np.tanh(w @ x) ** 2) * s)
    np.testing.assert_allclose(astjax.jit(astjax.grad(_uses_computed_constants))(x), want,
                               rtol=1e-5)
    xs = np.stack([x, 2 * x])
    np.testing.assert_allclose(astjax.vmap(_uses_computed_constants)(xs),
                               [_uses_computed_constants(v) for v in xs], rtol=1e-6)


class _Mode(enum.IntEnum):
    DOUBLE = 1
    TRIPLE = 2


def _scaled_by_mode(x, mode):
    if mode == _Mode.DOUBLE:
        return x * 2
    return x * 3


def _uses_enum_constants(x):
    return _scaled_by_mode(x, _Mode.TRIPLE) - _scaled_by_mode(x, _Mode.DOUBLE)


@pytest.mark.parametrize("backend", ["python", "numba"])
def test_enum_constants_passed_to_callees(backend, request):
    # an IntEnum member passed on was printed as its repr, <_Mode.TRIPLE: 2>: SyntaxError
    if backend == "numba":
        request.getfixturevalue("numba_backend")
    jitted = astjax.jit(_uses_enum_constants)
    np.testing.assert_array_equal(jitted(X), _uses_enum_constants(X))
    assert jitted.compiled_for((X,), {})[0].backend == backend


def _non_finite_complex_constants(z):
    return np.where(np.abs(z) > 1, z, complex(np.nan, np.nan)) + complex(0, np.inf)


@pytest.mark.parametrize("backend", ["python", "numba"])
def test_non_finite_complex_constants(backend, request):
    # complex(nan, nan) was printed as its repr, (nan+nanj): NameError 'nan'
    if backend == "numba":
        request.getfixturevalue("numba_backend")
    z = np.complex64([2, 0.5])
    jitted = astjax.jit(_non_finite_complex_constants)
    got = np.asarray(jitted(z))
    assert jitted.compiled_for((z,), {})[0].backend == backend
    assert got.dtype == np.complex64 and np.isinf(got[0].imag) and np.isnan(got[1])
    if backend == "python":  # vmap writes the constant into the batched function's source
        got = np.asarray(astjax.vmap(_non_finite_complex_constants)(z[:, None]))
        assert np.isinf(got[0, 0].imag) and np.isnan(got[1, 0])


def test_transforms_of_numpy_functions_use_their_astjax_counterparts():
    # vmap(np.sum) raised "_wrapreduction() takes **kwargs, which astjax cannot compile",
    # grad(np.sin) NoSourceError: a NumPy function is the jnp function it stands for, as
    # it is inside compiled code
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_array_equal(astjax.vmap(np.sum)(x), x.sum(axis=1))
    np.testing.assert_allclose(astjax.grad(np.sin)(1.0), np.cos(1.0), rtol=1e-6)
    np.testing.assert_allclose(astjax.jit(np.tanh)(x), np.tanh(x), rtol=1e-6)
    np.testing.assert_array_equal(astjax.vmap(np.sort)(x[:, ::-1]), x)
