"""The VJP rule of the ``fma`` op (``ops/bits.py``), registered here because it needs the AD
package, which is loaded after the ops. It unbroadcasts its cotangents itself: ``fma`` is
not in the elementwise family (three operands)."""
from ..ad.adops import unbroadcast
from ..ad.rules import vjp_rule


def _number(x):
    return isinstance(x, (int, float, complex))


@vjp_rule("fma")
def fma_vjp(z, x, y, w, g):
    gx = None if _number(x) else unbroadcast(g * y, x)
    gy = None if _number(y) else unbroadcast(g * x, y)
    gw = None if _number(w) else unbroadcast(g, w)
    return (gx, gy, gw)
