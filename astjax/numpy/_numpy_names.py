"""Names ``jax.numpy`` takes from NumPy, or wraps thinly, that only make sense outside
compiled code: dtype classes, print options, files and buffers. As in JAX 0.10.2, ``load``,
``frombuffer``, ``fromstring`` and ``from_dlpack`` give astjax Arrays, and ``fromfile`` and
``fromiter`` are refused."""
import numpy as np

# as jax.numpy: NumPy's own
from numpy import (  # noqa: F401
    array_repr, array_str, character, complexfloating, flexible, generic, get_printoptions,
    iterable, object_, printoptions, save, savez, set_printoptions, signedinteger,
    unsignedinteger)

ComplexWarning = np.exceptions.ComplexWarning


def _asarray(x):
    import astjax.numpy as jnp
    return jnp.asarray(x)


def load(file, *args, **kwargs):
    """The array in a ``.npy`` file as an astjax Array (``numpy.load``'s other results, such
    as an ``.npz`` file's arrays, as NumPy gives them), as ``jnp.load``."""
    out = np.load(file, *args, **kwargs)
    if isinstance(out, np.ndarray):
        try:
            out = _asarray(out)
        except (TypeError, ValueError):  # a dtype astjax has no arrays of (strings, objects)
            pass
    return out


def frombuffer(buffer, dtype=float, count=-1, offset=0):
    """``numpy.frombuffer``, as an astjax Array."""
    return _asarray(np.frombuffer(buffer=buffer, dtype=dtype, count=count, offset=offset))


def fromstring(string, dtype=float, count=-1, *, sep):
    """``numpy.fromstring`` (text with ``sep``), as an astjax Array."""
    return _asarray(np.fromstring(string, dtype=dtype, count=count, sep=sep))


def from_dlpack(x, /, *, device=None, copy=None):
    """An astjax Array of ``x``'s data (an object with ``__dlpack__``: a NumPy array, a
    torch CPU tensor, ...), as ``jnp.from_dlpack``; ``device`` as ``device_put``'s."""
    import astjax
    out = _asarray(np.from_dlpack(x, copy=copy))
    return out if device is None else astjax.device_put(out, device)


def _impure(name, what):
    return NotImplementedError(
        f"jnp.{name}() is not implemented because it may be non-pure and thus unsafe for use "
        f"with JIT and other JAX transformations. Consider using jnp.asarray(np.{name}(...)) "
        f"instead, although care should be taken if np.{name} is used within a jax "
        f"transformations because of its potential side-effect of consuming the {what}; for "
        f"more information see https://docs.jax.dev/en/latest/notebooks/"
        f"Common_Gotchas_in_JAX.html#pure-functions")


def fromfile(*args, **kwargs):
    """Refused, as in JAX: reading a file is not pure."""
    raise _impure("fromfile", "file object")


def fromiter(*args, **kwargs):
    """Refused, as in JAX: consuming an iterator is not pure."""
    raise _impure("fromiter", "iterable object")


__all__ = ["ComplexWarning", "array_repr", "array_str", "character", "complexfloating",
           "flexible", "from_dlpack", "frombuffer", "fromfile", "fromiter", "fromstring",
           "generic", "get_printoptions", "iterable", "load", "object_", "printoptions", "save",
           "savez", "set_printoptions", "signedinteger", "unsignedinteger"]
