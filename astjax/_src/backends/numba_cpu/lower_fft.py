"""Lowering of the ``fft`` op (``ops/fft.py``) to the kernels of ``fft_kernels.py``: the
operand as a C-contiguous (rows, length) array, the other axes flattened into rows, one
kernel call, and the result reshaped back. A length below 1 reruns the call on the python
backend, which raises NumPy's error at the user's line."""
from ...ir.types import as_array_type
from ...ops.fft import TYPES
from .emitter import Unsupported
from .fusion import tuple_source
from .lowering import lowering

_NORMS = {None: 0, "backward": 0, "ortho": 1, "forward": 2}
_KERNELS = {"fft": "fft_rows", "ifft": "fft_rows", "rfft": "rfft_rows", "irfft": "irfft_rows"}


@lowering("fft")
def _fft(c):
    a, a_type = c.text("a"), as_array_type(c.type("a"))
    fft_type, norm = c.param("fft_type", "fft"), c.param("norm")
    if fft_type not in TYPES or a_type.ndim == 0 or a_type.dtype.kind not in "biufc":
        raise Unsupported(f"fft of {a_type}")
    names = c.emitter.names
    rank = a_type.ndim
    n, x2, out = names.fresh("n"), names.fresh("rows"), names.fresh("spectrum")
    given = c.param_text("n")
    if given is None or given == "None":
        default = f"2 * ({a}.shape[{rank - 1}] - 1)" if fft_type == "irfft" \
            else f"{a}.shape[{rank - 1}]"
        lines = [f"{n} = {default}"]
    else:
        lines = [f"{n} = int({given})"]
    rows = " * ".join(f"{a}.shape[{d}]" for d in range(rank - 1)) or "1"
    source = f"{a}.astype(np.float32)" if a_type.dtype.kind == "b" else a  # Numba: no float(bool)
    kind = ("" if fft_type in ("rfft", "irfft") else f"{TYPES.index(fft_type)}, ")
    lines += [f"if {n} < 1:",
              f"    raise {c.emitter.broadcast_error}({c.where + ': fft length below 1'!r})",
              f"{x2} = _rt.ascontiguousarray({source}).reshape(({rows}, {a}.shape[{rank - 1}]))",
              f"{out} = _rt.{_KERNELS[fft_type]}({x2}, {n}, {kind}{_NORMS[norm]}, {c.dtype()})"]
    shape = tuple_source([f"{a}.shape[{d}]" for d in range(rank - 1)] + [f"{out}.shape[1]"])
    return lines + c.assign(f"{out}.reshape({shape})")
