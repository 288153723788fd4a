"""What generated derivative code refers to as ``_ajx``: AD-only ops and their VJP rules."""
import numpy as np

from . import adops
from .rules import vjp_rule

s_ = np.s_
unbroadcast = adops.unbroadcast
cotangent_like = adops.cotangent_like


@vjp_rule("unbroadcast")
def unbroadcast_vjp(z, g, like, ct):
    return cotangent_like(ct, g), None


@vjp_rule("cotangent_like")
def cotangent_like_vjp(z, d, like, ct):
    return unbroadcast(ct, d), None
