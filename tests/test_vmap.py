"""vmap: every registered op against stacking the op applied per slice, batched control
flow, compositions with grad/jit/vmap, in_axes/out_axes and JAX's errors.

References are per-example loops: the same function called eagerly (NumPy underneath) on
each slice of the mapped arguments, results stacked along out_axes.
"""
import atexit
import importlib.util
import os
import shutil
import sys
import tempfile

import numpy as np
import pytest

import astjax
import astjax.numpy as jnp
from astjax import grad, jacfwd, jacrev, jit, make_source, value_and_grad, vmap
from astjax._src.ops.registry import REGISTRY
from astjax.test_util import check_grads

B = 3  # batch size of the op tests


@pytest.fixture(autouse=True)
def _python_backend():
    """Compositions with jit use the python backend here (Numba compiles take seconds);
    test_numba_backend runs one program through Numba."""
    before = astjax.config.astjax_jit_backend
    astjax.config.update("astjax_jit_backend", "python")
    yield
    astjax.config.update("astjax_jit_backend", before)


# --- per-example reference -------------------------------------------------------------------

def _slice(value, axis, b):
    if axis is None:
        return jnp.asarray(value) if isinstance(value, np.ndarray) else value
    if isinstance(value, dict):
        return {k: _slice(v, axis[k] if isinstance(axis, dict) else axis, b)
                for k, v in value.items()}
    if isinstance(value, (tuple, list)):
        axes = axis if isinstance(axis, (tuple, list)) else [axis] * len(value)
        return type(value)(_slice(v, a, b) for v, a in zip(value, axes))
    return jnp.asarray(np.take(np.asarray(value), b, axis=axis))


def _size(value, axis):
    if axis is None:
        return None
    if isinstance(value, dict):
        return next(s for k, v in value.items()
                    if (s := _size(v, axis[k] if isinstance(axis, dict) else axis)) is not None)
    if isinstance(value, (tuple, list)):
        axes = axis if isinstance(axis, (tuple, list)) else [axis] * len(value)
        return next(s for v, a in zip(value, axes) if (s := _size(v, a)) is not None)
    return np.shape(value)[axis]


def loop_reference(fn, args, in_axes=0, out_axes=0):
    """``vmap(fn, in_axes, out_axes)(*args)`` as a loop of eager calls on slices."""
    axes = tuple(in_axes) if isinstance(in_axes, (tuple, list)) else (in_axes,) * len(args)
    n = next(s for a, ax in zip(args, axes) if (s := _size(a, ax)) is not None)
    outs = [fn(*[_slice(a, ax, b) for a, ax in zip(args, axes)]) for b in range(n)]
    return _stack(outs, out_axes)


def _stack(outs, out_axes):
    first = outs[0]
    if isinstance(first, dict):
        return {k: _stack([o[k] for o in outs], out_axes[k] if isinstance(out_axes, dict)
                          else out_axes) for k in first}
    if isinstance(first, (tuple, list)):
        axes = out_axes if isinstance(out_axes, (tuple, list)) else [out_axes] * len(first)
        return type(first)(_stack([o[k] for o in outs], axes[k]) for k in range(len(first)))
    outs = [np.asarray(jnp.asarray(o)) for o in outs]  # Python numbers as JAX types them
    if out_axes is None:
        return outs[0]
    return np.stack(outs, axis=out_axes)


def assert_tree_close(out, ref, rtol=1e-5, atol=1e-6):
    if isinstance(ref, dict):
        assert isinstance(out, dict) and set(out) == set(ref)
        for k in ref:
            assert_tree_close(out[k], ref[k], rtol, atol)
        return
    if isinstance(ref, (tuple, list)):
        assert isinstance(out, (tuple, list)) and len(out) == len(ref), (out, ref)
        for o, r in zip(out, ref):
            assert_tree_close(o, r, rtol, atol)
        return
    out, ref = np.asarray(out), np.asarray(ref)
    assert out.shape == ref.shape, (out.shape, ref.shape)
    assert out.dtype == ref.dtype, (out.dtype, ref.dtype)
    if ref.dtype.kind in "fc":
        np.testing.assert_allclose(out, ref, rtol=rtol, atol=atol, equal_nan=True)
    else:
        np.testing.assert_array_equal(out, ref)


def check(fn, *args, in_axes=0, out_axes=0, rtol=1e-5, atol=1e-6, loops=None):
    """vmap against the per-example loop; ``loops``: whether the generated code may (None),
    must (True) or must not (False) fall back to a loop over the examples."""
    f = vmap(fn, in_axes, out_axes)
    out = f(*args)
    ref = loop_reference(fn, args, in_axes, out_axes)
    assert_tree_close(out, ref, rtol, atol)
    if loops is not None:
        source = generated_source(f)
        assert ("_example" in source) == loops, source
    return out


def generated_source(f):
    (compiled,) = f.cache.values()
    return compiled.source


# --- registry-driven op tests ------------------------------------------------------------------
# A sample is (op, expression over operands a, b, c, ..., per-example operand generators). The
# expressions become functions of a generated module (compiled from its source like user code).

def F(*shape, lo=-1.0, hi=1.0, dtype=np.float32):
    return lambda rng: rng.uniform(lo, hi, shape).astype(dtype)


def I(*shape, lo=0, hi=3):
    return lambda rng: rng.integers(lo, hi, shape).astype(np.int32)


def U(*shape):
    return lambda rng: rng.integers(0, 2 ** 32, shape, dtype=np.uint32)


def Bo(*shape):
    return lambda rng: rng.random(shape) > 0.5


def SPECIAL(*shape):
    values = np.array([np.inf, -np.inf, np.nan, 1.5], np.float32)
    return lambda rng: values[rng.integers(0, 4, shape)]


POS = dict(lo=0.2, hi=0.9)
_INT_OPS = {"bitwise_and", "bitwise_or", "bitwise_xor", "invert", "left_shift", "right_shift",
            "floor_divide", "remainder"}
_BOOL_OPS = {"logical_and", "logical_or", "logical_xor", "logical_not"}


def _elementwise_samples():
    out = []
    for name, op in REGISTRY.items():
        if op.family != "elementwise" or not hasattr(jnp, name):
            continue  # (scipy.special's ops: tests/test_scipy_special.py)
        n = len(op.operands)
        if name in _BOOL_OPS:
            gens = [Bo(2, 3), Bo(3)][:n]
        elif name in _INT_OPS:
            gens = [I(2, 3, lo=1, hi=9), I(3, lo=1, hi=4)][:n]
        elif name == "arccosh":
            gens = [F(2, 3, lo=1.2, hi=3.0)]
        else:
            gens = [F(2, 3, **POS), F(3, **POS)][:n]
        call = f"jnp.{name}({', '.join('abc'[:n])})"
        out.append((name, call, gens))
    return out


SAMPLES = _elementwise_samples() + [
    ("gammaln", "jss.gammaln(a)", [F(2, 3, **POS)]),  # ops of astjax.scipy.special
    ("digamma", "jss.digamma(a)", [F(2, 3, **POS)]),
    ("polygamma", "jss.polygamma(b, a)", [F(2, 3, **POS), I(3, lo=0, hi=3)]),
    ("igamma", "jss.gammainc(a, b)", [F(2, 3, **POS), F(3, **POS)]),
    ("igammac", "jss.gammaincc(a, b)", [F(2, 3, **POS), F(3, **POS)]),
    ("betainc", "jss.betainc(a, b, c)", [F(2, 3, **POS), F(3, **POS), F(3, lo=0.1, hi=0.9)]),
    ("random_gamma_grad", "astjax.lax.random_gamma_grad(a, b)", [F(2, 3, **POS), F(3, **POS)]),
    ("threefry2x32_x0", "_bits.threefry2x32_x0(a, b, c, d)", [U(2, 3), U(3), U(2, 3), U(3)]),
    ("threefry2x32_x1", "_bits.threefry2x32_x1(a, b, c, d)", [U(2, 3), U(3), U(3), U(2, 3)]),
    ("xla_log32", "_bits.xla_log32(a)", [F(2, 3, **POS)]),
    ("xla_log1p32", "_bits.xla_log1p32(a)", [F(2, 3)]),
    ("xla_exp32", "_bits.xla_exp32(a)", [F(2, 3)]),
    ("xla_erf32", "_bits.xla_erf32(a)", [F(2, 3)]),
    ("xla_erfinv32", "_bits.xla_erfinv32(a)", [F(2, 3)]),
    ("astype", "a.astype(jnp.int32)", [F(2, 3, lo=-5, hi=5)]),
    ("where", "jnp.where(a > 0, a, b)", [F(2, 3), F(3)]),
    ("where", "jnp.where(c, a, 0.5)", [F(3), None, Bo(2, 3)]),
    ("clip", "jnp.clip(a, b, 0.5)", [F(2, 3), F(3, lo=-1, hi=0)]),
    ("round", "jnp.round(a, 1)", [F(2, 3)]),
    ("nan_to_num", "jnp.nan_to_num(a, posinf=9.0)", [SPECIAL(2, 3)]),
    ("stop_gradient", "astjax.lax.stop_gradient(a)", [F(2, 3)]),
    ("array", "jnp.array([a, b[0], 2.0])", [F(), F(2)]),
    ("array", "jnp.array((a, b), ndmin=3)", [F(2), F(2)]),
    ("asarray", "jnp.asarray(a)", [F(2, 3)]),
    ("full", "jnp.full((2, 3), a)", [F(3)]),
    ("zeros_like", "jnp.zeros_like(a) + 1", [F(2, 3)]),
    ("ones_like", "jnp.ones_like(a, shape=(2,)) + a[0]", [F(2)]),
    ("empty_like", "jnp.empty_like(a)", [F(2, 3)]),
    ("full_like", "jnp.full_like(a, b)", [F(2, 3), F(3)]),
    ("linspace", "jnp.linspace(a, b, 4, axis=-1)", [F(2), F(2)]),
    ("diag", "jnp.diag(a, 1)", [F(3)]),
    ("diag", "jnp.diag(a)", [F(3, 3)]),
    ("sum", "jnp.sum(a)", [F(2, 3)]),
    ("sum", "a.sum(axis=(0, -1), keepdims=True)", [F(2, 3, 2)]),
    ("prod", "jnp.prod(a, axis=1)", [F(2, 3)]),
    ("max", "jnp.max(a, axis=0)", [F(2, 3)]),
    ("min", "a.min()", [F(2, 3)]),
    ("any", "jnp.any(a > 0.5, axis=-1)", [F(2, 3)]),
    ("all", "jnp.all(a > -0.5)", [F(2, 3)]),
    ("count_nonzero", "jnp.count_nonzero(a > 0, axis=0)", [F(2, 3)]),
    ("argmax", "jnp.argmax(a)", [F(2, 3)]),
    ("argmax", "jnp.argmax(a, axis=0, keepdims=True)", [F(2, 3)]),
    ("argmin", "jnp.argmin(a, keepdims=True)", [F(2, 3)]),
    ("mean", "jnp.mean(a, axis=1)", [F(2, 3)]),
    ("var", "jnp.var(a, ddof=1)", [F(2, 3)]),
    ("std", "jnp.std(a, axis=0)", [F(2, 3)]),
    ("cumsum", "jnp.cumsum(a)", [F(2, 3)]),
    ("cumprod", "jnp.cumprod(a, axis=-1)", [F(2, 3)]),
    ("reshape", "a.reshape(3, 2)", [F(2, 3)]),
    ("reshape", "jnp.reshape(a, (-1,))", [F(2, 3)]),
    ("reshape", "a.reshape(a.shape[1], a.shape[0])", [F(2, 3)]),
    ("ravel", "a.ravel()", [F(2, 3)]),
    ("swapaxes", "jnp.swapaxes(a, 0, -1)", [F(2, 3, 4)]),
    ("moveaxis", "jnp.moveaxis(a, 0, -1)", [F(2, 3, 4)]),
    ("expand_dims", "jnp.expand_dims(a, (0, 2))", [F(2, 3)]),
    ("squeeze", "jnp.squeeze(a, 1)", [F(2, 1, 3)]),
    ("broadcast_to", "jnp.broadcast_to(a, (4, 2, 3))", [F(2, 1)]),
    ("broadcast_arrays", "jnp.broadcast_arrays(a, b)", [F(2, 1), F(3)]),
    ("atleast_1d", "jnp.atleast_1d(a)", [F()]),
    ("atleast_2d", "jnp.atleast_2d(a, b)", [F(3), F()]),
    ("atleast_3d", "jnp.atleast_3d(a)", [F(2, 3)]),
    ("concatenate", "jnp.concatenate([a, b], axis=-1)", [F(2, 3), F(2, 1)]),
    ("concatenate", "jnp.concatenate((a, b), axis=None)", [F(2, 3), F(2)]),
    ("stack", "jnp.stack([a, b], axis=1)", [F(2, 3), F(2, 3)]),
    ("hstack", "jnp.hstack([a, b])", [F(2), F(3)]),
    ("vstack", "jnp.vstack((a, b))", [F(3), F(2, 3)]),
    ("split", "jnp.split(a, 2, axis=1)", [F(3, 4)]),
    ("array_split", "jnp.array_split(a, 3)", [F(4, 2)]),
    ("tile", "jnp.tile(a, (2, 1, 2))", [F(2, 3)]),
    ("repeat", "jnp.repeat(a, 2)", [F(2, 3)]),
    ("repeat", "a.repeat(2, axis=0)", [F(2, 3)]),
    ("flip", "jnp.flip(a)", [F(2, 3)]),
    ("roll", "jnp.roll(a, 2)", [F(2, 3)]),
    ("roll", "jnp.roll(a, -1, axis=1)", [F(2, 3)]),
    ("dot", "jnp.dot(a, b)", [F(2, 3), F(3)]),
    ("dot", "jnp.dot(a, b)", [F(2, 3), F(4, 3, 2)]),
    ("dot", "a.dot(b)", [F(3), F()]),
    ("matmul", "a @ b", [F(2, 3), F(3, 4)]),
    ("matmul", "a @ b", [F(3), F(2, 3, 4)]),
    ("matmul", "jnp.matmul(a, b)", [F(2, 2, 3), F(3)]),
    ("vdot", "jnp.vdot(a, b)", [F(2, 3), F(6)]),
    ("inner", "jnp.inner(a, b)", [F(2, 3), F(4, 3)]),
    ("outer", "jnp.outer(a, b)", [F(3), F(2, 2)]),
    ("tensordot", "jnp.tensordot(a, b, axes=([0, 2], [1, 0]))", [F(2, 3, 4), F(4, 2)]),
    ("tensordot", "jnp.tensordot(a, b, 1)", [F(2, 3), F(3, 2)]),
    ("einsum", "jnp.einsum('ij,jk->ki', a, b)", [F(2, 3), F(3, 4)]),
    ("einsum", "jnp.einsum('...i,i', a, b)", [F(2, 3), F(3)]),
    ("transpose", "a.T", [F(2, 3, 4)]),
    ("transpose", "jnp.transpose(a, (1, 0, 2))", [F(2, 3, 4)]),
    ("matrix_transpose", "jnp.matrix_transpose(a)", [F(2, 3, 4)]),
    ("trace", "jnp.trace(a, 1)", [F(3, 3)]),
    ("getitem", "a[1:, None, ::-1]", [F(3, 4)]),
    ("getitem", "a[..., b]", [F(2, 4), I()]),
    ("getitem", "a[b]", [F(4, 2), I(2, 3)]),
    ("getitem", "a[:, b]", [F(2, 4), I(3)]),
    ("getitem", "a[b, :, c]", [F(3, 2, 4), I(2), I(2)]),
    ("getitem", "a[0, :, b]", [F(3, 2, 4), I(2)]),
    ("at_set", "a.at[b].set(c)", [F(4), I(), F()]),
    ("at_set", "a.at[1:, 0].set(c)", [F(3, 2), None, F(2)]),
    ("at_add", "a.at[:, b].add(c)", [F(2, 4), I(3), F(2, 3)]),
    ("at_subtract", "a.at[b, :, c].subtract(1.0)", [F(3, 2, 4), I(2), I(2)]),
    ("at_multiply", "a.at[0, b].multiply(c)", [F(2, 4), I(2), F(2)]),
    ("at_divide", "a.at[b].divide(2.0)", [F(4), I(2)]),
    ("at_power", "a.at[b].power(c)", [F(4, **POS), I(), F(**POS)]),
    ("at_min", "a.at[b].min(c)", [F(4), I(3), F()]),
    ("at_max", "a.at[..., b].max(c)", [F(2, 4), I(), F(2)]),
    ("frexp", "jnp.frexp(a)", [F(2, 3)]),
    ("ldexp", "jnp.ldexp(a, b)", [F(2, 3), I(3)]),
    ("fma", "jnp.fma(a, b, c)", [F(2, 3), F(3), F()]),
    ("argsort", "jnp.argsort(a)", [F(2, 3)]),
    ("fft", "jnp.fft.irfft(jnp.fft.fft(a, 4, axis=0), 5)", [F(2, 3)]),
    ("linalg_solve", "jnp.linalg.solve(a + 3.0 * jnp.eye(3), b)", [F(3, 3), F(3)]),
    ("linalg_solve", "jnp.linalg.solve(a + 3.0 * jnp.eye(3), b)", [F(3, 3), F(3, 2)]),
    ("linalg_cholesky", "jnp.linalg.cholesky(a @ a.T + jnp.eye(3))", [F(3, 3)]),
    ("linalg_eigh", "jnp.linalg.eigh(a + a.T)[0] + jnp.abs(jnp.linalg.eigh(a + a.T)[1][0])",
     [F(3, 3)]),
    ("linalg_eig", "jnp.sort(jnp.abs(jnp.linalg.eigvals(a)))", [F(3, 3)]),
    ("linalg_svd", "jnp.linalg.svd(a, compute_uv=False)", [F(3, 2)]),
    ("linalg_qr", "jnp.abs(jnp.linalg.qr(a)[1])", [F(3, 2)]),
    ("linalg_det", "jnp.linalg.det(a)", [F(3, 3)]),
    ("linalg_slogdet", "jnp.linalg.slogdet(a + 3.0 * jnp.eye(3))[1]", [F(3, 3)]),
    ("unbroadcast", "_ajx.unbroadcast(a, b)", [F(2, 3), F(1, 3)]),
    ("cotangent_like", "_ajx.cotangent_like(a, b)", [F(3), F(2, 3)]),
    ("shape_stub", "_ajx.shape_stub(a)", [F(2, 3)]),
]

# ops whose operands are only sizes (nothing to batch): used inside a batched function
NO_OPERANDS = {"zeros", "ones", "empty", "arange", "eye", "identity", "tri",
               "same_batch_size"}


def _module():
    lines = ["import astjax", "import astjax.numpy as jnp", "import astjax.scipy.special as jss",
             "from astjax._src.ad import adlib as _ajx",
             "from astjax._src.ops import bits as _bits", ""]
    for k, (name, expr, gens) in enumerate(SAMPLES):
        params = ", ".join("abcd"[:len(gens)])
        lines += [f"def op_{k}({params}):", f"    return {expr}", ""]
    folder = tempfile.mkdtemp(prefix="astjax_vmap_ops_")
    atexit.register(shutil.rmtree, folder, True)
    path = os.path.join(folder, "vmap_op_samples.py")
    with open(path, "w") as f:
        f.write("\n".join(lines))
    spec = importlib.util.spec_from_file_location("vmap_op_samples", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["vmap_op_samples"] = module
    spec.loader.exec_module(module)
    return module


SAMPLE_FUNCTIONS = _module()


def _variants(gens):
    """in_axes mixes for a sample: everything batched at axis 0; the first operand batched
    along its last axis and the rest unbatched; the first unbatched and the rest batched."""
    live = [k for k, g in enumerate(gens) if g is not None]
    out = [tuple(0 if g is not None else None for g in gens)]
    out.append(tuple((-1 if k == live[0] else None) if g is not None else None
                     for k, g in enumerate(gens)))
    if len(live) > 1:
        out.append(tuple((None if k == live[0] else 0) if g is not None else None
                         for k, g in enumerate(gens)))
    return out


def _batched_args(gens, in_axes, rng):
    args = []
    for g, ax in zip(gens, in_axes):
        if g is None:
            args.append(None)
        elif ax is None:
            args.append(g(rng))
        else:
            stacked = np.stack([g(rng) for _ in range(B)])
            args.append(np.moveaxis(stacked, 0, ax))
    return args


CASES = [(k, axes) for k, (_, _, gens) in enumerate(SAMPLES) for axes in _variants(gens)]


@pytest.mark.parametrize("k,in_axes", CASES,
                         ids=[f"{SAMPLES[k][0]}-{k}-{axes}" for k, axes in CASES])
def test_op_under_vmap(k, in_axes):
    name, expr, gens = SAMPLES[k]
    fn = getattr(SAMPLE_FUNCTIONS, f"op_{k}")
    rng = np.random.default_rng(k)
    args = _batched_args(gens, in_axes, rng)
    check(fn, *args, in_axes=in_axes, rtol=2e-5, atol=1e-5, loops=name == "diag")


def test_every_op_has_a_sample():
    # debug_callback has no result to compare: tests/test_debug_print.py batches it;
    # pure_callback's batching (vmap_method) is tests/test_pure_callback.py's
    tested = {name for name, _, _ in SAMPLES} | NO_OPERANDS | {"debug_callback",
                                                               "pure_callback"}
    missing = sorted(set(REGISTRY) - tested)
    assert not missing, f"ops without a vmap test sample: {missing}"


def test_every_op_with_operands_has_a_rule():
    from astjax._src.batching.rules import rule_for
    no_rule = sorted(n for n, op in REGISTRY.items() if rule_for(op) is None)
    # these loop over the examples (diag) or take no operands at all
    assert set(no_rule) <= NO_OPERANDS | {"diag"}, no_rule


def size_ops(x, n):
    return x * jnp.arange(3.0) + jnp.zeros(3) + jnp.ones((1, 3)) + jnp.eye(3)[n] + \
        jnp.identity(3)[0] + jnp.tri(3)[1] + jnp.empty(3)


def test_ops_without_operands():
    x = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    check(size_ops, x, 1, in_axes=(0, None))


# --- control flow on batched values ----------------------------------------------------------

rng = np.random.default_rng(0)
X = rng.standard_normal((5, 3)).astype(np.float32)


def branch(x):
    if x.sum() > 0:
        y = jnp.sin(x) * 2.0
    else:
        y = -x
    return y


def elif_chain(x, k):
    if k == 0:
        y = x + 1.0
    elif k == 1:
        y = x * x
    else:
        y = x
    return y


def conditional_expression(x):
    return x if x[0] > 0 else x * 0.5


def short_circuit(x):
    if x[0] > 0 and x[1] > 0:
        return x.sum()
    return 0.0


def early_return(x):
    if x[0] > 0:
        return x * 2.0
    y = x + 1.0
    if y[1] > 0:
        return y
    return -y


def out_of_range_guarded(x, i):
    if i < 3:
        y = x[i]  # only valid where the branch is taken: loops over the examples
    else:
        y = x[0] * 10.0
    return y


def test_if_on_batched_values_selects():
    check(branch, X, loops=False)
    check(elif_chain, X, np.array([0, 1, 2, 1, 0], np.int32), loops=False)
    check(conditional_expression, X, loops=False)
    check(short_circuit, X, loops=False)
    check(early_return, X, loops=False)


def test_if_with_unbatched_condition_stays_an_if():
    f = vmap(elif_chain, (0, None))
    assert_tree_close(f(X, 1), loop_reference(elif_chain, (X, 1), (0, None)))
    assert "if " in generated_source(f) and "where" not in generated_source(f)


def test_unsafe_branch_loops_over_examples():
    check(out_of_range_guarded, X, np.array([0, 2, 7, 1, 9], np.int32), loops=True)


def halve_until_small(x):
    n = 0
    while jnp.abs(x) > 1.0:
        x = x / 2.0
        n = n + 1
    return x, n


def count_up(x, n):
    acc = jnp.zeros_like(x)
    for i in range(n):
        acc = acc + x * i
    return acc


def nested_loops(x, n):
    acc = jnp.zeros_like(x)
    for i in range(n):
        j = 0
        while j < i:
            acc = acc + x * j
            j = j + 1
    return acc


def newton_sqrt(a):
    x = a
    while jnp.abs(x * x - a) > 1e-4 * a:
        x = 0.5 * (x + a / x)
    return x


def test_while_on_batched_condition_masks_finished_examples():
    vals = np.array([0.5, 3.0, -17.0, 1.5, 100.0], np.float32)
    out = check(halve_until_small, vals, loops=False)
    assert out[1].tolist() == [0, 2, 5, 1, 7]
    check(newton_sqrt, np.array([2.0, 9.0, 1e4, 0.25], np.float32), loops=False)


def test_for_with_per_example_trip_counts():
    check(count_up, X, np.array([0, 3, 1, 5, 2], np.int32), loops=False)
    check(nested_loops, X, np.array([0, 3, 1, 4, 2], np.int32))
    check(count_up, X, 4, in_axes=(0, None), loops=False)


def index_loop(x, n):
    i = 0
    total = 0.0
    while i < n:
        total = total + x[i]  # x[i] fails past the end: the loop runs per example
        i = i + 1
    return total


def test_unsafe_while_loops_over_examples():
    check(index_loop, X, np.array([0, 3, 1, 2, 3], np.int32), loops=True)


def fact(n):
    if n <= 1.0:
        return 1.0
    return n * fact(n - 1.0)


def helper(w, x):
    return jnp.tanh(w @ x)


def calls_helper(w, x):
    return helper(w, x) + helper(w, 2.0 * x)


def test_calls_and_recursion():
    check(fact, np.array([1.0, 3.0, 5.0, 2.0], np.float32))
    w = rng.standard_normal((4, 3)).astype(np.float32)
    check(calls_helper, w, X, in_axes=(None, 0), loops=False)
    check(calls_helper, np.stack([w] * 5), X, loops=False)


# --- compositions ----------------------------------------------------------------------------

W = rng.standard_normal((4, 3)).astype(np.float32)


def loss(w, x):
    return jnp.sum(jnp.tanh(w @ x) ** 2)


def loss_grad_ref(w, x):
    h = np.tanh(w @ x)
    return np.outer(2 * h * (1 - h ** 2), x)


def branchy_loss(x):
    if x.sum() > 0:
        y = jnp.sin(x) * x
    else:
        y = jnp.cos(x)
    return y.sum()


def looping_loss(x, n):
    y = x
    for i in range(n):
        y = jnp.sin(y) + x
    return (y * y).sum()


def test_per_example_gradients():
    out = vmap(grad(loss), (None, 0))(W, X)
    np.testing.assert_allclose(out, np.stack([loss_grad_ref(W, x) for x in X]), rtol=1e-4,
                               atol=1e-5)
    # with branches and loops on values (taped by reverse mode)
    check(grad(branchy_loss), X, rtol=1e-4, atol=1e-5)
    check(grad(looping_loss), X, 3, in_axes=(0, None), rtol=1e-4, atol=1e-5)
    check(value_and_grad(loss, argnums=1), W, X, in_axes=(None, 0), rtol=1e-4, atol=1e-5)


def with_aux(x):
    return jnp.sum(x ** 3), x * 2.0


def test_per_example_value_and_grad_with_aux():
    (value, aux), g = vmap(value_and_grad(with_aux, has_aux=True))(X)
    np.testing.assert_allclose(value, (X ** 3).sum(1), rtol=1e-5)
    np.testing.assert_allclose(aux, X * 2, rtol=1e-6)
    np.testing.assert_allclose(g, 3 * X ** 2, rtol=1e-5)


def batch_loss(w, xs):
    return vmap(loss, (None, 0))(w, xs).sum()


def test_grad_of_vmap():
    g = grad(batch_loss)(W, X)
    np.testing.assert_allclose(g, sum(loss_grad_ref(W, x) for x in X), rtol=1e-4, atol=1e-5)
    g2 = grad(lambda w: vmap(loss, (None, 0))(w, X).sum())(W)
    np.testing.assert_allclose(g2, g, rtol=1e-6)


def layer(w, x):
    return jnp.tanh(x @ w)


def test_jacobians_and_vmap():
    w = rng.standard_normal((3, 4)).astype(np.float32)
    xs = X[:2]
    h = np.tanh(xs @ w)
    ref = np.zeros((2, 4, 2, 3), np.float32)
    for b in range(2):
        ref[b, :, b, :] = (1 - h[b] ** 2)[:, None] * w.T
    np.testing.assert_allclose(jacrev(lambda x: vmap(layer, (None, 0))(w, x))(xs), ref,
                               rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(jacfwd(lambda x: vmap(layer, (None, 0))(w, x))(xs), ref,
                               rtol=1e-5, atol=1e-6)
    per = vmap(jacrev(layer, argnums=1), (None, 0))(w, xs)
    np.testing.assert_allclose(per, np.stack([ref[b, :, b, :] for b in range(2)]), rtol=1e-5,
                               atol=1e-6)


def test_jit_and_vmap():
    ref = loop_reference(loss, (W, X), (None, 0))
    assert_tree_close(jit(vmap(loss, (None, 0)))(W, X), ref)
    assert_tree_close(vmap(jit(loss), (None, 0))(W, X), ref)


def test_nested_vmap():
    outer = vmap(vmap(lambda a, b: a * b + 1.0, (0, None)), (None, 0))
    a, b = X[0], X[1]
    np.testing.assert_allclose(outer(a, b), b[:, None] * a[None, :] + 1, rtol=1e-6)
    pairwise = vmap(vmap(lambda p, q: jnp.sum((p - q) ** 2), (None, 0)), (0, None))
    ref = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)
    np.testing.assert_allclose(pairwise(X, X), ref, rtol=1e-5, atol=1e-6)
    per_example_jacobian_rows = vmap(vmap(grad(lambda x, i: jnp.tanh(x)[i]), (None, 0)),
                                     (0, None))(X, np.arange(3, dtype=np.int32))
    np.testing.assert_allclose(per_example_jacobian_rows,
                               np.stack([np.diag(1 - np.tanh(x) ** 2) for x in X]), rtol=1e-5,
                               atol=1e-6)


def test_numba_backend():
    astjax.config.update("astjax_jit_backend", "numba")
    f = jit(vmap(loss, (None, 0)))
    assert_tree_close(f(W, X), loop_reference(loss, (W, X), (None, 0)), rtol=1e-5)
    assert_tree_close(f(W, X[:2]), loop_reference(loss, (W, X[:2]), (None, 0)), rtol=1e-5)


# --- in_axes, out_axes, pytrees ----------------------------------------------------------------

def affine(p, x):
    return {"y": jnp.tanh(p["w"] @ x + p["b"]), "n": jnp.dot(x, x)}


def pair(x, y):
    return x * 2.0, y.sum()


def test_in_axes_forms():
    xs3 = rng.standard_normal((4, 3, 2)).astype(np.float32)
    y = rng.standard_normal((3, 2)).astype(np.float32)
    f = lambda x, y: jnp.sum(x * y, axis=0) / (1.0 + x.max())
    check(f, xs3, y, in_axes=(0, None), loops=False)
    check(f, np.moveaxis(xs3, 0, 1), y, in_axes=(1, None))
    check(f, np.moveaxis(xs3, 0, -1), y, in_axes=(-1, None))
    check(f, xs3, np.stack([y] * 4, 2), in_axes=[0, 2])
    check(f, xs3, y, in_axes=(0, None), out_axes=-1)


def test_pytrees():
    p = {"w": rng.standard_normal((5, 3)).astype(np.float32),
         "b": rng.standard_normal(5).astype(np.float32)}
    check(affine, p, X, in_axes=(None, 0), loops=False)
    pb = {"w": np.stack([p["w"]] * 5, -1), "b": rng.standard_normal((5, 5)).astype(np.float32)}
    check(affine, pb, X, in_axes=({"w": -1, "b": 0}, 0))
    check(affine, p, X, in_axes=(None, 0), out_axes={"y": 1, "n": 0})
    check(lambda t, z: t[0] * t[1] + z, (X, X[0]), X, in_axes=((0, None), 0))
    check(pair, X, X.T, in_axes=(0, 1), out_axes=(1, 0))


def test_axis_size_and_unbatched_outputs():
    out = vmap(lambda x: (x * 2.0, 1.0), in_axes=None, axis_size=4)(np.ones(3, np.float32))
    assert out[0].shape == (4, 3) and out[1].shape == (4,)
    out = vmap(lambda x, y: (x + 1.0, y), in_axes=(0, None), out_axes=(0, None))(X, X[0])
    np.testing.assert_allclose(out[1], X[0])
    out = vmap(lambda x: 3.0)(X)
    assert out.shape == (5,) and np.all(np.asarray(out) == 3.0)


def test_keyword_arguments_are_mapped():
    out = vmap(pair)(X, y=X)
    np.testing.assert_allclose(out[1], X.sum(1), rtol=1e-6)


def test_no_recompile_for_a_new_batch_size():
    f = vmap(loss, (None, 0))
    f(W, X)
    f(W, X[:2])
    assert len(f.cache) == 1


def test_readable_source():
    source = make_source(vmap(calls_helper, (None, 0)))(W, X)
    assert "def calls_helper_batched(w, x):" in source
    assert "def helper_batched(w, x):" in source
    assert "test_vmap.py:" in source
    assert "jnp.matmul(w, x_T" in source  # (m, k) @ (B, k).T: one product for the batch


# --- errors (JAX's messages) ---------------------------------------------------------------------

def test_inconsistent_sizes():
    with pytest.raises(ValueError, match="vmap got inconsistent sizes for array axes to be "
                                         "mapped"):
        vmap(pair)(X, X[:3])


def test_bad_in_axes():
    with pytest.raises(ValueError, match="vmap was requested to map its argument along axis 2"):
        vmap(pair, (2, 0))(X, X)
    with pytest.raises(ValueError, match="in_axes must be an int, None, or a tuple"):
        vmap(pair, (0, 0, 0))(X, X)
    with pytest.raises(ValueError, match="in_axes must be an int, None, or \\(nested\\)"):
        vmap(pair, ("a", 0))
    with pytest.raises(ValueError, match="at least one non-None value in in_axes"):
        vmap(pair, (None, None))(X, X)
    with pytest.raises(ValueError, match="tree prefix"):
        vmap(affine, ({"w": 0}, 0))({"w": X, "b": X}, X)


def test_mapped_output_with_out_axes_none():
    with pytest.raises(ValueError, match="vmap has mapped output but out_axes is None"):
        vmap(pair, out_axes=None)(X, X)


def cross_entropy(w, x, label):
    logits = x @ w
    logp = logits - jnp.log(jnp.sum(jnp.exp(logits)))
    return -logp[label]


def window_sum(x, i):
    return jnp.sum(x[i:i + 2] ** 2)


def zero_one(x, i):
    return jnp.sum(jnp.sin(x.at[i].set(0.0)))


def test_per_example_gradients_through_batched_indices():
    w = rng.standard_normal((3, 4)).astype(np.float32)
    labels = np.array([0, 3, 1, 2, 3], np.int32)
    out = check(grad(cross_entropy), w, X, labels, in_axes=(None, 0, 0), rtol=1e-4, atol=1e-5)
    z = X @ w
    p = np.exp(z) / np.exp(z).sum(1, keepdims=True)
    ref = np.einsum("bi,bj->bij", X, p - np.eye(4)[labels])
    np.testing.assert_allclose(out, ref, rtol=1e-4, atol=1e-5)
    idx = np.array([0, 1, 1, 0, 1], np.int32)
    check(grad(window_sum), X, idx, rtol=1e-5)
    check(grad(zero_one), X, idx, rtol=1e-5)


# --- the compiler's test programs, batched ------------------------------------------------------

from . import ad_programs as AD  # noqa: E402
from . import programs as PR  # noqa: E402

_PX = rng.standard_normal((3, 5)).astype(np.float32)
_PY = rng.standard_normal((3, 5)).astype(np.float32)
_N = np.array([4, 0, 2], np.int32)

PROGRAMS = [
    (PR.arith, (_PX, _PY[0]), (0, None)),
    (PR.aug_assign, (_PX,), 0),
    (PR.conditional_expr, (_PX, np.array([1, -1, 0], np.int32)), (0, 0)),
    (PR.early_return, (_PX, np.array([2, 1, 0], np.int32)), (0, 0)),
    (PR.for_range, (_PX, _N), (0, 0)),
    (PR.for_range_step, (_PX, np.array([7, 3, 1], np.int32)), (0, 0)),
    (PR.while_loop, (_PX, np.array([3, 1, 5], np.int32)), (0, 0)),
    (PR.break_continue, (_PX, np.array([8, 3, 0], np.int32)), (0, 0)),
    (PR.return_in_loop, (_PX, np.array([5, 2, 1], np.int32)), (0, 0)),
    (PR.tuple_unpack, (_PX, _PY), (0, 0)),
    (PR.enumerate_zip, (_PX, _PY), (0, 0)),
    (PR.iterate_array, (_PX.reshape(3, 5, 1),), 0),
    (PR.comprehension, (_PX, 4), (0, None)),
    (PR.shapes, (_PX,), 0),
    (PR.recursion, (_PX, np.array([3, 1, 0], np.int32)), (0, 0)),
    (PR.uses_globals, (np.ones((3, 3), np.float32),), 0),
    (PR.logical, (_PX, np.array([1, -1, 0], np.int32), np.array([-1, -1, 1], np.int32)),
     (0, 0, 0)),
    (PR.shifts, (np.arange(15, dtype=np.int32).reshape(3, 5), np.array([2, 0, 1], np.int32)),
     (0, 0)),
]


@pytest.mark.parametrize("fn,args,in_axes", PROGRAMS,
                         ids=[f"{fn.__name__}-{k}" for k, (fn, _, _) in enumerate(PROGRAMS)])
def test_programs(fn, args, in_axes):
    check(fn, *args, in_axes=in_axes, rtol=1e-5, atol=1e-5)


_AX = rng.standard_normal((3, 4))
_AY = rng.uniform(0.5, 1.5, (3, 4))

AD_PROGRAMS = [
    (AD.sum_logistic, (_AX,), 0),
    (AD.broadcasting, (_AX.reshape(3, 2, 2), _AY[:, :2]), (0, 0)),
    (AD.loop_for, (_AX, 4), (0, None)),
    (AD.loop_while, (_AX,), 0),
    (AD.branches, (_AX, np.array([1, -2, 0])), (0, 0)),
    (AD.value_branch, (np.concatenate([_AX[:2], -np.abs(_AX[2:])]),), 0),
    (AD.break_early, (_AX, np.array([10, 2, 1])), (0, 0)),
    (AD.calls, (_AX, _AY), (0, 0)),
    (AD.inplace, (_AX,), 0),
    (AD.recursive, (_AX, 3), (0, None)),
    (AD.uses_custom_vjp, (_AX,), 0),
    (AD.uses_custom_jvp, (_AX,), 0),
    (AD.checkpointed_loop, (_AX, 3), (0, None)),
    (AD.nested_loops, (_AX, np.array([1, 4, 2])), (0, 0)),
    (AD.pytree_params, ({"w": _AX, "b": _AY}, _AY[0]), (0, None)),
    (AD.joined, (_AX,), 0),
    (AD.concatenated_lists, (_AX.reshape(3, 2, 2),), 0),  # axis=None of an appended list
]


@pytest.mark.parametrize("fn,args,in_axes", AD_PROGRAMS,
                         ids=[f"{fn.__name__}-{k}" for k, (fn, _, _) in enumerate(AD_PROGRAMS)])
def test_per_example_gradients_of_programs(fn, args, in_axes, x64):
    check(grad(fn), *args, in_axes=in_axes, rtol=1e-6, atol=1e-8)


# --- astjax.lax under vmap ----------------------------------------------------------------------

def lax_cond(x):
    return astjax.lax.cond(x.sum() > 0, lambda v: v * 2.0, lambda v: -v, x)


def _fori_body(i, c):
    return c * 0.5 + i


def lax_fori(x, n):
    return astjax.lax.fori_loop(0, n, _fori_body, x)


def _while_cond(c):
    return c[0] < 10.0


def _while_body(c):
    return c[0] * 2.0 + 1.0, c[1] + 1


def lax_while(x):
    return astjax.lax.while_loop(_while_cond, _while_body, (x, 0))


def _scan_step(c, x):
    return c + x, c * x


def lax_scan(xs):
    return astjax.lax.scan(_scan_step, 0.0, xs)


def lax_scan_length(x):
    """No xs: the stacked ys are first made in the loop's first trip (they were broadcast
    again on every trip, a silently wrong result when length equals the batch size)."""
    return astjax.lax.scan(lambda c, _: (c * 0.5, c[0]), x, None, length=5)


def lax_window(x, i):
    return astjax.lax.dynamic_slice(x, (i,), (2,))


def lax_window_2d(x, i, j):
    return astjax.lax.dynamic_slice(x, (i, j), (2, 2))


def lax_update(x, i):
    return astjax.lax.dynamic_update_slice(x, jnp.ones(2, x.dtype), (i,))


def test_lax_control_flow_and_slices():
    n = np.array([0, 2, 4, 1, 3], np.int32)
    check(lax_cond, X, loops=False)
    check(lax_fori, X, n, loops=False)
    check(lax_fori, X, 3, in_axes=(0, None), loops=False)
    check(lax_while, np.abs(X[:, 0]), loops=False)
    check(lax_scan, X, loops=False)
    check(lax_scan_length, X, loops=False)
    check(lax_window, X, n, loops=False)
    check(lax_update, X, n, loops=False)
    x2 = rng.standard_normal((5, 4, 3)).astype(np.float32)
    check(lax_window_2d, x2, np.array([0, 2, 1, 5, -1], np.int32), n % 2, loops=False)
    check(grad(lambda x, i: jnp.sum(lax_window(x, i) * x[0])), X, n, rtol=1e-5)


# --- named axes and collectives ------------------------------------------------------------------

from astjax._src.batching.collectives import (all_gather, axis_index, pmax,  # noqa: E402
                                              pmean, pmin, psum)


def normalized(x):
    return x / psum(x.sum(), "i")


def centered(x):
    return x - pmean(x, "i")


def spread(x):
    return pmax(x, "i") - pmin(x, "i")


def gathered(x):
    return all_gather(x, "i").sum(0) * axis_index("i") + psum(1, "i")


def centered_rows(x):
    return x - pmean(x, "rows") + psum(1, "cols")


def test_collectives():
    np.testing.assert_allclose(vmap(normalized, axis_name="i")(X), X / X.sum(), rtol=1e-5)
    np.testing.assert_allclose(vmap(centered, axis_name="i")(X), X - X.mean(0), rtol=1e-5,
                               atol=1e-6)
    np.testing.assert_allclose(vmap(spread, axis_name="i")(X),
                               np.broadcast_to(X.max(0) - X.min(0), X.shape), rtol=1e-6)
    np.testing.assert_allclose(vmap(gathered, axis_name="i")(X),
                               X.sum(0) * np.arange(5)[:, None] + 5, rtol=1e-5)
    nested = vmap(vmap(centered_rows, axis_name="cols"), axis_name="rows")(X)
    np.testing.assert_allclose(nested, X - X.mean(0) + 3, rtol=1e-5, atol=1e-6)
    out = vmap(lambda x: axis_index("i") * x, in_axes=None, axis_size=3, axis_name="i")(2.0)
    np.testing.assert_array_equal(out, [0.0, 2.0, 4.0])


def gather_outer(x):
    return all_gather(x, "rows")


def gather_cols_last(x):
    return all_gather(x, "i", axis=-1)


def _gather_scaled(v, s):
    return all_gather(v * s, "rows", axis=1)


def gather_inside_inner_vmap(x):
    return vmap(_gather_scaled, in_axes=(0, None), axis_name="k")(x, x[0])


def test_all_gather_axis_and_over_an_outer_axis():
    """JAX's all_gather: the gathered axis at ``axis``, and over an outer vmap's axis from
    inside an inner vmap (each inner example gets the outer examples' values)."""
    x = np.arange(12.0, dtype=np.float32).reshape(3, 4)
    got = vmap(vmap(gather_outer, axis_name="cols"), axis_name="rows")(x)
    np.testing.assert_array_equal(got, np.broadcast_to(x.T, (3, 4, 3)))
    y = X[:3, :2]  # per example (2,): the gathered axis last gives (2, 3)
    np.testing.assert_array_equal(vmap(gather_cols_last, axis_name="i")(y),
                                  np.broadcast_to(y.T, (3, 2, 3)))
    z = np.arange(6.0, dtype=np.float32).reshape(3, 2, 1) + 1.0  # rows of (2, 1)
    # example (r, k) gets, at axis 1, every row r2's z[r2, k] * z[r2, 0]
    per_k = np.stack([(z[:, k, 0] * z[:, 0, 0])[None, :] for k in range(2)])  # (2, 1, 3)
    want = np.broadcast_to(per_k, (3, 2, 1, 3))
    np.testing.assert_allclose(vmap(gather_inside_inner_vmap, axis_name="rows")(z), want,
                               rtol=1e-6)


def test_unbound_axis_name():
    with pytest.raises(NameError, match="unbound axis name: i"):
        psum(X, "i")
    with pytest.raises(NameError, match="unbound axis name: nowhere"):
        jit(lambda x: psum(x, "nowhere"))(X)


def _psum_in_a_branch_run_per_example(x):
    if jnp.sum(x) > 0:
        parts = []
        parts.append(x)  # (a list: the branch cannot be computed for every example)
        y = psum(parts[0], "i")
    else:
        y = x
    return y


def test_code_run_once_per_example_refuses_a_collective_over_its_axis():
    """Run once per example, the psum would sum one example (it returned x itself)."""
    with pytest.raises(NotImplementedError,
                       match=r"test_vmap.py:\d+: .* it calls psum over the vmap's axis 'i'"):
        vmap(_psum_in_a_branch_run_per_example, axis_name="i")(np.ones((2, 3), np.float32))


def test_keyword_arguments_with_tuple_in_axes():
    out = vmap(pair, in_axes=(None,))(X[0], y=X)
    np.testing.assert_allclose(out[0], np.broadcast_to(X[0] * 2, X.shape), rtol=1e-6)
    np.testing.assert_allclose(out[1], X.sum(1), rtol=1e-6)


def shifted(x, scale=2.0, shift=0.0):
    return x * scale + shift


def test_a_keyword_argument_after_a_defaulted_parameter_maps_by_name():
    """vmap(f)(x, shift=s) with f(x, scale=2.0, shift=0.0): s is f's shift, scale keeps
    its default (s went into scale's place, a wrong answer with no error)."""
    s = np.float32([10.0, 20.0, 30.0])
    x = np.arange(3.0, dtype=np.float32)
    np.testing.assert_allclose(vmap(shifted)(x, shift=s), x * 2.0 + s)
    np.testing.assert_allclose(vmap(jnp.sum)(X, where=X > 0.5),
                               np.sum(X, axis=1, where=X > 0.5), rtol=1e-6)


def test_keyword_arguments_in_compiled_code_are_mapped():
    """vmap(f)(x, shift=s) inside jit: s mapped along axis 0, scale keeping its default
    (compiled code mapped the default too: "... it is static 2.0")."""
    s = np.float32([10.0, 20.0, 30.0])
    x = np.arange(3.0, dtype=np.float32)
    np.testing.assert_allclose(astjax.jit(lambda x, s: vmap(shifted)(x, shift=s))(x, s),
                               x * 2.0 + s)


def test_empty_batch():
    assert vmap(lambda x: jnp.sin(x).sum())(np.ones((0, 3), np.float32)).shape == (0,)
    assert vmap(lambda x: x.ravel())(np.ones((0, 3, 2), np.float32)).shape == (0, 6)


def scaled(x, s=2.0):
    return x * s


def test_default_arguments_are_not_mapped():
    np.testing.assert_allclose(vmap(scaled)(X), X * 2, rtol=1e-6)
    np.testing.assert_allclose(vmap(scaled, (0,))(X), X * 2, rtol=1e-6)
    np.testing.assert_allclose(vmap(scaled, (0, None))(X, 3.0), X * 3, rtol=1e-6)


# --- custom rules under grad(vmap(...)) ------------------------------------------------------
# Before, vmap batched the primal and dropped the rule: grad silently differentiated the
# primal. The rules below differ from the primal's derivative on purpose.

@astjax.custom_vjp
def _scaled_sin(x, w):
    return jnp.sin(x) * w


def _scaled_sin_fwd(x, w):
    return jnp.sin(x) * w, (jnp.cos(x), x, w)


def _scaled_sin_bwd(res, g):
    cos_x, x, w = res
    return (g * cos_x * w * 2.0, g * jnp.sin(x) * 3.0)


_scaled_sin.defvjp(_scaled_sin_fwd, _scaled_sin_bwd)


@astjax.custom_jvp
def _softplus5(x):
    return jnp.log1p(jnp.exp(x))


@_softplus5.defjvp
def _softplus5_jvp(primals, tangents):
    return _softplus5(primals[0]), tangents[0] * 5.0


def _calls_scaled_sin(x, w):
    return _scaled_sin(x, w) * 2.0


def _loss_vmapped_vjp(xs, w):
    return jnp.sum(vmap(_calls_scaled_sin, in_axes=(0, None))(xs, w))


def _loss_vmapped_jvp(xs):
    return jnp.sum(vmap(_softplus5)(xs))


def test_grad_of_vmap_uses_custom_vjp_rule(x64):
    x, w = np.array([[0.1, 0.2], [0.3, 0.4]]), np.array([1.5, 0.5])
    gx, gw = grad(_loss_vmapped_vjp, argnums=(0, 1))(x, w)
    np.testing.assert_allclose(gx, 4.0 * np.cos(x) * w, rtol=1e-12)
    np.testing.assert_allclose(gw, (6.0 * np.sin(x)).sum(0), rtol=1e-12)  # w is shared
    np.testing.assert_allclose(jit(grad(_loss_vmapped_vjp))(x, w), gx, rtol=1e-12)


def test_grad_and_jvp_of_vmap_use_custom_jvp_rule(x64):
    x = np.array([[0.1, -2.0], [0.3, 4.0]])
    np.testing.assert_allclose(grad(_loss_vmapped_jvp)(x), np.full_like(x, 5.0))
    _, t = astjax.jvp(_loss_vmapped_jvp, (x,), (np.ones_like(x),))
    np.testing.assert_allclose(t, 20.0)


# pytree arguments and outputs (they raised NotImplementedError): rules that differ from
# the primal's derivative, values from JAX 0.10.2 (x64); a true rule against finite
# differences
@astjax.custom_vjp
def _dict_and_pair(p, s):
    return jnp.sin(p["a"]) * p["b"] + s[0] * s[1]


def _dict_and_pair_fwd(p, s):
    return _dict_and_pair(p, s), (jnp.cos(p["a"]), p, s)


def _dict_and_pair_bwd(r, g):
    c, p, s = r
    return ({"a": g * c * p["b"] * 2.0, "b": g * jnp.sin(p["a"]) * 3.0},
            (g * s[1], g * s[0] * 5.0))


_dict_and_pair.defvjp(_dict_and_pair_fwd, _dict_and_pair_bwd)


@astjax.custom_jvp
def _of_pair(p, k):
    return jnp.exp(p[0]) * p[1] + k


@_of_pair.defjvp
def _of_pair_jvp(primals, tangents):
    (p, k), (tp, tk) = primals, tangents
    return _of_pair(p, k), jnp.exp(p[0]) * (p[1] * tp[0] * 2.0 + tp[1] * 3.0) + tk


@astjax.custom_vjp
def _to_dict(x, w):
    return {"y": jnp.sin(x) * w, "z": w * 2.0}  # (z: the same for every example)


_to_dict.defvjp(lambda x, w: (_to_dict(x, w), (jnp.cos(x), jnp.sin(x), w)),
                lambda r, g: (g["y"] * r[0] * r[2], g["y"] * r[1] + g["z"] * 2.0))


@astjax.custom_vjp
def _true_rule(p):
    return jnp.sin(p["a"]) * p["b"]


_true_rule.defvjp(lambda p: (_true_rule(p), p),
                  lambda p, g: ({"a": g * jnp.cos(p["a"]) * p["b"], "b": g * jnp.sin(p["a"])},))


def _loss_of_pytree_args(a, b, s0, s1):  # a, s0 batched; b, s1 shared by the examples
    return jnp.sum(vmap(lambda a, b, s0, s1: _dict_and_pair({"a": a, "b": b}, (s0, s1)),
                        in_axes=(0, None, 0, None))(a, b, s0, s1) * 2.0)


def _loss_of_pair(a, b, k):
    return jnp.sum(vmap(lambda a, b, k: _of_pair((a, b), k), in_axes=(0, None, 0))(a, b, k) ** 2)


def _loss_of_dict_output(x, w):
    d = vmap(_to_dict, in_axes=(0, None))(x, w)
    return jnp.sum(d["y"] * 2.0 + d["z"])


def _loss_of_dict_output_inside(x, w):
    return jnp.sum(vmap(lambda x, w: _to_dict(x, w)["y"] * 2.0 + _to_dict(x, w)["z"],
                        in_axes=(0, None))(x, w))


def _loss_of_true_rule(a, b):
    return jnp.sum(vmap(lambda a, b: _true_rule({"a": a, "b": b}), in_axes=(0, None))(a, b))


def test_grad_of_vmap_of_custom_rules_with_pytrees(x64):
    a, s0, k = np.array([0.1, 0.5, -0.3]), np.array([0.2, -1.0, 0.7]), np.array([0.0, 1.0, 2.0])
    want = ([5.970024991668155, 5.2654953713422366, 5.732018934753636], 1.7024324915381497,
            [1.6, 1.6, 1.6], -1.0)
    all_four = grad(_loss_of_pytree_args, (0, 1, 2, 3))
    for f in (all_four, jit(all_four)):
        for got, w in zip(f(a, 1.5, s0, 0.8), want):
            np.testing.assert_allclose(got, w, rtol=1e-12)
    want = ([10.992624823441531, 34.35686408033218, 13.829123373026853], 59.178612276800564,
            [3.315512754226943, 6.946163812100385, 6.222454662045154])
    for got, w in zip(grad(_loss_of_pair, (0, 1, 2))(a, 1.5, k), want):
        np.testing.assert_allclose(got, w, rtol=1e-12)
    _, t = astjax.jvp(_loss_of_pair, (a, 1.5, k), (np.ones(3), 1.0, np.ones(3)))
    np.testing.assert_allclose(t, 134.84135578197362, rtol=1e-12)
    check_grads(_loss_of_true_rule, (a, 1.5), order=1, modes=("rev",))
    # an output every example shares: each example's bwd gets its share of the cotangent
    # (JAX 0.10.2 gives each all of it: 18.567477497179382 in w for both, not 6.5674775)
    for f in (_loss_of_dict_output, _loss_of_dict_output_inside):
        np.testing.assert_allclose(grad(f, 1)(a, 1.5), 6.567477497179382, rtol=1e-12)
        check_grads(f, (a, 1.5), order=1, modes=("rev",))


def test_transforms_of_jnp_functions_themselves():
    """jit(jnp.sin), vmap(jnp.diag), grad(jnp.tanh): an op has no source to read; it gets a
    generated function with its parameters (an internal AttributeError before)."""
    x = X[0]
    np.testing.assert_allclose(jit(jnp.sin)(x), np.sin(x), rtol=1e-6)
    np.testing.assert_allclose(vmap(jnp.diag)(X), np.stack([np.diag(r) for r in X]))
    np.testing.assert_allclose(grad(jnp.tanh)(0.5), 1.0 - np.tanh(0.5) ** 2, rtol=1e-6)
    np.testing.assert_allclose(jacfwd(jnp.sin)(x), np.diag(np.cos(x)), rtol=1e-6)
    with pytest.raises(TypeError, match=r"jnp.einsum itself \(it takes \*operands\)"):
        jit(jnp.einsum)


def _sum_of_diags(x):
    return jnp.sum(vmap(jnp.diag)(x) ** 2)


def _sum_scaled(x):
    return jnp.sum(vmap(scaled)(x))


def test_grad_through_vmap_of_a_function_with_defaults():
    """The batched function keeps the defaults the call left out (it failed to bind)."""
    np.testing.assert_allclose(grad(_sum_of_diags)(X), 2.0 * X, rtol=1e-6)
    np.testing.assert_allclose(grad(_sum_scaled)(X), np.full_like(X, 2.0))


def test_per_example_loop_stacks_once():
    """The per-example fallback (jnp.diag has no batching rule) collects results on lists
    and stacks them once: its time grows linearly with the batch (an array updated per
    example was O(B^2)). Checked by values here; benchmarks measure time."""
    xs = np.random.default_rng(4).standard_normal((64, 3)).astype(np.float32)
    np.testing.assert_allclose(vmap(jnp.diag)(xs), np.stack([np.diag(r) for r in xs]))
    source = make_source(vmap(jnp.diag))(xs)
    assert ".append(" in source and "jnp.stack(" in source and ".at[" not in source


def _joined_list(x):
    hs = [x]
    for i in range(2):
        hs.append(jnp.cos(hs[-1][:, :i + 1]) * hs[0][:, :1])
    return jnp.concatenate(hs, axis=-1) + jnp.sum(jnp.concatenate(hs, axis=-1))


def test_concatenate_of_a_list_built_by_append_batches_without_a_loop():
    xs = np.random.default_rng(5).standard_normal((4, 2, 3)).astype(np.float32)
    check(_joined_list, xs, loops=False)
    check(grad(lambda x: jnp.sum(_joined_list(x) ** 2)), xs, loops=False)


def _flattened_lists(x):
    hs = [x]
    totals = []
    for i in range(2):
        hs.append(jnp.cos(hs[-1][:, :i + 1]) * hs[0][:, :1])
        totals.append(jnp.sum(hs[-1]))
    return jnp.concatenate(hs, axis=None), jnp.concatenate(totals, axis=None)


def test_concatenate_axis_none_of_a_list_built_by_append_batches_without_a_loop():
    xs = np.random.default_rng(5).standard_normal((4, 2, 3)).astype(np.float32)
    check(_flattened_lists, xs, loops=False)
    check(jacfwd(_flattened_lists), xs, loops=False)


def _elif_on_the_counter(x):
    s = 0.0
    for i in range(3):
        if x[i] > 0.0:  # per example
            s = s + x[i]
        elif i == 2:  # the same for every example: a plain if inside the selected branch
            s = s - x[0]
    return s


def _list_with_a_constant(x):
    acc = [x[0]]
    acc.append(jnp.ones(()))  # the same for every example
    if x.ndim > 5:  # never: the append below is dead code
        acc.append(x[1])
    return jnp.sum(jnp.stack(acc)) * x[1]


def test_branch_temporaries_and_lists_mixing_batched_and_unbatched_values():
    """A temporary set and read only inside a branch is not merged after it (it may be
    unset: UnboundLocalError); a list gets unbatched appends broadcast, whichever append
    comes first (it was unbatched after its last append's value); jacfwd batches such
    a list's tangents (a numpy stack error) and reads its element type."""
    xs = np.array([[0.3, 0.7, -0.4], [0.5, -0.2, 0.9], [-0.1, 0.2, 0.3]], np.float32)
    check(_elif_on_the_counter, xs)
    check(grad(_elif_on_the_counter), xs)
    check(_list_with_a_constant, xs, loops=False)
    check(jacfwd(_list_with_a_constant), xs, loops=False)
    x = xs[0].astype(np.float64)
    np.testing.assert_allclose(jacfwd(_list_with_a_constant)(x), grad(_list_with_a_constant)(x))
    np.testing.assert_allclose(astjax.hessian(_list_with_a_constant)(x),
                               jacrev(grad(_list_with_a_constant))(x))


def _discards_a_result(x):
    jnp.sin(x)  # ops have no effects: nothing to batch
    return x * 2.0


def test_a_discarded_op_result_batches():
    xs = np.random.default_rng(6).standard_normal((3, 2)).astype(np.float32)
    check(_discards_a_result, xs, loops=False)


def _branch_changes_its_test(x):
    first = jnp.sum(x) > 0
    y = x
    for i in range(2):
        if first:
            first = False  # the selects after the branches read the test on entry
            y = y * 2.0
        else:
            y = y + 1.0
    return y


def test_a_batched_branch_that_changes_its_test():
    xs = np.array([[1.0, 2.0], [-1.0, -2.0], [3.0, -1.0]], np.float32)
    check(_branch_changes_its_test, xs)
    check(grad(lambda x: jnp.sum(_branch_changes_its_test(x) ** 2)), xs)


# A variable a batched branch (or per-example code) assigns and only that code reads is
# still carried to the next trip of the loop around it (it once kept its value from
# before the loop: wrong results, found by fuzzing)
def _counts_positives(x):
    k = 0.0
    acc = 0.0
    for i in range(4):
        if x[i] > 0:
            k = k + 1.0
            acc = acc + k
    return acc


def _first_positive_counts_tenfold(x):
    first = True
    acc = 0.0
    for i in range(4):
        if x[i] > 0:
            if first:
                first = False
                acc = acc + 10.0 * x[i]
            else:
                acc = acc + x[i]
    return acc


def _grows_until(x):
    y = jnp.abs(x) + 0.1
    g = 1.0
    while jnp.sum(y) < 6.0:
        if y[0] > y[1]:
            g = g * 1.2
            y = y * g
        else:
            y = y + 0.3
    return jnp.sum(y)


def _per_example_while(x):
    m = 1.0
    acc = 0.0
    for i in range(3):
        y = x[i]
        while y < 2.0:
            m = m * 1.1
            z = y * m
            y = y + 0.5
        acc = acc + z
    return acc


@pytest.mark.parametrize("fn", [_counts_positives, _first_positive_counts_tenfold,
                                _grows_until, _per_example_while], ids=lambda f: f.__name__)
def test_a_value_carried_only_inside_batched_code(fn):
    xs = np.array([[1.0, 1.0, 1.0, 1.0], [1.0, -1.0, 1.0, -1.0], [-1.0, -2.0, 0.5, -1.0],
                   [1.0, 0.2, 0.3, 0.1]], np.float32)
    check(fn, xs)
    check(grad(fn), xs)


def _loop_variable_reused(x, n):
    s = 0.0
    for i in range(n):
        s = s + x[i]
    for i in range(n % 4):  # per-example trip counts: run once per example
        s = s * 0.5 + x[0]
    return s


def test_a_per_example_rest_returns_only_what_the_return_reads():
    """The second loop runs once per example; its loop variable (set by the first loop
    too) is not a result of that per-example code: with no trips it is unset there."""
    xs = np.array([[0.3, -0.2, 0.5, 1.1], [1.3, 0.2, -0.5, 0.1], [0.1, 0.2, 0.3, 0.4]],
                  np.float32)
    check(_loop_variable_reused, xs, np.array([0, 3, 2], np.int32), loops=True)


def _accumulated_then_batched(x, w, n, m):
    acc = 0.0  # an array after a trip, the scalar with none
    for i in range(n):
        acc = acc + w * i
    y = acc  # not batched: batched where the loop below meets x
    for j in range(m):
        y = y + x * j
    return y


@pytest.mark.parametrize("shape", [(4,), (2, 4)], ids=["rank1", "rank2"])
def test_an_array_variable_holding_its_starting_scalar_made_batched(shape):
    """With no trips acc, typed as an array, holds the 0.0 it starts as; broadcast along
    the batch axis it got shape (B,), short of its rank, which met x's last axis (B = 3
    against 4: 'operands could not be broadcast together')."""
    xs = np.arange(3 * np.prod(shape), dtype=np.float32).reshape((3,) + shape) - 5.0
    w = np.linspace(-1.0, 2.0, np.prod(shape)).astype(np.float32).reshape(shape)
    for n in (0, 1, 3):
        check(_accumulated_then_batched, xs, w, n, 2, in_axes=(0, None, None, None))
    check(grad(lambda x, n: jnp.sum(_accumulated_then_batched(x, w, n, 2) ** 2)), xs, 0,
          in_axes=(0, None))


def _cond_sin_or_cube(x):
    return jnp.sum(astjax.lax.cond(jnp.sum(x) > 0, lambda v: jnp.sin(v) * v,
                                   lambda v: v * v * v, x))


def _switch_sin_or_cube(x):
    i = (jnp.sum(x) > 0).astype(jnp.int32)
    return jnp.sum(astjax.lax.switch(i, [lambda v: v * v * v, lambda v: jnp.sin(v) * v], x))


def _if_sin_or_cube(x):
    if jnp.sum(x) > 0:
        y = jnp.sin(x) * x
    else:
        y = x * x * x
    return jnp.sum(y)


# rows with a positive and a negative sum take different branches
_BRANCHING = np.array([[0.5, 0.2, -0.1], [-0.5, -0.2, 0.1], [1.0, 2.0, 3.0]], np.float32)


def _sin_or_cube_hessians(xs):
    """The closed form: diag(2 cos x - x sin x) where sum(x) > 0, else diag(6 x)."""
    return np.stack([np.diag(2 * np.cos(x) - x * np.sin(x) if x.sum() > 0 else 6 * x)
                     for x in xs])


@pytest.mark.parametrize("fn", [_cond_sin_or_cube, _switch_sin_or_cube, _if_sin_or_cube])
def test_vmap_of_hessian_through_a_per_example_branch(fn):
    """The branch's derivative code pushes tapes in the branch each example takes, so it
    cannot be batched: its call runs once per example (it raised NotImplementedError).
    JAX gives the same values for cond and switch."""
    out = check(astjax.hessian(fn), _BRANCHING, atol=1e-5)
    np.testing.assert_allclose(out, _sin_or_cube_hessians(_BRANCHING), rtol=1e-5, atol=1e-5)


def test_jit_vmap_of_hessian_through_a_per_example_cond():
    out = jit(vmap(astjax.hessian(_cond_sin_or_cube)))(_BRANCHING)
    np.testing.assert_allclose(out, _sin_or_cube_hessians(_BRANCHING), rtol=1e-5, atol=1e-5)


def test_vmap_of_other_second_derivatives_through_a_per_example_branch():
    """jacrev of jacrev and jvp of grad share the cause (they raised NotImplementedError)."""
    out = check(jacrev(jacrev(_switch_sin_or_cube)), _BRANCHING, atol=1e-5)
    np.testing.assert_allclose(out, _sin_or_cube_hessians(_BRANCHING), rtol=1e-5, atol=1e-5)

    def hessian_times_ones(x):
        return astjax.jvp(grad(_if_sin_or_cube), (x,), (jnp.ones_like(x),))[1]
    out = check(hessian_times_ones, _BRANCHING, atol=1e-5)
    np.testing.assert_allclose(out, _sin_or_cube_hessians(_BRANCHING).sum(-1), rtol=1e-5,
                               atol=1e-5)


def _sin_times_x_once_or_twice(x):
    n = (jnp.sum(x) > 0).astype(jnp.int32) + 1
    return jnp.sum(astjax.lax.fori_loop(0, n, lambda i, v: jnp.sin(v) * v, x))


def test_vmap_of_hessian_through_per_example_trip_counts():
    """A fori_loop's per-example trip count: its derivative's tapes cannot be batched
    either. Checked against central differences of the gradient too."""
    out = check(astjax.hessian(_sin_times_x_once_or_twice), _BRANCHING, atol=1e-5)
    g = grad(_sin_times_x_once_or_twice)
    eps = np.float32(1e-2)
    for x, h in zip(_BRANCHING, out):
        fd = np.stack([(np.asarray(g(x + eps * e)) - np.asarray(g(x - eps * e))) / (2 * eps)
                       for e in np.eye(len(x), dtype=np.float32)], axis=-1)
        np.testing.assert_allclose(h, fd, rtol=1e-3, atol=1e-3)


def test_nested_vmap_of_an_op_moved_to_other_axes_keeps_its_defaults():
    # vmap(jnp.sum, 1, -1) is a wrapper moving the axes around jnp.sum's batched function;
    # an outer vmap bound the call sum_vmap(x) to the wrapper without sum's defaults
    # (TypeError: missing a required argument: 'axis')
    x = np.arange(24.0, dtype=np.float32).reshape(2, 3, 4)
    inner = vmap(jnp.sum, 1, -1)
    np.testing.assert_allclose(vmap(lambda r: inner(r))(x), x.sum(1))
    np.testing.assert_allclose(jit(vmap(lambda r: inner(r)))(x), x.sum(1))


def test_ops_registered_after_the_batching_module_is_imported():
    """vmap's generated code reaches ops through batching.transform.OPS, which was a copy of
    the registry made when that module was imported: imported first, it lacked the ops
    registered later (ad's cotangent_like), and vmap of grad failed with "SimpleNamespace
    has no attribute 'cotangent_like'"."""
    import subprocess
    program = ("import astjax._src.batching.transform\n"
               "import numpy as np, astjax, astjax.numpy as jnp\n"
               "def loss(p):\n"
               "    return jnp.sum(p['a'] ** 2)\n"
               "f = astjax.vmap(astjax.grad(loss))\n"
               "print(f({'a': np.float32([[1, 2], [3, 4]])})['a'].tolist())\n")
    with tempfile.TemporaryDirectory() as where:  # (astjax reads the function's source)
        path = os.path.join(where, "program.py")
        with open(path, "w") as file:
            file.write(program)
        done = subprocess.run([sys.executable, path], capture_output=True, text=True,
                              cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[[2.0, 4.0], [6.0, 8.0]]"


def _sin_times_kw(x, a=1.0, *, m):
    return jnp.sin(x) * a * m


def test_a_callee_with_a_required_keyword_only_parameter_after_a_default():
    """vmap of a call to ``def g(x, a=1.0, *, m)`` raised "non-default argument follows
    default argument": the batched function's signature copied the positional view's
    ``(x, a=1.0, m)`` and inspect refused it."""
    x = np.linspace(0.0, 1.0, 3).astype(np.float32)
    np.testing.assert_allclose(vmap(lambda y: _sin_times_kw(y, m=2.0))(x), 2 * np.sin(x),
                               rtol=1e-6)
    np.testing.assert_allclose(jit(vmap(lambda y: _sin_times_kw(y, 3.0, m=2.0)))(x),
                               6 * np.sin(x), rtol=1e-6)
    g = grad(lambda v: jnp.sum(vmap(lambda y: _sin_times_kw(y, m=2.0))(v)))
    np.testing.assert_allclose(g(x), 2 * np.cos(x), rtol=1e-6)
