"""Jacobians and Hessians: astjax's jacfwd / jacrev / hessian against JAX's.

    .venv/bin/python benchmarks/jacobian.py [n]

``f`` maps R^n to R^n through a five-step Python loop of tanh and sin (the loop stays a
loop in astjax; JAX unrolls it while tracing); the Hessian is of ``sum(f(x))``. For each
transform: the first call of ``jit(transform(f))`` in this process (generation plus
compilation; the disk cache lives in a fresh temporary directory) and the median of
repeated calls after it. astjax runs on Numba (jit's default) and, without jit, on the
python backend (generated NumPy, no compile). JAX's ``jax.jit`` columns appear when JAX is
importable. Ratios are astjax / JAX (lower is better).
"""
import os
import statistics
import sys
import tempfile
import time

os.environ["ASTJAX_CACHE_DIR"] = tempfile.mkdtemp()  # cold: nothing compiled before

import numpy as np  # noqa: E402

import astjax  # noqa: E402
import astjax.numpy as jnp  # noqa: E402


def make_f(np_):
    """f for a NumPy-like module: astjax.numpy, or jax.numpy."""
    def f(x):
        y = x
        for i in range(5):
            y = np_.tanh(y * 1.1) + 0.1 * np_.sin(x)
        return y * np_.sum(x ** 2)

    def loss(x):
        return np_.sum(f(x))
    return f, loss


def median_time(fn, x, block, repeat=30):
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        block(fn(x))
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def first_and_median(fn, x, block):
    start = time.perf_counter()
    block(fn(x))
    return time.perf_counter() - start, median_time(fn, x, block)


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 50
    x = np.linspace(0.1, 1.0, n).astype(np.float32)
    try:
        import jax
        import jax.numpy as jjnp
    except ImportError:
        jax = None
    f, loss = make_f(jnp)
    jax_f, jax_loss = make_f(jjnp) if jax is not None else (None, None)
    cases = [("jacfwd", astjax.jacfwd, f, jax_f), ("jacrev", astjax.jacrev, f, jax_f),
             ("hessian", astjax.hessian, loss, jax_loss)]
    ready = astjax.block_until_ready
    print(f"n = {n}, float32; times in ms (first call / median of 30)")
    print(f"{'':8} {'astjax jit':>18} {'astjax python':>15} {'JAX jit':>18} {'ratio':>7}")
    for name, transform, fn, jax_fn in cases:
        jitted = first_and_median(astjax.jit(transform(fn)), x, ready)
        eager = median_time(transform(fn), x, ready, repeat=5)
        ours = np.asarray(astjax.jit(transform(fn))(x))
        row = f"{name:8} {jitted[0] * 1e3:8.0f} / {jitted[1] * 1e3:7.3f} {eager * 1e3:15.2f}"
        if jax is not None:
            jax_fn = jax.jit(getattr(jax, name)(jax_fn))
            theirs = first_and_median(jax_fn, x, lambda r: r.block_until_ready())
            np.testing.assert_allclose(ours, np.asarray(jax_fn(x)), rtol=2e-3, atol=2e-3)
            row += f" {theirs[0] * 1e3:8.0f} / {theirs[1] * 1e3:7.3f} " \
                   f"{jitted[1] / theirs[1]:6.2f}x"
        print(row)


if __name__ == "__main__":
    main()
