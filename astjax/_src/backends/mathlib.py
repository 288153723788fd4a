"""Vectorizable float32/float64 scalar math kernels for Numba-compiled loops.

Generated ``numba-cpu`` code calls these from fused elementwise loops::

    from astjax._src.backends import mathlib as _ml

    @numba.njit(cache=True)
    def kernel(x, out):
        for i0 in range(x.shape[0]):
            out[i0] = np.float32(1.05) * (x[i0] if x[i0] > 0 else
                                          np.float32(1.67) * _ml.exp(x[i0]) - np.float32(1.67))

libm calls (``np.exp``/``math.exp`` inside ``njit``) are opaque to LLVM, so a
loop containing one stays scalar.  These kernels are plain arithmetic (range
reduction, a polynomial, exponent manipulation through integer bit operations)
without branches: every special case is a select.  Each kernel and helper is
compiled with ``forceinline`` (LLVM ``alwaysinline``), so the whole call tree
lands in the caller's loop and the loop vectorizer turns it into
``<8 x float>`` / ``<4 x double>`` code on AVX2.  Neither the kernels nor the
caller need ``fastmath``; float32 kernels compute in float32 throughout (no
``fpext``), so float32 loops keep 8 lanes.

API (callable from ``@njit`` code; one name per function, dispatching on type)::

    exp(x)  log(x)  log1p(x)  expm1(x)  tanh(x)  logistic(x)  sin(x)  cos(x)
    power(x, y)

* float32 in -> float32 out, float64 in -> float64 out.  Integer and boolean
  arguments are converted to float64 (as NumPy does).
* ``power(x, y)``: both float32 -> float32, both float64 -> float64; a float
  with an integer gives the float's type (JAX's weak typing of Python
  scalars); float32 with float64 gives float64.
* ``logistic(x) = 1 / (1 + exp(-x))`` (``jax.nn.sigmoid``), computed as
  ``e/(1+e)`` with ``e = exp(-|x|)`` for negative x: no overflow, no NaN, and
  denormal results for very negative x.
* Called from plain Python the functions evaluate with NumPy (no warnings);
  that is for tests and the python backend, not what compiled code runs.
* ``CACHE_KEY`` changes whenever this file changes.  Numba's on-disk cache of
  a generated module does not notice changes to inlined callees, so include it
  in the cache key of generated code.

Every function vectorizes; none calls libm but sin/cos for huge arguments (below).
Maximum error in ulps of the
exact result: float32 exhaustively over every input of both signs from
2**-30 (2**-40 for log1p/tanh) up to where the result saturates (log: all
denormals and the binades [2**-2, 2**3) and [2**100, max]); float64 over
2e7-3e7 random inputs against long double.  tests/test_mathlib.py asserts
these bounds on fresh samples and at most 4 ulps from NumPy on the same
dtype::

    function   float32   float64
    exp        0.99      0.98
    log        0.84      0.86
    log1p      0.84      0.83
    expm1      1.06      1.14
    tanh       1.65      1.51
    logistic   2.40      2.33
    sin        1.71      1.49    for |x| <= TRIG_BOUND_F32 = TRIG_BOUND_F64 = 2**48
    cos        1.81      1.48    (beyond: libm's, as NumPy's to within 4 ulps)
    power      0.76      0.76    (random samples: generic, |y| up to 5e4 near x = 1,
                                  negative x with integer y, results near overflow
                                  and in the denormal range)

NaN, +-inf, signed zeros, overflow to inf, gradual underflow into denormals
(``exp(-100f) == 3.7e-44``) and the C99 special cases of ``pow`` follow
NumPy.  Denormal inputs are handled exactly (no flush to zero).  NumPy's own
float32 ``exp``/``log`` are up to ~2.4/3.4 ulps off near the denormal range,
so differences from NumPy there are NumPy's.

sin/cos reduce x by multiples of pi/2 with an FMA-based Cody-Waite chain
in float64 (pi/2 to 159 bits; float32 inputs are converted, which costs 1.4x
the float32 chain that was accurate to 2**20 only), plus, for float64, one
correction step. Beyond the bounds (and for +-inf, giving NaN) libm's sin/cos
(Payne-Hanek) give the result: each kernel ends in a call to a function with
vector variants that the loop vectorizer calls with whole vectors, and that
return at once unless a lane is huge (see ``_libm_variants``). A plain branch
to libm stopped the vectorizer (the loop ran 5-8x slower), and a vectorized
Payne-Hanek reduction for every element would double the cost; the call costs
about 5-10% of a loop of sin, and benchmarks/jit.py's sin loop 1.1-1.2x.

Implementation notes:

* ``llvm.fma`` is used where an exact product is needed (trig reduction,
  double-word arithmetic in ``power``).  It is IEEE arithmetic, not a fastmath
  relaxation; on a CPU without FMA hardware LLVM lowers it to libm ``fma``,
  which is exact but slow and not vectorized.  Polynomials use
  ``llvm.fmuladd`` (fused only where the target has FMA).
* Divisions go through a plain ``fdiv`` intrinsic, so Numba's
  ``error_model='python'`` zero-division check never enters the loop.
* Conversions to integers only ever see finite, clamped values (LLVM's
  ``fptosi`` of NaN or of an out-of-range value is poison).
* Algorithms: exp/expm1/power polynomials and the double-word log/exp of
  ``power`` follow SLEEF; log/log1p follow fdlibm/musl; the sin/cos kernels
  on [-pi/4, pi/4] are fdlibm (float64) and Cephes (float32).
"""
import hashlib
from fractions import Fraction

import numba
import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic, overload, register_jitable

__all__ = ["exp", "log", "log1p", "expm1", "tanh", "logistic", "sin", "cos", "power",
           "fma", "frexp", "TRIG_BOUND_F32", "TRIG_BOUND_F64", "CACHE_KEY"]

with open(__file__, "rb") as _src:
    CACHE_KEY = hashlib.sha256(_src.read()).hexdigest()[:16]

f32 = np.float32
f64 = np.float64

# Every kernel and helper is marked LLVM ``alwaysinline``: the loop vectorizer
# only sees straight-line code if the whole call tree is inlined into the
# caller's loop, and LLVM's own inliner gives up on the larger kernels (power).
# The kernels generated code calls (``_kernel``) are cached dispatchers: compiled once, then
# loaded from disk in every process (a cached library keeps its bitcode, so callers still
# inline and vectorize them). As register_jitable functions they were compiled again in
# each process (0.9 of 1.8 s CPU for a new function calling six kernels); their helpers
# (``_jitable``) stay register_jitable, compiled into each kernel: as cached dispatchers of
# their own they made the first compile 0.15 s slower still.
_JIT_OPTIONS = {"forceinline": True}
_jitable = register_jitable(**_JIT_OPTIONS)
_kernel = numba.njit(cache=True, **_JIT_OPTIONS)

# ---------------------------------------------------------------------------
# LLVM-level helpers
# ---------------------------------------------------------------------------


def _llvm_fn(builder, name, ret, args):
    return cgutils.get_or_insert_function(builder.module, ir.FunctionType(ret, args), name)


def _sfx(ty):
    return "f32" if ty == types.float32 else "f64"


def _is_float(*tys):
    return all(isinstance(t, types.Float) and t in (types.float32, types.float64) for t in tys) \
        and all(t == tys[0] for t in tys)


@intrinsic
def _fma(typingctx, a, b, c):
    """a * b + c with a single rounding (llvm.fma)."""
    if not _is_float(a, b, c):
        return None

    def codegen(context, builder, sig, args):
        t = args[0].type
        return builder.call(_llvm_fn(builder, "llvm.fma." + _sfx(a), t, [t, t, t]), args)

    return a(a, b, c), codegen


@intrinsic
def _mla(typingctx, a, b, c):
    """a * b + c, fused if the target has FMA (llvm.fmuladd); for polynomials."""
    if not _is_float(a, b, c):
        return None

    def codegen(context, builder, sig, args):
        t = args[0].type
        return builder.call(_llvm_fn(builder, "llvm.fmuladd." + _sfx(a), t, [t, t, t]), args)

    return a(a, b, c), codegen


@intrinsic
def _where(typingctx, c, a, b):
    """Branch-free select: a if c else b (both evaluated)."""
    if not (isinstance(c, types.Boolean) and _is_float(a, b)):
        return None

    def codegen(context, builder, sig, args):
        return builder.select(args[0], args[1], args[2])

    return a(c, a, b), codegen


@intrinsic
def _div(typingctx, a, b):
    """IEEE a / b without Numba's ZeroDivisionError check."""
    if not _is_float(a, b):
        return None

    def codegen(context, builder, sig, args):
        return builder.fdiv(args[0], args[1])

    return a(a, b), codegen


def _unary_intrinsic(llvm_name):
    @intrinsic
    def _impl(typingctx, a):
        if not _is_float(a):
            return None

        def codegen(context, builder, sig, args):
            t = args[0].type
            return builder.call(_llvm_fn(builder, "llvm.%s.%s" % (llvm_name, _sfx(a)), t, [t]),
                                args)

        return a(a), codegen

    return _impl


_rint = _unary_intrinsic("rint")    # round half to even (vroundps/pd)
_floor = _unary_intrinsic("floor")
_fabs = _unary_intrinsic("fabs")


@intrinsic
def _copysign(typingctx, a, b):
    if not _is_float(a, b):
        return None

    def codegen(context, builder, sig, args):
        t = args[0].type
        return builder.call(_llvm_fn(builder, "llvm.copysign." + _sfx(a), t, [t, t]), args)

    return a(a, b), codegen


@intrinsic
def _pow2(typingctx, k):
    """2.0**k for a float k holding an integer in the normal exponent range."""
    if not _is_float(k):
        return None

    def codegen(context, builder, sig, args):
        ft = args[0].type
        i32 = ir.IntType(32)
        ki = builder.fptosi(args[0], i32)
        if k == types.float32:
            bits = builder.shl(builder.add(ki, ir.Constant(i32, 127)), ir.Constant(i32, 23))
        else:
            i64 = ir.IntType(64)
            bits = builder.shl(builder.sext(builder.add(ki, ir.Constant(i32, 1023)), i64),
                               ir.Constant(i64, 52))
        return builder.bitcast(bits, ft)

    return k(k), codegen


@intrinsic
def _split_sqrt2(typingctx, x):
    """(k, m) with x == 2**k * m and m in [sqrt(2)/2, sqrt(2)), for positive normal x.

    Garbage (but no poison) for zero, denormal, negative, inf or NaN input.
    """
    if not _is_float(x):
        return None
    rt = types.UniTuple(x, 2)

    def codegen(context, builder, sig, args):
        ft = args[0].type
        i32 = ir.IntType(32)
        if x == types.float32:
            it = i32
            ix = builder.bitcast(args[0], it)
            ix = builder.add(ix, ir.Constant(it, 0x3F800000 - 0x3F3504F3))
            k = builder.sub(builder.lshr(ix, ir.Constant(it, 23)), ir.Constant(it, 127))
            mbits = builder.add(builder.and_(ix, ir.Constant(it, 0x007FFFFF)),
                                ir.Constant(it, 0x3F3504F3))
        else:
            it = ir.IntType(64)
            ix = builder.bitcast(args[0], it)
            ix = builder.add(ix, ir.Constant(it, (0x3FF00000 - 0x3FE6A09E) << 32))
            k = builder.trunc(builder.lshr(ix, ir.Constant(it, 52)), i32)
            k = builder.sub(k, ir.Constant(i32, 1023))
            mbits = builder.add(builder.and_(ix, ir.Constant(it, 0x000FFFFFFFFFFFFF)),
                                ir.Constant(it, 0x3FE6A09E << 32))
        kf = builder.sitofp(k, ft)
        m = builder.bitcast(mbits, ft)
        return context.make_tuple(builder, sig.return_type, [kf, m])

    return rt(x), codegen


# ---------------------------------------------------------------------------
# constants
# ---------------------------------------------------------------------------

_PI_STR = ("3.14159265358979323846264338327950288419716939937510582097494459230781640628620"
           "8998628034825342117067982148086513282306647093844609550582231725359408128481")
_PIO2 = Fraction(_PI_STR) / 2


def _split(value, dtype, n):
    """value as a sum of n dtype numbers, each the rounded remainder of the previous ones."""
    parts = []
    rem = value
    for _ in range(n):
        p = dtype(float(rem))
        parts.append(p)
        rem -= Fraction(float(p))
    return parts


_PIO2_F64 = _split(_PIO2, f64, 3)
_PIO2A_F64, _PIO2B_F64, _PIO2C_F64 = [float(v) for v in _PIO2_F64]
_2OPI = float(1 / _PIO2)

# sin/cos are accurate to a few ulps for |x| up to these bounds (module docstring).
TRIG_BOUND_F32 = 2.0 ** 48
TRIG_BOUND_F64 = 2.0 ** 48

_NAN = float("nan")
_INF = float("inf")

# ---------------------------------------------------------------------------
# exp
# ---------------------------------------------------------------------------


@_kernel
def _exp_f32(x):
    xc = _where(x > f32(-104.5), x, f32(-104.5))          # NaN -> -104.5 (fixed below)
    xc = _where(xc < f32(89.0), xc, f32(89.0))
    k = _rint(xc * f32(1.44269504088896341))
    r = _mla(k, f32(-0.693145751953125), xc)               # k * ln2_hi is exact
    r = _mla(k, f32(-1.428606765330187045e-06), r)
    u = f32(0.000198527617612853646278381)
    u = _mla(u, r, f32(0.00139304355252534151077271))
    u = _mla(u, r, f32(0.00833336077630519866943359))
    u = _mla(u, r, f32(0.0416664853692054748535156))
    u = _mla(u, r, f32(0.166666671633720397949219))
    u = _mla(u, r, f32(0.5))
    u = f32(1.0) + _mla(r * r, u, r)
    # 2**k in two normal factors: overflow to inf and rounding into denormals
    # both happen once, in the last multiplication.
    k1 = _rint(k * f32(0.5))
    y = u * _pow2(k1) * _pow2(k - k1)
    return _where(x == x, y, x)


@_jitable
def _exp_finish_f32(k, r, rl):
    """2**k * exp(r + rl) for |r| <= ln2/2, |rl| <~ ulp(r), to ~0.6 ulp.

    The more accurate (and 25% slower) variant of _exp_f32's tail, for power.
    """
    u = f32(0.000198527617612853646278381)
    u = _mla(u, r, f32(0.00139304355252534151077271))
    u = _mla(u, r, f32(0.00833336077630519866943359))
    u = _mla(u, r, f32(0.0416664853692054748535156))
    u = _mla(u, r, f32(0.166666671633720397949219))
    u = _mla(u, r, f32(0.5))
    # 1 + r + (r*r*u + rl*(1 + r)) with 1 + r in double-word arithmetic
    hi = f32(1.0) + r
    lo = (f32(1.0) - hi) + r
    u = hi + (lo + _mla(r * r, u, _mla(rl, r, rl)))
    # 2**k in two normal factors: overflow to inf and rounding into denormals
    # both happen once, in the last multiplication.
    k1 = _rint(k * f32(0.5))
    return u * _pow2(k1) * _pow2(k - k1)


@_kernel
def _exp_f64(x):
    xc = _where(x > f64(-746.0), x, f64(-746.0))
    xc = _where(xc < f64(710.0), xc, f64(710.0))
    k = _rint(xc * f64(1.4426950408889634074))
    r = _mla(k, f64(-6.93147180369123816490e-01), xc)
    r = _mla(k, f64(-1.90821492927058770002e-10), r)
    u = f64(0.2081276378237164457e-8)
    u = _mla(u, r, f64(0.2511210703042288022e-7))
    u = _mla(u, r, f64(0.2755762628169491192e-6))
    u = _mla(u, r, f64(0.2755723402025388239e-5))
    u = _mla(u, r, f64(0.2480158687479686264e-4))
    u = _mla(u, r, f64(0.1984126989855865850e-3))
    u = _mla(u, r, f64(0.1388888888914497797e-2))
    u = _mla(u, r, f64(0.8333333333314938210e-2))
    u = _mla(u, r, f64(0.4166666666666602598e-1))
    u = _mla(u, r, f64(0.1666666666666669072e+0))
    u = _mla(u, r, f64(0.5))
    u = f64(1.0) + _mla(r * r, u, r)
    k1 = _rint(k * f64(0.5))
    y = u * _pow2(k1) * _pow2(k - k1)
    return _where(x == x, y, x)


@_jitable
def _exp_finish_f64(k, r, rl):
    u = f64(0.2081276378237164457e-8)
    u = _mla(u, r, f64(0.2511210703042288022e-7))
    u = _mla(u, r, f64(0.2755762628169491192e-6))
    u = _mla(u, r, f64(0.2755723402025388239e-5))
    u = _mla(u, r, f64(0.2480158687479686264e-4))
    u = _mla(u, r, f64(0.1984126989855865850e-3))
    u = _mla(u, r, f64(0.1388888888914497797e-2))
    u = _mla(u, r, f64(0.8333333333314938210e-2))
    u = _mla(u, r, f64(0.4166666666666602598e-1))
    u = _mla(u, r, f64(0.1666666666666669072e+0))
    u = _mla(u, r, f64(0.5))
    hi = f64(1.0) + r
    lo = (f64(1.0) - hi) + r
    u = hi + (lo + _mla(r * r, u, _mla(rl, r, rl)))
    k1 = _rint(k * f64(0.5))
    return u * _pow2(k1) * _pow2(k - k1)


# ---------------------------------------------------------------------------
# expm1
# ---------------------------------------------------------------------------


@_jitable
def _expm1_finish(k1, k2, r, rl, t):
    """2**k * (1 + r + rl + t) - 1 for k = k1 + k2, r + rl = x - k*ln2, expm1(r) ~ r + t.

    With s1 = 2**k1 this is ((s1 - 2**-k2) + s1*r + s1*(rl + t)) * 2**k2, the
    first sum in double-word arithmetic (Fast2Sum: |s1 - 2**-k2| >= |s1*r|
    unless k == 0), which avoids the cancellation error of the plain formula
    near k = +-1.  Both scale factors are normal numbers, so overflow happens
    once, in the last multiplication.
    """
    s1 = _pow2(k1)
    a = s1 - _pow2(-k2)
    b = s1 * r
    hi = a + b
    lo = (a - hi) + b
    return (hi + _mla(s1, rl + t, lo)) * _pow2(k2)


@_kernel
def _expm1_f32(x):
    xc = _where(x > f32(-30.0), x, f32(-30.0))
    xc = _where(xc < f32(89.0), xc, f32(89.0))
    k = _rint(xc * f32(1.44269504088896341))
    r1 = _mla(k, f32(-0.693145751953125), xc)              # exact
    r = _mla(k, f32(-1.428606765330187045e-06), r1)
    u = f32(0.000198527617612853646278381)
    u = _mla(u, r, f32(0.00139304355252534151077271))
    u = _mla(u, r, f32(0.00833336077630519866943359))
    u = _mla(u, r, f32(0.0416664853692054748535156))
    u = _mla(u, r, f32(0.166666671633720397949219))
    u = _mla(u, r, f32(0.5))
    t = r * r * u                                           # expm1(r) = r + t
    rl = _mla(k, f32(-1.428606765330187045e-06), r1 - r)    # r1 - k*ln2_lo == r + rl
    k1 = _rint(k * f32(0.5))
    y = _expm1_finish(k1, k - k1, r, rl, t)
    y = _where(x == x, y, x)
    return _where(x == f32(0.0), x, y)


@_kernel
def _expm1_f64(x):
    xc = _where(x > f64(-40.0), x, f64(-40.0))
    xc = _where(xc < f64(710.0), xc, f64(710.0))
    k = _rint(xc * f64(1.4426950408889634074))
    r1 = _mla(k, f64(-6.93147180369123816490e-01), xc)
    r = _mla(k, f64(-1.90821492927058770002e-10), r1)
    u = f64(2.08860621107283687536341e-09)
    u = _mla(u, r, f64(2.51112930892876518610661e-08))
    u = _mla(u, r, f64(2.75573911234900471893338e-07))
    u = _mla(u, r, f64(2.75572362911928827629423e-06))
    u = _mla(u, r, f64(2.4801587159235472998791e-05))
    u = _mla(u, r, f64(0.000198412698960509205564975))
    u = _mla(u, r, f64(0.00138888888889774492207962))
    u = _mla(u, r, f64(0.00833333333331652721664984))
    u = _mla(u, r, f64(0.0416666666666665047591422))
    u = _mla(u, r, f64(0.166666666666666851703837))
    r2 = r * r
    t = _mla(r2 * r, u, r2 * f64(0.5))                      # expm1(r) = r + t
    rl = _mla(k, f64(-1.90821492927058770002e-10), r1 - r)
    k1 = _rint(k * f64(0.5))
    y = _expm1_finish(k1, k - k1, r, rl, t)
    y = _where(x == x, y, x)
    return _where(x == f64(0.0), x, y)


# ---------------------------------------------------------------------------
# log, log1p  (fdlibm/musl formulation: log(1+f) = f - hfsq + s*(hfsq+R))
# ---------------------------------------------------------------------------


@_jitable
def _log_core_f32(k, f, c):
    """log(2**k * (1 + f)) + c for f in [sqrt(2)/2 - 1, sqrt(2) - 1)."""
    s = _div(f, f32(2.0) + f)
    z = s * s
    w = z * z
    t1 = w * _mla(w, f32(0.24279078841), f32(0.40000972152))
    t2 = z * _mla(w, f32(0.28498786688), f32(0.66666662693))
    R = t2 + t1
    hfsq = f32(0.5) * f * f
    return s * (hfsq + R) + _mla(k, f32(9.0580006145e-06), c) - hfsq + f \
        + k * f32(6.9313812256e-01)


@_jitable
def _log_core_f64(k, f, c):
    s = _div(f, f64(2.0) + f)
    z = s * s
    w = z * z
    t1 = w * _mla(w, _mla(w, f64(1.531383769920937332e-01), f64(2.222219843214978396e-01)),
                  f64(3.999999999940941908e-01))
    t2 = z * _mla(w, _mla(w, _mla(w, f64(1.479819860511658591e-01),
                                  f64(1.818357216161805012e-01)),
                          f64(2.857142874366239149e-01)),
                  f64(6.666666666666735130e-01))
    R = t2 + t1
    hfsq = f64(0.5) * f * f
    return s * (hfsq + R) + _mla(k, f64(1.90821492927058770002e-10), c) - hfsq + f \
        + k * f64(6.93147180369123816490e-01)


@_kernel
def _log_f32(x):
    tiny = x < f32(1.17549435e-38)
    xs = _where(tiny, x * f32(8388608.0), x)                # denormals: scale by 2**23
    k, m = _split_sqrt2(xs)
    k = _where(tiny, k - f32(23.0), k)
    y = _log_core_f32(k, m - f32(1.0), f32(0.0))
    y = _where(x == f32(_INF), x, y)
    y = _where(x >= f32(0.0), y, f32(_NAN))                 # negative or NaN
    return _where(x == f32(0.0), f32(-_INF), y)


@_kernel
def _log_f64(x):
    tiny = x < f64(2.2250738585072014e-308)
    xs = _where(tiny, x * f64(18014398509481984.0), x)      # 2**54
    k, m = _split_sqrt2(xs)
    k = _where(tiny, k - f64(54.0), k)
    y = _log_core_f64(k, m - f64(1.0), f64(0.0))
    y = _where(x == f64(_INF), x, y)
    y = _where(x >= f64(0.0), y, f64(_NAN))
    return _where(x == f64(0.0), f64(-_INF), y)


@_kernel
def _log1p_f32(x):
    u = f32(1.0) + x
    k, m = _split_sqrt2(u)
    # log(1+x) - log(u) ~ c/u, with c the rounding error of u = 1 + x
    c = _where(k >= f32(2.0), f32(1.0) - (u - x), x - (u - f32(1.0)))
    c = _where(k < f32(25.0), _div(c, u), f32(0.0))
    f = m - f32(1.0)
    mid = (x < f32(0.41421354)) & (x > f32(-0.29289323))    # 1+x in [sqrt(2)/2, sqrt(2))
    f = _where(mid, x, f)
    c = _where(mid, f32(0.0), c)
    k = _where(mid, f32(0.0), k)
    y = _log_core_f32(k, f, c)
    y = _where(x == f32(_INF), x, y)
    y = _where(x >= f32(-1.0), y, f32(_NAN))
    y = _where(x == f32(-1.0), f32(-_INF), y)
    return _where(x == f32(0.0), x, y)


@_kernel
def _log1p_f64(x):
    u = f64(1.0) + x
    k, m = _split_sqrt2(u)
    c = _where(k >= f64(2.0), f64(1.0) - (u - x), x - (u - f64(1.0)))
    c = _where(k < f64(54.0), _div(c, u), f64(0.0))
    f = m - f64(1.0)
    mid = (x < f64(0.41421356237309503)) & (x > f64(-0.2928932188134524))
    f = _where(mid, x, f)
    c = _where(mid, f64(0.0), c)
    k = _where(mid, f64(0.0), k)
    y = _log_core_f64(k, f, c)
    y = _where(x == f64(_INF), x, y)
    y = _where(x >= f64(-1.0), y, f64(_NAN))
    y = _where(x == f64(-1.0), f64(-_INF), y)
    return _where(x == f64(0.0), x, y)


# ---------------------------------------------------------------------------
# tanh, logistic
# ---------------------------------------------------------------------------


@_kernel
def _tanh_f32(x):
    a = _fabs(x)
    a = _where(a < f32(10.0), a, f32(10.0))                 # tanh(10) == 1 in float32
    e = _expm1_f32(a + a)
    y = _div(e, e + f32(2.0))
    # y = h/(1+h) with h = e/2 is the fixed point of y = h - h*y; one such step
    # removes most of the division's rounding error when h is small.
    h = f32(0.5) * e
    y = _where(a < f32(0.5), _fma(-h, y, h), y)
    y = _copysign(y, x)
    return _where(x == x, y, x)


@_kernel
def _tanh_f64(x):
    a = _fabs(x)
    a = _where(a < f64(22.0), a, f64(22.0))
    e = _expm1_f64(a + a)
    y = _div(e, e + f64(2.0))
    # y = h/(1+h) with h = e/2 is the fixed point of y = h - h*y; one such step
    # removes most of the division's rounding error when h is small.
    h = f64(0.5) * e
    y = _where(a < f64(0.5), _fma(-h, y, h), y)
    y = _copysign(y, x)
    return _where(x == x, y, x)


@_kernel
def _logistic_f32(x):
    e = _exp_f32(-_fabs(x))
    return _div(_where(x >= f32(0.0), f32(1.0), e), f32(1.0) + e)


@_kernel
def _logistic_f64(x):
    e = _exp_f64(-_fabs(x))
    return _div(_where(x >= f64(0.0), f64(1.0), e), f64(1.0) + e)


# ---------------------------------------------------------------------------
# sin, cos
# ---------------------------------------------------------------------------


@_jitable
def _trig_f32(x, shift):
    """sin(x + shift * pi/2) for shift in {0, 1}."""
    xa = _where(_fabs(x) < f32(1e30), x, f32(0.0))          # inf/NaN -> 0 (fixed below)
    # reduced in float64 (x is exact there): q * pi/2 with pi/2 to 159 bits stays exact
    # enough up to |x| = 2**48, where float32 steps left it at 2**20 (1.4 times the time)
    xd = f64(xa)
    qd = _rint(xd * f64(_2OPI))
    rd = _fma(qd, f64(-_PIO2A_F64), xd)
    rd = _fma(qd, f64(-_PIO2B_F64), rd)
    rd = _fma(qd, f64(-_PIO2C_F64), rd)
    r = f32(rd)
    q = f32(qd - f64(4.0) * _floor(qd * f64(0.25)))         # the quadrant, before it rounds
    z = r * r
    # sin(r), cos(r) on [-pi/4, pi/4] (Cephes sinf/cosf coefficients)
    ps = _mla(z, f32(-1.9515295891e-4), f32(8.3321608736e-3))
    ps = _mla(ps, z, f32(-1.6666654611e-1))
    ps = _mla(ps * z, r, r)
    pc = _mla(z, f32(2.443315711809948e-05), f32(-1.388731625493765e-03))
    pc = _mla(pc, z, f32(4.166664568298827e-02))
    pc = _mla(pc * z, z, f32(1.0) - f32(0.5) * z)
    j = q + shift
    j = j - f32(4.0) * _floor(j * f32(0.25))                # quadrant 0..3
    y = _where((j == f32(1.0)) | (j == f32(3.0)), pc, ps)
    y = _where(j >= f32(2.0), -y, y)
    y = _where(y < f32(1.0), y, f32(1.0))
    y = _where(y > f32(-1.0), y, f32(-1.0))
    y = _where(x - x == f32(0.0), y, f32(_NAN))             # inf/NaN -> NaN
    return y


@_jitable
def _trig_f64(x, shift):
    xa = _where(_fabs(x) < f64(1e300), x, f64(0.0))
    q = _rint(xa * f64(_2OPI))
    r = _fma(q, f64(-_PIO2A_F64), xa)
    r = _fma(q, f64(-_PIO2B_F64), r)
    r = _fma(q, f64(-_PIO2C_F64), r)
    q2 = _rint(r * f64(_2OPI))
    r = _fma(q2, f64(-_PIO2A_F64), r)
    r = _fma(q2, f64(-_PIO2B_F64), r)
    r = _fma(q2, f64(-_PIO2C_F64), r)
    q = q + q2
    z = r * r
    # fdlibm __kernel_sin / __kernel_cos
    ps = _mla(z, f64(1.58969099521155010221e-10), f64(-2.50507602534068634195e-08))
    ps = _mla(ps, z, f64(2.75573137070700676789e-06))
    ps = _mla(ps, z, f64(-1.98412698298579493134e-04))
    ps = _mla(ps, z, f64(8.33333333332248946124e-03))
    ps = _mla(z * r, _mla(z, ps, f64(-1.66666666666666324348e-01)), r)
    pc = _mla(z, f64(-1.13596475577881948265e-11), f64(2.08757232129817482790e-09))
    pc = _mla(pc, z, f64(-2.75573143513906633035e-07))
    pc = _mla(pc, z, f64(2.48015872894767294178e-05))
    pc = _mla(pc, z, f64(-1.38888888888741095749e-03))
    pc = _mla(pc, z, f64(4.16666666666666019037e-02))
    pc = z * pc
    hz = f64(0.5) * z
    w = f64(1.0) - hz
    pc = w + (((f64(1.0) - w) - hz) + z * pc)
    j = q + shift
    j = j - f64(4.0) * _floor(j * f64(0.25))
    y = _where((j == f64(1.0)) | (j == f64(3.0)), pc, ps)
    y = _where(j >= f64(2.0), -y, y)
    y = _where(y < f64(1.0), y, f64(1.0))
    y = _where(y > f64(-1.0), y, f64(-1.0))
    y = _where(x - x == f64(0.0), y, f64(_NAN))
    return y


# Beyond TRIG_BOUND_F32/_F64 (and for +-inf) libm computes sin/cos: every kernel ends
# with y = astjax_libm_<fn>_<f32|f64>(x, y, bound), a call LLVM cannot inline that returns
# libm's value where |x| > bound and y elsewhere. A branch to libm in the kernel would stop
# the loop vectorizer, and llvm.sin itself is widened into libm calls for every element. So
# the function declares vector variants (LLVM's vector-function-abi-variant attribute; kept
# alive through llvm.compiler.used) that the vectorized loop calls with whole vectors: they
# compare, return y when no lane is huge (a few instructions), else jump to the lanes' libm
# calls. Both preserve all registers (preserve_allcc), so the loop keeps its own.
_LIBM_VFS = (2, 4, 8, 16)


def _libm_variants(module):
    """Define the scalar and vector functions of huge arguments in ``module`` (once)."""
    if module.globals.get("astjax_libm_sin_f64") is not None:
        return
    i32, keep = ir.IntType(32), []
    for fn_name in ("sin", "cos"):
        for sfx, llty in (("f32", ir.FloatType()), ("f64", ir.DoubleType())):
            name = f"astjax_libm_{fn_name}_{sfx}"
            libm = module.declare_intrinsic("llvm." + fn_name, [llty])
            fabs = module.declare_intrinsic("llvm.fabs", [llty])
            fn = ir.Function(module, ir.FunctionType(llty, [llty] * 3), name)
            variants = ",".join(f"_ZGV_LLVM_N{n}vvv_{name}({name}_v{n})" for n in _LIBM_VFS)
            for attr in ("nounwind", "noinline", "memory(none)",
                         f'"vector-function-abi-variant"="{variants}"'):
                set.add(fn.attributes, attr)             # (llvmlite checks names it knows)
            fn.linkage = "linkonce_odr"
            x, y, bound = fn.args
            b = ir.IRBuilder(fn.append_basic_block())
            huge = b.fcmp_ordered(">", b.call(fabs, [x]), bound)
            b.ret(b.select(huge, b.call(libm, [x]), y))
            for n in _LIBM_VFS:
                vty = ir.VectorType(llty, n)
                mty = ir.VectorType(ir.IntType(1), n)
                slow_fn = ir.Function(module, ir.FunctionType(vty, [vty] * 3),
                                      f"{name}_v{n}_lanes")
                vf = ir.Function(module, ir.FunctionType(vty, [vty] * 3), f"{name}_v{n}")
                for f in (slow_fn, vf):
                    f.linkage = "linkonce_odr"
                    f.calling_convention = "preserve_allcc"
                    for attr in ("nounwind", "noinline", "memory(none)"):
                        set.add(f.attributes, attr)
                x, y, bound = slow_fn.args
                b = ir.IRBuilder(slow_fn.append_basic_block())
                for k in range(n):
                    lane = ir.Constant(i32, k)
                    xk = b.extract_element(x, lane)
                    huge = b.fcmp_ordered(">", b.call(fabs, [xk]), b.extract_element(bound, lane))
                    yk = b.select(huge,
                                  b.call(libm, [xk]), b.extract_element(y, lane))
                    y = b.insert_element(y, yk, lane)
                b.ret(y)
                x, y, bound = vf.args
                any_name = f"llvm.vector.reduce.or.v{n}i1"
                any_fn = module.globals.get(any_name) or ir.Function(
                    module, ir.FunctionType(ir.IntType(1), [mty]), any_name)
                vfabs = module.globals.get(f"llvm.fabs.v{n}{sfx}") or ir.Function(
                    module, ir.FunctionType(vty, [vty]), f"llvm.fabs.v{n}{sfx}")
                b = ir.IRBuilder(vf.append_basic_block())
                mask = b.fcmp_ordered(">", b.call(vfabs, [x]), bound)
                slow, done = vf.append_basic_block(), vf.append_basic_block()
                b.cbranch(b.call(any_fn, [mask]), slow, done)
                b.position_at_end(done)
                b.ret(y)
                b.position_at_end(slow)
                b.ret(b.call(slow_fn, [x, y, bound], cconv="preserve_allcc", tail="musttail"))
                keep.append(vf)
    ptr = ir.PointerType(ir.IntType(8))
    used = ir.GlobalVariable(module, ir.ArrayType(ptr, len(keep)), "llvm.compiler.used")
    used.linkage = "appending"
    used.section = "llvm.metadata"
    used.initializer = ir.Constant(ir.ArrayType(ptr, len(keep)), [f.bitcast(ptr) for f in keep])


def _libm_trig(fn_name):
    @intrinsic
    def _impl(typingctx, x, y, bound):
        if not _is_float(x, y, bound):
            return None

        def codegen(context, builder, sig, args):
            _libm_variants(builder.module)
            return builder.call(builder.module.globals[f"astjax_libm_{fn_name}_{_sfx(x)}"],
                                args)

        return x(x, y, bound), codegen

    return _impl


_libm_sin = _libm_trig("sin")
_libm_cos = _libm_trig("cos")


@_kernel
def _sin_f32(x):
    y = _trig_f32(x, f32(0.0))
    y = _where(x == f32(0.0), x, y)                          # keep -0.0
    return _libm_sin(x, y, f32(TRIG_BOUND_F32))


@_kernel
def _cos_f32(x):
    return _libm_cos(x, _trig_f32(x, f32(1.0)), f32(TRIG_BOUND_F32))


@_kernel
def _sin_f64(x):
    y = _trig_f64(x, f64(0.0))
    y = _where(x == f64(0.0), x, y)
    return _libm_sin(x, y, f64(TRIG_BOUND_F64))


@_kernel
def _cos_f64(x):
    return _libm_cos(x, _trig_f64(x, f64(1.0)), f64(TRIG_BOUND_F64))


# ---------------------------------------------------------------------------
# power: exp(y * log|x|) in double-word arithmetic (SLEEF's xpowf/xpow scheme)
# ---------------------------------------------------------------------------


@_jitable
def _two_sum(a, b):
    """(s, e) with s = fl(a + b) and s + e == a + b exactly."""
    s = a + b
    v = s - a
    return s, (a - (s - v)) + (b - v)


@_jitable
def _dw_add(ah, al, bh, bl):
    """(ah, al) + (bh, bl) without an ordering assumption (TwoSum on the heads)."""
    s = ah + bh
    v = s - ah
    t = (ah - (s - v)) + (bh - v)
    return s, t + (al + bl)


@_jitable
def _dw_add_fast(ah, al, bh, bl):
    """(ah, al) + (bh, bl) for |ah| >= |bh| (or ah == 0)."""
    s = ah + bh
    return s, (((ah - s) + bh) + al) + bl


@_jitable
def _dw_mul(ah, al, bh, bl):
    s = ah * bh
    return s, _fma(ah, bl, _fma(al, bh, _fma(ah, bh, -s)))


@_jitable
def _dw_mul1(ah, al, b):
    s = ah * b
    return s, _fma(al, b, _fma(ah, b, -s))


@_jitable
def _dw_sqr(ah, al):
    s = ah * ah
    return s, _fma(ah + ah, al, _fma(ah, ah, -s))


@_jitable
def _dw_atanh_arg(m, one):
    """(m - 1) / (m + 1) as a double-word for m in [sqrt(2)/2, sqrt(2))."""
    n = m - one                                             # exact
    dh = one + m
    dl = (one - dh) + m                                     # exact: 1 + m == dh + dl
    t = _div(one, dh)
    s = n * t
    u = _fma(t, n, -s)
    v = _fma(-dl, t, _fma(-dh, t, one))
    return s, _fma(s, v, u)


@_jitable
def _logk_f32(ax):
    """log(ax) as a double-word, ax > 0 finite."""
    tiny = ax < f32(1.17549435e-38)
    xs = _where(tiny, ax * f32(8388608.0), ax)
    e, m = _split_sqrt2(xs)
    e = _where(tiny, e - f32(23.0), e)
    xh, xl = _dw_atanh_arg(m, f32(1.0))
    x2h, x2l = _dw_sqr(xh, xl)
    t = _mla(f32(0.240320354700088500976562), x2h, f32(0.285112679004669189453125))
    t = _mla(t, x2h, f32(0.400007992982864379882812))
    sh, sl = _dw_mul1(f32(0.69314718246459960938), f32(-1.904654323148236017e-09), e)
    sh, sl = _dw_add_fast(sh, sl, xh + xh, xl + xl)
    ph, pl = _dw_mul(x2h, x2l, xh, xl)
    qh, ql = _dw_mul1(x2h, x2l, t)
    qh, ql = _dw_add(qh, ql, f32(0.66666662693023681640625), f32(3.69183861259614332084311e-09))
    ph, pl = _dw_mul(ph, pl, qh, ql)
    return _dw_add_fast(sh, sl, ph, pl)


@_jitable
def _logk_f64(ax):
    tiny = ax < f64(2.2250738585072014e-308)
    xs = _where(tiny, ax * f64(18014398509481984.0), ax)
    e, m = _split_sqrt2(xs)
    e = _where(tiny, e - f64(54.0), e)
    xh, xl = _dw_atanh_arg(m, f64(1.0))
    x2h, x2l = _dw_sqr(xh, xl)
    z = x2h
    t = _mla(f64(0.116255524079935043668677), z, f64(0.103239680901072952701192))
    t = _mla(t, z, f64(0.117754809412463995466069))
    t = _mla(t, z, f64(0.13332981086846273921509))
    t = _mla(t, z, f64(0.153846227114512262845736))
    t = _mla(t, z, f64(0.181818180850050775676507))
    t = _mla(t, z, f64(0.222222222230083560345903))
    t = _mla(t, z, f64(0.285714285714249172087875))
    t = _mla(t, z, f64(0.400000000000000077715612))
    sh, sl = _dw_mul1(f64(0.693147180559945286226764), f64(2.319046813846299558417771e-17), e)
    sh, sl = _dw_add_fast(sh, sl, xh + xh, xl + xl)
    x3h, x3l = _dw_mul(x2h, x2l, xh, xl)
    ch, cl = _dw_mul(x3h, x3l, f64(0.666666666666666629659233), f64(3.80554962542412056336616e-17))
    sh, sl = _dw_add_fast(sh, sl, ch, cl)
    x5h, x5l = _dw_mul(x2h, x2l, x3h, x3l)
    ph, pl = _dw_mul1(x5h, x5l, t)
    return _dw_add_fast(sh, sl, ph, pl)


@_jitable
def _expk_f32(dh, dl):
    """exp(dh + dl) for a double-word argument (|dl| <~ ulp(dh)).

    As _exp_f32, with dl folded exactly into the reduced argument r + rl."""
    ok = (dh > f32(-110.0)) & (dh < f32(90.0))
    xc = _where(dh > f32(-110.0), dh, f32(-110.0))          # NaN -> -110 (fixed by caller)
    xc = _where(xc < f32(90.0), xc, f32(90.0))
    dl = _where(ok, dl, f32(0.0))
    k = _rint(xc * f32(1.44269504088896341))
    r1 = _mla(k, f32(-0.693145751953125), xc)              # exact
    s, sl = _two_sum(r1, dl)
    r = _mla(k, f32(-1.428606765330187045e-06), s)
    rl = _mla(k, f32(-1.428606765330187045e-06), s - r) + sl  # r + rl = dh + dl - k*ln2
    return _exp_finish_f32(k, r, rl)


@_jitable
def _expk_f64(dh, dl):
    ok = (dh > f64(-760.0)) & (dh < f64(720.0))
    xc = _where(dh > f64(-760.0), dh, f64(-760.0))
    xc = _where(xc < f64(720.0), xc, f64(720.0))
    dl = _where(ok, dl, f64(0.0))
    k = _rint(xc * f64(1.4426950408889634074))
    r1 = _mla(k, f64(-6.93147180369123816490e-01), xc)
    s, sl = _two_sum(r1, dl)
    r = _mla(k, f64(-1.90821492927058770002e-10), s)
    rl = _mla(k, f64(-1.90821492927058770002e-10), s - r) + sl
    return _exp_finish_f64(k, r, rl)


@_jitable
def _pow_fixup(x, y, r, zero, half, one, inf, odd_limit):
    """C99 special cases of pow around the generic result r = exp(y*log|x|)."""
    ax = _fabs(x)
    ry = _rint(y)
    yisint = ry == y                                        # true for +-inf
    yisodd = yisint & (_fabs(y) < odd_limit) & (_rint(y * half) != y * half)
    nan = inf - inf
    r = _where(x < zero, _where(yisint, _where(yisodd, -r, r), nan), r)
    # y = +-inf
    efx = _where(y < zero, one - ax, ax - one)             # > 0: |result| grows to inf
    r = _where(_fabs(y) == inf, _where(efx < zero, zero, _where(efx == zero, one, inf)), r)
    # x = +-0 or +-inf
    big = _where((y < zero) == (x == zero), inf, zero)
    r = _where((ax == inf) | (x == zero), _copysign(big, _where(yisodd, x, one)), r)
    r = _where((x == x) & (y == y), r, x + y)
    return _where((y == zero) | (x == one), one, r)


@_kernel
def _power_f32(x, y):
    lh, ll = _logk_f32(_fabs(x))
    dh, dl = _dw_mul1(lh, ll, y)
    r = _expk_f32(dh, dl)
    return _pow_fixup(x, y, r, f32(0.0), f32(0.5), f32(1.0), f32(_INF), f32(16777216.0))


@_kernel
def _power_f64(x, y):
    lh, ll = _logk_f64(_fabs(x))
    dh, dl = _dw_mul1(lh, ll, y)
    r = _expk_f64(dh, dl)
    return _pow_fixup(x, y, r, f64(0.0), f64(0.5), f64(1.0), f64(_INF),
                      f64(9007199254740992.0))


# ---------------------------------------------------------------------------
# public names
# ---------------------------------------------------------------------------


def _unary(name, py_impl, impl32, impl64, doc):
    def stub(x):
        with np.errstate(all="ignore"):
            return py_impl(x)

    stub.__name__ = stub.__qualname__ = name
    stub.__doc__ = doc
    stub.__module__ = __name__

    def _ol(x):
        if x == types.float32:
            return lambda x: impl32(x)
        if x == types.float64:
            return lambda x: impl64(x)
        if isinstance(x, (types.Integer, types.Boolean)):
            return lambda x: impl64(np.float64(x))
        return None

    overload(stub, jit_options=_JIT_OPTIONS)(_ol)
    return stub


def _np_logistic(x):
    x = np.asarray(x)
    return (1 / (1 + np.exp(-x))).astype(x.dtype if x.dtype.kind == "f" else np.float64)[()]


exp = _unary("exp", np.exp, _exp_f32, _exp_f64, "e**x.")
log = _unary("log", np.log, _log_f32, _log_f64, "Natural logarithm.")
log1p = _unary("log1p", np.log1p, _log1p_f32, _log1p_f64, "log(1 + x), accurate near 0.")
expm1 = _unary("expm1", np.expm1, _expm1_f32, _expm1_f64, "e**x - 1, accurate near 0.")
tanh = _unary("tanh", np.tanh, _tanh_f32, _tanh_f64, "Hyperbolic tangent.")
logistic = _unary("logistic", _np_logistic, _logistic_f32, _logistic_f64,
                  "1 / (1 + e**-x), without overflow or NaN for large |x|.")
sin = _unary("sin", np.sin, _sin_f32, _sin_f64, "Sine (see TRIG_BOUND_F32/_F64).")
cos = _unary("cos", np.cos, _cos_f32, _cos_f64, "Cosine (see TRIG_BOUND_F32/_F64).")


def power(x, y):
    """x ** y with C99/NumPy special cases (negative base needs an integer y)."""
    with np.errstate(all="ignore"):
        return np.power(x, y)


@overload(power, jit_options=_JIT_OPTIONS)
def _ol_power(x, y):
    def kind(t):
        if isinstance(t, types.Float) and t in (types.float32, types.float64):
            return "f"
        if isinstance(t, (types.Integer, types.Boolean)):
            return "i"
        return None

    kx, ky = kind(x), kind(y)
    if kx is None or ky is None:
        return None
    if kx == "f" and (ky == "i" or y == x):
        ty = x
    elif ky == "f" and kx == "i":
        ty = y
    else:
        ty = types.float64
    if ty == types.float32:
        return lambda x, y: _power_f32(np.float32(x), np.float32(y))
    return lambda x, y: _power_f64(np.float64(x), np.float64(y))


@intrinsic
def _float_bits(typingctx, x):
    """The bits of a float32/float64 as int32/int64."""
    if not _is_float(x):
        return None
    it = types.int32 if x == types.float32 else types.int64

    def codegen(context, builder, sig, args):
        return builder.bitcast(args[0], ir.IntType(it.bitwidth))

    return it(x), codegen


@intrinsic
def _bits_float(typingctx, bits):
    """The float32/float64 whose bits are an int32/int64."""
    if bits not in (types.int32, types.int64):
        return None
    ft = types.float32 if bits == types.int32 else types.float64

    def codegen(context, builder, sig, args):
        return builder.bitcast(args[0], context.get_value_type(ft))

    return ft(bits), codegen


@_kernel
def _frexp_f32(x):
    tiny = abs(x) < f32(1.1754943508222875e-38)  # denormal (or zero): scale into range
    y = x * f32(33554432.0) if tiny else x       # 2**25
    bits = _float_bits(y)
    e = ((bits >> 23) & 0xFF) - 126 - (25 if tiny else 0)  # bits & ~0x7F800000 below
    m = _bits_float(np.int32((bits & np.int32(-2139095041)) | np.int32(0x3F000000)))
    keep = x == 0 or not np.isfinite(x)
    return (x if keep else m), np.int32(0 if keep else e)


@_kernel
def _frexp_f64(x):
    tiny = abs(x) < 2.2250738585072014e-308
    y = x * 18014398509481984.0 if tiny else x   # 2**54
    bits = _float_bits(y)
    e = np.int32(((bits >> 52) & 0x7FF) - 1022 - (54 if tiny else 0))
    m = _bits_float((bits & np.int64(-9218868437227405313)) | np.int64(0x3FE0000000000000))
    keep = x == 0 or not np.isfinite(x)
    return (x if keep else m), np.int32(0 if keep else e)


def frexp(x):
    """(mantissa, exponent) with x == mantissa * 2**exponent, |mantissa| in [0.5, 1), as
    NumPy's: zeros, infinities and NaN give (x, 0). Exponents are int32."""
    m, e = np.frexp(x)
    return m, np.int32(e)


@overload(frexp, jit_options=_JIT_OPTIONS)
def _ol_frexp(x):
    if x == types.float32:
        return lambda x: _frexp_f32(x)
    if x == types.float64:
        return lambda x: _frexp_f64(x)
    return None


# jnp.fma in generated loops: the same intrinsic, one rounding (float32/float64 operands of
# one dtype; generated code casts them first)
fma = _fma
