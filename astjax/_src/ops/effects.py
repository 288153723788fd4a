"""``debug_callback``: the one op with a side effect (astjax.debug.print, .callback, print).

``debug_callback(*args, callback, batched=())`` calls ``callback(args, batched)`` and
returns None. ``args`` are the call's arguments as the code holds them (arrays, pytrees,
constants); ``callback`` is a ``debugging.DebugCall``, which knows their types, rebuilds
the values the user passed and runs the Python function. ``batched`` is written by vmap:
one entry per enclosing vmap, outermost first, saying which leaves carry that batch axis,
so the callback runs once per example, as in JAX.

Passes keep the op because it only stands in an expression statement, which no pass
drops (dead-code removal drops assignments: ir/specialize.py turns ``t = debug_callback(..)``
into the statement and ``t = None``; vmap's drop of unread op results checks
``op.rules["effect"]``).
"""
from ..ir import anno
from ..ir.types import Static
from .registry import NAMESPACE, Op


def _debug_callback(*args, callback, batched=()):
    callback(args, batched)


debug_callback = Op("debug_callback", _debug_callback, lambda args, callback, batched=():
                    Static(None), operands=("args",), static=("callback", "batched"),
                    differentiable=False)
del NAMESPACE["debug_callback"]  # astjax.debug.callback is the public name
debug_callback.rules["effect"] = True


def _numba_statement(emitter, node):
    """Numba code: a call of a small function that hands the arguments (containers are
    tuples there, see ir/trees.py) to the callback in object mode. (An object-mode block
    inside a function with loops can fail to compile: "Instruction does not dominate all
    uses!", numba 0.68.)"""
    args = "".join(("None" if isinstance(anno.get(a, "type"), Static) else emitter.atom(a))
                   + ", " for a in anno.get(node, "operand_nodes")["args"])  # (types hold statics)
    params = {k: anno.get(v, "type").value for k, v in anno.get(node, "param_nodes").items()}
    callback = emitter.program.static_ref(params["callback"])
    helper = ["@_nb.njit(cache=True)",  # (no nogil: object mode holds the GIL)
              f"def _{callback}(args):",
              "    with _nb.objmode():",
              f"        {callback}.from_numba(args, {emitter.literal(params.get('batched', ()))})"]
    if helper not in emitter.kernels:
        emitter.kernels.append(helper)
    return [f"_{callback}(({args}))"]


debug_callback.rules["numba_statement"] = _numba_statement
