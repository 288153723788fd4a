"""Namedtuples (and registered pytree classes) in transformed code and through derivatives.

Gradients are checked against finite differences and against the same function written
with a dict; the Numba backend against the python backend, on a few module-level jitted
functions shared by the tests (each Numba compile costs seconds).
"""
import collections
import dataclasses
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import astjax
import astjax.numpy as jnp
from astjax import lax
from astjax import tree_util as tu
from astjax._src.errors import TypeCheckError
from astjax.test_util import check_grads

P = collections.namedtuple("P", "w b")
Q = collections.namedtuple("Q", ["a", "n"], defaults=[3.0])

X = np.array([0.3, -0.7, 1.1], np.float32)
PARAMS = P(np.array([0.5, -1.0, 2.0], np.float32), np.float32(0.25))


def loss(p, x):
    return jnp.sum(jnp.tanh(x * p.w + p.b))


def loss_dict(d, x):
    return jnp.sum(jnp.tanh(x * d["w"] + d["b"]))


def helper(p, x):  # returns a namedtuple to its caller
    return P(b=p.b + 1.0, w=p.w * x)


def inside(p, x):
    """Construction (positional, keyword, a default), attributes, indexing, unpacking,
    _replace and a call returning a namedtuple."""
    q = helper(p, x)
    w, b = q
    r = q._replace(w=w * b)
    s = Q(r[0])
    return jnp.sum(jnp.sin(s.a * s.n + r[-1]) * p[0])


def looped(p, x):
    for _ in range(3):
        p = P(jnp.tanh(p.w * x + p.b), p.b * 1.5)
    return jnp.sum(p.w) + p.b


def branched(p, x):
    if jnp.sum(x) > 0.0:
        q = P(p.w * 2.0, p.b)
    else:
        q = P(p.w, p.b * 3.0)
    return jnp.sum(q.w * q.b)


def make(x):
    return P(x * 2.0, jnp.sum(x))


def with_aux(p, x):
    return loss(p, x), P(p.w * 2.0, p.b)


def _as_np(tree):
    return tu.tree_map(np.asarray, tree)


def _assert_trees_close(got, expected, rtol=1e-5, atol=1e-6):
    got_leaves, got_def = tu.tree_flatten(got)
    exp_leaves, exp_def = tu.tree_flatten(expected)
    assert got_def == exp_def, (got_def, exp_def)
    for g, e in zip(got_leaves, exp_leaves):
        np.testing.assert_allclose(np.asarray(g), np.asarray(e), rtol=rtol, atol=atol)


# --- derivatives -------------------------------------------------------------------------------

def test_grad_wrt_a_namedtuple_is_that_namedtuple_of_the_dict_gradient():
    g = astjax.grad(loss)(PARAMS, X)
    assert type(g) is P
    expected = astjax.grad(loss_dict)(PARAMS._asdict(), X)
    _assert_trees_close(g, P(**expected))
    _assert_trees_close(astjax.jit(astjax.grad(loss))(PARAMS, X), g)


@pytest.mark.parametrize("fn", [loss, inside, looped, branched])
def test_derivatives_through_namedtuples_match_finite_differences(x64, fn):
    p = P(np.array([0.5, -1.0, 2.0]), np.float64(0.25))
    x = np.array([0.3, -0.7, 1.1])
    check_grads(fn, (p, x), order=2, atol=1e-5, rtol=1e-5)
    g = astjax.grad(fn)(p, x)
    assert type(g) is P


def test_value_and_grad_with_a_namedtuple_aux():
    (value, aux), g = astjax.value_and_grad(with_aux, has_aux=True)(PARAMS, X)
    assert type(aux) is P and type(g) is P
    np.testing.assert_allclose(value, np.sum(np.tanh(X * PARAMS.w + PARAMS.b)), rtol=1e-6)
    _assert_trees_close(aux, P(PARAMS.w * 2, PARAMS.b))
    _assert_trees_close(g, astjax.grad(loss)(PARAMS, X))


def test_a_gradient_with_no_float_leaf_is_none():
    def f(p, x):  # a None field of the input is None in the gradient too
        return jnp.sum(p.w * x)
    g = astjax.grad(f)(P(X, None), X)
    assert type(g) is P and g.b is None
    np.testing.assert_allclose(g.w, X)


def test_jvp_and_jacobians_of_namedtuple_outputs():
    v = np.array([1.0, 2.0, -1.0], np.float32)
    out, t = astjax.jvp(make, (X,), (v,))
    assert type(out) is P and type(t) is P
    _assert_trees_close(t, P(2 * v, np.float32(v.sum())))
    for jac in (astjax.jacfwd, astjax.jacrev):
        J = jac(make)(X)
        assert type(J) is P
        _assert_trees_close(J, P(2 * np.eye(3), np.ones(3)))
    J = astjax.jacrev(loss)(PARAMS, X)  # a namedtuple input: its tree inside
    _assert_trees_close(J, astjax.grad(loss)(PARAMS, X))
    t_in = P(np.ones(3, np.float32), np.float32(1.0))
    _, t = astjax.jvp(loss, (PARAMS, X), (t_in, np.zeros(3, np.float32)))
    g = astjax.grad(loss)(PARAMS, X)
    np.testing.assert_allclose(t, g.w.sum() + g.b, rtol=1e-5)


def test_hessian_is_nested_namedtuples():
    H = astjax.hessian(loss)(PARAMS, X)
    assert type(H) is P and type(H.w) is P
    d = 1 - np.tanh(X * PARAMS.w + PARAMS.b) ** 2
    dd = -2 * np.tanh(X * PARAMS.w + PARAMS.b) * d  # second derivative of tanh
    np.testing.assert_allclose(H.w.w, np.diag(dd * X * X), rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(H.b.b, dd.sum(), rtol=1e-4)


# --- jit, vmap, lax ----------------------------------------------------------------------------

def test_jit_builds_namedtuples():
    out = astjax.jit(make)(X)
    assert type(out) is P
    _assert_trees_close(out, P(X * 2, X.sum()))
    assert "(w=" in astjax.make_source(astjax.jit(make))(X)  # built by field name
    np.testing.assert_allclose(astjax.jit(inside)(PARAMS, X), inside(PARAMS, X), rtol=1e-6)


def accumulate(x):
    s = P(0.0, 0.0)  # a namedtuple of constants is a container value, as a dict display is
    for _ in range(3):
        s = P(s.w + x, s.b + jnp.sum(x))
    return s


def test_a_namedtuple_of_constants_starts_an_accumulator():
    out = astjax.jit(accumulate)(X)
    assert type(out) is P
    _assert_trees_close(out, P(3 * X, np.float32(3 * X.sum())))
    g = astjax.grad(lambda x: jnp.sum(accumulate(x).w) + accumulate(x).b)(X)
    np.testing.assert_allclose(g, np.full(3, 6.0), rtol=1e-6)


def test_vmap_of_namedtuples():
    xs = np.stack([X, -X, 2 * X])
    out = astjax.vmap(make)(xs)
    assert type(out) is P
    _assert_trees_close(out, P(xs * 2, xs.sum(axis=1)))
    # an in_axes prefix that is itself a P, with a mapped axis other than 0
    ws = np.stack([PARAMS.w, 2 * PARAMS.w], axis=1)
    got = astjax.vmap(loss, in_axes=(P(1, None), None))(P(ws, PARAMS.b), X)
    expected = [np.sum(np.tanh(X * ws[:, k] + PARAMS.b)) for k in range(2)]
    np.testing.assert_allclose(got, expected, rtol=1e-6)
    # per-example gradients
    g = astjax.vmap(astjax.grad(loss), in_axes=(None, 0))(PARAMS, xs)
    assert type(g) is P
    _assert_trees_close(g, tu.tree_map(lambda *a: np.stack(a),
                                       *[astjax.grad(loss)(PARAMS, x) for x in xs]))
    out = astjax.vmap(branched, in_axes=(None, 0))(PARAMS, xs)
    np.testing.assert_allclose(out, [branched(PARAMS, x) for x in xs], rtol=1e-6)


def _fori(p):
    return lax.fori_loop(0, 3, lambda i, c: P(c.w * 2.0, c.b + c.w[0]), p)


def _scan_body(c, x):
    return P(c.w + x, c.b * 2.0), c.b


def _lax_loss(p, xs):
    c, ys = lax.scan(_scan_body, _fori(p), xs)
    doubled = tu.tree_map(lambda a: a * 2.0, c)
    return jnp.sum(doubled.w) + jnp.sum(ys)


def test_lax_carries_and_tree_map_of_namedtuples(x64):
    p = P(np.array([0.5, -1.0, 2.0]), np.float64(0.25))
    xs = np.ones((4, 3))
    c, ys = astjax.jit(lambda p, xs: lax.scan(_scan_body, _fori(p), xs))(p, xs)
    assert type(c) is P
    check_grads(_lax_loss, (p, xs), order=1, atol=1e-6, rtol=1e-6)
    assert type(astjax.grad(_lax_loss)(p, xs)) is P


# --- registered classes ------------------------------------------------------------------------

@tu.register_pytree_node_class
class Params:
    def __init__(self, w, b, name="p"):
        self.w, self.b, self.name = w, b, name

    def tree_flatten(self):
        return (self.w, self.b), self.name

    @classmethod
    def tree_unflatten(cls, name, children):
        return cls(*children, name=name)


class Box:
    def __init__(self, v):
        self.v = v


tu.register_pytree_node(Box, lambda b: ((b.v,), None), lambda aux, ch: Box(ch[0]))


@dataclasses.dataclass
class DC:
    w: object
    b: object


tu.register_dataclass(DC, ["w", "b"], [])


def box_loss(box, x):
    return jnp.sum(jnp.sin(box.v * x))


def identity(p, x):
    return p


def test_grad_wrt_registered_classes():
    expected = astjax.grad(loss)(PARAMS, X)
    for value in (Params(PARAMS.w, PARAMS.b, "mine"), DC(PARAMS.w, PARAMS.b)):
        for f in (astjax.grad(loss), astjax.jit(astjax.grad(loss))):
            g = f(value, X)
            assert type(g) is type(value)
            _assert_trees_close((g.w, g.b), tuple(expected))
    assert astjax.grad(loss)(Params(PARAMS.w, PARAMS.b, "mine"), X).name == "mine"
    g = astjax.grad(box_loss)(Box(PARAMS.w), X)
    assert type(g) is Box
    np.testing.assert_allclose(g.v, X * np.cos(PARAMS.w * X), rtol=1e-6)
    (_, aux), g = astjax.value_and_grad(lambda p, x: (loss(p, x), p), has_aux=True)(
        Params(PARAMS.w, PARAMS.b), X)
    assert type(aux) is Params and type(g) is Params
    out = astjax.jit(identity)(Params(PARAMS.w, PARAMS.b, "kept"), X)
    assert type(out) is Params and out.name == "kept"


def rebuilt(p, x):
    """Registered classes built in compiled code: C's __init__ runs on placeholders while
    code is generated, and its flatten function places the arguments."""
    q = Params(p.w - 0.1 * x, p.b * 2.0, name="q")
    return q, DC(w=q.b, b=x), Box(jnp.sum(q.w))


def loss_of_rebuilt(p, x):
    q, dc, box = rebuilt(p, x)
    return jnp.sum(q.w * dc.w * jnp.sin(dc.b)) + box.v


def test_registered_classes_built_in_compiled_code(x64):
    x = X.astype(np.float64) + 0.2
    p = Params(x - 0.2, x * 0.5 + 1.0)
    q, dc, box = astjax.jit(rebuilt)(p, x)
    assert type(q) is Params and q.name == "q" and type(dc) is DC and type(box) is Box
    _assert_trees_close((q.w, q.b, dc.w, dc.b, box.v),
                        (p.w - 0.1 * x, p.b * 2.0, p.b * 2.0, x, np.sum(p.w - 0.1 * x)))
    check_grads(loss_of_rebuilt, (p, x), order=2)


def test_registered_classes_built_on_numba(x64, numba_backend):
    x = X.astype(np.float64) + 0.2
    p = Params(x - 0.2, x * 0.5 + 1.0)
    for fn in (rebuilt, astjax.grad(loss_of_rebuilt)):
        jitted = astjax.jit(fn)
        got = jitted(p, x)
        assert _backend(jitted).backend == "numba"
        astjax.config.update("astjax_jit_backend", "python")
        expected = astjax.jit(fn)(p, x)
        astjax.config.update("astjax_jit_backend", "numba")
        assert tu.tree_structure(got) == tu.tree_structure(expected)
        _assert_trees_close(tu.tree_leaves(got), tu.tree_leaves(expected), rtol=1e-12)


# --- errors ------------------------------------------------------------------------------------

def missing_field(x):
    return P(x)


def unknown_field(x):
    return P(x, c=x)


def bad_replace(p):
    return p._replace(z=p.w)


def out_of_range(p):
    return p[2]


class Doubled:
    """A registered class whose __init__ computes on its argument."""

    def __init__(self, v):
        self.v = v * 2


tu.register_pytree_node(Doubled, lambda d: ((d.v,), None), lambda aux, ch: Box(ch[0]))


def computes_in_init(x):
    return Doubled(x)


def a_run_time_value_as_aux(x):
    return Params(x, x, name=x)


@pytest.mark.parametrize("fn,arg,message", [
    (missing_field, X, "P(): missing a required argument: 'b'"),
    (unknown_field, X, "P(): missing a required argument: 'b'"),
    (bad_replace, PARAMS, "P._replace(): got unexpected field names: ['z']"),
    (out_of_range, PARAMS, "tuple index 2 out of range (P has 2 fields)"),
    (computes_in_init, X, "building a Doubled (a registered pytree class) from values known "
                          "only at run time: its __init__ or flatten function raised "
                          "TypeError"),
    (a_run_time_value_as_aux, X, "Params(...) puts an argument known only at run time into "
                                 "its static (aux) data"),
])
def test_bad_code_names_the_users_line(fn, arg, message):
    with pytest.raises(TypeCheckError) as info:
        astjax.jit(fn)(arg)
    text = str(info.value)
    assert message in text
    assert f"test_namedtuple_pytrees.py:{fn.__code__.co_firstlineno + 1}:" in text


# --- the Numba backend -------------------------------------------------------------------------

def train_step(p, x):
    """grad with respect to a namedtuple, built again in compiled code."""
    value, g = astjax.value_and_grad(inside)(p, x)
    new = P(p.w - 0.1 * g.w, p[1] - 0.1 * g[1])
    return new._replace(b=new.b * 1.0), value


def per_example(p, xs):
    return astjax.vmap(astjax.grad(loss), in_axes=(None, 0))(p, xs)


_TRAIN_STEP = astjax.jit(train_step)
_PER_EXAMPLE = astjax.jit(per_example)
_REGISTERED = astjax.jit(astjax.grad(loss))


def _backend(jitted):
    (compiled,) = jitted.cache.values()
    return compiled


def test_numba_matches_python(numba_backend):
    xs = np.stack([X, -X])
    cases = [(_TRAIN_STEP, train_step, (PARAMS, X)), (_PER_EXAMPLE, per_example, (PARAMS, xs)),
             (_REGISTERED, astjax.grad(loss), (Params(PARAMS.w, PARAMS.b, "n"), X))]
    for jitted, fn, args in cases:
        got = jitted(*args)
        compiled = _backend(jitted)
        assert compiled.backend == "numba", compiled.fallback_reason
        astjax.config.update("astjax_jit_backend", "python")
        expected = astjax.jit(fn)(*args)
        astjax.config.update("astjax_jit_backend", "numba")
        if isinstance(expected, Params):
            assert type(got) is Params and got.name == "n"
            got, expected = (got.w, got.b), (expected.w, expected.b)
        _assert_trees_close(got, expected, rtol=1e-5)
    new, _ = _TRAIN_STEP(PARAMS, X)
    assert type(new) is P
    for _ in range(2):  # a namedtuple argument takes the fast path of small calls
        _TRAIN_STEP(new, X)
    assert any(key[0][0][0] is P for key in _TRAIN_STEP.fast)  # (parts, big)


# --- the source cache --------------------------------------------------------------------------

_DRIVER = textwrap.dedent("""
    import collections, json, sys
    import numpy as np
    import astjax, astjax.numpy as jnp
    from astjax._src.backends import source_cache
    P = collections.namedtuple("P", "w b")
    def loss(p, x):
        return jnp.sum(jnp.tanh(x * p.w + p.b))
    g = astjax.jit(astjax.grad(loss))(P(np.ones(3, np.float32), np.float32(0.5)),
                                      np.arange(3, dtype=np.float32))
    print(json.dumps({"g": [np.asarray(g.w).tolist(), float(g.b)],
                      "stats": source_cache.STATS}))
""")


def test_the_gradient_of_a_namedtuple_function_is_cached_across_processes(tmp_path):
    env = dict(os.environ, ASTJAX_CACHE_DIR=str(tmp_path / "cache"),
               ASTJAX_JIT_BACKEND="python", PYTHONDONTWRITEBYTECODE="1",
               PYTHONPATH=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    (tmp_path / "driver.py").write_text(_DRIVER)
    runs = [json.loads(subprocess.run([sys.executable, str(tmp_path / "driver.py")], env=env,
                                      capture_output=True, text=True, check=True,
                                      cwd=tmp_path).stdout.splitlines()[-1]) for _ in range(2)]
    assert runs[0]["stats"]["stores"] == 1
    assert runs[1]["stats"]["hits"] == 1 and runs[1]["stats"]["misses"] == 0
    assert runs[0]["g"] == runs[1]["g"]



@dataclasses.dataclass
class Scaled:
    w: object
    n: int = 2
    kind: str = "tanh"


tu.register_dataclass(Scaled, data_fields=["w"], meta_fields=["n", "kind"])


def scaled_loss(p, x):
    y = p.w * x * p.n  # p.n and p.kind are static (meta) data: known when code is generated
    if p.kind == "tanh":
        y = jnp.tanh(y)
    return jnp.sum(y)


def test_meta_fields_of_registered_dataclasses_read_in_compiled_code():
    p, x = Scaled(np.float32(0.5), 3, "tanh"), np.arange(3, dtype=np.float32)
    assert float(astjax.jit(scaled_loss)(p, x)) == pytest.approx(float(scaled_loss(p, x)))
    g = astjax.grad(scaled_loss)(p, x)
    assert type(g) is Scaled and g.n == 3
    np.testing.assert_allclose(g.w, np.sum(3 * x / np.cosh(1.5 * x) ** 2), rtol=1e-5)
    linear = Scaled(np.float32(0.5), 2, "linear")
    assert float(astjax.jit(scaled_loss)(linear, x)) == pytest.approx(float(np.sum(x)))
