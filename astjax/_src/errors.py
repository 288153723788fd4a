"""User-facing errors. Every error raised at the user names their file and line."""
import contextlib
import functools
import os


class AstjaxError(Exception):
    """Base of astjax's errors."""


class UserCodeError(AstjaxError):
    """A problem in the user's function, located at ``filename:lineno:col``."""

    def __init__(self, message, filename=None, lineno=None, col=None, source_line=None):
        self.message = message
        self.filename, self.lineno, self.col = filename, lineno, col
        self.source_line = source_line
        super().__init__(self._format())

    def _format(self):
        if self.filename is None:
            return self.message
        where = f"{self.filename}:{self.lineno}"
        if self.col is not None:
            where += f":{self.col + 1}"
        text = f"{where}: {self.message}"
        if self.source_line:
            text += f"\n    {self.source_line.strip()}"
        return text


class UnsupportedSyntaxError(UserCodeError, SyntaxError.__base__):
    """A construct astjax does not compile (try, with, global, generators, ...)."""


class TypeCheckError(UserCodeError, TypeError):
    """A shape or dtype error found while typing the user's function."""


class UserValueError(UserCodeError, ValueError):
    """A bad value given to a function called from the user's code (JAX's ValueError)."""


class UserNotImplementedError(UserCodeError, NotImplementedError):
    """A call from the user's code that astjax does not implement."""


def at_user_call(e):
    """A TypeError, ValueError or NotImplementedError raised by a check on a call's
    argument types, as the UserCodeError of the same kind that the compiler locates at
    the user's call."""
    cls = _checking_error_class(e)
    if cls is None:
        raise TypeError(f"not a checking error: {e!r}")
    return cls(str(e))


def _checking_error_class(e):
    for builtin, cls in ((NotImplementedError, UserNotImplementedError),
                         (TypeError, TypeCheckError), (ValueError, UserValueError)):
        if isinstance(e, builtin):
            return cls
    return None


class NoSourceError(AstjaxError, ValueError):
    """The function has no Python source to read (REPL, exec, builtin)."""


class ShapeError(TypeError):
    """Raised by an op's shape/dtype rule; the caller adds the user's location."""


@functools.lru_cache(maxsize=None)
def package_dir():
    """astjax's own directory, with a trailing separator."""
    import astjax
    return os.path.dirname(os.path.abspath(astjax.__file__)) + os.sep


def in_astjax(filename):
    """Whether ``filename`` is one of astjax's own source files (not the user's)."""
    return isinstance(filename, str) and os.path.abspath(filename).startswith(package_dir())


@contextlib.contextmanager
def checks_at_user_call(parsed, node):
    """Errors raised inside by a check of astjax's own code name the user's call ``node``
    of ``parsed`` (when ``parsed`` is the user's code)."""
    try:
        yield
    except (TypeError, ValueError, NotImplementedError) as e:
        if in_astjax(parsed.filename):
            raise
        located = at_user_line(e, lambda message, cls: parsed.error(node, message, cls))
        if located is None:
            raise
        raise located from None


def at_user_line(e, located):
    """An error raised while compiling one of astjax's own functions for the user's call
    (a check in ``jnp.select``, an op's shape rule reached through ``take_along_axis``),
    as the UserCodeError of the same kind: ``located(message, cls)`` puts it at that call.
    None when ``e`` already names the user's line or is not such a check."""
    if isinstance(e, UserCodeError):
        return None if e.filename is not None and not in_astjax(e.filename) else \
            located(e.message, type(e))
    cls = _checking_error_class(e)
    return None if cls is None else located(str(e), cls)
