"""The Numba CPU backend: typed ANF to fused scalar loop nests compiled with ``njit``."""
