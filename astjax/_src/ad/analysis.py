"""Static analyses of typed A-normal form that reverse mode relies on."""
import inspect

import gast

from ..ir import anno
from ..ir.types import ArrayType, ListType, SequenceType, Static, TreeType, keyed_children
from ..ops.registry import SHAPE_ONLY


def float_leaves(t, path=()):
    """(path, type) of every floating-point array leaf of a type."""
    if isinstance(t, ArrayType):
        if t.dtype.kind in "fc":
            yield path, t
    elif isinstance(t, SequenceType):
        for k, e in enumerate(t.elts):
            yield from float_leaves(e, path + (k,))
    elif isinstance(t, TreeType):
        for k, c in zip(t.keys, t.children):
            yield from float_leaves(c, path + (k,))


def static_key(index):
    """The key of ``c[index]`` when it is known when the code is generated, else None."""
    if isinstance(index, gast.Constant):
        return index.value
    t = anno.get(index, "type")
    if isinstance(t, Static) and isinstance(t.value, (int, str)):
        return t.value  # a name bound to a constant (a dict comprehension's key)
    return None


def child_key(value):
    """The key of the child that ``c[index]`` / ``c.attr`` reads (as ``float_leaves`` paths
    name it) when it is known when the code is generated, else None."""
    position = anno.get(value, "tree_child")
    if position is not None:  # p[0] of a namedtuple is its first field's
        return anno.get(value.value, "type").keys[position]
    if isinstance(value, gast.Attribute):
        return None
    key = static_key(value.slice)
    t = anno.get(value.value, "type")
    if type(key) is int and key < 0 and isinstance(t, SequenceType):
        return key + len(t.elts)  # xs[-1]: paths name elements by their position
    return key


def static_slice_positions(value):
    """For ``xs[a:b:c]`` of a tuple or list ``xs`` with bounds known when the code is
    generated: the positions in ``xs`` of the result's elements; else None."""
    if not (isinstance(value, gast.Subscript) and isinstance(value.slice, gast.Slice) and
            isinstance(anno.get(value.value, "type"), SequenceType)):
        return None
    bounds = []
    for part in (value.slice.lower, value.slice.upper, value.slice.step):
        if part is None:
            bounds.append(None)
            continue
        key = static_key(part)
        if not isinstance(key, int):
            return None
        bounds.append(key)
    return list(range(len(anno.get(value.value, "type").elts)))[slice(*bounds)]


def runtime_index(value, local_names=None):
    """For ``xs[i]``, a tuple or list ``xs`` indexed by a variable ``i`` (one of
    ``local_names``, if given) known at run time only: the name of ``i``; else None."""
    if not (isinstance(value, gast.Subscript) and isinstance(value.value, gast.Name) and
            isinstance(value.slice, gast.Name) and
            (local_names is None or value.slice.id in local_names)):
        return None
    if not isinstance(anno.get(value.value, "type"), SequenceType) or child_key(value) is not None:
        return None
    return value.slice.id


def _stops_cotangents(s):
    """An op no cotangent flows back through: one with no derivative (argmax, floor), or
    an integer or boolean result. Its operands need no adjoint for it, and must not get a
    zero cotangent (exp's adjoint times 0 would give nan where exp overflowed)."""
    op, t = anno.get(s.value, "op"), anno.get(s.targets[0], "type")
    return op is not None and (not op.differentiable or (
        isinstance(t, ArrayType) and t.dtype.kind in "biu"))


def changed_list_params(spec, seen=frozenset()):
    """The list parameters (of floating-point elements) that a specialization appends to or
    pops from, itself or in a callee it passes them to."""
    if spec is None or getattr(spec, "fdef", None) is None or id(spec) in seen:
        return set()
    seen = seen | {id(spec)}
    lists = {a.id for a in spec.fdef.args.args if isinstance(anno.get(a, "type"), ListType)
             and any(True for _ in float_leaves(anno.get(a, "type").elt))}
    out = set()
    for n in gast.walk(spec.fdef):
        if not (lists and isinstance(n, gast.Call)):
            continue
        if (anno.get(n, "list_append") or anno.get(n, "list_pop")) and \
                isinstance(n.func.value, gast.Name) and n.func.value.id in lists:
            out.add(n.func.value.id)
        out.update(a.id for a in changed_list_arguments(n, seen) if a.id in lists)
    return out


def changed_list_arguments(call, seen=frozenset()):
    """The variables passed to call ``call`` as list arguments its callee changes."""
    callee = anno.get(call, "callee") if isinstance(call, gast.Call) else None
    changed = changed_list_params(callee, seen)
    if not changed:
        return []
    sig = inspect.signature(callee.fn)
    bound = sig.bind(*call.args, **{k.arg: k.value for k in call.keywords}).arguments
    return [bound[p] for p in sig.parameters if p in changed and
            isinstance(bound.get(p), gast.Name)]


def _changing_calls(fdef):
    """(call, the list variables it changes) for calls whose callee changes a list
    argument (``push(hs, x)`` appending to ``hs``)."""
    calls = [n for n in gast.walk(fdef) if isinstance(n, gast.Call) and
             anno.get(n, "callee") is not None]
    return [(c, args) for c in calls for args in [changed_list_arguments(c)] if args]


def liveness(fdef, out, keys=None):
    """Which variables the output depends on (through values, not conditions), as
    ``{name: None}`` for a whole value or ``{name: {paths}}`` when only some elements of a
    tuple/dict are used (a path names an element inside nested containers: ``(1, 0)``
    for ``v[1][0]``; ``keys``: those of the output). Only their statements need adjoints:
    the rest have zero cotangents, as JAX's symbolic zeros (the cos(x) / x of sici's
    rule is never multiplied by Ci's zero cotangent when only Si is used)."""
    live = {out: None if keys is None else set(keys)}

    def mark(name, path=None):
        """Mark element ``path`` of ``name`` (None or (): all of it) live."""
        path = path or None
        current = live.get(name, set())
        if current is None or path is not None and any(
                path[:len(p)] == p for p in current):
            return False
        live[name] = None if path is None else \
            {p for p in current if p[:len(path)] != path} | {path}
        return True

    def mark_all(node):
        return any([mark(n.id) for n in gast.walk(node) if isinstance(n, gast.Name)])

    def mark_part(node, rest):
        """Element ``rest`` of the value ``node`` (a name: just that element)."""
        if isinstance(node, gast.Name):
            return mark(node.id, rest)
        return mark_all(node)

    assigns = _run_assigns(fdef.body)  # (a branch typing ruled out reads nothing)
    appends = [n.value for n in gast.walk(fdef) if isinstance(n, gast.Expr)
               and anno.get(n.value, "list_append")]
    changing = _changing_calls(fdef)
    changed = True
    while changed:
        changed = False
        for s in assigns:
            target, value = s.targets[0].id, s.value
            if target not in live:
                continue
            keys_used = live[target]
            if keys_used is not None and isinstance(value, (gast.Tuple, gast.List)):
                for path in keys_used:
                    k = path[0]
                    if isinstance(k, int) and k < len(value.elts):
                        changed |= mark_part(value.elts[k], path[1:])
            elif anno.get(value, "tree_build") is not None:  # {"a": x}, P(x, y)
                for k, v in zip(anno.get(s.targets[0], "type").keys,
                                anno.get(value, "tree_build")):
                    for path in [(k,)] if keys_used is None else keys_used:
                        if path[0] == k:
                            changed |= mark_part(v, path[1:])
            elif isinstance(value, (gast.Subscript, gast.Attribute)) and \
                    anno.get(value, "op") is None and isinstance(value.value, gast.Name) and \
                    child_key(value) is not None and \
                    not isinstance(anno.get(value.value, "type"), ListType):
                key = child_key(value)  # (a list is live whole)
                for path in [()] if keys_used is None else keys_used:
                    changed |= mark(value.value.id, (key,) + path)
            elif _stops_cotangents(s):
                continue
            elif (read := _call_reads(value, keys_used)) is not None:
                for node, paths in read:  # (only the arguments the used outputs depend on)
                    for path in paths or [()]:
                        changed |= mark_part(node, path)
            elif getattr(anno.get(value, "op"), "name", None) in SHAPE_ONLY:
                # no cotangent flows to an operand read for its shape only
                shape = anno.get(value, "operand_nodes").get(
                    SHAPE_ONLY[anno.get(value, "op").name])
                changed |= any([mark(n.id) for n in gast.walk(value)
                                if isinstance(n, gast.Name) and n is not shape])
            else:
                changed |= mark_all(value)
        for call in appends:  # a value pushed on a live list is read when popped
            if call.func.value.id in live:
                changed |= mark_all(call.args[0])
        for call, lists in changing:  # so is one a callee pushes
            if any(n.id in live for n in lists):
                changed |= mark_all(call)
    return live


_CALLS = {}  # id of a Specialization -> (spec, {output paths: its live parameters})
_WITHIN = set()  # (ids of) the specializations whose liveness is being found


def _call_reads(value, keys_used):
    """For a call of a user function of which the elements ``keys_used`` (None: all) are
    used: [(argument node, its live paths or None)] for the arguments the callee's
    liveness reaches (``sort((a, log(a)))[0]`` reads ``a``, not ``log(a)``); None where
    the callee's arguments are all read (a custom rule, lists, recursion)."""
    callee = anno.get(value, "callee") if isinstance(value, gast.Call) else None
    fdef = getattr(callee, "fdef", None)
    if fdef is None or getattr(callee.fn, "custom_rule", None) is not None or \
            id(callee) in _WITHIN or changed_list_params(callee):
        return None
    bound = bound_arguments(callee, value)
    if bound is None or any(holds_list(t) for t in callee.arg_types):
        return None
    params = [a.id for a in fdef.args.args]
    keys = None if keys_used is None else frozenset(keys_used)
    hit = _CALLS.get(id(callee))
    if hit is None or hit[0] is not callee:
        _CALLS[id(callee)] = hit = (callee, {})
    if keys not in hit[1]:
        _WITHIN.add(id(callee))
        try:
            live = liveness(fdef, fdef.body[-1].value.id, keys)
        finally:
            _WITHIN.discard(id(callee))
        hit[1][keys] = {p: live[p] for p in params if p in live}
    live = hit[1][keys]
    out = []
    for name, node in bound.items():
        if name not in live:
            continue
        if not isinstance(node, gast.AST):
            return None  # (*args)
        out.append((node, None if live[name] is None else sorted(live[name], key=repr)))
    return out


def bound_arguments(callee, call):
    """``call``'s argument nodes by ``callee``'s parameter names, or None where they do not
    line up (``*args``, arguments that do not bind) or the callee does not end in
    ``return name`` (the name whose dependence the analyses follow back)."""
    last = callee.fdef.body[-1]
    if not (isinstance(last, gast.Return) and isinstance(last.value, gast.Name)):
        return None
    try:
        sig = inspect.signature(callee.fn)
        bound = sig.bind(*call.args, **{k.arg: k.value for k in call.keywords}).arguments
    except (TypeError, ValueError):
        return None
    if list(sig.parameters) != [a.id for a in callee.fdef.args.args]:
        return None
    return bound


def holds(t, found):
    """Whether ``found`` is true of type ``t`` or of a type inside its containers."""
    return found(t) or any(holds(c, found) for _, c in keyed_children(t) or ())


def holds_list(t):
    return holds(t, lambda u: isinstance(u, ListType))


def _run_assigns(stmts):
    """The assignments of ``stmts`` that can run: not those of the branch a static ``if``
    does not take (``if _is_complex(a.dtype):`` for a real ``a``)."""
    out = []
    for s in stmts:
        if isinstance(s, gast.Assign):
            out.append(s)
        elif isinstance(s, gast.If) and anno.get(s, "taken") is not None:
            out += _run_assigns(s.body if anno.get(s, "taken") else s.orelse)
        elif isinstance(s, (gast.If, gast.For, gast.While)):
            out += _run_assigns(s.body) + _run_assigns(s.orelse)
        else:
            out += [n for n in gast.walk(s) if isinstance(n, gast.Assign)]
    return out


def activity(fdef, seeds, through_derivatives=False):
    """The variables whose values depend on the variables ``seeds`` (through values, not
    conditions): ``liveness`` run forward from some inputs. ``through_derivatives``: only
    through ops a cotangent flows back through (JAX's symbolic zero tangents)."""
    active = set(seeds)
    assigns = [n for n in gast.walk(fdef) if isinstance(n, gast.Assign)]
    appends = [n.value for n in gast.walk(fdef) if isinstance(n, gast.Expr)
               and anno.get(n.value, "list_append")]
    changing = _changing_calls(fdef)
    reads = lambda node: any(isinstance(n, gast.Name) and n.id in active
                             for n in gast.walk(node))
    changed = True
    while changed:
        changed = False
        for s in assigns:
            if s.targets[0].id not in active and reads(s.value) and not (
                    through_derivatives and _stops_cotangents(s)):
                active.add(s.targets[0].id)
                changed = True
        for call in appends:  # a list holding such a value
            if call.func.value.id not in active and reads(call):
                active.add(call.func.value.id)
                changed = True
        for call, lists in changing:  # (a callee appending it)
            if reads(call) and any(n.id not in active for n in lists):
                active.update(n.id for n in lists)
                changed = True
    return active


def overwritten(fdef):
    """Names assigned more than once, or inside a loop: their values must be recorded."""
    counts = {a.id: 1 for a in fdef.args.args}
    in_loop = set()

    def visit(stmts, looping):
        for s in stmts:
            targets = []
            if isinstance(s, gast.Assign):
                targets = [s.targets[0].id]
            elif isinstance(s, gast.For):
                targets = [s.target.id]
            for name in targets:
                counts[name] = counts.get(name, 0) + 1
                if looping or isinstance(s, gast.For):  # a loop index changes every trip
                    in_loop.add(name)
            if isinstance(s, (gast.For, gast.While)):
                visit(s.body, True)
            elif isinstance(s, gast.If):
                visit(s.body, looping)
                visit(s.orelse, looping)
    visit(fdef.body, False)
    return {n for n, c in counts.items() if c > 1} | in_loop
