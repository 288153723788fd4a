"""``jnp.select`` and ``jnp.piecewise``: plain functions written in ``astjax.numpy``, read by
the compiler like user code. The lists have lengths known when code is generated, so each
is a chain of ``where``s, built by recursion on a constant index (each level its own
specialization): its entries may have different shapes, which a loop's variable could not.
"""
import numpy as np

import astjax.numpy as jnp

from .._src.random.checks import static_helper  # evaluated while generating code


@static_helper
def _check_select(n_cond, n_choice):
    if n_cond != n_choice:
        raise ValueError(f"condlist must have length equal to choicelist ({n_cond} vs "
                         f"{n_choice})")
    if n_cond == 0:
        raise ValueError("condlist must be non-empty")


def _as_condition(c):
    c = jnp.asarray(c)
    if c.dtype != jnp.bool_:
        c = c != 0
    return c


def _select_from(condlist, choicelist, default, i):
    if i == len(condlist):
        return jnp.asarray(default)
    return jnp.where(_as_condition(condlist[i]), choicelist[i],
                     _select_from(condlist, choicelist, default, i + 1))


def select(condlist, choicelist, default=0):
    """Where ``condlist[i]`` first holds, ``choicelist[i]``; ``default`` where none does
    (as ``np.select``; conditions that are not bool count where nonzero, as in JAX)."""
    _check_select(len(condlist), len(choicelist))
    return _select_from(condlist, choicelist, default, 0)


@static_helper
def _check_piecewise(n_cond, n_func):
    if n_func not in (n_cond, n_cond + 1):
        raise ValueError(f"with {n_cond} condition(s), either {n_cond} or {n_cond + 1} "
                         f"functions are expected; got {n_func}")


def _piece(f, x):
    """``f(x)``, or the constant ``f`` where ``x`` is, in ``x``'s dtype (as in JAX)."""
    if isinstance(f, (bool, int, float, complex, np.ndarray, np.generic, jnp.ndarray)):
        return jnp.full_like(x, f)
    return jnp.asarray(f(x)).astype(x.dtype)


def _piecewise_upto(x, condlist, funclist, n):
    """The value where the last of ``condlist[:n]`` that holds says (NumPy's rule: a later
    condition overrides an earlier one)."""
    if n == 0:
        if len(funclist) > len(condlist):
            return _piece(funclist[len(condlist)], x)
        return jnp.zeros_like(x)
    return jnp.where(_as_condition(condlist[n - 1]), _piece(funclist[n - 1], x),
                     _piecewise_upto(x, condlist, funclist, n - 1))


def piecewise(x, condlist, funclist):
    """``funclist[i](x)`` where ``condlist[i]`` holds (the last such ``i``), else the extra
    last function's value or 0, in ``x``'s dtype, as ``jnp.piecewise``; an entry of
    ``funclist`` may be a constant. Every function is evaluated on all of ``x`` (JAX's
    too). Extra arguments for the functions (JAX's ``*args, **kw``) are not taken: close
    over them."""
    x = jnp.asarray(x)
    _check_piecewise(len(condlist), len(funclist))
    return _piecewise_upto(x, condlist, funclist, len(condlist))
