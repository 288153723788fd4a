"""normal(key, (10_000_000,)) under jit: astjax against JAX on CPU (when importable).

    .venv/bin/python benchmarks/random_normal.py [n]

Median of 5 calls after a warm-up (compile) call, in one run; astjax on one core and
with ``jit(..., parallel=True)``.
"""
import statistics
import sys
import time

import numpy as np

import astjax
from astjax import random


def draw(key, n):
    return random.normal(key, (n,))


def median_time(fn, *args):
    fn(*args)
    times = []
    for _ in range(5):
        t0 = time.perf_counter()
        np.asarray(fn(*args))
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000_000
    key = random.PRNGKey(0)
    jitted = astjax.jit(draw, static_argnums=1)
    ours = median_time(jitted, key, n)
    parallel = median_time(astjax.jit(draw, static_argnums=1, parallel=True), key, n)
    (compiled,) = jitted.cache.values()
    print(f"normal(key, ({n},)) float32 under jit, median of 5")
    print(f"astjax ({compiled.backend} backend) {ours:8.3f} s")
    print(f"astjax, parallel=True  {parallel:8.3f} s")
    try:
        import jax
    except ImportError:
        print("JAX not importable: no comparison")
        return
    jkey = jax.random.PRNGKey(0)
    theirs = median_time(jax.jit(lambda k: jax.random.normal(k, (n,))), jkey)
    same = np.array_equal(np.asarray(astjax.jit(draw, static_argnums=1)(key, 1000)),
                          np.asarray(jax.random.normal(jkey, (1000,))))
    print(f"JAX {jax.__version__:17} {theirs:8.3f} s")
    print(f"astjax / JAX: {ours / theirs:.2f}x, with parallel=True {parallel / theirs:.2f}x "
          f"(JAX uses every core)   first 1000 values bit-identical: {same}")


if __name__ == "__main__":
    main()
