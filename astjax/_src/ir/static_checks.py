"""Typing of ``raise``/``assert`` and f-strings (frontend/checks.py), as JAX runs them while
tracing: on values known when the code is generated. A raise reached on such a path raises
the user's exception now, at their line; one on a path that run-time values choose, or an
f-string of run-time values, is a located error (after unrolling a loop around, whose
counter may be what decides, as JAX's tracing unrolls it).
"""
import gast

from ..errors import UserCodeError
from ..frontend.checks import (RAISE_NOW, exception_arguments, format_string,
                               raise_at_run_time, raise_marker)
from . import anno
from .types import Static

_SIZES = ("array sizes (x.shape[0], len(x)) are run-time values too in astjax: one compiled "
          "function serves every size")


def type_raise(typer, node, args, kwargs):
    # a check made at run time (below) once typed: its callback is its first argument
    rewritten = bool(node.args) and getattr(node.args[0], "id", None) == RAISE_NOW
    args = args[1:] if rewritten else args
    if typer.dynamic and not all(_decided_by_sizes(typer, d) for d in typer.dynamic):
        decider = typer.dynamic[-1]
        error = typer.error(node, f"this raise (or failing assert) is reached only when a "
                            f"value known at run time says so (line {decider.lineno}); "
                            f"astjax runs raise and assert while it generates code, on "
                            f"values known then (ndim, dtype, shapes, static arguments), "
                            f"as JAX does while tracing, and has no checkify: move the "
                            f"check out of the transformed function")
        typer.unroll_a_loop_around(error)
        raise error
    if not args:  # the marker before the exception's message is computed
        anno.set_(node, "folded", None)
        return Static(None)
    if typer.dynamic or not all(isinstance(t, Static) for t in args):
        # decided by array sizes (JAX knows them while tracing, astjax when the code runs),
        # or a message of run-time values (x.shape): raised by the compiled code
        return _at_run_time(typer, node, args, kwargs, rewritten)
    cause, make, layout, *rest = [a.value for a in args]
    exc = _build(typer, node, make, exception_arguments(layout, rest),
                 {k: v.value for k, v in kwargs.items()})
    located = _located(typer, node, exc)
    if cause is not None:
        located.__cause__ = _instance(typer, node, cause)
    raise located


def _build(typer, node, make, args, kwargs):
    try:
        exc = make(*args, **kwargs)
    except Exception as e:  # as Python: building the exception raised
        raise typer.error(node, f"building the exception raised here raised "
                          f"{type(e).__name__}: {e}") from None
    return _instance(typer, node, exc)


def _at_run_time(typer, node, args, kwargs, rewritten):
    from ..debugging import debug_callback, lower_call
    if kwargs or not all(isinstance(t, Static) for t in args[:3]):
        raise typer.error(node, "a check on array sizes runs when the code runs: its "
                          "exception class and cause must be constants, with positional "
                          "arguments only")
    if not rewritten:
        node.args.insert(0, gast.Name(id=RAISE_NOW, ctx=gast.Load(), annotation=None,
                                      type_comment=None))
        anno.set_(node.args[0], "type", Static(raise_at_run_time))
    return lower_call(typer, node, debug_callback, [Static(raise_at_run_time)] + list(args),
                      {})


_SIZE_ATTRS = {"shape", "ndim", "size", "dtype"}


def _decided_by_sizes(typer, decider):
    """Whether ``decider`` (an if or loop that run time decides) tests only values JAX
    knows while tracing: array sizes, and values computed from them and constants."""
    static = getattr(typer, "_size_names", None)
    if static is None:
        static = typer._size_names = _size_names(typer.fdef, typer.arg_types)
    tests = decider.iter.args if isinstance(decider, gast.For) else [decider.test]
    return all(_is_static(t, static) for t in tests)


def _size_names(fdef, arg_types):
    """Local names that hold only values computed from array sizes, shapes, constants and
    static arguments, on paths those decide (a fixed point, flow-insensitive)."""
    assigns, locals_ = [], {a.id for a in fdef.args.args}

    def walk(stmts, control):
        for s in stmts:
            if isinstance(s, gast.Assign):
                assigns.append((s.targets[0].id, s.value, control))
            elif isinstance(s, gast.If):
                walk(s.body, control + [s.test])
                walk(s.orelse, control + [s.test])
            elif isinstance(s, gast.For):
                assigns.append((s.target.id, gast.Tuple(elts=s.iter.args, ctx=gast.Load()),
                                control))
                walk(s.body, control + list(s.iter.args))
            elif isinstance(s, gast.While):
                walk(s.body, control + [s.test])
    walk(fdef.body, [])
    locals_ |= {name for name, _, _ in assigns}
    static = {a.id for a, t in zip(fdef.args.args, arg_types) if isinstance(t, Static)}
    static |= {name for name, _, _ in assigns}
    known = lambda n: _is_static(n, static, locals_)  # noqa: E731
    changed = True
    while changed:
        changed = False
        for name, value, control in assigns:
            if name in static and not (known(value) and all(known(c) for c in control)):
                static.discard(name)
                changed = True
    return static, locals_


def _is_static(node, static, locals_=None):
    if locals_ is None:
        static, locals_ = static
    rec = lambda n: n is None or _is_static(n, static, locals_)  # noqa: E731
    if isinstance(node, gast.Constant):
        return True
    if isinstance(node, gast.Name):
        return node.id in static or node.id not in locals_  # (a global: a constant)
    if isinstance(node, gast.Attribute):
        return node.attr in _SIZE_ATTRS or rec(node.value)
    if isinstance(node, gast.Slice):
        return rec(node.lower) and rec(node.upper) and rec(node.step)
    if isinstance(node, (gast.Tuple, gast.List)):
        return all(rec(e) for e in node.elts)
    if isinstance(node, gast.Subscript):
        return rec(node.value) and rec(node.slice)
    if isinstance(node, gast.BinOp):
        return rec(node.left) and rec(node.right)
    if isinstance(node, gast.UnaryOp):
        return rec(node.operand)
    if isinstance(node, gast.Compare):
        return rec(node.left) and all(rec(c) for c in node.comparators)
    if isinstance(node, gast.Call):
        if isinstance(node.func, gast.Name) and node.func.id == "len" and \
                node.func.id not in locals_:
            return True  # (the length of anything is static in JAX)
        return rec(node.func) and all(rec(a) for a in node.args) and \
            all(rec(k.value) for k in node.keywords)
    return False


def _instance(typer, node, exc):
    if isinstance(exc, type) and issubclass(exc, BaseException):
        exc = exc()
    if not isinstance(exc, BaseException):
        raise typer.error(node, "exceptions must derive from BaseException")
    return exc


_LOCATED = {}  # a builtin exception class -> its located subclass


def _located(typer, node, exc):
    """``exc`` with the user's file:line: a builtin exception with a message becomes the
    UserCodeError subclass of its class (``except ValueError`` still catches it); another
    is raised itself, with a note naming the line."""
    cls = type(exc)
    if cls.__module__ == "builtins" and issubclass(cls, Exception) and len(exc.args) <= 1 \
            and all(isinstance(a, str) for a in exc.args):
        sub = _LOCATED.get(cls)
        if sub is None:
            try:
                sub = type(cls.__name__, (UserCodeError, cls),
                           {"__module__": __name__, "__str__": BaseException.__str__})
            except TypeError:  # (a layout that does not mix)
                sub = False
            _LOCATED[cls] = sub
        if sub:
            return typer.parsed.error(node, exc.args[0] if exc.args else cls.__name__, sub)
    line = getattr(node, "lineno", None)
    exc.add_note(f"raised at {typer.parsed.filename}:{line} while astjax generated code "
                 f"for {typer.parsed.name}")
    return exc


def type_format(typer, node, args, kwargs):
    late = next((t for t in args if not isinstance(t, Static)), None)
    if late is None:
        try:
            value = format_string(*[a.value for a in args])
        except Exception as e:  # as Python's f-string would
            raise typer.error(node, f"{type(e).__name__}: {e}") from None
        anno.set_(node, "folded", value)
        return Static(value)
    error = typer.error(node, f"this f-string formats a value known only at run time "
                        f"({late}); astjax builds f-strings while it generates code, as JAX "
                        f"does while tracing: format values known then (ndim, dtype, "
                        f"static arguments; {_SIZES}); astjax.debug.print('x={{}}', x) "
                        f"prints run-time values")
    typer.unroll_a_loop_around(error)
    raise error


HANDLERS = {raise_marker: type_raise, format_string: type_format}
