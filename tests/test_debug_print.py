"""astjax.debug.print, astjax.debug.callback and print in compiled code: run-time values,
each time the code runs, under jit (both backends), vmap, grad and jvp.

Expected output strings are JAX 0.10.2's for the same programs (jax.debug.print) unless a
comment says otherwise."""
from collections import namedtuple

import numpy as np
import pytest

import astjax
import astjax.numpy as jnp
from astjax import lax
from astjax._src.errors import UserCodeError
from astjax._src.runtime.array import Array

P = namedtuple("P", "w b")


def _two_prints(x):
    astjax.debug.print("x is {}", x)
    astjax.debug.print("x={x} y={y}", x=x, y=2 * x)
    return jnp.sin(x).sum()


def _out(capsys):
    return capsys.readouterr().out.splitlines()


def test_eager(capsys):
    _two_prints(jnp.arange(3.0))
    seen = []
    astjax.debug.callback(lambda *a, **k: seen.append((a, k)), 1, k=2)
    assert _out(capsys) == ["x is [0. 1. 2.]", "x=[0. 1. 2.] y=[0. 2. 4.]"]
    assert seen == [((1,), {"k": 2})]
    with pytest.raises(ValueError, match="reads positional argument 1"):  # as JAX checks
        astjax.debug.print("{} {}", 1)
    with pytest.raises(ValueError, match="no field .* reads positional argument 0"):
        astjax.debug.print("x", 1)


def test_jit_prints_the_values_of_each_call(capsys):
    f = astjax.jit(_two_prints)
    f(jnp.arange(3.0))
    f(jnp.arange(2.0) + 5)
    assert _out(capsys) == ["x is [0. 1. 2.]", "x=[0. 1. 2.] y=[0. 2. 4.]",
                            "x is [5. 6.]", "x=[5. 6.] y=[10. 12.]"]


def _unused(x):
    y = x * 3  # read only by the print: still computed and printed
    astjax.debug.print("y {}", y)
    return x


def _formats(x, n):
    astjax.debug.print("{:.2f} {x!r} {} {n} {s}", x[0], 5, x=x, n=n, s=x.shape, ordered=True,
                       partitioned=False)  # (JAX's options: accepted)
    return x


def _pytree(d, p):
    astjax.debug.print("d {} {a}", d, a=(d["a"], 1.5))
    astjax.debug.print("{}", p)
    return d["a"]


def test_jit_values_formats_and_pytrees(capsys):
    astjax.jit(_unused)(np.float32(2))
    astjax.jit(_formats)(jnp.arange(3.0), 4)
    astjax.jit(_pytree)({"a": jnp.ones(2), "b": np.int32(3)}, P(jnp.ones(1), np.float32(3)))
    assert _out(capsys) == [
        "y 6.0",
        # x.shape prints as Python ints, as eagerly: JAX prints (Array(3, dtype=int32),)
        "0.00 Array([0., 1., 2.], dtype=float32) 5 4 (3,)",
        # JAX prints the constant 1.5 as Array(1.5, dtype=float32, weak_type=True):
        # astjax passes constants as they are
        "d {'a': Array([1., 1.], dtype=float32), 'b': Array(3, dtype=int32)} "
        "(Array([1., 1.], dtype=float32), 1.5)",
        "P(w=Array([1.], dtype=float32), b=Array(3., dtype=float32))"]


def _show(*args, **kwargs):
    print("cb", [(type(a).__name__, np.asarray(a).tolist()) for a in args],
          {k: np.asarray(v).tolist() for k, v in kwargs.items()})


def _calls_back(x):
    astjax.debug.callback(_show, x, y=x + 1)
    return x


def test_callback_gets_arrays(capsys):
    astjax.jit(_calls_back)(jnp.ones(2))
    astjax.vmap(_calls_back)(jnp.arange(4.0).reshape(2, 2))
    assert _out(capsys) == ["cb [('Array', [1.0, 1.0])] {'y': [2.0, 2.0]}",
                            "cb [('Array', [0.0, 1.0])] {'y': [1.0, 2.0]}",
                            "cb [('Array', [2.0, 3.0])] {'y': [3.0, 4.0]}"]


def test_vmap_prints_each_example(capsys):
    xs = jnp.arange(6.0).reshape(2, 3)
    astjax.vmap(_two_prints)(xs)
    assert _out(capsys) == ["x is [0. 1. 2.]", "x is [3. 4. 5.]",
                            "x=[0. 1. 2.] y=[0. 2. 4.]", "x=[3. 4. 5.] y=[ 6.  8. 10.]"]
    astjax.vmap(_two_prints, in_axes=1)(xs[:, :2])
    assert _out(capsys) == ["x is [0. 3.]", "x is [1. 4.]",
                            "x=[0. 3.] y=[0. 6.]", "x=[1. 4.] y=[2. 8.]"]


def _pair(x, y):
    astjax.debug.print("{} {}", x, y)
    return x


def _helper_prints(x, y):
    _pair(x, y)  # a call whose result is discarded, for its print
    return x


def test_vmap_unbatched_and_nested(capsys):
    astjax.vmap(_pair, in_axes=(0, None))(jnp.arange(2.0), jnp.ones(3))
    assert _out(capsys) == ["0.0 [1. 1. 1.]", "1.0 [1. 1. 1.]"]
    astjax.vmap(_pair, in_axes=(None, 0))(7.0, jnp.arange(2.0))  # y batched
    assert _out(capsys) == ["7.0 0.0", "7.0 1.0"]
    astjax.vmap(lambda x, y: _pair(y, y) * 0 + x, in_axes=(0, None))(jnp.arange(3.0), 7.0)
    assert _out(capsys) == ["7.0 7.0"]  # nothing batched: once, as in JAX
    # nested: the inner vmap's index varies slowest, as in JAX
    xs = jnp.arange(4.0).reshape(2, 2)
    astjax.vmap(astjax.vmap(_helper_prints))(xs, xs + 10)
    assert _out(capsys) == ["0.0 10.0", "2.0 12.0", "1.0 11.0", "3.0 13.0"]
    astjax.vmap(astjax.vmap(_pair, in_axes=(0, None)), in_axes=(None, 0))(
        jnp.arange(2.0), jnp.arange(2.0) + 10)
    assert _out(capsys) == ["0.0 10.0", "0.0 11.0", "1.0 10.0", "1.0 11.0"]


def _cube_printing(x):
    astjax.debug.print("v {}", x)
    return (x * 2) ** 3


def test_grad_and_jvp_print_primal_values_once(capsys):
    g = astjax.grad(lambda x: _cube_printing(x).sum())(jnp.arange(2.0))
    np.testing.assert_allclose(g, 24 * np.arange(2.0) ** 2)
    assert _out(capsys) == ["v [0. 1.]"]
    assert astjax.grad(astjax.grad(_cube_printing))(2.0) == 96.0
    assert _out(capsys) == ["v 2.0"]
    assert astjax.jit(astjax.grad(_cube_printing))(2.0) == 96.0
    assert _out(capsys) == ["v 2.0"]
    y, t = astjax.jvp(_cube_printing, (2.0,), (1.0,))
    assert (y, t) == (64.0, 96.0)
    assert _out(capsys) == ["v 2.0"]
    np.testing.assert_allclose(astjax.jacfwd(_cube_printing)(jnp.arange(2.0)),
                               np.diag(24 * np.arange(2.0) ** 2))
    assert _out(capsys) == ["v [0. 1.]"]


def _loops(x, d):
    for i in range(2):
        x = x * 2
        print("i", i, "x", x, sep=" ", end="!\n")
    while x < 10:
        x = x + 3
        print(x)

    def body(i, c):
        astjax.debug.print("body {} {}", i, c)
        return c + 1
    astjax.debug.print("{} {}", d, P(x, d["b"]))  # (the Numba backend holds tuples)
    astjax.debug.callback(_show, d["a"], y=x)
    return lax.fori_loop(0, 2, body, x)


_LOOPS_OUT = ["i 0 x 2.0!", "i 1 x 4.0!", "7.0", "10.0",
              "{'a': Array([1., 1.], dtype=float32), 'b': Array(3, dtype=int32)} "
              "P(w=Array(10., dtype=float32), b=Array(3, dtype=int32))",
              "cb [('Array', [1.0, 1.0])] {'y': 10.0}",
              "body 0 10.0", "body 1 11.0"]
_D = {"a": np.ones(2, np.float32), "b": np.int32(3)}


def test_print_in_loops(capsys):
    assert astjax.jit(_loops)(1.0, _D) == 12.0
    assert _out(capsys) == _LOOPS_OUT


def _uses_the_value(x):
    y = astjax.debug.print("y {}", x)
    return (print("p", x, y), x * 2)[1]


def _star(x):
    xs = (x, x * 2)
    astjax.debug.print("{} {}", *xs)  # a generated star_call helper returns its value
    print(*xs)
    return x


def test_a_print_whose_value_is_used(capsys):
    assert astjax.jit(_uses_the_value)(1.0) == 2.0
    assert astjax.grad(_uses_the_value)(3.0) == 2.0
    assert _out(capsys) == ["y 1.0", "p 1.0 None", "y 3.0", "p 3.0 None"]
    astjax.jit(_star)(1.0)
    astjax.vmap(_star)(jnp.arange(2.0))
    assert _out(capsys) == ["1.0 2.0", "1.0 2.0", "0.0 0.0", "1.0 2.0", "0.0 0.0", "1.0 2.0"]


def _recursive(n, x):
    if n <= 0:
        return x
    y = _recursive(n - 1, x * 2)
    print("n", n, "y", y)  # (typed first while y's type is unknown)
    return y


def test_a_print_of_a_recursive_result(capsys):
    assert astjax.jit(_recursive)(2, 1.0) == 4.0
    assert _out(capsys) == ["n 1 y 4.0", "n 2 y 4.0"]


def _nested_def(x):
    astjax.debug.callback(lambda v: print(v), x)
    return x


@pytest.mark.parametrize("fn, message", [
    (lambda x: _pair(astjax.debug.print("{} {}", x), x), "reads positional argument 1"),
    (lambda x: _pair(astjax.debug.print("{y}", x), x), "reads 'y'"),
    (lambda x: _pair(astjax.debug.print("x", x), x), "reads positional argument 0"),
    (lambda x: _pair(astjax.debug.print("{}", x, y=x), x), "keyword argument 'y'"),
    (lambda x: _pair(astjax.debug.print(x), x), "format string must be a constant"),
    (lambda x: _pair(print(x, end=x), x), "end must be a constant"),
])
def test_errors_name_the_line(fn, message):
    with pytest.raises(UserCodeError, match=message) as e:
        astjax.jit(fn)(1.0)
    assert e.value.filename == __file__


def test_a_callback_defined_inside_is_refused():
    with pytest.raises(UserCodeError, match="defined outside the compiled function") as e:
        astjax.jit(_nested_def)(1.0)
    assert (e.value.filename, e.value.lineno) == (__file__, _nested_def.__code__.co_firstlineno + 1)


def test_numba(numba_backend, capsys):
    jitted = astjax.jit(_loops)
    assert jitted(1.0, _D) == 12.0
    (compiled,) = jitted.cache.values()
    assert compiled.backend == "numba", compiled.fallback_reason
    assert _out(capsys) == _LOOPS_OUT
