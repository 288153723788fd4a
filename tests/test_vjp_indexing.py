"""VJP rules of x[idx] and x.at[idx].<update>(values), checked eagerly against central
differences (float64), for float32 dtypes and a zero cotangent, and through the
reverse-mode transform (compiled, to second order). Repeated positions included."""
import numpy as np
import pytest

import astjax.numpy as jnp
from astjax._src.ad.vjp_indexing import may_repeat
from astjax._src.ops.registry import REGISTRY

from .test_vjp_shape import check_all, grad_check, rand, rules_missing

REPEATED = np.array([2, 0, 2, 1, 2])


def test_every_differentiable_indexing_op_has_a_rule():
    assert rules_missing("astjax._src.ops.indexing") == []
    assert REGISTRY["at_min"].differentiable and "vjp" in REGISTRY["at_max"].rules
    assert "vjp" in REGISTRY["getitem"].rules and "vjp" in REGISTRY["at_power"].rules


@pytest.mark.parametrize("shape,index", [
    ((5,), 2), ((5,), -1), ((3, 4), (1, 2)), ((3, 4), 1), ((3, 4), slice(1, None)),
    ((3, 4), (slice(None), slice(None, None, -2))), ((3, 4), (None, 0)),
    ((2, 3, 4), (Ellipsis, 1)), ((2, 3, 4), (0, Ellipsis, None, slice(1, 3))),
    ((5,), REPEATED), ((3, 4), (REPEATED[:3], slice(1, None))),
    ((3, 4), (np.array([[0, 0], [2, 1]]), np.array([1, 1]))),
    ((2, 3, 4), (np.array([1, 1]), slice(None), np.array([0, 3]))),  # separated: dims first
    ((3, 4), np.array([[True, False, True, False], [False] * 4, [True] * 4])),
    ((3, 4), (np.array([True, False, True]),)),
])
def test_getitem(shape, index):
    check_all("getitem", rand(shape), index)


def test_getitem_array_scalar_index():
    check_all("getitem", rand((4, 3)), jnp.array(2))
    check_all("getitem", rand((4, 3)), (jnp.array(1), jnp.array([0, 2, 0])))


UPDATES = [
    # (x shape, values shape or "s" for a Python float, index)
    ((5,), (), 2),
    ((5,), "s", slice(1, 4)),
    ((3, 4), (4,), 1),
    ((3, 4), (2, 1), (slice(1, None), slice(None, 2))),
    ((3, 4), (3,), (slice(None), -1)),
    ((5,), (5,), REPEATED),                    # repeated positions
    ((5,), "s", REPEATED),                     # one value written three times to 2
    ((3, 4), (3, 2), (REPEATED[:3], slice(1, 3))),
    ((3, 4), (2,), (np.array([1, 1]), np.array([2, 2]))),
    ((3, 4), (), np.array([[True, False, True, False], [False] * 4, [True] * 4])),
    ((2, 3), (2, 3), (Ellipsis,)),
]


def _values(spec, seed=3):
    return 0.7 if spec == "s" else rand(spec, seed)


@pytest.mark.parametrize("name", ["at_set", "at_add", "at_subtract"])
@pytest.mark.parametrize("xs,vs,index", UPDATES)
def test_additive_updates(name, xs, vs, index):
    check_all(name, rand(xs), _values(vs), index, broadcasting=("values",))


@pytest.mark.parametrize("name", ["at_multiply", "at_divide", "at_power"])
@pytest.mark.parametrize("xs,vs,index", UPDATES)
def test_multiplicative_updates(name, xs, vs, index):
    rng = np.random.default_rng(7)
    x = rng.uniform(0.5, 1.5, xs)  # positive, for power's log(x)
    values = 0.7 if vs == "s" else rng.uniform(0.5, 1.5, vs) * rng.choice([-1, 1], vs)
    check_all(name, x, values, index, broadcasting=("values",))


@pytest.mark.parametrize("name", ["at_min", "at_max"])
@pytest.mark.parametrize("xs,vs,index", UPDATES)
def test_extremal_updates(name, xs, vs, index):
    check_all(name, rand(xs), _values(vs), index, broadcasting=("values",))


def test_extremal_ties_share_the_cotangent(x64):
    """As JAX's scatter_max: x and the two values written to position 1 all equal the
    result there, so each takes a third of its cotangent."""
    x, v = jnp.array([1.0, 2.0, 3.0]), jnp.array([2.0, 2.0, 0.5])
    index = np.array([1, 1, 2])
    z = x.at[index].max(v)
    ct_x, ct_v = REGISTRY["at_max"].rules["vjp"](z, x, v, jnp.array([1.0, 3.0, 5.0]),
                                                 index=index)
    np.testing.assert_allclose(ct_x, [1.0, 1.0, 5.0])
    np.testing.assert_allclose(ct_v, [1.0, 1.0, 0.0])


@pytest.mark.parametrize("name", ["at_multiply", "at_power"])
def test_repeated_positions_with_zero_values(name):
    """The other values' product at a position, counted without dividing by a zero."""
    x = np.random.default_rng(1).uniform(0.5, 1.5, 5)
    for values in ([0.0, 1.5, 0.7, -1.2, 0.9],     # one zero among the writes to 2
                   [0.0, 1.5, 0.0, -1.2, 0.9],     # two zeros at 2: every other product 0
                   [0.8, 0.0, 0.7, 0.0, 0.9]):     # zeros at positions written once
        check_all(name, x, np.array(values), REPEATED, broadcasting=("values",))


def test_set_repeated_last_write_lands(x64):
    x, v = jnp.zeros(3), jnp.array([1.0, 2.0, 3.0])
    index = np.array([1, 1, 1])
    z = x.at[index].set(v)
    ct_x, ct_v = REGISTRY["at_set"].rules["vjp"](z, x, v, jnp.array([1.0, 5.0, 1.0]),
                                                 index=index)
    np.testing.assert_array_equal(ct_x, [1.0, 0.0, 1.0])
    np.testing.assert_array_equal(ct_v, [0.0, 0.0, 5.0])  # NumPy's (and the impl's) last


def test_unique_indices_skips_the_repeat_bookkeeping(x64):
    check_all("at_set", rand((5,)), rand((3,)), np.array([4, 0, 2]), unique_indices=True,
              broadcasting=("values",))
    check_all("at_multiply", rand((5,)), rand((3,)), np.array([4, 0, 2]),
              unique_indices=True, broadcasting=("values",))


def test_may_repeat():
    assert not may_repeat(3) and not may_repeat(slice(1, None))
    assert not may_repeat((0, Ellipsis, None, slice(None)))
    assert not may_repeat(np.array([True, False])) and not may_repeat(jnp.array(2))
    assert may_repeat(np.array([0, 0])) and may_repeat((1, jnp.array([0, 1])))
    assert may_repeat([0, 1])


# --- through the transform (compiled; second order where the rule is not trivial) -----------------

X = rand((3, 4))
V = rand((2, 4), 5)
XP = np.random.default_rng(2).uniform(0.5, 1.5, (3, 4))  # positive, for power
VP = np.random.default_rng(3).uniform(0.5, 1.5, (2, 4))
ROWS, TWICE, COLS = np.array([2, 0]), np.array([1, 1]), slice(1, None)

GRADS = [  # (fn, args, order); the loss sums sin of the op so second derivatives are not 0
    (lambda x: jnp.sum(jnp.sin(x[1:, ::2])), (X,), 2),
    (lambda x: jnp.sum(jnp.sin(x[REPEATED[:3]]) * 1.5), (X,), 2),
    (lambda x: jnp.sum(jnp.sin(x[:, 2])) + jnp.sin(x[0, 1]), (X,), 1),
    (lambda x: jnp.sum(jnp.sin(x[None, ..., 1])), (X,), 1),
    (lambda x, v: jnp.sum(jnp.sin(x.at[ROWS].set(v))), (X, V), 2),
    (lambda x, v: jnp.sum(jnp.sin(x.at[TWICE].set(v))), (X, V), 1),
    (lambda x, v: jnp.sum(jnp.sin(x.at[1:].add(v * 2.0))), (X, V), 1),
    # x.at[...].subtract does not compile yet (the compiler's .at method table lacks it)
    (lambda x, v: jnp.sum(jnp.sin(jnp.at_subtract(x, v, (ROWS, COLS)))), (X, V[:, 1:]), 1),
    (lambda x, v: jnp.sum(jnp.sin(x.at[TWICE].multiply(v))), (XP, VP), 2),
    (lambda x, v: jnp.sum(jnp.sin(x.at[1:].divide(v))), (XP, VP), 1),
    (lambda x, v: jnp.sum(jnp.sin(x.at[TWICE].power(v))), (XP, VP), 1),
]


@pytest.mark.parametrize("k", range(len(GRADS)))
def test_grad(k):
    fn, args, order = GRADS[k]
    grad_check(fn, *args, order=order)


def _fill(x):
    y = jnp.zeros_like(x)
    y = y.at[0].set(x[0] * x[-1])
    y = y.at[1].set(x[1] * x[0])
    y = y.at[2:4].multiply(x[1:3])
    return jnp.sum(jnp.sin(y))


def _loop_fill(x, n):
    y = jnp.zeros_like(x)
    for i in range(n):
        y = y.at[i].set(x[i] * x[i - 1])
    return jnp.sum(jnp.sin(y))


def test_grad_updates_in_sequence():
    grad_check(_fill, rand((5,)))


def test_grad_loop_of_updates():
    grad_check(_loop_fill, rand((5,)), 4)
