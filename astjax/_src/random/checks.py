"""Argument checks for ``astjax.random``, and the wrapper that gives them to the compiler.

The random functions are plain ``astjax.numpy`` code, so ``jit`` compiles them like
user code. Compiled code cannot ``raise``, so the Python-level checks live here:

* ``static_helper`` functions canonicalize static arguments (shapes, dtypes) and
  raise on bad ones. They are not ``FunctionType``s, so the compiler does not
  compile their bodies: it calls them while generating code, when all their
  arguments are static (and eagerly they are ordinary calls).
* ``random_function`` wraps a public function. Called eagerly it checks the key
  (a uint32 array of shape (2,), JAX's legacy key) and the concrete arguments;
  called from compiled code the compiler asks its ``function_for`` for the
  function to compile at the given argument types, which checks the same things
  on the types (and on the static values).
"""
import functools
import inspect
import math
import operator

import numpy as np

from .. import dtypes
from ..config import config
from ..errors import at_user_call
from ..ir.types import ArrayType, SequenceType, Static, Type
from ..runtime.array import Array

PARTITIONABLE = "jax_threefry_partitionable"  # a config option (config.py)


class static_helper:
    """A function the compiler evaluates at generation time (on static arguments)."""

    def __init__(self, fn):
        functools.update_wrapper(self, fn)
        self.fn = fn

    def __call__(self, *args, **kwargs):
        return self.fn(*args, **kwargs)

    def __repr__(self):
        return f"<static helper {self.fn.__name__}>"


def known_or_run_time(known, run_time):
    """A function with two implementations: ``known`` (a plain function, typically calling
    static helpers) when every argument is known when code is generated -- always the case
    eagerly --, else ``run_time`` (``astjax.numpy`` code on values computed at run time).

    Compiled code has symbolic shapes: the shape of an array computed at run time (a
    parameter passed to jit, a constant captured by vmap'd code) is known only at run time,
    so the random bits of a shape taken from it are counted at run time too."""
    return _two_way(known, lambda *arg_types: known if all(is_known(t) for t in arg_types)
                    else run_time)


def is_known(t):
    """A type whose value is known while the code is generated (constants, and tuples of
    them)."""
    if isinstance(t, Static):
        return True
    if isinstance(t, SequenceType):
        return all(is_known(e) for e in t.elts)
    return False


# --- keys -------------------------------------------------------------------------------------

_KEY_HELP = ("a PRNG key is a uint32 array of shape (2,), as made by "
             "astjax.random.PRNGKey(seed), split or fold_in")


def concrete_key(name, key, allow_batched=False):
    """The key as an Array, or a TypeError/ValueError saying what is wrong with it."""
    if isinstance(key, Array):
        value = key._value
    elif isinstance(key, (np.ndarray, np.generic)):
        value = np.asarray(key)
    else:
        raise TypeError(f"{name}: unexpected PRNG key type {type(key).__name__}; {_KEY_HELP}")
    if value.dtype != np.uint32:
        raise TypeError(f"{name}: {_KEY_HELP}; got an array of dtype {value.dtype}")
    if value.ndim == 0 or value.shape[-1] != 2:
        raise TypeError(f"{name}: {_KEY_HELP}; got an array of shape {value.shape}")
    if not allow_batched and value.ndim != 1:
        raise ValueError(f"{name} accepts a single key, but was given a key array of shape "
                         f"{value.shape} != (2,). Split keys or index them to get one key.")
    return key if isinstance(key, Array) else Array(value)


def key_type(name, t, allow_batched=False):
    """The same checks on a key's abstract type (in compiled code)."""
    if isinstance(t, Static):
        if isinstance(t.value, (np.ndarray, Array)):
            concrete_key(name, t.value, allow_batched)
            return
        raise TypeError(f"{name}: unexpected PRNG key type {type(t.value).__name__}; "
                        f"{_KEY_HELP}")
    if not isinstance(t, ArrayType):
        raise TypeError(f"{name}: {_KEY_HELP}; got {t}")
    if t.dtype != np.uint32:
        raise TypeError(f"{name}: {_KEY_HELP}; got an array of dtype {t.dtype}")
    if t.ndim == 0 or t.ones[-1]:
        raise TypeError(f"{name}: {_KEY_HELP}; got {t}")
    if not allow_batched and t.ndim != 1:
        raise ValueError(f"{name} accepts a single key, but was given a key array of rank "
                         f"{t.ndim}. Split keys or index them to get one key.")


class random_function:
    """Wrap a public random function: key and argument checks, eager and compiled.

    ``static``: parameters that must be known when code is generated (shape, dtype).
    ``run_time_shape``: the ``shape`` parameter may instead be a tuple of integers
    computed at run time (``x.shape`` of a jit argument, as in dropout); the function
    then canonicalizes it with ``sample_shape``.
    ``check(name, args)``: more checks on the bound arguments (a dict); in compiled
    code an argument known only at run time is its type (``is_dynamic``). Called
    eagerly, a check may return a dict of converted arguments (a Python seed made an
    integer array, as JAX converts it).
    """

    def __init__(self, name, static=(), check=None, key="key", batched_key=False,
                 run_time_shape=False):
        self.name = name
        self.static = tuple(static)
        self.run_time_shape = run_time_shape
        self.check = check
        self.key = key
        self.batched_key = batched_key

    def __call__(self, fn):
        return _RandomFunction(fn, self)


class _RandomFunction:
    def __init__(self, fn, spec):
        functools.update_wrapper(self, fn)
        self.fn = fn
        self.spec = spec
        self.signature = inspect.signature(fn)

    def __repr__(self):
        return f"<function astjax.random.{self.fn.__name__}>"

    def __call__(self, *args, **kwargs):
        spec = self.spec
        try:
            bound = self.signature.bind(*args, **kwargs)
        except TypeError as e:
            raise TypeError(f"{spec.name}(): {e}") from None
        bound.apply_defaults()
        values = bound.arguments
        if spec.key is not None:
            values[spec.key] = concrete_key(spec.name, values[spec.key], spec.batched_key)
        if spec.check is not None:
            values.update(spec.check(spec.name, values) or {})
        # uint32 arithmetic on 0-d values wraps, as intended; the rejection samplers divide
        # by zero and make NaNs in draws they then reject (JAX warns of none of these)
        with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
            return self.fn(**values)

    def function_for(self, arg_types, program):
        """What the compiler compiles for a call at these argument types: ``fn`` itself,
        after the checks that the types (and static values) allow. A failed check is
        raised at the user's call."""
        try:
            self._check_types(dict(zip(self.signature.parameters, arg_types)))
        except (TypeError, ValueError, NotImplementedError) as e:
            raise at_user_call(e) from None
        return self.fn

    def _check_types(self, types):
        spec = self.spec
        if spec.key is not None:
            key_type(spec.name, types[spec.key], spec.batched_key)
        for name in spec.static:
            t = types[name]
            if name == "shape" and spec.run_time_shape and not is_known(t):
                run_time_shape_type(spec.name, t)
            elif not isinstance(t, Static) and not _all_static(t):
                raise TypeError(f"{spec.name}: {name} must be known when the code is "
                                f"generated (a constant, or a static argument of jit), "
                                f"got {t}")
        if spec.check is not None:
            spec.check(spec.name, {k: _static_value(t) for k, t in types.items()})


def _all_static(t):
    return isinstance(t, SequenceType) and all(isinstance(e, Static) for e in t.elts)


def _static_value(t):
    if isinstance(t, Static):
        return t.value
    if _all_static(t):
        return tuple(e.value for e in t.elts)
    return t


def is_dynamic(value):
    """An argument of a compiled call known only at run time (it is given as its type)."""
    return isinstance(value, Type)


# --- static canonicalization ------------------------------------------------------------------

@static_helper
def partitionable():
    """The jax_threefry_partitionable setting (read when code is generated)."""
    return bool(getattr(config, PARTITIONABLE))


@static_helper
def canonical_shape(name, shape, what="shape"):
    """A tuple of non-negative ints (an int means a 1-D shape, as in JAX)."""
    if isinstance(shape, (int, np.integer)) and not isinstance(shape, bool):
        shape = (shape,)
    if isinstance(shape, Array) or isinstance(shape, np.ndarray):
        raise TypeError(f"{name}: {what} must be a tuple of ints known when the code is "
                        f"generated, got an array")
    try:
        dims = tuple(shape)
    except TypeError:
        raise TypeError(f"{name}: {what} must be a tuple of non-negative ints, got "
                        f"{shape!r}") from None
    out = []
    for d in dims:
        if isinstance(d, bool) or not isinstance(d, (int, np.integer)):
            raise TypeError(f"{name}: {what} must be a tuple of non-negative ints, got "
                            f"{shape!r}")
        if d < 0:
            raise ValueError(f"{name}: {what} must be a tuple of non-negative ints, got "
                             f"{shape!r}")
        out.append(int(d))
    return tuple(out)


@static_helper
def optional_shape(name, shape):
    return None if shape is None else canonical_shape(name, shape)


# A sampler's shape in compiled code may hold sizes computed at run time (its rank is
# known): ``bernoulli(key, p, x.shape)``. Such a shape is passed on as it is; the
# samplers count their random bits at run time (``threefry.size``).

def _shape_as_given(name, shape):
    return shape


def _shape_of_one_dim(name, shape):
    return (shape,)


@static_helper
def _known_shape(name, shape):
    return canonical_shape(name, shape)


def _run_time_shape(name, shape):
    """The function that canonicalizes a shape of type ``shape`` in compiled code (the
    random function's ``function_for`` has checked it)."""
    if is_known(shape):
        return _known_shape
    return _shape_of_one_dim if isinstance(shape, ArrayType) else _shape_as_given


def run_time_shape_type(name, t):
    """Check a sampler's shape known only at run time: an integer scalar (a 1-D shape) or
    a tuple of integer scalars and non-negative ints (its rank known)."""
    def is_size(e):
        if isinstance(e, Static):
            d = e.value
            return isinstance(d, (int, np.integer)) and not isinstance(d, bool) and d >= 0
        return isinstance(e, ArrayType) and e.ndim == 0 and e.dtype.kind in "iu"
    if isinstance(t, SequenceType) and all(is_size(e) for e in t.elts) or \
            not isinstance(t, SequenceType) and is_size(t):
        return
    raise TypeError(f"{name}: shape must be a tuple of non-negative ints, got {t}")


def _optional_run_time_shape(name, shape):
    if isinstance(shape, Static) and shape.value is None:
        return optional_shape
    return _run_time_shape(name, shape)


def _two_way(known, lower):
    from ..lax.common import LaxFunction  # eager on values, a chosen function when compiled
    return LaxFunction(known, lower)


sample_shape = _two_way(_known_shape, _run_time_shape)
optional_sample_shape = _two_way(optional_shape, _optional_run_time_shape)


@static_helper
def split_shape(num):
    """split(key, num): num is an int or a tuple of ints."""
    if isinstance(num, (tuple, list)):
        return canonical_shape("split", num, "num")
    return canonical_shape("split", (num,), "num")


def _user_dtype(name, dtype, default):
    if dtype is None:
        dtype = default
    try:
        dtype = np.dtype(dtype)
    except TypeError:
        raise TypeError(f"{name}: {dtype!r} is not a dtype") from None
    dtypes.warn_if_narrowed(dtype)
    return dtypes.canonicalize_dtype(dtype)


@static_helper
def float_dtype(name, dtype):
    """A float dtype (default float32, float64 with jax_enable_x64)."""
    dt = _user_dtype(name, dtype, dtypes.default_float())
    if dt.kind != "f":
        raise ValueError(f"dtype argument to `{name}` must be a float dtype, got {dt}")
    return dt


@static_helper
def inexact_user_dtype(name, dtype):
    """A float or complex dtype (normal)."""
    dt = _user_dtype(name, dtype, dtypes.default_float())
    if dt.kind not in "fc":
        raise ValueError(f"dtype argument to `{name}` must be a float or complex dtype, "
                         f"got {dt}")
    return dt


@static_helper
def real_dtype(dtype):
    return np.zeros((), dtype).real.dtype


@static_helper
def int_dtype(name, dtype):
    dt = _user_dtype(name, dtype, dtypes.default_int())
    if dt.kind not in "iu":
        raise TypeError(f"{name} only accepts integer dtypes, got {dt}")
    return dt


@static_helper
def uint_dtype(name, dtype):
    default = np.dtype(np.uint64) if dtypes.x64_enabled() else np.dtype(np.uint32)
    dt = _user_dtype(name, dtype, default)
    if dt.kind != "u":
        raise ValueError(f"dtype argument to `{name}` must be an unsigned int dtype, got {dt}")
    return dt


@static_helper
def randint_sampling(dtype):
    """randint samples 8- and 16-bit integers at 32 bits (less bias), as JAX."""
    return np.dtype(np.int32) if np.dtype(dtype).itemsize < 4 else np.dtype(dtype)


@static_helper
def iinfo_bounds(dtype):
    info = np.iinfo(dtype)
    return int(info.min), int(info.max)


@static_helper
def clip_bounds(target, source):
    """The range of ``target`` inside the range of ``source``, in ``source``."""
    t, s = np.iinfo(target), np.iinfo(source)
    return max(int(t.min), int(s.min)), min(int(t.max), int(s.max))


@static_helper
def uint_of_width(bits):
    return np.dtype(f"uint{bits}")


@static_helper
def finfo(dtype):
    """(bits, nmant, tiny, epsneg) of a float dtype, as Python numbers."""
    info = np.finfo(dtype)
    return info.bits, int(info.nmant), float(info.tiny), float(info.epsneg)


@static_helper
def size_of(shape):
    return math.prod(shape)


@static_helper
def counter_count(shape):
    """The number of 32-bit counters for ``shape``; JAX hashes 2**32 and more with 64-bit
    counters (or blocks of keys), which astjax does not implement."""
    n = math.prod(shape)
    if n >= 2 ** 32 - 1:
        raise NotImplementedError(f"astjax.random: {n} random values in one call; at most "
                                  f"2**32 - 2 are supported")
    return n


@static_helper
def shuffle_rounds(size):
    """How many sorts by random 32-bit keys JAX uses to shuffle ``size`` items."""
    uint32max = np.iinfo(np.uint32).max
    return int(np.ceil(3 * np.log(max(1, size)) / np.log(uint32max)))


def _shuffle_round_limits():
    """The largest size JAX shuffles in at most r rounds, for r = 0, 1, 2 (its round count
    grows with the size; sizes of 2**32 and more are not supported)."""
    limits = []
    for r in range(3):
        lo, hi = 1, 2 ** 32 - 1  # shuffle_rounds(lo) <= r < shuffle_rounds(hi + 1)
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if shuffle_rounds(mid) <= r:
                lo = mid
            else:
                hi = mid - 1
        limits.append(lo)
    return np.array(limits, np.int32)


SHUFFLE_ROUND_LIMITS = _shuffle_round_limits()


@static_helper
def trailing_axes(ndim, n):
    return tuple(range(ndim, ndim + n))


@static_helper
def leading_axes(n):
    return tuple(range(n))


@static_helper
def check_broadcast(name, shape, *param_shapes):
    """JAX's _check_shape: parameter shapes broadcast to exactly ``shape``."""
    if not param_shapes:
        return shape
    try:
        out = np.broadcast_shapes(tuple(shape), *[tuple(p) for p in param_shapes])
    except ValueError:
        out = None
    if out != tuple(shape):
        raise ValueError(f"{name} parameter shapes must be broadcast-compatible with shape "
                         f"argument, and the result of broadcasting the shapes must equal "
                         f"the shape argument, but got result {out} for shape argument "
                         f"{tuple(shape)} (parameter shapes: "
                         f"{', '.join(str(tuple(p)) for p in param_shapes)}).")
    return tuple(shape)


@static_helper
def broadcast_shapes(name, *shapes):
    try:
        return tuple(np.broadcast_shapes(*[tuple(s) for s in shapes]))
    except ValueError:
        raise ValueError(f"{name}: incompatible parameter shapes "
                         f"{', '.join(str(tuple(s)) for s in shapes)}") from None


@static_helper
def delete_axis(shape, axis):
    shape = list(shape)
    del shape[axis]
    return tuple(shape)


@static_helper
def normalize_axis(name, axis, ndim):
    axis = operator.index(axis)
    if not -ndim <= axis < ndim:
        raise ValueError(f"{name}: axis {axis} is out of bounds for an array of rank {ndim}")
    return axis % ndim


@static_helper
def fail(exc_type, message):
    """Raise from compiled code's point of view: only ever reached on static paths."""
    raise exc_type(message)


# --- checks on bound arguments ------------------------------------------------------------------

def _concrete(value):
    if is_dynamic(value):
        return None
    if isinstance(value, Array):
        return value._value
    if isinstance(value, (np.ndarray, np.generic, int, float, bool)):
        return np.asarray(value)
    if isinstance(value, (list, tuple)):
        try:
            return np.asarray(value)
        except (ValueError, TypeError):
            return None
    return None


def check_range(low_name, high_name):
    """minval <= maxval where both are known scalars: a deliberate check JAX does not make
    (it silently returns minval). Array bounds keep JAX's elementwise rule (minval wherever
    maxval <= minval), which callers may rely on."""
    def check(name, args):
        lo, hi = _concrete(args[low_name]), _concrete(args[high_name])
        if lo is None or hi is None or lo.ndim or hi.ndim:
            return
        if lo.dtype.kind not in "biuf" or hi.dtype.kind not in "biuf":
            return
        if lo > hi:
            raise ValueError(f"{name}: {low_name} > {high_name} ({low_name}={lo.item()}, "
                             f"{high_name}={hi.item()}); astjax raises where JAX would "
                             f"return {low_name}")
    return check


def all_checks(*checks):
    def check(name, args):
        out = {}
        for c in checks:
            out.update(c(name, {**args, **out}) or {})
        return out
    return check


def check_probability_dtype(arg):
    def check(name, args):
        p = args[arg]
        a = p if isinstance(p, ArrayType) else _concrete(p)
        if a is not None and a.dtype.kind != "f" and not isinstance(p, float):
            raise TypeError(f"{name} probability `{arg}` must have a floating dtype, "
                            f"got {a.dtype}.")
    return check


def check_one_of(arg, options):
    def check(name, args):
        value = args[arg]
        if not is_dynamic(value) and value not in options:
            raise ValueError(f"{name}: got {arg}={value!r}, expected one of "
                             f"{', '.join(repr(o) for o in options)}")
    return check


def _shape_of(value):
    """The shape of a concrete argument, or its rank as a type's (None) in compiled code."""
    if isinstance(value, ArrayType):
        return None
    if isinstance(value, Type):
        return None
    return np.shape(value if not isinstance(value, Array) else value._value)


def check_param_shapes(shape_arg, *params, trailing=0):
    """Parameter shapes (minus ``trailing`` core dims) broadcast exactly to ``shape``; with
    shape None (where allowed) compiled code needs every parameter known, since shapes
    are symbolic there."""
    def check(name, args):
        shape = args[shape_arg]
        values = [args[p] for p in params]
        if is_dynamic(shape):
            return
        if shape is None:
            for p, v in zip(params, values):
                if is_dynamic(v):
                    raise TypeError(f"{name}: pass shape= (a static tuple) when `{p}` is an "
                                    f"array computed at run time: compiled shapes are symbolic")
            return
        shape = canonical_shape(name, shape)
        shapes = []
        for v in values:
            s = _shape_of(v)
            if s is None:
                if isinstance(v, ArrayType) and v.ndim - trailing > len(shape):
                    raise ValueError(f"{name}: a parameter of rank {v.ndim} does not broadcast "
                                     f"to shape {shape}")
                continue
            shapes.append(s[:len(s) - trailing] if trailing else s)
        if shapes:
            check_broadcast(name, shape, *shapes)
    return check


def check_seed(name, args):
    """PRNGKey(seed): an integer scalar. A Python int becomes int64 and then the default
    integer dtype (wrapping), as JAX does."""
    seed = args["seed"]
    if isinstance(seed, ArrayType):
        if seed.dtype.kind not in "iu" or seed.ndim != 0:
            raise TypeError(f"{name}: the seed must be an integer scalar, got {seed}")
        return None
    if is_dynamic(seed):
        return None
    if isinstance(seed, bool) or isinstance(seed, (float, complex, str)) or seed is None:
        raise TypeError(f"{name}: PRNG key seed must be an integer; got {seed!r}")
    if isinstance(seed, int):
        value = np.asarray(np.int64(seed)).astype(dtypes.default_int())
        return {"seed": Array(value)}
    value = seed._value if isinstance(seed, Array) else np.asarray(seed)
    if value.dtype == np.uint32 and value.shape[-1:] == (2,):
        raise TypeError(f"{name} accepts a scalar seed, but was given a PRNG key.")
    if value.ndim:
        raise TypeError(f"{name} accepts a scalar seed, but was given an array of shape "
                        f"{value.shape} != ().")
    if value.dtype.kind not in "iu":
        raise TypeError(f"{name}: PRNG key seed must be an integer; got {value.dtype} value "
                        f"{value.item()!r}")
    return {"seed": Array(value.astype(dtypes.canonicalize_dtype(value.dtype)))}


def check_fold_in_data(name, args):
    """fold_in(key, data): data is an integer scalar that fits 32 bits (a Python int must be
    in [0, 2**32), as JAX requires); arrays wrap to uint32."""
    data = args["data"]
    if isinstance(data, ArrayType):
        if data.ndim != 0 or data.dtype.kind not in "biu":
            raise TypeError(f"{name}: data must be an integer scalar, got {data}")
        return None
    if is_dynamic(data):
        return None
    if isinstance(data, int) and not isinstance(data, bool):
        if not 0 <= data < 2 ** 32:
            raise OverflowError(f"{name}: data {data} does not fit in uint32")
        return {"data": Array(np.asarray(data, np.uint32))}
    value = data._value if isinstance(data, Array) else np.asarray(data)
    if value.ndim:
        raise TypeError(f"{name} accepts a scalar, but was given an array of shape "
                        f"{value.shape} != ().")
    if value.dtype.kind not in "biu":
        raise TypeError(f"{name}: data must be an integer, got {value.dtype}")
    return {"data": Array(value.astype(np.uint32))}


# --- helpers of particular samplers -------------------------------------------------------------

@static_helper
def as_int(x):
    return int(x)


@static_helper
def default_to(value, default):
    return default if value is None else value


@static_helper
def inexact_dtype(dtype):
    dtype = np.dtype(dtype)
    return dtype if dtype.kind in "fc" else dtypes.default_float()


@static_helper
def promote_inexact(*arrays):
    """Arrays of one common inexact dtype (JAX's promote_dtypes_inexact)."""
    import astjax.numpy as jnp
    arrays = [jnp.asarray(a) for a in arrays]
    dtype, weak = dtypes.promote_types(*[(a.dtype, a.weak_type) for a in arrays])
    dtype, _ = dtypes.to_inexact(dtype, weak)
    return tuple(a.astype(dtype) for a in arrays)


@static_helper
def promote_inexact_dtypes(*dtype_list):
    """promote_inexact's dtype for arrays known at run time only (taken as not weak)."""
    dtype, weak = dtypes.promote_types(*[(d, False) for d in dtype_list])
    return dtypes.to_inexact(dtype, weak)[0]


@static_helper
def gumbel_mode(name, mode):
    """None means "low" (JAX's default, use_high_dynamic_range_gumbel off)."""
    if mode is None:
        return "low"
    if mode == "highest":
        raise NotImplementedError(f"{name}: mode='highest' is not implemented in astjax yet; "
                                  f"use 'high'")
    if mode not in ("high", "low"):
        raise ValueError(f"Must provide valid mode for {name} got: {mode}")
    return mode


def check_choice(name, args):
    shape, a, p = args["shape"], args["a"], args["p"]
    if not is_dynamic(shape) and not isinstance(shape, (tuple, list)):
        raise TypeError(f"shape argument of astjax.random.choice must be a sequence, got "
                        f"{shape!r}")
    if is_dynamic(a):  # an array computed at run time: its size is known then
        if not isinstance(a, ArrayType) or a.ndim == 0:
            raise TypeError(f"{name}: a must be an array, or an int known when the code is "
                            f"generated (its size decides the sampling), got {a}")
        normalize_axis(name, args["axis"], a.ndim)
        n_inputs = None
    else:
        arr = _concrete(a)
        if arr is None:
            raise TypeError(f"{name}: a must be an int or an array, got {type(a).__name__}")
        if arr.ndim == 0:
            if arr.dtype.kind not in "iu":
                raise TypeError(f"{name}: a must be an integer or an array, got {arr.dtype}")
            n_inputs = int(arr)
        else:
            axis = normalize_axis(name, args["axis"], arr.ndim)
            n_inputs = arr.shape[axis]
    shape = canonical_shape(name, shape)
    n_draws = math.prod(shape)
    if n_draws == 0:
        return
    if n_inputs is not None and n_inputs <= 0:
        raise ValueError("a must be greater than 0 unless no samples are taken")
    if n_inputs is not None and not args["replace"] and n_draws > n_inputs:
        raise ValueError(f"Cannot take a larger sample (size {n_draws}) than population "
                         f"(size {n_inputs}) when 'replace=False'")
    if p is not None:
        if isinstance(p, ArrayType):
            if p.ndim != 1:
                raise ValueError(f"p must be None or a 1D vector, got {p}")
        else:
            p_shape = np.shape(_concrete(p))
            if p_shape != (n_inputs,) and (n_inputs is not None or len(p_shape) != 1):
                raise ValueError(f"p must be None or a 1D vector with the same size as "
                                 f"a.shape[axis]. p has shape {p_shape} and a.shape[axis] is "
                                 f"{n_inputs if n_inputs is not None else 'known at run time'}.")
    gumbel_mode(name, args["mode"])


def check_categorical(name, args):
    logits = args["logits"]
    if is_dynamic(logits):
        if args["shape"] is None:
            raise TypeError(f"{name}: logits must be known when the code is generated (the "
                            f"sample shape comes from its shape), got {logits}; for logits "
                            f"computed at run time, pass shape= (a static tuple)")
        if not isinstance(logits, ArrayType) or logits.ndim == 0:
            raise ValueError(f"{name}: logits must be an array of rank >= 1, got {logits}")
        normalize_axis(name, args["axis"], logits.ndim)
        shape = canonical_shape(name, args["shape"])
        if len(shape) < logits.ndim - 1:
            raise ValueError(f"{name} parameter shapes must be broadcast-compatible with shape "
                             f"argument: logits {logits} without its category axis has rank "
                             f"{logits.ndim - 1}, more than shape {shape}")
        gumbel_mode(name, args["mode"])
        return
    arr = _concrete(logits)
    if arr is None or arr.ndim == 0:
        raise ValueError(f"{name}: logits must be an array of rank >= 1")
    axis = normalize_axis(name, args["axis"], arr.ndim)
    batch_shape = delete_axis(arr.shape, axis)
    shape = args["shape"]
    if shape is None:
        shape = batch_shape
    else:
        shape = canonical_shape(name, shape)
        check_broadcast(name, shape, batch_shape)
    if not args["replace"]:
        k = math.prod(shape[:len(shape) - len(batch_shape)])
        if k > arr.shape[axis]:
            raise ValueError(f"Number of samples without replacement ({k}) cannot exceed "
                             f"number of categories ({arr.shape[axis]}).")
    gumbel_mode(name, args["mode"])


def _rank_of(value):
    """The rank of an argument (known for arrays computed at run time too), or None."""
    if isinstance(value, ArrayType):
        return value.ndim
    if is_dynamic(value):
        return None
    a = _concrete(value)
    return None if a is None else a.ndim


def check_multivariate_normal(name, args):
    if args["method"] not in ("svd", "eigh", "cholesky"):
        raise ValueError("method must be one of {'svd', 'eigh', 'cholesky'}")
    mean, cov = args["mean"], args["cov"]
    if is_dynamic(mean) or is_dynamic(cov):
        if args["shape"] is None:
            raise TypeError(f"{name}: mean and cov must be known when the code is generated "
                            f"(the sample shape comes from their shapes); for mean and cov "
                            f"computed at run time, pass shape= (a static tuple)")
        if args["method"] != "cholesky":
            raise TypeError(f"{name}: method={args['method']!r} factors cov with NumPy, so "
                            f"it needs mean and cov known when the code is generated; use "
                            f"method='cholesky'")
        m_ndim, c_ndim = _rank_of(mean), _rank_of(cov)
        if m_ndim is None or m_ndim < 1:
            raise ValueError(f"multivariate_normal requires mean.ndim >= 1, got {mean}")
        if c_ndim is None or c_ndim < 2:
            raise ValueError(f"multivariate_normal requires cov.ndim >= 2, got {cov}")
        shape = canonical_shape(name, args["shape"])
        if len(shape) < max(m_ndim - 1, c_ndim - 2):
            raise ValueError(f"{name} parameter shapes must be broadcast-compatible with "
                             f"shape argument {shape}: mean {mean}, cov {cov}")
        return
    m, c = _concrete(mean), _concrete(cov)
    if m is None or m.ndim < 1:
        raise ValueError(f"multivariate_normal requires mean.ndim >= 1, got mean.ndim == "
                         f"{0 if m is None else m.ndim}")
    if c is None or c.ndim < 2:
        raise ValueError(f"multivariate_normal requires cov.ndim >= 2, got cov.ndim == "
                         f"{0 if c is None else c.ndim}")
    n = m.shape[-1]
    if c.shape[-2:] != (n, n):
        raise ValueError(f"multivariate_normal requires cov.shape == (..., n, n) for n={n}, "
                         f"but got cov.shape == {c.shape}.")
    if args["shape"] is not None:
        check_broadcast("normal", canonical_shape(name, args["shape"]), m.shape[:-1],
                        c.shape[:-2])
    else:
        broadcast_shapes(name, m.shape[:-1], c.shape[:-2])


def check_dirichlet(name, args):
    alpha = args["alpha"]
    if is_dynamic(alpha):
        if args["shape"] is None:
            raise TypeError(f"{name}: alpha must be known when the code is generated (the "
                            f"sample shape comes from its shape), got {alpha}; for alpha "
                            f"computed at run time, pass shape= (a static tuple)")
        if _rank_of(alpha) is None or _rank_of(alpha) < 1:
            raise ValueError(f"dirichlet requires alpha.ndim >= 1, got {alpha}")
        return
    a = _concrete(alpha)
    if a is None or a.ndim < 1:
        raise ValueError(f"dirichlet requires alpha.ndim >= 1, got alpha.ndim == "
                         f"{0 if a is None else a.ndim}")


# --- the derived samplers (random.cauchy ... random.multinomial) ----------------------------------

@static_helper
def any_dtype(name, dtype, default):
    """A dtype of any kind (rademacher samples ints or floats), ``default`` a Python type."""
    return _user_dtype(name, dtype, np.dtype(dtypes.default_int() if default is int
                                             else dtypes.default_float()))


@static_helper
def int_result_dtype(name, dtype):
    """geometric's integer dtype, with JAX's ValueError for another kind."""
    dt = _user_dtype(name, dtype, dtypes.default_int())
    if dt.kind not in "iu":
        raise ValueError(f"dtype argument to `{name}` must be an int dtype, got {dt}")
    return dt


def _typed(value):
    """(dtype, weak) of a parameter, None when it is no number or array."""
    if isinstance(value, ArrayType):
        return value.dtype, value.weak
    if is_dynamic(value):
        return None
    if isinstance(value, Array):
        return value.dtype, value.weak_type
    if dtypes.is_python_scalar(value):
        return dtypes.python_scalar_dtype(value), True
    a = _concrete(value)
    return None if a is None else (a.dtype, False)


def check_safe_to_cast(*params):
    """JAX's _check_all_safe_to_cast: each parameter promotes to the sample dtype (a
    float64 array, with x64, is not sampled as float32). A dtype of the wrong kind is left
    to the function's own error."""
    def check(name, args):
        dtype = args["dtype"]
        if is_dynamic(dtype):
            return
        try:
            target = dtypes.canonicalize_dtype(np.dtype(
                dtypes.default_float() if dtype is None else dtype))
        except TypeError:
            return
        if target.kind not in "fc":
            return
        for p in params:
            typed = _typed(args[p])
            if typed is not None and dtypes.promote_types(typed, (target, False))[0] != target:
                raise ValueError(f"In arguments to {name}, cannot safely cast argument of "
                                 f"type {np.dtype(typed[0])} to {target}")
    return check


def check_scalar_int(*params):
    """ball's d, orthogonal's n and m: ints known when the code is generated."""
    def check(name, args):
        for p in params:
            v = args[p]
            if v is None and p == "m":
                continue
            if is_dynamic(v) or isinstance(v, bool) or not isinstance(v, (int, np.integer)):
                raise TypeError(f"{name}: {p} must be an int known when the code is "
                                f"generated, got {v!r}")
            if v < 0:
                raise ValueError(f"{name}: {p} must be non-negative, got {v}")
    return check


def check_multinomial(name, args):
    """p has the outcomes on its last axis; their number must be known when the code is
    generated (one binomial each), so compiled code with p computed at run time passes
    shape=."""
    p, n, shape = args["p"], args["n"], args["shape"]
    if is_dynamic(p):
        if shape is None:
            raise TypeError(f"{name}: p must be known when the code is generated (the "
                            f"number of outcomes comes from its shape), got {p}; for p "
                            f"computed at run time, pass shape= (a static tuple)")
        if _rank_of(p) is None or _rank_of(p) < 1:
            raise ValueError(f"{name}: p must have at least one dimension, got {p}")
        return
    p_shape = _shape_of(p)
    if p_shape is None or len(p_shape) < 1:
        raise ValueError(f"{name}: p must have at least one dimension (the outcomes), got "
                         f"shape {p_shape}")
    shape = p_shape if shape is None else canonical_shape(name, shape)
    if len(shape) < 1:
        raise ValueError(f"{name}: shape must have at least one dimension (the outcomes)")
    check_broadcast(name, shape, p_shape)
    n_shape = _shape_of(n)
    if n_shape is not None:
        check_broadcast(name, shape[:-1], n_shape)
