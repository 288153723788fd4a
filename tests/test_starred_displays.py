"""Starred items in tuple and list displays, ``(*xs, y)`` and ``[x, *rest]``, and several
starred arguments in one call, in compiled code: the starred value is a tuple or list of
known length, as JAX traces it."""
import numpy as np
import pytest

import astjax
import astjax.numpy as jnp
from astjax._src.errors import TypeCheckError
from astjax.test_util import check_grads

X = np.array([0.5, -1.0, 2.0], dtype=np.float64)
A = np.arange(6.0, dtype=np.float32)


def joined(x):
    parts = (x, jnp.sin(x))
    xs = [*parts, x * x]                       # a list display
    a, b, c = (*xs[1:], x)                     # a tuple display, unpacked
    return jnp.concatenate([*xs, a * b * c])   # one inside a call's argument


def joined_numpy(x):
    return np.concatenate([x, np.sin(x), x * x, np.sin(x) * x * x * x])


def mul_add(*vs):
    return vs[0] * vs[1] + vs[2]


def two_stars(x):
    a, b = (x,), [jnp.cos(x), 1.5]
    return mul_add(*a, *b)


def in_a_loop(x):
    acc, parts = x, (x,)
    for i in range(3):
        acc = jnp.stack((*parts, acc * 0.5, x)).sum(0)
    return acc


def test_jit(x64):
    np.testing.assert_allclose(astjax.jit(joined)(X), joined_numpy(X), rtol=1e-12)
    np.testing.assert_allclose(astjax.jit(two_stars)(X), X * np.cos(X) + 1.5, rtol=1e-12)
    want = X
    for _ in range(3):
        want = X + want * 0.5 + X
    np.testing.assert_allclose(astjax.jit(in_a_loop)(X), want, rtol=1e-12)


def test_results_and_indices():
    def f(x):
        m = x.reshape(2, 3)
        i = (1,)
        shape = (*m.shape[:-1], 3, 1)          # sizes: run-time ints, as the shape's
        return m.reshape(shape), m[0, *i] + m[(*i, 2)], (*(1, 2), 3), [*(x,), *[x]], (*(),)

    r, picked, consts, lst, empty = astjax.jit(f)(A)
    np.testing.assert_array_equal(r, A.reshape(2, 3, 1))
    assert float(picked) == A[1] + A[5]
    assert consts == (1, 2, 3) and empty == ()
    assert isinstance(lst, list) and len(lst) == 2
    np.testing.assert_array_equal(lst[1], A)


def test_grad_against_finite_differences(x64):
    check_grads(lambda x: joined(x).sum(), (X,), modes=("fwd", "rev"))
    check_grads(two_stars, (X,), modes=("fwd", "rev"))
    check_grads(in_a_loop, (X,), modes=("fwd", "rev"))
    g = astjax.jit(astjax.grad(lambda x: (joined(x) ** 2).sum()))(X)
    np.testing.assert_allclose(g, astjax.grad(lambda x: (joined(x) ** 2).sum())(X),
                               rtol=1e-12)


def test_vmap(x64):
    def f(ws, x):
        return jnp.stack([x, *ws]).sum(0)

    ws = (A[:2], A[2:4])
    xs = A.reshape(3, 2)
    got = astjax.vmap(f, in_axes=(None, 0))(ws, xs)
    np.testing.assert_array_equal(got, xs + A[:2] + A[2:4])
    got = astjax.vmap(joined)(np.stack([X, 2 * X]))
    np.testing.assert_allclose(got, np.stack([joined_numpy(X), joined_numpy(2 * X)]),
                               rtol=1e-12)


def grown(x):
    xs = [*(x, jnp.sin(x)), x]  # a list appended to later: built by appends
    ys = []
    ys.append(x * x)
    xs = [*xs, *ys]             # ys's length is a run-time value, but so is xs's
    xs.append(x * 3.0)
    return jnp.stack(xs)


def test_a_starred_display_of_a_list_appended_to():
    want = np.stack([X, np.sin(X), X, X * X, 3 * X])
    np.testing.assert_allclose(astjax.jit(grown)(X.astype(np.float32)), want, rtol=1e-6)


def test_a_starred_display_of_a_list_appended_to_grad(x64):
    check_grads(lambda x: grown(x).sum(0), (X,), modes=("fwd", "rev"))


def test_unknown_length_is_a_located_error():
    def f(x):
        out = []
        for i in range(3):
            out.append(x * i)
        return jnp.stack([*out, x])  # STAR-APPENDED

    with pytest.raises(TypeCheckError, match="length is a run-time value") as e:
        astjax.jit(f)(A)
    line = next(k for k, s in enumerate(open(__file__), 1) if "# STAR-APPENDED" in s)
    assert f"{__file__}:{line}:" in str(e.value)


def test_numba(numba_backend):
    jitted = astjax.jit(lambda x: jnp.concatenate([*(x, x * 2.0), x]))
    got = jitted(A)
    (compiled,) = jitted.cache.values()
    assert compiled.backend == "numba", compiled.fallback_reason
    np.testing.assert_array_equal(got, np.concatenate([A, 2 * A, A]))


def rows_copied(m):
    a, b = [*m]           # as JAX: m's rows (a, b = m), here m's first axis has a
    c, d = list(m * 2.0)  # run-time length, so only unpacking and loops take them
    e, f = tuple(jnp.sin(m))
    acc = a * b + c * d + e * f
    for r in [*m]:
        acc = acc + r
    for i, r in enumerate(list(m)):
        acc = acc + i * r * r
    return acc


def rows_copied_numpy(m):
    a, b = m
    return a * b + 4 * a * b + np.sin(a) * np.sin(b) + a + b + b * b


def test_copies_of_an_array_unpack_and_loop_over_its_rows(x64):
    m = X[:2, None] * X  # 2 x 3
    np.testing.assert_allclose(astjax.jit(rows_copied)(m), rows_copied_numpy(m), rtol=1e-12)
    check_grads(rows_copied, (m,), modes=("fwd", "rev"))
    ms = np.stack([m, 2 * m])
    np.testing.assert_allclose(astjax.vmap(rows_copied)(ms),
                               np.stack([rows_copied_numpy(m), rows_copied_numpy(2 * m)]),
                               rtol=1e-12)


def test_rows_of_an_array_as_a_sequence_is_a_located_error():
    def f(x):
        m = x.reshape(2, 3)
        return jnp.stack([*m, m[0]])  # STAR-ROWS

    with pytest.raises(TypeCheckError, match="first axis has a run-time length") as e:
        astjax.jit(f)(A)
    line = next(k for k, s in enumerate(open(__file__), 1) if "# STAR-ROWS" in s)
    assert f"{__file__}:{line}:" in str(e.value)
