"""``raise``, ``assert`` and f-strings, as calls the typing evaluates while it generates code.

As JAX runs them while tracing, on values known then (ndim, dtype, static arguments):
``raise E(msg)`` becomes ``_astjax_raise()`` (the path reaches a raise: typing checks that
the path is known now) followed by ``_astjax_raise(cause, E, msg)``, which typing evaluates
and raises, located at the user's line (ir/static_checks.py). ``assert c, m`` is
``if not c: raise AssertionError(m)``. An f-string is ``_astjax_format(layout, values...)``,
folded to a constant when its values are known.
"""
import gast

from .naming import const, copy_loc, load

RAISE = "_astjax_raise"
FORMAT = "_astjax_format"


def raise_calls(s):
    """The two expression statements standing for ``raise`` statement ``s``."""
    cause = s.cause if s.cause is not None else const(None)
    exc = s.exc
    if isinstance(exc, gast.Call):
        args, keywords = [cause, exc.func] + list(exc.args), list(exc.keywords)
    else:
        args, keywords = [cause, exc], []
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
    out, it = [], iter(values)
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


def raise_marker(*args, **kwargs):
    """Stands for ``raise`` in compiled code; typing evaluates it (never called)."""
    raise AssertionError("internal: a raise reached generated code")


CHECK_NAMES = {RAISE: raise_marker, FORMAT: format_string}  # (ir/specialize.py resolves them)
