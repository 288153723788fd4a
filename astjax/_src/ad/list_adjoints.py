"""Reverse mode of lists built with ``append``: a list's cotangent is a list kept in
step with it (one entry per element; each append's adjoint pops its entry, each pop's
adjoint pushes one back), which reads by index, slices, joins and calls add to.

``ListAdjoints`` is a part of ``reverse.ReverseMode``: its methods use the sweep's
cotangent names and tapes.
"""
import inspect
import re

import gast

from ..frontend.naming import assign, const, load, store
from ..ir import anno
from ..ir.types import UNKNOWN, ListType, Static
from .analysis import changed_list_arguments, changed_list_params, float_leaves
from .nodes import _ajx, _call, _locate, _renamed, _statements, _sub, literal_node


def list_read(value, local_names):
    """For ``xs[i]`` with ``xs`` a local list built at run time (``append``) and ``i`` an
    integer constant or variable: (``xs``'s name, the index node); else None."""
    if not (isinstance(value, gast.Subscript) and isinstance(value.value, gast.Name) and
            value.value.id in local_names and
            isinstance(anno.get(value.value, "type"), ListType)):
        return None
    index = value.slice
    if isinstance(index, gast.Constant) and isinstance(index.value, int) or \
            isinstance(index, gast.Name):
        return value.value.id, index
    return None


def list_slice(value, local_names):
    """For ``xs[a:b]`` with ``xs`` a local list built at run time: (``xs``'s name, the
    slice node); else None."""
    if isinstance(value, gast.Subscript) and isinstance(value.value, gast.Name) and \
            value.value.id in local_names and isinstance(value.slice, gast.Slice) and \
            holds_float_list(anno.get(value.value, "type")):
        return value.value.id, value.slice
    return None


def holds_float_list(t):
    """A list built at run time (append) with floating-point elements."""
    return isinstance(t, ListType) and any(True for _ in float_leaves(t.elt))


def _makes_list(s, lst, local_names):
    """Whether statement ``s`` makes list ``lst`` afresh (a display, a slice, or a call
    returning a list: ``jnp.unstack(x)`` in compiled code)."""
    return isinstance(s, gast.Assign) and s.targets[0].id == lst and (
        isinstance(s.value, gast.List) or list_slice(s.value, local_names) is not None or
        anno.get(s.value, "callee") is not None and
        holds_float_list(anno.get(s.targets[0], "type")))


def _untaken(fdef):
    """Ids of the nodes in branches that a static ``if`` does not take."""
    out = set()
    for n in gast.walk(fdef):
        taken = anno.get(n, "taken") if isinstance(n, gast.If) else None
        if taken is not None:
            out.update(id(m) for t in (n.orelse if taken else n.body) for m in gast.walk(t))
    return out


def _makings_per_path(stmts, lst, local_names):
    """The fewest and the most times a path through ``stmts`` makes list ``lst`` (a loop
    that assigns it, or an assignment that does not make a list, counts as many)."""
    fewest = most = 0
    for s in stmts:
        if isinstance(s, gast.If) and anno.get(s, "taken") is not None:
            taken = _makings_per_path(s.body if anno.get(s, "taken") else s.orelse, lst,
                                      local_names)
            fewest, most = fewest + taken[0], most + taken[1]
        elif isinstance(s, gast.If):
            body, orelse = (_makings_per_path(b, lst, local_names) for b in (s.body, s.orelse))
            fewest, most = fewest + min(body[0], orelse[0]), most + max(body[1], orelse[1])
        elif isinstance(s, (gast.For, gast.While)):
            if _makings_per_path(s.body, lst, local_names)[1]:
                most += 2
        elif isinstance(s, gast.Assign) and s.targets[0].id == lst:
            made = _makes_list(s, lst, local_names)
            fewest, most = fewest + made, most + (1 if made else 2)
    return fewest, most


def _defined_at_makings(stmts, lst, local_names, defined, found):
    """Whether list ``lst`` is defined ("no", "yes" or "maybe") before each statement of
    ``stmts`` that makes it (``found``: its id -> that), given ``defined`` on entry; the
    state on exit. A loop's body is walked again from the state its trips meet."""
    for s in stmts:
        if isinstance(s, gast.If):
            taken = anno.get(s, "taken")
            branches = [s.body if taken else s.orelse] if taken is not None else \
                [s.body, s.orelse]
            ends = {_defined_at_makings(b, lst, local_names, defined, found) for b in branches}
            defined = ends.pop() if len(ends) == 1 else "maybe"
        elif isinstance(s, (gast.For, gast.While)):
            end = _defined_at_makings(s.body, lst, local_names, defined, found)
            if end != defined:
                defined = "maybe"
                _defined_at_makings(s.body, lst, local_names, defined, found)
        elif isinstance(s, gast.Assign) and s.targets[0].id == lst:
            found[id(s)] = defined
            defined = "yes"
    return defined


def _static_param(value, name, default):
    """The value of a static parameter of the op call ``value`` (concatenate's axis)."""
    resolved = anno.get(value, "resolved_params") or {}
    if name in resolved:
        return resolved[name]
    node = anno.get(value, "param_nodes").get(name)
    return default if node is None else anno.get(node, "type").value


class ListAdjoints:
    # lists (the tapes of derivative code, when it is differentiated again): the cotangents
    # of popped values go onto lists of their own, one per float leaf path of the elements
    # (a tape of (scalar, vector) pairs: leaves of different ranks), and come back off them
    # at the append
    def list_ct(self, var, path=()):
        name = self.ct(var, path)
        self.list_cts.add(name)
        return name

    def list_leaves(self, lst):
        """Float leaf paths of a list's elements over the whole function (its type grows as
        items are appended): the adjoints of every append and every pop move exactly these,
        so the cotangent list stays in step with the list."""
        if not hasattr(self, "_list_paths"):
            self._list_paths = {}
            for n in gast.walk(self.fdef):
                if anno.get(n, "list_append"):
                    name, value_type = n.func.value.id, anno.get(n.args[0], "type")
                elif isinstance(n, gast.Assign) and anno.get(n.value, "list_pop"):
                    name, value_type = n.value.func.value.id, anno.get(n.targets[0], "type")
                elif isinstance(n, gast.Assign) and (list_slice(n.value, self.locals()) or
                                                     anno.get(n.value, "callee") is not None
                                                     and holds_float_list(anno.get(
                                                         n.targets[0], "type"))):
                    # a slice, or a list a call returns (jnp.unstack)
                    name, value_type = n.targets[0].id, anno.get(n.targets[0], "type").elt
                else:
                    continue
                paths = self._list_paths.setdefault(name, set())
                paths.update(p for p, _ in float_leaves(value_type))
            for n in gast.walk(self.fdef):  # a list only a callee appends to: as read
                t = anno.get(n, "type") if isinstance(n, gast.Name) else None
                if isinstance(t, ListType) and t.elt is not UNKNOWN and \
                        n.id not in self._list_paths:
                    self._list_paths[n.id] = {p for p, _ in float_leaves(t.elt)}
            for arg in self.fdef.args.args:  # a list argument: its elements' type
                if holds_float_list(anno.get(arg, "type")):
                    self._list_paths.setdefault(arg.id, set()).update(
                        p for p, _ in float_leaves(anno.get(arg, "type").elt))
        return sorted(self._list_paths.get(lst, ()), key=repr)

    def append_adjoint(self, call):
        lst, item = call.func.value, call.args[0]
        if lst.id not in self.useful:
            return []
        stmts = []
        item_paths = {p for p, _ in float_leaves(anno.get(item, "type"))}
        for path in reversed(self.list_leaves(lst.id)):
            c = self.names.fresh("c")
            stmts.append(assign(c, _call(gast.Attribute(value=load(self.list_ct(lst.id, path)),
                                                        attr="pop", ctx=gast.Load()), [])))
            if isinstance(item, gast.Name) and item.id in self.locals() and path in item_paths:
                self._add(item.id, path, load(c), stmts, False)
        return stmts

    def stacked_list(self, value, op):
        """The list ``xs`` of ``jnp.array(xs)``, ``jnp.stack(xs)`` or ``jnp.concatenate(xs)``
        when it was built by ``append`` (a ``list[...]``) with floating-point elements, else
        None."""
        if op is None or op.name not in ("array", "asarray", "stack", "concatenate"):
            return None
        operand = anno.get(value, "operand_nodes").get(op.operands[0])
        if not (isinstance(operand, gast.Name) and operand.id in self.locals()):
            return None
        return operand.id if holds_float_list(anno.get(operand, "type")) else None

    def stacked_list_adjoint(self, s, lst, target, t, val):
        """The rows of the result's cotangent go onto the list's cotangent list (entry k
        for element k; each append's adjoint pops its entry from the end), added to what
        a later read of the list put there. Written with appends and pops, which the
        transform differentiates again."""
        stmts = []
        g = self.container_seed(target, t, stmts, val(target, old=False))
        axis = literal_node(_static_param(s.value, "axis", 0))
        rows, k, earlier = (self.names.fresh(n) for n in ("rows", "k", "earlier"))
        empty = self.loop_depth == 0 and self.ct(lst) not in self.list_cts  # nothing read it
        ct = self.list_ct(lst)
        stmts.append(assign(rows, _call(_ajx("moveaxis"), [g, axis, const(0)])))
        added = _statements(f"{earlier} = []\n"
                            f"for {k} in range({rows}.shape[0]):\n"
                            f"    {earlier}.append({ct}.pop())\n"
                            f"for {k} in range({rows}.shape[0]):\n"
                            f"    {ct}.append({rows}[{k}] + {earlier}.pop())\n")
        appended = _statements(f"if len({ct}) == 0:\n"
                               f"    for {k} in range({rows}.shape[0]):\n"
                               f"        {ct}.append({rows}[{k}])\n")
        if empty:
            # No sum yet: popping from a list nothing appended to is untyped code. A read
            # of the list earlier in f, whose adjoint comes later, makes read_lists_init
            # fill the cotangent list with zeros; the sum is added then.
            self.stacks_onto_empty.append((lst, appended[0], added))
        else:
            appended[0].orelse = added
        return stmts + appended

    def concatenated_list_adjoint(self, s, lst, target, t, val):
        """Each element's piece of the result's cotangent is added to its entry of the
        list's cotangent list. That list is kept as for reads by index (``read_lists``), so
        it holds one entry per element here, shaped like the element: the entries give the
        pieces' sizes."""
        self.read_lists.setdefault(lst, s)
        stmts = []
        g = self.container_seed(target, t, stmts, val(target, old=False)).id
        axis = _static_param(s.value, "axis", 0)
        ndim = anno.get(anno.get(s.value, "operand_nodes")["arrays"], "type").elt.ndim
        ct = self.list_ct(lst)
        earlier, k, c, off, size = (self.names.fresh(n)
                                    for n in ("earlier", "k", "c", "off", "size"))
        if axis is None:  # the elements were flattened
            sizes = f"{c}.size"
            piece = f"_ajx.reshape({g}[{off}:{off} + {size}], {c}.shape)"
        else:
            axis %= ndim
            slices = [":"] * axis + [f"{off}:{off} + {size}"]
            sizes, piece = f"{c}.shape[{axis}]", f"{g}[{', '.join(slices)}]"
        return stmts + _statements(
            f"{earlier} = []\n"
            f"for {k} in range(len({ct})):\n"
            f"    {earlier}.append({ct}.pop())\n"
            f"{off} = 0\n"
            f"for {k} in range(len({earlier})):\n"
            f"    {c} = {earlier}.pop()\n"
            f"    {size} = {sizes}\n"
            f"    {ct}.append({c} + _ajx.cotangent_like({piece}, {c}))\n"
            f"    {off} = {off} + {size}\n")

    def list_read_adjoint(self, s, read, target, t, val):
        """``y = xs[i]``: y's cotangent is added to entry i of xs's cotangent list, which is
        kept as long as xs was at the read (``read_lists`` fills it at the start of the
        backward sweep). The entries after i are moved aside and back: the derivative code
        uses only appends and pops, which are differentiated again."""
        lst, index = read
        lst = self.list_root(lst)
        self.read_lists.setdefault(lst, s)
        index = _renamed(index, val)
        stmts = []
        for path in self.list_leaves(lst):
            if path not in {p for p, _ in float_leaves(t)}:
                continue
            i, held, k, c = (self.names.fresh(n) for n in ("i", "held", "k", "c"))
            ct = self.list_ct(lst, path)
            stmts.append(assign(i, gast.BinOp(left=index, op=gast.Mod(), right=_call(
                load("len"), [load(ct)]))))
            stmts += _statements(
                f"{held} = []\n"
                f"for {k} in range(len({ct}) - 1 - {i}):\n"
                f"    {held}.append({ct}.pop())\n"
                f"{c} = {ct}.pop()\n")
            # (the entry is shaped like the element read: y's value need not be taped)
            stmts.append(gast.Expr(value=_call(gast.Attribute(
                value=load(ct), attr="append", ctx=gast.Load()), [gast.BinOp(
                    left=load(c), op=gast.Add(), right=_call(_ajx("cotangent_like"), [
                        load(self.ct(target, path)), load(c)]))])))
            if target in self.unsafe:
                stmts.append(assign(self.ct(target, path), const(0.0)))
            stmts += _statements(f"for {k} in range(len({held})):\n"
                                 f"    {ct}.append({held}.pop())\n")
        return stmts

    def list_slice_adjoint(self, s, xs, bounds, target):
        """``ys = xs[a:b:c]``: entry j of ys's cotangent list is added to entry a + j c of
        xs's, kept as for reads by index (``read_lists``). Both are in step with their lists
        here, and the derivative code moves entries with pops and appends only."""
        xs = self.list_root(xs)
        self.read_lists.setdefault(xs, s)
        ends = []
        for end in (bounds.lower, bounds.upper, bounds.step):
            known = anno.get(end, "type") if end is not None else None
            if end is None or isinstance(end, gast.Constant) and end.value is None:
                ends.append(None)
            elif isinstance(end, gast.Constant) and type(end.value) is int:
                ends.append(repr(end.value))
            elif isinstance(known, Static) and type(known.value) is int:
                ends.append(repr(known.value))  # (`-1` in a loop: a name set every trip)
            elif isinstance(end, gast.Name) and end.id not in self.unsafe:
                ends.append(end.id)
            else:
                raise self.error(s, "differentiating a slice of a list built with append is "
                                 "supported with bounds that are constants or variables "
                                 "set once")
        stmts = []
        for path in self.list_leaves(xs):
            ct_y = self.ct(target, path)
            if ct_y not in self.list_cts:
                continue  # nothing read ys
            stmts += _statements(self._slice_cotangent_source(self.list_ct(xs, path), ct_y,
                                                              *ends))
        return stmts

    def _slice_cotangent_source(self, ct_x, ct_y, lower, upper, step):
        """Source adding the entries of ``ct_y`` to those of ``ct_x`` that the slice
        ``lower:upper:step`` (each source text or None) takes, with Python's rules for
        negative and out-of-range bounds; a negative step takes them from the end."""
        n, start, stop, taken, earlier, j, k, c = (self.names.fresh(h) for h in (
            "n", "start", "stop", "taken", "earlier", "j", "k", "c"))
        source = f"{n} = len({ct_x})\n"
        lo, hi = "0", n  # where the bounds are clamped to
        if step not in (None, "1"):
            st, lo, hi = (self.names.fresh(h) for h in ("step", "lo", "hi"))
            source += (f"{st} = {step}\n{lo} = 0\n{hi} = {n}\n"
                       f"if {st} < 0:\n    {lo} = -1\n    {hi} = {n} - 1\n")
        for name, end, default, backwards in ((start, lower, "0", f"{n} - 1"),
                                              (stop, upper, n, f"-1 - {n}")):
            source += f"{name} = {end or default}\n"
            if end is None and lo != "0":
                source += f"if {st} < 0:\n    {name} = {backwards}\n"
            source += (f"if {name} < 0:\n    {name} = {name} + {n}\n"
                       f"if {name} < {lo}:\n    {name} = {lo}\n"
                       f"if {name} > {hi}:\n    {name} = {hi}\n")
        # taken.pop() gives ys's entries first to last: a negative step meets their places
        # while xs's entries are popped from the end, a positive one while they go back
        source += (f"{taken} = []\n"
                   f"for {k} in range(len({ct_y})):\n"
                   f"    {taken}.append({ct_y}.pop())\n"
                   f"{earlier} = []\n"
                   f"for {j} in range({n}):\n"
                   f"    {c} = {ct_x}.pop()\n")
        forward_hit = f"{start} <= {k} and {k} < {stop}"
        if lo != "0":
            source += (f"    {k} = {n} - 1 - {j}\n"
                       f"    if {st} < 0 and {stop} < {k} and {k} <= {start} and "
                       f"({start} - {k}) % (0 - {st}) == 0:\n"
                       f"        {c} = {c} + {taken}.pop()\n")
            forward_hit = f"{st} > 0 and {forward_hit} and ({k} - {start}) % {st} == 0"
        return source + (
            f"    {earlier}.append({c})\n"
            f"for {k} in range({n}):\n"
            f"    {c} = {earlier}.pop()\n"
            f"    if {forward_hit}:\n"
            f"        {c} = {c} + {taken}.pop()\n"
            f"    {ct_x}.append({c})\n")

    def list_root(self, name):
        """The list ``name`` is another name of (``for o in xs`` reads ``seq = xs``; a
        function returning a list built by append returns another name for it)."""
        if not hasattr(self, "_untaken"):
            self._untaken = _untaken(self.fdef)
        while True:
            made = [t for t in gast.walk(self.fdef) if isinstance(t, gast.Assign) and
                    t.targets[0].id == name and id(t) not in self._untaken]
            if len(made) != 1 or not isinstance(made[0].value, gast.Name) or \
                    made[0].value.id not in self.locals():
                return name
            name = made[0].value.id

    def refuse_changed_list_arguments(self):
        """A list argument may be appended to or popped from (``changed_params``: its
        cotangent list comes in as the caller's after the call, and goes back as it
        stands before it), not assigned."""
        changed = changed_list_params(self.spec)
        for arg in self.fdef.args.args:
            if not holds_float_list(anno.get(arg, "type")):
                continue
            if arg.id in changed and arg.id not in self.list_in:
                raise self.error(arg, f"differentiating a function that changes its list "
                                 f"argument {arg.id!r} here (not called from compiled "
                                 f"code) is not supported yet")
            for n in gast.walk(self.fdef):
                if isinstance(n, gast.Name) and n.id == arg.id and \
                        isinstance(n.ctx, gast.Store):
                    raise self.error(n, f"differentiating a function that assigns its list "
                                     f"argument {arg.id!r} is not supported yet")

    def changing_call_forward(self, s):
        """The forward sweep of a call whose callee appends to (or pops from) a list
        argument: the values it reads are taped, and a copy of each such list as the call
        finds it (the callee's derivative runs it again on that)."""
        return [_locate(t, s) for t in self.push(self.call_reads(s.value))] + \
            self.tape_list_arguments(s) + [anno.clean_copy(s)]

    def tape_list_arguments(self, s):
        """Copies of the lists that call ``s`` passes and that change after it (in a later
        trip of its loop, or later in f, or in the call): the callee's derivative needs the
        list as the call found it. Its elements go onto a tape of elements, last first,
        and its length onto a tape of its own: a tape of lists would make the derivative
        code pass lists taken out of a list, which reverse mode cannot differentiate again
        (grad of grad)."""
        stmts = []
        changed = {n.id for n in changed_list_arguments(s.value)}
        for node in self.list_arguments(s.value):
            if node.id not in self.useful or node.id not in changed and \
                    not self.changes_after(s, node.id):
                continue
            n, k = self.names.fresh("n"), self.names.fresh("k")
            tape = self.tapes.setdefault(("before", id(s), node.id),
                                         self.names.fresh(f"tape_{node.id}"))
            lengths = self.tapes.setdefault(("before length", id(s), node.id),
                                            self.names.fresh(f"tape_len_{node.id}"))
            stmts += _statements(f"{n} = len({node.id})\n"
                                 f"for {k} in range({n}):\n"
                                 f"    {tape}.append({node.id}[{n} - 1 - {k}])\n"
                                 f"{lengths}.append({n})\n")
        return [_locate(t, s) for t in stmts]

    def pop_list_arguments(self, s, renames):
        """The copies ``tape_list_arguments`` made, popped (``renames``: list -> copy)."""
        stmts = []
        for node in self.list_arguments(s.value):
            tape = self.tapes.get(("before", id(s), node.id))
            if tape is None:
                continue
            copy, n, k = (self.names.fresh(h) for h in (f"{node.id}_before", "n", "k"))
            lengths = self.tapes[("before length", id(s), node.id)]
            stmts += _statements(f"{n} = {lengths}.pop()\n"
                                 f"{copy} = []\n"
                                 f"for {k} in range({n}):\n"
                                 f"    {copy}.append({tape}.pop())\n")
            renames[node.id] = [copy]
        return stmts

    def list_arguments(self, value):
        """The variables call ``value`` passes as list arguments of a user function."""
        callee = anno.get(value, "callee") if isinstance(value, gast.Call) else None
        if callee is None or getattr(callee.fn, "custom_rule", None) is not None:
            return []
        sig = inspect.signature(callee.fn)
        bound = sig.bind(*value.args, **{k.arg: k.value for k in value.keywords}).arguments
        return [bound[p] for p, t in zip(sig.parameters, callee.arg_types)
                if holds_float_list(t) and isinstance(bound.get(p), gast.Name) and
                bound[p].id in self.locals()]

    def changes_after(self, s, lst):
        """Whether list ``lst`` may change after statement ``s`` reads it: an append, pop
        or making of it (or a call changing it) later in f, or anywhere in a loop around
        ``s``."""
        if not hasattr(self, "_source_order"):
            self._source_order, self._loops_around = {}, {}

            def number(stmts, loops):
                for t in stmts:
                    self._source_order[id(t)], self._loops_around[id(t)] = \
                        len(self._source_order), loops
                    inner = loops + ((t,) if isinstance(t, (gast.For, gast.While)) else ())
                    for field in ("body", "orelse"):
                        number(getattr(t, field, None) or [], inner)
            number(self.fdef.body, ())
        lst = self.list_root(lst)

        def changes(t):
            for n in gast.walk(t):
                if isinstance(n, gast.Call) and (anno.get(n, "list_append") or anno.get(
                        n, "list_pop")) and self.list_root(n.func.value.id) == lst:
                    return True
                if isinstance(n, gast.Call) and any(self.list_root(a.id) == lst for a in
                                                    changed_list_arguments(n)):
                    return True
                if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store) and \
                        self.list_root(n.id) == lst:
                    return True
            return False
        at = self._source_order[id(s)]
        later = [t for t in gast.walk(self.fdef) if isinstance(t, gast.stmt) and
                 self._source_order.get(id(t), -1) > at and
                 not isinstance(t, (gast.For, gast.While, gast.If))]
        return any(changes(t) for t in later) or any(
            changes(t) for loop in self._loops_around[id(s)] for t in loop.body)

    def call_reads(self, value):
        return list(dict.fromkeys(n.id for n in gast.walk(value) if isinstance(n, gast.Name)
                                  and isinstance(n.ctx, gast.Load) and n.id in self.locals()))

    def changing_call_adjoint(self, s):
        """The adjoint of a call (``push(hs, x)``, or ``y = grow(hs, x)``) whose callee
        changes list arguments: its derivative takes each such list's cotangent list as
        the call left it and returns it as the call found it, which replaces it here."""
        value = s.value
        lists = [n for n in changed_list_arguments(value) if n.id in self.useful]
        if not lists:
            return []
        renames = {}
        stmts = self.pop(self.call_reads(value), renames)

        def val(name, old=True):
            return load(renames[name][-1]) if renames.get(name) else load(name)

        stmts += self.pop_list_arguments(s, renames)
        target = s.targets[0].id if isinstance(s, gast.Assign) else None
        return stmts + self.call_adjoint(s, anno.get(value, "callee"), target, None, val)

    def plan_remade_lists(self):
        """Lists made more than once on a path (``hs = [hs[-1] * 2.0]`` in a loop and read
        after it; made before a branch and again in it), where every making but the first
        replaces a list (``remakes``: its id -> the list). The forward sweep tapes the list
        a making replaces; the making's adjoint, once the new list's appends have emptied
        its cotangent list, starts it again with a zero per element of the old list."""
        self.remakes = {}
        self.remade = set()
        stores = {}
        for n in gast.walk(self.fdef):
            if isinstance(n, gast.Assign) and isinstance(anno.get(n.targets[0], "type"),
                                                         ListType):
                stores.setdefault(n.targets[0].id, []).append(n)
        for lst, made in sorted(stores.items()):
            if lst in self.params or lst not in self.useful or not self.list_leaves(lst) or \
                    _makings_per_path(self.fdef.body, lst, self.locals()) == (1, 1) or \
                    self.loop_making(lst, planned=True) is not None or \
                    not all(_makes_list(s, lst, self.locals()) for s in made):
                continue
            found = {}
            end = _defined_at_makings(self.fdef.body, lst, self.locals(), "no", found)
            if end != "yes" or len(found) != len(made) or "maybe" in found.values() or \
                    self.renamed_before_a_making(lst, made):
                continue  # (made in a loop's first trip only, say): refused when read
            self.remade.add(lst)
            self.read_lists.setdefault(lst, made[0])
            self.remakes.update((i, lst) for i, state in found.items() if state == "yes")

    def renamed_before_a_making(self, lst, made):
        """Whether another name for list ``lst`` (``seq = lst``, as ``for h in lst`` reads
        it) may be read after a making of ``lst`` replaced it: its reads would add to the
        new list's cotangent list. Each read must follow the renaming, in its trip, with no
        making between them."""
        order, loops, where = {}, [], {}

        def number(stmts):  # statements in the order of the source, with their loops
            for t in stmts:
                order[id(t)], where[id(t)] = len(order), (t, tuple(loops))
                inner = isinstance(t, (gast.For, gast.While))
                loops.extend([id(t)] if inner else [])
                for field in ("body", "orelse"):
                    number(getattr(t, field, None) or [])
                del loops[len(loops) - inner:]
        number(self.fdef.body)
        makings = [(order[id(m)], where[id(m)][1]) for m in made]
        for alias_id, (alias, around) in where.items():
            if not (isinstance(alias, gast.Assign) and isinstance(alias.value, gast.Name) and
                    alias.value.id == lst):
                continue
            name = alias.targets[0].id
            for read_id, (t, read_loops) in where.items():
                fields = [getattr(t, f) for f in ("value", "test", "iter") if hasattr(t, f)]
                if not any(isinstance(n, gast.Name) and n.id == name
                           for f in fields for n in gast.walk(f)):
                    continue
                if order[read_id] < order[alias_id] or any(
                        order[alias_id] < at < order[read_id] or
                        set(read_loops) - set(around) & set(loops_of_making)
                        for at, loops_of_making in makings):
                    return True
        return False

    def tape_replaced_list(self, s):
        """The forward sweep's push, before making ``s``, of the list it replaces."""
        lst = self.remakes.get(id(s))
        if lst is None:
            return []
        tape = self.tapes.setdefault(("replaced", id(s)), self.names.fresh(f"tape_{lst}"))
        return [gast.Expr(value=_call(gast.Attribute(value=load(tape), attr="append",
                                                     ctx=gast.Load()), [load(lst)]))]

    def restore_replaced_list(self, s):
        """After the adjoint of making ``s``: the cotangent list of the list it replaced."""
        lst = self.remakes.get(id(s))
        if lst is None:
            return []
        old = self.names.fresh(f"{lst}_replaced")
        tape = self.tapes[("replaced", id(s))]
        return [assign(old, _call(gast.Attribute(value=load(tape), attr="pop",
                                                 ctx=gast.Load()), []))] + \
            self.zeros_for(lst, old)

    def read_lists_init(self):
        """The cotangent lists of lists read by index start with a zero per element of the
        list as the forward sweep left it (the adjoints of the appends then pop them)."""
        stmts = []
        for lst, appended, added in self.stacks_onto_empty:
            if lst in self.read_lists:
                appended.orelse = added
        for lst, read in sorted(self.read_lists.items()):
            if lst not in self.params and \
                    _makings_per_path(self.fdef.body, lst, self.locals()) != (1, 1):
                loop = self.loop_making(lst)
                branch = self.branch_making(lst) if loop is None else None
                if branch is not None and lst not in self.remade:
                    self.cotangent_list_in_branch(lst, *branch)
                    continue
                if loop is None and lst not in self.remade:
                    raise self.error(read, f"differentiating reads of list {lst!r} by index "
                                     f"needs the list made on every path that reads it "
                                     f"(not in some trips of a loop only), and no other "
                                     f"name for it read after {lst!r} is made again")
                if loop is not None:
                    self.cotangent_list_per_trip(lst, loop)
                    continue
            if lst in self.list_in or self.in_place and lst == getattr(self, "output_list",
                                                                        None):
                continue  # the caller's (see _build)
            if lst == getattr(self, "output_list", None):  # the seed, copied
                k = self.names.fresh("k")
                stmts += _statements(f"for {k} in range(len({self.seed})):\n"
                                     f"    {self.list_ct(lst)}.append({self.seed}[{k}])\n")
            else:
                stmts += self.zeros_for(lst, lst)
        return stmts

    def zeros_for(self, lst, value):
        """Append to ``lst``'s cotangent lists a zero per element of the list ``value``."""
        stmts = []
        for path in self.list_leaves(lst):
            k = self.names.fresh("k")
            zero = _call(_ajx("cotangent_like"), [const(0.0), _sub(gast.Subscript(
                value=load(value), slice=load(k), ctx=gast.Load()), path)])
            stmts.append(gast.For(target=store(k), iter=_call(load("range"), [
                _call(load("len"), [load(value)])]), body=[gast.Expr(value=_call(
                    gast.Attribute(value=load(self.list_ct(lst, path)), attr="append",
                                   ctx=gast.Load()), [zero]))], orelse=[], type_comment=None))
        return stmts

    def loop_making(self, lst, planned=False):
        """The loop whose body (at its top level) makes list ``lst`` afresh each trip, when
        nothing else assigns ``lst`` and nothing outside the loop reads it; else None.
        ``planned``: before the sweeps are written (any loop of f, not only those written)."""
        stores = [n for n in gast.walk(self.fdef) if isinstance(n, gast.Name) and
                  n.id == lst and isinstance(n.ctx, gast.Store)]
        for loop in gast.walk(self.fdef):
            if not isinstance(loop, (gast.For, gast.While)) or \
                    not planned and id(loop) not in self.loop_bodies:
                continue
            made = [t for t in loop.body if _makes_list(t, lst, self.locals())]
            inside = {id(n) for n in gast.walk(loop)}
            if len(made) == 1 and len(stores) == 1 and all(
                    id(n) in inside for n in gast.walk(self.fdef)
                    if isinstance(n, gast.Name) and n.id == lst):
                return loop
        return None

    def cotangent_list_per_trip(self, lst, loop):
        """A list made afresh each trip of ``loop`` and read there: each trip's forward
        sweep tapes the list as the trip leaves it, and the backward sweep starts the
        trip's cotangent list with a zero per element of it (the appends' adjoints then
        empty it by the time they reach the list's making)."""
        forward_body, backward_body = self.loop_bodies[id(loop)]
        tape = self.tapes.setdefault(("made in the loop", lst), self.names.fresh(f"tape_{lst}"))
        forward_body.insert(len(forward_body) - 1, _locate(gast.Expr(value=_call(
            gast.Attribute(value=load(tape), attr="append", ctx=gast.Load()), [load(lst)])),
            loop))
        left = self.names.fresh(f"{lst}_left")
        fill = [assign(left, _call(gast.Attribute(value=load(tape), attr="pop",
                                                  ctx=gast.Load()), []))]
        fill += self.zeros_for(lst, left)
        backward_body[0:0] = [_locate(t, loop) for t in fill]

    def branch_making(self, lst):
        """(the if, 0 for its body or 1 for its orelse) where that block makes list ``lst``
        once on every path through it, at its top level, and holds every use of ``lst``
        (a trip of a loop peeled into ``if trips:``); else None."""
        uses = [n for n in gast.walk(self.fdef) if isinstance(n, gast.Name) and n.id == lst]
        for branch in gast.walk(self.fdef):
            if not isinstance(branch, gast.If) or id(branch) not in self.branch_bodies:
                continue
            for side, block in enumerate((branch.body, branch.orelse)):
                inside = {id(n) for t in block for n in gast.walk(t)}
                if all(id(n) in inside for n in uses) and \
                        any(_makes_list(t, lst, self.locals()) for t in block) and \
                        _makings_per_path(block, lst, self.locals()) == (1, 1):
                    return branch, side
        return None

    def cotangent_list_in_branch(self, lst, branch, side):
        """A list made in one branch of an if and used only there: the branch's forward
        sweep tapes the list as it leaves it, and its backward sweep starts the cotangent
        list with a zero per element of it (as ``cotangent_list_per_trip`` does)."""
        forward_body = (self.generated[id(branch)].body, self.generated[id(branch)].orelse)[side]
        backward_body = self.branch_bodies[id(branch)][side]
        tape = self.tapes.setdefault(("made in the branch", lst),
                                     self.names.fresh(f"tape_{lst}"))
        forward_body.append(_locate(gast.Expr(value=_call(gast.Attribute(
            value=load(tape), attr="append", ctx=gast.Load()), [load(lst)])), branch))
        left = self.names.fresh(f"{lst}_left")
        fill = [assign(left, _call(gast.Attribute(value=load(tape), attr="pop",
                                                  ctx=gast.Load()), []))]
        backward_body[0:0] = [_locate(t, branch) for t in fill + self.zeros_for(lst, left)]

    def pop_adjoint(self, s, target, val):
        """``y = xs.pop()``: y's cotangent goes back on xs's cotangent list, shaped like y
        (where nothing read y it is still the weak 0.0), for the adjoint of the append that
        put y there."""
        lst = s.value.func.value
        # a list made once: its cotangent list starts with a zero per element the list is
        # left with, as for reads by index, which the appends' adjoints pop too (`a =
        # hs.pop()` alone). (One made per trip and emptied there, a tape, needs none.)
        root = self.list_root(lst.id)
        if root not in self.params and \
                _makings_per_path(self.fdef.body, root, self.locals()) == (1, 1):
            self.read_lists.setdefault(root, s)
        stmts = []
        for path in self.list_leaves(lst.id):
            entry = _call(_ajx("cotangent_like"), [load(self.ct(target, path)),
                                                  _sub(val(target, old=False), path)])
            stmts.append(gast.Expr(value=_call(gast.Attribute(
                value=load(self.list_ct(lst.id, path)), attr="append", ctx=gast.Load()),
                [entry])))
            if target in self.unsafe:
                stmts.append(assign(self.ct(target, path), const(0.0)))
        return stmts

    def refuse_other_list_uses(self, s):
        """A list built with append reaches the result only through appends, pops, reads by
        index, loops and stacking: any other use (an argument to a call, a slice) would drop
        its cotangent, so it is the user's error rather than a wrong derivative."""
        value = s.value
        if isinstance(value, gast.Name) or anno.get(value, "list_pop") or \
                list_read(value, self.locals()) is not None or \
                anno.get(value, "callee") is not None:
            return
        if holds_float_list(anno.get(s.targets[0], "type")) and \
                isinstance(value, (gast.Subscript, gast.Attribute)) and \
                not holds_float_list(anno.get(value.value, "type")):
            raise self.error(s, "differentiating a list taken out of a container (or a "
                             "derivative that passes lists between functions, at second "
                             "order) is not supported yet")
        # a list in a tuple display (a derivative's result holding the primal list) gets
        # no cotangent (taking it out of the tuple to read it is refused above): zeros, which
        # its appends' adjoints pop
        parts = [value]
        if isinstance(value, gast.Tuple):
            parts = [e for e in value.elts if not isinstance(e, gast.Name)]
            for e in value.elts:
                if isinstance(e, gast.Name) and e.id in self.locals() and \
                        holds_float_list(anno.get(e, "type")):
                    self.read_lists.setdefault(self.list_root(e.id), s)
        for n in (n for part in parts for n in gast.walk(part)):
            if isinstance(n, gast.Name) and n.id in self.locals() and \
                    holds_float_list(anno.get(n, "type")):
                if not re.search(rf"\b{n.id}\b", "".join(self.spec.parsed.lines)):
                    raise self.error(s, "differentiating the derivative (second order) of "
                                     "code that passes lists built with append between "
                                     "functions is not supported yet")
                raise self.error(s, f"the list {n.id!r} (built with append) is used here: "
                                 f"differentiating that is not supported yet. Read its "
                                 f"elements in this function ({n.id}[i], for x in {n.id}), "
                                 f"or pass jnp.stack({n.id})")

    def list_argument_adjoint(self, s, lst, ct_expr, callee):
        """A list passed to a call: the callee's cotangent list for it (None where the
        callee does not read it) is added entry by entry to the list's own, kept as the
        cotangents of lists read by index are (``list_read_adjoint``)."""
        lst = self.list_root(lst)
        if self.list_leaves(lst) != [()]:
            raise self.error(s, f"the list {lst!r} passed to {callee.fn.__name__}() holds "
                             f"containers: differentiating that is not supported yet")
        self.read_lists.setdefault(lst, s)
        ct = self.list_ct(lst)
        c, held, k = (self.names.fresh(n) for n in ("c", "held", "k"))
        stmts = [assign(c, ct_expr)]
        add = _statements(f"{held} = []\n"
                          f"for {k} in range(len({ct})):\n"
                          f"    {held}.append({ct}.pop())\n"
                          f"for {k} in range(len({held})):\n"
                          f"    {ct}.append({held}.pop() + {c}[{k}])\n")
        stmts.append(gast.If(test=gast.Compare(left=load(c), ops=[gast.IsNot()],
                                               comparators=[const(None)]),
                             body=add, orelse=[]))
        return stmts
