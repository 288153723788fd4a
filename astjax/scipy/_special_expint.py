"""expi, exp1, expn, sici and spence of ``astjax.scipy.special``: JAX 0.10.2's ports of
Cephes (ei.c, expn.c, sici.c, spence.c) and JAX's custom derivatives, in ``astjax.numpy``.
JAX runs expn's series and continued fraction per element (vectorize + while_loop); here
they run on the whole array, each element frozen once it has converged, so the values are
the same."""
from functools import partial

import numpy as np

import astjax.numpy as jnp
from astjax._src.ad.custom import custom_jvp
from astjax._src.ops.special import digamma, gammaln
from astjax._src.random.checks import static_helper  # evaluated while generating code
from astjax.numpy._composites import _inexact, _inexact2

from ._special_erf import _horner, _kind

_EULER = 0.5772156649015329
_BIG = 1.44115188075855872e17


@static_helper
def _eps(dtype):
    return float(np.finfo(dtype).eps)


# --- expn (Cephes expn.c) --------------------------------------------------------------------

def _expn_series(x, n):
    """E_n(x) for 0 < x <= 1: the power series, with psi(n) - log(x) (JAX sums 1 / i)."""
    eps = _eps(x.dtype)
    z = -x
    xk = jnp.zeros_like(x)
    yk = jnp.ones_like(x)
    pk = 1.0 - n
    ans = jnp.where(n == 1.0, 0.0, 1.0 / (1.0 - jnp.where(n == 1.0, 2.0, n)))
    active = x > 0.0
    while jnp.any(active):
        xk = xk + 1.0
        yk = jnp.where(active, yk * z / xk, yk)
        pk = pk + 1.0
        ans = jnp.where(active & (pk != 0.0), ans + yk / pk, ans)
        t = jnp.where(ans != 0.0, jnp.abs(yk / ans), 1.0)
        active = active & (t > eps)
    psi = digamma(n) - jnp.log(x)
    return z ** (n - 1.0) * psi / jnp.exp(gammaln(n)) - ans


def _expn_fraction(x, n):
    """E_n(x) for x > 1: the continued fraction, rescaled when it grows past 2^57."""
    eps = _eps(x.dtype)
    pkm2 = jnp.ones_like(x)
    qkm2 = x
    pkm1 = jnp.ones_like(x)
    qkm1 = x + n
    ans = 1.0 / (x + n)
    r = jnp.zeros_like(x)
    active = x > 0.0
    k = 1
    while jnp.any(active):
        k = k + 1
        if k % 2 == 1:
            yk = jnp.ones_like(x)
            xk = n + (k - 1) // 2
        else:
            yk = x
            xk = jnp.zeros_like(x) + k // 2
        pk = pkm1 * yk + pkm2 * xk
        qk = qkm1 * yk + qkm2 * xk
        nonzero = qk != 0.0
        r = jnp.where(active & nonzero, pk / jnp.where(nonzero, qk, 1.0), r)
        t = jnp.where(nonzero, jnp.abs((ans - r) / r), 1.0)
        ans = jnp.where(active & nonzero, r, ans)
        scale = jnp.where(jnp.abs(pk) > _BIG, 1.0 / _BIG, 1.0)
        pkm2 = jnp.where(active, pkm1 * scale, pkm2)
        pkm1 = jnp.where(active, pk * scale, pkm1)
        qkm2 = jnp.where(active, qkm1 * scale, qkm2)
        qkm1 = jnp.where(active, qk * scale, qkm1)
        active = active & (t > eps)
    return ans * jnp.exp(-x)


def _expn_large_order(x, n):
    """E_n(x) for n >= 5000: the first terms of the asymptotic expansion in n."""
    xk = x + n
    yk = 1.0 / (xk * xk)
    ans = yk * n * (6.0 * x * x - 8.0 * n * x + n * n)
    ans = yk * (ans + n * (n - 2.0 * x))
    ans = yk * (ans + n)
    return (ans + 1.0) * jnp.exp(-x) / xk


def _expn_impl(n, x):
    """JAX's jnp.piecewise, where the last true condition wins: x > 1 takes the continued
    fraction whatever n (so E_n(x) of a negative n above 1 is a number, and of n >= 5000
    too), n >= 5000 the expansion in n (at x <= 0 too), then n = 0, x = 0, NaN below 0."""
    bad = (n < 0.0) | (x < 0.0)
    at_zero = x == 0.0
    order_zero = (n == 0.0) & (x >= 0.0)
    large_order = n >= 5000.0
    fraction = x > 1.0
    series = ~(bad | at_zero | order_zero | large_order | fraction)
    # each branch on inputs of its own, so no other element lengthens its loop
    out = _expn_series(jnp.where(series, x, 0.5), jnp.where(series, n, 1.0))
    out = jnp.where(bad, jnp.nan, out)
    # JAX's value at x = 0: 1 / n for 2 <= n < 5000 (SciPy: 1 / (n - 1))
    out = jnp.where(at_zero, jnp.where(n < 2.0, jnp.inf, 1.0 / jnp.where(n == 1.0, 2.0, n)),
                    out)
    out = jnp.where(order_zero, jnp.exp(-x) / x, out)
    out = jnp.where(large_order, _expn_large_order(x, n), out)
    return jnp.where(fraction, _expn_fraction(jnp.where(fraction, x, 2.0),
                                              jnp.where(fraction, n, 1.0)), out)


@partial(custom_jvp, nondiff_argnums=(0,))
def _expn(n, x):
    return _expn_impl(n, x)


@_expn.defjvp
def _expn_jvp(n, primals, tangents):
    (x,), (t,) = primals, tangents
    return _expn(n, x), -t * _expn(n - 1.0, x)


def expn(n, x):
    """The generalized exponential integral E_n(x) (Cephes' expn, as JAX: n is promoted
    with x, and its derivative is taken in x only)."""
    n, x = _inexact2(n, x)
    if _kind(x.dtype) == "c":
        raise ValueError("expn does not support complex-valued inputs.")
    n, x = n + jnp.zeros_like(x), x + jnp.zeros_like(n)  # one dtype and shape
    return _expn(n, x)


def exp1(x):
    """E_1(x) = expn(1, x)."""
    x = _inexact(x)
    if _kind(x.dtype) == "c":
        raise ValueError("exp1 does not support complex-valued inputs.")
    return _expn(jnp.ones_like(x), x)


# --- expi (Cephes ei.c) -----------------------------------------------------------------------

# x * A(x) / B(x) + gamma + log(x) on (0, 2]; then exp(x) / x (1 + A(1/x) / (x B(1/x))) on
# (2, 4], (4, 8], ..., (32, 64] and above 64 (highest first)
_EI_SMALL = ((-5.350447357812542947283e0, 2.185049168816613393830e2, -4.176572384826693777058e3,
              5.541176756393557601232e4, -3.313381331178144034309e5, 1.592627163384945414220e6),
             (1.0, -5.250547959112862969197e1, 1.259616186786790571525e3,
              -1.756549581973534652631e4, 1.493062117002725991967e5, -7.294949239640527645655e5,
              1.592627163384945429726e6))
_EI = (
    ((1.981808503259689673238e-2, -1.271645625984917501326e0, -2.088160335681228318920e0,
      2.755544509187936721172e0, -4.409507048701600257171e-1, 4.665623805935891391017e-2,
      -1.545042679673485262580e-3, 7.059980605299617478514e-5),
     (1.0, 1.476498670914921440652e0, 5.629177174822436244827e-1, 1.699017897879307263248e-1,
      2.291647179034212017463e-2, 4.450150439728752875043e-3, 1.727439612206521482874e-4,
      3.953167195549672482304e-5)),
    ((-1.373215375871208729803e0, -7.084559133740838761406e-1, 1.580806855547941010501e0,
      -2.601500427425622944234e-1, 2.994674694113713763365e-2, -1.038086040188744005513e-3,
      4.371064420753005429514e-5, 2.141783679522602903795e-6),
     (1.0, 8.585231423622028380768e-1, 4.483285822873995129957e-1, 7.687932158124475434091e-2,
      2.449868241021887685904e-2, 8.832165941927796567926e-4, 4.590952299511353531215e-4,
      -4.729848351866523044863e-6, 2.665195537390710170105e-6)),
    ((-2.106934601691916512584e0, 1.732733869664688041885e0, -2.423619178935841904839e-1,
      2.322724180937565842585e-2, 2.372880440493179832059e-4, -8.343219561192552752335e-5,
      1.363408795605250394881e-5, -3.655412321999253963714e-7, 1.464941733975961318456e-8,
      6.176407863710360207074e-10),
     (1.0, -2.298062239901678075778e-1, 1.105077041474037862347e-1,
      -1.566542966630792353556e-2, 2.761106850817352773874e-3, -2.089148012284048449115e-4,
      1.708528938807675304186e-5, -4.459311796356686423199e-7, 1.394634930353847498145e-8,
      6.150865933977338354138e-10)),
    ((-2.458119367674020323359e-1, -1.483382253322077687183e-1, 7.248291795735551591813e-2,
      -1.348315687380940523823e-2, 1.342775069788636972294e-3, -7.942465637159712264564e-5,
      2.644179518984235952241e-6, -4.239473659313765177195e-8),
     (1.0, -1.044225908443871106315e-1, -2.676453128101402655055e-1,
      9.695000254621984627876e-2, -1.601745692712991078208e-2, 1.496414899205908021882e-3,
      -8.462452563778485013756e-5, 2.728938403476726394024e-6, -4.239462431819542051337e-8)),
    ((1.212561118105456670844e-1, -5.823133179043894485122e-1, 2.348887314557016779211e-1,
      -3.040034318113248237280e-2, 1.510082146865190661777e-3, -2.523137095499571377122e-5),
     (1.0, -1.002252150365854016662e0, 2.928709694872224144953e-1, -3.337004338674007801307e-2,
      1.560544881127388842819e-3, -2.523137093603234562648e-5)),
    ((-7.657847078286127362028e-1, 6.886192415566705051750e-1, -2.132598113545206124553e-1,
      3.346107552384193813594e-2, -3.076541477344756050249e-3, 1.747119316454907477380e-4,
      -6.103711682274170530369e-6, 1.218032765428652199087e-7, -1.086076102793290233007e-9),
     (1.0, -1.888802868662308731041e0, 1.066691687211408896850e0, -2.751915982306380647738e-1,
      3.930852688233823569726e-2, -3.414684558602365085394e-3, 1.866844370703555398195e-4,
      -6.345146083130515357861e-6, 1.239754287483206878024e-7, -1.086076102793126632978e-9)))


def _padded(polynomials):
    """The polynomials (highest first) as rows of one table, padded in front with zeros
    (Horner's 0 * w + 0 is exact, so the values are those of the unpadded ones),
    transposed: row j holds every polynomial's j-th coefficient."""
    width = max(len(p) for p in polynomials)
    return np.array([(0.0,) * (width - len(p)) + tuple(p) for p in polynomials]).T


_EI_A = _padded([a for a, _ in _EI])
_EI_B = _padded([b for _, b in _EI])


@custom_jvp
def expi(x):
    """The exponential integral Ei(x) (Cephes' ei; as JAX: NaN at 0, +-inf and below 0
    -exp1(-x))."""
    x = _inexact(x)
    if _kind(x.dtype) == "c":
        raise ValueError("expi does not support complex-valued inputs.")
    small = (x > 0.0) & (x <= 2.0)
    s = jnp.where(small, x, 1.0)
    near = s * (_horner(_EI_SMALL[0], s) / _horner(_EI_SMALL[1], s)) + _EULER + jnp.log(s)
    # above 2: one rational function whose coefficients each element takes from its range
    # (2, 4], ..., (32, 64] or above (one gather each, where seven branches compile slowly);
    # 0, inf and NaN take the last range's, whose values at them are JAX's NaN
    region = ((x > 4.0).astype(np.int32) + (x > 8.0) + (x > 16.0) + (x > 32.0)
              + (x > 64.0) + ~(x > 2.0) * 5)
    x_far = jnp.where(small, 100.0, x)
    w = 1.0 / x_far
    numerator = jnp.zeros_like(w)
    denominator = jnp.zeros_like(w)
    for j in range(_EI_A.shape[0]):
        numerator = numerator * w + jnp.asarray(_EI_A[j], x.dtype)[region]
        denominator = denominator * w + jnp.asarray(_EI_B[j], x.dtype)[region]
    far = jnp.exp(x_far) * w * (w * (numerator / denominator) + 1.0)
    negative = x < 0.0
    out = jnp.where(small, near, far)
    return jnp.where(negative, -exp1(jnp.where(negative, -x, 1.0)), out)


@expi.defjvp
def _expi_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return expi(x), jnp.exp(x) / x * t


# --- sici (Cephes sici.c) ---------------------------------------------------------------------

_SN = (-8.39167827910303881427e-11, 4.62591714427012837309e-8, -9.75759303843632795789e-6,
       9.76945438170435310816e-4, -4.13470316229406538752e-2, 1.00000000000000000302e0)
_SD = (2.03269266195951942049e-12, 1.27997891179943299903e-9, 4.41827842801218905784e-7,
       9.96412122043875552487e-5, 1.42085239326149893930e-2, 9.99999999999999996984e-1)
_CN = (2.02524002389102268789e-11, -1.35249504915790756375e-8, 3.59325051419993077021e-6,
       -4.74007206873407909465e-4, 2.89159652607555242092e-2, -1.00000000000000000080e0)
_CD = (4.07746040061880559506e-12, 3.06780997581887812692e-9, 1.23210355685883423679e-6,
       3.17442024775032769882e-4, 5.10028056236446052392e-2, 4.00000000000000000080e0)
_FN4 = (4.23612862892216586994e0, 5.45937717161812843388e0, 1.62083287701538329132e0,
        1.67006611831323023771e-1, 6.81020132472518137426e-3, 1.08936580650328664411e-4,
        5.48900223421373614008e-7)
_FD4 = (1.0, 8.16496634205391016773e0, 7.30828822505564552187e0, 1.86792257950184183883e0,
        1.78792052963149907262e-1, 7.01710668322789753610e-3, 1.10034357153915731354e-4,
        5.48900252756255700982e-7)
_GN4 = (8.71001698973114191777e-2, 6.11379109952219284151e-1, 3.97180296392337498885e-1,
        7.48527737628469092119e-2, 5.38868681462177273157e-3, 1.61999794598934024525e-4,
        1.97963874140963632189e-6, 7.82579040744090311069e-9)
_GD4 = (1.0, 1.64402202413355338886e0, 6.66296701268987968381e-1, 9.88771761277688796203e-2,
        6.22396345441768420760e-3, 1.73221081474177119497e-4, 2.02659182086343991969e-6,
        7.82579218933534490868e-9)
_FN8 = (4.55880873470465315206e-1, 7.13715274100146711374e-1, 1.60300158222319456320e-1,
        1.16064229408124407915e-2, 3.49556442447859055605e-4, 4.86215430826454749482e-6,
        3.20092790091004902806e-8, 9.41779576128512936592e-11, 9.70507110881952024631e-14)
_FD8 = (1.0, 9.17463611873684053703e-1, 1.78685545332074536321e-1, 1.22253594771971293032e-2,
        3.58696481881851580297e-4, 4.92435064317881464393e-6, 3.21956939101046018377e-8,
        9.43720590350276732376e-11, 9.70507110881952025725e-14)
_GN8 = (6.97359953443276214934e-1, 3.30410979305632063225e-1, 3.84878767649974295920e-2,
        1.71718239052347903558e-3, 3.48941165502279436777e-5, 3.47131167084116673800e-7,
        1.70404452782044526189e-9, 3.85945925430276600453e-12, 3.14040098946363334640e-15)
_GD8 = (1.0, 1.68548898811011640017e0, 4.87852258695304967486e-1, 4.67913194259625806320e-2,
        1.90284426674399523638e-3, 3.68475504442561108162e-5, 3.57043223443740838771e-7,
        1.72693748966316146736e-9, 3.87830166023954706752e-12, 3.14040098946363335242e-15)


@custom_jvp
def sici(x):
    """The sine and cosine integrals (Si(x), Ci(x)) of a real x (Cephes' sici, as JAX:
    the series up to |x| = 4, the rational asymptotic forms up to 1e9, then the first term;
    Ci is computed at |x| and is NaN at -inf)."""
    x = _inexact(x)
    if _kind(x.dtype) == "c":
        raise ValueError(f"Argument `x` to sici must be real-valued. Got dtype {x.dtype}.")
    ax = jnp.abs(x)
    near = ax <= 4.0
    a = jnp.where(near, ax, 1.0)
    t = a * a
    si_near = jnp.where(ax == 0.0, 0.0, a * _horner(_SN, t) / _horner(_SD, t))
    ci_near = jnp.where(ax == 0.0, -jnp.inf,
                        _EULER + jnp.log(a) + t * _horner(_CN, t) / _horner(_CD, t))
    middle = (ax > 4.0) & (ax <= 1e9)
    b = jnp.where(middle, ax, 5.0)
    s, c = jnp.sin(b), jnp.cos(b)
    z = 1.0 / (b * b)
    below8 = b < 8.0
    f = jnp.where(below8, _horner(_FN4, z) / (b * _horner(_FD4, z)),
                  _horner(_FN8, z) / (b * _horner(_FD8, z)))
    g = jnp.where(below8, z * _horner(_GN4, z) / _horner(_GD4, z),
                  z * _horner(_GN8, z) / _horner(_GD8, z))
    si_middle = np.pi / 2 - f * c - g * s
    ci_middle = f * s - g * c
    infinite = jnp.isposinf(ax)
    si_far = jnp.where(infinite, np.pi / 2, np.pi / 2 - jnp.cos(ax) / ax)
    ci_far = jnp.where(infinite, 0.0, jnp.sin(ax) / ax)
    si = jnp.where(near, si_near, jnp.where(middle, si_middle, si_far))
    ci = jnp.where(near, ci_near, jnp.where(middle, ci_middle, ci_far))
    return jnp.sign(x) * si, jnp.where(jnp.isneginf(x), jnp.nan, ci)


@sici.defjvp
def _sici_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return sici(x), (jnp.sinc(x / np.pi) * t, jnp.cos(x) / x * t)


# --- spence (Cephes spence.c) -----------------------------------------------------------------

_SPENCE_A = (4.65128586073990045278e-5, 7.31589045238094711071e-3, 1.33847639578309018650e-1,
             8.79691311754530315341e-1, 2.71149851196553469920e0, 4.25697156008121755724e0,
             3.29771340985225106936e0, 1.00000000000000000126e0)
_SPENCE_B = (6.90990488912553276999e-4, 2.54043763932544379113e-2, 2.82974860602568089943e-1,
             1.41172597751831069617e0, 3.63800533345137075418e0, 5.03278880143316990390e0,
             3.54771340985225096217e0, 9.99999999999999998740e-1)


def spence(x):
    """Spence's function int_1^x log(t) / (1 - t) dt for real x >= 0 (NaN below, as JAX).
    Its derivative is that of the formula, as in JAX, except that each branch is computed
    on inputs of its own, so it is log(x) / (1 - x) on (1, 2] too (JAX: NaN there)."""
    x = jnp.asarray(x)
    if x.dtype != np.float32 and x.dtype != np.float64:
        raise TypeError(f"x.dtype={x.dtype} is not supported, see docstring for supported "
                        f"types.")
    special = (x <= 0.0) | (x == 1.0) | jnp.isnan(x)
    x_calc = jnp.where(special, 0.5, x)
    above2 = x_calc > 2.0
    x_calc = jnp.where(above2, 1.0 / x_calc, x_calc)
    above15 = x_calc > 1.5
    below05 = x_calc < 0.5
    w = jnp.where(above15, 1.0 / x_calc - 1.0, jnp.where(below05, -x_calc, x_calc - 1.0))
    y = -w * _horner(_SPENCE_A, w) / _horner(_SPENCE_B, w)
    low = jnp.where(below05, x_calc, 0.25)
    y = jnp.where(below05, np.pi ** 2 / 6.0 - jnp.log(low) * jnp.log(1.0 - low) - y, y)
    y = jnp.where(above2 | above15, -0.5 * jnp.log(x_calc) ** 2 - y, y)
    out = jnp.where(x == 1.0, 0.0, jnp.where(x == 0.0, np.pi ** 2 / 6.0, y))
    return jnp.where((x < 0.0) | jnp.isnan(x), jnp.nan, out).astype(x.dtype)
