"""``fori_loop``, ``while_loop``, ``cond``, ``switch`` and ``scan``.

Eagerly they are Python loops and branches on concrete values, checked as JAX checks
them. In compiled code each becomes a short generated function (see ``_lower_*``): a
``for``/``while`` loop or an ``if`` that calls the user's functions, so the generated
source keeps the loop and reverse mode differentiates it with its usual tapes. Before
writing it, the user's functions are typed at the call's argument types: the carry's
type must not change (weak-typed components are promoted, as in JAX), branches must
agree, and the errors name the user's line.
"""
import numpy as np

from .. import dtypes
from ..ir.trees import namespace_ref
from ..ir.types import UNKNOWN, ArrayType, SequenceType, Static, TreeType
from ..runtime.array import Array
from .common import (as_arrays, as_sequence, call_type, carry_fixed_point, check_callable,
                     check_same_types, convert, dynamic, eager_carry_check,
                     is_number, lax_function, leaves, path_str, rebuild, synthesize, type_error,
                     value_error, value_type)


def _loop_index_type():
    return ArrayType(dtypes.default_int(), (), True)  # what `for i in range(...)` gives


def _loop_index(i):
    return Array(np.asarray(i, dtypes.default_int()), True)


def _scalar(value):
    return value if isinstance(value, (Array, np.ndarray, np.generic)) else np.asarray(value)


# --- fori_loop --------------------------------------------------------------------------------

def _int_bound_type(name, t):
    a = dynamic(t)
    if not (isinstance(a, ArrayType) and a.ndim == 0 and a.dtype.kind in "iu") or \
            isinstance(t, Static) and isinstance(t.value, bool):
        raise type_error(f"fori_loop: {name} must be an integer scalar, got {t}")


def _lower_fori_loop(lower, upper, body_fun, init_val, unroll=None):
    _int_bound_type("lower", lower)
    _int_bound_type("upper", upper)
    i = _loop_index_type()
    carry = carry_fixed_point("fori_loop body", "init_val", init_val,
                              lambda c: call_type(body_fun, (i, c), "fori_loop body_fun"))
    init = convert("init_val", init_val, carry) or "init_val"
    return synthesize("fori_loop", f"""
def fori_loop(lower, upper, body_fun, init_val, unroll):
    val = {init}
    for i in range(lower, upper):
        val = body_fun(i, val)
    return val
""", fori_loop.eager)


@lax_function(_lower_fori_loop)
def fori_loop(lower, upper, body_fun, init_val, *, unroll=None):
    """``val = body_fun(i, val)`` for ``i`` in ``range(lower, upper)``; returns ``val``.

    The carry keeps its types (a weak-typed Python number is promoted to the body's dtype).
    In compiled code this is a ``for`` loop, differentiable in reverse mode even when the
    bounds are only known at run time."""
    check_callable("fori_loop body_fun", body_fun)
    bounds = []
    for name, b in (("lower", lower), ("upper", upper)):
        v = np.asarray(b)
        if v.ndim != 0 or v.dtype.kind not in "iu" or isinstance(b, bool):
            raise type_error(f"fori_loop: {name} must be an integer scalar, got {b!r}")
        bounds.append(int(v))
    val = as_arrays(init_val)
    for i in range(*bounds):
        new = body_fun(_loop_index(i), val)
        eager_carry_check("fori_loop body", "init_val", val, new)
        val = new
    return as_arrays(val)


# --- while_loop -------------------------------------------------------------------------------

def _cond_fun_error(t):
    return type_error(f"cond_fun must return a boolean scalar, but got output type(s) [{t}].")


def _lower_while_loop(cond_fun, body_fun, init_val):
    carry = carry_fixed_point("while_loop body", "init_val", init_val,
                              lambda c: call_type(body_fun, (c,), "while_loop body_fun"))
    test = call_type(cond_fun, (carry,), "while_loop cond_fun")
    t = dynamic(test)
    if test is not UNKNOWN and not (isinstance(t, ArrayType) and t.ndim == 0 and
                                    t.dtype == np.bool_):
        raise _cond_fun_error(test)
    init = convert("init_val", init_val, carry) or "init_val"
    return synthesize("while_loop", f"""
def while_loop(cond_fun, body_fun, init_val):
    val = {init}
    while cond_fun(val):
        val = body_fun(val)
    return val
""", while_loop.eager)


@lax_function(_lower_while_loop)
def while_loop(cond_fun, body_fun, init_val):
    """``while cond_fun(val): val = body_fun(val)``; returns ``val``.

    Unlike JAX, reverse mode differentiates it (astjax records the trip count)."""
    check_callable("while_loop cond_fun", cond_fun)
    check_callable("while_loop body_fun", body_fun)
    val = as_arrays(init_val)
    while True:
        test = cond_fun(val)
        t = np.asarray(test)
        if t.ndim != 0 or t.dtype != np.bool_:
            raise _cond_fun_error(value_type(test) or type(test).__name__)
        if not t:
            return as_arrays(val)
        new = body_fun(val)
        eager_carry_check("while_loop body", "init_val", val, new)
        val = new


# --- cond and switch --------------------------------------------------------------------------

def _operand_names(n):
    return [f"operand{k}" for k in range(n)]


def _pred_kind(pred):
    """'bool' or 'int' (tested as ``pred != 0``), with JAX's errors for anything else."""
    t = dynamic(pred)
    if isinstance(pred, Static) and pred.value is None:
        raise type_error("cond predicate is None")
    if not isinstance(t, ArrayType):
        raise type_error(f"Pred must be a scalar, got {pred}")
    if t.ndim != 0:
        raise type_error(f"Pred must be a scalar, got {pred} of rank {t.ndim}.")
    if t.dtype.kind == "b":
        return "bool"
    if t.dtype.kind in "iu":
        return "int"
    raise type_error(f"Pred type must be either boolean or number, got {t.dtype}.")


def _lower_cond(pred, true_fun, false_fun, *operands):
    kind = _pred_kind(pred)
    out_true = call_type(true_fun, operands, "cond true_fun")
    out_false = call_type(false_fun, operands, "cond false_fun")
    if UNKNOWN not in (out_true, out_false):
        check_same_types("true_fun output", out_true, "false_fun output", out_false)
    ops = _operand_names(len(operands))
    params = ", ".join(["pred", "true_fun", "false_fun"] + ops)
    args = ", ".join(ops)
    test = "pred" if kind == "bool" else "pred != 0"
    return synthesize("cond", f"def cond({params}):\n    if {test}:\n"
                              f"{_branch('true_fun', args, out_true)}    else:\n"
                              f"{_branch('false_fun', args, out_false)}    return out\n",
                      cond.eager)


def _branch(fn, args, out_type, indent="        "):
    """The lines calling one branch; constants in its output become arrays, so that the
    branches' outputs can meet (``cond(p, lambda: 0.0, lambda: x)``)."""
    text = f"{indent}out = {fn}({args})\n"
    conversion = None if out_type is UNKNOWN else convert("out", out_type, dynamic(out_type))
    if conversion:
        text += f"{indent}out = {conversion}\n"
    return text


@lax_function(_lower_cond)
def cond(pred, true_fun, false_fun, *operands):
    """``true_fun(*operands)`` if ``pred`` else ``false_fun(*operands)``.

    In compiled code both branches are typed and must return the same structure and
    types; eagerly only the branch taken runs."""
    if pred is None:
        raise type_error("cond predicate is None")
    check_callable("cond true_fun", true_fun)
    check_callable("cond false_fun", false_fun)
    p = np.asarray(pred)
    if isinstance(pred, (tuple, list)) or p.ndim != 0:
        raise type_error(f"Pred must be a scalar, got {pred!r} of shape {np.shape(pred)}.")
    if p.dtype.kind not in "biu":
        raise type_error(f"Pred type must be either boolean or number, got {p.dtype}.")
    operands = as_arrays(operands)
    return as_arrays(true_fun(*operands) if bool(p) else false_fun(*operands))


def _branch_types(branches):
    seq = as_sequence(branches)
    if not isinstance(seq, SequenceType):
        raise type_error(f"switch: branches must be a sequence of functions, got {branches}")
    if not seq.elts:
        raise value_error("Empty branch sequence")
    return seq.elts


def _index_type(index):
    t = dynamic(index)
    if not isinstance(t, ArrayType) or t.ndim != 0:
        raise type_error(f"Branch index must be scalar, got {index}.")
    if t.dtype.kind not in "iu":
        raise type_error(f"Index type must be an integer, got {index}.")


def _lower_switch(index, branches, *operands):
    _index_type(index)
    fns = _branch_types(branches)
    outs = [call_type(f, operands, f"switch branch {k}") for k, f in enumerate(fns)]
    for k, out in enumerate(outs[1:], 1):
        if UNKNOWN not in (outs[0], out):
            check_same_types("branch 0 output", outs[0], f"branch {k} output", out)
    ops = _operand_names(len(operands))
    params = ", ".join(["index", "branches"] + ops)
    args = ", ".join(ops)
    n = len(fns)
    if isinstance(index, Static) or n == 1:
        k = 0 if n == 1 else min(max(int(index.value), 0), n - 1)
        body = _branch(f"branches[{k}]", args, outs[k], "    ")
    else:
        body = f"    i = _jnp.clip(index, 0, {n - 1})\n"
        for k in range(n):
            head = "if" if k == 0 else "elif"
            body += (f"    {head} i == {k}:\n" if k < n - 1 else "    else:\n")
            body += _branch(f"branches[{k}]", args, outs[k])
    return synthesize("switch", f"def switch({params}):\n{body}    return out\n", switch.eager)


@lax_function(_lower_switch)
def switch(index, branches, *operands):
    """``branches[index](*operands)``, with ``index`` clamped to ``[0, len(branches) - 1]``."""
    i = np.asarray(index)
    if i.ndim != 0:
        raise type_error(f"Branch index must be scalar, got {index!r} of shape {i.shape}.")
    if i.dtype.kind not in "iu":
        raise type_error(f"Index type must be an integer, got {index!r} as {i.dtype}")
    branches = tuple(branches)
    if not branches:
        raise value_error("Empty branch sequence")
    for k, b in enumerate(branches):
        check_callable(f"switch branch {k}", b)
    return as_arrays(branches[min(max(int(i), 0), len(branches) - 1)](*as_arrays(operands)))


# --- scan -------------------------------------------------------------------------------------

def _xs_leaves(xs):
    """(path, type) of the arrays scanned over, with JAX's error for a leaf without axis 0."""
    out = []
    for path, t in leaves(xs):
        if isinstance(t, Static) and t.value is None:
            continue
        a = dynamic(t)
        if not isinstance(a, ArrayType) or a.ndim == 0:
            raise value_error(f"scan got value with no leading axis to scan over: {t}.")
        out.append((path, a))
    return out


def _slice_type(xs):
    def drop(t):
        if isinstance(t, SequenceType):
            return SequenceType(tuple(drop(e) for e in t.elts), t.kind)
        if isinstance(t, TreeType):
            return TreeType(t.node_type, t.aux, t.keys, tuple(drop(c) for c in t.children))
        a = dynamic(t)
        if isinstance(a, ArrayType) and a.ndim:
            return ArrayType(a.dtype, a.ones[1:], a.weak)
        return t
    return drop(xs)


def _lower_scan(f, init, xs=Static(None), length=Static(None), reverse=Static(False),
                unroll=Static(1), _split_transpose=Static(False)):
    xs = as_sequence(xs)
    arrays = _xs_leaves(xs)
    if not isinstance(reverse, Static):
        raise type_error("scan: reverse must be a Python bool known when the code is "
                         "generated")
    if arrays:
        n_expr = path_str("xs", arrays[0][0]) + ".shape[0]"
    elif isinstance(length, Static) and length.value is None:
        raise value_error("scan got no values to scan over and `length` not provided.")
    else:
        t = dynamic(length)
        if not (isinstance(t, ArrayType) and t.ndim == 0 and t.dtype.kind in "iu"):
            raise type_error(f"scan: length must be an integer, got {length}")
        n_expr = "length"
    x_type = _slice_type(xs)
    outs = {}

    def step(c):
        out = call_type(f, (c, x_type), "scan f")
        if out is UNKNOWN:
            return UNKNOWN
        pair = as_sequence(out)
        if not (isinstance(pair, SequenceType) and len(pair.elts) == 2):
            raise type_error(f"scan body output must be a pair, got {out}.")
        outs["y"] = pair.elts[1]
        return pair.elts[0]

    carry = carry_fixed_point("scan body", "init", init, step)
    y_type = outs.get("y", UNKNOWN)
    y_leaves = []
    for path, t in leaves(y_type):
        if isinstance(t, Static) and t.value is None:
            continue
        if not isinstance(dynamic(t), ArrayType):
            raise type_error(f"scan: f's output y must be a pytree of arrays, got {t} at "
                             f"{path_str('y', path)}")
        y_leaves.append((path, t))
    names = {path: f"ys{k}" for k, (path, _) in enumerate(y_leaves)}

    def x_leaf(index):
        def leaf(path, t):
            if isinstance(t, Static):
                return repr(t.value)
            return f"{path_str('xs', path)}[{index}]"
        return leaf

    def zero_x(path, t):
        if isinstance(t, Static):
            return repr(t.value)
        return f"_jnp.zeros({path_str('xs', path)}.shape[1:], {t.dtype.name!r})"

    init_expr = convert("init", init, carry) or "init"
    namespace = {}  # what builds the namedtuples and registered classes of xs and ys
    ref = namespace_ref(namespace)
    lines = [f"    carry = {init_expr}", f"    n = {n_expr}"]
    if arrays and not (isinstance(length, Static) and length.value is None):
        lines += ["    if n != length:",
                  "        raise ValueError('scan got a `length` argument which disagrees with "
                  "the leading axis size of xs')"]
    for path, _ in arrays[1:]:
        lines += [f"    if {path_str('xs', path)}.shape[0] != n:",
                  "        raise ValueError('scan got values with different leading axis "
                  "sizes')"]
    y_value = {}  # path -> expression of the leaf as an array
    for path, t in y_leaves:
        e = path_str("y", path)
        y_value[path] = (f"_jnp.astype({e}, {dynamic(t).dtype.name!r})"
                         if is_number(t) else e)
    if y_leaves:  # a scan of length 0: the output shapes come from one call of f
        lines.append("    if n == 0:")
        lines.append(f"        y = f(carry, {rebuild(x_type, zero_x, ref)})[1]")
        for path, t in y_leaves:
            lines.append(f"        {names[path]} = _jnp.zeros((0,) + ({y_value[path]}).shape, "
                         f"{dynamic(t).dtype.name!r})")
    lines.append("    for k in range(n):")
    index = "k"
    if reverse.value:
        lines.append("        i = n - 1 - k")
        index = "i"
    lines.append(f"        out = f(carry, {rebuild(x_type, x_leaf(index), ref)})")
    lines.append("        carry = out[0]")
    if y_leaves:
        lines.append("        y = out[1]")
        for path, t in y_leaves:
            name = names[path]
            lines.append(f"        {name}_k = {y_value[path]}")
            lines.append("        if k == 0:")
            lines.append(f"            {name} = _jnp.zeros((n,) + {name}_k.shape, "
                         f"{dynamic(t).dtype.name!r})")
            lines.append(f"        {name} = {name}.at[{index}].set({name}_k)")
    ys = "None" if y_type is UNKNOWN else rebuild(
        y_type, lambda path, t: names.get(path, repr(getattr(t, "value", None))), ref)
    lines.append(f"    return carry, {ys}")
    params = "f, init, xs, length, reverse, unroll, _split_transpose"
    return synthesize("scan", f"def scan({params}):\n" + "\n".join(lines) + "\n", scan.eager,
                      namespace)


@lax_function(_lower_scan)
def scan(f, init, xs=None, length=None, reverse=False, unroll=1, _split_transpose=False):
    """``carry, y = f(carry, x)`` over the leading axis of ``xs`` (a pytree of arrays);
    returns the final carry and the ``y``s stacked (a pytree like ``y``).

    ``xs=None`` with ``length`` scans ``length`` times with ``x = None``; ``reverse`` runs
    from the end (``ys[i]`` still belongs to ``xs[i]``). In compiled code this is a
    ``for`` loop writing each ``y`` into preallocated arrays."""
    from ..tree_util import tree_flatten, tree_unflatten
    import astjax.numpy as jnp
    check_callable("scan f", f)
    x_leaves, x_def = tree_flatten(xs)
    sizes = []
    for leaf in x_leaves:
        if np.ndim(leaf) == 0:
            raise value_error(f"scan got value with no leading axis to scan over: {leaf!r}.")
        sizes.append(np.shape(leaf)[0])
    if length is not None:
        n = int(length)
        if any(s != n for s in sizes):
            raise value_error(f"scan got `length` argument of {n} which disagrees with "
                              f"leading axis sizes {sizes}.")
    elif sizes:
        n = sizes[0]
        if any(s != n for s in sizes):
            raise value_error(f"scan got values with different leading axis sizes: "
                              f"{', '.join(map(str, sizes))}.")
    else:
        raise value_error("scan got no values to scan over and `length` not provided.")

    def call(carry, k):
        x = tree_unflatten(x_def, [leaf[k] for leaf in x_leaves])
        out = f(carry, x)
        if not (isinstance(out, (tuple, list)) and len(out) == 2):
            raise type_error(f"scan body output must be a pair, got {value_type(out)}.")
        eager_carry_check("scan body", "init", carry, out[0])
        return out

    init = as_arrays(init)
    carry, ys = init, []
    order = range(n - 1, -1, -1) if reverse else range(n)
    for k in order:
        carry, y = call(carry, k)
        ys.append(y)
    if reverse:
        ys.reverse()
    if n == 0:  # the output's structure and shapes come from one call on zeros
        zeros = tree_unflatten(x_def, [jnp.zeros(np.shape(leaf)[1:], np.asarray(leaf).dtype)
                                       for leaf in x_leaves])
        _, y = f(init, zeros)
        y_leaves, y_def = tree_flatten(y)
        stacked = [jnp.zeros((0,) + np.shape(leaf), np.asarray(leaf).dtype)
                   for leaf in y_leaves]
        return as_arrays(carry), tree_unflatten(y_def, stacked)
    y_def = tree_flatten(ys[0])[1]
    columns = list(zip(*[tree_flatten(y)[0] for y in ys])) if y_def.num_leaves else []
    stacked = [jnp.stack([jnp.asarray(v) for v in col]) for col in columns]
    return as_arrays(carry), tree_unflatten(y_def, stacked)
