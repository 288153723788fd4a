"""``lax.custom_root`` and ``lax.custom_linear_solve``: a solver's result whose derivatives
come from the implicit function theorem, as JAX's, not from differentiating the solver.

Each is a ``custom_jvp`` function (``ad/custom.py``). The function whose root (or linear
map) is solved is split by ``closure_convert`` into a function of constants and the run-time
values it captured: those are the custom function's differentiable arguments, so a
derivative reaches the variables ``f`` / ``matvec`` closes over, as in JAX.
"""
import astjax.numpy as jnp

from ..ad.api import jvp, vjp
from ..ad.custom import custom_jvp, custom_vjp
from ..misc_api import closure_convert
from ..random.checks import static_helper  # evaluated while generating code
from .trees import tree_map


def _split(fun, *example_args):
    """``(fun_c, consts)`` with ``fun_c(*args, *consts) == fun(*args)``: in compiled code
    ``closure_convert``'s (``consts``: the run-time values a nested ``fun`` captured); called
    from Python, where no derivative is taken, ``fun`` itself and ``()``."""
    return fun, ()


_split.function_for = closure_convert.function_for
_split._astjax_takes_closures = True


def custom_root(f, initial_guess, solve, tangent_solve, has_aux=False):
    """``solve(f, initial_guess)``, differentiated (in the variables ``f`` captured) through
    ``tangent_solve(g, y)``, which solves the linear system of ``g``, ``f`` linearized at the
    solution."""
    conv, consts = _split(f, initial_guess)
    return _root(conv, solve, tangent_solve, has_aux, consts, initial_guess)


def _root_value(conv, solve, tangent_solve, has_aux, consts, initial_guess):
    return solve(lambda x: conv(x, *consts), initial_guess)


_root = custom_jvp(_root_value, nondiff_argnums=(0, 1, 2, 3))


def _root_jvp(conv, solve, tangent_solve, has_aux, primals, tangents):
    consts, guess = primals
    consts_dot = tangents[0]
    out = _root(conv, solve, tangent_solve, has_aux, consts, guess)
    x = out[0] if has_aux else out
    rhs = jvp(lambda c: conv(x, *c), (consts,), (consts_dot,))[1]
    x_dot = tree_map(jnp.negative,
                     tangent_solve(lambda v: jvp(lambda y: conv(y, *consts), (x,), (v,))[1],
                                   rhs))
    if has_aux:
        return out, (x_dot, tree_map(jnp.zeros_like, out[1]))
    return out, x_dot


_root.defjvp(_root_jvp)


def custom_linear_solve(matvec, b, solve, transpose_solve=None, symmetric=False,
                        has_aux=False):
    """``solve(matvec, b)``, differentiated as ``A^{-1}`` (in ``b``, and in the variables
    ``matvec`` captured: ``dx = A^{-1} (db - dA x)``); reverse mode solves the transposed
    system with ``transpose_solve(vecmat, g)`` (``solve`` where ``symmetric``)."""
    if transpose_solve is None and symmetric:
        transpose_solve = solve
    conv, consts = _split(matvec, b)
    return _linear_solve(conv, solve, transpose_solve, symmetric, has_aux, consts, b)


def _solve_value(conv, solve, transpose_solve, symmetric, has_aux, consts, b):
    return solve(lambda x: conv(x, *consts), b)


_linear_solve = custom_jvp(_solve_value, nondiff_argnums=(0, 1, 2, 3, 4))


def _linear_solve_jvp(conv, solve, transpose_solve, symmetric, has_aux, primals, tangents):
    consts, b = primals
    consts_dot, b_dot = tangents
    out = _linear_solve(conv, solve, transpose_solve, symmetric, has_aux, consts, b)
    x = out[0] if has_aux else out
    # A x = b, so dA x + A dx = db: dx = A^{-1} (db - dA x)
    dA_x = jvp(lambda c: conv(x, *c), (consts,), (consts_dot,))[1]
    x_dot = _tangent_solve(conv, solve, transpose_solve, symmetric, has_aux, consts,
                           tree_map(jnp.subtract, b_dot, dA_x))
    if has_aux:
        return out, (x_dot, tree_map(jnp.zeros_like, out[1]))
    return out, x_dot


_linear_solve.defjvp(_linear_solve_jvp)


def _tangent_solve_value(conv, solve, transpose_solve, symmetric, has_aux, consts, r):
    x = solve(lambda v: conv(v, *consts), r)
    return x[0] if has_aux else x


# the tangent's solve, A^{-1} r: reverse mode transposes it with transpose_solve
_tangent_solve = custom_vjp(_tangent_solve_value, nondiff_argnums=(0, 1, 2, 3, 4))


def _tangent_solve_fwd(conv, solve, transpose_solve, symmetric, has_aux, consts, r):
    x = _tangent_solve_value(conv, solve, transpose_solve, symmetric, has_aux, consts, r)
    return x, (consts, x)


def _tangent_solve_bwd(conv, solve, transpose_solve, symmetric, has_aux, res, g):
    consts, x = res
    if transpose_solve is None:
        _no_transpose_solve()
    if symmetric:
        u = transpose_solve(lambda v: conv(v, *consts), g)
    else:
        u = transpose_solve(lambda v: vjp(lambda y: conv(y, *consts), x)[1](v)[0], g)
    if has_aux:
        u = u[0]
    # x = A(c)^{-1} r: the cotangent of c is -(d(A(c) x)/dc)^T A^{-T} g
    consts_ct = vjp(lambda c: conv(x, *c), consts)[1](u)[0]
    return tree_map(jnp.negative, consts_ct), u


_tangent_solve.defvjp(_tangent_solve_fwd, _tangent_solve_bwd)


@static_helper
def _no_transpose_solve():
    raise TypeError("transpose_solve required for backwards mode automatic differentiation "
                    "of custom_linear_solve")
