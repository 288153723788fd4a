"""The persistent cache of generated source (backends/source_cache.py), across processes.

Each test runs fresh interpreters on a cache directory of its own and checks that a
second process reuses the entry, and that every change that alters what would be
generated (the user's files, captured values, closure cells, config) misses instead.
"""
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

_DRIVER = textwrap.dedent("""
    import json, sys
    sys.path.insert(0, {here!r})
    import numpy as np
    import astjax
    from astjax._src.backends import source_cache
    astjax.config.update("log_compiles", True)
    {setup}
    out = astjax.jit(f)(np.arange(4, dtype=np.float32))
    print(json.dumps({{"out": np.asarray(out).tolist(), "stats": source_cache.STATS}}))
""")

USERMOD = """
import os
import numpy as np
import astjax.numpy as jnp
from helpers import scale

W = np.loadtxt(os.path.join(os.path.dirname(__file__), "w.txt"), dtype=np.float32)


def f(x):
    return scale(jnp.sin(x) * W) + 1.0


class Cfg:
    @property
    def scale(self):  # a fresh float on every read, from a file the source does not show
        with open(os.path.join(os.path.dirname(__file__), "scale.txt")) as f:
            return float(f.read())


cfg = Cfg()


def h(x):
    return x * cfg.scale


def make(s):
    def g(x):
        return x * s
    return g


PARAMS = {"w": W, "layers": [(W, 2.0)], "act": "sin"}


def p(x):
    w, k = PARAMS["layers"][0]
    return x * PARAMS["w"] + w * k


def q(x):
    return x * jnp.r_[4.0, 3.0, 2.0, 1.0]
"""

HELPERS = """
def scale(x):
    return x * 2.0
"""


def _project(tmp_path, w=(1.0, 2.0, 3.0, 4.0)):
    (tmp_path / "usermod.py").write_text(USERMOD)
    (tmp_path / "helpers.py").write_text(HELPERS)
    (tmp_path / "w.txt").write_text("\n".join(map(str, w)))
    (tmp_path / "scale.txt").write_text("2.5")


def _run(tmp_path, setup="from usermod import f", backend="python", **env):
    full = dict(os.environ, ASTJAX_CACHE_DIR=str(tmp_path / "cache"),
                NUMBA_CACHE_DIR=str(tmp_path / "cache"), ASTJAX_JIT_BACKEND=backend,
                PYTHONDONTWRITEBYTECODE="1", PYTHONPATH=ROOT, **env)
    full.pop("JAX_ENABLE_X64", None) if "JAX_ENABLE_X64" not in env else None
    code = _DRIVER.format(here=str(tmp_path), setup=setup)
    proc = subprocess.run([sys.executable, "-c", code], env=full, capture_output=True,
                          text=True, cwd=str(tmp_path), timeout=120)
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    result["log"] = proc.stderr
    return result


def _expected(w, k=2.0):
    import numpy as np
    x = np.arange(4, dtype=np.float32)
    return ((np.sin(x) * np.asarray(w, np.float32)) * np.float32(k) + 1.0).tolist()


def test_second_process_hits_and_agrees(tmp_path):
    _project(tmp_path)
    first = _run(tmp_path)
    assert first["stats"]["stores"] == 1 and first["stats"]["hits"] == 0, first["log"]
    second = _run(tmp_path)
    assert second["stats"]["hits"] == 1, second["log"]
    assert "source cache hit" in second["log"]
    assert second["out"] == first["out"]
    assert first["out"] == pytest.approx(_expected((1, 2, 3, 4)), rel=1e-6)
    gen = tmp_path / "cache" / "gen"
    assert oct(os.stat(gen).st_mode & 0o777) == "0o700"
    off = _run(tmp_path, ASTJAX_SOURCE_CACHE="0")
    assert off["stats"]["hits"] == 0 and off["stats"]["stores"] == 0
    assert off["out"] == first["out"]


def test_editing_the_users_file_misses(tmp_path):
    _project(tmp_path)
    _run(tmp_path)
    (tmp_path / "usermod.py").write_text(USERMOD.replace("+ 1.0", "+ 5.0"))
    again = _run(tmp_path)
    assert again["stats"]["hits"] == 0 and again["stats"]["stores"] == 1, again["log"]
    assert again["out"] == pytest.approx([v + 4.0 for v in _expected((1, 2, 3, 4))], rel=1e-6)
    assert _run(tmp_path)["stats"]["hits"] == 1


def test_a_captured_pytree_is_cached_and_its_leaves_checked(tmp_path):
    # a global dict of arrays (ir/captured_trees.py): its leaves are found again by path
    _project(tmp_path)
    first = _run(tmp_path, setup="from usermod import p as f")
    assert first["stats"]["stores"] == 1, first["log"]
    assert first["out"] == pytest.approx([2.0, 6.0, 12.0, 20.0])
    second = _run(tmp_path, setup="from usermod import p as f")
    assert second["stats"]["hits"] == 1 and second["out"] == first["out"], second["log"]
    _project(tmp_path, w=(4.0, 3.0, 2.0, 1.0))  # other contents of the dict's arrays
    again = _run(tmp_path, setup="from usermod import p as f")
    assert again["stats"]["hits"] == 0, again["log"]
    assert again["out"] == pytest.approx([8.0, 9.0, 8.0, 5.0])


def test_changed_captured_array_misses_and_new_values_are_used(tmp_path):
    _project(tmp_path)
    _run(tmp_path)
    _project(tmp_path, w=(4.0, 3.0, 2.0, 1.0))  # same source, other contents of W
    again = _run(tmp_path)
    assert again["stats"]["hits"] == 0, again["log"]
    assert again["out"] == pytest.approx(_expected((4, 3, 2, 1)), rel=1e-6)
    third = _run(tmp_path)
    assert third["stats"]["hits"] == 1 and third["out"] == again["out"]


def test_changed_callee_in_another_file_misses(tmp_path):
    _project(tmp_path)
    _run(tmp_path)
    (tmp_path / "helpers.py").write_text(HELPERS.replace("2.0", "3.0"))
    again = _run(tmp_path)
    assert again["stats"]["hits"] == 0, again["log"]
    assert again["out"] == pytest.approx(_expected((1, 2, 3, 4), 3.0), rel=1e-6)


def test_changed_closure_cell_misses(tmp_path):
    _project(tmp_path)
    first = _run(tmp_path, setup="from usermod import make; f = make(2.0)")
    second = _run(tmp_path, setup="from usermod import make; f = make(3.0)")
    assert second["stats"]["hits"] == 0, second["log"]
    assert second["out"] == [0.0, 3.0, 6.0, 9.0] and first["out"] == [0.0, 2.0, 4.0, 6.0]
    assert _run(tmp_path, setup="from usermod import make; f = make(3.0)")["stats"]["hits"] == 1


def test_changed_attribute_value_misses(tmp_path):
    _project(tmp_path)
    first = _run(tmp_path, setup="from usermod import h as f")
    assert first["out"] == [0.0, 2.5, 5.0, 7.5] and first["stats"]["stores"] == 1
    assert _run(tmp_path, setup="from usermod import h as f")["stats"]["hits"] == 1
    (tmp_path / "scale.txt").write_text("4.0")
    again = _run(tmp_path, setup="from usermod import h as f")
    assert again["stats"]["hits"] == 0 and again["out"] == [0.0, 4.0, 8.0, 12.0]


def test_changed_config_misses(tmp_path):
    _project(tmp_path)
    _run(tmp_path)
    x64 = _run(tmp_path, JAX_ENABLE_X64="1")
    assert x64["stats"]["hits"] == 0 and x64["stats"]["stores"] == 1, x64["log"]
    assert _run(tmp_path, JAX_ENABLE_X64="1")["stats"]["hits"] == 1
    assert _run(tmp_path)["stats"]["hits"] == 1  # the float32 entry is still there


def test_corrupt_entry_is_a_miss_then_rewritten(tmp_path):
    _project(tmp_path)
    first = _run(tmp_path)
    (entry,) = (tmp_path / "cache" / "gen").glob("*.pkl")
    data = entry.read_bytes()
    entry.write_bytes(data[:len(data) // 2])  # truncated
    again = _run(tmp_path)
    assert again["stats"]["corrupt"] == 1 and again["stats"]["stores"] == 1, again["log"]
    assert again["out"] == first["out"]
    entry.write_bytes(b"garbage")
    assert _run(tmp_path)["stats"]["corrupt"] == 1
    assert _run(tmp_path)["stats"]["hits"] == 1


def test_a_module_that_fails_to_load_is_not_kept(tmp_path, monkeypatch):
    """A generated module whose code raises while it loads is dropped from sys.modules:
    the next load runs it again (and raises again) instead of finding it half-made."""
    from astjax._src.backends.loader import load_module
    monkeypatch.setenv("ASTJAX_CACHE_DIR", str(tmp_path))
    for _ in range(2):
        with pytest.raises(ZeroDivisionError):
            load_module("x = 1 / 0\n", "fails")
    assert load_module("x = 1\n", "loads").x == 1


def test_exec_function_is_never_cached(tmp_path):
    _project(tmp_path)
    setup = textwrap.dedent("""
        import linecache
        src = "import astjax.numpy as jnp\\ndef f(x):\\n    return jnp.cos(x) + 2.0\\n"
        linecache.cache["<astjax-test>"] = (len(src), None, src.splitlines(True), "<astjax-test>")
        ns = {}
        exec(compile(src, "<astjax-test>", "exec"), ns)
        f = ns["f"]
    """).strip()
    for _ in range(2):
        out = _run(tmp_path, setup=setup)
        assert out["stats"]["hits"] == 0 and out["stats"]["stores"] == 0, out["log"]
        assert "not caching" in out["log"]
        assert out["out"] == pytest.approx([2.0 + __import__("math").cos(i) for i in range(4)],
                                           rel=1e-6)


def test_numba_backend_hits(tmp_path):
    _project(tmp_path)
    first = _run(tmp_path, backend="numba")
    assert first["stats"]["stores"] == 1, first["log"]
    second = _run(tmp_path, backend="numba")
    assert second["stats"]["hits"] == 1, second["log"]
    assert "source cache hit for numba code" in second["log"]
    assert second["out"] == first["out"]
    assert first["out"] == pytest.approx(_expected((1, 2, 3, 4)), rel=1e-5)


CUSTOM = """
import astjax
import astjax.numpy as jnp


@astjax.custom_jvp
def mine(x):
    return jnp.sin(x)


@mine.defjvp
def _mine_jvp(primals, tangents):
    return mine(primals[0]), jnp.cos(primals[0]) * tangents[0]


def uses_astjax_rules(x):
    m = jnp.outer(x, x) + 5.0 * jnp.eye(4)
    return jnp.linalg.det(m) + astjax.nn.softplus(x)


def uses_mine(x):
    return mine(x) * 2.0


def uses_random(x):
    return x + astjax.random.normal(astjax.random.PRNGKey(0), (4,))
"""


def test_astjax_custom_rules_are_cached_a_users_are_not(tmp_path):
    """astjax's own custom_jvp functions (jnp.linalg's decompositions, nn.softplus) are
    pinned by the key and found again by import; a user's custom rule keeps the compile
    out of the cache (its rules reach generated code untraced)."""
    import numpy as np
    _project(tmp_path)
    (tmp_path / "custommod.py").write_text(CUSTOM)
    x = np.arange(4, dtype=np.float32)
    want = np.linalg.det(np.outer(x, x) + 5 * np.eye(4)) + np.logaddexp(0, x)
    setup = "from custommod import uses_astjax_rules as f"
    first, second = _run(tmp_path, setup=setup), _run(tmp_path, setup=setup)
    assert first["stats"]["stores"] == 1 and second["stats"]["hits"] == 1, second["log"]
    assert second["out"] == first["out"] == pytest.approx(want.tolist(), rel=1e-5)
    for _ in range(2):
        out = _run(tmp_path, setup="from custommod import uses_mine as f")
        assert out["stats"]["hits"] == 0 and "not caching" in out["log"], out["log"]
        assert out["out"] == pytest.approx((2 * np.sin(x)).tolist(), rel=1e-6)


def test_astjax_random_functions_are_cached(tmp_path):
    """astjax.random's functions are found again by import (they had been described by
    their attributes, which the key cannot: no function using them was cached)."""
    import numpy as np
    import astjax
    _project(tmp_path)
    (tmp_path / "custommod.py").write_text(CUSTOM)
    x = np.arange(4, dtype=np.float32)
    want = x + np.asarray(astjax.random.normal(astjax.random.PRNGKey(0), (4,)))
    setup = "from custommod import uses_random as f"
    first, second = _run(tmp_path, setup=setup), _run(tmp_path, setup=setup)
    assert first["stats"]["stores"] == 1 and second["stats"]["hits"] == 1, first["log"]
    assert second["out"] == first["out"] == pytest.approx(want.tolist(), rel=1e-6)


def test_an_array_computed_from_constants_is_cached(tmp_path):
    """jnp.r_[...] of constants is computed while the code is generated; the entry keeps
    it by value (it was 'captured value ... reached no known way': not cached, as every
    function calling random.binomial was)."""
    _project(tmp_path)
    x = np.arange(4, dtype=np.float32)
    setup = "from usermod import q as f"
    first, second = _run(tmp_path, setup=setup), _run(tmp_path, setup=setup)
    assert first["stats"]["stores"] == 1 and second["stats"]["hits"] == 1, first["log"]
    assert second["out"] == first["out"] == (x * np.float32([4, 3, 2, 1])).tolist()


NEWTON = """
import astjax
import astjax.numpy as jnp


def newton_step(x):
    a = jnp.stack([x, x * 0.5 + 1.0], axis=1)
    y = (x > 1.5).astype(jnp.float32)

    def nll(w):
        z = a @ w
        return jnp.sum(jnp.logaddexp(0.0, z) - y * z) + 0.5 * jnp.sum(w ** 2)

    w = jnp.zeros(2)
    return w - jnp.linalg.solve(astjax.hessian(nll)(w), astjax.grad(nll)(w))
"""


def test_hessian_of_a_closure_and_logaddexp_are_cached(tmp_path):
    """A Newton step (hessian of a nested function, jnp.logaddexp) is cached. It was not:
    'function _logaddexp_reduce reached no known way' (jnp.logaddexp's .reduce attribute),
    then hessian's jacfwd(jacrev(g)) of the closure and vmap's (tuple, list) constant were
    'a value astjax cannot trace'; each new process generated the code again (7 s for a
    five-step Newton solve)."""
    _project(tmp_path)
    (tmp_path / "newtonmod.py").write_text(NEWTON)
    setup = "from newtonmod import newton_step as f"
    # Numba's code (the python backend's keeps the closure's function objects as values,
    # which no entry can hold)
    first = _run(tmp_path, setup=setup, backend="numba")
    second = _run(tmp_path, setup=setup, backend="numba")
    assert first["stats"]["stores"] == 1 and second["stats"]["hits"] == 1, first["log"]
    x = np.arange(4, dtype=np.float64)  # one Newton step from 0, by hand
    a = np.stack([x, x * 0.5 + 1.0], axis=1)
    g = a.T @ (0.5 - (x > 1.5))
    h = a.T @ a * 0.25 + np.eye(2)
    assert second["out"] == first["out"] == pytest.approx(-np.linalg.solve(h, g), rel=1e-5)


ATTRS = """
def base(x):
    return x * 2.0


def other(x):
    return x + 1.0


base.variant = other  # a function attribute (jnp.logaddexp.reduce was one)


def uses_attr(x):
    return base(x) + 1.0
"""


def test_a_function_with_a_function_attribute_is_cached(tmp_path):
    """A function whose attribute is another function was not cached ('function other
    reached no known way': attributes were described with no way to find them again)."""
    _project(tmp_path)
    (tmp_path / "attrmod.py").write_text(ATTRS)
    setup = "from attrmod import uses_attr as f"
    first, second = _run(tmp_path, setup=setup), _run(tmp_path, setup=setup)
    assert first["stats"]["stores"] == 1 and second["stats"]["hits"] == 1, first["log"]
    assert second["out"] == first["out"] == (np.arange(4) * 2.0 + 1.0).tolist()


def test_numba_module_key_covers_the_kernels_generated_code_inlines(monkeypatch):
    # generated code keeps LLVM's copies of the kernels it calls in its own Numba cache
    # entry: editing xla_f32.py (random_kernels.py compiles it) left the old erf in
    # every cached program that called it
    from astjax._src.backends.numba_cpu import boundary
    here = os.path.dirname(boundary.__file__)
    kernels = {f for f in os.listdir(here) if f.endswith("_kernels.py")} | {"runtime.py"}
    assert kernels <= set(boundary.RUNTIME_SOURCES)
    before = boundary.key_comment({})
    real = boundary._file_hash
    monkeypatch.setattr(boundary, "_file_hash", lambda path: "edited" if
                        path.endswith("xla_f32.py") else real(path))
    assert boundary.key_comment({}) != before
