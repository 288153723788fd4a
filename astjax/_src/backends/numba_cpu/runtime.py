"""Helpers that generated Numba modules call; compiled once and cached on disk.

Kept small and generic: the generated code does the heavy lifting in fused
loops, these only cover shape bookkeeping, NaN-aware scalar combinators and the
products of ``parallel=True`` code split over Numba's threads.
"""
import numpy as np
from numba import njit, prange, types
from numba.core.imputils import impl_ret_borrowed
from numba.extending import intrinsic, overload

from .special_kernels import (betainc, digamma, igamma, igammac,  # noqa: F401 (ops/special.py)
                              polygamma, random_gamma_grad)
from .random_kernels import (threefry2x32, xla_erf32, xla_erfinv32, xla_exp32,  # noqa: F401
                             xla_log1p32, xla_log32)  # (ops/bits.py)
from .fft_kernels import fft_rows, irfft_rows, rfft_rows  # noqa: F401  (ops/fft.py)
from .linalg_kernels import (cholesky_stack, det_stack, eig_stack, eigh_stack,  # noqa: F401
                             qr_stack, slogdet_stack, solve_stack, svd_stack)

_OPTIONS = dict(cache=True, error_model="numpy")
# multiply-adds below which a product runs on the calling thread: 2**22 take about 0.1 ms
_THREADED_PRODUCT = 1 << 22


class RuntimeBroadcast(ValueError):
    """Raised by generated code when operands' sizes differ at run time: either a size-1
    dimension the types did not know about (NumPy would broadcast it) or a real mismatch.
    The caller reruns the call on the python backend, which does what NumPy does."""


class BroadcastAfterDonation(ValueError):
    """Sizes differ at run time after a donated argument's buffer was overwritten: the
    call cannot rerun on the python backend, so the user sees this error."""


# Numba compiles its own np.empty, np.dot, ... again into every function that calls them,
# in every process: about 2 of the 4 s a new jit(grad(MLP)) took to compile. Generated code
# calls these cached wrappers instead, which compile once per signature and then load
# from disk (LLVM still inlines them: a cached library keeps its bitcode for callers).

def _one_version_per(convert):
    """A cached helper whose calls from generated code compile one version per
    ``convert``-ed argument types (the call site casts its arguments to them)."""
    def decorate(py_func):
        dispatcher = njit(**_OPTIONS)(py_func)
        get_call_template = dispatcher.get_call_template
        dispatcher.get_call_template = lambda args, kws: get_call_template(
            convert(tuple(args)), kws)
        return dispatcher
    return decorate


def _unliteral(args):
    return tuple(types.unliteral(t) for t in args)


def _matrices_of_any_layout(args):
    """Two float matrices of one dtype as of any layout (_gemm reads it at run time)."""
    if all(isinstance(t, types.Array) and t.ndim == 2 and t.dtype in _BLAS_TYPES
           for t in args) and len({t.dtype for t in args}) == 1:
        return tuple(t.copy(layout="A") for t in args)
    return _unliteral(args)


_BLAS_TYPES = (types.float32, types.float64, types.complex64, types.complex128)


# A shape (n, 1) types as (int64, Literal[int](1)): without unliteral it compiled a version
# of its own, 0.2-0.3 s each on a cold cache.
@_one_version_per(_unliteral)
def empty(shape, dtype):
    return np.empty(shape, dtype)


@_one_version_per(_unliteral)
def zeros(shape, dtype):
    return np.zeros(shape, dtype)


@_one_version_per(_unliteral)
def full(shape, value):
    return np.full(shape, value)


# One version per dtype, not per pair of layouts (the MLP's gradient had three).
@_one_version_per(_matrices_of_any_layout)
def dot(a, b):
    return _product(a, b)


def _product(a, b):
    """np.dot(a, b); a product of float matrices calls BLAS's gemm itself.
    Numba's np.dot compiles its gemm call again for each pair of layouts (0.5-0.9 s each,
    three for the MLP's gradient); this compiles once per dtype and is cached."""


@overload(_product)
def _product_of(a, b):
    if isinstance(a, types.Array) and isinstance(b, types.Array) and a.ndim == b.ndim == 2 \
            and a.dtype == b.dtype and a.dtype in _BLAS_TYPES:
        kind = np.int8(_KIND[np.dtype(str(a.dtype))])
        return lambda a, b: _gemm(kind, _any_layout(a), _any_layout(b))
    # a strided operand (layout 'A': a vector sliced with a step) is copied first, as np.dot
    # would, and Numba does not print its NumbaPerformanceWarning at the user's call
    strided = [isinstance(t, types.Array) and t.layout == "A" for t in (a, b)]
    if strided == [True, True]:
        return lambda a, b: np.dot(np.ascontiguousarray(a), np.ascontiguousarray(b))
    if strided[0]:
        return lambda a, b: np.dot(np.ascontiguousarray(a), b)
    if strided[1]:
        return lambda a, b: np.dot(a, np.ascontiguousarray(b))
    return lambda a, b: np.dot(a, b)


_xxgemm = types.ExternalFunction("numba_xxgemm", types.intc(
    types.char, types.char, types.char, types.intp, types.intp, types.intp,  # kind, trans, m n k
    types.voidptr, types.voidptr, types.intp, types.voidptr, types.intp,  # alpha, a, lda, b, ldb
    types.voidptr, types.voidptr, types.intp))  # beta, c, ldc
_KIND = {np.dtype(np.float32): ord("s"), np.dtype(np.float64): ord("d"),
         np.dtype(np.complex64): ord("c"), np.dtype(np.complex128): ord("z")}
_AS_IS, _TRANSPOSED = np.int8(ord("n")), np.int8(ord("t"))


@intrinsic
def _address(typingctx, arr):
    """The data pointer of array ``arr``."""
    def codegen(context, builder, sig, args):
        data = context.make_array(sig.args[0])(context, builder, args[0]).data
        return builder.bitcast(data, context.get_value_type(types.voidptr))
    return types.voidptr(arr), codegen


@intrinsic
def _any_layout(typingctx, arr):
    """``arr`` typed as of any layout (the same data): _gemm compiles once per dtype and
    reads the layout at run time."""
    def codegen(context, builder, sig, args):
        return impl_ret_borrowed(context, builder, sig.return_type, args[0])
    return arr.copy(layout="A")(arr), codegen


@njit(**_OPTIONS)
def _gemm(kind, a, b):
    """a @ b: gemm on the column-major views, out^T = b^T a^T (a C-ordered matrix is its
    transpose in column-major order); a matrix in neither order is copied first."""
    if not (a.flags.c_contiguous or a.flags.f_contiguous):
        a = _any_layout(np.ascontiguousarray(a))
    if not (b.flags.c_contiguous or b.flags.f_contiguous):
        b = _any_layout(np.ascontiguousarray(b))
    m, k = a.shape
    n = b.shape[1]
    if b.shape[0] != k:
        raise ValueError("dot: the matrices' inner sizes differ")
    out = np.empty((m, n), a.dtype)
    if k == 0:
        for i in range(m):
            for j in range(n):
                out[i, j] = 0
    if m == 0 or n == 0 or k == 0:
        return out
    a_c, b_c = a.flags.c_contiguous, b.flags.c_contiguous
    scalars = np.empty(2, a.dtype)  # alpha = 1, beta = 0
    scalars[0], scalars[1] = 1, 0
    status = _xxgemm(kind, _AS_IS if b_c else _TRANSPOSED, _AS_IS if a_c else _TRANSPOSED,
                     n, m, k, _address(scalars), _address(b), n if b_c else k,
                     _address(a), k if a_c else m, _address(scalars[1:]), _address(out), n)
    if status != 0:
        raise RuntimeError("BLAS gemm failed")
    return out


@njit(**_OPTIONS)
def dot_into(a, b, out):
    np.dot(a, b, out)


@njit(**_OPTIONS)
def ascontiguousarray(a):
    return np.ascontiguousarray(a)


@njit(**_OPTIONS)
def transpose(a, axes):
    return np.transpose(a, axes)


@njit(**_OPTIONS)
def bcast_to(x, shape):
    """``x`` itself when it already has ``shape``, else a broadcast copy (broadcast_to)."""
    if x.shape == shape:
        return x
    return np.broadcast_to(x, shape).copy()


@njit(inline="always", **_OPTIONS)
def maximum(a, b):
    """NumPy's maximum: NaN wins; of -0. and 0., 0. as in JAX. (A 1M-element relu loop
    ran as fast as with the one-select version, 0.23 ms.)"""
    if a > b or a != a:
        return a
    if b > a or b != b:
        return b
    return b if np.signbit(a) else a


@njit(inline="always", **_OPTIONS)
def minimum(a, b):
    """NumPy's minimum: NaN wins; of -0. and 0., -0. as in JAX."""
    if a < b or a != a:
        return a
    if b < a or b != b:
        return b
    return a if np.signbit(a) else b


@njit(inline="always", **_OPTIONS)
def float_remainder(a, b):
    """JAX's float remainder (ops/elementwise._remainder): fmod moved to b's sign when it
    is not zero; Python's % gives a zero b's sign."""
    m = np.fmod(a, b)
    if m != 0 and (m < 0) != (b < 0):
        return m + b
    return m


@njit(inline="always", **_OPTIONS)
def float_floor_divide(a, b, one):
    """JAX's float floor division (ops/elementwise._floor_divide), ``one`` of a's type."""
    m = np.fmod(a, b)
    d = (a if b == 0 else a - m) / b
    if m != 0 and np.sign(b) != np.sign(m):
        d = d - one
    r = np.trunc(d)
    if abs(d - r) >= one / (one + one):
        r = r + np.sign(d)
    return r


@njit(inline="always", **_OPTIONS)
def float_to_int(x, to, lo, hi):
    """Float ``x`` as integer type ``to`` (range ``[lo, hi]``), as JAX converts: NaN gives 0,
    values beyond the range its nearest bound (a plain cast is undefined there)."""
    if x != x:
        return to(0)
    if x >= hi:
        return to(hi)
    if x <= lo:
        return to(lo)
    return to(x)


@njit(**_OPTIONS)
def floats_to_ints(x, to, lo, hi):
    """``float_to_int`` of each element of array ``x``."""
    out = np.empty(x.shape, to)
    flat, values = out.reshape(-1), np.ascontiguousarray(x).reshape(-1)
    for i in range(values.size):
        flat[i] = float_to_int(values[i], to, lo, hi)
    return out


@njit(**_OPTIONS)
def argsort_complex(a):
    """The stable order of the 1-D complex ``a`` by real part, then imaginary part (NaNs
    last, as NumPy and JAX): a stable sort by the imaginary part, then by the real part."""
    order = np.argsort(a.imag, kind="mergesort")
    return order[np.argsort(a.real[order], kind="mergesort")]


@njit(**_OPTIONS)
def empty_reduction(name):
    raise ValueError(name)


@njit(**_OPTIONS)
def grow(buf, needed=0):
    """A tape array at least twice as long (and ``needed`` long), holding ``buf``'s
    contents."""
    out = np.empty(max(2 * buf.shape[0], needed), buf.dtype)
    out[:buf.shape[0]] = buf
    return out


@njit(parallel=True, nogil=True, **_OPTIONS)
def dot_on_threads(a, b, chunks):
    """``np.dot`` of a matrix and a matrix or vector, its rows split in ``chunks`` (the
    thread count: each chunk packs ``b`` again) over Numba's threads, each a one-thread
    BLAS call. So ``parallel=True`` code runs its loops and its products on one pool of
    threads (runtime/blas.py). (``numba.get_num_threads()`` here would stop the callers
    from being cached.)"""
    m = a.shape[0]
    out = np.empty((m,) + b.shape[1:], a.dtype)
    if m < chunks or out.size * a.shape[1] < _THREADED_PRODUCT:
        np.dot(a, b, out)
        return out
    for c in prange(chunks):
        np.dot(_rows(a, c * m // chunks, (c + 1) * m // chunks), b,
               out[c * m // chunks:(c + 1) * m // chunks])
    return out


def _rows(a, start, stop):
    """``a[start:stop]``, contiguous for BLAS: copied unless ``a`` is C-contiguous."""


@overload(_rows)
def _rows_of(a, start, stop):
    if a.layout == "C":
        return lambda a, start, stop: a[start:stop]
    return lambda a, start, stop: np.ascontiguousarray(a[start:stop])


@njit(parallel=True, nogil=True, **_OPTIONS)
def batched_dot_on_threads(a, b, out):
    """``out[i] = np.dot(a[i], b[i])`` for each i, over Numba's threads when it is big."""
    if out.size * a.shape[-1] < _THREADED_PRODUCT:
        for i in range(a.shape[0]):
            np.dot(a[i], b[i], out[i])
    else:
        for i in prange(a.shape[0]):
            np.dot(a[i], b[i], out[i])


@njit(**_OPTIONS)
def variance_rows(x, n, denominator, root):
    """var (std if ``root``) of each row of ``x``; ``n`` and ``denominator`` (n - ddof) in
    x's dtype, so float32 stays float32; nan where the denominator is not positive."""
    out = np.empty(x.shape[0], x.dtype)
    for i in range(x.shape[0]):
        mean = np.sum(x[i]) / n
        total = np.sum((x[i] - mean) ** 2)
        value = total / denominator if denominator > 0 else np.nan
        out[i] = np.sqrt(value) if root else value
    return out
