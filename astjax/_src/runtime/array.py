"""The ``Array`` type: an immutable buffer on a device, with JAX's interface.

State. A ready Array holds its host ndarray in the ``_value`` slot. An Array whose
data is not on the host yet (a result of asynchronously dispatched work) or that
was deleted (donated) leaves ``_value`` unset and keeps a *ref* in ``_pending``;
reading ``_value`` then goes through ``__getattr__``, which asks the ref for the
host value (waiting for the work; raising its error, or the deleted error) and
caches it. So every reader of ``x._value`` (eager ops, typing, NumPy interop)
waits implicitly, and a ready Array costs nothing extra.

A ref has ``dtype``, ``shape`` and ``ndim`` (None when not known yet), ``get()`` (the host
ndarray, waiting), ``ready()``, ``peek()`` (the value if ready, else None; never
raises) and ``copy_to_host_async()``. ``dispatch.LeafRef`` is one output of a
queued call; ``Deleted`` is a donated or deleted Array. A CUDA device adds a ref
for data resident in device memory (``get`` copies to host on its stream) without
any change here.
"""
import numpy as np

from .. import dtypes
from . import profiling
from .devices import default_device

_capture_site = profiling.capture_site
# Allocation sites are recorded for memory profiles (config astjax_record_allocation_sites).
_SITES = [True]


class Deleted:
    """The ref of a deleted Array: metadata stays readable, values raise."""
    __slots__ = ("dtype", "shape", "ndim", "reason")

    def __init__(self, dtype, shape, ndim, reason):
        self.dtype, self.shape, self.ndim, self.reason = dtype, shape, ndim, reason

    def get(self):
        raise RuntimeError(f"Array has been deleted ({self.reason}); its buffer may have been "
                           f"reused. Use the value returned by the call instead, or pass a "
                           f"copy (x.copy()) if you need x afterwards.")

    def ready(self):
        return True

    def peek(self):
        return None

    def copy_to_host_async(self):
        self.get()


class Array:
    """An immutable array. Operators and methods run the registered ops eagerly.

    ``Array(value, weak=False, device=None)``: ``value`` is the device buffer (a host
    ndarray on CPU devices); ``device`` None means the default device, uncommitted
    (results follow their inputs' committed device, as in JAX).
    """
    __slots__ = ("_value", "_weak", "_device", "_pending", "_site", "__weakref__")
    __array_priority__ = 100  # so ndarray + Array defers to Array.__radd__

    def __init__(self, value, weak=False, device=None):
        self._value = value
        self._weak = weak
        self._device = device
        self._pending = None
        self._site = _capture_site() if _SITES[0] else None

    @classmethod
    def _from_ref(cls, ref, weak, device, site):
        """An Array whose data comes from ``ref`` (pending work, deleted)."""
        self = object.__new__(cls)
        self._weak = weak
        self._device = device
        self._pending = ref
        self._site = site
        return self

    def _resolve(self):
        ref = self._pending
        if ref is None:  # never set: not an initialized Array
            raise AttributeError("'Array' object has no attribute '_value'")
        value = ref.get()
        self._value = value
        self._pending = None
        return value

    def _peek(self):
        """The host value if it is available without waiting or raising, else None."""
        if self._pending is None:
            return self._value
        return self._pending.peek()

    # --- attributes --------------------------------------------------------------------
    @property
    def shape(self):
        ref = self._pending
        if ref is not None and ref.shape is not None:
            return ref.shape
        return self._value.shape

    @property
    def dtype(self):
        ref = self._pending
        if ref is not None:
            return ref.dtype
        return self._value.dtype

    @property
    def ndim(self):
        ref = self._pending
        if ref is not None and ref.ndim is not None:
            return ref.ndim
        return self._value.ndim

    size = property(lambda self: self._value.size)
    weak_type = property(lambda self: self._weak)
    nbytes = property(lambda self: self._value.nbytes)
    itemsize = property(lambda self: self.dtype.itemsize)

    @property
    def device(self):
        d = self._device
        return d if d is not None else default_device()

    @property
    def committed(self):
        """Whether the array was placed on its device explicitly (``device_put``)."""
        return self._device is not None

    def devices(self):
        return {self.device}

    @property
    def sharding(self):
        from .api_runtime import SingleDeviceSharding
        return SingleDeviceSharding(self.device)

    @property
    def T(self):
        return _op("transpose")(self)

    @property
    def mT(self):
        return _op("matrix_transpose")(self)

    @property
    def real(self):
        return _op("real")(self)

    @property
    def imag(self):
        return _op("imag")(self)

    @property
    def at(self):
        from ..ops.indexing import IndexUpdateHelper
        return IndexUpdateHelper(self)

    # --- asynchronous dispatch and deletion --------------------------------------------
    def block_until_ready(self):
        """Wait for the work producing this array; raise its error if it failed."""
        if self._pending is not None:
            self._resolve()
        return self

    def is_ready(self):
        ref = self._pending
        return ref is None or ref.ready()

    def copy_to_host_async(self):
        """Start copying to the host (a no-op on CPU, where buffers are host memory)."""
        ref = self._pending
        if ref is not None:
            ref.copy_to_host_async()

    def delete(self):
        """Free the buffer now; reading the array afterwards raises ``RuntimeError``."""
        self._mark_deleted("deleted with Array.delete()")

    def is_deleted(self):
        return isinstance(self._pending, Deleted)

    def _mark_deleted(self, reason):
        ref = self._pending
        if isinstance(ref, Deleted):
            return
        value = self._peek()
        shape = value.shape if value is not None else getattr(ref, "shape", None)
        ndim = value.ndim if value is not None else getattr(ref, "ndim", None)
        self._pending = Deleted(self.dtype, shape, ndim, reason)
        try:
            del self._value
        except AttributeError:
            pass

    # --- conversion --------------------------------------------------------------------
    def __array__(self, dtype=None, copy=None):
        value = self._value
        if copy is False and dtype is not None and np.dtype(dtype) != value.dtype:
            raise ValueError("Array.__array__: a copy is needed to change the dtype")
        if dtype is not None:
            return value.astype(dtype)
        return value.copy() if copy else value

    def __repr__(self):
        if isinstance(self._pending, Deleted):
            return f"Array(<deleted>, shape={self._pending.shape}, dtype={self.dtype})"
        value = self._value
        body = np.array2string(value, separator=", ", prefix="Array(")
        extra = ", weak_type=True" if self._weak else ""
        return f"Array({body}, dtype={value.dtype}{extra})"

    def __str__(self):
        return str(self._value)

    def __format__(self, spec):
        value = self._value
        if spec and value.ndim == 0:
            return format(value.item(), spec)
        return format(str(self), spec)

    def tolist(self):
        return self._value.tolist()

    def item(self, *args):
        return self._value.item(*args)

    def __float__(self):
        return float(self._value)

    def __int__(self):
        return int(self._value)

    def __complex__(self):
        return complex(self._value)

    def __index__(self):
        value = self._value
        if value.dtype.kind not in "iub":
            raise TypeError(f"only integer arrays can be used as an index, got {self.dtype}")
        return int(value)

    def __bool__(self):
        value = self._value
        if value.size != 1:
            raise ValueError("the truth value of an array with more than one element is "
                             "ambiguous; use .any() or .all()")
        return bool(value)

    def __len__(self):
        value = self._value
        if value.ndim == 0:
            raise TypeError("len() of unsized object (a 0-d array)")
        return len(value)

    def __iter__(self):
        value = self._value
        if value.ndim == 0:
            raise TypeError("iteration over a 0-d array")
        for row in value:
            yield Array(np.asarray(row), False, self._device)

    def __hash__(self):
        raise TypeError("unhashable type: 'Array' (arrays are mutable-looking values; "
                        "use a tuple or pass it as a static argument's .tolist())")

    def astype(self, dtype):
        return _op("astype")(self, dtype)

    def copy(self):
        return Array(self._value.copy(), self._weak, self._device)

    def __getitem__(self, index):
        return _op("getitem")(self, index)

    def __setitem__(self, index, value):
        raise TypeError("astjax arrays are immutable; instead of x[idx] = y use "
                        "x = x.at[idx].set(y)")

    def __getattr__(self, name):
        if name == "_value":  # not on the host yet, or deleted: see the module docstring
            return self._resolve()
        from ..ops.registry import FUNCTION_METHODS, METHODS
        op_name = METHODS.get(name)
        if op_name is None:
            fn = FUNCTION_METHODS.get(name)  # x.sort(): jnp.sort(x)
            if fn is None:
                raise AttributeError(f"'Array' object has no attribute {name!r}")
            return lambda *args, **kwargs: fn(self, *args, **kwargs)
        op = _op(op_name)
        return lambda *args, **kwargs: op(self, *args, **kwargs)

    def __reduce__(self):
        return (_rebuild, (self._value, self._weak))


def _rebuild(value, weak):
    return Array(value, weak)


def _op(name):
    from ..ops.registry import REGISTRY
    try:
        return REGISTRY[name]
    except KeyError:
        raise NotImplementedError(f"astjax has no op {name!r} yet") from None


def _binary(name, reflected=False):
    if reflected:
        def method(self, other):
            return _op(name)(other, self)
    else:
        def method(self, other):
            return _op(name)(self, other)
    return method


for _dunder, _name in [("add", "add"), ("sub", "subtract"), ("mul", "multiply"),
                       ("truediv", "true_divide"), ("floordiv", "floor_divide"),
                       ("mod", "remainder"), ("pow", "power"), ("matmul", "matmul"),
                       ("and", "bitwise_and"), ("or", "bitwise_or"), ("xor", "bitwise_xor"),
                       ("lshift", "left_shift"), ("rshift", "right_shift")]:
    setattr(Array, f"__{_dunder}__", _binary(_name))
    setattr(Array, f"__r{_dunder}__", _binary(_name, reflected=True))
for _dunder, _name in [("lt", "less"), ("le", "less_equal"), ("gt", "greater"),
                       ("ge", "greater_equal"), ("eq", "equal"), ("ne", "not_equal")]:
    setattr(Array, f"__{_dunder}__", _binary(_name))
for _dunder, _name in [("neg", "negative"), ("pos", "positive"), ("abs", "abs"),
                       ("invert", "invert")]:
    setattr(Array, f"__{_dunder}__", lambda self, _n=_name: _op(_n)(self))


def to_numpy_input(value):
    """A user's argument as the NumPy value generated code computes on.

    64-bit inputs narrow (with a one-time warning) unless x64 is on; Python
    scalars become NumPy scalars of their canonical (weak) dtype.
    """
    if isinstance(value, Array):
        return value._value
    if isinstance(value, np.ndarray):
        dtype = dtypes.canonicalize_dtype(value.dtype)
        if dtype != value.dtype:
            dtypes.warn_if_narrowed(value.dtype)
            return value.astype(dtype)
        return value
    if isinstance(value, np.generic):
        dtype = dtypes.canonicalize_dtype(value.dtype)
        if dtype != value.dtype:
            dtypes.warn_if_narrowed(value.dtype)
        return dtype.type(value)
    if dtypes.is_python_scalar(value):
        return dtypes.python_scalar_dtype(value).type(value)
    return value


def wrap_output(value, weak=False, device=None):
    """A NumPy result as an Array of its canonical dtype."""
    arr = np.asarray(value)
    dtype = dtypes.canonicalize_dtype(arr.dtype)
    if dtype != arr.dtype:
        arr = arr.astype(dtype)
    return Array(arr, weak, device)


def committed_device(values, found=None):
    """The device the Arrays among ``values`` (nested tuples/lists/dicts) are committed to.

    None when none is committed; ``ValueError`` when two differ (as in JAX, move them
    with ``device_put`` first).
    """
    for v in values:
        t = type(v)
        if t is Array:
            d = v._device
        elif t is tuple or t is list:
            d = committed_device(v, found)
        elif t is dict:
            d = committed_device(v.values(), found)
        else:
            continue
        if d is not None:
            if found is not None and d is not found:
                raise ValueError(f"arguments are committed to different devices ({found!r} "
                                 f"and {d!r}); move them to one device with "
                                 f"astjax.device_put(x, device) first")
            found = d
    return found
