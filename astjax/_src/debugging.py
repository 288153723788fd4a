"""``astjax.debug.print``, ``astjax.debug.callback`` and ``print`` in compiled code.

Eagerly each is a plain Python call. In compiled code a call becomes the
``debug_callback`` op (ops/effects.py) with a ``DebugCall`` as its static callback: at
run time the DebugCall rebuilds the arguments from the values the generated code holds
(the python backend's real containers, or the Numba backend's tuples, see ir/trees.py),
as astjax Arrays (what JAX hands its callbacks), and runs the eager function on them. So
values print each time the compiled code runs, not once when it is generated (where JAX
would print tracers for ``print``), and under vmap once per example.
"""
import builtins
import itertools
import string
import _string

import gast
import numpy as np

from . import tree_util
from .ir import anno, trees
from .ir.types import UNKNOWN, ArrayType, SequenceType, Static, TreeType
from .lax.common import as_sequence, leaves
from .ops.registry import REGISTRY
from .runtime.array import Array


def debug_print(fmt, *args, ordered=False, partitioned=False, **kwargs):
    """Print ``fmt.format(*args, **kwargs)``; in compiled code, with the values each call
    computes (``jax.debug.print``). ``ordered`` and ``partitioned`` are accepted: astjax
    runs effects in program order, on one device."""
    check_format(fmt, args, kwargs)
    builtins.print(fmt.format(*args, **kwargs))


def debug_callback(callback, *args, ordered=False, partitioned=False, **kwargs):
    """Call ``callback(*args, **kwargs)`` for its side effect; in compiled code, with the
    values each call computes, as astjax Arrays (``jax.debug.callback``)."""
    callback(*args, **kwargs)


_NAMES = {debug_print: "astjax.debug.print", debug_callback: "astjax.debug.callback",
          builtins.print: "print"}


class DebugCall:
    """What a ``debug_callback`` op calls: ``fn(*args, **kwargs)`` of an eager function,
    with arguments of ``types`` (positional ones, then the values of ``keywords``)."""

    def __init__(self, fn, types, keywords):
        self.fn, self.types, self.keywords = fn, types, keywords
        self.__name__ = "debug_" + _NAMES[fn].split(".")[-1]  # (what generated code calls it)

    def __call__(self, args, batched):  # the python backend: containers are real
        self._each([x for t, v in zip(self.types, args) for x in _leaves(t, v, False)],
                   batched)

    def from_numba(self, args, batched):  # containers are tuples of their children
        self._each([x for t, v in zip(self.types, args) for x in _leaves(t, v, True)],
                   batched)

    def _each(self, values, batched):
        """Once per example of each vmap around the call; as in JAX, the innermost vmap's
        index varies slowest. ``batched``: per vmap, outermost first, per argument."""
        if not batched:
            return self._run(values)
        # per leaf, per vmap: batched or not; a leaf's axis for vmap k follows the outer ones'
        flags = list(zip(*[[f for t, b in zip(self.types, level) for f in _flags(t, b)]
                           for level in batched]))
        sizes = [next((np.shape(v)[sum(fl[:k])] for v, fl in zip(values, flags) if fl[k]), 1)
                 for k in range(len(batched))]
        for index in itertools.product(*[range(n) for n in reversed(sizes)]):
            index = index[::-1]
            example = []
            for v, fl in zip(values, flags):
                for k, f in enumerate(fl):
                    if f:
                        v = v[index[k]]  # (the outer vmaps' axes are gone: this one leads)
                example.append(v)
            self._run(example)

    def _run(self, values):
        it = iter(values)
        args = [_build(t, it) for t in self.types]
        n = len(args) - len(self.keywords)
        self.fn(*args[:n], **dict(zip(self.keywords, args[n:])))


def _leaves(t, v, tuples):
    """The run-time values of ``t``'s array leaves in ``v``, in flatten order."""
    t = as_sequence(t)
    if isinstance(t, Static):
        return []
    if isinstance(t, (SequenceType, TreeType)):
        kids = t.elts if isinstance(t, SequenceType) else t.children
        vs = v if tuples or isinstance(t, SequenceType) else tree_util.flatten_one_level(v)[0]
        return [x for c, cv in zip(kids, vs) for x in _leaves(c, cv, tuples)]
    return [v]


def _flags(t, b):
    """Per array leaf of ``t``: batched in vmap's ``b`` (a bool or one per child)."""
    t = as_sequence(t)
    if isinstance(t, Static):
        return []
    if isinstance(t, (SequenceType, TreeType)):
        kids = t.elts if isinstance(t, SequenceType) else t.children
        return [f for k, c in enumerate(kids)
                for f in _flags(c, b if isinstance(b, bool) else b[k])]
    return [bool(b)]


def _build(t, it):
    """The value of type ``t`` with its array leaves taken from ``it``."""
    t = as_sequence(t)
    if isinstance(t, Static):
        return t.value
    if isinstance(t, SequenceType):
        parts = [_build(e, it) for e in t.elts]
        return tuple(parts) if t.kind == "tuple" else parts
    if isinstance(t, TreeType):
        return trees.builder(t)(*[_build(c, it) for c in t.children])
    value = np.array(next(it), dtype=t.dtype)  # a copy: the code may reuse its buffer
    if t.weak and t.ndim == 0 and t.dtype.kind in "iu":
        return int(value)  # a size (x.shape, len) or a Python int: as eager code has it
    return Array(value)


# --- typing: a call in compiled code becomes the op ---------------------------------------

def lower_call(typer, node, fn, args, kwargs):
    """Type ``fn(*args, **kwargs)`` (one of the functions above, or ``print``) at ``node``
    as a ``debug_callback`` op."""
    name = _NAMES[fn]
    if any(k.arg is None for k in node.keywords):
        raise typer.error(node, f"{name}(**kwargs) is not supported in compiled code")
    keywords = tuple(k.arg for k in node.keywords)
    types = list(args) + [kwargs[k] for k in keywords]
    _check(typer, node, name, fn, args, kwargs)
    for t in types:
        for path, leaf in leaves(t):
            if leaf is UNKNOWN:
                return UNKNOWN  # a recursive call's result, while its type is inferred
            if not isinstance(leaf, (Static, ArrayType)):
                raise typer.error(node, f"{name}() of {leaf} is not supported in compiled "
                                  f"code (arrays, constants and pytrees of them are)")
    call = DebugCall(fn, tuple(types), keywords)
    const = gast.Constant(value=call, kind=None)
    anno.set_(const, "type", Static(call))
    return typer.apply_op(node, REGISTRY["debug_callback"], {"args": SequenceType(tuple(types))},
                          {"callback": call},
                          {"args": tuple(node.args) + tuple(k.value for k in node.keywords)},
                          {"callback": const})


def _check(typer, node, name, fn, args, kwargs):
    """What must be known when the code is generated, checked at the user's line."""
    if fn is builtins.print:
        for k in ("sep", "end", "file", "flush"):
            if k in kwargs and not isinstance(kwargs[k], Static):
                raise typer.error(node, f"print(): {k} must be a constant in compiled code")
        return
    for k in ("ordered", "partitioned"):
        if not isinstance(kwargs.get(k, Static(False)), Static):
            raise typer.error(node, f"{name}(): {k} must be a constant")
    first = args[0] if args else None
    if fn is debug_callback:
        from .frontend.synthetic import SyntheticFunction
        from .ir.infer import closure_function
        if not isinstance(first, Static) or closure_function(first) is not None or \
                isinstance(first.value, SyntheticFunction) or not callable(first.value):
            raise typer.error(node, f"{name}(): the callback must be a Python function "
                              f"defined outside the compiled function (it runs as Python)")
        return
    if not (isinstance(first, Static) and isinstance(first.value, str)):
        raise typer.error(node, f"{name}(): the format string must be a constant str")
    _check_fields(typer, node, name, first.value, len(args) - 1, kwargs)


def _check_fields(typer, node, name, fmt, n, kwargs):
    """The format string against the arguments, at the user's line rather than when the
    compiled code runs."""
    try:
        check_format(fmt, [None] * n, {k: None for k in kwargs
                                       if k not in ("ordered", "partitioned")})
    except ValueError as e:
        raise typer.error(node, f"{name}(): {e}") from None


class _FormatCheck(string.Formatter):
    """JAX's check: every field has an argument and every argument a field."""

    def get_field(self, field_name, args, kwargs):  # (only the argument, not x[0] of it)
        first, _ = _string.formatter_field_name_split(field_name)
        try:
            return self.get_value(first, args, kwargs), first
        except IndexError:
            raise ValueError(f"the format string reads positional argument {first}, and "
                             f"{len(args)} were given") from None
        except KeyError:
            raise ValueError(f"the format string reads {first!r}, which is not a keyword "
                             f"argument of the call") from None

    def format_field(self, value, format_spec):
        return ""

    def check_unused_args(self, used_args, args, kwargs):
        unused = [i for i in range(len(args)) if i not in used_args]
        if unused:
            raise ValueError(f"no field of the format string reads positional argument "
                             f"{unused[0]} (JAX raises too)")
        unused = [k for k in kwargs if k not in used_args]
        if unused:
            raise ValueError(f"no field of the format string reads keyword argument "
                             f"{unused[0]!r} (JAX raises too; an f-string passed as the "
                             f"format?)")


def check_format(fmt, args, kwargs):
    _FormatCheck().format(fmt, *args, **kwargs)


def _register():
    from .ir import infer
    for fn in (debug_print, debug_callback):  # compiled code types their calls as the op
        infer._BUILTINS[fn] = lambda typer, node, args, kwargs, fn=fn: lower_call(
            typer, node, fn, args, kwargs)


_register()
