"""``lax.linalg.hessenberg``, ``schur`` and ``tridiagonal``: LAPACK's gehrd, gees and sytrd
(through SciPy, as JAX calls them on CPU) in a ``pure_callback``, one matrix at a time over
leading batch axes, so eagerly, under jit on both backends and under vmap. None has a
derivative, as in JAX: differentiating one is pure_callback's ValueError at your line (JAX
raises NotImplementedError); a constant argument is fine.
"""
import functools

import numpy as np
import scipy.linalg
import scipy.linalg.lapack as lapack

import astjax.numpy as jnp

from ..callbacks import pure_callback
from ..ops.decompositions import real_dtype
from ..random.checks import static_helper  # evaluated while generating code
from ..shapes_api import ShapeDtypeStruct


def _per_matrix(compute, a, n_out):
    """``compute`` on each matrix of ``a`` ([..., m, m]), its results stacked."""
    a = np.asarray(a)
    outs = [[] for _ in range(n_out)]
    for k in np.ndindex(a.shape[:-2]):
        for out, r in zip(outs, compute(a[k])):
            out.append(np.asarray(r))
    if not a.shape[:-2]:
        return tuple(o[0] for o in outs)
    return tuple(np.stack(o).reshape(a.shape[:-2] + o[0].shape) for o in outs)


def _lapack(name, a):
    return getattr(lapack, lapack.get_lapack_funcs((name,), (a,))[0].typecode + name)


def _gehrd(a):
    return _lapack("gehrd", a)(a)[:2]


def _sytrd(a, lower):
    if np.iscomplexobj(a):
        return _lapack("hetrd", a)(a, lower=int(lower))[:4]
    return _lapack("sytrd", a)(a, lower=int(lower))[:4]


def _gees(a, vectors):
    t, z = scipy.linalg.schur(a, output="complex" if np.iscomplexobj(a) else "real")
    return (t, z) if vectors else (t,)


@static_helper
def _callback(name, *params):
    fn = {"gehrd": _gehrd, "sytrd": _sytrd, "gees": _gees}[name]
    n_out = {"gehrd": 2, "sytrd": 4, "gees": 2 if params and params[0] else 1}[name]
    return functools.partial(_per_matrix, lambda m: fn(m, *params), n_out=n_out)


@static_helper
def _real(dtype):
    return real_dtype(dtype)


@static_helper
def floating(name, dtype, position=0):
    """``dtype``, which must be inexact: lax.linalg's primitives refuse integers and bools
    with this TypeError (jnp.linalg's functions convert them)."""
    dtype = np.dtype(dtype)
    if dtype.kind not in "fc":
        raise TypeError(f"{name} does not accept dtype {dtype} at position {position}. "
                        f"Accepted dtypes at position {position} are subtypes of floating, "
                        f"complexfloating.")
    return dtype


@static_helper
def _check(name, dtype, ndim):
    if ndim < 2:
        raise ValueError(f"{name}: the argument must be a (batch of) square matrices, got "
                         f"an array of rank {ndim}")
    return floating.fn(name, dtype)


def _square(name, a):
    a = jnp.asarray(a)
    a = a.astype(_check(name, a.dtype, a.ndim))
    if a.shape[-1] != a.shape[-2]:
        raise ValueError(f"{name}: the matrices must be square, got shape {a.shape}")
    return a


def _stopped_shape(a, drop):
    return a.shape[:-2] + (a.shape[-1] - drop,)


def hessenberg(a):
    """``(a_out, taus)``: LAPACK gehrd's upper Hessenberg form with the Householder
    reflectors below it, and their scales ([..., m - 1])."""
    a = _square("hessenberg", a)
    return pure_callback(_callback("gehrd"),
                         (ShapeDtypeStruct(a.shape, a.dtype),
                          ShapeDtypeStruct(_stopped_shape(a, 1), a.dtype)),
                         a, vmap_method="expand_dims")


def tridiagonal(a, *, lower=True):
    """``(arr, d, e, taus)``: LAPACK sytrd (hetrd) of the Hermitian ``a``'s ``lower`` (else
    upper) triangle: the reflectors in that triangle of ``arr``, the diagonal ``d``, the
    off-diagonal ``e`` (both real) and the reflectors' scales."""
    a = _square("tridiagonal", a)
    real = _real(a.dtype)
    return pure_callback(_callback("sytrd", lower),
                         (ShapeDtypeStruct(a.shape, a.dtype),
                          ShapeDtypeStruct(_stopped_shape(a, 0), real),
                          ShapeDtypeStruct(_stopped_shape(a, 1), real),
                          ShapeDtypeStruct(_stopped_shape(a, 1), a.dtype)),
                         a, vmap_method="expand_dims")


@static_helper
def _check_schur(sort_eig_vals, select_callable):
    if sort_eig_vals or select_callable is not None:
        raise NotImplementedError("lax.linalg.schur: sort_eig_vals and select_callable are "
                                  "not supported")


def schur(x, *, compute_schur_vectors=True, sort_eig_vals=False, select_callable=None):
    """``[t, vs]`` (``[t]`` without ``compute_schur_vectors``): the real (for real ``x``)
    or complex Schur form ``x = vs @ t @ vs^H``, as LAPACK gees and JAX's."""
    _check_schur(sort_eig_vals, select_callable)
    x = _square("schur", x)
    struct = ShapeDtypeStruct(x.shape, x.dtype)
    out = pure_callback(_callback("gees", compute_schur_vectors),
                        (struct, struct) if compute_schur_vectors else (struct,),
                        x, vmap_method="expand_dims")
    return list(out)
