"""What generated python-backend modules import: ``jnp`` maps op names to NumPy impls."""
import types

import numpy as np

from ..ops.registry import REGISTRY


def _namespace():
    return types.SimpleNamespace(**{name: op.impl for name, op in REGISTRY.items()})


jnp = _namespace()
s_ = np.s_
