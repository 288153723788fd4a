"""A persistent cache of generated module source, so a new process skips generation.

``Compiled._build`` looks here before parsing, typing, transforming and emitting,
and stores what it generated afterwards. An entry lives under
``<cache dir>/gen/<key>.pkl`` (``$ASTJAX_CACHE_DIR`` or ``~/.cache/astjax``);
``ASTJAX_SOURCE_CACHE=0`` turns the cache off. Deleting the directory is always safe.

Soundness is the point: a stale hit would silently compute the wrong thing. So

* the **key** (cheap: no parsing) names what is compiled: the transform chain and its
  parameters, the user function's identity (module, qualname, file, first line,
  defaults), the abstract argument types, ``config.snapshot()``, the backend, a
  content hash of astjax's own ``*.py`` files and the Python/NumPy/Numba versions;
* the entry's **manifest** says what generation read from outside: every name the
  compiler resolved (``Program.resolve``: globals, closure cells, builtins and the
  attribute chains on them), recorded as *how to find it again* (owner function, name,
  chain; owners are the user function itself or functions found that way) and a
  fingerprint of the value (arrays by dtype, shape and a hash of their bytes; Python
  literals by value; functions, classes and modules by identity), and every source
  file that was parsed (by the hash of the lines the parser sees). A lookup redoes
  each resolution the way the compiler does, compares fingerprints and file hashes,
  and builds the module's namespace from the values it found now;
* whatever cannot be described that way (a lambda or exec'd function with no
  source, an object of unknown kind, a value astjax made from user state it did
  not resolve by name, a user's custom_vjp/custom_jvp rule) makes the compile uncacheable:
  it is generated every time, as without this cache.
"""
import builtins
import hashlib
import inspect
import os
import pickle
import stat
import sys
import tempfile
import types as pytypes

import numpy as np

from ..errors import in_astjax, package_dir

FORMAT = 2
_MAGIC = b"ASTJAXGEN1\n"
_MISSING = object()

STATS = {"hits": 0, "misses": 0, "stores": 0, "uncacheable": 0, "corrupt": 0}

_TRUSTED_TOPS = {"astjax", "numpy", "numba", "llvmlite"}  # versions (code hash) in the key
_SEARCH = ("astjax.numpy", "astjax.lax", "astjax.nn", "astjax.random", "astjax",
           "astjax.numpy.linalg", "astjax.numpy.fft", "numpy", "numpy.linalg", "numpy.fft",
           "numpy.random", "math", "cmath", "operator", "builtins")
_SKIP_ATTRS = {"cache", "fast", "generated", "signature", "__wrapped__", "__astjax_wrapped__",
               "__doc__", "__name__", "__qualname__", "__module__", "__annotations__",
               "__type_params__", "__dict__", "n_params", "_twin", "wrappers"}


class Uncacheable(Exception):
    """This compile is not described well enough to reuse: generate it every time."""


def enabled():
    return os.environ.get("ASTJAX_SOURCE_CACHE", "1").lower() not in ("0", "false", "no", "off")


# --- where things are -------------------------------------------------------------------------

_CODE_HASH = [None]


def code_hash():
    """A content hash of every astjax ``*.py`` file, computed once per process (~5 ms)."""
    if _CODE_HASH[0] is None:
        root = package_dir()
        h = hashlib.sha256()
        for d, dirs, files in os.walk(root):
            dirs.sort()
            for f in sorted(files):
                if f.endswith(".py"):
                    path = os.path.join(d, f)
                    h.update(os.path.relpath(path, root).encode() + b"\0")
                    with open(path, "rb") as fh:
                        h.update(fh.read())
        _CODE_HASH[0] = h.hexdigest()
    return _CODE_HASH[0]


def gen_dir():
    from .loader import cache_dir
    path = os.path.join(os.path.dirname(cache_dir()), "gen")
    os.makedirs(path, mode=0o700, exist_ok=True)
    mode = stat.S_IMODE(os.stat(path).st_mode)
    if mode & 0o077:  # entries are pickles: only the user may write (or read) them
        os.chmod(path, mode & 0o700)
    return path


def _trusted_module(name):
    """Modules whose contents the key already pins (astjax's code hash, the versions)."""
    if not isinstance(name, str):
        return False
    top = name.split(".")[0]
    if name == "@op" or top in _TRUSTED_TOPS or top in sys.builtin_module_names:
        return True
    if top not in getattr(sys, "stdlib_module_names", ()):
        return False
    path = getattr(sys.modules.get(top), "__file__", None)  # not a user's module of that name
    return path is None or os.path.abspath(path).startswith(_stdlib_dir())


def _stdlib_dir():
    import sysconfig
    return os.path.abspath(sysconfig.get_paths()["stdlib"]) + os.sep


_INDEX = {}


def _trusted_debug_call(value):
    """A debug_callback op's call (a check on sizes that raises at run time, jnp code's
    ``if a.shape[0] != n: raise ...``) whose function and constants the key pins: stored
    by value."""
    from ..debugging import DebugCall
    from ..ir.types import Static
    if not isinstance(value, DebugCall):
        return False
    return all(_trusted_import(t.value) is not None for t in value.types
               if isinstance(t, Static) and not _literal(t.value)) and \
        _trusted_import(value.fn) is not None


def _trusted_import(value):
    """(module, attribute path) that finds ``value`` again in a module the key pins, or
    None."""
    where = _importable(value)
    return where if where is not None and _trusted_module(where[0]) else None


def _importable(value):
    """(module, attribute path) that finds ``value`` itself again, or None."""
    from ..ops.registry import REGISTRY, Op
    if isinstance(value, Op):  # astjax's ops, wherever they were found
        return ("@op", value.name) if REGISTRY.get(value.name) is value else None
    mod, qual = getattr(value, "__module__", None), getattr(value, "__qualname__", None)
    if isinstance(mod, str) and isinstance(qual, str) and "<" not in qual:
        obj = sys.modules.get(mod)
        for part in qual.split("."):
            obj = getattr(obj, part, _MISSING) if obj is not None else _MISSING
            if obj is _MISSING:
                break
        if obj is value:
            return mod, qual
    for name in _SEARCH:
        module = sys.modules.get(name)
        if module is None:
            continue
        index = _INDEX.get(name)
        if index is None or index[0] != len(vars(module)):
            index = _INDEX[name] = (len(vars(module)), {
                id(v): k for k, v in list(vars(module).items())
                if not isinstance(v, (int, float, str, bool, type(None)))})
        attr = index[1].get(id(value))
        if attr is not None and getattr(module, attr, None) is value:
            return name, attr
    return None


def _import(mod, path):
    import importlib
    if mod == "@op":
        from ..ops.registry import REGISTRY
        return REGISTRY[path]
    obj = sys.modules.get(mod) or importlib.import_module(mod)
    for part in path.split("."):
        obj = getattr(obj, part)
    return obj


def _literal(value):
    """Immutable values described by their value (no identity)."""
    t = type(value)
    if value is None or value is Ellipsis or t in (bool, int, str, bytes):
        return True
    if t in (float, complex, slice) or isinstance(value, (np.generic, np.dtype)):
        return True
    if t in (tuple, frozenset):
        return all(_literal(v) for v in value)
    return False


def _lit_fp(value):
    t = type(value)
    if t is float:
        return ("float", value.hex())
    if t is complex:
        return ("complex", value.real.hex(), value.imag.hex())
    if t is slice:
        return ("slice", _lit_fp(value.start), _lit_fp(value.stop), _lit_fp(value.step))
    if isinstance(value, np.generic):
        if value.dtype.hasobject:
            raise Uncacheable("an object scalar")
        return ("np", value.dtype.str, repr(value.dtype), value.tobytes())
    if isinstance(value, np.dtype):
        if value.hasobject:
            raise Uncacheable("an object dtype")
        return ("dtype", repr(value), value.str)
    if t is tuple:
        return ("tuple",) + tuple(_lit_fp(v) for v in value)
    if t is frozenset:
        return ("frozenset",) + tuple(sorted(repr(_lit_fp(v)) for v in value))
    return (t.__name__, repr(value))


def _file_digest(kind, filename, owner):
    if kind == "lines":  # what the parser reads: linecache, as frontend/parse.py does
        import linecache
        lines = linecache.getlines(filename, getattr(owner, "__globals__", None))
        if not lines:
            raise Uncacheable(f"no source for {filename}")
        return hashlib.sha256("".join(lines).encode("utf-8", "surrogatepass")).hexdigest()
    with open(filename, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


# --- fingerprints -----------------------------------------------------------------------------

class Fingerprinter:
    """Deterministic descriptions of values; functions it meets get a path (``ref``) by which
    a later process finds them again. The same object met twice is described as such, so a
    lookup also checks which values were one object."""

    def __init__(self):
        self.memo = {}      # id -> position of first meeting
        self.keep = []      # the objects met, kept alive so ids stay theirs
        self.refs = {}      # id(function) -> ref
        self.files = {}     # (kind, filename) -> owner ref: files whose content matters

    def state(self):
        return dict(self.memo), len(self.keep), dict(self.refs), dict(self.files)

    def restore(self, state):
        """Back to ``state``: a lookup and a store each continue from the key's descriptions."""
        memo, n, refs, files = state
        self.memo, self.refs, self.files = dict(memo), dict(refs), dict(files)
        del self.keep[n:]

    def ref_of(self, value):
        return self.refs.get(id(value))


    def fp(self, value, ref):
        if _literal(value):
            return _lit_fp(value)
        key = id(value)
        if key in self.memo:
            return ("same", self.memo[key])
        self.memo[key] = len(self.memo)
        self.keep.append(value)
        return self._fp(value, ref)

    def _fp(self, value, ref):
        from ..ad.custom import _Custom
        from ..frontend.pipeline import PositionalView
        from ..frontend.synthetic import SyntheticFunction
        from ..runtime.array import Array
        t = type(value)
        if t in (np.ndarray, Array) and ref is not None:  # a leaf of a captured pytree
            self.refs.setdefault(id(value), ref)
        if t is np.ndarray:
            if value.dtype.hasobject:
                raise Uncacheable("an array of Python objects")
            return ("array", value.dtype.str, repr(value.dtype), value.shape,
                    hashlib.sha256(np.ascontiguousarray(value).tobytes()).hexdigest())
        if t is Array:
            if value._pending is not None:
                raise Uncacheable("an array still being computed")
            return ("Array", value._weak, self._fp(np.asarray(value._value), None))
        if t is tuple:
            return ("tuple",) + tuple(self.fp(v, _step(ref, "item", i))
                                      for i, v in enumerate(value))
        if isinstance(value, tuple) and hasattr(t, "_fields"):
            return ("namedtuple", self.fp(t, None)) + tuple(
                self.fp(v, _step(ref, "item", i)) for i, v in enumerate(value))
        if t is list:
            return ("list",) + tuple(self.fp(v, _step(ref, "item", i))
                                     for i, v in enumerate(value))
        if t is dict:
            items = []
            for k, v in value.items():
                if not _literal(k):
                    raise Uncacheable("a dict with non-literal keys")
                items.append((_lit_fp(k), self.fp(v, _step(ref, "item", k))))
            return ("dict",) + tuple(items)
        if t in (set, frozenset):
            if not all(_literal(v) for v in value):
                raise Uncacheable("a set of non-literal values")
            return (t.__name__,) + tuple(sorted(repr(_lit_fp(v)) for v in value))
        if t is pytypes.ModuleType:
            if _trusted_module(value.__name__) and sys.modules.get(value.__name__) is value:
                return ("module", value.__name__)
            raise Uncacheable(f"module {value.__name__} used as a value")
        if t is pytypes.FunctionType:
            return self._function(value, ref)
        if t is PositionalView:
            return ("positional",) + self._function(value.fn, ref)
        if isinstance(value, SyntheticFunction):
            raise Uncacheable(f"generated function {value.__name__} used as a value")
        if isinstance(value, _Custom):
            return self._custom(value, ref)
        if isinstance(value, type):
            where = _importable(value)
            if where is None:
                raise Uncacheable(f"class {value.__qualname__} is not importable")
            for base in value.__mro__:  # its code, and its bases', is in these files
                self._module_file(base.__module__)
            if ref is not None:  # found again that way (a namedtuple class astjax calls)
                self.refs.setdefault(id(value), ref)
            return ("class",) + where
        where = _trusted_import(value)
        if where is not None and _trusted_module(t.__module__):
            return ("import",) + where  # numpy's ufuncs, astjax's ops and random functions ...
        if _is_target(value):
            return self._transform(value, ref)
        raise Uncacheable(f"cannot describe a {t.__module__}.{t.__qualname__} value")

    def _function(self, fn, ref):
        if ref is None:
            raise Uncacheable(f"function {fn.__qualname__} reached no known way")
        self.refs.setdefault(id(fn), ref)
        code = fn.__code__
        if not in_astjax(code.co_filename):
            self.files.setdefault(("lines", code.co_filename), self.refs[id(fn)])
        # the positions tell lambdas on one line apart, as frontend/parse.py does
        if not hasattr(code, "co_positions"):
            raise Uncacheable("Python < 3.11: no code positions")
        where = hashlib.sha256(repr(list(code.co_positions())).encode() + code.co_code)
        out = ("function", fn.__module__, fn.__qualname__, code.co_filename,
               code.co_firstlineno, code.co_name, code.co_varnames[:code.co_argcount],
               where.hexdigest(),
               self.fp(fn.__defaults__, _step(ref, "attr", "__defaults__")),
               self.fp(fn.__kwdefaults__, _step(ref, "attr", "__kwdefaults__")),
               tuple((k, self.fp(v, _step(ref, "attr", k)))  # jnp.logaddexp.reduce
                     for k, v in vars(fn).items() if k != "__wrapped__"))
        if hasattr(fn, "__wrapped__"):
            inner = inspect.unwrap(fn)
            if inner is not fn:
                out += (self.fp(inner, _step(ref, "unwrap")),)
        return out

    def _custom(self, custom, ref):
        """A custom_jvp/custom_vjp function of astjax's own (jnp.linalg's, nn.softplus): its
        code and rules are pinned by the key; found again by import, its function and rule
        by attribute. A user's is not cached: its rules reach generated code untraced."""
        where = _trusted_import(custom)
        if where is None:
            raise Uncacheable(f"{type(custom).__name__} {custom.__name__}")
        rule = _step(ref, "attr", "rule")
        parts = [(custom.fun, _step(ref, "attr", "fun"))]
        if isinstance(custom.rule, tuple):  # custom_vjp's (fwd, bwd)
            parts += [(f, _step(rule, "item", k)) for k, f in enumerate(custom.rule)]
        else:
            parts.append((custom.rule, rule))
        for part, found in parts:
            if found is not None and isinstance(part, pytypes.FunctionType):
                self.refs.setdefault(id(part), found)
        return ("import",) + where

    def _transform(self, obj, ref):
        where = _trusted_import(type(obj))
        if where is None:
            raise Uncacheable(f"transform {type(obj).__qualname__}")
        attrs = []
        for name in sorted(vars(obj)):
            if name in _SKIP_ATTRS:
                continue
            attrs.append((name, self.fp(vars(obj)[name], _step(ref, "attr", name))))
        return ("transform",) + where + tuple(attrs)

    def type_fp(self, t, ref):
        """An abstract type (ir/types.py) and the Python values in it."""
        import dataclasses
        from ..ir.types import Type
        if isinstance(t, tuple):
            return ("types",) + tuple(self.type_fp(e, _step(ref, "item", i))
                                      for i, e in enumerate(t))
        if isinstance(t, Type):
            if not dataclasses.is_dataclass(t):
                raise Uncacheable(f"type {t}")
            return (type(t).__name__,) + tuple(
                self.type_fp(getattr(t, f.name), _step(ref, "attr", f.name))
                for f in dataclasses.fields(t))
        return self.fp(t, ref)

    def _module_file(self, modname):
        """Objects from modules the key does not pin: their file's content matters."""
        if _trusted_module(modname):
            return
        module = sys.modules.get(modname)
        path = getattr(module, "__file__", None)
        if not path:
            raise Uncacheable(f"module {modname} has no file")
        self.files.setdefault(("bytes", path), None)


def _is_target(value):
    """A transform (jit, grad, vmap, the eager jvp/vjp targets ...): an astjax object with
    ``function_for``, described by its attributes. custom_jvp/custom_vjp are not: their
    rules reach generated code through namespaces this cache cannot trace."""
    from ..ad.custom import _Custom
    from ..api import Transformed
    if isinstance(value, Transformed):
        return True
    t = type(value)
    return hasattr(t, "function_for") and not isinstance(value, (_Custom, type)) and \
        t.__module__.startswith("astjax.") and _importable(t) is not None


def _step(ref, *step):
    return None if ref is None else ref + (step,)


def _deref(ref, roots, values):
    root = ref[0]
    obj = roots[root] if isinstance(root, str) else values[root[1]]
    for step in ref[1:]:
        if step[0] == "attr":
            obj = getattr(obj, step[1])
        elif step[0] == "item":
            obj = obj[step[1]]
        elif step[0] == "unwrap":
            obj = inspect.unwrap(obj)
        elif step[0] == "builder":  # what builds a container of this TreeType
            from ..ir.trees import builder
            obj = builder(obj)
        else:
            raise KeyError(step)
    return obj


def _resolve_again(fn, name, chain):
    """``Program.resolve``'s lookup of ``name`` (then ``chain``) as seen from function ``fn``:
    closure cell, then global, then builtin."""
    value = _MISSING
    code = fn.__code__
    if fn.__closure__ and name in code.co_freevars:
        try:
            value = fn.__closure__[code.co_freevars.index(name)].cell_contents
        except ValueError:  # an unfilled cell: parse.py leaves it out, so globals decide
            pass
    if value is _MISSING:
        value = fn.__globals__.get(name, _MISSING)
    if value is _MISSING:
        value = getattr(builtins, name, _MISSING)
    if value is _MISSING:
        raise LookupError(name)
    for attr in chain:
        value = getattr(value, attr)
    return value


def _base_value(parsed, name):
    """What ``Program.resolve`` found for ``name`` before following attributes."""
    value = parsed.freevars.get(name, _MISSING)
    if value is _MISSING:
        value = parsed.fn.__globals__.get(name, _MISSING)
    if value is _MISSING:
        value = getattr(builtins, name, _MISSING)
    return value


def _derived_ok(value):
    """Values astjax put in a namespace itself: generated functions, literals and objects of
    the modules whose code the key pins."""
    from ..frontend.synthetic import SyntheticFunction
    if isinstance(value, SyntheticFunction) or _literal(value):
        return True
    if type(value) is tuple:  # isinstance(x, (tuple, list)) in jnp code, vmapped
        return all(map(_derived_ok, value))
    inner = value
    while _is_target(inner) and _is_target(getattr(inner, "fun", None)):
        inner = inner.fun  # hessian(g) is jacfwd(jacrev(g))
    if _is_target(inner) and isinstance(getattr(inner, "fun", None), SyntheticFunction):
        return True  # a transform astjax applied to a generated function (vmap of a step)
    if isinstance(value, pytypes.ModuleType):
        return _trusted_module(value.__name__) and sys.modules.get(value.__name__) is value
    return _trusted_import(value) is not None


# --- entries ----------------------------------------------------------------------------------

class Hit:
    def __init__(self, entry, namespace):
        self.source = entry["source"]
        self.spec_name = entry["spec_name"]
        self.name = entry["name"]
        self.out_type = entry["out_type"]
        self.line_map = entry["line_map"]
        self.namespace = namespace


class SourceCache:
    """One compile's entry: ``lookup()`` before generating, ``store(...)`` after."""

    def __init__(self, target, arg_types, backend):
        self.target, self.arg_types, self.backend = target, arg_types, backend
        self.fpr = Fingerprinter()
        self.miss_reason = None
        from ..config import config
        if not _is_target(target):
            raise Uncacheable(f"{type(target).__name__} is not a transform")
        versions = [sys.version, np.__version__]
        if backend == "numba":
            import numba
            versions += [numba.__version__, numba.config.NUMBA_NUM_THREADS]  # (parallel code)
        material = (FORMAT, code_hash(), tuple(versions), backend, config.snapshot(),
                    os.environ.get("ASTJAX_NUM_CPU_DEVICES", ""),
                    self.fpr.fp(target, ("target",)),
                    self.fpr.type_fp(tuple(arg_types), ("types",)))
        self.key = hashlib.sha256(repr(material).encode()).hexdigest()[:40]
        self._after_key = self.fpr.state()
        self.path = os.path.join(gen_dir(), self.key + ".pkl")

    # --- lookup ---------------------------------------------------------------------------
    def lookup(self):
        try:
            with open(self.path, "rb") as f:
                data = f.read()
        except OSError:
            STATS["misses"] += 1
            return None
        entry = _unpack(data)
        if entry is None:
            self.miss_reason = "corrupt entry"
            STATS["corrupt"] += 1
            STATS["misses"] += 1
            return None
        try:
            namespace = self._validate(entry)
        except Exception as e:  # anything that differs or cannot be found again: generate
            namespace = f"{type(e).__name__}: {e}"
        if isinstance(namespace, str):
            self.miss_reason = namespace
            STATS["misses"] += 1
            return None
        STATS["hits"] += 1
        return Hit(entry, namespace)

    def _validate(self, entry):
        if entry.get("format") != FORMAT or entry.get("key") != self.key:
            return "another format or key"
        self.fpr.restore(self._after_key)
        roots = {"target": self.target, "types": tuple(self.arg_types)}
        values = []
        for k, (owner_ref, name, chain, fp) in enumerate(entry["records"]):
            owner = _deref(owner_ref, roots, values)
            value = _resolve_again(owner, name, chain)
            if self.fpr.fp(value, (("rec", k),)) != fp:
                return f"{name}{''.join('.' + a for a in chain)} changed"
            values.append(value)
        for (kind, filename, owner_ref), digest in entry["files"]:
            owner = _deref(owner_ref, roots, values) if owner_ref is not None else None
            if _file_digest(kind, filename, owner) != digest:
                return f"{filename} changed"
        from ..runtime.array import to_numpy_input
        namespace = {}
        for name, (how, where) in entry["captured"]:
            value = values[where] if how == "rec" else where if how == "value" else \
                _deref(where, roots, values)
            namespace[name] = to_numpy_input(value)
        for name, how in entry["statics"]:
            if how[0] == "rec":
                namespace[name] = values[how[1]]
            elif how[0] == "ref":
                namespace[name] = _deref(how[1], roots, values)
            elif how[0] == "import":
                namespace[name] = _import(how[1], how[2])
            else:
                namespace[name] = how[1]
        return namespace

    # --- store ----------------------------------------------------------------------------
    def store(self, program, source, spec_name, name, out_type, line_map):
        """Describe what generation read; write the entry. Raises Uncacheable."""
        from ..frontend.pipeline import VarargView
        from ..frontend.synthetic import SyntheticFunction
        from ..ir.infer import COMPUTED_PREFIX
        from ..ir.specialize import NUMPY_NAME
        self.fpr.restore(self._after_key)
        records, values, by_id, seen = [], [], {}, set()
        for parsed, base, chain, value in program.resolved:
            if base == NUMPY_NAME or (id(parsed.fn), base, chain, id(value)) in seen:
                continue  # typing runs over loops more than once: one record is enough
            seen.add((id(parsed.fn), base, chain, id(value)))
            owner = parsed.fn
            while isinstance(owner, SyntheticFunction):
                owner = owner.origin.fn
            if not isinstance(owner, pytypes.FunctionType):
                raise Uncacheable(f"names resolved in {owner!r}")
            ref = self.fpr.ref_of(owner)
            if ref is None and not in_astjax(owner.__code__.co_filename):
                raise Uncacheable(f"function {owner.__qualname__} reached no known way")
            seen_base = _base_value(parsed, base)
            try:
                user_base = _resolve_again(owner, base, ())
            except LookupError:
                user_base = _MISSING
            where = f"{base}{''.join('.' + a for a in chain)} in {parsed.fn.__qualname__}"
            if seen_base is not _MISSING and user_base is seen_base:
                # the name's binding where the function was written (its cell, global or
                # builtin): found again and compared on lookup
                if ref is not None:
                    try:
                        again = _resolve_again(owner, base, chain)
                    except Exception:
                        raise Uncacheable(f"{where}: not found again") from None
                    if again is not value and \
                            Fingerprinter().fp(again, None) != Fingerprinter().fp(value, None):
                        raise Uncacheable(f"{where}: changes when read again")
                    fp = self.fpr.fp(value, (("rec", len(records)),))
                    by_id.setdefault(id(value), len(records))
                    records.append((ref, base, tuple(chain), fp))
                    values.append(value)
                    continue
                if base not in owner.__code__.co_freevars:
                    continue  # an astjax module's global: astjax's code, pinned by the key
            # a binding astjax made: a generated function, a desugared nested def, a helper
            # of a transform
            if self.fpr.ref_of(value) is not None or \
                    _find_static(self.arg_types, value) is not None:
                continue  # a function already described (the user's, passed on by a
                # transform), a namedtuple class of an argument's type, ...
            if not (_derived_ok(value) or chain and _derived_ok(seen_base)):
                raise Uncacheable(f"{where}: a value astjax cannot trace")
        files = {}
        for spec in program.specs.values():
            fn = spec.fn
            if isinstance(fn, VarargView):  # g(*xs) for k arguments: g's source
                fn = fn.fn
            while isinstance(fn, SyntheticFunction):
                fn = fn.origin.fn
            if in_astjax(spec.parsed.filename):
                continue
            ref = self.fpr.ref_of(fn)
            if ref is None:
                raise Uncacheable(f"function {fn.__qualname__} reached no known way")
            if not os.path.isfile(spec.parsed.filename):  # exec'd code, a notebook cell
                raise Uncacheable(f"{spec.parsed.filename} is not a file")
            files[("lines", spec.parsed.filename, ref)] = hashlib.sha256(
                "".join(spec.parsed.lines).encode("utf-8", "surrogatepass")).hexdigest()
        for (kind, filename), ref in self.fpr.files.items():
            if kind == "lines" and any(k[1] == filename for k in files):
                continue
            if not os.path.isfile(filename):
                raise Uncacheable(f"{filename} is not a file")
            owner = _deref(ref, {"target": self.target, "types": tuple(self.arg_types)},
                           values) if ref is not None else None
            files[(kind, filename, ref)] = _file_digest(kind, filename, owner)
        captured = []
        for vid, (cname, value, _) in program.captured.items():
            if vid in by_id:
                captured.append((cname, ("rec", by_id[vid])))
            elif vid in self.fpr.refs:  # a leaf of a recorded pytree (ir/captured_trees.py)
                captured.append((cname, ("ref", self.fpr.refs[vid])))
            elif cname.startswith("const_" + COMPUTED_PREFIX):  # computed from constants the
                captured.append((cname, ("value", value)))  # key pins or records check
            else:
                raise Uncacheable(f"captured value {cname} reached no known way")
        statics = []
        for vid, (sname, value) in program.statics.items():
            if vid in by_id:
                statics.append((sname, ("rec", by_id[vid])))
            elif _literal(value) or _trusted_debug_call(value):
                statics.append((sname, ("value", value)))
            else:
                ref = self.fpr.ref_of(value) or _find_static(self.arg_types, value)
                where = _trusted_import(value)
                if ref is not None:
                    statics.append((sname, ("ref", ref)))
                elif where is not None:
                    statics.append((sname, ("import",) + where))
                else:
                    raise Uncacheable(f"constant {sname} reached no known way")
        entry = {"format": FORMAT, "key": self.key, "records": records,
                 "files": list(files.items()), "captured": captured, "statics": statics,
                 "source": source, "spec_name": spec_name, "name": name,
                 "out_type": out_type, "line_map": dict(line_map)}
        try:
            payload = pickle.dumps(entry, protocol=pickle.HIGHEST_PROTOCOL)
            again = pickle.loads(payload)
        except Exception as e:
            raise Uncacheable(f"cannot pickle the entry ({type(e).__name__})") from None
        if again["out_type"] != out_type:
            raise Uncacheable("the output type does not survive pickling")
        _write(self.path, payload)
        STATS["stores"] += 1


def _find_static(arg_types, value):
    """The path of ``value`` among the Static values of the argument types (or what builds
    one of their containers, see ir/trees.builder), or None."""
    from ..ir.trees import builder
    from ..ir.types import SequenceType, Static, TreeType

    def walk(t, ref):
        if isinstance(t, Static):
            return ref + (("attr", "value"),) if t.value is value else None
        if isinstance(t, TreeType) and type(builder(t)) is type(value) and \
                builder(t) == value:
            return ref + (("builder",),)
        parts = t.elts if isinstance(t, SequenceType) else \
            t.children if isinstance(t, TreeType) else ()
        field = "elts" if isinstance(t, SequenceType) else "children"
        for i, e in enumerate(parts):
            found = walk(e, ref + (("attr", field), ("item", i)))
            if found is not None:
                return found
        return None
    for i, t in enumerate(arg_types):
        found = walk(t, ("types", ("item", i)))
        if found is not None:
            return found
    return None


def _unpack(data):
    if not data.startswith(_MAGIC) or len(data) < len(_MAGIC) + 32:
        return None
    digest, payload = data[len(_MAGIC):len(_MAGIC) + 32], data[len(_MAGIC) + 32:]
    if hashlib.sha256(payload).digest() != digest:
        return None  # truncated or corrupt
    try:
        entry = pickle.loads(payload)
    except Exception:
        return None
    return entry if isinstance(entry, dict) else None


def _write(path, payload):
    data = _MAGIC + hashlib.sha256(payload).digest() + payload
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)  # atomic: a reader sees the old entry or the whole new one
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def open_for(target, arg_types, backend):
    """The cache entry for this compile, or None (cache off, or not describable)."""
    if not enabled():
        return None, None
    try:
        return SourceCache(target, arg_types, backend), None
    except Uncacheable as e:
        STATS["uncacheable"] += 1
        return None, str(e)
    except Exception as e:  # no usable cache directory, an object that fails to describe
        return None, f"{type(e).__name__}: {e}"  # itself: generate as usual
