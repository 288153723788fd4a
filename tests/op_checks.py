"""Shared checks for the op tests: run an op eagerly and check that its impl's raw
result and its abstract_eval rule agree with each other and with the result."""
import numpy as np

import astjax
from astjax._src import dtypes
from astjax._src.ir.types import ArrayType, SequenceType, Static, array_type
from astjax._src.ops import registry
from astjax._src.runtime import eager

f32, i32, f64 = np.dtype("float32"), np.dtype("int32"), np.dtype("float64")
DYN = array_type(i32, 0)  # an int known only at run time


def agree(t, result, raw=None):
    """Type ``t`` describes ``result`` (and the impl's ``raw`` output, when given)."""
    if isinstance(t, SequenceType):
        assert len(t.elts) == len(result)
        for k, (e, r) in enumerate(zip(t.elts, result)):
            agree(e, r, None if raw is None else raw[k])
        return
    assert isinstance(t, ArrayType), t
    assert t.dtype == result.dtype, (t, result.dtype)
    assert t.ndim == result.ndim, (t, result.shape)
    assert t.weak == result.weak_type, (t, result.weak_type)
    for one, size in zip(t.ones, result.shape):
        assert not one or size == 1, (t, result.shape)
    if raw is not None:  # eager mode would hide a wrong impl dtype by casting; compiled code not
        raw = np.asarray(raw)
        assert raw.dtype == t.dtype, f"impl gave {raw.dtype}, rule {t}"
        assert raw.shape == result.shape


def check(name, *args, **kwargs):
    """``jnp.<name>(*args, **kwargs)``, checking its impl and abstract_eval agree with it."""
    op = registry.NAMESPACE[name]
    seen = {}
    impl, infer = op.impl, op.infer

    def spy_impl(*a, **k):
        seen["raw"] = impl(*a, **k)
        return seen["raw"]

    def spy_infer(types, params):
        seen["types"], seen["params"] = types, params
        seen["type"] = infer(types, params)
        return seen["type"]

    op.impl, op.infer = spy_impl, spy_infer
    eager._TYPINGS.clear()  # so the rule runs (eager ops cache their typing)
    try:
        result = op(*args, **kwargs)
    finally:
        op.impl = impl
        del op.infer
    agree(seen["type"], result, seen["raw"])
    # generated code may type literal operands as Static(value): same result type
    operands, _ = op.bind(args, kwargs)
    literal = {n: Static(v) for n, v in operands.items() if dtypes.is_python_scalar(v)}
    if literal:
        assert op.infer({**seen["types"], **literal}, seen["params"]) == seen["type"]
    return result


def rand(shape, dtype=np.float32, seed=0):
    r = np.random.default_rng(seed)
    if np.dtype(dtype).kind == "b":
        return r.random(shape) > 0.5
    return (r.random(shape) * 10 - 5).astype(dtype)


def check_dtype_table(table, x64):
    """Each ``(make, want)`` of ``table``, with 64-bit types on if ``x64``: ``make()``'s
    dtype is ``want`` (JAX 0.10.2's), or ``want[x64]`` for a ``(without, with 64-bit
    types)`` pair."""
    before = astjax.config.jax_enable_x64
    astjax.config.update("jax_enable_x64", x64)
    try:
        for i, (make, want) in enumerate(table):
            if isinstance(want, tuple):
                want = want[x64]
            got = make().dtype
            assert got == np.dtype(want), (i, got, want)
    finally:
        astjax.config.update("jax_enable_x64", before)


def both(fn, *args):
    """(eager result, jit result) of ``fn(*args)``, each as a tree of NumPy arrays."""
    as_numpy = lambda t: astjax.tree_util.tree_map(np.asarray, t)
    return as_numpy(fn(*args)), as_numpy(astjax.jit(fn)(*args))
