"""erfinv, erf, log, log1p, exp and cholesky as XLA computes them, in ``astjax.numpy``; the
float32 values are ops (``ops/bits.py``'s xla_*) computed by ``xla_f32.py``.

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

from ..ops import bits as _bits


_HALF_SQRT_PI = 0.886226925452758
_TWO_OVER_SQRT_PI = 1.1283791670955126


def _with_derivative(value, x, slope):
    """``value`` with derivative ``slope`` with respect to ``x``: value - (sg(x) - x) * slope,
    which keeps the sign of a zero value (adding would not). An infinite slope or ``x``
    counts as slope 0."""
    slope = lax.stop_gradient(jnp.where(jnp.isfinite(slope), slope, 0.0))
    x = jnp.where(jnp.isfinite(x), x, 0.0)
    return value - (lax.stop_gradient(x) - x) * slope


_erfinv32 = _bits.xla_erfinv32  # and astjax.scipy.special's erfinv


def log(x):
    if x.dtype == np.float64:
        return jnp.log(x)
    xf = x.astype(jnp.float32)
    sg = lax.stop_gradient(xf)
    positive = sg > 0.0
    slope = jnp.where(positive, 1.0 / jnp.where(positive, sg, 1.0), 0.0)
    value = _with_derivative(_bits.xla_log32(sg), xf, slope)
    return value.astype(x.dtype)


def log1p(x):
    if x.dtype == np.float64:
        return jnp.log1p(x)
    xf = x.astype(jnp.float32)
    sg = lax.stop_gradient(xf)
    positive = sg > -1.0
    slope = jnp.where(positive, 1.0 / jnp.where(positive, 1.0 + sg, 1.0), 0.0)
    value = _with_derivative(_bits.xla_log1p32(sg), xf, slope)
    return value.astype(x.dtype)


def exp(x):
    if x.dtype == np.float64:
        return jnp.exp(x)
    xf = x.astype(jnp.float32)
    sg = lax.stop_gradient(xf)
    value = _bits.xla_exp32(sg)
    return _with_derivative(value, xf, lax.stop_gradient(value)).astype(x.dtype)


def erf(x):
    if x.dtype == np.float64:
        return jnp.erf(x)
    xf = x.astype(jnp.float32)
    sg = lax.stop_gradient(xf)
    slope = _TWO_OVER_SQRT_PI * jnp.exp(-sg * sg)
    return _with_derivative(_bits.xla_erf32(sg), xf, slope).astype(x.dtype)


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
