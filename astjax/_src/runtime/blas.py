"""Threads: one-thread OpenBLAS for compiled code, and OpenMP threads that spin a while.

Numba's ``np.dot`` calls SciPy's OpenBLAS, a second copy beside NumPy's. Two
thread pools spinning on the same cores fight: ``jit(grad(mlp))`` took 96 ms
instead of 6 ms on the 2-core test machines. SciPy's copy reads
``OPENBLAS_NUM_THREADS`` when it loads, so it is loaded here, early, with one
thread; NumPy's own copy is already loaded and keeps its setting. A thread count
the user set is left alone.

``jit(..., parallel=True)`` code runs its loops and its large products (split by
rows, one-thread BLAS per chunk) on Numba's threads alone, so those may spin
between loops: waking a sleeping OpenMP thread costs 60 µs on these machines
(selu on 1M floats took 0.52 ms instead of 0.42 ms, the tutorial MLP update 6.2 ms
instead of 3.2 ms). ``GOMP_SPINCOUNT`` is read
when Numba first starts its OpenMP pool; a choice the user made (it or
``OMP_WAIT_POLICY``) is left alone.
"""
import os
import sys

# a few ms of spinning (libgomp's default when no wait policy is set; 5-8 ms of CPU
# time after a call, measured here)
_SPIN_COUNT = "300000"


def set_up_threads():
    """One-thread SciPy OpenBLAS and OpenMP threads that spin a while (above)."""
    import numpy  # noqa: F401  (NumPy's OpenBLAS loads first, with the user's settings)
    if "OMP_WAIT_POLICY" not in os.environ:
        os.environ.setdefault("GOMP_SPINCOUNT", _SPIN_COUNT)
    if "scipy.linalg.cython_blas" in sys.modules or "OPENBLAS_NUM_THREADS" in os.environ:
        return
    os.environ["OPENBLAS_NUM_THREADS"] = "1"
    try:
        import scipy.linalg.cython_blas  # noqa: F401
        import scipy.special  # noqa: F401
    finally:
        del os.environ["OPENBLAS_NUM_THREADS"]
