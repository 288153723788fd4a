"""The astjax tour: what works today, with results, timings against NumPy and generated source.

Run it with ./tools/tour (which sets up .venv on first use).
"""
import time

import numpy as np

import astjax
import astjax.numpy as jnp
from astjax import nn


def section(title):
    print(f"\n=== {title} " + "=" * max(0, 70 - len(title)))


def median_time(fn, *args, repeat=7, number=20):
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(number):
            fn(*args)
        times.append((time.perf_counter() - t0) / number)
    return sorted(times)[len(times) // 2]


# -- functions the tour compiles (they must live in a file: astjax reads their source) --

def selu(x, alpha=1.67, lmbda=1.05):
    return lmbda * jnp.where(x > 0, x, alpha * jnp.exp(x) - alpha)


def sin_steps(x):
    for _ in range(10):
        x = 0.5 * x + 0.1 * np.sin(x)   # plain NumPy calls are astjax ops too
    return x


def clipped_mean(x, limit):
    total = 0.0
    n = 0
    for v in x:                         # a Python loop over an array: compiled as a loop
        if v > limit:
            continue
        total = total + v
        n += 1
    return total / max(n, 1)


def poly(x):
    return 3 * x ** 2 + 2 * x + 5


def sum_logistic(x):
    return jnp.sum(1.0 / (1.0 + jnp.exp(-x)))


def damped(x, steps):
    for _ in range(steps):              # differentiated as a loop, replayed backwards
        x = x - 0.05 * jnp.sin(x)
    return jnp.sum(x * x)


def predict_loss(w, x, y):
    return jnp.sum((jnp.tanh(x @ w) - y) ** 2)


def bad_shapes(x):
    return jnp.matmul(x, 2.0)


def main():
    section("1. A NumPy API (JAX's quickstart, the NumPy part)")
    x = jnp.arange(5.0)
    print("x = jnp.arange(5.0)       ->", repr(x))
    print("x * 2 + 1                 ->", repr(x * 2 + 1))
    print("jnp.dot(x, x)             ->", repr(jnp.dot(x, x)))
    ints = jnp.arange(3)
    print("int32 * 2.5 (JAX dtypes)  ->", repr(ints * 2.5))
    print("x.at[1].set(10.)          ->", repr(x.at[1].set(10.0)), "(x is unchanged:", x, ")")
    print("nn.softmax(x)             ->", repr(nn.softmax(x)))
    key = astjax.random.PRNGKey(0)
    key, sub = astjax.random.split(key)
    print("random.normal(sub, (3,))  ->", repr(astjax.random.normal(sub, (3,))),
          "(bit for bit JAX's)")

    section("2. jit: your Python source, compiled with Numba (fused loops, vectorized math)")
    data = np.random.default_rng(0).standard_normal(1_000_000).astype(np.float32)
    selu_jit = astjax.jit(selu)
    out = selu_jit(data)
    ref = 1.05 * np.where(data > 0, data, 1.67 * np.exp(data) - 1.67)
    print(f"selu on 1M float32: max |astjax - numpy| = {float(np.max(np.abs(out - ref))):.2e}, "
          f"dtype {out.dtype}")
    t_np = median_time(lambda d: 1.05 * np.where(d > 0, d, 1.67 * np.exp(d) - 1.67), data)
    t_ax = median_time(selu_jit, data)
    print(f"  numpy {t_np * 1e3:.2f} ms   astjax.jit {t_ax * 1e3:.2f} ms   "
          f"ratio {t_ax / t_np:.2f}x  (median of 7)")
    print("  One fused loop, no temporaries, astjax's own vectorizable exp (first call compiles:")
    print("  about a second; the machine code is cached on disk for the next process).")

    grid = np.random.default_rng(1).standard_normal((1000, 1000)).astype(np.float32)
    sin_jit = astjax.jit(sin_steps)
    np.testing.assert_allclose(sin_jit(grid), sin_steps(grid), rtol=1e-5)
    t_np = median_time(sin_steps, grid, number=3)
    t_ax = median_time(sin_jit, grid, number=3)
    print(f"ten-step 0.5*x + 0.1*sin(x), 1000x1000: numpy {t_np * 1e3:.1f} ms, "
          f"astjax {t_ax * 1e3:.1f} ms, ratio {t_ax / t_np:.2f}x")

    section("3. Python control flow compiles as control flow")
    v = np.array([0.5, 3.0, 1.5, 9.0, 2.0], dtype=np.float32)
    print("clipped_mean(v, 2.0)      ->", repr(astjax.jit(clipped_mean)(v, 2.0)))
    print("  (NumPy gives", np.float32(np.mean(v[v <= 2.0])), ")")
    cm = astjax.jit(clipped_mean)
    for n in (10, 1000, 100_000):
        cm(np.ones(n, np.float32), 2.0)
    print(f"  called with sizes 5, 10, 1000, 100000: {len(cm.cache)} compiled version "
          f"(a new size never recompiles)")

    section("4. Read the generated source")
    print("make_source(jit(selu)): what Numba compiles")
    print(astjax.make_source(selu_jit)(data))
    print("make_source(clipped_mean): the python backend's NumPy version")
    print(astjax.make_source(clipped_mean)(v, 2.0))

    section("5. Derivatives are generated Python too")
    print("grad(3x^2+2x+5)(1.0)      ->", repr(astjax.grad(poly)(1.0)))
    print("grad(grad(...))(1.0)      ->", repr(astjax.grad(astjax.grad(poly))(1.0)))
    print("grad(sum_logistic)(arange(3.)) ->",
          repr(astjax.grad(sum_logistic)(jnp.arange(3.0))))
    xs = np.linspace(-1, 1, 5).astype(np.float32)
    print("grad(damped loop, 20 steps) ->", repr(astjax.grad(damped)(xs, 20)))
    fast_grad = astjax.jit(astjax.grad(sum_logistic))
    big = np.random.default_rng(2).standard_normal(1_000_000).astype(np.float32)

    def numpy_grad(v):
        s = 1 / (1 + np.exp(-v))
        return s * (1 - s)
    np.testing.assert_allclose(fast_grad(big), numpy_grad(big), rtol=2e-5, atol=1e-7)
    t_np = median_time(numpy_grad, big, number=5)
    t_ax = median_time(fast_grad, big, number=5)
    print(f"jit(grad(sum_logistic)) on 1M float32: hand-written numpy {t_np * 1e3:.2f} ms, "
          f"astjax {t_ax * 1e3:.2f} ms, ratio {t_ax / t_np:.2f}x")
    src = astjax.make_source(astjax.grad(damped))(xs, 20)
    start = src.index("def damped_vjp")
    print("\nThe generated reverse sweep of the loop (excerpt):")
    print("\n".join(src[start:].splitlines()[:34]))
    _, tangent = astjax.jvp(lambda x: damped(x, 20), (xs,), (xs,))
    print("\nForward mode: jvp(damped, (xs,), (xs,)) ->", repr(tangent),
          "(grad . xs:", float(np.dot(astjax.grad(damped)(xs, 20), xs)), ")")
    src = astjax.make_source(astjax.jacfwd(damped))(xs, 20)
    start = src.index("def damped_jvp")
    print("The generated tangent loop (excerpt): tangents beside the primal, nothing taped")
    print("\n".join(src[start:].splitlines()[:14]))

    section("6. vmap: batching as a source rewrite")
    rng = np.random.default_rng(3)
    w = rng.standard_normal((4, 2)).astype(np.float32)
    xb = rng.standard_normal((5, 4)).astype(np.float32)
    yb = rng.standard_normal((5, 2)).astype(np.float32)
    per_example = astjax.jit(astjax.vmap(astjax.grad(predict_loss), in_axes=(None, 0, 0)))
    got = per_example(w, xb, yb)
    loop = np.stack([np.asarray(astjax.grad(predict_loss)(w, xb[i], yb[i])) for i in range(5)])
    print(f"per-example gradients jit(vmap(grad(loss))): shape {got.shape}, "
          f"max |vmap - loop| = {float(np.max(np.abs(np.asarray(got) - loop))):.1e}")

    section("7. Errors point at your line")
    try:
        astjax.jit(bad_shapes)(np.ones(3, np.float32))
    except TypeError as e:
        print(f"{type(e).__name__}: {e}")

    section("More")
    print("benchmarks/jit.py compares with JAX and hand-written Numba; README.md lists what")
    print("works today, what differs from JAX, and what is still open (the CUDA backend).")


if __name__ == "__main__":
    main()
