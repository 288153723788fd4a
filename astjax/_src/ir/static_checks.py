"""Typing of ``raise``/``assert`` and f-strings (frontend/checks.py), as JAX runs them while
tracing: on values known when the code is generated. A raise reached on such a path raises
the user's exception now, at their line; one on a path that run-time values choose, or an
f-string of run-time values, is a located error (after unrolling a loop around, whose
counter may be what decides, as JAX's tracing unrolls it).
"""
from ..errors import UserCodeError
from ..frontend.checks import format_string, raise_marker
from . import anno
from .types import Static

_SIZES = ("array sizes (x.shape[0], len(x)) are run-time values too in astjax: one compiled "
          "function serves every size")


def type_raise(typer, node, args, kwargs):
    if typer.dynamic:
        decider = typer.dynamic[-1]
        error = typer.error(node, f"this raise (or failing assert) is reached only when a "
                            f"value known at run time says so (line {decider.lineno}); "
                            f"astjax runs raise and assert while it generates code, on "
                            f"values known then (ndim, dtype, static arguments), as JAX "
                            f"does while tracing, and has no checkify: move the check out "
                            f"of the transformed function ({_SIZES})")
        typer.unroll_a_loop_around(error)
        raise error
    anno.set_(node, "folded", None)
    if not args:  # the marker before the exception's message is computed
        return Static(None)
    values = list(args) + list(kwargs.values())
    late = next((t for t in values if not isinstance(t, Static)), None)
    if late is not None:
        raise typer.error(node, f"the exception raised here is built from a value known only "
                          f"at run time ({late}); use values known while the code is "
                          f"generated (ndim, dtype, static arguments; {_SIZES})")
    cause, make, *rest = [a.value for a in args]
    try:
        exc = make(*rest, **{k: v.value for k, v in kwargs.items()})
    except Exception as e:  # as Python: building the exception raised
        raise typer.error(node, f"building the exception raised here raised "
                          f"{type(e).__name__}: {e}") from None
    exc = _instance(typer, node, exc)
    located = _located(typer, node, exc)
    if cause is not None:
        located.__cause__ = _instance(typer, node, cause)
    raise located


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
