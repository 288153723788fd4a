"""Record jax.random's outputs for a table of seeds, shapes and dtypes: the reference data of
tests/test_random.py, which then runs without JAX.

Run it with JAX installed in a throwaway virtual environment outside the repository::

    python3 -m venv /tmp/jaxenv && /tmp/jaxenv/bin/pip install -q jax==0.10.2 jaxlib
    /tmp/jaxenv/bin/python tools/make_random_data.py          # writes tests/data/random_jax.npz

The file holds one JSON string ``cases`` (a list of case records), one array per case,
``out{i}``, JAX's threefry_2x32 on random inputs (``threefry_*``) and a few gradients of
samples with respect to their parameters (``gradients``, see ``gradients()``). A case
record names the function, its arguments (arrays as ``{"array": nested list, "dtype":
name}``, dtypes as ``{"dtype": name}``, shapes as ``{"shape": list}``, big Python ints
as ``{"int": decimal string}``, NumPy scalars as ``{"np": value, "npdtype": name}``), the
seed its key comes from (``PRNGKey(seed)``, then ``fold_in(key, fold)`` when ``fold`` is
given), and the settings of ``jax_threefry_partitionable`` and ``jax_enable_x64`` it ran
under. It is deterministic: running it again records the same arrays.

The recorded file was made on an x86-64 CPU with FMA. XLA's CPU code for float results
depends on that (fused multiply-adds; gamma's rsqrt uses the CPU's approximate rsqrt
instruction), so on other hardware a few float results may change in the last bits;
integer results never do.
"""
import json
import os
import sys

import numpy as np

import jax
import jax.numpy as jnp
from jax import random

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "tests", "data", "random_jax.npz")


def arr(values, dtype):
    return {"array": np.asarray(values, dtype).tolist(), "dtype": np.dtype(dtype).name}


def dt(name):
    return {"dtype": name}


def decode(value):
    if isinstance(value, dict) and "array" in value:
        return jnp.asarray(np.asarray(value["array"], value["dtype"]))
    if isinstance(value, dict) and "dtype" in value:
        return jnp.dtype(value["dtype"])
    if isinstance(value, dict) and "shape" in value:
        return tuple(value["shape"])
    if isinstance(value, dict) and "int" in value:  # Python ints beyond JSON-safe doubles
        return int(value["int"])
    if isinstance(value, dict) and "np" in value:   # a NumPy scalar of a given dtype
        return np.asarray(value["np"]).astype(value["npdtype"])[()]
    return value


def shp(*dims):
    return {"shape": list(dims)}


# --- the table ---------------------------------------------------------------------------------

def cases():
    """(fn, args, kwargs, seed, fold, x64) rows; each runs under both partitionable settings
    unless it does not depend on them (PRNGKey, fold_in)."""
    rows = []

    def add(fn, args=(), kwargs=None, seed=0, fold=None, x64=False, both=True):
        for part in ((True, False) if both else (True,)):
            rows.append({"fn": fn, "args": list(args), "kwargs": kwargs or {}, "seed": seed,
                         "fold": fold, "x64": x64, "partitionable": part})

    # keys
    for s in [0, 1, 42, -1, 2 ** 31 - 1, 2 ** 31, 2 ** 32 + 5, 2 ** 40, -(2 ** 40),
              2 ** 63 - 1]:
        add("PRNGKey", [{"int": str(s)}], both=False)
        add("PRNGKey", [{"int": str(s)}], x64=True, both=False)
    add("PRNGKey", [{"np": 2 ** 32 - 1, "npdtype": "uint32"}], both=False)
    add("PRNGKey", [{"np": -3, "npdtype": "int8"}], both=False)
    for seed in (0, 7, 123456789):
        for num in (1, 2, 3, 5, shp(2, 3), 0):
            add("split", [num], seed=seed)
        for d in (0, 1, 7, 2 ** 31, 2 ** 32 - 1):
            add("fold_in", [d], seed=seed, both=False)
    add("split", [4], seed=3, fold=99)

    # bits
    for seed, shape in [(0, shp()), (1, shp(1)), (2, shp(7)), (3, shp(2, 3)), (4, shp(1001))]:
        for dtype in ("uint8", "uint16", "uint32"):
            add("bits", [shape, dt(dtype)], seed=seed)
    add("bits", [shp(5), dt("uint64")], seed=5, x64=True)
    add("bits", [shp(2, 3), dt("uint64")], seed=6, x64=True)
    add("bits", [shp(4), dt("uint32")], seed=6, x64=True)

    # uniform
    for seed, shape in [(0, shp()), (1, shp(5)), (2, shp(3, 4)), (3, shp(1001))]:
        add("uniform", [shape], seed=seed)
        add("uniform", [shape, dt("float16")], seed=seed)
    add("uniform", [shp(6), dt("float32"), -2.0, 3.0], seed=10)
    add("uniform", [shp(2, 3)], {"minval": arr([0.0, 1.0, -5.0], "float32"),
                                 "maxval": arr([[1.0], [100.0]], "float32")}, seed=11)
    add("uniform", [shp(4)], {"minval": 5.0, "maxval": 5.0}, seed=12)
    add("uniform", [shp(40), dt("float16"), -2.0, 3.0], seed=15)
    add("uniform", [shp(40), dt("float16"), 100.0, 113.0], seed=16)
    add("uniform", [shp(50), dt("float32"), 1000.0, 1001.0], seed=17)
    add("uniform", [shp(0)], seed=18)
    add("uniform", [shp(2, 0)], seed=18)
    add("uniform", [shp(7), dt("float64"), -1.0, 2.0], seed=13, x64=True)
    add("uniform", [shp(), dt("float64")], seed=14, x64=True)

    # normal
    for seed, shape in [(0, shp()), (1, shp(10)), (2, shp(2, 5)), (3, shp(2000))]:
        add("normal", [shape], seed=seed)
    add("normal", [shp(9), dt("float16")], seed=4)
    add("normal", [shp(500), dt("float64")], seed=5, x64=True)
    add("normal", [shp(6), dt("complex64")], seed=6)
    add("normal", [shp(2, 2), dt("complex128")], seed=7, x64=True)

    # truncated normal
    add("truncated_normal", [-1.0, 2.0, shp(20)], seed=0)
    add("truncated_normal", [-0.5, 0.5], {"shape": shp(3, 4)}, seed=1)
    add("truncated_normal", [arr([-2.0, 0.0, 1.0], "float32"), 3.0], seed=2)
    add("truncated_normal", [-3.0, -2.0, shp(10), dt("float64")], seed=3, x64=True)

    # bernoulli
    add("bernoulli", [0.3, shp(50)], seed=0)
    add("bernoulli", [arr([0.1, 0.5, 0.9, 0.0, 1.0], "float32")], seed=1)
    add("bernoulli", [0.5, shp(2, 3), "high"], seed=2)
    add("bernoulli", [arr([0.25, 0.75], "float32"), shp(3, 2)], seed=3)

    # randint
    add("randint", [shp(20), 0, 10], seed=0)
    add("randint", [shp(3, 4), -5, 5], seed=1)
    add("randint", [shp(10), 0, 2 ** 31 - 1], seed=2)
    add("randint", [shp(10), -(2 ** 31), 2 ** 31 - 1], seed=3)
    add("randint", [shp(), 3, 4], seed=4)
    add("randint", [shp(5), 7, 7], seed=5)
    add("randint", [shp(2, 3), arr([0, 10, 100], "int32"), arr([[5], [1000]], "int32")], seed=6)
    add("randint", [shp(30), -128, 128, dt("int8")], seed=7)
    add("randint", [shp(30), 0, 256, dt("uint8")], seed=8)
    add("randint", [shp(30), -1000, 1000, dt("int16")], seed=9)
    add("randint", [shp(30), 0, 7, dt("uint16")], seed=10)
    add("randint", [shp(30), 0, 2 ** 31 - 1, dt("uint32")], seed=11)
    add("randint", [shp(12), -(2 ** 40), 2 ** 40, dt("int64")], seed=12, x64=True)
    add("randint", [shp(12), 0, 1000], seed=13, x64=True)
    add("randint", [shp(1000), 0, 3], seed=14)
    add("randint", [shp(0), 0, 3], seed=15)

    # choice
    add("choice", [10, shp(3)], seed=0)
    add("choice", [10, shp(3)], {"replace": False}, seed=1)
    add("choice", [5, shp(2, 2)], {"replace": False}, seed=2)
    add("choice", [arr(np.arange(15).reshape(5, 3), "int32"), shp(4)], seed=3)
    add("choice", [arr(np.arange(15).reshape(5, 3), "float32"), shp(2)],
        {"replace": False, "axis": 1}, seed=4)
    add("choice", [6, shp(20)], {"p": arr([0.1, 0.2, 0.3, 0.1, 0.2, 0.1], "float32")}, seed=5)
    add("choice", [6, shp(4)], {"replace": False,
                                "p": arr([0.1, 0.2, 0.3, 0.1, 0.2, 0.1], "float32")}, seed=6)
    add("choice", [arr([[1, 2], [3, 4], [5, 6]], "int32"), shp(2, 2)],
        {"p": arr([0.5, 0.25, 0.25], "float32")}, seed=7)
    add("choice", [3000, shp(5)], {"replace": False}, seed=8)
    add("choice", [4, shp(0)], seed=9)
    add("choice", [arr(np.arange(12).reshape(3, 4), "float32"), shp(2, 3)],
        {"axis": 1, "p": arr([0.1, 0.2, 0.3, 0.4], "float32")}, seed=10)

    # permutation
    add("permutation", [10], seed=0)
    add("permutation", [1], seed=1)
    add("permutation", [2000], seed=2)
    add("permutation", [arr(np.arange(20).reshape(4, 5), "int32")], seed=3)
    add("permutation", [arr(np.arange(20).reshape(4, 5), "float32")], {"axis": 1}, seed=4)
    add("permutation", [arr(np.arange(20).reshape(4, 5), "int32")],
        {"axis": 1, "independent": True}, seed=5)
    add("permutation", [arr(np.arange(7), "int32")], seed=6)
    add("permutation", [arr(np.arange(12).reshape(3, 4), "int32")],
        {"axis": 0, "independent": True}, seed=7)

    # categorical
    logits = np.log(np.array([[0.1, 0.2, 0.3, 0.4], [0.7, 0.1, 0.1, 0.1], [0.25] * 4]))
    add("categorical", [arr(logits[0], "float32")], seed=0)
    add("categorical", [arr(logits, "float32")], seed=1)
    add("categorical", [arr(logits, "float32")], {"axis": 0}, seed=2)
    add("categorical", [arr(logits, "float32")], {"shape": shp(5, 3)}, seed=3)
    add("categorical", [arr(logits[0], "float32")], {"shape": shp(1000)}, seed=4)
    add("categorical", [arr(logits, "float32")], {"shape": shp(2, 3), "replace": False},
        seed=5)
    add("categorical", [arr(logits[0], "float32")], {"shape": shp(3), "replace": False,
                                                     "mode": "high"}, seed=6)
    add("categorical", [arr(logits, "float32")], {"axis": 0, "shape": shp(2, 4),
                                                  "replace": False}, seed=7)

    # one-parameter-free floats
    for fn in ("gumbel", "exponential", "laplace", "logistic"):
        add(fn, [shp(100)], seed=0)
        add(fn, [shp(2, 3), dt("float16")], seed=1)
        add(fn, [shp()], seed=2)
        add(fn, [shp(50), dt("float64")], seed=3, x64=True)
    add("gumbel", [shp(200)], {"mode": "high"}, seed=4)

    # multivariate normal
    cov = np.array([[2.0, 0.5, 0.1], [0.5, 1.0, 0.2], [0.1, 0.2, 0.5]])
    add("multivariate_normal", [arr([1.0, -1.0, 0.0], "float32"), arr(cov, "float32")], seed=0)
    add("multivariate_normal", [arr([1.0, -1.0, 0.0], "float32"), arr(cov, "float32"),
                                shp(4)], seed=1)
    add("multivariate_normal", [arr([[0.0, 0.0, 0.0], [5.0, 5.0, 5.0]], "float32"),
                                arr(cov, "float32"), shp(6, 2)], seed=2)
    add("multivariate_normal", [arr([0.0, 1.0], "float32"), arr(np.eye(2) * 3, "float32"),
                                shp(5)], {"method": "eigh"}, seed=3)
    add("multivariate_normal", [arr([0.0, 1.0], "float32"), arr([[2.0, 1.0], [1.0, 2.0]],
                                                                "float32"), shp(5)],
        {"method": "svd"}, seed=4)
    add("multivariate_normal", [arr([1.0, -1.0, 0.0], "float64"), arr(cov, "float64"),
                                shp(3)], seed=5, x64=True)

    # gamma, beta, dirichlet
    for seed, a in [(0, 0.5), (1, 1.0), (2, 2.5), (3, 10.0), (4, 0.05)]:
        add("gamma", [a, shp(50)], seed=seed)
    add("gamma", [arr([0.3, 1.0, 3.0, 30.0], "float32")], seed=5)
    add("gamma", [arr([[0.5], [4.0]], "float32"), shp(2, 3)], seed=6)
    add("gamma", [2.0, shp(20), dt("float64")], seed=7, x64=True)
    add("gamma", [arr([0.001, 0.01, 100.0, 1000.0], "float32"), shp(5, 4)], seed=10)
    add("loggamma", [0.01, shp(30)], seed=8)
    add("loggamma", [arr([0.2, 2.0], "float32")], seed=9)
    add("beta", [2.0, 3.0, shp(30)], seed=0)
    add("beta", [arr([0.5, 1.0, 5.0], "float32"), 0.5], seed=1)
    add("beta", [0.1, 0.2, shp(10)], seed=2)
    add("dirichlet", [arr([1.0, 2.0, 3.0], "float32")], seed=0)
    add("dirichlet", [arr([0.1, 0.1, 0.1, 0.1], "float32"), shp(5)], seed=1)
    add("dirichlet", [arr([[1.0, 1.0], [10.0, 0.5]], "float32")], seed=2)
    return rows


def key_for(row):
    k = random.PRNGKey(row["seed"])
    if row["fold"] is not None:
        k = random.fold_in(k, row["fold"])
    return k


def run(row):
    jax.config.update("jax_enable_x64", row["x64"])
    jax.config.update("jax_threefry_partitionable", row["partitionable"])
    args = [decode(a) for a in row["args"]]
    kwargs = {k: decode(v) for k, v in row["kwargs"].items()}
    fn = getattr(random, row["fn"])
    if row["fn"] == "PRNGKey":
        out = fn(*args)
    else:
        out = fn(key_for(row), *args, **kwargs)
    return np.asarray(out)


def threefry_vectors():
    """JAX's threefry_2x32 on random keys and counts (beside the Random123 answers)."""
    from jax._src.random.threefry2x32 import threefry_2x32  # jax 0.10's location
    rng = np.random.default_rng(2024)
    keys = rng.integers(0, 2 ** 32, (8, 2), dtype=np.uint64).astype(np.uint32)
    counts = rng.integers(0, 2 ** 32, (8, 7), dtype=np.uint64).astype(np.uint32)
    outs = np.stack([np.asarray(threefry_2x32(k, c)) for k, c in zip(keys, counts)])
    return keys, counts, outs


def gradients():
    """Reparameterization gradients (partitionable keys, float32): d/d(lower, upper) of
    sum(truncated_normal), d/d(minval, maxval) of sum(uniform), d/d(loc, scale) of
    sum(loc + scale * normal)."""
    key = random.PRNGKey(3)
    tn = jax.grad(lambda lo, hi: jnp.sum(random.truncated_normal(key, lo, hi, (6,))),
                  argnums=(0, 1))(-1.0, 1.5)
    un = jax.grad(lambda lo, hi: jnp.sum(random.uniform(key, (5,), minval=lo, maxval=hi)),
                  argnums=(0, 1))(-1.0, 2.0)
    no = jax.grad(lambda loc, scale: jnp.sum(loc + scale * random.normal(key, (4,))),
                  argnums=(0, 1))(0.5, 2.0)
    return np.array([*tn, *un, *no], np.float32)


def main():
    rows = cases()
    data = {}
    for i, row in enumerate(rows):
        data[f"out{i}"] = run(row)
    jax.config.update("jax_enable_x64", False)
    jax.config.update("jax_threefry_partitionable", True)
    data["threefry_keys"], data["threefry_counts"], data["threefry_out"] = threefry_vectors()
    data["gradients"] = gradients()
    data["cases"] = np.array(json.dumps({"jax_version": jax.__version__, "cases": rows}))
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    np.savez_compressed(OUT, **data)
    print(f"wrote {len(rows)} cases to {os.path.normpath(OUT)} "
          f"({os.path.getsize(OUT)} bytes, jax {jax.__version__})", file=sys.stderr)


if __name__ == "__main__":
    main()
