"""vmap as a source rewrite of typed A-normal form.

``batched_function(spec, arg_bt)`` writes, from one typed specialization of ``f``, a new
function ``f_batched`` with the same parameters in which every batched value carries one
extra leading axis, the batch axis (see batched.py for which values are batched). Each
statement becomes the statement that computes all examples at once:

* an op statement goes to the op's batching rule (rules.py): elementwise ops line up the
  batch axes of operands of different ranks, reductions and shape ops shift their axes,
  products become batched matmuls or einsums, indexing gets a batch index, ...;
* a call of another user function calls that function's own batched version (specialized to
  which arguments are batched, so helpers and recursion work); a call of a reverse-mode
  ``*_vjp`` function is the vjp of the batched primal, which is how ``vmap(grad(f))`` gives
  per-example gradients;
* ``if`` on a batched condition computes both branches and selects with ``where`` when both
  are safe to run for every example; a ``while`` on a batched condition, or a ``for`` with
  per-example trip counts, runs until every example is done and masks the finished ones;
* anything else -- an op without a rule, a branch or loop that is not safe to run for all
  examples, a call of a function that cannot be batched (derivative code whose tapes a
  per-example branch fills, as in ``vmap(hessian(f))`` through ``lax.cond``) -- becomes a
  loop over the examples that calls the original code on each one
  (a generated per-example function) and stacks the results: still compiled, never an
  error.

The result is ordinary Python over registered ops, typed and compiled like user code, so it
can be differentiated (``grad(vmap(f))``), jitted and batched again.
"""
import contextlib
import inspect
import os
import re
import types as pytypes

import gast

from ..frontend.naming import Names
from ..frontend.synthetic import SyntheticFunction, function_def
from ..ir import anno, trees
from ..ir.trees import container_source
from ..ir.types import (UNKNOWN, ArrayType, IndexType, ListType, SequenceType, Static,
                        TreeType, keyed_children)
from ..ops.registry import REGISTRY
from . import batched as bt_
from . import sizes as _sizes  # noqa: F401  (registers same_batch_size)
from .batched import any_, children, full, join, norm, rank, unwrap


class _Ops:
    """What generated code calls ops through (``_jnp.<name>``). Each name is looked up in
    the registry when it is read, so ops registered after this module was imported (ad's
    ``cotangent_like``, whatever the import order) are there."""

    def __getattr__(self, name):
        try:
            return REGISTRY[name]
        except KeyError:
            raise AttributeError(f"no op named {name!r}") from None


OPS = _Ops()


class NoRule(Exception):
    """The statement has no batching rule for these operands: loop over the examples."""


class _CalleeCannotBatch(NoRule):
    """A called function cannot be batched (``error``): the call runs once per example."""

    def __init__(self, error):
        super().__init__(f"a call of code that cannot be batched: {error}")
        self.error = error


class Unsafe(Exception):
    """Code that would run for examples that did not take this path cannot be run that way."""


class _Grow(Exception):
    """A loop over the examples whose results might be left unset (set on some paths only):
    the loop takes in the rest of its block instead."""


class CannotBatch(NotImplementedError):
    """Code that neither the rules nor a loop over the examples can batch."""


class Val:
    """An operand as a rule sees it: source text, per-example type, batched or not."""
    __slots__ = ("text", "t", "b")

    def __init__(self, text, t, b):
        self.text, self.t, self.b = text, unwrap(t), b

    @property
    def batched(self):
        return bool(any_(self.b))

    @property
    def ndim(self):
        return rank(self.t)

    def __repr__(self):
        return f"Val({self.text}, {self.t}, {self.b})"


class Param:
    """An op param: source text, its value as the op's rule saw it, and whether it depends
    on batched values."""
    __slots__ = ("text", "value", "batched", "node")

    def __init__(self, text, value, batched, node=None):
        self.text, self.value, self.batched, self.node = text, value, batched, node


class Writer:
    def __init__(self):
        self.lines = []  # (depth, text, user line)

    def add(self, text, lineno, depth=0):
        self.lines.append((depth, text, lineno))

    def extend(self, other, depth=1):
        self.lines += [(d + depth, t, n) for d, t, n in other.lines]


def literal(value):
    """Source text for a constant, or None when it has no literal form."""
    if value is None or isinstance(value, (bool, str)) or value is Ellipsis:
        return repr(value)
    if type(value) is int:
        return repr(value)
    if type(value) is float:
        return repr(value) if value == value and abs(value) != float("inf") \
            else f"float({str(value)!r})"
    if type(value) is complex:  # repr of a non-finite one, (nan+infj), is no literal
        parts = (literal(value.real), literal(value.imag))
        return repr(value) if "float" not in "".join(parts) else f"complex({', '.join(parts)})"
    if type(value) is tuple:
        parts = [literal(v) for v in value]
        if any(p is None for p in parts):
            return None
        return "(" + ", ".join(parts) + ("," if len(parts) == 1 else "") + ")"
    if type(value) is slice:
        parts = [literal(v) for v in (value.start, value.stop, value.step)]
        return None if any(p is None for p in parts) else f"slice({', '.join(parts)})"
    return None


# --- batched functions, cached on each specialization ---------------------------------------

def batched_function(spec, arg_bt, out_req=None, one=False, axis_name=None, size=None,
                     check_sizes=True):
    """``(SyntheticFunction, out_bt, flags)``: ``spec`` batched for arguments ``arg_bt``.

    ``out_req``: None, or a bt the output must have (unbatched leaves are broadcast; a
    True Static leaf is broadcast too). ``one``: the batch size is known to be 1.
    ``axis_name``: the vmap's axis name (collectives naming it are reduced here).
    ``size``: the batch size, when no argument is batched (vmap's axis_size).
    ``check_sizes``: start by checking that the batched arguments' batch sizes agree (a
    vmap's entry does; a call from batched code, whose values share one size, need not).
    """
    arg_bt = tuple(norm(t, b) for t, b in zip(spec.arg_types, arg_bt))
    cache = spec.__dict__.setdefault("_astjax_batched", {})
    key = (arg_bt, out_req, one, axis_name, size, check_sizes)
    hit = cache.get(key)
    if hit is not None:
        if hit.building:  # a recursive call: its output is taken to be fully batched
            hit.recursive = True
            hit.flags["unsafe"] = True  # running it for every example may not end
            return hit.fn, full(spec.return_type), hit.flags
        return hit.fn, hit.out_bt, hit.flags
    name = f"{spec.name}_batched"
    entry = pytypes.SimpleNamespace(fn=SyntheticFunction(name, None, {}, spec.parsed),
                                    out_bt=None, building=True, recursive=False,
                                    flags={"unsafe": False})
    cache[key] = entry
    try:
        batcher = Batcher(spec, arg_bt, out_req, one, entry.flags, axis_name, size, check_sizes)
        batcher.build(entry.fn)
        if entry.recursive and batcher.out_bt != full(spec.return_type) and out_req is None:
            entry.flags["unsafe"] = True
            batcher = Batcher(spec, arg_bt, full(spec.return_type), one, entry.flags,
                              axis_name, size, check_sizes)
            batcher.build(entry.fn)
        if entry.recursive:
            entry.flags["unsafe"] = True  # recursion: running it for every example may not end
    except BaseException:
        del cache[key]
        raise
    entry.out_bt, entry.building = batcher.out_bt, False
    _keep_defaults(entry.fn, spec.fn)
    custom = getattr(spec.fn, "custom_rule", None)
    if custom is not None:  # grad of the batched function uses the rule, batched too
        entry.fn.custom_rule = batched_rule(custom, spec, arg_bt, entry.out_bt)
    return entry.fn, entry.out_bt, entry.flags


def _keep_defaults(batched, fn):
    """Give the batched function ``fn``'s parameter defaults: a call that leaves one out
    (``vmap(jnp.diag)(x)``) is bound to them again when it is differentiated."""
    original = inspect.signature(fn).parameters
    batched.__signature__ = inspect.Signature(
        [inspect.Parameter(name, inspect.Parameter.POSITIONAL_OR_KEYWORD,
                           default=original[name].default if name in original
                           else inspect.Parameter.empty)
         for name in batched.__signature__.parameters],
        __validate_parameters__=False)  # (a default may come before a keyword-only one's
    # place: ``fn`` may be a PositionalView of ``def g(x, a=1.0, *, m)``, ``(x, a=1.0, m)``)


def batched_rule(custom, spec, arg_bt, out_bt):
    """The rule of a custom_vjp/custom_jvp function batched for ``arg_bt``: the user's rule
    under vmap, with the in_axes and out_axes (pytree prefixes) of that batching."""
    from ..ad.custom import BatchedCustomJvp, BatchedCustomVjp, UnbatchableCustom, custom_vjp
    try:
        in_axes = tuple(axes_of(t, b) for t, b in zip(spec.arg_types, arg_bt))
        out_axes = axes_of(spec.return_type, out_bt)
    except NotImplementedError:
        return UnbatchableCustom(f"{type(custom).__name__} function {custom.fun.__name__} "
                                 f"with a list of containers")
    if isinstance(custom, custom_vjp):
        return BatchedCustomVjp(custom, in_axes, out_axes, tuple(zip(spec.arg_types, arg_bt)),
                                (spec.return_type, out_bt))
    return BatchedCustomJvp(custom, in_axes, out_axes)


def axes_of(t, b):
    """vmap's axes (0 or None, or a container of those) for a value of type ``t`` batched
    as ``b`` (at axis 0)."""
    if isinstance(b, bool):
        return 0 if b else None
    t = unwrap(t)
    if isinstance(t, ListType):  # (a run-time list: its elements' containers)
        raise NotImplementedError
    axes = [axes_of(c, x) for c, x in zip(children(t), b)]
    if all(a == 0 for a in axes) or all(a is None for a in axes):
        return axes[0] if axes else None
    if isinstance(t, SequenceType):
        return axes if t.kind == "list" else tuple(axes)
    return trees.builder(t)(*axes)


class _ConstantRefs(gast.NodeTransformer):
    def __init__(self, text):
        self.text = text

    def visit_Constant(self, node):
        if literal(node.value) is not None:
            return node
        return gast.Name(id=self.text(node.value), ctx=gast.Load(), annotation=None,
                         type_comment=None)


def _vjp_origin(fn):
    """``(primal spec, live)`` when ``fn`` is a reverse-mode ``*_vjp`` function."""
    from ..ad import reverse
    if not isinstance(fn, SyntheticFunction) or "_vjp" not in fn.__name__:
        return None
    for key, (spec, f) in list(reverse._CACHE.items()):
        if f is fn and key[1] != "custom":
            return spec, key[1]
    return None


# --- the rewrite ----------------------------------------------------------------------------

class Batcher:
    def __init__(self, spec, arg_bt, out_req, one, flags, axis_name=None, size=None,
                 check_sizes=True):
        self.spec = spec
        self.axis_name = axis_name
        self.size = size
        self.check_sizes = check_sizes
        self.parsed = spec.parsed
        self.fdef = spec.fdef
        self.program = spec.program
        self.arg_bt = arg_bt
        self.out_req = out_req
        self.one = one
        self.flags = flags
        self.params = [a.id for a in self.fdef.args.args]
        self.locals = set(self.params) | set(bt_.stores(self.fdef.body))
        self.namespace = dict(self.parsed.fn.__globals__)
        self.namespace.update(self.parsed.freevars)
        self.globals_by_id = {}
        self.global_names = set()
        self.list_bt = {}
        self.force_bt = {}  # variables batched where they are set (see merge_to)
        self.used_names = {n.id for n in gast.walk(self.fdef) if isinstance(n, gast.Name)}
        self.ops = self.global_ref(OPS, "_jnp")
        self.out_bt = None

    # --- names -----------------------------------------------------------------------------
    def global_ref(self, value, hint):
        """A name in the generated function's namespace bound to ``value``."""
        name = self.globals_by_id.get(id(value))
        if name is not None:
            return name
        name, k = hint, 0
        while name in self.used_names or name in self.global_names or (
                name in self.namespace and self.namespace[name] is not value):
            name, k = f"{hint}{k}", k + 1
        self.namespace[name] = value
        self.globals_by_id[id(value)] = name
        self.global_names.add(name)
        return name

    def fresh(self, hint):
        hint = hint if hint.isidentifier() else "t"
        return self.names.fresh(hint)

    def load(self, var):
        return self.rename.get(var, var)

    @property
    def B(self):
        self.need_batch_size = True
        return self.batch_size_name

    # --- output ----------------------------------------------------------------------------
    def emit(self, text):
        self.out.add(text, self.lineno)

    def tmp(self, hint, expr):
        name = self.fresh(hint)
        self.emit(f"{name} = {expr}")
        return name

    @contextlib.contextmanager
    def into(self, writer):
        saved = self.out
        self.out = writer
        try:
            yield writer
        finally:
            self.out = saved

    @contextlib.contextmanager
    def state(self, restore=True):
        """Save the environments (and with ``restore`` put them back afterwards)."""
        saved = (dict(self.bt), dict(self.ty), dict(self.rename))
        try:
            yield saved
        finally:
            if restore:
                self.bt, self.ty, self.rename = dict(saved[0]), dict(saved[1]), dict(saved[2])

    @contextlib.contextmanager
    def dry_run(self):
        """Walk code only to learn what it batches: names and side effects are undone."""
        names = (dict(self.names.counters), set(self.names.used))
        lineno = self.lineno
        self.dry += 1
        try:
            with self.into(Writer()):
                yield
        finally:
            self.dry -= 1
            self.names.counters, self.names.used = names
            self.lineno = lineno

    def call(self, opname, operands, params=None):
        """``_jnp.<op>(...)`` source for operand and param texts (by name)."""
        op = REGISTRY[opname]
        texts = dict(operands)
        texts.update(params or {})
        args, kwargs = op.arrange(texts)
        parts = list(args) + [f"{k}={v}" for k, v in kwargs.items()]
        return f"{self.ops}.{opname}({', '.join(parts)})"

    def static_text(self, value):
        text = literal(value)
        return text if text is not None else self.global_ref(value, "_static")

    # --- entry -----------------------------------------------------------------------------
    def reset(self):
        self.names = Names(self.fdef)
        self.names.used |= self.global_names
        self.batch_size_name = self.fresh("batch_size")
        self.need_batch_size = False
        self.bt, self.ty, self.rename = {}, {}, {}
        for arg, t, b in zip(self.fdef.args.args, self.spec.arg_types, self.arg_bt):
            self.bt[arg.id], self.ty[arg.id] = b, unwrap(t)
        self.dry = 0
        self.safe = 0
        self.version, self.sums = {}, {}  # for windows x[i:i + n] (see rules._window)
        self.out = Writer()
        self.lineno = self.fdef.lineno

    def build(self, fn):
        ret = self.fdef.body[-1]
        assert isinstance(ret, gast.Return)
        for _ in range(10):  # lists batched by a later append make earlier appends batch
            self.changed = False
            self.reset()
            body = Writer()
            with self.into(body):
                self.walk(self.fdef.body[:-1], top=True)
                self.lineno = ret.lineno
                self.emit(f"return {self.ret(ret)}")
            if not self.changed:
                break
        # a list argument appended to here (fill(hs, x)): batched from then on, for the caller
        self.flags["lists_out"] = {k: self.list_bt[a.id] for k, a in
                                   enumerate(self.fdef.args.args) if self.list_bt.get(a.id)}
        lines = []
        leaves = self.batched_leaves()
        sizes = ([] if self.size is None else [str(self.size)]) + \
            [f"{leaf}.shape[0]" for leaf in leaves]
        if len(sizes) > 1 and self.check_sizes:  # when the call runs (eagerly, api.py did)
            message = ("vmap got inconsistent sizes for array axes to be mapped: "
                       + (f"axis_size is {self.size}; " if self.size is not None else "")
                       + "the mapped axes of " + ", ".join(leaves) + " differ in size")
            check = self.call("same_batch_size", {"sizes": "(" + ", ".join(sizes) + ",)"},
                              {"message": repr(message)})
            lines.append((0, f"{self.batch_size_name} = {check}", self.fdef.lineno))
        elif self.need_batch_size:
            if not sizes:  # batched values arrive only inside a list built with append
                lines += self.batch_size_from_a_list()
            else:
                lines.append((0, f"{self.batch_size_name} = {sizes[0]}", self.fdef.lineno))
        lines += body.lines
        self.finish(fn, f"{self.spec.name}_batched", lines)

    def finish(self, fn, name, lines, params=None):
        params = self.params if params is None else params
        text = [f"def {name}({', '.join(params)}):"]
        where = [self.fdef.lineno]
        for depth, line, lineno in lines:
            text.append("    " * (depth + 1) + line)
            where.append(lineno)
        fdef = gast.parse("\n".join(text) + "\n").body[0]
        for node in gast.walk(fdef):
            if isinstance(node, (gast.stmt, gast.expr)) and hasattr(node, "lineno"):
                node.lineno = where[node.lineno - 1] or self.fdef.lineno
                node.col_offset = 0
        fn.__globals__.update(self.namespace)
        fn.set_body(fdef)

    def batch_size_from_a_list(self):
        """The batch size of a function whose batched values all arrive in a list built
        with append: its first element's batched leaf (an empty list cannot tell: the read
        raises IndexError at the function's line)."""
        for p, t, b in zip(self.params, self.spec.arg_types, self.arg_bt):
            t = unwrap(t)
            if not isinstance(t, ListType) or t.elt is UNKNOWN:
                continue
            for path, _, batched in bt_.leaves(t.elt, b):
                if batched:
                    return [(0, f"{self.batch_size_name} = "
                                f"{self.path_text(f'{p}[0]', t.elt, path)}.shape[0]",
                             self.fdef.lineno)]
        raise AssertionError("a batched function with no batched argument")

    def batched_leaves(self):
        """Source of every batched array leaf of the arguments (batch axis first)."""
        return [self.path_text(p, t, path)
                for p, t, b in zip(self.params, self.spec.arg_types, self.arg_bt)
                for path, _, batched in bt_.leaves(t, b) if batched]

    def path_text(self, text, t, path):
        """Source for the part of ``text`` (of type ``t``) at ``path``."""
        for key in path:  # (typing reads p["w"] of a namedtuple as its field)
            t = unwrap(t)
            text = f"{text}[{key!r}]"
            t = t.child(key) if isinstance(t, TreeType) else t.elts[key]
        return text

    def container(self, t, parts):
        """Source building a container of type ``t`` from its children's source."""
        return container_source(t, parts, self.tree_ref)

    def tree_ref(self, value):
        return self.global_ref(value, "_" + value.__name__)

    def ret(self, ret):
        node = ret.value
        t = unwrap(self.spec.return_type)
        v = self.val(node)
        b = norm(t, v.b)
        text = v.text
        if self.out_req is not None:
            text = self.coerce(text, t, t, b, self.out_req, allow_static=True)
            b = _either(b, self.out_req)
        self.out_bt = b
        return text

    # --- values ----------------------------------------------------------------------------
    def is_local(self, node):
        return isinstance(node, gast.Name) and node.id in self.locals

    def type_of(self, node):
        if self.is_local(node) and node.id in self.ty:
            return self.ty[node.id]
        if isinstance(node, gast.Constant):
            return Static(node.value)
        t = anno.get(node, "type")
        if t is None:
            raise AssertionError(f"untyped node {gast.dump(node)}")
        return unwrap(t)

    def bt_of(self, node):
        if self.is_local(node):
            return self.bt.get(node.id, False)
        return False

    def text(self, node):
        """Source of an atom or index expression, with renamed locals."""
        if node is None:
            return "None"
        if isinstance(node, tuple):
            return "(" + ", ".join(self.text(n) for n in node) + ("," if len(node) == 1
                                                                   else "") + ")"
        if isinstance(node, gast.Name):
            return self.load(node.id) if node.id in self.locals else node.id
        if isinstance(node, gast.Constant):
            return self.static_text(node.value)
        if isinstance(node, gast.Slice):
            parts = ["" if p is None else self.text(p) for p in (node.lower, node.upper,
                                                                node.step)]
            return f"{parts[0]}:{parts[1]}" + (f":{parts[2]}" if parts[2] else "")
        if isinstance(node, gast.Tuple):
            inner = ", ".join(self.text(e) for e in node.elts)
            return inner + ("," if len(node.elts) == 1 else "")
        from ..backends.source import unparse
        copy = anno.clean_copy(node)
        for n in gast.walk(copy):
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load) and \
                    n.id in self.locals:
                n.id = self.load(n.id)
        return unparse(copy)

    def val(self, node):
        if isinstance(node, gast.Constant):
            return Val(self.static_text(node.value), Static(node.value), False)
        return Val(self.text(node), self.type_of(node), self.bt_of(node))

    def seq_vals(self, node):
        """The elements of a sequence operand (a ``*args`` tuple of nodes or a tuple var)."""
        if isinstance(node, tuple):
            return [self.val(n) for n in node]
        v = self.val(node)
        t = v.t
        if isinstance(t, Static) and isinstance(t.value, (tuple, list)):
            return [Val(f"{v.text}[{k}]", Static(e), False) for k, e in enumerate(t.value)]
        if not isinstance(t, SequenceType):
            raise NoRule(f"a sequence operand of type {t}")
        return [Val(f"{v.text}[{k}]", e, bt_.child(v.b, k)) for k, e in enumerate(t.elts)]

    def view(self, node):
        """A param's value as the op's rule saw it (static values, types for dynamic parts)."""
        from ..ir.infer import param_view
        if node is None:
            return None
        if isinstance(node, tuple):
            return tuple(self.view(n) for n in node)
        if isinstance(node, gast.Slice):
            return slice(*(self.view(p) for p in (node.lower, node.upper, node.step)))
        if isinstance(node, gast.Tuple):
            return tuple(self.view(e) for e in node.elts)
        t = self.type_of(node)
        if isinstance(t, IndexType):
            return t.view
        return param_view(t)

    def node_batched(self, node):
        if node is None:
            return False
        if isinstance(node, tuple):
            return any(self.node_batched(n) for n in node)
        return any(any_(self.bt.get(n.id, False)) for n in gast.walk(node)
                   if isinstance(n, gast.Name) and n.id in self.locals)

    # --- moving batch axes -----------------------------------------------------------------
    def expand(self, v, ndim):
        """A batched ``v`` with size-1 axes after the batch axis, to per-example rank ndim."""
        if not v.batched or v.ndim >= ndim:
            return v
        k = ndim - v.ndim
        axes = tuple(range(1, k + 1))
        name = self.tmp(self._hint(v.text, "e"), self.call(
            "expand_dims", {"a": v.text}, {"axis": literal(axes if k > 1 else 1)}))
        t = ArrayType(v.t.dtype, (True,) * k + v.t.ones, v.t.weak) \
            if isinstance(v.t, ArrayType) else v.t
        return Val(name, t, True)

    def broadcast(self, v, ndim=None):
        """An unbatched ``v`` as a batched value (a broadcast view), of per-example rank
        ``ndim`` (size-1 axes in front of v's own)."""
        if v.batched:
            return self.expand(v, ndim) if ndim is not None else v
        r = v.ndim
        ndim = r if ndim is None else max(ndim, r)
        ones = (1,) * (ndim - r)
        head = "(" + ", ".join([self.B] + [str(o) for o in ones]) + ",)"
        if r == 0:
            shape = head
        elif self.program.backend == "python":
            # an array variable may hold the 0.0 it started as (acc = 0.0, a cotangent): the
            # python backend keeps that scalar where it meets an array. Pad its shape with 1s
            # to the type's rank, or the batch axis would meet a data axis of the batched
            # values it joins. A rank-1 v's length is its size (1 for the scalar)
            shape = f"{head[:-2]}, {v.text}.size)" if r == 1 else \
                f"{head} + ({(1,) * r} + {v.text}.shape)[-{r}:]"
        else:  # a Numba variable holds one type: v has its rank
            shape = f"{head} + {v.text}.shape"
        name = self.tmp(self._hint(v.text, "b"), self.call(
            "broadcast_to", {"a": v.text}, {"shape": shape}))
        if isinstance(v.t, ArrayType):
            t = ArrayType(v.t.dtype, (True,) * (ndim - r) + v.t.ones, v.t.weak)
        else:
            t = v.t
        return Val(name, t, True)

    def _hint(self, text, suffix):
        base = text if text.isidentifier() else "t"
        return f"{base}_{suffix}"

    def coerce(self, text, t_from, t_to, b_from, b_to, allow_static=False):
        """Source for the value ``text`` (type ``t_from``, batched as ``b_from``) batched as
        ``b_to`` (type ``t_to``): unbatched leaves that must be batched are broadcast,
        batched ones of lower rank get size-1 axes. ``allow_static``: a True leaf of b_to
        on a Static number broadcasts it too."""
        t_from, t_to = unwrap(t_from), unwrap(t_to)
        pairs = keyed_children(t_to)
        if pairs is not None:
            kids_from = children(t_from) or [c for _, c in pairs]
            parts, changed = [], False
            for k, (key, c) in enumerate(pairs):
                sub = self.path_text(text, t_to, (key,))
                new = self.coerce(sub, kids_from[k], c, bt_.child(b_from, k),
                                  bt_.child(b_to, k), allow_static)
                changed |= new != sub
                parts.append(new)
            if not changed:
                return text
            return self.container(t_to, parts)
        want, have = bool(any_(b_to)), bool(any_(b_from))
        if isinstance(t_to, Static) or isinstance(t_from, Static):
            if not (want and not have and allow_static and bt_.is_array_like(t_from)):
                if not isinstance(t_to, ArrayType):
                    return text
        if isinstance(t_to, ListType) or isinstance(t_from, ListType):
            if want and not have:
                raise CannotBatch("a list that must become batched")
            return text
        if not (isinstance(t_to, ArrayType) or bt_.is_array_like(t_to)):
            return text
        if want and not have:
            return self.broadcast(Val(text, t_from, False), rank(t_to)).text
        if want and have and rank(t_from) < rank(t_to):
            return self.expand(Val(text, t_from, True), rank(t_to)).text
        return text

    # --- statements ------------------------------------------------------------------------
    def walk(self, stmts, top=False):
        for k, s in enumerate(stmts):
            self.lineno = getattr(s, "lineno", self.lineno)
            saved = (dict(self.bt), dict(self.ty), dict(self.rename), len(self.out.lines))
            try:
                self.statement(s)
            except _Grow:
                self.bt, self.ty, self.rename = saved[0], saved[1], saved[2]
                del self.out.lines[saved[3]:]
                self.lineno = getattr(s, "lineno", self.lineno)
                self.region(stmts[k:], rest=True, top=top,
                            reason="its results are set on some paths only")
                return

    def statement(self, s):
        if isinstance(s, gast.Assign):
            mark = len(self.out.lines)
            try:
                self.assign(s)
            except NoRule as e:
                del self.out.lines[mark:]  # helpers a rule wrote before giving up
                try:
                    self.region([s], reason=str(e))
                except CannotBatch:
                    if isinstance(e, _CalleeCannotBatch):
                        raise e.error from None  # what the callee could not do says more
                    raise
        elif isinstance(s, gast.Expr):
            self.expr_statement(s)
        elif isinstance(s, gast.If):
            self.if_(s)
        elif isinstance(s, gast.For):
            self.for_(s)
        elif isinstance(s, gast.While):
            self.while_(s)
        elif isinstance(s, gast.Pass):
            pass
        else:
            raise NotImplementedError(f"vmap: statement {type(s).__name__}")

    def set(self, name, t, b):
        t = unwrap(t)
        self.ty[name] = t
        self.bt[name] = norm(t, b)
        self.version[name] = self.version.get(name, 0) + 1
        self.sums.pop(name, None)

    def target(self, name):
        """The name an assignment to ``name`` writes (renamed inside selected branches)."""
        return self.rename.get(name, name)

    def assign(self, s):
        name = s.targets[0].id
        value = s.value
        t = unwrap(anno.get(s.targets[0], "type"))
        target = self.target(name)
        if anno.get(value, "list_pop"):
            lst = value.func.value.id
            if self.safe:
                raise Unsafe("a list pop")
            self.emit(f"{target} = {self.load(lst)}.pop()")
            self.set(name, t, self.bt.get(lst, False))
            return
        if isinstance(t, Static):
            self.emit(f"{target} = {self.static_text(t.value)}")
            self.set(name, t, False)
            return
        op = anno.get(value, "op")
        self._target_name = name
        if op is not None:
            expr, b = self.op_statement(s, op, value, t)
        elif anno.get(value, "callee") is not None:
            expr, b = self.call_statement(value, anno.get(value, "callee"), t)
        else:
            expr, b = self.structural(value, t)
        self.emit(f"{target} = {expr}")
        self.set(name, t, b)
        if op is not None and op.name == "add":
            self.note_sum(name, value)
        force = self.force_bt.get(name)
        if force is not None and not bt_.leq(t, force, self.bt[name]):
            want = join(t, force, self.bt[name])
            self.emit(f"{target} = {self.coerce(target, t, t, self.bt[name], want)}")
            self.set(name, t, want)

    def note_sum(self, name, value):
        """Remember ``name = i + n`` (i an int variable, n an int the same for every example):
        ``x[i:name]`` is then a window of n elements starting at i."""
        nodes = anno.get(value, "operand_nodes") or {}
        a, b = nodes.get("x"), nodes.get("y")
        for start, n in ((a, b), (b, a)):
            if isinstance(start, gast.Name) and start.id in self.locals and \
                    not self.node_batched(n) and _int_scalar(self.type_of(n)):
                self.sums[name] = (start.id, self.version.get(start.id, 0), n)
                return

    def window(self, item):
        """``(start text, length text)`` when the slice node ``item`` is ``i:i + n``."""
        if not isinstance(item, gast.Slice) or item.step is not None or \
                not isinstance(item.lower, gast.Name) or not isinstance(item.upper, gast.Name):
            return None
        info = self.sums.get(item.upper.id)
        if info is None or info[0] != item.lower.id or \
                info[1] != self.version.get(item.lower.id, 0):
            return None
        return self.text(item.lower), self.text(info[2])

    def unchanged(self, value):
        """The statement's own right-hand side, with renamed locals, and constants that are
        no literals (a generated function it calls) as names of the namespace."""
        from ..backends.source import unparse
        copy = _ConstantRefs(self.static_text).visit(anno.clean_copy(value))
        for n in gast.walk(copy):
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load) and \
                    n.id in self.locals:
                n.id = self.load(n.id)
        return unparse(copy)

    def op_statement(self, s, op, value, t):
        from .rules import rule_for
        operand_nodes = anno.get(value, "operand_nodes") or {}
        param_nodes = anno.get(value, "param_nodes") or {}
        resolved = anno.get(value, "resolved_params") or {}
        touched = any(self.node_batched(n) for n in operand_nodes.values()) or \
            any(self.node_batched(n) for n in param_nodes.values())
        if not touched:
            return self.unchanged(value), False
        vals = {}
        for name in op.operands:
            node = operand_nodes.get(name)
            if node is None:
                continue
            if op.name in ("stack", "concatenate") and \
                    isinstance(self.type_of(node), ListType):
                vals[name] = self.val(node)  # built by append: see rules.stack
            elif isinstance(node, tuple) or isinstance(self.type_of(node), SequenceType) or \
                    name in _SEQUENCE_OPERANDS.get(op.name, ()):
                vals[name] = self.seq_vals(node)
            else:
                vals[name] = self.val(node)
        params = {}
        for name, node in param_nodes.items():
            params[name] = Param(self.text(node), self.view(node), self.node_batched(node),
                                 node)
        for name, value_ in resolved.items():
            params[name] = Param(self.static_text(value_), value_, False)
        rule = rule_for(op)
        if rule is None:
            raise NoRule(f"no batching rule for {op.name}()")
        return rule(self, op, vals, params, t)

    # --- calls of user functions -------------------------------------------------------------
    def call_statement(self, value, callee, t):
        sig = inspect.signature(callee.fn)
        bound = sig.bind(*value.args, **{k.arg: k.value for k in value.keywords})
        nodes = [bound.arguments.get(p) for p in sig.parameters]
        arg_bt = [self.bt_of(n) if n is not None else False for n in nodes]
        collective = getattr(callee.fn, "astjax_collective", None)
        if collective is not None:
            return self.collective(collective, value, nodes, arg_bt, t, callee)
        if not any(any_(b) for b in arg_bt):
            return self.unchanged(value), False
        texts = [self.text(n) if n is not None else self.static_text(p.default)
                 for n, p in zip(nodes, sig.parameters.values())]
        origin = _vjp_origin(callee.fn)
        try:
            if origin is not None:
                try:  # the derivative code batched as it is (tapes of batched values)
                    fn, out_bt, flags = batched_function(callee, arg_bt, None, self.one,
                                                         self.axis_name, check_sizes=False)
                except CannotBatch:  # tapes under control flow that differs between examples
                    return self.vjp_call(callee, origin, nodes, texts, arg_bt)
            else:
                fn, out_bt, flags = batched_function(callee, arg_bt, None, self.one,
                                                     self.axis_name, check_sizes=False)
        except CannotBatch as e:  # (a vjp's tapes pushed in a per-example branch, say)
            raise _CalleeCannotBatch(self.at_this_call(e)) from None
        if self.safe and flags["unsafe"]:
            raise Unsafe(f"{callee.name} loops or recurses")
        for k, node in enumerate(nodes):  # lists the callee appends batched values to
            out = flags.get("lists_out", {}).get(k)
            if out and isinstance(node, gast.Name):
                have = self.list_bt.get(node.id, False)
                lt = unwrap(self.ty.get(node.id))
                new = join(lt.elt, have, out) if isinstance(lt, ListType) and \
                    lt.elt is not UNKNOWN else any_(have) or any_(out)
                if new != have:
                    self.list_bt[node.id] = self.bt[node.id] = new
                    self.changed = True
        name = self.global_ref(fn, fn.__name__)
        return f"{name}({', '.join(texts)})", out_bt

    def at_this_call(self, e):
        """``e`` located at this call where it names a line of astjax's own code (a lax
        function's derivative) and this code is not astjax's."""
        where = re.match(r"vmap: (.+?):\d+: ", str(e))
        if where is None or not _in_astjax(where.group(1)) or _in_astjax(self.parsed.filename):
            return e
        return CannotBatch(f"vmap: {self.parsed.filename}:{self.lineno}: in astjax's code for "
                           f"this call: {str(e)[where.end():]}")

    def collective(self, collective, value, nodes, arg_bt, t, callee):
        """``psum(x, name)`` and friends: over the batch axis when name is this vmap's."""
        kind, name = collective
        x = self.val(nodes[0]) if kind != "axis_index" else None
        axis = 0
        if kind == "all_gather":
            axis = self.type_of(nodes[2]).value if nodes[2] is not None else 0
            rank = (x.t.ndim if isinstance(x.t, ArrayType) else 0) + 1  # the result's
            if not isinstance(axis, int) or not -rank <= axis < rank:
                raise CannotBatch(f"all_gather: axis {axis!r} is out of range for a result "
                                  f"of rank {rank}")
            axis %= rank
        if name != self.axis_name:  # an outer vmap's axis: that vmap replaces the call
            if kind == "all_gather" and x.batched:
                # each example's gathered axis sits after this vmap's batch axis
                fn = self.global_ref(callee.fn, callee.fn.__name__)
                return f"{fn}({x.text}, {name!r}, axis={axis + 1})", True
            return self.unchanged(value), (x.b if x is not None else False)
        if kind == "axis_index":
            return self.call("arange", {}, {"start": self.B, "dtype": "'int32'"}), True
        if not x.batched:
            if kind == "psum":
                return self.call("multiply", {"x": self.call("asarray", {"a": x.text}),
                                              "y": self.B}), False
            if kind == "pmean":
                return self.call("true_divide", {"x": self.call("asarray", {"a": x.text}),
                                                 "y": "1"}), False
            if kind == "all_gather":
                return self._gathered_at(self.broadcast(x).text, axis), False
            return self.call("asarray", {"a": x.text}), False
        reduction = {"psum": "sum", "pmean": "mean", "pmax": "max", "pmin": "min"}.get(kind)
        if reduction is not None:
            return self.call(reduction, {"a": x.text}, {"axis": "0"}), False
        # all_gather: the whole batch, the same for every example
        return self._gathered_at(x.text, axis), False

    def _gathered_at(self, text, axis):
        """The batch (axis 0 of ``text``) moved to ``axis``."""
        if axis == 0:
            return text
        return self.call("moveaxis", {"a": text}, {"source": "0", "destination": str(axis)})

    def vjp_call(self, callee, origin, nodes, texts, arg_bt):
        """A call of ``f_vjp(x..., g)`` with batched values: the vjp of f batched, with every
        floating-point input batched (so that each example gets its own cotangent)."""
        from ..ad.reverse import vjp_function
        primal, live = origin
        n = len(primal.arg_types)
        in_bt = []
        for t, b in zip(primal.arg_types, arg_bt[:n]):
            in_bt.append(_float_batched(t, b))
        out_req = full(primal.return_type)
        fn, out_bt, flags = batched_function(primal, in_bt, out_req, self.one, self.axis_name,
                                             check_sizes=False)
        if self.safe and flags["unsafe"]:
            raise Unsafe(f"{primal.name} loops or recurses")
        types_ = tuple(bt_.batched_type(t, b, self.one) for t, b in zip(primal.arg_types,
                                                                         in_bt))
        spec_b = self.program.specialize(fn, types_)
        vjp_fn = vjp_function(spec_b, live)
        args = []
        for k, (node, text) in enumerate(zip(nodes, texts)):
            t = callee.arg_types[k]
            have = arg_bt[k]
            want = in_bt[k] if k < n else full(t)
            args.append(self.coerce(text, t, t, have, want))
        name = self.global_ref(vjp_fn, vjp_fn.__name__)
        return f"{name}({', '.join(args)})", full(callee.return_type)

    # --- everything else: copies, containers, shapes, builtins -------------------------------
    def structural(self, value, t):
        import builtins
        if isinstance(value, (gast.Name, gast.Constant)) or (
                isinstance(value, gast.Attribute) and not self.is_local_chain(value)):
            v = self.val(value)
            return v.text, v.b
        if isinstance(value, (gast.Tuple, gast.List)):
            if isinstance(t, ListType):  # [] starts a list (batched if anything appended is)
                return "[]", self.list_bt.get(self._target_name, False)
            vals = [self.val(e) for e in value.elts]
            inner = ", ".join(v.text for v in vals)
            if isinstance(value, gast.List):
                return f"[{inner}]", tuple(v.b for v in vals)
            return f"({inner}{',' if len(vals) == 1 else ''})", tuple(v.b for v in vals)
        if anno.get(value, "tree_build") is not None:  # {"a": x}, P(x, y)
            return self.unchanged(value), tuple(self.val(c).b
                                                for c in anno.get(value, "tree_build"))
        if isinstance(value, gast.Subscript) and isinstance(t, IndexType):
            # s_[...] built at run time: with batched parts it gets the batch index in front
            if not self.node_batched(value.slice):
                return self.unchanged(value), False
            from .rules import index_object
            return index_object(self, self.text(value.value), value.slice), True
        if isinstance(value, gast.Subscript):
            base = self.val(value.value)
            bt_base = base.b
            bt_t = base.t
            if isinstance(bt_t, ListType):
                return self.unchanged(value), bt_base
            key = self.view(value.slice)
            if isinstance(bt_t, SequenceType):
                if isinstance(key, int):
                    return self.unchanged(value), bt_.child(bt_base, key)
                if isinstance(key, slice):
                    return self.unchanged(value), tuple(
                        bt_.child(bt_base, k) for k in range(len(bt_t.elts))[key])
                kids = [bt_.norm(e, bt_.child(bt_base, k)) for k, e in enumerate(bt_t.elts)]
                if all(k == kids[0] for k in kids):
                    if self.node_batched(value.slice):
                        raise NoRule("a tuple indexed by a batched value")
                    return self.unchanged(value), kids[0]
                raise NoRule("a tuple of differently batched elements indexed at run time")
            if isinstance(bt_t, TreeType):
                return self.unchanged(value), bt_.child(bt_base, anno.get(value, "tree_child"))
            return self.unchanged(value), False
        if isinstance(value, gast.Attribute):
            base = self.val(value.value)
            if isinstance(base.t, TreeType):
                return self.unchanged(value), bt_.child(base.b, anno.get(value, "tree_child"))
            if isinstance(base.t, ArrayType) and base.batched:
                if value.attr == "shape":
                    return f"{base.text}.shape[1:]", False
                if value.attr == "size":
                    if base.ndim == 0:
                        return "1", False
                    dims = " * ".join(f"{base.text}.shape[{i}]" for i in range(1, base.ndim + 1))
                    return dims, False
                raise NoRule(f"x.{value.attr} of a batched array")
            return self.unchanged(value), False
        if isinstance(value, gast.BinOp):  # tuple arithmetic
            a, b = self.val(value.left), self.val(value.right)
            ta = a.t
            if isinstance(value.op, gast.Add):
                parts = []
                for v in (a, b):
                    if isinstance(v.t, SequenceType):
                        parts += [bt_.child(v.b, k) for k in range(len(v.t.elts))]
                    else:
                        parts += [False] * len(v.t.value)
                return self.unchanged(value), tuple(parts)
            seq = a if isinstance(ta, SequenceType) else b
            return self.unchanged(value), tuple(
                bt_.child(seq.b, k % len(seq.t.elts)) for k in range(len(t.elts)))
        if isinstance(value, gast.UnaryOp) and isinstance(value.op, gast.Not):
            v = self.val(value.operand)
            if v.batched:
                return self.call("logical_not", {"x": v.text}), True
            return self.unchanged(value), False
        if isinstance(value, gast.Call):
            return self.builtin_call(value, t, builtins)
        raise NoRule(f"{type(value).__name__}")

    def is_local_chain(self, node):
        while isinstance(node, gast.Attribute):
            node = node.value
        return isinstance(node, gast.Name) and node.id in self.locals

    def builtin_call(self, value, t, builtins):
        kind = anno.get(value, "builtin")
        conversion = anno.get(value, "scalar_conversion")
        view = anno.get(value, "dict_view")
        args = [self.val(a) for a in value.args]
        if not any(a.batched for a in args) and not (
                isinstance(value.func, gast.Attribute) and self.is_local(value.func.value) and
                any_(self.bt_of(value.func.value))):
            return self.unchanged(value), False
        from .rules import broadcasting_call
        if kind in ("minimum", "maximum"):
            vals = args[0].t.elts if len(args) == 1 else None
            if vals is not None:
                args = [Val(f"{args[0].text}[{k}]", e, bt_.child(args[0].b, k))
                        for k, e in enumerate(vals)]
            acc = args[0]
            for other in args[1:]:
                text = broadcasting_call(self, kind, {"x": acc, "y": other})
                acc = Val(self.tmp("t", text), ArrayType(
                    REGISTRY[kind].infer({"x": acc.t, "y": other.t}, {}).dtype,
                    (False,) * max(acc.ndim, other.ndim)), True)
            return acc.text, True
        if kind == "sum":
            seq = args[0]
            if isinstance(seq.t, ListType) and len(args) == 1:
                return self.unchanged(value), any_(seq.b)  # elements share one type
            if not isinstance(seq.t, SequenceType):
                raise NoRule("sum() of a batched list")
            items = [Val(f"{seq.text}[{k}]", e, bt_.child(seq.b, k))
                     for k, e in enumerate(seq.t.elts)]
            acc = args[1] if len(args) > 1 else Val("0", Static(0), False)
            for item in items:
                text = broadcasting_call(self, "add", {"x": acc, "y": item})
                out_t = REGISTRY["add"].infer({"x": acc.t, "y": item.t}, {})
                acc = Val(self.tmp("t", text), out_t, acc.batched or item.batched)
            return acc.text, acc.batched
        if conversion:
            v = args[0]
            from .. import dtypes
            dtype = {"float": dtypes.default_float(), "int": dtypes.default_int(),
                     "bool": dtypes.bool_}[conversion]
            return self.call("astype", {"x": v.text}, {"dtype": repr(str(dtype))}), True
        if view is not None:
            d = self.val(value.func.value)
            kind_, keys = view
            kids = [bt_.child(d.b, k) for k in range(len(keys))]
            if kind_ == "keys":
                return self.unchanged(value), tuple(False for _ in keys)
            if kind_ == "values":
                return self.unchanged(value), tuple(kids)
            return self.unchanged(value), tuple((False, k) for k in kids)
        func = anno.get(value.func, "type")
        target = func.value if isinstance(func, Static) else None
        if target is builtins.len:
            v = args[0]
            if isinstance(v.t, ArrayType):
                return f"{v.text}.shape[1]", False
            return self.unchanged(value), False
        if target in (builtins.tuple, builtins.list):
            return self.unchanged(value), args[0].b
        raise NoRule(f"a call of {getattr(target, '__name__', target)!r} on batched values")

    def expr_statement(self, s):
        call = s.value
        if anno.get(call, "list_append"):
            if self.safe:
                raise Unsafe("a list append")
            lst = call.func.value.id
            item = self.val(call.args[0])
            lt = unwrap(self.ty.get(lst))
            elt = lt.elt if isinstance(lt, ListType) else item.t
            have = self.list_bt.get(lst, False)
            new = join(elt, have, item.b) if elt is not UNKNOWN else \
                any_(have) or any_(item.b)  # (each append's type: the list's is unknown)
            if new != have:
                self.list_bt[lst] = new
                self.changed = True
            want = self.list_bt.get(lst, False)
            text = self.coerce(item.text, item.t, elt if elt is not UNKNOWN else item.t,
                               item.b, want)
            self.emit(f"{self.load(lst)}.append({text})")
            self.bt[lst] = want
            if elt is UNKNOWN and not isinstance(unwrap(item.t), Static):
                self.ty[lst] = ListType(unwrap(item.t))  # what the rules joining it read
            return
        if self.node_batched(call):
            op = anno.get(call, "op")
            if op is not None and op.rules.get("effect"):  # debug_callback: per example
                self.emit(self.op_statement(s, op, call, anno.get(call, "type"))[0])
            if op is not None:
                return  # an op's result nobody reads: other ops have no effects
            if anno.get(call, "callee") is not None:  # for its effects (a debug.print)
                self.emit(self.call_statement(call, anno.get(call, "callee"),
                                              anno.get(call, "type"))[0])
                return
            from ..errors import UserNotImplementedError
            raise self.spec.parsed.error(s, "vmap of a call whose result is discarded, on "
                                         "batched values, is not supported yet",
                                         UserNotImplementedError)
        self.emit(self.unchanged(call))

    # --- if ----------------------------------------------------------------------------------
    def if_(self, s):
        taken = anno.get(s, "taken")
        if taken is not None:
            self.walk(s.body if taken else s.orelse)
            return
        cond = self.val(s.test)
        merge = anno.get(s, "merge")
        merged = {k: unwrap(v) for k, v in merge[2].items()} if merge else {}
        if not cond.batched:
            return self.plain_if(s, cond, merged)
        try:
            with self.state(restore=False) as saved, self.dry_run():
                self.safe += 1
                try:
                    self.select_if(s, cond, merged)
                finally:
                    self.safe -= 1
        except Unsafe as e:
            self.bt, self.ty, self.rename = dict(saved[0]), dict(saved[1]), dict(saved[2])
            self.region([s], after=merged, reason=str(e))
            return
        self.bt, self.ty, self.rename = dict(saved[0]), dict(saved[1]), dict(saved[2])
        self.safe += 1
        try:
            self.select_if(s, cond, merged)
        finally:
            self.safe -= 1

    def plain_if(self, s, cond, merged):
        envs, writers = [], []
        with self.state(restore=False) as saved:
            for branch in (s.body, s.orelse):
                self.bt, self.ty, self.rename = dict(saved[0]), dict(saved[1]), dict(saved[2])
                w = Writer()
                with self.into(w):
                    self.walk(branch)
                writers.append(w)
                envs.append((dict(self.bt), dict(self.ty)))
        self.bt, self.ty, self.rename = dict(saved[0]), dict(saved[1]), dict(saved[2])
        self.lineno = s.lineno
        names = sorted(set(envs[0][0]) | set(envs[1][0]))
        new_bt, new_ty = {}, {}
        for v in names:
            t = merged.get(v)
            if t is None or v not in self.locals or _untouched(v, saved, envs, t):
                continue
            present = [e for e in envs if v in e[0]]
            b = present[0][0][v]
            for e in present[1:]:
                b = join(t, b, e[0][v])
            new_bt[v], new_ty[v] = norm(t, b), t
            if len(present) == 1 and v not in saved[1] or \
                    any(_maybe(e[1].get(v)) for e in present):
                new_ty[v] = _Maybe(t)  # set on one path only
        for (ebt, ety), w in zip(envs, writers):
            with self.into(w):
                for v in names:
                    if v in new_bt and v in ebt and v in ety:
                        self.merge_to(v, ety[v], new_ty[v], ebt[v], new_bt[v])
        self.emit(f"if {cond.text}:")
        self.out.extend(writers[0])
        if not writers[0].lines:
            self.out.add("pass", self.lineno, 1)
        if writers[1].lines:
            self.out.add("else:", None)
            self.out.extend(writers[1])
        self.bt.update(new_bt)
        self.ty.update(new_ty)

    def merge_to(self, v, t_from, t_to, b_from, b_to):
        """Where paths meet: give ``v`` the batching ``b_to`` (type ``t_to``)."""
        if not self.needs_coerce(t_from, t_to, b_from, b_to):
            return
        if _maybe(self.ty.get(v)):
            # it may be unset here: next pass, it is batched where it is set
            have = self.force_bt.get(v, False)
            new = join(t_to, have, b_to)
            if new != have:
                self.force_bt[v] = new
                self.changed = True
            return
        if isinstance(unwrap(t_to), ListType) or isinstance(unwrap(t_from), ListType):
            # a list batched by a later append: it is made batched from the start next pass
            elt = unwrap(t_to).elt if isinstance(unwrap(t_to), ListType) else UNKNOWN
            have = self.list_bt.get(v, False)
            new = join(elt, have, b_to) if elt is not UNKNOWN else any_(b_to) or any_(have)
            if new != have:
                self.list_bt[v] = new
                self.changed = True
            return
        self.emit(f"{self.target(v)} = "
                  f"{self.coerce(self.load(v), t_from, t_to, b_from, b_to)}")

    def needs_coerce(self, t_from, t_to, b_from, b_to):
        if b_from == b_to and t_from == t_to or isinstance(unwrap(t_to), Static):
            return False
        if not bt_.leq(t_to, b_from, b_to) or norm(t_to, b_from) != norm(t_to, b_to):
            return True
        # batched leaves of lower rank than the merged type get size-1 axes
        for (_, lf, bf), (_, lt, bt2) in zip(bt_.leaves(t_from, b_from),
                                             bt_.leaves(t_to, b_to)):
            if bf and bt2 and lf.ndim < lt.ndim:
                return True
        return False

    def select_if(self, s, cond, merged):
        """Both branches, then ``where(cond, ...)`` for what they assign."""
        assigned = [v for v in bt_.stores(s.body + s.orelse) if v in self.locals]
        results = []
        with self.state(restore=False) as saved:
            for branch, tag in ((s.body, "t"), (s.orelse, "f")):
                self.bt, self.ty, self.rename = dict(saved[0]), dict(saved[1]), dict(saved[2])
                mine = [v for v in bt_.stores(branch) if v in self.locals]
                needs_entry_value = _entry_value_test(branch)
                for v in mine:
                    new = self.fresh(f"{v}_{tag}")
                    if v in saved[1] and needs_entry_value(v):
                        self.emit(f"{new} = {self.load(v)}")
                    self.rename[v] = new
                self.walk(branch)
                results.append((dict(self.bt), dict(self.ty), dict(self.rename)))
        self.bt, self.ty, self.rename = dict(saved[0]), dict(saved[1]), dict(saved[2])
        self.lineno = s.lineno
        from .rules import select
        outside = self.read_outside([s])
        if isinstance(s.test, gast.Name) and s.test.id in assigned:
            # the branch changes its own test (``if first: first = False``): every select
            # reads the test's value on entry
            entry = self.fresh(f"{s.test.id}_on")
            self.emit(f"{entry} = {cond.text}")
            cond = Val(entry, cond.t, cond.b)
        for v in assigned:
            t = merged.get(v)
            if t is None or v not in outside:
                continue
            target = self.target(v)
            defined = [r for r in results if v in r[1]]
            if isinstance(t, Static):
                self.emit(f"{target} = {self.static_text(t.value)}")
                self.set(v, t, False)
                continue
            if isinstance(t, ListType):
                raise Unsafe("a list assigned in a branch")
            if len(defined) == 1:
                r = defined[0]
                self.emit(f"{target} = {r[2].get(v, v)}")
                self.set(v, t, r[0][v])
                continue
            (bt_a, ty_a, ren_a), (bt_b, ty_b, ren_b) = results
            a = Val(ren_a.get(v, self.load(v)), ty_a[v], bt_a[v])
            b = Val(ren_b.get(v, self.load(v)), ty_b[v], bt_b[v])
            expr = select(self, cond, a, b, t)
            self.emit(f"{target} = {expr}")
            self.set(v, t, full(t))

    # --- loops -------------------------------------------------------------------------------
    def loop_types(self, s):
        entry, body_end, head = anno.get(s, "merge")
        head = {k: unwrap(v) for k, v in head.items()}
        after = {k: (v if type(v).__name__ != "Undefined" else unwrap(body_end.get(k, v)))
                 for k, v in head.items()}
        return head, after

    def fixpoint(self, s, head_ty, force=()):
        """The batching of the loop's variables at its head: what the entry has, joined
        with what the body makes of it, until nothing changes."""
        head_bt = {}
        for v, b in self.bt.items():
            t = head_ty.get(v, self.ty.get(v))
            head_bt[v] = norm(t, b) if t is not None else b
        for v in force:
            if v in head_bt:
                head_bt[v] = full(head_ty.get(v, self.ty.get(v)))
        for _ in range(50):
            with self.state(), self.dry_run():
                self.bt = dict(head_bt)
                self.ty.update({k: t for k, t in head_ty.items()
                                if type(t).__name__ != "Undefined"})
                if isinstance(s, gast.For):
                    self.bt[s.target.id], self.ty[s.target.id] = False, anno.get(s.target,
                                                                                "type")
                self.walk(s.body)
                end = dict(self.bt)
            new = dict(head_bt)
            for v, b in end.items():
                t = head_ty.get(v)
                if t is None or type(t).__name__ == "Undefined":
                    t = self.ty.get(v)
                if t is None:
                    new[v] = b if v not in new else (new[v] or b)
                    continue
                new[v] = join(t, new.get(v, False), b)
            for v in force:
                if v in new and head_ty.get(v) is not None:
                    new[v] = full(head_ty[v])
            if new == head_bt:
                return head_bt
            head_bt = new
        raise NotImplementedError("vmap: the batching of this loop's variables does not settle")

    def enter_loop(self, s, head_ty, head_bt, after):
        """Broadcast what the loop needs batched before it starts."""
        needs_entry_value = _entry_value_test(s.body)
        for v, b in head_bt.items():
            if v not in self.ty and v in after and any_(b) and needs_entry_value(v):
                # first set in the body, but a later trip reads the batched value an earlier
                # one left (``if k == 0: ys = zeros(...)``, then ``ys = ys.at[k].set(y)``):
                # next pass it is batched where it is set
                have = self.force_bt.get(v, False)
                new = join(after[v], have, b)
                if new != have:
                    self.force_bt[v] = new
                    self.changed = True
        for v in list(self.bt):
            t = head_ty.get(v)
            if t is None or type(t).__name__ == "Undefined" or v not in self.ty:
                continue
            self.merge_to(v, self.ty[v], t, self.bt[v], head_bt.get(v, False))
        for v, t in head_ty.items():
            if type(t).__name__ != "Undefined":
                self.ty[v] = t
        # variables first set in the body get their batching there
        self.bt.update({v: b for v, b in head_bt.items() if v in self.ty})

    def loop_body(self, s, head_ty, head_bt, epilogue=None):
        w = Writer()
        with self.into(w):
            self.walk(s.body)
            self.lineno = s.lineno
            for v, b in head_bt.items():
                t = head_ty.get(v)
                if t is None or type(t).__name__ == "Undefined" or v not in self.bt:
                    continue
                self.merge_to(v, self.ty[v], t, self.bt[v], b)
            if epilogue is not None:
                epilogue()
        return w

    def for_(self, s):
        before = _defined(self.ty)
        bounds = [self.val(a) for a in s.iter.args]
        head_ty, after = self.loop_types(s)
        if any(b.batched for b in bounds):
            return self.masked_loop(s, head_ty, after, bounds)
        head_bt = self.fixpoint(s, head_ty)
        self.enter_loop(s, head_ty, head_bt, after)
        self.bt[s.target.id], self.ty[s.target.id] = False, anno.get(s.target, "type")
        header = f"for {self.target(s.target.id)} in range({', '.join(b.text for b in bounds)}):"
        w = self.loop_body(s, head_ty, head_bt)
        self.emit(header)
        self.out.extend(w)
        if not w.lines:
            self.out.add("pass", self.lineno, 1)
        self.after_loop(after, head_bt, before)

    def after_loop(self, after, head_bt, before):
        """Types and batching after a loop; ``before``: what was set before it (the rest
        may be unset after no trips)."""
        for v, t in after.items():
            if type(t).__name__ != "Undefined":
                self.ty[v] = t if v in before else _Maybe(t)
        for v, b in head_bt.items():
            if v in self.ty:
                self.bt[v] = norm(self.ty[v], b)

    def while_(self, s):
        before = _defined(self.ty)
        head_ty, after = self.loop_types(s)
        test = s.test.id
        head_bt = self.fixpoint(s, head_ty)
        if any_(head_bt.get(test, False)):
            return self.masked_loop(s, head_ty, after, None)
        self.enter_loop(s, head_ty, head_bt, after)
        w = self.loop_body(s, head_ty, head_bt)
        self.emit(f"while {self.load(test)}:")
        self.out.extend(w)
        self.after_loop(after, head_bt, before)

    def masked_loop(self, s, head_ty, after, bounds):
        """A loop whose condition (or trip count) differs between examples: run it while any
        example is active; finished examples keep their values (``where``)."""
        is_for = isinstance(s, gast.For)
        entry_vars = set(self.ty)
        body_stores = [v for v in bt_.stores(s.body) if v in self.locals]
        masked = [v for v in body_stores if v in entry_vars
                  and not isinstance(head_ty.get(v), (Static, type(None)))
                  and type(head_ty.get(v)).__name__ != "Undefined"]
        if not is_for:
            masked = [v for v in masked if v != s.test.id]
        outside = self.read_outside([s])
        escaping = [v for v in body_stores if v not in entry_vars and v in outside
                    and not (is_for and v == s.target.id)]
        if is_for and s.target.id in outside:
            escaping.append(s.target.id)
        saved = (dict(self.bt), dict(self.ty), dict(self.rename))
        try:
            if escaping:
                raise Unsafe(f"{escaping[0]!r} is first set inside the loop and used after it")
            if is_for and not self.for_bounds_ok(bounds):
                raise Unsafe("a range() with a step known only at run time")
            with self.dry_run():
                self.safe += 1
                try:
                    self._masked(s, head_ty, after, bounds, masked)
                finally:
                    self.safe -= 1
        except Unsafe as e:
            self.bt, self.ty, self.rename = dict(saved[0]), dict(saved[1]), dict(saved[2])
            self.region([s], after=after, reason=str(e))
            return
        self.bt, self.ty, self.rename = dict(saved[0]), dict(saved[1]), dict(saved[2])
        self.safe += 1
        try:
            self._masked(s, head_ty, after, bounds, masked)
        finally:
            self.safe -= 1

    def for_bounds_ok(self, bounds):
        if len(bounds) < 3:
            return True
        step = bounds[2]
        return isinstance(step.t, Static) and isinstance(step.t.value, int) and step.t.value

    def _masked(self, s, head_ty, after, bounds, masked):
        from .rules import select
        before = _defined(self.ty)
        is_for = isinstance(s, gast.For)
        force = list(masked) + ([] if is_for else [s.test.id])
        head_bt = self.fixpoint(s, head_ty, force=force)
        self.enter_loop(s, head_ty, head_bt, after)
        if is_for:
            lo, hi, step = self.range_parts(bounds)
            trips = self.trip_count(lo, hi, step)
            k = self.fresh("k")
            self.emit(f"for {k} in range({self.call('max', {'a': trips.text})}):")
            active_expr = self.call("less", {"x": k, "y": trips.text})
        else:
            test = s.test.id
            any_name = self.fresh(f"{test}_any")
            self.emit(f"{any_name} = {self.call('any', {'a': self.load(test)})}")
            self.emit(f"while {any_name}:")
        w = Writer()
        with self.into(w):
            if is_for:
                active = self.tmp("active", active_expr)
                i_expr, i_b = self.loop_index(lo, step, k)
                target = s.target.id
                self.emit(f"{self.target(target)} = {i_expr}")
                self.bt[target] = i_b
                self.ty[target] = anno.get(s.target, "type")
            else:
                active = self.tmp("active", self.load(s.test.id))
            olds = {}
            for v in masked:
                olds[v] = (self.tmp(f"{v}_old", self.load(v)), self.ty[v], self.bt[v])
            self.walk(s.body)
            self.lineno = s.lineno
            for v in masked:
                old, t_old, b_old = olds[v]
                t = head_ty[v]
                new = Val(self.load(v), self.ty[v], self.bt[v])
                expr = select(self, Val(active, ArrayType(_bool(), ()), True), new,
                              Val(old, t_old, b_old), t)
                self.emit(f"{self.target(v)} = {expr}")
                self.set(v, t, full(t))
            if not is_for:
                test = s.test.id
                self.emit(f"{self.target(test)} = "
                          f"{self.call('logical_and', {'x': active, 'y': self.load(test)})}")
                self.set(test, self.ty[test], True)
                self.emit(f"{any_name} = {self.call('any', {'a': self.load(test)})}")
            for v, b in head_bt.items():
                t = head_ty.get(v)
                if t is None or type(t).__name__ == "Undefined" or v not in self.bt:
                    continue
                self.merge_to(v, self.ty[v], t, self.bt[v], b)
        self.out.extend(w)
        self.after_loop(after, head_bt, before)

    def range_parts(self, bounds):
        if len(bounds) == 1:
            return Val("0", Static(0), False), bounds[0], 1
        step = bounds[2].t.value if len(bounds) == 3 else 1
        return bounds[0], bounds[1], step

    def trip_count(self, lo, hi, step):
        """Per-example ``len(range(lo, hi, step))`` (batched)."""
        from .rules import broadcasting_call
        int_t = ArrayType(_int(), ())
        if step > 0:
            a, b, s_ = hi, lo, step
        else:
            a, b, s_ = lo, hi, -step
        diff = Val(self.tmp("t", broadcasting_call(self, "subtract", {"x": a, "y": b})),
                   int_t, True)
        if s_ != 1:
            diff = Val(self.tmp("t", self.call("add", {"x": diff.text, "y": str(s_ - 1)})),
                       int_t, True)
            diff = Val(self.tmp("t", self.call("floor_divide", {"x": diff.text,
                                                                "y": str(s_)})), int_t, True)
        trips = self.tmp("trips", self.call("maximum", {"x": diff.text, "y": "0"}))
        return Val(trips, int_t, True)

    def loop_index(self, lo, step, k):
        expr = k if step == 1 else f"{k} * {step}"
        if isinstance(lo.t, Static) and lo.t.value == 0:
            return expr, False
        return self.call("add", {"x": lo.text, "y": expr}), lo.batched

    # --- the fallback: a loop over the examples ------------------------------------------------
    def read_outside(self, stmts):
        """Local names read somewhere outside ``stmts`` (candidates for what they produce).
        A compound statement's own test counts as outside: a loop reads it again."""
        inside = set()
        for s in stmts:
            parts = (s.body + s.orelse) if isinstance(s, (gast.If, gast.For, gast.While)) \
                else [s]
            inside |= {id(n) for p in parts for n in gast.walk(p)}
        out = set()
        for n in gast.walk(self.fdef):
            if id(n) not in inside and isinstance(n, gast.Name) and \
                    isinstance(n.ctx, gast.Load):
                out.add(n.id)
        # a loop around them runs them again: what it reads elsewhere, and what they read
        # before assigning it (a temporary set and read inside a branch is neither)
        loops = self.loops_around(stmts[0])
        for loop in loops:
            out |= {n.id for n in gast.walk(loop) if isinstance(n, gast.Name) and
                    isinstance(n.ctx, gast.Load) and id(n) not in inside}
        if loops:
            out |= _exposed_reads(stmts)[0]
        return out

    def loops_around(self, stmt):
        """The loops (of the user's function) that contain ``stmt``."""
        found = []

        def visit(stmts, around):
            for s in stmts:
                if s is stmt:
                    found.extend(around)
                    return True
                inner = around + [s] if isinstance(s, (gast.For, gast.While)) else around
                for field in ("body", "orelse"):
                    if visit(getattr(s, field, None) or [], inner):
                        return True
            return False
        visit(self.fdef.body, [])
        return found

    def region(self, stmts, after=None, reason="", rest=False, top=False):
        """Run ``stmts`` once per example: a generated per-example function, called in a loop,
        its results stacked along the batch axis. ``rest``: stmts are the rest of a block."""
        if self.safe:
            raise Unsafe(reason)
        self.flags["unsafe"] = True
        live_in = [v for v in bt_.loads(stmts) if v in self.locals and v in self.ty
                   and not _maybe(self.ty[v])]
        # the rest of the function's top level is followed by its return only
        outside = set(bt_.loads([self.fdef.body[-1]])) if top else self.read_outside(stmts)
        types_after = _types_through(stmts, self.ty)
        if after is not None:
            types_after.update({k: v for k, v in after.items()
                                if type(v).__name__ not in ("Undefined", "MaybeUndefined")})
        live_out = [v for v in bt_.stores(stmts) if v in self.locals and v in outside
                    and v in types_after]
        unset = [v for v in live_out if (v not in self.ty or _maybe(self.ty[v]))
                 and v not in _always_set(stmts)]
        if unset and not top:  # (the function's own code only reads them where they are set)
            raise _Grow(unset)
        # a result the code may leave as it was (set on some paths only) goes in as well
        live_in += [v for v in live_out if v in self.ty and v not in live_in
                    and not _maybe(self.ty[v])]
        for v in live_in + live_out:
            t = types_after.get(v, self.ty.get(v))
            if isinstance(unwrap(self.ty.get(v, t)), ListType) or isinstance(t, ListType):
                raise CannotBatch(
                    f"vmap: {self.parsed.filename}:{self.lineno}: cannot run this code once per "
                    f"example ({reason}): it changes the list {v!r}")
        kind = _collective_over(stmts, self.axis_name) if self.axis_name is not None else None
        if kind is not None:  # run per example, it would reduce over one example only
            raise CannotBatch(f"vmap: {self.parsed.filename}:{self.lineno}: cannot run this "
                              f"code once per example ({reason}): it calls {kind} over the "
                              f"vmap's axis {self.axis_name!r}")
        for v in live_out:
            if not _stackable(types_after[v]):
                raise CannotBatch(f"vmap: {self.parsed.filename}:{self.lineno}: cannot run "
                                  f"this code once per example ({reason}): it makes a "
                                  f"{types_after[v]}")
        leaves = []  # (variable, path, leaf type)
        for v in live_out:
            for path, lt, _ in bt_.leaves(types_after[v], True):
                leaves.append((v, path, lt))
        fn = self.region_function(stmts, live_in, leaves, types_after) \
            if not self.dry else None
        name = self.global_ref(fn, fn.__name__) if fn is not None else "example_fn"
        b = self.fresh("b")
        r = self.fresh("ex")

        def args(index):
            return ", ".join(self.slice_text(self.load(v), self.ty[v], self.bt[v], index)
                             for v in live_in)
        self.emit(f"{r} = {name}({args('0')})")
        # each result leaf goes onto a list, stacked once at the end (updating a stacked
        # array in place per example copies all of it on the python backend: O(B^2))
        parts = []
        for k, (v, path, lt) in enumerate(leaves):
            parts.append(self.fresh(f"{v}_parts"))
            self.emit(f"{parts[-1]} = []")
            self.emit(f"{parts[-1]}.append({r}[{k}])")
        if leaves:
            self.emit(f"for {b} in range(1, {self.B}):")
            w = Writer()
            with self.into(w):
                self.emit(f"{r} = {name}({args(b)})")
                for k, p_name in enumerate(parts):
                    self.emit(f"{p_name}.append({r}[{k}])")
            self.out.extend(w)
        stacked = [self.tmp(f"{v}_all", self.call("stack", {"arrays": p_name}))
                   for p_name, (v, _, _) in zip(parts, leaves)]
        for v in live_out:
            t = types_after[v]
            text = self.assemble(v, t, (), leaves, stacked)
            self.emit(f"{self.target(v)} = {text}")
            self.set(v, t, full(t))
        for v, t in types_after.items():
            if v not in live_out and v in self.ty:
                self.ty[v] = t

    def assemble(self, v, t, path, leaves, stacked):
        t = unwrap(t)
        if isinstance(t, ArrayType):
            for k, (lv, lp, _) in enumerate(leaves):
                if lv == v and lp == path:
                    return stacked[k]
            raise AssertionError((v, path))
        if isinstance(t, Static):
            return self.static_text(t.value)
        pairs = keyed_children(t)
        if pairs is not None:
            return self.container(t, [self.assemble(v, c, path + (k,), leaves, stacked)
                                      for k, c in pairs])
        raise NotImplementedError(f"vmap: cannot rebuild a {t} per example")

    def slice_text(self, text, t, b, index):
        """Source for example ``index`` of a value."""
        t = unwrap(t)
        if not any_(b):
            return text
        if isinstance(t, ArrayType):
            return f"{text}[{index}]"
        pairs = keyed_children(t)
        if pairs is not None:
            return self.container(t, [
                self.slice_text(f"{text}[{k!r}]", c, bt_.child(b, i), index)
                for i, (k, c) in enumerate(pairs)])
        raise CannotBatch(f"vmap: cannot take one example of a {t}")

    def region_function(self, stmts, live_in, leaves, types_after):
        body = [anno.clean_copy(s) for s in stmts]
        name = self.fresh(f"{self.spec.name}_example")
        parts = []
        for v, path, _ in leaves:
            expr = v
            parts.append(self.path_text(expr, types_after[v], path))
        ret_src = "(" + ", ".join(parts) + ("," if len(parts) == 1 else "") + ")"
        ret = gast.parse(f"return {ret_src}").body[0]
        for n in gast.walk(ret):
            if isinstance(n, (gast.stmt, gast.expr)):
                n.lineno, n.col_offset = self.lineno, 0
        fdef = function_def(name, live_in, body + [ret])
        fdef.lineno, fdef.col_offset = self.lineno, 0
        namespace = dict(self.parsed.fn.__globals__)
        namespace.update(self.parsed.freevars)
        return SyntheticFunction(name, fdef, namespace, self.parsed)


_ASTJAX_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_ASTJAX_DIR += os.sep  # the package: lax functions, derivative rules, nn


def _in_astjax(filename):
    return os.path.abspath(filename).startswith(_ASTJAX_DIR)


def _collective_over(stmts, axis_name, seen=None):
    """The kind of a collective naming ``axis_name`` that ``stmts`` call, themselves or in
    a function they call (None if none does)."""
    seen = set() if seen is None else seen
    for s in stmts:
        for n in gast.walk(s):
            callee = anno.get(n, "callee")
            if callee is None or id(callee) in seen:
                continue
            seen.add(id(callee))
            collective = getattr(callee.fn, "astjax_collective", None)
            if collective is not None and collective[1] == axis_name:
                return collective[0]
            if collective is None and callee.fdef is not None:
                kind = _collective_over(callee.fdef.body, axis_name, seen)
                if kind is not None:
                    return kind
    return None


def _types_through(stmts, env):
    """Per-example types after ``stmts`` (from the typed ANF's annotations)."""
    env = dict(env)
    for s in stmts:
        if isinstance(s, gast.Assign):
            env[s.targets[0].id] = unwrap(anno.get(s.targets[0], "type"))
        elif isinstance(s, gast.If):
            taken = anno.get(s, "taken")
            if taken is not None:
                env = _types_through(s.body if taken else s.orelse, env)
                continue
            merge = anno.get(s, "merge")
            if merge is not None:
                env.update({k: unwrap(v) for k, v in merge[2].items()
                            if type(v).__name__ != "Undefined"})
        elif isinstance(s, (gast.For, gast.While)):
            merge = anno.get(s, "merge")
            if merge is not None:
                _, body_end, head = merge
                for k, v in head.items():
                    v = unwrap(v) if type(v).__name__ != "Undefined" else \
                        unwrap(body_end.get(k, v))
                    if type(v).__name__ != "Undefined":
                        env[k] = v
    return env


def _always_set(stmts):
    """Names that ``stmts`` assign on every path."""
    out = set()
    for s in stmts:
        if isinstance(s, gast.Assign):
            out.add(s.targets[0].id)
        elif isinstance(s, gast.If):
            taken = anno.get(s, "taken")
            if taken is not None:
                out |= _always_set(s.body if taken else s.orelse)
            else:
                out |= _always_set(s.body) & _always_set(s.orelse)
    return out


def _int_scalar(t):
    t = unwrap(t)
    if isinstance(t, Static):
        return isinstance(t.value, int) and not isinstance(t.value, bool)
    return isinstance(t, ArrayType) and t.ndim == 0 and t.dtype.kind in "iu"


def _Maybe(t):
    """The type of a variable that may be unset here (it was set on some paths only)."""
    from ..ir.infer import MaybeUndefined
    return t if _maybe(t) else MaybeUndefined(unwrap(t))


def _defined(env):
    return {v for v, t in env.items() if not _maybe(t)}


def _untouched(v, saved, envs, merged_type):
    """``v`` leaves both branches of an if as it entered: nothing to merge."""
    bt, ty = saved[0].get(v), saved[1].get(v)
    return bt is not None and unwrap(ty) == merged_type and \
        all(e[0].get(v) == bt and e[1].get(v) == ty for e in envs)


def _maybe(t):
    return type(t).__name__ == "MaybeUndefined"


def _stackable(t):
    """Values a loop over the examples can stack: arrays, constants, containers of them."""
    t = unwrap(t)
    if isinstance(t, (ArrayType, Static)):
        return True
    if isinstance(t, SequenceType):
        return all(_stackable(e) for e in t.elts)
    if isinstance(t, TreeType):
        return all(_stackable(c) for c in t.children)
    return False


def _exposed_reads(stmts):
    """(names ``stmts`` may read before assigning them, names they surely assign)."""
    exposed, assigned = set(), set()
    for s in stmts:
        if isinstance(s, gast.If):
            body, orelse = _exposed_reads(s.body), _exposed_reads(s.orelse)
            exposed |= (set(bt_.loads([s.test])) | body[0] | orelse[0]) - assigned
            assigned |= body[1] & orelse[1]
        elif isinstance(s, (gast.For, gast.While)):  # may run no trip, or several
            exposed |= set(bt_.loads([s])) - assigned
        else:
            exposed |= set(bt_.loads([s])) - assigned
            if not anno.get(getattr(s, "value", None), "list_pop"):  # (conservative for pops)
                assigned |= set(bt_.stores([s]))
    return exposed, assigned


def _entry_value_test(branch):
    """Whether code in ``branch`` may read a name's value from before the branch (it reads
    it before assigning it, or assigns it only on some paths), as a test of the name: the
    branch is walked once, not once per name."""
    exposed, assigned = _exposed_reads(branch)
    return lambda v: v in exposed or v not in assigned


def _either(a, b):
    """Leafwise ``a or b`` of two bts of one structure (b may mark Static leaves)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return any_(a) or any_(b) if isinstance(a, bool) and isinstance(b, bool) else \
            tuple(_either(bt_.child(a, k), bt_.child(b, k))
                  for k in range(len(a if not isinstance(a, bool) else b)))
    return tuple(_either(x, y) for x, y in zip(a, b))


def _float_batched(t, b):
    """``b`` with every floating-point leaf of ``t`` batched."""
    t = unwrap(t)
    kids = children(t)
    if kids is not None:
        return tuple(_float_batched(c, bt_.child(b, k)) for k, c in enumerate(kids))
    if isinstance(t, ArrayType):
        return bool(any_(b)) or t.dtype.kind in "fc"
    return False


def _bool():
    import numpy as np
    return np.dtype(bool)


def _int():
    from .. import dtypes
    return dtypes.default_int()


_SEQUENCE_OPERANDS = {"concatenate": ("arrays",), "stack": ("arrays",), "hstack": ("tup",),
                      "vstack": ("tup",), "broadcast_arrays": ("args",),
                      "atleast_1d": ("arys",), "atleast_2d": ("arys",),
                      "atleast_3d": ("arys",), "einsum": ("operands",)}
