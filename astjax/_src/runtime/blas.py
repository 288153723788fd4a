"""One BLAS thread for the copy of OpenBLAS that compiled code calls.

Numba's ``np.dot`` calls SciPy's OpenBLAS, a second copy beside NumPy's. Two
thread pools spinning on the same cores fight: ``jit(grad(mlp))`` took 96 ms
instead of 6 ms on the 2-core test machines. SciPy's copy reads
``OPENBLAS_NUM_THREADS`` when it loads, so it is loaded here, early, with one
thread; NumPy's own copy is already loaded and keeps its setting. A thread count
the user set is left alone.
"""
import os
import sys


def single_threaded_scipy_blas():
    import numpy  # noqa: F401  (NumPy's OpenBLAS loads first, with the user's settings)
    if "scipy.linalg.cython_blas" in sys.modules or "OPENBLAS_NUM_THREADS" in os.environ:
        return
    os.environ["OPENBLAS_NUM_THREADS"] = "1"
    try:
        import scipy.linalg.cython_blas  # noqa: F401
        import scipy.special  # noqa: F401
    finally:
        del os.environ["OPENBLAS_NUM_THREADS"]
