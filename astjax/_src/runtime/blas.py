"""Threads for the copy of OpenBLAS that compiled code calls, and for parallel loops.

Numba's ``np.dot`` calls SciPy's OpenBLAS, a second copy beside NumPy's. Two
thread pools spinning on the same cores fight: ``jit(grad(mlp))`` took 96 ms
instead of 6 ms on the 2-core test machines. SciPy's copy reads
``OPENBLAS_NUM_THREADS`` when it loads, so it is loaded here, early, with one
thread; NumPy's own copy is already loaded and keeps its setting. A thread count
the user set is left alone.

``jit(..., parallel=True)`` code runs its loops on Numba's threads and its
products on every core (``all_cores``). OpenMP threads that spin after a loop
starve OpenBLAS's: the MLP gradient took 28 ms instead of 1.8 ms, so OpenMP
waits passively unless the user chose otherwise (``OMP_WAIT_POLICY``, read when
Numba first starts its OpenMP pool).
"""
import contextlib
import ctypes
import glob
import os
import sys

_SET_THREADS = []  # SciPy's openblas_set_num_threads, when it can be found


def single_threaded_scipy_blas():
    import numpy  # noqa: F401  (NumPy's OpenBLAS loads first, with the user's settings)
    os.environ.setdefault("OMP_WAIT_POLICY", "passive")
    if "scipy.linalg.cython_blas" in sys.modules or "OPENBLAS_NUM_THREADS" in os.environ:
        return
    os.environ["OPENBLAS_NUM_THREADS"] = "1"
    try:
        import scipy.linalg.cython_blas  # noqa: F401
        import scipy.special  # noqa: F401
    finally:
        del os.environ["OPENBLAS_NUM_THREADS"]
    _SET_THREADS.extend(_scipy_set_num_threads())


def _scipy_set_num_threads():
    import scipy
    here = os.path.join(os.path.dirname(scipy.__file__), os.pardir, "scipy.libs")
    for path in glob.glob(os.path.join(here, "libscipy_openblas*.so*")):
        lib = ctypes.CDLL(path)
        for name in ("scipy_openblas_set_num_threads", "openblas_set_num_threads"):
            fn = getattr(lib, name, None)
            if fn is not None:
                fn.argtypes = [ctypes.c_int]
                return [fn]
    return []  # another build of SciPy: its BLAS keeps its threads


@contextlib.contextmanager
def all_cores(threads):
    """SciPy's OpenBLAS on ``threads`` threads inside the block, one thread after it."""
    if not _SET_THREADS:
        yield
        return
    _SET_THREADS[0](threads)
    try:
        yield
    finally:
        _SET_THREADS[0](1)
