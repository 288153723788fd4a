"""Copy propagation and dead-store removal on a function's typed ANF, after inlining.

Inlined VJP rules pass values through parameters, tuples and ``r[k]`` reads:
``t4 = (t0, t2); r3 = t4; c3 = r3[0]``. Reading ``t0`` where ``c3`` was read
lets fusion put ``t0``'s loop into its consumer's, and the copies go. Only
names assigned once (temporaries, not loop-carried variables) are touched.
"""
from collections import Counter

import gast

from ...ir import anno
from ...ir.types import ArrayType, SequenceType, Static
from ...ops.registry import SHAPE_ONLY


def load_nodes(tree):
    """Every Name read in ``tree``: in the tree, and the operand nodes op annotations point
    at (the emitter prints those, and a rewrite may have left them outside the tree). A
    folded call is printed as its value and reads nothing; a 0-d operand read for its
    shape only is not read either."""
    seen = {}

    def add(node):
        if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Load):
            seen[id(node)] = node
        elif isinstance(node, tuple):
            for v in node:
                add(v)

    def visit(n):
        if anno.has(n, "folded"):
            return
        add(n)
        skip = None
        op = anno.get(n, "op")
        if op is not None and op.name in SHAPE_ONLY:  # a 0-d one is not read at all
            operand = (anno.get(n, "operand_nodes") or {}).get(SHAPE_ONLY[op.name])
            t = anno.get(operand, "type") if operand is not None else None
            if isinstance(t, ArrayType) and t.ndim == 0:
                skip = operand
        for key in ("operand_nodes", "param_nodes"):
            for v in (anno.get(n, key) or {}).values():
                if v is not skip:
                    add(v)
        for child in gast.iter_child_nodes(n):
            if child is not skip:
                visit(child)

    visit(tree)
    return list(seen.values())


def _stores(fdef):
    counts = {a.id: 1 for a in fdef.args.args}
    for n in gast.walk(fdef):
        if isinstance(n, gast.Name) and not isinstance(n.ctx, gast.Load):
            counts[n.id] = counts.get(n.id, 0) + 1
    return counts


def _static_index(node):
    if isinstance(node, gast.Constant) and type(node.value) is int:
        return node.value
    t = anno.get(node, "type")
    return t.value if isinstance(t, Static) and isinstance(t.value, int) else None


def propagate_copies(fdef):
    """Read each copy's source instead of the copy, until nothing changes."""
    _prune_decided_branches(fdef)
    # statements type inference never reached (behind a branch decided statically) only
    # keep their operands alive
    _remove(fdef, lambda s: isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name)
            and anno.get(s.targets[0], "type") is None)
    _trivial_ops_to_copies(fdef)
    remove_dead_stores(fdef)
    rename_redefinitions(fdef)
    from .liveness import rename_block_locals
    rename_block_locals(fdef)
    while _propagate_once(fdef):
        pass
    if _read_tuple_elements(fdef):
        remove_dead_stores(fdef)
        while _propagate_once(fdef):
            pass
    _remove_unread_tapes(fdef)
    _shapes_from_operands(fdef)


def rename_redefinitions(fdef):
    """Give every straight-line redefinition but a block's last its own name:
    ``x0 = x0 + k; x1 = x1 ^ x0; x0 = x0 + x1`` reads ``x0_1 = x0 + k; ...;
    x0 = x0_1 + x1``. Copies of once-assigned names then propagate, and fusion sees
    each value's readers. Values leaving the block keep their names."""
    from .fusion import Names
    names = None
    for n in list(gast.walk(fdef)):
        for field in ("body", "orelse"):
            stmts = getattr(n, field, None)
            if not (isinstance(stmts, list) and stmts and isinstance(stmts[0], gast.stmt)):
                continue
            for name, positions in _straight_line_defs(stmts).items():
                names = names or Names(fdef)
                for here, following in zip(positions, positions[1:]):
                    fresh = names.fresh(f"{name}_")
                    stmts[here].targets[0].id = fresh
                    for k in range(here + 1, following + 1):
                        for load in load_nodes(stmts[k]):
                            if load.id == name:
                                load.id = fresh


def stored_names(node):
    """The names ``node`` assigns (nested statements included), in order."""
    return [m.id for m in gast.walk(node)
            if isinstance(m, gast.Name) and not isinstance(m.ctx, gast.Load)]


def statement_lists(fdef):
    """Every block of ``fdef``: the function's body, loop bodies, branches."""
    found = []
    for node in gast.walk(fdef):
        for field in ("body", "orelse"):
            stmts = getattr(node, field, None)
            if isinstance(stmts, list) and stmts and isinstance(stmts[0], gast.stmt):
                found.append(stmts)
    return found


def _remove_unread_tapes(fdef):
    """A reverse-mode tape none of whose popped values is read (the backward rule did not
    need them: ``x - y`` needs neither operand) goes, with its pushes and pops."""
    tapes, pops, appends = set(), {}, {}
    for s in gast.walk(fdef):
        if isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name) \
                and isinstance(s.value, gast.List) and not s.value.elts:
            tapes.add(s.targets[0].id)
        elif isinstance(s, gast.Assign) and anno.get(s.value, "list_pop"):
            pops.setdefault(s.value.func.value.id, []).append(s)
        elif isinstance(s, gast.Expr) and anno.get(s.value, "list_append"):
            appends.setdefault(s.value.func.value.id, []).append(s)
    loads = {}
    for n in load_nodes(fdef):
        loads[n.id] = loads.get(n.id, 0) + 1
    dead = set()
    for tape in tapes:
        popped = [s.targets[0].id for s in pops.get(tape, ())]
        uses = len(pops.get(tape, ())) + len(appends.get(tape, ()))
        if loads.get(tape, 0) == uses and not any(loads.get(v) for v in popped):
            dead.add(tape)
    if dead:
        gone = {id(s) for tape in dead for s in pops.get(tape, []) + appends.get(tape, [])}
        _remove(fdef, lambda s: id(s) in gone or (
            isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name)
            and s.targets[0].id in dead))
        remove_dead_stores(fdef)


def _shapes_from_operands(fdef):
    """``s = t3.shape`` of an elementwise result reads the shape of an operand of the same
    rank and size-1 dims instead (equal at run time: loops check sizes), back to a value
    that is stored anyway, so fusion need not store ``t3`` to measure it."""
    from .fusion import FUSABLE
    stores = _stores(fdef)
    made_by = {}
    for s in gast.walk(fdef):
        if isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name) \
                and stores.get(s.targets[0].id) == 1 and not anno.has(s.value, "folded") \
                and getattr(anno.get(s.value, "op"), "name", None) in FUSABLE:
            made_by[s.targets[0].id] = (anno.get(s.targets[0], "type"), s.value)

    carried = _carried_shapes(fdef, stores)
    reads, measured = Counter(), Counter()
    for n in gast.walk(fdef):
        if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load):
            reads[n.id] += 1
        elif isinstance(n, gast.Attribute) and n.attr == "shape" and \
                isinstance(n.value, gast.Name):
            measured[n.value.id] += 1

    def same_shape_operand(name):
        if name not in made_by:
            return carried(name)
        if reads[name] == measured[name]:
            return None  # only measured: computing it checks its operands' sizes agree
        t, value = made_by[name]
        for v in (anno.get(value, "operand_nodes") or {}).values():
            if isinstance(v, gast.Name) and _same_layout(anno.get(v, "type"), t):
                source = v if stores.get(v.id) == 1 else carried(v.id)
                if source is not None:
                    return source
        return None

    moved = False
    for n in gast.walk(fdef):
        if isinstance(n, gast.Attribute) and n.attr == "shape" and isinstance(n.value, gast.Name):
            seen = set()
            while n.value.id not in seen:
                seen.add(n.value.id)
                source = same_shape_operand(n.value.id)
                if source is None:
                    break
                n.value.id = source.id
                anno.set_(n.value, "type", anno.get(source, "type"))
                moved = True
    if moved:  # a value computed only to be measured goes
        remove_dead_stores(fdef)


def _same_layout(a, b):
    """Arrays of one rank and size-1 dims: as operand and result of an elementwise op, of
    one shape at run time (loops check sizes)."""
    return isinstance(a, ArrayType) and isinstance(b, ArrayType) and \
        a.ndim == b.ndim and a.ones == b.ones


def _carried_shapes(fdef, stores):
    """``shape_of(name)``: for a variable assigned more than once (a loop's carried value), a
    Name node of a value set once at the function's top level that always has its shape,
    or None. Each assignment must copy such a value or be an elementwise result, which has
    the shape of each of its operands of the same rank and size-1 dims (loops check
    sizes); an operand that is the variable itself keeps its shape (``y = tanh(y * w) + x``
    in a loop after ``y = x``: x's shape)."""
    from .fusion import FUSABLE
    top = {a.id: a for a in fdef.args.args}
    for s in fdef.body:
        if isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name) \
                and stores.get(s.targets[0].id) == 1:
            top[s.targets[0].id] = s.targets[0]
    assigns = {}
    for s in gast.walk(fdef):
        if isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name):
            assigns.setdefault(s.targets[0].id, []).append(s)
    keeps = "keeps"  # a variable being resolved, read by its own assignment: no constraint
    memo = {}

    def roots(name, resolving):
        """The top-level names whose shape ``name`` always has (``keeps`` for a variable in
        ``resolving``). Cycles pass through variables assigned more than once."""
        if name in top:
            return frozenset([name])
        if name in resolving:
            return keeps
        key = (name, resolving)
        if key not in memo:
            memo[key] = frozenset()  # a cycle through a value assigned once: unknown
            inner = resolving | {name} if stores.get(name, 0) > 1 else resolving
            memo[key] = resolve(name, inner)
        return memo[key]

    def resolve(name, resolving):
        stmts = assigns.get(name, [])
        if not stmts or len(stmts) != stores.get(name) or len(resolving) > 8:
            return frozenset()
        common = None
        for s in stmts:
            t, value = anno.get(s.targets[0], "type"), s.value
            if isinstance(value, gast.Name):
                operands = [value]
            elif getattr(anno.get(value, "op"), "name", None) in FUSABLE \
                    and not anno.has(value, "folded"):
                operands = (anno.get(value, "operand_nodes") or {}).values()
            else:
                return frozenset()
            found = [roots(v.id, resolving) for v in operands
                     if isinstance(v, gast.Name) and _same_layout(anno.get(v, "type"), t)]
            if not found:
                return frozenset()
            if all(f is keeps for f in found):
                continue
            here = frozenset().union(*[f for f in found if f is not keeps])
            common = here if common is None else common & here
        return keeps if common is None else common

    def shape_of(name):
        if name in top or stores.get(name, 0) < 2:
            return None
        found = roots(name, frozenset())
        return top[min(found)] if found and found is not keeps else None
    return shape_of


def _straight_line_defs(stmts):
    """Name -> positions of its top-level ``name = ...`` in ``stmts``, for names assigned
    there more than once and touched by nothing but simple statements in between."""
    defs, unsafe = {}, set()
    for i, s in enumerate(stmts):
        if isinstance(s, gast.Assign) and len(s.targets) == 1 \
                and isinstance(s.targets[0], gast.Name):
            defs.setdefault(s.targets[0].id, []).append(i)
            inner = s.value
        elif isinstance(s, (gast.Expr, gast.Return)):
            inner = s
        else:  # a branch, a loop, an unpacking: whatever it mentions stays put
            unsafe |= {m.id for m in gast.walk(s) if isinstance(m, gast.Name)}
            unsafe |= {m.id for m in load_nodes(s)}
            continue
        unsafe |= {m.id for m in gast.walk(inner) if isinstance(m, gast.Name)
                   and not isinstance(m.ctx, gast.Load)}
    out = {}
    for name, positions in defs.items():
        if len(positions) > 1 and name not in unsafe:
            out[name] = positions
    return out


def _propagate_once(fdef):
    stores = _stores(fdef)
    once = {name for name, k in stores.items() if k == 1}
    tuples, alias = {}, {}

    def root(name):
        while name in alias:
            name = alias[name]
        return name

    for s in gast.walk(fdef):
        if not isinstance(s, gast.Assign) or not isinstance(s.targets[0], gast.Name):
            continue
        target, value = s.targets[0].id, s.value
        if target not in once or anno.get(value, "captured"):
            continue
        if isinstance(value, gast.Tuple):
            tuples[target] = value.elts
        elif isinstance(value, gast.Name) and not isinstance(anno.get(value, "type"), Static):
            if root(value.id) in once and root(value.id) != target:
                alias[target] = root(value.id)
        elif isinstance(value, gast.Subscript) and isinstance(value.value, gast.Name):
            elts = tuples.get(root(value.value.id))
            k = _static_index(value.slice)
            if elts is not None and k is not None and -len(elts) <= k < len(elts):
                elt = elts[k]
                if isinstance(elt, gast.Name) and root(elt.id) in once \
                        and not anno.get(elt, "captured") \
                        and not isinstance(anno.get(elt, "type"), Static):
                    alias[target] = root(elt.id)
    if not alias:
        return False
    for n in load_nodes(fdef):
        if n.id in alias:
            n.id = root(n.id)
    _remove(fdef, lambda s: isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name)
            and s.targets[0].id in alias)
    remove_dead_stores(fdef)
    return True


def _read_tuple_elements(fdef):
    """``x = t[k]`` of a tuple display ``t = (a, b, ...)`` assigned once in the function's
    body reads ``a`` itself when nothing assigns ``a`` from there on. An inlined forward
    sweep hands its backward sweep such a tuple; once no read is left it goes, and with
    it what only it kept (tapes no pop reads from)."""
    stores = _stores(fdef)
    after = {}  # tuple name -> (its elements, names assigned from its statement on)
    for i, s in enumerate(fdef.body):
        if isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name) \
                and isinstance(s.value, gast.Tuple) and stores[s.targets[0].id] == 1 \
                and not anno.get(s.value, "captured"):
            assigned = {name for later in fdef.body[i + 1:] for name in stored_names(later)}
            after[s.targets[0].id] = (s.value.elts, assigned)
    changed = False
    for s in gast.walk(fdef):
        if not (isinstance(s, gast.Assign) and isinstance(s.value, gast.Subscript)
                and isinstance(s.value.value, gast.Name) and s.value.value.id in after):
            continue
        elts, assigned = after[s.value.value.id]
        k = _static_index(s.value.slice)
        elt = elts[k] if k is not None and -len(elts) <= k < len(elts) else None
        if isinstance(elt, gast.Name) and elt.id not in assigned \
                and not anno.get(elt, "captured") \
                and not isinstance(anno.get(elt, "type"), Static):
            s.value = gast.Name(id=elt.id, ctx=gast.Load(), annotation=None,
                                type_comment=None)
            anno.set_(s.value, "type", anno.get(elt, "type"))
            changed = True
        elif isinstance(anno.get(elt, "type"), Static) and \
                type(anno.get(elt, "type").value) in (bool, int):  # a flag, a trip count
            s.value = gast.Constant(value=anno.get(elt, "type").value, kind=None)
            anno.set_(s.value, "type", anno.get(elt, "type"))
            changed = True
    return changed


def _trivial_ops_to_copies(fdef):
    """``t = x + 0.0``, ``t = cotangent_like(x, z)`` with x already shaped like z, ...
    become ``t = x``, so only real work reads its operands."""
    from .fusion import trivial
    for s in gast.walk(fdef):
        if isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name):
            keep = trivial(s.value, anno.get(s.targets[0], "type"))
            if keep is not None:
                s.value = keep


def _prune_decided_branches(fdef):
    """An ``if`` decided when the code was generated becomes the branch it takes (itself
    pruned: inlined callees nest decided ifs), so the other branch's assignments do not
    count as stores."""
    def pruned(stmts):
        out = []
        for s in stmts:
            taken = anno.get(s, "taken") if isinstance(s, gast.If) else None
            out.extend([s] if taken is None else pruned(s.body if taken else s.orelse))
        return out

    for n in list(gast.walk(fdef)):
        for field in ("body", "orelse"):
            stmts = getattr(n, field, None)
            if isinstance(stmts, list) and stmts and isinstance(stmts[0], gast.stmt):
                setattr(n, field, pruned(stmts) or [gast.Pass()])


EFFECTFUL = {"same_batch_size"}  # ops kept for what they check, read or not


def pure_assignment(s):
    """``x = value`` with a value that has no effect but its result (names, constants,
    tuples and tuple arithmetic, reads, op results: ops are pure): skipping it loses
    nothing if x is unread."""
    return isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name) and (
        isinstance(s.value, (gast.Name, gast.Constant, gast.Tuple, gast.Subscript,
                             gast.Attribute)) or anno.get(s.value, "op") is not None
        or isinstance(s.value, gast.BinOp)
        and isinstance(anno.get(s.targets[0], "type"), SequenceType)) \
        and getattr(anno.get(s.value, "op"), "name", None) not in EFFECTFUL


def remove_dead_stores(fdef):
    """Drop assignments of pure values whose results nothing that matters reads (marked
    from the return, branch and loop headers and effectful statements, so an accumulator
    read only by itself goes too), and those overwritten later in the same block before
    any read."""
    _remove_overwritten(fdef)
    _remove_static(fdef)
    defs, live = {}, set()
    for s in gast.walk(fdef):
        if pure_assignment(s):
            defs.setdefault(s.targets[0].id, []).append(s)
        elif isinstance(s, (gast.If, gast.While)):
            live.update(n.id for n in load_nodes(s.test))
        elif isinstance(s, gast.For):
            live.update(n.id for n in load_nodes(s.iter))
        elif isinstance(s, gast.stmt) and not isinstance(s, gast.FunctionDef):
            live.update(n.id for n in load_nodes(s))
    work = list(live)
    while work:
        for s in defs.get(work.pop(), ()):
            for n in _run_time_reads(s):
                if n.id not in live:
                    live.add(n.id)
                    work.append(n.id)
    if any(name not in live for name in defs):
        _remove(fdef, lambda s: pure_assignment(s) and s.targets[0].id not in live)
        read = {n.id for n in load_nodes(fdef)}
        _remove(fdef, lambda s: isinstance(s, gast.For) and not s.orelse  # emptied loops
                and all(isinstance(b, gast.Pass) for b in s.body)
                and isinstance(s.target, gast.Name) and s.target.id not in read)


def _run_time_reads(s):
    """The names a pure assignment reads when it runs: none where its value is known when
    the code is generated, which the emitter prints as a literal (``t.shape`` of a 0-d
    ``t`` is ``()``: a Hessian's only read of a whole forward sweep)."""
    value = s.value
    if isinstance(anno.get(value, "type"), Static) or (
            anno.get(value, "op") is not None
            and isinstance(anno.get(s.targets[0], "type"), Static)):
        return ()
    if isinstance(value, gast.Attribute) and value.attr in ("shape", "size"):
        t = anno.get(value.value, "type")
        if isinstance(t, ArrayType) and t.ndim == 0:
            return ()
    return load_nodes(s)


def _remove(fdef, predicate):
    removed = False
    for n in gast.walk(fdef):
        for field in ("body", "orelse"):
            stmts = getattr(n, field, None)
            if isinstance(stmts, list) and stmts and isinstance(stmts[0], gast.stmt):
                kept = [s for s in stmts if not predicate(s)]
                if len(kept) != len(stmts):
                    removed = True
                    setattr(n, field, kept or [gast.Pass()])
    return removed


def _remove_overwritten(fdef):
    """Drop pure assignments stored again later in their block before any read. One
    backward scan per block: what happens next to each name (read, store, or something
    inside a branch or loop, which is not on every path)."""
    pure = (gast.Name, gast.Constant, gast.Tuple, gast.Attribute)
    for n in list(gast.walk(fdef)):
        for field in ("body", "orelse"):
            stmts = getattr(n, field, None)
            if not (isinstance(stmts, list) and stmts and isinstance(stmts[0], gast.stmt)):
                continue
            following, dead = {}, set()
            for s in reversed(stmts):
                named = isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name)
                if named and isinstance(s.value, pure) and anno.get(s.value, "op") is None \
                        and following.get(s.targets[0].id) == "store":
                    dead.add(id(s))
                    continue
                if isinstance(s, (gast.Assign, gast.Expr)):
                    if named:
                        following[s.targets[0].id] = "store"
                    for m in load_nodes(s):
                        following[m.id] = "load"
                else:
                    for m in gast.walk(s):
                        if isinstance(m, gast.Name):
                            following[m.id] = "other"
                    for m in load_nodes(s):
                        following[m.id] = "other"
            if dead:
                setattr(n, field, [s for s in stmts if id(s) not in dead])


def _remove_static(fdef):
    """Assignments of values known at generation time whose every read is printed as a
    literal (``ok = g is not None``) only keep their operands alive: drop them."""
    dynamic = {n.id for n in load_nodes(fdef) if not isinstance(anno.get(n, "type"), Static)}
    _remove(fdef, lambda s: isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name)
            and isinstance(anno.get(s.targets[0], "type"), Static)
            and s.targets[0].id not in dynamic)
