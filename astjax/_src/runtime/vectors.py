"""512-bit vectors for Numba's code on CPUs that have them.

LLVM's tuning for recent Intel server CPUs (Ice Lake to Emerald Rapids) prefers
256-bit vectors where 512-bit ones exist (its ``prefer-256-bit`` feature, chosen for
the clock drop of early AVX-512 parts). On the test machines (Emerald Rapids) the
vectorized math kernels run 1.4-1.5x faster with 512-bit vectors: selu on 1M float32
took 0.46 ms instead of 0.68 ms on one core. So astjax turns that preference off
before Numba makes its target machine, unless ``NUMBA_CPU_FEATURES`` is set. This
applies to all Numba code in the process, the user's included; Numba's on-disk cache
keys on the features, so code cached without it is compiled again once.
"""
import os
import sys


def prefer_512_bit_vectors():
    if "NUMBA_CPU_FEATURES" in os.environ:
        return
    import llvmlite.binding as llvm
    features = llvm.get_host_cpu_features()
    if not features.get("avx512f"):  # (elsewhere -prefer-256-bit changes nothing)
        return
    value = features.flatten() + ",-prefer-256-bit"
    if "numba" not in sys.modules:
        os.environ["NUMBA_CPU_FEATURES"] = value  # read when Numba is imported
        return
    # Numba is imported: its configuration is read, and rereading it (it does when the
    # environment changes) would undo what the user set in numba.config, so set it there
    from numba.core import config
    from numba.core.registry import cpu_target
    if "_toplevel_target_context" not in vars(cpu_target):  # else too late
        config.CPU_FEATURES = value
