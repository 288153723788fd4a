"""VJP rules of the shape ops, checked eagerly against central differences of the op
(float64), for float32 dtypes, for a zero (Python 0.0) cotangent, and through the
reverse-mode transform (compiled, to second order).

``check_rule`` and friends are shared with test_vjp_linalg and test_vjp_indexing."""
import numpy as np
import pytest

import astjax
import astjax.numpy as jnp
from astjax._src.ad import vjp_indexing, vjp_linalg, vjp_shape  # noqa: F401  (registers)
from astjax._src.ad.adops import unbroadcast
from astjax._src.ops.registry import REGISTRY
from astjax.test_util import check_grads

EPS = 1e-6


# --- shared checks --------------------------------------------------------------------------------

def rand(shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def _leaves(value):
    return list(value) if isinstance(value, (tuple, list)) else [value]


def _arrays(value, dtype):
    """Float NumPy leaves as Arrays of ``dtype`` (Python numbers stay as they are)."""
    if isinstance(value, (tuple, list)):
        return type(value)(_arrays(v, dtype) for v in value)
    if isinstance(value, (np.ndarray, np.floating)) and value.dtype.kind == "f":
        return jnp.asarray(np.asarray(value, dtype))
    return value


def _inner(a, b):
    return sum(float(np.sum(np.asarray(x, np.float64) * np.asarray(y, np.float64)))
               for x, y in zip(_leaves(a), _leaves(b)))


def _shifted(value, direction, s):
    if isinstance(value, (tuple, list)):
        return type(value)(_shifted(v, d, s) for v, d in zip(value, direction))
    return value + s * direction


def _direction(value, rng):
    if isinstance(value, (tuple, list)):
        return type(value)(_direction(v, rng) for v in value)
    if isinstance(value, float):
        return float(rng.standard_normal())
    return jnp.asarray(rng.standard_normal(np.shape(value)))


def _call(op, operands, params):
    args, kwargs = op.arrange({**operands, **params})
    return op(*args, **kwargs)


def _apply_rule(op, operands, params, z, g):
    cts = op.rules["vjp"](z, *[operands[n] for n in op.operands], g, **params)
    assert isinstance(cts, tuple) and len(cts) == len(op.operands)
    return cts


def check_rule(name, *args, broadcasting=(), seed=0, rtol=1e-6, **params):
    """The rule of op ``name`` at ``args``/``params`` against central differences.

    Run under the ``x64`` fixture. For each operand: <g, (op(x + eps v) - op(x - eps v))
    / 2 eps> against <unbroadcast(ct, x), v>. Cotangents must have their operand's exact
    shape, except operands named in ``broadcasting`` (the transform unbroadcasts those).
    Returns the cotangents.
    """
    op = REGISTRY[name]
    operands, params = op.bind(args, params)
    operands = {k: _arrays(v, np.float64) for k, v in operands.items()}
    rng = np.random.default_rng(seed)
    z = _call(op, operands, params)
    g = (tuple(jnp.asarray(rng.standard_normal(np.shape(e))) for e in z)
         if isinstance(z, (tuple, list)) else jnp.asarray(rng.standard_normal(np.shape(z))))
    cts = _apply_rule(op, operands, params, z, g)
    for name_k, ct in zip(op.operands, cts):
        x = operands[name_k]
        v = _direction(x, rng)
        plus = _call(op, {**operands, name_k: _shifted(x, v, EPS)}, params)
        minus = _call(op, {**operands, name_k: _shifted(x, v, -EPS)}, params)
        numeric = (_inner(g, plus) - _inner(g, minus)) / (2 * EPS)
        ct_leaves, x_leaves = _leaves(ct), _leaves(x)
        assert len(ct_leaves) == len(x_leaves)
        for c, leaf in zip(ct_leaves, x_leaves):
            if name_k not in broadcasting:
                assert np.shape(c) == np.shape(leaf), (name_k, np.shape(c), np.shape(leaf))
        analytic = _inner([unbroadcast(c, leaf) for c, leaf in zip(ct_leaves, x_leaves)],
                          _leaves(v))
        scale = max(1.0, abs(numeric))
        assert abs(analytic - numeric) <= rtol * scale, (name, name_k, analytic, numeric)
    return cts


def check_float32(name, *args, **params):
    """Float32 operands and cotangent give float32 cotangents (default, 32-bit mode)."""
    op = REGISTRY[name]
    operands, params = op.bind(args, params)
    operands = {k: _arrays(v, np.float32) for k, v in operands.items()}
    z = _call(op, operands, params)
    g = (tuple(jnp.ones_like(e) for e in z) if isinstance(z, (tuple, list))
         else jnp.ones_like(z))
    for name_k, ct in zip(op.operands, _apply_rule(op, operands, params, z, g)):
        for c, leaf in zip(_leaves(ct), _leaves(operands[name_k])):
            if isinstance(leaf, float):
                continue
            assert c.dtype == np.float32, (name, name_k, c.dtype)


def check_zero_cotangent(name, *args, **params):
    """A Python 0.0 cotangent (for a sequence result: every element 0.0) gives zeros of
    each operand's shape."""
    op = REGISTRY[name]
    operands, params = op.bind(args, params)
    operands = {k: _arrays(v, np.float64) for k, v in operands.items()}
    z = _call(op, operands, params)
    g = tuple(0.0 for _ in z) if isinstance(z, (tuple, list)) else 0.0
    for name_k, ct in zip(op.operands, _apply_rule(op, operands, params, z, g)):
        for c, leaf in zip(_leaves(ct), _leaves(operands[name_k])):
            c = unbroadcast(c, leaf)
            assert np.shape(c) == np.shape(leaf)
            assert not np.any(np.asarray(c))


def check_all(name, *args, broadcasting=(), **params):
    """check_rule in float64, then the float32 and zero-cotangent checks."""
    before = astjax.config.jax_enable_x64
    try:
        astjax.config.update("jax_enable_x64", True)
        check_rule(name, *args, broadcasting=broadcasting, **params)
        check_zero_cotangent(name, *args, **params)
        astjax.config.update("jax_enable_x64", False)
        check_float32(name, *args, **params)
    finally:
        astjax.config.update("jax_enable_x64", before)


def grad_check(fn, *args, order=2):
    """Through the reverse-mode transform: ``sum(sin(fn(*args)))`` (sin so that the second
    derivative goes through the rule's own derivative), float64."""
    before = astjax.config.jax_enable_x64
    try:
        astjax.config.update("jax_enable_x64", True)
        check_grads(fn, args, order=order, modes=("rev",), eps=1e-5)  # fwd: test_grad.py
    finally:
        astjax.config.update("jax_enable_x64", before)


def rules_missing(module_name):
    """Differentiable ops whose impl lives in ``module_name`` and have no VJP rule."""
    return sorted(name for name, op in REGISTRY.items()
                  if getattr(op.impl, "__module__", None) == module_name
                  and op.differentiable and "vjp" not in op.rules)


# --- completeness ---------------------------------------------------------------------------------

def test_every_differentiable_shape_op_has_a_rule():
    assert rules_missing("astjax._src.ops.shape") == []
    names = {n for n, op in REGISTRY.items()
             if getattr(op.impl, "__module__", None) == "astjax._src.ops.shape"}
    assert {"reshape", "concatenate", "split", "tile", "repeat", "roll"} <= names


# --- reshaping and moving axes --------------------------------------------------------------------

@pytest.mark.parametrize("name,shape,params", [
    ("reshape", (3, 4), {"shape": (2, 6)}),
    ("reshape", (3, 4), {"shape": (-1,)}),
    ("reshape", (12,), {"shape": (3, 1, 4)}),
    ("reshape", (), {"shape": (1, 1)}),
    ("ravel", (2, 3, 4), {}),
    ("ravel", (), {}),
    ("squeeze", (3, 1, 4, 1), {}),
    ("squeeze", (3, 1, 4, 1), {"axis": 1}),
    ("squeeze", (3, 1, 4, 1), {"axis": (-1, 1)}),
    ("expand_dims", (3, 4), {"axis": 0}),
    ("expand_dims", (3, 4), {"axis": -1}),
    ("expand_dims", (3, 4), {"axis": (0, 3)}),
    ("expand_dims", (), {"axis": 0}),
    ("swapaxes", (2, 3, 4), {"axis1": 0, "axis2": 2}),
    ("swapaxes", (2, 3, 4), {"axis1": -1, "axis2": 1}),
    ("moveaxis", (2, 3, 4), {"source": 0, "destination": -1}),
    ("moveaxis", (2, 3, 4, 5), {"source": (0, 1), "destination": (3, 0)}),
    ("flip", (3, 4), {}),
    ("flip", (3, 4), {"axis": 1}),
    ("flip", (2, 3, 4), {"axis": (0, -1)}),
    ("roll", (5,), {"shift": 2}),
    ("roll", (3, 4), {"shift": -1, "axis": 1}),
    ("roll", (3, 4), {"shift": 5}),
    ("roll", (3, 4), {"shift": (1, 2), "axis": (0, 1)}),
    ("broadcast_to", (4,), {"shape": (3, 4)}),
    ("broadcast_to", (3, 1), {"shape": (2, 3, 4)}),
    ("broadcast_to", (), {"shape": (2, 3)}),
    ("tile", (3,), {"reps": 2}),
    ("tile", (2, 3), {"reps": (2, 1)}),
    ("tile", (2, 3), {"reps": (2, 1, 3)}),
    ("tile", (2, 3), {"reps": 1}),
    ("tile", (), {"reps": (2, 2)}),
    ("repeat", (2, 3), {"repeats": 2}),
    ("repeat", (2, 3), {"repeats": 3, "axis": 1}),
    ("repeat", (2, 3), {"repeats": 0, "axis": 0}),
    ("repeat", (2, 3, 4), {"repeats": 2, "axis": -2}),
])
def test_one_operand(name, shape, params):
    check_all(name, rand(shape), **params)


def test_reshape_method_forms(x64):
    x = jnp.asarray(rand((3, 4)))
    z = x.reshape(2, 6)
    (ct,) = REGISTRY["reshape"].rules["vjp"](z, x, jnp.ones_like(z), shape=2, more=(6,))
    assert ct.shape == (3, 4)


def test_repeat_counts_per_element():
    check_all("repeat", rand((3,)), repeats=np.array([1, 0, 3]))
    check_all("repeat", rand((2, 3)), repeats=jnp.array([2, 1, 2]), axis=1)
    check_all("repeat", rand((3, 2)), repeats=np.array([2, 0, 1]), axis=0)
    check_all("repeat", rand((2, 2)), repeats=jnp.array([1, 2, 0, 1]))
    check_all("repeat", rand((2, 3)), repeats=jnp.array(2), axis=0)


def test_roll_array_shift():
    check_all("roll", rand((3, 4)), shift=jnp.array([1, -2]), axis=(0, 1))
    check_all("roll", rand((6,)), shift=jnp.array(4))


# --- sequences ------------------------------------------------------------------------------------

@pytest.mark.parametrize("shapes,axis", [
    (((2, 3), (4, 3)), 0), (((2, 3), (2, 1), (2, 4)), 1), (((2, 3), (2, 5)), -1),
    (((3,),), 0), (((2, 3, 4), (2, 1, 4)), 1), (((2, 2, 1), (2, 2, 3)), 2),
    (((1, 2, 2, 1), (1, 2, 2, 3)), 3), (((2, 3), (3,), ()), None)])
def test_concatenate(shapes, axis):
    check_all("concatenate", tuple(rand(s, k) for k, s in enumerate(shapes)), axis=axis)


@pytest.mark.parametrize("shapes,axis", [
    (((3,), (3,)), 0), (((3,), (3,), (3,)), 1), (((2, 3), (2, 3)), -1), (((), ()), 0),
    (((2, 3),), 2)])
def test_stack(shapes, axis):
    check_all("stack", tuple(rand(s, k) for k, s in enumerate(shapes)), axis=axis)


@pytest.mark.parametrize("name,shapes", [
    ("hstack", ((3,), (2,))), ("hstack", ((), (2,), ())), ("hstack", ((2, 3), (2, 1))),
    ("hstack", ((2, 1, 3), (2, 4, 3))),
    ("vstack", ((3,), (3,))), ("vstack", ((2, 3), (3,), (1, 3))), ("vstack", ((), ())),
    ("vstack", ((2, 3, 4), (1, 3, 4)))])
def test_hstack_vstack(name, shapes):
    check_all(name, tuple(rand(s, k) for k, s in enumerate(shapes)))


def test_many_arrays():
    """Seventeen arrays: past the written-out tuple displays (recursion instead)."""
    check_all("concatenate", tuple(rand((k % 3 + 1,), k) for k in range(17)))
    check_all("stack", tuple(rand((2,), k) for k in range(17)), axis=1)


def test_python_scalars_in_sequences():
    check_all("hstack", (1.5, rand((2,)), 2.5))
    check_all("broadcast_arrays", 2.0, rand((3,)))
    check_all("atleast_2d", 1.5)


@pytest.mark.parametrize("name,shape,spec,axis", [
    ("split", (6, 2), 3, 0), ("split", (2, 6), [1, 4], 1), ("split", (4,), 1, 0),
    ("split", (2, 3, 4), 2, -1),
    ("array_split", (7,), 3, 0), ("array_split", (2, 5), [2, 7], 1),
    ("array_split", (2, 2), 3, 1)])
def test_split(name, shape, spec, axis):
    check_all(name, rand(shape), spec, axis=axis)


def test_split_with_zero_pieces(x64):
    """A sequence result's cotangent may hold 0.0 for pieces nothing used."""
    a = jnp.asarray(rand((6,)))
    z = jnp.split(a, 3)
    (ct,) = REGISTRY["split"].rules["vjp"](z, a, (0.0, jnp.ones(2), 0.0), 3)
    np.testing.assert_array_equal(ct, [0, 0, 1, 1, 0, 0])
    (ct,) = REGISTRY["split"].rules["vjp"](z, a, 0.0, 3)
    np.testing.assert_array_equal(ct, np.zeros(6))


@pytest.mark.parametrize("shapes", [((3,), (2, 3)), ((2, 1), (1, 4), ()), ((2, 3),),
                                    ((1,), (4, 1, 1))])
def test_broadcast_arrays(shapes):
    check_all("broadcast_arrays", *(rand(s, k) for k, s in enumerate(shapes)))


@pytest.mark.parametrize("name", ["atleast_1d", "atleast_2d", "atleast_3d"])
@pytest.mark.parametrize("shapes", [((),), ((3,),), ((2, 3),), ((2, 3, 4, 1),),
                                    ((), (3,), (2, 3))])
def test_atleast(name, shapes):
    check_all(name, *(rand(s, k) for k, s in enumerate(shapes)))


# --- through the transform (compiled; second order where the rule is not trivial) -----------------

X = rand((2, 3, 4))
W = rand((4, 3, 2))
W2 = rand((3, 4, 2))
V = rand((3, 1))
P, Q = rand((2, 3), 1), rand((2, 2), 2)
PIECES = tuple(rand((2,), k) for k in range(5))
MANY = tuple(rand((k % 2 + 1,), k) for k in range(17))  # past the written-out displays

GRADS = [  # (fn, args, order); the loss sums sin of the op so second derivatives are not 0
    (lambda x: jnp.sum(jnp.sin(jnp.reshape(x, (6, 4)))), (X,), 1),
    (lambda x: jnp.sum(jnp.sin(x.reshape(4, -1))), (X,), 1),
    (lambda x: jnp.sum(jnp.sin(jnp.ravel(x)) * jnp.arange(24.0)), (X,), 1),
    (lambda x: jnp.sum(jnp.sin(x.flatten())), (X,), 1),
    (lambda x: jnp.sum(jnp.sin(jnp.squeeze(jnp.expand_dims(x, (0, 2))))), (X,), 2),
    (lambda x: jnp.sum(jnp.sin(jnp.squeeze(x[:, :1], axis=1))), (X,), 1),
    (lambda x: jnp.sum(jnp.sin(jnp.swapaxes(x, 0, 2)) * W), (X,), 1),
    (lambda x: jnp.sum(jnp.sin(jnp.moveaxis(x, 0, -1)) * W2), (X,), 2),
    (lambda x: jnp.sum(jnp.sin(jnp.flip(x, 1)) * X), (X,), 1),
    (lambda x: jnp.sum(jnp.sin(jnp.roll(x, 2, axis=2)) * X), (X,), 1),
    (lambda x: jnp.sum(jnp.sin(jnp.roll(x, (1, -1), axis=(0, 1))) * X), (X,), 2),
    (lambda x: jnp.sum(jnp.sin(jnp.broadcast_to(x, (2, 3, 4))) * X), (V,), 2),
    (lambda x: jnp.sum(jnp.sin(jnp.tile(x, (2, 1, 3)))), (V,), 2),
    (lambda x: jnp.sum(jnp.sin(jnp.repeat(x, 3, axis=0)) * jnp.arange(9.0)[:, None]), (V,), 2),
    (lambda x: jnp.sum(jnp.sin(jnp.repeat(x, 2)) * jnp.arange(6.0)), (V,), 1),
    (lambda x: jnp.sum(jnp.sin(jnp.repeat(x, jnp.array([1, 0, 2]), axis=0))), (V,), 2),
    (lambda a, b: jnp.sum(jnp.sin(jnp.concatenate((a, b, a), axis=1)) * 1.5), (P, Q), 2),
    (lambda a, b: jnp.sum(jnp.sin(jnp.concatenate([a.T, b], axis=None))), (P, Q), 1),
    (lambda a: jnp.sum(jnp.sin(jnp.stack((a, a * 2.0), axis=1))), (P,), 2),
    (lambda a, b: jnp.sum(jnp.sin(jnp.hstack((a, b)))), (P, Q), 1),
    (lambda a: jnp.sum(jnp.sin(jnp.vstack((a, a[0])))), (P,), 1),
    (lambda xs: jnp.sum(jnp.sin(jnp.concatenate(xs))), (PIECES,), 1),
    (lambda xs: jnp.sum(jnp.sin(jnp.concatenate(xs)) * 2.0), (MANY,), 1),
    # counts, shifts and sizes known only at run time
    (lambda x, n: jnp.sum(jnp.sin(jnp.repeat(x, n, axis=0)) * 1.5), (V, 3), 1),
    (lambda x, n: jnp.sum(jnp.sin(jnp.roll(x, n, axis=1)) * X), (X, 2), 1),
    (lambda x: jnp.sum(jnp.sin(jnp.reshape(x, (x.shape[0] * 3, -1)))), (X,), 1),
]


@pytest.mark.parametrize("k", range(len(GRADS)))
def test_grad(k):
    fn, args, order = GRADS[k]
    grad_check(fn, *args, order=order)


def test_grad_sequence_results_first_order():
    """Ops with a list result: the transform takes their cotangent as a tuple."""
    a = rand((6, 2))
    grad_check(lambda a: jnp.sum(jnp.sin(jnp.split(a, 3)[1])), a, order=1)


def _broadcast_with_int(x, i):
    i2, x2 = jnp.broadcast_arrays(i, x)  # the integer result gets no cotangent (None)
    return jnp.sum(x2 * x2)


def test_broadcast_arrays_with_an_integer_operand(x64):
    x = rand((3, 1))
    check_grads(_broadcast_with_int, (x, np.arange(4).reshape(1, 4)), order=2)
