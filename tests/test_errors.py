"""Bad input gets a clear error naming the user's file, line (and column)."""
import numpy as np
import pytest

import astjax
from astjax._src.errors import NoSourceError, TypeCheckError, UnsupportedSyntaxError

from . import bad_programs as B

X = np.ones(3, np.float32)


def mark_line(tag):
    with open(B.__file__) as f:
        for k, line in enumerate(f, 1):
            if f"MARK {tag}" in line:
                return k
    raise AssertionError(tag)


@pytest.mark.parametrize("fn,tag,cls,words", [
    (B.uses_try, "try", UnsupportedSyntaxError, "try/except"),
    (B.uses_global, "global", UnsupportedSyntaxError, "global"),
    (B.uses_generator, "yield", UnsupportedSyntaxError, "yield"),
    (B.uses_with, "with", UnsupportedSyntaxError, "with"),
    (B.array_condition, "truth", TypeCheckError, "ambiguous"),
    (B.undefined_name, "undefined", TypeCheckError, "not defined"),
    (B.unknown_method, "method", TypeCheckError, "frobnicate"),
    (B.calls_numpy_random, "call", TypeCheckError, "rand() draws random numbers"),
    (B.calls_a_generator, "generator", TypeCheckError, "normal() draws random numbers"),
    (B.list_index, "list-index", TypeCheckError, "x[jnp.array(idx)]"),
    # checks inside astjax's own Python-written functions name the user's call
    (B.select_of_unequal_lists, "select", ValueError, "condlist must have length"),
    (B.float_indices, "take-along", TypeError, "indices must be an integer array"),
    (B.jvp_with_two_primals, "jvp-primals", TypeError, "takes 1 argument, got 2"),
    # a static argument of an astjax.numpy function given a run-time value: named
    (B.run_time_pad_width, "pad-width", TypeError, "pad_width must be known when the code"),
])
def test_located_errors(fn, tag, cls, words):
    with pytest.raises(cls) as info:
        astjax.jit(fn)(X)
    err = info.value
    assert err.filename == B.__file__
    assert err.lineno == mark_line(tag)
    assert words in str(err)
    assert f"bad_programs.py:{err.lineno}:" in str(err)


def test_rank_change_in_loop_is_located():
    with pytest.raises(TypeCheckError, match="rank") as info:
        astjax.jit(B.rank_changes)(X, 3)
    assert info.value.filename == B.__file__


def test_shape_error_names_user_line():
    with pytest.raises(TypeError) as info:
        astjax.jit(B.bad_matmul)(X)
    assert f"bad_programs.py:{mark_line('matmul')}" in str(info.value)


def test_function_without_source():
    namespace = {}
    exec("def f(x):\n    return x\n", namespace)
    with pytest.raises(NoSourceError, match="source"):
        astjax.jit(namespace["f"])(X)


def test_builtin_function_has_no_source():
    with pytest.raises(NoSourceError, match="not a Python function"):
        astjax.make_source(len)(X)


def test_unhashable_static_argument():
    with pytest.raises(ValueError, match="hashable"):
        astjax.jit(B.rank_changes, static_argnums=1)(X, [1, 2])


def test_not_callable():
    with pytest.raises(TypeError, match="function"):
        astjax.jit(3)


def test_runtime_error_in_generated_code_names_user_line():
    with pytest.raises(ValueError, match="broadcast") as info:
        astjax.jit(B.runtime_broadcast)(np.ones(3, np.float32), np.ones(4, np.float32))
    assert f"bad_programs.py:{mark_line('runtime')}" in str(info.value)
    assert "return z + y" in str(info.value)


def test_an_error_in_numba_code_names_the_users_line():
    before = astjax.config.astjax_jit_backend
    astjax.config.update("astjax_jit_backend", "numba")
    try:
        f = astjax.jit(B.bad_product)
        for _ in range(2):  # the first call compiles; the second takes the fast path
            with pytest.raises(ValueError) as info:
                f(np.ones((3, 4), np.float32), np.ones((5, 2), np.float32))
            assert f"bad_programs.py:{mark_line('product')}" in str(info.value)
    finally:
        astjax.config.update("astjax_jit_backend", before)


def _unpack_rows(x):
    a, b = x  # UNPACK-ROWS
    return a * b


def test_unpacking_an_array_checks_its_length():
    """``a, b = x`` with x of 3 rows silently took rows 0 and 1 in compiled code; Python
    (and JAX, iterating a tracer) raise ValueError. The length is a run-time size, so the
    check runs when the code runs, on both backends; a tuple's is decided while the code is
    generated."""
    import inspect
    line = next(k for k, text in enumerate(inspect.getsource(_unpack_rows).splitlines())
                if "UNPACK-ROWS" in text) + _unpack_rows.__code__.co_firstlineno
    jitted = astjax.jit(_unpack_rows)
    np.testing.assert_array_equal(jitted(np.float32([[1, 2], [3, 4]])), [3, 8])
    with pytest.raises(ValueError, match=rf"test_errors.py:{line}: too many values to "
                                         rf"unpack \(expected 2\)"):
        jitted(np.ones((3, 2), np.float32))
    with pytest.raises(ValueError, match=r"not enough values to unpack \(expected 2, got 1\)"):
        jitted(np.ones((1, 2), np.float32))
    with pytest.raises(ValueError, match=r"too many values to unpack \(expected 2\)"):
        astjax.jit(_unpack_rows)((1.0, 2.0, 3.0))


def test_unpacking_an_array_checks_its_length_on_numba(numba_backend):
    jitted = astjax.jit(_unpack_rows)
    np.testing.assert_array_equal(jitted(np.float32([[1, 2], [3, 4]])), [3, 8])
    with pytest.raises(ValueError, match=r"too many values to unpack \(expected 2\)"):
        jitted(np.ones((3, 2), np.float32))
    (compiled,) = jitted.cache.values()
    assert compiled.backend == "numba", compiled.fallback_reason
