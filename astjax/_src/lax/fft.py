"""``lax.fft``: ``jnp.fft``'s n-D transforms over the last ``len(fft_lengths)`` axes."""
import enum

import astjax.numpy as jnp

from ..random.checks import static_helper  # evaluated while generating code


class FftType(enum.IntEnum):
    FFT = 0
    IFFT = 1
    RFFT = 2
    IRFFT = 3


@static_helper
def _fft_kind(fft_type):
    """The FftType of ``fft_type`` (a member, or its name as JAX accepts)."""
    if isinstance(fft_type, str) and fft_type.upper() in FftType.__members__:
        return FftType[fft_type.upper()]
    if isinstance(fft_type, FftType):
        return fft_type
    raise ValueError(f"Unknown FFT type '{fft_type}'")


@static_helper
def _last_axes(fft_lengths):
    return tuple(range(-len(fft_lengths), 0))


def fft(x, fft_type, fft_lengths):
    """The transform ``fft_type`` ('FFT', 'IFFT', 'RFFT', 'IRFFT' or an ``FftType``) of
    ``x`` over its last ``len(fft_lengths)`` axes, with those lengths (IRFFT: the lengths
    of the real output)."""
    kind = _fft_kind(fft_type)
    s = tuple(fft_lengths)
    axes = _last_axes(s)
    if kind == FftType.FFT:
        return jnp.fft.fftn(x, s=s, axes=axes)
    if kind == FftType.IFFT:
        return jnp.fft.ifftn(x, s=s, axes=axes)
    if kind == FftType.RFFT:
        return jnp.fft.rfftn(x, s=s, axes=axes)
    return jnp.fft.irfftn(x, s=s, axes=axes)
