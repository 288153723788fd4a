"""Special functions that need their own ops (``astjax.scipy.special``): log-gamma, digamma
and polygamma. Each has no accurate short composite, so eagerly they are SciPy's functions
computed in float64 and rounded to the op's dtype; under the Numba backend they lower to
``math.lgamma`` and the kernels of ``backends/numba_cpu/special_kernels.py``. Their VJP
rules are in ``ad/vjp_special.py`` (gammaln' = digamma, digamma' = polygamma(1, .), ...).

They are not in ``astjax.numpy`` (JAX's jnp has none of them): only in its scipy module.
"""
import numpy as np
import scipy.special

from ..errors import ShapeError
from .registry import NAMESPACE, elementwise


def _real(name, dtype):
    if dtype.kind == "c":
        raise ShapeError(f"{name}() does not support complex inputs, as in JAX")


def _in_double(fn):
    """fn on float64 copies of the operands, rounded to their (common) dtype."""
    def impl(*args):
        dtype = np.result_type(*args)
        with np.errstate(all="ignore"):
            out = fn(*[np.asarray(a, np.float64) for a in args])
        return np.asarray(out).astype(dtype)[()]
    impl.__doc__ = fn.__doc__
    return impl


def _digamma(x):
    """scipy's digamma, with JAX's NaN at 0 and the negative integers (poles) and at -inf."""
    out = scipy.special.digamma(x)
    return np.where((x <= 0) & (np.floor(x) == x), np.nan, out)


def _polygamma(n, x):
    """psi^(n)(x) for an integer n >= 0 (NaN for other n), as scipy computes it."""
    n = np.asarray(n)
    ok = (n >= 0) & (np.floor(n) == n)
    safe = np.where(ok, n, 0)
    out = np.where(safe == 0, _digamma(x), scipy.special.polygamma(np.maximum(safe, 1), x))
    return np.where(ok, out, np.nan)


def _gammaln(x):
    """scipy's gammaln, with JAX's inf at -inf (scipy: -inf)."""
    return np.where(x == -np.inf, np.inf, scipy.special.gammaln(x))


gammaln = elementwise("gammaln", _in_double(_gammaln), inexact=True,
                      dtype_check=_real)
digamma = elementwise("digamma", _in_double(_digamma), inexact=True, dtype_check=_real)
# (n computes in x's float dtype: astjax.scipy.special.polygamma checks it is an integer)
polygamma = elementwise("polygamma", _in_double(_polygamma), nin=2, inexact=True,
                        dtype_check=_real)


def _igamma(a, x):
    """scipy's gammainc with JAX's values where they differ: NaN for a == 0 < x < 1 and
    for an infinite a with 1 <= x < inf, 1 for a == x == inf."""
    out = scipy.special.gammainc(a, x)
    out = np.where((a == 0) & (x > 0) & (x < 1), np.nan, out)
    out = np.where(np.isinf(a) & (x >= 1) & (x < np.inf), np.nan, out)
    return np.where(np.isinf(a) & (x == np.inf), 1.0, out)


def _igammac(a, x):
    """scipy's gammaincc with JAX's values where they differ (see _igamma)."""
    out = scipy.special.gammaincc(a, x)
    out = np.where(np.isinf(a) & (x >= 1) & (x < np.inf), np.nan, out)
    return np.where(np.isinf(a) & (x == np.inf), 0.0, out)


def _betainc(a, b, x):
    """scipy's betainc with JAX's values outside a, b > 0 and 0 < x < 1."""
    out = scipy.special.betainc(a, b, x)
    a_zero = (a == 0) | (b == np.inf)
    b_zero = (b == 0) | (a == np.inf)
    out = np.where((b_zero & (x != 1)) | (a_zero & (x == 0)), 0.0, out)
    out = np.where((a_zero & (x != 0)) | (b_zero & (x == 1)), 1.0, out)
    nan = (a < 0) | (b < 0) | (x < 0) | (x > 1) | (a_zero & b_zero)
    return np.where(nan | np.isnan(a) | np.isnan(b) | np.isnan(x), np.nan, out)


def _random_gamma_grad(a, x):
    """JAX's random_gamma_grad, element by element (the Numba kernel: no SciPy function
    computes it)."""
    from ..backends.numba_cpu.special_kernels import random_gamma_grad_array
    a, x = np.broadcast_arrays(np.asarray(a, np.float64), np.asarray(x, np.float64))
    return random_gamma_grad_array(a.ravel(), x.ravel()).reshape(a.shape)


# the regularized incomplete gamma functions P and Q and the incomplete beta function, not
# differentiable as ops: only lax's custom_jvp functions (lax/incomplete.py) call them, and
# their rules give the derivatives
igamma = elementwise("igamma", _in_double(_igamma), nin=2, inexact=True, dtype_check=_real,
                     differentiable=False)
igammac = elementwise("igammac", _in_double(_igammac), nin=2, inexact=True,
                      dtype_check=_real, differentiable=False)
betainc = elementwise("betainc", _in_double(_betainc), nin=3, inexact=True,
                      dtype_check=_real, differentiable=False)
# the derivative of a Gamma(a) sample x in a (lax.random_gamma_grad), not differentiated
random_gamma_grad = elementwise("random_gamma_grad", _in_double(_random_gamma_grad), nin=2,
                                inexact=True, dtype_check=_real, differentiable=False)
igamma.rules["numba_scalar"] = lambda args, dtype: f"_rt.igamma({args[0]}, {args[1]})"
random_gamma_grad.rules["numba_scalar"] = \
    lambda args, dtype: f"_rt.random_gamma_grad({args[0]}, {args[1]})"
betainc.rules["numba_scalar"] = \
    lambda args, dtype: f"_rt.betainc({args[0]}, {args[1]}, {args[2]})"
igammac.rules["numba_scalar"] = lambda args, dtype: f"_rt.igammac({args[0]}, {args[1]})"
gammaln.rules["numba_scalar"] = lambda args, dtype: f"math.lgamma({args[0]})"
digamma.rules["numba_scalar"] = lambda args, dtype: f"_rt.digamma({args[0]})"
polygamma.rules["numba_scalar"] = lambda args, dtype: f"_rt.polygamma({args[0]}, {args[1]})"

for _op in (gammaln, digamma, polygamma, igamma, igammac, betainc, random_gamma_grad):
    del NAMESPACE[_op.name]  # compiled code reaches them through REGISTRY
