"""Pytrees of arrays read from outside a function (``params`` a global dict, ``cfg.layers``,
a registered dataclass ``model``) become local values built from captured arrays.

JAX closes over such a value: its arrays are constants of the traced function. Here a
global array is captured one at a time (``Program.capture``), and a container of them
would otherwise be a static Python object whose arrays compiled code cannot use. So, per
specialization, each such read is replaced by a local variable set at the top of the
function from the tree's leaves::

    params = {'b': params_b, 'w': params_w}   # params_b, params_w: captured arrays

and from then on it is an ordinary local pytree (indexing, attributes, methods, passing it
to helpers, differentiating and batching around it). Leaves that are not arrays (a string,
a Python number, a function) stay constants, as in JAX's closure.
"""
import gast

from .. import tree_util
from ..errors import UserCodeError
from ..frontend.naming import Names, assign, const, copy_loc, load
from . import anno, trees
from .infer import is_array_value


def hoist_captured_trees(anf, parsed, program):
    """``anf`` with each pytree of arrays it reads from outside set at its top (a copy),
    or ``anf`` itself when it reads none."""
    stores, reads = set(), []
    _scan(anf, stores, reads)  # (one walk: this runs for every generated function too)
    local = stores | {a.id for a in anf.args.args + anf.args.kwonlyargs}
    chains = {_chain(n) for _, _, _, n in reads if _root(n).id not in local}
    if not any(_is_tree_of_arrays(_resolve(program, parsed, _load_chain(c), record=False))
               for c in chains):
        return anf
    anf = anno.copy_tree(anf)  # (to_anf's is shared)
    names = Names(anf)
    names.used |= set(parsed.freevars) | set(parsed.fn.__globals__)
    by_value, preamble = {}, []

    reads = []
    _scan(anf, set(), reads)  # the copy's nodes
    for parent, field, k, node in reads:
        if _root(node).id in local:
            continue
        value = _resolve(program, parsed, node)
        if not _is_tree_of_arrays(value):
            continue
        name = by_value.get(id(value))
        if name is None:
            name = node.id if isinstance(node, gast.Name) else _fresh(names, "_".join(
                _chain(node)))
            by_value[id(value)] = name
            statements = []
            _build(name, value, program, names, statements)
            preamble.extend(copy_loc(s, node) for s in statements)
        new = copy_loc(load(name), node)
        if k is None:
            setattr(parent, field, new)
        else:
            getattr(parent, field)[k] = new
    anf.body[:0] = preamble
    return anf


def _scan(node, stores, reads):
    """Names ``node`` stores, and its reads of names or whole attribute chains, each as
    ``(parent, field, index in the field's list or None, node)``."""
    for field in node._fields:
        child = getattr(node, field, None)
        for k, c in (enumerate(child) if isinstance(child, list) else ((None, child),)):
            if not isinstance(c, gast.AST):
                continue
            if isinstance(c, gast.Name):
                if isinstance(c.ctx, gast.Load):
                    reads.append((node, field, k, c))
                else:
                    stores.add(c.id)
            elif isinstance(c, gast.Attribute) and isinstance(c.ctx, gast.Load) and \
                    isinstance(_root(c), gast.Name):
                reads.append((node, field, k, c))
            else:
                _scan(c, stores, reads)


def _root(node):
    while isinstance(node, gast.Attribute):
        node = node.value
    return node


def _chain(node):
    attrs = []
    while isinstance(node, gast.Attribute):
        attrs.append(node.attr)
        node = node.value
    return (node.id,) + tuple(reversed(attrs))


def _load_chain(chain):
    node = load(chain[0])
    for attr in chain[1:]:
        node = gast.Attribute(value=node, attr=attr, ctx=gast.Load())
    return node


def _resolve(program, parsed, node, record=True):
    try:
        return program.resolve(parsed, node, record)
    except UserCodeError:  # not defined: the typer says so where it reads it
        return None


def _is_tree_of_arrays(value):
    """A pytree container (not a leaf) with an array among its leaves."""
    if is_array_value(value) or isinstance(value, type):
        return False
    node = tree_util.flatten_one_level(value)
    if node is None or type(value) is dict and not all(
            type(k) in (str, int) for k in value):  # keys a display can write
        return False
    return any(is_array_value(c) or _is_tree_of_arrays(c) for c in node[0])


def _build(name, value, program, names, statements):
    """Append statements setting ``name`` to ``value``: containers as displays or
    builder calls, arrays and other leaves as names resolving to them (``program.hoisted``)."""
    children, keys, aux = tree_util.flatten_one_level(value)
    parts = []
    for child, key in zip(children, keys):
        hint = f"{name}_{key}"
        part = _fresh(names, hint if hint.isidentifier() else f"{name}_")
        if _is_tree_of_arrays(child):
            _build(part, child, program, names, statements)
        else:
            program.hoisted[part] = child
        parts.append(load(part))
    node_type = type(value)
    if node_type is list:
        display = gast.List(elts=parts, ctx=gast.Load())
    elif node_type is tuple:
        display = gast.Tuple(elts=parts, ctx=gast.Load())
    elif node_type is dict:
        display = gast.Dict(keys=[const(k) for k in keys], values=parts)
    else:  # a namedtuple class, or a builder of a registered class (OrderedDict, ...)
        if trees.is_namedtuple_class(node_type) and aux is node_type:
            make, hint = node_type, node_type.__name__
        else:
            make, hint = trees.TreeBuilder(node_type, aux), f"make_{node_type.__name__}"
        ref = _fresh(names, hint)
        program.hoisted[ref] = make
        display = gast.Call(func=load(ref), args=parts, keywords=[])
    statements.append(assign(name, display))


def _fresh(names, hint):
    if hint not in names.used:
        names.used.add(hint)
        return hint
    return names.fresh(hint)
