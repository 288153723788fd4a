"""512-bit vectors for Numba's code on CPUs that have them.

LLVM's tuning for recent Intel server CPUs (Ice Lake to Emerald Rapids) prefers
256-bit vectors where 512-bit ones exist (its ``prefer-256-bit`` feature, chosen for
the clock drop of early AVX-512 parts). On the test machines (Emerald Rapids) the
vectorized math kernels run 1.4-1.5x faster with 512-bit vectors: selu on 1M float32
took 0.46 ms instead of 0.68 ms on one core. So astjax turns that preference off
before Numba compiles anything, unless ``NUMBA_CPU_FEATURES`` is set. It is an
environment variable because Numba rereads its configuration from the environment
before each compile; it applies to all Numba code in the process (and its child
processes), the user's included. Numba's on-disk cache keys on the features, so code
cached without it is compiled again once.
"""
import os


def prefer_512_bit_vectors():
    if "NUMBA_CPU_FEATURES" in os.environ:
        return
    import llvmlite.binding as llvm
    features = llvm.get_host_cpu_features()
    if features.get("avx512f"):  # (on other CPUs -prefer-256-bit changes nothing)
        os.environ["NUMBA_CPU_FEATURES"] = features.flatten() + ",-prefer-256-bit"
