"""Tape memory and time of grad through a long loop: everything recorded vs checkpoint.

    .venv/bin/python benchmarks/checkpoint.py [steps] [size]

The loop body is written inline (the tape records every intermediate of every step), as a
call to ``checkpoint(step)`` (the tape records only the carried x; the backward sweep
recomputes the step's intermediates), and as sqrt(n) checkpointed segments of sqrt(n) steps
each (the outer tape holds n/k carries, one segment's backward holds k: O(sqrt(n)) memory). Peak memory is Python's tracemalloc peak during the
gradient call (NumPy allocations are traced); time is the median of 5 calls after a warm-up.
"""
import statistics
import sys
import time
import tracemalloc

import numpy as np

import astjax
import astjax.numpy as jnp


def step(x):
    y = jnp.sin(x) * 0.9
    z = jnp.tanh(y) + x * 0.1
    return z * jnp.cos(z)


step_checkpointed = astjax.checkpoint(step)


def inline_loop(x, n):
    for i in range(n):
        y = jnp.sin(x) * 0.9
        z = jnp.tanh(y) + x * 0.1
        x = z * jnp.cos(z)
    return jnp.sum(x)


def checkpointed_loop(x, n):
    for i in range(n):
        x = step_checkpointed(x)
    return jnp.sum(x)


def segment(x, k):
    for i in range(k):
        x = step_checkpointed(x)
    return x


segment_checkpointed = astjax.checkpoint(segment)


def sqrt_checkpointed_loop(x, n, k):
    for j in range(n // k):
        x = segment_checkpointed(x, k)
    return jnp.sum(x)


def measure(fn, x, *args):
    g = astjax.grad(fn)
    g(x, *args)  # compile
    times = []
    for _ in range(5):
        t0 = time.perf_counter()
        g(x, *args)
        times.append(time.perf_counter() - t0)
    tracemalloc.start()
    g(x, *args)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return statistics.median(times), peak


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    size = int(sys.argv[2]) if len(sys.argv) > 2 else 100_000
    x = np.random.default_rng(0).standard_normal(size).astype(np.float32)
    t_plain, m_plain = measure(inline_loop, x, n)
    t_ckpt, m_ckpt = measure(checkpointed_loop, x, n)
    k = max(1, int(round(n ** 0.5)))
    while n % k:
        k -= 1
    t_sqrt, m_sqrt = measure(sqrt_checkpointed_loop, x, n, k)
    reference = astjax.grad(inline_loop)(x, n)
    for got in (astjax.grad(checkpointed_loop)(x, n),
                astjax.grad(sqrt_checkpointed_loop)(x, n, k)):
        np.testing.assert_allclose(got, reference, rtol=1e-5, atol=1e-6)
    carry = x.nbytes * n / 2**20
    print(f"grad through {n} steps on {size} float32 (python backend); carry per run "
          f"{carry:.1f} MiB")
    print(f"{'':14}{'peak MiB':>10}{'median s':>10}")
    print(f"{'plain tape':14}{m_plain / 2**20:10.1f}{t_plain:10.3f}")
    print(f"{'checkpoint':14}{m_ckpt / 2**20:10.1f}{t_ckpt:10.3f}")
    print(f"{f'sqrt(n), k={k}':14}{m_sqrt / 2**20:10.1f}{t_sqrt:10.3f}")
    print(f"checkpoint / plain: memory {m_ckpt / m_plain:.2f}x, time {t_ckpt / t_plain:.2f}x")
    print(f"sqrt(n) / plain:    memory {m_sqrt / m_plain:.2f}x, time {t_sqrt / t_plain:.2f}x")


if __name__ == "__main__":
    main()
