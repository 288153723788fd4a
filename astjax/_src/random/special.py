"""erfinv, erf, log, log1p, exp and cholesky as XLA computes them, in ``astjax.numpy``.

``erfinv`` is the polynomial approximation of M. Giles, "Approximating the erfinv
function" (GPU Computing Gems, 2011), with the constants and the evaluation order
of XLA's ``ErfInv32`` / ``ErfInv64`` (what ``jax.lax.erf_inv`` lowers to); each
Horner step is a fused multiply-add, as XLA's CPU code computes it. float16 is
computed in float32, as XLA does.

``log``, ``log1p``, ``exp`` and ``erf`` of float32 are XLA's CPU algorithms (Eigen's
``plog``/``pexp``, Cephes' log1p rational function, XLA's ``EmitErfF32``), read from the
LLVM IR that jaxlib 0.10.2 generates (``XLA_FLAGS=--xla_dump_to=DIR``), with its fused
multiply-adds and its flushing of subnormal inputs and results to zero. They agree with
JAX bit for bit (checked on a million inputs); NumPy's own functions differ from XLA's
in the last bit for 15-40% of float32 inputs. Their derivatives are the exact ones
(1/x, 1/(1+x), exp(x)): the value comes from the algorithm on ``stop_gradient(x)``.
float16 goes through float32; float64 uses NumPy's functions (XLA's float64 log1p is
itself up to ~40 eps from the true value, so float64 results differ by that much).
"""
import numpy as np

import astjax.numpy as jnp
from astjax import lax


_HALF_SQRT_PI = 0.886226925452758
_TWO_OVER_SQRT_PI = 1.1283791670955126


def _f32(bits):
    return np.array([bits], np.uint32).view(np.float32)[0]


_TINY32 = _f32(0x00800000)  # the smallest normal float32
# plog: Cephes' polynomial on [sqrt(1/2) - 1, sqrt(2) - 1]
_LOG_P = [_f32(b) for b in (0x3D9021BB, 0xBDEBD1B8, 0x3DEF251A, 0xBDFE5D4F, 0x3E11E9BF,
                            0xBE2AAE50, 0x3E4CCEAC, 0xBE7FFFFC, 0x3EAAAAAA)]
_LOG_Q1 = _f32(0xB95E8083)   # ln 2 = Q2 - Q1 (split for an exact e * Q2)
_LOG_Q2 = _f32(0x3F318000)
_SQRT_HALF = _f32(0x3F3504F3)
# log1p for |x| < sqrt(2) - 1: x - x^2/2 + x^3 P(x) / Q(x)
_LOG1P_SMALL = _f32(0x3ED413CD)
_LOG1P_Q = [_f32(b) for b in (0x417101AD, 0x42A6185B, 0x435DC32D, 0x439A8CA3, 0x43586D8A,
                              0x42707982)]
_LOG1P_P = [np.float32(4.527e-05)] + [_f32(b) for b in (0x3EFF40C5, 0x40D284FA, 0x41EF4B9C,
                                                        0x4273CC76, 0x426473AD, 0x41A05101)]
# pexp: exp(r) on |r| <= ln(2)/2
_EXP_LOG2E = _f32(0x3FB8AA3B)
_EXP_P = [_f32(b) for b in (0x39506967, 0x3AB743CE, 0x3C088908, 0x3D2AA9C1, 0x3E2AAAAA)]


def _daz(x):
    """XLA's CPU code reads subnormal float32 inputs as (signed) zero."""
    return jnp.where(jnp.abs(x) < _TINY32, x * np.float32(0.0), x)


def _with_derivative(value, x, slope):
    """``value`` with derivative ``slope`` with respect to ``x``: value - (sg(x) - x) * slope,
    which keeps the sign of a zero value (adding would not). An infinite slope or ``x``
    counts as slope 0."""
    slope = lax.stop_gradient(jnp.where(jnp.isfinite(slope), slope, 0.0))
    x = jnp.where(jnp.isfinite(x), x, 0.0)
    return value - (lax.stop_gradient(x) - x) * slope


def _log32_value(x):
    x = _daz(x)
    xc = jnp.where(x > _TINY32, x, _TINY32)
    m, e = jnp.frexp(xc)
    e = e.astype(jnp.float32)
    small = m < _SQRT_HALF
    x1 = (m - np.float32(1.0)) + jnp.where(small, m, np.float32(0.0))
    e = e - jnp.where(small, np.float32(1.0), np.float32(0.0))
    x2 = x1 * x1
    x3 = x2 * x1
    y = jnp.fma(x1, _LOG_P[0], _LOG_P[1])
    y1 = jnp.fma(x1, _LOG_P[3], _LOG_P[4])
    y2 = jnp.fma(x1, _LOG_P[6], _LOG_P[7])
    y = jnp.fma(y, x1, _LOG_P[2])
    y1 = jnp.fma(y1, x1, _LOG_P[5])
    y2 = jnp.fma(y2, x1, _LOG_P[8])
    y = jnp.fma(y, x3, y1)
    y = jnp.fma(y, x3, y2)
    y = jnp.fma(y, x3, e * _LOG_Q1)
    r = jnp.fma(e, _LOG_Q2, jnp.fma(np.float32(-0.5), x2, x1) + y)
    r = jnp.where(x == np.float32(np.inf), np.float32(np.inf), r)
    r = jnp.where((x < 0.0) | jnp.isnan(x), np.float32(np.nan), r)
    return jnp.where(x == 0.0, np.float32(-np.inf), r)


def _log1p32_value(x):
    x = _daz(x)
    big = _log32_value(x + np.float32(1.0))
    z = x * np.float32(0.0)
    den = z + np.float32(1.0)
    den = jnp.fma(den, x, _LOG1P_Q[0])
    den = jnp.fma(den, x, _LOG1P_Q[1])
    den = jnp.fma(den, x, _LOG1P_Q[2])
    den = jnp.fma(den, x, _LOG1P_Q[3])
    den = jnp.fma(den, x, _LOG1P_Q[4])
    den = jnp.fma(den, x, _LOG1P_Q[5])
    num = z + _LOG1P_P[0]
    num = jnp.fma(num, x, _LOG1P_P[1])
    num = jnp.fma(num, x, _LOG1P_P[2])
    num = jnp.fma(num, x, _LOG1P_P[3])
    num = jnp.fma(num, x, _LOG1P_P[4])
    num = jnp.fma(num, x, _LOG1P_P[5])
    num = jnp.fma(num, x, _LOG1P_P[6])
    x2 = x * x
    small = x + jnp.fma(x2, np.float32(-0.5), (x * x2) * (num / den))
    return jnp.where(jnp.abs(x) < _LOG1P_SMALL, small, big)


def _exp32_value(x):
    x = _daz(x)
    xc = jnp.clip(x, np.float32(-87.8), np.float32(88.8))
    n = jnp.floor(jnp.fma(xc, _EXP_LOG2E, np.float32(0.5)))
    n = jnp.clip(n, np.float32(-127.0), np.float32(127.0))
    r = jnp.fma(-_LOG_Q2, n, xc)
    r = jnp.fma(-_LOG_Q1, n, r)
    p = jnp.fma(r, _EXP_P[0], _EXP_P[1])
    p = jnp.fma(p, r, _EXP_P[2])
    p = jnp.fma(p, r, _EXP_P[3])
    p = jnp.fma(p, r, _EXP_P[4])
    p = jnp.fma(p, r, np.float32(0.5))
    p = np.float32(1.0) + jnp.fma(p, r * r, r)
    whole = jnp.where(jnp.isnan(n) | (n == -127.0), np.float32(0.0), n).astype(jnp.int32)
    scale = jnp.where(n == -127.0, np.float32(0.0), jnp.ldexp(np.float32(1.0), whole))
    out = p * scale
    return jnp.where(jnp.abs(out) < _TINY32, out * np.float32(0.0), out)  # flushed to zero


def _erf32(x):
    """XLA's EmitErfF32: an odd/even rational function, 1 in magnitude beyond 3.8325."""
    clamp = jnp.abs(x) >= np.float32(3.832506856900711)
    sign = jnp.where(x < 0.0, np.float32(-1.0), np.float32(1.0))
    x = jnp.clip(x, np.float32(-4.0), np.float32(4.0))  # the same values; no inf / inf
    x2 = x * x
    p = jnp.fma(x2, np.float32(0.00022905065861350646), np.float32(0.0034082910107109506))
    p = jnp.fma(x2, p, np.float32(0.050955695062380861))
    p = jnp.fma(x2, p, np.float32(0.18520832239976145))
    p = jnp.fma(x2, p, np.float32(1.128379143519084))
    p = x * p
    q = jnp.fma(x2, np.float32(-1.1791602954361697e-7), np.float32(0.000023547966471313185))
    q = jnp.fma(x2, q, np.float32(0.0010179625278914885))
    q = jnp.fma(x2, q, np.float32(0.014070470171167667))
    q = jnp.fma(x2, q, np.float32(0.11098505178285362))
    q = jnp.fma(x2, q, np.float32(0.49746925110067538))
    q = jnp.fma(x2, q, np.float32(1.0))
    return jnp.where(clamp, sign, p / q)


def log(x):
    if x.dtype == np.float64:
        return jnp.log(x)
    xf = x.astype(jnp.float32)
    sg = lax.stop_gradient(xf)
    positive = sg > 0.0
    slope = jnp.where(positive, 1.0 / jnp.where(positive, sg, 1.0), 0.0)
    value = _with_derivative(_log32_value(sg), xf, slope)
    return value.astype(x.dtype)


def log1p(x):
    if x.dtype == np.float64:
        return jnp.log1p(x)
    xf = x.astype(jnp.float32)
    sg = lax.stop_gradient(xf)
    positive = sg > -1.0
    slope = jnp.where(positive, 1.0 / jnp.where(positive, 1.0 + sg, 1.0), 0.0)
    value = _with_derivative(_log1p32_value(sg), xf, slope)
    return value.astype(x.dtype)


def exp(x):
    if x.dtype == np.float64:
        return jnp.exp(x)
    xf = x.astype(jnp.float32)
    sg = lax.stop_gradient(xf)
    value = _exp32_value(sg)
    return _with_derivative(value, xf, lax.stop_gradient(value)).astype(x.dtype)


def erf(x):
    if x.dtype == np.float64:
        return jnp.erf(x)
    xf = x.astype(jnp.float32)
    sg = lax.stop_gradient(xf)
    slope = _TWO_OVER_SQRT_PI * jnp.exp(-sg * sg)
    return _with_derivative(_erf32(sg), xf, slope).astype(x.dtype)


def _erfinv32(x):
    w = -log1p(-x * x)
    lt = w < 5.0
    w = jnp.where(lt, w - 2.5, jnp.sqrt(w) - 3.0)
    p = jnp.where(lt, np.float32(2.81022636e-08), np.float32(-0.000200214257))
    p = jnp.fma(p, w, jnp.where(lt, np.float32(3.43273939e-07), np.float32(0.000100950558)))
    p = jnp.fma(p, w, jnp.where(lt, np.float32(-3.5233877e-06), np.float32(0.00134934322)))
    p = jnp.fma(p, w, jnp.where(lt, np.float32(-4.39150654e-06), np.float32(-0.00367342844)))
    p = jnp.fma(p, w, jnp.where(lt, np.float32(0.00021858087), np.float32(0.00573950773)))
    p = jnp.fma(p, w, jnp.where(lt, np.float32(-0.00125372503), np.float32(-0.0076224613)))
    p = jnp.fma(p, w, jnp.where(lt, np.float32(-0.00417768164), np.float32(0.00943887047)))
    p = jnp.fma(p, w, jnp.where(lt, np.float32(0.246640727), np.float32(1.00167406)))
    p = jnp.fma(p, w, jnp.where(lt, np.float32(1.50140941), np.float32(2.83297682)))
    inf = jnp.where(x > 0.0, np.float32(np.inf), np.float32(-np.inf))
    return jnp.where(jnp.abs(x) == 1.0, inf, p * x)


def _erfinv64(x):
    """XLA's ErfInv64: three polynomials in w = -log1p(-x^2) (w < 6.25, w < 16, w >= 16) of
    23, 19 and 17 coefficients, aligned at their highest-degree ends."""
    w = -jnp.log1p(-x * x)
    lt625 = w < 6.25
    lt16 = w < 16.0
    w = jnp.where(lt625, w - 3.125, jnp.sqrt(w) - jnp.where(lt16, 3.25, 5.0))
    c = jnp.where(lt16, 2.2137376921775787049e-09, -2.7109920616438573243e-11)
    p = jnp.where(lt625, -3.6444120640178196996e-21, c)
    c = jnp.where(lt16, 9.0756561938885390979e-08, -2.5556418169965252055e-10)
    p = jnp.fma(p, w, jnp.where(lt625, -1.685059138182016589e-19, c))
    c = jnp.where(lt16, -2.7517406297064545428e-07, 1.5076572693500548083e-09)
    p = jnp.fma(p, w, jnp.where(lt625, 1.2858480715256400167e-18, c))
    c = jnp.where(lt16, 1.8239629214389227755e-08, -3.7894654401267369937e-09)
    p = jnp.fma(p, w, jnp.where(lt625, 1.115787767802518096e-17, c))
    c = jnp.where(lt16, 1.5027403968909827627e-06, 7.6157012080783393804e-09)
    p = jnp.fma(p, w, jnp.where(lt625, -1.333171662854620906e-16, c))
    c = jnp.where(lt16, -4.013867526981545969e-06, -1.4960026627149240478e-08)
    p = jnp.fma(p, w, jnp.where(lt625, 2.0972767875968561637e-17, c))
    c = jnp.where(lt16, 2.9234449089955446044e-06, 2.9147953450901080826e-08)
    p = jnp.fma(p, w, jnp.where(lt625, 6.6376381343583238325e-15, c))
    c = jnp.where(lt16, 1.2475304481671778723e-05, -6.7711997758452339498e-08)
    p = jnp.fma(p, w, jnp.where(lt625, -4.0545662729752068639e-14, c))
    c = jnp.where(lt16, -4.7318229009055733981e-05, 2.2900482228026654717e-07)
    p = jnp.fma(p, w, jnp.where(lt625, -8.1519341976054721522e-14, c))
    c = jnp.where(lt16, 6.8284851459573175448e-05, -9.9298272942317002539e-07)
    p = jnp.fma(p, w, jnp.where(lt625, 2.6335093153082322977e-12, c))
    c = jnp.where(lt16, 2.4031110387097893999e-05, 4.5260625972231537039e-06)
    p = jnp.fma(p, w, jnp.where(lt625, -1.2975133253453532498e-11, c))
    c = jnp.where(lt16, -0.0003550375203628474796, -1.9681778105531670567e-05)
    p = jnp.fma(p, w, jnp.where(lt625, -5.4154120542946279317e-11, c))
    c = jnp.where(lt16, 0.00095328937973738049703, 7.5995277030017761139e-05)
    p = jnp.fma(p, w, jnp.where(lt625, 1.051212273321532285e-09, c))
    c = jnp.where(lt16, -0.0016882755560235047313, -0.00021503011930044477347)
    p = jnp.fma(p, w, jnp.where(lt625, -4.1126339803469836976e-09, c))
    c = jnp.where(lt16, 0.0024914420961078508066, -0.00013871931833623122026)
    p = jnp.fma(p, w, jnp.where(lt625, -2.9070369957882005086e-08, c))
    c = jnp.where(lt16, -0.0037512085075692412107, 1.0103004648645343977)
    p = jnp.fma(p, w, jnp.where(lt625, 4.2347877827932403518e-07, c))
    c = jnp.where(lt16, 0.005370914553590063617, 4.8499064014085844221)
    p = jnp.fma(p, w, jnp.where(lt625, -1.3654692000834678645e-06, c))
    # the w >= 16 polynomial is complete; the others go on
    c = jnp.where(lt625, -1.3882523362786468719e-05, 1.0052589676941592334)
    p = jnp.where(lt16, jnp.fma(p, w, c), p)
    c = jnp.where(lt625, 0.0001867342080340571352, 3.0838856104922207635)
    p = jnp.where(lt16, jnp.fma(p, w, c), p)
    # and the w < 6.25 one has four more
    p = jnp.where(lt625, jnp.fma(p, w, -0.00074070253416626697512), p)
    p = jnp.where(lt625, jnp.fma(p, w, -0.0060336708714301490533), p)
    p = jnp.where(lt625, jnp.fma(p, w, 0.24015818242558961693), p)
    p = jnp.where(lt625, jnp.fma(p, w, 1.6536545626831027356), p)
    inf = jnp.where(x > 0.0, np.inf, -np.inf)
    return jnp.where(jnp.abs(x) == 1.0, inf, p * x)


def erfinv(x):
    """Inverse error function of a float array (float16, float32 or float64). Its derivative
    is the exact one, sqrt(pi)/2 * exp(erfinv(x)**2), as in JAX."""
    sg = lax.stop_gradient(x)
    if x.dtype == np.float64:
        value = _erfinv64(sg)
    elif x.dtype == np.float32:
        value = _erfinv32(sg)
    else:
        value = _erfinv32(sg.astype(jnp.float32)).astype(x.dtype)
    slope = _HALF_SQRT_PI * jnp.exp(value * value)
    return _with_derivative(value, x, slope)


def cholesky(a):
    """Lower Cholesky factor of a batch of symmetric positive definite matrices ``(..., n, n)``
    (column by column: a loop of n steps, each on whole arrays)."""
    n = a.shape[-1]
    idx = jnp.arange(n)
    low = jnp.zeros_like(a)
    for j in range(n):
        row = low[..., j, :]                     # row j: zero from column j on
        d = jnp.sqrt(a[..., j, j] - jnp.sum(row * row, axis=-1))
        col = (a[..., :, j] - jnp.sum(low * jnp.expand_dims(row, -2), axis=-1))
        col = col / jnp.expand_dims(d, -1)
        col = jnp.where(idx > j, col, jnp.where(idx == j, jnp.expand_dims(d, -1), 0.0))
        low = low.at[..., :, j].set(col)
    return low
