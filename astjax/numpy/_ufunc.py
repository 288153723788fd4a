"""``jnp.ufunc`` and ``jnp.frompyfunc``, as JAX 0.10.2's: a scalar function made elementwise
(by ``vectorize``) with NumPy's ufunc methods ``outer``, ``reduce``, ``accumulate`` and
``at``, written as JAX writes them (loops over the reduced axis). astjax's own elementwise
functions (``jnp.add``, ...) are ops, not ufunc objects.
"""
import operator

import astjax.numpy as jnp

from .._src.errors import at_user_call
from .._src.ir.types import Static
from .._src.lax.common import synthesize
from .._src.lax.control_flow import fori_loop
from ._misc_extra import two_way
from ._sorting import _normalize_axis
from ._vectorize import vectorize

_AT_INPLACE = ("Because JAX arrays are immutable, jnp.ufunc.at() cannot operate inplace like "
               "np.ufunc.at(). Instead, you can pass inplace=False and capture the result; "
               "e.g.\n>>> arr = jnp.add.at(arr, ind, val, inplace=False)\n")


class ufunc:
    """A function of ``nin`` scalars applied elementwise to broadcast arrays, with NumPy's
    ufunc methods (``reduce``, ``accumulate``, ``outer`` and ``at`` for binary ones), as
    ``jnp.ufunc``. Called from compiled code it stands for its vectorized function; its
    methods work outside compiled code only."""

    def __init__(self, func, /, nin, nout, *, name=None, nargs=None, identity=None,
                 call=None, reduce=None, accumulate=None, at=None, reduceat=None):
        self.__doc__ = func.__doc__
        self.__name__ = name or func.__name__
        self._func = func
        self.nin = operator.index(nin)
        self.nout = operator.index(nout)
        self.nargs = operator.index(nargs or nin)
        self.identity = identity
        self._call = call
        self._vectorized = None
        for method in ("outer", "reduce", "accumulate", "at", "reduceat"):
            bound = getattr(self, method)
            setattr(self, method, two_way(f"{self.__name__}.{method}", bound,
                                          _eager_only(f"{self}.{method}()"), bound.__doc__))
        self._overrides = {"reduce": reduce, "accumulate": accumulate, "at": at,
                           "reduceat": reduceat}

    def _key(self):
        return (self._func, self.__name__, self.identity, self.nin, self.nout, self.nargs)

    def __hash__(self):
        return hash(self._key())

    def __eq__(self, other):
        return isinstance(other, ufunc) and self._key() == other._key()

    def __repr__(self):
        return f"<jnp.ufunc '{self.__name__}'>"

    def _elementwise(self):
        if self._call is not None:
            return self._call
        if self._vectorized is None:
            self._vectorized = vectorize(self._func)
        return self._vectorized

    def __call__(self, *args, out=None, where=None):
        if out is not None:
            raise NotImplementedError(f"out argument of {self}")
        if where is not None:
            raise NotImplementedError(f"where argument of {self}")
        return self._elementwise()(*args)

    def function_for(self, arg_types, program):
        """Called from compiled code: the vectorized function. ``arg_types`` are those of
        ``__call__``'s parameters: ``*args``, then ``out`` and ``where``."""
        *arg_types, out_t, where_t = arg_types
        for name, t in (("out", out_t), ("where", where_t)):
            if not (isinstance(t, Static) and t.value is None):
                raise at_user_call(NotImplementedError(f"{name} argument of {self}"))
        params = ", ".join(f"a{i}" for i in range(len(arg_types)))
        return synthesize("ufunc_call", f"def ufunc_call({params}, out, where):\n"
                          f"    return _fn({params})\n", ufunc.__call__,
                          {"_fn": self._elementwise()})

    def _binary(self, method):
        if self.nin != 2:
            raise ValueError(f"{method} only supported for binary ufuncs")
        if self.nout != 1:
            raise ValueError(f"{method} only supported for functions returning a single value")

    def _dtype(self, a):
        one = jnp.ones((), a.dtype)
        return self(one, one).dtype

    def outer(self, A, B, /):
        """``self`` of every pair of elements: shape ``A.shape + B.shape``."""
        if self.nin != 2:
            raise ValueError("outer only supported for binary ufuncs")
        if self.nout != 1:
            raise ValueError("outer only supported for functions returning a single value")
        A = jnp.asarray(A)
        B = jnp.asarray(B)
        return self(jnp.reshape(A, A.shape + (1,) * B.ndim), B)

    def reduce(self, a, axis=0, dtype=None, out=None, keepdims=False, initial=None,
               where=None):
        """``self`` applied along ``axis`` left to right (from ``initial``, else the first
        element; ``where`` leaves elements out)."""
        self._binary("reduce")
        if out is not None:
            raise NotImplementedError(f"out argument of {self.__name__}.reduce()")
        if where is not None:
            if self.identity is None and initial is None:
                raise ValueError(f"reduction operation {self.__name__!r} does not have an "
                                 f"identity, so to use a where mask one has to specify "
                                 f"'initial'.")
            if jnp.asarray(where).dtype != bool:
                raise ValueError(f"where argument must have dtype=bool; got "
                                 f"dtype={jnp.asarray(where).dtype}")
        if self._overrides["reduce"] is not None:
            return self._overrides["reduce"](a, axis=axis, dtype=dtype, keepdims=keepdims,
                                             initial=initial, where=where)
        arr = jnp.asarray(a)
        if initial is None:
            initial = self.identity
        dtype = self._dtype(arr) if dtype is None else dtype
        if where is not None:
            where = jnp.broadcast_to(where, arr.shape)
        if isinstance(axis, tuple):
            raise NotImplementedError("tuple of axes")
        if axis is None:
            final_shape = (1,) * arr.ndim if keepdims else ()
            arr = jnp.ravel(arr)
            where = None if where is None else jnp.ravel(where)
            axis = 0
        else:
            axis = _normalize_axis(axis, arr.ndim, f"{self.__name__}.reduce")
            rest = arr.shape[:axis] + arr.shape[axis + 1:]
            final_shape = arr.shape[:axis] + (1,) + arr.shape[axis + 1:] if keepdims else rest
        arr = jnp.moveaxis(arr, axis, 0)
        where = None if where is None else jnp.moveaxis(where, axis, 0)
        if arr.shape[0] == 0:
            if initial is None:
                raise ValueError(f"zero-size array to reduction operation {self.__name__} "
                                 f"which has no identity")
            return jnp.full(final_shape, initial, dtype)

        def body(i, val):
            new = self(val, arr[i].astype(dtype))
            return new if where is None else jnp.where(where[i], new, val)

        start = 1 if initial is None else 0
        value = arr[0] if initial is None else initial
        value = jnp.broadcast_to(jnp.asarray(value).astype(dtype), arr.shape[1:])
        return jnp.reshape(fori_loop(start, arr.shape[0], body, value), final_shape)

    def accumulate(self, a, axis=0, dtype=None, out=None):
        """The running ``reduce`` along ``axis``."""
        self._binary("accumulate")
        if out is not None:
            raise NotImplementedError(f"out argument of {self.__name__}.accumulate()")
        if self._overrides["accumulate"] is not None:
            return self._overrides["accumulate"](a, axis=axis, dtype=dtype)
        arr = jnp.asarray(a)
        dtype = self._dtype(arr) if dtype is None else dtype
        if axis is None or isinstance(axis, tuple):
            raise ValueError("accumulate does not allow multiple axes")
        axis = _normalize_axis(axis, arr.ndim, f"{self.__name__}.accumulate")
        if arr.size == 0:
            return jnp.zeros(arr.shape, dtype)
        arr = jnp.moveaxis(arr, axis, 0).astype(dtype)

        def body(i, acc):
            return acc.at[i].set(self(acc[i - 1], arr[i]))

        return jnp.moveaxis(fori_loop(1, arr.shape[0], body, arr), 0, axis)

    def at(self, a, indices, b=None, /, *, inplace=True):
        """``a`` with ``self`` applied at ``indices`` (with ``b``), one index after the
        other, so repeated indices apply repeatedly, as ``jnp.ufunc.at``, which needs
        ``inplace=False``. ``indices``: an int or an array of ints along the first axis
        (JAX also takes slices and tuples)."""
        if inplace:
            raise NotImplementedError(_AT_INPLACE)
        if self._overrides["at"] is not None:
            at = self._overrides["at"]
            return at(a, indices) if b is None else at(a, indices, b)
        a = jnp.asarray(a)
        args = () if b is None else (jnp.asarray(b),)
        one = jnp.ones((), a.dtype)
        dtype = self(one, *(jnp.ones((), x.dtype) for x in args)).dtype
        a = a.astype(dtype)
        idx = jnp.asarray(indices)
        if idx.ndim == 0:
            return a.at[idx].set(self(a[idx], *(x.astype(dtype) for x in args)))
        shape = idx.shape
        idx = jnp.ravel(idx)
        args = tuple(jnp.ravel(jnp.broadcast_to(x, shape)).astype(dtype) for x in args)

        def body(k, a):
            i = idx[k]
            return a.at[i].set(self(a[i], *(x[k] for x in args)))

        return fori_loop(0, idx.shape[0], body, a)

    def reduceat(self, a, indices, axis=0, dtype=None, out=None):
        if self._overrides["reduceat"] is not None:
            return self._overrides["reduceat"](a, indices, axis=axis, dtype=dtype)
        raise NotImplementedError(f"{self.__name__}.reduceat() is not supported in astjax")


def _eager_only(what):
    def lower(*arg_types):
        raise at_user_call(NotImplementedError(
            f"{what} works only outside compiled code in astjax; in jit, grad and vmap call "
            f"the ufunc itself (elementwise) or write the loop with lax.fori_loop"))
    return lower


def frompyfunc(func, /, nin, nout, *, identity=None):
    """A ``ufunc`` of ``func``, a function of ``nin`` scalars giving ``nout`` results, as
    ``jnp.frompyfunc``."""
    return ufunc(func, nin, nout, identity=identity)


__all__ = ["frompyfunc", "ufunc"]
