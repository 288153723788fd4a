"""jacrev, jacfwd and hessian: Jacobians as generated source, laid out as in JAX.

The generated ``f_jacrev``/``f_jacfwd`` lays the output leaves (and the differentiated
input leaves) out one after another in a flat vector, runs jacobian_lib over its basis
vectors (one vjp or jvp sweep batched over all of them by vmap, as JAX does, or a loop of
sweeps where that does not type), and slices the flat Jacobian into JAX's layout: the
output's tree outside, then one entry per argnum (tuple argnums), then the input's tree,
each block ``out.shape + in.shape``.
"""
import numpy as np

from .. import dtypes
from ..api import Jitted
from ..batching.api import Vmapped
from ..ir.trees import namespace_ref
from ..ir.types import ArrayType, Static
from ..lax.common import path_str, rebuild
from .api import (_argnums_tuple, _dynamic, _inner_spec, differentiated, jvp_function,
                  traced_numbers)
from .reverse import split_vjp_functions, vjp_function


def _tree_source(t, expr, leaf, constant=None, namespace=None):
    """Source text of a value shaped like type ``t`` (the value of ``expr``): ``leaf(expr,
    type)`` at each array leaf, containers around them (what builds a namedtuple or
    registered class is bound in ``namespace``), None elsewhere. A Python number (a
    constant output) is a leaf ``jnp.asarray(expr)``, or ``constant(expr, type)``."""
    def at(path, t):
        e = path_str(expr, path)
        if isinstance(t, Static) and dtypes.is_python_scalar(t.value):
            if constant is not None:
                return constant(e, _dynamic(t))
            return leaf(f"jnp.asarray({e})", _dynamic(t))
        return leaf(e, t) if isinstance(t, ArrayType) else "None"
    return rebuild(t, at, namespace_ref({} if namespace is None else namespace))


def _leaf_exprs(t, expr):
    """The expressions of the array leaves of ``t`` held in ``expr``, with their types."""
    found = []
    _tree_source(t, expr, lambda e, lt: found.append((e, lt)) or e)
    return found


def _ravel_into(leaves, layout, lines):
    """Source text of one vector holding the leaves (``(expr, type)`` pairs) raveled, placed
    by ``layout`` (the lines that build it are appended to ``lines``)."""
    def ravel(e, t):  # 0-d leaves are reshaped explicitly (Numba cannot ravel a scalar)
        return f"jnp.reshape({e}, (1,))" if t.ndim == 0 else f"jnp.ravel({e})"
    if len(leaves) == 1:
        return ravel(*leaves[0])
    lines.append(f"    flat = jnp.zeros({layout}[-1][1], _{layout}_dtype)")
    for i, (e, t) in enumerate(leaves):
        where, value = (f"{layout}[{i}][0]", e) if t.ndim == 0 else \
            (f"{layout}[{i}][0]:{layout}[{i}][1]", f"jnp.ravel({e})")
        lines.append(f"    flat = flat.at[{where}].set({value})")
    return "flat"


def _bounds(names, prefix, lines):
    """Append ``prefix1 = a.size``, ``prefix2 = prefix1 + b.size``... for the leaves
    ``names`` to ``lines``; return the offsets ``["0", "prefix1", ...]``."""
    bounds = ["0"]
    for i, a in enumerate(names):
        lines.append(f"    {prefix}{i + 1} = {a}.size" if i == 0 else
                     f"    {prefix}{i + 1} = {bounds[-1]} + {a}.size")
        bounds.append(f"{prefix}{i + 1}")
    return bounds


def _layout(bounds, names):
    """Source text of the layout of leaves ``names``: a ``(start, stop, shape)`` each."""
    return _tuple_source([f"({bounds[i]}, {bounds[i + 1]}, {a}.shape)"
                          for i, a in enumerate(names)])


def _unflat(flat, leaf_dtypes, layout, lines, namespace):
    """Append lines splitting the vector ``flat`` into leaves ``flat0, flat1...`` placed by
    ``layout`` (their dtypes too, where they differ); return their names."""
    names = [f"{flat}{i}" for i in range(len(leaf_dtypes))]
    if len(names) == 1:
        lines.append(f"    {names[0]} = jnp.reshape({flat}, {layout}[0][2])")
        return names
    mixed = len(set(leaf_dtypes)) > 1
    for i, (name, dtype) in enumerate(zip(names, leaf_dtypes)):
        namespace[f"_{name}_dtype"] = dtype
        cast = f".astype(_{name}_dtype)" if mixed else ""
        lines.append(f"    {name} = jnp.reshape({flat}[{layout}[{i}][0]:{layout}[{i}][1]], "
                     f"{layout}[{i}][2]){cast}")
    return names


def _inexact(t):
    return t.dtype.kind in "fc"


def _leaf_dtype(leaves):
    """The dtype of the flat vector holding these (floating-point) leaves."""
    return np.result_type(*[t.dtype for _, t in leaves]) if leaves else None


def _tuple_source(parts):
    return "(" + ", ".join(parts) + ("," if len(parts) == 1 else "") + ")"


class _Jacobian(Jitted):
    """``jacrev`` / ``jacfwd`` of ``fun`` with respect to the arguments ``argnums``."""

    def __init__(self, fun, argnums, mode, has_aux=False, holomorphic=False, allow_int=False):
        super().__init__(fun)
        self.argnums, self.mode, self.has_aux = argnums, mode, has_aux
        self.holomorphic = holomorphic
        self.allow_int = allow_int
        # a block has the input leaf's dtype (jacrev) or the output leaf's (jacfwd), as in JAX
        self.block_dtype = "input" if mode == "jacrev" else "output"

    def function_for(self, arg_types, program, split_allowed=True):
        from ..frontend.synthetic import from_source
        from . import jacobian_lib
        nums = _argnums_tuple(self.argnums, len(arg_types), self.mode)
        given, arg_types = arg_types, traced_numbers(arg_types, nums)
        leaves = [leaf for k in nums for leaf in _leaf_exprs(arg_types[k], f"x{k}")]
        for _, t in leaves:  # before the inner function's checks (hessian's jacrev), as JAX
            self._check(t, "input")
        spec = _inner_spec(self, arg_types, program)
        # integer inputs (allow_int) get zero blocks and stay out of the flat Jacobian
        ins = [leaf for leaf in leaves if _inexact(leaf[1])]
        out_type = self._output_type(spec)
        outs = _leaf_exprs(out_type, "out")
        for _, t in outs:
            self._check(t, "output")
        if not (ins or leaves) or not outs:
            raise self._error(f"{self.mode} of {self._name}: no floating-point "
                              f"{'output' if not outs else 'input'} to differentiate")
        xs = [f"x{i}" for i in range(len(arg_types))]
        ys = [f"y{j}" for j in range(len(outs))]
        as_ = [f"a{i}" for i in range(len(ins))]
        name = f"{spec.name}_{self.mode}"
        lines = [f"def {name}({', '.join(xs)}):"] + [
            f"    x{k} = jnp.asarray(x{k})" for k in nums if given[k] is not arg_types[k]]
        call_f = f"_f({', '.join(xs)})"
        split = None
        if self.mode == "jacfwd" and ins:
            # the forward sweep gives f's output too: f does not run again for its layout
            lines += [f"    {a} = {e}" for a, (e, _) in zip(as_, ins)]
            cols = _bounds(as_, "c", lines)
            lines.append(f"    J, out = _loop(_step, {_tuple_source(xs)}, "
                         f"{_layout(cols, as_)}, {cols[-1]}, _x_dtype)")
            if self.has_aux:
                lines.append(f"    r = {call_f}")
            lines += [f"    {y} = {e}" for y, (e, _) in zip(ys, outs)]
            rows = _bounds(ys, "r", lines)
        else:
            # f's split derivative runs its forward sweep once, here: the vmapped backward
            # sweeps read its residuals (else each reruns it inside f's *_vjp)
            if ins and split_allowed:
                split = split_vjp_functions(spec, {0} if self.has_aux else None,
                                            frozenset(nums))
            args = xs
            if split is not None:
                lines += ["    pair = _fwd(" + ", ".join(xs) + ")", "    res = pair[1]"]
                call_f, args = "pair[0]", xs + ["res"]
            # one output element and no split: f's output comes from the one sweep, whose
            # *_vjp runs f's forward statements (not f again: hessian of a function that
            # loops, whose split is refused when differentiated again, ran them twice)
            single = split is None and bool(ins) and len(outs) == 1 and all(outs[0][1].ones)
            if single:
                lines += [f"    {a} = {e}" for a, (e, _) in zip(as_, ins)]
                cols = _bounds(as_, "c", lines)
                shape = _tuple_source(["1"] * outs[0][1].ndim)
                lines.append(f"    J, r = _loop(_step, {_tuple_source(args)}, ((0, 1, {shape}),), "
                             f"{_layout(cols, as_)}, 1, {cols[-1]}, _y_dtype, _x_dtype)")
                rows = ["0", "1"]
            if self.has_aux:
                lines += ([] if single else [f"    r = {call_f}"]) + ["    out = r[0]"]
            else:
                lines.append(f"    out = {'r' if single else call_f}")
            lines += [f"    {y} = {e}" for y, (e, _) in zip(ys, outs)]
            if not single:
                lines += [f"    {a} = {e}" for a, (e, _) in zip(as_, ins)]
                rows, cols = _bounds(ys, "r", lines), _bounds(as_, "c", lines)
            if ins and not single:
                lines.append(f"    J = _loop(_step, {_tuple_source(args)}, {_layout(rows, ys)}, "
                             f"{_layout(cols, as_)}, {rows[-1]}, {cols[-1]}, _y_dtype, "
                             f"_x_dtype)")
        typed = ins if self.block_dtype == "input" else outs
        mixed = len({t.dtype for _, t in typed}) > 1
        flat_dtype = _leaf_dtype(typed)

        def integer_block(j, e):  # jacrev(allow_int=True): zeros of the input's dtype
            return f"jnp.zeros({ys[j]}.shape + {e}.shape, {e}.dtype)"

        def block(j, i):
            part = "J" if len(ys) == len(as_) == 1 else \
                f"J[{rows[j]}:{rows[j + 1]}, {cols[i]}:{cols[i + 1]}]"
            k, leaves = (i, as_) if self.block_dtype == "input" else (j, ys)
            if mixed and flat_dtype.kind == "c" and typed[k][1].dtype.kind != "c":
                part = f"jnp.real({part})"  # a real leaf's block in a complex Jacobian
            cast = f".astype({leaves[k]}.dtype)" if mixed else ""
            return f"jnp.reshape({part}, {ys[j]}.shape + {as_[i]}.shape){cast}"

        out_leaf = iter(range(len(ys)))
        namespace = {"_f": spec.fn, "jnp": jacobian_lib.jnp,
                     "_y_dtype": _leaf_dtype(outs), "_x_dtype": _leaf_dtype(ins)}

        def per_output(e, t):
            j, in_leaf = next(out_leaf), iter(range(len(as_)))
            trees = [_tree_source(arg_types[k], f"x{k}", lambda e, t: block(
                j, next(in_leaf)) if _inexact(t) else integer_block(j, e),
                namespace=namespace) for k in nums]
            return trees[0] if isinstance(self.argnums, int) else _tuple_source(trees)
        result = _tree_source(out_type, "", per_output, namespace=namespace)
        lines.append(f"    return ({result}, r[1])" if self.has_aux else f"    return {result}")
        source = "\n".join(lines) + "\n"
        if not ins:  # only integer inputs (allow_int): every block is zero
            return from_source(name, source, namespace, spec.parsed)
        if self.mode == "jacrev":
            step = self._pull(spec, arg_types, nums, out_type, outs, ins, split, single)
            if split is not None:
                namespace["_fwd"] = split[0]
            if len(outs) == 1 and all(outs[0][1].ones):  # one output element: one sweep
                loop = jacobian_lib.jacrev_single_with_output if single else \
                    jacobian_lib.jacrev_single
                return from_source(name, source, dict(namespace, _step=step, _loop=loop),
                                   spec.parsed)
        else:
            step = self._push(spec, arg_types, nums, out_type, outs, ins, program)
        # one sweep batched over the basis (vmap); a loop of sweeps if that does not type
        in_axes, out_axes = ((None, None, None, 0), 0) if self.mode == "jacrev" else \
            ((None, None, 0), (None, 0))  # push: (f's output, the tangents)
        batched = from_source(name, source, dict(namespace, _step=Vmapped(
            step, in_axes=in_axes, out_axes=out_axes), _loop=getattr(
            jacobian_lib, f"{self.mode}_batched")), spec.parsed)
        try:
            program.specialize(batched, arg_types)
            return batched
        except Exception as e:  # noqa: BLE001 (the loop below raises any error that is real)
            batched_error = e
        if split is not None:  # each sweep of the loop would pop the same tapes
            loop = self.function_for(arg_types, program, split_allowed=False)
        else:
            loop = from_source(name, source, dict(namespace, _step=step, _loop=getattr(
                jacobian_lib, "jacrev_rows" if self.mode == "jacrev" else "jacfwd_columns")),
                spec.parsed)
        try:
            program.specialize(loop, arg_types)
        except Exception:  # noqa: BLE001
            if _users_error(batched_error):  # (the loop's own error would be about the loop)
                raise batched_error from None
            raise
        return loop

    def _pull(self, spec, arg_types, nums, out_type, outs, ins, split, with_output=False):
        """``pull(args, y, x, e)``: the raveled cotangent of the inputs ``nums`` for the flat
        output cotangent ``e`` (``y``, ``x``: the layouts of the outputs and inputs). With
        ``split`` (f's ``*_fwd``, ``*_bwd``), ``args`` ends with the forward sweep's
        residuals and the backward sweep alone runs; else f's ``*_vjp`` runs both (and
        ``with_output``: pull returns f's output first, from that ``*_vjp``)."""
        from ..frontend.synthetic import from_source
        from . import jacobian_lib
        live = {0} if self.has_aux else None
        namespace = {"jnp": jacobian_lib.jnp, "_x_dtype": _leaf_dtype(ins),
                     "_vjp": vjp_function(spec, live, differentiated(spec, nums)) if split is None
                     else split[1]}
        lines = ["def pull(args, y, x, e):"]
        es = iter(_unflat("e", [t.dtype for _, t in outs], "y", lines, namespace))
        cotangent = _tree_source(out_type, "", lambda e, t: next(es), namespace=namespace)
        if self.has_aux:
            cotangent = f"({cotangent}, None)"  # the aux output gets no cotangent
        n = len(arg_types) + (split is not None)  # (the residuals are the last argument)
        args = ", ".join(f"args[{i}]" for i in range(n))
        lines.append(f"    r = _vjp({args}, {cotangent})")
        lines.append("    g = r[1]" if split is None else "    g = r")
        grads = [leaf for k in nums for leaf in _leaf_exprs(arg_types[k], f"g[{k}]")
                 if _inexact(leaf[1])]
        flat = _ravel_into(grads, 'x', lines)
        lines.append(f"    return r[0], {flat}" if with_output else f"    return {flat}")
        return from_source(f"{spec.name}_pull", "\n".join(lines) + "\n", namespace,
                           spec.parsed)

    def _push(self, spec, arg_types, nums, out_type, outs, ins, program):
        """``push(args, x, v)``: f's output and its raveled tangent for the flat tangent
        ``v`` of the inputs ``nums`` (the other arguments' tangents are zero)."""
        from ..frontend.synthetic import from_source
        from . import adlib, jacobian_lib
        primal = spec
        if self.has_aux:  # differentiate f(...)[0]
            xs = ", ".join(f"x{i}" for i in range(len(arg_types)))
            main = from_source(f"{spec.name}_main", f"def main({xs}):\n    return _f({xs})[0]\n",
                               {"_f": spec.fn}, spec.parsed)
            primal = program.specialize(main, arg_types)
        namespace = {"jnp": jacobian_lib.jnp, "_ajx": adlib, "_y_dtype": _leaf_dtype(outs),
                     "_jvp": jvp_function(primal, program, differentiated(primal, nums))}
        lines = ["def push(args, x, v):"]
        vs = iter(_unflat("v", [t.dtype for _, t in ins], "x", lines, namespace))
        # the tangent of argument k's leaves, from the pieces in the order ``ins`` holds them
        # (argnums order); an argument named twice (argnums=(0, 0)) gets both pieces' sum
        parts = {}
        for k in nums:
            for j, _ in enumerate(_leaf_exprs(arg_types[k], "")):  # jacfwd: all inexact
                parts.setdefault(k, {}).setdefault(j, []).append(next(vs))
        pieces = {k: iter([" + ".join(by_leaf[j]) for j in sorted(by_leaf)])
                  for k, by_leaf in parts.items()}

        def zero(e, t):
            return f"_ajx.cotangent_like(0.0, {e})" if t.dtype.kind in "fc" else "None"
        tangents = [_tree_source(t, f"args[{i}]", (lambda e, lt, i=i: next(pieces[i]))
                                 if i in nums else zero, namespace=namespace)
                    for i, t in enumerate(arg_types)]
        args = ", ".join(f"args[{i}]" for i in range(len(arg_types)))
        lines += [f"    r = _jvp({args}, {', '.join(tangents)})", "    out = r[0]", "    t = r[1]"]
        ys = [f"y{j}" for j in range(len(outs))]
        lines += [f"    {y} = {e}" for y, (e, _) in zip(ys, outs)]
        lines.append(f"    y = {_layout(_bounds(ys, 'r', lines), ys)}")
        tangents = []  # a constant output's tangent is zero
        _tree_source(out_type, "t", lambda e, t: tangents.append((e, t)) or e,
                     lambda e, t: tangents.append((f"jnp.zeros(y[{len(tangents)}][2], "
                                                   f"_y_dtype)", t)) or e)
        tangent = _ravel_into(tangents, "y", lines)
        lines.append(f"    return out, {tangent}")
        return from_source(f"{spec.name}_push", "\n".join(lines) + "\n", namespace,
                           spec.parsed)

    @property
    def _user_function(self):
        fn = self.fun
        while isinstance(fn, _Jacobian):  # hessian's function is inside a jacrev
            fn = fn.fun
        return fn

    @property
    def _name(self):
        return getattr(self._user_function, "__name__", "the function")

    def _error(self, message):
        """A TypeError located at the user's function (where its source can be read)."""
        from ..errors import AstjaxError, TypeCheckError
        from ..frontend.parse import parse_function
        try:
            parsed = parse_function(self._user_function)
        except AstjaxError:
            return TypeCheckError(message)
        return parsed.error(parsed.node, message, TypeCheckError)

    def _output_type(self, spec):
        out = spec.return_type
        if self.has_aux:
            if not (hasattr(out, "elts") and len(out.elts) == 2):
                raise self._error(f"{self.mode} with has_aux=True requires "
                                  f"{self._name} to return a pair (output, aux), got "
                                  f"{out}")
            out = out.elts[0]
        return out

    def _check(self, t, what):
        """JAX's dtype checks, naming the user's function and line."""
        kind = t.dtype.kind
        if self.holomorphic:  # f'(z): complex in, complex out
            if kind != "c":
                raise self._error(f"{self.mode} with holomorphic=True requires {what}s "
                                  f"with complex dtype, but got {t.dtype} ({what} of "
                                  f"{self._name})")
            return
        if kind == "f":
            return
        if kind == "c" and what == "input" and self.mode == "jacrev":
            return  # rows of df/dx - i df/dy per real output, as grad (JAX's convention)
        if kind == "c" and what == "output" and self.mode == "jacfwd":
            return  # columns d(u + iv)/dx for real inputs x
        if what == "input" and self.mode == "jacrev":
            if self.allow_int:
                return  # a zero block of the input's dtype, as JAX's
            message = (f"jacrev requires real- or complex-valued inputs (input dtype that is a "
                       f"sub-dtype of np.inexact), but got {t.dtype}. If you want to use "
                       f"Boolean- or integer-valued inputs, use vjp or set allow_int to True.")
        elif what == "input":
            message = (f"jacfwd requires real-valued inputs (input dtype that is a sub-dtype "
                       f"of np.floating), but got {t.dtype}. For holomorphic differentiation, "
                       f"pass holomorphic=True. For differentiation of non-holomorphic "
                       f"functions involving complex inputs or integer inputs, use jvp "
                       f"directly.")
        else:
            message = (f"{self.mode} requires real-valued outputs (output dtype that is a "
                       f"sub-dtype of np.floating), but got {t.dtype}. For holomorphic "
                       f"differentiation, pass holomorphic=True. For differentiation of "
                       f"non-holomorphic functions involving complex outputs, use "
                       f"{'vjp' if self.mode == 'jacrev' else 'jvp'} directly.")
        raise self._error(f"{message} ({what} of {self._name})")


def jacrev(fun, argnums=0, has_aux=False, holomorphic=False, allow_int=False):
    """The Jacobian of ``fun`` by reverse mode (one sweep per output element), laid out as in
    JAX: the output's tree, then (tuple ``argnums``) one entry per argnum, then the input's
    tree; each block has shape ``out.shape + in.shape``. ``has_aux``: ``(jacobian, aux)``."""
    return _Jacobian(fun, argnums, "jacrev", has_aux, holomorphic, allow_int)


def jacfwd(fun, argnums=0, has_aux=False, holomorphic=False):
    """The Jacobian of ``fun`` by forward mode (one jvp per input element); see ``jacrev``."""
    return _Jacobian(fun, argnums, "jacfwd", has_aux, holomorphic)


def hessian(fun, argnums=0, has_aux=False, holomorphic=False):
    """JAX's ``jacfwd(jacrev(fun))``: forward over reverse."""
    return _Jacobian(jacrev(fun, argnums, has_aux, holomorphic), argnums, "jacfwd", has_aux,
                     holomorphic)


def _users_error(e):
    """An error located in the user's code (not a limit of batching inside astjax's)."""
    from ..errors import UserCodeError, in_astjax
    return isinstance(e, UserCodeError) and e.filename is not None and \
        not in_astjax(e.filename)
