"""``raise``/``assert`` on values known while code is generated (as JAX runs them while
tracing), f-strings, and ``*args`` parameters and ``f(*xs)`` calls in compiled code."""
import numpy as np
import pytest

import astjax
import astjax.numpy as jnp
from astjax._src.errors import TypeCheckError, UnsupportedSyntaxError

A = np.arange(1.0, 4.0, dtype=np.float32)
B = np.full(3, 2.0, np.float32)


def line_of(text):
    with open(__file__) as f:
        for k, line in enumerate(f, 1):
            if text in line and "line_of(" not in line:
                return k
    raise AssertionError(text)


# --- raise and assert ----------------------------------------------------------------------

def checked_sum(x):
    if x.ndim != 1:
        raise ValueError(f"expected 1-D, got {x.ndim}-D {x.dtype}")  # RAISE-1D
    assert x.dtype == jnp.float32, "float32 please"  # ASSERT-F32
    return jnp.sum(x * 2)


def test_a_static_raise_not_taken_disappears():
    assert float(astjax.jit(checked_sum)(A)) == 12.0
    src = astjax.make_source(astjax.jit(checked_sum))(A)
    assert "raise" not in src and "expected" not in src


def test_a_static_raise_taken_raises_the_users_exception_at_their_line():
    with pytest.raises(ValueError) as info:
        astjax.jit(checked_sum)(np.ones((2, 3), np.float32))
    err = info.value
    assert err.filename == __file__ and err.lineno == line_of("RAISE-1D")
    assert str(err).startswith(f"{__file__}:{err.lineno}:")
    assert "expected 1-D, got 2-D float32" in str(err)
    # as JAX: raised again on the next call of those types (nothing was cached)
    with pytest.raises(ValueError, match="expected 1-D"):
        astjax.jit(checked_sum)(np.ones((2, 3), np.float32))


def test_a_static_assert():
    with pytest.raises(AssertionError) as info:
        astjax.jit(checked_sum)(np.ones(3, np.int32))
    assert info.value.lineno == line_of("ASSERT-F32")
    assert "float32 please" in str(info.value)


def needs_positive(x, n):
    assert n > 0  # ASSERT-N
    if n == 7:
        raise NotImplementedError("seven") from KeyError("cause")
    return x * n


def test_static_arguments_and_cause():
    jitted = astjax.jit(needs_positive, static_argnums=1)
    np.testing.assert_allclose(jitted(A, 2), A * 2)
    with pytest.raises(AssertionError) as info:
        jitted(A, 0)
    assert info.value.lineno == line_of("ASSERT-N")
    with pytest.raises(NotImplementedError, match="seven") as info:
        jitted(A, 7)
    assert isinstance(info.value.__cause__, KeyError)


class ShapeMismatch(Exception):
    def __init__(self, what, ndim):
        super().__init__(what, ndim)


def one_d_only(x):
    if x.ndim == 1:
        return x * 2.0
    raise ShapeMismatch("need 1-D", x.ndim)  # RAISE-CUSTOM


def loss_through_callee(x):
    return jnp.sum(one_d_only(x) ** 2)


def test_a_raise_after_an_early_return_in_a_differentiated_and_vmapped_callee():
    # the raise ends its path: the function returns an array on every path that falls on
    np.testing.assert_allclose(astjax.grad(loss_through_callee)(A), 8 * A)
    np.testing.assert_allclose(astjax.vmap(astjax.grad(loss_through_callee))(np.stack([A, B])),
                               8 * np.stack([A, B]))
    np.testing.assert_allclose(astjax.jit(astjax.vmap(one_d_only))(np.stack([A, B])),
                               2 * np.stack([A, B]))
    # a user's own exception class is raised itself, with a note naming the line
    with pytest.raises(ShapeMismatch) as info:
        astjax.grad(loss_through_callee)(np.ones((2, 2), np.float32))
    assert type(info.value) is ShapeMismatch and info.value.args == ("need 1-D", 2)
    assert f"{__file__}:{line_of('RAISE-CUSTOM')}" in info.value.__notes__[0]


def value_check(x):
    if jnp.sum(x) > 0:
        raise ValueError("positive")  # RAISE-DYNAMIC
    return x


def decided_by_a_value_from_sizes(x):
    n = x.shape[0] * 2
    if jnp.sum(x) > n:
        m = 1
    else:
        m = n
    if m > 3:
        raise ValueError("m")  # RAISE-DERIVED
    return x


@pytest.mark.parametrize("fn,tag", [(value_check, "RAISE-DYNAMIC"),
                                    (decided_by_a_value_from_sizes, "RAISE-DERIVED")])
def test_a_raise_on_a_path_array_values_decide_is_a_located_error(fn, tag):
    with pytest.raises(TypeCheckError, match="known at run time") as info:
        astjax.jit(fn)(A)
    assert info.value.lineno == line_of(tag)


def same_size_sum(x, y):
    assert x.ndim == 1
    if x.shape != y.shape:
        raise ValueError(f"shapes {x.shape} and {y.shape} differ")  # RAISE-SIZES
    for i in range(x.shape[0]):
        assert i < 5, f"row {i}: at most 5 rows"
    return checked_sum(x + y)


def test_checks_on_array_sizes_run_in_the_compiled_code():
    # sizes are run-time values in astjax, known to JAX while tracing: the check runs when
    # the code runs (it raised 'reached only when a value known at run time says so')
    jitted = astjax.jit(same_size_sum)
    assert float(jitted(A, B)) == float(2 * np.sum(A + B))
    with pytest.raises(ValueError, match=r"shapes \(3,\) and \(4,\) differ") as info:
        jitted(A, np.ones(4, np.float32))
    assert f"{__file__}:{line_of('RAISE-SIZES')}" in str(info.value)
    with pytest.raises(AssertionError, match="row 5: at most 5 rows"):
        jitted(np.ones(6, np.float32), np.ones(6, np.float32))
    np.testing.assert_allclose(astjax.grad(same_size_sum)(A, B), np.full(3, 2.0))
    with pytest.raises(ValueError, match="differ"):
        astjax.grad(same_size_sum)(A, np.ones(2, np.float32))
    np.testing.assert_allclose(astjax.vmap(same_size_sum)(np.stack([A, B]), np.stack([B, A])),
                               np.full(2, 2 * np.sum(A + B)))
    with pytest.raises(AssertionError, match="row 5"):
        astjax.vmap(same_size_sum)(np.ones((2, 6), np.float32), np.ones((2, 6), np.float32))


def counter_check(x, bad):
    for i in range(3):
        if i == bad:
            raise IndexError(f"trip {i} of 3")
        x = x + i
    return x


def test_a_raise_on_a_loop_counter_unrolls_the_loop():
    jitted = astjax.jit(counter_check, static_argnums=1)
    np.testing.assert_allclose(jitted(A, 5), A + 3)
    with pytest.raises(IndexError, match="trip 1 of 3"):
        jitted(A, 1)


def bare_raise(x):
    raise  # noqa: PLE0704


def test_a_bare_raise_is_refused():
    with pytest.raises(UnsupportedSyntaxError, match="bare"):
        astjax.jit(bare_raise)(A)


# --- f-strings ------------------------------------------------------------------------------

def fstring_keys(x):
    params = {}
    for i in range(3):  # (unrolled: the key depends on the counter, as in JAX's trace)
        params[f"w{i}"] = x * (i + 1)
    spec = f"{'ij'[:x.ndim]}->{'i' if x.ndim else ''}"
    width = 3
    label = f"{x.ndim:0{width}d}|{'a'!r}|{x.dtype!s:>8}"
    return jnp.einsum(spec, params["w2"]) + params["w0"], label


def test_fstrings_of_static_values_are_constants():
    out, label = astjax.jit(lambda x: fstring_keys(x)[0])(A), fstring_keys(A)[1]
    np.testing.assert_allclose(out, 4 * A)
    assert label == "001|'a'| float32"
    # the same string comes out of compiled code
    assert astjax.jit(lambda x: fstring_keys(x)[1])(A) == label


def fstring_of_values(x):
    return float(f"{x[0]}")  # FSTRING-DYNAMIC


def test_an_fstring_of_run_time_values_is_a_located_error():
    with pytest.raises(TypeCheckError, match="f-string formats a value known only at run"
                       ) as info:
        astjax.jit(fstring_of_values)(A)
    assert info.value.lineno == line_of("FSTRING-DYNAMIC")


# --- *args -----------------------------------------------------------------------------------

def total(*xs):
    return sum(xs)


def scaled(x, *rest, scale=2.0):
    out = x
    for r in rest:
        out = out + r * scale
    return jnp.sum(out) + len(rest) + rest[0][0] if rest else jnp.sum(out)


def grid(*xi, indexing="xy"):  # jnp.meshgrid's signature, for two arrays
    if len(xi) != 2:
        raise NotImplementedError(f"grid of {len(xi)} arrays")
    x, y = xi
    if indexing == "xy":
        x, y = x[None, :], y[:, None]
    else:
        x, y = x[:, None], y[None, :]
    return jnp.broadcast_arrays(*(x, y))


def test_varargs_functions_jitted_and_differentiated():
    np.testing.assert_allclose(astjax.jit(total)(A, B), A + B)
    np.testing.assert_allclose(astjax.jit(total)(A, B, A), 2 * A + B)
    assert float(astjax.jit(total)()) == 0.0
    expect = np.sum(A + 2 * B + 2 * B) + 2 + B[0]
    np.testing.assert_allclose(astjax.jit(scaled)(A, B, B), expect)
    np.testing.assert_allclose(astjax.jit(scaled)(A, scale=1.0), np.sum(A))
    # argnums index the positional arguments, those in *rest included (as JAX)
    np.testing.assert_allclose(astjax.grad(scaled, argnums=2)(A, B, B), np.full(3, 2.0))
    np.testing.assert_allclose(astjax.grad(scaled, argnums=1)(A, B, B),
                               np.array([3.0, 2.0, 2.0]))
    np.testing.assert_allclose(astjax.grad(scaled, argnums=(0, 1))(A, B)[1],
                               np.array([3.0, 2.0, 2.0]))


def product(*xs):
    out = xs[0]
    for v in xs[1:]:
        out = out * v
    return jnp.sum(out)


def test_transforms_of_a_varargs_function():
    # their generated wrappers call it (jacrev/jacfwd/hessian: 'cannot call product on
    # values computed at run time'; checkpoint: 'takes 1 arguments, got 2')
    np.testing.assert_allclose(astjax.jacrev(total, argnums=1)(A, B), np.eye(3))
    np.testing.assert_allclose(astjax.jacfwd(product, argnums=1)(A, B), A)
    np.testing.assert_allclose(astjax.hessian(product, argnums=(0, 1))(A, B)[0][1],
                               np.eye(3))
    primal, tangent = astjax.jvp(product, (A, B), (B, A))
    assert float(primal) == float(np.sum(A * B))
    assert float(tangent) == float(np.sum(B * B + A * A))
    _, pull = astjax.vjp(product, A, B, A)
    for got, want in zip(pull(np.float32(1.0)), (B * A, A * A, A * B)):
        np.testing.assert_allclose(got, want)
    assert float(astjax.jit(astjax.checkpoint(product))(A, B)) == float(np.sum(A * B))
    np.testing.assert_allclose(astjax.grad(astjax.checkpoint(product), argnums=1)(A, B, B),
                               A * B)
    np.testing.assert_allclose(astjax.vmap(total, in_axes=(0, None))(np.stack([A, B]), A),
                               np.stack([2 * A, A + B]))


def listed(x, *ys):
    parts = list((x,) + ys)
    back = tuple(parts)
    return jnp.sum(back[0] * back[1]) + len(list(ys[1:]))


def test_list_and_tuple_of_a_tuple_differentiate():
    # jnp.meshgrid returns list(grids): grad raised 'astjax cannot differentiate this
    # statement yet'
    assert float(astjax.jit(listed)(A, B)) == float(np.sum(A * B))
    np.testing.assert_allclose(astjax.grad(listed)(A, B), B)
    np.testing.assert_allclose(astjax.vmap(astjax.grad(listed, argnums=1))(
        np.stack([A, B]), np.stack([B, A])), np.stack([A, B]))
    primal, tangent = astjax.jvp(listed, (A, B), (B, A))
    assert float(tangent) == float(np.sum(B * B + A * A))


def calls_with_star(x, y):
    ys = (y, y * 2)
    pair = [x, y]
    a = scaled(x, *ys, scale=3.0)
    b = jnp.sum(total(*pair, *ys))
    gx, gy = grid(*pair, indexing="ij")
    return a + b + jnp.sum(gx * gy) + scaled(x)


def calls_with_star_numpy(x, y):
    a = np.sum(x + 3 * y + 6 * y) + 2 + y[0]
    b = np.sum(x + y + y + 2 * y)
    gx, gy = np.meshgrid(x, y, indexing="ij")
    return a + b + np.sum(gx * gy) + np.sum(x)


def test_calls_of_varargs_callees_with_star():
    want = calls_with_star_numpy(A, B)
    np.testing.assert_allclose(astjax.jit(calls_with_star)(A, B), want, rtol=1e-6)
    # d/dx: 1 (a) + 1 (b) + sum_j y_j (grid) + 1, each element
    np.testing.assert_allclose(astjax.grad(calls_with_star)(A, B),
                               np.full(3, 3 + B.sum()), rtol=1e-6)
    gx, gy = astjax.jit(lambda x, y: grid(x, y))(A, B[:2])
    want_x, want_y = np.meshgrid(A, B[:2])
    np.testing.assert_array_equal(gx, want_x)
    np.testing.assert_array_equal(gy, want_y)


def nested_varargs(x):
    first = lambda *zs: zs[0] * len(zs)  # noqa: E731

    def plus_x(*ws):
        return sum(ws) * x
    shape = (3, 1)
    return first(x, x, x) + plus_x(x, 1.0) + x.reshape(*shape)[:, 0]


def test_nested_varargs_functions_and_a_starred_method_call():
    np.testing.assert_allclose(astjax.jit(nested_varargs)(A), 3 * A + (A + 1) * A + A)
    np.testing.assert_allclose(astjax.grad(lambda x: jnp.sum(nested_varargs(x)))(A),
                               3 + 2 * A + 1 + 1)


def star_of_a_grown_list(x):
    xs = []
    for i in range(x.shape[0]):
        xs.append(x[i])
    return total(*xs)  # STAR-LIST


def kwargs_fn(x, **kw):
    return x


def test_unpacking_needs_a_known_length_and_kwargs_stay_refused():
    with pytest.raises(TypeCheckError, match="length is known") as info:
        astjax.jit(star_of_a_grown_list)(A)
    assert info.value.lineno == line_of("STAR-LIST")
    with pytest.raises(TypeError, match=r"\*\*kw"):
        astjax.jit(kwargs_fn)(A)


SUM_OPTIONS = dict(axis=(0,), keepdims=True)


def sum_with_options(x):
    return jnp.sum(jnp.sin(x), **SUM_OPTIONS)


def test_double_star_of_a_constant_dict_passes_its_keywords():
    """f(x, **kw) with a global dict of constants (it raised 'sum(): keywords must be
    strings'); a dict of run-time values, or a keyword given twice, is a located error."""
    want = np.sum(np.sin(A), axis=(0,), keepdims=True)
    np.testing.assert_allclose(astjax.jit(sum_with_options)(A), want, rtol=1e-6)
    np.testing.assert_allclose(astjax.grad(lambda x: sum_with_options(x)[0])(A), np.cos(A),
                               rtol=1e-6)
    with pytest.raises(TypeCheckError, match="dict of constants"):
        astjax.jit(lambda x: jnp.sum(x, **{"axis": x.shape[0] - 3}))(A)
    with pytest.raises(TypeCheckError, match="multiple values for keyword argument 'axis'"):
        astjax.jit(lambda x: jnp.sum(x, axis=0, **SUM_OPTIONS))(A)


def test_numba(numba_backend):
    jitted = astjax.jit(lambda x, *ys: same_size_sum(x, total(*ys)))
    got = jitted(A, B, A)
    (compiled,) = jitted.cache.values()
    assert compiled.backend == "numba", compiled.fallback_reason
    assert float(got) == float(np.sum(2 * A + B) * 2)
    with pytest.raises(ValueError, match=r"shapes \(2,\) and \(3,\) differ"):
        jitted(A[:2], B, A)


VARARGS_MODULE = """
def total(*xs):
    if len(xs) > 5:
        raise ValueError(f"too many: {len(xs)}")
    return sum(xs)


def f(x):
    return total(*(x, x * 2)) + total(x)
"""


def test_a_varargs_callee_is_cached_across_processes(tmp_path):
    from .test_source_cache import _run
    (tmp_path / "varmod.py").write_text(VARARGS_MODULE)
    first = _run(tmp_path, setup="from varmod import f")
    assert first["stats"]["stores"] == 1, first["log"]  # was 'total reached no known way'
    second = _run(tmp_path, setup="from varmod import f")
    assert second["stats"]["hits"] == 1, second["log"]
    assert second["out"] == first["out"] == [0.0, 4.0, 8.0, 12.0]


def _repeat_then_add(x, *rest):
    for _ in range(rest[0]):  # rest[0] must be static: a loop count in Python
        x = x * 2
    return x + rest[1]


def test_static_argnums_pick_elements_of_star_args():
    # as in JAX, static_argnums=1 of f(x, *rest) is rest[0] alone; it made every element
    # of rest static ("static argument 'rest' of f must be hashable, got ndarray")
    jitted = astjax.jit(_repeat_then_add, static_argnums=1)
    x = np.float32([1.0, 2.0])
    for n, offset in ((2, 1.0), (2, 3.0), (3, 1.0)):
        np.testing.assert_allclose(jitted(x, n, np.full(2, offset, np.float32)),
                                   x * 2 ** n + offset)
    assert len(jitted.cache) == 2  # one compile per value of the static element only


def array_api_loss(x, xp=jnp):
    return xp.sum(xp.tanh(x) ** 2) + xp.linalg.norm(x)


def mean_with(m, x):
    return m.mean(x, axis=0)


def calls_array_api_loss(x):
    return 2.0 * array_api_loss(x)


def test_a_module_passed_as_a_value_is_called_through():
    """xp.sum(x) of a module given as a default or a static argument, as array-API code
    writes it (it was "cannot call sum() of a constant with run-time values")."""
    x = np.arange(6, dtype=np.float32).reshape(2, 3) / 5
    want = np.sum(np.tanh(x) ** 2) + np.linalg.norm(x)
    np.testing.assert_allclose(astjax.jit(array_api_loss)(x), want, rtol=1e-6)
    np.testing.assert_allclose(astjax.grad(array_api_loss)(x),
                               2 * np.tanh(x) / np.cosh(x) ** 2 + x / np.linalg.norm(x),
                               rtol=1e-5)
    np.testing.assert_allclose(astjax.jit(mean_with, static_argnums=0)(jnp, x), x.mean(0))
    # a callee's default module, under grad (its copied tree held the module: deepcopy
    # refused it, "cannot pickle 'module' object")
    np.testing.assert_allclose(astjax.grad(calls_array_api_loss)(x),
                               2 * (2 * np.tanh(x) / np.cosh(x) ** 2 + x / np.linalg.norm(x)),
                               rtol=1e-5)


_D = {"b": np.float32([1.0, 2.0]), "a": np.float32([10.0]), "c": np.float32([100.0, 200.0])}


def _sums_in_key_order(d):
    return [v.sum() for _, v in sorted(d.items())], [d[k].sum() for k in sorted(d)]


def _sums_reversed(d):
    return [d[k].sum() for k in sorted(d.keys(), reverse=True)]


def _sorted_values(d):
    return sorted(d.values())


def test_sorted_of_a_dicts_items_and_keys_compiles():
    """sorted(d.items()), sorted(d) and sorted(d.keys(), reverse=True) of a dict of arrays
    (its keys are constants, as in JAX) compile (they raised "astjax cannot call 'sorted' on
    values computed at run time"); an order that depends on run-time values is refused at
    the line."""
    got = astjax.jit(_sums_in_key_order)(_D)
    np.testing.assert_allclose(got, [[10.0, 3.0, 300.0]] * 2)
    np.testing.assert_allclose(astjax.jit(_sums_reversed)(_D), [300.0, 3.0, 10.0])
    with pytest.raises(TypeCheckError, match=r"test_static_checks_and_varargs.py:\d+.*sorted\(\) "
                       r"of .*order must follow from constants"):
        astjax.jit(_sorted_values)(_D)
