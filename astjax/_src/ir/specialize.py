"""Specialization: one typed copy of a function per abstract signature, and its callees.

A ``Program`` collects every specialization reached from an entry function
(user functions called from it get their own, so recursion and helpers work),
the outside arrays they capture, and afterwards makes casts explicit: operand
promotion casts and casts where paths with different dtypes meet.
"""
import builtins

import gast
import numpy as np

from ..errors import TypeCheckError, UserCodeError
from ..frontend.checks import CHECK_NAMES
from ..frontend.desugar import DICT_FROM
from ..frontend.naming import assign, load
from ..frontend.pipeline import called_positionally, positional_view, to_anf, varargs_view
from ..ops.registry import REGISTRY, operand_casts
from . import anno, peel, unroll
from .captured_trees import hoist_captured_trees
from .infer import FunctionTyper
from .types import UNKNOWN, ArrayType, SequenceType, Static, as_array_type, is_numeric

_MISSING = object()
NUMPY_NAME = "_astjax_numpy"  # how compiler-inserted code names astjax.numpy, whatever the user's names


class Specialization:
    def __init__(self, fn, arg_types, name):
        self.fn = fn
        self.arg_types = arg_types
        self.name = name
        self.parsed = self.fdef = None
        self.return_type = UNKNOWN
        self.typing = False
        self.reentered = False   # a call reached it while it was being typed (recursion)


class Program:
    def __init__(self):
        self.specs = {}          # (fn, arg_types) -> Specialization, in creation order
        self.names = set()
        self.captured = {}       # id(value) -> (name, value, type)
        self.statics = {}        # id(value) -> (name, value) for objects without a literal
        self.hoisted = {}        # name -> a leaf of a pytree read from outside, or an
                                 # array computed from constants (infer.computed_array)
        self.resolved = []       # (parsed, name, chain, value) per resolve(): source_cache.py
        self.entry = None
        self.backend = None      # the backend the code is generated for (api.Compiled)
        self.split_lists = True  # reverse mode may split callees that loop (ad.reverse)
        self.folded_calls = {}   # (function, static arguments) -> value (infer: vmap(f))
        self.dict_setters = {}   # source -> the function d[k] = v calls (infer.dict_set)

    # --- specialization --------------------------------------------------------------------
    def specialize(self, fn, arg_types, caller=None):
        fn = varargs_view(positional_view(called_positionally(fn, len(arg_types))),
                          len(arg_types))
        key = (fn, arg_types)
        spec = self.specs.get(key)
        if spec is not None:
            # while typing (recursion) its return type may still be UNKNOWN
            spec.reentered = spec.reentered or spec.typing
            return spec
        spec = Specialization(fn, arg_types, self._function_name(fn))
        spec.program = self  # derivative rules specialize helpers of their own
        self.specs[key] = spec
        if self.entry is None:
            self.entry = spec
        spec.parsed, anf = to_anf(fn)
        anf = hoist_captured_trees(anf, spec.parsed, self)
        n_params = len(anf.args.args)
        if len(arg_types) != n_params:
            plural = "s" * (n_params != 1)
            raise TypeCheckError(f"{fn.__name__}() takes {n_params} argument{plural}, got "
                                 f"{len(arg_types)}")  # at the call, in compiled code
        spec.typing = True
        passes = unrolled = 0
        while passes < 3:  # each pass peels the loops whose carried variables widen
            try:
                self._type(spec, anf, arg_types)
            except unroll.Unroll as u:  # a loop over constants of different kinds
                if u.fdef is not spec.fdef:
                    raise
                unrolled += len(u.trips)
                if unrolled > unroll.MAX_UNROLLED:
                    raise u.error from None
                anf = unroll.unroll(anf, u.fdef, u.loop, u.trips)
                continue
            passes += 1
            peeled = peel.peel(anf, peel.widening_loops(spec.fdef, self.backend == "numba"))
            if peeled is None:
                break
            anf = peeled
        spec.typing = False
        # (a helper called with the still-unknown result of a recursive call returns
        # unknown too: the recursive function is typed again once its result is known)
        if spec.return_type is UNKNOWN and UNKNOWN not in _leaf_types(arg_types):
            raise spec.parsed.error(spec.parsed.node, f"{fn.__name__} never returns a value "
                                    f"(infinite recursion?)", TypeCheckError)
        make_casts_explicit(spec)
        return spec

    def _type(self, spec, anf, arg_types):
        for _ in range(10):  # recursion: retype until the return type settles
            spec.fdef = _fresh(anf)
            previous, spec.reentered = spec.return_type, False
            spec.return_type = FunctionTyper(spec, spec.parsed, spec.fdef, arg_types,
                                             self).run()
            if spec.return_type == previous or not spec.reentered:
                break  # (no call read its return type while typing: nothing to redo)

    def _function_name(self, fn):
        base = fn.__name__ if fn.__name__.isidentifier() else "_lambda"
        name, k = base, 1
        while name in self.names:
            name, k = f"{base}_{k}", k + 1
        self.names.add(name)
        return name

    # --- names from outside ----------------------------------------------------------------
    def resolve(self, parsed, node, record=True):
        """The value a name (or attribute chain) from outside stands for; ``record``: note
        it for the persistent cache (source_cache.py), which checks it again on lookup."""
        chain = []
        while isinstance(node, gast.Attribute):
            chain.append(node.attr)
            node = node.value
        name = node.id
        if name == NUMPY_NAME:
            import astjax.numpy
            value = astjax.numpy
        elif name == DICT_FROM:
            from ..lax.trees import dict_from
            value = dict_from
        elif name in CHECK_NAMES:  # raise and f-strings (frontend/checks.py)
            value = CHECK_NAMES[name]
        elif name in self.hoisted:  # a leaf of a pytree read from outside (captured_trees)
            value = self.hoisted[name]
        elif name in parsed.freevars:
            value = parsed.freevars[name]
        else:
            value = parsed.fn.__globals__.get(name, _MISSING)
            if value is _MISSING:
                value = getattr(builtins, name, _MISSING)
        if value is _MISSING:
            raise parsed.error(node, f"name {name!r} is not defined", TypeCheckError)
        for attr in reversed(chain):
            try:
                value = getattr(value, attr)
            except AttributeError:
                raise parsed.error(node, f"{name}.{'.'.join(reversed(chain))}: "
                                   f"{type(value).__name__} has no attribute {attr!r}",
                                   TypeCheckError) from None
        if record and name not in self.hoisted:  # (a hoisted leaf: its tree is recorded)
            self.resolved.append((parsed, name, tuple(reversed(chain)), value))
        return value

    def capture(self, parsed, node, value):
        """An array from outside the function becomes a constant of the generated module."""
        from ..ir.types import type_of_value
        from ..runtime.array import to_numpy_input
        entry = self.captured.get(id(value))
        if entry is None:
            base = node.id if isinstance(node, gast.Name) else node.attr
            entry = (f"const_{base}_{len(self.captured)}", to_numpy_input(value),
                     type_of_value(value))
            self.captured[id(value)] = entry
        anno.set_(node, "captured", entry[0])
        return entry[2]

    def static_ref(self, value):
        entry = self.statics.get(id(value))
        if entry is None:
            base = getattr(value, "__name__", type(value).__name__)
            base = base if base.isidentifier() else "obj"
            entry = (f"static_{base}_{len(self.statics)}", value)
            self.statics[id(value)] = entry
        return entry[0]


def _fresh(fdef):
    return anno.clean_copy(fdef)


# --- explicit casts ---------------------------------------------------------------------------

def make_casts_explicit(spec):
    """Insert ``astype`` statements: operand promotion, and where typed paths meet."""
    spec.fdef.body = _block(spec.fdef.body)


def _block(stmts):
    out = []
    for s in stmts:
        if isinstance(s, gast.If) and anno.get(s, "taken") is not None:
            # a condition known now: only the branch taken was typed (the other is dropped)
            if anno.get(s, "taken"):
                s.body = _block(s.body)
            else:
                s.orelse = _block(s.orelse)
        elif isinstance(s, gast.If):
            s.body, s.orelse = _block(s.body), _block(s.orelse)
            merge = anno.get(s, "merge")
            if merge is not None:
                env_body, env_else, merged = merge
                s.body += _merge_casts(env_body, merged, s)
                s.orelse += _merge_casts(env_else, merged, s)
        elif isinstance(s, (gast.For, gast.While)):
            s.body = _block(s.body)
            entry, body_end, head = anno.get(s, "merge")
            out.extend(_merge_casts(entry, head, s))
            s.body += _merge_casts(body_end, head, s)
        elif isinstance(s, (gast.Assign, gast.Expr)):
            out.extend(_promotion_casts(s.value, s))
            if isinstance(s, gast.Assign) and _effect(s.value):
                out.append(_as_statement(s))  # (dead-code removal drops unread assignments)
            if isinstance(s, gast.Assign) and _mixed_sequence_operand(s.value):
                # NumPy promotes a sequence of mixed dtypes its own way (int32 with float32
                # gives float64); casting the result gives JAX's dtype with the same values
                out.append(s)
                t = anno.get(s.value, "type")
                name = s.targets[0].id
                out.append(cast_statement(name, name, t.dtype, s, t.ones, from_type=t))
                continue
        out.append(s)
    return out


def _effect(value):
    op = anno.get(value, "op")
    return op is not None and op.rules.get("effect", False)


def _as_statement(s):
    """``t = debug_callback(...)`` (a print whose value, None, is used: ``return f(*xs)``
    of f = print) as the call on its own, then ``t = None``."""
    call = gast.copy_location(gast.Expr(value=s.value), s)
    s.value = gast.Constant(value=None, kind=None)
    anno.set_(s.value, "type", Static(None))
    return call


def _mixed_sequence_operand(value):
    op, types = anno.get(value, "op"), anno.get(value, "operand_types")
    if op is None or not isinstance(anno.get(value, "type"), ArrayType):
        return False
    target = op.promoted_dtype(types)
    return target is not None and any(
        isinstance(t, SequenceType) and any(as_array_type(e).dtype != target[0] for e in t.elts)
        for t in types.values())


def cast_statement(name, from_node_name, dtype, like, ones=(), from_type=None, src=None):
    """``name = jnp.astype(source, dtype)`` with its annotations (``src``: the source
    node, else a load of ``from_node_name``)."""
    op = REGISTRY["astype"]
    src = load(from_node_name) if src is None else src
    if from_type is not None:
        anno.set_(src, "type", from_type)
    call = gast.Call(func=gast.Attribute(value=load(NUMPY_NAME), attr="astype",
                                         ctx=gast.Load()),
                     args=[src, gast.Constant(value=str(np.dtype(dtype)), kind=None)],
                     keywords=[])
    t = ArrayType(np.dtype(dtype), tuple(ones), False)
    anno.set_(call, "op", op)
    anno.set_(call, "operand_nodes", {op.operands[0]: src})
    anno.set_(call, "param_nodes", {"dtype": call.args[1]})
    anno.set_(call, "type", t)
    stmt = assign(name, call, like)
    anno.set_(stmt.targets[0], "type", t)
    return stmt


def _merge_casts(env, merged, where):
    casts = []
    for name, t in merged.items():
        have = env.get(name)
        if have is None or not isinstance(t, ArrayType) or not is_numeric(have):
            continue
        if isinstance(have, Static) and type(have.value) is float and t.ndim:
            continue  # a weak float (a zero cotangent) stays weak: cast, it would be 0-d
        if as_array_type(have).dtype != t.dtype:
            casts.append(cast_statement(name, name, t.dtype, where, t.ones, from_type=have))
    return casts


def _promotion_casts(value, where):
    """Casts that make an op's operands share its computation dtype (JAX's promotion)."""
    op = anno.get(value, "op")
    nodes = anno.get(value, "operand_nodes")
    if op is None or nodes is None:
        return []
    types = anno.get(value, "operand_types")
    casts = operand_casts(op, types, lambda n: isinstance(types[n], Static))
    pre = []
    for name, dtype in casts.items():
        node = nodes[name]
        if isinstance(types[name], Static):
            anno.set_(node, "typed_constant", np.dtype(dtype))
            continue
        tmp = f"{_id(node)}_as_{np.dtype(dtype).name}"
        ones = as_array_type(types[name]).ones
        pre.append(cast_statement(tmp, _id(node), dtype, where, ones, from_type=types[name],
                                  src=_captured_source(node)))
        _replace_operand(value, node, tmp)  # also rebinds operand_nodes[name]
        anno.set_(nodes[name], "type", ArrayType(np.dtype(dtype), ones, False))
    return pre


def _id(node):
    if anno.get(node, "captured"):  # a Name or an attribute (``cfg.w``) read from outside
        return anno.get(node, "captured")
    if isinstance(node, gast.Name):
        return node.id
    raise UserCodeError("internal: cast of a non-name operand")


def _captured_source(node):
    """A captured array's node, copied with its mark: a transform that retypes the cast
    (grad's ``*_vjp``) must capture the array again, not look up the generated name."""
    captured = anno.get(node, "captured")
    if not captured:
        return None
    src = anno.clean_copy(node)
    anno.set_(src, "captured", captured)
    return src


def _replace_operand(value, old, new_name):
    for n in gast.walk(value):
        for field, child in gast.iter_fields(n):
            if child is old:
                new = load(new_name)
                setattr(n, field, new)
                _rebind(value, old, new)
                return
            if isinstance(child, list) and any(c is old for c in child):
                new = load(new_name)
                setattr(n, field, [new if c is old else c for c in child])
                _rebind(value, old, new)
                return


def _rebind(value, old, new):
    nodes = anno.get(value, "operand_nodes")
    for k, v in nodes.items():
        if v is old:
            nodes[k] = new


def _leaf_types(t):
    """The types inside a tuple of types or a container type, and the type itself."""
    yield t
    for child in (t if isinstance(t, tuple) else getattr(t, "elts", None) or
                  getattr(t, "children", None) or ()):
        yield from _leaf_types(child)
