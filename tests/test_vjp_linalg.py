"""VJP rules of the products and transposes, checked eagerly against central differences
(float64), for float32 dtypes and a zero cotangent, and through the reverse-mode
transform (compiled, to second order)."""
import numpy as np
import pytest

import astjax.numpy as jnp
from astjax._src.ops.registry import REGISTRY

from .test_vjp_shape import check_all, check_rule, grad_check, rand, rules_missing


def test_every_differentiable_linalg_op_has_a_rule():
    assert rules_missing("astjax._src.ops.linalg") == []
    names = {n for n, op in REGISTRY.items()
             if getattr(op.impl, "__module__", None) == "astjax._src.ops.linalg"}
    assert {"dot", "matmul", "einsum", "tensordot", "trace", "transpose"} <= names


def _pair(sa, sb):
    a = 1.5 if sa == "s" else rand(sa, 1)
    b = -0.5 if sb == "s" else rand(sb, 2)
    return a, b


# --- products -------------------------------------------------------------------------------------

@pytest.mark.parametrize("sa,sb", [
    ((), (3,)), ((3,), ()), ("s", (2, 3)), ((2, 3), "s"), ((3,), (3,)), ((2, 3), (3,)),
    ((3,), (3, 4)), ((2, 3), (3, 4)), ((2, 3, 4), (4,)), ((2, 3, 4), (5, 4, 6)),
    ((4,), (2, 4, 3)), ((1, 3), (3, 1)), ((0, 3), (3, 2))])
def test_dot(sa, sb):
    check_all("dot", *_pair(sa, sb))


@pytest.mark.parametrize("sa,sb", [
    ((3,), (3,)), ((3,), (3, 4)), ((2, 3), (3,)), ((2, 3), (3, 4)), ((5, 2, 3), (3, 4)),
    ((2, 3), (5, 3, 4)), ((2, 1, 3, 4), (5, 4, 2)), ((1, 2, 3), (4, 3, 2)),
    ((3,), (2, 3, 4)), ((2, 3, 4), (4,)), ((1, 2, 3), (3, 1)), ((2, 1, 2, 3), (1, 3, 3, 2))])
def test_matmul(sa, sb):
    check_all("matmul", *_pair(sa, sb))


@pytest.mark.parametrize("sa,sb", [((3,), (3,)), ((2, 3), (6,)), ((2, 3), (3, 2)),
                                   ((), ())])
def test_vdot(sa, sb):
    check_all("vdot", *_pair(sa, sb))


def test_vdot_complex(x64):
    """vdot conjugates its first operand; as in JAX, the cotangents transpose the linear
    maps without conjugating otherwise: z = sum(conj(a) b) gives ct_b = g conj(a) and,
    through conj, ct_a = conj(g b)."""
    rng = np.random.default_rng(0)
    a = jnp.asarray(rng.standard_normal(3) + 1j * rng.standard_normal(3))
    b = jnp.asarray(rng.standard_normal(3) + 1j * rng.standard_normal(3))
    g = jnp.asarray(0.3 - 0.7j)
    ct_a, ct_b = REGISTRY["vdot"].rules["vjp"](jnp.vdot(a, b), a, b, g)
    np.testing.assert_allclose(ct_b, np.asarray(g) * np.conj(np.asarray(a)))
    np.testing.assert_allclose(ct_a, np.conj(np.asarray(g) * np.asarray(b)))


@pytest.mark.parametrize("sa,sb", [((), (3,)), ("s", (2, 3)), ((3,), (3,)), ((2, 3), (3,)),
                                   ((2, 3), (4, 3)), ((2, 3, 4), (5, 4)), ((3,), (2, 3))])
def test_inner(sa, sb):
    check_all("inner", *_pair(sa, sb))


@pytest.mark.parametrize("sa,sb", [((3,), (4,)), ((2, 3), (2,)), ((), (3,)), ((2, 2), ())])
def test_outer(sa, sb):
    check_all("outer", *_pair(sa, sb))


@pytest.mark.parametrize("sa,sb,axes", [
    ((2, 3, 4), (3, 4, 5), 2), ((2, 3), (3, 4), 1), ((2, 3), (4,), 0), ((), (3,), 0),
    ((2, 3, 4), (4, 2, 5), ((0, 2), (1, 0))), ((2, 3, 4), (3, 5), ([1], [0])),
    ((2, 3, 4), (4, 3), ((-1, 1), (0, -1))), ((3, 4), (4, 3), ((0, 1), (1, 0))),
    ((2, 3), (2, 3), ((1, 0), (1, 0))), ((2, 3, 4), (2, 3, 4), 3)])
def test_tensordot(sa, sb, axes):
    check_all("tensordot", *_pair(sa, sb), axes=axes)


# --- einsum ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("spec,shapes", [
    ("ij,jk->ik", ((2, 3), (3, 4))),
    ("ij,jk", ((2, 3), (3, 4))),                  # implicit output
    ("ik,jk", ((2, 3), (4, 3))),                  # implicit output, sorted letters
    ("i,i->", ((3,), (3,))),
    ("i,j->ij", ((3,), (4,))),
    ("i,j->ji", ((3,), (4,))),
    ("ij,ij->ij", ((2, 3), (2, 3))),
    ("ij,j->i", ((3, 1), (4,))),                  # label j broadcasts (size 1 in a)
    ("bij,bjk->bik", ((2, 2, 3), (2, 3, 4))),
    ("...ij,...jk->...ik", ((2, 1, 2, 3), (5, 3, 4))),   # ellipsis dims broadcast
    ("...i,i->...", ((2, 3, 4), (4,))),
    ("i...,i->...", ((4, 2, 3), (4,))),
    ("ij,jk,kl->il", ((2, 3), (3, 4), (4, 2))),
    ("ijk,kj->i", ((2, 3, 4), (4, 3))),
    ("ij,->ij", ((2, 3), ())),
    ("a,b,c,d->abcd", ((2,), (3,), (1,), (2,))),
    ("ij->ji", ((2, 3),)),
    ("ij->", ((2, 3),)),
    ("ij->i", ((2, 3),)),                         # label j only in the operand
    ("ijk->kj", ((2, 3, 4),)),
    ("ii->i", ((3, 3),)),                         # diagonal
    ("ii->", ((3, 3),)),                          # trace
    ("ii", ((3, 3),)),
    ("iij->j", ((3, 3, 2),)),
    ("iji->ij", ((3, 2, 3),)),
    ("iii->i", ((2, 2, 2),)),
    ("ij,jj->i", ((2, 3), (3, 3))),
    ("...->...", ((2, 3),)),
    ("i...->...", ((2, 3, 4),)),
])
def test_einsum(spec, shapes):
    check_all("einsum", spec, *(rand(s, k) for k, s in enumerate(shapes)))


def test_einsum_python_scalar_operand(x64):
    check_rule("einsum", "ij,->ij", rand((2, 3)), 2.0)


# --- transposes and trace -------------------------------------------------------------------------

@pytest.mark.parametrize("shape,params", [
    ((2, 3, 4), {}), ((2, 3, 4), {"axes": (1, 0, 2)}), ((2, 3, 4), {"axes": (-1, 0, 1)}),
    ((2, 3, 4), {"axes": (2, 0, 1)}), ((2, 3), {"axes": 1, "more": (0,)}), ((), {}),
    ((3,), {"axes": (0,)})])
def test_transpose(shape, params):
    params = dict(params)
    more = params.pop("more", ())
    if more:  # the method form x.transpose(1, 0): axes=1, *more=(0,)
        check_all("transpose", rand(shape), params["axes"], *more)
    else:
        check_all("transpose", rand(shape), **params)


@pytest.mark.parametrize("shape", [(3, 4), (2, 3, 4), (1, 2, 3, 1)])
def test_matrix_transpose(shape):
    check_all("matrix_transpose", rand(shape))


@pytest.mark.parametrize("shape,params", [
    ((3, 3), {}), ((3, 4), {"offset": 1}), ((4, 3), {"offset": -2}), ((3, 3), {"offset": 5}),
    ((2, 3, 4), {"axis1": 1, "axis2": 2}), ((2, 3, 4), {"axis1": 2, "axis2": 0}),
    ((2, 3, 3, 2), {"axis1": -2, "axis2": 1, "offset": 1})])
def test_trace(shape, params):
    check_all("trace", rand(shape), **params)


# --- through the transform (compiled; second order where the rule is not trivial) -----------------

A, B = rand((2, 3), 1), rand((3, 4), 2)
BATCH_A, BATCH_B = rand((2, 1, 2, 3), 3), rand((3, 3, 2), 4)
SQUARE, T3, C = rand((3, 3), 5), rand((3, 2, 3), 6), rand((4, 3), 7)

GRADS = [  # (fn, args, order); the loss sums sin of the op so second derivatives are not 0
    (lambda a, b: jnp.sum(jnp.sin(jnp.dot(a, b))), (A, B), 2),
    (lambda a, b: jnp.sum(jnp.sin(a @ b)), (A, B), 1),
    (lambda a, b: jnp.sum(jnp.sin(jnp.matmul(a, b))), (BATCH_A, BATCH_B), 2),
    (lambda a, b: jnp.sum(jnp.sin(jnp.matmul(a[0, 0, 0], b))), (BATCH_A, BATCH_B), 1),
    (lambda a: jnp.sum(jnp.sin(jnp.dot(a, 2.0))), (A,), 1),
    (lambda a, b: jnp.sin(jnp.vdot(a, b)), (A, B[:, :2]), 1),
    (lambda a, b: jnp.sum(jnp.sin(jnp.inner(a, b))), (A, B.T), 1),
    (lambda a, b: jnp.sum(jnp.sin(jnp.outer(a, b))), (A, B), 1),
    (lambda a, b: jnp.sum(jnp.sin(jnp.tensordot(a, b, axes=((1, 0), (0, 2))))),
     (A, rand((3, 5, 2))), 2),
    (lambda a, b: jnp.sum(jnp.sin(jnp.einsum("ij,jk->ik", a, b))), (A, B), 2),
    (lambda a, b: jnp.sum(jnp.sin(jnp.einsum("...ij,jk->...ik", a, b))), (BATCH_A, B), 1),
    (lambda a: jnp.sum(jnp.sin(jnp.einsum("ii->i", a))), (SQUARE,), 2),
    (lambda a: jnp.sin(jnp.einsum("ij->", a)), (A,), 1),
    (lambda a: jnp.sum(jnp.sin(jnp.transpose(a, (2, 0, 1))) * 1.5), (T3,), 2),
    (lambda a: jnp.sum(jnp.sin(a.T) * C), (B,), 1),
    (lambda a: jnp.sum(jnp.sin(a.transpose(1, 0)) * C), (B,), 1),
    (lambda a: jnp.sum(jnp.sin(jnp.matrix_transpose(a)) * B), (rand((2, 4, 3)),), 1),
    (lambda a: jnp.sin(jnp.trace(a, 1)), (B,), 2),
    (lambda a: jnp.sum(jnp.sin(jnp.trace(a, axis1=0, axis2=2))), (T3,), 1),
]


@pytest.mark.parametrize("k", range(len(GRADS)))
def test_grad(k):
    fn, args, order = GRADS[k]
    grad_check(fn, *args, order=order)
