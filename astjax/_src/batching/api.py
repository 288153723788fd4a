"""``vmap``: batching as a source rewrite (see transform.py), with JAX's API.

``vmap(f, in_axes, out_axes)`` stands, at each argument signature, for a generated
function: ``f_batched`` itself when every mapped axis is 0, else a small wrapper
``f_vmap`` that moves the mapped axes to the front, calls ``f_batched`` and moves the
outputs' batch axes to ``out_axes``. Like grad and jit it is a transform object, so
compiled code can call it and it composes: ``jit(vmap(f))``, ``vmap(grad(f))``,
``grad(vmap(...))``, ``vmap(vmap(f))``.
"""
import numpy as np

from ..api import Jitted
from ..ir.trees import container_source, namespace_ref
from ..ir.types import (ArrayType, SequenceType, Static, TreeType, keyed_children,
                        type_of_value)
from . import batched as bt_
from .transform import batched_function


def keyword_call(fun, in_axes, n, keywords):
    """A call ``fun(a0, .., a{n-1}, k=..)`` of a mapped function as a function of positional
    arguments (``def f(_a0, k): return fun(_a0, k=k)``) and its in_axes: as in JAX, keyword
    arguments are mapped along axis 0; a parameter the call skips keeps its default."""
    from ..frontend.partials import keyword_call_function
    axes = tuple(in_axes[:n]) if isinstance(in_axes, tuple) else (in_axes,) * n
    return keyword_call_function(fun, n, keywords), axes + (0,) * len(keywords)


class Vmapped(Jitted):
    """``vmap(fun, in_axes, out_axes, axis_name, axis_size)``."""

    def __init__(self, fun, in_axes=0, out_axes=0, axis_name=None, axis_size=None):
        super().__init__(fun)
        if isinstance(in_axes, list):
            in_axes = tuple(in_axes)  # as JAX does for a list at the top level
        _check_axes_spec(in_axes, "in_axes")
        _check_axes_spec(out_axes, "out_axes")
        if axis_size is not None and (not isinstance(axis_size, (int, np.integer)) or
                                      isinstance(axis_size, bool) or axis_size < 0):
            raise TypeError(f"vmap axis_size must be a non-negative int, got {axis_size!r}")
        self.in_axes, self.out_axes = in_axes, out_axes
        self.axis_name, self.axis_size = axis_name, axis_size
        self.generated = {}

    def __repr__(self):  # shown in generated source (a static argument's type)
        return f"vmap({getattr(self.fun, '__name__', self.fun)}, in_axes={self.in_axes!r})"

    def backend_now(self):
        """Outside jit, vmap runs generated NumPy code (as grad does): no compile wait."""
        return "python"

    def __call__(self, *args, **kwargs):
        if kwargs:  # as in JAX, keyword arguments are mapped along axis 0
            return self._with_keywords(args, kwargs)
        self._check_sizes(args)
        compiled, values = self.compiled_for(args, {})
        return compiled.run(values)

    def _with_keywords(self, args, kwargs):
        self.bind(args, kwargs)  # Python's errors for the call
        return self.keyword_variant(len(args), tuple(kwargs))(*args, *kwargs.values())

    def keyword_variant(self, n_positional, keywords):
        """This vmap for calls with ``n_positional`` arguments and then ``keywords``, all
        passed by position (compiled code calls it so too)."""
        key = ("kwargs", n_positional, keywords)
        derived = self.generated.get(key)
        if derived is None:
            fun, in_axes = keyword_call(self.fun, self.in_axes, n_positional, keywords)
            derived = self.generated[key] = Vmapped(fun, in_axes, self.out_axes,
                                                    self.axis_name, self.axis_size)
        return derived

    # --- checks on concrete arguments (JAX's errors) ---------------------------------------
    def _check_sizes(self, args):
        """JAX's errors for mapped axes of different sizes; returns the mapped size."""
        types_ = [_value_type(a) for a in args]
        axes = _arg_axes(self.in_axes, types_, self.fun)
        sizes = []  # (size, description)
        names = list(self.signature.parameters)
        for k, (arg, t, ax) in enumerate(zip(args, types_, axes)):
            label = names[k] if k < len(names) else f"{k}"
            for path, leaf_t, leaf_ax in _leaf_axes(t, ax):
                if leaf_ax is None:
                    continue
                value = _path_value(arg, path)
                shape = np.shape(value)
                where = "argument " + label + "".join(f"[{p!r}]" for p in path)
                axis = _normalize_in_axis(leaf_ax, len(shape), shape)
                dtype = _dtype_name(value)
                dims = ",".join(str(d) for d in shape)
                sizes.append((shape[axis], f"axis {axis} of {where} of type {dtype}[{dims}]"))
        if self.axis_size is not None:
            if sizes and any(n != self.axis_size for n, _ in sizes):
                raise ValueError(f"vmap got inconsistent sizes for array axes to be mapped: "
                                 f"axis_size is {self.axis_size} but "
                                 + "; ".join(f"{d} has size {n}" for n, d in sizes))
            return self.axis_size
        if not sizes:
            raise ValueError("vmap must have at least one non-None value in in_axes")
        distinct = sorted({n for n, _ in sizes})
        if len(distinct) > 1:
            lines = []
            counts = {n: [d for m, d in sizes if m == n] for n in distinct}
            order = sorted(distinct, key=lambda n: -len(counts[n]))
            for n in order:
                ds = counts[n]
                if len(ds) == 1:
                    lines.append(f"  * one axis had size {n}: {ds[0]}")
                else:
                    lines.append(f"  * most axes ({len(ds)} of them) had size {n}, e.g. {ds[0]}"
                                 if n == order[0] else
                                 f"  * some axes ({len(ds)} of them) had size {n}, e.g. {ds[0]}")
            raise ValueError("vmap got inconsistent sizes for array axes to be mapped:\n"
                             + ";\n".join(lines))
        return distinct[0]

    # --- the generated function --------------------------------------------------------------
    def function_for(self, arg_types, program):
        key = (arg_types, id(program))
        hit = self.generated.get(key)
        if hit is not None:
            return hit
        fn = self._function_for(arg_types, program)
        self.generated[key] = fn
        return fn

    def _function_for(self, arg_types, program):
        axes = _arg_axes(self.in_axes, arg_types, self.fun)
        per_example, arg_bt, moves, one = [], [], [], None
        for k, (t, ax) in enumerate(zip(arg_types, axes)):
            pe, b, mv, o = _unbatch(t, ax, k)
            per_example.append(pe)
            arg_bt.append(b)
            moves.append(mv)
            if o is not None:
                one = o if one is None else (one and o)
        per_example = tuple(per_example)
        inner = self.fun
        from . import collectives
        if self.axis_name is not None:  # collectives naming it may be called in there
            collectives._ACTIVE.append(self.axis_name)
        try:
            return self._batched(inner, per_example, arg_bt, moves, one, program)
        finally:
            if self.axis_name is not None:
                collectives._ACTIVE.pop()

    def _batched(self, inner, per_example, arg_bt, moves, one, program):
        fn = inner.function_for(per_example, program) if hasattr(inner, "function_for") \
            else inner
        spec = program.specialize(fn, per_example)
        out_t = bt_.unwrap(spec.return_type)
        out_axes = _out_leaf_axes(self.out_axes, out_t)
        want = _want(out_t, out_axes)
        params = [a.id for a in spec.fdef.args.args]
        size = None
        if not any(bt_.any_(b) for b in arg_bt):  # only axis_size: outputs are broadcast
            if self.axis_size is None:
                raise ValueError("vmap must have at least one non-None value in in_axes")
            size, one = self.axis_size, self.axis_size == 1
        batched_fn, out_bt, _ = batched_function(spec, arg_bt, want, bool(one),
                                                 self.axis_name, size)
        for path, ax, leaf_b in _zip_out(out_t, out_axes, out_bt):
            if ax is None and leaf_b:
                raise ValueError("vmap has mapped output but out_axes is None")
        trivial = all(mv is None for mv in moves) and all(
            ax in (0, None) for _, ax, _ in _zip_out(out_t, out_axes, out_bt))
        if trivial:
            return batched_fn
        return self._wrapper(spec, params, moves, out_bt, out_t, want, out_axes, batched_fn)

    def _wrapper(self, spec, params, moves, out_bt, out_t, want, out_axes, target):
        """``f_vmap``: batch axes to the front, the batched call, batch axes to out_axes."""
        from ..frontend.naming import Names
        names = Names(spec.fdef)
        names.used |= set(params)
        ops = "_jnp"
        callee = "_batched"
        from .transform import OPS
        namespace = {ops: OPS, callee: target}
        ref = namespace_ref(namespace)
        lines = []
        args = []
        for p, mv in zip(params, moves):
            if mv is None:
                args.append(p)
                continue
            text = _move_text(p, mv[0], mv[1], ops, ref)
            name = names.fresh(f"{p}_moved")
            lines.append(f"{name} = {text}")
            args.append(name)
        r = names.fresh("out")
        lines.append(f"{r} = {callee}({', '.join(args)})")
        result = _out_text(r, out_t, out_axes, ops, names, lines, ref)
        body = "\n".join(f"    {line}" for line in lines)
        name = f"{spec.name}_vmap"
        source = f"def {name}({', '.join(params)}):\n{body}\n    return {result}\n"
        from ..frontend.synthetic import from_source
        from .transform import _keep_defaults
        wrapper = from_source(name, source, namespace, spec.parsed)
        _keep_defaults(wrapper, spec.fn)  # vmap(vmap(jnp.sum, 1))(x) binds sum's defaults
        return wrapper


class _VmapFunction:
    """``vmap`` itself. Not a plain function, so that ``vmap(f, ...)`` written inside a
    compiled function is evaluated when that function is compiled (its arguments are
    constants there) rather than compiled as code."""

    def __call__(self, fun, in_axes=0, out_axes=0, axis_name=None, axis_size=None,
                 spmd_axis_name=None):
        """Vectorize ``fun`` over a batch axis of its arguments (JAX's ``vmap``).

        ``in_axes``: an int, None, or a tuple with one entry per positional argument, each
        an int, None or a pytree prefix of that argument (negative axes count from the
        end). ``out_axes`` likewise for the output. ``axis_size`` gives the batch size when
        no argument is mapped. ``axis_name`` names the batch axis for the collectives
        (``psum``, ``pmean``, ``pmax``, ``pmin``, ``all_gather``, ``axis_index``) called
        inside ``fun``.
        """
        if not callable(fun):
            raise TypeError(f"vmap expects a callable, got {fun!r}")
        if axis_name is not None and not isinstance(axis_name, str):
            raise TypeError(f"vmap axis_name must be a str, got {axis_name!r}")
        return Vmapped(fun, in_axes, out_axes, axis_name, axis_size)

    def __repr__(self):
        return "<function astjax.vmap>"


vmap = _VmapFunction()
vmap.__doc__ = _VmapFunction.__call__.__doc__
vmap.__name__ = vmap.__qualname__ = "vmap"


# --- axis specifications ---------------------------------------------------------------------

def _check_axes_spec(spec, what):
    from ..tree_util import tree_leaves
    leaves = tree_leaves(spec, is_leaf=lambda x: x is None)
    for leaf in leaves:
        if leaf is not None and (not isinstance(leaf, (int, np.integer)) or
                                 isinstance(leaf, bool)):
            raise ValueError(f"vmap {what} must be an int, None, or (nested) container with "
                             f"those types as leaves, but got {spec}.")


def _value_type(value):
    try:
        return type_of_value(value)
    except TypeError as e:
        raise TypeError(f"vmap: {e}") from None


def _arg_axes(in_axes, arg_types, fun):
    """The in_axes entry of each argument. Arguments the caller left to their defaults come
    last, as constants (Static): they are not mapped."""
    passed = len(arg_types)
    while passed and isinstance(arg_types[passed - 1], Static) and not (
            isinstance(in_axes, tuple) and len(in_axes) >= passed):
        passed -= 1
    if passed < len(arg_types):
        return _arg_axes(in_axes, arg_types[:passed], fun) + [None] * (len(arg_types) - passed)
    if isinstance(in_axes, tuple) and not hasattr(in_axes, "_fields"):
        if len(in_axes) != len(arg_types):
            raise ValueError(
                f"vmap in_axes must be an int, None, or a tuple of entries corresponding to "
                f"the positional arguments passed to the function, but got "
                f"len(in_axes)={len(in_axes)}, len(args)={len(arg_types)}")
        return list(in_axes)
    if in_axes is None or isinstance(in_axes, (int, np.integer)):
        return [in_axes] * len(arg_types)
    raise ValueError(f"vmap in_axes must be an int, None, or a tuple of entries corresponding "
                     f"to the positional arguments passed to the function, but got {in_axes}.")


def _leaf_axes(t, spec, path=()):
    """``(path, leaf type, axis)`` for each array leaf of an argument of type ``t``."""
    t = bt_.unwrap(t)
    if spec is None or isinstance(spec, (int, np.integer)):
        if isinstance(t, (SequenceType, TreeType)):
            for key, c in keyed_children(t):
                yield from _leaf_axes(c, spec, path + (key,))
        elif isinstance(t, ArrayType):
            yield path, t, spec
        elif spec is not None and not (isinstance(t, Static) and t.value is None):
            raise ValueError(f"vmap was requested to map its argument along axis {spec}, "
                             f"which implies that its rank should be at least {spec + 1}, "
                             f"but it is {t}")
        return
    for (key, c), s in zip(keyed_children(t), _spec_children(spec, t)):
        yield from _leaf_axes(c, s, path + (key,))


def _spec_children(spec, t, what="in_axes"):
    """The children of an axes spec matching the container type ``t``, or JAX's error."""
    if isinstance(t, SequenceType) and isinstance(spec, (tuple, list)) and \
            not hasattr(spec, "_fields") and len(spec) == len(t.elts):
        return list(spec)
    if isinstance(t, TreeType):
        if t.node_type is dict and isinstance(spec, dict) and sorted(spec) == list(t.keys):
            return [spec[k] for k in t.keys]
        if type(spec) is t.node_type:
            from ..tree_util import flatten_one_level
            node = flatten_one_level(spec)
            if node is not None and tuple(node[1]) == tuple(t.keys):
                return list(node[0])
    raise ValueError(f"vmap {what} specification must be a tree prefix of the corresponding "
                     f"value, got specification {spec!r} for value tree {t}.")


def _normalize_in_axis(ax, ndim, shape=None):
    if not -ndim <= ax < ndim:
        extra = f" (its shape is {tuple(shape)})" if shape is not None else ""
        raise ValueError(f"vmap was requested to map its argument along axis {ax}, which "
                         f"implies that its rank should be at least "
                         f"{(ax + 1) if ax >= 0 else -ax}, but is only {ndim}{extra}")
    return ax % ndim


def _unbatch(t, spec, k):
    """(per-example type, bt, moves, batch-dim-known-1) of argument ``k``.

    ``moves``: None when every mapped leaf has its batch axis first, else
    ``[(path, axis)]`` of the leaves whose axis must move, with the first mapped leaf.
    """
    t = bt_.unwrap(t)
    leaves = list(_leaf_axes(t, spec))
    axes = {}
    one = None
    for path, leaf_t, ax in leaves:
        if ax is None:
            continue
        a = _normalize_in_axis(ax, leaf_t.ndim)
        axes[path] = a
        one = leaf_t.ones[a] if one is None else (one and leaf_t.ones[a])

    def strip(t, path):
        t = bt_.unwrap(t)
        if isinstance(t, SequenceType):
            elts = [strip(e, path + (i,)) for i, e in enumerate(t.elts)]
            return SequenceType(tuple(e[0] for e in elts), t.kind), tuple(e[1] for e in elts)
        if isinstance(t, TreeType):
            kids = [strip(c, path + (key,)) for key, c in zip(t.keys, t.children)]
            return (TreeType(t.node_type, t.aux, t.keys, tuple(c[0] for c in kids)),
                    tuple(c[1] for c in kids))
        if isinstance(t, ArrayType) and path in axes:
            a = axes[path]
            return ArrayType(t.dtype, t.ones[:a] + t.ones[a + 1:], t.weak), True
        return t, False

    pe, b = strip(t, ())
    moving = [(path, a) for path, a in axes.items() if a != 0]
    if moving:
        return pe, b, (t, dict(moving)), one
    return pe, b, None, one


def _move_text(text, t, moves, ops, ref, path=()):
    """Source for an argument (type ``t``) with its mapped axes moved to the front."""
    if path in moves:
        return f"{ops}.moveaxis({text}, {moves[path]}, 0)"
    if not any(p[:len(path)] == path for p in moves):
        return text
    t = bt_.unwrap(t)
    parts = [_move_text(f"{text}[{key!r}]", c, moves, ops, ref, path + (key,))
             for key, c in keyed_children(t)]
    return container_source(t, parts, ref)


def _out_leaf_axes(spec, t, path=()):
    """{path: axis or None} for every numeric leaf of the output (type ``t``)."""
    out = {}
    t = bt_.unwrap(t)
    if spec is None or isinstance(spec, (int, np.integer)):
        for p, leaf in _numeric_leaves(t, path):
            out[p] = spec
        return out
    if isinstance(t, SequenceType) and isinstance(spec, (tuple, list)) and \
            len(spec) == len(t.elts):
        for k, (e, s) in enumerate(zip(t.elts, spec)):
            out.update(_out_leaf_axes(s, e, path + (k,)))
        return out
    if isinstance(t, TreeType) and (isinstance(spec, dict) or type(spec) is t.node_type):
        for key, c, s in zip(t.keys, t.children, _spec_children(spec, t, "out_axes")):
            out.update(_out_leaf_axes(s, c, path + (key,)))
        return out
    raise ValueError(f"vmap out_axes specification must be a tree prefix of the corresponding "
                     f"value, got specification {spec!r} for value tree {t}.")


def _numeric_leaves(t, path=()):
    t = bt_.unwrap(t)
    pairs = keyed_children(t)
    if pairs is not None:
        for key, c in pairs:
            yield from _numeric_leaves(c, path + (key,))
    elif isinstance(t, ArrayType) or (isinstance(t, Static) and bt_.is_array_like(t)):
        yield path, t


def _want(t, out_axes, path=()):
    """The bt the batched function must return: leaves with an out axis are batched
    (numbers included); leaves with out_axes None are left as they are."""
    t = bt_.unwrap(t)
    pairs = keyed_children(t)
    if pairs is not None:
        return tuple(_want(c, out_axes, path + (key,)) for key, c in pairs)
    if path in out_axes:
        return out_axes[path] is not None
    return False


def _zip_out(t, out_axes, out_bt, path=()):
    t = bt_.unwrap(t)
    pairs = keyed_children(t)
    if pairs is not None:
        for k, (key, c) in enumerate(pairs):
            yield from _zip_out(c, out_axes, bt_.child(out_bt, k), path + (key,))
    elif path in out_axes:
        yield path, out_axes[path], bool(bt_.any_(out_bt))


def _out_text(r, t, out_axes, ops, names, lines, ref, path=()):
    """Source of the vmapped output from the batched function's result ``r`` (its mapped
    leaves batched, batch axis first): each batch axis moved to its out_axes position."""
    t = bt_.unwrap(t)
    text = r
    for key in path:
        text = f"{text}[{key!r}]"
    pairs = keyed_children(t)
    if pairs is not None:
        parts = [_out_text(r, c, out_axes, ops, names, lines, ref, path + (key,))
                 for key, c in pairs]
        return container_source(t, parts, ref)
    ax = out_axes.get(path)
    if ax is None:
        return text
    a = _normalize_out_axis(ax, bt_.rank(t) + 1)
    if a != 0:
        name = names.fresh("o")
        lines.append(f"{name} = {ops}.moveaxis({text}, 0, {a})")
        text = name
    return text


def _normalize_out_axis(ax, ndim):
    if not -ndim <= ax < ndim:
        raise ValueError(f"vmap out_axes {ax} is out of bounds for an output of rank {ndim}")
    return ax % ndim


def _path_value(value, path):
    for key in path:
        if isinstance(value, dict):
            value = value[key]
        elif isinstance(value, (tuple, list)) and not hasattr(value, "_fields"):
            value = value[key]
        else:
            from ..tree_util import flatten_one_level
            kids, keys, _ = flatten_one_level(value)
            value = kids[list(keys).index(key)]
    return value


def _dtype_name(value):
    t = _value_type(value)
    return str(t.dtype) if isinstance(t, ArrayType) else type(value).__name__


