"""mathlib: vectorizable float32/float64 kernels vs NumPy (ulps), special values, SIMD IR.

Each kernel is compiled once per dtype into a small ``@njit`` array -> array loop
(cached at module level), so the whole file stays a few Numba compiles long.
"""
import re
import warnings
import zlib

import numba
import numpy as np
import pytest

from astjax._src.backends import mathlib as ml

UNARY = ["exp", "log", "log1p", "expm1", "tanh", "logistic", "sin", "cos"]
DTYPES = [np.float32, np.float64]

# Max ulps allowed vs a higher-precision reference ("true") and vs NumPy on the
# same dtype.  Measured maxima are below these (see the module docstring of
# mathlib); NumPy's own float32 exp/log are up to ~3 ulps off near denormals.
TRUE_BOUND = {
    "exp": 1.0, "log": 1.0, "log1p": 1.5, "expm1": 1.5, "tanh": 2.0,
    "logistic": 2.5, "sin": 2.0, "cos": 2.0, "power": 1.0,
}
NUMPY_BOUND = 4.0

# Higher-precision reference: float64 for float32, long double for float64
# (only where long double really is wider, e.g. x86-64 Linux).
_LD_WIDER = np.finfo(np.longdouble).nmant > np.finfo(np.float64).nmant
_HI = {np.float32: np.float64, np.float64: np.longdouble}

_APPLY = {}


def _apply(name):
    """Cached njit loop out[i] = ml.<name>(x[i]) (or (x[i], y[i]) for power)."""
    if name not in _APPLY:
        fn = getattr(ml, name)
        if name == "power":
            @numba.njit(cache=False)
            def apply(x, y, out):
                for i in range(out.shape[0]):
                    out[i] = fn(x[i], y[i])
        else:
            @numba.njit(cache=False)
            def apply(x, out):
                for i in range(out.shape[0]):
                    out[i] = fn(x[i])
        _APPLY[name] = apply
    return _APPLY[name]


def run(name, *args):
    args = [np.ascontiguousarray(a) for a in args]
    out = np.empty_like(args[0])
    _apply(name)(*args, out)
    return out


def reference(name, *args, hi=None):
    """NumPy's value on the arguments' dtype, or in the dtype ``hi``."""
    dtype = args[0].dtype.type
    with np.errstate(all="ignore"):
        a = [x.astype(hi) for x in args] if hi is not None else list(args)
        if name == "logistic":
            # NumPy has no logistic: the reference is 1/(1+exp(-x)) one precision up.
            w = _HI[dtype]
            x = args[0].astype(w)
            r = 1 / (1 + np.exp(-x))
            return r if hi is not None else r.astype(dtype)
        if name == "power":
            return np.power(*a)
        return getattr(np, name)(*a)


def ulps(got, ref, dtype):
    """|got - ref| in units of the last place of ref rounded to dtype (denormal floor)."""
    with np.errstate(all="ignore"):
        wide = np.longdouble if dtype == np.float64 else np.float64
        ref = ref.astype(wide)
        refd = ref.astype(dtype)
        sp = np.maximum(np.spacing(np.abs(refd)), np.finfo(dtype).smallest_subnormal)
        err = np.abs(got.astype(wide) - ref) / sp.astype(wide)
    same = (got == refd) | (np.isnan(got) & np.isnan(refd))
    return np.where(same, 0.0, err)


def samples(name, dtype, n=200_000):
    """Random bit patterns (every finite float is possible), a dense grid over the
    interesting range, small magnitudes around 0, and their negatives."""
    rng = np.random.default_rng(zlib.crc32(f"{name}-{dtype.__name__}".encode()))
    if dtype == np.float32:
        bits = rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32).view(np.float32)
    else:
        bits = rng.integers(0, 2**64, n, dtype=np.uint64).view(np.float64)
    bits = bits[np.isfinite(bits)]
    f32 = dtype == np.float32
    lo, hi = {
        "exp": (-110, 90) if f32 else (-750, 712),
        "expm1": (-30, 90) if f32 else (-40, 712),
        "log": (0, 20), "log1p": (-1, 5), "tanh": (-12, 12), "logistic": (-120, 120),
        "sin": (-1e5, 1e5), "cos": (-1e5, 1e5),
    }[name]
    grid = np.linspace(lo, hi, n).astype(dtype)
    small = (rng.standard_normal(n) * np.logspace(-30, 1, n)).astype(dtype)
    x = np.concatenate([bits, grid, -grid, small])
    if name in ("sin", "cos"):
        x = x[np.abs(x) <= (ml.TRIG_BOUND_F32 if f32 else ml.TRIG_BOUND_F64)]
    return x


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.__name__)
@pytest.mark.parametrize("name", UNARY)
def test_unary_accuracy(name, dtype):
    x = samples(name, dtype)
    got = run(name, x)
    assert got.dtype == dtype
    want = reference(name, x)
    assert np.array_equal(np.isnan(got), np.isnan(want)), x[np.isnan(got) != np.isnan(want)][:5]
    err = ulps(got, want, dtype)
    i = int(np.argmax(err))
    assert err[i] <= NUMPY_BOUND, (x[i], got[i], want[i], err[i])
    if dtype == np.float32 or _LD_WIDER:
        err = ulps(got, reference(name, x, hi=_HI[dtype]), dtype)
        i = int(np.argmax(err))
        assert err[i] <= TRUE_BOUND[name], (x[i], got[i], err[i])


def _power_samples(dtype, n=100_000):
    rng = np.random.default_rng(7)
    f64 = np.float64
    lim = 88.0 if dtype == np.float32 else 709.0
    xs, ys = [], []
    xs.append(np.exp(rng.uniform(-20, 20, n)))                 # generic
    ys.append(rng.uniform(-30, 30, n))
    xs.append(1 + rng.uniform(-1e-3, 1e-3, n))                # x near 1, large |y|
    ys.append(rng.uniform(-5e4, 5e4, n))
    xs.append(-np.exp(rng.uniform(-5, 5, n)))                 # negative base, integer y
    ys.append(rng.integers(-20, 21, n).astype(f64))
    x4 = np.exp(rng.uniform(-5, 5, n))                        # near overflow / into denormals
    xs.append(x4)
    ys.append(rng.uniform(-1.2 * lim, 1.02 * lim, n) / np.log(x4))
    xs.append(np.abs(rng.standard_normal(n)))                 # square roots
    ys.append(np.full(n, 0.5))
    return np.concatenate(xs).astype(dtype), np.concatenate(ys).astype(dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.__name__)
def test_power_accuracy(dtype):
    x, y = _power_samples(dtype)
    got = run("power", x, y)
    assert got.dtype == dtype
    want = reference("power", x, y)
    assert np.array_equal(np.isnan(got), np.isnan(want))
    err = ulps(got, want, dtype)
    i = int(np.argmax(err))
    assert err[i] <= NUMPY_BOUND, (x[i], y[i], got[i], want[i], err[i])
    if dtype == np.float32 or _LD_WIDER:
        err = ulps(got, reference("power", x, y, hi=_HI[dtype]), dtype)
        i = int(np.argmax(err))
        assert err[i] <= TRUE_BOUND["power"], (x[i], y[i], got[i], err[i])
    # x ** 0.5 agrees with sqrt (correctly rounded) to the last bit or so
    m = y == dtype(0.5)
    assert np.max(ulps(got[m], np.sqrt(x[m]), dtype)) <= 1.0


def _special_inputs(dtype):
    fi = np.finfo(dtype)
    tiny = fi.smallest_subnormal
    vals = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0,
            tiny, -tiny, 3 * tiny, fi.smallest_normal, -fi.smallest_normal,
            fi.smallest_normal / 3, fi.max, -fi.max, fi.eps, -fi.eps, 1e-10, -1e-10,
            1e-30, -1e-30, 10.0, -10.0, 20.0, -20.0, 100.0, -100.0, 1000.0, -1000.0,
            1e5, -1e5, 1e20, -1e20]
    return np.array(vals, dtype=dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.__name__)
@pytest.mark.parametrize("name", UNARY)
def test_unary_special_values(name, dtype):
    x = _special_inputs(dtype)
    got = run(name, x)
    want = reference(name, x)
    exact = ~np.isfinite(want) | (want == 0) | ~np.isfinite(x) | (x == 0)
    # inf/nan/zero results and inputs: identical, including the sign of zero
    assert np.array_equal(got[exact], want[exact], equal_nan=True), (x[exact], got[exact])
    exact &= ~np.isnan(want)                                  # (a NaN's sign means nothing)
    assert np.array_equal(np.signbit(got[exact]), np.signbit(want[exact])), (x[exact],
                                                                              got[exact])
    err = ulps(got, want, dtype)
    assert np.max(err) <= NUMPY_BOUND, (x, got, want, err)


def test_brief_examples():
    f32, f64 = np.float32, np.float64
    with np.errstate(all="ignore"):
        assert run("exp", np.array([100.0], f32))[0] == np.inf
        sub = run("exp", np.array([-100.0], f32))[0]       # denormal: ~3.7e-44
        assert ulps(np.array([sub]), np.exp(np.array([-100.0])), f32)[0] <= 1
        assert run("exp", np.array([-104.0, -200.0], f32)).tolist() == [0.0, 0.0]
        assert run("exp", np.array([-745.0, -746.0], f64)).tolist() == [5e-324, 0.0]
        assert run("exp", np.array([709.0, 710.0], f64))[1] == np.inf
        for dt in (f32, f64):
            lg = run("log", np.array([0.0, -0.0, -1.0, np.inf], dt))
            assert lg[0] == -np.inf and lg[1] == -np.inf and np.isnan(lg[2]) and lg[3] == np.inf
            dn = np.array([np.finfo(dt).smallest_subnormal, np.finfo(dt).smallest_normal / 7], dt)
            assert np.max(ulps(run("log", dn), np.log(dn.astype(_HI[dt])), dt)) <= 1
            assert run("log1p", np.array([-1.0], dt))[0] == -np.inf
            assert np.isnan(run("log1p", np.array([-1.5], dt))[0])
            e = run("expm1", np.array([1e-10, -1e-10], dt))
            assert np.max(ulps(e, np.expm1(np.array([1e-10, -1e-10], _HI[dt])), dt)) <= 1
            t = run("tanh", np.array([20.0, -20.0, 1e-30, -1e-30, 1e5], dt))
            assert t.tolist() == [1.0, -1.0, dt(1e-30), dt(-1e-30), 1.0]
            s = run("logistic", np.array([100.0, 1000.0, -1000.0, np.inf, -np.inf], dt))
            assert s.tolist() == [1.0, 1.0, 0.0, 1.0, 0.0]
            assert run("logistic", np.array([-100.0], dt))[0] > 0   # 3.7e-44 (denormal) in f32
            p = run("power", np.array([-2.0, -2.0, 0.0, -8.0, 4.0], dt),
                    np.array([3.0, -2.0, 0.0, 1 / 3, 0.5], dt))
            assert p[:3].tolist() == [-8.0, 0.25, 1.0] and np.isnan(p[3]) and p[4] == 2.0


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.__name__)
def test_power_special_values(dtype):
    v = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 2.0, -2.0, 0.5, -0.5,
                  3.0, -3.0, 1 / 3, 1e-30, 1e30], dtype)
    x, y = (a.ravel().copy() for a in np.meshgrid(v, v))
    got = run("power", x, y)
    with np.errstate(all="ignore"):
        want = np.power(x, y)
    ok = ((got == want) & (np.signbit(got) == np.signbit(want))) | (np.isnan(got) & np.isnan(want))
    ok |= np.isfinite(want) & (want != 0) & (ulps(got, want, dtype) <= 1)
    assert ok.all(), list(zip(x[~ok], y[~ok], got[~ok], want[~ok]))


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.__name__)
@pytest.mark.parametrize("name", ["sin", "cos"])
def test_trig_large_arguments(name, dtype):
    # beyond TRIG_BOUND_F32/_F64 libm computes them (they were meaningless past 2**52)
    rng = np.random.default_rng(3)
    fi = np.finfo(dtype)
    x = np.concatenate([np.exp(rng.uniform(np.log(1e5), np.log(float(fi.max)), 20_000)),
                        [fi.max, 2.0 ** 60, 1e22, 2.0 ** 48, np.nextafter(dtype(2.0 ** 48), 1),
                         2.0 ** 49, 5e15, 3e38, 1e300 if dtype == np.float64 else 1e38]])
    x = np.concatenate([x.astype(dtype), -x.astype(dtype)])
    got = run(name, x)
    bound = ml.TRIG_BOUND_F32 if dtype == np.float32 else ml.TRIG_BOUND_F64
    assert (np.abs(x) > bound).sum() > 1000
    assert np.max(ulps(got, getattr(np, name)(x), dtype)) <= NUMPY_BOUND
    m = np.abs(x) <= bound  # (our own reduction)
    assert m.sum() > 100
    assert np.max(ulps(got[m], reference(name, x[m], hi=_HI[dtype]), dtype)) <= TRUE_BOUND[name]
    with np.errstate(invalid="ignore"):
        assert np.isnan(run(name, np.array([np.inf, -np.inf, np.nan], dtype))).all()


# ---------------------------------------------------------------------------
# vectorization: the property the library exists for
# ---------------------------------------------------------------------------

_FUSED = {}

_FUSED_SRC = """
def fused(x, y, out):
    for i in range(out.shape[0]):
        a = x[i]
        b = y[i]
        out[i] = (_ml.exp(a) + _ml.log(b) + _ml.log1p(b) + _ml.expm1(a) + _ml.tanh(a)
                  + _ml.logistic(a) + _ml.sin(a) + _ml.cos(a) + _ml.power(b, a))

def selu(x, out):
    for i0 in range(out.shape[0]):
        out[i0] = T(1.05) * (x[i0] if x[i0] > 0 else T(1.67) * _ml.exp(x[i0]) - T(1.67))
"""


def _fused(dtype):
    if dtype not in _FUSED:
        ns = {"_ml": ml, "T": dtype, "np": np}
        exec(_FUSED_SRC, ns)
        _FUSED[dtype] = (numba.njit(cache=False)(ns["fused"]), numba.njit(cache=False)(ns["selu"]))
    return _FUSED[dtype]


def _loop_function_ir(dispatcher):
    """LLVM IR of the compiled Python function itself (not its CPython wrapper)."""
    text = dispatcher.inspect_llvm(dispatcher.signatures[0])
    blocks = re.split(r"\n(?=define )", text)
    mine = [b for b in blocks if b.startswith("define") and "cpython" not in b.split("(")[0]
            and "cfunc" not in b.split("(")[0] and "NRT_" not in b.split("(")[0]
            and "@astjax_libm_" not in b.split("(")[0]]  # (sin/cos of huge arguments)
    assert len(mine) == 1, [b.split("(")[0] for b in blocks if b.startswith("define")]
    return mine[0]


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.__name__)
def test_fused_loop_vectorizes(dtype):
    fused, selu = _fused(dtype)
    rng = np.random.default_rng(0)
    x = rng.uniform(-3, 3, 1000).astype(dtype)
    y = rng.uniform(0.1, 3, 1000).astype(dtype)
    out = np.empty_like(x)
    fused(x, y, out)
    with np.errstate(all="ignore"):
        terms = [np.exp(x), np.log(y), np.log1p(y), np.expm1(x), np.tanh(x),
                 1 / (1 + np.exp(-x)), np.sin(x), np.cos(x), np.power(y, x)]
    # the terms cancel (a sum of 0.02 from terms near 1): a few ulps of each term, plus
    # the eight additions' rounding, bound the error, not a few ulps of the sum
    want = sum(t.astype(np.float64) for t in terms)
    scale = sum(np.abs(t.astype(np.float64)) for t in terms)
    error = np.abs(out - want) / (np.finfo(dtype).eps * scale)
    assert error.max() <= 8, error.max()
    selu(x, out)
    want = dtype(1.05) * np.where(x > 0, x, dtype(1.67) * np.exp(x) - dtype(1.67))
    np.testing.assert_allclose(out, want, atol=1e-6 if dtype == np.float32 else 1e-14)

    scalar = "float" if dtype == np.float32 else "double"
    min_lanes = 4 if dtype == np.float32 else 2
    for disp in (fused, selu):
        body = _loop_function_ir(disp)
        lanes = [int(n) for n in re.findall(r"<(\d+) x %s>" % scalar, body)]
        assert lanes and max(lanes) >= min_lanes, "loop over mathlib kernels did not vectorize"
        # everything inlined: no calls but LLVM intrinsics (no libm, no numba functions)
        # and, for sin and cos, the vector functions of huge arguments (the scalar one
        # in the loop's remainder)
        calls = set(re.findall(r"call [^@\n]*@([\w.$\"]+)", body))
        assert all(c.startswith("llvm.") or re.fullmatch(r"astjax_libm_(sin|cos)_f\d\d(_v\d+)?", c)
                   for c in calls), calls
        if disp is fused:
            assert {"astjax_libm_sin_", "astjax_libm_cos_"} <= {c[:16] for c in calls
                                                                 if "_v" in c[16:]}, calls
        if dtype == np.float32 and disp is selu:
            # the float32 path stays in float32: 8 lanes, no widening to double (sin and
            # cos in the other loop widen on purpose: they reduce their argument in double)
            assert "fpext" not in body and "double" not in body


def test_generic_argument_types():
    @numba.njit(cache=False)
    def f(i, x32, y64):
        return ml.exp(i), ml.power(x32, 2), ml.power(x32, y64), ml.sin(True)

    a, b, c, d = f(1, np.float32(3.0), 2.0)
    # integers and bools compute in float64; power(float32, int) stays float32
    assert f.nopython_signatures[0].return_type == numba.types.Tuple(
        (numba.float64, numba.float32, numba.float64, numba.float64))
    assert abs(a - np.exp(1.0)) <= np.spacing(a) and b == 9.0 and c == 9.0
    assert abs(d - np.sin(1.0)) <= np.spacing(d)


def test_python_mode_calls_use_numpy_without_warnings():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert ml.exp(np.float32(100.0)) == np.inf
        assert ml.log(np.float64(0.0)) == -np.inf
        assert ml.logistic(np.float32(-1000.0)) == 0.0
        assert ml.power(np.float64(-8.0), 1 / 3) != ml.power(np.float64(-8.0), 1 / 3)
        assert ml.sin(0.5) == np.sin(0.5)


@numba.njit(cache=True)
def _frexp_loop(x, m, e):
    for i in range(x.shape[0]):
        pair = ml.frexp(x[i])
        m[i] = pair[0]
        e[i] = pair[1]


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.__name__)
def test_frexp_matches_numpy_bit_for_bit(dtype):
    """Bit operations, not libm: zeros (with their sign), denormals, inf and NaN too."""
    info = np.finfo(dtype)
    special = [0.0, -0.0, np.inf, -np.inf, np.nan, info.tiny, info.tiny / 2,
               info.smallest_subnormal, -info.smallest_subnormal, info.max, -info.max,
               1.0, 0.5, -3.0]
    rng = np.random.default_rng(0)
    wide = rng.standard_normal(20000) * np.exp(rng.uniform(-80, 80, 20000))
    x = np.concatenate([np.array(special), wide]).astype(dtype)
    m, e = np.empty_like(x), np.empty(x.shape, np.int32)
    _frexp_loop(x, m, e)
    want_m, want_e = np.frexp(x)
    np.testing.assert_array_equal(m, want_m)
    np.testing.assert_array_equal(np.signbit(m), np.signbit(want_m))
    np.testing.assert_array_equal(e, want_e)
