"""Smaller top-level functions of JAX's API: ``custom_gradient``, ``linear_transpose``,
``closure_convert``, ``named_call``, ``named_scope``, ``ensure_compile_time_eval`` and
``clear_caches``."""
import contextlib
import inspect

from .ad.custom import custom_vjp
from .frontend.synthetic import from_source


# --- custom_gradient ------------------------------------------------------------------------

class custom_gradient(custom_vjp):
    """``@custom_gradient`` on ``f(*args) -> (out, vjp_fn)``, ``vjp_fn(g)`` giving one
    cotangent per argument (a tuple; a bare value for a function of one argument), as JAX's:
    a custom_vjp function whose fwd is ``f`` (the residual is ``vjp_fn``, a closure over
    ``f``'s values) and whose bwd calls it."""

    def __init__(self, fun):
        super().__init__(fun)
        self.rule = (fun, _apply_vjp_fn)

    def _primal_source(self, names):
        return f"    return _primal({', '.join(names)})[0]\n"  # (the value, not vjp_fn)


def _apply_vjp_fn(vjp_fn, g):
    cts = vjp_fn(g)
    if isinstance(cts, (tuple, list)):
        return tuple(cts)
    return (cts,)


# --- linear_transpose -----------------------------------------------------------------------

def linear_transpose(fun, *primals, reduce_axes=()):
    """The transpose of the linear function ``fun``, whose arguments are shaped as
    ``primals`` (arrays or ShapeDtypeStructs): ``f_t(cotangent)`` is the tuple of the
    inputs' cotangents. It is ``fun``'s pullback (``vjp``) at zeros, so it can be jitted,
    vmapped and called from compiled code as a pullback can; a function that is not linear
    gets its derivative at zero transposed, where JAX raises."""
    from .ad.api import vjp
    from .shapes_api import eval_shape
    from .tree_util import tree_map
    import astjax.numpy as jnp
    if reduce_axes:
        raise NotImplementedError("linear_transpose: reduce_axes is not supported")
    structs = eval_shape(lambda *xs: xs, *primals)
    zeros = tree_map(lambda s: jnp.zeros(s.shape, s.dtype), structs)
    return vjp(fun, *zeros)[1]


# --- closure_convert ------------------------------------------------------------------------

def closure_convert(fun, *example_args):
    """``(converted, consts)`` with ``converted(*args, *consts) == fun(*args)``. Called from
    Python, ``fun``'s captured arrays are constants (as JAX's concrete values, which it does
    not hoist either): ``consts`` is empty. In compiled code a nested function's captured
    run-time values are the consts (``closure_convert_in_compiled_code``)."""
    n = len(example_args)

    def converted(*args):
        if len(args) != n:
            raise TypeError(f"{getattr(fun, '__name__', 'fun')} converted by closure_convert "
                            f"takes {n} arguments, got {len(args)}")
        return fun(*args)

    converted.__signature__ = inspect.Signature(
        [inspect.Parameter(f"a{k}", inspect.Parameter.POSITIONAL_ONLY) for k in range(n)])
    return converted, []


def _closure_convert_in_compiled_code(arg_types, program):
    """``closure_convert(g, *example_args)`` in compiled code: of a nested function ``g``
    that captured run-time values (a tuple ``(lifted, captured...)``), the function
    ``converted(*args, *captured)`` calling ``g``'s lifted function, and the captured
    values as a tuple; of any other function, the function itself and ``()``."""
    from .ir.infer import closure_function
    fun_t, examples = arg_types[0], arg_types[1:]
    lifted = closure_function(fun_t)
    params = [f"e{k}" for k in range(len(examples))]
    origin = lifted.origin if lifted is not None else None
    if lifted is None or not hasattr(fun_t, "elts"):  # (a closure of constants is Static)
        source = f"def closure_convert(fun, {', '.join(params)}):\n    return fun, ()\n"
        return from_source("closure_convert", source, {}, _origin_of(fun_t))
    n = len(fun_t.elts) - 1
    if len(lifted.fdef.args.args) - 1 != len(examples):
        from .errors import TypeCheckError
        raise TypeCheckError(f"closure_convert: the function takes "
                             f"{len(lifted.fdef.args.args) - 1} arguments, got "
                             f"{len(examples)} example arguments")
    consts = [f"c{k}" for k in range(n)]
    converted = from_source(
        f"{lifted.__name__}_converted",
        f"def {lifted.__name__.strip('_')}_converted({', '.join(params + consts)}):\n"
        f"    return _lifted((_lifted, {''.join(c + ', ' for c in consts)}), "
        f"{', '.join(params)})\n", {"_lifted": lifted}, origin)
    converted.__deepcopy__ = lambda memo: converted  # (a constant of the code, see below)
    source = (f"def closure_convert(fun, {', '.join(params)}):\n"
              f"    return _converted, ({''.join(f'fun[{k + 1}], ' for k in range(n))})\n")
    return from_source("closure_convert", source, {"_converted": converted}, origin)


def _origin_of(fun_t):
    from .frontend.parse import parse_function
    return parse_function(closure_convert)


closure_convert.function_for = _closure_convert_in_compiled_code
closure_convert._astjax_takes_closures = True


# --- names and caches -----------------------------------------------------------------------

def named_call(fun, *, name=None):
    """``fun`` itself: JAX names the call in its jaxpr and profiles; astjax's generated code
    keeps the user's function names already."""
    return fun


@contextlib.contextmanager
def named_scope(name):
    """A context manager that does nothing (JAX prefixes operation names with ``name``); in
    compiled code a ``with`` of it is its body."""
    if not isinstance(name, str):
        raise TypeError("named_scope name argument must be a string.")
    yield


@contextlib.contextmanager
def ensure_compile_time_eval():
    """JAX's: operations on concrete values inside it run eagerly even while tracing. Code
    outside compiled functions runs eagerly already, and in compiled code a ``with`` of it
    is its body (frontend/desugar.py), so it does nothing."""
    yield


def clear_caches():
    """Forget every compiled specialization held in memory (of each jit, grad, vmap, ...
    object) and the derivative functions generated for them, as JAX's ``clear_caches``;
    the on-disk caches stay, as JAX's persistent cache does."""
    from . import api
    from .ad import custom, forward, reverse
    from .runtime import eager
    for transformed in list(api.LIVE_TRANSFORMS):
        transformed.cache.clear()
        if getattr(transformed, "fast", None) is not None:
            transformed.fast.clear()
    for table in (reverse._CACHE, forward._CACHE, custom._PRIMALS, eager._TYPINGS):
        table.clear()
