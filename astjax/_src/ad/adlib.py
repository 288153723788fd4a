"""What generated derivative code refers to as ``_ajx``: AD-only ops and their VJP rules."""
import numpy as np

import astjax.numpy as jnp

from . import adops
from .rules import vjp_rule

s_ = np.s_
unbroadcast = adops.unbroadcast
cotangent_like = adops.cotangent_like
shape_stub = adops.shape_stub
moveaxis = jnp.moveaxis  # the stacked-list adjoint (reverse.py)
reshape = jnp.reshape    # the concatenated-list adjoint


@vjp_rule("unbroadcast")
def unbroadcast_vjp(z, g, like, ct):
    return cotangent_like(ct, g), None


@vjp_rule("cotangent_like")
def cotangent_like_vjp(z, d, like, ct):
    return unbroadcast(ct, d), None

