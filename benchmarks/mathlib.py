"""mathlib kernels vs libm calls inside njit vs NumPy ufuncs, 1M elements.

    .venv/bin/python benchmarks/mathlib.py [n] [repeats]

For each function and dtype three loops over the same input:
  mathlib  ``out[i] = _ml.f(x[i])`` in an ``@njit`` loop (what generated code does)
  libm     ``out[i] = np.f(x[i])`` in the same loop (Numba lowers to a libm call)
  numpy    ``np.f(x, out=out)``
Median CPU time (``time.process_time``: all variants are single-threaded) of
``repeats`` runs after a warm-up (compile) call, the three variants timed
round-robin in one run.  ``vec``
says whether the mathlib loop's LLVM IR has vector float types.
"""
import re
import statistics
import sys
import time

import numba
import numpy as np

from astjax._src.backends import mathlib as _ml


def _logistic_np(x, out):
    np.negative(x, out=out)
    np.exp(out, out=out)
    out += 1
    np.reciprocal(out, out=out)
    return out


UNARY = {
    # name: (input range, numpy ufunc)
    "exp": ((-80.0, 80.0), np.exp),
    "log": ((1e-30, 1e30), np.log),
    "log1p": ((-0.9, 10.0), np.log1p),
    "expm1": ((-20.0, 20.0), np.expm1),
    "tanh": ((-10.0, 10.0), np.tanh),
    "logistic": ((-20.0, 20.0), _logistic_np),
    "sin": ((-100.0, 100.0), np.sin),
    "cos": ((-100.0, 100.0), np.cos),
}


def _loops():
    """njit loops, built from source text so each calls its function as a global."""
    loops = {}
    for name in list(UNARY) + ["power"]:
        if name == "power":
            ours = "out[i] = _ml.power(x[i], y[i])"
            libm = "out[i] = x[i] ** y[i]"
            args = "x, y, out"
        else:
            ours = "out[i] = _ml.%s(x[i])" % name
            if name == "logistic":
                libm = "out[i] = one / (one + np.exp(-x[i]))"
            else:
                libm = "out[i] = np.%s(x[i])" % name
            args = "x, out"
        for kind, body in (("mathlib", ours), ("libm", libm)):
            src = (
                "def loop(%s):\n"
                "    one = out.dtype.type(1)\n"
                "    for i in range(out.shape[0]):\n"
                "        %s\n" % (args, body)
            )
            ns = {"np": np, "_ml": _ml}
            exec(src, ns)
            loops[name, kind] = numba.njit(ns["loop"])
    return loops


def median_times(calls, repeats):
    """Median CPU seconds per call of each (fn, args), timed round-robin.

    All three variants are single-threaded, so the process's CPU time is their
    run time; on a shared machine wall time mostly measures other processes."""
    for fn, args in calls:
        fn(*args)
    times = [[] for _ in calls]
    for _ in range(repeats):
        for t, (fn, args) in zip(times, calls):
            t0 = time.process_time()
            fn(*args)
            t.append(time.process_time() - t0)
    return [statistics.median(t) for t in times]


def vectorized(dispatcher, dtype):
    sig = [s for s in dispatcher.signatures if s[0].dtype == numba.from_dtype(dtype)][0]
    ir_text = dispatcher.inspect_llvm(sig)
    lanes = r"<\d+ x float>" if dtype == np.float32 else r"<\d+ x double>"
    return bool(re.search(lanes, ir_text))


def _case(name, dtype, n, rng):
    """Inputs for one function/dtype and a NumPy ufunc call on them."""
    if name == "power":
        x = rng.uniform(0.01, 10.0, n).astype(dtype)
        y = rng.uniform(-8.0, 8.0, n).astype(dtype)
        out = np.empty_like(x)
        return (x, y, out), lambda: np.power(x, y, out=out)
    (lo, hi), uf = UNARY[name]
    if name == "log":
        x = np.exp(rng.uniform(np.log(lo), np.log(hi), n)).astype(dtype)
    else:
        x = rng.uniform(lo, hi, n).astype(dtype)
    out = np.empty_like(x)
    return (x, out), lambda: uf(x, out=out)


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
    repeats = int(sys.argv[2]) if len(sys.argv) > 2 else 15
    rng = np.random.default_rng(0)
    loops = _loops()
    print(f"n = {n}, median CPU time of {repeats} runs in ms; ratios > 1: mathlib is faster")
    print(f"{'function':9s} {'dtype':8s} {'mathlib':>8s} {'libm':>8s} {'numpy':>8s} "
          f"{'libm/ml':>8s} {'numpy/ml':>9s}  vec")
    cases = [(name, dtype) for name in list(UNARY) + ["power"]
             for dtype in (np.float32, np.float64)]
    # the first case runs twice: its first round only warms up the CPU clock and caches
    for i, (name, dtype) in enumerate([cases[0]] + cases):
        args, ufunc = _case(name, dtype, n, rng)
        with np.errstate(all="ignore"):
            t_ml, t_libm, t_np = median_times(
                [(loops[name, "mathlib"], args), (loops[name, "libm"], args), (ufunc, ())],
                repeats)
        if i == 0:
            continue
        vec = "yes" if vectorized(loops[name, "mathlib"], dtype) else "NO"
        print(f"{name:9s} {dtype.__name__:8s} {t_ml * 1e3:8.3f} {t_libm * 1e3:8.3f} "
              f"{t_np * 1e3:8.3f} {t_libm / t_ml:8.2f} {t_np / t_ml:9.2f}  {vec}")


if __name__ == "__main__":
    main()
