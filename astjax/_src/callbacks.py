"""``astjax.pure_callback``: a Python function computing values for compiled code.

Eagerly it is a call. In compiled code it is the ``pure_callback`` op, whose static
``PureCall`` (as debugging.DebugCall does for ``debug.callback``) rebuilds the arguments as
astjax Arrays, calls the function and hands back its results, checked against
``result_shape_dtypes`` and cast to their dtypes: on the python backend directly, on
Numba from an object-mode block declared with the result's type. Unlike
``debug_callback`` it has no effect: a result nobody reads is dead code, as in JAX.

Under vmap the op records, per enclosing vmap (outermost first), which leaves carry that
batch axis (``batched``, written by the batching rule below), and ``vmap_method`` says what
the function gets, as JAX's: "sequential" (one call per example, the results stacked),
"expand_dims" (one call; a leaf without a vmap's axis gets a size-1 axis there), or
"broadcast_all" (one call; such a leaf is broadcast to the batch size). Without one, vmap
raises JAX's NotImplementedError. Differentiating through it raises JAX's ValueError (not
where no tangent reaches it: a callback on ``stop_gradient(x)`` or ``floor(x)``).

``ShapeDtypeStruct(x.shape, x.dtype)`` in compiled code, with sizes known only at run time,
is a constant struct whose unknown sizes are None: the result's type needs its dtype, rank
and which sizes are 1, and only known sizes are checked.
"""
import numpy as np

from . import dtypes, tree_util
from .shapes_api import ShapeDtypeStruct

_METHODS = ("sequential", "sequential_unrolled", "expand_dims", "broadcast_all",
            "legacy_vectorized", None)
_NO_JVP = ("Pure callbacks do not support JVP. Please use `jax.custom_jvp` to use callbacks "
           "while taking gradients.")


def _check_method(vmap_method):
    if vmap_method not in _METHODS:
        raise ValueError(f"vmap_method must be on of the allowed methods {list(_METHODS)}, "
                         f"but got: {vmap_method}")


def pure_callback(callback, result_shape_dtypes, *args, sharding=None, vmap_method=None,
                  **kwargs):
    """``callback(*args, **kwargs)`` on astjax Arrays, its results checked against
    ``result_shape_dtypes`` (a pytree of ShapeDtypeStruct) and cast to their dtypes
    (``jax.pure_callback``)."""
    from .runtime.array import Array
    _check_method(vmap_method)
    structs, treedef = tree_util.tree_flatten(result_shape_dtypes)

    def as_array(x):
        return x if isinstance(x, Array) else Array(np.asarray(
            x, dtypes.python_scalar_dtype(x) if dtypes.is_python_scalar(x)
            else dtypes.canonicalize_dtype(np.asarray(x).dtype)))

    args, kwargs = tree_util.tree_map(as_array, (args, kwargs))
    out = _results(callback(*args, **kwargs), structs, ())
    return tree_util.tree_unflatten(treedef, [Array(v) for v in out])


def _results(out, structs, batch):
    """The callback's result leaves as NumPy arrays of the structs' dtypes, each checked to
    have shape ``batch + struct.shape`` (None: a size known only at run time)."""
    leaves = tree_util.tree_leaves(out)
    if len(leaves) != len(structs):
        raise RuntimeError(f"Mismatched number of outputs from callback. Expected: "
                           f"{len(structs)}, Actual: {len(leaves)}")
    values = []
    for k, (v, s) in enumerate(zip(leaves, structs)):
        v = np.asarray(v)
        want = tuple(batch) + tuple(s.shape)
        if len(v.shape) != len(want) or any(w is not None and w != d
                                            for w, d in zip(want, v.shape)):
            shown = tuple("?" if w is None else w for w in want)
            raise RuntimeError(f"Incorrect output shape for return value #{k}: Expected: "
                               f"{shown}, Actual: {v.shape}")
        values.append(v.astype(dtypes.canonicalize_dtype(s.dtype), copy=False))
    return values


class _RunTimeSizes(ShapeDtypeStruct):
    """A ShapeDtypeStruct made in compiled code of sizes known only at run time (None)."""

    def __init__(self, shape, dtype, weak_type=False):
        super().__init__((), dtype, weak_type=weak_type)
        self.shape = tuple(shape)


class PureCall:
    """What a ``pure_callback`` op calls: ``fn(*args, **kwargs)`` on arguments of
    ``types`` (positional ones, then the values of ``keywords``), results as ``structs``."""

    def __init__(self, fn, types, keywords, structs, treedef, vmap_method):
        self.fn, self.types, self.keywords = fn, types, keywords
        self.structs, self.treedef, self.vmap_method = structs, treedef, vmap_method
        self.__name__ = "pure_callback_" + getattr(fn, "__name__", "fn").strip("<>")

    def __deepcopy__(self, memo):  # a constant of the code (copied with a callee's body)
        return self

    def leaf_types(self, levels):
        """The results' array types under ``levels`` vmaps (their axes first)."""
        from .ir.types import ArrayType
        return [ArrayType(dtypes.canonicalize_dtype(s.dtype),
                          (False,) * levels + tuple(d == 1 for d in s.shape), s.weak_type)
                for s in self.structs]

    def out_type(self, levels):
        from .ir.types import type_of_value
        from .runtime.array import Array
        # (a value of each leaf's type, for the container types around them)
        examples = [Array(np.zeros((2,) * levels + tuple(1 if d == 1 else 2 for d in s.shape),
                                   dtypes.canonicalize_dtype(s.dtype)), s.weak_type)
                    for s in self.structs]
        return type_of_value(tree_util.tree_unflatten(self.treedef, examples))

    def __call__(self, args, batched):  # the python backend: containers are real
        from .debugging import _leaves
        values = [x for t, v in zip(self.types, args) for x in _leaves(t, v, False)]
        return tree_util.tree_unflatten(self.treedef, self._run_batched(values, batched))

    def from_numba(self, args, batched):  # containers are tuples of their children
        from .debugging import _leaves
        values = [x for t, v in zip(self.types, args) for x in _leaves(t, v, True)]
        # (np.ascontiguousarray makes a 0-d array 1-d: Numba's scalars are taken first)
        out = [np.ascontiguousarray(v) if v.ndim else v[()]
               for v in self._run_batched(values, batched)]
        return _as_numba_tree(self.out_type(len(batched)), iter(out))

    def _run_batched(self, values, batched):
        if not batched:
            return self._run(values, ())
        from .debugging import _flags
        # per leaf, per vmap: batched or not (a leaf's axes: its vmaps', outermost first)
        flags = list(zip(*[[f for t, b in zip(self.types, level) for f in _flags(t, b)]
                           for level in batched]))
        sizes = tuple(next((np.shape(v)[sum(fl[:k])] for v, fl in zip(values, flags) if fl[k]),
                           1) for k in range(len(batched)))
        if self.vmap_method in ("sequential", "sequential_unrolled"):
            return self._sequential(values, flags, sizes)
        if self.vmap_method in ("expand_dims", "broadcast_all", "legacy_vectorized"):
            full = []
            for v, fl in zip(values, flags):
                v = np.asarray(v)
                for k, f in enumerate(fl):
                    if not f:
                        v = np.expand_dims(v, k)
                if self.vmap_method == "broadcast_all":
                    v = np.broadcast_to(v, sizes + v.shape[len(sizes):])
                full.append(v)
            return self._run(full, sizes)
        raise NotImplementedError(  # (the batching rule refuses this earlier)
            f"vmap_method={self.vmap_method}")

    def _sequential(self, values, flags, sizes):
        """One call per example, the innermost vmap's index varying fastest."""
        import itertools
        outs = []
        for index in itertools.product(*[range(n) for n in sizes]):
            example = []
            for v, fl in zip(values, flags):
                for k in reversed(range(len(fl))):  # (inner axes first: outer ones stay put)
                    if fl[k]:
                        v = v[(slice(None),) * sum(fl[:k]) + (index[k],)]
                example.append(v)
            outs.append(self._run(example, ()))
        return [np.stack([o[j] for o in outs]).reshape(sizes + outs[0][j].shape)
                for j in range(len(self.structs))]

    def _run(self, values, batch):
        from .debugging import _build
        it = iter(values)
        args = [_build(t, it) for t in self.types]
        n = len(args) - len(self.keywords)
        out = self.fn(*args[:n], **dict(zip(self.keywords, args[n:])))
        return _results(out, self.structs, batch)


def _as_numba_tree(t, it):
    from .ir.types import SequenceType, Static, TreeType
    if isinstance(t, SequenceType):
        return tuple(_as_numba_tree(e, it) for e in t.elts)
    if isinstance(t, TreeType):
        return tuple(_as_numba_tree(c, it) for c in t.children)
    if isinstance(t, Static):
        return None
    return next(it)


def numba_type_text(t):
    """The Numba type, as objmode's annotation string, of a value of type ``t`` in Numba
    code (0-d arrays are scalars, containers tuples; see numba_cpu/boundary.py)."""
    from .ir.types import SequenceType, TreeType
    if isinstance(t, (SequenceType, TreeType)):
        kids = t.elts if isinstance(t, SequenceType) else t.children
        return "Tuple((" + "".join(numba_type_text(k) + ", " for k in kids) + "))"
    name = "boolean" if t.dtype == np.bool_ else t.dtype.name
    if t.ndim == 0:
        return name
    return f"{name}[{', '.join([':'] * (t.ndim - 1) + ['::1'])}]"


# --- typing: a call in compiled code becomes the op ---------------------------------------

def lower_call(typer, node, args, kwargs):
    """Type ``pure_callback(callback, result_shape_dtypes, *args, **kwargs)`` at ``node``."""
    import gast
    from .frontend.synthetic import SyntheticFunction
    from .ir import anno
    from .ir.infer import closure_function
    from .ir.types import UNKNOWN, SequenceType, Static
    from .lax.common import leaves
    from .ops.registry import REGISTRY
    name = "astjax.pure_callback"
    if any(k.arg is None for k in node.keywords) or len(node.args) < 2:
        raise typer.error(node, f"{name}(callback, result_shape_dtypes, *args, **kwargs) "
                          f"takes its callback and result shapes positionally")
    fn, structs_t = args[0], args[1]
    if isinstance(fn, Static) and _as_python(fn.value) is not None:
        fn = Static(_as_python(fn.value))  # a nested def or lambda of constants only
    if not isinstance(fn, Static) or closure_function(fn) is not None or \
            isinstance(fn.value, SyntheticFunction) or not callable(fn.value):
        raise typer.error(node, f"{name}(): the callback must be a Python function defined "
                          f"outside the compiled function, or a nested one that uses none "
                          f"of its variables (it runs as Python)")
    method = kwargs.get("vmap_method", Static(None))
    if not isinstance(method, Static) or not isinstance(kwargs.get("sharding", Static(None)),
                                                        Static):
        raise typer.error(node, f"{name}(): vmap_method and sharding must be constants")
    try:
        _check_method(method.value)
    except ValueError as e:
        raise typer.error(node, str(e)) from None
    if not isinstance(structs_t, Static):
        raise typer.error(node, f"{name}(): result_shape_dtypes must be ShapeDtypeStructs "
                          f"(pytrees of them) known when the code is generated")
    structs, treedef = tree_util.tree_flatten(structs_t.value)
    if not all(hasattr(s, "shape") and hasattr(s, "dtype") for s in structs):
        raise typer.error(node, f"{name}(): result_shape_dtypes must be a pytree of "
                          f"ShapeDtypeStructs, got {structs_t.value!r}")
    structs = [s if isinstance(s, ShapeDtypeStruct) else ShapeDtypeStruct(
        s.shape, s.dtype, weak_type=getattr(s, "weak_type", False)) for s in structs]
    passed = [k for k in node.keywords if k.arg not in ("vmap_method", "sharding")]
    types = list(args[2:]) + [kwargs[k.arg] for k in passed]
    for t in types:
        for path, leaf in leaves(t):
            if leaf is UNKNOWN:
                return UNKNOWN  # a recursive call's result, while its type is inferred
    call = PureCall(fn.value, tuple(types), tuple(k.arg for k in passed), tuple(structs),
                    treedef, method.value)
    call.site = (typer.parsed, node)  # (where vmap's error points)
    const = gast.Constant(value=call, kind=None)
    anno.set_(const, "type", Static(call))
    _register_rules()
    return typer.apply_op(node, REGISTRY["pure_callback"], {"args": SequenceType(tuple(types))},
                          {"callback": call},
                          {"args": tuple(node.args[2:]) + tuple(k.value for k in passed)},
                          {"callback": const})


def _as_python(fn):
    """A nested def or lambda that captured nothing (a lifted function of its own
    parameters, frontend/desugar.py) as the Python function it is, made from its source in
    its module's namespace; else None."""
    from .frontend.desugar import LiftedFunction
    if not isinstance(fn, LiftedFunction) or fn.captured:
        return None
    made = getattr(fn, "as_python", None)
    if made is None:
        import copy
        import gast
        import ast
        module = gast.gast_to_ast(gast.Module(body=[copy.deepcopy(fn.fdef)], type_ignores=[]))
        ast.fix_missing_locations(module)
        namespace = dict(fn.__globals__)
        exec(compile(module, fn.origin.filename, "exec"), namespace)
        made = fn.as_python = namespace[fn.fdef.name]
    return made


def struct_in_compiled_code(typer, node, args, kwargs):
    """``ShapeDtypeStruct(shape, dtype)`` in compiled code: a constant, its sizes known
    only at run time None."""
    from .ir import anno
    from .ir.types import SequenceType, Static
    import inspect
    try:
        bound = inspect.signature(ShapeDtypeStruct).bind(*args, **kwargs)
    except TypeError as e:
        raise typer.error(node, f"ShapeDtypeStruct(): {e}") from None
    values = {}
    for k, v in bound.arguments.items():
        if k == "shape" and isinstance(v, SequenceType):
            values[k] = tuple(e.value if isinstance(e, Static) else None for e in v.elts)
        elif isinstance(v, Static):
            values[k] = v.value
        else:
            raise typer.error(node, f"ShapeDtypeStruct(): {k} must be known when the code is "
                              f"generated")
    shape = values.pop("shape")
    if all(isinstance(d, (int, np.integer)) for d in shape):
        value = ShapeDtypeStruct(shape, **values)
    else:
        value = _RunTimeSizes(shape, values["dtype"], values.get("weak_type", False))
    anno.set_(node, "folded", value)
    return Static(value)


# --- the op, its batching rule and its Numba lowering ---------------------------------------

def _impl(*args, callback, batched=()):
    return callback(args, batched)


def _make_op():
    from .ops.registry import NAMESPACE, Op
    op = Op("pure_callback", _impl,
            lambda args, callback, batched=(): callback.out_type(len(batched)),
            operands=("args",), static=("callback", "batched"))
    del NAMESPACE["pure_callback"]  # astjax.pure_callback is the public name
    op.rules["vjp"] = vjp_pure_callback
    return op


def vjp_pure_callback(ans, args, g, callback=None, batched=()):
    # (compiled when a derivative reaches the op: the raise runs while code is generated)
    raise ValueError("Pure callbacks do not support JVP. Please use `jax.custom_jvp` to use "
                     "callbacks while taking gradients.")


# reverse mode calls it only where an operand depends on the inputs through derivatives: on
# stop_gradient(x) or floor(x) JAX's jvp rule sees symbolic zeros and gives a value
vjp_pure_callback.refuses = True


def _register_batching_rule():
    from .batching.batched import norm
    from .batching.rules import _lit, rule

    @rule("pure_callback")
    def batch_pure_callback(bx, op, vals, params, t):
        call = params["callback"].value
        if call.vmap_method is None:
            from .errors import UserNotImplementedError
            parsed, node = call.site
            raise parsed.error(
                node, "vmap is only supported for the pure_callback primitive when vmap_method "
                "is one of 'sequential', 'sequential_unrolled', 'expand_dims', 'broadcast_all', "
                "or 'legacy_vectorized'. Got vmap_method=None.", UserNotImplementedError)
        level = tuple(norm(v.t, v.b) for v in vals["args"])
        inner = params["batched"].value if "batched" in params else ()
        new = {"callback": params["callback"].text, "batched": _lit((level,) + inner)}
        return bx.call("pure_callback", {"args": [v.text for v in vals["args"]]}, new), True


_LOWERING_REGISTERED = []


def _register_rules():
    """The Numba lowering, registered on first use (its module imports Numba's backend)."""
    if _LOWERING_REGISTERED:
        return
    _LOWERING_REGISTERED.append(True)
    from .backends.numba_cpu.lowering import lowering

    @lowering("pure_callback")
    def lower_pure_callback(c):
        emitter = c.emitter
        args = "".join(("None" if isinstance(anno_type(a), _static()) else emitter.atom(a))
                       + ", " for a in c.operands["args"])
        params = {k: anno_type(v).value for k, v in anno_params(c.node).items()}
        callback = emitter.program.static_ref(params["callback"])
        batched = params.get("batched", ())
        helper_name = f"_{callback}_{len(batched)}"
        helper = ["@_nb.njit(cache=True)",
                  f"def {helper_name}(args):",
                  f"    with _nb.objmode(out={numba_type_text(c.out)!r}):",
                  f"        out = {callback}.from_numba(args, {emitter.literal(batched)})",
                  "    return out"]
        if helper not in emitter.kernels:
            emitter.kernels.append(helper)
        return [f"{c.target} = {helper_name}(({args}))"]


def anno_type(node):
    from .ir import anno
    return anno.get(node, "type")


def anno_params(node):
    from .ir import anno
    return anno.get(node, "param_nodes")


def _static():
    from .ir.types import Static
    return Static


def _register():
    from .ir import infer
    _make_op()
    _register_batching_rule()
    infer._BUILTINS[pure_callback] = lower_call
    infer._BUILTINS[ShapeDtypeStruct] = struct_in_compiled_code


_register()
