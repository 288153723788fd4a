"""jnp.vectorize, apply_along_axis, apply_over_axes, broadcast_shapes and kaiser
(astjax/numpy/_vectorize.py): against NumPy and JAX 0.10.2's values (written as literals),
eagerly and under jit, with grad, vmap, the errors and one Numba program."""
import functools

import numpy as np
import pytest

import astjax
import astjax.numpy as jnp

X = np.arange(24.0, dtype=np.float32).reshape(2, 3, 4)
Y = np.arange(12.0, dtype=np.float32).reshape(3, 4) / 7
W4 = np.float32([1, -1, 2, 0])


@functools.partial(jnp.vectorize, signature="(n),(n)->()")
def _dot(a, b):
    return jnp.sum(a * b)


@jnp.vectorize
def _scalar(a, b):
    return a * jnp.sin(b) + 1  # called on 0-d arrays


_matvec = jnp.vectorize(lambda m, v: m @ v, signature="(m,n),(n)->(m)")
_two = jnp.vectorize(lambda v: (v.sum(), v - v.mean()), signature="(n)->(),(n)")
_excluded = jnp.vectorize(
    lambda v, w, mode: jnp.sum(v * w) if mode == "dot" else jnp.max(v * w),
    excluded={1, 2}, signature="(n)->()")


def _cases():
    return [
        ("vectorize scalar", lambda a, b: _scalar(a, b), (X[:, :1, 0], Y[0]),
         X[:, :1, 0] * np.sin(Y[0]) + 1),
        ("vectorize dot", _dot, (X[:, None], Y), np.einsum("ikn,kn->ik", X, Y)[:, None]),
        ("vectorize matvec", _matvec, (X, Y[:2]), np.einsum("bmn,bn->bm", X, Y[:2])),
        ("vectorize two outputs", _two, (X,), (X.sum(-1), X - X.mean(-1, keepdims=True))),
        # excluded: an array passed unmapped, a string bound (JAX's value)
        ("vectorize excluded", lambda x, w: _excluded(x, w, "max"), (X, W4),
         np.float32([[4, 12, 20], [28, 36, 44]])),
        ("apply_along_axis", lambda x: jnp.apply_along_axis(
            lambda v, p: jnp.stack([v.sum(), (v ** p).sum()]), 1, x, 2), (X,),
         np.float32([[[12, 15, 18, 21], [80, 107, 140, 179]],
                     [[48, 51, 54, 57], [800, 899, 1004, 1115]]])),
        ("apply_along_axis matrix", lambda x: jnp.apply_along_axis(
            lambda v: jnp.outer(v, v[:2]), -1, x), (X[0],),
         np.apply_along_axis(lambda v: np.outer(v, v[:2]), -1, X[0])),
        ("apply_along_axis array arg", lambda x, w: jnp.apply_along_axis(
            lambda v, w: jnp.sum(v * w), -2, x, w), (X, W4[:3]),
         np.apply_along_axis(lambda v: np.sum(v * W4[:3]), -2, X)),
        ("apply_over_axes", lambda x: jnp.apply_over_axes(jnp.sum, x, [0, 2]), (X,),
         np.float32([[[60], [92], [124]]])),
        ("apply_over_axes same rank", lambda x: jnp.apply_over_axes(
            lambda a, ax: jnp.cumsum(a, ax), x, (0, 2)), (X,),
         np.apply_over_axes(lambda a, ax: np.cumsum(a, ax), X, (0, 2))),
        ("kaiser", lambda b: jnp.kaiser(6, b), (np.float32(2.5),),
         np.float32([0.30396622, 0.6929168, 0.962232, 0.962232, 0.6929168, 0.30396622])),
        ("kaiser short", lambda b: (jnp.kaiser(1, b), jnp.kaiser(0, b)), (np.float32(2.5),),
         (np.float32([1]), np.zeros(0, np.float32))),
        ("broadcast_shapes run time", lambda a, b: jnp.zeros(
            jnp.broadcast_shapes(a.shape, b.shape, (1, 1, 1))), (X[:, :1], Y),
         np.zeros((2, 3, 4), np.float32)),
        ("broadcast_shapes constant", lambda a: jnp.zeros(
            jnp.broadcast_shapes((2, 1), 3)) + a, (np.float32(1),), np.ones((2, 3), np.float32)),
        ("broadcast_shapes zero size", lambda a, b: jnp.zeros(
            jnp.broadcast_shapes(b.shape, a.shape)), (np.zeros((0, 1), np.float32), Y[:1]),
         np.zeros((0, 4), np.float32)),
    ]


@pytest.mark.parametrize("jit", [False, True], ids=["eager", "jit"])
@pytest.mark.parametrize("case", _cases(), ids=lambda c: c[0])
def test_values(case, jit):
    _, fn, args, want = case
    got = (astjax.jit(fn) if jit else fn)(*args)
    got, want = (got, want) if isinstance(want, tuple) else ((got,), (want,))
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.shape == w.shape and g.dtype == w.dtype, (g, w)
        np.testing.assert_allclose(np.asarray(g), w, rtol=2e-6, atol=1e-6)


def test_dot_case_is_einsum():
    # the dot case's expected value, spelled plainly
    want = np.array([[[X[i, j] @ Y[k] for k in range(3)] for j in range(3)] for i in range(2)])
    np.testing.assert_allclose(_dot(X[:, :, None], Y), want, rtol=1e-6)


def test_broadcast_shapes():
    assert jnp.broadcast_shapes() == ()
    assert jnp.broadcast_shapes((2, 1), (3,)) == (2, 3)
    assert jnp.broadcast_shapes(3, (2, 1)) == (2, 3)  # an int is a 1-D shape, as JAX
    assert jnp.broadcast_shapes((1,), ()) == (1,)
    with pytest.raises(ValueError, match=r"Incompatible shapes for broadcasting: "
                                         r"shapes=\[\(2,\), \(3,\)\]"):
        jnp.broadcast_shapes((2,), (3,))


def test_grad():
    def loss(x, y):
        return jnp.sum(_dot(x, y) ** 2) + jnp.sum(_scalar(x[:, :1, :1], y[0]))

    x, y = X[:, :, None] / 10, Y  # (2, 3, 1, 4) against (3, 4): an outer product of rows
    d = np.einsum("ijn,kn->ijk", x[:, :, 0], y)
    want_x = 2 * np.einsum("ijk,kn->ijn", d, y)[:, :, None]
    want_x[:, 0, 0] += np.sin(y[0])
    want_y = 2 * np.einsum("ijk,ijn->kn", d, x[:, :, 0])
    want_y[0] += x[:, 0, 0].sum(0) * np.cos(y[0])
    for g in (astjax.grad(loss, (0, 1)), astjax.jit(astjax.grad(loss, (0, 1)))):
        gx, gy = g(x, y)
        np.testing.assert_allclose(gx, want_x, rtol=1e-5)
        np.testing.assert_allclose(gy, want_y, rtol=1e-5)


def _made_inside(x, s):
    scaled = jnp.vectorize(lambda a, b: a * b + s)  # captures s: a closure
    plain = jnp.vectorize(lambda a, b: a * b + 1)
    matvec = jnp.vectorize(lambda m, v: m @ v, signature="(n,k),(k)->(n)")
    power = jnp.vectorize(lambda a, p: a ** p, excluded=(1,))
    return scaled(x, x[0]), plain(x, x[0]), matvec(x, x[0]), power(x, 2)


def test_vectorize_made_in_compiled_code():
    # jit failed: "cannot index static frozenset() with ArrayType(...)"
    want = (Y * Y[0] + 2.0, Y * Y[0] + 1, Y @ Y[0], Y ** 2)
    for f in (_made_inside, astjax.jit(_made_inside)):
        for got, w in zip(f(Y, 2.0), want):
            np.testing.assert_allclose(got, w, rtol=1e-6)
    loss = lambda x, s: jnp.sum(_made_inside(x, s)[0] ** 2)  # noqa: E731
    for g in (astjax.grad(loss, (0, 1)), astjax.jit(astjax.grad(loss, (0, 1)))):
        gx, gs = g(Y, 2.0)
        r = 2 * (Y * Y[0] + 2.0)
        want_x = r * Y[0]
        want_x[0] += (r * Y).sum(0)
        np.testing.assert_allclose(gx, want_x, rtol=1e-5)
        np.testing.assert_allclose(gs, r.sum(), rtol=1e-5)


def test_vmap():
    want = np.einsum("bn,bn->b", Y, Y[::-1])
    np.testing.assert_allclose(astjax.vmap(_dot)(Y, Y[::-1]), want, rtol=1e-6)
    np.testing.assert_allclose(astjax.jit(astjax.vmap(_dot, (0, None)))(Y, Y[0]), Y @ Y[0],
                               rtol=1e-6)
    got = astjax.vmap(lambda x: jnp.apply_along_axis(jnp.sum, 0, x))(X)
    np.testing.assert_allclose(got, X.sum(1))


def _affine(x, y=1.0, scale=2.0):
    return x * y + scale


_affine_v = jnp.vectorize(_affine)
_affine_excluded = jnp.vectorize(_affine, excluded={1, "scale"})


def test_keywords():
    # an excluded keyword is passed through, as JAX (eagerly and in compiled code)
    f = jnp.vectorize(lambda v, scale=1.0: v * scale, excluded={"scale"})
    np.testing.assert_allclose(f(Y, scale=3.0), Y * 3)
    np.testing.assert_allclose(astjax.jit(lambda y: f(y, scale=3.0))(Y), Y * 3)
    w = Y[0]
    for call in (lambda w: _affine_excluded(w, 3.0, scale=w),       # a row per element
                 lambda w: _affine_excluded(w, y=w[:, None], scale=w)):
        np.testing.assert_allclose(astjax.jit(call)(w), call(w), rtol=1e-6)
    np.testing.assert_allclose(_affine_excluded(w, 3.0, scale=w), 3 * w[:, None] + w)
    # one not excluded is mapped with the positional ones, as NumPy's vectorize maps it
    # (JAX 0.10.2 drops it: _affine(x) there)
    for call in (lambda w: _affine_v(w, y=w[:, None]), lambda w: _affine_v(w, scale=w)):
        want = np.vectorize(_affine)(w, y=w[:, None]) if call(w).ndim == 2 else w + w
        np.testing.assert_allclose(call(w), want, rtol=1e-6)
        np.testing.assert_allclose(astjax.jit(call)(w), want, rtol=1e-6)
    dot = jnp.vectorize(lambda a, b=1.0: jnp.sum(a * b), signature="(n),(n)->()")
    np.testing.assert_allclose(dot(Y, b=W4), Y @ W4, rtol=1e-6)
    np.testing.assert_allclose(astjax.jit(lambda y: dot(y, b=W4))(Y), Y @ W4, rtol=1e-6)
    # grad and vmap through the keyword
    g = astjax.grad(lambda y: _affine_v(w, y=y).sum())(np.float32(2.0))
    assert float(g) == pytest.approx(float(w.sum()), rel=1e-6)
    g = astjax.jit(astjax.grad(lambda y: (_affine_v(w, y=y) ** 2).sum()))(w)
    np.testing.assert_allclose(g, 2 * (w * w + 2) * w, rtol=1e-6)
    got = astjax.vmap(lambda y: _affine_v(w, y=y))(w)
    np.testing.assert_allclose(got, w[:, None] * w + 2, rtol=1e-6)
    np.testing.assert_allclose(
        jnp.apply_along_axis(lambda v, p=1: jnp.sum(v ** p), 0, Y, p=2), (Y ** 2).sum(0),
        rtol=1e-6)


@pytest.mark.parametrize("call, error, message", [
    (lambda: _dot(jnp.ones(3), jnp.ones(4)), ValueError,
     "inconsistent size for core dimension 'n': 4 vs 3 on vectorized function with "
     "excluded=frozenset() and signature='(n),(n)->()'"),
    (lambda: _matvec(jnp.ones(3), jnp.ones(3)), ValueError,
     "input with shape (3,) does not have enough dimensions for all core dimensions "
     "('m', 'n') on vectorized function"),
    (lambda: jnp.vectorize(lambda a: a, excluded={-1}), ValueError,
     "excluded={-1} contains negative numbers"),
    (lambda: jnp.vectorize(lambda a: a, signature="(n)->()")(jnp.ones(3)), ValueError,
     "output shape (3,) does not match core dimensions () on vectorized function"),
    (lambda: jnp.vectorize(lambda a: a, signature="(n)->(),()")(jnp.ones(3)), TypeError,
     "output must be a tuple when multiple outputs are expected"),
    (lambda: jnp.vectorize(lambda a: a, signature="(n->()")(jnp.ones(3)), ValueError,
     "not a valid gufunc signature: (n->()"),
    (lambda: _dot(jnp.ones(3)), TypeError,
     "wrong number of positional arguments: expected 2, got 1"),
    (lambda: jnp.apply_along_axis(jnp.sum, 2, Y), ValueError, "out of bounds"),
    (lambda: jnp.apply_over_axes(lambda a, ax: a[0, 0], Y, 0), ValueError,
     "function is not returning an array of the correct shape"),
])
def test_errors(call, error, message):
    with pytest.raises(error) as info:
        call()
    assert message in str(info.value)


@pytest.mark.parametrize("fn, message", [
    (lambda v: _matvec(v, v), "does not have enough dimensions"),
    (lambda v: jnp.apply_along_axis(jnp.sum, 1, v), "out of bounds"),
    (lambda v: jnp.kaiser(v.shape[0], 1.0), "M must be known when code is generated"),
    (lambda v: v + jnp.ones(jnp.broadcast_shapes((2,), (3,))), "Incompatible shapes"),
])
def test_compiled_errors_name_the_line(fn, message):
    with pytest.raises((TypeError, ValueError), match=message) as info:
        astjax.jit(fn)(jnp.ones(3))
    assert "test_ops_vectorize.py" in str(info.value)


def _small(x, y):
    return _dot(x, y) + jnp.apply_along_axis(jnp.sum, 1, y) + jnp.kaiser(4, 1.0)[0]


def test_numba(numba_backend):
    jitted = astjax.jit(_small)
    got = jitted(X[:, :1], Y)
    (compiled,) = jitted.cache.values()
    assert compiled.backend == "numba", compiled.fallback_reason
    np.testing.assert_allclose(got, _small(X[:, :1], Y), rtol=1e-6)
