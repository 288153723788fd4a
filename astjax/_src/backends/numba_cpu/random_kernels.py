"""The Threefry hash and XLA's float32 log, log1p, exp, erf and erfinv compiled for generated
Numba code (``ops/bits.py``'s threefry and xla_* ops), once and cached on disk: elementwise
code calls them per element."""
import numpy as np
from numba import njit
from numba.extending import overload, register_jitable

from .. import mathlib as _ml
from ...random import xla_f32 as _x
from ...random.threefry_hash import threefry2x32_hash

_OPTIONS = dict(cache=True, error_model="numpy")

threefry2x32 = njit(**_OPTIONS)(threefry2x32_hash)


# xla_f32's helpers on scalars (its own are NumPy's)
@overload(_x.select)
def _select(c, a, b):
    return lambda c, a, b: a if c else b


@overload(_x.fma)
def _fma(x, y, z):
    return lambda x, y, z: _ml.fma(x, y, z)  # llvm.fma: fused, as XLA's CPU code


@overload(_x.frexp)
def _frexp(x):
    return lambda x: _ml.frexp(x)


@overload(_x.pow2)
def _pow2(n):
    return lambda n: _ml._bits_float(np.int32((n + 127) << 23))  # 2**n's bits


for _f in (_x._daz, _x.log32, _x.log1p32):  # called by the others
    register_jitable(_f)

# inlined into the caller's loop (LLVM's inliner left erfinv a call: jit of
# random.normal(key, (2_000_000,)) ran 5x slower, unvectorized)
xla_log32, xla_log1p32, xla_exp32, xla_erf32, xla_erfinv32 = (
    njit(forceinline=True, **_OPTIONS)(f)
    for f in (_x.log32, _x.log1p32, _x.exp32, _x.erf32, _x.erfinv32))
