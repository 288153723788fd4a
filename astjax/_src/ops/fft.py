"""The one-dimensional discrete Fourier transform along the last axis, the op that
``astjax.numpy.fft`` is written with (as JAX's jnp.fft is with ``lax.fft``).

``fft(a, fft_type, n, norm)`` is NumPy's ``np.fft.<fft_type>(a, n, axis=-1, norm=norm)``:
``fft_type`` one of "fft", "ifft", "rfft", "irfft"; the input is cropped or zero-padded to
``n`` (``n // 2 + 1`` for irfft) as NumPy does, so its derivative is one transform plus
the transpose of that crop. ``n`` may be computed at run time. Dtypes are JAX's: a real
or integer input of fft/ifft becomes complex of its precision (float32 -> complex64,
complex128 with x64), rfft takes a real input, irfft gives the real dtype of its input.
VJP/JVP rules: ``ad/vjp_fft.py``; Numba kernel: ``backends/numba_cpu/fft_kernels.py``.
"""
import numpy as np

from .. import dtypes
from ..errors import ShapeError
from ..ir.types import ArrayType, Static
from .conversions import array_operand
from .registry import NAMESPACE, Op

TYPES = ("fft", "ifft", "rfft", "irfft")
NORMS = (None, "backward", "ortho", "forward")
_COMPLEX = {np.dtype(np.float16): dtypes.complex64, dtypes.float32: dtypes.complex64,
            dtypes.float64: dtypes.complex128}


def _check(fft_type, norm):
    if fft_type not in TYPES:
        raise ShapeError(f"fft(): fft_type must be one of {TYPES}, got {fft_type!r}")
    if norm not in NORMS:
        raise ShapeError(f'fft(): invalid norm value {norm!r}; should be "backward", '
                         f'"ortho" or "forward"')


def out_dtype(dtype, fft_type):
    """JAX's result dtype of the transform of an array of ``dtype``."""
    dtype = np.dtype(dtype)
    if fft_type == "rfft" and dtype.kind == "c":
        raise ShapeError("rfft(): only real valued inputs are supported, as in JAX "
                         f"(got {dtype})")
    inexact = dtypes.to_inexact(dtype)[0]
    complex_ = inexact if inexact.kind == "c" else _COMPLEX[inexact]
    if fft_type == "irfft":
        return dtypes.float64 if complex_ == dtypes.complex128 else dtypes.float32
    return complex_


def _fft(a, fft_type="fft", n=None, norm=None):
    _check(fft_type, norm)
    a = np.asarray(a)
    dtype = out_dtype(a.dtype, fft_type)
    if n is not None:
        n = int(n)
    if a.ndim == 0:
        raise ShapeError(f"{fft_type}(): the input must have at least one dimension")
    if n is None and fft_type == "irfft":
        n = max(0, 2 * (a.shape[-1] - 1))
    if n == 0 or (n is None and a.shape[-1] == 0 and fft_type != "rfft"):
        return np.zeros(a.shape[:-1] + (0,), dtype)  # JAX: empty, where NumPy raises
    out = getattr(np.fft, fft_type)(a, n, axis=-1, norm=norm)
    return out.astype(dtype, copy=False)


def _fft_rule(a, fft_type="fft", n=None, norm=None):
    _check(fft_type, norm)
    a = array_operand("fft", "a", a)
    if a.ndim == 0:
        raise ShapeError(f"{fft_type}(): the input must have at least one dimension")
    if isinstance(n, Static):
        n = n.value
    if isinstance(n, ArrayType):
        if n.ndim or n.dtype.kind not in "iu":
            raise ShapeError(f"{fft_type}(): n must be an integer, got {n}")
        last = False  # known at run time only
    elif n is None:
        last = a.ones[-1] if fft_type in ("fft", "ifft") else False
        if fft_type == "rfft":  # n // 2 + 1 == 1 for n == 1
            last = a.ones[-1]
    else:
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
            raise ShapeError(f"{fft_type}(): n must be an integer, got {n!r}")
        if n < 1:
            raise ShapeError(f"{fft_type}(): Shape should be positive, got n={n}")
        last = (n // 2 + 1 if fft_type == "rfft" else n) == 1
    return ArrayType(out_dtype(a.dtype, fft_type), a.ones[:-1] + (last,), False)


fft = Op("fft", _fft, _fft_rule, operands=("a",), static=("fft_type", "norm"))
del NAMESPACE["fft"]  # jnp.fft is the module astjax/numpy/fft.py; compiled code uses REGISTRY
