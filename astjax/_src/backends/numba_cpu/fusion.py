"""Loop fusion: elementwise ops and reductions as scalar loop nests.

An elementwise result that is read exactly once, by a later elementwise op or
reduction in the same block, at the same rank, and whose inputs are not
reassigned in between, is not stored: its scalar expression is inlined into
the consumer's loop. Every other elementwise result gets its own loop nest.

Shapes are symbolic: a loop's sizes come from its array inputs at run time.
Where two inputs share a dimension their sizes are checked before the loop, so
indexing never goes out of bounds (see ``Loop.header``).
"""
import gast
import numpy as np

from ...ir import anno
from ...ir.types import ArrayType, SequenceType, Static, as_array_type
from ...ops.registry import REGISTRY
from .parallel import loop_nest
from .scalar import cast, scalar_op, typed_literal

_UNLOWERED = set()
FUSABLE = {name for name, op in REGISTRY.items()
           if op.family == "elementwise" and name not in _UNLOWERED} | {
    "where", "astype", "clip", "stop_gradient", "cotangent_like", "fma", "broadcast_to",
    "round", "ldexp", "nan_to_num"}
REDUCTIONS = {"sum", "prod", "max", "min", "mean", "any", "all"}
_LOGICAL = {"logical_and", "logical_or", "logical_xor", "logical_not"}


class Names:
    """Fresh names for loop indices and sizes that no variable of the function uses."""

    def __init__(self, fdef):
        self.taken = {n.id for n in gast.walk(fdef) if isinstance(n, gast.Name)}
        self.counter = 0

    def fresh(self, base):
        while True:
            name = f"{base}{self.counter}"
            self.counter += 1
            if name not in self.taken:
                self.taken.add(name)
                return name


# --- which producers are inlined ---------------------------------------------------------------

class Plan:
    def __init__(self):
        self.inlined = set()      # producer statements not emitted where they stand
        self.producer = {}        # variable -> its inlined producer statement
        self.groups = {}          # first statement of a fused group -> the Group
        self.grouped = set()      # the other statements of groups (emitted with the first)
        self.before = {}          # statement -> scalar statements moved up to run before it


class Group:
    """Elementwise statements of one shape that run as one loop nest: each element's
    values are scalars, and only ``escapes`` (read after the group) are stored."""

    def __init__(self, members, escapes):
        self.members = members
        self.escapes = escapes


def _loads(node):
    return [n.id for n in gast.walk(node) if isinstance(n, gast.Name)
            and isinstance(n.ctx, gast.Load)]


def _stores(node):
    return {n.id for n in gast.walk(node) if isinstance(n, gast.Name)
            and isinstance(n.ctx, gast.Store)}


def _same(a, b):
    return isinstance(a, ArrayType) and isinstance(b, ArrayType) and a.dtype == b.dtype \
        and a.ones == b.ones


def _is_static(node, value):
    t = anno.get(node, "type")
    return isinstance(t, Static) and not isinstance(t.value, bool) and t.value == value \
        and not anno.get(node, "captured")


def trivial(value, out_type):
    """The operand an op call returns unchanged (``x + 0``, a cotangent already shaped
    like its value, ...), or None. Derivative code is full of these."""
    op = anno.get(value, "op")
    if op is None or anno.has(value, "folded"):
        return None
    operands = anno.get(value, "operand_nodes")
    name = op.name
    candidates = []
    if name == "add":
        candidates = [(operands["x"], operands["y"]), (operands["y"], operands["x"])]
        candidates = [(keep, other) for keep, other in candidates if _is_static(other, 0)]
    elif name == "subtract" and _is_static(operands["y"], 0):
        candidates = [(operands["x"], None)]
    elif name == "multiply":
        candidates = [(keep, other) for keep, other in
                      [(operands["x"], operands["y"]), (operands["y"], operands["x"])]
                      if _is_static(other, 1)]
    elif name in ("cotangent_like",):
        candidates = [(operands["d"], None)]
    elif name == "unbroadcast":
        # equal types mean equal shapes here: a size-1 dim broadcast at run time would
        # already have raised _Broadcast in the forward loop
        candidates = [(operands["g"], None)]
    elif name in ("stop_gradient", "positive", "astype"):
        candidates = [(operands["x"], None)]
    for keep, _ in candidates:
        if isinstance(keep, gast.Name) and _same(anno.get(keep, "type"), out_type):
            return keep
    return None


def _fusable_assign(s):
    if not isinstance(s, gast.Assign) or anno.has(s.value, "folded"):
        return None
    op = anno.get(s.value, "op")
    return op if op is not None and (op.name in FUSABLE or op.name in REDUCTIONS) else None


def _counts(fdef):
    """How often each variable is read, and stored."""
    from .simplify import load_nodes
    load_count, store_count = {}, {}
    for n in load_nodes(fdef):
        load_count[n.id] = load_count.get(n.id, 0) + 1
    for n in gast.walk(fdef):
        if isinstance(n, gast.Name) and not isinstance(n.ctx, gast.Load):
            store_count[n.id] = store_count.get(n.id, 0) + 1
    return load_count, store_count


def _blocks(fdef):
    """Every statement list (bodies and else branches), outermost first."""
    for node in gast.walk(fdef):
        for field in ("body", "orelse"):
            stmts = getattr(node, field, None)
            if isinstance(stmts, list) and stmts and isinstance(stmts[0], gast.stmt):
                yield stmts


def plan(fdef):
    load_count, store_count = _counts(fdef)
    result = Plan()
    for stmts in _blocks(fdef):
        _plan_block(stmts, load_count, store_count, result)
    return result


def _plan_block(stmts, load_count, store_count, result):
    reads = {}  # inlined variable -> every variable its expression reads
    for i, s in enumerate(stmts):
        op = _fusable_assign(s)
        if op is None or op.name in REDUCTIONS:
            continue
        target = s.targets[0].id
        t = anno.get(s.targets[0], "type")
        if not isinstance(t, ArrayType) or t.ndim == 0 or load_count.get(target) != 1 \
                or store_count.get(target) != 1:
            continue
        consumer = next((j for j in range(i + 1, len(stmts))
                         if target in _loads(stmts[j])), None)
        if consumer is None or _fusable_assign(stmts[consumer]) is None \
                or trivial(stmts[consumer].value, anno.get(stmts[consumer].targets[0],
                                                           "type")) is not None:
            continue  # a consumer that only passes its operand on needs it stored
        operands = anno.get(stmts[consumer].value, "operand_nodes")
        used_as = [k for k, v in operands.items() if isinstance(v, gast.Name) and v.id == target]
        if not used_as or (anno.get(stmts[consumer].value, "op").name == "cotangent_like"
                           and "z" in used_as):
            continue  # cotangent_like reads z's shape only: z must exist as an array
        c_op = anno.get(stmts[consumer].value, "op")
        c_type = anno.get(stmts[consumer].targets[0], "type")
        loop_type = c_type if c_op.name not in REDUCTIONS else t
        if not isinstance(loop_type, ArrayType) or loop_type.ones != t.ones:
            continue  # inlining into a broadcast would recompute it per broadcast element
        my_reads = set()
        for name in _loads(s.value):
            my_reads |= reads.get(name, {name})
        if any(my_reads & _stores(stmts[k]) for k in range(i + 1, consumer)):
            continue
        reads[target] = my_reads
        result.inlined.add(s)
        result.producer[target] = s


def group(fdef, result, exclude=()):
    """Fill ``result.groups``: runs of elementwise statements with one loop shape, connected
    by what they read (so their sizes agree at run time), become one loop nest each. The
    threefry hash, ~100 uint32 ops each read twice, is then one pass over memory."""
    counts = _counts(fdef)
    for stmts in _blocks(fdef):
        run, shape, hoisted, pairs = [], None, [], set()
        for s in stmts:
            if s in result.inlined:
                continue  # emitted inside its consumer
            here = _loop_shape(s, exclude, pairs)
            if here is None and run and _hoistable(s, run, result):
                hoisted.append(s)  # a scalar between two loops: computed first
                continue
            if here is None or here != shape:
                _group_run(run, hoisted, result, counts)
                run, hoisted, pairs = [], [], set()
            if here is not None:
                run.append(s)
                if _is_frexp(s):
                    pairs.add(s.targets[0].id)
            shape = here
        _group_run(run, hoisted, result, counts)


def _reads(stmt, result):
    """The variables a statement reads, its inlined producers' reads included."""
    from .simplify import load_nodes
    out = []
    for n in load_nodes(stmt.value) if isinstance(stmt, gast.Assign) else load_nodes(stmt):
        producer = result.producer.get(n.id)
        out += _reads(producer, result) if producer is not None else [n.id]
    return out


def _hoistable(s, run, result):
    """A scalar op between statements of a run that reads none of their results, nor
    writes what they read: computing it before the run changes nothing."""
    if not (isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name)):
        return False
    if isinstance(s.value, gast.Attribute) and isinstance(s.value.value, gast.Name) \
            and s.value.attr in ("shape", "size"):
        pass  # a shape: a tuple of sizes
    elif anno.get(s.value, "op") is None:
        return False
    else:
        t = anno.get(s.targets[0], "type")
        if not (isinstance(t, Static) or isinstance(t, ArrayType) and t.ndim == 0):
            return False
    touched = {m.targets[0].id for m in run}
    if set(_reads(s, result)) & touched:
        return False
    return not any(s.targets[0].id in _reads(m, result) for m in run)


def _is_frexp(s):
    return isinstance(s, gast.Assign) and getattr(anno.get(s.value, "op"), "name", None) \
        == "frexp" and not anno.has(s.value, "folded")


def _loop_shape(s, exclude, pairs=()):
    """The ``ones`` of the loop a statement can join a group with, or None. Besides
    elementwise ops: ``frexp`` (a pair per element) and ``m = pair[k]`` of such a pair
    earlier in the run (``pairs``)."""
    if s in exclude or not (isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name)):
        return None
    t = anno.get(s.targets[0], "type")
    if _is_frexp(s):
        x = as_array_type(anno.get(anno.get(s.value, "operand_nodes")["x"], "type"))
        ok = isinstance(t, SequenceType) and x.ndim and x.dtype.kind == "f" \
            and all(isinstance(e, ArrayType) and e.ones == x.ones for e in t.elts)
        return x.ones if ok else None
    if isinstance(s.value, gast.Subscript) and isinstance(s.value.value, gast.Name) \
            and s.value.value.id in pairs:
        return t.ones if isinstance(t, ArrayType) and t.ndim else None
    op = _fusable_assign(s)
    if op is None or op.name in REDUCTIONS or s in exclude \
            or not isinstance(s.targets[0], gast.Name):
        return None
    t = anno.get(s.targets[0], "type")
    if not isinstance(t, ArrayType) or t.ndim == 0 or trivial(s.value, t) is not None:
        return None
    return t.ones


def _group_run(run, hoisted, result, counts):
    if len(run) < 2:
        return
    load_count, store_count = counts
    reads = [_reads(s, result) for s in run]
    targets = [s.targets[0].id for s in run]
    parent = list(range(len(run)))

    def root(k):
        while parent[k] != k:
            k = parent[k]
        return k

    defined = {}
    for k, names in enumerate(reads):
        for name in names:
            if name in defined:
                parent[root(k)] = root(defined[name])
        defined[targets[k]] = k
    components = {}
    for k in range(len(run)):
        components.setdefault(root(k), []).append(k)
    components = list(components.values())
    if len(components) > 1:  # each runs where its first statement stood: no name clashes
        for a in components:
            touched = {n for k in a for n in reads[k]} | {targets[k] for k in a}
            for b in components:
                if b is not a and touched & {targets[k] for k in b}:
                    return
    for members in components:
        if len(members) < 2:
            continue
        escapes = set()
        for k in members:
            name = targets[k]
            if any(targets[j] == name for j in members if j > k):
                continue  # overwritten inside the group: read there only
            inside = sum(reads[j].count(name) for j in members if j > k)
            if store_count.get(name) != 1 or load_count.get(name, 0) != inside:
                if _is_frexp(run[k]):
                    return  # a pair read outside: stored as two arrays by its lowering
                escapes.add(run[k])
        statements = [run[k] for k in members]
        result.groups[statements[0]] = Group(statements, escapes)
        result.grouped.update(statements[1:])
    if hoisted and any(s in result.groups for s in run):
        result.before[run[0]] = hoisted
        result.grouped.update(hoisted)


# --- loop nests --------------------------------------------------------------------------------

class Loop:
    """One loop nest of rank ``rank``: collects its array inputs while expressions are built."""

    def __init__(self, emitter, rank, where):
        self.emitter = emitter
        self.rank = rank
        self.where = where
        self.leaves = {}      # array variable -> (type, marker)
        self.shape_only = {}  # arrays that only give the loop its shape
        self.scalars = {}     # variable computed earlier in this loop -> its scalar
        self.shapes = []      # (size texts, type) of broadcast_to outputs: sizes of dims

    # expressions
    def expression(self, node):
        """Scalar source of op call ``node`` for one element of the loop."""
        op = anno.get(node, "op")
        operands = anno.get(node, "operand_nodes")
        out_dtype = as_array_type(anno.get(node, "type")).dtype
        types = {name: anno.get(v, "type") for name, v in operands.items()}
        promoted = op.promoted_dtype(types)
        name = op.name
        if name == "astype":
            x = operands["x"]
            return cast(self.operand(x), as_array_type(types["x"]).dtype, out_dtype)
        if name in ("real", "imag", "conjugate") and \
                as_array_type(types["x"]).dtype.kind != "c":  # no .imag on Numba floats
            x = operands["x"]
            if name == "imag":
                self.operand(x)  # only for the loop's shape
                return typed_literal(0, out_dtype)
            return cast(self.operand(x), as_array_type(types["x"]).dtype, out_dtype)
        if name == "power" and isinstance(types["y"], Static) \
                and not isinstance(types["y"].value, bool) and types["y"].value in (1, 2, 3):
            x = self.operand(operands["x"], promoted[0])  # small powers: multiplies
            return "(" + " * ".join([x] * int(types["y"].value)) + ")"
        if name == "broadcast_to":  # each element reads its operand's broadcast element
            shape = anno.get(node, "param_nodes")["shape"]
            out = as_array_type(anno.get(node, "type"))
            st = anno.get(shape, "type")
            if isinstance(st, Static) and not anno.get(shape, "captured"):
                sizes = [str(int(v)) for v in st.value]
            else:
                text = self.emitter.atom(shape)
                sizes = [f"{text}[{k}]" for k in range(out.ndim)]
            self.shapes.append((sizes, out))
            return self.operand(operands["a"])
        if name == "cotangent_like":
            like = operands["z"]
            if as_array_type(types["z"]).ndim and not (
                    isinstance(like, gast.Name) and like.id in self.scalars):
                self.shape_only[self.emitter.atom(like)] = as_array_type(types["z"])
            return self.operand(operands["d"], out_dtype)
        if name == "round":
            return self._rounded(node, self.operand(operands["x"], out_dtype), out_dtype)
        if name == "nan_to_num":
            return self._nan_to_num(node, self.operand(operands["x"], out_dtype), out_dtype)
        if name == "clip":
            text = self.operand(operands["arr"], promoted[0])
            low = operands.get("min", operands.get("a_min"))
            high = operands.get("max", operands.get("a_max"))
            if low is not None and not _is_none(low):
                text = f"_rt.maximum({text}, {self.operand(low, promoted[0])})"
            if high is not None and not _is_none(high):
                text = f"_rt.minimum({text}, {self.operand(high, promoted[0])})"
            return text
        args = []
        for operand_name in op.operands:
            v = operands[operand_name]
            if name in _LOGICAL:
                args.append(self.operand(v, np.bool_))
            elif name == "where" and operand_name == "condition":
                args.append(self.operand(v, np.bool_))
            elif promoted is not None and operand_name in op.promote:
                args.append(self.operand(v, promoted[0]))
            else:
                args.append(self.operand(v))
        text = scalar_op(name, args, out_dtype, in_loop=self.rank > 0)
        if text is None:
            from .emitter import Unsupported
            raise Unsupported(f"{name} in a loop")
        return text

    def _nan_to_num(self, node, x, dtype):
        """nan, +inf and -inf replaced by static values (the dtype's largest and smallest
        finite values by default, as NumPy and JAX); integers and bools unchanged."""
        dtype = np.dtype(dtype)
        if dtype.kind in "biu":
            return x
        if dtype.kind != "f":
            from .emitter import Unsupported
            raise Unsupported(f"nan_to_num of {dtype}")
        info = np.finfo(dtype)
        values = [self.emitter.static_param(node, n, d) for n, d in (
            ("nan", 0.0), ("posinf", None), ("neginf", None))]
        nan, pos, neg = (typed_literal(d if v is None else v, dtype)
                         for v, d in zip(values, (0.0, info.max, info.min)))
        return (f"({nan} if {x} != {x} else ({pos} if {x} == np.inf else "
                f"({neg} if {x} == -np.inf else {x})))")

    def operand(self, node, dtype=None):
        """Scalar source of an operand atom, cast to ``dtype`` when given."""
        t = anno.get(node, "type")
        if isinstance(t, Static) and not anno.get(node, "captured"):
            if t.value is None:
                from .emitter import Unsupported
                raise Unsupported("None operand")
            target = dtype if dtype is not None else as_array_type(t).dtype
            return typed_literal(t.value, target)
        t = as_array_type(t)
        if isinstance(node, gast.Name) and node.id in self.scalars:
            text = self.scalars[node.id]
        elif isinstance(node, gast.Name) and node.id in self.emitter.plan.producer:
            text = self.expression(self.emitter.plan.producer[node.id].value)
        else:
            name = self.emitter.atom(node)
            if t.ndim == 0:
                text = name
            else:
                marker = f"\0{len(self.leaves)}\0"
                self.leaves.setdefault(name, (t, marker))
                text = self.leaves[name][1]
        return cast(text, t.dtype, dtype) if dtype is not None else text

    def _rounded(self, node, x, dtype):
        """NumPy's round: half to even at ``decimals`` digits (x * 10**d rounded, then
        divided back; for d < 0, divided then multiplied); integers unchanged."""
        decimals = anno.get(node, "param_nodes").get("decimals")
        d = anno.get(decimals, "type").value if decimals is not None else 0
        if dtype.kind in "iu" or d > np.log10(np.finfo(dtype).max):
            return x
        if dtype not in (np.float32, np.float64):
            from .emitter import Unsupported
            raise Unsupported(f"round of {dtype}")
        if d == 0:
            return f"np.rint({x})"
        scale = typed_literal(10.0 ** abs(d), dtype)
        return f"(np.rint({x} * {scale}) / {scale})" if d > 0 else \
            f"(np.rint({x} / {scale}) * {scale})"

    # the nest
    def header(self):
        """Lines computing the loop's sizes; returns (lines, sizes, leaf texts).

        Inputs sharing a dimension must agree on its size. A size-1 dimension that only
        shows at run time (``x[:k]`` with k == 1) raises ``_Broadcast``: the python backend
        then runs that call with NumPy's broadcasting (see ``api.Compiled``)."""
        names = self.emitter.names
        rank = self.rank
        contributors = [[] for _ in range(rank)]  # per dim: texts of sizes that must agree
        arrays = list(self.leaves.items()) + [(n, (t, None)) for n, t in self.shape_only.items()]
        for name, (t, _) in arrays:
            for k, one in enumerate(t.ones):
                if not one:
                    contributors[rank - t.ndim + k].append(f"{name}.shape[{k}]")
        for sizes, t in self.shapes:
            for k, one in enumerate(t.ones):
                if not one:
                    contributors[rank - t.ndim + k].append(sizes[k])
        lines, sizes = [], []
        for d in range(rank):
            found = contributors[d]
            if not found:
                sizes.append("1")
                continue
            size = names.fresh("n")
            lines.append(f"{size} = {found[0]}")
            for other in found[1:]:
                lines.append(f"if {other} != {size}:")
                lines.append(_INDENT + f"raise {self.emitter.broadcast_error}"
                                       f"({self._mismatch()!r})")
            sizes.append(size)
        texts = {marker: (name, t) for name, (t, marker) in self.leaves.items()}
        return lines, sizes, texts

    def _mismatch(self):
        shapes = " and ".join(f"{t}" for t, _ in self.leaves.values())
        text = f"{self.where}: operands of shapes {shapes} differ in size"
        if self.emitter.broadcast_error == "_BroadcastDonated":
            text += (" (if one has size 1, NumPy would broadcast it, but a donated argument "
                     "was already overwritten: call without donate_argnums)")
        return text

    def indices(self):
        return [self.emitter.names.fresh("i") for _ in range(self.rank)]

    def substitute(self, expr, texts, idx):
        for marker, (array, t) in texts.items():
            sub = ", ".join("0" if one else idx[self.rank - t.ndim + k]
                            for k, one in enumerate(t.ones))
            expr = expr.replace(marker, f"{array}[{sub}]")
        return expr

    def nest(self, sizes, idx, body):
        lines = []
        for d in range(self.rank):
            lines.append(_INDENT * d + f"for {idx[d]} in range({sizes[d]}):")
        return lines + [_INDENT * self.rank + line for line in body]

    def output(self, target, dtype, sizes):
        """Where this loop writes ``target``'s values: a new array, under another name while
        the loop still reads the old ``target``. Returns (name, allocation, rebinding)."""
        out = target if target not in self.leaves and target not in self.shape_only \
            else self.emitter.names.fresh(f"{target}_new")
        allocation = f"{out} = _rt.empty({tuple_source(sizes)}, np.{np.dtype(dtype).name})"
        return out, allocation, [f"{target} = {out}"] if out != target else []

    def elementwise(self, target, out_type, expr, donated=None):
        """``target = expr`` over the loop; into ``donated``'s buffer when that parameter
        is read here for the last time with the result's type (each element then reads
        only its own position before it is overwritten)."""
        if self.rank == 0:
            return [f"{target} = {expr}"]
        lines, sizes, texts = self.header()
        idx = self.indices()
        expr = self.substitute(expr, texts, idx)
        leaf = self.leaves.get(donated)
        if leaf is not None and leaf[0].dtype == out_type.dtype and leaf[0].ones == out_type.ones:
            lines.append(f"{target} = {donated}  # written in place: {donated} was donated")
            self.emitter.broadcast_error = "_BroadcastDonated"  # no python rerun from here
            return lines + loop_nest(self.emitter, sizes, idx,
                                     [f"{target}[{', '.join(idx)}] = {expr}"])
        out, allocation, rebinding = self.output(target, out_type.dtype, sizes)
        lines.append(allocation)
        lines += loop_nest(self.emitter, sizes, idx, [f"{out}[{', '.join(idx)}] = {expr}"])
        return lines + rebinding


_INDENT = "    "


def tuple_source(items):
    items = list(items)
    return f"({items[0]},)" if len(items) == 1 else f"({', '.join(items)})"


def _is_none(node):
    t = anno.get(node, "type")
    return isinstance(t, Static) and t.value is None


# --- reductions --------------------------------------------------------------------------------

def _identity(name, dtype):
    dtype = np.dtype(dtype)
    if name in ("sum", "mean"):
        return typed_literal(0, dtype)
    if name == "prod":
        return typed_literal(1, dtype)
    if name in ("any", "all"):
        return repr(name == "all")
    if dtype.kind == "b":
        return repr(name == "min")
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return typed_literal(info.min if name == "max" else info.max, dtype)
    return typed_literal(-np.inf if name == "max" else np.inf, dtype)


def _combine(name, acc, value, dtype):
    dtype = np.dtype(dtype)
    if name in ("sum", "mean"):
        text = f"{acc} + {value}"
    elif name == "prod":
        text = f"{acc} * {value}"
    elif name == "max":
        return f"_rt.maximum({acc}, {value})"
    elif name == "min":
        return f"_rt.minimum({acc}, {value})"
    elif name == "any":
        return f"{acc} or {value}"
    else:
        return f"{acc} and {value}"
    if dtype.kind in "iu" and dtype.itemsize < 8:
        return f"np.{dtype.name}({text})"
    return text


def reduction(emitter, target, node, out_type, where):
    from .emitter import Unsupported
    op = anno.get(node, "op")
    name = op.name
    for unsupported in ("where", "initial", "out"):
        if emitter.static_param(node, unsupported) is not None:
            raise Unsupported(f"{name}({unsupported}=...)")
    operand = anno.get(node, "operand_nodes")["a"]
    in_type = as_array_type(anno.get(operand, "type"))
    rank = in_type.ndim
    axis = emitter.static_param(node, "axis")
    keepdims = emitter.static_param(node, "keepdims", False)
    axes = tuple(range(rank)) if axis is None else tuple(
        a % rank for a in (axis if isinstance(axis, (tuple, list)) else (axis,)))
    out_dtype = np.dtype(out_type.dtype)
    acc_dtype = np.bool_ if name in ("any", "all") else out_dtype
    loop = Loop(emitter, rank, where)
    value = loop.operand(operand, acc_dtype)
    if rank == 0:
        return [f"{target} = {value}"]
    lines, sizes, texts = loop.header()
    idx = loop.indices()
    value = loop.substitute(value, texts, idx)
    kept = [d for d in range(rank) if d not in axes]
    count = " * ".join(sizes[d] for d in axes) or "1"
    if len(axes) > 1:
        count = f"({count})"
    if name in ("max", "min") and axes:
        lines.append(f"if {count} == 0:")
        lines.append(_INDENT + f"_rt.empty_reduction({where + ': ' + name + ' of an empty array'!r})")
    if not kept:  # a scalar accumulator
        acc = emitter.names.fresh("acc")
        lines.append(f"{acc} = {_identity(name, acc_dtype)}")
        if name in ("sum", "mean") and np.dtype(acc_dtype).kind == "f" and len(value) < 160:
            lines += _lane_sum(emitter, loop, sizes, idx, value, acc, acc_dtype)
        else:
            lines += loop.nest(sizes, idx, [f"{acc} = {_combine(name, acc, value, acc_dtype)}"])
        result = acc
        if name == "mean":
            result = f"np.{out_dtype.name}({acc} / {count})"
        if keepdims:
            lines.append(f"{target} = _rt.full({tuple_source(['1'] * rank)}, {result})")
        else:
            lines.append(f"{target} = {result}")
        return lines
    out_shape = [("1" if d in axes else sizes[d]) for d in range(rank)] if keepdims \
        else [sizes[d] for d in kept]
    out = target if target not in loop.leaves else emitter.names.fresh(f"{target}_new")
    lines.append(f"{out} = _rt.full({tuple_source(out_shape)}, {_identity(name, acc_dtype)})")
    at = ", ".join(("0" if d in axes else idx[d]) for d in range(rank)) if keepdims \
        else ", ".join(idx[d] for d in kept)
    lines += loop.nest(sizes, idx, [f"{out}[{at}] = {_combine(name, f'{out}[{at}]', value, acc_dtype)}"])
    if name == "mean":
        flat, k = emitter.names.fresh("flat"), emitter.names.fresh("k")
        lines.append(f"{flat} = {out}.reshape(-1)  # a view: dividing it divides {out}")
        lines.append(f"for {k} in range({flat}.size):")
        lines.append(_INDENT + f"{flat}[{k}] = np.{out_dtype.name}({flat}[{k}] / {count})")
    if out != target:
        lines.append(f"{target} = {out}")
    return lines


_LANES = 8


def _lane_sum(emitter, loop, sizes, idx, value, acc, dtype):
    """A float sum with eight partial sums over the innermost dim: one running sum is a
    chain of dependent adds LLVM may not reorder (no fastmath), eight are independent and
    vectorize; partial sums are also more accurate. Adds into ``acc``."""
    inner = idx[-1]
    lanes = [emitter.names.fresh("lane") for _ in range(_LANES)]
    base, end = emitter.names.fresh("j"), emitter.names.fresh("nb")
    zero = _identity("sum", dtype)
    body = [f"{lane} = {zero}" for lane in lanes]
    body.append(f"{end} = {sizes[-1]} - {sizes[-1]} % {_LANES}")
    body.append(f"for {base} in range(0, {end}, {_LANES}):")
    for k, lane in enumerate(lanes):
        at = _index_shift(value, inner, f"{base} + {k}" if k else base)
        body.append(_INDENT + f"{lane} = {lane} + {at}")
    body.append(f"for {inner} in range({end}, {sizes[-1]}):")
    body.append(_INDENT + f"{lanes[0]} = {lanes[0]} + {value}")
    pairs = lanes
    while len(pairs) > 1:
        pairs = [f"({a} + {b})" for a, b in zip(pairs[::2], pairs[1::2])]
    body.append(f"{acc} = {acc} + {pairs[0]}")
    outer = Loop(emitter, len(sizes) - 1, loop.where)
    return outer.nest(sizes[:-1], idx[:-1], body) if len(sizes) > 1 else body


def _index_shift(value, index, replacement):
    """``value`` with the loop index ``index`` read as ``replacement``."""
    import re
    return re.sub(rf"\b{re.escape(index)}\b", f"({replacement})", value)
