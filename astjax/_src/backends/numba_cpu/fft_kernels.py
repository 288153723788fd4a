"""The ``fft`` op (``ops/fft.py``) for generated Numba code, which has no np.fft: each row
of a 2-D array (the op's last axis, the others flattened) is cropped or zero-padded to n
and transformed in complex128, then rounded to the output dtype. A power-of-two n runs an
iterative radix-2 FFT; any other n Bluestein's algorithm, the DFT as a convolution with a
chirp done by radix-2 FFTs of a power-of-two length >= 2n - 1: O(n log n) for every n.
Twiddles and the chirp's transform are computed once per call, for all rows.

``kind``: 0 fft, 1 ifft, 2 rfft, 3 irfft; ``norm``: 0 backward, 1 ortho, 2 forward."""
import math

import numpy as np
from numba import njit

_OPTIONS = dict(cache=True, error_model="numpy")


@njit(**_OPTIONS)
def _twiddles(m):
    """exp(-2 pi i k / m) for k < m / 2, m a power of two."""
    w = np.empty(max(m // 2, 1), np.complex128)
    for k in range(m // 2):
        angle = -2.0 * math.pi * k / m
        w[k] = complex(math.cos(angle), math.sin(angle))
    return w


@njit(**_OPTIONS)
def _radix2(x, w):
    """In-place forward DFT of ``x`` (length a power of two) with twiddles ``w``."""
    m = x.shape[0]
    j = 0
    for i in range(1, m):  # bit-reversal permutation
        bit = m >> 1
        while j & bit:
            j ^= bit
            bit >>= 1
        j |= bit
        if i < j:
            x[i], x[j] = x[j], x[i]
    size = 2
    while size <= m:
        half = size // 2
        step = m // size
        for start in range(0, m, size):
            for k in range(half):
                t = w[k * step] * x[start + k + half]
                u = x[start + k]
                x[start + k] = u + t
                x[start + k + half] = u - t
        size *= 2




@njit(**_OPTIONS)
def _plan(n):
    """(m, twiddles of m, chirp, transform of the conjugate chirp): m == n for a power of
    two (chirp unused), else Bluestein's power of two >= 2n - 1."""
    if n & (n - 1) == 0:
        return n, _twiddles(n), np.zeros(1, np.complex128), np.zeros(1, np.complex128)
    m = 1
    while m < 2 * n - 1:
        m *= 2
    w = _twiddles(m)
    chirp = np.empty(n, np.complex128)
    for k in range(n):
        # exp(-i pi k^2 / n), with k^2 reduced mod 2n so the angle stays exact
        angle = -math.pi * ((k * k) % (2 * n)) / n
        chirp[k] = complex(math.cos(angle), math.sin(angle))
    kernel = np.zeros(m, np.complex128)
    kernel[0] = 1.0
    for k in range(1, n):
        kernel[k] = chirp[k].conjugate()
        kernel[m - k] = chirp[k].conjugate()
    _radix2(kernel, w)
    return m, w, chirp, kernel


@njit(**_OPTIONS)
def _dft(x, n, m, w, chirp, kernel, work):
    """The forward DFT of ``x`` (length n) in place; ``work`` has length m."""
    if m == n:
        _radix2(x, w)
        return
    work[:] = 0.0
    for k in range(n):
        work[k] = x[k] * chirp[k]
    _radix2(work, w)
    for k in range(m):  # the inverse transform of the product, by conjugation
        work[k] = (work[k] * kernel[k]).conjugate()
    _radix2(work, w)
    for k in range(n):
        x[k] = work[k].conjugate() / m * chirp[k]


@njit(**_OPTIONS)
def _scale(n, norm, inverse):
    if norm == 1:
        return 1.0 / math.sqrt(n)
    if (norm == 0) == inverse:  # backward's inverse, forward's forward
        return 1.0 / n
    return 1.0


@njit(**_OPTIONS)
def _length(x, n, kind):
    """The transform length: n, or the default from the input's last axis."""
    if n >= 0:
        return n
    return 2 * (x.shape[1] - 1) if kind == 3 else x.shape[1]


@njit(**_OPTIONS)
def fft_rows(x, n, kind, norm, dtype):
    """fft (kind 0) or ifft (1) of each row of a 2-D array; complex ``dtype`` out."""
    n = _length(x, n, kind)
    if n < 1:
        raise ValueError("invalid number of data points")
    rows = x.shape[0]
    out = np.empty((rows, n), dtype)
    m, w, chirp, kernel = _plan(n)
    buf = np.empty(n, np.complex128)
    work = np.empty(m, np.complex128)
    inverse = kind == 1
    scale = _scale(n, norm, inverse)
    used = min(n, x.shape[1])
    for r in range(rows):
        buf[:] = 0.0
        for k in range(used):
            v = complex(x[r, k])
            buf[k] = v.conjugate() if inverse else v
        _dft(buf, n, m, w, chirp, kernel, work)
        for k in range(n):
            v = buf[k] * scale
            out[r, k] = v.conjugate() if inverse else v
    return out


@njit(**_OPTIONS)
def rfft_rows(x, n, norm, dtype):
    """rfft of each row of a real 2-D array: the first n // 2 + 1 bins of its fft."""
    n = _length(x, n, 2)
    if n < 1:
        raise ValueError("invalid number of data points")
    rows = x.shape[0]
    half = n // 2 + 1
    out = np.empty((rows, half), dtype)
    m, w, chirp, kernel = _plan(n)
    buf = np.empty(n, np.complex128)
    work = np.empty(m, np.complex128)
    scale = _scale(n, norm, False)
    used = min(n, x.shape[1])
    for r in range(rows):
        buf[:] = 0.0
        for k in range(used):
            buf[k] = float(x[r, k])
        _dft(buf, n, m, w, chirp, kernel, work)
        for k in range(half):
            out[r, k] = buf[k] * scale
    return out


@njit(**_OPTIONS)
def irfft_rows(x, n, norm, dtype):
    """irfft of each row: its first n // 2 + 1 bins extended to the Hermitian spectrum of
    length n, inverse transformed, real part (as NumPy, the imaginary parts of bin 0 and,
    for even n, of bin n / 2 are ignored)."""
    n = _length(x, n, 3)
    if n < 1:
        raise ValueError("invalid number of data points")
    rows = x.shape[0]
    half = n // 2 + 1
    out = np.empty((rows, n), dtype)
    m, w, chirp, kernel = _plan(n)
    buf = np.empty(n, np.complex128)
    work = np.empty(m, np.complex128)
    scale = _scale(n, norm, True)
    used = min(half, x.shape[1])
    for r in range(rows):
        buf[:] = 0.0
        for k in range(used):
            buf[k] = complex(x[r, k])
        for k in range(1, (n + 1) // 2):  # the bins above n / 2: conjugates
            buf[n - k] = buf[k].conjugate()
        for k in range(n):  # inverse by conjugation
            buf[k] = buf[k].conjugate()
        _dft(buf, n, m, w, chirp, kernel, work)
        for k in range(n):
            out[r, k] = buf[k].real * scale  # the conjugate's real part is the same
    return out
