"""Elementwise math, Array API aliases and dtype utilities written with ``astjax.numpy`` ops
(``fmax``, ``copysign``, ``atan2``, ``result_type``, ...), read by the compiler like user code, as those in ``_composites``. Semantics and
dtypes follow JAX 0.10.2.
"""

__all__ = []
