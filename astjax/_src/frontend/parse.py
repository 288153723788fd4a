"""Read a function's source into a gast ``FunctionDef``, with its true file and lines.

We parse the whole file (from ``linecache``, which also holds notebook cells)
and pick the definition at the code object's first line, so line numbers in
errors and generated comments are the user's own and lambdas inside larger
expressions are found.
"""
import inspect
import linecache
from dataclasses import dataclass, field

import gast

from ..errors import NoSourceError, UserCodeError


@dataclass
class ParsedFunction:
    fn: object                  # the Python function
    node: gast.FunctionDef      # its definition (lambdas become a def with one return)
    filename: str
    lines: list                 # the file's source lines
    freevars: dict = field(default_factory=dict)   # closure name -> value

    @property
    def name(self):
        return self.node.name

    def error(self, node, message, cls=UserCodeError):
        return located_error(cls, message, self.filename, self.lines, node)


def located_error(cls, message, filename, lines, node):
    lineno = getattr(node, "lineno", None)
    col = getattr(node, "col_offset", None)
    line = lines[lineno - 1] if lineno and lineno <= len(lines) else None
    return cls(message, filename, lineno, col, line)


_MODULE_CACHE = {}  # file contents -> (tree, first line -> definitions starting there)


def _parse_file(filename, lines):
    key = (filename, len(lines), hash(tuple(lines)))
    entry = _MODULE_CACHE.get(key)
    if entry is None:
        tree = gast.parse("".join(lines))
        starts = {}
        for node in gast.walk(tree):
            if isinstance(node, (gast.FunctionDef, gast.AsyncFunctionDef, gast.Lambda)):
                starts.setdefault(_first_line(node), []).append(node)
        entry = _MODULE_CACHE[key] = (tree, starts)
    return entry


def parse_function(fn):
    fn = inspect.unwrap(fn)
    code = getattr(fn, "__code__", None)
    if code is None:
        raise NoSourceError(f"{fn!r} is not a Python function, so astjax cannot read its "
                            f"source; wrap it in a def written in a .py file")
    filename = code.co_filename
    lines = linecache.getlines(filename, fn.__globals__)
    if not lines:
        raise NoSourceError(
            f"cannot read the source of {fn.__qualname__} (defined in {filename}): astjax "
            f"compiles functions from their source, so define it in a .py file or a notebook "
            f"cell rather than with exec() or at an interactive prompt without history")
    try:
        _, starts = _parse_file(filename, lines)
    except SyntaxError as e:
        raise NoSourceError(f"cannot parse {filename}: {e}") from None
    found = node = _find_definition(starts, code)
    if node is None:
        raise NoSourceError(f"cannot find the source of {fn.__qualname__} in {filename} "
                            f"(line {code.co_firstlineno}); was the file edited after import?")
    if isinstance(node, gast.Lambda):
        node = _lambda_to_def(node, code)
    else:
        node = gast.FunctionDef(name=node.name, args=node.args, body=node.body,
                                decorator_list=[], returns=None, type_comment=None,
                                type_params=[])
        gast.copy_location(node, found)
    freevars = {}
    if fn.__closure__:
        for name, cell in zip(code.co_freevars, fn.__closure__):
            try:
                freevars[name] = cell.cell_contents
            except ValueError:  # cell not yet filled (recursive closure defined later)
                pass
    return ParsedFunction(fn, node, filename, lines, freevars)


def _first_line(node):
    if isinstance(node, gast.Lambda):
        return node.lineno
    if getattr(node, "decorator_list", None):
        return min(d.lineno for d in node.decorator_list)
    return node.lineno


def _find_definition(starts, code):
    want_args = code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]
    candidates = []
    for node in starts.get(code.co_firstlineno, ()):
        if isinstance(node, (gast.FunctionDef, gast.AsyncFunctionDef)):
            if _first_line(node) == code.co_firstlineno and node.name == code.co_name:
                candidates.append(node)
        elif isinstance(node, gast.Lambda) and code.co_name == "<lambda>":
            if node.lineno == code.co_firstlineno:
                names = tuple(a.id for a in node.args.args + node.args.kwonlyargs)
                if names == want_args:
                    candidates.append(node)
    if len(candidates) > 1 and code.co_name == "<lambda>":
        # several lambdas on one line with the same arguments: match by position
        positions = list(code.co_positions())
        col = min((p[2] for p in positions if p[2]), default=None)  # the body's first
        # column: the code's first position (RESUME) reports column 0
        by_col = [c for c in candidates if c.col_offset <= (col or 0)]
        candidates = by_col[-1:] or candidates[:1]
    return candidates[0] if candidates else None


def _lambda_to_def(node, code):
    ret = gast.Return(value=node.body)
    gast.copy_location(ret, node.body)
    fdef = gast.FunctionDef(name="_lambda", args=node.args, body=[ret], decorator_list=[],
                            returns=None, type_comment=None, type_params=[])
    return gast.copy_location(fdef, node)
