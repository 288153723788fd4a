"""``lax.zeta``: the Hurwitz zeta function, as XLA computes it (and so JAX): ten terms of
the series, then the Euler-Maclaurin tail with twelve Bernoulli terms summed by Horner's
rule; plain ``astjax.numpy`` code compiled like user code.
"""
import astjax.numpy as jnp

# (2j)! / B_2j for j = 12 down to 1 (Cephes' and XLA's table)
_ZETA_COEFFS = (-7.1661652561756670113e18, 1.8152105401943546773e17,
                -4.5979787224074726105e15, 1.1646782814350067249e14,
                -2.950130727918164224e12, 7.47242496e10, -1.8924375803183791606e9,
                47900160.0, -1209600.0, 30240.0, -720.0, 12.0)


def zeta(x, q):
    """The Hurwitz zeta function ``sum over k >= 0 of (q + k) ** -x``: NaN for ``x < 1``,
    and for ``q <= 0`` with ``x`` not an integer; at the poles (integer ``q <= 0``) inf for
    an even integer ``x``, else NaN."""
    x, q = jnp.asarray(x), jnp.asarray(q)
    initial = jnp.power(q, -x)
    a = q
    for _ in range(9):
        a = a + 1
        initial = initial + jnp.power(a, -x)
    a = a + 1
    neg_power = jnp.power(a, -x)
    inv_square = 1 / (a * a)
    horner = jnp.zeros_like(a)
    for i in range(11):
        factor = (x + (22.0 - 2.0 * i)) * (x + (21.0 - 2.0 * i))
        horner = factor * inv_square * (horner + 1.0 / _ZETA_COEFFS[i])
    s = initial + neg_power * a / (x - 1) + \
        neg_power * (0.5 + x / a * (1.0 / _ZETA_COEFFS[11] + horner))
    # the series alone where the tail does not matter
    out = jnp.where(jnp.abs(neg_power) < jnp.abs(initial) * jnp.finfo(s.dtype).eps, initial,
                    s)
    out = jnp.where(x < 1, jnp.nan, out)
    q_le_zero = q <= 0
    out = jnp.where(jnp.logical_and(q_le_zero, x != jnp.floor(x)), jnp.nan, out)
    at_pole = jnp.logical_and(q_le_zero, q == jnp.floor(q))
    x_even = jnp.logical_and(x % 2 == 0, x == jnp.floor(x))
    return jnp.where(at_pole, jnp.where(x_even, jnp.inf, jnp.nan), out)
