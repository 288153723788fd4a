"""The op registry. Importing this package registers every op."""
from .registry import REGISTRY, Op, lookup, op_for_object  # noqa: F401
from . import elementwise  # noqa: F401  (registers)
