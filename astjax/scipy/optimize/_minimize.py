"""``minimize(method='BFGS')``, as JAX's ``jax.scipy.optimize.minimize`` (Wright and
Nocedal's algorithm 6.1 with JAX's line search, ``_line_search.py``), in ``astjax.numpy``:
it runs eagerly and under ``jit`` and ``vmap`` (a ``while`` per example)."""
from typing import NamedTuple

import numpy as np

import astjax.numpy as jnp
from astjax._src.ad.api import value_and_grad
from astjax._src.random.checks import static_helper  # evaluated while generating code

from ._line_search import line_search


class OptimizeResults(NamedTuple):
    """x: the solution; success; status (0 converged, 1 maxiter reached, 2 + the line
    search's status where it failed); fun, jac and hess_inv at x; nfev, njev, nit."""
    x: object
    success: object
    status: object
    fun: object
    jac: object
    hess_inv: object
    nfev: object
    njev: object
    nit: object


_BFGS_OPTIONS = ("maxiter", "norm", "gtol", "line_search_maxiter")


@static_helper
def _bfgs_options(method, options):
    if method.lower() != "bfgs":
        raise ValueError(f"Method {method} not recognized")
    options = {} if options is None else dict(options)
    unknown = sorted(set(options) - set(_BFGS_OPTIONS))
    if unknown:
        raise TypeError(f"minimize_bfgs() got unexpected keyword arguments {unknown}")
    return (options.get("maxiter"), options.get("norm", np.inf), options.get("gtol", 1e-5),
            options.get("line_search_maxiter", 10))


def minimize(fun, x0, args=(), *, method, tol=None, options=None):
    """Minimize ``fun(x, *args)`` from the 1-D ``x0`` with ``method='BFGS'`` (``options``:
    # (JAX's TypeError for ``args`` not a tuple is not raised: compiled code cannot tell a
    # tuple from a list)
    maxiter, norm, gtol, line_search_maxiter; ``tol`` is ignored, as in JAX)."""
    # (JAX's TypeError for ``args`` not a tuple is not raised: compiled code cannot tell a
    # tuple from a list)
    maxiter, norm, gtol, ls_maxiter = _bfgs_options(method, options)
    x0 = jnp.asarray(x0)
    if maxiter is None:
        maxiter = x0.size * 200
    d = x0.shape[0]
    f_k, g_k = value_and_grad(fun)(x0, *args)
    converged = jnp.linalg.norm(g_k, ord=norm) < gtol
    failed = jnp.asarray(False)
    k = 0
    nfev = 1
    x_k = x0
    h_k = jnp.eye(d, dtype=x0.dtype)
    old_old_fval = f_k + jnp.linalg.norm(g_k) / 2
    ls_status = 0
    while ~converged & ~failed & (k < maxiter):
        p_k = -jnp.dot(h_k, g_k)
        ls_failed, ls_nfev, a_k, f_kp1, g_kp1, ls_status = line_search(
            fun, args, x_k, p_k, f_k, old_old_fval, g_k, ls_maxiter)
        nfev = nfev + ls_nfev
        failed = ls_failed
        s_k = a_k * p_k
        y_k = g_kp1 - g_k
        rho_k = jnp.reciprocal(jnp.dot(y_k, s_k))
        w = jnp.eye(d, dtype=rho_k.dtype) - rho_k * (s_k[:, None] * y_k[None, :])
        h_kp1 = w @ h_k @ w.T + rho_k * s_k[:, None] * s_k[None, :]
        h_k = jnp.where(jnp.isfinite(rho_k), h_kp1, h_k)
        converged = jnp.linalg.norm(g_kp1, ord=norm) < gtol
        k = k + 1
        x_k = x_k + s_k
        old_old_fval = f_k
        f_k = f_kp1
        g_k = g_kp1
    status = jnp.where(converged, 0, jnp.where(k == maxiter, 1,
                                               jnp.where(failed, 2 + ls_status, -1)))
    return OptimizeResults(x=x_k, success=converged & ~failed, status=status, fun=f_k,
                           jac=g_k, hess_inv=h_k, nfev=jnp.asarray(nfev),
                           njev=jnp.asarray(nfev), nit=jnp.asarray(k))
