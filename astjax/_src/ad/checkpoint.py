"""``checkpoint`` (``remat``) and JAX's ``checkpoint_policies``.

A call to ``checkpoint(f)`` from differentiated code is a rematerialization boundary: the
caller's forward sweep runs ``f`` and records only the call's arguments, and the backward
sweep reruns f's forward statements inside f's own ``*_vjp``. In compiled code the
checkpointed function stands for a one-line wrapper marked ``checkpoint``, which reverse
mode never splits into a forward and backward sweep (reverse.split_vjp_functions), so the
boundary holds at the top level of a body as well as in loops and branches.

Policies are accepted with JAX's names; astjax saves nothing inside the checkpointed
function under any of them except ``everything_saveable`` (which makes no boundary at all),
so a policy that lets JAX keep some values (dots, named values) costs recomputation here,
never a different result.
"""
import inspect

from ..api import Jitted
from ..frontend.synthetic import SyntheticFunction, from_source


class _Checkpointed(Jitted):
    """``checkpoint(f)``; inside compiled code, a wrapper of ``f`` that reverse mode keeps
    as a boundary (or ``f`` itself under ``everything_saveable``)."""

    def __init__(self, fun, static_argnums=(), static_argnames=(), boundary=True):
        super().__init__(fun, static_argnums, static_argnames)
        self.boundary = boundary
        self.wrappers = {}  # argument types -> the wrapper (one specialization each)

    def function_for(self, arg_types, program):
        fun = self.fun
        if not self.boundary:
            return fun.function_for(arg_types, program) if hasattr(fun, "function_for") \
                else fun
        wrapper = self.wrappers.get(arg_types)
        if wrapper is None:
            params = list(self.signature.parameters.values())
            star = lambda p: "*" if p.kind is p.VAR_POSITIONAL else ""  # noqa: E731
            call = ", ".join(f"{p.name}={p.name}" if p.kind is p.KEYWORD_ONLY else
                             star(p) + p.name for p in params)
            name = f"{fun.__name__}_checkpoint" if fun.__name__.isidentifier() \
                else "checkpointed"
            source = f"def {name}({', '.join(star(p) + p.name for p in params)}):\n" \
                     f"    return _checkpointed({call})\n"
            wrapper = from_source(name, source, {"_checkpointed": fun}, _origin(fun))
            wrapper.checkpoint = True
            self.wrappers[arg_types] = wrapper
        return wrapper


def _origin(fn):
    while not isinstance(fn, SyntheticFunction) and hasattr(fn, "__astjax_wrapped__"):
        fn = fn.__astjax_wrapped__
    if isinstance(fn, SyntheticFunction):
        return fn.origin
    from ..frontend.parse import parse_function
    return parse_function(fn)


class _CheckpointFunction:
    """``checkpoint`` itself. Not a plain function, so that ``checkpoint(f)(x)`` written
    inside a compiled function is evaluated when that function is compiled (as vmap is)."""

    def __call__(self, fun, *, prevent_cse=True, policy=None, static_argnums=(),
                 static_argnames=()):
        """``checkpoint(f)`` (JAX's ``remat``): differentiating a call to it stores only the
        call's arguments; the backward sweep recomputes f's intermediates. ``policy``:
        one of ``checkpoint_policies`` (or any callable); astjax recomputes everything
        under all but ``everything_saveable`` (same values, more recomputation than JAX
        where a policy lets it save dots or named values)."""
        if not callable(fun):
            raise TypeError(f"checkpoint expects a callable, got {fun!r}")
        if policy is not None and not callable(policy):
            raise TypeError(f"checkpoint policy must be callable, got {policy!r}")
        return _Checkpointed(fun, static_argnums, static_argnames,
                             boundary=policy is not everything_saveable)

    def __repr__(self):
        return "<function astjax.checkpoint>"


checkpoint = _CheckpointFunction()
checkpoint.__doc__ = _CheckpointFunction.__call__.__doc__
checkpoint.__name__ = checkpoint.__qualname__ = "checkpoint"
remat = checkpoint


def checkpoint_name(x, name):
    """Names ``x`` for a policy (``save_only_these_names``, ...); the value itself. astjax's
    checkpoints save nothing inside them, so the name only documents the value."""
    return x


# --- JAX's checkpoint_policies: each says whether JAX may save a value; astjax saves none ---

def everything_saveable(*_, **__):
    return True


def nothing_saveable(*_, **__):
    return False


def dots_saveable(*_, **__):
    return False


checkpoint_dots = dots_saveable


def dots_with_no_batch_dims_saveable(*_, **__):
    return False


checkpoint_dots_with_no_batch_dims = dots_with_no_batch_dims_saveable


def _named(*names):
    def policy(*_, **__):
        return False
    policy.names = names
    return policy


def save_only_these_names(*names):
    return _named(*names)


def save_any_names_but_these(*names):
    return _named(*names)


def save_anything_except_these_names(*names):
    return _named(*names)


def save_and_offload_only_these_names(*, names_which_can_be_saved,
                                      names_which_can_be_offloaded, offload_src,
                                      offload_dst):
    return _named(*names_which_can_be_saved)


def offload_dot_with_no_batch_dims(offload_src, offload_dst):
    return dots_with_no_batch_dims_saveable


def save_from_both_policies(policy_1, policy_2):
    if policy_1 is everything_saveable or policy_2 is everything_saveable:
        return everything_saveable
    return nothing_saveable
