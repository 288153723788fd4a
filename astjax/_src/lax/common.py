"""What every ``astjax.lax`` function shares: the eager/compiled wrapper, typing the user's
body functions at generation time, and JAX's checks on carries and branch outputs.

Types here are ``ir.types`` values. A static Python number in a carry (``init_val=0.0``)
counts as the (weak) array it becomes at run time, as in JAX.
"""
import functools
import inspect
import types as pytypes

import numpy as np

from .. import dtypes
from ..config import config
from ..errors import TypeCheckError, UserValueError
from ..frontend.parse import parse_function
from ..frontend.synthetic import SyntheticFunction, from_source
from ..ir.trees import container_source
from ..ir.types import (UNKNOWN, ArrayType, ListType, SequenceType, Static, TreeType, Type,
                        as_array_type, keyed_children, type_of_value)


def type_error(message):
    """A TypeError for the user; in compiled code the compiler adds the call's file:line."""
    return TypeCheckError(message)


def value_error(message):
    return UserValueError(message)


class LaxFunction:
    """A public lax function: ``eager`` runs on concrete values; ``lower(*arg_types)``
    returns the function compiled code calls instead (at those argument types)."""

    def __init__(self, eager, lower):
        functools.update_wrapper(self, eager)
        self.eager = eager
        self.lower = lower

    def __call__(self, *args, **kwargs):
        return self.eager(*args, **kwargs)

    def function_for(self, arg_types, program):
        return self.lower(*arg_types)

    def __repr__(self):
        return f"<function astjax.lax.{self.eager.__name__}>"


def lax_function(lower):
    """Decorator: the eager function, with ``lower`` for compiled code."""
    return lambda eager: LaxFunction(eager, lower)


# --- generated functions ----------------------------------------------------------------------

_SYNTHETIC = {}  # source text -> SyntheticFunction (same text, same function: one specialization)


def synthesize(name, source, where, namespace=None):
    """A compiled function from source text; ``where`` is the (eager) Python function whose
    file and line the generated code's comments name; ``namespace``: names the text uses
    besides ``_jnp`` (see ``rebuild``)."""
    key = (source, tuple(sorted((namespace or {}).items())))
    fn = _SYNTHETIC.get(key)
    if fn is None:
        import astjax.numpy as jnp
        fn = from_source(name, source, dict(namespace or {}, _jnp=jnp), parse_function(where))
        # the public function's defaults, so that a call leaving them out binds
        public = inspect.signature(where).parameters
        fn.__signature__ = inspect.Signature([
            inspect.Parameter(a.id, inspect.Parameter.POSITIONAL_OR_KEYWORD,
                              default=public[a.id].default if a.id in public else
                              inspect.Parameter.empty)
            for a in fn.fdef.args.args])
        _SYNTHETIC[key] = fn
    return fn


# --- the types of the user's functions --------------------------------------------------------

_PROBES = {}


def call_type(fn_type, arg_types, what):
    """The return type of calling the function value ``fn_type`` (a static callable, or a
    closure from a nested def/lambda) at ``arg_types``. It is typed in a scratch program,
    so the generated code gets only the specializations the final types need."""
    from ..ir.infer import closure_function
    from ..ir.specialize import Program
    key = (fn_type, tuple(arg_types), config.snapshot())
    try:
        hit = _PROBES.get(key)
    except TypeError:  # an unhashable static value somewhere
        key, hit = None, None
    if hit is not None:
        return hit
    lifted = closure_function(fn_type)
    op = _op_of(fn_type)
    if op is not None:  # jnp.sin as a branch: the op's own typing rule
        out = _op_type(op, arg_types, what)
        if key is not None:
            _PROBES[key] = out
        return out
    if lifted is not None:
        fn, arg_types = lifted, (fn_type,) + tuple(arg_types)
    elif isinstance(fn_type, Static) and callable(fn_type.value):
        fn = fn_type.value
    else:
        shown = fn_type.value if isinstance(fn_type, Static) else fn_type
        raise type_error(f"{what} must be callable, got {shown!r}")
    try:
        bound = inspect.signature(fn).bind(*arg_types)
    except TypeError as e:
        raise type_error(f"{what} {getattr(fn, '__name__', fn)!r} cannot take the arguments "
                         f"it is given: {e}") from None
    bound.apply_defaults()
    types_ = tuple(v if isinstance(v, Type) else Static(v) for v in bound.arguments.values())
    program = Program()
    program.split_lists = False  # only the type is wanted: no rebuild (ad.reverse.SplitRefused)
    if hasattr(fn, "function_for"):
        fn = fn.function_for(types_, program)
    else:
        fn = getattr(fn, "__astjax_wrapped__", None) or fn
    if not isinstance(fn, (pytypes.FunctionType, SyntheticFunction)):
        raise type_error(f"{what} must be a Python function astjax can read the source of, "
                         f"got {fn!r}")
    out = program.specialize(fn, types_).return_type
    if key is not None:
        _PROBES[key] = out
    return out


def _op_of(fn_type):
    from ..ops.registry import Op, op_for_object
    if not isinstance(fn_type, Static):
        return None
    v = fn_type.value
    try:
        return v if isinstance(v, Op) else op_for_object(v)
    except TypeError:
        return None


def _op_type(op, arg_types, what):
    from ..errors import ShapeError
    from ..ir.infer import param_view
    try:
        operands, params = op.bind(list(arg_types), {})
        for name, value in operands.items():
            if isinstance(value, tuple):
                operands[name] = SequenceType(value)
        return op.infer(operands, {k: param_view(v) for k, v in params.items()})
    except (ShapeError, TypeError) as e:
        raise type_error(f"{what} ({op.name}): {e}") from None


# --- types as values: dynamic numbers, structure, leaves --------------------------------------

def is_number(t):
    return isinstance(t, Static) and isinstance(t.value, (bool, int, float, complex, np.generic))


def dynamic(t):
    """The type a value has at run time: static numbers become (weak) arrays."""
    t = as_sequence(t)
    if is_number(t):
        return as_array_type(t)
    if isinstance(t, SequenceType):
        return SequenceType(tuple(dynamic(e) for e in t.elts), t.kind)
    if isinstance(t, TreeType):
        return TreeType(t.node_type, t.aux, t.keys, tuple(dynamic(c) for c in t.children))
    return t


def as_sequence(t):
    """A static tuple/list as a SequenceType of statics (else ``t``)."""
    if isinstance(t, Static) and isinstance(t.value, (tuple, list)) and \
            not hasattr(t.value, "_fields"):
        return SequenceType(tuple(Static(v) for v in t.value),
                            "tuple" if isinstance(t.value, tuple) else "list")
    return t


def rebuild(t, leaf, ref, path=()):
    """Source text of a value shaped like type ``t``: containers around ``leaf(path, leaf
    type)``; ``ref`` names what builds a namedtuple or registered class (see
    ir/trees.container_source)."""
    t = as_sequence(t)
    pairs = keyed_children(t)
    if pairs is not None:
        return container_source(t, [rebuild(c, leaf, ref, path + (k,)) for k, c in pairs],
                                ref)
    return leaf(path, t)


def leaves(t, path=()):
    """(path, type) of every leaf (array, static value) of a type."""
    t = as_sequence(t)
    if isinstance(t, SequenceType):
        for k, e in enumerate(t.elts):
            yield from leaves(e, path + (k,))
    elif isinstance(t, TreeType):
        for k, c in zip(t.keys, t.children):
            yield from leaves(c, path + (k,))
    else:
        yield path, t


def path_str(root, path):
    return root + "".join(f"[{k!r}]" for k in path)


def describe(t):
    if isinstance(t, SequenceType):
        return f"a {t.kind} of length {len(t.elts)}"
    if isinstance(t, TreeType):
        return f"a {t.node_type.__name__} with keys {list(t.keys)}"
    if isinstance(t, ListType):
        return "a list built at run time"
    if isinstance(t, Static):
        return "None" if t.value is None else f"the constant {t.value!r}"
    return f"an array of type {t}"


def structure_differences(a, b, root, what_a, what_b, path=()):
    """JAX-style sentences saying where two types' tree structures differ."""
    here = (" " + path_str(root, path)) if root or path else ""
    a, b = as_sequence(a), as_sequence(b)
    if isinstance(a, SequenceType) and isinstance(b, SequenceType):
        if a.kind != b.kind:
            return [f"the {what_a}{here} is a {a.kind} but the corresponding component of "
                    f"the {what_b} is a {b.kind}, so the types do not match"]
        if len(a.elts) != len(b.elts):
            return [f"the {what_a}{here} is a {a.kind} of length {len(a.elts)} but the "
                    f"corresponding component of the {what_b} is a {b.kind} of length "
                    f"{len(b.elts)}, so the lengths do not match"]
        out = []
        for k, (x, y) in enumerate(zip(a.elts, b.elts)):
            out += structure_differences(x, y, root, what_a, what_b, path + (k,))
        return out
    if isinstance(a, TreeType) and isinstance(b, TreeType):
        if a.node_type is not b.node_type or a.keys != b.keys:
            return [f"the {what_a}{here} is {describe(a)} but the corresponding component "
                    f"of the {what_b} is {describe(b)}, so the pytree node types or keys "
                    f"do not match"]
        out = []
        for k, x, y in zip(a.keys, a.children, b.children):
            out += structure_differences(x, y, root, what_a, what_b, path + (k,))
        return out
    a_array = isinstance(dynamic(a), ArrayType)
    b_array = isinstance(dynamic(b), ArrayType)
    if a_array and b_array or a is UNKNOWN or b is UNKNOWN:
        return []
    if isinstance(a, Static) and isinstance(b, Static) and not a_array and not b_array:
        if a == b:
            return []
    return [f"the {what_a}{here} is {describe(a)} but the corresponding component of the "
            f"{what_b} is {describe(b)}"]


def leaf_difference(a, b):
    """Why two dynamic leaf types do not match ('shapes' / 'dtypes'), or None."""
    if not (isinstance(a, ArrayType) and isinstance(b, ArrayType)):
        return None
    if a.ndim != b.ndim:
        return "shapes"
    if a.dtype != b.dtype:
        return "dtypes"
    return None


# --- carries ----------------------------------------------------------------------------------

def carry_join(name, root, carry, out):
    """The carry type after one more step (weak-typed carry components are promoted to the
    body's output dtype, as JAX does), or JAX's TypeError when the body changes it."""
    diffs = structure_differences(carry, out, root, "input carry", "carry output")
    if diffs:
        raise type_error(
            f"{name} function carry input and carry output must have the same pytree "
            f"structure, but they differ:\n\n" + "\n".join("  * " + d for d in diffs) +
            "\n\nRevise the function so that the carry output has the same pytree structure "
            "as the carry input.")
    problems = []

    def join(c, o, path):
        if isinstance(c, SequenceType):
            return SequenceType(tuple(join(x, y, path + (k,)) for k, (x, y) in
                                      enumerate(zip(c.elts, o.elts))), c.kind)
        if isinstance(c, TreeType):
            return TreeType(c.node_type, c.aux, c.keys,
                            tuple(join(x, y, path + (k,)) for k, x, y in
                                  zip(c.keys, c.children, o.children)))
        o = dynamic(o)
        if not (isinstance(c, ArrayType) and isinstance(o, ArrayType)):
            return c
        ones = tuple(p and q for p, q in zip(c.ones, o.ones))
        if c.ndim == o.ndim and c.dtype == o.dtype:
            return ArrayType(c.dtype, ones, c.weak and o.weak)
        if c.ndim == o.ndim and c.weak:
            dtype, weak = dtypes.promote_types((c.dtype, True), (o.dtype, o.weak))
            return ArrayType(dtype, ones, weak)
        kind = leaf_difference(c, o)
        problems.append(f"  * the input carry component {path_str(root, path)} has type {c} "
                        f"but the corresponding output carry component has type {o}, so the "
                        f"{kind} do not match")
        return c

    new = join(dynamic(carry), out, ())
    if problems:
        raise type_error(
            f"{name} function carry input and carry output must have equal types (e.g. "
            f"shapes and dtypes of arrays), but they differ:\n\n" + "\n".join(problems) +
            "\n\nRevise the function so that all output types (e.g. shapes and dtypes) match "
            "the corresponding input types.")
    return new


def carry_fixed_point(name, root, init, step):
    """The carry type a loop settles on: ``step(carry type) -> carry output type``."""
    carry = dynamic(init)
    for _ in range(10):
        out = step(carry)
        if out is UNKNOWN:  # a recursive function still being typed
            return carry
        new = carry_join(name, root, carry, out)
        if new == carry:
            return carry
        carry = new
    raise type_error(f"the carry types of this {name.split()[0]} do not settle")


def check_same_types(what_a, a, what_b, b):
    """JAX's check that two branch outputs have one structure and identical types."""
    diffs = structure_differences(a, b, "", what_a, what_b)
    if diffs:
        raise type_error(f"{what_a} and {what_b} must have same type structure, got "
                         f"{describe(a)} and {describe(b)}:\n" +
                         "\n".join("  * " + d for d in diffs))
    problems = []
    for (path, x), (_, y) in zip(leaves(dynamic(a)), leaves(dynamic(b))):
        kind = leaf_difference(x, y)
        if kind:
            problems.append(f"  * {path_str('output', path)}: {x} and {y}, so the {kind} do "
                            f"not match")
    if problems:
        raise type_error(f"{what_a} and {what_b} must have identical types, got\n" +
                         "\n".join(problems))


def convert(expr, have, want):
    """Source text turning ``expr`` (of type ``have``) into type ``want``, or None when it
    already is (or cannot be rebuilt here, e.g. a namedtuple: the loop's join casts it)."""
    if have == want:
        return None
    have = as_sequence(have)
    if isinstance(have, SequenceType) and isinstance(want, SequenceType):
        parts = [convert(f"{expr}[{k}]", x, y) for k, (x, y) in
                 enumerate(zip(have.elts, want.elts))]
        if all(p is None for p in parts):
            return None
        parts = [p or f"{expr}[{k}]" for k, p in enumerate(parts)]
        if have.kind == "list":
            return "[" + ", ".join(parts) + "]"
        return "(" + ", ".join(parts) + ("," if len(parts) == 1 else "") + ")"
    if isinstance(have, TreeType) and isinstance(want, TreeType):
        if have.node_type is not dict:
            return None
        parts = [convert(f"{expr}[{k!r}]", x, y) for k, x, y in
                 zip(have.keys, have.children, want.children)]
        if all(p is None for p in parts):
            return None
        return "{" + ", ".join(f"{k!r}: {p or f'{expr}[{k!r}]'}"
                               for k, p in zip(have.keys, parts)) + "}"
    if not isinstance(want, ArrayType):
        return None
    if is_number(have) or isinstance(have, ArrayType) and (have.dtype != want.dtype or
                                                           have.weak != want.weak):
        return f"_jnp.astype({expr}, {want.dtype.name!r})"
    return None


# --- eager checks ------------------------------------------------------------------------------

def value_type(value):
    """The abstract type of a concrete value, or None when it has none (an odd object)."""
    try:
        return type_of_value(value)
    except TypeError:
        return None


def eager_carry_check(name, root, carry, new):
    """The eager form of the carry check: structure and dtypes (``carry_join``), then shapes.
    Returns nothing; raises JAX's TypeError."""
    a, b = value_type(carry), value_type(new)
    if a is None or b is None:
        return
    carry_join(name, root, a, b)
    from ..tree_util import tree_flatten
    for (path, _), x, y in zip(leaves(a), tree_flatten(carry)[0], tree_flatten(new)[0]):
        if np.shape(x) != np.shape(y):
            raise type_error(
                f"{name} function carry input and carry output must have equal types (e.g. "
                f"shapes and dtypes of arrays), but they differ:\n\n  * the input carry "
                f"component {path_str(root, path)} has shape {np.shape(x)} but the "
                f"corresponding output carry component has shape {np.shape(y)}, so the "
                f"shapes do not match\n\nRevise the function so that all output types (e.g. "
                f"shapes and dtypes) match the corresponding input types.")


def as_arrays(tree):
    """Python numbers in a pytree as (weak) Arrays, as JAX's loops and branches see them."""
    from ..tree_util import tree_map
    import astjax.numpy as jnp
    return tree_map(lambda v: jnp.asarray(v) if dtypes.is_python_scalar(v) else v, tree)


def check_callable(what, fn):
    if not callable(fn):
        raise type_error(f"{what} must be callable, got {fn!r}")
