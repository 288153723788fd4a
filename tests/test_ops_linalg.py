"""dot, matmul, vdot, inner, outer, tensordot, einsum, transpose, matrix_transpose, trace."""
import numpy as np
import pytest

import astjax
import astjax.numpy as jnp
from astjax._src.errors import ShapeError
from astjax._src.ir.types import ArrayType, SequenceType, Static, array_type
from astjax._src.ops.registry import METHODS, REGISTRY, op_for_object

from .op_checks import check, f32, f64, i32, rand



# --- dot / matmul / vdot / inner / outer -------------------------------------------------------

DOT_SHAPES = [((), (3,)), ((3,), ()), ((3,), (3,)), ((2, 3), (3,)), ((2, 3), (3, 4)),
              ((2, 3, 4), (4,)), ((2, 3, 4), (5, 4, 6)), ((1, 3), (3, 1)), ((0, 3), (3, 2))]


@pytest.mark.parametrize("sa,sb", DOT_SHAPES)
def test_dot_shapes(sa, sb):
    a, b = rand(sa), rand(sb, seed=1)
    out = check("dot", a, b)
    np.testing.assert_allclose(out, np.dot(a, b), rtol=1e-5)
    assert out.shape == np.dot(a, b).shape


@pytest.mark.parametrize("da,db,expected", [
    (np.float32, np.float32, f32), (np.int32, np.int32, i32), (np.bool_, np.bool_, np.bool_),
    (np.int32, np.float32, f32), (np.int8, np.int8, np.int8), (np.float16, np.float32, f32),
    (np.complex64, np.float32, np.complex64)])
def test_dot_dtypes(da, db, expected):
    a, b = rand((2, 3), da), rand((3, 4), db, seed=1)
    for name in ("dot", "matmul"):
        out = check(name, a, b)
        assert out.dtype == expected
        np.testing.assert_allclose(out, np.dot(a.astype(expected), b.astype(expected)),
                                   rtol=1e-3)


def test_python_scalar_is_weak():
    a = rand((3,))
    out = check("dot", 2.0, a)
    assert out.dtype == f32 and not out.weak_type
    np.testing.assert_allclose(out, 2 * a)
    assert check("dot", 2.0, 3.0).weak_type
    assert check("inner", 2, a).dtype == f32


def test_dot_x64(x64):
    a, b = rand((2, 3), np.float64), rand((3,), np.float64)
    assert check("dot", a, b).dtype == f64
    assert check("matmul", rand((2, 3), np.int64), rand((3,), np.int64)).dtype == np.int64


@pytest.mark.parametrize("sa,sb", [((3,), (3,)), ((3,), (3, 4)), ((2, 3), (3,)),
                                   ((2, 3), (3, 4)), ((5, 2, 3), (3, 4)),
                                   ((2, 1, 3, 4), (5, 4, 2)), ((1, 2, 3), (3, 1)),
                                   ((3,), (2, 3, 4))])
def test_matmul_shapes(sa, sb):
    a, b = rand(sa), rand(sb, seed=1)
    out = check("matmul", a, b)
    np.testing.assert_allclose(out, np.matmul(a, b), rtol=1e-5)
    assert out.shape == np.matmul(a, b).shape


def test_matmul_operator_and_alias():
    a, b = astjax.device_put(rand((2, 3), np.int32)), astjax.device_put(rand((3, 2), np.int32))
    out = a @ b
    assert out.dtype == i32
    np.testing.assert_array_equal(out, np.asarray(a) @ np.asarray(b))
    np.testing.assert_array_equal(np.asarray(a) @ b, out)  # ndarray @ Array uses __rmatmul__
    assert op_for_object(np.matmul) is REGISTRY["matmul"]
    assert METHODS["dot"] == "dot"
    np.testing.assert_array_equal(a.dot(b), out)


def test_matmul_errors():
    with pytest.raises(ShapeError, match=r"matmul\(\): both operands must be at least 1-D"):
        jnp.matmul(np.float32(2), rand((3,)))
    with pytest.raises(ValueError):  # sizes are checked by NumPy at run time
        jnp.matmul(rand((2, 3)), rand((4, 2)))


def test_symbolic_types():
    m = array_type(f32, 2)
    assert REGISTRY["matmul"].infer({"a": m, "b": array_type(f32, 1)}, {}).ones == (False,)
    t = REGISTRY["matmul"].infer({"a": array_type(f32, ones=(True, False, False)),
                                  "b": array_type(f32, 3)}, {})
    assert t.ones == (False, False, False)
    t = REGISTRY["dot"].infer({"a": Static(2), "b": array_type(i32, 2)}, {})
    assert t == ArrayType(i32, (False, False), False)
    t = REGISTRY["outer"].infer({"a": array_type(f32, ones=(True,)), "b": m}, {})
    assert t.ones == (True, False)


def test_preferred_element_type_and_precision():
    a, b = rand((2, 3), np.int8), rand((3, 2), np.int8, seed=1)
    out = check("dot", a, b, preferred_element_type=np.int32)
    assert out.dtype == i32
    np.testing.assert_array_equal(out, np.dot(a.astype(np.int32), b.astype(np.int32)))
    out = check("matmul", a.astype(np.float32), b.astype(np.float32), precision="highest",
                preferred_element_type=np.float64)  # canonicalized without x64
    assert out.dtype == f32


@pytest.mark.parametrize("sa,sb", [((3,), (3,)), ((2, 3), (3, 2)), ((), ())])
def test_vdot(sa, sb):
    a, b = rand(sa), rand(sb, seed=1)
    out = check("vdot", a, b)
    assert out.shape == ()
    np.testing.assert_allclose(out, np.vdot(a, b), rtol=1e-5)
    c = (rand((3,)) + 1j * rand((3,), seed=2)).astype(np.complex64)
    np.testing.assert_allclose(check("vdot", c, c), np.vdot(c, c), rtol=1e-5)
    assert check("vdot", rand((4,), np.int32), rand((4,), np.int32)).dtype == i32


@pytest.mark.parametrize("sa,sb", [((3,), (3,)), ((2, 3), (4, 3)), ((), (2, 3)), ((1, 3), (3,))])
def test_inner(sa, sb):
    a, b = rand(sa), rand(sb, seed=1)
    out = check("inner", a, b)
    np.testing.assert_allclose(out, np.inner(a, b), rtol=1e-5)
    assert out.shape == np.inner(a, b).shape


@pytest.mark.parametrize("sa,sb", [((3,), (4,)), ((2, 3), (1,)), ((), (2,)), ((1, 1), ())])
def test_outer(sa, sb):
    a, b = rand(sa, np.int32), rand(sb, np.float32, seed=1)
    out = check("outer", a, b)
    assert out.dtype == f32
    np.testing.assert_allclose(out, np.outer(a, b), rtol=1e-6)


# --- tensordot -----------------------------------------------------------------------------------

@pytest.mark.parametrize("sa,sb,axes", [
    ((2, 3, 4), (3, 4, 5), 2), ((2, 3), (3, 4), 1), ((2, 3), (4, 5), 0), ((), (2,), 0),
    ((2, 3, 4), (4, 3, 5), ([1, 2], [1, 0])), ((2, 3), (3, 2), ((0, 1), (1, 0))),
    ((2, 3, 4), (4, 2), (-1, 0)), ((1, 3), (3, 1), 1)])
def test_tensordot(sa, sb, axes):
    a, b = rand(sa), rand(sb, seed=1)
    out = check("tensordot", a, b, axes)
    np.testing.assert_allclose(out, np.tensordot(a, b, axes), rtol=1e-5)
    assert out.shape == np.tensordot(a, b, axes).shape
    assert check("tensordot", a.astype(np.int32), b.astype(np.int32), axes).dtype == i32


def test_tensordot_errors():
    a, b = rand((2, 3)), rand((3, 2))
    with pytest.raises(ShapeError, match=r"tensordot\(\): axes=3 must be between 0"):
        jnp.tensordot(a, b, 3)
    with pytest.raises(ShapeError, match="same length"):
        jnp.tensordot(a, b, ([0, 1], [0]))
    with pytest.raises(ShapeError, match="out of bounds"):
        jnp.tensordot(a, b, ([2], [0]))
    with pytest.raises(ShapeError, match="pair"):
        jnp.tensordot(a, b, (0, 1, 2))


# --- einsum --------------------------------------------------------------------------------------

EINSUM_CASES = [
    ("ij,jk->ik", [(2, 3), (3, 4)]), ("bij,bjk->bik", [(5, 2, 3), (5, 3, 4)]),
    ("i,i->", [(3,), (3,)]), ("ij->ji", [(2, 3)]), ("ii->i", [(3, 3)]), ("ii", [(3, 3)]),
    ("ij,jk", [(2, 3), (3, 4)]), ("i,j->ij", [(2,), (3,)]), ("ij->", [(2, 3)]),
    ("ij->j", [(2, 3)]), ("ij,ij->ij", [(2, 3), (2, 3)]), ("ij,ij", [(2, 3), (2, 3)]),
    ("i,i", [(3,), (3,)]), ("ba,Ac", [(2, 3), (5, 4)]), ("ij,kj->ik", [(2, 3), (4, 3)]),
    ("...ij,...jk->...ik", [(5, 2, 3), (3, 4)]), ("i...,i...", [(2, 3), (2, 1, 3)]),
    ("...i->...", [(2, 3)]), (" ij , jk -> ik ", [(2, 3), (3, 4)]), ("ij,jk,kl->il",
                                                                      [(2, 3), (3, 4), (4, 2)]),
    ("ij,jk->ik", [(1, 3), (3, 1)]), ("ij,jk", [(2, 1), (3, 4)]), ("i->", [(0,)]),
]


@pytest.mark.parametrize("spec,shapes", EINSUM_CASES)
def test_einsum(spec, shapes):
    ops = [rand(s, seed=k) for k, s in enumerate(shapes)]
    out = check("einsum", spec, *ops)
    expected = np.einsum(spec, *ops)
    assert out.shape == expected.shape
    np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("dtypes_,expected", [((np.int32, np.int32), i32),
                                              ((np.bool_, np.bool_), np.bool_),
                                              ((np.int32, np.float32), f32),
                                              ((np.float16, np.float16), np.float16)])
def test_einsum_dtypes(dtypes_, expected):
    a, b = rand((2, 3), dtypes_[0]), rand((3, 4), dtypes_[1], seed=1)
    out = check("einsum", "ij,jk->ik", a, b)
    assert out.dtype == expected
    np.testing.assert_allclose(out.astype(np.float32),
                               np.einsum("ij,jk->ik", a.astype(expected), b.astype(expected)),
                               rtol=1e-2)
    assert check("einsum", "ij->", a).dtype == np.dtype(dtypes_[0])


def test_einsum_weak_and_preferred():
    assert check("einsum", "i,->i", rand((3,), np.float16), 2.0).dtype == np.float16
    out = check("einsum", "i,i->", rand((3,), np.int8), rand((3,), np.int8),
                preferred_element_type=np.int32)
    assert out.dtype == i32


def test_einsum_x64(x64):
    assert check("einsum", "ij,jk", rand((2, 3), np.float64), rand((3, 2), np.float64)).dtype \
        == f64


@pytest.mark.parametrize("spec,shapes,match", [
    ("ij,jk->ik", [(2, 3)], "1 operands were given"),
    ("ijk,jk->ik", [(2, 3), (3, 4)], "operand 0 has rank 2 but its subscripts 'ijk' name 3"),
    ("ij,jk->iz", [(2, 3), (3, 4)], "output subscript 'z'"),
    ("ij,jk->ii", [(2, 3), (3, 4)], "only once in the output"),
    ("i1,jk->ik", [(2, 3), (3, 4)], "invalid subscripts"),
    ("...i->i", [(2, 3)], "needs '...'"),
])
def test_einsum_errors(spec, shapes, match):
    with pytest.raises(ShapeError, match=match):
        jnp.einsum(spec, *[rand(s) for s in shapes])


def test_einsum_subscripts_must_be_static_string():
    with pytest.raises(ShapeError, match="must be a string"):
        jnp.einsum([0, 1], rand((2, 2)))
    op = REGISTRY["einsum"]
    with pytest.raises(ShapeError, match="subscripts must be known"):
        op.infer({"operands": SequenceType((array_type(f32, 1),))},
                 {"subscripts": array_type(i32, 0)})


# --- transpose, matrix_transpose, trace ----------------------------------------------------------

@pytest.mark.parametrize("args", [(), (None,), ((1, 0, 2),), ((2, 0, 1),), ((-1, 0, 1),),
                                  (1, 0, 2), (2, 1, 0)])
def test_transpose(args):
    a = rand((1, 3, 4))
    axes = None if not args or args == (None,) else args[0] if len(args) == 1 else args
    out = check("transpose", a, *args)
    np.testing.assert_array_equal(out, np.transpose(a, axes))
    x = astjax.device_put(a)
    np.testing.assert_array_equal(x.transpose(*args), out)  # method, both call styles


def test_transpose_forms():
    a = astjax.device_put(rand((2, 3), np.int32))
    assert a.T.shape == (3, 2) and a.T.dtype == i32
    np.testing.assert_array_equal(jnp.transpose(a, axes=(1, 0)), np.asarray(a).T)
    np.testing.assert_array_equal(jnp.permute_dims(a, (1, 0)), np.asarray(a).T)
    assert check("transpose", np.float32(3)).shape == ()
    assert check("transpose", 2.0).weak_type


def test_transpose_errors():
    a = rand((2, 3))
    with pytest.raises(ShapeError, match=r"transpose\(\): axes \(0,\) must be a permutation"):
        jnp.transpose(a, (0,))
    with pytest.raises(ShapeError, match="repeated axis"):
        jnp.transpose(a, (0, 0))
    with pytest.raises(ShapeError, match="out of bounds"):
        jnp.transpose(a, (0, 2))


def test_matrix_transpose():
    a = rand((4, 2, 3))
    np.testing.assert_array_equal(check("matrix_transpose", a), np.swapaxes(a, -1, -2))
    with pytest.raises(ShapeError, match="rank 2 or more"):
        jnp.matrix_transpose(rand((3,)))


@pytest.mark.parametrize("dtype,expected", [(np.float32, f32), (np.int32, i32), (np.int8, i32),
                                            (np.uint8, np.uint32), (np.bool_, i32),
                                            (np.float16, np.float16)])
def test_trace_dtypes(dtype, expected):
    a = rand((3, 3), dtype)
    out = check("trace", a)
    assert out.dtype == expected
    np.testing.assert_allclose(out, np.trace(a.astype(expected)), rtol=1e-3)


def test_trace_options(x64):
    a = rand((2, 3, 4))
    for kwargs in [dict(), dict(offset=1), dict(offset=-1, axis1=1, axis2=2),
                   dict(axis1=-1, axis2=0), dict(dtype=np.int32)]:
        out = check("trace", a, **kwargs)
        np.testing.assert_allclose(out, np.trace(a, **kwargs), rtol=1e-5)
    assert check("trace", rand((2, 2), np.int32)).dtype == np.int64
    assert check("trace", rand((2, 2), np.int64)).dtype == np.int64
    x = astjax.device_put(rand((3, 3)))
    np.testing.assert_allclose(x.trace(), np.trace(np.asarray(x)), rtol=1e-6)


def test_trace_errors():
    with pytest.raises(ShapeError, match="must differ"):
        jnp.trace(rand((2, 2)), axis1=0, axis2=-2)
    with pytest.raises(ShapeError, match="rank 2 or more"):
        jnp.trace(rand((2,)))


# --- compiled code agrees with eager --------------------------------------------------------------

def jit_agrees(fn, *args):
    """``jit(fn)(*args)`` gives the eager results: values, shapes and dtypes."""
    out = astjax.jit(fn)(*args)
    ref = fn(*[astjax.device_put(a) if isinstance(a, np.ndarray) else a for a in args])
    for o, r in zip(out, ref):
        assert o.dtype == r.dtype and o.shape == r.shape
        np.testing.assert_allclose(np.asarray(o), np.asarray(r), rtol=1e-6)


def _products(x, y, n):
    return (x @ y, jnp.dot(x, y), x.dot(y), jnp.vdot(x, x), jnp.inner(x, x), jnp.outer(x, y),
            jnp.tensordot(x, y, axes=([1], [0])),
            jnp.matmul(x, y, preferred_element_type=jnp.int32),
            x.T, x.transpose(1, 0), jnp.transpose(x, (1, 0)), jnp.trace(x, offset=1),
            jnp.matrix_transpose(x) * n)


def test_compiled_products():
    jit_agrees(_products, rand((2, 3), np.int32), rand((3, 4), np.int32, seed=1), 2)
    jit_agrees(_products, rand((2, 3)), rand((3, 4), seed=1), 2.5)


def _einsum(x, y):
    return jnp.einsum("ij,jk->ik", x, y), jnp.einsum("ii->i", x @ y)


def test_compiled_einsum():
    jit_agrees(_einsum, rand((3, 3)), rand((3, 3), seed=1))
