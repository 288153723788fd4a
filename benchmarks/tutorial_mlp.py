"""JAX's own MLP tutorial ("Training a simple neural network"), unchanged but for imports.

    PYTHONPATH=<JAX site-packages> .venv/bin/python benchmarks/tutorial_mlp.py

A 784-512-512-10 ReLU network kept as a list of ``(w, b)`` layers, ``vmap`` over the
batch (128), ``grad`` of the log-softmax loss, an SGD ``update`` under ``jit``. Timed: one
``update`` step against a hand-written NumPy step (batched forward and backward pass) and
JAX's ``jit(update)`` when JAX is importable; astjax with one core and with
``parallel=True``. Medians of rounds in one run (what uses every core timed on its own:
spinning thread pools slow the next call); also each first call (compile).
"""
import statistics
import time

import numpy as np

import astjax
import astjax.numpy as jnp
from astjax import grad, jit, random, vmap
from astjax.nn import logsumexp, relu

LAYERS = [784, 512, 512, 10]
STEP = 0.01


def init_params(key):
    keys = random.split(key, len(LAYERS))
    params = []
    for m, n, k in zip(LAYERS[:-1], LAYERS[1:], keys):
        w_key, b_key = random.split(k)
        params.append((1e-2 * random.normal(w_key, (n, m)), 1e-2 * random.normal(b_key, (n,))))
    return params


def predict(params, image):
    activations = image
    for w, b in params[:-1]:
        activations = relu(jnp.dot(w, activations) + b)
    final_w, final_b = params[-1]
    logits = jnp.dot(final_w, activations) + final_b
    return logits - logsumexp(logits)


batched_predict = vmap(predict, in_axes=(None, 0))


def loss(params, images, targets):
    return -jnp.mean(batched_predict(params, images) * targets)


def update(params, x, y):
    grads = grad(loss)(params, x, y)
    return [(w - STEP * dw, b - STEP * db) for (w, b), (dw, db) in zip(params, grads)]


def numpy_update(params, x, y):
    """The same step written by hand: batched forward pass, then its backward pass."""
    acts, pre = [x], []
    for w, b in params[:-1]:
        pre.append(acts[-1] @ w.T + b)
        acts.append(np.maximum(pre[-1], 0))
    w, b = params[-1]
    logits = acts[-1] @ w.T + b
    p = np.exp(logits - logits.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    scale = -1.0 / y.size
    d = scale * (y - p * y.sum(axis=1, keepdims=True))  # d loss / d logits
    grads = []
    for k in range(len(params) - 1, -1, -1):
        w, _ = params[k]
        grads.append((d.T @ acts[k], d.sum(axis=0)))
        if k:
            d = (d @ w) * (pre[k - 1] > 0)
    grads.reverse()
    return [(w - STEP * dw, b - STEP * db) for (w, b), (dw, db) in zip(params, grads)]


def first_call(fn, *args):
    t0 = time.perf_counter()
    astjax.block_until_ready(fn(*args))
    return time.perf_counter() - t0


def time_rounds(candidates, params, x, y, want, warmup=10):
    """Each candidate's times over 15 interleaved rounds (the machine is shared), after
    checking that it computes the hand-written step and ``warmup`` untimed rounds (the
    first calls after another library's run are up to 3x slower: its threads still spin,
    and freed memory is not yet reused)."""
    for fn in candidates.values():
        got = astjax.block_until_ready(fn(params, x, y))
        for (gw, gb), (ww, wb) in zip(got, want):
            np.testing.assert_allclose(np.asarray(gw), ww, rtol=1e-4, atol=1e-6)
            np.testing.assert_allclose(np.asarray(gb), wb, rtol=1e-4, atol=1e-6)
    times = {name: [] for name in candidates}
    for k in range(warmup + 15):
        for name, fn in candidates.items():
            t0 = time.perf_counter()
            astjax.block_until_ready(fn(params, x, y))
            if k >= warmup:
                times[name].append(time.perf_counter() - t0)
    return times


def main():
    rng = np.random.default_rng(0)
    params = [tuple(np.asarray(a) for a in layer) for layer in init_params(random.PRNGKey(0))]
    x = rng.random((128, 784), dtype=np.float32)
    y = np.eye(10, dtype=np.float32)[rng.integers(0, 10, 128)]
    candidates = {"numpy by hand": numpy_update}
    compile_times = {}
    for name, parallel in [("astjax jit", False), ("astjax jit parallel", True)]:
        fn = jit(update, parallel=parallel)
        compile_times[name] = first_call(fn, params, x, y)
        candidates[name] = fn
    want = numpy_update(params, x, y)
    # Thread pools spin for a while after each call and starve the cores the next one
    # uses (NumPy's OpenBLAS, JAX's): what runs on every core is timed alone, first
    # astjax with parallel=True, then NumPy and astjax interleaved, then JAX
    parallel = {"astjax jit parallel": candidates.pop("astjax jit parallel")}
    times = time_rounds(parallel, params, x, y, want)
    times.update(time_rounds(candidates, params, x, y, want))
    try:
        import jax
        jax_params = [tuple(jax.numpy.asarray(a) for a in layer) for layer in params]
        jax_update = jax.jit(_jax_update(jax))
        t0 = time.perf_counter()
        jax.block_until_ready(jax_update(jax_params, x, y))
        compile_times["jax jit"] = time.perf_counter() - t0
        times.update(time_rounds({"jax jit": lambda p, a, b: jax.block_until_ready(
            jax_update(jax_params, a, b))}, params, x, y, want))
    except ImportError:
        pass
    medians = {name: statistics.median(t) for name, t in times.items()}
    print(f"JAX tutorial MLP {LAYERS}, batch 128, one update step (median of 15):")
    for name, t in medians.items():
        ratios = "  ".join(f"{t / medians[other]:.2f}x {other}"
                           for other in ("numpy by hand", "jax jit")
                           if other in medians and other != name)
        first = f"  first call {compile_times[name]:.2f} s" if name in compile_times else ""
        print(f"  {name:>20}: {t * 1e3:7.2f} ms  {ratios}{first}")


def _jax_update(jax):
    jnp_, nn = jax.numpy, jax.nn

    def predict_(params, image):
        activations = image
        for w, b in params[:-1]:
            activations = nn.relu(jnp_.dot(w, activations) + b)
        final_w, final_b = params[-1]
        logits = jnp_.dot(final_w, activations) + final_b
        return logits - nn.logsumexp(logits)

    def loss_(params, images, targets):
        return -jnp_.mean(jax.vmap(predict_, in_axes=(None, 0))(params, images) * targets)

    def update_(params, x, y):
        grads = jax.grad(loss_)(params, x, y)
        return [(w - STEP * dw, b - STEP * db) for (w, b), (dw, db) in zip(params, grads)]
    return update_


if __name__ == "__main__":
    main()
