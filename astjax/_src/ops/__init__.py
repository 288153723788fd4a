"""The op registry. Importing this package registers every op."""
from .registry import REGISTRY, Op, op_for_object  # noqa: F401
from . import elementwise, conversions, creation, reductions, linalg, shape, indexing  # noqa: F401
from . import bits, effects  # noqa: F401
from . import special, fft, decompositions  # noqa: F401
