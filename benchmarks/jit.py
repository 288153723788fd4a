"""jit on the Numba backend against NumPy, hand-written Numba and JAX (when importable).

    .venv/bin/python benchmarks/jit.py            # all cases
    PYTHONPATH=/path/to/jax/site-packages .venv/bin/python benchmarks/jit.py

Prints medians and ratios measured in this one run (the machine is shared and
noisy: compare ratios, not absolute times). The cold-start rows run fresh
processes: "cold" with an empty astjax/Numba cache, "warm cache" reusing it.
"""
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time

import numba
import numpy as np

import astjax
import astjax.numpy as jnp

try:
    if os.environ.get("ASTJAX_BENCH_NO_JAX"):  # the astjax cold-start runs: not JAX's import
        raise ImportError
    import jax
    import jax.numpy as jjnp
    jax.config.update("jax_platforms", "cpu")
except Exception:  # JAX is optional
    jax = None


def median_time(fn, *args, repeat=15, number=1):
    fn(*args)
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(number):
            out = fn(*args)
        _block(out)
        times.append((time.perf_counter() - start) / number)
    return statistics.median(times)


def _block(tree):
    """Wait for asynchronous results (JAX's and astjax's) in any pytree."""
    if isinstance(tree, (tuple, list)):
        for leaf in tree:
            _block(leaf)
    elif hasattr(tree, "block_until_ready"):
        tree.block_until_ready()


ROWS = []


def report(case, timings, goal=None):
    base = timings["astjax"]
    ROWS.append((case, timings, goal))
    parts = []
    for name, t in timings.items():
        parts.append(f"{name} {_fmt(t)}" + ("" if name == "astjax" else f" ({base / t:.2f}x)"))
    print(f"{case:<38} " + " | ".join(parts) + (f"   goal: {goal}" if goal else ""),
          flush=True)


def report_parallel(case, parallel_time, t, goal):
    """The case again with ``jit(..., parallel=True)`` (timed before JAX runs: its threads
    spin for a while after each call): against JAX, which uses every core too, and
    against the one-core astjax time above."""
    timings = {"astjax": parallel_time, "astjax 1 core": t["astjax"]}
    if "jax" in t:
        timings["jax"] = t["jax"]
    report(f"{case}, parallel", timings, goal)


def _fmt(t):
    return f"{t * 1e3:.3f} ms" if t >= 1e-4 else f"{t * 1e6:.2f} us"


# --- the programs --------------------------------------------------------------------------

def selu(x, alpha=1.67, lmbda=1.05):
    return lmbda * jnp.where(x > 0, x, alpha * jnp.exp(x) - alpha)


def sin_loop(x):
    for i in range(10):
        x = 0.5 * x + 0.1 * jnp.sin(x)
    return x


def sum_logistic(x):
    return jnp.sum(1.0 / (1.0 + jnp.exp(-x)))


def mlp_loss(params, x, y):
    w1, b1, w2, b2 = params
    h = jnp.tanh(x @ w1 + b1)
    logits = h @ w2 + b2
    logits = logits - jnp.max(logits, axis=1, keepdims=True)
    lse = jnp.log(jnp.sum(jnp.exp(logits), axis=1, keepdims=True))
    return -jnp.mean(jnp.sum((logits - lse) * y, axis=1))


def scalar_loop(x):
    for i in range(1000):
        x = x - 0.01 * jnp.sin(x) * x
    return x


def tiny(x):
    return x + 1.0


# --- hand-written Numba references --------------------------------------------------------------

@numba.njit(cache=True)
def selu_numba(x):
    out = np.empty_like(x)
    for i in range(x.size):
        v = x[i]
        out[i] = np.float32(1.05) * (v if v > 0 else np.float32(1.67) * np.exp(v) - np.float32(1.67))
    return out


@numba.njit(cache=True)
def sin_loop_numba(x):
    for _ in range(10):
        y = np.empty_like(x)
        for i in range(x.shape[0]):
            for j in range(x.shape[1]):
                v = x[i, j]
                y[i, j] = np.float32(0.5) * v + np.float32(0.1) * np.sin(v)
        x = y
    return x


@numba.njit(cache=True)
def logistic_grad_numba(x):
    out = np.empty_like(x)
    for i in range(x.size):
        s = np.float32(1) / (np.float32(1) + np.exp(-x[i]))
        out[i] = s * (np.float32(1) - s)
    return out


@numba.njit(cache=True)
def scalar_loop_adjoint_numba(x):
    tape = np.empty(1000, np.float32)
    for i in range(1000):
        tape[i] = x
        x = x - np.float32(0.01) * np.sin(x) * x
    g = np.float32(1)
    for i in range(999, -1, -1):
        v = tape[i]
        g = g * (np.float32(1) - np.float32(0.01) * (np.cos(v) * v + np.sin(v)))
    return g


@numba.njit(cache=True)
def tiny_numba(x):
    return x + np.float32(1)


def mlp_predict(params, x):
    w1, b1, w2, b2 = params
    h = jnp.tanh(x @ w1 + b1)
    return h @ w2 + b2


def mlp_loss_calling_the_model(params, x, y):
    """mlp_loss with the model a function of its own, as users write it: the gradient runs
    the model's forward sweep once (not again when its backward sweep is needed)."""
    logits = mlp_predict(params, x)
    logits = logits - jnp.max(logits, axis=1, keepdims=True)
    lse = jnp.log(jnp.sum(jnp.exp(logits), axis=1, keepdims=True))
    return -jnp.mean(jnp.sum((logits - lse) * y, axis=1))


def mlp_products(x, w1, h):
    return x @ w1, x.T @ h


def mlp_grad_numpy(params, x, y):
    w1, b1, w2, b2 = params
    a = x @ w1 + b1
    h = np.tanh(a)
    logits = h @ w2 + b2
    logits = logits - logits.max(axis=1, keepdims=True)
    p = np.exp(logits)
    p /= p.sum(axis=1, keepdims=True)
    g = (p - y) / x.shape[0]
    gw2, gb2 = h.T @ g, g.sum(0)
    gh = g @ w2.T * (1 - h * h)
    return x.T @ gh, gh.sum(0), gw2, gb2


# --- cases ---------------------------------------------------------------------------------

def bench_selu():
    x = np.random.default_rng(0).standard_normal(1_000_000).astype(np.float32)
    par = median_time(astjax.jit(selu, parallel=True), x)
    t = {"astjax": median_time(astjax.jit(selu), x),
         "numpy": median_time(lambda v: 1.05 * np.where(v > 0, v, 1.67 * np.exp(v) - 1.67), x),
         "numba": median_time(selu_numba, x)}
    if jax:
        t["jax"] = median_time(jax.jit(lambda v: 1.05 * jjnp.where(v > 0, v, 1.67 * jjnp.exp(v)
                                                                  - 1.67)), x)
    report("selu 1M f32", t, "<= 0.8x JAX")
    report_parallel("selu 1M f32", par, t, "<= 0.8x JAX")


def bench_sin_loop():
    x = np.random.default_rng(0).standard_normal((1000, 1000)).astype(np.float32)

    def numpy_loop(v):
        for _ in range(10):
            v = 0.5 * v + 0.1 * np.sin(v)
        return v
    par = median_time(astjax.jit(sin_loop, parallel=True), x, repeat=7)
    t = {"astjax": median_time(astjax.jit(sin_loop), x, repeat=7),
         "numpy": median_time(numpy_loop, x, repeat=7),
         "numba": median_time(sin_loop_numba, x, repeat=7)}
    if jax:
        def jax_loop(v):
            for _ in range(10):
                v = 0.5 * v + 0.1 * jjnp.sin(v)
            return v
        t["jax"] = median_time(jax.jit(jax_loop), x, repeat=7)
    report("sin loop 10 steps 1000x1000", t, "<= 1.0x JAX")
    report_parallel("sin loop 10 steps", par, t, "<= 1.0x JAX")


def bench_logistic(n):
    x = np.random.default_rng(0).standard_normal(n).astype(np.float32)

    def numpy_grad(v):
        s = 1 / (1 + np.exp(-v))
        return s * (1 - s)
    number = 1 if n > 1000 else 200
    if n > 1000:
        par = median_time(astjax.jit(astjax.grad(sum_logistic), parallel=True), x)
    t = {"astjax": median_time(astjax.jit(astjax.grad(sum_logistic)), x, number=number),
         "numpy": median_time(numpy_grad, x, number=number),
         "numba": median_time(logistic_grad_numba, x, number=number)}
    if jax:
        t["jax"] = median_time(jax.jit(jax.grad(lambda v: jjnp.sum(1 / (1 + jjnp.exp(-v))))),
                               x, number=number)
    report(f"jit(grad(sum_logistic)) n={n}", t, "<= 0.8x JAX" if n > 1000 else "<= 0.5x JAX")
    if n > 1000:
        report_parallel(f"jit(grad(sum_logistic)) n={n}", par, t, "<= 0.8x JAX")


def mlp_data():
    rng = np.random.default_rng(0)
    params = (rng.normal(size=(784, 512)).astype(np.float32) * 0.05, np.zeros(512, np.float32),
              rng.normal(size=(512, 10)).astype(np.float32) * 0.05, np.zeros(10, np.float32))
    x = rng.normal(size=(128, 784)).astype(np.float32)
    y = np.eye(10, dtype=np.float32)[rng.integers(0, 10, 128)]
    return params, x, y


def bench_mlp():
    params, x, y = mlp_data()
    par = median_time(astjax.jit(astjax.grad(mlp_loss), parallel=True), params, x, y)
    t = {"astjax": median_time(astjax.jit(astjax.grad(mlp_loss)), params, x, y),
         "numpy": median_time(mlp_grad_numpy, params, x, y)}
    if jax:
        def jax_loss(p, a, b):
            w1, b1, w2, b2 = p
            h = jjnp.tanh(a @ w1 + b1)
            logits = h @ w2 + b2
            return -jjnp.mean(jjnp.sum(jax.nn.log_softmax(logits) * b, axis=1))
        t["jax"] = median_time(jax.jit(jax.grad(jax_loss)), params, x, y)
    report("jit(grad(MLP 784-512-10)) batch 128", t, "<= 0.75x JAX")
    report_parallel("jit(grad(MLP)) batch 128", par, t, "<= 0.75x JAX")
    called = {"astjax": median_time(astjax.jit(astjax.grad(mlp_loss_calling_the_model)),
                                    params, x, y), "astjax inline": t["astjax"]}
    if jax:
        called["jax"] = t["jax"]
    report("same, the model a called function", called)
    # the gradient's two large products (51M multiply-adds each) alone: BLAS's sgemm for
    # astjax, XLA's for JAX; together most of either gradient's time
    h = np.tanh(x @ params[0])
    products = {"astjax": median_time(astjax.jit(mlp_products), x, params[0], h)}
    if jax:
        products["jax"] = median_time(jax.jit(mlp_products), x, params[0], h)
    report("the MLP gradient's two large products", products)


def bench_scalar_loop():
    x = np.float32(1.5)
    t = {"astjax": median_time(astjax.jit(astjax.grad(scalar_loop)), x, number=20),
         "numba adjoint": median_time(scalar_loop_adjoint_numba, x, number=20)}
    report("jit(grad(1000-step scalar loop))", t, "<= 1.3x hand adjoint")


def bench_tiny():
    x = np.ones(3, np.float32)
    t = {"astjax": median_time(astjax.jit(tiny), x, number=2000),
         "numba": median_time(tiny_numba, x, number=2000)}
    if jax:
        t["jax"] = median_time(jax.jit(lambda v: v + 1.0), x, number=2000)
    report("tiny jitted call", t, "<= 0.5x JAX")


_COLD = textwrap.dedent("""
    import sys, time
    sys.path.insert(0, {here!r})
    start = time.perf_counter()
    import astjax
    import jit
    params, x, y = jit.mlp_data()
    astjax.jit(astjax.grad(getattr(jit, sys.argv[1])))(params, x, y)
    print(time.perf_counter() - start)
""")


_JAX_COLD = textwrap.dedent("""
    import sys, time
    sys.path.insert(0, {here!r})
    start = time.perf_counter()
    import jax, jax.numpy as jnp
    from jit import mlp_data
    def loss(p, a, b):
        w1, b1, w2, b2 = p
        h = jnp.tanh(a @ w1 + b1)
        return -jnp.mean(jnp.sum(jax.nn.log_softmax(h @ w2 + b2) * b, axis=1))
    params, x, y = mlp_data()
    jax.block_until_ready(jax.jit(jax.grad(loss))(params, x, y))
    print(time.perf_counter() - start)
""")


def bench_first_call():
    here = os.path.dirname(os.path.abspath(__file__))
    script = _COLD.format(here=here)

    def run(cache, fn="mlp_loss", **extra):
        env = dict(os.environ, ASTJAX_CACHE_DIR=cache, NUMBA_CACHE_DIR=cache,
                   ASTJAX_BENCH_NO_JAX="1", **extra)
        out = subprocess.run([sys.executable, "-c", script, fn], env=env, capture_output=True,
                             text=True, check=True)
        return float(out.stdout.split()[-1])
    with tempfile.TemporaryDirectory() as cache:
        cold = run(cache)
        warm = statistics.median(run(cache) for _ in range(3))
    with tempfile.TemporaryDirectory() as cache:  # a new function, astjax's runtime helpers
        run(cache, "mlp_loss_calling_the_model")  # and math kernels already on disk
        new_function = run(cache)
    with tempfile.TemporaryDirectory() as cache:  # the call runs python code; Numba compiles
        tiered = run(cache, ASTJAX_TIERED_COMPILE="1")  # on a thread (the process waits)
    t = {"astjax": cold, "astjax warm cache": warm, "astjax new function": new_function,
         "astjax tiered, cold": tiered}
    if jax:
        out = subprocess.run([sys.executable, "-c", _JAX_COLD.format(here=here)],
                             capture_output=True, text=True, check=True)
        t["jax"] = float(out.stdout.split()[-1])
    report("first jit(grad(MLP)) call, new process", t, "cold <= 3x JAX's, warm <= 0.7x")


if __name__ == "__main__":
    print(f"numba {numba.__version__}, numpy {np.__version__}, "
          f"jax {jax.__version__ if jax else 'not installed'}; ratios are astjax / other "
          f"(below 1: astjax faster)")
    bench_selu()
    bench_sin_loop()
    bench_logistic(3)
    bench_logistic(1_000_000)
    bench_mlp()
    bench_scalar_loop()
    bench_tiny()
    bench_first_call()
