"""astjax.eval_shape, ShapeDtypeStruct and typeof (astjax/_src/shapes_api.py): results
written as JAX 0.10.2 printed them for the same calls."""
import inspect

import numpy as np
import pytest

import astjax
import astjax.numpy as jnp
from astjax import ShapeDtypeStruct as S


def _matmul_and_dict(x, y):
    return x @ y, {"a": x.sum(0)}


CASES = [  # (function, args, kwargs, JAX's repr of eval_shape's result)
    (_matmul_and_dict, (S((2, 3), jnp.float32), np.zeros((3, 4), np.float16)), {},
     "(ShapeDtypeStruct(shape=(2, 4), dtype=float32), "
     "{'a': ShapeDtypeStruct(shape=(3,), dtype=float32)})"),
    (lambda x: x * 2, (1.0,), {}, "ShapeDtypeStruct(shape=(), dtype=float32, weak_type=True)"),
    (lambda x: x * 2, (1,), {}, "ShapeDtypeStruct(shape=(), dtype=int32, weak_type=True)"),
    (lambda x: x.astype(bool), (True,), {}, "ShapeDtypeStruct(shape=(), dtype=bool)"),
    (lambda x: jnp.arange(5) + x, (S((), jnp.int32),), {},
     "ShapeDtypeStruct(shape=(5,), dtype=int32)"),
    (lambda x: x, (np.zeros(3),), {}, "ShapeDtypeStruct(shape=(3,), dtype=float32)"),
    (lambda x: x, (S((3,), np.float64),), {}, "ShapeDtypeStruct(shape=(3,), dtype=float32)"),
    (lambda x: x + 1, (S((3,), np.int64),), {}, "ShapeDtypeStruct(shape=(3,), dtype=int32)"),
    (lambda x: x * 2, (S((3,), jnp.float32, weak_type=True),), {},
     "ShapeDtypeStruct(shape=(3,), dtype=float32, weak_type=True)"),
    (lambda: jnp.zeros(3), (), {}, "ShapeDtypeStruct(shape=(3,), dtype=float32)"),
    (lambda x: None, (1.0,), {}, "None"),
    (lambda x: (x, 3), (1.0,), {},
     "(ShapeDtypeStruct(shape=(), dtype=float32, weak_type=True), "
     "ShapeDtypeStruct(shape=(), dtype=int32, weak_type=True))"),
    (lambda k: astjax.random.normal(k, (4,)), (astjax.random.PRNGKey(0),), {},
     "ShapeDtypeStruct(shape=(4,), dtype=float32)"),
    (lambda x, *, k: x * k, (S((2,), "float32"),), {"k": S((), "float32")},
     "ShapeDtypeStruct(shape=(2,), dtype=float32)"),
    (lambda x: x, ([1.0, S((2,), "int8")],), {},
     "[ShapeDtypeStruct(shape=(), dtype=float32, weak_type=True), "
     "ShapeDtypeStruct(shape=(2,), dtype=int8)]"),
    (jnp.dot, (S((2, 3), "float32"), S((3,), "float32")), {},
     "ShapeDtypeStruct(shape=(2,), dtype=float32)"),
]


@pytest.mark.parametrize("fn, args, kwargs, want", CASES)
def test_eval_shape_as_jax(fn, args, kwargs, want):
    assert repr(astjax.eval_shape(fn, *args, **kwargs)) == want


def test_eval_shape_of_a_jitted_function_compiles_no_numba_code(numba_backend):
    f = astjax.jit(lambda x: jnp.sin(x)[None])
    out = astjax.eval_shape(f, S((1000, 1000), "float32"))
    assert out == S((1, 1000, 1000), "float32")
    assert [c.backend for c in f.cache.values()] == ["python"]
    assert astjax.config.astjax_jit_backend == "numba"


def test_eval_shape_refuses_what_is_not_an_array():
    with pytest.raises(TypeError, match="Error interpreting argument"):
        astjax.eval_shape(lambda x: x, "a")


def test_shape_dtype_struct():
    s = S([2, 3], "float32")
    assert (s.shape, s.dtype, s.ndim, s.size, len(s), s.weak_type) == \
        ((2, 3), np.float32, 2, 6, 2, False)
    assert S((2,), np.float64).dtype == np.float64  # as JAX: not canonicalized here
    assert s == S((2, 3), np.dtype("float32")) and hash(s) == hash(S((2, 3), "float32"))
    assert s != S((2, 3), "float32", weak_type=True)
    assert repr(s.update(shape=(5,))) == "ShapeDtypeStruct(shape=(5,), dtype=float32)"
    with pytest.raises(ValueError, match="dtype must be specified"):
        S((2,), None)


def test_typeof_as_jax():
    got = [str(astjax.typeof(v)) for v in
           (jnp.ones(3), 1.0, np.ones(2, np.int8), np.ones(2), True, 3, np.float64(1.0), 1 + 2j)]
    assert got == ["float32[3]", "~float32[]", "int8[2]", "float32[2]", "bool[]", "~int32[]",
                   "float32[]", "~complex64[]"]
    t = astjax.typeof(jnp.ones((2, 3)))
    assert repr(t) == "ShapedArray(float32[2,3])" and (t.shape, t.dtype, t.ndim, t.size) == \
        ((2, 3), np.float32, 2, 6)
    assert t == astjax.typeof(jnp.zeros((2, 3))) and str(t.update(shape=(4,))) == "float32[4]"
    with pytest.raises(TypeError, match="is not a valid JAX type"):
        astjax.typeof([1.0])


def typeof_of_an_argument(x):
    t = astjax.typeof(x)
    return x * 2


def test_typeof_in_compiled_code():
    # of a constant it is folded; of a run-time value, a located error (sizes are run-time)
    assert astjax.jit(lambda x: x * (astjax.typeof(2.0).ndim + 2))(1.0) == 2.0
    with pytest.raises(TypeError, match="typeof\\(\\) of a run-time value") as info:
        astjax.jit(typeof_of_an_argument)(jnp.ones(3))
    lines, start = inspect.getsourcelines(typeof_of_an_argument)
    assert info.value.filename == __file__ and info.value.lineno == start + 1
