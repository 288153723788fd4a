"""Outputs nothing reads get no cotangent terms, as JAX's symbolic zeros: a rule's term for
an unused output is not multiplied by its zero cotangent, which gave nan where that term
is inf (sici's cos(x) / x at 0). Expected values are JAX 0.10.2's."""
import numpy as np

import astjax
import astjax.numpy as jnp
from astjax import lax
from astjax.scipy.special import sici


@astjax.custom_jvp
def sin_log(x):
    return jnp.sin(x), jnp.log(x)


@sin_log.defjvp
def _sin_log_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return sin_log(x), (jnp.cos(x) * t, t / x)


def test_unused_output_of_a_custom_jvp_rule_gets_no_term():
    assert astjax.grad(lambda x: sici(x)[0])(0.0) == 1.0
    assert astjax.grad(lambda x: sin_log(x)[0])(0.0) == 1.0
    assert astjax.jacrev(lambda x: sin_log(x)[0])(0.0) == 1.0
    # the other output read through stop_gradient only: no cotangent either
    assert astjax.grad(lambda x: sin_log(x)[0] + lax.stop_gradient(sin_log(x)[1]))(0.0) == 1.0


def test_eigenvalues_and_singular_values_of_a_degenerate_matrix():
    # the eigenvectors' derivative divides by the gaps between eigenvalues (0 here)
    eye = np.eye(2, dtype=np.float32)
    np.testing.assert_array_equal(astjax.grad(lambda a: jnp.sum(jnp.linalg.eigh(a)[0]))(eye),
                                  [[1.0, 0.0], [0.0, 1.0]])
    np.testing.assert_array_equal(astjax.grad(lambda a: jnp.sum(jnp.linalg.svd(a)[1]))(eye),
                                  [[1.0, 0.0], [0.0, 1.0]])


def test_slogdet_sign_of_a_singular_matrix():
    # (the rule's complex-only branch, which reads log|det|'s tangent, is not taken)
    singular = np.ones((2, 2), np.float32)
    np.testing.assert_array_equal(astjax.grad(lambda a: jnp.linalg.slogdet(a)[0])(singular),
                                  np.zeros((2, 2)))


def test_unused_operand_of_a_callee_gets_no_cotangent():
    # lax.sort's second output is log(a), inf's derivative at 0: not read, not differentiated
    a = np.array([2.0, 0.0, 1.0], np.float32)
    np.testing.assert_array_equal(
        astjax.grad(lambda a: jnp.sum(lax.sort((a, jnp.log(a)), num_keys=1)[0]))(a),
        [1.0, 1.0, 1.0])


def test_forward_mode_gives_no_tangent_to_a_piecewise_constant_element():
    # modf(x)[1] and divmod(x, 1.0)[0] have JAX's symbolic zero tangent: sqrt's inf at 0
    # does not meet it (a callee's tuple output is told apart element by element)
    for f in (lambda x: jnp.sqrt(jnp.modf(x)[1]) + x,
              lambda x: jnp.sqrt(jnp.divmod(x, 1.0)[0]) + x):
        assert astjax.jvp(f, (0.5,), (1.0,))[1] == 1.0
        assert astjax.jacfwd(f)(0.5) == 1.0
        assert astjax.grad(f)(0.5) == 1.0
