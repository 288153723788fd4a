"""Generated modules as real files: per-user cache dir, content-hash names, atomic writes.

Real files let tracebacks, pdb and Numba's on-disk cache see generated code;
``linecache`` registration makes the lines show even if the file is removed.
The directory is ``$ASTJAX_CACHE_DIR`` or ``~/.cache/astjax`` (mode 0700);
deleting it is always safe.
"""
import hashlib
import importlib.util
import linecache
import os
import stat
import sys
import tempfile

import numpy

_PACKAGE = "astjax_generated"


def cache_dir():
    path = os.environ.get("ASTJAX_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"),
        "astjax")
    path = os.path.join(path, "src")
    os.makedirs(path, mode=0o700, exist_ok=True)
    mode = stat.S_IMODE(os.stat(path).st_mode)
    if mode & 0o022:  # never run code from a directory others can write
        os.chmod(path, mode & ~0o022)
    return path


def content_key(source, *extra):
    h = hashlib.sha256()
    for part in (source, sys.version, numpy.__version__) + extra:
        h.update(str(part).encode())
        h.update(b"\0")
    return h.hexdigest()[:20]


def load_module(source, stem, namespace=None):
    """Write ``source`` to the cache (if not already there) and import it as a module.

    One source may run with different captured values (two closures over different
    arrays print the same code): each set of values gets a module of its own."""
    key = content_key(source)
    name = f"{_PACKAGE}.{stem}_{key}"
    module, copies = sys.modules.get(name), 0
    while module is not None:
        if _same_values(module.__dict__, namespace or {}):
            return module
        copies += 1
        name = f"{_PACKAGE}.{stem}_{key}_{copies}"
        module = sys.modules.get(name)
    path = os.path.join(cache_dir(), f"{stem}_{key}.py")
    if not _same_file(path, source):
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), suffix=".tmp")
        with os.fdopen(fd, "w") as f:
            f.write(source)
        os.replace(tmp, path)  # atomic: readers see the old file or the whole new one
    linecache.cache[path] = (len(source), None, source.splitlines(True), path)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    module.__dict__.update(namespace or {})
    sys.modules[name] = module  # before exec: Numba's cache needs the module importable
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]  # a half-run module must not be found next time
        raise
    return module


def _same_values(module_dict, namespace):
    for name, value in namespace.items():
        old = module_dict.get(name, _MISSING)
        if old is value:
            continue
        if isinstance(value, numpy.ndarray) or isinstance(old, numpy.ndarray):
            if not (type(old) is type(value) and old.dtype == value.dtype
                    and numpy.array_equal(old, value, equal_nan=True)):
                return False
        elif type(old) is not type(value) or not _equal(old, value):
            return False
    return True


def _equal(a, b):
    try:
        return bool(a == b)
    except Exception:  # objects whose == is not a truth value
        return False


_MISSING = object()


def _same_file(path, source):
    try:
        with open(path) as f:
            return f.read() == source
    except OSError:
        return False
