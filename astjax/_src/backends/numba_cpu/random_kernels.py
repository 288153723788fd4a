"""The Threefry hash compiled for generated Numba code (``ops/bits.py``'s threefry ops),
once and cached on disk: elementwise code calls it per element."""
from numba import njit

from ...random.threefry_hash import threefry2x32_hash

threefry2x32 = njit(cache=True, error_model="numpy")(threefry2x32_hash)
