"""The ``Array`` type: an immutable NumPy buffer on a device, with JAX's interface."""
import numpy as np

from .. import dtypes
from .devices import default_device


class Array:
    """An immutable array. Operators and methods run the registered ops eagerly."""
    __slots__ = ("_value", "_weak", "__weakref__")
    __array_priority__ = 100  # so ndarray + Array defers to Array.__radd__

    def __init__(self, value, weak=False):
        self._value = value
        self._weak = weak

    # --- attributes --------------------------------------------------------------------
    shape = property(lambda self: self._value.shape)
    dtype = property(lambda self: self._value.dtype)
    ndim = property(lambda self: self._value.ndim)
    size = property(lambda self: self._value.size)
    weak_type = property(lambda self: self._weak)
    device = property(lambda self: default_device())
    nbytes = property(lambda self: self._value.nbytes)
    itemsize = property(lambda self: self._value.itemsize)

    def devices(self):
        return {default_device()}

    @property
    def T(self):
        return _op("transpose")(self)

    @property
    def at(self):
        from ..ops.indexing import IndexUpdateHelper
        return IndexUpdateHelper(self)

    def block_until_ready(self):
        return self

    # --- conversion --------------------------------------------------------------------
    def __array__(self, dtype=None, copy=None):
        if copy is False and dtype is not None and np.dtype(dtype) != self._value.dtype:
            raise ValueError("Array.__array__: a copy is needed to change the dtype")
        return self._value if dtype is None else self._value.astype(dtype)

    def __repr__(self):
        body = np.array2string(self._value, separator=", ", prefix="Array(")
        extra = ", weak_type=True" if self._weak else ""
        return f"Array({body}, dtype={self._value.dtype}{extra})"

    def __str__(self):
        return str(self._value)

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
        if self._value.dtype.kind not in "iub":
            raise TypeError(f"only integer arrays can be used as an index, got {self.dtype}")
        return int(self._value)

    def __bool__(self):
        if self._value.size != 1:
            raise ValueError("the truth value of an array with more than one element is "
                             "ambiguous; use .any() or .all()")
        return bool(self._value)

    def __len__(self):
        if self._value.ndim == 0:
            raise TypeError("len() of unsized object (a 0-d array)")
        return len(self._value)

    def __iter__(self):
        if self._value.ndim == 0:
            raise TypeError("iteration over a 0-d array")
        for row in self._value:
            yield Array(np.asarray(row))

    def __hash__(self):
        raise TypeError("unhashable type: 'Array' (arrays are mutable-looking values; "
                        "use a tuple or pass it as a static argument's .tolist())")

    def astype(self, dtype):
        return _op("astype")(self, dtype)

    def copy(self):
        return Array(self._value.copy(), self._weak)

    def __getitem__(self, index):
        return _op("getitem")(self, index)

    def __setitem__(self, index, value):
        raise TypeError("astjax arrays are immutable; instead of x[idx] = y use "
                        "x = x.at[idx].set(y)")

    def __getattr__(self, name):
        from ..ops.registry import METHODS
        op_name = METHODS.get(name)
        if op_name is None:
            raise AttributeError(f"'Array' object has no attribute {name!r}")
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


def wrap_output(value, weak=False):
    """A NumPy result as an Array of its canonical dtype."""
    arr = np.asarray(value)
    dtype = dtypes.canonicalize_dtype(arr.dtype)
    if dtype != arr.dtype:
        arr = arr.astype(dtype)
    return Array(arr, weak)
