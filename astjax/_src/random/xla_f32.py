"""XLA's float32 log, log1p, exp, erf and erfinv on CPU, one function each for NumPy arrays
and for Numba scalars (as ``threefry_hash.py``): the python backend runs them on arrays
(``ops/bits.py``'s xla_* ops), generated Numba code calls them compiled once per element
(``backends/numba_cpu/random_kernels.py``), cached on disk. Inlined into the user's function
as array code, each was 20-40 ops that Numba typed again at every call site: ``jit`` of
``random.gamma`` took 28 s to compile.

The algorithms are XLA's (Eigen's ``plog``/``pexp``, Cephes' log1p rational function,
``EmitErfF32``, Giles' erfinv as ``ErfInv32``), read from the LLVM IR that jaxlib 0.10.2
generates, with its fused multiply-adds and its flushing of subnormal inputs and results
to zero (``random/special.py`` says more). Every constant is a float32 (a Python float would
make Numba compute in float64). The helpers below are NumPy's versions; Numba's, for
scalars, are registered by random_kernels.py."""
import numpy as np

f32 = np.float32


def select(c, a, b):
    return np.where(c, a, b)


def fma(x, y, z):
    """x * y + z of float32 values, rounded once (``llvm.fma`` in Numba)."""
    from ..ops.bits import _fma  # bits.py defines the ops on this module
    return _fma(x, y, z)


def frexp(x):
    m, e = np.frexp(x)
    return m, np.int32(e)


def pow2(n):
    """2.0 ** n as a float32, for an int32 n in [-126, 127]."""
    return np.ldexp(f32(1.0), n).astype(np.float32)


def _bits(b):
    return np.array([b], np.uint32).view(np.float32)[0]


_TINY = _bits(0x00800000)  # the smallest normal float32
# plog: Cephes' polynomial on [sqrt(1/2) - 1, sqrt(2) - 1]
_LOG_P = tuple(_bits(b) for b in (0x3D9021BB, 0xBDEBD1B8, 0x3DEF251A, 0xBDFE5D4F, 0x3E11E9BF,
                                  0xBE2AAE50, 0x3E4CCEAC, 0xBE7FFFFC, 0x3EAAAAAA))
_LOG_Q1 = _bits(0xB95E8083)   # ln 2 = Q2 - Q1 (split for an exact e * Q2)
_LOG_Q2 = _bits(0x3F318000)
_SQRT_HALF = _bits(0x3F3504F3)
# log1p for |x| < sqrt(2) - 1: x - x^2/2 + x^3 P(x) / Q(x)
_LOG1P_SMALL = _bits(0x3ED413CD)
_LOG1P_Q = tuple(_bits(b) for b in (0x417101AD, 0x42A6185B, 0x435DC32D, 0x439A8CA3, 0x43586D8A,
                                    0x42707982))
_LOG1P_P = (f32(4.527e-05),) + tuple(_bits(b) for b in (0x3EFF40C5, 0x40D284FA, 0x41EF4B9C,
                                                        0x4273CC76, 0x426473AD, 0x41A05101))
# pexp: exp(r) on |r| <= ln(2)/2
_EXP_LOG2E = _bits(0x3FB8AA3B)
_EXP_P = tuple(_bits(b) for b in (0x39506967, 0x3AB743CE, 0x3C088908, 0x3D2AA9C1, 0x3E2AAAAA))
# erf: odd / even polynomials in x^2, highest degree first
_ERF_P = tuple(f32(c) for c in (0.00022905065861350646, 0.0034082910107109506,
                                0.050955695062380861, 0.18520832239976145, 1.128379143519084))
_ERF_Q = tuple(f32(c) for c in (-1.1791602954361697e-7, 0.000023547966471313185,
                                0.0010179625278914885, 0.014070470171167667,
                                0.11098505178285362, 0.49746925110067538, 1.0))
# erfinv: Giles' two polynomials (w < 5, w >= 5), highest degree first
_ERFINV_LT = tuple(f32(c) for c in (2.81022636e-08, 3.43273939e-07, -3.5233877e-06,
                                    -4.39150654e-06, 0.00021858087, -0.00125372503,
                                    -0.00417768164, 0.246640727, 1.50140941))
_ERFINV_GE = tuple(f32(c) for c in (-0.000200214257, 0.000100950558, 0.00134934322,
                                    -0.00367342844, 0.00573950773, -0.0076224613,
                                    0.00943887047, 1.00167406, 2.83297682))
_ZERO, _HALF, _ONE = f32(0.0), f32(0.5), f32(1.0)
_INF = f32(np.inf)
_NAN = f32(np.nan)


def _daz(x):
    """XLA's CPU code reads subnormal float32 inputs as (signed) zero, and flushes subnormal
    results to zero."""
    return select(abs(x) < _TINY, x * _ZERO, x)


def log32(x):
    x = _daz(x)
    m, e = frexp(select(x > _TINY, x, _TINY))
    small = m < _SQRT_HALF
    x1 = (m - _ONE) + select(small, m, _ZERO)
    e = f32(e) - select(small, _ONE, _ZERO)
    x2 = x1 * x1
    x3 = x2 * x1
    y = fma(x1, _LOG_P[0], _LOG_P[1])
    y1 = fma(x1, _LOG_P[3], _LOG_P[4])
    y2 = fma(x1, _LOG_P[6], _LOG_P[7])
    y = fma(y, x1, _LOG_P[2])
    y1 = fma(y1, x1, _LOG_P[5])
    y2 = fma(y2, x1, _LOG_P[8])
    y = fma(y, x3, y1)
    y = fma(y, x3, y2)
    y = fma(y, x3, e * _LOG_Q1)
    r = fma(e, _LOG_Q2, fma(f32(-0.5), x2, x1) + y)
    r = select(x == _INF, _INF, r)
    r = select((x < _ZERO) | np.isnan(x), _NAN, r)
    return select(x == _ZERO, -_INF, r)


def log1p32(x):
    x = _daz(x)
    big = log32(x + _ONE)
    z = x * _ZERO
    den = z + _ONE
    for c in _LOG1P_Q:
        den = fma(den, x, c)
    num = z + _LOG1P_P[0]
    for c in _LOG1P_P[1:]:
        num = fma(num, x, c)
    x2 = x * x
    small = x + fma(x2, f32(-0.5), (x * x2) * (num / den))
    return select(abs(x) < _LOG1P_SMALL, small, big)


def exp32(x):
    x = _daz(x)
    xc = select(x < f32(-87.8), f32(-87.8), select(x > f32(88.8), f32(88.8), x))
    n = np.floor(fma(xc, _EXP_LOG2E, _HALF))
    n = select(n < f32(-127.0), f32(-127.0), select(n > f32(127.0), f32(127.0), n))
    r = fma(-_LOG_Q2, n, xc)
    r = fma(-_LOG_Q1, n, r)
    p = fma(r, _EXP_P[0], _EXP_P[1])
    for c in _EXP_P[2:] + (_HALF,):
        p = fma(p, r, c)
    p = _ONE + fma(p, r * r, r)
    lowest = n == f32(-127.0)
    whole = np.int32(select(np.isnan(n) | lowest, _ZERO, n))
    return _daz(p * select(lowest, _ZERO, pow2(whole)))


def erf32(x):
    """XLA's EmitErfF32: an odd/even rational function, 1 in magnitude beyond 3.8325."""
    x = _daz(x)
    clamp = abs(x) >= f32(3.832506856900711)
    sign = select(x < _ZERO, -_ONE, _ONE)
    x = select(x < f32(-4.0), f32(-4.0), select(x > f32(4.0), f32(4.0), x))  # no inf / inf
    x2 = x * x
    p = fma(x2, _ERF_P[0], _ERF_P[1])
    for c in _ERF_P[2:]:
        p = fma(x2, p, c)
    p = x * p
    q = fma(x2, _ERF_Q[0], _ERF_Q[1])
    for c in _ERF_Q[2:]:
        q = fma(x2, q, c)
    return select(clamp, sign, p / q)


def erfinv32(x):
    x = _daz(x)
    w = -log1p32(-x * x)
    lt = w < f32(5.0)
    w = select(lt, w - f32(2.5), np.sqrt(w) - f32(3.0))
    p = select(lt, _ERFINV_LT[0], _ERFINV_GE[0])
    for i in range(1, len(_ERFINV_LT)):
        p = fma(p, w, select(lt, _ERFINV_LT[i], _ERFINV_GE[i]))
    inf = select(x > _ZERO, _INF, -_INF)
    return select(abs(x) == _ONE, inf, _daz(p * x))
