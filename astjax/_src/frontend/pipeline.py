"""Source to A-normal form: parse, check, desugar, ANF. Cached per function."""
import copy
import os
import sys


from .anf import ANF, local_names
from .desugar import Desugar, check_supported
from .naming import Names
from .parse import ParsedFunction, parse_function
from .synthetic import SyntheticFunction

_CACHE = {}


def dump_enabled(stage):
    return stage in os.environ.get("ASTJAX_DUMP", "").split(",")


def dump(stage, title, source):
    if dump_enabled(stage):
        print(f"# ---- ASTJAX_DUMP {stage}: {title} ----\n{source}", file=sys.stderr)


def to_anf(fn):
    """(ParsedFunction, ANF FunctionDef) for ``fn``. The FunctionDef is shared (cached):
    copy it (``anno.clean_copy``) before annotating or changing it."""
    key = fn
    hit = _CACHE.get(key)
    if hit is None:
        if isinstance(fn, SyntheticFunction):
            origin = fn.origin
            parsed = ParsedFunction(fn, fn.fdef, origin.filename, origin.lines)
        else:
            parsed = parse_function(fn)
            check_supported(parsed)
        fdef = copy.deepcopy(parsed.node)
        names = Names(fdef)
        fdef = Desugar(parsed, names).function(fdef)
        fdef = ANF(parsed, names, local_names(fdef)).function(fdef)
        hit = (parsed, fdef)
        _CACHE[key] = hit
        if dump_enabled("anf"):
            from ..backends.source import unparse
            dump("anf", parsed.node.name, unparse(fdef))
    return hit
