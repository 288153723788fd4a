"""vmap: batched matrix-vector products and per-example gradients, against hand-batched code.

    .venv/bin/python benchmarks/vmap.py

1. JAX's batched matrix-vector example: ``apply_matrix(v) = jnp.dot(mat, v)`` with a
   150x100 matrix, batch 10: ``jit(vmap(apply_matrix))`` against the hand-batched NumPy
   ``x @ mat.T`` (and JAX's ``jit(vmap(...))`` when JAX is importable).
2. Per-example gradients of a small MLP (32-64-10, tanh, softmax cross-entropy), batch 128:
   ``jit(vmap(grad(loss), (None, 0, 0)))`` against a hand-batched NumPy backward pass.

Medians of repeated timings, in one run; ratios are astjax / reference (lower is better).
Both astjax backends are shown: ``numba`` (jit's default) and ``python`` (generated NumPy).
"""
import statistics
import time

import numpy as np

import astjax
import astjax.numpy as jnp
from astjax import grad, jit, vmap

rng = np.random.default_rng(0)
mat = rng.standard_normal((150, 100)).astype(np.float32)


def apply_matrix(v):
    return jnp.dot(mat, v)


def mlp_loss(params, x, y):
    h = jnp.tanh(x @ params["w1"] + params["b1"])
    logits = h @ params["w2"] + params["b2"]
    shifted = logits - astjax.lax.stop_gradient(jnp.max(logits))  # as jax.nn.log_softmax
    logp = shifted - jnp.log(jnp.sum(jnp.exp(shifted)))
    return -jnp.sum(logp * y)


def numpy_per_example_grads(params, x, y):
    """The hand-batched backward pass of mlp_loss for every example at once."""
    h = np.tanh(x @ params["w1"] + params["b1"])
    logits = h @ params["w2"] + params["b2"]
    shifted = logits - logits.max(axis=1, keepdims=True)
    p = np.exp(shifted)
    p /= p.sum(axis=1, keepdims=True)
    d_logits = p * y.sum(axis=1, keepdims=True) - y
    d_h = (d_logits @ params["w2"].T) * (1 - h * h)
    return {"w1": np.einsum("bi,bj->bij", x, d_h), "b1": d_h,
            "w2": np.einsum("bi,bj->bij", h, d_logits), "b2": d_logits}


def compare(candidates, rounds=25):
    """Median seconds per call of each ``(name, fn, args[, backend])``, measured in
    interleaved rounds (the machine is shared: interleaving keeps the ratios fair)."""
    numbers = []
    for name, fn, args, *backend in candidates:
        def once():
            fn(*args)  # warm up (compiles under this backend), then time one call
            t0 = time.perf_counter()
            fn(*args)
            return time.perf_counter() - t0
        elapsed = with_backend(backend[0], once) if backend else once()
        numbers.append(max(1, int(0.005 / max(elapsed, 1e-7))))
    samples = [[] for _ in candidates]
    for _ in range(rounds):
        for k, ((name, fn, args, *backend), number) in enumerate(zip(candidates, numbers)):
            before = astjax.config.astjax_jit_backend
            astjax.config.update("astjax_jit_backend", backend[0] if backend else before)
            t0 = time.perf_counter()
            for _ in range(number):
                fn(*args)
            samples[k].append((time.perf_counter() - t0) / number)
            astjax.config.update("astjax_jit_backend", before)
    return [statistics.median(s) for s in samples]


def table(title, candidates):
    print(title)
    times = compare(candidates)
    for (name, *_), t in zip(candidates, times):
        print(f"  {name:46} {t * 1e6:10.1f} us {t / times[0]:7.2f}x")
    return times


def with_backend(backend, make):
    before = astjax.config.astjax_jit_backend
    astjax.config.update("astjax_jit_backend", backend)
    try:
        return make()
    finally:
        astjax.config.update("astjax_jit_backend", before)


def entry_inputs(compiled, values):
    """The generated entry's own arguments (Numba takes containers as tuples)."""
    if compiled.backend != "numba":
        return values
    from astjax._src.backends.numba_cpu import boundary
    from astjax._src.ir.types import Static
    return tuple(boundary.to_numba(v, t) for v, t in zip(values, compiled.arg_types)
                 if not isinstance(t, Static))


def main():
    try:
        import jax
        import jax.numpy as jjnp
    except ImportError:
        jax = None

    # --- 1. batched matrix-vector -------------------------------------------------------------
    xs = rng.standard_normal((10, 100)).astype(np.float32)
    candidates = [("NumPy x @ mat.T (hand-batched)", lambda x: x @ mat.T, (xs,))]
    for backend in ("numba", "python"):
        f = jit(vmap(apply_matrix))
        out = with_backend(backend, lambda: f(xs))  # compile under this backend
        assert np.allclose(np.asarray(out), xs @ mat.T, rtol=1e-4, atol=1e-4)
        candidates.append((f"astjax jit(vmap(apply_matrix)) [{backend}]", f, (xs,), backend))
        (compiled,) = f.cache.values()
        candidates.append((f"  the generated function alone [{backend}]", compiled.entry, (xs,)))
    if jax is not None:
        jmat = jjnp.asarray(mat)
        jf = jax.jit(jax.vmap(lambda v: jjnp.dot(jmat, v)))
        candidates.append((f"JAX {jax.__version__} jit(vmap(apply_matrix))",
                           lambda x: jf(x).block_until_ready(), (jjnp.asarray(xs),)))
    table("batched matrix-vector: mat (150, 100) @ v, batch 10  (ratio vs NumPy)", candidates)
    if jax is None:
        print("  (JAX not importable: no JAX comparison)")

    # --- 2. per-example gradients ---------------------------------------------------------------
    n, d_in, d_hidden, d_out = 128, 32, 64, 10
    params = {"w1": (rng.standard_normal((d_in, d_hidden)) * 0.2).astype(np.float32),
              "b1": np.zeros(d_hidden, np.float32),
              "w2": (rng.standard_normal((d_hidden, d_out)) * 0.2).astype(np.float32),
              "b2": np.zeros(d_out, np.float32)}
    x = rng.standard_normal((n, d_in)).astype(np.float32)
    y = np.eye(d_out, dtype=np.float32)[rng.integers(0, d_out, n)]
    ref = numpy_per_example_grads(params, x, y)
    candidates = [("NumPy hand-batched backward pass", numpy_per_example_grads, (params, x, y))]
    for backend in ("numba", "python"):
        f = jit(vmap(grad(mlp_loss), (None, 0, 0)))
        out = with_backend(backend, lambda: f(params, x, y))
        for k in ref:
            assert np.allclose(np.asarray(out[k]), ref[k], rtol=1e-3, atol=1e-5), k
        (compiled,) = f.cache.values()
        ran = compiled.backend if compiled.backend == backend else \
            f"{backend} -> {compiled.backend}: the numba backend fell back"
        candidates.append((f"astjax jit(vmap(grad(loss))) [{ran}]", f, (params, x, y),
                           backend))
        candidates.append((f"  the generated function alone [{compiled.backend}]",
                           compiled.entry, entry_inputs(compiled, (params, x, y))))
    if jax is not None:
        def jloss(p, x, y):
            h = jjnp.tanh(x @ p["w1"] + p["b1"])
            logits = h @ p["w2"] + p["b2"]
            return -jjnp.sum(jax.nn.log_softmax(logits) * y)
        jf = jax.jit(jax.vmap(jax.grad(jloss), (None, 0, 0)))
        jp = {k: jjnp.asarray(v) for k, v in params.items()}
        candidates.append((f"JAX {jax.__version__} jit(vmap(grad(loss)))",
                           lambda *a: jax.block_until_ready(jf(*a)),
                           (jp, jjnp.asarray(x), jjnp.asarray(y))))
    table(f"\nper-example gradients, MLP {d_in}-{d_hidden}-{d_out}, batch {n}  "
          f"(ratio vs hand-batched NumPy)", candidates)


if __name__ == "__main__":
    main()
