"""``vectorize``, ``apply_along_axis``, ``apply_over_axes``, ``broadcast_shapes`` and
``kaiser``, as JAX 0.10.2 defines them: ``vectorize`` and ``apply_along_axis`` are ``vmap``
applied once per mapped axis.

Called eagerly, ``vectorize`` is JAX's algorithm (size-1 loop dimensions are squeezed and
mapped with ``in_axes`` None). Called from compiled code, where array sizes are run-time
values, the function it stands for is generated for the argument types: the loop
dimensions are broadcast with ``broadcast_to`` and one ``vmap`` per loop dimension is
applied (excluded arguments known when code is generated are bound into the function,
others are passed unmapped).
"""
import functools
import inspect
import re

import numpy as np

import astjax.numpy as jnp

from .._src.errors import at_user_call
from .._src.ir.types import ArrayType, SequenceType, Static
from .._src.lax.common import LaxFunction, synthesize
from .._src.random.checks import static_helper  # evaluated while generating code
from .._src.runtime.array import Array
from ._setops import _static_arg
from ._sorting import _normalize_axis

__all__ = ["vectorize", "apply_along_axis", "apply_over_axes", "broadcast_shapes", "kaiser"]


# ---- broadcast_shapes -------------------------------------------------------------------

def _known_broadcast_shapes(*shapes):
    shapes = [tuple(int(d) for d in s) if isinstance(s, (tuple, list)) else (int(s),)
              for s in shapes]
    if not shapes:
        return ()
    try:
        return tuple(int(d) for d in np.broadcast_shapes(*shapes))
    except ValueError:
        raise ValueError(f"Incompatible shapes for broadcasting: shapes={shapes}") from None


def _rank(t):
    if isinstance(t, SequenceType):
        return len(t.elts)
    if isinstance(t, Static) and isinstance(t.value, (tuple, list)):
        return len(t.value)
    return None  # one size: a 1-D shape


def _run_time_broadcast_shapes(*types):
    params = ", ".join(f"s{i}" for i in range(len(types)))
    if all(isinstance(t, Static) for t in types):  # the shape, found while generating code
        try:
            value = _known_broadcast_shapes(*[t.value for t in types])
        except (TypeError, ValueError) as e:
            raise at_user_call(e) from None
        return synthesize("broadcast_shapes", f"def broadcast_shapes({params}):\n"
                          f"    return {value!r}\n", _known_broadcast_shapes)
    # sizes known at run time only: each output size from the right, as the largest one
    # (0 if one is 0). Not checked: a raise decided by the sizes of a shape passed in is
    # refused in compiled code (astjax.numpy functions' broadcasts check them when they run)
    ranks = [_rank(t) for t in types]
    shapes = [f"s{i}" if r is not None else f"(s{i},)" for i, r in enumerate(ranks)]
    ranks = [1 if r is None else r for r in ranks]
    n = max(ranks)
    lines = [f"def broadcast_shapes({params}):"]
    for j in range(n):
        lines.append(f"    d{j} = 1")
        for shape, r in zip(shapes, ranks):
            if j >= n - r:
                size = f"{shape}[{j - n + r}]"
                lines.append(f"    d{j} = max(d{j}, {size}) * min(d{j}, {size}, 1)")
    lines.append(f"    return ({''.join(f'd{j}, ' for j in range(n))})")
    return synthesize("broadcast_shapes", "\n".join(lines) + "\n", _known_broadcast_shapes)


broadcast_shapes = LaxFunction(_known_broadcast_shapes, _run_time_broadcast_shapes)
broadcast_shapes.__name__ = "broadcast_shapes"
broadcast_shapes.__doc__ = "The shape arrays of the given shapes broadcast to, as JAX's."


# ---- kaiser -----------------------------------------------------------------------------

@static_helper
def _check_window_length(M):
    if not isinstance(M, (int, np.integer)):
        raise TypeError(f"kaiser(): M must be an integer, got {M!r}")
    return int(M)


def kaiser(M, beta):
    """The Kaiser window of ``M`` points, as ``jax.numpy.kaiser`` (float32 by default)."""
    M = _check_window_length(_static_arg(M, "M", "kaiser"))
    if M <= 1:
        return jnp.ones(M, dtype=jnp.result_type(float))
    n = jnp.arange(0, M, dtype=jnp.result_type(float))
    alpha = 0.5 * (M - 1)
    return jnp.i0(beta * jnp.sqrt(1 - ((n - alpha) / alpha) ** 2)) / jnp.i0(
        jnp.asarray(beta, dtype=jnp.result_type(float)))


# ---- vectorize --------------------------------------------------------------------------

_DIMENSION_NAME = r"\w+"
_CORE_DIMENSION_LIST = "(?:{0:}(?:,{0:})*)?".format(_DIMENSION_NAME)
_ARGUMENT = rf"\({_CORE_DIMENSION_LIST}\)"
_ARGUMENT_LIST = "{0:}(?:,{0:})*".format(_ARGUMENT)
_SIGNATURE = "^{0:}->{0:}$".format(_ARGUMENT_LIST)


def _parse_gufunc_signature(signature):
    """([core dims of each input], [core dims of each output]), as NumPy's."""
    if not re.match(_SIGNATURE, signature):
        raise ValueError(f"not a valid gufunc signature: {signature}")
    args, retvals = ([tuple(re.findall(_DIMENSION_NAME, arg))
                      for arg in re.findall(_ARGUMENT, arg_list)]
                     for arg_list in signature.split("->"))
    return args, retvals


def _batched(fn, in_axes, times):
    for _ in range(times):
        fn = _vmap(fn, in_axes)
    return fn


def _vmap(fn, in_axes, out_axes=0):
    from astjax import vmap
    return vmap(fn, in_axes=in_axes, out_axes=out_axes)


def _update_dim_sizes(dim_sizes, shape, core_dims, error_context, is_input):
    num_core_dims = len(core_dims)
    if is_input:
        if len(shape) < num_core_dims:
            raise ValueError(
                f"input with shape {shape!r} does not have enough dimensions for all core "
                f"dimensions {core_dims!r} {error_context}")
    elif len(shape) != num_core_dims:
        raise ValueError(f"output shape {shape!r} does not match core dimensions "
                         f"{core_dims!r} {error_context}")
    core_shape = shape[-num_core_dims:] if core_dims else ()
    for dim, size in zip(core_dims, core_shape):
        if dim not in dim_sizes:
            dim_sizes[dim] = size
        elif size != dim_sizes[dim]:
            raise ValueError(f"inconsistent size for core dimension {dim!r}: {size} vs "
                             f"{dim_sizes[dim]} {error_context}")


class _Vectorized:
    """What ``vectorize(pyfunc, ...)`` returns."""

    def __init__(self, pyfunc, excluded, signature):
        functools.update_wrapper(self, pyfunc)
        self.pyfunc, self.excluded, self.signature = pyfunc, frozenset(excluded), signature
        self.__signature__ = inspect.Signature(
            [inspect.Parameter("args", inspect.Parameter.VAR_POSITIONAL),
             inspect.Parameter("kwargs", inspect.Parameter.VAR_KEYWORD)])
        self.error_context = (f"on vectorized function with excluded={excluded!r} and "
                              f"signature={signature!r}")

    def __repr__(self):
        return f"<vectorized {getattr(self.pyfunc, '__name__', self.pyfunc)!r}>"

    def _core_dims(self, nargs):
        if self.signature is None:
            return [()] * nargs, None
        ins, outs = _parse_gufunc_signature(self.signature)
        if len(ins) != nargs:
            raise TypeError(f"wrong number of positional arguments: expected {len(ins)}, "
                            f"got {nargs} {self.error_context}")
        return ins, outs

    def __call__(self, *args, **kwargs):
        # keywords not excluded are mapped as NumPy's vectorize maps them: inputs after the
        # positional ones (JAX 0.10.2 drops them: it computes them and never passes them)
        names = [k for k in kwargs if k not in self.excluded]
        pyfunc = functools.partial(self.pyfunc, **{k: v for k, v in kwargs.items()
                                                   if k in self.excluded})
        if names:
            pyfunc = _keywords_last(pyfunc, len(args), names)
        excluded = [i for i in self.excluded if isinstance(i, int) and i < len(args)]
        args = args + tuple(kwargs[k] for k in names)
        # excluded arrays are passed unmapped (in_axes None), other excluded values bound
        fn, rest = _bind(pyfunc, args, excluded,
                         lambda a: not isinstance(a, (Array, np.ndarray)))
        passed = [args[i] for i in rest]
        mapped = [k for k, i in enumerate(rest) if i not in excluded]
        for k in mapped:
            passed[k] = jnp.asarray(passed[k])
        in_core, out_core = self._core_dims(len(mapped))
        in_core = dict(zip(mapped, in_core))
        dim_sizes, shapes = {}, []
        for k in mapped:
            a, core = passed[k], in_core[k]
            _update_dim_sizes(dim_sizes, a.shape, core, self.error_context, True)
            shapes.append(a.shape[:a.ndim - len(core)])
        broadcast_shape = _known_broadcast_shapes(*shapes)
        rev_filled = {}
        for k in mapped:
            a, core = passed[k], in_core[k]
            noncore = a.shape[:a.ndim - len(core)]
            rev_filled[k] = ((len(broadcast_shape) - len(noncore)) * (1,) + noncore)[::-1]
            passed[k] = jnp.squeeze(a, axis=tuple(
                i for i, size in enumerate(noncore) if size == 1))
        checked = fn
        expand = []
        for negdim in range(len(broadcast_shape)):
            in_axes = tuple(0 if k in rev_filled and rev_filled[k][negdim] != 1 else None
                            for k in range(len(passed)))
            if all(axis is None for axis in in_axes):
                expand.append(len(broadcast_shape) - 1 - negdim)
            else:
                checked = _vmap(checked, in_axes)
        result = checked(*passed)
        if expand:
            result = (tuple(jnp.expand_dims(r, axis=expand) for r in result)
                      if isinstance(result, tuple) else jnp.expand_dims(result, axis=expand))
        if out_core is not None:
            self._check_outputs(result, len(broadcast_shape), dim_sizes, out_core)
        return result

    def _check_outputs(self, result, batch_ndim, dim_sizes, out_core):
        """JAX's checks of pyfunc's outputs against the signature, made here on the mapped
        result (its trailing dimensions are one call's)."""
        if len(out_core) > 1 and not isinstance(result, tuple):
            raise TypeError(f"output must be a tuple when multiple outputs are expected, "
                            f"got: {result!r}\n{self.error_context}")
        outs = result if isinstance(result, tuple) else (result,)
        if len(outs) != len(out_core):
            raise TypeError(f"wrong number of output arguments: expected {len(out_core)}, "
                            f"got {len(outs)} {self.error_context}")
        sizes = dict(dim_sizes)
        for o, core in zip(outs, out_core):
            _update_dim_sizes(sizes, jnp.shape(o)[batch_ndim:], core, self.error_context,
                              False)

    def function_for(self, arg_types, program, keywords=()):
        """The function a call from compiled code stands for, at these argument types (the
        last ones those of the keyword arguments ``keywords``)."""
        try:
            return self._function_for(arg_types, keywords)
        except (TypeError, ValueError, NotImplementedError) as e:
            raise at_user_call(e) from None

    def _function_for(self, arg_types, keywords):
        npos = len(arg_types) - len(keywords)
        excluded = {i for i in self.excluded if isinstance(i, int) and i < npos}
        excluded |= {npos + j for j, k in enumerate(keywords) if k in self.excluded}
        pyfunc = _keywords_last(self.pyfunc, npos, keywords) if keywords else self.pyfunc
        fn, rest = _bind(pyfunc, arg_types, excluded, lambda t: isinstance(t, Static))
        mapped = [i for i in rest if i not in excluded]
        in_core = dict(zip(mapped, self._core_dims(len(mapped))[0]))
        batch_ndims = {}
        for i in mapped:
            t = arg_types[i]
            ndim = t.ndim if isinstance(t, ArrayType) else np.ndim(getattr(t, "value", 0))
            if ndim < len(in_core[i]):
                raise ValueError(
                    f"input with {ndim} dimensions does not have enough dimensions for all "
                    f"core dimensions {in_core[i]!r} {self.error_context}")
            batch_ndims[i] = ndim - len(in_core[i])
        nb = max(batch_ndims.values(), default=0)
        params = ", ".join([f"a{i}" for i in range(npos)] + list(keywords))
        lines = [f"def vectorized({params}):"]
        if keywords:  # (passed by name)
            lines.append("    {}, = {},".format(", ".join(
                f"a{i}" for i in range(npos, len(arg_types))), ", ".join(keywords)))
        for i in mapped:
            lines.append(f"    a{i} = _jnp.asarray(a{i})")
        lines.append("    _s = _jnp.broadcast_shapes({})".format("".join(
            f"_jnp.shape(a{i})[:{batch_ndims[i]}], " for i in mapped)))
        for i in mapped:
            lines.append(f"    a{i} = _jnp.broadcast_to(a{i}, _s + _jnp.shape(a{i})"
                         f"[{batch_ndims[i]}:])")
        lines.append("    return _f({})".format(", ".join(f"a{i}" for i in rest)))
        in_axes = tuple(0 if i in mapped else None for i in rest)
        return synthesize("vectorized", "\n".join(lines) + "\n", _run,
                          {"_f": _batched(fn, in_axes, nb) if nb else fn})


def _keywords_last(fn, npos, names):
    """``fn`` taking the keyword arguments ``names`` after its ``npos`` positional ones."""
    params = [f"a{i}" for i in range(npos + len(names))]
    call = params[:npos] + [f"{k}={a}" for k, a in zip(names, params[npos:])]
    return synthesize("keywords_last", f"def keywords_last({', '.join(params)}):\n"
                      f"    return _fn({', '.join(call)})\n", _run, {"_fn": fn})


def _bind(fn, args, candidates, is_static):
    """``fn`` with the arguments at positions ``candidates`` that ``is_static`` accepts bound
    (a generated function), and the positions of the others."""
    fixed = {i: a.value if isinstance(a, Static) else a for i, a in enumerate(args)
             if i in candidates and is_static(a)}
    rest = [i for i in range(len(args)) if i not in fixed]
    if not fixed:
        return fn, rest
    params = ", ".join(f"a{i}" for i in rest)
    call = ", ".join(f"_e{i}" if i in fixed else f"a{i}" for i in range(len(args)))
    namespace = {f"_e{i}": v for i, v in fixed.items()}
    namespace["_fn"] = fn
    return synthesize("bound", f"def bound({params}):\n    return _fn({call})\n", _run,
                      namespace), rest


def _run():
    """Where the functions ``vectorize`` generates for compiled code come from."""


# ---- apply_along_axis, apply_over_axes ----------------------------------------------------

def _along_axis(func1d, axis, ndim, args, is_static):
    """func1d(arr, *args) mapped over every axis of an ``ndim``-dimensional arr but
    ``axis``, as JAX's apply_along_axis; the extra arguments are not mapped."""
    axis = _normalize_axis(axis, ndim, "apply_along_axis")
    fn, rest = _bind(func1d, (None,) + tuple(args), range(1, len(args) + 1), is_static)
    for i in range(1, ndim - axis):
        fn = _vmap(fn, (i,) + (None,) * (len(rest) - 1), out_axes=-1)
    for i in range(axis):
        fn = _vmap(fn, (0,) + (None,) * (len(rest) - 1))
    return fn, rest


def _apply_along_axis_eager(func1d, axis, arr, *args, **kwargs):
    if kwargs:
        func1d = functools.partial(func1d, **kwargs)
    arr = jnp.asarray(arr)
    fn, rest = _along_axis(func1d, axis, arr.ndim, args,
                           lambda a: not isinstance(a, (Array, np.ndarray)))
    return fn(arr, *[args[i - 1] for i in rest[1:]])


def _apply_along_axis_lower(func1d, axis, arr, *args):
    try:
        return _apply_along_axis_function(func1d, axis, arr, *args)
    except (TypeError, ValueError, NotImplementedError) as e:
        raise at_user_call(e) from None


def _apply_along_axis_function(func1d, axis, arr, *args):
    if not isinstance(func1d, Static) or not isinstance(axis, Static):
        raise TypeError("apply_along_axis(): func1d and axis must be known when code is "
                        "generated")
    ndim = arr.ndim if isinstance(arr, ArrayType) else np.ndim(arr.value)
    fn, rest = _along_axis(func1d.value, axis.value, ndim, args,
                           lambda t: isinstance(t, Static))
    params = "".join(f", a{i}" for i in range(1, len(args) + 1))
    passed = "".join(f", a{i}" for i in rest[1:])
    return synthesize("apply_along_axis", f"def apply_along_axis(f, axis, a0{params}):\n"
                      f"    return _f(_jnp.asarray(a0){passed})\n", _run, {"_f": fn})


apply_along_axis = LaxFunction(_apply_along_axis_eager, _apply_along_axis_lower)
apply_along_axis.__signature__ = inspect.signature(_apply_along_axis_lower)
apply_along_axis.__doc__ = """``func1d(arr_1d, *args, **kwargs)`` applied to every 1-D slice of
``arr`` along ``axis`` (``vmap`` over the other axes), as ``jax.numpy.apply_along_axis``;
keyword arguments only eagerly."""


def apply_over_axes(func, a, axes):
    """``func(a, axis)`` applied for each axis in turn, keeping the rank (a result one
    dimension smaller gets it back as size 1), as ``jax.numpy.apply_over_axes``."""
    for axis in _as_tuple(axes):
        b = func(a, axis)
        if jnp.ndim(b) == jnp.ndim(a):
            a = b
        elif jnp.ndim(b) == jnp.ndim(a) - 1:
            a = jnp.expand_dims(b, axis)
        else:
            raise ValueError("function is not returning an array of the correct shape")
    return a


@static_helper
def _as_tuple(axes):
    return tuple(axes) if isinstance(axes, (tuple, list)) else (axes,)


@static_helper  # vectorize(g) in compiled code: made when code is generated, as vmap(g)
def vectorize(pyfunc, *, excluded=frozenset(), signature=None):
    """``pyfunc`` mapped over the leading (loop) dimensions of its arguments, broadcast
    together, as ``jax.numpy.vectorize``: with ``signature`` (``"(m,n),(n)->(m)"``) the
    trailing core dimensions are passed whole; ``excluded`` positions are passed as they are.
    """
    if any(not isinstance(e, (str, int)) for e in excluded):
        raise TypeError("jax.numpy.vectorize can only exclude integer or string arguments, "
                        f"but excluded={excluded!r}")
    if any(isinstance(e, int) and e < 0 for e in excluded):
        raise ValueError(f"excluded={excluded!r} contains negative numbers")
    return _Vectorized(pyfunc, excluded, signature)
