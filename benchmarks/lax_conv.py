"""A small CNN layer with ``lax.conv_general_dilated`` and ``lax.reduce_window``: forward and
``jit(grad)``, against NumPy and (when importable) JAX.

    PYTHONPATH=<JAX's site-packages> .venv/bin/python benchmarks/lax_conv.py

The layer: NHWC input (8, 32, 32, 16), a 3x3x16x32 kernel with 'SAME' padding, ReLU, a 2x2
max pool with stride 2. NumPy's forward is im2col by hand (``sliding_window_view`` of the
padded input, one ``tensordot``), its backward not written (forward only). astjax gathers
windows with computed indices and contracts them with one einsum (see
``astjax/_src/lax/windowed.py``): jit on Numba and on the python backend are both shown.
Medians of interleaved rounds in one run; ratios against NumPy's forward.
"""
import statistics
import time

import numpy as np

import astjax
import astjax.numpy as jnp
from astjax import lax

rng = np.random.default_rng(0)
X = rng.standard_normal((8, 32, 32, 16)).astype(np.float32)
K = (rng.standard_normal((3, 3, 16, 32)) / 12).astype(np.float32)


def layer(x, k):
    y = lax.conv_general_dilated(x, k, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))
    return lax.reduce_window(jnp.maximum(y, 0.0), -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1),
                             "VALID")


def loss(x, k):
    return jnp.sum(layer(x, k) ** 2)


def numpy_layer(x, k):
    xp = np.pad(x, ((0, 0), (1, 1), (1, 1), (0, 0)))
    win = np.lib.stride_tricks.sliding_window_view(xp, (3, 3), axis=(1, 2))  # N H W C kh kw
    y = np.tensordot(win, k, axes=([3, 4, 5], [2, 0, 1]))
    y = np.maximum(y, 0)
    n, h, w, c = y.shape
    return y.reshape(n, h // 2, 2, w // 2, 2, c).max(axis=(2, 4))


def time_it(fn, args, rounds=15):
    fn(*args)
    out = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        r = fn(*args)
        for leaf in (r if isinstance(r, tuple) else (r,)):  # JAX's dispatch is asynchronous
            if hasattr(leaf, "block_until_ready"):
                leaf.block_until_ready()
        out.append(time.perf_counter() - t0)
    return statistics.median(out)


def main():
    rows = []
    want = numpy_layer(X, K)
    fwd_numba = astjax.jit(layer)
    np.testing.assert_allclose(fwd_numba(X, K), want, rtol=1e-4, atol=1e-4)
    grad_numba = astjax.jit(astjax.grad(loss, argnums=(0, 1)))
    rows.append(("numpy forward", time_it(numpy_layer, (X, K))))
    rows.append(("astjax jit forward (numba)", time_it(fwd_numba, (X, K))))
    rows.append(("astjax jit grad (numba)", time_it(grad_numba, (X, K))))
    astjax.config.update("astjax_jit_backend", "python")
    rows.append(("astjax jit forward (python)", time_it(astjax.jit(layer), (X, K))))
    grad_python = astjax.jit(astjax.grad(loss, argnums=(0, 1)))
    rows.append(("astjax jit grad (python)", time_it(grad_python, (X, K))))
    try:
        import jax
        from jax import lax as jlax
        import jax.numpy as jjnp

        def jlayer(x, k):
            y = jlax.conv_general_dilated(x, k, (1, 1), "SAME",
                                          dimension_numbers=("NHWC", "HWIO", "NHWC"))
            return jlax.reduce_window(jjnp.maximum(y, 0.0), -jjnp.inf, jlax.max, (1, 2, 2, 1),
                                      (1, 2, 2, 1), "VALID")
        jf = jax.jit(jlayer)
        jg = jax.jit(jax.grad(lambda x, k: jjnp.sum(jlayer(x, k) ** 2), argnums=(0, 1)))
        np.testing.assert_allclose(jf(X, K), want, rtol=1e-4, atol=1e-4)
        rows.append(("jax jit forward", time_it(jf, (X, K))))
        rows.append(("jax jit grad", time_it(jg, (X, K))))
    except ImportError:
        pass
    base = rows[0][1]
    for name, t in rows:
        print(f"{name:32s} {t * 1e3:9.2f} ms  {t / base:6.2f}x numpy forward")


if __name__ == "__main__":
    main()
