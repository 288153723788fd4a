"""Importing this registers every VJP rule."""
from . import vjp_elementwise, vjp_reductions, vjp_conversions  # noqa: F401
from . import vjp_linalg, vjp_shape, vjp_indexing  # noqa: F401
from . import vjp_special, vjp_fft, vjp_solve  # noqa: F401
from . import jvp_rules  # noqa: F401  (forward mode's explicit JVP rules)
