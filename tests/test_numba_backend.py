"""The Numba backend against the python backend and NumPy.

Each compile costs Numba about a second here, so programs are small and ops are
checked many per compiled function.
"""
import copy
import importlib.util
import re
import sys
import types

import warnings

import numpy as np
import pytest

import astjax
import astjax.numpy as jnp
from astjax._src.ops.registry import REGISTRY

from . import ad_programs as AD
from . import programs as P
from .test_pipeline import CASES, X, Y, _assert_tree_close

# programs the numba backend hands to the python backend, and why
EXPECTED_FALLBACK = {}  # (comprehension's sum() of a list of arrays compiles: a loop)


def _run(fn, *args):
    """Result of ``jit(fn)`` on the numba backend and the backend that ran it."""
    jitted = astjax.jit(fn)
    out = jitted(*args)
    (compiled,) = jitted.cache.values()
    return out, compiled


@pytest.mark.parametrize("fn,args", CASES, ids=[f"{fn.__name__}-{i}" for i, (fn, _) in
                                                enumerate(CASES)])
def test_program_matches_python(numba_backend, fn, args):
    expected = fn(*copy.deepcopy(args))
    got, compiled = _run(fn, *args)
    _assert_tree_close(got, expected, 1e-6)
    if fn.__name__ in EXPECTED_FALLBACK:
        assert compiled.backend == "python"
    else:
        assert compiled.backend == "numba", compiled.fallback_reason


def test_pytree_arguments_and_outputs(numba_backend):
    params = {"w": np.float32(2.0), "b": np.ones(5, np.float32)}
    expected = P.dict_and_tuple(params, (X, Y))
    got, compiled = _run(P.dict_and_tuple, params, (X, Y))
    _assert_tree_close(got, expected, 1e-6)
    assert compiled.backend == "numba", compiled.fallback_reason


# --- every elementwise op, many per compiled function ------------------------------------------

_SAMPLES = {
    "f": np.array([-2.5, -1.0, -0.3, 0.0, 0.4, 0.9, 1.7, 3.0], np.float32),
    "i": np.array([-7, -2, -1, 0, 1, 2, 5, 9], np.int32),
    "b": np.array([True, False, True, True, False, False, True, False]),
}
_DOMAIN = {"arccosh": lambda x: np.abs(x) + 1.0, "arcsin": lambda x: x / 4, "arccos":
           lambda x: x / 4, "arctanh": lambda x: x / 4, "log": np.abs, "log2": np.abs,
           "log10": np.abs, "sqrt": np.abs, "log1p": np.abs, "reciprocal": lambda x: x + 5.0}


def _elementwise_cases(kind):
    from astjax._src.backends.numba_cpu.fusion import FUSABLE
    cases = []
    for name, op in sorted(REGISTRY.items()):
        if op.family != "elementwise" or name not in FUSABLE or not hasattr(jnp, name):
            continue  # (scipy.special's ops: tests/test_scipy_special.py::test_numba)
        try:
            op.abstract_eval(**{a: astjax._src.ir.types.array_type(_SAMPLES[kind].dtype, 1)
                                for a in op.operands})
        except Exception:
            continue  # the op rejects this dtype (sin of bool is fine, invert of float not)
        try:
            with np.errstate(all="ignore"):
                op.impl(*[_SAMPLES[kind]] * len(op.operands))
        except (TypeError, ValueError):
            continue  # NumPy has no loop for it either (positive of bool)
        if kind == "i" and name in ("power", "floor_divide", "remainder", "true_divide",
                                    "arccosh", "reciprocal"):
            continue  # division by zero / negative powers of ints: NumPy-defined garbage
        cases.append(name)
    return cases


@pytest.mark.parametrize("kind", ["f", "i", "b"])
def test_every_elementwise_op_in_one_loop(numba_backend, kind, tmp_path):
    names = _elementwise_cases(kind)
    x = _SAMPLES[kind]
    y = np.roll(x, 3) if kind != "f" else np.roll(x, 3) + np.float32(0.25)
    # ops with a restricted domain get inputs inside it; each op gets its own input
    arrays = {}
    for name in names:
        arrays[name] = _DOMAIN[name](x).astype(x.dtype) if name in _DOMAIN else x
    lines = ["import astjax.numpy as jnp", "", "def apply(y, xs):", "    return ("]
    for k, name in enumerate(names):
        nin = len(REGISTRY[name].operands)
        lines.append(f"        jnp.{name}({', '.join([f'xs[{k}]', 'y'][:nin])}),")
    lines.append("    )")
    path = tmp_path / f"ew2_{kind}.py"
    path.write_text("\n".join(lines) + "\n")
    spec = importlib.util.spec_from_file_location(f"ew2_{kind}", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    xs = [arrays[name] for name in names]
    with np.errstate(all="ignore"):
        got, compiled = _run(module.apply, y, tuple(xs))
        astjax.config.update("astjax_jit_backend", "python")
        expected = astjax.jit(module.apply)(y, tuple(xs))
    assert compiled.backend == "numba", compiled.fallback_reason
    for name, g, e in zip(names, got, expected):
        assert g.dtype == e.dtype, name
        np.testing.assert_allclose(np.asarray(g), np.asarray(e), rtol=2e-6, atol=1e-6,
                                   err_msg=name)


# --- reductions and broadcasting ---------------------------------------------------------------

def reductions(x, m):
    return (jnp.sum(x), jnp.sum(m, axis=0), jnp.sum(m, axis=1, keepdims=True),
            jnp.mean(m, axis=(0, 1)), jnp.max(m, axis=1), jnp.min(m, axis=0, keepdims=True),
            jnp.prod(x), jnp.any(m > 1.0, axis=0), jnp.all(m > -5.0), jnp.mean(m, axis=0),
            jnp.sum(jnp.exp(m) * 2.0 + x[:3, None], axis=1))


def broadcasting(x, col, s):
    return x[None, :] * col + s, jnp.where(col > 0, x, -x), (x + 1.0) * (col - s)


def test_reductions_match_numpy(numba_backend):
    m = np.random.default_rng(1).standard_normal((3, 4)).astype(np.float32)
    x = np.linspace(-1, 1, 5).astype(np.float32)
    got, compiled = _run(reductions, x, m)
    expected = reductions(x, m)
    assert compiled.backend == "numba", compiled.fallback_reason
    _assert_tree_close(got, expected, 1e-5)
    for g, e in zip(got, expected):
        assert g.dtype == np.asarray(e).dtype or np.asarray(e).dtype == np.float64


def test_broadcasting_including_size_one_at_run_time(numba_backend):
    x = np.linspace(-1, 1, 5).astype(np.float32)
    col = np.arange(3, dtype=np.float32).reshape(3, 1) - 1
    got, compiled = _run(broadcasting, x, col, np.float32(0.5))
    _assert_tree_close(got, broadcasting(x, col, np.float32(0.5)), 1e-6)
    assert compiled.backend == "numba", compiled.fallback_reason


def grow(x, k):
    return x[:k] + x  # x[:k] is typed f32[_]: size 1 only known at run time


def test_size_one_only_known_at_run_time_broadcasts(numba_backend):
    x = np.arange(4, dtype=np.float32)
    jitted = astjax.jit(grow, static_argnums=1)
    np.testing.assert_allclose(jitted(x, 1), x[:1] + x)
    with pytest.raises(ValueError, match="broadcast"):
        jitted(x, 2)


# --- derivatives -------------------------------------------------------------------------------

def mlp_loss(params, x, y):
    w1, b1, w2, b2 = params
    h = jnp.tanh(x @ w1 + b1)
    logits = h @ w2 + b2
    logits = logits - jnp.max(logits, axis=1, keepdims=True)
    lse = jnp.log(jnp.sum(jnp.exp(logits), axis=1, keepdims=True))
    return -jnp.mean(jnp.sum((logits - lse) * y, axis=1))


def scalar_loop(x):
    for i in range(50):
        x = x - 0.01 * jnp.sin(x) * x
    return x


def sum_logistic(x):
    return jnp.sum(1.0 / (1.0 + jnp.exp(-x)))


def array_loop(x):
    for i in range(5):
        x = 0.5 * x + 0.1 * jnp.sin(x)
    return jnp.sum(x * x)


def nested_scalar_loops(x):
    for i in range(4):
        x = jnp.sin(x) * 1.1  # the outer body and the inner loop push x's tape
        for j in range(3):
            x = x * jnp.cos(x)
        x = x + 0.1 * jnp.sin(x)
    return x


@pytest.mark.parametrize("fn,make_args", [
    (nested_scalar_loops, lambda rng: (np.float32(0.7),)),
    (AD.appended_then_stacked, lambda rng: (rng.normal(size=4).astype(np.float32),)),
    (AD.branch_changes_its_test, lambda rng: (np.abs(rng.normal(size=4)).astype(np.float32),)),
    (mlp_loss, lambda rng: ((rng.normal(size=(6, 5)).astype(np.float32),
                             np.zeros(5, np.float32),
                             rng.normal(size=(5, 3)).astype(np.float32),
                             np.zeros(3, np.float32)),
                            rng.normal(size=(4, 6)).astype(np.float32),
                            np.eye(3, dtype=np.float32)[[0, 2, 1, 0]])),
    (scalar_loop, lambda rng: (np.float32(1.5),)),
    (array_loop, lambda rng: (rng.normal(size=7).astype(np.float32),)),
    (sum_logistic, lambda rng: (rng.normal(size=7).astype(np.float32),)),
])
def test_jit_grad_matches_python_backend(numba_backend, fn, make_args):
    args = make_args(np.random.default_rng(0))
    got, compiled = _run(astjax.grad(fn), *args)
    expected = astjax.grad(fn)(*args)  # grad outside jit: the python backend
    assert compiled.backend == "numba", compiled.fallback_reason
    _assert_tree_close(got, expected, 2e-5)


def test_jit_jacfwd_is_forward_mode_on_numba(numba_backend):
    """Forward mode (tangents beside the primal, the loop kept) compiles on Numba; the
    python backend's jacfwd is the reference, and jacrev agrees."""
    x = np.random.default_rng(1).normal(size=5).astype(np.float32)
    got, compiled = _run(astjax.jacfwd(array_loop), x)
    assert compiled.backend == "numba", compiled.fallback_reason
    assert "pullback" not in astjax.make_source(astjax.jit(astjax.jacfwd(array_loop)))(x)
    _assert_tree_close(got, astjax.jacfwd(array_loop)(x), 2e-5)
    _assert_tree_close(got, astjax.jacrev(array_loop)(x), 2e-5)


@pytest.fixture
def tiered(numba_backend, monkeypatch):
    """Tiered jit with the background compile held until the test releases it."""
    import threading
    from astjax._src.api import Compiled
    release = threading.Event()
    compile_now = Compiled._background_compile

    def held(self, signature):
        release.wait(timeout=60)
        compile_now(self, signature)
    monkeypatch.setattr(Compiled, "_background_compile", held)
    astjax.config.update("astjax_tiered_compile", True)
    yield release
    release.set()
    astjax.config.update("astjax_tiered_compile", False)


def _tiered_loss(x):
    return jnp.sum(jnp.tanh(x) * x)


def test_tiered_calls_run_python_until_numba_is_compiled(tiered):
    from astjax._src.backends.numba_cpu.boundary import dispatcher
    x = np.linspace(-1.0, 1.0, 7).astype(np.float32)
    expected = np.sum(np.tanh(x) * x)
    f = astjax.jit(_tiered_loss)
    for _ in range(2):  # Numba has compiled nothing yet: the python backend answers
        np.testing.assert_allclose(f(x), expected, rtol=1e-6)
    (compiled,) = f.cache.values()
    assert compiled.python_twin().backend == "python"
    assert compiled._background.is_alive() and not dispatcher(compiled.entry).signatures
    tiered.set()
    compiled._background.join()
    np.testing.assert_allclose(f(x), expected, rtol=1e-6)  # the Numba code now
    assert compiled.backend == "numba" and not compiled.first_call
    assert len(dispatcher(compiled.entry).signatures) == 1


def test_tiered_compile_failure_falls_back_to_python(tiered, monkeypatch):
    import numba
    from astjax._src.api import Compiled

    def fails(self, signature):
        self._background_error = numba.core.errors.TypingError("cannot type this")
    monkeypatch.setattr(Compiled, "_background_compile", fails)
    x = np.array([0.5, 2.0], np.float32)
    f = astjax.jit(_tiered_loss)
    f(x)
    (compiled,) = f.cache.values()
    compiled._background.join()
    np.testing.assert_allclose(f(x), np.sum(np.tanh(x) * x), rtol=1e-6)
    assert compiled.backend == "python" and "cannot type this" in compiled.fallback_reason


def test_unsupported_op_falls_back_to_python(numba_backend):
    def f(x):
        return jnp.argsort(x)  # no Numba lowering for float16 (Numba has no float16 sort)
    x = np.array([3.0, 1.0, 2.0], np.float16)
    got, compiled = _run(f, x)
    assert compiled.backend == "python" and "argsort" in compiled.fallback_reason
    np.testing.assert_array_equal(got, np.argsort(x).astype(np.int32))


def test_random_normal_is_bit_identical_to_the_python_backend(numba_backend):
    """Threefry's uint32 shifts, rotations and the float tricks of the sampler."""
    from astjax import random
    draw = astjax.jit(lambda key: random.normal(key, (257,)))
    key = random.PRNGKey(3)
    got = draw(key)
    (compiled,) = draw.cache.values()
    assert compiled.backend == "numba", compiled.fallback_reason
    astjax.config.update("astjax_jit_backend", "python")
    expected = astjax.jit(lambda key: random.normal(key, (257,)))(key)
    np.testing.assert_array_equal(np.asarray(got), np.asarray(expected))


def fused_groups(x, y, w1, w2):
    a = x * 2.0 + y
    b = jnp.exp(a) - a              # a and b are read again below: stored once each
    half = jnp.float32(0.25) * 2    # a scalar between loops: computed before them
    a = a * b * half                # a redefinition: a value of its own
    c = jnp.where(a > 0, a, b)
    m, e = jnp.frexp(c)
    w1 = w1 - 0.1 * w1 * w1         # other sizes: loops of their own, never merged
    w2 = w2 - 0.1 * w2 * w2
    for _ in range(3):
        x = x + a
        x = x * 0.5 + b
    return a + c, m, e, w1, w2, x


def test_multi_use_values_share_one_loop(numba_backend):
    """Elementwise statements of one shape run as one loop nest, storing only what is read
    later; statements of unrelated sizes keep their own loops (no size check fails)."""
    import re
    rng = np.random.default_rng(5)
    args = tuple(rng.normal(size=n).astype(np.float32) for n in (8, 8, 3, 5))
    got, compiled = _run(fused_groups, *args)
    assert compiled.backend == "numba", compiled.fallback_reason
    _assert_tree_close(got, fused_groups(*args), 1e-6)
    source = astjax.make_source(astjax.jit(fused_groups))(*args)
    top_level_loops = re.findall(r"^    for i\d+ in range", source, re.M)
    assert len(top_level_loops) == 4, source  # a..frexp, w1, w2, a + c


def frexp_first(x):
    return jnp.frexp(x)[0] * 2.0 - jnp.frexp(x)[1]


def test_a_loop_led_by_frexp(numba_backend):
    """A fused loop whose first statement is a frexp (a pair per element) crashed the
    emitter ('SequenceType' object has no attribute 'ndim') instead of compiling."""
    x = np.float32([1.5, 3.0, 0.25, -7.0, 0.0])
    got, compiled = _run(frexp_first, x)
    assert compiled.backend == "numba", compiled.fallback_reason
    m, e = np.frexp(x)
    np.testing.assert_array_equal(got, m * 2.0 - e)


def sin_and_cos(x):
    return jnp.sin(x) * 0.5 + jnp.cos(x)


def test_sin_and_cos_of_huge_arguments(numba_backend):
    """mathlib's sin/cos reduce |x| up to 2**48 themselves; beyond, their values were
    meaningless (here 1.0 or 1.5 for the first four, NumPy's -0.05, -0.22, -0.97, 0.31).
    libm now computes them there, from a vector function the fused loop calls."""
    x = np.float32([3e38, -1e30, 2.0 ** 60, 1e22, 2.0 ** 49, 3.0, -0.5, np.inf])
    got, compiled = _run(sin_and_cos, x)
    assert compiled.backend == "numba", compiled.fallback_reason
    with np.errstate(invalid="ignore"):
        want = np.sin(x) * np.float32(0.5) + np.cos(x)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


def broadcasts(x, y):
    a = jnp.broadcast_to(x, (4, 3)) * y         # a static shape
    b = jnp.broadcast_to(x[0], y.shape) + a     # a shape read at run time, a 0-d operand
    return a, b


def test_broadcast_to_runs_inside_its_consumers_loop(numba_backend):
    rng = np.random.default_rng(7)
    x, y = rng.normal(size=3).astype(np.float32), rng.normal(size=(4, 3)).astype(np.float32)
    got, compiled = _run(broadcasts, x, y)
    assert compiled.backend == "numba", compiled.fallback_reason
    _assert_tree_close(got, broadcasts(x, y), 1e-6)
    assert "_rt.full" not in compiled.source and "broadcast_to" not in compiled.source
    with pytest.raises(ValueError):  # NumPy's error, from the python backend's rerun
        astjax.jit(broadcasts)(np.ones(2, np.float32), y)


def test_grad_of_an_elementwise_sum_is_one_loop(numba_backend):
    """Forward values the backward pass reads are recomputed in its loop, not stored: the
    dead primal sum goes, and the cotangent's broadcast is read in place."""
    x = np.random.default_rng(8).normal(size=9).astype(np.float32)
    got, compiled = _run(astjax.grad(sum_logistic), x)
    assert compiled.backend == "numba", compiled.fallback_reason
    assert compiled.source.count("_rt.empty(") == 1, compiled.source
    s = 1 / (1 + np.exp(-x))
    np.testing.assert_allclose(np.asarray(got), s * (1 - s), rtol=1e-5)


def _clip_one_side(a, b):
    return jnp.clip(a, None, b), jnp.clip(a, b, None), jnp.clip(a, max=b), a.clip(None, 0.5)


def test_clip_with_a_bound_left_out(numba_backend):
    """clip(a, None, b): the missing bound takes no part in the dtype promotion (it was an
    internal error naming no line of the user's)."""
    a, b = np.array([0.5, 2.0, -1.0], np.float32), np.ones(3, np.float32)
    got, compiled = _run(_clip_one_side, a, b)
    assert compiled.backend == "numba", compiled.fallback_reason
    want = (np.minimum(a, b), np.maximum(a, b), np.minimum(a, b), np.minimum(a, 0.5))
    _assert_tree_close(got, want, 0)


def _loop_loss(x):
    y = x
    for i in range(3):
        y = jnp.tanh(y) * x
    return jnp.sum(y)


def test_jacrev_runs_the_forward_loop_once(numba_backend):
    """jacrev computes f's value only for its shape, which a 0-d result knows when the code
    is generated: that forward loop is dead code and goes."""
    x = np.linspace(0.1, 1.0, 5).astype(np.float32)
    got, compiled = _run(astjax.jacrev(_loop_loss), x)
    assert compiled.backend == "numba", compiled.fallback_reason
    assert compiled.source.count("in range(3)") == 1, compiled.source
    np.testing.assert_allclose(got, astjax.grad(_loop_loss)(x), rtol=1e-5)


def test_parallel_loops_match_sequential(numba_backend):
    """jit(parallel=True): loop bodies become kernels run over chunks of the outer index
    (parallel.py); small arrays take the sequential branch of the same code."""
    rng = np.random.default_rng(6)
    f = astjax.jit(fused_groups, parallel=True)
    for n in (8, 70_000):  # below and above MIN_PARALLEL_ELEMENTS
        args = tuple(rng.normal(size=k).astype(np.float32) for k in (n, n, 3, 5))
        got = f(*args)
        _assert_tree_close(got, fused_groups(*args), 1e-6)
    (compiled,) = f.cache.values()
    assert compiled.backend == "numba", compiled.fallback_reason
    assert "_nb.prange" in compiled.source and "def _kernel" in compiled.source
    # a kernel's outer index is unsigned where it subscripts (no wraparound branch: the
    # loop vectorizes), here over rows of 2-D arrays with a broadcast row
    import re
    assert re.search(r"for (u\d+) in range\(np\.uintp\(\w+\), np\.uintp\(\w+\)\):\n"
                     r"\s+\w+\[\1\] = ", compiled.source), compiled.source
    g = astjax.jit(astjax.grad(_rows_times_weights, argnums=(0, 1)), parallel=True)
    w, x = rng.normal(size=4), rng.normal(size=(20_000, 4))
    _assert_tree_close(g(w, x), astjax.grad(_rows_times_weights, argnums=(0, 1))(w, x), 1e-4)
    (compiled,) = g.cache.values()
    assert compiled.backend == "numba", compiled.fallback_reason
    assert "_nb.prange" in compiled.source


def test_parallel_products_split_rows_over_threads(numba_backend, x64):
    """jit(parallel=True): matrix products split a's rows over Numba's threads, each a
    one-thread BLAS call (a transposed a is copied a block at a time), and batched ones
    run their batch over the threads; small ones stay on the calling thread."""
    rng = np.random.default_rng(9)
    a, b, v = rng.normal(size=(256, 256)), rng.normal(size=(256, 128)), rng.normal(size=256)
    s, t = rng.normal(size=(4, 256, 256)), rng.normal(size=(4, 256, 64))
    f = astjax.jit(_products, parallel=True)
    _assert_tree_close(f(a, b, v, s, t), _products(a, b, v, s, t), 1e-12)
    (compiled,) = f.cache.values()
    assert compiled.backend == "numba", compiled.fallback_reason
    assert compiled.source.count("_rt.dot_on_threads(") == 3, compiled.source
    assert "_rt.batched_dot_on_threads(" in compiled.source, compiled.source


def _products(a, b, v, s, t):
    return a @ b, a.T @ b, a @ v, s @ t


def _rows_times_weights(w, x):
    return jnp.sum(jnp.tanh(x * w) * jnp.exp(-x))


def neg_sum_sq(x):
    return -jnp.sum(x * x)


def test_per_example_gradients(numba_backend):
    """vmap(grad): the negated loss is only read for its shape by the backward pass."""
    xs = np.random.default_rng(2).standard_normal((4, 3)).astype(np.float32)
    got, compiled = _run(astjax.vmap(astjax.grad(neg_sum_sq)), xs)
    assert compiled.backend == "numba", compiled.fallback_reason
    np.testing.assert_allclose(np.asarray(got), -2 * xs, rtol=1e-6)


def scale_add(x, s):
    return x * s + 1.0


def test_repeated_calls_take_the_fast_path_with_any_argument_kind(numba_backend):
    f = astjax.jit(scale_add)
    base = np.arange(6, dtype=np.float32).reshape(2, 3)
    cases = [(base, 2.0), (base, 2.0), (base.T, 3.0), (base.T, 3.0), (base[:, :1], 0.5),
             (astjax.device_put(base), np.float32(4.0)), (astjax.device_put(base), 4.0),
             (base, astjax.device_put(np.float32(1.5)))]
    for x, s in cases * 2:  # the second round runs from the fast path's table
        got = f(x, s)
        expected = np.asarray(x) * np.float32(np.asarray(s)) + np.float32(1.0)
        np.testing.assert_allclose(np.asarray(got), expected, rtol=1e-6)
        assert got.dtype == np.float32 and got.shape == np.shape(x)
    assert len(f.fast) >= 4


def scale_by_default(x, s=2.0):
    return x * s + 1.0


def test_defaults_and_big_arguments_take_the_fast_path(numba_backend):
    """A parameter left to its default still takes the fast path; so does a call big
    enough to be queued (it skips the typing only, its result pending as before)."""
    f = astjax.jit(scale_by_default)
    x = np.arange(6, dtype=np.float32)
    for _ in range(2):
        np.testing.assert_array_equal(f(x), x * 2 + 1)
        np.testing.assert_array_equal(f(x, 3.0), x * 3 + 1)
    assert len(f.fast) == 2
    before = astjax.config.astjax_async_min_bytes
    astjax.config.update("astjax_async_min_bytes", 0)
    try:
        np.testing.assert_array_equal(f(x), x * 2 + 1)
        assert len(f.fast) == 3
        f.compiled_for = None  # the table's entry runs it, without typing the arguments
        np.testing.assert_array_equal(f(x), x * 2 + 1)
    finally:
        astjax.config.update("astjax_async_min_bytes", before)


def scale_tree(params, xs):
    return {"y": params["w"] * xs[0] + params["b"], "z": xs[1] * 2.0}


def test_containers_of_arrays_take_the_fast_path(numba_backend):
    f = astjax.jit(scale_tree)
    w, b = np.float32(3.0), np.arange(3, dtype=np.float32)
    cases = [({"w": w, "b": b}, (b, b[:1])), ({"b": b, "w": 2.0}, [b, b]),
             ({"w": w, "b": b}, (b.astype(np.float64), b))]
    for params, xs in cases * 2:  # the second round runs from the fast path's table
        got = f(params, xs)
        want = scale_tree({k: np.float32(v) for k, v in params.items()},
                          [np.asarray(x, np.float32) for x in xs])
        assert set(got) == {"y", "z"}
        for k in got:
            np.testing.assert_allclose(np.asarray(got[k]), want[k], rtol=1e-6)
            assert got[k].dtype == np.float32
    assert len(f.fast) == len(cases)


def test_a_numba_typing_failure_names_the_users_line():
    from astjax._src.backends.numba_cpu.boundary import numba_failure

    namespace = {"__file__": "/cache/f_abc.py", "__astjax_line_map__": {17: ("user.py", 5)}}
    entry = types.SimpleNamespace(py_func=types.SimpleNamespace(__globals__=namespace))
    error = ('Failed in nopython mode pipeline (step: nopython frontend)\n'
             'No implementation of function getitem found for signature:\n \n'
             ' >>> getitem(float64, int64)\n\n'
             'File "../../cache/f_abc.py", line 17:\n    n0 = acc.shape[0]\n')
    assert numba_failure(error, entry) == ("Numba: No implementation of function getitem found "
                                           "for signature: >>> getitem(float64, int64) "
                                           "(at user.py:5)")
    wrapper = lambda: None  # one_parallel_call_at_a_time's wrapper around the dispatcher
    wrapper.__wrapped__ = entry
    assert numba_failure(error.replace("line 17", "line 3"), wrapper).endswith("float64, int64)")


def accumulators(ws, x, n):
    acc = 0.0
    for w in ws:  # acc is a scalar on the first trip only
        acc = acc + w
    down = 0
    for i in range(n, 0, -2):
        down = down + x * i
    return acc, down


def test_a_scalar_that_becomes_an_array_in_a_loop_compiles(numba_backend):
    ws = np.arange(12, dtype=np.float32).reshape(3, 4)
    x = np.linspace(-1, 1, 4).astype(np.float32)
    got, compiled = _run(accumulators, ws, x, 5)
    assert compiled.backend == "numba", compiled.fallback_reason
    np.testing.assert_allclose(got[0], ws.sum(0))
    np.testing.assert_allclose(got[1], x * (5 + 3 + 1), rtol=1e-6)
    acc, down = astjax.jit(accumulators)(ws, x, 0)  # zero trips: the python backend runs it
    np.testing.assert_allclose(acc, ws.sum(0))
    assert np.ndim(down) == 0 and float(down) == 0.0


def fill_in_a_loop(x):
    y = jnp.zeros(x.shape[0])
    for i in range(x.shape[0]):
        y = y.at[i].set(jnp.sin(x[i]) * 2.0)
    return jnp.sum(y * y)


def test_filling_an_array_in_a_loop_tapes_no_copies_of_it(numba_backend):
    x = np.linspace(0, 1, 6).astype(np.float32)
    got, compiled = _run(astjax.grad(fill_in_a_loop), x)
    assert compiled.backend == "numba", compiled.fallback_reason
    np.testing.assert_allclose(got, astjax.grad(fill_in_a_loop)(x), rtol=1e-6)
    # y.at[i].set's rule reads no old y: the only copy of y kept is its value after the
    # loop, in a variable of its own (it is made once)
    kept = [line.strip() for line in compiled.source.splitlines()
            if ".append(y" in line or line.strip().startswith("y_saved")]
    assert len(kept) == 1 and kept[0].startswith("y_saved"), kept


def _layers_loop(params, x):
    for w, b in params:  # x changes shape across the trips
        x = jnp.tanh(x @ w + b)
    return x


def test_a_layer_loop_runs_parallel_and_a_failed_parallel_analysis_recompiles_serial(
        numba_backend, monkeypatch):
    """x changes shape across the trips. Numba's parallel=True array analysis took its sizes
    across trips for equal at np.dot and raised an AssertionError; products are calls into
    the runtime now, which the analysis does not read, so this compiles parallel. Should
    the analysis fail at run time all the same, the version is compiled serial instead."""
    r = np.random.default_rng(0)
    params = [(r.standard_normal((3, 5)).astype(np.float32), np.ones(5, np.float32)),
              (r.standard_normal((5, 2)).astype(np.float32), np.ones(2, np.float32))]
    x = r.standard_normal(3).astype(np.float32)  # (a vector: a matrix's products are calls)
    want = x
    for w, b in params:
        want = np.tanh(want @ w + b)
    f = astjax.jit(_layers_loop, parallel=True)
    np.testing.assert_allclose(f(params, x), want, rtol=1e-5)
    (compiled,) = f.cache.values()
    assert compiled.backend == "numba" and compiled.parallel

    def analysis_fails(*args):
        raise AssertionError("Sizes of a, b do not match on <string> (1)")
    monkeypatch.setattr(compiled, "entry", analysis_fails)
    f.fast.clear()  # the fast path holds the entry it saw
    np.testing.assert_allclose(f(params, x), want, rtol=1e-5)
    assert compiled.backend == "numba" and not compiled.parallel
    np.testing.assert_allclose(f(params, x), want, rtol=1e-5)  # the fast path too


def _layers_run_twice(params, x):
    total = jnp.zeros((), x.dtype)
    for rep in range(2):  # the loop over the layers runs again: its first trip reads h anew
        h = x
        for w in params:
            h = jnp.tanh(h @ w)
        total = total + jnp.sum(h)
    return total


@pytest.mark.parametrize("argnums", [0, (0, 1)])
def test_the_last_trip_skips_what_only_a_next_trip_reads(numba_backend, x64, argnums):
    """The backward loop over the layers computes each layer input's cotangent for the
    next trip; in its last trip that is x's, which grad with respect to params alone never
    reads: that product runs under ``if k != n - 1`` (numba_cpu/last_trip.py)."""
    import re
    r = np.random.default_rng(3)
    params = tuple(r.normal(size=(4, 4)) * 0.5 for _ in range(3))
    x = r.normal(size=(2, 4))
    fn = astjax.grad(_layers_run_twice, argnums=argnums)
    got, compiled = _run(fn, params, x)
    assert compiled.backend == "numba", compiled.fallback_reason
    _assert_tree_close(got, fn(params, x), 1e-12)
    guarded = re.search(r"if (\w+) != (\w+) - 1:\n(?:.*\n)*?[ \t]+\w+ = _rt\.dot\(",
                        compiled.source)  # (not (\s+.*\n)*?: that backtracks exponentially)
    assert (guarded is not None) == (argnums == 0), compiled.source


def _predict(params, image):
    h = image
    for w, b in params[:-1]:
        h = jnp.tanh(jnp.dot(w, h) + b)
    w, b = params[-1]
    return jnp.dot(w, h) + b


def _batched_loss(params, images):
    return jnp.sum(astjax.vmap(_predict, in_axes=(None, 0))(params, images) ** 2)


def test_a_vmapped_layer_loop_tapes_only_what_its_backward_reads(numba_backend, x64):
    """JAX's MLP tutorial in small: the inlined forward sweep hands its backward sweep a
    tuple of what it recorded; its elements are read directly (simplify.py), so tapes
    nothing pops a value from go. A matrix-vector product over the batch is computed
    transposed, np.dot(x.T, w.T).T, so the transpose back reads it without a copy."""
    import re
    r = np.random.default_rng(4)
    params = [(r.normal(size=(5, 3)), r.normal(size=5)), (r.normal(size=(4, 5)),
              r.normal(size=4)), (r.normal(size=(2, 4)), r.normal(size=2))]
    images = r.normal(size=(6, 3))
    fn = astjax.grad(_batched_loss)
    got, compiled = _run(fn, params, images)
    assert compiled.backend == "numba", compiled.fallback_reason
    _assert_tree_close(got, fn(params, images), 1e-12)
    source = compiled.source
    pops = re.findall(r"(\w+) = \w+\.pop\(\)", source)
    assert pops and all(len(re.findall(rf"\b{v}\b", source)) > 1 for v in pops), source
    assert re.search(r"= _rt\.dot\(\w+\.T, \w+\.T\)\.T", source), source


def _scalar_steps(x):
    for i in range(50):
        x = x - 0.01 * jnp.sin(x) * x
    return x


def _chain_depth(source, carried):
    """Operations on the longest path from ``carried`` (read at the top of the backward
    loop) to its next value in one trip, from the loop's ``name = expr`` lines."""
    import re
    body = source.split("for _0")[1].split("\n    grad_")[0]
    depth = {carried: 0}
    for target, expr in re.findall(r"^\s+(\w+) = (.+?)(?:  #.*)?$", body, re.M):
        read = [depth[n] for n in re.findall(r"\w+", expr) if n in depth]
        if read:
            depth[target] = max(read) + 1
    return depth[carried]


def test_products_on_a_carried_scalar_are_multiplied_last(numba_backend, x64):
    """The backward sweep's ``((-g * x) * 0.01) * cos(x)`` becomes ``((0.01 * x) *
    cos(x)) * -g``: one product on the chain from one trip's cotangent to the next
    (numba_cpu/carried_chains.py), the same value to rounding."""
    grad = astjax.grad(_scalar_steps)
    got, compiled = _run(grad, 0.5)
    assert compiled.backend == "numba", compiled.fallback_reason
    np.testing.assert_allclose(got, grad(0.5), rtol=1e-13)
    carried = __import__("re").search(r"(d_x\w*) = np\.float64\(1\.0\)", compiled.source)[1]
    assert _chain_depth(compiled.source, carried) == 5, compiled.source


def _plus_one(x):
    return x + 1.0


def test_scalar_calls_on_the_fast_path(numba_backend):
    """One scalar in, a 0-d result out (Numba returns a Python number): the fast path's
    own branch gives the same Array as the full path, for each kind of scalar."""
    f = astjax.jit(_plus_one)
    for x in [np.float32(0.5), 0.5, np.float64(0.5), 2, np.float32(-3.0)] * 2:
        got = f(x)
        assert isinstance(got, astjax.Array) and got.shape == () and got.dtype == np.float32
        assert float(got) == np.float32(x) + np.float32(1.0)
    assert len(f.fast) >= 3


def test_errors_raised_by_generated_code_name_the_file_of_their_line(numba_backend):
    """Inlined derivative rules keep their own file in the messages of the checks generated
    for them (a message once paired the entry's file with a rule's line)."""
    import re
    source = astjax.make_source(astjax.jit(astjax.hessian(AD.loop_for)))(X, 3)
    commented = set(re.findall(r"# (\w+\.py:\d+)", source))
    raised = re.findall(r"raise \w+\('(\w+\.py:\d+)", source)
    assert raised and set(raised) <= commented


def _measured_after_a_loop(x, w, k):
    y = x
    for i in range(3):
        y = jnp.tanh(y * w) + x
    z = x[:k]
    for i in range(2):
        z = z + w  # z's size 1 (k == 1) broadcasts: z does not keep x[:k]'s shape
    return jnp.zeros(y.shape) + jnp.sum(x), jnp.zeros(z.shape)


def test_a_loop_computing_a_value_only_measured_goes(numba_backend):
    """y's shape is x's: every assignment keeps it (elementwise with operands of its
    layout), so the loop computing y goes. z's shape is not known: its loop stays."""
    x, w = np.linspace(0.1, 1.0, 5).astype(np.float32), np.ones(5, np.float32)
    source = astjax.make_source(astjax.jit(_measured_after_a_loop))(x, w, 5)
    assert "tanh" not in source and source.count("for ") >= 2
    for k in (5, 1):
        got, compiled = _run(_measured_after_a_loop, x, w, k)
        assert compiled.backend == "numba"
        _assert_tree_close(got, _measured_after_a_loop(x, w, k), 1e-6)  # eagerly, op by op


def _reassigns_its_literal_argument(x, k, m):
    if jnp.sum(x) > 0:
        k = 5
    t = 0.0
    for r in range(2):
        j = m
        m = m + 1
        t = t + x[j]
    for j in range(m):  # a trip count known when the code is generated (last-trip guard)
        x = jnp.sin(x)
    return x * k + t


def _calls_with_literals(x):
    return _reassigns_its_literal_argument(x, 2, 1)


def _loss_with_literals(x):
    return jnp.sum(_calls_with_literals(x))


def test_an_inlined_callee_binds_its_literal_arguments(numba_backend):
    """A literal argument is bound in the inlined body: the callee may assign the parameter
    (its value after a branch was once Numba's zero for an unset variable)."""
    grad = astjax.jit(astjax.grad(_loss_with_literals))
    for x in (-np.array([1.0, 2.0, 3.0], np.float32), np.array([1.0, 2.0, 3.0], np.float32)):
        got, compiled = _run(_calls_with_literals, x)
        assert compiled.backend == "numba", compiled.fallback_reason
        np.testing.assert_allclose(got, _calls_with_literals(x), rtol=1e-6)  # eagerly
        expected = astjax.grad(_loss_with_literals)(x)  # the python backend
        np.testing.assert_allclose(grad(x), expected, rtol=1e-5)
    (compiled,) = grad.cache.values()
    assert compiled.backend == "numba", compiled.fallback_reason


def _innermost_sum(x):
    total = jnp.sum(x)
    return total


def _middle_scaled(x):
    return _innermost_sum(x) * 2.0


def _outer_shifted(x):
    return _middle_scaled(x) + 1.0


def test_an_inlined_callee_is_copied_and_renamed_once(numba_backend):
    """The inliner copied a callee's already inlined body at every level of a chain of calls
    (its locals renamed once per level: total__1__2): jit(grad(sum of gamma draws)) was a
    chain twelve deep, and that took half of its code generation time. Now each call's
    body is copied once and the calls in it expanded in that copy."""
    x = np.float32([1.0, 2.0, 3.0])
    source = astjax.make_source(astjax.jit(_outer_shifted))(x)
    assert re.search(r"\btotal__\d+ =", source) and not re.search(r"__\d+__\d+", source)
    got, compiled = _run(_outer_shifted, x)
    assert compiled.backend == "numba", compiled.fallback_reason
    np.testing.assert_allclose(got, 13.0)


def _rounded(x):
    return (jnp.round(x), jnp.round(x, 2), jnp.round(x, -1), x[:7].astype(jnp.int32).round(),
            x.round(1))


def test_round_compiles_as_numpy_rounds(numba_backend):
    """jnp.round on Numba (it had no lowering: the function ran on the python backend),
    half to even at any decimals, as NumPy's."""
    x = np.float32([0.5, 1.5, 2.5, -0.5, 1.2345, -7.77, 123.456, np.nan, np.inf])
    jitted = astjax.jit(_rounded)
    got = jitted(x)
    (compiled,) = jitted.cache.values()
    assert compiled.backend == "numba", compiled.fallback_reason
    want = (np.round(x), np.round(x, 2), np.round(x, -1), np.round(x[:7].astype(np.int32)),
            np.round(x, 1))
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
        assert g.dtype == w.dtype


def test_runtime_helpers_compile_one_version_per_dtype_for_generated_code():
    """Generated code's calls to _rt.dot compile one version per dtype, whatever the
    matrices' layouts (it had one per layout pair), and _rt.empty/full one per rank: a
    shape (n, 1) types as (int64, Literal[int](1)) and had a version of its own. Strided
    matrices are copied before gemm; results against NumPy."""
    import numba
    from numba.core import types
    from astjax._src.backends.numba_cpu import runtime

    @numba.njit
    def products(a, b, n):
        strided = runtime.dot(a[:, ::2], b[::2, :])
        return (runtime.dot(a, b), runtime.dot(b.T, a.T), strided,
                runtime.empty((n, 1), np.float32).shape, runtime.full((n, n), np.float32(2)),
                runtime.dot(a, np.ascontiguousarray(b[:, 0])), runtime.dot(a[0, ::2], b[::2, 0]))

    before = {f: set(f.signatures) for f in (runtime.dot, runtime.empty, runtime.full)}
    rng = np.random.default_rng(1)
    a = rng.normal(size=(4, 6)).astype(np.float32)
    b = rng.normal(size=(6, 3)).astype(np.float32)
    for x, y in [(a, b), (np.asfortranarray(a), b), (a, np.asfortranarray(b))]:
        with warnings.catch_warnings():  # a matrix-vector product keeps its layout, strided
            warnings.simplefilter("error", numba.NumbaPerformanceWarning)  # vectors are copied
            ab, ba, strided, shape, full, av, vv = products(x, y, 3)
        np.testing.assert_allclose(av, a @ b[:, 0], rtol=1e-5)
        np.testing.assert_allclose(vv, a[0, ::2] @ b[::2, 0], rtol=1e-5)  # strided vectors
        np.testing.assert_allclose(ab, a @ b, rtol=1e-5)
        np.testing.assert_allclose(ba, (a @ b).T, rtol=1e-5)
        np.testing.assert_allclose(strided, a[:, ::2] @ b[::2, :], rtol=1e-5)
        assert shape == (3, 1) and (full == 2).all() and full.shape == (3, 3)
    new = {f: set(f.signatures) - before[f] for f in before}
    matrix = types.Array(types.float32, 2, "A")
    assert all(sig == (matrix, matrix) or sig[1].ndim == 1 for sig in new[runtime.dot]), \
        new[runtime.dot]
    for f in (runtime.empty, runtime.full):
        assert not any(isinstance(t, types.Literal) for sig in new[f] for arg in sig
                       for t in getattr(arg, "types", (arg,))), new[f]


def test_runtime_dot_calls_gemm_for_every_layout_pair():
    """Generated code's _rt.dot calls BLAS's gemm itself for C- and F-ordered float
    matrices (one compile per dtype): every layout pair, empty and size-1 dims, against
    NumPy."""
    from astjax._src.backends.numba_cpu import runtime
    rng = np.random.default_rng(0)
    for dtype in (np.float32, np.float64, np.complex64):
        for m, k, n in [(3, 4, 5), (1, 7, 1), (6, 1, 2), (0, 3, 2), (3, 0, 2)]:
            a = rng.normal(size=(m, k)).astype(dtype)
            b = rng.normal(size=(k, n)).astype(dtype)
            for x in (a, np.asfortranarray(a)):
                for y in (b, np.asfortranarray(b)):
                    got, want = runtime.dot(x, y), np.dot(x, y)
                    assert got.dtype == want.dtype and got.shape == want.shape
                    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
