"""Reductions, statistics and set functions written with ``astjax.numpy`` ops
(``nanvar``, ``isin``, ``digitize``, ``bincount``, ...), read by the compiler like user code, as those in ``_composites``. Semantics and
dtypes follow JAX 0.10.2.
"""

__all__ = []
