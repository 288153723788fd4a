"""The strong-Wolfe line search of JAX's BFGS (``jax._src.scipy.optimize.line_search``:
Wright and Nocedal's algorithms 3.5 and 3.6, zoom by cubic, quadratic or bisection steps),
in ``astjax.numpy`` with ``while`` loops on values, which compile. Each choice JAX makes
with ``where`` is a ``where`` here too, in the same order, so the steps are JAX's."""
import numpy as np

import astjax.numpy as jnp
from astjax._src.ad.api import value_and_grad
from astjax._src.random.checks import static_helper  # evaluated while generating code


@static_helper
def _is_64(dtype):
    return np.dtype(dtype).itemsize >= 8


def _restricted(fun, args, xk, pk, t):
    """phi(t) = fun(xk + t pk), its derivative in t and fun's gradient there."""
    t = jnp.asarray(t).astype(pk.dtype)
    phi, g = value_and_grad(fun)(xk + t * pk, *args)
    return phi, jnp.real(jnp.dot(g, pk)), g


def _cubicmin(a, fa, fpa, b, fb, c, fc):
    db = b - a
    dc = c - a
    denom = (db * dc) ** 2 * (db - dc)
    d0 = fb - fa - fpa * db
    d1 = fc - fa - fpa * dc
    big_a = (dc ** 2 * d0 - db ** 2 * d1) / denom
    big_b = (-dc ** 3 * d0 + db ** 3 * d1) / denom
    radical = big_b * big_b - 3.0 * big_a * fpa
    return a + (-big_b + jnp.sqrt(radical)) / (3.0 * big_a)


def _quadmin(a, fa, fpa, b, fb):
    db = b - a
    big_b = (fb - fa - fpa * db) / (db ** 2)
    return a - fpa / (2.0 * big_b)


def _zoom(fun, args, xk, pk, phi_0, dphi_0, c1, c2, a_lo, phi_lo, dphi_lo, a_hi, phi_hi,
          dphi_hi, g_0, run):
    """Algorithm 3.6: shrink [a_lo, a_hi] to a step meeting the strong Wolfe conditions.
    Returns (failed, a_star, phi_star, dphi_star, g_star, nfev); nothing runs unless
    ``run`` (JAX's ``pass_through``)."""
    done = jnp.asarray(False)
    failed = jnp.asarray(False)
    j = 0
    a_rec = (a_lo + a_hi) / 2.0
    phi_rec = (phi_lo + phi_hi) / 2.0
    a_star = jnp.ones_like(a_lo)
    phi_star = phi_lo
    dphi_star = dphi_lo
    g_star = g_0
    nfev = 0
    threshold = 1e-10 if _is_64(a_lo.dtype) else 1e-5
    while run & ~done & ~failed:
        dalpha = a_hi - a_lo
        a = jnp.minimum(a_hi, a_lo)
        b = jnp.maximum(a_hi, a_lo)
        cchk = 0.2 * dalpha
        qchk = 0.1 * dalpha
        failed = failed | (dalpha <= threshold)
        a_cubic = _cubicmin(a_lo, phi_lo, dphi_lo, a_hi, phi_hi, a_rec, phi_rec)
        use_cubic = (j > 0) & (a_cubic > a + cchk) & (a_cubic < b - cchk)
        a_quad = _quadmin(a_lo, phi_lo, dphi_lo, a_hi, phi_hi)
        use_quad = ~use_cubic & (a_quad > a + qchk) & (a_quad < b - qchk)
        use_bisection = ~use_cubic & ~use_quad
        a_j = jnp.where(use_cubic, a_cubic, a_rec)
        a_j = jnp.where(use_quad, a_quad, a_j)
        a_j = jnp.where(use_bisection, (a_lo + a_hi) / 2.0, a_j)
        phi_j, dphi_j, g_j = _restricted(fun, args, xk, pk, a_j)
        phi_j = phi_j.astype(phi_lo.dtype)
        dphi_j = dphi_j.astype(dphi_lo.dtype)
        nfev = nfev + 1
        hi_to_j = (phi_j > phi_0 + c1 * a_j * dphi_0) | (phi_j >= phi_lo)
        star_to_j = (jnp.abs(dphi_j) <= -c2 * dphi_0) & ~hi_to_j
        hi_to_lo = (dphi_j * (a_hi - a_lo) >= 0.0) & ~hi_to_j & ~star_to_j
        lo_to_j = ~hi_to_j & ~star_to_j
        # (JAX's sequence of replacements, each reading the state the last one left)
        a_rec = jnp.where(hi_to_j, a_hi, a_rec)
        phi_rec = jnp.where(hi_to_j, phi_hi, phi_rec)
        a_hi = jnp.where(hi_to_j, a_j, a_hi)
        phi_hi = jnp.where(hi_to_j, phi_j, phi_hi)
        dphi_hi = jnp.where(hi_to_j, dphi_j, dphi_hi)
        done = star_to_j | done
        a_star = jnp.where(star_to_j, a_j, a_star)
        phi_star = jnp.where(star_to_j, phi_j, phi_star)
        dphi_star = jnp.where(star_to_j, dphi_j, dphi_star)
        g_star = jnp.where(star_to_j, g_j.astype(g_star.dtype), g_star)
        a_rec = jnp.where(hi_to_lo, a_hi, a_rec)
        phi_rec = jnp.where(hi_to_lo, phi_hi, phi_rec)
        a_hi = jnp.where(hi_to_lo, a_lo, a_hi)
        phi_hi = jnp.where(hi_to_lo, phi_lo, phi_hi)
        dphi_hi = jnp.where(hi_to_lo, dphi_lo, dphi_hi)
        a_rec = jnp.where(lo_to_j & ~hi_to_lo, a_lo, a_rec)
        phi_rec = jnp.where(lo_to_j & ~hi_to_lo, phi_lo, phi_rec)
        a_lo = jnp.where(lo_to_j, a_j, a_lo)
        phi_lo = jnp.where(lo_to_j, phi_j, phi_lo)
        dphi_lo = jnp.where(lo_to_j, dphi_j, dphi_lo)
        j = j + 1
        failed = failed | (j >= 30)
    return failed, a_star, phi_star, dphi_star, g_star, nfev


def line_search(fun, args, xk, pk, old_fval, old_old_fval, gfk, maxiter, c1=1e-4, c2=0.9):
    """Algorithm 3.5 from the step JAX starts at. Returns (failed, nfev, a_k, f_k, g_k,
    status): status 0 passed, 1 zoom failed, 3 maxiter reached."""
    phi_0 = old_fval
    dphi_0 = jnp.real(jnp.dot(gfk, pk))
    candidate = 1.01 * 2 * (phi_0 - old_old_fval) / dphi_0
    start_value = jnp.where(candidate > 1, 1.0, candidate)
    done = jnp.asarray(False)
    failed = jnp.asarray(False)
    i = 1
    a_i1 = jnp.zeros_like(phi_0)
    phi_i1 = phi_0
    dphi_i1 = dphi_0
    nfev = 0
    a_star = jnp.zeros_like(phi_0)
    phi_star = phi_0
    dphi_star = dphi_0
    g_star = gfk
    while ~done & (i <= maxiter) & ~failed:
        a_i = jnp.where(i == 1, start_value, a_i1 * 2.0)
        phi_i, dphi_i, g_i = _restricted(fun, args, xk, pk, a_i)
        nfev = nfev + 1
        star_to_zoom1 = (phi_i > phi_0 + c1 * a_i * dphi_0) | ((phi_i >= phi_i1) & (i > 1))
        star_to_i = (jnp.abs(dphi_i) <= -c2 * dphi_0) & ~star_to_zoom1
        star_to_zoom2 = (dphi_i >= 0.0) & ~star_to_zoom1 & ~star_to_i
        f1, a1, p1, d1, g1, n1 = _zoom(fun, args, xk, pk, phi_0, dphi_0, c1, c2, a_i1, phi_i1,
                                       dphi_i1, a_i, phi_i, dphi_i, gfk, star_to_zoom1)
        nfev = nfev + n1
        f2, a2, p2, d2, g2, n2 = _zoom(fun, args, xk, pk, phi_0, dphi_0, c1, c2, a_i, phi_i,
                                       dphi_i, a_i1, phi_i1, dphi_i1, gfk, star_to_zoom2)
        nfev = nfev + n2
        done = star_to_zoom1 | done
        failed = (star_to_zoom1 & f1) | failed
        a_star = jnp.where(star_to_zoom1, a1, a_star)
        phi_star = jnp.where(star_to_zoom1, p1, phi_star)
        dphi_star = jnp.where(star_to_zoom1, d1, dphi_star)
        g_star = jnp.where(star_to_zoom1, g1, g_star)
        done = star_to_i | done
        a_star = jnp.where(star_to_i, a_i, a_star)
        phi_star = jnp.where(star_to_i, phi_i, phi_star)
        dphi_star = jnp.where(star_to_i, dphi_i, dphi_star)
        g_star = jnp.where(star_to_i, g_i, g_star)
        done = star_to_zoom2 | done
        failed = (star_to_zoom2 & f2) | failed
        a_star = jnp.where(star_to_zoom2, a2, a_star)
        phi_star = jnp.where(star_to_zoom2, p2, phi_star)
        dphi_star = jnp.where(star_to_zoom2, d2, dphi_star)
        g_star = jnp.where(star_to_zoom2, g2, g_star)
        i = i + 1
        a_i1 = a_i
        phi_i1 = phi_i
        dphi_i1 = dphi_i
    status = jnp.where(failed, 1, jnp.where(i > maxiter, 3, 0))
    if not _is_64(a_star.dtype):
        a_star = jnp.where(jnp.abs(a_star) < 1e-8, jnp.sign(a_star) * 1e-8, a_star)
    return failed | ~done, nfev, a_star, phi_star, g_star, status
