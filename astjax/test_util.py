"""Numerical checks of derivatives, as ``jax.test_util.check_grads``."""
import numpy as np

from . import tree_util
from ._src.ad.api import grad, jvp, vjp
from ._src.ad.jacobian import jacrev
from ._src.api import Jitted


def _jitted(f):
    return f if isinstance(f, Jitted) else Jitted(f)


def _is_float(x):
    return np.asarray(x).dtype.kind in "fc"


def _flat(tree):
    leaves, treedef = tree_util.tree_flatten(tree)
    return [np.asarray(leaf) for leaf in leaves], treedef


def _inner(a, b):
    """The real inner product (directions are real, so conj in vdot changes nothing)."""
    return sum(float(np.real(np.vdot(np.asarray(x, np.complex128),
                                     np.asarray(y, np.complex128)))) for x, y in zip(a, b))


def check_vjp(f, args, eps=1e-4, atol=None, rtol=None, seed=0):
    """<u, J v> by central differences against <vjp(u), v>, for random u and v.

    Only floating-point leaves are perturbed (an integer trip count stays as it is)."""
    rng = np.random.default_rng(seed)
    fun = _jitted(f)
    out, pullback = vjp(f, *args)
    out_leaves, out_def = _flat(out)
    u_leaves = [rng.standard_normal(o.shape).astype(o.dtype) for o in out_leaves]
    cotangents = pullback(tree_util.tree_unflatten(out_def, u_leaves))
    directions, analytic = [], 0.0
    for arg, ct in zip(args, cotangents):
        leaves, treedef = _flat(arg)
        vs = [rng.standard_normal(a.shape).astype(a.dtype) if _is_float(a) else None
              for a in leaves]
        directions.append((leaves, treedef, vs))
        if any(v is not None for v in vs):
            ct_leaves, _ = _flat(ct)
            analytic += _inner(ct_leaves, [v for v in vs if v is not None])

    def shifted(s):
        return [tree_util.tree_unflatten(treedef, [a if v is None else a + s * v
                                                   for a, v in zip(leaves, vs)])
                for leaves, treedef, vs in directions]

    plus, _ = _flat(fun(*shifted(eps)))
    minus, _ = _flat(fun(*shifted(-eps)))
    numeric = _inner(u_leaves, [(p.astype(np.promote_types(p.dtype, np.float64)) - m)
                                / (2 * eps) for p, m in zip(plus, minus)])
    atol, rtol = _tolerances(np.result_type(*[o.dtype for o in out_leaves]), atol, rtol)
    if not np.isclose(analytic, numeric, atol=atol, rtol=rtol):
        raise AssertionError(f"VJP check failed for {getattr(f, '__name__', f)}: "
                             f"<vjp(u), v> = {analytic!r}, finite differences give "
                             f"{numeric!r} (eps={eps})")


def _tolerances(dtype, atol, rtol):
    tol = 1e-5 if dtype == np.float64 else 2e-2
    return (tol if atol is None else atol), (tol if rtol is None else rtol)


def check_jvp(f, args, eps=1e-4, atol=None, rtol=None, seed=1):
    """J v by central differences against ``jvp``, for a random direction v."""
    rng = np.random.default_rng(seed)
    fun = _jitted(f)
    tangents = tuple(tree_util.tree_map(
        lambda a: rng.standard_normal(np.shape(a)).astype(np.asarray(a).dtype)
        if _is_float(a) else np.zeros(np.shape(a), np.float32), a) for a in args)

    def shifted(s):
        return tuple(tree_util.tree_map(lambda a, v: a + s * v if _is_float(a) else a, a, t)
                     for a, t in zip(args, tangents))

    _, tangent_out = jvp(f, args, tangents)
    plus, _ = _flat(fun(*shifted(eps)))
    minus, _ = _flat(fun(*shifted(-eps)))
    analytic, _ = _flat(tangent_out)
    for a, p, m in zip(analytic, plus, minus):
        # in float64, or complex128 for a complex output (float64 would drop its imag part)
        numeric = (p.astype(np.promote_types(p.dtype, np.float64)) - m) / (2 * eps)
        atol_, rtol_ = _tolerances(p.dtype, atol, rtol)
        np.testing.assert_allclose(a, numeric, atol=atol_, rtol=rtol_,
                                   err_msg=f"JVP check failed for {getattr(f, '__name__', f)}")


def check_grads(f, args, order=1, modes=("fwd", "rev"), eps=1e-4, atol=None, rtol=None):
    """Check derivatives of ``f`` at ``args`` against central finite differences.

    ``modes``: "fwd" checks ``jvp``, "rev" checks ``vjp``. ``order=2`` also
    checks the derivatives of the gradient (of the Jacobian, by ``jacrev``, where ``f``'s
    output is not one scalar).
    """
    for mode in modes:
        if mode not in ("fwd", "rev"):
            raise ValueError(f"check_grads: unknown mode {mode!r}; use 'fwd' and/or 'rev'")
    if "fwd" in modes:
        check_jvp(f, args, eps, atol, rtol)
    if "rev" in modes:
        check_vjp(f, args, eps, atol, rtol)
    if order >= 2:
        floats = tuple(i for i, a in enumerate(args)
                       if all(_is_float(leaf) for leaf in tree_util.tree_leaves(a)))
        out = tree_util.tree_leaves(_jitted(f)(*args))
        scalar = len(out) == 1 and np.ndim(out[0]) == 0
        g = (grad if scalar else jacrev)(f, argnums=floats)
        if "fwd" in modes:
            check_jvp(g, args, eps, atol, rtol)
        if "rev" in modes:
            check_vjp(g, args, eps, atol, rtol)
    if order >= 3:
        raise NotImplementedError("check_grads: order > 2")


__all__ = ["check_grads", "check_jvp", "check_vjp"]
