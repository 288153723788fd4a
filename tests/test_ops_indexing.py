"""x[idx] (op getitem) and the x.at[idx] updates."""
import numpy as np
import pytest

import astjax
import astjax.numpy as jnp
from astjax._src.errors import ShapeError
from astjax._src.ir.types import ArrayType, Static, array_type, type_of_value
from astjax._src.ops.indexing import IndexUpdateHelper
from astjax._src.ops.registry import REGISTRY, op_for_object
from astjax._src.runtime.eager import abstract_param

from .op_checks import DYN, agree, check, f32, i32



def index_type(x_type, index):
    return REGISTRY["getitem"].infer({"x": x_type}, {"index": index})


def dyn(value):
    return astjax.device_put(np.asarray(value, np.int32))


X = np.arange(2 * 3 * 4 * 5, dtype=np.float32).reshape(2, 3, 4, 5)
I = np.array([0, 1, 1])
m = np.zeros((3, 4), bool)
m[[0, 2, 2], [1, 0, 3]] = True

CASES = [
    0, -1, (1, 2), (1, -1, 3, 4), (), Ellipsis, None, slice(None),
    (slice(1, None), slice(None, None, 2)), (slice(None, None, -1),), (Ellipsis, 0),
    (0, Ellipsis, 1), (None, 0, None), (slice(0, 1),), (slice(1, 2), Ellipsis),
    (slice(None), slice(-1, None)), (slice(None), slice(4, 2, -1)), (slice(5, 10),),
    (slice(None), slice(None), slice(3, 0, -2)), (Ellipsis, None),
    # advanced: arrays, adjacency, separation
    (I,), (I, I), (slice(None), I), (slice(None), I, I), (I, slice(None), I),
    (slice(None), None, I, I), (I, None, I), (0, slice(None), I), (slice(None), 0, I),
    (I, 0), (Ellipsis, I), (I, Ellipsis, I), (np.array([[0], [1]]), I),
    (slice(None), np.array([[0, 1], [2, 0]])), (np.array([1]),), (slice(None), np.array([-1, 0])),
    (np.array([], np.int32),), (np.array([[0, 1]]), slice(None), np.array([[1], [0]])),
    (I, Ellipsis, slice(None), slice(None), I), (slice(None), slice(None), I, I),
    # nested lists inside a tuple are index arrays
    ([0, 1], slice(None)), (slice(None), [[0], [2]]), ([True, False],), ([], Ellipsis),
    # boolean masks
    (np.array([True, False]),), (slice(None), m), (0, m), (m[None].repeat(2, 0),),
    (slice(None), m, 1), (np.array([True, False]), slice(None), I[:1]),
    (slice(None), np.zeros(3, bool)),
]


@pytest.mark.parametrize("index", CASES, ids=[str(i) for i in range(len(CASES))])
def test_getitem_matches_numpy(index):
    out = check("getitem", X, index)
    expected = X[index]
    assert out.shape == expected.shape
    np.testing.assert_array_equal(out, expected)
    np.testing.assert_array_equal(astjax.device_put(X)[index], expected)


@pytest.mark.parametrize("dtype", [np.int32, np.bool_, np.float16, np.complex64])
def test_getitem_dtypes(dtype):
    x = X.astype(dtype)
    out = check("getitem", x, (0, slice(1, 3), I))
    assert out.dtype == dtype
    np.testing.assert_array_equal(out, x[0, 1:3, I])


def test_getitem_x64():
    old = astjax.config.jax_enable_x64
    astjax.config.update("jax_enable_x64", True)
    try:
        x = np.arange(6.0).reshape(2, 3)
        out = check("getitem", x, (slice(None), np.array([2, 0], np.int64)))
        assert out.dtype == np.float64
    finally:
        astjax.config.update("jax_enable_x64", old)


def test_zero_d():
    x = np.float32(3.5)
    assert check("getitem", x, ()).shape == ()
    assert check("getitem", x, None).shape == (1,)
    assert check("getitem", x, Ellipsis).shape == ()
    assert check("getitem", x, (None, Ellipsis, None)).shape == (1, 1)


def test_dynamic_scalars_and_slice_bounds():
    i = dyn(1)
    np.testing.assert_array_equal(check("getitem", X, i), X[1])
    np.testing.assert_array_equal(check("getitem", X, (slice(None), i, I)), X[:, 1, I])
    np.testing.assert_array_equal(check("getitem", X, (0, slice(i, dyn(3)))), X[0, 1:3])
    np.testing.assert_array_equal(check("getitem", X, (0, slice(None, None, dyn(-1)))),
                                  X[0, ::-1])
    np.testing.assert_array_equal(check("getitem", X, dyn([1, 0])), X[[1, 0]])
    np.testing.assert_array_equal(check("getitem", X, (0, astjax.device_put(m))), X[0, m])
    x = astjax.device_put(X)
    np.testing.assert_array_equal(x[i, -i], X[1, -1])
    np.testing.assert_array_equal(x[x > 100], X[X > 100])


def test_zero_width_ellipsis_separates_advanced_indices_as_numpy():
    # generated code indexes with NumPy, so the rule follows NumPy here (JAX would keep
    # the two arrays adjacent and give shape (2, 3))
    y = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    out = check("getitem", y, (slice(None), I, Ellipsis, I))
    assert out.shape == (3, 2)
    np.testing.assert_array_equal(out, y[:, I, ..., I])


def test_ones_of_slices():
    t = array_type(f32, 3)
    assert index_type(t, (slice(0, 1), slice(2, 3), slice(-1, None))).ones == (True,) * 3
    assert index_type(t, (slice(4, 3, -1), slice(0, None, -1), slice(None, 1))).ones == \
        (True,) * 3
    assert index_type(t, (slice(1, 5, 10), slice(-3, -2), slice(None, -1))).ones == \
        (True, True, False)
    assert index_type(t, (slice(None), slice(None, None, -1), slice(1, 3))).ones == \
        (False,) * 3
    # x[i:i+1] with a dynamic i cannot be known to be 1
    assert index_type(t, (slice(DYN, DYN),)).ones == (False,) * 3
    # on a dim known to be 1 the length is exact
    one = array_type(f32, ones=(True,))
    assert index_type(one, slice(None)).ones == (True,)
    assert index_type(one, slice(1, None)).ones == (False,)
    assert index_type(one, slice(None, None, -1)).ones == (True,)
    assert index_type(t, (None, Ellipsis, None)).ones == (True, False, False, False, True)


def test_ones_of_advanced_indices():
    t = array_type(f32, 3)
    idx1 = array_type(i32, ones=(True,))
    assert index_type(t, (idx1,)).ones == (True, False, False)
    assert index_type(t, (slice(None), idx1, array_type(i32, 1))).ones == (False, False)
    assert index_type(t, (array_type(np.bool_, 2),)).ones == (False, False)  # data-dependent
    t2 = index_type(t, (idx1, slice(None), array_type(i32, ones=(False, True))))
    assert t2.ones == (False, True, False)
    assert index_type(array_type(f32, 2, weak=True), (0,)).weak


@pytest.mark.parametrize("index,match", [
    ((0, 0, 0, 0, 0), "too many indices for an array of rank 4: the index uses 5 axes"),
    ((m, m, 0), "too many indices"),
    ((Ellipsis, 0, Ellipsis), "only one Ellipsis"),
    ([0, 1], "a list as the index is not supported"),
    (1.5, "invalid index 1.5"),
    ("a", "invalid index"),
    (np.array([0.5]), "index arrays must be integer or boolean"),
    (slice(0, 2, 0), "slice step cannot be zero"),
    (slice(0.5, 2), "slice bounds must be integers"),
    ((slice(None), [[0, 1], [2]]), "a list inside an index must hold only"),
])
def test_getitem_errors(index, match):
    with pytest.raises(ShapeError, match=r"getitem\(\): .*" + match):
        jnp.getitem(X, index)


_BOOL_SCALAR_INDICES = [True, False, (0, True), (slice(None), True), (slice(None), False),
                        (True, True), (np.array([0, 1]), True), (0, slice(None), True),
                        (Ellipsis, True), (np.True_,), (True, np.array([True, False]))]


def bool_scalar_indexing(x):
    return (x[True], x[False], x[0, True], x[:, True], x[True, 0] * 2.0, x.at[True].set(5.0),
            x.at[False].add(1.0), x[..., True])


def _sum_of_bool_indexed(x):
    return jnp.sum(x[True] ** 2) + jnp.sum(x[:, True, 0])


def test_boolean_scalar_indices_as_in_numpy_and_jax():
    """Found by fuzzing: x[True] said boolean scalar indices are unsupported 'as in JAX';
    JAX, like NumPy, reads one as a 0-d mask (x[True] is 1 x x.shape, x[False] 0 x ...)."""
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    for index in _BOOL_SCALAR_INDICES:
        out = check("getitem", jnp.asarray(x), index)
        assert out.shape == x[index].shape, index
        np.testing.assert_array_equal(out, x[index])
    assert index_type(array_type(f32, 2), (True,)).ones == (True, False, False)
    assert index_type(array_type(f32, 2), (False, 0)).ones == (False, False)
    assert index_type(array_type(f32, 1), array_type(np.bool_, 0)).ones == (False, False)
    eager = bool_scalar_indexing(jnp.asarray(x))
    for outs in (astjax.jit(bool_scalar_indexing)(x),
                 [o[1] for o in astjax.vmap(bool_scalar_indexing)(np.stack([x, x]))]):
        for got, want in zip(outs, eager):
            assert got.shape == want.shape
            np.testing.assert_array_equal(got, want)
    grad = 2 * x
    grad[:, 0, :] += 1  # x[:, True, 0] is x[:, 0] with an axis of size 1
    for g in (astjax.grad(_sum_of_bool_indexed), astjax.jit(astjax.grad(_sum_of_bool_indexed))):
        np.testing.assert_array_equal(g(x), grad)


def test_getitem_symbolic_errors():
    with pytest.raises(ShapeError, match="slice bounds must be integers"):
        index_type(array_type(f32, 1), slice(array_type(f32, 0), None))
    with pytest.raises(IndexError):  # out of bounds: NumPy's error, not JAX's clamping
        jnp.getitem(X, 5)
    assert op_for_object(__import__("operator").getitem) is REGISTRY["getitem"]


# --- x.at[idx] -----------------------------------------------------------------------------------

A = np.arange(12, dtype=np.float32).reshape(3, 4)
REPEATED = (np.array([0, 2, 0]), slice(1, 3))


@pytest.mark.parametrize("method,ufunc", [("add", np.add), ("multiply", np.multiply),
                                          ("min", np.minimum), ("max", np.maximum),
                                          ("subtract", np.subtract), ("mul", np.multiply)])
@pytest.mark.parametrize("index,values", [
    (REPEATED, np.array([[5.0, -1.0]], np.float32)), (1, 7.0), ((Ellipsis, 0), 2.0),
    ((slice(None), [3, 3]), np.float32(3)), (A > 6, 100.0), ((), 2.0), ((None, 0), 3.0)])
def test_accumulating_updates(method, ufunc, index, values):
    x = astjax.device_put(A)
    out = getattr(x.at[index], method)(values)
    expected = A.copy()
    ufunc.at(expected, index, values)
    np.testing.assert_array_equal(out, expected)
    assert out.dtype == f32
    np.testing.assert_array_equal(x, A)  # the input is never modified
    name = "at_multiply" if method == "mul" else f"at_{method}"
    agree(REGISTRY[name].infer({"x": type_of_value(x), "values": type_of_value(values)},
                               {"index": abstract_param(index)}), out)


@pytest.mark.parametrize("index,values", [
    (REPEATED, np.array([[5.0, -1.0]], np.float32)), (1, 7.0), (A > 6, 0.0),
    ((slice(None), dyn([0, 0])), np.array([1.0, 2.0, 3.0], np.float32)[:, None]),
    ((dyn(2), slice(dyn(1), None)), np.float32(9))])
def test_set(index, values):
    x = astjax.device_put(A)
    out = check("at_set", x, values, index)
    expected = A.copy()
    expected[abstract_index(index)] = values  # repeated indices: the last write wins
    np.testing.assert_array_equal(out, expected)
    np.testing.assert_array_equal(x.at[index].set(values), expected)
    np.testing.assert_array_equal(x, A)


def abstract_index(index):
    """The index with Arrays as NumPy arrays."""
    if isinstance(index, tuple):
        return tuple(abstract_index(i) for i in index)
    if isinstance(index, slice):
        return slice(*(abstract_index(v) for v in (index.start, index.stop, index.step)))
    return np.asarray(index) if isinstance(index, astjax.Array) else index


def test_values_cast_to_x_dtype():
    x = astjax.device_put(np.arange(4, dtype=np.int32))
    out = check("at_set", x, 2.7, 1)
    assert out.dtype == i32 and out.tolist() == [0, 2, 2, 3]
    out = check("at_add", x, np.array([1.5, 1.5], np.float32), np.array([3, 3]))
    assert out.dtype == i32 and out.tolist() == [0, 1, 2, 6]  # 3 + 1.5 + 1.5, as in JAX
    b = np.zeros(3, bool)
    assert check("at_add", b, 1, np.array([0, 0])).tolist() == [True, False, False]
    c = check("at_set", np.zeros(2, np.float32), np.complex64(1 + 2j), 0)
    assert c.dtype == f32 and c.tolist() == [1.0, 0.0]


def mixed_updates(x, u8, big, b, i2):
    return (x.at[0].multiply(2.5), x.at[0].add(2.5), x.at[i2].add(2.5), x.at[i2].multiply(2.5),
            u8.at[0].subtract(20.5), u8.at[0].max(-3), u8.at[0].min(-3), u8.at[0].add(300),
            x.at[0].max(jnp.nan), x.at[i2].divide(2.5), x.at[i2].power(2.5), x.at[0].set(1e10),
            big.at[1].add(0.5), b.at[1].add(0.5), b.at[0].multiply(0.5), x.at[1].divide(jnp.nan),
            x.at[0].power(-1), b.at[1].power(2), b.at[1].subtract(2))


# JAX 0.10.2: x and the values promoted, updated, converted back to x's dtype (floats
# saturate into integers); JAX converts all of x, so 16777217 comes back from float32 rounded
_MIXED_UPDATES = ([25, 3], [12, 3], [15, 3], [62, 3], [0, 3], [253, 3], [10, 3], [54, 3],
                  [0, 3], [1.6666666269302368, 3.0], [1000000, 3], [2147483647, 3],
                  [16777216, 3], [True, True], [True, False], [10.0, float("inf")], [0, 3],
                  [1, 0], [True, True])


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # NaN values, divide by 0
def test_updates_compute_in_the_promoted_dtype_as_in_jax():
    """Found by fuzzing: the values were cast to x's dtype first, so
    jnp.array([10, 3]).at[0].multiply(2.5) gave 20 (JAX: 25)."""
    args = (jnp.array([10, 3]), jnp.array([10, 3], jnp.uint8), jnp.array([16777217, 3]),
            jnp.array([True, False]), jnp.array([0, 0]))
    for run in (mixed_updates, astjax.jit(mixed_updates)):
        outs = run(*args)
        assert [o.tolist() for o in outs] == list(_MIXED_UPDATES)
        assert [o.dtype for o in outs[:9]] == [i32] * 4 + [np.uint8] * 4 + [i32]
        assert outs[-2].dtype == i32 and outs[-1].dtype == np.bool_  # bool ** 2: int32
    batched = astjax.vmap(mixed_updates)(*(jnp.stack([a, a]) for a in args))
    assert [o[1].tolist() for o in batched] == list(_MIXED_UPDATES)


def integer_divides(x, v):
    return x.at[0].divide(2), x.at[1:].divide(v), x.at[0].add(v[0])


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # NaN values, divide by 0
def test_updates_compute_in_the_promoted_dtype_numba(numba_backend):
    """Numba computes in x's dtype when the update does; else (float values into an int x)
    the function runs on the python backend. An integer x.at[].divide truncated there."""
    args = (jnp.array([10, 3]), jnp.array([10, 3], jnp.uint8), jnp.array([16777217, 3]),
            jnp.array([True, False]), jnp.array([0, 0]))
    assert [o.tolist() for o in astjax.jit(mixed_updates)(*args)] == list(_MIXED_UPDATES)
    jitted = astjax.jit(integer_divides)
    outs = jitted(jnp.array([5, 3, 6]), jnp.array([4, 8]))
    (compiled,) = jitted.cache.values()
    assert compiled.backend == "numba", compiled.fallback_reason
    assert [o.tolist() for o in outs] == [[2.5, 3, 6], [5, 0.75, 0.75], [9, 3, 6]]
    assert [o.dtype for o in outs] == [f32, f32, i32]


def test_divide_and_power():
    x = astjax.device_put(np.arange(1, 5, dtype=np.int32))
    out = x.at[np.array([0, 0, 3])].divide(2)
    assert out.dtype == f32  # like x / y
    np.testing.assert_allclose(out, [0.25, 2, 3, 2])
    check("at_divide", x, 2, 1)
    out = x.at[1:3].power(2)
    assert out.dtype == i32 and out.tolist() == [1, 4, 9, 4]
    y = np.array([2.0, 3.0], np.float32)
    np.testing.assert_allclose(check("at_power", y, 3.0, np.array([0, 0])), [512.0, 3.0])


def test_get_and_helper():
    x = astjax.device_put(A)
    np.testing.assert_array_equal(x.at[1, ::2].get(), A[1, ::2])
    np.testing.assert_array_equal(x.at[1].get(mode="promise_in_bounds",
                                              indices_are_sorted=True), A[1])
    assert isinstance(x.at, IndexUpdateHelper) and "IndexUpdateRef" in repr(x.at[0])
    np.testing.assert_array_equal(x.at[0].set(1.0, unique_indices=True)[0], [1.0] * 4)


def test_update_types():
    t = REGISTRY["at_add"].infer({"x": array_type(f32, ones=(True, False), weak=True),
                                  "values": Static(2)}, {"index": (0, slice(DYN, None))})
    assert t == ArrayType(f32, (True, False), True)
    t = REGISTRY["at_divide"].infer({"x": array_type(i32, 1), "values": array_type(i32, 0)},
                                    {"index": DYN})
    assert t == ArrayType(f32, (False,), False)
    assert REGISTRY["at_min"].differentiable and REGISTRY["at_set"].differentiable


def test_update_errors():
    x = astjax.device_put(A)
    with pytest.raises(ShapeError, match=r"x.at\[idx\].set\(\): values of rank 2 cannot be "
                                         r"broadcast to x\[idx\], of rank 1"):
        x.at[0].set(np.ones((1, 4), np.float32))
    with pytest.raises(ShapeError, match=r"add\(\): too many indices"):
        x.at[0, 0, 0].add(1.0)
    with pytest.raises(ShapeError, match="mode='wrap' is not one of"):
        x.at[0].add(1.0, mode="wrap")
    with pytest.raises(ShapeError, match="fill_value"):
        x.at[0].get(fill_value=0)
    with pytest.raises(ShapeError, match="not defined for boolean"):
        astjax.device_put(A > 2).at[0].power(True)
    with pytest.raises(IndexError):
        x.at[7].set(0.0)
    with pytest.raises(TypeError, match="immutable"):
        x[0] = 1.0


# --- mode="clip" | "fill" | "drop" ---------------------------------------------------------------
# JAX 0.10.2's values (negative indices count from the end, -4 on an axis of 3 is out)
M = np.arange(1.0, 7.0, dtype=np.float32).reshape(2, 3)
OUT = np.int32([0, 2, 3, -1, -4, 5])
NAN = np.nan


def _modes(x, i):
    idx = (i, 1)  # (a tuple variable of index items)
    return (x.at[:, i].get(mode="fill"), x[0].at[i].get(mode="fill", fill_value=-1.0),
            x[0].at[i].get(mode="clip"), x.at[1, i].get(mode="drop"), x.at[idx].get(mode="fill"),
            x.at[5].get(mode="clip"), x[0].at[i].add(1.0, mode="drop"),
            x[0].at[i].add(1.0, mode="clip"), x.at[i, 1].set(9.0, mode="fill"),
            jnp.arange(3).at[i].get(mode="fill"))


JAX_MODES = (
    np.float32([[1, 3, NAN, 3, NAN, NAN], [4, 6, NAN, 6, NAN, NAN]]),
    np.float32([1, 3, -1, 3, -1, -1]), np.float32([1, 3, 3, 3, 1, 3]),
    np.float32([4, 6, NAN, 6, NAN, NAN]), np.float32([2, NAN, NAN, 5, NAN, NAN]),
    np.float32([4, 5, 6]), np.float32([2, 2, 5]), np.float32([3, 2, 7]),
    np.float32([[1, 9, 3], [4, 9, 6]]), np.int32([0, 2, -2 ** 31, 2, -2 ** 31, -2 ** 31]))


def _check_modes(got):
    for g, want in zip(got, JAX_MODES):
        assert np.asarray(g).dtype == want.dtype
        np.testing.assert_array_equal(np.asarray(g), want)


def test_out_of_bounds_modes_as_jax():
    _check_modes(_modes(astjax.device_put(M), OUT))
    _check_modes(astjax.jit(_modes)(M, OUT))


def test_out_of_bounds_modes_grad_and_vmap():
    def gathered(x):
        return (x.at[:, OUT].get(mode="fill", fill_value=0.0) ** 2).sum()

    np.testing.assert_array_equal(astjax.grad(gathered)(M), [[2, 0, 12], [8, 0, 24]])
    np.testing.assert_array_equal(astjax.jit(astjax.grad(gathered))(M), [[2, 0, 12], [8, 0, 24]])
    g = astjax.grad(lambda v: (M[0].at[OUT].set(v, mode="drop") ** 2).sum())(M.ravel())
    np.testing.assert_array_equal(g, [2, 0, 0, 8, 0, 0])  # dropped values: no gradient
    g = astjax.grad(lambda x: (x.at[OUT, 1].add(2.0, mode="clip") ** 2).sum())(M)
    np.testing.assert_array_equal(g, [[2, 12, 6], [8, 26, 12]])
    np.testing.assert_array_equal(astjax.vmap(lambda r: r.at[OUT].get(mode="fill"))(M),
                                  JAX_MODES[0])
    np.testing.assert_array_equal(astjax.vmap(lambda j: M[0].at[j].get(mode="clip"))(OUT),
                                  JAX_MODES[2])
    got = astjax.vmap(lambda r, j: r.at[j].add(1.0, mode="drop"))(M, np.int32([1, 7]))
    np.testing.assert_array_equal(got, [[1, 3, 3], [4, 5, 6]])


def test_out_of_bounds_modes_on_numba(numba_backend):
    jitted = astjax.jit(lambda x, i: (x.at[:, i].get(mode="fill"),
                                      x.at[i, 1].add(2.0, mode="drop")))
    got = jitted(M, OUT)
    (compiled,) = jitted.cache.values()
    assert compiled.backend == "numba", compiled.fallback_reason
    np.testing.assert_array_equal(got[0], JAX_MODES[0])
    np.testing.assert_array_equal(got[1], [[1, 4, 3], [4, 7, 6]])


def test_out_of_bounds_mode_errors_in_compiled_code():
    with pytest.raises(TypeError, match="mode='wrap' is not one of"):
        astjax.jit(lambda x: x.at[0].get(mode="wrap"))(M)
    with pytest.raises(TypeError, match="fill_value needs mode='fill'"):
        astjax.jit(lambda x: x.at[0].get(fill_value=1.0))(M)
    with pytest.raises(TypeError, match="unexpected keyword argument 'fill_value'"):
        astjax.jit(lambda x: x.at[0].set(1.0, mode="drop", fill_value=1.0))(M)


def test_a_list_inside_a_tuple_index_compiles():
    # an index array, as eagerly and in JAX (it was "a list as the index is not supported")
    def f(x):
        return x[0, [1, 2]], x.at[1, [0, 2]].add(1.0)

    got = astjax.jit(f)(M)
    np.testing.assert_array_equal(got[0], [2, 3])
    np.testing.assert_array_equal(got[1], [[1, 2, 3], [5, 5, 7]])
    g = astjax.grad(lambda x: x[1, [0, 2, 2]].sum())(M)
    np.testing.assert_array_equal(g, [[0, 0, 0], [1, 0, 2]])
    with pytest.raises(TypeError, match="a list as the index is not supported"):
        astjax.jit(lambda x: x[[0, 1]])(M)  # the whole index a list: refused, as in JAX


# --- compiled code agrees with eager --------------------------------------------------------------

def jit_agrees(fn, *args):
    """``jit(fn)(*args)`` gives the eager results: values, shapes and dtypes."""
    out = astjax.jit(fn)(*args)
    ref = fn(*[astjax.device_put(a) if isinstance(a, np.ndarray) else a for a in args])
    for o, r in zip(out, ref):
        assert o.dtype == r.dtype and o.shape == r.shape
        np.testing.assert_array_equal(np.asarray(o), np.asarray(r))


def _empty_index(x, s):
    return x[()] + 1.0, s[()]


def test_empty_index_tuple_reads_the_whole_array(numba_backend):
    """x[()] is x (it printed as x[], a SyntaxError in the generated module)."""
    jit_agrees(_empty_index, np.arange(3, dtype=np.float32), np.float32(2.0))
    astjax.config.update("astjax_jit_backend", "python")
    jit_agrees(_empty_index, np.arange(3, dtype=np.float32), np.float32(2.0))
    np.testing.assert_array_equal(astjax.grad(lambda x: jnp.sum(x[()] ** 2))(np.ones(3)), 2.0)


def _indexing(x, i, idx, mask):
    return (x[i], x[i:i + 1], x[-1, ::2], x[:, idx], x[..., None, idx], x[mask], x[idx, i],
            x.at[idx, 0].add(1.0), x.at[mask].set(0.0), x.at[i].divide(2),
            x.at[idx].multiply(3.0), x.at[:, idx].max(4.0), x.at[i, i:].get())


def test_compiled_indexing():
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    jit_agrees(_indexing, x, 1, np.array([0, 0, 2], np.int32), x > 4)
