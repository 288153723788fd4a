"""``eval_shape``, ``ShapeDtypeStruct`` and ``typeof``, as JAX's.

JAX computes ``eval_shape`` by tracing with abstract values. astjax's types know dtypes,
ranks and which dimensions are 1, but sizes are run-time values (a compiled function
serves every size), so the output shapes are found by running ``f``: on zero-filled
arrays for ShapeDtypeStruct leaves (``np.zeros`` is calloc'd: pages of an input nothing
reads cost no memory), on the values themselves for arrays and Python scalars (as weak
0-d arrays, which is how JAX abstracts them), with jit compiling to the python backend
meanwhile (no Numba compile for a shape). Where JAX
succeeds the shapes cannot depend on the values, so the results agree; a function whose
shapes do depend on them (``jnp.nonzero`` without ``size``), which JAX refuses, gets the
shapes of this run.
"""
import numpy as np

from . import dtypes


class ShapeDtypeStruct:
    """A shape and a dtype (and JAX's ``weak_type``): an abstract array."""

    __slots__ = ("shape", "dtype", "sharding", "weak_type")

    def __init__(self, shape, dtype, *, sharding=None, weak_type=False):
        if dtype is None:
            raise ValueError("ShapeDtypeStruct: dtype must be specified.")
        self.shape = tuple(int(d) for d in shape)
        self.dtype = np.dtype(dtype)  # (not canonicalized, as in JAX: eval_shape does that)
        self.sharding = sharding
        self.weak_type = bool(weak_type)

    ndim = property(lambda self: len(self.shape))
    size = property(lambda self: int(np.prod(self.shape, dtype=np.int64)))

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def update(self, **kwargs):
        fields = {"shape": self.shape, "dtype": self.dtype, "sharding": self.sharding,
                  "weak_type": self.weak_type, **kwargs}
        return ShapeDtypeStruct(fields.pop("shape"), fields.pop("dtype"), **fields)

    def _key(self):
        return self.shape, self.dtype, self.sharding, self.weak_type

    def __eq__(self, other):
        return isinstance(other, ShapeDtypeStruct) and self._key() == other._key()

    def __hash__(self):
        return hash(self._key())

    def __repr__(self):
        weak = ", weak_type=True" if self.weak_type else ""
        return f"ShapeDtypeStruct(shape={self.shape}, dtype={self.dtype.name}{weak})"


def eval_shape(fun, *args, **kwargs):
    """The shapes and dtypes of ``fun(*args, **kwargs)`` as a pytree of ShapeDtypeStruct;
    ``args`` are pytrees of ShapeDtypeStructs (or anything with ``shape`` and ``dtype``),
    arrays and Python scalars (see the module's docstring)."""
    from .config import config
    from .tree_util import tree_map
    name = getattr(fun, "__name__", repr(fun))
    args, kwargs = tree_map(lambda x: _input(x, name), (args, kwargs))
    backend = config.astjax_jit_backend
    config.update("astjax_jit_backend", "python")
    try:
        out = fun(*args, **kwargs)
    finally:
        config.update("astjax_jit_backend", backend)
    return tree_map(_struct_of, out)


def _input(x, name):
    from .runtime.array import Array
    if isinstance(x, Array):
        return x
    if dtypes.is_python_scalar(x):  # a weak 0-d array, as JAX abstracts it (bool: not weak)
        return Array(np.asarray(x, dtypes.python_scalar_dtype(x)), not isinstance(x, bool))
    if isinstance(x, (np.ndarray, np.generic)):
        return Array(np.asarray(x, dtypes.canonicalize_dtype(x.dtype)))
    if hasattr(x, "shape") and hasattr(x, "dtype"):  # ShapeDtypeStruct, jax's too
        dtype = dtypes.canonicalize_dtype(x.dtype)
        return Array(np.zeros(x.shape, dtype), bool(getattr(x, "weak_type", False)))
    raise TypeError(f"Error interpreting argument to {name} as an abstract array. The "
                    f"problematic value is of type {type(x)}.")


def _struct_of(x):
    t = typeof(x)
    return ShapeDtypeStruct(t.shape, t.dtype, weak_type=t.weak_type)


class ShapedArray:
    """What ``typeof`` gives: an array's shape, dtype and weak type, printed as JAX's
    (``float32[2,3]``, ``~float32[]`` for a weak type)."""

    __slots__ = ("shape", "dtype", "weak_type")

    def __init__(self, shape, dtype, weak_type=False):
        self.shape, self.dtype, self.weak_type = tuple(shape), np.dtype(dtype), bool(weak_type)

    ndim = property(lambda self: len(self.shape))
    size = property(lambda self: int(np.prod(self.shape, dtype=np.int64)))

    def update(self, shape=None, dtype=None, weak_type=None):
        return ShapedArray(self.shape if shape is None else shape,
                           self.dtype if dtype is None else dtype,
                           self.weak_type if weak_type is None else weak_type)

    def str_short(self):
        return f"{'~' if self.weak_type else ''}{self.dtype.name}" \
               f"[{','.join(str(d) for d in self.shape)}]"

    __str__ = str_short

    def __repr__(self):
        return f"ShapedArray({self.str_short()})"

    def _key(self):
        return self.shape, self.dtype, self.weak_type

    def __eq__(self, other):
        return isinstance(other, ShapedArray) and self._key() == other._key()

    def __hash__(self):
        return hash(self._key())


def typeof(x):
    """The abstract value of an array or Python scalar (``jax.typeof``)."""
    from .runtime.array import Array
    if isinstance(x, Array):
        return ShapedArray(x.shape, x.dtype, x.weak_type)
    if dtypes.is_python_scalar(x):
        return ShapedArray((), dtypes.python_scalar_dtype(x), not isinstance(x, bool))
    if isinstance(x, (np.ndarray, np.generic)):
        return ShapedArray(x.shape, dtypes.canonicalize_dtype(x.dtype))
    if isinstance(x, ShapeDtypeStruct):
        return ShapedArray(x.shape, dtypes.canonicalize_dtype(x.dtype), x.weak_type)
    raise TypeError(f"Argument '{x}' of type '{type(x)}' is not a valid JAX type")


def _typeof_in_compiled_code(typer, node, args, kwargs):
    """``typeof`` of a constant is folded; of a run-time array it is a located error: its
    sizes are run-time values here, where JAX knows them while tracing."""
    from .ir import anno
    from .ir.types import Static
    if len(args) == 1 and not kwargs and isinstance(args[0], Static):
        value = typeof(args[0].value)
        anno.set_(node, "folded", value)
        return Static(value)
    raise typer.error(node, "astjax.typeof() of a run-time value cannot be compiled: sizes "
                      "are run-time values in astjax; read x.dtype, x.ndim and x.shape")


def _register():
    from .ir import infer
    infer._BUILTINS[typeof] = _typeof_in_compiled_code


_register()
