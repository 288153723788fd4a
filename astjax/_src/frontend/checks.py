"""``raise``, ``assert`` and f-strings, as calls the typing evaluates while it generates code.

As JAX runs them while tracing, on values known then (ndim, dtype, static arguments):
``raise E(msg)`` becomes ``_astjax_raise()`` (the path reaches a raise: typing checks how
the path is decided) followed by ``_astjax_raise(cause, E, layout, msg)``, which typing
evaluates and raises, located at the user's line, or makes a check run when the code runs
(ir/static_checks.py). ``assert c, m`` is
``if not c: raise AssertionError(m)``. An f-string is ``_astjax_format(layout, values...)``,
folded to a constant when its values are known.
"""
import ast

import gast

from .naming import const, copy_loc, load

RAISE = "_astjax_raise"
FORMAT = "_astjax_format"
RAISE_NOW = "_astjax_raise_now"  # the callback of a check made at run time


def raise_calls(s):
    """The two expression statements standing for ``raise`` statement ``s``: the second is
    ``_astjax_raise(cause, E, layout, *values)``, ``layout`` saying per argument of ``E``
    whether it is one value (None) or an f-string of some (its layout, how many), so that
    a check made at run time formats its message then (ir/static_checks.py)."""
    cause = s.cause if s.cause is not None else const(None)
    exc = s.exc
    layout, values = [], []
    for a in exc.args if isinstance(exc, gast.Call) else []:
        if isinstance(a, gast.JoinedStr):
            call = format_call(a)
            layout.append((call.args[0].value, len(call.args) - 1))
            values += call.args[1:]
        else:
            layout.append(None)
            values.append(a)
    # (the layout as its repr: a debug callback would take a tuple apart)
    head = [cause, exc.func if isinstance(exc, gast.Call) else exc, const(repr(tuple(layout)))]
    args, keywords = head + values, list(exc.keywords) if isinstance(exc, gast.Call) else []
    reached = gast.Expr(value=gast.Call(func=load(RAISE), args=[], keywords=[]))
    raised = gast.Expr(value=gast.Call(func=load(RAISE), args=args, keywords=keywords))
    return [copy_loc(reached, s), copy_loc(raised, s)]


def assert_as_if(s):
    """``assert test, msg`` as ``if not test: raise AssertionError(msg)``."""
    exc = gast.Call(func=load("AssertionError"), args=[s.msg] if s.msg is not None else [],
                    keywords=[])
    raise_ = copy_loc(gast.Raise(exc=copy_loc(exc, s), cause=None), s)
    test = copy_loc(gast.UnaryOp(op=gast.Not(), operand=s.test), s)
    return copy_loc(gast.If(test=test, body=[raise_], orelse=[]), s)


def format_call(e):
    """An f-string (JoinedStr) as ``_astjax_format(layout, value, [spec], ...)``: the layout
    holds the literal parts, and (conversion, has_spec) for each formatted value."""
    layout, args = [], []
    for part in e.values:
        if isinstance(part, gast.Constant):
            layout.append(part.value)
            continue
        spec = part.format_spec
        layout.append((part.conversion, spec is not None))
        args.append(part.value)
        if spec is not None:
            args.append(format_call(spec) if isinstance(spec, gast.JoinedStr) else spec)
    return copy_loc(gast.Call(func=load(FORMAT), args=[const(tuple(layout))] + args,
                              keywords=[]), e)


def format_string(layout, *values):
    """What the f-string described by ``layout`` gives for ``values`` (as Python's)."""
    out, it = [], iter(values)  # (0-d arrays, at run time, as Python scalars)
    it = (v.item() if getattr(v, "ndim", None) == 0 and hasattr(v, "item") else v
          for v in it)
    for item in layout:
        if isinstance(item, str):
            out.append(item)
            continue
        conversion, has_spec = item
        value = next(it)
        spec = next(it) if has_spec else ""
        value = {115: str, 114: repr, 97: ascii}.get(conversion, lambda v: v)(value)
        out.append(format(value, spec))
    return "".join(out)


def exception_arguments(layout, values):
    """The arguments of the exception from ``raise_calls``'s layout and values."""
    out, it = [], iter(values)
    for item in ast.literal_eval(layout):
        if item is None:
            out.append(next(it))
        else:
            out.append(format_string(item[0], *[next(it) for _ in range(item[1])]))
    return out


def raise_marker(*args, **kwargs):
    """Stands for ``raise`` in compiled code; typing evaluates it (never called)."""
    raise AssertionError("internal: a raise reached generated code")


def raise_at_run_time(cause, make, layout, *values):
    """A check on array sizes, run by the compiled code (a debug callback, as
    ``debug.print``): raises ``make(...)``, its message formatted from the values."""
    exc = make(*exception_arguments(layout, values))
    exc = exc() if isinstance(exc, type) else exc
    if cause is not None:
        exc.__cause__ = cause() if isinstance(cause, type) else cause
    raise exc


# ir/specialize.py resolves these names
CHECK_NAMES = {RAISE: raise_marker, FORMAT: format_string, RAISE_NOW: raise_at_run_time}
