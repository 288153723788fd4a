"""Derivatives of the ``fft`` op (``ops/fft.py``), which is linear: its JVP is the op on
the tangent, its VJP the transpose, in JAX's convention (no conjugation except where
JAX's rules conjugate). The DFT matrix is symmetric, so fft and ifft transpose to
themselves; rfft to the real part of the fft of the cotangent zero-padded to full length;
irfft to the conjugate of the rfft of the cotangent with the opposite normalization,
doubled where rfft's output stands for two conjugate bins (JAX's _irfft_transpose). The
crop or zero-pad of the input to ``n`` transposes to the crop or pad back (``_unfit``)."""
import astjax.numpy as jnp

from ..ops.registry import REGISTRY
from ..random.checks import static_helper
from .rules import jvp_rule, vjp_rule
from .vjp_shape import is_complex

_fft = REGISTRY["fft"]


@static_helper
def _other_norm(norm):
    return {None: "forward", "backward": "forward", "ortho": "ortho", "forward": "backward"}[norm]


def _unfit(ct, a, n):
    """The transpose of cropping or zero-padding ``a``'s last axis to ``n``."""
    if n is None:
        return ct
    out = jnp.zeros(a.shape, ct.dtype)
    return out.at[..., :n].set(ct[..., :a.shape[-1]])


def _hermitian_weights(n):
    """1 for the bins of an rfft of length ``n`` that stand for one bin (0, and n / 2 for
    an even n), 2 for those that stand for a conjugate pair."""
    k = jnp.arange(n // 2 + 1)
    return jnp.where((k == 0) | (2 * k == n), 1.0, 2.0)


@vjp_rule("fft")
def fft_vjp(z, a, g, fft_type="fft", n=None, norm=None):
    if fft_type == "rfft":
        full = a.shape[-1] if n is None else n
        ct = _unfit(jnp.real(_fft(g, "fft", full, norm)), a, n)
    elif fft_type == "irfft":
        spectrum = _fft(g, "rfft", None, _other_norm(norm))
        ct = jnp.conj(spectrum * _hermitian_weights(g.shape[-1]))
        ct = _unfit(ct, a, None if n is None else n // 2 + 1)
    else:
        ct = _unfit(_fft(g, fft_type, None, norm), a, n)
    if not is_complex(a.dtype):  # a real input was made complex: that transposes to real
        ct = jnp.real(ct)
    return (ct,)


@jvp_rule("fft")
def fft_jvp(z, a, ta, fft_type="fft", n=None, norm=None):
    return _fft(ta, fft_type, n, norm)
