"""First-call times of second-order transforms (astjax code generation).

    ASTJAX_SOURCE_CACHE=0 ASTJAX_CACHE_DIR=$(mktemp -d) \
        .venv/bin/python benchmarks/second_order_first_call.py [backend] [case] [prof]

backend: python (default) or numba. case: all (default) or one name. prof: cumulative/tottime
runs that case under cProfile.  Also: `dump DIR` writes make_source output of every case to DIR.
"""
import os
import sys
import time

assert os.environ.get("ASTJAX_SOURCE_CACHE") == "0", "set ASTJAX_SOURCE_CACHE=0"
assert os.environ.get("ASTJAX_CACHE_DIR"), "set ASTJAX_CACHE_DIR"

import numpy as np  # noqa: E402

import astjax  # noqa: E402
import astjax.numpy as jnp  # noqa: E402


sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from jacobian import make_f  # noqa: E402  (it points the cache at a fresh directory too)

f, loss = make_f(jnp)  # benchmarks/jacobian.py's loop, the same code


def mlp_loss(w, x, y):
    h = jnp.tanh(x @ w["w1"] + w["b1"])
    logits = h @ w["w2"] + w["b2"]
    logits = logits - jnp.max(logits, axis=1, keepdims=True)
    lse = jnp.log(jnp.sum(jnp.exp(logits), axis=1, keepdims=True))
    return -jnp.mean(jnp.sum((logits - lse) * y, axis=1))


def mlp_flat(v, x, y):
    w = {"w1": v[:12].reshape(3, 4), "b1": v[12:16], "w2": v[16:24].reshape(4, 2), "b2": v[24:26]}
    return mlp_loss(w, x, y)


rng = np.random.default_rng(0)
X = np.linspace(0.1, 1.0, 8).astype(np.float32)
V = rng.normal(size=26).astype(np.float32)
XB = rng.normal(size=(5, 3)).astype(np.float32)
YB = np.eye(2, dtype=np.float32)[rng.integers(0, 2, 5)]

CASES = {
    "loss/hessian": (lambda: astjax.hessian(loss), (X,)),
    "loss/jacrev(grad)": (lambda: astjax.jacrev(astjax.grad(loss)), (X,)),
    "loss/grad(grad)": (lambda: astjax.grad(lambda x: jnp.sum(astjax.grad(loss)(x))), (X,)),
    "loss/jit(hessian)": (lambda: astjax.jit(astjax.hessian(loss)), (X,)),
    "mlp/hessian": (lambda: astjax.hessian(mlp_flat), (V, XB, YB)),
    "mlp/jacrev(grad)": (lambda: astjax.jacrev(astjax.grad(mlp_flat)), (V, XB, YB)),
    "mlp/grad(grad)": (lambda: astjax.grad(lambda v, x, y: jnp.sum(astjax.grad(mlp_flat)(v, x, y))),
                       (V, XB, YB)),
    "mlp/jit(hessian)": (lambda: astjax.jit(astjax.hessian(mlp_flat)), (V, XB, YB)),
}


def main():
    args = sys.argv[1:]
    if args and args[0] == "dump":
        out = args[1]
        os.makedirs(out, exist_ok=True)
        for backend in ("python", "numba"):
            astjax.config.update("astjax_jit_backend", backend)
            for name, (make, a) in CASES.items():
                try:
                    src = astjax.make_source(make())(*a)
                except Exception as e:  # noqa: BLE001
                    src = f"ERROR {type(e).__name__}: {e}"
                with open(os.path.join(out, f"{backend}_{name.replace('/', '_')}.py"), "w") as fh:
                    fh.write(src)
        return
    backend = args[0] if args else "python"
    which = args[1] if len(args) > 1 else "all"
    prof = args[2] if len(args) > 2 else None
    astjax.config.update("astjax_jit_backend", backend)
    names = list(CASES) if which == "all" else which.split(",")
    for name in names:
        make, a = CASES[name]
        fn = make()
        if prof:
            import cProfile
            import pstats
            pr = cProfile.Profile()
            pr.enable()
            np.asarray(fn(*a))
            pr.disable()
            pstats.Stats(pr).sort_stats(prof).print_stats(45)
            continue
        t, c = time.perf_counter(), time.process_time()
        np.asarray(fn(*a))
        print(f"{name:22} {time.perf_counter() - t:7.2f} s wall {time.process_time() - c:7.2f} s cpu",
              flush=True)


if __name__ == "__main__":
    main()
