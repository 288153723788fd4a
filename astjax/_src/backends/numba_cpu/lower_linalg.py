"""Lowering of the LAPACK ops (``ops/decompositions.py``) to ``linalg_kernels.py``: the
operand as a C-contiguous stack ``(batch, m, n)`` (leading axes flattened), one kernel
call, each result reshaped back. solve's operands are broadcast to one batch shape first;
sizes that do not match rerun the call on the python backend, which raises NumPy's error
at the user's line. QR's complete mode has no Numba kernel (Numba's qr is reduced only):
such a function runs on the python backend."""
import numpy as np

from ...ir.types import as_array_type
from .emitter import Unsupported
from .fusion import tuple_source
from .lowering import lowering


def _stack(c, text, rank, batch, rows, cols):
    """Lines making ``text`` (rank ``rank``) a contiguous (prod(batch), rows, cols) array,
    broadcast to ``batch`` (source of each batch size) first; and that array's name."""
    names = c.emitter.names
    stacked = names.fresh("stack")
    shape = tuple_source(list(batch) + [rows, cols])
    count = " * ".join(batch) or "1"
    if not batch:
        source = text
    elif rank == len(batch) + 2:
        source = f"_rt.bcast_to({text}, {shape})"  # itself when the sizes already match
    else:
        source = f"np.broadcast_to({text}, {shape})"
    return [f"{stacked} = _rt.ascontiguousarray({source}).reshape(({count}, {rows}, {cols}))"], \
        stacked


def _shape(a, rank):
    return [f"{a}.shape[{d}]" for d in range(rank)]


def _dtype(t):
    return f"np.{np.dtype(t.dtype).name}"


def _matrix_operand(c, name="a"):
    a, t = c.text(name), as_array_type(c.type(name))
    if t.dtype.kind not in "fc" or t.dtype == np.float16:
        raise Unsupported(f"{c.op.name} of {t}")
    sizes = _shape(a, t.ndim)
    return a, t, sizes[:-2], sizes[-2], sizes[-1]


def _reshaped(out, batch, tail):
    if not batch and not tail:
        return f"{out}[0]"  # one matrix's scalar result (det)
    return f"{out}.reshape({tuple_source(list(batch) + list(tail))})"


@lowering("linalg_solve")
def _solve(c):
    vector = c.param("vector", False)
    a, a_type, a_batch, n, _ = _matrix_operand(c, "a")
    b, b_type = c.text("b"), as_array_type(c.type("b"))
    if b_type.dtype != a_type.dtype:
        raise Unsupported(f"solve of {a_type} and {b_type}")
    b_sizes = _shape(b, b_type.ndim)
    b_batch = b_sizes[:-1] if vector else b_sizes[:-2]
    rank = max(len(a_batch), len(b_batch))
    a_ones = (True,) * (rank - len(a_batch)) + a_type.ones[:-2]
    b_ones = (True,) * (rank - len(b_batch)) + (b_type.ones[:-1] if vector else b_type.ones[:-2])
    a_full = ["1"] * (rank - len(a_batch)) + a_batch
    b_full = ["1"] * (rank - len(b_batch)) + b_batch
    lines, batch = [], []
    mismatch = [f"{b_sizes[-1] if vector else b_sizes[-2]} != {n}"]
    for a_dim, b_dim, a_one, b_one in zip(a_full, b_full, a_ones, b_ones):
        batch.append(b_dim if a_one else a_dim)
        if not a_one and not b_one:
            mismatch.append(f"{a_dim} != {b_dim}")
    lines += [f"if {' or '.join(mismatch)}:",
              f"    raise {c.emitter.broadcast_error}({c.where + ': solve sizes'!r})"]
    cols = "1" if vector else b_sizes[-1]
    rhs = f"_rt.ascontiguousarray({b}).reshape({tuple_source(b_sizes + ['1'])})" \
        if vector else b
    more, a3 = _stack(c, a, a_type.ndim, batch, n, n)
    lines += more
    more, b3 = _stack(c, rhs, len(b_batch) + 2, batch, n, cols)
    lines += more
    out = c.emitter.names.fresh("solved")
    lines.append(f"{out} = _rt.solve_stack({a3}, {b3})")
    return lines + c.assign(_reshaped(out, batch, [n] if vector else [n, cols]))


def _decomposition(c, kernel, extra, outs):
    """One kernel call on the stacked operand; ``outs``: per result, a function of
    (m, n) giving its per-matrix shape sources."""
    a, t, batch, m, n = _matrix_operand(c)
    lines, a3 = _stack(c, a, t.ndim, batch, m, n)
    names = [c.emitter.names.fresh("lapack") for _ in outs]
    target = names[0] if len(names) == 1 else ", ".join(names)
    lines.append(f"{target} = _rt.{kernel}({', '.join([a3] + extra)})")
    results = [_reshaped(name, batch, shape(m, n)) for name, shape in zip(names, outs)]
    if len(results) == 1:
        return lines + c.assign(results[0])
    return lines + [f"{c.target} = ({', '.join(results)},)"]


@lowering("linalg_cholesky")
def _cholesky(c):
    return _decomposition(c, "cholesky_stack", [], [lambda m, n: [m, n]])


@lowering("linalg_det")
def _det(c):
    return _decomposition(c, "det_stack", [], [lambda m, n: []])


@lowering("linalg_slogdet")
def _slogdet(c):
    real = _dtype(c.out.elts[1])
    return _decomposition(c, "slogdet_stack", [real], [lambda m, n: [], lambda m, n: []])


@lowering("linalg_eigh")
def _eigh(c):
    real = _dtype(c.out.elts[0])
    return _decomposition(c, "eigh_stack", [real], [lambda m, n: [n], lambda m, n: [n, n]])


@lowering("linalg_eig")
def _eig(c):
    complex_ = _dtype(c.out.elts[0])
    return _decomposition(c, "eig_stack", [complex_], [lambda m, n: [n], lambda m, n: [n, n]])


def _k(m, n):
    return f"min({m}, {n})"


@lowering("linalg_svd")
def _svd(c):
    full = bool(c.param("full_matrices", True))
    real = _dtype(c.out.elts[1])
    u = (lambda m, n: [m, m]) if full else (lambda m, n: [m, _k(m, n)])
    vt = (lambda m, n: [n, n]) if full else (lambda m, n: [_k(m, n), n])
    return _decomposition(c, "svd_stack", [str(full), real],
                          [u, lambda m, n: [_k(m, n)], vt])


@lowering("linalg_qr")
def _qr(c):
    if c.param("complete", False):
        raise Unsupported("qr(mode='complete') (Numba's qr is reduced only)")
    return _decomposition(c, "qr_stack", [], [lambda m, n: [m, _k(m, n)],
                                               lambda m, n: [_k(m, n), n]])
