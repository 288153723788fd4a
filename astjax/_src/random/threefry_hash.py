"""The Threefry-2x32 hash (20 rounds) on uint32 values, one function for NumPy arrays and
for Numba: the python backend runs it on arrays (``ops/threefry.py``), generated Numba code
calls it compiled once per element (``backends/numba_cpu/random_kernels.py``), cached on
disk. Inlined into the user's function as array code, each hash was ~100 ops that Numba typed
again at every call site: ``jit`` of a split and two uniform draws took 25 s to compile."""
import numpy as np

_PARITY = 0x1BD11BDA
_ROTATIONS = (13, 15, 26, 6, 17, 29, 16, 24)  # the even and the odd blocks' four rounds


def threefry2x32_hash(k1, k2, x0, x1):
    """Key words ``k1, k2`` hash the counter words ``x0, x1``; the two output words.
    Every step is cast back to uint32: Numba computes uint32 arithmetic in 64 bits."""
    u32 = np.uint32
    keys = (u32(k1), u32(k2), u32(u32(k1) ^ u32(k2) ^ u32(_PARITY)))
    x0 = u32(x0 + keys[0])
    x1 = u32(x1 + keys[1])
    for block in range(5):
        for j in range(4):
            r = _ROTATIONS[4 * (block % 2) + j]
            x0 = u32(x0 + x1)
            x1 = u32(u32(u32(x1 << r) | u32(x1 >> (32 - r))) ^ x0)
        x0 = u32(x0 + keys[(block + 1) % 3])
        x1 = u32(x1 + keys[(block + 2) % 3] + u32(block + 1))
    return x0, x1
