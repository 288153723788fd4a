"""What astjax.debug.print costs the Numba backend's first (cold) compile.

    .venv/bin/python benchmarks/debug_print_compile.py [runs]

Each run is a fresh process with a fresh cache directory (no generated-source or Numba
cache) that compiles an unrelated function first (Numba's own start-up), then three small
functions, differing only in their prints: none, one, three. Printed: the CPU seconds of
each first call, median over the runs (the order alternates between runs).
"""
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

import astjax
import astjax.numpy as jnp

CASES = ["no_print", "one_print", "three_prints"]


def no_print(x):
    y = jnp.sin(x) * 2
    return y.sum()


def one_print(x):
    y = jnp.sin(x) * 2
    astjax.debug.print("y = {}", y)
    return y.sum()


def three_prints(x):
    y = jnp.sin(x) * 2
    astjax.debug.print("y = {}", y)
    astjax.debug.print("x = {}", x)
    print("both", x, y)
    return y.sum()


def child(order):
    astjax.config.update("astjax_jit_backend", "numba")
    x = np.arange(3, dtype=np.float32)
    astjax.jit(lambda v: (v * 3).sum())(x)  # Numba's start-up, not counted
    for name in order:
        start = time.process_time()
        astjax.jit(globals()[name])(x)
        print(name, time.process_time() - start)


def main(runs):
    times = {name: [] for name in CASES}
    for k in range(runs):
        order = CASES if k % 2 == 0 else CASES[::-1]
        with tempfile.TemporaryDirectory() as cache:
            env = dict(os.environ, ASTJAX_CACHE_DIR=cache, ASTJAX_SOURCE_CACHE="0")
            out = subprocess.run([sys.executable, __file__, "--child", *order], env=env,
                                 capture_output=True, text=True, check=True).stdout
        for line in out.split("\n"):
            if line.split(" ")[0] in times:
                name, seconds = line.split()
                times[name].append(float(seconds))
    for name in CASES:
        print(f"{name:14s} first call {statistics.median(times[name]):.2f} s CPU "
              f"(median of {runs}: {', '.join(f'{t:.2f}' for t in times[name])})")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        child(sys.argv[2:])
    else:
        main(int(sys.argv[1]) if len(sys.argv) > 1 else 4)
