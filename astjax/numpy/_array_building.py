"""Array building and rearranging functions written with ``astjax.numpy`` ops
(``meshgrid``, ``cross``, ``rot90``, ``tril_indices``, ...), read by the compiler like user code, as those in ``_composites``. Semantics and
dtypes follow JAX 0.10.2.
"""

__all__ = []
