"""``astjax.lax`` control flow and slicing.

Each public function is a ``LaxFunction`` (common.py): called eagerly it runs Python
(loops and branches on concrete values); called from compiled code the compiler asks
its ``function_for`` for the function to compile at the call's argument types. That
function is ordinary Python written from a short template (a ``for``/``while`` loop,
an ``if``), so it stays a loop in the generated source and reverse mode differentiates
it like user code. ``function_for`` first types the user's body functions (in a scratch
program) and raises JAX's errors for mismatched carries and branches, at the user's line.
"""
