"""astjax.lax control flow and slicing: against plain Python/NumPy, eagerly and under jit,
derivatives against finite differences, loops kept as loops in the generated source,
nested defs and lambdas as bodies, and JAX's errors at the user's line."""
import inspect

import numpy as np
import pytest

import astjax
import astjax.numpy as jnp
from astjax import lax
from astjax._src.errors import UnsupportedSyntaxError
from astjax.test_util import check_grads

RNG = np.random.default_rng(0)
X = RNG.uniform(0.5, 1.5, 4).astype(np.float32)
M = np.arange(20, dtype=np.float32).reshape(4, 5)


def both(fn, *args):
    """(eager result, jit result)."""
    return fn(*args), astjax.jit(fn)(*args)


def assert_tree_close(a, b, rtol=1e-6):
    ta, tb = astjax.tree_util.tree_structure(a), astjax.tree_util.tree_structure(b)
    assert ta == tb, (ta, tb)
    for x, y in zip(astjax.tree_util.tree_leaves(a), astjax.tree_util.tree_leaves(b)):
        assert np.shape(x) == np.shape(y)
        np.testing.assert_allclose(np.asarray(x, np.float64), np.asarray(y, np.float64),
                                   rtol=rtol)


def line_of(fn, text):
    """The file line of ``fn``'s source that contains ``text``."""
    lines, start = inspect.getsourcelines(fn)
    return start + next(k for k, line in enumerate(lines) if text in line)


# --- fori_loop --------------------------------------------------------------------------------

def body_module_level(i, c):
    return c * 0.9 + jnp.sin(c) * i


def fori_module_body(x, n):
    return lax.fori_loop(1, n, body_module_level, x)


def fori_closure(x, w, n):
    def body(i, c):  # reads w from the enclosing function
        return c * w + jnp.cos(c) / (i + 1)
    return lax.fori_loop(0, n, body, x)


def fori_pytree(x):
    init = {"total": 0.0, "vec": x, "pair": (x * 2, 1)}

    def body(i, s):
        return {"total": s["total"] + s["vec"].sum(), "vec": s["vec"] * 0.5,
                "pair": (s["pair"][0] + i, s["pair"][1] * 2)}
    return lax.fori_loop(0, 3, body, init)


def reference_fori(lower, upper, body, val):
    for i in range(lower, upper):
        val = body(i, val)
    return val


def test_fori_loop_module_level_body():
    expected = reference_fori(1, 5, lambda i, c: c * 0.9 + np.sin(c) * i, X.astype(np.float64))
    for got in both(fori_module_body, X, 5):
        np.testing.assert_allclose(got, expected, rtol=1e-5)
    # zero and negative trip counts leave the carry alone
    for got in both(fori_module_body, X, 0):
        np.testing.assert_array_equal(got, X)


def test_fori_loop_closure_and_dynamic_bound():
    w = np.float32(0.7)
    expected = reference_fori(0, 4, lambda i, c: c * w + np.cos(c) / (i + 1), X)
    eager, jitted = both(fori_closure, X, w, 4)
    np.testing.assert_allclose(eager, expected, rtol=1e-5)
    np.testing.assert_allclose(jitted, expected, rtol=1e-5)
    assert jitted.dtype == np.float32


def test_fori_loop_pytree_carry_and_weak_promotion():
    eager, jitted = both(fori_pytree, X)
    assert_tree_close(eager, jitted)
    np.testing.assert_allclose(jitted["total"], X.sum() * (1 + 0.5 + 0.25), rtol=1e-6)
    np.testing.assert_allclose(jitted["pair"][0], 2 * X + 3, rtol=1e-6)
    assert int(jitted["pair"][1]) == 8
    assert jitted["total"].dtype == np.float32  # the Python 0.0 became a float32 carry


def test_fori_loop_python_scalar_init_becomes_array():
    def f(n):
        return lax.fori_loop(0, n, lambda i, c: c + i, 0)
    eager, jitted = both(f, 5)
    assert int(eager) == int(jitted) == 10
    assert isinstance(eager, astjax.Array) and eager.dtype == np.int32


def test_fori_loop_stays_a_loop_in_the_source():
    source = astjax.make_source(fori_closure)(X, np.float32(0.5), 7)
    assert "for i in range(0, upper):" in source
    assert source.count("jnp.cos(") == 1  # the body is compiled once, not unrolled
    grad_source = astjax.make_source(astjax.grad(lambda x, w, n: fori_closure(x, w, n).sum()))(
        X, np.float32(0.5), 1000)
    # the body and its vjp, each once; the backward sweep runs the recorded trip count
    assert grad_source.count("jnp.cos(") == 2
    assert "for i in range(0, upper):" in grad_source and "range(trips" in grad_source


def test_fori_loop_gradients(x64):
    x, w = X.astype(np.float64), np.float64(0.8)
    check_grads(lambda x, w: fori_closure(x, w, 4), (x, w), order=1, modes=("rev", "fwd"))
    check_grads(lambda x: fori_module_body(x, 4).sum(), (x,), order=2, modes=("rev",))
    jac = astjax.jacrev(lambda x: fori_closure(x, w, 3))(x)
    eps = 1e-6
    numeric = np.stack([(np.asarray(fori_closure(x + eps * e, w, 3)) -
                         np.asarray(fori_closure(x - eps * e, w, 3))) / (2 * eps)
                        for e in np.eye(4)], axis=1)
    np.testing.assert_allclose(jac, numeric, rtol=1e-6, atol=1e-8)


def test_fori_loop_pytree_gradient(x64):
    check_grads(lambda x: fori_pytree(x)["total"] + fori_pytree(x)["pair"][0].sum(),
                (X.astype(np.float64),), order=1, modes=("rev",))


def quadratic(v):
    return ((v - 3.0) ** 2).sum()


def gradient_descent(x, n):
    return lax.fori_loop(0, n, lambda i, v: v - 0.25 * astjax.grad(quadratic)(v), x)


def test_fori_loop_static_tuple_carry_and_grad_in_the_body():
    def count(n):
        return lax.fori_loop(0, n, lambda i, c: (c[0] + 1, c[1] * 2), (0, 1))
    for got in both(count, 3):
        assert (int(got[0]), int(got[1])) == (3, 8)
    for got in both(gradient_descent, X, 30):  # grad of a global function inside the body
        np.testing.assert_allclose(got, 3.0, rtol=1e-5)


# --- while_loop -------------------------------------------------------------------------------

def newton_sqrt(a):
    def cond_fun(s):
        return jnp.abs(s[0] * s[0] - a) > 1e-5 * a

    def body_fun(s):
        return (0.5 * (s[0] + a / s[0]), s[1] + 1)
    return lax.while_loop(cond_fun, body_fun, (a, 0))


def test_while_loop():
    for a in (2.0, 9.0, 0.25):
        eager, jitted = both(newton_sqrt, np.float32(a))
        assert_tree_close(eager, jitted)
        np.testing.assert_allclose(jitted[0], np.sqrt(a), rtol=1e-5)
        assert int(jitted[1]) > 0
    source = astjax.make_source(newton_sqrt)(np.float32(2.0))
    assert "while " in source


def test_while_loop_gradient(x64):
    # astjax differentiates while loops (JAX does not in reverse mode)
    g = astjax.grad(lambda a: newton_sqrt(a)[0])(np.float64(3.0))
    np.testing.assert_allclose(g, 0.5 / np.sqrt(3.0), rtol=1e-5)

    def decay(x):
        return lax.while_loop(lambda s: s[1] < 4, lambda s: (jnp.sin(s[0]) * 1.5, s[1] + 1),
                              (x, 0))[0]
    check_grads(decay, (X.astype(np.float64),), order=1, modes=("rev",))


# --- cond and switch --------------------------------------------------------------------------

def cond_two_operands(p, x, y):
    return lax.cond(p, lambda a, b: a * b + 1.0, lambda a, b: jnp.sin(a) - b, x, y)


def cond_closure(x):
    scale = x.sum()
    return lax.cond(scale > 3.0, lambda: x * scale, lambda: x / scale)


def test_cond():
    y = np.float32(2.0)
    for p in (True, False, 1, 0, 5):
        expected = X * y + 1.0 if p else np.sin(X) - y
        for got in both(cond_two_operands, p, X, y):
            np.testing.assert_allclose(got, expected, rtol=1e-6)
    for x in (X, X / 4):
        s = x.sum()
        expected = x * s if s > 3.0 else x / s
        for got in both(cond_closure, x):
            np.testing.assert_allclose(got, expected, rtol=1e-6)
    source = astjax.make_source(cond_two_operands)(True, X, y)
    assert "if pred:" in source


def test_cond_static_predicate_and_pytree_outputs():
    def f(x):
        return lax.cond(x.ndim == 1, lambda v: {"a": v, "b": (v.sum(), None)},
                        lambda v: {"a": -v, "b": (v.max(), None)}, x)
    eager, jitted = both(f, X)
    assert_tree_close(eager, jitted)
    assert jitted["b"][1] is None


def test_branches_returning_constants():
    def f(x):
        return (lax.cond(x.sum() > 1, lambda: (1, 2.0), lambda: (3, x.sum())),
                lax.switch(x.shape[0] - 4, [lambda v: 0.0, lambda v: v.sum()], x))
    eager, jitted = both(f, X)
    assert_tree_close(eager, jitted)
    assert int(jitted[0][0]) == 1 and float(jitted[1]) == 0.0


def test_cond_gradient(x64):
    x, y = X.astype(np.float64), np.float64(0.3)
    check_grads(lambda x, y: cond_two_operands(True, x, y).sum(), (x, y), order=2,
                modes=("rev",))
    check_grads(lambda x, y: cond_two_operands(False, x, y), (x, y), order=1,
                modes=("rev", "fwd"))
    check_grads(cond_closure, (x,), order=1, modes=("rev",))


def switch_three(i, x):
    return lax.switch(i, [lambda a: a * 2.0, jnp.sin, lambda a: a ** 2], x)


def test_switch_clamps_the_index():
    branches = [lambda a: a * 2.0, np.sin, lambda a: a ** 2]
    for i in (-5, -1, 0, 1, 2, 3, 100):
        expected = branches[min(max(i, 0), 2)](X)
        for got in both(switch_three, i, X):
            np.testing.assert_allclose(got, expected, rtol=1e-6)
    source = astjax.make_source(switch_three)(1, X)
    assert "jnp.clip(index, 0, 2)" in source and "if " in source


def test_switch_gradient(x64):
    for i in (0, 1, 2):
        check_grads(lambda x: switch_three(i, x), (X.astype(np.float64),), order=1,
                    modes=("rev",))


# --- scan -------------------------------------------------------------------------------------

def scan_cumsum(xs):
    def step(c, x):
        c = c + x
        return c, c * 2.0
    return lax.scan(step, jnp.zeros(xs.shape[1:]), xs)


def scan_trees(xs, w, reverse):
    def step(carry, x):
        a, b = carry
        new = (a * w + x["u"].sum(), b + x["v"])
        return new, {"p": a, "q": (b * 2.0, None)}
    return lax.scan(step, (0.0, jnp.zeros(xs.shape[1])), {"u": xs, "v": xs * 2.0},
                    reverse=reverse)


def reference_scan(f, init, xs, reverse=False):
    carry, ys = init, [None] * len(xs)
    order = range(len(xs) - 1, -1, -1) if reverse else range(len(xs))
    for k in order:
        carry, ys[k] = f(carry, xs[k])
    return carry, ys


def test_scan_against_a_python_loop():
    carry, ys = reference_scan(lambda c, x: (c + x, (c + x) * 2.0), np.zeros(5), M)
    for got in both(scan_cumsum, M):
        np.testing.assert_allclose(got[0], carry)
        np.testing.assert_allclose(got[1], np.stack(ys))
    source = astjax.make_source(scan_cumsum)(M)
    assert "for k in range(n):" in source


@pytest.mark.parametrize("reverse", [False, True])
def test_scan_pytrees(reverse):
    w = np.float32(0.5)

    def step(carry, x):
        a, b = carry
        return (a * w + x[0].sum(), b + x[1]), (a, b * 2.0)
    carry, ys = reference_scan(step, (0.0, np.zeros(5)), [(r, 2 * r) for r in M], reverse)
    eager, jitted = both(lambda xs, w: scan_trees(xs, w, reverse), M, w)
    assert_tree_close(eager, jitted)
    np.testing.assert_allclose(jitted[0][0], carry[0], rtol=1e-6)
    np.testing.assert_allclose(jitted[0][1], carry[1], rtol=1e-6)
    np.testing.assert_allclose(jitted[1]["p"], [y[0] for y in ys], rtol=1e-6)
    np.testing.assert_allclose(jitted[1]["q"][0], np.stack([y[1] for y in ys]), rtol=1e-6)
    assert jitted[1]["q"][1] is None


def test_scan_without_xs_and_of_length_zero():
    def powers(a, n):
        return lax.scan(lambda c, _: (c * a, c), 1.0, None, length=n)
    for got in both(powers, np.float32(0.5), 5):
        np.testing.assert_allclose(got[0], 0.5 ** 5)
        np.testing.assert_allclose(got[1], 0.5 ** np.arange(5))
    empty = np.zeros((0, 3), np.float32)
    for carry, ys in both(scan_cumsum, empty):
        assert ys.shape == (0, 3) and carry.shape == (3,)


def test_scan_gradient(x64):
    xs, w = M.astype(np.float64) / 10, np.float64(0.7)
    check_grads(lambda xs: scan_cumsum(xs)[1].sum() + (scan_cumsum(xs)[0] ** 2).sum(), (xs,),
                order=1, modes=("rev", "fwd"))
    check_grads(lambda xs, w: scan_trees(xs, w, True)[1]["p"], (xs, w), order=1,
                modes=("rev", "fwd"))
    # under vmap the stacked ys start as zeros that a broadcast replaces: the broadcast's
    # cotangent must not flow on into the zeros (a rank error once, and wrong gradients)
    batched = astjax.vmap(lambda xs: scan_cumsum(xs)[1])
    check_grads(lambda xs: (batched(xs) ** 2).sum(), (xs.reshape(2, 2, 5),), order=1,
                modes=("rev",))


def scan_with_float16_ys(x):
    def body(c, xi):
        c = c + xi * x[0] * x[1]
        return c, jnp.sin(c).astype(jnp.float16)
    c, ys = lax.scan(body, 0.0 * x[0], jnp.arange(3.0))
    return c + jnp.sum(ys.astype(jnp.float32))


def test_vmap_of_grad_of_scan_whose_ys_have_their_own_dtype():
    """The zero cotangent of the float16 ys stays a weak 0.0 where paths meet (a cast to
    float16 made it a 0-d array: 'rank 1 on one path and rank 2 on another' under vmap)."""
    xs = np.array([[0.1, 0.55, 1.0], [0.2, 1.1, 2.0]], np.float32)
    got = astjax.vmap(astjax.grad(scan_with_float16_ys))(xs)
    for x, g in zip(xs, got):
        np.testing.assert_allclose(g, astjax.grad(scan_with_float16_ys)(x), rtol=1e-6)
        slope = np.array([0.0, 1.0, 3.0])  # the carries are a * (0, 1, 3), a = x0 x1
        da = 3.0 + np.sum(np.cos(x[0] * x[1] * slope) * slope)
        np.testing.assert_allclose(g, [x[1] * da, x[0] * da, 0.0], rtol=2e-3)


# --- select and dynamic slices ----------------------------------------------------------------

def test_select():
    def f(x):
        return lax.select(x > 1.0, x, -x)
    for got in both(f, X):
        np.testing.assert_allclose(got, np.where(X > 1.0, X, -X))


def slice_2x3(x, i, j):
    return lax.dynamic_slice(x, (i, j), (2, 3))


def update_2x2(x, u, i, j):
    return lax.dynamic_update_slice(x, u, (i, j))


def clamp(s, dim, size):
    s = s + dim if s < 0 else s
    return min(max(s, 0), dim - size)


@pytest.mark.parametrize("i,j", [(0, 0), (1, 2), (3, 4), (-1, -2), (-9, 1), (10, -30)])
def test_dynamic_slice_clamps(i, j):
    a, b = clamp(i, 4, 2), clamp(j, 5, 3)
    for got in both(slice_2x3, M, i, j):
        np.testing.assert_array_equal(got, M[a:a + 2, b:b + 3])
    u = np.full((2, 2), -1.0, np.float32)
    a, b = clamp(i, 4, 2), clamp(j, 5, 2)
    expected = M.copy()
    expected[a:a + 2, b:b + 2] = u
    for got in both(update_2x2, M, u, i, j):
        np.testing.assert_array_equal(got, expected)


def test_dynamic_slice_static_indices_and_array_of_indices():
    def f(x, starts):
        return lax.dynamic_slice(x, (1, -2), (3, 2)), lax.dynamic_slice(x, starts, (1, 1))
    starts = np.array([2, 3], np.int32)
    for got in both(f, M, starts):
        np.testing.assert_array_equal(got[0], M[1:4, 3:5])
        np.testing.assert_array_equal(got[1], M[2:3, 3:4])


def test_in_dim_variants():
    def f(x, i):
        return (lax.dynamic_slice_in_dim(x, i, 2, axis=1),
                lax.dynamic_index_in_dim(x, i, 0, keepdims=False),
                lax.dynamic_index_in_dim(x, i, 1),
                lax.dynamic_update_index_in_dim(x, jnp.zeros(4), i, 1),
                lax.dynamic_update_slice_in_dim(x, jnp.zeros((1, 2)), i, 0))
    for i in (2, -1, 9):
        eager, jitted = both(f, M, i)
        a = clamp(i, 5, 2)
        np.testing.assert_array_equal(jitted[0], M[:, a:a + 2])
        np.testing.assert_array_equal(jitted[1], M[clamp(i, 4, 1)])
        np.testing.assert_array_equal(jitted[2], M[:, clamp(i, 5, 1)][:, None])
        upd = M.copy()
        upd[:, clamp(i, 5, 1)] = 0
        np.testing.assert_array_equal(jitted[3], upd)
        upd = M.copy()
        upd[clamp(i, 4, 1), :2] = 0
        np.testing.assert_array_equal(jitted[4], upd)
        for e, j in zip(eager, jitted):
            np.testing.assert_array_equal(e, j)


def test_slicing_gradients(x64):
    x = RNG.standard_normal((4, 5))
    u = RNG.standard_normal((2, 2))
    check_grads(lambda x, u: (update_2x2(x, u, 1, -1) ** 2).sum() +
                (slice_2x3(x, 3, 1) ** 3).sum(), (x, u), order=2, modes=("rev",))
    check_grads(lambda x: lax.select(x > 0, x * 2.0, jnp.sin(x)), (x,), order=1,
                modes=("rev",))

    def window_sums(x):  # dynamic slices inside a loop
        return lax.fori_loop(0, 3, lambda i, acc: acc + lax.dynamic_slice_in_dim(x, i, 2),
                             jnp.zeros(2))
    check_grads(window_sums, (x[0],), order=1, modes=("rev",))


# --- nested defs and lambdas ------------------------------------------------------------------

def nested_sibling_and_late_binding(x):
    def g(v):
        return v * k
    k = 3.0

    def body(i, c):
        return g(c) + x[i]
    k = x.sum()  # the value when fori_loop calls body (as Python sees it)
    return lax.fori_loop(0, 2, body, jnp.zeros(()))


def test_nested_functions_capture_current_values(x64):
    x = X.astype(np.float64)
    k = x.sum()
    expected = (0.0 * k + x[0]) * k + x[1]
    for got in both(nested_sibling_and_late_binding, x):
        np.testing.assert_allclose(got, expected)
    check_grads(nested_sibling_and_late_binding, (x,), order=1, modes=("rev",))


def test_nested_lambda_called_directly():
    def f(x):
        square = lambda v: v * v  # noqa: E731
        return square(x) + (lambda v: v + x)(1.0)
    for got in both(f, X):
        np.testing.assert_allclose(got, X * X + 1.0 + X, rtol=1e-6)


def recursive_nested(x):
    def loop(i, c):
        return loop(i, c)
    return lax.fori_loop(0, 2, loop, x)


def decorated_nested(x):
    @astjax.jit
    def body(i, c):
        return c
    return lax.fori_loop(0, 2, body, x)


@pytest.mark.parametrize("fn,text,words", [
    (recursive_nested, "def loop", "calls itself"),
])
def test_nested_function_limits_are_located(fn, text, words):
    with pytest.raises(UnsupportedSyntaxError, match=words) as info:
        astjax.jit(fn)(X)
    assert info.value.filename == __file__
    assert info.value.lineno == line_of(fn, text)


def test_decorated_nested_def():
    # a decorator on a nested def is a call on it, as in Python (it was a located error)
    np.testing.assert_array_equal(astjax.jit(decorated_nested)(X), X)


def grad_of_capturing_lambda(x, w):
    return astjax.grad(lambda v: (v * w).sum())(x)


def pairwise_squared_distances(xs):  # JAX's "Automatic vectorization" page, nested vmap
    return astjax.vmap(lambda x: astjax.vmap(lambda y: jnp.sum((x - y) ** 2))(xs))(xs)


def grad_reading_its_enclosing_argument(a, x):
    return astjax.grad(lambda y: jnp.sin(a * y) * a)(x)  # a ** 2 * cos(a * x)


def custom_jvp_of_capturing_lambda(x, w):
    return astjax.custom_jvp(lambda v: v * w)(x)


def test_transform_of_a_capturing_closure():
    # grad, vmap, ... of a nested function that reads the enclosing function's variables
    # were a located error ("cannot be compiled yet"); they now transform its lifted
    # function with the closure as an extra argument (ir/closure_transforms.py)
    np.testing.assert_allclose(astjax.jit(grad_of_capturing_lambda)(X, np.float32(2.0)),
                               np.full_like(X, 2.0))
    np.testing.assert_allclose(astjax.jit(vmap_of_capturing_lambda)(X.reshape(1, -1), X),
                               [np.sum(X * X)], rtol=1e-6)
    pts = np.float32([[0, 0], [3, 4], [1, 1]])
    want = ((pts[:, None] - pts[None]) ** 2).sum(-1)
    np.testing.assert_allclose(pairwise_squared_distances(pts), want)
    np.testing.assert_allclose(astjax.jit(pairwise_squared_distances)(pts), want)
    # d/dp sum_ij |p_i - p_j|^2 = 4 (n p_i - sum_j p_j): derivatives reach captured values
    np.testing.assert_allclose(
        astjax.grad(lambda p: jnp.sum(pairwise_squared_distances(p)))(pts),
        4 * (len(pts) * pts - pts.sum(0)), rtol=1e-6)
    a, x = 2.0, 0.5
    da, dx = astjax.jit(astjax.grad(grad_reading_its_enclosing_argument, argnums=(0, 1)))(a, x)
    np.testing.assert_allclose(da, 2 * a * np.cos(a * x) - a * a * x * np.sin(a * x),
                               rtol=1e-5)
    np.testing.assert_allclose(dx, -a ** 3 * np.sin(a * x), rtol=1e-5)
    # custom_jvp of such a closure compiles (tests/test_custom_closures.py); called before
    # it has a rule it is a located error (JAX: "No JVP defined for custom_jvp function")
    with pytest.raises(TypeError, match="custom_jvp function with no rule yet") as info:
        astjax.jit(custom_jvp_of_capturing_lambda)(X, np.float32(2.0))
    assert info.value.lineno == line_of(custom_jvp_of_capturing_lambda, "astjax.custom_jvp")


def vmap_of_capturing_lambda(xs, c):
    return astjax.vmap(lambda r: jnp.sum(r * c))(xs)


# --- errors -----------------------------------------------------------------------------------

def carry_dtype_changes(x):
    return lax.fori_loop(0, 3, lambda i, c: c.astype(jnp.int32), x)


def carry_rank_changes(x):
    return lax.fori_loop(0, 3, lambda i, c: c.sum(), x)


def carry_structure_changes(x):
    return lax.scan(lambda c, r: ((c, c), r), (x, x, x), x)


def branches_disagree(x):
    return lax.cond(x.sum() > 0, lambda: x, lambda: (x, x))


def branch_dtypes_disagree(x):
    return lax.switch(1, [lambda: x, lambda: x.astype(jnp.int32)])


def cond_fun_not_bool(x):
    return lax.while_loop(lambda c: c.sum(), lambda c: c * 2.0, x)


def pred_not_scalar(x):
    return lax.cond(x > 0, lambda: x, lambda: -x)


def scan_output_not_pair(x):
    return lax.scan(lambda c, r: c + r, 0.0, x)


def scan_over_scalar(x):
    return lax.scan(lambda c, r: (c, r), 0.0, x.sum())


def select_dtypes_disagree(x):
    return lax.select(x > 0, x, jnp.zeros(4, jnp.int32))


def slice_sizes_dynamic(x):
    return lax.dynamic_slice(x, (0,), (x.shape[0] - 1,))


@pytest.mark.parametrize("fn,cls,words", [
    (carry_dtype_changes, TypeError, "(?s)carry input and carry output must have equal types.*"
                                     "dtypes do not match"),
    (carry_rank_changes, TypeError, "shapes do not match"),
    (carry_structure_changes, TypeError, "scan body function carry input and carry output "
                                         "must have the same pytree structure"),
    (branches_disagree, TypeError, "true_fun output and false_fun output must have same type "
                                   "structure"),
    (branch_dtypes_disagree, TypeError, "branch 0 output and branch 1 output must have "
                                        "identical types"),
    (cond_fun_not_bool, TypeError, "cond_fun must return a boolean scalar"),
    (pred_not_scalar, TypeError, "Pred must be a scalar"),
    (scan_output_not_pair, TypeError, "scan body output must be a pair"),
    (scan_over_scalar, ValueError, "no leading axis to scan over"),
    (select_dtypes_disagree, TypeError, "select cases must have the same dtypes"),
])
def test_errors_eager_and_located_under_jit(fn, cls, words):
    x = np.ones(4, np.float32)
    if fn not in (branches_disagree, branch_dtypes_disagree):  # eagerly, only the branch
        # taken runs, so branches are not compared
        with pytest.raises(cls, match=words):
            fn(x)
    with pytest.raises(cls, match=words) as info:
        astjax.jit(fn)(x)
    assert info.value.filename == __file__
    assert info.value.lineno == line_of(fn, "lax.")


def test_slice_sizes_must_be_static():
    with pytest.raises(TypeError, match="slice_sizes must be a tuple of ints known"):
        astjax.jit(slice_sizes_dynamic)(np.ones(4, np.float32))


def test_eager_shape_check_and_bad_arguments():
    with pytest.raises(TypeError, match="shapes do not match"):
        lax.fori_loop(0, 2, lambda i, c: jnp.concatenate([c, c]), jnp.ones(2))
    with pytest.raises(TypeError, match="must be callable"):
        lax.fori_loop(0, 2, 3, 1.0)
    with pytest.raises(TypeError, match="integer scalar"):
        lax.fori_loop(0, 2.5, lambda i, c: c, 1.0)
    with pytest.raises(ValueError, match="Empty branch sequence"):
        lax.switch(0, [], 1.0)
    with pytest.raises(ValueError, match="disagrees with leading axis sizes"):
        lax.scan(lambda c, x: (c, x), 0.0, np.ones(3), length=4)
    with pytest.raises(TypeError, match="slice_sizes .* must be less than or equal"):
        lax.dynamic_slice(np.ones(3, np.float32), (0,), (4,))


# --- the numba backend ------------------------------------------------------------------------

def test_fori_loop_on_the_numba_backend():
    before = astjax.config.astjax_jit_backend
    astjax.config.update("astjax_jit_backend", "numba")
    try:
        got = astjax.jit(fori_module_body)(X, 5)
    finally:
        astjax.config.update("astjax_jit_backend", before)
    np.testing.assert_allclose(got, fori_module_body(X, 5), rtol=1e-5)


def _scan_length_7(x):
    return lax.scan(lambda c, v: (c, c + v), 0.0, x, length=7)


def _scan_two_sizes(x, y):
    return lax.scan(lambda c, v: (c + v[0] * v[1], c), 0.0, (x, y))


def test_scan_in_compiled_code_checks_length_and_leading_sizes():
    """As JAX's: a `length` that disagrees with xs's leading axis, or xs leaves of different
    leading sizes, are errors at the user's line (compiled code raised NumPy's "setting an
    array element with a sequence" with no line)."""
    v = np.float32([1, 2, 3, 4])
    with pytest.raises(ValueError, match=r"test_lax.py:\d+: scan got a `length` argument "
                       r"which disagrees"):
        astjax.jit(_scan_length_7)(v)
    with pytest.raises(ValueError, match=r"test_lax.py:\d+: scan got values with different "
                       r"leading axis sizes"):
        astjax.jit(_scan_two_sizes)(v, v[:3])
    carry, ys = astjax.jit(lambda x: lax.scan(lambda c, a: (c + a, c), 0.0, x, length=4))(v)
    np.testing.assert_allclose(carry, 10.0)
    np.testing.assert_allclose(ys, [0.0, 1.0, 3.0, 6.0])
