"""Which statements may write their result into a donated buffer (``donate_argnums``).

A donor is a donated array parameter, or a leaf ``t = p[k]`` of a donated pytree
parameter (pytrees are tuples in generated code). An elementwise statement may
write into a donor's buffer when it is the donor's last reader (counting where
inlined producers really run) and nothing else can see the buffer afterwards:
every reader makes a fresh array (never a view), and every other array the
statement reads is a parameter, a parameter's leaf, or fresh.
``Loop.elementwise`` then checks that the types match.

Once a buffer is written, a ``_Broadcast`` raised later could not rerun the call
on the python backend (its input is gone): the emitter raises
``_BroadcastDonated`` there instead, an error the user sees.
"""
import gast

from ...ir import anno
from . import fusion

_SHAPE_ATTRIBUTES = {"shape", "ndim", "size", "dtype"}
_FRESH_OPS = fusion.FUSABLE | fusion.REDUCTIONS | {"dot", "matmul"}


def reusable(fdef, donated, plan):
    """Top-level statement id -> the donor whose buffer it writes its result into."""
    if not donated:
        return {}
    stores = {}
    for n in gast.walk(fdef):
        if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store):
            stores[n.id] = stores.get(n.id, 0) + 1
    params = [a.id for a in fdef.args.args if a.id not in stores]
    leaves = _leaves(fdef, params, stores)
    donors = {p for p in donated if p in params}
    donated_leaves = _leaves(fdef, donors, stores)
    if _read_otherwise(fdef, set(donated_leaves.values())):
        donated_leaves = {}  # a container passed on or iterated may hand its leaves on
    donors |= set(donated_leaves)
    runs_at = _runs_at(fdef, plan)
    safe = set(params) | set(leaves) | _fresh_names(fdef)
    inlined = {s.targets[0].id for s in plan.inlined}
    out = {}
    for d in donors:
        readers = [i for i, s in enumerate(fdef.body) if _reads_buffer(s, d)]
        if not readers or not all(_fresh_statement(fdef.body[i]) for i in readers):
            continue
        last = max(runs_at[i] for i in readers)
        stmt = fdef.body[last]
        if getattr(anno.get(stmt.value, "op"), "name", None) not in fusion.FUSABLE \
                or _calls_after(fdef, last):
            continue
        reads = {n.id for k, s in enumerate(fdef.body) if runs_at[k] == last
                 for n in gast.walk(s.value) if isinstance(n, gast.Name)}
        if reads - inlined <= safe:
            out[id(stmt)] = d
    return out


def _calls_after(fdef, last):
    """Whether a user function is called after statement ``last``: its own size checks
    would raise ``_Broadcast``, which may not rerun once a buffer is written."""
    return any(isinstance(n, gast.Call) and anno.get(n, "callee") is not None
               for s in fdef.body[last + 1:] for n in gast.walk(s))


def _assigns(s):
    return isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name)


def _leaf_of(s):
    """``p`` for ``t = p[k]`` with a constant k, else None."""
    if _assigns(s) and isinstance(s.value, gast.Subscript) \
            and isinstance(s.value.value, gast.Name) and isinstance(s.value.slice, gast.Constant):
        return s.value.value.id
    return None


def _leaves(fdef, containers, stores):
    """leaf -> container for ``t = p[k]`` of the given containers, nested ones included."""
    leaves = {}
    for s in fdef.body:
        p = _leaf_of(s)
        if p is not None and (p in containers or p in leaves) \
                and stores.get(s.targets[0].id) == 1:
            leaves[s.targets[0].id] = p
    return leaves


def _read_otherwise(fdef, containers):
    """Whether a container is read other than by ``t = p[k]``."""
    loads = sum(1 for n in gast.walk(fdef) if isinstance(n, gast.Name) and n.id in containers
                and isinstance(n.ctx, gast.Load))
    subscripts = sum(1 for s in gast.walk(fdef) if _leaf_of(s) in containers)
    return loads != subscripts


def _runs_at(fdef, plan):
    """Index of the top-level statement whose code computes each one: an inlined producer
    runs inside its consumer's loop, further down."""
    body = fdef.body
    at = list(range(len(body)))
    for i in reversed(range(len(body))):
        if body[i] in plan.inlined:
            name = body[i].targets[0].id
            consumer = next(j for j in range(i + 1, len(body)) if any(
                isinstance(n, gast.Name) and n.id == name for n in gast.walk(body[j])))
            at[i] = at[consumer]
    return at


def _reads_buffer(s, d):
    """Whether statement ``s`` reads ``d``'s elements (not just its shape or dtype)."""
    shape_reads = {id(n.value) for n in gast.walk(s) if isinstance(n, gast.Attribute)
                   and n.attr in _SHAPE_ATTRIBUTES}
    return any(isinstance(n, gast.Name) and n.id == d and isinstance(n.ctx, gast.Load)
               and id(n) not in shape_reads for n in gast.walk(s))


def _fresh_statement(s):
    """An op call whose result is a new array: never a view, nor its operand itself."""
    if not _assigns(s):
        return False
    op = anno.get(s.value, "op")
    if op is None or op.name not in _FRESH_OPS:
        return False
    return fusion.trivial(s.value, anno.get(s.targets[0], "type")) is None


def _fresh_names(fdef):
    """Variables only ever assigned fresh arrays."""
    kinds = {}
    for s in gast.walk(fdef):
        if _assigns(s):
            kinds.setdefault(s.targets[0].id, []).append(_fresh_statement(s))
    return {name for name, fresh in kinds.items() if all(fresh)}
