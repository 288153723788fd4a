"""Dispatch overhead: synchronous (inline) calls against the asynchronous (worker) path.

    .venv/bin/python benchmarks/dispatch_async.py

Measures ``runtime.dispatch.execute`` (what every jitted call goes through) on a
call whose own work is ``x * 2`` (NumPy), for several sizes:

- sync:        the call runs inline (``astjax_async_dispatch`` off);
- async issue: time until an asynchronously dispatched call returns (work queued);
- async round: issue and then wait for the result (what a caller pays when it reads
               the result at once);
- overlap:     issue, then do the same amount of Python-side NumPy work, then wait:
               the time async dispatch can save when Python has something else to do.

plus the cost of creating an Array with and without recording its allocation site
(medians of many repetitions, microseconds), and a chain of jitted calls on the Numba
backend, each taking the last one's result and scaling it eagerly, with Python
preparing the next batch in between (a training loop): run synchronously, with each call waiting for its pending
argument (what astjax did before calls queued behind pending arguments), and queued.
"""
import statistics
import time

import numpy as np

import astjax
from astjax._src.ir.types import ArrayType
from astjax._src.runtime import dispatch
from astjax._src.runtime.array import _SITES, Array


def median_us(fn, reps):
    times = []
    for _ in range(reps):
        t0 = time.perf_counter_ns()
        fn()
        times.append(time.perf_counter_ns() - t0)
    return statistics.median(times) / 1000.0


def bench_sizes():
    t = ArrayType(np.dtype(np.float32), (False,), False)

    def work(x):
        return x * np.float32(2)

    astjax.config.update("astjax_record_allocation_sites", True)

    print(f"{'elements':>10} {'bytes':>9} {'raw fn':>8} {'sync':>8} {'async issue':>12} "
          f"{'async round':>12} {'sync+py':>9} {'async+py':>9}   (us, median)")
    for n in [1, 1_000, 16_384, 65_536, 262_144, 1_048_576, 4_194_304]:
        x = np.ones(n, np.float32)
        reps = 2000 if n <= 65_536 else 200 if n <= 1_048_576 else 40
        raw = median_us(lambda: work(x), reps)

        astjax.config.update("astjax_async_dispatch", False)
        sync = median_us(lambda: dispatch.execute(work, [x], t), reps)

        buf = np.empty_like(x)

        def py_side():  # stand-in for the caller's own next step (same amount of work)
            np.multiply(x, np.float32(3), out=buf)

        sync_py = median_us(lambda: (dispatch.execute(work, [x], t), py_side()), reps)

        astjax.config.update("astjax_async_dispatch", True)
        astjax.config.update("astjax_async_min_bytes", 0)
        pending = []
        issue = median_us(lambda: pending.append(dispatch.execute(work, [x], t)), reps)
        for p in pending:
            p.block_until_ready()
        pending.clear()
        round_trip = median_us(lambda: dispatch.execute(work, [x], t).block_until_ready(),
                               reps)

        def overlapped():
            y = dispatch.execute(work, [x], t)
            py_side()
            y.block_until_ready()

        async_py = median_us(overlapped, reps)
        print(f"{n:>10} {x.nbytes:>9} {raw:>8.1f} {sync:>8.1f} {issue:>12.1f} "
              f"{round_trip:>12.1f} {sync_py:>9.1f} {async_py:>9.1f}")
    astjax.config.update("astjax_async_min_bytes", 1 << 22)


def bench_array_creation():
    a = np.ones(3, np.float32)
    reps = 200_000

    def create():
        Array(a)

    def loop(n=reps):
        t0 = time.perf_counter_ns()
        for _ in range(n):
            create()
        return (time.perf_counter_ns() - t0) / n / 1000.0

    _SITES[0] = False
    off = min(loop() for _ in range(5))
    _SITES[0] = True
    on = min(loop() for _ in range(5))
    print(f"\nArray creation: {off:.3f} us without allocation sites, {on:.3f} us with "
          f"(+{on - off:.3f} us, best of 5 x {reps})")


def bench_jit():
    import astjax.numpy as jnp

    def f(x):
        return x * 2.0 + 1.0

    jf = astjax.jit(f)
    x = jnp.ones(3)
    jf(x)
    n = 20_000
    t0 = time.perf_counter_ns()
    for _ in range(n):
        jf(x)
    print(f"tiny jitted call end to end: {(time.perf_counter_ns() - t0) / n / 1000.0:.2f} us")
    t0 = time.perf_counter_ns()
    for _ in range(n):
        x * x
    print(f"tiny eager op (x * x) end to end: {(time.perf_counter_ns() - t0) / n / 1000.0:.2f} us")


def bench_chain(steps=10, reps=7):
    import astjax.numpy as jnp

    def step(x, batch):
        for _ in range(4):
            x = 0.5 * x + 0.1 * jnp.sin(x + batch)
        return x

    astjax.config.update("astjax_jit_backend", "numba")
    jstep = astjax.jit(step)
    x0 = np.ones(1 << 21, np.float32)  # 8 MiB: over the 4 MiB queueing threshold
    rng = np.random.default_rng(0)

    def next_batch():  # the host's share of a step
        return rng.standard_normal(x0.size, np.float32)

    def loop(wait_each):
        x = x0
        for _ in range(steps):
            if wait_each:
                astjax.block_until_ready(x)
            x = jstep(x, next_batch()) * 0.999  # an eager op on the pending result
        astjax.block_until_ready(x)

    astjax.block_until_ready(jstep(x0, next_batch()))  # compiled
    compute = median_us(lambda: astjax.block_until_ready(jstep(x0, x0)), reps) / 1000
    host = median_us(next_batch, reps) / 1000
    results = {}
    for name, on, wait_each in [("sync", False, False), ("wait each", True, True),
                                ("queued", True, False)]:
        astjax.config.update("astjax_async_dispatch", on)
        results[name] = median_us(lambda: loop(wait_each), reps) / 1000
    astjax.config.update("astjax_async_dispatch", True)
    print(f"\nchain of {steps} jitted steps on 2M float32 (one step {compute:.1f} ms, the "
          f"host's batch {host:.1f} ms), ms, median of {reps}:")
    for name, ms in results.items():
        print(f"  {name:>9}: {ms:7.1f}  ({ms / results['sync']:.2f}x sync)")


if __name__ == "__main__":
    bench_chain()
    bench_sizes()
    bench_array_creation()
    bench_jit()
