"""VJP rules of the special-function ops (``ops/special.py``). Each derivative is the next
op of the family, so higher derivatives follow: gammaln' = digamma, digamma' =
polygamma(1, x), polygamma(n, x)' = polygamma(n + 1, x). The order n gets no cotangent
(an integer, as in JAX)."""
from ..ops.registry import REGISTRY
from .rules import vjp_rule

_digamma = REGISTRY["digamma"]
_polygamma = REGISTRY["polygamma"]


@vjp_rule("gammaln")
def gammaln_vjp(z, x, g):
    return (g * _digamma(x),)


@vjp_rule("digamma")
def digamma_vjp(z, x, g):
    return (g * _polygamma(1, x),)


@vjp_rule("polygamma")
def polygamma_vjp(z, x, y, g):
    return (None, g * _polygamma(x + 1, y))
