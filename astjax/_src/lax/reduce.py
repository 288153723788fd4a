"""``lax.reduce`` for the monoids astjax can name: ``computation`` must be add, mul, max,
min, a bitwise and/or/xor or a logical and/or (lax's, jnp's, NumPy's or ``operator``'s), or
a lambda or def whose body applies one of them to its two arguments (per element of a
tuple, for several operands). Recognizing it happens while the code is generated; the
reduction is then jnp's (sum, prod, max, min, all, any, or bit by bit for integers), so
jit, grad and vmap need no new rules. Any other computation is a NotImplementedError.
"""
import operator

import gast
import numpy as np

import astjax.numpy as jnp

from ..frontend.synthetic import SyntheticFunction
from ..random.checks import static_helper  # evaluated while generating code
from . import elementwise as _ew
from .bits import bit_reduce
from .trees import tree_leaves

_KNOWN = (
    ("add", (_ew.add, jnp.add, np.add, operator.add)),
    ("mul", (_ew.mul, jnp.multiply, np.multiply, operator.mul)),
    ("max", (_ew.max, jnp.maximum, np.maximum)),
    ("min", (_ew.min, jnp.minimum, np.minimum)),
    ("and", (_ew.bitwise_and, jnp.bitwise_and, np.bitwise_and, operator.and_)),
    ("or", (_ew.bitwise_or, jnp.bitwise_or, np.bitwise_or, operator.or_)),
    ("xor", (_ew.bitwise_xor, jnp.bitwise_xor, np.bitwise_xor, operator.xor)),
    ("logical_and", (jnp.logical_and, np.logical_and)),
    ("logical_or", (jnp.logical_or, np.logical_or)),
)
_BINOPS = {gast.Add: "add", gast.Mult: "mul", gast.BitAnd: "and", gast.BitOr: "or",
           gast.BitXor: "xor"}


def _known(fn):
    for kind, fns in _KNOWN:
        if any(fn is f for f in fns):
            return kind
    return None


def _definition(fn):
    """(gast FunctionDef, namespace) of a lambda or def, or None."""
    if isinstance(fn, SyntheticFunction):  # a lambda or def inside compiled code
        return getattr(fn, "fdef", None), dict(fn.__globals__)
    code = getattr(fn, "__code__", None)
    if code is None:
        return None
    from ..frontend.parse import parse_function
    try:
        node = parse_function(fn).node
    except Exception:  # no source: not recognized
        return None
    namespace = dict(fn.__globals__)
    for name, cell in zip(code.co_freevars, fn.__closure__ or ()):
        try:
            namespace[name] = cell.cell_contents
        except ValueError:
            pass
    return node, namespace


def _resolve(node, namespace):
    if isinstance(node, gast.Name):
        return namespace.get(node.id, getattr(__builtins__, node.id, None)
                             if not isinstance(__builtins__, dict)
                             else __builtins__.get(node.id))
    if isinstance(node, gast.Attribute):
        base = _resolve(node.value, namespace)
        return None if base is None else getattr(base, node.attr, None)
    return None


def _is_operand(node, param, index):
    """``node`` is ``param`` (index None) or ``param[index]``."""
    if index is None:
        return isinstance(node, gast.Name) and node.id == param
    return (isinstance(node, gast.Subscript) and isinstance(node.value, gast.Name) and
            node.value.id == param and isinstance(node.slice, gast.Constant) and
            node.slice.value == index)


def _expr_kind(expr, params, index, namespace, depth):
    """The monoid ``expr`` applies to the two operands (all are commutative, so either
    order), or None."""
    if isinstance(expr, gast.BinOp):
        pair = (expr.left, expr.right)
        kind = _BINOPS.get(type(expr.op))
    elif isinstance(expr, gast.Call) and len(expr.args) == 2 and not expr.keywords:
        pair = tuple(expr.args)
        fn = _resolve(expr.func, namespace)
        kind = None if fn is None else _monoid(fn, depth + 1)
    else:
        return None
    a, b = params
    if kind is not None and ((_is_operand(pair[0], a, index) and _is_operand(pair[1], b, index))
                             or (_is_operand(pair[0], b, index) and
                                 _is_operand(pair[1], a, index))):
        return kind
    return None


def _returned(fn):
    """(params, returned expression, namespace) of a two-parameter function whose body is one
    return, or None."""
    found = _definition(fn)
    if found is None or found[0] is None:
        return None
    fdef, namespace = found
    args = fdef.args
    body = [s for s in fdef.body if not (isinstance(s, gast.Expr) and
                                          isinstance(s.value, gast.Constant))]  # docstring
    if len(args.args) != 2 or args.vararg or args.kwonlyargs or len(body) != 1 or \
            not isinstance(body[0], gast.Return) or body[0].value is None:
        return None
    return (args.args[0].id, args.args[1].id), body[0].value, namespace


def _monoid(fn, depth=0):
    """The kind of the monoid ``fn`` is, or None."""
    kind = _known(fn)
    if kind is not None or depth > 4:
        return kind
    found = _returned(fn)
    return None if found is None else _expr_kind(found[1], found[0], None, found[2], depth)


def _tuple_monoids(fn, n):
    """The kind per component of a computation on ``n``-tuples, returning a tuple display of
    one monoid per component, or None."""
    found = _returned(fn)
    if found is None:
        return None
    params, expr, namespace = found
    if not isinstance(expr, (gast.Tuple, gast.List)) or len(expr.elts) != n:
        return None
    kinds = tuple(_expr_kind(e, params, i, namespace, 0) for i, e in enumerate(expr.elts))
    return None if None in kinds else kinds


def _where(fn):
    code = getattr(fn, "__code__", None)
    if code is not None:
        return f" (defined at {code.co_filename}:{code.co_firstlineno})"
    origin = getattr(fn, "origin", None)
    if origin is not None and getattr(fn, "fdef", None) is not None:
        return f" (defined at {origin.filename}:{fn.fdef.lineno})"
    return ""


@static_helper
def _reduce_spec(computation, n_operands, n_inits, dtypes_, ndims, dimensions):
    if n_operands != n_inits:
        raise ValueError(f"reduce: {n_operands} operands but {n_inits} init_values")
    if n_operands == 0:
        raise ValueError("reduce: no operands")
    if n_operands == 1:
        kind = _monoid(computation)
        kinds = None if kind is None else (kind,)
    else:
        kinds = _tuple_monoids(computation, n_operands)
    name = getattr(computation, "__name__", repr(computation))
    if kinds is None:
        raise NotImplementedError(
            f"lax.reduce: astjax cannot reduce with {name}{_where(computation)}: the "
            f"computation must be add, mul, max, min, bitwise_and/or/xor or logical_and/or "
            f"(lax's, jnp's or NumPy's), or a lambda applying one of them to its two "
            f"arguments ({'per tuple element, ' if n_operands > 1 else ''}e.g. "
            f"lambda a, b: a + b)")
    dims = tuple(int(d) for d in dimensions)
    for kind, dtype, ndim in zip(kinds, dtypes_, ndims):
        dtype = np.dtype(dtype)
        if any(not 0 <= d < ndim for d in dims) or len(set(dims)) != len(dims):
            raise ValueError(f"reduction axes {dims} contains out-of-bounds indices for an "
                             f"operand of rank {ndim}.")
        if kind.startswith("logical") and dtype.kind != "b":
            raise TypeError(f"lax.reduce: {name} of {dtype.name} operands does not give "
                            f"{dtype.name} (it is boolean); use bitwise_{kind[8:]}")
        if kind in ("and", "or", "xor") and dtype.kind not in "biu":
            raise TypeError(f"lax.reduce: {name} needs boolean or integer operands, got "
                            f"{dtype.name}")
    return kinds, dims


def reduce_one(x, init, kind, dims):
    x = jnp.asarray(x)
    init = jnp.asarray(init).astype(x.dtype)
    if kind == "add":
        return jnp.sum(x, axis=dims, dtype=x.dtype) + init
    if kind == "mul":
        return jnp.prod(x, axis=dims, dtype=x.dtype) * init
    if kind == "max":
        return jnp.maximum(jnp.max(x, axis=dims), init)
    if kind == "min":
        return jnp.minimum(jnp.min(x, axis=dims), init)
    if kind in ("and", "logical_and"):
        return jnp.bitwise_and(bit_reduce(x, dims, "and"), init)
    if kind in ("or", "logical_or"):
        return jnp.bitwise_or(bit_reduce(x, dims, "or"), init)
    return jnp.bitwise_xor(bit_reduce(x, dims, "xor"), init)


def _reduce_each(xs, inits, kinds, dims, k):
    if k == len(xs):
        return ()
    return (reduce_one(xs[k], inits[k], kinds[k], dims),) + \
        _reduce_each(xs, inits, kinds, dims, k + 1)


# recursions rather than generators: compiled code builds tuples of known length this way
def _dtypes(xs, k):
    return () if k == len(xs) else (jnp.asarray(xs[k]).dtype,) + _dtypes(xs, k + 1)


def _ndims(xs, k):
    return () if k == len(xs) else (jnp.ndim(xs[k]),) + _ndims(xs, k + 1)


def reduce(operands, init_values, computation, dimensions, out_sharding=None):
    """``lax.reduce``: ``operands`` (an array, or a pytree of them) reduced along
    ``dimensions`` by the monoid ``computation``, each combined once with its init value.
    One operand gives an array; several (a tuple, with a ``computation`` on tuples such as
    ``lambda a, b: (a[0] + b[0], jnp.maximum(a[1], b[1]))``) a tuple."""
    xs = tree_leaves(operands, None)
    inits = tree_leaves(init_values, None)
    kinds, dims = _reduce_spec(computation, len(xs), len(inits), _dtypes(xs, 0),
                               _ndims(xs, 0), dimensions)
    if len(xs) == 1:
        return reduce_one(xs[0], inits[0], kinds[0], dims)
    return _reduce_each(xs, inits, kinds, dims, 0)
